"""mixed-load-map: read latency over (write MB/s, read IOPS) pairs, and the read capacity at each latency target.

A database or a VM host never reads or writes alone: how many reads a drive serves within a latency target
depends on how much it is written at the same time. Each **cell** of the map is one run of ioarrive
(lib/ioarrive/, memstor's open-loop generator) offering writes at ``write_pct`` % of the write X_max and reads at
a share of the read X_max **at once, each direction's arrivals independent of the other's** (Poisson), every
I/O timed from its intended arrival (response). A cell *held* when ioarrive's own checks passed for both
directions (rate within ±5 %, arrivals Poisson, p99 lag under its bound, not overloaded): only held cells give
a latency (memstor.analysis.mixed_load).

**The grid** is adaptive, per write rate: the ``read_pct`` shares first; then, for ``refine_rounds`` rounds, a
cell half-way into every bracket where the read p99 crosses a target of ``slo_p99_us`` (the last held cell
meeting it and the first missing it) while the bracket is wider than ``resolution_pct`` of the read X_max; a
target met by every held cell gets a cell half-way to 100 %, one missed by every held cell a cell at half the
lowest share. Each added cell carries its reason in ``grid_note``; a rerun reads the measured cells and takes the
same decisions.

**X_max** (IOPS, closed loop) of the read and the write workload: the profile's ``read_x_max_iops`` /
``write_x_max_iops``, else this device's ``fio-queue-depth`` table (best IOPS of the same rw and block size),
else a short closed-loop fio probe at ``probe_iodepth`` x ``probe_numjobs``. Write MB/s = write IOPS x block
size (decimal MB, 10⁶ B).

Both directions use one access pattern (``pattern``: random or sequential; ioarrive has one per run).

Tables, ``<data>/processed/<device>/``:
- ``mixed-load-map.csv``: one row per cell x direction: the DESIGN.md fio columns (``rw`` randrw, ``rwmixread``
  the read share of the offered I/Os, ``iops`` achieved, ``lat_*`` the response time; ``iodepth`` x ``numjobs``
  = ioarrive's cap x 1), memstor's extra fio columns, then :data:`CELL_COLUMNS` (the cell table of
  memstor.analysis.mixed_load; ``memstor parse --kind diskplorer`` gives the same columns for diskplorer's
  results) and ioarrive's columns (memstor.experiments._load_ioarrive.GENERATOR_COLUMNS).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

import memstor.experiments._fio_params as _fio_params
import memstor.experiments._fio_points as _fio_points
import memstor.experiments._fio_rows as _fio_rows
import memstor.experiments._fio_run as _fio_run
import memstor.experiments._fio_target as _fio_target
import memstor.experiments._load_ioarrive as _ioarrive
from memstor.analysis import mixed_load
from memstor.core.errors import MemstorError
from memstor.core.units import parse_size
from memstor.core.validate import Section
from memstor.experiments._closed_x_max import x_max_closed
from memstor.experiments.fio_load_latency import run_probes
from memstor.measure import ioarrive
from memstor.measure.sweep import Point, SweepSession, run_sweep

EXPERIMENT = "mixed-load-map"
NOTEBOOK = "65-mixed-load-map"
KIND = "fio"
OPTIONAL_KEYS = (*_fio_params.OPTIONAL_KEYS, _ioarrive.RT_KEY)
#: This family's own keys, beside the ones every fio family has (numjobs: the X_max probe's only).
KEYS = ("bs", "pattern", "write_pct", "read_pct", "slo_p99_us", "refine_rounds", "resolution_pct",
        "read_x_max_iops", "write_x_max_iops", "probe_iodepth", "probe_numjobs")
PATTERNS = {"random": ("randread", "randwrite"), "sequential": ("read", "write")}
#: Most cells per write rate (listed and added together): a bound on the adaptive grid.
MAX_CELLS_PER_WRITE = 24
#: Columns after the fio columns (units in the names: MB/s = 10⁶ B/s, IOPS, µs, %).
CELL_COLUMNS = [
    "cell",                # the cell: w<write %>-r<read %>
    "write_pct",           # offered write rate, % of the write X_max
    "read_pct",            # offered read rate, % of the read X_max
    "write_offered_MBps",  # offered write rate, MB/s (the map's x axis)
    "read_offered_iops",   # offered read rate, IOPS (the map's y axis)
    "offered_iops",        # this direction's offered rate
    "achieved_iops",       # this direction's completions in the window / runtime
    "achieved_pct",        # achieved / offered, %
    "resp_mean_us", "resp_p50_us", "resp_p99_us", "resp_p99_9_us",  # completion - intended arrival
    "read_x_max_iops", "write_x_max_iops", "x_max_source",
    "open_loop",           # the cell held: ioarrive's checks of both directions passed
    "held_note",           # why not (ioarrive's failed checks' sentences), empty when held
    "grid_note",           # why the cell was measured (listed, or the bracket it refines)
    "tool",                # ioarrive
]
TABLE_COLUMNS = list(dict.fromkeys(_fio_rows.COLUMNS + CELL_COLUMNS + _ioarrive.GENERATOR_COLUMNS))
LISTED = "listed in read_pct"


@dataclass(frozen=True)
class MixedLoadParams:
    """mixed-load-map: cells of (write % of write X_max, read % of read X_max), refined near the targets."""

    common: _fio_params.FioCommon
    bs: str
    pattern: str                # random | sequential (both directions)
    write_pct: tuple            # write rates, % of the write X_max (0: reads alone)
    read_pct: tuple             # the first read rates of every write rate, % of the read X_max
    slo_p99_us: tuple           # read p99 targets (µs)
    refine_rounds: int          # rounds of cells added around the targets (0: the listed grid only)
    resolution_pct: float       # a bracket narrower than this (% of the read X_max) is not refined
    read_x_max_iops: float      # 0: from the closed-loop tables or a probe
    write_x_max_iops: float
    probe_iodepth: int
    probe_numjobs: int
    rt_priority: int = 0        # ioarrive's SCHED_FIFO priority (0: the normal scheduler)

    @property
    def read_rw(self) -> str:
        return PATTERNS[self.pattern][0]

    @property
    def write_rw(self) -> str:
        return PATTERNS[self.pattern][1]


def _pcts(v: Section, key: str, value, low_ok: bool) -> tuple:
    pcts = [v.number(key, p, positive=False) for p in v.items(key, value)]
    for p in pcts:
        if not (0 <= p <= 100 if low_ok else 0 < p <= 100):
            raise v.error(key, p, "a percentage of X_max in " + ("[0, 100]" if low_ok else "(0, 100]"))
    return v.unique(key, sorted(pcts))


def mixed_load_params(params: dict) -> MixedLoadParams:
    """Validate a mixed-load-map section (UsageError naming the parameter and allowed values)."""
    v = Section(EXPERIMENT)
    c = _fio_params.common_params(v, params, KEYS, optional=(_ioarrive.RT_KEY,))
    pattern = v.choice("pattern", params["pattern"], tuple(PATTERNS))
    x_max = {}
    for key in ("read_x_max_iops", "write_x_max_iops"):
        x_max[key] = v.number(key, params[key], positive=False)
        if x_max[key] < 0:
            raise v.error(key, x_max[key], "0 (from the closed-loop tables or a probe) or the device's IOPS > 0")
    resolution = v.number("resolution_pct", params["resolution_pct"])
    if not 0 < resolution <= 50:
        raise v.error("resolution_pct", resolution, "a bracket width in % of the read X_max in (0, 50]")
    return MixedLoadParams(
        common=c, bs=_fio_params.single_block_size(v, params, c), pattern=pattern,
        write_pct=_pcts(v, "write_pct", params["write_pct"], low_ok=True),
        read_pct=_pcts(v, "read_pct", params["read_pct"], low_ok=False),
        slo_p99_us=v.unique("slo_p99_us", [v.number("slo_p99_us", t) for t in v.items("slo_p99_us",
                                                                                         params["slo_p99_us"])]),
        refine_rounds=v.integer("refine_rounds", params["refine_rounds"], 0, 10),
        resolution_pct=resolution, probe_iodepth=v.integer("probe_iodepth", params["probe_iodepth"], 1,
                                                           _fio_params.MAX_IODEPTH),
        probe_numjobs=v.integer("probe_numjobs", params["probe_numjobs"], 1, _fio_params.MAX_NUMJOBS),
        rt_priority=_ioarrive.rt_priority(v, params), **x_max)


validate = mixed_load_params


# ------------------------------------------------------------------------------------------ points


def _num(x: float) -> str:
    return str(int(x)) if float(x) == int(x) else f"{x:g}"


def cell_name(write_pct: float, read_pct: float) -> str:
    """e.g. ``w25-r62.5``."""
    return f"w{_num(write_pct)}-r{_num(read_pct)}"


def _suffix(c: _fio_params.FioCommon, engine: str) -> str:
    return f"{engine}-d{c.direct}-t{_num(c.runtime_s)}-r{_num(c.ramp_s)}-f{c.file_size}"


def probe_config(mp: MixedLoadParams, engine: str, rw: str) -> dict:
    """The closed-loop X_max probe of `rw` (fio; point parameters)."""
    return dict(_fio_points.point_params(EXPERIMENT, mp.common, engine, rw=rw, bs=mp.bs, iodepth=mp.probe_iodepth,
                                         numjobs=mp.probe_numjobs), phase="probe")


def cell_config(mp: MixedLoadParams, engine: str, write_pct: float, read_pct: float, x_max: dict,
                note: str) -> dict:
    """One cell: reads at read_pct % of the read X_max and writes at write_pct % of the write X_max (whole IOPS,
    what ioarrive is asked and offers), Poisson, up to ioarrive's cap in flight. x_max: {"read"|"write": (IOPS,
    source)}."""
    read_iops = max(1, round(read_pct / 100.0 * x_max["read"][0]))
    write_iops = round(write_pct / 100.0 * x_max["write"][0]) if write_pct else 0
    mix = round(100.0 * read_iops / (read_iops + write_iops))
    cfg = _fio_points.point_params(EXPERIMENT, mp.common, _ioarrive.engine_for(engine, bool(mp.common.direct)), rw="randrw"
                                   if mp.pattern == "random" else "rw", bs=mp.bs, iodepth=_ioarrive.MAX_OUTSTANDING,
                                   numjobs=1, rwmixread=100 if not write_iops else min(99, max(1, mix)))
    bs = parse_size(mp.bs)
    return dict(cfg, phase="cell", generator="ioarrive", cell=cell_name(write_pct, read_pct), write_pct=write_pct,
                read_pct=read_pct, read_rate_iops=read_iops, write_rate_iops=write_iops,
                read_offered_iops=float(read_iops), write_offered_MBps=round(write_iops * bs / 1e6, 3),
                arrival="poisson", max_outstanding=_ioarrive.MAX_OUTSTANDING,
                read_x_max_iops=round(x_max["read"][0], 1), write_x_max_iops=round(x_max["write"][0], 1),
                x_max_source=f"read: {x_max['read'][1]}; write: {x_max['write'][1]}", grid_note=note)


def point_name(cfg: dict, c: _fio_params.FioCommon, rep: int) -> str:
    """``probe-randread-bs4k-qd32x4-<suffix>-rep1`` or
    ``randrw-bs4k-w25-r50-ioarrive-r30000-w4000-cap4096-<suffix>-rep1``."""
    suffix = _suffix(c, cfg["ioengine"])
    if cfg["phase"] == "probe":
        return f"probe-{cfg['rw']}-bs{cfg['bs']}-qd{cfg['iodepth']}x{cfg['numjobs']}-{suffix}-rep{rep}"
    return (f"{cfg['rw']}-bs{cfg['bs']}-{cfg['cell']}-ioarrive-r{cfg['read_rate_iops']}-w{cfg['write_rate_iops']}-"
            f"cap{cfg['max_outstanding']}-{suffix}-rep{rep}")


def make_points(configs: list[dict], c: _fio_params.FioCommon, medium: dict, test_file: str) -> list:
    """sweep.Points of the configs x repetitions (repetitions outer); est_s = runtime + ramp + overhead."""
    est = float(c.runtime_s) + float(c.ramp_s) + _fio_points.OVERHEAD_S
    return [Point(name=point_name(cfg, c, rep), params=dict(cfg, rep=rep, medium=medium, test_file=test_file),
                  est_s=est, incidental=_fio_points.INCIDENTAL)
            for rep in range(1, c.repetitions + 1) for cfg in configs]


def job(point, filename: str, rt: int = 0) -> ioarrive.IoarriveJob:
    """The ioarrive job of a cell: both rates at once (a write rate 0: reads alone), the repetition as the seed;
    rt: the SCHED_FIFO priority (0: the normal scheduler)."""
    p = point.params
    return ioarrive.IoarriveJob(rt_priority=rt or None,
        target=filename, read_rate_iops=int(p["read_rate_iops"]),
        write_rate_iops=int(p["write_rate_iops"]) or None, arrival=p["arrival"], bs=p["bs"],
        pattern="random" if p["rw"] == "randrw" else "sequential", runtime_s=float(p["runtime_s"]),
        ramp_s=float(p["ramp_s"]), engine=p["ioengine"], max_outstanding=int(p["max_outstanding"]),
        direct=bool(p["direct"]), seed=int(p.get("rep", 1)))


# ------------------------------------------------------------------------------------------ grid


def start_grid(mp: MixedLoadParams) -> dict:
    """{write %: {read %: reason}} before anything is measured: the listed read shares at every write rate."""
    return {w: {r: LISTED for r in mp.read_pct} for w in mp.write_pct}


def _round_pct(p: float) -> float:
    return round(p * 2.0) / 2.0  # half-percent steps: a cell's name stays short and reruns name it the same


def next_cells(mp: MixedLoadParams, grid: dict, table: pd.DataFrame) -> dict:
    """{write %: {read %: reason}} of the cells to add after a round (none: the grid is complete), from the
    capacity rule of memstor.analysis.mixed_load over the held cells measured so far."""
    if table.empty:
        return {}
    cells = table[table["status"] == "done"]
    curve = mixed_load.capacity_curve(cells, mp.slo_p99_us, by=("write_pct",)) if len(cells) else pd.DataFrame()
    add: dict = {}
    x_read = float(cells["read_x_max_iops"].dropna().iloc[0]) if cells["read_x_max_iops"].notna().any() else math.nan
    for _, row in curve.iterrows():
        w = float(row["write_pct"])
        have = grid.get(w, {})
        if len(have) + len(add.get(w, {})) >= MAX_CELLS_PER_WRITE or not math.isfinite(x_read) or x_read <= 0:
            continue
        lo, hi, target = row["ci_low_iops"], row["ci_high_iops"], _num(row["target_us"])
        lo_pct = 100.0 * lo / x_read if pd.notna(lo) else math.nan
        hi_pct = 100.0 * hi / x_read if pd.notna(hi) else math.nan
        if row["censored"] == "above_grid":
            new, why = (lo_pct + 100.0) / 2.0, f"every held cell met p99 <= {target} us: half-way to 100 %"
        elif row["censored"] == "below_grid":
            new, why = hi_pct / 2.0, f"every held cell missed p99 <= {target} us: half the lowest share"
        elif pd.notna(lo) and pd.notna(hi) and hi_pct - lo_pct > mp.resolution_pct:
            new, why = (lo_pct + hi_pct) / 2.0, (f"p99 crosses {target} us between {_num(_round_pct(lo_pct))} and "
                                                 f"{_num(_round_pct(hi_pct))} %: the middle")
        else:
            continue
        new = _round_pct(new)
        if 0 < new <= 100 and new not in have:
            add.setdefault(w, {}).setdefault(new, why)
    return add


# ------------------------------------------------------------------------------------------ rows


def cell_rows(res, host: str, note: str, data_root: Path) -> list[dict]:
    """The rows of one cell (one per direction it offered): ioarrive's direction rows (the fio columns and the
    generator's) plus :data:`CELL_COLUMNS`; failed rows with the reason when the run failed."""
    source = _fio_rows.relative(res.raw, data_root) if res.raw is not None else ""
    rows, _ = _ioarrive.point_rows(res, host, note, source)
    p = res.point.params
    out = []
    for r in rows:
        held = bool(r.get("open_loop")) and r.get("status") == "done"
        r.update({k: p.get(k) for k in ("cell", "write_pct", "read_pct", "write_offered_MBps", "read_offered_iops",
                                        "read_x_max_iops", "write_x_max_iops", "x_max_source", "grid_note")})
        r.update(config=r["point"].rsplit("-rep", 1)[0], resp_mean_us=r.get("lat_mean_us"), resp_p50_us=r.get("lat_p50_us"), resp_p99_us=r.get("lat_p99_us"),
                 resp_p99_9_us=r.get("lat_p99_9_us"), open_loop=held, tool="ioarrive",
                 held_note="" if held else (r.get("generator_reasons") or r.get("error") or "not measured"))
        out.append(r)
    return out


def result_table(results: list, host: str, note: str, data_root: Path) -> pd.DataFrame:
    """The family's table from the sweep's results (the X_max probes left out: they are fio's rows)."""
    rows = []
    for res in results:
        if res.point.params.get("phase") == "cell":
            rows += cell_rows(res, host, note, data_root)
    return pd.DataFrame(rows, columns=TABLE_COLUMNS)


# ---------------------------------------------------------------------------------------- running


def _x_maxes(mp: MixedLoadParams, from_qd: dict, probes: dict) -> tuple[dict, list]:
    """({"read"|"write": (X_max IOPS, source)}, [why missing]); from_qd: {rw: x_max_closed's answer}."""
    out, missing = {}, []
    for d, rw, given in (("read", mp.read_rw, mp.read_x_max_iops), ("write", mp.write_rw, mp.write_x_max_iops)):
        if given > 0:
            out[d] = (given, f"profile {d}_x_max_iops")
            continue
        x, why = from_qd[rw]
        if x is None and probes.get(rw):
            x, why = probes[rw], f"probe at QD{mp.probe_iodepth}x{mp.probe_numjobs} ({why})"
        if x is None:
            missing.append(f"{rw}: {why}")
        else:
            out[d] = (x, why)
    return out, missing


def run_mixed_load(params: dict, *, data_root: Path, target_dir: Path | None, host: str, progress: bool = True,
                   session: SweepSession | None = None) -> pd.DataFrame:
    """Run or resume mixed-load-map (rounds of cells, refined around the targets); write and return its table."""
    session = session if session is not None else SweepSession()
    mp = mixed_load_params(params)
    c, data_root = mp.common, Path(data_root)

    def body(t):
        test_file = str(t.tf.path)
        info = {"ioengine_requested": c.ioengine, **t.info, "generator": "ioarrive"}
        from_qd = {rw: x_max_closed(data_root, host, rw, mp.bs, c.file_size_bytes) for rw in (mp.read_rw, mp.write_rw)}
        need = [rw for rw, given in ((mp.read_rw, mp.read_x_max_iops), (mp.write_rw, mp.write_x_max_iops))
                if given <= 0 and from_qd[rw][0] is None]
        probe_pts = make_points([probe_config(mp, t.engine, rw) for rw in need], c, t.medium, test_file)
        results, probes = run_probes(EXPERIMENT, probe_pts, t, data_root, host, info, progress, session)
        x_max, missing = _x_maxes(mp, from_qd, probes)
        if missing:
            return t, probe_pts, results, missing
        grid, points, table = start_grid(mp), list(probe_pts), pd.DataFrame(columns=TABLE_COLUMNS)
        for round_no in range(mp.refine_rounds + 1):
            configs = [cell_config(mp, t.engine, w, r, x_max, why) for w in sorted(grid)
                       for r, why in sorted(grid[w].items())]
            cells = make_points(configs, c, t.medium, test_file)
            both = _ioarrive.GeneratorRunner({p.name: _fio_points.fio_job(p, test_file) for p in probe_pts},
                                             {p.name: job(p, test_file, mp.rt_priority) for p in cells})
            with session.noted(f"{EXPERIMENT}: round {round_no + 1} of at most {mp.refine_rounds + 1}"):
                results = run_sweep(EXPERIMENT, probe_pts + cells, both, data_root, host, sysinfo=info,
                                    progress=progress, session=session)
            points, table = probe_pts + cells, result_table(results, host, t.note, data_root)
            if (table["status"] == "failed").any() or round_no == mp.refine_rounds:
                break
            add = next_cells(mp, grid, table)
            if not add:
                break
            for w, new in add.items():
                grid.setdefault(w, {}).update(new)
        _fio_target.remove_when_full(results, t.tf)
        return t, points, results, missing

    t, points, results, missing = _fio_target.on_target(EXPERIMENT, c, data_root, target_dir, host, body,
                                                        session=session)
    if missing:
        raise MemstorError(f"{EXPERIMENT}: no X_max for {'; '.join(missing)}; rerun to retry the probe, or set "
                           "read_x_max_iops / write_x_max_iops in the profile")
    _fio_run.check_refused(EXPERIMENT, results)
    table = result_table(results, host, t.note, data_root)
    out = _fio_run.write_table(table, data_root, host, EXPERIMENT)
    cells = [p for p in points if p.params.get("phase") == "cell"]
    _fio_run.report_failures(EXPERIMENT, table, len(cells), out, data_root, host)
    if progress:
        held = table.drop_duplicates("point")
        print(f"{EXPERIMENT}: {len(held)} cells, {int(held['open_loop'].astype(bool).sum())} held", file=sys.stderr)
    return table


run = run_mixed_load
