"""loadlat's memory-hierarchy modes (``--working_set``, ``--mlp``; lib/loadlat/README.md, *Memory hierarchy*) ->
tidy rows. Pure: a JSON sidecar (``--json``, a parsed document) or the text output in, plain dicts out.

Each row has the mlc schema's columns (memstor.core.schema.MLC_COLUMNS: ``test`` = ``working_set`` or ``mlp``,
``tool`` = loadlat, ``latency_ns``, ``bandwidth_MBps`` for mlp, ``access_bytes`` = the line each load fetches)
followed by :data:`HIERARCHY_COLUMNS`, then :data:`DETAIL_COLUMNS`. Units: bytes, ns, MB/s = 10^6 bytes/s.

- ``working_set``: one row per buffer size. ``latency_ns`` is the mean (CLOCK_MONOTONIC over a stamp-free
  chase: elapsed / loads), ``clocks`` the same in core clocks (None when loadlat's core clock estimate
  failed its check: never guessed), ``lat_p50_ns`` / ``lat_p90_ns`` / ``lat_p99_ns`` percentiles over the
  MEANS OF BATCHES of ``batch_accesses`` dependent loads (not over single loads; each batch holds one
  timer stamp, at most ``stamp_ns`` / batch per load);
- ``mlp``: one row per chain count x thread count: ``latency_ns`` = elapsed / loads per chain (mean over
  threads), ``bandwidth_MBps`` = chains x line bytes x loads per chain / elapsed (summed over threads).

The text output carries less than the JSON (no CPU share, no huge-page share per point): what it does not
say is None.
"""

from __future__ import annotations

import math
import re

from memstor.core.schema import MLC_COLUMNS, ParseResult
from memstor.parse.guards import DAMAGE, one_line

#: loadlat's modes read here (the ``test`` of the rows).
MODES = ("working_set", "mlp")
#: The experiment columns after the mlc schema's (memstor.experiments.mem_hierarchy's table).
HIERARCHY_COLUMNS = ["buffer_bytes", "pages", "pattern", "chains", "threads", "lat_p50_ns", "lat_p90_ns",
                     "lat_p99_ns", "clocks", "batch_accesses", "llc_bytes"]
#: What the JSON adds per row: the measuring threads' least CPU share (CPU time / wall time, 0-1: below 0.9
#: the thread was descheduled and the mean is inflated; the batch percentiles are not) and the buffer's
#: huge-page share (0-1).
DETAIL_COLUMNS = ["cpu_share", "huge_fraction"]
ROW_KEYS = MLC_COLUMNS + HIERARCHY_COLUMNS + DETAIL_COLUMNS

_HEADINGS = {"Measuring latency vs working set": "working_set",
             "Measuring memory-level parallelism": "mlp"}
_BANNER_RE = re.compile(r"loadlat \(Memory Latency Checker-compatible\) - (v\S+)")
_HUGE_RE = re.compile(r"^# huge pages: (requested|not requested).*?AnonHugePages in (?:the buffer|buffers): "
                      r"(?:unknown )?(\d+) of (\d+) KiB", re.MULTILINE)
_STRIDE_RE = re.compile(r"^# chain: sequential.*?\(stride (\d+) B\)", re.MULTILINE)
_LINE_RE = re.compile(r"every (\d+)-byte line", re.MULTILINE)
_BATCH_RE = re.compile(r"^# percentiles .*?batches of (\d+) dependent loads", re.MULTILINE)
_LLC_RE = re.compile(r"^# caches .*?last level: L\d+, (\d+) KiB", re.MULTILINE)
_SIZES_RE = re.compile(r"^# working set: .*?\((\d+) sizes\)", re.MULTILINE)
_MLP_RE = re.compile(r"^# mlp: chains ([\d ]+) interleaved.*?(then on every CPU at once: ([\d,]+))?;", re.MULTILINE)


def mode_of_text(text: str) -> str | None:
    """``working_set`` or ``mlp`` when ``text`` is loadlat output of that mode (its table heading), else None."""
    for heading, mode in _HEADINGS.items():
        if f"\n{heading}" in text or text.startswith(heading):
            return mode
    return None


def pages_text(requested: bool, fraction: float | None) -> str:
    """The ``pages`` column: ``4K``, ``2M (THP, 100 %)`` (-L: madvise, the share from smaps), ``4K (THP requested,
    none granted)``, ``2M (THP requested)`` when the share is unknown (memstor.measure.mlc.pages_text's words)."""
    if fraction is None:
        return "2M (THP requested)" if requested else "4K"
    if fraction > 0:
        return f"2M (THP, {fraction * 100:.0f} %)"
    return "4K (THP requested, none granted)" if requested else "4K"


def pattern_text(stride: int | None) -> str:
    """The ``pattern`` column: ``random``, or ``sequential stride N B``."""
    return f"sequential stride {int(stride)} B" if stride else "random"


def _num(v) -> float | None:
    """A finite float, or None (JSON null, missing, not a number)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def _int(v) -> int | None:
    x = _num(v)
    return int(x) if x is not None else None


def _row(source: str, version: str | None, test: str, **values) -> dict:
    row = dict.fromkeys(ROW_KEYS)
    row.update(source=source, run=0, tool="loadlat", tool_version=version, test=test)
    row.update(values)
    return row


def _dict(v) -> dict:
    """``v`` when it is a JSON object, else {}."""
    return v if isinstance(v, dict) else {}


def _version(doc: dict) -> str | None:
    v = doc.get("version")
    return f"v{str(v).lstrip('v')}" if v not in (None, "") else None


# ------------------------------------------------------------------------------------------------- JSON


def _ws_rows(doc: dict, source: str) -> list[dict]:
    huge = _dict(doc.get("huge_pages"))
    frac = _num(huge.get("huge_fraction"))
    pages = pages_text(bool(huge.get("requested")), frac)
    pattern = pattern_text(_int(doc.get("stride_bytes")))
    line = _int(doc.get("line_bytes"))
    llc = _int(_dict(doc.get("caches")).get("llc_bytes"))
    batch = _int(doc.get("batch_accesses"))
    out = []
    for p in doc.get("points") or []:
        if not isinstance(p, dict) or p.get("status") != "ok":
            continue
        size = _int(p.get("buffer_bytes"))
        detail = f"working set {size} B, {pattern}, {pages}; p50/p90/p99 over means of batches of {batch} loads"
        out.append(_row(source, _version(doc), "working_set", access_bytes=line, latency_ns=_num(p.get("latency_ns")),
                        detail=detail, buffer_bytes=size, pages=pages, pattern=pattern, chains=1, threads=1,
                        lat_p50_ns=_num(p.get("p50_ns")), lat_p90_ns=_num(p.get("p90_ns")),
                        lat_p99_ns=_num(p.get("p99_ns")), clocks=_num(p.get("latency_core_clocks")),
                        batch_accesses=batch, llc_bytes=llc, cpu_share=_num(p.get("cpu_share")),
                        huge_fraction=frac))
    return out


def _mlp_rows(doc: dict, source: str) -> list[dict]:
    huge = _dict(doc.get("huge_pages"))
    frac = _num(huge.get("huge_fraction"))
    pages = pages_text(bool(huge.get("requested")), frac)
    line = _int(doc.get("line_bytes"))
    llc = _int(_dict(doc.get("caches")).get("llc_bytes"))
    size = _int(doc.get("buffer_bytes"))
    out = []
    for p in doc.get("points") or []:
        if not isinstance(p, dict) or p.get("status") != "ok":
            continue
        chains, threads = _int(p.get("chains")), _int(p.get("threads"))
        detail = f"mlp {chains} chain(s) x {threads} thread(s), {size} B per thread, {pages}"
        out.append(_row(source, _version(doc), "mlp", access_bytes=line, latency_ns=_num(p.get("latency_ns")),
                        bandwidth_MBps=_num(p.get("bandwidth_MBps")), detail=detail, buffer_bytes=size,
                        pages=pages, pattern="random", chains=chains, threads=threads,
                        clocks=_num(p.get("latency_core_clocks")), llc_bytes=llc,
                        cpu_share=_num(p.get("cpu_share_min")), huge_fraction=frac))
    return out


def parse_json(doc, source: str) -> ParseResult:
    """Rows of a ``--working_set`` or ``--mlp`` JSON sidecar (a parsed document); an error line for anything
    else. Points not ``ok`` are left out (an interrupted run keeps the sizes it finished)."""
    result = ParseResult()
    if not isinstance(doc, dict) or doc.get("tool") != "loadlat" or doc.get("mode") not in MODES:
        mode = doc.get("mode") if isinstance(doc, dict) else None
        result.errors.append(f"{source}: not a loadlat working_set or mlp JSON document (mode {mode!r})")
        return result
    try:
        result.rows = _ws_rows(doc, source) if doc["mode"] == "working_set" else _mlp_rows(doc, source)
    except DAMAGE as err:
        result.errors.append(one_line(f"{source}: damaged loadlat {doc['mode']} JSON ({type(err).__name__}: {err})"))
    if not result.rows and not result.errors:
        result.errors.append(f"{source}: loadlat {doc['mode']} JSON without a measured point; rerun loadlat")
    return result


# ------------------------------------------------------------------------------------------------- text


def _table(text: str) -> list[list[str]]:
    """The cells of the table rows after the ``====`` line (until a blank or ``#`` line)."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.startswith("=====")), None)
    if start is None:
        return []
    rows = []
    for ln in lines[start + 1:]:
        if not ln.strip() or ln.startswith("#"):
            break
        rows.append([c.strip() for c in ln.split("\t")])
    return rows


def _cell(text: str) -> float | None:
    try:
        return _num(float(text))
    except ValueError:
        return None  # "unknown" clocks


def _text_pages(text: str) -> tuple[str | None, float | None]:
    m = _HUGE_RE.search(text)
    if not m:
        return None, None
    frac = int(m.group(2)) / int(m.group(3)) if int(m.group(3)) else None
    return pages_text(m.group(1) == "requested", frac), frac


def _group(rx: re.Pattern, text: str) -> int | None:
    m = rx.search(text)
    return int(m.group(1)) if m else None


def _text_rows(text: str, source: str, mode: str) -> list[dict]:
    m = _BANNER_RE.search(text)
    version = m.group(1) if m else None
    pages, frac = _text_pages(text)
    llc_kib = _group(_LLC_RE, text)
    llc = llc_kib * 1024 if llc_kib is not None else None
    line = _group(_LINE_RE, text) or 64
    out = []
    if mode == "working_set":
        stride, batch = _group(_STRIDE_RE, text), _group(_BATCH_RE, text)
        pattern = pattern_text(stride)
        for cells in _table(text):
            size = round(float(cells[0]) * 1024 / line) * line  # KiB with 2 decimals -> whole lines
            out.append(_row(source, version, mode, access_bytes=line, latency_ns=_cell(cells[1]),
                            detail=f"working set {size} B, {pattern}, {pages} (text)", buffer_bytes=size,
                            pages=pages, pattern=pattern, chains=1, threads=1, lat_p50_ns=_cell(cells[3]),
                            lat_p90_ns=_cell(cells[4]), lat_p99_ns=_cell(cells[5]), clocks=_cell(cells[2]),
                            batch_accesses=batch, llc_bytes=llc, huge_fraction=frac))
        return out
    b = re.search(r"^Using buffer size of ([\d.]+)MiB/thread", text, re.MULTILINE)
    buf_bytes = round(float(b.group(1)) * 2**20) if b else None
    for cells in _table(text):
        chains, threads = int(cells[0]), int(cells[1])
        out.append(_row(source, version, mode, access_bytes=line, latency_ns=_cell(cells[2]),
                        bandwidth_MBps=_cell(cells[4]), detail=f"mlp {chains} chain(s) x {threads} thread(s) (text)",
                        buffer_bytes=buf_bytes, pages=pages, pattern="random", chains=chains, threads=threads,
                        clocks=_cell(cells[3]), llc_bytes=llc, huge_fraction=frac))
    return out


def planned(text: str) -> int | None:
    """How many rows the run planned, from its ``#`` lines (sizes; chain counts, twice with every CPU), or None."""
    mode = mode_of_text(text)
    if mode == "working_set":
        return _group(_SIZES_RE, text)
    m = _MLP_RE.search(text) if mode == "mlp" else None
    if not m:
        return None
    return len(m.group(1).split()) * (2 if m.group(2) else 1)


def interrupted(text: str) -> bool:
    """True when the run was ended by a signal (its ``# interrupted`` line)."""
    return bool(re.search(r"^# interrupted by signal", text, re.MULTILINE))


def parse_text(text: str, source: str) -> ParseResult:
    """Rows of the text output of ``loadlat --working_set`` or ``--mlp``; an error line when it is neither or
    holds no row."""
    result = ParseResult()
    mode = mode_of_text(text)
    if mode is None:
        result.errors.append(f"{source}: not loadlat --working_set or --mlp output (no table heading)")
        return result
    try:
        result.rows = _text_rows(text, source, mode)
    except DAMAGE as err:
        result.errors.append(one_line(f"{source}: damaged loadlat {mode} output ({type(err).__name__}: {err})"))
    if not result.rows and not result.errors:
        result.errors.append(f"{source}: loadlat {mode} output without a measured row (cut or failed run)")
    return result


def parse_hierarchy(text: str, source: str, doc: dict | None = None) -> ParseResult:
    """The rows of one run: from its JSON sidecar ``doc`` when given and readable, else from its text."""
    if isinstance(doc, dict):
        result = parse_json(doc, source)
        if result.rows:
            return result
    return parse_text(text, source)
