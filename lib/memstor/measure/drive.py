"""The drive under test: its identity (model, firmware, capacity, PCIe link, NVMe LBA format, volatile
write cache) and its health (temperature, percentage used, data written, media errors) before and after
the storage experiments, with the difference.

Sources, in order of trust: ``nvme id-ctrl`` / ``id-ns`` / ``smart-log`` (nvme-cli, ``-o json``) for NVMe,
``smartctl -j -a`` (smartmontools) for NVMe, SATA and SAS, and sysfs under a ``root`` (``/``, or a
recorded tree in the tests): ``/sys/class/block/NAME`` (size, queue/logical_block_size,
queue/write_cache) and the NVMe controller (model, firmware_rev, serial, the PCI function's
current/max link speed and width). Tools run time-boxed (:data:`CMD_TIMEOUT_S`); parsing is
:mod:`memstor.parse.drive`.

Nothing here raises for a missing tool, permission or device: the answer is :func:`not_available`,
``{"available": False, "reason": "...", "status": "not available (...)"}`` (reasons: ``nvme not
installed (install the nvme-cli package; ...)``, ``permission denied (needs root)``, ``not an NVMe or
SMART device (virtio disk vda)``, ``no such block device``, a timeout, or the tool's own one-line
message). Serial numbers
are returned as ``serial_number_private``; reports drop them (:func:`memstor.parse.drive.public`).

Wired into the runs: :func:`locate` finds the one disk under a test-file folder (through partitions,
device-mapper and md) or a raw device; :func:`drive_record` is ``memstor sysinfo``'s ``drive`` section;
:func:`health_snapshot` runs right before and after each storage sweep, :func:`run_record` and
:func:`merge_runs` make the ``drive`` section of ``processed/<device>/sysinfo.json`` (identity,
pcie_link, health_before, health_after, health_delta). :mod:`memstor.analysis.drive` reads them.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from memstor.core.errors import ParseError
from memstor.core.files import utc_now
from memstor.measure import device
from memstor.measure.sysfs import (
    NVME_NAME,
    SYSTEM_ROOT,
    block_dir,
    disk_label,
    disk_of,
    in_root,
    is_nvme,
    nvme_controller,
    read_value,
    underlying_disks,
)
from memstor.measure.tools import ToolError, completed
from memstor.parse import drive as parse
from memstor.parse.drive import (
    DELTA_FIELDS,
    HEALTH_FIELDS,
    IDENTITY_EXTRA_FIELDS,
    IDENTITY_FIELDS,
    NVME_ONLY_FIELDS,
    PCIE_FIELDS,
    unavailable,
)
from memstor.parse.guards import one_line

#: Seconds nvme or smartctl may take before it is abandoned.
CMD_TIMEOUT_S = 10.0
#: Health counters that only grow (a drop means another drive or a reset, not negative wear).
MONOTONIC = ("data_units_written", "data_written_bytes", "percentage_used_pct", "media_errors", "power_on_hours")

_SMART_RE = re.compile(r"^(?:sd[a-z]+|hd[a-z]+|nvme\d+(?:n\d+)?)$")
_PERMISSION_RE = re.compile(r"permission denied|operation not permitted|\beacces\b|\beperm\b", re.IGNORECASE)


def not_available(reason: str, **extra: Any) -> dict:
    """The record of something that could not be read: ``available`` False, the one-line ``reason`` and
    ``status`` = ``not available (reason)`` as reports print it."""
    reason = one_line(reason, 300) or "unknown reason"
    return {"available": False, "reason": reason, "status": f"not available ({reason})", **extra}



def pcie_link(block_device_name: str, root: Path = SYSTEM_ROOT) -> dict:
    """The PCIe link of the NVMe drive under ``block_device_name``, from its PCI function in sysfs:
    current_link_speed_GTps, current_link_width, max_link_speed_GTps, max_link_width (per-lane GT/s and
    lanes), pcie_generation_current / _max, link_below_max (trained slower or narrower than the device
    can: a Gen4 drive in a Gen3 slot, a x4 drive on x2), pci_address, controller. Not available for
    non-NVMe devices (SATA's link is smartctl's interface_speed), fabrics transports, or missing files."""
    disk = disk_of(block_device_name, root)
    if not is_nvme(disk):
        return not_available(f"not an NVMe device ({disk_label(disk, root)}): no PCIe link of its own", device=disk)
    ctrl, folder = nvme_controller(disk, root)
    if folder is None:
        return not_available(f"no NVMe controller in sysfs for {disk}", device=disk)
    transport = read_value(folder / "transport")
    if transport and transport != "pcie":
        return not_available(f"NVMe over {transport}: no PCIe link", device=disk, controller=ctrl)
    try:
        function = (folder / "device").resolve(strict=True)
    except OSError:
        return not_available(f"{ctrl} has no PCI device link in sysfs", device=disk, controller=ctrl)
    raw = {k: read_value(function / k) for k in ("current_link_speed", "current_link_width", "max_link_speed",
                                             "max_link_width")}
    if raw["current_link_speed"] is None and raw["max_link_speed"] is None:
        return not_available(f"no link speed in sysfs for {function.name}", device=disk, controller=ctrl)
    cur_s, max_s = (parse.parse_pcie_link_speed(raw[k]) for k in ("current_link_speed", "max_link_speed"))
    cur_w, max_w = (parse.parse_pcie_link_width(raw[k]) for k in ("current_link_width", "max_link_width"))
    below = None
    if cur_s is not None and max_s is not None and cur_w is not None and max_w is not None:
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
    base = in_root(root, f"/sys/class/block/{disk}")
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
        out[key] = parse.clean_text(read_value(attrs / fname))
    size = parse.to_int(read_value(base / "size"))
    out["capacity_bytes"] = size * 512 if size else None  # sysfs counts 512-byte sectors
    out["logical_block_size_bytes"] = parse.to_int(read_value(base / "queue/logical_block_size"))
    out["physical_block_size_bytes"] = parse.to_int(read_value(base / "queue/physical_block_size"))
    rot = read_value(base / "queue/rotational")
    out["rotational"] = None if rot is None else rot == "1"
    out["write_cache"] = read_value(base / "queue/write_cache")
    return out


# ------------------------------------------------------------------------------------------ tools

#: Tool -> the package that installs it (scripts/install-system-deps installs both).
PACKAGES = {"nvme": "nvme-cli", "smartctl": "smartmontools"}


def not_installed(tool: str) -> str:
    """The reason a missing tool gives, with the way out: ``smartctl not installed (install the
    smartmontools package; scripts/install-system-deps does)``."""
    return f"{tool} not installed (install the {PACKAGES.get(tool, tool)} package; scripts/install-system-deps does)"


def _run(cmd: list[str]) -> str:
    """stdout of ``cmd`` (time-boxed by :data:`CMD_TIMEOUT_S`); ToolError with the reason when it cannot run
    or fails (smartctl: only its bits 0-1 are failures, bits 2-7 are findings)."""
    tool = cmd[0]
    res = completed(cmd, CMD_TIMEOUT_S, missing=not_installed(tool))
    failed = res.returncode & 0b11 if tool == "smartctl" else res.returncode
    if failed:
        raise ToolError(_failure(cmd, res.returncode, res.stdout + "\n" + res.stderr))
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
        raise ToolError("permission denied (needs root)" if _PERMISSION_RE.search(msg) else msg) from None


def _smartctl(disk: str) -> dict:
    rec = _parsed(parse.parse_smartctl_json, _run(["smartctl", "-j", "-a", f"/dev/{disk}"]))
    if rec.get("smart_available") is False and rec.get("temperature_C") is None:
        raise ToolError(f"not an NVMe or SMART device ({disk}: SMART support unavailable)")
    return rec


def _nvme_identity(disk: str, ctrl: str | None) -> dict:
    rec = _parsed(parse.parse_nvme_id_ctrl, _run(["nvme", "id-ctrl", f"/dev/{ctrl or disk}", "-o", "json"]))
    rec["nvm_capacity_bytes"] = rec.pop("capacity_bytes")
    name = NVME_NAME.match(disk)
    if name and name.group("ns"):
        try:
            ns = _parsed(parse.parse_nvme_id_ns, _run(["nvme", "id-ns", f"/dev/{disk}", "-o", "json"]))
            rec.update(lba_format_index=ns["lba_format_index"], lba_size_bytes=ns["lba_size_bytes"],
                       metadata_size_bytes=ns["metadata_size_bytes"], capacity_bytes=ns["size_bytes"],
                       lba_formats=ns["lba_formats"])
        except ToolError as err:
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
        rec["tools"]["smartctl"] = not_available(f"not an NVMe or SMART device ({disk_label(disk, root)})")
    for tool, fn in attempts:
        try:
            found = fn()
        except ToolError as err:
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
        return not_available(f"not an NVMe or SMART device ({disk_label(disk, root)})", device=disk)
    reasons = []
    for tool, fn in attempts:
        try:
            found = fn()
        except ToolError as err:
            reasons.append(str(err))
            continue
        rec = {"device": disk, "available": True, "source": found.get("source", tool), "collected_at": utc_now()}
        rec.update({k: found.get(k) for k in HEALTH_FIELDS})
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


# ------------------------------------------------------------------------- the drive under a target
#
# A *section* (identity, pcie_link, health, health_before/_after/_delta) is a dict: ``available`` (True
# when at least one of its fields was read), ``reason`` / ``status`` when not (see not_available), what
# it was read from, ``notes``, and ``fields``: {field: value, or not_available(reason) when unreadable}.
# Units are in the field names (``_bytes``, ``_C``, ``_pct``, ``_GTps``, ``_Gbps``, ``_hours``).



def _where(path: str, raw: bool, kname: str | None, why_none: str, root: Path) -> dict:
    """The location record (see :func:`locate`) of block device ``kname`` (None: ``why_none``)."""
    out: dict[str, Any] = {"path": str(path), "raw": raw, "block_device": None, "disks": [], "disk": None,
                           "disk_label": None, "reason": None}
    if not kname:
        out["reason"] = why_none
        return out
    if block_dir(kname, root) is None:
        out["reason"] = f"{path} is not a block device (no {kname} in /sys/class/block)" if raw else \
            f"no block device {kname} in /sys/class/block"
        return out
    disks = underlying_disks(kname, root)
    out.update(block_device=kname, disks=disks)
    if len(disks) != 1:
        out["reason"] = (f"{kname} spans {len(disks)} disks ({', '.join(disks)}): one drive's identity and "
                         "health would not describe it")
        return out
    out.update(disk=disks[0], disk_label=disk_label(disks[0], root))
    return out


def locate_device(record: dict, root: Path = SYSTEM_ROOT) -> dict:
    """:func:`locate` for a device record of :mod:`memstor.measure.device` (``filesystem`` or
    ``raw-device`` kind: its ``kernel_name`` is the block device), without looking the path up again."""
    raw = record.get("kind") == "raw-device"
    path = record.get("path") or record.get("real_path") or ""
    fstype, source = record.get("fstype") or "the filesystem", record.get("source")
    why = f"{fstype} on {record.get('mountpoint') or path}" + (f" (source {source})" if source and source != fstype
                                                               else "") + " is not on a local block device"
    if raw:
        why = f"{path} is not a block device"
    return _where(path, raw, record.get("kernel_name"), why, root)


def locate(path: Path | str, raw: bool = False, root: Path = SYSTEM_ROOT) -> dict:
    """Which drive holds ``path``: the disk under its filesystem (a test-file folder; the nearest existing
    parent counts) or, with ``raw``, under the block device ``path``.

    Keys: path, raw, block_device (kernel name of the filesystem's device or of the raw device, else
    None), disks (the whole disks under it), disk (the one disk, None when there is not exactly one),
    disk_label (``virtio disk vda``), reason (why disk is None: no local block device, several disks,
    no such device). Under a recorded ``root`` the mount is found by path alone. Never raises."""
    if raw:
        record = device.raw_device_identity(str(path), root)
    elif os.path.realpath(root) == "/":
        record = device.filesystem_identity(path, root)
    else:  # a recorded tree: the device number of files under path is their mount's (this machine's means nothing)
        mounts: list = []
        try:
            mounts = device.parse_mountinfo(in_root(root, "/proc/self/mountinfo").read_text(encoding="utf-8"))
        except OSError:
            pass
        mount = device.mount_of(os.path.normpath(str(path)), None, mounts)
        record = device.filesystem_identity(path, root, st_dev=mount.st_dev if mount else 0)
    return locate_device(record, root)


def _field_na(fields: tuple[str, ...], reason: str) -> dict:
    return {f: not_available(reason) for f in fields}


def unavailable_section(fields: tuple[str, ...], reason: str, **extra: Any) -> dict:
    """A section none of whose ``fields`` could be read, each with ``reason``."""
    return {**not_available(reason), **extra, "fields": _field_na(fields, reason)}


def _identity_reason(field: str, ident: dict, label: str, nvme: bool) -> str:
    """Why identity field ``field`` is missing: NVMe-only on another disk, else what sysfs and the tools said."""
    if field in NVME_ONLY_FIELDS and not nvme:
        return f"NVMe only ({label} is not NVMe)"
    read = [t for t, s in ident["tools"].items() if s.get("available")]
    if read:
        return f"not reported by sysfs nor {', '.join(read)}"
    failed = list(dict.fromkeys(s["reason"] for s in ident["tools"].values() if not s.get("available")))
    return "; ".join(["not in sysfs", *failed])


def identity_section(ident: dict, root: Path = SYSTEM_ROOT) -> dict:
    """The identity section of an :func:`identity` record (its ``pcie`` left out: see pcie_section)."""
    disk = ident["device"]
    nvme, label = is_nvme(disk), disk_label(disk, root)
    fields: dict[str, Any] = {}
    for f in IDENTITY_FIELDS + IDENTITY_EXTRA_FIELDS:
        value = ident.get(f)
        if value is not None:
            fields[f] = value
        elif f in IDENTITY_FIELDS:
            fields[f] = not_available(_identity_reason(f, ident, label, nvme))
    out = {"available": any(not isinstance(v, dict) for v in fields.values()), "device": disk,
           "sources": list(ident.get("sources") or []), "tools": ident.get("tools") or {},
           "notes": list(ident.get("notes") or [])}
    if not out["available"]:
        out.update(not_available(ident.get("reason") or f"nothing readable for {label}"))
    out["fields"] = fields
    return out


def pcie_section(link: dict) -> dict:
    """The pcie_link section of a :func:`pcie_link` record (the raw sysfs strings kept under ``sysfs``)."""
    if not link.get("available"):
        return unavailable_section(PCIE_FIELDS, link.get("reason") or "no PCIe link", device=link.get("device"))
    fields = {f: link.get(f) if link.get(f) is not None else not_available("sysfs has no readable value")
              for f in PCIE_FIELDS}
    return {"available": True, "device": link.get("device"), "source": "sysfs", "sysfs": link.get("sysfs") or {},
            "fields": fields}


def health_section(rec: dict) -> dict:
    """The health section of a :func:`health` record (a snapshot): source, collected_at (UTC), notes, fields."""
    if not rec.get("available"):
        return unavailable_section(HEALTH_FIELDS, rec.get("reason") or "no health record",
                                   device=rec.get("device"), collected_at=rec.get("collected_at") or utc_now())
    source = rec.get("source") or "the tool"
    fields = {f: rec[f] if rec.get(f) is not None else not_available(f"{source} reports none for this drive")
              for f in HEALTH_FIELDS}
    return {"available": True, "device": rec.get("device"), "source": rec.get("source"),
            "collected_at": rec.get("collected_at"), "notes": list(rec.get("notes") or []), "fields": fields}


def section_values(section: dict | None) -> dict:
    """A section back as one flat record (fields not available -> None), as :func:`health_delta` reads it."""
    section = section or {}
    out = {k: v for k, v in section.items() if k != "fields"}
    for k, v in (section.get("fields") or {}).items():
        out[k] = None if unavailable(v) else v
    return out


def delta_section(before: dict | None, after: dict | None) -> dict:
    """The health_delta section: after - before of two health sections (:func:`health_delta`), each
    missing field with its reason (not in a snapshot, or a counter that went down)."""
    d = health_delta(section_values(before), section_values(after))
    if not d.get("available"):
        return unavailable_section(DELTA_FIELDS, d["reason"])
    fields: dict[str, Any] = {}
    for f in DELTA_FIELDS:
        went_down = next((n for n in d["notes"] if n.startswith(f"{f}: went down")), None)
        if d.get(f) is not None:
            fields[f] = d[f]
        else:
            fields[f] = not_available(went_down.split(": ", 1)[1] if went_down else "not in the before or after snapshot")
    keep = ("device", "source", "before_at", "after_at", "temperature_before_C", "temperature_after_C", "notes")
    return {"available": True, **{k: d.get(k) for k in keep}, "fields": fields}


def health_snapshot(where: dict, root: Path = SYSTEM_ROOT) -> dict:
    """The health section of the drive :func:`locate` found (one nvme or smartctl run, time-boxed).
    Never raises: it runs around every storage sweep, which a drive record must not stop."""
    if not where.get("disk"):
        return unavailable_section(HEALTH_FIELDS, where.get("reason") or "no drive", collected_at=utc_now())
    try:
        return health_section(health(where["disk"], root))
    except Exception as err:  # noqa: BLE001 - see the docstring
        return unavailable_section(HEALTH_FIELDS, f"reading health failed ({type(err).__name__}: {err})",
                                   collected_at=utc_now())


def record_of(where: dict, root: Path = SYSTEM_ROOT, *, with_health: bool = True) -> dict:
    """The drive record of a :func:`locate` result: its keys plus collected_at (UTC), identity,
    pcie_link and (``with_health``) health sections. Never raises for a missing tool or permission."""
    out = {**where, "collected_at": utc_now()}
    disk = where.get("disk")
    if not disk:
        reason = where.get("reason") or "no drive"
        out.update(identity=unavailable_section(IDENTITY_FIELDS, reason),
                   pcie_link=unavailable_section(PCIE_FIELDS, reason))
        if with_health:
            out["health"] = unavailable_section(HEALTH_FIELDS, reason, collected_at=out["collected_at"])
        return out
    ident = identity(disk, root)
    out["identity"] = identity_section(ident, root)
    out["pcie_link"] = pcie_section(ident.get("pcie") or pcie_link(disk, root))
    if with_health:
        out["health"] = health_snapshot(where, root)
    return out


def drive_record(path: Path | str, raw: bool = False, root: Path = SYSTEM_ROOT) -> dict:
    """The drive under a test-file folder (or, with ``raw``, the raw block device ``path``), now.

    Keys: path, raw, block_device, disks, disk (None when the target is not on exactly one local disk),
    disk_label, reason (why disk is None), collected_at (UTC), and the sections identity (model,
    firmware, capacity_bytes, block sizes, write cache, NVMe LBA format...), pcie_link (current and
    maximum link speed in GT/s per lane and width in lanes) and health (temperature_C,
    percentage_used_pct, data_units_written, data_written_bytes, media_errors...). Each section's
    ``fields`` holds every field as a value or as ``not_available(reason)``. Never raises for a missing
    tool, permission or device: those are reasons."""
    return record_of(locate(path, raw, root), root)


def run_record(where: dict, before: dict | None, after: dict | None, root: Path = SYSTEM_ROOT) -> dict:
    """The drive section a storage run stores in sysinfo.json: :func:`record_of` without a live health
    reading, plus health_before and health_after (the snapshots taken right before and after the
    sweep) and health_delta (after - before). Never raises (a failure is the sections' reason)."""
    try:
        out = record_of(where, root, with_health=False)
    except Exception as err:  # noqa: BLE001 - the sweep is done; its drive record must not lose it
        reason = f"reading the drive failed ({type(err).__name__}: {err})"
        out = {**where, "collected_at": utc_now(), "identity": unavailable_section(IDENTITY_FIELDS, reason),
               "pcie_link": unavailable_section(PCIE_FIELDS, reason)}
    out.update(health_before=before, health_after=after, health_delta=delta_section(before, after))
    return out


def _value(section: dict | None, field: str) -> Any:
    v = ((section or {}).get("fields") or {}).get(field)
    return None if isinstance(v, dict) else v


def same_drive(old: dict | None, new: dict | None) -> bool:
    """True when two drive records describe the same drive: the same disk name, and the same model and
    serial number wherever both records know them."""
    if not old or not new or not old.get("disk") or old.get("disk") != new.get("disk"):
        return False
    for field in ("model", "serial_number_private"):
        a, b = _value(old.get("identity"), field), _value(new.get("identity"), field)
        if a is not None and b is not None and a != b:
            return False
    return True


def merge_runs(old: dict | None, new: dict) -> dict:
    """The drive section after another storage run: ``new``, with the earliest health_before kept from
    ``old`` while it is the same drive (:func:`same_drive`) and that snapshot was read; health_delta
    recomputed from it to the latest health_after."""
    out = dict(new)
    earlier = (old or {}).get("health_before")
    if same_drive(old, new) and isinstance(earlier, dict) and earlier.get("available"):
        out["health_before"] = earlier
        out["health_delta"] = delta_section(earlier, new.get("health_after"))
    return out
