"""The report of a real quick-profile run here (tests/data/report-q0/SOURCES.md) against the statements a second
senior review found that the report's own tables contradict or that mislead (issue 38, items 1-9): each test reads
the report's tables and words built from that data folder, as the synthesis notebook builds them."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from conftest import ROOT
from memstor.analysis import synthesis as syn
from memstor.analysis.validity import validity_table
from memstor.core.schema import missing
from memstor.report import export, text
from notebook_helpers import run_notebook
from report_helpers import synthesise_copy
from test_validity import H, knee_frame

DATA = Path(__file__).parent / "data" / "report-q0"
VM = "vm"


@pytest.fixture(scope="module")
def S(tmp_path_factory):
    return synthesise_copy(tmp_path_factory, DATA, "q0")


def _norm(words: str) -> str:
    return " ".join(words.replace("\u00ad", "").replace("’", "'").split())


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict:
    """The synthesis notebook run on the q0 data as build/review.sh runs it (profile quick) and exported:
    {"html": the HTML's words, "pdf": the PDF's words (None without the toolchain), "pages": the PDF's pages}."""
    root = tmp_path_factory.mktemp("q0-report")
    shutil.copytree(DATA / "processed", root / "data" / "processed")
    nb = root / "90.ipynb"
    run_notebook("90-synthesis", nb, {"data_dir": str(root / "data"), "specs_dir": str(ROOT / "data" / "specs"),
                                      "profile": "quick", "tables_dir": str(root / "tables")})
    res = export.export(nb, root / "report")
    html = _norm(re.sub(r"<[^>]+>", " ", res["html"].read_text(encoding="utf-8")))
    out = {"html": html, "pdf": None, "pages": None, "tables": root / "tables"}
    if res.get("pdf") is not None:
        out["pdf"] = _norm(subprocess.run(["pdftotext", str(res["pdf"]), "-"], capture_output=True, text=True,
                                          check=True).stdout)
        info = subprocess.run(["pdfinfo", str(res["pdf"])], capture_output=True, text=True, check=True).stdout
        out["pages"] = int(re.search(r"Pages:\s+(\d+)", info).group(1))
    return out


def pdf_has(said: str, pdf: str, gap: int = 1500) -> bool:
    """Whether the PDF's words hold `said` whole, or split once by a page break: its first words, then within
    `gap` characters (a page number, a float figure and its caption set in between) the rest."""
    if said in pdf:
        return True
    words = said.split(" ")
    for i in range(1, len(words)):
        head, tail = " ".join(words[:i]), " ".join(words[i:])
        at = pdf.find(head + " ")
        while at >= 0:
            rest = pdf.find(" " + tail, at + len(head))
            if 0 <= rest - at - len(head) <= gap:
                return True
            at = pdf.find(head + " ", at + 1)
    return False


def test_pdf_has_finds_a_sentence_across_one_page_break_only():
    """Both sides of pdf_has: whole, split by a page number and a figure, not found when a word differs or when
    the parts lie far apart or out of order."""
    said = "1 of 7 cells held; of the 6 that did not, lag at 5 cells"
    pdf = "x 1 of 7 cells held; of the 6 that did 5 Figure 2. (Figure 4 in report.html) Latency not, lag at 5 cells y"
    assert pdf_has(said, "a " + said + " b") and pdf_has(said, pdf)
    assert not pdf_has(said.replace("lag", "rate"), pdf)
    assert not pdf_has(said, pdf.replace("Figure 2.", "Figure 2. " + "z" * 2000))
    assert not pdf_has(said, "not, lag at 5 cells x 1 of 7 cells held; of the 6 that did")


def pdf_words(report: dict) -> str:
    if report["pdf"] is None:
        pytest.skip("PDF toolchain missing (scripts/install-system-deps installs it)")
    return report["pdf"]


def check(S, name: str, subject: str) -> pd.Series:
    """The one validity row of `name` for `subject` on the q0 device."""
    v = S.validity
    sel = v[(v["host"] == VM) & (v["check"] == name) & (v["subject"] == subject)]
    assert len(sel) == 1, sel.to_string()
    return sel.iloc[0]


# ------------------------------------------------------------------- item 1: no knee where the sweep still rises


def test_a_sweep_still_rising_past_the_knee_states_no_knee(S):
    """X_fit 96,709 IOPS lies under 118,572 (QD64) and 138,631 (QD32x4) measured past N* 7.76, both without an
    interval: the knee N* is not stated; the numbers are."""
    r = check(S, "knee_plateau", "randread")
    assert r["status"] == "fail" and r["limit"] == pytest.approx(96_709.4 * 1.1, rel=1e-4)
    for said in ("96,709", "118,572 IOPS at N = 64 (QD64x1)", "138,631 IOPS at N = 128 (QD32x4)", "no interval"):
        assert said in r["evidence"]
    knee = S.knees.set_index("rw").loc["randread"]
    # S17-loop 1: knee_ceiling judges the sweep's most at any job count, 138,631 at QD32x4, and fails first
    assert missing(knee["N_star_fit"]) and "highest measured 138,631 IOPS (at QD32x4), 43.3 % above the fit" in \
        knee["not_valid"]
    assert missing(knee["X_max_fit_iops"])  # knee_ceiling failed: the fitted ceiling is named only as contradicted
    said = " ".join(text.knee_sentences(S.knees))
    assert "= **7.76" not in said and "fitted knee is not a finding here" in said and "X_best 138,631 IOPS" in said
    assert (VM, "randread") not in S.knee_fits                                 # the figure draws no fitted knee


def _qd(iops, ci=None) -> pd.DataFrame:
    """Closed queue-depth points of H's randread at N = 1, 4, 16, 64, 256 (IOPS; ci: (low, high) per point)."""
    n = [1, 4, 16, 64, 256]
    df = pd.DataFrame({"host": H, "rw": "randread", "outstanding_io": n, "iodepth": n, "numjobs": 1,
                       "iops": list(iops)})
    if ci is not None:
        df["iops_ci_low"], df["iops_ci_high"] = zip(*ci)
    return df


def _plateau(qd, **knee) -> pd.Series:
    v = validity_table(knees=knee_frame(**knee), qd=qd)
    return v[v["check"] == "knee_plateau"].iloc[0]


def test_the_knee_plateau_check_on_both_sides_and_without_a_value():
    """X_fit 100,000, N* 4: a plateau within 10 % passes; a point 15 % above fails where the sweep's last step
    still gained more than 10 % (no knee), warns where it levelled off above X_fit (the knee stated with the
    numbers); a point above passes when its interval reaches down to 1.1 X_fit; nothing past N* reaching
    X_fit / 1.1 warns; no point past N* is not checked."""
    flat = _plateau(_qd([25_000, 80_000, 97_000, 104_000, 101_000]))
    assert flat["status"] == "pass" and flat["value"] == 104_000 and flat["high"] == pytest.approx(110_000)
    rising = _plateau(_qd([25_000, 80_000, 97_000, 104_000, 115_000]))
    assert rising["status"] == "fail" and "115,000 IOPS at N = 256" in rising["evidence"]
    assert "last step, 104,000 IOPS at N = 64 (QD64x1) to 115,000 IOPS at N = 256" in rising["evidence"]
    level = _plateau(_qd([25_000, 80_000, 97_000, 115_000, 116_000]))
    assert level["status"] == "warn" and level["value"] == 116_000 and "levels off above" in level["evidence"]
    assert "stated with these numbers" in level["consequence"]
    wide = [(v, v) for v in (25_000, 80_000, 90_000, 97_000)] + [(105_000, 125_000)]
    assert _plateau(_qd([25_000, 80_000, 90_000, 97_000, 115_000], ci=wide))["status"] == "pass"
    tight = wide[:4] + [(112_000, 118_000)]
    beyond = _plateau(_qd([25_000, 80_000, 90_000, 97_000, 115_000], ci=tight))
    assert beyond["status"] == "fail" and "[112,000, 118,000]" in beyond["evidence"]
    low = _plateau(_qd([25_000, 60_000, 80_000, 88_000, 89_000]))
    assert low["status"] == "warn" and low["limit"] == pytest.approx(100_000 / 1.1)
    none = _plateau(_qd([25_000, 60_000, 80_000, 88_000, 89_000]).head(2))
    assert none["status"] == "unchecked" and "no queue-depth point measured past N*" in none["evidence"]
    assert validity_table(knees=knee_frame())["check"].ne("knee_plateau").all()  # no points given: no row


def test_a_sweep_levelled_off_above_the_fit_states_the_knee_with_the_points_past_it(tmp_path):
    """tests/data/report-defects' randwrite sweep levels off at 54-59k IOPS from QD64 to QD4096 (its last step
    +0.2 %), above X_fit 52,664: N* is not a finding (fifth read R-def p6: 63,736 IOPS measured above the fit's 95 %
    band, 62,171). Since the fourteenth read (S17-loop 1) knee_ceiling judges that QD32x4 point too and fails, so the
    failed check page 1 names is the one that withholds the knee, and the measured bound is given instead."""
    shutil.copytree(DATA.parent / "report-defects" / "processed", tmp_path / "processed")
    D = syn.synthesise(tmp_path)
    knee = D.knees.set_index("rw").loc["randwrite"]
    assert not knee["valid"] and missing(knee["N_star_fit"])
    assert "highest measured 63,736 IOPS (at QD32x4), 21.0 % above the fit and beyond its 1.96 SE" in knee["not_valid"]
    said = " ".join(text.knee_sentences(D.knees[D.knees["rw"] == "randwrite"]))
    assert "**" not in said.split(":", 1)[1] and "the fitted knee is not a finding here" in said
    assert "X_best 63,736 IOPS (at QD32x4), 21.0 % above the fit" in said and "one-job sweep's highest 63" not in said
    assert "the closed-system bound gives N* ≥ 5.9 (X_best is at most the ceiling; X_best is one run with 4 jobs: " \
        "from the one-job sweep's most, 59,270 IOPS, N* ≥ 5.5)" in said, said
    plateau = D.validity[(D.validity["check"] == "knee_plateau") & (D.validity["subject"] == "randwrite")].iloc[0]
    assert plateau["status"] == "warn" and "the sweep levels off above the fit's ceiling" in plateau["evidence"]


# ----------------------------------------------------------- item 2: the open loop's curve from held rates only


def test_the_open_loop_curves_use_only_the_rates_whose_loop_held(S):
    """randread held at 1 of 8 rates (no curve), randwrite at 4 of 8 (u10-u70): the curves table's max and
    R(max)/R0 were 136,115 / 10.53 and 97,697 / 4.71, read from rates ioarrive's checks failed at."""
    st = S.storage[S.storage["kind"] == "open loop"].set_index("rw")
    assert (st.loc["randread", "held_rates"], st.loc["randread", "rates"]) == (1, 8)
    assert missing(st.loc["randread", "x_max_iops"]) and missing(st.loc["randread", "r_at_x_max_over_r0"])
    assert st.loc["randwrite", "points"] == 4 and st.loc["randwrite", "x_max_iops"] == pytest.approx(69_612.0)
    load = S.load[(S.load["rw"] == "randwrite") & S.load["open_loop"].astype(bool)]
    assert st.loc["randwrite", "x_max_iops"] == load["achieved_iops"].max()    # a held rate's, not 97,697
    shown = text.curves_display(S.mem, S.storage).set_index("curve")
    read, write = shown.loc["storage: randread, open loop"], shown.loc["storage: randwrite, open loop"]
    assert read["points"] == "1 held of 8 rates" and read["max measured"] == "–" and read["R(max)/R0"] == "–"
    assert write["points"] == "4 held of 8 rates" and write["max measured"] == "69,612 IOPS"
    said = " ".join(text.curves_sentences(S.mem, S.storage))
    assert "136,115" not in said and "97,697" not in said and "10.53" not in said
    assert "**vm, randread, open loop**: no curve — 1 held of 8 rates" in said
    assert "(4 held of 8 rates: the curve is theirs only)" in said


# ------------------------------------------------------------ item 3: no queueing model, and the real reason


@pytest.mark.slow
@pytest.mark.notebook
def test_no_queueing_model_says_the_loop_did_not_hold_not_that_a_service_time_is_missing(S, report):
    """Both QD1 points are there (the service times S = 51.5 and 131 µs): the models are withheld because the open
    loop did not hold; the report said "no service time (QD1 point) or no open-loop run"."""
    assert S.load_models["service_mean_us"].notna().all() and not S.load_models["valid"].any()
    why = text.models_empty(S.load_models, S.load)
    assert why == ("the open loop did not hold (randread: 1 of 8 offered rates held; randwrite: 4 of 8 offered "
                   "rates held), and no model is fitted to a loop that was not open")
    assert f"Queueing models against the measured mean latency: none — {why}" in report["html"]
    assert "no service time" not in report["html"]


# ---------------------------------------------- item 4: provenance counted per tool, configurations vs runs


@pytest.mark.slow
@pytest.mark.notebook
def test_provenance_counts_each_tools_points_and_tells_configurations_from_runs(S, report):
    """fio-load-latency's 18 points are 16 of ioarrive's and 2 of fio's (its generator column); the queue-depth
    table's "best of 5 runs" that X_max came from are 5 configurations, 1 run each."""
    cmds = {c["experiment"]: c for c in text.commands(S.dataset)}
    load = cmds["fio-load-latency"]
    assert load["tools"] == [("ioarrive 0.1", 16), ("fio-3.33", 2)]
    assert (load["configurations"], load["runs"]) == (18, 1)
    assert load["command"].count("--") > 2 and "ioarrive" in load["command"] and "/fio " in load["command"]
    said = text.command_sentence(load)
    assert said.startswith("**vm / fio-load-latency** — 18 points (18 configurations, 1 run each): 16 with "
                           "ioarrive 0.1, 2 with fio-3.33; ")
    assert "The first command of each tool" in said
    mixed = cmds["mixed-load-map"]["params"]["x_max_source"]
    assert mixed == ("read: fio-queue-depth table: best of 5 configurations, 1 run each (QD32x4); write: "
                     "fio-queue-depth table: best of 5 configurations, 1 run each (QD64x1)")
    tools = syn.provenance(S.dataset).set_index("table")["tools"]
    assert tools["fio-load-latency.csv"] == "ioarrive 0.1 (16 points), fio-3.33 (2 points)"
    assert tools["mixed-load-map.csv"] == "ioarrive 0.1"
    html = report["html"]
    assert "18 points with ioarrive" not in html and "best of 5 runs" not in html
    assert "18 points (18 configurations, 1 run each): 16 with ioarrive 0.1, 2 with fio-3.33" in html


# ------------------------------------------------------------------- item 5: every latency says its statistic


@pytest.mark.slow
@pytest.mark.notebook
def test_every_latency_figure_of_the_pdf_names_its_statistic(S, report):
    """The QD1 latency headline is fio's mean total latency: the PDF's headline said '4K QD1 random read latency
    (µs)'; the findings, the knee sentences and its table said latencies without 'mean'."""
    head = text.headline_evidence(S.headline, S.validity).set_index("quantity")
    assert {"4K QD1 random read mean latency (µs)", "4K QD1 random write mean latency (µs)"} <= set(head.index)
    knee = text.knee_display(S.knees)
    assert {"R_min fit (mean, µs)", "mean R at N_min (µs)"} <= set(knee.columns)
    pdf = pdf_words(report)
    for said in ("4K QD1 random read mean latency (µs)", "4K QD1 random write mean latency (µs)",
                 "13,922 IOPS with 1 I/O in flight at a mean latency of 70.9 µs",
                 "with 64 in flight at a mean of 539 µs", "(mean latency 70.9 µs at the smallest N"):
        assert pdf_has(said, pdf), said
    for bare in ("random read latency (µs)", "70.9 µs each", "(latency 70.9 µs"):
        assert bare not in pdf and bare not in report["html"], bare


# ----------------------------------------- item 6: ratios of a target that is not the sheet's drive, marked


@pytest.mark.slow
@pytest.mark.notebook
def test_each_spec_ratio_of_a_virtual_disk_says_not_comparable_beside_it(S, report):
    """The target is a virtio disk, not the D7-P5600 the sheet describes: no ratio is printed, each cell says "not
    comparable" (the flag said 'differs: ... interface'; three reviewers then read '0.99 (not comparable)' as 'at
    spec'), and the number stays in spec_comparison.csv."""
    assert not S.spec["comparable"].any()
    shown = text.spec_table(S.spec, compact=True)
    ratios = shown.loc[shown["ratio"] != "–", "ratio"]
    assert len(ratios) == 5 and (ratios == "– (not comparable)").all()
    full = text.spec_table(S.spec)
    assert full.loc[full["ratio"] != "–", "flag"].str.startswith("not the sheet's drive (virtio disk vda); ").all()
    assert text.spec_note(S.spec).startswith("No ratio is given where it is marked *not comparable*: vm: not the "
                                             "sheet's drive (virtio disk vda)")
    pdf = pdf_words(report)
    assert "No ratio is given where it is marked not comparable: vm: not the sheet's drive (virtio disk vda)" in pdf
    assert "– (not comparable)" in pdf
    for r in S.spec["ratio"].dropna():
        assert f"{r:.2f} (not comparable)" not in pdf, r


def test_a_ratio_of_the_sheets_own_kind_of_drive_stays_a_plain_number(S):
    same = S.spec.assign(comparable=True)
    shown = text.spec_table(same)
    assert not shown["ratio"].str.contains("comparable").any() and not shown["flag"].str.contains("sheet's").any()
    assert text.spec_note(same) == ""


# ------------------------------------------ item 7: per-second statistics of 2 one-second windows, withheld


@pytest.mark.slow
@pytest.mark.notebook
def test_cv_and_min_one_second_of_two_windows_are_withheld_with_the_count_and_why(S, report):
    """Every q0 point ran 2 s: its CV of 1-s IOPS (0.000-0.072) and lowest 1-s IOPS (95-100 %) came from two
    numbers and were printed as measurements."""
    assert (S.load["windows_1s"] == 2).all() and S.load["iops_cv"].notna().all()
    shown = text.load_display(S.load)
    assert (shown["CV of 1-s IOPS"] == "– (2 windows)").all()
    assert (shown["min 1-s IOPS (% of mean)"] == "– (2 windows)").all()
    note = text.windows_note(S.load)
    assert note.startswith("CV of 1-s IOPS and min 1-s IOPS withheld at 16 of 16 points (2 whole one-second "
                           "windows each; printed from 5)") and "±71 % at 2 windows" in note
    assert note in report["html"] and "0.072" not in report["html"]
    ten = S.load.assign(windows_1s=10)
    assert text.load_display(ten)["CV of 1-s IOPS"].iloc[0] == f"{S.load['iops_cv'].iloc[0]:.3f}"
    assert text.windows_note(ten) == ""


# ---------------------------------------------------- item 9: the map's held cells, the reasons counted


@pytest.mark.slow
@pytest.mark.notebook
def test_the_held_cell_summary_counts_each_reason_instead_of_calling_one_cell_most(S, report):
    """1 of q0's 7 cells held; of the 6 others 5 failed the lag check, 2 each the rate, exponential-gap and
    independence checks: the summary quoted cell w0-r20's lag numbers as "the first reason of most"."""
    from memstor.report.text import mixed_load as mltext

    said = mltext.held_summary(S.mixed)
    assert said.startswith("1 of 7 cells held; of the 6 that did not, their checks failed: lag at 5 cells, ")
    assert {"independence at 2", "rate at 2", "exp_gaps at 2"} <= set(said.split("; ")[1].split(": ")[1].split(", "))
    assert "; e.g. cell w0-r20: read: p99 lag 486.4 µs" in said and "most" not in said  # µs, not us (S6-bare C-12)
    assert said in report["html"]  # whole: a page break may set a page number and a figure inside the PDF's copy
    assert report["pdf"] is None or pdf_has(said, report["pdf"])


# ------------------------------------------------------------ item 8: no text over text in the open-loop figure


def test_the_open_loop_figure_prints_without_labels_or_ticks_over_each_other(S):
    """q0's Figure 5 printed 'u80' over 'u90', 'QD16' over 'u70' and '90,000120,000' on its x axis: the figure as
    the report shows it (fit_for_print) has no two data labels of a panel over each other, x tick labels at least
    2 pt apart, and leaves out a label only where no place beside its point is free."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from memstor.report.plots import openloop as op
    from memstor.report.plots import printing

    raw = op.latency_throughput_figure(S.load, S.qd)
    raw.set_size_inches(printing.REPORT_BOX_IN)  # as printed, before the labels are placed
    assert printing.label_problems(raw, "raw")  # the data's labels do collide where they are drawn
    fig = printing.fit_for_print(op.latency_throughput_figure(S.load, S.qd))
    assert printing.print_problems(fig, "open loop") == []
    labels = [t for ax in fig.axes for t in ax.texts]
    hidden = [t for t in labels if not t.get_visible()]
    assert len(hidden) <= len(labels) // 4, [t.get_text() for t in hidden]
    for ax in fig.axes:  # numbers on both axes of each panel (decluttering once thinned a log axis to none)
        assert len(printing._drawn_tick_labels(ax.yaxis)) >= 3 and len(printing._drawn_tick_labels(ax.xaxis)) >= 3
    plt.close("all")


def test_two_memory_panels_print_as_two_figures_with_their_legends_beside(real):
    """Loaded-latency curves at 64 B and 256 B accesses (tests/data/real, bernep): one figure of two panels, each
    legend beside its panel, printed the panels 0.5 in wide in the print box; the report shows a figure per panel,
    each readable."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from memstor.report.plots import printing
    from memstor.report.plots import synthesis as figs
    from test_memory import BERNEP, real_table

    files = [f"{BERNEP}/mlc_write{w}_{s}.txt" for w in (0, 25, 50, 100) for s in (64, 256)]
    curves = syn.memory_curves(real_table(real, files, idle=False).assign(host="bernep", ok=True))
    _, fits = syn.memory_fits(curves)
    panels = figs.memory_panels(curves)
    assert panels == [("bernep", 64.0), ("bernep", 256.0)]
    for panel in panels:
        fig = printing.fit_for_print(figs.memory_figure(curves, fits, panel))
        assert printing.print_problems(fig, f"memory {panel}") == []
        assert [ax.get_title() for ax in fig.axes] == [f"bernep, {int(panel[1])} B accesses"]
    assert figs.memory_figure(curves, fits, ("bernep", 128.0)) is None
    plt.close("all")


# ------------------------------------------------- the print acceptance: the block-size figure of four workloads


def test_four_block_size_panels_print_with_one_x_label_and_readable_widths():
    """The standard run's block-size sweep (build/run-standard, measured here: 4 workloads at QD32x1, MB/s below)
    printed four panels of 0.84 in with their x labels run together ('... K = 1024)block size ...'): one label
    under the row and one bandwidth scale numbered once leave each panel readable."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from memstor.report.plots import printing
    from memstor.report.plots import synthesis as figs

    mbps = {"randread": {4096: 372.7, 8192: 601.8, 16384: 1186.5, 32768: 1381.2, 65536: 1579.9, 131072: 1756.7,
                         262144: 1782.3, 1048576: 1311.5},
            "randwrite": {4096: 142.5, 8192: 287.6, 16384: 469.3, 32768: 695.2, 65536: 1126.2, 131072: 1715.1,
                          262144: 2395.9, 1048576: 1805.6},
            "read": {131072: 1775.5, 1048576: 1331.7}, "write": {131072: 2156.2, 1048576: 2317.4}}
    rows = [{"host": "vm2-standard", "experiment": "fio-block-size", "rw": rw, "bs_bytes": bs, "bw_MBps": v,
             "direction": "write" if "write" in rw else "read", "iodepth": 32, "numjobs": 1, "outstanding_io": 32}
            for rw, by in mbps.items() for bs, v in by.items()]
    fig = printing.fit_for_print(figs.block_size_figure(pd.DataFrame(rows)))
    assert printing.print_problems(fig, "block size") == []
    assert fig.get_supxlabel() == "block size (bytes, K = 1024)" and all(not ax.get_xlabel() for ax in fig.axes)
    assert fig.axes[1].get_ylim() == fig.axes[0].get_ylim() and fig.axes[0].get_ylim()[1] >= 2395.9
    plt.close("all")


# -------------------------------------------------- no method text for what did not run (the print acceptance)


def test_the_pdf_names_an_appendix_heading_a_code_cell_shows_only_when_it_shows_it():
    import nbformat

    tag = {"tags": ["appendix"]}
    shown = nbformat.v4.new_code_cell("display(Markdown('#### Write saturation (figures)'))", metadata=tag)
    shown.outputs = [nbformat.v4.new_output("display_data", data={"text/markdown": "#### Write saturation (figures)"})]
    absent = nbformat.v4.new_code_cell("if wsat: display(Markdown('#### Write saturation (figures)'))", metadata=tag)
    for cell, said in ((shown, True), (absent, False)):
        nb = nbformat.v4.new_notebook()
        nb.cells = [nbformat.v4.new_markdown_cell("# Shown"), cell, nbformat.v4.new_markdown_cell("After")]
        md = " ".join(c.source for c in export.without_appendix(nb, "r.html").cells if c.cell_type == "markdown")
        assert ("*Write saturation (figures): in the HTML report (r.html).*" in md) is said


@pytest.mark.slow
@pytest.mark.notebook
def test_the_q0_report_has_no_method_or_appendix_text_for_what_it_did_not_measure(report):
    """q0 measured storage only: no memory-curve method words, no pointer to an appendix section of absent data
    (MLC's other sections, steady-state, write-saturation, working-set, read-ratio figures), and 10 pages at most."""
    pdf = pdf_words(report)
    assert "The storage curves (the closed queue-depth sweep, the open loop's held rates) go through one analysis" in pdf
    for absent in ("Memory curves (loaded latency", "The other sections of MLC's default run",
                   "The steady-state measurement window with its bands", "Write saturation against data written",
                   "Latency against the working set", "The read-ratio family beside published curves",
                   "Read/write mix per block size (figure)"):
        assert absent not in pdf and absent not in report["html"], absent
    assert report["pages"] <= 10


def test_a_no_interval_reason_several_headlines_share_is_said_once_below_the_table(S):
    """The first page's table printed 'no interval (n = 1 and too few log windows: repeat the point or run it
    longer)' in each of its rows (a third of a page in the quick PDF): said once, each value marked."""
    from memstor.report.text import first_page as fp
    from memstor.report.text import headline_table as ht

    table, note = fp.factor_reasons(ht.headline_evidence(S.headline, S.validity))
    values = table.set_index("quantity")["value"]
    assert values["4K QD1 random read mean latency (µs)"] == "70.9 — no interval (a)"
    assert values["Best 4K random write, fresh (IOPS)"] == "99,836 — no interval (a)"
    assert note == "Note (a): n = 1 and too few log windows: repeat the point or run it longer."
    one = ht.headline_evidence(S.headline, S.validity).head(1)
    assert fp.factor_reasons(one) == (one, "")  # a reason of one value stays in its cell
