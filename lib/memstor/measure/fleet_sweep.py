"""A sweep over a fleet (issue 20): point i of the grid runs on every host at once, stored per host as a
local sweep stores it.

Each host keeps its own raw folder (``<data>/raw/<label>/<experiment>/``, memstor.measure.sweep.raw_dir) with
its lock, manifest, point files and metas, so a host's data reads exactly like a local run's and resume works
per point and per host: a rerun measures, at each grid position, only the hosts whose point is not complete
(a host that failed a point gets it again; the others are not measured twice). A completed raw point of
other params is kept and that host's point failed (memstor.measure.sweep.conflict).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from memstor.core.errors import UsageError
from memstor.core.files import clean_stale_tmp, sweep_lock, utc_now
from memstor.measure.fio import FioJob, json_complete
from memstor.measure.fleet import FleetJob, run_fleet_point
from memstor.measure.fleet_hosts import Host
from memstor.measure.sweep import (
    Point,
    PointResult,
    SweepInterrupted,
    _check_points,
    _count_point,
    _manifest,
    _normalise,
    _Progress,
    _write_manifest,
    conflict,
    is_cached,
    meta_path,
    raw_dir,
    raw_path,
)


class RawFiles:
    """What sweep.is_cached/conflict need of a runner: fio's JSON suffix and completeness check."""

    suffix = ".json"

    @staticmethod
    def complete(raw: Path) -> bool:
        return json_complete(raw)


@dataclass(frozen=True)
class HostPlan:
    """One host's side of a fleet sweep: its points (the grid, same order on every host), their fio jobs
    (by point name) and the manifest's ``sysinfo`` (the host's test file and engine)."""

    host: Host
    points: Sequence[Point]
    jobs: dict
    sysinfo: dict


def run_fleet_sweep(experiment: str, plans: Sequence[HostPlan], data_root: Path, *, progress: bool = True,
                    ssh_extra: Sequence[str] = ()) -> dict[str, list[PointResult]]:
    """Run every grid position on all hosts whose point there is not complete, at once; {label: results}.

    Raises SweepLocked when another sweep holds a host's folder, SweepInterrupted on Ctrl-C (every fio server
    stopped, no temp file left that the next sweep would not clean)."""
    lengths = {len(p.points) for p in plans}
    if len(lengths) != 1:
        raise UsageError(f"{experiment}: the hosts' grids differ in length ({sorted(lengths)}): a bug")
    for plan in plans:
        _check_points(plan.points)
    files = RawFiles()
    dirs = {p.host.label: raw_dir(data_root, p.host.label, experiment) for p in plans}
    started = utc_now()
    with ExitStack() as stack:
        cached: dict[str, set] = {}
        kept: dict[str, dict] = {}
        entries: dict[str, list] = {}
        for plan in plans:
            label, d = plan.host.label, dirs[plan.host.label]
            d.mkdir(parents=True, exist_ok=True)
            stack.enter_context(sweep_lock(d))
            clean_stale_tmp(d)
            cached[label] = {p.name for p in plan.points if is_cached(p, files, d)}
            kept[label] = {p.name: why for p in plan.points if p.name not in cached[label]
                           for why in [conflict(p, files, d)] if why}
            entries[label] = [{"name": p.name, "params": _normalise(p.params),
                               "status": "cached" if p.name in cached[label] else
                               "failed" if p.name in kept[label] else "pending",
                               "raw": raw_path(d, p, files.suffix).name if p.name in cached[label] else None,
                               "meta": meta_path(d, p).name, "error": kept[label].get(p.name)}
                              for p in plan.points]
            _write_manifest(d, _manifest(experiment, label, plan.sysinfo, entries[label], started,
                                         {"fleet": [q.host.label for q in plans]}))
        n = lengths.pop()
        todo_at = [[plan for plan in plans
                    if plan.points[i].name not in cached[plan.host.label] | set(kept[plan.host.label])]
                   for i in range(n)]
        first = plans[0].points
        bar = _Progress(first, {first[i].name for i in range(n) if not todo_at[i]}, f"{experiment} x{len(plans)}",
                        progress)
        results: dict[str, list[PointResult]] = {p.host.label: [] for p in plans}
        try:
            for i in range(n):
                for plan in plans:
                    label, p, d = plan.host.label, plan.points[i], dirs[plan.host.label]
                    if p.name in cached[label]:
                        results[label].append(PointResult(p, "cached", raw_path(d, p, ".json"), meta_path(d, p)))
                    elif p.name in kept[label]:
                        results[label].append(PointResult(p, "failed", None, meta_path(d, p), kept[label][p.name]))
                if not todo_at[i]:
                    continue
                bar.start(first[i])
                _count_point()
                jobs = [FleetJob(plan.host, plan.points[i], dirs[plan.host.label], _job(plan, plan.points[i]))
                        for plan in todo_at[i]]
                for plan, res in zip(todo_at[i], run_fleet_point(jobs, experiment=experiment, ssh_extra=ssh_extra),
                                     strict=True):
                    label = plan.host.label
                    results[label].append(res)
                    entries[label][i].update(status=res.status, raw=res.raw.name if res.raw else None, error=res.error)
                    _write_manifest(dirs[label], _manifest(experiment, label, plan.sysinfo, entries[label], started,
                                                           {"fleet": [q.host.label for q in plans]}))
                bar.finish(first[i])
        except KeyboardInterrupt:
            done = sum(1 for rs in results.values() for r in rs if r.status in ("done", "cached"))
            raise SweepInterrupted(f"interrupted: {done} of {n * len(plans)} host points done; rerun the same "
                                   "command to resume") from None
        finally:
            bar.close()
    return results


def _job(plan: HostPlan, point: Point) -> FioJob:
    try:
        return plan.jobs[point.name]
    except KeyError:
        raise UsageError(f"point {point.name}: no fio job defined for it on {plan.host.label} (a bug)") from None
