"""`memstor parse`: find output files, detect fio vs MLC, run the pure parsers, write tidy CSVs.

Files named on the command line are always parsed; files found while walking a folder (recursively,
symlinks to folders are not followed) are parsed when they look like a tool output. Each file that
yields nothing gives one line `PATH: reason`; rows from the other files are still written.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .schema import FIO_COLUMNS, MLC_COLUMNS

KINDS = ("fio", "mlc")
MAX_FILE_BYTES = 256 * 1024 * 1024  # larger files are refused (one line), never read into memory
# Files a walk skips silently: our own sidecars and things that are never tool output.
SKIP_SUFFIXES = {
    ".csv", ".md", ".py", ".ipynb", ".sh", ".yaml", ".yml", ".png", ".jpg", ".jpeg", ".svg", ".pdf",
    ".html", ".gz", ".zip", ".xlsx", ".c", ".h", ".fio", ".ini", ".toml", ".gitkeep",
}
SKIP_NAMES = {"manifest.json", "sysinfo.json", "SOURCES.md", "README.md"}


@dataclass
class ParseOutcome:
    """Rows per kind plus one-line errors, for a set of paths."""

    rows: dict = field(default_factory=lambda: {"fio": [], "mlc": []})
    errors: list = field(default_factory=list)
    files: int = 0


def _walk(path: Path) -> Iterator[Path]:
    """Regular files under `path` in a stable order; symlinked folders are not followed (no loops)."""
    for top, dirs, files in os.walk(path, followlinks=False, onerror=None):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith(".") or name in SKIP_NAMES or name.endswith(".meta.json"):
                continue
            if Path(name).suffix.lower() in SKIP_SUFFIXES:
                continue
            yield Path(top) / name


def expand(paths: Iterable[str | Path]) -> Iterator[tuple[Path, bool]]:
    """Yield (file, named) for every path: named files as given, folders walked recursively."""
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            for f in _walk(p):
                yield f, False
        else:
            yield p, True


def read_text(path: Path) -> str:
    """The file's text (UTF-8, or UTF-16 with a BOM as PowerShell writes it; bad bytes replaced)."""
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise OSError(f"file is {size / 1e6:.0f} MB, larger than the {MAX_FILE_BYTES / 1e6:.0f} MB limit")
    data = path.read_bytes()
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return data.decode("utf-16", errors="replace")
    if data[:3] == b"\xef\xbb\xbf":
        data = data[3:]
    return data.decode("utf-8", errors="replace")


def detect(text: str) -> str | None:
    """'fio', 'mlc' or None, from the content (not the file name)."""
    from .fioparse import looks_like_fio
    from .mlcparse import looks_like_mlc

    if looks_like_fio(text):
        return "fio"
    if looks_like_mlc(text):
        return "mlc"
    return None


def parse_file(path: Path, kind: str | None, named: bool, outcome: ParseOutcome) -> None:
    """Parse one file into `outcome` (rows or one error line)."""
    try:
        text = read_text(path)
    except OSError as exc:
        outcome.errors.append(f"{path}: cannot read: {exc.strerror or exc}")
        return
    found = detect(text)
    use = kind or found
    if use is None:
        if named:
            outcome.errors.append(f"{path}: not a fio or MLC output (no measurement found)")
        return
    if kind is not None and found is not None and found != kind and not named:
        return  # a folder walk in --kind mode skips the other tool's files
    result = _parser(use)(text, str(path))
    outcome.files += 1
    outcome.rows[use].extend(result.rows)
    outcome.errors.extend(result.errors)


def _parser(kind: str):
    if kind == "fio":
        from .fioparse import parse_fio
        return parse_fio
    from .mlcparse import parse_mlc
    return parse_mlc


def parse_paths(paths: Iterable[str | Path], kind: str | None = None) -> ParseOutcome:
    """Parse every file under `paths`; `kind` forces the parser ('fio'|'mlc'), None auto-detects."""
    outcome = ParseOutcome()
    for path, named in expand(paths):
        try:
            parse_file(path, kind, named, outcome)
        except RecursionError:
            outcome.errors.append(f"{path}: too deeply nested to parse")
        except MemoryError:
            outcome.errors.append(f"{path}: too large to parse in memory")
    return outcome


def columns(kind: str) -> list:
    """The schema columns of a kind."""
    return FIO_COLUMNS if kind == "fio" else MLC_COLUMNS


def to_csv(rows: list, kind: str) -> str:
    """Rows as CSV text with the exact schema columns; None -> empty cell."""
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns(kind), extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if v is None else v) for k, v in row.items()})
    return buf.getvalue()


def write_csv(path: Path, rows: list, kind: str) -> None:
    """Write rows atomically (temp file + rename) so a reader never sees half a table."""
    from .sweep import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, to_csv(rows, kind))
