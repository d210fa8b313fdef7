"""loadlat's NUMA placement of the loaded-latency load (MLC's rule): on several nodes every buffer goes to the
latency thread's node, said on a '#' line and in the JSON; on one node each thread's buffer stays local. Fake
node layouts through LOADLAT_NODE_DIR (mbind fails for a fake node; the latency CPU then touches first)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.loadlat


def _cpus() -> list[int]:
    return sorted(os.sched_getaffinity(0))


def _nodes(tmp_path: Path, layout: list[list[int]]) -> Path:
    """A LOADLAT_NODE_DIR with one folder per node of ``layout`` (CPU lists)."""
    d = tmp_path / "nodes"
    for node, cpus in enumerate(layout):
        (d / f"node{node}").mkdir(parents=True)
        (d / f"node{node}" / "cpulist").write_text(",".join(map(str, cpus)) + "\n")
        (d / f"node{node}" / "meminfo").write_text(f"Node {node} MemTotal:       1000000 kB\n")
    return d


def _loaded(exe: Path, tmp_path: Path, lat: int, load: int, node_dir: Path | None) -> tuple[str, dict]:
    js = tmp_path / "ll.json"
    env = dict(os.environ)
    if node_dir is not None:
        env["LOADLAT_NODE_DIR"] = str(node_dir)
    res = subprocess.run([str(exe), "--loaded_latency", "-b4m", "-t0.1", "-d0", f"-c{lat}", f"-k{load}",
                          f"--json={js}"], capture_output=True, text=True, timeout=120, env=env)
    assert res.returncode == 0, res.stderr
    return res.stdout, json.loads(js.read_text())


def _buffers(doc: dict) -> list[dict]:
    found: list[dict] = []

    def walk(x):
        if isinstance(x, dict):
            if "role" in x and "bytes" in x:
                found.append(x)
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(doc)
    return found


@pytest.mark.parametrize("lat_node", [0, 1])
def test_two_nodes_put_the_load_on_the_latency_threads_node(loadlat_bin, tmp_path, lat_node):
    cpus = _cpus()
    if len(cpus) < 2:
        pytest.skip("needs 2 CPUs in the affinity mask (a latency and a load thread on different nodes)")
    a, b = cpus[:2]
    lat, load = (a, b) if lat_node == 0 else (b, a)
    text, doc = _loaded(loadlat_bin, tmp_path, lat, load, _nodes(tmp_path, [[a], [b]]))
    assert f"# NUMA: every buffer on node {lat_node}, the latency thread's" in text
    bufs = _buffers(doc)
    assert bufs and all(buf.get("node") == lat_node for buf in bufs)  # the load threads' buffers too
    assert {buf["cpu"] for buf in bufs} == {lat, load}


def test_one_node_keeps_each_buffer_local_and_says_nothing(loadlat_bin, tmp_path):
    cpus = _cpus()
    if len(cpus) < 2:
        pytest.skip("needs 2 CPUs in the affinity mask (a latency and a load thread)")
    text, doc = _loaded(loadlat_bin, tmp_path, cpus[0], cpus[1], _nodes(tmp_path, [cpus[:2]]))
    assert "# NUMA:" not in text
    assert all("node" not in buf for buf in _buffers(doc))
