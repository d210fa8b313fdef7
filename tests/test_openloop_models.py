"""Open-loop models (memstor.analysis.openloop): hand-computed formulas, Erlang C, agreement with a
discrete-event simulation, the SLO interpolation, unloaded latency. Pure Python, a few seconds."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from memstor.analysis import openloop as o
from memstor.analysis import queue_sim as qs
from memstor.parse.fio import clat_bins, load_fio_json

S = 100.0  # mean service time used throughout (us)
ZERO_QUEUE = "ChrisLvvvv__ECSE_4320_Advanced-Computer-Systems/Project3/results/zero_queue.json"


def exponential(rng, n):
    return rng.exponential(S, n)


def constant(rng, n):
    return np.full(n, S)


LOGN_SIGMA2 = math.log(3.0)  # lognormal: cs² = exp(σ²) − 1 = 2


def lognormal(rng, n):
    return rng.lognormal(math.log(S) - LOGN_SIGMA2 / 2, math.sqrt(LOGN_SIGMA2), n)


def sim_mean_us(rho_per_server, sampler, n, servers=1, seed=1):
    """Mean response time (us) of a simulated FIFO queue, the first 2 % of customers dropped (warm-up)."""
    r = qs.simulate_queue(rho_per_server * servers / S, sampler, n, servers=servers, seed=seed)
    return float(r[n // 50:].mean())


# ---------------------------------------------------------------------------------------- formulas
def test_formulas_by_hand_with_units():
    # λ = 5000 IOPS, S = 100 µs → ρ = 5000 × 100e-6 = 0.5
    assert o.utilisation(5000, 100.0) == pytest.approx(0.5)
    assert o.utilisation(20_000, 100.0, c=4) == pytest.approx(0.5)
    assert o.mm1_response_us(100.0, lambda_iops=5000) == pytest.approx(200.0)  # 100 / 0.5
    assert o.md1_response_us(100.0, lambda_iops=5000) == pytest.approx(150.0)  # 100 + 0.5·100·1/(2·0.5)
    assert o.mg1_response_us(100.0, 2.0, lambda_iops=5000) == pytest.approx(250.0)  # 100 + 0.5·100·3/1
    assert o.mg1_response_us(100.0, 1.0, rho=0.5) == pytest.approx(200.0)  # cs² = 1 is M/M/1
    assert o.mm1_response_us(50.0, rho=0.75) == pytest.approx(200.0)
    assert o.md1_response_us(50.0, rho=0.75) == pytest.approx(50 + 0.75 * 50 / 0.5)  # 125
    # M/M/2, λ = 10 000 IOPS, S = 100 µs: a = 1, ρ = 0.5, C = 1/3, Wq = C/(cμ − λ) = (1/3)/(0.01/µs) = 33.3 µs
    assert o.mgc_response_us(100.0, 1.0, 2, lambda_iops=10_000) == pytest.approx(100 + 100 / 3)
    assert o.mgc_response_us(100.0, 1.0, 2, rho=0.5) == pytest.approx(100 + 100 / 3)
    # M/D/2 and cs² = 3: Wq scales with (1 + cs²)/2
    assert o.mgc_response_us(100.0, 0.0, 2, rho=0.5) == pytest.approx(100 + 100 / 6)
    assert o.mgc_response_us(100.0, 3.0, 2, rho=0.5) == pytest.approx(100 + 2 * 100 / 3)


def test_mgc_with_one_server_is_pollaczek_khinchine():
    rho = np.linspace(0.0, 0.95, 20)
    for cs2 in (0.0, 0.5, 1.0, 2.0):
        np.testing.assert_allclose(o.mgc_response_us(S, cs2, 1, rho=rho), o.mg1_response_us(S, cs2, rho=rho), rtol=1e-12)


def test_vectorised_and_nan_at_or_beyond_saturation():
    lam = np.array([0.0, 2500.0, 5000.0, 9999.0, 10_000.0, 20_000.0, np.nan, -1.0])
    r = o.mm1_response_us(100.0, lambda_iops=lam)
    assert isinstance(r, np.ndarray) and r.shape == lam.shape
    np.testing.assert_allclose(r[:3], [100.0, 100 / 0.75, 200.0])
    assert np.isfinite(r[3]) and r[3] == pytest.approx(100 / 1e-4)
    assert np.all(np.isnan(r[4:]))  # ρ = 1, ρ = 2, missing rate, negative rate: NaN, never a number
    for f in (lambda **k: o.md1_response_us(S, **k), lambda **k: o.mg1_response_us(S, 2.0, **k),
              lambda **k: o.mgc_response_us(S, 2.0, 4, **k)):
        out = f(rho=np.array([0.5, 1.0, 1.5, np.inf]))
        assert np.isfinite(out[0]) and np.all(np.isnan(out[1:]))
        assert math.isnan(f(rho=1.0)) and isinstance(f(rho=0.2), float)
    # M/G/c is finite up to c/S IOPS
    assert math.isfinite(o.mgc_response_us(100.0, 1.0, 4, lambda_iops=39_000))
    assert math.isnan(o.mgc_response_us(100.0, 1.0, 4, lambda_iops=40_000))
    assert o.mgc_response_us(S, 1.0, 4, rho=np.zeros((2, 3))).shape == (2, 3)


def test_bad_parameters_name_the_argument():
    with pytest.raises(ValueError, match="S_us"):
        o.mm1_response_us(0.0, rho=0.5)
    with pytest.raises(ValueError, match="S_us"):
        o.mgc_response_us(-1.0, 1.0, 2, rho=0.5)
    with pytest.raises(ValueError, match="cs2"):
        o.mg1_response_us(100.0, -0.1, rho=0.5)
    with pytest.raises(ValueError, match="cs2"):
        o.mgc_response_us(100.0, -1.0, 2, rho=0.5)
    for bad_c in (0, -3, 1.5, True):
        with pytest.raises(ValueError, match=r"\bc\b"):
            o.mgc_response_us(100.0, 1.0, bad_c, rho=0.5)
    with pytest.raises(ValueError, match="lambda_iops"):
        o.mm1_response_us(100.0)  # neither λ nor ρ
    with pytest.raises(ValueError, match="lambda_iops"):
        o.mm1_response_us(100.0, lambda_iops=1.0, rho=0.1)  # both


# ---------------------------------------------------------------------------------------- Erlang C
def _erlang_c_logspace(c: int, a: float) -> float:
    """Independent Erlang C from its definition, summed in log space (scipy)."""
    from scipy.special import gammaln, logsumexp

    k = np.arange(c)
    log_terms = k * math.log(a) - gammaln(k + 1)
    log_last = c * math.log(a) - gammaln(c + 1) + math.log(c / (c - a))
    return math.exp(log_last - logsumexp(np.append(log_terms, log_last)))


def test_erlang_c_known_values_and_stability():
    assert o.erlang_c(2, 1.0) == pytest.approx(1 / 3)
    np.testing.assert_allclose(o.erlang_c(1, np.array([0.0, 0.3, 0.9])), [0.0, 0.3, 0.9])
    assert o.erlang_c(3, 0.0) == 0.0
    assert math.isnan(o.erlang_c(2, 2.0)) and math.isnan(o.erlang_c(2, 3.0))
    for c, a in ((5, 3.5), (50, 45.0), (300, 290.0), (400, 200.0), (1000, 990.0)):
        got = o.erlang_c(c, a)
        assert 0.0 <= got <= 1.0
        assert got == pytest.approx(_erlang_c_logspace(c, a), rel=1e-9), (c, a)
    with pytest.raises(ValueError, match=r"\bc\b"):
        o.erlang_c(0, 0.5)


# ---------------------------------------------------------------------------------------- service time
def test_service_time_stats_by_hand():
    mean_us, cs2 = o.service_time_stats({1000: 1, 3000: 1})  # 1 µs and 3 µs: mean 2, var 1 µs²
    assert mean_us == pytest.approx(2.0) and cs2 == pytest.approx(0.25)
    assert o.service_time_stats({"5000": 7}) == (pytest.approx(5.0), pytest.approx(0.0))  # raw JSON keys
    assert o.service_time_stats({"bins": {1000: 3, 2000: 1}, "mean": 0})[0] == pytest.approx(1.25)
    for bad in ({}, {1000: 0}, {1000: -1}, {-5: 1}, {"x": 1}):
        with pytest.raises(ValueError, match="bins"):
            o.service_time_stats(bad)


def test_service_time_stats_matches_fio_on_a_real_json_plus(real):
    doc = load_fio_json((real / ZERO_QUEUE).read_text())
    checked = 0
    for job in doc["jobs"]:
        for direction in ("read", "write"):
            bins = clat_bins(job, direction)
            if not bins:
                continue
            clat = job[direction]["clat_ns"]
            mean_us, cs2 = o.service_time_stats(bins)
            assert mean_us == pytest.approx(clat["mean"] / 1000, rel=1e-3)
            assert cs2 == pytest.approx((clat["stddev"] / clat["mean"]) ** 2, rel=1e-2)
            checked += 1
    assert checked == 4


# ---------------------------------------------------------------------------------------- simulation
def test_simulation_is_deterministic_and_both_paths_agree(monkeypatch):
    a = qs.simulate_queue(0.005, lognormal, 2000, seed=7)
    assert np.array_equal(a, qs.simulate_queue(0.005, lognormal, 2000, seed=7))
    assert not np.array_equal(a, qs.simulate_queue(0.005, lognormal, 2000, seed=8))
    # the vectorised Lindley recursion and the c-server event loop give the same queue for c = 1
    rng = np.random.default_rng(3)
    inter, serv = rng.exponential(120.0, 5000), lognormal(rng, 5000)
    lind, _, _ = qs._lindley_chunk(inter, serv, 0.0, 0.0)
    loop = qs._multiserver_chunk(np.cumsum(inter), serv, [0.0])
    np.testing.assert_allclose(lind, loop, rtol=1e-9, atol=1e-6)
    # blocks carry the queue over: a run of several blocks equals the Lindley recursion in one loop
    monkeypatch.setattr(qs, "_CHUNK", 1000)
    n = 2500
    for servers in (1, 3):
        r = qs.simulate_queue(0.009 * servers, exponential, n, servers=servers, seed=5)
        rng = np.random.default_rng(5)
        inter, serv = [], []
        for m in (1000, 1000, 500):  # the same draws, block by block
            inter.append(rng.exponential(1 / (0.009 * servers), m))
            serv.append(exponential(rng, m))
        inter, serv = np.concatenate(inter), np.concatenate(serv)
        if servers == 1:
            w, ws = 0.0, np.empty(n)
            for j in range(n):
                w = 0.0 if j == 0 else max(0.0, w + serv[j - 1] - inter[j])
                ws[j] = w
            expect = ws + serv
        else:
            expect = qs._multiserver_chunk(np.cumsum(inter), serv, [0.0] * servers)
        np.testing.assert_allclose(r, expect, rtol=1e-9, atol=1e-6)


@pytest.mark.parametrize("name,sampler,cs2", [("M/M/1", exponential, 1.0), ("M/D/1", constant, 0.0),
                                               ("M/G/1 lognormal cs2=2", lognormal, 2.0)])
def test_single_server_formulas_match_simulation_within_3pct(name, sampler, cs2):
    # n per ρ: the sample mean's spread grows like 1/(1 − ρ)²; measured over 10 seeds, the standard
    # deviation of the error at ρ = 0.9 is ≈ 1 % (M/M/1), 0.7 % (M/D/1), 1.4 % (lognormal) at 6e6
    # customers, so 1.2e7 leaves the 3 % bound at > 3 standard deviations.
    for rho, n in ((0.3, 400_000), (0.6, 1_000_000), (0.9, 12_000_000)):
        model = o.mg1_response_us(S, cs2, rho=rho)
        sim = sim_mean_us(rho, sampler, n)
        assert abs(sim - model) / model < 0.03, f"{name} at rho={rho}: sim {sim:.1f} vs model {model:.1f} us"
    # and the named special cases are the same formula
    assert o.mm1_response_us(S, rho=0.9) == pytest.approx(o.mg1_response_us(S, 1.0, rho=0.9))
    assert o.md1_response_us(S, rho=0.9) == pytest.approx(o.mg1_response_us(S, 0.0, rho=0.9))


def test_mmc_is_exact_against_simulation():
    # Allen–Cunneen with cs² = 1 is the exact M/M/c formula; measured over 6 seeds: worst 1.3 % (c = 2..8)
    for c, rho in ((4, 0.5), (4, 0.7)):
        model = o.mgc_response_us(S, 1.0, c, rho=rho)
        sim = sim_mean_us(rho, exponential, 300_000, servers=c)
        assert abs(sim - model) / model < 0.02, (c, rho, sim, model)


@pytest.mark.parametrize("sampler,cs2,tol", [(constant, 0.0, 0.03), (lognormal, 2.0, 0.07)])
def test_allen_cunneen_mgc_against_simulation(sampler, cs2, tol):
    # Allen–Cunneen is an approximation. Measured, R = S + Wq against 6 seeds × 3e5 customers at
    # c = 2, 4, 8 and ρ = 0.5, 0.7: cs² = 0 (M/D/c) model above the simulation by 0.2..1.1 % on average,
    # worst 2.0 %; cs² = 2 (lognormal) model below by 0.5..3.2 % on average, worst 5.5 % (the simulation's
    # own spread is ±2 % there). The queueing part Wq alone is off by up to 25 % at ρ = 0.5, c = 8, where
    # it is small against S. Tolerances: 3 % (cs² = 0), 7 % (cs² = 2).
    for c in (2, 8):
        for rho in (0.5, 0.7):
            model = o.mgc_response_us(S, cs2, c, rho=rho)
            sim = sim_mean_us(rho, sampler, 300_000, servers=c)
            assert abs(sim - model) / model < tol, (c, rho, cs2, sim, model)


# ---------------------------------------------------------------------------------------- fit and table
def test_fit_servers_recovers_c():
    lam = np.linspace(0.1, 0.95, 10) * 8 / (S * 1e-6)  # 10..95 % of 8 servers
    rng = np.random.default_rng(0)
    measured = o.mgc_response_us(S, 0.5, 8, lambda_iops=lam) * rng.normal(1.0, 0.02, lam.size)
    fit = o.fit_servers(lam, measured, S, 0.5)
    assert fit.c == 8 and fit.n_points == 10 and not fit.at_c_max
    assert fit.c_min == 8  # λ_max S = 7.6 Erlangs
    assert fit.rms_err_pct < 3.0 and fit.err_pct.shape == (10,)
    # a missing latency is not used; its error is NaN
    measured[3] = np.nan
    fit = o.fit_servers(lam, measured, S, 0.5)
    assert fit.c == 8 and fit.n_points == 9 and math.isnan(fit.err_pct[3])
    # one server: M/M/1 data gives c = 1, exactly
    lam1 = np.array([1000.0, 5000.0, 9000.0])
    fit1 = o.fit_servers(lam1, o.mm1_response_us(S, lambda_iops=lam1), S, 1.0)
    assert fit1.c == 1 and fit1.rms_err_pct == pytest.approx(0.0, abs=1e-9)
    # the best c beyond c_max is flagged
    fit4 = o.fit_servers(lam[:2], o.mgc_response_us(S, 0.5, 8, lambda_iops=lam[:2]), S, 0.5, c_max=4)
    assert fit4.at_c_max and fit4.c == 4
    with pytest.raises(ValueError, match="c_max"):
        o.fit_servers(lam, measured, S, 0.5, c_max=7)  # 7 servers cannot carry 7.6 Erlangs
    with pytest.raises(ValueError, match="usable"):
        o.fit_servers([np.nan], [100.0], S, 0.5)


def test_model_table_columns_and_values():
    pts = pd.DataFrame({"host": ["h", "h", "h"], "offered_iops": [5000.0, 9000.0, 12000.0],
                        "achieved_iops": [5000.0, 9000.0, 11000.0], "lat_mean_us": [180.0, 900.0, 400.0]})
    t = o.model_table(pts, 100.0, 1.0, c=2)
    assert list(t.columns) == list(pts.columns) + o.MODEL_COLUMNS
    assert t["rho_1"].tolist() == pytest.approx([0.5, 0.9, 1.1])
    assert t["rho_c"].tolist() == pytest.approx([0.25, 0.45, 0.55])
    assert t.loc[0, "mm1_us"] == pytest.approx(200.0)
    assert t.loc[0, "md1_us"] == pytest.approx(150.0)
    assert t.loc[0, "mg1_us"] == pytest.approx(200.0)  # cs² = 1
    assert t.loc[0, "mm1_err_pct"] == pytest.approx(100 * (200 - 180) / 180)
    assert t.loc[0, "md1_err_pct"] == pytest.approx(100 * (150 - 180) / 180)
    assert t.loc[1, "mm1_us"] == pytest.approx(1000.0)
    # ρ = 1.1 for one server: no prediction, no error; M/G/2 still has one
    assert math.isnan(t.loc[2, "mm1_us"]) and math.isnan(t.loc[2, "mm1_err_pct"])
    a = 1.1  # Erlangs at 11 000 IOPS
    mm2 = 100 + o.erlang_c(2, a) * 100 / (2 - a)
    assert t.loc[2, "mgc_us"] == pytest.approx(mm2)
    assert t.loc[2, "mgc_err_pct"] == pytest.approx(100 * (mm2 - 400) / 400)
    assert (t["servers_c"] == 2).all() and (t["service_mean_us"] == 100.0).all()
    # offered_iops is added when absent; missing columns are named
    t2 = o.model_table([{"achieved_iops": 5000.0, "lat_mean_us": 200.0}], 100.0, 0.0)
    assert "offered_iops" in t2.columns and math.isnan(t2.loc[0, "offered_iops"])
    with pytest.raises(ValueError, match="lat_mean_us"):
        o.model_table(pd.DataFrame({"achieved_iops": [1.0]}), 100.0, 1.0)


# ---------------------------------------------------------------------------------------- SLO
def test_slo_interpolation_exact_value():
    # meets at 20 000 (p99 80), misses at 30 000 (p99 120): target 100 is halfway → 25 000
    assert o.slo_max_iops([10_000, 20_000, 30_000], [50, 80, 120], 100.0) == (pytest.approx(25_000.0), False)
    # unsorted input is sorted by rate first
    assert o.slo_max_iops([30_000, 10_000, 20_000], [120, 50, 80], 90.0) == (pytest.approx(22_500.0), False)
    # a target met exactly counts as met (p99 <= target)
    assert o.slo_max_iops([10_000, 20_000, 30_000], [50, 80, 120], 80.0) == (20_000.0, False)


def test_slo_censored_and_none_meets():
    assert o.slo_max_iops([10_000, 20_000, 30_000], [50, 80, 120], 500.0) == (30_000.0, True)
    assert o.slo_max_iops([10_000, 20_000, 30_000], [50, 80, 120], 40.0) == (None, False)
    with pytest.raises(ValueError, match="target_us"):
        o.slo_max_iops([1.0], [1.0], 0.0)
    with pytest.raises(ValueError, match="usable"):
        o.slo_max_iops([np.nan], [1.0], 10.0)


def test_slo_non_monotonic_takes_the_first_miss():
    x = [10_000, 20_000, 30_000, 40_000, 50_000]
    p = [50, 80, 120, 90, 200]  # meets again at 40 000 after a miss at 30 000
    got, censored = o.slo_max_iops(x, p, 100.0)
    assert got == pytest.approx(25_000.0) and not censored  # not 40 000 or beyond
    # a dip below the lowest point does not matter while everything meets
    assert o.slo_max_iops(x, [60, 40, 70, 65, 90], 100.0) == (50_000.0, True)


def test_slo_overloaded_points_are_misses_not_interpolation_ends():
    x = [10_000, 20_000, 30_000, 29_000]
    p = [50, 80, 90, np.nan]
    ov = [False, False, False, True]  # offered more than it could take: achieved 29 000
    assert o.slo_max_iops(x, p, 100.0, overloaded=ov) == (20_000.0, False)  # last meet before the overload
    assert o.slo_max_iops([10_000, 20_000], [50, 80], 100.0, overloaded=[True, False]) == (None, False)


def test_slo_matches_numpy_interp_on_a_monotonic_series():
    rng = np.random.default_rng(42)
    x = np.sort(rng.uniform(1e3, 5e5, 25))
    p = np.sort(rng.uniform(20.0, 5000.0, 25))  # strictly increasing p99
    for t in rng.uniform(p[0], p[-1], 50):
        got, censored = o.slo_max_iops(x, p, t)
        assert not censored and got == pytest.approx(float(np.interp(t, p, x)), abs=1e-9, rel=0)


def test_slo_table_rows_and_columns():
    df = pd.DataFrame({
        "host": ["a"] * 3 + ["a"] * 2 + ["b"] * 3,
        "rw": ["randread"] * 3 + ["randwrite"] * 2 + ["randread"] * 3,
        "achieved_iops": [10_000, 20_000, 30_000, 5000, 9000, 1000, 2000, 2900],
        "lat_p99_us": [50, 80, 120, 300, 400, 20, 30, np.nan],
        "overloaded": [False, False, False, False, False, "False", "False", "True"],
    })
    t = o.slo_table(df, [100.0, 1000.0])
    assert list(t.columns) == ["host", "rw", "target_p99_us", "max_iops", "censored"]
    assert len(t) == 3 * 2
    rows = {(r.host, r.rw, r.target_p99_us): (r.max_iops, r.censored) for r in t.itertuples()}
    assert rows[("a", "randread", 100.0)] == (pytest.approx(25_000.0), False)
    assert rows[("a", "randread", 1000.0)] == (30_000.0, True)
    m, cens = rows[("a", "randwrite", 100.0)]
    assert math.isnan(m) and not cens
    assert rows[("a", "randwrite", 1000.0)] == (9000.0, True)
    assert rows[("b", "randread", 100.0)] == (2000.0, False)  # the overloaded 2900 point is a miss
    assert t["censored"].dtype == bool and t["max_iops"].dtype == float
    with pytest.raises(ValueError, match="overloaded"):
        o.slo_table(df.drop(columns="overloaded"), [100.0])


# ---------------------------------------------------------------------------------------- unloaded latency
def test_unloaded_latency_moderate_point_and_anomaly():
    df = pd.DataFrame({"offered_util": [0.1, 0.25, 0.5, 0.25, 0.9], "lat_mean_us": [130, 100, 110, 104, 300]})
    u = o.unloaded_latency(df)
    assert u["util_used"] == 0.25 and u["lat_unloaded_us"] == pytest.approx(102.0)  # two repetitions averaged
    assert u["util_lowest"] == 0.1 and u["lat_lowest_rate_us"] == 130.0
    assert u["low_rate_excess_pct"] == pytest.approx(100 * 28 / 102)
    assert u["low_rate_anomaly"] is True and u["n_points"] == 5
    # within 10 %: no anomaly
    u = o.unloaded_latency(df.assign(lat_mean_us=[110, 100, 110, 104, 300]))
    assert u["low_rate_anomaly"] is False
    # no point at >= 0.25: the lowest is used, and it is the lowest too
    u = o.unloaded_latency(pd.DataFrame({"offered_util": [0.2, 0.1], "lat_mean_us": [90.0, 95.0]}))
    assert u["util_used"] == 0.1 and u["lat_unloaded_us"] == 95.0 and u["low_rate_excess_pct"] == 0.0
    assert u["low_rate_anomaly"] is False
    with pytest.raises(ValueError, match="util_col"):
        o.unloaded_latency(pd.DataFrame({"lat_mean_us": [1.0]}))
