"""Open-loop storage latency: queueing models of the mean response time, the SLO answer, unloaded latency.

Pure: numbers / DataFrames in, numbers / DataFrames out (no I/O). The fio-load-latency experiment offers
I/Os with Poisson arrivals (fio ``rate_iops`` + ``rate_process=poisson``) at rates of 10..98 % of the
device's X_max and measures the latency at each offered rate; this module explains those latencies.

Units are in the names: ``_iops`` (I/O per second, an arrival rate λ), ``_us`` (microseconds), ``_ns``
(nanoseconds), ``_pct`` (percent). ``lam_per_us`` is an arrival rate per microsecond (simulation only).

An *open* system, unlike fio's closed queue-depth sweep (``queueing.py``), does not hold the number of
I/Os in flight constant: the arrival rate λ is given and the queue grows as the device's utilisation

    ρ = λ · S / c          (λ in 1/s, S in µs:  ρ = λ_iops · S_us · 1e-6 / c)

approaches 1 (S: mean service time, c: number of servers; ρ ≥ 1 has no steady state). Models of the
mean response time R = S + Wq (µs), Wq the mean wait in the queue:

- M/M/1:  R = S / (1 − ρ)                                             (exponential service, cs² = 1)
- M/G/1 (Pollaczek–Khinchine):  R = S + ρ · S · (1 + cs²) / (2 (1 − ρ))
- M/D/1:  the M/G/1 formula with cs² = 0 (constant service time)
- M/G/c (Allen–Cunneen):  Wq ≈ C(c, a) / (c μ − λ) · (ca² + cs²) / 2,  μ = 1/S, a = λ S (Erlangs),
  ca² = 1 for Poisson arrivals; in µs:  Wq = C(c, a) · S / (c − a) · (1 + cs²) / 2.  Exact for M/M/c
  (cs² = 1) and for c = 1 (it is then Pollaczek–Khinchine); an approximation otherwise.

cs² is the squared coefficient of variation of the service time, Var(S) / E[S]²; C(c, a) is the Erlang C
probability that an arrival has to wait (``erlang_c``).

Each model function takes the scalar mean service time ``S_us`` and, keyword-only, exactly one of
``lambda_iops`` (arrival rate, IOPS) or ``rho`` (utilisation per server, dimensionless), each a scalar or
an array; it returns a float for a scalar, else an ndarray, and NaN — never a number — wherever
ρ ≥ 1 (or ρ < 0, or not finite). Bad model parameters raise ValueError naming the argument:
S_us ≤ 0, cs2 < 0, c < 1 (or not an integer).

A drive is not one server: an NVMe SSD spreads I/Os over parallel flash channels and dies (and several
submission queues), so it serves several I/Os at once. M/M/1 with S measured at a low rate predicts
saturation at 1/S IOPS — far below the X_max a drive reaches. ``fit_servers`` finds the effective
number of servers c of M/G/c that explains the measured latencies; c ≈ X_max · S (Little's law at
saturation). It is a model parameter, not a count of channels.

A discrete-event simulation of the same queues, to check these formulas against, is
memstor.analysis.queue_sim.simulate_queue.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

# --------------------------------------------------------------------------------------------------
# Argument checks
# --------------------------------------------------------------------------------------------------


def _check_S(S_us) -> float:
    """The mean service time as a float (µs); ValueError naming S_us unless finite and > 0."""
    try:
        s = float(S_us)
    except (TypeError, ValueError):
        raise ValueError(f"S_us (mean service time, us) must be a number > 0, got {S_us!r}") from None
    if not (math.isfinite(s) and s > 0):
        raise ValueError(f"S_us (mean service time, us) must be > 0, got {S_us!r}")
    return s


def _check_cs2(cs2) -> float:
    """The squared coefficient of variation as a float; ValueError naming cs2 unless finite and >= 0."""
    try:
        v = float(cs2)
    except (TypeError, ValueError):
        raise ValueError(f"cs2 (squared coefficient of variation of the service time) must be a number >= 0, got {cs2!r}") from None
    if not (math.isfinite(v) and v >= 0):
        raise ValueError(f"cs2 (squared coefficient of variation of the service time) must be >= 0, got {cs2!r}")
    return v


def check_servers(c, name: str = "c") -> int:
    """The number of servers as an int; ValueError naming it unless an integer >= 1."""
    if isinstance(c, bool):
        raise ValueError(f"{name} (number of servers) must be an integer >= 1, got {c!r}")
    try:
        f = float(c)
    except (TypeError, ValueError):
        raise ValueError(f"{name} (number of servers) must be an integer >= 1, got {c!r}") from None
    if not (math.isfinite(f) and f >= 1 and f == int(f)):
        raise ValueError(f"{name} (number of servers) must be an integer >= 1, got {c!r}")
    return int(f)


def _out(values: np.ndarray, scalar: bool):
    """A float for a scalar input, else the array."""
    return float(values) if scalar else values


def _rho(S_us: float, lambda_iops, rho, c: int = 1) -> tuple[np.ndarray, bool]:
    """(utilisation per server as a float array, input was a scalar) from exactly one of λ (IOPS) or ρ."""
    if (lambda_iops is None) == (rho is None):
        raise ValueError("give exactly one of lambda_iops (arrival rate, IOPS) or rho (utilisation per server)")
    if lambda_iops is not None:
        lam = np.asarray(lambda_iops, dtype=float)
        return lam * S_us * 1e-6 / c, lam.ndim == 0
    r = np.asarray(rho, dtype=float)
    return r, r.ndim == 0


def _stable(rho: np.ndarray) -> np.ndarray:
    """Mask of utilisations with a steady state: 0 <= ρ < 1 (NaN and inf excluded)."""
    with np.errstate(invalid="ignore"):
        return (rho >= 0) & (rho < 1)


# --------------------------------------------------------------------------------------------------
# Queueing models of the mean response time
# --------------------------------------------------------------------------------------------------


def utilisation(lambda_iops, S_us: float, c: int = 1):
    """Utilisation per server ρ = λ · S / c (dimensionless): λ in IOPS, S in µs (λ · S · 1e-6 / c).

    With c = 1 this is also the offered load a = λ S in Erlangs. Vectorised over lambda_iops.
    """
    s = _check_S(S_us)
    c = check_servers(c)
    lam = np.asarray(lambda_iops, dtype=float)
    return _out(lam * s * 1e-6 / c, lam.ndim == 0)


def mm1_response_us(S_us: float, *, lambda_iops=None, rho=None):
    """M/M/1 mean response time in µs: R = S / (1 − ρ); NaN for ρ ≥ 1.

    S_us: mean service time (µs); lambda_iops: arrival rate (IOPS) or rho: utilisation λ S (one of them,
    scalar or array).
    """
    s = _check_S(S_us)
    r, scalar = _rho(s, lambda_iops, rho)
    ok = _stable(r)
    out = np.full(r.shape, np.nan)
    out[ok] = s / (1.0 - r[ok])
    return _out(out, scalar)


def mg1_response_us(S_us: float, cs2: float, *, lambda_iops=None, rho=None):
    """M/G/1 mean response time in µs (Pollaczek–Khinchine): R = S + ρ S (1 + cs²) / (2 (1 − ρ)).

    S_us: mean service time (µs); cs2: squared coefficient of variation of the service time (0 constant,
    1 exponential); lambda_iops (IOPS) or rho (λ S): one of them, scalar or array. NaN for ρ ≥ 1.
    """
    s = _check_S(S_us)
    v = _check_cs2(cs2)
    r, scalar = _rho(s, lambda_iops, rho)
    ok = _stable(r)
    out = np.full(r.shape, np.nan)
    out[ok] = s + r[ok] * s * (1.0 + v) / (2.0 * (1.0 - r[ok]))
    return _out(out, scalar)


def md1_response_us(S_us: float, *, lambda_iops=None, rho=None):
    """M/D/1 mean response time in µs (constant service time): R = S + ρ S / (2 (1 − ρ)); NaN for ρ ≥ 1."""
    return mg1_response_us(S_us, 0.0, lambda_iops=lambda_iops, rho=rho)


def erlang_c(c: int, a):
    """Erlang C: probability that an arrival waits in M/M/c, for c servers and offered load a = λ S (Erlangs).

    Computed from the Erlang B recursion B(0) = 1, B(k) = a B(k−1) / (k + a B(k−1)) — every term in [0, 1],
    no factorials or powers, stable for c in the hundreds and beyond — then C = B / (1 − ρ (1 − B)),
    ρ = a / c. Vectorised over a; NaN where ρ ≥ 1 (or a < 0, or not finite). C(1, a) = a; C(2, 1) = 1/3.
    """
    c = check_servers(c)
    a_arr = np.asarray(a, dtype=float)
    scalar = a_arr.ndim == 0
    a_arr = np.atleast_1d(a_arr)
    rho = a_arr / c
    ok = _stable(rho)
    out = np.full(a_arr.shape, np.nan)
    x = a_arr[ok]
    b = np.ones_like(x)
    for k in range(1, c + 1):
        ab = x * b
        b = ab / (k + ab)
    out[ok] = b / (1.0 - rho[ok] * (1.0 - b))
    return float(out[0]) if scalar else out


def mgc_response_us(S_us: float, cs2: float, c: int, *, lambda_iops=None, rho=None):
    """M/G/c mean response time in µs (Allen–Cunneen): R = S + C(c, a) · S / (c − a) · (1 + cs²) / 2.

    S_us: mean service time of one server (µs); cs2: squared coefficient of variation of the service time;
    c: number of servers (integer >= 1); lambda_iops: arrival rate (IOPS) or rho: utilisation per server
    ρ = λ S / c (one of them, scalar or array); a = λ S = c ρ. Poisson arrivals (ca² = 1). NaN for ρ ≥ 1.
    Exact for c = 1 (Pollaczek–Khinchine) and for cs² = 1 (M/M/c); an approximation otherwise. Against
    a simulation (tests/test_openloop_models.py; c = 2..8, ρ = 0.5..0.7) R was within 2 % for cs² = 0
    (slightly high) and within about 3 % on average, 5.5 % at worst, for a lognormal service with cs² = 2
    (low); Wq alone can be off by 25 % where it is small (low ρ, many servers).
    """
    s = _check_S(S_us)
    v = _check_cs2(cs2)
    c = check_servers(c)
    r, scalar = _rho(s, lambda_iops, rho, c)
    r1 = np.atleast_1d(r)
    ok = _stable(r1)
    out = np.full(r1.shape, np.nan)
    a = c * r1[ok]
    wq = erlang_c(c, a) * s / (c - a) * (1.0 + v) / 2.0
    out[ok] = s + wq
    return float(out[0]) if scalar else out.reshape(r.shape)


# --------------------------------------------------------------------------------------------------
# Service time from a fio json+ latency histogram
# --------------------------------------------------------------------------------------------------


def service_time_stats(bins: Mapping) -> tuple[float, float]:
    """(mean in µs, squared coefficient of variation cs²) of a latency histogram {latency_ns: count}.

    bins: fio json+ ``clat_ns.bins`` (or ``lat_ns.bins``; fio writes lat bins only with
    ``lat_percentiles=1``) as in ``memstor.parse.fio.clat_bins`` ({int ns: int count}); keys may also be
    the strings of the raw JSON, and a whole ``clat_ns`` dict (with a ``bins`` key) is accepted. Each key
    is the representative latency of one of fio's buckets (64 per power of two, so the moments are within
    about 1 % of the exact ones). cs² = Var / mean², the population variance of the histogram.
    For a service time, use the histogram of a low-rate point (no queueing: clat ≈ the device's service).
    Raises ValueError for an empty histogram, a negative count or a latency that is not a finite
    number >= 0.
    """
    if isinstance(bins, Mapping) and isinstance(bins.get("bins"), Mapping):
        bins = bins["bins"]
    if not isinstance(bins, Mapping) or not bins:
        raise ValueError("bins must be a non-empty {latency_ns: count} histogram")
    try:
        lat = np.array([float(k) for k in bins.keys()], dtype=float)
        cnt = np.array([float(v) for v in bins.values()], dtype=float)
    except (TypeError, ValueError):
        raise ValueError("bins must map latency_ns (numbers) to counts (numbers)") from None
    if not np.all(np.isfinite(lat)) or np.any(lat < 0):
        raise ValueError("bins: every latency_ns key must be a finite number >= 0")
    if not np.all(np.isfinite(cnt)) or np.any(cnt < 0):
        raise ValueError("bins: every count must be a finite number >= 0")
    n = float(cnt.sum())
    if n <= 0:
        raise ValueError("bins: the histogram holds no samples (all counts are 0)")
    mean_ns = float(np.sum(lat * cnt) / n)
    if mean_ns <= 0:
        raise ValueError("bins: the mean latency is 0 ns; no service time to model")
    var_ns2 = float(np.sum(cnt * (lat - mean_ns) ** 2) / n)
    return mean_ns / 1000.0, var_ns2 / mean_ns**2


# --------------------------------------------------------------------------------------------------
# Effective number of servers, and the model table
# --------------------------------------------------------------------------------------------------


@dataclass
class ServerFit:
    """The effective number of servers c of M/G/c that best explains measured mean latencies.

    c: the fitted number of servers; err_pct: per input point, 100 (model − measured) / measured at c
    (NaN for a point not used: rate or latency missing, not finite, or latency <= 0); rms_err_pct: root
    mean square of err_pct over the used points; n_points: points used; c_min: the smallest c whose model
    is finite at every used point (c > λ_max S); at_c_max: c is the largest candidate (the best c may be
    larger: raise c_max); rms_err_pct_by_c: rms_err_pct for c = 1..c_max (index c − 1; NaN below c_min).
    """

    c: int
    err_pct: np.ndarray
    rms_err_pct: float
    n_points: int
    c_min: int
    at_c_max: bool
    rms_err_pct_by_c: np.ndarray = field(repr=False, default_factory=lambda: np.array([]))


def fit_servers(lambda_iops, measured_R_us, S_us: float, cs2: float, c_max: int = 128) -> ServerFit:
    """Fit the effective number of servers c (integer 1..c_max) of M/G/c to measured mean latencies.

    lambda_iops: arrival rate per point (IOPS; the achieved rate of an open-loop point); measured_R_us:
    measured mean response time per point (µs); S_us, cs2: the service time's mean (µs) and squared
    coefficient of variation (``service_time_stats``); c_max: the largest c tried.

    The criterion is least squares of the relative error (model − measured) / measured over the used
    points. A c whose model is infinite (ρ = λ S / c ≥ 1) at a measured point is ruled out: the device
    served that rate in a steady state, so it has more than λ S servers. Pass only points in a steady
    state (drop overloaded ones), else the fit is pushed to a larger c. Ties go to the smaller c.

    Why c: a drive with parallel flash channels and dies is not one server; M/M/1 with its QD1 service
    time saturates at 1/S IOPS while the drive reaches many times that. The fitted c is an effective
    parallelism of the model, not the channel count. Raises ValueError when no point is usable or no
    c <= c_max keeps the model finite at every point.
    """
    s = _check_S(S_us)
    v = _check_cs2(cs2)
    c_max = check_servers(c_max, "c_max")
    lam = np.atleast_1d(np.asarray(lambda_iops, dtype=float))
    meas = np.atleast_1d(np.asarray(measured_R_us, dtype=float))
    if lam.shape != meas.shape:
        raise ValueError(f"lambda_iops and measured_R_us differ in length ({lam.size} vs {meas.size})")
    used = np.isfinite(lam) & (lam >= 0) & np.isfinite(meas) & (meas > 0)
    n = int(used.sum())
    if n == 0:
        raise ValueError("no usable point: need a finite lambda_iops >= 0 and a finite measured_R_us > 0")
    lam_u, meas_u = lam[used], meas[used]
    a_max = float(lam_u.max()) * s * 1e-6
    c_min = int(math.floor(a_max)) + 1
    if c_min > c_max:
        raise ValueError(f"c_max = {c_max} servers cannot carry the offered load {a_max:.3g} Erlangs (λ S); raise c_max above {a_max:.3g}")
    rms_by_c = np.full(c_max, np.nan)
    for c in range(c_min, c_max + 1):
        pred = mgc_response_us(s, v, c, lambda_iops=lam_u)
        if not np.all(np.isfinite(pred)):  # ρ within rounding of 1 at c_min
            continue
        rel = (pred - meas_u) / meas_u
        rms_by_c[c - 1] = 100.0 * math.sqrt(float(np.mean(rel**2)))
    if not np.any(np.isfinite(rms_by_c)):
        raise ValueError(f"no c <= c_max = {c_max} keeps the M/G/c model finite at every point; raise c_max")
    best = int(np.nanargmin(rms_by_c)) + 1
    err = np.full(lam.shape, np.nan)
    err[used] = 100.0 * (mgc_response_us(s, v, best, lambda_iops=lam_u) - meas_u) / meas_u
    return ServerFit(c=best, err_pct=err, rms_err_pct=float(rms_by_c[best - 1]), n_points=n,
                     c_min=int(np.argmax(np.isfinite(rms_by_c))) + 1, at_c_max=best == c_max,
                     rms_err_pct_by_c=rms_by_c)


#: The columns model_table adds, in order.
MODEL_COLUMNS = [
    "service_mean_us", "service_cs2", "servers_c", "rho_1", "rho_c",
    "mm1_us", "md1_us", "mg1_us", "mgc_us",
    "mm1_err_pct", "md1_err_pct", "mg1_err_pct", "mgc_err_pct",
]


def model_table(points, S_us: float, cs2: float, c: int = 1) -> pd.DataFrame:
    """Each open-loop point with every model's predicted mean latency and its relative error.

    points: a DataFrame (or anything pd.DataFrame accepts) with ``achieved_iops`` (the arrival rate λ the
    device served, IOPS) and ``lat_mean_us`` (measured mean latency, µs), optionally ``offered_iops``
    (IOPS; NaN when absent) and any identifying columns (host, rw, ...). S_us, cs2: the service time's mean
    (µs) and squared coefficient of variation; c: servers of the M/G/c model (``fit_servers``).

    Returns one row per point: the columns of ``points`` (``offered_iops`` added when absent), then
    service_mean_us, service_cs2, servers_c (the model inputs, repeated); rho_1 = λ S (utilisation of one
    server, the load of M/M/1, M/D/1, M/G/1); rho_c = λ S / c (per server of M/G/c); mm1_us, md1_us,
    mg1_us, mgc_us: predicted mean response time (µs; empty where the model has no steady state, ρ ≥ 1);
    mm1_err_pct, md1_err_pct, mg1_err_pct, mgc_err_pct: 100 (model − measured) / measured (empty where
    the prediction or the measurement is missing). The models use the achieved rate: in a steady state it
    equals the offered rate; an overloaded point's offered rate has no steady state to model.
    """
    s = _check_S(S_us)
    v = _check_cs2(cs2)
    c = check_servers(c)
    df = pd.DataFrame(points).copy()
    for col in ("achieved_iops", "lat_mean_us"):
        if col not in df.columns:
            raise ValueError(f"points: missing column {col!r} (needs achieved_iops, lat_mean_us)")
    if "offered_iops" not in df.columns:
        df["offered_iops"] = np.nan
    lam = pd.to_numeric(df["achieved_iops"], errors="coerce").to_numpy(dtype=float)
    meas = pd.to_numeric(df["lat_mean_us"], errors="coerce").to_numpy(dtype=float)
    meas = np.where(np.isfinite(meas) & (meas > 0), meas, np.nan)
    df["service_mean_us"] = s
    df["service_cs2"] = v
    df["servers_c"] = c
    df["rho_1"] = lam * s * 1e-6
    df["rho_c"] = lam * s * 1e-6 / c
    preds = {
        "mm1": mm1_response_us(s, lambda_iops=lam),
        "md1": md1_response_us(s, lambda_iops=lam),
        "mg1": mg1_response_us(s, v, lambda_iops=lam),
        "mgc": mgc_response_us(s, v, c, lambda_iops=lam),
    }
    for name, pred in preds.items():
        df[f"{name}_us"] = pred
    for name, pred in preds.items():
        df[f"{name}_err_pct"] = 100.0 * (pred - meas) / meas
    return df


# --------------------------------------------------------------------------------------------------
# The SLO answer: the highest rate that meets a p99 target
# --------------------------------------------------------------------------------------------------


def slo_max_iops(achieved_iops, p99_us, target_us: float, overloaded=None) -> tuple[float | None, bool]:
    """(highest IOPS with p99 <= target_us, censored): the rate an SLO on the 99th percentile allows.

    achieved_iops: measured rate per point (IOPS); p99_us: its 99th percentile latency (µs); target_us:
    the SLO (µs); overloaded: optional booleans per point — an overloaded point (the device did not keep
    up with the offered rate) counts as a miss at its achieved rate and above, whatever its p99 (which may
    be missing), and is never an end of the interpolation.

    Rule — the highest rate below which every measured point meets the target: the points are sorted by
    achieved IOPS (a miss after a meet at an equal rate); at the first miss (p99 > target, or overloaded)
    the answer is interpolated linearly in p99 between the last meeting point before it (x_a, p_a) and
    that miss (x_b, p_b): x_a + (target − p_a) (x_b − x_a) / (p_b − p_a), or x_a itself when the miss is
    overloaded. Points above the first miss are not looked at, so a non-monotonic p99 that meets the target
    again at a higher rate does not raise the answer. Returns (highest measured rate, True) — censored,
    the true limit lies beyond the measurements — when every point meets the target; (None, False) when
    the lowest-rate point already misses it. Points whose rate, or (not overloaded) p99, is missing or not
    finite are skipped; ValueError when none is left, or target_us is not > 0.
    """
    try:
        t = float(target_us)
    except (TypeError, ValueError):
        raise ValueError(f"target_us (p99 target, us) must be a number > 0, got {target_us!r}") from None
    if not (math.isfinite(t) and t > 0):
        raise ValueError(f"target_us (p99 target, us) must be > 0, got {target_us!r}")
    x = np.atleast_1d(np.asarray(achieved_iops, dtype=float))
    p = np.atleast_1d(np.asarray(p99_us, dtype=float))
    if x.shape != p.shape:
        raise ValueError(f"achieved_iops and p99_us differ in length ({x.size} vs {p.size})")
    ov = np.zeros(x.shape, dtype=bool) if overloaded is None else np.atleast_1d(_as_bool(overloaded))
    if ov.shape != x.shape:
        raise ValueError(f"overloaded and achieved_iops differ in length ({ov.size} vs {x.size})")
    usable = np.isfinite(x) & (x >= 0) & (ov | np.isfinite(p))
    if not usable.any():
        raise ValueError("no usable point: need a finite achieved_iops and (unless overloaded) a finite p99_us")
    x, p, ov = x[usable], p[usable], ov[usable]
    miss = ov | (p > t)
    order = np.lexsort((miss, x))  # by rate, a meet before a miss at an equal rate
    x, p, ov, miss = x[order], p[order], ov[order], miss[order]
    if not miss.any():
        return float(x[-1]), True
    i = int(np.argmax(miss))
    if i == 0:
        return None, False
    xa, pa = float(x[i - 1]), float(p[i - 1])
    if ov[i]:
        return xa, False
    xb, pb = float(x[i]), float(p[i])
    return xa + (t - pa) * (xb - xa) / (pb - pa), False


def _as_bool(values) -> np.ndarray:
    """Booleans from bools, numbers or CSV strings ("True"/"False"/"1"/"0"/""); missing is False."""
    out = []
    for v in np.atleast_1d(np.asarray(values, dtype=object)):
        if isinstance(v, str):
            out.append(v.strip().lower() in ("true", "1", "yes", "t", "y"))
        elif v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
            out.append(False)
        else:
            out.append(bool(v))
    return np.array(out, dtype=bool)


#: The columns of slo_table, in order.
SLO_COLUMNS = ["host", "rw", "target_p99_us", "max_iops", "censored"]


def slo_table(df: pd.DataFrame, targets_us) -> pd.DataFrame:
    """The SLO table: per host × rw × p99 target, the highest achieved IOPS that meets it.

    df: open-loop points with columns host, rw, achieved_iops (IOPS), lat_p99_us (µs) and overloaded
    (bool; "True"/"False" strings from a CSV are read, empty is False); targets_us: one p99 target or
    several (µs, each > 0).

    Returns columns ``host, rw, target_p99_us, max_iops, censored``, one row per host × rw × target
    (groups sorted, targets in the order given). max_iops and censored follow ``slo_max_iops``: overloaded
    points are excluded from the interpolation but count as misses at and above their achieved rate;
    max_iops is empty (NaN) when even the lowest rate misses the target or the group has no usable point
    (censored False); censored True means every point met the target (max_iops = highest measured rate).
    """
    missing = [c for c in ("host", "rw", "achieved_iops", "lat_p99_us", "overloaded") if c not in df.columns]
    if missing:
        raise ValueError(f"df: missing column(s) {', '.join(missing)} (needs host, rw, achieved_iops, lat_p99_us, overloaded)")
    targets = [float(t) for t in np.atleast_1d(np.asarray(targets_us, dtype=float))]
    for t in targets:
        if not (math.isfinite(t) and t > 0):
            raise ValueError(f"targets_us: every p99 target must be > 0 us, got {t}")
    rows = []
    for (host, rw), g in df.groupby(["host", "rw"], sort=True, dropna=False):
        x = pd.to_numeric(g["achieved_iops"], errors="coerce").to_numpy(dtype=float)
        p = pd.to_numeric(g["lat_p99_us"], errors="coerce").to_numpy(dtype=float)
        ov = _as_bool(g["overloaded"].to_numpy(dtype=object))
        for t in targets:
            try:
                max_iops, censored = slo_max_iops(x, p, t, ov)
            except ValueError:
                max_iops, censored = None, False
            rows.append({"host": host, "rw": rw, "target_p99_us": t,
                         "max_iops": np.nan if max_iops is None else max_iops, "censored": bool(censored)})
    out = pd.DataFrame(rows, columns=SLO_COLUMNS)
    out["max_iops"] = out["max_iops"].astype(float)
    out["censored"] = out["censored"].astype(bool)
    return out


# --------------------------------------------------------------------------------------------------
# Unloaded latency
# --------------------------------------------------------------------------------------------------


def unloaded_latency(df: pd.DataFrame, *, util_col: str = "offered_util", lat_col: str = "lat_mean_us",
                     moderate_util: float = 0.25, anomaly_pct: float = 10.0) -> dict:
    """The unloaded mean latency of one device × workload, taken at a moderate offered rate.

    df: the open-loop points of ONE device and workload (group first), with util_col (offered load,
    the offered rate as a fraction of X_max, 0..1) and lat_col (mean latency, µs). Rows with either
    missing are skipped; rows at the same utilisation (repetitions) are averaged.

    The point used is the lowest offered load, unless its latency shows the low-rate anomaly (more than
    anomaly_pct above the moderate point's, the lowest offered load >= moderate_util, default 0.25): at very
    low rates a drive drops into power states (NVMe APST) and the CPU into idle states between I/Os, and the
    wake-up adds latency that is not service time; then the moderate point is used. At 25 % of X_max a
    multi-server device queues little (an effective single server would already add ρ/(1 − ρ)). The lightest
    load is not passed over where it is faster (fifth read S9-bare M-4: randread u10 held at 130.1 µs while
    u50's 205 µs was quoted as 'the lightest load that held').

    Returns {lat_unloaded_us: mean latency at the point used (µs), util_used: its utilisation,
    lat_lowest_rate_us: mean latency at the lowest utilisation (µs), util_lowest: that utilisation,
    low_rate_excess_pct: 100 (lat_lowest − lat_unloaded) / lat_unloaded, low_rate_anomaly:
    low_rate_excess_pct > anomaly_pct (default 10 %), n_points: rows used}. ValueError when a column is
    missing or no row is usable.
    """
    for col, kw in ((util_col, "util_col"), (lat_col, "lat_col")):
        if col not in df.columns:
            raise ValueError(f"df: missing column {col!r} (set {kw}=)")
    u = pd.to_numeric(df[util_col], errors="coerce").to_numpy(dtype=float)
    lat = pd.to_numeric(df[lat_col], errors="coerce").to_numpy(dtype=float)
    ok = np.isfinite(u) & (u >= 0) & np.isfinite(lat) & (lat > 0)
    if not ok.any():
        raise ValueError(f"df: no row with a finite {util_col} >= 0 and {lat_col} > 0")
    by_util = pd.Series(lat[ok]).groupby(u[ok]).mean().sort_index()
    utils = by_util.index.to_numpy(dtype=float)
    moderate = utils[utils >= moderate_util]
    u_mod = float(moderate[0]) if moderate.size else float(utils[0])
    u_low = float(utils[0])
    lat_mod, lat_low = float(by_util.loc[u_mod]), float(by_util.loc[u_low])
    excess = 100.0 * (lat_low - lat_mod) / lat_mod
    anomaly = bool(excess > anomaly_pct)
    return {
        "lat_unloaded_us": lat_mod if anomaly else lat_low,
        "util_used": u_mod if anomaly else u_low,
        "lat_lowest_rate_us": lat_low,
        "util_lowest": u_low,
        "low_rate_excess_pct": excess,
        "low_rate_anomaly": anomaly,
        "n_points": int(ok.sum()),
    }


__all__ = [
    "MODEL_COLUMNS", "SLO_COLUMNS", "ServerFit", "erlang_c", "fit_servers", "md1_response_us",
    "mg1_response_us", "mgc_response_us", "mm1_response_us", "model_table", "service_time_stats",
    "check_servers", "slo_max_iops", "slo_table", "unloaded_latency", "utilisation",
]
