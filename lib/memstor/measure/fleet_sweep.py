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
from memstor.measure.fio import FioJob
from memstor.measure.fio_output import json_complete
from memstor.measure.fleet import FleetJob, run_fleet_point
from memstor.measure.fleet_hosts import Host
from memstor.measure.progress import Progress
from memstor.measure.sweep import (
    Point,
    PointResult,
    SweepFolder,
    SweepInterrupted,
    SweepSession,
    check_points,
    open_folder,
    raw_dir,
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
                    ssh_extra: Sequence[str] = (), session: SweepSession | None = None) -> dict[str, list[PointResult]]:
    """Run every grid position on all hosts whose point there is not complete, at once; {label: results}.

    session: where the points are counted (its recorded fields go to each host's manifest beside ``fleet``).
    Raises SweepLocked when another sweep holds a host's folder, SweepInterrupted on Ctrl-C (every fio server
    stopped, no temp file left that the next sweep would not clean)."""
    session = session if session is not None else SweepSession()
    lengths = {len(p.points) for p in plans}
    if len(lengths) != 1:
        raise UsageError(f"{experiment}: the hosts' grids differ in length ({sorted(lengths)}): a bug")
    for plan in plans:
        check_points(plan.points)
    extra = {**session.record, "fleet": [q.host.label for q in plans]}
    with ExitStack() as stack:
        folders = {plan.host.label: stack.enter_context(open_folder(
            experiment, plan.host.label, raw_dir(data_root, plan.host.label, experiment), plan.points, RawFiles(),
            plan.sysinfo, extra)) for plan in plans}
        for folder in folders.values():
            folder.write_manifest()
        n = lengths.pop()
        todo_at = [[plan for plan in plans if plan.points[i].name not in folders[plan.host.label].settled()]
                   for i in range(n)]
        first = plans[0].points
        bar = Progress(first, {first[i].name for i in range(n) if not todo_at[i]}, f"{experiment} x{len(plans)}",
                       progress)
        results: dict[str, list[PointResult]] = {p.host.label: [] for p in plans}
        try:
            for i in range(n):
                _fleet_position(experiment, i, plans, folders, todo_at[i], results, bar, ssh_extra)
        except KeyboardInterrupt:
            done = sum(1 for rs in results.values() for r in rs if r.status in ("done", "cached"))
            raise SweepInterrupted(f"interrupted: {done} of {n * len(plans)} host points done; rerun the same "
                                   "command to resume") from None
        finally:
            bar.close()
    for label, folder in folders.items():
        session.add(results[label], folder.ran)
    return results


def _fleet_position(experiment: str, i: int, plans: Sequence[HostPlan], folders: dict[str, SweepFolder],
                    todo: list[HostPlan], results: dict[str, list[PointResult]], bar: Progress,
                    ssh_extra: Sequence[str]) -> None:
    """Grid position ``i``: the hosts' known results as they are, the ``todo`` hosts' points run at once."""
    for plan in plans:
        known = folders[plan.host.label].known(plan.points[i])
        if known is not None:
            results[plan.host.label].append(known)
    if not todo:
        return
    first = plans[0].points[i]
    bar.start(first)
    jobs = [FleetJob(plan.host, plan.points[i], folders[plan.host.label].directory, _job(plan, plan.points[i]))
            for plan in todo]
    for plan, res in zip(todo, run_fleet_point(jobs, experiment=experiment, ssh_extra=ssh_extra), strict=True):
        results[plan.host.label].append(res)
        folders[plan.host.label].record(i, res)
    bar.finish(first)


def _job(plan: HostPlan, point: Point) -> FioJob:
    try:
        return plan.jobs[point.name]
    except KeyError:
        raise UsageError(f"point {point.name}: no fio job defined for it on {plan.host.label} (a bug)") from None
