"""fio-pts-hir and fio-pts-xsr (SNIA PTS host idle recovery and cross-stimulus recovery): parameters, the points
and their order, the idle between points, the analysis on constructed series (a known recovery ratio, known settle
times), real short runs of the real fio through the `memstor` CLI on a test file and on a loop device, the
standard profile's skip, and both notebooks under papermill."""

from __future__ import annotations

import json
import math
import shutil
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from memstor.analysis import pts_recovery as pr
from memstor.analysis import steady_state as ss
from memstor.core.errors import UsageError
from memstor.experiments import _fio_rows, _pts, load_profile
from memstor.experiments import fio_pts_hir as hir
from memstor.experiments import fio_pts_xsr as xsr
from memstor.measure.sweep import PointResult
from memstor.report.plots import pts_recovery as plots
from notebook_helpers import KERNEL, run_notebook
from reliability_helpers import TRACEBACK, run_cli

ROOT = Path(__file__).resolve().parents[1]
FIO = shutil.which("fio")
needs_fio = pytest.mark.skipif(FIO is None, reason="fio is not installed (make env installs it)")


def section(experiment: str, **over) -> dict:
    return load_profile("quick", experiment, over)


# ------------------------------------------------------------------------------------------ parameters


@pytest.mark.parametrize("family, over, param", [
    (hir, {"wait_states_s": []}, "wait_states_s"),
    (hir, {"wait_states_s": [5, 5]}, "wait_states_s"),
    (hir, {"wait_states_s": [5, -1]}, "wait_states_s"),
    (hir, {"segments_per_wait": 1}, "segments_per_wait"),
    (hir, {"precondition_max_rounds": 4}, "precondition_max_rounds"),
    (hir, {"access_s": 0}, "access_s"),
    (hir, {"return_s": "long"}, "return_s"),
    (hir, {"bs": "1000"}, "bs"),                      # O_DIRECT needs multiples of 512
    (hir, {"iodepth": 0}, "iodepth"),
    (hir, {"device": "/dev/loop7"}, "confirm_device"),  # a raw device named once
    (xsr, {"rnd_s": -1}, "rnd_s"),
    (xsr, {"seq_bs": "0"}, "seq_bs"),
    (xsr, {"seq1_s": 8 * 86400}, "seq1_s"),           # more than a week: a typo
    (xsr, {"numjobs": 0}, "numjobs"),
    (xsr, {"confirm_device": "/dev/loop7"}, "device"),
])
def test_bad_parameters_are_refused_in_one_line_naming_the_parameter(family, over, param):
    with pytest.raises(UsageError) as err:
        family.validate({**section(family.EXPERIMENT), **over})  # as a notebook's cell gives them
    text = str(err.value)
    assert "\n" not in text and f"parameter {param}=" in text and family.EXPERIMENT in text
    assert "fix params/<profile>.yaml" in text  # the way out


@pytest.mark.parametrize("family", [hir, xsr])
@pytest.mark.parametrize("key", ["runtime_s", "ramp_s", "repetitions"])
def test_common_keys_without_meaning_here_are_refused_with_the_reason(family, key):
    with pytest.raises(UsageError, match=rf"parameter {key}=.*not a key of this family") as err:
        family.validate({**section(family.EXPERIMENT), key: 2})
    assert "\n" not in str(err.value)


def test_every_profile_section_validates_and_full_keeps_the_pts_workloads():
    for profile in ("quick", "full"):
        h = hir.validate(load_profile(profile, hir.EXPERIMENT))
        x = xsr.validate(load_profile(profile, xsr.EXPERIMENT))
        assert (h.bs, h.iodepth, h.common.numjobs) == ("4k", 32, 4)
        assert (x.seq_bs, x.rnd_bs, x.iodepth, x.common.numjobs) == ("1m", "8k", 32, 1)
    h = hir.validate(load_profile("full", hir.EXPERIMENT))
    assert list(h.wait_states_s) == hir.PTS["wait_states_s"] and h.access_s == 5 and h.precondition_round_s == 60


# ------------------------------------------------------------------------------------------ points


def test_hir_points_precondition_then_per_wait_state_access_segments_and_a_return():
    # quick: 5 rounds of 2 s (as long as a segment: hir_recovery's windows of one length), waits 0.5 and 1 s, 4
    # segments of 2 s each (3 counted: the first follows writes)
    sp = hir.validate(section(hir.EXPERIMENT))
    pcs, tests = hir.make_points(sp, "io_uring", 64 << 20, False, "medium", "/tmp/f")
    assert [p.params["round"] for p in pcs] == [1, 2, 3, 4, 5]
    assert {(p.params["phase"], p.params["runtime_s"], p.params["idle_before_s"]) for p in pcs} == \
        {("precondition", 2, 0)}
    got = [(p.params["phase"], p.params["wait_s"], p.params["segment"], p.params["idle_before_s"],
            p.params["runtime_s"]) for p in tests]
    assert got == [("access", 0.5, 1, 0, 2), ("access", 0.5, 2, 0.5, 2), ("access", 0.5, 3, 0.5, 2),
                   ("access", 0.5, 4, 0.5, 2), ("return", 0.5, None, 0.5, 1),
                   ("access", 1, 1, 0, 2), ("access", 1, 2, 1, 2), ("access", 1, 3, 1, 2), ("access", 1, 4, 1, 2),
                   ("return", 1, None, 1, 1)]
    names = [p.name for p in pcs + tests]
    rid = pcs[0].params["run_id"]
    assert len(set(names)) == len(names) and all(n.endswith(rid) for n in names)
    assert all(p.params["rw"] == "randwrite" and p.params["bs"] == "4k" for p in pcs + tests)
    job = _pts.fio_job(tests[1], "/tmp/f")
    assert job.time_based and job.runtime_s == 2 and job.ramp_s == 0 and job.io_size is None
    assert job.logs and not job.hist_log and job.log_avg_msec == 100 and (job.iodepth, job.numjobs) == (32, 4)
    # another length is another run (another id), the engine asked for is not part of it
    other = hir.validate(section(hir.EXPERIMENT, access_s=3))
    assert hir.make_points(other, "io_uring", 64 << 20, False, "medium", "/tmp/f")[0][0].params["run_id"] != rid
    assert hir.make_points(sp, "io_uring", 64 << 20, False, "medium", "/tmp/other")[0][0].params["run_id"] == rid


def test_xsr_points_are_three_access_groups_seq_rnd_seq_without_idle():
    sp = xsr.validate(section(xsr.EXPERIMENT, seq1_s=7, rnd_s=5, seq2_s=6))
    points = xsr.make_points(sp, "io_uring", 64 << 20, False, "medium", "/tmp/f")
    assert [(p.params["phase"], p.params["rw"], p.params["bs"], p.params["runtime_s"], p.params["idle_before_s"],
             p.params["stimulus"]) for p in points] == [
        (1, "write", "1m", 7, 0, "SEQ 1024KiB"), (2, "randwrite", "8k", 5, 0, "RND 8KiB"),
        (3, "write", "1m", 6, 0, "SEQ 1024KiB")]
    assert {(p.params["iodepth"], p.params["numjobs"]) for p in points} == {(32, 1)}
    assert _pts.log_avg_msec(3600) == 100 and _pts.log_avg_msec(28800) == 1000  # 1 s windows for the PTS's hours


def test_the_idle_runner_syncs_then_sleeps_before_fio_and_not_otherwise(monkeypatch):
    events: list[tuple[str, float]] = []

    class Inner:
        suffix = ".json"

        def complete(self, raw):
            return True

        def run(self, point, out_tmp):
            events.append(("fio", time.monotonic()))
            return {"tool": "fio"}

    monkeypatch.setattr(_pts.os, "sync", lambda: events.append(("sync", time.monotonic())))
    runner = _pts.IdleRunner(Inner())
    assert runner.run(_pts.point("a", {"runtime_s": 1, "idle_before_s": 0}), Path("x")) == \
        {"tool": "fio", "idle_before_s": 0.0, "idle_synced": False}
    assert [e for e, _ in events] == ["fio"]  # no idle planned: no sync, no sleep
    events.clear()
    meta = runner.run(_pts.point("b", {"runtime_s": 1, "idle_before_s": 0.3}), Path("x"))
    assert [e for e, _ in events] == ["sync", "fio"] and events[1][1] - events[0][1] >= 0.3
    assert meta["idle_before_s"] == 0.3 and meta["idle_synced"]


def test_a_failed_point_stops_the_sweep_with_its_reason_and_keeps_a_failed_row(tmp_path):
    sp = xsr.validate(section(xsr.EXPERIMENT))
    first, second, _ = xsr.make_points(sp, "io_uring", 64 << 20, False, "medium", "/tmp/f")
    rows = _pts.PointRows(xsr.EXPERIMENT, "h", "io_uring", tmp_path)
    bad = PointResult(second, "failed", None, tmp_path / "m.json", "point ag2: fio exited with status 1")
    assert rows([bad]) == (f"stopped: point {second.name} failed (point ag2: fio exited with status 1); rerun the "
                           "same command to retry it and go on")
    (row,) = rows.of(bad).rows
    assert row["status"] == "failed" and row["iops"] is None and row["config"] == second.name
    assert rows.failure and _pts.timeline([bad], rows) == {second.name: (None, None)}
    assert first.params["phase"] == 1


def test_departure_names_the_profile_s_other_quantities_span_and_purge():
    sp = hir.validate(section(hir.EXPERIMENT))
    text = hir.departure(sp, {"profile": "quick"}, False, [0.4, 0.6])
    assert text.startswith("quick: preconditioning rounds of 2 s instead of 60 s, access segments of 2 s instead "
                           "of 5 s, wait states 0.5, 1 s instead of 5, 10, 15, 25, 50 s")
    assert _pts.FILE_SPAN in text and _pts.NOT_PURGED in text and "0.40-0.60 s without I/O" in text
    pts = hir.validate({**section(hir.EXPERIMENT), **{k: v for k, v in hir.PTS.items()}})
    raw = hir.departure(pts, {}, True, [])
    assert raw == _pts.NOT_PURGED  # the PTS's quantities on a raw device: only the purge is missing


# ------------------------------------------------------------------------------------------ analysis: HIR


def _hir_rows(base: float = 1000.0) -> pd.DataFrame:
    rows = [{"host": "h", "phase": "precondition", "round": r, "wait_s": None, "segment": None, "iops": base,
             "idle_s": 0.4, "status": "done", "direction": "write"} for r in range(1, 6)]
    for wait, first, later in ((5.0, 900.0, [1500.0, 1480.0, 1520.0]), (10.0, 950.0, [2000.0, 2000.0, 2000.0])):
        rows.append({"host": "h", "phase": "access", "wait_s": wait, "segment": 1, "iops": first, "idle_s": 0.4})
        rows += [{"host": "h", "phase": "access", "wait_s": wait, "segment": i, "iops": v, "idle_s": wait + 0.5}
                 for i, v in enumerate(later, start=2)]
        rows.append({"host": "h", "phase": "return", "wait_s": wait, "segment": None, "iops": 1100.0,
                     "idle_s": wait + 0.5})
    df = pd.DataFrame(rows).assign(status="done", direction="write", baseline_iops=base, baseline_ci_low=base - 20,
                                   baseline_ci_high=base + 20, departure="quick: shorter")
    return df


def test_hir_table_gives_the_known_recovery_ratio_with_its_interval():
    table = pr.hir_table(_hir_rows())
    assert list(table.columns) == pr.HIR_COLUMNS and list(table["wait_s"]) == [5.0, 10.0]
    five, ten = table.to_dict("records")
    # the first segment of each wait state follows continuous writes: not counted
    assert five["segments"] == 3 and five["iops_mean"] == pytest.approx(1500.0)
    assert five["recovery_ratio"] == pytest.approx(1.5) and five["idle_s_mean"] == pytest.approx(5.5)
    half = 4.302653 * 20.0 / math.sqrt(3)  # t(0.975, 2) x sd / sqrt(n)
    assert five["recovery_ratio_ci_low"] == pytest.approx((1500 - half) / 1000, rel=1e-5)
    assert five["recovery_ratio_ci_high"] == pytest.approx((1500 + half) / 1000, rel=1e-5)
    assert ten["recovery_ratio"] == pytest.approx(2.0) and ten["iops_ci_low"] == ten["iops_ci_high"] == 2000.0
    assert "baseline ±2.0 % (95 %)" in five["note"] and five["departure"] == "quick: shorter"


def test_hir_table_of_nothing_is_empty_with_its_columns():
    assert list(pr.hir_table(pd.DataFrame()).columns) == pr.HIR_COLUMNS
    one = _hir_rows()
    one = one[~((one["phase"] == "access") & (one["segment"] == 3)) & ~((one["phase"] == "access") & (one["segment"] == 4))]
    row = pr.hir_table(one).iloc[0]
    assert row["segments"] == 1 and pd.isna(row["iops_ci_low"]) and "no interval" in row["note"]
    two = _hir_rows()
    two = two[~((two["phase"] == "access") & (two["segment"] == 4))]     # 2 counted segments: t has 1 dof
    row = pr.hir_table(two).iloc[0]
    assert row["segments"] == 2 and pd.isna(row["recovery_ratio_ci_low"]) and "fewer than 3" in row["note"]


def test_the_baseline_is_the_steady_state_window_or_the_last_five_rounds_said_so():
    rounds = [500.0, 700.0, 900.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0]
    verdict = ss.evaluate(rounds, 25)
    base = pr.hir_baseline(rounds, 25)
    first, last = verdict.window
    assert base.status == ss.ACHIEVED and base.rounds == (first, last) and base.note == ""
    assert base.iops == pytest.approx(np.mean(rounds[first - 1:last]))
    rising = [100.0 * r for r in range(1, 8)]
    base = pr.hir_baseline(rising, 7)
    assert base.status == ss.NOT_ACHIEVED and base.rounds == (3, 7) and base.iops == pytest.approx(500.0)
    assert "not achieved" in base.note and "rounds 3-7" in base.note
    assert pr.hir_baseline([], 25).iops is None


# ------------------------------------------------------------------------------------------ analysis: XSR


def _xsr_seconds(seed: int = 1) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Group 1: 60 s at 1000 MB/s; group 2: 80 s falling to 100 MB/s (tau 4 s, enters ±10 % at 18.0 s);
    group 3: 80 s rising back to 1000 MB/s (tau 8 s, enters ±10 % at 17.6 s); 2 % noise, 0.4 s gaps."""
    rng = np.random.default_rng(seed)
    mid = np.arange(1, 81) - 0.5  # the middle of second k
    series = [np.full(60, 1000.0), 100.0 + 900.0 * np.exp(-mid / 4.0), 1000.0 - 900.0 * np.exp(-mid / 8.0)]
    starts, rows, t = [], [], 0.0
    for phase, y in enumerate(series, start=1):
        starts.append(t)
        y = y * (1 + 0.02 * rng.standard_normal(y.size))
        rows += [{"host": "h", "point": f"ag{phase}", "phase": phase, "t_s": t + k, "bw_MBps": v}
                 for k, v in enumerate(y, start=1)]
        t += y.size + 0.4
    table = pd.DataFrame({"host": "h", "phase": [1, 2, 3], "stimulus": ["SEQ 1024KiB", "RND 8KiB", "SEQ 1024KiB"],
                          "t_start_s": starts, "status": "done", "departure": "quick: shorter"})
    return pd.DataFrame(rows), table


def test_xsr_settle_times_are_found_within_two_seconds_and_the_levels_hold_the_truth():
    seconds, table = _xsr_seconds()
    out = pr.xsr_table(seconds, table)
    assert list(out.columns) == pr.XSR_COLUMNS
    down, up = out.to_dict("records")
    assert down["transition"] == "SEQ 1024KiB → RND 8KiB" and up["transition"] == "RND 8KiB → SEQ 1024KiB"
    assert down["t_transition_s"] == pytest.approx(60.4) and up["t_transition_s"] == pytest.approx(140.8)
    # the truth: 4 ln 90 = 18.0 s and 8 ln 9 = 17.6 s; the rule's resolution is 1 s, the median's half-width 2 s
    assert abs(down["settle_s"] - 4 * math.log(90)) <= 2 and abs(up["settle_s"] - 8 * math.log(9)) <= 2
    assert down["from_level_MBps_ci_low"] <= 1000 <= down["from_level_MBps_ci_high"]
    assert down["to_level_MBps"] == pytest.approx(100, rel=0.03) and up["to_level_MBps"] == pytest.approx(1000, rel=0.03)
    assert down["settle_rule"] == pr.SETTLE_RULE and "±10 %" in pr.SETTLE_RULE


def test_settle_time_is_zero_when_already_settled_and_none_when_never():
    assert pr.settle_time([100.0] * 20, 100.0) == 0.0
    assert pr.settle_time(list(np.linspace(50, 150, 40)), 100.0) is None  # still rising at the end
    spikes = [100.0] * 5 + [300.0] + [100.0] * 3 + [20.0, 300.0] + [100.0] * 10
    assert pr.settle_time(spikes, 100.0) == 0.0  # one- and two-second spikes: the 5-s median holds
    assert pr.settle_time([300.0] * 6 + [100.0] * 20, 100.0) == 6.0


def test_figures_mark_the_wait_states_baseline_transitions_and_settle_times():
    fig = plots.hir_figure(_hir_rows().assign(t_start_s=lambda d: np.arange(len(d)) * 7.0, runtime_s=5.0))
    (ax,) = fig.axes
    gids = {line.get_gid() for line in ax.get_lines()}
    assert {"hir:precondition", "hir:wait:5", "hir:wait:10", "hir:return", "hir:baseline"} <= gids
    assert ax.get_ylabel() == plots.IOPS_LABEL and "(s)" in ax.get_xlabel()
    seconds, table = _xsr_seconds()
    fig = plots.xsr_figure(seconds, pr.xsr_table(seconds, table))
    (ax,) = fig.axes
    gids = {line.get_gid() for line in ax.get_lines()}
    assert {"xsr:phase:1", "xsr:transition:0", "xsr:transition:1", "xsr:settle:0", "xsr:settle:1"} <= gids
    assert ax.get_yscale() == "log" and ax.get_ylabel().startswith(plots.MBPS_LABEL)
    assert plots.hir_figure(pd.DataFrame()) is None and plots.xsr_figure(None) is None


# ------------------------------------------------------------------------------------- real fio runs


def run(experiment: str, tmp_path: Path, *sets: str, host: str = "ptshost", profile: str = "quick",
        target: bool = True):
    """`memstor run EXPERIMENT` with its data (and, unless ``target`` is False, its test file) under tmp_path."""
    data, folder = tmp_path / "data", tmp_path / "target"
    folder.mkdir(exist_ok=True)
    args = ["run", experiment, "--profile", profile, "--data", str(data), "--host", host,
            *(["--target", str(folder)] if target else [])]
    for s in sets:
        args += ["--set", s]
    return run_cli(*args, timeout=300)


#: The real quick runs on a 64 MiB test file (XSR with 6 s access groups instead of quick's 10 s).
QUICK_RUN = {hir: ("file_size=64m",), xsr: ("file_size=64m", "seq1_s=6", "rnd_s=6", "seq2_s=6")}


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """``quick_run(family)``: (folder, the `memstor run` result) of the family's real run (QUICK_RUN, host ptshost,
    data and test file under folder), measured once in this module: the CLI test checks it, and the notebook test
    re-analyses a copy of its data, as `make all` does (memstor run measures, then the notebook finds every point
    measured). Before, the notebook test measured a run of its own: HIR with the same parameters (~35 s here),
    XSR with 10 s access groups (~35 s)."""
    done: dict = {}

    def measured(family) -> tuple[Path, object]:
        if family not in done:
            folder = tmp_path_factory.mktemp(family.EXPERIMENT)
            done[family] = folder, run(family.EXPERIMENT, folder, *QUICK_RUN[family])
        return done[family]

    return measured


def read(tmp_path: Path, experiment: str, host: str = "ptshost") -> tuple[pd.DataFrame, pd.DataFrame]:
    folder = tmp_path / "data" / "processed" / host
    return pd.read_csv(folder / f"{experiment}.csv"), pd.read_csv(folder / f"{experiment}-seconds.csv")


def check_seconds(table: pd.DataFrame, seconds: pd.DataFrame) -> None:
    """Complete seconds only, on the test's time axis, inside each point's I/O window."""
    assert list(seconds.columns) == _pts.SECOND_COLUMNS and seconds["t_s"].is_monotonic_increasing
    for _, row in table.iterrows():
        s = seconds[seconds["point"] == row["point"]]
        assert len(s) == max(0, math.floor(row["runtime_s"] - 0.1)), row["point"]  # the last, partial second left out
        if len(s):
            assert s["t_s"].iloc[0] == pytest.approx(row["t_start_s"] + 1, abs=0.002)
            assert (s["iops"] > 0).all() and (s["bw_MBps"] > 0).all() and (s["lat_mean_us"] > 0).all()


@needs_fio
@pytest.mark.fio
@pytest.mark.slow
def test_real_hir_run_on_a_test_file_then_re_read_without_measuring(quick_run):
    tmp_path, res = quick_run(hir)
    assert res.returncode == 0, res.stderr
    table, seconds = read(tmp_path, hir.EXPERIMENT)
    assert list(table.columns) == _fio_rows.COLUMNS + hir.HIR_COLUMNS
    assert (table["status"] == "done").all() and (table["direction"] == "write").all()
    assert (table["config"] == table["point"]).all() and table["t_start_s"].is_monotonic_increasing
    pcs = table[table["phase"] == "precondition"]
    assert list(pcs["round"]) == list(range(1, len(pcs) + 1)) and len(pcs) == 5  # 5 rounds: the window, the limit
    tests = table[table["phase"] != "precondition"]
    # quick: 4 access segments per wait state (the first follows writes: 3 counted), then the return
    assert list(tests["phase"]) == ["access"] * 4 + ["return"] + ["access"] * 4 + ["return"]
    assert list(tests["wait_s"]) == [0.5] * 5 + [1.0] * 5
    assert list(tests["segment"].fillna(0)) == [1, 2, 3, 4, 0, 1, 2, 3, 4, 0]
    # the idle each point saw (fio's clock): at least the planned one, at most a few s of bookkeeping more
    planned = table["idle_before_s"].iloc[1:]
    extra = table["idle_s"].iloc[1:] - planned
    assert (extra > 0).all() and (extra < 3).all(), list(table["idle_s"])
    base = table["baseline_iops"].iloc[0]
    assert base > 0 and table["ss_status"].iloc[0] in (ss.ACHIEVED, ss.NOT_ACHIEVED)
    assert list(tests["recovery_ratio"]) == pytest.approx(list(tests["iops"] / base)) and pcs["recovery_ratio"].isna().all()
    assert (table["span"] == "file").all() and (table["span_bytes"] == 64 << 20).all()
    dep = table["departure"].iloc[0]
    assert dep.startswith("quick: ") and _pts.FILE_SPAN in dep and _pts.NOT_PURGED in dep
    check_seconds(table, seconds)
    summary = pr.hir_table(table)
    assert list(summary["wait_s"]) == [0.5, 1.0] and (summary["segments"] == 3).all()
    # the rounds and the segments are windows of one length now (2 s): hir_recovery can pass, and where it does
    # not, not for that reason
    assert (summary["baseline_round_s"].round() == summary["segment_s"].round()).all()
    assert not summary["recovery_note"].astype(str).str.contains("unlike windows|fewer than").any()
    assert (summary["recovery_ratio"] > 0).all() and (summary["idle_s_mean"] > summary["wait_s"]).all()
    csv = (tmp_path / "data/processed/ptshost" / f"{hir.EXPERIMENT}.csv").read_bytes()
    again = run(hir.EXPERIMENT, tmp_path, *QUICK_RUN[hir])
    assert again.returncode == 0 and "nothing is measured" in again.stderr and TRACEBACK not in again.stderr
    assert (tmp_path / "data/processed/ptshost" / f"{hir.EXPERIMENT}.csv").read_bytes() == csv


@needs_fio
@pytest.mark.fio
@pytest.mark.slow
def test_real_xsr_run_on_a_test_file(quick_run):
    tmp_path, res = quick_run(xsr)
    assert res.returncode == 0, res.stderr
    table, seconds = read(tmp_path, xsr.EXPERIMENT)
    assert list(table.columns) == _fio_rows.COLUMNS + xsr.XSR_COLUMNS
    assert list(table["phase"]) == [1, 2, 3] and list(table["stimulus"]) == ["SEQ 1024KiB", "RND 8KiB", "SEQ 1024KiB"]
    assert list(table["rw"]) == ["write", "randwrite", "write"] and list(table["bs_bytes"]) == [1 << 20, 8192, 1 << 20]
    assert (table["status"] == "done").all() and (table["phase_s"] == 6).all()
    assert (table["runtime_s"] >= 6).all() and (table["runtime_s"] < 8).all()
    assert pd.isna(table["idle_s"].iloc[0]) and (table["idle_s"].iloc[1:] > 0).all() and (table["idle_s"].iloc[1:] < 3).all()
    dep = table["departure"].iloc[0]
    assert dep.startswith("quick: access groups of 6, 6, 6 s instead of 28800, 21600, 28800 s") and _pts.FILE_SPAN in dep
    check_seconds(table, seconds)
    out = pr.xsr_table(seconds, table)
    assert list(out["transition"]) == ["SEQ 1024KiB → RND 8KiB", "RND 8KiB → SEQ 1024KiB"]
    # a level, or none with why: a 6-s phase still moving at its end on a shared VM has no level (2adfb25; a
    # bare-clone run's RND phase did)
    for side in ("from", "to"):
        level, why = out[f"{side}_level_MBps"], out[f"{side}_level_note"].fillna("").astype(str)
        assert ((level > 0) | (level.isna() & why.str.startswith("no level: its last"))).all(), (level, why)
    assert list(out["t_transition_s"]) == pytest.approx(list(table["t_start_s"].iloc[1:]))
    for _, row in out.iterrows():  # settled within the group, or said not to be, or no level to settle to
        assert (0 <= row["settle_s"] < 6) if pd.notna(row["settle_s"]) else (
            "not settled" in row["note"] or pd.isna(row["to_level_MBps"]))


@needs_fio
@pytest.mark.fio
@pytest.mark.slow
def test_real_xsr_run_on_a_loop_device_named_twice_writes_the_whole_device(tmp_path, loop_device):
    loop = loop_device(48 << 20)
    res = run(xsr.EXPERIMENT, tmp_path, "file_size=16m", "ioengine=libaio", "seq1_s=3", "rnd_s=3", "seq2_s=3",
              f"device={loop}", f"confirm_device={loop}", target=False)
    assert res.returncode == 0, res.stderr
    table, seconds = read(tmp_path, xsr.EXPERIMENT)
    assert (table["span"] == "full_device").all() and (table["span_bytes"] == 48 << 20).all()
    assert (table["file_size_bytes"] == 48 << 20).all() and (table["status"] == "done").all()
    assert _pts.FILE_SPAN not in table["departure"].iloc[0] and _pts.NOT_PURGED in table["departure"].iloc[0]
    meta = json.loads((tmp_path / "data/raw/ptshost" / xsr.EXPERIMENT / f"{table['point'].iloc[1]}.meta.json").read_text())
    assert f"--filename={loop}" in meta["command"] and "--rw=randwrite" in meta["command"]
    assert "--time_based" in meta["command"] and "--runtime=3000ms" in meta["command"]
    check_seconds(table, seconds)


@pytest.mark.fio
@pytest.mark.parametrize("experiment", [hir.EXPERIMENT, xsr.EXPERIMENT])
def test_the_standard_profile_leaves_the_pts_tests_out_with_a_one_line_reason(tmp_path, experiment):
    res = run(experiment, tmp_path, profile="standard")
    assert res.returncode == 2 and TRACEBACK not in res.stderr
    (line,) = res.stderr.strip().splitlines()
    assert f"leaves {experiment} out (SNIA PTS test: PTS-length runs take hours; make all PROFILE=full" in line
    assert not (tmp_path / "data" / "raw").exists()
    doc = yaml.safe_load((ROOT / "params/standard.yaml").read_text())
    assert set(doc[experiment]) == {"skip"}


# ------------------------------------------------------------------------------------------ notebooks


@needs_fio
@pytest.mark.notebook
@pytest.mark.fio
@pytest.mark.slow
@pytest.mark.parametrize("family", [hir, xsr], ids=["hir", "xsr"])
def test_the_notebook_runs_under_papermill_with_the_quick_profile(tmp_path, family, quick_run):
    """The notebook with the quick profile's parameters (and QUICK_RUN's) on a copy of the data of the module's
    real run of them (quick_run): it finds every point measured and re-analyses them, as under `make all`."""
    measured, res = quick_run(family)
    assert res.returncode == 0, res.stderr
    shutil.copytree(measured / "data", tmp_path / "data")
    quick = yaml.safe_load((ROOT / "params/quick.yaml").read_text())[family.EXPERIMENT]
    sets = dict(s.split("=", 1) for s in QUICK_RUN[family])
    outputs = run_notebook(family.NOTEBOOK, tmp_path / "out.ipynb", {
        **quick, **{k: yaml.safe_load(v) for k, v in sets.items()}, "profile": "quick",
        "data_dir": str(tmp_path / "data"), "target_dir": str(measured / "target"), "host": "ptshost",
        "figures_dir": str(tmp_path / "fig")})
    assert len([o for o in outputs if "image/png" in o.get("data", {})]) >= 1
    assert [p.name for p in (tmp_path / "fig").glob("*.png")] == [f"{family.EXPERIMENT}-time.png"]
    text = "".join(o.get("text", "") for o in outputs)
    assert "nothing is measured" in text  # the module's run, re-read
    assert "ptshost: quick: " in text  # where this run departs from PTS
    table = pd.read_csv(tmp_path / "data" / "processed" / "ptshost" / f"{family.EXPERIMENT}.csv")
    assert (table["status"] == "done").all()
    src = json.loads((ROOT / "notebooks" / f"{family.NOTEBOOK}.ipynb").read_text())
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in src["cells"] if c["cell_type"] == "code")
    assert src["metadata"]["kernelspec"]["name"] == KERNEL


def test_report_text_of_hir_and_xsr_tables():
    from memstor.report import text

    hir = pd.DataFrame({"host": "h", "wait_s": [5.0, 10.0], "idle_s_mean": [5.4, 10.5], "segments": [3, 3],
                        "iops_mean": [30000.0, 36000.0], "iops_ci_low": [29000.0, 35000.0],
                        "iops_ci_high": [31000.0, 37000.0], "baseline_iops": 25000.0, "recovery_ratio": [1.2, 1.44],
                        "recovery_ratio_ci_low": [1.16, 1.4], "recovery_ratio_ci_high": [1.24, 1.48],
                        "departure": "quick: 1 s segments instead of 5 s; test file span", "note": ""})
    shown = text.hir_display(hir)
    assert "device" not in shown and shown["recovery (× baseline)"].tolist() == ["1.20 [1.16, 1.24]", "1.44 [1.40, 1.48]"]
    xsr = pd.DataFrame({"host": "h", "transition": ["SEQ 1024K → RND 8K"], "t_transition_s": [10.0],
                        "from_level_MBps": [900.0], "from_level_MBps_ci_low": [880.0], "from_level_MBps_ci_high": [920.0],
                        "to_level_MBps": [200.0], "to_level_MBps_ci_low": [None], "to_level_MBps_ci_high": [None],
                        "settle_s": [None], "settle_rule": "r", "departure": "quick", "note": ""})
    x = text.xsr_display(xsr)
    assert x["settles in (s)"].tolist() == ["not settled"] and x["after (MB/s)"].tolist() == ["200"]
    assert text.departures(hir, xsr) == ["h: quick: 1 s segments instead of 5 s; test file span", "h: quick"]
    assert text.hir_display(None).empty and text.departures(None) == []



def test_a_series_at_its_level_from_the_first_second_is_said_so_not_settled_in_0_s():
    """Reviewers read 'settles in 0 s' (xeon-defects' quick XSR: 2,122 -> 444 MB/s and 444 -> 1,782 MB/s, both
    settle_s 0): nothing settled; the series was at its new level from the first second."""
    from memstor.report import text

    xsr = pd.DataFrame({"host": "xeon-defects", "transition": ["SEQ 1024KiB → RND 8KiB", "RND 8KiB → SEQ 1024KiB"],
                        "t_transition_s": [10.33, 20.766], "from_level_MBps": [2122.4, 444.5],
                        "from_level_MBps_ci_low": None, "from_level_MBps_ci_high": None,
                        "to_level_MBps": [444.5, 1781.8], "to_level_MBps_ci_low": None, "to_level_MBps_ci_high": None,
                        "settle_s": [0.0, 3.0], "settle_rule": "r", "departure": "quick", "note": ""})
    assert text.xsr_display(xsr)["settles in (s)"].tolist() == ["from the first second", "3.00"]
    said = text.pts_summary(None, xsr, None, None)["result"].iloc[0]
    assert "settles in 0 s" not in said and "at its new level (±10 %) from the first second" in said  # R-1cpu C3
    assert "settles in 3.00 s" in said
    seconds, table = _xsr_seconds()
    settled = pr.xsr_table(seconds, table).assign(settle_s=[0.0, 2.0])
    (ax,) = plots.xsr_figure(seconds, settled).axes
    assert "xsr:settle:0" not in {line.get_gid() for line in ax.get_lines()}   # no settle line on the transition
    assert any(t.get_gid() == "xsr:settled-at-once:0" and "first second" in t.get_text() for t in ax.texts)
    assert "settled after 0 s" not in {t.get_text() for t in ax.texts}

@needs_fio
@pytest.mark.fio
@pytest.mark.slow
def test_real_hir_run_on_a_loop_device_named_twice_writes_the_whole_device(tmp_path, loop_device):
    """Issue 30, acceptance 1: each PTS family under quick on a loop device."""
    loop = loop_device(48 << 20)
    res = run(hir.EXPERIMENT, tmp_path, "file_size=16m", "ioengine=libaio", f"device={loop}",
              f"confirm_device={loop}", target=False)
    assert res.returncode == 0, res.stderr
    table, seconds = read(tmp_path, hir.EXPERIMENT)
    assert (table["status"] == "done").all() and (table["span"] == "full_device").all()
    assert (table["span_bytes"] == 48 << 20).all() and _pts.FILE_SPAN not in table["departure"].iloc[0]
    summary = pr.hir_table(table)
    assert list(summary["wait_s"]) == [0.5, 1.0] and (summary["recovery_ratio"] > 0).all()
    meta = json.loads((tmp_path / "data/raw/ptshost" / hir.EXPERIMENT / f"{table['point'].iloc[-1]}.meta.json").read_text())
    assert f"--filename={loop}" in meta["command"]
    check_seconds(table, seconds)
