"""Reports of stored real data folders: a copy of a folder's processed tables, synthesised (tests must not write
into tests/data)."""

from __future__ import annotations

import shutil
from pathlib import Path

from memstor.analysis import synthesis as syn


def synthesise_copy(tmp_path_factory, data: Path, name: str) -> syn.Synthesis:
    """synthesise() of a temporary copy of data/processed (name: the temporary folder's prefix)."""
    root = tmp_path_factory.mktemp(name)
    shutil.copytree(data / "processed", root / "processed")
    return syn.synthesise(root)
