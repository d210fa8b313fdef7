"""File primitives of the measurement side: atomic writes, JSON files, folder locks, stale temp files.

- Every file is written atomically (temp file in the same folder + fsync + ``os.replace`` + fsync of the
  folder): readers see the old file or the complete new one, never a partial file, even after SIGKILL.
- Temp files carry :data:`TMP_MARK` in their name, so a later run can remove the ones a killed run left
  (:func:`clean_stale_tmp`, only while holding the folder's lock).
- Locks are ``flock`` locks (exclusive, non-blocking): the kernel releases them when the process dies.
  A second holder gets :class:`SweepLocked`, one line naming the holder's pid and the way out.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from memstor.core.errors import MemstorError

#: Marker in the name of every temporary file memstor creates (atomic_write, the sweep's raw outputs).
TMP_MARK = ".tmp"
#: The lock file :func:`sweep_lock` holds inside a folder.
LOCK = ".lock"


class SweepLocked(MemstorError):
    """Another memstor sweep holds the lock of this folder."""


def utc_now() -> str:
    """The current time as ISO-8601 UTC with milliseconds, e.g. ``2024-05-01T12:00:00.123Z``."""
    # imported here, not at the top: 1 ms of every `memstor parse`, which never asks the time
    from datetime import UTC, datetime

    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# ------------------------------------------------------------------------------------ atomic writes


def _fsync(path: Path) -> None:
    """fsync a file or folder by path (a folder: so a rename inside it survives a crash)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(directory: Path) -> None:
    """fsync a folder, best effort (some filesystems refuse)."""
    with contextlib.suppress(OSError):
        _fsync(directory)


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write ``data`` to ``path`` atomically: temp file in the same folder + fsync + ``os.replace``.

    Readers see either the old file or the complete new one, never a partial file; the temp file is
    removed on any error (including KeyboardInterrupt). str is written as UTF-8.
    """
    path = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f"{path.name}{TMP_MARK}-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def replace_durably(tmp: Path, path: Path) -> None:
    """Rename a finished temp file (written by someone else, e.g. a tool) to ``path``: fsync the file,
    ``os.replace``, fsync the folder."""
    _fsync(tmp)
    os.replace(tmp, path)
    _fsync_dir(Path(path).parent)


def write_json(path: Path, obj: object) -> None:
    """Atomically write ``obj`` as indented JSON (non-JSON values become their str())."""
    atomic_write(path, json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n")


def read_json(path: Path) -> dict | None:
    """The JSON object in ``path``, or None when it is missing, unreadable or not an object."""
    try:
        obj = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return obj if isinstance(obj, dict) else None


def clean_stale_tmp(directory: Path) -> list[Path]:
    """Remove temp files and folders (``*.tmp*``) left in a folder by a killed run; return them.

    Only call while holding the folder's lock (a running sweep's temp files are not stale).
    """
    removed = []
    for p in sorted(Path(directory).glob(f"*{TMP_MARK}*")):
        if p.is_file() or p.is_symlink():
            with contextlib.suppress(OSError):
                p.unlink()
                removed.append(p)
        elif p.is_dir():  # a runner's half-written sidecar folder (memstor.measure.sweep.sidecar_tmp)
            shutil.rmtree(p, ignore_errors=True)
            removed.append(p)
    return removed


#: Folder (inside a raw folder) where a measured point's files go when the point is measured again.
SUPERSEDED = "superseded"


def set_aside(directory: Path, meta: Path, paths: list[Path], stamp: str) -> str | None:
    """When ``meta`` says done, move it and the existing ``paths`` (a re-measured point's raw file and sidecar
    folder) into ``directory/superseded/<stamp>/`` so that a new measurement never destroys an old one; return
    that folder relative to ``directory``, else None. Only call while holding the folder's lock."""
    if (read_json(meta) or {}).get("status") != "done":
        return None
    present = [p for p in [meta, *paths] if p.exists()]
    dest = Path(directory) / SUPERSEDED / stamp.replace(":", "")
    dest.mkdir(parents=True, exist_ok=True)
    for p in present:
        shutil.move(str(p), str(dest / p.name))
    return str(dest.relative_to(directory))


# -------------------------------------------------------------------------------------------- locks


@contextlib.contextmanager
def sweep_lock(directory: Path) -> Iterator[None]:
    """Hold an exclusive, non-blocking flock on ``<directory>/.lock`` for the duration of a sweep.

    Raises SweepLocked (one line, with the holder's pid) when another sweep holds it. The lock is
    released by the kernel when the process dies, even on SIGKILL.
    """
    lock = Path(directory) / LOCK
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            try:
                pid = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "?"
            except OSError:
                pid = "?"
            raise SweepLocked(
                f"another memstor sweep is running on {directory} (pid {pid}); wait for it or stop it "
                f"(kill {pid}) and rerun the same command to resume"
            ) from None
        mine = f"{os.getpid()}\n".encode("ascii")
        if os.pread(fd, 64, 0) != mine:  # the same process again (a notebook re-run) leaves the file as it is
            os.ftruncate(fd, 0)
            os.pwrite(fd, mine, 0)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the flock


def _flock_holder(st: os.stat_result) -> str | None:
    """pid holding a flock on the file with this stat (from /proc/locks, Linux), or None."""
    want = f":{st.st_ino}"
    try:
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        f = line.split()
        if len(f) >= 6 and f[1] == "FLOCK" and f[5].endswith(want) and f[4].isdigit():
            return f[4]
    return None


@contextlib.contextmanager
def folder_lock(directory: Path, what: str) -> Iterator[None]:
    """Hold an exclusive, non-blocking flock on the folder itself (no file is created in it).

    Raises SweepLocked naming `what` (e.g. "the fio test file") when another memstor process holds it.
    """
    fd = os.open(directory, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            pid = _flock_holder(os.fstat(fd)) or "?"
            raise SweepLocked(f"another memstor sweep is running with {what} in {directory} (pid {pid}); wait "
                              f"for it or stop it (kill {pid}) and rerun the same command") from None
        yield
    finally:
        os.close(fd)
