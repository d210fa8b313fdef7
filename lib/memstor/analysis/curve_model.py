"""The open-queue curve model (pure maths): R = R0 + a · ρ / (1 − ρ), ρ = X / peak, fitted by least squares
on relative residuals, with 95 % profile-likelihood intervals and an identifiability rule.

X is a throughput (any unit: MB/s, IOPS), R a mean latency (any unit: ns, µs); the functions never look at
units. :mod:`memstor.analysis.curves` decides which points of a curve enter the fit (those below the
plateau and outside a hook) and the bound ``cap`` on the peak.

**The fit** (:func:`fit_open_queue`) minimises the relative residuals (noise proportional to the latency).
On a saturated curve the peak cannot lie above the measured plateau (nor, after a hook, above the measured
maximum): it is bounded there (``cap``). For a fixed ρ-scale the model is linear in (R0, a), so every 95 %
interval is a *profile-likelihood* interval: the set of values whose best fit has a residual sum of
squares within SS_min · (1 + F(1, m − 3) / (m − 3)) (m points). These are exact for linear models and have
close to nominal coverage here (tests: 200 seeds with 2 % noise), and they show when the data do not bound
a parameter. The peak is **identifiable** only when its interval is bounded and does not reach beyond
:data:`PEAK_FAR_FACTOR` × the highest throughput measured; otherwise peak and a are not given (NaN) and
``reason`` says why. Fewer than :data:`MIN_FIT_POINTS` points get no model at all.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

#: Fewest points in the fit range for the 3-parameter model (2 degrees of freedom left).
MIN_FIT_POINTS = 5
#: A peak whose 95 % interval reaches beyond this multiple of the highest measured throughput is not
#: identifiable (an extrapolation far outside the data).
PEAK_FAR_FACTOR = 1.5
#: Confidence level of every interval.
CONFIDENCE = 0.95

#: Grid of the top point's utilisation ρ_top = X_top / peak used to start every profile search
#: (uniform in −log(1 − ρ_top): dense near ρ_top = 1, where the model bends fastest).
_T_MAX = 18.0
_GRID = 240


# --------------------------------------------------------------------------------------------- model


def open_queue_latency(x, r0: float, a: float, peak: float) -> np.ndarray:
    """Open-queue latency R0 + a · ρ / (1 − ρ), ρ = x / peak (x and peak in one throughput unit; the
    result in R0's unit). x at or above the peak gives inf."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = r0 + a * x / (peak - x)
    return np.where(x < peak, out, np.inf)



# ------------------------------------------------------------------------------------ profile fitting


def _f_threshold(ss_min: float, m: int, p: int = 3) -> float:
    """Residual sum of squares bounding a 95 % profile-likelihood interval of one parameter."""
    from scipy import stats  # slow first import (1.7 s measured): only when a curve is fitted

    dof = m - p
    return ss_min * (1.0 + float(stats.f.ppf(CONFIDENCE, 1, dof)) / dof)


class _Profile:
    """Weighted least squares of y = R0 + b · h(c), h = x / (1 − c·x) (b = a / peak, c = 1 / peak) with
    relative weights 1 / y², on points x (throughput) and y (latency). c ranges over
    [c_lo, c_hi): c_lo = 1 / cap (0 without a cap: the straight-line limit), c_hi = 1 / x_top."""

    def __init__(self, x, y, cap: float, x_top: float):
        self.x = np.asarray(x, dtype=float)
        self.y = np.asarray(y, dtype=float)
        self.w = 1.0 / self.y**2
        self.m = len(self.x)
        self.x_top = float(x_top)
        self.s_lo = 0.0 if not math.isfinite(cap) else min(self.x_top / cap, 1.0)
        t_lo = -math.log1p(-self.s_lo) if self.s_lo < 1.0 else _T_MAX
        self.t_grid = np.linspace(t_lo, _T_MAX, _GRID)

    # utilisation of the top point s = c · x_top, parametrised by t = −log(1 − s)
    def c_of_t(self, t):
        return -np.expm1(-np.asarray(t, dtype=float)) / self.x_top

    def h(self, c):
        c = np.atleast_1d(np.asarray(c, dtype=float))[:, None]
        return self.x[None, :] / (1.0 - c * self.x[None, :])

    def free(self, t):
        """(R0, b, SS) per t with R0 and b free (b >= 0)."""
        h = self.h(self.c_of_t(t))
        w, y = self.w, self.y
        sw, sy = w.sum(), (w * y).sum()
        sh, shh, shy = (w * h).sum(1), (w * h * h).sum(1), (w * h * y).sum(1)
        det = sw * shh - sh * sh
        with np.errstate(divide="ignore", invalid="ignore"):
            b = np.where(det > 0, (sw * shy - sh * sy) / det, 0.0)
        b = np.where(np.isfinite(b) & (b > 0), b, 0.0)
        r0 = (sy - b * sh) / sw
        ss = (w * (y - r0[:, None] - b[:, None] * h) ** 2).sum(1)
        return r0, b, ss

    def fixed_r0(self, t, r0: float):
        """(b, SS) per t with R0 fixed."""
        h = self.h(self.c_of_t(t))
        w, y = self.w, self.y
        with np.errstate(divide="ignore", invalid="ignore"):
            b = (w * h * (y - r0)).sum(1) / (w * h * h).sum(1)
        b = np.where(np.isfinite(b) & (b > 0), b, 0.0)
        ss = (w * (y - r0 - b[:, None] * h) ** 2).sum(1)
        return b, ss

    def fixed_a(self, t, a: float):
        """(R0, SS) per t with a fixed (a · ρ/(1 − ρ) = a · c·x / (1 − c·x))."""
        c = self.c_of_t(t)
        g = self.h(c) * np.atleast_1d(c)[:, None]
        w, y = self.w, self.y
        r0 = (w * (y - a * g)).sum(1) / w.sum()
        ss = (w * (y - r0[:, None] - a * g) ** 2).sum(1)
        return r0, ss

    def minimise(self, fn) -> tuple[float, float]:
        """(t, SS) minimising fn(t) -> SS array over the grid, refined between the grid's neighbours."""
        from scipy.optimize import minimize_scalar  # slow first import: only when a curve is fitted

        ss = fn(self.t_grid)
        i = int(np.nanargmin(ss))
        lo, hi = self.t_grid[max(i - 1, 0)], self.t_grid[min(i + 1, len(self.t_grid) - 1)]
        if hi > lo:
            res = minimize_scalar(lambda t: float(fn(np.array([t]))[0]), bounds=(lo, hi), method="bounded",
                                  options={"xatol": 1e-7})
            if res.fun < ss[i]:
                return float(res.x), float(res.fun)
        return float(self.t_grid[i]), float(ss[i])


def _interval(prof_ss, best: float, thresh: float, lo_limit: float, hi_limit: float,
              scale: float) -> tuple[float, float]:
    """Profile interval {v : prof_ss(v) <= thresh} around `best`, searched outwards in steps growing
    from `scale`; a side that stays below the threshold up to its limit gives that limit (inf when the
    limit is inf: unbounded)."""
    from scipy.optimize import brentq  # slow first import: only when a curve is fitted

    def side(direction: int, limit: float) -> float:
        step = scale
        inner = best
        for _ in range(80):
            outer = best + direction * step
            if (direction > 0 and outer >= limit) or (direction < 0 and outer <= limit):
                if not math.isfinite(limit):
                    return limit
                if prof_ss(limit) <= thresh:
                    return limit
                outer = limit
            if prof_ss(outer) > thresh:
                if prof_ss(inner) > thresh:  # the profile's minimum was not found to the threshold's precision
                    return math.nan          # (e.g. noise-free points): no interval rather than a wrong one
                return float(brentq(lambda v: prof_ss(v) - thresh, min(inner, outer), max(inner, outer),
                                    xtol=1e-10 * max(abs(best), 1.0), maxiter=200))
            if outer == limit:
                return limit
            inner = outer
            step *= 2.0
        return direction * math.inf

    return side(-1, lo_limit), side(+1, hi_limit)


@dataclass
class OpenQueueFit:
    """The open-queue model R = R0 + a · ρ/(1 − ρ), ρ = X / peak, fitted to one curve's fit range, with
    95 % profile-likelihood intervals (units: R0, a in the latency unit; peak in the throughput unit).

    ci bounds are NaN where not computable; peak_ci_high is inf when unbounded and equals ``cap`` when
    the interval reaches the measured ceiling (``peak_at_cap``). a and peak are NaN when not
    identifiable (``identifiable`` False, ``reason`` says why); R0 is given whenever the model was
    fitted. fit_rms_pct: root-mean-square relative residual (%)."""

    points: int
    r0: float = math.nan
    r0_ci_low: float = math.nan
    r0_ci_high: float = math.nan
    a: float = math.nan
    a_ci_low: float = math.nan
    a_ci_high: float = math.nan
    peak: float = math.nan
    peak_ci_low: float = math.nan
    peak_ci_high: float = math.nan
    peak_at_cap: bool = False
    cap: float = math.inf
    identifiable: bool = False
    reason: str = ""
    fit_rms_pct: float = math.nan
    fitted: bool = False
    # the best-fit values even where not identifiable (diagnostics only: tables, text and figures never show them)
    est_r0: float = math.nan
    est_a: float = math.nan
    est_peak: float = math.nan


def _estimate(p: _Profile) -> tuple[float, float, float, float]:
    """(R0, a, peak, SS) of the best fit (a = 0, peak = inf when latency does not rise)."""
    t, ss = p.minimise(lambda t: p.free(t)[2])
    r0, b, _ = p.free(np.array([t]))
    c = float(p.c_of_t(t))
    r0, b = float(r0[0]), float(b[0])
    if b <= 0 or c <= 0:
        return r0, 0.0 if b <= 0 else math.inf, math.inf, ss
    return r0, b / c, 1.0 / c, ss


def fit_open_queue(x, r, cap: float = math.inf, x_top: float | None = None,
                   x_ref: float | None = None, where: str = "") -> OpenQueueFit:
    """Fit R = R0 + a · x / (peak − x) to the points (x throughput, r latency) of a curve's fit range.

    cap: the highest value the peak may take (the measured plateau or maximum; inf = none); x_top: the
    lowest value the peak may take (default: the highest x given; pass the curve's highest throughput
    when predicting points beyond the fit range); x_ref: the highest throughput measured on the whole
    curve, for the "far above" rule (default x_top); where: how the reasons name the points (``below
    the plateau``). Fewer than MIN_FIT_POINTS points: not fitted, the reason says so."""
    x = np.asarray(x, dtype=float)
    r = np.asarray(r, dtype=float)
    ok = np.isfinite(x) & np.isfinite(r) & (x > 0) & (r > 0)
    x, r = x[ok], r[ok]
    m = len(x)
    out = OpenQueueFit(points=m, cap=cap)
    where = f" {where}" if where else ""
    if m < MIN_FIT_POINTS:
        out.reason = f"only {m} point{'s' if m != 1 else ''}{where} (the model needs {MIN_FIT_POINTS})"
        return out
    if len(np.unique(x)) < 3:
        out.reason = f"fewer than 3 distinct throughputs{where}"
        return out
    x_top = float(x.max()) if x_top is None else float(x_top)
    x_ref = x_top if x_ref is None else float(x_ref)
    p = _Profile(x, r, cap, x_top)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r0, a, peak, ss_min = _estimate(p)
        out.fitted = True
        out.est_r0, out.est_a, out.est_peak = r0, a, peak
        out.fit_rms_pct = 100.0 * math.sqrt(ss_min / m)
        if ss_min <= 0:
            ss_min = 1e-300
        thresh = _f_threshold(ss_min, m)
        r_scale = max(float(np.std(r)), 1e-3 * float(np.mean(r)))
        # R0: profile over (b, c)
        def prof_r0(v):
            return p.minimise(lambda t: p.fixed_r0(t, v)[1])[1]
        out.r0 = r0
        out.r0_ci_low, out.r0_ci_high = _interval(prof_r0, r0, thresh, 0.0, math.inf, 0.05 * r_scale)
        # does latency rise at all? a flat line within the band: nothing else is identifiable
        flat = float((p.w * (p.y - (p.w * p.y).sum() / p.w.sum()) ** 2).sum())
        if a <= 0 or flat <= thresh:
            out.reason = (f"latency does not rise with throughput{where} (a flat line fits within the 95 % "
                          "band)")
            return out
        # peak: profile over c = 1 / peak (closed form in R0, b)
        def prof_t(t):
            return float(p.free(np.array([t]))[2][0])
        t_hat = -math.log1p(-min(x_top / peak, 1 - 1e-15))
        t_lo, t_hi = _interval(prof_t, t_hat, thresh, p.t_grid[0], _T_MAX, 0.05)
        peak_hi = math.inf if t_lo <= 0 else x_top / -math.expm1(-t_lo)
        peak_lo = x_top / -math.expm1(-t_hi) if t_hi > 0 else math.inf
        out.peak_ci_low = min(peak_lo, cap)
        out.peak_ci_high = min(peak_hi, cap)
        out.peak_at_cap = bool(math.isfinite(cap) and peak_hi >= cap * (1 - 1e-9))
        if not math.isfinite(out.peak_ci_high):
            out.peak_ci_high = math.nan
            out.reason = ("the 95 % interval of the peak is unbounded above (a straight line fits these points "
                          "about as well)")
            return out
        if out.peak_ci_high > PEAK_FAR_FACTOR * x_ref:
            out.reason = (f"the 95 % interval of the peak reaches {out.peak_ci_high:,.0f}, more than "
                          f"{PEAK_FAR_FACTOR:g} × the highest throughput measured ({x_ref:,.0f})")
            return out
        # a: profile over (R0, c)
        def prof_a(v):
            return p.minimise(lambda t: p.fixed_a(t, v)[1])[1]
        out.a_ci_low, out.a_ci_high = _interval(prof_a, a, thresh, 0.0, math.inf, 0.05 * max(a, r_scale))
        out.a, out.peak = a, min(peak, cap)
        out.identifiable = math.isfinite(out.a_ci_high)
        if not out.identifiable:
            out.a, out.peak = math.nan, math.nan
            out.a_ci_high = math.nan
            out.reason = "the 95 % interval of a is unbounded"
    return out
