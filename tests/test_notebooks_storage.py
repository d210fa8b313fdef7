"""The storage notebooks run headless with the real papermill and kernel, tiny parameters, real fio,
against a temporary data directory: processed CSV written, every figure drawn, no error output."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from memstor.experiments import _fio_params, fio_load_latency, fio_steady_state, mixed_load_map

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
KERNEL = "memstor"  # .venv/bin/python -m ipykernel install --sys-prefix --name memstor

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (make env installs it)"),
]

TINY = {"runtime_s": 0.5, "ramp_s": 0, "file_size": "16m", "repetitions": 1}
CASES = {
    "20-fio-block-size": (_fio_params.BLOCK_SIZE, dict(TINY, bs=["4k", "64k"], rw=["randread"], seq_bs=["64k"],
                                                   iodepth=4), 2),
    "30-fio-rw-ratio": (_fio_params.RW_RATIO, dict(TINY, rwmixread=[100, 50], bs=["4k"], iodepth=4), 1),
    "40-fio-queue-depth": (_fio_params.QUEUE_DEPTH, dict(TINY, rw=["randread"], iodepth=[1, 4], spec_iodepth=2,
                                                     spec_numjobs=2), 5),
    # 6 rounds at most, a 2-point matrix (4k random read + the tracking random write) in every round.
    "50-fio-steady-state": (fio_steady_state.EXPERIMENT, dict(TINY, runtime_s=1, file_size="64m", max_rounds=6,
                                                              matrix_bs=["4k"], matrix_rwmixread=[100, 0]), 3),
    # no queue-depth table in the data: the X_max probe, then two offered rates
    "60-fio-load-latency": (fio_load_latency.EXPERIMENT, dict(TINY, runtime_s=1, rw=["randread"],
                                                              utilisation_pct=[30, 90], probe_iodepth=8,
                                                              probe_numjobs=1), 3),
    # no queue-depth table: both X_max probes, then 2 cells (reads alone, and with writes) and the map
    "65-mixed-load-map": (mixed_load_map.EXPERIMENT, dict(TINY, runtime_s=1, write_pct=[0, 20], read_pct=[30],
                                                          refine_rounds=0, probe_iodepth=8, probe_numjobs=1), 1),
}


def _kernel_available() -> bool:
    from jupyter_client.kernelspec import KernelSpecManager

    return KERNEL in KernelSpecManager().find_kernel_specs()


def test_notebooks_are_committed_clean_with_a_parameters_cell():
    import yaml

    std = yaml.safe_load((ROOT / "params" / "standard.yaml").read_text())
    for name, (experiment, _, _) in CASES.items():
        nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert all(not c.outputs and c.execution_count is None for c in code), f"{name} has outputs"
        tagged = [c for c in code if "parameters" in c.metadata.get("tags", [])]
        assert len(tagged) == 1, f"{name}: exactly one cell tagged parameters"
        src = tagged[0].source
        for key in ("profile: str", "data_dir: str", "target_dir: str", "host: str"):
            assert key in src
        for key in std[experiment]:
            line = next((ln for ln in src.splitlines() if ln.startswith(f"{key}: ")), None)
            assert line is not None and "#" in line, f"{name}: parameter {key} missing or without comment"
        assert f'run_experiment("{experiment}"' in "".join(c.source for c in code)


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.notebook
@pytest.mark.fio
def test_notebook_runs_headless(name, tmp_path):
    import papermill as pm

    if not _kernel_available():
        pytest.fail(f"jupyter kernel {KERNEL!r} missing: .venv/bin/python -m ipykernel install --sys-prefix "
                    f"--name {KERNEL}")
    experiment, params, n_figures = CASES[name]
    out = tmp_path / f"{name}.ipynb"
    pm.execute_notebook(
        str(NOTEBOOKS / f"{name}.ipynb"), str(out),
        parameters=dict(params, profile="quick", data_dir=str(tmp_path / "data"), host="nbtest"),
        kernel_name=KERNEL, cwd=str(NOTEBOOKS), progress_bar=False,
    )
    csv = tmp_path / "data" / "processed" / "nbtest" / f"{experiment}.csv"
    df = pd.read_csv(csv)
    assert len(df) >= 2 and set(df["status"]) == {"done"} and (df["iops"] > 0).all()
    nb = nbformat.read(out, as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    pngs = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(pngs) >= n_figures, f"{name}: {len(pngs)} figures drawn, expected {n_figures}"
