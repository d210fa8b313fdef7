"""The executed notebook of a family this machine cannot run: the notebook's title and one cell saying why, so
that ``make all`` goes on (its HTML page and the synthesis say the family was not run, and the reason).

``python -m memstor.report.not_run SRC.ipynb OUT.ipynb REASON_FILE`` (the Makefile, after ``memstor run`` exits
3 with ``--skip-note REASON_FILE``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

from memstor.core.errors import UsageError
from memstor.core.files import atomic_write


def not_run_notebook(src: Path, reason: str) -> nbformat.NotebookNode:
    """A notebook with ``src``'s first markdown cell (its title) and a markdown cell: not run here, and why."""
    try:
        nb = nbformat.read(str(src), as_version=4)
    except (OSError, ValueError) as err:
        raise UsageError(f"{src}: not a readable notebook ({err}); restore it from git") from None
    title = next((c for c in nb.cells if c.cell_type == "markdown"), None)
    note = nbformat.v4.new_markdown_cell(f"**Not run on this machine.** {reason.strip()}\n\nThe other families "
                                         "ran; this one's tables and figures are absent from the report.")
    nb.cells = ([title] if title is not None else []) + [note]
    return nb


def main(argv: list[str]) -> int:
    """Write OUT from SRC and the reason in REASON_FILE; exit 2 with one line on bad arguments."""
    if len(argv) != 3:
        print("usage: python -m memstor.report.not_run SRC.ipynb OUT.ipynb REASON_FILE", file=sys.stderr)
        return 2
    src, out, why = (Path(a) for a in argv)
    try:
        reason = why.read_text(encoding="utf-8").strip() or "no reason recorded"
        nb = not_run_notebook(src, reason)
    except (OSError, UsageError) as err:
        print(f"memstor.report.not_run: {err}", file=sys.stderr)
        return 2
    atomic_write(out, nbformat.writes(nb))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
