"""The machine shape memstor may use: the CPUs of its affinity mask within the cgroup CPU quota (with their
SMT siblings and NUMA nodes), and MemAvailable within the cgroup memory limit (DESIGN.md "Machines, tool
versions and checks": profile sizes scale to these and say so).

Sources, all read under a ``root`` (``/``, or a tree the tests build):

- CPUs: ``os.sched_getaffinity(0)`` (off Linux ``range(os.cpu_count())``). The process's cgroup comes from
  ``/proc/self/cgroup`` (v2 ``0::/path``; v1 ``N:cpu,cpuacct:/path``, which wins when present, as on hybrid
  systems) and its quota from cgroup v2 ``cpu.max`` (``max 100000``: none; ``200000 100000``: 2 CPUs) or v1
  ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us`` (-1: none), read in the process's folder under
  ``/sys/fs/cgroup`` and every parent up to the hierarchy's root: a parent's limit binds its children, so the
  tightest wins.
  Usable CPUs = the affinity mask capped by the quota rounded up (1.5 CPUs of quota keep 2 threads busy), at
  least 1. SMT siblings: ``/sys/devices/system/cpu/cpuN/topology/thread_siblings_list``; NUMA nodes:
  ``/sys/devices/system/node/nodeN/cpulist``.
- Memory: ``MemAvailable`` of ``/proc/meminfo``; cgroup v2 ``memory.max`` (``max``: none) and
  ``memory.current``, v1 ``memory.limit_in_bytes`` (2**60 or more: none) and ``memory.usage_in_bytes``, over
  the same folders; the folder with the least room (limit - usage) binds. Usable = the least of the known.

A container without its own cgroup namespace sees its host's cgroup path over a mount whose root is that very
folder: leading parts of the path are dropped until the folder exists. Nothing here raises for a missing,
unreadable or malformed file: the number is unknown (None, or no limit) and the shape's ``source`` says so.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from memstor.core.units import size_text
from memstor.measure.sysfs import SYSTEM_ROOT, in_root, read_value

#: Where the cgroup hierarchies are mounted (v2 itself, or v1 controllers and ``unified`` below it).
CGROUP_MOUNT = "/sys/fs/cgroup"
#: The v1 folders (under CGROUP_MOUNT) that may hold the ``cpu`` controller, in order of trial.
V1_CPU_MOUNTS = ("cpu,cpuacct", "cpuacct,cpu", "cpu")
#: Bytes from which a memory limit means "none" (v1 writes 2**63 - 4096, rounded to the page size).
NO_LIMIT_BYTES = 2**60
#: cgroup version -> (memory limit file, memory usage file).
MEMORY_FILES = {"v2": ("memory.max", "memory.current"),
                "v1": ("memory.limit_in_bytes", "memory.usage_in_bytes")}
CPU_QUOTA_FILE = {"v2": "cpu.max", "v1": "cpu.cfs_quota_us"}  #: cgroup version -> the CPU quota's file


# ------------------------------------------------------------------------------------------ CPU lists
def parse_cpu_list(text: str) -> tuple[int, ...]:
    """The CPUs of a kernel CPU list (``0-3,8,10-11``), sorted and unique; ``""`` is no CPU.
    Raises ValueError naming the text when a part is not ``N`` or ``N-M`` with N <= M."""
    if not text.strip():
        return ()
    cpus: set[int] = set()
    for part in text.strip().split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if m is None or int(m.group(2) or m.group(1)) < int(m.group(1)):
            raise ValueError(f"not a CPU list: {text!r}")
        cpus.update(range(int(m.group(1)), int(m.group(2) or m.group(1)) + 1))
    return tuple(sorted(cpus))


def _cpu_list_text(cpus: Iterable[int]) -> str:
    """The kernel's short form of CPUs: (0, 1, 2, 3, 8) -> ``0-3,8``; none -> ``none``."""
    runs: list[list[int]] = []
    for cpu in sorted(set(cpus)):
        if runs and cpu == runs[-1][1] + 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs) or "none"


def _shown(root: Path, path: Path) -> str:
    """``path`` as the running system names it (``/sys/fs/cgroup/a/cpu.max``), not under the test root."""
    try:
        rel = str(path.relative_to(root))
    except ValueError:
        return str(path)
    return "/" if rel == "." else "/" + rel


# -------------------------------------------------------------------------------------------- cgroup
def _cgroup_paths(root: Path) -> tuple[dict[str, str], list[str]]:
    """(controller -> cgroup path, notes) from ``/proc/self/cgroup``; the key ``""`` is the v2 hierarchy."""
    text = read_value(in_root(root, "/proc/self/cgroup"))
    if text is None:
        return {}, ["no /proc/self/cgroup: no cgroup limit known"]
    out: dict[str, str] = {}
    bad = []
    for line in text.splitlines():
        parts = line.strip().split(":", 2)
        if len(parts) != 3 or not parts[2].startswith("/"):
            bad.append(line.strip())
            continue
        for controller in parts[1].split(",") if parts[1] else [""]:
            out[controller] = parts[2]
    notes = [f"/proc/self/cgroup lines not understood: {bad[:3]}"] if bad else []
    return out, notes


def _walk_up(mount: Path, path: str) -> list[Path]:
    """The folder of cgroup ``path`` under ``mount``, then each parent up to ``mount`` itself."""
    parts = [p for p in path.split("/") if p not in ("", ".", "..")]
    while parts and not mount.joinpath(*parts).is_dir():
        parts = parts[1:]  # the host's path over a container's own folder (module docstring)
    return [mount.joinpath(*parts[:n]) for n in range(len(parts), -1, -1)]


def _v2_mount(root: Path) -> Path:
    """The v2 hierarchy: ``/sys/fs/cgroup`` itself, or ``/sys/fs/cgroup/unified`` on a hybrid system."""
    top, unified = in_root(root, CGROUP_MOUNT), in_root(root, f"{CGROUP_MOUNT}/unified")
    return unified if unified.is_dir() and not (top / "cgroup.controllers").exists() else top


def _cgroup_folders(root: Path, controller: str, v1_mounts: tuple[str, ...]
                    ) -> tuple[list[Path], str, list[str]]:
    """(the process's cgroup folders for ``controller``, its own first then each parent; "v1" or "v2"; notes).
    No folders when the process has no cgroup for it or the hierarchy is not mounted."""
    paths, notes = _cgroup_paths(root)
    if controller in paths:
        version, path = "v1", paths[controller]
        mounts = (in_root(root, f"{CGROUP_MOUNT}/{name}") for name in v1_mounts)
        mount = next((m for m in mounts if m.is_dir()), None)
    elif "" in paths:
        version, path, mount = "v2", paths[""], _v2_mount(root)
    else:
        return [], "", notes
    if mount is None or not mount.is_dir():
        return [], version, notes + [f"cgroup {version} {controller} hierarchy not mounted: no limit known"]
    return _walk_up(mount, path), version, notes


def _read_int(path: Path) -> int | None:
    """The integer in ``path``, None when the file is missing or empty; ValueError naming the file and text
    when it holds something else."""
    text = read_value(path)
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{path.name} is {text[:40]!r}") from None


def _v2_cpu_quota(folder: Path) -> float | None:
    """CPUs of ``cpu.max`` (``$QUOTA $PERIOD`` in µs; ``max``: None); ValueError when malformed."""
    text = read_value(folder / "cpu.max")
    if text is None or text.split()[0] == "max":
        return None
    fields = text.split()
    try:
        quota, period = int(fields[0]), int(fields[1]) if len(fields) > 1 else 100_000
    except ValueError:
        raise ValueError(f"cpu.max is {text[:40]!r}") from None
    if quota <= 0 or period <= 0 or len(fields) > 2:
        raise ValueError(f"cpu.max is {text[:40]!r}")
    return quota / period


def _v1_cpu_quota(folder: Path) -> float | None:
    """CPUs of ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us`` (µs; -1: None); ValueError when malformed."""
    quota = _read_int(folder / "cpu.cfs_quota_us")
    if quota is None or quota == -1:
        return None
    period = _read_int(folder / "cpu.cfs_period_us")
    if quota <= 0 or period is None or period <= 0:
        raise ValueError(f"cpu.cfs_quota_us {quota} over cpu.cfs_period_us {period}")
    return quota / period


def _cpu_quota(root: Path) -> tuple[float | None, str, list[str]]:
    """(the tightest cgroup CPU quota in CPUs or None, where it came from, notes)."""
    folders, version, notes = _cgroup_folders(root, "cpu", V1_CPU_MOUNTS)
    reader: Callable[[Path], float | None] = _v2_cpu_quota if version == "v2" else _v1_cpu_quota
    best: tuple[float, Path] | None = None
    for folder in folders:
        try:
            cpus = reader(folder)
        except ValueError as exc:
            notes.append(f"{_shown(root, folder)}: {exc}, taken as no CPU quota")
            continue
        if cpus is not None and (best is None or cpus < best[0]):
            best = (cpus, folder)
    if best is None:
        return None, " ".join(w for w in ("no cgroup", version, "CPU quota") if w), notes
    return best[0], f"cgroup {CPU_QUOTA_FILE[version]} {best[0]:g} CPU{'' if best[0] == 1 else 's'} ({_shown(root, best[1])})", notes


# ---------------------------------------------------------------------------------------------- CPUs
@dataclass(frozen=True)
class CpuShape:
    """The CPUs memstor may use.

    affinity: CPU numbers of the affinity mask, sorted; quota_cpus: the cgroup CPU quota in CPUs (None: no
    quota); usable: CPUs worth a busy thread each (the mask capped by the quota rounded up, at least 1);
    siblings: each affinity CPU -> its SMT siblings other than itself (() when unknown); nodes: NUMA node ->
    its CPUs as the kernel lists them ({} without ``/sys/devices/system/node``); source: one line saying where
    each number came from."""

    affinity: tuple[int, ...]
    quota_cpus: float | None
    usable: int
    siblings: dict[int, tuple[int, ...]]
    nodes: dict[int, tuple[int, ...]]
    source: str

    @property
    def smt_threads_per_core(self) -> int:
        """Hardware threads per core (the largest sibling group seen), 1 when unknown."""
        return 1 + max((len(s) for s in self.siblings.values()), default=0)

    def cores(self) -> list[tuple[int, ...]]:
        """The cores of the affinity mask, in CPU order: each a sorted tuple of its threads in the mask."""
        mask, seen, out = set(self.affinity), set[int](), []
        for cpu in self.affinity:
            if cpu not in seen:
                group = tuple(sorted({cpu, *self.siblings.get(cpu, ())} & mask))
                seen.update(group)
                out.append(group)
        return out

    def node_of(self, cpu: int) -> int | None:
        """The NUMA node whose CPU list holds ``cpu``, or None (unknown, or no node lists it)."""
        return next((node for node, cpus in sorted(self.nodes.items()) if cpu in cpus), None)

    def sibling_free(self, cpus: Iterable[int]) -> tuple[int, ...]:
        """``cpus`` in their order less each one an SMT sibling of a CPU kept before it: one thread per core
        (siblings 0/8 and 1/9: (0, 8, 1, 9) -> (0, 1)). Unknown siblings keep every CPU."""
        kept: list[int] = []
        taken: set[int] = set()
        for cpu in cpus:
            if cpu not in taken and cpu not in kept:
                kept.append(cpu)
                taken.update(self.siblings.get(cpu, ()))
        return tuple(kept)


def _affinity(affinity: Iterable[int] | None) -> tuple[tuple[int, ...], str]:
    """(the CPUs this process may run on, sorted; ``affinity 0-15 (16 CPUs)``: what said so)."""
    if affinity is not None:
        cpus, how, tag = tuple(sorted(set(affinity))), "affinity", ", given"
    elif hasattr(os, "sched_getaffinity"):
        cpus, how, tag = tuple(sorted(os.sched_getaffinity(0))), "affinity", ""
    else:
        cpus, how, tag = tuple(range(os.cpu_count() or 1)), "os.cpu_count()", ", no affinity mask here"
    return cpus, f"{how} {_cpu_list_text(cpus)} ({len(cpus)} CPU{'' if len(cpus) == 1 else 's'}{tag})"


def _siblings(root: Path, cpus: tuple[int, ...]) -> tuple[dict[int, tuple[int, ...]], list[str]]:
    """(each CPU -> its SMT siblings other than itself, () when unknown; notes)."""
    out: dict[int, tuple[int, ...]] = {}
    missing, bad = [], []
    for cpu in cpus:
        text = read_value(in_root(root, f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list"))
        try:
            group = parse_cpu_list(text) if text is not None else ()
        except ValueError:
            group = ()
            bad.append(cpu)
        if text is None:
            missing.append(cpu)
        out[cpu] = tuple(c for c in group if c != cpu)
    notes = [f"{what} thread_siblings_list for CPUs {_cpu_list_text(cpus)}: siblings unknown"
             for what, cpus in (("malformed", bad), ("no", missing)) if cpus]
    return out, notes


def _nodes(root: Path) -> tuple[dict[int, tuple[int, ...]], list[str]]:
    """(NUMA node -> its CPUs, notes) from ``/sys/devices/system/node/nodeN/cpulist``."""
    folder = in_root(root, "/sys/devices/system/node")
    try:
        entries = [e for e in folder.iterdir() if re.fullmatch(r"node\d+", e.name)] if folder.is_dir() else []
    except OSError as exc:
        return {}, [f"/sys/devices/system/node unreadable ({exc.strerror}): NUMA nodes unknown"]
    out: dict[int, tuple[int, ...]] = {}
    notes = []
    for entry in entries:
        text = read_value(entry / "cpulist")
        try:
            out[int(entry.name[4:])] = parse_cpu_list(text or "")  # a memory-only node lists no CPU
        except ValueError:
            notes.append(f"{entry.name}/cpulist is {(text or '')[:40]!r}: node left out")
    return dict(sorted(out.items())), notes


def _topology_text(siblings: dict[int, tuple[int, ...]], nodes: dict[int, tuple[int, ...]]) -> str:
    """``SMT 2 threads/core; 1 NUMA node`` (or what is unknown)."""
    threads = 1 + max((len(s) for s in siblings.values()), default=0)
    smt = f"SMT {threads} threads/core" if threads > 1 else "no SMT siblings seen"
    n = len(nodes)
    return f"{smt}; " + (f"{n} NUMA node{'s' * (n != 1)}" if n else "NUMA nodes unknown (no node folder)")


def cpu_shape(root: Path = SYSTEM_ROOT, affinity: Iterable[int] | None = None) -> CpuShape:
    """The CPUs memstor may use (module docstring). ``affinity`` replaces ``os.sched_getaffinity(0)``
    (tests, or another process's mask)."""
    cpus, affinity_how = _affinity(affinity)
    quota, quota_how, notes = _cpu_quota(root)
    usable = max(1, min(len(cpus), math.ceil(quota)) if quota is not None else len(cpus))
    siblings, sibling_notes = _siblings(root, cpus)
    nodes, node_notes = _nodes(root)
    source = f"{affinity_how}, {quota_how} -> {usable} usable; {_topology_text(siblings, nodes)}"
    notes += sibling_notes + node_notes
    return CpuShape(affinity=cpus, quota_cpus=quota, usable=usable, siblings=siblings, nodes=nodes,
                    source="; ".join([source, *notes]))


# -------------------------------------------------------------------------------------------- memory
@dataclass(frozen=True)
class MemoryShape:
    """The memory memstor may use, in bytes.

    mem_available_bytes: MemAvailable of ``/proc/meminfo``; cgroup_limit_bytes: the binding cgroup memory
    limit (the folder with the least room); cgroup_usage_bytes: that folder's usage; usable_bytes: the smaller
    of MemAvailable and limit - usage (never below 0) over the known ones, None when neither is known; source:
    one line saying where each number came from. None: unknown (or no limit)."""

    mem_available_bytes: int | None
    cgroup_limit_bytes: int | None
    cgroup_usage_bytes: int | None
    usable_bytes: int | None
    source: str


def _mem_available(root: Path) -> tuple[int | None, str]:
    """(MemAvailable in bytes or None, where it came from)."""
    text = read_value(in_root(root, "/proc/meminfo"))
    if text is None:
        return None, "MemAvailable unknown (no /proc/meminfo)"
    m = re.search(r"^MemAvailable:\s*(\d+)\s*kB\s*$", text, re.MULTILINE)
    if m is None:
        return None, "MemAvailable unknown (not in /proc/meminfo, or malformed)"
    n = int(m.group(1)) * 1024
    return n, f"MemAvailable {size_text(n)}"


def _memory_limit(folder: Path, version: str) -> int | None:
    """The memory limit of one cgroup folder in bytes (None: no limit); ValueError when malformed."""
    name = MEMORY_FILES[version][0]
    if read_value(folder / name) == "max":
        return None
    limit = _read_int(folder / name)
    if limit is not None and limit < 0:
        raise ValueError(f"{name} is {limit}")
    return None if limit is None or limit >= NO_LIMIT_BYTES else limit


def _memory_cgroup(root: Path) -> tuple[int | None, int | None, str, list[str]]:
    """(the binding cgroup memory limit, its folder's usage, in bytes; where they came from; notes)."""
    folders, version, notes = _cgroup_folders(root, "memory", ("memory",))
    best: tuple[int, int, int | None, Path] | None = None  # (room, limit, usage, folder)
    for folder in folders:
        try:
            limit = _memory_limit(folder, version)
        except ValueError as exc:
            notes.append(f"{_shown(root, folder)}: {exc}, taken as no memory limit")
            continue
        if limit is None:
            continue
        try:
            usage = _read_int(folder / MEMORY_FILES[version][1])
        except ValueError as exc:
            usage = None
            notes.append(f"{_shown(root, folder)}: {exc}, usage unknown")
        room = limit - usage if usage is not None else limit
        if best is None or room < best[0]:
            best = (room, limit, usage, folder)
    if best is None:
        return None, None, " ".join(w for w in ("no cgroup", version, "memory limit") if w), notes
    _, limit, usage, folder = best
    limit_file, usage_file = MEMORY_FILES[version]
    used = f"{usage_file} {size_text(usage)}" if usage is not None else f"{usage_file} unknown"
    return limit, usage, f"cgroup {limit_file} {size_text(limit)} - {used} ({_shown(root, folder)})", notes


def memory_shape(root: Path = SYSTEM_ROOT) -> MemoryShape:
    """The memory memstor may use (module docstring)."""
    available, available_how = _mem_available(root)
    limit, usage, limit_how, notes = _memory_cgroup(root)
    room = None if limit is None else max(0, limit - (usage or 0))
    known = [n for n in (available, room) if n is not None]
    usable = min(known) if known else None
    said = f"{size_text(usable)} usable" if usable is not None else "usable unknown"
    source = "; ".join([f"{available_how}, {limit_how} -> {said}", *notes])
    return MemoryShape(mem_available_bytes=available, cgroup_limit_bytes=limit, cgroup_usage_bytes=usage,
                       usable_bytes=usable, source=source)


def usable_cpus() -> int:
    """CPUs this process may keep busy on the running system (:func:`cpu_shape`'s ``usable``)."""
    return cpu_shape().usable


def usable_memory_bytes() -> int | None:
    """Bytes this process may use on the running system (:func:`memory_shape`'s ``usable_bytes``), or None."""
    return memory_shape().usable_bytes
