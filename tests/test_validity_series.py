"""Validity checks on series, agreement and intervals (memstor.analysis.validity: steady, agreement, intervals,
memory, wsat, batches; issue 38): every check judged on both sides, a case beyond each bound, and the
"not checked" case (a NaN, an empty table, a failed run is ``unchecked``, never pass). The first five tests
moved here from tests/test_validity.py with their assertions."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import memstor.experiments._wsat_tables as wsat_tables
from memstor.analysis import memory_curves, steady_state, summary, wsat
from memstor.analysis.validity import status, validity_table
from memstor.analysis.validity.agreement import agreement_rows, drive_state
from memstor.measure.sweep import Point
from test_validity import GOOD_SERIES, H, mlc_frame, point, points_frame, steady_fio

KEY = {"bs_bytes": 4096, "iodepth": 32, "numjobs": 1, "rwmixread": math.nan, "ioengine": "io_uring", "direct": 1,
       "file_size_bytes": 4 << 30}
FIO_WSAT = Path(__file__).parent / "data" / "fio-wsat"


def cpu_fio() -> pd.DataFrame:
    """Two fio-queue-depth points (one job of 1 thread each) with fio's own CPU use."""
    return pd.DataFrame({"host": H, "experiment": "fio-queue-depth", "point": ["a", "b"], "rep": 1, "jobname": "j",
                         "numjobs": 1, "ok": True, "cpu_usr_pct": [10.0, 5.0], "cpu_sys_pct": [15.0, 7.5],
                         "config": ["fio-queue-depth-32", "qd-w"], "ci_note": "ramp excluded 1"})


def tables(**over) -> dict:
    """The inputs of these checks, each precondition holding; `over` replaces some."""
    t = {"fio": pd.concat([cpu_fio(), steady_fio(GOOD_SERIES)], ignore_index=True), "mlc": mlc_frame(),
         "points": points_frame()}
    t.update(over)
    t["steady"] = steady_state.verdict_table(t["fio"])
    return t


def with_steady(series, **assign) -> pd.DataFrame:
    """validity_table with the steady-state rounds `series` (columns of the rounds replaced by `assign`)."""
    fio = pd.concat([cpu_fio(), steady_fio(series).assign(**assign)], ignore_index=True)
    return validity_table(**tables(fio=fio))


def flagged(v: pd.DataFrame, check: str) -> pd.DataFrame:
    return v[(v["check"] == check) & v["status"].isin(["warn", "fail"])]


def one(v: pd.DataFrame, check: str, subject: str | None = None) -> pd.Series:
    sel = v[v["check"] == check]
    sel = sel if subject is None else sel[sel["subject"].str.contains(subject, regex=False)]
    assert len(sel) == 1, sel[["check", "subject", "status"]].to_string()
    return sel.iloc[0]


# ----------------------------------------------------------------------------- moved from test_validity


def test_steady_state_trace_with_a_ten_fold_jump_fails():
    series = [60_000, 6_000, 6_100, 60_000, 61_000, 60_500, 60_800, 60_200]   # falls 10x, rises 10x, then flat
    v = validity_table(**tables(fio=pd.concat([cpu_fio(), steady_fio(series)], ignore_index=True)))
    r = flagged(v, "steady_trace_jump").iloc[0]
    assert r["status"] == "fail" and r["value"] == pytest.approx(10, rel=0.01) and "round 2" in r["evidence"]
    assert status(v, "steady_vs_fresh", H) == "fail"    # 60,500 steady against 40,000 fresh at 128: 1.51x
    assert "40,000" in flagged(v, "steady_vs_fresh").iloc[0]["evidence"]


def test_short_rounds_and_a_drifting_window_warn():
    series = [50_000, 48_000, 47_000, 46_000, 45_000, 44_000]        # every step down, 8.7 % over the window
    fio = steady_fio(series).assign(round_s=2.0, span_bytes=64 << 30)
    v = validity_table(**tables(fio=pd.concat([cpu_fio(), fio], ignore_index=True)))
    assert flagged(v, "steady_window_trend").iloc[0]["value"] == pytest.approx(8.7, abs=0.1)
    r = flagged(v, "steady_round_length").iloc[0]
    assert r["value"] == 2 and "shorter than 10.0 s" in r["consequence"] and "rewrites less" in r["consequence"]


def test_two_experiments_disagreeing_on_one_configuration():
    v = validity_table(**tables(points=points_frame(bs_iops=81_279.0, qd_iops=29_082.0)))
    r = flagged(v, "config_agreement").iloc[0]
    assert r["status"] == "fail" and r["value"] == pytest.approx(2.795, abs=0.001)
    assert "81,279" in r["evidence"] and "29,082" in r["evidence"] and "fio-block-size" in r["evidence"]
    assert "QD32x1" in r["subject"]
    near = validity_table(**tables(points=points_frame(bs_iops=80_000.0, qd_iops=86_000.0)))   # 7.5 %, CIs miss
    assert status(near, "config_agreement", H) == "warn"


def test_points_without_interval_and_a_value_outside_its_interval():
    pts = points_frame(ci=None)
    fio = pd.concat([cpu_fio().assign(ci_note="ramp excluded 1; too few batches (6 intervals < 10)"),
                     steady_fio(GOOD_SERIES)], ignore_index=True)
    v = validity_table(**tables(points=pts, fio=fio))
    r = flagged(v, "interval_exists")
    assert set(r["subject"]) == {"fio-block-size", "fio-queue-depth"}
    qd = r[r["subject"] == "fio-queue-depth"].iloc[0]
    assert qd["value"] == 2 and "n = 1" in qd["evidence"] and "too few batches" in qd["evidence"]
    pts = points_frame()
    pts.loc[1, ["iops", "iops_ci_low", "iops_ci_high"]] = [20_010.0, 20_541.0, 21_199.0]
    v = validity_table(**tables(points=pts))
    r = flagged(v, "interval_holds_value").iloc[0]
    assert r["status"] == "fail" and r["value"] == 1 and "20,010 outside [20,541, 21,199]" in r["evidence"]


def test_memory_gate_failing_for_one_reason_is_one_machine_row():
    v = validity_table(**tables(mlc=mlc_frame(failing=19, total=20)))
    rows = flagged(v, "memory_gate")
    machine = rows[rows["subject"].str.endswith("(machine)")]
    assert len(machine) == 1 and machine.iloc[0]["value"] == 7.0 and machine.iloc[0]["limit"] == 2.0
    assert "19 of 20" in machine.iloc[0]["evidence"] and "not every point shares it: 1 is within this bound" in machine.iloc[0]["evidence"]
    steal = rows[rows["subject"] == "loaded_latency: steal"].iloc[0]
    assert steal["status"] == "warn" and "2 of 20" in steal["evidence"] and "4.00 %" in steal["evidence"]
    few = validity_table(**tables(mlc=mlc_frame(failing=3, total=20)))
    assert not flagged(few, "memory_gate")["subject"].str.endswith("(machine)").any()
    assert "3 of 20" in flagged(few, "memory_gate").iloc[0]["evidence"]


# ---------------------------------------------------------------------------------------- steady state


def test_every_check_passes_on_good_data_with_both_bounds_filled():
    v = validity_table(**tables())
    mine = v[v["check"].isin(["steady_trace_jump", "steady_window_trend", "steady_round_length", "steady_vs_fresh",
                              "config_agreement", "interval_exists", "interval_holds_value", "memory_gate"])]
    assert set(mine["check"]) == {"steady_trace_jump", "steady_window_trend", "steady_round_length",
                                  "steady_vs_fresh", "config_agreement", "interval_exists", "interval_holds_value",
                                  "memory_gate"}
    assert set(mine["status"]) == {"pass"}, mine[["check", "subject", "evidence"]].to_string()
    assert mine["low"].notna().all() and mine["high"].notna().all() and mine["value"].notna().all()
    assert (mine["low"] <= mine["value"]).all() and (mine["value"] <= mine["high"]).all()


def test_a_twelve_fold_fall_in_small_steps_is_seen_cumulatively():
    """The reviewer's miss: 60,000 falling by 1.43x a round to 4,100 (12x) passed the round-to-round rule."""
    fall = [60_000 / 1.43 ** i for i in range(8)]
    v = with_steady(fall + [fall[-1]] * 5)
    r = one(v, "steady_trace_jump")
    assert r["status"] == "warn" and r["value"] == pytest.approx(1.43 ** 7, rel=0.01) and r["high"] == 3.0
    assert "12.2x below an earlier peak at round 8" in r["evidence"] and "largest fall 1.43x" in r["evidence"]
    assert one(with_steady(fall[:4] + [fall[3]] * 5), "steady_trace_jump")["status"] == "pass"  # 2.9x: a slow fall


def test_a_rise_in_small_steps_fails_and_a_single_cliff_warns():
    rise = [20_000 * 1.4 ** i for i in range(5)]        # 1.4x a round, 3.8x in all: a drive does not speed up
    r = one(with_steady(rise + [rise[-1]] * 5), "steady_trace_jump")
    assert r["status"] == "fail" and r["value"] == pytest.approx(1.4 ** 4, rel=0.01) and r["limit"] == 3.0
    cliff = one(with_steady([60_000, 60_500, 37_000, 37_200, 36_900, 37_100, 37_000]), "steady_trace_jump")
    assert cliff["status"] == "warn" and cliff["value"] == pytest.approx(60_500 / 37_000, rel=0.001)
    assert cliff["low"] == 1.0 and cliff["high"] == 1.5
    jump = one(with_steady([40_000, 40_500, 130_000, 130_100, 129_900, 130_000, 130_200]), "steady_trace_jump")
    assert jump["status"] == "fail" and jump["value"] > 3


def test_one_round_is_not_checked():
    v = with_steady([60_000])
    r = one(v, "steady_trace_jump")
    assert r["status"] == "unchecked" and math.isnan(r["value"]) and r["evidence"].startswith("not checked: 1 ")
    assert "steady_window_trend" not in set(v["check"])  # nothing after the trace


def test_an_oscillating_window_warns_and_a_quiet_one_passes():
    """The reviewer's miss: a window alternating up and down by 11 % of its average passed the 20 % PTS range."""
    see_saw = [60_000, 50_000, 40_000, 44_500, 40_000, 44_500, 40_000]
    r = one(with_steady(see_saw), "steady_window_trend")
    assert r["status"] == "warn" and r["value"] == pytest.approx(100 * 4_500 / 41_800, rel=0.01)
    assert r["high"] == 10.0 and "every step turning" in r["evidence"] and "oscillates" in r["consequence"]
    quiet = one(with_steady([60_000, 50_000, 40_000, 40_600, 40_000, 40_600, 40_000]), "steady_window_trend")
    assert quiet["status"] == "pass" and quiet["value"] < quiet["high"]
    up = one(with_steady([30_000, 38_000, 38_500, 39_000, 39_500, 40_000, 40_500]), "steady_window_trend")
    assert up["status"] == "warn" and up["value"] == pytest.approx(100 * 2_000 / 39_000, rel=0.01)  # rising drift
    few = one(with_steady([40_000, 40_100, 40_050]), "steady_window_trend")
    assert few["status"] == "unchecked" and "no 5-round window" in few["evidence"]


def test_round_length_both_sides_and_not_recorded():
    long = one(with_steady(GOOD_SERIES, round_s=900.0), "steady_round_length")
    assert long["status"] == "warn" and long["limit"] == 600.0 and "longer than 600 s" in long["consequence"]
    assert (long["low"], long["high"]) == (10.0, 600.0)
    ok = one(with_steady(GOOD_SERIES), "steady_round_length")
    assert ok["status"] == "pass" and ok["value"] == 10.0
    none = one(with_steady(GOOD_SERIES, round_s=math.nan), "steady_round_length")
    assert none["status"] == "unchecked" and "round_s" in none["evidence"]


def test_steady_far_below_or_above_fresh():
    """The reviewer's miss: a steady level 100x below fresh passed (only 'above' was judged)."""
    hundred = one(with_steady([s / 100 for s in GOOD_SERIES]), "steady_vs_fresh")
    assert hundred["status"] == "fail" and hundred["value"] == pytest.approx(0.01, rel=0.02)
    assert hundred["limit"] == 0.02 and "far below the fresh drive" in hundred["consequence"]
    low = one(with_steady([s * 0.075 for s in GOOD_SERIES]), "steady_vs_fresh")
    assert low["status"] == "warn" and low["limit"] == 0.1
    high = one(with_steady([s * 2.5 for s in GOOD_SERIES]), "steady_vs_fresh")
    assert high["status"] == "fail" and high["limit"] == 1.25 and "faster than the fresh" in high["consequence"]
    a_bit = one(with_steady([s * 1.15 for s in GOOD_SERIES]), "steady_vs_fresh")
    assert a_bit["status"] == "warn" and "with care" in a_bit["consequence"] and "1.10-1.25x" in a_bit["consequence"]
    # S10-bare 6: 'within what repeated runs differ by' beside 1.20x where the spread measured was 1.16x: no claim
    assert "repeated runs" not in a_bit["consequence"]
    assert (high["low"], high["high"]) == (0.1, 1.1)
    pts = points_frame()
    pts.loc[2, "iops"] = math.nan  # the fresh point failed
    failed = one(validity_table(**tables(points=pts)), "steady_vs_fresh")
    assert failed["status"] == "unchecked" and "failed" in failed["evidence"]


# ------------------------------------------------------------------------------------------- agreement


def test_a_five_fold_disagreement_inside_wide_intervals_fails():
    """The reviewer's miss: 5x apart, both intervals so wide that they overlap: overlap is capped at 1.25x."""
    pts = pd.DataFrame([point("fio-block-size", 100_000.0, 0.9), point("fio-queue-depth", 20_000.0, 0.9)])
    r = one(validity_table(**tables(points=pts)), "config_agreement")
    assert r["status"] == "fail" and r["value"] == pytest.approx(5.0) and "intervals overlap but" in r["evidence"]
    near = pd.DataFrame([point("fio-block-size", 100_000.0, 0.2), point("fio-queue-depth", 82_000.0, 0.2)])
    assert one(validity_table(**tables(points=near)), "config_agreement")["status"] == "pass"   # 1.22x, overlap
    wide = pd.DataFrame([point("fio-block-size", 100_000.0, 0.2), point("fio-queue-depth", 76_000.0, 0.2)])
    assert one(validity_table(**tables(points=wide)), "config_agreement")["status"] == "warn"   # 1.32x


def test_fresh_and_preconditioned_points_are_not_compared_but_two_fresh_ones_are():
    """This VM's quick report set the fresh QD32x4 write point (73,421) beside fio-pts-hir's point after
    preconditioning (40,811) and failed it; a 16-vCPU report had the same QD32x4 configuration 41 % apart in
    two fresh experiments and no row."""
    w = {"rw": "randwrite", "direction": "write", "numjobs": 4}
    pts = pd.DataFrame([point("fio-queue-depth", 73_421.0, None, **w), point("fio-pts-hir", 40_811.0, None, **w),
                        point("fio-steady-state", 41_000.0, None, **w)])
    v = validity_table(**tables(points=pts))
    assert "config_agreement" not in set(v["check"])
    assert drive_state("fio-pts-hir") == "preconditioned (fio-pts-hir)" and drive_state("fio-rw-ratio") == "fresh"
    two = pd.concat([pts, pd.DataFrame([point("fio-rw-ratio", 73_421.0 / 1.41, None, **w)])], ignore_index=True)
    r = one(validity_table(**tables(points=two)), "config_agreement")
    assert r["status"] == "warn" and r["value"] == pytest.approx(1.41) and "QD32x4" in r["subject"]
    assert "fio-pts-hir" not in r["evidence"] and "all fresh" in r["evidence"]
    sizes = pd.DataFrame([point("fio-block-size", 80_000.0, None), point("fio-queue-depth", 40_000.0, None,
                                                                         file_size_bytes=1 << 30)])
    s = one(validity_table(**tables(points=sizes)), "config_agreement")
    assert s["status"] == "warn" and "file sizes differ (1 GiB, 4 GiB)" in s["evidence"]   # 2x: capped at warn


def test_a_failed_point_of_a_shared_configuration_is_not_checked():
    pts = pd.DataFrame([point("fio-block-size", 80_000.0), point("fio-queue-depth", math.nan, None, n=0,
                                                                   n_failed=1)])
    r = one(validity_table(**tables(points=pts)), "config_agreement")
    assert r["status"] == "unchecked" and "no IOPS in fio-queue-depth" in r["evidence"]


# ------------------------------------------------------------------------------------------- intervals


def test_intervals_of_zero_width_or_wider_than_the_value_are_not_quoted():
    pts = points_frame()
    pts.loc[0, ["iops_ci_low", "iops_ci_high"]] = [80_000.0, 80_000.0]       # n = 2 equal values: zero width
    pts.loc[0, "n"] = 2
    pts.loc[1, ["lat_mean_us_ci_low", "lat_mean_us_ci_high"]] = [-200.0, 1_000.0]   # wider than the value (390 us)
    v = validity_table(**tables(points=pts))
    bs, qd = one(v, "interval_exists", "fio-block-size"), one(v, "interval_exists", "fio-queue-depth")
    assert bs["status"] == "warn" and bs["value"] == 1 and "zero width" in bs["evidence"]
    assert qd["status"] == "warn" and qd["value"] == 1 and "wider than the value" in qd["evidence"]
    assert (qd["low"], qd["high"]) == (0.0, 0.0)


def test_values_below_and_above_their_intervals_are_counted_apart():
    pts = points_frame()
    pts.loc[1, ["iops", "iops_ci_low", "iops_ci_high"]] = [20_010.0, 20_541.0, 21_199.0]       # below
    pts.loc[2, ["lat_mean_us", "lat_mean_us_ci_low", "lat_mean_us_ci_high"]] = [900.0, 700.0, 800.0]  # above
    r = one(validity_table(**tables(points=pts)), "interval_holds_value", "fio-queue-depth")
    assert r["status"] == "fail" and r["value"] == 2 and "(1 below it, 1 above)" in r["evidence"]


def test_no_interval_and_no_value_are_not_checked():
    v = validity_table(**tables(points=points_frame(ci=None)))
    r = one(v, "interval_holds_value", "fio-queue-depth")
    assert r["status"] == "unchecked" and "no value has an interval" in r["evidence"]
    pts = points_frame().assign(iops=math.nan)
    e = one(validity_table(**tables(points=pts)), "interval_exists", "fio-block-size")
    assert e["status"] == "unchecked" and "no point has a value" in e["evidence"]


# ---------------------------------------------------------------------------------------------- memory


def test_memory_values_too_steady_to_be_measured_and_values_never_judged():
    mlc = mlc_frame()
    mlc.loc[3, "latency_spread_pct"] = 0.0
    idle = pd.DataFrame([{"host": H, "test": "idle_latency", "gate": "not_evaluated:mlc", "ok": True}])
    hier = pd.DataFrame([{"host": H, "test": "working_set", "gate": None, "ok": True}])
    v = validity_table(**tables(mlc=pd.concat([mlc, idle, hier], ignore_index=True)))
    steady = one(v, "memory_gate", "implausibly steady")
    assert steady["status"] == "warn" and steady["value"] == 0.0 and steady["low"] == 0.001
    assert "1 of 20 passing" in steady["evidence"]
    never = one(v, "memory_gate", "idle_latency")
    assert never["status"] == "unchecked" and "not_evaluated:mlc" in never["evidence"]
    gate = v[v["check"] == "memory_gate"]
    assert not gate["subject"].str.contains("working_set").any()  # a family without the gate: no memory_gate row
    assert one(v, "hierarchy_cpu_share", "working_set")["status"] == "unchecked"  # its own check: no cpu_share
    assert v[(v["check"] == "memory_gate") & (v["subject"] == "loaded_latency")]["status"].tolist() == ["pass"]


# -------------------------------------------------------------------------------------- write saturation


def wsat_row(point: str = "p", **kw) -> dict:
    """One wsat table row: 128 KiB writes that wrote their 4 GB target in 30.5 s, 30 seconds of series."""
    r = {"host": H, "point": point, "workload": "128 KiB sequential write", "stopped_by": "bytes", "status": "done",
         "tgbw_GB": 4.0, "target_bytes": 4_000_000_000, "bytes_written": 4_000_000_000, "seconds": 31,
         "whole_seconds": 30, "runtime_s": 30.5, "series_MBps": 131.0, "run_MBps": 131.1}
    r.update(kw)
    return r


def wsat_v(*rows) -> pd.DataFrame:
    return validity_table(wsat=pd.DataFrame(list(rows)))


def test_a_failed_wsat_run_is_never_the_target_written():
    """The reviewer's miss: a failed run was reported as "the target written"."""
    v = wsat_v(wsat_row("failed", status="failed", stopped_by="failed", tgbw_GB=None, bytes_written=None),
               wsat_row("odd", stopped_by="signal"), wsat_row("empty", tgbw_GB=0.0, bytes_written=0),
               wsat_row("good"))
    got = {r["subject"].split("(")[1].rstrip(")"): r["status"] for _, r in v[v["check"] == "wsat_written"].iterrows()}
    assert got == {"failed": "unchecked", "odd": "unchecked", "empty": "unchecked", "good": "pass"}
    assert "target" not in one(v, "wsat_written", "(failed)")["evidence"].split(":")[-1]
    more = one(wsat_v(wsat_row(bytes_written=4_200_000_000)), "wsat_written")
    assert more["status"] == "warn" and more["value"] == pytest.approx(1.05) and more["limit"] == 1.01
    cut = one(wsat_v(wsat_row(stopped_by="time", bytes_written=2_000_000_000, tgbw_GB=2.0)), "wsat_written")
    assert cut["status"] == "warn" and cut["value"] == 0.5 and "time cap" in cut["evidence"]


def test_a_wsat_series_under_two_whole_seconds_fails():
    short = one(wsat_v(wsat_row(seconds=2, whole_seconds=1, runtime_s=1.7)), "wsat_series")
    assert short["status"] == "fail" and short["value"] == 1 and "no level" in short["consequence"]
    few = one(wsat_v(wsat_row(seconds=9, whole_seconds=8, runtime_s=8.4)), "wsat_series")
    assert few["status"] == "warn" and few["limit"] == 20
    long = one(wsat_v(wsat_row(whole_seconds=40)), "wsat_series")   # more whole seconds than the 30.5 s run
    assert long["status"] == "fail" and long["limit"] == 31 and "not this run's" in long["consequence"]
    none = one(wsat_v(wsat_row(seconds=0, whole_seconds=0)), "wsat_series")
    assert none["status"] == "unchecked" and "no per-second series" in none["evidence"]
    assert one(wsat_v(wsat_row()), "wsat_series")["status"] == "pass"


def test_the_series_matches_the_runs_whole_figure_both_ways():
    """The 16-vCPU report's level, 1,980 MB/s against fio's 3,234, is -38.8 %: fail."""
    rows = [wsat_row("reviewer", series_MBps=1_980.0, run_MBps=3_234.0), wsat_row("high", series_MBps=150.0),
            wsat_row("warn", series_MBps=126.0), wsat_row("good"),
            wsat_row("none", series_MBps=None, whole_seconds=0), wsat_row("nofio", run_MBps=None)]
    v = wsat_v(*rows)
    got = {r["subject"].split("(")[1].rstrip(")"): (r["status"], r["value"])
           for _, r in v[v["check"] == "series_matches_whole"].iterrows()}
    assert got["reviewer"][0] == "fail" and got["reviewer"][1] == pytest.approx(-38.78, abs=0.01)
    assert got["high"][0] == "fail" and got["warn"][0] == "warn" and got["good"][0] == "pass"
    assert got["none"][0] == "unchecked" and got["nofio"][0] == "unchecked"
    r = one(v, "series_matches_whole", "(good)")
    assert (r["low"], r["high"]) == (-2.0, 2.0)
    assert "series_matches_whole" not in set(wsat_v(wsat_row(run_MBps=None))["check"])  # no fio figure at all


@pytest.mark.parametrize("release", ["fio-3.33", "fio-3.42"])
def test_levels_come_from_whole_seconds_of_a_real_fio_run(tmp_path, release):
    """Real fio output (tests/data/fio-wsat/SOURCES.md): 128 KiB writes stopped by bytes after 1,699 ms. The
    series has 2 seconds, 105.0 and a partial 68.0 MB/s; their mean, 86.5, is what the level was (-17.6 % of
    fio's 104.9). From the whole second only: 105.0 (+0.1 %)."""
    files = tmp_path / "p-rep1.files"
    shutil.copytree(FIO_WSAT / release, files)
    job = json.loads((files / "fio.json").read_text())["jobs"][0]["write"]
    sec = wsat_tables.point_seconds(SimpleNamespace(point=Point("p-rep1", {"rw": "write", "bs": "128k", "rep": 1}),
                                                    raw=tmp_path / "p-rep1.json"), H)
    fio_mbps, runtime = job["bw_bytes"] / 1e6, job["runtime"] / 1000
    assert list(sec["t_s"]) == [1, 2] and sec["bw_MBps"].iloc[1] < 0.7 * fio_mbps   # the partial last second
    assert sec["bw_MBps"].mean() == pytest.approx(fio_mbps * 0.824, rel=0.01)       # what the level was
    runs = pd.DataFrame([{"host": H, "table": wsat.EXPERIMENT, "point": "p-rep1", "config": "p", "rw": "write",
                          "direction": "write", "bs_bytes": 131072, "stopped_by": "bytes", "status": "done",
                          "runtime_s": runtime, "bw_MBps": fio_mbps, "tgbw_GB": job["io_bytes"] / 1e9}])
    t = wsat.wsat_table(runs, sec, wsat.wsat_cliffs(runs, sec, None)).iloc[0]
    assert t["seconds"] == 2 and t["whole_seconds"] == 1
    assert t["sustained_MBps"] == t["burst_MBps"] == pytest.approx(fio_mbps, rel=0.01)
    v = validity_table(wsat=pd.DataFrame([t]))
    assert one(v, "series_matches_whole")["status"] == "pass"
    assert one(v, "wsat_series")["status"] == "fail"     # one whole second: no level to tell from noise


def test_whole_seconds_without_a_runtime_leave_the_last_out():
    s = pd.DataFrame({"t_s": [1, 2, 3], "bw_MBps": [100.0, 100.0, 30.0]})
    assert list(wsat.whole_seconds(s)["t_s"]) == [1, 2]
    assert list(wsat.whole_seconds(s, 2.995)["t_s"]) == [1, 2, 3]   # within the 10 ms slack: whole
    assert list(wsat.whole_seconds(s, 2.9)["t_s"]) == [1, 2]
    assert wsat.whole_seconds(s.iloc[0:0], 5.0).empty


# -------------------------------------------------------------------------------------- batch means


def fio_rows(notes, bounds) -> pd.DataFrame:
    """fio tidy rows of one experiment: ci_note and whether the iops bounds have numbers, per row."""
    return pd.DataFrame({"host": H, "experiment": "fio-queue-depth", "ci_method": "batch-means", "ci_note": notes,
                         "iops": 1000.0, "iops_ci_low": [900.0 if b else math.nan for b in bounds],
                         "iops_ci_high": [1100.0 if b else math.nan for b in bounds]})


def test_batch_independence_fails_on_an_interval_from_correlated_batches():
    """The reviewer's miss: an idle-latency interval from batches with lag-1 0.74 (a table processed before the
    rule keeps its numbers)."""
    corr = "correlated (lag-1 iops 0.74 at 10 batches of 1 intervals)"
    r = one(validity_table(fio=fio_rows(["", corr, ""], [True, True, True])), "batch_independence")
    assert r["status"] == "fail" and r["value"] == pytest.approx(200 / 3) and "lag-1 up to 0.74 against 0.2" in r["evidence"]
    assert (r["low"], r["high"]) == (100.0, 100.0)
    ok = one(validity_table(fio=fio_rows(["", corr], [True, False])), "batch_independence")
    assert ok["status"] == "pass" and ok["value"] == 100 and "1 withheld as correlated" in ok["evidence"]
    none = one(validity_table(fio=fio_rows([corr], [False])), "batch_independence")
    assert none["status"] == "unchecked"
    few = fio_rows(["too few batches (7 intervals < 10)"], [False]).assign(ci_method="")
    assert "batch_independence" not in set(validity_table(fio=few)["check"])   # no batches formed: no row
    mem = pd.DataFrame({"host": H, "table": "mlc-loaded-latency", "test": "idle_latency", "ci_method": "batch-means",
                        "ci_note": "correlated (lag-1 latency 0.34 at 10 batches of 1 sub-windows)",
                        "latency_ns": [183.0], "latency_ns_ci_low": [177.9], "latency_ns_ci_high": [188.1],
                        "gate": "passed", "ok": True})
    m = one(validity_table(mlc=mem), "batch_independence")
    assert m["status"] == "fail" and m["section"] == "memory" and m["subject"] == "mlc-loaded-latency"


def test_summaries_drop_intervals_from_correlated_batches_of_older_tables():
    """This VM's idle latency (183.00 ns, interval [177.9, 188.1] from sub-windows with lag-1 0.34) is quoted
    without an interval; an uncorrelated one keeps its own."""
    note = "correlated (lag-1 latency 0.34 at 10 batches of 1 sub-windows)"
    rows = pd.DataFrame({"latency_ns": [183.0], "latency_ns_ci_low": [177.9], "latency_ns_ci_high": [188.1],
                         "bandwidth_MBps": [900.0], "bandwidth_MBps_ci_low": [880.0],
                         "bandwidth_MBps_ci_high": [920.0], "ci_method": "batch-means", "ci_note": note})
    mean, lo, hi, k, method = memory_curves.point_summary(rows, "latency_ns")
    assert mean == 183.0 and math.isnan(lo) and math.isnan(hi) and method == ""
    assert memory_curves.point_summary(rows, "bandwidth_MBps")[1:3] == (880.0, 920.0)
    good = pd.DataFrame({"iops": [1000.0], "iops_ci_low": [900.0], "iops_ci_high": [1100.0],
                         "ci_method": "batch-means", "ci_note": "correlated (lag-1 iops 0.74 at 10 batches of 1 "
                                                                "intervals)"})
    assert all(math.isnan(x) for x in summary._within_run(good, "iops"))
    assert summary._within_run(good.assign(ci_note=""), "iops") == (900.0, 1100.0)
    assert np.isfinite(summary._within_run(good.assign(ci_note=note), "iops")).all()  # another metric's note


def test_the_ends_of_the_mix_sweep_are_compared_with_the_pure_workload():
    """A reviewer of a 1-CPU report found the same 4 KiB QD32x1 random write at 47,150 IOPS (fio-block-size) and
    76,512 (fio-rw-ratio at 0 % reads) with no agreement row: randrw at 0 % reads is randwrite."""
    def pt(exp, rw, mix, iops):
        return {"host": "h", "experiment": exp, "rw": rw, "bs_bytes": 4096, "iodepth": 32, "numjobs": 1,
                "rwmixread": mix, "ioengine": "io_uring", "direct": 1, "direction": "write", "iops": iops, "n": 1,
                "file_size_bytes": 256 << 20}
    rows = agreement_rows(pd.DataFrame([pt("fio-block-size", "randwrite", None, 47_150.0),
                                        pt("fio-rw-ratio", "randrw", 0.0, 76_512.0)]))
    assert len(rows) == 1 and rows[0]["status"] == "fail" and rows[0]["value"] == pytest.approx(76_512 / 47_150)
    same = agreement_rows(pd.DataFrame([pt("fio-block-size", "randwrite", None, 47_150.0),
                                        pt("fio-rw-ratio", "randrw", 0.0, 48_000.0)]))
    assert [r["status"] for r in same] == ["pass"]
    mixed = agreement_rows(pd.DataFrame([pt("fio-block-size", "randwrite", None, 47_150.0),
                                         pt("fio-rw-ratio", "randrw", 50.0, 76_512.0)]))
    assert mixed == []                                               # a 50 % mix is another workload
