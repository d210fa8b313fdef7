"""The machine under test, as JSON: CPU, caches, memory, NUMA, THP, kernel, OS, the target's filesystem and
device, the drive under it (identity, PCIe link, health: memstor.measure.drive), tool versions, and the
``machine`` block (virtualization, WSL, the target's storage path, power: memstor.measure.machine). Stored
with every experiment (manifest + ``processed/<host>/sysinfo.json``).

A disk a hypervisor emulates (virtio ``vd*``, Xen ``xvd*``, VMware, Hyper-V, QEMU...) has ``virtual_disk``
set and ``rotational`` None (unknown) with a note: sysfs says rotational=1 for virtio-blk, which describes
the emulated device, not the storage behind it. Every disk has a ``kind`` (``virtual disk (virtio)``,
``NVMe drive``, ``SCSI/SATA disk``...; None when its name says nothing).

collect() never fails: a field it cannot find is None and ``notes`` says why ("field: reason").
Sources: /proc/cpuinfo, /proc/meminfo, sysfs (/sys/devices/system/cpu, node, block), lscpu -J,
findmnt -J, lsblk -J (each time-boxed), os-release, ``fio --version``, ``mlc --version`` (time-boxed:
MLC may want root), ``loadlat --help`` when built. Cache sizes are per instance (L1/L2 usually per
core, L3 per socket or cluster), in bytes.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memstor import __version__
from memstor.core.files import utc_now
from memstor.measure import loadlat
from memstor.measure.dram import dram_record
from memstor.measure.drive import drive_record
from memstor.measure.fio_engine import fio_version
from memstor.measure.fio_facts import fio_facts
from memstor.measure.machine import disk_kind, machine_record, virtual_disk
from memstor.measure.shape import cpu_shape, memory_shape
from memstor.measure.tools import run_tool

#: Seconds any external command may take before it is abandoned.
CMD_TIMEOUT_S = 10.0


def host_name() -> str:
    """A file-safe name of this machine: ``$MEMSTOR_HOST`` or the hostname, reduced to letters, digits,
    ``-``, ``_`` and ``.``, starting with a letter or digit (``unknown-host`` if nothing is left)."""
    raw = os.environ.get("MEMSTOR_HOST") or socket.gethostname() or ""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", raw).lstrip("._-")
    return safe[:64] or "unknown-host"


def _read(path: str | Path) -> str:
    return Path(path).read_text(encoding="utf-8", errors="replace").strip()


def parse_cache_size(text: str) -> int | None:
    """Bytes of a sysfs/lscpu cache size (``32K`` -> 32768, ``1 MiB`` -> 1048576, ``32768K``)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGkmg]?)(?:i?B)?\s*", str(text))
    if not m:
        return None
    return int(float(m.group(1)) * 1024 ** " KMG".index(m.group(2).upper() or " "))


# --------------------------------------------------------------------------------------------- CPU


def _cpuinfo() -> list[dict[str, str]]:
    blocks: list[dict[str, str]] = []
    cur: dict[str, str] = {}
    for line in _read("/proc/cpuinfo").splitlines():
        if not line.strip():
            if cur:
                blocks.append(cur)
            cur = {}
            continue
        if ":" in line:
            k, v = line.split(":", 1)
            cur[k.strip()] = v.strip()
    if cur:
        blocks.append(cur)
    return blocks


def _lscpu() -> dict[str, str]:
    data = json.loads(run_tool(["lscpu", "-J"]).split("\n\n")[0])
    out = {}
    for item in data.get("lscpu", []):
        out[item.get("field", "").rstrip(":")] = item.get("data")
        for child in item.get("children", []) or []:
            out[child.get("field", "").rstrip(":")] = child.get("data")
    return out


def cpu_info(notes: list[str]) -> dict:
    """CPU model, logical CPUs, physical cores, sockets, threads per core, max MHz."""
    info: dict[str, Any] = {"model": None, "architecture": platform.machine() or None, "logical_cpus": os.cpu_count(),
                            "physical_cores": None, "sockets": None, "threads_per_core": None, "max_MHz": None}
    blocks = []
    try:
        blocks = _cpuinfo()
    except OSError as err:
        notes.append(f"cpu: /proc/cpuinfo unreadable ({err.strerror})")
    for b in blocks:
        for key in ("model name", "Model Name", "cpu model", "Processor"):
            if b.get(key):
                info["model"] = b[key]
                break
        if info["model"]:
            break
    cores = {(b.get("physical id"), b.get("core id")) for b in blocks if "core id" in b}
    sockets = {b.get("physical id") for b in blocks if "physical id" in b}
    if cores:
        info["physical_cores"] = len(cores)
    if sockets:
        info["sockets"] = len(sockets)
    try:
        ls = _lscpu()
        info["model"] = info["model"] or ls.get("Model name")
        per_socket = ls.get("Core(s) per socket") or ls.get("Core(s) per cluster")
        n_sockets = ls.get("Socket(s)") or ls.get("Cluster(s)")
        if info["sockets"] is None and n_sockets and str(n_sockets).isdigit():
            info["sockets"] = int(n_sockets)
        if info["physical_cores"] is None and per_socket and str(per_socket).isdigit() and info["sockets"]:
            info["physical_cores"] = int(per_socket) * info["sockets"]
        tpc = ls.get("Thread(s) per core")
        if tpc and str(tpc).isdigit():
            info["threads_per_core"] = int(tpc)
        if ls.get("CPU max MHz"):
            info["max_MHz"] = float(str(ls["CPU max MHz"]).replace(",", "."))
    except (RuntimeError, ValueError, OSError) as err:
        notes.append(f"cpu: lscpu unavailable ({err})")
    if info["threads_per_core"] is None and info["physical_cores"] and info["logical_cpus"]:
        info["threads_per_core"] = max(1, info["logical_cpus"] // info["physical_cores"])
    if info["max_MHz"] is None:
        try:
            info["max_MHz"] = int(_read("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")) / 1000
        except (OSError, ValueError):
            notes.append("cpu.max_MHz: no cpufreq in sysfs nor lscpu (common in VMs)")
    for k in ("model", "physical_cores", "sockets"):
        if info[k] is None:
            notes.append(f"cpu.{k}: not found in /proc/cpuinfo nor lscpu")
    return info


def cache_info(notes: list[str]) -> dict:
    """Cache sizes in bytes per instance: L1d, L1i, L2, L3 (None when absent), from sysfs or lscpu."""
    out: dict[str, int | None] = {"L1d_bytes": None, "L1i_bytes": None, "L2_bytes": None, "L3_bytes": None}
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    for idx in sorted(base.glob("index*")):
        try:
            level, ctype, size = _read(idx / "level"), _read(idx / "type"), _read(idx / "size")
        except OSError:
            continue
        key = f"L{level}" + ({"Data": "d", "Instruction": "i"}.get(ctype, "")) + "_bytes"
        if key in out:
            out[key] = parse_cache_size(size)
    if all(v is None for v in out.values()):
        try:
            ls = _lscpu()
            for key, field in (("L1d_bytes", "L1d cache"), ("L1i_bytes", "L1i cache"), ("L2_bytes", "L2 cache"),
                               ("L3_bytes", "L3 cache")):
                if ls.get(field):  # lscpu totals ("64 KiB (2 instances)"): keep the total, say so
                    out[key] = parse_cache_size(str(ls[field]).split("(")[0])
            notes.append("caches: from lscpu (totals over instances), sysfs has no cache info")
        except (RuntimeError, ValueError, OSError) as err:
            notes.append(f"caches: no sysfs cache info and no lscpu ({err})")
    for k, v in out.items():
        if v is None:
            notes.append(f"caches.{k}: not reported")
    return out


# ------------------------------------------------------------------------------------ memory, NUMA


def memory_info(notes: list[str]) -> dict:
    """Total memory in bytes, NUMA nodes (count and each node's CPUs and memory), THP mode."""
    out: dict[str, Any] = {"total_bytes": None, "numa_nodes": None, "numa": None, "thp_enabled": None,
                           "thp_defrag": None}
    try:
        m = re.search(r"^MemTotal:\s+(\d+)\s+kB", _read("/proc/meminfo"), re.MULTILINE)
        out["total_bytes"] = int(m.group(1)) * 1024 if m else None
    except OSError as err:
        notes.append(f"memory.total_bytes: /proc/meminfo unreadable ({err.strerror})")
    nodes = sorted(Path("/sys/devices/system/node").glob("node[0-9]*"), key=lambda p: int(p.name[4:]))
    if nodes:
        out["numa_nodes"] = len(nodes)
        numa = []
        for n in nodes:
            entry: dict[str, Any] = {"node": int(n.name[4:]), "cpus": None, "memory_bytes": None}
            try:
                entry["cpus"] = _read(n / "cpulist")
                mm = re.search(r"MemTotal:\s+(\d+)\s+kB", _read(n / "meminfo"))
                entry["memory_bytes"] = int(mm.group(1)) * 1024 if mm else None
            except OSError:
                pass
            numa.append(entry)
        out["numa"] = numa
    else:
        notes.append("memory.numa_nodes: no /sys/devices/system/node (kernel without NUMA)")
    for key, fname in (("thp_enabled", "enabled"), ("thp_defrag", "defrag")):
        try:
            text = _read(f"/sys/kernel/mm/transparent_hugepage/{fname}")
            m = re.search(r"\[([^\]]+)\]", text)
            out[key] = m.group(1) if m else text
        except OSError:
            notes.append(f"memory.{key}: no /sys/kernel/mm/transparent_hugepage/{fname}")
    return out


def os_info(notes: list[str]) -> dict:
    """Kernel release, OS name (os-release PRETTY_NAME), Python version."""
    pretty = None
    for f in ("/etc/os-release", "/usr/lib/os-release"):
        try:
            m = re.search(r'^PRETTY_NAME="?([^"\n]*)"?', _read(f), re.MULTILINE)
            if m:
                pretty = m.group(1)
                break
        except OSError:
            continue
    if pretty is None:
        pretty = platform.platform()
        notes.append("os.name: no os-release, platform string used")
    return {"kernel": platform.release() or None, "name": pretty, "python": platform.python_version()}


# ------------------------------------------------------------------------------------------ target


def _mount_of(path: Path) -> dict:
    """The mount holding path: target, source, fstype, options (findmnt, else /proc/self/mountinfo)."""
    try:
        data = json.loads(run_tool(["findmnt", "-J", "-T", str(path)]))
        fs = data["filesystems"][0]
        return {k: fs.get(k) for k in ("target", "source", "fstype", "options")}
    except (RuntimeError, ValueError, KeyError, IndexError):
        pass
    best: dict = {}
    real = os.path.realpath(path)
    for line in _read("/proc/self/mountinfo").splitlines():
        f = line.split()
        sep = f.index("-")
        mnt = f[4].replace("\\040", " ")
        if (real == mnt or real.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best.get("target", "")):
            best = {"target": mnt, "source": f[sep + 2], "fstype": f[sep + 1], "options": f[5]}
    return best


def _disks_of(source: str) -> list[str]:
    """Kernel names of the whole disks under a block device (partition -> disk, dm -> its slaves)."""
    try:
        st = os.stat(source)
    except OSError:
        return []
    sysdir = Path(f"/sys/dev/block/{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}")
    try:
        sysdir = sysdir.resolve(strict=True)
    except OSError:
        return []
    if (sysdir / "partition").exists():
        sysdir = sysdir.parent
    slaves = sorted((sysdir / "slaves").iterdir()) if (sysdir / "slaves").is_dir() else []
    if slaves:
        out: list[str] = []
        for s in slaves:
            out += _disks_of(f"/dev/{s.name}") or [s.name]
        return out
    return [sysdir.name]


def _disk_info(name: str) -> dict:
    """Model, vendor, size, rotational, transport of one disk from sysfs and lsblk."""
    base = Path("/sys/block") / name
    info: dict[str, Any] = {"name": name, "model": None, "vendor": None, "size_bytes": None, "rotational": None,
                            "transport": None}
    for key, rel in (("model", "device/model"), ("vendor", "device/vendor")):
        try:
            info[key] = _read(base / rel) or None
        except OSError:
            pass
    try:
        info["size_bytes"] = int(_read(base / "size")) * 512  # sysfs counts 512-byte sectors
        info["rotational"] = _read(base / "queue/rotational") == "1"
    except (OSError, ValueError):
        pass
    try:
        data = json.loads(run_tool(["lsblk", "-J", "-d", "-b", "-o", "NAME,MODEL,VENDOR,SIZE,ROTA,TRAN", f"/dev/{name}"]))
        dev = data["blockdevices"][0]
        info["model"] = info["model"] or (dev.get("model") or None)
        info["vendor"] = info["vendor"] or (dev.get("vendor") or None)
        info["transport"] = dev.get("tran")
    except (RuntimeError, ValueError, KeyError, IndexError):
        pass
    for k in ("model", "vendor"):
        if isinstance(info[k], str):
            info[k] = info[k].strip() or None
    info["virtual_disk"] = virtual_disk(name, vendor=info["vendor"], model=info["model"])
    info["kind"] = disk_kind(name, info["virtual_disk"])
    return info


def unknown_rotation(disks: list[dict], notes: list[str]) -> None:
    """A virtual disk's ``rotational`` is unknown (None), with a note of what sysfs said."""
    for d in disks:
        if d.get("virtual_disk"):
            said = {True: "1", False: "0"}.get(d["rotational"], "nothing")
            d["rotational"] = None
            notes.append(f"target.disks.{d['name']}.rotational: {d['kind']}, sysfs says {said} about the emulated "
                         "device, not the storage behind it; unknown")


def target_info(target: Path, notes: list[str]) -> dict:
    """The target path's filesystem (type, mount point, source, free bytes) and its disks."""
    path = Path(target).expanduser()
    out: dict[str, Any] = {"path": str(path), "real_path": os.path.realpath(path), "fstype": None,
                           "mountpoint": None, "source": None, "mount_options": None, "free_bytes": None,
                           "disks": []}
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    mnt = _mount_of(probe)
    out.update(fstype=mnt.get("fstype"), mountpoint=mnt.get("target"), source=mnt.get("source"),
               mount_options=mnt.get("options"))
    try:
        out["free_bytes"] = shutil.disk_usage(probe).free
    except OSError as err:
        notes.append(f"target.free_bytes: {err.strerror}")
    src = out["source"] or ""
    if src.startswith("/dev/"):
        out["disks"] = [_disk_info(d) for d in _disks_of(src)]
        unknown_rotation(out["disks"], notes)
        if not any(d.get("model") for d in out["disks"]):
            notes.append(f"target.disks.model: {src} reports no model (virtual disk?)")
    else:
        notes.append(f"target.disks: {src or 'the filesystem'} is not backed by a local block device")
    return out


# ------------------------------------------------------------------------------------------- tools


def tool_versions(notes: list[str]) -> dict:
    """fio, Intel MLC (when on PATH) and loadlat (when built) versions."""
    out: dict[str, Any] = {"fio": None, "mlc": None, "mlc_path": None, "loadlat": None, "loadlat_path": None}
    try:
        out["fio"] = fio_version()
    except Exception as err:  # noqa: BLE001 - sysinfo never fails
        notes.append(f"tools.fio: {err}")
    mlc = shutil.which("mlc")
    if mlc:
        out["mlc_path"] = mlc
        try:
            text = run_tool([mlc, "--version"], timeout_s=CMD_TIMEOUT_S)
            m = re.search(r"Memory Latency Checker\s*-\s*(v[\d.]+\S*)", text) or re.search(r"\bv(\d+\.\d+\S*)", text)
            out["mlc"] = m.group(1) if m else None
            if not m:
                notes.append(f"tools.mlc: no version in `mlc --version` output ({text.strip()[:60]!r})")
        except RuntimeError as err:
            notes.append(f"tools.mlc: {err} (MLC may need root)")
    else:
        notes.append("tools.mlc: Intel MLC not on PATH")
    try:
        exe = loadlat.binary()
        out["loadlat_path"] = str(exe)
        out["loadlat"] = loadlat.version(exe)
    except Exception as err:  # noqa: BLE001
        notes.append(f"tools.loadlat: {err}")
    return out


def shape_record() -> dict:
    """What memstor may use here (memstor.measure.shape): usable CPUs (affinity within the cgroup quota), SMT,
    NUMA nodes, usable memory (MemAvailable within the cgroup limit), each with where it came from."""
    cpu, mem = cpu_shape(), memory_shape()
    return {"usable_cpus": cpu.usable, "affinity_cpus": len(cpu.affinity), "cpu_quota": cpu.quota_cpus,
            "smt_threads_per_core": cpu.smt_threads_per_core, "numa_nodes": len(cpu.nodes) or None,
            "cpu_source": cpu.source, "usable_memory_bytes": mem.usable_bytes,
            "cgroup_memory_limit_bytes": mem.cgroup_limit_bytes, "memory_source": mem.source}


def collect(target: Path | None = None, drive_of: Path | str | None = None, raw: bool = False) -> dict:
    """A JSON-able description of this machine (and of ``target``'s filesystem when given). Never raises.

    drive_of: a test-file folder (or, with ``raw``, a raw block device) whose drive is described under
    ``drive`` (:func:`memstor.measure.drive.drive_record`: identity, PCIe link and health now, each
    field a value or ``not available (reason)``); None: ``drive`` is None."""
    notes: list[str] = []
    info: dict[str, Any] = {"host": host_name(), "hostname": socket.gethostname(), "collected_at": utc_now(),
                            "memstor_version": __version__}
    parts: list[tuple[str, Callable[[], dict]]] = [
        ("cpu", lambda: cpu_info(notes)),
        ("caches", lambda: cache_info(notes)),
        ("memory", lambda: memory_info(notes)),
        ("shape", shape_record),
        ("dram", dram_record),
        ("os", lambda: os_info(notes)),
        ("tools", lambda: tool_versions(notes)),
    ]
    if target is not None:
        parts.append(("target", lambda: target_info(Path(target), notes)))
        parts.append(("fio_facts", lambda: fio_facts().as_dict()))
    if drive_of is not None:
        parts.append(("drive", lambda: drive_record(drive_of, raw)))
    for key, fn in parts:
        try:
            info[key] = fn()
        except Exception as err:  # noqa: BLE001 - one broken source must not lose the rest
            info[key] = None
            notes.append(f"{key}: {type(err).__name__}: {err}")
    if target is None:
        info["target"] = None
    if drive_of is None:
        info["drive"] = None
    try:
        info["machine"] = machine_record(info["target"], notes)
    except Exception as err:  # noqa: BLE001 - one broken source must not lose the rest
        info["machine"] = None
        notes.append(f"machine: {type(err).__name__}: {err}")
    info["notes"] = notes
    return info
