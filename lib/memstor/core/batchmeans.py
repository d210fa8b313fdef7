"""A confidence interval from ONE run: batch means over fio's interval logs (issue 18, part 1).

A run of a fio point gives, per log window of ``log_avg_msec`` ms (0.25-1 s), the IOPS, the bandwidth and
the mean total latency of that window. Successive windows are correlated (a drive's background work, the
page cache, a neighbour VM), so their plain standard error understates the uncertainty of the run's
mean. Batch means (Law & Kelton, "Simulation modeling and analysis", ch. 9.5; Fishman's LBATCH) groups
consecutive windows into batches large enough that the batch means are nearly uncorrelated and uses
their spread instead:

1. The first ``ramp_intervals`` window(s) are dropped (the job's start: file open, queue filling) and
   recorded in ``ramp_excluded``; by default none (:data:`RAMP_INTERVALS`: the tool's own warm-up).
2. Batch size b (windows per batch) starts at 1 and grows while the lag-1 autocorrelation of the batch
   means is above ``max_lag1`` (0.2) and at least ``min_batches`` (10) batches remain. Growth is by
   DOUBLING (1, 2, 4, ...), then one last try at the largest admissible size ``n // min_batches``:
   every try is a noisy test of "uncorrelated" (the lag-1 estimate of k batches has a standard error
   of about 1/sqrt(k) and a bias of about -1/k), and stopping at the first pass of many tries (+1
   growth: 1, 2, 3, 4, ... ) picks too small a batch by chance more often; doubling tries only
   log2(n / min_batches) sizes, and a doubled batch size halves the correlation left between batch
   means (for a series whose correlation dies off within a batch), so each step is a real change.
   When the windows leave over a remainder (n not a multiple of b) the remainder is dropped from the
   START of the series (next to the ramp, where a transient is most likely), recorded in
   ``unbatched``.
3. If the lag-1 correlation never gets to ``max_lag1`` the interval is still computed at the largest
   admissible batch size, with status ``correlated`` (it is then likely too narrow): :func:`batch_means_ci`
   returns it for callers that want to see it, but NO published interval comes from correlated batches
   (issue 38: an idle-latency headline's interval came from batches with lag-1 0.74 against this rule):
   :func:`independent` empties its bounds, and :func:`ci_columns` and the memory sub-window columns
   (memstor.analysis.memory_curves) publish empty bounds with the reason in ``ci_note`` ("correlated (lag-1
   ...)"); tables written before keep numbers, which :func:`correlated_metrics` finds in their note. Fewer
   than ``min_batches`` (10) larger batches are not tried: the lag-1 estimate of fewer batches has a
   standard error of 1/sqrt(k) > 0.3, so "small" could not be told from chance. With fewer than
   ``min_batches`` windows (after the ramp) the interval is EMPTY (NaN bounds, status
   ``too_few_batches``), never a number; the mean is still given.
4. The interval is Student-t with (batches - 1) degrees of freedom around the mean of the batched
   windows.

Weights (each window's I/O count, for the mean latency): the run's mean latency is the I/O-weighted mean
of the windows' means (total latency / total I/Os: a window with more I/Os counts more), a RATIO
estimator R = sum(y) / sum(w) with y = w * x (a window's total latency) and w its I/O count. Per batch j,
Y_j = sum of y, W_j = sum of w, batch mean R_j = Y_j / W_j. Its variance is the ratio estimator's
(delta method; Cochran, "Sampling techniques", 6.3), from the batch residuals d_j = Y_j - R * W_j =
W_j * (R_j - R):

    var(R) = sum(d_j^2) / (k (k - 1) Wbar^2),   Wbar = mean of W_j,

i.e. weighted batch means: the deviations of the batch means from R, weighted by each batch's share of
the I/Os. With equal weights it is exactly the unweighted batch-means variance s^2 / k. The lag-1
autocorrelation then is that of the residuals d_j (the weighted deviations of the batch means, which is
what enters the variance); unweighted it is the usual lag-1 autocorrelation of the batch means.

The per-window series of a fio point (:data:`INTERVAL_COLUMNS`) comes from its interval logs
(memstor.parse.fio_intervals.point_intervals) or its status snapshots (memstor.parse.fio_status); loadlat's
sub-windows use :func:`batch_means_ci` directly (memstor.analysis.memory_curves). This module is the
shared statistics (the bottom layer): parse, measure (the precision stop rule), experiments and analysis
all use it.

Units: whatever the values are in (IOPS in 1/s, MB/s = 10^6 B/s, latency in us); the interval is in the
same unit. Pure numpy/scipy/pandas functions, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

METHOD = "batch-means"
OK, CORRELATED, TOO_FEW = "ok", "correlated", "too_few_batches"
#: Defaults of the issue's rule.
MIN_BATCHES = 10
MAX_LAG1 = 0.2
#: Windows dropped at the start by default: none. The warm-up is the tool's own (fio's ``ramp_time``, which
#: its JSON value leaves out and its interval logs too: measured, fio-3.33, ramp_time=2 s, runtime=3 s,
#: log_avg_msec=500: six iops-log entries at 499 ... 2999 ms, i.e. the post-ramp run only), so the interval
#: describes the same windows as the value it stands beside. Dropping one more window here made a quick
#: run's interval leave out a window its value kept (20,010 IOPS beside [20,541, 21,199]).
RAMP_INTERVALS = 0
#: metric of :func:`point_intervals` -> column prefix of the tidy table's interval columns.
CI_METRICS = (("iops", "iops"), ("bw_MBps", "bw_MBps"), ("lat_mean_us", "lat_mean_us"))
#: The interval columns of a fio tidy table (issue 18), in order.
CI_COLUMNS = ("iops_ci_low", "iops_ci_high", "bw_MBps_ci_low", "bw_MBps_ci_high", "lat_mean_us_ci_low",
              "lat_mean_us_ci_high", "ci_method", "ci_note")
#: Columns of :func:`point_intervals`.
INTERVAL_COLUMNS = ("window", "time_ms", "direction", "iops", "bw_MBps", "lat_mean_us", "ios", "lat_ios", "jobs")


@dataclass(frozen=True)
class BatchMeansCI:
    """The batch-means interval of one series (units: those of the values).

    mean: the (weighted) mean of the batched windows; ci_low/ci_high/half_width: the interval (NaN when
    status is too_few_batches); n_intervals: windows after the ramp; n_batches and batch_size (windows
    per batch): the batching used; unbatched: windows left over and dropped at the start; lag1: lag-1
    autocorrelation of the batch means (NaN without batches); ramp_excluded: windows dropped at the start
    as ramp; status: ok | correlated | too_few_batches; confidence: e.g. 0.95.
    """

    mean: float
    ci_low: float
    ci_high: float
    half_width: float
    n_intervals: int
    n_batches: int
    batch_size: int
    lag1: float
    ramp_excluded: int
    status: str
    unbatched: int = 0
    confidence: float = 0.95
    method: str = METHOD

    @property
    def finite(self) -> bool:
        """True when the interval holds numbers (status ok or correlated)."""
        return math.isfinite(self.ci_low) and math.isfinite(self.ci_high)

    @property
    def half_width_pct(self) -> float:
        """Half-width as % of the mean (NaN when empty or the mean is 0)."""
        return 100.0 * self.half_width / abs(self.mean) if self.finite and self.mean else math.nan


def _as_series(values, weights) -> tuple[np.ndarray, np.ndarray | None]:
    """Values (and weights) as float arrays; ValueError for non-finite values or bad weights."""
    x = np.asarray(values, dtype=np.float64).ravel()
    if not np.all(np.isfinite(x)):
        raise ValueError("batch_means_ci: every value must be a finite number (no NaN/inf in the series)")
    if weights is None:
        return x, None
    w = np.asarray(weights, dtype=np.float64).ravel()
    if w.shape != x.shape:
        raise ValueError(f"batch_means_ci: {w.size} weights for {x.size} values")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("batch_means_ci: weights must be finite and >= 0 (I/O counts)")
    return x, w


def lag1_autocorrelation(d: np.ndarray) -> float:
    """Lag-1 autocorrelation of deviations ``d`` from their (weighted) mean: sum d_i d_(i+1) / sum d_i^2.

    0.0 when the series is constant (no variation to correlate); NaN with fewer than 2 values."""
    d = np.asarray(d, dtype=np.float64)
    if d.size < 2:
        return math.nan
    den = float(np.dot(d, d))
    if den <= 0.0:
        return 0.0
    return float(np.dot(d[:-1], d[1:]) / den)


def _batches(x: np.ndarray, w: np.ndarray | None, b: int) -> tuple[float, np.ndarray, int]:
    """(mean R, residuals d_j, unbatched) of batch size ``b``: the n % b first windows left out.

    Unweighted: d_j = B_j - mean(B) (batch-mean deviations). Weighted: d_j = (Y_j - R W_j) / Wbar, the
    ratio residuals scaled so that var(R) = sum d_j^2 / (k (k - 1)) in both cases."""
    n = x.size
    k = n // b
    skip = n - k * b
    xs = x[skip:].reshape(k, b)
    if w is None:
        bm = xs.mean(axis=1)
        mean = float(bm.mean())
        return mean, bm - mean, skip
    ws = w[skip:].reshape(k, b)
    W = ws.sum(axis=1)
    Y = (xs * ws).sum(axis=1)
    total = float(W.sum())
    if total <= 0.0:
        raise ValueError("batch_means_ci: the weights (I/O counts) sum to 0: no weighted mean")
    mean = float(Y.sum() / total)
    return mean, (Y - mean * W) / (total / k), skip


def _sizes(n: int, min_batches: int):
    """Batch sizes tried: 1, 2, 4, ... while n // b >= min_batches, then n // min_batches if larger."""
    b = 1
    last = 0
    while n // b >= min_batches:
        yield b
        last = b
        b *= 2
    top = n // min_batches
    if top > last:
        yield top


def batch_means_ci(values: Sequence[float] | np.ndarray, weights: Sequence[float] | np.ndarray | None = None, *,
                   min_batches: int = MIN_BATCHES, max_lag1: float = MAX_LAG1, ramp_intervals: int = RAMP_INTERVALS,
                   confidence: float = 0.95) -> BatchMeansCI:
    """The batch-means confidence interval of the mean of one run's per-window series (module docstring).

    values: one value per log window in time order (IOPS 1/s, MB/s or mean latency us: the interval is in
    that unit); weights: per-window I/O counts for an I/O-weighted mean (the mean latency), else None;
    min_batches: fewest batches for an interval (fewer: empty interval, status too_few_batches);
    max_lag1: the lag-1 autocorrelation of the batch means the batch size is grown to reach (else status
    correlated); ramp_intervals: windows dropped at the start; confidence: the interval's level.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"batch_means_ci: confidence={confidence!r} is not in (0, 1)")
    if int(min_batches) != min_batches or min_batches < 2:
        raise ValueError(f"batch_means_ci: min_batches={min_batches!r} must be an integer >= 2")
    if int(ramp_intervals) != ramp_intervals or ramp_intervals < 0:
        raise ValueError(f"batch_means_ci: ramp_intervals={ramp_intervals!r} must be an integer >= 0")
    min_batches, ramp = int(min_batches), int(ramp_intervals)
    x, w = _as_series(values, weights)
    ramp_excluded = min(ramp, x.size)
    x = x[ramp_excluded:]
    w = None if w is None else w[ramp_excluded:]
    n = int(x.size)
    nan = math.nan
    if n < min_batches:
        mean = nan
        if n:
            mean = float(np.average(x, weights=w)) if w is not None and w.sum() > 0 else \
                (float(x.mean()) if w is None else nan)
        return BatchMeansCI(mean, nan, nan, nan, n, n, 1 if n else 0, nan, ramp_excluded, TOO_FEW,
                            confidence=confidence)
    status = CORRELATED
    for b in _sizes(n, min_batches):
        mean, d, skip = _batches(x, w, b)
        r1 = lag1_autocorrelation(d)
        if r1 <= max_lag1:
            status = OK
            break
    k = d.size
    from scipy import stats  # slow first import: only when there is an interval to compute

    se = math.sqrt(float(np.dot(d, d)) / (k * (k - 1)))
    half = float(stats.t.ppf(0.5 + confidence / 2.0, k - 1)) * se
    return BatchMeansCI(mean, mean - half, mean + half, half, n, k, b, r1, ramp_excluded, status, skip,
                        confidence)


def independent(ci: BatchMeansCI) -> BatchMeansCI:
    """``ci`` when its batches are independent (status ok) or it has no interval anyway; a correlated one
    with NaN bounds and half-width (mean, batching, lag-1 and status kept): the interval to publish."""
    if ci.status != CORRELATED:
        return ci
    nan = math.nan
    return BatchMeansCI(ci.mean, nan, nan, nan, ci.n_intervals, ci.n_batches, ci.batch_size, ci.lag1,
                        ci.ramp_excluded, ci.status, ci.unbatched, ci.confidence, ci.method)


def correlated_metrics(note) -> dict[str, float]:
    """{metric name as the note writes it: lag-1} of the "correlated (lag-1 ...)" part of a ``ci_note``
    (:func:`ci_notes`: fio's ``iops``, ``bw_MBps``, ``lat_mean_us``; loadlat's ``latency``, ``bandwidth``);
    {} for any other note or a missing one."""
    out: dict[str, float] = {}
    for part in str(note or "").split(";"):
        part = part.strip()
        if not part.startswith("correlated (lag-1 "):
            continue
        words = part.removeprefix("correlated (lag-1 ").rstrip(")").replace(",", " ").split()
        for name, value in zip(words[:-1], words[1:]):
            if name in ("at", "of", "batches") or not name[0].isalpha():
                continue
            try:
                out[name] = float(value)
            except ValueError:
                continue
    return out


def total_intervals(intervals: pd.DataFrame) -> pd.DataFrame:
    """Direction ``"total"`` of a mixed job's :func:`point_intervals` frame (read + write of each window):
    IOPS, MB/s and I/Os summed, the mean latency weighted by ``lat_ios``; a window is kept only when every
    direction of the frame logged it (as memstor.analysis.summary.with_totals does for the whole run)."""
    dirs = intervals["direction"].nunique()
    df = intervals.assign(wv=intervals["lat_mean_us"] * intervals["lat_ios"])
    g = df.groupby("window").agg(time_ms=("time_ms", "first"), iops=("iops", "sum"), bw_MBps=("bw_MBps", "sum"),
                                 ios=("ios", "sum"), wv=("wv", "sum"), lat_ios=("lat_ios", "sum"),
                                 jobs=("jobs", "max"), n=("direction", "nunique"),
                                 lat_n=("lat_mean_us", "count"), bw_n=("bw_MBps", "count"))
    g = g[g["n"] == dirs].copy()
    g["bw_MBps"] = g["bw_MBps"].where(g["bw_n"] == dirs)
    lat_ok = (g["lat_n"] == dirs) & (g["lat_ios"] > 0)
    g["lat_mean_us"] = (g["wv"] / g["lat_ios"]).where(lat_ok)
    g["lat_ios"] = g["lat_ios"].where(lat_ok)
    g["direction"] = "total"
    return g.reset_index()[list(INTERVAL_COLUMNS)]


def interval_cis(intervals: pd.DataFrame, direction: str | None = None, **kw) -> dict[str, BatchMeansCI]:
    """{metric: BatchMeansCI} of one direction of :func:`point_intervals` (iops, bw_MBps, lat_mean_us; the
    latency weighted by ``lat_ios``, or ``ios`` in a frame without it). direction: read, write, trim,
    ``"total"`` (every direction combined: :func:`total_intervals`) or None when the frame holds one
    direction only (ValueError if more). kw: batch_means_ci's options. A metric with no value in any
    window is left out."""
    df = intervals
    if direction == "total" and (df["direction"] != "total").any():
        df = total_intervals(df[df["direction"] != "total"])
    elif direction is not None:
        df = df[df["direction"] == direction]
    elif df["direction"].nunique() > 1:
        raise ValueError(f"intervals of several directions ({', '.join(sorted(df['direction'].unique()))}): "
                         "name one")
    df = df.sort_values("window")
    out = {}
    for metric, _ in CI_METRICS:
        sel = df[df[metric].notna()]
        if sel.empty:
            continue
        wcol = "lat_ios" if "lat_ios" in sel.columns else "ios"
        weights = sel[wcol].to_numpy(np.float64) if metric == "lat_mean_us" and wcol in sel.columns else None
        if weights is not None and (not np.all(np.isfinite(weights)) or weights.sum() <= 0):
            weights = None
        out[metric] = batch_means_ci(sel[metric].to_numpy(np.float64), weights, **kw)
    return out


def ci_notes(cis: dict[str, BatchMeansCI], min_batches: int, unit: str = "intervals") -> list[str]:
    """The ci_note parts of one point: ramp, then the correlated metrics (one part), then too few batches.
    unit: what one window of the series is called in the notes (fio's log "intervals", loadlat's
    "sub-windows": memstor.analysis.memory_curves.sub_window_ci_columns)."""
    notes = []
    ramp = max((r.ramp_excluded for r in cis.values()), default=0)
    if ramp:
        notes.append(f"ramp excluded {ramp}")
    corr = [(m, r) for m, r in cis.items() if r.status == CORRELATED]
    if corr:
        shapes = {(r.batch_size, r.n_batches) for _, r in corr}
        if len(shapes) == 1:
            (b, k), = shapes
            notes.append("correlated (lag-1 " + ", ".join(f"{m} {r.lag1:.2f}" for m, r in corr)
                         + f" at {k} batches of {b} {unit})")
        else:
            notes.append("correlated (lag-1 " + ", ".join(f"{m} {r.lag1:.2f} at {r.n_batches} batches of "
                                                          f"{r.batch_size}" for m, r in corr) + ")")
    few = sorted({r.n_intervals for r in cis.values() if r.status == TOO_FEW})
    if few:
        notes.append(f"too few batches ({'/'.join(map(str, few))} {unit} < {min_batches})")
    return notes


def ci_columns(intervals: pd.DataFrame | None, direction: str | None = None, *, min_batches: int = MIN_BATCHES,
               max_lag1: float = MAX_LAG1, ramp_intervals: int = RAMP_INTERVALS,
               confidence: float = 0.95) -> dict:
    """The tidy-table interval columns (:data:`CI_COLUMNS`) of one point and direction from its
    :func:`point_intervals` frame: ``iops_ci_low/high`` (1/s), ``bw_MBps_ci_low/high`` (10^6 B/s),
    ``lat_mean_us_ci_low/high`` (us), ``ci_method`` ("batch-means" when at least one bound is a number,
    "" otherwise) and ``ci_note`` ("; "-joined: "ramp excluded N" (intervals), "correlated (lag-1 iops
    0.40, ... at K batches of B intervals)": those metrics' bounds are empty, their batches stayed
    correlated; "too few batches (N intervals < 10)", "no interval logs"). direction: as
    :func:`interval_cis` ("total" for a mixed job's total row). Bounds are NaN (empty cells) where no
    interval exists or only one from correlated batches would (:func:`independent`)."""
    cols: dict = {c: math.nan for c in CI_COLUMNS}
    cols["ci_method"] = ""
    if intervals is None or len(intervals) == 0 or (direction not in (None, "total")
                                                    and not (intervals["direction"] == direction).any()):
        cols["ci_note"] = "no interval logs"
        return cols
    cis = interval_cis(intervals, direction, min_batches=min_batches, max_lag1=max_lag1,
                       ramp_intervals=ramp_intervals, confidence=confidence)
    cis = {m: independent(r) for m, r in cis.items()}
    for metric, prefix in CI_METRICS:
        r = cis.get(metric)
        if r is not None:
            cols[f"{prefix}_ci_low"], cols[f"{prefix}_ci_high"] = r.ci_low, r.ci_high
    if any(r.finite for r in cis.values()):
        cols["ci_method"] = METHOD
    cols["ci_note"] = "; ".join(ci_notes(cis, min_batches))
    return cols
