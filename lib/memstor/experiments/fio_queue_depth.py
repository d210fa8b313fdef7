"""fio-queue-depth, a storage family over the shared fio modules (``memstor.experiments._fio_*``): every
pattern at every queue depth, plus the spec-conditions point.

``iodepth`` is a list of depths, or ``auto``: the adaptive grid (memstor.analysis.adaptive_grid) doubles the
depth from 1 until the IOPS plateau, then adds depths around Little's-law knee N* = X_max · R(depth 1), at most
``max_points`` per pattern (by default one fewer than the doubling grid to ``max_iodepth``, the doublings not
cut: adaptive_grid.default_budget) and no deeper than ``max_iodepth``. Every point of it carries its reason in
``grid_note``; the sweep is run in rounds (each round measures what the rule asked for after the last one, and
a rerun reads the measured points and takes the same decisions)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

import memstor.experiments._fio_params as _fio_params
import memstor.experiments._fio_points as _fio_points
import memstor.experiments._fio_run as _fio_run
import memstor.experiments._fio_target as _fio_target
from memstor.analysis import adaptive_grid
from memstor.core.validate import Section
from memstor.measure.fio import FioRunner
from memstor.measure.progress import duration_text, plan_line
from memstor.measure.sweep import SweepSession, is_cached, raw_dir

EXPERIMENT = _fio_params.QUEUE_DEPTH
NOTEBOOK = "40-fio-queue-depth"
KIND = "fio"
#: The adaptive grid's optional keys (iodepth: auto): points per pattern, deepest queue.
GRID_KEYS = ("max_points", "max_iodepth")
OPTIONAL_KEYS = _fio_params.OPTIONAL_KEYS + _fio_params.PRECISION_KEYS + GRID_KEYS
#: This family's own keys, beside the ones every fio family has.
KEYS = ("bs", "rw", "iodepth", "spec_iodepth", "spec_numjobs")
#: ``iodepth: auto``: the adaptive grid.
AUTO = "auto"
#: The largest point budget a pattern may have.
MAX_POINTS = 100


@dataclass(frozen=True)
class QueueDepthParams:
    """fio-queue-depth: every rw at every iodepth (numjobs jobs), plus the spec-conditions point."""

    common: _fio_params.FioCommon
    bs: str
    rw: tuple
    iodepth: tuple     # the listed depths; () for the adaptive grid
    spec_iodepth: int  # 0 = no spec-conditions point
    spec_numjobs: int
    auto: bool = False  # iodepth: auto (memstor.analysis.adaptive_grid)
    max_points: int | None = None  # adaptive grid: points per pattern (None: adaptive_grid.default_budget)
    max_iodepth: int = adaptive_grid.DEFAULT_MAX_IODEPTH  # adaptive grid: deepest queue


def queue_depth_params(params: dict) -> QueueDepthParams:
    """Validate a fio-queue-depth section (UsageError naming the parameter and allowed values)."""
    v = Section(EXPERIMENT)
    if isinstance(params, dict):  # the grid's own optional keys, beside the ones every fio family takes
        grid = {k: params[k] for k in GRID_KEYS if k in params}
        params = {k: x for k, x in params.items() if k not in GRID_KEYS}
    else:
        grid = {}
    c = _fio_params.common_params(v, params, KEYS, precision=True)
    auto, depths = _depths(v, params["iodepth"])
    lo = adaptive_grid.MIN_POINTS
    return QueueDepthParams(
        common=c,
        bs=_fio_params.single_block_size(v, params, c),
        rw=_fio_params.patterns(v, params),
        iodepth=depths,
        spec_iodepth=v.integer("spec_iodepth", params["spec_iodepth"], 0, _fio_params.MAX_IODEPTH),
        spec_numjobs=v.integer("spec_numjobs", params["spec_numjobs"], 1, _fio_params.MAX_NUMJOBS),
        auto=auto,
        max_points=None if _or(grid, "max_points", None) is None else v.integer(
            "max_points", grid["max_points"], lo, MAX_POINTS,
            want=f"use an integer {lo}..{MAX_POINTS}: points per pattern of the adaptive grid (iodepth: auto; {lo} "
                 "confirm a plateau at the earliest), or leave it out: one fewer than the doubling grid to "
                 "max_iodepth"),
        max_iodepth=v.integer("max_iodepth", _or(grid, "max_iodepth", adaptive_grid.DEFAULT_MAX_IODEPTH), 2,
                              _fio_params.MAX_IODEPTH, want=f"use an integer 2..{_fio_params.MAX_IODEPTH}: the deepest queue "
                                                    "the adaptive grid (iodepth: auto) doubles to"),
    )


def _or(values: dict, key: str, default):
    """values[key], or ``default`` when it is absent or empty."""
    x = values.get(key)
    return default if x is None or x == "" else x


def _depths(v: Section, value) -> tuple[bool, tuple]:
    """(auto, depths): ``auto`` (alone, also as a one-item list as ``--set iodepth=auto`` gives it) for the
    adaptive grid, else the listed depths, each once."""
    items = v.items("iodepth", value)
    want = f"use a list of queue depths, each an integer 1..{_fio_params.MAX_IODEPTH}, or {AUTO} for the adaptive grid"
    if any(isinstance(x, str) and x.strip().lower() == AUTO for x in items):
        if len(items) != 1:
            raise v.error("iodepth", value, f"{AUTO} stands alone: {want}")
        return True, ()
    return False, v.unique("iodepth", [v.integer("iodepth", d, 1, _fio_params.MAX_IODEPTH, want=want) for d in items])


# ------------------------------------------------------------------------------------------- points


def queue_depth_configs(qp: QueueDepthParams, engine: str, grid: dict | None = None) -> list:
    """Configurations of fio-queue-depth: rw x iodepth, then the spec-conditions point per rw.

    For ``iodepth: auto``, ``grid`` is the adaptive grid so far, {rw: {depth: reason}} (default: depth 1 of
    every pattern, where it starts): its depths in increasing order, each with ``grid_note`` = its reason."""
    c = qp.common
    if qp.auto:
        grid = grid if grid is not None else start_grid(qp)
        out = [dict(_fio_points.point_params(EXPERIMENT, c, engine, rw=rw, bs=qp.bs, iodepth=qd, numjobs=c.numjobs),
                    grid_note=note) for rw in qp.rw for qd, note in sorted(grid.get(rw, {}).items())]
    else:
        out = [_fio_points.point_params(EXPERIMENT, c, engine, rw=rw, bs=qp.bs, iodepth=qd, numjobs=c.numjobs)
               for rw in qp.rw for qd in qp.iodepth]
    if qp.spec_iodepth:
        out += [_fio_points.point_params(EXPERIMENT, c, engine, rw=rw, bs=qp.bs, iodepth=qp.spec_iodepth,
                                  numjobs=qp.spec_numjobs, spec_point=True) for rw in qp.rw]
    return out


def run_queue_depth(params: dict, *, data_root: Path, target_dir: Path | None, host: str,
                    progress: bool = True, session: SweepSession | None = None) -> pd.DataFrame:
    """Run or resume fio-queue-depth (incl. the spec-conditions point); write and return its tidy table."""
    qp = queue_depth_params(params)
    if qp.auto:
        return run_adaptive(qp, data_root=data_root, target_dir=target_dir, host=host, progress=progress,
                            session=session)
    return _fio_run.run_family(EXPERIMENT, queue_depth_configs, qp, data_root=data_root, target_dir=target_dir,
                           host=host, progress=progress, session=session)


# ------------------------------------------------------------------------------------- adaptive grid


def start_grid(qp: QueueDepthParams) -> dict:
    """The adaptive grid before anything is measured: depth 1 of every pattern."""
    return {rw: {1: adaptive_grid.START} for rw in qp.rw}


def pattern_points(df: pd.DataFrame, rw: str) -> list:
    """(iodepth, iops, lat_mean_us) of one pattern's measured queue-depth points (the spec-conditions point
    left out; repetitions averaged), in increasing depth: what memstor.analysis.adaptive_grid decides on."""
    spec = df["spec_point"].fillna(False).astype(bool) if "spec_point" in df else False
    ok = df[(df["rw"] == rw) & ~spec & (df["status"] == "done")]
    ok = ok.assign(iops=pd.to_numeric(ok["iops"], errors="coerce"),
                   lat_mean_us=pd.to_numeric(ok["lat_mean_us"], errors="coerce"))
    ok = ok[ok["iops"].notna() & ok["lat_mean_us"].notna()]
    g = ok.groupby("iodepth")[["iops", "lat_mean_us"]].mean().sort_index()
    return [(int(d), float(r["iops"]), float(r["lat_mean_us"])) for d, r in g.iterrows()]


def grid_plan_note(qp: QueueDepthParams, round_no: int) -> str:
    """What the plan line of an adaptive round adds: that more points may follow, and the budget."""
    c = qp.common
    per = float(c.runtime_s) + float(c.ramp_s) + _fio_points.OVERHEAD_S + 0.1 * c.numjobs
    each = adaptive_grid.most_points(qp.max_points, qp.max_iodepth)
    most = each * len(qp.rw) * c.repetitions
    return (f"adaptive grid (iodepth: {AUTO}), round {round_no}: more points may follow, at most {each} "
            f"per pattern up to depth {qp.max_iodepth} ({most} runs, {duration_text(most * per)} at most)")


def _measured(qp: QueueDepthParams, grid: dict, data_root: Path, target_dir: Path | None, host: str) -> bool:
    """True when every point of `grid` is measured already (memstor.measure.sweep.is_cached, under the names of
    the engine the last sweep recorded): its round then runs without a plan line or a progress bar."""
    t = _fio_target.recorded_target(EXPERIMENT, qp.common, Path(data_root), target_dir, host)
    if t is None:
        return False
    folder = raw_dir(Path(data_root), host, EXPERIMENT)
    runner = FioRunner({})
    points = _fio_points.make_points([dict(cfg, medium=t.medium) for cfg in queue_depth_configs(qp, t.engine, grid)],
                              qp.common.repetitions, str(t.tf.path))
    return all(is_cached(p, runner, folder) for p in points)


def run_adaptive(qp: QueueDepthParams, *, data_root: Path, target_dir: Path | None, host: str,
                 progress: bool = True, session: SweepSession | None = None) -> pd.DataFrame:
    """Run or resume fio-queue-depth with ``iodepth: auto``; write and return its tidy table.

    Rounds: measure the grid so far (memstor.experiments._fio_run.run_family: measured points are read, not
    measured again), ask memstor.analysis.adaptive_grid for the next depths of every pattern not complete, add
    them with their reasons, until every pattern is complete. A failed point ends the run after its round (the
    rule cannot go past a point it has no value for): the rerun retries it and goes on. Rounds whose points are
    all measured run quietly; when no round measured anything, one line says so. With ``progress``, the end
    says per pattern which depths were measured and why the grid is complete."""
    session = session if session is not None else SweepSession()
    with _fio_target.HeldTarget() as held:  # one lock, test file and engine probe for all the rounds that measure
        grid, complete, loud_rounds, df = _rounds(qp, data_root, target_dir, host, progress, held, session)
    if progress and len(complete) == len(qp.rw):  # (a failed point ended the rounds: its message said so)
        if not loud_rounds:
            engine = str(df["ioengine"].dropna().iloc[0]) if df["ioengine"].notna().any() else qp.common.ioengine
            points = _fio_points.make_points(queue_depth_configs(qp, engine, grid), qp.common.repetitions, "")
            print(plan_line(EXPERIMENT, points, {p.name for p in points}, raw_dir(Path(data_root), host, EXPERIMENT),
                            None, f"adaptive grid (iodepth: {AUTO}): the same decisions as when measured"),
                  file=sys.stderr)
        for rw in complete:
            depths = ", ".join(str(d) for d in sorted(grid[rw]))
            print(f"{EXPERIMENT}: adaptive grid, {rw}: depths {depths}: {complete[rw]}", file=sys.stderr)
    return df


def _rounds(qp: QueueDepthParams, data_root: Path, target_dir: Path | None, host: str, progress: bool,
            held, session: SweepSession) -> tuple[dict, dict, int, pd.DataFrame]:
    """The rounds of :func:`run_adaptive` on the `held` target: (grid {rw: {depth: reason}}, complete
    {rw: why the pattern's grid is complete}, rounds that measured, the last round's table). A failed point
    ends the rounds (complete then lacks the patterns not finished)."""
    grid = start_grid(qp)
    complete: dict[str, str] = {}
    loud_rounds = 0
    round_no = 0
    while True:
        round_no += 1
        now = {rw: dict(depths) for rw, depths in grid.items()}
        loud = progress and not _measured(qp, now, data_root, target_dir, host)
        loud_rounds += loud
        with session.noted(grid_plan_note(qp, round_no)):
            df = _fio_run.run_family(EXPERIMENT, lambda v, engine, g=now: queue_depth_configs(v, engine, g), qp,
                                 data_root=data_root, target_dir=target_dir, host=host, progress=loud, held=held,
                                 session=session)
        if (df["status"] == "failed").any():
            print(f"{EXPERIMENT}: the adaptive grid stops after round {round_no}: a point failed and the rule "
                  "needs its value; rerun the same command to retry it and go on", file=sys.stderr)
            return grid, complete, loud_rounds, df
        for rw in qp.rw:
            if rw in complete:
                continue
            step = adaptive_grid.next_depths(pattern_points(df, rw), max_points=qp.max_points,
                                             max_iodepth=qp.max_iodepth, numjobs=qp.common.numjobs)
            again = sorted(d for d, _ in step.depths if d in grid[rw])
            if again:  # measured, but without IOPS or mean latency (e.g. no I/O done): the rule cannot go on
                complete[rw] = (f"stopped: depth {', '.join(map(str, again))} was measured without IOPS or mean "
                                "latency (see its row)")
                continue
            if step.done:
                complete[rw] = step.done
            grid[rw].update(dict(step.depths))
        if len(complete) == len(qp.rw):
            return grid, complete, loud_rounds, df


#: The fixed grid a fleet run (--hosts) measures on every host at once (memstor.experiments._fleet).
FLEET_CONFIGS = queue_depth_configs
validate = queue_depth_params
run = run_queue_depth
