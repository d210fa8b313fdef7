"""The storage sweeps' statements against the tables of three reviewed runs (issue 38, fifth review, workstream B):
the rows in tests/data/review-s5 (SOURCES.md) are copied from the tables the reviewed reports were built from."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from memstor.report.text import first_page as fp
from memstor.report.text import headline_table as ht

DATA = Path(__file__).parent / "data" / "review-s5"


def table(name: str, run: str) -> pd.DataFrame:
    return pd.read_csv(DATA / f"{name}-{run}.csv")


def shown(run: str) -> pd.DataFrame:
    return ht.headline_evidence(table("headline", run), table("validity", run)).set_index("quantity")


def test_a_disagreement_at_one_configuration_withholds_only_that_configurations_values():
    """R-1cpu B2: config_agreement failed at 4 KiB randwrite QD32x1 (76,512 against 47,150 IOPS); the QD1x1
    latency (125.5 µs) and the QD32x4 best (79,964 IOPS) were withheld for it, yet stated in the findings."""
    one = shown("1cpu")
    assert one.loc["4K QD1 random write mean latency (µs)", "value"].startswith("126")
    assert "config_agreement" not in one.loc["4K QD1 random write mean latency (µs)", "trust"]
    assert one.loc["Best 4K random write (IOPS)", "value"].startswith("79,964")
    # the other side: the same value had it been measured at the disagreeing configuration (QD32x1) is withheld
    h = table("headline", "1cpu")
    h.loc[h["key"] == "best_randwrite_iops", "detail"] = "QD32x1, io_uring, O_DIRECT, fio-block-size, n=1"
    at = ht.headline_evidence(h, table("validity", "1cpu")).set_index("quantity").loc["Best 4K random write (IOPS)"]
    assert at["value"].startswith("withheld: config_agreement failed")


def qd(run: str) -> pd.DataFrame:
    """The queue-depth sweep's rows as memstor.analysis.points.qd_points marks them (spec points not in_sweep)."""
    s = table("summary", run)
    s = s[(s["experiment"] == "fio-queue-depth") & (s["bs_bytes"] == 4096)].copy()
    s["in_sweep"] = ~s["spec_point"].astype(bool)
    return s


def test_the_most_along_the_sweep_is_never_below_a_point_of_the_same_sweep():
    """R-loop 2.6 / R-1cpu M1 / R-bare M-2: 'the most, 52,330 IOPS ... with 16 in flight' while the same sweep's
    QD32x4 point measured 75,231 IOPS (loop); 61,151 against 79,964 (1cpu)."""
    loop = fp._tradeoff(qd("loop328"), qd("loop328")["host"].iloc[0], "randwrite")
    assert "the most along its one-job sweep, 52,330 IOPS" in loop
    assert "with 4 jobs (QD32x4, 128 in flight) the same sweep measured more, 75,231 IOPS" in loop
    one = qd("1cpu")
    assert "79,964 IOPS" in fp._tradeoff(one, one["host"].iloc[0], "randwrite")
    # the other side: loop's randread QD32x4 (227,302) is below QD64x1 (375,887): 'the most' as it was
    read = fp._tradeoff(qd("loop328"), qd("loop328")["host"].iloc[0], "randread")
    assert "; the most, 375,887 IOPS" in read and "jobs" not in read


def knees(run: str) -> pd.DataFrame:
    from memstor.analysis.points import with_best_measured
    return with_best_measured(table("knee", run), qd(run))


def test_the_knee_bound_uses_the_most_the_sweep_measured_and_is_a_lower_bound():
    """R-1cpu B3, R-loop 7.6, R-bare M-9: the bound used X_best 104,349 (one-job sweep) while the same experiment
    measured 136,314 at QD32x4; with it X·R_min = 13.4, and the still-rising sweep gives no upper bound."""
    from memstor.report.text import queueing as q
    k = knees("1cpu").set_index("rw")
    assert k.loc["randread", "X_best_iops"] == pytest.approx(136_313.6, abs=1)
    assert k.loc["randread", "N_star_bound"] == pytest.approx(13.36, abs=0.01)
    said = q.knee_sentences(knees("1cpu"))
    assert "N* ≥ 13.3 (the sweep had not levelled off, so the data set no upper bound; X_best is one run with 4 jobs: " \
        "from the one-job sweep's most, 104,349 IOPS, N* ≥ 10.2)" in said[0]  # S19-loop 8
    assert "N* = 10.2" not in said[0]
    shown = q.knee_display(knees("1cpu")).set_index("workload")
    assert shown.loc["randread", "X_fit (IOPS)"] == "– (not valid)"          # the failed fit's numbers not shown
    # fourth read R-1cpu M4: randwrite's 'bound' 10.04 (79,964 x 125.5 µs at N = 1) was none, its latency fell to
    # 107.6 µs at N = 4: the bound does not apply, so it judges no fit (tests/test_knee_bound.py)
    # fifth read R-1cpu M1: the sweep measured 79,964 IOPS at QD32x4, above X_fit + 1.96 SE (67,408): no finding
    assert shown.loc["randwrite", "X_fit (IOPS)"] == "– (not a finding: below X_best)"
    assert "does not apply here" in q.knee_sentences(knees("1cpu"))[1]


def test_a_fitted_knee_whose_interval_lies_below_the_measured_bound_is_not_a_finding():
    """R-loop 8.1, R-1cpu M2: 'N* = 2.58 [1.71, 3.90]' in bold while 75,231 IOPS x 52.6 µs = 3.96 was measured."""
    from memstor.report.text import queueing as q
    loop = q.knee_sentences(knees("loop328"))[1]
    assert "**" not in loop.split(":", 1)[1] and "— not a finding: " in loop and "N* ≥ 3.9" in loop
    # the other side: bare's randread bound (10.3) inside a fit's interval [3.89, 21.3] leaves the fit stated
    k = knees("bare").iloc[[0]].copy()
    k["not_valid"], k["N_star_fit"], k["N_star_fit_ci_low"], k["N_star_fit_ci_high"] = "", 9.09, 3.89, 21.3
    k["X_max_fit_iops"], k["R_min_fit_us"] = 124_758.6, 72.88
    said = q.knee_sentences(k)[0]  # stated, not bold: below its bound (S22-cpu1 2)
    assert "= 9.09 [3.89, 21.3] I/Os in flight (95 % interval" in said and "not a finding" not in said
    k["X_max_fit_se_iops"] = 20_000.0  # its band reaches X_best 150,645 (else not a finding, fifth read R-1cpu M1)
    assert q.knee_display(k).iloc[0]["X_fit (IOPS)"] == "124,759 ± 20,000"   # a fit that stands: its numbers shown


def test_a_mix_verdict_needs_parts_that_agree_between_experiments():
    """R-1cpu B4, R-loop 3.4: '-16.0 %: reads and writes interfere' from a write-only 76,512 IOPS that
    fio-block-size measured as 47,150 (1.62x; with it the mix is above the prediction); 'every mix' for one mix."""
    from memstor.report.text.workloads import rw_mix_sentences
    one = table("summary", "1cpu")
    said = rw_mix_sentences(one, one["host"].iloc[0])[0]
    assert "interfere" not in said and "not a finding: the parts measured in two experiments differ by 1.62×" in said
    assert "every mix" not in rw_mix_sentences(table("summary", "loop328"), "vm2-loop-fio328")[0]
    # the other side: the same mix with the parts agreeing (fio-block-size's write-only set to 76,512) is judged
    agree = one.copy()
    agree.loc[(agree["experiment"] == "fio-block-size") & (agree["rw"] == "randwrite") & (agree["bs_bytes"] == 4096)
              & (agree["direction"] == "write"), "iops"] = 76_512.24
    agree.loc[(agree["experiment"] == "fio-block-size") & (agree["rw"] == "randread") & (agree["bs_bytes"] == 4096),
              "iops"] = 119_211.9
    # S20-bare 3 (session 17): beyond only the assumed spread, the lead says the difference is not established
    assert "(-16.0 %) — a difference between single runs only, not shown to be the device's" in \
        rw_mix_sentences(agree, one["host"].iloc[0])[0]


def test_a_larger_block_would_move_more_only_when_the_step_beats_the_run_to_run_spread():
    """R-1cpu M5, R-bare M-5: 'a larger block would still move more' from 1,555 -> 1,799 MB/s (+15.7 %) with the
    same configuration measured 1.62x apart in two experiments; bare's +12.3 % inside 1.22x."""
    from memstor.report.text.workloads import block_size_sentences
    one = table("summary", "1cpu")
    reads, writes = block_size_sentences(one, one["host"].iloc[0])
    # S8 R-1cpu C3: the reads' step against the reads' own 1.16x; the writes' 1.62x pair disagreed (no spread)
    assert "+15.7 %) is within the largest gap between two fresh runs of one read job measured here, 1.16×" in reads and "would still" not in reads
    assert ("+119.1 %, more than the 10 % assumed for single fresh runs, not measured (the pair measured twice disagreed, "
            "1.62×: not counted as spread): a difference between single runs beyond an assumed spread only); larger "
            "blocks were not measured") in writes
    assert "would still move more" not in writes  # third read R-1cpu M3: no extrapolation beyond the sweep
    bare = table("summary", "bare")
    # S8: bare's writes measured 1.03x (one pair: 10 % assumed), not the reads' 1.22x: +12.3 % is qualified
    assert ("+12.3 %, more than the 10 % assumed for single fresh runs (the one pair measured twice agreed within 1.03×): a difference between single runs "
            "beyond an assumed spread only") in block_size_sentences(bare, bare["host"].iloc[0])[1]


def test_the_ceilings_table_holds_the_best_measured_not_the_best_headline():
    """R-loop 3.1, R-bare M-4, R-1cpu M6: 'best measured 4,715 MB/s' (the sequential-read headline) while the run
    measured 6,365 MB/s (randread 1 MiB); 2,368 against the write-saturation run's 2,816; DRAM 21,823 against a
    loaded-latency curve's 25,206 — the figures physical_ceiling itself holds against the ceiling."""
    from memstor.analysis.ceilings import ceiling_use
    best = {}
    for run in ("1cpu", "bare", "loop328"):
        use = ceiling_use(table("ceilings", run), table("headline", run), table("summary", run),
                          table("memory_fit", run)).set_index("what")
        best[run] = use["measured"]
    assert best["loop328"]["storage interface"] == pytest.approx(6_365.2, abs=0.1)
    assert best["1cpu"]["storage interface"] == pytest.approx(2_816.4, abs=0.1)
    assert best["bare"]["DRAM peak"] == pytest.approx(25_206.1, abs=0.1)
    # the other side: without other figures the headline stays the best measured (loop's DRAM headline 20,655)
    assert best["loop328"]["DRAM peak"] == pytest.approx(20_654.7, abs=0.1)


def test_a_littles_law_excess_is_not_explained_by_gaps():
    """R-loop 7.5: randrw QD32x1 X·R = 150,094 x 227.3 µs = 34.1 > 32 (+6.6 %) was put down to 'fio's own gaps
    between completion and resubmission', which can only make X·R smaller than N."""
    from memstor.analysis.storage import _reason
    little = {run: table("littles_law", run) for run in ("loop328", "1cpu")}
    over = little["loop328"][little["loop328"]["flagged"].astype(bool)].iloc[0]
    said = _reason({"iodepth": 32, "iodepth_reached": True}, float(over["residual_pct"]), "io_uring", True)
    assert "+6.6% above" in said and "gaps only lower it" in said and "gaps between completion" not in said
    # the other side: a residual below N is the gaps' (1cpu's lowest, -17.8 %)
    low = float(little["1cpu"]["residual_pct"].min())
    assert low < -5 and "gaps between completion" in _reason({"iodepth": 32, "iodepth_reached": True}, low,
                                                             "io_uring", True)


def test_the_block_size_figure_draws_the_block_size_sweep_alone_and_every_workload():
    """R-loop 3.2, R-bare M-3, R-1cpu M4: Figure 1's randwrite 8 KiB point and two of its three 1 MiB write points
    were XSR access groups (another experiment, another drive state); sequential read (a headline) was not drawn."""
    import matplotlib.pyplot as plt

    from memstor.report.plots.synthesis import block_size_figure
    s = table("summary", "loop328")
    fig = block_size_figure(s)
    drawn = {ax.get_title().split(",")[0].split(" (")[0]: sorted(x for ln in ax.get_lines() for x in ln.get_xdata())
             for ax in fig.axes if ax.get_lines()}
    plt.close("all")
    assert len(drawn) == 4                                             # randread, randwrite, read, write
    assert 8192 not in [x for xs in drawn.values() for x in xs]        # XSR's 8 KiB access group
    assert sorted(len(xs) for xs in drawn.values()) == [1, 1, 3, 3]    # one 1 MiB point per sequential workload


def test_a_cause_not_measured_is_not_asserted():
    """R-1cpu M3, R-bare C-2, R-loop 2.8: 'a write-back cache above the drive took the writes' was asserted (the
    same 1 MiB write ran at 1,038-1,112 MB/s for 10 s in XSR), and '(§2)' pointed to a text without the numbers."""
    from types import SimpleNamespace
    h = table("headline", "1cpu")
    S = SimpleNamespace(qd=None, headline=h, validity=table("validity", "1cpu"), wsat=None, cache_levels=None)
    said = " ".join(fp.findings(S, "vm-1cpu"))
    assert "would give this, but nothing here measured it" in said and "took the writes" not in said
    assert "2,368 MB/s write — writes faster than reads in these runs" in said
    # the other side: a write not above 1.2x the read gets no such clause (bare: 2,134 against 1,481 is above)
    h2 = h.copy()
    h2.loc[h2["key"] == "seq_write_MBps", "value"] = 1_500.0
    S.headline = h2
    assert "faster than reads" not in " ".join(fp.findings(S, "vm-1cpu"))


def test_the_queue_depth_figure_labels_its_throughput_axes():
    """R-loop 8.2, R-bare C-14: Figure 14's IOPS axes (log, less than a decade) carried one labelled tick or none."""
    import matplotlib.pyplot as plt

    from memstor.report.plots import printing
    from memstor.report.plots.synthesis import queue_depth_figure
    fig = queue_depth_figure(qd("loop328"), {})
    fig.canvas.draw()
    top, bottom = fig.axes[1], fig.axes[3]          # randwrite: 18,874-75,231 IOPS

    def labels(axis):
        lo, hi = axis.get_view_interval()
        return [t.get_text() for t, v in zip(axis.get_ticklabels(), axis.get_ticklocs()) if t.get_text() and lo <= v <= hi]
    assert len(labels(top.yaxis)) >= 2 and len(labels(bottom.xaxis)) >= 2, (labels(top.yaxis), labels(bottom.xaxis))
    assert printing.print_problems(printing.fit_for_print(fig), "queue depth") == []
    plt.close("all")


def test_the_figure_draws_no_knee_the_text_does_not_state():
    """R-loop 8.2: Figure 14 drew loop's randwrite fit (N* 2.58 [1.71, 3.90]) with its plateau 54 % below the
    hollow QD32x4 point (75,231 IOPS; 75,231 x 52.6 µs = 3.96 > 3.90)."""
    from types import SimpleNamespace

    import matplotlib.pyplot as plt

    from memstor.report.plots.synthesis import queue_depth_figure
    k = table("knee", "loop328").set_index("rw").loc["randwrite"]
    fit = SimpleNamespace(n_min=1, n_max=64, n_star=k["N_star_fit"], r_min_us=k["R_min_fit_us"],
                          x_max_iops=k["X_max_fit_iops"], r_min_measured_us=k["R_min_meas_us"],
                          n_star_ci_high=k["N_star_fit_ci_high"])
    host = qd("loop328")["host"].iloc[0]
    drawn = [ln.get_label() for ax in queue_depth_figure(qd("loop328"), {(host, "randwrite"): fit}).axes
             for ln in ax.get_lines()]
    assert not any("two-asymptote fit" in d for d in drawn)
    # the other side: the same fit with an interval that reaches the bound is drawn
    fit.n_star_ci_high = 4.5
    fig = queue_depth_figure(qd("loop328"), {(host, "randwrite"): fit})
    drawn = [ln.get_label() for ax in fig.axes for ln in ax.get_lines()]
    assert any("two-asymptote fit" in d for d in drawn)
    # S23-cpu1 6: its N* 2.58 lies below the measured bound 3.96: no star and no 'N* =' label marks it as the knee
    stars = [ln for ax in fig.axes for ln in ax.get_lines() if ln.get_marker() == "*"]
    assert not stars and not any(t.get_text().startswith("N* =") for ax in fig.axes for t in ax.texts)
    fit.n_star = 4.2  # the other side: a fitted knee above the bound keeps its star and label
    fig = queue_depth_figure(qd("loop328"), {(host, "randwrite"): fit})
    assert [ln for ax in fig.axes for ln in ax.get_lines() if ln.get_marker() == "*"]
    assert any(t.get_text() == "N* = 4.2" for ax in fig.axes for t in ax.texts)
    plt.close("all")


def test_the_method_names_the_ceiling_of_what_was_measured():
    """R-1cpu M2: the method called X_max 'the device's ceiling' while on one CPU 4 jobs beat 1 job by 31 % (write:
    79,964 against 61,151 IOPS; read 136,314 against 104,349) at equal or lower depth."""
    from memstor.report.text import methods
    knee = methods.summary("knee")
    assert "the device's ceiling" not in knee and "the CPU and jobs submitting its I/O" in knee
    assert "N* ≥ X_best · R(N_min)" in knee
    assert "clearly positive" in methods.details("little") and "not the device" in methods.details("little")


def test_a_sweep_still_rising_names_its_last_step_and_the_points_past_it_that_are_not_above_and_is_not_saturated():
    """S6-bare M-7: randread's knee_plateau evidence named 150,645 IOPS at N = 64 (20.7 % above X_fit 124,759, inside
    the 1.22x run-to-run spread config_agreement measured) but not the N = 128 point (QD32x4, 133,622 IOPS, not above),
    and knee.csv said saturated=True beside the failed check. The failure stands on the last step: 103,320 -> 150,645
    IOPS is +45.8 %, beyond 1.22x too; the evidence now says it, and the other job counts' points not above."""
    from memstor.analysis.validity import validity_table
    from memstor.analysis.validity.gate import gate_knees
    k = table("knee", "bare").drop(columns=["valid", "not_valid"])
    k["N_star_fit"] = k["X_max_fit_iops"] * k["R_min_fit_us"] * 1e-6  # the gated table emptied it (9.09, 8.44)
    v = validity_table(knees=k, qd=qd("bare"))
    plateau = v[v["check"] == "knee_plateau"].set_index("subject")
    read = plateau.loc["randread"]
    assert read["status"] == "fail"
    assert "103,320 IOPS at N = 16 (QD16x1) to 150,645 IOPS at N = 64 (QD64x1) (+45.8 %)" in read["evidence"]
    assert "not above it: 133,622 IOPS at N = 128 (QD32x4)" in read["evidence"]
    # the other side: randwrite's QD32x4 point is above X_fit x 1.1 (124,524, 20.4 %): listed above, not as 'not above'
    assert "not above it" not in plateau.loc["randwrite", "evidence"]
    gated = gate_knees(k, v).set_index("rw")
    assert gated["saturated"].isna().all() and not gated["valid"].any()
    # a knee whose checks pass keeps its saturated flag
    kept = gate_knees(k, v[v["status"] != "fail"]).set_index("rw")
    assert bool(kept.loc["randread", "saturated"]) and kept.loc["randread", "valid"]


def test_a_row_whose_mb_s_and_iops_disagree_says_which_counter_it_gives():
    """S6-bare C-2: '1,487 IOPS (1,576 MB/s) at 1 MiB' while 1,487.38 x 1.048576 = 1,559.6 MB/s (fio's bandwidth
    counter and its IOPS kept apart, +1.0 %); said where they differ by more than 0.5 %, silent where they agree
    (loop: its 1 MiB rows agree within 0.5 %)."""
    from memstor.report.text.workloads import block_size_sentences
    bare = table("summary", "bare")
    reads = block_size_sentences(bare, bare["host"].iloc[0])[0]
    assert "at 1 MiB it reads +1.0 % against IOPS × block size, 1,560 MB/s" in reads
    loop = table("summary", "loop328")
    assert "bandwidth counter" not in " ".join(block_size_sentences(loop, loop["host"].iloc[0]))


def test_the_queue_depth_figure_labels_an_axis_with_one_power_of_ten_in_view():
    """S6-bare C-10: bare's IOPS axes (13,398-150,645, more than a decade but only 100,000 among its powers of ten)
    carried a single labelled tick; now 1, 2, 5 per decade, the throughput axis in thousands (50k), unrotated. The other side: an axis over two powers of
    ten keeps the decade ticks alone. S9-bare C-6: the latency axes too (randwrite 118-1,300 µs read '1,000' alone)."""
    import matplotlib.pyplot as plt

    from memstor.report.plots import printing
    from memstor.report.plots.synthesis import _log_thousands, queue_depth_figure

    def labels(axis):
        lo, hi = axis.get_view_interval()
        return [t for t, v in zip(axis.get_ticklabels(), axis.get_ticklocs()) if t.get_text() and lo <= v <= hi]
    s9 = pd.read_csv(Path(__file__).parent / "data" / "review-s9a" / "summary-qd-bare.csv")
    s9["in_sweep"] = ~s9["spec_point"].astype(bool)
    for rows in (qd("bare"), s9):
        fig = printing.fit_for_print(queue_depth_figure(rows, {}))
        fig.canvas.draw()
        for top, bottom in ((fig.axes[0], fig.axes[2]), (fig.axes[1], fig.axes[3])):
            assert len(labels(top.yaxis)) >= 2 and len(labels(bottom.xaxis)) >= 2
            assert len(labels(bottom.yaxis)) >= 2, [t.get_text() for t in labels(bottom.yaxis)]  # S9-bare C-6
            assert all(t.get_rotation() == 0 and t.get_text().endswith("k") for t in labels(bottom.xaxis))
        assert printing.print_problems(fig, "queue depth") == []
        plt.close("all")
    wide = plt.figure().add_subplot()
    wide.set_yscale("log")
    wide.plot([1, 2], [900, 120_000])
    _log_thousands(wide)
    wide.figure.canvas.draw()
    assert [t.get_text() for t in labels(wide.yaxis)] == ["1,000", "10,000", "100,000"]
    narrow = plt.figure().add_subplot()  # S12-loop 11: 64,727-169,769 IOPS showed 100,000 alone
    narrow.set_yscale("log")
    narrow.plot([1, 2], [64_727, 169_769])
    _log_thousands(narrow)
    narrow.figure.canvas.draw()
    assert [t.get_text() for t in labels(narrow.yaxis)] == ["100,000", "150,000"]
    plt.close("all")


def test_a_sweep_the_same_job_beat_elsewhere_beyond_the_spread_is_not_the_targets():
    """Third read R-loop 2.1 (blocks trust): loop's one-job randwrite sweep plateaued at 52,330 IOPS (QD16) and
    49,731 (QD64) while the same one-job 4 KiB job at QD32 measured 121,409 IOPS in fio-block-size and 102,782 in
    fio-rw-ratio, 2.32x, beyond the run-to-run spread of 1.32x: the finding says so. The other side: 1-CPU's
    rw-ratio one-job point (76,512 against the sweep's 61,151, 1.25x) lies inside its 1.62x spread: nothing said."""
    from memstor.report.text.workloads import sweep_contradicted

    said = sweep_contradicted(table("summary", "loop328"), "vm2-loop-fio328", "randwrite")
    assert "121,409 IOPS at QD32 in fio-block-size" in said and "(2.32× the sweep's most" in said
    assert "beyond the largest gap between two fresh runs of one write job measured here, 1.18× (one pair): the sweep's most is not shown to be the target's" in said
    assert sweep_contradicted(table("summary", "1cpu"), "vm-1cpu", "randwrite") == ""
    assert sweep_contradicted(table("summary", "loop328"), "vm2-loop-fio328", "randread") == ""


def test_writes_faster_than_reads_names_the_same_write_that_ran_longer_below_the_read():
    """Third read R-1cpu M2: 'writes faster than reads' from fio-block-size's 2-s 1 MiB write (2,368 MB/s) while
    the same job ran in fio-pts-xsr at 1,038-1,112 MB/s, below the 1,420 MB/s read. The other side: a read below
    every other measurement of that write (1,000 MB/s) leaves nothing to add."""
    from memstor.report.text.workloads import write_elsewhere

    said = write_elsewhere(table("summary", "1cpu"), "vm-1cpu", 1420.4)
    assert "the same 1 MiB write at QD32x1 ran at 1,038-1,112 MB/s in fio-pts-xsr, not above the read" in said
    assert write_elsewhere(table("summary", "1cpu"), "vm-1cpu", 1000.0) == ""


def test_the_knee_section_says_its_sweep_is_in_doubt_where_the_same_job_beat_it_elsewhere():
    """Third read R-loop 2.1, S7-bare B-3: §4.2 read the knee from a sweep the same one-job job beat elsewhere by
    2.32x (loop randwrite); the sentence now says the sweep is in doubt, with the numbers; randread's is not."""
    from memstor.report.text import queueing as q

    said = q.knee_sentences(knees("loop328"), table("summary", "loop328"))
    assert said[1].endswith("The sweep itself is in doubt: the same one-job job measured 121,409 IOPS at QD32 in "
                            "fio-block-size (2.32× the sweep's most, 52,330 IOPS), 102,782 IOPS at QD32 in fio-rw-ratio "
                            "(1.96×), beyond the largest gap between two fresh runs of one write job measured here, 1.18× (one pair): the sweep's most is not shown "
                            "to be the target's."), said[1]  # S12-bare 8: each value its own ratio
    assert "in doubt" not in said[0] and "in doubt" not in q.knee_sentences(knees("loop328"))[1]


def test_page_one_gives_the_measured_bound_instead_of_a_failed_fit_only_where_the_knee_table_has_one():
    """R-def p2 (fifth read): Findings said 'the measured bound is given instead' for the defects run's randread knee
    (knee_ceiling failed) while §4.2 and the knee table said the bound does not apply (bound_void: the latency fell
    from 99.3 µs at N = 1 to 78.0 µs at N = 4) and gave none. The other side: a knee row with a bound gives it."""
    from types import SimpleNamespace

    s9 = Path(__file__).parent / "data" / "review-s9a"
    knees = pd.read_csv(s9 / "knee-defects.csv")
    validity = pd.read_csv(s9 / "validity-knee-defects.csv")
    host = str(knees["host"].iloc[0])

    def said(k):
        S = SimpleNamespace(qd=pd.DataFrame(), headline=pd.DataFrame(columns=["host", "key", "value"]),
                            validity=validity, knees=k, wsat=None, cache_levels=None)
        return next(f for f in fp.findings(S, host) if f.startswith("The knee fit contradicts"))
    assert "the measured bound does not apply either" in said(knees)
    bounded = knees.copy()
    bounded.loc[bounded["rw"] == "randread", "N_star_bound"] = 14.3
    assert "the measured bound is given instead" in said(bounded)
