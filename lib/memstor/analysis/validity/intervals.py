"""Interval checks per host x fio experiment, on the fio summary points (memstor.analysis.points.fio_summary):
every point has its 95 % interval, else why not (``interval_exists``; the reason from the tidy rows'
``ci_note``), and every value lies inside its own interval (``interval_holds_value``). The ``total`` rows of
mixed jobs (a sum of two directions, no interval of their own) are left out: their directions are checked."""

from __future__ import annotations

import pandas as pd

from memstor.analysis.validity.rows import FAIL, PASS, WARN, has, n, row
from memstor.core.schema import missing

#: The metrics whose value and interval are compared.
METRICS = ("iops", "bw_MBps", "lat_mean_us")
#: A value further outside its interval than this share of the value is outside (floating-point rounding only).
RTOL = 1e-9

_SECTION = "storage_points"


def interval_rows(points: pd.DataFrame | None, fio: pd.DataFrame | None) -> list[dict]:
    """interval_exists and interval_holds_value per host x experiment."""
    if not has(points, "host", "experiment", "iops", "iops_ci_low", "iops_ci_high"):
        return []
    p = points[points["iops"].notna()]
    if "direction" in p:
        p = p[p["direction"] != "total"]
    notes = _notes(fio)
    rows = []
    for (host, exp), g in p.groupby(["host", "experiment"], sort=True):
        section = "open_loop" if exp == "fio-load-latency" else "steady_state" if exp == "fio-steady-state" \
            else _SECTION
        rows.append(_exists(host, exp, g, notes, section))
        holds = _holds(host, exp, g, section)
        if holds:
            rows.append(holds)
    return rows


def _notes(fio: pd.DataFrame | None) -> dict:
    """{(host, experiment, config): the ci_notes of its tidy rows}."""
    if not has(fio, "host", "experiment", "config", "ci_note"):
        return {}
    f = fio[fio["ci_note"].map(lambda v: not missing(v))]
    return {k: sorted(set(g["ci_note"].astype(str))) for k, g in f.groupby(["host", "experiment", "config"])}


def _why(r: pd.Series, notes: dict) -> str:
    """Why point r has no interval: its n and its runs' ci_note ('too few batches ...')."""
    k = int(r["n"]) if "n" in r and not missing(r["n"]) else 1
    said = notes.get((r["host"], r["experiment"], r.get("config")), [])
    causes = sorted({part.strip() for note in said for part in note.split(";")
                     if not part.strip().startswith("ramp excluded")})
    return f"n = {k}" + (f", {' / '.join(causes)}" if causes else ", no interval logs")


def _exists(host, exp, g: pd.DataFrame, notes: dict, section: str) -> dict:
    lacking = g[g["iops_ci_low"].isna() | g["iops_ci_high"].isna()]
    k = len(lacking)
    if not k:
        return row(host, "interval_exists", exp, PASS, 0, 0, "points without interval",
                   f"all {len(g)} points have a 95 % interval", "", section)
    reasons = lacking.apply(lambda r: _why(r, notes), axis=1).value_counts()
    why = "; ".join(f"{c}: {reason}" for reason, c in reasons.items())
    return row(host, "interval_exists", exp, WARN, k, 0, "points without interval",
               f"{k} of {len(g)} points have no 95 % interval ({why})",
               "these values are shown without an interval: differences between them smaller than the run-to-run "
               "spread are not findings; repeat the points (repetitions >= 2) or run them longer for an interval",
               section)


def _holds(host, exp, g: pd.DataFrame, section: str) -> dict | None:
    outside, with_ci, example = 0, 0, ""
    for _, r in g.iterrows():
        for m in METRICS:
            lo, hi, v = r.get(f"{m}_ci_low"), r.get(f"{m}_ci_high"), r.get(m)
            if missing(lo) or missing(hi) or missing(v):
                continue
            with_ci += 1
            tol = RTOL * abs(float(v))
            if not float(lo) - tol <= float(v) <= float(hi) + tol:
                outside += 1
                example = example or f"{r.get('config', '')} {m} {n(v)} outside [{n(lo)}, {n(hi)}]"
    if not with_ci:
        return None
    if not outside:
        return row(host, "interval_holds_value", exp, PASS, 0, 0, "values outside",
                   f"all {with_ci} values with an interval lie inside it", "", section)
    return row(host, "interval_holds_value", exp, FAIL, outside, 0, "values outside",
               f"{outside} of {with_ci} values lie outside their own 95 % interval, e.g. {example}: the interval "
               "describes other windows than the value (the run's mean keeps the ramp window the batch-means "
               "interval leaves out)",
               "these intervals are not shown beside their values", section)
