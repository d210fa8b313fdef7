"""Validity checks as data (memstor.analysis.validity): constructed tables in which each precondition fails
in turn are flagged with their numbers; tables in which every precondition holds give pass rows only."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from memstor.analysis import steady_state
from memstor.analysis.curves import analyse
from memstor.analysis.validity import CHECKS, COLUMNS, SECTIONS, holds, status, validity_table
from memstor.report.tables import TABLES

H = "dut"
SYSINFO = {H: {"cpu": {"logical_cpus": 2}, "caches": {"L3_bytes": 32 << 20}, "memory": {"total_bytes": 16 << 30}}}
KEY = {"bs_bytes": 4096, "iodepth": 32, "numjobs": 1, "rwmixread": math.nan, "ioengine": "io_uring", "direct": 1,
       "file_size_bytes": 4 << 30}


def load_frame(open_loop=(True,) * 6) -> pd.DataFrame:
    """An open-loop curve of 6 offered rates (the open_loop flag of each given)."""
    util = [10, 30, 50, 70, 80, 90][: len(open_loop)]
    return pd.DataFrame({"host": H, "rw": "randread", "utilisation_pct": util, "offered_iops": [u * 1000 for u in util],
                         "achieved_iops": [u * 1000 for u in util], "achieved_pct": 100.0, "open_loop": list(open_loop)})


def point(experiment: str, iops: float, ci=0.02, **kw) -> dict:
    """One fio summary row (4 KiB randread QD32x1 unless kw says otherwise); ci: half-width share, None = none."""
    p = {"host": H, "experiment": experiment, "rw": "randread", **KEY, "direction": "read", "n": 1,
         "config": f"{experiment}-{kw.get('iodepth', 32)}", "point": f"{experiment}-p", "iops": iops,
         "bw_MBps": iops * 4096 / 1e6}
    p.update(kw)
    p["outstanding_io"] = p["iodepth"] * p["numjobs"]
    p.setdefault("lat_mean_us", p["outstanding_io"] / iops * 1e6)   # Little's law: a full queue
    for m in ("iops", "lat_mean_us", "bw_MBps"):
        p[f"{m}_ci_low"] = None if ci is None else p[m] * (1 - ci)
        p[f"{m}_ci_high"] = None if ci is None else p[m] * (1 + ci)
    return p


def points_frame(bs_iops=80_000.0, qd_iops=82_000.0, ci=0.02) -> pd.DataFrame:
    """The same configuration in fio-block-size and fio-queue-depth, plus the QD32x4 write point the
    steady state is compared with."""
    return pd.DataFrame([
        point("fio-block-size", bs_iops, ci),
        point("fio-queue-depth", qd_iops, ci),
        point("fio-queue-depth", 40_000.0, ci, rw="randwrite", direction="write", numjobs=4, config="qd-w"),
    ])


def steady_fio(series) -> pd.DataFrame:
    """fio-steady-state rounds (4 KiB randwrite QD32x4, 10 s rounds on a 4 GiB file) with the given IOPS."""
    return pd.DataFrame({
        "host": H, "experiment": "fio-steady-state", "round": range(1, len(series) + 1), "iops": series,
        "status": "done", "ok": True, "rw": "randwrite", "direction": "write", "bs_bytes": 4096, "iodepth": 32,
        "numjobs": 4, "ioengine": "io_uring", "direct": 1, "span": "file", "span_bytes": 4 << 30, "round_s": 10.0,
        "max_rounds": 25, "point": [f"r{i}" for i in range(len(series))], "rep": 1, "jobname": "ss",
        "cpu_usr_pct": 20.0, "cpu_sys_pct": 30.0, "config": "ss"})


def cpu_fio(usr=10.0, sys=15.0, with_cpu=True) -> pd.DataFrame:
    """Two fio-queue-depth points (one job of 1 thread each) with fio's own CPU use."""
    df = pd.DataFrame({"host": H, "experiment": "fio-queue-depth", "point": ["a", "b"], "rep": 1, "jobname": "j",
                       "numjobs": 1, "ok": True, "cpu_usr_pct": [usr, usr / 2], "cpu_sys_pct": [sys, sys / 2],
                       "config": ["fio-queue-depth-32", "qd-w"], "ci_note": "ramp excluded 1"})
    return df if with_cpu else df.drop(columns=["cpu_usr_pct", "cpu_sys_pct"])


def knee_frame(x_max_fit=100_000.0, r_min_fit=40.0, ci=(3.0, 5.0)) -> pd.DataFrame:
    return pd.DataFrame([{"host": H, "rw": "randread", "N_range": "1-256", "X_max_fit_iops": x_max_fit,
                          "X_max_fit_se_iops": 1_000.0, "X_max_meas_iops": 98_000.0, "R_min_fit_us": r_min_fit,
                          "R_min_fit_se_us": 2.0, "R_min_meas_us": 45.0, "N_star_fit": 4.0,
                          "N_star_fit_ci_low": ci[0], "N_star_fit_ci_high": ci[1]}])


def mlc_frame(failing: int = 0, total: int = 20) -> pd.DataFrame:
    """Loaded-latency values; the first `failing` fail latency_unstable (spread 7 % against 2 %), two of
    them also steal."""
    rows = []
    for i in range(total):
        bad = i < failing
        gate = "failed:latency_unstable" + (",steal" if bad and i < 2 else "") if bad else "passed"
        detail = ("latency spread 7.0 % >= 2 % across 20 sub-windows in 5 groups"
                  + ("; steal time 4.0 % of the window (> 2 %)" if bad and i < 2 else "")) if bad else None
        rows.append({"host": H, "test": "loaded_latency", "gate": gate, "gate_detail": detail, "ok": True,
                     "buffer_kib": 1 << 20,  # 1 GiB: 32x the 32 MiB last-level cache (memory_buffer_llc)
                     "latency_spread_pct": 7.0 if bad else 1.0, "steal_pct": 4.0 if bad and i < 2 else 0.0})
    return pd.DataFrame(rows)


def good_fits() -> dict:
    """A storage curve that follows R = R0 + a·ρ/(1 − ρ) exactly (its model predicts its top points)."""
    x = np.linspace(5_000, 85_000, 12)
    r = 50.0 + 20.0 * (x / 100_000) / (1 - x / 100_000)
    return {(H, "closed queue-depth sweep", "randread"): analyse(np.arange(1, 13), x, r)}


GOOD_SERIES = [60_000, 50_000, 43_000, 40_500, 39_800, 40_300, 39_900, 40_200]


def tables(**over) -> dict:
    """Every input of validity_table, each precondition holding; `over` replaces some."""
    fio = pd.concat([cpu_fio(), steady_fio(GOOD_SERIES)], ignore_index=True)
    t = {"fio": fio, "mlc": mlc_frame(), "points": points_frame(), "knees": knee_frame(), "load": load_frame(),
         "storage_fits": good_fits(), "sysinfo": SYSINFO}
    t.update(over)
    t["steady"] = steady_state.verdict_table(t["fio"])
    return t


def flagged(v: pd.DataFrame, check: str) -> pd.DataFrame:
    return v[(v["check"] == check) & v["status"].isin(["warn", "fail"])]


# --------------------------------------------------------------------------------------------- tests


def test_all_preconditions_hold_gives_pass_rows_only():
    v = validity_table(**tables())
    assert list(v.columns) == COLUMNS
    assert set(v["status"]) == {"pass"}, v[v["status"] != "pass"][["check", "subject", "evidence"]].to_string()
    expected = {"open_loop_held", "open_loop_rate", "load_generator_cpu", "knee_ceiling", "knee_min_latency",
                "knee_located", "curve_holdout", "steady_trace_jump", "steady_window_trend", "steady_round_length",
                "steady_vs_fresh", "config_agreement", "interval_exists", "interval_holds_value", "memory_gate",
                "memory_buffer_llc"}
    assert expected <= set(v["check"])
    assert set(v["check"]) <= set(CHECKS) and set(v["section"]) <= set(SECTIONS)
    assert all(holds(v, c, H) for c in expected) and status(v, "open_loop_held", H) == "pass"
    assert status(v, "headline_definition", H) == "" and holds(v, "headline_definition", H)


def test_empty_inputs_and_the_report_table_entry():
    v = validity_table()
    assert v.empty and list(v.columns) == COLUMNS
    assert TABLES["validity"][0] == "validity"
