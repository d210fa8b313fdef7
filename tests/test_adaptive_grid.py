"""The adaptive queue-depth grid (issue 18 part 3, ``iodepth: auto``): the pure rule of
memstor.analysis.adaptive_grid on synthetic curves (a clean closed-queue curve, a noisy one, one that never
saturates), its parameters, and with the real fio on a small file: every measured point in the table with its
reason, the spec-conditions point kept, a rerun on measured data measuring nothing and deciding the same; the
figure marks and the report table."""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from memstor.analysis import adaptive_grid as ag
from memstor.core.errors import UsageError
from memstor.experiments import _fio_points, _fio_target, load_profile
from memstor.experiments import fio_queue_depth as qd

needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (make env installs it)")
FIXED = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]  # the standard profile's grid


@functools.cache
def closed_curve(z_us: float, d_us: float, n_max: int = 1024) -> dict:
    """Exact mean-value analysis of a closed queue: a delay centre (z_us, the device's parallel part) and one
    queueing centre (demand d_us, the bottleneck): {N: (IOPS, mean latency µs)}. X_max = 1e6 / d_us, R(1) =
    z_us + d_us, so Little's-law knee N* = X_max · R(1) = (z_us + d_us) / d_us."""
    out, q = {}, 0.0
    for n in range(1, n_max + 1):
        rq = d_us * (1.0 + q)
        r = z_us + rq
        x = n / r
        q = x * rq
        out[n] = (x * 1e6, r)
    return out


def simulate(measure, **kw) -> tuple[dict, dict, ag.Step, int]:
    """Run the rule to its end on `measure(depth) -> (iops, lat_us)`: ({depth: (iops, lat)}, {depth: reason},
    the final Step, rounds)."""
    pts, notes, rounds = {}, {}, 0
    while True:
        step = ag.next_depths([(d, *v) for d, v in pts.items()], **kw)
        if step.done:
            return pts, notes, step, rounds
        rounds += 1
        assert rounds < 200
        for d, why in step.depths:
            assert d not in pts, f"depth {d} asked twice"
            pts[d], notes[d] = measure(d), why


# ------------------------------------------------------------------------------------ the pure rule


def test_clean_curve_doubles_to_the_plateau_then_fills_around_the_knee():
    curve = closed_curve(90.0, 10.0)  # X_max 100,000 IOPS, R(1) 100 µs: N* = 10
    pts, notes, step, rounds = simulate(curve.__getitem__, max_points=14)
    depths = sorted(pts)
    assert depths[:4] == [1, 2, 4, 8] and {16, 32, 64} <= set(depths) and max(depths) == 64
    assert notes[1] == ag.START and notes[2] == "doubling from 1"
    assert notes[4] == "doubling from 2 (2 gained +98.0 % over 1)"
    assert notes[64].startswith("plateau check: 32 gained +1.1 % over 16 (< 3 %)")
    assert step.plateau_from == 16 and step.n_star == pytest.approx(10.0, rel=0.01)
    assert "plateau from depth 16" in step.done and "within 10 % in IOPS and mean latency" in step.done
    knee = [d for d in depths if ag.is_knee_point(notes[d])]
    assert knee and all(8 < d < 16 for d in knee)  # between the two doubling depths around N* = 10
    assert notes[11] == "between 8 and 16 around the knee N* = 10.0: IOPS differ 39 %, mean latency 44 %"
    # done means: neighbours between 8 and 16 within 10 %, or whole depths apart
    inside = [d for d in depths if 8 <= d <= 16]
    for a, b in zip(inside, inside[1:]):
        close = ag.pct_diff(pts[a][0], pts[b][0]) < 10 and ag.pct_diff(pts[a][1], pts[b][1]) < 10
        assert close or b - a == 1, (a, b)
    assert len(pts) <= 14
    best = max(x for x, _ in pts.values())
    assert best >= 0.97 * max(curve[d][0] for d in FIXED)
    # several knee points per round: fewer rounds than points
    assert rounds < len(pts)


def test_the_rule_is_a_function_of_the_points_alone():
    curve = closed_curve(90.0, 10.0)
    pts = [(d, *curve[d]) for d in (1, 2, 4, 8, 16, 32, 64, 11)]
    assert ag.next_depths(pts) == ag.next_depths(list(reversed(pts)))  # order does not matter
    # a failed point (no IOPS) is not a point: the rule asks for it again
    assert ag.next_depths([(1, *curve[1]), (2, None, None)]).depths == ((2, "doubling from 1"),)


def test_noisy_curve_stays_within_budget_and_finds_the_best_within_3_pct():
    curve = closed_curve(90.0, 10.0)
    best_fixed = max(curve[d][0] for d in FIXED)
    hits = 0
    for seed in range(60):
        rng = np.random.default_rng(seed)

        def noisy(d, rng=rng):
            e = 1.0 + 0.02 * rng.standard_normal()  # 2 % run-to-run noise on IOPS (latency by Little's law)
            return curve[d][0] * e, curve[d][1] / e

        pts, notes, step, _ = simulate(noisy)
        assert len(pts) <= ag.doubling_grid_points(1024) and step.done
        assert all(notes[d] for d in pts)
        top = max(pts, key=lambda d: pts[d][0])
        hits += curve[top][0] >= 0.97 * best_fixed  # the depth chosen is really near the best
    assert hits >= 55  # a false plateau by noise (two doublings < 3 % by chance) is rare at 2 % noise


def test_a_dip_and_its_recovery_are_not_a_gain():
    # measured on this VM (4k randread, 2 s): IOPS creep up to depth 64, dip at 128 and partly recover at 256
    iops = {1: 14_804, 2: 33_159, 4: 41_564, 8: 50_942, 16: 63_870, 32: 78_673, 64: 88_330, 128: 80_391,
            256: 85_074, 512: 93_874}
    pts = [(d, x, d / x * 1e6) for d, x in iops.items() if d <= 256]
    step = ag.next_depths(pts, max_points=9)
    assert step.plateau_from == 64  # 128 and 256 both gained < 3 % over 64 (the best below them)
    ch_note = ag.next_depths([p for p in pts if p[0] <= 128]).depths[0][1]
    assert ch_note == "plateau check: 128 gained -9.0 % over 64 (< 3 %), one more doubling to confirm"


def test_a_curve_that_never_saturates_stops_at_the_depth_limit_or_the_budget():
    def linear(d):
        return d * 10_000.0, 100.0  # every I/O in parallel: IOPS grows with depth, latency flat

    pts, notes, step, _ = simulate(linear, max_iodepth=64)
    assert sorted(pts) == [1, 2, 4, 8, 16, 32, 64]
    assert step.done.startswith("depth limit 64 reached without a plateau") and step.plateau_from is None
    assert not any(ag.is_knee_point(n) for n in notes.values())
    pts, _, step, _ = simulate(linear, max_points=5)
    assert sorted(pts) == [1, 2, 4, 8, 16]
    assert step.done.startswith("budget of 5 points reached before a plateau")


def test_by_default_the_knee_is_paid_by_the_doublings_the_plateau_saved():
    """Without max_points: one point fewer than the doubling grid to max_iodepth (10 for 1024, whose listed
    grid has 11), so the adaptive grid measures less than the standard profile's grid; the doublings are never
    cut by it (a late plateau is still confirmed, with no knee point left)."""
    assert [ag.doubling_grid_points(m) for m in (2, 64, 1000, 1024)] == [2, 7, 10, 11]
    assert ag.default_budget(1024) == 10 and ag.most_points(None, 1024) == 11 and ag.most_points(6, 1024) == 6
    curve = closed_curve(90.0, 10.0)  # plateau from 16, confirmed at 64: 7 doublings, 3 knee points
    pts, notes, step, _ = simulate(curve.__getitem__)
    assert len(pts) == 10 < len(FIXED) and sum(ag.is_knee_point(n) for n in notes.values()) == 3
    assert step.done.endswith("budget of 10 points (one fewer than the doubling grid to 1024; max_points for more) "
                              "reached with neighbours between 8 and 16 still 10 % or more apart")
    assert max(x for x, _ in pts.values()) >= 0.97 * max(curve[d][0] for d in FIXED)
    late = closed_curve(90.0, 0.4)  # N* = 226: the plateau comes at 256, confirmed at 1024
    pts, notes, step, _ = simulate(late.__getitem__)
    assert sorted(pts) == FIXED and step.plateau_from is not None
    assert not any(ag.is_knee_point(n) for n in notes.values()) and "budget of 10 points" in step.done
    pts, _, step, _ = simulate(late.__getitem__, max_iodepth=64)  # a small depth limit: its own doubling grid
    assert sorted(pts) == [1, 2, 4, 8, 16, 32, 64] and step.done.startswith("depth limit 64 reached")


def test_the_budget_ends_the_knee_points_and_says_so():
    curve = closed_curve(90.0, 10.0)
    pts, notes, step, _ = simulate(curve.__getitem__, max_points=9)
    assert len(pts) == 9 and sum(ag.is_knee_point(n) for n in notes.values()) == 2
    assert "budget of 9 points reached" in step.done and "plateau from depth 16" in step.done
    # the first knee points are the ones nearest N* = 10
    assert {d for d in pts if ag.is_knee_point(notes[d])} <= {9, 10, 11, 12}


def test_a_knee_below_depth_2_adds_nothing_and_jobs_scale_the_knee_depth():
    flat = {d: (50_000.0, 20.0 * d) for d in (1, 2, 4, 8)}  # one server: saturated at depth 1
    pts, notes, step, _ = simulate(flat.__getitem__)
    assert sorted(pts) == [1, 2, 4] and step.plateau_from == 1 and step.n_star == pytest.approx(1.0)
    curve = closed_curve(90.0, 10.0)
    two_jobs = {d: curve[2 * d] for d in range(1, 513)}  # depth d x 2 jobs = 2d I/Os in flight
    pts, notes, step, _ = simulate(two_jobs.__getitem__, numjobs=2)
    knee = [d for d in pts if ag.is_knee_point(notes[d])]
    assert knee and all(4 < d < 8 for d in knee)  # N* = 2 x 10.1 / 2 jobs = depth 5 (was 10 I/Os with 1 job)
    assert "I/Os (depth" in notes[knee[0]] and "x 2 jobs" in notes[knee[0]]


def test_steps_of_the_reasons():
    assert ag.step_of(ag.START) == "start" and ag.step_of("doubling from 4 (2 -> 4 gained +40.0 %)") == "doubling"
    assert ag.step_of("plateau check: 8 -> 16 gained +1.0 % (< 3 %)") == "plateau check"
    assert ag.step_of("between 8 and 16 around the knee N* = 11.3: IOPS differ 23 %") == "knee"
    assert ag.step_of(None) == ag.step_of(float("nan")) == ag.step_of("") == ""
    assert ag.pct_diff(100, 110) == pytest.approx(10.0) and ag.pct_diff(110, 100) == pytest.approx(10.0)


# ------------------------------------------------------------------------------------ parameters


def test_iodepth_auto_and_its_keys_are_validated():
    p = load_profile("quick", qd.EXPERIMENT, {"iodepth": "auto"})  # --set iodepth=auto gives ["auto"]
    v = qd.validate(p)
    assert v.auto and v.iodepth == () and (v.max_points, v.max_iodepth) == (None, 1024)
    assert qd.validate(dict(p, iodepth="auto", max_points=8, max_iodepth=256)).max_points == 8
    assert load_profile("quick", qd.EXPERIMENT, {"iodepth": "auto", "max_points": 6})["max_points"] == 6
    for bad, key in ((dict(p, iodepth=["auto", 4]), "iodepth"), (dict(p, iodepth=[0]), "iodepth"),
                     (dict(p, max_points=2), "max_points"), (dict(p, max_points=1000), "max_points"),
                     (dict(p, max_iodepth=1), "max_iodepth"), (dict(p, max_iodepth="deep"), "max_iodepth")):
        with pytest.raises(UsageError, match=f"parameter {key}=.*(auto|adaptive grid)"):
            qd.validate(bad)
    listed = qd.validate(load_profile("quick", qd.EXPERIMENT))
    assert not listed.auto and listed.iodepth == (1, 4, 16, 64)
    assert all("grid_note" not in c for c in qd.queue_depth_configs(listed, "io_uring"))


def test_auto_configs_carry_their_reason_and_the_spec_point_stays():
    v = qd.validate(load_profile("quick", qd.EXPERIMENT, {"iodepth": "auto"}))
    start = qd.queue_depth_configs(v, "io_uring")
    assert [(c["rw"], c["iodepth"], c["grid_note"]) for c in start if not c["spec_point"]] == [
        ("randread", 1, ag.START), ("randwrite", 1, ag.START)]
    assert [(c["iodepth"], c["numjobs"]) for c in start if c["spec_point"]] == [(32, 4), (32, 4)]
    grid = {"randread": {1: ag.START, 2: "doubling from 1"}, "randwrite": {1: ag.START}}
    cfgs = qd.queue_depth_configs(v, "io_uring", grid)
    assert [c["iodepth"] for c in cfgs if c["rw"] == "randread" and not c["spec_point"]] == [1, 2]
    # the reason is not part of a point's identity: the same name as in a listed grid
    listed = qd.queue_depth_configs(qd.validate(load_profile("quick", qd.EXPERIMENT)), "io_uring")
    assert _fio_points.config_name(cfgs[0]) == _fio_points.config_name(listed[0]) and "grid_note" in _fio_points.INCIDENTAL


def test_the_plan_line_says_the_grid_is_adaptive_and_its_budget(tmp_path):
    from memstor.measure.progress import plan_line
    from memstor.measure.sweep import Point

    v = qd.validate(load_profile("quick", qd.EXPERIMENT, {"iodepth": "auto", "max_points": 8}))
    pts = [Point(name="a", est_s=4.0), Point(name="b", est_s=4.0)]
    note = qd.grid_plan_note(v, 3)
    line = plan_line(qd.EXPERIMENT, pts, {"a"}, tmp_path, None, note)
    every = plan_line(qd.EXPERIMENT, pts, {"a", "b"}, tmp_path, None, note)
    assert line.startswith("fio-queue-depth: measuring 1 of 2 points, about 4 s")
    assert "adaptive grid (iodepth: auto), round 3: more points may follow, at most 8 per pattern up to depth " \
           "1024 (16 runs, about 66 s at most)" in line
    assert "all 2 points already measured" in every and "adaptive grid" in every
    assert "adaptive" not in plan_line(qd.EXPERIMENT, pts, {"a"}, tmp_path, None)  # without the note


# ------------------------------------------------------------------------------------------ rounds


def _fake_family(curve: dict, failed=(), empty=()):
    """A stand-in for memstor.experiments._fio_run.run_family (no fio): the table of the configs it is given, from
    `curve`; depths in `failed` fail, depths in `empty` are done without IOPS. Records each call's depths."""
    calls = []

    def run_family(experiment, configs_fn, validated, **kw):
        cfgs = configs_fn(validated, "io_uring")
        calls.append([c["iodepth"] for c in cfgs if not c["spec_point"]])
        rows = []
        for c in cfgs:
            x, r = curve[c["iodepth"]] if not c["spec_point"] else (1.0, 1.0)
            bad, none = c["iodepth"] in failed, c["iodepth"] in empty
            rows.append({"rw": c["rw"], "iodepth": c["iodepth"], "spec_point": c["spec_point"],
                         "status": "failed" if bad else "done", "ioengine": "io_uring",
                         "iops": None if bad or none else x, "lat_mean_us": None if bad or none else r,
                         "grid_note": c.get("grid_note"), "config": _fio_points.config_name(c)})
        return pd.DataFrame(rows)

    return run_family, calls


def test_rounds_measure_what_the_rule_asks_and_stop_on_a_failed_or_empty_point(tmp_path, monkeypatch, capsys):
    curve = closed_curve(90.0, 10.0)
    v = qd.validate(_auto_params(rw=["randread", "randwrite"], max_points=14, max_iodepth=1024))
    fake, calls = _fake_family(curve)
    monkeypatch.setattr(qd._fio_run, "run_family", fake)
    df = qd.run_adaptive(v, data_root=tmp_path, target_dir=None, host="t", progress=False)
    pts, _, _, rounds = simulate(curve.__getitem__, max_points=14)
    for rw in ("randread", "randwrite"):  # each pattern: the depths the rule chose, in order, with its reasons
        assert sorted(df.loc[(df["rw"] == rw) & ~df["spec_point"], "iodepth"]) == sorted(pts)
    assert len(calls) == rounds and calls[0] == [1, 1]  # round 1: depth 1 of both patterns
    assert df["spec_point"].sum() == 2  # the spec-conditions point of each pattern, in every round

    fake, calls = _fake_family(curve, failed={4})
    monkeypatch.setattr(qd._fio_run, "run_family", fake)
    df = qd.run_adaptive(v, data_root=tmp_path, target_dir=None, host="t", progress=False)
    assert "the adaptive grid stops after round 3: a point failed" in capsys.readouterr().err
    assert len(calls) == 3 and (df["status"] == "failed").sum() == 2  # the run ends with the failed points in it

    fake, calls = _fake_family(curve, empty={2})
    monkeypatch.setattr(qd._fio_run, "run_family", fake)
    qd.run_adaptive(v, data_root=tmp_path, target_dir=None, host="t", progress=True)
    err = capsys.readouterr().err
    assert len(calls) == 2  # no endless loop on a point the rule cannot use
    assert "adaptive grid, randread: depths 1, 2: stopped: depth 2 was measured without IOPS" in err


# ----------------------------------------------------------------------------------- real fio


def _auto_params(**kw) -> dict:
    p = load_profile("quick", qd.EXPERIMENT, {"iodepth": "auto"})
    p.update(runtime_s=0.5, ramp_s=0, file_size="64m", rw=["randread"], spec_iodepth=2, spec_numjobs=2,
             max_points=6, max_iodepth=32)
    p.update(kw)
    return p


def _metas(raw: Path) -> dict:
    return {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in sorted(raw.glob("*.meta.json"))}


@needs_fio
@pytest.mark.fio
def test_real_fio_auto_grid_measures_every_point_once_and_a_rerun_decides_the_same(tmp_path, capsys, monkeypatch):
    from memstor.experiments import run_experiment

    entered = []
    real_target = _fio_target.fio_target

    def counting(*a, **kw):
        entered.append(a)
        return real_target(*a, **kw)

    monkeypatch.setattr(_fio_target, "fio_target", counting)
    params = _auto_params()
    df = run_experiment(qd.EXPERIMENT, params, data_root=tmp_path, host="t", progress=True)
    err = capsys.readouterr().err
    # several rounds, one lock, test file and engine probe (the rounds share a HeldTarget)
    assert "round 3:" in err and len(entered) == 1
    assert "adaptive grid (iodepth: auto), round 1: more points may follow, at most 6 per pattern" in err
    assert "fio-queue-depth: adaptive grid, randread: depths 1, 2, " in err
    assert set(df["status"]) == {"done"}
    grid = df[~df["spec_point"]]
    depths = list(grid["iodepth"])
    assert depths == sorted(depths) and len(set(depths)) == len(depths) and depths[:3] == [1, 2, 4]
    assert 3 <= len(grid) <= 6 and max(depths) <= 32
    assert grid["grid_note"].notna().all() and grid["grid_note"].iloc[0] == ag.START
    assert all(ag.step_of(n) for n in grid["grid_note"])
    spec = df[df["spec_point"]]
    assert len(spec) == 1 and spec["grid_note"].isna().all() and spec.iloc[0]["numjobs"] == 2
    # the decisions are those of the rule on the measured points: it asks for nothing more
    step = ag.next_depths(qd.pattern_points(df, "randread"), max_points=6, max_iodepth=32)
    assert step.done and not step.depths
    # every measured point is in the table and in the manifest, each measured once
    raw = tmp_path / "raw" / "t" / qd.EXPERIMENT
    man = json.loads((raw / "manifest.json").read_text())
    assert {p["name"] for p in man["points"]} == set(df["point"])
    assert len(list(raw.glob("*.meta.json"))) == len(df)
    table = (tmp_path / "processed" / "t" / f"{qd.EXPERIMENT}.csv").read_text()
    assert len(pd.read_csv(tmp_path / "processed" / "t" / f"{qd.EXPERIMENT}.csv")) == len(df)

    before = _metas(raw)
    again = run_experiment(qd.EXPERIMENT, params, data_root=tmp_path, host="t", progress=True)
    err = capsys.readouterr().err
    assert _metas(raw) == before and len(entered) == 1  # nothing measured again, no lock or probe
    assert f"all {len(df)} points already measured" in err and "the same decisions" in err
    assert "measuring" not in err
    pd.testing.assert_frame_equal(df.reset_index(drop=True), again.reset_index(drop=True))
    assert (tmp_path / "processed" / "t" / f"{qd.EXPERIMENT}.csv").read_text() == table


@needs_fio
@pytest.mark.fio
def test_real_fio_a_listed_grid_measured_before_is_reused_by_auto(tmp_path):
    from memstor.experiments import run_experiment

    listed = _auto_params(iodepth=[1, 2, 4])
    run_experiment(qd.EXPERIMENT, listed, data_root=tmp_path, host="t", progress=False)
    raw = tmp_path / "raw" / "t" / qd.EXPERIMENT
    before = _metas(raw)
    df = run_experiment(qd.EXPERIMENT, _auto_params(max_points=3), data_root=tmp_path, host="t", progress=False)
    assert _metas(raw) == before  # depths 1, 2, 4 and the spec point: already measured (grid_note is incidental)
    grid = df[~df["spec_point"]]
    assert list(grid["iodepth"]) == [1, 2, 4]
    steps = list(grid["grid_note"].map(ag.step_of))
    assert steps[:2] == ["start", "doubling"] and steps[2] in ("doubling", "plateau check")  # 1 -> 2 gained < 3 %?


# ---------------------------------------------------------------------------------- figure, report


def _processed(curve: dict, depths: list, host: str = "h") -> pd.DataFrame:
    """A processed fio-queue-depth table of an adaptive grid on a synthetic curve (as the rule chose it)."""
    rows = []
    pts, notes, _, _ = simulate(curve.__getitem__)
    for d in sorted(pts):
        x, r = pts[d]
        rows.append({"host": host, "experiment": qd.EXPERIMENT, "rw": "randread", "direction": "read",
                     "bs_bytes": 4096, "iodepth": d, "numjobs": 1, "ioengine": "io_uring", "direct": 1,
                     "iops": x, "lat_mean_us": r, "bw_MBps": x * 4096 / 1e6, "status": "done", "spec_point": False,
                     "config": f"randread-bs4k-qd{d}", "source": f"raw/{d}.json", "jobname": f"p{d}", "groupid": 0,
                     "outstanding_io": d, "grid_note": notes[d]})
    return pd.DataFrame(rows)


def test_the_figures_ring_the_knee_points_and_the_report_lists_every_point():
    import matplotlib

    matplotlib.use("Agg")
    from memstor.analysis.summary import summary_table
    from memstor.report import text
    from memstor.report.plots import storage as splots
    from memstor.report.tables import TABLES

    df = _processed(closed_curve(90.0, 10.0), FIXED)
    summ = summary_table(df)
    fig = splots.qd_iops(summ, grid=df)
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert splots.KNEE_LABEL in labels and any(lab.startswith("random read: N* = 10.") for lab in labels)
    rings = [c for c in fig.axes[0].collections if c.get_label() == splots.KNEE_LABEL]
    n_knee = int(df["grid_note"].map(ag.is_knee_point).sum())
    assert n_knee and len(rings[0].get_offsets()) == n_knee
    tl = splots.throughput_latency(summ, grid=df)
    assert splots.KNEE_LABEL in tl.axes[0].get_legend_handles_labels()[1]
    plain = splots.qd_iops(summary_table(df.drop(columns="grid_note")))  # a listed grid: no rings
    assert splots.KNEE_LABEL not in plain.axes[0].get_legend_handles_labels()[1]
    assert splots.labelled_ticks([1, 2, 4, 8, 9, 11, 16]) == ([1, 2, 4, 8, 16], [9, 11])

    table = ag.grid_table(df, summ)
    assert list(table.columns) == ag.GRID_COLUMNS and len(table) == len(df)
    assert list(table["step"][:3]) == ["start", "doubling", "doubling"] and (table["step"] == "knee").sum() == n_knee
    assert "adaptive_grid" in TABLES and TABLES["adaptive_grid"][0] == "grid"
    shown = text.grid_display(table)
    assert list(shown.columns) == ["host", "workload", "depth", "step", "IOPS", "mean latency (µs)",
                                   "why it was added"]
    (sentence,) = text.grid_sentences(table)
    assert f"measured {len(df)} depths" in sentence and "plateau from depth 16" in sentence
    assert "N* = X_plateau · R(depth 1) = 10.0 I/Os" in sentence
    assert ag.grid_table(df.drop(columns="grid_note"), summ).empty  # a listed grid has no such table
