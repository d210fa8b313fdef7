"""memstor.measure.sweep: layout, metadata, atomic writes, resume, failures, lock, interrupts, SIGKILL.

The runner here is a small real runner (it writes JSON files); the kill/lock/interrupt tests run a real
sweep in a separate Python process and signal it for real.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import datetime
from pathlib import Path

import pytest

import memstor
from memstor.core.errors import MemstorError, PointFailed, UsageError
from memstor.core.files import SweepLocked, atomic_write
from memstor.measure.sweep import (
    Point,
    PointResult,
    SweepInterrupted,
    processed_path,
    raw_dir,
    run_sweep,
)


class JsonRunner:
    """Writes {"point": name, "value": params["x"] * 2, "complete": true} to out_tmp; logs every call."""

    suffix = ".json"

    def __init__(self, fail: set[str] | None = None, incomplete: set[str] | None = None, interrupt: str = ""):
        self.calls: list[str] = []
        self.fail = fail or set()
        self.incomplete = incomplete or set()
        self.interrupt = interrupt

    def run(self, point: Point, out_tmp: Path) -> dict:
        self.calls.append(point.name)
        cmd = ["jsonrunner", f"--x={point.params['x']}"]
        if point.name in self.fail:
            err = PointFailed(f"point {point.name}: tool exited 1: disk on fire")
            err.meta = {"command": cmd, "tool": "jsonrunner"}
            raise err
        out_tmp.write_text('{"point": "' + point.name + '", "val')  # partial first, like a real tool
        if point.name == self.interrupt:
            raise KeyboardInterrupt
        complete = point.name not in self.incomplete
        out_tmp.write_text(json.dumps({"point": point.name, "value": point.params["x"] * 2, "complete": complete}))
        return {"command": cmd, "tool": "jsonrunner", "tool_version": "1.0"}

    def complete(self, raw: Path) -> bool:
        try:
            return json.loads(raw.read_text()).get("complete") is True
        except ValueError:
            return False


def grid(n: int = 3) -> list[Point]:
    return [Point(f"p{i}-x{i * 10}", {"x": i * 10, "label": f"x={i * 10}"}, est_s=1.0 + i) for i in range(n)]


def tmp_files(d: Path) -> list[Path]:
    return [p for p in d.iterdir() if ".tmp" in p.name]


def iso(s: str) -> datetime:
    assert s.endswith("Z"), s
    return datetime.fromisoformat(s[:-1] + "+00:00")


def test_paths():
    assert raw_dir(Path("data"), "h1", "fio-block-size") == Path("data/raw/h1/fio-block-size")
    assert processed_path(Path("data"), "h1", "fio-block-size") == Path("data/processed/h1/fio-block-size.csv")


def test_layout_meta_and_manifest(tmp_path):
    runner = JsonRunner()
    pts = grid(3)
    res = run_sweep("exp1", pts, runner, tmp_path, "hostA", sysinfo={"cpu": "X"}, progress=False)
    d = tmp_path / "raw" / "hostA" / "exp1"
    assert [r.status for r in res] == ["done"] * 3
    assert all(isinstance(r, PointResult) for r in res)
    assert runner.calls == [p.name for p in pts]
    for p, r in zip(pts, res):
        assert r.raw == d / f"{p.name}.json" and r.meta == d / f"{p.name}.meta.json" and r.error is None
        assert json.loads(r.raw.read_text())["value"] == p.params["x"] * 2
        meta = json.loads(r.meta.read_text())
        assert meta["command"] == ["jsonrunner", f"--x={p.params['x']}"]
        assert meta["tool"] == "jsonrunner" and meta["tool_version"] == "1.0"
        assert meta["params"] == p.params and meta["point"] == p.name and meta["experiment"] == "exp1"
        assert meta["host"] == "hostA" and meta["memstor_version"] == memstor.__version__
        assert meta["status"] == "done" and meta["error"] is None and meta["raw"] == r.raw.name
        assert iso(meta["end_time"]) >= iso(meta["start_time"])
        assert 0 <= meta["duration_s"] < 5
    man = json.loads((d / "manifest.json").read_text())
    assert man["experiment"] == "exp1" and man["host"] == "hostA" and man["sysinfo"] == {"cpu": "X"}
    assert man["memstor_version"] == memstor.__version__
    assert [e["name"] for e in man["points"]] == [p.name for p in pts]
    assert [e["status"] for e in man["points"]] == ["done"] * 3
    assert [e["raw"] for e in man["points"]] == [f"{p.name}.json" for p in pts]
    assert tmp_files(d) == []


def test_rerun_is_cached_and_touches_nothing(tmp_path):
    pts = grid(3)
    run_sweep("e", pts, JsonRunner(), tmp_path, "h", progress=False)
    d = raw_dir(tmp_path, "h", "e")
    before = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in d.iterdir()}
    assert {"manifest.json", ".lock"} <= set(before)
    time.sleep(0.02)
    again = JsonRunner()
    res = run_sweep("e", pts, again, tmp_path, "h", progress=False)
    assert again.calls == []
    assert [r.status for r in res] == ["cached"] * 3
    after = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in d.iterdir()}
    assert after == before  # points, metas, the manifest and the lock (same process: same pid)
    # the manifest already said so: a re-run that measures nothing leaves it byte for byte
    man = json.loads((d / "manifest.json").read_text())
    assert [e["status"] for e in man["points"]] == ["done"] * 3


def test_incomplete_raw_is_rerun(tmp_path):
    pts = grid(3)
    run_sweep("e", pts, JsonRunner(), tmp_path, "h", progress=False)
    d = raw_dir(tmp_path, "h", "e")
    (d / f"{pts[0].name}.json").write_text('{"point": "p0", "val')  # truncated raw file
    r2 = JsonRunner()
    res = run_sweep("e", pts, r2, tmp_path, "h", progress=False)
    assert r2.calls == [pts[0].name]
    assert [r.status for r in res] == ["done", "cached", "cached"]
    assert json.loads((d / f"{pts[0].name}.json").read_text())["value"] == 0


def test_completed_point_with_other_params_is_kept_and_the_new_one_fails(tmp_path):
    """Raw data is immutable: a completed raw point measured with other params (another drive, file or
    setting under the same name) is never replaced; the new point fails with one line naming the raw
    file, that it is kept, and the way out; the other points still run."""
    pts = grid(3)
    run_sweep("e", pts, JsonRunner(), tmp_path, "h", progress=False)
    d = raw_dir(tmp_path, "h", "e")
    keep = {p.name: p.read_bytes() for p in d.iterdir() if p.name.startswith(pts[2].name)}
    assert len(keep) == 2  # raw file + meta
    (d / f"{pts[0].name}.json").write_text('{"point": "p0", "val')  # incomplete: may be re-measured
    changed = [pts[0], pts[1], Point(pts[2].name, {"x": 99, "label": "x=99"}), Point("p3-x30", {"x": 30})]
    r2 = JsonRunner()
    res = run_sweep("e", changed, r2, tmp_path, "h", progress=False)
    assert r2.calls == [pts[0].name, "p3-x30"]
    assert [r.status for r in res] == ["done", "cached", "failed", "done"]
    raw = d / f"{pts[2].name}.json"
    assert res[2].raw is None and res[2].error == (
        f"point {pts[2].name}: {raw} is a completed measurement with other parameters (label, x); it is kept, "
        f"not replaced: measure into another --data or --host, or move or rename {d} first")
    assert {p.name: p.read_bytes() for p in d.iterdir() if p.name.startswith(pts[2].name)} == keep
    man = json.loads((d / "manifest.json").read_text())
    assert [e["status"] for e in man["points"]] == ["done", "cached", "failed", "done"]
    assert man["points"][2]["error"] == res[2].error and man["points"][2]["raw"] is None
    again = JsonRunner()  # the same refusal every time, still nothing touched
    assert [r.status for r in run_sweep("e", changed, again, tmp_path, "h", progress=False)] == \
        ["cached", "cached", "failed", "cached"]
    assert again.calls == [] and json.loads(raw.read_text())["value"] == 40


def test_incidental_params_do_not_make_another_measurement(tmp_path):
    """A point that differs only in its incidental params (the test file's folder on the same device)
    is the same measurement: cached, neither re-measured nor refused."""
    first = [Point("p0", {"x": 1, "test_file": "/a/f"}, incidental=("test_file",))]
    run_sweep("e", first, JsonRunner(), tmp_path, "h", progress=False)
    moved = [Point("p0", {"x": 1, "test_file": "/b/f"}, incidental=("test_file",))]
    r = JsonRunner()
    assert [x.status for x in run_sweep("e", moved, r, tmp_path, "h", progress=False)] == ["cached"]
    assert r.calls == []
    other = [Point("p0", {"x": 2, "test_file": "/b/f"}, incidental=("test_file",))]
    res = run_sweep("e", other, JsonRunner(), tmp_path, "h", progress=False)
    assert res[0].status == "failed" and "other parameters (x)" in res[0].error


def test_failed_or_incomplete_points_with_other_params_are_remeasured(tmp_path):
    pts = grid(2)
    run_sweep("e", pts, JsonRunner(fail={pts[0].name}, incomplete={pts[1].name}), tmp_path, "h", progress=False)
    d = raw_dir(tmp_path, "h", "e")
    # a meta that says done over a raw file that is not complete: not a completed measurement either
    meta = json.loads((d / f"{pts[1].name}.meta.json").read_text())
    meta.update(status="done")
    (d / f"{pts[1].name}.meta.json").write_text(json.dumps(meta))
    (d / f"{pts[1].name}.json").write_text('{"complete": false}')
    changed = [Point(p.name, {"x": p.params["x"] + 1, "label": "new"}) for p in pts]
    r2 = JsonRunner()
    res = run_sweep("e", changed, r2, tmp_path, "h", progress=False)
    assert r2.calls == [p.name for p in pts] and [r.status for r in res] == ["done", "done"]
    assert json.loads((d / f"{pts[1].name}.meta.json").read_text())["params"]["label"] == "new"


def test_a_session_counts_its_sweeps_and_reading_only_writes_nothing(tmp_path):
    """The session is the sweeps' only shared state: counts of what they did, the read-only mode."""
    from memstor.measure.sweep import NotAllMeasured, SweepSession

    pts = grid(3)
    session = SweepSession()
    run_sweep("e", pts[:2], JsonRunner(fail={pts[1].name}), tmp_path, "h", progress=False, session=session)
    assert (session.measured, session.failed, session.cached, session.ran) == (1, 1, 0, 2)
    manifest = raw_dir(tmp_path, "h", "e") / "manifest.json"
    before = manifest.read_bytes()
    runner = JsonRunner()
    with session.reading():
        assert session.only_measured
        res = run_sweep("e", pts[:1], runner, tmp_path, "h", progress=False, session=session)
        assert [r.status for r in res] == ["cached"]
        with pytest.raises(NotAllMeasured, match=pts[1].name):
            run_sweep("e", pts, runner, tmp_path, "h", progress=False, session=session)
    assert not session.only_measured and runner.calls == [] and manifest.read_bytes() == before
    assert (session.measured, session.failed, session.cached, session.ran) == (1, 1, 1, 2)


def test_recording_adds_fields_to_manifest_and_metas(tmp_path):
    from memstor.measure.sweep import SweepSession

    dev = {"name": "h-sda1", "kind": "filesystem", "uuid": "0a1b"}
    session = SweepSession(record={"device": dev})
    run_sweep("e", grid(2), JsonRunner(), tmp_path, "h-sda1", sysinfo={"cpu": "X"}, progress=False, session=session)
    assert (session.measured, session.ran, session.cached) == (2, 2, 0)
    d = raw_dir(tmp_path, "h-sda1", "e")
    man = json.loads((d / "manifest.json").read_text())
    assert man["device"] == dev and man["host"] == "h-sda1" and man["sysinfo"] == {"cpu": "X"}
    assert list(man)[-1] == "points"
    for m in d.glob("*.meta.json"):
        meta = json.loads(m.read_text())
        assert meta["device"] == dev and meta["host"] == "h-sda1" and meta["status"] == "done"
    run_sweep("e2", grid(1), JsonRunner(), tmp_path, "h", progress=False)  # another session: nothing added
    assert "device" not in json.loads((raw_dir(tmp_path, "h", "e2") / "manifest.json").read_text())


def test_failed_point_recorded_sweep_goes_on_and_rerun_retries(tmp_path):
    pts = grid(3)
    bad = pts[1].name
    res = run_sweep("e", pts, JsonRunner(fail={bad}), tmp_path, "h", progress=False)
    d = raw_dir(tmp_path, "h", "e")
    assert [r.status for r in res] == ["done", "failed", "done"]
    assert res[1].raw is None and res[1].error == f"point {bad}: tool exited 1: disk on fire"
    assert not (d / f"{bad}.json").exists()
    meta = json.loads((d / f"{bad}.meta.json").read_text())
    assert meta["status"] == "failed" and meta["error"] == res[1].error and meta["raw"] is None
    assert meta["command"] == ["jsonrunner", "--x=10"]  # the failing command line is kept
    man = json.loads((d / "manifest.json").read_text())
    assert [e["status"] for e in man["points"]] == ["done", "failed", "done"]
    assert man["points"][1]["error"] == res[1].error and man["points"][1]["raw"] is None
    r2 = JsonRunner()
    res2 = run_sweep("e", pts, r2, tmp_path, "h", progress=False)
    assert r2.calls == [bad]
    assert [r.status for r in res2] == ["cached", "done", "cached"]
    assert json.loads((d / f"{bad}.meta.json").read_text())["status"] == "done"


def test_incomplete_output_is_a_failure_without_raw(tmp_path):
    pts = grid(2)
    res = run_sweep("e", pts, JsonRunner(incomplete={pts[0].name}), tmp_path, "h", progress=False)
    d = raw_dir(tmp_path, "h", "e")
    assert [r.status for r in res] == ["failed", "done"]
    assert "incomplete" in res[0].error and pts[0].name in res[0].error
    assert not (d / f"{pts[0].name}.json").exists() and tmp_files(d) == []


def test_keyboard_interrupt_leaves_no_tmp_records_nothing_and_resumes(tmp_path):
    pts = grid(3)
    with pytest.raises(SweepInterrupted) as ei:
        run_sweep("e", pts, JsonRunner(interrupt=pts[1].name), tmp_path, "h", progress=False)
    assert str(ei.value) == "interrupted: 1 of 3 points done; rerun the same command to resume"
    assert isinstance(ei.value, MemstorError)
    d = raw_dir(tmp_path, "h", "e")
    assert tmp_files(d) == []
    assert not (d / f"{pts[1].name}.meta.json").exists() and not (d / f"{pts[1].name}.json").exists()
    man = json.loads((d / "manifest.json").read_text())
    assert [e["status"] for e in man["points"]] == ["done", "pending", "pending"]
    r2 = JsonRunner()
    res = run_sweep("e", pts, r2, tmp_path, "h", progress=False)
    assert r2.calls == [pts[1].name, pts[2].name]
    assert [r.status for r in res] == ["cached", "done", "done"]


@pytest.mark.parametrize(
    "exp, names",
    [("ok", ["a", "a"]), ("ok", ["../escape"]), ("ok", [".hidden"]), ("ok", ["x.tmp"]), ("bad/exp", ["a"]),
     ("ok", ["a b"]), ("ok", ["manifest"])],
)
def test_bad_names_are_usage_errors(tmp_path, exp, names):
    with pytest.raises(UsageError) as ei:
        run_sweep(exp, [Point(n, {"x": 1}) for n in names], JsonRunner(), tmp_path, "h", progress=False)
    assert "\n" not in str(ei.value)
    assert not (tmp_path / "raw" / "h" / "ok").exists() or list((tmp_path / "raw" / "h" / "ok").glob("*.json")) == []


def test_atomic_write_replaces_and_cleans_up_on_error(tmp_path, monkeypatch):
    f = tmp_path / "a.json"
    atomic_write(f, "one")
    atomic_write(f, b"two")
    assert f.read_text() == "two" and f.stat().st_mode & 0o777 == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]

    def boom(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", boom)  # interrupt at the worst moment: data written, not renamed
    with pytest.raises(KeyboardInterrupt):
        atomic_write(f, "three")
    assert f.read_text() == "two"
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_progress_bar_shows_points_and_finishes(tmp_path, capsys):
    pts = grid(3)
    run_sweep("exp-bar", pts[:1], JsonRunner(), tmp_path, "h", progress=True)
    capsys.readouterr()
    run_sweep("exp-bar", pts, JsonRunner(), tmp_path, "h", progress=True)
    err = capsys.readouterr().err
    assert "exp-bar [3/3]" in err and "100%" in err
    assert "exp-bar [1/3] p1-x10" in err  # the cached first point counted from the start
    run_sweep("exp-bar", pts, JsonRunner(), tmp_path, "h", progress=False)
    assert capsys.readouterr().err == ""


# --------------------------------------------------------------- real processes: lock, SIGKILL, SIGINT

CHILD = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from memstor.core.errors import MemstorError
    from memstor.measure.sweep import Point, run_sweep

    data, slow = Path(sys.argv[1]), sys.argv[2]

    class SlowRunner:
        suffix = ".json"
        def run(self, point, out_tmp):
            with open(out_tmp, "w") as fh:
                fh.write('{"point": "%s", "partial' % point.name)
                fh.flush()
                if point.name == slow:
                    time.sleep(60)
            out_tmp.write_text(json.dumps({"point": point.name, "complete": True}))
            return {"command": ["slow"], "tool": "slow", "tool_version": "1"}
        def complete(self, raw):
            try:
                return json.loads(raw.read_text()).get("complete") is True
            except ValueError:
                return False

    pts = [Point(f"q{i}", {"x": i}, est_s=1) for i in range(4)]
    try:
        run_sweep("killme", pts, SlowRunner(), data, "h", progress=False)
    except MemstorError as err:
        print(err, file=sys.stderr)
        sys.exit(1)
    """
)


class QuickRunner(JsonRunner):
    """Completes any point instantly (used to resume the child's sweep)."""

    def run(self, point: Point, out_tmp: Path) -> dict:
        self.calls.append(point.name)
        out_tmp.write_text(json.dumps({"point": point.name, "complete": True}))
        return {"command": ["quick"], "tool": "quick", "tool_version": "1"}


def start_child(tmp_path: Path, slow: str) -> subprocess.Popen:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    return subprocess.Popen(
        [sys.executable, str(script), str(tmp_path / "data"), slow], stderr=subprocess.PIPE, text=True
    )


def wait_for(path: Path, proc: subprocess.Popen, timeout_s: float = 20) -> None:
    end = time.monotonic() + timeout_s
    while not path.exists():
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < end, f"{path} never appeared"
        time.sleep(0.02)


def test_sigkill_mid_point_keeps_completed_points_and_lock_refuses_second_sweep(tmp_path):
    d = raw_dir(tmp_path / "data", "h", "killme")
    proc = start_child(tmp_path, slow="q2")
    try:
        wait_for(d / "q2.json.tmp", proc)
        # a second concurrent sweep of the same experiment is refused in one line naming the pid
        with pytest.raises(SweepLocked) as ei:
            run_sweep("killme", [Point("q0", {"x": 0})], QuickRunner(), tmp_path / "data", "h", progress=False)
        msg = str(ei.value)
        assert msg.startswith(f"another memstor sweep is running on {d} (pid {proc.pid}); wait for it")
        assert "\n" not in msg
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert (d / "q2.json.tmp").exists() and not (d / "q2.json").exists()  # half-written stays temp
    assert not (d / "q2.meta.json").exists()
    kept = {n: (d / n).stat().st_mtime_ns for n in ["q0.json", "q0.meta.json", "q1.json", "q1.meta.json"]}
    r = QuickRunner()
    res = run_sweep("killme", [Point(f"q{i}", {"x": i}, est_s=1) for i in range(4)], r, tmp_path / "data", "h",
                    progress=False)
    assert r.calls == ["q2", "q3"]
    assert [x.status for x in res] == ["cached", "cached", "done", "done"]
    assert {n: (d / n).stat().st_mtime_ns for n in kept} == kept
    assert json.loads((d / "q0.meta.json").read_text())["tool"] == "slow"  # measured by the killed sweep
    assert json.loads((d / "q2.meta.json").read_text())["tool"] == "quick"
    assert tmp_files(d) == []


def test_sigint_mid_point_prints_one_line_and_leaves_no_tmp(tmp_path):
    d = raw_dir(tmp_path / "data", "h", "killme")
    proc = start_child(tmp_path, slow="q2")
    try:
        wait_for(d / "q2.json.tmp", proc)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1
    assert err.strip() == "interrupted: 2 of 4 points done; rerun the same command to resume"
    assert tmp_files(d) == [] and not (d / "q2.meta.json").exists()
    man = json.loads((d / "manifest.json").read_text())
    assert [e["status"] for e in man["points"]] == ["done", "done", "pending", "pending"]


# --------------------------------------------------------------------------------- sidecar folders


class LogRunner(JsonRunner):
    """JsonRunner that also writes a sidecar folder of 'logs' (like fio's interval logs)."""

    def run(self, point: Point, out_tmp: Path) -> dict:
        from memstor.measure.sweep import sidecar_tmp

        logs = sidecar_tmp(out_tmp)
        logs.mkdir()
        (logs / "iops.log").write_text(f"0, {point.params['x']}, 0, 0\n")
        return super().run(point, out_tmp)


def test_sidecar_folder_lands_with_its_point_and_never_with_a_failed_one(tmp_path):
    from memstor.measure.sweep import sidecar_dir

    pts = [Point("a", {"x": 1}), Point("b", {"x": 2}), Point("c", {"x": 3})]
    runner = LogRunner(fail={"b"}, incomplete={"c"})
    res = run_sweep("exp", pts, runner, tmp_path, "h", progress=False)
    d = raw_dir(tmp_path, "h", "exp")
    assert [r.status for r in res] == ["done", "failed", "failed"]
    assert (sidecar_dir(d, pts[0]) / "iops.log").read_text() == "0, 1, 0, 0\n"
    assert not sidecar_dir(d, pts[1]).exists() and not sidecar_dir(d, pts[2]).exists()
    assert not [p for p in d.iterdir() if ".tmp" in p.name]
    # a rerun keeps the completed point's folder as it is and adds the others'
    before = (sidecar_dir(d, pts[0]) / "iops.log").stat().st_mtime_ns
    res = run_sweep("exp", pts, LogRunner(), tmp_path, "h", progress=False)
    assert [r.status for r in res] == ["cached", "done", "done"]
    assert (sidecar_dir(d, pts[0]) / "iops.log").stat().st_mtime_ns == before
    assert (sidecar_dir(d, pts[2]) / "iops.log").read_text() == "0, 3, 0, 0\n"


def test_a_killed_runs_sidecar_temp_folder_is_removed_by_the_next_sweep(tmp_path):
    from memstor.measure.sweep import sidecar_dir, sidecar_tmp

    d = raw_dir(tmp_path, "h", "exp")
    d.mkdir(parents=True)
    stale = sidecar_tmp(d / "a.json.tmp")
    stale.mkdir()
    (stale / "half.log").write_text("0, 1")
    run_sweep("exp", [Point("a", {"x": 1})], LogRunner(), tmp_path, "h", progress=False)
    assert not stale.exists() and (sidecar_dir(d, Point("a")) / "iops.log").is_file()


def test_interrupted_point_leaves_no_sidecar(tmp_path):
    from memstor.measure.sweep import sidecar_dir

    with pytest.raises(SweepInterrupted):
        run_sweep("exp", [Point("a", {"x": 1})], LogRunner(interrupt="a"), tmp_path, "h", progress=False)
    d = raw_dir(tmp_path, "h", "exp")
    assert not sidecar_dir(d, Point("a")).exists() and not [p for p in d.iterdir() if ".tmp" in p.name]


def test_until_stops_an_adaptive_sweep_and_a_rerun_stops_at_the_same_point(tmp_path):
    pts = [Point(f"p{i}", {"x": i}) for i in range(6)]

    def until(results):
        return "enough: x reached 2" if results[-1].point.params["x"] == 2 else None

    runner = JsonRunner()
    res = run_sweep("exp", pts, runner, tmp_path, "h", progress=False, until=until)
    assert [r.point.name for r in res] == ["p0", "p1", "p2"] and runner.calls == ["p0", "p1", "p2"]
    man = json.loads((raw_dir(tmp_path, "h", "exp") / "manifest.json").read_text())
    assert [p["status"] for p in man["points"]] == ["done"] * 3 + ["not run"] * 3
    assert all(p["error"] == "enough: x reached 2" for p in man["points"][3:])
    again = JsonRunner()
    res = run_sweep("exp", pts, again, tmp_path, "h", progress=False, until=until)
    assert again.calls == [] and [r.status for r in res] == ["cached"] * 3
