"""Build, locate and drive ``loadlat``, memstor's open MLC-compatible loaded-latency tool (C, lib/loadlat/).

``loadlat`` takes Intel MLC's options (values attached: ``-b200m -l256 -W5 -k1-3``) and prints MLC v3.10's
text layout, so :func:`memstor.parse.mlc.parse_mlc` reads it (tool = ``loadlat``). Units: buffer sizes in
KiB (``-b``), access size in bytes (``-l``), seconds per point (``-t``), inject delay in delay-loop
iterations (``-d``; the ns per iteration is printed as a ``#`` line and stored in the ``--json`` sidecar).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from memstor.errors import MemstorError, UsageError
from memstor.schema import TRAFFIC_CODES

#: Where ``make loadlat`` puts the tool, relative to the repository root.
BINARY_RELPATH = Path("build") / "bin" / "loadlat"
#: Sources, relative to the repository root.
SOURCE_DIR = Path("lib") / "loadlat"
#: The three modes loadlat implements (MLC's names).
MODES = ("idle_latency", "loaded_latency", "peak_injection_bandwidth")
#: MLC's default inject delays for --loaded_latency (delay-loop iterations).
MLC_DELAYS = (0, 2, 8, 15, 50, 100, 200, 300, 400, 500, 700, 1000, 1300, 1700, 2500, 3500, 5000, 9000, 20000)
#: Traffic labels (memstor.schema) -> -W codes, so ``traffic="2:1-nt"`` works as well as ``"W7"``.
_LABEL_TO_CODE = {label: code for code, (label, _frac) in TRAFFIC_CODES.items()}
_VERSION_RE = re.compile(r"loadlat \(Memory Latency Checker-compatible\) - v(\S+)")


def repo_root() -> Path:
    """The repository root (the folder holding lib/ and build/)."""
    return Path(__file__).resolve().parents[3]


def compile_command(root: Path | None = None, output: Path | None = None) -> list[str]:
    """The exact compile command of ``make loadlat`` (C compiler from $CC, default ``cc``)."""
    root = Path(root) if root is not None else repo_root()
    output = Path(output) if output is not None else root / BINARY_RELPATH
    sources = sorted(str(p) for p in (root / SOURCE_DIR).glob("*.c"))
    if not sources:
        raise MemstorError(f"no loadlat sources in {root / SOURCE_DIR}: is {root} the memstor repository?")
    cc = os.environ.get("CC") or "cc"
    return [cc, "-O2", "-g", "-Wall", "-Wextra", "-pthread", "-o", str(output), *sources, "-lm"]


def build(root: Path | None = None, output: Path | None = None) -> Path:
    """Compile loadlat (the ``make loadlat`` command) to ``output`` (default ``<root>/build/bin/loadlat``).

    Returns the executable's path; raises MemstorError with the compiler's first error line on failure.
    """
    root = Path(root) if root is not None else repo_root()
    output = Path(output) if output is not None else root / BINARY_RELPATH
    output.parent.mkdir(parents=True, exist_ok=True)
    cmd = compile_command(root, output)
    if shutil.which(cmd[0]) is None:
        raise MemstorError(f"C compiler {cmd[0]!r} not found: install gcc (apt-get install build-essential) "
                           "or set CC")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.splitlines() if "error" in ln] or proc.stderr.splitlines() or ["?"]
        raise MemstorError(f"building loadlat failed ({' '.join(cmd[:2])} ...): {lines[0].strip()}")
    return output


def binary(root: Path | None = None) -> Path:
    """The loadlat executable: ``$LOADLAT`` when set, else ``<root>/build/bin/loadlat``, else ``loadlat``
    on PATH. Raises MemstorError "loadlat is not built: run `make loadlat`" when there is none."""
    env = os.environ.get("LOADLAT")
    if env:
        path = Path(env).expanduser()
        if path.is_file() and os.access(path, os.X_OK):
            return path
        raise MemstorError(f"LOADLAT={env} is not an executable file: unset it or run `make loadlat`")
    root = Path(root) if root is not None else repo_root()
    built = root / BINARY_RELPATH
    if built.is_file() and os.access(built, os.X_OK):
        return built
    on_path = shutil.which("loadlat")
    if on_path:
        return Path(on_path)
    raise MemstorError("loadlat is not built: run `make loadlat`")


def version(exe: Path | str | None = None) -> str:
    """loadlat's version (``"0.1"``) from the banner of ``loadlat --help``."""
    exe = str(exe) if exe is not None else str(binary())
    proc = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=30)
    m = _VERSION_RE.search(proc.stdout)
    if proc.returncode != 0 or not m:
        raise MemstorError(f"{exe} --help printed no loadlat banner: is it loadlat? rebuild with `make loadlat`")
    return m.group(1)


def traffic_code(traffic: str) -> str:
    """MLC -W code (``R``, ``W2`` ... ``W10``) for a code or a memstor traffic label (``1:1``, ``2:1-nt``)."""
    t = str(traffic).strip()
    if t.startswith("-"):
        t = t[1:]
    if t in TRAFFIC_CODES:
        return t
    if t in _LABEL_TO_CODE:
        return _LABEL_TO_CODE[t]
    raise UsageError(f"traffic={traffic!r}: use an MLC code ({', '.join(TRAFFIC_CODES)}) "
                     f"or a label ({', '.join(_LABEL_TO_CODE)})")


def format_cpus(cpus: Iterable[int] | str | int) -> str:
    """MLC CPU list: ``[1, 2, 3, 5]`` -> ``"1-3,5"``; a string is passed through (loadlat checks it)."""
    if isinstance(cpus, str):
        return cpus
    if isinstance(cpus, bool):
        raise UsageError(f"load_cpus={cpus!r}: give CPU numbers such as [1, 2] or '1-3,5'")
    items = sorted({int(c) for c in ([cpus] if isinstance(cpus, int) else cpus)})
    if not items or items[0] < 0:
        raise UsageError(f"load_cpus={cpus!r}: give at least one CPU number >= 0")
    parts: list[str] = []
    i = 0
    while i < len(items):
        j = i
        while j + 1 < len(items) and items[j + 1] == items[j] + 1:
            j += 1
        parts.append(str(items[i]) if i == j else f"{items[i]}-{items[j]}")
        i = j + 1
    return ",".join(parts)


def write_delay_file(path: Path, delays: Iterable[int]) -> Path:
    """Write a ``-g`` delay file (one delay per line, delay-loop iterations) and return its path."""
    values = [int(d) for d in delays]
    if not values or any(d < 0 for d in values):
        raise UsageError(f"delays={values!r}: give one or more whole numbers >= 0")
    path = Path(path)
    path.write_text("".join(f"{d}\n" for d in values))
    return path
