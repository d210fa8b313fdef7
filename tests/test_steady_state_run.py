"""fio-steady-state, the experiment: preconditioning, rounds as resumable points, the stop rule, the
tidy table.

Two kinds of tests:
- *scripted*: the real sweep, the real parsing and the real table, with a runner that writes a real fio
  json+ output (recorded here with the real fio at test time) whose write IOPS follow a chosen series, so
  that the round at which the rule stops is known in advance;
- *real*: the real fio on a small temporary test file, including a SIGKILL in the middle of a round.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from memstor.analysis import steady_state as ss
from memstor.core.errors import MemstorError, PointFailed, UsageError
from memstor.experiments import fio_steady_state as fss
from memstor.experiments import load_profile, run_experiment
from reliability_helpers import (
    TRACEBACK,
    done_points,
    manifest_of,
    meta_of,
    reap,
    run_cli,
    snapshot,
    start_cli,
    stop_group,
    wait_for,
)

FIO = shutil.which("fio")
needs_fio = pytest.mark.skipif(FIO is None, reason="fio is not installed (make env installs it)")
HOST = "sshost"
TINY = {"runtime_s": 0.3, "ramp_s": 0, "file_size": "8m", "iodepth": 4, "numjobs": 2, "max_rounds": 8,
        "precondition_passes": 2, "precondition_bs": "128k", "precondition_iodepth": 4, "matrix_bs": [],
        "matrix_rwmixread": []}


def params(**over) -> dict:
    return load_profile("quick", fss.EXPERIMENT, {**TINY, **over})


def table_path(data: Path) -> Path:
    return data / "processed" / HOST / f"{fss.EXPERIMENT}.csv"


def raw(data: Path) -> Path:
    return data / "raw" / HOST / fss.EXPERIMENT


def independent_verdict(iops: list[float], max_rounds: int) -> dict:
    """The PTS rule computed here from scratch (numpy's polyfit for the slope), after every round."""
    for last in range(5, min(len(iops), max_rounds) + 1):
        w = np.array(iops[last - 5:last], dtype=float)
        avg = w.mean()
        data_pct = 100 * (w.max() - w.min()) / avg
        slope_pct = 100 * abs(np.polyfit(np.arange(5), w, 1)[0]) * 4 / avg
        if (data_pct <= 20 and slope_pct <= 10) or last == min(len(iops), max_rounds):
            return {"achieved": data_pct <= 20 and slope_pct <= 10, "last": last, "avg": avg,
                    "data": data_pct, "slope": slope_pct}
    return {"achieved": False, "last": None}


def check_table_against_rule(df: pd.DataFrame, max_rounds: int) -> dict:
    """The table's verdict columns equal the independent computation from its own per-round IOPS."""
    df = df.sort_values("round")
    assert list(df["round"]) == list(range(1, len(df) + 1)), "rounds must be 1..n, each once"
    iops = list(df.loc[df["status"] == "done", "iops"])
    want = independent_verdict(iops, max_rounds)
    assert df["ss_achieved"].nunique() == 1 and bool(df["ss_achieved"].iloc[0]) == want["achieved"]
    if want["last"] is not None:
        assert df["window_avg_iops"].iloc[0] == pytest.approx(want["avg"], rel=1e-9)
        assert df["data_excursion_pct"].iloc[0] == pytest.approx(want["data"], rel=1e-9)
        assert df["slope_excursion_pct"].iloc[0] == pytest.approx(want["slope"], rel=1e-9, abs=1e-9)
        assert sorted(df.loc[df["in_window"], "round"]) == list(range(want["last"] - 4, want["last"] + 1))
    if want["achieved"]:
        assert df["ss_round"].iloc[0] == want["last"] and df["ss_status"].iloc[0] == ss.ACHIEVED
    else:
        assert df["ss_round"].isna().all()
    return want


# ------------------------------------------------------------------------------ scripted IOPS series


@pytest.fixture(scope="module")
def fio_template(tmp_path_factory) -> dict:
    """A real fio json+ output of a small random-write job with group_reporting (recorded now)."""
    if FIO is None:
        pytest.skip("fio is not installed")
    d = tmp_path_factory.mktemp("tpl")
    out = d / "out.json"
    subprocess.run([FIO, "--name=tpl", f"--filename={d / 'f'}", "--size=4m", "--rw=randwrite", "--bs=4k",
                    "--iodepth=2", "--numjobs=2", "--group_reporting", "--runtime=200ms", "--time_based",
                    "--output-format=json+", f"--output={out}"], check=True, capture_output=True)
    return json.loads(out.read_text())


class ScriptedRunner:
    """Stands in for memstor.measure.fio.FioRunner: writes the recorded fio output with the job's name
    and, for round points, write IOPS from `series` (round r -> series[r - 1]). `fail` = point names that
    fail once. Records the points it ran."""

    suffix = ".json"
    calls: list = []

    def __init__(self, jobs: dict, series: list[float], fail: set, template: dict):
        self.jobs, self.series, self.fail, self.template = jobs, series, fail, template

    def run(self, point, out_tmp: Path) -> dict:
        ScriptedRunner.calls.append(point.name)
        if point.name in self.fail:
            self.fail.discard(point.name)
            raise PointFailed(f"point {point.name}: scripted failure")
        doc = json.loads(json.dumps(self.template))
        job = doc["jobs"][0]
        job["jobname"] = point.name
        p = point.params
        if p["phase"] == "round":
            job["write"]["iops"] = float(self.series[p["round"] - 1])
        out_tmp.write_text(json.dumps(doc))
        return {"command": ["fio", "scripted"], "tool": "fio", "tool_version": doc.get("fio version")}

    def complete(self, raw_file: Path) -> bool:
        return raw_file.stat().st_size > 0


@pytest.fixture
def scripted(monkeypatch, fio_template):
    """Install ScriptedRunner; the test calls the returned function with its IOPS series."""
    state = {"series": [], "fail": set()}
    ScriptedRunner.calls = []

    def factory(jobs, *a, **k):
        return ScriptedRunner(jobs, state["series"], state["fail"], fio_template)

    monkeypatch.setattr(fss, "FioRunner", factory)  # the runner the family builds (imported at its top)

    def configure(series, fail=()):
        state["series"][:] = series
        state["fail"].clear()
        state["fail"].update(fail)
        ScriptedRunner.calls = []
    return configure


def run(data: Path, **over) -> pd.DataFrame:
    return run_experiment(fss.EXPERIMENT, params(**over), data_root=data, host=HOST, progress=False)


#: Decays like a fresh SSD, then settles: steady for the first time at round 9 (window rounds 5-9).
SETTLING = [1000, 800, 650, 560, 500, 480, 470, 465, 462, 461, 460, 460, 460]
#: The same decay, flat by the window the rule first accepts (rounds 5-9: 500, 480, 470, 470, 471 turn at the
#: end, so steady_window_trend passes; SETTLING's window still falls every round, 500 -> 462: not shown).
SETTLED = [1000, 800, 650, 560, 500, 480, 470, 470, 471, 469, 470, 470, 470]


def test_series_used_by_the_scripted_tests_is_what_it_claims():
    assert ss.evaluate(SETTLING[:8], 25).achieved is False
    assert ss.evaluate(SETTLING, 25).round == 9


@needs_fio
@pytest.mark.fio
def test_stops_at_the_first_steady_round_and_a_rerun_measures_nothing(tmp_path, scripted):
    scripted(SETTLING)
    df = run(tmp_path, max_rounds=12)
    ran = ScriptedRunner.calls
    assert [n[:3] for n in ran] == ["pc1", "pc2"] + [f"r{r:02d}" for r in range(1, 10)]
    assert len(df) == 9 and (df["status"] == "done").all()
    want = check_table_against_rule(df, 12)
    assert want["achieved"] and want["last"] == 9
    # the rounds not needed are listed, not measured
    man = manifest_of(raw(tmp_path))
    rest = [p for p in man["points"] if p["name"][:3] in ("r10", "r11", "r12")]
    assert len(rest) == 3 and all(p["status"] == "not run" and "steady state at round 9" in p["error"]
                                  for p in rest)
    assert not any((raw(tmp_path) / f"{p['name']}.json").exists() for p in rest)
    before = snapshot(raw(tmp_path))
    csv_before = table_path(tmp_path).read_bytes()
    scripted(SETTLING)
    again = run(tmp_path, max_rounds=12)
    assert ScriptedRunner.calls == [], "a finished run measures nothing on rerun"
    assert table_path(tmp_path).read_bytes() == csv_before
    after = snapshot(raw(tmp_path))
    assert {k: v for k, v in after.items() if k not in ("manifest.json", ".lock")} == \
        {k: v for k, v in before.items() if k not in ("manifest.json", ".lock")}
    assert len(again) == 9


@needs_fio
@pytest.mark.fio
def test_not_achieved_at_the_round_limit_is_a_result(tmp_path, scripted):
    drifting = [1000 * 0.95 ** r for r in range(10)]  # -5 % per round: slope excursion ~19 %
    scripted(drifting)
    df = run(tmp_path, max_rounds=7)
    assert len(df) == 7 and len(ScriptedRunner.calls) == 2 + 7
    want = check_table_against_rule(df, 7)
    assert not want["achieved"]
    assert (df["ss_status"] == ss.NOT_ACHIEVED).all()
    # raising the limit continues the same run (max_rounds is not part of the run's identity)
    scripted(drifting)
    df = run(tmp_path, max_rounds=9)
    assert [n[:3] for n in ScriptedRunner.calls] == ["r08", "r09"]
    assert len(df) == 9 and df["run_id"].nunique() == 1


@needs_fio
@pytest.mark.fio
def test_table_has_the_issue_columns_and_cumulative_bytes(tmp_path, scripted):
    scripted(SETTLING)
    df = run(tmp_path, max_rounds=12)
    for col in ("round", "iops", "bw_MBps", "lat_mean_us", "clat_p99_us", "bytes_written", "ss_achieved",
                "ss_round", "window_avg_iops", "data_excursion_pct", "slope_excursion_pct"):
        assert col in df.columns, col
    span = 8 * 2**20
    metas = meta_of(raw(tmp_path))
    pcs = sorted(n for n in metas if n.startswith("pc"))
    assert len(pcs) == 2 and all(metas[n]["status"] == "done" for n in pcs)
    assert (df["span_bytes"] == span).all() and (df["span"] == "file").all()
    # the recorded template's writes stand in for each point's writes: bytes = its write I/Os x 4 KiB
    assert df["precondition_bytes"].iloc[0] > 0
    per_point = (df["total_ios"] * df["bs_bytes"]).tolist()
    assert df["bytes_written"].tolist() == pytest.approx(
        list(df["precondition_bytes"].iloc[0] + np.cumsum(per_point)))
    # a round is a state, never pooled: every row its own configuration
    assert df["config"].is_unique and (df["config"] == df["point"]).all()


@needs_fio
@pytest.mark.fio
def test_a_failed_round_stops_the_run_and_the_rerun_retries_it(tmp_path, scripted, capsys):
    scripted(SETTLING)
    real_run = ScriptedRunner.run

    def run_failing(self, point, out_tmp):
        if point.name.startswith("r03") and not getattr(ScriptedRunner, "failed_once", False):
            ScriptedRunner.failed_once = True
            ScriptedRunner.calls.append(point.name)
            raise PointFailed(f"point {point.name}: scripted failure")
        return real_run(self, point, out_tmp)

    ScriptedRunner.failed_once = False
    try:
        ScriptedRunner.run = run_failing
        df = run(tmp_path, max_rounds=12)
    finally:
        ScriptedRunner.run = real_run
    assert list(df["round"]) == [1, 2, 3] and list(df["status"]) == ["done", "done", "failed"]
    assert "round 3 failed" in capsys.readouterr().err
    kept = {k: v for k, v in snapshot(raw(tmp_path)).items() if k.startswith(("pc", "r01", "r02"))}
    scripted(SETTLING)
    df = run(tmp_path, max_rounds=12)
    assert ScriptedRunner.calls[0].startswith("r03") and len(df) == 9
    now = snapshot(raw(tmp_path))
    assert all(now[k] == v for k, v in kept.items()), "completed rounds were rewritten"
    check_table_against_rule(df, 12)


@needs_fio
@pytest.mark.fio
def test_a_failed_preconditioning_measures_no_round(tmp_path, scripted):
    real_run = ScriptedRunner.run

    def fail_pc(self, point, out_tmp):
        if point.name.startswith("pc1"):
            raise PointFailed(f"point {point.name}: No space left on device")
        return real_run(self, point, out_tmp)

    scripted(SETTLING)
    try:
        ScriptedRunner.run = fail_pc
        with pytest.raises(MemstorError, match="preconditioning pass 1 failed"):
            run(tmp_path)
    finally:
        ScriptedRunner.run = real_run
    assert not list(raw(tmp_path).glob("r01*.json"))


@needs_fio
@pytest.mark.fio
def test_the_matrix_runs_every_round_and_the_tracking_point_is_not_doubled(tmp_path, scripted):
    scripted(SETTLING)
    df = run(tmp_path, max_rounds=12, matrix_bs=["4k", "8k"], matrix_rwmixread=[100, 0])
    per_round = 4  # 2 sizes x 2 mixes; 4k at 0 % reads is the tracking point itself
    assert len(ScriptedRunner.calls) == 2 + 9 * per_round
    assert len(df) == 9 and (df["rw"] == "randwrite").all() and (df["bs_bytes"] == 4096).all()
    m = pd.read_csv(tmp_path / "processed" / HOST / f"{fss.MATRIX_TABLE}.csv")
    assert len(m.groupby(["round", "point"])) == 9 * per_round
    assert m["tracking"].sum() == 9 and set(m.loc[m["in_window"], "round"]) == {5, 6, 7, 8, 9}
    # without the matrix the matrix table goes away (a stale one would describe another run)
    scripted(SETTLING)
    run(tmp_path, max_rounds=12)
    assert not (tmp_path / "processed" / HOST / f"{fss.MATRIX_TABLE}.csv").exists()


@needs_fio
@pytest.mark.fio
def test_another_setting_is_another_run_preconditioned_anew(tmp_path, scripted):
    scripted(SETTLING)
    a = run(tmp_path, max_rounds=12)
    scripted(SETTLING)
    b = run(tmp_path, max_rounds=12, iodepth=8)
    assert a["run_id"].iloc[0] != b["run_id"].iloc[0]
    assert [n[:3] for n in ScriptedRunner.calls[:2]] == ["pc1", "pc2"]
    assert len([p for p in raw(tmp_path).glob("pc1-*.json") if not p.name.endswith(".meta.json")]) == 2  # the first run's raw files stay


@pytest.mark.parametrize("over, param", [
    ({"repetitions": 2}, "repetitions"),
    ({"max_rounds": 4}, "max_rounds"),
    ({"matrix_bs": ["4k"]}, "matrix_rwmixread"),
    ({"matrix_rwmixread": [100]}, "matrix_bs"),
    ({"precondition_passes": 0}, "precondition_passes"),
    ({"matrix_rwmixread": [100, 101], "matrix_bs": ["4k"]}, "matrix_rwmixread"),
])
def test_bad_parameters_are_refused_naming_the_parameter(over, param):
    with pytest.raises(UsageError, match=param):
        fss.validate(params(**over))


# ------------------------------------------------------------------------------------ the real fio


@needs_fio
@pytest.mark.fio
def test_real_fio_run_one_raw_file_and_meta_per_round_and_the_verdict_agrees(tmp_path):
    df = run(tmp_path, max_rounds=6)
    rdir = raw(tmp_path)
    metas = meta_of(rdir)
    rounds = sorted(n for n in metas if n.startswith("r"))
    assert len(rounds) == len(df) and len(df) in range(5, 7)
    for n in [*rounds, *(n for n in metas if n.startswith("pc"))]:
        assert metas[n]["status"] == "done" and (rdir / f"{n}.json").is_file()
        assert "--name=" + n in " ".join(metas[n]["command"])
    pc_cmd = " ".join(metas[next(n for n in metas if n.startswith("pc1"))]["command"])
    assert "--rw=write" in pc_cmd and "--bs=128k" in pc_cmd and "--time_based" not in pc_cmd
    assert (df["status"] == "done").all() and (df["iops"] > 0).all()
    check_table_against_rule(df, 6)
    # two passes over the 8 MiB file, counted by fio
    assert df["precondition_bytes"].iloc[0] == 2 * 8 * 2**20
    assert df["bytes_written"].is_monotonic_increasing


@needs_fio
@pytest.mark.fio
def test_sigkill_mid_round_then_rerun_keeps_completed_rounds_byte_identical(tmp_path):
    data = tmp_path / "data"
    sets = [x for k, v in {**TINY, "runtime_s": 1.5, "max_rounds": 6}.items()
            for x in ("--set", f"{k}={json.dumps(v) if isinstance(v, list) else v}")]
    args = ["run", fss.EXPERIMENT, "--profile", "quick", "--data", str(data), "--host", HOST, "--no-progress", *sets]
    proc = start_cli(*args, stderr_path=tmp_path / "err.txt")
    rdir = raw(data)
    try:
        wait_for(lambda: rdir.is_dir() and done_points(rdir) >= 4, 120, what="2 passes and 2 rounds done")
    finally:
        import time

        time.sleep(0.5)  # inside round 3
        stop_group(proc, signal.SIGKILL, group=False)  # the sweep alone, as the OOM killer would
        reap(proc)
    done = {n for n, m in meta_of(rdir).items() if m.get("status") == "done"}
    kept = {k: v for k, v in snapshot(rdir).items() if k.split(".")[0] in done}
    assert any(n.startswith("r02") for n in done)
    res = run_cli(*args, timeout=300)
    assert res.returncode == 0, res.stderr
    assert TRACEBACK not in res.stderr
    now = snapshot(rdir)
    assert all(now[k] == v for k, v in kept.items()), "completed rounds were rewritten"
    df = pd.read_csv(table_path(data))
    assert df["round"].is_unique and list(df["round"]) == list(range(1, len(df) + 1))
    round_files = [p.name[:3] for p in rdir.glob("r*.json") if not p.name.endswith(".meta.json")]
    assert len(round_files) == len(set(round_files)) == len(df), "a round was measured twice"
    assert (df["status"] == "done").all()
    check_table_against_rule(df, 6)


# ----------------------------------------------------------------------------- into the synthesis


@needs_fio
@pytest.mark.parametrize("series, achieved, state", [
    (SETTLED, True, "steady state (file span)"),
    (SETTLING, True, "steady state not shown (file span)"),  # the window still falls every round: not one level
    ([1000 * 0.95 ** r for r in range(10)], False, "steady state not achieved (file span)")])
@pytest.mark.fio
def test_spec_comparison_uses_the_steady_state_window_with_its_state(tmp_path, scripted, series, achieved, state):
    from memstor.analysis.synthesis import synthesise
    from memstor.report.tables import write_tables

    scripted(series)
    df = run(tmp_path, max_rounds=12 if achieved else 8, runtime_s=10)  # scripted: 10-s rounds cost no time
    S = synthesise(tmp_path, Path(__file__).resolve().parents[1] / "data" / "specs")
    v = S.steady.set_index("host").loc[HOST]
    want = independent_verdict(list(df["iops"]), 12 if achieved else 8)
    assert bool(v["ss_achieved"]) is achieved and v["window_avg_iops"] == pytest.approx(want["avg"])
    assert v["rounds"] == len(df) and v["window_last"] == want["last"]
    rows = S.spec[(S.spec["host"] == HOST) & (S.spec["id"] == "randwrite_4k_course")]
    assert len(rows) == 1
    row = rows.iloc[0]
    assert row["measured"] == pytest.approx(want["avg"]) and row["n"] == 1  # one run: its rounds are not repeats
    assert row["selection"].startswith("steady state: ")
    assert row["state"] == state
    if state == "steady state (file span)":
        assert "state" not in row["flag"]  # the state matches; span and target still differ (a test file)
        assert "span" in row["flag"] and "target" in row["flag"]
    else:
        assert "state" in row["flag"]
    head = S.headline[(S.headline["host"] == HOST) & (S.headline["key"] == "ss_randwrite_iops")].iloc[0]
    assert head["value"] == pytest.approx(want["avg"]) and head["n"] == 1
    # the rounds never feed the sweep headlines ("best" is a sweep's number, not round 1 of a trajectory)
    best = S.headline[(S.headline["host"] == HOST) & (S.headline["key"] == "best_randwrite_iops")].iloc[0]
    assert best["value"] != best["value"] or best["value"] is None
    paths = write_tables(S, tmp_path / "tables")
    table = pd.read_csv(tmp_path / "tables" / "steady_state.csv")
    assert tmp_path / "tables" / "steady_state.csv" in paths and len(table) == 1
    # the CSV says what the PDF says (csv_gate, fifth read): a window rule met whose steady state is not shown is
    # no steady state there either
    shown = achieved and state.startswith("steady state (")
    assert table["ss_achieved"].iloc[0] == shown and table["verdict"].iloc[0] == v["verdict"]


@needs_fio
@pytest.mark.fio
def test_spec_table_flags_an_interface_mismatch_from_the_drive_record(tmp_path, scripted):
    from memstor.analysis.synthesis import synthesise

    scripted(SETTLED)
    run(tmp_path, max_rounds=12, runtime_s=10)  # a window the checks let stand: its state matches the sheet's
    info_path = tmp_path / "processed" / HOST / "sysinfo.json"
    info = json.loads(info_path.read_text())
    assert isinstance(info.get("drive"), dict)  # every storage run records the drive (or why not)
    specs_dir = Path(__file__).resolve().parents[1] / "data" / "specs"
    S = synthesise(tmp_path, specs_dir)
    assert S.spec["interface"].str.startswith(("not available", "matched", "differs")).all()
    # the same drive as if it sat in a PCIe 3.0 x4 slot (it can do 4.0 x4): recorded link fields
    info["drive"]["pcie_link"] = {"available": True, "fields": {
        "pcie_generation_current": 3, "current_link_width": 4, "current_link_speed_GTps": 8.0,
        "pcie_generation_max": 4, "max_link_width": 4, "max_link_speed_GTps": 16.0}}
    info_path.write_text(json.dumps(info))
    S = synthesise(tmp_path, specs_dir)
    row = S.spec[(S.spec["host"] == HOST) & (S.spec["id"] == "randwrite_4k_course")].iloc[0]
    assert row["interface"] == ("differs: PCIe 3.0 x4 measured, sheet says PCIe 4.0 x4 (the drive can PCIe 4.0 "
                                "x4: the slot or the link trained lower)")
    assert row["flag"].endswith(", interface") and "state" not in row["flag"]
    unmeasured = S.spec[(S.spec["host"] == HOST) & S.spec["measured"].isna()]
    assert (unmeasured["flag"] == "not measured").all()


@needs_fio
@pytest.mark.fio
def test_raw_device_named_twice_is_preconditioned_whole_and_compared_as_full_device(tmp_path, loop_device):
    """A real loop device (root only): the span is the whole device, the state reads 'full device'."""
    from memstor.analysis.synthesis import synthesise

    loop = loop_device(24 << 20)
    df = run_experiment(fss.EXPERIMENT, params(max_rounds=5, device=loop, confirm_device=loop, ioengine="libaio",
                                               file_size="8m"),
                        data_root=tmp_path / "data", host=HOST, progress=False)
    assert len(df) == 5 and (df["status"] == "done").all()
    assert (df["span"] == "full_device").all() and (df["span_bytes"] == 24 << 20).all()
    assert df["precondition_bytes"].iloc[0] == 2 * (24 << 20)  # the whole device twice, not file_size
    meta = meta_of(raw(tmp_path / "data"))
    pc = next(m for n, m in meta.items() if n.startswith("pc1"))
    assert f"--filename={loop}" in pc["command"] and f"--size={24 << 20}" in pc["command"]
    rounds = [m for n, m in meta.items() if n.startswith("r0")]  # S12-loop 1: the rounds too, not file_size's 8m
    assert rounds and all(f"--size={24 << 20}" in m["command"] for m in rounds)
    S = synthesise(tmp_path / "data", Path(__file__).resolve().parents[1] / "data" / "specs")
    row = S.spec[(S.spec["host"] == HOST) & (S.spec["id"] == "randwrite_4k_course")].iloc[0]
    assert row["state"].endswith("(full device)")
    assert "span" not in row["flag"] and "target" not in row["flag"]


def test_rounds_write_over_the_whole_device_only_on_a_raw_device():
    """S12-loop 1: on a 6 GiB loop device named twice the preconditioning covered the whole device but every round
    ran --size=256m (the profile's file size) and was reported as 'the whole raw device'. The rounds' file_size is
    now the span on a raw device; on a test file it stays the profile's (the file is the span), and the run id
    tells the two apart."""
    sp = fss.steady_state_params(params(file_size="256m"))
    span = 6 << 30
    raw = [p for p in fss.make_points(sp, "io_uring", span, {}, "/dev/loop0", raw=True) if p.params["phase"] == "round"]
    assert raw and {p.params["file_size"] for p in raw} == {str(span)}
    file = [p for p in fss.make_points(sp, "io_uring", 256 << 20, {}, "f.dat") if p.params["phase"] == "round"]
    assert {p.params["file_size"] for p in file} == {"256m"}
    assert fss.run_id(sp, "io_uring", span, {}, raw=True) != fss.run_id(sp, "io_uring", span, {})
