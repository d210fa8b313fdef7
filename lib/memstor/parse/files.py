"""`memstor parse`: find output files, detect fio vs MLC, run the pure parsers, write tidy CSVs.

Files named on the command line are always parsed; files found while walking a folder (recursively,
symlinks to folders are not followed) are parsed when they look like a tool output. Each file that
yields nothing gives one line `PATH: reason`; rows from the other files are still written.
"""

from __future__ import annotations

import csv
import importlib
import io
import operator
import os
import stat
from collections.abc import Iterable, Iterator, Sequence
from itertools import repeat
from pathlib import Path
from types import ModuleType

from memstor.core.errors import first_line
from memstor.core.files import atomic_write
from memstor.core.fiobins import BIN_COLUMNS, BINS_SUFFIX
from memstor.core.schema import FIO_COLUMNS, MLC_COLUMNS, impossible_number
from memstor.parse.fio import looks_like_fio, read_fio
from memstor.parse.fio_bins import bin_rows, text_bin_rows
from memstor.parse.guards import empty_cells, one_line

KINDS = ("fio", "mlc", "diskplorer")
MAX_FILE_BYTES = 256 * 1024 * 1024  # larger files are refused (one line), never read into memory
# Files a walk skips silently: our own sidecars and things that are never tool output.
SKIP_SUFFIXES = {
    ".csv", ".md", ".py", ".ipynb", ".sh", ".yaml", ".yml", ".png", ".jpg", ".jpeg", ".svg", ".pdf",
    ".html", ".gz", ".zip", ".xlsx", ".c", ".h", ".fio", ".ini", ".toml", ".gitkeep",
}
SKIP_NAMES = {"manifest.json", "sysinfo.json", "SOURCES.md", "README.md"}


class ParseOutcome:
    """Rows per kind plus one-line errors, for a set of paths: ``rows`` {kind: rows}, ``bins`` the json+ histogram
    rows of the fio files (memstor.parse.fio_bins; made only when ``keep_bins``), ``errors`` one line each,
    ``files`` the files parsed. The rows of kind ``lines_of`` (None: no kind) are kept as their CSV lines instead
    (``lines``, :class:`CsvLines`; ``line_rows`` of them), made as each file is read: a table of thousands of
    files then holds its text, not its dicts (9 MB less for 5,000 fio files, and each file's rows are made in
    memory its predecessor's freed). A plain class: a dataclass would import dataclasses and inspect, 8 ms of
    every `memstor parse` (``python -X importtime``, the 2-vCPU VM; issue 39)."""

    def __init__(self, keep_bins: bool = True, lines_of: str | None = None) -> None:
        self.rows: dict = {"fio": [], "mlc": [], "diskplorer": []}
        self.bins: list = []
        self.keep_bins = keep_bins
        self.errors: list = []
        self.files = 0
        self.lines_of = lines_of
        self.lines: list[str] = []
        self.line_rows = 0
        self._csv = CsvLines(columns(lines_of)) if lines_of else None

    def add(self, kind: str, rows: list) -> None:
        """Take the rows of one file: as rows, or as CSV lines when they are of kind ``lines_of``."""
        if self._csv is not None and kind == self.lines_of:
            self._csv.extend(self.lines, rows)
            self.line_rows += len(rows)
        else:
            self.rows[kind].extend(rows)

    def csv_text(self) -> str:
        """The CSV text of the ``lines_of`` table (header, lines, final line end), as :func:`to_csv` of its rows."""
        return "\n".join([self._csv.header, *self.lines, ""]) if self._csv is not None else ""


def _walk(path: str) -> Iterator[str]:
    """Regular files under the folder ``path`` (a normalised path text, as ``str(Path(...))`` writes it) in a
    stable order, as path texts equal to ``str(Path(folder) / name)``; symlinked folders are not followed (no
    loops). Texts rather than Path objects, which cost 2 µs a file more (issue 39: 5,000 files a run).

    Left out: hidden files, SKIP_NAMES, ``.meta.json`` sidecars and names whose suffix (the text from the last
    dot, ``Path(name).suffix``: none when the dot starts the name) is in SKIP_SUFFIXES, any case. Each of those
    suffixes has one dot, its first character, so ``name.lower().endswith`` of them finds exactly them (a name
    that is a suffix alone is hidden). One expression of string methods per file, and each folder's prefix
    joined once, not os.path.join per file."""
    cut = len(os.curdir) + 1 if path == os.curdir else 0  # pathlib writes Path(".") / "a" as "a", not "./a"
    for top, dirs, files in os.walk(path, followlinks=False, onerror=None):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        prefix = os.path.join(top[cut:], "")  # the folder and its separator, as os.path.join(folder, name) puts it
        yield from [prefix + name for name in sorted(files)
                    if not (name.startswith(".") or name in SKIP_NAMES or name.endswith(".meta.json")
                            or name.lower().endswith(_SKIP_ENDINGS))]


#: SKIP_SUFFIXES as str.endswith takes them (sorted, for a stable order).
_SKIP_ENDINGS = tuple(sorted(SKIP_SUFFIXES))


def expand(paths: Iterable[str | Path]) -> Iterator[tuple[str, bool]]:
    """Yield (file, named) for every path, each file as its path text (``str(Path(...))``): named files as
    given, folders walked recursively."""
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            yield from zip(_walk(str(p)), repeat(False))
        else:
            yield str(p), True


#: os.open flags of :func:`read_text`: O_NONBLOCK so that opening a FIFO never waits for a writer (it is refused
#: once fstat shows what it is), O_BINARY for Windows (no newline translation).
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def read_text(path: str | Path) -> str:
    """The file's text (UTF-8, or UTF-16 with a BOM as PowerShell writes it; bad bytes replaced).

    Only regular files are read: a FIFO, socket or device (``/dev/zero``, a named pipe) would block
    or never end, so it raises OSError instead, as does a file over MAX_FILE_BYTES. One open and fstat
    per file (not a stat of the path, then an open, a second fstat and a buffered reader: 4 µs a file).
    """
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError:
        _check_readable(os.stat(path))  # what cannot be opened (a socket) is refused as before: by its kind
        raise
    try:
        data = _read_all(fd, _check_readable(os.fstat(fd)))
    finally:
        os.close(fd)
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.decode("utf-8", errors="replace")


def _check_readable(st: os.stat_result) -> int:
    """The size in bytes of the file ``st`` describes; OSError (one line: what the file is, and the way out)
    unless it is a regular file of at most MAX_FILE_BYTES bytes."""
    if not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file (device, FIFO or socket)"
        raise OSError(f"{kind}; give tool output files or folders")
    size = st.st_size
    if size > MAX_FILE_BYTES:
        raise OSError(f"file is {size / 1e6:.0f} MB, larger than the {MAX_FILE_BYTES / 1e6:.0f} MB limit")
    return size


def _read_all(fd: int, size: int) -> bytes:
    """Every byte from ``fd`` to its end; ``size``: the bytes expected (fstat). A read of one byte more than
    that which gives exactly ``size`` bytes has met the end of a regular file (POSIX: a short read is the end),
    so a file that did not change is one read (not a second one that finds nothing: 5,000 system calls a
    run); any other file (still growing, shrunk, or a /proc file fstat calls empty) is read on, 64 kB at a
    time, until a read finds nothing."""
    chunk = os.read(fd, size + 1)
    if len(chunk) == size:
        return chunk
    chunks = [chunk]
    while chunk := os.read(fd, 65535):
        chunks.append(chunk)
    return b"".join(chunks)


#: The parsers of MLC and loadlat output and diskplorer's json+, imported by :func:`_parser` the first time a file
#: that is not plain fio output is read (memstor.cli loads its subcommands so, by a registry of names): 6 ms (MLC,
#: loadlat) and 2 ms (diskplorer) of the start-up of a `memstor parse --kind fio`, which never runs them
#: (``python -X importtime``, the 2-vCPU VM; issue 39).
_ON_DEMAND = {"mlc": "memstor.parse.mlc", "loadlat": "memstor.parse.loadlat_hierarchy",
              "diskplorer": "memstor.parse.diskplorer"}


def _parser(name: str) -> ModuleType:
    """The parser module ``name`` of :data:`_ON_DEMAND` (imported on the first call)."""
    return importlib.import_module(_ON_DEMAND[name])


def detect(text: str) -> str | None:
    """'fio', 'mlc' or None, from the content (not the file name)."""
    if looks_like_fio(text):
        return "fio"
    if _parser("mlc").looks_like_mlc(text):
        return "mlc"
    return None


def parse_file(path: str | Path, kind: str | None, named: bool, outcome: ParseOutcome) -> None:
    """Parse one file into `outcome` (rows or one error line); ``path`` as :func:`expand` yields it."""
    try:
        text = read_text(path)
    except OSError as exc:
        outcome.errors.append(f"{path}: cannot read: {exc.strerror or exc}")
        return
    found = detect(text)
    if found == "fio" and kind != "fio" and _parser("diskplorer").looks_like_diskplorer(text):
        found = "diskplorer"  # fio json+ that diskplorer wrote: its grid cells (memstor.parse.diskplorer)
    use = kind or found
    if use is None:
        if named:
            outcome.errors.append(f"{path}: not a fio or MLC output (no measurement found)")
        return
    if kind is not None and found is not None and found != kind and not named:
        return  # a folder walk in --kind mode skips the other tool's files
    source = str(path)
    if use == "fio":
        # one JSON decoding per file: the rows and the json+ bins come from the same document. parse_fio's
        # own guard (memstor.parse.fio) already emptied every cell sanitise_rows would, and more.
        result, doc = read_fio(text, source)
        outcome.files += 1
        outcome.add(use, result.rows)
        if outcome.keep_bins:
            outcome.bins.extend(bin_rows(doc, source) if doc is not None else text_bin_rows(text, source))
    elif use == "diskplorer":
        result = _parser("diskplorer").parse_diskplorer(text, source)
        outcome.files += 1
        outcome.add(use, result.rows)
    else:
        # loadlat's working-set and memory-level-parallelism modes (memstor.parse.loadlat_hierarchy)
        loadlat = _parser("loadlat")
        result = (loadlat.parse_hierarchy if loadlat.mode_of_text(text) else _parser("mlc").parse_mlc)(text, source)
        outcome.files += 1
        outcome.add(use, sanitise_rows(result.rows, use, outcome.errors))
    if result.errors:
        outcome.errors.extend(one_line(e) for e in result.errors)  # a damaged file can put CR, NUL, escapes


# Numeric columns that hold a count, size, fraction or measurement: finite and >= 0, else empty.
_NON_NEGATIVE = {
    "fio": {"groupid", "bs_bytes", "iodepth", "numjobs", "rwmixread", "iops", "bw_MBps", "lat_mean_us",
            "lat_stddev_us", "lat_min_us", "lat_max_us", "clat_p50_us", "clat_p90_us", "clat_p99_us",
            "clat_p99_9_us", "clat_p99_99_us", "runtime_s", "total_ios"},
    "mlc": {"run", "read_fraction", "access_bytes", "inject_delay", "latency_ns", "bandwidth_MBps",
            "src_node", "dst_node"},
}


def _impossible(kind: str, column: str, value: object) -> bool:
    """A cell no tool could have measured (see schema.impossible_number)."""
    return impossible_number(value, column in _NON_NEGATIVE[kind])


def sanitise_rows(rows: list, kind: str, errors: list) -> list:
    """Rows with every impossible number emptied (one error line per damaged row, naming the cells).

    The parsers already refuse such values; this is the last guard before a CSV, so a damaged file
    can never put NaN, inf or a negative latency into a table as if it had been measured.
    """
    for row in rows:
        shown = empty_cells(row, lambda column, value: _impossible(kind, column, value))
        if shown:
            errors.append(f"{row.get('source')}: impossible value {shown} (left empty; damaged file?)")
    return rows


def parse_paths(paths: Iterable[str | Path], kind: str | None = None, bins: bool = True,
                lines: bool = False) -> ParseOutcome:
    """Parse every file under `paths`; `kind` forces the parser ('fio'|'mlc'), None auto-detects; `bins`: also
    the json+ histogram rows of the fio files (``outcome.bins``; a caller that writes none passes False);
    `lines` (with a `kind`): that kind's rows as their CSV lines (``outcome.csv_text()``), not as rows."""
    outcome = ParseOutcome(keep_bins=bins, lines_of=kind if lines else None)
    for path, named in expand(paths):
        try:
            parse_file(path, kind, named, outcome)
        except RecursionError:
            outcome.errors.append(f"{path}: too deeply nested to parse")
        except MemoryError:
            outcome.errors.append(f"{path}: too large to parse in memory")
        except Exception as exc:  # noqa: BLE001 - a parser bug on one file must not lose the others
            outcome.errors.append(f"{path}: parser failed ({type(exc).__name__}: {first_line(exc)[:200]}); "
                                  "please report this file to the memstor authors")
    return outcome


def columns(kind: str) -> list:
    """The schema columns of a kind."""
    if kind == "diskplorer":
        return list(_parser("diskplorer").MIXED_LOAD_COLUMNS)
    return FIO_COLUMNS if kind == "fio" else MLC_COLUMNS


def to_csv(rows: list, kind: str) -> str:
    """Rows as CSV text with the exact schema columns; None -> empty cell."""
    return rows_csv(rows, columns(kind))


def rows_csv(rows: list, fieldnames) -> str:
    """Row dicts as CSV text with exactly ``fieldnames`` (others ignored); None -> empty cell: csv.writer's text
    (``lineterminator="\\n"``), byte for byte (:class:`CsvLines`)."""
    writer = CsvLines(fieldnames)
    lines = [writer.header]
    writer.extend(lines, rows)
    lines.append("")
    return "\n".join(lines)


class CsvLines:
    """The CSV lines of row dicts with exactly ``fieldnames`` (others ignored; None -> empty cell), each as
    csv.writer writes it (``lineterminator="\\n"``) without its line end; ``header`` the names' line.

    A line whose cells hold no comma, quote, CR or LF is what csv.writer writes for it, the ``str`` of the cells
    joined by commas, and is made so here at two thirds of csv.writer's cost (csv.writer took 15 % of a
    5,000-file ``memstor parse``, issue 39); any other line (a job name such as ``job(r_idx=0,w_idx=0)``, a
    single empty cell) is csv.writer's.
    """

    def __init__(self, fieldnames) -> None:
        self.names = list(fieldnames)
        self.header = _csv_line(self.names)
        self._pick = operator.itemgetter(*self.names) if len(self.names) > 1 else None

    def extend(self, lines: list, rows: list) -> None:
        """Append the line of each of ``rows`` to ``lines``."""
        names, pick = self.names, self._pick
        if pick is None:  # one cell a line (or none): an empty one is written "" (csv.writer's rule)
            lines.extend(_csv_line([row.get(name) for name in names]) for row in rows)
            return
        commas = len(names) - 1
        for row in rows:
            try:
                cells = pick(row)
            except KeyError:  # a row without some of the columns: those cells are empty
                cells = tuple(map(row.get, names))
            line = ",".join(["" if cell is None else str(cell) for cell in cells])
            if line.count(",") != commas or '"' in line or "\n" in line or "\r" in line:
                line = _csv_line(cells)
            lines.append(line)


def _csv_line(cells: Sequence) -> str:
    """csv.writer's line of ``cells`` (None an empty cell; quoted where a cell needs it), without its \\n."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(cells)
    return buf.getvalue()[:-1]


def write_csv(path: Path, rows: list, kind: str) -> None:
    """Write rows atomically (temp file + rename) so a reader never sees half a table."""
    write_csv_text(path, to_csv(rows, kind))


def write_csv_text(path: Path, text: str) -> None:
    """Write a CSV text (:meth:`ParseOutcome.csv_text`) as :func:`write_csv` writes rows: atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text)


def write_bins_csv(folder: Path, rows: list, table: str = "fio") -> Path:
    """Write json+ bin rows (memstor.parse.fio_bins) atomically to ``folder/<table>-bins.csv``, beside
    ``<table>.csv``: the histograms the analysis reads instead of the raw files; the path."""
    path = Path(folder) / f"{table}{BINS_SUFFIX}.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, rows_csv(rows, BIN_COLUMNS))
    return path
