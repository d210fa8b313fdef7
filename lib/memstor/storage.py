"""Storage experiments: fio block-size, read/write-ratio and queue-depth sweeps, and their analysis.

Three entry points (called by `memstor.experiments.run_experiment`, i.e. by `memstor run` and the
notebooks) share one shape::

    fn(params, *, data_root, target_dir, host, progress) -> pd.DataFrame

Each validates its profile section into a typed dataclass (UsageError naming the parameter and the
allowed values, before anything runs), prepares the test file (`memstor.target`), chooses the I/O
engine once (`memstor.fio.choose_engine`, O_DIRECT probed when `direct: 1`), runs or resumes its sweep
(`memstor.sweep.run_sweep`, one fio run per point and repetition) and writes the tidy table
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

import io
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .errors import MemstorError, UsageError
from .schema import FIO_COLUMNS

BLOCK_SIZE = "fio-block-size"
RW_RATIO = "fio-rw-ratio"
QUEUE_DEPTH = "fio-queue-depth"

#: Engines a profile may ask for. Synchronous ones keep one I/O in flight per job (iodepth ignored).
ENGINES = ("io_uring", "libaio", "posixaio", "psync", "pvsync", "pvsync2", "sync")
SYNC_ENGINES = ("psync", "pvsync", "pvsync2", "sync")
SINGLE_RW = ("randread", "randwrite", "read", "write")
MAX_IODEPTH = 65536
MAX_NUMJOBS = 256
MAX_REPETITIONS = 100
#: Seconds fio needs beyond runtime + ramp (start-up, file open, JSON) for the progress-bar ETA.
OVERHEAD_S = 1.0
#: Little's law: flag a point whose X*R differs from the intended outstanding I/O by more than this.
LITTLE_TOL_PCT = 5.0
#: fio's iodepth_level: the intended depth counts as reached when at least this share of the I/Os was
#: submitted with the queue at the intended depth bucket.
DEPTH_REACHED_PCT = 90.0
#: Metrics summarised over repetitions (units in the names).
METRICS = ("iops", "bw_MBps", "lat_mean_us", "clat_p50_us", "clat_p99_us", "clat_p99_9_us")
_LAT_COLUMNS = ("lat_mean_us", "lat_stddev_us", "lat_min_us", "lat_max_us", "clat_p50_us", "clat_p90_us",
                "clat_p99_us", "clat_p99_9_us", "clat_p99_99_us")
_METRIC_COLUMNS = ("iops", "bw_MBps", *_LAT_COLUMNS, "runtime_s", "total_ios")

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


@dataclass(frozen=True)
class BlockSizeParams:
    """fio-block-size: random rw at every bs, sequential read/write at every seq_bs, fixed iodepth."""

    common: FioCommon
    iodepth: int
    bs: tuple          # fio size strings, normalised (4k, 64k, 1m)
    rw: tuple          # random (or sequential) patterns for the bs list
    seq_bs: tuple      # sizes for sequential read and write (may be empty)


@dataclass(frozen=True)
class RwRatioParams:
    """fio-rw-ratio: randrw at every rwmixread (% reads) x bs, fixed iodepth."""

    common: FioCommon
    iodepth: int
    rwmixread: tuple   # percent reads, 0..100
    bs: tuple


@dataclass(frozen=True)
class QueueDepthParams:
    """fio-queue-depth: every rw at every iodepth (numjobs jobs), plus the spec-conditions point."""

    common: FioCommon
    bs: str
    rw: tuple
    iodepth: tuple
    spec_iodepth: int  # 0 = no spec-conditions point
    spec_numjobs: int


_COMMON_KEYS = ("runtime_s", "ramp_s", "file_size", "ioengine", "direct", "numjobs", "repetitions")
_KEYS = {
    BLOCK_SIZE: _COMMON_KEYS + ("iodepth", "bs", "rw", "seq_bs"),
    RW_RATIO: _COMMON_KEYS + ("iodepth", "rwmixread", "bs"),
    QUEUE_DEPTH: _COMMON_KEYS + ("bs", "rw", "iodepth", "spec_iodepth", "spec_numjobs"),
}
_IGNORED_KEYS = ("profile",)
#: Keys a section may leave out (default ""): a raw device is used only when both name the same device.
_OPTIONAL_KEYS = ("device", "confirm_device")


def _bad(experiment: str, key: str, value: Any, want: str) -> UsageError:
    """The one-line error for a bad parameter value."""
    return UsageError(f"{experiment}: parameter {key}={value!r} is invalid: {want} "
                      f"(fix params/<profile>.yaml, the notebook parameter or --set {key}=...)")


def _check_keys(experiment: str, params: dict) -> None:
    """UsageError for a missing or unknown key of the profile section."""
    if not isinstance(params, dict):
        raise UsageError(f"{experiment}: parameters must be a mapping of the profile section, got "
                         f"{type(params).__name__}")
    known = _KEYS[experiment]
    for key in params:
        if key not in known and key not in _IGNORED_KEYS and key not in _OPTIONAL_KEYS:
            raise UsageError(f"{experiment}: unknown parameter {key!r}; known: {', '.join(known + _OPTIONAL_KEYS)}")
    for key in known:
        if key not in params:
            raise UsageError(f"{experiment}: missing parameter {key!r}; add it to the profile section "
                             f"(see params/standard.yaml)")


def _int(experiment: str, params: dict, key: str, lo: int, hi: int, value: Any = None) -> int:
    """An integer in lo..hi (an int-valued float or digit string is accepted)."""
    v = params[key] if value is None else value
    try:
        if isinstance(v, bool):
            raise ValueError
        n = int(v) if not isinstance(v, str) else int(v.strip())
        if isinstance(v, float) and v != n:
            raise ValueError
    except (TypeError, ValueError):
        raise _bad(experiment, key, v, f"use an integer {lo}..{hi}") from None
    if not lo <= n <= hi:
        raise _bad(experiment, key, v, f"use an integer {lo}..{hi}")
    return n


def _seconds(experiment: str, params: dict, key: str, positive: bool) -> float:
    """A number of seconds: > 0 (positive) or >= 0."""
    v = params[key]
    want = "use a number of seconds > 0" if positive else "use a number of seconds >= 0"
    try:
        if isinstance(v, bool):
            raise ValueError
        x = float(v)
    except (TypeError, ValueError):
        raise _bad(experiment, key, v, want) from None
    if not math.isfinite(x) or x < 0 or (positive and x == 0) or x > 7 * 86400:
        raise _bad(experiment, key, v, want)
    return int(x) if x == int(x) else x


def _size(experiment: str, key: str, v: Any) -> tuple[str, int]:
    """(normalised fio size string, bytes) of a size like 4k, 64k, 1m; > 0."""
    from .units import format_size, parse_size

    want = "use a size > 0 like 4k, 64k, 1m (k/m/g = KiB/MiB/GiB)"
    if isinstance(v, bool):
        raise _bad(experiment, key, v, want)
    try:
        n = int(v) if isinstance(v, int) else parse_size(str(v).strip())
    except (TypeError, ValueError):
        raise _bad(experiment, key, v, want) from None
    if n <= 0:
        raise _bad(experiment, key, v, want)
    return format_size(n), n


def _list(experiment: str, params: dict, key: str, allow_empty: bool = False) -> list:
    """A list parameter (a scalar is taken as a one-element list); non-empty unless allow_empty."""
    v = params[key]
    if v is None or v == "":
        v = []
    if not isinstance(v, (list, tuple)):
        v = [v]
    if not v and not allow_empty:
        raise _bad(experiment, key, v, "give at least one value")
    return list(v)


def _choice(experiment: str, key: str, v: Any, allowed: Sequence[str]) -> str:
    """A value out of `allowed`."""
    if not isinstance(v, str) or v.strip() not in allowed:
        raise _bad(experiment, key, v, f"choose one of {', '.join(allowed)}")
    return v.strip()


def _block_sizes(experiment: str, key: str, values: list, common: FioCommon) -> tuple:
    """Validated, de-duplicated block sizes (order kept): > 0, <= file size, 512-aligned for O_DIRECT."""
    out: list[str] = []
    for v in values:
        text, n = _size(experiment, key, v)
        if n > common.file_size_bytes:
            raise _bad(experiment, key, v, f"block size larger than file_size={common.file_size}")
        if common.direct and n % 512:
            raise _bad(experiment, key, v, "O_DIRECT (direct: 1) needs a multiple of 512 bytes")
        if text not in out:
            out.append(text)
    return tuple(out)


def _common(experiment: str, params: dict) -> FioCommon:
    """Validate the keys every storage experiment shares."""
    _check_keys(experiment, params)
    size_text, size_bytes = _size(experiment, "file_size", params["file_size"])
    if size_bytes < 1024 * 1024:
        raise _bad(experiment, "file_size", params["file_size"], "use at least 1m")
    return FioCommon(
        runtime_s=_seconds(experiment, params, "runtime_s", positive=True),
        ramp_s=_seconds(experiment, params, "ramp_s", positive=False),
        file_size=size_text,
        file_size_bytes=size_bytes,
        ioengine=_choice(experiment, "ioengine", params["ioengine"], ENGINES),
        direct=_int(experiment, params, "direct", 0, 1),
        numjobs=_int(experiment, params, "numjobs", 1, MAX_NUMJOBS),
        repetitions=_int(experiment, params, "repetitions", 1, MAX_REPETITIONS),
        device=str(params.get("device") or ""),
        confirm_device=str(params.get("confirm_device") or ""),
    )


def block_size_params(params: dict) -> BlockSizeParams:
    """Validate a fio-block-size section (UsageError naming the parameter and allowed values)."""
    e = BLOCK_SIZE
    c = _common(e, params)
    rws = tuple(dict.fromkeys(_choice(e, "rw", v, SINGLE_RW) for v in _list(e, params, "rw")))
    return BlockSizeParams(
        common=c,
        iodepth=_int(e, params, "iodepth", 1, MAX_IODEPTH),
        bs=_block_sizes(e, "bs", _list(e, params, "bs"), c),
        rw=rws,
        seq_bs=_block_sizes(e, "seq_bs", _list(e, params, "seq_bs", allow_empty=True), c),
    )


def rw_ratio_params(params: dict) -> RwRatioParams:
    """Validate a fio-rw-ratio section (UsageError naming the parameter and allowed values)."""
    e = RW_RATIO
    c = _common(e, params)
    mixes = [_int(e, params, "rwmixread", 0, 100, value=v) if not isinstance(v, bool) else
             _int(e, params, "rwmixread", 0, 100, value="x") for v in _list(e, params, "rwmixread")]
    return RwRatioParams(
        common=c,
        iodepth=_int(e, params, "iodepth", 1, MAX_IODEPTH),
        rwmixread=tuple(dict.fromkeys(mixes)),
        bs=_block_sizes(e, "bs", _list(e, params, "bs"), c),
    )


def queue_depth_params(params: dict) -> QueueDepthParams:
    """Validate a fio-queue-depth section (UsageError naming the parameter and allowed values)."""
    e = QUEUE_DEPTH
    c = _common(e, params)
    bs = params["bs"]
    if isinstance(bs, (list, tuple)):
        if len(bs) != 1:
            raise _bad(e, "bs", bs, "give one block size, e.g. 4k")
        bs = bs[0]
    depths = [_int(e, params, "iodepth", 1, MAX_IODEPTH, value=v if not isinstance(v, bool) else "x")
              for v in _list(e, params, "iodepth")]
    spec_qd = _int(e, params, "spec_iodepth", 0, MAX_IODEPTH)
    return QueueDepthParams(
        common=c,
        bs=_block_sizes(e, "bs", [bs], c)[0],
        rw=tuple(dict.fromkeys(_choice(e, "rw", v, SINGLE_RW) for v in _list(e, params, "rw"))),
        iodepth=tuple(dict.fromkeys(depths)),
        spec_iodepth=spec_qd,
        spec_numjobs=_int(e, params, "spec_numjobs", 1, MAX_NUMJOBS),
    )


# ------------------------------------------------------------------------------------------- points


def _num(x: float) -> str:
    """A number for a point name: 10 -> '10', 0.5 -> '0.5'."""
    return str(int(x)) if float(x) == int(x) else f"{x:g}"


def point_params(experiment: str, c: FioCommon, engine: str, *, rw: str, bs: str, iodepth: int,
                 numjobs: int, rwmixread: int | None = None, spec_point: bool = False) -> dict:
    """The JSON-able coordinates of one configuration (without repetition and test file)."""
    return {
        "experiment": experiment, "rw": rw, "bs": bs, "iodepth": iodepth, "numjobs": numjobs,
        "rwmixread": rwmixread, "ioengine": engine, "ioengine_requested": c.ioengine, "direct": c.direct,
        "runtime_s": c.runtime_s, "ramp_s": c.ramp_s, "file_size": c.file_size, "spec_point": spec_point,
    }


def config_name(p: dict) -> str:
    """File-safe name of a configuration: everything that changes the measurement, but the repetition.

    e.g. ``randread-bs4k-qd32-nj1-io_uring-d1-t10-r2-f4g`` (t runtime s, r ramp s, f file size);
    ``spec-`` prefix for the spec-conditions point, ``-mix70`` for rwmixread.
    """
    parts = [("spec-" if p.get("spec_point") else "") + p["rw"], f"bs{p['bs']}", f"qd{p['iodepth']}",
             f"nj{p['numjobs']}"]
    if p.get("rwmixread") is not None:
        parts.append(f"mix{p['rwmixread']}")
    parts += [p["ioengine"], f"d{p['direct']}", f"t{_num(p['runtime_s'])}", f"r{_num(p['ramp_s'])}",
              f"f{p['file_size']}"]
    return "-".join(parts)


def make_points(configs: Sequence[dict], repetitions: int, test_file: str) -> list:
    """sweep.Point list: every config x repetition, repetitions outer (a first full pass over the grid
    comes first); est_s = runtime + ramp + fio overhead, in seconds."""
    from .sweep import Point

    points = []
    for rep in range(1, repetitions + 1):
        for cfg in configs:
            params = dict(cfg, rep=rep, test_file=test_file)
            est = float(cfg["runtime_s"]) + float(cfg["ramp_s"]) + OVERHEAD_S + 0.1 * cfg["numjobs"]
            points.append(Point(name=f"{config_name(cfg)}-rep{rep}", params=params, est_s=est))
    return points


def block_size_configs(bp: BlockSizeParams, engine: str) -> list:
    """Configurations of fio-block-size: rw x bs at iodepth, then sequential read/write x seq_bs."""
    c = bp.common
    out = [point_params(BLOCK_SIZE, c, engine, rw=rw, bs=bs, iodepth=bp.iodepth, numjobs=c.numjobs)
           for rw in bp.rw for bs in bp.bs]
    for rw in ("read", "write"):
        for bs in bp.seq_bs:
            cfg = point_params(BLOCK_SIZE, c, engine, rw=rw, bs=bs, iodepth=bp.iodepth, numjobs=c.numjobs)
            if cfg not in out:
                out.append(cfg)
    return out


def rw_ratio_configs(rp: RwRatioParams, engine: str) -> list:
    """Configurations of fio-rw-ratio: randrw at every rwmixread x bs (100 and 0 included, same engine path)."""
    c = rp.common
    return [point_params(RW_RATIO, c, engine, rw="randrw", bs=bs, iodepth=rp.iodepth, numjobs=c.numjobs,
                         rwmixread=mix) for bs in rp.bs for mix in rp.rwmixread]


def queue_depth_configs(qp: QueueDepthParams, engine: str) -> list:
    """Configurations of fio-queue-depth: rw x iodepth, then the spec-conditions point per rw."""
    c = qp.common
    out = [point_params(QUEUE_DEPTH, c, engine, rw=rw, bs=qp.bs, iodepth=qd, numjobs=c.numjobs)
           for rw in qp.rw for qd in qp.iodepth]
    if qp.spec_iodepth:
        out += [point_params(QUEUE_DEPTH, c, engine, rw=rw, bs=qp.bs, iodepth=qp.spec_iodepth,
                             numjobs=qp.spec_numjobs, spec_point=True) for rw in qp.rw]
    return out


def fio_job(point, filename: str):
    """The memstor.fio.FioJob of a point (group_reporting, time based)."""
    from .fio import FioJob

    p = point.params
    return FioJob(name=point.name, rw=p["rw"], bs=p["bs"], iodepth=p["iodepth"], numjobs=p["numjobs"],
                  rwmixread=p["rwmixread"], ioengine=p["ioengine"], direct=bool(p["direct"]),
                  size=p["file_size"], runtime_s=p["runtime_s"], ramp_s=p["ramp_s"], time_based=True,
                  group_reporting=True, filename=filename)


# ---------------------------------------------------------------------------------------- tidy rows


def _directions(rw: str, rwmixread: int | None = None) -> list:
    """Directions an rw pattern asks for (as memstor.fioparse reports them: rwmixread 100 = read only)."""
    if rw in ("randrw", "rw", "readwrite"):
        if rwmixread is not None and not pd.isna(rwmixread) and int(rwmixread) in (0, 100):
            return ["read"] if int(rwmixread) == 100 else ["write"]
        return ["read", "write"]
    if "trim" in rw:
        return ["trim"]
    return ["write"] if "write" in rw else ["read"]


def depth_bucket(iodepth: int) -> str:
    """fio's iodepth_level bucket holding a queue depth: 1, 2 (2-3), 4 (4-7), ... 32 (32-63), >=64."""
    if iodepth >= 64:
        return ">=64"
    b = 1
    while b * 2 <= iodepth:
        b *= 2
    return str(b)


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
    from .units import parse_size

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
    }


def failed_rows(params: dict, point: str, host: str, error: str, source: str | None = None,
                note: str | None = None) -> list:
    """One row per direction of a point that produced no measurement: job options, error, no metrics."""
    from .units import parse_size

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
    """Tidy rows (COLUMNS) of one raw fio output of a point: schema rows from memstor.fioparse plus
    the extra columns. A direction that did no I/O (e.g. writes at rwmixread 100) keeps IOPS 0 and
    empty latencies. Unparseable output or a fio job error gives rows with status failed."""
    from .fioparse import iodepth_levels, load_fio_json, parse_fio

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
            for k in _LAT_COLUMNS:
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
    from .fio import choose_engine, probe_direct

    if c.direct:
        probe_direct(directory)
    return choose_engine(c.ioengine, directory, direct=bool(c.direct))


def _run(experiment: str, configs_fn, validated, *, data_root: Path, target_dir: Path | None, host: str,
         progress: bool) -> pd.DataFrame:
    """Shared body of the three entry points: test file, engine, sweep, parse, CSV."""
    from .fio import FioRunner
    from .sweep import atomic_write, folder_lock, processed_path, raw_dir, run_sweep
    from .target import prepare_test_file

    c: FioCommon = validated.common
    data_root = Path(data_root)
    # One fio sweep at a time per test-file folder: another one must not resize the file in use.
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
        points = make_points(configs_fn(validated, engine), c.repetitions, str(tf.path))
        runner = FioRunner({p.name: fio_job(p, str(tf.path)) for p in points})
        info = {"ioengine_requested": c.ioengine, "ioengine": engine, "ioengine_why": why,
                "test_file": str(tf.path), "test_file_bytes": tf.size_bytes}
        results = run_sweep(experiment, points, runner, data_root, host, sysinfo=info, progress=progress)
        _remove_when_full(results, tf)
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
        rows += point_rows(text, source, p.params, p.name, host, note)
    df = to_frame(rows)
    out = processed_path(data_root, host, experiment)
    out.parent.mkdir(parents=True, exist_ok=True)
    buf = io.StringIO()
    df.to_csv(buf, index=False)
    atomic_write(out, buf.getvalue())
    failed = sorted(set(df.loc[df["status"] == "failed", "point"]))
    if failed and len(failed) == len(points):
        first = df.loc[df["status"] == "failed", "error"].iloc[0]
        raise MemstorError(f"{experiment}: all {len(points)} points failed (first: {first}); "
                           f"see {raw_dir(data_root, host, experiment)} and rerun to retry")
    if failed:
        print(f"{experiment}: {len(failed)} of {len(points)} points failed (status failed in {out}); "
              f"rerun the same command to retry them", file=sys.stderr)
    return df


def _test_file_dir(data_root: Path, target_dir: Path | None) -> Path:
    """The folder the test file goes to (checked for safety, created when it is the default scratch)."""
    from .target import check_directory

    if target_dir is not None:
        return check_directory(Path(target_dir))
    scratch = Path(data_root) / "scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    return check_directory(scratch, given_as="scratch directory")


def _remove_when_full(results: list, tf) -> None:
    """Delete the test file when a point failed because its filesystem filled up (ENOSPC)."""
    from .target import remove_test_file

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


def run_block_size(params: dict, *, data_root: Path, target_dir: Path | None, host: str,
                   progress: bool = True) -> pd.DataFrame:
    """Run or resume fio-block-size; write and return its tidy table (COLUMNS)."""
    bp = block_size_params(params)
    return _run(BLOCK_SIZE, block_size_configs, bp, data_root=data_root, target_dir=target_dir, host=host,
                progress=progress)


def run_rw_ratio(params: dict, *, data_root: Path, target_dir: Path | None, host: str,
                 progress: bool = True) -> pd.DataFrame:
    """Run or resume fio-rw-ratio; write and return its tidy table (COLUMNS)."""
    rp = rw_ratio_params(params)
    return _run(RW_RATIO, rw_ratio_configs, rp, data_root=data_root, target_dir=target_dir, host=host,
                progress=progress)


def run_queue_depth(params: dict, *, data_root: Path, target_dir: Path | None, host: str,
                    progress: bool = True) -> pd.DataFrame:
    """Run or resume fio-queue-depth (incl. the spec-conditions point); write and return its tidy table."""
    qp = queue_depth_params(params)
    return _run(QUEUE_DEPTH, queue_depth_configs, qp, data_root=data_root, target_dir=target_dir, host=host,
                progress=progress)


def load(data_root: Path | str, host: str, experiment: str) -> pd.DataFrame:
    """The processed table of an experiment, read back from `<data>/processed/<host>/<experiment>.csv`."""
    from .sweep import processed_path

    path = processed_path(Path(data_root), host, experiment)
    if not path.is_file():
        raise MemstorError(f"{path}: no processed table; run `memstor run {experiment}` first")
    return pd.read_csv(path)


# ----------------------------------------------------------------------------------------- analysis

#: Columns that describe a configuration (carried into summaries).
DESCRIPTORS = ("experiment", "rw", "pattern", "bs_bytes", "iodepth", "numjobs", "outstanding_io",
               "rwmixread", "ioengine", "direct", "spec_point")


def ok_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Rows of measurements that succeeded (status done, no error)."""
    if "status" in df.columns:
        df = df[df["status"].fillna("done") == "done"]
    return df


def with_totals(df: pd.DataFrame) -> pd.DataFrame:
    """df plus one direction ``"total"`` row per measured point (read + write of the same fio run).

    IOPS, MB/s and total_ios are summed; lat_mean_us is the I/O-weighted mean of the directions (exact);
    percentiles, stddev, min/max are left empty when more than one direction did I/O (not derivable).
    Failed points get no total row.
    """
    good = ok_rows(df)
    good = good[good["direction"].isin(["read", "write", "trim"])]
    totals = []
    for _, g in good.groupby("point", sort=False):
        first = g.iloc[0].to_dict()
        active = g[pd.to_numeric(g["total_ios"], errors="coerce").fillna(0) > 0]
        row = dict(first)
        row["direction"] = "total"
        row["iops"] = pd.to_numeric(g["iops"], errors="coerce").sum()
        row["bw_MBps"] = pd.to_numeric(g["bw_MBps"], errors="coerce").sum()
        n = pd.to_numeric(g["total_ios"], errors="coerce").fillna(0)
        row["total_ios"] = int(n.sum())
        if len(active) == 1:
            for k in _LAT_COLUMNS:
                row[k] = active.iloc[0][k]
        else:
            for k in _LAT_COLUMNS:
                row[k] = np.nan
            lat = pd.to_numeric(g["lat_mean_us"], errors="coerce")
            mask = (n > 0) & lat.notna()
            if mask.any():
                row["lat_mean_us"] = float((lat[mask] * n[mask]).sum() / n[mask].sum())
        totals.append(row)
    if not totals:
        return df.copy()
    return pd.concat([df, pd.DataFrame(totals, columns=df.columns)], ignore_index=True)


def ci95(values: Sequence[float]) -> tuple[float, float, float, int]:
    """(mean, low, high, n) with the 95% Student-t confidence interval of the mean (NaN bounds if n < 2)."""
    x = np.asarray([v for v in values if v is not None and not pd.isna(v)], dtype=float)
    n = int(x.size)
    if n == 0:
        return math.nan, math.nan, math.nan, 0
    mean = float(x.mean())
    if n < 2:
        return mean, math.nan, math.nan, n
    from scipy import stats  # slow first import: only when there is an interval to compute

    sem = float(stats.sem(x))
    if sem == 0:
        return mean, mean, mean, n
    lo, hi = stats.t.interval(0.95, n - 1, loc=mean, scale=sem)
    return mean, float(lo), float(hi), n


def summary(df: pd.DataFrame, metrics: Sequence[str] = METRICS) -> pd.DataFrame:
    """Per configuration x direction: <metric>_mean, <metric>_ci95_low, <metric>_ci95_high over the
    successful repetitions, n (successful repetitions) and n_failed. Units as in the metric names."""
    if df.empty:
        return pd.DataFrame()
    key = ["config", "direction"]
    out = []
    for (cfg, direction), g in df.groupby(key, sort=False, dropna=False):
        good = ok_rows(g)
        row: dict = {"config": cfg, "direction": direction}
        for d in DESCRIPTORS:
            if d in g.columns:
                row[d] = g.iloc[0][d]
        row["n"] = int(good["point"].nunique()) if "point" in good.columns else len(good)
        row["n_failed"] = int(g["point"].nunique() - row["n"]) if "point" in g.columns else len(g) - len(good)
        for m in metrics:
            mean, lo, hi, _ = ci95(pd.to_numeric(good[m], errors="coerce").tolist() if m in good else [])
            row[f"{m}_mean"], row[f"{m}_ci95_low"], row[f"{m}_ci95_high"] = mean, lo, hi
        out.append(row)
    return pd.DataFrame(out)


def _reason(row: dict, residual: float | None, engine: str, direct: Any) -> str:
    """Why a Little's-law point is flagged ('' when it is not)."""
    if row.get("status") == "failed":
        return f"measurement failed: {row.get('error')}"
    reached = row.get("iodepth_reached")
    if reached is False or (isinstance(reached, (np.bool_,)) and not reached):
        pct = row.get("iodepth_level_pct")
        why = (f"intended depth {int(row['iodepth'])} not reached: only {pct:.1f}% of I/Os were submitted in "
               f"fio's iodepth_level bucket {depth_bucket(int(row['iodepth']))}")
        if engine in SYNC_ENGINES:
            why += f"; {engine} is synchronous (1 I/O in flight per job, iodepth ignored)"
        elif not _truthy(direct):
            why += "; buffered I/O (direct=0): async engines complete in the submitting call"
        else:
            why += "; the engine or the device queue limited the depth"
        return why
    if residual is None or math.isnan(residual):
        return "no IOPS or latency to check"
    if abs(residual) > LITTLE_TOL_PCT:
        return (f"IOPS x mean latency differs from the intended outstanding I/O by {residual:+.1f}% although "
                f"the depth was reached: fio's own gaps between completion and resubmission (CPU-bound, "
                f"shared CPU) or a too-short run")
    return ""


def _truthy(v: Any) -> bool:
    """1/True/'1'/'true' -> True."""
    if isinstance(v, str):
        return v.strip().lower() in ("1", "true", "yes")
    try:
        return bool(int(v))
    except (TypeError, ValueError):
        return bool(v)


def littles_law_table(df: pd.DataFrame, tol_pct: float = LITTLE_TOL_PCT) -> pd.DataFrame:
    """Little's law per measured point (one row per point x repetition, all directions together).

    Columns: point, config, rep, rw, bs_bytes, iodepth, numjobs, spec_point, ioengine, outstanding_io
    (intended: iodepth x numjobs), iops, lat_mean_us, littles_outstanding (IOPS x mean latency),
    residual_pct (100 (X R - N) / N), iodepth_level_pct, depth_reached, flagged (|residual| > tol_pct,
    depth not reached or failed) and reason.
    """
    from .queueing import littles_law_outstanding, littles_law_residual_pct

    if df.empty:
        return pd.DataFrame()
    tot = with_totals(df)
    tot = tot[tot["direction"] == "total"]
    failed = df[df["status"] == "failed"].drop_duplicates("point") if "status" in df.columns else df.iloc[:0]
    out = []
    for _, r in pd.concat([tot, failed], ignore_index=True).iterrows():
        row = r.to_dict()
        n = float(row["outstanding_io"])
        x, lat = row.get("iops"), row.get("lat_mean_us")
        ok = row.get("status") != "failed" and not pd.isna(x) and not pd.isna(lat) and float(x) > 0
        xr = littles_law_outstanding(float(x), float(lat)) if ok else math.nan
        res = littles_law_residual_pct(n, float(x), float(lat)) if ok else math.nan
        reached = row.get("iodepth_reached")
        reached = None if reached is None or pd.isna(reached) else _truthy(reached)
        row["iodepth_reached"] = reached
        reason = _reason(row, res if ok else None, str(row.get("ioengine")), row.get("direct"))
        out.append({
            "point": row["point"], "config": row["config"], "rep": row["rep"], "rw": row["rw"],
            "bs_bytes": row["bs_bytes"], "iodepth": row["iodepth"], "numjobs": row["numjobs"],
            "spec_point": _truthy(row.get("spec_point")), "ioengine": row.get("ioengine"),
            "outstanding_io": n, "iops": x if ok else math.nan, "lat_mean_us": lat if ok else math.nan,
            "littles_outstanding": xr, "residual_pct": res, "iodepth_level_pct": row.get("iodepth_level_pct"),
            "depth_reached": reached, "flagged": bool(reason), "reason": reason,
        })
    table = pd.DataFrame(out)
    return table.sort_values(["spec_point", "rw", "outstanding_io", "rep"], kind="stable").reset_index(drop=True)


def saturation_iodepth(summ: pd.DataFrame, rw: str, frac: float = 0.95) -> int | None:
    """Smallest queue depth (non-spec points of `rw`) whose mean IOPS reaches `frac` of the best; None if
    there is no measurement."""
    s = summ[(summ["rw"] == rw) & (summ["direction"] != "total")]
    if "spec_point" in s.columns:
        s = s[~s["spec_point"].map(_truthy)]
    s = s[s["iops_mean"].notna()]
    if s.empty:
        return None
    best = s["iops_mean"].max()
    return int(s[s["iops_mean"] >= frac * best]["iodepth"].min())


def latency_cdf(src: Any, direction: str = "read", jobname: str | None = None) -> pd.DataFrame:
    """Completion-latency CDF from fio json+ bins: columns clat_us (µs), count, cdf (fraction 0..1).

    src: a raw file path, the JSON text, a parsed fio document or one job dict. direction: read, write,
    trim or total (all directions merged). jobname picks a job in a multi-job file (default: every job
    merged). Empty frame when the output has no json+ bins.
    """
    from .fioparse import clat_bins, load_fio_json

    if isinstance(src, Path) or (isinstance(src, str) and not src.lstrip().startswith("{")):
        src = Path(src).read_text(encoding="utf-8", errors="replace")
    doc = load_fio_json(src) if isinstance(src, str) else src
    jobs = doc.get("jobs") if isinstance(doc, dict) and "jobs" in doc else [doc]
    if jobname is not None:
        jobs = [j for j in jobs if j.get("jobname") == jobname]
        if not jobs:
            raise MemstorError(f"latency_cdf: no job named {jobname!r} in the fio output")
    dirs = ["read", "write", "trim"] if direction == "total" else [direction]
    merged: dict = {}
    for job in jobs:
        for d in dirs:
            for ns, count in clat_bins(job, d).items():
                merged[int(ns)] = merged.get(int(ns), 0) + int(count)
    if not merged:
        return pd.DataFrame(columns=["clat_us", "count", "cdf"])
    ns = np.array(sorted(merged), dtype=float)
    counts = np.array([merged[int(k)] for k in ns], dtype=float)
    cdf = np.cumsum(counts) / counts.sum()
    return pd.DataFrame({"clat_us": ns / 1000.0, "count": counts.astype(int), "cdf": cdf})


def percentile_from_cdf(cdf: pd.DataFrame, pct: float) -> float:
    """The smallest latency (µs) with cdf >= pct/100 (NaN for an empty CDF)."""
    if cdf.empty:
        return math.nan
    hit = cdf[cdf["cdf"] >= pct / 100.0 - 1e-12]
    return float(hit["clat_us"].iloc[0])


def qd_cdfs(df: pd.DataFrame, data_root: Path | str, frac: float = 0.95) -> pd.DataFrame:
    """Latency CDFs of the queue-depth sweep at QD 1 (lowest depth) and at saturation, per rw.

    Uses the first successful repetition of each point; columns clat_us, count, cdf, rw, iodepth, label.
    """
    summ = summary(df[~df["spec_point"].map(_truthy)])
    frames = []
    for rw in summ["rw"].dropna().unique():
        s = summ[summ["rw"] == rw]
        depths = sorted({int(s["iodepth"].min())} | {q for q in [saturation_iodepth(summ, rw, frac)] if q})
        for qd in depths:
            cand = ok_rows(df[(df["rw"] == rw) & (df["iodepth"] == qd) & ~df["spec_point"].map(_truthy)])
            if cand.empty:
                continue
            r = cand.sort_values("rep").iloc[0]
            path = Path(data_root) / str(r["source"])
            cdf = latency_cdf(path, direction=str(r["direction"]))
            if cdf.empty:
                continue
            kind = "QD 1" if qd == 1 else ("lowest QD" if qd == depths[0] else "saturation")
            cdf["rw"], cdf["iodepth"] = rw, qd
            cdf["label"] = f"{rw} QD {qd} ({kind})" if kind != "QD 1" else f"{rw} QD 1"
            frames.append(cdf)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["clat_us", "count", "cdf", "rw", "iodepth", "label"])


def _fmt_ci(mean: float, lo: float, hi: float, digits: int) -> str:
    """'mean ± half-width' (95% CI) or just 'mean' when there is no interval."""
    if pd.isna(mean):
        return ""
    if pd.isna(lo) or pd.isna(hi):
        return f"{mean:,.{digits}f}"
    return f"{mean:,.{digits}f} ± {(hi - lo) / 2:,.{digits}f}"


def summary_view(summ: pd.DataFrame) -> pd.DataFrame:
    """A compact, printable view of a summary: one row per configuration x direction, metrics as
    'mean ± 95% CI half-width' strings (units in the headers), n = successful repetitions."""
    if summ.empty:
        return pd.DataFrame()
    from .units import format_size

    out = pd.DataFrame({
        "rw": summ["rw"], "direction": summ["direction"],
        "bs": summ["bs_bytes"].map(lambda b: format_size(int(b)) if not pd.isna(b) else ""),
        "QD": summ["iodepth"], "jobs": summ["numjobs"],
    })
    if "rwmixread" in summ and summ["rwmixread"].notna().any():
        out["read %"] = summ["rwmixread"]
    if "spec_point" in summ and summ["spec_point"].map(_truthy).any():
        out["spec point"] = summ["spec_point"].map(lambda v: "yes" if _truthy(v) else "")
    for m, label, digits in (("iops", "IOPS", 0), ("bw_MBps", "MB/s", 1), ("lat_mean_us", "mean lat (µs)", 1),
                             ("clat_p50_us", "p50 (µs)", 1), ("clat_p99_us", "p99 (µs)", 1),
                             ("clat_p99_9_us", "p99.9 (µs)", 1)):
        if f"{m}_mean" in summ:
            out[label] = [_fmt_ci(a, b, c, digits) for a, b, c in
                          zip(summ[f"{m}_mean"], summ[f"{m}_ci95_low"], summ[f"{m}_ci95_high"])]
    out["n"] = summ["n"]
    if summ["n_failed"].any():
        out["failed"] = summ["n_failed"]
    return out.reset_index(drop=True)


def failures(df: pd.DataFrame) -> pd.DataFrame:
    """One row per failed point: point, rep, error (empty frame when every point succeeded)."""
    if df.empty or "status" not in df.columns:
        return pd.DataFrame(columns=["point", "rep", "error"])
    bad = df[df["status"] == "failed"].drop_duplicates("point")
    return bad[["point", "rep", "error"]].reset_index(drop=True)


def spec_point_table(df: pd.DataFrame) -> pd.DataFrame:
    """summary_view of the spec-conditions point(s) of the queue-depth sweep (empty without one)."""
    if "spec_point" not in df.columns:
        return pd.DataFrame()
    spec = df[df["spec_point"].map(_truthy)]
    return summary_view(summary(spec)) if not spec.empty else pd.DataFrame()


def best_iops(df: pd.DataFrame, rw: str = "randread") -> dict:
    """The configuration with the highest mean IOPS for `rw` (spec point included): point config,
    iodepth, numjobs, iops (mean over repetitions). Empty dict without a successful measurement."""
    s = summary(df[df["rw"] == rw]) if not df.empty else pd.DataFrame()
    if s.empty or s["iops_mean"].isna().all():
        return {}
    r = s.loc[s["iops_mean"].idxmax()]
    return {"config": r["config"], "iodepth": int(r["iodepth"]), "numjobs": int(r["numjobs"]),
            "iops": float(r["iops_mean"])}


def describe_run(df: pd.DataFrame) -> str:
    """One line about a sweep's table: points, repetitions, failures and the engine that ran."""
    if df.empty:
        return "no measurements"
    n_points = df["point"].nunique()
    n_failed = df.loc[df["status"] == "failed", "point"].nunique()
    notes = df["ioengine_note"].dropna()
    engine = notes.iloc[0] if not notes.empty else "?"
    direct = "O_DIRECT" if df["direct"].map(_truthy).all() else "buffered (page cache) for some points"
    return (f"{n_points} points ({df['config'].nunique()} configurations x up to {int(df['rep'].max())} "
            f"repetitions), {n_failed} failed; engine {engine}; {direct}")
