"""Cliffs: lasting changes of a drive's throughput over one run (issue 29, part 2).

A consumer SSD (QLC behind an SLC cache) writes fast until the cache is full, then falls off a "cliff" to a
fraction of that rate; it may recover once the drive has folded the cache. :func:`find_cliffs` finds such
lasting level changes in ONE run's per-second series (``t_s`` seconds since the start, 0 = [0, 1) s, and a
throughput column in MB/s = 10^6 B/s or IOPS) and reports, per change, where it happened (second and
decimal GB written) and the levels on both sides with their 95 % intervals. Pure: numbers in, a table out.

The method (each step measured, numbers below):

1. Noise. sigma is the LONG-RUN noise of the series (its unit): the series is cut into blocks of
   ``NOISE_BLOCK_S`` = 5 s, sigma = sqrt(5) x 1.4826 x MAD(first differences of the block means) / sqrt(2),
   taken in windows of 12 blocks (60 s, half-overlapping) and the LARGEST window's value kept. Differences
   make it blind to level shifts (one difference per change); the MAD to outliers. Per-second throughput
   is autocorrelated (a drive's background work, the page cache), so the plain MAD of first differences /
   sqrt(2) understates the noise a segment mean carries (by sqrt((1 - phi) / (1 + phi)) for AR(1) noise);
   block means carry it. The largest window: the noise after a cliff (QLC folding) is often many times
   that before it, and a global median would let the noisy part split into spurious segments. sigma is
   floored at 0.1 % of the series' mean level (fio's ``rate=``-throttled logs are regular to 0.3 %; a
   piecewise-constant series has no noise at all).
2. Change points: PELT with the l2 cost (``ruptures.KernelCPD(kernel="linear")``, the same cost in C),
   ``min_size`` = ``min_segment_s`` = 5 s, every second a candidate (jump 1: positions to the second),
   penalty ``PENALTY_FACTOR`` x sigma^2 x ln(n) with factor 3 (BIC-like: 2 sigma^2 ln n would be the
   classic BIC of a mean shift, 3 is the modified BIC for an unknown position). It runs on the series
   median-filtered over 2 x min_segment_s - 1 = 9 s: an excursion shorter than ``min_segment_s`` (a
   dropout, a spike, a 4 s stall) is a minority in every window and vanishes, while a step lasting
   longer keeps its edge to the second. Levels are always computed from the unfiltered values.
3. Only lasting changes are kept: adjacent segments are merged, most similar pair first, while their
   levels agree within ``rel_tol`` = 20 % of the higher one (SNIA's PTS calls a window whose range stays
   within 20 % of its average steady) or within their intervals (95 % intervals overlap: batch means
   for a segment of >= 10 s, else mean +- 1.96 sigma / sqrt(m) with the series' sigma).
4. Levels: the mean of each segment's seconds but its first and last (a change, or the run's start and
   end, falls inside those seconds: one mixed second biases a 10 s level after a 3x drop by 10 %), with the
   95 % batch-means interval of memstor.core.batchmeans over those seconds (>= 10 batches, lag-1
   autocorrelation <= 0.2, no ramp dropped: the first second is already out). A segment with fewer than
   10 such seconds, or whose batches stay correlated at 10 batches, has a level but no interval (None; the
   ``note`` says why: "correlated (lag-1 0.45 at 10 batches of 3 s): no interval").

Why this and not the others (measured in this repository's venv, ruptures 1.1.10, on simulated series:
AR(1) noise phi in {0, 0.3, 0.6}, CV in {1, 3, 8, 15} %, 0 or 2 % of the seconds dipping to 20-90 % of the
level, lengths 30, 120, 600, 1,800 s: 96 kinds of flat series; 30 steps 1000 -> 333 at a random second of
200 s, CV 1-8 %; 40 runs of a quiet phase (CV 2 %) followed by a noisy one at a third of the level (CV
10-30 %, phi 0.5, dips); every variant followed by the same merge, rel_tol 20 %):

=============================================  =======================  ==========  ============  ======
variant                                        flat: raw / kept cliffs  steps       quiet->noisy  time
=============================================  =======================  ==========  ============  ======
this one (PELT l2, long-run sigma, filter)     1 / 0 of 96              30/30 exact 0 of 40 wrong 0.4 s
sigma = MAD(first differences) / sqrt(2)       34 / 4                   30/30 exact 24 wrong      0.6 s
no median filter                               12 / 3                   30/30 exact 0 wrong       0.4 s
neither                                        52 / 19                  30/30 exact 36 wrong      1.6 s
Binseg l2 (greedy, ruptures' Python)           1 / 0                    30/30 exact 0 wrong       2.9 s
PELT ``normal`` (mean and variance), 3 ln n    96 / 6                   30/30 +-1 s 9 wrong       40 s
PELT ``rbf`` kernel, 3 ln n                    5 / 0                    29/30 +-6 s 1 wrong       2.2 s
=============================================  =======================  ==========  ============  ======

Binseg finds the same changes here but is a greedy approximation and 7x slower; ``normal`` also splits
on every change of the noise; the ``rbf`` kernel's penalty is not in the series' units and it misplaced
a step by 6 s. The final rules on 288 flat series (3 seeds of each kind): change points before merging in
4, cliffs reported in 0 (also 0 at rel_tol 10 %); 60 steps 1000 -> 333: each found once at the right
second, the GB written at the change exact, levels within 2.6 % of the true ones, 115 of the 120 level
intervals holding the true level (over 200 steps of 300 s: 383 of 400 with white noise, 366 of 400 =
91.5 % with lag-1 0.3 noise: core.batchmeans keeps 1 s batches once the lag-1 estimate is <= 0.2, a bit
narrow for such noise); one-second spikes and dropouts (40 series): no cliff. Speed: 3,600 s in
0.02-0.04 s, 20,000 s in 0.6-0.9 s, 86,400 s (a day) in 12-18 s (2-vCPU VM, shared).

``gb_written``: cumulative decimal GB (10^9 bytes) at the END of the second before the change, from the
series' ``gb_written`` column when it has one, else summed from MB/s (x 1 s), else from IOPS x
``block_size_bytes`` when given; None when it cannot be known (an IOPS series without a block size, or
after a missing second: what was written then is not in the series). Never guessed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import ruptures as rpt
from scipy.ndimage import median_filter

from memstor.core.batchmeans import MIN_BATCHES, OK, TOO_FEW, batch_means_ci
from memstor.core.errors import UsageError

#: Columns of :func:`find_cliffs`, in order (the ``memstor cliffs`` CSV adds a leading ``source``): the change
#: second (s since the start), decimal GB written before it, the levels before and after (the series' unit)
#: with their 95 % bounds (empty when a segment is too short), ratio = after / before, kind ("cliff" for a
#: drop, "recovery" for a rise; a plain string a later verdict may relabel, e.g. "thermal"), the unit
#: ("MB/s" or "IOPS") and a note (why a bound is empty, a correlated interval).
CLIFF_COLUMNS = ("t_s", "gb_written", "level_before", "level_before_lo", "level_before_hi", "level_after",
                 "level_after_lo", "level_after_hi", "ratio", "kind", "unit", "note")
#: Shortest segment (s): shorter excursions never make a change.
MIN_SEGMENT_S = 5
#: The penalty is PENALTY_FACTOR x sigma^2 x ln(n).
PENALTY_FACTOR = 3.0
#: Adjacent levels within this share of the higher one are one level.
REL_TOL = 0.2
#: Block length (s) and window (blocks) of the long-run noise estimate.
NOISE_BLOCK_S = 5
NOISE_WINDOW_BLOCKS = 12
#: sigma is at least this share of the series' mean level (mean of |values|).
SIGMA_FLOOR = 1e-3
#: Known throughput columns -> unit.
UNITS = {"bw_MBps": "MB/s", "MBps": "MB/s", "MB_s": "MB/s", "MB/s": "MB/s", "iops": "IOPS", "IOPS": "IOPS"}
_MAD = 1.4826  # MAD -> sigma of a normal distribution
_Z95 = 1.959964


@dataclass(frozen=True)
class Level:
    """One segment's level (the series' unit): mean, 95 % interval (None when not computable) and a note."""

    mean: float
    lo: float | None
    hi: float | None
    note: str


def _mad_sigma(x: np.ndarray) -> float:
    """1.4826 x MAD of the first differences of ``x`` / sqrt(2): the noise sigma of ``x`` (its unit)."""
    d = np.diff(x)
    return _MAD * float(np.median(np.abs(d))) / math.sqrt(2.0) if d.size else 0.0


def noise_sigma(values, block_s: int = NOISE_BLOCK_S, window_blocks: int = NOISE_WINDOW_BLOCKS) -> float:
    """The long-run noise sigma of a per-second series (its unit): block means of ``block_s`` seconds, MAD
    of their first differences, x sqrt(block_s), in windows of ``window_blocks`` blocks (half-overlapping),
    the largest window's value; never below the plain per-second estimate (module docstring, step 1)."""
    y = np.asarray(values, dtype=np.float64)
    k = y.size // block_s
    plain = _mad_sigma(y)
    if k < 4:
        return plain
    blocks = y[y.size - k * block_s:].reshape(k, block_s).mean(axis=1)
    if k <= window_blocks:
        return max(plain, _mad_sigma(blocks) * math.sqrt(block_s))
    step = max(1, window_blocks // 2)
    worst = max(_mad_sigma(blocks[i:i + window_blocks]) for i in range(0, k - window_blocks + 1, step))
    return max(plain, worst * math.sqrt(block_s))


def change_points(values, sigma: float, *, min_segment_s: int = MIN_SEGMENT_S,
                  penalty_factor: float = PENALTY_FACTOR) -> list[int]:
    """Candidate change points (indices where a new segment starts) of PELT with the l2 cost on the series
    median-filtered over 2 x min_segment_s - 1 seconds, penalty penalty_factor x sigma^2 x ln(n)."""
    y = np.asarray(values, dtype=np.float64)
    n = y.size
    if n < 2 * min_segment_s or sigma <= 0.0:
        return []
    smooth = median_filter(y, size=2 * min_segment_s - 1, mode="nearest")
    pen = penalty_factor * sigma * sigma * math.log(n)
    algo = rpt.KernelCPD(kernel="linear", min_size=min_segment_s, jump=1).fit(smooth.reshape(-1, 1))
    return [int(b) for b in algo.predict(pen=pen)[:-1]]


def _inner(y: np.ndarray) -> np.ndarray:
    """A segment's seconds without its first and last (a change or the run's edge falls inside them)."""
    return y[1:-1] if y.size >= 3 else y


def segment_level(values, confidence: float = 0.95) -> Level:
    """Level of one segment's per-second values (already without the edge seconds): mean, and the
    batch-means interval (memstor.core.batchmeans, no ramp) re-centred on the mean; None bounds and a note
    when fewer than 10 seconds."""
    y = np.asarray(values, dtype=np.float64)
    mean = float(y.mean())
    ci = batch_means_ci(y, ramp_intervals=0, confidence=confidence)
    if ci.status == TOO_FEW:
        return Level(mean, None, None, f"{y.size} s < {MIN_BATCHES} batches: no interval")
    if ci.status != OK:  # no interval from correlated batches (memstor.core.batchmeans.independent)
        return Level(mean, None, None, f"correlated (lag-1 {ci.lag1:.2f} at {ci.n_batches} batches of "
                                       f"{ci.batch_size} s): no interval")
    return Level(mean, mean - ci.half_width, mean + ci.half_width, "")


def _merge_interval(y: np.ndarray, sigma: float) -> tuple[float, float, float]:
    """(mean, low, high) used to decide whether two segments agree: the batch-means interval (also from
    correlated batches: an internal decision, never published), or mean +- 1.96 sigma / sqrt(m) for a
    segment too short for one."""
    mean = float(np.mean(y))
    ci = batch_means_ci(y, ramp_intervals=0)
    if ci.status != TOO_FEW:
        return mean, mean - ci.half_width, mean + ci.half_width
    half = _Z95 * sigma / math.sqrt(y.size)
    return mean, mean - half, mean + half


def merge_segments(values, bkps: list[int], sigma: float, rel_tol: float = REL_TOL) -> list[int]:
    """The change points left once adjacent segments that agree (levels within ``rel_tol`` of the higher,
    or overlapping intervals) are merged, the most similar pair first (module docstring, step 3)."""
    y = np.asarray(values, dtype=np.float64)
    bkps = sorted(bkps)
    while bkps:
        edges = [0, *bkps, y.size]
        segs = [_merge_interval(_inner(y[a:b]), sigma) for a, b in zip(edges[:-1], edges[1:])]
        scores = []
        for (m1, lo1, hi1), (m2, lo2, hi2) in zip(segs[:-1], segs[1:]):
            overlap = lo1 <= hi2 and lo2 <= hi1
            scores.append(-1.0 if overlap else abs(m2 - m1) / max(abs(m1), abs(m2), 1e-300))
        i = int(np.argmin(scores))
        if scores[i] >= rel_tol:
            break
        del bkps[i]
    return bkps


def throughput_unit(value_col: str, unit: str | None = None) -> str:
    """The unit of a throughput column: ``unit`` when given, else from the column name (:data:`UNITS`)."""
    if unit is not None:
        return unit
    if value_col in UNITS:
        return UNITS[value_col]
    raise UsageError(f"find_cliffs: unit of column {value_col!r} unknown; name it (unit='MB/s' or 'IOPS') or "
                     f"use one of {', '.join(UNITS)}")


def gb_written(series: pd.DataFrame, value_col: str, unit: str,
               block_size_bytes: int | None = None) -> np.ndarray:
    """Cumulative decimal GB at the end of each second of a sorted per-second series (NaN where unknown):
    the series' ``gb_written`` column if it has a number, else MB/s x 1 s / 1000, else IOPS x
    ``block_size_bytes`` / 1e9, counted from the series' first second; unknown after a missing second
    (t_s not consecutive) or a missing value."""
    n = len(series)
    if "gb_written" in series.columns:
        given = pd.to_numeric(series["gb_written"], errors="coerce").to_numpy(np.float64)
        if np.isfinite(given).any():
            return given
    v = pd.to_numeric(series[value_col], errors="coerce").to_numpy(np.float64)
    if unit == "MB/s":
        per_s = v / 1000.0
    elif unit == "IOPS" and block_size_bytes:
        per_s = v * float(block_size_bytes) / 1e9
    else:
        return np.full(n, np.nan)
    gb = np.cumsum(per_s)
    gaps = np.flatnonzero(np.diff(series["t_s"].to_numpy(np.float64)) != 1.0)
    if gaps.size:
        gb[gaps[0] + 1:] = np.nan
    return gb


def _check(series: pd.DataFrame, value_col: str, min_segment_s: int, rel_tol: float) -> None:
    for col in ("t_s", value_col):
        if col not in series.columns:
            raise UsageError(f"find_cliffs: the series has no {col!r} column (columns: "
                             f"{', '.join(map(str, series.columns))}); give t_s and the throughput column")
    if int(min_segment_s) != min_segment_s or min_segment_s < 2:
        raise UsageError(f"find_cliffs: min_segment_s={min_segment_s!r} must be a whole number of seconds >= 2")
    if not 0.0 < rel_tol < 1.0:
        raise UsageError(f"find_cliffs: rel_tol={rel_tol!r} must be in (0, 1), e.g. 0.2")
    if series["t_s"].duplicated().any():
        raise UsageError("find_cliffs: t_s repeats a second; give one row per second (one run, summed over jobs)")


def _none(v: float) -> float | None:
    return v if math.isfinite(v) else None


def _row(t: float, gb: float, before: Level, after: Level, unit: str) -> dict:
    ratio = after.mean / before.mean if before.mean else math.nan
    notes = [f"{side}: {lv.note}" for side, lv in (("before", before), ("after", after)) if lv.note]
    return {"t_s": t, "gb_written": _none(gb), "level_before": before.mean, "level_before_lo": before.lo,
            "level_before_hi": before.hi, "level_after": after.mean, "level_after_lo": after.lo,
            "level_after_hi": after.hi, "ratio": _none(ratio),
            "kind": "cliff" if after.mean < before.mean else "recovery", "unit": unit, "note": "; ".join(notes)}


def find_cliffs(series: pd.DataFrame, value_col: str, *, unit: str | None = None,
                block_size_bytes: int | None = None, min_segment_s: int = MIN_SEGMENT_S,
                penalty_factor: float = PENALTY_FACTOR, rel_tol: float = REL_TOL,
                confidence: float = 0.95) -> pd.DataFrame:
    """The lasting level changes of one run's per-second throughput series, one row each (:data:`CLIFF_COLUMNS`).

    series: ``t_s`` (whole seconds since the start), ``value_col`` (MB/s = 10^6 B/s or IOPS; rows whose
    value is missing are left out) and optionally ``gb_written`` (decimal GB at the end of each second);
    unit: the unit of value_col (default from its name: bw_MBps/MBps/MB_s -> "MB/s", iops -> "IOPS");
    block_size_bytes: bytes per I/O of an IOPS series, for gb_written; min_segment_s: shortest lasting
    level (s); penalty_factor: x sigma^2 x ln(n); rel_tol: levels closer than this share are one level;
    confidence: of the level intervals. No change is an empty frame with the same columns (a result).
    UsageError (one line) for a series without the columns or bad parameters.
    """
    _check(series, value_col, min_segment_s, rel_tol)
    unit = throughput_unit(value_col, unit)
    df = series.sort_values("t_s").reset_index(drop=True)
    gb = gb_written(df, value_col, unit, block_size_bytes)
    y = pd.to_numeric(df[value_col], errors="coerce").to_numpy(np.float64)
    keep = np.isfinite(y)
    y, gb, t = y[keep], gb[keep], df["t_s"].to_numpy(np.float64)[keep]
    empty = pd.DataFrame(columns=list(CLIFF_COLUMNS))
    if y.size < 2 * min_segment_s or np.ptp(y) == 0.0:
        return empty
    sigma = max(noise_sigma(y), SIGMA_FLOOR * float(np.mean(np.abs(y))))
    bkps = merge_segments(y, change_points(y, sigma, min_segment_s=int(min_segment_s),
                                           penalty_factor=penalty_factor), sigma, rel_tol)
    if not bkps:
        return empty
    edges = [0, *bkps, y.size]
    levels = [segment_level(_inner(y[a:b]), confidence) for a, b in zip(edges[:-1], edges[1:])]
    rows = [_row(float(t[b]), float(gb[b - 1]), levels[i], levels[i + 1], unit) for i, b in enumerate(bkps)]
    return pd.DataFrame(rows, columns=list(CLIFF_COLUMNS))
