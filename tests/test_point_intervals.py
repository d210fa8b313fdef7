"""Issue 18, part 1 wired: every fio point of the block-size, rw-ratio and queue-depth sweeps writes fio's
interval logs (no histogram log) and carries its own 95 % batch-means interval; the one summary path uses it
when n = 1 and says so (ci_method), the t-interval between runs when n >= 2. A point measured before the
logs existed stays measured and gets an empty interval with the reason."""

from __future__ import annotations

import shutil
import subprocess

import pandas as pd
import pytest

from conftest import ROOT
from memstor.analysis.summary import summary_table

pytestmark = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (make env installs it)")

SETS = ["runtime_s=3", "ramp_s=0", "file_size=16m", "rwmixread=[100,50]"]


def _run(data, *extra):
    cmd = [str(ROOT / ".venv/bin/memstor"), "run", "fio-rw-ratio", "--profile", "quick", "--data", str(data),
           "--host", "h", "--no-progress", *extra]
    for s in SETS:
        cmd += ["--set", s]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    return pd.read_csv(data / "processed" / "h" / "fio-rw-ratio.csv")


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    data = tmp_path_factory.mktemp("ci") / "data"
    return data, _run(data)


@pytest.mark.fio
def test_every_point_has_its_own_interval(measured):
    data, df = measured
    folders = sorted((data / "raw" / "h" / "fio-rw-ratio").glob("*.files"))
    assert len(folders) == 2
    for folder in folders:
        names = {p.name for p in folder.iterdir()}
        assert {"fio_iops.1.log", "fio_bw.1.log", "fio_lat.1.log"} <= names
        assert not any("hist" in n for n in names)  # only the means: no 1856-bin histogram lines
    done = df[df["status"] == "done"]
    assert len(done) == 3 and set(done["ci_method"]) == {"batch-means"}
    for m in ("iops", "bw_MBps", "lat_mean_us"):
        # the run's own mean (fio's JSON) lies inside the interval of its windows, up to the last window
        # (fio before 3.37 does not log it) and the remainder batching leaves out (a few % of a 3 s run)
        assert (done[f"{m}_ci_low"] < done[f"{m}_ci_high"]).all()
        assert (done[f"{m}_ci_low"] <= done[m] * 1.05).all() and (done[f"{m}_ci_high"] >= done[m] * 0.95).all()
    assert not done["ci_note"].fillna("").str.contains("ramp excluded").any()  # the same windows as the value


@pytest.mark.fio
def test_the_summary_uses_the_run_interval_when_n_is_1(measured):
    data, df = measured
    summ = summary_table(df, data)
    one = summ[summ["direction"].isin(["read", "write"])]
    assert set(one["n"]) == {1} and set(one["ci_method"]) == {"batch-means"}
    merged = one.merge(df, on=["point", "direction"], suffixes=("", "_run"))
    for m in ("iops", "bw_MBps", "lat_mean_us"):
        assert merged[f"{m}_ci_low"].tolist() == pytest.approx(merged[f"{m}_ci_low_run"].tolist())
    assert one["clat_p99_us_ci_low"].isna().all()  # no within-run interval of a percentile
    # a mixed job's total: the one active direction's own interval at rwmixread 100, none at 50
    totals = summ[summ["direction"] == "total"].set_index("rwmixread")
    assert totals.loc[100, "ci_method"] == "batch-means" and totals.loc[50, "ci_method"] == ""


def test_two_runs_use_the_interval_between_runs():
    from memstor.analysis.summary import ci95, summarise

    obs = pd.DataFrame({"host": "h", "experiment": "e", "rw": "randread", "bs_bytes": 4096, "iodepth": 1,
                        "numjobs": 1, "rwmixread": None, "ioengine": "psync", "direct": 1, "config": "c",
                        "direction": "read", "ok": True, "iops": [100.0, 110.0], "iops_ci_low": [1.0, 1.0],
                        "iops_ci_high": [2.0, 2.0], "ci_method": "batch-means"})
    row = summarise(obs, ["iops"]).iloc[0]
    mean, lo, hi, n = ci95([100.0, 110.0])
    assert row["ci_method"] == "repetitions" and (row["iops_ci_low"], row["iops_ci_high"]) == (lo, hi)


@pytest.mark.fio
def test_a_point_without_logs_stays_measured_with_the_reason(measured, tmp_path):
    data, df = measured
    copy = tmp_path / "data"
    shutil.copytree(data, copy, ignore=shutil.ignore_patterns("scratch"))  # the test file is not copied
    for folder in (copy / "raw" / "h" / "fio-rw-ratio").glob("*.files"):
        shutil.rmtree(folder)  # as measured before memstor wrote interval logs
    again = _run(copy)
    done = again[again["status"] == "done"]
    assert len(done) == 3 and (done["ci_method"].astype(object).fillna("") == "").all()
    assert set(done["ci_note"]) == {"no interval logs"} and done["iops_ci_low"].isna().all()
    assert list(done["iops"]) == list(df[df["status"] == "done"]["iops"])  # re-read, not re-measured


@pytest.mark.fio
def test_the_headline_shows_the_interval_and_its_method(measured, tmp_path):
    from memstor.analysis import synthesis as syn
    from memstor.report import text

    data, _ = measured
    res = subprocess.run([str(ROOT / ".venv/bin/memstor"), "run", "fio-queue-depth", "--profile", "quick", "--data",
                          str(data), "--host", "h", "--no-progress", "--set", "runtime_s=3", "--set", "ramp_s=0",
                          "--set", "file_size=16m", "--set", 'rw=["randread"]', "--set", "iodepth=[1,4]",
                          "--set", "spec_iodepth=0"], capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    S = syn.synthesise(data, ROOT / "data" / "specs")
    best = S.headline.set_index("key").loc["best_randread_iops"]
    assert best["n"] == 1 and best["ci_method"] == "batch-means"
    assert best["value_ci_low"] < best["value"] < best["value_ci_high"]
    row = text.headline_evidence(S.headline, S.validity).set_index("quantity").loc["Best 4K random read (IOPS)"]
    assert " ± " in row["value"] and row["value"].endswith("(95 %, batch-means)") and row["measured as"].startswith("QD")
