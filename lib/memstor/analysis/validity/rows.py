"""The validity table's row schema, its check ids and sections, and the one row builder the check
modules share (pure; see the package docstring, memstor.analysis.validity)."""

from __future__ import annotations

import math
from typing import TypeGuard

import pandas as pd

from memstor.core.fmt import fmt_number
from memstor.core.schema import missing

#: Columns of the validity table (``report/tables/validity.csv``), one row per host x check x subject. ``low`` and
#: ``high`` are the bounds of the passing band on both sides (empty: no bound on that side, with the reason in
#: the check's module); ``limit`` is the bound the status was judged against (the one crossed, else the nearer).
COLUMNS = ["host", "check", "subject", "status", "value", "low", "high", "limit", "unit", "evidence", "consequence",
           "section"]

PASS, UNCHECKED, WARN, FAIL = "pass", "unchecked", "warn", "fail"
#: Statuses from best to worst (:func:`memstor.analysis.validity.status` returns the worst one). ``unchecked``:
#: the check has no value to judge (NaN, empty, a failed run, not recorded) — never a pass; the evidence says why.
STATUSES = (PASS, UNCHECKED, WARN, FAIL)

#: The report sections a row gates.
SECTIONS = ("open_loop", "queue_depth", "curves", "steady_state", "write_saturation", "storage_points", "memory",
            "headline", "pts")

#: Check id -> the precondition it checks (one line each). Ids are stable: the report looks rows up by them.
CHECKS = {
    "open_loop_held": "every offered-rate point kept open-loop (Poisson, not completion-gated) arrivals",
    "open_loop_repeat": "one open-loop rate run by fio-load-latency and again by a one-direction mixed-load-map cell "
                        "gives the same mean and p99 latency within 1.25x",
    "open_loop_rate": "every offered-rate point achieved within ±5 % of the rate offered to it (neither gated nor overshot)",
    "load_generator_cpu": "the load generator's own CPU use (fio's usr + sys, ioarrive's process) left the cores free: "
                          "the device, not the generator, set the pace",
    "knee_ceiling": "the knee fit's ceiling X_max (+ 1.96 SE) is at least every throughput measured in its sweep",
    "knee_min_latency": "the knee fit's R_min (- 1.96 SE) is at most the latency measured at the smallest outstanding I/O",
    "knee_located": "the knee N*'s 95 % interval covers less than half of the sweep (log scale): it places the knee",
    "knee_plateau": "no point measured past the knee N* lies more than 10 % above the fit's ceiling X_fit beyond its "
                    "interval: the sweep levels off where the fit says (above it within the run-to-run spread: not "
                    "shown; beyond the spread, measured or else 10 % assumed: not levelled off there)",
    "knee_sweep_agrees": "the same one-job 4 KiB job measured outside the queue-depth sweep, at a depth inside it, "
                         "is not above the sweep's most by more than the run-to-run spread: the sweep is the target's",
    "curve_holdout": "the curve model predicts its held-out top points (a number, within 25 %)",
    "steady_trace_jump": "the steady-state trace moves by less than 1.5x from one round to the next",
    "steady_window_trend": "the measurement window holds no monotone trend of 5 % or more that the slope rule let pass",
    "steady_round_length": "rounds last at least 10 s and the window overwrites the span at least once",
    "steady_vs_fresh": "the steady-state IOPS is not above the fresh (queue-depth sweep) IOPS at the same outstanding I/O",
    "one_target": "every storage experiment of a device measured the one target its points mostly measured, the "
                  "one sysinfo.json (and page 1) names",
    "jobs_disjoint": "a sequential point's fio jobs each streamed through their own region of the file "
                     "(offset_increment), not all over the same blocks from offset 0",
    "config_agreement": "one configuration measured in two experiments agrees within the intervals (or 10 %)",
    "interval_exists": "every point has its 95 % interval (n >= 2, or >= 10 uncorrelated log windows)",
    "interval_holds_value": "every value lies inside its own 95 % interval (both describe the same windows)",
    "memory_gate": "the memory values pass the quality gate (a failure shared by >= 80 % is the machine's)",
    "memory_buffer_llc": "the memory runs' buffer exceeds the last-level cache (>= 4x) and fits the usable memory, "
                         "before a value is called DRAM's",
    "hierarchy_cpu_share": "every memory-hierarchy run (working set, memory-level parallelism) had its measuring "
                           "threads on a CPU at least 90 % of the time: the latencies are the memory's, not waits",
    "wsat_written": "the write-saturation run wrote the multiple of its span it was asked to (not cut by the time cap)",
    "wsat_series": "the write-saturation series is long enough to tell a lasting level from noise",
    "wsat_one_level": "the write-saturation series is one level: its halves' medians differ by at most 10 % or not "
                      "beyond noise (Mann-Whitney)",
    "pts_steady_state": "the SNIA PTS test (CBW, DIRTH: before its T x Q matrix; HIR: its baseline) reached steady "
                        "state",
    "pts_repeat": "a DIRTH point rerun (its histogram capture) gives the matrix point's IOPS within 10 %",
    "pts_demand": "more demand gives more IOPS: the largest T x Q over T1 Q1 lies between 1 and their outstanding "
                  "I/O's ratio",
    "hir_recovery": "a HIR recovery ratio is a difference: windows of one length, 3+ segments, all beyond the "
                    "baseline rounds' range",
    "dirth_optimal": "the response-time ceiling places DIRTH's optimal point: some matrix points are under it, "
                     "some not",
    "headline_definition": "a headline quantity has one value: the other tables' numbers of the same name agree within 10 %",
    "littles_law": "X x R (I/Os in flight by Little's law) is at most what could be in flight (iodepth x jobs) and, "
                   "in a closed loop, close to it",
    "below_closed_max": "no offered-rate point delivered more than the closed-loop maximum (beyond its interval)",
    "physical_ceiling": "no throughput is above the physical ceiling (interface, memory channels)",
    "series_matches_whole": "the per-second series (whole seconds only) averages to fio's whole-run figure within 2 %",
    "batch_independence": "batch-means intervals come from batches whose lag-1 autocorrelation is small",
}


def num(value) -> float | None:
    """A finite float, or None for a missing / non-numeric / infinite value."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) and not missing(v) else None


def n(value) -> str:
    """A number in a sentence (memstor.core.fmt.fmt_number)."""
    return fmt_number(num(value))


def row(host, check: str, subject: str, status: str, value, limit, unit: str, evidence: str, consequence: str,
        section: str, *, low=None, high=None) -> dict:
    """One validity row (COLUMNS); value/limit/low/high numeric or None; consequence empty for a pass unless
    given. A pass needs a value: a row without one is refused (use :func:`unchecked`)."""
    if check not in CHECKS or status not in STATUSES or section not in SECTIONS:
        raise ValueError(f"validity row: unknown check/status/section {check!r}/{status!r}/{section!r}")
    if status == PASS and num(value) is None:
        raise ValueError(f"validity row: {check} {subject!r} passes without a value (make it unchecked)")
    return {"host": str(host), "check": check, "subject": str(subject), "status": status, "value": num(value),
            "low": num(low), "high": num(high), "limit": num(limit), "unit": unit, "evidence": evidence,
            "consequence": consequence, "section": section}


def unchecked(host, check: str, subject: str, why: str, section: str, unit: str = "", *, low=None, high=None,
              consequence: str = "") -> dict:
    """A row for a check that had no value to judge: status ``unchecked``, evidence "not checked: <why>"."""
    return row(host, check, subject, UNCHECKED, None, None, unit, f"not checked: {why}",
               consequence or "the finding this check gates is stated without it: read it with care", section,
               low=low, high=high)


def band(value: float, low: float | None, high: float | None, *, warn_low: float | None = None,
         warn_high: float | None = None) -> tuple[str, float | None]:
    """(status, the bound judged against) of a value against a passing band: ``fail`` outside [low, high],
    ``warn`` outside [warn_low, warn_high] (a narrower band inside it), else ``pass``. A None bound is open.
    The bound returned is the one crossed, else the nearer one (relative distance)."""
    for status, lo, hi in ((FAIL, low, high), (WARN, warn_low, warn_high)):
        if lo is not None and value < lo:
            return status, lo
        if hi is not None and value > hi:
            return status, hi
    near = [b for b in (warn_low, warn_high, low, high) if b is not None]
    return PASS, (min(near, key=lambda b: abs(value - b) / max(abs(b), 1e-300)) if near else None)


def frame(rows: list[dict]) -> pd.DataFrame:
    """The rows as a validity table (COLUMNS, value/low/high/limit float)."""
    df = pd.DataFrame(rows, columns=COLUMNS)
    for col in ("value", "low", "high", "limit"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype(float)
    return df


def has(df: pd.DataFrame | None, *cols: str) -> TypeGuard[pd.DataFrame]:
    """df is a non-empty frame holding every column in cols."""
    return df is not None and not df.empty and all(c in df.columns for c in cols)
