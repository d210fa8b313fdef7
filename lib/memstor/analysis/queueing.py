"""Queueing theory helpers: Little's law and the operational bounds of a closed system.

Units are in the names: iops (I/O per second), lat_us (microseconds), outstanding (I/Os in flight),
latency_ns (nanoseconds), bw_MBps (decimal megabytes per second).

A fio queue-depth sweep is a *closed* system: fio keeps N = iodepth x numjobs I/Os in flight, so the
throughput X (IOPS) and the mean response time R are tied by Little's law, N = X * R. Operational
analysis bounds the throughput of such a system by

    X(N) <= min(N / R_min, X_max)

where R_min is the response time without queueing and X_max the throughput of the bottleneck. The two
asymptotes cross at the knee N* = X_max * R_min: below it the device is latency bound (adding I/Os adds
throughput), above it throughput bound (adding I/Os only adds queueing delay).

Latency–throughput curves (memory loaded latency, the storage sweeps) are analysed in
memstor.analysis.curves: saturation first, the open-queue form R = R0 + a·ρ/(1−ρ) only below the plateau,
95 % profile intervals and identifiability. (A plain fit of that form over every point, which this module
held, reported peaks far above saturated plateaus; it is gone.)
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np


def littles_law_outstanding(iops: float, lat_mean_us: float) -> float:
    """Outstanding I/Os implied by Little's law: N = X * R (X in IO/s, R in us -> R * 1e-6 s)."""
    return iops * lat_mean_us * 1e-6


def littles_law_residual_pct(outstanding: float, iops: float, lat_mean_us: float) -> float:
    """Residual of Little's law in percent of the intended outstanding I/O: 100 * (X*R - N) / N."""
    if outstanding <= 0:
        raise ValueError(f"outstanding I/O must be > 0, got {outstanding}")
    return 100.0 * (littles_law_outstanding(iops, lat_mean_us) - outstanding) / outstanding


# --------------------------------------------------------------------------------------------------
# Closed system: operational bounds and the knee N*
# --------------------------------------------------------------------------------------------------


def closed_bound_iops(outstanding, r_min_us: float, x_max_iops: float) -> np.ndarray:
    """Upper bound of a closed system's throughput in IOPS: min(N / R_min, X_max).

    outstanding: N, I/Os in flight (scalar or array); r_min_us: response time without queueing (us);
    x_max_iops: bottleneck throughput (IOPS).
    """
    n = np.asarray(outstanding, dtype=float)
    return np.minimum(n / (r_min_us * 1e-6), x_max_iops)


def closed_bound_latency_us(outstanding, r_min_us: float, x_max_iops: float) -> np.ndarray:
    """Lower bound of a closed system's mean response time in us: max(R_min, N / X_max)."""
    n = np.asarray(outstanding, dtype=float)
    return np.maximum(r_min_us, n / x_max_iops * 1e6)


def knee_outstanding(r_min_us: float, x_max_iops: float) -> float:
    """The knee N* = X_max * R_min (I/Os in flight) where the two asymptotes of the bound cross."""
    return x_max_iops * r_min_us * 1e-6


#: The knee table's columns (memstor.analysis.synthesis.knee_fits, knee.csv), in order.
KNEE_COLUMNS = ("host", "rw", "points", "N_range", "R_min_fit_us", "X_max_fit_iops", "N_star_fit", "r2", "R_min_meas_us",
                "X_max_meas_iops", "N_star_bound", "saturated", "note", "R_min_fit_se_us", "X_max_fit_se_iops",
                "N_star_fit_ci_low", "N_star_fit_ci_high")


@dataclass
class KneeFit:
    """Two-asymptote fit X(N) = min(N / R_min, X_max) of a queue-depth sweep, and its knee N*.

    r_min_us, x_max_iops, n_star: fitted R_min (us), X_max (IOPS) and N* = X_max * R_min (I/Os);
    r2: coefficient of determination of the fitted curve on the measured IOPS;
    r_min_measured_us: mean latency at the smallest N measured; x_max_measured_iops: highest IOPS measured;
    n_star_measured: N* from those two measured inputs; n_min, n_max: range of N measured;
    saturated: the sweep reaches beyond the fitted knee (else X_max is only a lower estimate);
    r_min_se_us, x_max_se_iops: standard errors of the two fitted parameters (from the covariance of the
    least-squares fit, NaN when not computable); n_star_ci_low/high: 95 % interval of the fitted N*.

    Names: the *two-asymptote fit* is the least-squares curve min(N / R_min, X_max) through the points;
    the *closed-system bound* N* = X_max R_min uses the measured inputs (latency at the smallest N, the
    highest throughput) — ``n_star_measured``.
    """

    r_min_us: float
    x_max_iops: float
    n_star: float
    r2: float
    n_points: int
    r_min_measured_us: float
    x_max_measured_iops: float
    n_star_measured: float
    n_min: float
    n_max: float
    saturated: bool
    r_min_se_us: float = float("nan")
    x_max_se_iops: float = float("nan")
    n_star_ci_low: float = float("nan")
    n_star_ci_high: float = float("nan")

    def as_dict(self) -> dict:
        """The fit as a plain dict (for tables)."""
        return asdict(self)


def r_squared(observed, predicted) -> float:
    """Coefficient of determination 1 - SS_res / SS_tot (nan when the observations are all equal)."""
    y = np.asarray(observed, dtype=float)
    f = np.asarray(predicted, dtype=float)
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    if ss_tot == 0.0:
        return float("nan")
    return 1.0 - float(np.sum((y - f) ** 2)) / ss_tot


def _clean_pairs(*arrays) -> list[np.ndarray]:
    """Float arrays with the rows where any array is nan/inf/<=0 dropped."""
    arrs = [np.asarray(a, dtype=float) for a in arrays]
    ok = np.ones(arrs[0].shape, dtype=bool)
    for a in arrs:
        ok &= np.isfinite(a) & (a > 0)
    return [a[ok] for a in arrs]


def fit_closed_bounds(outstanding, iops, lat_mean_us=None) -> KneeFit:
    """Fit X(N) = min(N / R_min, X_max) to a queue-depth sweep with scipy; return the fit and N*.

    outstanding: N per point (iodepth x numjobs); iops: measured throughput (IOPS);
    lat_mean_us: measured mean latency (us), used for the measured R_min (else N / X by Little's law).
    The fit minimises relative (log) residuals so that the low-N and the high-N points weigh alike.
    Raises ValueError when fewer than 3 usable points or fewer than 2 distinct N are given.
    """
    from scipy.optimize import least_squares

    if lat_mean_us is None:
        n, x = _clean_pairs(outstanding, iops)
        r = n / x * 1e6
    else:
        n, x, r = _clean_pairs(outstanding, iops, lat_mean_us)
    if len(n) < 3 or len(np.unique(n)) < 2:
        raise ValueError(f"need >= 3 points at >= 2 queue depths to fit the bounds, got {len(n)} point(s) at {len(np.unique(n))} depth(s)")
    order = np.argsort(n, kind="stable")
    n, x, r = n[order], x[order], r[order]
    r_meas = float(np.median(r[n == n[0]]))
    x_meas = float(x.max())

    def resid(p: np.ndarray) -> np.ndarray:
        r_min_s, x_max = math.exp(p[0]), math.exp(p[1])
        return np.log(np.minimum(n / r_min_s, x_max)) - np.log(x)

    p0 = np.array([math.log(r_meas * 1e-6), math.log(x_meas)])
    sol = least_squares(resid, p0, method="trf", x_scale=1.0, diff_step=1e-3)
    r_min_us = math.exp(sol.x[0]) * 1e6
    x_max = math.exp(sol.x[1])
    n_star = knee_outstanding(r_min_us, x_max)
    se_log, ci = _log_fit_uncertainty(sol, len(n))
    return KneeFit(
        r_min_us=r_min_us,
        x_max_iops=x_max,
        n_star=n_star,
        r2=r_squared(x, closed_bound_iops(n, r_min_us, x_max)),
        n_points=int(len(n)),
        r_min_measured_us=r_meas,
        x_max_measured_iops=x_meas,
        n_star_measured=knee_outstanding(r_meas, x_meas),
        n_min=float(n[0]),
        n_max=float(n[-1]),
        saturated=bool(n[-1] > n_star),
        r_min_se_us=r_min_us * se_log[0],
        x_max_se_iops=x_max * se_log[1],
        n_star_ci_low=n_star * math.exp(-ci),
        n_star_ci_high=n_star * math.exp(ci),
    )


def _log_fit_uncertainty(sol, m: int) -> tuple[np.ndarray, float]:
    """(standard errors of the log-parameters, 95 % half-width of log N*) of a 2-parameter log fit:
    covariance s² (JᵀJ)⁻¹ with s² = SS_res / (m − 2); NaN when singular or m <= 2."""
    from scipy import stats

    nan = (np.array([math.nan, math.nan]), math.nan)
    if m <= 2:
        return nan
    try:
        cov = np.linalg.inv(sol.jac.T @ sol.jac) * float(np.sum(sol.fun ** 2)) / (m - 2)
    except np.linalg.LinAlgError:
        return nan
    se = np.sqrt(np.clip(np.diag(cov), 0, None))
    var_knee = float(cov[0, 0] + cov[1, 1] + 2 * cov[0, 1])  # log N* = log R_min + log X_max
    half = float(stats.t.ppf(0.975, m - 2)) * math.sqrt(max(var_knee, 0.0))
    return se, half

