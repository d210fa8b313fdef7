"""The points' provenance beside the processed tables: when an experiment runs, the meta sidecar of every
point in its raw folder (exact command, tool version, start and end time, device, status) is copied into
``processed/<device>/<experiment>-metas.json``, so that the analysis and the report never open
``data/raw/`` (DESIGN.md: processed data stands on its own) and a copied processed folder keeps the
methods section's commands, counts and time ranges."""

from __future__ import annotations

import json
from pathlib import Path

from memstor.core.files import atomic_write
from memstor.core.schema import METAS_SUFFIX


def _entry(meta: Path, data_root: Path) -> dict:
    """One point's entry: ``point``, ``meta_path`` (relative to the data folder) and ``meta`` (the sidecar's
    object), or ``error`` instead of ``meta`` when the sidecar cannot be read."""
    entry: dict = {"point": meta.name[: -len(".meta.json")], "meta_path": meta.relative_to(data_root).as_posix()}
    try:
        info = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        entry["error"] = f"unreadable meta sidecar ({type(err).__name__}: {err})"
        return entry
    if not isinstance(info, dict):
        entry["error"] = "meta sidecar is not a JSON object"
        return entry
    entry["meta"] = info
    return entry


def write_metas(data_root: Path, experiment: str) -> list[Path]:
    """Write ``processed/<device>/<experiment>-metas.json`` for every device that has both a raw folder of
    `experiment` and a processed folder; return the files written (a file whose content would not change is
    left alone). The entries are sorted by point name."""
    data_root = Path(data_root)
    written = []
    for raw in sorted((data_root / "raw").glob(f"*/{experiment}")):
        out_dir = data_root / "processed" / raw.parent.name
        if not raw.is_dir() or not out_dir.is_dir():
            continue
        entries = [_entry(m, data_root) for m in sorted(raw.glob("*.meta.json"))]
        out = out_dir / f"{experiment}{METAS_SUFFIX}"
        text = json.dumps(entries, indent=1, sort_keys=True, default=str) + "\n"
        if out.is_file() and out.read_text(encoding="utf-8") == text:
            continue
        atomic_write(out, text)
        written.append(out)
    return written
