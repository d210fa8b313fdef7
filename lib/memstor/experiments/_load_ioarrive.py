"""fio-load-latency's offered-rate points run by ioarrive, memstor's arrival-driven generator (lib/ioarrive/):
their parameters and names, the ioarrive job, the sweep runner that serves them beside fio's (the X_max probe
and the ``lt`` latency_target point stay fio runs) and their rows in the family's tables.

One ioarrive process per point: it issues every I/O at its intended (Poisson) arrival whatever is in flight,
up to its cap on outstanding I/Os (:data:`MAX_OUTSTANDING`, recorded; reaching it marks the run overloaded),
O_DIRECT, on the family's test file (named twice). Its JSON is the point's raw file. What the rows say:

- ``lat_mean_us``, ``lat_stddev_us``, ``lat_min_us``, ``lat_max_us``, ``lat_p50_us`` … ``lat_p99_9_us``:
  the **response time**, completion − intended arrival (what a user of the device waits: the generator's own
  lateness included, so no coordinated omission); ``clat_p*`` and ``service_*``: the **service time**,
  completion − submission (fio's completion latency's meaning); ``lag_*``: submission − intended arrival.
- ``open_loop``: ioarrive's own self-checks all passed (achieved vs offered ±5 %, arrivals Poisson — KS,
  trend, independence — on the intended and the submitted times, p99 lag under its bound, not overloaded,
  drained) AND achieved within ±5 % of offered (the family's two-sided rule, the same for fio's points).
- ``overloaded``: achieved < 95 % of offered, or the cap was reached (``ceiling_reached``: the cap).
- ``cpu_usr_pct`` / ``cpu_sys_pct`` stay empty: the schema gives fio's own CPU there, which the
  load_generator_cpu check judges; ioarrive's submitter spins before each arrival by design, so its CPU is
  reported (``generator_cpu_pct``) and its lateness judged by its lag check instead.
- processed bins: the service histogram as kind ``clat``, the response histogram as kind ``lat`` (each bin at
  its midpoint, ioarrive's percentile rule), so the percentiles and the queueing models' service time read them
  as fio's; the per-second series: IOPS, mean and p99 response of the I/Os completed in each second.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

import memstor.experiments._fio_points as _fio_points
import memstor.experiments._fio_rows as _fio_rows
from memstor.core.batchmeans import INTERVAL_COLUMNS, ci_columns
from memstor.core.errors import MemstorError, ParseError
from memstor.core.fiohist import BIN_COLUMNS
from memstor.core.validate import Section
from memstor.measure import ioarrive
from memstor.measure.fio import FioRunner
from memstor.measure.openloop import RATE_TOLERANCE_PCT
from memstor.parse.ioarrive import (
    PAUSE_COLUMNS,
    SUBMIT_COLUMNS,
    pause_columns,
    submit_columns,
    wake_delay_p99_us,
)
from memstor.parse.ioarrive import load as load_ioarrive

GENERATORS = ("ioarrive", "fio")
#: ioarrive's cap on I/Os in flight (its default): far above any depth a device needs, so that arrivals never
#: wait for a slot; reaching it stops the issuing and marks the run overloaded (never silent gating).
MAX_OUTSTANDING = 4096
#: Achieved below this share of the offered rate: the device could not keep up (the family's OVERLOAD_RATIO).
OVERLOAD_RATIO = 0.95
#: Columns after the family's LOAD_COLUMNS (units in the names: µs, %); empty for fio's points but generator.
GENERATOR_COLUMNS = [
    "generator",          # ioarrive | fio: what issued the point's I/O (a table without the column: fio)
    "service_mean_us", "service_p50_us", "service_p99_us", "service_p99_9_us",  # completion - submission
    "lag_mean_us", "lag_p50_us", "lag_p99_us", "lag_p99_9_us",   # submission - intended arrival
    "lag_bound_us",       # the p99 lag above which ioarrive calls itself generator-bound
    "generator_bound",    # the p99 lag exceeded that bound: the generator, not the device, was late
    "max_outstanding",    # ioarrive's cap on I/Os in flight (reached: overloaded and ceiling_reached)
    "generator_checks",   # ok, or ioarrive's failed self-checks name[/source] joined by ';'
    "generator_reasons",  # the failed checks' sentences
    "generator_cpu_pct",  # ioarrive's own CPU use, % of one CPU (reported, not judged)
    "wake_delay_p99_us",  # how late its submitter's sleeps woke, p99: the machine's scheduling (lag's usual cause)
    *PAUSE_COLUMNS,       # the machine's own pauses just before the point, no I/O running (PAUSE_PROBE_S)
    *SUBMIT_COLUMNS,      # its submit calls that blocked in the kernel, the most in flight, the disk's request queue
]
#: Columns the per-second table adds for ioarrive (after the fio ones): the generator and the p99 response.
SECOND_EXTRA = ["generator", "lat_p99_us"]
_ASYNC_ENGINES = ("io_uring", "libaio")
#: Seconds ioarrive spins on every CPU before each point to measure the machine's own pauses (--pause-probe):
#: a pause longer than the lag bound fails the loop whatever the generator does, and the report says which.
PAUSE_PROBE_S = 0.5


def is_ioarrive(params: dict) -> bool:
    """True for a point ioarrive runs (its params say ``generator: ioarrive``; fio's points have no such key)."""
    return params.get("generator") == "ioarrive"


def engine_for(fio_engine: str, direct: bool = True) -> str:
    """ioarrive's engine for the family's chosen fio engine: with O_DIRECT, libaio for either asynchronous one;
    buffered, io_uring (libaio would block in its submit call), else its thread pool.

    Not io_uring with O_DIRECT: a read's completion through io_uring is task work that runs in the context of
    the thread that submitted it, ioarrive's submitter, so its reaper sees the completion only after the
    submitter ran it; libaio's completions reach the reaper from the interrupt. Measured on the 2-vCPU VM
    (3 s runs, 3 interleaved repetitions at 13,742, 41,226 and 68,711 IOPS of random 4 KiB reads): service p50
    63-90 µs with libaio against 101-122 µs with io_uring at 41-69k IOPS, and p99 lag lower in 8 of 9 pairs."""
    if fio_engine in _ASYNC_ENGINES:
        return "libaio" if direct else ("io_uring" if fio_engine == "io_uring" else "sync")
    return "sync"


def rate_config(experiment: str, c, engine: str, *, rw: str, bs: str, util: float, x_max: float,
                x_max_source: str) -> dict:
    """An offered-rate point of ioarrive: util % of x_max (whole IOPS: what ioarrive is asked, and offers),
    Poisson arrivals, one process up to MAX_OUTSTANDING in flight (``iodepth`` x ``numjobs`` = the cap x 1)."""
    rate = max(1, round(util / 100.0 * x_max))
    cfg = _fio_points.point_params(experiment, c, engine_for(engine, bool(c.direct)), rw=rw, bs=bs, iodepth=MAX_OUTSTANDING,
                                   numjobs=1)
    return dict(cfg, phase="rate", generator="ioarrive", utilisation_pct=util, rate_iops=rate,
                offered_iops=float(rate), arrival="poisson", max_outstanding=MAX_OUTSTANDING,
                x_max_iops=round(x_max, 1), x_max_source=x_max_source)


def point_name(cfg: dict, suffix: str, rep: int) -> str:
    """e.g. ``randread-bs4k-u50-ioarrive-r12000-cap4096-io_uring-d1-t2-r1-f256m-rep1`` (suffix: engine, direct,
    runtime, ramp, file size)."""
    util = cfg["utilisation_pct"]
    util = str(int(util)) if float(util) == int(util) else f"{util:g}"
    return (f"{cfg['rw']}-bs{cfg['bs']}-u{util}-ioarrive-r{cfg['rate_iops']}-cap{cfg['max_outstanding']}-"
            f"{suffix}-rep{rep}")


#: The profile key: ioarrive's submitter and reaper under SCHED_FIFO at this priority (0: the normal scheduler).
#: Refused without CAP_SYS_NICE: the run goes on under the normal scheduler and its JSON says so. Not part of a
#: point's identity (the JSON records the scheduling used).
RT_KEY = "rt_priority"


def rt_priority(section: Section, params: dict) -> int:
    """The validated ``rt_priority`` of a family's section (0..99; absent: 0)."""
    return section.integer(RT_KEY, params.get(RT_KEY, 0), 0, 99,
                           want="use 0 (the normal scheduler) or a SCHED_FIFO priority 1..99 for ioarrive's "
                                "submitter and reaper (needs CAP_SYS_NICE; at least 2 CPUs: a spinning FIFO "
                                "thread leaves others little of its CPU)")


def job(point, filename: str, rt: int = 0) -> ioarrive.IoarriveJob:
    """The ioarrive job of a point: the rw's direction at the whole rate, the repetition as the seed; rt: the
    SCHED_FIFO priority (0: the normal scheduler)."""
    p = point.params
    return ioarrive.IoarriveJob(rt_priority=rt or None,
        target=filename, rate_iops=int(p["rate_iops"]), read_share=0 if "write" in p["rw"] else 100,
        arrival=p["arrival"], bs=p["bs"], pattern="random" if str(p["rw"]).startswith("rand") else "sequential",
        runtime_s=float(p["runtime_s"]), ramp_s=float(p["ramp_s"]), engine=p["ioengine"],
        max_outstanding=int(p["max_outstanding"]), direct=bool(p["direct"]), seed=int(p.get("rep", 1)),
        pause_probe_s=PAUSE_PROBE_S)


class GeneratorRunner:
    """The sweep runner of a family whose points two tools run: ioarrive's points (an IoarriveRunner) and the
    others — X_max probe, ``lt``, fio's rate points — fio's (a FioRunner). Both write one JSON per point; a
    raw file is complete when its own tool's reader says so."""

    suffix = ".json"

    def __init__(self, fio_jobs: dict, ioarrive_jobs: dict):
        self.fio = FioRunner(fio_jobs)
        self.ioarrive = ioarrive.IoarriveRunner(ioarrive_jobs)

    def run(self, point: Any, out_tmp: Path) -> dict:
        return (self.ioarrive if point.name in self.ioarrive.jobs else self.fio).run(point, out_tmp)

    def complete(self, raw: Path) -> bool:
        return ioarrive.complete(raw) or self.fio.complete(raw)


# ------------------------------------------------------------------------------------------- rows


def _us(v: Any) -> float | None:
    return None if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) else v / 1e3


def _stats_us(d: dict, key: str) -> dict:
    return {k: _us(v) for k, v in (d.get(key) or {}).items()}


def intervals(doc: dict, direction: str) -> pd.DataFrame:
    """The per-second series of a direction as memstor.core.batchmeans' interval frame (1-s windows of the
    measured window; latency: mean response of the I/Os completed in the second, weighted by their count)."""
    d = doc["directions"][direction]
    ps, runtime = d.get("per_second") or {}, float((doc.get("job") or {}).get("runtime_s") or 0)
    bs = float((doc.get("job") or {}).get("bs_bytes") or 0)
    rows = []
    for t, iops, mean in zip(ps.get("t_s", []), ps.get("iops", []), ps.get("resp_mean_ns", []), strict=False):
        span = min(1.0, runtime - t) if runtime else 1.0
        if iops is None or span < 1.0:  # a partial last second is not a window of the same length
            continue
        rows.append({"window": int(t) + 1, "time_ms": 1000.0 * (t + 1), "direction": direction, "iops": float(iops),
                     "bw_MBps": float(iops) * bs / 1e6, "lat_mean_us": _us(mean), "ios": float(iops),
                     "lat_ios": float(iops), "jobs": 1})
    return pd.DataFrame(rows, columns=list(INTERVAL_COLUMNS))


def _failed_checks(doc: dict, direction: str) -> tuple[str, str]:
    names, why = [], []
    for c in doc.get("checks") or []:
        if not c.get("passed") and c.get("direction") in (direction, None):
            names.append(str(c.get("name")) + (f"/{c['source']}" if c.get("source") else ""))
            why.append(str(c.get("detail") or ""))
    return ";".join(names) or "ok", "; ".join(why)


def _achieved_MBps(achieved: float | None, job: dict) -> float | None:
    """MB/s (10^6 bytes/s) of the achieved IOPS (completions in the measured window) at the job's block size: the
    rate its ``iops`` column gives, as fio's bandwidth is (S11-bare 10: ioarrive's own bw_MBps counts the I/Os
    whose intended arrival fell in the window, completed at any time, 1.33x the achieved rate behind a backlog)."""
    bs = job.get("bs_bytes")
    return None if achieved is None or not bs else float(achieved) * float(bs) / 1e6


def direction_row(row: dict, doc: dict, params: dict) -> dict:
    """The measured columns of one direction row of an ioarrive point (``row``: its failed_rows skeleton)."""
    d = doc["directions"][row["direction"]]
    resp, svc, lag = _stats_us(d, "response_ns"), _stats_us(d, "service_ns"), _stats_us(d, "lag_ns")
    job, cap_hit = doc.get("job") or {}, bool(doc.get("overloaded"))
    offered, achieved = d.get("offered_iops"), d.get("achieved_iops")
    pct = 100.0 * achieved / offered if offered and achieved is not None else None
    held = bool(doc.get("open_loop")) and pct is not None and abs(pct - 100.0) <= RATE_TOLERANCE_PCT
    checks, reasons = _failed_checks(doc, row["direction"])
    sec = intervals(doc, row["direction"])["iops"]
    mean = float(sec.mean()) if len(sec) else math.nan
    row.update({
        "status": "done", "error": 0, "ioengine": (doc.get("engine") or {}).get("name") or row.get("ioengine"),
        "bs_bytes": job.get("bs_bytes", row.get("bs_bytes")), "iops": achieved, "bw_MBps": _achieved_MBps(achieved, job),
        "lat_mean_us": resp.get("mean"), "lat_stddev_us": resp.get("stddev"), "lat_min_us": resp.get("min"),
        "lat_max_us": resp.get("max"), "clat_p50_us": svc.get("p50"), "clat_p90_us": svc.get("p90"),
        "clat_p99_us": svc.get("p99"), "clat_p99_9_us": svc.get("p99_9"), "clat_p99_99_us": svc.get("p99_99"),
        "runtime_s": job.get("runtime_s"), "total_ios": d.get("completed"), "groupid": 0,
        "phase": "rate", "utilisation_pct": params.get("utilisation_pct"), "offered_iops": offered,
        "achieved_iops": achieved, "achieved_pct": pct, "lat_p50_us": resp.get("p50"), "lat_p99_us": resp.get("p99"),
        "lat_p99_9_us": resp.get("p99_9"),
        "overloaded": cap_hit or bool(pct is not None and pct < 100.0 * OVERLOAD_RATIO),
        "ceiling_reached": cap_hit, "x_max_iops": params.get("x_max_iops"), "x_max_source": params.get("x_max_source"),
        "rate_per_job_iops": params.get("rate_iops"), "open_loop": held,
        "iops_cv": float(sec.std(ddof=1) / mean) if len(sec) > 1 and mean > 0 else None,
        "min_1s_iops_pct": float(100.0 * sec.min() / mean) if len(sec) and mean > 0 else None,
        "generator": "ioarrive", "lag_bound_us": _us(d.get("lag_bound_ns")),
        "generator_bound": bool(doc.get("generator_bound")), "max_outstanding": job.get("max_outstanding"),
        "generator_checks": checks, "generator_reasons": reasons,
        "generator_cpu_pct": ((doc.get("cpu") or {}).get("process") or {}).get("cpu_pct"),
        "wake_delay_p99_us": wake_delay_p99_us(doc), **pause_columns(doc), **submit_columns(doc),
    })
    for prefix, stats in (("service", svc), ("lag", lag)):
        row.update({f"{prefix}_{k}_us": stats.get(k) for k in ("mean", "p50", "p99", "p99_9")})
    ci = ci_columns(intervals(doc, row["direction"]), row["direction"])
    ci["ci_note"] = "; ".join(x for x in ("ioarrive's 1-s series", ci.get("ci_note")) if x)
    row.update(ci)
    return row


def point_rows(res, host: str, note: str, source: str) -> tuple[list[dict], dict]:
    """(rows, document) of one ioarrive point: one row per direction of its rw (failed rows, with the reason,
    when the point failed or its raw file cannot be read; the document is then {})."""
    p = res.point.params
    base = {"phase": "rate", "utilisation_pct": p.get("utilisation_pct"), "offered_iops": p.get("offered_iops"),
            "x_max_iops": p.get("x_max_iops"), "x_max_source": p.get("x_max_source"),
            "rate_per_job_iops": p.get("rate_iops"), "generator": "ioarrive", "max_outstanding": p.get("max_outstanding")}

    def failed(error: str, src: str | None) -> list[dict]:
        return [dict(r, **base) for r in _fio_rows.failed_rows(p, res.point.name, host, error, src, note)]

    if res.status == "failed" or res.raw is None:
        return failed(res.error or "failed", None), {}
    try:
        doc = load_ioarrive(Path(res.raw).read_text(encoding="utf-8", errors="replace"))
    except (OSError, ParseError, MemstorError) as err:
        return failed(f"{source}: {err}", source), {}
    rows = []
    for row in failed("", source):
        if row["direction"] not in doc["directions"]:
            rows.append(dict(row, error=f"{source}: ioarrive measured no {row['direction']}s"))
            continue
        rows.append(direction_row(row, doc, p))
    return rows, doc


def seconds(doc: dict, res, host: str) -> pd.DataFrame:
    """The per-second rows of an ioarrive point: the family's SECOND_COLUMNS (clat_* empty: ioarrive's series
    holds the response) plus SECOND_EXTRA; t_s = end of the second, s since the point's start (ramp included)."""
    p, job = res.point.params, doc.get("job") or {}
    runtime, ramp, bs = float(job.get("runtime_s") or 0), float(job.get("ramp_s") or 0), float(job.get("bs_bytes") or 0)
    rows = []
    for direction, d in doc.get("directions", {}).items():
        ps = d.get("per_second") or {}
        for t, iops, mean, p99 in zip(ps.get("t_s", []), ps.get("iops", []), ps.get("resp_mean_ns", []),
                                      ps.get("resp_p99_ns", []), strict=False):
            rows.append({"host": host, "point": res.point.name, "rw": p["rw"], "utilisation_pct": p["utilisation_pct"],
                         "offered_iops": p["offered_iops"], "direction": direction,
                         "t_s": ramp + t + min(1.0, runtime - t), "iops": iops,
                         "bw_MBps": None if iops is None else iops * bs / 1e6, "lat_mean_us": _us(mean),
                         "generator": "ioarrive", "lat_p99_us": _us(p99)})
    return pd.DataFrame(rows)


def bins(doc: dict, res, source: str) -> list[dict]:
    """The processed bins (memstor.core.fiohist.BIN_COLUMNS) of an ioarrive point: service as ``clat``,
    response as ``lat``, each bin at its midpoint (ioarrive's percentile rule); the lag histogram stays raw."""
    out = []
    for direction, d in doc.get("directions", {}).items():
        for kind, key in (("clat", "service_ns"), ("lat", "response_ns")):
            for low, high, count in (d.get("bins") or {}).get(key) or []:
                out.append({"source": source, "jobname": res.point.name, "groupid": 0, "direction": direction,
                            "kind": kind, "latency_ns": (int(low) + int(high)) // 2, "count": int(count)})
    return [{c: r[c] for c in BIN_COLUMNS} for r in out]


def tables(res, host: str, note: str, data_root: Path) -> tuple[list[dict], pd.DataFrame, list[dict]]:
    """(rows, per-second rows, bins) of one point ioarrive ran; ``config`` is the point without its
    repetition (each offered rate is its own configuration)."""
    source = _fio_rows.relative(res.raw, data_root) if res.raw is not None else ""
    rows, doc = point_rows(res, host, note, source)
    for r in rows:
        r["config"] = r["point"].rsplit("-rep", 1)[0]
    if not doc:
        return rows, pd.DataFrame(), []
    return rows, seconds(doc, res, host), bins(doc, res, source)
