"""A real cgroup CPU quota (not a faked tree): memstor started inside a cgroup whose quota is below the CPUs of
its affinity mask computes its shares over the quota (sysinfo's usable CPUs, the fio CPU check's denominator),
and the memory family uses one load thread fewer than the quota allows beside its latency thread, or says in one
line that it cannot run (exit 3). Needs root and a writable cgroup v1 ``cpu`` hierarchy (or cgroup v2 with the
cpu controller delegable); skips with the reason otherwise."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from memstor.analysis.validity.openloop import cores

pytestmark = pytest.mark.loadlat  # the memory family runs loadlat

V1 = Path("/sys/fs/cgroup/cpu")
V2 = Path("/sys/fs/cgroup")


@contextlib.contextmanager
def quota_cgroup(cpus: int) -> Iterator[Path]:
    """A new cgroup with a CPU quota of ``cpus`` CPUs (100 ms period); removed after (its processes gone)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to create a cgroup")
    name = f"memstor-test-{uuid.uuid4().hex[:8]}"
    if (V1 / "cpu.cfs_quota_us").exists():
        folder = V1 / name
        quota = [("cpu.cfs_period_us", "100000"), ("cpu.cfs_quota_us", str(cpus * 100000))]
    elif (V2 / "cgroup.controllers").exists() and "cpu" in (V2 / "cgroup.controllers").read_text().split():
        folder = V2 / name
        quota = [("cpu.max", f"{cpus * 100000} 100000")]
    else:
        pytest.skip("no cgroup v1 cpu hierarchy and no cgroup v2 cpu controller here")
    try:
        folder.mkdir()
        for file, value in quota:
            (folder / file).write_text(value)
    except OSError as err:
        with contextlib.suppress(OSError):
            folder.rmdir()
        pytest.skip(f"cannot create a cgroup with a CPU quota here ({err.strerror})")
    try:
        yield folder
    finally:
        with contextlib.suppress(OSError):
            folder.rmdir()


def run_in(folder: Path, args: list[str], timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``args`` as a process that joins ``folder`` before it starts."""
    def join() -> None:
        (folder / "cgroup.procs").write_text(str(os.getpid()))
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, preexec_fn=join,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})


def _quota_below_affinity() -> int:
    n = len(os.sched_getaffinity(0))
    if n < 2:
        pytest.skip("needs 2 CPUs in the affinity mask to set a quota below it")
    return 2 if n >= 3 else 1


def test_shares_are_computed_over_the_cgroup_quota(tmp_path):
    quota = _quota_below_affinity()
    with quota_cgroup(quota) as folder:
        res = run_in(folder, [sys.executable, "-m", "memstor.cli", "sysinfo", "--data", str(tmp_path)])
    assert res.returncode == 0, res.stderr
    info = json.loads(res.stdout)
    shape = info["shape"]
    assert shape["usable_cpus"] == quota and shape["affinity_cpus"] == len(os.sched_getaffinity(0))
    assert shape["cpu_quota"] == pytest.approx(quota) and str(folder.name) in shape["cpu_source"]
    assert cores(info) == quota  # the fio CPU check's denominator


def test_memory_family_stays_within_the_quota_or_says_why_not(tmp_path):
    quota = _quota_below_affinity()
    args = [sys.executable, "-m", "memstor.cli", "run", "mlc-loaded-latency", "--profile", "quick", "--data",
            str(tmp_path / "data"), "--no-progress", "--set", "tool=loadlat", "--set", "seconds_per_point=0.2",
            "--set", "buffer_kib=65536", "--set", "delays=[0]", "--set", "read_shares=[]", "--set", "sections=[]",
            "--set", "traffic=[R]", "--skip-note", str(tmp_path / "why.txt")]
    with quota_cgroup(quota) as folder:
        res = run_in(folder, args)
    if quota == 1:  # one CPU of quota: no load thread beside the latency one
        assert res.returncode == 3, res.stderr
        why = (tmp_path / "why.txt").read_text()
        assert "needs a CPU for a load thread" in why and why.count("\n") == 1
        assert "not run on this machine" in res.stderr and "Traceback" not in res.stderr
    else:
        assert res.returncode == 0, res.stderr
        said = [ln for ln in res.stderr.splitlines() if "load CPUs" in ln]
        assert said and "quota" in said[0]
        load = said[0].split("load CPUs ")[1].split(" ")[0]
        assert "," not in load and "-" not in load  # one load thread: quota 2 = latency + 1 load
