"""The points of a fio family: their coordinates, file-safe names, sweep points and fio jobs.

A point is one configuration x repetition (:class:`memstor.measure.sweep.Point`); its name is
:func:`config_name` plus ``-rep<N>``, the raw file stem under ``<data>/raw/<host>/<experiment>/``.
"""

from __future__ import annotations

from collections.abc import Sequence

from memstor.experiments._fio_params import FioCommon
from memstor.measure.fio import FioJob
from memstor.measure.sweep import Point

#: Seconds fio needs beyond runtime + ramp (start-up, file open, JSON) for the progress-bar ETA.
OVERHEAD_S = 1.0


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
    p = point.params
    window = log_avg_msec(p["runtime_s"])
    pct = p.get("precision_pct")
    return FioJob(name=point.name, rw=p["rw"], bs=p["bs"], iodepth=p["iodepth"], numjobs=p["numjobs"],
                  rwmixread=p["rwmixread"], ioengine=p["ioengine"], direct=bool(p["direct"]),
                  size=p["file_size"], runtime_s=p["runtime_s"], ramp_s=p["ramp_s"], time_based=True,
                  group_reporting=True, filename=filename, logs=True, hist_log=False, log_avg_msec=window,
                  status_interval_ms=window if pct else 0, precision_pct=float(pct) if pct else None)
