"""The tool runner every measure module shares: run an external command (``nvme``, ``smartctl``, ``blkid``,
``lscpu``, ``findmnt``, ``lsblk``, ``mlc --version``...) time-boxed, and say in one line why it gave nothing.

A tool that is not installed, takes longer than its time box or cannot start raises :class:`ToolError` (a
RuntimeError) whose text is the reason (``lscpu not installed``, ``nvme id-ctrl /dev/nvme0 -o json took more
than 10 s``); what a non-zero exit status means is the caller's to decide (:func:`completed`), or
:func:`run_tool` decides it the common way. Nothing here parses a tool's output (memstor.parse does).
"""

from __future__ import annotations

import os
import shutil
import subprocess

#: Seconds any external command may take before it is abandoned.
CMD_TIMEOUT_S = 10.0


class ToolError(RuntimeError):
    """A tool could not give an answer; str() is the one-line reason."""


def completed(cmd: list[str], timeout_s: float = CMD_TIMEOUT_S, missing: str | None = None) -> subprocess.CompletedProcess:
    """The finished process of ``cmd`` (stdout and stderr as text, stdin closed), whatever its exit status.

    timeout_s: seconds before it is abandoned; missing: the reason when ``cmd[0]`` is neither on PATH nor a
    file (default ``<tool> not installed``). ToolError when it is missing, times out or cannot start."""
    tool = cmd[0]
    if shutil.which(tool) is None and not os.path.isfile(tool):
        raise ToolError(missing or f"{tool} not installed")
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL,
                              errors="replace")
    except subprocess.TimeoutExpired:
        raise ToolError(f"{' '.join(cmd)} took more than {timeout_s:.0f} s") from None
    except OSError as err:
        raise ToolError(f"{tool} could not run ({err.strerror or err})") from None


def run_tool(cmd: list[str], timeout_s: float = CMD_TIMEOUT_S) -> str:
    """stdout of ``cmd`` with its stderr appended; ToolError with a one-line reason when it cannot run, times
    out, or exits non-zero without printing anything on stdout."""
    res = completed(cmd, timeout_s)
    if res.returncode != 0 and not res.stdout.strip():
        first = (res.stderr.strip().splitlines() or ["no output"])[0]
        raise ToolError(f"{' '.join(cmd)} exited {res.returncode}: {first}")
    return res.stdout + ("\n" + res.stderr if res.stderr else "")
