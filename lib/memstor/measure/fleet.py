"""Fleet runs (issue 20): one fio point on many hosts at once through fio's client/server over SSH tunnels.

Safety: fio's server has no authentication, so every server memstor starts listens on the host's loopback
address only (``fio --server=ip:127.0.0.1,<port>``) and is reached through an SSH tunnel
(``ssh -N -L 127.0.0.<k>:<localport>:127.0.0.1:<port>``) that memstor opens and closes; the server is killed by
pid over SSH at the end and checked gone.

Measured facts (fio-3.33, Debian 12, 2026-11; tests/test_fleet_run.py reproduces them):
- Server argv: ``fio --server=ip:127.0.0.1,<port> --daemonize=<pidfile>`` listens on 127.0.0.1:<port> only
  (``ss -ltn`` shows ``127.0.0.1:<port>``), the parent returns at once, the pidfile holds the server's pid.
  The daemonized server keeps the cwd it was started in (no chdir("/")), but memstor puts absolute paths in
  the job anyway. SIGTERM ends it after ~1 s (it finishes its poll loop): wait for it, don't assume.
  The server stays up after a client run ends (it serves further clients): memstor must kill it.
- Client argv: ``fio --output-format=json+ --client=<addr>,<port> job1.fio --client=<addr>,<port> job2.fio``:
  each --client takes the job file(s) following it; the job files are read on the CLIENT (this machine) and
  sent to the servers, but every path in them (filename=, directory=) is opened on the SERVER host — the test
  file must exist (or be creatable) there, not here.
- stdout is NOT pure JSON: fio first prints each server's job lines prefixed with the SERVER's hostname
  ("<vm> j: (g=0): rw=randread, ..."), then the JSON document; memstor parses from the first "{".
- The document has "client_stats" (not "jobs"): one entry per job per client, each with "hostname" = the
  address string given to --client (NOT the remote host's name) and "port" = the --client port; "disk_util"
  entries carry the same "hostname"/"port". memstor still gives each host's tunnel its own loopback address
  127.0.0.<k+2> (Linux routes all of 127/8 to lo) so the address alone names the host.
- With two clients fio-3.33 appends an entry with jobname "All clients" (hostname/port of the LAST client):
  its read "iops" is the sum of the clients' IOPS but its clat_ns has no "percentile" and no "bins" at all.
  memstor never uses it; cluster percentiles come from merged bins (:mod:`memstor.analysis.cluster`).
- A server killed mid-run (SIGKILL of the server and its job process): the client prints
  "client: host=<addr> disconnected" on stdout, keeps running the other servers' jobs and still writes one
  JSON document holding only their entries; memstor marks that host failed with that line as the reason.
- Timing on this 2-vCPU VM: a 1 s point on 2 namespace hosts takes ~9 s end to end (ssh start, 16 MiB
  layout per host, 1 s run, server stop with its ~1 s SIGTERM delay).
- A per-host split of that document, with "client_stats" renamed "jobs" and the "All clients" entry and the
  other hosts' jobs dropped, is read by memstor's fio parser like a local run's JSON.
"""

from __future__ import annotations

import json
import random
import shlex
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from memstor.errors import MemstorError
from memstor.measure.fleet_hosts import Host

#: fio's name for its aggregate entry in client output (never used for results).
ALL_CLIENTS = "All clients"


class FleetError(MemstorError):
    """A host of a fleet run failed (one line: label and reason)."""


def ssh_argv(host: Host, extra: Sequence[str] = (), *args: str) -> list[str]:
    """``ssh`` argv for ``host``: its port and key, ``extra`` options (e.g. known-hosts file), then ``args``."""
    return ["ssh", *host.ssh_args(), *extra, *args]


def run_ssh(host: Host, command: str, extra: Sequence[str] = (), timeout: float = 30) -> subprocess.CompletedProcess:
    """Run a shell ``command`` on ``host`` over SSH (BatchMode: never prompts)."""
    argv = ssh_argv(host, extra, "-o", "BatchMode=yes", host.ssh, command)
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise FleetError(f"{host.label}: ssh {host.ssh} did not answer within {timeout:.0f} s") from None


def _free_local_port(address: str) -> int:
    with socket.socket() as s:
        s.bind((address, 0))
        return s.getsockname()[1]


def _wait_local(address: str, port: int, timeout: float, tunnel: subprocess.Popen) -> bool:
    """Wait until ssh listens on address:port, seen by a failing bind (EADDRINUSE). Not by connecting:
    measured: a connection through the tunnel makes the fio server fork a handler process (fio-3.33 forks
    one per connection), so a probe would leave an extra fio process behind."""
    end = time.monotonic() + timeout
    while time.monotonic() < end and tunnel.poll() is None:
        with socket.socket() as s:
            try:
                s.bind((address, port))
            except OSError:
                return True
        time.sleep(0.05)
    return False


@dataclass
class FioServer:
    """A running fio server on ``host`` (loopback only) and the local end of its SSH tunnel."""

    host: Host
    remote_port: int
    pid: int
    pidfile: str
    local_address: str
    local_port: int
    tunnel: subprocess.Popen | None = None

    @property
    def client(self) -> str:
        """The ``--client=`` value that reaches this server through the tunnel."""
        return f"{self.local_address},{self.local_port}"


def _start_script(port: int, pidfile: str, fio: str = "fio") -> str:
    """Remote shell: start a loopback-only daemonized fio server, wait until it listens, print its pid."""
    hexport = f"{port:04X}"
    q = shlex.quote
    return (
        f"rm -f {q(pidfile)}; {q(fio)} --server=ip:127.0.0.1,{port} --daemonize={q(pidfile)} || exit 3; "
        # listening on 127.0.0.1 (0100007F) in /proc/net/tcp, state 0A = LISTEN
        f"i=0; while ! grep -q '0100007F:{hexport} 00000000:0000 0A' /proc/net/tcp; do "
        f"i=$((i+1)); [ $i -gt 100 ] && {{ echo 'fio server did not listen' >&2; exit 4; }}; sleep 0.05; done; "
        f"cat {q(pidfile)}"
    )


def _stop_script(pid: int, pidfile: str) -> str:
    """Remote shell: kill the fio server ``pid`` (only if it is still fio), wait until gone (SIGKILL after 5 s)."""
    q = shlex.quote
    return (
        # its per-connection children first (fio forks one per client connection), then the server
        f"p={pid}; if [ -d /proc/$p ] && grep -q fio /proc/$p/comm; then "
        f"for c in $(ps -o pid= --ppid $p 2>/dev/null); do kill $c 2>/dev/null; done; kill $p; "
        f"i=0; while [ -d /proc/$p ]; do i=$((i+1)); [ $i -eq 100 ] && kill -9 $p; "
        f"[ $i -gt 150 ] && {{ echo 'fio server survived SIGKILL' >&2; exit 5; }}; sleep 0.05; done; fi; "
        f"rm -f {q(pidfile)}; [ ! -d /proc/$p ] || ! grep -q fio /proc/$p/comm"
    )


def start_server(host: Host, index: int, ssh_extra: Sequence[str] = (), fio: str = "fio") -> FioServer:
    """Start fio's server on ``host`` bound to its 127.0.0.1 and open the SSH tunnel to it.

    index: the host's position in the fleet; its tunnel listens on local 127.0.0.<index+2> so fio's
    "hostname" in client output identifies the host. Raises FleetError (one line) on failure; nothing is left
    running then."""
    port = random.randint(20000, 60000)
    where = host.target or "/tmp"
    pidfile = f"{where.rstrip('/')}/.memstor-fio-server-{port}.pid"
    r = run_ssh(host, _start_script(port, pidfile, fio), ssh_extra)
    if r.returncode != 0 or not r.stdout.strip().isdigit():
        why = (r.stderr.strip().splitlines() or [f"exit status {r.returncode}"])[-1]
        raise FleetError(f"{host.label}: cannot start fio server: {why}")
    server = FioServer(host, port, int(r.stdout.strip()), pidfile, f"127.0.0.{index + 2}", 0)
    try:
        server.local_port = _free_local_port(server.local_address)
        server.tunnel = subprocess.Popen(
            ssh_argv(host, ssh_extra, "-N", "-o", "BatchMode=yes", "-o", "ExitOnForwardFailure=yes",
                     "-L", f"{server.local_address}:{server.local_port}:127.0.0.1:{port}", host.ssh),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if not _wait_local(server.local_address, server.local_port, 10, server.tunnel):
            why = server.tunnel.stderr.read().strip() if server.tunnel.poll() is not None else "timeout"
            raise FleetError(f"{host.label}: SSH tunnel to the fio server did not open: {why}")
    except BaseException:
        stop_server(server, ssh_extra)
        raise
    return server


def end_process(proc: subprocess.Popen, grace_s: float = 5.0) -> None:
    """End a local child process: SIGTERM, then SIGKILL after ``grace_s`` seconds; nothing when it has ended."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def stop_server(server: FioServer, ssh_extra: Sequence[str] = ()) -> None:
    """Kill the remote fio server by pid (checked gone) and close the tunnel. FleetError when it survives."""
    r = run_ssh(server.host, _stop_script(server.pid, server.pidfile), ssh_extra)
    if server.tunnel is not None:
        end_process(server.tunnel)
    if r.returncode != 0:
        why = (r.stderr.strip().splitlines() or [f"exit status {r.returncode}"])[-1]
        raise FleetError(f"{server.host.label}: fio server pid {server.pid} not ended: {why}")


@contextmanager
def fio_servers(hosts: Sequence[Host], ssh_extra: Sequence[str] = ()) -> Iterator[list[FioServer]]:
    """One loopback-only fio server + tunnel per host for the duration of the block; all stopped after."""
    with ExitStack() as stack:
        servers = []
        for i, h in enumerate(hosts):
            s = start_server(h, i, ssh_extra)
            stack.callback(stop_server, s, ssh_extra)
            servers.append(s)
        yield servers


def client_argv(servers: Sequence[FioServer], jobfiles: Sequence[Path], output_format: str = "json+") -> list[str]:
    """The fio client command: ``fio --output-format=json+ --client=A,P job_A --client=B,Q job_B``."""
    argv = ["fio", f"--output-format={output_format}"]
    for s, job in zip(servers, jobfiles, strict=True):
        argv += [f"--client={s.client}", str(job)]
    return argv


def _json_start(text: str) -> str:
    i = text.find("{")
    if i < 0:
        raise ValueError("no JSON document in fio's client output")
    return text[i:]


def split_client_output(text: str, servers: Sequence[FioServer]) -> dict[str, dict]:
    """Split fio's client JSON into one local-run-like document per host label.

    Each host's document: the top-level fields ("fio version", "timestamp", "time", "global options", ...)
    and ``"jobs"``: that host's entries of "client_stats" (by "hostname" = the tunnel's local address).
    fio's "All clients" entry is dropped. A host with no entry maps to a document with an empty "jobs"."""
    doc = json.loads(_json_start(text))
    stats = doc.get("client_stats")
    if not isinstance(stats, list):
        raise ValueError("fio client output without client_stats")
    by_address = {s.local_address: s.host.label for s in servers}
    common = {k: v for k, v in doc.items() if k not in ("client_stats", "disk_util")}
    out = {s.host.label: {**common, "jobs": []} for s in servers}
    for du in doc.get("disk_util") or []:
        label = by_address.get(du.get("hostname"))
        if label is not None:
            out[label].setdefault("disk_util", []).append(du)
    for entry in stats:
        if entry.get("jobname") == ALL_CLIENTS:
            continue
        label = by_address.get(entry.get("hostname"))
        if label is not None:
            out[label]["jobs"].append(entry)
    return out


@dataclass
class HostPoint:
    """One host's share of a fleet point: its raw JSON file (None when failed) and the reason when failed."""

    label: str
    raw: Path | None
    meta: Path
    error: str | None = None


def run_fleet_point(hosts: Sequence[Host], jobs: dict[str, str], point: str, out_dir: Path,
                    ssh_extra: Sequence[str] = (), timeout: float = 300, experiment: str | None = None,
                    params: dict | None = None) -> list[HostPoint]:
    """Run one fio point on every host at once; write ``out_dir/<label>/<point>.json`` + ``.meta.json``.

    With ``out_dir = <data>/raw`` and ``out_dir/<label>/<experiment>`` that is sweep.raw_dir's layout; for
    now the caller chooses (see the report of this module's session for the wiring). jobs: label → fio job
    file text for that host (paths in it are the host's paths). The per-host JSON is fio's client document
    split by host (:func:`split_client_output`), readable by memstor's fio parser like a local run's. The
    meta has the sweep's keys (experiment, point, params, host, status, error, raw, start/end time) plus
    ssh, fio_version, command, client, server and job. A host whose server cannot start, or that has no
    job in fio's output, is failed with a one-line reason (meta status "failed", no raw file); the other
    hosts still run. Files are written atomically."""
    from memstor.measure.files import write_json

    out_dir = Path(out_dir)
    work = out_dir / f".{point}.fleet-tmp"
    work.mkdir(parents=True, exist_ok=True)
    base = {"experiment": experiment, "point": point, "params": params or {}}
    start = _utc()
    results: dict[str, HostPoint] = {}

    def fail(host: Host, error: str, extra: dict | None = None) -> None:
        d = out_dir / host.label
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{point}.json").unlink(missing_ok=True)
        meta = d / f"{point}.meta.json"
        write_json(meta, {**base, "host": host.label, "ssh": host.ssh, **(extra or {}), "start_time": start,
                          "end_time": _utc(), "status": "failed", "error": error, "raw": None})
        results[host.label] = HostPoint(host.label, None, meta, error)

    with ExitStack() as stack:
        servers: list[FioServer] = []
        for i, h in enumerate(hosts):
            try:
                srv = start_server(h, i, ssh_extra)
            except FleetError as e:
                fail(h, str(e))
                continue
            stack.callback(stop_server, srv, ssh_extra)
            servers.append(srv)
        if servers:
            jobfiles = []
            for srv in servers:
                jf = work / f"{srv.host.label}.fio"
                jf.write_text(jobs[srv.host.label])
                jobfiles.append(jf)
            argv = client_argv(servers, jobfiles)
            try:
                r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
                (work / "client.json").write_text(r.stdout)
                per_host = split_client_output(r.stdout, servers)
                stdout, stderr = r.stdout, r.stderr
            except (subprocess.TimeoutExpired, ValueError) as e:
                per_host, stdout, stderr = {}, "", str(e)
            for srv in servers:
                label = srv.host.label
                # measured (fio-3.33): a server killed mid-run makes the client print
                # "client: host=127.0.0.3 disconnected" on STDOUT (before the JSON) and go on with the others
                said = [ln.strip() for ln in (stdout + "\n" + stderr).splitlines()
                        if f"host={srv.local_address} " in ln + " " or f"<{srv.local_address}>" in ln]
                fio_err = said[-1] if said else (stderr.strip().splitlines() or [""])[-1]
                extra = {"ssh": srv.host.ssh, "command": argv, "client": srv.client,
                         "server": f"127.0.0.1,{srv.remote_port}", "job": jobs[label],
                         "fleet": [h.label for h in hosts]}
                doc = per_host.get(label)
                if not doc or not doc["jobs"]:
                    fail(srv.host, f"{label}: no result from its fio server" + (f" ({fio_err})" if fio_err else ""),
                         extra)
                    continue
                d = out_dir / label
                d.mkdir(parents=True, exist_ok=True)
                raw, meta = d / f"{point}.json", d / f"{point}.meta.json"
                write_json(raw, doc)
                write_json(meta, {**base, "host": label, **extra, "fio_version": doc.get("fio version"),
                                  "start_time": start, "end_time": _utc(), "status": "done", "error": None,
                                  "raw": raw.name})
                results[label] = HostPoint(label, raw, meta)
    return [results[h.label] for h in hosts]


def _utc() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
