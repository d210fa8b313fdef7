"""Queueing helpers on real fixtures (fio qd sweep, MLC loaded-latency table) and on exact curves."""

from __future__ import annotations

import numpy as np
import pytest

from memstor.analysis import queueing as q
from memstor.parse.fio import parse_fio

QD_SWEEP = "AIALRA-0__ECSE-4320-Advanced-Computer-Systems/Project3 SSD/results/qd_sweep"
ICELAKE = "hpcleuven__VscDocumentation/source/leuven/tier2_hardware/icelake_mlc.txt"


def _qd_sweep(real):
    """(N, IOPS, mean latency us) of the AIALRA-0 qd sweep, median of the 3 runs per depth."""
    rows = []
    for f in sorted((real / QD_SWEEP).glob("*.json")):
        rows += parse_fio(f.read_text(), str(f)).rows
    by_n: dict = {}
    for r in rows:
        by_n.setdefault(r["iodepth"] * r["numjobs"], []).append((r["iops"], r["lat_mean_us"]))
    n = sorted(by_n)
    x = [float(np.median([a for a, _ in by_n[k]])) for k in n]
    r_us = [float(np.median([b for _, b in by_n[k]])) for k in n]
    return np.array(n, float), np.array(x), np.array(r_us)


def test_littles_law_helpers_keep_their_numbers():
    assert q.littles_law_outstanding(100_000, 320.0) == pytest.approx(32.0)
    assert q.littles_law_residual_pct(32, 100_000, 320.0) == pytest.approx(0.0)
    assert q.littles_law_residual_pct(32, 100_000, 160.0) == pytest.approx(-50.0)
    with pytest.raises(ValueError):
        q.littles_law_residual_pct(0, 1.0, 1.0)


def test_bounds_and_knee_formulas():
    assert q.knee_outstanding(100.0, 150_000) == pytest.approx(15.0)
    x = q.closed_bound_iops([1, 10, 100], 100.0, 150_000)
    assert x.tolist() == pytest.approx([10_000, 100_000, 150_000])
    r = q.closed_bound_latency_us([1, 15, 150], 100.0, 150_000)
    assert r.tolist() == pytest.approx([100.0, 100.0, 1000.0])


def test_fit_recovers_exact_two_asymptote_sweep():
    n = np.array([1, 2, 4, 8, 16, 32, 64, 128], float)
    x = q.closed_bound_iops(n, 80.0, 200_000)
    f = q.fit_closed_bounds(n, x, n / x * 1e6)
    assert f.r_min_us == pytest.approx(80.0, rel=0.01)
    assert f.x_max_iops == pytest.approx(200_000, rel=0.01)
    assert f.n_star == pytest.approx(16.0, rel=0.02)
    assert f.r2 == pytest.approx(1.0, abs=1e-6)
    assert f.saturated


def test_fit_on_real_qd_sweep_gives_the_knee(real):
    n, x, r = _qd_sweep(real)
    assert n.tolist() == [1, 2, 4, 8, 16, 32, 64, 128]
    # hand-read in SOURCES.md: qd1 ~12.5-12.6k IOPS at ~79 us; qd128 ~148.5k IOPS
    assert x[0] == pytest.approx(12_587.78, rel=1e-4) and x[-1] == pytest.approx(148_561.76, rel=1e-4)
    f = q.fit_closed_bounds(n, x, r)
    assert f.r_min_measured_us == pytest.approx(79.0868, rel=1e-4)
    assert f.x_max_measured_iops == pytest.approx(148_561.76, rel=1e-4)
    assert f.n_star_measured == pytest.approx(148_561.76 * 79.0868e-6, rel=1e-4)
    assert 8 < f.n_star < 16 and f.r2 > 0.9 and f.saturated
    assert 75 < f.r_min_us < 100 and 120_000 < f.x_max_iops < 150_000
    assert f.n_star == pytest.approx(f.x_max_iops * f.r_min_us * 1e-6)


def test_fit_refuses_too_few_points():
    with pytest.raises(ValueError, match="need >= 3 points"):
        q.fit_closed_bounds([1, 32], [1000, 20000])
    with pytest.raises(ValueError, match="need >= 3 points"):
        q.fit_closed_bounds([4, 4, 4], [1000, 1001, 999])

