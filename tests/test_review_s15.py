"""The twelfth independent reads (sessions 14-15, issue 38): statements a reader found its own report's tables
contradict, from the reviewed run's own rows (tests/data/review-s12; SOURCES.md there), tested on both sides."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from memstor.analysis.load_latency import closed_meeting
from memstor.report.text.openloop import slo_display
from memstor.report.text.queueing import knee_words

S12 = Path(__file__).resolve().parent / "data" / "review-s12"
DATA = Path(__file__).resolve().parent / "data" / "review-s15"
S14 = Path(__file__).resolve().parent / "data" / "review-s14"
S9 = Path(__file__).resolve().parent / "data" / "review-s9c"
CACHES = {"L1d_bytes": 49152, "L2_bytes": 1310720, "L3_bytes": 50331648}
SLO_COL = "fio latency_target, closed loop (IOPS, depth per job, its p99)"


def _loop_runs() -> pd.DataFrame:
    """The loop run's summary (one fresh 2-s run per configuration in the quick profile) as the per-run rows
    closed_meeting reads."""
    return pd.read_csv(S12 / "summary-loop.csv").assign(ok=True)


def test_the_closed_answer_counts_the_sweeps_job_measured_fresh_in_other_experiments():
    """S15-loop 1: the SLO table's closed answer for randwrite at p99 <= 1 ms was the queue-depth sweep's 129,387
    IOPS (QD16, 264 µs) while fio-rw-ratio's run of the same job (write-only mix, QD32, 256 MiB, io_uring) met it at
    166,246 IOPS (p99 586 µs). The other sides: randread's fio-rw-ratio point (184,245) is below the sweep's 186,505,
    so the sweep's answer stands; runs over another span are not the sweep's job."""
    runs = _loop_runs()
    host = str(runs["host"].iloc[0])
    write = closed_meeting(runs, host, "randwrite", 1000.0)
    assert (write["closed_sweep_experiment"], write["closed_sweep_qd"]) == ("fio-rw-ratio", "QD32")
    assert round(write["closed_sweep_iops"]) == 166_246 and round(write["closed_sweep_p99_us"]) == 586
    read = closed_meeting(runs, host, "randread", 1000.0)
    assert (read["closed_sweep_experiment"], read["closed_sweep_qd"], round(read["closed_sweep_iops"])) == (
        "fio-queue-depth", "QD16", 186_505)
    other_span = runs["experiment"].isin(["fio-rw-ratio", "fio-block-size"])
    elsewhere = runs.assign(file_size_bytes=runs["file_size_bytes"].where(~other_span, 6 << 30))
    swept = closed_meeting(elsewhere, host, "randwrite", 1000.0)
    assert (swept["closed_sweep_experiment"], swept["closed_sweep_qd"], round(swept["closed_sweep_iops"])) == (
        "fio-queue-depth", "QD16", 129_387)
    tight = closed_meeting(runs, host, "randwrite", 80.0)  # QD1's 77 µs only: the others' p99 miss it
    assert (tight["closed_sweep_experiment"], tight["closed_sweep_qd"]) == ("fio-queue-depth", "QD1")


def test_the_slo_cell_names_the_experiment_whose_closed_run_met_the_target():
    """S15-loop 1 in the PDF's words: 'the most IOPS of a closed run whose completion p99 met it: 166,246 (fio-rw-ratio's
    QD32, 586 µs; ...)'; the sweep's own answer keeps 'the closed QD sweep's' (an empty experiment too: old tables)."""
    loop = pd.read_csv(S12 / "slo-loop.csv")
    met = closed_meeting(_loop_runs(), str(loop["host"].iloc[0]), "randwrite", 1000.0)
    row = loop.index[loop["rw"] == "randwrite"][0]
    other = loop.copy()
    for key, value in met.items():
        other.loc[row, key] = value
    cell = slo_display(other)[SLO_COL].iloc[row]
    assert cell.endswith("; the most IOPS of a closed run whose completion p99 met it: 166,246 (fio-rw-ratio's QD32, 586 µs; "
                         "the submission time is not in it, so whether the total met it is not shown)"), cell
    own = slo_display(loop)[SLO_COL].iloc[row]
    assert "; the most IOPS of a closed QD sweep's point whose completion p99 met it: 129,387 (QD16, 264 µs;" in own, own


def test_a_sweep_that_rose_is_not_said_to_promise_more_where_the_same_job_between_its_last_depths_was_flat():
    """S15-1cpu 1: 'the sweep had not levelled off' (knee) and 'more depth may still add throughput' (page 2) from
    QD16x1's 42,917 to QD64x1's 55,471 IOPS beside fio-block-size's QD32x1 at 58,281: from it the curve is flat
    (-4.8 %). fio-rw-ratio's 10,647 at QD32 is out of line with the sweep and not counted. The other sides: randwrite
    (QD32x1 30,487 and 30,431, then 43,635: +43 %) still rose; bare's two QD32 writes (35,685, 23,126) disagree with
    each other (1.54x), so neither says the curve is flat."""
    from memstor.report.text.queueing import flat_words, knee_sentences

    one = pd.read_csv(S12 / "summary-1cpu.csv")
    assert flat_words(one, "vm", "randread") == (
        "fio-block-size's QD32x1 (58,281 IOPS): QD64x1's 55,471 is -4.8 % from it, no gain beyond the 10 % assumed "
        "for single fresh runs, so more depth is not shown to add throughput")
    assert flat_words(one, "vm", "randwrite") == ""
    bare = pd.read_csv(S12 / "summary-bare.csv")
    assert flat_words(bare, "vm", "randwrite") == ""
    # thirteenth read S16-bare 1: two QD32x1 runs 1.20x apart, QD64x1 below both: a fall, not 'flat'
    bare14 = pd.read_csv(S14 / "summary-bare14.csv")
    assert flat_words(bare14, "vm", "randread") == (
        "fio-rw-ratio's and fio-block-size's QD32x1 (69,472 and 57,869 IOPS): QD64x1's 55,794 is -19.7 % and -3.6 % "
        "from them, no gain beyond the largest gap between two fresh runs of one read job measured here, 1.20× (one pair), so more depth is not shown to add "
        "throughput")
    read, write = knee_sentences(pd.read_csv(DATA / "knee-1cpu.csv"), one)
    assert "(the sweep had not levelled off, so the data set no upper bound; X_best is one run with 4 jobs" in read, read
    assert " Yet fio-block-size's QD32x1 (58,281 IOPS): QD64x1's" in read and "Yet" not in write, (read, write)
    validity = pd.DataFrame({"host": "vm", "check": "knee_plateau", "subject": ["randread", "randwrite"],
                             "status": "fail"})
    said = knee_words(validity, "vm", one)
    assert ("no knee was shown for randwrite: its sweep still rose at the deepest (knee_plateau), so more depth may "
            "still add throughput; no knee was shown for randread: its sweep still rose at the deepest (knee_plateau); "
            "yet fio-block-size's QD32x1 (58,281 IOPS): QD64x1's 55,471 is -4.8 % from it, no gain beyond the 10 % "
            "assumed for single fresh runs, so more depth is not shown to add throughput.") in said, said


def test_a_write_saturation_run_with_one_level_has_no_burst_of_its_own_in_the_csv():
    """S15-bare 6: wsat.csv's 4 KiB random write (no cliff, one level of 209 MB/s) gave burst_MBps 209.18 [168.82,
    249.55], the sustained level again, where the PDF says '– (no cliff: one level)'. Now the burst and its ratio are
    empty. The other sides: a run with a cliff keeps its burst (an earlier bare run's 4 KiB write: a cliff at 2.4 GB),
    and so does a run with no cliff whose level rose after its burst (170.8 then 224.9 MB/s)."""
    from memstor.report import csv_gate

    w = pd.read_csv(S14 / "wsat-bare14.csv")
    one = w.set_index("workload").loc["4 KiB random write"]
    assert one["cliffs"] == 0 and one["burst_MBps"] == one["sustained_MBps"]  # as written before the fix
    out = csv_gate.gate_wsat_csv(w).set_index("workload").loc["4 KiB random write"]
    assert out[["burst_MBps", "burst_MBps_ci_low", "burst_MBps_ci_high", "sustained_over_burst"]].isna().all()
    assert round(out["sustained_MBps"]) == 209 and out["cliffs"] == 0
    cliff = csv_gate.gate_wsat_csv(pd.read_csv(S9 / "wsat-bare.csv")).iloc[0]
    assert cliff["cliffs"] >= 1 and cliff["burst_MBps"] > cliff["sustained_MBps"]
    rose = csv_gate.gate_wsat_csv(pd.read_csv(S12 / "wsat-bare.csv")).iloc[0]
    assert rose["cliffs"] == 0 and round(rose["burst_MBps"], 1) == 170.8 and round(rose["sustained_MBps"], 1) == 224.9


def test_the_page_walk_cost_starts_where_4k_pages_are_slower_themselves():
    """S15-bare 4: the TLB row said 'from 1.4 MiB' and 23.6 ns (median of 6 sizes) where 4 KiB pages were 1.2 ns
    faster at 1.4 MiB (16.9 against 18.1 ns): the 3-size median reached across the 2-4 MiB runs hierarchy_cpu_share
    left out. Now the cost starts at 5.7 MiB, the first size slower by more than 10 % itself: 24.1 ns over 5 sizes.
    The other side: an earlier bare run whose first smoothed size is slower itself keeps its start (724 KiB, 11.3 ns)."""
    from memstor.analysis import hierarchy as h

    def cost(path: Path) -> dict:
        ws = h.working_set_table(pd.read_csv(path))
        return h.tlb_cost(ws[h.cpu_held(ws["cpu_share"])])

    now = cost(S14 / "mem-hierarchy-bare14.csv")
    assert (now["from_bytes"], round(now["cost_ns"], 1)) == (5_931_648, 24.1), now
    assert "over 5 sizes from 5,793 KiB" in now["note"]
    before = cost(S12 / "mem-hierarchy-bare.csv")
    assert (before["from_bytes"], round(before["cost_ns"], 1)) == (741_440, 11.3), before


def test_the_tlb_rows_clocks_use_the_clock_the_tables_header_states():
    """S15-bare 5: the header said 'at 3.37 GHz' and the TLB row's 23.6 ns read 79.9 clocks (its own two runs' mean
    calibration, 3.39 GHz); 23.6 x 3.37 = 79.5. Now every row with clocks converts at the levels' one clock."""
    from memstor.analysis import hierarchy as h

    levels = h.cache_levels(pd.read_csv(S14 / "mem-hierarchy-bare14.csv"), CACHES)
    ghz = (pd.to_numeric(levels["clocks"]) / pd.to_numeric(levels["latency_ns"])).dropna()
    assert len(ghz) == 4 and ghz.max() - ghz.min() < 1e-9 and round(ghz.iloc[0], 2) == 3.37, levels
    assert levels.set_index("level").loc[h.TLB_LEVEL, "clocks"] == pytest.approx(24.13 * 3.374, rel=1e-3)


def test_a_deeper_sweep_point_that_bought_throughput_does_not_tell_depth_from_job_count():
    """S16-1cpu 1: 'the sweep's latency at its most came with its depth (at 4 jobs too, the sweep's QD32x4 took 2,387 µs
    with 128 in flight)' for writes, where that QD32x4 point measured 53,507 IOPS, 1.185x the latency_target run's
    45,166 and beyond the 10 % spread: its depth bought throughput, so it does not separate depth from job count. The
    other side: the reads' QD32x4 (59,753, below the run's 65,752) still does."""
    from memstor.report.text.queueing import fewer_in_flight

    one = pd.read_csv(S12 / "summary-1cpu.csv")
    sweep = one[(one["experiment"] == "fio-queue-depth") & (one["numjobs"] == 1)]

    def best(rw: str) -> pd.Series:
        own = sweep[sweep["rw"] == rw]
        return own.loc[own["iops"].idxmax()]

    write = fewer_in_flight(one, "vm", "randwrite", best("randwrite"))
    assert "measured 45,166 IOPS" in write and write.endswith(
        "came with its depth or its job count (4 jobs against the sweep point's 1: this run does not tell which), not "
        "with its throughput"), write
    read = fewer_in_flight(one, "vm", "randread", best("randread"))
    assert read.endswith("came with its depth (at 4 jobs too, the sweep's QD32x4 took 2,139 µs with 128 in flight), "
                         "not with its throughput"), read


def test_the_lowest_late_rate_gives_its_mean_in_service_and_blocked_share_beside_the_peak():
    """S16-loop 1: 'the lowest, u10 (27,171 IOPS), already had 313 I/Os in flight against the queue of 128' read as a
    standing queue; 313 was the peak, 39.5 were in service on average and the submissions blocked 7.3 % of the run.
    The other side: a lowest rate that did not fill the queue is 'late too' with its lag (the 1-CPU run's randread)."""
    from memstor.report.text.openloop_causes import _lowest_late

    loop = pd.read_csv(S12 / "load_latency-loop.csv")
    read = _lowest_late(loop[loop["rw"] == "randread"])
    assert read == ("the lowest, u10 (27,171 IOPS), was late too: up to 313 I/Os in flight against the queue of 128 "
                    "(39.5 in service on average), its submissions blocked 7.3 % of the run"), read
    one = pd.read_csv(S12 / "load_latency-1cpu.csv")
    assert _lowest_late(one[one["rw"] == "randread"]) == (
        "the lowest, u10 (5,975 IOPS), was late too (p99 lag 3,023 µs against its bound of 503 µs)")


def test_a_split_depth_says_which_run_is_within_the_sweeps_limit_not_that_they_disagree():
    """S16-loop 4: knee_sweep_agrees said the QD32 writes (166,246 and 155,066 IOPS) 'disagree' where config_agreement
    passed them within 1.07x: one is above the sweep's limit (1.10 x 149,970) and one within it. The other side: a
    workload whose run beat the limit at every depth fails and has no such clause (the loop run's reads pass)."""
    from memstor.analysis.validity.fits import _sweep_agrees

    loop = pd.read_csv(S12 / "summary-loop.csv")
    host = str(loop["host"].iloc[0])
    write = _sweep_agrees(pd.Series({"host": host, "rw": "randwrite"}), loop)
    assert write["status"] == "warn" and "disagree" not in write["evidence"]
    assert write["evidence"].endswith(
        "; but at QD32 fio-block-size's 155,066 IOPS is within it: one run of that depth is above the sweep's limit "
        "and one is not, so they neither confirm nor contradict the sweep (not shown)"), write["evidence"]
    read = _sweep_agrees(pd.Series({"host": host, "rw": "randread"}), loop)
    assert read["status"] == "pass" and "but at QD" not in read["evidence"], read


def test_a_mixed_load_cells_example_counts_its_failed_checks_and_says_late_not_generator_bound():
    """S16-loop 3, S16-bare 2: '(and 2 more reasons)' for cell w0-r20, whose read failed two checks (arrivals, lag):
    the count was of its note's '; ' clauses, one of which explains the lag. S16-1cpu 3: ': generator-bound' (ioarrive's
    word for a p99 lag over its bound) read as a cause. The other side: a cell that failed one check has no count."""
    from memstor.report.text.mixed_load import first_reason, held_summary

    loop = held_summary(pd.read_csv(DATA / "mixed-load-map-loop.csv"))
    assert loop.endswith("too few to test (20 needed) (and 1 more reason)"), loop
    one = held_summary(pd.read_csv(DATA / "mixed-load-map-1cpu.csv"))
    assert one.endswith("e.g. cell w0-r20: read: p99 lag 504.8 µs over the bound 158.5 µs (max of 0.1 x p99 response "
                        "1585 µs and 20 µs): submitted late"), one
    assert first_reason("rate 90 % of offered; x") == "rate 90 % of offered"


def test_every_rate_is_said_only_where_every_rate_has_a_lag_over_its_bound():
    """S16-loop 2: 'At every rate (p99 lag over its bound): at u10, u30, u50, u70, u80, u90, u95' named 7 of 8 rates:
    u98 (achieved 0) failed the lag check with no lag measured. Now the head names the 7. The other side: the 1-CPU
    run's randread, a lag over its bound at each of its 8 rates, keeps 'At every rate'."""
    from memstor.report.text.openloop_causes import late_causes

    loop = pd.read_csv(S12 / "load_latency-loop.csv")
    said, _ = late_causes(loop[loop["rw"] == "randread"])
    assert said.startswith("At the late points (p99 lag over its bound: u10, u30, u50, u70, u80, u90, u95): at u10"), said
    one = pd.read_csv(S12 / "load_latency-1cpu.csv")
    said, _ = late_causes(one[one["rw"] == "randread"])
    assert said.startswith("At every rate (p99 lag over its bound): "), said


def test_knee_ceiling_holds_the_fit_against_the_sweeps_most_at_any_job_count():
    """S17-loop 1: the report withheld the randread knee ('not a finding: the sweep measured 271,713 IOPS at QD32x4,
    above the fitted ceiling's 95 % band (198,264 IOPS)') while knee_ceiling, judging the one-job highest (186,505),
    passed: page 1 named no failed check behind it. The check now judges the sweep's most at any job count (the
    loop run's knee row, its numbers as knee.csv gives them). The other side: without a higher multi-job point the
    one-job highest passes as before."""
    from memstor.analysis.validity.fits import _ceiling

    k = pd.Series({"host": "vm-loop328", "rw": "randread", "X_max_fit_iops": 170_581.0, "X_max_fit_se_iops": 14_124.0,
                   "X_max_meas_iops": 186_505.0, "X_best_iops": 271_713.0, "X_best_at": "QD32x4"})
    failed = _ceiling(k)
    assert failed["status"] == "fail" and round(failed["value"]) == 271_713 and round(failed["limit"]) == 198_264
    assert "highest measured 271,713 IOPS (at QD32x4), 59.3 % above the fit" in failed["evidence"], failed["evidence"]
    one_job = _ceiling(k.drop(["X_best_iops", "X_best_at"]))
    assert one_job["status"] == "pass" and round(one_job["value"]) == 186_505 and "(at " not in one_job["evidence"]


def test_the_write_not_shown_to_last_does_not_say_the_read_was():
    """S17-loop 3: 'Sequential transfers: 3,886 MB/s read, 3,222 MB/s write, the write not shown to last' read as if
    the read had been shown to last; it ran only as fio-block-size's 2-s run over 256 MiB. The other sides: with the
    read run elsewhere too the clause is not added; without a longer write run nothing is said."""
    from memstor.report.text.first_page import _not_lasting

    loop = pd.read_csv(S12 / "summary-loop.csv")
    host = str(loop["host"].iloc[0])
    assert _not_lasting(loop, host, 3222.0) == (
        ", the write not shown to last (the read ran only in the block-size sweep's short run)")
    read = (loop["experiment"] == "fio-block-size") & (loop["rw"] == "read") & (loop["bs_bytes"] == 2**20)
    twice = pd.concat([loop, loop[read].assign(experiment="fio-pts-xsr")], ignore_index=True)
    assert _not_lasting(twice, host, 3222.0) == ", the write not shown to last"
    xsr = loop["experiment"] == "fio-pts-xsr"
    assert _not_lasting(loop[~xsr], host, 3222.0) == ""


def test_the_xsr_times_say_the_rolling_median_they_are_read_from():
    """S17-bare 2: 'settles in 3.00 s' and 'back ... in 5.00 s' held only for the 5-s centred rolling median of the
    per-second MB/s (xsr.csv's settle_rule), which neither the PDF nor the HTML stated. The other side: a run with no
    settle time says no rule."""
    from memstor.report.text.pts import _xsr_result

    xsr = pd.read_csv(DATA / "xsr-bare14.csv")
    said = _xsr_result(xsr)
    assert said.startswith("SEQ 1024KiB → RND 8KiB: 1,278 MB/s → 419 MB/s, settles in 3.00 s; ")
    # S19-bare 12 (session 16): the levels' statistic is named first
    assert said.endswith(" (levels: each phase's last third, not its whole-run mean; times by a 5-s centred rolling "
                         "median of the per-second MB/s; single seconds may dip further)"), said
    untimed = _xsr_result(xsr.assign(settle_s=float("nan"), back_s=float("nan")))
    assert "rolling median" not in untimed and untimed.endswith(" (levels: each phase's last third, not its whole-run "
                                                                "mean)")


def test_knee_plateau_does_not_call_a_sweep_rising_where_the_same_job_between_its_last_depths_shows_no_gain():
    """S17-1cpu 1: knee_plateau failed randread as 'still rising' on the sweep's last step, QD16x1 42,917 to QD64x1
    55,471 (+29.3 %), while fio-block-size's QD32x1 between them measured 58,281: the gain came by N = 32, and QD64x1
    is -4.8 % from it. Now the check warns (the sweep levels off above the fit's ceiling) and says why. The other side:
    randwrite (QD32x1 30,487 and 30,431, then 43,635: +43 %) still fails as rising."""
    from memstor.analysis.validity import validity_table

    one = pd.read_csv(S12 / "summary-1cpu.csv")
    knees = pd.read_csv(DATA / "knee-1cpu.csv").drop(columns=["valid", "not_valid", "note"])
    knees["N_star_fit"] = knees["X_max_fit_iops"] * knees["R_min_fit_us"] * 1e-6
    q = one[(one["experiment"] == "fio-queue-depth") & (one["bs_bytes"] == 4096)].copy()
    q["in_sweep"] = ~q["spec_point"].astype(bool)
    v = validity_table(knees=knees, qd=q, points=one)
    plateau = v[v["check"] == "knee_plateau"].set_index("subject")
    read = plateau.loc["randread"]
    assert read["status"] == "warn" and "still gained" not in read["evidence"], read["evidence"]
    assert ("the sweep's own last step, 42,917 IOPS at N = 16 (QD16x1) to 55,471 IOPS at N = 64 (QD64x1) (+29.3 %), "
            "rose, but the same one-job job between them (58,281 IOPS at QD32 in fio-block-size) leaves no gain past "
            "it") in read["evidence"], read["evidence"]
    write = plateau.loc["randwrite"]
    assert write["status"] == "fail" and "still gained more than" in write["evidence"]


def test_hirs_baseline_rounds_are_checked_for_steady_state_and_its_result_withheld_where_they_moved():
    """S17-bare 1: 'baseline 46,294 IOPS' was the mean of five preconditioning rounds rising 36,231 -> 58,646 IOPS
    (data and slope excursions 48.4 %, PTS allows 20 % and 10 %), with no pts_steady_state row (CBW's and DIRTH's had
    one). Now HIR's rounds are checked and its result is withheld as CBW's is. The other side: the 1-CPU run's rounds
    (43,828-48,886 IOPS, 10.9 % and 1.03 %) pass, and its result stands."""
    from memstor.analysis.validity.pts import _hir_steady
    from memstor.report.text.pts import _hir_result

    bare = _hir_steady("vm", pd.read_csv(DATA / "fio-pts-hir-bare14.csv"))
    assert (bare["status"], bare["subject"], round(bare["value"], 1)) == ("fail", "HIR preconditioning", 48.4)
    assert bare["evidence"].startswith("last 5 rounds: 36,231-58,646 IOPS, data excursion 48.4 % and slope "
                                       "excursion 48.4 %"), bare["evidence"]
    one = _hir_steady("vm", pd.read_csv(DATA / "fio-pts-hir-1cpu.csv"))
    assert one["status"] == "pass" and one["evidence"].startswith("last 5 rounds: 43,828-48,886 IOPS")
    short = _hir_steady("vm", pd.read_csv(DATA / "fio-pts-hir-1cpu.csv").iloc[2:])
    assert short["status"] == "unchecked"
    hir = pd.DataFrame({"host": ["vm"], "baseline_iops": [46_294.0], "wait_s": [0.5], "idle_s_mean": [0.865],
                        "segments": [2], "iops_mean": [66_247.0], "recovery_ratio": [1.43],
                        "recovery_ratio_ci_low": [float("nan")], "recovery_ratio_ci_high": [float("nan")]})
    withheld = _hir_result(hir, pd.DataFrame([bare]))
    assert withheld.startswith("no result stated: steady state not reached (preconditioning rounds' data excursion "
                               "48.4 % and slope excursion 48.4 % of their mean 46,294"), withheld
    assert _hir_result(hir, pd.DataFrame([one])).startswith("baseline 46,294 IOPS; after ")
