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
import os
import random
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from memstor import __version__
from memstor.core.errors import MemstorError
from memstor.core.files import replace_durably, utc_now, write_json
from memstor.measure.fio import TIMEOUT_MARGIN_S, FioJob, job_file_text, log_folder
from memstor.measure.fio_engine import fio_binary
from memstor.measure.fio_output import json_complete
from memstor.measure.fleet_hosts import Host
from memstor.measure.sweep import Point, PointResult, sidecar_dir

#: fio's name for its aggregate entry in client output (never used for results).
ALL_CLIENTS = "All clients"
#: The client's whole output, kept in each host's sidecar folder.
CLIENT_OUTPUT = "fio_client.json"


class FleetError(MemstorError):
    """A host of a fleet run failed (one line: label and reason)."""


#: ssh options of every connection: give up on an unreachable host after 10 s, and notice a dead peer (an sshd
#: killed mid-run) within 15 s instead of TCP's minutes.
_ALIVE = ("-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3")


def ssh_argv(host: Host, extra: Sequence[str] = (), *args: str) -> list[str]:
    """``ssh`` argv for ``host``: its port and key, ``extra`` options (e.g. known-hosts file), then ``args``."""
    return ["ssh", *_ALIVE, *host.ssh_args(), *extra, *args]


def run_ssh(host: Host, command: str, extra: Sequence[str] = (), timeout: float = 30) -> subprocess.CompletedProcess:
    """Run a shell ``command`` on ``host`` over SSH (BatchMode: never prompts)."""
    argv = ssh_argv(host, extra, "-o", "BatchMode=yes", host.ssh, command)
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise FleetError(f"{host.label}: ssh {host.ssh} did not answer within {timeout:.0f} s") from None


#: Tunnels tried per server when the local port chosen was taken meanwhile.
_TUNNEL_TRIES = 3


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
        for attempt in range(1, _TUNNEL_TRIES + 1):
            # a free port now may be taken before ssh binds it (measured: another test's process did)
            server.local_port = _free_local_port(server.local_address)
            server.tunnel = subprocess.Popen(
                ssh_argv(host, ssh_extra, "-N", "-o", "BatchMode=yes", "-o", "ExitOnForwardFailure=yes",
                         "-L", f"{server.local_address}:{server.local_port}:127.0.0.1:{port}", host.ssh),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if _wait_local(server.local_address, server.local_port, 10, server.tunnel):
                break
            assert server.tunnel.stderr is not None  # stderr=PIPE
            said = server.tunnel.stderr.read().strip() if server.tunnel.poll() is not None else ""
            end_process(server.tunnel)
            if "Address already in use" in said and attempt < _TUNNEL_TRIES:
                continue
            why = (said.splitlines() or ["no tunnel within 10 s"])[0]
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
    try:
        r = run_ssh(server.host, _stop_script(server.pid, server.pidfile), ssh_extra)
    finally:
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
    """The fio client command: ``fio --output-format=json+ --client=A,P job_A --client=B,Q job_B``. The client
    is this machine's fio (``$MEMSTOR_FIO`` or PATH, memstor.measure.fio_engine.fio_binary); each server runs
    the fio on its host's PATH."""
    argv = [fio_binary(), f"--output-format={output_format}"]
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


@dataclass(frozen=True)
class FleetJob:
    """One host's share of a fleet point: the host, the sweep point (its name and params on that host), the
    host's raw folder here (memstor.measure.sweep.raw_dir) and the fio job (filename: the host's test file)."""

    host: Host
    point: Point
    directory: Path
    job: FioJob


def _strip_address(folder: Path, address: str) -> None:
    """Rename the logs fio's client wrote for one server (``fio_iops.1.log.<address>``, measured on fio-3.33)
    to a local run's names."""
    suffix = f".{address}"
    for f in folder.iterdir():
        if f.name.endswith(suffix):
            f.rename(folder / f.name[: -len(suffix)])


class _Outcomes:
    """The metas and PointResults of one fleet point, host by host (what memstor.measure.sweep records)."""

    def __init__(self, jobs: Sequence[FleetJob], experiment: str):
        self.jobs, self.experiment = jobs, experiment
        self.start, self.t0 = utc_now(), time.monotonic()
        self.results: dict[str, PointResult] = {}

    def record(self, fj: FleetJob, status: str, error: str | None, extra: dict) -> None:
        """Write the host's point meta: the sweep's keys plus ssh, fleet and ``extra``; duration in seconds."""
        meta = {"experiment": self.experiment, "point": fj.point.name, "params": fj.point.params,
                "host": fj.host.label, "memstor_version": __version__, "ssh": fj.host.ssh,
                "fleet": [j.host.label for j in self.jobs], **extra, "start_time": self.start,
                "end_time": utc_now(), "duration_s": round(time.monotonic() - self.t0, 3), "status": status,
                "error": error, "raw": f"{fj.point.name}.json" if status == "done" else None}
        write_json(fj.directory / f"{fj.point.name}.meta.json", meta)

    def fail(self, fj: FleetJob, error: str, extra: dict | None = None) -> None:
        """The host's point failed: no raw file nor sidecar, a failed meta with the one-line reason."""
        error = "; ".join(line.strip() for line in error.splitlines() if line.strip())  # one line
        (fj.directory / f"{fj.point.name}.json").unlink(missing_ok=True)
        shutil.rmtree(sidecar_dir(fj.directory, fj.point), ignore_errors=True)
        self.record(fj, "failed", error, extra or {})
        self.results[fj.host.label] = PointResult(fj.point, "failed", None,
                                                  fj.directory / f"{fj.point.name}.meta.json", error)

    def done(self, fj: FleetJob, final: Path, extra: dict) -> None:
        """The host's point is measured: its raw file is ``final``."""
        self.record(fj, "done", None, extra)
        self.results[fj.host.label] = PointResult(fj.point, "done", final, fj.directory / f"{fj.point.name}.meta.json")

    def in_order(self) -> list[PointResult]:
        """One PointResult per job, in the jobs' order."""
        return [self.results[j.host.label] for j in self.jobs]


def run_fleet_point(jobs: Sequence[FleetJob], *, experiment: str, ssh_extra: Sequence[str] = (),
                    timeout_margin_s: float = 60.0) -> list[PointResult]:
    """Run one fio point on every host of ``jobs`` at once and store each host's share as a local sweep does.

    For each host, ``<directory>/<point>.json`` is fio's client document split by host
    (:func:`split_client_output`; memstor's fio parser reads it like a local run's JSON), its
    ``<point>.files/`` sidecar holds the interval logs fio's client received from that host's server and
    ``fio_client.json`` (the client's whole output, byte for byte), and ``<point>.meta.json`` has the sweep's
    keys plus ssh, fleet, client, server and the job file. As in memstor.measure.sweep, the raw file appears
    complete or not at all (temp names carry ``.tmp``, cleaned by the next sweep).

    A host whose server cannot start, that fio reports disconnected, or that has no job in the output is
    failed with a one-line reason (meta status ``failed``, no raw file); the other hosts' results are kept.
    Returns one sweep.PointResult per job, in order."""
    out = _Outcomes(jobs, experiment)
    with ExitStack() as stack:
        running = _start_servers(jobs, stack, ssh_extra, out)
        if not running:
            return out.in_order()
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="memstor-fleet-")))
        texts = {fj.host.label: job_file_text(fj.job, tmp) for fj, _, tmp in running}
        jobfiles = []
        for fj, _, _ in running:
            jobfiles.append(work / f"{fj.host.label}.fio")
            jobfiles[-1].write_text(texts[fj.host.label])
        argv = client_argv([srv for _, srv, _ in running], jobfiles)
        timeout = max(fj.job.runtime_s + fj.job.ramp_s for fj, _, _ in running) + TIMEOUT_MARGIN_S + timeout_margin_s
        per_host, stdout, stderr = _run_client(argv, timeout, work, [srv for _, srv, _ in running])
        for fj, srv, tmp in running:
            extra = {"command": argv, "command_line": shlex.join(argv), "tool": "fio", "client": srv.client,
                     "server": f"127.0.0.1,{srv.remote_port}", "job": texts[fj.host.label],
                     "ioengine": fj.job.ioengine}
            _store(fj, srv, tmp, per_host.get(fj.host.label), stdout, stderr, extra, out)
    return out.in_order()


def _start_servers(jobs: Sequence[FleetJob], stack: ExitStack, ssh_extra: Sequence[str],
                   out: _Outcomes) -> list[tuple[FleetJob, FioServer, Path]]:
    """Start each host's fio server (stopped when ``stack`` closes) and prepare its temp raw file and log
    folder; a host whose server does not start is failed. (job, server, temp raw file) of the others."""
    running: list[tuple[FleetJob, FioServer, Path]] = []
    for i, fj in enumerate(jobs):
        try:
            srv = start_server(fj.host, i, ssh_extra)
        except FleetError as e:
            out.fail(fj, str(e))
            continue
        stack.callback(_stop_or_say, srv, ssh_extra)
        tmp = fj.directory / f"{fj.point.name}.json.tmp"
        folder = log_folder(tmp)
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        running.append((fj, srv, tmp))
    return running


def _run_client(argv: list[str], timeout: float, work: Path, servers: list[FioServer]) -> tuple[dict, str, str]:
    """Run fio's client (at most ``timeout`` seconds) in ``work``: (per-host documents, stdout, stderr);
    no documents when it timed out or printed no readable JSON (stderr then says why)."""
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=work)
    except subprocess.TimeoutExpired:
        return {}, "", f"the fio client did not finish within {timeout:.0f} s"
    try:
        return split_client_output(r.stdout, servers), r.stdout, r.stderr
    except ValueError as e:
        return {}, r.stdout, f"{r.stderr.strip()} ({e})".strip()


def _store(fj: FleetJob, srv: FioServer, tmp: Path, doc: dict | None, stdout: str, stderr: str, extra: dict,
           out: _Outcomes) -> None:
    """Keep one host's share of the client output: its document as the raw file (renamed into place only when
    complete) and its logs in the sidecar; a host without a complete job is failed with fio's own words."""
    label = fj.host.label
    # measured (fio-3.33): a server killed mid-run makes the client print
    # "client: host=127.0.0.3 disconnected" on STDOUT (before the JSON) and go on with the others
    said = [ln.strip() for ln in (stdout + "\n" + stderr).splitlines()
            if f"host={srv.local_address} " in ln + " " or f"<{srv.local_address}>" in ln]
    fio_err = said[-1] if said else (stderr.strip().splitlines() or [""])[-1]
    if not doc or not doc["jobs"]:
        out.fail(fj, f"{label}: no result from its fio server" + (f" ({fio_err})" if fio_err else ""), extra)
        return
    folder = log_folder(tmp)
    _strip_address(folder, srv.local_address)
    (folder / CLIENT_OUTPUT).write_text(stdout)
    write_json(tmp, doc)
    if not json_complete(tmp):
        tmp.unlink(missing_ok=True)
        out.fail(fj, f"{label}: fio reported an error for its job ({_job_error(doc)})", extra)
        return
    final = fj.directory / f"{fj.point.name}.json"
    files = sidecar_dir(fj.directory, fj.point)
    shutil.rmtree(files, ignore_errors=True)
    os.replace(folder, files)
    replace_durably(tmp, final)
    out.done(fj, final, dict(extra, tool_version=doc.get("fio version")))


def _stop_or_say(server: FioServer, ssh_extra: Sequence[str]) -> None:
    """stop_server; when the host cannot be reached any more (its sshd died mid-run), one line on stderr
    naming the server left there, and the other hosts' servers are still stopped."""
    try:
        stop_server(server, ssh_extra)
    except FleetError as e:
        print(f"memstor: {e}; end it on {server.host.hostname} by hand (kill {server.pid})", file=sys.stderr)


def _job_error(doc: dict) -> str:
    """The first job error in a per-host document (``error`` code), for a one-line reason."""
    for j in doc.get("jobs") or []:
        if j.get("error"):
            return f"job {j.get('jobname')!r} error {j.get('error')}"
    return "no complete job"
