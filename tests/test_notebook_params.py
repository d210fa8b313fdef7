"""Every line of every notebook's parameters cell is a parameter papermill understands (`name: type = value
# comment`): a line it cannot parse is silently not a parameter (papermill only warns "Unable to parse line"
and then "Passed unknown parameter" when make passes it). A comment holding '=' was such a line."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from papermill.translators import PythonTranslator

#: The notebooks make runs with papermill (00-start-here is read, not parameterised).
NOTEBOOKS = sorted(p for p in (Path(__file__).resolve().parents[1] / "notebooks").glob("[1-9]*.ipynb"))


def _parameters_cell(path: Path):
    nb = nbformat.read(path, as_version=4)
    cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(cells) == 1, f"{path.name}: expected one cell tagged parameters"
    return cells[0]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_parameter_line_parses(path):
    cell = _parameters_cell(path)
    declared = [line.split(":", 1)[0].strip() for line in cell.source.splitlines()
                if line.strip() and not line.lstrip().startswith("#") and ":" in line.split("=", 1)[0]]
    parsed = [p.name for p in PythonTranslator.inspect(cell)]
    assert declared and parsed == declared
