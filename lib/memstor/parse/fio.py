"""Parse any fio output into tidy rows (memstor.core.schema.FIO_COLUMNS): one row per job x direction x host.

Reads JSON / json+ of fio 2.x (latencies in usec under ``clat``/``lat``, ``bw`` in KiB/s) and 3.x
(``*_ns``), several JSON documents in one file (``--status-interval``: the last complete one counts),
text printed before the JSON, client/server JSON (``client_stats``), fio's normal (human) text of
2.x/3.x, terse lines (v2-v5 layouts) alone or mixed with normal text, Windows fio.exe, CRLF, shell
prompts and many runs concatenated in one file.

Units of the rows: ``bw_MBps`` is decimal (bytes/s / 1e6), latencies are microseconds (``lat_*`` is
fio's total latency, ``clat_p*`` completion-latency percentiles), ``runtime_s`` is seconds of the
direction, ``bs_bytes`` bytes. A value fio did not report is None (empty CSV cell), never a guess.
Pure functions: text in, ParseResult out.

This module is the entry point; the formats are read by memstor.parse.fio_json (JSON, json+),
memstor.parse.fio_text (normal text) and memstor.parse.fio_terse (terse), on the job options and row
skeleton of memstor.parse.fio_spec. Here: detection, the choice of format, the final guard against
impossible numbers, and fio's iodepth buckets.
"""

from __future__ import annotations

import importlib
import math
import re

from memstor.core.errors import ParseError
from memstor.core.schema import ParseResult, impossible_number
from memstor.parse.fio_json import clat_bins, iodepth_levels, load_fio_json, rows_from_json
from memstor.parse.fio_spec import DIRECTIONS, METRIC_COLUMNS
from memstor.parse.guards import DAMAGE, empty_cells, one_line

__all__ = [
    "DIRECTIONS", "clat_bins", "depth_bucket", "iodepth_levels", "load_fio_json", "looks_like_fio", "parse_fio",
    "read_fio",
]

_FIO_HINTS = re.compile(
    r'"fio version"|^(?:<[^>]*> ?)?\S.*: \(g=\d+\): rw=|: \(groupid=\d+, jobs=\d+\): err=|^[2-5];fio-|^fio-\d',
    re.M,
)
#: How far into a text :func:`looks_like_fio` looks (characters).
_HINT_CHARS = 262144
# Columns that hold a count, size or measurement: a finite number >= 0 or empty.
_NON_NEGATIVE = ("groupid", "bs_bytes", "iodepth", "numjobs", *METRIC_COLUMNS)
# impossible_number's bound of an integer cell (no tool prints a counter past 64 bits).
_INT_LIMIT = 1 << 63


def rows_from_text(text: str, source: str, errors: list) -> list[dict]:
    """memstor.parse.fio_text.rows_from_text (fio's normal and terse text), that module imported on the first
    call: 2 ms of the start-up of a `memstor parse` of fio JSON, which never reads text (``python -X
    importtime``, the 2-vCPU VM; issue 39)."""
    return importlib.import_module("memstor.parse.fio_text").rows_from_text(text, source, errors)


def looks_like_fio(text: str) -> bool:
    """True when the text holds fio output (JSON, normal or terse) in its first 256 kB (characters). fio's JSON
    is found by its ``"fio version"`` key (the hints' first pattern) with one substring search first: the
    regular expression tries every pattern at each character before it (half the instructions of a detection)."""
    return text.find('"fio version"', 0, _HINT_CHARS) >= 0 or bool(_FIO_HINTS.search(text[:_HINT_CHARS]))


def parse_fio(text: str, source: str) -> ParseResult:
    """Rows (schema FIO_COLUMNS) and one-line errors ``"SOURCE: reason"`` for any fio output text.

    A JSON document wins over text around it (when several, the last complete one); otherwise the
    normal and terse text is read.
    """
    return read_fio(text, source)[0]


def read_fio(text: str, source: str) -> tuple[ParseResult, dict | None]:
    """:func:`parse_fio`'s result and the fio JSON document its rows came from (None when the text held
    none, or it could not be read): a caller that also wants the json+ bins (memstor.parse.fio_bins.bin_rows)
    or the job entries reads the document once, not twice."""
    holder: list[dict] = []
    result = _parse_fio(text, source, holder)
    if result.errors:
        result.errors = [one_line(e, 500) for e in result.errors]
    return result, (holder[0] if holder else None)


def _parse_fio(text: str, source: str, holder: list[dict]) -> ParseResult:
    """parse_fio's body (errors not yet forced onto one line); the JSON document read goes into ``holder``."""
    result = ParseResult()
    has_json = '"fio version"' in text or '"jobs"' in text or '"client_stats"' in text
    try:
        if has_json:
            holder.append(load_fio_json(text))
            result.rows = rows_from_json(holder[0], source, result.errors)
        else:
            result.rows = rows_from_text(text, source, result.errors)
    except ParseError as err:
        if has_json and looks_like_fio(text):
            result.rows = rows_from_text(text, source, result.errors)
        if not result.rows:
            result.errors.append(f"{source}: {err}")
        return _sanitised(result, source)
    except RecursionError:
        result.rows = []
        result.errors.append(f"{source}: fio JSON nested too deeply to read (damaged or not fio output)")
        return result
    except DAMAGE as err:
        result.rows = []
        result.errors.append(one_line(f"{source}: unreadable fio output ({type(err).__name__}: {err})", 300))
        return result
    if not result.rows:
        result.errors.append(f"{source}: {_no_rows_reason(text, has_json)}")
    return _sanitised(result, source)


def _first_fio_message(text: str) -> str | None:
    """fio's own first error/warning line (``fio: ...``), shortened, for error messages."""
    m = re.search(r"^(?:<[^>]*> ?)?(fio: .*)$", text, re.M)
    return m.group(1).strip()[:160] if m else None


def _no_rows_reason(text: str, had_json: bool) -> str:
    """One-line reason why a text gave no rows, and what to do."""
    said = _first_fio_message(text)
    said = f" (fio said: {said})" if said else ""
    if had_json:
        return f"fio JSON holds no jobs{said}; rerun fio and keep its complete --output"
    if looks_like_fio(text):
        return f"fio output without any finished job result{said}; the run was interrupted or failed"
    return "not fio output (no fio JSON, normal or terse result found)"


def _bad_value(column: str, value) -> bool:
    """A numeric cell that cannot be a fio measurement: impossible_number, rwmixread > 100, direct not 0/1."""
    if impossible_number(value, column in _NON_NEGATIVE):
        return True
    if value is None or isinstance(value, (str, bool)):
        return False
    if column == "rwmixread" and not 0 <= value <= 100:
        return True
    return column == "direct" and value not in (0, 1)


def _plainly_valid(row: dict, _inf: float = math.inf, _limit: int = _INT_LIMIT, _float: type = float,
                   _int: type = int, _others: frozenset = frozenset({str, bool, type(None)})) -> bool:
    """True when no cell of ``row`` can be a :func:`_bad_value`: every number a finite int or float in
    0 .. 2**63, rwmixread at most 100, direct 0 or 1. A fast, conservative pre-check (False sends the row
    to the cell-by-cell rule, which decides): almost every row of a real file passes it, which spares
    the 29 calls per row of the rule (a third of ``memstor parse``'s time over 5,000 files). The keyword
    arguments are constants bound as locals (the loop runs 29 times a row), not for callers."""
    for value in row.values():
        kind = type(value)
        if kind is _float:
            if not 0.0 <= value < _inf:  # NaN, inf and negatives fail this comparison
                return False
        elif kind is _int:
            if not 0 <= value < _limit:
                return False
        elif kind not in _others:
            return False
    mix, direct = row.get("rwmixread"), row.get("direct")
    if isinstance(mix, (int, float)) and mix > 100:
        return False
    return not isinstance(direct, (int, float)) or direct in (0, 1)


def _sanitised(result: ParseResult, source: str) -> ParseResult:
    """Empty every impossible number (NaN/inf, negative IOPS or latency...) with one error line per row.

    A damaged file must never smuggle such a value into a table as if fio had measured it.
    """
    for row in result.rows:
        if _plainly_valid(row):
            continue
        shown = empty_cells(row, _bad_value)
        if shown is None:
            continue
        where = f"job {row.get('jobname')!r} {row.get('direction') or ''}".strip()
        line = f"{source}: {where}: impossible value {shown} (left empty; damaged file?)"
        result.errors.append(one_line(line, 300))
    return result


def depth_bucket(iodepth: int) -> str:
    """fio's iodepth_level bucket holding a queue depth: 1, 2 (2-3), 4 (4-7), ... 32 (32-63), >=64."""
    if iodepth >= 64:
        return ">=64"
    b = 1
    while b * 2 <= iodepth:
        b *= 2
    return str(b)


def depth_bucket_exact(iodepth: int) -> bool:
    """Whether fio's iodepth_level can show a queue full at ``iodepth``: only where the ceiling is its bucket's
    lowest depth (1, 2, 4, ..., 64); a queue of 512 shares the >=64 bucket with 64 I/Os in flight."""
    return 1 <= iodepth <= 64 and (iodepth & (iodepth - 1)) == 0
