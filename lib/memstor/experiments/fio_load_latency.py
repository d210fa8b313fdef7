"""fio-load-latency: open-loop latency under offered load (Poisson arrivals at a share of X_max).

The queue-depth sweep is a closed loop (N I/Os always in flight). Here a generator offers a rate instead:
each workload (``rw`` x ``bs``) at ``utilisation_pct`` of X_max, arrivals Poisson. **The generator** is the
profile's ``generator``:

- ``ioarrive`` (the default): memstor's arrival-driven generator (lib/ioarrive/, built by ``make ioarrive`` or
  on demand): one process per point issues every I/O at its intended arrival whatever is in flight (up to its
  cap, :data:`memstor.experiments._load_ioarrive.MAX_OUTSTANDING`), times it from that arrival (response),
  from its submission (service) and checks its own arrivals, rate and lag; ``open_loop`` is its checks AND
  achieved within +-5 % of offered (:mod:`memstor.experiments._load_ioarrive` says what every column means).
  No submit-mode probe: nothing of fio is in the open loop's path.
- ``fio``: fio's ``rate_iops`` + ``rate_process=poisson``, kept as an option whose points pass the same
  two-sided checks (fio's pitfalls, memstor.measure.openloop: fio waits for in-flight I/O before each rate
  sleep, and times latency from the submission). The rate is split over jobs of at most MAX_JOB_RATE_IOPS
  (fio truncates its Poisson gaps to whole µs; a sum of Poisson streams is Poisson); the submit mode is
  probed (recorded in every point's params); a point whose queue reached its ``iodepth`` ceiling is flagged
  ``ceiling_reached``; ``open_loop``: achieved within +-5 % and the probe saw this mode's arrivals Poisson at
  the point's per-job load. Its points are named and stored as before, so data measured with it stays valid.

**Why the name stays** fio-load-latency although fio no longer generates the open loop: the name is the
identity of the data (``data/raw/<device>/fio-load-latency/``, the processed tables, the notebook, the report
section and every check that reads them); renaming it would orphan every table measured so far. X_max and the
cross-check are still fio's: **X_max** is the best IOPS of the same rw and block size on a file of the same size
in this device's ``fio-queue-depth`` and ``fio-block-size`` tables (memstor.experiments._closed_x_max) when there
is one, else from a short closed-loop fio probe at ``probe_iodepth`` x
``probe_numjobs`` (one point per rw), else from ``x_max_iops``; the ``lt`` point is fio's own latency_target
search at the first p99 target. **Overload**: achieved below 95 % of the offered rate (or ioarrive's cap
reached) is flagged ``overloaded``.

Raw: fio's json+ (its rate points also write fio's 1-s interval logs into ``<point>.files/``) or ioarrive's
JSON (its per-second series and histograms inside), one file per point through memstor.measure.sweep.

Tables, ``<data>/processed/<device>/``:
- ``fio-load-latency.csv``: one row per point x direction: the DESIGN.md fio columns, memstor's extra fio
  columns (``config`` = the point: each offered rate is its own configuration), then :data:`LOAD_COLUMNS`
  and the generator's columns (:data:`memstor.experiments._load_ioarrive.GENERATOR_COLUMNS`);
- ``fio-load-latency-seconds.csv``: one row per point x direction x second (:data:`SECOND_COLUMNS`);
- ``fio-load-latency-bins.csv``: the histograms (ioarrive: service as ``clat``, response as ``lat``).
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

import memstor.experiments._closed_x_max as _closed_x_max
import memstor.experiments._fio_params as _fio_params
import memstor.experiments._fio_points as _fio_points
import memstor.experiments._fio_rows as _fio_rows
import memstor.experiments._fio_run as _fio_run
import memstor.experiments._fio_target as _fio_target
import memstor.experiments._load_ioarrive as _ioarrive
from memstor.core import fiohist
from memstor.core.errors import MemstorError, first_line
from memstor.core.files import read_json, utc_now, write_json
from memstor.core.fiohist import BIN_COLUMNS, BINS_SUFFIX
from memstor.core.validate import Section
from memstor.measure.fio import FioRunner
from memstor.measure.fio_engine import fio_version
from memstor.measure.fio_facts import fio_facts
from memstor.measure.openloop import (
    MAX_JOB_RATE_IOPS,
    RATE_TOLERANCE_PCT,
    ceiling_reached,
    gating_cap_iops,
    probe_submit_mode_details,
    split_rate,
)
from memstor.measure.shape import usable_cpus
from memstor.measure.sweep import (
    NotAllMeasured,
    Point,
    SweepSession,
    raw_dir,
    run_sweep,
    sidecar_dir,
)
from memstor.parse.fio import load_fio_json
from memstor.parse.fio_json import latency_bins
from memstor.parse.fio_logs import point_seconds as parse_seconds

EXPERIMENT = "fio-load-latency"
NOTEBOOK = "60-fio-load-latency"
KIND = "fio"
OPTIONAL_KEYS = (*_fio_params.OPTIONAL_KEYS, _ioarrive.RT_KEY)
#: This family's own keys, beside the ones every fio family has (numjobs is chosen by the rate split).
KEYS = ("bs", "rw", "utilisation_pct", "iodepth", "x_max_iops", "probe_iodepth", "probe_numjobs", "slo_p99_us",
        "generator")
SECONDS_TABLE = f"{EXPERIMENT}-seconds"
#: Achieved below this share of the offered rate: the device could not keep up (flag ``overloaded``).
OVERLOAD_RATIO = 0.95
#: Seconds after which a hung submit-mode probe run is killed (offload hangs on fio-3.33).
PROBE_TIMEOUT_S = 5.0

#: Columns after memstor's fio columns in fio-load-latency.csv (units: IOPS, µs, %).
LOAD_COLUMNS = [
    "phase",              # probe (closed-loop X_max probe) | rate (an offered rate) | lt (fio's latency_target
                          # search at the first p99 target: the SLO answer's cross-check)
    "utilisation_pct",    # offered rate as % of X_max (empty for a probe)
    "offered_iops",       # the rate offered: what fio's Poisson process delivers on average for jobs x
                          # integer rate per job (memstor.measure.openloop.split_rate; empty for a probe)
    "achieved_iops",      # fio's IOPS of the point (all jobs)
    "achieved_pct",       # achieved / offered, %
    "lat_p50_us",         # total latency (submission to completion) percentiles from json+ lat_ns bins
    "lat_p99_us",
    "lat_p99_9_us",
    "overloaded",         # achieved < 95 % of offered
    "ceiling_reached",    # fio's queue reached the per-job iodepth ceiling (arrivals may have waited)
    "x_max_iops",         # the X_max the rates are shares of
    "x_max_source",       # where X_max comes from (fio-queue-depth or fio-block-size table, probe, profile)
    "rate_per_job_iops",  # fio rate_iops of each job
    "submit_mode",        # fio io_submit_mode used (the probe's choice)
    "open_loop",          # shown open: achieved within +-5 % of offered and the probe saw this mode's arrivals
                          # Poisson at a per-job rate x latency >= the point's; False: either not; empty:
                          # arrivals not measured (fio < 3.31 writes no iolog times)
    "latency_target_us",  # lt: the p99 target fio searched under (µs)
    "latency_depth",      # lt: the queue depth fio's search ended at (its latency_depth)
    "iops_cv",            # coefficient of variation of the per-second IOPS (stability)
    "min_1s_iops_pct",    # lowest 1-s IOPS as % of the mean of the seconds
]
TABLE_COLUMNS = _fio_rows.COLUMNS + LOAD_COLUMNS + _ioarrive.GENERATOR_COLUMNS
#: Columns of fio-load-latency-seconds.csv (t_s: end of the 1-s interval, s after the start).
#: fio's histogram logs hold completion latency only (clat; memstor.parse.fio_logs), hence clat_p*.
#: ioarrive's series holds the response of the I/Os completed in each second (mean, and p99 as ``lat_p99_us``).
SECOND_COLUMNS = ["host", "point", "rw", "utilisation_pct", "offered_iops", "direction", "t_s", "iops", "bw_MBps",
                  "lat_mean_us", "clat_p50_us", "clat_p99_us", "clat_p99_9_us", *_ioarrive.SECOND_EXTRA]
#: Added to each rate point's runtime (s): fio up to 3.36 never writes a run's last log window (3.42 does),
#: so a run of whole seconds would lose its last second of the per-second series (memstor.parse.fio_logs).
LOG_TAIL_S = 0.5


@dataclass(frozen=True)
class LoadLatencyParams:
    """fio-load-latency: every rw at every utilisation of X_max, Poisson arrivals."""

    common: _fio_params.FioCommon  # numjobs is set per point by the rate split
    bs: str
    rw: tuple
    utilisation_pct: tuple   # offered rates as % of X_max, each in (0, 100]
    iodepth: int             # per-job ceiling of outstanding I/Os
    x_max_iops: float        # 0: from the closed-loop tables or a probe
    probe_iodepth: int
    probe_numjobs: int
    slo_p99_us: tuple        # p99 targets (µs) of the SLO answer
    generator: str = "ioarrive"  # what runs the offered rates: ioarrive, or fio's rate mode
    rt_priority: int = 0      # ioarrive's SCHED_FIFO priority (0: the normal scheduler)


def load_latency_params(params: dict) -> LoadLatencyParams:
    """Validate a fio-load-latency section (UsageError naming the parameter and allowed values)."""
    v = Section(EXPERIMENT)
    c = _fio_params.common_params(v, {"numjobs": 1, **params}, KEYS, optional=(_ioarrive.RT_KEY,))
    utils = [v.number("utilisation_pct", u) for u in v.items("utilisation_pct", params["utilisation_pct"])]
    for u in utils:
        if not 0 < u <= 100:
            raise v.error("utilisation_pct", u, "a percentage of X_max in (0, 100]")
    targets = [v.number("slo_p99_us", t) for t in v.items("slo_p99_us", params["slo_p99_us"])]
    x_max = v.number("x_max_iops", params["x_max_iops"], positive=False)
    if x_max < 0:
        raise v.error("x_max_iops", x_max, "0 (from the closed-loop tables or a probe) or the device's IOPS > 0")
    return LoadLatencyParams(
        common=c,
        bs=_fio_params.single_block_size(v, params, c),
        rw=_fio_params.patterns(v, params),
        utilisation_pct=v.unique("utilisation_pct", sorted(utils)),
        iodepth=v.integer("iodepth", params["iodepth"], 1, _fio_params.MAX_IODEPTH),
        x_max_iops=x_max,
        probe_iodepth=v.integer("probe_iodepth", params["probe_iodepth"], 1, _fio_params.MAX_IODEPTH),
        probe_numjobs=v.integer("probe_numjobs", params["probe_numjobs"], 1, _fio_params.MAX_NUMJOBS),
        slo_p99_us=v.unique("slo_p99_us", targets),
        generator=v.choice("generator", params["generator"], _ioarrive.GENERATORS),
        rt_priority=_ioarrive.rt_priority(v, params),
    )


validate = load_latency_params


# ------------------------------------------------------------------------------------------ points


def _num(x: float) -> str:
    return str(int(x)) if float(x) == int(x) else f"{x:g}"


def _suffix(c: _fio_params.FioCommon, engine: str) -> str:
    return f"{engine}-d{c.direct}-t{_num(c.runtime_s)}-r{_num(c.ramp_s)}-f{c.file_size}"


def probe_config(lp: LoadLatencyParams, engine: str, rw: str) -> dict:
    """The closed-loop X_max probe of `rw` (point parameters)."""
    return dict(_fio_points.point_params(EXPERIMENT, lp.common, engine, rw=rw, bs=lp.bs, iodepth=lp.probe_iodepth,
                                  numjobs=lp.probe_numjobs), phase="probe")


def rate_config(lp: LoadLatencyParams, engine: str, rw: str, util: float, x_max: float, x_max_source: str,
                probe: dict, max_per_job: int, max_jobs: int | None = None) -> dict:
    """An offered-rate point: util % of x_max split over jobs of at most max_per_job IOPS each
    (memstor.measure.openloop.split_rate), in the probe's submit mode and engine (a decision recorded before
    the probe named its engine: ``engine``) with the highest per-job load at which the probe saw its arrivals
    hold (``arrivals_open_load``; absent from decisions recorded before it was measured); at most ``max_jobs``
    fio jobs (JOBS_PER_CPU x the CPUs memstor may use)."""
    plan = split_rate(util / 100.0 * x_max, max_per_job, max_jobs=max_jobs)
    cfg = _fio_points.point_params(EXPERIMENT, lp.common, probe.get("engine") or engine, rw=rw, bs=lp.bs,
                                   iodepth=lp.iodepth, numjobs=plan.numjobs)
    cfg = dict(cfg, phase="rate", utilisation_pct=util, rate_iops=plan.rate_per_job,
               offered_iops=round(plan.expected_iops, 1), rate_process="poisson", io_submit_mode=probe["mode"],
               x_max_iops=round(x_max, 1), x_max_source=x_max_source)
    if "open_load" in probe:
        cfg["arrivals_open_load"] = probe["open_load"]
    return cfg


def lt_config(lp: LoadLatencyParams, engine: str, rw: str) -> dict:
    """fio's own answer to the SLO question, for the cross-check: a closed loop whose queue depth (at most
    probe_iodepth per job) fio searches so that 99 % of the I/Os of every window stay under the first p99
    target (``latency_target``, ``latency_window`` = a quarter of the runtime, at least 0.5 s)."""
    return dict(_fio_points.point_params(EXPERIMENT, lp.common, engine, rw=rw, bs=lp.bs, iodepth=lp.probe_iodepth,
                                  numjobs=lp.probe_numjobs), phase="lt",
                latency_target_us=int(round(lp.slo_p99_us[0])), latency_window_s=max(0.5, lp.common.runtime_s / 4),
                latency_percentile=99.0)


def point_name(cfg: dict, c: _fio_params.FioCommon, rep: int) -> str:
    """e.g. ``randread-bs4k-u50-r5000x6-qd128x6-inline-io_uring-d1-t2-r1-f256m-rep1`` (r: rate per job x jobs;
    probe: ``probe-randread-...``)."""
    engine = cfg["ioengine"]
    if _ioarrive.is_ioarrive(cfg):
        return _ioarrive.point_name(cfg, _suffix(c, engine), rep)
    if cfg["phase"] == "probe":
        return f"probe-{cfg['rw']}-bs{cfg['bs']}-qd{cfg['iodepth']}x{cfg['numjobs']}-{_suffix(c, engine)}-rep{rep}"
    if cfg["phase"] == "lt":
        return (f"lt-{cfg['rw']}-bs{cfg['bs']}-p99-{cfg['latency_target_us']}us-qd{cfg['iodepth']}x{cfg['numjobs']}-"
                f"{_suffix(c, engine)}-rep{rep}")
    return (f"{cfg['rw']}-bs{cfg['bs']}-u{_num(cfg['utilisation_pct'])}-r{cfg['rate_iops']}x{cfg['numjobs']}-"
            f"qd{cfg['iodepth']}x{cfg['numjobs']}-{cfg['io_submit_mode']}-{_suffix(c, engine)}-rep{rep}")


def make_points(configs: list[dict], c: _fio_params.FioCommon, medium: dict, test_file: str) -> list:
    """sweep.Points of the configs x repetitions (repetitions outer); est_s = runtime + ramp + overhead."""
    points = []
    for rep in range(1, c.repetitions + 1):
        for cfg in configs:
            params = dict(cfg, rep=rep, medium=medium, test_file=test_file)
            est = float(c.runtime_s) + float(c.ramp_s) + _fio_points.OVERHEAD_S + 0.1 * cfg["numjobs"]
            points.append(Point(name=point_name(cfg, c, rep), params=params, est_s=est, incidental=_fio_points.INCIDENTAL))
    return points


def fio_job(point, filename: str):
    """The FioJob of a point: a probe is a plain closed-loop job; a rate point adds the rate, the Poisson
    process, the submit mode, total-latency percentiles and the interval logs."""
    job = _fio_points.fio_job(point, filename)
    p = point.params
    if p["phase"] == "lt":
        return dataclasses.replace(job, latency_target_us=int(p["latency_target_us"]),
                                   latency_window_s=float(p["latency_window_s"]),
                                   latency_percentile=float(p["latency_percentile"]))
    if p["phase"] != "rate":
        return job
    return dataclasses.replace(job, rate_iops=int(p["rate_iops"]), rate_process="poisson",
                               io_submit_mode=p["io_submit_mode"], lat_percentiles=True, logs=True,
                               hist_log=True, log_avg_msec=1000,  # 1-s windows and histograms: the seconds table
                               runtime_s=float(p["runtime_s"]) + LOG_TAIL_S)


# ------------------------------------------------------------------------------------------- rows


def _percentiles_us(bins: dict) -> dict:
    """{p: latency µs or None} of p50, p99, p99.9 of json+ bins {ns: count} (fio's rule,
    memstor.core.fiohist; None without I/O)."""
    pct = fiohist.percentiles(bins, (50, 99, 99.9))
    return {p: None if math.isnan(v) else fiohist.ns_to_us(v) for p, v in pct.items()}


def _lat_bins(doc: dict, direction: str) -> dict:
    """Total-latency json+ bins {ns: count} of a point, merged over its jobs."""
    return fiohist.merge_bins(latency_bins(job, direction, "lat") for job in doc.get("jobs", []))


def _depth(jobs: list) -> int | None:
    """The queue depth fio's latency_target search ended at (its ``latency_depth``; the smallest over jobs)."""
    depths = [j.get("latency_depth") for j in jobs if isinstance(j.get("latency_depth"), (int, float))]
    return int(min(depths)) if depths else None


def _ceiling(jobs: list, iodepth: int) -> bool | None:
    """Any job's queue reached the iodepth ceiling (memstor.measure.openloop.ceiling_reached); None when
    fio's depth distribution cannot say (offload mode reports depth 1; no iodepth_level)."""
    try:
        return any(ceiling_reached(j, iodepth) for j in jobs)
    except (ValueError, MemstorError):
        return None


def _open_loop(params: dict, row: dict) -> bool | None:
    """Whether the point was an open loop, from what was measured: False when fio's achieved rate is outside
    +-RATE_TOLERANCE_PCT of the offered one (either side); else True when the probe saw this submit mode's
    arrivals stay Poisson at a per-job rate x latency at least the point's (``arrivals_open_load``), False
    when the point's load is above it (0.0: the probe saw them bunch at every load it tried); None (not
    checked) when no arrivals were measured (fio without iolog times, or a decision recorded before arrivals
    were measured) or a number is missing."""
    achieved, offered = row.get("iops"), params.get("offered_iops")
    if not isinstance(achieved, (int, float)) or achieved != achieved or not offered:
        return None
    if abs(100.0 * float(achieved) / float(offered) - 100.0) > RATE_TOLERANCE_PCT:
        return False
    held, lat = params.get("arrivals_open_load"), row.get("lat_mean_us")
    if held is None or lat is None or lat != lat:
        return None
    return bool(float(params["rate_iops"]) * float(lat) * 1e-6 <= float(held))


def load_columns(row: dict, params: dict, doc: dict, seconds: pd.DataFrame) -> dict:
    """The LOAD_COLUMNS of one tidy row (a direction of a point) from its fio document and per-second rows."""
    rate = params["phase"] == "rate"
    achieved = row.get("iops")
    offered = params.get("offered_iops") if rate else None
    pct = _percentiles_us(_lat_bins(doc, row["direction"]) if doc else {})
    jobs = [j for j in doc.get("jobs", []) if isinstance(j, dict)] if doc else []
    sec = seconds[seconds["direction"] == row["direction"]]["iops"] if len(seconds) else pd.Series(dtype=float)
    mean = float(sec.mean()) if len(sec) else math.nan
    return {
        "phase": params["phase"], "utilisation_pct": params.get("utilisation_pct"), "offered_iops": offered,
        "achieved_iops": achieved,
        "achieved_pct": 100.0 * achieved / offered if rate and achieved is not None and offered else None,
        "lat_p50_us": pct[50], "lat_p99_us": pct[99], "lat_p99_9_us": pct[99.9],
        "overloaded": bool(achieved is not None and offered and achieved < OVERLOAD_RATIO * offered) if rate else None,
        "ceiling_reached": _ceiling(jobs, int(params["iodepth"])) if rate and jobs else None,
        "x_max_iops": params.get("x_max_iops"), "x_max_source": params.get("x_max_source"),
        "latency_target_us": params.get("latency_target_us"),
        "latency_depth": _depth(jobs) if params["phase"] == "lt" else None,
        "rate_per_job_iops": params.get("rate_iops"), "submit_mode": params.get("io_submit_mode"),
        "open_loop": _open_loop(params, row) if rate else None,
        "iops_cv": float(sec.std(ddof=1) / mean) if len(sec) > 1 and mean > 0 else None,
        "min_1s_iops_pct": float(100.0 * sec.min() / mean) if len(sec) and mean > 0 else None,
        "generator": "fio",
    }


def point_seconds(res, host: str) -> pd.DataFrame:
    """Per-second rows (SECOND_COLUMNS) of one rate point from the interval logs in its sidecar folder."""
    p = res.point.params
    if p["phase"] != "rate" or res.raw is None:
        return pd.DataFrame(columns=SECOND_COLUMNS)
    folder = sidecar_dir(Path(res.raw).parent, res.point)
    sec = parse_seconds(folder)
    return sec.assign(host=host, point=res.point.name, rw=p["rw"], utilisation_pct=p["utilisation_pct"],
                      offered_iops=p["offered_iops"], generator="fio").reindex(columns=SECOND_COLUMNS)


def result_tables(results: list, host: str, note: str, data_root: Path) -> tuple[pd.DataFrame, pd.DataFrame,
                                                                                 pd.DataFrame]:
    """(the experiment's table, the per-second table, the bins table) of the sweep results: fio's points
    parsed as fio's, ioarrive's as ioarrive's (memstor.experiments._load_ioarrive.tables)."""
    rows, seconds = [], []
    fio_results, io_bins = [], []
    for res in results:
        if _ioarrive.is_ioarrive(res.point.params):
            got, sec, b = _ioarrive.tables(res, host, note, data_root)
            rows += got
            seconds.append(sec.reindex(columns=SECOND_COLUMNS))
            io_bins += b
            continue
        fio_results.append(res)
        base = _fio_rows.result_rows([res], host, note, data_root)
        doc: dict = {}
        sec = pd.DataFrame(columns=SECOND_COLUMNS)
        if res.raw is not None and res.status != "failed":
            try:
                doc = load_fio_json(Path(res.raw).read_text(encoding="utf-8", errors="replace"))
            except (OSError, MemstorError) as err:
                for r in base:
                    r.update(status="failed", error=f"{res.point.name}: {err}")
            try:  # the logs only add the per-second view: without them the point's own numbers stand
                sec = point_seconds(res, host)
            except (OSError, MemstorError) as err:
                print(f"{EXPERIMENT}: {res.point.name}: no per-second series ({first_line(err)})", file=sys.stderr)
        seconds.append(sec)
        for r in base:
            ok = r.get("status") == "done"
            extra = load_columns(r, res.point.params, doc if ok else {}, sec if ok else sec.iloc[0:0])
            rows.append({**r, "config": r["point"].rsplit("-rep", 1)[0], **extra})
    table = pd.DataFrame(rows, columns=TABLE_COLUMNS)
    per_s = pd.concat([s for s in seconds if len(s)], ignore_index=True) if any(len(s) for s in seconds) \
        else pd.DataFrame(columns=SECOND_COLUMNS)
    parts = [b for b in (_fio_rows.result_bins(fio_results, data_root), pd.DataFrame(io_bins, columns=list(BIN_COLUMNS)))
             if len(b)]
    bins = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(BIN_COLUMNS))
    return table, per_s, bins


# ---------------------------------------------------------------------------------------- running


def run_probes(experiment: str, probe_pts: list, t, data_root: Path, host: str, info: dict, progress: bool,
               session) -> tuple[list, dict[str, float]]:
    """Run (or read) the closed-loop X_max probes of a family on target ``t``: (the sweep's results, {rw: the
    best IOPS a probe of it measured}); ([], {}) without probes."""
    if not probe_pts:
        return [], {}
    test_file = str(t.tf.path)
    runner = FioRunner({p.name: _fio_points.fio_job(p, test_file) for p in probe_pts})
    results = run_sweep(experiment, probe_pts, runner, data_root, host, sysinfo=info, progress=progress,
                        session=session)
    probes: dict[str, float] = {}
    for row in _fio_rows.result_rows(results, host, t.note, data_root):
        if row.get("status") == "done" and row.get("iops"):
            probes[row["rw"]] = max(probes.get(row["rw"], 0.0), float(row["iops"]))
    return results, probes


def _x_max(lp: LoadLatencyParams, rw: str, from_qd: tuple[float | None, str], probes: dict) -> tuple[float | None, str]:
    """X_max of `rw`: the profile's, this device's closed-loop tables (from_qd: _closed_x_max.x_max_closed's
    answer), or the probe's result."""
    if lp.x_max_iops > 0:
        return lp.x_max_iops, "profile x_max_iops"
    x, why = from_qd
    if x is not None:
        return x, why
    iops = probes.get(rw)
    if iops:
        return iops, f"probe at QD{lp.probe_iodepth}x{lp.probe_numjobs} ({why})"
    return None, why


#: The submit-mode decision of a device, kept beside its raw points: the rate split (and so every rate
#: point's name) depends on it, so a rerun must reuse it rather than probe again.
SUBMIT_MODE_FILE = "submit-mode.json"


def submit_mode(data_root: Path, host: str, target: Path, engine: str, direct: bool, medium: dict,
                reading_only: bool = False) -> dict:
    """{mode, why, latency_us, ...}: the recorded decision for this engine, O_DIRECT, fio and medium, else a
    new probe (memstor.measure.openloop.probe_submit_mode_details) recorded in ``<raw dir>/submit-mode.json``.
    reading_only: the run only reads (a SweepSession's ``only_measured``): NotAllMeasured instead of a probe."""
    path = raw_dir(Path(data_root), host, EXPERIMENT) / SUBMIT_MODE_FILE
    old = read_json(path) or {}
    if reading_only:  # a re-run on measured data: the recorded decision, without asking fio its version
        same = {k: v for k, v in (old.get("key") or {}).items() if k != "fio_version"} == json.loads(
            json.dumps({"engine": engine, "direct": direct, "medium": medium}, default=str))
        if same:
            return old
        raise NotAllMeasured("the submit mode of this target is not probed yet")
    key = {"engine": engine, "direct": direct, "fio_version": fio_version(), "medium": medium}
    if old.get("key") == json.loads(json.dumps(key, default=str)):
        return old
    probe = probe_submit_mode_details(target, engine, timeout_s=PROBE_TIMEOUT_S, direct=direct)
    record = {"key": key, "mode": probe.mode, "why": probe.why, "open_loop": probe.open_loop,
              "latency_us": probe.latency_us, "rate_iops": probe.rate_iops, "engine": probe.engine,
              "open_load": probe.open_load, "fio_facts": fio_facts().as_dict(), "probed": utc_now()}
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(path, record)
    return json.loads(json.dumps(record, default=str))


#: fio jobs (processes) per CPU memstor may use, at most, in a rate point. Measured (fio-3.33, io_uring, O_DIRECT,
#: 64 MiB file, 2-vCPU KVM VM, 3 s): one inline Poisson job costs usr + sys 18 % of a CPU at 5000 IOPS and 50 %
#: at 20000 IOPS (about 10 us per I/O), so 4 jobs at the inline split (rate x latency 0.5: 5000 IOPS at
#: 100 us) keep a CPU below ~75 %; beyond that the rate per job rises and the open-loop check says what held.
JOBS_PER_CPU = 4


def job_rate_cap(probe: dict) -> int:
    """Highest rate per fio job (IOPS) of the rate points: a per-job rate x QD1 latency of INLINE_MAX_LOAD
    (inline submission bunches arrivals above it); the probe measured the arrivals at that load or above
    (``open_load``), which is what a point's check compares with. A decision recorded with offload (before
    OFFLOAD_WHY was measured) keeps its split, so that its points keep their names."""
    if probe["mode"] == "offload":
        return MAX_JOB_RATE_IOPS
    return gating_cap_iops(probe["latency_us"])


def _rate_configs(lp: LoadLatencyParams, t, data_root: Path, host: str, info: dict, reading_only: bool,
                  x_maxes: dict) -> list[dict]:
    """The offered-rate points of every rw with an X_max (``x_maxes``: rw -> (X_max, its source)): ioarrive's
    (no probe: nothing of fio is in their path), or fio's rate mode after its submit-mode decision
    (:func:`submit_mode`); what was decided goes into ``info`` (the manifest's sysinfo)."""
    if lp.generator == "ioarrive":
        info.update(generator="ioarrive", max_outstanding=_ioarrive.MAX_OUTSTANDING)
        return [_ioarrive.rate_config(EXPERIMENT, lp.common, t.engine, rw=rw, bs=lp.bs, util=u, x_max=x,
                                      x_max_source=source)
                for rw, (x, source) in x_maxes.items() for u in lp.utilisation_pct]
    probe = submit_mode(data_root, host, Path(t.tf.path), t.engine, bool(lp.common.direct), t.medium, reading_only)
    max_per_job = job_rate_cap(probe)
    max_jobs = JOBS_PER_CPU * usable_cpus()
    info.update(generator="fio", submit_mode=probe["mode"], submit_mode_why=probe["why"],
                max_job_rate_iops=max_per_job, max_jobs=max_jobs, qd1_latency_us=round(probe["latency_us"], 1))
    return [rate_config(lp, t.engine, rw, u, x, source, probe, max_per_job, max_jobs)
            for rw, (x, source) in x_maxes.items() for u in lp.utilisation_pct]


def run_load_latency(params: dict, *, data_root: Path, target_dir: Path | None, host: str,
                     progress: bool = True, session=None) -> pd.DataFrame:
    """Run or resume fio-load-latency; write and return its tidy table (and the per-second table). session:
    the run's memstor.measure.sweep.SweepSession (default: one of this call alone)."""
    session = session if session is not None else SweepSession()
    lp = load_latency_params(params)
    c = lp.common
    data_root = Path(data_root)

    def body(t):
        test_file = str(t.tf.path)
        from_qd = {rw: _closed_x_max.x_max_closed(data_root, host, rw, lp.bs, c.file_size_bytes)
                   for rw in lp.rw}  # read once
        need_probe = [rw for rw in lp.rw if lp.x_max_iops <= 0 and from_qd[rw][0] is None]
        probe_pts = make_points([probe_config(lp, t.engine, rw) for rw in need_probe], c, t.medium, test_file)
        info = {"ioengine_requested": c.ioengine, **t.info}
        results, probes = run_probes(EXPERIMENT, probe_pts, t, data_root, host, info, progress, session)
        x_maxes, missing = {}, []
        for rw in lp.rw:
            x_max, source = _x_max(lp, rw, from_qd[rw], probes)
            if x_max is None:
                missing.append(f"{rw}: {source}")
                continue
            x_maxes[rw] = (x_max, source)
        configs = _rate_configs(lp, t, data_root, host, info, session.only_measured, x_maxes)
        configs += [lt_config(lp, t.engine, rw) for rw in lp.rw]
        points = probe_pts + make_points(configs, c, t.medium, test_file)
        if configs:
            mine = {p.name: _ioarrive.job(p, test_file, lp.rt_priority) for p in points
                    if _ioarrive.is_ioarrive(p.params)}
            runner = _ioarrive.GeneratorRunner({p.name: fio_job(p, test_file) for p in points if p.name not in mine},
                                               mine)
            results = run_sweep(EXPERIMENT, points, runner, data_root, host, sysinfo=info, progress=progress,
                                session=session)
        _fio_target.remove_when_full(results, t.tf)
        return t, points, results, missing

    t, points, results, missing = _fio_target.on_target(EXPERIMENT, c, data_root, target_dir, host, body,
                                                        session=session)
    _fio_run.check_refused(EXPERIMENT, results)
    table, seconds, bins = result_tables(results, host, t.note, data_root)
    out = _fio_run.write_table(table, data_root, host, EXPERIMENT)
    _fio_run.write_table(seconds, data_root, host, SECONDS_TABLE)
    _fio_run.write_table(bins, data_root, host, EXPERIMENT + BINS_SUFFIX)
    if missing:
        raise MemstorError(f"{EXPERIMENT}: no X_max for {'; '.join(missing)}; rerun to retry the probe, or set "
                           "x_max_iops in the profile")
    _fio_run.report_failures(EXPERIMENT, table, len(points), out, data_root, host)
    return table


run = run_load_latency
