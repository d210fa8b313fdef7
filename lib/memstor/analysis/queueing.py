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
form R = R0 + a * rho / (1 - rho), rho = bandwidth / peak bandwidth.
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
    saturated: the sweep reaches beyond the fitted knee (else X_max is only a lower estimate).
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
    )


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
            popt, _ = curve_fit(
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
            popt, _ = curve_fit(model, bw, lat, p0=[r_lo, a0], bounds=([0.0, 0.0], [np.inf, np.inf]),
                                maxfev=20000)
            r0, a = (float(v) for v in popt)
    k_rho = knee_rho(r0, a) if (r0 + a) > 0 else float("nan")
    k_bw = k_rho * peak
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
    )
