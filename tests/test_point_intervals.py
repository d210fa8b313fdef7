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
from memstor.core.batchmeans import MAX_LAG1, correlated_metrics, interval_cis
from memstor.parse.fio_intervals import point_intervals

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
    assert len(done) == 3
    for _, row in done.iterrows():
        # every point gets its own interval from its own logs, or none where its batches are correlated
        # (the report's rule: lag-1 > 0.2), judged both ways against the lag-1 recomputed from the logs
        cis = interval_cis(point_intervals(data / "raw" / "h" / "fio-rw-ratio" / f"{row['point']}.files"),
                           row["direction"])
        note = correlated_metrics(row["ci_note"])
        for m in ("iops", "bw_MBps", "lat_mean_us"):
            lag1 = cis[m].lag1
            if lag1 > MAX_LAG1:
                assert pd.isna(row[f"{m}_ci_low"]) and note[m] == pytest.approx(lag1, abs=0.006)
                continue
            assert m not in note and row["ci_method"] == "batch-means"
            # the run's own mean (fio's JSON) lies inside the interval of its windows, up to the last window
            # (fio before 3.37 does not log it) and the remainder batching leaves out (a few % of a 3 s run)
            assert row[f"{m}_ci_low"] < row[f"{m}_ci_high"]
            assert row[f"{m}_ci_low"] <= row[m] * 1.05 and row[f"{m}_ci_high"] >= row[m] * 0.95
        if not note:
            assert row["ci_method"] == "batch-means"
    assert not done["ci_note"].astype(object).fillna("").str.contains("ramp excluded").any()  # the same windows as the value


@pytest.mark.fio
def test_the_summary_uses_the_run_interval_when_n_is_1(measured):
    data, df = measured
    summ = summary_table(df, data)
    one = summ[summ["direction"].isin(["read", "write"])]
    assert set(one["n"]) == {1}
    merged = one.merge(df, on=["point", "direction"], suffixes=("", "_run"))
    # the run's own interval, or none where the run has none (correlated batches: the test above)
    assert merged["ci_method"].fillna("").tolist() == merged["ci_method_run"].fillna("").tolist()
    for m in ("iops", "bw_MBps", "lat_mean_us"):
        assert merged[f"{m}_ci_low"].tolist() == pytest.approx(merged[f"{m}_ci_low_run"].tolist(), nan_ok=True)
    assert one["clat_p99_us_ci_low"].isna().all()  # no within-run interval of a percentile
    # a mixed job's total: the one active direction's own interval at rwmixread 100, none at 50
    totals = summ[summ["direction"] == "total"].set_index("rwmixread")
    read100 = df[(df["rwmixread"] == 100) & (df["direction"] == "read")].iloc[0]
    assert totals.loc[100, "ci_method"] == (read100["ci_method"] if isinstance(read100["ci_method"], str) else "")
    assert totals.loc[100, "iops_ci_low"] == pytest.approx(read100["iops_ci_low"], nan_ok=True)
    assert totals.loc[50, "ci_method"] == ""


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
    qd = pd.read_csv(data / "processed" / "h" / "fio-queue-depth.csv")
    point = qd[(qd["direction"] == "read") & (qd["iops"] == best["value"])].iloc[0]
    row = text.headline_evidence(S.headline, S.validity).set_index("quantity").loc["Best 4K random read, fresh (IOPS)"]
    assert best["n"] == 1 and row["measured as"].startswith("QD") and ", fresh, 16 MiB file span" in row["measured as"]
    if "iops" in correlated_metrics(point["ci_note"]):  # correlated windows: no interval anywhere, both ways
        assert pd.isna(best["value_ci_low"]) and " ± " not in row["value"]
        return
    assert best["ci_method"] == "batch-means"
    assert best["value_ci_low"] < best["value"] < best["value_ci_high"]
    below, above = best["value"] - best["value_ci_low"], best["value_ci_high"] - best["value"]
    symmetric = abs(above - below) <= 0.1 * (above + below) / 2  # else its two ends (6253a1e), a '±' would misstate one
    assert (" ± " in row["value"]) == symmetric and ("[" in row["value"]) == (not symmetric)
    assert row["value"].endswith("(95 %, batch-means)")
