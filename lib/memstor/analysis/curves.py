"""Latency–throughput curves, memory and storage alike: saturation, the open-queue model with 95 %
intervals, identifiability, a held-out check and model-free curve-family metrics (pure).

**A curve** is a set of points, one per setting of a load knob, each with a throughput X and a mean
latency R: a memory loaded-latency curve (inject delay; X = bandwidth in MB/s, R in ns), a storage
queue-depth sweep (outstanding I/O N; X in IOPS, R in µs) or an open-loop storage curve (offered rate;
X = achieved IOPS, R in µs). The core functions take the points ordered from the lightest load to the
heaviest and never look at units; the table builders (:func:`memory_fit_table`,
:func:`storage_fit_table`) put units in the column names.

**Saturation** (:func:`saturation`). A *hook*: at the heaviest loads, each step to a heavier load makes
throughput fall by more than :data:`TOL` (2 %) while latency rises — those points are beyond the
maximum and never enter a fit. The *plateau*: from the heaviest point outside a hook towards lighter loads,
the run of points whose throughput changes by less than :data:`TOL` from one point to the next; with
at least :data:`PLATEAU_MIN_POINTS` points (one flat step can be chance) the curve is ``saturated`` and
``x_sat`` is the plateau's mean throughput. A plateau is the closed-loop limit of the requests a client
can keep in flight (Little's law: N = X · R), which an open-queue form cannot represent.

**The open-queue model** R = R0 + a · ρ / (1 − ρ), ρ = X / peak (:func:`fit_open_queue`) is fitted
only to the points below the plateau (and not in a hook), by least squares on relative residuals
(noise proportional to the latency). On a saturated curve the peak cannot lie above the measured
plateau (nor, after a hook, above the measured maximum): it is bounded there. For a fixed ρ-scale the
model is linear in (R0, a), so every 95 % interval is a *profile-likelihood* interval: the set of
values whose best fit has a residual sum of squares within SS_min · (1 + F(1, m − 3) / (m − 3)) (m
points). These are exact for linear models and have close to nominal coverage here (tests: 200 seeds
with 2 % noise), and they show when the data do not bound a parameter. The peak is **identifiable**
only when its interval is bounded and does not reach beyond :data:`PEAK_FAR_FACTOR` × the highest
throughput measured; otherwise peak and a are not given (NaN) and ``reason`` says why. A curve with
fewer than :data:`MIN_FIT_POINTS` points in the fit range gets no model at all.

**Held-out check** (:func:`holdout`): the model fitted to the points of the fit range below
:data:`HOLDOUT_SHARE` (80 %) of its highest throughput predicts the latency of the points above;
``holdout_error_pct`` is the mean absolute error of that prediction in % of the measured latency.

**Curve-family metrics** (model-free, on the measured points; hook points left out): X_max (highest
throughput measured), R(X_max) / R0, and the throughput where the measured latency reaches 1.25 × R0
and 2 × R0 for good (:func:`crossing`: linear interpolation between the two measured points around the
last crossing; not reached = censored: NaN with the reason, never extrapolated).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from memstor.core.schema import truthy

#: Relative throughput change (point to point) below which two points are on one plateau; also the
#: throughput drop that makes a hook.
TOL = 0.02
#: Fewest points of a plateau for a curve to be called saturated.
PLATEAU_MIN_POINTS = 3
#: Fewest points in the fit range for the 3-parameter model (2 degrees of freedom left).
MIN_FIT_POINTS = 5
#: Relative RMS residual (%) above which the notes say the open-queue form fits the points poorly.
POOR_FIT_PCT = 10.0
#: A peak whose 95 % interval reaches beyond this multiple of the highest measured throughput is not
#: identifiable (an extrapolation far outside the data).
PEAK_FAR_FACTOR = 1.5
#: The held-out check fits below this share of the fit range's highest throughput.
HOLDOUT_SHARE = 0.8
#: Confidence level of every interval.
CONFIDENCE = 0.95
#: Latency multiples of R0 at which the throughput is read off the measured curve.
LEVELS = (1.25, 2.0)
#: Role of a point in its curve: in the model's fit range, on the plateau (or at its level), in a hook,
#: or the maximum of a curve that hooks without a plateau (its limit).
FIT, PLATEAU, HOOK, LIMIT = "fit", "plateau", "hook", "limit"

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


# ---------------------------------------------------------------------------------------- saturation


@dataclass
class Saturation:
    """Where a curve saturates (points ordered from the lightest load to the heaviest).

    role: FIT / PLATEAU / HOOK / LIMIT per point (PLATEAU: the flat run, and any lighter point already at
    its level, within TOL of x_sat or above; LIMIT: the maximum of a curve that hooks without a plateau);
    saturated: a plateau of >= PLATEAU_MIN_POINTS points; x_sat: the plateau run's mean throughput (NaN
    when not saturated); plateau_points: points of the run (0 when not saturated); hook: any hook point;
    hook_points: their count; x_max: highest throughput measured; r_at_x_max: the latency of that point;
    cap: the highest value the model's peak may take (x_sat when saturated, else x_max after a hook,
    else inf). Every FIT point lies below the cap."""

    role: np.ndarray
    saturated: bool
    x_sat: float
    plateau_points: int
    hook: bool
    hook_points: int
    x_max: float
    r_at_x_max: float
    cap: float


def saturation(x, r, tol: float = TOL, min_points: int = PLATEAU_MIN_POINTS) -> Saturation:
    """Hook and plateau of one curve; x (throughput) and r (latency) ordered from the lightest load to
    the heaviest. See the module docstring for the rules."""
    x = np.asarray(x, dtype=float)
    r = np.asarray(r, dtype=float)
    m = len(x)
    role = np.array([FIT] * m, dtype=object)
    if m == 0:
        return Saturation(role, False, math.nan, 0, False, 0, math.nan, math.nan, math.inf)
    k = int(np.argmax(x))
    x_max, r_max = float(x[k]), float(r[k])
    hook = np.zeros(m, dtype=bool)
    i = m - 1
    while i >= 1 and x[i] < (1.0 - tol) * x[i - 1] and r[i] > r[i - 1]:
        hook[i] = True
        i -= 1
    role[hook] = HOOK
    run = [i]                                       # the heaviest point outside the hook, then lighter ones
    for j in range(i - 1, -1, -1):
        if abs(x[j] / x[run[-1]] - 1.0) < tol:
            run.append(j)
        else:
            break
    saturated = len(run) >= min_points
    x_sat, cap = math.nan, math.inf
    if saturated:
        x_sat = cap = float(np.mean(x[run]))
        role[run] = PLATEAU
        role[(role == FIT) & (x >= (1.0 - tol) * x_sat)] = PLATEAU   # lighter load, plateau's level already
    elif hook.any():
        role[(role == FIT) & (x >= x_max)] = LIMIT
        cap = x_max
    return Saturation(role, bool(saturated), x_sat, len(run) if saturated else 0, bool(hook.any()),
                      int(hook.sum()), x_max, r_max, cap)


# ------------------------------------------------------------------------------------ profile fitting


def _f_threshold(ss_min: float, m: int, p: int = 3) -> float:
    """Residual sum of squares bounding a 95 % profile-likelihood interval of one parameter."""
    from scipy import stats

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
        from scipy.optimize import minimize_scalar

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
    from scipy.optimize import brentq

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


# ------------------------------------------------------------------------------ held-out, crossings


def holdout(x, r, cap: float = math.inf, share: float = HOLDOUT_SHARE) -> tuple[float, int, str]:
    """(mean absolute error %, held-out points, note) of the model fitted to the points below `share`
    of the highest x predicting the latency of the points at or above it (x, r: the fit range). No
    number (NaN, the note says why) when that model is not identifiable, or when its peak's 95 % interval
    reaches down to the highest point: then its prediction there is unbounded, not a prediction."""
    x = np.asarray(x, dtype=float)
    r = np.asarray(r, dtype=float)
    if len(x) == 0:
        return math.nan, 0, "no points"
    top = float(np.max(x))
    train = x < share * top
    n_test = int((~train).sum())
    if train.sum() < MIN_FIT_POINTS:
        return math.nan, n_test, (f"only {int(train.sum())} points below {share:.0%} of the highest throughput "
                                  f"(the model needs {MIN_FIT_POINTS})")
    f = fit_open_queue(x[train], r[train], cap=cap, x_top=top)
    if not f.identifiable:
        return math.nan, n_test, f"the model fitted below {share:.0%} is not identifiable ({f.reason})"
    if f.peak_ci_low <= top * (1 + 1e-6):
        return math.nan, n_test, (f"the model fitted below {share:.0%} puts no bound on the latency of the top "
                                  "points (its peak's 95 % interval reaches down to them)")
    pred = open_queue_latency(x[~train], f.r0, f.a, f.peak)
    err = np.abs(pred - r[~train]) / r[~train] * 100.0
    return float(np.mean(err)), n_test, ""


def crossing(x, r, level: float) -> tuple[float, str]:
    """(throughput, note): where the measured latency r crosses `level` for good — the last crossing
    from below, after which every heavier point stays at or above it (a noisy spike at light load does
    not count) — with x and r ordered from the lightest load to the heaviest; interpolated linearly
    between the two measured points around it. NaN with the reason when the heaviest point is still
    below the level (not reached: censored, never extrapolated) or every point is above it."""
    x = np.asarray(x, dtype=float)
    r = np.asarray(r, dtype=float)
    if not math.isfinite(level) or len(x) == 0:
        return math.nan, "no R0"
    below = np.flatnonzero(r < level)
    if len(below) and below[-1] == len(r) - 1:
        return math.nan, "not reached (censored: the latency is below it at the heaviest load measured)"
    if len(below) == 0:
        return math.nan, "already exceeded at the lightest load measured"
    j = int(below[-1])
    x0, x1, r0, r1 = x[j], x[j + 1], r[j], r[j + 1]
    return float(x0 + (x1 - x0) * (level - r0) / (r1 - r0)), ""


# ----------------------------------------------------------------------------------- one curve


@dataclass
class CurveFit:
    """The one latency–throughput analysis of a curve (:func:`analyse`). Units: x_* and peak_* in the
    curve's throughput unit, r*, a_* in its latency unit (the table builders name them).

    Points (ordered from the lightest load to the heaviest): load (the knob), x, r, role (FIT /
    PLATEAU / HOOK / LIMIT). Saturation: saturated, x_sat, plateau_points, hook, hook_points, x_max,
    r_at_x_max. Model (:class:`OpenQueueFit` over the FIT points): fit_points, r0 and a and peak with
    95 % intervals, identifiable, reason, fit_rms_pct, x_fit_min/x_fit_max (the range the model
    describes). Held-out: holdout_error_pct, holdout_points, holdout_note. Family metrics:
    r_at_x_max_over_r0, x_at_1p25_r0, x_at_2_r0 and their notes (censoring)."""

    load: np.ndarray
    x: np.ndarray
    r: np.ndarray
    role: np.ndarray
    sat: Saturation
    model: OpenQueueFit
    holdout_error_pct: float = math.nan
    holdout_points: int = 0
    holdout_note: str = ""
    x_at_level: dict = field(default_factory=dict)   # level -> (x, note)

    @property
    def saturated(self) -> bool:
        return self.sat.saturated

    @property
    def hook(self) -> bool:
        return self.sat.hook

    @property
    def identifiable(self) -> bool:
        return self.model.identifiable

    @property
    def fit_mask(self) -> np.ndarray:
        return self.role == FIT

    @property
    def x_fit_range(self) -> tuple[float, float]:
        """(lowest, highest) throughput of the fit range (NaN without a model)."""
        xs = self.x[self.fit_mask]
        if not self.model.fitted or len(xs) == 0:
            return math.nan, math.nan
        return float(xs.min()), float(xs.max())

    @property
    def r_at_x_max_over_r0(self) -> float:
        r0 = self.model.r0
        return self.sat.r_at_x_max / r0 if math.isfinite(r0) and r0 > 0 else math.nan

    def latency(self, x) -> np.ndarray:
        """The model's latency at throughput x (NaN everywhere when not identifiable)."""
        m = self.model
        if not m.identifiable:
            return np.full(np.shape(x), np.nan)
        return open_queue_latency(x, m.r0, m.a, m.peak)

    def notes(self) -> list[str]:
        """Caveats in words: not identifiable (with the reason), hook, peak bounded by the plateau,
        censored crossings, held-out check not possible."""
        out = []
        if not self.model.identifiable and self.model.reason:
            out.append(f"not identifiable: {self.model.reason}")
        if self.model.fit_rms_pct > POOR_FIT_PCT:
            out.append(f"the open-queue form fits these points poorly (RMS error {self.model.fit_rms_pct:.0f} %)")
        if self.sat.hook:
            out.append(f"hook: {self.sat.hook_points} point{'s' if self.sat.hook_points > 1 else ''} beyond the "
                       "maximum (throughput falls while latency rises)")
        if self.model.identifiable and self.model.peak_at_cap:
            out.append("the peak's interval reaches the measured " + ("plateau" if self.sat.saturated else "maximum"))
        for level, (_, note) in self.x_at_level.items():
            if note and note != "no R0":
                out.append(f"{level:g}·R0: {note}")
        if self.holdout_note and self.model.fitted:
            out.append(f"held-out check: {self.holdout_note}")
        return out


def analyse(load, x, r, heavier_first: bool = False) -> CurveFit:
    """The latency–throughput analysis of one curve: load (the knob: inject delay, outstanding I/O or
    offered rate), x (throughput), r (mean latency), in any order; heavier_first: the knob's larger
    values are lighter loads (inject delay) — else larger values are heavier (N, offered rate)."""
    load = np.asarray(load, dtype=float)
    x = np.asarray(x, dtype=float)
    r = np.asarray(r, dtype=float)
    ok = np.isfinite(x) & np.isfinite(r) & (x > 0) & (r > 0)
    load, x, r = load[ok], x[ok], r[ok]
    order = np.argsort(-load if heavier_first else load, kind="stable")
    load, x, r = load[order], x[order], r[order]
    sat = saturation(x, r)
    fit = sat.role == FIT
    where = "below the plateau" if sat.saturated else ("below the maximum" if sat.hook else "")
    model = fit_open_queue(x[fit], r[fit], cap=sat.cap, x_ref=sat.x_max, where=where)
    err, n_out, note = holdout(x[fit], r[fit], cap=sat.cap)
    cf = CurveFit(load=load, x=x, r=r, role=sat.role, sat=sat, model=model, holdout_error_pct=err,
                  holdout_points=n_out, holdout_note=note)
    keep = sat.role != HOOK
    for level in LEVELS:
        cf.x_at_level[level] = crossing(x[keep], r[keep], level * model.r0) if math.isfinite(model.r0) \
            else (math.nan, "no R0")
    return cf


def littles_outstanding(x_per_s, r_s) -> np.ndarray:
    """Requests in flight by Little's law, N = X · R (X in requests per second, R in seconds)."""
    return np.asarray(x_per_s, dtype=float) * np.asarray(r_s, dtype=float)


# ----------------------------------------------------------------------------------- table rows


def _metric_row(cf: CurveFit, x: str, x_unit: str, r_unit: str) -> dict:
    """The common metric columns of one curve, named with their units: x is the throughput's name
    (``b`` for memory bandwidth, ``x`` for storage IOPS), e.g. b_sat_MBps, r0_ns, peak_MBps."""
    m = cf.model
    xn = f"{x}_" if x else ""
    lo_fit, hi_fit = cf.x_fit_range
    row = {
        "points": int(len(cf.x)),
        "saturated": cf.saturated,
        f"{xn}sat_{x_unit}": cf.sat.x_sat,
        "plateau_points": int(cf.sat.plateau_points) if cf.saturated else 0,
        "hook": cf.hook,
        f"{xn}max_{x_unit}": cf.sat.x_max,
        f"r_at_{xn}max_{r_unit}": cf.sat.r_at_x_max,
        "fit_points": int(m.points),
        f"fit_{xn}max_{x_unit}": hi_fit,
        f"r0_{r_unit}": m.r0, f"r0_{r_unit}_ci_low": m.r0_ci_low, f"r0_{r_unit}_ci_high": m.r0_ci_high,
        f"a_{r_unit}": m.a, f"a_{r_unit}_ci_low": m.a_ci_low, f"a_{r_unit}_ci_high": m.a_ci_high,
        f"peak_{x_unit}": m.peak, f"peak_{x_unit}_ci_low": m.peak_ci_low if m.fitted else math.nan,
        f"peak_{x_unit}_ci_high": m.peak_ci_high,
        "identifiable": bool(m.identifiable),
        "reason": "" if m.identifiable else m.reason,
        "fit_rms_pct": m.fit_rms_pct,
        "holdout_error_pct": cf.holdout_error_pct,
        "holdout_points": int(cf.holdout_points),
        "holdout_note": cf.holdout_note if m.fitted else "",
        f"r_at_{xn}max_over_r0": cf.r_at_x_max_over_r0,
    }
    for level, name in zip(LEVELS, ("1p25", "2")):
        value, note = cf.x_at_level.get(level, (math.nan, "no R0"))
        row[f"{x or 'x'}_at_{name}_r0_{x_unit}"] = value
        row[f"{x or 'x'}_at_{name}_r0_censored"] = bool(note.startswith("not reached"))
    row["note"] = "; ".join(cf.notes())
    return row


# ------------------------------------------------------------------------------------ memory curves

#: Traffic labels (memstor.core.schema.TRAFFIC_CODES) whose stores are non-temporal (MLC and loadlat -W6..-W10:
#: no read-for-ownership); the other mixes with writes use plain stores.
NON_TEMPORAL = {"write-only-nt", "2:1-nt", "1:1-nt", "3:1-nt", "stream-triad"}
#: Settings that, beside host, tool and access size, tell memory curves apart in memory_fit.
MEMORY_SETTINGS = ["load_threads", "buffer_kib", "random", "load_random", "huge_pages", "pages", "pacing"]
#: Columns of :func:`memory_fit_table` (``report/tables/memory_fit.csv``).
MEMORY_FIT_COLUMNS = [
    "host", "curve", "tool", "traffic", "access_bytes", *MEMORY_SETTINGS, "origin", "n_min", "gate_failed_points",
    "points", "saturated", "b_sat_MBps", "plateau_points", "hook", "b_max_MBps", "r_at_b_max_ns",
    "outstanding_at_b_max", "fit_points", "fit_b_max_MBps",
    "r0_ns", "r0_ns_ci_low", "r0_ns_ci_high", "a_ns", "a_ns_ci_low", "a_ns_ci_high",
    "peak_MBps", "peak_MBps_ci_low", "peak_MBps_ci_high", "identifiable", "reason", "fit_rms_pct",
    "holdout_error_pct", "holdout_points", "holdout_note", "r_at_b_max_over_r0",
    "bw_at_1p25_r0_MBps", "bw_at_1p25_r0_censored", "bw_at_2_r0_MBps", "bw_at_2_r0_censored",
    "write_penalty_pct", "mix_read_share", "dram_read_share_est", "stores", "note",
]


def memory_outstanding(bw_MBps, latency_ns, access_bytes) -> np.ndarray:
    """Requests in flight by Little's law for a memory point: bandwidth (MB/s = 10^6 B/s) / access size
    (bytes) requests per second × latency (ns) — e.g. 135,500 MB/s × 130 ns / 64 B = 275."""
    bw = np.asarray(bw_MBps, dtype=float)
    lat = np.asarray(latency_ns, dtype=float)
    acc = np.asarray(access_bytes, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return littles_outstanding(bw * 1e6 / acc, lat * 1e-9)


def traffic_shares(traffic, read_fraction=None) -> tuple[float, float, str]:
    """(MLC's instruction mix read share, estimated DRAM read share, stores) of a traffic label.

    The mix read share is the share of the load threads' accesses that are reads (memstor.core.schema
    TRAFFIC_CODES; the row's own read_fraction when given). With plain stores every written line is
    first read for ownership and later written back, so DRAM sees reads = f + (1 − f) and writes =
    1 − f: read share 1 / (2 − f). Non-temporal stores write without that read: read share f.
    NaN/'' when the traffic is unknown."""
    from memstor.analysis.memory import _known
    from memstor.core.schema import TRAFFIC_CODES

    if not _known(traffic):
        return math.nan, math.nan, ""
    label = str(traffic)
    f = float(read_fraction) if _known(read_fraction) else \
        {lab: frac for lab, frac in TRAFFIC_CODES.values()}.get(label, math.nan)
    if not math.isfinite(f):
        return math.nan, math.nan, ""
    if f >= 1.0:
        return 1.0, 1.0, "none"
    if label in NON_TEMPORAL:
        return f, f, "non-temporal"
    return f, 1.0 / (2.0 - f), "plain (read for ownership)"


def memory_fit_table(curves: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """``memory_fit``: the analysis (:func:`analyse`) of every curve of a
    memstor.analysis.memory.curve_table (mean points; lower inject delay = heavier load). One row per
    device × curve (:data:`MEMORY_FIT_COLUMNS`): the identity (host, curve label, tool, traffic,
    access_bytes, settings, origin when the identity is incomplete), n_min (fewest repetitions of a
    point), saturation (saturated, b_sat_MBps, plateau_points, hook, b_max_MBps, r_at_b_max_ns and the
    outstanding requests there by Little's law), the model below the plateau (fit_points, fit_b_max_MBps,
    R0, a, peak with 95 % intervals, identifiable, reason, fit_rms_pct), the held-out check, the family
    metrics (R(B_max)/R0, bandwidth at 1.25·R0 and 2·R0 with censoring flags), the write penalty
    (100 · (1 − B_max / B_max of the read-only curve with the same host, tool, access size and known
    settings); NaN when there is none), the instruction-mix and estimated DRAM read shares
    (:func:`traffic_shares`) and note. Units: ns, MB/s (10^6 B/s), bytes.

    Returns (table, fits): fits maps (host, curve label) -> :class:`CurveFit` (host ``?`` when unknown)."""
    from memstor.analysis.memory import _curves, _known

    if curves is None or curves.empty:
        return pd.DataFrame(columns=MEMORY_FIT_COLUMNS), {}
    rows, fits = [], {}
    for host, curve, g in _curves(curves):
        first = g.iloc[0]
        cf = analyse(g["inject_delay"], g["bandwidth_MBps"], g["latency_ns"], heavier_first=True)
        fits[(host, curve)] = cf
        acc = first.get("access_bytes")
        metrics = _metric_row(cf, "b", "MBps", "ns")
        metrics["bw_at_1p25_r0_MBps"] = metrics.pop("b_at_1p25_r0_MBps")
        metrics["bw_at_1p25_r0_censored"] = metrics.pop("b_at_1p25_r0_censored")
        metrics["bw_at_2_r0_MBps"] = metrics.pop("b_at_2_r0_MBps")
        metrics["bw_at_2_r0_censored"] = metrics.pop("b_at_2_r0_censored")
        mix, dram, stores = traffic_shares(first.get("traffic"), first.get("read_fraction"))
        rows.append({
            "host": first.get("host"), "curve": curve, "tool": first.get("tool"), "traffic": first.get("traffic"),
            "access_bytes": acc, **{k: first.get(k, np.nan) for k in MEMORY_SETTINGS},
            "origin": first.get("origin", ""), "n_min": int(g["n"].min()) if "n" in g else 1,
            "gate_failed_points": int((pd.to_numeric(g["gate_failed"], errors="coerce") > 0).sum())
            if "gate_failed" in g else 0,
            **metrics,
            "outstanding_at_b_max": float(memory_outstanding(cf.sat.x_max, cf.sat.r_at_x_max, acc))
            if _known(acc) else math.nan,
            "mix_read_share": mix, "dram_read_share_est": dram, "stores": stores,
        })
    table = pd.DataFrame(rows)
    table["write_penalty_pct"] = _write_penalty(table)
    table = table.reindex(columns=MEMORY_FIT_COLUMNS)
    for col in ("access_bytes", "load_threads", "buffer_kib", "points", "n_min", "gate_failed_points",
                "plateau_points", "fit_points",
                "holdout_points"):
        table[col] = pd.to_numeric(table[col], errors="coerce").astype("Int64")
    return table, fits


def _write_penalty(table: pd.DataFrame) -> pd.Series:
    """100 · (1 − B_max / B_max of the read-only curve with the same host, tool, access size and settings),
    only between curves whose identity is fully known (imported files with unknown settings are never
    compared: they may have been measured differently); NaN otherwise (and for read-only curves: 0)."""
    from memstor.analysis.memory import _known

    key = ["host", "tool", "access_bytes", *[c for c in MEMORY_SETTINGS if c != "pacing"]]

    def ident(r) -> tuple | None:
        if _known(r.get("origin")) and str(r.get("origin")):
            return None
        vals = [r.get(k) for k in key]
        if not all(_known(v) for v in vals):
            return None
        pacing = r.get("pacing")
        return (*[str(v) for v in vals], str(pacing) if _known(pacing) else "")

    read = {}
    for _, r in table.iterrows():
        k = ident(r)
        if k is not None and r.get("traffic") == "read-only":
            read[k] = r["b_max_MBps"]
    out = []
    for _, r in table.iterrows():
        k = ident(r)
        ref = read.get(k) if k is not None else None
        out.append(100.0 * (1.0 - r["b_max_MBps"] / ref) if ref else math.nan)
    return pd.Series(out, index=table.index, dtype=float)


def annotate_points(curves: pd.DataFrame, fits: dict) -> pd.DataFrame:
    """``curves`` (memory.curve_table) with each point's ``role`` (fit / plateau / hook) and its
    ``outstanding`` requests by Little's law (bandwidth / access size × latency)."""
    from memstor.analysis.memory import _known

    if curves is None:
        return curves
    if curves.empty:
        return curves.assign(role=pd.Series(dtype=object), outstanding=pd.Series(dtype=float))
    out = curves.copy()
    hosts = out["host"].map(lambda v: str(v) if _known(v) else "?")
    role = pd.Series(FIT, index=out.index, dtype=object)
    for (host, curve), cf in fits.items():
        sel = out[(hosts == host) & (out["curve"] == curve)]
        by_delay = dict(zip(cf.load.tolist(), cf.role.tolist()))
        role.loc[sel.index] = sel["inject_delay"].astype(float).map(by_delay).fillna(FIT)
    out["role"] = role
    out["outstanding"] = memory_outstanding(out["bandwidth_MBps"], out["latency_ns"], out["access_bytes"])
    return out


# ----------------------------------------------------------------------------------- storage curves

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
]


def storage_fit_table(qd: pd.DataFrame | None, load: pd.DataFrame | None) -> tuple[pd.DataFrame, dict]:
    """``storage_fit``: the same analysis (:func:`analyse`) for every storage curve — the closed
    queue-depth sweep of each device × workload (memstor.analysis.synthesis.qd_points, the points in the
    sweep; load = outstanding I/O N) and the open loop (memstor.analysis.load_latency.curve_table; load =
    offered IOPS, throughput = achieved IOPS). Columns :data:`STORAGE_FIT_COLUMNS`: the metric names of
    memory_fit with the storage units (IOPS, µs); outstanding_at_x_max = X · R by Little's law.

    Returns (table, fits): fits maps (host, kind, rw) -> :class:`CurveFit`."""
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
            # an overloaded rate (achieved < 95 % of offered) has no steady state: its queue, and so its
            # latency, grows with the run's length; it is not a point of the curve
            over = g["overloaded"].map(truthy) if "overloaded" in g else pd.Series(False, index=g.index)
            kept = g[~over.astype(bool)]
            cf = analyse(kept["offered_iops"], kept["achieved_iops"], kept["lat_mean_us"])
            fits[(host, OPEN, rw)] = cf
            row = {"host": host, "kind": OPEN, "rw": rw, "bs_bytes": g["bs_bytes"].iloc[0]
                   if "bs_bytes" in g else math.nan, **_storage_row(cf)}
            if over.any():
                note = f"{int(over.sum())} overloaded rate(s) left out (achieved < 95 % of offered)"
                row["note"] = "; ".join(x for x in (row.get("note"), note) if isinstance(x, str) and x)
            rows.append(row)
    table = pd.DataFrame(rows).reindex(columns=STORAGE_FIT_COLUMNS)
    for col in ("bs_bytes", "points", "plateau_points", "fit_points", "holdout_points"):
        table[col] = pd.to_numeric(table[col], errors="coerce").astype("Int64")
    return table, fits


def _storage_row(cf: CurveFit) -> dict:
    """Metric columns of one storage curve (IOPS, µs)."""
    row = _metric_row(cf, "x", "iops", "us")
    row["outstanding_at_x_max"] = float(littles_outstanding(cf.sat.x_max, cf.sat.r_at_x_max * 1e-6))
    return row
