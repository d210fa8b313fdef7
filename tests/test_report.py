"""Report export: the synthesis notebook executed with papermill on real data (an imported fixture
dataset + this machine), exported to HTML (offline) and PDF (xelatex + pandoc), checked as text."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from memstor import cli
from memstor.analysis import synthesis as syn
from memstor.report import export as report
from memstor.report.text import fmt_number
from memstor.report.text.spec import spec_table

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "90-synthesis.ipynb"
SPECS = ROOT / "data" / "specs"
KERNEL = "memstor"


# ------------------------------------------------------------------------------- fast: tables, metadata


def test_table_latex_escapes_wraps_and_repeats_the_header():
    df = pd.DataFrame({"host": ["a_b"], "value (%)": [12.5], "IOPS": [130728.74],
                       "long text": ["x " * 80 + "\nsecond line & more"]})
    tex = report.Table(df, caption="Spec_1 & co")._repr_latex_()
    assert r"a\_b" in tex and r"\textbf{(\%)}" in tex and r"Spec\_1 \& co" in tex and r"second line \& more" in tex
    # wrapped text: a tabularx exactly the line wide (never past the margin, never scaled below its font)
    assert r"\begin{tabularx}{\linewidth}" in tex and "adjustbox" not in tex and r"\memstortable" not in tex
    colspec = re.search(r"\\begin\{tabularx\}\{\\linewidth\}\{@\{\}(.*)@\{\}\}", tex).group(1)
    assert colspec.startswith("lrr") and colspec.endswith(r"\hsize=1.000\hsize}X")  # numbers right, text wrapped
    narrow = report.Table(df[["host", "IOPS"]], caption="narrow")._repr_latex_()
    assert r"\memstortable{narrow}{%" in narrow and r"\begin{tabular}{@{}lr@{}}" in narrow  # in the width guard
    assert r"\newline second line" in tex and "130,729" in tex
    long = report.Table(pd.concat([df] * 40, ignore_index=True), caption="long")._repr_latex_()
    assert r"\begin{xltabular}{\linewidth}" in long and long.count(r"\endhead") == 1 and r"\endfirsthead" in long
    html = report.Table(df)._repr_html_()
    assert '<table class="memstor">' in html and "<br>second line &amp; more" in html
    assert '<td class="num">130,729</td>' in html


def test_tables_of_several_rows_break_across_pages_with_the_header_repeated():
    """A table of more than LONG_ROWS printed lines may break between rows (a box that cannot split left the rest of
    a page empty), never within its first or last KEEP_ROWS rows; one as wide as its cells is measured first and
    scaled into the line (one box) only when wider than it."""
    df = pd.DataFrame({"host": [f"h{i}" for i in range(12)], "IOPS": [1000.0 * i for i in range(12)]})
    tex = report.Table(df, caption="twelve")._repr_latex_()
    assert r"\memstorlongtable{twelve}{%" in tex and r"\begin{longtable}{@{}lr@{}}" in tex
    assert tex.count(r"\endhead") == 1 and r"\endfirsthead" in tex
    rows = [ln for ln in tex.split(r"\begin{longtable}")[1].splitlines() if ln.startswith("h")]
    assert len(rows) == 12
    kept = [ln.endswith(r"\tabularnewline*") for ln in rows]  # no page break after these rows
    assert kept == [True] + [False] * 9 + [True, True]
    short = report.Table(df.head(3), caption="three")._repr_latex_()
    assert r"\memstortable{three}" in short and "longtable" not in short


def test_pdf_copy_leaves_out_the_appendix_with_one_line_per_run_of_headings():
    import nbformat

    nb = nbformat.v4.new_notebook()
    tag = {"tags": ["appendix"]}
    nb.cells = [nbformat.v4.new_markdown_cell("# Shown"),
                nbformat.v4.new_markdown_cell("#### First (table)", metadata=tag),
                nbformat.v4.new_code_cell("x = 1", metadata=tag),
                nbformat.v4.new_code_cell("pass"),  # no output: shows nothing, the run goes on
                nbformat.v4.new_markdown_cell("## Second", metadata=tag),
                nbformat.v4.new_markdown_cell("Shown too"),
                nbformat.v4.new_markdown_cell("## Third", metadata=tag)]
    md = [c.source for c in report.without_appendix(nb, "r.html").cells if c.cell_type == "markdown"]
    assert md[0] == "# Shown" and md[2] == "Shown too"
    assert "*First (table); Second: in the HTML report (r.html).*" in md[1]
    assert "*Third: in the HTML report (r.html).*" in md[3] and len(md) == 4


def test_report_metadata_from_papermill_parameters():
    nb = nbformat.v4.new_notebook()
    nb.metadata["title"] = "Default title"
    nb.metadata["papermill"] = {"parameters": {"author": "Ada Lovelace, Alan Turing"},
                                "end_time": "2025-03-04T05:06:07.000000"}
    md = report.report_metadata(nb)
    assert md == {"title": "Default title", "authors": [{"name": "Ada Lovelace"}, {"name": "Alan Turing"}],
                  "date": "2025-03-04"}
    nb.metadata["papermill"]["parameters"].update(title="T", date="2024-12-31")
    assert report.report_metadata(nb)["title"] == "T" and report.report_metadata(nb)["date"] == "2024-12-31"


def test_cli_usage_errors_are_one_line(tmp_path, capsys):
    assert cli.main(["report", str(tmp_path / "none.ipynb"), str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("memstor: ") and "no such notebook" in err and "\n" not in err


# ------------------------------------------------------------------- slow: papermill + nbconvert + PDF


@pytest.fixture(scope="module")
def executed(synth_data, tmp_path_factory) -> tuple[Path, Path]:
    """(executed notebook, data root): papermill run of 90-synthesis on fixture + this-machine data (the
    session's conftest.synth_data, test_synthesis.build_data measured once; the notebook only reads it)."""
    import papermill as pm
    from jupyter_client.kernelspec import KernelSpecManager

    if KERNEL not in KernelSpecManager().find_kernel_specs():
        pytest.fail(f"jupyter kernel '{KERNEL}' missing: .venv/bin/python -m ipykernel install --sys-prefix "
                    f"--name {KERNEL}")
    root = tmp_path_factory.mktemp("report")
    data = synth_data
    out = root / "90-synthesis.ipynb"
    pm.execute_notebook(str(NOTEBOOK), str(out), kernel_name=KERNEL, cwd=str(NOTEBOOK.parent),
                        parameters={"data_dir": str(data), "specs_dir": str(SPECS), "author": "Test Author",
                                    "date": "2025-01-02", "title": "Synthesis test report"},
                        progress_bar=False)
    return out, data


def _norm(text: str) -> str:
    return " ".join(text.replace("\u00ad", "").split())


def test_notebook_is_committed_without_outputs_and_has_a_parameters_cell():
    nb = nbformat.read(str(NOTEBOOK), as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code)
    params = [c for c in code if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1
    src = params[0].source
    for line in ('data_dir: str = "../data"  #', 'specs_dir: str = "../data/specs"  #', "title: str =",
                 "author: str =", "date: str ="):
        assert line in src


@pytest.fixture(scope="module")
def exported(executed, tmp_path_factory):
    """report.export of the executed synthesis notebook (HTML, and the PDF when the toolchain is here)."""
    nb_path, _ = executed
    return report.export(nb_path, tmp_path_factory.mktemp("report") / "report")


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.fio
def test_html_report_from_the_executed_notebook(executed, exported):
    assert_every_figure_has_a_numbered_caption(nbformat.read(executed[0], as_version=4))
    res = exported
    html = res["html"].read_text(encoding="utf-8")
    # offline: no script or stylesheet from the network, figures embedded
    assert not re.search(r"<script[^>]+src=", html) and not re.search(r"<link[^>]+href=\"?https?:", html)
    assert "<script" not in html
    assert html.count("data:image/png;base64,") >= 5
    assert "Synthesis test report" in html and "Test Author" in html and "2025-01-02" in html
    for needle in ("Measured vs spec", "conditions", "differs: span, state, target",
                   "N* = X_max × R_min", "aialra-ssd", "thismachine", "inject delay"):
        assert needle in html
    assert "def " not in html and "import " not in html          # code hidden
    assert len(res["figures"]) >= 5 and all(p.stat().st_size > 5000 for p in res["figures"])


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.fio
def test_pdf_report_from_the_executed_notebook(executed, exported):
    missing = report.pdf_tools_missing()
    if missing:
        assert exported["pdf"] is None and "texlive-xetex" in exported["message"]
        pytest.skip(f"PDF toolchain missing ({', '.join(missing)}): scripts/install-system-deps installs it")
    _, data = executed
    S = syn.synthesise(data, SPECS)
    pdf = exported["pdf"]
    assert pdf is not None and pdf.stat().st_size > 50_000
    pdf_text = _norm(subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True,
                                check=True).stdout)
    assert "Synthesis test report" in pdf_text and "Test Author" in pdf_text and "2025-01-02" in pdf_text
    # spec comparison table: headers, the headline row with its numbers, conditions, flag
    assert "Measured vs spec" in pdf_text
    for header in ("measured", "spec", "ratio", "measured at", "flag"):
        assert header in pdf_text
    head = S.spec[(S.spec["headline"]) & (S.spec["host"] == "thismachine")].iloc[0]
    shown = spec_table(S.spec[S.spec["host"] == "thismachine"], compact=True)
    shown = shown[S.spec.loc[shown.index, "headline"].astype(bool)].iloc[0]  # as the PDF prints the headline row
    assert fmt_number(head["measured"]) in pdf_text and "130,000" in pdf_text and _norm(shown["ratio"]) in pdf_text
    assert (shown["ratio"] == f"{head['ratio']:.2f}") == bool(head.get("comparable", True))  # else '– (not comparable)'
    assert "QD32x4=128, 4 KiB [spec point]" in pdf_text  # the PDF's compact table; every condition in the HTML
    html_text = _norm(re.sub(r"<[^>]+>", " ", exported["html"].read_text(encoding="utf-8")))
    assert "measured: QD32x4=128, 4 KiB, 16 MiB file span, fresh, file on a filesystem" in html_text
    assert "spec: QD32x4=128, 4 KiB, full device, steady state, raw device, decimal MB" in html_text
    assert "differs: span, state, target" in pdf_text and "differs: outstanding, span?, state?, target?" in pdf_text
    # the knee N* with its inputs
    k = S.knees.set_index(["host", "rw"]).loc[("aialra-ssd", "randread")]
    assert (f"the two-asymptote fit gives N* = X_fit × R_min = {fmt_number(k['X_max_fit_iops'])} IOPS × "
            f"{fmt_number(k['R_min_fit_us'])} µs = ") in pdf_text
    # the memory curve (issue 16: saturation and R0 with its 95 % interval; no R², no fitted knee or peak
    # beyond the measured plateau): one paragraph per curve, in the HTML's appendix; the PDF points to it
    m = S.mem.iloc[0]
    assert f"a plateau at {m['b_sat_MBps']:,.0f} MB/s over {int(m['plateau_points'])} of 19 points" in html_text
    assert f"R0 = {m['r0_ns']:,.1f} ns [{m['r0_ns_ci_low']:,.1f}, {m['r0_ns_ci_high']:,.1f}]" in html_text
    assert ("Every latency–throughput curve: the model and its intervals: in the HTML report "
            "(report.html)") in pdf_text
    assert "Every latency–throughput curve: the model and its intervals" in html_text
    # no raw markdown or LaTeX leaked into the PDF, no raw missing values or carets
    for leak in ("\\begin", "\\textbf", "**", "```", "\\newline", "10^6", "10ˆ6"):
        assert leak not in pdf_text
    assert not re.search(r"\b(None|nan|NaN)\b", pdf_text), re.search(r".{60}\b(None|nan|NaN)\b.{20}", pdf_text)
    # the first page: what the run can tell, before the data
    assert pdf_text.index("What this run can tell") < pdf_text.index("Systems under test")
    for needle in ("Findings (thismachine)", "What to run next (thismachine)", "checks of this run's preconditions",
                   "Conclusion"):
        assert needle.replace("'", "’") in pdf_text or needle in pdf_text, needle
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
    assert int(re.search(r"Pages:\s+(\d+)", info).group(1)) >= 5
    # the layout: xelatex's log kept beside the PDF; no text past the margin (overfull > 1 pt), no table
    # scaled below its font (8 pt at the smallest: scriptsize of the 11 pt class)
    log = pdf.with_suffix(".latex.log").read_text()
    assert "Output written on notebook.pdf" in log
    problems = report.latex_problems(log)
    assert problems == [], "\n".join(problems)


def test_latex_problems_reads_overfull_boxes_and_shrunk_tables():
    log = ("Overfull \\hbox (0.5pt too wide) in paragraph at lines 1--2\n"
           "Overfull \\hbox (12.3pt too wide) in alignment at lines 5--9\n"
           "memstor: table wider than the line (500.0pt > 469.0pt): Measured vs spec\n")
    assert report.latex_problems(log) == ["overfull box 12.3 pt in alignment at lines 5--9",
                                          "memstor: table wider than the line (500.0pt > 469.0pt): Measured vs spec"]


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.fio
def test_missing_pdf_toolchain_still_builds_html(executed, tmp_path, monkeypatch):
    nb_path, _ = executed
    bare = tmp_path / "bin"
    bare.mkdir()
    monkeypatch.setenv("PATH", str(bare))
    assert set(report.pdf_tools_missing()) == {"xelatex", "pandoc"}
    res = report.export(nb_path, tmp_path / "out")
    assert res["html"].is_file() and res["pdf"] is None
    assert "xelatex and pandoc not found" in res["message"]
    assert "apt-get install texlive-xetex texlive-fonts-recommended texlive-plain-generic pandoc" in res["message"]
    assert not (tmp_path / "out" / "report.pdf").exists()


def test_pdftotext_available_for_the_pdf_checks():
    if not shutil.which("xelatex"):
        pytest.skip("xelatex missing: no PDF is built, so pdftotext is not needed")
    assert shutil.which("pdftotext"), "poppler-utils (pdftotext) is needed to check the PDF"


IMPORTS = {  # data set -> [(device folder, --kind, fixture path under tests/data/real)]
    "storage-only": [("aialra", "fio", "AIALRA-0__ECSE-4320-Advanced-Computer-Systems/Project3 SSD"),
                     ("chris", "fio", "ChrisLvvvv__ECSE_4320_Advanced-Computer-Systems/Project3"),
                     ("mmn", "fio", "MMN0001__Repo-for-Advanced-Computer-Systems/Project3"),
                     ("fiumad", "fio", "fiumad__Advanced-Computer-Systems/proj3")],
    "memory-only": [("vsc", "mlc", "hpcleuven__VscDocumentation"),
                    ("fiumad", "mlc", "fiumad__Advanced-Computer-Systems/proj1")],
    "one-experiment": [("chris", "fio", "ChrisLvvvv__ECSE_4320_Advanced-Computer-Systems/Project3/results/qd_sweep.json")],
}
MISSING = {"storage-only": ["No idle-latency, loaded-latency or peak-bandwidth measurement in this data"],
           "memory-only": ["Measured vs spec: none", "Little's law", "Knee of the queue-depth sweep", "none —"],
           "one-experiment": ["No idle-latency, loaded-latency or peak-bandwidth measurement in this data"]}


def assert_every_figure_has_a_numbered_caption(nb) -> None:
    """Every figure of the executed notebook is followed by '*Figure k.* caption', k = 1, 2, ... in order."""
    seq = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            data = o.get("data", {})
            if "image/png" in data:
                seq.append("fig")
            elif m := re.match(r"\*Figure (\d+)\.\* \S", data.get("text/markdown", "")):
                seq.append(int(m.group(1)))
    figures = seq.count("fig")
    assert seq == [x for k in range(1, figures + 1) for x in ("fig", k)], seq


@pytest.mark.slow
@pytest.mark.parametrize("name", list(IMPORTS))
@pytest.mark.notebook
def test_report_builds_for_any_imported_data_set(name, real, tmp_path):
    """Storage-only, memory-only and one-experiment imported data: HTML and PDF build, every section
    says what is missing instead of failing (no zero-column table reaches LaTeX)."""
    import papermill as pm

    data = tmp_path / "data"
    for device, kind, rel in IMPORTS[name]:
        assert cli.main(["parse", "--kind", kind, str(real / rel), "-o",
                         str(data / "processed" / device / f"{kind}.csv")]) == 0
    out = tmp_path / "90-synthesis.ipynb"
    pm.execute_notebook(str(NOTEBOOK), str(out), kernel_name=KERNEL, cwd=str(NOTEBOOK.parent), progress_bar=False,
                        parameters={"data_dir": str(data), "specs_dir": str(SPECS),
                                    "tables_dir": str(tmp_path / "tables")})
    assert cli.main(["report", str(out), str(tmp_path / "report")]) == 0
    assert_every_figure_has_a_numbered_caption(nbformat.read(out, as_version=4))
    html = (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    assert "Fleet runs" not in html  # a section only when there is something to show
    for needle in MISSING[name]:
        assert needle.replace("'", "&#x27;") in html or needle in html, needle
    assert sorted(p.name for p in (tmp_path / "tables").glob("*.csv")) == sorted(
        ["headline.csv", "spec_comparison.csv", "littles_law.csv", "knee.csv", "adaptive_grid.csv", "memory_fit.csv",
         "memory_pacing.csv", "memory_sections.csv", "cluster.csv", "validity.csv", "memory_figures.csv",
         "wsat.csv", "wsat_cliffs.csv", "thermal.csv", "ceilings.csv", "above_ceiling.csv", "cache_levels.csv",
         "working_set.csv", "mlp.csv", "memory_read_ratio_fit.csv", "memory_reference.csv", "hir.csv", "xsr.csv", "cbw.csv", "dirth.csv", "dirth_histograms.csv",
         "storage_fit.csv",
         "steady_state.csv", "drive.csv", "interface.csv",
         "load_latency.csv", "slo.csv", "load_latency_models.csv",
         "summary.csv"])
    if report.pdf_tools_missing():
        pytest.skip("PDF toolchain missing: the HTML half was checked; scripts/install-system-deps installs it")
    assert (tmp_path / "report" / "report.pdf").stat().st_size > 20_000
    problems = report.latex_problems((tmp_path / "report" / "report.latex.log").read_text())
    assert problems == [], "\n".join(problems)  # no text past the margin, no table below its font
    if shutil.which("pdfinfo"):  # poppler-utils: the quick report's PDF stays within 10 pages (issue 38 item 5)
        info = subprocess.run(["pdfinfo", str(tmp_path / "report" / "report.pdf")], capture_output=True, text=True)
        pages = int(re.search(r"^Pages:\s+(\d+)", info.stdout, re.M).group(1))
        assert pages <= 10, f"{name}: {pages} pages"
