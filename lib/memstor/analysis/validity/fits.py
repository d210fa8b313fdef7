"""Fit checks: the knee fit lies within its data (``knee_ceiling``, ``knee_min_latency``), its N* interval
places the knee (``knee_located``), per host x workload of memstor.analysis.synthesis.knee_fits; and every
curve model's held-out prediction error as a number (``curve_holdout``, per fitted curve of the
storage_fit / memory_fit tables, from their memstor.analysis.curves.CurveFit objects).

What passing means, and the bounds on both sides (named constants below, with their reasons):

- ``knee_ceiling``: the fitted X_max is the ceiling of the measured throughput (value: the highest measured
  IOPS). High: the fit's X_max + 1.96 SE (a measurement above the ceiling beyond its SE: the fit is below its
  data). Low: (X_max - 1.96 SE) / :data:`CEILING_ABOVE_DATA_MAX` (a fitted ceiling more than 1.5x every
  measurement is not located by the data, only extrapolated). No fit (it failed): ``unchecked``.
- ``knee_min_latency``: the fitted R_min is the unloaded latency (value: R_min_fit, µs). It must be > 0 (a
  zero or negative latency is no latency); high: the latency measured at the smallest outstanding I/O + 1.96
  SE (the fit above a measured latency); low: :data:`R_MIN_BELOW_MEAS_MIN` x that latency - 1.96 SE (at the
  smallest N the latency is R_min itself below the knee, or N / X_max above it: a fit under half of it is
  not the unloaded latency). No fitted R_min or no measured one: ``unchecked``.
- ``knee_located``: N* lies in the sweep and its 95 % interval places it. Position side (value: N*'s
  position along the sweep on a log scale, 0 = smallest N, 100 = largest): outside 0-100 % fails (an N*
  outside the sweep is an extrapolation, not a knee the data show). Width side (value: the interval's span
  as % of the sweep, log scale): >= :data:`KNEE_CI_SPAN_MAX_PCT` fails (the interval spans most of the
  sweep), a zero-width interval warns (no interval: the fit had no residual to measure). An unbounded
  interval fails; no N* or no sweep range: ``unchecked``.
- ``knee_plateau``: past N* the measured throughput stays at the fit's ceiling X_fit. Value: the highest lower end,
  among the closed queue-depth points of the workload measured at N > N* (the spec-conditions point included:
  another job count, the same workload), of the point's 95 % interval (its value where it has none), IOPS. High:
  X_fit x :data:`PLATEAU_RATIO`; above it but within the host's run-to-run spread (memstor.analysis.spread: measured
  by config_agreement's pairs, else 10 % assumed and said so): warn, not shown (the sweep cannot tell); beyond X_fit
  x the spread fail where the sweep still rises at its end (its last step, beyond the intervals, gained more than
  the spread: no knee at N*, N* is not stated), else warn (the sweep levelled off above the fit's ceiling: N* is
  stated with the points past it and the caveat that X_fit, and with it N*, is low; a point with another job count
  is said to explain it only where no one-job point measured elsewhere is above too). Low: X_fit / :data:`PLATEAU_RATIO` for the highest upper end (warn: nothing past N* reaches the ceiling
  the fit puts there — X_fit is extrapolated, N* with it). No point past N*: ``unchecked``; no queue-depth points
  given: no row.
- ``knee_sweep_agrees``: the queue-depth sweep is the target's (value: the highest IOPS of the same one-job 4 KiB
  job measured by another fresh experiment at a depth inside the sweep, over the sweep's most). High: the
  run-to-run spread (memstor.analysis.spread); beyond it fail (the knee fit is withheld, the measured points stay,
  and the four checks above are ``unchecked`` for the workload: they would judge a fit the report does not state).
  No low bound: a point below the sweep's most is what a depth below the sweep's top gives. Nothing measured
  outside the sweep: ``unchecked``.
- ``curve_holdout``: the model fitted below 80 % predicts the points above (value: their mean absolute
  error, %). High: :data:`HOLDOUT_MAX_PCT` (warn). Low: 0 — the error is a mean of absolute values, so
  below 0 it is a computation fault (``unchecked``); no suspicion bound near 0: the held-out points are left
  out of the fit by construction (memstor.analysis.curves), so a small error cannot come from leakage, and
  a device that follows the model (a simulator, a pure M/M/1) predicts to within its noise. No number (the
  model has no bounded prediction): ``unchecked``.
"""

from __future__ import annotations

import math

import pandas as pd

from memstor.analysis.curves import HOLDOUT_SHARE
from memstor.analysis.spread import (
    Spread,
    disagreeing,
    flat_before_deepest,
    one_job_elsewhere,
    points_said,
    run_spread,
    sweep_beaten,
)
from memstor.analysis.validity.agreement import AGREE_RATIO
from memstor.analysis.validity.rows import FAIL, PASS, WARN, band, has, n, num, row, unchecked

#: Standard errors as a 95 % band (normal): a fit "lies within its data" up to this many SE.
Z95 = 1.96
#: A fitted X_max more than this many times the highest measured IOPS is not located by the sweep: the
#: same bound the curves' peak must meet to be identifiable (DESIGN.md: "within 1.5 x the highest
#: throughput measured").
CEILING_ABOVE_DATA_MAX = 1.5
#: A fitted R_min below this share of the latency measured at the smallest outstanding I/O (beyond 1.96 SE) is
#: not the unloaded latency: there the latency is R_min itself (below the knee) or N / X_max (above it).
R_MIN_BELOW_MEAS_MIN = 0.5
#: The knee's 95 % interval covering this share of the sweep (log scale, %) or more does not place the knee.
KNEE_CI_SPAN_MAX_PCT = 50.0
#: A point measured past N* more than this factor above X_fit (beyond its own 95 % interval where it has one) shows
#: the sweep still rising where the fit puts its ceiling: the ratio config_agreement allows two single runs of one
#: configuration (the run-to-run spread a single run's interval does not hold), so a plateau's own scatter passes.
PLATEAU_RATIO = AGREE_RATIO
#: Mean held-out error (%) above which the model does not describe the curve beyond its fit range: near
#: saturation a quarter of the latency is the difference between two queue depths.
HOLDOUT_MAX_PCT = 25.0
#: A held-out error beyond this (%) means the point prediction ran into the model's pole: said in words.
HUGE_PCT = 1000.0

_KNEE = "queue_depth"
_NOT_CEILING = ("the fitted X_max is not the ceiling: the report gives the measured highest throughput as the "
                "ceiling, names the fitted one only as what the data contradict, and states no N* from it")  # S15-loop 6
_NOT_RMIN = ("the fitted R_min is not the unloaded latency: the report gives the measured latency at the "
             "smallest outstanding I/O and no fitted N*")
_NO_FIT = "no fitted knee is stated for this workload (the measured bound is)"


def knee_rows(knees: pd.DataFrame | None, qd: pd.DataFrame | None = None,
              points: pd.DataFrame | None = None) -> list[dict]:
    """knee_ceiling, knee_min_latency and knee_located per host x workload of the knee table, knee_plateau where the
    closed queue-depth points are given (``qd``: memstor.analysis.points.qd_points; judged against the host's
    run-to-run spread from ``points``, memstor.analysis.points.fio_summary, else the assumed one), and
    knee_sweep_agrees where ``points`` are given (a failed fit: each unchecked, with its note)."""
    if not has(knees, "host", "rw"):
        return []
    rows = []
    checks = (("knee_ceiling", "IOPS"), ("knee_min_latency", "µs"), ("knee_located", "% of sweep (log)"),
              *((("knee_plateau", "IOPS"),) if qd is not None else ()))
    for _, k in knees.iterrows():
        sweep = _sweep_agrees(k, points) if points is not None else None
        rows += [sweep] if sweep else []
        why = _no_fit_to_judge(k, sweep)
        if why:
            rows += [unchecked(k["host"], c, k["rw"], why, _KNEE, u, consequence=_NO_FIT) for c, u in checks]
            continue
        rows += [_ceiling(k), _min_latency(k), _located(k)]
        if qd is not None:
            rows.append(_plateau(k, qd, run_spread(points, str(k["host"]), str(k["rw"])), points))
    return rows


def _no_fit_to_judge(k: pd.Series, sweep: dict | None) -> str:
    """Why the fit checks judge nothing for this workload ('' where they judge): the fit failed, or the sweep it was
    fitted to is contradicted (knee_sweep_agrees failed: the gate withholds the fit, so a check of it would judge a
    fit the report does not state)."""
    if num(k.get("X_max_fit_iops")) is None:
        return f"the knee fit failed ({k.get('note') or 'no fitted X_max'})"
    if sweep is not None and sweep["status"] == FAIL:
        return "the sweep is contradicted: knee_sweep_agrees failed, so its fit is withheld and there is none to judge"
    return ""


def _sweep_agrees(k: pd.Series, points: pd.DataFrame) -> dict:
    """knee_sweep_agrees: the same one-job 4 KiB job measured by another fresh experiment at a depth inside the
    sweep (memstor.analysis.spread.sweep_beaten) is at most the spread's limit x the sweep's most."""
    host, rw, unit = k["host"], k["rw"], "x (elsewhere / sweep's most)"
    ratio, above, spread = sweep_beaten(points, str(host), str(rw))
    if ratio is None:
        return unchecked(host, "knee_sweep_agrees", rw, "no one-job 4 KiB point of this workload measured outside "
                         "the sweep at a depth inside its range: nothing to hold the sweep against", _KNEE, unit,
                         high=spread.limit, consequence="the knee is read from the sweep alone")
    other = one_job_elsewhere(points, str(host), str(rw))
    top = float(other["iops"].max()) / ratio
    split = not len(above) and ratio > spread.limit  # beyond, but that depth's own measurements disagree
    status = FAIL if len(above) else WARN if split else PASS
    # S11-bare 11: 0.76x was said 'within' a 1.16x spread: below the sweep's most, the check allows it
    where = (f"{'beyond' if len(above) or split else 'within'} {spread.short()}" if ratio >= 1 or len(above) or split
             else f"not above it (the check allows up to {spread.short()})")
    evidence = (f"the same one-job job measured {points_said(other)} outside the sweep, whose most is {n(top)} IOPS: "
                f"{ratio:.2f}x it, {where}{spread.beyond() if len(above) else ''}"
                + (_split_words(other, top, spread.limit) if split else ""))
    consequence = ("the sweep is not shown to be the target's: its knee fit (X_fit, R_min, N*) is not stated; its "
                   "measured points stay" if len(above) else "")
    return row(host, "knee_sweep_agrees", rw, status, ratio, spread.limit, unit, evidence, consequence, _KNEE,
               high=spread.limit)


def _split_words(other: pd.DataFrame, top: float, limit: float) -> str:
    """'; but at QD32 fio-block-size's 155,066 IOPS is within it: one run of that depth is above the
    sweep's limit and one is not, so they neither confirm nor contradict the sweep (not shown)' (thirteenth read
    S16-loop 4: 'those measurements disagree' of two runs config_agreement passed within 1.07x). IOPS."""
    hi = other.loc[other["iops"].idxmax()]
    same = other[(other["iodepth"] == hi["iodepth"]) & (other["iops"] <= limit * top)]
    within = " and ".join(f"{r.experiment}'s {n(r.iops)} IOPS" for r in same.itertuples())
    return (f"; but at QD{int(hi['iodepth'])} {within or 'another run'} {'are' if len(same) > 1 else 'is'} within "
            "it: one run of that depth is above the sweep's limit and one is not, so they neither confirm nor "
            "contradict the sweep (not shown)")


def _ceiling(k: pd.Series) -> dict:
    """knee_ceiling: the highest measured IOPS within [(fit - 1.96 SE) / 1.5, fit + 1.96 SE]: the sweep's most at any
    job count (X_best_iops, its QD32x4 point too: fourteenth read S17-loop 1, the report withheld the knee for a
    271,713-IOPS QD32x4 point above the band while this check, on the one-job 186,505, passed), else the one-job
    highest (X_max_meas_iops)."""
    fit, se, meas = num(k["X_max_fit_iops"]), num(k.get("X_max_fit_se_iops")) or 0.0, num(k.get("X_max_meas_iops"))
    best = num(k.get("X_best_iops"))
    at = k.get("X_best_at") if best is not None and (meas is None or best > meas) else None
    meas = max(meas or 0.0, best or 0.0) or meas
    assert fit is not None
    high, low = fit + Z95 * se, max(fit - Z95 * se, 0.0) / CEILING_ABOVE_DATA_MAX
    said = f"fitted X_max {n(fit)} ± {n(se)} IOPS (SE)"
    if meas is None or meas <= 0:
        return unchecked(k["host"], "knee_ceiling", k["rw"], f"{said}; no measured throughput to hold it against",
                         _KNEE, "IOPS", low=low, high=high)
    status, limit = band(meas, low, high)
    evidence = f"{said}; highest measured {n(meas)} IOPS" + (f" (at {at})" if isinstance(at, str) and at else "")
    if status == FAIL and limit == high:
        evidence += f", {n(100.0 * (meas / fit - 1))} % above the fit and beyond its 1.96 SE"
    elif status == FAIL:
        evidence += (f": the fit puts the ceiling at {n(fit / meas)}x every measurement (more than "
                     f"{n(CEILING_ABOVE_DATA_MAX)}x: extrapolated, not located)")
    return row(k["host"], "knee_ceiling", k["rw"], status, meas, limit, "IOPS", evidence,
               "" if status == PASS else _NOT_CEILING, _KNEE, low=low, high=high)


def _min_latency(k: pd.Series) -> dict:
    """knee_min_latency: R_min_fit > 0 and within [0.5 x measured - 1.96 SE, measured + 1.96 SE]."""
    fit, se, meas = num(k.get("R_min_fit_us")), num(k.get("R_min_fit_se_us")) or 0.0, num(k.get("R_min_meas_us"))
    said = f"fitted R_min {n(fit)} ± {n(se)} µs (SE); measured at the smallest outstanding I/O {n(meas)} µs"
    if fit is None or meas is None or meas <= 0:
        return unchecked(k["host"], "knee_min_latency", k["rw"], f"{said}: nothing to compare", _KNEE, "µs")
    low, high = max(R_MIN_BELOW_MEAS_MIN * meas - Z95 * se, 0.0), meas + Z95 * se
    status, limit = band(fit, low, high)
    why = ""
    if fit <= 0:
        status, limit, why = FAIL, 0.0, ": a minimum latency of zero or less is no latency"
    elif status == FAIL and limit == high:
        why = ": the fitted minimum latency is above a measured latency beyond its 1.96 SE"
    elif status == FAIL:
        why = f": the fitted minimum latency is below {n(R_MIN_BELOW_MEAS_MIN)}x the measured one beyond its 1.96 SE"
    evidence = said + why
    return row(k["host"], "knee_min_latency", k["rw"], status, fit, limit, "µs", evidence,
               "" if status == PASS else _NOT_RMIN, _KNEE, low=low, high=high)


def _sweep_range(k: pd.Series) -> tuple[float, float] | None:
    """(smallest, largest) outstanding I/O of the fit's sweep from its N_range text ('1-1024')."""
    try:
        lo, hi = (float(v) for v in str(k.get("N_range")).split("-"))
    except (TypeError, ValueError):
        return None
    return (lo, hi) if 0 < lo < hi else None


def log_position(value: float, lo: float, hi: float) -> float:
    """Where value lies along [lo, hi] on a log scale, % (0 at lo, 100 at hi; outside beyond them)."""
    return 100.0 * math.log(value / lo) / math.log(hi / lo)


def _located(k: pd.Series) -> dict:
    """knee_located: N* inside the sweep (position 0-100 %), its interval < 50 % of it and not zero-wide."""
    host, rw, rng = k["host"], k["rw"], _sweep_range(k)
    lo, hi, star = num(k.get("N_star_fit_ci_low")), num(k.get("N_star_fit_ci_high")), num(k.get("N_star_fit"))
    unit = "% of sweep (log)"
    if rng is None or star is None or star <= 0:
        why = f"no sweep range ({k.get('N_range')!r})" if rng is None else f"no positive N* ({n(star)})"
        return unchecked(host, "knee_located", rw, why, _KNEE, unit, low=0.0, high=KNEE_CI_SPAN_MAX_PCT,
                         consequence="the knee N* is not stated as a finding")
    pos = log_position(star, *rng)
    if not 0.0 <= pos <= 100.0:
        return row(host, "knee_located", rw, FAIL, pos, 0.0 if pos < 0 else 100.0, unit,
                   f"N* {n(star)} lies outside the sweep {k['N_range']} ({n(pos)} % along it, log scale): an "
                   "extrapolation, not a knee the points show", "the knee N* is not stated as a finding", _KNEE,
                   low=0.0, high=100.0)
    if lo is None or hi is None or lo <= 0:
        return row(host, "knee_located", rw, FAIL, None, KNEE_CI_SPAN_MAX_PCT, unit,
                   f"N* {n(star)} has no finite 95 % interval over the sweep {k['N_range']}",
                   "the knee N* is not stated as a finding", _KNEE, low=0.0, high=KNEE_CI_SPAN_MAX_PCT)
    span = 100.0 * math.log(hi / lo) / math.log(rng[1] / rng[0])
    status, limit = (FAIL if span >= KNEE_CI_SPAN_MAX_PCT else PASS), KNEE_CI_SPAN_MAX_PCT
    evidence = (f"N* {n(star)} with 95 % interval [{n(lo)}, {n(hi)}] is {n(span)} % as wide as the sweep "
                f"{k['N_range']} (log scale)")  # S12-bare9 4: a width, not the share of the sweep it overlaps
    consequence = "" if status == PASS else "the knee N* is not stated as a finding: its interval spans most of " \
                                            "the sweep"
    if span <= 0:
        status, limit = WARN, 0.0
        evidence += ": a zero-width interval is no interval (the fit had no residual to measure)"
        consequence = "N* is stated without an interval: read it as a point estimate only"
    return row(host, "knee_located", rw, status, span, limit, unit, evidence, consequence, _KNEE, low=0.0,
               high=KNEE_CI_SPAN_MAX_PCT)


def _past_knee(k: pd.Series, qd: pd.DataFrame, star: float) -> pd.DataFrame:
    """The closed queue-depth points of k's host x workload measured at more outstanding I/O than N* (star), with
    ``_low`` / ``_high``: the ends of each one's 95 % interval (its IOPS where it has none), IOPS."""
    if not has(qd, "host", "rw", "outstanding_io", "iops"):
        return pd.DataFrame()
    sel = qd[(qd["host"].astype(str) == str(k["host"])) & (qd["rw"] == k["rw"])]
    sel = sel[pd.to_numeric(sel["outstanding_io"], errors="coerce") > star]
    iops = pd.to_numeric(sel["iops"], errors="coerce")
    sel = sel[iops.notna()]
    iops = iops[iops.notna()]
    lo = pd.to_numeric(sel.get("iops_ci_low", pd.Series(index=sel.index, dtype=float)), errors="coerce")
    hi = pd.to_numeric(sel.get("iops_ci_high", pd.Series(index=sel.index, dtype=float)), errors="coerce")
    has_ci = lo.notna() & hi.notna() & (lo <= iops) & (iops <= hi) & (hi > lo)
    return sel.assign(_iops=iops, _low=lo.where(has_ci, iops), _high=hi.where(has_ci, iops), _ci=has_ci)


def _where(p: pd.Series) -> str:
    """'118,572 IOPS at N = 64 (QD64x1)' for one queue-depth point (with its interval when it has one)."""
    ci = f" [{n(p['_low'])}, {n(p['_high'])}]" if p["_ci"] else ""
    qd = f" (QD{int(p['iodepth'])}x{int(p['numjobs'])})" if num(p.get("iodepth")) and num(p.get("numjobs")) else ""
    return f"{n(p['_iops'])} IOPS{ci} at N = {float(p['outstanding_io']):,.0f}{qd}"


def _still_rising(k: pd.Series, qd: pd.DataFrame, spread: Spread) -> tuple[bool | None, str]:
    """(whether the sweep's last step gained more than the run-to-run spread's limit beyond the two points'
    intervals, and more than a pair measured twice disagreed (S12-bare 6: +25.5 % 'still gained' on p. 7 while p. 3
    called a +21.7 % step within that 1.54x not shown), the two points in words): the sweep's own points
    (``in_sweep`` where given) of k's host x workload, by N. None where the step gained more than the limit but
    no more than that disagreement: whether the sweep still rises is not shown."""
    sel = qd[(qd["host"].astype(str) == str(k["host"])) & (qd["rw"] == k["rw"])]
    if "in_sweep" in sel.columns:
        sel = sel[sel["in_sweep"].astype(bool)]
    pts = _past_knee(k, sel, 0.0).sort_values("outstanding_io").drop_duplicates("outstanding_io", keep="last")
    if len(pts) < 2:
        return False, ""
    prev, last = pts.iloc[-2], pts.iloc[-1]
    gain = f" (+{n(100.0 * (last['_iops'] / prev['_iops'] - 1))} %)"
    gained = bool(last["_low"] > spread.limit * prev["_high"])
    rising = None if gained and spread.within_disagreement(last["_iops"] / prev["_iops"]) else gained
    return rising, f"{_where(prev)} to {_where(last)}{gain}"


def _others_not_above(past: pd.DataFrame, high: float) -> str:
    """'; with other job counts, past the knee and not above it: 133,622 IOPS at N = 128 (QD32x4)' for the points
    outside the one-job sweep (``in_sweep`` False) whose IOPS stay at or under high (X_fit x 1.1), else '' (S6-bare
    M-7: the evidence named only the points above)."""
    if "in_sweep" not in past.columns:
        return ""
    quiet = past[~past["in_sweep"].fillna(True).astype(bool) & (past["_low"] <= high)].sort_values("outstanding_io")
    return ("; with other job counts, past the knee and not above it: "
            + "; ".join(_where(p) for _, p in quiet.iterrows())) if len(quiet) else ""


def _plateau(k: pd.Series, qd: pd.DataFrame, spread: Spread, points: pd.DataFrame | None = None) -> dict:
    """knee_plateau: no point past N* above X_fit x 1.1 beyond its interval; above it by more than the run-to-run
    spread (spread.limit): fail where the sweep still rises at its end by as much, else warn; above X_fit x 1.1 but
    within the spread: warn, not shown (the sweep cannot tell); the highest one reaching X_fit / 1.1 within its
    interval (else warn)."""
    host, rw = k["host"], k["rw"]
    fit, star = num(k.get("X_max_fit_iops")), num(k.get("N_star_fit"))
    assert fit is not None
    unit = "IOPS"
    if star is None or star <= 0:
        return unchecked(host, "knee_plateau", rw, f"no positive N* ({n(star)}) to look past", _KNEE, unit,
                         consequence="the knee N* is not stated as a finding")
    high, low = fit * PLATEAU_RATIO, fit / PLATEAU_RATIO
    past = _past_knee(k, qd, star)
    if past.empty:
        return unchecked(host, "knee_plateau", rw, f"no queue-depth point measured past N* {n(star)}: whether the "
                         "throughput levels off there is not shown", _KNEE, unit, low=low, high=high,
                         consequence="N* rests on the fit alone: read it with care")
    top, reach = float(past["_low"].max()), float(past["_high"].max())
    said = f"X_fit {n(fit)} IOPS, N* {n(star)}"
    rising, step = _still_rising(k, qd, spread)
    between = flat_before_deepest(points, str(host), str(rw))[0] if rising else None
    flat = ""
    if between is not None and len(between):  # S17-1cpu 1: the same job between the last two depths: no gain past it
        flat = (f"; the sweep's own last step, {step}, rose, but the same one-job job between them "
                f"({points_said(between)}) leaves no gain past it beyond {spread.short()}")
        rising, step = False, ""
    if top > high and (rising or top > fit * spread.limit):
        out = _beyond(k, past, spread, points, step if rising else "",
                      f"{step}, within {spread.disagreement()}" if rising is None else "")
        return {**out, "evidence": out["evidence"] + flat}
    if top > high:
        return row(host, "knee_plateau", rw, WARN, top, high, unit,
                   f"past the knee ({said}): {_over(past, fit, high)}, more than {n(100.0 * (PLATEAU_RATIO - 1))} % "
                   f"above X_fit but within {spread.words()}: whether the sweep levels off at X_fit is not shown"
                   f", the sweep cannot tell{flat}", "N* = X_fit x R_min is the fit's: the points past it neither "
                   "confirm nor contradict its ceiling", _KNEE, low=low, high=high)
    if reach < low:
        evidence = (f"nothing measured past the knee reaches the fitted ceiling ({said}): at most {n(reach)} IOPS, "
                    f"{n(100.0 * (1 - reach / fit))} % under X_fit")
        return row(host, "knee_plateau", rw, WARN, reach, low, unit, evidence, "X_fit and N* are extrapolated past "
                   "the points: read them as estimates the sweep does not show", _KNEE, low=low, high=high)
    evidence = (f"{len(past)} point{'s' if len(past) != 1 else ''} past the knee ({said}): the highest "
                f"{n(float(past['_iops'].max()))} IOPS, within {n(100.0 * (PLATEAU_RATIO - 1))} % of X_fit or its "
                "interval")
    return row(host, "knee_plateau", rw, PASS, top, high, unit, evidence, "", _KNEE, low=low, high=high)


def _over(past: pd.DataFrame, fit: float, above: float) -> str:
    """'136,314 IOPS at N = 128 (QD32x4), 38.1 % above' for each point past the knee whose interval lies above
    `above` (IOPS), by N."""
    over = past[past["_low"] > above].sort_values("outstanding_io")
    return "; ".join(f"{_where(p)}, {n(100.0 * (p['_iops'] / fit - 1))} % above" for _, p in over.iterrows())


def _beyond(k: pd.Series, past: pd.DataFrame, spread: Spread, points: pd.DataFrame | None, step: str,
            unsure: str = "") -> dict:
    """knee_plateau where a point past N* lies above X_fit x 1.1 and either the sweep's last step (`step`, '' where
    it did not) gained more than the run-to-run spread — fail: still rising — or the point lies above X_fit by
    more than the spread — warn: levelled off above X_fit (R-1cpu M8: the spread measured, else the assumed one,
    said as such). The job count is named as the reason only where no one-job point elsewhere is above too (R-1cpu
    M7). ``unsure``: the last step in words where it lay within a measured disagreement: the sweep is above the fit's
    ceiling, and whether it levels off there is not shown (S12-bare 6)."""
    host, rw, fit, star = k["host"], k["rw"], float(k["X_max_fit_iops"]), float(k["N_star_fit"])
    high, low = fit * PLATEAU_RATIO, fit / PLATEAU_RATIO
    limit = high if step else fit * spread.limit
    over = past[past["_low"] > limit]
    with_ci = int(over["_ci"].sum())
    beyond = ("no interval on " + ("this point" if len(over) == 1 else "these points") if not with_ci else
              "by the whole 95 % interval" + ("" if with_ci == len(over) else " where a point has one"))
    said = f"X_fit {n(fit)} IOPS, N* {n(star)}"
    worst = float(over["_iops"].max()) / fit if len(over) else 0.0
    apart = (f", and by more than {spread.disagreement()}" if not step and spread.disagreed_ratio is not None
             and worst > spread.disagreed_ratio else "")
    by = (f"more than {n(100.0 * (PLATEAU_RATIO - 1))} % above X_fit" if step else
          f"beyond X_fit by more than {spread.short()}{spread.beyond()}{apart}")
    above = f"{_over(past, fit, limit)} ({by}; {beyond})"
    if step:
        return row(host, "knee_plateau", rw, FAIL, float(over["_low"].max()), limit, "IOPS",
                   f"throughput keeps rising past the fitted ceiling (X_fit {n(fit)} IOPS): {above}; the sweep's last "
                   f"step, {step}, "
                   f"still gained more than {spread.short()}{spread.beyond()}{_others_not_above(past, high)}",  # S20-bare 4
                   "the knee N* is not stated as a finding: the sweep has not levelled off where the fit puts its "
                   "ceiling", _KNEE, low=low, high=high)
    others = "in_sweep" in over.columns and not over["in_sweep"].fillna(True).astype(bool).any()
    where = (f"the sweep is above the fit's ceiling; whether it levels off is not shown (its last step, {unsure})"
             if unsure else "the sweep levels off above the fit's ceiling")
    if others:
        one = one_job_elsewhere(points, str(host), str(rw))
        one = one[one["iops"] > limit]
        torn = one[[not disagreeing(points, str(host), r).empty for _, r in one.iterrows()]]
        one = one.drop(index=torn.index)  # R-1cpu B1 (fifth read): a run its own twin disagrees with is no evidence
        where = ("only a point with another job count, outside the one-job sweep the fit saw, is above the fit's "
                 "ceiling by more than the plateau rule's margin" if one.empty else f"a point with another job count is above the fit's ceiling, and so is "
                 f"the same one-job job measured elsewhere ({points_said(one)}, "
                 f"{float(one['iops'].max()) / fit:.2f}x X_fit): the job count does not explain it; the one-job "
                 "sweep's plateau is not shown to be the target's")
        if one.empty and not torn.empty:
            where = ("a point with another job count is above the fit's ceiling; the same one-job job measured "
                     f"above it elsewhere ({points_said(torn)}) disagrees with its own other run (config_agreement "
                     "failed), so whether the job count explains it is not shown")
    return row(host, "knee_plateau", rw, WARN, float(over["_low"].max()), limit, "IOPS", f"{where} ({said}): {above}",
               "N* = X_fit x R_min is low by as much (stated with these numbers; the closed-system bound uses the "
               "measured X_best)", _KNEE, low=low, high=high)


# ------------------------------------------------------------------------------------ held-out check


def holdout_rows(fits: dict | None, section: str, label, failed: dict | None = None) -> list[dict]:
    """curve_holdout per fitted curve of `fits` ({key: CurveFit}); label(key) -> (host, subject); failed: {key:
    (points that failed their quality gate, points)}: a curve more than half of whose points failed is not checked
    (R-def 26: a check over failed points passes nothing: 2.82 % and 0.43 % 'passed' on curves of 6 of 6 failed
    points; bare 0.75 % on 5 of 6)."""
    rows = []
    for key, cf in sorted((fits or {}).items(), key=lambda kv: str(kv[0])):
        if not cf.model.fitted:
            continue
        host, subject = label(key)
        bad, pts = (failed or {}).get(key, (0, 0))
        if pts and 2 * bad > pts:
            rows.append(unchecked(host, "curve_holdout", f"memory curve {subject.split(',')[0]}", f"{bad} of the "
                                  f"curve {subject}'s {pts} points failed the "
                                  "memory gate: a model fitted to them predicts nothing checked", section, "% error",
                                  consequence="the model's curve describes failed points only", low=0.0,
                                  high=HOLDOUT_MAX_PCT))
            continue
        rows.append(_holdout(host, subject, num(cf.holdout_error_pct), int(cf.holdout_points),
                             cf.holdout_note or f"the model fitted below {HOLDOUT_SHARE:.0%} predicting the points "
                             "above", section))
    return rows


def gate_failed_points(mem: pd.DataFrame | None) -> dict:
    """{(host, curve): (points that failed the memory gate, points)} of the memory_fit table."""
    need = {"host", "curve", "gate_failed_points", "points"}
    if mem is None or not need <= set(mem.columns):
        return {}
    return {(r["host"], r["curve"]): (int(num(r["gate_failed_points"]) or 0), int(num(r["points"]) or 0))
            for _, r in mem.iterrows()}


def _holdout(host, subject: str, err: float | None, pts: int, how: str, section: str) -> dict:
    """One curve_holdout row: err (mean absolute % error over pts held-out points) within [0, 25]."""
    bounds = {"low": 0.0, "high": HOLDOUT_MAX_PCT}
    if err is None or err < 0 or pts < 1:
        why = f"no held-out error: {how}" if err is None or pts < 1 else \
            f"a negative mean absolute error ({n(err)} %) is a computation fault"
        return unchecked(host, "curve_holdout", subject, why, section, "% error", consequence="the model's curve is "
                         "shown only over its fit range, not as a prediction beyond it", **bounds)
    status, limit = band(err, None, None, warn_low=0.0, warn_high=HOLDOUT_MAX_PCT)
    big = f" (more than {n(HUGE_PCT)} %: the prediction runs up to the model's peak)" if err > HUGE_PCT else ""
    evidence = f"held-out error {n(err)} %{big} over {pts} top point{'s' if pts != 1 else ''} ({how})"
    return row(host, "curve_holdout", subject, status, err, limit, "% error", evidence,
               "" if status == PASS else "the model does not predict the curve beyond its fit range: its peak "
               "and crossings are descriptions of the fitted points only", section, **bounds)
