"""What the SNIA PTS recovery families share (fio-pts-hir, fio-pts-xsr): their common parameters, the runner
that keeps the host idle between points, fio jobs with interval logs, each point's I/O window from fio's own
clock, the tidy rows, the per-second table on the whole test's time axis, and the ``departure`` text.

- **Parameters.** The common fio keys but ``runtime_s``, ``ramp_s`` and ``repetitions``: each PTS segment has
  its own length (a key of the family, named after the PTS quantity), every write counts from the first
  second (no ramp), and a PTS test is one trajectory of a device's state (another run is another run, not a
  repetition). A raw device only when ``device`` and ``confirm_device`` name it both.
- **Idle** (:class:`IdleRunner`): a point whose params hold ``idle_before_s`` > 0 starts after
  ``os.sync()`` (memstor's own writes of the point before — its raw output, meta, manifest, fio's logs — are
  on the disk before the idle starts) and then ``time.sleep(idle_before_s)``: no fio process exists and
  memstor writes nothing while it sleeps. The idle the device saw is longer by the bookkeeping, the sync and
  fio's exit and start (measured per point: ``idle_s``).
- **Time** (:func:`io_window`): from fio 3.36 each job of the JSON gives ``job_start`` (ms since the epoch,
  set when its I/O starts, after a ramp: fio's backend.c/libfio.c ``set_epoch_time``), and the point's I/O
  runs ``runtime`` ms (fio's own, the longest direction) from there; fio-3.28 and 3.33 give no start, so the
  I/O ends at the JSON's ``timestamp_ms`` (written when the jobs are done) and starts ``runtime`` ms before.
  ``t_start_s`` (s since the first point's start) and ``idle_s`` (s since the point before ended) come from
  these.
- **Per second** (:func:`point_seconds`): fio's IOPS, bandwidth and latency logs in 100 ms windows (1 s for
  points over :data:`LONG_RUN_S`), summed per second by memstor.parse.fio_logs.per_second; ``t_s`` is the end
  of the second on the whole test's axis. fio up to 3.36 never writes a job's last window (3.42 writes it, partial), so each point's last
  second holds fewer I/Os than were done (measured: -9.5 % in a 2-s run): a second whose end plus one window
  passes fio's runtime is left out (a 5 s segment keeps seconds 1-4).
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

import memstor.experiments._fio_params as _fio_params
import memstor.experiments._fio_points as _fio_points
import memstor.experiments._fio_rows as _fio_rows
import memstor.experiments._fio_run as _fio_run
from memstor.core.batchmeans import ci_columns
from memstor.core.errors import MemstorError, first_line
from memstor.core.validate import Section
from memstor.measure.fio import FioJob, FioRunner
from memstor.measure.sweep import Point, PointResult, sidecar_dir
from memstor.parse.fio import load_fio_json
from memstor.parse.fio_logs import per_second

#: Common fio keys these families do not take, and why (the validation's one-line answer).
REFUSED = {
    "runtime_s": "not a key of this family: each PTS segment has its own length key",
    "ramp_s": "not a key of this family: every write counts from the first second (no ramp)",
    "repetitions": "not a key of this family: a PTS test is one trajectory of the device's state; run it again "
                   "on another target to repeat it",
}
#: Interval-log window (ms) of points up to LONG_RUN_S seconds, and beyond (a day of 100 ms windows is 10^6 lines).
LOG_AVG_MSEC, LONG_LOG_AVG_MSEC, LONG_RUN_S = 100, 1000, 3600.0
#: Why a point has no batch-means interval (memstor.experiments._fio_rows): a segment after an idle or a
#: change of workload is a trajectory, not a stationary run.
TRAJECTORY_NOTE = "not computed: a PTS recovery segment is a trajectory (not stationary); see the seconds table"
#: Columns of ``<experiment>-seconds.csv``: one row per point x complete second. t_s: END of the second, s since
#: the whole test's first I/O; iops (I/O per s) and bw_MBps (10^6 B/s): the jobs summed; lat_mean_us: mean total
#: latency (µs) of that second's I/Os.
SECOND_COLUMNS = ["host", "point", "phase", "t_s", "iops", "bw_MBps", "lat_mean_us"]
#: Columns after memstor's fio columns that both families have (s, bytes).
TIME_COLUMNS = ["t_start_s", "idle_s"]
SPAN_COLUMNS = ["span", "span_bytes", "departure"]
NOT_PURGED = "not purged (memstor does not secure-erase, the PTS starts from a purged device)"
FILE_SPAN = "test file span instead of the device (a share of a drive with a filesystem in the path)"


# ------------------------------------------------------------------------------------------ parameters


def common(v: Section, params: dict, keys: tuple) -> _fio_params.FioCommon:
    """The validated common fio keys of a PTS family (``keys``: the family's own, all required); UsageError for a
    key of :data:`REFUSED` and for a raw device named only once."""
    for key, why in REFUSED.items():
        if key in params:
            raise v.error(key, params[key], f"{why}; remove it")
    c = _fio_params.common_params(v, {**params, "runtime_s": 1, "ramp_s": 0, "repetitions": 1}, keys)
    if bool(c.device) != bool(c.confirm_device):
        key = "confirm_device" if c.device else "device"
        raise v.error(key, params.get(key, ""), f"the same device as {'device' if c.device else 'confirm_device'} "
                      "(a raw device is overwritten: name it twice on purpose), or both empty for a test file")
    return c


def seconds_list(v: Section, key: str, value) -> tuple:
    """A non-empty list of distinct numbers of seconds > 0, in the order given."""
    return v.unique(key, [v.seconds(key, x) for x in v.items(key, value)])


def num(x: float) -> str:
    """A number for point names and texts: 5 -> '5', 0.5 -> '0.5'."""
    return str(int(x)) if float(x) == int(x) else f"{x:g}"




def base_config(experiment: str, c: _fio_params.FioCommon, engine: str, span: int, raw: bool) -> dict:
    """The point params every point of a PTS test shares (the workload keys are set per point)."""
    return {"experiment": experiment, "rwmixread": None, "numjobs": c.numjobs, "ioengine": engine,
            "ioengine_requested": c.ioengine, "direct": c.direct, "ramp_s": 0,
            "file_size": str(span) if raw else c.file_size, "spec_point": False, "span_bytes": span,
            "span": "full_device" if raw else "file", "rep": 1}


def log_avg_msec(runtime_s: float) -> int:
    """The interval-log window (ms) of a point that runs ``runtime_s`` seconds."""
    return LOG_AVG_MSEC if float(runtime_s) <= LONG_RUN_S else LONG_LOG_AVG_MSEC


def est_s(p: dict) -> float:
    """The progress bar's estimate of a point (s): its idle, its runtime and fio's start-up."""
    return float(p.get("idle_before_s") or 0) + float(p["runtime_s"]) + _fio_points.OVERHEAD_S


def point(name: str, params: dict) -> Point:
    """A sweep point of a PTS test (the test file's path and the engine asked for are incidental)."""
    return Point(name=name, params=params, est_s=est_s(params), incidental=_fio_points.INCIDENTAL)


def fio_job(p: Point, filename: str) -> FioJob:
    """The FioJob of a point: time based for exactly ``runtime_s``, no ramp, group_reporting, fio's IOPS,
    bandwidth and latency logs (no histogram log) in :func:`log_avg_msec` windows."""
    q = p.params
    return FioJob(name=p.name, rw=q["rw"], bs=q["bs"], iodepth=q["iodepth"], numjobs=q["numjobs"],
                  ioengine=q["ioengine"], direct=bool(q["direct"]), size=q["file_size"], runtime_s=q["runtime_s"],
                  ramp_s=0, time_based=True, group_reporting=True, filename=filename, logs=True, hist_log=False,
                  log_avg_msec=int(q["log_avg_msec"]))


class IdleRunner:
    """A FioRunner that keeps the host idle before a point whose params hold ``idle_before_s`` > 0: os.sync(),
    then time.sleep(idle_before_s), then fio (module docstring). The meta records the planned idle."""

    def __init__(self, inner: FioRunner):
        self.inner = inner
        self.suffix = inner.suffix

    def complete(self, raw: Path) -> bool:
        """As the fio runner: fio JSON with jobs and no job error."""
        return self.inner.complete(raw)

    def same_method(self, p: Point, meta: dict) -> bool:
        """As the fio runner: the recorded command laid the jobs out as fio_command does now."""
        return self.inner.same_method(p, meta)

    def run(self, p: Point, out_tmp: Path) -> dict:
        """Sleep the point's idle (after a sync), then run its fio job; fio's meta plus the planned idle."""
        idle = float(p.params.get("idle_before_s") or 0)
        if idle > 0:
            os.sync()
            time.sleep(idle)
        meta = self.inner.run(p, out_tmp)
        return {**meta, "idle_before_s": idle, "idle_synced": idle > 0}


# ------------------------------------------------------------------------------------------ rows


def io_window(text: str) -> tuple[float, float] | None:
    """(start, end) of a point's I/O in ms since the epoch from its fio JSON: start = the earliest job's
    ``job_start`` where fio gives it (3.36+), end = start + the longest direction's ``runtime`` (ms); without
    ``job_start``, end = ``timestamp_ms`` and start = end - runtime. None without them."""
    try:
        doc = load_fio_json(text)
        jobs = [j for j in doc["jobs"] if isinstance(j, dict)]
        runtime = max(float(j[d].get("runtime") or 0) for j in jobs for d in ("read", "write", "trim") if d in j)
        starts = [float(j["job_start"]) for j in jobs if isinstance(j.get("job_start"), (int, float))
                  and j["job_start"] > 0]
        if starts and len(starts) == len(jobs):
            return min(starts), min(starts) + runtime
        end = float(doc["timestamp_ms"])
    except (MemstorError, KeyError, IndexError, TypeError, ValueError):
        return None
    return end - runtime, end


def _source(raw: Path, data_root: Path) -> str:
    """The raw file's path relative to the data folder (the ``source`` column), else absolute."""
    try:
        return str(Path(raw).resolve().relative_to(Path(data_root).resolve()))
    except ValueError:
        return str(Path(raw).resolve())


@dataclass
class Parsed:
    """One point's tidy rows (memstor's fio columns, no batch-means interval), its I/O window (ms) and fio's
    runtime (ms); ``failed``: why the point has no measurement (None when it has one)."""

    rows: list
    window: tuple[float, float] | None
    runtime_ms: float | None
    failed: str | None


def _own(rows: list, p: Point) -> list:
    """``rows`` with ``config`` = the point: each point is a state of the device, never pooled with another."""
    return [dict(r, config=p.name) for r in rows]


def parse_point(res: PointResult, host: str, note: str, data_root: Path) -> Parsed:
    """The :class:`Parsed` of one sweep result (its raw fio output read once)."""
    p = res.point
    if res.status == "failed" or res.raw is None:
        why = res.error or "failed"
        return Parsed(_own(_fio_rows.failed_rows(p.params, p.name, host, why, None, note), p), None, None, why)
    source = _source(res.raw, data_root)
    try:
        text = Path(res.raw).read_text(encoding="utf-8", errors="replace")
    except OSError as err:
        why = f"{source}: {err.strerror}"
        return Parsed(_own(_fio_rows.failed_rows(p.params, p.name, host, why, source, note), p), None, None, why)
    rows = _own(_fio_rows.point_rows(text, source, p.params, p.name, host, note), p)
    for r in rows:
        if r.get("status") == "done":
            r.update(ci_columns(None), ci_method=None, ci_note=TRAJECTORY_NOTE)
    bad = next((r.get("error") or "fio job failed" for r in rows if r.get("status") != "done"), None)
    window = io_window(text)
    return Parsed(rows, window, window[1] - window[0] if window else None, str(bad) if bad else None)


class PointRows:
    """Every point's :class:`Parsed`, each raw file read once; called as a sweep's ``until``, it stops the sweep
    at the first failed point (the rerun retries it) and keeps why in ``failure``."""

    def __init__(self, experiment: str, host: str, note: str, data_root: Path):
        self.experiment, self.host, self.note, self.data_root = experiment, host, note, Path(data_root)
        self.parsed: dict[str, Parsed] = {}
        self.failure: str | None = None

    def of(self, res: PointResult) -> Parsed:
        """The point's Parsed (read now, or kept from before)."""
        if res.point.name not in self.parsed:
            self.parsed[res.point.name] = parse_point(res, self.host, self.note, self.data_root)
        return self.parsed[res.point.name]

    def __call__(self, results: list) -> str | None:
        res = results[-1]
        why = self.of(res).failed
        if why is None:
            return None
        self.failure = f"point {res.point.name} failed ({first_line(why)})"
        return f"stopped: {self.failure}; rerun the same command to retry it and go on"


def timeline(results: list, rows: PointRows) -> dict[str, tuple[float | None, float | None]]:
    """{point: (t_start_s, idle_s)}: the point's I/O start in s since the first point's, and the s between the
    point before's last I/O and its first (None when either has no I/O window)."""
    windows = [rows.of(r).window for r in results]
    t0 = next((w[0] for w in windows if w), None)
    out: dict[str, tuple[float | None, float | None]] = {}
    for i, (res, w) in enumerate(zip(results, windows)):
        before = windows[i - 1] if i else None
        start = round((w[0] - t0) / 1000.0, 3) if w and t0 is not None else None
        idle = round((w[0] - before[1]) / 1000.0, 3) if w and before else None
        out[res.point.name] = (start, idle)
    return out


def point_seconds(res: PointResult, host: str, phase, t_start_s: float, runtime_ms: float) -> pd.DataFrame:
    """The SECOND_COLUMNS rows of one measured point: its complete seconds (module docstring), t_s on the test's
    axis (``t_start_s`` + the second's end)."""
    assert res.raw is not None  # seconds_table: only points with a measurement
    sec = per_second(sidecar_dir(Path(res.raw).parent, res.point))
    window_ms = float(res.point.params["log_avg_msec"])
    sec = sec[(sec["direction"] == "write") & ((sec["t_s"] + 1) * 1000.0 + window_ms <= runtime_ms)]
    sec = sec.sort_values("t_s")
    return pd.DataFrame({"host": host, "point": res.point.name, "phase": phase,
                         "t_s": (t_start_s + sec["t_s"] + 1).round(3), "iops": sec["iops"],
                         "bw_MBps": sec["bw_MBps"], "lat_mean_us": sec["lat_mean_us"]}, columns=SECOND_COLUMNS)


def seconds_table(experiment: str, results: list, rows: PointRows, times: dict, host: str,
                  phase_of) -> pd.DataFrame:
    """The per-second table of a test (SECOND_COLUMNS); ``phase_of(point)`` names a point's phase. A point
    whose logs cannot be read adds no rows (one line on stderr: its own numbers stand)."""
    parts = []
    for res in results:
        parsed, (start, _idle) = rows.of(res), times.get(res.point.name, (None, None))
        if parsed.failed or start is None or parsed.runtime_ms is None:
            continue
        try:
            parts.append(point_seconds(res, host, phase_of(res.point), start, parsed.runtime_ms))
        except (OSError, MemstorError) as err:
            print(f"{experiment}: {res.point.name}: no per-second series ({first_line(err)})", file=sys.stderr)
    parts = [p for p in parts if len(p)]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=SECOND_COLUMNS)


# ------------------------------------------------------------------------------------------ departures


def instead(what: str, value, pts_value, unit: str = "") -> str | None:
    """"<what> <value><unit> instead of <pts><unit>" when a quantity differs from the PTS's, else None."""
    if json.dumps(value, default=str) == json.dumps(pts_value, default=str):
        return None

    def text(x) -> str:
        if isinstance(x, (list, tuple)):
            return ", ".join(num(v) if isinstance(v, (int, float)) else str(v) for v in x) + unit
        return (num(x) if isinstance(x, (int, float)) else str(x)) + unit

    return f"{what} {text(value)} instead of {text(pts_value)}"


def departure(profile: str | None, lengths: list, raw: bool, measured: list) -> str:
    """The ``departure`` text of a run: the profile's shorter or other quantities (``lengths``: texts of
    :func:`instead`, None skipped), the span, the purge, and what was measured (``measured``: texts)."""
    quantities = [x for x in lengths if x]
    parts = [f"{profile or 'this run'}: {', '.join(quantities)}"] if quantities else []
    parts += ([] if raw else [FILE_SPAN]) + [NOT_PURGED] + [m for m in measured if m]
    return "; ".join(parts)


def write_tables(experiment: str, results: list, rows: PointRows, host: str, data_root: Path, make_table,
                 what: str) -> pd.DataFrame:
    """The end of a PTS run: refuse a refused target, write the experiment's table (``make_table(times)``,
    times: :func:`timeline`) and its per-second table ``<experiment>-seconds``, then raise MemstorError (one
    line) when a point failed, naming ``what`` ("points", "groups") kept before it. Returns the table."""
    _fio_run.check_refused(experiment, results)
    times = timeline(results, rows)
    df = make_table(times)
    out = _fio_run.write_table(df, data_root, host, experiment)
    _fio_run.write_table(seconds_table(experiment, results, rows, times, host, lambda p: p.params["phase"]),
                         data_root, host, f"{experiment}-seconds")
    if rows.failure:
        raise MemstorError(f"{experiment}: {rows.failure}; the {what} before it are in {out}; rerun the same "
                           "command to retry it and go on")
    return df
