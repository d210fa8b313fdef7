"""Stop when precise enough (issue 18, part 2): fio's status snapshots -> windows -> the stop rule, with the
real fio: every point either reaches the target half-width or runs its longest time and says so."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import ROOT
from memstor.core.errors import UsageError
from memstor.measure.precision import Watcher, rule_as_applied, verdict
from memstor.parse.fio_status import split_final, status_windows

needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (make env installs it)")
MEMSTOR = ROOT / ".venv" / "bin" / "memstor"


def _snap(runtime_ms: float, ios: float, lat_n: float, lat_mean_ns: float, bs: int = 4096) -> dict:
    """A fio status snapshot of a randread job (cumulative counts), as fio-3.33 writes it."""
    read = {"runtime": runtime_ms, "total_ios": ios, "io_bytes": ios * bs,
            "lat_ns": {"N": lat_n, "mean": lat_mean_ns}}
    return {"fio version": "fio-3.33", "jobs": [{"jobname": "j", "read": read,
                                                 "write": {"runtime": 0, "total_ios": 0, "io_bytes": 0}}]}


def test_status_windows_skip_the_ramp_and_difference_the_cumulative_counts():
    docs = [_snap(400, 4000, 0, 0), _snap(900, 9000, 0, 0),  # ramp: I/Os counted, no latency
            _snap(500, 5000, 5000, 100_000),                  # counts restarted at the end of the ramp
            _snap(1000, 11000, 11000, 110_000), _snap(1500, 16000, 16000, 120_000)]
    w = status_windows(docs)
    assert list(w["window"]) == [1, 2, 3] and set(w["direction"]) == {"read"}
    assert w["iops"].tolist() == pytest.approx([10_000, 12_000, 10_000])
    assert w["ios"].tolist() == pytest.approx([5000, 6000, 5000])
    # mean latency of a window = difference of cumulative latency sums / its I/Os (ns -> us)
    lat2 = (11000 * 110_000 - 5000 * 100_000) / 6000 / 1000
    assert w["lat_mean_us"].iloc[1] == pytest.approx(lat2)
    assert w["bw_MBps"].iloc[0] == pytest.approx(5000 * 4096 / 0.5 / 1e6)


def test_a_window_without_io_in_one_direction_is_no_window_of_it():
    docs = [_snap(500, 5000, 5000, 1e5), _snap(1000, 10000, 10000, 1e5)]
    w = status_windows(docs)
    assert len(w) == 2 and set(w["direction"]) == {"read"}  # the write side did nothing: no write window


def test_split_final_keeps_every_byte():
    one = json.dumps(_snap(500, 5000, 5000, 1e5), indent=2)
    two = json.dumps(_snap(1000, 10000, 10000, 1e5), indent=2)
    final = json.dumps(_snap(1100, 11000, 11000, 1e5), indent=2)
    text = f"fio: a warning line\n{one}\n{two}\n{final}\n"
    status, last = split_final(text)
    assert last == f"fio: a warning line\n{final}\n" and status == f"{one}\n{two}\n"
    assert json.loads(last.split("\n", 1)[1])["jobs"][0]["read"]["runtime"] == 1100
    assert split_final(final) == ("", final)


def _windows(values: np.ndarray, lat: np.ndarray) -> pd.DataFrame:
    n = len(values)
    return pd.DataFrame({"window": range(1, n + 1), "time_ms": np.arange(1, n + 1) * 250.0, "direction": "read",
                         "iops": values, "bw_MBps": values * 4096 / 1e6, "lat_mean_us": lat, "ios": values / 4,
                         "lat_ios": values / 4, "jobs": 1})


def test_verdict_needs_both_metrics_within_the_target_and_uncorrelated():
    rng = np.random.default_rng(7)
    iops = 10_000 * (1 + 0.01 * rng.standard_normal(41))
    steady = _windows(iops, 100 * (1 + 0.01 * rng.standard_normal(41)))
    assert verdict(steady, 2).reached
    noisy_latency = _windows(iops, 100 * (1 + 0.3 * rng.standard_normal(41)))
    v = verdict(noisy_latency, 2)
    assert not v.reached and "read lat_mean_us ±" in v.note and "iops" not in v.note
    assert not verdict(_windows(iops[:8], iops[:8] / 100), 50).reached  # fewer than 10 windows: no interval
    drift = _windows(10_000 + 50 * np.arange(41.0), np.full(41, 100.0))  # a trend: correlated, never "precise"
    v = verdict(drift, 50)
    assert not v.reached and "correlated" in v.note


def _cumulative(iops: np.ndarray, lat_us: np.ndarray, window_ms: int = 250) -> list[dict]:
    """Cumulative status snapshots of per-window IOPS and mean latencies (the first window is the ramp)."""
    docs, ios, lat_sum = [], 0.0, 0.0
    for k, (x, r) in enumerate(zip(iops, lat_us, strict=True), start=1):
        n = x * window_ms / 1000
        ios, lat_sum = ios + n, lat_sum + n * r * 1000
        docs.append(_snap(k * window_ms, ios, ios, lat_sum / ios))
    return docs


def test_the_rule_is_recorded_as_applied_after_each_snapshot_not_on_a_later_one(tmp_path):
    """fio may append one more snapshot between memstor's decision and its SIGINT: the point stays precise."""
    rng = np.random.default_rng(7)
    iops = 10_000 * (1 + 0.01 * rng.standard_normal(61))
    lat = 100 * (1 + 0.01 * rng.standard_normal(61))
    iops[-1], lat[-1] = 1_000, 1_000  # the late snapshot: a stall
    docs = _cumulative(iops, lat)
    used, v = rule_as_applied(docs, 2.0)
    assert v.reached and used < len(docs)
    assert not verdict(status_windows(docs), 2.0).reached  # judged on every snapshot it would not be
    # the watcher stops at that same snapshot, reading the file as fio writes it
    out = tmp_path / "p.json"
    watch = Watcher(out, 2.0)
    out.write_text("".join(json.dumps(d) + "\n" for d in docs[:5]))
    assert not watch()
    out.write_text("".join(json.dumps(d) + "\n" for d in docs))
    assert watch() and watch.evaluations == used and watch.last == v


def test_precision_keys_are_validated_and_only_where_they_work():
    from memstor.experiments import fio_queue_depth, load_profile

    qd = load_profile("quick", "fio-queue-depth", {"precision_pct": 5})
    c = fio_queue_depth.validate(qd).common
    assert (c.precision_pct, c.max_runtime_s) == (5.0, 6 * c.runtime_s)  # default: 6 x runtime_s
    with pytest.raises(UsageError, match="precision_pct"):
        fio_queue_depth.validate(dict(qd, precision_pct=200))
    with pytest.raises(UsageError, match="unknown parameter 'precision_pct' for fio-steady-state"):
        load_profile("quick", "fio-steady-state", {"precision_pct": 5})
    fixed = fio_queue_depth.validate(load_profile("quick", "fio-queue-depth")).common
    assert (fixed.precision_pct, fixed.max_runtime_s) == (0.0, 0.0)


def test_a_point_with_a_target_has_its_own_name_and_a_fixed_one_keeps_its_name():
    from memstor.experiments import _fio_points, fio_queue_depth, load_profile

    qd = load_profile("quick", "fio-queue-depth")
    fixed = fio_queue_depth.queue_depth_configs(fio_queue_depth.validate(qd), "io_uring")[0]
    aimed = fio_queue_depth.queue_depth_configs(
        fio_queue_depth.validate(dict(qd, precision_pct=2, max_runtime_s=30)), "io_uring")[0]
    assert "precision_pct" not in fixed and _fio_points.config_name(fixed).endswith("-t2-r1-f256m")
    assert _fio_points.config_name(aimed).endswith("-p2-max30-r1-f256m") and aimed["runtime_s"] == 30


@pytest.mark.fio
def test_fio_job_with_a_target_asks_fio_for_status_snapshots(tmp_path):
    from memstor.measure.fio import FioJob, fio_command

    job = FioJob(name="p", filename=str(tmp_path / "f"), size="1m", runtime_s=30, status_interval_ms=250,
                 precision_pct=2.0)
    assert "--status-interval=250ms" in fio_command(job, tmp_path / "o.json")
    with pytest.raises(UsageError, match="precision_pct"):
        FioJob(name="p", filename="f", size="1m", precision_pct=2.0).validate()


def _memstor(data: Path, *sets: str, timeout: int = 300) -> subprocess.CompletedProcess:
    cmd = [str(MEMSTOR), "run", "fio-queue-depth", "--profile", "quick", "--data", str(data), "--host", "h",
           "--no-progress"]
    for s in sets:
        cmd += ["--set", s]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)


@needs_fio
@pytest.mark.fio
def test_real_fio_every_point_is_precise_or_ran_its_longest(tmp_path):
    """Acceptance 2 (on a reduced grid: 3 points, at most 6 s each, on a 32 MiB file)."""
    data = tmp_path / "data"
    res = _memstor(data, "precision_pct=5", "max_runtime_s=6", "file_size=32m", 'rw=["randread"]',
                   "iodepth=[1,8]", "spec_numjobs=2")
    assert res.returncode == 0, res.stderr
    df = pd.read_csv(data / "processed" / "h" / "fio-queue-depth.csv")
    assert len(df) == 3 and (df["status"] == "done").all()
    for _, r in df.iterrows():
        hw_iops = (r["iops_ci_high"] - r["iops_ci_low"]) / 2 / r["iops"] * 100
        hw_lat = (r["lat_mean_us_ci_high"] - r["lat_mean_us_ci_low"]) / 2 / r["lat_mean_us"] * 100
        assert r["precision_pct"] == 5
        if r["precision_reached"]:
            # the recorded interval is the one the rule saw (means of the windows, not fio's whole-run mean)
            assert r["ci_method"] == "batch-means" and "status windows of 250 ms" in r["ci_note"]
            assert hw_iops <= 5.3 and hw_lat <= 5.3, r.to_dict()
            assert r["runtime_s"] < 6
        else:
            assert r["runtime_s"] == pytest.approx(6, abs=0.1), r.to_dict()
    folder = data / "raw" / "h" / "fio-queue-depth"
    for raw in folder.glob("*-rep1.json"):
        doc = json.loads(raw.read_text())  # one JSON document: the snapshots are in the sidecar
        assert doc["jobs"][0]["read"]["total_ios"] > 0
        status = raw.with_suffix(".files") / "fio_status.json"
        assert status.read_text().count('"fio version"') >= 10
        meta = json.loads(raw.with_suffix(".meta.json").read_text())
        assert meta["precision"]["precision_pct"] == 5 and meta["precision"]["evaluations"] >= 1
        assert "--status-interval=250ms" in meta["command"]
    summary = subprocess.run([str(MEMSTOR), "summary", "--data", str(data)], capture_output=True, text=True,
                             cwd=ROOT, timeout=120)
    assert summary.returncode == 0, summary.stderr
    s = pd.read_csv(pd.io.common.StringIO(summary.stdout))
    for col in ("iops_ci_low", "iops_ci_high", "lat_mean_us_ci_low", "lat_mean_us_ci_high", "ci_method",
                "precision_reached"):
        assert col in s.columns
    assert set(s["precision_reached"].astype(str)) <= {"True", "False"}
    again = _memstor(data, "precision_pct=5", "max_runtime_s=6", "file_size=32m", 'rw=["randread"]',
                     "iodepth=[1,8]", "spec_numjobs=2")
    assert "nothing is measured" in again.stderr or "3 rows" in again.stdout + again.stderr
    pd.testing.assert_frame_equal(pd.read_csv(data / "processed" / "h" / "fio-queue-depth.csv"), df)


@needs_fio
@pytest.mark.fio
def test_real_fio_an_unreachable_target_runs_the_longest_time(tmp_path):
    data = tmp_path / "data"
    res = _memstor(data, "precision_pct=0.001", "max_runtime_s=3", "file_size=16m", 'rw=["randread"]',
                   "iodepth=[4]", "spec_iodepth=0", "ramp_s=0")
    assert res.returncode == 0, res.stderr
    r = pd.read_csv(data / "processed" / "h" / "fio-queue-depth.csv").iloc[0]
    assert not r["precision_reached"] and r["runtime_s"] == pytest.approx(3, abs=0.1)
    meta = json.loads(next((data / "raw" / "h" / "fio-queue-depth").glob("*.meta.json")).read_text())
    assert meta["precision"]["stopped_by_memstor"] is False and meta["returncode"] == 0


@needs_fio
@pytest.mark.fio
def test_real_fio_a_point_killed_mid_run_is_measured_again_on_resume(tmp_path):
    data = tmp_path / "data"
    sets = ["precision_pct=0.001", "max_runtime_s=4", "file_size=16m", 'rw=["randread"]', "iodepth=[2]",
            "spec_iodepth=0", "ramp_s=0"]
    cmd = [str(MEMSTOR), "run", "fio-queue-depth", "--profile", "quick", "--data", str(data), "--host", "h",
           "--no-progress"] + [x for s in sets for x in ("--set", s)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    folder = data / "raw" / "h" / "fio-queue-depth"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # until fio has written a few snapshots of the point
        tmp = [p for p in folder.glob("*.tmp*") if p.is_file()] if folder.is_dir() else []
        if any(p.stat().st_size > 30_000 for p in tmp):
            break
        time.sleep(0.1)
    else:
        pytest.fail("fio wrote no status snapshot within 60 s")
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not list(folder.glob("*-rep1.json"))  # not complete: nothing claims to be measured
    res = subprocess.run([c for c in cmd if c != "--no-progress"], capture_output=True, text=True, timeout=120,
                         cwd=ROOT)
    assert res.returncode == 0, res.stderr
    assert "measuring 1 of 1 points" in res.stderr
    r = pd.read_csv(data / "processed" / "h" / "fio-queue-depth.csv").iloc[0]
    assert r["status"] == "done" and r["runtime_s"] == pytest.approx(4, abs=0.1)
    status = next(folder.glob("*.files")) / "fio_status.json"
    assert status.read_text().count('"fio version"') >= 10


def test_the_report_says_how_many_configurations_reached_their_target():
    from memstor.report.text import precision_sentence

    pts = pd.DataFrame({"host": ["a", "a", "a", "b"], "experiment": ["fio-queue-depth"] * 4,
                        "precision_pct": [2.0, 2.0, 2.0, np.nan], "precision_reached": [True, False, True, None]})
    s = precision_sentence(pts)
    assert "a, fio-queue-depth: 2 of 3 configurations reached ±2 %" in s and "b," not in s
    assert precision_sentence(pts.assign(precision_pct=np.nan)) == ""
    assert precision_sentence(pts.drop(columns=["precision_reached"])) == ""
