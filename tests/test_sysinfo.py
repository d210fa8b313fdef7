"""memstor.measure.sysinfo on this real machine, checked against independent sources (getconf, df, uname...)."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from memstor.measure import sysinfo
from memstor.measure.sysinfo import collect, host_name, parse_cache_size


def test_host_name_is_file_safe(monkeypatch):
    monkeypatch.delenv("MEMSTOR_HOST", raising=False)
    expected = re.sub(r"[^A-Za-z0-9._-]+", "-", socket.gethostname()).lstrip("._-") or "unknown-host"
    assert host_name() == expected
    for raw, safe in [("lab box/../x", "lab-box-..-x"), ("..", "unknown-host"), ("é-server 2", "server-2"),
                      ("node01.cluster.example", "node01.cluster.example")]:
        monkeypatch.setenv("MEMSTOR_HOST", raw)
        assert host_name() == safe
        assert "/" not in host_name() and host_name() not in (".", "..")


def test_parse_cache_size():
    assert parse_cache_size("32K") == 32768
    assert parse_cache_size("32768K") == 32 << 20
    assert parse_cache_size("1 MiB") == 1 << 20
    assert parse_cache_size("512") == 512
    assert parse_cache_size("big") is None


@pytest.fixture(scope="module")
def info(tmp_path_factory) -> dict:
    return collect(tmp_path_factory.mktemp("target"))


@pytest.mark.fio
@pytest.mark.loadlat
def test_collect_matches_independent_sources(info):
    json.dumps(info)  # JSON-able as is
    assert info["host"] == host_name()
    cpu = info["cpu"]
    assert cpu["logical_cpus"] == os.cpu_count()
    names = re.findall(r"^model name\s*:\s*(.+)$", Path("/proc/cpuinfo").read_text(), re.MULTILINE)
    if names:
        assert cpu["model"] == names[0].strip()
    assert cpu["physical_cores"] is None or 1 <= cpu["physical_cores"] <= cpu["logical_cpus"]
    assert cpu["sockets"] is None or 1 <= cpu["sockets"] <= cpu["physical_cores"]
    mem_kb = int(re.search(r"^MemTotal:\s+(\d+) kB", Path("/proc/meminfo").read_text(), re.MULTILINE).group(1))
    assert info["memory"]["total_bytes"] == mem_kb * 1024
    assert info["memory"]["numa_nodes"] == len(list(Path("/sys/devices/system/node").glob("node[0-9]*"))) or \
        info["memory"]["numa_nodes"] is None
    thp = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    if thp.exists():
        assert f"[{info['memory']['thp_enabled']}]" in thp.read_text()
    assert info["os"]["kernel"] == os.uname().release
    assert info["tools"]["fio"] == subprocess.run(["fio", "--version"], capture_output=True, text=True).stdout.strip()
    assert isinstance(info["notes"], list) and all(isinstance(n, str) and "\n" not in n for n in info["notes"])


@pytest.mark.fio
@pytest.mark.loadlat
def test_caches_match_lscpu_per_instance(info):
    """lscpu -C reads the same hardware through its own code; ONE-SIZE is the per-instance size in bytes.
    (getconf is not used: glibc reports some AMD L3s summed over all CCXs.)"""
    if shutil.which("lscpu") is None:
        pytest.skip("lscpu not installed")
    res = subprocess.run(["lscpu", "-C=NAME,ONE-SIZE", "-B"], capture_output=True, text=True)
    sizes = dict(ln.split() for ln in res.stdout.splitlines()[1:] if len(ln.split()) == 2)
    if not sizes:
        pytest.skip("lscpu -C reports no caches here")
    for name, size in sizes.items():
        assert info["caches"][f"{name}_bytes"] == int(size), name


@pytest.mark.fio
@pytest.mark.loadlat
def test_target_filesystem_matches_df(info, tmp_path_factory):
    t = info["target"]
    df = subprocess.run(["df", "--output=fstype,target", t["path"]], capture_output=True, text=True)
    fstype, mnt = df.stdout.splitlines()[1].split(None, 1)
    assert t["fstype"] == fstype and t["mountpoint"] == mnt.strip()
    assert t["free_bytes"] > 0
    if t["source"].startswith("/dev/"):
        assert t["disks"] and all(d["size_bytes"] > 0 for d in t["disks"])
        assert t["disks"][0]["size_bytes"] == int(Path(f"/sys/block/{t['disks'][0]['name']}/size").read_text()) * 512


def test_never_fails_without_tools_and_with_missing_target(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no fio, lscpu, findmnt, lsblk, mlc
    monkeypatch.delenv("MEMSTOR_FIO", raising=False)
    monkeypatch.setenv("LOADLAT", str(tmp_path / "no-loadlat"))
    info = collect(tmp_path / "not" / "yet")
    json.dumps(info)
    assert info["tools"]["fio"] is None and info["tools"]["loadlat"] is None
    assert any(n.startswith("tools.fio: fio not found on PATH") for n in info["notes"])
    assert info["target"]["fstype"]  # from /proc/self/mountinfo, for the nearest existing parent
    assert info["memory"]["total_bytes"] > 0


@pytest.mark.fio
@pytest.mark.loadlat
def test_mlc_version_is_time_boxed(monkeypatch, tmp_path):
    """An `mlc` that answers, then one that hangs (as MLC can when it waits for root): never stuck."""
    mlc = tmp_path / "mlc"
    mlc.write_text("#!/bin/sh\necho 'Intel(R) Memory Latency Checker - v3.11'\n")
    mlc.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    notes: list[str] = []
    assert sysinfo.tool_versions(notes)["mlc"] == "v3.11"
    mlc.write_text("#!/bin/sh\nexec sleep 30\n")
    monkeypatch.setattr(sysinfo, "CMD_TIMEOUT_S", 0.5)
    t0 = time.monotonic()
    notes = []
    out = sysinfo.tool_versions(notes)
    assert time.monotonic() - t0 < 5
    assert out["mlc"] is None and out["mlc_path"] == str(mlc)
    assert any("took more than" in n for n in notes)


@pytest.mark.fio
@pytest.mark.loadlat
def test_cli_shape_is_json_serialisable_with_no_target():
    info = collect()
    assert info["target"] is None and json.loads(json.dumps(info))["host"] == host_name()
    assert shutil.which("fio") is None or info["tools"]["fio"].startswith("fio-")
