"""The fio binary and what it can do here: its path (``$MEMSTOR_FIO`` or PATH), version and ioengines, whether
a folder's filesystem accepts O_DIRECT, and which ioengine works there (a tiny real fio job per engine, in the
order io_uring > libaio > psync). Versions and engine lists are cached per binary for the process.
"""

from __future__ import annotations

import contextlib
import functools
import mmap
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from memstor.core.errors import MemstorError, PointFailed, UsageError
from memstor.measure.fio_output import check_fio_output

#: Engine fallback order when the preferred one is missing from fio or refused by the kernel.
ENGINE_CHAIN = ("io_uring", "libaio", "psync")
#: How to install fio, in one line (every 'fio not found' message ends with it).
INSTALL_HINT = (
    "install it (Debian/Ubuntu: sudo apt-get install fio; Fedora: sudo dnf install fio; "
    "macOS: brew install fio) or run make env"
)



def fio_binary() -> str:
    """The fio executable: ``$MEMSTOR_FIO`` when set, else ``fio`` on PATH.

    Raises MemstorError (one line, with the install command) when fio is not there.
    """
    env = os.environ.get("MEMSTOR_FIO")
    if env:
        if os.path.isfile(env) and os.access(env, os.X_OK):
            return os.path.abspath(env)  # fio runs in other folders (probes, facts)
        raise MemstorError(f"MEMSTOR_FIO={env} is not an executable file: fix or unset it, or {INSTALL_HINT}")
    found = shutil.which("fio")
    if not found:
        raise MemstorError(f"fio not found on PATH: {INSTALL_HINT}")
    return found



@functools.lru_cache(maxsize=8)
def _version_of(binary: str) -> str:
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30)
    text = (out.stdout or out.stderr).strip()
    if out.returncode != 0 or not text:
        raise MemstorError(f"{binary} --version failed (exit {out.returncode}): reinstall fio; {INSTALL_HINT}")
    return text.splitlines()[0].strip()



def fio_version() -> str:
    """What ``fio --version`` prints, e.g. ``fio-3.33`` (the same string as the JSON's "fio version")."""
    return _version_of(fio_binary())



@functools.lru_cache(maxsize=8)
def _engines_of(binary: str) -> frozenset[str]:
    out = subprocess.run([binary, "--enghelp"], capture_output=True, text=True, timeout=30)
    names = {ln.strip() for ln in out.stdout.splitlines()[1:] if ln.strip() and not ln.strip().endswith(":")}
    return frozenset(names)



def fio_engines() -> frozenset[str]:
    """The ioengines this fio was built with (``fio --enghelp``)."""
    return _engines_of(fio_binary())



def version_tuple(version: str) -> tuple[int, int]:
    """(3, 33) from ``fio-3.33`` / ``fio-3.33-12-gabc``; (0, 0) when unreadable."""
    m = re.search(r"(\d+)\.(\d+)", version or "")
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)



def probe_direct(directory: Path) -> None:
    """Check that the filesystem at ``directory`` accepts O_DIRECT (open + one aligned 4 KiB write).

    Raises UsageError with what to do when it refuses (tmpfs on old kernels, ramfs, some overlayfs/FUSE).
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise UsageError(f"{directory}: no such directory; create it or pick an existing --target")
    path = directory / f"memstor-probe-{os.getpid()}-{os.urandom(4).hex()}.tmp"
    refused = (
        f"the filesystem at {directory} refuses O_DIRECT (tmpfs?): use --target on a disk filesystem, "
        "or --set direct=0 (measures the page cache)"
    )
    fd = -1
    try:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_DIRECT", 0), 0o600)
        except OSError as err:
            if err.errno in (22, 95):  # EINVAL, EOPNOTSUPP
                raise UsageError(refused) from None
            raise UsageError(f"cannot create a file in {directory}: {err.strerror}; pick another --target") from None
        buf = mmap.mmap(-1, 4096)  # page-aligned buffer, as O_DIRECT wants
        try:
            os.write(fd, buf)
        except OSError as err:
            if err.errno in (22, 95):
                raise UsageError(refused) from None
            raise UsageError(f"cannot write in {directory}: {err.strerror}; pick another --target") from None
        finally:
            buf.close()
    finally:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(OSError):
            path.unlink()



def _probe_engine(binary: str, engine: str, directory: Path, direct: bool) -> str | None:
    """None when a tiny real fio read with ``engine`` works in ``directory``, else fio's error line."""
    if engine not in _engines_of(binary):
        return f"this fio lacks {engine}"
    try:
        fd, probe = tempfile.mkstemp(dir=directory, prefix="memstor-probe-", suffix=".tmp")
    except OSError as err:
        raise UsageError(f"cannot create a file in {directory}: {err.strerror}; pick another --target") from None
    out = probe + ".json"
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(b"\xa5" * 65536)
        cmd = [binary, "--name=memstor-probe", f"--filename={probe}", "--size=64k", "--bs=4k", "--rw=read",
               f"--ioengine={engine}", f"--direct={int(direct)}", "--runtime=100ms", "--allow_file_create=0",
               "--eta=never", "--output-format=json", f"--output={out}"]
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        except subprocess.TimeoutExpired:
            return f"{engine} probe did not finish within 60 s"
        text = Path(out).read_text(errors="replace") if os.path.exists(out) else ""
        try:
            doc = check_fio_output("probe", res.returncode, res.stderr, text)
        except PointFailed as err:
            return str(err).split(": ", 1)[1]
        io = sum(int(j.get("read", {}).get("io_bytes", 0)) for j in doc.get("jobs", []))
        return None if io > 0 else f"{engine} read nothing"
    finally:
        for p in (probe, out):
            with contextlib.suppress(OSError):
                os.unlink(p)



def choose_engine(preferred: str, directory: Path, *, direct: bool = True) -> tuple[str, str]:
    """(engine, why): ``preferred`` when a tiny real fio job with it works in ``directory``, else the next
    of io_uring > libaio > psync that does (a preferred engine outside that chain falls back to psync).

    Raises MemstorError when none works (the reasons of each, in one line).
    """
    binary = fio_binary()
    if not Path(directory).is_dir():
        raise UsageError(f"{directory}: no such directory; create it or pick an existing --target")
    chain = list(ENGINE_CHAIN[ENGINE_CHAIN.index(preferred):]) if preferred in ENGINE_CHAIN else [preferred, "psync"]
    refused: list[str] = []
    for engine in chain:
        problem = _probe_engine(binary, engine, Path(directory), direct)
        if problem is None:
            why = f"{engine} works" if not refused else "; ".join(refused) + f"; {engine} works"
            return engine, why
        refused.append(f"{engine} refused ({problem})")
    raise MemstorError(
        f"no usable fio ioengine in {directory}: " + "; ".join(refused) + ": check the kernel and fio build, "
        "or --set direct=0 if O_DIRECT is the problem"
    )
