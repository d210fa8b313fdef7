"""The open-loop, load-generator, fit, headline and physical-invariant checks (memstor.analysis.validity:
openloop, fits, headline, invariants), each on both sides of its bounds and with no value to judge (issue 38):
a check passes only on a number inside its band, fails or warns beyond each bound, and is ``unchecked`` —
never pass — on NaN, empty or a failed fit."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from memstor.analysis.curves import analyse
from memstor.analysis.validity import holds, status, validity_table
from memstor.analysis.validity.fits import holdout_rows
from report_helpers import synthesise_copy
from test_validity import GOOD_SERIES, H, cpu_fio, flagged, knee_frame, load_frame, point, steady_fio, tables

DEFECTS = Path(__file__).parent / "data" / "report-defects"


def one(v: pd.DataFrame, check: str, subject: str | None = None) -> pd.Series:
    """The one row of `check` (and `subject`)."""
    sel = v[(v["check"] == check) & ((v["subject"] == subject) if subject is not None else True)]
    assert len(sel) == 1, sel[["check", "subject", "status"]].to_string()
    return sel.iloc[0]


def rate_load(pct, util=(10, 30, 50, 70, 80, 90), **over) -> pd.DataFrame:
    """An open-loop curve whose points achieved pct % of their offered rate (open_loop flag true)."""
    f = load_frame((True,) * len(util))
    f["utilisation_pct"] = list(util)
    f["offered_iops"] = [u * 1000.0 for u in util]
    f["achieved_pct"] = list(pct)
    f["achieved_iops"] = f["offered_iops"] * f["achieved_pct"] / 100.0
    for k, v in over.items():
        f[k] = v
    return f


# --------------------------------------------------------------------------------------------- open_loop_held


def test_gated_open_loop_fails_with_the_share():
    v = validity_table(**tables(load=load_frame((True, False, False, False, False, False))))
    r = flagged(v, "open_loop_held").iloc[0]
    assert r["status"] == "fail" and r["section"] == "open_loop"
    assert r["value"] == pytest.approx(100 / 6) and "1 of 6" in r["evidence"] and "5 points" in r["evidence"]
    assert "SLO" in r["consequence"] and not holds(v, "open_loop_held", H, "randread")
    one_gated = validity_table(**tables(load=load_frame((True,) * 5 + (False,))))
    assert status(one_gated, "open_loop_held", H) == "warn"
    assert (one(one_gated, "open_loop_held")[["low", "high"]] == [100.0, 100.0]).all()


def test_a_flag_that_says_open_beside_an_overshoot_is_not_believed():
    v = validity_table(**tables(load=rate_load([175, 164, 150, 140, 129, 130])))
    r = one(v, "open_loop_held")
    assert r["status"] == "fail" and r["value"] == 0 and "flagged open but achieved 129-175 %" in r["evidence"]


def test_every_open_loop_flag_unknown_is_unchecked_not_pass():
    v = validity_table(**tables(load=load_frame((None,) * 6)))
    r = one(v, "open_loop_held")
    assert r["status"] == "unchecked" and math.isnan(r["value"]) and r["evidence"].startswith("not checked")
    assert status(v, "open_loop_held", H) == "unchecked"


# --------------------------------------------------------------------------------------------- open_loop_rate


def test_rate_within_five_percent_both_ways_passes_with_its_band():
    r = one(validity_table(**tables(load=rate_load([97, 99, 100, 101, 103, 104.9]))), "open_loop_rate")
    assert r["status"] == "pass" and r["value"] == pytest.approx(104.9) and (r["low"], r["high"]) == (95.0, 105.0)


def test_fio_delivering_more_than_offered_fails():
    """The reviewer's 16-vCPU read: fio delivered 129-175 % of every offered rate, and the check passed."""
    v = validity_table(**tables(load=rate_load([175, 164, 150, 140, 129, 131])))
    r = one(v, "open_loop_rate")
    assert r["status"] == "fail" and r["value"] == pytest.approx(175) and r["limit"] == 105.0
    assert "6 above 105 %" in r["evidence"] and "did not offer" in r["consequence"]
    assert not holds(v, "open_loop_rate", H, "randread")
    just = one(validity_table(**tables(load=rate_load([100, 100, 100, 100, 100, 106]))), "open_loop_rate")
    assert just["status"] == "fail" and just["value"] == pytest.approx(106)


def test_missing_the_rate_far_below_the_ceiling_fails_at_the_ceiling_warns():
    light = one(validity_table(**tables(load=rate_load([100, 80, 100, 100, 100, 100]))), "open_loop_rate")
    assert light["status"] == "fail" and light["value"] == pytest.approx(80) and light["limit"] == 95.0
    heavy = one(validity_table(**tables(load=rate_load([100, 100, 100, 100, 100, 90]))), "open_loop_rate")
    assert heavy["status"] == "warn" and heavy["value"] == pytest.approx(90) and "backlog" in heavy["consequence"]


def test_an_all_nan_achieved_column_is_unchecked_not_pass():
    nan = rate_load([math.nan] * 6, achieved_iops=math.nan)
    r = one(validity_table(**tables(load=nan)), "open_loop_rate")
    assert r["status"] == "unchecked" and math.isnan(r["value"]) and "none of the 6" in r["evidence"]
    # achieved_pct empty but achieved and offered IOPS recorded: computed from them
    own = rate_load([100.0] * 6).assign(achieved_pct=math.nan)
    assert one(validity_table(**tables(load=own)), "open_loop_rate")["status"] == "pass"
    some = rate_load([100, 100, math.nan, 100, 100, 100]).assign(achieved_iops=lambda d: d["achieved_iops"])
    some.loc[2, "achieved_iops"] = math.nan
    r = one(validity_table(**tables(load=some)), "open_loop_rate")
    assert r["status"] == "warn" and "1 not recorded" in r["evidence"]


# --------------------------------------------------------------------------------------------- load_generator_cpu


def test_cpu_bound_generator_and_unrecorded_cpu():
    v = validity_table(**tables(fio=pd.concat([cpu_fio(usr=60, sys=35), steady_fio(GOOD_SERIES)])))
    r = flagged(v, "load_generator_cpu").iloc[0]
    assert r["status"] == "fail" and r["subject"] == "fio-queue-depth" and "95.0 % of one CPU" in r["evidence"]
    v = validity_table(**tables(fio=pd.concat([cpu_fio(with_cpu=False), steady_fio(GOOD_SERIES)])))
    r = one(v, "load_generator_cpu", "fio-queue-depth")     # not recorded: unchecked (was warn), never pass
    assert r["status"] == "unchecked" and math.isnan(r["value"]) and "not recorded" in r["evidence"]


def _jobs(busy, numjobs=1, iops=10_000.0) -> pd.DataFrame:
    """One fio-queue-depth point whose jobs (one row each, numjobs threads) used busy % of one CPU each."""
    return pd.DataFrame({"host": H, "experiment": "fio-queue-depth", "point": "p", "rep": 1,
                         "jobname": [f"j{i}" for i in range(len(busy))], "numjobs": numjobs, "ok": True,
                         "cpu_usr_pct": [b / 2 for b in busy], "cpu_sys_pct": [b / 2 for b in busy], "iops": iops})


def _cpu(fio: pd.DataFrame, ncpu: int) -> pd.Series:
    return one(validity_table(fio=fio, sysinfo={H: {"shape": {"usable_cpus": ncpu}}}), "load_generator_cpu")


def test_one_saturated_thread_on_many_cores_shows_the_thread_side():
    """The 16-vCPU report said fail with 29.6 % against a 70 % limit; the binding signal was a thread at 94.7 %."""
    r = _cpu(_jobs([94.7] * 5), 16)
    assert r["status"] == "fail" and r["value"] == pytest.approx(94.7) and r["limit"] == 90.0
    assert r["high"] == 90.0 and "thread" in r["unit"] and "29.6 % of the 16 usable CPUs" in r["evidence"]


def test_the_cores_side_warns_and_fails_with_its_own_bounds():
    warn = _cpu(_jobs([150.0], numjobs=2), 2)           # 75 % of 2 CPUs, each thread 75 %
    assert warn["status"] == "warn" and warn["value"] == pytest.approx(75) and warn["limit"] == 70.0
    assert warn["unit"] == "% of usable CPUs" and (warn["low"], warn["high"]) == (0.0, 70.0)
    fail = _cpu(_jobs([190.0], numjobs=2), 2)           # 95 % of 2 CPUs: both sides fail, the cores' further out
    assert fail["status"] == "fail" and fail["limit"] == 90.0 and fail["unit"] == "% of usable CPUs"
    ok = _cpu(_jobs([20.0]), 4)
    assert ok["status"] == "pass" and ok["value"] == pytest.approx(5.0) and ok["unit"] == "% of usable CPUs"


def test_zero_cpu_at_a_hundred_thousand_iops_is_no_measurement():
    """fio spends CPU on every I/O: usr + sys of 0 at 100,000 IOPS is not fio's CPU use (low side)."""
    r = _cpu(_jobs([0.0], iops=100_000.0), 4)
    assert r["status"] == "unchecked" and "not a real measurement" in r["evidence"] and "50.0 ns" in r["evidence"]
    both = pd.concat([_jobs([0.0], iops=100_000.0), _jobs([20.0]).assign(point="q")], ignore_index=True)
    r = _cpu(both, 4)
    assert r["status"] == "unchecked" and "1 of 2 points" in r["evidence"]      # the rest pass: not shown for all
    bound = pd.concat([_jobs([0.0], iops=100_000.0), _jobs([95.0]).assign(point="q")], ignore_index=True)
    assert _cpu(bound, 4)["status"] == "fail"                                     # the rest already fail


# --------------------------------------------------------------------------------------------- knee fits


def test_knee_fit_below_a_measured_point_fails():
    v = validity_table(**tables(knees=knee_frame(x_max_fit=90_000.0, r_min_fit=60.0, ci=(0.8, 137.0))))
    ceiling = flagged(v, "knee_ceiling").iloc[0]
    assert ceiling["status"] == "fail" and ceiling["value"] == 98_000 and ceiling["limit"] == pytest.approx(91_960)
    assert "90,000" in ceiling["evidence"] and "98,000" in ceiling["evidence"]
    # twelfth read S15-loop 6: pages 2 and 7 name the fitted ceiling as what the data contradict: not 'not stated'
    assert "names the fitted one only as what the data contradict" in ceiling["consequence"]
    assert one(validity_table(**tables()), "knee_ceiling")["consequence"] == ""  # the other side: it passes
    rmin = flagged(v, "knee_min_latency").iloc[0]
    assert rmin["status"] == "fail" and "45.0" in rmin["evidence"]
    located = flagged(v, "knee_located").iloc[0]
    assert located["status"] == "fail" and located["value"] > 90 and "[0.8, 137]" in located["evidence"]


def test_a_fitted_ceiling_ten_times_every_measurement_is_not_located():
    r = one(validity_table(**tables(knees=knee_frame(x_max_fit=980_000.0))), "knee_ceiling")
    assert r["status"] == "fail" and r["value"] == 98_000
    assert r["limit"] == pytest.approx((980_000 - 1.96 * 1_000) / 1.5) and "extrapolated" in r["evidence"]
    ok = one(validity_table(**tables()), "knee_ceiling")
    assert ok["status"] == "pass" and ok["low"] < 98_000 < ok["high"]


def test_a_zero_negative_or_far_too_small_minimum_latency_fails():
    neg = one(validity_table(**tables(knees=knee_frame(r_min_fit=-50.0))), "knee_min_latency")
    assert neg["status"] == "fail" and neg["value"] == -50 and neg["limit"] == 0 and "zero or less" in neg["evidence"]
    small = one(validity_table(**tables(knees=knee_frame(r_min_fit=10.0))), "knee_min_latency")
    assert small["status"] == "fail" and small["limit"] == pytest.approx(0.5 * 45 - 1.96 * 2)
    ok = one(validity_table(**tables()), "knee_min_latency")
    assert ok["status"] == "pass" and ok["value"] == 40 and ok["high"] == pytest.approx(45 + 1.96 * 2)


def test_a_knee_outside_its_sweep_fails_a_zero_wide_interval_warns():
    far = knee_frame(ci=(4_000.0, 6_000.0)).assign(N_star_fit=5_000.0, N_range="1-64")
    r = one(validity_table(**tables(knees=far)), "knee_located")
    assert r["status"] == "fail" and r["value"] == pytest.approx(100 * math.log(5_000) / math.log(64))
    assert r["limit"] == 100 and "outside the sweep" in r["evidence"]
    below = one(validity_table(**tables(knees=knee_frame(ci=(0.3, 0.6)).assign(N_star_fit=0.45))), "knee_located")
    assert below["status"] == "fail" and below["value"] < 0 and below["limit"] == 0
    flat = one(validity_table(**tables(knees=knee_frame(ci=(4.0, 4.0)))), "knee_located")
    assert flat["status"] == "warn" and flat["value"] == 0 and "zero-width" in flat["evidence"]
    unbounded = one(validity_table(**tables(knees=knee_frame(ci=(math.nan, math.inf)))), "knee_located")
    assert unbounded["status"] == "fail" and "no finite 95 % interval" in unbounded["evidence"]


def test_a_failed_knee_fit_leaves_its_checks_unchecked():
    failed = knee_frame().assign(X_max_fit_iops=math.nan, note="fewer than 3 points")
    v = validity_table(**tables(knees=failed))
    for check in ("knee_ceiling", "knee_min_latency", "knee_located"):
        r = one(v, check)
        assert r["status"] == "unchecked" and "fewer than 3 points" in r["evidence"]
    no_range = one(validity_table(**tables(knees=knee_frame().assign(N_range=None))), "knee_located")
    assert no_range["status"] == "unchecked"
    no_meas = one(validity_table(**tables(knees=knee_frame().assign(R_min_meas_us=math.nan))), "knee_min_latency")
    assert no_meas["status"] == "unchecked"


# --------------------------------------------------------------------------------------------- curve_holdout


def test_held_out_error_is_a_number_with_fewer_than_five_points_below_80_percent():
    x = np.linspace(5_000, 70_000, 6)      # 4 points below 80 % of the top: the curves module gives no number
    r = 50.0 + 20.0 * (x / 100_000) / (1 - x / 100_000)
    cf = analyse(np.arange(1, 7), x, r)
    err, pts, how = cf.holdout_error_pct, cf.holdout_points, cf.holdout_note
    assert err < 5 and pts == 1 and "5 lightest" in how
    good = validity_table(**tables())
    assert good[good["check"] == "curve_holdout"].iloc[0]["value"] < 1


def _holdout(err, pts=3) -> pd.Series:
    cf = SimpleNamespace(model=SimpleNamespace(fitted=True), holdout_error_pct=err, holdout_points=pts,
                         holdout_note="held out above 80 %")
    rows = holdout_rows({(H, "closed", "randread"): cf}, "curves", lambda k: (k[0], f"{k[1]} {k[2]}"))
    return pd.Series(rows[0])


def test_held_out_error_both_sides_and_no_number():
    assert _holdout(3.0)["status"] == "pass" and (_holdout(3.0)["low"], _holdout(3.0)["high"]) == (0.0, 25.0)
    big = _holdout(40.0)
    assert big["status"] == "warn" and big["limit"] == 25.0
    assert _holdout(0.0)["status"] == "pass"              # an exact model predicts exactly: no low suspicion bound
    for bad in (math.nan, -1.0):
        r = _holdout(bad)
        assert r["status"] == "unchecked" and r["value"] is None
    assert _holdout(3.0, pts=0)["status"] == "unchecked"


# --------------------------------------------------------------------------------------------- headline_definition


def test_headline_quantities_with_two_definitions_warn():
    head = pd.DataFrame({"host": H, "key": ["best_randread_iops", "idle_latency_ns", "peak_bw_MBps"],
                         "value": [98_000.0, 120.0, 20_000.0]})
    mem = pd.DataFrame({"host": [H], "b_max_MBps": [30_000.0]})
    curves = pd.DataFrame({"host": [H, H], "latency_ns": [100.0, 300.0]})
    v = validity_table(**tables(headline=head, mem=mem, curves=curves))
    rows = v[v["check"] == "headline_definition"].set_index("subject")
    assert rows.loc["best 4K randread IOPS", "status"] == "pass"
    assert rows.loc["peak memory bandwidth", "status"] == "warn" and "30,000" in rows.loc["peak memory bandwidth",
                                                                                         "evidence"]
    assert rows.loc["idle memory latency", "status"] == "warn"


def _headline(best=98_000.0, idle=120.0, peak=20_000.0, **over) -> pd.DataFrame:
    head = pd.DataFrame({"host": H, "key": ["best_randread_iops", "idle_latency_ns", "peak_bw_MBps"],
                         "value": [best, idle, peak]})
    v = validity_table(**tables(headline=head, **over))
    return v[v["check"] == "headline_definition"].set_index("subject")


def test_best_iops_is_not_compared_with_itself_but_with_independent_figures():
    """The open loop's x_max_iops IS the closed-loop X_max: never a second figure. Its achieved IOPS is."""
    load = rate_load([100.0] * 6).assign(x_max_iops=500_000.0)
    r = _headline(load=load).loc["best 4K randread IOPS"]
    assert r["status"] == "pass" and "500,000" not in r["evidence"] and "open loop's highest achieved" in r["evidence"]
    above = rate_load([100.0] * 6, util=(10, 30, 50, 70, 90, 160))            # 160,000 delivered, as offered
    r = _headline(load=above).loc["best 4K randread IOPS"]
    assert r["status"] == "fail" and r["value"] == pytest.approx(160 / 98) and r["limit"] == 1.5
    overshoot = rate_load([100.0] * 5 + [170.0])                                 # 153,000, but 170 % of offered
    r = _headline(load=overshoot).loc["best 4K randread IOPS"]
    assert r["status"] == "pass" and "153,000" not in r["evidence"]            # no measurement of its rate


def test_a_sweep_maximum_well_below_the_headline_is_a_second_definition():
    low = _headline(best=120_000.0).loc["best 4K randread IOPS"]           # the sweep's highest 98,000: 0.82x
    assert low["status"] == "warn" and low["value"] == pytest.approx(98 / 120) and low["low"] == pytest.approx(1 / 1.1)
    far = _headline(best=200_000.0).loc["best 4K randread IOPS"]
    assert far["status"] == "fail" and far["limit"] == pytest.approx(1 / 1.5)


def test_memory_headlines_are_judged_on_the_side_a_figure_may_not_lie():
    mem = pd.DataFrame({"host": [H], "b_max_MBps": [6_000.0]})                 # a curve far below the peak: by design
    curves = pd.DataFrame({"host": [H, H], "latency_ns": [360.0, 900.0]})     # lightest loaded 3x idle: by design
    rows = _headline(mem=mem, curves=curves)
    assert rows.loc["peak memory bandwidth", "status"] == "pass" and rows.loc["idle memory latency", "status"] == "pass"
    mem, curves = pd.DataFrame({"host": [H], "b_max_MBps": [40_000.0]}), pd.DataFrame({"host": [H], "latency_ns": [60.0]})
    rows = _headline(mem=mem, curves=curves)
    assert rows.loc["peak memory bandwidth", "status"] == "fail" and rows.loc["idle memory latency", "status"] == "fail"
    r = _headline(best=math.nan).loc["best 4K randread IOPS"]
    assert r["status"] == "unchecked"


# --------------------------------------------------------------------------------------------- littles_law


def _little(*pts) -> pd.DataFrame:
    v = validity_table(points=pd.DataFrame(list(pts)))
    return v[v["check"] == "littles_law"].set_index("subject")


def test_more_in_flight_than_could_be_fails():
    """The 16-vCPU open loop: 168,510 IOPS x 5,609 µs = 945 I/Os in flight where at most 64 x 9 = 576 could be."""
    p = point("fio-load-latency", 168_510.0, iodepth=64, numjobs=9, lat_mean_us=5_609.0, config="u90")
    r = _little(p).loc["fio-load-latency randread"]
    assert r["status"] == "fail" and r["value"] == pytest.approx(100 * 168_510 * 5_609e-6 / 576, rel=1e-6)
    assert r["limit"] == 110 and "945 in flight where at most 576" in r["evidence"] and r["section"] == "open_loop"
    warn = point("fio-queue-depth", 10_000.0, iodepth=32, lat_mean_us=3_424.0)          # 107 %
    assert _little(warn).loc["fio-queue-depth randread", "status"] == "warn"


def test_ioarrive_points_are_judged_by_their_service_time_both_ways():
    """ioarrive's lat_mean_us is the response from the intended arrival: I/Os still waiting in the generator are
    not in any slot of its cap, so X x service (submission to completion) is what the cap bounds."""
    p = point("mixed-load-map", 100_000.0, iodepth=4096, numjobs=1, lat_mean_us=50_000.0, config="c", rw="randrw")
    raw = pd.DataFrame([{"host": H, "experiment": "mixed-load-map", "config": "c", "direction": "read",
                         "generator": "ioarrive", "iops": 100_000.0, "service_mean_us": svc}
                        for svc in (2_000.0,)])
    # by the response: 5,000 in flight where 4,096 could be; by the service time: 200 (5 %)
    assert _little(p).loc["mixed-load-map randrw", "status"] == "fail"
    v = validity_table(points=pd.DataFrame([p]), fio=raw)
    r = v[v["check"] == "littles_law"].iloc[0]
    assert r["status"] == "pass" and r["value"] == pytest.approx(100 * 100_000 * 2_000e-6 / 4096)
    assert "(mean service time)" in r["evidence"]
    too_slow = raw.assign(service_mean_us=50_000.0)  # 5,000 held in 4,096 slots: impossible, fails
    v = validity_table(points=pd.DataFrame([p]), fio=too_slow)
    assert v[v["check"] == "littles_law"].iloc[0]["status"] == "fail"


def test_a_closed_loop_far_below_its_depth_warns_an_open_loop_does_not():
    closed = point("fio-queue-depth", 10_000.0, iodepth=32, lat_mean_us=960.0)         # 9.6 of 32 = 30 %
    r = _little(closed).loc["fio-queue-depth randread"]
    assert r["status"] == "warn" and r["value"] == pytest.approx(30) and r["limit"] == 50 and r["low"] == 50
    assert "not kept full" in r["consequence"]
    open_ = point("fio-load-latency", 10_000.0, iodepth=32, lat_mean_us=960.0)
    r = _little(open_).loc["fio-load-latency randread"]
    assert r["status"] == "pass" and math.isnan(r["low"])
    full = _little(point("fio-queue-depth", 10_000.0)).loc["fio-queue-depth randread"]
    assert full["status"] == "pass" and full["value"] == pytest.approx(100)


def test_a_synchronous_engine_holds_one_per_job_in_a_closed_loop():
    ok = point("fio-queue-depth", 10_000.0, iodepth=32, numjobs=4, ioengine="psync", lat_mean_us=400.0)  # 4 of 4
    assert _little(ok).loc["fio-queue-depth randread", "status"] == "pass"
    bad = point("fio-queue-depth", 10_000.0, iodepth=32, numjobs=4, ioengine="psync", lat_mean_us=800.0)  # 8 of 4
    r = _little(bad).loc["fio-queue-depth randread"]
    assert r["status"] == "fail" and "psync: one I/O per job" in r["evidence"]


def test_a_mixed_job_is_judged_on_its_total():
    """One queue holds reads and writes: X·R of the total (the sum over directions) against iodepth x jobs; the
    write direction alone (10 % of the depth) is not a half-empty queue."""
    kw = {"rw": "randrw", "iodepth": 32, "config": "mix"}
    read = point("fio-queue-depth", 9_000.0, direction="read", lat_mean_us=3_200.0, **kw)
    write = point("fio-queue-depth", 1_000.0, direction="write", lat_mean_us=3_200.0, **kw)
    total = point("fio-queue-depth", 10_000.0, direction="total", lat_mean_us=3_200.0, **kw)
    for pts in ((read, write, total), (read, write)):
        r = _little(*pts).loc["fio-queue-depth randrw"]
        assert r["status"] == "pass" and r["value"] == pytest.approx(100)


def test_points_without_latency_leave_littles_law_unchecked():
    r = _little(point("fio-queue-depth", 10_000.0, lat_mean_us=math.nan)).loc["fio-queue-depth randread"]
    assert r["status"] == "unchecked" and "none of the 1 points" in r["evidence"]
    some = _little(point("fio-queue-depth", 10_000.0),
                   point("fio-queue-depth", 10_000.0, iodepth=8, lat_mean_us=math.nan, config="b"))
    assert some.loc["fio-queue-depth randread", "status"] == "unchecked"


# --------------------------------------------------------------------------------------------- below_closed_max


def _below(load: pd.DataFrame, **kw) -> pd.Series:
    return one(validity_table(**tables(load=load, **kw)), "below_closed_max")


def test_an_open_loop_above_the_closed_loop_maximum_fails():
    """Knee X_max_meas 98,000 (no interval): 110 % of it fails, 103 % warns, 98 % passes."""
    r = _below(rate_load([100.0] * 6, util=(10, 30, 50, 70, 90, 107.8)))
    assert r["status"] == "fail" and r["value"] == pytest.approx(110) and r["limit"] == pytest.approx(105)
    assert "98,000" in r["evidence"] and "not the device's" in r["consequence"]
    assert _below(rate_load([100.0] * 6, util=(10, 30, 50, 70, 90, 100.94)))["status"] == "warn"
    ok = _below(rate_load([100.0] * 6, util=(10, 30, 50, 70, 90, 96)))
    assert ok["status"] == "pass" and ok["low"] == 0 and ok["high"] == 100


def test_the_closed_loop_maximums_interval_widens_the_band():
    pts = pd.DataFrame([point("fio-queue-depth", 98_000.0, ci=0.08)])           # up to 105,840
    r = _below(rate_load([100.0] * 6, util=(10, 30, 50, 70, 90, 107.8)), points=pts)
    assert r["status"] == "warn" and r["high"] == pytest.approx(108) and "interval up to 105,840" in r["evidence"]


def test_no_closed_loop_maximum_or_no_achieved_rate_is_unchecked():
    load = rate_load([100.0] * 6).assign(x_max_source="profile x_max_iops", x_max_iops=50_000.0)
    assert _below(load, knees=None)["status"] == "unchecked"                    # a number from the profile: not measured
    measured = load.assign(x_max_source="probe at QD32x4")
    assert _below(measured, knees=None)["status"] == "fail"                    # 90,000 against a probe's 50,000
    assert _below(rate_load([100.0] * 6, achieved_iops=math.nan))["status"] == "unchecked"


# --------------------------------------------------------------------------------------------- physical_ceiling


def _ceil(storage=2_000.0, dram=25_600.0, reason="") -> pd.DataFrame:
    return pd.DataFrame({"host": H, "what": ["DRAM peak", "storage interface"], "ceiling": [dram, storage],
                         "unit": "MB/s", "how": "", "reason": reason})


def test_throughput_above_the_physical_ceiling_fails():
    pts = pd.DataFrame([point("fio-block-size", 20_000.0, bs_bytes=131072, bw_MBps=2_200.0)])
    r = one(validity_table(points=pts, ceilings=_ceil()), "physical_ceiling", "storage interface")
    assert r["status"] == "fail" and r["value"] == pytest.approx(110) and r["limit"] == 105
    assert "not the drive" in r["consequence"]
    near = pd.DataFrame([point("fio-block-size", 20_000.0, bw_MBps=2_040.0)])
    assert one(validity_table(points=near, ceilings=_ceil()), "physical_ceiling")["status"] == "warn"
    ok = one(validity_table(points=pd.DataFrame([point("fio-block-size", 80_000.0)]), ceilings=_ceil()),
             "physical_ceiling")
    assert ok["status"] == "pass" and (ok["low"], ok["high"]) == (0.0, 100.0)
    mem = pd.DataFrame({"host": [H], "b_max_MBps": [30_000.0]})
    r = one(validity_table(mem=mem, ceilings=_ceil()), "physical_ceiling", "DRAM peak")
    assert r["status"] == "fail" and r["section"] == "memory"


def test_no_ceiling_known_is_unchecked_not_pass():
    pts = pd.DataFrame([point("fio-block-size", 80_000.0)])
    r = one(validity_table(points=pts, ceilings=_ceil(storage=math.nan, reason="unknown (virtio disk)")),
            "physical_ceiling", "storage interface")
    assert r["status"] == "unchecked" and "virtio disk" in r["evidence"]
    assert validity_table(points=pts)["check"].ne("physical_ceiling").all()     # no ceiling table: no row


# --------------------------------------------------------------------------------------------- the real defect data


@pytest.fixture(scope="module")
def defects(tmp_path_factory):
    return synthesise_copy(tmp_path_factory, DEFECTS, "defects").validity


def test_the_real_offload_overshoot_fails_every_open_loop_invariant(defects):
    """fio-3.42's offload mode on this 2-vCPU VM delivered 108-175 % of every offered rate (SOURCES.md)."""
    v = defects
    for rw in ("randread", "randwrite"):
        assert one(v, "open_loop_rate", rw)["status"] == "fail"
        assert one(v, "below_closed_max", rw)["status"] == "fail"
    r = one(v, "littles_law", "fio-load-latency randread")
    assert r["status"] == "fail" and "583 in flight where at most 448" in r["evidence"]
    assert one(v, "littles_law", "fio-queue-depth randread")["status"] == "pass"
    assert one(v, "physical_ceiling", "storage interface")["status"] == "unchecked"          # a virtio disk
    assert one(v, "headline_definition", "best 4K randwrite IOPS")["status"] == "pass"       # no overshoot used


def test_points_not_open_are_explained_in_their_generators_terms():
    """ioarrive never waits for a completion: its points that were not open say which of its checks failed;
    fio's say its arrivals were gated (both ways)."""
    io = load_frame((True, True, True, True, False, False)).assign(
        generator="ioarrive", generator_checks=["ok"] * 4 + ["lag", "lag;exp_gaps/submitted"])
    r = validity_table(load=io).set_index("check").loc["open_loop_held"]
    assert "ioarrive's own checks failed (lag at 2, exp_gaps at 1): 2 points" in r["evidence"]
    assert "waited for completions" not in r["evidence"] and "sleeps woke" not in r["evidence"]  # not recorded
    # how late the submitter's sleeps woke, from the points whose lag check failed only (both ways)
    r = validity_table(load=io.assign(wake_delay_p99_us=[5.0] * 4 + [180.0, 2400.0])).set_index("check")
    said = r.loc["open_loop_held", "evidence"]  # S15-loop 2: which points 'the late points' are is said
    assert "; at the 2 late points among them (" in said and ": the submitter's sleeps woke 180-2,400 µs late (p99)" \
        in said, said
    io_nolag = io.assign(generator_checks=["ok"] * 4 + ["exp_gaps/submitted"] * 2, wake_delay_p99_us=[900.0] * 6)
    assert "sleeps woke" not in validity_table(load=io_nolag).set_index("check").loc["open_loop_held", "evidence"]
    # the machine's own pauses before the late points (ioarrive's pause probe), from those points only
    paused = io.assign(pause_per_cpu_s=[1.0] * 4 + [12.0, 30.5], pause_max_us=[100.0] * 4 + [6_100.0, 800.0])
    r = validity_table(load=paused).set_index("check").loc["open_loop_held"]
    assert "the machine itself paused 12.0-30.5 times per CPU-second (gaps >= 50 µs), the longest 6,100 µs" in \
        r["evidence"]
    assert "paused" not in validity_table(load=paused.assign(
        generator_checks=["ok"] * 4 + ["exp_gaps/submitted"] * 2)).set_index("check").loc["open_loop_held", "evidence"]
    # the time their submit calls blocked (the disk's request queue full), from the late points only (both ways)
    blocked = io.assign(runtime_s=3.0, submit_blocked_s=[0.0] * 4 + [0.036, 0.171],
                        peak_outstanding=[40.0] * 4 + [403.0, 826.0], queue_requests=256.0)
    r = validity_table(load=blocked).set_index("check").loc["open_loop_held"]
    assert ("their submit calls blocked 1.20-5.70 % of the run (calls >= 100 µs), up to 826 I/Os in flight against "
            "the disk's request queue of 256") in r["evidence"]
    assert "blocked" not in validity_table(load=blocked.assign(
        generator_checks=["ok"] * 4 + ["exp_gaps/submitted"] * 2)).set_index("check").loc["open_loop_held", "evidence"]
    assert "blocked" not in validity_table(load=io.assign(runtime_s=3.0)).set_index("check").loc[
        "open_loop_held", "evidence"]  # ioarrive before submit_call: not recorded, nothing said
    fio = load_frame((True, True, True, True, False, False)).assign(generator="fio")
    r = validity_table(load=fio).set_index("check").loc["open_loop_held"]
    assert "gated (arrivals waited for completions): 2 points" in r["evidence"]


def test_ioarrive_rows_have_no_cpu_share_row_fio_rows_do():
    """ioarrive spins before each arrival by design (its lag check judges lateness): an experiment of its rows
    alone gets no load_generator_cpu row, never a false 'not recorded'; fio's rows beside them are judged."""
    rows = pd.DataFrame([{"host": H, "experiment": "mixed-load-map", "ok": True, "generator": "ioarrive",
                          "point": "c", "iops": 50_000.0, "generator_cpu_pct": 95.0},
                         {"host": H, "experiment": "fio-load-latency", "ok": True, "generator": "ioarrive",
                          "point": "u10", "iops": 5_000.0, "generator_cpu_pct": 60.0},
                         {"host": H, "experiment": "fio-load-latency", "ok": True, "generator": None,
                          "point": "lt", "jobname": "lt", "iops": 60_000.0, "cpu_usr_pct": 20.0,
                          "cpu_sys_pct": 19.0}])
    v = validity_table(fio=rows, sysinfo={H: {"shape": {"usable_cpus": 2}}})
    cpu = v[v["check"] == "load_generator_cpu"].set_index("subject")
    assert "mixed-load-map" not in cpu.index
    assert cpu.loc["fio-load-latency", "status"] == "pass" and "lt" in cpu.loc["fio-load-latency", "evidence"]


def test_idle_latency_evidence_names_the_loaded_point_it_holds_against():
    """R-loop 9.3: the check called loop's read-only delay-0 point (334.91 ns, the heaviest load) 'lightest
    loaded latency'. It names it now as the lowest latency of any loaded point, with its traffic and delay."""
    curves = pd.read_csv(Path(__file__).parent / "data" / "review-s5" / "memory_curves-loop328.csv")
    host = curves["host"].iloc[0]
    head = pd.DataFrame({"host": host, "key": ["idle_latency_ns"], "value": [243.6]})
    v = validity_table(**tables(headline=head, curves=curves))
    r = v[v["check"] == "headline_definition"].set_index("subject").loc["idle memory latency"]
    assert r["status"] == "pass" and "lightest" not in r["evidence"]
    assert "lowest latency of any loaded point (traffic read-only, delay 0) 335" in r["evidence"]
    low = validity_table(**tables(headline=head.assign(value=400.0), curves=curves))    # 335 < 400 / 1.1: warn
    assert low[low["check"] == "headline_definition"].set_index("subject").loc["idle memory latency", "status"] == "warn"
