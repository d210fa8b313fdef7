"""The names and the unit conversion of fio's latency histograms that need no numpy: the histogram kinds,
the ns -> µs conversion of the tables and the processed bins table's columns and file suffix.

memstor.core.fiohist (the one implementation of the histogram: bins, merging, percentiles, CDF; numpy)
re-exports all of them; they live here so that reading fio's output (memstor.parse, ``memstor parse``)
imports no numpy: 70-110 ms of a ``memstor parse`` start-up on the 2-vCPU VM (``python -X importtime``).
Units: latencies in ns unless a name says otherwise (``_us``).
"""

from __future__ import annotations

#: json+ histogram kinds: completion latency (``clat_ns``) and total latency (``lat_ns``).
KINDS = ("clat", "lat")


def ns_to_us(ns: float) -> float:
    """A latency in ns as µs: the one conversion of fio's ns latencies for the tables (ns / 1000, exact
    to the last bit; ``ns * 1e-3`` differs in 1 of ~8 values)."""
    return float(ns) / 1000.0


# ------------------------------------------------------------------------------- the processed table
#: Suffix of the processed bins table beside an experiment's table: ``<experiment>-bins.csv``.
BINS_SUFFIX = "-bins"
#: Columns of the processed bins table (one row per raw file x job x direction x kind x non-empty bin):
#: source (the raw file, relative to the data folder, as in the experiment table), jobname, groupid,
#: direction (read/write/trim), kind (clat | lat), latency_ns (the bin's representative latency), count.
BIN_COLUMNS = ("source", "jobname", "groupid", "direction", "kind", "latency_ns", "count")
