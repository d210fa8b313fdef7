"""The ``storage_fit`` table (pure): the latency–throughput analysis (memstor.analysis.curves.analyse) of
every storage curve — the closed queue-depth sweep and the open loop of each device × workload — with the
storage units in the column names (IOPS, µs).
"""

from __future__ import annotations

import math

import pandas as pd

from memstor.analysis.curves import CurveFit, analyse, littles_outstanding, metric_row
from memstor.analysis.validity.openloop import RATE_HIGH_PCT, RATE_LOW_PCT
from memstor.core.schema import truthy

#: Kinds of storage curve.
CLOSED, OPEN = "closed queue-depth sweep", "open loop"
#: Columns of :func:`storage_fit_table` (``report/tables/storage_fit.csv``).
STORAGE_FIT_COLUMNS = [
    "host", "kind", "rw", "bs_bytes", "ioengine", "direct", "points", "saturated", "x_sat_iops", "plateau_points",
    "hook", "x_max_iops", "r_at_x_max_us", "outstanding_at_x_max", "fit_points", "fit_x_max_iops",
    "r0_us", "r0_us_ci_low", "r0_us_ci_high", "a_us", "a_us_ci_low", "a_us_ci_high",
    "peak_iops", "peak_iops_ci_low", "peak_iops_ci_high", "identifiable", "reason", "fit_rms_pct",
    "holdout_error_pct", "holdout_points", "holdout_note", "r_at_x_max_over_r0",
    "x_at_1p25_r0_iops", "x_at_1p25_r0_censored", "x_at_2_r0_iops", "x_at_2_r0_censored", "note",
    "rates", "held_rates",  # open loop: the offered rates measured, and those whose loop held (the curve's points)
]
#: An open loop's curve needs this many rates whose loop held (not overloaded): one point is no curve.
MIN_HELD_RATES = 2


def storage_fit_table(qd: pd.DataFrame | None, load: pd.DataFrame | None) -> tuple[pd.DataFrame, dict]:
    """``storage_fit``: the same analysis (memstor.analysis.curves.analyse) for every storage curve — the closed
    queue-depth sweep of each device × workload (memstor.analysis.synthesis.qd_points, the points in the
    sweep; load = outstanding I/O N) and the open loop (memstor.analysis.load_latency.curve_table; load =
    offered IOPS, throughput = achieved IOPS) over the rates whose loop held only (``open_loop`` true and achieved
    within 95-105 % of offered: a rate whose generator's checks failed is not the device's response to the offered
    load), ``rates`` and ``held_rates``
    saying how many (a table without ``open_loop``: every rate, the counts empty); fewer than
    :data:`MIN_HELD_RATES` held: the row keeps its counts and the reason in ``note``, no curve. Columns :data:`STORAGE_FIT_COLUMNS`: the metric names of memory_fit with the storage units (IOPS,
    µs); outstanding_at_x_max = X · R by Little's law.

    Returns (table, fits): fits maps (host, kind, rw) -> memstor.analysis.curves.CurveFit."""
    rows, fits = [], {}
    if qd is not None and not qd.empty:
        sweep = qd[qd["in_sweep"].astype(bool)] if "in_sweep" in qd.columns else qd
        for (host, rw), g in sweep.groupby(["host", "rw"], sort=True):
            cf = analyse(g["outstanding_io"], g["iops"], g["lat_mean_us"])
            fits[(host, CLOSED, rw)] = cf
            first = g.iloc[0]
            rows.append({"host": host, "kind": CLOSED, "rw": rw, "bs_bytes": first.get("bs_bytes"),
                         "ioengine": first.get("ioengine"), "direct": first.get("direct"), **_storage_row(cf)})
    if load is not None and not load.empty:
        for (host, rw), g in load.groupby(["host", "rw"], sort=True):
            rows.append(_open_row(host, rw, g, fits))
    table = pd.DataFrame(rows).reindex(columns=STORAGE_FIT_COLUMNS)
    for col in ("bs_bytes", "points", "plateau_points", "fit_points", "holdout_points", "rates", "held_rates"):
        table[col] = pd.to_numeric(table[col], errors="coerce").astype("Int64")
    return table, fits


def _open_row(host, rw: str, g: pd.DataFrame, fits: dict) -> dict:
    """The storage_fit row of one open loop (its rates `g`), its CurveFit added to `fits` when it has a curve."""
    # an overloaded rate (achieved < 95 % of offered) has no steady state: its queue, and so its latency, grows
    # with the run's length; a rate whose loop did not hold is not the device's response: neither is a point
    over = g["overloaded"].map(truthy).astype(bool) if "overloaded" in g else pd.Series(False, index=g.index)
    judged = "open_loop" in g  # a table without the flag (no generator's judgement): every rate counts
    held = g["open_loop"].map(truthy).astype(bool) if judged else pd.Series(True, index=g.index)
    if "achieved_pct" in g:  # a flag beside a rate outside +-5 % is not believed (validity's open_loop_held)
        pct = pd.to_numeric(g["achieved_pct"], errors="coerce")
        held &= ~(pct.notna() & ((pct < RATE_LOW_PCT) | (pct > RATE_HIGH_PCT)))
    kept = g[~over & held]
    base = {"host": host, "kind": OPEN, "rw": rw, "bs_bytes": g["bs_bytes"].iloc[0] if "bs_bytes" in g else math.nan,
            **({"rates": len(g), "held_rates": int(held.sum())} if judged else {})}
    notes = [f"the loop held at {int(held.sum())} of {len(g)} offered rates: the curve is theirs only"
             if not held.all() else ""]
    if (over & held).any():
        notes.append(f"{int((over & held).sum())} overloaded rate(s) left out (achieved < 95 % of offered)")
    if len(kept) < MIN_HELD_RATES:
        notes.append(f"no curve: {len(kept)} held rate{'s' if len(kept) != 1 else ''} that kept up (a curve needs "
                     f"{MIN_HELD_RATES})")
        return {**base, "points": len(kept), "saturated": False, "plateau_points": 0, "hook": False,
                "identifiable": False, "reason": notes[-1].removeprefix("no curve: "),
                "note": "; ".join(x for x in notes if x)}
    cf = analyse(kept["offered_iops"], kept["achieved_iops"], kept["lat_mean_us"])
    fits[(host, OPEN, rw)] = cf
    row = {**base, **_storage_row(cf)}
    row["note"] = "; ".join(x for x in (*notes, row.get("note")) if isinstance(x, str) and x)
    return row


def _storage_row(cf: CurveFit) -> dict:
    """Metric columns of one storage curve (IOPS, µs)."""
    row = metric_row(cf, "x", "iops", "us")
    row["outstanding_at_x_max"] = float(littles_outstanding(cf.sat.x_max, cf.sat.r_at_x_max * 1e-6))
    return row
