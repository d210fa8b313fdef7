"""SNIA PTS steady-state rule (memstor.analysis.steady_state) on synthetic per-round IOPS series."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from memstor.analysis import steady_state as ss

ROUNDS = ss.MAX_ROUNDS


def _linear_decay(rounds: int = ROUNDS, start_iops: float = 100_000.0, pct_per_round: float = 3.0) -> list:
    """IOPS falling by pct_per_round % of start_iops every round (round 1 = start_iops)."""
    return [start_iops * (1 - pct_per_round / 100 * k) for k in range(rounds)]


def _ssd_like() -> list:
    """A fresh drive: fast first rounds, a decay, then flat from round 8 with +-2 % wiggle (25 rounds).

    Round 7 (125 k) is the last round of the decay, so every window ending before round 12 holds a round
    of the decay, and the window of rounds 8-12 is the first one made of flat rounds only.
    """
    decay = [300_000.0, 240_000.0, 200_000.0, 170_000.0, 150_000.0, 135_000.0, 125_000.0]
    wiggle = [+1, -1, 0, +1, -1]
    flat = [100_000.0 * (1 + 0.02 * wiggle[k % len(wiggle)]) for k in range(ROUNDS - len(decay))]
    return decay + flat


def _noisy(seed: int, rounds: int = ROUNDS) -> list:
    """100 k IOPS with +-(12..15) % random noise whose sign alternates every round.

    Plain i.i.d. uniform +-15 % noise meets the 20 % data excursion in about half of the windows by
    chance; alternating signs make every 5-round window hold a high and a low round, so the data excursion
    is > 20 % by construction (>= 24 k range over an average <= 104.2 k), whatever the seed.
    """
    rng = np.random.default_rng(seed)
    magnitude = rng.uniform(0.12, 0.15, rounds)
    sign = np.where(np.arange(rounds) % 2 == 0, 1.0, -1.0)
    return list(100_000.0 * (1 + sign * magnitude))


# --------------------------------------------------------------------------------------------------
# One window
# --------------------------------------------------------------------------------------------------


def test_window_check_hand_computed_numbers():
    # Window y = [12000, 11000, 11500, 10000, 10500] IOPS, rounds x = 1..5 (x_mean = 3).
    #   average          = 55000 / 5 = 11000 IOPS
    #   max - min        = 12000 - 10000 = 2000 IOPS -> 100 * 2000 / 11000 = 18.1818... % (<= 20: data ok)
    #   slope (closed form) = sum((x - x_mean) * y) / sum((x - x_mean)^2)
    #                    = (-2*12000 - 1*11000 + 0*11500 + 1*10000 + 2*10500) / (4 + 1 + 0 + 1 + 4)
    #                    = (-24000 - 11000 + 10000 + 21000) / 10 = -4000 / 10 = -400 IOPS/round
    #   slope excursion  = |-400| * (5 - 1) = 1600 IOPS -> 100 * 1600 / 11000 = 14.5454... % (> 10: not ok)
    c = ss.window_check([12000, 11000, 11500, 10000, 10500])
    assert c.window_avg == pytest.approx(11000.0)
    assert c.data_excursion_pct == pytest.approx(200 / 11)
    assert c.slope_per_round == pytest.approx(-400.0)
    assert c.slope_excursion_pct == pytest.approx(160 / 11)
    assert (c.data_ok, c.slope_ok, c.steady) == (True, False, False)


def test_window_check_agrees_with_numpy_on_random_windows():
    rng = np.random.default_rng(20240501)
    x = np.arange(1, ss.WINDOW_ROUNDS + 1)
    outcomes = set()
    for _ in range(500):
        base = rng.uniform(1e3, 1e6)
        trend = rng.uniform(-0.06, 0.06) * base          # IOPS per round
        y = base * (1 + rng.uniform(-0.12, 0.12, ss.WINDOW_ROUNDS)) + trend * (x - 3)
        c = ss.window_check(list(y))
        avg = float(np.mean(y))
        slope = float(np.polyfit(x, y, 1)[0])
        data_pct = 100 * float(np.ptp(y)) / avg
        slope_pct = 100 * abs(slope) * (ss.WINDOW_ROUNDS - 1) / avg
        assert c.window_avg == pytest.approx(avg, rel=1e-12)
        assert c.slope_per_round == pytest.approx(slope, rel=1e-8, abs=1e-9 * base)
        assert c.data_excursion_pct == pytest.approx(data_pct, rel=1e-9)
        assert c.slope_excursion_pct == pytest.approx(slope_pct, rel=1e-8, abs=1e-9)
        assert c.data_ok == (data_pct <= 20.0)
        assert c.slope_ok == (slope_pct <= 10.0)
        assert c.steady == (c.data_ok and c.slope_ok)
        outcomes.add((c.data_ok, c.slope_ok))
    assert outcomes == {(True, True), (True, False), (False, True), (False, False)}


def test_least_squares_slope_matches_polyfit_on_any_length():
    rng = np.random.default_rng(7)
    for n in range(2, 12):
        y = rng.uniform(0, 1e5, n)
        assert ss.least_squares_slope(list(y)) == pytest.approx(np.polyfit(np.arange(n), y, 1)[0], rel=1e-9)
    with pytest.raises(ValueError, match="at least 2"):
        ss.least_squares_slope([1.0])


@pytest.mark.parametrize("scale", [1.0, 1000.0, 1 / 3, 7.1, 123_456.789])
def test_window_exactly_at_the_limits_counts_as_met(scale):
    # data excursion: avg 100, max - min 20 -> exactly 20 %; symmetric, so the slope is exactly 0
    at_data = ss.window_check([90 * scale, 110 * scale, 100 * scale, 110 * scale, 90 * scale])
    assert at_data.data_excursion_pct == pytest.approx(20.0, rel=1e-13)
    assert at_data.slope_per_round == 0.0
    assert at_data.data_ok and at_data.slope_ok and at_data.steady
    # slope excursion: slope 2.5 per round x 4 = 10 over avg 100 -> exactly 10 %; data excursion 10 %
    at_slope = ss.window_check([95 * scale, 97.5 * scale, 100 * scale, 102.5 * scale, 105 * scale])
    assert at_slope.slope_excursion_pct == pytest.approx(10.0, rel=1e-13)
    assert at_slope.data_ok and at_slope.slope_ok and at_slope.steady


def test_window_exact_ties_are_exact_and_a_hair_over_is_not_met():
    assert ss.window_check([90, 110, 100, 110, 90]).data_excursion_pct == 20.0
    assert ss.window_check([95, 97.5, 100, 102.5, 105]).slope_excursion_pct == 10.0
    over_data = ss.window_check([90, 110.001, 100, 110, 90])
    assert over_data.data_excursion_pct > 20.0 and not over_data.data_ok and not over_data.steady
    over_slope = ss.window_check([95, 97.5, 100, 102.5, 105.01])
    assert over_slope.slope_excursion_pct > 10.0 and not over_slope.slope_ok and not over_slope.steady
    assert over_slope.data_ok


@pytest.mark.parametrize("values, match", [
    ([100.0] * 4, "exactly 5 rounds, got 4"),
    ([100.0] * 6, "exactly 5 rounds, got 6"),
    ([100.0, math.nan, 100.0, 100.0, 100.0], "round 2: .*finite"),
    ([100.0, 100.0, 100.0, 100.0, math.inf], "round 5: .*finite"),
    ([100.0, -1.0, 100.0, 100.0, 100.0], "round 2: .*>= 0"),
    ([0.0] * 5, "average must be > 0"),
])
def test_window_check_refuses_bad_windows(values, match):
    with pytest.raises(ValueError, match=match):
        ss.window_check(values)


def test_results_are_frozen():
    c = ss.window_check([100.0] * 5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        c.steady = False  # type: ignore[misc]
    r = ss.evaluate([100.0] * 5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.achieved = False  # type: ignore[misc]


# --------------------------------------------------------------------------------------------------
# A run: evaluate after every round
# --------------------------------------------------------------------------------------------------


def test_steady_from_the_start_is_achieved_at_round_5():
    series = [50_000, 50_400, 49_800, 50_100, 49_900, 50_200, 50_000]
    r = ss.evaluate(series)
    assert r.achieved and r.status == ss.ACHIEVED
    assert r.round == 5 and r.window == (1, 5) and r.rounds_evaluated == 5
    assert r.window_avg_iops == pytest.approx(50_040.0)
    assert r.data_excursion_pct == pytest.approx(100 * 600 / 50_040)
    assert r.verdict == "steady state at round 5 (window rounds 1-5)"
    assert not ss.should_stop(series[:4])
    assert ss.should_stop(series[:5])


def test_first_steady_window_wins_and_later_rounds_are_not_looked_at():
    # window 2-6 = 130, 110, 100, 100, 100 k: 30 k range over 108 k = 27.8 % -> not steady;
    # window 3-7 = 110, 100, 100, 100, 100 k: 10 k over 102 k = 9.8 %, slope -2 k x 4 = 7.8 % -> steady
    series = [150_000, 130_000, 110_000, 100_000, 100_000, 100_000, 100_000, 10.0, 900_000]
    r = ss.evaluate(series)
    assert (r.achieved, r.round, r.window, r.rounds_evaluated) == (True, 7, (3, 7), 7)
    assert r.verdict == "steady state at round 7 (window rounds 3-7)"
    assert r.window_avg_iops == pytest.approx(102_000.0)
    assert r.slope_excursion_pct == pytest.approx(100 * 8_000 / 102_000)
    assert not ss.evaluate(series[:6]).achieved


def test_linear_drift_of_3_pct_per_round_is_never_steady():
    series = _linear_decay()
    r = ss.evaluate(series)
    assert not r.achieved and r.round is None and r.status == ss.NOT_ACHIEVED
    assert r.verdict == "not achieved within 25 rounds"
    # the last window's numbers: rounds 21-25, centre round 23 = 100 k x (1 - 0.03 x 22) = 34 k IOPS,
    # slope -3 k IOPS/round -> 12 k across the window = 35.3 % of 34 k (and so is max - min)
    assert r.window == (21, 25) and r.rounds_evaluated == 25
    assert r.window_avg_iops == pytest.approx(34_000.0)
    assert r.slope_excursion_pct == pytest.approx(100 * 12_000 / 34_000)
    assert r.data_excursion_pct == pytest.approx(100 * 12_000 / 34_000)
    # even the first window (avg 94 k) drifts 12 % > 10 %: the slope alone keeps it from being steady
    first = ss.window_check(series[:5])
    assert first.data_ok and not first.slope_ok
    assert not any(ss.window_check(series[k - 5:k]).steady for k in range(5, ROUNDS + 1))
    assert not ss.should_stop(series[:24])
    assert ss.should_stop(series)


def test_noisy_series_never_meets_the_data_excursion():
    for seed in (1, 2, 3, 42, 2024):
        series = _noisy(seed)
        r = ss.evaluate(series)
        assert not r.achieved and r.status == ss.NOT_ACHIEVED, seed
        assert r.verdict == "not achieved within 25 rounds"
        checks = [ss.window_check(series[k - 5:k]) for k in range(5, ROUNDS + 1)]
        assert all(c.data_excursion_pct > 20.0 and not c.data_ok for c in checks), seed
        assert r.data_excursion_pct == pytest.approx(checks[-1].data_excursion_pct)


def test_too_few_rounds_is_not_evaluable():
    r = ss.evaluate([120_000, 110_000, 100_000])
    assert not r.achieved and r.status == ss.NOT_EVALUABLE
    assert (r.round, r.window, r.window_avg_iops, r.data_excursion_pct, r.slope_excursion_pct) == (
        None, None, None, None, None)
    assert r.rounds_evaluated == 3
    assert r.verdict == "not evaluable: 3 of 5 rounds"
    assert ss.evaluate([]).verdict == "not evaluable: 0 of 5 rounds"
    assert not ss.should_stop([120_000, 110_000, 100_000])


def test_ssd_like_series_reaches_steady_state_at_round_12_exactly():
    series = _ssd_like()
    # round 11's window (rounds 7-11) still holds round 7 of the decay: 125, 102, 98, 100, 102 k
    # -> 27 k range over 105.4 k = 25.6 %; round 12's window (8-12) is flat: 102, 98, 100, 102, 98 k
    # -> 4 % range, slope -0.4 k x 4 = 1.6 %
    assert not ss.window_check(series[6:11]).steady
    flat = ss.window_check(series[7:12])
    assert flat.steady
    assert flat.data_excursion_pct == pytest.approx(4.0)
    assert flat.slope_excursion_pct == pytest.approx(1.6)
    r = ss.evaluate(series)
    assert (r.achieved, r.round, r.window, r.rounds_evaluated) == (True, 12, (8, 12), 12)
    assert r.verdict == "steady state at round 12 (window rounds 8-12)"
    # round by round, as the experiment loop sees it
    before = ss.evaluate(series[:11])
    assert not before.achieved and before.status == ss.IN_PROGRESS
    assert before.verdict == "not achieved yet: 11 of 25 rounds"
    assert [ss.should_stop(series[:k]) for k in range(1, 13)] == [False] * 11 + [True]


def test_rounds_after_the_limit_are_not_evaluated():
    # 3 %/round drift for 25 rounds, then flat: steady only after the limit, so not achieved
    drift = _linear_decay()                 # ..., round 24 = 31 k, round 25 = 28 k IOPS
    series = drift + [drift[-1]] * 10       # rounds 26-35 flat at 28 k
    assert ss.evaluate(series).verdict == "not achieved within 25 rounds"
    assert ss.evaluate(series).rounds_evaluated == 25
    # with a higher limit the flat rounds count: window 24-28 = 31, 28, 28, 28, 28 k -> 3 k over 28.6 k
    # = 10.5 % range, slope -0.6 k x 4 = 2.4 k = 8.4 % -> steady at round 28 (window 23-27 holds 34 k)
    r = ss.evaluate(series, max_rounds=40)
    assert (r.achieved, r.round, r.window) == (True, 28, (24, 28))
    assert r.window_avg_iops == pytest.approx(28_600.0)
    assert r.slope_excursion_pct == pytest.approx(100 * 2_400 / 28_600)
    # a smaller limit is a limit too
    assert ss.evaluate(_linear_decay(), max_rounds=10).verdict == "not achieved within 10 rounds"
    assert ss.should_stop(_linear_decay(10), max_rounds=10)


@pytest.mark.parametrize("bad", [4, 0, -1, 2.5, True, "25"])
def test_max_rounds_must_allow_a_window(bad):
    with pytest.raises(ValueError, match="max_rounds must be an integer >= 5"):
        ss.evaluate([100.0] * 5, max_rounds=bad)
    with pytest.raises(ValueError, match="max_rounds"):
        ss.should_stop([100.0] * 5, max_rounds=bad)


def test_evaluate_names_the_round_of_a_bad_value():
    with pytest.raises(ValueError, match="round 3: the tracking variable"):
        ss.evaluate([100.0, 100.0, math.nan, 100.0, 100.0, 100.0])


def test_accepts_numpy_arrays_and_pandas_series():
    series = _ssd_like()
    assert ss.evaluate(np.array(series)) == ss.evaluate(series)
    assert ss.evaluate(pd.Series(series, index=range(100, 125))) == ss.evaluate(series)


# --------------------------------------------------------------------------------------------------
# The tidy per-round table
# --------------------------------------------------------------------------------------------------


def test_round_table_of_a_steady_run():
    series = _ssd_like()[:14]  # two rounds past the steady round: kept in the table, not in the window
    df = ss.round_table(series)
    assert list(df.columns) == ss.ROUND_TABLE_COLUMNS == [
        "round", "iops", "ss_achieved", "ss_round", "window_avg_iops", "data_excursion_pct",
        "slope_excursion_pct", "in_window"]
    assert df["round"].tolist() == list(range(1, 15))
    assert df["iops"].tolist() == series
    assert df["ss_achieved"].all()
    assert df["ss_round"].tolist() == [12] * 14
    r = ss.evaluate(series)
    assert df["window_avg_iops"].tolist() == [r.window_avg_iops] * 14
    assert df["data_excursion_pct"].tolist() == [r.data_excursion_pct] * 14
    assert df["slope_excursion_pct"].tolist() == [r.slope_excursion_pct] * 14
    assert df.loc[df["in_window"], "round"].tolist() == [8, 9, 10, 11, 12]


def test_round_table_of_a_run_without_result_has_empty_cells():
    df = ss.round_table(_linear_decay())
    assert not df["ss_achieved"].any() and df["ss_round"].isna().all()
    assert df.loc[df["in_window"], "round"].tolist() == [21, 22, 23, 24, 25]
    assert df["window_avg_iops"].iloc[0] == pytest.approx(34_000.0)

    short = ss.round_table([120_000.0, 110_000.0, 100_000.0])
    assert len(short) == 3 and not short["in_window"].any() and not short["ss_achieved"].any()
    assert short[["ss_round", "window_avg_iops", "data_excursion_pct", "slope_excursion_pct"]].isna().all().all()
    line = short.to_csv(index=False).splitlines()[1]
    assert line == "1,120000.0,False,,,,,False"  # not available = empty cell, never 0

    empty = ss.round_table([])
    assert list(empty.columns) == ss.ROUND_TABLE_COLUMNS and len(empty) == 0
