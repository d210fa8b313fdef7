"""Test hosts for fleet runs (issue 20): network namespaces with their own address and sshd.

:func:`fleet_hosts_fixture` (the body of a pytest fixture) creates N namespaces, each with a veth pair
whose outer end is on a bridge in the root namespace (bridge 10.213.0.1/24, host i at 10.213.0.(10+i)), so the
root namespace and every namespace reach each other's bridge addresses (no IP forwarding needed, nothing is
changed outside these interfaces). Each namespace runs its own sshd (``-D``, config on the command line,
throwaway host and user keys in a temp dir, root login with the key only, ``StrictModes=no``). Everything
is torn down at the end (sshd killed by pid, namespaces and bridge deleted). All traffic stays inside the
machine. The filesystem is shared with the test (namespaces only separate the network): a "remote" target
directory is a local temp dir.

Skips with a reason when not root, no sshd / ssh / ssh-keygen, or ``ip netns`` does not work.
"""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from memstor.measure.fleet import end_process

SSHD = "/usr/sbin/sshd"
SUBNET = "10.213.0"


@dataclass
class TestHost:
    ns: str
    address: str
    target: Path
    sshd: subprocess.Popen


@dataclass
class Fleet:
    hosts: list[TestHost]
    identity_file: Path
    known_hosts: Path
    workdir: Path
    bridge: str
    ssh_options: list[str] = field(default_factory=list)

    def restart_sshd(self, index: int) -> None:
        """Start host ``index``'s sshd again (after a test killed it) and wait until it listens."""
        h = self.hosts[index]
        if h.sshd is not None:
            end_process(h.sshd)
        _start_sshd(self, index)
        _wait_port(h.ns, h.address, 22)

    def ns_exec(self, ns: str, *argv: str, **kw) -> subprocess.CompletedProcess:
        """Run argv inside namespace ``ns``."""
        return subprocess.run(["ip", "netns", "exec", ns, *argv], capture_output=True, text=True, **kw)


def _run(*argv: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), capture_output=True, text=True, check=check)


def ns_pids(ns: str, comm: str | None = None) -> list[int]:
    """Pids of the processes inside namespace ``ns`` (only those whose command name is ``comm``, when given)."""
    out = []
    for pid in subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split():
        try:
            if comm is None or Path(f"/proc/{pid}/comm").read_text().strip() == comm:
                out.append(int(pid))
        except OSError:  # ended meanwhile
            pass
    return out


def fio_pids(fleet: Fleet) -> list[int]:
    """Pids of fio processes inside any of the fleet's namespaces."""
    return [p for h in fleet.hosts for p in ns_pids(h.ns, "fio")]


def skip_reason() -> str | None:
    """Why fleet tests cannot run here (None: they can)."""
    if os.geteuid() != 0:
        return "fleet test hosts need root (network namespaces)"
    for tool in (SSHD,):
        if not Path(tool).exists():
            return f"{tool} missing (apt-get install openssh-server)"
    for tool in ("ssh", "ssh-keygen", "ip", "fio"):
        if shutil.which(tool) is None:
            return f"{tool} not on the PATH"
    r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    if r.returncode != 0:
        return f"ip netns does not work: {r.stderr.strip()}"
    return None


def _wait_port(ns: str, address: str, port: int, timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with socket.create_connection((address, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"sshd in {ns} did not listen on {address}:{port}")


def _start_sshd(fleet: Fleet, index: int) -> None:
    """Start host ``index``'s sshd inside its namespace (key-only root login, throwaway keys, local forwarding)."""
    h, keys, workdir = fleet.hosts[index], fleet.workdir / "keys", fleet.workdir
    log = workdir / f"sshd{index + 1}.log"
    h.sshd = subprocess.Popen(
        ["ip", "netns", "exec", h.ns, SSHD, "-D", "-e", "-f", "/dev/null",
         "-o", f"ListenAddress={h.address}", "-o", "Port=22",
         "-o", f"HostKey={keys / 'host_key'}",
         "-o", f"AuthorizedKeysFile={keys / 'authorized_keys'}",
         "-o", "StrictModes=no", "-o", "PermitRootLogin=prohibit-password",
         "-o", "PasswordAuthentication=no", "-o", "KbdInteractiveAuthentication=no",
         "-o", "UsePAM=no", "-o", f"PidFile={workdir / f'sshd{index + 1}.pid'}",
         "-o", "AllowTcpForwarding=local", "-o", "MaxStartups=50"],
        stdout=open(log, "a"), stderr=subprocess.STDOUT)


#: Numbers the fleets of one test process (interface names stay within the kernel's 15 characters).
_FLEETS = itertools.count()


def make_fleet(n: int, workdir: Path) -> Fleet:
    """Create n namespace hosts with sshd (see the module docstring); :func:`destroy_fleet` undoes it."""
    # one tag per fleet: a namespace of the previous module's fleet the kernel has not freed yet (its last
    # process still exiting) keeps its veth, and the same name again gives "File exists" (seen in make test)
    tag = f"{os.getpid() % 100000}{next(_FLEETS)}"
    bridge = f"msbr{tag}"
    keys = workdir / "keys"
    keys.mkdir(parents=True)
    _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(keys / "host_key"))
    _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(keys / "user_key"))
    (keys / "authorized_keys").write_text((keys / "user_key.pub").read_text())
    host_pub = (keys / "host_key.pub").read_text().split()
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation directory
    fleet = Fleet(hosts=[], identity_file=keys / "user_key", known_hosts=keys / "known_hosts", workdir=workdir,
                  bridge=bridge)
    _run("ip", "link", "add", bridge, "type", "bridge")
    _run("ip", "addr", "add", f"{SUBNET}.1/24", "dev", bridge)
    _run("ip", "link", "set", bridge, "up")
    known = []
    try:
        for i in range(1, n + 1):
            ns, veth = f"msfleet{tag}_{i}", f"msv{tag}_{i}"
            address = f"{SUBNET}.{10 + i}"
            _run("ip", "netns", "add", ns)
            fleet.hosts.append(TestHost(ns=ns, address=address, target=workdir / f"target{i}", sshd=None))
            _run("ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns)
            _run("ip", "link", "set", veth, "master", bridge)
            _run("ip", "link", "set", veth, "up")
            _run("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
            _run("ip", "netns", "exec", ns, "ip", "addr", "add", f"{address}/24", "dev", "eth0")
            _run("ip", "netns", "exec", ns, "ip", "link", "set", "eth0", "up")
            fleet.hosts[-1].target.mkdir()
            _start_sshd(fleet, i - 1)
            known.append(f"{address} {host_pub[0]} {host_pub[1]}")
        fleet.known_hosts.write_text("\n".join(known) + "\n")
        for h in fleet.hosts:
            _wait_port(h.ns, h.address, 22)
        fleet.ssh_options = ["-o", f"UserKnownHostsFile={fleet.known_hosts}", "-o", "StrictHostKeyChecking=yes",
                             "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", "-o", "LogLevel=ERROR"]
        return fleet
    except BaseException:
        destroy_fleet(fleet)
        raise


def destroy_fleet(fleet: Fleet) -> None:
    """Kill every sshd (by pid) and delete the namespaces and the bridge (veths go with their namespace)."""
    for h in fleet.hosts:
        if h.sshd is not None:
            end_process(h.sshd)
        # processes left inside the namespace (a fio server memstor failed to end) would keep it busy
        r = subprocess.run(["ip", "netns", "pids", h.ns], capture_output=True, text=True)
        for pid in r.stdout.split():
            try:
                os.kill(int(pid), 9)
            except (OSError, ValueError):
                pass
        subprocess.run(["ip", "link", "del", h.ns.replace("msfleet", "msv", 1)], capture_output=True)  # its veth pair
        subprocess.run(["ip", "netns", "del", h.ns], capture_output=True)
    subprocess.run(["ip", "link", "del", fleet.bridge], capture_output=True)


def fleet_hosts_fixture(tmp_path_factory, n: int = 3):
    """Body of a ``fleet_hosts`` fixture: n namespace hosts with sshd, skipped with the reason when impossible.

    In a test module::

        @pytest.fixture(scope="module")
        def fleet_hosts(tmp_path_factory):
            yield from fleet_hosts_fixture(tmp_path_factory)
    """
    reason = skip_reason()
    if reason and os.environ.get("MEMSTOR_REQUIRE_FLEET") == "1":  # CI: the fleet tests must run
        pytest.fail(f"MEMSTOR_REQUIRE_FLEET=1 but {reason} (scripts/install-system-deps --fleet)")
    if reason:
        pytest.skip(reason)
    fleet = make_fleet(n, tmp_path_factory.mktemp("fleet"))
    try:
        yield fleet
    finally:
        destroy_fleet(fleet)
