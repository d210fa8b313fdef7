"""ScyllaDB diskplorer's result file -> the mixed-load cell table (:data:`MIXED_LOAD_COLUMNS`). Pure: text in,
rows out.

diskplorer (github.com/scylladb/diskplorer, ``diskplorer.py --result-file FILE``) measures a drive over a grid of
(write bandwidth, read IOPS): each cell is one fio run with a rate-limited sequential write job (``rate=`` B/s,
128 KiB by default) beside Poisson-paced random-read jobs (``rate_iops=`` split over the CPUs, the device's
logical block size by default), reported as one group (``group_reporting``). The result file is fio's json+ with
the jobs of every run appended: one job entry per cell, named ``job(r_idx=R,w_idx=W,write_bw=B,r_iops=I)`` (grid
indices, offered write bandwidth in bytes/s, offered read IOPS); runs that are no cells (``prepare``,
``max-write-bw``, ``max-read-iops-*``, ``prepare_data_for_trim(...)``) are skipped. Its plotter,
``latency-postprocess.py``, drops a cell whose write bandwidth or read IOPS fall under 97 % of the offered rate
(``--write-throughput-allowed-error`` / ``--read-iops-allowed-error``, 0.03); here such a cell is kept and its
rows say why in ``held_note``.

Rows: one per cell and offered direction (the write row only where the cell writes), units in the names:
``write_offered_MBps`` and ``bw_MBps`` decimal MB/s (bytes/s / 1e6), ``*_iops`` I/Os per second, ``achieved_pct``
per cent of the offered rate (bytes for writes, as diskplorer checks them; I/Os for reads), ``bs_bytes`` bytes,
``resp_*_us`` microseconds. The response times are fio's completion latency (``clat``: submission to
completion, what diskplorer plots): fio does not time from the intended arrival, so ``lag_p99_us`` is empty and
``open_loop`` is unknown (empty). A value the file does not record is None (an empty CSV cell), never a guess:

- the offered read rate is the ``r_iops`` of the name; in the first row (``r_idx=0``, name ``r_iops=0``)
  diskplorer still reads at a floor rate (1 IOPS before its commit 3fc2b88 of 2021-12, 10 since) issued by one
  job, whose options the group reports (fio shows the options of a group's last job, a read job here), so it
  is read from that ``rate_iops``;
- the read block size is that job's ``bs``; the write block size only appears in the options of a
  ``max-write-bw`` calibration run, when the file holds one: otherwise the write row's ``bs_bytes`` and
  ``offered_iops`` are empty (its offered and achieved bandwidth are there all the same).
"""

from __future__ import annotations

import math
import re

from memstor.core.errors import ParseError
from memstor.core.fiobins import ns_to_us
from memstor.core.schema import ParseResult, impossible_number
from memstor.core.units import parse_size
from memstor.parse.fio_json import load_fio_json
from memstor.parse.guards import DAMAGE, empty_cells, one_line

TOOL = "diskplorer"
#: The mixed-load cell table: one row per cell of a (write MB/s, read IOPS) grid and direction. diskplorer's
#: results and memstor's own mixed-load runs are written with these columns.
MIXED_LOAD_COLUMNS = (
    "source", "tool", "tool_version", "cell", "write_offered_MBps", "read_offered_iops", "direction", "bs_bytes",
    "offered_iops", "achieved_iops", "achieved_pct", "bw_MBps", "resp_mean_us", "resp_p50_us", "resp_p95_us",
    "resp_p99_us", "resp_p99_9_us", "lag_p99_us", "open_loop", "held_note",
)
COLUMNS = MIXED_LOAD_COLUMNS
#: latency-postprocess.py's rule: a cell whose achieved rate is under this fraction of the offered one is dropped.
HOLD_FRACTION = 0.97
#: The name of a cell's job (diskplorer.py ``generate_job_names``); its later jobs add ``.1``, ``.2``...
_CELL = re.compile(r"job\(r_idx=(\d+),w_idx=(\d+),write_bw=(\d+),r_iops=(\d+)\)")
#: Names of diskplorer's runs that are no cells (prefill, calibration, the trim variant's pre-write).
_NOT_CELLS = ('"prepare"', '"max-write-bw"', '"max-read-iops-', '"prepare_data_for_trim(')
#: Percentile columns and fio's percentile (as a number) each is read from.
_PCTS = (("resp_p50_us", 50.0), ("resp_p95_us", 95.0), ("resp_p99_us", 99.0), ("resp_p99_9_us", 99.9))
_NUMERIC = ("write_offered_MBps", "read_offered_iops", "bs_bytes", "offered_iops", "achieved_iops", "achieved_pct",
            "bw_MBps", "resp_mean_us", "resp_p50_us", "resp_p95_us", "resp_p99_us", "resp_p99_9_us")
_WAY_OUT = "give the JSON file that diskplorer.py --result-file wrote, whole"


def looks_like_diskplorer(text: str) -> bool:
    """True when fio JSON text is diskplorer's result file: its first job is a cell (``job(r_idx=...``) or one
    of diskplorer's own runs before the cells and a cell follows. Cheap: only the first job name is looked at
    unless it is one of those runs, and only in the first 64 kB (the check `memstor parse` makes of every fio file
    it detects, text outputs included)."""
    i = text.find('"jobname"', 0, 65536)
    if i < 0:
        return False
    head = text[i:i + 80]
    if "job(r_idx=" in head:
        return True
    return any(name in head for name in _NOT_CELLS) and "job(r_idx=" in text


def parse_diskplorer(text: str, source: str, hold_fraction: float = HOLD_FRACTION) -> ParseResult:
    """Rows (:data:`MIXED_LOAD_COLUMNS`) and one-line errors ``"SOURCE: reason"`` of a diskplorer result file.

    ``hold_fraction``: achieved / offered under which diskplorer's plotter drops a cell (0.97; its README's
    hard-disk example used 0.85); such cells keep their rows, with the reason in ``held_note``.
    """
    result = ParseResult()
    try:
        doc = load_fio_json(text)
    except ParseError as err:
        result.errors.append(f"{source}: not a readable diskplorer result ({err}; truncated?): {_WAY_OUT}")
        return result
    except RecursionError:
        result.errors.append(f"{source}: JSON nested too deeply to read (damaged?): {_WAY_OUT}")
        return result
    result.rows = rows_from_doc(doc, source, result.errors, hold_fraction)
    if not result.rows and not result.errors:
        result.errors.append(f"{source}: no diskplorer cells (fio jobs named job(r_idx=..,w_idx=..)): {_WAY_OUT}, "
                             "or read plain fio output with --kind fio")
    result.errors = [one_line(e, 500) for e in result.errors]
    return result


def rows_from_doc(doc: dict, source: str, errors: list, hold_fraction: float = HOLD_FRACTION) -> list[dict]:
    """The rows of a decoded diskplorer result document, cells in grid order (write index, then read index); a
    damaged cell adds one line to ``errors`` and is left out, a cell measured twice counts once (the last, as
    latency-postprocess.py keeps it)."""
    jobs = doc.get("jobs")
    if not isinstance(jobs, list):
        errors.append(f"{source}: no fio jobs list: {_WAY_OUT}")
        return []
    write_bs = _calibration_write_bs(jobs)
    cells: dict[tuple[int, int], list[dict]] = {}
    for job in jobs:
        name = job.get("jobname") if isinstance(job, dict) else None
        match = _CELL.match(name) if isinstance(name, str) else None
        if match is None:
            continue
        r_idx, w_idx, write_bw, r_iops = (int(g) for g in match.groups())
        cell = f"w{w_idx:02d}r{r_idx:02d}"  # diskplorer's grid indices (not per cent of a maximum)
        try:
            rows = _cell_rows(job, source, cell, write_bw, r_iops, write_bs, hold_fraction)
        except DAMAGE as err:
            errors.append(one_line(f"{source}: cell {cell} ({str(name)[:80]}) unreadable ({type(err).__name__}: {err})",
                                   300))
            continue
        if (w_idx, r_idx) in cells:
            errors.append(f"{source}: cell {cell} appears twice; the last counts (as diskplorer's plotter)")
        cells[(w_idx, r_idx)] = rows
    rows = [row for key in sorted(cells) for row in cells[key]]
    for row in rows:
        shown = empty_cells(row, lambda column, value: column in _NUMERIC and impossible_number(value, True))
        if shown:
            errors.append(f"{source}: cell {row['cell']} {row['direction']}: impossible value {shown} "
                          "(left empty; damaged file?)")
    return rows


def _cell_rows(job: dict, source: str, cell: str, write_bw: int, r_iops: int, write_bs: int | None,
               hold_fraction: float) -> list[dict]:
    """The read row and, where the cell writes, the write row of one cell's job entry (its held_note set)."""
    opts = job.get("job options") or {}
    read_opts = opts if str(opts.get("rw", "")).endswith("read") else {}
    read_offered = float(r_iops) if r_iops > 0 else _number(read_opts.get("rate_iops"))
    common = {"source": source, "tool": TOOL, "tool_version": None, "cell": cell,
              "write_offered_MBps": write_bw / 1e6, "read_offered_iops": read_offered,
              "lag_p99_us": None, "open_loop": None}
    read = _direction_row(job["read"], common, "read", _size(read_opts.get("bs")))
    read["offered_iops"] = read_offered
    read["achieved_pct"] = _pct(read["achieved_iops"], read_offered)
    rows = [read]
    if write_bw > 0:
        write = _direction_row(job["write"], common, "write", write_bs)
        write["offered_iops"] = write_bw / write_bs if write_bs else None
        write["achieved_pct"] = _pct(_bytes_per_s(job["write"]), float(write_bw))
        rows.append(write)
    note = _held_note(rows, hold_fraction)
    for row in rows:
        row["held_note"] = note
    return rows


def _direction_row(ddir: dict, common: dict, direction: str, bs: int | None) -> dict:
    """One direction's measured columns: achieved IOPS, MB/s and the clat statistics in µs (None without
    samples)."""
    row = dict(common, direction=direction, bs_bytes=bs, achieved_iops=_number(ddir["iops"]))
    bps = _bytes_per_s(ddir)
    row["bw_MBps"] = None if bps is None else bps / 1e6
    clat = ddir.get("clat_ns") or {}
    has_samples = (_number(clat.get("N")) or 0) > 0
    mean = _number(clat.get("mean")) if has_samples else None
    row["resp_mean_us"] = None if mean is None else ns_to_us(mean)
    pcts = _percentiles(clat.get("percentile")) if has_samples else {}
    for column, p in _PCTS:
        row[column] = ns_to_us(pcts[p]) if p in pcts else None
    return row


def _held_note(rows: list[dict], hold_fraction: float) -> str | None:
    """Why diskplorer's plotter drops the cell (each direction under ``hold_fraction`` of its offered rate), the
    directions it could not check, or None when it keeps the cell."""
    limit = f"{hold_fraction * 100:g} %"
    reasons = []
    for row in rows:
        pct = row["achieved_pct"]
        if pct is None:
            reasons.append(f"{row['direction']} not checked (offered or achieved rate not recorded)")
        elif pct < hold_fraction * 100:
            reasons.append(f"{row['direction']} achieved {pct:.1f} % of offered (diskplorer drops < {limit})")
    return "; ".join(reasons) or None


def _calibration_write_bs(jobs: list) -> int | None:
    """The write block size of diskplorer's ``max-write-bw`` run (the same ``--write-buffer-size`` as the cells'
    write jobs), when the file holds that run; else None."""
    for job in jobs:
        if isinstance(job, dict) and job.get("jobname") == "max-write-bw":
            opts = job.get("job options")
            return _size(opts.get("bs")) if isinstance(opts, dict) else None
    return None


def _percentiles(raw) -> dict[float, float]:
    """fio's ``percentile`` map (``"99.900000": ns``) as {percentile: ns}, entries that are no numbers skipped."""
    found: dict[float, float] = {}
    if not isinstance(raw, dict):
        return found
    for key, value in raw.items():
        try:
            found[round(float(key), 6)] = float(value)
        except (TypeError, ValueError):
            continue
    return found


def _bytes_per_s(ddir: dict) -> float | None:
    """A direction's bandwidth in bytes/s (fio 3.x ``bw_bytes``; older fio only ``bw``, KiB/s)."""
    if "bw_bytes" in ddir:
        return _number(ddir["bw_bytes"])
    kib = _number(ddir.get("bw"))
    return None if kib is None else kib * 1024


def _pct(achieved: float | None, offered: float | None) -> float | None:
    """achieved / offered in per cent; None when either is unknown or nothing was offered."""
    if achieved is None or not offered:
        return None
    return 100.0 * achieved / offered


def _size(value) -> int | None:
    """Bytes of a fio size option (``"512"``, ``"4k"``), or None."""
    if value is None:
        return None
    try:
        size = parse_size(str(value))
    except ValueError:
        return None
    return size if size > 0 else None


def _number(value) -> float | None:
    """A finite float of a JSON number or numeric text, or None."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None
