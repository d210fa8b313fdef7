"""Validity checks as data: whether each analysis's preconditions held, checked from the measured tables,
as ONE table (``report/tables/validity.csv``). The report reads it for its first page and to suppress the
findings whose preconditions failed (:func:`holds`).

One row per host x check x subject (:data:`COLUMNS`):

- ``check``: a stable id from :data:`CHECKS` (one line each on the precondition);
- ``subject``: what was checked (a workload ``randread``, an experiment ``fio-block-size``, a curve, a
  configuration, ``loaded_latency: latency_unstable (machine)``);
- ``status``: ``pass`` / ``warn`` / ``fail`` — fail: the precondition does not hold and the findings it
  gates are not to be stated; warn: it holds only partly or cannot be shown, the findings need the
  consequence beside them;
- ``value``, ``limit``, ``unit``: the number checked and the threshold it is held against (empty when
  there is no number — e.g. "not recorded");
- ``evidence``: one plain sentence with the numbers; ``consequence``: what follows for the reader (empty on
  a pass); ``section``: the report section the row gates, one of :data:`SECTIONS`.

The checks, one module per family (thresholds are named constants there, each with its reason):

- ``openloop``: open_loop_held (share of rate points with open-loop arrivals, a flag beside a rate outside
  +-5 % not believed; < 80 % fail, < 100 % warn; every flag unknown: unchecked), open_loop_rate (achieved /
  offered within 95-105 %: any overshoot fails, an undershoot below 80 % of X_max fails, only at the heaviest
  points warns), load_generator_cpu (the binding side: fio's usr + sys >= 70 % of the usable CPUs warn, >= 90 %
  fail, or one thread >= 90 % of a CPU fail; points recording < 50 ns of CPU per I/O are no measurement);
- ``generator_cpu``: load_generator_cpu of ioarrive's points (subject '<experiment> (ioarrive)'): its process's
  CPU at its busiest point against the usable CPUs, fio's bounds; the column missing: unchecked;
- ``fits``: knee_ceiling (the highest measured IOPS within [(X_max_fit - 1.96 SE) / 1.5, X_max_fit + 1.96 SE]),
  knee_min_latency (R_min_fit > 0, within [0.5 x the measured latency at the smallest N - 1.96 SE, it + 1.96
  SE]), knee_located (N* inside the sweep, its interval < 50 % of the sweep, log scale, and not zero-wide;
  a failed fit: unchecked), knee_plateau (no queue-depth point past N* above 1.1 x X_fit beyond its interval;
  above it within the run-to-run spread, memstor.analysis.spread: warn, not shown; beyond the spread: fail where
  the sweep's last step still gained more than the spread, else warn; none reaching X_fit / 1.1: warn),
  knee_sweep_agrees (the same one-job job measured elsewhere at most the spread x the sweep's most, else fail: the
  sweep is not the target's; no low bound: a point below the sweep's most is what a depth below its top gives),
  curve_holdout (every curve model's held-out error as a number in 0-25 %);
- ``invariants``: littles_law (X x R per point <= 105 % of iodepth x jobs, > 110 % fail; closed loops
  >= 50 %, else warn), below_closed_max (no open-loop point above the closed-loop maximum's interval, + 5 %
  fail), physical_ceiling (no throughput above the storage interface or the DRAM peak, + 5 % fail; no
  ceiling known: unchecked);
- ``steady``: steady_trace_jump (a round-to-round factor > 1.5 either way or a cumulative fall > 3x warn; a
  rise > 3x in one round or cumulatively, or a fall and a rise both beyond their bounds, fail),
  steady_window_trend (a monotone window drifting >= 5 %, or one turning at every step with a range >= 10 %),
  steady_round_length (rounds of 10-600 s, the window rewriting >= 1 span), steady_vs_fresh (steady / fresh
  at the same N: warn outside 0.1-1.1x, fail outside 0.02-2x);
- ``agreement``: config_agreement (one configuration in two experiments of the same drive state — fresh:
  the PTS and steady-state experiments precondition their own — intervals overlap within 1.25x, else
  within 1.1x without intervals; intervals that miss warn; beyond 1.5x fail, with both numbers);
- ``regions``: jobs_disjoint (a sequential point with numjobs > 1 whose jobs all started at offset 0 over the
  same span, no offset_increment: fail, not a sequential workload; each job its own region: pass);
- ``targets``: one_target (per storage experiment the share of its points on the device's target, the one most of
  its storage points measured: below 1 fail, its points left out of the report; sysinfo.json naming another target
  fail; no target recorded: unchecked);
- ``intervals``: interval_exists (points without a quotable 95 % interval — none, zero width, or wider
  than the value — and why), interval_holds_value (a value below or above its own interval: fail);
- ``memory``: memory_gate (a gate reason >= 80 % of the values share: one machine-level warn row with the
  median spread against the limit and the share, 'every point' only where every value fails; other reasons: a
  warn row with their count; passing values with a sub-window spread < 0.001 %: warn; values never judged:
  unchecked), memory_buffer_llc (the runs' smallest buffer / the last cache, the working-set curve's last step
  from runs within hierarchy_cpu_share's band where it gives one, else the kernel's last-level cache, the basis
  named: <= 1x fail, < 4x warn; / the usable memory > 0.5 warn, > 1 fail; no cache size or buffer known:
  unchecked), hierarchy_cpu_share (per mem-hierarchy test, the lowest share of the time
  its runs' measuring threads were on a CPU: < 90 % or > 101 % fail; not recorded: unchecked);
- ``batches``: batch_independence (per experiment / memory table, the share of batch-means intervals from
  batches with lag-1 <= 0.2: any from correlated batches fails);
- ``headline``: headline_definition (best IOPS against the sweep's own maximum and the open loop's achieved,
  peak bandwidth against the curves' maximum, idle latency against the lightest loaded point: beyond 1.1x
  warn, 1.5x fail, on the sides where a figure may not lie);
- ``wsat``: wsat_written (written / target in 1-1.01: less is the time cap, more a span other than planned;
  a failed run is unchecked), wsat_series (>= 20 whole seconds to tell a lasting level from noise; < 2 fail),
  series_matches_whole (the whole seconds' mean within +-2 % of fio's whole-run MB/s; beyond +-10 % fail),
  wsat_one_level (the halves' medians within +-10 % or not apart by Mann-Whitney p < 0.05; else fail);
- ``pts``: pts_steady_state (CBW/DIRTH's run reached steady state: its own verdict; HIR's baseline rounds by the
  excursions; the window's data excursion
  as value), pts_repeat (a DIRTH rerun within 1.1x of its matrix point, 1.25x fail), pts_demand (largest T x Q /
  T1 Q1 IOPS between 1 and the outstanding I/O's ratio), dirth_optimal (some but not all points under the ceiling).

**Missing numbers.** A check whose inputs are absent (no open-loop run, no steady-state run) has no row.
When the experiment ran but the numbers a check needs were not recorded — fio's CPU use (``cpu_usr_pct`` /
``cpu_sys_pct``) or the core count, the open_loop flags, a failed run — the row is ``unchecked`` with value empty
and evidence "not checked: ...": the reader cannot tell whether the precondition held, the table stays the one
place that says so, and page 1 names the check. Never a pass without a value (memstor.analysis.validity.rows.row
refuses one). Every check judges both sides: ``low`` and ``high`` are its passing band, each bound with its reason
in the check's module. Data where every precondition holds and every number is recorded gives pass rows only.

Entry point :func:`validity_table` takes the tables as keyword arguments (memstor.analysis.synthesis calls it
with its own; this package never imports synthesis).
"""

from __future__ import annotations

import pandas as pd

from memstor.analysis.validity.agreement import agreement_rows
from memstor.analysis.validity.batches import batch_rows
from memstor.analysis.validity.fits import gate_failed_points, holdout_rows, knee_rows
from memstor.analysis.validity.generator_cpu import ioarrive_cpu_rows
from memstor.analysis.validity.headline import headline_rows
from memstor.analysis.validity.intervals import interval_rows
from memstor.analysis.validity.invariants import below_closed_rows, ceiling_rows, little_rows
from memstor.analysis.validity.memory import buffer_llc_rows, hierarchy_rows, memory_rows
from memstor.analysis.validity.openloop import cpu_rows, open_loop_rows
from memstor.analysis.validity.openloop_repeat import repeat_rows
from memstor.analysis.validity.pts import pts_rows
from memstor.analysis.validity.regions import region_rows
from memstor.analysis.validity.rows import CHECKS, COLUMNS, FAIL, PASS, SECTIONS, STATUSES, WARN, frame
from memstor.analysis.validity.steady import steady_rows
from memstor.analysis.validity.targets import target_rows
from memstor.analysis.validity.wsat import wsat_rows

__all__ = ["CHECKS", "COLUMNS", "FAIL", "PASS", "SECTIONS", "STATUSES", "WARN", "holds", "status",
           "validity_table"]


def validity_table(*, fio: pd.DataFrame | None = None, mlc: pd.DataFrame | None = None,
                   points: pd.DataFrame | None = None, knees: pd.DataFrame | None = None,
                   load: pd.DataFrame | None = None, steady: pd.DataFrame | None = None,
                   headline: pd.DataFrame | None = None, storage: pd.DataFrame | None = None,
                   mem: pd.DataFrame | None = None, curves: pd.DataFrame | None = None,
                   storage_fits: dict | None = None, mem_fits: dict | None = None,
                   sysinfo: dict | None = None, wsat: pd.DataFrame | None = None,
                   ceilings: pd.DataFrame | None = None, qd: pd.DataFrame | None = None,
                   metas: list | None = None, mixed: pd.DataFrame | None = None,
                   hir_seconds: pd.DataFrame | None = None) -> pd.DataFrame:
    """The validity table (COLUMNS) from the synthesis tables: fio / mlc (the tidy rows, ``ds.fio``,
    ``ds.mlc``), points (fio_summary), knees, load (open-loop curve), steady (verdicts), headline (long),
    storage / mem (curve tables) with storage_fits {(host, kind, rw): CurveFit} and mem_fits {(host, curve):
    CurveFit}, curves (memory curve points), sysinfo {host: its sysinfo.json dict} (the core count), ceilings
    (memstor.analysis.ceilings.ceilings_table), qd (the closed queue-depth points,
    memstor.analysis.points.qd_points: knee_plateau), metas (the points' meta sidecars, each with its device as
    ``host``: jobs_disjoint, the times of steady_vs_fresh's evidence), mixed (the mixed-load map's done rows:
    open_loop_repeat with load), hir_seconds (fio-pts-hir-seconds: hir_recovery's windows where the rounds are
    longer than the segments). Any may be None: its checks are skipped.
    Sorted by host, section, check, subject."""
    rows = [
        *open_loop_rows(load),
        *repeat_rows(load, mixed),
        *cpu_rows(fio, sysinfo),
        *ioarrive_cpu_rows(fio, sysinfo),
        *knee_rows(knees, qd, points),
        *holdout_rows(storage_fits, "curves", lambda k: (k[0], f"{k[1]} {k[2]}")),
        *holdout_rows(mem_fits, "memory", lambda k: (k[0], str(k[1])), gate_failed_points(mem)),
        *steady_rows(steady, fio, points, metas),
        *agreement_rows(points),
        *region_rows(metas),
        *target_rows(metas, sysinfo),
        *interval_rows(points, fio),
        *batch_rows(fio, mlc),
        *memory_rows(mlc),
        *buffer_llc_rows(mlc, sysinfo),
        *hierarchy_rows(mlc),
        *headline_rows(headline, knees, load, storage, mem, curves, points),
        *little_rows(points, fio),
        *below_closed_rows(load, knees, points),
        *ceiling_rows(points, mem, headline, ceilings),
        *wsat_rows(wsat),
        *pts_rows(fio, hir_seconds),
    ]
    df = frame(rows)
    order = {s: i for i, s in enumerate(SECTIONS)}
    df = df.assign(_o=df["section"].map(order)).sort_values(["host", "_o", "check", "subject"], kind="stable")
    return df.drop(columns="_o").reset_index(drop=True)


def _rows(table: pd.DataFrame, check: str, host: str, subject: str | None) -> pd.DataFrame:
    sel = table[(table["check"] == check) & (table["host"] == host)] if len(table) else table
    return sel if subject is None else sel[sel["subject"] == subject]


def status(table: pd.DataFrame, check: str, host: str, subject: str | None = None) -> str:
    """The worst status of `check`'s rows for `host` (and `subject`, when given): pass / warn / fail;
    "" when the table has no such row (not checked)."""
    sel = _rows(table, check, host, subject)
    if sel.empty:
        return ""
    return max(sel["status"], key=STATUSES.index)


def holds(table: pd.DataFrame, check: str, host: str, subject: str | None = None) -> bool:
    """No row of `check` for `host` (and `subject`) is ``fail``: the findings it gates may be stated (True
    also without a row: nothing was found to fail)."""
    return status(table, check, host, subject) != FAIL
