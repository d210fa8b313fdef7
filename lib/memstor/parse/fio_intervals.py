"""fio's interval logs -> the per-window series of one run (memstor.core.batchmeans.INTERVAL_COLUMNS).

A point's own 95 % interval (batch means, memstor.core.batchmeans) needs its per-window IOPS, bandwidth and
mean latency with every job combined; this module builds that series from the bw, iops and lat logs fio
wrote in the point's sidecar folder (memstor.parse.fio_logs reads them). It runs when the raw output is
parsed (memstor.experiments._fio_rows), so the processed table carries the interval and the analysis
never reads the logs. Units: iops 1/s, bw_MBps 10^6 B/s, lat_mean_us us, time_ms ms.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from memstor.core.batchmeans import INTERVAL_COLUMNS
from memstor.parse.fio_logs import FioLogs, read_log_folder


def _window_of(time_ms: np.ndarray, avg_msec: int) -> np.ndarray:
    """Window number (1, 2, ...) of log entries ending at ``time_ms``: fio closes a window a few ms after
    its nominal end (254, 504, 755 ms for 250 ms windows), so the nearest multiple of the window."""
    return np.rint(np.asarray(time_ms, dtype=np.float64) / avg_msec).astype(np.int64)


def infer_log_avg_msec(frames: Sequence[pd.DataFrame]) -> int:
    """fio's ``log_avg_msec`` of interval-log frames: the median gap between a job's entries (ms).
    ValueError when no frame has two entries of one direction."""
    gaps: list[float] = []
    for f in frames:
        for _, g in f.groupby("direction"):
            t = np.sort(g["time_ms"].to_numpy(dtype=np.float64))
            gaps.extend(np.diff(t))
    if not gaps:
        raise ValueError("cannot infer log_avg_msec: no log has two entries of one direction; pass it")
    return max(1, int(round(float(np.median(gaps)))))


def _per_job(frame: pd.DataFrame, avg_msec: int) -> pd.DataFrame:
    """One job's interval log with ``window`` and ``span_ms`` (time since its previous entry of that
    direction: the window's real length, 0 before the first)."""
    f = frame.sort_values(["direction", "time_ms"]).copy()
    prev = f.groupby("direction")["time_ms"].shift(1).fillna(0)
    f["span_ms"] = (f["time_ms"] - prev).clip(lower=1).astype(np.float64)
    f["window"] = _window_of(f["time_ms"].to_numpy(), avg_msec)
    return f


def _check_averaged(frames: Sequence[pd.DataFrame], kind: str) -> None:
    for f in frames:
        if len(f) and (f["bs_bytes"] != 0).any():
            raise ValueError(f"the {kind} log has one line per I/O (log_avg_msec=0): batch means needs "
                             "averaged windows (log_avg_msec 250-1000)")


def point_intervals(logs, log_avg_msec: int | None = None) -> pd.DataFrame:
    """The per-window series of one run, every job combined, ready for :func:`batch_means_ci`.

    logs: a :class:`memstor.parse.fio_logs.FioLogs`, or a point's log folder (``<point>.files``);
    log_avg_msec: the window fio averaged over (ms; inferred from the gaps between entries when None).
    One row per window x direction, columns :data:`INTERVAL_COLUMNS`: ``window`` (1, 2, ...: the window
    ending near window x log_avg_msec ms), ``time_ms`` (its nominal end), ``direction``, ``iops`` (1/s,
    the jobs' window averages SUMMED), ``bw_MBps`` (10^6 B/s, from the bw logs' KiB/s x 1024, summed),
    ``lat_mean_us`` (mean total latency, us: the jobs' window means weighted by their I/O counts),
    ``ios`` (I/Os in the window, summed over jobs: iops x window length), ``lat_ios`` (the I/Os the
    window's latency mean stands for: its weight in :func:`batch_means_ci`; equal to ``ios`` unless a
    job's lat log skipped windows) and ``jobs`` (jobs with an iops entry).

    memstor.parse.fio_logs.per_second bins windows into whole seconds; this keeps fio's own windows
    (0.25-1 s), so that a short run still has enough intervals. A window is kept only when EVERY job
    logged it (a sum over fewer jobs would be too low: fio up to 3.36 never writes a run's last iops/bw
    window, the lat log does, see memstor.parse.fio_logs); a latency window without an I/O count (no
    iops entry) is dropped. When a job's lat log skips windows (no completion in them) its next entry
    averages them all and is weighted by their I/Os together.
    """
    if not isinstance(logs, FioLogs):
        logs = read_log_folder(Path(logs))
    iops_f = list(logs.interval.get("iops", []))
    bw_f = list(logs.interval.get("bw", []))
    lat_f = list(logs.interval.get("lat", []))
    for frames, kind in ((iops_f, "iops"), (bw_f, "bw"), (lat_f, "lat")):
        _check_averaged(frames, kind)
    if not iops_f:
        raise ValueError(f"{logs.folder}: no iops log (fio --write_iops_log): no per-window series")
    avg = int(log_avg_msec) if log_avg_msec else infer_log_avg_msec(iops_f)
    iops = pd.concat([_per_job(f, avg) for f in iops_f], ignore_index=True)
    iops["n"] = iops["value"] * iops["span_ms"] / 1000.0
    n_jobs = iops["job"].nunique(dropna=False)
    key = ["window", "direction"]
    out = iops.groupby(key).agg(iops=("value", "sum"), ios=("n", "sum"), jobs=("job", "nunique"))
    out = out[out["jobs"] == n_jobs]
    if bw_f:
        bw = pd.concat([_per_job(f, avg) for f in bw_f], ignore_index=True)
        g = bw.groupby(key).agg(kib=("value", "sum"), jobs=("job", "nunique"))
        g = g[g["jobs"] == bw["job"].nunique(dropna=False)]
        out["bw_MBps"] = g["kib"].reindex(out.index) * 1024 / 1e6
    else:
        out["bw_MBps"] = np.nan
    out["lat_mean_us"] = out["lat_ios"] = np.nan
    if lat_f:
        lat = _weighted_latency(lat_f, iops, avg, n_jobs).reindex(out.index)
        out["lat_mean_us"], out["lat_ios"] = lat["lat_mean_us"], lat["lat_ios"]
    out = out.reset_index().sort_values(["direction", "window"])
    out["time_ms"] = out["window"] * avg
    return out[list(INTERVAL_COLUMNS)].reset_index(drop=True)


def _weighted_latency(lat_frames, iops: pd.DataFrame, avg: int, n_jobs: int) -> pd.DataFrame:
    """Per (window, direction): ``lat_mean_us``, the jobs' window mean latencies (ns in the log) weighted by
    their I/O counts, in us, and ``lat_ios``, those counts summed; NaN where a job's count is missing."""
    n = iops.groupby(["job", "direction", "window"])["n"].sum()
    parts = []
    for f in lat_frames:
        f = _per_job(f, avg)
        for (job, d), g in f.groupby(["job", "direction"]):
            wins = g["window"].to_numpy(np.int64)
            top = int(max(wins.max(), 0))
            dense = np.full(top + 1, np.nan)  # the job's I/Os per window 0..top (NaN: no iops entry)
            if (job, d) in n.index.droplevel(2):
                have = n.loc[(job, d)]
                have = have[(have.index >= 0) & (have.index <= top)]
                dense[have.index.to_numpy(np.int64)] = have.to_numpy(np.float64)
            dense[0] = 0.0  # window 0: nothing ends before the first window
            cum = np.concatenate([[0.0], np.cumsum(np.nan_to_num(dense))])
            gaps = np.concatenate([[0], np.cumsum(np.isnan(dense))])
            first = np.concatenate([[1], wins[:-1] + 1])  # a lat entry covers the windows since the last one
            first = np.minimum(np.maximum(first, 0), wins)
            counts = cum[wins + 1] - cum[first]
            counts[gaps[wins + 1] - gaps[first] > 0] = np.nan  # a covered window without an I/O count
            parts.append(pd.DataFrame({"window": wins, "direction": d, "job": job,
                                       "lat_ns": g["value"].to_numpy(np.float64), "w": counts}))
    lat = pd.concat(parts, ignore_index=True).dropna(subset=["w"])
    lat["wv"] = lat["lat_ns"] * lat["w"]
    g = lat.groupby(["window", "direction"]).agg(wv=("wv", "sum"), w=("w", "sum"), jobs=("job", "nunique"))
    good = (g["jobs"] == n_jobs) & (g["w"] > 0)
    return pd.DataFrame({"lat_mean_us": (g["wv"] / g["w"] / 1000.0).where(good), "lat_ios": g["w"].where(good)})
