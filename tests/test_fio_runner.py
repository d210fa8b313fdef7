"""memstor.measure.fio with the real fio on real temporary files (tiny sizes, runtimes well under a second)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from memstor.core.errors import MemstorError, PointFailed, UsageError
from memstor.core.files import set_aside
from memstor.measure.fio import FioJob, FioRunner, fio_command
from memstor.measure.fio_engine import choose_engine, fio_binary, fio_engines, fio_version, probe_direct
from memstor.measure.fio_output import check_fio_output
from memstor.measure.sweep import Point, run_sweep

pytestmark = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (make env installs it)")

MiB = 1024 * 1024


@pytest.fixture
def test_file(tmp_path) -> Path:
    """An 8 MiB file of non-zero bytes, as memstor.measure.target would create it."""
    f = tmp_path / "memstor-testfile.dat"
    f.write_bytes(os.urandom(MiB) * 8)
    return f


@pytest.fixture(scope="module")
def direct_ok(tmp_path_factory) -> bool:
    """Whether the temp filesystem accepts O_DIRECT (ext4/xfs: yes; old tmpfs: no)."""
    try:
        probe_direct(tmp_path_factory.mktemp("probe"))
        return True
    except UsageError:
        return False


# ------------------------------------------------------------------------------------------ validate


@pytest.mark.parametrize(
    "change, param, allowed",
    [
        ({"bs": "0"}, "bs", "positive size"),
        ({"bs": "-4k"}, "bs", "positive size"),
        ({"bs": "fourk"}, "bs", "positive size"),
        ({"bs": ""}, "bs", "positive size"),
        ({"bs": "32m"}, "bs", "at most the file size"),
        ({"size": "0"}, "size", "positive size"),
        ({"rw": "random-read"}, "rw", "randread"),
        ({"rw": "randrw", "rwmixread": 101}, "rwmixread", "0..100"),
        ({"rw": "randrw", "rwmixread": -1}, "rwmixread", "0..100"),
        ({"rw": "randread", "rwmixread": 70}, "rwmixread", "only with rw=rw or rw=randrw"),
        ({"iodepth": 0}, "iodepth", "integer >= 1"),
        ({"iodepth": 1.5}, "iodepth", "integer >= 1"),
        ({"numjobs": 0}, "numjobs", "integer >= 1"),
        ({"numjobs": -3}, "numjobs", "integer >= 1"),
        ({"ioengine": "warp_drive"}, "ioengine", "io_uring"),
        ({"runtime_s": 0}, "runtime_s", "> 0"),
        ({"runtime_s": -1}, "runtime_s", "> 0"),
        ({"ramp_s": -1}, "ramp_s", ">= 0"),
    ],
)
@pytest.mark.fio
def test_validate_rejects_bad_values_naming_parameter_and_allowed(change, param, allowed):
    job = FioJob(name="j1", **{"size": "16m", **change})
    with pytest.raises(UsageError) as ei:
        job.validate()
    msg = str(ei.value)
    assert f"{param}=" in msg and allowed in msg and "'j1'" in msg and "\n" not in msg


@pytest.mark.fio
def test_validate_accepts_good_jobs_and_knows_fio_engines():
    assert {"io_uring", "libaio", "psync"} <= fio_engines()
    for job in [FioJob("a"), FioJob("b", rw="randrw", rwmixread=0), FioJob("c", rw="rw", rwmixread=100, bs="1m"),
                FioJob("d", rw="write", ioengine="psync", direct=False, runtime_s=0.5, ramp_s=0.1)]:
        job.validate()
    assert FioJob("e", bs="64k", size="1g").bs_bytes == 65536
    assert FioJob("e", size="1g").size_bytes == 1 << 30


# -------------------------------------------------------------------------------------------- command


@pytest.mark.fio
def test_fio_command_random_mixed(tmp_path):
    job = FioJob("mix", rw="randrw", bs="16k", iodepth=8, numjobs=2, rwmixread=70, size="16m", runtime_s=1.5,
                 ramp_s=0.25, filename="/data/memstor-testfile.dat")
    out = tmp_path / "o.json"
    assert fio_command(job, out) == [
        fio_binary(), "--name=mix", "--filename=/data/memstor-testfile.dat", "--rw=randrw", "--bs=16k",
        "--iodepth=8", "--numjobs=2", "--rwmixread=70", "--ioengine=io_uring", "--direct=1", "--size=16m",
        "--runtime=1500ms", "--ramp_time=250ms", "--time_based", "--group_reporting", "--randrepeat=0",
        "--norandommap", "--invalidate=1", "--allow_file_create=0", "--eta=never", "--output-format=json+",
        f"--output={out}",
    ]


@pytest.mark.fio
def test_fio_command_sequential_without_optional_flags(tmp_path):
    job = FioJob("seq", rw="read", bs="1m", direct=False, ioengine="psync", time_based=False,
                 group_reporting=False, size="16m", runtime_s=2, filename="/f")
    cmd = fio_command(job, tmp_path / "o.json")
    assert "--rw=read" in cmd and "--direct=0" in cmd and "--runtime=2000ms" in cmd
    for absent in ("--time_based", "--group_reporting", "--norandommap"):
        assert absent not in cmd
    assert not any(c.startswith("--rwmixread") for c in cmd)
    with pytest.raises(UsageError, match="no filename"):
        fio_command(FioJob("nofile"), tmp_path / "o.json")


# ------------------------------------------------------------------------------------ binary/version


@pytest.mark.fio
def test_fio_version_is_what_fio_prints():
    out = subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
    assert fio_version() == out and out.startswith("fio-")


def test_missing_fio_is_one_line_with_install_command(monkeypatch, tmp_path):
    monkeypatch.delenv("MEMSTOR_FIO", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))  # a folder without fio
    with pytest.raises(MemstorError) as ei:
        fio_binary()
    msg = str(ei.value)
    assert msg.startswith("fio not found on PATH") and "apt-get install fio" in msg and "dnf install fio" in msg
    assert "brew install fio" in msg and "\n" not in msg
    monkeypatch.setenv("MEMSTOR_FIO", str(tmp_path / "nofio"))
    with pytest.raises(MemstorError, match="MEMSTOR_FIO=.* is not an executable"):
        fio_binary()


# ---------------------------------------------------------------------------------- O_DIRECT, engines


def test_probe_direct_on_disk_tmp_and_missing_dir(tmp_path, direct_ok):
    if direct_ok:
        assert probe_direct(tmp_path) is None
    assert list(tmp_path.iterdir()) == []  # the probe file is gone
    with pytest.raises(UsageError, match="no such directory"):
        probe_direct(tmp_path / "nope")


def test_probe_direct_refused_on_ramfs(tmp_path):
    """ramfs has no O_DIRECT at all: a real mount when we may mount (root), else skipped."""
    mnt = tmp_path / "ramfs"
    mnt.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "ramfs", "ramfs", str(mnt)],
                                           capture_output=True).returncode != 0:
        pytest.skip("cannot mount ramfs here (needs root)")
    try:
        with pytest.raises(UsageError) as ei:
            probe_direct(mnt)
        assert str(ei.value) == (
            f"the filesystem at {mnt} refuses O_DIRECT (tmpfs?): use --target on a disk filesystem, "
            "or --set direct=0 (measures the page cache)"
        )
        assert list(mnt.iterdir()) == []
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


@pytest.mark.fio
def test_choose_engine_prefers_and_falls_back_for_real(tmp_path, direct_ok):
    engine, why = choose_engine("io_uring", tmp_path, direct=direct_ok)
    assert engine in ("io_uring", "libaio", "psync")
    if engine == "io_uring":
        assert why == "io_uring works"
    else:  # a kernel without io_uring (or with it disabled): the reason names fio's refusal
        assert why.startswith("io_uring refused (") and why.endswith(f"{engine} works")
    assert choose_engine("libaio", tmp_path, direct=direct_ok)[0] in ("libaio", "psync")
    # the mtd engine exists in fio but refuses a regular file: a real refusal, then psync
    engine, why = choose_engine("mtd", tmp_path, direct=False)
    assert engine == "psync"
    assert why.startswith("mtd refused (fio exited 1: ") and "not a character device" in why
    assert why.endswith("; psync works")
    assert list(tmp_path.iterdir()) == []  # probe files removed
    with pytest.raises(UsageError, match="no such directory"):
        choose_engine("io_uring", tmp_path / "nope")


# ------------------------------------------------------------------------------------- real fio runs


@pytest.mark.fio
def test_fio_runner_sweep_real_numbers(tmp_path, test_file, direct_ok):
    jobs = {
        "randread-4k-qd4": FioJob("randread-4k-qd4", rw="randread", bs="4k", iodepth=4, size="8m",
                                  runtime_s=0.3, direct=direct_ok),
        "randrw70-16k-nj2": FioJob("randrw70-16k-nj2", rw="randrw", rwmixread=70, bs="16k", numjobs=2,
                                   size="8m", runtime_s=0.3, direct=direct_ok),
    }

    class TF:
        path = test_file

    runner = FioRunner(jobs, TF())
    points = [Point(n, {"bs": j.bs}, est_s=0.3) for n, j in jobs.items()]
    res = run_sweep("fio-t", points, runner, tmp_path / "data", "h", progress=False)
    assert [r.status for r in res] == ["done", "done"], [r.error for r in res]
    doc = json.loads(res[0].raw.read_text())
    assert doc["fio version"] == fio_version()
    job = doc["jobs"][0]
    assert job["error"] == 0 and job["job options"]["rw"] == "randread" and job["job options"]["bs"] == "4k"
    assert job["job options"]["iodepth"] == "4" and job["job options"]["filename"] == str(test_file)
    assert job["read"]["total_ios"] > 0 and job["read"]["iops"] > 0 and job["write"]["total_ios"] == 0
    assert job["read"]["io_bytes"] == job["read"]["total_ios"] * 4096
    assert "bins" in job["read"]["clat_ns"]  # json+ histogram
    assert 250 <= job["job_runtime"] <= 2000  # ms: ran for the asked 0.3 s (time_based)
    mixed = json.loads(res[1].raw.read_text())["jobs"]
    assert len(mixed) == 1  # group_reporting: two jobs reported as one
    r, w = mixed[0]["read"]["total_ios"], mixed[0]["write"]["total_ios"]
    assert r > 0 and w > 0 and 0.55 < r / (r + w) < 0.85  # ~70 % reads
    meta = json.loads(res[0].meta.read_text())
    assert meta["tool"] == "fio" and meta["tool_version"] == fio_version()
    assert meta["command"][0] == fio_binary() and f"--output={res[0].raw}.tmp" in meta["command"]
    assert meta["ioengine"] == job["job options"]["ioengine"] and meta["ioengine_reason"].endswith("works")
    assert meta["job"]["iodepth"] == 4 and meta["job"]["filename"] == str(test_file)
    assert meta["returncode"] == 0
    assert runner.complete(res[0].raw)
    again = run_sweep("fio-t", points, runner, tmp_path / "data", "h", progress=False)
    assert [r.status for r in again] == ["cached", "cached"]


@pytest.mark.fio
def test_fio_error_becomes_failed_point_with_fios_message(tmp_path):
    """Writing to /dev/full: fio's own error line (ENOSPC) names the failure; no raw file is kept."""
    job = FioJob("full", rw="write", bs="4k", size="1m", runtime_s=0.2, direct=False, ioengine="psync",
                 filename="/dev/full")
    res = run_sweep("fio-err", [Point("full", {})], FioRunner({"full": job}), tmp_path, "h", progress=False)
    assert res[0].status == "failed" and res[0].raw is None
    assert res[0].error.startswith("point full: fio exited 1: fio: io_u error on file /dev/full: ")
    assert "No space left on device" in res[0].error
    meta = json.loads(res[0].meta.read_text())
    assert meta["status"] == "failed" and meta["returncode"] == 1 and "--filename=/dev/full" in meta["command"]
    assert sorted(p.name for p in (tmp_path / "raw" / "h" / "fio-err").iterdir()) == [
        ".lock", "full.meta.json", "manifest.json"]


@pytest.mark.fio
def test_job_error_in_json_is_a_failure_even_with_exit_0(tmp_path, test_file):
    """A real fio JSON whose job has error != 0 (fio exits 1): made real with verify on a random file,
    then checked with the exit status forced to 0 so the per-job check alone must catch it."""
    out = tmp_path / "out.json"
    subprocess.run(["fio", "--name=v", f"--filename={test_file}", "--rw=read", "--bs=4k", "--size=1m",
                    "--verify=crc32c", "--do_verify=1", "--allow_file_create=0", "--output-format=json",
                    f"--output={out}"], capture_output=True, text=True)
    text = out.read_text()
    doc = json.loads(text[text.index("{"):])
    assert doc["jobs"][0]["error"] != 0
    with pytest.raises(PointFailed) as ei:
        check_fio_output("v", 0, "", text)
    assert str(ei.value).startswith(f"point v: fio job 'v' error {doc['jobs'][0]['error']} (")
    assert not FioRunner({}).complete(out)


@pytest.mark.fio
def test_runner_refuses_missing_test_file_before_fio(tmp_path):
    job = FioJob("j", size="1m", runtime_s=0.1, filename=str(tmp_path / "gone.dat"))
    with pytest.raises(UsageError, match="does not exist"):
        FioRunner({"j": job}).run(Point("j", {}), tmp_path / "o.json.tmp")
    assert not (tmp_path / "gone.dat").exists() and not (tmp_path / "o.json.tmp").exists()


KILL_CHILD = """
import os, sys
from pathlib import Path
from memstor.measure.fio import FioJob, FioRunner
from memstor.measure.sweep import Point, run_sweep

data, testfile, slow_s = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3])
jobs = {f"q{i}": FioJob(f"q{i}", bs="4k", size="8m", runtime_s=slow_s if i == 2 else 0.2, direct=False,
                        filename=testfile) for i in range(4)}
run_sweep("fio-kill", [Point(n, {"i": n}) for n in jobs], FioRunner(jobs), data, "h", progress=False)
"""


def _children(pid: int) -> list[int]:
    try:
        return [int(x) for x in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] not in "ZX"
    except (OSError, IndexError):
        return False


@pytest.mark.slow
@pytest.mark.fio
def test_sigkill_during_real_fio_point_resumes_and_kills_fio(tmp_path, test_file):
    import signal
    import sys
    import time

    script = tmp_path / "child.py"
    script.write_text(KILL_CHILD)
    d = tmp_path / "data" / "raw" / "h" / "fio-kill"
    proc = subprocess.Popen([sys.executable, str(script), str(tmp_path / "data"), str(test_file), "20"],
                            stderr=subprocess.PIPE, text=True)
    try:
        end = time.monotonic() + 30
        while not ((d / "q2.json.tmp").exists() and _children(proc.pid)):
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() < end, "point q2 never started"
            time.sleep(0.02)
        end = time.monotonic() + 10
        while not any(_children(m) for m in _children(proc.pid)):  # fio main has forked its job
            assert time.monotonic() < end, "fio never forked its job process"
            time.sleep(0.02)
        main = _children(proc.pid)
        workers = [w for m in main for w in _children(m)]
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    end = time.monotonic() + 5
    while any(_alive(p) for p in main) and time.monotonic() < end:
        time.sleep(0.05)
    assert not any(_alive(p) for p in main), "fio's main process outlived the killed sweep"
    # fio's forked job calls setsid() and survives; the resumed sweep must stop it before measuring
    assert workers and all(_alive(w) for w in workers)
    assert not (d / "q2.json").exists() and not (d / "q2.meta.json").exists()
    kept = {n: (d / n).stat().st_mtime_ns for n in ["q0.json", "q0.meta.json", "q1.json", "q1.meta.json"]}
    jobs = {f"q{i}": FioJob(f"q{i}", bs="4k", size="8m", runtime_s=0.2, direct=False, filename=str(test_file))
            for i in range(4)}
    res = run_sweep("fio-kill", [Point(n, {"i": n}) for n in jobs], FioRunner(jobs), tmp_path / "data", "h",
                    progress=False)
    assert [r.status for r in res] == ["cached", "cached", "done", "done"]
    assert {n: (d / n).stat().st_mtime_ns for n in kept} == kept
    assert [p.name for p in d.iterdir() if ".tmp" in p.name] == []
    assert json.loads((d / "q2.json").read_text())["jobs"][0]["read"]["total_ios"] > 0
    assert not any(_alive(w) for w in workers)
    assert json.loads((d / "q2.meta.json").read_text())["killed_stale_fio_pids"] == workers


@pytest.mark.fio
def test_rerun_remeasures_a_point_whose_jobs_overlapped(tmp_path, test_file, direct_ok):
    """S7-bare M-12 (workstream S item 1): a sequential point of 2 jobs recorded with the old command (no
    --offset_increment: both jobs over the same 8 MiB from offset 0) is re-measured by a rerun with the same params,
    not reused; a point recorded with today's command (4 MiB each, offset_increment 4 MiB) and a random point are
    cached."""
    jobs = {"seq-nj2": FioJob("seq-nj2", rw="write", bs="128k", numjobs=2, size="8m", runtime_s=0.3,
                              direct=direct_ok),
            "rand-nj2": FioJob("rand-nj2", rw="randwrite", bs="4k", numjobs=2, size="8m", runtime_s=0.3,
                               direct=direct_ok)}

    class TF:
        path = test_file

    points = [Point(n, {"rw": j.rw}, est_s=0.3) for n, j in jobs.items()]
    first = run_sweep("fio-regions", points, FioRunner(jobs, TF()), tmp_path / "data", "h", progress=False)
    assert [r.status for r in first] == ["done", "done"], [r.error for r in first]
    meta = json.loads(first[0].meta.read_text())
    assert "--offset_increment=4194304" in meta["command"] and "--size=4194304" in meta["command"]
    again = run_sweep("fio-regions", points, FioRunner(jobs, TF()), tmp_path / "data", "h", progress=False)
    assert [r.status for r in again] == ["cached", "cached"]
    old = [c for c in meta["command"] if not c.startswith("--offset_increment")]     # the job before 3d2d218
    first[0].meta.write_text(json.dumps(dict(meta, command=[c.replace("--size=4194304", "--size=8m") for c in old])))
    rerun = run_sweep("fio-regions", points, FioRunner(jobs, TF()), tmp_path / "data", "h", progress=False)
    assert [r.status for r in rerun] == ["done", "cached"], [r.error for r in rerun]
    new_meta = json.loads(rerun[0].meta.read_text())
    assert "--offset_increment=4194304" in new_meta["command"]
    # the earlier measurement is kept, not replaced: raw file and meta under superseded/<time>/, named by the new meta
    kept = rerun[0].meta.parent / new_meta["superseded"]
    assert kept.parent.name == "superseded" and rerun[0].meta.parent == kept.parent.parent
    assert json.loads((kept / rerun[0].meta.name).read_text())["command"] == [
        c.replace("--size=4194304", "--size=8m") for c in old]
    assert json.loads((kept / rerun[0].raw.name).read_text())["jobs"]  # fio's JSON of the first run
    assert "superseded" not in json.loads(rerun[1].meta.read_text())  # a cached point moved nothing


def test_only_a_done_measurement_is_set_aside(tmp_path):
    """memstor.core.files.set_aside: a point whose meta says failed (or has no meta) has nothing to keep; a done
    one moves with its sidecar folder, and a second re-measurement gets its own folder."""
    meta, raw, files = tmp_path / "p.meta.json", tmp_path / "p.json", tmp_path / "p.files"
    assert set_aside(tmp_path, meta, [raw, files], "2026-11-28T13:00:00Z") is None  # nothing measured yet
    meta.write_text(json.dumps({"status": "failed"}))
    assert set_aside(tmp_path, meta, [raw, files], "2026-11-28T13:00:00Z") is None and meta.is_file()
    meta.write_text(json.dumps({"status": "done"}))
    raw.write_text("{}")
    files.mkdir()
    (files / "lat.log").write_text("1")
    assert set_aside(tmp_path, meta, [raw, files], "2026-11-28T13:00:00Z") == "superseded/2026-11-28T130000Z"
    assert not meta.exists() and not raw.exists() and not files.exists()
    assert (tmp_path / "superseded/2026-11-28T130000Z/p.files/lat.log").read_text() == "1"
    meta.write_text(json.dumps({"status": "done"}))
    assert set_aside(tmp_path, meta, [raw, files], "2026-11-28T13:05:00Z") == "superseded/2026-11-28T130500Z"
