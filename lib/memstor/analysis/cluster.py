"""Cluster aggregates of a fleet point (issue 20): summed throughput and percentiles from merged json+ bins.

Never averaged percentiles and never fio's "All clients" entry (fio-3.33 gives it no percentiles and no bins
at all; other versions get it wrong). Pure functions, no I/O.

fio's json+ ``clat_ns.bins`` map a bucket's representative latency (ns, as a string key) to its count. Bins of
one direction from many hosts (and clones) are merged by adding counts per bucket value: fio uses the same
bucket boundaries everywhere (FIO_IO_U_PLAT_BITS=6, FIO_IO_U_PLAT_VAL=64 since fio 2.x), so equal keys are
the same bucket. Merging and the percentile rule (fio's own, stat.c calc_clat_percentiles) are
memstor.core.fiohist's, so one host's merged-bins p99 equals the p99 fio printed for it (checked in
tests/test_cluster.py and tests/test_fio_histogram.py on real fio output).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from memstor.core import fiohist
from memstor.core.fiohist import DEFAULT_PERCENTILES, merge_bins, ns_to_us, pct_column
from memstor.parse.fio import clat_bins

__all__ = ["DEFAULT_PERCENTILES", "cluster_aggregate", "merge_bins", "percentiles_from_bins"]

def percentiles_from_bins(bins: Mapping,
                          percentiles: Sequence[float] = DEFAULT_PERCENTILES) -> dict[float, float | None]:
    """{p: latency_ns} from a json+ histogram by fio's rule (memstor.core.fiohist.percentiles); None for
    every p when the histogram is empty (the cluster table's empty cell)."""
    return {p: None if math.isnan(v) else v for p, v in fiohist.percentiles(bins, percentiles).items()}


def _jobs(doc: Mapping) -> list:
    jobs = doc.get("jobs")
    if jobs is None:
        jobs = doc.get("client_stats") or []
    return [j for j in jobs if isinstance(j, dict) and j.get("jobname") != "All clients"]


def cluster_aggregate(host_docs: Mapping[str, Mapping], direction: str = "read",
                      percentiles: Sequence[float] = DEFAULT_PERCENTILES) -> dict:
    """Cluster totals of one direction over per-host fio json+ documents ({label: doc} with "jobs").

    Returns ``hosts`` (labels with jobs), ``iops`` and ``bw_MBps`` (sums over every host's jobs; bw decimal
    MB/s from bw_bytes), ``total_ios`` (bin counts merged), and ``clat_p<p>_us`` from the merged bins
    (None when no host has bins)."""
    iops = bw = 0.0
    hists = []
    labels = []
    for label, doc in host_docs.items():
        jobs = _jobs(doc)
        if jobs:
            labels.append(label)
        for j in jobs:
            d = j.get(direction) or {}
            iops += float(d.get("iops") or 0.0)
            bw += float(d.get("bw_bytes") or 0.0) / 1e6
            hists.append(clat_bins(j, direction))
    merged = merge_bins(hists)
    pct = percentiles_from_bins(merged, percentiles)
    out = {"hosts": labels, "direction": direction, "iops": iops, "bw_MBps": bw, "total_ios": sum(merged.values())}
    for p, v in pct.items():
        out[pct_column(p)] = None if v is None else ns_to_us(v)
    return out
