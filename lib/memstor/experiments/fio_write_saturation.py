"""fio-write-saturation: the SNIA PTS write saturation test (WSAT): how writes slow down as data piles up.

A consumer SSD writes fast into its SLC cache (flash used one bit per cell) until that cache is full, then
falls to the speed of its native TLC/QLC flash: a "cliff" in throughput against time and against the total
data written. PTS 2.0.2's WSAT writes 4 KiB random writes at T4 Q32 (4 jobs x 32 outstanding I/Os each) to a
purged device, continuously, until 4 x the user capacity is written or 24 h have passed, and plots IOPS
against time and against the total GB written (TGBW). Here, one run:

- **Workloads** (``workloads``: "rw bs" strings, rw ``randwrite`` or ``write``): the PTS case (``randwrite
  4k``) and the consumer "copy a big file" case (``write 128k``), each at ``iodepth`` x ``numjobs`` (a sequential
  workload's jobs each stream through their own span / numjobs region: memstor.measure.fio.job_regions).
- **Span**: the test file, or on a raw device named twice (``device`` + ``confirm_device``) the whole device.
  The ``span`` column says which: a test file is a share of a drive with a filesystem in the path, not the
  PTS's whole purged device.
- **One point per workload x repetition**, not time based: each job writes ``io_size`` =
  ``capacity_multiple`` x span / ``numjobs`` (rounded down to whole blocks; fio's ``--io_size``, per job) and
  the point stops there or at ``max_runtime_s``, whichever comes first (``stopped_by``). Points are resumable;
  a rerun measures nothing new. Nothing is purged: memstor does not secure-erase (``state_at_start``).
- **Logs**: fio's bandwidth, IOPS and latency logs in 100 ms windows and its completion-latency histogram log
  in 1 s windows, kept raw in ``<point>.files/``. The per-second I/Os and bytes count completions from the
  histogram log (exact per window), then each job's bandwidth log after its last histogram window, which
  fio-3.33 never writes (memstor.experiments._wsat_tables.SECOND_COLUMNS says why not the IOPS log). Why 100 ms:
  fio up to 3.36 never writes a job's last window either (3.42 writes it, partial), so the series misses each job's last ``log_avg_msec`` of
  writing (measured on this 2-vCPU KVM VM, 4 KiB random writes, QD32 x 4, bytes-stopped runs, series / fio's
  count: 1000 ms windows 0.785 at 2.7 s, 0.908 at 8.5 s; 100 ms windows 0.972 at 3.1 s, 0.991 at 11.1 s,
  1.001 at 26.4 s). Points longer than :data:`LONG_RUN_S` log 1000 ms windows (a day of 100 ms windows is
  ~10^7 log lines) and histogram windows of :func:`log_windows` seconds (at most :data:`MAX_HIST_WINDOWS` per
  job log: 1859 numbers a line).
- **Temperature**: :class:`memstor.measure.thermal.ThermalSampler` reads the drive every
  ``thermal_interval_s`` seconds during the sweep into ``thermal-<UTC>.jsonl`` in the raw folder (not
  available, with the reason, on a virtual disk or without root); its samples are assigned to the point
  whose run (meta ``start_time`` .. ``end_time``, UTC) they fall in.

Tables, ``<data>/processed/<device>/`` (memstor.experiments._wsat_tables):

- ``fio-write-saturation.csv``: one row per point x direction (writes): memstor's fio columns (``config`` =
  the point without its repetition), then :data:`WSAT_COLUMNS`;
- ``fio-write-saturation-seconds.csv``: one row per point x second (:data:`SECOND_COLUMNS`);
- ``fio-write-saturation-thermal.csv``: the drive's temperature per point (:data:`THERMAL_COLUMNS`).
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

import memstor.experiments._fio_params as _fio_params
import memstor.experiments._fio_points as _fio_points
import memstor.experiments._fio_run as _fio_run
import memstor.experiments._fio_target as _fio_target
import memstor.experiments._wsat_tables as _tables
from memstor.core.files import utc_now
from memstor.core.units import parse_size
from memstor.core.validate import Section
from memstor.experiments.fio_load_latency import LOG_TAIL_S
from memstor.measure.fio import FioJob, FioRunner
from memstor.measure.sweep import Point, SweepSession, is_cached, raw_dir, run_sweep
from memstor.measure.thermal import ThermalSampler

EXPERIMENT = "fio-write-saturation"
NOTEBOOK = "55-fio-write-saturation"
KIND = "fio"
OPTIONAL_KEYS = _fio_params.OPTIONAL_KEYS
#: This family's own keys, beside the common fio keys but runtime_s and ramp_s (the run stops at the bytes or
#: max_runtime_s; every byte counts from the first write).
KEYS = ("workloads", "iodepth", "capacity_multiple", "max_runtime_s", "thermal_interval_s")
SECONDS_TABLE = f"{EXPERIMENT}-seconds"
THERMAL_TABLE = f"{EXPERIMENT}-thermal"
#: The tables' columns (memstor.experiments._wsat_tables): the point table, the per-second table, the thermal one.
WSAT_COLUMNS, TABLE_COLUMNS = _tables.WSAT_COLUMNS, _tables.TABLE_COLUMNS
SECOND_COLUMNS, THERMAL_COLUMNS = _tables.SECOND_COLUMNS, _tables.THERMAL_COLUMNS
WSAT_RW = ("randwrite", "write")
MAX_CAPACITY_MULTIPLE = 100
MAX_THERMAL_INTERVAL_S = 3600
#: Interval-log window (ms) of the bandwidth, IOPS and latency logs up to LONG_RUN_S of max_runtime_s, and beyond.
LOG_AVG_MSEC, LONG_LOG_AVG_MSEC, LONG_RUN_S = 100, 1000, 3600.0
#: Most histogram-log windows per job a point may write (1 s windows up to an hour, longer ones beyond).
MAX_HIST_WINDOWS = 3600
#: Write speed assumed for the progress bar's ETA (bytes/s, decimal): a point's estimate is its target bytes at
#: this speed, capped by max_runtime_s (this VM's virtio disk: ~0.13-0.6 GB/s random 4 KiB, ~1.8 GB/s 128 KiB
#: sequential at QD32 x 4).
ETA_WRITE_BPS = {"randwrite": 200e6, "write": 1000e6}
#: Point params that do not change the measurement (besides the test file's path): the target's state when
#: the point started, recorded for the table.
INCIDENTAL = (*_fio_points.INCIDENTAL, "state_at_start")
FRESH_FILE = "fresh test file (created for this run: written once sequentially when made)"
REUSED_FILE = "test file as earlier runs left it (not purged: memstor does not secure-erase)"
RAW_DEVICE = "device as found (not purged: memstor does not secure-erase)"


@dataclass(frozen=True)
class WsatParams:
    """fio-write-saturation: every workload written continuously to capacity_multiple x span (or a time cap)."""

    common: _fio_params.FioCommon  # runtime_s = max_runtime_s, ramp_s = 0 (not profile keys here)
    workloads: tuple           # ((rw, bs), ...): rw randwrite | write, bs a normalised fio size string
    iodepth: int               # outstanding I/Os per job (PTS: 32)
    capacity_multiple: float   # bytes to write per point = this x span (PTS: 4)
    max_runtime_s: float       # time cap per point, s (PTS: 86400)
    thermal_interval_s: float  # seconds between two drive-temperature readings


def _workloads(v: Section, params: dict, c: _fio_params.FioCommon) -> tuple:
    """The ``workloads`` list: "rw bs" strings -> ((rw, bs), ...), each once."""
    out = []
    for item in v.items("workloads", params["workloads"]):
        parts = item.split() if isinstance(item, str) else []
        if len(parts) != 2 or parts[0] not in WSAT_RW:
            raise v.error("workloads", item, "a list of \"rw bs\" strings with rw randwrite or write, e.g. "
                          "[\"randwrite 4k\", \"write 128k\"]")
        out.append((parts[0], _fio_params.block_sizes(v, "workloads", [parts[1]], c)[0]))
    return v.unique("workloads", out)


def wsat_params(params: dict) -> WsatParams:
    """Validate a fio-write-saturation section (UsageError naming the parameter, the value and the way out)."""
    v = Section(EXPERIMENT)
    for key in ("runtime_s", "ramp_s"):
        if key in params:
            raise v.error(key, params[key], "not a key of this family: a point stops at capacity_multiple x span "
                          "or max_runtime_s, and every byte counts from the first write; remove it")
    c = _fio_params.common_params(v, {**params, "runtime_s": 1, "ramp_s": 0}, KEYS)  # checks the keys first
    max_s = v.seconds("max_runtime_s", params["max_runtime_s"], positive=True)
    c = dataclasses.replace(c, runtime_s=max_s)
    if bool(c.device) != bool(c.confirm_device):
        key = "confirm_device" if c.device else "device"
        raise v.error(key, params.get(key, ""), f"the same device as {'device' if c.device else 'confirm_device'} "
                      "(a raw device is overwritten: name it twice on purpose), or both empty for a test file")
    multiple = v.number("capacity_multiple", params["capacity_multiple"])
    if multiple > MAX_CAPACITY_MULTIPLE:
        raise v.error("capacity_multiple", multiple, f"at most {MAX_CAPACITY_MULTIPLE} (PTS: 4 x the capacity)")
    interval = v.number("thermal_interval_s", params["thermal_interval_s"])
    if interval > MAX_THERMAL_INTERVAL_S:
        raise v.error("thermal_interval_s", interval, f"seconds between readings, at most {MAX_THERMAL_INTERVAL_S}")
    sp = WsatParams(common=c, workloads=_workloads(v, params, c),
                    iodepth=v.integer("iodepth", params["iodepth"], 1, _fio_params.MAX_IODEPTH),
                    capacity_multiple=multiple, max_runtime_s=max_s, thermal_interval_s=interval)
    if not c.device:
        for _rw, bs in sp.workloads:
            io_size_per_job(sp, c.file_size_bytes, bs)  # the multiple writes at least a block per job
    return sp


validate = wsat_params


# ------------------------------------------------------------------------------------------- points


def io_size_per_job(sp: WsatParams, span_bytes: int, bs: str) -> int:
    """Bytes each job writes: capacity_multiple x span / numjobs, rounded down to whole blocks of ``bs``;
    UsageError naming capacity_multiple when that is not one block."""
    bs_bytes = parse_size(bs)
    per_job = int(sp.capacity_multiple * span_bytes // sp.common.numjobs) // bs_bytes * bs_bytes
    if per_job < bs_bytes:
        raise Section(EXPERIMENT).error("capacity_multiple", sp.capacity_multiple, f"large enough that each of "
                                        f"the {sp.common.numjobs} jobs writes at least one {bs} block of the "
                                        f"{span_bytes}-byte span")
    return per_job


def log_windows(max_runtime_s: float) -> tuple[int, int]:
    """(log_avg_msec, log_hist_msec) of a point capped at ``max_runtime_s`` seconds: 100 ms interval-log windows
    and 1 s histogram windows up to an hour, then 1 s and whole seconds keeping <= MAX_HIST_WINDOWS lines."""
    avg = LOG_AVG_MSEC if max_runtime_s <= LONG_RUN_S else LONG_LOG_AVG_MSEC
    return avg, 1000 * max(1, math.ceil(max_runtime_s / MAX_HIST_WINDOWS))


def _num(x: float) -> str:
    """A number for a point name: 4 -> '4', 0.5 -> '0.5'."""
    return str(int(x)) if float(x) == int(x) else f"{x:g}"


def point_config(sp: WsatParams, engine: str, rw: str, bs: str, span_bytes: int, raw: bool) -> dict:
    """The JSON-able coordinates of one workload (no repetition, test file or state)."""
    c = sp.common
    per_job = io_size_per_job(sp, span_bytes, bs)
    avg_ms, hist_ms = log_windows(sp.max_runtime_s)
    return {"experiment": EXPERIMENT, "rw": rw, "bs": bs, "iodepth": sp.iodepth, "numjobs": c.numjobs,
            "rwmixread": None, "ioengine": engine, "ioengine_requested": c.ioengine, "direct": c.direct,
            "runtime_s": sp.max_runtime_s, "ramp_s": 0, "file_size": str(span_bytes) if raw else c.file_size,
            "spec_point": False, "span_bytes": span_bytes, "span": "full_device" if raw else "file",
            "capacity_multiple": sp.capacity_multiple, "io_size_bytes": per_job,
            "target_bytes": per_job * c.numjobs, "log_avg_msec": avg_ms, "log_hist_msec": hist_ms}


def point_name(cfg: dict, rep: int) -> str:
    """e.g. ``randwrite-bs4k-qd32x4-x4-max60-io_uring-d1-f1g-rep1`` (x: capacity multiple; max: time cap, s;
    f: the test file's size, or the raw device's bytes)."""
    return (f"{cfg['rw']}-bs{cfg['bs']}-qd{cfg['iodepth']}x{cfg['numjobs']}-x{_num(cfg['capacity_multiple'])}-"
            f"max{_num(cfg['runtime_s'])}-{cfg['ioengine']}-d{cfg['direct']}-f{cfg['file_size']}-rep{rep}")


def est_s(cfg: dict) -> float:
    """The progress bar's estimate of a point (s): its bytes at ETA_WRITE_BPS, capped by its time cap."""
    write_s = cfg["target_bytes"] / ETA_WRITE_BPS[cfg["rw"]]
    return min(write_s, float(cfg["runtime_s"]) + LOG_TAIL_S) + _fio_points.OVERHEAD_S + 0.1 * cfg["numjobs"]


def make_points(sp: WsatParams, engine: str, span_bytes: int, raw: bool, medium: str, test_file: str) -> list:
    """sweep.Points of every workload x repetition (repetitions outer), state not set yet."""
    configs = [point_config(sp, engine, rw, bs, span_bytes, raw) for rw, bs in sp.workloads]
    return [Point(name=point_name(cfg, rep), params=dict(cfg, rep=rep, medium=medium, test_file=test_file),
                  est_s=est_s(cfg), incidental=INCIDENTAL)
            for rep in range(1, sp.common.repetitions + 1) for cfg in configs]


def with_states(points: list, pending: set, first_state: str) -> list:
    """``points`` with ``state_at_start`` in their params (incidental: not part of a point's identity): the
    target's state up to the first point the sweep will measure (``pending``: the names not measured yet),
    then the point before for each later one. A measured point keeps the state its meta recorded."""
    first = next((i for i, p in enumerate(points) if p.name in pending), len(points))
    return [Point(name=p.name, est_s=p.est_s, incidental=p.incidental, params=dict(
        p.params, state_at_start=first_state if i <= first else
        f"as the point before left it ({points[i - 1].name}; not purged between points)"))
        for i, p in enumerate(points)]


def fio_job(point: Point, filename: str) -> FioJob:
    """The FioJob of a point: not time based, io_size per job, runtime = max_runtime_s + LOG_TAIL_S (fio-3.33
    drops a run's last log window: a time-capped run keeps its last whole second), logs and histogram log."""
    p = point.params
    return FioJob(name=point.name, rw=p["rw"], bs=p["bs"], iodepth=p["iodepth"], numjobs=p["numjobs"],
                  ioengine=p["ioengine"], direct=bool(p["direct"]), size=p["file_size"],
                  io_size=str(p["io_size_bytes"]), runtime_s=float(p["runtime_s"]) + LOG_TAIL_S, ramp_s=0,
                  time_based=False, group_reporting=True, filename=filename, logs=True, hist_log=True,
                  log_avg_msec=int(p["log_avg_msec"]), log_hist_msec=int(p["log_hist_msec"]))


# ------------------------------------------------------------------------------------------ running




def start_state(t: _fio_target.Target) -> str:
    """The target's state before the sweep's first point: a raw device as found, a fresh or a reused test file."""
    return RAW_DEVICE if t.raw else REUSED_FILE if t.tf.reused else FRESH_FILE


def thermal_file(directory: Path) -> Path:
    """A new sampler file in the raw folder: ``thermal-<UTC stamp>.jsonl``."""
    return directory / f"thermal-{re.sub(r'[^0-9TZ]', '', utc_now())}.jsonl"


def run_write_saturation(params: dict, *, data_root: Path, target_dir: Path | None, host: str,
                         progress: bool = True, session: SweepSession | None = None) -> pd.DataFrame:
    """Run or resume fio-write-saturation; write its three tables and return the main one. session: the run's
    memstor.measure.sweep.SweepSession (default: one of this call alone)."""
    session = session if session is not None else SweepSession()
    sp = wsat_params(params)
    data_root = Path(data_root)
    directory = raw_dir(data_root, host, EXPERIMENT)

    def body(t: _fio_target.Target):
        span = _fio_target.span_bytes(t)
        points = make_points(sp, t.engine, span, t.raw, t.medium, str(t.tf.path))
        runner = FioRunner({p.name: fio_job(p, str(t.tf.path)) for p in points})
        pending = {p.name for p in points if not is_cached(p, runner, directory)}
        points = with_states(points, pending, start_state(t))
        info = {"ioengine_requested": sp.common.ioengine, "span_bytes": span, **t.info}
        if session.only_measured or not pending:
            results = run_sweep(EXPERIMENT, points, runner, data_root, host, sysinfo=info, progress=progress,
                                session=session)
        else:
            directory.mkdir(parents=True, exist_ok=True)
            with ThermalSampler(t.tf.path, thermal_file(directory), sp.thermal_interval_s):
                results = run_sweep(EXPERIMENT, points, runner, data_root, host, sysinfo=info, progress=progress,
                                    session=session)
        _fio_target.remove_when_full(results, t.tf)
        return t, points, results

    t, points, results = _fio_target.on_target(EXPERIMENT, sp.common, data_root, target_dir, host, body,
                                               session=session)
    _fio_run.check_refused(EXPERIMENT, results)
    table, seconds, thermal = _tables.result_tables(results, host, t.note, data_root, directory)
    out = _fio_run.write_table(table, data_root, host, EXPERIMENT)
    _fio_run.write_table(seconds, data_root, host, SECONDS_TABLE)
    _fio_run.write_table(thermal, data_root, host, THERMAL_TABLE)
    _fio_run.write_bins(results, data_root, host, EXPERIMENT)
    _fio_run.report_failures(EXPERIMENT, table, len(points), out, data_root, host)
    return table


run = run_write_saturation
