"""What the fio experiment families share: parameters, points, tidy rows, the sweep run.

Three entry points (called by `memstor.experiments.run_experiment`, i.e. by `memstor run` and the
notebooks) share one shape::

    fn(params, *, data_root, target_dir, host, progress) -> pd.DataFrame

Each validates its profile section into a typed dataclass (UsageError naming the parameter and the
allowed values, before anything runs), prepares the test file (`memstor.measure.target`), chooses the I/O
engine once (`memstor.measure.fio.choose_engine`, O_DIRECT probed when `direct: 1`), runs or resumes its sweep
(`memstor.measure.sweep.run_sweep`, one fio run per point and repetition) and writes the tidy table
`<data>/processed/<host>/<experiment>.csv`: the DESIGN.md fio columns first, then the extra columns in
`EXTRA_COLUMNS`.

Read + write totals: the CSV keeps the schema's directions (read / write) only. The total of a mixed
job is derived by :func:`with_totals` (direction ``"total"``: IOPS and MB/s summed, mean latency
weighted by the number of I/Os). Percentiles of a total cannot be derived from per-direction
percentiles; they are left empty (use :func:`latency_cdf` with ``direction="total"`` on the json+ bins).

The analysis functions are pure (DataFrame in, DataFrame out): :func:`summary` (mean, 95% t-interval
and n over repetitions), :func:`littles_law_table`, :func:`saturation_iodepth`; :func:`latency_cdf`
reads one raw json+ file.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from memstor.core.errors import MemstorError, first_line
from memstor.parse.fio import depth_bucket
from memstor.core.schema import FIO_COLUMNS, FIO_LAT_COLUMNS
from memstor.core.validate import Section

BLOCK_SIZE = "fio-block-size"
RW_RATIO = "fio-rw-ratio"
QUEUE_DEPTH = "fio-queue-depth"

#: Engines a profile may ask for. Synchronous ones keep one I/O in flight per job (iodepth ignored).
ENGINES = ("io_uring", "libaio", "posixaio", "psync", "pvsync", "pvsync2", "sync")
SINGLE_RW = ("randread", "randwrite", "read", "write")
MAX_IODEPTH = 65536
MAX_NUMJOBS = 256
MAX_REPETITIONS = 100
#: Seconds fio needs beyond runtime + ramp (start-up, file open, JSON) for the progress-bar ETA.
OVERHEAD_S = 1.0
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
    # the point's own 95 % interval by batch means over fio's interval logs (memstor.analysis.batch_means):
    "iops_ci_low", "iops_ci_high", "bw_MBps_ci_low", "bw_MBps_ci_high", "lat_mean_us_ci_low", "lat_mean_us_ci_high",
    "ci_method",        # batch-means, or empty when the point has no interval (too few windows, no logs)
    "ci_note",          # ramp excluded, correlated, too few batches, no interval logs
    "precision_pct",    # the profile's target half-width (% of the mean) of IOPS and mean latency; empty: fixed runtime
    "precision_reached",  # with precision_pct: both half-widths within it (else the point ran max_runtime_s)
    "grid_note",        # why the point is in the grid: empty for a listed grid, the reason for an adaptive one
]
COLUMNS = FIO_COLUMNS + EXTRA_COLUMNS


# ------------------------------------------------------------------------------------------- params


@dataclass(frozen=True)
class FioCommon:
    """Parameters every storage experiment shares (validated)."""

    runtime_s: float       # measured seconds per point
    ramp_s: float          # warm-up seconds per point
    file_size: str         # normalised fio size string of the test file
    file_size_bytes: int
    ioengine: str          # preferred engine
    direct: int            # 1 = O_DIRECT
    numjobs: int           # jobs per point
    repetitions: int       # runs of every point
    device: str = ""          # raw block device instead of a test file (only with confirm_device)
    confirm_device: str = ""  # the same device named a second time, on purpose
    precision_pct: float = 0.0  # stop a point when IOPS and mean latency are within +-this % (95 %); 0: fixed runtime
    max_runtime_s: float = 0.0  # with precision_pct: the longest a point runs (s)


_COMMON_KEYS = ("runtime_s", "ramp_s", "file_size", "ioengine", "direct", "numjobs", "repetitions")
#: Keys a section may leave out (default ""): a raw device is used only when both name the same device.
OPTIONAL_KEYS = ("device", "confirm_device")
#: Optional keys of the families whose points may stop when precise (memstor.measure.precision): the target
#: half-width of the 95 % interval of IOPS and mean latency (% of the mean; 0 or absent: fixed runtime_s)
#: and the longest a point may run (s; default MAX_RUNTIME_FACTOR x runtime_s).
PRECISION_KEYS = ("precision_pct", "max_runtime_s")
MAX_RUNTIME_FACTOR = 6


def block_sizes(v: Section, key: str, values: list, common: FioCommon) -> tuple:
    """Validated block sizes (fio size strings, order kept, each once): > 0, <= file size, 512-aligned
    for O_DIRECT."""
    out: list[str] = []
    for value in values:
        text, n = v.size(key, value)
        if n > common.file_size_bytes:
            raise v.error(key, value, f"block size larger than file_size={common.file_size}")
        if common.direct and n % 512:
            raise v.error(key, value, "O_DIRECT (direct: 1) needs a multiple of 512 bytes")
        out.append(text)
    return v.unique(key, out)


def single_block_size(v: Section, params: dict, common: FioCommon, key: str = "bs") -> str:
    """The one block size of a family that takes one (a scalar, or a one-item list), validated."""
    bs = params[key]
    if isinstance(bs, (list, tuple)):
        if len(bs) != 1:
            raise v.error(key, bs, "give one block size, e.g. 4k")
        bs = bs[0]
    return block_sizes(v, key, [bs], common)[0]


def common_params(v: Section, params: dict, keys: Sequence[str] = (), *, precision: bool = False) -> FioCommon:
    """Validate the keys every fio family shares; ``keys`` are the family's own (all required);
    ``precision``: the family also takes :data:`PRECISION_KEYS`."""
    v.keys(params, _COMMON_KEYS + tuple(keys), optional=OPTIONAL_KEYS + (PRECISION_KEYS if precision else ()))
    size_text, size_bytes = v.size("file_size", params["file_size"])
    if size_bytes < 1024 * 1024:
        raise v.error("file_size", params["file_size"], "use at least 1m")
    runtime_s = v.seconds("runtime_s", params["runtime_s"], positive=True)
    pct = params.get("precision_pct") or 0
    if pct:
        pct = v.number("precision_pct", pct)
        if pct > 100:
            raise v.error("precision_pct", pct, "a half-width in % of the mean, e.g. 2 or 5 (0: fixed runtime_s)")
    max_s = params.get("max_runtime_s") or 0
    max_s = v.seconds("max_runtime_s", max_s, positive=True) if max_s else MAX_RUNTIME_FACTOR * runtime_s
    return FioCommon(
        runtime_s=runtime_s,
        ramp_s=v.seconds("ramp_s", params["ramp_s"], positive=False),
        file_size=size_text,
        file_size_bytes=size_bytes,
        ioengine=v.choice("ioengine", params["ioengine"], ENGINES),
        direct=v.integer("direct", params["direct"], 0, 1),
        numjobs=v.integer("numjobs", params["numjobs"], 1, MAX_NUMJOBS),
        repetitions=v.integer("repetitions", params["repetitions"], 1, MAX_REPETITIONS),
        device=str(params.get("device") or ""),
        confirm_device=str(params.get("confirm_device") or ""),
        precision_pct=float(pct),
        max_runtime_s=float(max_s) if pct else 0.0,
    )


def patterns(v: Section, params: dict) -> tuple:
    """The ``rw`` list: single-direction patterns, each once."""
    return v.unique("rw", [v.choice("rw", x, SINGLE_RW) for x in v.items("rw", params["rw"])])


def _num(x: float) -> str:
    """A number for a point name: 10 -> '10', 0.5 -> '0.5'."""
    return str(int(x)) if float(x) == int(x) else f"{x:g}"


def point_params(experiment: str, c: FioCommon, engine: str, *, rw: str, bs: str, iodepth: int,
                 numjobs: int, rwmixread: int | None = None, spec_point: bool = False) -> dict:
    """The JSON-able coordinates of one configuration (without repetition and test file). With a
    precision target, ``runtime_s`` is the longest the point runs and ``precision_pct`` is set (a point
    measured at a fixed runtime has no such key, so its identity is what it always was)."""
    out = {
        "experiment": experiment, "rw": rw, "bs": bs, "iodepth": iodepth, "numjobs": numjobs,
        "rwmixread": rwmixread, "ioengine": engine, "ioengine_requested": c.ioengine, "direct": c.direct,
        "runtime_s": c.runtime_s, "ramp_s": c.ramp_s, "file_size": c.file_size, "spec_point": spec_point,
    }
    if c.precision_pct:
        out.update(runtime_s=c.max_runtime_s, precision_pct=c.precision_pct, typical_runtime_s=c.runtime_s)
    return out


def config_name(p: dict) -> str:
    """File-safe name of a configuration: everything that changes the measurement, but the repetition.

    e.g. ``randread-bs4k-qd32-nj1-io_uring-d1-t10-r2-f4g`` (t runtime s, r ramp s, f file size);
    ``spec-`` prefix for the spec-conditions point, ``-mix70`` for rwmixread; a point with a precision
    target has ``p2-max60`` (precision %, longest runtime s) in place of ``t10``.
    """
    parts = [("spec-" if p.get("spec_point") else "") + p["rw"], f"bs{p['bs']}", f"qd{p['iodepth']}",
             f"nj{p['numjobs']}"]
    if p.get("rwmixread") is not None:
        parts.append(f"mix{p['rwmixread']}")
    time = f"p{_num(p['precision_pct'])}-max{_num(p['runtime_s'])}" if p.get("precision_pct") \
        else f"t{_num(p['runtime_s'])}"
    parts += [p["ioengine"], f"d{p['direct']}", time, f"r{_num(p['ramp_s'])}", f"f{p['file_size']}"]
    return "-".join(parts)


#: Point params that do not change a measurement on one device: the test file's path (another folder on
#: the same filesystem) and the engine asked for (the engine that ran is in the point name).
INCIDENTAL = ("test_file", "ioengine_requested", "grid_note", "typical_runtime_s")


def make_points(configs: Sequence[dict], repetitions: int, test_file: str) -> list:
    """sweep.Point list: every config x repetition, repetitions outer (a first full pass over the grid
    comes first); est_s = runtime + ramp + fio overhead, in seconds (with a precision target the profile's
    runtime_s stands for the runtime: a guess, the point stops when precise or at its longest)."""
    from memstor.measure.sweep import Point

    points = []
    for rep in range(1, repetitions + 1):
        for cfg in configs:
            params = dict(cfg, rep=rep, test_file=test_file)
            runtime = float(cfg.get("typical_runtime_s") or cfg["runtime_s"])
            est = runtime + float(cfg["ramp_s"]) + OVERHEAD_S + 0.1 * cfg["numjobs"]
            points.append(Point(name=f"{config_name(cfg)}-rep{rep}", params=params, est_s=est,
                                incidental=INCIDENTAL))
    return points


#: fio's interval-log window for a point's batch-means interval, ms: 250 up to LOG_WINDOW_LONG_S of runtime
#: (a 10 s point gets ~40 windows, so batches can grow past 10), 500 beyond.
LOG_AVG_MSEC_SHORT, LOG_AVG_MSEC_LONG, LOG_WINDOW_LONG_S = 250, 500, 20.0


def log_avg_msec(runtime_s: float) -> int:
    """The interval-log window (ms) of a point measured for `runtime_s` seconds."""
    return LOG_AVG_MSEC_SHORT if float(runtime_s) <= LOG_WINDOW_LONG_S else LOG_AVG_MSEC_LONG


def fio_job(point, filename: str):
    """The memstor.measure.fio.FioJob of a point (group_reporting, time based), with fio's IOPS, bandwidth
    and latency interval logs in the point's sidecar folder (no histogram log): the point's own interval.
    The logs are not part of the point's identity: a point measured before them stays measured."""
    from memstor.measure.fio import FioJob

    p = point.params
    window = log_avg_msec(p["runtime_s"])
    pct = p.get("precision_pct")
    return FioJob(name=point.name, rw=p["rw"], bs=p["bs"], iodepth=p["iodepth"], numjobs=p["numjobs"],
                  rwmixread=p["rwmixread"], ioengine=p["ioengine"], direct=bool(p["direct"]),
                  size=p["file_size"], runtime_s=p["runtime_s"], ramp_s=p["ramp_s"], time_based=True,
                  group_reporting=True, filename=filename, logs=True, hist_log=False, log_avg_msec=window,
                  status_interval_ms=window if pct else 0, precision_pct=float(pct) if pct else None)


# ---------------------------------------------------------------------------------------- tidy rows


def _directions(rw: str, rwmixread: int | None = None) -> list:
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
    from memstor.core.units import parse_size

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
    from memstor.core.units import parse_size

    rows = []
    for d in _directions(params["rw"], params.get("rwmixread")):
        row = {k: None for k in FIO_COLUMNS}
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
    from memstor.parse.fio import iodepth_levels, load_fio_json, parse_fio

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


# ------------------------------------------------------------------------------------------ running


def _engine(c: FioCommon, directory: Path) -> tuple[str, str]:
    """(engine, why): the preferred engine or its fallback; O_DIRECT probed when direct=1."""
    from memstor.measure.fio import choose_engine, probe_direct

    if c.direct:
        probe_direct(directory)
    return choose_engine(c.ioengine, directory, direct=bool(c.direct))


@dataclass(frozen=True)
class Target:
    """What a fio family measures on: the test file (or raw device), the engine chosen and the medium.

    tf: memstor.measure.target.TestFile; raw: a raw device named twice; engine: the engine that runs and
    why (note = both, for the table); medium: the drive's identity (part of every point's params)."""

    tf: object
    raw: bool
    engine: str
    why: str
    note: str
    medium: dict

    @property
    def info(self) -> dict:
        """The sweep's manifest ``sysinfo`` entry: engines and the test file."""
        return {"ioengine": self.engine, "ioengine_why": self.why, "test_file": str(self.tf.path),
                "test_file_bytes": self.tf.size_bytes}


@contextlib.contextmanager
def fio_target(c: FioCommon, data_root: Path, target_dir: Path | None) -> Iterator[Target]:
    """Hold the test-file folder's lock (one fio sweep at a time per folder: another one must not resize
    the file in use), prepare the test file or check the raw device, choose the engine, yield a Target."""
    from memstor.measure.device import medium_id
    from memstor.core.files import folder_lock
    from memstor.measure.target import prepare_test_file

    raw = bool(c.device or c.confirm_device)
    lock_dir = _test_file_dir(data_root, None if raw else target_dir)
    with folder_lock(lock_dir, "the fio test file"):
        if raw:
            tf = prepare_test_file(c.file_size_bytes, data_root, target_dir, device=c.device or None,
                                   confirm_device=c.confirm_device or None)
            engine, why = c.ioengine, f"{c.ioengine} as asked (raw device {tf.path}: not probed)"
        else:
            tf = prepare_test_file(c.file_size_bytes, data_root, target_dir)
            engine, why = _engine(c, Path(tf.path).parent)
        note = f"{engine} ({why})" if why else engine
        # the medium is part of each point's identity: another drive is another point
        yield Target(tf=tf, raw=raw, engine=engine, why=why, note=note, medium=medium_id(tf.path, raw))


def result_rows(results: list, host: str, note: str, data_root: Path) -> list:
    """Tidy rows of sweep results: each point's raw fio output parsed (:func:`point_rows`), or failed rows."""
    rows: list = []
    for res in results:
        p = res.point
        if res.status == "failed" or res.raw is None:
            rows += failed_rows(p.params, p.name, host, res.error or "failed", None, note)
            continue
        source = _relative(res.raw, data_root)
        try:
            text = Path(res.raw).read_text(encoding="utf-8", errors="replace")
        except OSError as err:
            rows += failed_rows(p.params, p.name, host, f"{source}: {err.strerror}", source, note)
            continue
        rows += with_intervals(point_rows(text, source, p.params, p.name, host, note), res)
    return rows


def with_intervals(rows: list, res) -> list:
    """`rows` of one measured point with its batch-means interval columns (memstor.analysis.batch_means)
    from the interval logs in its sidecar folder, or, for a point with a precision target, from fio's
    status snapshots there (the series its stop rule saw, memstor.measure.precision) plus
    ``precision_pct`` and ``precision_reached``. No logs (a point measured before memstor wrote them) or
    unreadable ones give empty bounds and the reason in ``ci_note``; never a failed point."""
    from memstor.analysis.batch_means import ci_columns
    from memstor.measure.sweep import sidecar_dir

    folder = sidecar_dir(Path(res.raw).parent, res.point)
    pct = res.point.params.get("precision_pct")
    intervals, why, reached = None, "no interval logs", None
    try:
        if pct:
            intervals, reached, why = _precision_windows(folder, float(pct), res.point.params)
        elif folder.is_dir():
            from memstor.analysis.batch_means import point_intervals

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
    from memstor.measure.precision import rule_as_applied
    from memstor.parse.fio_status import STATUS_NAME, read_status, status_windows

    status = folder / STATUS_NAME
    if not status.is_file():
        return None, False, "no fio status snapshots (the point ended before its first one)"
    docs = read_status(status.read_text(encoding="utf-8", errors="replace"))
    used, v = rule_as_applied(docs, pct)
    return status_windows(docs[:used]), v.reached, f"status windows of {log_avg_msec(params['runtime_s'])} ms"


def check_refused(experiment: str, results: list) -> None:
    """MemstorError when every point was refused because another medium's data holds its name (then the
    processed table of that data is left as it is)."""
    from memstor.measure.sweep import KEPT

    refused = [r for r in results if r.status == "failed" and KEPT in (r.error or "")]
    if refused and len(refused) == len(results):
        raise MemstorError(f"{experiment}: {refused[0].error} (all {len(results)} points)")


def write_table(df: pd.DataFrame, data_root: Path, host: str, name: str) -> Path:
    """Write `df` atomically to ``<data>/processed/<host>/<name>.csv``; the path."""
    from memstor.core.files import atomic_write
    from memstor.measure.sweep import processed_path

    out = processed_path(data_root, host, name)
    out.parent.mkdir(parents=True, exist_ok=True)
    buf = io.StringIO()
    df.to_csv(buf, index=False)
    atomic_write(out, buf.getvalue())
    return out


def report_failures(experiment: str, df: pd.DataFrame, n_points: int, out: Path, data_root: Path,
                    host: str) -> None:
    """MemstorError when every point failed; a one-line warning on stderr when some did."""
    from memstor.measure.sweep import raw_dir

    failed = sorted(set(df.loc[df["status"] == "failed", "point"]))
    if failed and len(failed) == n_points:
        first = df.loc[df["status"] == "failed", "error"].iloc[0]
        raise MemstorError(f"{experiment}: all {n_points} points failed (first: {first}); "
                           f"see {raw_dir(data_root, host, experiment)} and rerun to retry")
    if failed:
        print(f"{experiment}: {len(failed)} of {n_points} points failed (status failed in {out}); "
              f"rerun the same command to retry them", file=sys.stderr)


def recorded_target(experiment: str, c: FioCommon, data_root: Path, target_dir: Path | None,
                    host: str) -> Target | None:
    """The Target the last sweep of `experiment` used, from its manifest, when it is this run's test file (same
    path and size) and engine request; None otherwise (and always for a raw device). Nothing is prepared or
    probed: it lets a run whose points are all measured re-analyse without touching the test file or fio."""
    from memstor.measure.device import medium_id
    from memstor.core.files import read_json
    from memstor.measure.sweep import MANIFEST, raw_dir
    from memstor.measure.target import TESTFILE_NAME, TestFile

    if c.device or c.confirm_device:
        return None
    info = (read_json(raw_dir(data_root, host, experiment) / MANIFEST) or {}).get("sysinfo") or {}
    folder = Path(target_dir) if target_dir is not None else Path(data_root) / "scratch"
    path = folder.expanduser().resolve() / TESTFILE_NAME
    same = (info.get("ioengine_requested") == c.ioengine and info.get("ioengine")
            and info.get("test_file") == str(path) and info.get("test_file_bytes") == c.file_size_bytes)
    if not same or not folder.is_dir():
        return None
    engine, why = str(info["ioengine"]), str(info.get("ioengine_why") or "")
    return Target(tf=TestFile(path=path, size_bytes=c.file_size_bytes, created=True, reused=True), raw=False,
                  engine=engine, why=why, note=f"{engine} ({why})" if why else engine,
                  medium=medium_id(path, False))


class HeldTarget:
    """The target of a run made of several sweeps (the adaptive grid's rounds): the first sweep that
    measures enters :func:`fio_target` (lock, test file, engine probe) and the later ones reuse it, so the
    folder stays locked between rounds and the engine is probed once (one FioRunner, whose engine and
    O_DIRECT checks are cached, serves every round). Use as a context manager; it releases the lock on exit.
    Rounds that only read measured points never enter it."""

    def __init__(self) -> None:
        self._stack = contextlib.ExitStack()
        self.target: Target | None = None
        self._runner = None

    def runner(self, jobs: dict):
        """The run's FioRunner (memstor.measure.fio), given this round's jobs."""
        from memstor.measure.fio import FioRunner

        if self._runner is None:
            self._runner = FioRunner(jobs)
        else:
            self._runner.jobs = dict(jobs)
        return self._runner

    def enter(self, c: FioCommon, data_root: Path, target_dir: Path | None) -> Target:
        """The held Target, entering :func:`fio_target` the first time."""
        if self.target is None:
            self.target = self._stack.enter_context(fio_target(c, data_root, target_dir))
        return self.target

    def __enter__(self) -> HeldTarget:
        return self

    def __exit__(self, *exc) -> None:
        self._stack.close()
        self.target = None


def on_target(experiment: str, c: FioCommon, data_root: Path, target_dir: Path | None, host: str, body,
              held: HeldTarget | None = None):
    """``body(target)`` of a fio family: first on the target its last sweep recorded, reading only (no test
    file prepared, no engine probed, no fio started; memstor.measure.sweep.only_measured), and when a point
    is not measured yet, under :func:`fio_target` (lock, test file, engine) where the sweep measures it.
    Returns what ``body`` returns. A re-run on measured data (a notebook's Run All) thus only re-reads.
    With ``held`` (a :class:`HeldTarget`), a target it already holds is used as it is, and one entered here
    stays held for the next call."""
    from memstor.measure.sweep import NotAllMeasured, only_measured

    if held is not None and held.target is not None:
        return body(held.target)
    recorded = recorded_target(experiment, c, data_root, target_dir, host)
    if recorded is not None:
        try:
            with only_measured():
                return body(recorded)
        except NotAllMeasured:
            pass
    if held is not None:
        return body(held.enter(c, data_root, target_dir))
    with fio_target(c, data_root, target_dir) as t:
        return body(t)


def run_family(experiment: str, configs_fn, validated, *, data_root: Path, target_dir: Path | None, host: str,
               progress: bool, held: HeldTarget | None = None) -> pd.DataFrame:
    """Shared body of the fio families' ``run``: test file, engine, sweep, parse, CSV. ``configs_fn(validated,
    engine)`` lists the point parameters (:func:`point_params`); ``validated.common`` is a FioCommon.

    When the last sweep's manifest names this test file and every point of the plan is measured, the run
    only reads them: no test file is prepared and no fio process starts (re-running a notebook in the lab
    re-analyses). ``held``: a :class:`HeldTarget` shared by the calls of one run (see :func:`on_target`)."""
    from memstor.measure.fio import FioRunner
    from memstor.measure.sweep import run_sweep

    c: FioCommon = validated.common
    data_root = Path(data_root)

    def body(t: Target) -> tuple[Target, list, list]:
        points = make_points([dict(cfg, medium=t.medium) for cfg in configs_fn(validated, t.engine)],
                             c.repetitions, str(t.tf.path))
        jobs = {p.name: fio_job(p, str(t.tf.path)) for p in points}
        runner = held.runner(jobs) if held is not None else FioRunner(jobs)
        results = run_sweep(experiment, points, runner, data_root, host,
                            sysinfo={"ioengine_requested": c.ioengine, **t.info}, progress=progress)
        _remove_when_full(results, t.tf)
        return t, points, results

    t, points, results = on_target(experiment, c, data_root, target_dir, host, body, held)
    check_refused(experiment, results)
    df = to_frame(result_rows(results, host, t.note, data_root))
    out = write_table(df, data_root, host, experiment)
    report_failures(experiment, df, len(points), out, data_root, host)
    return df


def _test_file_dir(data_root: Path, target_dir: Path | None) -> Path:
    """The folder the test file goes to (checked for safety, created when it is the default scratch)."""
    from memstor.measure.target import check_directory

    if target_dir is not None:
        return check_directory(Path(target_dir))
    scratch = Path(data_root) / "scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    return check_directory(scratch, given_as="scratch directory")


def _remove_when_full(results: list, tf) -> None:
    """Delete the test file when a point failed because its filesystem filled up (ENOSPC)."""
    from memstor.measure.target import remove_test_file

    full = [r for r in results if r.status == "failed" and "No space left" in (r.error or "")]
    if full:
        remove_test_file(tf)
        print(f"the filesystem of {tf.path} filled up during point {full[0].point.name}: test file removed; "
              "free some space and rerun the same command to resume", file=sys.stderr)


def _relative(path: Path, root: Path) -> str:
    """path relative to root when inside it (portable `source` column), else absolute."""
    try:
        return str(Path(path).resolve().relative_to(Path(root).resolve()))
    except ValueError:
        return str(Path(path).resolve())


def load(data_root: Path | str, host: str, experiment: str) -> pd.DataFrame:
    """The processed table of an experiment, read back from `<data>/processed/<host>/<experiment>.csv`."""
    from memstor.measure.sweep import processed_path

    path = processed_path(Path(data_root), host, experiment)
    if not path.is_file():
        raise MemstorError(f"{path}: no processed table; run `memstor run {experiment}` first")
    return pd.read_csv(path)
