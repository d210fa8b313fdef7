"""Issue 38, fifth reads, workstream C: the DIRTH maximum within its reruns' spread (R-def p6) and the CSV tables
saying what the PDF says (R-def 7, 24, 31; S9-bare C-5), on the report tables of the real defects run
(tests/data/review-s9c/SOURCES.md) and the bare run's DIRTH rows (tests/data/review-s8c)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from memstor.report import csv_gate, text
from memstor.report.text import pts

DATA = Path(__file__).parent / "data" / "review-s9c"
S8C = Path(__file__).parent / "data" / "review-s8c"


def _t(name: str, run: str = "defects") -> pd.DataFrame:
    return pd.read_csv(DATA / f"{name}-{run}.csv")


def test_a_highest_dirth_point_within_the_reruns_spread_is_no_maximum():
    dirth, v = _t("dirth"), _t("validity-pts")
    said = text.pts_summary(None, None, None, dirth, v).iloc[0]["result"]
    assert "max IOPS:" not in said                                    # was 'max IOPS: 45,546 IOPS at T4 Q4'
    assert "no maximum located: 45,546 IOPS at T4 Q4 and 45,028 at T2 Q4 are 1.01x apart, within the reruns' " \
           "spread of up to 1.53x (reruns at 0.739-1.53x of their matrix points)" in said
    assert not text.gated_roles(dirth, v)["role"].fillna("").str.contains("max IOPS").any()


def test_a_maximum_beyond_the_reruns_spread_stands():
    dirth, v = pd.read_csv(DATA / "dirth-bare.csv"), pd.read_csv(DATA / "validity-pts-bare.csv")
    assert pts.max_within_spread(dirth, v) == ""                    # 58,229 at T4 Q4, 1.28x T2 Q4; reruns <= 1.02x
    assert text.gated_roles(dirth, v)["role"].fillna("").str.contains("max IOPS").any()
    assert "max IOPS: 58,229 IOPS at T4 Q4" in text.pts_summary(None, None, None, dirth, v).iloc[0]["result"]
    s8 = pd.read_csv(S8C / "dirth-bare.csv")                         # s8: 45,070 vs 34,540 (1.30x), a rerun 0.732x
    assert pts.max_within_spread(s8, pd.read_csv(S8C / "validity-pts-bare.csv")).endswith(
        "within the reruns' spread of up to 1.37x (reruns at 0.732-1.06x of their matrix points)")


def test_dirth_csv_names_only_the_roles_the_pdf_states_and_why():
    out = csv_gate.gate_dirth(_t("dirth"), _t("validity-pts")).set_index(["threads", "qd"])
    assert set(_t("dirth")["role"].dropna()) == {"min", "mid", "max IOPS, optimal"}   # as the table was written
    assert out["role"].fillna("").eq("").all()
    assert out.loc[(1, 1), "not_valid"] == "role min not stated: its rerun failed pts_repeat"
    assert out.loc[(4, 4), "not_valid"].startswith("role max IOPS, optimal not stated: dirth_optimal failed; "
                                                   "no maximum located: 45,546 IOPS at T4 Q4")
    hist = csv_gate.gated_histograms(_t("dirth_histograms"), _t("validity-pts"))
    assert len(_t("dirth_histograms")) == 12 and len(hist) == 3        # min, mid, optimal gone; max IOPS without
    assert len(csv_gate.gated_histograms(_t("dirth_histograms"), _t("validity-pts"), _t("dirth"))) == 0  # the matrix
    kept = _t("validity-pts").assign(status="pass")                    # the other side: checks that pass keep them
    assert csv_gate.gate_dirth(_t("dirth"), kept)["role"].fillna("").ne("").sum() == 3


def test_steady_state_csv_is_not_achieved_where_the_pdf_says_not_shown():
    s = _t("steady_state")
    assert s.loc[0, "ss_status"] == "achieved" and bool(s.loc[0, "valid"]) and not s.loc[0, "steady_shown"]
    out = csv_gate.gate_steady_csv(s).iloc[0]
    assert out["ss_status"] == "not shown (window rule met)" and not out["ss_achieved"] and not out["valid"]
    assert out["not_valid"].startswith("not a steady-state figure: not shown: window rule met at round 5")
    shown = csv_gate.gate_steady_csv(s.assign(steady_shown=True)).iloc[0]
    assert shown["ss_status"] == "achieved" and shown["valid"]


def test_summary_csv_flags_the_open_loop_points_that_did_not_hold():
    out = csv_gate.gate_summary(_t("summary"), _t("load_latency"))
    ol = out[out["config"].str.contains(r"-u\d+-")]                  # the offered rates (not the latency_target runs)
    assert len(ol) == 16 and (ol["open_loop_held"] == False).all()   # noqa: E712 (the cell is False, not empty)
    u98 = ol[ol["config"].str.contains("randread-bs4k-u98-")].iloc[0]
    assert round(u98["iops"]) == 157878 and u98["not_valid"].startswith("not valid: the open loop did not hold")
    assert out.loc[out["experiment"] != "fio-load-latency", "open_loop_held"].isna().all()
    held = csv_gate.gate_summary(_t("summary"), _t("load_latency").assign(open_loop=True))
    assert (held["not_valid"] == "").all()


def test_the_dirth_figure_captions_promise_only_the_roles_drawn():
    dirth, v = _t("dirth"), _t("validity-pts")
    assert "no optimal point ringed" in text.demand_caption(text.gated_roles(dirth, v))   # dirth_optimal failed
    assert "none drawn" in text.histograms_caption(text.gated_histograms(_t("dirth_histograms"), v, dirth))
    kept = v.assign(status="pass")
    assert "the optimal point ringed." in text.demand_caption(text.gated_roles(dirth, kept))
    assert text.histograms_caption(text.gated_histograms(_t("dirth_histograms"), kept, dirth)).endswith(
        "at the minimum, mid, optimal points.")                       # max IOPS: still within the reruns' spread


def test_a_level_after_a_cliff_says_how_long_it_held_and_promises_no_use():
    w = _t("wsat", "bare")
    said = text.wsat_sentences(w, None)
    four = next(p for p in said if "4 KiB random write" in p)
    assert "(0.44 of the burst), held its last 13 whole seconds of 22.6 s (not shown to last longer)." in four
    assert "what long writes get" not in four and "spec comparison uses it" not in four   # no spec row used it
    assert "fio's whole-run figure" not in four                       # 192.0 against 190.4: within 2 %


def test_one_run_with_two_figures_gives_both_and_the_reason():
    w = _t("wsat", "bare")
    big = next(p for p in text.wsat_sentences(w, None) if "128 KiB" in p)
    assert "the mean of those seconds is 1,369 MB/s" in big
    assert "fio's whole-run figure: 1,508 MB/s (-9.2 % apart, beyond series_matches_whole's ±2 %)." in big
    cell = text.wsat_display(w).set_index("workload").loc["128 KiB sequential write", "sustained (MB/s)"]
    assert cell == "no level (too short); mean 1,369"                 # was '1,369 (mean; too short for a level)'


def test_wsat_csv_states_no_level_for_a_run_too_short_to_tell_one():
    w = _t("wsat", "1cpu")
    assert w.loc[0, "sustained_MBps"] == w.loc[0, "burst_MBps"] and bool(w.loc[0, "valid"])
    out = csv_gate.gate_wsat_csv(w)
    assert pd.isna(out.loc[0, "sustained_MBps"]) and pd.isna(out.loc[0, "burst_MBps"]) and not out.loc[0, "valid"]
    assert out.loc[0, "not_valid"].startswith("no level: 18 whole seconds of 19") and out.loc[0, "series_MBps"] > 228
    bare = csv_gate.gate_wsat_csv(_t("wsat", "bare")).set_index("workload")   # the other side: a level stands
    assert round(bare.loc["4 KiB random write", "sustained_MBps"]) == 130


def test_page_one_says_how_long_the_level_after_a_cliff_held():
    from memstor.report.text.first_page import _wsat_bullet

    row = _t("wsat", "bare").iloc[0]                                 # 4 KiB: cliff at 2.4 GB, 130 MB/s after it
    assert _wsat_bullet(row).endswith("then 130 MB/s over its last 13 whole seconds")
    assert _wsat_bullet(row.drop("level_seconds")).endswith("then 130 MB/s")


def test_a_small_volume_written_is_not_rounded_up():
    from memstor.report.text.wsat import _gb

    assert _gb(0.067108864) == "0.067" and _gb(4.294967296) == "4.3"  # R-def p5: 64 MiB was '0.1 (target reached)'
