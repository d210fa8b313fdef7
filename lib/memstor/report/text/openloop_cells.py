"""Cells of the open-loop report text (memstor.report.text.openloop and openloop_models): a table cell as a
number, its display, an offered load's label (% of X_ref: 'u50'), a p99 target (µs), one device x workload's
rows."""

from __future__ import annotations

import math

import pandas as pd

from memstor.core.fmt import fmt_number


def _ol_float(v) -> float:
    """A cell as a float (NaN when missing or not a number)."""
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _ol_fmt(v) -> str:
    """fmt_number of a cell that may be None, text or NaN."""
    return fmt_number(_ol_float(v))


def _ol_target(t) -> str:
    """A p99 target (µs) as people write it: 50, 1,000, 2.5."""
    t = _ol_float(t)
    if t != t:
        return "–"
    return f"{t:,.0f}" if t == int(t) else f"{t:g}"


def _ol_u(u) -> str:
    """An offered load (% of X_ref) as the figures label it: 50 -> 'u50'."""
    u = _ol_float(u)
    return "u?" if u != u else f"u{u:g}"


def _ol_rows(df: pd.DataFrame | None, host: str, rw: str) -> pd.DataFrame:
    """Rows of `df` for one device and workload (empty without the columns)."""
    if df is None or len(df) == 0 or not {"host", "rw"} <= set(df.columns):
        return pd.DataFrame()
    return df[(df["host"].astype(str) == str(host)) & (df["rw"] == rw)]
