"""Running an experiment notebook the way `make all` does (papermill, the memstor kernel) in a test."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from conftest import ROOT

KERNEL = "memstor"


def run_notebook(name: str, out: Path, parameters: dict) -> list:
    """Execute ``notebooks/<name>.ipynb`` with ``parameters`` into ``out``; the outputs of its code cells, after
    checking that none is an error. Fails (never skips) when the memstor Jupyter kernel is not installed."""
    import papermill as pm
    from jupyter_client.kernelspec import KernelSpecManager

    if KERNEL not in KernelSpecManager().find_kernel_specs():
        pytest.fail(f"jupyter kernel {KERNEL!r} missing: .venv/bin/python -m ipykernel install --sys-prefix --name memstor")
    pm.execute_notebook(str(ROOT / "notebooks" / f"{name}.ipynb"), str(out), kernel_name=KERNEL,
                        cwd=str(ROOT / "notebooks"), progress_bar=False, parameters=parameters)
    nb = nbformat.read(out, as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    return outputs
