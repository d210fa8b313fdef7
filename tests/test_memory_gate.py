"""Quality gates, re-measurements, repetitions and pacing of the memory experiment (issue 16, parts 2-3):
memstor.measure.loadlat's gate, memstor.parse.loadlat_json, and memstor.experiments.mlc_loaded_latency's
choose_attempts / remeasure_points / measure / build_table, on synthetic figures and on real loadlat runs,
including the live test of acceptance 4: a CPU-burning competitor pinned to the load CPU halfway through a
point trips the gate and the point is re-measured into a new raw file (or marked when it never passes).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from conftest import two_allowed_cpus
from memstor.analysis import memory
from memstor.core.errors import MemstorError, UsageError
from memstor.experiments import mlc_loaded_latency as ll
from memstor.measure import loadlat as L
from memstor.measure import mlc
from memstor.measure.sweep import Point, raw_dir
from memstor.parse import loadlat_json as lj

EXP = ll.EXPERIMENT
STANDIN_DIR = Path(__file__).resolve().parent / "data" / "mlc-standin"
TWO_CPUS = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2,
                              reason="needs 2 CPUs in the affinity mask (a latency thread and a load thread on their "
                                     "own CPUs)")


@pytest.fixture(scope="module")
def loadlat_bin(tmp_path_factory) -> Path:
    """The real loadlat: build/bin/loadlat when built from the current sources, else compiled into a temp folder."""
    try:
        exe = Path(L.binary())
        if tuple(int(x) for x in str(L.version(exe)).split(".")[:2]) >= (0, 3):  # sub-windows: v0.3 and later
            return exe
    except MemstorError:
        pass
    return Path(L.build(output=tmp_path_factory.mktemp("loadlat") / "loadlat"))


# --------------------------------------------------------------------------------------- the gate


def fig(**kw) -> dict:
    f = {"windows": 5, "bandwidth_spread_pct": 1.0, "latency_spread_pct": 0.5, "cpu_share_min_pct": 99.0,
         "steal_pct": 0.0}
    f.update(kw)
    return f


@pytest.mark.parametrize("change, codes", [
    ({}, []),
    ({"bandwidth_spread_pct": 4.99}, []),
    ({"bandwidth_spread_pct": 5.0}, ["bandwidth_unstable"]),
    ({"latency_spread_pct": 2.5}, ["latency_unstable"]),
    ({"cpu_share_min_pct": 89.9}, ["cpu_share"]),
    ({"cpu_share_min_pct": 90.0}, []),
    ({"steal_pct": 2.0}, []),
    ({"steal_pct": 3.0}, ["steal"]),
    ({"bandwidth_spread_pct": math.nan}, ["bandwidth_unstable"]),  # a sub-window lost its value
    ({"bandwidth_spread_pct": None, "steal_pct": None}, []),       # not measured: not judged (idle, no /proc/stat)
    ({"latency_spread_pct": 9.0, "cpu_share_min_pct": 50.0}, ["latency_unstable", "cpu_share"]),
])
def test_gate_thresholds(change, codes):
    reasons = L.gate_reasons(fig(**change))
    assert [c for c, _ in reasons] == codes
    assert L.gate_text(reasons) == ("passed" if not codes else "failed:" + ",".join(codes))
    assert all(c in L.GATE_CODES for c in codes) and all("\n" not in t for _, t in reasons)


def sidecar(mode: str = "loaded_latency", **point) -> dict:
    """A loadlat v0.3 JSON document with one point."""
    p = {"status": "ok", "traffic": "R", "delay": 1000, "latency_thread_cpu_share": 0.99,
         "load_threads_cpu_share_min": 0.95, "steal_pct": 1.0, "arrival_cv": 0.93,
         "threads": [{"role": "latency", "cpu": 0, "cpu_share": 0.99}, {"role": "load", "cpu": 1, "cpu_share": 0.8}],
         "windows": [{"latency_ns": 100.0, "bandwidth_MBps": 200.0}, {"latency_ns": 104.0, "bandwidth_MBps": 190.0},
                     {"latency_ns": 102.0, "bandwidth_MBps": 210.0}]}
    p.update(point)
    return {"mode": mode, "pacing": "exp", "latency_cpu": None if mode == "peak_injection_bandwidth" else 0,
            "points": [p]}


def test_point_figures_from_the_sidecar():
    doc = sidecar()
    f = lj.point_figures(doc, doc["points"][0])
    assert f["pacing"] == "exp" and f["windows"] == 3 and f["arrival_cv"] == 0.93 and f["steal_pct"] == 1.0
    assert f["bandwidth_spread_pct"] == pytest.approx(100 * 20 / 200)
    assert f["latency_spread_pct"] == pytest.approx(100 * 4 / 102)
    assert f["cpu_share_min_pct"] == pytest.approx(80.0)  # the least of every thread's share
    lost = sidecar(windows=[{"latency_ns": 100.0, "bandwidth_MBps": None}, {"latency_ns": 100.0, "bandwidth_MBps": 5.0}])
    assert math.isnan(lj.point_figures(lost, lost["points"][0])["bandwidth_spread_pct"])
    idle = sidecar("idle_latency")
    assert lj.point_figures(idle, idle["points"][0])["bandwidth_spread_pct"] is None
    peak = sidecar("peak_injection_bandwidth", traffic="W5")
    assert lj.point_figures(peak, peak["points"][0])["latency_spread_pct"] is None
    assert list(lj.figures_by_point(peak)) == [("peak_injection_bandwidth", "W5", None)]
    # loadlat 0.2 wrote no sub-windows: nothing to judge but the two shares
    old = {"mode": "loaded_latency", "points": [{"status": "ok", "delay": 0, "latency_thread_cpu_share": 0.97,
                                                 "load_threads_cpu_share_min": 0.93}]}
    f = lj.figures_by_point(old)[("loaded_latency", None, 0)]
    assert f["windows"] is None and f["bandwidth_spread_pct"] is None and f["cpu_share_min_pct"] == pytest.approx(93)
    assert lj.figures_by_point(None) == {} and lj.figures_by_point({"mode": "?"}) == {}


# ------------------------------------------------------------------------ attempts and re-measurement


def row(delay, attempt=1, bw=100.0, tool="loadlat", rep=1, config="cfg", **kw) -> dict:
    r = {"status": "done", "tool": tool, "test": "loaded_latency", "traffic": "read-only", "inject_delay": delay,
         "bandwidth_MBps": bw, "latency_ns": 100.0, "config": config, "repetition": rep, "attempt": attempt,
         "attempts": 1, "point": f"{config}-a{attempt}", "windows": 5 if tool == "loadlat" else None,
         "bandwidth_spread_pct": 1.0, "latency_spread_pct": 0.5, "cpu_share_min_pct": 99.0, "steal_pct": 0.0}
    r.update(kw)
    return r


def by_delay(rows) -> dict:
    return {r["inject_delay"]: r for r in rows}


def test_choose_attempts_uses_the_latest_passing_attempt_and_marks_the_rest():
    rows = [row(0, 1, bw=1000, cpu_share_min_pct=60.0), row(0, 2, bw=1100),                  # re-measured, passed
            row(100, 1, bw=500, latency_spread_pct=9.0), row(100, 2, bw=510, latency_spread_pct=7.0),  # never passes
            row(1000, 1, bw=50)]
    out = by_delay(ll.choose_attempts(rows))
    assert out[0]["attempt"] == 2 and out[0]["attempts"] == 2 and out[0]["gate"] == "passed"
    assert out[0]["bandwidth_MBps"] == 1100
    assert "attempt 1: failed:cpu_share" in out[0]["gate_detail"] and "attempt 2: passed" in out[0]["gate_detail"]
    assert out[100]["attempt"] == 2 and out[100]["gate"] == "failed:latency_unstable"
    assert "latency spread 7.0 %" in out[100]["gate_detail"]
    assert out[1000]["gate"] == "passed" and out[1000]["attempts"] == 1 and out[1000]["gate_detail"] is None
    # a passing earlier attempt wins over a later failing one
    out = by_delay(ll.choose_attempts([row(0, 1, bw=1000), row(0, 2, bw=400, steal_pct=5.0)]))
    assert out[0]["attempt"] == 1 and out[0]["gate"] == "passed" and out[0]["attempts"] == 2


def test_bandwidth_rising_with_delay_fails_the_larger_delay():
    out = by_delay(ll.choose_attempts([row(0, bw=1000), row(100, bw=1060), row(1000, bw=100), row(2000, bw=104)]))
    assert out[100]["gate"] == "failed:bandwidth_rises_with_delay"
    assert "6.0 % above 1000.0 MB/s at the smaller delay 0" in out[100]["gate_detail"]
    assert out[0]["gate"] == out[1000]["gate"] == out[2000]["gate"] == "passed"  # +4 % is within 5 %
    # repetitions and configurations are separate curves
    out = ll.choose_attempts([row(0, bw=1000, rep=1), row(100, bw=1500, rep=2), row(100, bw=1500, config="other")])
    assert {r["gate"] for r in out} == {"passed"}


def test_mlc_and_old_loadlat_rows_are_not_evaluated_and_failed_points_pass_through():
    out = ll.choose_attempts([row(0, tool="mlc", bw=10), row(100, tool="mlc", bw=100),
                              row(0, config="old", windows=None),
                              {"status": "failed", "config": "x", "repetition": 1, "attempt": 1, "gate": None}])
    gates = [(r["config"], r.get("inject_delay"), r["gate"]) for r in out]
    assert ("cfg", 0, "not_evaluated:mlc") in gates and ("cfg", 100, "not_evaluated:mlc") in gates  # no rise check
    assert ("old", 0, "not_evaluated:no_sub_windows") in gates and ("x", None, None) in gates
    assert "Intel MLC reports no sub-windows" in next(r for r in out if r["gate"] == "not_evaluated:mlc")["gate_detail"]


def loaded_point(delays=(0, 100, 1000), **kw) -> Point:
    p = ll.validate_params({"tool": "loadlat", "traffic": ["R"], "access_bytes": [64], "delays": list(delays),
                            "seconds_per_point": 1, "buffer_kib": 4096, "huge_pages": False, **kw})
    (pt,) = [pt for pt in ll.build_points(p, "loadlat", huge=False) if pt.params["mode"] == "loaded_latency"]
    return pt


@pytest.mark.usefixtures("faked_machine")
def test_remeasure_points_new_point_for_the_failing_delays_until_the_limit():
    pt = loaded_point()
    cfg = ll.config_name(pt.params)
    assert cfg == pt.name
    rows = [row(0, bw=1000, config=cfg, point=pt.name), row(100, bw=1200, config=cfg, point=pt.name),  # rises
            row(1000, bw=100, config=cfg, point=pt.name, cpu_share_min_pct=70.0)]
    (again,) = ll.remeasure_points([pt], rows, max_remeasure=2)
    assert again.params["delays"] == [0, 100, 1000]  # the rise re-measures both neighbours; the measuring order
    assert again.params["attempt"] == 2 and again.params["config"] == cfg and ll.config_name(again.params) == cfg
    assert "_a2_" in again.name and again.name != pt.name and again.name.startswith("loaded-latency_R_l64_")
    assert mlc.point_args(again.params, "d.txt")[-1] == "-gd.txt"
    # attempt 2 fixed delay 0 and 100, delay 1000 still fails: attempt 3 for delay 1000 alone (-d)
    rows2 = rows + [row(0, 2, bw=1000, config=cfg, point=again.name), row(100, 2, bw=990, config=cfg, point=again.name),
                    row(1000, 2, bw=100, config=cfg, point=again.name, cpu_share_min_pct=70.0)]
    (third,) = ll.remeasure_points([pt, again], rows2, max_remeasure=2)
    assert third.params["delays"] == [1000] and third.params["attempt"] == 3
    assert mlc.point_args(third.params)[-1] == "-d1000"
    rows3 = rows2 + [row(1000, 3, bw=100, config=cfg, point=third.name, cpu_share_min_pct=70.0)]
    assert ll.remeasure_points([pt, again, third], rows3, max_remeasure=2) == []  # limit reached: kept, marked
    assert ll.remeasure_points([pt], rows, max_remeasure=0) == []
    # the same data give the same points (a resumed sweep finds their raw files)
    assert [p.name for p in ll.remeasure_points([pt], rows, max_remeasure=2)] == [again.name]


@pytest.mark.usefixtures("faked_machine")
def test_a_spread_every_value_fails_is_the_machine_and_is_not_remeasured():
    """The standard make all on this VM failed 180 of 190 values on 'latency_unstable' (median spread 7 %
    against 2 %), re-measured 13 of 17 points for 7 minutes and failed them again: a reason that
    MACHINE_SHARE of the values share is not re-measured; a transient one (CPU share) still is."""
    pt = loaded_point(delays=(0, 100, 200, 500, 1000))
    cfg = ll.config_name(pt.params)
    noisy = [row(d, bw=1000 - d / 2, config=cfg, point=pt.name, latency_spread_pct=7.0) for d in (0, 100, 200, 500, 1000)]
    assert ll.machine_codes(ll.choose_attempts(noisy)) == {"loaded_latency": {"latency_unstable"}}
    assert ll.remeasure_points([pt], noisy, max_remeasure=2) == []
    # the same spread plus one CPU-starved value: only that value is measured again
    starved = [*noisy[:4], row(1000, bw=500, config=cfg, point=pt.name, latency_spread_pct=7.0, cpu_share_min_pct=60.0)]
    (again,) = ll.remeasure_points([pt], starved, max_remeasure=2)
    assert again.params["delays"] == [1000]
    # one noisy value among five quiet ones is a neighbour's burst: re-measured
    quiet = [row(d, bw=1000 - d / 2, config=cfg, point=pt.name) for d in (0, 100, 200, 500)]
    burst = [*quiet, row(1000, bw=500, config=cfg, point=pt.name, latency_spread_pct=7.0)]
    assert ll.machine_codes(ll.choose_attempts(burst)) == {"loaded_latency": set()}
    (again,) = ll.remeasure_points([pt], burst, max_remeasure=2)
    assert again.params["delays"] == [1000]


# ---------------------------------------------------------------------- parameters, names, MLC


@pytest.mark.usefixtures("faked_machine")
@pytest.mark.parametrize("change, pattern", [
    ({"pacing": ["fixed", "poisson"]}, r"parameter pacing='poisson' is invalid: use fixed .* and/or exp"),
    ({"pacing": ["exp", "EXP"]}, r"parameter pacing='exp' is invalid: it appears twice"),
    ({"pacing": []}, r"parameter pacing=\[\] is invalid: give at least one value"),
    ({"repetitions": 0}, r"parameter repetitions=0 is invalid: use an integer 1..100"),
    ({"repetitions": 2.5}, r"parameter repetitions=2.5 is invalid"),
    ({"max_remeasure": -1}, r"parameter max_remeasure=-1 is invalid: use an integer 0..10"),
    ({"max_remeasure": "many"}, r"parameter max_remeasure='many' is invalid"),
])
def test_bad_new_parameters_name_the_parameter(change, pattern):
    with pytest.raises(UsageError, match=pattern) as err:
        ll.validate_params({"tool": "loadlat", **change})
    assert "\n" not in str(err.value) and "fix params/<profile>.yaml" in str(err.value)


@pytest.fixture
def standin(monkeypatch, tmp_path) -> Path:
    """Intel MLC's stand-in first on PATH (replays recorded MLC output); its calls are logged."""
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("PATH", f"{STANDIN_DIR}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("MLC_STANDIN_LOG", str(log))
    for var in ("MLC_STANDIN_FAIL", "MLC_STANDIN_REPLAY", "MLC_STANDIN_RC"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(mlc, "hugetlb_free_bytes", lambda *a, **k: 1 << 40)
    return log


@pytest.mark.usefixtures("faked_machine")
def test_exp_pacing_with_mlc_is_refused_in_one_line_before_anything_runs(standin, tmp_path):
    with pytest.raises(UsageError) as err:
        ll.run_loaded_latency({"tool": "mlc", "pacing": ["fixed", "exp"], "delays": [0, 100]},
                              data_root=tmp_path / "d", host="h", progress=False)
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("mlc-loaded-latency: parameter pacing=['fixed', 'exp'] is invalid")
    assert "Intel MLC paces its load threads only with a fixed delay loop" in msg
    assert "use pacing: [fixed], or tool: loadlat" in msg
    assert not standin.exists() and not (tmp_path / "d").exists()


@pytest.mark.usefixtures("faked_machine")
def test_auto_with_exp_pacing_picks_loadlat_even_where_mlc_is_installed(standin, tmp_path, monkeypatch):
    asked = []

    def resolve(tool, mlc_path=""):
        asked.append(tool)
        raise UsageError("stop here")

    monkeypatch.setattr(mlc, "resolve_tool", resolve)
    for pacing, want in ((["fixed", "exp"], "loadlat"), (["fixed"], "auto")):
        with pytest.raises(UsageError, match="stop here"):
            ll.run_loaded_latency({"tool": "auto", "pacing": pacing}, data_root=tmp_path, host="h", progress=False)
        assert asked[-1] == want


@pytest.mark.usefixtures("faked_machine")
def test_point_names_pacing_and_repetitions():
    base = {"tool": "loadlat", "traffic": ["R"], "access_bytes": [64], "delays": [0, 100], "buffer_kib": 4096}
    old = [pt.name for pt in ll.build_points(ll.validate_params(base), "loadlat", huge=True)]
    same = [pt.name for pt in ll.build_points(ll.validate_params(
        {**base, "pacing": ["fixed"], "repetitions": 1, "max_remeasure": 2}), "loadlat", huge=True)]
    assert same == old  # fixed pacing, one run: the names (and raw files) of earlier memstor versions
    pts = ll.build_points(ll.validate_params({**base, "pacing": ["fixed", "exp"], "repetitions": 2}), "loadlat",
                          huge=True)
    names = [pt.name for pt in pts]
    assert len(names) == len(set(names)) == 2 * 5  # (idle x2, peak, loaded fixed, loaded exp) x 2 repetitions
    assert names[:5] == [*old, names[4]] and "_seq_exp_" in names[4] and pts[4].params["pacing"] == "exp"
    assert all("_r2_" in n for n in names[5:]) and [pt.params["repetition"] for pt in pts[5:]] == [2] * 5
    assert [ll.config_name(pt.params) for pt in pts[5:]] == names[:5]  # repetitions share their config
    assert mlc.point_args(pts[4].params, "d.txt")[-1] == "--pacing=exp"
    assert "--pacing=exp" not in mlc.point_args(pts[3].params, "d.txt")


@pytest.mark.fio
@pytest.mark.loadlat
@pytest.mark.usefixtures("faked_machine")
def test_mlc_rows_say_the_gate_was_not_evaluated_and_nothing_is_remeasured(standin, tmp_path):
    df = ll.run_loaded_latency({"tool": "mlc", "traffic": ["R"], "access_bytes": [64], "delays": [0, 100, 1000, 20000],
                                "seconds_per_point": 1, "buffer_kib": 65536, "max_remeasure": 2, "repetitions": 2},
                               data_root=tmp_path / "d", host="h", progress=False)
    assert (df["status"] == "done").all() and set(df["gate"]) == {"not_evaluated:mlc"}
    assert (df["attempt"] == 1).all() and set(df["repetition"]) == {1, 2}
    loaded = df[df["test"] == "loaded_latency"]
    assert set(loaded["pacing"]) == {"fixed"} and df.loc[df["test"] != "loaded_latency", "pacing"].isna().all()
    assert loaded.groupby(["config", "inject_delay"]).size().eq(2).all()
    assert "_a2_" not in " ".join(json.dumps(p) for p in
                                  json.loads((raw_dir(tmp_path / "d", "h", EXP) / "manifest.json").read_text())["points"])


# ----------------------------------------------------------------------------------- real loadlat


@TWO_CPUS
@pytest.mark.fio
@pytest.mark.loadlat
def test_repetitions_and_pacings_give_one_row_per_run_with_their_identity(tmp_path, loadlat_bin, monkeypatch):
    monkeypatch.setenv("LOADLAT", str(loadlat_bin))
    lat_cpu, load_cpu = two_allowed_cpus()
    params = {"tool": "loadlat", "traffic": ["R"], "access_bytes": [64], "delays": [0, 1000],
              "seconds_per_point": 0.3, "buffer_kib": 16384, "huge_pages": False, "pacing": ["fixed", "exp"],
              "repetitions": 2, "max_remeasure": 0, "latency_cpu": lat_cpu, "load_cpus": str(load_cpu)}
    df = ll.run_loaded_latency(params, data_root=tmp_path / "d", host="h", progress=False)
    assert (df["status"] == "done").all() and (df["attempt"] == 1).all() and (df["attempts"] == 1).all()
    assert df["gate"].map(lambda g: g == "passed" or g.startswith("failed:")).all()
    assert (df["windows"] == 5).all()
    loaded = df[df["test"] == "loaded_latency"]
    assert len(loaded) == 2 * 2 * 2  # pacings x delays x repetitions
    reps = loaded.groupby(["config", "inject_delay"])["repetition"].apply(lambda r: sorted(r.tolist()))
    assert all(r == [1, 2] for r in reps)
    assert loaded.groupby("config")["pacing"].nunique().eq(1).all() and set(loaded["pacing"]) == {"fixed", "exp"}
    assert loaded["point"].nunique() == 4 and loaded["config"].nunique() == 2  # 4 raw files, 2 configurations
    raw = raw_dir(tmp_path / "d", "h", EXP)
    assert all((raw / f"{p}.txt").is_file() for p in loaded["point"].unique())
    # Each row's pacing is the one it ran with: Poisson-like arrivals under exp (CV near 1), far more regular
    # under fixed (delay 1000). Judged on the calmer fixed run against exp on the same machine, as in
    # test_loadlat_pacing: a shared VM's descheduling spreads fixed arrivals (CI 2026-11: fixed median CV 0.45,
    # exp 1.10; here over a day fixed 0.08-0.48, exp 0.97-1.16; on 2026-11-27 fixed 0.72-0.76 at 99 % CPU share
    # with this loadlat and with b28c5b7's alike), so an absolute "fixed < 0.4" is a calm-machine figure only,
    # and fixed is judged against 0.8 x exp (an exponential draw under fixed would still fail it).
    cv = loaded[loaded["inject_delay"] == 1000].groupby("pacing")["arrival_cv"]
    print(f"arrival_cv at delay 1000: {cv.apply(list).to_dict()}")
    assert cv.min()["exp"] > 0.7 and cv.min()["fixed"] < 0.8 * cv.median()["exp"]
    for col in ("cpu_share_min_pct", "steal_pct"):
        assert loaded[col].notna().all() and (loaded[col] >= 0).all(), col
    for col, code in (("bandwidth_spread_pct", "bandwidth_unstable"), ("latency_spread_pct", "latency_unstable")):
        assert (loaded[col].dropna() >= 0).all()
        lost = loaded[loaded[col].isna()]  # a thread was descheduled across a whole (60 ms) sub-window
        assert lost["gate"].str.contains(code).all(), lost[["gate", "gate_detail"]]
    # the rows feed the one summary path: n = 2 per point of the fixed curve, with a 95 % interval
    fixed = df[(df["test"] != "loaded_latency") | (df["pacing"] == "fixed")]
    curves = memory.curve_table(fixed)
    assert len(curves) == 2 and (curves["n"] == 2).all() and curves["latency_ns_ci_low"].notna().all()
    assert (curves["ci_method"] == "repetitions").all()
    # 0.3 s points: loadlat's 5 sub-windows of 60 ms, too few for a point's own interval
    assert (df["ci_method"] == "").all() and df[ll.CI_COLUMNS[:4]].isna().all().all()
    assert df["ci_note"].map(lambda t: "too few batches (5 sub-windows < 10)" in t or "lost sub-window" in t).all()
    table = pd.read_csv(tmp_path / "d" / "processed" / "h" / f"{EXP}.csv")
    assert list(table.columns[-len(ll.SETTING_COLUMNS):]) == ll.SETTING_COLUMNS
    assert set(ll.GATE_COLUMNS) <= set(table.columns)


def _burn_halfway(raw: Path, point: str, load_cpu: int, warmup_s: float, into_s: float, log: dict) -> None:
    """Watch for the point's temp raw file to show loadlat's table heading (printed right before the first
    point's warm-up), wait the warm-up plus `into_s` seconds of the measured window, then start a busy loop
    pinned to `load_cpu` and stop it when the point's raw file is complete (or after 5 s)."""
    tmp, done = raw / f"{point}.txt.tmp", raw / f"{point}.txt"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if "==========================" in tmp.read_text(errors="replace"):
                break
        except OSError:
            pass
        time.sleep(0.01)
    else:
        log["error"] = "loadlat never printed its table heading"
        return
    time.sleep(warmup_s + into_s)
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    log["pid"] = burner.pid
    try:
        os.sched_setaffinity(burner.pid, {load_cpu})
        log["started"] = time.monotonic()
        stop = time.monotonic() + 5
        while time.monotonic() < stop and not done.exists():
            time.sleep(0.01)
    finally:
        burner.kill()
        burner.wait()
        log["stopped"] = time.monotonic()


@TWO_CPUS
@pytest.mark.loadlat
def test_cpu_burner_on_the_load_cpu_halfway_trips_the_gate_and_the_point_is_remeasured(tmp_path, loadlat_bin):
    """Acceptance 4. One 2 s point at delay 1000; ~1 s into its measured window a busy loop pinned to the
    load CPU takes about half of that CPU: the load thread's CPU share falls in the later sub-windows, the
    point fails cpu_share (and its bandwidth varies), and it is measured again into a new raw file."""
    cpus = sorted(os.sched_getaffinity(0))
    lat_cpu, load_cpu = cpus[0], cpus[1]
    params = ll.validate_params({"tool": "loadlat", "traffic": ["R"], "access_bytes": [64], "delays": [1000],
                                 "seconds_per_point": 2, "buffer_kib": 65536, "huge_pages": False,
                                 "latency_cpu": lat_cpu, "load_cpus": str(load_cpu), "max_remeasure": 1})
    points = [pt for pt in ll.build_points(params, "loadlat", huge=False) if pt.params["mode"] == "loaded_latency"]
    data = tmp_path / "d"
    raw = raw_dir(data, "h", EXP)
    log: dict = {}
    watcher = threading.Thread(target=_burn_halfway, args=(raw, points[0].name, load_cpu, 0.5, 1.0, log), daemon=True)
    watcher.start()
    try:
        results = ll.measure(points, "loadlat", str(loadlat_bin), data_root=data, host="h", max_remeasure=1,
                             progress=False)
    finally:
        watcher.join(30)
        if "pid" in log and "stopped" not in log:  # never leave our busy loop behind
            os.kill(log["pid"], 9)
    assert "error" not in log and "started" in log, log

    # attempt 1: the competitor shows in its sub-windows and trips the gate
    meta1 = json.loads((raw / f"{points[0].name}.meta.json").read_text())
    doc = meta1["loadlat_json"]
    (p1,) = doc["points"]
    shares = [w["cpu_share_min"] for w in p1["windows"]]
    print(f"attempt 1: sub-window CPU shares {[round(s, 2) for s in shares]}, bandwidth "
          f"{[round(w['bandwidth_MBps'] or 0) for w in p1['windows']]} MB/s")
    assert len(shares) == L.sub_windows(2) == 20  # memstor asks for 0.1 s sub-windows
    assert max(shares[len(shares) * 3 // 5:]) < 0.8, shares  # from ~1.2 s on the busy loop had half of the load CPU
    codes = [c for c, _ in L.gate_reasons(lj.point_figures(doc, p1))]
    assert "cpu_share" in codes and "bandwidth_unstable" in codes, codes
    rows1 = ll.point_rows(next(r for r in results if r.point.name == points[0].name), data, "h")
    (marked,) = ll.choose_attempts(rows1)  # without a re-measurement it would be kept and marked
    assert marked["gate"].startswith("failed:") and "cpu_share" in marked["gate"]

    # the re-measurement: a new point, a new raw file; the first one is kept as it was
    again = [r for r in results if r.point.name != points[0].name]
    assert len(again) == 1 and again[0].status in ("done", "cached") and "_a2_" in again[0].point.name
    assert again[0].point.params["attempt"] == 2 and again[0].point.params["delays"] == [1000]
    assert (raw / f"{points[0].name}.txt").is_file() and (raw / f"{again[0].point.name}.txt").is_file()
    manifest = json.loads((raw / "manifest.json").read_text())
    assert [p["name"] for p in manifest["points"]] == [points[0].name, again[0].point.name]

    # the table: one row, from attempt 2, passed or marked failed, saying what happened to attempt 1
    df = ll.build_table(results, data, "h")
    (r,) = df.to_dict("records")
    assert r["attempt"] == 2 and r["attempts"] == 2 and r["point"] == again[0].point.name
    assert r["gate"] == "passed" or r["gate"].startswith("failed:")
    assert "attempt 1: failed:" in r["gate_detail"] and "cpu_share" in r["gate_detail"].split("attempt 2")[0]
    print(f"attempt 2: gate {r['gate']} ({r['gate_detail']})")
