"""What works on a machine without fio and loadlat (Windows or macOS without Linux, or a laptop that only reads
results): the CLI's help, parsing anyone's fio and MLC files, and the summary the report uses. Run here with a
PATH that holds neither tool (only this Python's folder), so nothing can silently start one."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pandas as pd

from reliability_helpers import TRACEBACK, cli_env, run_cli


def _bare_env(tmp_path: Path) -> dict:
    """An environment whose PATH holds only a folder with this Python (no fio, no loadlat, no cc)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    os.symlink(sys.executable, bin_dir / "python3")
    env = cli_env({"LOADLAT": ""}, path=str(bin_dir))
    env.pop("LOADLAT")
    return env


def test_help_parse_and_summary_need_neither_fio_nor_loadlat(real, tmp_path):
    env = _bare_env(tmp_path)
    assert run_cli("--help", env=env).returncode == 0
    out = tmp_path / "processed" / "their-ssd"
    res = run_cli("parse", str(real), "-o", str(out), env=env, timeout=300)
    assert TRACEBACK not in res.stderr and res.returncode in (0, 1), res.stderr[-2000:]
    fio = pd.read_csv(out / "fio.csv")
    mlc = pd.read_csv(out / "mlc.csv")
    assert len(fio) > 10 and fio["iops"].notna().any() and len(mlc) > 10
    summary = tmp_path / "summary.csv"
    res = run_cli("summary", "--data", str(tmp_path), "-o", str(summary), env=env, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    table = pd.read_csv(summary)
    assert set(table["host"]) == {"their-ssd"} and (table["n"] >= 1).all()


def test_measuring_without_fio_says_how_to_install_it_in_one_line(tmp_path):
    env = _bare_env(tmp_path)
    res = run_cli("run", "fio-queue-depth", "--profile", "quick", "--data", str(tmp_path / "data"), env=env)
    assert res.returncode in (1, 2) and TRACEBACK not in res.stderr
    lines = [line for line in res.stderr.splitlines() if "fio" in line]
    assert lines and "install" in lines[-1]
