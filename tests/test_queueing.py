"""Queueing helpers on real fixtures (fio qd sweep, MLC loaded-latency table) and on exact curves."""

from __future__ import annotations

import numpy as np
import pytest

from memstor.analysis import queueing as q
from memstor.parse.fio import parse_fio
from memstor.parse.mlc import parse_mlc

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


def test_mm1_fit_recovers_exact_curve():
    bw = np.linspace(1_000, 90_000, 12)
    lat = q.mm1_latency_ns(bw, 80.0, 20.0, 100_000)
    f = q.fit_loaded_latency(bw, lat)
    assert (f.r0_ns, f.a_ns, f.peak_MBps) == pytest.approx((80.0, 20.0, 100_000), rel=1e-3)
    assert f.r2 == pytest.approx(1.0, abs=1e-9)
    assert f.knee_rho == pytest.approx(0.8, rel=1e-3)          # R0 / (R0 + a)
    assert f.knee_bw_MBps == pytest.approx(80_000, rel=1e-3)
    assert f.knee_latency_ns == pytest.approx(160.0, rel=1e-3)
    assert f.knee_reached
    given = q.fit_loaded_latency(bw, lat, peak_MBps=100_000)
    assert not given.peak_fitted and given.a_ns == pytest.approx(20.0, rel=1e-4)


def test_mm1_fit_on_real_mlc_loaded_latency(real):
    path = real / ICELAKE
    rows = [r for r in parse_mlc(path.read_text(), str(path)).rows if r["test"] == "loaded_latency"]
    assert len(rows) == 19
    bw = [r["bandwidth_MBps"] for r in rows]
    lat = [r["latency_ns"] for r in rows]
    delay = [r["inject_delay"] for r in rows]
    assert (delay[0], lat[0], bw[0]) == (0, 264.04, 351871.6)          # SOURCES.md (first row)
    assert (delay[-1], lat[-1], bw[-1]) == (20000, 91.23, 2867.0)     # SOURCES.md (last row)
    f = q.fit_loaded_latency(bw, lat, inject_delay=delay)
    assert 88 < f.r0_ns < 98 and f.r2 > 0.99
    assert f.peak_fitted and f.peak_MBps > max(bw)
    assert 290_000 < f.knee_bw_MBps < max(bw) and f.knee_reached
    assert f.knee_inject_delay in delay
    assert f.knee_rho == pytest.approx(f.r0_ns / (f.r0_ns + f.a_ns))


def test_mm1_fit_refuses_too_few_points():
    with pytest.raises(ValueError, match="need >= 4 points"):
        q.fit_loaded_latency([1, 2, 3], [80, 81, 90])


def test_mm1_fit_standard_errors_and_knee_interval_cover_the_truth():
    # 200 noisy curves from a known model: the 95 % knee interval must cover the true knee about 95 % of
    # the time, and the reported standard error must match the spread of the fitted R0
    r0, a, peak = 80.0, 20.0, 100_000
    true_knee = peak * r0 / (r0 + a)
    bw = np.linspace(2_000, 95_000, 19)
    rng = np.random.default_rng(7)
    covered, r0_fits, r0_ses = 0, [], []
    for _ in range(200):
        lat = q.mm1_latency_ns(bw, r0, a, peak) + rng.normal(0, 2.0, bw.size)
        f = q.fit_loaded_latency(bw, lat)
        assert f.knee_bw_ci_low_MBps <= f.knee_bw_MBps <= f.knee_bw_ci_high_MBps
        assert f.knee_latency_ci_low_ns <= f.knee_latency_ns <= f.knee_latency_ci_high_ns
        covered += f.knee_bw_ci_low_MBps <= true_knee <= f.knee_bw_ci_high_MBps
        r0_fits.append(f.r0_ns)
        r0_ses.append(f.r0_se_ns)
    assert 0.88 <= covered / 200 <= 0.99
    assert np.median(r0_ses) == pytest.approx(np.std(r0_fits), rel=0.3)


def test_mm1_fit_uncertainty_on_real_curve_and_nan_when_not_computable(real):
    path = real / ICELAKE
    rows = [r for r in parse_mlc(path.read_text(), str(path)).rows if r["test"] == "loaded_latency"]
    f = q.fit_loaded_latency([r["bandwidth_MBps"] for r in rows], [r["latency_ns"] for r in rows])
    for se in (f.r0_se_ns, f.a_se_ns, f.peak_se_MBps):
        assert np.isfinite(se) and se > 0
    assert f.r0_se_ns < 0.1 * f.r0_ns
    assert f.knee_bw_ci_low_MBps < f.knee_bw_MBps < f.knee_bw_ci_high_MBps
    given = q.fit_loaded_latency([r["bandwidth_MBps"] for r in rows], [r["latency_ns"] for r in rows],
                                 peak_MBps=400_000)
    assert np.isnan(given.peak_se_MBps) and np.isfinite(given.r0_se_ns)   # the peak was not fitted
    # four points, three parameters, one degree of freedom left: computable; a flat curve leaves the peak
    # undetermined (singular covariance): NaN, never a made-up number
    flat = q.fit_loaded_latency([1_000, 2_000, 3_000, 4_000], [80.0, 80.0, 80.0, 80.0])
    assert np.isnan(flat.knee_bw_ci_low_MBps) and np.isnan(flat.knee_bw_ci_high_MBps)
    assert np.isnan(flat.peak_se_MBps)
