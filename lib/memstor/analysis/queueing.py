"""Queueing theory helpers: Little's law, operational bounds of a closed system, M/M/1-style fits.

Units are in the names: iops (I/O per second), lat_us (microseconds), outstanding (I/Os in flight),
latency_ns (nanoseconds), bw_MBps (decimal megabytes per second).

A fio queue-depth sweep is a *closed* system: fio keeps N = iodepth x numjobs I/Os in flight, so the
throughput X (IOPS) and the mean response time R are tied by Little's law, N = X * R. Operational
analysis bounds the throughput of such a system by

    X(N) <= min(N / R_min, X_max)

where R_min is the response time without queueing and X_max the throughput of the bottleneck. The two
asymptotes cross at the knee N* = X_max * R_min: below it the device is latency bound (adding I/Os adds
throughput), above it throughput bound (adding I/Os only adds queueing delay).

A memory loaded-latency curve (Intel MLC --loaded_latency, or loadlat) is described with the M/M/1-style
form R = R0 + a * rho / (1 - rho), rho = bandwidth / peak bandwidth (:func:`fit_loaded_latency`: a plain
fit over every point). The report's curve analysis — saturation first, the fit only below the plateau,
95 % profile intervals and identifiability — is memstor.analysis.curves.
"""

from __future__ import annotations

import math
import warnings
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


# --------------------------------------------------------------------------------------------------
# Memory loaded-latency curves: M/M/1-style fit
# --------------------------------------------------------------------------------------------------


def mm1_latency_ns(bw_MBps, r0_ns: float, a_ns: float, peak_MBps: float) -> np.ndarray:
    """M/M/1-style latency in ns at a bandwidth in MB/s: R0 + a * rho / (1 - rho), rho = bw / peak."""
    rho = np.asarray(bw_MBps, dtype=float) / peak_MBps
    return r0_ns + a_ns * rho / (1.0 - rho)


@dataclass
class LatencyCurveFit:
    """M/M/1-style fit R = R0 + a * rho / (1 - rho), rho = bandwidth / peak, of one loaded-latency curve.

    r0_ns: latency without load (ns); a_ns: queueing scale (ns); peak_MBps: the bandwidth at which the
    fitted latency diverges (decimal MB/s); peak_fitted: peak was a fit parameter (else given);
    r2: coefficient of determination on the measured latencies; bw_max_MBps: highest bandwidth measured;
    rho_max: bw_max / peak; knee_*: the knee, where queueing has doubled the unloaded latency
    (a * rho / (1 - rho) = R0, i.e. rho_knee = R0 / (R0 + a)); knee_reached: a measured point lies at or
    beyond the knee; knee_inject_delay: the inject delay of the measured point nearest to the knee.

    Uncertainty (from curve_fit's covariance, residual variance scaled; NaN when not computable: no degree
    of freedom left, a non-finite covariance, or a parameter pinned at a bound of the fit): r0_se_ns, a_se_ns, peak_se_MBps are standard
    errors (peak_se_MBps is NaN when the peak was given); knee_bw_ci_low/high_MBps is the 95 % interval
    of the knee bandwidth peak * R0 / (R0 + a) by the delta method (Student t with n - p degrees of
    freedom, low end clipped at 0); knee_latency_ci_low/high_ns the 95 % interval of 2 R0.

    This is memstor's one definition of a memory *knee* (notebook, analysis and report use it).
    """

    r0_ns: float
    a_ns: float
    peak_MBps: float
    peak_fitted: bool
    r2: float
    n_points: int
    bw_max_MBps: float
    rho_max: float
    knee_rho: float
    knee_bw_MBps: float
    knee_latency_ns: float
    knee_reached: bool
    knee_inject_delay: float | None = None
    r0_se_ns: float = math.nan
    a_se_ns: float = math.nan
    peak_se_MBps: float = math.nan
    knee_bw_se_MBps: float = math.nan
    knee_bw_ci_low_MBps: float = math.nan
    knee_bw_ci_high_MBps: float = math.nan
    knee_latency_ci_low_ns: float = math.nan
    knee_latency_ci_high_ns: float = math.nan

    def as_dict(self) -> dict:
        """The fit as a plain dict (for tables)."""
        return asdict(self)


def knee_rho(r0_ns: float, a_ns: float) -> float:
    """Utilisation at which the M/M/1-style queueing term equals R0 (latency doubles): R0 / (R0 + a)."""
    return r0_ns / (r0_ns + a_ns)


def fit_loaded_latency(bw_MBps, latency_ns, peak_MBps: float | None = None, inject_delay=None) -> LatencyCurveFit:
    """Fit R = R0 + a * rho / (1 - rho) to one loaded-latency curve with scipy's curve_fit.

    bw_MBps: measured bandwidth per point (decimal MB/s); latency_ns: measured latency per point (ns);
    peak_MBps: the peak bandwidth for rho; when None (default) or not above the highest measured
    bandwidth, the peak is fitted too (bounded to 1-5x the highest measured bandwidth);
    inject_delay: the inject delay of each point, to name the point nearest to the knee.
    Raises ValueError with fewer than 4 usable points.
    """
    from scipy.optimize import curve_fit

    bw, lat = _clean_pairs(bw_MBps, latency_ns)
    delays = None
    if inject_delay is not None:
        b_all = np.asarray(bw_MBps, dtype=float)
        l_all = np.asarray(latency_ns, dtype=float)
        d_all = np.asarray(inject_delay, dtype=float)
        ok = np.isfinite(b_all) & np.isfinite(l_all) & (b_all > 0) & (l_all > 0)
        delays = d_all[ok]
    if len(bw) < 4:
        raise ValueError(f"need >= 4 points (bandwidth, latency) to fit a loaded-latency curve, got {len(bw)}")
    bw_max = float(bw.max())
    r_lo, r_hi = float(lat.min()), float(lat.max())
    fit_peak = peak_MBps is None or not peak_MBps > bw_max
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if fit_peak:
            peak0 = 1.05 * bw_max
            rho0 = bw_max / peak0
            a0 = max((r_hi - r_lo) * (1 - rho0) / rho0, 1e-3)
            popt, pcov = curve_fit(
                mm1_latency_ns, bw, lat, p0=[r_lo, a0, peak0],
                bounds=([0.0, 0.0, bw_max * (1 + 1e-6)], [np.inf, np.inf, 5 * bw_max]), maxfev=20000,
            )
            r0, a, peak = (float(v) for v in popt)
        else:
            peak = float(peak_MBps)

            def model(b, r0_, a_):
                return mm1_latency_ns(b, r0_, a_, peak)

            rho0 = bw_max / peak
            a0 = max((r_hi - r_lo) * (1 - rho0) / rho0, 1e-3)
            popt, pcov = curve_fit(model, bw, lat, p0=[r_lo, a0], bounds=([0.0, 0.0], [np.inf, np.inf]),
                                   maxfev=20000)
            r0, a = (float(v) for v in popt)
    k_rho = knee_rho(r0, a) if (r0 + a) > 0 else float("nan")
    k_bw = k_rho * peak
    lower = [0.0, 0.0] + ([bw_max * (1 + 1e-6)] if fit_peak else [])
    upper = [math.inf, math.inf] + ([5 * bw_max] if fit_peak else [])
    values = [r0, a] + ([peak] if fit_peak else [])
    scale = [max(r_hi, 1.0), max(r_hi, 1.0)] + ([bw_max] if fit_peak else [])
    pinned = any(v - lo <= 1e-6 * s or hi - v <= 1e-6 * s for v, lo, hi, s in zip(values, lower, upper, scale))
    unc = _knee_uncertainty(r0, a, peak, None if pinned else pcov, len(bw))
    near = None
    if delays is not None and len(delays) == len(bw) and np.isfinite(k_bw):
        near = float(delays[int(np.argmin(np.abs(bw - k_bw)))])
    return LatencyCurveFit(
        r0_ns=r0,
        a_ns=a,
        peak_MBps=peak,
        peak_fitted=bool(fit_peak),
        r2=r_squared(lat, mm1_latency_ns(bw, r0, a, peak)),
        n_points=int(len(bw)),
        bw_max_MBps=bw_max,
        rho_max=bw_max / peak,
        knee_rho=k_rho,
        knee_bw_MBps=k_bw,
        knee_latency_ns=2.0 * r0,
        knee_reached=bool(bw_max >= k_bw),
        knee_inject_delay=near,
        **unc,
    )


def _knee_uncertainty(r0: float, a: float, peak: float, pcov, m: int) -> dict:
    """Standard errors of (R0, a[, peak]) from curve_fit's covariance and 95 % intervals of the knee
    bandwidth (delta method) and knee latency 2 R0; NaN where the covariance is not usable.

    pcov: 2x2 (peak given) or 3x3 (peak fitted) covariance, None when a parameter is pinned at a bound of
    the fit (the curvature there says nothing about its uncertainty); m: number of points fitted."""
    nan = math.nan
    out = {"r0_se_ns": nan, "a_se_ns": nan, "peak_se_MBps": nan, "knee_bw_se_MBps": nan,
           "knee_bw_ci_low_MBps": nan, "knee_bw_ci_high_MBps": nan, "knee_latency_ci_low_ns": nan,
           "knee_latency_ci_high_ns": nan}
    cov = np.asarray(pcov if pcov is not None else np.nan, dtype=float)
    k = cov.shape[0] if cov.ndim == 2 else 0
    dof = m - k
    if k not in (2, 3) or dof <= 0 or not np.all(np.isfinite(cov)) or (r0 + a) <= 0:
        return out
    var = np.diag(cov)
    if np.any(var < 0):
        return out
    from scipy import stats

    t95 = float(stats.t.ppf(0.975, dof))
    se = np.sqrt(var)
    out["r0_se_ns"], out["a_se_ns"] = float(se[0]), float(se[1])
    if k == 3:
        out["peak_se_MBps"] = float(se[2])
    s = r0 + a
    grad = [peak * a / s**2, -peak * r0 / s**2] + ([r0 / s] if k == 3 else [])  # d(knee bw)/d(R0, a, peak)
    g = np.asarray(grad)
    knee_var = float(g @ cov @ g)
    if knee_var >= 0:
        knee_se = math.sqrt(knee_var)
        k_bw = peak * r0 / s
        out["knee_bw_se_MBps"] = knee_se
        out["knee_bw_ci_low_MBps"] = max(k_bw - t95 * knee_se, 0.0)
        out["knee_bw_ci_high_MBps"] = k_bw + t95 * knee_se
    out["knee_latency_ci_low_ns"] = max(2.0 * (r0 - t95 * float(se[0])), 0.0)
    out["knee_latency_ci_high_ns"] = 2.0 * (r0 + t95 * float(se[0]))
    return out
