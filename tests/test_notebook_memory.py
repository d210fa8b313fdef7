"""notebooks/10-mlc-loaded-latency.ipynb: committed without outputs, one tagged parameters cell holding the
profile's keys, and executed for real with papermill (tiny loadlat sweep) into a temp data folder."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from conftest import two_allowed_cpus
from memstor.experiments import load_profile

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "10-mlc-loaded-latency.ipynb"
KERNEL = "memstor"


def parameters_cell(nb) -> dict:
    """The defaults of the notebook's `parameters` cell: {name: (annotation, value)}."""
    cells = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(cells) == 1, "exactly one cell tagged 'parameters'"
    out = {}
    for node in ast.parse(cells[0].source).body:
        assert isinstance(node, ast.AnnAssign), f"untyped parameter line: {ast.unparse(node)}"
        out[node.target.id] = (ast.unparse(node.annotation), ast.literal_eval(node.value))
    for line in cells[0].source.splitlines():
        assert "#" in line, f"parameter without a comment: {line}"
    return out


def test_notebook_is_clean_and_declares_the_profile_keys():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, "commit the notebook without outputs"
    params = parameters_cell(nb)
    assert params["profile"] == ("str", "standard")
    assert params["data_dir"] == ("str", "../data")
    assert params["target_dir"] == ("str", "") and params["host"] == ("str", "")
    standard = load_profile("standard", "mlc-loaded-latency")
    standard.pop("profile")
    for key, value in standard.items():
        assert key in params, f"parameters cell lacks {key}"
        assert params[key][1] == value, f"{key}: notebook default {params[key][1]!r} != standard {value!r}"
        assert params[key][0] == type(value).__name__
    source = "\n".join(c.source for c in nb.cells)
    assert params["hosts"] == ("str", "")  # a host file: memstor on each host over SSH (issue 20)
    assert 'run_experiment("mlc-loaded-latency", params, data_root=data_dir,' in source
    assert "host=None if hosts else host or None, hosts=hosts or None)" in source
    assert params["huge_pages"] == ("bool", True) and params["random_access"] == ("bool", False)
    # one memory curve analysis (memory.fit_table, as in the report); the +25 % rise table is not called a knee
    assert "memory.fit_table(" in source and "knee_table" not in source
    assert "latency_rise_table" in source and "Latency +25 % point" in source
    assert "memory_text.page_walk_text(df)" in source


def _ensure_kernel() -> None:
    """Register the venv's kernel as `memstor` when it is missing (as `make env` does)."""
    from jupyter_client.kernelspec import KernelSpecManager

    if KERNEL not in KernelSpecManager().find_kernel_specs():
        subprocess.run([sys.executable, "-m", "ipykernel", "install", "--sys-prefix", "--name", KERNEL,
                        "--display-name", "Python (memstor)"], check=True, capture_output=True)


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.loadlat
def test_notebook_runs_with_papermill_and_loadlat(tmp_path, monkeypatch):
    papermill = pytest.importorskip("papermill")
    lat_cpu, load_cpu = two_allowed_cpus()
    pytest.importorskip("memstor.measure.sysinfo", reason="memstor.measure.sysinfo (run_experiment writes sysinfo.json)")
    from memstor.core.errors import MemstorError
    from memstor.measure import loadlat

    try:
        exe = loadlat.binary()
    except MemstorError:
        exe = loadlat.build(output=tmp_path / "bin" / "loadlat")
    _ensure_kernel()
    monkeypatch.setenv("LOADLAT", str(exe))
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin")  # no mlc: loadlat
    data = tmp_path / "data"
    out = tmp_path / "out.ipynb"
    params = {"profile": "quick", "data_dir": str(data), "target_dir": "", "host": "nbhost",
              "figures_dir": str(tmp_path / "figures"), "tool": "loadlat", "traffic": ["R", "W5"],
              "access_bytes": [64], "delays": [0, 2000, 20000], "seconds_per_point": 0.2, "buffer_kib": 65536,
              "latency_cpu": lat_cpu, "load_cpus": str(load_cpu)}  # CPUs of this process's mask
    papermill.execute_notebook(str(NOTEBOOK), str(out), parameters=params, kernel_name=KERNEL,
                               cwd=str(NOTEBOOK.parent), progress_bar=False)
    nb = nbformat.read(out, as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    pngs = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(pngs) >= 4  # peak bandwidth, latency vs bandwidth, delay sweep, the read-ratio family
    table = pd.read_csv(data / "processed" / "nbhost" / "mlc-loaded-latency.csv")
    assert (table["status"] == "done").all() and set(table["tool"]) == {"loadlat"}
    loaded = table[table["test"] == "loaded_latency"]
    # quick's read_shares [100, 0] add W6 (0 % DRAM reads) to the traffic the cell asked for: a family of three
    assert sorted(loaded["traffic"].unique()) == ["1:1", "read-only", "write-only-nt"]
    assert sorted(loaded["inject_delay"].unique()) == [0, 2000, 20000]
    assert (loaded["latency_ns"] > 0).all() and (loaded["bandwidth_MBps"] > 0).all()
    idle = table[table["test"] == "idle_latency"]
    assert "4K" in set(idle["pages"]) and (idle["latency_ns"] > 0).all()
    texts = " ".join(str(o.get("data", {}).get("text/markdown", "")) for o in outputs)
    assert "Idle mean latency" in texts and "4 KiB pages" in texts
    html = " ".join(str(o.get("data", {}).get("text/html", "")) for o in outputs)
    # issue 16: memory.fit_summary shows the curve analysis (R0 with its 95 % interval, the measured 2·R0
    # point), no fitted knee beyond the data
    assert "BW at 2·R0 (MB/s)" in html and "R0 (ns) [95 % CI]" in html and "rise_bandwidth_MBps" in html
    assert sorted(p.name for p in (tmp_path / "figures").glob("*.png")) == [
        "mlc-loaded-latency-curves.png", "mlc-loaded-latency-delay.png", "mlc-loaded-latency-peak.png",
        "mlc-loaded-latency-read-ratio.png"]
