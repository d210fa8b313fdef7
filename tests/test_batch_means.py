"""memstor.core.batchmeans (and memstor.parse.fio_intervals): a confidence interval from one run (issue 18, part 1).

Coverage is measured on simulated AR(1) series with a known mean (200 seeds per phi, fixed seeds, so the
numbers are reproducible); the log handling on hand-written fio interval logs and on a real fio run.
"""

from __future__ import annotations

import math
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.signal import lfilter

from memstor.core.batchmeans import (
    CI_COLUMNS,
    CORRELATED,
    INTERVAL_COLUMNS,
    METHOD,
    OK,
    TOO_FEW,
    batch_means_ci,
    ci_columns,
    interval_cis,
    lag1_autocorrelation,
)
from memstor.parse.fio_intervals import infer_log_avg_msec, point_intervals

SEEDS = range(200)
MU = 100.0


def ar1(phi: float, n: int, seed: int, mu: float = MU, sigma: float = 5.0) -> np.ndarray:
    """A stationary AR(1) series of mean ``mu``: x_t - mu = phi (x_(t-1) - mu) + e_t, e_t ~ N(0, sigma^2)
    (the first value drawn from the stationary distribution, so no transient)."""
    rng = np.random.default_rng(seed)
    e = rng.standard_normal(n + 1)
    x0 = e[0] / math.sqrt(1.0 - phi ** 2)
    y = lfilter([1.0], [1.0, -phi], e[1:], zi=[phi * x0])[0]
    return mu + sigma * y


def coverage(phi: float, n: int) -> tuple[float, int, dict]:
    """(coverage among status ok, how many ok, {status: count}) over SEEDS (ramp 0: no transient)."""
    hits = ok = 0
    statuses: dict = {}
    for seed in SEEDS:
        r = batch_means_ci(ar1(phi, n, seed), ramp_intervals=0)
        statuses[r.status] = statuses.get(r.status, 0) + 1
        if r.status == OK:
            ok += 1
            hits += r.ci_low <= MU <= r.ci_high
    return hits / ok if ok else math.nan, ok, statuses


# ------------------------------------------------------------------------------------------ coverage
@pytest.mark.parametrize("phi", [0.0, 0.5, 0.9])
def test_ar1_coverage_of_the_95_interval(phi):
    """Acceptance 1: the 95 % interval covers the true mean in 90-98 % of 200 seeds (status ok), on
    1000 windows (measured: 0.945, 0.935, 0.937 for phi 0, 0.5, 0.9; 190 of 200 ok at phi 0.9)."""
    cov, ok, statuses = coverage(phi, 1000)
    assert ok >= 180, statuses  # the rule finds an uncorrelated batch size almost always at this length
    assert 0.90 <= cov <= 0.98, (cov, statuses)


def test_ar1_coverage_on_shorter_series_stays_near_nominal_for_moderate_correlation():
    """120 windows (a 60 s point at 500 ms windows): iid and phi 0.5 stay at 0.90-0.98 (measured 0.955,
    0.927). At phi 0.9 the rule cannot see the correlation with so few batches (measured 0.84 among the 89
    ok, the rest correlated): the limit of the issue's rule, reported, not hidden."""
    for phi in (0.0, 0.5):
        cov, ok, statuses = coverage(phi, 120)
        assert ok >= 180 and 0.90 <= cov <= 0.98, (phi, cov, statuses)
    cov, ok, statuses = coverage(0.9, 120)
    assert statuses.get(CORRELATED, 0) >= 80, statuses  # flagged in about half of the seeds
    assert 0.75 <= cov < 0.90, (cov, statuses)


def test_iid_data_gives_batch_size_one():
    sizes = [batch_means_ci(ar1(0.0, 400, seed)).batch_size for seed in SEEDS]
    assert sizes.count(1) >= 195, np.unique(sizes, return_counts=True)
    r = batch_means_ci(ar1(0.0, 400, 7))
    assert r.batch_size == 1 and r.n_batches == 400 and r.status == OK and r.unbatched == 0
    x = ar1(0.0, 400, 7)  # batch size 1: the plain t-interval of the windows
    half = stats.t.ppf(0.975, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size)
    assert r.mean == pytest.approx(x.mean()) and r.half_width == pytest.approx(half)
    assert r.method == METHOD and r.confidence == 0.95 and abs(r.lag1) <= 0.2


def test_correlated_series_grows_the_batch_by_doubling():
    r = batch_means_ci(ar1(0.9, 2000, 3), ramp_intervals=0)
    assert r.status == OK and r.batch_size in (16, 32, 64, 128) and r.n_batches == 2000 // r.batch_size
    assert r.lag1 <= 0.2
    assert r.ci_low < MU < r.ci_high


def test_strongly_correlated_short_series_is_flagged():
    """phi 0.95 on 40 windows: batches of at most 4 windows, far shorter than the correlation (about 39
    windows): the interval is marked correlated (or empty), in almost every seed."""
    flagged = 0
    for seed in SEEDS:
        r = batch_means_ci(ar1(0.95, 40, seed))
        flagged += r.status in (CORRELATED, TOO_FEW)
        if r.status == CORRELATED:
            assert r.batch_size == 4 and r.n_batches == 10 and r.lag1 > 0.2  # the largest admissible: 40 // 10
            assert math.isfinite(r.ci_low) and math.isfinite(r.ci_high)  # still computed
    assert flagged >= 0.75 * len(SEEDS)
    r = batch_means_ci(np.linspace(0, 1, 40))  # a trend: correlated at every batch size
    assert r.status == CORRELATED and r.batch_size == 4 and r.finite


def test_fewer_than_ten_batches_gives_an_empty_interval():
    r = batch_means_ci(ar1(0.0, 10, 1), ramp_intervals=1)  # 10 windows, the first one ramp: 9 left
    assert r.status == TOO_FEW and r.n_intervals == 9 and r.ramp_excluded == 1
    assert math.isnan(r.ci_low) and math.isnan(r.ci_high) and math.isnan(r.half_width) and not r.finite
    assert r.mean == pytest.approx(ar1(0.0, 10, 1)[1:].mean())  # the mean is still given
    assert batch_means_ci(ar1(0.0, 11, 1), ramp_intervals=1).status == OK  # 10 after the ramp: an interval
    assert batch_means_ci(ar1(0.0, 10, 1)).status == OK  # by default no ramp: 10 windows
    r = batch_means_ci(ar1(0.0, 30, 1), min_batches=40)
    assert r.status == TOO_FEW and math.isnan(r.ci_low)
    empty = batch_means_ci([])
    assert empty.status == TOO_FEW and math.isnan(empty.mean) and empty.n_intervals == 0


def test_the_ramp_interval_is_excluded():
    x = ar1(0.0, 100, 5)
    spiked = np.concatenate([[1e9], x])
    r = batch_means_ci(spiked, ramp_intervals=1)
    assert r.ramp_excluded == 1 and r.n_intervals == 100
    assert r.mean == pytest.approx(x.mean())
    assert r.half_width == pytest.approx(batch_means_ci(x, ramp_intervals=0).half_width)  # as if never there
    assert batch_means_ci(spiked, ramp_intervals=0).mean > 1e6  # counted, it moves the mean
    r3 = batch_means_ci(np.concatenate([[1e9, 1e9, 1e9], x]), ramp_intervals=3)
    assert r3.ramp_excluded == 3 and r3.mean == pytest.approx(x.mean())


def test_remainder_dropped_at_the_start():
    """n not a multiple of the batch size: the first n % b windows (next to the ramp) are left out."""
    x = ar1(0.8, 1003, 11)
    r = batch_means_ci(x, ramp_intervals=0)
    assert r.batch_size > 1
    assert r.unbatched == 1003 % r.batch_size
    assert r.mean == pytest.approx(x[r.unbatched:].mean())


def test_constant_series_has_a_zero_width_interval():
    r = batch_means_ci([5.0] * 20)
    assert r.status == OK and r.batch_size == 1 and r.lag1 == 0.0
    assert r.ci_low == r.ci_high == 5.0 and r.half_width == 0.0


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="finite"):
        batch_means_ci([1.0, math.nan] * 10)
    with pytest.raises(ValueError, match="weights"):
        batch_means_ci([1.0] * 20, [1.0] * 19)
    with pytest.raises(ValueError, match=">= 0"):
        batch_means_ci([1.0] * 20, [-1.0] * 20)
    with pytest.raises(ValueError, match="confidence"):
        batch_means_ci([1.0] * 20, confidence=95)


def test_lag1_autocorrelation():
    assert lag1_autocorrelation(np.array([1.0, -1.0] * 10)) == pytest.approx(-19 / 20)
    assert math.isnan(lag1_autocorrelation(np.array([1.0])))
    assert lag1_autocorrelation(np.zeros(5)) == 0.0


# ------------------------------------------------------------------------------------------ weights
def test_weighted_mean_is_total_latency_over_total_ios():
    rng = np.random.default_rng(2)
    lat = rng.uniform(50, 500, 64)  # us, per window
    ios = rng.integers(100, 5000, 64).astype(float)
    r = batch_means_ci(lat, ios, ramp_intervals=0)
    assert r.batch_size == 1
    assert r.mean == pytest.approx((lat * ios).sum() / ios.sum())
    r1 = batch_means_ci(lat, ios, ramp_intervals=1)  # ramp 1: the first window's latency and I/Os both left out
    assert r1.mean == pytest.approx((lat[1:] * ios[1:]).sum() / ios[1:].sum())


def test_equal_weights_give_the_unweighted_interval():
    x = ar1(0.5, 300, 4)
    a, b = batch_means_ci(x), batch_means_ci(x, np.full(x.size, 1234.0))
    assert (a.batch_size, a.n_batches, a.status) == (b.batch_size, b.n_batches, b.status)
    assert b.mean == pytest.approx(a.mean) and b.half_width == pytest.approx(a.half_width)
    assert b.lag1 == pytest.approx(a.lag1)


def test_weighted_variance_is_the_ratio_estimators():
    """var(R) = sum (Y_j - R W_j)^2 / (k (k - 1) Wbar^2) over batches (delta method), by hand."""
    rng = np.random.default_rng(9)
    lat, ios = rng.uniform(80, 120, 12), rng.uniform(500, 1500, 12)
    r = batch_means_ci(lat, ios, ramp_intervals=0)
    assert r.batch_size == 1 and r.n_batches == 12
    y, w = lat * ios, ios
    big_r = y.sum() / w.sum()
    var = ((y - big_r * w) ** 2).sum() / (12 * 11 * w.mean() ** 2)
    assert r.half_width == pytest.approx(stats.t.ppf(0.975, 11) * math.sqrt(var))


def test_weighted_coverage_of_the_io_weighted_mean():
    """Latency windows x = 100 exp(0.3 z), z an AR(1) with N(0, 1) marginals, and I/Os per window w = c / x
    (a fixed queue depth: Little's law). The I/O-weighted mean latency is then the harmonic mean,
    100 exp(-0.045) = 95.6 us, not the windows' plain mean (104.6 us). Measured coverage 0.925 and 0.926
    (phi 0.5: 200 of 200 ok; phi 0.9: 189 of 200 ok)."""
    truth = 100.0 * math.exp(-0.3 ** 2 / 2)
    for phi in (0.5, 0.9):
        hits = ok = 0
        means = []
        for seed in SEEDS:
            z = (ar1(phi, 1000, seed, mu=0.0, sigma=1.0)) * math.sqrt(1 - phi ** 2)
            lat = 100.0 * np.exp(0.3 * z)
            ios = np.round(250_000.0 / lat)
            r = batch_means_ci(lat, ios, ramp_intervals=0)
            if r.status == OK:
                ok += 1
                hits += r.ci_low <= truth <= r.ci_high
            means.append(r.mean)
        assert ok >= 180 and 0.90 <= hits / ok <= 0.98, (phi, hits, ok)
        assert np.mean(means) == pytest.approx(truth, abs=0.5)  # the plain mean of the windows is 104.6


# --------------------------------------------------------------------------------------- fio's logs
def write_log(folder: Path, kind: str, job: int, rows) -> None:
    """A fio interval log as fio-3.33 writes it: ``time, value, ddir, bs, prio`` (bs 0: averaged)."""
    (folder / f"fio_{kind}.{job}.log").write_text("".join(f"{t}, {v}, {d}, 0, 0\n" for t, v, d in rows))


def test_point_intervals_sums_jobs_per_window(tmp_path):
    """Two jobs, 250 ms windows closed a few ms late (as fio does): IOPS and MB/s summed per window, the
    latency weighted by each job's I/Os; windows a job did not log (fio loses the last iops/bw window)
    are dropped, and so is the partial last lat window that has no I/O count."""
    t1 = [254, 504, 755, 1005, 1255]
    iops1, iops2 = [1000, 1100, 1200, 1300, 1400], [3000, 3100, 3200, 3300]  # job 2 lost its last window
    write_log(tmp_path, "iops", 1, [(t, v, 0) for t, v in zip(t1, iops1)])
    write_log(tmp_path, "iops", 2, [(t, v, 0) for t, v in zip(t1, iops2)])
    write_log(tmp_path, "bw", 1, [(t, v * 4, 0) for t, v in zip(t1, iops1)])  # KiB/s of 4 KiB I/Os
    write_log(tmp_path, "bw", 2, [(t, v * 4, 0) for t, v in zip(t1, iops2)])
    lat1, lat2 = [100_000, 110_000, 120_000, 130_000, 140_000, 150_000], [50_000, 60_000, 70_000, 80_000,
                                                                          90_000, 99_000]  # ns
    tl = [250, 500, 750, 1000, 1250, 1500]
    write_log(tmp_path, "lat", 1, [(t, v, 0) for t, v in zip(tl, lat1)])
    write_log(tmp_path, "lat", 2, [(t, v, 0) for t, v in zip(tl, lat2)])
    df = point_intervals(tmp_path)
    assert list(df.columns) == list(INTERVAL_COLUMNS)
    assert df["window"].tolist() == [1, 2, 3, 4] and (df["direction"] == "read").all()
    assert df["time_ms"].tolist() == [250, 500, 750, 1000] and (df["jobs"] == 2).all()
    assert df["iops"].tolist() == [4000, 4200, 4400, 4600]
    assert df["bw_MBps"].tolist() == pytest.approx([v * 4096 / 1e6 for v in (4000, 4200, 4400, 4600)])
    spans = [254, 250, 251, 250]  # ms since the job's previous entry
    for i, row in df.iterrows():
        n1, n2 = iops1[i] * spans[i] / 1000, iops2[i] * spans[i] / 1000
        assert row["ios"] == pytest.approx(n1 + n2)
        assert row["lat_mean_us"] == pytest.approx((lat1[i] * n1 + lat2[i] * n2) / (n1 + n2) / 1000)
    assert infer_log_avg_msec([pd.read_csv(tmp_path / "fio_iops.1.log", header=None,
                                           names=["time_ms", "value", "d", "bs", "p"]).assign(direction=0)]) == 250


def test_point_intervals_skipped_latency_window_is_weighted_by_its_windows(tmp_path):
    """A lat entry after a window without completions averages both windows: weighted by their I/Os."""
    write_log(tmp_path, "iops", 1, [(250, 400, 0), (500, 0, 0), (750, 800, 0), (1000, 400, 0)])
    write_log(tmp_path, "lat", 1, [(250, 1000, 0), (750, 2000, 0), (1000, 3000, 0)])  # no entry at 500
    df = point_intervals(tmp_path, log_avg_msec=250).set_index("window")
    assert math.isnan(df.loc[2, "lat_mean_us"]) and df.loc[2, "ios"] == 0
    assert df.loc[3, "lat_mean_us"] == pytest.approx(2.0)
    assert df["ios"].tolist() == [100, 0, 200, 100] and df.loc[3, "lat_ios"] == 200  # windows 2 + 3
    r = interval_cis(df.reset_index(), ramp_intervals=0, min_batches=2)["lat_mean_us"]
    ios = {1: 100.0, 3: 200.0, 4: 100.0}  # iops x 0.25 s; window 2's 0 I/Os go with window 3
    assert r.mean == pytest.approx((1.0 * ios[1] + 2.0 * ios[3] + 3.0 * ios[4]) / sum(ios.values()))


def test_point_intervals_keeps_directions_apart_and_totals_them(tmp_path):
    """A mixed job logs read (0) and write (1) lines in one file: two series; "total" sums IOPS per
    window and weights the latency by each direction's I/Os (windows both directions logged)."""
    rows = [(250 * k, 1000 + k, 0) for k in range(1, 13)] + [(250 * k, 500, 1) for k in range(1, 12)]
    write_log(tmp_path, "iops", 1, rows)
    write_log(tmp_path, "lat", 1, [(250 * k, 100_000, 0) for k in range(1, 13)]
              + [(250 * k, 400_000, 1) for k in range(1, 13)])
    df = point_intervals(tmp_path)
    assert sorted(df["direction"].unique()) == ["read", "write"]
    assert df[df["direction"] == "write"]["iops"].tolist() == [500] * 11
    with pytest.raises(ValueError, match="several directions"):
        interval_cis(df)
    total = interval_cis(df, "total", min_batches=5, ramp_intervals=1)
    assert total["iops"].n_intervals == 10  # windows 2..11: 12 has no write entry, 1 is the ramp
    assert total["iops"].mean == pytest.approx(np.mean([1000 + k + 500 for k in range(2, 12)]))
    reads = np.array([1000 + k for k in range(2, 12)]) * 0.25
    lat = (100 * reads.sum() + 400 * 125 * 10) / (reads.sum() + 125 * 10)
    assert total["lat_mean_us"].mean == pytest.approx(lat)
    trend = ci_columns(df, "total", min_batches=5)  # the reads rise by 1 a window: correlated, no interval
    assert trend["ci_method"] == "" and "correlated (lag-1 iops" in trend["ci_note"]
    assert math.isnan(trend["iops_ci_low"]) and math.isnan(trend["iops_ci_high"])
    assert ci_columns(df, "trim")["ci_note"] == "no interval logs"


def test_point_intervals_refuses_per_io_logs(tmp_path):
    (tmp_path / "fio_iops.1.log").write_text("1, 1, 0, 4096, 0, 0\n2, 1, 0, 4096, 0, 0\n")
    with pytest.raises(ValueError, match="log_avg_msec"):
        point_intervals(tmp_path)


def test_ci_columns(tmp_path):
    n = 41  # 10 s at 250 ms windows + a slow first window
    rng = np.random.default_rng(0)
    iops = np.round(rng.normal(20000, 500, n))
    iops[0] = 5000  # the start of the job
    write_log(tmp_path, "iops", 1, [(250 * (k + 1) + 3, int(v), 0) for k, v in enumerate(iops)])
    write_log(tmp_path, "bw", 1, [(250 * (k + 1) + 3, int(v) * 4, 0) for k, v in enumerate(iops)])
    write_log(tmp_path, "lat", 1, [(250 * (k + 1), int(1e9 / v), 0) for k, v in enumerate(iops)])
    cols = ci_columns(point_intervals(tmp_path))
    assert list(cols) == list(CI_COLUMNS)
    # the value (fio's JSON) counts every window after fio's ramp_time, the slow first one too: so does its
    # interval (no second ramp dropped here), else the interval would miss the value beside it
    assert cols["ci_method"] == METHOD and "ramp excluded" not in cols["ci_note"]
    assert cols["iops_ci_low"] < iops.mean() < cols["iops_ci_high"]
    assert cols["iops_ci_low"] > 18000 and cols["iops_ci_high"] < 21000
    assert cols["bw_MBps_ci_low"] == pytest.approx(cols["iops_ci_low"] * 4096 / 1e6, rel=1e-3)
    assert cols["lat_mean_us_ci_low"] < np.average(1e9 / iops, weights=iops) / 1e3 < cols["lat_mean_us_ci_high"]
    ramped = ci_columns(point_intervals(tmp_path), ramp_intervals=1)
    assert ramped["ci_note"].startswith("ramp excluded 1") and ramped["iops_ci_low"] > iops.mean()
    short = ci_columns(point_intervals(tmp_path).head(8))
    assert short["ci_method"] == "" and "too few batches (8 intervals < 10)" in short["ci_note"]
    assert all(math.isnan(short[c]) for c in CI_COLUMNS[:6])
    none = ci_columns(None)
    assert none["ci_method"] == "" and none["ci_note"] == "no interval logs" and math.isnan(none["iops_ci_low"])
    trend = point_intervals(tmp_path)
    trend["iops"] = np.linspace(1000, 2000, len(trend))
    note = ci_columns(trend)["ci_note"]
    assert note.startswith("correlated (lag-1 iops ") and note.endswith(
        " at 10 batches of 4 intervals)"), note
    assert "bw_MBps" not in note  # only the metric that is correlated


# ------------------------------------------------------------------------------------------- real fio
needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (make env installs it)")


@needs_fio
@pytest.mark.fio
def test_real_fio_run_batch_means_agrees_with_fio_json(tmp_path):
    """A 4 s randread of a 16 MiB file with 250 ms logs through memstor's FioRunner (logs=True): the
    batch-means mean IOPS is fio's JSON IOPS within 5 % and the interval has numbers."""
    from memstor.core.errors import UsageError
    from memstor.measure.fio import FioJob, FioRunner
    from memstor.measure.fio_engine import choose_engine, probe_direct
    from memstor.measure.fio_output import check_fio_output
    from memstor.measure.sweep import Point, raw_dir, run_sweep

    test_file = tmp_path / "memstor-testfile.dat"
    test_file.write_bytes(os.urandom(1024 * 1024) * 16)
    try:
        probe_direct(tmp_path)
        direct = True
    except UsageError:
        direct = False
    engine, _ = choose_engine("io_uring", tmp_path, direct=direct)
    job = FioJob(name="bm", rw="randread", bs="4k", iodepth=1, numjobs=2, ioengine=engine, direct=direct,
                 size="16m", runtime_s=4.0, logs=True, log_avg_msec=250, filename=str(test_file))
    point = Point("bm-real", {"i": 1}, est_s=5)
    res = run_sweep("bm", [point], FioRunner({point.name: job}), tmp_path / "data", "h", progress=False)
    assert res[0].status == "done", res[0].error
    doc = check_fio_output("bm", 0, "", res[0].raw.read_text())
    json_iops = sum(j["read"]["iops"] for j in doc["jobs"])  # group_reporting: one entry for both jobs
    json_lat_us = doc["jobs"][0]["read"]["lat_ns"]["mean"] / 1000
    df = point_intervals(raw_dir(tmp_path / "data", "h", "bm") / "bm-real.files", log_avg_msec=250)
    assert (df["jobs"] == 2).all() and len(df) >= 12  # 15 or 16 windows of 250 ms
    cis = interval_cis(df)
    iops = cis["iops"]
    assert iops.status in (OK, CORRELATED) and iops.finite and iops.half_width > 0, iops
    assert iops.mean == pytest.approx(json_iops, rel=0.05), (iops, json_iops)
    assert iops.ramp_excluded == 0 and iops.n_intervals == len(df)  # the windows of fio's JSON value
    bw = cis["bw_MBps"]
    assert bw.finite and bw.mean == pytest.approx(iops.mean * 4096 / 1e6, rel=0.01)
    lat = cis["lat_mean_us"]
    assert lat.finite and lat.mean == pytest.approx(json_lat_us, rel=0.1), (lat, json_lat_us)
    cols = ci_columns(df)
    if iops.status == OK:
        assert cols["ci_method"] == METHOD and cols["iops_ci_low"] <= iops.mean <= cols["iops_ci_high"]
    else:  # issue 38: no interval from correlated batches, the reason in the note
        assert math.isnan(cols["iops_ci_low"]) and "correlated (lag-1" in cols["ci_note"]


def test_no_published_interval_from_correlated_batches():
    """Issue 38: batch_means_ci still reports a correlated interval (status and lag-1), independent() empties
    its bounds for publishing, and correlated_metrics() finds the metrics a note names (tables written before)."""
    from memstor.core.batchmeans import correlated_metrics, independent

    r = batch_means_ci(np.linspace(0, 1, 40))
    assert r.status == CORRELATED and r.finite
    out = independent(r)
    assert not out.finite and math.isnan(out.half_width) and out.status == CORRELATED and out.lag1 == r.lag1
    assert out.mean == r.mean and out.n_batches == 10 and out.batch_size == 4
    ok = batch_means_ci(ar1(0.0, 400, 7))
    assert independent(ok) is ok
    note = "ramp excluded 1; correlated (lag-1 iops 0.74, lat_mean_us 0.31 at 10 batches of 4 intervals)"
    assert correlated_metrics(note) == {"iops": 0.74, "lat_mean_us": 0.31}
    assert correlated_metrics("correlated (lag-1 iops 0.40 at 12 batches of 2, bw_MBps 0.25 at 10 batches of 4)") \
        == {"iops": 0.40, "bw_MBps": 0.25}
    assert correlated_metrics("correlated (lag-1 latency 0.34 at 10 batches of 1 sub-windows)") == {"latency": 0.34}
    assert correlated_metrics(None) == {} and correlated_metrics("too few batches (7 intervals < 10)") == {}
