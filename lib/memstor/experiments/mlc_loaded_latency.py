"""The memory loaded-latency experiment (``mlc-loaded-latency``): idle latency, peak injection bandwidth,
and latency under load at each inject delay for every traffic (MLC -W code) x access size x pacing.

Runs Intel MLC when present, else memstor's MLC-compatible ``loadlat`` (parameter ``tool``), through the
resumable sweep (:mod:`memstor.measure.sweep`); every raw output is parsed by :func:`memstor.parse.mlc.parse_mlc`,
loadlat's JSON sidecar (kept in each point's ``.meta.json``) by :mod:`memstor.parse.loadlat_json`.
Result: ``<data>/processed/<host>/mlc-loaded-latency.csv`` with the DESIGN.md ``mlc`` columns first,
then ``host, point, status`` (done | failed), ``error, note``, then the repetition and quality-gate columns
(:data:`GATE_COLUMNS`, below), each value's own interval (:data:`CI_COLUMNS`, below), then the settings
that make a curve what it is (:data:`SETTING_COLUMNS`):
``load_threads`` (0 for idle latency), ``buffer_kib`` (per thread), ``random`` (the latency thread chases
random addresses: always for loadlat, for MLC when it could not disable the prefetchers), ``load_random``
(load threads use random addresses, ``-U``), ``huge_pages`` (the buffers were on 2 MiB pages), ``pages``
(how: ``2M (THP, 100 %)``, ``2M (MLC -L)``, ``4K``) and ``pacing`` (loaded latency: ``fixed``, MLC's fixed
delay loop, or ``exp``, loadlat's exponential delays of the same mean; empty for idle and peak rows).
Units: latency in ns, bandwidth in MB/s (10^6 bytes/s), inject delay in cycles of the tool's delay loop
(not ns), buffer in KiB, access size in bytes.

Idle latency is measured twice when ``huge_pages`` is on (and the kernel allows them): with huge pages
(the DRAM latency) and with 4 KiB pages (adds the page-walk cost of TLB misses over the big buffer);
:func:`memstor.analysis.memory.page_walk` compares the two.

**Pacing** (parameter ``pacing``, a list: ``[fixed, exp]`` measures every loaded curve under both, back to
back): with few load threads, fixed delays make nearly periodic requests, exponential ones Poisson-like
requests (``arrival_cv`` ~ 1 instead of ~0.1); queueing at the same bandwidth differs. Intel MLC has only
fixed delays (``exp`` with MLC is refused before anything runs). The pacing is part of the point name and
of the ``pacing`` column, so curves under different pacings are never repetitions of each other.

**Repetitions** (``repetitions``): every point is measured n times, repetitions outer, each into its own raw
file; the table keeps one row per value x repetition. ``config`` names the configuration (the point name of
its first repetition): rows with the same ``config``, ``test``, ``traffic`` and ``inject_delay`` are
repetitions, ``repetition`` numbers them (1-based); summaries (n, mean, 95 % interval) group on that.

**Quality gate** (loadlat v0.3+; :mod:`memstor.measure.loadlat` holds the thresholds): loadlat splits each
point's window into sub-windows (merged into 5 groups when there are more than 5). A value passes when
bandwidth varies by less than 5 % and latency by less than 2 % across them (``bandwidth_spread_pct``, ``latency_spread_pct``: (max - min) / mean, %), every
measuring thread got >= 90 % of its CPU (``cpu_share_min_pct``) and steal time was <= 2 % of the window
(``steal_pct``, the busiest measuring CPU); a loaded-latency value whose bandwidth exceeds the one at the
next smaller delay by more than 5 % fails too (it and that neighbour are re-measured). A failing value is
re-measured (``max_remeasure`` times at most) in a new point with only the failing delays (name part
``a<n>``, a new raw file: raw outputs are never overwritten); the table uses the latest attempt that passes
its own gates, else the latest attempt, and says which (``attempt`` of ``attempts``). ``gate``: ``passed``,
``failed:<codes>`` (bandwidth_unstable, latency_unstable, cpu_share, steal, bandwidth_rises_with_delay) or
``not_evaluated:mlc`` / ``not_evaluated:no_sub_windows`` / ``not_evaluated:section`` (matrices, max bandwidth, c2c); ``gate_detail`` says why in words and lists
every attempt's outcome. A value that never passes is kept and marked, never dropped or averaged away.
``windows`` (sub-windows) and ``arrival_cv`` (coefficient of variation of the load threads' time between
request groups, median over threads) come with it. Failed points (the tool did not run) have empty gate
columns. memstor asks loadlat for sub-windows of 0.1 s or more, a multiple of 5 (10 at 1 s, 20 at 2 s:
:func:`memstor.measure.loadlat.sub_windows`); the gate judges them merged into 5 consecutive groups, so
its thresholds keep their meaning.

**A point's own interval** (:data:`CI_COLUMNS`, between the gate and the setting columns): ``latency_ns_ci_low/high`` and
``bandwidth_MBps_ci_low/high``, the 95 % batch-means interval of the value from its sub-windows
(:func:`memstor.analysis.memory_curves.sub_window_ci_columns`: at least 10 batches, no ramp excluded: loadlat
warms up before the first sub-window), ``ci_method`` (``batch-means`` when a bound is a number, else
empty) and ``ci_note`` (why a bound is empty: ``no sub-windows (MLC)``, ``too few batches (5 sub-windows
< 10)``, ``correlated (...)``, ...). Summaries (memstor.analysis.memory_curves.curve_table) use the interval
between repetitions when n >= 2 and this one when n = 1.
"""


from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import pandas as pd

from memstor.experiments._mlc_gate import choose_attempts, machine_codes, remeasure_points
from memstor.experiments._mlc_params import (
    AUTO,
    AUTO_MIN_BUFFER_KIB,
    EXPERIMENT,
    MIN_BUFFER_LLC_MULTIPLE,
    MLC_DELAYS,
    PACINGS,
    LoadedLatencyParams,
    available_cpus,
    check_for_tool,
    fit_to_memory,
    llc_bytes,
    memory_need_bytes,
    min_buffer_kib,
    needs_loadlat,
    validate_params,
)
from memstor.experiments._mlc_points import build_points, config_name, point_name
from memstor.experiments._mlc_rows import (
    CI_COLUMNS,
    EXTRA_COLUMNS,
    GATE_COLUMNS,
    SETTING_COLUMNS,
    build_table,
    point_rows,
    settings,
    write_table,
)
from memstor.measure import mlc
from memstor.measure.shape import cpu_shape, usable_memory_bytes
from memstor.measure.sweep import Point, PointResult, SweepSession, processed_path, raw_dir, run_sweep
from memstor.measure.sysinfo import collect

__all__ = [
    "CI_COLUMNS", "EXPERIMENT", "EXTRA_COLUMNS", "GATE_COLUMNS", "KIND", "MAX_ROUNDS", "MLC_DELAYS", "NOTEBOOK",
    "PACINGS", "SETTING_COLUMNS", "LoadedLatencyParams", "available_cpus", "build_points", "build_table",
    "check_for_tool", "choose_attempts", "machine_codes", "config_name", "measure", "memory_need_bytes", "point_name",
    "point_rows", "remeasure_points", "run", "run_loaded_latency", "settings", "validate", "validate_params",
    "write_table",
]

#: Re-measurement rounds at most (each round re-measures the points that failed the gate; a point is
#: re-measured at most max_remeasure times, so this only guards against a bug).
MAX_ROUNDS = 50


def _sysinfo() -> dict | None:
    """The machine description for the sweep manifest (memstor.measure.sysinfo.collect), or None when it fails."""
    try:
        return collect(None)
    except Exception:  # the manifest can do without it; run_experiment stores sysinfo.json anyway
        return None


def _say(line: str) -> None:
    """One line for the user on stderr (notebooks show it, the CLI prints it)."""
    print(f"{EXPERIMENT}: {line}", file=sys.stderr, flush=True)


def measure(points: Sequence[Point], tool: str, executable: str, *, data_root: Path, host: str,
            requested: str = "", max_remeasure: int = 0, progress: bool = True,
            session: SweepSession | None = None) -> list[PointResult]:
    """Run or resume ``points``, then re-measure what fails the quality gate, round after round.

    Each round is one resumable sweep over every point so far (the earlier ones are cached), so the
    manifest lists them all; :func:`remeasure_points` adds new points (new raw files: raw outputs are
    never overwritten) until no value needs another attempt or each has had ``max_remeasure``
    re-measurements. A rerun with the same points finds the same raw files and makes the same decisions.
    Returns the PointResults of the last round (all points). Intel MLC points are never re-measured.
    session: the run's SweepSession (memstor.measure.sweep; default: one of this call alone).
    """
    session = session if session is not None else SweepSession()
    every = list(points)
    results: list[PointResult] = []
    for _ in range(MAX_ROUNDS):
        runner = mlc.MlcRunner(tool, executable, every, requested=requested or tool)
        results = run_sweep(EXPERIMENT, every, runner, Path(data_root), host, sysinfo=_sysinfo, progress=progress,
                            session=session)
        if tool != "loadlat" or max_remeasure <= 0:
            break
        rows = [row for res in results for row in point_rows(res, Path(data_root), host)]
        more = remeasure_points(every, rows, max_remeasure)
        if not more:
            break
        todo = [pt for pt in more if not (raw_dir(Path(data_root), host, EXPERIMENT) / f"{pt.name}.txt").is_file()]
        if todo:
            values = sum(len(pt.params.get("delays") or [None]) for pt in todo)
            _say(f"quality gate: re-measuring {values} value(s) in {len(todo)} new point(s) (new raw files), "
                 f"e.g. {todo[0].name}")
        every += more
    return results


def run_loaded_latency(params: dict, *, data_root: Path, target_dir: Path | None = None, host: str,
                       progress: bool = True, session: SweepSession | None = None) -> pd.DataFrame:
    """Run or resume the loaded-latency sweep; write and return ``processed/<host>/mlc-loaded-latency.csv``.

    Parameters are validated (and the tool found) before anything runs. ``target_dir`` is unused: the
    experiment measures memory, not storage. Failed points keep one row with ``status`` = failed and the
    reason in ``error``; privilege notes from the tool (no root / msr module) go to ``note`` and stderr.
    """
    del target_dir  # memory experiment: no test file
    p = validate_params(params)
    # auto = Intel MLC when installed, but only loadlat paces with exponential delays and mixes any read share
    tool, executable = mlc.resolve_tool("loadlat" if p.tool == "auto" and needs_loadlat(p) else p.tool,
                                        p.mlc_path)
    if str(params.get("buffer_kib", "")).strip().lower() == AUTO:
        _say(f"buffer per thread {p.buffer_kib // 1024:,} MiB (buffer_kib auto: {MIN_BUFFER_LLC_MULTIPLE} x the "
             f"{llc_bytes() / 2**20:,.0f} MiB last-level cache, at least {AUTO_MIN_BUFFER_KIB // 1024} MiB)")
    p, scaled = fit_to_memory(p, usable_memory_bytes(), min_buffer_kib())
    if scaled:
        _say(scaled)
    _say(f"latency CPU {p.latency_cpu}, load CPUs {mlc.format_cpus(list(p.load_cpus))} (not its SMT sibling); "
         f"{cpu_shape().source}")
    check_for_tool(p, tool)
    huge, why = mlc.huge_pages_available(tool, memory_need_bytes(p)) if p.huge_pages else (False, "")
    if p.huge_pages and not huge:
        _say(f"huge pages not used ({why}); every point runs with 4 KiB pages, the idle latency includes "
             "page walks")
    points = build_points(p, tool, huge=huge)
    data_root = Path(data_root)
    results = measure(points, tool, executable, data_root=data_root, host=host, requested=p.tool,
                      max_remeasure=p.max_remeasure, progress=progress, session=session)
    df = build_table(results, data_root, host)
    out = write_table(df, processed_path(data_root, host, EXPERIMENT))
    df.attrs.update(params=asdict(p), tool=tool, executable=executable, csv=str(out), huge_pages=huge,
                    huge_pages_why=why)
    for note in dict.fromkeys(n for n in df["note"].dropna()):
        _say(f"note: {note}")
    failed = [r for r in results if r.status == "failed"]
    if failed:
        _say(f"{len(failed)} of {len(results)} points failed (status=failed in {out}); first: {failed[0].error}")
    return df


NOTEBOOK = "10-mlc-loaded-latency"
KIND = "mlc"
validate = validate_params
run = run_loaded_latency
