"""Interval checks per host x fio experiment, on the fio summary points (memstor.analysis.points.fio_summary).
The ``total`` rows of mixed jobs (a sum of two directions, no interval of their own) are left out: their
directions are checked. Both judge every metric of :data:`METRICS` that has a value.

- ``interval_exists``: every point has a 95 % interval one can quote. Value: points without one (band [0, 0]).
  Three ways to lack one: none at all (why: the tidy rows' ``ci_note``, n); an interval of ZERO width
  (half-width below ZERO_WIDTH_SHARE of the value: n >= 2 noisy runs or >= 10 log windows are never equal to
  1e-6, so the interval was not computed from the spread); an interval WIDER than the value (half-width above
  WIDE_SHARE of it: its low bound reaches 0 or below, it bounds nothing). Any of them: warn (the value is
  shown without an interval). No point with a value: unchecked.
- ``interval_holds_value``: every value lies inside its own interval. Value: values outside (band [0, 0]),
  below the low bound and above the high bound counted apart; any: fail. No value with an interval:
  unchecked (nothing to compare).

:func:`exists_counts` reads the interval_exists rows back for page 1: points without a quotable interval, points
in all, and the reasons that occur (:data:`REASONS`: the tidy rows' ci_note causes and the width flaws, in words).
"""

from __future__ import annotations

import re

import pandas as pd

from memstor.analysis.validity.rows import FAIL, PASS, WARN, has, n, num, row, unchecked
from memstor.core.schema import missing

#: The metrics whose value and interval are compared.
METRICS = ("iops", "bw_MBps", "lat_mean_us")
#: A value further outside its interval than this share of the value is outside (floating-point rounding only).
RTOL = 1e-9
#: Half-widths below this share of the value are zero width: a 95 % interval from real runs or windows is at
#: least ~1e-4 wide (fio's rate-limited logs vary by 0.3 %); 1e-6 leaves room for the quietest device.
ZERO_WIDTH_SHARE = 1e-6
#: Half-widths above this share of the value (the interval reaches 0): not an interval to quote.
WIDE_SHARE = 1.0

_SECTION = "storage_points"
#: Why a point lacks an interval: (what interval_exists' evidence holds, the words page 1 uses), in the order said.
REASONS = (("too few batches", "too few log windows"), ("no interval logs", "no interval logs"),
           ("trajectory", "a PTS-recovery or write-saturation trajectory, not a stationary run"),
           ("ioarrive's 1-s series", "ioarrive's 1-s series"), ("correlated", "correlated log windows"),
           ("zero width", "an interval of zero width"), ("wider than the value", "an interval wider than its value"))
#: The counts interval_exists' evidence opens with (warn: 'k of n points ...', pass: 'all n points ...').
_COUNTED = re.compile(r"^(?:(?P<k>\d+) of (?P<n>\d+)|all (?P<all>\d+)) points ")


def interval_rows(points: pd.DataFrame | None, fio: pd.DataFrame | None) -> list[dict]:
    """interval_exists and interval_holds_value per host x experiment."""
    if not has(points, "host", "experiment", "iops", "iops_ci_low", "iops_ci_high"):
        return []
    p = points[points["direction"] != "total"] if "direction" in points else points
    notes = _notes(fio)
    rows = []
    for (host, exp), every in p.groupby(["host", "experiment"], sort=True):
        g = every[every["iops"].notna()]
        section = "open_loop" if exp == "fio-load-latency" else "steady_state" if exp == "fio-steady-state" \
            else _SECTION
        rows.append(_exists(host, exp, g, notes, section))
        rows.append(_holds(host, exp, g, section))
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


def width_flaw(value, lo, hi) -> str | None:
    """Why an interval [lo, hi] around value cannot be quoted: "zero width", "wider than the value", or None
    (quotable); None also when a number is missing (that is "no interval", judged apart)."""
    v, a, b = num(value), num(lo), num(hi)
    if v is None or a is None or b is None or v == 0:
        return None
    half = (b - a) / 2.0
    if half <= ZERO_WIDTH_SHARE * abs(v):
        return "zero width"
    if half > WIDE_SHARE * abs(v):
        return "wider than the value"
    return None


def _flaws(g: pd.DataFrame) -> tuple[dict[str, list[str]], set]:
    """({flaw: examples}, the flawed points' index labels) of the points' intervals of every metric with a
    value (width_flaw)."""
    out: dict[str, list[str]] = {}
    where = set()
    for i, r in g.iterrows():
        for m in METRICS:
            flaw = width_flaw(r.get(m), r.get(f"{m}_ci_low"), r.get(f"{m}_ci_high"))
            if flaw:
                where.add(i)
                out.setdefault(flaw, []).append(f"{r.get('config', '')} {m} {n(r.get(m))} in "
                                                f"[{n(r.get(f'{m}_ci_low'))}, {n(r.get(f'{m}_ci_high'))}]")
    return out, where


def _exists(host, exp, g: pd.DataFrame, notes: dict, section: str) -> dict:
    unit = "points without interval"
    if g.empty:
        return unchecked(host, "interval_exists", exp, "no point has a value", section, unit, low=0, high=0)
    lacking = g[g["iops_ci_low"].isna() | g["iops_ci_high"].isna()]
    flaws, flawed = _flaws(g)
    k = len(set(lacking.index) | flawed)
    if not k:
        return row(host, "interval_exists", exp, PASS, 0, 0, unit,
                   f"all {len(g)} points have a 95 % interval, none of zero width or wider than its value", "",
                   section, low=0, high=0)
    parts = [] if len(lacking) else [f"{k} of {len(g)} points have an interval one cannot quote"]
    if len(lacking):
        reasons = lacking.apply(lambda r: _why(r, notes), axis=1).value_counts()
        why = "; ".join(f"{c}: {reason}" for reason, c in reasons.items())
        parts.append(f"{len(lacking)} of {len(g)} points have no 95 % interval ({why})")
    for flaw, examples in flaws.items():
        parts.append(f"{len(examples)} interval(s) of {flaw}, e.g. {examples[0]}")
    return row(host, "interval_exists", exp, WARN, k, 0, unit, "; ".join(parts),
               "these values are shown without an interval: differences between them smaller than the run-to-run "
               "spread are not findings; repeat the points (repetitions >= 2) or run them longer for an interval",
               section, low=0, high=0)


def _holds(host, exp, g: pd.DataFrame, section: str) -> dict:
    outside, below, with_ci, example = 0, 0, 0, ""
    for _, r in g.iterrows():
        for m in METRICS:
            lo, hi, v = r.get(f"{m}_ci_low"), r.get(f"{m}_ci_high"), r.get(m)
            if missing(lo) or missing(hi) or missing(v):
                continue
            with_ci += 1
            tol = RTOL * abs(float(v))
            if not float(lo) - tol <= float(v) <= float(hi) + tol:
                outside += 1
                below += float(v) < float(lo) - tol
                example = example or f"{r.get('config', '')} {m} {n(v)} outside [{n(lo)}, {n(hi)}]"
    unit = "values outside"
    if not with_ci:
        return unchecked(host, "interval_holds_value", exp, "no value has an interval to lie in", section, unit,
                         low=0, high=0)
    if not outside:
        return row(host, "interval_holds_value", exp, PASS, 0, 0, unit,
                   f"all {with_ci} values with an interval lie inside it", "", section, low=0, high=0)
    return row(host, "interval_holds_value", exp, FAIL, outside, 0, unit,
               f"{outside} of {with_ci} values lie outside their own 95 % interval ({below} below it, "
               f"{outside - below} above), e.g. {example}: the interval describes other windows than the value "
               "(the run's mean keeps the ramp window the batch-means interval leaves out)",
               "these intervals are not shown beside their values", section, low=0, high=0)


def exists_counts(validity: pd.DataFrame | None) -> tuple[int, int, list[str]] | None:
    """(points without a quotable 95 % interval, points in all, the reasons that occur in words (:data:`REASONS`,
    'other (validity.csv)' for a reason not among them)) over every interval_exists row that was judged, all hosts
    and experiments; None where none was (no row, or only unchecked ones)."""
    if validity is None or validity.empty or not {"check", "status", "evidence"} <= set(validity.columns):
        return None
    rows = validity[(validity["check"] == "interval_exists") & validity["status"].isin([PASS, WARN])]
    without = total = 0
    found: set[str] = set()
    for ev in rows["evidence"].astype(str):
        m = _COUNTED.match(ev)
        if not m:
            return None
        without, total = without + int(m["k"] or 0), total + int(m["n"] or m["all"])
        hit = {words for key, words in REASONS if key in ev}
        found |= hit or ({"other (validity.csv, interval_exists)"} if m["k"] else set())
    if rows.empty:
        return None
    return without, total, [w for _, w in REASONS if w in found] + sorted(found - {w for _, w in REASONS})
