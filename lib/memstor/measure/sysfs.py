"""The ``/proc`` and ``/sys`` readers every measure module shares, under an injectable ``root``.

``root`` is ``/`` (the running system, :data:`SYSTEM_ROOT`) or a recorded tree (``tests/data/sysroot/``,
``tests/data/drive/``) whose paths are read as given, so the device checks, the device naming and the drive
records all run in the tests without root. Block devices are found through ``/sys/dev/block/MAJ:MIN`` and
``/sys/class/block/NAME``; mounts through ``/proc/self/mountinfo``; swap through ``/proc/swaps``. Nothing
here runs a tool (:mod:`memstor.measure.tools` does) and nothing raises for a missing file: the answer is
None (or empty).
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from pathlib import Path

#: The root whose ``/proc`` and ``/sys`` are read: the running system.
SYSTEM_ROOT = Path("/")


def in_root(root: Path, path: str) -> Path:
    """The absolute ``path`` (``/proc/swaps``) read under ``root``: the path itself when root is ``/``."""
    return Path(root) / path.lstrip("/")


def sys_block(rdev: int, root: Path = SYSTEM_ROOT) -> Path | None:
    """The sysfs folder of a block device number (``/sys/dev/block/MAJ:MIN`` resolved), or None."""
    p = in_root(root, f"/sys/dev/block/{os.major(rdev)}:{os.minor(rdev)}")
    try:
        return p.resolve(strict=True)
    except OSError:
        return None


def read_dev_number(path: Path) -> int | None:
    """The device number in a sysfs ``dev`` file (``MAJ:MIN``), or None when missing or malformed."""
    with contextlib.suppress(OSError, ValueError):
        major, minor = path.read_text().strip().split(":")
        return os.makedev(int(major), int(minor))
    return None


def unescape_mountinfo(field: str) -> str:
    """A mountinfo field with the kernel's octal escapes decoded (``\\040`` is a space)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def source_number(source: str, root: Path = SYSTEM_ROOT) -> int | None:
    """The block device number of a mount source (``/dev/nvme0n1p2``, ``/dev/mapper/vg0-root``), or None.

    Only sources under ``/dev/`` are looked at (``tmpfs``, ``proc``, ``server:/export`` are not block
    devices). When root is the running system (``/``) the node is stat'ed, following symlinks such as
    ``/dev/mapper/X`` or ``/dev/disk/by-uuid/...``. Otherwise (a recorded tree has no device nodes), or
    when that gives no block device (``/dev/root``...), the kernel name's ``/sys/class/block/NAME/dev``
    under root gives the number: ``/dev/NAME`` is NAME, and ``/dev/mapper/X`` is the ``dm-N`` whose
    ``/sys/block/dm-N/dm/name`` (or ``/sys/class/block/dm-N/dm/name``) reads X. Anything else: None.
    """
    if not source.startswith("/dev/"):
        return None
    if os.path.realpath(root) == "/":
        with contextlib.suppress(OSError):
            st = os.stat(source)
            if stat.S_ISBLK(st.st_mode):
                return st.st_rdev
    parent, name = os.path.split(source)
    if name in ("", ".", ".."):
        return None
    if parent == "/dev":
        return read_dev_number(in_root(root, f"/sys/class/block/{name}/dev"))
    if parent == "/dev/mapper":
        for folder in ("/sys/block", "/sys/class/block"):
            for dm in sorted(in_root(root, folder).glob("dm-*")):
                with contextlib.suppress(OSError):
                    if (dm / "dm" / "name").read_text().strip() == name:
                        return read_dev_number(dm / "dev")
    return None


def mounted_devices(root: Path = SYSTEM_ROOT) -> set[int]:
    """Device numbers of every mounted filesystem, from ``/proc/self/mountinfo`` under root.

    Each line gives two: field 3 (``MAJ:MIN``, st_dev of the mount) and the mount source, the second
    field after the `` - `` separator (``/dev/nvme0n1p2``), resolved by source_number. Both are needed:
    btrfs (and other filesystems with anonymous device numbers, ``0:NN``) report a number that is not
    their block device, so only the source names it. Unresolvable sources are ignored. A multi-device
    btrfs names one of its devices only.
    """
    out: set[int] = set()
    with contextlib.suppress(OSError):
        for line in in_root(root, "/proc/self/mountinfo").read_text().splitlines():
            fields = line.split()
            if len(fields) > 2 and ":" in fields[2]:
                major, minor = fields[2].split(":", 1)
                with contextlib.suppress(ValueError):
                    out.add(os.makedev(int(major), int(minor)))
            sep = fields.index("-", 6) if "-" in fields[6:] else -1
            if sep > 0 and len(fields) > sep + 2:
                number = source_number(unescape_mountinfo(fields[sep + 2]), root)
                if number is not None:
                    out.add(number)
    return out


def swap_number(name: str, root: Path = SYSTEM_ROOT) -> int | None:
    """The device number of a ``/proc/swaps`` entry, or None for a swap file.

    The node is stat'ed under root (``/dev/nvme0n1p3``); where there is none (a recorded tree has no
    device nodes) the kernel name's ``/sys/class/block/NAME/dev`` gives the number.
    """
    try:
        st = os.stat(in_root(root, name))
    except OSError:
        pass
    else:
        return st.st_rdev if stat.S_ISBLK(st.st_mode) else None
    with contextlib.suppress(OSError, ValueError):
        major, minor = in_root(root, f"/sys/class/block/{Path(name).name}/dev").read_text().strip().split(":")
        return os.makedev(int(major), int(minor))
    return None


def swap_devices(root: Path = SYSTEM_ROOT) -> set[int]:
    """Device numbers of block devices used as swap (``/proc/swaps`` under root)."""
    out: set[int] = set()
    with contextlib.suppress(OSError):
        for line in in_root(root, "/proc/swaps").read_text().splitlines()[1:]:
            fields = line.split()
            number = swap_number(fields[0], root) if fields else None
            if number is not None:
                out.add(number)
    return out


#: An NVMe controller, namespace or partition name (``nvme0``, ``nvme0n1``, ``nvme0c1n1``, ``nvme0n1p2``).
NVME_NAME = re.compile(r"^(?P<ctrl>nvme\d+)(?:c\d+)?(?P<ns>n\d+)?(?:p\d+)?$")


def read_value(path: Path) -> str | None:
    """The stripped text of a sysfs file, or None when missing, unreadable or empty."""
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip() or None
    except OSError:
        return None


def kernel_name(block_device: str) -> str:
    """The kernel name of ``/dev/nvme0n1`` / ``nvme0n1`` -> ``nvme0n1``."""
    return Path(str(block_device).strip()).name


def disk_of(block_device: str, root: Path = SYSTEM_ROOT) -> str:
    """The whole disk holding ``block_device`` (a partition -> its disk: ``nvme0n1p2`` -> ``nvme0n1``,
    ``sda1`` -> ``sda``), from sysfs's ``partition`` file under root, else from the name."""
    name = kernel_name(block_device)
    node = in_root(root, f"/sys/class/block/{name}")
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


#: What a block device is, by kernel name (for reasons: "not an NVMe or SMART device (virtio disk vda)").
KIND_BY_NAME = ((r"nvme\d+(?:c\d+)?(?:n\d+)?", "NVMe drive"), (r"(?:sd|hd)[a-z]+", "SCSI/SATA disk"),
                 (r"vd[a-z]+", "virtio disk"), (r"xvd[a-z]+", "Xen virtual disk"), (r"loop\d+", "loop device"),
                 (r"dm-\d+", "device-mapper device"), (r"md\d+|md_d\d+", "md RAID device"),
                 (r"zram\d+", "zram device"), (r"ram\d+", "RAM disk"), (r"nbd\d+", "network block device"),
                 (r"rbd\d+", "Ceph RBD device"), (r"mmcblk\d+", "MMC/SD card"), (r"sr\d+", "optical drive"),
                 (r"pmem\d+(?:s)?", "persistent-memory device"))


#: sysfs ``device/subsystem`` -> what the disk is, for names the table above does not know.
KIND_BY_SUBSYSTEM = {"virtio": "virtio disk", "scsi": "SCSI/SATA disk", "nvme": "NVMe drive", "mmc": "MMC/SD card",
                      "xen": "Xen virtual disk"}


def disk_label(disk: str, root: Path = SYSTEM_ROOT) -> str:
    """The disk named with what it is, for messages: ``virtio disk vda``, ``loop device loop0``; its sysfs
    ``device/subsystem`` decides for other names; the bare name when neither tells."""
    name = kernel_name(disk)
    for pattern, kind in KIND_BY_NAME:
        if re.fullmatch(pattern, name):
            return f"{kind} {name}"
    try:
        subsystem = in_root(root, f"/sys/class/block/{name}/device/subsystem").resolve(strict=True).name
    except OSError:
        return name
    return f"{KIND_BY_SUBSYSTEM[subsystem]} {name}" if subsystem in KIND_BY_SUBSYSTEM else name


def is_nvme(name: str) -> bool:
    """True for an NVMe controller or namespace name (``nvme0``, ``nvme0n1``, ``nvme0n1p2``)."""
    return bool(NVME_NAME.match(kernel_name(name)))


def nvme_controller(disk: str, root: Path = SYSTEM_ROOT) -> tuple[str | None, Path | None]:
    """The NVMe controller serving ``disk`` (name and sysfs folder): ``/sys/class/block/DISK/device``
    is the controller (single path) or the NVMe subsystem (native multipath: its live ``nvmeN``
    controllers are listed there); else ``/sys/class/nvme/nvmeX`` from the name. (None, None) when
    neither is found."""
    dev = in_root(root, f"/sys/class/block/{disk}/device")
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
            live = [p for p in ctrls if (read_value(p / "state") or "live") == "live"]
            for p in live or ctrls:
                return p.name, p.resolve()
    m = NVME_NAME.match(disk)
    if m:
        folder = in_root(root, f"/sys/class/nvme/{m.group('ctrl')}")
        if folder.exists():
            return m.group("ctrl"), folder.resolve()
        return m.group("ctrl"), None
    return None, None


def block_dir(name: str, root: Path = SYSTEM_ROOT) -> Path | None:
    """The sysfs folder of a block device by kernel name (``/sys/class/block/NAME`` resolved), or None."""
    try:
        return in_root(root, f"/sys/class/block/{name}").resolve(strict=True)
    except OSError:
        return None


def member_devices(name: str, root: Path = SYSTEM_ROOT) -> list[str]:
    """The block devices a dm or md device is built on: its ``slaves/``, else (a recorded tree without
    ``slaves/``) every block device whose ``holders/`` names it."""
    folder = block_dir(name, root)
    if folder is None:
        return []
    slaves = folder / "slaves"
    if slaves.is_dir():
        found = sorted(p.name for p in slaves.iterdir())
        if found:
            return found
    try:
        every = sorted(in_root(root, "/sys/class/block").iterdir())
    except OSError:
        return []
    return [p.name for p in every if (p / "holders" / name).exists()]


def underlying_disks(block_device: str, root: Path = SYSTEM_ROOT, _seen: frozenset = frozenset()) -> list[str]:
    """The whole disks under ``block_device``: a partition's disk; for device-mapper (LVM, LUKS) and md
    the disks under its members, recursively; a disk itself. In order, without repeats."""
    name = kernel_name(block_device)
    if name in _seen:
        return []
    members = member_devices(name, root)
    disk = disk_of(name, root)
    if not members and disk != name:
        members = member_devices(disk, root)
    if not members:
        return [disk]
    out: list[str] = []
    for m in members:
        out += underlying_disks(m, root, _seen | {name})
    return list(dict.fromkeys(out))

