"""The seventh independent read of the bare run (issue 38, S11-bare), built from the same run's tables as the sixth
(tests/data/review-s10, SOURCES.md): the report rebuilt at e41b329 and read again."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from memstor.analysis.load_latency import BELOW_NOT_HELD, slo
from memstor.report.text.openloop import _slo_sentences, slo_display

DATA = Path(__file__).resolve().parent / "data" / "review-s10"


def writes(**assign) -> pd.DataFrame:
    g = pd.read_csv(DATA / "load_latency-bare.csv")
    return g[g["rw"] == "randwrite"].assign(**assign)


def test_no_answer_where_the_rates_below_the_lowest_held_did_not_hold():
    """S11-bare 1: 'none: even the lowest held rate misses it' and 'no measured rate meets it' from u90 (27,913 IOPS,
    p99 3,744 µs), the only one of 8 randwrite rates that held, the 6 below it did not: nothing below u90 is known."""
    g = writes()
    s = slo(g, [1000.0])
    assert s["censored_by"].tolist() == [BELOW_NOT_HELD]
    assert slo_display(s)["max IOPS meeting it"].tolist() == [
        "not determined: the lowest rate that held misses it, the lower ones did not hold (from the 1 of 8 rates "
        "that held)"]
    (said,) = _slo_sentences(s, g, 31235.0)
    assert said.endswith("the rates below it did not hold, so whether a lower rate meets it is not determined.")
    assert "no measured rate meets it" not in said


def test_where_the_lowest_rate_held_a_miss_there_is_the_answer():
    g = writes(open_loop=True, achieved_pct=100.0)                        # every rate held
    s = slo(g, [100.0])                                                  # u10's p99 misses 100 µs
    assert s["censored_by"].tolist() == [""]
    (said,) = _slo_sentences(s, g, 31235.0)
    assert said.endswith("no measured rate meets it.") and slo_display(s)["max IOPS meeting it"].iloc[0].startswith(
        "none: even the lowest rate misses it")
    above = g.assign(open_loop=g["utilisation_pct"] <= 50)               # the lowest held, some above did not
    assert slo(above, [100.0])["censored_by"].tolist() == [""]


def test_the_sweeps_rate_is_not_set_beside_a_cut_off_search_whose_own_run_met_the_target():
    """S11-bare 12: 'no answer: cut off by its 2-s run at QD 16 ...; the closed QD sweep met it up to 9,184 IOPS
    (QD1, p99 537 µs)' beside fio's own 4-job run at 45,360 IOPS, p99 840 µs: the one-job sweep understated it."""
    cut = pd.DataFrame({"host": ["vm"], "rw": ["randread"], "target_p99_us": [1000.0], "max_iops": [float("nan")],
                        "censored": [False], "fio_latency_target_iops": [float("nan")], "fio_latency_depth": [16],
                        "fio_latency_target_p99_us": [839.68], "fio_latency_cut_off_s": [2.001],
                        "closed_sweep_iops": [9184.0], "closed_sweep_qd": ["QD1"], "closed_sweep_p99_us": [537.0]})
    column = "fio latency_target, closed loop (IOPS, depth per job, its p99)"
    (cell,) = slo_display(cut)[column].tolist()
    assert cell.startswith("no answer: cut off by its 2-s run at QD 16") and "sweep" not in cell
    (missed,) = slo_display(cut.assign(fio_latency_target_p99_us=1200.0))[column].tolist()
    assert missed.endswith("; the most IOPS of a closed QD sweep's point whose completion p99 met it: 9,184 (QD1, 537 µs; the submission "
                           "time is not in it, so whether the total met it is not shown)")  # S12-bare9 1


def test_page_one_lists_a_check_that_leaves_out_single_runs_apart_from_those_whose_findings_go():
    """S11-bare 2: page 1 put hierarchy_cpu_share under 'Failed checks (their findings are not stated)' while §4.5
    stated the levels of the runs within the band, as the check's consequence says. (The 1-CPU run's validity.)"""
    from memstor.report.text.first_page import check_names

    v = pd.read_csv(DATA.parent / "review-s11" / "headline" / "validity.csv")
    lines = check_names(v)
    (whole,) = [ln for ln in lines if "Failed checks (their findings are not stated)" in ln]
    (runs,) = [ln for ln in lines if "Failed checks of single runs (those runs are left out" in ln]
    assert "hierarchy\\_cpu\\_share" not in whole and "`hierarchy_cpu_share` (mem-hierarchy mlp; mem-hierarchy " \
        "working\\_set)" in runs
    assert "`open_loop_held` (randread; randwrite)"  # no rate held: nothing read (S21-cpu1 4) in whole
    failed = set(v.loc[v["status"] == "fail", "check"])
    assert all(f"`{c}`" in whole + runs for c in failed)                 # every failed check still named
    none = check_names(v.assign(consequence=""))
    assert not any("single runs" in ln for ln in none)


def test_lower_rates_are_advised_only_where_the_lowest_rate_was_not_late():
    """S11-bare 5: randwrite's way out 'lower offered rates, or a deeper request queue' while its lowest rates, u10
    and u30, were late too (p99 lag 8,110 µs against a bound of 1,517 µs at u10). The other side: a lowest rate that
    held keeps the advice; causes that never advise lower rates say nothing of them."""
    from memstor.report.text.openloop_causes import way_out

    g = writes()
    said = way_out({"request_queue"}, g)
    assert said == ("For an open loop: a deeper request queue on the disk (its nr_requests); lower offered rates are "
                    "not shown to help: the lowest, u10 (3,123 IOPS), was late too (p99 lag 8,110 µs against its bound "
                    "of 1,517 µs); until then read the queue-depth sweep's closed-loop curve.")
    held = g.assign(generator_checks=g["generator_checks"].where(g["utilisation_pct"] != 10, "ok"))
    assert "lower offered rates, or a deeper request queue" in way_out({"request_queue"}, held)
    assert "lower offered rates" not in way_out({"wake", "pause"}, g)


def test_a_one_job_point_below_the_sweeps_most_is_not_said_within_the_spread():
    """S11-bare 11: knee_sweep_agrees said '0.76x it, within the largest gap between two fresh runs of one read job measured here, 1.16×' (23,733
    IOPS at QD32 elsewhere against the sweep's 31,235): 0.76 lies below 1/1.16; below the most the check allows it."""
    from memstor.analysis.validity.fits import _sweep_agrees

    points = pd.read_csv(DATA / "summary-bare.csv")
    w = _sweep_agrees(pd.Series({"host": "vm", "rw": "randwrite"}), points)
    assert w["status"] == "pass" and "0.76x it, not above it (the check allows up to the largest gap between two " \
        "fresh runs of one write job measured here, 1.16× (one pair))" in w["evidence"] and "within" not in w["evidence"]
    above = points.copy()
    for exp, iops in (("fio-block-size", 33_000.0), ("fio-rw-ratio", 32_000.0)):   # 1.06x the sweep's most
        at = (above["experiment"] == exp) & (above["iodepth"] == 32) & (above["numjobs"] == 1) & (
            above["bs_bytes"] == 4096) & above["rw"].isin(["randwrite", "randrw"])
        above.loc[at, "iops"] = iops
    said = _sweep_agrees(pd.Series({"host": "vm", "rw": "randwrite"}), above)["evidence"]
    assert "1.06x it, within the 10 % assumed" in said, said


def test_the_mixed_load_maps_rows_carry_their_response_p99_and_achieved_mbps():
    """S11-bare 10: summary.csv's mixed-load-map rows had lat_p99_us empty (the table keeps ioarrive's response p99
    as resp_p99_us: 815,792 µs at w30-r50) and bw_MBps from the I/Os whose arrival fell in the window (103.5 MB/s
    beside 19,028 achieved IOPS = 77.9 MB/s). The p99 now fills from resp_p99_us; new runs write the achieved MB/s."""
    from memstor.analysis.summary import summary_table
    from memstor.experiments._load_ioarrive import _achieved_MBps

    m = pd.read_csv(DATA.parent / "review-s11" / "bare" / "mixed-load-map-processed.csv")
    s = summary_table(m.assign(host="vm", experiment="mixed-load-map"))
    cell = s[s["config"].str.contains("-w30-r50-") & (s["direction"] == "read")].iloc[0]
    assert round(cell["lat_p99_us"]) == 815_792 and round(cell["lat_mean_us"]) == 624_917
    assert s.loc[s["direction"] != "total", "lat_p99_us"].notna().all()
    assert _achieved_MBps(19_027.5, {"bs_bytes": 4096}) == 19_027.5 * 4096 / 1e6
    assert _achieved_MBps(None, {"bs_bytes": 4096}) is None and _achieved_MBps(100.0, {}) is None
