"""A fleet host's test file (issue 20): created and marked by memstor on that host before its fio server starts.

``memstor testfile`` (:func:`local_target`) prepares the target with a local run's refusal rules
(memstor.measure.target.prepare_test_file: a file memstor did not create is refused, a raw device only when
named twice), chooses the engine there (O_DIRECT probed) and prints one JSON line. :func:`remote_target`
runs it on a host over SSH; a fleet job then names only that file (or that raw device).

Unlike a local sweep, the test file's folder is not locked for the whole fleet run: a lock held on the host
would need a process there for the run's length. Two fleet runs on one host's target are the user's to avoid.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from memstor.measure.device import medium_id
from memstor.measure.fio_engine import choose_engine, fio_version, probe_direct
from memstor.measure.fleet import FleetError, run_ssh
from memstor.measure.fleet_hosts import Host
from memstor.measure.sysinfo import host_name
from memstor.measure.target import TESTFILE_NAME, prepare_test_file

#: Seconds allowed to create a test file over SSH, per GB (a slow disk writes ~50 MB/s), and at least.
_CREATE_S_PER_GB, _CREATE_MIN_S = 20.0, 120.0


def local_target(size_bytes: int, target_dir: str | None, device: str | None, confirm_device: str | None,
                 ioengine: str, direct: int) -> dict:
    """Prepare memstor's test file in ``target_dir`` (or check the raw ``device``), choose the engine; the
    description as a dict: path, size_bytes, raw, reused, ioengine, ioengine_why, medium, fio_version, hostname.
    UsageError / UnsafeTarget (one line) when refused, before anything is written."""
    raw = device is not None or confirm_device is not None
    tf = prepare_test_file(size_bytes, Path("."), Path(target_dir) if target_dir else None, device=device,
                           confirm_device=confirm_device)
    if raw:
        engine, why = ioengine, f"{ioengine} as asked (raw device {tf.path}: not probed)"
    else:
        folder = Path(tf.path).parent
        if direct:
            probe_direct(folder)
        engine, why = choose_engine(ioengine, folder, direct=bool(direct))
    return {"path": str(tf.path), "size_bytes": tf.size_bytes, "raw": raw, "reused": bool(tf.reused),
            "ioengine": engine, "ioengine_why": why, "medium": medium_id(tf.path, raw),
            "fio_version": fio_version(), "hostname": host_name()}


def testfile_argv(host: Host, size_bytes: int, ioengine: str, direct: int) -> list[str]:
    """The ``memstor testfile`` command for ``host`` (its memstor command, then the target or device)."""
    argv = [*shlex.split(host.memstor), "testfile", "--size", str(size_bytes), "--ioengine", ioengine,
            "--direct", str(int(direct))]
    if host.device:
        argv += ["--device", host.device, "--confirm-device", host.device]
    else:
        argv += ["--target", str(host.target)]
    return argv


def remote_target(host: Host, size_bytes: int, ioengine: str, direct: int, ssh_extra=()) -> dict:
    """:func:`local_target` run on ``host`` through SSH; its description. FleetError naming the host and
    memstor's one-line reason when the host refuses the target, memstor is missing there, or SSH fails."""
    argv = testfile_argv(host, size_bytes, ioengine, direct)
    timeout = max(_CREATE_MIN_S, _CREATE_S_PER_GB * size_bytes / 1e9)
    r = run_ssh(host, shlex.join(argv), ssh_extra, timeout=timeout)
    if r.returncode == 127:
        raise FleetError(f"{host.label}: {argv[0]} not found there: install memstor on {host.hostname} "
                         "(make env there) or set memstor: in the host file to its path")
    if r.returncode == 255:
        why = (r.stderr.strip().splitlines() or ["exit status 255"])[-1]
        raise FleetError(f"{host.label}: ssh {host.ssh} failed: {why}")
    if r.returncode != 0:
        why = (r.stderr.strip().splitlines() or [f"exit status {r.returncode}"])[-1]
        raise FleetError(f"{host.label}: target refused there: {why.removeprefix('memstor: ')}")
    try:
        info = json.loads(r.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise FleetError(f"{host.label}: `{shlex.join(argv)}` printed no JSON description "
                         "(is memstor there as recent as here?)") from None
    path = str(info.get("path", ""))
    if (path != host.device) if host.device else Path(path).name != TESTFILE_NAME:
        raise FleetError(f"{host.label}: memstor there prepared {path!r}, not its test file in {host.target}")
    return info
