"""The drive under test: its identity (model, firmware, capacity, PCIe link, NVMe LBA format, volatile
write cache) and its health (temperature, percentage used, data written, media errors) before and after
the storage experiments, with the difference.

Sources, in order of trust: ``nvme id-ctrl`` / ``id-ns`` / ``smart-log`` (nvme-cli, ``-o json``) for NVMe,
``smartctl -j -a`` (smartmontools) for NVMe, SATA and SAS, and sysfs under a ``root`` (``/``, or a
recorded tree in the tests): ``/sys/class/block/NAME`` (size, queue/logical_block_size,
queue/write_cache) and the NVMe controller (model, firmware_rev, serial, the PCI function's
current/max link speed and width). Tools run time-boxed (:data:`CMD_TIMEOUT_S`); parsing is
:mod:`memstor.parse.drive`.

Nothing here raises for a missing tool, permission or device: the answer is
``{"available": False, "reason": "nvme-cli not installed", "status": "not available (nvme-cli not
installed)"}`` (reasons: ``<tool> not installed``, ``permission denied (needs root)``, ``not an NVMe or
SMART device``, ``no such block device``, a timeout, or the tool's own one-line message). Serial numbers
are returned as ``serial_number_private``; reports drop them (:func:`memstor.parse.drive.public`).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from memstor.errors import ParseError
from memstor.measure.files import utc_now
from memstor.parse import drive as parse
from memstor.parse.guards import one_line

#: Seconds nvme or smartctl may take before it is abandoned.
CMD_TIMEOUT_S = 10.0
#: The root whose ``/sys`` is read: the running system.
SYSTEM_ROOT = Path("/")
#: Health counters that only grow (a drop means another drive or a reset, not negative wear).
MONOTONIC = ("data_units_written", "data_written_bytes", "percentage_used_pct", "media_errors", "power_on_hours")

_NVME_RE = re.compile(r"^(?P<ctrl>nvme\d+)(?:c\d+)?(?P<ns>n\d+)?(?:p\d+)?$")
_SMART_RE = re.compile(r"^(?:sd[a-z]+|hd[a-z]+|nvme\d+(?:n\d+)?)$")
_PERMISSION_RE = re.compile(r"permission denied|operation not permitted|\beacces\b|\beperm\b", re.IGNORECASE)


def not_available(reason: str, **extra: Any) -> dict:
    """The record of something that could not be read: ``available`` False, the one-line ``reason`` and
    ``status`` = ``not available (reason)`` as reports print it."""
    reason = one_line(reason, 300) or "unknown reason"
    return {"available": False, "reason": reason, "status": f"not available ({reason})", **extra}


def _sys(root: Path, path: str) -> Path:
    return Path(root) / path.lstrip("/")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip() or None
    except OSError:
        return None


def device_name(block_device: str) -> str:
    """The kernel name of ``/dev/nvme0n1`` / ``nvme0n1`` -> ``nvme0n1``."""
    return Path(str(block_device).strip()).name


def disk_of(block_device: str, root: Path = SYSTEM_ROOT) -> str:
    """The whole disk holding ``block_device`` (a partition -> its disk: ``nvme0n1p2`` -> ``nvme0n1``,
    ``sda1`` -> ``sda``), from sysfs's ``partition`` file under root, else from the name."""
    name = device_name(block_device)
    node = _sys(root, f"/sys/class/block/{name}")
    if (node / "partition").exists():
        try:
            return node.resolve().parent.name
        except OSError:
            pass
    for pattern in (r"^(nvme\d+n\d+)p\d+$", r"^(mmcblk\d+)p\d+$", r"^((?:sd|hd|vd|xvd)[a-z]+)\d+$"):
        m = re.match(pattern, name)
        if m:
            return m.group(1)
    return name


def is_nvme(name: str) -> bool:
    """True for an NVMe controller or namespace name (``nvme0``, ``nvme0n1``, ``nvme0n1p2``)."""
    return bool(_NVME_RE.match(device_name(name)))


def nvme_controller(disk: str, root: Path = SYSTEM_ROOT) -> tuple[str | None, Path | None]:
    """The NVMe controller serving ``disk`` (name and sysfs folder): ``/sys/class/block/DISK/device``
    is the controller (single path) or the NVMe subsystem (native multipath: its live ``nvmeN``
    controllers are listed there); else ``/sys/class/nvme/nvmeX`` from the name. (None, None) when
    neither is found."""
    dev = _sys(root, f"/sys/class/block/{disk}/device")
    try:
        target = dev.resolve(strict=True)
    except OSError:
        target = None
    if target is not None:
        if re.fullmatch(r"nvme\d+", target.name):
            return target.name, target
        if target.name.startswith("nvme-subsys"):
            ctrls = sorted((p for p in target.iterdir() if re.fullmatch(r"nvme\d+", p.name)),
                           key=lambda p: int(p.name[4:]))
            live = [p for p in ctrls if (_read(p / "state") or "live") == "live"]
            for p in live or ctrls:
                return p.name, p.resolve()
    m = _NVME_RE.match(disk)
    if m:
        folder = _sys(root, f"/sys/class/nvme/{m.group('ctrl')}")
        if folder.exists():
            return m.group("ctrl"), folder.resolve()
        return m.group("ctrl"), None
    return None, None


def pcie_link(block_device_name: str, root: Path = SYSTEM_ROOT) -> dict:
    """The PCIe link of the NVMe drive under ``block_device_name``, from its PCI function in sysfs:
    current_link_speed_GTps, current_link_width, max_link_speed_GTps, max_link_width (per-lane GT/s and
    lanes), pcie_generation_current / _max, link_below_max (trained slower or narrower than the device
    can: a Gen4 drive in a Gen3 slot, a x4 drive on x2), pci_address, controller. Not available for
    non-NVMe devices (SATA's link is smartctl's interface_speed), fabrics transports, or missing files."""
    disk = disk_of(block_device_name, root)
    if not is_nvme(disk):
        return not_available(f"not an NVMe device ({disk}): no PCIe link of its own", device=disk)
    ctrl, folder = nvme_controller(disk, root)
    if folder is None:
        return not_available(f"no NVMe controller in sysfs for {disk}", device=disk)
    transport = _read(folder / "transport")
    if transport and transport != "pcie":
        return not_available(f"NVMe over {transport}: no PCIe link", device=disk, controller=ctrl)
    try:
        function = (folder / "device").resolve(strict=True)
    except OSError:
        return not_available(f"{ctrl} has no PCI device link in sysfs", device=disk, controller=ctrl)
    raw = {k: _read(function / k) for k in ("current_link_speed", "current_link_width", "max_link_speed",
                                             "max_link_width")}
    if raw["current_link_speed"] is None and raw["max_link_speed"] is None:
        return not_available(f"no link speed in sysfs for {function.name}", device=disk, controller=ctrl)
    cur_s, max_s = (parse.parse_pcie_link_speed(raw[k]) for k in ("current_link_speed", "max_link_speed"))
    cur_w, max_w = (parse.parse_pcie_link_width(raw[k]) for k in ("current_link_width", "max_link_width"))
    below = None
    if None not in (cur_s, max_s, cur_w, max_w):
        below = cur_s < max_s or cur_w < max_w
    return {"available": True, "device": disk, "controller": ctrl, "pci_address": function.name,
            "current_link_speed_GTps": cur_s, "current_link_width": cur_w,
            "max_link_speed_GTps": max_s, "max_link_width": max_w,
            "pcie_generation_current": parse.pcie_generation(cur_s),
            "pcie_generation_max": parse.pcie_generation(max_s),
            "link_below_max": below, "sysfs": {k: v for k, v in raw.items()}}


def sysfs_identity(block_device_name: str, root: Path = SYSTEM_ROOT) -> dict:
    """What sysfs tells without privileges: model, firmware, serial_number_private (NVMe controller or
    SCSI device attributes), capacity_bytes (``size`` x 512), logical/physical block size, rotational,
    write_cache (``write back`` = a volatile cache the kernel flushes, ``write through`` = none or
    disabled). Keys are None where sysfs has nothing (``exists`` False when the device is unknown)."""
    disk = disk_of(block_device_name, root)
    base = _sys(root, f"/sys/class/block/{disk}")
    out: dict[str, Any] = {"device": disk, "exists": base.exists(), "model": None, "firmware": None,
                           "serial_number_private": None, "capacity_bytes": None,
                           "logical_block_size_bytes": None, "physical_block_size_bytes": None,
                           "rotational": None, "write_cache": None}
    if not out["exists"]:
        return out
    attrs = base / "device"
    if is_nvme(disk):
        _, ctrl = nvme_controller(disk, root)
        attrs = ctrl if ctrl is not None else attrs
        keys = {"model": "model", "firmware": "firmware_rev", "serial_number_private": "serial"}
    else:
        keys = {"model": "model", "firmware": "rev", "serial_number_private": "serial"}
    for key, fname in keys.items():
        out[key] = parse.clean_text(_read(attrs / fname))
    size = parse.to_int(_read(base / "size"))
    out["capacity_bytes"] = size * 512 if size else None  # sysfs counts 512-byte sectors
    out["logical_block_size_bytes"] = parse.to_int(_read(base / "queue/logical_block_size"))
    out["physical_block_size_bytes"] = parse.to_int(_read(base / "queue/physical_block_size"))
    rot = _read(base / "queue/rotational")
    out["rotational"] = None if rot is None else rot == "1"
    out["write_cache"] = _read(base / "queue/write_cache")
    return out


# ------------------------------------------------------------------------------------------ tools

class _Unavailable(Exception):
    """A tool gave nothing usable; str() is the reason."""


_PACKAGES = {"nvme": "nvme-cli", "smartctl": "smartmontools (smartctl)"}


def _run(cmd: list[str]) -> str:
    """stdout of ``cmd`` (time-boxed); _Unavailable with the reason when it cannot run or fails."""
    tool = cmd[0]
    if shutil.which(tool) is None:
        raise _Unavailable(f"{_PACKAGES.get(tool, tool)} not installed")
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=CMD_TIMEOUT_S,
                             stdin=subprocess.DEVNULL, errors="replace")
    except subprocess.TimeoutExpired:
        raise _Unavailable(f"{' '.join(cmd)} took more than {CMD_TIMEOUT_S:.0f} s") from None
    except OSError as err:
        raise _Unavailable(f"{tool} could not run ({err.strerror or err})") from None
    failed = res.returncode & 0b11 if tool == "smartctl" else res.returncode  # smartctl: bits 2-7 are findings
    if failed:
        raise _Unavailable(_failure(cmd, res.returncode, res.stdout + "\n" + res.stderr))
    return res.stdout


def _failure(cmd: list[str], code: int, text: str) -> str:
    if _PERMISSION_RE.search(text):
        return "permission denied (needs root)"
    if "No such file or directory" in text or "No such device" in text:
        node = next((a for a in cmd if a.startswith("/dev/")), "")
        return f"no such device node {node}".strip()
    line = next((ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("{")), "")
    return f"{' '.join(cmd)} exited {code}" + (f": {line}" if line else "")


def _parsed(fn, text: str) -> dict:
    try:
        return fn(text)
    except ParseError as err:
        msg = str(err)
        raise _Unavailable("permission denied (needs root)" if _PERMISSION_RE.search(msg) else msg) from None


def _smartctl(disk: str) -> dict:
    rec = _parsed(parse.parse_smartctl_json, _run(["smartctl", "-j", "-a", f"/dev/{disk}"]))
    if rec.get("smart_available") is False and rec.get("temperature_C") is None:
        raise _Unavailable(f"not an NVMe or SMART device ({disk}: SMART support unavailable)")
    return rec


def _nvme_identity(disk: str, ctrl: str | None) -> dict:
    rec = _parsed(parse.parse_nvme_id_ctrl, _run(["nvme", "id-ctrl", f"/dev/{ctrl or disk}", "-o", "json"]))
    rec["nvm_capacity_bytes"] = rec.pop("capacity_bytes")
    if _NVME_RE.match(disk) and _NVME_RE.match(disk).group("ns"):
        try:
            ns = _parsed(parse.parse_nvme_id_ns, _run(["nvme", "id-ns", f"/dev/{disk}", "-o", "json"]))
            rec.update(lba_format_index=ns["lba_format_index"], lba_size_bytes=ns["lba_size_bytes"],
                       metadata_size_bytes=ns["metadata_size_bytes"], capacity_bytes=ns["size_bytes"],
                       lba_formats=ns["lba_formats"])
        except _Unavailable as err:
            rec["notes"].append(f"id-ns: {err}")
    return rec


_IDENTITY_KEYS = ("model", "firmware", "serial_number_private", "capacity_bytes", "nvm_capacity_bytes",
                  "logical_block_size_bytes", "physical_block_size_bytes", "lba_format_index", "lba_size_bytes",
                  "metadata_size_bytes", "volatile_write_cache", "write_cache", "rotational", "rotation_rpm",
                  "nvme_version", "interface_speed_current_Gbps", "interface_speed_max_Gbps", "protocol")


def identity(block_device_name: str, root: Path = SYSTEM_ROOT) -> dict:
    """The identity of the drive under ``block_device_name`` (a partition counts as its disk): sysfs
    first (no privileges), then nvme-cli (NVMe) or smartctl, whose values win where both know one. Keys:
    device, available, sources, tools (each tool's status), the :data:`_IDENTITY_KEYS`, pcie (see
    :func:`pcie_link`), notes; ``volatile_write_cache`` from id-ctrl's VWC bit, else sysfs
    ``write_cache == "write back"``. Not available (with the reason) when no source names a model."""
    disk = disk_of(block_device_name, root)
    rec: dict[str, Any] = {"device": disk, "available": False, "sources": [], "tools": {}, "notes": []}
    rec.update(dict.fromkeys(_IDENTITY_KEYS))
    sysfs = sysfs_identity(disk, root)
    if sysfs["exists"]:
        rec["sources"].append("sysfs")
        for k in _IDENTITY_KEYS:
            if sysfs.get(k) is not None:
                rec[k] = sysfs[k]
    attempts: list[tuple[str, Any]] = []
    if is_nvme(disk):
        ctrl, _ = nvme_controller(disk, root)
        attempts = [("nvme", lambda: _nvme_identity(disk, ctrl)), ("smartctl", lambda: _smartctl(disk))]
        rec["controller"] = ctrl
    elif _SMART_RE.match(disk):
        attempts = [("smartctl", lambda: _smartctl(disk))]
    else:
        rec["tools"]["smartctl"] = not_available(f"not an NVMe or SMART device ({disk})")
    for tool, fn in attempts:
        try:
            found = fn()
        except _Unavailable as err:
            rec["tools"][tool] = not_available(str(err))
            continue
        rec["tools"][tool] = {"available": True, "status": "read"}
        rec["sources"].append(found.get("source", tool))
        for k in _IDENTITY_KEYS:
            if found.get(k) is not None:
                rec[k] = found[k]
        rec["lba_formats"] = found.get("lba_formats", rec.get("lba_formats"))
        rec["notes"] += [f"{tool}: {n}" for n in found.get("notes", [])]
        break
    if rec["volatile_write_cache"] is None and rec["write_cache"] is not None:
        rec["volatile_write_cache"] = rec["write_cache"] == "write back"
        rec["notes"].append("volatile_write_cache: from sysfs queue/write_cache (the kernel's view)")
    if rec["protocol"] is None and is_nvme(disk):
        rec["protocol"] = "NVMe"
    rec["pcie"] = pcie_link(disk, root)
    rec["available"] = rec["model"] is not None
    if not rec["available"]:
        reasons = [t["reason"] for t in rec["tools"].values() if not t.get("available")]
        if not sysfs["exists"]:
            reasons.insert(0, f"no such block device {disk}")
        rec.update(not_available("; ".join(reasons) or f"no model for {disk}"), sources=rec["sources"])
    return rec


_HEALTH_KEYS = ("temperature_C", "percentage_used_pct", "data_units_written", "data_written_bytes", "media_errors",
                "available_spare_pct", "critical_warning", "power_on_hours", "smart_passed")


def health(block_device_name: str, root: Path = SYSTEM_ROOT) -> dict:
    """The drive's health now: nvme-cli ``smart-log`` on the controller for NVMe (smartctl when nvme-cli
    is missing or refused), smartctl for SATA/SAS. Keys: device, available, source, collected_at (UTC),
    temperature_C, percentage_used_pct, data_units_written, data_written_bytes, media_errors,
    available_spare_pct, critical_warning, power_on_hours, smart_passed, notes; or
    :func:`not_available` with every tool's reason joined."""
    disk = disk_of(block_device_name, root)
    if is_nvme(disk):
        ctrl, _ = nvme_controller(disk, root)
        attempts = [("nvme", lambda: _parsed(parse.parse_nvme_smart_log,
                                             _run(["nvme", "smart-log", f"/dev/{ctrl or disk}", "-o", "json"]))),
                    ("smartctl", lambda: _smartctl(disk))]
    elif _SMART_RE.match(disk):
        attempts = [("smartctl", lambda: _smartctl(disk))]
    else:
        return not_available(f"not an NVMe or SMART device ({disk})", device=disk)
    reasons = []
    for tool, fn in attempts:
        try:
            found = fn()
        except _Unavailable as err:
            reasons.append(str(err))
            continue
        rec = {"device": disk, "available": True, "source": found.get("source", tool), "collected_at": utc_now()}
        rec.update({k: found.get(k) for k in _HEALTH_KEYS})
        rec["notes"] = list(found.get("notes", [])) + [f"earlier source: {r}" for r in reasons]
        return rec
    return not_available(", ".join(dict.fromkeys(reasons)), device=disk)


def health_delta(before: dict, after: dict) -> dict:
    """after - before of two :func:`health` records: data_written_bytes, data_units_written,
    percentage_used_pct, media_errors, power_on_hours, temperature_C (plus temperature_before_C /
    _after_C). A value missing on either side is None; a counter that went down (another drive, a
    reset) is None with a note. Not available when either record is."""
    for label, rec in (("before", before), ("after", after)):
        if not rec or not rec.get("available"):
            reason = (rec or {}).get("reason", "no record")
            return not_available(f"health {label} the experiments: {reason}")
    notes: list[str] = []
    if before.get("device") != after.get("device"):
        notes.append(f"device changed: {before.get('device')} -> {after.get('device')}")
    out: dict[str, Any] = {"available": True, "device": after.get("device"), "source": after.get("source"),
                           "before_at": before.get("collected_at"), "after_at": after.get("collected_at"),
                           "temperature_before_C": before.get("temperature_C"),
                           "temperature_after_C": after.get("temperature_C")}
    for key in (*MONOTONIC, "temperature_C"):
        b, a = before.get(key), after.get(key)
        if b is None or a is None:
            out[key] = None
            continue
        out[key] = a - b
        if key in MONOTONIC and a < b:
            out[key] = None
            notes.append(f"{key}: went down ({b} -> {a}): another drive or a reset, no difference taken")
    out["notes"] = notes
    return out
