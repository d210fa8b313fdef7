"""Write saturation from its processed tables (memstor.analysis.wsat): cliffs with levels and intervals,
burst and sustained levels, the thermal verdict, and the spec comparison on the sustained level."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from memstor.analysis import specs, wsat
from memstor.analysis import synthesis as syn
from memstor.analysis.dataset import Dataset, HostData

H = "h"


def run_row(point: str, rw: str = "write", bs: int = 131072, **kw) -> dict:
    return {"host": H, "table": wsat.EXPERIMENT, "point": point, "config": point, "rw": rw, "direction": "write",
            "bs_bytes": bs, "iodepth": 32, "numjobs": 1, "span": "file", "span_bytes": 1 << 30,
            "state_at_start": "fresh test file (created for this run)", "stopped_by": "bytes",
            "thermal": "not available (virtual disk vda)", "status": "done", "ok": True, **kw}


def seconds(point: str, levels=((60, 1000.0), (60, 333.0)), seed: int = 0) -> pd.DataFrame:
    """A per-second MB/s series: each (seconds, level) in turn, 2 % noise, gb_written from it."""
    rng = np.random.default_rng(seed)
    mbps = np.concatenate([lvl * (1 + 0.02 * rng.standard_normal(n)) for n, lvl in levels])
    t = np.arange(1, mbps.size + 1, dtype=float)
    return pd.DataFrame({"host": H, "point": point, "t_s": t, "bw_MBps": mbps, "gb_written": np.cumsum(mbps) / 1e3})


def thermal_rows(point: str, temps=None, available: bool = True) -> pd.DataFrame:
    if not available:
        return pd.DataFrame([{"host": H, "point": point, "available": False, "reason": "virtual disk vda"}])
    t = np.arange(0, 120, 5, dtype=float)
    temps = np.full(t.size, 45.0) if temps is None else temps
    return pd.DataFrame({"host": H, "point": point, "t_s": t, "temperature_c": temps, "warning_temp_c": 70.0,
                         "critical_temp_c": 80.0, "available": True, "reason": None})


def test_one_cliff_burst_and_sustained_levels():
    runs = pd.DataFrame([run_row("p1", tgbw_GB=80.0)])
    sec = seconds("p1")
    cliffs = wsat.wsat_cliffs(runs, sec, thermal_rows("p1", available=False))
    assert len(cliffs) == 1
    c = cliffs.iloc[0]
    assert c["t_s"] == pytest.approx(61, abs=2) and c["gb_written"] == pytest.approx(60.0, rel=0.05)
    assert c["level_before"] == pytest.approx(1000, rel=0.02) and c["level_after"] == pytest.approx(333, rel=0.02)
    assert c["kind"] == "cliff" and c["thermal_verdict"] == "not available (virtual disk vda)"
    table = wsat.wsat_table(runs, sec, cliffs).iloc[0]
    assert table["workload"] == "128 KiB sequential write" and table["cliffs"] == 1
    assert table["burst_MBps_ci_low"] < 1000 < table["burst_MBps_ci_high"]
    assert table["sustained_MBps_ci_low"] < 333 < table["sustained_MBps_ci_high"]
    assert table["sustained_over_burst"] == pytest.approx(1 / 3, rel=0.03)
    assert table["sustained_iops"] == pytest.approx(table["sustained_MBps"] * 1e6 / 131072)


def test_no_cliff_is_a_result_with_one_level():
    runs = pd.DataFrame([run_row("p1", tgbw_GB=60.0)])
    sec = seconds("p1", levels=((120, 500.0),))
    cliffs = wsat.wsat_cliffs(runs, sec, None)
    assert cliffs.empty and list(cliffs.columns) == wsat.CLIFFS_COLUMNS
    row = wsat.wsat_table(runs, sec, cliffs).iloc[0]
    assert row["cliffs"] == 0 and row["burst_MBps"] == row["sustained_MBps"] == pytest.approx(500, rel=0.01)


def test_a_drop_where_the_drive_reaches_its_warning_temperature_is_thermal():
    runs = pd.DataFrame([run_row("p1")])
    temps = np.where(np.arange(0, 120, 5) >= 55, 72.0, 50.0)   # hot from 55 s: warning 70 °C
    cliffs = wsat.wsat_cliffs(runs, seconds("p1"), thermal_rows("p1", temps))
    assert cliffs.iloc[0]["kind"] == "thermal" and "70" in cliffs.iloc[0]["thermal_evidence"]
    cool = wsat.wsat_cliffs(runs, seconds("p1"), thermal_rows("p1"))
    assert cool.iloc[0]["kind"] == "cliff" and cool.iloc[0]["thermal_verdict"] == "not thermal"


def test_the_spec_comparison_uses_the_sustained_level_not_the_burst():
    runs = pd.DataFrame([run_row("p1", tgbw_GB=80.0)])
    sec = seconds("p1")
    table = wsat.wsat_table(runs, sec, wsat.wsat_cliffs(runs, sec, None))
    ds = Dataset(data_dir=None, hosts=[HostData(name=H)], fio=runs.assign(iops=1.0), mlc=pd.DataFrame())
    sheet = specs.load_specs()[0]
    seq = next(v for v in sheet.values if v.rw == "write" and v.metric == "bw_MBps")
    row = syn.wsat_compare(seq, table.iloc[0], runs.iloc[0], sheet.device, H)
    assert row["measured"] == pytest.approx(333, rel=0.02)            # the post-cliff level
    assert "after 1 cliff (burst 1,000 MB/s)" in row["selection"] or "after 1 cliff (burst" in row["selection"]
    assert row["state"].startswith("sustained (after the write cliff)") and "state" in row["flag"]
    assert row["measured_ci_low"] < row["measured"] < row["measured_ci_high"]
    assert syn._wsat_choice(table, H, seq) is not None
    rand = next(v for v in sheet.values if v.rw == "randread")
    assert syn._wsat_choice(table, H, rand) is None and syn._wsat_choice(None, H, seq) is None
    assert ds.side_table("nothing").empty


def test_report_text_says_burst_cliff_and_sustained_with_intervals():
    from memstor.report import text

    runs = pd.DataFrame([run_row("p1", tgbw_GB=80.0), run_row("p2", rw="randwrite", bs=4096, tgbw_GB=60.0)])
    sec = pd.concat([seconds("p1"), seconds("p2", levels=((120, 400.0),), seed=1)], ignore_index=True)
    cliffs = wsat.wsat_cliffs(runs, sec, None)
    table = wsat.wsat_table(runs, sec, cliffs)
    shown = text.wsat_display(table)
    assert shown["workload"].tolist() == ["128 KiB sequential write", "4 KiB random write"]
    assert shown["cliffs"].tolist() == ["1", "0"] and "[" in shown["sustained (MB/s)"].iloc[0]
    assert shown["written (GB)"].iloc[0] == "80.0 (target reached)"
    c = text.cliffs_display(cliffs)
    assert len(c) == 1 and c["kind"].iloc[0] == "cliff" and c["before"].iloc[0].endswith("MB/s")
    words = text.wsat_sentences(table, cliffs)
    assert "then a cliff at" in words[0] and "held its last 58 whole seconds (not shown to last longer)" in words[0] and "no cliff" in words[1]
    assert text.wsat_display(None).empty and text.wsat_sentences(None, None) == []


def test_validity_flags_a_run_cut_by_the_time_cap_and_a_short_series():
    from memstor.analysis.validity import validity_table

    runs = pd.DataFrame([run_row("p1", tgbw_GB=80.0), run_row("p2", tgbw_GB=2.0, stopped_by="time")])
    sec = pd.concat([seconds("p1"), seconds("p2", levels=((8, 250.0),))], ignore_index=True)
    table = wsat.wsat_table(runs, sec, wsat.wsat_cliffs(runs, sec, None))
    v = validity_table(wsat=table)
    got = {(r["check"], r["subject"].split(" (")[1].rstrip(")")): r["status"] for _, r in v.iterrows()}
    assert got == {("wsat_written", "p1"): "pass", ("wsat_series", "p1"): "pass",
                   ("wsat_written", "p2"): "warn", ("wsat_series", "p2"): "warn",
                   ("wsat_one_level", "p1"): "pass", ("wsat_one_level", "p2"): "unchecked"}
    assert set(v["section"]) == {"write_saturation"}
    assert "time cap" in v[(v["check"] == "wsat_written") & (v["status"] == "warn")]["evidence"].iloc[0]


def test_a_run_without_a_cliff_is_not_compared_as_sustained_after_the_cliff():
    """A 16-vCPU report printed a 'sustained (after the write cliff)' spec row for a run with no cliff (45,471
    IOPS where the spec rule's QD32x4 point said 79,883): no cliff, no level after one; the ordinary rule holds."""
    runs = pd.DataFrame([run_row("p1", tgbw_GB=4.0)])
    sec = seconds("p1", levels=((120, 500.0),))
    table = wsat.wsat_table(runs, sec, wsat.wsat_cliffs(runs, sec, None))
    seq = next(v for v in specs.load_specs()[0].values if v.rw == "write" and v.metric == "bw_MBps")
    assert table.iloc[0]["cliffs"] == 0 and syn._wsat_choice(table, H, seq) is None
    one = pd.DataFrame([run_row("p2", tgbw_GB=80.0)])
    sec2 = seconds("p2")
    assert syn._wsat_choice(wsat.wsat_table(one, sec2, wsat.wsat_cliffs(one, sec2, None)), H, seq) is not None


def test_a_partial_last_second_is_not_a_level():
    """The 16-vCPU report: 'no cliff, 1,980 MB/s throughout' was the mean of 3,212 and a partial last second's
    748 (fio's runtime 1.23 s, fio's figure 3,234 MB/s). The level comes from the whole second; the table keeps
    both counts and fio's figure beside the series' mean."""
    runs = pd.DataFrame([run_row("p1", tgbw_GB=4.0, runtime_s=1.23, bw_MBps=3_234.0)])
    sec = pd.DataFrame({"host": H, "point": "p1", "t_s": [1.0, 2.0], "bw_MBps": [3_212.0, 748.0],
                        "gb_written": [3.212, 3.96]})
    row = wsat.wsat_table(runs, sec, wsat.wsat_cliffs(runs, sec, None)).iloc[0]
    assert row["sustained_MBps"] == row["burst_MBps"] == 3_212.0 and row["cliffs"] == 0
    assert row["seconds"] == 2 and row["whole_seconds"] == 1
    assert row["series_MBps"] == 3_212.0 and row["run_MBps"] == 3_234.0 and row["runtime_s"] == 1.23
    long = pd.DataFrame([run_row("p2", tgbw_GB=60.0, runtime_s=120.4)])
    s2 = seconds("p2", levels=((120, 500.0),))
    s2 = pd.concat([s2, s2.tail(1).assign(t_s=121.0, bw_MBps=200.0)], ignore_index=True)  # 0.4 s of writing
    r2 = wsat.wsat_table(long, s2, wsat.wsat_cliffs(long, s2, None)).iloc[0]
    assert r2["whole_seconds"] == 120 and r2["sustained_MBps"] == pytest.approx(500, rel=0.01)


def test_a_run_that_starts_where_the_point_before_left_it_reads_as_a_sentence():
    """R-loop 5.3: 'from as the point before left it (...; not purged between points)' now 'starting as the point
    before left it (...)'; the other side: a fresh file still reads 'from fresh test file ...'."""
    from memstor.report import text

    state = "as the point before left it (p1; not purged between points)"
    runs = pd.DataFrame([run_row("p1", tgbw_GB=80.0), run_row("p2", tgbw_GB=80.0, state_at_start=state)])
    sec = pd.concat([seconds("p1"), seconds("p2", seed=1)], ignore_index=True)
    cliffs = wsat.wsat_cliffs(runs, sec, None)
    words = text.wsat_sentences(wsat.wsat_table(runs, sec, cliffs), cliffs)
    assert f"over a test file (the file, not the drive, is the span), starting {state}" in words[1]
    assert "from fresh test file (created for this run)" in words[0] and "from as " not in " ".join(words)
