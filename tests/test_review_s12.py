"""The eighth independent reads (issue 38: S12-bare, S12-1cpu, S12-loop), built from the runs' tables
(tests/data/review-s12/SOURCES.md)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from memstor.report.text import wsat as wtext

DATA = Path(__file__).resolve().parent / "data" / "review-s12"


def test_a_run_that_rose_is_not_one_level_from_start_to_end():
    """S12-bare 2: the 4 KiB random write rose at 10 s (171 -> 225 MB/s, a 'recovery' change point), found no
    fall (cliffs 0), and the report said 'no cliff — one level ... of 225 [213, 237] MB/s from start to end' with
    burst '– (no cliff: one window)' beside sustained / burst 1.32. Now the level is the one after the rise, over
    its last 12 of 22 whole seconds, and the burst cell gives the level before it. The other side: the 128 KiB
    write, too short to tell, keeps its own wording."""
    w = pd.read_csv(DATA / "wsat-bare.csv", keep_default_na=False, na_values=[""]).fillna({"caveat": ""})
    rose = w[w["workload"] == "4 KiB random write"].iloc[0]
    said = wtext.no_cliff_text(rose)
    assert "from start to end" not in said and said.startswith("no cliff, but a rise: 171 MB/s before it")
    assert "one level (its halves' medians" in said and "of 225 [213, 237] MB/s" in said
    assert "over its last 12 of 22 whole seconds (its mean leaves the run's last second out, a segment's edge" in said
    assert "of 225 [213, 237] MB/s (mean, 95 % interval of this run's one-second values)" in said  # S12-1cpu 7
    shown = wtext.wsat_display(w).set_index("workload")
    assert shown.loc["4 KiB random write", "burst (MB/s)"] == "171 (before a rise)"
    assert shown.loc["4 KiB random write", "sustained / burst"] == "1.32"
    assert "rise" not in wtext.no_cliff_text(w[w["workload"] != "4 KiB random write"].iloc[0])
    one = rose.copy()
    one[["burst_MBps", "sustained_over_burst"]] = float("nan")  # no change point at all: one window
    one["level_seconds"] = one["whole_seconds"]
    assert "from start to end" in wtext.no_cliff_text(one) and "rise" not in wtext.no_cliff_text(one)


def test_the_best_iops_headline_is_held_against_the_sweeps_best_at_any_job_count():
    """S12-bare 3: headline_definition failed both best-IOPS headlines (0.558x, 0.467x) against the one-job sweep's
    highest, 24,406 / 28,944 IOPS, named 'queue-depth sweep's highest (knee table)', while the knee table prints
    X_best 43,748 / 60,490 (any job count). Now X_best is the two-sided figure and the one-job curve only bounds
    from above: both pass. The other sides: X_best 2x above the headline fails, and 2x below it."""
    from memstor.analysis.validity.headline import headline_rows

    knees, storage = pd.read_csv(DATA / "knee-bare.csv"), pd.read_csv(DATA / "storage_fit-bare.csv")

    def judged(read, write):
        head = pd.DataFrame({"host": "vm", "key": ["best_randread_iops", "best_randwrite_iops"], "value": [read, write]})
        return {r["subject"]: r for r in headline_rows(head, knees, None, storage, None, None)}

    ok = judged(61_929.0, 43_748.0)
    assert ok["best 4K randread IOPS"]["status"] == "pass" and ok["best 4K randwrite IOPS"]["status"] == "pass"
    assert "queue-depth sweep's highest at any job count (knee table's X_best) 43,748" in \
        ok["best 4K randwrite IOPS"]["evidence"]
    other = judged(30_000.0, 87_500.0)
    assert other["best 4K randread IOPS"]["status"] == "fail" and other["best 4K randread IOPS"]["value"] > 2  # above
    assert other["best 4K randwrite IOPS"]["status"] == "fail" and other["best 4K randwrite IOPS"]["value"] < 0.51


def test_the_sweeps_p99_in_the_slo_table_is_named_a_completion_p99():
    """S12-bare 5: '(QD1, p99 52.0 µs)' beside the same point's mean total latency of 67.9 µs: fio's clat p99
    leaves out the 65 µs the io_uring submission took. Now 'completion p99 52.0 µs; below its mean total latency,
    67.9 µs: the submission time is not in it'; randwrite's (p99 175 µs above its mean 83.7 µs) says only
    'completion p99'."""
    from memstor.analysis.load_latency import closed_meeting
    from memstor.report.text.openloop import slo_display

    fio = pd.read_csv(DATA / "fio-queue-depth-bare.csv").assign(ok=True)
    slo = pd.read_csv(DATA / "slo-bare.csv").drop(columns=["closed_sweep_iops", "closed_sweep_qd",
                                                         "closed_sweep_p99_us"], errors="ignore")
    slo = slo.join(pd.DataFrame([closed_meeting(fio, r.host, r.rw, r.target_p99_us) for r in slo.itertuples()],
                                index=slo.index))
    cells = slo_display(slo).set_index("workload")["fio latency_target, closed loop (IOPS, depth per job, its p99)"]
    # ninth read S12-bare9 1: neither row says the total met it (no total-latency percentiles are recorded)
    assert cells["randread"].endswith("completion p99 met it: 14,465 (QD1, 52.0 µs, below its mean total "
                                      "latency, 67.9 µs; the submission time is not in it, so whether "
                                      "the total met it is not shown)")
    assert cells["randwrite"].endswith("completion p99 met it: 11,735 (QD1, 175 µs; the submission time is not in it, "
                                       "so whether the total met it is not shown)")


def test_a_last_step_within_a_measured_disagreement_is_not_called_still_rising():
    """S12-bare 6: p. 7's knee_plateau said the randwrite sweep's last step (QD16 19,445 -> QD64 24,406 IOPS,
    +25.5 %) 'still gained more than the 10 % assumed for single fresh runs' while p. 3 called a +21.7 % step within the
    1.54x by which one configuration measured twice disagreed 'not shown'. One rule now: that step does not make
    the sweep 'still rising' (fail) nor levelled off: above the fit's ceiling, whether it levels off not shown (warn;
    the knee is withheld by knee_located anyway). The other side: a last step of 2x is still rising (fail). The
    queue-depth sweep does not settle the reviewed pair (19,445 at QD16x1 and 24,406 at QD64x1 hold fio-rw-ratio's
    23,126, but fio-block-size's 35,685 is only 1.46x above them: ninth read S12-bare9 2); where it would (35,685
    raised to 40,000, 1.64x above: one run out of line, S12-loop 6) the disagreement is no limit and the step beyond
    the 10 % assumed fails, as p. 3's block-size step is 'still grew' by the same rule."""
    from memstor.analysis.validity import validity_table

    summary = pd.read_csv(DATA / "summary-bare.csv")
    knees = pd.read_csv(DATA / "knee-bare.csv").drop(columns=["valid", "not_valid", "note"]).iloc[[1]]
    knees["N_star_fit"] = knees["X_max_fit_iops"] * knees["R_min_fit_us"] * 1e-6

    def plateau(s):
        q = s[(s["experiment"] == "fio-queue-depth") & (s["bs_bytes"] == 4096)].copy()
        q["in_sweep"] = ~q["spec_point"].astype(bool)
        v = validity_table(knees=knees, qd=q, points=s)
        return v[(v["check"] == "knee_plateau") & (v["subject"] == "randwrite")].iloc[0]

    four = (summary["bs_bytes"] == 4096) & (summary["iodepth"] == 32) & (summary["numjobs"] == 1)
    mine = four & (summary["experiment"] == "fio-block-size") & (summary["rw"] == "randwrite")
    raised = summary.copy()
    raised.loc[mine, "iops"] = 40_000.0
    # fourteenth read S17-1cpu 1: fio-rw-ratio's in-line QD32x1 write (23,126) leaves no gain past QD32: not rising
    mix = four & (raised["experiment"] == "fio-rw-ratio") & (raised["rwmixread"] == 0.0)
    settled = plateau(raised.assign(iops=raised["iops"].mask(mix, 21_000.0)))  # QD64x1 1.16x above it: rising
    assert settled["status"] == "fail" and "still gained more than the 10 % assumed" in settled["evidence"]
    assert "had one run out of line by the queue-depth sweep" in settled["evidence"]
    flat = plateau(raised)
    assert flat["status"] == "warn" and "still gained" not in flat["evidence"], flat["evidence"]
    assert flat["evidence"].endswith("(23,126 IOPS at QD32 in fio-rw-ratio) leaves no gain past it beyond the 10 % "
                                     "assumed for single fresh runs, not measured (the pair measured twice that "
                                     "disagreed, 1.73×, had one run out of line by the queue-depth sweep: not counted "
                                     "as spread)"), flat["evidence"]
    unsettled = summary  # the reviewed data: 35,685 is 1.46x above the bracket, no more than a disagreement
    row = plateau(unsettled)
    assert row["status"] == "warn" and "still gained" not in row["evidence"]
    assert "whether it levels off is not shown (its last step, 19,445 IOPS at N = 16 (QD16x1) to 24,406 IOPS at N = " \
           "64 (QD64x1) (+25.5 %), within the 1.54× by which one configuration measured twice disagreed" in row["evidence"]
    assert "and by more than the 1.54×" in row["evidence"]  # QD32x4, 2.42x X_fit
    steep = unsettled.copy()
    at = (steep["experiment"] == "fio-queue-depth") & (steep["rw"] == "randwrite") & (steep["iodepth"] == 64) & \
        (steep["numjobs"] == 1) & (steep["bs_bytes"] == 4096)
    assert at.sum() == 1
    steep.loc[at, "iops"] = 2 * 19_445.0
    assert plateau(steep)["status"] == "fail" and "still gained more than" in plateau(steep)["evidence"]


CACHES = {"L1d_bytes": 49152, "L2_bytes": 1310720, "L3_bytes": 50331648}


def test_cache_levels_are_matched_by_size_not_by_rank():
    """S12-bare 4 / S12-1cpu 2: three plateaus ending at 45-64 KiB, 256-362 KiB and 1-1.4 MiB were named L1, L2, L3
    by rank: 'L2 ... a factor 3.5 from the kernel's 1,280 KiB', 'L3 ... a factor 33.9 from 48 MiB'. Now the level
    ending at 1-1.4 MiB is L2 (agrees with 1,280 KiB), the step at 256-362 KiB is 'level 2' (no kernel cache), and
    the kernel's L3 says no step of the curve lies near 48 MiB. The other side (a VM's share of a large cache, the
    1-CPU loop run of test_memory_m4: 13.5 MiB beside 480 MiB) stays matched: tested there."""
    from memstor.analysis import hierarchy as h

    for run in ("bare", "1cpu"):
        c = h.cache_levels(pd.read_csv(DATA / f"mem-hierarchy-{run}.csv"), CACHES).set_index("level")
        assert c.loc["L2", "agrees"] and "ends between 1,024 KiB and 1,448 KiB" in c.loc["L2", "note"], run
        if run == "bare":  # 1-CPU's 'plateau 2' had no step before L2: one level (S12-1cpu9 7, the next test)
            assert "plateau 2 (no kernel cache)" in c.index and c.loc["plateau 2 (no kernel cache)", "note"].endswith(
                "no cache of the kernel's matched (random chain, 2M (THP, 100 %))"), run
        assert c.loc["L3", "note"].startswith("no level of the curve matched to it: no step near 48.0 MiB"), run
        assert "a factor 33.9" not in " ".join(c["note"].astype(str))


def test_a_level_ends_at_the_last_size_it_held_not_at_its_bands_last():
    """S12-1cpu 2: 'held at 362 KiB (5.24 ns, 55 % of the way to the next level's 5.91 ns)' beside the rule 'held:
    under 10 % of the way': the plateau's band took 362 KiB in. Now the level ends after the last size under 10 %
    (181 KiB, 1 %), before 256 KiB (20 %). The other side: bare's level 2 held to its band's last size, 256 KiB."""
    from memstor.analysis import hierarchy as h

    one = h.cache_levels(pd.read_csv(DATA / "mem-hierarchy-1cpu.csv"), CACHES).set_index("level")
    assert one.loc["L1", "note"].startswith("ends between 32 KiB and 45 KiB: on it 4 KiB-32 KiB (7 sizes), held at "
                                            "32 KiB (1.67 ns, 0 % of the way"), one.loc["L1", "note"]
    bare = h.cache_levels(pd.read_csv(DATA / "mem-hierarchy-bare.csv"), CACHES).set_index("level")
    assert "held at 256 KiB (4.44 ns, 0 % of the way" in bare.loc["plateau 2 (no kernel cache)", "note"]


def test_fios_closed_latency_target_run_is_a_candidate_for_a_higher_best():
    """S12-1cpu 1: 'Best 4K random read 59,753 IOPS ... the most measured' while fio-load-latency's latency_target
    run of the same job (QD32x4, closed) measured 65,752 IOPS: all of fio-load-latency was left out as rate-limited.
    Now its closed 'lt-' run is a candidate and named; the ioarrive rows (offered rates) still are not."""
    from memstor.report.text.headline_trust import elsewhere_caveat

    points = pd.read_csv(DATA / "summary-1cpu.csv")
    said = elsewhere_caveat("sound (its checks pass)", points, "vm", "best_randread_iops", 59_753.5)
    assert said == ("with caveats (other runs measured more: up to 65,752 IOPS as a whole-run mean (fio-load-latency, "
                    "fio latency_target's closed run: randread 4 KiB))")
    no_lt = points[~points["point"].astype(str).str.startswith("lt-")].copy()
    u98 = no_lt["point"].astype(str).str.startswith("randread-bs4k-u98-ioarrive")
    no_lt.loc[u98, "iops"] = 70_000.0  # an offered rate above the best is never a higher best
    assert u98.sum() == 1 and elsewhere_caveat("sound (its checks pass)", no_lt, "vm", "best_randread_iops",
                                               59_753.5) == "sound (its checks pass)"


def test_steady_rounds_on_part_of_a_raw_device_are_not_the_whole_device():
    """S12-loop 1: the loop run's steady-state rounds wrote 256 MiB of the 6 GiB device (--size=256m) while the run
    was labelled full_device, and the report said 'on the whole raw device', 'full device' in the spec table. The
    verdict now reads span 'region', 256 MiB, said as '256 MiB of the raw device'; a run whose rounds covered its
    span keeps its label."""
    from memstor.analysis import steady_state as ss
    from memstor.analysis.synthesis import steady_conditions
    from memstor.analysis.validity import steady
    from memstor.report.text import steady_state as stext

    rows = pd.read_csv(DATA / "fio-steady-state-loop.csv").assign(table="fio-steady-state")
    v = ss.verdict_table(rows).iloc[0]
    assert (v["span"], v["span_bytes"]) == ("region", 268435456)
    assert stext.steady_display(ss.verdict_table(rows))["span"].iloc[0] == "256 MiB of a raw device"
    c = steady_conditions(v.fillna({"valid": True, "steady_shown": False}))
    assert (c.span, c.span_bytes, c.target) == ("region", 268435456, "raw_device")
    whole = rows.assign(file_size_bytes=rows["span_bytes"])
    assert tuple(ss.verdict_table(whole).iloc[0][["span", "span_bytes"]]) == ("full_device", 6442450944)
    fresh = steady.fresh_row(v, pd.read_csv(DATA / "summary-loop.csv"))  # like spans: 240,839 against 169,769
    assert fresh["status"] == "fail" and round(fresh["value"], 2) == 1.42


def test_a_rate_that_completed_nothing_is_named_not_counted_as_zero_percent():
    """S12-loop 4: 'every rate 0.0-100.6 % of offered achieved' where randread u98 hit ioarrive's cap of 4,096
    outstanding I/Os during its ramp and completed nothing. Now the range is of the rates that completed I/O and
    u98 is named; randwrite, whose every rate completed I/O, reads as before."""
    from types import SimpleNamespace

    from memstor.report.text.first_page import _not_open_workloads

    load = pd.read_csv(DATA / "load_latency-loop.csv").assign(valid=False)
    S = SimpleNamespace(load=load, validity=pd.DataFrame(columns=["host", "check", "subject", "status"]))
    said = dict(zip(("randread", "randwrite"), _not_open_workloads(S, "vm-loop328")))
    assert "7 of 8 rates 30.5–100.6 % of offered achieved; u98 completed nothing in its window (overloaded: its cap " \
           "of outstanding I/Os reached)" in said["randread"]
    assert "0.0" not in said["randread"] and "completed nothing" not in said["randwrite"]
    assert "every rate 35.5–99.3 % of offered achieved" in said["randwrite"]


def test_the_queue_depth_figure_draws_only_the_knees_the_page_states():
    """S12-loop 2: Figure 3 drew the randread fit with 'N* = 1.8' while the table and text called that knee 'not a
    finding': the sweep measured X_best 271,713 IOPS above the fit's band, X_fit 170,581 + 1.96 SE = 198,264 (the
    loop run's knee row before the report emptied it; numbers from its knee table and review). The figure's fits now
    follow the page's rule; a knee whose X_best lies within the band keeps its fit."""
    from memstor.report.csv_gate import shown_knee_fits

    knees = pd.DataFrame({"host": "vm-loop328", "rw": ["randread", "randwrite"], "X_max_fit_iops": [170_581.0, 150_000.0],
                          "X_max_fit_se_iops": [(198_264.0 - 170_581.0) / 1.96, 10_000.0],
                          "X_best_iops": [271_713.0, 160_000.0], "X_max_meas_iops": [271_713.0, 160_000.0],
                          "N_star_fit": [1.81, 20.0], "N_star_fit_ci_high": [3.0, 40.0], "N_star_bound": [1.5, 10.0],
                          "valid": True, "not_valid": ""})
    fits = {("vm-loop328", "randread"): "read fit", ("vm-loop328", "randwrite"): "write fit"}
    assert shown_knee_fits(knees, fits, None) == {("vm-loop328", "randwrite"): "write fit"}
    assert shown_knee_fits(knees.assign(X_best_iops=[180_000.0, 160_000.0]), fits, None) == fits


def test_the_knee_checks_measured_figure_is_the_one_job_sweeps_not_x_best():
    """S12-loop 3: 'X_best (highest measured) 149,970 IOPS' (knee_ceiling's figure, the one-job sweep's highest,
    QD64x1) beside 'X_best = 169,769 IOPS at QD32x4' in one paragraph. X_best names one number now."""
    from memstor.report.text.queueing import name_ceilings

    said = name_ceilings("fitted X_max 131,740 ± 9,249 IOPS (SE); highest measured 149,970 IOPS, 13.8 % above the fit")
    assert said == ("X_fit (fitted ceiling) 131,740 ± 9,249 IOPS (SE); the one-job sweep's highest 149,970 IOPS, "
                    "13.8 % above the fit") and "X_best" not in said


def test_larger_blocks_trade_operations_only_where_the_numbers_show_it():
    """S12-loop 6: 'Random reads (QD32x1): 2,949 IOPS at 4 KiB ..., 3,710 IOPS at 1 MiB: larger blocks trade
    operations for bytes' though the IOPS rose. The other side: the bare run's reads (61,929 -> 1,187 IOPS) trade."""
    from memstor.report.text.workloads import block_size_sentences

    loop = " ".join(block_size_sentences(pd.read_csv(DATA / "summary-loop.csv"), "vm-loop328"))
    assert "2,949 IOPS" in loop and "the largest blocks completed as many operations or more" in loop
    bare = block_size_sentences(pd.read_csv(DATA / "summary-bare.csv"), "vm")[0]
    assert "larger blocks trade operations for bytes" in bare


def test_a_phase_back_at_its_level_before_the_stimulus_is_said_so_before_its_settle_time():
    """S12-1cpu 4: 'RND 8KiB → SEQ 1024KiB: 419 MB/s → 2,050 MB/s, settles in 6.00 s' read as 6 s to recover, while the
    SEQ phase ran 1,832 MB/s in its first second, above the 1,604 MB/s the same access held before the stimulus (the
    6 s were a later step to 2,050). Now the row says when it was back, and the settle time as the final level's.
    The other sides: a phase that stays below 90 % of its earlier level is 'not within the phase'; one that gets
    there later gives the second; the first transition (no earlier phase of RND) has no back clause."""
    from memstor.analysis import pts_recovery as pr
    from memstor.report import text
    from memstor.report.text import pts

    sec = pd.read_csv(DATA / "fio-pts-xsr-seconds-1cpu.csv")
    x = pr.xsr_table(sec, pd.read_csv(DATA / "fio-pts-xsr-1cpu.csv"))
    back = x.iloc[1]
    assert round(back["earlier_level_MBps"]) == 1604 and back["back_s"] == 0.0 and back["settle_s"] == 6.0
    said = pts._xsr_result(x)
    assert ("419 MB/s → 2,050 MB/s, back at ≥ 90 % of its level before the stimulus (1,604 MB/s) from the first "
            "second; within ±10 % of its final level from 6.00 s") in said
    assert "settles in 6" not in said and said.startswith("SEQ 1024KiB → RND 8KiB: 1,604 MB/s → 419 MB/s, at its new")
    shown = text.xsr_display(x)
    assert shown["back at ≥ 90 % of before (s)"].tolist() == ["–", "from the first second"]
    seq = sec["phase"] == sec["phase"].max()
    slow = sec.assign(bw_MBps=sec["bw_MBps"].where(~seq, sec["bw_MBps"] * 0.5))       # never back: 1,025 at most
    assert pd.isna(pr.xsr_table(slow, pd.read_csv(DATA / "fio-pts-xsr-1cpu.csv")).iloc[1]["back_s"])
    assert "not within the phase" in pts._xsr_result(pr.xsr_table(slow, pd.read_csv(DATA / "fio-pts-xsr-1cpu.csv")))
    assert pr.back_time([300, 300, 300, 1500, 1600, 1700, 1650, 1620], 1604) == 3.0
    assert pr.back_time([1500], float("nan")) is None and pr.back_time([], 1604) is None


def test_the_sequential_write_caveat_names_the_same_job_that_measured_more():
    """S12-1cpu 6: 'Sequential write 1,327 ... other runs measured more: up to 1,910 MB/s as a whole-run mean
    (fio-block-size: randwrite 1 MiB)' while the headline's own job (1 MiB write QD32x1, 256 MiB) measured 1,656 and
    1,902 MB/s in fio-pts-xsr. Now the same job is named first. The other sides: XSR's runs below the headline are not
    named; where the same job is the highest, it is named once."""
    from memstor.report.text.headline_trust import elsewhere_caveat

    points = pd.read_csv(DATA / "summary-1cpu.csv")
    said = elsewhere_caveat("sound (its checks pass)", points, "vm", "seq_write_MBps", 1327.087762)
    assert said == ("with caveats (other runs measured more: the same job ran at 1,656-1,902 MB/s (whole-run means) in "
                    "fio-pts-xsr; up "
                    "to 1,910 MB/s as a whole-run mean (fio-block-size: randwrite 1 MiB))")
    xsr = points["experiment"] == "fio-pts-xsr"
    slow = points.assign(bw_MBps=points["bw_MBps"].where(~xsr, 1000.0))
    assert elsewhere_caveat("sound (its checks pass)", slow, "vm", "seq_write_MBps", 1327.087762) == (
        "with caveats (other runs measured more: up to 1,910 MB/s as a whole-run mean (fio-block-size: randwrite "
        "1 MiB))")
    fast = points.assign(bw_MBps=points["bw_MBps"].where(~xsr, 2500.0))
    assert elsewhere_caveat("sound (its checks pass)", fast, "vm", "seq_write_MBps", 1327.087762) == (
        "with caveats (other runs measured more: the same job ran at 2,500 MB/s (whole-run means) in fio-pts-xsr)")


def test_the_queue_depth_sweep_sides_with_one_of_two_disagreeing_runs():
    """S12-1cpu 5: '58,281 IOPS ... (here; 10,647 IOPS in fio-rw-ratio, 5.47× apart: config_agreement failed, neither
    alone is this configuration's value)' while the queue-depth sweep measured 42,917 at QD16x1 and 55,471 at QD64x1.
    Now the bracket is printed and sides with 58,281. The other sides: a sweep point between the two sides with
    neither; no sweep around the depth keeps 'neither alone'."""
    from memstor.analysis.spread import sweep_bracket
    from memstor.report.text import workloads as w

    points = pd.read_csv(DATA / "summary-1cpu.csv")
    said = w.block_size_sentences(points, "vm")[0]
    # tenth read S13-1cpu 1: the check warns where the sweep settles the pair (validity.csv 'warn'), so the words too
    assert ("5.47× apart: config_agreement warned, the queue-depth sweep's 42,917 IOPS at QD16×1 and 55,471 at QD64×1 "
            "side with 58,281 (here): 10,647 (fio-rw-ratio) is the one out of line") in said
    r = points[(points["experiment"] == "fio-block-size") & (points["rw"] == "randread")
               & (points["bs_bytes"] == 4096)].iloc[0]
    assert sweep_bracket(points, "vm", r)["iodepth"].tolist() == [16, 64]
    qd16 = (points["experiment"] == "fio-queue-depth") & (points["rw"] == "randread") & (points["iodepth"] == 16) \
        & (points["bs_bytes"] == 4096) & (points["numjobs"] == 1)
    wide = points.assign(iops=points["iops"].where(~qd16, 10_000.0))   # 10,000 .. 55,471 holds both
    assert "config_agreement failed, the queue-depth sweep's 10,000 IOPS at QD16×1 and 55,471 at QD64×1 settle " \
        "neither: neither alone is this configuration's value" in w.block_size_sentences(wide, "vm")[0]
    bare = w.block_size_sentences(pd.read_csv(DATA / "summary-bare.csv"), "vm")[1]   # S12-bare9 2: 35,685 is only
    assert "19,445 IOPS at QD16×1 and 24,406 at QD64×1 settle neither" in bare       # 1.46x above the bracket
    assert "whether it still grows is not shown" in bare and "out of line" not in bare
    no_sweep = points[points["experiment"] != "fio-queue-depth"]
    said = w.block_size_sentences(no_sweep, "vm")[0]
    assert "config_agreement failed, neither alone is this configuration's value" in said and "sweep" not in \
        said.split("config_agreement")[1].split(")")[0]


def test_the_peak_memory_bandwidth_names_an_mlp_run_that_measured_more():
    """S12-loop 5: 'Peak memory bandwidth 6,632 MB/s' while the MLP table has 8,209 MB/s (2 threads x 16 chains), a run
    left out by hierarchy_cpu_share (88.6 %). Now the headline's trust names it. The other sides: an MLP table below
    the headline adds nothing; a run within the CPU-share band is named without 'left out'."""
    from memstor.report.text.headline_table import headline_evidence

    head, mlp = pd.read_csv(DATA / "headline-loop.csv"), pd.read_csv(DATA / "mlp-loop.csv")
    host = str(head["host"].iloc[0])
    trust = headline_evidence(head, None, None, None, mlp).set_index("quantity")["trust"]
    said = trust["Peak memory bandwidth (MB/s)"]
    assert ("other runs measured more: 8,209 MB/s (mem-hierarchy's MLP run, 2 threads × 16 chains, its bandwidth by "
            "Little's law; left out of its curve by hierarchy_cpu_share: its threads on a CPU 88.6 % of the time)") \
        in said, said
    low = mlp.assign(bandwidth_MBps=mlp["bandwidth_MBps"].clip(upper=6000.0))
    assert "MLP" not in headline_evidence(head, None, None, None, low).set_index("quantity")["trust"][
        "Peak memory bandwidth (MB/s)"]
    held = mlp.assign(cpu_share=0.99)
    said = headline_evidence(head, None, None, None, held).set_index("quantity")["trust"]["Peak memory bandwidth (MB/s)"]
    assert "16 chains, its bandwidth by Little's law)" in said and "left out" not in said and host


def test_the_conclusion_does_not_call_the_peak_bandwidth_a_most():
    """S12-loop 5, page 2's conclusion: 'moves at most 6,632 MB/s when many are in flight' beside an MLP run of
    8,209 MB/s. Now it says what the headline measured and names the run above it; without one, no caveat."""
    from types import SimpleNamespace

    from memstor.report.text import first_page as fp

    head, mlp = pd.read_csv(DATA / "headline-loop.csv"), pd.read_csv(DATA / "mlp-loop.csv")
    idle = head["key"] == "idle_latency_ns"
    head.loc[idle, ["value", "gate"]] = [95.0, "passed"]   # a run that passed its gate, to reach the sentence
    host = str(head["host"].iloc[0])
    none = pd.DataFrame(columns=["host", "check", "status", "subject", "evidence", "section"])
    said = fp.conclusion(SimpleNamespace(qd=pd.DataFrame(), headline=head, validity=none, mlp=mlp), host)
    assert "at most" not in said and "moved 6,632 MB/s with many in flight (the peak-bandwidth headline; other " \
        "runs measured more: 8,209 MB/s (mem-hierarchy's MLP run" in said, said
    plain = fp.conclusion(SimpleNamespace(qd=pd.DataFrame(), headline=head, validity=none, mlp=None), host)
    assert "moved 6,632 MB/s with many in flight (the peak-bandwidth headline)" in plain


def test_left_out_buffers_are_given_in_their_own_unit():
    """S12-loop 8: 'Left out (hierarchy_cpu_share ...): random chain, 4K pages, 0.0 MiB (81 %)' for an 11.3 KiB
    buffer. Now each size in its own unit; more than four are a range."""
    from memstor.report.text.hierarchy import left_out_sentence

    ws = pd.DataFrame({"host": "vm", "pages": "4K", "pattern": "random", "cpu_share": [0.81, 0.84, 0.99],
                       "buffer_bytes": [11_585, 741_376, 2**20]})
    said = left_out_sentence(ws, "vm", pd.DataFrame({"level": [], "note": []}))
    assert "random chain, 4K pages, 11.3 KiB and 724 KiB (81-84 %)" in said and "0.0 MiB" not in said
    many = pd.DataFrame({"host": "vm", "pages": "4K", "pattern": "random", "cpu_share": 0.5,
                         "buffer_bytes": [4096 * 2**k for k in range(6)]})
    assert "6 sizes, 4 KiB-128 KiB (50 %)" in left_out_sentence(many, "vm", pd.DataFrame({"level": [], "note": []}))


def test_an_xsr_transition_between_two_phases_without_a_level_gives_both_reasons():
    """S12-loop 10: 'SEQ 1024KiB → RND 8KiB: no level → no level (its last 3 s ran 454, 408, 333 MB/s ...)' gave only
    the RND phase's reason, so it read as the SEQ phase's. Now the first transition gives its old phase's reason after
    its own 'no level'; the second transition (whose old phase is the first's new one) does not repeat it."""
    from memstor.analysis import pts_recovery as pr
    from memstor.report.text import pts

    x = pr.xsr_table(pd.read_csv(DATA / "fio-pts-xsr-seconds-loop.csv"), pd.read_csv(DATA / "fio-pts-xsr-loop.csv"))
    said = pts._xsr_result(x)
    first, second = said.split("; RND 8KiB → SEQ")
    assert first.startswith("SEQ 1024KiB → RND 8KiB: no level (its last 3 s ran 722, 1,085, 1,315 MB/s"), said
    assert "→ no level (its last 3 s ran 454, 408, 333 MB/s" in first
    assert "722" not in second and "454" not in second


def test_a_withheld_fit_below_the_measured_bound_is_said_to_be_rejected():
    """S12-bare 7: the randwrite knee's withheld fit 'N* 1.54 with 95 % interval [0.282, 8.43]' was printed in the
    gate's reason beside 'N* ≥ 3.6' with nothing said. Now the bound says it rejects that fit. The other side: a
    fit above the bound gets no such clause."""
    from memstor.report.text import queueing as q

    k = pd.read_csv(DATA / "knee-bare.csv")
    said = q.knee_sentences(k)[1]
    # tenth read S13-bare 4: 3.7 lies within the fit's interval [0.282, 8.43]: the fit's ceiling rejects it
    assert said.endswith("N* ≥ 3.6 (the sweep had not levelled off, so the data set no upper bound; X_best is one run "
                         "with 4 jobs: from the one-job sweep's most, 24,406 IOPS, N* ≥ 2.0), within the "
                         "withheld fit's 95 % interval: the bound does not settle it; its ceiling below "
                         "what the sweep measured rejects it."), said
    low = k.assign(N_star_bound=1.2)
    assert "reject" not in q.knee_sentences(low)[1]
    high = k.assign(N_star_bound=9.0)  # above the interval's top 8.43
    assert q.knee_sentences(high)[1].endswith("above the withheld fit's N* 1.54: the bound rejects that fit too.")


def test_the_tlb_row_states_clocks_only_where_its_two_runs_share_a_calibration():
    """S12-bare 9: 'TLB 11.3 ns, 35.4 clocks' under a header 'at 3.23 GHz': 11.28 ns x 3.23 is 36.4; its 4K run was
    calibrated at 3.14 GHz and its 2M run at 3.23 (2.9 % apart). Now no clocks for that row, the note says why; the
    other side: runs calibrated alike give clocks at their mean."""
    from memstor.analysis import hierarchy as h

    df = pd.read_csv(DATA / "mem-hierarchy-bare.csv")
    tlb = h.cache_levels(df, CACHES).set_index("level").loc[h.TLB_LEVEL]
    assert pd.isna(tlb["clocks"]) and round(tlb["latency_ns"], 1) == 11.3
    assert "clocks not stated: its two runs' core clocks were calibrated 3.14 and 3.23 GHz" in tlb["note"]
    alike = df.assign(clocks=pd.to_numeric(df["latency_ns"], errors="coerce") * 3.2)
    tlb = h.cache_levels(alike, CACHES).set_index("level").loc[h.TLB_LEVEL]
    assert abs(tlb["clocks"] - tlb["latency_ns"] * 3.2) < 1e-6 and "clocks not stated" not in tlb["note"]


def test_config_agreement_says_what_the_text_says_where_the_sweep_settles_a_pair():
    """Ninth read S12-bare9 2: config_agreement's consequence said 'neither number alone is this configuration's value'
    beside text that named one run out of line. Now both say the same: settled on the loop and 1-CPU runs (2,949 and
    10,647 IOPS out of line), not on bare (35,685 only 1.46x above the sweep's bracket)."""
    from memstor.analysis.validity.agreement import agreement_rows

    def failed(name):
        (r,) = [r for r in agreement_rows(pd.read_csv(DATA / f"{name}.csv")) if r["value"] > 1.5]
        assert r["status"] == ("fail" if name == "summary-bare" else "warn")  # S12-1cpu9 6: settled: stated, named
        return r["consequence"]

    assert failed("summary-loop").startswith("the queue-depth sweep's neighbouring depths side with 184,245 IOPS: "
                                             "2,949 IOPS is the run out of line")
    assert "side with 58,281 IOPS: 10,647 IOPS is the run out of line" in failed("summary-1cpu")
    assert failed("summary-bare").startswith("neither number alone is this configuration's value")


def test_the_knee_interval_is_called_a_width_not_a_coverage():
    """Ninth read S12-bare9 4: 'N* 1.54 with 95 % interval [0.282, 8.43] covers 81.7 % of the sweep 1-64': 81.7 % is
    the interval's log width over the sweep's, and it overlaps the sweep only on 1-8.43. Now 'as wide as'. The rule
    (a width of 50 % or more fails) is unchanged: a narrow interval passes."""
    from memstor.analysis.validity.fits import _located

    k = pd.Series({"host": "vm", "rw": "randwrite", "N_star_fit": 1.54, "N_star_fit_ci_low": 0.282,
                   "N_star_fit_ci_high": 8.43, "N_range": "1-64"})
    r = _located(k)
    assert r["status"] == "fail" and "is 81.7 % as wide as the sweep 1-64 (log scale)" in r["evidence"], r["evidence"]
    narrow = _located(k.copy().replace({0.282: 1.2, 8.43: 2.0}))
    assert narrow["status"] == "pass" and "covers" not in narrow["evidence"]


def test_a_closed_bound_the_queue_depth_sweep_contradicts_is_not_stated():
    """Ninth read S12-1cpu9 1 (blocks trust): the SLO table's closed-loop cell said '≥ 65,752' (fio latency_target's one
    2-s run, p99 766 µs) while the queue-depth sweep missed p99 1 ms at every depth, from QD1's 4,723 IOPS (p99
    1,974 µs). Now the cell says the closed runs disagree and states no bound. The other sides: a sweep that met the
    target keeps the cell; a latency_target run that missed is unchanged."""
    from memstor.analysis.load_latency import closed_meeting
    from memstor.report.text.openloop import slo_display

    q = pd.read_csv(DATA / "fio-queue-depth-1cpu.csv").assign(ok=True)
    slo = pd.read_csv(DATA / "slo-1cpu.csv")
    missed = closed_meeting(q, "vm", "randread", 1000.0)
    assert missed["closed_sweep_missed_qd"] == "QD1" and round(missed["closed_sweep_missed_iops"]) == 4723
    rows = pd.DataFrame([{**r.to_dict(), **closed_meeting(q, "vm", r["rw"], r["target_p99_us"])}
                         for _, r in slo.iterrows()])
    cells = slo_display(rows).iloc[:, 4].tolist()
    assert cells[0].startswith("the closed runs disagree: fio's latency_target run met it (≥ 65,752") and \
        cells[0].endswith("while the queue-depth sweep missed it from its lightest depth (QD1: 4,723 IOPS, completion "
                          "p99 1,974 µs): no closed-loop bound is stated"), cells[0]
    assert cells[1] == "missed: its own p99 1,188 µs (45,166 IOPS over its depth search up to QD 16)"  # S13-bare 7
    met = closed_meeting(q, "vm", "randread", 5000.0)   # a looser target the sweep's QD1 met
    assert met["closed_sweep_iops"] is not None and met["closed_sweep_missed_qd"] is None
    rows.loc[0, "target_p99_us"] = 5000.0
    rows.loc[0, list(met)] = list(met.values())
    assert slo_display(rows).iloc[0, 4].startswith("≥ 65,752")


def test_a_phase_that_stepped_is_not_called_scatter():
    """Ninth read S12-loop9 1: the loop run's first SEQ phase, 2,735, 2,551, then 1,188, 731, 938, 814, 722, 1,085,
    1,315 MB/s, was 'scattering 722-2,735 MB/s from its first second, with no trend' (a slope test, blind to a step).
    Now one least-squares change point names the step; the 1-CPU run's RND phase (310-401 MB/s) still scatters."""
    from memstor.analysis import pts_recovery as pr

    x = pr.xsr_table(pd.read_csv(DATA / "fio-pts-xsr-seconds-loop.csv"), pd.read_csv(DATA / "fio-pts-xsr-loop.csv"))
    note = x.iloc[0]["from_level_note"]
    assert "stepped after 2 s: median 2,643 MB/s before, 938 MB/s after; no linear trend" in note, note
    assert "scattering" not in note
    assert pr.phase_trend([401, 316, 372, 345, 375, 370, 351, 389, 310]).startswith("scattering 310-401 MB/s")


def test_late_causes_name_their_threshold_and_leave_a_rate_that_issued_nothing_out():
    """Ninth reads S12-loop9 5: u98, overloaded in its ramp with no lag measured, was among 'the late points (p99 lag
    over its bound)' and its one 46 µs sleep named a CPU and a pause as causes; S12-1cpu9 4: 'the machine paused
    longer than the lag bound at u30' while u95's pause (2,320 µs) was over its bound too: the rule also needs a pause
    longer than at any rate that held (2,471 µs), now said."""
    from memstor.report.text.openloop_causes import late_causes

    loop = pd.read_csv(DATA / "load_latency-loop.csv")
    said, causes = late_causes(loop[loop["rw"] == "randread"], loop)
    assert "at u98 ioarrive reached its cap of 4,096 I/Os in flight before the window and issued nothing in it: no " \
        "lag was measured there, so no cause is read from it" in said, said
    assert said.count("u98") == 1, said  # in its own clause only: its one 46 µs sleep is no cause
    one = pd.read_csv(DATA / "load_latency-1cpu.csv")
    said, causes = late_causes(one[one["rw"] == "randwrite"], one)
    assert said.endswith("the machine paused longer than the lag bound and than at any rate that held (2,471 µs) at "
                         "u30."), said
    assert "pause" in causes


def test_a_pair_that_agreed_closely_is_not_said_identical():
    """Ninth read S12-1cpu9 8: 'the one pair measured twice agreed within 1.00×' for 30,487 against 30,431 IOPS."""
    from memstor.analysis.spread import run_spread

    said = run_spread(pd.read_csv(DATA / "summary-1cpu.csv"), "vm", "randwrite").short()
    assert said == "the 10 % assumed for single fresh runs (the one pair measured twice agreed within 0.2 % (1.002×))"
    loop = run_spread(pd.read_csv(DATA / "summary-loop.csv"), "vm-loop328", "randwrite").short()
    assert "agreed within 1.07×" in loop


def test_writes_faster_than_reads_names_a_random_read_above_the_sequential_one():
    """Ninth read S12-1cpu9 5: 'writes faster than reads' from a sequential read of 822 MB/s while the random 1 MiB
    read of the same sweep measured 1,377 MB/s. Now the finding names it; bare's sequential read (1,293 MB/s, above
    its random 964) adds nothing."""
    from memstor.report.text.first_page import _random_read_above

    one = pd.read_csv(DATA / "summary-1cpu.csv")
    said = _random_read_above(one[one["rw"] != "randwrite"], "vm", 822.0, 1_327.0)  # no random write beside it
    assert said == ("; yet the same-size random read measured 1,377 MB/s in fio-block-size: the sequential read "
                    "(0.60× it) is doubtful, and with it the comparison")  # S13-1cpu 3
    assert _random_read_above(pd.read_csv(DATA / "summary-bare.csv"), "vm", 1293.0, 1_100.0) == ""
    assert _random_read_above(None, "vm", 822.0, 1_327.0) == ""


def test_a_withheld_memory_headline_points_to_the_table_that_has_its_numbers():
    """Ninth read S12-bare9 5: 'withheld: its run failed the memory gate (...); every measurement in §4.3' while the
    PDF's §4.3 prints no bandwidth (its table is in the HTML); and the machine-wide gate row said 'the points are not
    dropped one by one' beside that withheld headline. Both now say what the report does."""
    from memstor.report.text.headline_table import _gate_failed

    trust, value = _gate_failed(pd.Series({"gate": "failed: bandwidth_unstable",
                                           "gate_detail": "bandwidth spread 15.2 % >= 5 %"}))
    assert trust == "not valid (memory_gate: bandwidth_unstable)"
    assert value.endswith("every measurement in report.html's §4.3 table")


def test_a_qd1_latency_headline_names_lower_means_at_one_in_flight_elsewhere():
    """Ninth read S12-1cpu9 3: '4K QD1 random read mean latency 209' with no caveat, while other runs with one I/O in
    flight measured 93-168 µs, and its own completion median was 70.1 µs. The other side: bare's 67.9 µs, below
    every other run at depth 1, keeps its trust."""
    from memstor.report.text.headline_trust import qd1_caveat

    said = qd1_caveat("sound (its checks pass)", pd.read_csv(DATA / "summary-1cpu.csv"), "vm", "qd1_randread_lat_us",
                      209.349)
    assert said == ("with caveats (other runs with one I/O in flight measured 1.24-2.26× lower means: 92.7-168 µs (fio-pts-cbw: "
                    "the reads of a mix of block sizes, 40 % reads; fio-pts-dirth: the reads of 8 KiB, 65 % reads), and "
                    "its own median completion is 70.1 µs: its mean rests on its tail)")  # S19-bare 9: which runs
    bare = pd.read_csv(DATA / "summary-bare.csv")
    assert qd1_caveat("sound (its checks pass)", bare, "vm", "qd1_randread_lat_us", 67.9) == "sound (its checks pass)"
    assert qd1_caveat("not valid (x)", bare, "vm", "qd1_randread_lat_us", 500.0) == "not valid (x)"


def test_a_full_request_queue_is_not_named_alone_where_the_same_points_paused_or_woke_late():
    """Ninth read S12-loop9 2: randread u10-u95 were said to wait for the full request queue, 'not for a CPU', while
    u10, u30 and u70 paused longer than their lag bounds (4,697 > 690 µs ...) and u30's sleeps woke 2,171 µs late
    against 1,130: the text now names both and says the columns do not separate them; where no pause or wake-up
    reaches the bound, the queue stands alone."""
    from memstor.report.text.openloop_causes import late_causes, way_out

    loop = pd.read_csv(DATA / "load_latency-loop.csv")
    read = loop[loop["rw"] == "randread"]
    said, causes = late_causes(read, loop)
    assert ("the submissions waited for the block layer's full request queue; at u30 the sleeps also woke later than "
            "the lag bound and at u10, u30, u70 the machine paused longer than it: the columns do not separate these "
            "causes") in said, said
    assert "not for a CPU" not in said and causes == {"request_queue", "wake", "pause"}
    assert "a quieter machine" in way_out(causes, read)
    calm = read.assign(pause_max_us=read["lag_bound_us"] / 2, wake_delay_p99_us=read["lag_bound_us"] / 2)
    said, causes = late_causes(calm, calm)
    assert "the block layer's full request queue, not for a CPU;" in said and "do not separate" not in said, said
    assert causes == {"request_queue"}


def test_a_level_that_rises_gently_without_a_step_is_one_level():
    """Ninth read S12-1cpu9 7: 'level 2 4.39 ns, 181-256 KiB' above 'L2 5.91 ns, 1-1.4 MiB' where the curve rose
    4.3 ns at 64 KiB to 6.4 ns at 1 MiB in steps of 1.07-1.11x, then 20.9 ns: one level, L2, rising, with its
    range said. The other side: bare's 256 -> 362 KiB step of 1.26x (4.44 -> 5.58 ns) keeps two levels."""
    from memstor.analysis import hierarchy as h

    one = h.cache_levels(pd.read_csv(DATA / "mem-hierarchy-1cpu.csv"), CACHES)
    assert list(one["level"][:3]) == ["L1", "L2", "last level, not shown to be DRAM"]
    l2 = one.set_index("level").loc["L2"]
    assert l2["agrees"] and round(l2["latency_ns"], 1) == 4.7 and (l2["held_bytes"], l2["off_bytes"]) == (
        1_048_576, 1_482_880)
    assert "on it 64 KiB-1,024 KiB (9 sizes, rising 4.3-6.4 ns with no step of 1.25x between neighbouring " \
        "sizes)" in l2["note"], l2["note"]
    bare = h.cache_levels(pd.read_csv(DATA / "mem-hierarchy-bare.csv"), CACHES)
    assert list(bare["level"][:3]) == ["L1", "plateau 2 (no kernel cache)", "L2"]
    assert "rising" not in bare.set_index("level").loc["plateau 2 (no kernel cache)", "note"]


def test_preconditioning_over_more_than_the_rounds_span_says_what_it_covered():
    """Ninth read S12-loop9 3: the loop run (measured before S12-loop 1) preconditioned the whole 6 GiB device twice
    (12.88 GB) and then wrote rounds over its first 256 MiB; the table read '2 × sequential writes (12.88 GB)' under
    'span 256 MiB', which with the method's 'the span written twice' states a 0.54 GB preconditioning. The other
    side: passes over the rounds' own span keep the short cell."""
    from memstor.analysis import steady_state as ss
    from memstor.report.text import steady_state as stext

    rows = pd.read_csv(DATA / "fio-steady-state-loop.csv").assign(table="fio-steady-state")
    cell = stext.steady_display(ss.verdict_table(rows))["preconditioning"].iloc[0]
    assert cell == "2 × sequential writes over 6 GiB (12.88 GB; each 24× the rounds' span)"
    whole = rows.assign(file_size_bytes=rows["span_bytes"])
    assert stext.steady_display(ss.verdict_table(whole))["preconditioning"].iloc[0] == "2 × sequential writes (12.88 GB)"


def test_a_best_most_runs_of_its_own_job_beat_is_no_maximum_not_may_be_high():
    """Tenth reads S13-bare 1 / S13-loop 2 / S13-1cpu 4: 'Best 4K random write 43,748 ... may be high by the 10 %
    assumed' while 30 of the same job's 35 runs in other experiments (fio-pts-hir, fio-steady-state) measured more.
    Now the range and the count are said, and with most of them above, 'a single run, not a maximum' replaces 'may
    be high'. The other sides: a minority above (1-CPU's write, 5 of 18) keeps 'may be high' with the range; none
    above (bare's read) says nothing; fio's latency_target run, whose depth varies, is not the same job."""
    from memstor.report.text.headline_trust import same_job_caveat

    detail = "QD32x4, io_uring, O_DIRECT, fio-queue-depth, n=1"
    bare = pd.read_csv(DATA / "summary-bare.csv")
    said, most = same_job_caveat("sound", bare, "vm", "best_randwrite_iops", detail, 43748.003992)
    assert most and said == ("the same job (QD32x4) measured 32,435–75,211 IOPS in 35 other runs during or "
                             "after preconditioning (fio-pts-hir, fio-steady-state), 30 of them more"), said  # S14-loop 1
    assert same_job_caveat("sound", bare, "vm", "best_randread_iops", detail, 61929.0) == ("", False)
    assert same_job_caveat("not valid (x)", bare, "vm", "best_randwrite_iops", detail, 43748.003992) == ("", False)
    one = pd.read_csv(DATA / "summary-1cpu.csv")
    said, most = same_job_caveat("sound", one, "vm", "best_randwrite_iops", detail, 53507.47012)
    assert not most and said.endswith("in 18 other runs during or after preconditioning (fio-pts-hir, "
                                      "fio-steady-state), 5 of them more")
    said, _ = same_job_caveat("sound", one, "vm", "best_randread_iops", detail, 59753.0)
    assert said == ""  # its only other run is fio's latency_target search (65,752): elsewhere_caveat names it


def test_the_slo_table_gives_a_missed_runs_rate_and_a_sweep_that_met_more_than_fio_stated():
    """Tenth reads S13-bare 7: 'missed: its own p99 5,079 µs' under a header promising IOPS and depth per job (the
    table has 30,341 IOPS at depth 8); S13-loop 7: randwrite '≥ 124,502' (fio's cut-off run) while the queue-depth
    sweep's completion p99 met 1 ms up to 129,387 IOPS. The other side: a sweep that met less than fio's stated
    figure is not added (loop's randwrite with the sweep at 120,000)."""
    from memstor.report.text.openloop import slo_display

    col = "fio latency_target, closed loop (IOPS, depth per job, its p99)"
    bare = slo_display(pd.read_csv(DATA / "slo-bare.csv"))[col]
    assert bare.iloc[0].startswith("missed: its own p99 5,079 µs (30,341 IOPS over its depth search up to QD 8); the most IOPS of a closed QD sweep's "), bare[0]
    loop = pd.read_csv(DATA / "slo-loop.csv")
    cell = slo_display(loop)[col].iloc[1]
    assert cell.startswith("≥ 124,502 (its run's p99 594 µs; a lower bound") and cell.endswith(
        "; the most IOPS of a closed QD sweep's point whose completion p99 met it: 129,387 (QD16, 264 µs; the submission time is not in "
        "it, so whether the total met it is not shown)"), cell
    less = slo_display(loop.assign(closed_sweep_iops=120_000.0))[col].iloc[1]
    assert "closed QD sweep" not in less and less.startswith("≥ 124,502")


def test_a_mix_prediction_leaves_out_a_part_the_queue_depth_sweep_shows_out_of_line():
    """Tenth read S13-loop 1: the 4 KiB mixes were 'not a finding: the parts measured in two experiments differ by
    62.47×' over fio-block-size's 2,949 IOPS, which §2 itself names out of line (the sweep's 186,505 and 184,083
    side with fio-rw-ratio's 184,245). Now that value is left out, said so, and the mix is judged (-3.9 %). The other
    side: where the sweep sides with the other experiment (1-CPU: 58,281 against the mix sweep's own 10,647), the mix
    sweep's own part is the odd one and its mixes stay no finding."""
    from memstor.report.text.workloads import rw_mix_sentences

    loop = pd.read_csv(DATA / "summary-loop.csv")
    said = rw_mix_sentences(loop, str(loop["host"].iloc[0]))[0]
    assert "(-3.9 %) — the mix costs what its reads and writes cost apart" in said, said
    assert said.endswith("(2,949 IOPS elsewhere left out: out of line by the queue-depth sweep, §2).")
    one = pd.read_csv(DATA / "summary-1cpu.csv")
    said = rw_mix_sentences(one, "vm")[0]
    assert "not a finding: the parts measured in two experiments differ by 5.47×" in said and "left out" not in said


def test_an_overshoot_names_the_generator_that_made_it():
    """Tenth read S13-1cpu 6: open_loop_rate said 'fio delivered more than offered' and 'fio did not offer the rates'
    of ioarrive's u80 (112 %). The other side: fio's rows (or a table without the generator column) keep 'fio'."""
    from memstor.analysis.validity.openloop import open_loop_rows

    one = pd.read_csv(DATA / "load_latency-1cpu.csv")
    rate = {r["subject"]: r for r in open_loop_rows(one) if r["check"] == "open_loop_rate"}["randread"]
    assert rate["status"] == "fail" and "ioarrive delivered more than offered" in rate["evidence"], rate["evidence"]
    assert rate["consequence"].endswith("ioarrive did not offer the rates they are stated at")
    fio = {r["subject"]: r for r in open_loop_rows(one.drop(columns="generator")) if r["check"] == "open_loop_rate"}
    assert "fio delivered more than offered" in fio["randread"]["evidence"]


def test_a_raw_devices_spans_are_not_called_files():
    """Tenth read S13-loop 11: on the loop device the steady-state text said '(fio-pts-hir, 13 points, 6 GiB file)'
    and the preconditioning '24× the rounds' span' of two passes each 24×. The other side: a file-backed run keeps
    'file' (the 1-CPU run's test file)."""
    from memstor.analysis import steady_state as ss
    from memstor.report.text import steady_state as stext

    rows = pd.read_csv(DATA / "fio-steady-state-loop.csv").assign(table="fio-steady-state")
    said = stext.steady_sentences(ss.verdict_table(rows), pd.read_csv(DATA / "summary-loop.csv"))[0]
    assert "(fio-pts-hir, 13 points, 6 GiB of the device)" in said and " file" not in said, said
    v = ss.verdict_table(rows).assign(span="file")
    assert "(fio-pts-hir, 13 points, 6 GiB file)" in stext.steady_sentences(v, pd.read_csv(DATA / "summary-loop.csv"))[0]


def test_the_sequential_finding_carries_the_writes_not_shown_to_last():
    """Tenth read S13-loop 5: page 2's 'Sequential transfers: 3,886 MB/s read, 3,222 MB/s write' dropped the headline's
    'not shown to last' (the same job ran 1,364-1,559 MB/s over 6 GiB in fio-pts-xsr). The other side: a write the
    same job elsewhere did not fall short of (bare: 669 MB/s, XSR 1,152-1,344) gets no clause."""
    from memstor.report.text.headline_trust import lasting_words

    loop = pd.read_csv(DATA / "summary-loop.csv")
    said = lasting_words(loop, "vm-loop328", 3222.0)
    assert said == ("not shown to last: the same 1 MiB QD32x1 write ran at 1,364-1,559 MB/s (whole-run means) over 6 GiB "
                    "(the block-size sweep's: 256 MiB) in fio-pts-xsr"), said
    assert lasting_words(pd.read_csv(DATA / "summary-bare.csv"), "vm", 669.0) == ""
    from memstor.report.text import first_page
    assert first_page.lasting_words is lasting_words  # page 2's finding reads the same rule (its words point there)


def test_a_closed_run_with_fewer_in_flight_includes_the_write_only_mix():
    """Tenth read S13-loop 6: page 2 cited fio-block-size's 155,066 IOPS (as much as the sweep's 149,970) and left out
    fio-rw-ratio's write-only mix, 166,246 IOPS at 192 µs (about 32 in flight, fewer than 155,066's): it is a random
    write at QD32x1 too. The other side: reads (the sweep's most 186,505 at QD16) have no such run here."""
    from memstor.report.text.queueing import fewer_in_flight

    s = pd.read_csv(DATA / "summary-loop.csv")
    one = s[(s["experiment"] == "fio-queue-depth") & (s["numjobs"] == 1)]
    best = one[one["rw"] == "randwrite"].sort_values("iops").iloc[-1]
    assert fewer_in_flight(s, "vm-loop328", "randwrite", best).startswith(
        "; fio-rw-ratio's closed run (QD32x1) measured 166,246 IOPS (more than the sweep's 149,970; the same job "
        "measured 155,066 IOPS in fio-block-size, 1.03× the sweep's most) at a mean of 192 µs")  # S14-bare 1: both
    assert fewer_in_flight(s, "vm-loop328", "randread", one[one["rw"] == "randread"].sort_values("iops").iloc[-1]) == ""


def test_the_late_points_are_all_named_before_their_groups():
    """Tenth read S13-bare 8: 'At the late points (p99 lag over its bound) at u50, ..., u98 ...' listed the queue-full
    group first and u10, u30 (late too) in a later clause, read as not late. Now every late point is named first."""
    from memstor.report.text.openloop_causes import late_causes

    loop = pd.read_csv(DATA / "load_latency-loop.csv")
    said, _ = late_causes(loop[loop["rw"] == "randread"], loop)
    assert said.startswith("At the late points (p99 lag over its bound: u10, u30, u50, u70, u80, u90, u95): at u10, "
                           "u30, u50, u70, u80, u90, u95 up to"), said  # S16-loop 2: u98 failed with no lag measured
    read = loop[loop["rw"] == "randread"]
    said, _ = late_causes(read.assign(generator_checks=["ok"] + list(read["generator_checks"][1:])), loop)
    assert said.startswith("At the late points (p99 lag over its bound: u30, u50, u70, u80, u90, u95): at u30"), said
    said, _ = late_causes(loop[loop["rw"] == "randwrite"], loop)  # one group: it names them all itself
    assert said.startswith("At the late points (p99 lag over its bound) at u10, u30, u50, u70, u80, u90, u95, u98 up")
    assert late_causes(loop.iloc[0:0], loop) == ("", set())


def test_a_dirth_maximum_whose_order_repeated_is_said_so():
    """Tenth read S13-1cpu 2: 'no maximum located: 55,300 IOPS at T4 Q4 and 34,032 at T2 Q4 are 1.62x apart, within the
    reruns' spread of up to 1.70x' while every measurement of T4 Q4 (55,300, 39,839) lies above every one of T2 Q4
    (34,032, 27,976). Now the order is said to repeat and the value not (T4 Q4's rerun failed pts_repeat, which still
    withholds its role). The other side: reruns that swap the order keep 'no maximum located'."""
    from memstor.report.text import pts

    d, v = pd.read_csv(DATA / "dirth-1cpu.csv"), pd.read_csv(DATA / "validity-pts-1cpu.csv")
    said = pts._dirth_result(d, v)
    assert said.startswith("the two highest points kept their order in the reruns (T4 Q4 55,300 and 39,839 IOPS, T2 Q4 "
                           "34,032 and 27,976), T4 Q4's value did not (0.72×): no maximum is stated; optimal point not "
                           "located"), said  # S14-1cpu 2: 'T4 Q4 is the highest point' read as the role withheld
    assert "is the highest point" not in said
    assert "no maximum located" not in said and "max IOPS" not in " ".join(pts.gated_roles(d, v)["role"].astype(object).fillna("").astype(str))
    repeated = v.assign(status=["pass" if s == "DIRTH T4 Q4 rerun" else x for s, x in zip(v["subject"], v["status"])])
    assert "kept their order" not in pts._dirth_result(d, repeated)  # its value repeated: no 'its value did not'
    swapped = v.assign(value=[0.5 if s == "DIRTH T4 Q4 rerun" else x for s, x in zip(v["subject"], v["value"])])
    said = pts._dirth_result(d, swapped)  # T4 Q4's rerun 27,650 below T2 Q4's 34,032
    assert "no maximum located: 55,300 IOPS at T4 Q4 and 34,032 at T2 Q4" in said and "kept their order" not in said


def test_a_last_level_far_below_the_kernels_llc_is_said_not_seen_not_only_too_short_a_sweep():
    """Tenth read S13-bare 3: 'The sweep covered 4 KiB to 64 MiB, only 1.3× the kernel's 48 MiB last-level cache: too
    little beyond it for the last level to be shown to be DRAM' while the curve left its last cache level at 1.2 MiB
    for the 119 ns level and showed no step near 48 MiB: the guest does not see that cache as a level. The other
    side: a step near the kernel's size keeps the sweep-length sentence."""
    from memstor.analysis import hierarchy as h
    from memstor.report.text.hierarchy import coverage_sentence

    df = pd.read_csv(DATA / "mem-hierarchy-bare.csv")
    ws, step = h.working_set_table(df), h.last_step(h.cache_levels(df, CACHES), "vm")
    said = coverage_sentence(ws, "vm", step)
    assert "1.3× the kernel's 48 MiB last-level cache, which the curve does not show (it steps at 1.2 MiB to the " \
        "119 ns level it ends on; as on a VM)" in said and "too little" not in said, said
    near = coverage_sentence(ws, "vm", (40 * 2**20, 119.0))
    assert near.endswith("only 1.3× the kernel's 48 MiB last-level cache: too little beyond it for the last level to "
                         "be shown to be DRAM.")


def test_an_unjudged_peak_bandwidth_names_the_machine_wide_gate_failures():
    """Tenth read S13-loop 8: 'Peak memory bandwidth 6,632 MB/s — with caveats (memory_gate not checked for its
    section ...)' while every bandwidth the gate judged failed cpu_share and bandwidth_unstable, failures the table
    calls a property of this machine. Now the trust says so. The other side: without machine-wide failures (only
    per-point ones, or latency_unstable alone) nothing is added."""
    from memstor.report.text.headline_table import _machine_failures

    v = pd.read_csv(DATA / "validity-memory-gate-loop.csv")
    assert _machine_failures(v, "vm-loop328") == (
        "the values the gate judged here failed bandwidth_unstable, cpu_share machine-wide: an unjudged one is no firmer")
    local = v[~v["subject"].str.contains("bandwidth_unstable|cpu_share")]
    assert _machine_failures(local, "vm-loop328") == ""  # latency_unstable (machine) alone bears on no bandwidth
    assert _machine_failures(v, "other-host") == ""


def test_a_capacity_curve_with_no_held_cell_is_one_sentence():
    """The quick PDF's page budget (tenth reads left bare and loop at 11 pages): a capacity table of dashes and one
    sentence per row where no cell held became one sentence; with a held cell the table stays."""
    from memstor.report.text.mixed_load import no_capacity

    none = pd.DataFrame({"host": ["vm", "vm"], "write_offered_MBps": [0.0, 208.6], "target_us": [1000.0, 1000.0],
                         "cells_used": [0.0, float("nan")]})
    assert no_capacity(none) == ("No cell held at any write rate (0.0, 208.6 MB/s offered): no read capacity is stated "
                                 "for read p99 ≤ 1,000 µs.")
    assert no_capacity(none.assign(cells_used=[0.0, 3.0])) == ""
    assert no_capacity(None) == "" and no_capacity(none.iloc[0:0]) == ""
