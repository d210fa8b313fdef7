"""Cluster percentiles from merged json+ bins (issue 20), against fio's own numbers and numpy."""

import json
from pathlib import Path

import numpy as np
import pytest

from memstor.analysis.cluster import cluster_aggregate, merge_bins, percentiles_from_bins

REAL = Path(__file__).parent / "data/real/ChrisLvvvv__ECSE_4320_Advanced-Computer-Systems/Project3/results/tail_latency.json"


def _doc():
    text = REAL.read_text()
    return json.loads(text[text.find("{"):])


def _numpy_pct(bins: dict, p: float) -> float:
    """Independent: expand the histogram into samples and take numpy's inverted-CDF percentile."""
    vals = np.repeat(np.array([int(k) for k in bins], dtype=np.int64), [int(v) for v in bins.values()])
    return float(np.percentile(vals, p, method="inverted_cdf"))


def test_one_job_bins_give_fios_own_percentiles():
    # real fio-3 json+ output: fio's printed clat percentiles are reproduced exactly from its bins
    for job in _doc()["jobs"]:
        clat = job["read"]["clat_ns"]
        ps = [float(k) for k in clat["percentile"]]
        ours = percentiles_from_bins(clat["bins"], ps)
        for k, v in clat["percentile"].items():
            assert ours[float(k)] == v, (job["jobname"], k)


def test_merged_bins_against_numpy():
    jobs = _doc()["jobs"]
    a, b = jobs[0]["read"]["clat_ns"]["bins"], jobs[1]["read"]["clat_ns"]["bins"]
    merged = merge_bins([a, b])
    assert sum(merged.values()) == jobs[0]["read"]["clat_ns"]["N"] + jobs[1]["read"]["clat_ns"]["N"]
    ps = [1, 50, 90, 99, 99.9, 99.99, 100]
    ours = percentiles_from_bins(merged, ps)
    for p in ps:
        assert ours[p] == _numpy_pct(merged, p), p
    # the cluster p99 is not the average of the two hosts' p99s
    p99s = [j["read"]["clat_ns"]["percentile"]["99.000000"] for j in jobs]
    assert ours[99] != sum(p99s) / 2


def test_cluster_aggregate_sums_and_ignores_all_clients():
    jobs = _doc()["jobs"]
    docs = {"h1": {"jobs": [jobs[0]]},
            "h2": {"jobs": [jobs[1], {"jobname": "All clients", "read": {"iops": 1e12, "bw_bytes": 1e15}}]}}
    agg = cluster_aggregate(docs, "read", (99.0,))
    assert agg["hosts"] == ["h1", "h2"]
    assert agg["iops"] == pytest.approx(jobs[0]["read"]["iops"] + jobs[1]["read"]["iops"])
    assert agg["bw_MBps"] == pytest.approx((jobs[0]["read"]["bw_bytes"] + jobs[1]["read"]["bw_bytes"]) / 1e6)
    merged = merge_bins([jobs[0]["read"]["clat_ns"]["bins"], jobs[1]["read"]["clat_ns"]["bins"]])
    assert agg["clat_p99_us"] == _numpy_pct(merged, 99) / 1e3


def test_small_hand_example_and_edges():
    bins = {"100": 98, "200": 1, "5000": 1}
    assert percentiles_from_bins(bins, (50, 98, 99, 99.5, 100)) == {50: 100.0, 98: 100.0, 99: 200.0, 99.5: 5000.0,
                                                                     100: 5000.0}
    assert percentiles_from_bins({}, (99,)) == {99: None}
    with pytest.raises(ValueError):
        percentiles_from_bins(bins, (0,))
    assert merge_bins([{"1": 2}, {1: 3, "4": 1}]) == {1: 5, 4: 1}
