"""The storage experiments (memstor.experiments.fio_*) and memstor.analysis.storage: analysis on real fio 3.36 outputs from public repositories, and tiny real sweeps
(real fio on a real temporary test file) through memstor.experiments.run_experiment."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from conftest import REAL
from memstor.analysis import storage
from memstor.analysis.summary import observations, summary_table, with_totals
from memstor.core.errors import UsageError
from memstor.core.schema import FIO_COLUMNS
from memstor.experiments import _fio_params, _fio_points, _fio_rows, load_profile, run_experiment
from memstor.experiments import fio_block_size as block_size
from memstor.experiments import fio_queue_depth as queue_depth
from memstor.experiments import fio_rw_ratio as rw_ratio
from memstor.parse import fio as fioparse
from memstor.report.plots.storage import _err

AIALRA = REAL / "AIALRA-0__ECSE-4320-Advanced-Computer-Systems" / "Project3 SSD" / "results"
CHRIS = REAL / "ChrisLvvvv__ECSE_4320_Advanced-Computer-Systems" / "Project3" / "results"
MMN = REAL / "MMN0001__Repo-for-Advanced-Computer-Systems"
HAVE_FIO = shutil.which("fio") is not None
needs_fio = pytest.mark.skipif(not HAVE_FIO, reason="fio is not installed (make env installs it)")


def _common(runtime_s=30, ramp_s=5, numjobs=1, engine="io_uring"):
    return _fio_params.FioCommon(runtime_s, ramp_s, "64g", 64 << 30, engine, 1, numjobs, 3)


def _rows(path: Path, experiment: str, rep: int, **cfg) -> list:
    """_fio_rows.point_rows of one real fio file, with the grid coordinates of the experiment."""
    numjobs = cfg.pop("numjobs", 1)
    engine = cfg.pop("engine", "io_uring")
    params = _fio_points.point_params(experiment, _common(numjobs=numjobs, engine=engine), engine,
                                  numjobs=numjobs, **cfg)
    params["rep"] = rep
    return _fio_rows.point_rows(path.read_text(), str(path), params, f"{path.stem}", "testhost")


@pytest.fixture(scope="module")
def qd_df() -> pd.DataFrame:
    """The AIALRA-0 queue-depth sweep: 4k randread io_uring QD 1..128, 3 repetitions each."""
    rows = []
    for f in sorted((AIALRA / "qd_sweep").glob("qd*_*.json")):
        qd, rep = f.stem[2:].split("_")
        rows += _rows(f, _fio_params.QUEUE_DEPTH, int(rep), rw="randread", bs="4k", iodepth=int(qd))
    return _fio_rows.to_frame(rows)


@pytest.fixture(scope="module")
def mix_df() -> pd.DataFrame:
    """The AIALRA-0 read/write mix runs (R100, R70, R50, R0), 3 repetitions each."""
    rows = []
    for f in sorted((AIALRA / "rw_mix").glob("mix_R*_*.json")):
        tag, rep = f.stem.split("_")[1:]
        mix = int(tag[1:].split("W")[0])
        rw = {100: "randread", 0: "randwrite"}.get(mix, "randrw")
        rows += _rows(f, _fio_params.RW_RATIO, int(rep), rw=rw, bs="4k", iodepth=32,
                      rwmixread=mix if rw == "randrw" else None)
    return _fio_rows.to_frame(rows)


# ---------------------------------------------------------------------------------- tidy rows (real)


def test_point_rows_of_real_file_have_schema_and_extras(qd_df):
    assert list(qd_df.columns) == FIO_COLUMNS + _fio_rows.EXTRA_COLUMNS
    r = qd_df[qd_df["point"] == "qd1_1"].iloc[0]
    # SOURCES.md: qd1_1.json read iops=12605.033333 lat.mean=79008.614514 ns
    assert r["iops"] == pytest.approx(12605.033333)
    assert r["lat_mean_us"] == pytest.approx(79.008614514)
    assert r["direction"] == "read" and r["status"] == "done" and r["rep"] == 1
    assert r["outstanding_io"] == 1 and r["iodepth_reached"] and r["iodepth_level_pct"] == 100.0
    assert r["config"] == "randread-bs4k-qd1-nj1-io_uring-d1-t30-r5-f64g"
    assert len(qd_df) == 24 and set(qd_df["status"]) == {"done"}


def test_depth_buckets_follow_fio():
    # fio io_u_mark_depth: 1 | 2-3 | 4-7 | 8-15 | 16-31 | 32-63 | >=64
    assert [fioparse.depth_bucket(d) for d in (1, 2, 3, 4, 7, 8, 31, 32, 63, 64, 1024)] == [
        "1", "2", "2", "4", "4", "8", "16", "32", "32", ">=64", ">=64"]
    levels = {"1": 0.1, "2": 0.1, "4": 0.1, "8": 99.98, "16": 0.0, "32": 0.0, ">=64": 0.0}
    assert _fio_rows.depth_level_pct(levels, 8) == 99.98
    assert _fio_rows.depth_level_pct(levels, 32) == 0.0
    assert _fio_rows.depth_level_pct({}, 8) is None


def test_failed_rows_have_no_metrics():
    params = _fio_points.point_params(_fio_params.RW_RATIO, _common(), "io_uring", rw="randrw", bs="4k", iodepth=32,
                                  numjobs=1, rwmixread=70)
    rows = _fio_rows.failed_rows(dict(params, rep=2), "p", "h", "point p: fio exited 1: boom")
    assert [r["direction"] for r in rows] == ["read", "write"]
    for r in rows:
        assert r["status"] == "failed" and r["error"].startswith("point p")
        assert r["iops"] is None and r["lat_mean_us"] is None and r["rep"] == 2


def test_garbage_raw_output_is_a_failed_row():
    params = _fio_points.point_params(_fio_params.BLOCK_SIZE, _common(), "io_uring", rw="randread", bs="4k",
                                  iodepth=32, numjobs=1)
    rows = _fio_rows.point_rows("fio: pid=1, err=5/file:io_u.c:1889, error=Input/output error\n", "x.json",
                              dict(params, rep=1), "x", "h")
    assert len(rows) == 1 and rows[0]["status"] == "failed" and rows[0]["iops"] is None
    assert rows[0]["error"]


# ---------------------------------------------------------------------------------- analysis (real)


def test_summary_mean_ci_and_n(qd_df):
    summ = summary_table(qd_df)
    assert len(summ) == 8
    r = summ[summ["iodepth"] == 1].iloc[0]
    x = np.array([12605.033333, 12587.780407, 12463.217893])  # SOURCES.md, qd1_{1,2,3}.json
    half = stats.t.ppf(0.975, 2) * x.std(ddof=1) / math.sqrt(3)
    assert r["n"] == 3 and r["n_failed"] == 0
    assert r["iops"] == pytest.approx(x.mean())
    assert r["iops_ci_low"] == pytest.approx(x.mean() - half)
    assert r["iops_ci_high"] == pytest.approx(x.mean() + half)
    view = storage.summary_view(summ)
    assert view.loc[view["QD"] == 1, "IOPS"].iloc[0] == f"{x.mean():,.0f} ± {half:,.0f}"


def test_summary_single_run_has_no_interval(qd_df):
    summ = summary_table(qd_df[qd_df["rep"] == 1])
    assert (summ["n"] == 1).all() and summ["iops_ci_low"].isna().all()
    assert summ["iops"].notna().all()


def test_littles_law_holds_on_real_qd_sweep(qd_df):
    t = storage.littles_law_table(qd_df)
    assert len(t) == 24 and not t["flagged"].any()
    r = t[t["point"] == "qd1_1"].iloc[0]
    assert r["littles_outstanding"] == pytest.approx(12605.033333 * 79.008614514e-6)
    assert r["residual_pct"] == pytest.approx(100 * (12605.033333 * 79.008614514e-6 - 1))
    assert (t["residual_pct"].abs() < 1).all() and t["depth_reached"].all()


def test_littles_law_numjobs_counts_every_job():
    f = MMN / "Project3" / "log&json data" / "NJ_4_run1.json"  # io_uring QD1 x 4 jobs, group_reporting
    df = _fio_rows.to_frame(_rows(f, _fio_params.QUEUE_DEPTH, 1, rw="randread", bs="4k", iodepth=1, numjobs=4))
    r = storage.littles_law_table(df).iloc[0]
    assert r["outstanding_io"] == 4
    assert r["littles_outstanding"] == pytest.approx(20666.277791 * 192.317002452e-3 / 1000, rel=1e-6)
    assert not r["flagged"]


def test_littles_law_flags_cpu_bound_point_with_reason():
    # psync, 16 jobs of QD 1 on the page cache: only ~14 of 16 I/Os in flight (user-space gaps)
    f = MMN / "Project4" / "result & figures" / "results_baseline" / "sync_psync_c16.json"
    df = _fio_rows.to_frame(_rows(f, _fio_params.QUEUE_DEPTH, 1, rw="randread", bs="4k", iodepth=1, numjobs=16,
                                engine="psync"))
    r = storage.littles_law_table(df).iloc[0]
    assert r["residual_pct"] == pytest.approx(100 * (6907859.071364 * 2.048909959e-6 - 16) / 16)
    assert r["flagged"] and r["depth_reached"] and "depth was reached" in r["reason"]


def test_totals_of_real_mix(mix_df):
    t = with_totals(observations(mix_df))
    tot = t[(t["point"] == "mix_R70W30_1") & (t["direction"] == "total")].iloc[0]
    rd = mix_df[(mix_df["point"] == "mix_R70W30_1") & (mix_df["direction"] == "read")].iloc[0]
    wr = mix_df[(mix_df["point"] == "mix_R70W30_1") & (mix_df["direction"] == "write")].iloc[0]
    # SOURCES.md (checked by eye): read iops=71944.237051 lat 435472.001894 ns, write 30828.878075 / 20651.1263 ns
    assert tot["iops"] == pytest.approx(71944.237051 + 30828.878075)
    want = (435.472001894 * rd["total_ios"] + 20.6511263 * wr["total_ios"]) / (rd["total_ios"] + wr["total_ios"])
    assert tot["lat_mean_us"] == pytest.approx(want)
    assert pd.isna(tot["clat_p99_us"])  # not derivable from per-direction percentiles
    one = t[t["point"] == "mix_R100W0_1"]  # a plain randread job: its read row is its total
    assert list(one["direction"]) == ["read"] and one["clat_p99_us"].iloc[0] == pytest.approx(708.608)
    # Little's law on the total of a mix (QD 32)
    ll = storage.littles_law_table(mix_df)
    assert len(ll) == 12 and (ll["residual_pct"].abs() < 5).all()


def _doc(path: Path) -> dict:
    """The fio document of a raw fixture (latency_cdf takes documents or bins tables, never paths)."""
    return fioparse.load_fio_json(path.read_text())


def test_latency_cdf_from_json_plus_bins_matches_fio_percentiles():
    cdf = storage.latency_cdf(_doc(CHRIS / "qd_sweep.json"), "read", jobname="qd-1")
    assert cdf["count"].sum() == 203262  # total_ios of job qd-1
    assert cdf["cdf"].is_monotonic_increasing and cdf["cdf"].iloc[-1] == pytest.approx(1.0)
    # fio's own percentiles of that job (ns): p50 130560, p99 259072, p99.9 847872
    assert storage.percentile_from_cdf(cdf, 50) == pytest.approx(130.560)
    assert storage.percentile_from_cdf(cdf, 99) == pytest.approx(259.072)
    assert storage.percentile_from_cdf(cdf, 99.9) == pytest.approx(847.872)
    assert storage.latency_cdf(_doc(CHRIS / "qd_sweep.json"), "write", jobname="qd-1").empty


def test_latency_cdf_total_merges_directions():
    text = (CHRIS / "rw_mix_sweep.json").read_text()
    doc = json.loads(text[text.index("{"):])
    job = next(j for j in doc["jobs"] if j["jobname"] == "rw-70R")
    cdf = storage.latency_cdf(job, "total")
    assert cdf["count"].sum() == job["read"]["total_ios"] + job["write"]["total_ios"]
    assert storage.latency_cdf(_doc(AIALRA / "qd_sweep" / "qd1_1.json")).empty  # plain json: no bins


def test_saturation_and_best(qd_df):
    summ = summary_table(qd_df)
    # QD128 is the best (148553 IOPS); QD64 (145073) is within 95%, QD32 (133806) is not
    assert storage.saturation_iodepth(summ, "randread") == 64
    best = storage.best_iops(qd_df, "randread")
    assert best["iodepth"] == 128 and best["iops"] == pytest.approx(148553.229785)
    assert storage.saturation_iodepth(summ, "randwrite") is None


def test_plots_draw_every_figure_from_real_data(qd_df, mix_df, tmp_path):
    from memstor.report.plots import save
    from memstor.report.plots import storage as splots

    rows = []
    for f in sorted((AIALRA / "bs_sweep").glob("*_1.json")):
        rw, bs = f.stem.split("_")[:2]
        rows += _rows(f, _fio_params.BLOCK_SIZE, 1, rw=rw, bs=bs[2:], iodepth=32)
    bs_summ = summary_table(_fio_rows.to_frame(rows))
    more = []  # a second pattern (randwrite QD1) and a spec-conditions point (QD1 x 4 jobs)
    for f in sorted((AIALRA / "qd1_test").glob("randwrite_qd1_*.json")):
        more += _rows(f, _fio_params.QUEUE_DEPTH, int(f.stem[-1]), rw="randwrite", bs="4k", iodepth=1)
    more += _rows(MMN / "Project3" / "log&json data" / "NJ_4_run1.json", _fio_params.QUEUE_DEPTH, 1, rw="randread",
                  bs="4k", iodepth=1, numjobs=4, spec_point=True)
    qd_summ = summary_table(pd.concat([qd_df, _fio_rows.to_frame(more)], ignore_index=True))
    cdfs = pd.concat([storage.latency_cdf(_doc(CHRIS / "qd_sweep.json"), jobname=j).assign(label=j)
                      for j in ("qd-1", "qd-32")])
    figs = {
        "bs-tput": splots.block_size_throughput(bs_summ),
        "bs-lat": splots.block_size_latency(bs_summ),
        "rw": splots.rw_ratio(summary_table(mix_df)),
        "tl": splots.throughput_latency(qd_summ),
        "pct": splots.qd_percentiles(qd_summ),
        "qd": splots.qd_iops(qd_summ),
        "cdf": splots.latency_cdf(cdfs),
        "ll": splots.littles_law(storage.littles_law_table(qd_df)),
    }
    for name, fig in figs.items():
        for ax in fig.axes:
            if ax.has_data():
                assert ax.get_xlabel() and ax.get_ylabel(), f"{name}: an axis without a label"
                assert "(" in ax.get_ylabel() or "fraction" in ax.get_ylabel(), f"{name}: no unit on y"
        out = save(fig, tmp_path / name)
        assert out.suffix == ".png" and out.stat().st_size > 10_000
    tl = figs["tl"].axes[0]
    assert {t.get_text() for t in tl.texts} >= {"QD1", "QD128"}
    labels = tl.get_legend_handles_labels()[1]
    assert "random write" in labels and any("spec point QD 1 x 4 jobs" in lab for lab in labels)
    assert len(figs["pct"].axes) == 2  # one panel per pattern


# ---------------------------------------------------------------------------------------- params


def _quick(experiment: str, **over) -> dict:
    p = load_profile("quick", experiment)
    p.update(over)
    return p


@pytest.mark.parametrize("experiment, key, value, allowed", [
    (_fio_params.BLOCK_SIZE, "bs", ["0"], "size > 0"),
    (_fio_params.BLOCK_SIZE, "bs", ["-4k"], "size > 0"),
    (_fio_params.BLOCK_SIZE, "bs", ["four"], "size > 0"),
    (_fio_params.BLOCK_SIZE, "bs", [], "at least one"),
    (_fio_params.BLOCK_SIZE, "bs", ["1000"], "multiple of 512"),
    (_fio_params.BLOCK_SIZE, "bs", ["1g"], "larger than file_size"),
    (_fio_params.BLOCK_SIZE, "rw", ["randrw"], "randread, randwrite"),
    (_fio_params.BLOCK_SIZE, "iodepth", 0, "integer 1.."),
    (_fio_params.BLOCK_SIZE, "runtime_s", 0, "seconds > 0"),
    (_fio_params.BLOCK_SIZE, "ramp_s", -1, "seconds >= 0"),
    (_fio_params.BLOCK_SIZE, "ioengine", "spdk", "io_uring, libaio"),
    (_fio_params.BLOCK_SIZE, "direct", 2, "integer 0..1"),
    (_fio_params.BLOCK_SIZE, "file_size", "big", "size > 0"),
    (_fio_params.RW_RATIO, "rwmixread", [101], "integer 0..100"),
    (_fio_params.RW_RATIO, "rwmixread", [-1], "integer 0..100"),
    (_fio_params.RW_RATIO, "rwmixread", [True], "integer 0..100"),
    (_fio_params.QUEUE_DEPTH, "iodepth", [1, 0], "integer 1.."),
    (_fio_params.QUEUE_DEPTH, "iodepth", [2.5], "integer 1.."),
    (_fio_params.QUEUE_DEPTH, "numjobs", 0, "integer 1.."),
    (_fio_params.QUEUE_DEPTH, "repetitions", 0, "integer 1.."),
    (_fio_params.QUEUE_DEPTH, "bs", ["4k", "8k"], "one block size"),
])
def test_bad_params_are_refused_before_anything_runs(tmp_path, experiment, key, value, allowed):
    with pytest.raises(UsageError) as exc:
        run_experiment(experiment, _quick(experiment, **{key: value}), data_root=tmp_path / "data",
                       host="t", progress=False)
    msg = str(exc.value)
    assert "\n" not in msg and f"parameter {key}=" in msg and allowed in msg
    assert not (tmp_path / "data" / "raw").exists() and not (tmp_path / "data" / "scratch").exists()


def test_unknown_and_missing_keys_are_refused():
    p = _quick(_fio_params.QUEUE_DEPTH, qd=4)
    with pytest.raises(UsageError, match="unknown parameter 'qd'"):
        queue_depth.queue_depth_params(p)
    p = _quick(_fio_params.RW_RATIO)
    del p["rwmixread"]
    with pytest.raises(UsageError, match="missing parameter 'rwmixread'"):
        rw_ratio.rw_ratio_params(p)


@pytest.mark.parametrize("experiment", [_fio_params.BLOCK_SIZE, _fio_params.RW_RATIO, _fio_params.QUEUE_DEPTH])
def test_profiles_validate_and_points_differ_between_profiles(experiment):
    fn = {_fio_params.BLOCK_SIZE: (block_size.block_size_params, block_size.block_size_configs),
          _fio_params.RW_RATIO: (rw_ratio.rw_ratio_params, rw_ratio.rw_ratio_configs),
          _fio_params.QUEUE_DEPTH: (queue_depth.queue_depth_params, queue_depth.queue_depth_configs)}[experiment]
    names = {}
    for profile in ("quick", "standard", "full"):
        v = fn[0](load_profile(profile, experiment))
        pts = _fio_points.make_points(fn[1](v, "io_uring"), v.common.repetitions, "/x/f")
        assert len({p.name for p in pts}) == len(pts)
        for p in pts:
            assert p.est_s == pytest.approx(p.params["runtime_s"] + p.params["ramp_s"] + _fio_points.OVERHEAD_S
                                            + 0.1 * p.params["numjobs"])
        names[profile] = {p.name for p in pts}
    assert not names["quick"] & names["standard"] and not names["standard"] & names["full"]


def test_standard_matrices_match_the_issue():
    bs = block_size.block_size_configs(block_size.block_size_params(load_profile("standard", _fio_params.BLOCK_SIZE)), "e")
    assert len(bs) == 8 * 2 + 2 * 2
    assert {(c["rw"], c["bs"]) for c in bs if c["rw"] in ("read", "write")} == {
        ("read", "128k"), ("read", "1m"), ("write", "128k"), ("write", "1m")}
    rw = rw_ratio.rw_ratio_configs(rw_ratio.rw_ratio_params(load_profile("standard", _fio_params.RW_RATIO)), "e")
    assert sorted({c["rwmixread"] for c in rw}) == [0, 30, 50, 70, 100] and {c["bs"] for c in rw} == {"4k", "32k"}
    qd = queue_depth.queue_depth_configs(queue_depth.queue_depth_params(load_profile("standard", _fio_params.QUEUE_DEPTH)), "e")
    spec = [c for c in qd if c["spec_point"]]
    assert len(qd) == 11 * 2 + 2 and max(c["iodepth"] for c in qd) == 1024
    assert {(c["rw"], c["iodepth"], c["numjobs"]) for c in spec} == {("randread", 32, 4), ("randwrite", 32, 4)}


# ------------------------------------------------------------------------------ real tiny sweeps


TINY = {"runtime_s": 1, "ramp_s": 0, "file_size": "16m", "repetitions": 1}


def _meta_state(raw: Path) -> dict:
    return {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in sorted(raw.glob("*.meta.json"))}


@needs_fio
@pytest.mark.fio
def test_block_size_sweep_real_fio_and_resume(tmp_path):
    params = _quick(_fio_params.BLOCK_SIZE, **TINY, bs=["4k", "64k"], rw=["randread"], seq_bs=["64k"], iodepth=4)
    df = run_experiment(_fio_params.BLOCK_SIZE, params, data_root=tmp_path, host="t", progress=False)
    csv = tmp_path / "processed" / "t" / "fio-block-size.csv"
    back = pd.read_csv(csv)
    assert list(back.columns) == _fio_rows.COLUMNS and len(back) == len(df) == 4
    assert set(df["status"]) == {"done"} and set(df["rw"]) == {"randread", "read", "write"}
    assert (df["iops"] > 0).all()
    assert np.allclose(df["bw_MBps"], df["iops"] * df["bs_bytes"] / 1e6, rtol=0.02)  # decimal MB/s
    assert set(df["pattern"]) == {"random", "sequential"}
    assert (df["source"].str.startswith("raw/t/fio-block-size/")).all()
    assert all((tmp_path / s).is_file() for s in df["source"])
    raw = tmp_path / "raw" / "t" / "fio-block-size"
    before = _meta_state(raw)
    assert len(before) == 4
    df2 = run_experiment(_fio_params.BLOCK_SIZE, params, data_root=tmp_path, host="t", progress=False)
    assert _meta_state(raw) == before  # nothing measured again
    manifest = json.loads((raw / "manifest.json").read_text())
    assert {p["status"] for p in manifest["points"]} == {"done"}  # left as it was: nothing measured
    pd.testing.assert_frame_equal(df.reset_index(drop=True), df2.reset_index(drop=True))


@needs_fio
@pytest.mark.fio
def test_rw_ratio_sweep_real_fio(tmp_path):
    params = _quick(_fio_params.RW_RATIO, **TINY, rwmixread=[100, 50], bs=["4k"], iodepth=4)
    df = run_experiment(_fio_params.RW_RATIO, params, data_root=tmp_path, host="t", progress=False)
    assert len(df) == 3 and set(df["direction"]) == {"read", "write"}
    assert list(df.loc[df["rwmixread"] == 100, "direction"]) == ["read"]  # no write row at 100% reads
    r50 = df[df["rwmixread"] == 50].set_index("direction")
    assert r50.loc["read", "iops"] > 0 and r50.loc["write", "iops"] > 0
    share = r50.loc["read", "total_ios"] / (r50.loc["read", "total_ios"] + r50.loc["write", "total_ios"])
    assert share == pytest.approx(0.5, abs=0.05)
    tot = with_totals(observations(df))
    assert (tot["direction"] == "total").sum() == 2


@needs_fio
@pytest.mark.fio
def test_queue_depth_sweep_real_fio_littles_law_and_spec_point(tmp_path):
    params = _quick(_fio_params.QUEUE_DEPTH, **TINY, rw=["randread"], iodepth=[1, 8], spec_iodepth=4,
                    spec_numjobs=2)
    df = run_experiment(_fio_params.QUEUE_DEPTH, params, data_root=tmp_path, host="t", progress=False)
    assert len(df) == 3 and set(df["status"]) == {"done"}
    assert storage.describe_run(df).startswith("3 points (3 configurations x up to 1 repetitions), 0 failed")
    spec = df[df["spec_point"]]
    assert len(spec) == 1 and spec.iloc[0]["outstanding_io"] == 8 and spec.iloc[0]["numjobs"] == 2
    assert df["iodepth_reached"].all()
    t = storage.littles_law_table(df)
    assert len(t) == 3
    # within 5%, or flagged with the reason (the CPU is shared while tests run)
    assert ((t["residual_pct"].abs() <= 5) | (t["flagged"] & (t["reason"] != ""))).all()
    cdfs = storage.qd_cdfs(df, tmp_path)
    assert set(cdfs["iodepth"]) <= {1, 8} and 1 in set(cdfs["iodepth"])
    assert cdfs.groupby("label")["cdf"].max().round(6).eq(1).all()


@needs_fio
@pytest.mark.fio
def test_psync_depth_not_reached_is_flagged(tmp_path):
    params = _quick(_fio_params.QUEUE_DEPTH, **TINY, rw=["randread"], iodepth=[8], spec_iodepth=0,
                    ioengine="psync")
    df = run_experiment(_fio_params.QUEUE_DEPTH, params, data_root=tmp_path, host="t", progress=False)
    assert df.iloc[0]["ioengine"] == "psync" and not df.iloc[0]["iodepth_reached"]
    r = storage.littles_law_table(df).iloc[0]
    assert r["flagged"] and "psync is synchronous" in r["reason"]
    assert r["littles_outstanding"] == pytest.approx(1, abs=0.1)  # one I/O in flight, not 8


def test_a_value_outside_its_own_interval_gets_no_error_bar_instead_of_a_negative_one():
    """A standard make all failed in notebook 40: matplotlib refuses negative error bars, and a point whose
    interval left out a window its value kept (20,010 IOPS with [20,541, 21,199]) produced one."""
    g = pd.DataFrame({"iops": [20_010.0, 100.0, 50.0], "iops_ci_low": [20_541.0, 90.0, np.nan],
                      "iops_ci_high": [21_199.0, 110.0, np.nan]})
    err = _err(g, "iops")
    assert err.tolist() == [[0.0, 10.0, 0.0], [0.0, 10.0, 0.0]]
