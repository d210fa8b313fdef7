"""The tidy rows of a fio family: the DESIGN.md fio columns, then :data:`EXTRA_COLUMNS`.

Read + write totals: the CSV keeps the schema's directions (read / write) only; the total of a mixed job
is derived in the analysis (IOPS and MB/s summed, mean latency weighted by the number of I/Os).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from memstor.core.batchmeans import ci_columns
from memstor.core.errors import MemstorError, first_line
from memstor.core.fiohist import BIN_COLUMNS
from memstor.core.schema import FIO_COLUMNS, FIO_LAT_COLUMNS
from memstor.core.units import parse_size
from memstor.experiments._fio_points import config_name, log_avg_msec
from memstor.measure.precision import rule_as_applied
from memstor.measure.sweep import sidecar_dir
from memstor.parse.fio import depth_bucket, iodepth_levels, load_fio_json, parse_fio
from memstor.parse.fio_bins import text_bin_rows
from memstor.parse.fio_intervals import point_intervals
from memstor.parse.fio_status import STATUS_NAME, read_status, status_windows

#: fio's iodepth_level: the intended depth counts as reached when at least this share of the I/Os was
#: submitted with the queue at the intended depth bucket.
DEPTH_REACHED_PCT = 90.0

_METRIC_COLUMNS = ("iops", "bw_MBps", *FIO_LAT_COLUMNS, "runtime_s", "total_ios")

#: Columns after the DESIGN.md fio schema in every processed storage table.
EXTRA_COLUMNS = [
    "experiment",       # fio-block-size | fio-rw-ratio | fio-queue-depth
    "point",            # raw file stem: <data>/raw/<host>/<experiment>/<point>.json
    "config",           # the point without its repetition: rows with the same config are repetitions
    "rep",              # repetition, 1-based
    "status",           # done | failed
    "pattern",          # random | sequential
    "spec_point",       # True for the spec-conditions point (QD x jobs like enterprise spec sheets)
    "outstanding_io",   # intended I/Os in flight: iodepth x numjobs
    "iodepth_level_pct",  # % of I/Os fio submitted with the queue in the intended depth bucket
    "iodepth_reached",  # iodepth_level_pct >= DEPTH_REACHED_PCT (False: engine/buffering kept it lower)
    "ioengine_requested",  # the profile's engine (ioengine is what ran)
    "ioengine_note",    # why that engine was chosen
    "file_size_bytes",  # test file size
    "ramp_s",           # warm-up seconds excluded from the results
    # the point's own 95 % interval by batch means over fio's interval logs (memstor.core.batchmeans):
    "iops_ci_low", "iops_ci_high", "bw_MBps_ci_low", "bw_MBps_ci_high", "lat_mean_us_ci_low", "lat_mean_us_ci_high",
    "ci_method",        # batch-means, or empty when the point has no interval (too few windows, no logs)
    "ci_note",          # ramp excluded, correlated, too few batches, no interval logs
    "precision_pct",    # the profile's target half-width (% of the mean) of IOPS and mean latency; empty: fixed runtime
    "precision_reached",  # with precision_pct: both half-widths within it (else the point ran max_runtime_s)
    "grid_note",        # why the point is in the grid: empty for a listed grid, the reason for an adaptive one
]

COLUMNS = FIO_COLUMNS + EXTRA_COLUMNS


def directions(rw: str, rwmixread: int | None = None) -> list:
    """Directions an rw pattern asks for (as memstor.parse.fio reports them: rwmixread 100 = read only)."""
    if rw in ("randrw", "rw", "readwrite"):
        if rwmixread is not None and not pd.isna(rwmixread) and int(rwmixread) in (0, 100):
            return ["read"] if int(rwmixread) == 100 else ["write"]
        return ["read", "write"]
    if "trim" in rw:
        return ["trim"]
    return ["write"] if "write" in rw else ["read"]


def depth_level_pct(levels: dict, iodepth: int) -> float | None:
    """% of I/Os fio submitted with the queue in the bucket of `iodepth` (None without iodepth_level)."""
    if not levels:
        return None
    key = depth_bucket(iodepth)
    for k, v in levels.items():
        if str(k).strip() == key:
            return float(v)
    return 0.0


def _find_job(doc: dict, jobname: str | None) -> dict | None:
    """The job dict named `jobname` in a fio JSON document (the only/first job when no name matches)."""
    jobs = [j for j in doc.get("jobs", []) if isinstance(j, dict)]
    for j in jobs:
        if jobname is not None and j.get("jobname") == jobname:
            return j
    return jobs[0] if jobs else None


def _blank_metrics(row: dict) -> dict:
    """row with every measured value emptied (a failed point never reports 0 IOPS as a result)."""
    for k in _METRIC_COLUMNS:
        row[k] = None
    return row


def _extras(params: dict, point: str, status: str, note: str | None) -> dict:
    """The EXTRA_COLUMNS values that come from the point's parameters."""
    return {
        "experiment": params.get("experiment"),
        "point": point,
        "config": config_name(params),
        "rep": params.get("rep", 1),
        "status": status,
        "pattern": "random" if str(params["rw"]).startswith("rand") else "sequential",
        "spec_point": bool(params.get("spec_point", False)),
        "outstanding_io": int(params["iodepth"]) * int(params["numjobs"]),
        "iodepth_level_pct": None,
        "iodepth_reached": None,
        "ioengine_requested": params.get("ioengine_requested", params.get("ioengine")),
        "ioengine_note": note,
        "file_size_bytes": parse_size(str(params["file_size"])),
        "ramp_s": params.get("ramp_s"),
        "grid_note": params.get("grid_note") or None,
    }


def failed_rows(params: dict, point: str, host: str, error: str, source: str | None = None,
                note: str | None = None) -> list:
    """One row per direction of a point that produced no measurement: job options, error, no metrics."""
    rows = []
    for d in directions(params["rw"], params.get("rwmixread")):
        row: dict[str, Any] = {k: None for k in FIO_COLUMNS}
        row.update(source=source, host=host, jobname=point, rw=params["rw"], direction=d,
                   bs_bytes=parse_size(str(params["bs"])), iodepth=params["iodepth"],
                   numjobs=params["numjobs"], rwmixread=params.get("rwmixread"),
                   ioengine=params.get("ioengine"), direct=params.get("direct"), error=error)
        row.update(_extras(params, point, "failed", note))
        rows.append(row)
    return rows


def point_rows(text: str, source: str, params: dict, point: str, host: str,
               note: str | None = None) -> list:
    """Tidy rows (COLUMNS) of one raw fio output of a point: schema rows from memstor.parse.fio plus
    the extra columns. A direction that did no I/O (e.g. writes at rwmixread 100) keeps IOPS 0 and
    empty latencies. Unparseable output or a fio job error gives rows with status failed."""
    res = parse_fio(text, source)
    if not res.rows:
        why = "; ".join(res.errors) or f"{source}: no fio measurement in the file"
        return failed_rows(params, point, host, why, source, note)
    try:
        doc = load_fio_json(text)
    except MemstorError:
        doc = {}
    rows = []
    for r in res.rows:
        row = {k: r.get(k) for k in FIO_COLUMNS}
        row["host"] = host
        row["source"] = source
        ex = _extras(params, point, "done", note)
        err = row.get("error")
        if err not in (None, 0, "0", "", 0.0):
            ex["status"] = "failed"
            _blank_metrics(row)
        elif not row.get("total_ios"):
            for k in FIO_LAT_COLUMNS:
                row[k] = None
        job = _find_job(doc, row.get("jobname")) if doc else None
        levels = iodepth_levels(job) if job else {}
        pct = depth_level_pct(levels, int(params["iodepth"]))
        ex["iodepth_level_pct"] = pct
        ex["iodepth_reached"] = None if pct is None else bool(pct >= DEPTH_REACHED_PCT)
        row.update(ex)
        rows.append(row)
    return rows


def to_frame(rows: list) -> pd.DataFrame:
    """A DataFrame with exactly COLUMNS (in order) from tidy row dicts."""
    return pd.DataFrame(rows, columns=COLUMNS)


def result_rows(results: list, host: str, note: str, data_root: Path) -> list:
    """Tidy rows of sweep results: each point's raw fio output parsed (:func:`point_rows`), or failed rows."""
    rows: list = []
    for res in results:
        p = res.point
        if res.status == "failed" or res.raw is None:
            rows += failed_rows(p.params, p.name, host, res.error or "failed", None, note)
            continue
        source = relative(res.raw, data_root)
        try:
            text = Path(res.raw).read_text(encoding="utf-8", errors="replace")
        except OSError as err:
            rows += failed_rows(p.params, p.name, host, f"{source}: {err.strerror}", source, note)
            continue
        rows += with_intervals(point_rows(text, source, p.params, p.name, host, note), res)
    return rows


def result_bins(results: list, data_root: Path) -> pd.DataFrame:
    """The processed bins table (memstor.core.fiohist.BIN_COLUMNS) of sweep results: every measured point's
    json+ histograms (memstor.parse.fio_bins), ``source`` named as in the tidy rows (relative to the data
    folder). Points without a readable raw output or without bins add no rows."""
    rows: list = []
    for res in results:
        if res.status == "failed" or res.raw is None:
            continue
        try:
            text = Path(res.raw).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue  # its tidy rows say why (failed_rows)
        rows += text_bin_rows(text, relative(res.raw, data_root))
    return pd.DataFrame(rows, columns=list(BIN_COLUMNS))


def with_intervals(rows: list, res) -> list:
    """`rows` of one measured point with its batch-means interval columns (memstor.core.batchmeans)
    from the interval logs in its sidecar folder, or, for a point with a precision target, from fio's
    status snapshots there (the series its stop rule saw, memstor.measure.precision) plus
    ``precision_pct`` and ``precision_reached``. No logs (a point measured before memstor wrote them) or
    unreadable ones give empty bounds and the reason in ``ci_note``; never a failed point."""
    folder = sidecar_dir(Path(res.raw).parent, res.point)
    pct = res.point.params.get("precision_pct")
    intervals, why, reached = None, "no interval logs", None
    try:
        if pct:
            intervals, reached, why = _precision_windows(folder, float(pct), res.point.params)
        elif folder.is_dir():
            intervals = point_intervals(folder)
    except (OSError, ValueError, MemstorError) as err:
        intervals, why = None, f"interval logs unreadable: {first_line(err)}"
    for row in rows:
        if row.get("status") != "done":
            continue
        cols = ci_columns(intervals, row.get("direction")) if intervals is not None else \
            dict(ci_columns(None), ci_note=why)
        if pct:
            cols["ci_note"] = "; ".join(x for x in (cols["ci_note"], why) if x)
            cols.update(precision_pct=float(pct), precision_reached=reached)
        row.update(cols)
    return rows


def _precision_windows(folder: Path, pct: float, params: dict) -> tuple:
    """(windows, reached, note) of a point with a precision target: the window series of its fio status
    snapshots (memstor.parse.fio_status), the stop rule's verdict on it, and a note naming the windows
    (``status windows of N ms``)."""
    status = folder / STATUS_NAME
    if not status.is_file():
        return None, False, "no fio status snapshots (the point ended before its first one)"
    docs = read_status(status.read_text(encoding="utf-8", errors="replace"))
    used, v = rule_as_applied(docs, pct)
    return status_windows(docs[:used]), v.reached, f"status windows of {log_avg_msec(params['runtime_s'])} ms"


def relative(path: Path, root: Path) -> str:
    """path relative to root when inside it (portable `source` column), else absolute."""
    try:
        return str(Path(path).resolve().relative_to(Path(root).resolve()))
    except ValueError:
        return str(Path(path).resolve())
