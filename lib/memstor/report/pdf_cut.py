"""What the PDF leaves to the HTML: the appendix (cells tagged ``appendix``, every command and table, one line in the
PDF pointing to the HTML) and, where the PDF would run past its page budget, the cells tagged ``spill``, the last
first (memstor.report.export builds the PDF again without each until it fits).

Pure: a notebook node in, a copy out; xelatex's log in, its page count out.
"""

from __future__ import annotations

import copy
import re

from memstor.report.figure_numbers import renumber

#: The cell tag of the appendix: kept in the HTML (every command, every table), left out of the PDF, which
#: keeps what a reader needs; each left-out heading becomes one line pointing to the HTML.
APPENDIX_TAG = "appendix"
#: The cell tag of what the PDF leaves to the HTML only where it would run past its page budget (PAGE_BUDGET): the
#: cell's metadata ``spill`` names it in the one line that points to the HTML; the last such cell goes first.
SPILL_TAG = "spill"
#: Pages the PDF may take per profile (issue 38: quick at most 10, standard at most 15); other profiles: no budget.
PAGE_BUDGET = {"quick": 10, "standard": 15}

def budget(nb) -> int | None:
    """The PDF's page budget from the notebook's papermill parameter ``profile`` (PAGE_BUDGET); None without one."""
    params = (nb.metadata.get("papermill") or {}).get("parameters") or {}
    return PAGE_BUDGET.get(str(params.get("profile") or ""))


def pdf_pages(log: str) -> int | None:
    """The pages xelatex wrote, from its log ('Output written on report.pdf (10 pages, 512 bytes).'); None without."""
    m = re.search(r"Output written on .*?\((\d+) pages?", log or "", re.S)
    return int(m.group(1)) if m else None


def _markdown_of(cell) -> str:
    """A cell's markdown: a markdown cell's source, or the markdown a code cell displayed (an appendix heading the
    notebook shows only where its data is present)."""
    if cell.get("cell_type") == "markdown":
        return "".join(cell.get("source", ""))
    parts = [(o.get("data") or {}).get("text/markdown", "") for o in cell.get("outputs", [])]
    return "\n".join("".join(p) if isinstance(p, list) else str(p) for p in parts if p)


def without_appendix(nb, html_name: str, spilled: frozenset[str] = frozenset()):
    """A copy of nb for the PDF: the cells tagged ``appendix`` left out, their headings (a markdown cell's, or
    the first heading a code cell displayed: one shown only where its data is present) replaced by one line
    naming them (consecutive ones together) and the HTML file that holds them; so too the cells whose id is in
    ``spilled`` (tagged SPILL_TAG, named by their metadata ``spill``); its figures numbered 1, 2, 3 ...
    (memstor.report.figure_numbers.renumber)."""
    import nbformat  # as in _read_notebook: nbformat only when a notebook is exported (memstor --help stays fast)

    nb = copy.deepcopy(nb)
    cells: list = []
    pending: list[str] = []  # headings of appendix cells since the last cell the PDF shows

    def flush():
        if pending:  # consecutive appendix headings: one line (a line each took a tenth of a page)
            cells.append(nbformat.v4.new_markdown_cell(  # in small type (LaTeX: the PDF only)
                f"\\small\n\n*{'; '.join(pending)}: in the HTML report ({html_name}).*\n\n\\normalsize"))
            pending.clear()

    for cell in nb.cells:
        if cell.get("id") in spilled:
            if cell.get("outputs"):  # a spilled cell that showed nothing needs no pointer
                pending.append(f"{cell['metadata'].get('spill') or 'a figure'} (left out of the PDF to keep it within "
                               "its pages)")
            continue
        if APPENDIX_TAG not in (cell.get("metadata", {}).get("tags") or []):
            if cell.get("cell_type") == "code" and not cell.get("outputs"):
                cells.append(cell)  # shows nothing: the headings around it stay one line
                continue
            flush()
            cells.append(cell)
            continue
        heads = [ln.lstrip("#").strip() for ln in _markdown_of(cell).splitlines() if ln.startswith("#")]
        if heads:
            pending.append(heads[0])
    flush()
    nb.cells = cells
    renumber(nb, html_name)
    return nb
