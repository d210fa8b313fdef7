"""``headline_definition``: a headline quantity is one number. Per host, the headline's value (memstor.analysis
.synthesis.headline_long) against figures of the same quantity from other, independent measurements:

- best 4K random read / write IOPS (the best closed-loop point of the sweeps): the queue-depth sweep's own
  highest measurement at any job count (the knee table's X_best_iops; X_max_meas_iops where a table has none), the
  one-job closed curve's x_max_iops (storage curves; high side only: fewer jobs reach less by definition) and the open
  loop's highest achieved IOPS at a point that received its offered rate within +-5 % (a separate run; an
  overshooting point is no measurement of that rate — open_loop_rate and below_closed_max judge those; the open
  loop's ``x_max_iops`` is not independent: it IS the closed-loop X_max the rates are shares of). Value: the figure furthest from the headline, as a ratio to it (x).
  High side: no figure above the headline by more than :data:`RATIO` (warn) or :data:`FAIL_RATIO` (fail) —
  something measured more than "the best". Low side: a closed-loop figure below headline / :data:`RATIO` warns
  (the sweep's maximum is not the headline's: two definitions, e.g. the headline from another experiment);
  the open loop has no low side (its rates are shares of X_max below it by design; a rate it missed is
  ``open_loop_rate``'s).
- peak memory bandwidth: no loaded-latency curve measured more (memstor.analysis.memory curve maximum
  b_max_MBps): above the headline x RATIO warn, x FAIL_RATIO fail. Below: no bound — a curve with fewer load
  threads, or a latency thread beside them, reaches less by definition.
- idle memory latency: no loaded-latency point measured less (the curve points' latency_ns): below the
  headline / RATIO warn, / FAIL_RATIO fail. Above: no bound — a loaded point carries load by definition.

A headline or figure that is missing, zero or negative is not compared (no row, or ``unchecked`` when the
headline itself is there but not a positive number while other figures are).
"""

from __future__ import annotations

import math

import pandas as pd

from memstor.analysis.validity.openloop import RATE_HIGH_PCT, RATE_LOW_PCT, achieved_pct
from memstor.analysis.validity.rows import FAIL, PASS, band, has, n, num, row, unchecked

#: Two numbers of one headline quantity further apart than this ratio are two definitions, not one (run-to-run
#: noise between two separate runs of one configuration stays within a few %).
RATIO = 1.10
#: ... and beyond this one they contradict each other: a figure half again above "the best" (or below "the
#: least") is not the same quantity measured twice.
FAIL_RATIO = 1.5

_SECTION = "headline"
#: side of a comparison: both ways, above the headline only, below only
BOTH, ABOVE, BELOW = 0, 1, -1


def headline_rows(headline: pd.DataFrame | None, knees: pd.DataFrame | None, load: pd.DataFrame | None,
                  storage: pd.DataFrame | None, mem: pd.DataFrame | None, curves: pd.DataFrame | None,
                  points: pd.DataFrame | None = None) -> list[dict]:
    """headline_definition per host x headline quantity that another table also states. points (fio_summary)
    tells the open loop's block size: an open loop that is not 4K is not compared with a 4K headline."""
    if not has(headline, "host", "key", "value"):
        return []
    rows = []
    for host, h in headline.groupby("host", sort=True):
        vals = dict(zip(h["key"], h["value"]))
        for rw in ("randread", "randwrite"):
            others = _best_iops(host, rw, knees, load, storage, points)
            if others and f"best_{rw}_iops" in vals:
                rows.append(_agree(host, f"best 4K {rw} IOPS", vals[f"best_{rw}_iops"], others, "IOPS"))
        bw = _column(mem, host, "b_max_MBps", "loaded-latency curve maximum", max)
        if bw and "peak_bw_MBps" in vals:
            rows.append(_agree(host, "peak memory bandwidth", vals["peak_bw_MBps"], [(*bw[0], ABOVE)], "MB/s"))
        lat = _least_loaded(curves, host)
        if lat and "idle_latency_ns" in vals:
            rows.append(_agree(host, "idle memory latency", vals["idle_latency_ns"], [(*lat[0], BELOW)], "ns"))
    return rows


def _top(df: pd.DataFrame | None, host, rw: str, col: str, closed: bool) -> float | None:
    """The highest positive `col` of host x rw (closed: the closed-loop curve rows only)."""
    if not has(df, "host", "rw", col):
        return None
    sel = df[(df["host"] == host) & (df["rw"] == rw)]
    if closed and "kind" in sel:
        sel = sel[sel["kind"].astype(str).str.startswith("closed")]
    v = num(pd.to_numeric(sel[col], errors="coerce").max()) if len(sel) else None
    return v if v is not None and v > 0 else None


def _open_is_4k(points: pd.DataFrame | None, host, rw: str) -> bool:
    """The open loop of host x rw ran 4 KiB I/O (True when points do not say)."""
    if not has(points, "host", "experiment", "rw", "bs_bytes"):
        return True
    bs = points[(points["host"] == host) & (points["experiment"] == "fio-load-latency") & (points["rw"] == rw)]
    bs = pd.to_numeric(bs["bs_bytes"], errors="coerce").dropna()
    return bs.empty or bool((bs == 4096).all())


def _delivered(load: pd.DataFrame | None) -> pd.DataFrame | None:
    """The open-loop points that received their offered rate (achieved within +-5 %): an overshooting or
    starved point is not a measurement of the open loop it names (open_loop_rate, below_closed_max judge it)."""
    if load is None or load.empty:
        return load
    pct = achieved_pct(load)
    return None if pct is None else load[(pct >= RATE_LOW_PCT) & (pct <= RATE_HIGH_PCT)]


def _best_iops(host, rw: str, knees, load, storage, points) -> list[tuple[str, float, int]]:
    """(what, IOPS, side) of the figures independent of the headline's best 4K IOPS."""
    out = []
    # the sweep's highest at any job count (the knee table's X_best, S12-bare 3: its one-job X_max_meas, 24,406 IOPS,
    # was held against the QD32x4 headline of 43,748 as "the knee table" printing 43,748); the one-job curve's
    # X_max is below a many-job best by definition: no low side
    best = ("X_best_iops", "queue-depth sweep's highest at any job count (knee table's X_best)") if has(
        knees, "X_best_iops") and pd.to_numeric(knees["X_best_iops"], errors="coerce").notna().any() else (
        "X_max_meas_iops", "queue-depth sweep's highest (knee table)")
    for df, col, what, side in ((knees, *best, BOTH),
                                (storage, "x_max_iops", "one-job closed curve's X_max (storage_fit)", ABOVE),
                                (_delivered(load) if _open_is_4k(points, host, rw) else None, "achieved_iops",
                                 "open loop's highest achieved at a point within ±5 % of its offered rate", ABOVE)):
        v = _top(df, host, rw, col, side == BOTH or df is storage)
        if v is not None:
            out.append((what, v, side))
    return out


def _column(df, host, col: str, what: str, pick) -> list[tuple[str, float]]:
    if not has(df, "host", col):
        return []
    vals = pd.to_numeric(df.loc[df["host"] == host, col], errors="coerce").dropna()
    v = num(pick(vals[vals > 0], default=None))
    return [] if v is None else [(what, v)]


def _least_loaded(curves: pd.DataFrame | None, host) -> list[tuple[str, float]]:
    """(what, ns) of host's lowest loaded-latency point, named by its traffic and inject delay: the lowest
    latency of any loaded point, which need not be the lightest load (R-loop 9.3: 334.91 ns was read-only at
    delay 0, the heaviest load, and was called 'lightest loaded latency')."""
    if not has(curves, "host", "latency_ns"):
        return []
    sel = curves[curves["host"] == host].assign(_ns=lambda d: pd.to_numeric(d["latency_ns"], errors="coerce"))
    sel = sel[sel["_ns"] > 0]
    if sel.empty:
        return []
    best = sel.loc[sel["_ns"].idxmin()]
    where = ", ".join(f"{k} {n(best[k]) if k == 'inject_delay' else best[k]}".replace("inject_delay", "delay")
                      for k in ("traffic", "inject_delay") if k in sel and not pd.isna(best[k]))
    return [(f"lowest latency of any loaded point{f' ({where})' if where else ''}", float(best["_ns"]))]


def _ratio(v: float, value: float, side: int) -> float:
    """v / value, with the side a figure may not cross folded in: 1.0 on its allowed side."""
    r = v / value
    return 1.0 if (side == ABOVE and r < 1) or (side == BELOW and r > 1) else r


def _agree(host, subject: str, headline, others: list[tuple[str, float, int]], unit: str) -> dict:
    """The row of one quantity: the figure furthest from the headline (log scale, on its judged side) against
    [1 / RATIO, RATIO] (warn) and [1 / FAIL_RATIO, FAIL_RATIO] (fail)."""
    value = num(headline)
    said = "; ".join(f"{w} {n(v)}" for w, v, _ in others)
    bounds = {"low": 1 / RATIO, "high": RATIO}
    if value is None or value <= 0:
        return unchecked(host, "headline_definition", subject, f"no positive headline value ({n(value)}) to hold "
                         f"against {said}", _SECTION, "x headline", low=1 / RATIO, high=RATIO)
    ratios = [(_ratio(v, value, side), w) for w, v, side in others]
    ratio, worst = max(ratios, key=lambda rw: abs(math.log(rw[0])))
    status, limit = band(ratio, 1 / FAIL_RATIO, FAIL_RATIO, warn_low=1 / RATIO, warn_high=RATIO)
    bad = [w for r, w in ratios if not 1 / RATIO <= r <= RATIO]
    consequence = "" if status == PASS else (
        f"the report uses the headline's definition for this quantity everywhere and names the other number"
        f"{'s' if len(bad) > 1 else ''} ({', '.join(bad)}) by what they measure")
    if status == FAIL:
        consequence = (f"the headline is contradicted by {worst} ({n(ratio)}x it): it is not stated as the "
                       f"device's {subject}")
    return row(host, "headline_definition", subject, status, ratio, limit, "x headline",
               f"headline {n(value)} {unit}; {said}", consequence, _SECTION, **bounds)
