"""The three processed tables of fio-write-saturation (memstor.experiments.fio_write_saturation), built from a
sweep's results, the points' meta sidecars and the thermal sampler's raw files, so that the analysis and the
report never read ``data/raw/``:

- the point table: memstor's fio columns (memstor.experiments._fio_rows), then :data:`WSAT_COLUMNS`;
- the per-second table (:data:`SECOND_COLUMNS`) from fio's interval and histogram logs
  (memstor.parse.fio_logs.per_second);
- the thermal table (:data:`THERMAL_COLUMNS`) from ``thermal-<UTC>.jsonl`` (memstor.parse.smart.parse_thermal_log,
  memstor.analysis.thermal.thermal_series), each sample assigned by its UTC stamp to the point whose run
  (meta ``start_time`` .. ``end_time``) it falls in.
"""

from __future__ import annotations

import math
import sys
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd

import memstor.experiments._fio_rows as _fio_rows
from memstor.analysis.thermal import thermal_series
from memstor.core.batchmeans import ci_columns
from memstor.core.errors import MemstorError, first_line
from memstor.core.files import read_json
from memstor.core.units import parse_size
from memstor.measure.sweep import sidecar_dir
from memstor.parse.fio_logs import FioLogs, per_second, read_log_folder
from memstor.parse.smart import parse_thermal_log

#: Columns after memstor's fio columns in fio-write-saturation.csv (bytes, decimal GB = 10^9 bytes).
WSAT_COLUMNS = [
    "span_bytes",         # bytes the point writes over: the test file, or the whole raw device
    "span",               # file | full_device
    "capacity_multiple",  # the profile's multiple of the span to write (PTS: 4)
    "target_bytes",       # asked: capacity_multiple x span_bytes, rounded down to whole blocks per job
                          # (numjobs x fio's io_size)
    "bytes_written",      # fio's count: total_ios x bs
    "tgbw_GB",            # bytes_written / 1e9 (decimal GB): the PTS's total GB written
    "stopped_by",         # bytes (target reached) | time (max_runtime_s reached first) | failed
    "state_at_start",     # the target's state when the point started (nothing is purged)
    "thermal",            # sampled every N s | not available (reason)
]
TABLE_COLUMNS = _fio_rows.COLUMNS + WSAT_COLUMNS
#: Columns of fio-write-saturation-seconds.csv: one row per point x second. t_s: END of the 1-s interval, s
#: since the point's fio job started (1 = the first second). iops (I/O completed in that second), bw_MBps
#: (10^6 B/s) and gb_written (cumulative decimal GB by the end of that second) count I/Os: fio's histogram-log
#: windows hold exact completion counts (spread evenly over the seconds a window covers), and after each job's
#: last histogram window (fio up to 3.36 never writes it) its 100 ms bandwidth-log windows. Not the IOPS and bandwidth
#: logs alone: fio-3.33 computes their rates over a shorter span than the window it logs them for after a stall
#: (measured under contention: a 0.9-s stall logged at 34 MB/s where 7.5 MB completed; the series summed to
#: 103.7 % of fio's count, the histogram counts to 99.6 %). fio drops each job's last 100 ms window, so the last
#: gb_written falls short of fio's own count by about 0.1 s of writing (measured 1.2-1.4 % at 7-11 s, 0.1-0.5 %
#: at 25-46 s). lat_mean_us: total latency (the latency log); clat_p99_us: completion latency from the merged
#: histograms of that second (a point capped beyond an hour logs longer histogram windows: its p99 is in the
#: second each one is centred on).
SECOND_COLUMNS = ["host", "point", "config", "rw", "bs_bytes", "repetition", "t_s", "iops", "bw_MBps",
                  "lat_mean_us", "clat_p99_us", "gb_written"]
#: Columns of fio-write-saturation-thermal.csv: t_s = s since the point's start (its meta start_time; fio's job
#: starts up to ~0.1 s later), °C, the counters as increases since the point's first sample (transitions, min).
#: A point without readings has ONE row: available False and the reason, the other cells empty.
THERMAL_COLUMNS = ["host", "point", "t_s", "temperature_c", "warning_temp_c", "critical_temp_c",
                   "tmt1_transitions_delta", "tmt2_transitions_delta", "warning_temp_time_delta_min", "available",
                   "reason"]
#: Why a point has no batch-means interval: its series is a trajectory, not a stationary run.
TRAJECTORY_NOTE = "not computed: a write-saturation point is a trajectory (not stationary); see the seconds table"
#: The thermal sampler's raw files in the experiment's raw folder (memstor.experiments.fio_write_saturation).
THERMAL_GLOB, THERMAL_STAMP = "thermal-*.jsonl", "%Y%m%dT%H%M%S%fZ"


def _utc(text: object) -> datetime | None:
    """A memstor UTC stamp (``2024-05-01T12:00:00.123Z``) as an aware datetime; None when missing or bad."""
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None


def _rows(res, host: str, note: str, data_root: Path) -> list:
    """memstor's fio rows of one point (memstor.experiments._fio_rows), without a batch-means interval."""
    rows = _fio_rows.result_rows([res], host, note, data_root)
    for r in rows:
        if r.get("status") == "done":
            r.update(ci_columns(None), ci_method=None, ci_note=TRAJECTORY_NOTE)
    return rows


def stopped_by(status: str | None, written: int | None, target: int) -> str:
    """bytes | time | failed: why a point ended (fio stops at io_size per job or at its runtime)."""
    if status != "done" or written is None:
        return "failed"
    return "bytes" if written >= target else "time"


def wsat_columns(row: dict, params: dict, thermal: str) -> dict:
    """The WSAT_COLUMNS of one tidy row from the point's recorded params and its thermal label."""
    ios, bs = row.get("total_ios"), row.get("bs_bytes")
    written = int(ios) * int(bs) if row.get("status") == "done" and ios is not None and bs is not None else None
    target = int(params["target_bytes"])
    return {"span_bytes": params["span_bytes"], "span": params["span"], "capacity_multiple": params["capacity_multiple"],
            "target_bytes": target, "bytes_written": written, "tgbw_GB": written / 1e9 if written is not None else None,
            "stopped_by": stopped_by(row.get("status"), written, target),
            "state_at_start": params.get("state_at_start"), "thermal": thermal}


# ------------------------------------------------------------------------------------------ seconds


def _spread(windows: list[tuple[float, float, float]], n: int) -> np.ndarray:
    """Amounts per second 0..n-1 of ``windows`` (start ms, end ms, amount), each spread evenly over the part
    of every second it covers."""
    out = np.zeros(n)
    for start, end, amount in windows:
        if end <= start:
            out[min(int(end // 1000), n - 1)] += amount
            continue
        for k in range(int(start // 1000), min(math.ceil(end / 1000), n)):
            overlap = min(end, (k + 1) * 1000.0) - max(start, k * 1000.0)
            if overlap > 0:
                out[k] += amount * overlap / (end - start)
    return out


def _job_windows(logs: FioLogs, bs_bytes: int) -> list[tuple[float, float, float]]:
    """(start ms, end ms, bytes) of every job's writes: its histogram-log windows (exact I/O counts x bs), then,
    after its last one (fio up to 3.36 drops it), its bandwidth-log windows (KiB/s x window)."""
    windows, last = [], {}
    for h in logs.hist:
        sel = h.direction == "write"
        ends, counts = h.time_ms[sel].astype(float), h.counts[sel].sum(axis=1)
        starts = np.concatenate([[0.0], ends[:-1]])
        windows += [(a, b, float(c) * bs_bytes) for a, b, c in zip(starts, ends, counts)]
        last[h.job] = float(ends[-1]) if len(ends) else 0.0
    for frame in logs.interval.get("bw", []):
        w = frame[frame["direction"] == "write"].sort_values("time_ms")
        ends = w["time_ms"].to_numpy(float)
        starts = np.concatenate([[0.0], ends[:-1]])
        job = int(w["job"].iloc[0]) if len(w) and pd.notna(w["job"].iloc[0]) else None
        after = last.get(job, 0.0) if logs.hist else 0.0
        windows += [(max(a, after), b, v * 1024.0 * (b - max(a, after)) / 1000.0)
                    for a, b, v in zip(starts, ends, w["value"].to_numpy(float)) if b > after]
    return windows


def point_seconds(res, host: str) -> pd.DataFrame:
    """The per-second rows (SECOND_COLUMNS) of one measured point, from the logs in its sidecar folder: I/Os and
    bytes per second from the histogram log's exact counts (then the bandwidth log after each job's last
    histogram window), latencies from :func:`memstor.parse.fio_logs.per_second`."""
    p = res.point.params
    folder = sidecar_dir(Path(res.raw).parent, res.point)
    logs = read_log_folder(folder)
    bs = parse_size(str(p["bs"]))
    windows = _job_windows(logs, bs)
    n = max((math.ceil(end / 1000) for _, end, _ in windows), default=0)
    written = _spread(windows, n)
    lat = per_second(logs)
    lat = lat[lat["direction"] == "write"].set_index("t_s").reindex(range(n))
    return pd.DataFrame({"host": host, "point": res.point.name, "config": res.point.name.rsplit("-rep", 1)[0],
                         "rw": p["rw"], "bs_bytes": bs, "repetition": p["rep"], "t_s": np.arange(1, n + 1),
                         "iops": written / bs, "bw_MBps": written / 1e6,
                         "lat_mean_us": lat["lat_mean_us"].to_numpy(), "clat_p99_us": lat["clat_p99_us"].to_numpy(),
                         "gb_written": np.cumsum(written) / 1e9}, columns=SECOND_COLUMNS)


# ------------------------------------------------------------------------------------------ thermal


def thermal_logs(directory: Path) -> list[tuple[datetime, dict]]:
    """The sampler files of a raw folder, oldest first: (start from the file name, parse_thermal_log's dict; an
    unreadable file is ``available`` False with the reason)."""
    out = []
    for path in sorted(Path(directory).glob(THERMAL_GLOB)):
        try:
            start = datetime.strptime(path.stem.removeprefix("thermal-"), THERMAL_STAMP).replace(tzinfo=UTC)
        except ValueError:
            continue  # not a sampler file of this family
        try:
            log = parse_thermal_log(path.read_text(encoding="utf-8", errors="replace"), str(path))
        except (OSError, MemstorError) as err:
            log = {"available": False, "reason": f"{path.name} unreadable ({first_line(err)})", "samples": []}
        out.append((start, log))
    return out


def point_thermal(point: str, meta: dict, logs: list, host: str) -> tuple[list[dict], str]:
    """(THERMAL_COLUMNS rows, the point table's ``thermal`` label) of one point: the samples of the sampler file
    that ran when the point started, within the point's start..end (UTC), t_s since its start."""
    start, end = _utc(meta.get("start_time")), _utc(meta.get("end_time"))
    log = next((lg for t0, lg in reversed(logs) if start is not None and t0 <= start), None)
    if log is None or start is None or end is None:
        reason = "no thermal record for this point (measured without the sampler)"
    elif not log.get("available"):
        reason = str(log.get("reason") or "unknown reason")
    else:
        inside = [dict(s, t_s=(u - start).total_seconds()) for s in log["samples"]
                  for u in [_utc(s.get("utc"))] if u is not None and start <= u <= end]
        series = thermal_series(inside, reason="no thermal sample during the point")
        if series.attrs["available"]:
            rows = [{"host": host, "point": point, **{c: r[c] for c in THERMAL_COLUMNS[2:-2]}, "available": True,
                     "reason": None} for r in series.to_dict("records")]
            return rows, f"sampled every {float(log['header'].get('interval_s') or 0):g} s"
        reason = str(series.attrs["reason"])
    return [{"host": host, "point": point, "available": False, "reason": reason}], f"not available ({reason})"


# ------------------------------------------------------------------------------------------- tables


def result_tables(results: list, host: str, note: str, data_root: Path,
                  directory: Path) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(point table, per-second table, thermal table) of the sweep results; ``directory``: the raw folder."""
    logs = thermal_logs(directory)
    rows, seconds, thermal = [], [], []
    for res in results:
        meta = read_json(res.meta) or {}
        recorded = meta.get("params")
        params: dict = recorded if isinstance(recorded, dict) else res.point.params
        th_rows, label = point_thermal(res.point.name, meta, logs, host)
        thermal += th_rows
        base = _rows(res, host, note, data_root)
        rows += [{**r, "config": res.point.name.rsplit("-rep", 1)[0], **wsat_columns(r, params, label)}
                 for r in base]
        if res.raw is not None and any(r.get("status") == "done" for r in base):
            try:  # the logs only add the per-second view: without them the point's own numbers stand
                seconds.append(point_seconds(res, host))
            except (OSError, MemstorError) as err:
                print(f"fio-write-saturation: {res.point.name}: no per-second series ({first_line(err)})",
                      file=sys.stderr)
    table = pd.DataFrame(rows, columns=TABLE_COLUMNS)
    for col in ("span_bytes", "target_bytes", "bytes_written"):
        table[col] = table[col].astype("Int64")
    per_s = pd.concat([s for s in seconds if len(s)], ignore_index=True) if any(len(s) for s in seconds) \
        else pd.DataFrame(columns=SECOND_COLUMNS)
    return table, per_s, pd.DataFrame(thermal, columns=THERMAL_COLUMNS)
