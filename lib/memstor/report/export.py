"""Export an executed notebook as the report: ``report.html`` (offline) and ``report.pdf`` (LaTeX route).

Usage (``make report`` runs these)::

    memstor report build/notebooks/90-synthesis.ipynb report/            # report.html + report.pdf
    memstor report build/notebooks/20-fio-block-size.ipynb report/ --name 20-fio-block-size --html-only

Both go through nbconvert with the code hidden (``--no-input``): the HTML through the ``lab`` template
without any CDN script (no require.js, MathJax or mermaid; CSS inlined, figures embedded as base64
PNG), the PDF through nbconvert's LaTeX route (pandoc for markdown, xelatex for the PDF). Title, author
and date come from the notebook metadata; papermill parameters ``title``, ``author`` and ``date`` of the
executed notebook override them (an empty date = the day the notebook ran). When xelatex or pandoc is
missing the HTML is still written and the message says how to get the PDF.

:class:`Table` is the display helper of the report notebooks: a DataFrame with an HTML and a LaTeX
rendering (wrapped columns, repeated header, small font) so wide tables never overflow the page.
"""

from __future__ import annotations

import base64
import copy
import datetime as _dt
import html
import math
import re
import shutil
from importlib import resources
from pathlib import Path

from memstor.core.errors import MemstorError, UsageError, first_line
from memstor.core.files import atomic_write
from memstor.core.fmt import fmt_number
from memstor.report.pdf_cut import (  # noqa: F401 (without_appendix: re-exported for the tests and notebooks)
    APPENDIX_TAG,
    SPILL_TAG,
    budget,
    pdf_pages,
    without_appendix,
)

PDF_TOOLS = ("xelatex", "pandoc")
PDF_INSTALL = ("sudo apt-get install texlive-xetex texlive-fonts-recommended texlive-plain-generic pandoc "
               "(Fedora: sudo dnf install texlive-xetex texlive-collection-fontsrecommended pandoc; "
               "macOS: brew install pandoc && brew install --cask mactex-no-gui)")

# --------------------------------------------------------------------------------------- templates

#: The cell tag that keeps a notebook cell out of the exported report (the synthesis notebook's explorer,
#: memstor.report.explore).
EXPLORE_TAG = "explore"
#: memstor's two nbconvert templates (package data): memstor.html.j2 (offline HTML on the lab template)
#: and memstor.tex.j2 (the LaTeX route for the PDF).
TEMPLATES = Path(str(resources.files("memstor.report") / "templates"))


# ------------------------------------------------------------------------------------------ tables


def _cell_text(v) -> str:
    """A table cell as text: numbers formatted (thousands separators), booleans yes/no, missing '–'."""
    if v is None:
        return "–"
    if isinstance(v, bool) or type(v).__name__ == "bool_":
        return "yes" if v else "no"
    if isinstance(v, (int, float)) or type(v).__module__ == "numpy":
        try:
            f = float(v)
        except (TypeError, ValueError):
            return str(v)
        if math.isnan(f):
            return "–"
        if float(f).is_integer() and abs(f) < 1e15 and not isinstance(v, float):
            return f"{int(f):,}" if abs(f) >= 10000 else str(int(f))
        return fmt_number(f)
    return str(v)


def _wrap_words(text: str, width: int) -> list:
    """Words of `text` in lines of at most `width` characters (a longer word gets its own line)."""
    lines: list = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines or [""]


_NUM_RE = re.compile(r"^[–\-+]?[\d,]*\.?\d+(e[+-]?\d+)?%?$|^–$")
_LATEX_ESC = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
              "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}"}


def latex_escape(text: str) -> str:
    """Text safe for LaTeX (special characters escaped; Unicode left to xelatex)."""
    return "".join(_LATEX_ESC.get(c, c) for c in text)


#: Characters of table text per line width (6.7 in) by font: digits and bold headers of the 10 pt class
#: (memstor.tex.j2), scaled from the 11 pt class's measured widths by the font sizes (scriptsize 8 -> 7 pt,
#: footnotesize 9 -> 8, small 10 -> 9): there an 11-column knee table of 135 estimated characters at
#: scriptsize was 496 pt on a 484 pt line, so about 118 fit (an estimate only shares the width out; tabularx
#: columns make the line exact).
_BUDGET = {"scriptsize": 135, "footnotesize": 110, "small": 95}


def _p_width(spec: str) -> float:
    """w of a ``p{w\\linewidth}`` column spec."""
    m = re.match(r"p\{([\d.]+)\\linewidth\}", spec)
    if m is None:
        raise ValueError(f"not a p column: {spec}")
    return float(m.group(1))


def _x_columns(specs: list, fixed: frozenset[int] | set[int] = frozenset()) -> list:
    """Column specs with the wrapped ``p{w\\linewidth}`` columns as tabularx ``X`` columns sharing the
    width left over in the proportions of w (``\\hsize`` factors averaging 1, as tabularx requires); the
    columns in `fixed` (widths the caller asked for) keep their ``p`` width, raggedright."""
    flex = [i for i, sp in enumerate(specs) if sp.startswith("p") and i not in fixed]
    widths = {i: _p_width(specs[i]) for i in flex}
    if not flex:
        return [r">{\raggedright\arraybackslash}" + sp if sp.startswith("p") else sp for sp in specs]
    mean = sum(widths.values()) / len(widths)
    return [r">{\raggedright\arraybackslash\hsize=" + f"{widths[i] / mean:.3f}" + r"\hsize}X" if i in widths
            else r">{\raggedright\arraybackslash}" + sp if sp.startswith("p") else sp for i, sp in enumerate(specs)]


class Table:
    """A DataFrame for the report: HTML for the browser, a longtable for the PDF (never overflowing).

    widths: optional {column: fraction of the line width} for wrapped columns; other text columns are
    sized automatically, numeric columns are right-aligned. caption: a bold line above the table.
    Cells may hold line breaks ('\\n'). font: LaTeX size (footnotesize, scriptsize, small).
    """

    #: Tables longer than this many printed lines, with at least BREAK_MIN_ROWS rows, may break across pages
    #: (longtable / xltabular, the header repeated on each page; never after the first or before the last
    #: KEEP_ROWS rows); shorter ones are one box (a tabular scaled down to the line width if needed): a box
    #: that cannot split leaves the rest of a page empty. A long table that fits where it starts is set as one
    #: box too (memstor.tex.j2, \\memstorfits: a longtable beside a float overfills the page).
    LONG_ROWS = 8
    KEEP_ROWS = 2
    #: A long table's caption starts a new page unless the caption, the header and the first KEEP_ROWS rows (where
    #: no break may fall) fit below what the page holds, as set (:meth:`_long_start`; not more: asking for more
    #: left a third of a page empty above the spec table and the PTS table of the quick bare report)
    BREAK_MIN_ROWS = 2 * KEEP_ROWS

    def __init__(self, df, caption: str = "", widths: dict | None = None, font: str = "footnotesize",
                 max_rows: int | None = None, empty: str = "nothing in the data for this table"):
        self.df = df
        self.empty = empty  # said in place of a table without rows (never an empty grid)
        self.caption = caption
        self.widths = widths or {}
        self.font = font
        self.max_rows = max_rows

    def _cells(self) -> tuple[list, list]:
        """(header, rows) as text."""
        df = self.df if self.max_rows is None else self.df.head(self.max_rows)
        header = [str(c) for c in df.columns]
        rows = [[_cell_text(v) for v in rec] for rec in df.itertuples(index=False, name=None)]
        return header, rows

    def _numeric(self, rows: list, j: int) -> bool:
        """Column j holds only numbers (or '–')."""
        vals = [r[j] for r in rows]
        return bool(vals) and all(_NUM_RE.match(v.replace(" ", "")) for v in vals) and any(v != "–" for v in vals)

    @property
    def _is_empty(self) -> bool:
        """No rows or no columns: the table is said as a sentence, never drawn as an empty grid."""
        return self.df is None or len(self.df) == 0 or len(self.df.columns) == 0

    def _empty_text(self) -> str:
        """'Caption: none — why' for a table without rows; 'Caption: not determined ...' where the why says its rows
        could not be found (R-loop p5: 'none — no run could show one' read as 'no cliffs')."""
        lead = "" if self.empty.startswith("not determined") else "none — "
        return f"{self.caption + ': ' if self.caption else ''}{lead}{self.empty}."

    def _repr_html_(self) -> str:
        if self._is_empty:
            return f'<p class="memstor-empty"><i>{html.escape(self._empty_text())}</i></p>'
        header, rows = self._cells()
        num = [self._numeric(rows, j) for j in range(len(header))]
        out = ['<table class="memstor">']
        if self.caption:
            out.append(f"<caption>{html.escape(self.caption)}</caption>")
        out.append("<thead><tr>" + "".join(f'<th class="num">{html.escape(h)}</th>' if num[j] else
                                           f"<th>{html.escape(h)}</th>" for j, h in enumerate(header))
                   + "</tr></thead><tbody>")
        for r in rows:
            tds = "".join(
                f'<td class="num">{html.escape(c)}</td>' if num[j] else
                f"<td>{html.escape(c).replace(chr(10), '<br>')}</td>" for j, c in enumerate(r))
            out.append(f"<tr>{tds}</tr>")
        out.append("</tbody></table>")
        if self.max_rows is not None and len(self.df) > self.max_rows:
            out.append(f"<p><i>{len(self.df) - self.max_rows} more rows not shown.</i></p>")
        return "\n".join(out)

    def _colspec(self, header: list, rows: list) -> list:
        """LaTeX column specs: r for numbers, l when everything fits, p{w} for the wide text columns."""
        budget = _BUDGET.get(self.font, _BUDGET["footnotesize"])
        budget -= 3 * len(header)
        natural = []
        for j, h in enumerate(header):
            lines = [len(part) for r in rows for part in r[j].split("\n")] or [0]
            natural.append(max(max(lines), max(len(w) for w in h.split()) if h.split() else 1))
        num = [self._numeric(rows, j) for j in range(len(header))]
        multiline = [any("\n" in r[j] for r in rows) for j in range(len(header))]
        self._natural = natural
        specs: list[str | None] = [None] * len(header)
        fixed = 0.0
        full = budget + 3 * len(header)
        for j, h in enumerate(header):
            if h in self.widths:
                longest = max([len(w) for r in rows for w in r[j].split()] + [1])
                frac = max(self.widths[h], (1.2 * longest + 1) / full)      # never narrower than a word
                specs[j] = f"p{{{frac:.3f}\\linewidth}}"
                fixed += frac * budget
        rest = [j for j in range(len(header)) if specs[j] is None]
        if sum(natural[j] for j in rest) + fixed <= budget and not any(multiline[j] for j in rest):
            for j in rest:
                specs[j] = "r" if num[j] else "l"
            return specs
        small = [j for j in rest if num[j] or (natural[j] <= 14 and not multiline[j])]

        def longest_word(j: int) -> int:  # header words are bold: about 15 % wider ("preconditioning" ran over)
            return max([len(w) for r in rows for w in r[j].split()]
                       + [math.ceil(1.15 * len(w)) for w in header[j].split()] + [1])

        need = sum(1.2 * longest_word(j) + 1 for j in rest if j not in small)
        if fixed + sum(natural[j] for j in small) + need > budget:
            # the unwrapped columns leave the wrapped ones less than their longest words (a 13-column
            # steady-state table overran by up to 28 pt): short text columns of several words wrap too
            # (a column of single words, a host name or a unit, cannot wrap: it stays as wide as they are)
            small = [j for j in small if num[j] or natural[j] <= longest_word(j)]
        for j in small:
            specs[j] = "r" if num[j] else "l"
        wide = [j for j in rest if j not in small]
        room = max(budget - fixed - sum(natural[j] for j in small), 10 * max(len(wide), 1))
        total = sum(math.sqrt(natural[j]) for j in wide) or 1.0
        for j in wide:
            longest = longest_word(j)
            chars = room * math.sqrt(natural[j]) / total
            chars = min(max(chars, 1.2 * longest + 1), 1.2 * natural[j] + 2)   # never narrower than a word
            specs[j] = f"p{{{max(chars / full, 0.05):.3f}\\linewidth}}"
        return specs

    def _est_lines(self, rows: list, specs: list) -> int:
        """Estimated printed lines of the table body (wrapped p-columns count several lines)."""
        full = _BUDGET.get(self.font, _BUDGET["footnotesize"])
        total = 0
        for r in rows:
            lines = 1
            for cell, spec in zip(r, specs):
                m = re.match(r"p\{([\d.]+)\\linewidth\}", spec)
                width = float(m.group(1)) * full if m else 10**6
                n = sum(max(1, math.ceil(len(part) / max(width * 0.9, 1))) for part in cell.split("\n"))
                lines = max(lines, n)
            total += lines
        return total

    def _long_start(self, head: str, body: list[str], cols: str, flex: bool) -> list[str]:
        r"""A long table's caption (a paragraph, not a one-line header cell: a long caption wraps), after
        memstor.tex.j2's \memstorstart: the caption, the header and the first KEEP_ROWS rows (rows ended by \\*: no
        break among them) set as one box and measured; where the box does not fit below what the page holds, a new
        page, so the first break falls inside the table or after it. (A caption kept by needspace with an estimate in
        normal lines let TeX break BEFORE the caption while longtable's output routine was on, which puts its
        header on the new page: the 1-CPU run's PTS table, p.6, opened with a lone header above its caption,
        seventh read S11-1cpu item 9.)"""
        cap = [r"\smallskip\noindent{\normalsize\interlinepenalty=10000\textbf{" + latex_escape(self.caption)
               + r"}\par}"] if self.caption else []
        env, width = ("tabularx", r"{\linewidth}") if flex else ("tabular", "")
        first = [r"\begin{" + env + "}" + width + "{" + cols + "}", r"\toprule", head, r"\midrule",
                 *body[:self.KEEP_ROWS], r"\end{" + env + "}"]
        return [r"\par\memstorstart{%", *cap, *first, "}", *(c + r"\nopagebreak" for c in cap)]

    def _repr_latex_(self) -> str:
        if self._is_empty:
            return "\n\\emph{" + latex_escape(self._empty_text()) + "}\n"
        header, rows = self._cells()
        specs = self._colspec(header, rows)
        wrap = [s.startswith("p") for s in specs]

        def cell(text: str, j: int, head: bool = False) -> str:
            if head and not wrap[j]:
                lines = _wrap_words(text, max(self._natural[j], 1))
                t = r"\\".join(r"\textbf{" + latex_escape(x) + "}" for x in lines)
                align = "r" if specs[j] == "r" else "l"
                return t if len(lines) == 1 else r"\begin{tabular}[b]{@{}" + align + r"@{}}" + t + r"\end{tabular}"
            t = latex_escape(text)
            if wrap[j]:
                t = r"\raggedright " + t.replace("\n", r"\newline ")
            elif "\n" in t:
                t = t.replace("\n", " ")
            return r"\textbf{" + t + "}" if head else t

        # words may hyphenate (TeX leaves words with digits, units and identifiers whole): a long word in a
        # narrow wrapped column breaks instead of running past it
        lines = ["\\begingroup\\" + self.font,
                 # 9 or more columns: 3 pt gaps (the spec comparison's 9 columns overran the line by 7 pt at 4 pt)
                 r"\setlength{\tabcolsep}{" + ("3pt" if len(header) >= 9 else "4pt") + "}"]
        head = " & ".join(cell(h, j, head=True) for j, h in enumerate(header)) + r" \tabularnewline"
        body = [" & ".join(cell(c, j) for j, c in enumerate(r)) + r" \tabularnewline" for r in rows]
        long = self._est_lines(rows, specs) > self.LONG_ROWS and len(rows) >= self.BREAK_MIN_ROWS
        # a page break may fall between rows, never within the first or the last KEEP_ROWS (rows ended by \\*)
        keep = self.KEEP_ROWS
        broken = [r + ("*" if i < keep - 1 or i >= len(body) - keep else "") for i, r in enumerate(body)]
        asked = {j for j, h in enumerate(header) if h in self.widths}
        flex = any(sp.startswith("p") and j not in asked for j, sp in enumerate(specs))
        cols = "@{}" + "".join(_x_columns(specs, asked) if flex else specs) + "@{}"
        # wrapped columns: tabularx / xltabular, exactly the line width (the estimate only shares it out);
        # else a tabular as wide as its cells, in memstor.tex.j2's guard (the log says if it was too wide)
        env = ("xltabular" if long else "tabularx") if flex else ("longtable" if long else "tabular")
        width = r"{\linewidth}" if flex else ""
        if not long:
            if self.caption:
                lines.append(r"\par\smallskip\noindent{\normalsize\interlinepenalty=10000\textbf{"  # caption: one piece
                             + latex_escape(self.caption) + r"}\par}\nopagebreak\smallskip")
            table = [r"\begin{" + env + "}" + width + "{" + cols + "}", r"\toprule", head, r"\midrule", *body,
                     r"\bottomrule", r"\end{" + env + "}"]
            if flex:
                lines += [r"\noindent", *table, r"\par\medskip"]
            else:
                name = re.sub(r"[^A-Za-z0-9 ,.:()=*/+-]", "", self.caption or " ".join(header))[:60]
                lines += [r"\memstortable{" + name + "}{%", *table[:-1], table[-1] + r"}\par\medskip"]
        else:
            lines += self._long_start(head, body, cols, flex)
            longtable = [r"\begin{" + env + "}" + width + "{" + cols + "}", r"\toprule", head, r"\midrule",
                         r"\endfirsthead", r"\toprule", head, r"\midrule", r"\endhead", r"\bottomrule",
                         r"\endlastfoot", *broken, r"\end{" + env + "}"]
            if flex:  # set as one box where it fits on the page (memstor.tex.j2: longtable's overrun beside floats)
                tabularx = [r"\begin{tabularx}{\linewidth}{" + cols + "}", r"\toprule", head, r"\midrule", *body,
                            r"\bottomrule", r"\end{tabularx}"]
                lines += [r"\memstorwrapped{%", *tabularx, "}{%", *longtable, "}"]
            else:  # as wide as its cells: measured first (a tabular) in memstor.tex.j2's guard, which scales a
                # table wider than the line (one box, the log says so) and sets the longtable otherwise
                name = re.sub(r"[^A-Za-z0-9 ,.:()=*/+-]", "", self.caption or " ".join(header))[:60]
                lines += [r"\setlength{\LTleft}{0pt}\setlength{\LTright}{\fill}",
                          r"\memstorlongtable{" + name + "}{%",
                          r"\begin{tabular}{" + cols + "}", r"\toprule", head, r"\midrule", *body, r"\bottomrule",
                          r"\end{tabular}}{%", *longtable, "}"]
        lines.append(r"\endgroup")
        if self.max_rows is not None and len(self.df) > self.max_rows:
            lines.append(r"\textit{" + str(len(self.df) - self.max_rows) + " more rows not shown.}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        if self._is_empty:
            return self._empty_text()
        header, rows = self._cells()
        return "\n".join(["\t".join(header)] + ["\t".join(r).replace("\n", " ") for r in rows])


class Code:
    """Preformatted text (commands, paths) for the report: small monospace in the PDF, wrapped in HTML."""

    def __init__(self, text: str):
        self.text = text

    def _repr_html_(self) -> str:
        return ('<pre style="font-size:0.8em; white-space:pre-wrap; word-break:break-all; background:#f6f6f6; '
                f'padding:6px;">{html.escape(self.text)}</pre>')

    def _repr_latex_(self) -> str:
        return "{\\scriptsize\n\\begin{verbatim}\n" + self.text + "\n\\end{verbatim}\n}"

    def __repr__(self) -> str:
        return self.text


# ------------------------------------------------------------------------------------------ export


def pdf_tools_missing() -> list:
    """Names of the PDF tools (xelatex, pandoc) not on PATH."""
    return [t for t in PDF_TOOLS if shutil.which(t) is None]


def _read_notebook(path: Path):
    """The notebook at `path` (nbformat v4) or a UsageError naming it."""
    import nbformat

    if not path.is_file():
        raise UsageError(f"{path}: no such notebook; execute it first (make report runs papermill)")
    try:
        return nbformat.read(str(path), as_version=4)
    except Exception as err:  # nbformat raises several types for a broken file
        raise UsageError(f"{path}: not a readable notebook ({first_line(err)}); re-execute it") from None


def report_metadata(nb) -> dict:
    """title, authors ([{'name':...}]), date for the export: papermill parameters override metadata."""
    meta = nb.metadata
    params = (meta.get("papermill") or {}).get("parameters") or {}
    title = params.get("title") or meta.get("title") or "memstor report"
    author = params.get("author")
    if author:
        authors = [{"name": a.strip()} for a in re.split(r"[;,]| and ", str(author)) if a.strip()]
    else:
        authors = list(meta.get("authors") or [])
    date = params.get("date") or meta.get("date") or ""
    if not date:
        end = (meta.get("papermill") or {}).get("end_time") or ""
        date = str(end)[:10] if end else _dt.date.today().isoformat()
    return {"title": str(title), "authors": authors, "date": str(date)}


def _prepare(nb):
    """A copy of nb ready for export: metadata set, stderr streams and empty code outputs dropped, and the
    lab-only cells (tagged ``explore``: widgets, interactive figures) left out."""
    nb = copy.deepcopy(nb)
    nb.cells = [c for c in nb.cells if EXPLORE_TAG not in (c.get("metadata", {}).get("tags") or [])]
    nb.metadata.pop("widgets", None)  # the explorer's widget state: no widget is left to restore
    md = report_metadata(nb)
    nb.metadata["title"] = md["title"]
    nb.metadata["authors"] = md["authors"]
    nb.metadata["date"] = md["date"]
    dropped = 0
    for cell in nb.cells:
        if cell.get("cell_type") != "code":
            continue
        keep = []
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                dropped += 1
                continue
            keep.append(out)
        cell["outputs"] = keep
    return nb, dropped


def save_figures(nb, outdir: Path, stem: str) -> list:
    """Write every PNG output of nb to ``outdir/figures/<stem>-NN.png``; return the paths."""
    paths: list[Path] = []
    figdir = outdir / "figures"
    for cell in nb.cells:
        for out in cell.get("outputs", []) if cell.get("cell_type") == "code" else []:
            data = out.get("data") or {}
            if "image/png" in data:
                figdir.mkdir(parents=True, exist_ok=True)
                p = figdir / f"{stem}-{len(paths) + 1:02d}.png"
                p.write_bytes(base64.b64decode(data["image/png"]))
                paths.append(p)
    return paths


def _exporter(cls, template_name: str, template_file: str, templates: Path):
    """An nbconvert exporter of class `cls` with memstor's template (`templates`/`template_file`, based on
    nbconvert's `template_name`) that leaves out the input cells and the prompts."""
    from traitlets.config import Config

    c = Config()
    c.TemplateExporter.exclude_input = True
    c.TemplateExporter.exclude_input_prompt = True
    c.TemplateExporter.exclude_output_prompt = True
    exporter = cls(config=c, template_name=template_name, extra_template_paths=[str(templates)])
    exporter.template_file = template_file
    return exporter


def export_html(nb, out: Path, templates: Path) -> Path:
    """nb -> self-contained HTML at `out` (no input cells, no CDN scripts)."""
    from nbconvert import HTMLExporter

    exporter = _exporter(HTMLExporter, "lab", "memstor.html.j2", templates)
    exporter.embed_images = True
    body, _ = exporter.from_notebook_node(nb)
    atomic_write(out, body)
    return out


#: Overfull boxes wider than this (pt) are layout defects (text cut at the margin).
OVERFULL_MAX_PT = 1.0
#: What the PDF's LaTeX writes when a table was wider than the line (memstor.tex.j2's \memstortable):
#: it is then scaled down, i.e. printed smaller than its font.
SHRUNK_MARK = "memstor: table wider than the line"


def latex_problems(log: str) -> list[str]:
    """The layout defects an xelatex log records, one line each: overfull boxes wider than
    OVERFULL_MAX_PT (text past the margin) and tables scaled below their font (SHRUNK_MARK)."""
    out = []
    for m in re.finditer(r"^Overfull \\[hv]box \(([\d.]+)pt too (?:wide|high)\)(.*)$", log, re.M):
        if float(m.group(1)) > OVERFULL_MAX_PT:
            out.append(f"overfull box {m.group(1)} pt{m.group(2)}")
    out += [ln.strip() for ln in log.splitlines() if ln.startswith(SHRUNK_MARK)]
    return out


def export_pdf(nb, out: Path, templates: Path) -> Path:
    """nb -> PDF at `out` through LaTeX (pandoc + xelatex), and xelatex's log of the last pass beside it
    (``<out>.latex.log``: :func:`latex_problems` reads it). Raises MemstorError with the log path on failure."""
    from nbconvert import PDFExporter  # slow import (~1 s): only when a PDF is built
    from nbconvert.exporters.pdf import LatexFailed

    class _KeepLog(PDFExporter):
        """nbconvert's PDF exporter, keeping xelatex's log (it builds in a temporary folder)."""

        latex_log = ""

        def run_latex(self, filename, raise_on_failure=LatexFailed):
            try:
                return super().run_latex(filename, raise_on_failure)
            finally:
                log = Path(filename).with_suffix(".log")
                self.latex_log = log.read_text(errors="replace") if log.is_file() else ""

    exporter = _exporter(_KeepLog, "latex", "memstor.tex.j2", templates)
    exporter.verbose = False
    log = out.with_suffix(".latex.log")
    try:
        body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": out.stem}})
    except LatexFailed as err:
        atomic_write(log, exporter.latex_log or str(getattr(err, "output", err)))
        raise MemstorError(f"{out}: xelatex failed; see {log} (the HTML report was written)") from None
    except OSError as err:
        raise MemstorError(f"{out}: PDF not built ({first_line(err)}); install: {PDF_INSTALL}") from None
    atomic_write(out, body)
    atomic_write(log, exporter.latex_log)
    return out


def export(executed_nb: Path, outdir: Path, name: str = "report", pdf: bool = True) -> dict:
    """Export an executed notebook to ``outdir/<name>.html`` and (if pdf) ``outdir/<name>.pdf``.

    Returns {'html': Path, 'pdf': Path | None, 'figures': [Path], 'message': str}. The PDF is skipped,
    with a message naming the install command, when xelatex or pandoc is missing.
    """
    executed_nb, outdir = Path(executed_nb), Path(outdir)
    nb = _read_notebook(executed_nb)
    nb, dropped = _prepare(nb)
    outdir.mkdir(parents=True, exist_ok=True)
    html_path = export_html(nb, outdir / f"{name}.html", TEMPLATES)
    figures = save_figures(nb, outdir, name)
    result = {"html": html_path, "pdf": None, "figures": figures, "stderr_outputs_dropped": dropped}
    if not pdf:
        result["message"] = f"wrote {html_path}"
        return result
    missing = pdf_tools_missing()
    if missing:
        result["message"] = (f"wrote {html_path}; PDF not built: {' and '.join(missing)} not found. "
                             f"To get {outdir / (name + '.pdf')}: {PDF_INSTALL}, then `make report`")
        return result
    result["pdf"], spilled = _within_budget(nb, outdir / f"{name}.pdf", f"{name}.html")
    result["message"] = f"wrote {html_path} and {result['pdf']}" + (
        f" ({len(spilled)} part(s) left to the HTML to keep the PDF within its {budget(nb)} pages)" if spilled else "")
    return result


def _within_budget(nb, out: Path, html_name: str) -> tuple[Path, list[str]]:
    """Export the PDF; where it runs past its page budget (memstor.report.pdf_cut.budget), export it again with the
    SPILL_TAG cells left to the HTML one at a time, the last first, until it fits or none is left. (path, ids
    spilled)."""
    pages_max, spilled = budget(nb), []
    spill = [c["id"] for c in nb.cells if SPILL_TAG in (c.get("metadata", {}).get("tags") or []) and c.get("id")]
    path = export_pdf(without_appendix(nb, html_name), out, TEMPLATES)
    while pages_max and spill and (pages := pdf_pages(out.with_suffix(".latex.log").read_text(errors="replace"))) \
            and pages > pages_max:
        spilled.append(spill.pop())
        path = export_pdf(without_appendix(nb, html_name, frozenset(spilled)), out, TEMPLATES)
    return path, spilled
