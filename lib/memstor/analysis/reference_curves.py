"""Published Mess bandwidth–latency curves as reference data, and the platforms closest to a measured curve (pure).

Mess (Esmaili-Dokht et al., MICRO 2024; Barcelona Supercomputing Center, github.com/bsc-mem) describes a
memory system by a *family* of bandwidth–latency curves, one per **read share**: the percentage of the
memory (DRAM) traffic that is reads, as counted by the memory controllers (CAS_COUNT.RD / (RD + WR) on
Intel). It is not the load share of the instruction mix: with ordinary (write-allocate) stores each store
costs a read and a write, so a store-only kernel makes 50 % read traffic. memstor's own loaded-latency
curves must be compared with the Mess curve of the same *traffic* read share (the 100 % curve for a
read-only traffic generator).

memstor ships a few of these curves in ``_resources/reference/mess/`` (``data/reference/mess/`` in the
repository; ``SOURCES.md`` there gives the repository, commit and path of every platform, the licence
(BSD-3-Clause, ``LICENSE-Mess.txt``) and the unit conversions):

- ``curves.csv``: ``platform, read_share_pct, bandwidth_MBps, latency_ns`` — one row per published point,
  bandwidth in MB/s (10^6 B/s) per socket, latency of one loaded memory access in ns (the source gives CPU
  cycles; they were divided by the frequency the source itself uses for that platform).
- ``platforms.csv``: ``platform, cpu, memory, channels, mts, sockets_measured, source_repo, source_commit,
  source_path, licence`` (blank where the source says nothing).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from memstor.core.errors import MemstorError
from memstor.core.resources import resource_dir

#: The columns of ``curves.csv`` (read share in %, bandwidth in MB/s = 10^6 B/s, latency in ns).
CURVE_COLUMNS = ("platform", "read_share_pct", "bandwidth_MBps", "latency_ns")
#: The columns of ``platforms.csv`` (``mts``: memory transfer rate in MT/s; ``channels``: memory channels).
PLATFORM_COLUMNS = ("platform", "cpu", "memory", "channels", "mts", "sockets_measured", "source_repo",
                    "source_commit", "source_path", "licence")
#: The columns of :func:`load_mess_curves`: every curve point with its platform's metadata.
REFERENCE_COLUMNS = CURVE_COLUMNS + PLATFORM_COLUMNS[1:]
#: The columns of :func:`closest_platforms` (latencies in ns, bandwidths in MB/s).
CLOSEST_COLUMNS = ("platform", "distance", "idle_latency_ns", "peak_MBps", "measured_idle_latency_ns",
                   "measured_peak_MBps")
#: Where the Mess curves come from, for captions.
MESS_CITATION = "Mess (Esmaili-Dokht et al., MICRO 2024)"


def _mess_folder(folder: Path | None) -> Path:
    return Path(folder) if folder is not None else resource_dir("reference") / "mess"


def _read_table(path: Path, columns: tuple[str, ...]) -> pd.DataFrame:
    """``path`` read as CSV with at least ``columns``; MemstorError naming the file otherwise."""
    if not path.is_file():
        raise MemstorError(f"{path}: memstor's Mess reference file is missing; reinstall memstor or restore "
                           "data/reference/mess/ from the repository")
    try:
        table = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, ValueError) as err:
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise MemstorError(f"{path}: not a readable CSV table ({reason}); restore it from the repository") from None
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise MemstorError(f"{path}: malformed Mess reference table, missing column(s) {', '.join(missing)}; "
                           "restore it from the repository")
    return table


def _check_curves(table: pd.DataFrame, path: Path) -> pd.DataFrame:
    """The numeric columns of ``curves.csv`` as floats, each value in range; MemstorError naming the file."""
    table = table.copy()
    for column in ("read_share_pct", "bandwidth_MBps", "latency_ns"):
        values = pd.to_numeric(table[column], errors="coerce")
        bad = values.isna() | ~np.isfinite(values.to_numpy(dtype=float, na_value=np.nan))
        if column == "read_share_pct":
            bad |= (values < 0) | (values > 100)
        else:
            bad |= values <= 0
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0]) + 2  # 1-based, after the header line
            raise MemstorError(f"{path}: malformed Mess reference curves, line {row}: {column} "
                               f"{table[column].iloc[row - 2]!r} is not a valid value; restore the file")
        table[column] = values.astype(float)
    if table["platform"].isna().any():
        raise MemstorError(f"{path}: malformed Mess reference curves, a row has no platform; restore the file")
    return table


def load_mess_curves(folder: Path | None = None) -> pd.DataFrame:
    """The shipped Mess curves, one row per published point with its platform's metadata.

    Columns :data:`REFERENCE_COLUMNS`: ``read_share_pct`` (share of the memory traffic that is reads, %),
    ``bandwidth_MBps`` (MB/s = 10^6 B/s, one socket), ``latency_ns`` (ns), then ``platforms.csv``'s columns.
    Rows keep the source's order. ``folder`` defaults to the installed ``reference/mess`` folder (tests point
    it elsewhere). MemstorError naming the file when ``curves.csv`` or ``platforms.csv`` is missing or
    malformed, or when a curve's platform has no metadata row.
    """
    base = _mess_folder(folder)
    curves_path, platforms_path = base / "curves.csv", base / "platforms.csv"
    curves = _check_curves(_read_table(curves_path, CURVE_COLUMNS), curves_path)
    platforms = _read_table(platforms_path, PLATFORM_COLUMNS)
    if platforms["platform"].duplicated().any():
        twice = platforms.loc[platforms["platform"].duplicated(), "platform"].iloc[0]
        raise MemstorError(f"{platforms_path}: malformed Mess platform table, {twice!r} appears twice; "
                           "restore the file")
    unknown = sorted(set(curves["platform"]) - set(platforms["platform"]))
    if unknown:
        raise MemstorError(f"{platforms_path}: no metadata row for platform(s) {', '.join(map(str, unknown))} "
                           f"of {curves_path.name}; restore the files")
    merged = curves[list(CURVE_COLUMNS)].merge(platforms[list(PLATFORM_COLUMNS)], on="platform", how="left",
                                               sort=False)
    return merged[list(REFERENCE_COLUMNS)]


def _idle_and_peak(points: pd.DataFrame) -> tuple[float, float]:
    """(idle latency in ns, peak bandwidth in MB/s): the latency at the lowest bandwidth, the highest bandwidth."""
    usable = points[(points["bandwidth_MBps"] > 0) & (points["latency_ns"] > 0)]
    usable = usable[np.isfinite(usable["bandwidth_MBps"]) & np.isfinite(usable["latency_ns"])]
    if usable.empty:
        return math.nan, math.nan
    lowest = usable["bandwidth_MBps"].idxmin()
    return float(usable.loc[lowest, "latency_ns"]), float(usable["bandwidth_MBps"].max())


def _top_read_share(points: pd.DataFrame) -> pd.DataFrame:
    """The points of the highest read share present (the 100 % curve when there is one)."""
    return points[points["read_share_pct"] == points["read_share_pct"].max()]


def _latency_at(points: pd.DataFrame, bandwidth: float) -> float:
    """A curve's latency (ns) at `bandwidth` (MB/s): linear interpolation over its points in order of bandwidth
    (NaN beyond its highest bandwidth: the platform did not reach it)."""
    c = points.sort_values("bandwidth_MBps")
    bw, lat = c["bandwidth_MBps"].to_numpy(float), c["latency_ns"].to_numpy(float)
    if len(c) == 0 or bandwidth > bw[-1]:
        return math.nan
    return float(np.interp(bandwidth, bw, lat))


def closest_platforms(measured: pd.DataFrame, reference: pd.DataFrame, n: int = 3) -> pd.DataFrame:
    """The ``n`` reference platforms whose read-only curve is closest to one host's measured curve, judged
    over the range this host's load reached.

    ``measured``: one host's points, columns ``bandwidth_MBps`` (MB/s) and ``latency_ns`` (ns), optionally
    ``read_share_pct`` (share of memory traffic that is reads, %): then only its 100 % points are used (none
    → empty result), else all points. ``reference``: :func:`load_mess_curves`' table; each platform's
    100 %-read curve is used (its highest read share when it has none).

    Two log ratios, so latency and bandwidth weigh alike whatever their units (0.1 is about 10 %): the idle
    latency (the latency at the lowest bandwidth), and the latency at the highest bandwidth this host measured
    — the reference curve read at that bandwidth. A host's peak is what its load threads reached, not its
    memory system's peak (a 16-vCPU slice of a many-channel server reaches a fraction of the socket's peak),
    so peaks are not compared as such: a platform whose own peak lies below the host's highest bandwidth
    could not have delivered it and its second term is ``ln(peak_measured / peak_ref)`` (how far short it
    falls) instead. ``distance = sqrt(idle_term^2 + loaded_term^2)``.

    Returns :data:`CLOSEST_COLUMNS`, sorted by distance (then platform), at most ``n`` rows; an empty table
    with those columns when ``measured`` has no usable point.
    """
    empty = pd.DataFrame({c: pd.Series(dtype=object if c == "platform" else float) for c in CLOSEST_COLUMNS})
    if n <= 0 or measured is None or measured.empty or reference.empty:
        return empty
    points = measured
    if "read_share_pct" in points.columns:
        points = points[pd.to_numeric(points["read_share_pct"], errors="coerce") == 100]
    points = points.astype({"bandwidth_MBps": float, "latency_ns": float})
    idle_m, peak_m = _idle_and_peak(points)
    if not (idle_m > 0 and peak_m > 0):
        return empty
    loaded_m = _latency_at(points[(points["bandwidth_MBps"] > 0) & (points["latency_ns"] > 0)], peak_m)
    rows = []
    for platform, curve in reference.groupby("platform", sort=False):
        ref = _top_read_share(curve)
        idle_r, peak_r = _idle_and_peak(ref)
        if not (idle_r > 0 and peak_r > 0):
            continue
        loaded_r = _latency_at(ref[(ref["bandwidth_MBps"] > 0) & (ref["latency_ns"] > 0)], peak_m)
        loaded = math.log(peak_m / peak_r) if not loaded_r > 0 else math.log(loaded_r / loaded_m)
        distance = math.hypot(math.log(idle_r / idle_m), loaded)
        rows.append({"platform": platform, "distance": distance, "idle_latency_ns": idle_r, "peak_MBps": peak_r,
                     "measured_idle_latency_ns": idle_m, "measured_peak_MBps": peak_m})
    if not rows:
        return empty
    table = pd.DataFrame(rows, columns=list(CLOSEST_COLUMNS))
    return table.sort_values(["distance", "platform"], kind="stable").head(n).reset_index(drop=True)


def reference_caption(platforms: Iterable[str]) -> str:
    """One sentence for a figure caption naming the source, the licence and the platforms drawn.

    E.g. "Published curves: Mess (Esmaili-Dokht et al., MICRO 2024), BSD-3-Clause; platforms: a, b (read
    share = % of memory traffic that is reads; bandwidth per socket)."
    """
    names = [str(p) for p in dict.fromkeys(platforms)]
    shown = ", ".join(names) if names else "none"
    return (f"Published curves: {MESS_CITATION}, BSD-3-Clause; platforms: {shown} (read share = % of memory "
            "traffic that is reads; bandwidth per socket).")
