"""SNIA PTS composite block-size workload (fio-pts-cbw) and demand intensity / response-time histogram
(fio-pts-dirth): FioJob's bssplit and random_distribution against the real fio, the parameters, the pure
tables (memstor.analysis.pts_demand), and real runs through the `memstor` CLI on a test file and a loop device:
DIRTH's optimal point recomputed from the written table, CBW's block sizes and hot bands counted in fio's iolog
of the same run, the standard profile's skip, and both notebooks under papermill."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import tempfile
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest
import yaml

from memstor.analysis import pts_demand
from memstor.core import fiohist
from memstor.core.errors import UsageError
from memstor.core.units import parse_size
from memstor.experiments import _fio_rows, _pts_matrix, fio_pts_cbw, fio_pts_dirth, load_profile
from memstor.measure.fio import FioJob, bssplit_error, distribution_error, fio_command, job_file_text
from memstor.measure.fio_engine import fio_binary
from memstor.parse.fio_logs import read_iolog
from notebook_helpers import KERNEL, run_notebook
from reliability_helpers import TRACEBACK, run_cli

ROOT = Path(__file__).resolve().parents[1]
FIO = shutil.which("fio")
needs_fio = pytest.mark.skipif(FIO is None, reason="fio is not installed (make env installs it)")
HOST = "pts"
MiB = 1 << 20

#: The iolog check: block-size, band and read shares within 2 percentage points of the PTS mix. One share p
#: estimated from n independent I/Os has a 95 % half-width of 1.96 sqrt(p (1 - p) / n): 2 pp for every p needs
#: n >= 1.96^2 x 0.25 / 0.02^2 = 2,401 (p = 0.5, the worst case). The test asks for 10,000 I/Os: 2 pp is then
#: 4 standard errors of the worst share (p = 0.5: sigma 0.5 pp), so each of the ~16 shares checked fails by
#: chance with probability 6e-5 (all together < 1e-3), not 5 %.
TOLERANCE_PP, MIN_IOS = 2.0, 10_000


# ------------------------------------------------------------------------------ FioJob's two options

ACCEPTED_BSSPLIT = [fio_pts_cbw.PTS_BSSPLIT, "4k/100", "4k/50:8k/50,16k/100", "4k/100,8k/100,512/100", "1m/100"]
REFUSED_BSSPLIT = {  # value: what the one-line message says (fio-3.33 takes the first five silently)
    "4k/50:8k/40": "add up to 90", "4k/50:8k/60": "add up to 110", "4q/50:8k/50": "size/% entries",
    "4k/50.5:8k/49.5": "whole %", "4k/50:4k/50": "appears twice", "1000/100": "multiples of 512",
    "128m/100": "at most the file size", "4k": "size/% entries", "4k/100,8k/100,1m/100,2m/100": "up to three",
}
ACCEPTED_DISTRIBUTIONS = ["random", "zipf:1.2", "zipf:1.2:0.5", "pareto:0.5", "normal:5", "normal:0",
                          fio_pts_cbw.PTS_ZONES, "zoned:100/100", "zoned_abs:50/4m:50/60m"]
REFUSED_DISTRIBUTIONS = {  # value: True when fio refuses it too, False when it runs something else silently,
    # None when that depends on the release (per-direction zones: 3.33 and 3.36 refuse them, 3.28 and 3.42 run them)
    "zipf:1": True, "pareto:1": True, "normal:100": True, "gauss:5": True, "zoned:50/5:30/15:10/80": True,
    "zoned:50/5:30/15:20/80,100/100": None, "zoned:50/5:30/15:20/70": False, "zoned_abs:50/4m:50/100m": False,
    "zipf:0": False,
}


def job(**over) -> FioJob:
    return FioJob(**{"name": "j", "rw": "randrw", "rwmixread": 40, "size": "64m", "filename": "/tmp/x", **over})


@pytest.mark.fio  # FioJob.validate asks the real fio for its engines (fio --enghelp)
def test_fiojob_passes_bssplit_and_random_distribution_only_when_set(tmp_path):
    plain = fio_command(job(), tmp_path / "o.json")
    assert not [a for a in plain if a.startswith(("--bssplit", "--random_distribution"))]
    cmd = fio_command(job(bssplit=fio_pts_cbw.PTS_BSSPLIT, random_distribution=fio_pts_cbw.PTS_ZONES), tmp_path / "o")
    assert f"--bssplit={fio_pts_cbw.PTS_BSSPLIT}" in cmd and f"--random_distribution={fio_pts_cbw.PTS_ZONES}" in cmd
    text = job_file_text(job(bssplit="4k/100", random_distribution="zipf:1.2"), tmp_path / "o")
    assert "bssplit=4k/100\n" in text and "random_distribution=zipf:1.2\n" in text


@pytest.mark.fio  # FioJob.validate asks the real fio for its engines (fio --enghelp)
@pytest.mark.parametrize("value, says", list(REFUSED_BSSPLIT.items()))
def test_fiojob_refuses_a_bssplit_fio_would_misread_in_one_line(value, says):
    with pytest.raises(UsageError) as err:
        job(bssplit=value).validate()
    assert "\n" not in str(err.value) and "bssplit=" in str(err.value) and says in str(err.value)


@pytest.mark.fio  # FioJob.validate asks the real fio for its engines (fio --enghelp)
@pytest.mark.parametrize("value", list(REFUSED_DISTRIBUTIONS))
def test_fiojob_refuses_a_random_distribution_fio_refuses_or_misreads(value):
    with pytest.raises(UsageError) as err:
        job(random_distribution=value).validate()
    assert "\n" not in str(err.value) and "random_distribution=" in str(err.value)


@pytest.mark.fio  # FioJob.validate asks the real fio for its engines (fio --enghelp)
def test_a_random_distribution_needs_a_random_rw():
    with pytest.raises(UsageError, match="only with a random rw"):
        job(rw="read", rwmixread=None, random_distribution="zipf:1.2").validate()


def _fio(tmp_path: Path, *opts: str) -> subprocess.CompletedProcess:
    """The real fio, 50 ms of buffered random I/O on a 64 MiB file with ``opts``."""
    f = tmp_path / "f"
    if not f.exists():
        with open(f, "wb") as fh:
            fh.truncate(64 * MiB)
    return subprocess.run([fio_binary(), "--name=t", f"--filename={f}", "--size=64m", "--rw=randrw", "--ioengine=psync",
                           "--runtime=50ms", "--time_based", "--output-format=json", *opts],
                          capture_output=True, text=True, timeout=60)


@needs_fio
@pytest.mark.fio
def test_what_fiojob_accepts_the_real_fio_runs_and_what_it_refuses_fio_refuses_or_misreads(tmp_path):
    for value in ACCEPTED_BSSPLIT:
        assert bssplit_error(value, 64 * MiB, direct=False) is None
        res = _fio(tmp_path, f"--bssplit={value}")
        assert res.returncode == 0 and "fio:" not in res.stderr, (value, res.stderr)
    for value in ACCEPTED_DISTRIBUTIONS:
        assert distribution_error(value, 64 * MiB) is None
        res = _fio(tmp_path, f"--random_distribution={value}")
        assert res.returncode == 0 and "fio:" not in res.stderr + res.stdout.split("{")[0], (value, res.stderr)
    for value, fio_refuses in REFUSED_DISTRIBUTIONS.items():
        res = _fio(tmp_path, f"--random_distribution={value}")
        if fio_refuses is None:  # either way one clean outcome: it runs, or it says it cannot parse the value
            assert res.returncode == 0 or "failed parsing random_distribution" in res.stderr, (value, res.stderr)
        else:
            assert (res.returncode != 0) == fio_refuses, (value, res.returncode, res.stderr)
    for value in ("4k/50:8k/40", "4q/50:8k/50"):  # fio 3.28-3.42 run them without a word: FioJob refuses
        assert _fio(tmp_path, f"--bssplit={value}").returncode == 0


# --------------------------------------------------------------------------------------- parameters


def cbw(**over) -> dict:
    return load_profile("quick", fio_pts_cbw.EXPERIMENT, over)


def dirth(**over) -> dict:
    return load_profile("quick", fio_pts_dirth.EXPERIMENT, over)


@pytest.mark.parametrize("make, over, param", [
    (cbw, {"threads": [0, 1]}, "threads"), (cbw, {"qd": []}, "qd"), (cbw, {"rwmixread": 101}, "rwmixread"),
    (cbw, {"bssplit": "4k/50:8k/40"}, "bssplit"), (cbw, {"random_distribution": "zoned:50/5:50/90"},
                                                   "random_distribution"),
    (cbw, {"max_rounds": 3}, "max_rounds"), (cbw, {"iolog": True, "threads": [2, 4]}, "iolog"),
    (cbw, {"precondition_rwmixread": -1}, "precondition_rwmixread"), (cbw, {"threads": [1, 1]}, "threads"),
    (dirth, {"bs": "1000"}, "bs"), (dirth, {"response_time_ceiling_us": 0}, "response_time_ceiling_us"),
    (dirth, {"histogram_s": -1}, "histogram_s"), (dirth, {"histogram_s": 7200}, "histogram_s"),
    (dirth, {"numjobs": 4}, "numjobs"), (dirth, {"repetitions": 2}, "repetitions"),
])
def test_bad_parameters_are_refused_in_one_line_naming_the_parameter(make, over, param):
    params = make()
    params.update(over)
    fam = fio_pts_cbw if make is cbw else fio_pts_dirth
    with pytest.raises(UsageError) as err:
        fam.validate(params)
    assert "\n" not in str(err.value) and f"parameter {param}=" in str(err.value)


def test_the_profiles_quick_short_full_pts_standard_left_out_on_one_line():
    for fam in (fio_pts_cbw, fio_pts_dirth):
        full = fam.validate(load_profile("full", fam.EXPERIMENT))
        assert full.threads == full.qd == _pts_matrix.PTS_TQ and full.common.runtime_s == 60
        assert full.max_rounds == 25 and full.common.ramp_s == 0 and not [d for d in full.workload_departures if d]
        quick = fam.validate(load_profile("quick", fam.EXPERIMENT))
        assert quick.common.runtime_s <= 2 and len(quick.threads) * len(quick.qd) <= 6
        text = (ROOT / "params" / "standard.yaml").read_text()
        line = next(ln for ln in text.splitlines() if ln.startswith(f"{fam.EXPERIMENT}:"))
        assert yaml.safe_load(line) == {fam.EXPERIMENT: {"skip": "SNIA PTS test: PTS-length runs take hours; make "
                                        f"all PROFILE=full, or memstor run {fam.EXPERIMENT} --profile full"}}
    full = fio_pts_dirth.validate(load_profile("full", fio_pts_dirth.EXPERIMENT))
    assert full.histogram_s == 600 and full.ceiling_us == fio_pts_dirth.PTS_CEILING_US
    pts = fio_pts_cbw.validate(load_profile("full", fio_pts_cbw.EXPERIMENT))
    assert pts.workload.rwmixread == 40 and pts.steady.rw == "randwrite"
    assert (pts.workload.bssplit, pts.workload.random_distribution) == (fio_pts_cbw.PTS_BSSPLIT, fio_pts_cbw.PTS_ZONES)


def test_the_pts_block_size_mix_and_bands_are_the_published_numbers():
    sizes = {e.split("/")[0]: int(e.split("/")[1]) for e in fio_pts_cbw.PTS_BSSPLIT.split(":")}
    assert sizes == {"512": 4, "1k": 1, "1536": 1, "2k": 1, "2560": 1, "3k": 1, "3584": 1, "4k": 67, "8k": 10,
                     "16k": 7, "32k": 3, "64k": 3}
    assert fio_pts_cbw.PTS_ZONES == "zoned:50/5:30/15:20/80"


# ------------------------------------------------------------------------------ the tables (synthetic)


def synthetic(points: list[tuple], host: str = "h") -> pd.DataFrame:
    """An experiment table: (T, Q, [(direction, iops, lat_mean_us, total_ios)], phase, role) per point."""
    rows = []
    for t, q, dirs, phase, role in points:
        for d, iops, lat, n in dirs:
            rows.append({"host": host, "point": f"{phase[0]}-t{t}q{q}", "source": f"raw/{host}/{phase[0]}-t{t}q{q}.json",
                         "status": "done", "direction": d, "iops": iops, "bw_MBps": iops * 0.004, "lat_mean_us": lat,
                         "lat_max_us": 3 * lat, "total_ios": n, "threads": t, "qd": q, "total_oio": t * q,
                         "phase": phase, "role": role, "ceiling_us": 1000.0, "departure": "d"})
    return pd.DataFrame(rows)


MATRIX_POINTS = [(1, 1, [("read", 100, 200, 1000), ("write", 300, 400, 3000)], "matrix", None),
                 (1, 4, [("read", 400, 300, 4000), ("write", 600, 600, 6000)], "matrix", None),
                 (2, 4, [("read", 500, 900, 5000), ("write", 900, 1200, 9000)], "matrix", None),
                 (4, 4, [("read", 600, 1500, 6000), ("write", 900, 2500, 9000)], "matrix", None)]


def test_point_totals_add_the_directions_and_weight_the_mean_by_the_ios():
    tot = pts_demand.point_totals(synthetic(MATRIX_POINTS))
    first = tot.iloc[0]
    assert first["iops"] == 400 and first["MBps"] == pytest.approx(1.6)
    assert first["lat_mean_us"] == pytest.approx((200 * 1000 + 400 * 3000) / 4000) and first["lat_max_us"] == 1200
    assert pd.isna(first["p99_us"])  # no bins: not available, never 0


def test_roles_max_iops_min_and_the_optimal_point_under_the_ceiling():
    rows = synthetic(MATRIX_POINTS)
    d = pts_demand.dirth_table(rows)  # the run's own ceiling: 1000 us
    assert list(d.columns) == pts_demand.DIRTH_COLUMNS
    roles = dict(zip(d["role"], zip(d["threads"], d["qd"])))
    # means: T1Q1 350, T1Q4 480, T2Q4 1092.9 (over), T4Q4 2100 (over): optimal = T1Q4 (1000 IOPS); mid (the PTS's
    # MidIOPS): under the ceiling, IOPS nearest (1000 + 400) / 2 = 700: T1Q1 (400, 300 away) before T1Q4 (300 away)
    assert roles == {"mid, min": (1, 1), "optimal": (1, 4), "": (2, 4), "max IOPS": (4, 4)}
    assert set(pts_demand.dirth_table(rows, ceiling_us=100.0)["role"]) == {"min", "max IOPS", ""}  # none under
    wide = pts_demand.dirth_table(rows, ceiling_us=1500.0)  # T2Q4 under: optimal 1400 IOPS, mid nearest 900
    assert dict(zip(wide["role"], wide["qd"] * 10 + wide["threads"])) == {
        "min": 11, "mid": 41, "optimal": 42, "max IOPS": 44}
    both = pts_demand.dirth_table(rows, ceiling_us=10_000.0)
    assert both.loc[both["iops"].idxmax(), "role"] == "max IOPS, optimal"


def test_a_failed_point_takes_no_role():
    rows = synthetic(MATRIX_POINTS)
    rows.loc[rows["point"] == "m-t4q4", "status"] = "failed"
    d = pts_demand.dirth_table(rows, ceiling_us=10_000.0)
    assert d.loc[d["qd"].eq(4) & d["threads"].eq(4), "role"].iloc[0] == ""
    assert pd.isna(d.loc[d["threads"].eq(4), "iops"].iloc[0])
    assert d.loc[d["threads"].eq(2), "role"].iloc[0] == "max IOPS, optimal"


def _bins(source: str, values_ns: dict, kind: str = "lat", direction: str = "write") -> list[dict]:
    return [dict(zip(fiohist.BIN_COLUMNS, (source, "j", 0, direction, kind, ns, n))) for ns, n in values_ns.items()]


def test_percentiles_and_histograms_merge_both_directions_from_the_bins():
    rows = synthetic(MATRIX_POINTS)
    src = "raw/h/m-t1q1.json"
    bins = pd.DataFrame(_bins(src, {100_000: 90, 900_000: 10}, direction="read") + _bins(src, {200_000: 100})
                        + _bins(src, {5_000: 200}, kind="clat"), columns=list(fiohist.BIN_COLUMNS))
    tot = pts_demand.point_totals(rows, bins).set_index("point")
    merged = {100_000: 90, 200_000: 100, 900_000: 10}
    assert tot.at["m-t1q1", "p99_us"] == fiohist.percentiles(merged, [99.0])[99.0] / 1000 == 900.0
    h = pts_demand.histogram_rows(bins, src)
    assert list(h["latency_us"]) == [100.0, 200.0, 900.0] and list(h["count"]) == [90, 100, 10]
    assert h["share"].sum() == pytest.approx(1.0)


def test_dirth_histograms_take_the_capture_when_the_run_made_one():
    rows = synthetic(MATRIX_POINTS + [(4, 4, [("write", 1400, 2000, 9000)], "histogram", "max IOPS")])
    bins = pd.DataFrame(_bins("raw/h/m-t4q4.json", {1000: 5}) + _bins("raw/h/h-t4q4.json", {2000: 7})
                        + _bins("raw/h/m-t1q1.json", {3000: 9}), columns=list(fiohist.BIN_COLUMNS))
    d = pts_demand.dirth_table(rows)
    h = pts_demand.dirth_histograms(bins, d, rows)
    assert list(h.columns) == pts_demand.HISTOGRAM_COLUMNS
    by_role = {r: g for r, g in h.groupby("role")}
    # the optimal point (T1 Q4) has no bins here: no rows; mid is T1 Q1 here, the min point's histogram
    assert set(by_role) == {"max IOPS", "mid", "min"}
    assert by_role["mid"]["count"].tolist() == by_role["min"]["count"].tolist()
    assert list(by_role["max IOPS"]["capture"]) == ["histogram"] and by_role["max IOPS"]["latency_us"].iloc[0] == 2.0
    assert list(by_role["min"]["capture"]) == ["matrix"] and by_role["min"]["count"].iloc[0] == 9


def test_figures_draw_units_the_ceiling_and_the_optimal_point():
    from memstor.report.plots import pts_demand as plots

    d = pts_demand.dirth_table(synthetic(MATRIX_POINTS))
    fig = plots.demand_intensity_figure(d)
    ax = fig.axes[0]
    assert ax.get_xlabel() == plots.IOPS_LABEL and ax.get_ylabel() == plots.RT_LABEL
    assert {c.get_gid() for c in ax.collections} >= {"role:optimal", "role:max IOPS", "role:min"}
    assert any(abs(line.get_ydata()[0] - 1000) < 1e-9 for line in ax.get_lines() if line.get_gid() is None)
    oio = plots.oio_figure(d)
    assert [a.get_xlabel() for a in oio.axes[:2]] == [plots.OIO_LABEL] * 2
    assert plots.histograms_figure(pd.DataFrame(columns=pts_demand.HISTOGRAM_COLUMNS)) is None
    assert plots.demand_intensity_figure(d.iloc[0:0]) is None


# ------------------------------------------------------------------------------------- real fio runs


def run(experiment: str, data: Path, *sets: str, profile: str = "quick", target: Path | None = None):
    args = ["run", experiment, "--profile", profile, "--data", str(data), "--host", HOST]
    if target is not None:
        target.mkdir(parents=True, exist_ok=True)
        args += ["--target", str(target)]
    for s in sets:
        args += ["--set", s]
    return run_cli(*args, timeout=300)


def tables(data: Path, experiment: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    folder = data / "processed" / HOST
    return pd.read_csv(folder / f"{experiment}.csv"), pd.read_csv(folder / f"{experiment}-bins.csv")


def optimal_from(table: pd.DataFrame) -> tuple | None:
    """The optimal point recomputed from a dirth table's own columns, without memstor.analysis: the highest IOPS
    among the rows whose mean response time is under their ceiling."""
    under = table[table["lat_mean_us"] < table["ceiling_us"]]
    if under.empty:
        return None
    best = under.loc[under["iops"].idxmax()]
    return int(best["threads"]), int(best["qd"])


def roles_in(table: pd.DataFrame, role: str) -> list[tuple]:
    has = table["role"].fillna("").astype(str).map(lambda cell: role in cell.split(", "))
    return [(int(t), int(q)) for t, q in zip(table.loc[has, "threads"], table.loc[has, "qd"])]


DIRTH_SETS = ("threads=[1,2]", "qd=[1,4]", "runtime_s=1", "max_rounds=5", "histogram_s=1", "file_size=64m")


@needs_fio
@pytest.mark.fio
@pytest.mark.slow
def test_dirth_real_run_and_its_optimal_point_recomputed_from_the_written_table(tmp_path, quick_run):
    folder, res = quick_run(fio_pts_dirth)
    data = folder / "data"
    assert res.returncode == 0, res.stderr
    table, bins = tables(data, fio_pts_dirth.EXPERIMENT)
    assert list(table.columns) == _fio_rows.COLUMNS + _pts_matrix.EXTRA_COLUMNS
    assert (table["status"] == "done").all()
    steady, matrix = table[table["phase"] == "steady"], table[table["phase"] == "matrix"]
    assert (steady["threads"] == 2).all() and (steady["qd"] == 4).all() and 1 <= len(steady) <= 5
    assert (steady["rw"] == "randwrite").all() and (steady["direction"] == "write").all()  # PC: 100 % writes
    assert (matrix["rwmixread"] == fio_pts_dirth.PTS_RWMIXREAD).all() and (matrix["bs_bytes"] == 8192).all()
    assert sorted(set(matrix["direction"])) == ["read", "write"]  # RND 8 KiB 65:35 R/W
    assert sorted(set(zip(matrix["threads"], matrix["qd"]))) == [(1, 1), (1, 4), (2, 1), (2, 4)]
    assert len(matrix) == 8  # a read and a write row per point
    assert (table["total_oio"] == table["threads"] * table["qd"]).all() and (table["span"] == "file").all()
    assert (table["span_bytes"] == 64 * MiB).all() and (table["ceiling_us"] == 5000).all()
    assert table["departure"].str.startswith("quick: points 1 s instead of 60 s, T 1, 2 instead of").all()
    assert table["departure"].str.contains("test file span instead of the device").all()
    assert set(bins["kind"]) == {"clat", "lat"}  # lat_percentiles: the response-time histograms are there

    reports = tmp_path / "report" / "tables"
    reports.mkdir(parents=True)
    ceilings = [None] + sorted(matrix["lat_mean_us"]) + [0.5 * matrix["lat_mean_us"].min()]
    for i, ceiling in enumerate(ceilings):  # the run's own, one just at each point's mean (not under it), none
        pts_demand.dirth_table(table, ceiling, bins).to_csv(reports / f"dirth{i}.csv", index=False)
        written = pd.read_csv(reports / f"dirth{i}.csv")
        assert list(written.columns) == pts_demand.DIRTH_COLUMNS
        expected = optimal_from(written)
        assert roles_in(written, "optimal") == ([expected] if expected else []), ceiling
        assert roles_in(written, "max IOPS") == [tuple(written.loc[written["iops"].idxmax(), ["threads", "qd"]])]
        assert roles_in(written, "min") == [(1, 1)]
    d = pd.read_csv(reports / "dirth0.csv")
    assert d["p99_us"].notna().all() and (d["p99_us"] > 0).all()
    hist = pts_demand.dirth_histograms(bins, d, table)
    assert set(hist["capture"]) == {"histogram"} and set(hist["role"]) == {r for r in pts_demand.ROLES
                                                                              if roles_in(d, r)}
    assert np.allclose(hist.groupby("role")["share"].sum(), 1.0)
    again = run(fio_pts_dirth.EXPERIMENT, data, *DIRTH_SETS, target=folder / "t")
    assert again.returncode == 0 and "nothing is measured" in again.stderr and TRACEBACK not in again.stderr


@pytest.fixture
def tmpfs_dir():
    """A fresh folder in /dev/shm (tmpfs), removed afterwards."""
    if not Path("/dev/shm").is_dir():
        pytest.skip("needs /dev/shm (tmpfs)")
    folder = Path(tempfile.mkdtemp(prefix="memstor-pts-", dir="/dev/shm"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _shares(values: pd.Series) -> dict:
    return (100.0 * values.value_counts() / len(values)).to_dict()


@needs_fio
@pytest.mark.fio
@pytest.mark.slow
def test_cbw_block_sizes_hot_bands_and_reads_in_fios_iolog_are_the_pts_mix(tmp_path, tmpfs_dir):
    """One T1 Q16 CBW point with fio's iolog, on a test file in tmpfs (buffered): fio draws every I/O's size,
    direction and offset the same way on any file, and memory gives the 10,000 I/Os in a second, where this
    shared VM's disk gave 200 to 40,000 IOPS (measured: 1,558 I/Os in 2 s, buffered, on the disk)."""
    data = tmp_path / "data"
    res = run(fio_pts_cbw.EXPERIMENT, data, "threads=[1]", "qd=[16]", "runtime_s=1", "max_rounds=5", "direct=0",
              "iolog=true", "file_size=64m", target=tmpfs_dir)
    assert res.returncode == 0, res.stderr
    table, _ = tables(data, fio_pts_cbw.EXPERIMENT)
    point = table.loc[table["phase"] == "matrix", "point"].iloc[0]
    span = int(table["span_bytes"].iloc[0])
    log = read_iolog(data / "raw" / HOST / fio_pts_cbw.EXPERIMENT / f"{point}.files" / "fio.iolog")
    io = log[log["action"].isin(("read", "write"))]
    assert len(io) >= MIN_IOS, f"only {len(io)} I/Os in the iolog: the shares would not be a fair test"
    want_bs = {parse_size(e.split("/")[0]): float(e.split("/")[1]) for e in fio_pts_cbw.PTS_BSSPLIT.split(":")}
    got_bs = _shares(io["length_bytes"])
    assert set(got_bs) <= set(want_bs)  # no other size than the mix's (fio's norandommap: none cut short)
    for size, pct in want_bs.items():
        assert abs(got_bs.get(size, 0.0) - pct) <= TOLERANCE_PP, (size, got_bs.get(size), pct)
    edges = np.cumsum([0] + [int(z.split("/")[1]) for z in fio_pts_cbw.PTS_ZONES.split(":", 1)[1].split(":")])
    band = np.searchsorted(edges[1:-1] / 100 * span, io["offset_bytes"].to_numpy(), side="right")
    got_band = _shares(pd.Series(band))
    for i, pct in enumerate(int(z.split("/")[0]) for z in fio_pts_cbw.PTS_ZONES.split(":", 1)[1].split(":")):
        assert abs(got_band.get(i, 0.0) - pct) <= TOLERANCE_PP, (i, got_band.get(i), pct)
    assert abs(_shares(io["action"]).get("read", 0.0) - fio_pts_cbw.PTS_RWMIXREAD) <= TOLERANCE_PP
    assert (io["offset_bytes"] + io["length_bytes"] <= span).all()


CBW_SETS = ("threads=[1,2]", "qd=[1,4]", "runtime_s=1", "max_rounds=5", "file_size=64m")
#: The real quick runs (a 64 MiB test file) that the CLI tests check and the notebook tests re-analyse.
QUICK_RUN = {fio_pts_dirth: DIRTH_SETS, fio_pts_cbw: CBW_SETS}


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """``quick_run(fam)``: (folder, the `memstor run` result) of the family's real run (QUICK_RUN; data under
    folder/data, the test file in folder/t), measured once in this module: the CLI test checks it, and the
    notebook test re-analyses a copy of its data, as `make all` does (memstor run measures, then the notebook finds
    every point measured). Before, the notebook test measured the same parameters again (~25 s each here)."""
    done: dict = {}

    def measured(fam) -> tuple[Path, subprocess.CompletedProcess]:
        if fam not in done:
            folder = tmp_path_factory.mktemp(fam.EXPERIMENT)
            done[fam] = folder, run(fam.EXPERIMENT, folder / "data", *QUICK_RUN[fam], target=folder / "t")
        return done[fam]

    return measured


@needs_fio
@pytest.mark.fio
@pytest.mark.slow
def test_cbw_real_run_tables_hold_the_pts_quantities(quick_run):
    folder, res = quick_run(fio_pts_cbw)
    data = folder / "data"
    assert res.returncode == 0, res.stderr
    table, bins = tables(data, fio_pts_cbw.EXPERIMENT)
    assert list(table.columns) == fio_pts_cbw.TABLE_COLUMNS and (table["status"] == "done").all()
    steady, matrix = table[table["phase"] == "steady"], table[table["phase"] == "matrix"]
    assert (steady["rw"] == "randwrite").all() and (steady["direction"] == "write").all()  # 100 % writes
    assert (matrix["rw"] == "randrw").all() and sorted(set(matrix["direction"])) == ["read", "write"]
    assert (matrix["rwmixread"] == 40).all() and table["bs_bytes"].isna().all()  # a mix has no one block size
    assert (table["bssplit"] == fio_pts_cbw.PTS_BSSPLIT).all()
    assert (table["random_distribution"] == fio_pts_cbw.PTS_ZONES).all()
    assert (table["config"] == table["point"]).all()  # every point a state of its own, never pooled
    cbw_t = pts_demand.cbw_table(table, bins)
    assert list(cbw_t.columns) == pts_demand.CBW_COLUMNS and len(cbw_t) == 4
    for _, row in cbw_t.iterrows():
        rows = matrix[matrix["point"] == Path(row["source"]).stem]
        assert row["iops"] == pytest.approx(rows["iops"].sum())
        assert row["MBps"] == pytest.approx(rows["bw_MBps"].sum())
        assert row["lat_max_us"] == rows["lat_max_us"].max() and row["p99_us"] <= row["p99_99_us"]
        assert min(rows["lat_mean_us"]) <= row["lat_mean_us"] <= max(rows["lat_mean_us"])
    hist = pts_demand.cbw_histograms(bins, cbw_t)
    assert list(hist.columns) == pts_demand.CBW_HISTOGRAM_COLUMNS and np.allclose(
        hist.groupby("source")["share"].sum(), 1.0)


@needs_fio
@pytest.mark.fio
@pytest.mark.slow
def test_dirth_on_a_loop_device_named_twice_spans_the_whole_device(tmp_path, loop_device):
    loop = loop_device(32 * MiB)
    data = tmp_path / "data"
    res = run(fio_pts_dirth.EXPERIMENT, data, "threads=[1]", "qd=[1,4]", "runtime_s=1", "max_rounds=5",
              "histogram_s=0", "file_size=8m", "ioengine=libaio", f"device={loop}", f"confirm_device={loop}")
    assert res.returncode == 0, res.stderr
    table, _ = tables(data, fio_pts_dirth.EXPERIMENT)
    assert (table["status"] == "done").all() and (table["span"] == "full_device").all()
    assert (table["span_bytes"] == 32 * MiB).all() and (table["file_size_bytes"] == 32 * MiB).all()
    assert not table["departure"].str.contains("test file").any()
    assert table.loc[table["phase"] == "matrix", "departure"].str.contains("histograms from the 1 s matrix").all()
    meta = json.loads((data / "raw" / HOST / fio_pts_dirth.EXPERIMENT / f"{table['point'].iloc[-1]}.meta.json")
                      .read_text())
    assert f"--filename={loop}" in meta["command"] and f"--size={32 * MiB}" in meta["command"]


@pytest.mark.fio
@pytest.mark.parametrize("experiment", [fio_pts_cbw.EXPERIMENT, fio_pts_dirth.EXPERIMENT])
def test_the_standard_profile_leaves_them_out_exit_2_with_the_reason_on_one_line(tmp_path, experiment):
    res = run_cli("run", experiment, "--profile", "standard", "--data", str(tmp_path / "data"), timeout=120)
    assert res.returncode == 2 and TRACEBACK not in res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and f"leaves {experiment} out (SNIA PTS test: PTS-length runs take hours" in lines[0]
    assert not (tmp_path / "data" / "raw").exists()


@pytest.mark.fio
@pytest.mark.parametrize("experiment, setting, param", [
    (fio_pts_cbw.EXPERIMENT, "bssplit=4k/50:8k/40", "bssplit"), (fio_pts_dirth.EXPERIMENT, "qd=[0]", "qd")])
def test_a_bad_value_through_the_cli_is_one_line_and_exit_2(tmp_path, experiment, setting, param):
    res = run(experiment, tmp_path / "data", setting)
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1 and TRACEBACK not in res.stderr
    assert f"{experiment}: parameter {param}=" in lines[0]
    assert not (tmp_path / "data" / "raw").exists()


# ------------------------------------------------------------------------------------------ notebooks


@pytest.mark.parametrize("fam", [fio_pts_cbw, fio_pts_dirth])
def test_the_notebooks_are_thin_committed_clean_with_the_full_profiles_keys(fam):
    nb = nbformat.read(ROOT / "notebooks" / f"{fam.NOTEBOOK}.ipynb", as_version=4)
    assert nb.metadata["kernelspec"]["name"] == KERNEL
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.outputs and c.execution_count is None for c in code)
    (cell,) = [c for c in code if "parameters" in c.metadata.get("tags", [])]
    for key in ("profile: str", "data_dir: str", "target_dir: str", "host: str", "figures_dir: str"):
        assert key in cell.source
    for key in load_profile("full", fam.EXPERIMENT):
        if key != "profile":
            line = next((ln for ln in cell.source.splitlines() if ln.startswith(f"{key}: ")), None)
            assert line is not None and "#" in line, key
    assert f'run_experiment("{fam.EXPERIMENT}"' in "".join(c.source for c in code)
    assert any("## Departures from the PTS" in c.source for c in nb.cells if c.cell_type == "markdown")


@needs_fio
@pytest.mark.notebook
@pytest.mark.fio
@pytest.mark.slow
@pytest.mark.parametrize("fam, extra", [(fio_pts_cbw, {}), (fio_pts_dirth, {"histogram_s": 1})])
def test_the_notebooks_run_under_papermill_with_the_quick_profile(tmp_path, fam, extra, quick_run):
    """The notebook with the parameters of the module's real run (quick_run) on a copy of its data: it finds every
    point measured and re-analyses them, as under `make all`."""
    folder, res = quick_run(fam)
    assert res.returncode == 0, res.stderr
    shutil.copytree(folder / "data", tmp_path / "data")
    outputs = run_notebook(fam.NOTEBOOK, tmp_path / "out.ipynb", {
        "profile": "quick", "data_dir": str(tmp_path / "data"), "target_dir": str(folder / "t"), "host": HOST,
        "runtime_s": 1, "threads": [1, 2], "qd": [1, 4], "max_rounds": 5, "file_size": "64m",
        "figures_dir": str(tmp_path / "fig"), **extra})
    assert len([o for o in outputs if "image/png" in o.get("data", {})]) >= 3
    assert len(list((tmp_path / "fig").glob(f"{fam.EXPERIMENT}-*.png"))) == 3
    assert "nothing is measured" in "".join(o.get("text", "") for o in outputs)  # the module's run, re-read
    table = pd.read_csv(tmp_path / "data" / "processed" / HOST / f"{fam.EXPERIMENT}.csv")
    assert (table["status"] == "done").all() and table["departure"].str.contains(": points 1 s instead of 60 s").all()
    assert math.isfinite(table["iops"].sum())


def test_report_text_of_cbw_and_dirth_tables():
    from memstor.report import text

    dirth = pd.DataFrame({"host": "h", "threads": [1, 2, 4], "qd": [1, 2, 4], "total_oio": [1, 4, 16],
                          "iops": [5000.0, 20000.0, 30000.0], "lat_mean_us": [190.0, 200.0, 530.0],
                          "p99_us": [400.0, 500.0, 2000.0], "role": ["min", "optimal", "max IOPS"],
                          "departure": "quick", "ceiling_us": 300.0, "source": "x"})
    shown = text.dirth_display(dirth.assign(role=["min", "", "max IOPS, optimal"]))
    assert shown["role"].tolist() == ["min", "max IOPS, optimal"] and "device" not in shown
    cbw = dirth.drop(columns=["role", "ceiling_us"]).assign(MBps=[40.0, 80.0, 120.0], lat_max_us=1e4,
                                                             p99_99_us=5e3)
    c = text.cbw_display(cbw)
    assert c["OIO"].tolist() == ["1", "4", "16"] and c["max (µs)"].iloc[0] == "10,000"
    assert text.cbw_display(None).empty and text.dirth_display(None).empty
    none = text.dirth_display(dirth.assign(role=""))  # S14-loop 2: every role withheld shows every point
    assert none["role"].tolist() == ["none stated"] * 3 and none["IOPS"].tolist() == ["5,000", "20,000", "30,000"]


@needs_fio
@pytest.mark.fio
@pytest.mark.slow
def test_cbw_on_a_loop_device_named_twice_spans_the_whole_device(tmp_path, loop_device):
    """Issue 30, acceptance 1: each PTS family under quick on a loop device."""
    loop = loop_device(32 * MiB)
    data = tmp_path / "data"
    res = run(fio_pts_cbw.EXPERIMENT, data, "threads=[1]", "qd=[1,4]", "runtime_s=1", "max_rounds=5",
              "file_size=8m", "ioengine=libaio", f"device={loop}", f"confirm_device={loop}")
    assert res.returncode == 0, res.stderr
    table, bins = tables(data, fio_pts_cbw.EXPERIMENT)
    assert (table["status"] == "done").all() and (table["span"] == "full_device").all()
    assert (table["span_bytes"] == 32 * MiB).all() and not table["departure"].str.contains("test file").any()
    assert len(pts_demand.cbw_table(table, bins)) == 2
    meta = json.loads((data / "raw" / HOST / fio_pts_cbw.EXPERIMENT / f"{table['point'].iloc[-1]}.meta.json")
                      .read_text())
    assert f"--filename={loop}" in meta["command"] and any(a.startswith("--bssplit=") for a in meta["command"])
