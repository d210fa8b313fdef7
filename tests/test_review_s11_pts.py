"""Seventh independent read of the 1-CPU run (review cpu17), the PTS items: fixtures in tests/data/review-s11/pts/
(SOURCES.md says where each came from)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from memstor.analysis import pts_recovery as pr
from memstor.analysis.validity import intervals
from memstor.analysis.validity.rows import COLUMNS
from memstor.report import export
from memstor.report.export import Table
from memstor.report.text import first_page as fp
from memstor.report.text import pts as pts_text

DATA = Path(__file__).parent / "data" / "review-s11" / "pts"


def frame(rows: list[dict]) -> pd.DataFrame:
    """A validity table of rows (its columns even when empty)."""
    return pd.DataFrame(rows, columns=COLUMNS)


def _xsr() -> pd.DataFrame:
    return pr.xsr_table(pd.read_csv(DATA / "fio-pts-xsr-seconds.csv"), pd.read_csv(DATA / "fio-pts-xsr.csv"))


def test_xsr_rnd_phase_scattering_from_its_first_second_is_not_said_still_moving():
    # item 7: RND 8KiB ran 401, 316, 372, 345, 375, 370, 351, 389, 310 MB/s; its last 3 s (351, 389, 310) fail
    # the 20 % rule (22.4 %), but the phase has no trend: the report said "still moving when the phase ended"
    out = _xsr()
    why = out["to_level_note"].iloc[0]
    assert pd.isna(out["to_level_MBps"].iloc[0]) and pd.isna(out["settle_s"].iloc[0])
    assert why.startswith("no level: its last 3 s ran 351, 389, 310 MB/s, a data excursion of 22.4 % of their mean 350")
    assert "still moving" not in why
    assert "scattering 310-401 MB/s from its first second, with no trend (least-squares slope -2.68 MB/s per s " \
           "over its 9 s, 95 % interval -12.5 to 7.14)" in why
    assert out["from_level_note"].iloc[1] == why
    shown = pts_text._xsr_one(out.iloc[0])
    assert "scattering 310-401 MB/s from its first second, with no trend" in shown and shown.endswith(
        "; no settle time)") and "still moving" not in shown


def test_xsr_phase_with_a_trend_is_still_moving():
    # the loop run's collapse (its RND phase ended 883, 606, 237 MB/s): a slope whose interval excludes 0
    falling = [1000, 990, 960, 980, 940, 900, 883, 606, 237]
    level, why = pr.phase_level(falling)
    assert level is None and "still moving when the phase ended (least-squares slope" in why
    assert "scattering" not in why
    assert pr.phase_trend(falling).startswith("still moving")
    assert pr.phase_trend([100, 110, 120, 130, 140, 150]).startswith("still moving")  # a straight line


def test_xsr_phase_too_short_for_a_trend_is_not_tested():
    level, why = pr.phase_level([900, 880, 883, 606, 237])  # its last 2 s: 606, 237
    assert level is None and why.endswith("whether it was still moving is not tested (5 s, fewer than 6)")
    assert pr.phase_trend([1.0, float("nan"), 2.0, 3.0, 4.0, 5.0]).endswith("(5 s, fewer than 6)")
    assert pr.phase_trend([]).endswith("(0 s, fewer than 6)")


def _points(cis: list[tuple[float | None, float | None]]) -> pd.DataFrame:
    """fio summary points of one experiment, IOPS 1000 each, with the given (low, high) intervals."""
    return pd.DataFrame([{"host": "vm", "experiment": "fio-queue-depth", "config": f"c{i}", "direction": "read",
                          "n": 1, "iops": 1000.0, "iops_ci_low": lo, "iops_ci_high": hi}
                         for i, (lo, hi) in enumerate(cis)])


def _fio_notes(k: int) -> pd.DataFrame:
    return pd.DataFrame([{"host": "vm", "experiment": "fio-queue-depth", "config": f"c{i}",
                          "ci_note": "too few batches (7 intervals < 10)"} for i in range(k)])


def test_profile_sentence_counts_the_reviewed_points_without_an_interval():
    # item 11: page 1 said "most points have too few log windows for a 95 % interval"; validity.csv's
    # interval_exists rows: none of the 112 storage points has one, for three reasons
    v = pd.read_csv(DATA / "validity-interval-exists.csv")
    assert intervals.exists_counts(v) == (112, 112, [
        "too few log windows", "a PTS-recovery or write-saturation trajectory, not a stationary run",
        "ioarrive's 1-s series"])
    said = fp.profile_sentence("quick", v)
    assert "most points" not in said
    assert ("no storage value (of 112, a point's directions counted apart) has a 95 % interval (too few log windows; a PTS-recovery or write-saturation "
            "trajectory, not a stationary run; ioarrive's 1-s series), so differences between single values may be "
            "noise (a write-saturation level's interval is over its one run's one-second values, not between runs)") \
        in said  # S12-1cpu 7: the WSAT table prints a level's interval over one run's seconds
    assert "write-saturation level" not in fp.interval_clause(v[~v["evidence"].str.contains("trajectory")])


def test_profile_sentence_counts_points_some_with_an_interval():
    some = frame(intervals.interval_rows(_points([(None, None), (900.0, 1100.0), (None, None)]), _fio_notes(3)))
    assert intervals.exists_counts(some) == (2, 3, ["too few log windows"])
    assert "2 of 3 storage values (a point's directions counted apart) have no 95 % interval (too few log windows), " \
        "so" in fp.interval_clause(some)  # S12-bare9 6: values, not points
    every = frame(intervals.interval_rows(_points([(900.0, 1100.0)] * 2), None))
    assert fp.interval_clause(every) == "each of the 2 storage values (a point's directions counted apart) has a 95 % " \
        "interval"
    flat = frame(intervals.interval_rows(_points([(1000.0, 1000.0), (900.0, 1100.0)]), None))  # zero width only
    assert intervals.exists_counts(flat) == (1, 2, ["an interval of zero width"])


def test_profile_sentence_without_judged_interval_rows_counts_nothing():
    empty = frame(intervals.interval_rows(_points([(None, None)]).assign(iops=float("nan")), None))
    assert set(empty["status"]) == {"unchecked"} and intervals.exists_counts(empty) is None
    assert fp.interval_clause(empty).startswith("whether the storage points have a 95 % interval was not checked")
    assert intervals.exists_counts(frame([])) is None and intervals.exists_counts(None) is None
    assert "interval columns say which values" in fp.profile_sentence("quick") and "most" not in \
        fp.profile_sentence("quick")



#: The PTS summary table's caption as the 1-CPU run's report printed it (p.6)
PTS_CAPTION = ("The other SNIA PTS tests: the result of each (single short runs: no result here has a 95 % interval; "
               "T threads, Q queue depth; HIR: the segments after an idle, not each wait's first, which follows writes)")


def _pts_table(**kw) -> str:
    """The LaTeX of the 1-CPU run's PTS summary table (its four rows, as notebook 90 sets it)."""
    return Table(pd.read_csv(DATA / "pts-summary.csv"), caption=PTS_CAPTION, font="scriptsize", **kw)._repr_latex_()


def test_a_long_tables_start_is_measured_with_its_caption_header_and_first_rows():
    # item 9: the PTS table's caption kept by \needspace{11 lines}, an estimate: its caption (2 lines), header and
    # first 2 rows (9 lines, no break among them) did not fit, TeX broke before the caption with longtable's output
    # routine on, and page 6 opened with a lone header above the caption
    tex = _pts_table(widths={"result": 0.62})
    assert r"\needspace" not in tex and r"\begin{longtable}" in tex
    start = tex.index(r"\memstorstart{%")
    measured = tex[start:tex.index(r"\memstorlongtable{")]
    assert measured.count(r"\textbf{The other SNIA PTS tests") == 2 and measured.count("HIR (host idle") == 1
    assert measured.count("XSR (cross-stimulus") == 1 and "CBW" not in measured
    assert measured.index(r"\begin{tabular}{@{}lp{0.620\linewidth}@{}}") < measured.index("HIR (host idle")
    assert "\\end{tabular}\n}\n\\smallskip" in measured and r"}\par}\nopagebreak" in measured  # then the caption
    flex = _pts_table()  # wrapped columns: xltabular, its start measured as a tabularx
    assert r"\memstorstart{%" in flex and r"\begin{tabularx}{\linewidth}" in flex.split(r"\memstorwrapped")[0]
    bare = Table(pd.read_csv(DATA / "pts-summary.csv"), font="scriptsize")._repr_latex_()  # no caption
    assert r"\memstorstart{%" in bare and r"\textbf{The other" not in bare


def _document(tables: list[str], fills: range) -> str:
    """A document with memstor.tex.j2's preamble: for each fill height (pt) a page of that much, then each table."""
    j2 = (Path(export.__file__).parent / "templates" / "memstor.tex.j2").read_text()
    packages = j2.split("((* block packages *))")[1].split("((* endblock packages *))")[0].replace("((( super() )))", "")
    margins = j2.split("((* block margins *))")[1].split("((* endblock margins *))")[0].strip()
    pages = "\n".join(r"\clearpage\noindent\rule{1pt}{" + str(h) + "pt}\\par\nText.\\par\n" + t
                      for h in fills for t in tables)
    return ("\\documentclass[10pt]{article}\\usepackage{geometry}\\usepackage{graphicx}\\usepackage{booktabs}"
            "\\usepackage{longtable}\\usepackage{array}\\usepackage{calc}\\usepackage{titling}\n" + packages
            + margins + "\n\\begin{document}\n" + pages
            + "\n\\end{document}\n")


@pytest.mark.notebook
def test_no_lone_header_above_the_caption_at_any_fill_of_the_page(tmp_path):
    # item 9, set by xelatex: the PTS table below 26 fills of its page (380-630 pt of 684); with \needspace{11
    # lines} 6 of them (the caption's block 11-20 lines below the fill) opened a page with the header alone
    if not (shutil.which("xelatex") and shutil.which("pdftotext")):
        pytest.skip("xelatex or pdftotext missing: the PDF toolchain is not installed")
    (tmp_path / "t.tex").write_text(_document([_pts_table(widths={"result": 0.62}), _pts_table()], range(380, 640, 10)))
    subprocess.run(["xelatex", "-interaction=nonstopmode", "t.tex"], cwd=tmp_path, capture_output=True, timeout=300)
    text = subprocess.run(["pdftotext", "-layout", str(tmp_path / "t.pdf"), "-"], capture_output=True, text=True,
                          check=True).stdout
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    captions = [i for i, ln in enumerate(lines) if ln.startswith("The other SNIA PTS tests")]
    assert len(captions) == 52
    for i in captions:  # each caption: its header right below it, never a header right above it
        assert re.fullmatch(r"test\s+result", lines[i + 2]) and not re.fullmatch(r"test\s+result", lines[i - 1]), \
            lines[i - 2:i + 3]


@pytest.mark.notebook
def test_a_table_after_lines_carried_over_the_page_starts_on_that_page(tmp_path):
    """Session 18, the loop report at 11 pages: a paragraph ran two lines past the page, TeX had not broken the page
    yet when the PTS table's start was measured (page total 722 pt against a goal of 708), so \\memstorstart found no
    room, took a new page, and the two lines stood alone on a page of their own. Now a page past its goal leaves what
    a fresh page holds less the overflow. Set by xelatex over fills from 560 to 690 pt: no page holds only carried
    lines before a page opening with the table (the macro's old rule, from the template before, does: the other
    side)."""
    if not (shutil.which("xelatex") and shutil.which("pdftotext")):
        pytest.skip("xelatex or pdftotext missing: the PDF toolchain is not installed")
    words = " ".join(["Carried"] * 160)

    def lone_pages(doc: str) -> int:
        pages = [p for p in _set(tmp_path, doc).split("\f")]
        return sum(1 for i, p in enumerate(pages[:-1]) if 0 < len([ln for ln in p.splitlines() if ln.strip()]) <= 4
                   and "Carried" in p and "The other SNIA PTS tests" in pages[i + 1].split("\n", 3)[0] +
                   pages[i + 1].split("\n", 3)[1])

    doc = _document([_pts_table(widths={"result": 0.62})], range(560, 700, 10)).replace("Text.", words)
    assert lone_pages(doc) == 0
    old = doc.replace(r"\ifdim\dimen@<\z@\advance\dimen@\textheight\fi", "")
    assert old != doc and lone_pages(old) > 0


def _set(tmp_path: Path, doc: str) -> str:
    """pdftotext's text of ``doc`` set by xelatex in tmp_path."""
    (tmp_path / "t.tex").write_text(doc)
    subprocess.run(["xelatex", "-interaction=nonstopmode", "t.tex"], cwd=tmp_path, capture_output=True, timeout=300)
    return subprocess.run(["pdftotext", "-layout", str(tmp_path / "t.pdf"), "-"], capture_output=True, text=True,
                          check=True).stdout
