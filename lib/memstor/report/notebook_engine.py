"""papermill engine ``memstor``: nbclient with the kernel on IPC sockets instead of TCP ports on localhost.

papermill's default engine starts the kernel over TCP, and ipykernel then warns on every notebook ("Kernel is
running over TCP without encryption"), a warning the user cannot act on. Over IPC (Unix domain sockets
``<tmp>/memstor-kernel-<random>-<n>``, one set per kernel, removed at its shutdown) the kernel's traffic stays
on this machine, messages are signed with the connection key as over TCP, and the warning is gone. The socket
names are absolute and unique: jupyter_client's default (``kernel-ipc-<n>`` in the working folder) would
collide between two notebooks run at once in ``notebooks/``.
The engine is registered as the papermill entry point ``memstor`` (pyproject.toml); ``make`` runs
``papermill --engine memstor``.
"""

from __future__ import annotations

import tempfile
import uuid
from pathlib import Path
from typing import Any

from jupyter_client.manager import AsyncKernelManager
from papermill.engines import NBClientEngine


class IpcKernelManager(AsyncKernelManager):
    """The kernel manager nbclient uses, with the connection over IPC (Unix domain sockets)."""

    def __init__(self, **kwargs: object) -> None:
        kwargs.setdefault("transport", "ipc")
        kwargs.setdefault("ip", str(Path(tempfile.gettempdir()) / f"memstor-kernel-{uuid.uuid4().hex[:12]}"))
        super().__init__(**kwargs)


class MemstorEngine(NBClientEngine):
    """papermill's nbclient engine with :class:`IpcKernelManager`."""

    @classmethod
    def execute_managed_notebook(cls, nb_man: Any, kernel_name: str, **kwargs: Any) -> Any:
        """Execute as papermill's default engine does, the kernel connected over IPC."""
        kwargs.setdefault("kernel_manager_class", IpcKernelManager)
        return super().execute_managed_notebook(nb_man, kernel_name, **kwargs)
