"""What a fio family measures on: the test file (or raw device), the engine and the medium.

:func:`fio_target` holds the test-file folder's lock, prepares the file and probes the engine;
:func:`recorded_target` is the target the last sweep recorded (nothing prepared, nothing probed);
:func:`on_target` runs a family's sweep on the first, and on the second only when it only reads.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from memstor.core.errors import UsageError
from memstor.core.files import folder_lock, read_json
from memstor.experiments._fio_params import FioCommon
from memstor.measure.device import medium_id
from memstor.measure.fio import FioRunner
from memstor.measure.fio_engine import choose_engine, probe_direct
from memstor.measure.sweep import MANIFEST, NotAllMeasured, SweepSession, raw_dir
from memstor.measure.target import (
    TESTFILE_NAME,
    TestFile,
    check_directory,
    device_bytes,
    prepare_test_file,
    remove_test_file,
)


def _engine(c: FioCommon, directory: Path) -> tuple[str, str]:
    """(engine, why): the preferred engine or its fallback; O_DIRECT probed when direct=1."""
    if c.direct:
        probe_direct(directory)
    return choose_engine(c.ioengine, directory, direct=bool(c.direct))


@dataclass(frozen=True)
class Target:
    """What a fio family measures on: the test file (or raw device), the engine chosen and the medium.

    tf: memstor.measure.target.TestFile; raw: a raw device named twice; engine: the engine that runs and
    why (note = both, for the table); medium: the drive's identity (part of every point's params)."""

    tf: TestFile
    raw: bool
    engine: str
    why: str
    note: str
    medium: str

    @property
    def info(self) -> dict:
        """The sweep's manifest ``sysinfo`` entry: engines and the test file."""
        return {"ioengine": self.engine, "ioengine_why": self.why, "test_file": str(self.tf.path),
                "test_file_bytes": self.tf.size_bytes}


@contextlib.contextmanager
def fio_target(c: FioCommon, data_root: Path, target_dir: Path | None) -> Iterator[Target]:
    """Hold the test-file folder's lock (one fio sweep at a time per folder: another one must not resize
    the file in use), prepare the test file or check the raw device, choose the engine, yield a Target."""
    raw = bool(c.device or c.confirm_device)
    lock_dir = _test_file_dir(data_root, None if raw else target_dir)
    with folder_lock(lock_dir, "the fio test file"):
        if raw:
            tf = prepare_test_file(c.file_size_bytes, data_root, target_dir, device=c.device or None,
                                   confirm_device=c.confirm_device or None)
            engine, why = c.ioengine, f"{c.ioengine} as asked (raw device {tf.path}: not probed)"
        else:
            tf = prepare_test_file(c.file_size_bytes, data_root, target_dir)
            engine, why = _engine(c, Path(tf.path).parent)
        note = f"{engine} ({why})" if why else engine
        # the medium is part of each point's identity: another drive is another point
        yield Target(tf=tf, raw=raw, engine=engine, why=why, note=note, medium=medium_id(tf.path, raw))


def _test_file_dir(data_root: Path, target_dir: Path | None) -> Path:
    """The folder the test file goes to (checked for safety, created when it is the default scratch)."""
    if target_dir is not None:
        return check_directory(Path(target_dir))
    scratch = Path(data_root) / "scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    return check_directory(scratch, given_as="scratch directory")


def recorded_target(experiment: str, c: FioCommon, data_root: Path, target_dir: Path | None,
                    host: str) -> Target | None:
    """The Target the last sweep of `experiment` used, from its manifest, when it is this run's test file (same
    path and size) and engine request; None otherwise (and always for a raw device). Nothing is prepared or
    probed: it lets a run whose points are all measured re-analyse without touching the test file or fio."""
    if c.device or c.confirm_device:
        return None
    info = (read_json(raw_dir(data_root, host, experiment) / MANIFEST) or {}).get("sysinfo") or {}
    folder = Path(target_dir) if target_dir is not None else Path(data_root) / "scratch"
    path = folder.expanduser().resolve() / TESTFILE_NAME
    same = (info.get("ioengine_requested") == c.ioengine and info.get("ioengine")
            and info.get("test_file") == str(path) and info.get("test_file_bytes") == c.file_size_bytes)
    if not same or not folder.is_dir():
        return None
    engine, why = str(info["ioengine"]), str(info.get("ioengine_why") or "")
    return Target(tf=TestFile(path=path, size_bytes=c.file_size_bytes, created=True, reused=True), raw=False,
                  engine=engine, why=why, note=f"{engine} ({why})" if why else engine,
                  medium=medium_id(path, False))


class HeldTarget:
    """The target of a run made of several sweeps (the adaptive grid's rounds): the first sweep that
    measures enters :func:`fio_target` (lock, test file, engine probe) and the later ones reuse it, so the
    folder stays locked between rounds and the engine is probed once (one FioRunner, whose engine and
    O_DIRECT checks are cached, serves every round). Use as a context manager; it releases the lock on exit.
    Rounds that only read measured points never enter it."""

    def __init__(self) -> None:
        self._stack = contextlib.ExitStack()
        self.target: Target | None = None
        self._runner: FioRunner | None = None

    def runner(self, jobs: dict):
        """The run's FioRunner (memstor.measure.fio), given this round's jobs."""
        if self._runner is None:
            self._runner = FioRunner(jobs)
        else:
            self._runner.jobs = dict(jobs)
        return self._runner

    def enter(self, c: FioCommon, data_root: Path, target_dir: Path | None) -> Target:
        """The held Target, entering :func:`fio_target` the first time."""
        if self.target is None:
            self.target = self._stack.enter_context(fio_target(c, data_root, target_dir))
        return self.target

    def __enter__(self) -> HeldTarget:
        return self

    def __exit__(self, *exc) -> None:
        self._stack.close()
        self.target = None


def on_target(experiment: str, c: FioCommon, data_root: Path, target_dir: Path | None, host: str, body,
              held: HeldTarget | None = None, *, session: SweepSession):
    """``body(target)`` of a fio family: first on the target its last sweep recorded, reading only (no test
    file prepared, no engine probed, no fio started; ``session.reading()``: body's sweeps must use ``session``), and when a point
    is not measured yet, under :func:`fio_target` (lock, test file, engine) where the sweep measures it.
    Returns what ``body`` returns. A re-run on measured data (a notebook's Run All) thus only re-reads.
    With ``held`` (a :class:`HeldTarget`), a target it already holds is used as it is, and one entered here
    stays held for the next call."""
    if held is not None and held.target is not None:
        return body(held.target)
    recorded = recorded_target(experiment, c, data_root, target_dir, host)
    if recorded is not None:
        try:
            with session.reading():
                return body(recorded)
        except NotAllMeasured:
            pass
    if held is not None:
        return body(held.enter(c, data_root, target_dir))
    with fio_target(c, data_root, target_dir) as t:
        return body(t)


def remove_when_full(results: list, tf) -> None:
    """Delete the test file when a point failed because its filesystem filled up (ENOSPC)."""
    full = [r for r in results if r.status == "failed" and "No space left" in (r.error or "")]
    if full:
        remove_test_file(tf)
        print(f"the filesystem of {tf.path} filled up during point {full[0].point.name}: test file removed; "
              "free some space and rerun the same command to resume", file=sys.stderr)


def span_bytes(t: Target) -> int:
    """Bytes a run writes over (its span): the test file, or the whole raw device (UsageError, one line, when
    sysfs has no size for it)."""
    if not t.raw:
        return int(t.tf.size_bytes)
    size = device_bytes(t.tf.path)
    if not size:
        raise UsageError(f"device {t.tf.path}: cannot read its size from sysfs; the whole-device span needs it "
                         "(use --target DIR for a test file)")
    return size
