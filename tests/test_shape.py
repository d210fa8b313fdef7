"""memstor.measure.shape (the CPUs and memory memstor may use) on /proc and /sys trees built in tmp_path:
cgroup v1 and v2 CPU quotas and memory limits with their parents, SMT siblings, NUMA nodes, malformed files;
and on this machine, only relations that hold anywhere."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from memstor.measure.shape import (
    CpuShape,
    cpu_shape,
    memory_shape,
    parse_cpu_list,
    usable_cpus,
    usable_memory_bytes,
)

GIB = 2**30
SIXTEEN = range(16)


def _tree(root: Path, files: dict[str, str]) -> Path:
    """A fake root holding ``files`` (path under root -> text)."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _v2(root: Path, folders: dict[str, dict[str, str]], cgroup: str = "/a/b") -> Path:
    """A cgroup v2 tree: the process in ``cgroup``; folders (relative to /sys/fs/cgroup) -> their files."""
    files = {"proc/self/cgroup": f"0::{cgroup}\n", "sys/fs/cgroup/cgroup.controllers": "cpu memory\n"}
    for folder, contents in folders.items():
        for name, text in contents.items():
            files[f"sys/fs/cgroup/{folder}/{name}".replace("//", "/")] = text
    (root / "sys/fs/cgroup" / cgroup.lstrip("/")).mkdir(parents=True, exist_ok=True)
    return _tree(root, files)


# ------------------------------------------------------------------------------------------ CPU lists
@pytest.mark.parametrize("text,cpus", [("0-3,8,10-11", (0, 1, 2, 3, 8, 10, 11)), ("0", (0,)), ("0,8", (0, 8)),
                                       ("5-5", (5,)), ("", ()), ("3,1-2\n", (1, 2, 3))])
def test_parse_cpu_list(text, cpus):
    assert parse_cpu_list(text) == cpus


@pytest.mark.parametrize("text", ["a", "0-", "3-1", "0,,1", "1;2", "-1"])
def test_parse_cpu_list_rejects_bad_text_naming_it(text):
    with pytest.raises(ValueError, match="not a CPU list"):
        parse_cpu_list(text)


# ------------------------------------------------------------------------------------------ CPU quota
def test_v2_quota_of_2_cpus_caps_16_cpus(tmp_path):
    shape = cpu_shape(_v2(tmp_path, {"a/b": {"cpu.max": "200000 100000\n"}}), affinity=SIXTEEN)
    assert (shape.quota_cpus, shape.usable, shape.affinity) == (2.0, 2, tuple(SIXTEEN))
    assert "affinity 0-15 (16 CPUs, given)" in shape.source
    assert "cpu.max 2 CPUs (/sys/fs/cgroup/a/b)" in shape.source
    assert "-> 2 usable" in shape.source


def test_v2_max_is_no_quota(tmp_path):
    shape = cpu_shape(_v2(tmp_path, {"a/b": {"cpu.max": "max 100000\n"}, "a": {"cpu.max": "max 100000"}}),
                      affinity=SIXTEEN)
    assert (shape.quota_cpus, shape.usable) == (None, 16)
    assert "no cgroup v2 CPU quota" in shape.source


def test_a_parents_tighter_quota_binds_the_child(tmp_path):
    root = _v2(tmp_path, {"a/b": {"cpu.max": "800000 100000"}, "a": {"cpu.max": "200000 100000"}})
    shape = cpu_shape(root, affinity=SIXTEEN)
    assert (shape.quota_cpus, shape.usable) == (2.0, 2) and "(/sys/fs/cgroup/a)" in shape.source


def test_a_childs_tighter_quota_binds_under_a_looser_parent(tmp_path):
    root = _v2(tmp_path, {"a/b": {"cpu.max": "300000 100000"}, "a": {"cpu.max": "800000 100000"}})
    assert cpu_shape(root, affinity=SIXTEEN).usable == 3


def test_a_folder_beside_the_process_does_not_bind(tmp_path):
    root = _v2(tmp_path, {"a/b": {"cpu.max": "max 100000"}, "a/other": {"cpu.max": "100000 100000"}})
    assert cpu_shape(root, affinity=SIXTEEN).usable == 16


@pytest.mark.parametrize("cpu_max,quota,usable", [("150000 100000", 1.5, 2), ("50000 100000", 0.5, 1),
                                                  ("100000 100000", 1.0, 1), ("250000 100000", 2.5, 3)])
def test_a_fractional_quota_rounds_up(tmp_path, cpu_max, quota, usable):
    shape = cpu_shape(_v2(tmp_path, {"a/b": {"cpu.max": cpu_max}}), affinity=SIXTEEN)
    assert (shape.quota_cpus, shape.usable) == (quota, usable)


def test_a_quota_above_the_affinity_mask_leaves_the_mask(tmp_path):
    shape = cpu_shape(_v2(tmp_path, {"a/b": {"cpu.max": "3200000 100000"}}), affinity=[4, 5, 6, 7])
    assert (shape.quota_cpus, shape.usable, shape.affinity) == (32.0, 4, (4, 5, 6, 7))


def test_a_containers_host_path_is_read_at_the_mount_root(tmp_path):
    root = _v2(tmp_path, {"": {"cpu.max": "400000 100000"}}, cgroup="/")
    # no such folder: the mount's root is the container's own cgroup
    (root / "proc/self/cgroup").write_text("0::/docker/0123abcd\n")
    assert cpu_shape(root, affinity=SIXTEEN).usable == 4


@pytest.mark.parametrize("mount", ["cpu,cpuacct", "cpu"])
def test_v1_cfs_quota(tmp_path, mount):
    root = _tree(tmp_path, {"proc/self/cgroup": "4:memory:/x\n3:cpu,cpuacct:/x\n0::/\n",
                            f"sys/fs/cgroup/{mount}/x/cpu.cfs_quota_us": "300000\n",
                            f"sys/fs/cgroup/{mount}/x/cpu.cfs_period_us": "100000\n",
                            f"sys/fs/cgroup/{mount}/cpu.cfs_quota_us": "-1\n",
                            "sys/fs/cgroup/unified/cgroup.procs": ""})
    shape = cpu_shape(root, affinity=SIXTEEN)
    assert (shape.quota_cpus, shape.usable) == (3.0, 3) and "cpu.cfs_quota_us 3 CPUs" in shape.source


def test_v1_quota_minus_one_is_no_quota(tmp_path):
    root = _tree(tmp_path, {"proc/self/cgroup": "2:cpuacct:/\n1:cpu:/\n0::/\n",
                            "sys/fs/cgroup/cpu/cpu.cfs_quota_us": "-1\n",
                            "sys/fs/cgroup/cpu/cpu.cfs_period_us": "100000\n"})
    shape = cpu_shape(root, affinity=SIXTEEN)
    assert (shape.quota_cpus, shape.usable) == (None, 16) and "no cgroup v1 CPU quota" in shape.source


def test_no_cgroup_file_is_no_limit(tmp_path):
    shape = cpu_shape(tmp_path, affinity=SIXTEEN)
    assert (shape.quota_cpus, shape.usable) == (None, 16) and "no /proc/self/cgroup" in shape.source


def test_an_empty_mask_still_gives_one_usable_cpu(tmp_path):
    assert cpu_shape(tmp_path, affinity=[]).usable == 1


# --------------------------------------------------------------------------------------- SMT and NUMA
def _topology(root: Path, groups: list[str], n: int) -> Path:
    """thread_siblings_list for CPUs 0..n-1: each group text is written for each of its CPUs."""
    files = {}
    for text in groups:
        for cpu in parse_cpu_list(text):
            if cpu < n:
                files[f"sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list"] = text + "\n"
    return _tree(root, files)


def test_smt_siblings_as_comma_lists(tmp_path):
    root = _topology(tmp_path, [f"{c},{c + 8}" for c in range(8)], 16)
    shape = cpu_shape(root, affinity=SIXTEEN)
    assert shape.siblings[0] == (8,) and shape.siblings[8] == (0,) and shape.smt_threads_per_core == 2
    assert shape.cores() == [(c, c + 8) for c in range(8)]
    assert shape.sibling_free([0, 8, 1, 9, 2]) == (0, 1, 2)
    assert "SMT 2 threads/core" in shape.source


def test_smt_siblings_as_ranges_within_the_mask(tmp_path):
    root = _topology(tmp_path, ["0-1", "2-3", "4-5"], 6)
    shape = cpu_shape(root, affinity=[0, 1, 2, 4, 5])
    assert shape.siblings == {0: (1,), 1: (0,), 2: (3,), 4: (5,), 5: (4,)}
    assert shape.cores() == [(0, 1), (2,), (4, 5)]  # CPU 3 is outside the mask
    assert shape.sibling_free([1, 0, 2, 4, 5]) == (1, 2, 4)


def test_no_smt_or_unknown_topology(tmp_path):
    shape = cpu_shape(_topology(tmp_path, ["0", "1"], 2), affinity=[0, 1])
    unknown = cpu_shape(tmp_path / "empty", affinity=[0, 1])
    for s in (shape, unknown):
        assert s.siblings == {0: (), 1: ()} and s.smt_threads_per_core == 1
        assert s.cores() == [(0,), (1,)] and s.sibling_free([1, 0, 1]) == (1, 0)


def test_two_numa_nodes(tmp_path):
    root = _tree(tmp_path, {"sys/devices/system/node/node0/cpulist": "0-3,8-11\n",
                            "sys/devices/system/node/node1/cpulist": "4-7,12-15\n",
                            "sys/devices/system/node/node2/cpulist": "\n",  # memory only (CXL)
                            "sys/devices/system/node/online": "0-2\n"})
    shape = cpu_shape(root, affinity=SIXTEEN)
    assert shape.nodes == {0: (0, 1, 2, 3, 8, 9, 10, 11), 1: (4, 5, 6, 7, 12, 13, 14, 15), 2: ()}
    assert (shape.node_of(9), shape.node_of(4), shape.node_of(99)) == (0, 1, None)
    assert "3 NUMA nodes" in shape.source


def test_no_node_folder_is_no_numa_information(tmp_path):
    shape = cpu_shape(tmp_path, affinity=SIXTEEN)
    assert shape.nodes == {} and shape.node_of(0) is None and "NUMA nodes unknown" in shape.source


# --------------------------------------------------------------------------------------------- memory
MEMINFO = "MemTotal:       32000000 kB\nMemFree:         1000000 kB\nMemAvailable:   16000000 kB\n"


def test_mem_available_alone(tmp_path):
    shape = memory_shape(_tree(tmp_path, {"proc/meminfo": MEMINFO}))
    assert shape.mem_available_bytes == shape.usable_bytes == 16_000_000 * 1024
    assert shape.cgroup_limit_bytes is None and shape.cgroup_usage_bytes is None
    assert "MemAvailable" in shape.source


def test_v2_memory_max_below_mem_available_binds(tmp_path):
    root = _v2(tmp_path, {"a/b": {"memory.max": f"{4 * GIB}\n", "memory.current": f"{GIB}\n"}})
    (root / "proc/meminfo").write_text(MEMINFO)
    shape = memory_shape(root)
    assert (shape.cgroup_limit_bytes, shape.cgroup_usage_bytes, shape.usable_bytes) == (4 * GIB, GIB, 3 * GIB)
    assert "memory.max 4 GiB - memory.current 1 GiB (/sys/fs/cgroup/a/b) -> 3 GiB usable" in shape.source


def test_v2_memory_max_above_mem_available_leaves_mem_available(tmp_path):
    root = _v2(tmp_path, {"a/b": {"memory.max": f"{64 * GIB}", "memory.current": f"{GIB}"}})
    (root / "proc/meminfo").write_text(MEMINFO)
    shape = memory_shape(root)
    assert shape.cgroup_limit_bytes == 64 * GIB and shape.usable_bytes == 16_000_000 * 1024


def test_v2_memory_max_max_is_no_limit(tmp_path):
    root = _v2(tmp_path, {"a/b": {"memory.max": "max\n", "memory.current": f"{GIB}\n"}})
    (root / "proc/meminfo").write_text(MEMINFO)
    shape = memory_shape(root)
    assert (shape.cgroup_limit_bytes, shape.cgroup_usage_bytes) == (None, None)
    assert shape.usable_bytes == 16_000_000 * 1024 and "no cgroup v2 memory limit" in shape.source


def test_the_parent_with_least_room_binds_and_usage_over_limit_is_zero(tmp_path):
    root = _v2(tmp_path, {"a/b": {"memory.max": f"{8 * GIB}", "memory.current": f"{GIB}"},
                          "a": {"memory.max": f"{10 * GIB}", "memory.current": f"{9 * GIB}"}})
    shape = memory_shape(root)  # no meminfo: the cgroup alone
    assert (shape.cgroup_limit_bytes, shape.cgroup_usage_bytes) == (10 * GIB, 9 * GIB)
    assert shape.usable_bytes == GIB
    (root / "sys/fs/cgroup/a/memory.current").write_text(f"{11 * GIB}")
    assert memory_shape(root).usable_bytes == 0


@pytest.mark.parametrize("limit,expected", [(9223372036854771712, None), (2**60, None), (2 * GIB, 2 * GIB)])
def test_v1_memory_limit(tmp_path, limit, expected):
    root = _tree(tmp_path, {"proc/self/cgroup": "4:memory:/x/y\n1:cpu:/\n0::/\n", "proc/meminfo": MEMINFO,
                            "sys/fs/cgroup/memory/x/y/memory.limit_in_bytes": f"{limit}\n",
                            "sys/fs/cgroup/memory/x/y/memory.usage_in_bytes": f"{GIB // 2}\n",
                            "sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n",
                            "sys/fs/cgroup/memory/memory.usage_in_bytes": f"{20 * GIB}\n"})
    shape = memory_shape(root)
    assert shape.cgroup_limit_bytes == expected
    assert shape.usable_bytes == (16_000_000 * 1024 if expected is None else expected - GIB // 2)


# ------------------------------------------------------------------------------------------ malformed
def test_malformed_files_are_unknown_and_said(tmp_path):
    root = _v2(tmp_path, {"a/b": {"cpu.max": "lots of cpus\n", "memory.max": "much\n", "memory.current": "1"},
                          "a": {"cpu.max": "0 100000", "memory.max": f"{GIB}", "memory.current": "?"}})
    _tree(root, {"proc/meminfo": "MemTotal: 1 kB\nMemAvailable: lots\n",
                 "sys/devices/system/cpu/cpu0/topology/thread_siblings_list": "x-y\n",
                 "sys/devices/system/node/node0/cpulist": "zz\n"})
    shape, memory = cpu_shape(root, affinity=[0, 1]), memory_shape(root)
    assert (shape.quota_cpus, shape.usable, shape.siblings, shape.nodes) == (None, 2, {0: (), 1: ()}, {})
    for said in ("cpu.max is 'lots of cpus'", "cpu.max is '0 100000'", "node0/cpulist",
                 "malformed thread_siblings_list for CPUs 0"):
        assert said in shape.source
    assert (memory.mem_available_bytes, memory.cgroup_usage_bytes) == (None, None)
    assert memory.cgroup_limit_bytes == memory.usable_bytes == GIB
    assert "memory.max is 'much'" in memory.source and "usage unknown" in memory.source
    assert "MemAvailable unknown" in memory.source


def test_malformed_v1_and_cgroup_lines_raise_nothing(tmp_path):
    root = _tree(tmp_path, {"proc/self/cgroup": "garbage\n3:cpu:/x\n",
                            "sys/fs/cgroup/cpu/x/cpu.cfs_quota_us": "abc\n",
                            "sys/fs/cgroup/cpu/cpu.cfs_quota_us": "50000\n",  # no period beside it
                            "proc/meminfo": "\x00\x01"})
    shape, memory = cpu_shape(root, affinity=SIXTEEN), memory_shape(root)
    assert (shape.quota_cpus, shape.usable) == (None, 16)
    assert "not understood" in shape.source and "cpu.cfs_quota_us is 'abc'" in shape.source
    assert memory.usable_bytes is None and "usable unknown" in memory.source


def test_an_unreadable_cgroup_file_is_no_limit(tmp_path):
    root = _v2(tmp_path, {"a/b": {}})
    (root / "sys/fs/cgroup/a/b/cpu.max").mkdir()  # a folder where a file should be: reading it fails
    assert cpu_shape(root, affinity=SIXTEEN).usable == 16


# ----------------------------------------------------------------------------------- the real machine
def test_the_real_machine_holds_the_relations():
    shape, memory = cpu_shape(), memory_shape()
    assert isinstance(shape, CpuShape) and 1 <= shape.usable <= len(shape.affinity)
    if hasattr(os, "sched_getaffinity"):
        assert set(shape.affinity) == os.sched_getaffinity(0)
    assert shape.quota_cpus is None or shape.usable == min(len(shape.affinity), math.ceil(shape.quota_cpus))
    assert set(shape.siblings) == set(shape.affinity)
    assert sorted(c for core in shape.cores() for c in core) == list(shape.affinity)
    if memory.mem_available_bytes is not None:
        assert memory.usable_bytes is not None and 0 < memory.usable_bytes <= memory.mem_available_bytes
    assert usable_cpus() == shape.usable and isinstance(usable_memory_bytes(), int | None)
    assert shape.source and memory.source
