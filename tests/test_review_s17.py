"""The sixteenth independent reads' remaining items (session 17, issue 38): statements a reader found its own report's
tables contradict or mislead on, tested on both sides (the reviewed runs' rows where the statement came from data;
fixtures in tests/data/review-s17 and review-s16, SOURCES.md there)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from memstor.analysis.dataset import HostData
from memstor.analysis.spread import Spread, run_spread
from memstor.analysis.synthesis import _with_state
from memstor.report.text import first_page as fp
from memstor.report.text import headline_table as ht
from memstor.report.text.headline_trust import other_span_caveat

H, LOOP = "vm", "vm-loop0"
HERE = Path(__file__).resolve().parent / "data"
DATA, S16 = HERE / "review-s17", HERE / "review-s16"


def _loop(name: str) -> pd.DataFrame:
    return pd.read_csv(DATA / f"{name}-loop16.csv")


def _best_row(points: pd.DataFrame, host: str, rw: str) -> pd.Series:
    p = points[(points["host"] == host) & (points["experiment"] == "fio-queue-depth") & (points["rw"] == rw)]
    return p.loc[p["iops"].idxmax()]


def test_a_best_iops_headline_says_its_span_and_fresh_state():
    """S19-loop 5: 'Best 4K random write 278,954 (QD32x4)' was measured over 256 MiB of a fresh 6 GiB loop device and
    its 'measured as' said neither. The detail now ends ', fresh, 256 MiB of the device' (a file: '256 MiB file
    span'). The other side: an imported point, whose state the data does not say, keeps the configuration alone."""
    row = _best_row(_loop("summary"), LOOP, "randwrite")
    host = HostData(name=LOOP, kinds={"fio-queue-depth": "fio"}, metas=[
        {"point": row["point"], "params": {"test_file": "/dev/loop0", "file_size": "256m"}}])
    val = (float(row["iops"]), "QD32x4, io_uring, O_DIRECT, fio-queue-depth, n=1", None, None, 1, "")
    assert _with_state(val, row, host)[1] == ("QD32x4, io_uring, O_DIRECT, fio-queue-depth, n=1, fresh, 256 MiB of "
                                              "the device")
    assert _with_state(val, row, HostData(name=LOOP, kinds={"fio-queue-depth": "fio"}, metas=[
        {"point": row["point"], "params": {"test_file": "/tmp/f", "file_size": "256m"}}]))[1].endswith(
        ", fresh, 256 MiB file span")
    assert _with_state(val, row, HostData(name=LOOP, kinds={"fio": "fio"})) == val  # imported: state unknown


def test_the_best_headline_names_the_same_job_over_another_span_where_it_measured_far_less():
    """S19-loop 5: the loop run's 278,954 IOPS over 256 MiB stood on page 1 while the same QD32x4 job over the whole
    6 GiB device measured 2.9-4.3x less (fio-pts-hir, fio-steady-state, fio-write-saturation), said only on page 5.
    The trust now names that range and says it is another span and state. The other side: other spans within the 10 %
    assumed for single runs say nothing, nor does a withheld value."""
    pts = _loop("summary")
    best = _best_row(pts, LOOP, "randwrite")
    detail = "QD32x4, io_uring, O_DIRECT, fio-queue-depth, n=1"
    said = other_span_caveat("sound (its checks pass)", pts, LOOP, "best_randwrite_iops", detail, float(best["iops"]))
    assert said.startswith("with caveats (over 6 GiB the same job (QD32x4) measured 57,540-94,977 IOPS (whole-run "
                           "means) in 22 runs (fio-pts-hir, fio-steady-state, fio-write-saturation), another span and "
                           "state)"), said
    same = (pts["host"] == LOOP) & (pts["rw"] == "randwrite") & (pts["bs_bytes"] == 4096) & (pts["iodepth"] == 32) \
        & (pts["numjobs"] == 4) & (pts["experiment"] != "fio-queue-depth")
    close = pts.assign(iops=pts["iops"].where(~same, float(best["iops"]) * 0.95))
    assert other_span_caveat("sound (its checks pass)", close, LOOP, "best_randwrite_iops", detail,
                             float(best["iops"])) == "sound (its checks pass)"
    assert other_span_caveat("not valid (x)", pts, LOOP, "best_randwrite_iops", detail, 1.0) == "not valid (x)"


def test_the_best_write_label_says_fresh_beside_higher_preconditioned_runs():
    """S19-1cpu 4: 'Best 4K random write 91,245' beside the next row's 98,278 after preconditioning, the same job.
    The label now says which state its best is of: 'Best 4K random write, fresh (IOPS)' where its detail names the
    fresh state. The other side: a detail without it (imported) keeps the plain label."""
    head = pd.read_csv(S16 / "summary-cpu116.csv").iloc[0:0]
    h = pd.DataFrame([{"host": H, "key": "best_randwrite_iops", "metric": "Best 4K random write", "unit": "IOPS",
                       "value": 91245.1, "detail": d, "n": 1} for d in (
                           "QD32x4, io_uring, O_DIRECT, fio-queue-depth, n=1, fresh, 256 MiB file span",)])
    shown = ht.headline_evidence(h, None, head)
    assert shown["quantity"].iloc[0] == "Best 4K random write, fresh (IOPS)"
    plain = ht.headline_evidence(h.assign(detail="QD32x4, io_uring, O_DIRECT, fio.csv, n=1"), None, head)
    assert plain["quantity"].iloc[0] == "Best 4K random write (IOPS)"


def test_a_spread_from_one_pair_says_it_is_one_pair():
    """S19-loop 4: 'within the run-to-run spread of fresh runs measured here, 1.45×' rested on one cross-experiment
    pair of single runs. It now reads 'the largest gap between two fresh runs of one write job measured here, 1.45× (one
    pair)', and a 4-job gain within it is 'a gain not shown', not 'as much'. The other side: a spread from several
    pairs does not say 'one pair'; a gain beyond the spread is 'more'."""
    pts = _loop("summary")
    writes = run_spread(pts, LOOP, "randwrite")
    assert writes.pairs == 1 and writes.brief() == ("the largest gap between two fresh runs of one write job measured here, "
                                                    "1.45× (one pair)")
    assert Spread(measured=1.3, how="x", pairs=3).brief() == ("the largest gap between two fresh runs of one job "
                                                              "measured here, 1.30×")
    qd = pts[(pts["experiment"] == "fio-queue-depth") & (pts["bs_bytes"] == 4096)]
    qd = qd.assign(in_sweep=qd["numjobs"] == 1)
    said = fp._tradeoff(qd, LOOP, "randwrite", pts)
    assert "the same sweep measured 278,954 IOPS at a mean of" in said and "(+41.1 %, within the largest gap " \
        "between two fresh runs of one write job measured here, 1.45× (one pair): a gain not shown)" in said, said
    assert "as much" not in said
    far = fp._tradeoff(qd, LOOP, "randwrite", pts.assign(iops=pts["iops"].where(pts["experiment"] != "fio-rw-ratio")))
    assert "the same sweep measured more, 278,954 IOPS" in far, far


def test_a_qd1_latency_above_a_deeper_point_of_its_sweep_is_said_out_of_line():
    """S19-loop 3: the QD1 read headline, 58.2 µs, and page 2's '(1.0× the latency)' of the sweep's most rested on a
    QD1 run slower than the same sweep's QD4 (44.9 µs). Both now say the QD4 mean and that the QD1 run is out of line.
    The other side: the bare run's QD1 read, below every deeper point's mean, says nothing of it."""
    pts = _loop("summary")
    trust = ht.headline_evidence(_loop("headline"), _loop("validity"), pts).set_index("quantity")["trust"]
    said = "the same sweep's QD4x1 measured a lower mean, 44.9 µs: this QD1 run is out of line"
    assert said in trust["4K QD1 random read mean latency (µs)"]
    assert "out of line" not in trust["4K QD1 random write mean latency (µs)"]
    qd = pts[(pts["experiment"] == "fio-queue-depth") & (pts["bs_bytes"] == 4096)]
    qd = qd.assign(in_sweep=qd["numjobs"] == 1)
    finding = fp._tradeoff(qd, LOOP, "randread", pts)  # S20-loop 1: no ratio to the QD1 run out of line
    assert f"with 16 in flight at a mean of 61.1 µs ({said}, so no ratio to it is given)" in finding, finding
    assert "15.4×" not in finding and "× the latency" not in finding
    bare = pd.read_csv(S16 / "summary-bare16.csv")
    bq = bare[(bare["experiment"] == "fio-queue-depth") & (bare["bs_bytes"] == 4096)]
    assert "out of line" not in fp._tradeoff(bq.assign(in_sweep=bq["numjobs"] == 1), H, "randread", bare)
    bh = pd.read_csv(S16 / "headline-bare16.csv")
    assert "out of line" not in " ".join(ht.headline_evidence(bh, None, bare)["trust"])


def test_a_knee_bound_from_a_many_job_point_gives_the_one_job_bound_beside_it():
    """S19-loop 8: 'the closed-system bound gives N* ≥ 3.0 (X_best is at most the ceiling)' rested on X_best 278,954
    IOPS, one 4-job run the headline says may be high by 1.45×. The bound now adds the one-job sweep's: '...; X_best
    is one run with 4 jobs: from the one-job sweep's most, 197,757 IOPS, N* ≥ 2.1'. The other side: an X_best from
    the one-job sweep itself (review-s7's bare QD64x1) adds nothing."""
    from memstor.report.text.queueing import _bound

    k = _loop("knee").set_index("rw")
    assert _bound(k.loc["randwrite"], False).endswith(
        "N* ≥ 3.0 (X_best is at most the ceiling; X_best is one run with 4 jobs: from the one-job sweep's most, "
        "197,757 IOPS, N* ≥ 2.1)")
    s7 = pd.read_csv(HERE / "review-s7" / "knee-bare.csv").set_index("rw")
    assert s7.loc["randread", "X_best_at"] == "QD64x1" and _bound(s7.loc["randread"], False).endswith(
        "(X_best is at most the ceiling)")


def test_the_hierarchy_finding_does_not_call_the_last_plateau_a_cache_and_names_the_hidden_size():
    """S19-loop 6: '2 cache level(s) from 1.76 ns (L1) to 136 ns (plateau 3 (no kernel cache))': 136 ns is the
    plateau the curve ends on, reached at 8 MiB, below the kernel's 260 MiB L3, and a size the failed
    hierarchy_cpu_share left out (4 MiB) was where a level could be. The finding now lists the cache levels and says
    what the last plateau is and which size was left out. The other side: the bare run, with a found L3 and nothing
    left out, lists three levels and names no left-out size."""
    from memstor.report.text.hierarchy import hierarchy_finding

    loop = hierarchy_finding(_loop("cache_levels"), H)
    assert loop == ("Memory hierarchy: 2 cache levels, 1.76 ns (L1) and 5.55 ns (L2); then 136 ns from 8,192 KiB to "
                    "the sweep's end (64.0 MiB), 77.3× L1, a plateau no cache the kernel reports ends at (its L3, 260 "
                    "MiB, not reached); of the chain the levels come from, 1 size left out (4.0 MiB) by "
                    "hierarchy_cpu_share, where a level would not be seen"), loop
    bare = hierarchy_finding(pd.read_csv(S16 / "cache_levels-bare16.csv"), H)
    assert bare.startswith("Memory hierarchy: 3 cache levels, 1.80 ns (L1), 6.00 ns (L2) and 32.4 ns (L3); then 135 "
                           "ns from 11.3 MiB") and "left out" not in bare and "not reached" not in bare, bare
    ended = _loop("cache_levels")
    ended = ended[~ended["level"].astype(str).str.startswith("plateau")]
    assert hierarchy_finding(ended, H).startswith("Memory hierarchy: 2 cache levels, 1.76 ns (L1) and 5.55 ns (L2): "
                                                  "the sweep ended on L2, beyond it not reached")


def test_hir_results_show_their_interval_and_page_1_says_whose_it_is():
    """S19-loop 10: page 6's HIR rows printed no brackets under a caption promising them where a result has one, and
    page 1 said no storage value has a 95 % interval, while hir.csv gives each wait state's IOPS one. The rows now
    show it even where no ratio is stated, and page 1 says a HIR interval is over one run's segments. The other
    side: a HIR table without intervals prints none and page 1 adds nothing."""
    from memstor.report.text import pts

    hir = _loop("hir")
    said = pts._hir_result(hir)
    assert "after 1.28 s idle (0.5 s planned) 76,654 [57,847, 95,461] IOPS — no recovery ratio" in said, said
    bare = hir.assign(iops_ci_low=None, iops_ci_high=None)
    assert "76,654 IOPS — no recovery ratio" in pts._hir_result(bare)
    v = _loop("validity")
    whose = "(a HIR result's interval is over its wait state's segments in one run, not between runs)"
    assert whose in fp.interval_clause(v, None, hir)
    assert whose not in fp.interval_clause(v, None, bare) and whose not in fp.interval_clause(v)


def test_the_sequential_write_headline_names_a_faster_write_saturation_run():
    """S19-bare 10: 'Sequential write 1,552 ... other runs measured more: the same job ran at 1,712-1,914 MB/s' left
    out write saturation's 128 KiB run at 2,066 MB/s (a whole-run mean), the most written. It is now named. The
    other side: without that run the caveat ends at XSR, and a write-saturation run's IOPS is still no candidate for
    the best random write (its 4 KiB job over another span is other_span_caveat's)."""
    from memstor.report.text.headline_trust import elsewhere_caveat

    bare = pd.read_csv(S16 / "summary-bare16.csv")
    trust = ht.headline_evidence(pd.read_csv(S16 / "headline-bare16.csv"), None, bare).set_index("quantity")["trust"]
    assert trust["Sequential write (MB/s)"].endswith(
        "the same job ran at 1,712-1,914 MB/s (whole-run means) in fio-pts-xsr; up to 2,066 MB/s as a whole-run mean "
        "(fio-write-saturation: write 128 KiB))"), trust["Sequential write (MB/s)"]
    without = bare[bare["experiment"] != "fio-write-saturation"]
    assert elsewhere_caveat("sound (x)", without, H, "seq_write_MBps", 1552.0).endswith(
        "in fio-pts-xsr)")
    ws = bare[(bare["experiment"] == "fio-write-saturation") & (bare["bs_bytes"] == 4096)]
    assert len(ws) and "fio-write-saturation" not in elsewhere_caveat("sound (x)", bare, H, "best_randwrite_iops",
                                                                      float(ws["iops"].min()) / 2)


def test_a_data_label_on_its_own_large_marker_is_moved_clear_of_it():
    """S19-loop 9 / S19-1cpu 5: Figure 4's 'u98' printed on its own overloaded square (a 10-pt marker), from the 5-pt
    offset a plain marker takes. label_problems now finds a label on its own point's marker and declutter_labels
    moves it outward by the marker's extra size. The other side: the same label beside a plain 6-pt marker is no
    problem and stays where it was."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from memstor.report.plots import printing

    def drawn(size: float):
        fig, ax = plt.subplots(figsize=(4, 3))
        ax.plot([1, 2, 3], [1, 2, 3], marker="s", ms=size, markerfacecolor="white", linestyle="none")
        ann = ax.annotate("u98", (2, 2), textcoords="offset points", xytext=(5, -11), fontsize=8)
        ax.set_xlim(0, 4)
        ax.set_ylim(0, 4)
        return fig, ann

    big, ann = drawn(16)
    assert any("lies on its own point's marker" in p for p in printing.label_problems(big))
    printing.declutter_labels(big)
    assert not printing.label_problems(big) and ann.get_visible() and tuple(ann.xyann) != (5, -11)
    small, ann = drawn(6)
    assert not printing.label_problems(small)
    printing.declutter_labels(small)
    assert tuple(ann.xyann) == (5, -11)
    plt.close("all")


def test_hir_recovery_judges_long_rounds_by_windows_of_a_segments_length_from_their_seconds():
    """S17-1cpu 2 (left in session 16): hir_recovery compares segments with baseline windows of the same length, and
    the full and PTS profiles write 60-s rounds beside 5-s segments, so there it could only say 'unlike windows'.
    With the rounds' per-second IOPS (fio-pts-hir-seconds.csv) the rounds are cut into windows of a segment's length.
    The bare quick run's real HIR rows, its segments' runtime set to 1 s beside its 2-s rounds: without the seconds
    the recovery is not shown ('unlike windows'); with them it is judged on 1-s windows. The other sides: a window
    longer than a round's seconds gives no windows, and matching lengths keep the rounds."""
    from memstor.analysis.pts_recovery import hir_table, round_windows

    rows = pd.read_csv(DATA / "fio-pts-hir-bare16.csv").assign(host=H)
    secs = pd.read_csv(DATA / "fio-pts-hir-seconds-bare16.csv")
    short = rows.assign(runtime_s=rows["runtime_s"].where(rows["phase"] != "access", 1.0))
    without = hir_table(short)
    assert without["recovery_note"].str.contains("unlike windows").all() and not without["recovery_shown"].any()
    cut = hir_table(short, secs)
    assert (cut["baseline_round_s"] == 1.0).all() and not cut["recovery_note"].str.contains("unlike").any(), \
        cut["recovery_note"].tolist()
    assert cut["recovery_note"].iloc[0] == ("not shown: every segment below the baseline rounds' 1-s windows (segments "
                                            "75,087-87,717 IOPS against the baseline rounds' 1-s windows' "
                                            "92,647-102,600), but the ratio's 95 % interval [0.705, 1.08] includes 1")
    rounds = rows.loc[rows["phase"] == "precondition", "point"].tolist()
    assert round_windows(secs, H, rounds, 1.0) == pytest.approx(
        secs.set_index("point").loc[rounds, "iops"].tolist()) and round_windows(secs, H, rounds, 2.0) == []
    same = hir_table(rows, secs)
    assert (same["baseline_round_s"] > 2.0).all() and same["recovery_shown"].tolist() == [False, False]


def test_a_hir_recovery_is_shown_only_where_its_ratios_interval_excludes_one_as_well():
    """S21-bare 3: the PDF stated no ratio for the 0.805-s wait (its interval [0.705, 1.08] includes 1) while hir.csv
    said recovery_shown and hir_recovery passed. One verdict now: shown needs every segment beyond the baseline rounds
    and the ratio's interval beyond 1. The other side: the same row with an interval below 1 stays shown."""
    from memstor.analysis.pts_recovery import _with_ratio_interval

    row = {"recovery_shown": True, "recovery_note": "every segment below the baseline rounds (x)",
           "recovery_ratio_ci_low": 0.705, "recovery_ratio_ci_high": 1.082}
    out = _with_ratio_interval(row)
    assert out["recovery_shown"] is False and out["recovery_note"] == ("not shown: every segment below the baseline "
                                                                      "rounds (x), but the ratio's 95 % interval "
                                                                      "[0.705, 1.08] includes 1")
    assert _with_ratio_interval({**row, "recovery_ratio_ci_high": 0.95}) == {**row, "recovery_ratio_ci_high": 0.95}


def test_a_pdf_past_its_page_budget_leaves_its_spill_cells_to_the_html_last_first(tmp_path, monkeypatch):
    """Issue 38 item 5 (S19-bare 11: the bare quick PDF ran to 11 pages, its last holding §4.6's one paragraph): the
    PDF has a page budget per profile (quick 10, standard 15); past it, the cells tagged ``spill`` are left to the
    HTML one at a time, the last first, each named in the pointer line, until it fits. xelatex is stood in for by its
    log line 'Output written on ... (N pages ...)' (the real route is test_report's): 12 pages with both spill cells,
    11 with one, 10 with none. The other sides: within its budget nothing is spilled, and a profile without a budget
    (full) spills nothing whatever its pages."""
    import nbformat

    from memstor.report import export

    def nb_with(profile: str):
        nb = nbformat.v4.new_notebook()
        nb.metadata["papermill"] = {"parameters": {"profile": profile}}
        out = [nbformat.v4.new_output("display_data", data={"text/plain": "x"})]
        nb.cells = [nbformat.v4.new_markdown_cell("# Shown"),
                    nbformat.v4.new_code_cell("a", metadata={"tags": ["spill"], "spill": "the models figure"},
                                              outputs=out),
                    nbformat.v4.new_code_cell("b", metadata={"tags": ["spill"], "spill": "§4.6's text"}, outputs=out)]
        return nb

    built: list[list[str]] = []

    def fake_pdf(nb, out, templates, pages_of=lambda n: 10 + n):
        kept = [c.source for c in nb.cells if c.cell_type == "code"]
        built.append([c.source for c in nb.cells if c.cell_type == "markdown"])
        out.with_suffix(".latex.log").write_text(f"Output written on {out.name} ({pages_of(len(kept))} pages, 9 bytes).")
        return out

    monkeypatch.setattr(export, "export_pdf", fake_pdf)
    assert export.pdf_pages("Output written on r.pdf (11 pages, 5 bytes).") == 11 and export.pdf_pages("") is None
    _, spilled = export._within_budget(nb_with("quick"), tmp_path / "r.pdf", "r.html")
    assert len(spilled) == 2 and len(built) == 3
    assert "*§4.6's text (left out of the PDF to keep it within its pages): in the HTML report (r.html).*" in \
        built[1][1]
    assert "the models figure (left out" in built[2][1] and "§4.6's text (left out" in built[2][1]
    built.clear()
    monkeypatch.setattr(export, "export_pdf", lambda nb, out, t: fake_pdf(nb, out, t, lambda n: 8 + n))
    assert export._within_budget(nb_with("quick"), tmp_path / "r.pdf", "r.html")[1] == [] and len(built) == 1
    monkeypatch.setattr(export, "export_pdf", lambda nb, out, t: fake_pdf(nb, out, t, lambda n: 30 + n))
    assert export._within_budget(nb_with("full"), tmp_path / "r.pdf", "r.html")[1] == []


# ------------------------------------------------------------------------- the seventeenth reads (reports at 4293ad4)


def test_the_llc_step_names_memory_buffer_llc_only_where_a_memory_run_was_judged():
    """S20-cpu1 5: '..., the step memory_buffer_llc judges the buffers against' on the 1-CPU run, whose validity table
    has no memory_buffer_llc row (no memory run to judge). It now says no memory run was judged. The other side: a
    host with the row keeps the words."""
    from memstor.report.text.hierarchy import hierarchy_sentences

    ws, lv = pd.read_csv(DATA / "working_set-cpu116.csv"), pd.read_csv(DATA / "cache_levels-cpu116.csv")
    v = pd.read_csv(S16 / "validity-cpu116.csv")
    assert not (v["check"] == "memory_buffer_llc").any()
    said = hierarchy_sentences(lv, None, ws, v)[0]
    assert "a memory run's buffer would be judged against (memory_buffer_llc: no memory run here to judge)" in said
    row = pd.DataFrame([{"host": H, "check": "memory_buffer_llc", "status": "pass"}])
    assert "the step memory_buffer_llc judges the buffers against." in hierarchy_sentences(
        lv, None, ws, pd.concat([v, row], ignore_index=True))[0]


def test_the_conclusion_calls_no_knee_fitted_where_the_fit_failed_its_checks():
    """S20-cpu1 8: 'for randread and randwrite the points past the fitted knee do not confirm it' while randwrite's
    fit failed knee_ceiling and knee_located. It now reads 'for randwrite no fitted knee stands (knee_ceiling,
    knee_located failed)'. The other side: randread, whose fit passed, keeps the words."""
    from memstor.report.text.queueing import knee_words

    said = knee_words(pd.read_csv(S16 / "validity-cpu116.csv"), H)
    assert "for randread the points past the fitted knee do not confirm it (knee_plateau warned); for randwrite no " \
        "fitted knee stands (knee_ceiling, knee_located failed)." in said, said


def test_a_mix_difference_beyond_only_an_assumed_spread_is_no_finding_and_the_sign_names_the_effect():
    """S20-bare 3: '50 % reads 60,290 IOPS against 67,082 predicted (-10.1 %) — the mix does not cost what its parts
    cost: reads and writes interfere (or overlap) here' led with a finding from single runs beyond only the 10 %
    assumed, and 'or overlap' had the wrong sign (overlap makes a mix faster). The lead now says the difference is
    not established; beyond a measured spread the verdict names the effect by its sign."""
    from memstor.report.text.workloads import _mix_verdict, rw_mix_sentences

    said = rw_mix_sentences(pd.read_csv(S16 / "summary-bare16.csv"), H)[0]
    assert "(-10.1 %) — a difference between single runs only, not shown to be the device's" in said, said
    assert "interfere" not in said and "overlap" not in said
    measured = Spread(measured=1.2, how="x", pairs=2)
    slower = _mix_verdict([-0.3], measured, False, "±10 %", "x")
    assert slower.startswith("the mix does not cost what its parts cost: reads and writes interfere (the mix is "
                             "slower) here"), slower
    assert "overlap (the mix is faster)" in _mix_verdict([0.3], measured, False, "±10 %", "x")


def test_a_withheld_knee_is_not_repeated_with_its_n_star():
    """S20-bare 4: the randwrite knee, withheld (knee_located and knee_plateau failed), still read 'within the
    withheld fit's 95 % interval (N* 7.91)' beside 'throughput keeps rising past the knee (X_fit 65,055 IOPS, N*
    7.91)' (the plateau check's evidence, now 'past the fitted ceiling (X_fit 65,055 IOPS)': analysis.validity.fits).
    The bound's clause now names no N*. The bare run's knee table (review-s16). The other side: the randread row,
    whose bound lies beyond the fit, has no such clause."""
    from memstor.report.text.queueing import knee_sentences

    read, write = knee_sentences(pd.read_csv(S16 / "knee-bare16.csv"))
    assert "within the withheld fit's 95 % interval: the bound does not settle it" in write, write
    assert "interval (N*" not in write and "withheld fit's 95 % interval" not in read


def test_a_write_saturation_run_whose_series_failed_is_not_a_higher_sequential_write():
    """S20-cpu1 3: page 1 named write saturation's 128 KiB run, 2,755 MB/s over 1.56 s, as 'other runs measured more'
    while page 3's ceiling left it out because its wsat_series check failed. Both now leave it out. The other side:
    the bare run's 128 KiB run, whose wsat_series only warned, is still named."""
    one = ht.headline_evidence(pd.read_csv(DATA / "headline-cpu116.csv"), pd.read_csv(S16 / "validity-cpu116.csv"),
                               pd.read_csv(S16 / "summary-cpu116.csv")).set_index("quantity")["trust"]
    assert "as a whole-run mean (fio-write-saturation" not in one["Sequential write (MB/s)"] and "1,859-2,171 MB/s" in \
        one["Sequential write (MB/s)"]
    assert "2,755 MB/s (fio's whole-run figure), left out: wsat_series failed" in one["Sequential write (MB/s)"]  # S21-cpu1 2
    bare = ht.headline_evidence(pd.read_csv(S16 / "headline-bare16.csv"), pd.read_csv(S16 / "validity-bare16.csv"),
                                pd.read_csv(S16 / "summary-bare16.csv")).set_index("quantity")["trust"]
    assert "up to 2,066 MB/s as a whole-run mean (fio-write-saturation: write 128 KiB)" in bare["Sequential write (MB/s)"]


def test_the_mixed_load_tally_counts_the_cell_its_generator_failed():
    """S20-cpu1 1: '0 of 6 cells held; of the 6 that did not, ioarrive's checks failed: lag at 4 cells, ...' counted
    five cells; the sixth (w0-r80) held by ioarrive's own checks and was failed by load_generator_cpu for the map,
    unsaid. The tally now names it. The other side: without the CPU failure that cell holds and is not counted."""
    from memstor.analysis import mixed_load
    from memstor.report.text.mixed_load import held_summary

    f = pd.read_csv(S16 / "mixed-load-map-cpu116.csv").assign(host=H, table="mixed-load-map")
    failed = held_summary(mixed_load.map_tables(f, [1000.0], {H: "ioarrive at 92.8 %"})["mixed"])
    assert failed.startswith("0 of 6 cells held; of the 6 that did not, their checks failed: lag at 4 cells") and \
        "load_generator_cpu at 1" in failed, failed
    held = held_summary(mixed_load.map_tables(f, [1000.0])["mixed"])
    assert held.startswith("1 of 6 cells held; of the 5 that did not") and "load_generator_cpu" not in held, held


def test_page_1_says_the_rates_that_held_are_still_read_beside_a_failed_open_loop_held():
    """S20-bare 5: page 1 listed open_loop_held under 'Failed checks (their findings are not stated)' while pages 2 and
    8 gave randwrite's SLO answer and open-against-closed ratios from its 3 held rates, as the check's consequence
    allows. The entry now says 'the rates that held are still read'. The other side: other failed checks carry no
    such words, and an unchecked open_loop_held neither."""
    v = pd.read_csv(S16 / "validity-bare16.csv")
    failed = fp.check_names(v)[0]
    assert "`open_loop_held` (randread; randwrite: the rates that held are still read)" in failed, failed
    assert failed.count("still read") == 1
    held = (v["check"] == "open_loop_held")
    assert "still read" not in " ".join(fp.check_names(v.assign(status=v["status"].mask(held, "unchecked"))))
    # S21-cpu1 4: where no rate held (value 0 % of points) nothing is read from the rates that held
    assert "still read" not in " ".join(fp.check_names(v.assign(value=v["value"].mask(held, 0.0))))


def test_the_sequential_finding_says_where_other_runs_measured_more():
    """S20-loop 3: page 2's 'Sequential transfers: 3,166 MB/s read, 2,142 MB/s write' dropped the headline's caveats
    (random 1 MiB reads at 3,507 MB/s, the same write job at 2,333-2,400 MB/s in XSR). It now adds 'single runs: other
    runs measured more for the read and the write'. The other side: with those runs gone it adds nothing."""
    from types import SimpleNamespace

    pts = _loop("summary")
    S = SimpleNamespace(points=pts, headline=_loop("headline"), validity=_loop("validity"), qd=None, drive=None,
                        wsat=None, cache_levels=None)
    said = [f for f in fp.findings(S, LOOP) if f.startswith("Sequential")][0]
    assert "2,142 MB/s write; single runs: other runs measured more for the read and the write (the headline" in said
    top = pts[pts["host"] == LOOP]
    alone = pts[~pts.index.isin(top.index) | (top["bw_MBps"] <= 3166.08) | (top["rw"] == "write")]
    alone = alone[~((alone["rw"].isin(["write", "randwrite"])) & (alone["bw_MBps"] > 2141.98))]
    S.points = alone
    said = [f for f in fp.findings(S, LOOP) if f.startswith("Sequential")][0]
    assert "measured more" not in said, said


def test_the_window_trend_says_first_and_last_apart_from_the_range():
    """S20-loop 4: 'window rounds 2-6: 61,444 to 62,789 IOPS (2.06 % ...)' read as the window's range, which is
    61,444-69,788 (its rounds 61,444, 69,788, 62,884, 69,429, 62,789). It now says first and last, then the range."""
    from memstor.analysis.validity.steady import _trend

    v = pd.Series({"host": H, "workload": "4 KiB randwrite"})
    row = _trend(v, pd.DataFrame({"round": [2, 3, 4, 5, 6],
                                  "iops": [61_444.0, 69_788.0, 62_884.0, 69_429.0, 62_789.0]}))
    assert "window rounds 2-6: first 61,444, last 62,789 IOPS" in row["evidence"] and \
        "from 61,444 to 69,788 (range" in row["evidence"], row["evidence"]


def test_a_many_job_gain_within_the_spread_of_the_same_one_job_job_elsewhere_is_not_shown():
    """S20-cpu1 4: 'with 4 jobs (QD32x4, 128 in flight) the same sweep measured more, 91,245 IOPS' beside the sweep's
    one-job most (71,459), while fio-rw-ratio's one-job QD32x1 measured 81,811, within the 1.20× gap of it. The finding
    now says that run and that the gain from the jobs is not shown. The other side: the bare run's 4-job read,
    112,778 IOPS, 1.30× the one-job 86,503 measured elsewhere, stays 'more'."""
    def tradeoff(path: Path, rw: str) -> str:
        p = pd.read_csv(path)
        qd = p[(p["experiment"] == "fio-queue-depth") & (p["bs_bytes"] == 4096)]
        return fp._tradeoff(qd.assign(in_sweep=qd["numjobs"] == 1), H, rw, p)

    one = tradeoff(S16 / "summary-cpu116.csv", "randwrite")
    assert "the same sweep measured more, 91,245 IOPS at a mean of 1,401 µs (the same one-job job measured 81,811 " \
        "IOPS in fio-rw-ratio (QD32x1), within the largest gap between two fresh runs of one write job measured here, " \
        "1.20× (one pair) of it: a gain from the jobs not shown)" in one, one
    bare = tradeoff(S16 / "summary-bare16.csv", "randread")
    assert bare.endswith("the same sweep measured more, 112,778 IOPS at a mean of 1,134 µs"), bare
