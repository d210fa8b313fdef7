"""Cluster aggregates of a fleet point (issue 20): summed throughput and percentiles from merged json+ bins.

Never averaged percentiles and never fio's "All clients" entry (fio-3.33 gives it no percentiles and no bins
at all; other versions get it wrong). Pure functions, no I/O.

fio's json+ ``clat_ns.bins`` map a bucket's representative latency (ns, as a string key) to its count. Bins of
one direction from many hosts (and clones) are merged by adding counts per bucket value: fio uses the same
bucket boundaries everywhere (FIO_IO_U_PLAT_BITS=6, FIO_IO_U_PLAT_VAL=64 since fio 2.x), so equal keys are
the same bucket. The percentile rule is fio's own (stat.c calc_clat_percentiles): the value of the first
bucket whose cumulative count reaches ``p/100 × total`` — so one host's merged-bins p99 equals the p99 fio
printed for it (checked in tests/test_cluster.py on real fio output).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

#: The percentiles fio reports by default (and the report's clat_p* columns).
DEFAULT_PERCENTILES = (50.0, 90.0, 99.0, 99.9, 99.99)


def merge_bins(histograms: Iterable[Mapping]) -> dict[int, int]:
    """Sum json+ histograms {latency_ns: count} (keys may be strings as in fio's JSON) bucket by bucket."""
    merged: dict[int, int] = {}
    for h in histograms:
        for k, v in h.items():
            if int(v) < 0:
                raise ValueError(f"negative count {v} in bin {k}")
            merged[int(k)] = merged.get(int(k), 0) + int(v)
    return merged


def percentiles_from_bins(bins: Mapping, percentiles: Sequence[float] = DEFAULT_PERCENTILES) -> dict[float, float | None]:
    """{p: latency_ns} from a json+ histogram by fio's rule (first bucket with cumulative ≥ p/100 × total).

    None for every p when the histogram is empty."""
    items = sorted((int(k), int(v)) for k, v in bins.items() if int(v) > 0)
    total = sum(c for _, c in items)
    out: dict[float, float | None] = {}
    for p in percentiles:
        if not 0 < p <= 100:
            raise ValueError(f"percentile must be in (0, 100], got {p}")
        if total == 0:
            out[p] = None
            continue
        need = p / 100.0 * total
        cum = 0
        value = items[-1][0]
        for v, c in items:
            cum += c
            if cum >= need:
                value = v
                break
        out[p] = float(value)
    return out


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
            hists.append((d.get("clat_ns") or {}).get("bins") or {})
    merged = merge_bins(hists)
    pct = percentiles_from_bins(merged, percentiles)
    out = {"hosts": labels, "direction": direction, "iops": iops, "bw_MBps": bw, "total_ios": sum(merged.values())}
    for p, v in pct.items():
        out[f"clat_p{_pname(p)}_us"] = None if v is None else v / 1e3
    return out


def _pname(p: float) -> str:
    """50 → '50', 99.9 → '99_9' (the report's column style)."""
    return f"{p:g}".replace(".", "_")
