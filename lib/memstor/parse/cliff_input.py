"""Per-second throughput series for the cliff analysis (memstor.analysis.cliffs) from fio logs or a CSV.

Inputs, each giving ONE run's series (``t_s``: whole seconds since the start, 0 = [0, 1) s):

- fio bandwidth logs ``PREFIX_bw.N.log`` / ``PREFIX_bw.log`` (``--write_bw_log=PREFIX``) -> ``bw_MBps``
  (10^6 B/s). fio's bw values are KiB/s (1024 B/s): measured with fio-3.33 here, ``rate=20000000`` (B/s),
  64 KiB writes, 1000 ms windows -> 19475-19584 per line, 20e6 / 1024 = 19531; ``rate=60000000`` ->
  58595-58682, 60e6 / 1024 = 58594. So MB/s = value x 1024 / 1e6.
- fio IOPS logs ``PREFIX_iops.N.log`` / ``PREFIX_iops.log`` -> ``iops`` (I/Os per second).
- a CSV with ``t_s`` and one throughput column: MB/s (10^6 B/s) as ``bw_MBps``, ``MBps``, ``MB_s`` or
  ``MB/s``; IOPS as ``iops`` or ``IOPS`` (the first of these names present is used, MB/s first; it is
  renamed ``bw_MBps`` or ``iops``); ``t_s`` whole seconds, one row each; an optional ``gb_written``
  column (decimal GB at the end of each second) is kept.

What fio writes (fio-3.33, checked on real output on this 2-vCPU KVM VM, virtio disk): an interval log
line is ``time_ms, value, direction, bs, prio`` (memstor.parse.fio_logs). With ``--log_avg_msec=M > 0``
each line is one window's average and its bs field is 0 (so an averaged IOPS log cannot tell the bytes:
``gb_written`` then stays unknown unless the analysis is given the block size); with ``--log_avg_msec=0``
each line is one I/O with its size in bs, and the series is binned here to whole seconds (I/Os and bytes
per second, a second without a line had no I/O), ``gb_written`` exact. Averaged windows of any length up
to 1 s are binned to seconds by memstor.parse.fio_logs.per_second (a window counts in the second holding
its middle); longer windows are refused (no per-second series without spreading them, a guess).
Times are ms since EACH JOB's start: with ``--per_job_logs=0`` the jobs of a run share one file whose
times restart at every job (measured: two stonewalled jobs, lines at 1125 ... 4124 then 1000 ... 4000 ms),
so a file whose times go back is refused (the jobs cannot be put on one time axis); ``--log_unix_epoch=1``
times (absolute ms) are refused too. Per-job logs (``per_job_logs=1``, the default) of one run are
summed per second: right for jobs that run together (numjobs, jobs without stonewall); stonewalled jobs
each start at 0 and cannot be told apart from the logs. Logs of different prefixes or folders are
different runs and never pooled. A log with several directions gives its write series (a cliff is about
writing); one direction is used as it is.

Every reader raises ParseError with one line naming the file (or folder) and the way out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from memstor.core.errors import ParseError
from memstor.parse.fio_logs import FioLogs, per_second, read_interval_log
from memstor.parse.guards import one_line

#: CSV throughput column names accepted, in the order they are looked for -> (canonical column, unit).
CSV_THROUGHPUT = {"bw_MBps": ("bw_MBps", "MB/s"), "MBps": ("bw_MBps", "MB/s"), "MB_s": ("bw_MBps", "MB/s"),
                  "MB/s": ("bw_MBps", "MB/s"), "iops": ("iops", "IOPS"), "IOPS": ("iops", "IOPS")}
#: fio log kind -> (series column, unit).
LOG_SERIES = {"bw": ("bw_MBps", "MB/s"), "iops": ("iops", "IOPS")}
#: bw log KiB/s -> MB/s (10^6 B/s).
KIB_TO_MB = 1024 / 1e6
#: Longest averaging window binned to seconds (ms): fio closes 1000 ms windows a few ms late.
MAX_WINDOW_MS = 1100
#: A log time above this (ms, about 3 years) is a Unix-epoch time (--log_unix_epoch=1).
EPOCH_MS = 1e11
_LOG = re.compile(r"^(?P<prefix>.+)_(?P<kind>bw|iops)(?:\.(?P<job>\d+))?\.log$")
_CSV_NAMES = ", ".join(n for n in CSV_THROUGHPUT if CSV_THROUGHPUT[n][1] == "MB/s")
_IOPS_NAMES = ", ".join(n for n in CSV_THROUGHPUT if CSV_THROUGHPUT[n][1] == "IOPS")


@dataclass(frozen=True)
class SeriesInput:
    """One run's input: ``source`` (its name in the cliffs table), ``kind`` (bw, iops or csv) and its
    file(s) (several only for the per-job logs of one run)."""

    source: str
    kind: str
    paths: tuple[Path, ...]


def log_name(path: Path | str) -> tuple[str, str] | None:
    """(prefix, kind) of a fio bw/iops log name ``PREFIX_bw[.N].log`` / ``PREFIX_iops[.N].log``, else None."""
    m = _LOG.match(Path(path).name)
    return (m.group("prefix"), m.group("kind")) if m else None


def _named(path: Path) -> SeriesInput:
    name = log_name(path)
    if name is not None:
        return SeriesInput(str(path), name[1], (path,))
    if path.suffix.lower() == ".csv":
        return SeriesInput(str(path), "csv", (path,))
    raise ParseError(f"{path}: not a fio bw/iops log (PREFIX_bw.N.log, PREFIX_iops.N.log) or a .csv per-second "
                     "series; give those files or their folder")


def _folder(folder: Path) -> tuple[list[SeriesInput], str]:
    files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    for kind, what in (("bw", "fio bw logs"), ("iops", "fio iops logs"), ("csv", "CSV files")):
        chosen = [p for p in files if (log_name(p) or ("", ""))[1] == kind
                  or (kind == "csv" and p.suffix.lower() == ".csv")]
        if chosen:
            files_text = f"{len(chosen)} file" + ("s" if len(chosen) > 1 else "")
            return [_named(p) for p in chosen], f"{folder}: used its {what} ({files_text})"
    raise ParseError(f"{folder}: no fio bw or iops logs (PREFIX_bw.N.log, PREFIX_iops.N.log) or CSV files in "
                     "it (subfolders are not searched); give the folder that holds them")


def _grouped(inputs: list[SeriesInput]) -> list[SeriesInput]:
    """Per-job logs of one run (same folder, prefix and kind) as one input, in first-seen order."""
    groups: dict[tuple, list[Path]] = {}
    for inp in inputs:
        path = inp.paths[0]
        name = log_name(path) if inp.kind != "csv" else None
        key = (path.parent, *name) if name else (path,)
        groups.setdefault(key, [])
        if path not in groups[key]:
            groups[key].append(path)
    out = []
    for key, paths in groups.items():
        if len(key) == 1:
            out.append(_named(paths[0]))
        elif len(paths) == 1:
            out.append(SeriesInput(str(paths[0]), key[2], (paths[0],)))
        else:
            out.append(SeriesInput(str(key[0] / f"{key[1]}_{key[2]}.*.log"), key[2], tuple(paths)))
    return out


def collect_inputs(paths: Sequence[Path | str]) -> tuple[list[SeriesInput], list[str], list[str]]:
    """The runs under ``paths`` (files or folders): (inputs, notes, errors). A folder gives its fio bw logs,
    else its iops logs, else its CSV files (not its subfolders); per-job logs of one run (same folder,
    prefix and kind) become one input, summed per second. notes: which files a folder gave; errors: one
    ``PATH: reason`` line per path that gave nothing."""
    found: list[SeriesInput] = []
    notes, errors = [], []
    for raw in paths:
        p = Path(raw)
        try:
            if p.is_dir():
                inputs, note = _folder(p)
                found.extend(inputs)
                notes.append(note)
            elif p.exists():
                found.append(_named(p))
            else:
                raise ParseError(f"{p}: no such file or folder")
        except ParseError as err:
            errors.append(str(err))
        except OSError as err:
            errors.append(f"{p}: cannot read ({err.strerror or err})")
    return _grouped(found), notes, errors


# ------------------------------------------------------------------------------------------------ CSV
def _read_csv(path: Path) -> tuple[pd.DataFrame, str, str]:
    try:
        df = pd.read_csv(path, encoding="utf-8-sig")
    except pd.errors.EmptyDataError:
        raise ParseError(f"{path}: empty file; a per-second CSV has a header (t_s and a throughput column) "
                         "and one row per second") from None
    except OSError as err:
        raise ParseError(f"{path}: cannot read the CSV ({err.strerror or err})") from None
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as err:
        raise ParseError(one_line(f"{path}: not a CSV table ({err}); give t_s and a throughput column",
                                  300)) from None
    df.columns = [str(c).strip() for c in df.columns]
    col = next((c for c in CSV_THROUGHPUT if c in df.columns), None)
    if "t_s" not in df.columns or col is None:
        missing = "t_s" if "t_s" not in df.columns else "a throughput column"
        shown = ", ".join(df.columns)[:120]
        raise ParseError(one_line(f"{path}: no {missing} column (columns: {shown}); a per-second CSV has t_s "
                                  f"and one of {_CSV_NAMES} (MB/s) or {_IOPS_NAMES} (IOPS)", 400))
    value_col, unit = CSV_THROUGHPUT[col]
    t = pd.to_numeric(df["t_s"], errors="coerce")
    v = pd.to_numeric(df[col], errors="coerce")
    if df.empty:
        raise ParseError(f"{path}: no rows under the header; one row per second is needed")
    if t.isna().any() or (t != np.floor(t)).any() or t.duplicated().any() or (t < 0).any():
        raise ParseError(f"{path}: t_s must be whole seconds >= 0, one row each (a per-second series of one run)")
    if (v < 0).any():
        raise ParseError(f"{path}: negative {col}; throughput is >= 0 (empty cell for not measured)")
    out = pd.DataFrame({"t_s": t.astype(np.int64), value_col: v.astype(np.float64)})
    if "gb_written" in df.columns:
        out["gb_written"] = pd.to_numeric(df["gb_written"], errors="coerce")
    out = out.sort_values("t_s").reset_index(drop=True)
    out.attrs["note"] = f"column {col}" + (f" as {value_col}" if col != value_col else "")
    return out, value_col, unit


# ------------------------------------------------------------------------------------------------ logs
def _check_log(path: Path, frame: pd.DataFrame) -> None:
    """Refuse what cannot be one time axis: Unix-epoch times, times that go back (several jobs in one file)."""
    t = frame["time_ms"].to_numpy(np.int64)
    if t.max() > EPOCH_MS:
        raise ParseError(f"{path}: Unix-epoch times (--log_unix_epoch=1); write the log without it (times "
                         "since the job's start)")
    for _, g in frame.groupby("direction"):
        back = np.flatnonzero(np.diff(g["time_ms"].to_numpy(np.int64)) < -100)
        if back.size:
            at = int(g["time_ms"].iloc[back[0]])
            raise ParseError(f"{path}: times go back after {at} ms: several jobs in one "
                             "file (--per_job_logs=0), each timed from its own start; write per-job logs "
                             "(--per_job_logs=1) of jobs that run together")


def _window_ms(frames: list[pd.DataFrame]) -> float:
    """The typical averaging window (ms) of averaged logs: median spacing of their lines."""
    gaps = [np.diff(np.concatenate([[0], g["time_ms"].to_numpy(np.float64)]))
            for f in frames for _, g in f.groupby("direction")]
    allgaps = np.concatenate(gaps) if gaps else np.array([])
    return float(np.median(allgaps[allgaps > 0])) if (allgaps > 0).any() else 0.0


def _direction(sec: pd.DataFrame, where: str) -> tuple[pd.DataFrame, str]:
    dirs = sorted(sec["direction"].unique())
    if len(dirs) == 1:
        return sec, ""
    if "write" not in dirs:
        raise ParseError(f"{where}: directions {', '.join(dirs)} and no write; give a log of one direction")
    others = ", ".join(d for d in dirs if d != "write")
    return sec[sec["direction"] == "write"], f"write direction (the logs also hold {others})"


def _per_io(frames: list[pd.DataFrame], kind: str, where: str) -> tuple[pd.DataFrame, str]:
    """Per-I/O logs (--log_avg_msec=0) binned to whole seconds: I/Os and bytes per second, every second
    from 0 to the last (a second without a line had no I/O), gb_written exact."""
    io = pd.concat(frames, ignore_index=True)
    io["t_s"] = io["time_ms"] // 1000
    io, note = _direction(io, where)
    g = io.groupby("t_s").agg(ios=("value", "size"), nbytes=("bs_bytes", "sum"))
    g = g.reindex(range(int(g.index.max()) + 1), fill_value=0)
    column = LOG_SERIES[kind][0]
    values = g["nbytes"] / 1e6 if kind == "bw" else g["ios"].astype(np.float64)
    out = pd.DataFrame({"t_s": g.index.astype(np.int64), column: values.to_numpy(np.float64),
                        "gb_written": g["nbytes"].cumsum().to_numpy(np.float64) / 1e9})
    return out, note


def _read_logs(paths: Sequence[Path], prefix: str, kind: str) -> tuple[pd.DataFrame, str, str]:
    """The per-second series of one run's bw or iops logs (one file, or its per-job files summed)."""
    where = str(paths[0]) if len(paths) == 1 else str(paths[0].parent / f"{prefix}_{kind}.*.log")
    frames = []
    for p in paths:
        f = read_interval_log(p)
        _check_log(p, f)
        frames.append(f)
    per_io = [bool((f["bs_bytes"] > 0).all()) for f in frames]
    averaged = [bool((f["bs_bytes"] == 0).all()) for f in frames]
    column, unit = LOG_SERIES[kind]
    if all(per_io):
        out, note = _per_io(frames, kind, where)
    elif all(averaged):
        window = _window_ms(frames)
        if window > MAX_WINDOW_MS:
            raise ParseError(f"{where}: log windows of about {window:.0f} ms are longer than a second; write the "
                             "logs with --log_avg_msec=1000 (or less) for a per-second series")
        sec = per_second(FioLogs(where, interval={kind: frames}))
        sec, note = _direction(sec, where)
        out = pd.DataFrame({"t_s": sec["t_s"].to_numpy(np.int64), column: sec[column].to_numpy(np.float64)})
    else:
        raise ParseError(f"{where}: per-I/O lines (bs > 0) mixed with averaged windows (bs 0); give the logs of "
                         "one run, written with one --log_avg_msec")
    jobs = f"{len(paths)} job logs summed per second" if len(paths) > 1 else ""
    out.attrs["note"] = "; ".join(x for x in (jobs, note) if x)
    return out.reset_index(drop=True), column, unit


def read_throughput_series(path: Path | str | Sequence[Path | str]) -> tuple[pd.DataFrame, str, str]:
    """One run's per-second throughput series: (frame, value_col, unit).

    path: a fio bw or iops log, a CSV (module docstring), or a sequence of the per-job logs of ONE run
    (same folder, prefix and kind; summed per second). frame: ``t_s`` (whole seconds since the start),
    ``value_col`` (``bw_MBps``, 10^6 B/s, with unit "MB/s"; or ``iops``, I/Os per second, unit "IOPS") and,
    when the input tells it, ``gb_written`` (decimal GB at the end of each second); ``frame.attrs["note"]``
    says what was combined or chosen. ParseError (one line, naming the file) for anything else.
    """
    paths = [Path(path)] if isinstance(path, (str, Path)) else [Path(p) for p in path]
    if not paths:
        raise ParseError("read_throughput_series: no file given; give a fio bw/iops log or a per-second CSV")
    for p in paths:
        if not p.is_file():
            raise ParseError(f"{p}: no such file (a fio bw/iops log or a per-second CSV)")
    if len(paths) == 1 and paths[0].suffix.lower() == ".csv" and log_name(paths[0]) is None:
        return _read_csv(paths[0])
    names = set()
    for p in paths:
        name = log_name(p)
        if name is None:
            raise ParseError(f"{p}: not a fio bw/iops log (PREFIX_bw.N.log, PREFIX_iops.N.log) or a .csv "
                             "per-second series")
        names.add(name)
    if len(names) > 1 or len({p.parent for p in paths}) > 1:
        runs = ", ".join(sorted(f"{prefix}_{kind}" for prefix, kind in names))
        raise ParseError(f"{paths[0]}: logs of different runs ({runs}, or folders) are never pooled; give the "
                         "logs of one run")
    prefix, kind = names.pop()
    return _read_logs(paths, prefix, kind)
