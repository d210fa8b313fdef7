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
- Inside ``with recording(device={...}):`` every sweep adds those fields to its manifest and to each
  point meta it writes (``memstor.experiments.run_experiment`` records what device was measured).
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import re
import shutil
import sys
import time
import warnings
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
    sweep_lock,
    utc_now,
    write_json,
)

#: Names of points, experiments and hosts: file-safe, no path separators, no leading dot.
SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+=,@-]*$")
MANIFEST = "manifest.json"
META_SUFFIX = ".meta.json"


#: Fields every sweep run inside :func:`recording` adds to its manifest and point metas (None: none).
_RECORD: contextvars.ContextVar[dict | None] = contextvars.ContextVar("memstor_sweep_record", default=None)


@contextlib.contextmanager
def recording(**fields: Any) -> Iterator[None]:
    """Add JSON-able ``fields`` (e.g. ``device={...}``) to the manifest and every point meta written by the
    sweeps run inside the block (this thread/context only); they never override the sweep's own keys."""
    token = _RECORD.set({**(_RECORD.get() or {}), **fields})
    try:
        yield
    finally:
        _RECORD.reset(token)


def _recorded() -> dict:
    """The fields of the enclosing :func:`recording` blocks ({} outside any)."""
    return dict(_RECORD.get() or {})


class SweepInterrupted(Interrupted):
    """The user interrupted a sweep (Ctrl-C); completed points are kept and a rerun resumes."""


class NotAllMeasured(MemstorError):
    """Inside :func:`only_measured`: a sweep reached a point that is not measured yet (nothing was written)."""


_ONLY_MEASURED: contextvars.ContextVar[bool] = contextvars.ContextVar("memstor_only_measured", default=False)


@contextlib.contextmanager
def only_measured() -> Iterator[None]:
    """Within this block a sweep only reads (it writes no manifest): the first point it would run raises
    NotAllMeasured before anything is written. An experiment tries its run this way first on the target its last sweep recorded,
    so a re-run on measured data prepares no test file and starts no tool (memstor.experiments._fio)."""
    token = _ONLY_MEASURED.set(True)
    try:
        yield
    finally:
        _ONLY_MEASURED.reset(token)


def reading_only() -> bool:
    """True inside :func:`only_measured` (a step that would probe or measure must raise NotAllMeasured)."""
    return _ONLY_MEASURED.get()


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
    """True when a meta's recorded params describe the same measurement as ``point`` (its params, the
    ``incidental`` keys aside)."""
    new = _normalise(point.params)
    if not (isinstance(recorded, dict) and isinstance(new, dict)):
        return recorded == new
    keys = (set(recorded) | set(new)) - set(point.incidental)
    return all(recorded.get(k) == new.get(k) for k in keys)


class Runner(Protocol):
    """What run_sweep needs from a tool runner (fio, mlc, loadlat...)."""

    suffix: str  # ".json" or ".txt" (raw output file suffix)

    def run(self, point: Point, out_tmp: Path) -> dict:
        """Write raw output to out_tmp; return meta extras (command: list[str], tool, tool_version...).

        Raise PointFailed("point X: reason") on failure. A PointFailed may carry a ``meta`` dict
        attribute (e.g. the command line) that is recorded in the failed point's meta file.
        """
        ...

    def complete(self, raw: Path) -> bool:
        """True when the raw file holds a complete measurement."""
        ...


@dataclass
class PointResult:
    """What happened to one point in one run_sweep call."""

    point: Point
    status: str  # "done" (measured now) | "cached" (complete raw found) | "failed"
    raw: Path | None  # <data>/raw/<host>/<experiment>/<point.name><suffix>; None when failed
    meta: Path  # same stem + ".meta.json"
    error: str | None = None


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


def _check_points(points: Sequence[Point]) -> None:
    """UsageError for an unsafe or duplicated point name."""
    seen: set[str] = set()
    for p in points:
        check_name("point", p.name)
        if p.name in seen:
            raise UsageError(f"point name {p.name!r} appears twice in the sweep: each point needs a unique name")
        if p.name + META_SUFFIX == MANIFEST or p.name == "manifest":
            raise UsageError("point name 'manifest' is reserved: rename the point")
        seen.add(p.name)


def is_cached(point: Point, runner: Runner, directory: Path) -> bool:
    """True when the point's raw file is complete and its meta says done with the same params."""
    raw = raw_path(directory, point, runner.suffix)
    meta = read_json(meta_path(directory, point))
    if meta is None or meta.get("status") != "done" or not raw.is_file():
        return False
    if "params" in meta and not same_measurement(point, meta["params"]):
        return False
    try:
        return bool(runner.complete(raw))
    except Exception:  # a runner that cannot read its own file: treat as incomplete, rerun
        return False


#: The words of a refusal to replace a completed raw point (PointResult.error contains them).
KEPT = "it is kept, not replaced"
#: At most this many differing parameter names are listed in a conflict message.
_MAX_DIFF_KEYS = 4


def conflict(point: Point, runner: Runner, directory: Path) -> str | None:
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


class _Progress:
    """A tqdm.auto bar weighted by Point.est_s (seconds), or nothing when disabled.

    The bar's total is the sum of est_s over all points and each finished point advances it by its
    est_s, so tqdm's ETA is in real seconds even when points differ in length (when no point has an
    estimate, every point counts 1). Points already complete count from the start (tqdm's ``initial``)
    and do not distort the rate. The description shows "<experiment> [done/total] <point running>".
    """

    def __init__(self, points: Sequence[Point], cached: set[str], experiment: str, enabled: bool):
        self.weighted = any(p.est_s > 0 for p in points)
        self.experiment = experiment
        self.total = len(points)
        self.done = sum(1 for p in points if p.name in cached)
        self.bar = None
        if not enabled:
            return
        with warnings.catch_warnings():  # no "IProgress not found" noise in notebooks without ipywidgets:
            warnings.simplefilter("ignore")  # tqdm.auto then falls back to the text bar
            from tqdm.auto import tqdm

        self.bar = tqdm(
            total=sum(self._weight(p) for p in points),
            initial=sum(self._weight(p) for p in points if p.name in cached),
            desc=self._desc(""),
            bar_format="{desc}{percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]",
            file=sys.stderr,
            dynamic_ncols=True,
            leave=True,
        )

    def _weight(self, p: Point) -> float:
        """The bar units of one point: est_s seconds when any point has an estimate, else 1."""
        return max(float(p.est_s), 0.0) if self.weighted else 1.0

    def _desc(self, running: str) -> str:
        return f"{self.experiment} [{self.done}/{self.total}]" + (f" {running}" if running else "")

    def start(self, p: Point) -> None:
        """Show the point now running."""
        if self.bar is not None:
            self.bar.set_description(self._desc(p.name), refresh=True)

    def finish(self, p: Point) -> None:
        """Advance by the point's weight."""
        self.done += 1
        if self.bar is not None:
            self.bar.update(self._weight(p))
            self.bar.set_description(self._desc(""), refresh=True)

    def close(self) -> None:
        """Close the bar (leaves the final line on screen)."""
        if self.bar is not None:
            self.bar.close()


def _manifest(experiment: str, host: str, sysinfo: dict | None, entries: list[dict], started: str,
              extra: dict | None = None) -> dict:
    """The manifest.json object (``extra``: the :func:`recording` fields, before the point list)."""
    man = {
        "experiment": experiment,
        "host": host,
        "memstor_version": __version__,
        "started": started,
        "updated": utc_now(),
        "sysinfo": sysinfo,
    }
    man.update({k: v for k, v in (extra or {}).items() if k not in man and k != "points"})
    man["points"] = entries
    return man


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


def _write_manifest(directory: Path, man: dict) -> None:
    """Write the sweep's manifest unless the one there already says the same (:func:`_same_sweep`), so a
    re-run that measures nothing leaves the raw folder byte for byte as it was."""
    if not _same_sweep(read_json(directory / MANIFEST), man):
        if callable(man.get("sysinfo")):  # collected only now that it is written
            man = dict(man, sysinfo=man["sysinfo"]())
        write_json(directory / MANIFEST, man)


#: How many points this process has tried to measure (cached ones excluded); see :func:`points_run`.
_POINTS_RUN = 0


def points_run() -> int:
    """The number of points this process has run so far (measured or failed; found-measured ones excluded).
    A caller compares it before and after a sweep to know whether anything was measured."""
    return _POINTS_RUN


def duration_text(seconds: float) -> str:
    """A rough human duration for a plan: "about 40 s", "about 12 min", "about 2.5 h"."""
    if seconds < 90:
        return f"about {max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"about {round(seconds / 60)} min"
    return f"about {seconds / 3600:.1f} h"


def _where(device: dict | None) -> str:
    """What a sweep measures, for a person: the test file's folder and its filesystem, a raw device, or memory."""
    if not isinstance(device, dict):
        return "this machine"
    kind, path = device.get("kind"), device.get("path") or device.get("real_path")
    if kind == "filesystem":
        return f"a test file in {path} ({device.get('fstype') or '?'} on {device.get('source') or '?'})"
    if kind == "raw-device":
        return f"the raw device {path} (its data is overwritten)"
    if kind == "memory":
        return "this machine's memory"
    return str(path or kind or "this machine")


#: What the sweeps run inside :func:`plan_note` add to their plan line (e.g. that the grid is adaptive).
_PLAN_NOTE: contextvars.ContextVar[str] = contextvars.ContextVar("memstor_plan_note", default="")


@contextlib.contextmanager
def plan_note(text: str) -> Iterator[None]:
    """Add ``text`` to the plan line of every sweep run inside the block (e.g. "adaptive grid: more points may
    follow, at most 14 per pattern"): a sweep whose points are only the first of several must say so."""
    token = _PLAN_NOTE.set(text)
    try:
        yield
    finally:
        _PLAN_NOTE.reset(token)


def plan_line(experiment: str, points: Sequence[Point], done: set[str], directory: Path,
              device: dict | None) -> str:
    """The line a sweep prints before it starts: what it will measure, how long (the points' est_s) and on what;
    or that everything is already measured and nothing runs. Inside :func:`plan_note` its text follows."""
    note = f"; {_PLAN_NOTE.get()}" if _PLAN_NOTE.get() else ""
    todo = [p for p in points if p.name not in done]
    if not todo:
        return (f"{experiment}: all {len(points)} points already measured in {directory}: nothing is measured, "
                f"the results are re-read{note}")
    est = sum(max(float(p.est_s), 0.0) for p in todo)
    how_long = f", {duration_text(est)}" if est > 0 else ""
    kept = f"; {len(points) - len(todo)} already measured" if len(todo) < len(points) else ""
    return f"{experiment}: measuring {len(todo)} of {len(points)} points{how_long}, on {_where(device)}{kept}{note}"


def _once(fn: Callable[[], Any]) -> Callable[[], Any]:
    """`fn`, called at most once (its first result is kept)."""
    box: list = []

    def call() -> Any:
        if not box:
            box.append(fn())
        return box[0]

    return call


def _count_point() -> None:
    global _POINTS_RUN
    _POINTS_RUN += 1


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
) -> list[PointResult]:
    """Run every point not already complete, one at a time, and return one PointResult per point.

    until: an adaptive sweep's stop rule, called with the results so far after every point (cached ones
    included); when it returns a reason (e.g. "steady state at round 7"), the remaining points are not
    run: they are listed in the manifest with status ``not run`` and that reason, and the returned list
    ends with the last point handled. A later call with the same points resumes where the rule says.

    sysinfo: the manifest's machine description, or a function giving it (called once, and only when the
    manifest is written: a run that finds every point measured collects nothing).

    Raw outputs go to ``raw_dir(data_root, host, experiment)``. Raises UsageError for bad names,
    SweepLocked when another sweep of the same experiment runs, SweepInterrupted on Ctrl-C.
    A runner's PointFailed is recorded and the sweep goes on; any other MemstorError stops the
    sweep after recording the point as failed (e.g. fio not installed: every point would fail).
    A point whose completed raw file holds other params is failed without running (see :func:`conflict`).
    """
    check_name("experiment", experiment)
    check_name("host", host)
    points = list(points)
    _check_points(points)
    directory = raw_dir(data_root, host, experiment)
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UsageError(f"cannot create {directory}: {err.strerror}; choose another --data folder") from None
    started = utc_now()
    extra = _recorded()
    if callable(sysinfo):
        sysinfo = _once(sysinfo)
    with sweep_lock(directory):
        clean_stale_tmp(directory)
        cached = {p.name for p in points if is_cached(p, runner, directory)}
        kept: dict[str, str] = {}  # point name -> why its completed raw file is kept (other params)
        for p in points:
            why = None if p.name in cached else conflict(p, runner, directory)
            if why:
                kept[p.name] = why
        entries = [
            {
                "name": p.name,
                "params": _normalise(p.params),
                "status": "cached" if p.name in cached else "failed" if p.name in kept else "pending",
                "raw": raw_path(directory, p, runner.suffix).name if p.name in cached else None,
                "meta": meta_path(directory, p).name,
                "error": kept.get(p.name),
            }
            for p in points
        ]
        only = reading_only()
        if not only:
            _write_manifest(directory, _manifest(experiment, host, sysinfo, entries, started, extra))
            if progress:
                print(plan_line(experiment, points, cached | set(kept), directory, extra.get("device")),
                      file=sys.stderr)
        bar = _Progress(points, cached | set(kept), experiment, progress and not only)
        results: list[PointResult] = []
        try:
            for i, p in enumerate(points):
                if p.name in cached:
                    results.append(
                        PointResult(p, "cached", raw_path(directory, p, runner.suffix), meta_path(directory, p))
                    )
                elif p.name in kept:  # never touch a completed measurement of something else
                    results.append(PointResult(p, "failed", None, meta_path(directory, p), kept[p.name]))
                elif only:
                    raise NotAllMeasured(f"point {p.name} is not measured")
                else:
                    bar.start(p)
                    _count_point()
                    res = _run_point(experiment, host, p, runner, directory, extra)
                    results.append(res)
                    entries[i].update(status=res.status, raw=res.raw.name if res.raw else None, error=res.error)
                    _write_manifest(directory, _manifest(experiment, host, sysinfo, entries, started, extra))
                    bar.finish(p)
                why = until(results) if until is not None else None  # cached points too: a rerun stops alike
                if why:
                    for entry in entries[i + 1:]:
                        entry.update(status="not run", raw=None, error=why)
                    if not only:
                        _write_manifest(directory, _manifest(experiment, host, sysinfo, entries, started, extra))
                    break
            if only and progress:  # reading only writes nothing: the manifest of the run that measured stays
                handled = [r.point for r in results]
                print(plan_line(experiment, handled, {p.name for p in handled}, directory, None), file=sys.stderr)
        except KeyboardInterrupt:
            n_ok = sum(1 for r in results if r.status in ("done", "cached"))
            raise SweepInterrupted(
                f"interrupted: {n_ok} of {len(points)} points done; rerun the same command to resume"
            ) from None
        finally:
            bar.close()
    return results


def _run_point(experiment: str, host: str, p: Point, runner: Runner, directory: Path,
               extra: dict | None = None) -> PointResult:
    """Run one point: runner -> temp file -> checks -> rename + meta. Never leaves a temp file.

    extra: the :func:`recording` fields, added to the meta (never over its own keys)."""
    raw = raw_path(directory, p, runner.suffix)
    meta = meta_path(directory, p)
    tmp = directory / f"{raw.name}{TMP_MARK}"
    files_tmp, files = sidecar_tmp(tmp), sidecar_dir(directory, p)
    base = {
        "experiment": experiment,
        "point": p.name,
        "params": _normalise(p.params),
        "host": host,
        "memstor_version": __version__,
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
