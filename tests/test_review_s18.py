"""The eighteenth independent reads' remaining items (session 18, issue 38): statements a reader found its own report's
tables contradict or mislead on, tested on both sides (the reviewed runs' rows; fixtures in tests/data/review-s16 and
review-s17, SOURCES.md there)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from memstor.report.text import headline_table as ht
from memstor.report.text.headline_trust import OUT_OF_LINE, qd1_caveat

H, LOOP = "vm", "vm-loop0"
HERE = Path(__file__).resolve().parent / "data"
S16, S17, S18 = HERE / "review-s16", HERE / "review-s17", HERE / "review-s18"


def _trust(name: str, run: str, folder: Path) -> pd.Series:
    tables = {t: pd.read_csv(folder / f"{t}-{run}.csv") for t in ("headline", "validity", "summary")}
    return ht.headline_evidence(tables["headline"], tables["validity"], tables["summary"]).set_index("quantity")[
        "trust"][name]


def test_a_qd1_headline_its_own_sweep_contradicts_reads_out_of_line_not_with_caveats():
    """S21-loop 3: the loop run's QD1 read, 58.2 µs, slower than the same sweep's QD4 (44.9 µs), read 'with caveats'
    like any other row, and 'over 10 % less' stood for 12.1-28.4 µs elsewhere (2-5×). Its trust word is now 'out of
    line: repeat before quoting' and the gap is given as ratios. The other side: the QD1 write of the same run, below
    its deeper points, keeps 'with caveats'."""
    read = _trust("4K QD1 random read mean latency (µs)", "loop16", S17)
    assert read.startswith(f"{OUT_OF_LINE} (the same sweep's QD4x1 measured a lower mean, 44.9 µs: this QD1 run is "
                           "out of line; "), read
    assert "lower means: 12.1-28.4 µs (fio-pts-dirth" in read and "2.05-4.81×" in read, read
    assert "over 10 %" not in read
    write = _trust("4K QD1 random write mean latency (µs)", "loop16", S17)
    assert not write.startswith(OUT_OF_LINE) and "out of line" not in write, write


def test_a_qd1_headline_is_not_compared_with_a_pts_run_whose_preconditioning_failed():
    """S21-bare 5: the bare run's QD1 write (98.9 µs) was set beside CBW's T1Q1 writes, 78.7 µs, while CBW's
    preconditioning failed pts_steady_state (slope excursion 22.4 %) and page 6 stated no CBW result. CBW's runs are
    now left out, and said to be. The other sides: with CBW's preconditioning passing, its run is compared again;
    without a validity table nothing is left out."""
    runs = pd.read_csv(S16 / "summary-bare16.csv")
    checks = pd.read_csv(S16 / "validity-bare16.csv")
    cbw = checks[(checks["check"] == "pts_steady_state") & (checks["subject"] == "CBW preconditioning")]
    assert cbw["status"].tolist() == ["fail"]
    said = qd1_caveat("sound (its checks pass)", runs, H, "qd1_randwrite_lat_us", 98.864, checks)
    assert said == "sound (its checks pass)", said  # no steady run below it: DIRTH's 105-113 µs are above
    moved = runs.assign(lat_mean_us=runs["lat_mean_us"].mask(runs["experiment"] == "fio-pts-dirth", 60.0))
    said = qd1_caveat("sound (its checks pass)", moved, H, "qd1_randwrite_lat_us", 98.864, checks)
    assert "1.65× lower means: 60.0 µs (fio-pts-dirth: the writes of 8 KiB, 65 % reads)" in said, said
    assert said.endswith("; fio-pts-cbw left out: its preconditioning failed pts_steady_state)"), said
    assert "78.7" not in said
    steady = checks.assign(status=checks["status"].mask(checks.index.isin(cbw.index), "pass"))
    again = qd1_caveat("sound (its checks pass)", runs, H, "qd1_randwrite_lat_us", 98.864, steady)
    assert "1.26× lower means: 78.7 µs (fio-pts-cbw: the writes of a mix of block sizes, 40 % reads)" in again, again
    assert "left out" not in again
    assert "78.7 µs (fio-pts-cbw" in qd1_caveat("sound (its checks pass)", runs, H, "qd1_randwrite_lat_us", 98.864)


def test_an_open_loop_slo_answer_with_a_lower_rate_that_missed_it_states_no_range():
    """S21-bare 4: randwrite's 'p99 ≤ 1,000 µs held up to ≥ 25,226 IOPS' rested on u30, one held rate, while the only
    lower rate, u10 (8,359 IOPS, its loop not held), missed 1 ms at p99 1,708 µs. The answer now names u10 and states
    no range. The other sides: randread (no held rate met it) keeps 'not determined'; with u10 meeting the target, or
    with u10's loop held and missing it (then the held rates are not monotone), there is no lower miss to name."""
    from memstor.analysis.load_latency import LOWER_MISSED, slo
    from memstor.report.text.openloop import slo_display

    curves = pd.read_csv(S18 / "load_latency-bare16.csv")
    table = slo(curves, [1000.0]).set_index("rw")
    assert (table.at["randwrite", "censored_by"], table.at["randwrite", "lower_missed"]) == (
        LOWER_MISSED, "u10: 8,359 IOPS, p99 1,708 µs")
    assert round(table.at["randwrite", "max_iops"]) == 25_226
    cells = slo_display(table.reset_index()).set_index("workload")["max IOPS meeting it"]
    assert cells["randwrite"] == ("no range: the held rates met it at 25,226, but a lower rate that did not hold "
                                  "missed it (u10: 8,359 IOPS, p99 1,708 µs); from the 3 of 8 rates that held)")
    assert cells["randread"].startswith("not determined") and table.at["randread", "lower_missed"] == ""
    u10 = (curves["rw"] == "randwrite") & (curves["utilisation_pct"] == 10)
    met = slo(curves.assign(lat_p99_us=curves["lat_p99_us"].mask(u10, 900.0)), [1000.0]).set_index("rw")
    assert met.at["randwrite", "censored_by"] == "the next rate did not hold" and met.at["randwrite", "lower_missed"] == ""
    held = slo(curves.assign(open_loop=curves["open_loop"].mask(u10, True)), [1000.0]).set_index("rw")
    assert held.at["randwrite", "censored_by"] != LOWER_MISSED and held.at["randwrite", "lower_missed"] == ""


def test_a_closed_slo_answer_names_the_same_job_that_missed_it_elsewhere():
    """S21-loop 2: 'the most IOPS of a closed run whose completion p99 met it: 233,051 (fio-block-size's QD32, 301 µs'
    while the same job (4 KiB randwrite QD32x1, io_uring, 256 MiB) in fio-rw-ratio ran at 160,309 IOPS with a p99 of
    3,195 µs. The cell now says the closed runs disagree and names the run. The other side: randread's answer, whose
    job met it wherever it ran, names none."""
    from memstor.analysis.load_latency import closed_meeting
    from memstor.report.text.openloop import _sweep_met

    runs = pd.read_csv(S17 / "summary-loop16.csv").assign(ok=True)
    write = closed_meeting(runs, LOOP, "randwrite", 1000.0)
    assert (write["closed_sweep_experiment"], round(write["closed_sweep_iops"])) == ("fio-block-size", 233_051)
    assert write["closed_sweep_same_missed"] == "fio-rw-ratio: 160,309 IOPS, p99 3,195 µs"
    said = _sweep_met(None, None, 1000.0, write["closed_sweep_iops"], write["closed_sweep_qd"],
                      write["closed_sweep_p99_us"], write["closed_sweep_lat_mean_us"], None,
                      write["closed_sweep_experiment"], write["closed_sweep_same_missed"])
    assert said.endswith("; the same job missed it elsewhere (fio-rw-ratio: 160,309 IOPS, p99 3,195 µs): the closed "
                         "runs disagree"), said
    read = closed_meeting(runs, LOOP, "randread", 1000.0)
    assert read["closed_sweep_same_missed"] == "" and round(read["closed_sweep_iops"]) == 260_567
    assert "disagree" not in _sweep_met(None, None, 1000.0, read["closed_sweep_iops"], "QD16", 181.0, 61.0, None,
                                        "fio-queue-depth", read["closed_sweep_same_missed"])


def test_the_largest_gap_says_whose_jobs_it_is_of():
    """S21-cpu1 1: pages 1-3 called both the reads' 1.13× and the writes' 1.20× 'the largest gap between two fresh runs
    of one job measured here'. Each now names its direction. The other side: the spread of both directions (no rw)
    keeps 'one job' and is the larger, 1.20×."""
    from memstor.analysis.spread import run_spread

    runs = pd.read_csv(S16 / "summary-cpu116.csv")
    assert run_spread(runs, H, "randread").short() == ("the largest gap between two fresh runs of one read job "
                                                       "measured here, 1.13× (one pair)")
    assert run_spread(runs, H, "randwrite").short() == ("the largest gap between two fresh runs of one write job "
                                                        "measured here, 1.20× (one pair)")
    both = run_spread(runs, H)
    assert both.short().startswith("the largest gap between two fresh runs of one job measured here, 1.20×"), both.short()


def _cpu1_trust() -> pd.Series:
    tables = (pd.read_csv(S17 / "headline-cpu116.csv"), pd.read_csv(S16 / "validity-cpu116.csv"),
              pd.read_csv(S16 / "summary-cpu116.csv"))
    return ht.headline_evidence(*tables).set_index("quantity")["trust"]


def test_the_steady_state_headline_names_every_other_run_of_its_job_where_they_differ():
    """S21-cpu1 3: '4K random write after preconditioning 98,278' read 'with caveats' for its checks only, while every
    other run of its job (4 KiB randwrite QD32x4 over the same 256 MiB) measured less: HIR's 15 at 67,174-86,192 and
    the queue-depth sweep's 91,245. The trust cell now says so. The other sides: a value among its job's runs (the
    HIR runs raised to it) adds nothing; another span is not its job."""
    from memstor.report.text.headline_trust import steady_same_job_caveat

    said = _cpu1_trust()["4K random write after preconditioning, steady state not shown (IOPS)"]
    assert said.endswith("; other runs of its job (QD32x4, 256 MiB) measured 67,174-91,245 IOPS (whole-run means) in "
                         "16 runs (fio-pts-hir, fio-queue-depth): all lower, 0.68-0.93× this)"), said
    runs = pd.read_csv(S16 / "summary-cpu116.csv")
    detail = "4 KiB randwrite, QD32x4, 256 MiB file, PTS window rule met at round 5"
    assert steady_same_job_caveat("sound (x)", runs, H, detail, 98_277.7) != "sound (x)"
    assert steady_same_job_caveat("sound (x)", runs, H, detail, 80_000.0).endswith(": 0.84-1.14× this)")
    hir = runs["experiment"].isin(["fio-pts-hir", "fio-queue-depth"])
    near = runs.assign(iops=runs["iops"].mask(hir, 95_000.0))
    assert steady_same_job_caveat("sound (x)", near, H, detail, 98_277.7) == "sound (x)"
    far = runs.assign(file_size_bytes=runs["file_size_bytes"].mask(hir, 6 << 30))
    assert steady_same_job_caveat("sound (x)", far, H, detail, 98_277.7) == "sound (x)"
    assert steady_same_job_caveat("not valid (x)", runs, H, detail, 98_277.7) == "not valid (x)"


def test_the_sequential_write_headline_names_the_write_saturation_run_it_leaves_out():
    """S21-cpu1 2: page 1's sequential write said 'other runs measured more: ... 1,859-2,171 MB/s' and left out write
    saturation's 128 KiB run at 2,755 MB/s (1.56 s, wsat_series failed) without a word; page 5 printed it. The cell
    now names it and why it is left out. The other sides: with wsat_series passing it is counted among the runs that
    measured more (not named as left out); a run below the headline is not named."""
    from memstor.report.text.headline_trust import failed_wsat_caveat

    said = _cpu1_trust()["Sequential write (MB/s)"]
    assert ("; fio-write-saturation's 128 KiB sequential write measured 2,755 MB/s (fio's whole-run figure), left "
            "out: wsat_series failed (1 whole second of 2 per-second values (fio's runtime 1.56 s)))") in said, said
    checks = pd.read_csv(S16 / "validity-cpu116.csv")
    runs = pd.read_csv(S16 / "summary-cpu116.csv")
    passed = checks.assign(status=checks["status"].mask(checks["check"] == "wsat_series", "pass"))
    assert failed_wsat_caveat("sound (x)", runs, passed, H, 1397.8) == "sound (x)"
    assert failed_wsat_caveat("sound (x)", runs, checks, H, 3000.0) == "sound (x)"
    tables = (pd.read_csv(S17 / "headline-cpu116.csv"), passed, runs)
    counted = ht.headline_evidence(*tables).set_index("quantity")["trust"]["Sequential write (MB/s)"]
    assert "left out" not in counted and "up to 2,755 MB/s as a whole-run mean (fio-write-saturation" in counted, counted


def test_page_walks_name_the_unbroken_run_of_slower_sizes_the_rule_missed():
    """S21-bare 1: 'not shown: 4 KiB pages not slower by > 10 % at 2 sizes or more in a row to the sweep's end' read as
    no page-walk evidence, while 4 KiB pages were slower at each of the last 12 sizes, and the rule missed by one
    size at 1.097×. The note now names that run and the size that broke it. The other sides: a run of fewer than 3
    sizes is not named; with that size above the margin the cost is stated (the rule's 2 in a row hold)."""
    from memstor.analysis.hierarchy import tlb_cost
    from memstor.analysis.tlb_reach import slower_run

    ws = pd.read_csv(S16 / "working_set-bare16.csv")
    note = tlb_cost(ws[ws["host"] == H])["note"]
    assert ("4 KiB pages slower at 15 of 29 sizes; at each of the last 12 sizes in a row (1,448 KiB to 64.0 MiB: "
            "1.03-3.16×), by > 10 % at 8 of them, not at 45.3 MiB (1.097×): a cost not established from single "
            "runs") in note, note
    labels = ["a", "b", "c", "d"]
    assert slower_run(labels, [0.9, 1.0, 1.2, 1.3]) == ""  # two sizes in the run
    assert slower_run(labels, [0.9, 1.05, 1.2, 1.3]) == ("; at each of the last 3 sizes in a row (b to d: 1.05-1.30×), "
                                                         "by > 10 % at 2 of them, not at b (1.050×)")
    assert slower_run(labels, [1.2, 1.3, 1.2, 1.3]).endswith("by > 10 % at 4 of them")


def test_the_last_plateau_is_set_against_the_memory_latencies_measured_otherwise():
    """S21-bare 2: §4.5's 'plateau 4 (no kernel cache) 135 ns' was the one memory latency a reader could quote (the
    idle headline withheld), with no gate and no word of the 160-291 ns measured otherwise. The sentence now says
    both, from the measurements that did not fail their checks (S22-loop 2: a range of withheld idle runs and an MLP
    run outside hierarchy_cpu_share's band is no comparison): bare 160-182 ns, 3 more failed; loop 199 ns (the
    matrix, not judged), 4 more failed. The other sides: with every kept measurement within 10 % of the plateau, or
    none given, nothing is added; with every one failed, it says so; a last level that is a kernel cache is no
    plateau."""
    from memstor.report.text.hierarchy import hierarchy_sentences, plateau_caveat

    levels = pd.read_csv(S16 / "cache_levels-bare16.csv")
    mlp, figures = pd.read_csv(S18 / "mlp-bare16.csv"), pd.read_csv(S18 / "memory_figures-bare16.csv")
    said = hierarchy_sentences(levels, mlp, None, None, figures)[0]
    assert ("The last level's 135 ns is one run's batch medians, which no memory gate judges; the memory latency "
            "measured otherwise here is 160-182 ns (MLP run, 1 chain: 160 ns; matrix, local node 0 (not judged by the "
            "gate): 182 ns; left out, their checks failed: 3 idle-latency runs the memory gate failed): it is no idle "
            "latency to quote.") in said, said
    loop = [pd.read_csv(S18 / f"{t}-loop18.csv") for t in ("cache_levels", "mlp", "memory_figures")]
    assert plateau_caveat(*loop, H).endswith(  # S23-loop 5: which ones, not '4 more' beside a table of 3
        "here is 199 ns (matrix, local node 0 (not judged by the gate): 199 ns; left out, their checks failed: 3 "
        "idle-latency runs the memory gate failed and 1 MLP run outside hierarchy_cpu_share's band): it is no idle "
        "latency to quote.")
    assert "253" not in plateau_caveat(*loop, H) and "306" not in plateau_caveat(*loop, H)
    failed = loop[2].assign(gate="failed: latency_unstable")
    assert plateau_caveat(loop[0], loop[1], failed, H).endswith(
        "every other memory latency measured here (4 idle-latency runs the memory gate failed and 1 MLP run outside "
        "hierarchy_cpu_share's band) failed its checks: it is no idle latency to quote.")
    assert "here is 160 ns (MLP run, 1 chain: 160 ns): it is" in hierarchy_sentences(levels, mlp, None, None)[0]
    near = figures.assign(value=140.0, gate="not judged")
    assert plateau_caveat(levels, mlp.assign(latency_ns=130.0), near, H) == ""
    assert plateau_caveat(levels, None, None, H) == ""
    cache = levels.assign(level=levels["level"].astype(str).str.replace("plateau 4 (no kernel cache)", "L3"))
    assert plateau_caveat(cache, mlp, figures, H) == ""


def test_open_loop_held_counts_the_generator_checks_of_every_rate_not_only_those_within_the_band():
    """S21-loop 4: randwrite's open_loop_held evidence said 'ioarrive's own checks failed (lag at 2, arrivals at 1)'
    of the 2 rates within +-5 % of their offered rate, which read as only 2 late rates while lag failed at all 8. The
    6 outside the band now carry their own checks' counts, and the 2 are said to be those within it. The other side:
    randread, whose 8 rates all lie within the band, keeps the single count (lag at 8, arrivals at 7)."""
    from memstor.analysis.validity.openloop import open_loop_rows

    rows = {r["subject"]: r["evidence"] for r in open_loop_rows(pd.read_csv(S18 / "load_latency-loop16.csv"))
            if r["check"] == "open_loop_held"}
    assert ("not open: 6 points at 50.0-98.0 % of X_max achieved 28.1-69.0 % of the offered rate (outside +-5 %; "
            "ioarrive's own checks failed there too (rate at 6, arrivals at 6, lag at 6, no_trend at 1)); at the 2 "
            "points within +-5 % of their rate (10.0-30.0 % of X_max), ioarrive's own checks failed (lag at 2, "
            "arrivals at 1); at the 2 late points") in rows["randwrite"], rows["randwrite"]
    assert "ioarrive's own checks failed (lag at 8, arrivals at 7): 8 points at 10.0-98.0 % of X_max" in rows["randread"]
    assert "there too" not in rows["randread"]


def test_a_ringed_points_label_is_placed_before_the_faded_points_labels():
    """S21-bare 6: Figure 4's ringed randwrite u70 (its own checks passed, 58,886 IOPS) had no label in either panel,
    and randread's faded 'u50' beside it read as the ring's. Labels of held or ringed points are now placed first and
    may go farther out; the faded series are drawn beneath. Rendered from the bare run's curves, both panels label the
    ring. The other side: the labels of points that did not hold keep the default order and zorder."""
    import matplotlib

    matplotlib.use("Agg")
    from memstor.report.plots import printing
    from memstor.report.plots.openloop import latency_throughput_figure

    fig = latency_throughput_figure(pd.read_csv(S18 / "load_latency-bare16.csv"), None)
    printing.declutter_labels(fig)
    for ax in fig.axes[:2]:
        first = {t.get_text() for t in ax.texts if t.get_gid() == "util:vm:randwrite"
                 and t.get_zorder() == printing.FIRST_LABEL_ZORDER and t.get_visible()}
        assert first == {"u30", "u70", "u98"}, (ax.get_title(), first)
        faded = [t for t in ax.texts if t.get_gid() == "util:vm:randread"]
        assert {t.get_text() for t in faded if t.get_zorder() > 3} == {"u30"}  # randread's one ringed point
        lines = {str(ln.get_gid()): ln.get_zorder() for ln in ax.get_lines()}
        assert lines["notheld:vm:randwrite"] < 2
    assert not printing.label_problems(fig)


@pytest.mark.notebook
def test_a_sections_figure_is_set_before_the_next_section_starts(tmp_path):
    """S21-bare 7: Figure 1, a §2 figure, floated into the middle of a §3 sentence on the next page. The report's
    LaTeX template now sets a section's pending figures before the next section's heading (placeins' FloatBarrier
    in its \\section). Compiled with xelatex from the template's own preamble lines: a figure too tall for the rest of
    its page comes before '3. Next' with them, after it without (the other side: the barrier is what moves it)."""
    import re
    import shutil
    import subprocess

    if not (shutil.which("xelatex") and shutil.which("pdftotext")):
        pytest.skip("xelatex and pdftotext (texlive-xetex, poppler-utils) are needed to compile the template's lines")
    template = (Path(__file__).resolve().parents[1] / "lib" / "memstor" / "report" / "templates"
                / "memstor.tex.j2").read_text(encoding="utf-8")
    barrier = re.search(r"\\usepackage\[above\]\{placeins\}\n\\let\\memstorsection\\section\n"
                        r"\\renewcommand\\section\{\\FloatBarrier\\memstorsection\}", template)
    assert barrier, "the template's section barrier is gone"
    filler = " ".join(["A sentence of the section's text that fills half its page."] * 45)

    def order(preamble: str) -> tuple[int, int]:
        body = (f"\\documentclass{{article}}\n{preamble}\n\\begin{{document}}\n\\section{{2. First}}\n{filler}\n"
                "\\begin{figure}[htbp]\\centering\\rule{4in}{5in}\\caption{Figure of the first}\\end{figure}\n"
                f"\\section{{3. Next}}\n{filler}\n\\end{{document}}\n")
        (tmp_path / "t.tex").write_text(body, encoding="utf-8")
        subprocess.run(["xelatex", "-interaction=nonstopmode", "t.tex"], cwd=tmp_path, capture_output=True, timeout=120)
        text = subprocess.run(["pdftotext", str(tmp_path / "t.pdf"), "-"], capture_output=True, text=True).stdout
        return text.index("Figure of the first"), text.index("3. Next")

    fig, nxt = order(barrier.group(0))
    assert fig < nxt
    fig, nxt = order("")
    assert fig > nxt  # without the barrier the figure floats past the next heading


def test_why_a_loop_did_not_hold_is_a_paragraph_the_pdf_may_leave_to_the_html():
    """The loop run measured this session printed 11 pages with every spill cell left out: each workload whose open
    loop did not hold carried ioarrive's whole diagnosis inline (about 15 lines each). The diagnosis is now its own
    paragraph per workload (cause_paragraphs), in a cell the PDF may leave to the HTML; the workload's paragraph keeps
    where its loop held and the closing paragraph says where the why is. The other side: by default (causes inline)
    the paragraphs are as before, the why inside each."""
    from memstor.report.text.openloop import cause_paragraphs, load_sentences

    tables = [pd.read_csv(S18 / f"{t}-loop18.csv") for t in ("load_latency", "slo", "load_latency_models")]
    short = load_sentences(*tables, pd.DataFrame(), causes=False)
    full = load_sentences(*tables, pd.DataFrame())
    why = cause_paragraphs(*tables)
    assert [w.split("**")[1] for w in why] == ["vm-loop0, randread: why the loop did not hold.",
                                               "vm-loop0, randwrite: why the loop did not hold."]
    for w in why:
        body = w.split("** ", 1)[1]
        assert "For an open loop:" in body and not any(body in s for s in short)
        assert any(body in s for s in full)  # inline by default
    assert short[-1].endswith("the paragraphs 'why the loop did not hold' (in the HTML report where the PDF leaves "
                              "them out)."), short[-1]
    assert full[-1].endswith("Each workload's paragraph above names what delayed the submissions, where its columns "
                             "show it.")
    assert cause_paragraphs(None, *tables[1:]) == []


def test_the_climb_says_what_the_first_size_on_the_last_level_measured_and_the_l3_factor_is_a_bound():
    """S22-cpu1 6 / 5: §4.5 said the curve 'reaches the 132 ns level it ends on at 16 MiB' where 16 MiB measured 114
    ns, and 'a factor 23.0 from the kernel's 260 MiB' of a level ending between 8 and 11.3 MiB (23.0 from its far
    side). Now 'from 16 MiB (114 ns there)' and 'at least a factor 23.0'. The other side: a first size within 10 % of
    the level keeps 'at 16 MiB'."""
    from memstor.analysis.hierarchy import cache_levels
    from memstor.report.text.hierarchy import hierarchy_sentences

    ws = pd.read_csv(S18 / "working_set-cpu118.csv")
    levels = cache_levels(ws, {"L1d_bytes": 49152, "L2_bytes": 2 << 20, "L3_bytes": 260 << 20})
    said = hierarchy_sentences(levels, None, ws, None)[0]
    assert "reaches the 132 ns level it ends on from 16 MiB (114 ns there)" in said, said
    assert "at least a factor 23.0 from the kernel's 260" in said
    big = (ws["buffer_bytes"] == 16 << 20) & (ws["pattern"] == "random")
    near = ws.assign(lat_p50_ns=ws["lat_p50_ns"].mask(big, 128.0), latency_ns=ws["latency_ns"].mask(big, 128.0))
    assert "level it ends on at 16 MiB" in hierarchy_sentences(cache_levels(near, None), None, near, None)[0]


def test_a_write_saturation_run_too_short_for_a_level_gives_its_seconds_mean_and_no_cliff_row():
    """S22-loop 1, 3, 4: the loop run's 128 KiB sequential write (12 whole seconds, wsat_series warned: too short)
    printed 'no level (too short); mean 2,441' and 'the mean of those seconds is 2,441 MB/s', which is the level after
    an 8-s rise (the 12 seconds average 2,108), beside 'sustained / burst 1.39' and a Cliffs row at 8 s while the
    same page said no cliff was determined. Now the seconds' mean, 2,108, no burst, no ratio, no cliffs row. The
    other side: without the caveat (a series long enough) the rise, its levels and its row stay."""
    from memstor.analysis import wsat
    from memstor.report.text.wsat import cliffs_display, no_cliff_text, wsat_display

    runs = pd.read_csv(S18 / "fio-write-saturation-loop18.csv")
    seconds = pd.read_csv(S18 / "fio-write-saturation-seconds-loop18.csv")
    cliffs = wsat.wsat_cliffs(runs, seconds, pd.read_csv(S18 / "fio-write-saturation-thermal-loop18.csv"))
    table = wsat.wsat_table(runs, seconds, cliffs)
    seq = table["workload"] == "128 KiB sequential write"
    assert round(float(table.loc[seq, "series_MBps"].iloc[0])) == 2108
    short = table.assign(caveat=["12 whole seconds of 13 per-second values: too short" if s else "" for s in seq])
    row = wsat_display(short).set_index("workload").loc["128 KiB sequential write"]
    assert (row["sustained (MB/s)"], row["burst (MB/s)"], row["sustained / burst"]) == (
        "no level (too short); mean 2,108", "–", "–")
    assert "the mean of those seconds is 2,108 MB/s" in no_cliff_text(short[seq].iloc[0])
    assert cliffs_display(cliffs, short).empty
    told = wsat_display(table).set_index("workload").loc["128 KiB sequential write"]
    assert (told["burst (MB/s)"], told["sustained / burst"]) == ("1,753 (before a rise)", "1.39")
    assert len(cliffs_display(cliffs, table)) == 1 and len(cliffs_display(cliffs)) == 1


def test_the_knee_sentence_says_the_one_job_sweep_still_rose_where_knee_plateau_failed():
    """S22-loop 5 / S22-cpu1 1: page 2 blamed the failed knee fit on the 4-job point ('beaten by a point with 4
    jobs, outside the one-job sweep it was fitted to'), while knee_plateau failed too: the one-job sweep itself still
    rose at its deepest (1-CPU randwrite here: +58.1 % from QD16x1 to QD64x1). The sentence now says so. The other
    side: where knee_plateau did not fail, the sentence is as before."""
    from memstor.report.text.queueing import fit_sentence

    runs = pd.read_csv(S16 / "summary-cpu116.csv")
    evidence = "randwrite: X_fit (fitted ceiling) 41,785 ± 3,000 IOPS (SE); X_best 68,086 IOPS (at QD32x4), 62.9 % above"
    knees = pd.DataFrame(columns=["N_star_bound"])
    said = fit_sentence([evidence], knees, runs, H, {}, {"randwrite"})
    assert said.startswith("The knee fit's ceiling is beaten by a point with 4 jobs, outside the one-job sweep it was "
                           "fitted to, and its one-job sweep still rose at its deepest: +58.1 % from QD16x1 to QD64x1, "
                           "knee_plateau failed (randwrite: "), said
    assert "still rose" not in fit_sentence([evidence], knees, runs, H, {}, {"randread"})


def test_a_lower_bound_is_printed_rounded_down():
    """S22-loop 9: knee bounds of 2.454, 1.756 and 2.259 printed 'N* ≥ 2.5', '≥ 1.8' and '≥ 2.3', stronger than the
    data. Bounds are now rounded down (2.4, 1.7, 2.2); a value already at its digits stays."""
    from memstor.report.text.queueing import floor_text

    assert [floor_text(v) for v in (2.454, 1.756, 2.259, 2.0, 10.04)] == ["2.4", "1.7", "2.2", "2.0", "10.0"]
    assert floor_text(10.0395, 2) == "10.03" and floor_text(3.0000000001) == "3.0"


def test_a_fitted_knee_below_the_measured_bound_is_neither_bold_nor_unmarked():
    """S22-cpu1 2: the 1-CPU run's randread knee, N* 8.53 [3.99, 18.2], printed bold, unmarked in the knee table and
    as 'N* = 8.5' at Figure 3's star, while the same paragraph said the measured bound is 9.2 and to quote that. The
    table now marks it '(below the bound)' and the sentence does not bold it. The other side: a fit above its bound
    (the bound lowered to 8.0) is bold and unmarked."""
    from memstor.report.text.queueing import knee_display, knee_sentences

    knees = pd.read_csv(S18 / "knee-cpu118.csv")
    read = knees["rw"] == "randread"
    assert knee_display(knees).loc[read.to_numpy(), "N* fit (I/Os, 95 % CI)"].iloc[0] == "8.53 [3.99, 18.2] (below the bound)"
    said = knee_sentences(knees)[0]
    assert "= 8.53 [3.99, 18.2] I/Os in flight (95 % interval" in said and "**" not in said.split("**: ", 1)[1], said
    assert "quote N* ≥ 9.2" in said
    above = knees.assign(N_star_bound=knees["N_star_bound"].mask(read, 8.0))
    assert knee_display(above).loc[read.to_numpy(), "N* fit (I/Os, 95 % CI)"].iloc[0] == "8.53 [3.99, 18.2]"
    assert "**8.53 [3.99, 18.2] I/Os in flight**" in knee_sentences(above)[0]


def test_the_best_measured_storage_figure_names_the_checks_that_warned_on_its_run():
    """S22-cpu1 3: page 3's storage ceiling called a 2.26-s write-saturation run's 1,902 MB/s the best measured while
    its own series checks warned, unsaid. The 1-CPU run of session 16 (its 128 KiB run, 1.56 s) with wsat_series
    warning instead of failing: the best measured is that run's 2,755 MB/s with 'wsat_series warned'. The other
    sides: failing, it is left out (as before); with no warning on the best point nothing is added."""
    from memstor.analysis.ceilings import STORAGE, ceiling_use

    runs, checks = pd.read_csv(S16 / "summary-cpu116.csv"), pd.read_csv(S16 / "validity-cpu116.csv")
    head = pd.read_csv(S17 / "headline-cpu116.csv")
    ceil = pd.DataFrame([{"host": H, "what": STORAGE, "ceiling": 4000.0, "how": "x", "reason": ""}])
    series = (checks["check"] == "wsat_series") & checks["subject"].astype(str).str.startswith("128 KiB")
    warned = checks.assign(status=checks["status"].mask(series, "warn"))
    said = ceiling_use(ceil, head, runs, None, warned).iloc[0]
    assert round(said["measured"]) == 2755 and said["measured_as"] == (
        "fio-write-saturation, write 128 KiB QD32x4 (write): wsat_series warned"), said["measured_as"]
    failed = ceiling_use(ceil, head, runs, None, checks).iloc[0]
    assert round(failed["measured"]) != 2755 and "warned" not in str(failed["measured_as"].split(";")[0])
    clean = ceiling_use(ceil, head, runs, None, checks[~series]).iloc[0]
    assert round(clean["measured"]) == 2755 and clean["measured_as"] == "fio-write-saturation, write 128 KiB QD32x4 (write)"


def test_a_closed_slo_answer_says_fios_latency_target_run_missed_it_at_fewer_iops():
    """S23-cpu1 4: the SLO cell set the queue-depth sweep's 61,708 IOPS (QD16, completion p99 807 µs) as meeting 1 ms
    beside fio's latency_target run that missed it at 32,628 IOPS (completion p99 4,080 µs), with only 'the
    submission time is not in it' between them. The cell now says the closed runs disagree. The other side:
    randwrite, whose latency_target run (27,994 IOPS) ran above the sweep's 15,141, adds nothing."""
    from memstor.report.text.openloop import slo_display

    cells = slo_display(pd.read_csv(S18 / "slo-cpu118.csv")).set_index("workload")[
        "fio latency_target, closed loop (IOPS, depth per job, its p99)"]
    assert cells["randread"].endswith("fio's latency_target run missed it at fewer IOPS (its completion p99 too): "
                                      "the closed runs disagree"), cells["randread"]
    assert "disagree" not in cells["randwrite"]
