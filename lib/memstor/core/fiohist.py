"""fio's latency histogram, the one implementation: bin index <-> latency, merging, percentiles, CDF.

fio keeps every completion (and, with ``lat_percentiles=1``, total) latency in a log-linear histogram
(stat.h: FIO_IO_U_PLAT_BITS = 6, 64 buckets per group). fio 3.x counts nanoseconds in 29 groups
(FIO_IO_U_PLAT_NR = 1856); fio 2.x counted microseconds in 19 groups (1216). The same histogram shows up as

- json+ ``clat_ns.bins`` / ``lat_ns.bins``: {representative latency ns (a string key): count}, non-zero
  bins only (a *sparse* histogram, here a mapping {int ns: int count});
- histogram logs (``--write_hist_log``): one *dense* row of counts per window, bin j standing for
  :func:`bin_values` (n)[j] (coarse bins with ``--log_hist_coarseness``).

Bins of several jobs, clones, hosts or windows are merged by adding counts bin by bin (fio's bucket
boundaries are the same everywhere, so equal keys are the same bucket); percentiles are never averaged.

The percentile rule is fio's own (stat.c ``calc_clat_percentiles``): the p-th percentile is the value of
the first bin whose cumulative count reaches ``p/100 x total``. fio compares in long double; here the
comparison is exact (rational arithmetic on the double ``p``), which gives the numbers fio printed on every
real json+ fixture (tests/test_fio_histogram.py). :func:`cumulative` is the one place that walks
cumulative bin counts; percentiles and the CDF both use it.

Units: latencies in ns unless a name says otherwise (``_us``); counts are I/Os. Pure functions (numpy).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction

import numpy as np

# KINDS, ns_to_us and the processed bins table's names live in memstor.core.fiobins (no numpy, so that reading
# fio's output imports none); they are fiohist's names too.
from memstor.core.fiobins import BIN_COLUMNS, BINS_SUFFIX, KINDS, ns_to_us  # noqa: F401

#: fio stat.h: bits of precision per group, buckets per group (2**bits).
FIO_IO_U_PLAT_BITS = 6
FIO_IO_U_PLAT_VAL = 1 << FIO_IO_U_PLAT_BITS
#: fio 3.x (nanoseconds): 29 groups of 64 buckets; older fio (microseconds): 19 groups.
FIO_IO_U_PLAT_NR = 29 * FIO_IO_U_PLAT_VAL
FIO_IO_U_PLAT_NR_OLD = 19 * FIO_IO_U_PLAT_VAL
#: The percentiles fio reports by default that the tables show (the clat_p* columns).
DEFAULT_PERCENTILES = (50.0, 90.0, 99.0, 99.9, 99.99)


# ------------------------------------------------------------------------------------- bin layout
def plat_idx_to_val(idx: int, plat_nr: int = FIO_IO_U_PLAT_NR) -> int:
    """The latency a histogram bin stands for, exactly as fio's stat.c ``plat_idx_to_val``.

    Bins 0..127 hold their own value; above, group g = idx // 64 - 1 error bits, each bin the middle of
    a 2**g wide range: ``2**(g+6) + (idx % 64 + 0.5) * 2**g`` (an integer for g >= 1, as fio's
    conversion to unsigned long long leaves it). Unit: ns for fio 3.x, us for fio 2.x histograms.
    """
    if isinstance(idx, bool) or not isinstance(idx, (int, np.integer)) or not 0 <= idx < plat_nr:
        raise ValueError(f"histogram bin index {idx!r} is outside 0..{plat_nr - 1}")
    idx = int(idx)
    if idx < (FIO_IO_U_PLAT_VAL << 1):
        return idx
    error_bits = (idx >> FIO_IO_U_PLAT_BITS) - 1
    base = 1 << (error_bits + FIO_IO_U_PLAT_BITS)
    k = idx % FIO_IO_U_PLAT_VAL
    return base + (2 * k + 1) * (1 << error_bits) // 2


def plat_val_to_idx(value: int, plat_nr: int = FIO_IO_U_PLAT_NR) -> int:
    """The bin index fio files a latency ``value`` under (stat.c ``plat_val_to_idx``, last bin capped)."""
    value = int(value)
    if value < 0:
        raise ValueError(f"latency {value} is negative")
    msb = value.bit_length() - 1 if value else 0
    if msb <= FIO_IO_U_PLAT_BITS:
        return value
    error_bits = msb - FIO_IO_U_PLAT_BITS
    base = (error_bits + 1) << FIO_IO_U_PLAT_BITS
    offset = (FIO_IO_U_PLAT_VAL - 1) & (value >> error_bits)
    return min(base + offset, plat_nr - 1)


def bin_edge(idx: int, edge: float) -> float:
    """Lower (edge 0) or upper (edge 1) latency bound of fine bin ``idx`` (the unit of the layout)."""
    if idx < (FIO_IO_U_PLAT_VAL << 1):
        return idx + edge
    error_bits = (idx >> FIO_IO_U_PLAT_BITS) - 1
    base = 1 << (error_bits + FIO_IO_U_PLAT_BITS)
    return base + (idx % FIO_IO_U_PLAT_VAL + edge) * (1 << error_bits)


def bin_values(n_bins: int) -> tuple[np.ndarray, int]:
    """(latency of each bin in ns, coarseness) for a dense histogram of ``n_bins`` bins (a hist-log line).

    fio 3.x: n_bins = 1856 >> coarseness (values ns); older fio: 1216 >> coarseness (values us, scaled
    to ns here). A coarse bin j merges fine bins j*2**c .. (j+1)*2**c - 1 and stands for the middle of
    their range, as fio's tools/hist/fiologparser_hist.py does; at coarseness 0 it is
    :func:`plat_idx_to_val` exactly. ValueError for any other count.
    """
    for plat_nr, scale in ((FIO_IO_U_PLAT_NR, 1), (FIO_IO_U_PLAT_NR_OLD, 1000)):
        for c in range(7):
            if plat_nr >> c == n_bins and (n_bins << c) == plat_nr:
                if c == 0:
                    vals = np.array([plat_idx_to_val(i, plat_nr) for i in range(n_bins)], dtype=np.float64)
                else:
                    stride = 1 << c
                    vals = np.array([(bin_edge(j * stride, 0.0) + bin_edge(j * stride + stride - 1, 1.0)) / 2
                                     for j in range(n_bins)], dtype=np.float64)
                return vals * scale, c
    raise ValueError(f"{n_bins} histogram bins per line is not a fio layout (1856 or 1216 >> 0..6)")


# ------------------------------------------------------------------------------------------ merging
def merge_bins(histograms: Iterable[Mapping]) -> dict[int, int]:
    """Sum sparse histograms {latency_ns: count} (keys may be strings as in fio's JSON) bin by bin.

    ValueError for a negative count."""
    merged: dict[int, int] = {}
    for h in histograms:
        for k, v in h.items():
            if int(v) < 0:
                raise ValueError(f"negative count {v} in bin {k}")
            merged[int(k)] = merged.get(int(k), 0) + int(v)
    return merged


def sparse(values: Sequence[float] | np.ndarray, counts: Sequence[int] | np.ndarray) -> dict[float, int]:
    """A dense histogram (bin latencies ns, counts) as the sparse {ns: count} of its non-empty bins."""
    out: dict[float, int] = {}
    for v, c in zip(np.asarray(values, dtype=np.float64), np.asarray(counts, dtype=np.int64)):
        if c:
            out[float(v)] = out.get(float(v), 0) + int(c)
    return out


# ------------------------------------------------------------------------- cumulative counts, percentiles
def cumulative(bins: Mapping) -> tuple[np.ndarray, np.ndarray]:
    """(latencies ns ascending, cumulative I/O counts) of a sparse histogram's non-empty bins.

    The one walk over cumulative fio bin counts: :func:`percentiles` and :func:`cdf` use it."""
    items = sorted((float(k), int(v)) for k, v in bins.items() if int(v) > 0)
    values = np.array([k for k, _ in items], dtype=np.float64)
    cum = np.cumsum(np.array([v for _, v in items], dtype=np.int64))
    return values, cum


def percentiles(bins: Mapping, ps: Iterable[float] = DEFAULT_PERCENTILES) -> dict[float, float]:
    """{p: latency ns} of a sparse histogram {latency_ns: count} by fio's rule (module docstring).

    p in (0, 100] (ValueError otherwise); NaN for every p when the histogram holds no I/O."""
    values, cum = cumulative(bins)
    total = int(cum[-1]) if len(cum) else 0
    out: dict[float, float] = {}
    for p in ps:
        if not 0 < float(p) <= 100:
            raise ValueError(f"percentile must be in (0, 100], got {p}")
        if total <= 0:
            out[p] = math.nan
            continue
        need = math.ceil(Fraction(float(p)) / 100 * total)  # first cumulative count >= p/100 x total
        i = int(np.searchsorted(cum, need, side="left"))
        out[p] = float(values[min(i, len(values) - 1)])
    return out


def hist_percentiles(counts: Sequence[int] | np.ndarray, ps: Iterable[float],
                     values: np.ndarray | None = None) -> dict[float, float]:
    """{p: latency ns} of a dense histogram: counts per bin, ``values`` the latency of each bin (default
    :func:`bin_values` of the count, fio 3.x ns). fio's rule, as :func:`percentiles`; NaN without I/Os."""
    counts = np.asarray(counts, dtype=np.int64)
    if values is None:
        values, _ = bin_values(len(counts))
    return percentiles(sparse(values, counts), ps)


def cdf(bins: Mapping) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(latencies ns, counts, cumulative fraction 0..1) of a sparse histogram's non-empty bins."""
    values, cum = cumulative(bins)
    counts = np.diff(np.concatenate([[0], cum]))
    frac = cum / cum[-1] if len(cum) else cum.astype(np.float64)
    return values, counts, frac


def pct_column(p: float, kind: str = "clat") -> str:
    """The table column of percentile p: 99.9 -> 'clat_p99_9_us' (kind clat or lat)."""
    return f"{kind}_p{p:g}".replace(".", "_") + "_us"
