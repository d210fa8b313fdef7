"""A memory point's own 95 % interval from its loadlat sub-windows (issue 18, part 1, last bullet):
memstor.analysis.memory.sub_window_ci_columns on synthetic sub-window series (empty, too few, correlated,
lost, unequal windows), the gate on merged sub-windows (memstor.parse.loadlat_json), the window count memstor
asks for (memstor.measure.loadlat.sub_windows), the summary path (curve_table / idle_table: repetitions when
n >= 2, the point's own interval when n = 1), and one short run of the real loadlat."""

from __future__ import annotations

import math
import os

import numpy as np
import pandas as pd
import pytest

from conftest import two_allowed_cpus
from memstor.analysis import memory
from memstor.core.batchmeans import batch_means_ci, correlated_metrics
from memstor.core.schema import MLC_COLUMNS
from memstor.experiments import mlc_loaded_latency as ll
from memstor.measure import loadlat as L
from memstor.parse import loadlat_json as lj

TWO_CPUS = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2,
                              reason="needs 2 CPUs in the affinity mask (a latency thread and a load thread on their "
                                     "own CPUs)")


def series(lat, bw=None, secs=None) -> dict:
    """A point's sub-windows as memstor.parse.loadlat_json.point_figures gives them."""
    n = len(lat if lat is not None else bw)
    return {"window_s": list(secs) if secs is not None else [0.1] * n,
            "latency_ns": None if lat is None else list(lat), "bandwidth_MBps": None if bw is None else list(bw)}


def ar1(n: int, phi: float, mean: float, sd: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = np.empty(n)
    x[0] = rng.normal()
    for i in range(1, n):
        x[i] = phi * x[i - 1] + rng.normal() * math.sqrt(1 - phi * phi)
    return mean + sd * x


# ------------------------------------------------------------------------------ synthetic sub-windows


def test_independent_sub_windows_give_the_batch_means_interval_of_each_metric():
    lat, bw = ar1(20, 0.0, 100.0, 1.0, 1), ar1(20, 0.0, 5000.0, 50.0, 2)
    cols = memory.sub_window_ci_columns(series(lat, bw), "loadlat")
    assert list(cols) == memory.POINT_CI_COLUMNS == ll.CI_COLUMNS
    loads = [0.1 / v for v in lat]  # R-loop 7.1: the latency interval is the load-weighted mean's (time / loads)
    want_lat, want_bw = batch_means_ci(lat, loads, ramp_intervals=0), batch_means_ci(bw, ramp_intervals=0)
    assert want_lat.status == want_bw.status == "ok"
    assert (cols["latency_ns_ci_low"], cols["latency_ns_ci_high"]) == pytest.approx((want_lat.ci_low, want_lat.ci_high))
    assert (cols["bandwidth_MBps_ci_low"], cols["bandwidth_MBps_ci_high"]) == pytest.approx((want_bw.ci_low,
                                                                                              want_bw.ci_high))
    assert cols["latency_ns_ci_low"] < lat.mean() < cols["latency_ns_ci_high"]
    assert cols["bandwidth_MBps_ci_low"] < bw.mean() < cols["bandwidth_MBps_ci_high"]
    assert cols["ci_method"] == "batch-means" and cols["ci_note"] == ""  # no ramp dropped: nothing to say


def test_five_sub_windows_are_too_few_batches_and_give_empty_bounds():
    cols = memory.sub_window_ci_columns(series([100, 101, 99, 100, 102], [10, 11, 10, 9, 10]), "loadlat")
    assert all(math.isnan(cols[c]) for c in memory.POINT_CI_COLUMNS[:4])
    assert cols["ci_method"] == "" and cols["ci_note"] == "too few batches (5 sub-windows < 10)"


def test_correlated_sub_windows_give_no_interval_and_say_so():
    """Issue 38: no interval from correlated batches (10 sub-windows allow no wider batch); the other metric
    keeps its own."""
    drift = np.linspace(100.0, 110.0, 10)  # a trend: lag-1 of the batch means near 1, no larger batch possible
    cols = memory.sub_window_ci_columns(series(drift, ar1(10, 0.0, 500.0, 5.0, 3)), "loadlat")
    r = batch_means_ci(drift, ramp_intervals=0)
    assert r.status == "correlated" and r.lag1 > 0.2
    assert math.isnan(cols["latency_ns_ci_low"]) and math.isnan(cols["latency_ns_ci_high"])
    assert cols["bandwidth_MBps_ci_low"] < 500 < cols["bandwidth_MBps_ci_high"] and cols["ci_method"] == "batch-means"
    assert cols["ci_note"] == f"correlated (lag-1 latency {r.lag1:.2f} at 10 batches of 1 sub-windows)"
    alone = memory.sub_window_ci_columns(series(drift), "loadlat")
    assert alone["ci_method"] == "" and math.isnan(alone["latency_ns_ci_low"])


def test_a_lost_sub_window_empties_only_that_metric():
    bw = list(ar1(10, 0.0, 500.0, 5.0, 4))
    bw[6] = None  # a load thread descheduled across the whole sub-window (loadlat writes null)
    lat = ar1(10, 0.0, 100.0, 1.0, 9)  # a seed whose 10 values pass the lag-1 rule (5 did not: issue 38)
    cols = memory.sub_window_ci_columns(series(lat, bw), "loadlat")
    assert math.isnan(cols["bandwidth_MBps_ci_low"]) and math.isnan(cols["bandwidth_MBps_ci_high"])
    assert cols["latency_ns_ci_low"] < cols["latency_ns_ci_high"] and cols["ci_method"] == "batch-means"
    assert cols["ci_note"].endswith("lost sub-window: bandwidth")


def test_idle_and_peak_points_get_only_the_metric_they_measure():
    idle = memory.sub_window_ci_columns(series(ar1(10, 0.0, 90.0, 0.5, 6), None), "loadlat")
    assert idle["latency_ns_ci_low"] < 90.5 and math.isnan(idle["bandwidth_MBps_ci_low"])
    peak = memory.sub_window_ci_columns(series(None, ar1(10, 0.0, 9000.0, 90.0, 7)), "loadlat")
    assert math.isnan(peak["latency_ns_ci_low"]) and peak["bandwidth_MBps_ci_low"] < peak["bandwidth_MBps_ci_high"]
    assert "lost" not in idle["ci_note"] + peak["ci_note"]


def test_bandwidth_is_weighted_by_length_only_when_the_sub_windows_differ():
    bw = ar1(10, 0.0, 500.0, 20.0, 13)  # a seed whose 10 values pass the lag-1 rule (8 did not: issue 38)
    even = memory.sub_window_ci_columns(series(None, bw, [0.1, 0.1005, 0.0995] + [0.1] * 7), "loadlat")
    r = batch_means_ci(bw, ramp_intervals=0)
    assert (even["bandwidth_MBps_ci_low"], even["bandwidth_MBps_ci_high"]) == pytest.approx((r.ci_low, r.ci_high))
    secs = [0.1, 0.2] * 5
    uneven = memory.sub_window_ci_columns(series(None, bw, secs), "loadlat")
    w = batch_means_ci(bw, secs, ramp_intervals=0)
    assert (uneven["bandwidth_MBps_ci_low"], uneven["bandwidth_MBps_ci_high"]) == pytest.approx((w.ci_low, w.ci_high))
    assert w.ci_low != pytest.approx(r.ci_low)  # the weights made a difference


def test_no_sub_windows_says_why():
    for tool, note in (("mlc", "no sub-windows (MLC)"), ("loadlat", "no sub-windows (loadlat before v0.3)")):
        cols = memory.sub_window_ci_columns(None, tool)
        assert all(math.isnan(cols[c]) for c in memory.POINT_CI_COLUMNS[:4])
        assert cols["ci_method"] == "" and cols["ci_note"] == note


# ------------------------------------------------------------------------- windows asked for, the gate


def test_memstor_asks_for_sub_windows_of_at_least_a_tenth_of_a_second():
    # quick profile 1 s -> 10, standard 2 s -> 20, full 5 s -> 50; short points keep loadlat's 5
    assert [L.sub_windows(t) for t in (0.3, 0.5, 0.99, 1, 1.5, 2, 5, 10, 60)] == [5, 5, 5, 10, 15, 20, 50, 100, 100]
    assert all(t / L.sub_windows(t) >= 0.1 - 1e-12 for t in (0.5, 1, 1.5, 2, 5, 10, 60))


def test_the_gate_judges_many_sub_windows_merged_into_five_groups():
    lat = [100.0, 104.0] * 5  # each group of 2 merges to the same latency: no spread between groups
    bw = [200.0] * 8 + [150.0, 250.0]
    doc = {"mode": "loaded_latency", "latency_cpu": 0,
           "points": [{"status": "ok", "delay": 0, "windows": [
               {"window_s": 0.1, "latency_ns": a, "bandwidth_MBps": b} for a, b in zip(lat, bw)]}]}
    f = lj.point_figures(doc, doc["points"][0])
    assert f["windows"] == 10 and f["latency_spread_pct"] == pytest.approx(0.0)
    assert f["bandwidth_spread_pct"] == pytest.approx(0.0)
    assert lj.spread_pct(lat) > 2 and lj.spread_pct(bw) > 5  # the ungrouped sub-windows would fail both
    # latency merges as time / loads, bandwidth as bytes / time
    assert lj.grouped([100.0, 300.0], [0.1, 0.1], "latency") == [100.0, 300.0]  # 2 windows: not grouped
    merged = lj.grouped([100.0] * 5 + [300.0] * 5 + [100.0] * 5 + [100.0] * 5 + [100.0] * 5, [0.1] * 25,
                        "latency")
    assert merged == pytest.approx([100.0, 300.0, 100.0, 100.0, 100.0])
    assert lj.grouped([100.0, 300.0] * 5, [0.1] * 10, "latency")[0] == pytest.approx(150.0)
    assert lj.grouped([100.0, 300.0] * 5, [0.3, 0.1] * 5, "bandwidth")[0] == pytest.approx(150.0)
    assert lj.grouped([None, 1.0] * 5, [0.1] * 10, "bandwidth")[0] is None
    fig = {"windows": 20, "bandwidth_spread_pct": 7.0}
    assert "across 20 sub-windows in 5 groups" in L.gate_reasons(fig)[0][1]
    assert "across 5 sub-windows" in L.gate_reasons({"windows": 5, "bandwidth_spread_pct": 7.0})[0][1]
    assert f["series"]["latency_ns"] == lat and f["series"]["window_s"] == [0.1] * 10


# ----------------------------------------------------------------------------------- summary path


def _rows(n_reps: int, own: bool, tool: str = "loadlat") -> pd.DataFrame:
    """Loaded-latency rows of one curve at 2 delays, n_reps repetitions; own: each row has its interval."""
    rows = []
    for rep in range(1, n_reps + 1):
        for delay, lat, bw in ((0, 200.0 + rep, 9000.0 + 10 * rep), (1000, 100.0 + rep, 100.0 + rep)):
            row = {**dict.fromkeys(MLC_COLUMNS), "host": "h", "tool": tool, "test": "loaded_latency",
                   "traffic": "read-only", "access_bytes": 64, "inject_delay": delay, "latency_ns": lat,
                   "bandwidth_MBps": bw, "status": "done", "load_threads": 1, "buffer_kib": 65536, "random": True,
                   "load_random": False, "huge_pages": False, "pacing": "fixed", "config": "c", "repetition": rep}
            if own:
                row.update(latency_ns_ci_low=lat - 2, latency_ns_ci_high=lat + 2, bandwidth_MBps_ci_low=bw - 5,
                           bandwidth_MBps_ci_high=bw + 5, ci_method="batch-means", ci_note="")
            else:
                row.update(memory.sub_window_ci_columns(None, tool))
            rows.append(row)
    return pd.DataFrame(rows)


def test_curve_table_uses_repetitions_when_n_is_2_and_the_points_own_interval_when_n_is_1():
    one = memory.curve_table(_rows(1, own=True))
    assert (one["n"] == 1).all() and (one["ci_method"] == "batch-means").all()
    assert one["inject_delay"].tolist() == [0, 1000]
    assert one["latency_ns_ci_low"].tolist() == [199.0, 99.0] and one["latency_ns_ci_high"].tolist() == [203.0, 103.0]
    assert one["bandwidth_MBps_ci_high"].tolist() == [9015.0, 106.0]
    two = memory.curve_table(_rows(2, own=True))
    assert (two["n"] == 2).all() and (two["ci_method"] == "repetitions").all()
    lo, hi = two.loc[two["inject_delay"] == 0, ["latency_ns_ci_low", "latency_ns_ci_high"]].iloc[0]
    assert (lo, hi) == pytest.approx(memory.ci95([201.0, 202.0])[1:3])  # between the runs, not the runs' own
    mlc = memory.curve_table(_rows(1, own=False, tool="mlc"))
    assert (mlc["ci_method"] == "").all() and mlc["latency_ns_ci_low"].isna().all()
    # imported tables without the columns: no interval, no error
    bare = memory.curve_table(_rows(1, own=True).drop(columns=ll.CI_COLUMNS))
    assert (bare["ci_method"] == "").all() and bare["bandwidth_MBps_ci_high"].isna().all()


def test_idle_table_uses_the_points_own_interval_when_n_is_1():
    base = {**dict.fromkeys(MLC_COLUMNS), "test": "idle_latency", "tool": "loadlat", "status": "done",
            "load_threads": 0, "pages": "4K"}
    rows = pd.DataFrame([
        {**base, "latency_ns": 90.0, "huge_pages": True, "latency_ns_ci_low": 88.5, "latency_ns_ci_high": 91.5,
         "ci_method": "batch-means"},
        {**base, "latency_ns": 120.0, "huge_pages": False, "latency_ns_ci_low": 118.0, "latency_ns_ci_high": 121.0,
         "ci_method": "batch-means"},
        {**base, "latency_ns": 122.0, "huge_pages": False, "latency_ns_ci_low": 121.0, "latency_ns_ci_high": 123.0,
         "ci_method": "batch-means"}])
    tab = memory.idle_table(rows)
    assert tab["n"].tolist() == [1, 2] and tab["ci_method"].tolist() == ["batch-means", "repetitions"]
    assert (tab["latency_ns_ci_low"].iloc[0], tab["latency_ns_ci_high"].iloc[0]) == (88.5, 91.5)
    off = memory.idle_table(rows.assign(latency_ns_ci_low=[89.0, 118.0, 121.0]))  # centred on 90.25, not 90
    assert off["latency_ns_ci_low"].isna().iloc[0] and off["ci_method"].iloc[0] == ""
    assert tab["latency_ns_ci_low"].iloc[1] == pytest.approx(memory.ci95([120.0, 122.0])[1])


# ------------------------------------------------------------------------------------- real loadlat



@TWO_CPUS
@pytest.mark.fio
@pytest.mark.loadlat
def test_real_loadlat_point_carries_its_own_interval(tmp_path, loadlat_bin, monkeypatch):
    """One short run at the quick profile's 1 s per point: 10 sub-windows of 0.1 s each, the interval
    columns in the table, and every bound that is a number brackets the point's value."""
    monkeypatch.setenv("LOADLAT", str(loadlat_bin))
    lat_cpu, load_cpu = two_allowed_cpus()
    params = {"tool": "loadlat", "traffic": ["R"], "access_bytes": [64], "delays": [0, 1000],
              "seconds_per_point": 1, "buffer_kib": 65536, "huge_pages": False, "max_remeasure": 0,
              "latency_cpu": lat_cpu, "load_cpus": str(load_cpu)}
    df = ll.run_loaded_latency(params, data_root=tmp_path / "d", host="h", progress=False)
    table = pd.read_csv(tmp_path / "d" / "processed" / "h" / f"{ll.EXPERIMENT}.csv", keep_default_na=False,
                        na_values=[""])
    assert set(ll.CI_COLUMNS) <= set(table.columns)
    assert (df["status"] == "done").all() and (df["windows"] == 10).all()
    shown = []
    for _, r in df.iterrows():
        for metric in ("latency_ns", "bandwidth_MBps"):
            lo, hi, v = r[f"{metric}_ci_low"], r[f"{metric}_ci_high"], r[metric]
            if pd.isna(v):  # idle latency has no bandwidth, peak bandwidth no latency
                assert pd.isna(lo) and pd.isna(hi)
                continue
            if pd.notna(lo):
                assert lo <= v <= hi, (r["test"], r["inject_delay"], metric, lo, v, hi)
                shown.append(f"{r['test']} {r['inject_delay']} {metric}: ±{100 * (hi - lo) / 2 / v:.2f} %")
        assert (r["ci_method"] == "batch-means") == (pd.notna(r["latency_ns_ci_low"])
                                                     or pd.notna(r["bandwidth_MBps_ci_low"]))
        if r["ci_method"] != "batch-means":  # 10 sub-windows give 10 batches: a lost one or correlated ones empty
            assert "lost sub-window" in r["ci_note"] or "correlated (lag-1" in r["ci_note"], r["ci_note"]
        for name in correlated_metrics(r["ci_note"]):  # issue 38: no bound from correlated sub-windows
            assert pd.isna(r[f"{'latency_ns' if name == 'latency' else 'bandwidth_MBps'}_ci_low"])
    print("half-widths:", "; ".join(shown))
    assert shown  # at least one interval on this machine
    curves = memory.curve_table(df)
    assert (curves["n"] == 1).all()
    have = curves["latency_ns_ci_low"].notna()
    assert (curves.loc[have, "ci_method"] == "batch-means").all()
