"""Fleet runs for real (issue 20): loopback-only fio servers behind SSH tunnels on namespace hosts.

Uses tests/fleet_helpers.py (root, sshd, ip netns; skipped with the reason otherwise). fio runs are tiny
(1 s, 16 MiB files) because this machine is shared."""

import json
import os
import subprocess
import threading
import time

import numpy as np
import pytest

from fleet_helpers import fio_pids, fleet_hosts_fixture, ns_pids
from memstor.analysis.cluster import cluster_aggregate, merge_bins
from memstor.measure.fio import FioJob
from memstor.measure.fleet import ALL_CLIENTS, CLIENT_OUTPUT, FleetJob, fio_servers, run_fleet_point
from memstor.measure.fleet_hosts import Host
from memstor.measure.fleet_target import local_target
from memstor.measure.sweep import Point
from memstor.parse.fio import parse_fio


@pytest.fixture(scope="module")
def fleet_hosts(tmp_path_factory):
    """Three namespace hosts with sshd, once for this module (skipped with the reason when impossible)."""
    yield from fleet_hosts_fixture(tmp_path_factory, 3)


def _hosts(fleet, n):
    return [Host(ssh=f"root@{h.address}", label=f"ns{i + 1}", target=str(h.target),
                 identity_file=str(fleet.identity_file)) for i, h in enumerate(fleet.hosts[:n])]


def _jobs(hosts, tmp_path, point="p", runtime_s=1.0, jobname="r"):
    """One FleetJob per host: a 4k randread of runtime_s on memstor's marked 16 MiB test file in its target
    (made here: the namespaces share this machine's filesystem), interval logs on, raw folder per label."""
    out = []
    for h in hosts:
        path = local_target(16 << 20, h.target, None, None, "psync", 0)["path"]
        job = FioJob(name=jobname, rw="randread", bs="4k", ioengine="psync", direct=False, size="16m",
                     runtime_s=runtime_s, filename=path, logs=True, hist_log=False, log_avg_msec=250)
        out.append(FleetJob(h, Point(point, {"rw": "randread", "bs": "4k"}), tmp_path / "raw" / h.label, job))
        out[-1].directory.mkdir(parents=True, exist_ok=True)
    return out


def _connects(fleet, ns, address, port):
    """True when a TCP connection from namespace ``ns`` to address:port succeeds."""
    r = fleet.ns_exec(ns, "timeout", "3", "bash", "-c", f"exec 3<>/dev/tcp/{address}/{port}")
    return r.returncode == 0


@pytest.mark.fleet
@pytest.mark.fio
def test_servers_listen_on_loopback_only_and_end(fleet_hosts):
    fleet = fleet_hosts
    hosts = _hosts(fleet, 2)
    other = fleet.hosts[2]
    with fio_servers(hosts, fleet.ssh_options) as servers:
        assert len(fio_pids(fleet)) == 2
        for s, th in zip(servers, fleet.hosts):
            listening = fleet.ns_exec(th.ns, "ss", "-Hltn", f"sport = :{s.remote_port}").stdout
            assert f"127.0.0.1:{s.remote_port}" in listening and th.address not in listening, listening
            # from another namespace: the host's sshd answers (the network works) but its fio port does not
            assert _connects(fleet, other.ns, th.address, 22)
            assert not _connects(fleet, other.ns, th.address, s.remote_port)
            # nor from the root namespace directly; only through memstor's tunnel
            assert subprocess.run(["timeout", "3", "bash", "-c", f"exec 3<>/dev/tcp/{th.address}/{s.remote_port}"]
                                  ).returncode != 0
            assert subprocess.run(["timeout", "3", "bash", "-c",
                                   f"exec 3<>/dev/tcp/{s.local_address}/{s.local_port}"]).returncode == 0
        tunnels = [s.tunnel for s in servers]
    assert fio_pids(fleet) == []
    assert all(t.poll() is not None for t in tunnels)


@pytest.mark.fleet
@pytest.mark.fio
def test_one_point_on_two_hosts(fleet_hosts, tmp_path):
    fleet = fleet_hosts
    hosts = _hosts(fleet, 2)
    jobs = _jobs(hosts, tmp_path, "randread-4k-t1", jobname="randread-4k")
    got = {}
    run = threading.Thread(target=lambda: got.update(r=run_fleet_point(
        jobs, experiment="fio-queue-depth", ssh_extra=fleet.ssh_options)))
    run.start()
    # during the run: every listening fio port in the hosts' namespaces is unreachable from the third one
    probed_during_job = 0
    while run.is_alive():
        for th in fleet.hosts[:2]:
            out = fleet.ns_exec(th.ns, "ss", "-Hltnp").stdout
            ports = [ln.split()[3].rsplit(":", 1)[1] for ln in out.splitlines() if '"fio"' in ln]
            for port in ports:
                assert not _connects(fleet, fleet.hosts[2].ns, th.address, int(port))
                if len(fio_pids(fleet)) > 2:  # a job process runs besides the two servers
                    probed_during_job += 1
        time.sleep(0.1)
    run.join()
    assert probed_during_job > 0
    results = got["r"]
    assert [r.error for r in results] == [None, None]
    docs = {}
    for r, h in zip(results, hosts):
        doc = json.loads(r.raw.read_text())
        assert [j["jobname"] for j in doc["jobs"]] == ["randread-4k"]
        assert doc["jobs"][0]["read"]["iops"] > 0
        assert doc["jobs"][0]["read"]["clat_ns"]["bins"]
        meta = json.loads(r.meta.read_text())
        assert meta["host"] == h.label and meta["tool_version"].startswith("fio-") and meta["status"] == "done"
        assert "--output-format=json+" in meta["command"] and meta["params"] == {"rw": "randread", "bs": "4k"}
        # the logs fio's client received from that host's server, under a local run's names
        files = r.raw.parent / "randread-4k-t1.files"
        assert sorted(f.name for f in files.iterdir()) == sorted([CLIENT_OUTPUT, "fio_bw.1.log", "fio_clat.1.log",
                                                                  "fio_iops.1.log", "fio_lat.1.log", "fio_slat.1.log"])
        assert len((files / "fio_iops.1.log").read_text().splitlines()) >= 3
        # memstor's own parser reads the per-host file like a local run
        rows = parse_fio(r.raw.read_text(), str(r.raw)).rows
        assert [row["direction"] for row in rows] == ["read"] and rows[0]["iops"] > 0
        docs[h.label] = doc
    # fio's "All clients" entry is in the client output, but whether it carries bins depends on the release
    # (fio-3.33 leaves them out; releases that copy the first client's percentile settings into it sum every
    # client's bins): memstor merges the hosts' own bins, and where fio's entry has bins they are that same sum
    client = (results[0].raw.parent / "randread-4k-t1.files" / CLIENT_OUTPUT).read_text()
    whole = json.loads(client[client.find("{"):])
    allc = [j for j in whole["client_stats"] if j["jobname"] == ALL_CLIENTS]
    assert len(allc) == 1, whole["fio version"]
    agg = cluster_aggregate(docs, "read", (99.0,))
    assert agg["iops"] == pytest.approx(sum(d["jobs"][0]["read"]["iops"] for d in docs.values()))
    merged = merge_bins(d["jobs"][0]["read"]["clat_ns"]["bins"] for d in docs.values())
    if "bins" in allc[0]["read"]["clat_ns"]:
        assert merge_bins([allc[0]["read"]["clat_ns"]["bins"]]) == merged, whole["fio version"]
    samples = np.repeat(np.array(list(merged)), list(merged.values()))
    assert agg["clat_p99_us"] == np.percentile(samples, 99, method="inverted_cdf") / 1e3
    assert fio_pids(fleet) == []


@pytest.mark.fleet
@pytest.mark.fio
def test_unreachable_host_fails_alone(fleet_hosts, tmp_path):
    fleet = fleet_hosts
    good = _hosts(fleet, 1)[0]
    bad = Host(ssh=f"root@{fleet.hosts[2].address}", port=2222, label="down", target=str(fleet.hosts[2].target),
               identity_file=str(fleet.identity_file))
    results = run_fleet_point(_jobs([good, bad], tmp_path), experiment="fio-queue-depth", ssh_extra=fleet.ssh_options)
    assert results[0].error is None and results[0].raw.is_file()
    assert results[1].raw is None and results[1].error.startswith("down: cannot start fio server: ")
    assert "\n" not in results[1].error
    meta = json.loads(results[1].meta.read_text())
    assert meta["status"] == "failed" and meta["error"] == results[1].error
    assert fio_pids(fleet) == []


@pytest.mark.fleet
@pytest.mark.fio
def test_fio_killed_on_one_host_mid_run(fleet_hosts, tmp_path):
    fleet = fleet_hosts
    hosts = _hosts(fleet, 2)
    jobs = _jobs(hosts, tmp_path, runtime_s=2.0)
    got = {}
    run = threading.Thread(target=lambda: got.update(r=run_fleet_point(jobs, experiment="fio-queue-depth",
                                                                       ssh_extra=fleet.ssh_options)))
    run.start()
    victim = fleet.hosts[1]

    def fio_in_victim():
        return ns_pids(victim.ns, "fio")

    deadline = time.monotonic() + 30
    while len(fio_in_victim()) < 2 and run.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)  # server + its job process
    time.sleep(0.3)
    for pid in fio_in_victim():
        os.kill(pid, 9)
    run.join()
    ok, dead = got["r"]
    assert ok.error is None and json.loads(ok.raw.read_text())["jobs"][0]["read"]["iops"] > 0
    assert dead.raw is None and dead.error == "ns2: no result from its fio server (client: host=127.0.0.3 disconnected)"
    assert fio_pids(fleet) == []


def test_skip_reason_when_not_root(monkeypatch):
    import fleet_helpers

    monkeypatch.setattr(fleet_helpers.os, "geteuid", lambda: 1000)
    assert fleet_helpers.skip_reason() == "fleet test hosts need root (network namespaces)"
    monkeypatch.setattr(fleet_helpers.os, "geteuid", lambda: 0)
    monkeypatch.setattr(fleet_helpers, "SSHD", "/nonexistent/sshd")
    assert fleet_helpers.skip_reason() == "/nonexistent/sshd missing (apt-get install openssh-server)"
