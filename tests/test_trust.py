"""Trustworthy numbers, end to end with the real fio: clones of one job are one observation, different
setups are never pooled, repetitions carry n and a 95 % CI, and the report shows what `memstor summary`
shows (the acceptance checks of the "Trustworthy numbers" issue)."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from memstor.analysis import synthesis as syn
from memstor.analysis.dataset import load_dataset
from memstor.report.tables import TABLES, write_tables

pytestmark = [pytest.mark.fio,
              pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (make env installs it)")]
SPECS = ROOT / "data" / "specs"


def memstor(*args: str) -> subprocess.CompletedProcess:
    """The real `memstor` command in a subprocess."""
    return subprocess.run([sys.executable, "-m", "memstor.cli", *args], capture_output=True, text=True, timeout=600)


def fio(out: Path, target: Path, *opts: str) -> dict:
    """Run the real fio (1 s, 4 KiB random reads at QD 1 on a 16 MiB file) and return its JSON document."""
    cmd = ["fio", "--name=job", f"--filename={target}", "--size=16m", "--rw=randread", "--bs=4k", "--iodepth=1",
           "--runtime=1", "--time_based", "--ioengine=psync", "--output-format=json+", f"--output={out}", *opts]
    subprocess.run(cmd, check=True, capture_output=True, timeout=120)
    return json.loads(out.read_text())


def summary_rows(data: Path) -> list[dict]:
    """`memstor summary --data DATA` as CSV rows."""
    res = memstor("summary", "--data", str(data))
    assert res.returncode == 0, res.stderr
    return list(csv.DictReader(io.StringIO(res.stdout)))


def test_clones_are_summed_and_buffered_and_direct_runs_stay_apart(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    target = tmp_path / "testfile"
    clones = fio(runs / "clones.json", target, "--numjobs=2", "--direct=1")     # no group_reporting
    buffered = fio(runs / "buffered.json", target, "--direct=0")
    direct = fio(runs / "direct.json", target, "--direct=1")
    data = tmp_path / "data"
    res = memstor("parse", str(runs), "-o", str(data / "processed" / "theirs"))
    assert res.returncode == 0, res.stderr

    rows = summary_rows(data)
    assert {r["host"] for r in rows} == {"theirs"}
    by_file = {}
    for r in rows:
        by_file.setdefault((r["numjobs"], r["direct"]), []).append(r)
    # the two clones: one observation whose IOPS is their sum (within 1 %), mean latency I/O-weighted
    (two,) = by_file[("2", "1")]
    jobs = [j["read"] for j in clones["jobs"]]
    assert len(jobs) == 2 and two["n"] == "1"
    assert float(two["iops"]) == pytest.approx(sum(j["iops"] for j in jobs), rel=0.01)
    ios = [j["total_ios"] for j in jobs]
    lat = sum(j["lat_ns"]["mean"] * n for j, n in zip(jobs, ios)) / sum(ios) / 1000
    assert float(two["lat_mean_us"]) == pytest.approx(lat, rel=1e-6)
    assert float(two["clat_p99_us"]) > 0  # from the clones' merged json+ histograms
    # buffered and O_DIRECT of the same file: two rows, each equal to its own raw file
    (b,) = by_file[("1", "0")]
    (d,) = by_file[("1", "1")]
    assert float(b["iops"]) == pytest.approx(buffered["jobs"][0]["read"]["iops"], rel=1e-9)
    assert float(d["iops"]) == pytest.approx(direct["jobs"][0]["read"]["iops"], rel=1e-9)
    assert b["n"] == d["n"] == "1" and b["iops_ci_low"] == "" and d["iops_ci_low"] == ""

    # the report agrees: its best 4K random read is the best of these three rows and names its setup
    S = syn.synthesise(data, SPECS)
    best = S.headline.set_index("key").loc["best_randread_iops"]
    top = max((two, b, d), key=lambda r: float(r["iops"]))
    assert best["value"] == pytest.approx(float(top["iops"]), rel=1e-9)
    setup = "O_DIRECT" if top["direct"] == "1" else "buffered"
    assert best["detail"] == f"QD1x{top['numjobs']}, psync, {setup}, imported, n=1"
    little = S.little
    assert sorted(little["numjobs"].astype(int)) == [1, 1, 2]
    clone_row = little[little["numjobs"] == 2].iloc[0]
    assert clone_row["outstanding_io"] == 2 and abs(clone_row["residual_pct"]) < 25


def test_repetitions_give_n_and_ci_and_the_report_agrees_with_the_summary(tmp_path):
    data = tmp_path / "data"
    res = memstor("run", "fio-queue-depth", "--profile", "quick", "--data", str(data), "--host", "h",
                  "--no-progress", "--set", "runtime_s=1", "--set", "ramp_s=0", "--set", "file_size=16m",
                  "--set", "rw=[randread]", "--set", "iodepth=[1,4]", "--set", "spec_iodepth=0",
                  "--set", "repetitions=3", "--set", "ioengine=psync", "--set", "direct=0")
    assert res.returncode == 0, res.stderr
    rows = [r for r in summary_rows(data) if r["experiment"] == "fio-queue-depth"]
    assert len(rows) == 2 and all(r["n"] == "3" for r in rows)
    for r in rows:
        assert float(r["iops_ci_low"]) <= float(r["iops"]) <= float(r["iops_ci_high"])
    best = max(rows, key=lambda r: float(r["iops"]))

    S = syn.synthesise(data, SPECS)
    head = S.headline.set_index("key").loc["best_randread_iops"]
    assert head["value"] == pytest.approx(float(best["iops"]), rel=1e-12) and head["n"] == 3
    assert head["value_ci_low"] == pytest.approx(float(best["iops_ci_low"]), rel=1e-9)
    # every Little's-law row: X and R are the means of one configuration's three runs
    raw = load_dataset(data).fio
    for _, r in S.little.iterrows():
        runs = raw[(raw["config"] == r["config"]) & raw["ok"]]
        assert r["n"] == 3 and len(runs) == 3
        assert r["iops"] == pytest.approx(runs["iops"].mean(), rel=1e-12)
        assert r["lat_mean_us"] == pytest.approx(runs["lat_mean_us"].mean(), rel=1e-12)

    out = write_tables(S, tmp_path / "tables")
    assert [p.name for p in out] == [f"{name}.csv" for name in TABLES]
    summary = list(csv.DictReader((tmp_path / "tables" / "summary.csv").open()))
    assert [r["iops"] for r in summary if r["experiment"] == "fio-queue-depth"] == [r["iops"] for r in rows]
    little = list(csv.DictReader((tmp_path / "tables" / "littles_law.csv").open()))
    assert {"flagged", "reason", "band_low_io", "band_high_io", "n"} <= set(little[0])
