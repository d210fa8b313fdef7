"""Build, locate and run ``ioarrive``, memstor's arrival-driven (open-loop) I/O generator (C, lib/ioarrive/).

ioarrive issues each I/O at its intended arrival time whatever is in flight (Poisson, constant or a replayed
trace, per direction), times every I/O three ways (intended arrival, submission, completion), checks its
own arrivals and lag and prints one JSON document (lib/ioarrive/README.md). :func:`run` runs one job
(:class:`IoarriveJob`) with a timeout and returns an :class:`IoarriveResult`: ``status`` ``ok`` with the
tidy rows of memstor.parse.ioarrive, or ``failed`` with a one-line ``reason`` (a usage error, a timeout, a
crash, I/O errors, output that is not ioarrive's JSON). A run whose loop did not hold is ``ok`` (it ran):
its rows say ``open_loop`` False and why.

The executable: ``$MEMSTOR_IOARRIVE`` when set, else ``build/bin/ioarrive`` (``make ioarrive``), else
``ioarrive`` on PATH.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memstor.core.errors import MemstorError, ParseError, PointFailed, UsageError, first_line
from memstor.measure.ctool import CTool
from memstor.measure.ctool import repo_root as ctool_repo_root
from memstor.parse.ioarrive import load, parse_ioarrive

#: The tool: its sources, its build and its executable (memstor.measure.ctool, shared with the other C tools).
TOOL = CTool("ioarrive", "MEMSTOR_IOARRIVE")
#: Where ``make ioarrive`` puts the tool, relative to the repository root.
BINARY_RELPATH = TOOL.binary_relpath
SOURCE_DIR = TOOL.source_dir
ENV_VAR = TOOL.env_var
#: Seconds a run may take beyond ramp + runtime + drain before it is killed (start-up, probe, JSON).
TIMEOUT_MARGIN_S = 30.0


repo_root = ctool_repo_root
compile_command = TOOL.compile_command
build = TOOL.build
binary = TOOL.binary


@dataclass(frozen=True)
class IoarriveJob:
    """One ioarrive run. ``target`` (named twice on the command line) or ``sim`` (``servers=C,service=...``)
    must be given; rates in IOPS: ``rate_iops`` split by ``read_share`` (percent), or ``read_rate_iops`` /
    ``write_rate_iops``. ``arrival`` is ``poisson``, ``constant`` or ``trace:FILE``. ``extra``: more arguments."""

    target: str | None = None
    sim: str | None = None
    virtual: bool = False
    rate_iops: float | None = None
    read_share: float | None = None
    read_rate_iops: float | None = None
    write_rate_iops: float | None = None
    arrival: str | None = None
    bs: int | str | None = None
    pattern: str | None = None
    span: int | str | None = None
    runtime_s: float = 10.0
    ramp_s: float = 0.0
    drain_s: float = 10.0
    engine: str | None = None
    max_outstanding: int | None = None
    direct: bool = True
    seed: int | None = None
    check_as: str | None = None
    rt_priority: int | None = None
    pause_probe_s: float | None = None
    extra: tuple[str, ...] = field(default_factory=tuple)

    def args(self) -> list[str]:
        """The command-line arguments (without the executable)."""
        out: list[str] = []
        if self.target is not None:
            out += ["--target", str(self.target), "--confirm-target", str(self.target)]
        if self.sim is not None:
            out += ["--sim", self.sim]
        if self.virtual:
            out.append("--virtual")
        for opt, value in (("--rate", self.rate_iops), ("--read-share", self.read_share),
                           ("--read-rate", self.read_rate_iops), ("--write-rate", self.write_rate_iops),
                           ("--arrival", self.arrival), ("--bs", self.bs), ("--pattern", self.pattern),
                           ("--span", self.span), ("--runtime", self.runtime_s), ("--ramp", self.ramp_s),
                           ("--drain", self.drain_s), ("--engine", self.engine),
                           ("--max-outstanding", self.max_outstanding), ("--seed", self.seed),
                           ("--check-as", self.check_as), ("--rt-priority", self.rt_priority),
                           ("--pause-probe", self.pause_probe_s)):
            if value is not None:
                out += [opt, f"{value:g}" if isinstance(value, float) else str(value)]
        if not self.direct:
            out.append("--buffered")
        return out + list(self.extra)

    def timeout_s(self) -> float:
        """Wall-clock limit of the run: ramp + runtime + drain + :data:`TIMEOUT_MARGIN_S` (virtual time: the
        margin plus 1 s per 100 simulated seconds)."""
        if self.virtual:
            return TIMEOUT_MARGIN_S + (self.ramp_s + self.runtime_s) / 100.0
        return self.ramp_s + self.runtime_s + self.drain_s + (self.pause_probe_s or 0.0) + TIMEOUT_MARGIN_S


@dataclass
class IoarriveResult:
    """What a run gave: ``status`` ``ok`` or ``failed`` (``reason``: one line), its JSON document (None when
    there was none) and tidy rows (memstor.parse.ioarrive.COLUMNS)."""

    status: str
    reason: str
    command: list[str]
    returncode: int | None
    doc: dict | None = None
    rows: list[dict] = field(default_factory=list)
    stderr: str = ""
    text: str = ""  # the JSON exactly as ioarrive printed it ("" when there was none)

    @property
    def open_loop(self) -> bool:
        return bool(self.doc and self.doc.get("open_loop"))


def _failed(cmd: list[str], rc: int | None, reason: str, stderr: str = "", doc: dict | None = None) -> IoarriveResult:
    return IoarriveResult("failed", first_line(reason), cmd, rc, doc, [], stderr)


def ensure_binary(root: Path | None = None) -> Path:
    """The ioarrive executable (:func:`binary`), built first with :func:`build` when it is not built yet (a run
    on a machine where ``make ioarrive`` was not run); MemstorError, one line, when it cannot be built."""
    try:
        return binary(root)
    except MemstorError as missing:
        if os.environ.get(ENV_VAR):
            raise
        try:
            return build(root)
        except MemstorError as err:
            raise MemstorError(f"{first_line(missing)}; building it here failed: {first_line(err)}") from None


def run(job: IoarriveJob, *, exe: Path | str | None = None, timeout_s: float | None = None,
        source: str = "", env: dict[str, str] | None = None) -> IoarriveResult:
    """Run ioarrive for ``job``; never raises for a failed run (MemstorError only when there is no binary)."""
    cmd = [str(exe if exe is not None else binary()), *job.args()]
    limit = timeout_s if timeout_s is not None else job.timeout_s()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=limit,
                              env={**os.environ, **env} if env else None)
    except subprocess.TimeoutExpired:
        return _failed(cmd, None, f"ioarrive timed out after {limit:g} s (killed)")
    except OSError as e:
        return _failed(cmd, None, f"cannot start {cmd[0]}: {e}")
    err = proc.stderr.strip()
    if proc.returncode == 2:
        return _failed(cmd, 2, f"usage error: {first_line(err) or 'exit status 2'}", proc.stderr)
    doc: dict[str, Any] | None = None
    try:
        doc = json.loads(proc.stdout) if proc.stdout.strip() else None
        rows = parse_ioarrive(doc, source) if doc is not None else []
    except (ValueError, ParseError) as e:
        return _failed(cmd, proc.returncode, f"exit status {proc.returncode}, output is not ioarrive's JSON: {e}",
                       proc.stderr)
    if doc is None:
        return _failed(cmd, proc.returncode, f"exit status {proc.returncode}, no JSON: {first_line(err) or '?'}",
                       proc.stderr)
    if proc.returncode != 0:
        why = "I/O errors" if proc.returncode == 1 else f"exit status {proc.returncode}"
        return _failed(cmd, proc.returncode, f"{why}: {first_line(err) or '?'}", proc.stderr, doc)
    return IoarriveResult("ok", "", cmd, 0, doc, rows, proc.stderr, proc.stdout)


def complete(raw: Path) -> bool:
    """True when ``raw`` holds ioarrive's JSON of a run that finished: the document, its directions, not
    interrupted (a run whose loop did not hold is complete: it says so itself)."""
    try:
        doc = load(Path(raw).read_text(encoding="utf-8", errors="replace"))
    except (OSError, ParseError):
        return False
    return bool(doc["directions"]) and not doc.get("interrupted")


class IoarriveRunner:
    """memstor.measure.sweep's Runner for ioarrive: point name -> :class:`IoarriveJob`; the raw output is
    ioarrive's JSON exactly as it printed it (suffix ``.json``). The executable is :func:`ensure_binary`'s,
    looked up (or built) when the first point runs: a sweep that only reads measured points needs none."""

    suffix = ".json"

    def __init__(self, jobs: dict[str, IoarriveJob], exe: Path | str | None = None):
        self.jobs = dict(jobs)
        self.exe = exe

    def run(self, point: Any, out_tmp: Path) -> dict:
        """Run the point's job, write its JSON to out_tmp; meta extras; PointFailed (one line) on failure."""
        job = self.jobs.get(point.name)
        if job is None:
            raise UsageError(f"point {point.name}: no ioarrive job defined for it (a bug in the experiment's grid)")
        if job.target is not None and not os.path.exists(job.target):
            raise UsageError(f"point {point.name}: target {job.target} does not exist: create it with "
                             "memstor.measure.target.prepare_test_file (memstor run does) and rerun")
        if self.exe is None:
            self.exe = ensure_binary()
        res = run(job, exe=self.exe)
        doc = res.doc or {}
        meta: dict[str, Any] = {
            "command": res.command, "command_line": shlex.join(res.command), "tool": "ioarrive",
            "tool_version": doc.get("version"), "job": dataclasses.asdict(job),
            "ioarrive_engine": (doc.get("engine") or {}).get("name"), "open_loop": doc.get("open_loop"),
            "reasons": doc.get("reasons"), "returncode": res.returncode, "ioarrive_stderr": res.stderr[-2000:],
        }
        if res.status != "ok":
            err = PointFailed(f"point {point.name}: ioarrive {res.reason}")
            err.meta = meta
            raise err
        Path(out_tmp).write_text(res.text, encoding="utf-8")
        return meta

    def complete(self, raw: Path) -> bool:
        return complete(raw)


__all__ = ["BINARY_RELPATH", "ENV_VAR", "IoarriveJob", "IoarriveResult", "IoarriveRunner", "binary", "build",
           "compile_command", "complete", "ensure_binary", "run"]
