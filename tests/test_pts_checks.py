"""The PTS demand tests' preconditions are checked and their findings gated (issue 38, fifth review, workstream C;
R-loop 1.1, 7.4, R-bare M-8, R-1cpu M9, S6-bare M-5), on the three reviewed runs' real CBW and DIRTH rows
(tests/data/review-s5/pts-demand-s5.csv).

- loop: DIRTH's preconditioning fell 87,045 -> 15,030 IOPS (not steady); its matrix's IOPS fall as demand rises
  (T4 Q4 30,627 against T1 Q1 39,879), so every role landed on T1 Q1 ('max IOPS, optimal, mid, min: 39,879 IOPS
  at T1 Q1'), and T1 Q1's rerun gave 60,002 (1.50x).
- bare and 1cpu: 'max IOPS, optimal: 72,158 / 54,019 IOPS at T4 Q4', the grid's corner, every point far under the
  5,000 µs ceiling (221 / 295 µs); DIRTH not steady (bare's CBW was).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from memstor.analysis import pts_demand
from memstor.analysis.validity import validity_table
from memstor.analysis.validity.pts import pts_rows
from memstor.report import text

ROWS = Path(__file__).parent / "data" / "review-s5" / "pts-demand-s5.csv"
LOOP, BARE, CPU1 = "vm2-loop-fio328", "vm", "vm-1cpu"


def _run(host: str):
    fio = pd.read_csv(ROWS)
    fio = fio[fio["host"] == host]
    valid = validity_table(fio=fio)
    cbw = pts_demand.cbw_table(fio[fio["table"] == "fio-pts-cbw"])
    dirth = pts_demand.dirth_table(fio[fio["table"] == "fio-pts-dirth"])
    return valid, cbw, dirth


def _status(valid: pd.DataFrame, check: str, subject: str) -> pd.Series:
    return valid[(valid["check"] == check) & (valid["subject"] == subject)].iloc[0]


def test_steady_state_not_reached_fails_and_is_said_with_the_result():
    valid, cbw, dirth = _run(LOOP)
    row = _status(valid, "pts_steady_state", "DIRTH preconditioning")
    assert row["status"] == "fail" and row["section"] == "pts" and "15,030-87,045 IOPS" in row["evidence"]
    for r in (row, _run(BARE)[0].pipe(_status, "pts_steady_state", "CBW preconditioning")):  # S11-loop 17
        assert (r["value"] > r["limit"]) == (r["status"] == "fail"), r.to_dict()  # the value is what decided
        assert r["unit"] in ("% (data excursion)", "% (slope excursion)") and r["high"] == r["limit"]
    summary = text.pts_summary(None, None, cbw, dirth, valid).set_index("test")["result"]
    # no result stated where the state still moved (third read R-1cpu M5: page 1 promises failed preconditions'
    # findings are not stated); its points stay in the appendix's table
    assert all(s.startswith("no result stated: steady state not reached (") for s in summary)
    assert not any(re.search(r"most [\d,]+ IOPS", s) or "max IOPS" in s for s in summary)
    from memstor.report.text.first_page import check_names
    assert "`pts_steady_state` (CBW preconditioning; DIRTH preconditioning)" in " ".join(check_names(valid))
    valid_bare, cbw_b, dirth_b = _run(BARE)  # bare's CBW reached steady state (data excursion 4.0 %): said plainly
    assert _status(valid_bare, "pts_steady_state", "CBW preconditioning")["status"] == "pass"
    cbw_text = text.pts_summary(None, None, cbw_b, None, valid_bare)["result"].iloc[0]
    assert cbw_text.startswith("most 76,038 IOPS at T4 Q4")
    # S10-bare 12: its times are fio's total latency (PTS's response time), which the result says once
    assert cbw_text.count("times are response times (fio's total latency, submission included") == 1, cbw_text
    # S11-bare 4: the other sections' means are total latency too; only their p99s are completion p99s
    assert "the other fio sections' p99s are completion p99s (their means are total latency" in cbw_text
    assert "the open loop's are from the intended arrival" in cbw_text  # S15-1cpu 3: §4.4's p99s are response
    assert "not the completion latency of the other sections" not in cbw_text
    assert "response times" not in " ".join(summary)  # no point stated: nothing to say it of


def _steady(valid: pd.DataFrame) -> pd.DataFrame:
    """The validity rows without pts_steady_state: the other checks' effect on the words, apart from it."""
    return valid[valid["check"] != "pts_steady_state"]


def test_iops_falling_with_demand_gives_no_roles():
    valid, _, dirth = _run(LOOP)
    valid = _steady(valid)
    row = _status(valid, "pts_demand", "DIRTH matrix")
    assert row["status"] == "fail" and row["value"] == pytest.approx(30_627 / 39_879, rel=0.01)
    rerun = _status(valid, "pts_repeat", "DIRTH T1 Q1 rerun")
    assert rerun["status"] == "fail" and rerun["value"] == pytest.approx(1.50, abs=0.01)
    result = text.pts_summary(None, None, None, dirth, valid)["result"].iloc[0]
    assert "optimal" not in result and "max IOPS" not in result and "no demand-intensity result" in result
    assert "T1 Q1 1.50× their matrix IOPS" in result
    shown = text.dirth_display(dirth, valid)  # S14-loop 2: its points with no role, not 'nothing in the data'
    assert len(shown) == len(dirth) and shown["role"].str.startswith("none stated").all()
    # the other side: more than the outstanding I/O's ratio (16x) cannot come from one state
    fast = pd.read_csv(ROWS)
    fast = fast[(fast["host"] == BARE) & (fast["table"] == "fio-pts-dirth")]
    fast.loc[fast["point"].str.startswith("m-t4q4"), "iops"] *= 4  # 72,158 x 4 / 13,329 = 21.7x > 16x
    assert {r["status"] for r in pts_rows(fast) if r["check"] == "pts_demand"} == {"fail"}


def test_optimal_at_the_grid_corner_is_not_called_optimal():
    # CPU1: 54,019 at T4 Q4 is 1.20x T2 Q4's 44,947, within its reruns' 0.801x: no maximum (fifth read R-def p6)
    for host, best in ((BARE, "max IOPS: 72,158"), (CPU1, "no maximum located: 54,019")):
        valid, _, dirth = _run(host)
        valid = _steady(valid)
        row = _status(valid, "dirth_optimal", "DIRTH optimal point")
        assert row["status"] == "fail" and row["value"] == 1.0 and "6 of 6 points under the 5,000 µs" in row["evidence"]
        assert _status(valid, "pts_demand", "DIRTH matrix")["status"] == "pass"
        result = text.pts_summary(None, None, None, dirth, valid)["result"].iloc[0]
        assert f"{best} IOPS at T4 Q4" in result and "optimal point not located" in result
        assert "optimal:" not in result and "max IOPS, optimal" not in result
        assert set(text.dirth_display(dirth, valid)["role"]) == ({"max IOPS", "min"} if host == BARE else {"min"})
    # a ceiling inside the matrix places it: bare's ceiling at 150 µs leaves T4 Q4 (221 µs) over it
    fio = pd.read_csv(ROWS)
    fio = fio[(fio["host"] == BARE) & (fio["table"] == "fio-pts-dirth")].assign(ceiling_us=150.0)
    row = next(r for r in pts_rows(fio) if r["check"] == "dirth_optimal")
    assert row["status"] == "pass" and 0 < row["value"] < 1


def test_reruns_within_ten_percent_pass_and_beyond_warn():
    valid, _, _ = _run(BARE)
    got = {s: st for s, st in zip(valid["subject"], valid["status"]) if s.endswith("rerun")}
    assert got == {"DIRTH T4 Q4 rerun": "pass", "DIRTH T2 Q4 rerun": "warn", "DIRTH T1 Q1 rerun": "pass"}


def test_summary_caption_promises_intervals_only_where_there_are_some():
    hir = pd.DataFrame({"recovery_ratio_ci_low": [None, None]})
    assert "no result here has a 95 % interval" in text.summary_caption(hir, None)
    assert "HIR: the segments after an idle, not each wait's first" in text.summary_caption(hir, None)  # R-loop 6.1
    assert "HIR:" not in text.summary_caption(None, None)
    assert "95 % intervals in brackets" in text.summary_caption(hir.assign(recovery_ratio_ci_low=[0.9, None]), None)


HIR = Path(__file__).parent / "data" / "review-s5" / "pts-hir-s5.csv"


def _hir(host: str, rows: pd.DataFrame | None = None):
    from memstor.analysis import pts_recovery
    fio = pd.read_csv(HIR) if rows is None else rows
    fio = fio[fio["host"] == host]
    return pts_recovery.hir_table(fio), validity_table(fio=fio)


def test_hir_names_the_measured_idle_and_says_a_ratio_inside_its_windows_shows_nothing():
    """R-loop 7.2, R-1cpu M10, S6-bare M-6: 'after 0.5 s idle 0.976x; after 1.00 s idle 1.15x' where the idle
    measured was 1.12 and 1.49 s, each ratio from 2 two-second segments against 1-s baseline rounds."""
    hir, valid = _hir(LOOP)
    rows = valid[valid["check"] == "hir_recovery"]
    assert list(rows["status"]) == ["fail", "fail"]
    assert list(rows["subject"]) == ["HIR after 1.12 s idle (0.5 s planned)", "HIR after 1.49 s idle (1.00 s planned)"]
    result = text.pts_summary(hir, None, None, None, valid)["result"].iloc[0]
    assert ("after 1.12 s idle (0.5 s planned) 102,820 IOPS — no recovery ratio: " in result and "0.976" not in result
            and "neither a change nor its absence is shown" in result)  # third read R-1cpu M4: no ratio printed
    assert "2.00-s segments against 1.00-s rounds; 2 segments; the segments' range overlaps the rounds'" in result
    assert "after 0.5 s idle" not in result
    assert list(text.hir_display(hir)["shown"]) == ["no", "no"]


def test_hir_recovery_beyond_the_rounds_either_way_is_shown():
    fio = pd.read_csv(HIR)
    fio = fio[fio["host"] == LOOP].copy()
    seg = fio["phase"] == "access"
    fio.loc[seg, "runtime_s"] = 1.002  # windows of the rounds' length
    extra = fio[seg & (fio["segment"] == 3)].assign(segment=4.0, point=lambda d: d["point"] + "-4")
    fio = pd.concat([fio, extra], ignore_index=True)
    seg = fio["phase"] == "access"
    for factor, word in ((1.3, "above"), (0.7, "below")):
        moved = fio.copy()
        moved.loc[seg & (moved["segment"] >= 2), "iops"] = 105_396.0 * factor * (1 + 0.001 * moved["segment"])
        hir, valid = _hir(LOOP, moved)
        rows = valid[valid["check"] == "hir_recovery"]
        assert set(rows["status"]) == {"pass"} and all(f"every segment {word}" in e for e in rows["evidence"])
        assert "no change" not in text.pts_summary(hir, None, None, None, valid)["result"].iloc[0]


def _xsr(host: str):
    from memstor.analysis import pts_recovery
    sec = pd.read_csv(Path(__file__).parent / "data" / "review-s5" / "pts-xsr-seconds-s5.csv")
    rows = pd.read_csv(Path(__file__).parent / "data" / "review-s5" / "pts-xsr-s5.csv")
    return pts_recovery.xsr_table(sec[sec["host"] == host], rows[rows["host"] == host])


def test_xsr_phase_ending_in_a_collapse_has_no_level_and_no_settle_time():
    """R-loop 7.3: 'SEQ 1024KiB → RND 8KiB: 4,874 → 575 MB/s, settles in 8.00 s', where 575 was the mean of the
    RND phase's last 3 s, 883, 606, 237 MB/s: a collapse under way when the phase ended."""
    loop = _xsr(LOOP)
    first, second = loop.iloc[0], loop.iloc[1]
    assert pd.isna(first["to_level_MBps"]) and pd.isna(first["settle_s"]) and "883, 606, 237" in first["to_level_note"]
    assert pd.isna(second["from_level_MBps"]) and second["to_level_MBps"] == pytest.approx(3_018, rel=0.001)
    result = text.pts_summary(None, loop, None, None)["result"].iloc[0]
    assert "575" not in result.split("mean 575")[0] and "settles in 8" not in result
    assert "SEQ 1024KiB → RND 8KiB: 4,874 MB/s → no level (its last 3 s ran 883, 606, 237 MB/s" in result
    assert list(text.xsr_display(loop)["settles in (s)"]) == ["– (no level)", "1.00"]
    # bare's phases end level (data excursion 1.7-4.3 %): their levels and settle times stand
    bare = _xsr(BARE)
    assert bare["to_level_MBps"].notna().all() and bare["settle_s"].tolist() == [0.0, 0.0]
    assert "at its new level (±10 %) from the first second" in text.pts_summary(None, bare, None, None)["result"].iloc[0]


def test_convergence_axis_shows_a_drift_of_a_few_percent():
    """S6-bare C-6: Figure 4 drew bare's five rounds, 129,112 -> 119,661 IOPS (a 7.6 % monotone fall, the reason
    steady state is 'not shown'; build/s5-bare-data/processed/vm/fio-steady-state.csv rounds 1-5) on an axis from 0,
    flat. A collapse (the lowest round under half the highest) keeps the axis from 0."""
    from memstor.report.plots import steady_state as ssfigs
    from test_steady_state_plots import rounds_frame
    bare = [129_111.776447, 125_810.783824, 123_731.536926, 121_861.277445, 119_661.008487]
    lo, hi = ssfigs.convergence_figure(rounds_frame(bare)).axes[0].get_ylim()
    assert 100_000 < lo < 119_661 and 129_112 < hi < 135_000
    assert (129_112 - 119_661) / (hi - lo) > 0.5  # the fall takes most of the axis (was 7 % of it)
    lo, _ = ssfigs.convergence_figure(rounds_frame([87_045, 34_113, 24_347, 15_030, 17_819])).axes[0].get_ylim()
    assert lo == 0.0  # loop DIRTH's preconditioning fall, 5.8x: from 0


def test_dirth_histograms_keep_only_the_roles_the_checks_support():
    valid, _, dirth = _run(BARE)
    hist = pd.DataFrame({"host": BARE, "role": ["max IOPS", "optimal", "mid", "min"], "latency_us": 1.0})
    assert text.gated_histograms(hist, valid).empty  # bare's DIRTH: steady state not reached, no roles at all
    assert list(text.gated_histograms(hist, _steady(valid))["role"]) == ["max IOPS", "min"]  # dirth_optimal alone
    valid_loop, _, _ = _run(LOOP)
    assert text.gated_histograms(hist.assign(host=LOOP), valid_loop).empty
    assert list(text.gated_histograms(hist, None)["role"]) == ["max IOPS", "optimal", "mid", "min"]


def test_the_steady_state_reason_names_both_excursions():
    """Third read S7-bare M-8: DIRTH's reason cited the data excursion (12.7 %, within 20 %) while the slope
    excursion (13.7 %, over 10 %) failed: the words give both with both limits, from the check's evidence."""
    valid, _, dirth = _run(LOOP)
    result = text.pts_summary(None, None, None, dirth, valid)["result"].iloc[0]
    assert "% and slope excursion " in result and "(PTS: at most 20 % and 10 %)" in result
