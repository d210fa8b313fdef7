"""Fit checks: the knee fit lies within its data (``knee_ceiling``, ``knee_min_latency``), its N* interval
places the knee (``knee_located``), per host x workload of memstor.analysis.synthesis.knee_fits; and every
curve model's held-out prediction error as a number (``curve_holdout``, per fitted curve of the
storage_fit / memory_fit tables, from their memstor.analysis.curves.CurveFit objects)."""

from __future__ import annotations

import math

import pandas as pd

from memstor.analysis.curves import HOLDOUT_SHARE
from memstor.analysis.validity.rows import FAIL, PASS, WARN, has, n, num, row

#: Standard errors as a 95 % band (normal): a fit "lies within its data" up to this many SE.
Z95 = 1.96
#: The knee's 95 % interval covering this share of the sweep (log scale, %) or more does not place the knee.
KNEE_CI_SPAN_MAX_PCT = 50.0
#: Mean held-out error (%) above which the model does not describe the curve beyond its fit range: near
#: saturation a quarter of the latency is the difference between two queue depths.
HOLDOUT_MAX_PCT = 25.0
#: A held-out error beyond this (%) means the point prediction ran into the model's pole: said in words.
HUGE_PCT = 1000.0

_KNEE = "queue_depth"
_NOT_CEILING = ("the fitted X_max is not the ceiling: the report gives the measured highest throughput as the "
                "ceiling and does not state the fitted one or the N* it gives")


def knee_rows(knees: pd.DataFrame | None) -> list[dict]:
    """knee_ceiling, knee_min_latency and knee_located per host x workload with a fit."""
    if not has(knees, "host", "rw", "X_max_fit_iops"):
        return []
    rows = []
    for _, k in knees.iterrows():
        if num(k.get("X_max_fit_iops")) is None:
            continue
        rows += [_ceiling(k), _min_latency(k)]
        located = _located(k)
        if located:
            rows.append(located)
    return rows


def _ceiling(k: pd.Series) -> dict:
    fit, se, meas = num(k["X_max_fit_iops"]), num(k.get("X_max_fit_se_iops")) or 0.0, num(k.get("X_max_meas_iops"))
    assert fit is not None
    top = fit + Z95 * se
    ok = meas is None or meas <= top
    evidence = (f"fitted X_max {n(fit)} ± {n(se)} IOPS (SE); highest measured {n(meas)} IOPS"
                + ("" if ok or meas is None else f", {n(100.0 * (meas / fit - 1))} % above the fit and beyond its "
                                                   "1.96 SE"))
    return row(k["host"], "knee_ceiling", k["rw"], PASS if ok else FAIL, meas, top, "IOPS", evidence,
               "" if ok else _NOT_CEILING, _KNEE)


def _min_latency(k: pd.Series) -> dict:
    fit, se, meas = num(k.get("R_min_fit_us")), num(k.get("R_min_fit_se_us")) or 0.0, num(k.get("R_min_meas_us"))
    low = None if fit is None else fit - Z95 * se
    ok = low is None or meas is None or low <= meas
    evidence = (f"fitted R_min {n(fit)} ± {n(se)} µs (SE); measured at the smallest outstanding I/O {n(meas)} µs"
                + ("" if ok else ": the fitted minimum latency is above a measured latency"))
    consequence = "" if ok else ("the fitted R_min is not the unloaded latency: the report gives the measured "
                                 "latency at the smallest outstanding I/O and no fitted N*")
    return row(k["host"], "knee_min_latency", k["rw"], PASS if ok else FAIL, low, meas, "µs", evidence,
               consequence, _KNEE)


def _sweep_range(k: pd.Series) -> tuple[float, float] | None:
    """(smallest, largest) outstanding I/O of the fit's sweep from its N_range text ('1-1024')."""
    try:
        lo, hi = (float(v) for v in str(k.get("N_range")).split("-"))
    except (TypeError, ValueError):
        return None
    return (lo, hi) if 0 < lo < hi else None


def _located(k: pd.Series) -> dict | None:
    rng = _sweep_range(k)
    if rng is None:
        return None
    lo, hi, star = num(k.get("N_star_fit_ci_low")), num(k.get("N_star_fit_ci_high")), num(k.get("N_star_fit"))
    if lo is None or hi is None or lo <= 0:
        return row(k["host"], "knee_located", k["rw"], FAIL, None, KNEE_CI_SPAN_MAX_PCT, "% of sweep (log)",
                   f"N* {n(star)} has no finite 95 % interval over the sweep {k['N_range']}",
                   "the knee N* is not stated as a finding", _KNEE)
    span = 100.0 * math.log(hi / lo) / math.log(rng[1] / rng[0])
    ok = span < KNEE_CI_SPAN_MAX_PCT
    evidence = (f"N* {n(star)} with 95 % interval [{n(lo)}, {n(hi)}] covers {n(span)} % of the sweep "
                f"{k['N_range']} (log scale)")
    return row(k["host"], "knee_located", k["rw"], PASS if ok else FAIL, span, KNEE_CI_SPAN_MAX_PCT,
               "% of sweep (log)", evidence, "" if ok else "the knee N* is not stated as a finding: its interval "
               "spans most of the sweep", _KNEE)


# ------------------------------------------------------------------------------------ held-out check


def holdout_rows(fits: dict | None, section: str, label) -> list[dict]:
    """curve_holdout per fitted curve of `fits` ({key: CurveFit}); label(key) -> (host, subject)."""
    rows = []
    for key, cf in sorted((fits or {}).items(), key=lambda kv: str(kv[0])):
        if not cf.model.fitted:
            continue
        host, subject = label(key)
        err, pts = num(cf.holdout_error_pct), int(cf.holdout_points)
        how = cf.holdout_note or f"the model fitted below {HOLDOUT_SHARE:.0%} predicting the points above"
        if err is None:
            rows.append(row(host, "curve_holdout", subject, WARN, None, HOLDOUT_MAX_PCT, "% error",
                            f"no held-out error: {how}", "the model's curve is shown only over its fit range, "
                            "not as a prediction beyond it", section))
            continue
        ok = err <= HOLDOUT_MAX_PCT
        big = f" (more than {n(HUGE_PCT)} %: the prediction runs up to the model's peak)" if err > HUGE_PCT else ""
        evidence = f"held-out error {n(err)} %{big} over {pts} top point{'s' if pts != 1 else ''} ({how})"
        rows.append(row(host, "curve_holdout", subject, PASS if ok else WARN, err, HOLDOUT_MAX_PCT, "% error",
                        evidence, "" if ok else "the model does not predict the curve beyond its fit range: "
                        "its peak and crossings are descriptions of the fitted points only", section))
    return rows
