"""fio's log files -> tidy frames: interval logs (bw, iops, lat/clat/slat), histogram logs, iologs.

Formats, as fio-3.33 writes them (checked on real output, 2-vCPU KVM VM):

- Interval logs (``--write_bw_log/--write_iops_log/--write_lat_log=PREFIX``, one file per job with
  ``--per_job_logs=1``: ``PREFIX_bw.N.log``, ``PREFIX_iops.N.log``, ``PREFIX_lat.N.log``,
  ``PREFIX_clat.N.log``, ``PREFIX_slat.N.log``, N = job number from 1): one line per entry,
  ``time_ms, value, direction, bs, [offset,] prio``. time: ms since the job started, at the END of the
  averaging window; direction 0 read, 1 write, 2 trim; ``offset`` only with ``--log_offset=1``;
  ``prio`` (the command priority) is printed by fio >= 3.2x, 4-column lines (``time, value, ddir, bs``)
  by older fio. Values: bw in KiB/s (kb_base 1024; measured: 2939 IOPS of 4 KiB -> 11752 = 2939 x 4 KiB/s,
  +-rounding), iops in I/O per second, lat/clat/slat in ns (fio 3.x). With ``--log_avg_msec=M > 0`` a
  value is the window's average (bs 0); with ``--log_avg_msec=0`` one line per I/O (bs = its size).
- Histogram logs (``--write_hist_log=PREFIX`` -> ``PREFIX_clat_hist.N.log``): ``time_ms, direction, bs,
  bin0, ..., binK-1``: the COMPLETION latency (clat) histogram, K = FIO_IO_U_PLAT_NR >> coarseness.
  fio-3.33 has FIO_IO_U_PLAT_NR = 1856 (29 groups x 64; its ``--cmdhelp`` still says 1216, the count of
  older fio, whose 19 groups held microseconds): 1859 columns per line measured at coarseness 0. It stays
  the clat histogram with ``--lat_percentiles=1`` (its bins equal json+ ``clat_ns`` bins, not ``lat_ns``:
  measured, 500 of 500 I/Os), hence the ``clat_`` names of the per-second percentiles. Bin i holds
  latencies around memstor.core.fiohist.plat_idx_to_val (i) ns. Entries are PER INTERVAL, not cumulative:
  measured (2 jobs, 3000 reads/s each, 1000 ms windows, run 2.5 s) 2940 then 3038 I/Os in the two
  lines of job 1, 7455 in the job's json+ bins. The window ends at the first completion after
  ``log_hist_msec`` (times 1001, 2001, 2002 ms).
- fio up to 3.36 loses the LAST window of bw, iops and hist logs: a window is written when a later sample
  arrives. Measured (3.33): runtime 2.0 s with 1000 ms windows -> one iops and one hist entry (1000, 1001
  ms), runtime 2.5 s -> two; the lat logs do get the last window (2000 ms; 2500 ms, partial). fio 3.42 writes
  the last window too (runtime 2.5 s: two iops lines where 3.28, 3.33 and 3.36 write one; `make fio-matrix`),
  partial when the run ends inside it. A run of N whole seconds therefore wants ``runtime = N + 0.5 s`` (or
  shorter hist windows, merged per second here) with either, and a partial last second is never a second.
  With ``log_hist_msec=1`` at 500 IOPS every completion closes a window and the hist log holds every
  I/O (500 of 500): that is how the tests prove hist log == json+ bins.
- iolog v3 (``--write_iolog=FILE``): ``fio version 3 iolog`` then ``time_us file action [offset length]``;
  the time is microseconds since the job started, taken when fio hands the I/O to the engine (its
  SUBMISSION time; an I/O the engine refuses with BUSY and that fio requeues is logged again: measured
  with the null engine at iodepth 64, 2640 of 40178 lines). The only fio-3.33 log with sub-ms times.

Units of the tidy frames are in column names (``time_ms``, ``time_us``, ``bw_MBps`` = 10^6 bytes/s).
Every parser raises ParseError with one line naming the file for input it cannot read. Pure functions
of file contents (the readers only open the file they are given).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from memstor.core.errors import ParseError
from memstor.core.fiohist import bin_values, hist_percentiles
from memstor.parse.guards import one_line

# ------------------------------------------------------------------------------------------- logs
#: fio's log direction codes.
LOG_DIRECTIONS = {0: "read", 1: "write", 2: "trim"}
#: Percentiles of the per-second series (column suffix -> percent).
SERIES_PERCENTILES = (("p50", 50.0), ("p99", 99.0), ("p99_9", 99.9))
INTERVAL_KINDS = ("bw", "iops", "lat", "clat", "slat")
_LOG_NAME = re.compile(r"_(bw|iops|lat|clat|slat|clat_hist)\.(\d+)\.log$")
_BAD_LINES_SHOWN = 1


# ---------------------------------------------------------------------------------------- readers
def _read_text(path: Path | str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as err:
        raise ParseError(f"{path}: cannot read the fio log ({err.strerror or err})") from None


def _bad(path: Path | str, lineno: int, line: str, why: str) -> ParseError:
    return ParseError(one_line(f"{path}: line {lineno}: {why}: {line.strip()[:80]!r} (not a fio log, or damaged)",
                               300))


def log_kind(path: Path | str) -> tuple[str | None, int | None]:
    """(kind, job number) from a fio log file name ``PREFIX_<kind>.<N>.log`` (kind bw, iops, lat, clat,
    slat or clat_hist); (None, None) for another name."""
    m = _LOG_NAME.search(Path(path).name)
    return (m.group(1), int(m.group(2))) if m else (None, None)


def read_interval_log(path: Path | str, *, has_offset: bool | None = None) -> pd.DataFrame:
    """One fio interval log (bw, iops, lat, clat or slat) as a frame.

    Columns: ``time_ms`` (end of the window, ms since the job started), ``value`` (bw KiB/s, iops 1/s,
    latencies ns), ``direction`` (read/write/trim), ``bs_bytes`` (0 for averaged windows), ``offset_bytes``
    (with --log_offset=1, else NA), ``prio`` (NA when not logged), ``kind`` and ``job`` (from the file
    name, else NA). has_offset: whether a 5-column line carries an offset (old fio with --log_offset=1)
    rather than fio >= 3.2x's priority; 6 columns always mean offset + priority. ParseError (one line,
    naming the file) for anything else, an empty file included.
    """
    text = _read_text(path)
    kind, job = log_kind(path)
    rows = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = [p.strip() for p in line.split(",")]
        if len(parts) not in (4, 5, 6):
            raise _bad(path, lineno, line, f"{len(parts)} fields, a fio interval log line has 4 to 6")
        try:
            nums = [int(p) for p in parts]
        except ValueError:
            raise _bad(path, lineno, line, "non-integer field") from None
        t, v, d, bs = nums[:4]
        offset = prio = None
        if len(nums) == 6:
            offset, prio = nums[4], nums[5]
        elif len(nums) == 5:
            offset, prio = (nums[4], None) if has_offset else (None, nums[4])
        if d not in LOG_DIRECTIONS:
            raise _bad(path, lineno, line, f"direction {d} is not 0 (read), 1 (write) or 2 (trim)")
        if t < 0 or v < 0 or bs < 0 or (offset is not None and offset < 0):
            raise _bad(path, lineno, line, "negative time, value, size or offset")
        rows.append((t, v, LOG_DIRECTIONS[d], bs, offset, prio))
    if not rows:
        raise ParseError(f"{path}: empty fio log (fio wrote no entry: run shorter than one log window?)")
    df = pd.DataFrame(rows, columns=["time_ms", "value", "direction", "bs_bytes", "offset_bytes", "prio"])
    for col in ("offset_bytes", "prio"):
        df[col] = df[col].astype("Int64")
    df["kind"] = kind
    df["job"] = pd.array([job] * len(df), dtype="Int64")
    return df


@dataclass
class HistLog:
    """One fio histogram log: per line its time (ms, end of the window), direction, bs and bin counts.

    counts[i, j]: I/Os of line i in bin j (per interval, not cumulative); values_ns[j]: the latency bin j
    stands for (ns); coarseness: fio's --log_hist_coarseness the file was written with.
    """

    path: str
    time_ms: np.ndarray
    direction: np.ndarray
    bs_bytes: np.ndarray
    counts: np.ndarray
    values_ns: np.ndarray
    coarseness: int
    job: int | None = None

    def __len__(self) -> int:
        return len(self.time_ms)

    def frame(self) -> pd.DataFrame:
        """time_ms, direction, bs_bytes, ios (I/Os in the line), job."""
        return pd.DataFrame({"time_ms": self.time_ms, "direction": self.direction, "bs_bytes": self.bs_bytes,
                             "ios": self.counts.sum(axis=1), "job": self.job})


def read_hist_log(path: Path | str) -> HistLog:
    """One fio histogram log (``--write_hist_log``); ParseError (one line, naming the file) if unreadable."""
    text = _read_text(path)
    _, job = log_kind(path)
    times, dirs, sizes, rows = [], [], [], []
    width = None
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 4:
            raise _bad(path, lineno, line, "too few fields for a histogram log line")
        if width is None:
            width = len(parts)
            try:
                bin_values(width - 3)
            except ValueError as err:
                raise _bad(path, lineno, line[:60], str(err)) from None
        elif len(parts) != width:
            raise _bad(path, lineno, line[:60], f"{len(parts)} fields where the first line had {width}")
        try:
            nums = [int(p) for p in parts]
        except ValueError:
            raise _bad(path, lineno, line[:60], "non-integer field") from None
        if nums[1] not in LOG_DIRECTIONS:
            raise _bad(path, lineno, line[:60], f"direction {nums[1]} is not 0, 1 or 2")
        if min(nums) < 0:
            raise _bad(path, lineno, line[:60], "negative field")
        times.append(nums[0])
        dirs.append(LOG_DIRECTIONS[nums[1]])
        sizes.append(nums[2])
        rows.append(nums[3:])
    if width is None:
        raise ParseError(f"{path}: empty fio histogram log (no window closed: run shorter than log_hist_msec?)")
    values, coarse = bin_values(width - 3)
    return HistLog(str(path), np.array(times, dtype=np.int64), np.array(dirs, dtype=object),
                   np.array(sizes, dtype=np.int64), np.array(rows, dtype=np.int64), values, coarse, job)


def merged_percentiles(hists: Sequence[HistLog], percentiles: Iterable[float] = (50.0, 99.0, 99.9), *,
                       direction: str | None = None) -> dict[float, float]:
    """{percentile: latency ns} of every line of ``hists`` merged (bin counts summed, never averaged).

    direction: only lines of that direction. All logs must share one bin layout (ValueError if not).
    """
    total = None
    values = None
    for h in hists:
        sel = h.counts if direction is None else h.counts[h.direction == direction]
        if values is not None and not np.array_equal(values, h.values_ns):
            raise ValueError(f"{h.path}: histogram layout differs from the other logs (coarseness?)")
        values = h.values_ns
        s = sel.sum(axis=0)
        total = s if total is None else total + s
    if total is None:
        return {p: math.nan for p in percentiles}
    return hist_percentiles(total, percentiles, values)


def read_iolog(path: Path | str) -> pd.DataFrame:
    """A fio version 3 iolog (``--write_iolog``) as a frame of its I/O lines.

    Columns: ``time_us`` (submission, us since the job started), ``file``, ``action`` (read, write, trim,
    sync, datasync), ``offset_bytes``, ``length_bytes``. File lines (add/open/close) are skipped.
    ParseError for a version 2 log (no times), another file, or damage.
    """
    text = _read_text(path)
    lines = text.splitlines()
    if not lines or lines[0].strip() != "fio version 3 iolog":
        head = lines[0].strip()[:40] if lines else ""
        why = "a version 2 iolog has no times" if head == "fio version 2 iolog" else "not a fio version 3 iolog"
        raise ParseError(f"{path}: {why} (first line {head!r}); write it with fio >= 3.31 --write_iolog")
    rows = []
    for lineno, line in enumerate(lines[1:], 2):
        parts = line.split()
        if not parts:
            continue
        if len(parts) == 3 and parts[2] in ("add", "open", "close"):
            continue
        if len(parts) != 5:
            raise _bad(path, lineno, line, "an I/O line is 'time file action offset length'")
        try:
            t, off, length = int(parts[0]), int(parts[3]), int(parts[4])
        except ValueError:
            raise _bad(path, lineno, line, "non-integer time, offset or length") from None
        if t < 0 or off < 0 or length < 0:
            raise _bad(path, lineno, line, "negative time, offset or length")
        rows.append((t, parts[1], parts[2], off, length))
    return pd.DataFrame(rows, columns=["time_us", "file", "action", "offset_bytes", "length_bytes"])


def submit_times_us(log: pd.DataFrame) -> np.ndarray:
    """Submission times (us, sorted) of the I/Os in an iolog frame (:func:`read_iolog`) or a per-I/O lat
    log frame (:func:`read_interval_log` of ``--write_lat_log`` with ``--log_avg_msec=0``: completion
    time_ms x 1000 - latency ns / 1000; ms resolution, so only for gaps well above 1 ms)."""
    if "time_us" in log.columns:
        io = log[log["action"].isin(("read", "write", "trim"))]
        return np.sort(io["time_us"].to_numpy(dtype=np.float64))
    if {"time_ms", "value"} <= set(log.columns):
        return np.sort(log["time_ms"].to_numpy(dtype=np.float64) * 1000.0 - log["value"].to_numpy(np.float64) / 1e3)
    raise ValueError("submit_times_us wants an iolog frame (time_us) or a per-I/O lat log frame (time_ms, value)")


# ---------------------------------------------------------------------------------- log folders
@dataclass
class FioLogs:
    """Every fio log of one run (a point's sidecar folder), one entry per job file."""

    folder: str
    interval: dict[str, list[pd.DataFrame]] = field(default_factory=dict)  # kind -> frames (one per job)
    hist: list[HistLog] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)  # log files fio left empty (no window closed)


def read_log_folder(folder: Path | str) -> FioLogs:
    """Read every ``*_<kind>.<N>.log`` file in ``folder`` (bw, iops, lat, clat, slat, clat_hist).

    Empty files (fio closed no window: a run shorter than the log window) are listed in ``empty``.
    ParseError (one line) for a missing folder, a folder without fio logs or any unreadable log.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ParseError(f"{folder}: no such folder of fio logs")
    logs = FioLogs(str(folder))
    for path in sorted(folder.iterdir()):
        kind, _ = log_kind(path)
        if kind is None:
            continue
        if path.stat().st_size == 0:
            logs.empty.append(path.name)
            continue
        if kind == "clat_hist":
            logs.hist.append(read_hist_log(path))
        else:
            logs.interval.setdefault(kind, []).append(read_interval_log(path))
    if not logs.hist and not logs.interval:
        what = f"only empty fio logs ({', '.join(logs.empty[:3])})" if logs.empty else "no fio logs"
        raise ParseError(f"{folder}: {what} in it (expected files like fio_iops.1.log with entries)")
    return logs


def _second_of(time_ms: np.ndarray, window_ms: np.ndarray) -> np.ndarray:
    """The second (0, 1, ...) a window ending at ``time_ms`` and ``window_ms`` long belongs to: the one
    holding its middle (fio closes windows a few ms late: 1001, 2002 ms)."""
    mid = np.asarray(time_ms, dtype=np.float64) - np.asarray(window_ms, dtype=np.float64) / 2.0
    return np.floor(np.maximum(mid, 0.0) / 1000.0).astype(np.int64)


def _windows(frame: pd.DataFrame) -> pd.DataFrame:
    """frame + ``window_ms`` (time since the job's previous entry of that direction) and ``t_s``."""
    frame = frame.sort_values(["direction", "time_ms"]).copy()
    prev = frame.groupby("direction")["time_ms"].shift(1).fillna(0)
    frame["window_ms"] = (frame["time_ms"] - prev).clip(lower=1)
    frame["t_s"] = _second_of(frame["time_ms"].to_numpy(), frame["window_ms"].to_numpy())
    return frame


def _averaged(frames: list[pd.DataFrame], what: str) -> list[pd.DataFrame]:
    for f in frames:
        if len(f) and (f["bs_bytes"] != 0).any():
            raise ParseError(f"job {f['job'].iloc[0]}: the {what} log has one line per I/O (--log_avg_msec=0); "
                             "the per-second series needs averaged windows (--log_avg_msec=1000)")
    return frames


def per_second(logs: FioLogs | Path | str) -> pd.DataFrame:
    """Tidy per-second series of one run, every job summed: one row per second x direction.

    Columns: ``t_s`` (second since the start: 0 = [0, 1) s), ``direction``, ``iops`` (I/Os in that second,
    summed over jobs, from the iops logs), ``bw_MBps`` (10^6 bytes/s, from the bw logs' KiB/s x 1024),
    ``lat_mean_us`` (total latency, the jobs' window means weighted by their I/O counts),
    ``clat_p50_us``, ``clat_p99_us``, ``clat_p99_9_us`` (completion latency, from the merged histograms
    of every job and window of that second: fio's hist log holds clat only), ``hist_ios`` (I/Os in those
    histograms) and ``jobs`` (job logs seen that second). A value no log gives is NaN (empty cell).
    Windows are counted in the second holding their middle; fio up to 3.36 never writes a run's last window
    and 3.42 writes it partial (see the module notes), so the last second of a run is missing or partial.
    """
    if not isinstance(logs, FioLogs):
        logs = read_log_folder(logs)
    parts = []
    for kind, column, scale in (("iops", "iops", 1.0), ("bw", "bw_MBps", 1024 / 1e6)):
        frames = _averaged(logs.interval.get(kind, []), kind)
        if not frames:
            continue
        w = pd.concat([_windows(f) for f in frames], ignore_index=True)
        w["amount"] = w["value"] * w["window_ms"] / 1000.0 * scale  # I/Os or MB in the window
        g = w.groupby(["t_s", "direction"]).agg(amount=("amount", "sum"), jobs=("job", "nunique"))
        parts.append(g.rename(columns={"amount": column, "jobs": f"jobs_{kind}"}))
    lat_frames = _averaged(logs.interval.get("lat", []), "lat")
    if lat_frames:
        lat = pd.concat([_windows(f) for f in lat_frames], ignore_index=True)
        weight = pd.Series(1.0, index=lat.index)
        iops_frames = logs.interval.get("iops", [])
        if iops_frames:
            ios = pd.concat([_windows(f) for f in iops_frames], ignore_index=True)
            ios["n"] = ios["value"] * ios["window_ms"] / 1000.0
            n = ios.groupby(["job", "t_s", "direction"])["n"].sum()
            keys = pd.MultiIndex.from_frame(lat[["job", "t_s", "direction"]])
            weight = pd.Series(n.reindex(keys).to_numpy(), index=lat.index).fillna(0.0)
            weight[weight.groupby([lat["t_s"], lat["direction"]]).transform("sum") == 0] = 1.0
        lat["w"] = weight
        lat["wv"] = lat["value"] * weight / 1000.0  # ns -> us
        g = lat.groupby(["t_s", "direction"]).agg(wv=("wv", "sum"), w=("w", "sum"))
        parts.append(pd.DataFrame({"lat_mean_us": g["wv"] / g["w"]}))
    if logs.hist:
        parts.append(_hist_per_second(logs.hist))
    if not parts:
        raise ParseError(f"{logs.folder}: no bw, iops, lat or histogram logs to build a series from")
    out = pd.concat(parts, axis=1).sort_index().reset_index()
    job_cols = [c for c in out.columns if c.startswith("jobs_")]
    out["jobs"] = out[job_cols].max(axis=1) if job_cols else np.nan
    cols = ["t_s", "direction", "iops", "bw_MBps", "lat_mean_us",
            *(f"clat_{s}_us" for s, _ in SERIES_PERCENTILES), "hist_ios", "jobs"]
    for c in cols:
        if c not in out.columns:
            out[c] = np.nan
    return out[cols]


def point_seconds(folder: Path | str) -> pd.DataFrame:
    """:func:`per_second` of a point's sidecar folder (``<raw dir>/<point>.files``)."""
    return per_second(folder)


def _hist_per_second(hists: list[HistLog]) -> pd.DataFrame:
    """Per (t_s, direction): merged histogram percentiles (us) and I/O count."""
    values = hists[0].values_ns
    acc: dict[tuple[int, str], np.ndarray] = {}
    for h in hists:
        if not np.array_equal(values, h.values_ns):
            raise ParseError(f"{h.path}: histogram layout differs from {hists[0].path} (coarseness?)")
        for d in np.unique(h.direction):
            sel = h.direction == d
            t = h.time_ms[sel]
            prev = np.concatenate([[0], t[:-1]])
            secs = _second_of(t, np.maximum(t - prev, 1))
            for s, row in zip(secs, h.counts[sel]):
                key = (int(s), str(d))
                acc[key] = row.copy() if key not in acc else acc[key] + row
    rows = []
    for (s, d), counts in sorted(acc.items()):
        pct = hist_percentiles(counts, [p for _, p in SERIES_PERCENTILES], values)
        row = {"t_s": s, "direction": d, "hist_ios": int(counts.sum())}
        row.update({f"clat_{name}_us": pct[p] / 1000.0 for name, p in SERIES_PERCENTILES})
        rows.append(row)
    return pd.DataFrame(rows).set_index(["t_s", "direction"])
