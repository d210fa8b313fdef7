"""Devices: the name of the data folder a measurement goes to, and the identity of what was measured.

A device is what one measured table describes (DESIGN.md "Devices"); its name is the folder under
``<data>/raw/`` and ``<data>/processed/``:

- ``--host NAME`` / ``host=`` when given: that name, whatever is measured;
- memory experiments (family KIND ``mlc``): the host name (:func:`memstor.measure.sysinfo.host_name`);
- storage experiments whose test file is in ``<data>/scratch`` or in a ``--target`` directory on the same
  filesystem (same ``st_dev``): the host name;
- a ``--target`` directory on another filesystem: ``<host>-<label>``, the label being the kernel name of
  the filesystem's block device (``nvme0n1p2``, ``sdb1``, ``md127``) or its device-mapper name
  (``vg0-data``); a filesystem without a local block device (tmpfs, NFS, overlay, ZFS) is
  ``<fstype>-<6 hex digits of SHA-256 of its UUID, else of its mount point>`` (``tmpfs-3f2a9c``);
- a raw block device (``device`` + ``confirm_device``): ``<host>-<its kernel name>`` (``host-nvme1n1``).

Kernel names can move between boots (``nvme0n1`` and ``nvme1n1`` swap): when ``<host>-<label>`` already
holds data recorded for another filesystem UUID (or disk WWID/serial), the name gets 8 characters of
the new id (``host-nvme0n1p2-5c1e7a2d``: a UUID's first hex digits), so two drives never share a folder.

The identity (filesystem type, mount point, source device, kernel and dm name, UUID where known, the
``st_dev`` as ``MAJ:MIN``) is recorded in every sweep's manifest and point meta and in
``processed/<device>/sysinfo.json`` (key ``device``). Everything is read from ``/proc/self/mountinfo``,
sysfs and ``/dev/disk/by-uuid`` under a ``root`` (``/``, or a recorded tree in the tests), plus
``blkid`` (time-boxed) on the running system when no by-uuid link names the device. Nothing here raises:
what cannot be found is None.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memstor.measure.sysfs import (
    SYSTEM_ROOT,
    block_dir,
    in_root,
    source_number,
    sys_block,
    unescape_mountinfo,
)
from memstor.measure.tools import run_tool

#: Seconds ``blkid`` may take before it is abandoned.
BLKID_TIMEOUT_S = 3.0
#: Hex digits of the hash in a ``<fstype>-<hash>`` label, and of the id appended to disambiguate.
HASH_DIGITS = 6
ID_DIGITS = 8


@dataclass(frozen=True)
class Mount:
    """One line of ``/proc/self/mountinfo``: st_dev (device number of files on it), mount point,
    filesystem type, source (``/dev/nvme0n1p2``, ``tmpfs``, ``server:/export``)."""

    st_dev: int
    mountpoint: str
    fstype: str
    source: str


def _dev_text(number: int | None) -> str | None:
    """A device number as ``MAJ:MIN`` (None stays None)."""
    return None if number is None else f"{os.major(number)}:{os.minor(number)}"


def safe_label(text: str) -> str:
    """``text`` reduced to a file-safe label: letters, digits, ``.``, ``_``, ``-`` (others become ``-``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", str(text)).strip("-._")


def parse_mountinfo(text: str) -> list[Mount]:
    """The mounts of a ``/proc/self/mountinfo`` text, in order (malformed lines skipped)."""
    out = []
    for line in text.splitlines():
        f = line.split()
        if len(f) < 7 or ":" not in f[2] or "-" not in f[6:]:
            continue
        sep = f.index("-", 6)
        if len(f) < sep + 3:
            continue
        with contextlib.suppress(ValueError):
            major, minor = f[2].split(":", 1)
            out.append(Mount(os.makedev(int(major), int(minor)), unescape_mountinfo(f[4]), f[sep + 1],
                             unescape_mountinfo(f[sep + 2])))
    return out


def _under(path: str, mountpoint: str) -> bool:
    """True when ``path`` is ``mountpoint`` or inside it (whole path components)."""
    return path == mountpoint or path.startswith(mountpoint.rstrip("/") + "/")


def mount_of(real_path: str, st_dev: int | None, mounts: list[Mount]) -> Mount | None:
    """The mount holding ``real_path`` (an absolute path without symlinks) whose files have ``st_dev``.

    The deepest mount point over the path with that device number wins (the last one of equal depth:
    mounted later, on top); without one (btrfs subvolumes nested in a mount show other numbers), the
    deepest mount point over the path.
    """
    best: Mount | None = None
    fallback: Mount | None = None
    for m in mounts:
        if not _under(real_path, m.mountpoint):
            continue
        if fallback is None or len(m.mountpoint) >= len(fallback.mountpoint):
            fallback = m
        if m.st_dev == st_dev and (best is None or len(m.mountpoint) >= len(best.mountpoint)):
            best = m
    return best or fallback


def block_names(rdev: int, root: Path = SYSTEM_ROOT) -> tuple[str | None, str | None]:
    """(kernel name, device-mapper name) of a block device number from sysfs under root, e.g.
    ``("nvme0n1p2", None)`` or ``("dm-0", "vg0-data")``; (None, None) when sysfs has no such device.

    The kernel name is ``DEVNAME`` of ``/sys/dev/block/MAJ:MIN/uevent``, else that folder's name.
    """
    d = sys_block(rdev, root)
    if d is None:
        return None, None
    kname = d.name
    with contextlib.suppress(OSError):
        m = re.search(r"^DEVNAME=(\S+)$", (d / "uevent").read_text(), re.MULTILINE)
        if m:
            kname = Path(m.group(1)).name
    dm = None
    for folder in (d, in_root(root, f"/sys/block/{kname}"), in_root(root, f"/sys/class/block/{kname}")):
        with contextlib.suppress(OSError):
            dm = (folder / "dm" / "name").read_text().strip() or None
        if dm:
            break
    return kname, dm


def _by_uuid(kname: str, root: Path) -> str | None:
    """The UUID whose ``/dev/disk/by-uuid`` link (under root) points to ``/dev/<kname>``, or None."""
    folder = in_root(root, "/dev/disk/by-uuid")
    with contextlib.suppress(OSError):
        for link in sorted(folder.iterdir()):
            with contextlib.suppress(OSError):
                if Path(os.readlink(link)).name == kname:
                    return link.name
    return None


def _blkid_uuid(node: str) -> str | None:
    """The filesystem UUID ``blkid`` reports for a device node (running system only), or None."""
    with contextlib.suppress(RuntimeError, OSError):
        text = run_tool(["blkid", "-s", "UUID", "-o", "value", node], timeout_s=BLKID_TIMEOUT_S)
        first = text.strip().splitlines()[0].strip() if text.strip() else ""
        return first if re.fullmatch(r"[0-9A-Za-z-]{4,64}", first) else None
    return None


def filesystem_uuid(kname: str | None, root: Path = SYSTEM_ROOT) -> str | None:
    """The UUID of the filesystem on block device ``kname``: its by-uuid link, else blkid (root ``/``)."""
    if not kname:
        return None
    uuid = _by_uuid(kname, root)
    if uuid is None and os.path.realpath(root) == "/" and os.path.exists(f"/dev/{kname}"):
        uuid = _blkid_uuid(f"/dev/{kname}")
    return uuid


def filesystem_identity(path: Path | str, root: Path = SYSTEM_ROOT, st_dev: int | None = None) -> dict:
    """What the filesystem holding ``path`` is (never raises; unknown fields None).

    path: a directory (the nearest existing parent is looked at when it does not exist); root: where
    ``/proc`` and ``/sys`` are read (``/``, or a recorded tree, whose paths are then taken as given);
    st_dev: the device number of files on it (default: ``os.stat`` of the path). Keys: kind
    (``filesystem``), path, real_path, st_dev (``MAJ:MIN``), fstype, mountpoint, source, kernel_name,
    dm_name, uuid, label (see :func:`label_of`).
    """
    system = os.path.realpath(root) == "/"
    probe = Path(path).expanduser()
    if system:
        shown = os.path.realpath(probe)
        while not probe.exists() and probe != probe.parent:
            probe = probe.parent
        real = os.path.realpath(probe)
    else:
        shown = real = os.path.normpath(str(probe))
    if st_dev is None:
        with contextlib.suppress(OSError):
            st_dev = os.stat(real).st_dev
    mounts: list[Mount] = []
    with contextlib.suppress(OSError):
        mounts = parse_mountinfo(in_root(root, "/proc/self/mountinfo").read_text())
    m = mount_of(real, st_dev, mounts)
    info: dict[str, Any] = {"kind": "filesystem", "path": str(path), "real_path": shown, "st_dev": _dev_text(st_dev),
                            "fstype": m.fstype if m else None, "mountpoint": m.mountpoint if m else None,
                            "source": m.source if m else None, "kernel_name": None, "dm_name": None, "uuid": None}
    rdev = st_dev if st_dev is not None and sys_block(st_dev, root) is not None else None
    if rdev is None and m is not None:  # btrfs, for one: an anonymous 0:NN; the mount source names the device
        rdev = source_number(m.source, root)
    if rdev is not None:
        info["kernel_name"], info["dm_name"] = block_names(rdev, root)
    info["uuid"] = filesystem_uuid(info["kernel_name"], root)
    info["label"] = label_of(info)
    return info


def _disk_id(kname: str, root: Path) -> tuple[str | None, str | None]:
    """(WWID, serial) of a block device from sysfs under root (a partition: its disk's), or Nones."""
    d = block_dir(kname, root)
    if d is None:
        return None, None
    if (d / "partition").exists():
        d = d.parent
    out = []
    for rels in (("wwid", "device/wwid"), ("serial", "device/serial")):
        val = None
        for rel in rels:
            with contextlib.suppress(OSError):
                val = (d / rel).read_text().strip() or None
            if val:
                break
        out.append(val)
    return out[0], out[1]


def raw_device_identity(device: str, root: Path = SYSTEM_ROOT, rdev: int | None = None) -> dict:
    """What a raw block device is (never raises; unknown fields None).

    device: its path as given (``/dev/nvme1n1``); rdev: its device number (default: ``os.stat`` of the
    path, when it is a block device). Keys: kind (``raw-device``), path, real_path, st_rdev
    (``MAJ:MIN``), kernel_name, dm_name, wwid, serial, label.
    """
    if rdev is None:
        with contextlib.suppress(OSError):
            st = os.stat(device)
            rdev = st.st_rdev if stat.S_ISBLK(st.st_mode) else None
    kname, dm = block_names(rdev, root) if rdev is not None else (None, None)
    real = os.path.realpath(device) if os.path.realpath(root) == "/" else str(device)
    info: dict[str, Any] = {"kind": "raw-device", "path": str(device), "real_path": real,
                            "st_rdev": _dev_text(rdev), "kernel_name": kname or Path(real).name, "dm_name": dm}
    info["wwid"], info["serial"] = _disk_id(kname, root) if kname else (None, None)
    info["label"] = label_of(info)
    return info


def stable_id(identity: dict | None) -> str | None:
    """The id that names the same medium across boots: filesystem UUID, else disk WWID, else serial."""
    if not identity:
        return None
    for key in ("uuid", "wwid", "serial"):
        if identity.get(key):
            return str(identity[key])
    return None


def medium_id(test_file: Path | str, raw: bool) -> str:
    """What a point measures, as a stable text: the filesystem (or raw device) holding ``test_file`` —
    its UUID / WWID / serial when known, else its label (``<fstype>-<hash of the mount point>``). A point
    measured on another medium is another measurement, whatever its folder is named."""
    identity = raw_device_identity(str(test_file)) if raw else filesystem_identity(Path(test_file).parent)
    return stable_id(identity) or label_of(identity)


def label_of(identity: dict) -> str:
    """The file-safe label of a storage target (pure).

    The device-mapper name, else the kernel name of its block device; a filesystem without one:
    ``<fstype>-<HASH_DIGITS hex digits of SHA-256 of its UUID, else of its mount point>``.
    """
    for key in ("dm_name", "kernel_name"):
        if identity.get(key) and safe_label(identity[key]):
            return safe_label(identity[key])
    basis = identity.get("uuid") or identity.get("mountpoint") or identity.get("real_path") or identity.get("path")
    digest = hashlib.sha256(str(basis).encode("utf-8", "replace")).hexdigest()[:HASH_DIGITS]
    return f"{safe_label(identity.get('fstype') or 'fs') or 'fs'}-{digest}"


def device_name(host: str, identity: dict | None, scratch_st_dev: str | None) -> str:
    """The device (data folder) name of a measurement on this host (pure).

    identity: None for a memory experiment, else :func:`filesystem_identity` of where the test file goes
    or :func:`raw_device_identity`; scratch_st_dev: ``MAJ:MIN`` of the filesystem of ``<data>/scratch``.
    The host name for memory and for the scratch filesystem, ``<host>-<label>`` for anything else.
    """
    if identity is None:
        return host
    if identity.get("kind") == "filesystem" and identity.get("st_dev") and identity.get("st_dev") == scratch_st_dev:
        return host
    return f"{host}-{identity.get('label') or label_of(identity)}"


def recorded_ids(data_root: Path, name: str) -> set[str]:
    """The stable ids (UUID, WWID, serial) recorded for device ``name`` under data_root: its
    ``processed/<name>/sysinfo.json`` and ``raw/<name>/*/manifest.json`` (key ``device``)."""
    files = [Path(data_root) / "processed" / name / "sysinfo.json"]
    with contextlib.suppress(OSError):
        files += sorted((Path(data_root) / "raw" / name).glob("*/manifest.json"))
    out = set()
    for f in files:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            rec = json.loads(f.read_text(encoding="utf-8")).get("device")
            sid = stable_id(rec if isinstance(rec, dict) else None)
            if sid:
                out.add(sid)
    return out


def disambiguate(data_root: Path, name: str, identity: dict | None) -> str:
    """``name``, or ``<name>-<first ID_DIGITS of its id>`` when the folder already holds data recorded for
    another medium (another filesystem UUID / disk WWID or serial) under the same label."""
    sid = stable_id(identity)
    if not sid:
        return name
    known = recorded_ids(data_root, name)
    if not known or sid in known:
        return name
    return f"{name}-{short_id(sid)}"


def short_id(sid: str) -> str:
    """ID_DIGITS characters naming an id: the first hex digits of a UUID (``5c1e7a2d``), else of the id's
    SHA-256 (WWIDs share prefixes such as ``eui.`` or ``naa.``)."""
    if re.fullmatch(r"[0-9A-Fa-f-]+", sid) and len(sid.replace("-", "")) >= ID_DIGITS:
        return sid.replace("-", "")[:ID_DIGITS].lower()
    return hashlib.sha256(sid.encode("utf-8", "replace")).hexdigest()[:ID_DIGITS]


def _scratch_st_dev(data_root: Path) -> str | None:
    """``MAJ:MIN`` of the filesystem ``<data>/scratch`` is (or will be) on: its nearest existing parent."""
    probe = Path(data_root) / "scratch"
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    with contextlib.suppress(OSError):
        return _dev_text(os.stat(probe).st_dev)
    return None


def resolve(kind: str, params: Any, data_root: Path, target_dir: Path | None, host: str | None,
            default_host: str) -> tuple[str, dict]:
    """(device name, its record) for one run of an experiment family.

    kind: the family's KIND (``fio`` | ``mlc``); params: its profile section (``device`` and
    ``confirm_device`` name a raw device); target_dir: ``--target`` or None (the test file goes to
    ``<data>/scratch``); host: ``--host`` (None or ``""`` = not given); default_host: this machine's
    host name. The record (JSON-able) is the identity of what is measured (kind ``memory`` for a memory
    experiment) plus ``name``, ``named_by`` (``--host`` | ``host`` | ``target filesystem`` | ``raw
    device``) and ``machine`` (the host name).
    """
    identity: dict | None = None
    if kind == "fio":
        p = params if isinstance(params, dict) else {}
        dev, confirm = str(p.get("device") or ""), str(p.get("confirm_device") or "")
        if dev and confirm and target_dir is None:
            identity = raw_device_identity(dev)
        else:
            identity = filesystem_identity(target_dir if target_dir is not None else Path(data_root) / "scratch")
    scratch = _scratch_st_dev(data_root) if identity is not None else None
    if host:
        name, named_by = host, "--host"
    else:
        name = device_name(default_host, identity, scratch)
        if name == default_host:
            named_by = "host"
        else:
            named_by = "raw device" if identity and identity["kind"] == "raw-device" else "target filesystem"
            name = disambiguate(data_root, name, identity)
    record: dict[str, Any] = {"name": name, "named_by": named_by, "machine": default_host}
    record.update(identity or {"kind": "memory"})
    if identity and identity["kind"] == "filesystem":
        record["same_filesystem_as_scratch"] = identity.get("st_dev") is not None and identity.get("st_dev") == scratch
    return name, record
