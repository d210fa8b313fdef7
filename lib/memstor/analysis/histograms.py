"""The processed bins tables for the analysis: read them, select one job's histogram, latency CDFs.

When memstor parses a raw json+ output it writes the histograms beside the experiment's table
(``<data>/processed/<device>/<experiment>-bins.csv``, memstor.parse.fio_bins; ``fio-bins.csv`` beside an
imported ``fio.csv``), so the analysis never opens ``data/raw/``. A data folder written before the bins
tables existed has none: what needs bins (clone percentiles, CDFs, service times) is then "not
available" (empty), never computed from something else. Merging and fio's percentile rule are
memstor.core.fiohist's. Units: ns in the bins, µs in the frames returned (``clat_us``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from memstor.core import fiohist
from memstor.core.fiohist import BIN_COLUMNS, BINS_SUFFIX

#: The experiment name of imported tables (memstor.analysis.dataset) and the table file it stands for.
IMPORTED = {"imported": "fio"}
CDF_COLUMNS = ["clat_us", "count", "cdf"]


def bins_path(data_dir: Path | str, host: str, table: str) -> Path:
    """``<data>/processed/<host>/<table>-bins.csv``: the bins table of one experiment table of a device."""
    name = IMPORTED.get(str(table), str(table))
    return Path(data_dir) / "processed" / str(host) / f"{name}{BINS_SUFFIX}.csv"


def empty_bins() -> pd.DataFrame:
    """A bins table without rows (BIN_COLUMNS)."""
    return pd.DataFrame(columns=list(BIN_COLUMNS))


def read_bins(data_dir: Path | str | None, pairs: Iterable[tuple]) -> pd.DataFrame:
    """The bins tables of the (host, experiment) pairs under ``data_dir`` in one frame (BIN_COLUMNS plus
    ``host`` and ``experiment``); a pair without a bins table (older data, text outputs) adds no rows."""
    frames = []
    if data_dir is not None:
        for host, table in sorted({(str(h), str(t)) for h, t in pairs}):
            path = bins_path(data_dir, host, table)
            if path.is_file():
                try:
                    df = pd.read_csv(path)
                except (OSError, pd.errors.EmptyDataError, pd.errors.ParserError):
                    continue  # unreadable: the histograms of that table are not available
                frames.append(df.reindex(columns=list(BIN_COLUMNS)).assign(host=host, experiment=table))
    if not frames:
        return empty_bins().assign(host=pd.Series(dtype=object), experiment=pd.Series(dtype=object))
    return pd.concat(frames, ignore_index=True)


def key_text(v) -> str:
    """A job key (groupid, jobname) as text for matching: '?' when unknown, 3.0 -> '3'."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "?"
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v)


def select(bins: pd.DataFrame, *, source=None, jobname=None, groupid=None, direction: str | None = None,
           kind: str = "clat") -> pd.DataFrame:
    """The rows of a bins table for one raw file / job / direction (None: any) of one kind."""
    if bins.empty:
        return bins
    keep = bins["kind"].astype(str) == kind
    if source is not None:
        keep &= bins["source"].astype(str) == str(source)
    if jobname is not None:
        keep &= bins["jobname"].map(key_text) == key_text(jobname)
    if groupid is not None:
        keep &= bins["groupid"].map(key_text) == key_text(groupid)
    if direction is not None:
        dirs = ["read", "write", "trim"] if direction == "total" else [direction]
        keep &= bins["direction"].isin(dirs)
    return bins[keep]


def as_histogram(rows: pd.DataFrame) -> dict[int, int]:
    """Bin rows merged into one sparse histogram {latency_ns: count} (memstor.core.fiohist.merge_bins): rows of
    the same bin (the read and write histograms of a mixed job, the clones of a job) add up."""
    if rows.empty:
        return {}
    return fiohist.merge_bins({int(k): int(v)} for k, v in zip(rows["latency_ns"].astype(np.int64),
                                                               rows["count"].astype(np.int64)))


def job_percentiles(bins: pd.DataFrame, source, jobname, groupid, direction: str,
                    columns: Mapping[str, float]) -> dict:
    """{column: percentile µs} of the merged histograms of every clone of one job in one raw file;
    {} when that file has no bins for it (not available)."""
    hist = as_histogram(select(bins, source=source, jobname=jobname, groupid=groupid, direction=direction))
    if not hist:
        return {}
    pct = fiohist.percentiles(hist, columns.values())
    return {col: fiohist.ns_to_us(pct[p]) for col, p in columns.items()}


def histogram_cdf(hist: Mapping) -> pd.DataFrame:
    """CDF_COLUMNS of a sparse histogram {latency_ns: count}: clat_us (µs), count, cdf (fraction 0..1);
    an empty frame without I/Os."""
    values, counts, frac = fiohist.cdf(hist)
    if not len(values):
        return pd.DataFrame(columns=CDF_COLUMNS)
    return pd.DataFrame({"clat_us": values / 1000.0, "count": counts.astype(int), "cdf": frac})
