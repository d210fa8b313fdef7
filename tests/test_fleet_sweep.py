"""`memstor run fio-queue-depth --hosts FILE` for real (issue 20, acceptance 1-4) on namespace hosts.

Three network namespaces with their own address and sshd (tests/fleet_helpers.py; skipped with the reason
when this machine cannot make them, failed instead under MEMSTOR_REQUIRE_FLEET=1 as in CI). The hosts run
this checkout's memstor over SSH (``memstor:`` in the host file); the filesystem is shared, the network is
not. Points are tiny (1 s, 16 MiB test files) because this machine is shared."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import two_allowed_cpus
from fleet_helpers import fio_pids, fleet_hosts_fixture, ns_pids
from memstor.analysis.cluster import merge_bins
from memstor.measure.target import TESTFILE_NAME

MEMSTOR = str(Path(sys.executable).parent / "memstor")
#: A quick queue-depth sweep small enough for a shared 2-vCPU machine: 2 depths + the spec point.
SMALL = ["--profile", "quick", "--set", "runtime_s=1", "--set", "ramp_s=0", "--set", "file_size=16m",
         "--set", "rw=[randread]", "--set", "iodepth=[1,4]", "--set", "spec_iodepth=2", "--set", "spec_numjobs=1",
         "--set", "direct=0", "--no-progress"]


#: Points long enough to see a job start on a host and kill something mid-run.
LONGER = [*SMALL, "--set", "runtime_s=3"]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    yield from fleet_hosts_fixture(tmp_path_factory, 3)


def host_file(fleet, path: Path, n: int = 3, labels=None, ports=None) -> Path:
    """A host file for the first n namespace hosts (label ns1..nN), checked against the test known_hosts;
    ``ports``: {host index: SSH port} (default 22)."""
    lines = ["hosts:"]
    for i, h in enumerate(fleet.hosts[:n]):
        lines += [f"  - ssh: root@{h.address}", f"    target: {h.target}", f"    port: {(ports or {}).get(i, 22)}",
                  f"    label: {(labels or {}).get(i, f'ns{i + 1}')}", f"    identity_file: {fleet.identity_file}",
                  f"    known_hosts: {fleet.known_hosts}", f"    memstor: {MEMSTOR}"]
    path.write_text("\n".join(lines) + "\n")
    return path


def memstor(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([MEMSTOR, *args], capture_output=True, text=True, timeout=timeout)


def in_background(*args: str) -> tuple[threading.Thread, dict]:
    """``memstor *args`` in a thread (started); its CompletedProcess lands in the dict under "r"."""
    got: dict = {}
    run = threading.Thread(target=lambda: got.update(r=memstor(*args)))
    run.start()
    return run, got


def wait_serving(fleet, th, run: threading.Thread, timeout: float = 60) -> None:
    """Wait until ``th`` runs a fio server and its job (not memstor testfile's engine probes): a point runs."""
    def serving(pids: list[int]) -> bool:
        return len(pids) >= 2 and any(b"--server" in Path(f"/proc/{p}/cmdline").read_bytes() for p in pids
                                      if Path(f"/proc/{p}/cmdline").exists())

    deadline = time.monotonic() + timeout
    while not serving(ns_pids(th.ns, "fio")) and run.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)


def raw_points(data: Path) -> dict[Path, int]:
    """{raw point file: mtime_ns} of every host (fio's per-host JSON; metas, manifests and sidecars left out)."""
    return {p: p.stat().st_mtime_ns for p in (data / "raw").rglob("*.json")
            if p.name != "manifest.json" and not p.name.endswith(".meta.json") and not p.parent.name.endswith(".files")}


def connects(fleet, ns: str, address: str, port: int) -> bool:
    r = fleet.ns_exec(ns, "timeout", "3", "bash", "-c", f"exec 3<>/dev/tcp/{address}/{port}")
    return r.returncode == 0


@pytest.mark.fleet
@pytest.mark.fio
def test_a_quick_sweep_runs_on_every_host_at_once_with_a_cluster_aggregate(fleet, tmp_path):
    """Acceptance 1 and 2."""
    hosts, data = host_file(fleet, tmp_path / "rack.yaml"), tmp_path / "data"
    run, got = in_background("run", "fio-queue-depth", "--hosts", str(hosts), "--data", str(data), *SMALL)
    probes = 0
    while run.is_alive():  # acceptance 2: no fio port is reachable from another namespace during the run
        for i, th in enumerate(fleet.hosts):
            out = fleet.ns_exec(th.ns, "ss", "-Hltnp").stdout
            for line in out.splitlines():
                if '"fio"' in line:
                    local = line.split()[3]
                    assert local.startswith("127.0.0.1:"), line
                    other = fleet.hosts[(i + 1) % 3]
                    assert not connects(fleet, other.ns, th.address, int(local.rsplit(":", 1)[1]))
                    probes += 1
        time.sleep(0.2)
    run.join()
    r = got["r"]
    assert r.returncode == 0, r.stderr
    assert probes > 0
    assert fio_pids(fleet) == []  # every server ended with the run
    tables = {}
    for i in (1, 2, 3):
        label = f"ns{i}"
        raw = data / "raw" / label / "fio-queue-depth"
        meta = [json.loads(m.read_text()) for m in sorted(raw.glob("*.meta.json"))]
        assert len(meta) == 3 and {m["status"] for m in meta} == {"done"}
        assert all(m["host"] == label and m["ssh"] == f"root@{fleet.hosts[i - 1].address}" for m in meta)
        assert all(m["tool_version"].startswith("fio-") and "--client=" in m["command_line"] for m in meta)
        assert all(m["fleet"] == ["ns1", "ns2", "ns3"] for m in meta)
        # the test file memstor made and marked on that host, named in every job
        assert all(f"filename={fleet.hosts[i - 1].target / TESTFILE_NAME}" in m["job"] for m in meta)
        # each point keeps the interval logs fio's client received and the client's whole output
        for m in meta:
            files = raw / f"{m['point']}.files"
            assert sorted(p.name for p in files.glob("fio_iops.*.log")) == ["fio_iops.1.log"]
            assert (files / "fio_client.json").is_file()
        df = pd.read_csv(data / "processed" / label / "fio-queue-depth.csv")
        assert len(df) == 3 and (df["status"] == "done").all() and (df["iops"] > 0).all()
        assert (df["ci_method"] == "batch-means").any() or df["ci_note"].notna().all()
        assert json.loads((data / "processed" / label / "sysinfo.json").read_text())["device"]["kind"] == "fleet-host"
        tables[label] = df
    cluster = pd.read_csv(data / "processed" / "rack" / "fio-queue-depth-cluster.csv")
    assert len(cluster) == 3 and (cluster["n_hosts"] == 3).all()
    for _, row in cluster.iterrows():
        docs = [json.loads((data / "raw" / f"ns{i}" / "fio-queue-depth" / f"{row['point']}.json").read_text())
                for i in (1, 2, 3)]
        # summed IOPS, and p99 of the merged bins checked independently (numpy on the expanded samples)
        assert row["iops"] == pytest.approx(sum(j["read"]["iops"] for d in docs for j in d["jobs"]))
        merged = merge_bins(j["read"]["clat_ns"]["bins"] for d in docs for j in d["jobs"])
        samples = np.repeat(np.array(list(merged), dtype=float), list(merged.values()))
        assert row["clat_p99_us"] == pytest.approx(np.percentile(samples, 99, method="inverted_cdf") / 1e3)
        assert row["total_ios"] == len(samples)

    # the report's data: every host a device of its own, the fleet's folder its cluster table
    from memstor.analysis.dataset import load_dataset

    ds = load_dataset(data)
    assert ds.host_names == ["ns1", "ns2", "ns3"] and set(ds.fio["host"]) == {"ns1", "ns2", "ns3"}
    assert list(ds.cluster["fleet"]) == ["rack"] * 3 and ds.skipped == []
    # ... and the report shows each host and the cluster (the synthesis notebook, as make report runs it)
    import papermill as pm

    from memstor import cli

    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "90.ipynb"
    pm.execute_notebook(str(root / "notebooks" / "90-synthesis.ipynb"), str(out), kernel_name="memstor",
                        cwd=str(root / "notebooks"), progress_bar=False,
                        parameters={"data_dir": str(data), "specs_dir": str(root / "data" / "specs"),
                                    "tables_dir": str(tmp_path / "tables")})
    assert cli.main(["report", str(out), str(tmp_path / "report"), "--html-only"]) == 0
    html = (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    assert "Fleet runs: each host" in html and all(f"ns{i} " in html for i in (1, 2, 3))
    shown = pd.read_csv(tmp_path / "tables" / "cluster.csv")
    assert len(shown) == 3 and (shown["fleet"] == "rack").all()
    assert shown["clat_p99_us"].tolist() == pytest.approx(cluster["clat_p99_us"].tolist())

    # a rerun measures nothing and leaves every raw file as it was
    before = raw_points(data)
    metas = {p: p.read_bytes() for p in (data / "raw").rglob("*.meta.json")}
    again = memstor("run", "fio-queue-depth", "--hosts", str(hosts), "--data", str(data), *SMALL)
    assert again.returncode == 0, again.stderr
    assert raw_points(data) == before and {p: p.read_bytes() for p in (data / "raw").rglob("*.meta.json")} == metas

    # a host that cannot be reached now, all of whose points are measured, keeps its data (re-read, not failed)
    table3 = (data / "processed" / "ns3" / "fio-queue-depth.csv").read_bytes()
    down = host_file(fleet, tmp_path / "rack.yaml", ports={2: 2222})
    again = memstor("run", "fio-queue-depth", "--hosts", str(down), "--data", str(data), *SMALL)
    assert again.returncode == 0, again.stderr
    assert "every point of ns3 is measured: its data is re-read" in again.stderr
    assert (data / "processed" / "ns3" / "fio-queue-depth.csv").read_bytes() == table3


@pytest.mark.fleet
@pytest.mark.fio
def test_fio_killed_on_one_host_fails_its_point_only_and_a_rerun_measures_that_point(fleet, tmp_path):
    """Acceptance 3 (fio killed mid-run)."""
    hosts, data = host_file(fleet, tmp_path / "two.yaml", n=2), tmp_path / "data"
    victim = fleet.hosts[1]
    run, got = in_background("run", "fio-queue-depth", "--hosts", str(hosts), "--data", str(data), *LONGER)

    wait_serving(fleet, victim, run)
    time.sleep(0.3)
    for pid in ns_pids(victim.ns, "fio"):
        os.kill(pid, 9)
    run.join()
    r = got["r"]
    assert r.returncode == 1, r.stderr  # some points failed: partial
    ns1 = pd.read_csv(data / "processed" / "ns1" / "fio-queue-depth.csv")
    ns2 = pd.read_csv(data / "processed" / "ns2" / "fio-queue-depth.csv")
    assert (ns1["status"] == "done").all()
    bad = ns2[ns2["status"] == "failed"]
    assert len(bad) == 1 and bad["error"].iloc[0].startswith("ns2: no result from its fio server")
    assert fio_pids(fleet) == []
    kept = raw_points(data)
    again = memstor("run", "fio-queue-depth", "--hosts", str(hosts), "--data", str(data), *LONGER)
    assert again.returncode == 0, again.stderr
    assert (pd.read_csv(data / "processed" / "ns2" / "fio-queue-depth.csv")["status"] == "done").all()
    now = raw_points(data)
    assert {p for p in now if now[p] != kept.get(p)} == {data / "raw" / "ns2" / "fio-queue-depth" /
                                                         f"{bad['point'].iloc[0]}.json"}


@pytest.mark.fleet
@pytest.mark.fio
def test_sshd_killed_on_one_host_fails_its_points_and_the_others_complete(fleet, tmp_path):
    """Acceptance 3 (the host's sshd and its sessions killed mid-run: tunnel and server unreachable)."""
    hosts, data = host_file(fleet, tmp_path / "two.yaml", n=2), tmp_path / "data"
    victim = fleet.hosts[1]
    run, got = in_background("run", "fio-queue-depth", "--hosts", str(hosts), "--data", str(data), *LONGER)
    wait_serving(fleet, victim, run)
    time.sleep(0.3)
    sshd_pids = ns_pids(victim.ns, "sshd")
    assert sshd_pids
    for pid in sshd_pids:
        os.kill(pid, 9)
    try:
        run.join()
        r = got["r"]
        assert r.returncode == 1, r.stderr
        assert (pd.read_csv(data / "processed" / "ns1" / "fio-queue-depth.csv")["status"] == "done").all()
        ns2 = pd.read_csv(data / "processed" / "ns2" / "fio-queue-depth.csv")
        assert (ns2["status"] == "failed").any()
        assert all("\n" not in e and e.startswith("ns2: ") for e in ns2.loc[ns2["status"] == "failed", "error"])
    finally:  # the servers the dead sshd's host still runs are that host's (memstor said so on stderr)
        for pid in ns_pids(victim.ns):
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        fleet.restart_sshd(1)


@pytest.mark.fleet
@pytest.mark.fio
def test_a_target_file_memstor_did_not_create_is_refused_before_fio_starts_there(fleet, tmp_path):
    """Acceptance 4: host 2's target holds a file of the test file's name that memstor did not make."""
    hosts, data = host_file(fleet, tmp_path / "two.yaml", n=2), tmp_path / "data"
    foreign = fleet.hosts[1].target / TESTFILE_NAME
    foreign.unlink(missing_ok=True)
    foreign.write_bytes(b"someone's data\n" * 1000)
    try:
        r = memstor("run", "fio-queue-depth", "--hosts", str(hosts), "--data", str(data), *SMALL)
        assert r.returncode == 1, r.stderr
        assert foreign.read_bytes() == b"someone's data\n" * 1000
        ns2 = pd.read_csv(data / "processed" / "ns2" / "fio-queue-depth.csv")
        assert (ns2["status"] == "failed").all()
        assert ns2["error"].str.startswith("ns2: target refused there: ").all()
        assert not (data / "raw" / "ns2").exists()  # no fio server was started, no job sent there
        assert (pd.read_csv(data / "processed" / "ns1" / "fio-queue-depth.csv")["status"] == "done").all()
        assert "ns2: target refused there" in r.stderr
    finally:
        foreign.unlink()


@pytest.mark.parametrize("extra, needle", [
    (["--target", "/tmp"], "--hosts measures the hosts of its file"),
    (["--set", "iodepth=auto"], "iodepth: auto decides per host"),
    (["--set", "precision_pct=5"], "precision_pct stops each host's point"),
    ([], "a host is labelled 'n1' like the file"),
])
def test_what_a_fleet_cannot_do_is_refused_in_one_line(tmp_path, extra, needle):
    hosts = tmp_path / "h.yaml"
    hosts.write_text(f"hosts:\n  - ssh: root@192.0.2.1\n    target: {tmp_path}\n")
    if not extra:  # the cluster tables' folder would be that host's
        hosts = tmp_path / "n1.yaml"
        hosts.write_text(f"hosts:\n  - ssh: root@192.0.2.1\n    target: {tmp_path}\n    label: n1\n")
    r = memstor("run", "fio-queue-depth", "--hosts", str(hosts), "--data", str(tmp_path / "d"), *SMALL, *extra)
    assert r.returncode == 2 and needle in r.stderr and r.stderr.count("\n") == 1, r.stderr


@pytest.mark.fleet
@pytest.mark.loadlat
def test_a_memory_experiment_runs_memstor_on_each_host_and_its_data_comes_back(fleet, tmp_path):
    """Memory experiments (and sysinfo) on fleet hosts: memstor itself there over SSH, data back under the label."""
    hosts, data = host_file(fleet, tmp_path / "two.yaml", n=2), tmp_path / "data"
    # the hosts are network namespaces of this machine, their sshd started from here: this affinity mask's CPUs
    lat_cpu, load_cpu = two_allowed_cpus()
    small = ["--profile", "quick", "--set", "tool=loadlat", "--set", "traffic=[R]", "--set", "delays=[0,1000]",
             "--set", "sections=[]", "--set", "buffer_kib=65536", "--set", "seconds_per_point=0.3",
             "--set", f"latency_cpu={lat_cpu}", "--set", f"load_cpus={load_cpu}", "--no-progress"]
    r = memstor("run", "mlc-loaded-latency", "--hosts", str(hosts), "--data", str(data), *small)
    assert r.returncode == 0, r.stderr
    for i, label in ((1, "ns1"), (2, "ns2")):
        df = pd.read_csv(data / "processed" / label / "mlc-loaded-latency.csv")
        assert len(df) > 0 and set(df["host"]) == {label} and (df["latency_ns"].dropna() > 0).all()
        metas = list((data / "raw" / label / "mlc-loaded-latency").glob("*.meta.json"))
        assert metas and all(json.loads(m.read_text())["status"] == "done" for m in metas)
        assert json.loads((data / "processed" / label / "sysinfo.json").read_text())["device"]["kind"] == "memory"
        # measured there: the host's own data root under its target holds the same files
        there = fleet.hosts[i - 1].target / "memstor-data" / "processed" / label / "mlc-loaded-latency.csv"
        assert there.read_bytes() == (data / "processed" / label / "mlc-loaded-latency.csv").read_bytes()
