"""Resumable sweeps: run a grid of measurement points, one raw file + metadata sidecar per point.

Layout (DESIGN.md)::

    <data>/raw/<host>/<experiment>/<point><suffix>      raw tool output (immutable once complete)
    <data>/raw/<host>/<experiment>/<point>.meta.json    exact command, tool + version, params, times...
    <data>/raw/<host>/<experiment>/<point>.files/       optional: the point's extra raw files (e.g. fio logs)
    <data>/raw/<host>/<experiment>/manifest.json        experiment, host, sysinfo, points in order
    <data>/raw/<host>/<experiment>/.lock                flock: one sweep per experiment at a time

Guarantees:

- Every file is written atomically (:mod:`memstor.core.files`: temp file in the same folder + fsync +
  ``os.replace``). The runner writes its raw output to ``out_tmp``; the sweep renames it only after the
  runner succeeded and ``runner.complete(out_tmp)`` accepted it, so a SIGKILL mid-point leaves no
  half-written raw file.
  Stale temp files (``*.tmp*``) from a killed sweep are removed when the next sweep starts.
- A point whose raw file is complete (``runner.complete(raw)``) and whose meta says ``status: done``
  with the same params is not rerun (``cached``).
- Raw data is immutable: a point whose raw file is complete and whose meta says ``status: done`` with
  OTHER params (another drive, file or setting under the same point name) is never replaced. The new
  point is marked failed (manifest and PointResult only: the old raw file and meta stay byte for byte)
  with one line naming the raw file and the way out (another ``--data`` or ``--host``, or move the old
  folder); the other points proceed. Incomplete or failed points are re-measured.
- A failed point is recorded (meta ``status: failed`` + ``error``, no raw file) and the sweep goes on;
  the next run retries it.
- Ctrl-C (KeyboardInterrupt) removes the interrupted point's temp file, records nothing for it, and
  raises :class:`SweepInterrupted` ("interrupted: N of M points done; rerun the same command to resume").
- State is passed in plain sight: a :class:`SweepSession` (fields to record, read-only mode, plan note) goes
  to each sweep, which counts there what it measured, found measured, failed or refused
  (``memstor.experiments.run_experiment`` records what device was measured and whether anything was).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from memstor import __version__
from memstor.core.errors import Interrupted, MemstorError, PointFailed, UsageError, first_line
from memstor.core.files import (
    TMP_MARK,
    clean_stale_tmp,
    read_json,
    replace_durably,
    set_aside,
    sweep_lock,
    utc_now,
    write_json,
)
from memstor.measure.progress import Progress, plan_line

#: Names of points, experiments and hosts: file-safe, no path separators, no leading dot.
SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+=,@-]*$")
MANIFEST = "manifest.json"
META_SUFFIX = ".meta.json"


class SweepInterrupted(Interrupted):
    """The user interrupted a sweep (Ctrl-C); completed points are kept and a rerun resumes."""


class NotAllMeasured(MemstorError):
    """A sweep of a session that only reads (:meth:`SweepSession.reading`) reached a point that is not measured
    yet (nothing was written)."""


@dataclass(frozen=True)
class Point:
    """One measurement point of a sweep.

    name: unique, filesystem-safe; encodes everything that changes the measurement.
    params: JSON-able grid coordinates (copied into meta + manifest).
    est_s: expected wall time in seconds (weights the progress bar's ETA).
    incidental: params keys that do not change the measurement (e.g. the test file's path on the same
        device): a completed raw point that differs only in them is the same measurement (cached).
    """

    name: str
    params: dict = field(default_factory=dict, hash=False, compare=True)
    est_s: float = 0.0
    incidental: tuple = ()


def same_measurement(point: Point, recorded) -> bool:
    """True when a meta's recorded params describe the same measurement as ``point`` (incidental keys aside)."""
    new = _normalise(point.params)
    if not (isinstance(recorded, dict) and isinstance(new, dict)):
        return recorded == new
    keys = (set(recorded) | set(new)) - set(point.incidental)
    return all(recorded.get(k) == new.get(k) for k in keys)


class RawFormat(Protocol):
    """What reading a folder's raw files needs (is_cached, conflict, survey): their suffix and completeness."""

    suffix: str  # ".json" or ".txt" (raw output file suffix)

    def complete(self, raw: Path) -> bool:
        """True when the raw file holds a complete measurement."""
        ...


class Runner(RawFormat, Protocol):
    """What run_sweep needs from a tool runner (fio, mlc, loadlat...): a RawFormat that also measures."""

    def run(self, point: Point, out_tmp: Path) -> dict:
        """Write raw output to out_tmp; return meta extras (command: list[str], tool, tool_version...).

        Raise PointFailed("point X: reason") on failure. A PointFailed may carry a ``meta`` dict
        attribute (e.g. the command line) that is recorded in the failed point's meta file.
        """
        ...


@dataclass
class PointResult:
    """What happened to one point in one run_sweep call."""

    point: Point
    status: str  # "done" (measured now) | "cached" (complete raw found) | "failed"
    raw: Path | None  # <data>/raw/<host>/<experiment>/<point.name><suffix>; None when failed
    meta: Path  # same stem + ".meta.json"
    error: str | None = None


@dataclass
class SweepSession:
    """What the sweeps of one run share, handed to each :func:`run_sweep` in plain sight (no hidden state).

    record: JSON-able fields every sweep adds to its manifest and to each point meta it writes (e.g.
        ``device={...}``: what was measured); they never override a sweep's own keys.
    only_measured: the sweeps only read (they write no manifest): the first point not measured yet raises
        :class:`NotAllMeasured` before anything is written (see :meth:`reading`).
    plan_note: text added to each sweep's plan line (e.g. that an adaptive grid may add points).
    measured, failed: points the session's finished sweeps ran (a complete raw file, or a failure);
    cached: points found measured; refused: completed points of other params kept, failed without running.
    A sweep stopped by an exception (Ctrl-C, a tool missing, NotAllMeasured) adds nothing to the counts.
    """

    record: dict = field(default_factory=dict)
    only_measured: bool = False
    plan_note: str = ""
    measured: int = 0
    failed: int = 0
    cached: int = 0
    refused: int = 0

    @property
    def ran(self) -> int:
        """Points run by the session's sweeps (measured or failed; those found measured or refused excluded)."""
        return self.measured + self.failed

    def add(self, results: Sequence[PointResult], ran: set[str]) -> None:
        """Count one finished sweep's ``results``; ``ran``: the names of the points it ran."""
        for r in results:
            if r.status == "cached":
                self.cached += 1
            elif r.point.name not in ran:
                self.refused += 1
            elif r.status == "done":
                self.measured += 1
            else:
                self.failed += 1

    @contextlib.contextmanager
    def reading(self) -> Iterator[SweepSession]:
        """Within this block the session's sweeps only read: an experiment tries its run this way first on
        the target its last sweep recorded, so a re-run on measured data prepares no test file and starts no
        tool (memstor.experiments._fio_target.on_target)."""
        before, self.only_measured = self.only_measured, True
        try:
            yield self
        finally:
            self.only_measured = before

    @contextlib.contextmanager
    def noted(self, text: str) -> Iterator[SweepSession]:
        """Within this block each sweep's plan line ends with ``text`` (e.g. "adaptive grid: more points may
        follow, at most 14 per pattern"): a sweep whose points are only the first of several must say so."""
        before, self.plan_note = self.plan_note, text
        try:
            yield self
        finally:
            self.plan_note = before


# ------------------------------------------------------------------------------------------- layout


def raw_dir(data_root: Path, host: str, experiment: str) -> Path:
    """The folder of one experiment's raw outputs: ``<data>/raw/<host>/<experiment>``."""
    return Path(data_root) / "raw" / host / experiment


def processed_path(data_root: Path, host: str, experiment: str) -> Path:
    """The tidy CSV of one experiment: ``<data>/processed/<host>/<experiment>.csv``."""
    return Path(data_root) / "processed" / host / f"{experiment}.csv"


def raw_path(directory: Path, point: Point, suffix: str) -> Path:
    """The raw output file of a point inside an experiment folder."""
    return Path(directory) / f"{point.name}{suffix}"


#: Suffix of a point's sidecar folder: extra raw files of one measurement (e.g. fio's interval logs).
FILES_SUFFIX = ".files"


def sidecar_tmp(out_tmp: Path) -> Path:
    """The temp folder a runner may fill with a point's extra raw files (beside ``out_tmp``). The sweep
    moves it to :func:`sidecar_dir` just before the raw file, so a complete raw file always has its
    complete sidecar; a killed run's temp folder is removed by the next sweep."""
    return Path(f"{out_tmp}{FILES_SUFFIX}")


def sidecar_dir(directory: Path, point: Point) -> Path:
    """``<raw dir>/<point>.files``: the point's extra raw files (immutable once the point is complete)."""
    return Path(directory) / f"{point.name}{FILES_SUFFIX}"


def meta_path(directory: Path, point: Point) -> Path:
    """The ``.meta.json`` sidecar of a point inside an experiment folder."""
    return Path(directory) / f"{point.name}{META_SUFFIX}"


def _normalise(params: dict) -> Any:
    """params as they look after a JSON round trip (tuples -> lists...), for comparing with meta."""
    return json.loads(json.dumps(params, default=str))


# -------------------------------------------------------------------------------------------- sweep


def check_name(kind: str, name: str) -> None:
    """UsageError unless ``name`` is file-safe: letters, digits, ``._+=,@-``, not starting with a dot.

    Point names (files inside the experiment folder) also may not contain ``.tmp`` (the temp-file mark
    cleaned at start) nor end in ``.meta.json``.
    """
    bad = not isinstance(name, str) or not SAFE_NAME.match(name)
    if kind == "point" and not bad:
        bad = TMP_MARK in name or name.endswith(META_SUFFIX)
    if bad:
        extra = f", without '{TMP_MARK}'" if kind == "point" else ""
        raise UsageError(
            f"{kind} name {name!r} is not file-safe: use letters, digits and . _ + = , @ - "
            f"(not starting with '.'{extra})"
        )



def is_cached(point: Point, runner: RawFormat, directory: Path) -> bool:
    """True when the point's raw file is complete, its meta says done with the same params and, where the runner
    has a ``same_method(point, meta)``, it was measured as now (else re-measured; the old files set aside)."""
    raw = raw_path(directory, point, runner.suffix)
    meta = read_json(meta_path(directory, point))
    if meta is None or meta.get("status") != "done" or not raw.is_file():
        return False
    if "params" in meta and not same_measurement(point, meta["params"]):
        return False
    same_method = getattr(runner, "same_method", None)  # e.g. FioRunner: the jobs' regions as built today
    if same_method is not None and not same_method(point, meta):
        return False
    try:
        return bool(runner.complete(raw))
    except Exception:  # a runner that cannot read its own file: treat as incomplete, rerun
        return False


#: The words of a refusal to replace a completed raw point (PointResult.error contains them).
KEPT = "it is kept, not replaced"
#: At most this many differing parameter names are listed in a conflict message.
_MAX_DIFF_KEYS = 4


def conflict(point: Point, runner: RawFormat, directory: Path) -> str | None:
    """The one-line error when the point's raw file is a completed measurement of OTHER params (kept), else
    None: meta status done, raw file complete, and the meta's params differ from ``point.params``."""
    raw = raw_path(directory, point, runner.suffix)
    meta = read_json(meta_path(directory, point))
    if meta is None or meta.get("status") != "done" or "params" not in meta or not raw.is_file():
        return None
    new = _normalise(point.params)
    old = meta["params"]
    if same_measurement(point, old):
        return None
    try:
        if not runner.complete(raw):
            return None
    except Exception:  # unreadable by its own runner: incomplete, may be re-measured
        return None
    if isinstance(old, dict) and isinstance(new, dict):
        keys = sorted(k for k in (set(old) | set(new)) - set(point.incidental) if old.get(k) != new.get(k))
        shown = ", ".join(keys[:_MAX_DIFF_KEYS]) + (", ..." if len(keys) > _MAX_DIFF_KEYS else "")
    else:
        shown = "params"
    return (f"point {point.name}: {raw} is a completed measurement with other parameters ({shown}); "
            f"{KEPT}: measure into another --data or --host, or move or rename {directory} first")



def _same_sweep(old: dict | None, new: dict) -> bool:
    """True when manifest `old` already says what `new` says: the same points with the same outcome (a point
    this run found measured, ``cached``, was ``done`` in the run that measured it) and the same recorded
    fields. Its ``sysinfo`` is not compared: it describes the machine when the points were measured, which a
    run that only found them measured must not replace. Rewriting it would only change its times."""
    if not isinstance(old, dict):
        return False

    def norm(man: dict) -> dict:
        points = [dict(e, status="done" if e.get("status") == "cached" else e.get("status"))
                  for e in man.get("points") or [] if isinstance(e, dict)]
        return {k: v for k, v in man.items() if k not in ("started", "updated", "sysinfo", "points")} | {"points": points}

    return norm(old) == norm(json.loads(json.dumps(new, default=str)))



def check_points(points: Sequence[Point]) -> None:
    """UsageError for an unsafe or duplicated point name."""
    seen: set[str] = set()
    for p in points:
        check_name("point", p.name)
        if p.name in seen:
            raise UsageError(f"point name {p.name!r} appears twice in the sweep: each point needs a unique name")
        if p.name + META_SUFFIX == MANIFEST or p.name == "manifest":
            raise UsageError("point name 'manifest' is reserved: rename the point")
        seen.add(p.name)


def once(fn: Callable[[], Any]) -> Callable[[], Any]:
    """`fn`, called at most once (its first result is kept)."""
    box: list = []

    def call() -> Any:
        if not box:
            box.append(fn())
        return box[0]

    return call


@dataclass
class SweepFolder:
    """One experiment's raw folder on one host while a sweep holds its lock (made by :func:`open_folder`).

    cached: names of the points found measured; kept: point name -> why its completed raw file of other
    params is kept (the point fails without running); entries: the manifest's point list, in order;
    ran: names of the points run so far. sysinfo: the manifest's machine description (a dict, or a
    function giving it, called only when the manifest is written); extra: fields added to the manifest
    (a session's record, a fleet's host list), never over its own keys."""

    experiment: str
    host: str
    directory: Path
    suffix: str
    sysinfo: Any
    extra: dict
    started: str
    cached: set[str]
    kept: dict[str, str]
    entries: list[dict]
    ran: set[str] = field(default_factory=set)

    def known(self, p: Point) -> PointResult | None:
        """The result of a point that is not run (found measured, or kept), else None: it needs measuring."""
        if p.name in self.cached:
            return PointResult(p, "cached", raw_path(self.directory, p, self.suffix), meta_path(self.directory, p))
        if p.name in self.kept:  # never touch a completed measurement of something else
            return PointResult(p, "failed", None, meta_path(self.directory, p), self.kept[p.name])
        return None

    def settled(self) -> set[str]:
        """Names of the points this sweep will not run (found measured or kept)."""
        return self.cached | set(self.kept)

    def manifest(self) -> dict:
        """The manifest.json object (the extra fields before the point list)."""
        man = {"experiment": self.experiment, "host": self.host, "memstor_version": __version__,
               "started": self.started, "updated": utc_now(), "sysinfo": self.sysinfo}
        man.update({k: v for k, v in self.extra.items() if k not in man and k != "points"})
        man["points"] = self.entries
        return man

    def write_manifest(self) -> None:
        """Write the manifest unless the one there says the same (:func:`_same_sweep`): a no-op re-run changes nothing."""
        man = self.manifest()
        if not _same_sweep(read_json(self.directory / MANIFEST), man):
            if callable(man.get("sysinfo")):  # collected only now that it is written
                man = dict(man, sysinfo=man["sysinfo"]())
            write_json(self.directory / MANIFEST, man)

    def record(self, i: int, res: PointResult) -> None:
        """Note point ``i``'s result of a run in the manifest (and write it)."""
        self.ran.add(res.point.name)
        self.entries[i].update(status=res.status, raw=res.raw.name if res.raw else None, error=res.error)
        self.write_manifest()

    def stop_after(self, i: int, why: str, write: bool = True) -> None:
        """The points after ``i`` are not run (an adaptive sweep's stop rule said ``why``)."""
        for entry in self.entries[i + 1:]:
            entry.update(status="not run", raw=None, error=why)
        if write:
            self.write_manifest()


def survey(experiment: str, host: str, directory: Path, points: Sequence[Point], runner: RawFormat,
           sysinfo: Any = None, extra: dict | None = None) -> SweepFolder:
    """What the folder holds for ``points``: measured (:func:`is_cached`), kept (:func:`conflict`), pending."""
    cached = {p.name for p in points if is_cached(p, runner, directory)}
    kept = {p.name: why for p in points if p.name not in cached for why in [conflict(p, runner, directory)] if why}
    entries = [{"name": p.name, "params": _normalise(p.params),
                "status": "cached" if p.name in cached else "failed" if p.name in kept else "pending",
                "raw": raw_path(directory, p, runner.suffix).name if p.name in cached else None,
                "meta": meta_path(directory, p).name, "error": kept.get(p.name)} for p in points]
    return SweepFolder(experiment, host, directory, runner.suffix, sysinfo, dict(extra or {}), utc_now(), cached,
                       kept, entries)


@contextlib.contextmanager
def open_folder(experiment: str, host: str, directory: Path, points: Sequence[Point], runner: RawFormat,
                sysinfo: Any = None, extra: dict | None = None) -> Iterator[SweepFolder]:
    """Create ``directory``, hold its lock (SweepLocked when another sweep does), remove a killed sweep's temp
    files, and yield its :func:`survey`. UsageError when the folder cannot be created."""
    try:
        Path(directory).mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UsageError(f"cannot create {directory}: {err.strerror}; choose another --data folder") from None
    with sweep_lock(directory):
        clean_stale_tmp(directory)
        yield survey(experiment, host, directory, points, runner, sysinfo, extra)


def run_sweep(
    experiment: str,
    points: Sequence[Point],
    runner: Runner,
    data_root: Path,
    host: str,
    *,
    sysinfo: dict | Callable[[], dict | None] | None = None,
    progress: bool = True,
    until: Callable[[list[PointResult]], str | None] | None = None,
    session: SweepSession | None = None,
) -> list[PointResult]:
    """Run every point not already complete, one at a time, and return one PointResult per point.

    until: an adaptive sweep's stop rule, called with the results so far after every point (cached ones
    included); when it returns a reason (e.g. "steady state at round 7"), the remaining points are not
    run: they are listed in the manifest with status ``not run`` and that reason, and the returned list
    ends with the last point handled. A later call with the same points resumes where the rule says.

    sysinfo: the manifest's machine description, or a function giving it (called once, and only when the
    manifest is written: a run that finds every point measured collects nothing). session: what the sweeps
    of one run share (recorded fields, read-only mode, plan note) and where they count their points
    (default: a session of this sweep alone).

    Raw outputs go to ``raw_dir(data_root, host, experiment)``. Raises UsageError for bad names,
    SweepLocked when another sweep of the same experiment runs, SweepInterrupted on Ctrl-C.
    A runner's PointFailed is recorded and the sweep goes on; any other MemstorError stops the
    sweep after recording the point as failed (e.g. fio not installed: every point would fail).
    A point whose completed raw file holds other params is failed without running (see :func:`conflict`).
    """
    session = session if session is not None else SweepSession()
    check_name("experiment", experiment)
    check_name("host", host)
    points = list(points)
    check_points(points)
    directory = raw_dir(data_root, host, experiment)
    only = session.only_measured
    with open_folder(experiment, host, directory, points, runner, once(sysinfo) if callable(sysinfo) else sysinfo,
                     session.record) as folder:
        if not only:
            folder.write_manifest()
            if progress:
                print(plan_line(experiment, points, folder.settled(), directory, session.record.get("device"),
                                session.plan_note), file=sys.stderr)
        results: list[PointResult] = []
        bar = Progress(points, folder.settled(), experiment, progress and not only)
        try:
            _sweep_points(folder, points, runner, results, bar, until, only)
        except KeyboardInterrupt:
            n_ok = sum(1 for r in results if r.status in ("done", "cached"))
            raise SweepInterrupted(
                f"interrupted: {n_ok} of {len(points)} points done; rerun the same command to resume"
            ) from None
        finally:
            bar.close()
    if only and progress:  # reading only writes nothing: the manifest of the run that measured stays
        handled = [r.point for r in results]
        print(plan_line(experiment, handled, {p.name for p in handled}, directory, None, session.plan_note),
              file=sys.stderr)
    session.add(results, folder.ran)
    return results


def _sweep_points(folder: SweepFolder, points: list[Point], runner: Runner, results: list[PointResult],
                  bar: Progress, until: Callable[[list[PointResult]], str | None] | None, only: bool) -> None:
    """Handle the points in order, appending to ``results``: a known one as it is, the others run (reading
    only: NotAllMeasured instead), until the stop rule gives a reason."""
    for i, p in enumerate(points):
        res = folder.known(p)
        if res is None:
            if only:
                raise NotAllMeasured(f"point {p.name} is not measured")
            bar.start(p)
            res = _run_point(folder.experiment, folder.host, p, runner, folder.directory, folder.extra)
            folder.record(i, res)
            bar.finish(p)
        results.append(res)
        why = until(results) if until is not None else None  # cached points too: a rerun stops alike
        if why:
            folder.stop_after(i, why, write=not only)
            return


def _run_point(experiment: str, host: str, p: Point, runner: Runner, directory: Path,
               extra: dict | None = None) -> PointResult:
    """Run one point: runner -> temp file -> checks -> rename + meta. Never leaves a temp file.

    extra: the session's recorded fields (SweepSession.record), added to the meta (never over its own keys)."""
    raw = raw_path(directory, p, runner.suffix)
    meta = meta_path(directory, p)
    tmp = directory / f"{raw.name}{TMP_MARK}"
    files_tmp, files = sidecar_tmp(tmp), sidecar_dir(directory, p)
    aside = set_aside(directory, meta, [raw, files], utc_now())  # a point measured before: kept, not replaced
    base = {
        "experiment": experiment,
        "point": p.name,
        "params": _normalise(p.params),
        "host": host,
        "memstor_version": __version__,
        **({"superseded": aside} if aside else {}),  # where the point's earlier measurement went
    }
    base.update({k: v for k, v in (extra or {}).items() if k not in base})
    start_wall, t0 = utc_now(), time.monotonic()

    def record(status: str, extras: dict, error: str | None) -> None:
        info = dict(base)
        info.update({k: v for k, v in extras.items() if k not in base})
        info.update(
            start_time=start_wall,
            end_time=utc_now(),
            duration_s=round(time.monotonic() - t0, 3),
            status=status,
            error=error,
            raw=raw.name if status == "done" else None,
        )
        write_json(meta, info)

    def fail(error: str, extras: dict) -> PointResult:
        with contextlib.suppress(OSError):
            tmp.unlink()
        with contextlib.suppress(OSError):
            raw.unlink()  # a failed point has no raw file (an older, unreferenced one included)
        for folder in (files_tmp, files):
            shutil.rmtree(folder, ignore_errors=True)
        record("failed", extras, error)
        return PointResult(p, "failed", None, meta, error)

    try:
        extras = runner.run(p, tmp) or {}
    except PointFailed as err:
        return fail(first_line(err) or f"point {p.name}: failed", dict(getattr(err, "meta", {}) or {}))
    except MemstorError as err:
        fail(first_line(err), dict(getattr(err, "meta", {}) or {}))
        raise
    except OSError as err:
        return fail(f"point {p.name}: {err}", {})
    except BaseException:  # KeyboardInterrupt included: no temp file, nothing recorded
        with contextlib.suppress(OSError):
            tmp.unlink()
        shutil.rmtree(files_tmp, ignore_errors=True)
        raise
    try:
        if not tmp.is_file():
            return fail(f"point {p.name}: the runner wrote no output", extras)
        if not runner.complete(tmp):
            return fail(f"point {p.name}: the output is incomplete (no complete measurement in it)", extras)
        if files_tmp.is_dir():  # the sidecar first: a complete raw file always has its complete sidecar
            shutil.rmtree(files, ignore_errors=True)  # of an earlier, incomplete attempt
            os.replace(files_tmp, files)
        replace_durably(tmp, raw)
        record("done", extras, None)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        shutil.rmtree(files_tmp, ignore_errors=True)
        raise
    return PointResult(p, "done", raw, meta, None)
