"""Re-running an experiment on measured data (issue 17: "Run All" in the lab re-analyses): the sweep says what it
will do before it starts, and a run whose points are all measured starts no fio process and leaves the raw
folder and sysinfo.json byte for byte as they were (the .lock holds the pid of the last process that ran)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT

pytestmark = [pytest.mark.fio,
              pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (make env installs it)")]

MEMSTOR = ROOT / ".venv" / "bin" / "memstor"
SETS = ["runtime_s=0.3", "ramp_s=0", "file_size=16m", 'rw=["randread"]', "iodepth=[1,4]", "spec_iodepth=0"]


def _fio_shim(folder: Path) -> tuple[Path, Path]:
    """An executable that logs its arguments to a file, then runs the real fio: (shim, log)."""
    log = folder / "fio-calls.log"
    shim = folder / "fio"
    shim.write_text(f"#!/bin/sh\necho \"$@\" >> {log}\nexec {shutil.which('fio')} \"$@\"\n")
    shim.chmod(0o755)
    return shim, log


def _run(data: Path, shim: Path, *extra: str) -> subprocess.CompletedProcess:
    cmd = [str(MEMSTOR), "run", "fio-queue-depth", "--profile", "quick", "--data", str(data), "--host", "h", *extra]
    for s in SETS:
        cmd += ["--set", s]
    env = dict(os.environ, MEMSTOR_FIO=str(shim))
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=env, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    return res


def _digest(folder: Path, skip=(".lock",)) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name not in skip}


def test_a_measured_run_starts_no_fio_and_changes_no_raw_byte(tmp_path):
    shim, log = _fio_shim(tmp_path)
    data = tmp_path / "data"
    first = _run(data, shim)
    plan = first.stderr.splitlines()[0]
    # said before anything is measured: how many points, how long, on what
    assert plan.startswith("fio-queue-depth: measuring 2 of 2 points, about "), plan
    assert f"a test file in {data / 'scratch'}" in plan
    assert any("--output-format=json+" in ln for ln in log.read_text().splitlines())
    raw, sysinfo = data / "raw" / "h", data / "processed" / "h" / "sysinfo.json"
    before, info_before = _digest(raw), sysinfo.read_bytes()
    table_before = (data / "processed" / "h" / "fio-queue-depth.csv").read_text()
    log.unlink()

    again = _run(data, shim, "--no-progress")
    assert not log.exists(), f"fio ran on a measured re-run: {log.read_text()}"
    assert _digest(raw) == before  # points, metas and manifest.json
    assert sysinfo.read_bytes() == info_before
    assert (data / "processed" / "h" / "fio-queue-depth.csv").read_text() == table_before
    assert "fio-queue-depth: 2 rows" in again.stdout + again.stderr

    shown = _run(data, shim)  # with progress: says it measures nothing
    assert "all 2 points already measured" in shown.stderr and "nothing is measured" in shown.stderr
    assert not log.exists()


def test_a_missing_point_is_measured_and_announced(tmp_path):
    shim, log = _fio_shim(tmp_path)
    data = tmp_path / "data"
    _run(data, shim)
    folder = data / "raw" / "h" / "fio-queue-depth"
    man = json.loads((folder / "manifest.json").read_text())
    gone = next(p for p in man["points"] if "qd4" in p["name"])
    (folder / gone["raw"]).unlink()
    log.unlink()
    res = _run(data, shim)
    assert res.stderr.splitlines()[0].startswith("fio-queue-depth: measuring 1 of 2 points, about "), res.stderr
    assert "1 already measured" in res.stderr.splitlines()[0]
    runs = [ln for ln in log.read_text().splitlines() if "--output-format=json+" in ln]
    assert len(runs) == 1 and "--iodepth=4" in runs[0]
    assert (folder / gone["raw"]).is_file()


AUTO_SETS = ["runtime_s=0.3", "ramp_s=0", "file_size=16m", 'rw=["randread"]', "iodepth=auto", "max_points=4",
             "max_iodepth=16", "spec_iodepth=0"]


def test_an_adaptive_grid_rerun_on_measured_data_starts_no_fio_and_decides_the_same(tmp_path):
    """iodepth: auto measures in rounds; a rerun replays the rounds on the measured points: no fio, not a byte of
    the raw folder or the table changed, one line saying so, and the same depths with the same reasons."""
    shim, log = _fio_shim(tmp_path)
    data = tmp_path / "data"

    def run(*extra: str) -> subprocess.CompletedProcess:
        cmd = [str(MEMSTOR), "run", "fio-queue-depth", "--profile", "quick", "--data", str(data), "--host", "h",
               *extra]
        for s in AUTO_SETS:
            cmd += ["--set", s]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=dict(os.environ,
                             MEMSTOR_FIO=str(shim)), cwd=ROOT)
        assert res.returncode == 0, res.stderr
        return res

    first = run()
    plan = first.stderr.splitlines()[0]
    assert plan.startswith("fio-queue-depth: measuring 1 of 1 points, about "), plan
    assert "adaptive grid (iodepth: auto), round 1: more points may follow, at most 4 per pattern up to depth 16" in plan
    decided = [ln for ln in first.stderr.splitlines() if ln.startswith("fio-queue-depth: adaptive grid, randread:")]
    assert len(decided) == 1
    runs = [ln for ln in log.read_text().splitlines() if "--output-format=json+" in ln]
    table = (data / "processed" / "h" / "fio-queue-depth.csv").read_text()
    assert 3 <= len(runs) <= 4 and len(table.strip().splitlines()) == len(runs) + 1
    raw = data / "raw" / "h"
    before = _digest(raw)
    log.unlink()

    quiet = run("--no-progress")
    assert not log.exists(), f"fio ran on a measured re-run: {log.read_text()}"
    assert _digest(raw) == before
    assert (data / "processed" / "h" / "fio-queue-depth.csv").read_text() == table
    assert "measuring" not in quiet.stderr

    shown = run()
    lines = shown.stderr.splitlines()
    assert not log.exists()
    assert [ln for ln in lines if "already measured" in ln] == [lines[0]]
    assert f"all {len(runs)} points already measured" in lines[0] and "adaptive grid" in lines[0]
    assert decided[0] in lines  # the same depths, complete for the same reason


def _edit_parameters_cell(nb, values: dict) -> None:
    """Change the values of the notebook's parameters cell the way a user does: by editing its lines."""
    import re

    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    lines = cell.source.splitlines()
    for key, value in values.items():
        at = next(i for i, ln in enumerate(lines) if re.match(rf"{key}\s*:", ln))
        head, _, comment = lines[at].partition("  #")
        lines[at] = f"{head.split('=')[0].rstrip()} = {value!r}" + (f"  #{comment}" if comment else "")
    cell.source = "\n".join(lines)


@pytest.mark.slow
def test_the_parameters_cell_is_memstor_run_with_set(tmp_path, monkeypatch):
    """Editing profile, host and sweep values in notebook 40's parameters cell and running it (no papermill
    parameters) finds exactly the points `memstor run --profile quick --host h --set ...` measured: the same
    point names and parameters, so it measures nothing and writes the same table."""
    import nbformat
    import papermill

    shim, log = _fio_shim(tmp_path)
    data = tmp_path / "data"
    _run(data, shim)
    table = (data / "processed" / "h" / "fio-queue-depth.csv").read_text()
    log.unlink()
    nb = nbformat.read(ROOT / "notebooks" / "40-fio-queue-depth.ipynb", as_version=4)
    _edit_parameters_cell(nb, {"profile": "quick", "data_dir": str(data), "host": "h", "runtime_s": 0.3,
                               "ramp_s": 0, "file_size": "16m", "rw": ["randread"], "iodepth": [1, 4],
                               "spec_iodepth": 0})
    src, out = tmp_path / "edited.ipynb", tmp_path / "out.ipynb"
    nbformat.write(nb, src)
    monkeypatch.setenv("MEMSTOR_FIO", str(shim))
    papermill.execute_notebook(str(src), str(out), kernel_name="memstor", cwd=str(ROOT / "notebooks"),
                               progress_bar=False)
    assert not log.exists(), f"the notebook measured: {log.read_text()}"
    assert (data / "processed" / "h" / "fio-queue-depth.csv").read_text() == table
    text = "".join(o.get("text", "") for c in nbformat.read(out, as_version=4).cells if c.cell_type == "code"
                   for o in c.outputs)
    assert "fio-queue-depth: profile quick (params/quick.yaml); changed in the parameters cell:" in text
    assert "iodepth=[1, 4]" in text and "all 2 points already measured" in text
