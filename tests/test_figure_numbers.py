"""The PDF numbers its own figures (issue 38 sixth read S10-bare 16: the bare run's PDF showed Figures 1, 3, 13,
14, 16, the HTML's numbers, because the appendix's figures stay in the HTML)."""
from __future__ import annotations

import nbformat

from memstor.report import export
from memstor.report.figure_numbers import CAPTION_KEY

#: The bare run's report: (figure number, in the appendix) in the notebook's order (its first 16 figures).
BARE = [(1, False), (2, True), (3, False), *((n, True) for n in range(4, 13)), (13, False), (14, False),
        (15, True), (16, False)]


def figure_cell(number: int, appendix: bool):
    """A code cell as memstor.report.plots.synthesis.show leaves it: the figure with its caption in the metadata,
    then the caption's own markdown output."""
    text = f"*Figure {number}.* caption {number}"
    cell = nbformat.v4.new_code_cell("show(fig, caption)", metadata={"tags": ["appendix"] if appendix else []})
    cell.outputs = [nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo="}, metadata={CAPTION_KEY: text}),
                    nbformat.v4.new_output("display_data", data={"text/markdown": text}, metadata={CAPTION_KEY: True})]
    return cell


def captions(nb) -> list[str]:
    return [o.metadata[CAPTION_KEY] for c in nb.cells for o in c.get("outputs", [])
            if isinstance(o.metadata.get(CAPTION_KEY), str)]


def test_the_pdf_numbers_its_figures_in_order_and_names_the_htmls_number():
    nb = nbformat.v4.new_notebook(cells=[figure_cell(n, a) for n, a in BARE])
    pdf = export.without_appendix(nb, "report.html")
    assert captions(pdf) == ["*Figure 1.* caption 1", "*Figure 2.* (Figure 3 in report.html) caption 3",
                             "*Figure 3.* (Figure 13 in report.html) caption 13",
                             "*Figure 4.* (Figure 14 in report.html) caption 14",
                             "*Figure 5.* (Figure 16 in report.html) caption 16"]
    own = [o.data["text/markdown"] for c in pdf.cells for o in c.get("outputs", []) if o.metadata.get(CAPTION_KEY) is True]
    assert own == captions(pdf)                                 # each caption's own output follows its figure
    assert captions(nb)[12] == "*Figure 13.* caption 13"        # the HTML's notebook keeps its numbers


def test_a_pdf_that_keeps_every_figure_keeps_its_numbers():
    nb = nbformat.v4.new_notebook(cells=[figure_cell(n, False) for n in (1, 2, 3)])
    assert captions(export.without_appendix(nb, "report.html")) == [f"*Figure {n}.* caption {n}" for n in (1, 2, 3)]
