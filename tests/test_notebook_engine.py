"""papermill's `memstor` engine (make's notebooks): the kernel over IPC, so no TCP-without-encryption warning,
and every socket gone after the run."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

pytestmark = pytest.mark.notebook


def test_engine_runs_the_kernel_over_ipc_without_the_tcp_warning(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell("import ipykernel.connect as c\nprint(open(c.get_connection_file()).read())")]
    nb.metadata["kernelspec"] = {"name": "memstor", "display_name": "Python (memstor)", "language": "python"}
    src, out = tmp_path / "in.ipynb", tmp_path / "out.ipynb"
    nbformat.write(nb, src)
    before = set(Path(tempfile.gettempdir()).glob("memstor-kernel-*"))
    res = subprocess.run([sys.executable, "-m", "papermill", "--engine", "memstor", "--kernel", "memstor",
                          "--cwd", str(tmp_path), "--no-progress-bar", str(src), str(out), "-p", "x", "2"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "without encryption" not in res.stderr
    conn = json.loads(nbformat.read(out, as_version=4).cells[-1].outputs[0]["text"])
    assert conn["transport"] == "ipc"
    assert Path(conn["ip"]).is_absolute() and Path(conn["ip"]).name.startswith("memstor-kernel-")
    assert set(Path(tempfile.gettempdir()).glob("memstor-kernel-*")) == before  # sockets removed at shutdown
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.ipynb", "out.ipynb"]  # nothing in the cwd
