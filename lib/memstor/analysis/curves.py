"""Latency–throughput curves, memory and storage alike: saturation, the open-queue model with 95 %
intervals (:mod:`memstor.analysis.curve_model`), a held-out check and model-free curve-family metrics (pure).

**A curve** is a set of points, one per setting of a load knob, each with a throughput X and a mean
latency R: a memory loaded-latency curve (inject delay; X = bandwidth in MB/s, R in ns), a storage
queue-depth sweep (outstanding I/O N; X in IOPS, R in µs) or an open-loop storage curve (offered rate;
X = achieved IOPS, R in µs). The functions here take the points ordered from the lightest load to the
heaviest and never look at units; the table builders (memstor.analysis.memory_fit.memory_fit_table,
memstor.analysis.storage_fit.storage_fit_table) put units in the column names (:func:`metric_row`).

**Saturation** (:func:`saturation`). A *hook*: at the heaviest loads, each step to a heavier load makes
throughput fall by more than :data:`TOL` (2 %) while latency rises — those points are beyond the
maximum and never enter a fit. The *plateau*: from the heaviest point outside a hook towards lighter loads,
the run of points whose throughput changes by less than :data:`TOL` from one point to the next; with
at least :data:`PLATEAU_MIN_POINTS` points (one flat step can be chance) the curve is ``saturated`` and
``x_sat`` is the plateau's mean throughput. A plateau is the closed-loop limit of the requests a client
can keep in flight (Little's law: N = X · R), which an open-queue form cannot represent.

**The open-queue model** R = R0 + a · ρ / (1 − ρ), ρ = X / peak (memstor.analysis.curve_model.fit_open_queue,
with its profile-likelihood intervals and identifiability rule) is fitted only to the points below the
plateau (and not in a hook); on a saturated curve its peak is bounded by the measured plateau (after a
hook, by the measured maximum).
fewer than :data:`MIN_FIT_POINTS` points in the fit range gets no model at all.

**Held-out check** (:func:`holdout`): the model fitted to the points of the fit range below
:data:`HOLDOUT_SHARE` (80 %) of its highest throughput predicts the latency of the points above;
``holdout_error_pct`` is the mean absolute error of that prediction in % of the measured latency, a
number wherever the model has a finite point prediction (``holdout_note`` says when it is a point
prediction without a bound, or why there is no number).

**Curve-family metrics** (model-free, on the measured points; hook points left out): X_max (highest
throughput measured), R(X_max) / R0, and the throughput where the measured latency reaches 1.25 × R0
and 2 × R0 for good (:func:`crossing`: linear interpolation between the two measured points around the
last crossing; not reached = censored: NaN with the reason, never extrapolated).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from memstor.analysis.curve_model import MIN_FIT_POINTS, OpenQueueFit, fit_open_queue, open_queue_latency

#: Relative throughput change (point to point) below which two points are on one plateau; also the
#: throughput drop that makes a hook.
TOL = 0.02
#: Fewest points of a plateau for a curve to be called saturated.
PLATEAU_MIN_POINTS = 3
#: Relative RMS residual (%) above which the notes say the open-queue form fits the points poorly.
POOR_FIT_PCT = 10.0
#: The held-out check fits below this share of the fit range's highest throughput.
HOLDOUT_SHARE = 0.8
#: A best-fit peak within this relative distance of its lower bound (the highest held-out throughput) is
#: pinned there: its prediction at that point is infinite.
PINNED_REL = 1e-3
#: Latency multiples of R0 at which the throughput is read off the measured curve.
LEVELS = (1.25, 2.0)
#: Role of a point in its curve: in the model's fit range, on the plateau (or at its level), in a hook,
#: or the maximum of a curve that hooks without a plateau (its limit).
FIT, PLATEAU, HOOK, LIMIT = "fit", "plateau", "hook", "limit"


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


# ------------------------------------------------------------------------------ held-out, crossings


def holdout(x, r, cap: float = math.inf, share: float = HOLDOUT_SHARE) -> tuple[float, int, str]:
    """(mean absolute error %, held-out points, note) of the open-queue model fitted to the points below
    `share` of the highest x predicting the latency of the points at or above it (x, r: the fit range).

    A number wherever one can be made: the model's best-fit values predict, also when its peak's 95 %
    interval is unbounded or it is not identifiable (the note says so: a point prediction without a
    bound); with fewer than MIN_FIT_POINTS points below `share`, the model fitted to the MIN_FIT_POINTS
    lightest points predicts the rest (the note says so). NaN (the note says why) only when no point is
    left to predict, the model cannot be fitted, or its prediction is infinite (best-fit peak at the
    highest held-out throughput, the lowest the fit allows). An empty note: the plain check."""
    x = np.asarray(x, dtype=float)
    r = np.asarray(r, dtype=float)
    order = np.argsort(x, kind="stable")
    x, r = x[order], r[order]
    if len(x) == 0:
        return math.nan, 0, "no points"
    top = float(x[-1])
    train = x < share * top
    how = ""
    if train.sum() < MIN_FIT_POINTS:
        train = np.arange(len(x)) < MIN_FIT_POINTS
        how = f"the model fitted to the {MIN_FIT_POINTS} lightest points (fewer than {MIN_FIT_POINTS} below {share:.0%})"
    n_test = int((~train).sum())
    if n_test == 0:
        return math.nan, 0, f"only {len(x)} points in the fit range: none is left to hold out"
    f = fit_open_queue(x[train], r[train], cap=cap, x_top=top)
    r0, a, peak = (f.r0, f.a, f.peak) if f.identifiable else (f.est_r0, f.est_a, f.est_peak)
    what = how or f"the model fitted below {share:.0%}"
    if not f.fitted or math.isnan(r0) or math.isnan(a) or math.isnan(peak):
        return math.nan, n_test, f"{what} could not be fitted ({f.reason or 'no estimate'})"
    notes = [how] if how else []
    if math.isinf(peak) and math.isinf(a):   # the best fit is the model's straight-line limit R0 + b·X
        b, c = np.polyfit(x[train], r[train], 1)
        pred = c + b * x[~train]
        notes.append("its straight-line limit (the best fit puts the peak at infinity)")
    elif peak <= top * (1 + PINNED_REL):
        return math.nan, n_test, (f"{what} puts its best-fit peak at the highest held-out throughput, the lowest "
                                  "the fit allows: its predicted latency there is infinite")
    else:
        pred = open_queue_latency(x[~train], r0, a, peak)
    if not np.all(np.isfinite(pred)) or np.any(pred <= 0):
        return math.nan, n_test, f"{what} predicts no finite positive latency at the held-out points"
    if not f.identifiable:
        notes.append(f"a point prediction: the model fitted there is not identifiable ({f.reason})")
    elif f.peak_ci_low <= top * (1 + 1e-6):
        notes.append("a point prediction: its peak's 95 % interval reaches the held-out points (unbounded)")
    return float(np.mean(np.abs(pred - r[~train]) / r[~train] * 100.0)), n_test, "; ".join(notes)


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


def metric_row(cf: CurveFit, x: str, x_unit: str, r_unit: str) -> dict:
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
