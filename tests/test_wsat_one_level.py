"""A write-saturation run is 'one level' only where its series is one (issue 38, fifth review, workstream C;
R-loop 6.1, R-bare M-1, R-1cpu M8, S6-bare M-1, C-7), on the three reviewed runs' real per-second series
(tests/data/review-s5/wsat-*-s5.csv).

- loop (fio-3.28): 22 whole seconds rising from a median 154 to 249 MB/s (Mann-Whitney p = 0.0016), read
  'no cliff — one level of 185 [142, 228] MB/s from start to end': wsat_one_level fails, no level is stated.
- bare: 15 whole seconds (wsat_series warns), read 'no cliff in 4.29 GB written: 280 MB/s throughout'.
- 1cpu: 18 whole seconds (wsat_series warns), read likewise '229 MB/s throughout'.
- Without a cliff burst and sustained are one window: 'sustained / burst 1.00' was by construction.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from memstor.analysis import wsat
from memstor.analysis.validity import gate, validity_table
from memstor.report import text
from memstor.report.text.first_page import _wsat_bullet

REVIEW = Path(__file__).parent / "data" / "review-s5"
RUN4K = "randwrite-bs4k-qd32x4-x4-max60-io_uring-d1-f1g-rep1"


def _gated(host: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the gated wsat table, the validity rows) of one reviewed run, from its real rows and seconds."""
    runs = pd.read_csv(REVIEW / "wsat-runs-s5.csv")
    secs = pd.read_csv(REVIEW / "wsat-seconds-s5.csv")
    runs, secs = runs[runs["host"] == host], secs[secs["host"] == host]
    table = wsat.wsat_table(runs, secs, wsat.wsat_cliffs(runs, secs, None))
    valid = validity_table(wsat=table)
    return gate.gate_wsat(table, valid), valid


def _check(valid: pd.DataFrame, check: str, point: str = RUN4K) -> pd.Series:
    return valid[(valid["check"] == check) & valid["subject"].str.contains(point)].iloc[0]


def test_loop_rising_series_is_not_one_level():
    w, valid = _gated("vm2-loop-fio328")
    row = _check(valid, "wsat_one_level")
    assert row["status"] == "fail" and row["value"] == pytest.approx(248.74 / 154.13, rel=0.01)
    assert "154 MB/s" in row["evidence"] and "249 MB/s" in row["evidence"] and "p = 0.0016" in row["evidence"]
    r = w[w["point"] == RUN4K].iloc[0]
    assert r["cliffs"] == 0 and pd.isna(r["sustained_MBps"]) and not r["valid"]
    words = text.wsat_sentences(w, None)[0]
    assert "one level of" not in words and "no level is stated" in words and "wsat_one_level" in words
    assert "187.5" in words or "188" in words  # fio's whole-run figure stands


def test_short_series_says_too_short_not_one_level():
    for host, secs, mean in (("vm", 15, "280"), ("vm-1cpu", 18, "229")):
        w, valid = _gated(host)
        assert _check(valid, "wsat_series")["status"] == "warn"
        assert _check(valid, "wsat_one_level")["status"] == "pass"  # no shift shown: bare p = 0.80, 1cpu 0.052
        r = w[w["point"] == RUN4K].iloc[0]
        words = text.wsat_sentences(w[w["point"] == RUN4K], None)[0]
        assert "from start to end" not in words and f"{secs} whole seconds are too short" in words
        assert "[" not in words and "±" not in words  # R-bare C-11: no interval for a level not shown
        bullet = _wsat_bullet(r)
        assert "throughout" not in bullet and not bullet.startswith("Sustained")
        assert f" s ({secs} whole seconds), too short to tell a cliff from noise" in bullet and mean in bullet
        if host == "vm-1cpu":  # R-1cpu C1 (fifth read): the 4.29 GB took fio's 18.7 s, not the 18 whole seconds
            assert "GB written in 18.7 s (18 whole seconds)" in bullet


def test_long_flat_series_is_one_level_and_a_drift_either_way_is_not():
    t = np.arange(1, 61, dtype=float)
    rng = np.random.default_rng(3)
    runs = pd.DataFrame([{"host": "h", "point": p, "config": p, "rw": "randwrite", "direction": "write",
                          "bs_bytes": 4096, "span": "file", "span_bytes": 1 << 30, "state_at_start": "fresh",
                          "tgbw_GB": 30.0, "stopped_by": "bytes", "status": "done", "runtime_s": 60.2,
                          "bw_MBps": 500.0} for p in ("flat", "up", "down")])
    level = {"flat": np.full(60, 500.0), "up": np.linspace(420, 580, 60), "down": np.linspace(580, 420, 60)}
    secs = pd.concat([pd.DataFrame({"host": "h", "point": p, "t_s": t, "bw_MBps": v * (1 + 0.02 * rng.standard_normal(60)),
                                    "gb_written": np.cumsum(v) / 1e3}) for p, v in level.items()])
    table = wsat.wsat_table(runs, secs, wsat.wsat_cliffs(runs, secs, None))
    valid = validity_table(wsat=table)
    status = {p: _check(valid, "wsat_one_level", p)["status"] for p in level}
    assert status == {"flat": "pass", "up": "fail", "down": "fail"}
    w = gate.gate_wsat(table, valid)
    flat = w[w["point"] == "flat"]
    assert flat["cliffs"].iloc[0] == 0 and "no cliff — one level (its halves' medians" in text.wsat_sentences(flat, None)[0]
    assert _wsat_bullet(flat.iloc[0]).startswith("Write saturation, 4 KiB random write: no cliff in 30.0 GB written, one level")


def test_burst_and_sustained_of_one_window_are_not_compared():
    w, _ = _gated("vm")
    r = w[w["point"] == RUN4K].iloc[0]
    assert pd.isna(r["sustained_over_burst"])  # was 1.00: the same 15 seconds divided by themselves
    shown = text.wsat_display(w[w["point"] == RUN4K]).iloc[0]
    # too short to tell a cliff from noise: no cliff count (third read R-loop 5.1: 'cliffs 0' of runs that could
    # not tell), burst '–'; the same row with a series long enough (no caveat) reads one window, 0 cliffs
    assert shown["burst (MB/s)"] == "–" and shown["cliffs"] == "not determined" and shown["sustained / burst"] == "–"
    assert shown["sustained (MB/s)"] == "no level (too short); mean 280"  # R-bare C-11: no '[275, 285]'
    told = text.wsat_display(w[w["point"] == RUN4K].assign(caveat="")).iloc[0]
    assert told["burst (MB/s)"] == "– (no cliff: one level)" and told["cliffs"] == "0"
    gone = text.wsat_display(w[w["point"] == RUN4K].assign(sustained_MBps=float("nan"))).iloc[0]
    assert gone["cliffs"] == "not determined"  # a level the gate withheld (wsat_one_level failed: loop's 4 KiB)
    words = text.wsat_sentences(w[w["point"] == RUN4K], None)[0]
    assert "(so no interval is given for it). A drive" in words


def test_cliffs_not_found_only_where_a_run_could_tell():
    """R-loop p5 (fourth read): 'Cliffs: none — no cliff found' below a table reading 'not determined' for both
    runs (wsat_one_level failed for 4 KiB); bare's 15 s run warned too short: not determined either; a run whose
    level stands and that was long enough says 'none found'."""
    w, _ = _gated("vm2-loop-fio328")
    words = text.cliffs_empty(w)
    assert "no cliff found" not in words and words.startswith("not determined: no run could show one (4 KiB random")
    from memstor.report.export import Table  # fifth read R-loop: no 'none — ' before it

    empty = Table(pd.DataFrame(), caption="Cliffs", empty=words)._empty_text()
    assert empty.startswith("Cliffs: not determined: no run") and "none" not in empty.split(":")[1]
    assert Table(pd.DataFrame(), caption="Cliffs", empty="x")._empty_text() == "Cliffs: none — x."
    one = w.copy()
    one["sustained_MBps"], one["caveat"] = 200.0, ""
    assert text.cliffs_empty(one) == "no cliff found in any run"
    mixed = one.copy()
    mixed.loc[mixed.index[1], "sustained_MBps"] = float("nan")
    assert text.cliffs_empty(mixed).startswith("no cliff found in 4 KiB random write; not determined for 128 KiB")


def test_stalls_of_the_series_are_said_level_or_not():
    """R-loop p5: the 4 KiB series' seconds 5, 10 and 15 at 26-39 MB/s (p99 0.68-0.85 s) beside 145-249 MB/s,
    never mentioned; bare's series (262-ish MB/s throughout) has none."""
    secs = pd.read_csv(REVIEW / "wsat-seconds-s5.csv")
    w, _ = _gated("vm2-loop-fio328")
    words = text.wsat_sentences(w, None, secs)[0]
    assert "Stalls: seconds 5, 10 and 15 at 26.1-38.7 MB/s" in words and "0.68-0.85 s" in words
    assert "Stalls" not in text.wsat_sentences(w, None)[0]
    bare, _ = _gated("vm")
    assert "Stalls" not in text.wsat_sentences(bare, None, secs)[0]


def test_a_shift_outside_the_band_that_the_test_cannot_tell_passes_on_its_p():
    """S11-loop 17: a pass by the Mann-Whitney arm printed value 1.109 beside limit 1.1. Now its value is p against
    LEVEL_ALPHA (value >= limit where it passes), the halves' ratio in the unit and evidence; the loop run's real
    rise (p = 0.0016) still fails on its ratio."""
    from memstor.analysis.validity import wsat as vw

    r = pd.Series({"host": "vm", "first_half_MBps": 1000.0, "second_half_MBps": 1109.0, "level_p": 0.86,
                   "level_seconds": 20, "cliffs": 0})
    row = vw._one_level(r, "write 128 KiB")
    assert (row["status"], row["value"], row["limit"], row["low"]) == ("pass", 0.86, vw.LEVEL_ALPHA, vw.LEVEL_ALPHA)
    assert row["unit"] == "Mann-Whitney p (halves 1.11x)" and "not shown apart" in row["evidence"]
    apart = vw._one_level(r.copy().replace({0.86: 0.01}), "write 128 KiB")
    assert (apart["status"], apart["unit"]) == ("fail", "x first half") and apart["value"] > apart["limit"]
