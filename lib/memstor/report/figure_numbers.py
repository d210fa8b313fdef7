"""The PDF's own figure numbers. The notebook numbers its figures in the order it shows them
(memstor.report.plots.synthesis.show: "*Figure 13.* caption" in the output's metadata ``memstor_caption``); the
PDF leaves the appendix's figures in the HTML, so its captions would jump 1, 3, 13, 14, 16 (issue 38 sixth read
S10-bare 16). :func:`renumber` numbers the figures a notebook copy still holds 1, 2, 3, ... and names the HTML's
number where it differs, so either document can be quoted."""
from __future__ import annotations

import re

#: Output metadata of a report figure (its caption, markdown) and of that caption's own output (true): the PDF
#: template (memstor.tex.j2) sets the figure and its caption as one unit and skips the caption's output.
CAPTION_KEY = "memstor_caption"
_NUMBER = re.compile(r"^\*Figure (\d+)\.\*")


def renumber(nb, html_name: str) -> None:
    """Number the captioned figures of ``nb`` (a notebook node, changed in place) 1, 2, 3 ... in order: a caption
    "*Figure 13.* text" becomes "*Figure 3.* (Figure 13 in html_name) text" where the numbers differ; the
    caption's own markdown output (metadata CAPTION_KEY true) follows its figure."""
    shown = 0
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            meta = out.get("metadata") or {}
            cap = meta.get(CAPTION_KEY)
            if isinstance(cap, str) and (m := _NUMBER.match(cap)):
                shown += 1
                meta[CAPTION_KEY] = _numbered(cap, m, shown, html_name)
            elif cap is True and isinstance(md := (out.get("data") or {}).get("text/markdown"), str) \
                    and (m := _NUMBER.match(md)) and shown:
                out["data"]["text/markdown"] = _numbered(md, m, shown, html_name)


def _numbered(text: str, m: re.Match, number: int, html_name: str) -> str:
    """text with its "*Figure N.*" as number, naming the HTML's N where it differs."""
    if int(m.group(1)) == number:
        return text
    return f"*Figure {number}.* (Figure {m.group(1)} in {html_name})" + text[m.end():]
