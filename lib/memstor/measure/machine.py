"""The machine as it is: what stands between the measurements and the hardware, for the report's first page.

The ``machine`` block of ``memstor sysinfo`` (``processed/<device>/sysinfo.json``):

- ``virtualization``: the hypervisor and/or container and how each was detected, or None on bare metal.
  Sources: ``systemd-detect-virt --vm`` / ``--container`` when installed (exit status 1 and ``none`` = not
  virtualized), DMI (``/sys/class/dmi/id/sys_vendor``, ``product_name``, ``board_vendor``), the ACPI tables'
  OEM ID (``/sys/firmware/acpi/tables/DSDT``..., bytes 10-15 of the header; root only), the ``hypervisor``
  CPU flag in ``/proc/cpuinfo``, ``/sys/hypervisor/type`` (Xen); without systemd-detect-virt, ``/.dockerenv``
  and ``/run/.containerenv`` for a container. The most specific name wins (DMI or ACPI over
  systemd-detect-virt's generic ``kvm``).
- ``wsl``: WSL1 or WSL2 (``/proc/sys/kernel/osrelease``, ``/proc/version`` naming Microsoft/WSL), or None.
- ``storage_path``: the target's filesystem and what it means: a file-sharing or virtual layer (9P/drvfs,
  virtiofs, FUSE, NFS, SMB, vboxsf, overlay, tmpfs) or a virtual disk is flagged with a one-line meaning.
- ``power``: ``on battery`` / ``on AC`` / ``unknown`` from ``/sys/class/power_supply/*/{type,status,online}``
  (peripheral batteries, ``scope`` Device, are ignored).
- ``caveats``: one line per fact above that changes what the numbers mean (empty: bare metal, on AC, a
  local disk).

What this machine (the lab's CI VM, Nov 2026) says to each source: ``systemd-detect-virt`` (no option)
``docker`` -- it names the container first; ``--vm`` ``kvm``; ``--container`` ``docker``; no
``/sys/class/dmi`` at all (Firecracker gives the guest no SMBIOS); ACPI OEM ID ``FIRECK`` (OEM table IDs
``FCVMDSDT``, ``FCVMFADT``...); the ``hypervisor`` CPU flag set (``AMD EPYC``); no ``/sys/hypervisor/type``;
``/.dockerenv`` present; kernel ``6.18.44-fc-v669`` (no Microsoft); ``/sys/class/power_supply`` empty; its
disk ``vda`` is virtio-blk (driver ``virtio_blk``, ``device/vendor`` ``0x1af4``) with ``queue/rotational``
1. So: a Firecracker microVM (on KVM), inside a docker container, on a virtio disk. (The kernel command line
says ``--firecracker-init`` too, but that is this sandbox's init, not something Firecracker guests share.)

Every reader takes a ``root`` (``/``, or a recorded tree in the tests: memstor.measure.sysfs) and never
raises: what cannot be read is None and, where it matters, a line in ``notes``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memstor.measure.sysfs import KIND_BY_NAME, SYSTEM_ROOT, in_root, kernel_name, read_value
from memstor.measure.tools import ToolError, completed

#: Seconds systemd-detect-virt may take.
DETECT_VIRT_TIMEOUT_S = 5.0

# ------------------------------------------------------------------------------------ virtualization
#: (DMI field regexes over "sys_vendor | product_name | board_vendor", hypervisor name), first match wins.
#: Vendors that also sell real hardware (Microsoft, Oracle, Red Hat, Amazon) count only with a VM product.
DMI_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"\bfirecracker\b", "Firecracker"),
    (r"cloud hypervisor", "Cloud Hypervisor"),
    (r"^amazon ec2 \| (?!\S*\.metal\b)", "Amazon EC2"),            # *.metal instances are bare metal
    (r"google compute engine|^google \|", "Google Compute Engine"),
    (r"\bvmware\b", "VMware"),
    (r"virtualbox|^innotek", "VirtualBox"),
    (r"^microsoft corporation \| virtual machine", "Microsoft Hyper-V"),
    (r"^xen\b|\bhvm domu\b", "Xen"),
    (r"parallels", "Parallels"),
    (r"openstack", "OpenStack (KVM)"),
    (r"\| kvm\b|\brhev hypervisor\b|^red hat \| kvm", "KVM"),
    (r"^qemu\b|\| qemu\b", "QEMU"),
    (r"^bochs\b", "Bochs/QEMU"),
    (r"bhyve", "bhyve"),
    (r"^digitalocean \| droplet", "DigitalOcean (KVM)"),
    (r"^hetzner \| vserver", "Hetzner vServer (KVM)"),
)

#: ACPI table OEM IDs (6 bytes, padded with spaces) that only hypervisors write.
ACPI_OEM_IDS = {"FIRECK": "Firecracker", "CLOUDH": "Cloud Hypervisor", "BOCHS": "QEMU", "VBOX": "VirtualBox",
                "VRTUAL": "Microsoft Hyper-V", "XEN": "Xen", "AMAZON": "Amazon EC2", "GOOGLE": "Google Compute Engine"}

#: systemd-detect-virt's identifiers -> a name (others are shown as given).
DETECT_VIRT_NAMES = {"kvm": "KVM", "qemu": "QEMU", "bochs": "Bochs/QEMU", "xen": "Xen", "uml": "User-mode Linux",
                     "vmware": "VMware", "oracle": "VirtualBox", "microsoft": "Microsoft Hyper-V", "zvm": "z/VM",
                     "parallels": "Parallels", "bhyve": "bhyve", "qnx": "QNX hypervisor", "acrn": "ACRN",
                     "powervm": "PowerVM", "apple": "Apple Virtualization", "sre": "SRE", "amazon": "Amazon EC2",
                     "google": "Google Compute Engine"}

#: Generic hypervisor names a more specific source may refine (Firecracker and EC2 run on KVM).
GENERIC = {"KVM", "QEMU", "Bochs/QEMU", "unknown hypervisor"}


def run_detect_virt(timeout_s: float = DETECT_VIRT_TIMEOUT_S) -> dict[str, str | None] | None:
    """``systemd-detect-virt --vm`` and ``--container`` of the running system: {"vm": "kvm", "container":
    "docker"} (None for ``none``, exit status 1), or None when the tool is not installed or cannot answer."""
    out: dict[str, str | None] = {}
    for key in ("vm", "container"):
        try:
            res = completed(["systemd-detect-virt", f"--{key}"], timeout_s)
        except ToolError:
            return None
        said = res.stdout.strip()
        if res.returncode not in (0, 1) or (res.returncode == 0 and not said):
            return None
        out[key] = None if res.returncode == 1 or said == "none" else said
    return out


def dmi_text(root: Path = SYSTEM_ROOT) -> str | None:
    """``sys_vendor | product_name | board_vendor`` from ``/sys/class/dmi/id`` (lower case), or None
    when the machine has no DMI (Firecracker, most ARM boards)."""
    fields = [read_value(in_root(root, f"/sys/class/dmi/id/{f}")) for f in ("sys_vendor", "product_name", "board_vendor")]
    if not any(fields):
        return None
    return " | ".join(f or "" for f in fields).lower()


def acpi_oem_id(root: Path = SYSTEM_ROOT) -> tuple[str, str] | None:
    """(OEM ID, table path) from the first readable ACPI table header (DSDT, FACP, APIC), or None (no
    ACPI, or not root: the tables are readable by root only)."""
    for table in ("DSDT", "FACP", "APIC"):
        path = in_root(root, f"/sys/firmware/acpi/tables/{table}")
        try:
            with open(path, "rb") as fh:
                header = fh.read(36)
        except OSError:
            continue
        if len(header) >= 16:
            return header[10:16].decode("ascii", "replace").strip(" \x00"), f"/sys/firmware/acpi/tables/{table}"
    return None


def cpu_hypervisor_flag(root: Path = SYSTEM_ROOT) -> bool | None:
    """The ``hypervisor`` flag of ``/proc/cpuinfo`` (x86: CPUID says a hypervisor runs this CPU); None when
    cpuinfo has no flags line (unreadable, or an architecture without it)."""
    text = read_value(in_root(root, "/proc/cpuinfo"))
    if text is None:
        return None
    m = re.search(r"^(?:flags|Features)\s*:(.*)$", text, re.MULTILINE)
    return None if m is None else "hypervisor" in m.group(1).split()


def _hypervisor(root: Path, detect_virt: dict | None) -> tuple[str | None, list[str]]:
    """(hypervisor name or None, the sources that said so, in order of trust)."""
    found: list[tuple[str, str]] = []  # (name, how)
    dmi = dmi_text(root)
    for pattern, name in DMI_PATTERNS if dmi else ():
        if re.search(pattern, dmi or ""):
            found.append((name, f"DMI: {dmi}"))
            break
    oem = acpi_oem_id(root)
    if oem and oem[0].upper() in ACPI_OEM_IDS:
        found.append((ACPI_OEM_IDS[oem[0].upper()], f"ACPI OEM ID {oem[0]} ({oem[1]})"))
    xen = read_value(in_root(root, "/sys/hypervisor/type"))
    if xen:
        found.append(("Xen" if xen == "xen" else xen, f"/sys/hypervisor/type: {xen}"))
    said = (detect_virt or {}).get("vm")
    if said:
        found.append((DETECT_VIRT_NAMES.get(said, said), f"systemd-detect-virt --vm: {said}"))
    if cpu_hypervisor_flag(root):
        found.append(("unknown hypervisor", "/proc/cpuinfo: hypervisor flag"))
    if not found:
        return None, []
    specific = [name for name, _ in found if name not in GENERIC]
    name = specific[0] if specific else found[0][0]
    return name, [how for _, how in found]


def _container(root: Path, detect_virt: dict | None) -> tuple[str | None, str | None]:
    """(container name or None, how it was detected)."""
    if detect_virt is not None:
        said = detect_virt.get("container")
        return (said, f"systemd-detect-virt --container: {said}") if said else (None, None)
    for path, name in (("/.dockerenv", "docker"), ("/run/.containerenv", "podman")):
        if in_root(root, path).exists():
            return name, f"{path} exists"
    return None, None


def virtualization(root: Path = SYSTEM_ROOT, detect_virt: dict | None = None) -> dict | None:
    """The hypervisor and container this system runs in, or None when no source says it is virtualized.

    detect_virt: :func:`run_detect_virt`'s answer (None: not installed, the other sources decide).
    ``{"kind": "vm" | "container" | "vm+container", "name": "Firecracker in docker", "hypervisor":
    "Firecracker", "container": "docker", "detected_by": ["ACPI OEM ID FIRECK (...)", ...]}``."""
    hypervisor, how = _hypervisor(root, detect_virt)
    container, container_how = _container(root, detect_virt)
    if hypervisor is None and container is None:
        return None
    kind = "vm+container" if hypervisor and container else "vm" if hypervisor else "container"
    name = " in ".join(n for n in (hypervisor, container) if n)
    return {"kind": kind, "name": name, "hypervisor": hypervisor, "container": container,
            "detected_by": how + ([container_how] if container_how else [])}


# --------------------------------------------------------------------------------------------- WSL
def wsl(root: Path = SYSTEM_ROOT) -> dict | None:
    """WSL1 or WSL2 from the kernel's own name, or None. WSL2 kernels are ``...-microsoft-standard-WSL2``
    (older ``4.19.x-microsoft-standard``); WSL1 reports Windows' build, ``4.4.0-19041-Microsoft``."""
    for path in ("/proc/sys/kernel/osrelease", "/proc/version"):
        text = read_value(in_root(root, path))
        if not text or not re.search(r"microsoft|wsl", text, re.IGNORECASE):
            continue
        v2 = bool(re.search(r"wsl2|microsoft-standard", text, re.IGNORECASE))
        meaning = ("a Hyper-V VM: Linux files live on a virtual disk (ext4.vhdx), Windows drives under /mnt/ "
                   "are reached through 9P (drvfs)" if v2 else
                   "Linux system calls translated by Windows: no Linux block layer, every file through NTFS")
        return {"version": "WSL2" if v2 else "WSL1", "kernel": text.split()[2] if path == "/proc/version" and
                len(text.split()) > 2 else text, "detected_by": f"{path}: {text[:80]}", "meaning": meaning}
    return None


# ------------------------------------------------------------------------------------- storage path
#: fstype -> (layer, what measuring a file there measures).
FS_LAYERS = {
    "9p": ("9P", "a 9P file share (the host's files through the hypervisor's file-sharing protocol), not a local drive"),
    "v9fs": ("9P", "a 9P file share (the host's files through the hypervisor's file-sharing protocol), not a local drive"),
    "drvfs": ("drvfs", "the Windows file-sharing layer (WSL drvfs/9P), not the drive"),
    "virtiofs": ("virtiofs", "a host folder shared into the VM by virtiofs: the host's file system, not a local drive"),
    "nfs": ("NFS", "a network file system (NFS): the network and the server, not a local drive"),
    "nfs4": ("NFS", "a network file system (NFS): the network and the server, not a local drive"),
    "cifs": ("SMB", "a network share (SMB/CIFS): the network and the server, not a local drive"),
    "smb3": ("SMB", "a network share (SMB/CIFS): the network and the server, not a local drive"),
    "smbfs": ("SMB", "a network share (SMB/CIFS): the network and the server, not a local drive"),
    "vboxsf": ("vboxsf", "a VirtualBox shared folder: the host's files through VirtualBox, not the drive"),
    "vmhgfs": ("vmhgfs", "a VMware shared folder: the host's files through VMware Tools, not the drive"),
    "overlay": ("overlay", "an overlay file system (a container's layers): the first write to a file copies "
                "it up; the disk under it is measured through it"),
    "aufs": ("aufs", "a union file system (a container's layers): the disk under it is measured through it"),
    "tmpfs": ("tmpfs", "memory (tmpfs), not a drive: only the page cache is measured"),
    "ramfs": ("ramfs", "memory (ramfs), not a drive: only the page cache is measured"),
}
WSL_DRVFS = "the Windows file-sharing layer (WSL drvfs/9P), not the drive"


def fs_layer(fstype: str | None, wsl_version: str | None = None) -> tuple[str, str] | None:
    """(layer, meaning) of a file-sharing or virtual file system, or None for a local one (ext4, xfs...).
    Under WSL a 9P, drvfs or virtiofs mount (``/mnt/c``, ``/mnt/d``) is the Windows drive shared in."""
    fs = (fstype or "").lower()
    if wsl_version and fs in ("9p", "v9fs", "drvfs", "virtiofs"):
        return ("drvfs" if fs == "drvfs" else f"{fs} (WSL drvfs)"), WSL_DRVFS
    if fs in FS_LAYERS:
        return FS_LAYERS[fs]
    if fs == "fuseblk" or fs.startswith("fuse"):
        what = fs.split(".", 1)[1] if "." in fs else "a block device's file system (NTFS, exFAT...)"
        if fs.endswith("vmhgfs-fuse"):
            return "fuse", FS_LAYERS["vmhgfs"][1]
        return "fuse", f"a FUSE file system ({what}): a user-space daemon is in every I/O's path"
    return None


def storage_path(target: dict | None, wsl_version: str | None = None) -> dict | None:
    """What the target's path goes through: ``{"fstype", "mountpoint", "layer", "virtual_disk", "flag",
    "meaning"}`` (flag: a file-sharing/virtual layer or a virtual disk is in the way), or None without a target.
    target: sysinfo's ``target`` record (its disks carry ``virtual_disk`` from :func:`virtual_disk`)."""
    if not target:
        return None
    fstype, mountpoint = target.get("fstype"), target.get("mountpoint")
    layer = fs_layer(fstype, wsl_version)
    virtual = sorted({d["virtual_disk"] for d in target.get("disks") or [] if d.get("virtual_disk")})
    if layer:
        meaning = layer[1]
    elif virtual:
        meaning = (f"a virtual disk ({', '.join(virtual)}): the host's storage stack and its caches are measured, "
                   "not a drive you can name")
    else:
        meaning = f"a local file system ({fstype})" if fstype else "unknown (the file system was not found)"
    return {"fstype": fstype, "mountpoint": mountpoint, "layer": layer[0] if layer else None,
            "virtual_disk": ", ".join(virtual) or None, "flag": bool(layer or virtual), "meaning": meaning}


# ------------------------------------------------------------------------------------- virtual disks
#: (regex over "vendor | model" in lower case, kind) of disks a hypervisor emulates.
VIRTUAL_DISK_MODELS = (
    (r"^0x1af4\b", "virtio"),                          # virtio's PCI vendor id (virtio-blk device/vendor)
    (r"^qemu\b|\| qemu\b|\bqemu harddisk\b", "QEMU"),   # virtio-scsi/IDE "QEMU HARDDISK", "QEMU NVMe Ctrl"
    (r"^vmware\b|vmware virtual", "VMware"),
    (r"^msft \| virtual disk", "Hyper-V"),
    (r"\bvbox harddisk\b", "VirtualBox"),
    (r"^google \| persistentdisk|nvme_card-pd", "Google Persistent Disk"),
    (r"amazon elastic block store", "Amazon EBS"),
    (r"^xen\b", "Xen"),
)


def virtual_disk(name: str, root: Path = SYSTEM_ROOT, vendor: str | None = None, model: str | None = None) -> str | None:
    """The kind of virtual disk ``name`` is (``virtio``, ``Xen``, ``VMware``, ``Hyper-V``, ``QEMU``,
    ``VirtualBox``, ``Amazon EBS``...), or None for a real one: by kernel name (vd*, xvd*), sysfs driver and
    subsystem, then vendor/model (sysfs ``device/vendor``, ``device/model``, else the given ones)."""
    disk = kernel_name(name)
    if re.fullmatch(r"vd[a-z]+", disk):
        return "virtio"
    if re.fullmatch(r"xvd[a-z]+", disk):
        return "Xen"
    device = in_root(root, f"/sys/class/block/{disk}/device")
    for link in ("driver", "subsystem"):
        try:
            target = (device / link).resolve(strict=True).name
        except OSError:
            continue
        if target.startswith("virtio"):
            return "virtio"
        if target in ("xen", "vbd", "xen-vbd"):
            return "Xen"
    vendor = read_value(device / "vendor") or vendor or ""
    model = read_value(device / "model") or model or ""
    text = f"{vendor.strip()} | {model.strip()}".lower()
    for pattern, kind in VIRTUAL_DISK_MODELS:
        if re.search(pattern, text):
            return kind
    return None


def disk_kind(name: str, virtual: str | None) -> str | None:
    """``virtual disk (virtio)`` for a virtual disk, else what its kernel name says (``NVMe drive``...)."""
    if virtual:
        return f"virtual disk ({virtual})"
    for pattern, kind in KIND_BY_NAME:
        if re.fullmatch(pattern, kernel_name(name)):
            return kind
    return None


# ------------------------------------------------------------------------------------------- power
#: power_supply types that feed the machine from outside (online = 1: plugged in).
ADAPTER_TYPES = {"Mains", "USB", "USB_C", "USB_PD", "USB_PD_DRP", "USB_DCP", "USB_CDP", "USB_ACA", "Wireless"}


def _supplies(root: Path) -> list[dict]:
    """The system's power supplies (name, type, status, online, scope), peripheral batteries left out."""
    out = []
    folder = in_root(root, "/sys/class/power_supply")
    for entry in sorted(folder.iterdir()) if folder.is_dir() else []:
        s = {k: read_value(entry / k) for k in ("type", "status", "online", "scope")}
        if (s["scope"] or "").lower() == "device":  # a mouse's or a headset's battery
            continue
        out.append({"name": entry.name, **{k: s[k] for k in ("type", "status", "online")}})
    return out


def power(root: Path = SYSTEM_ROOT) -> dict:
    """``{"state": "on battery" | "on AC" | "unknown", "battery_present", "detected_by", "supplies"}``.

    An adapter (Mains, USB-C...) online -> on AC; else a battery discharging, or every adapter offline
    beside a battery -> on battery; a battery charging/full with no adapter listed -> on AC; nothing listed
    (desktops, servers, VMs) -> unknown."""
    supplies = _supplies(root)
    adapters = [s for s in supplies if s["type"] in ADAPTER_TYPES]
    batteries = [s for s in supplies if s["type"] == "Battery"]
    state, how = "unknown", "no power supply in /sys/class/power_supply (a desktop, server or VM lists none)"
    if any(s["online"] == "1" for s in adapters):
        state, how = "on AC", "adapter online: " + ", ".join(s["name"] for s in adapters if s["online"] == "1")
    elif any((s["status"] or "").lower() == "discharging" for s in batteries):
        state, how = "on battery", "battery discharging: " + ", ".join(
            s["name"] for s in batteries if (s["status"] or "").lower() == "discharging")
    elif adapters and batteries and all(s["online"] == "0" for s in adapters):
        state, how = "on battery", "every adapter offline: " + ", ".join(s["name"] for s in adapters)
    elif batteries and all((s["status"] or "").lower() in ("charging", "full", "not charging") for s in batteries):
        state, how = "on AC", "battery " + ", ".join(f"{s['name']} {s['status']}" for s in batteries)
    elif supplies:
        how = "power supplies say neither: " + ", ".join(f"{s['name']} ({s['type']})" for s in supplies)
    return {"state": state, "battery_present": bool(batteries), "detected_by": how, "supplies": supplies}


# ----------------------------------------------------------------------------------------- the block
def caveats(record: dict) -> list[str]:
    """One line per fact of a machine record that changes what the numbers mean."""
    out = []
    virt, wsl_info, path, pw = record.get("virtualization"), record.get("wsl"), record.get("storage_path"), \
        record.get("power")
    if virt and virt.get("hypervisor"):
        out.append(f"a virtual machine ({virt['hypervisor']}): its CPUs, memory and disks are the hypervisor's")
    if virt and virt.get("container"):
        out.append(f"inside a container ({virt['container']})")
    if wsl_info:
        out.append(f"{wsl_info['version']}: {wsl_info['meaning']}")
    if path and path.get("flag"):
        out.append(f"the target ({path.get('fstype')} on {path.get('mountpoint')}): {path['meaning']}")
    if pw and pw.get("state") == "on battery":
        out.append("on battery: power saving may lower CPU and drive speeds")
    return out


def machine_record(target: dict | None, notes: list[str], root: Path = SYSTEM_ROOT,
                   detect_virt: Callable[[], dict | None] | None = None) -> dict:
    """sysinfo's ``machine`` block: virtualization, wsl, storage_path, power and caveats (module docstring).

    target: sysinfo's ``target`` record (None: no storage_path); detect_virt: runs systemd-detect-virt
    (default :func:`run_detect_virt` on the running system, never on a recorded root)."""
    if detect_virt is None:
        detect_virt = run_detect_virt if Path(root) == SYSTEM_ROOT else (lambda: None)
    said = detect_virt()
    if said is None:
        notes.append("machine.virtualization: systemd-detect-virt not available; DMI, ACPI and cpuinfo decide")
    record: dict[str, Any] = {"virtualization": virtualization(root, said), "wsl": wsl(root)}
    record["storage_path"] = storage_path(target, (record["wsl"] or {}).get("version"))
    record["power"] = power(root)
    record["caveats"] = caveats(record)
    return record


def with_target(record: dict, target: dict | None) -> dict:
    """A copy of a ``machine`` block whose storage path (and caveats) describe ``target`` instead: a memory run
    keeps the storage target a storage run stored before (memstor.experiments._run.write_sysinfo)."""
    out = dict(record)
    out["storage_path"] = storage_path(target, (out.get("wsl") or {}).get("version"))
    out["caveats"] = caveats(out)
    return out
