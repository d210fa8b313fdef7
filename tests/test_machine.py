"""memstor.measure.machine (sysinfo's ``machine`` block) on /proc and /sys trees built in tmp_path (a VM with a
virtio disk, WSL2 with a drvfs target, WSL1, a laptop on battery, bare metal with NVMe), and on this machine."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from memstor.measure import machine
from memstor.measure.machine import (
    WSL_DRVFS,
    disk_kind,
    fs_layer,
    machine_record,
    power,
    storage_path,
    virtual_disk,
    virtualization,
    wsl,
)
from memstor.measure.sysinfo import target_info, unknown_rotation

FLAGS = "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2"


def write(root: Path, files: dict[str, str]) -> Path:
    """Files (absolute paths read under root) with their text; a value starting with '-> ' is a symlink."""
    for rel, text in files.items():
        path = root / rel.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        if text.startswith("-> "):
            path.symlink_to(text[3:])
        else:
            path.write_text(text + "\n")
    return root


def virtio_disk(root: Path, name: str = "vda", virtio: str = "virtio2", rotational: str = "1") -> None:
    """A virtio-blk disk laid out as sysfs does (relative symlinks to the device and its bus)."""
    dev = f"sys/devices/pci0000:00/0000:00:04.0/{virtio}"
    write(root, {f"/{dev}/block/{name}/queue/rotational": rotational, f"/{dev}/block/{name}/size": "41943040",
                 f"/{dev}/vendor": "0x1af4", f"/{dev}/device": "0x0002",
                 f"/{dev}/driver": "-> ../../../../bus/virtio/drivers/virtio_blk",
                 f"/{dev}/subsystem": "-> ../../../../bus/virtio",
                 f"/{dev}/block/{name}/device": f"-> ../../../{virtio}",
                 f"/sys/class/block/{name}": f"-> ../../devices/pci0000:00/0000:00:04.0/{virtio}/block/{name}"})
    (root / "sys/bus/virtio/drivers/virtio_blk").mkdir(parents=True, exist_ok=True)


def supply(root: Path, name: str, **attrs: str) -> None:
    write(root, {f"/sys/class/power_supply/{name}/{k}": v for k, v in attrs.items()})


# ------------------------------------------------------------------------------------- a VM, virtio
@pytest.fixture
def qemu_vm(tmp_path: Path) -> Path:
    root = write(tmp_path / "vm", {
        "/sys/class/dmi/id/sys_vendor": "QEMU", "/sys/class/dmi/id/product_name": "Standard PC (Q35 + ICH9, 2009)",
        "/sys/class/dmi/id/board_vendor": "", "/proc/cpuinfo": f"processor\t: 0\nflags\t\t: {FLAGS} hypervisor",
        "/proc/sys/kernel/osrelease": "6.8.0-45-generic",
        "/proc/version": "Linux version 6.8.0-45-generic (buildd@lcy02-amd64-075) (gcc 13.2.0) #45-Ubuntu SMP"})
    virtio_disk(root)
    return root


def test_vm_with_virtio_disk(qemu_vm: Path):
    virt = virtualization(qemu_vm, {"vm": "kvm", "container": None})
    assert virt == {"kind": "vm", "name": "QEMU", "hypervisor": "QEMU", "container": None, "detected_by": [
        "DMI: qemu | standard pc (q35 + ich9, 2009) | ", "systemd-detect-virt --vm: kvm", "/proc/cpuinfo: hypervisor flag"]}
    assert virtual_disk("vda", qemu_vm) == "virtio"
    assert virtual_disk("sdz", qemu_vm) is None  # no such disk, no vendor: nothing says virtual
    virtio_disk(qemu_vm, "disk7", "virtio3")  # a name that says nothing: sysfs's driver and bus do
    assert virtual_disk("disk7", qemu_vm) == "virtio"
    assert disk_kind("vda", "virtio") == "virtual disk (virtio)"
    disks = [{"name": "vda", "rotational": True, "virtual_disk": "virtio", "kind": "virtual disk (virtio)"},
             {"name": "nvme0n1", "rotational": False, "virtual_disk": None, "kind": "NVMe drive"}]
    notes: list[str] = []
    unknown_rotation(disks, notes)
    assert disks[0]["rotational"] is None and disks[1]["rotational"] is False
    assert notes == ["target.disks.vda.rotational: virtual disk (virtio), sysfs says 1 about the emulated device, "
                     "not the storage behind it; unknown"]
    target = {"fstype": "ext4", "mountpoint": "/", "source": "/dev/vda1", "disks": disks[:1]}
    notes = []
    rec = machine_record(target, notes, root=qemu_vm, detect_virt=lambda: {"vm": "kvm", "container": None})
    assert rec["storage_path"]["flag"] is True and rec["storage_path"]["virtual_disk"] == "virtio"
    assert rec["storage_path"]["layer"] is None and rec["storage_path"]["meaning"].startswith("a virtual disk (virtio)")
    assert rec["wsl"] is None and rec["power"]["state"] == "unknown" and notes == []
    assert rec["caveats"][0].startswith("a virtual machine (QEMU)") and len(rec["caveats"]) == 2
    json.dumps(rec)


def test_virtual_disks_by_vendor_and_model(tmp_path: Path):
    """SCSI/NVMe disks a hypervisor emulates are told by their vendor and model strings."""
    cases = {("QEMU", "QEMU HARDDISK"): "QEMU", ("VMware,", "VMware Virtual S"): "VMware",
             ("Msft", "Virtual Disk"): "Hyper-V", ("ATA", "VBOX HARDDISK"): "VirtualBox",
             ("Google", "PersistentDisk"): "Google Persistent Disk", (None, "Amazon Elastic Block Store"): "Amazon EBS",
             (None, "QEMU NVMe Ctrl"): "QEMU", ("ATA", "Samsung SSD 870 EVO 1TB"): None,
             (None, "Samsung SSD 980 PRO 2TB"): None, ("NVMe", "Amazon EC2 NVMe Instance Storage"): None}
    for (vendor, model), kind in cases.items():
        assert virtual_disk("sdb", tmp_path, vendor=vendor, model=model) == kind, (vendor, model)
    assert virtual_disk("xvda", tmp_path) == "Xen" and virtual_disk("/dev/vdb", tmp_path) == "virtio"


def test_dmi_vendors_that_also_sell_real_machines(tmp_path: Path):
    for dmi, name in ((("Microsoft Corporation", "Virtual Machine", "Microsoft Corporation"), "Microsoft Hyper-V"),
                      (("Microsoft Corporation", "Surface Laptop 4", "Microsoft Corporation"), None),
                      (("Amazon EC2", "m6i.large", "Amazon EC2"), "Amazon EC2"),
                      (("Amazon EC2", "m5.metal", "Amazon EC2"), None),
                      (("VMware, Inc.", "VMware Virtual Platform", "Intel Corporation"), "VMware"),
                      (("innotek GmbH", "VirtualBox", "Oracle Corporation"), "VirtualBox"),
                      (("Oracle Corporation", "SUN FIRE X4170 M3", "Oracle Corporation"), None),
                      (("Google", "Google Compute Engine", "Google"), "Google Compute Engine"),
                      (("Xen", "HVM domU", ""), "Xen")):
        root = write(tmp_path / "_".join(dmi).replace(" ", "-").replace(",", ""), {
            f"/sys/class/dmi/id/{f}": v for f, v in zip(("sys_vendor", "product_name", "board_vendor"), dmi)})
        virt = virtualization(root, None)
        assert (virt or {}).get("hypervisor") == name, dmi


def test_firecracker_has_no_dmi_but_acpi_says_so(tmp_path: Path):
    """A Firecracker guest: no /sys/class/dmi; ACPI tables whose OEM ID is FIRECK; systemd-detect-virt says kvm."""
    header = b"DSDT" + (1234).to_bytes(4, "little") + b"\x02\x00" + b"FIRECK" + b"FCVMDSDT" + bytes(16)
    root = write(tmp_path / "fc", {"/proc/cpuinfo": f"flags\t: {FLAGS} hypervisor", "/.dockerenv": ""})
    (root / "sys/firmware/acpi/tables").mkdir(parents=True)
    (root / "sys/firmware/acpi/tables/DSDT").write_bytes(header)
    virt = virtualization(root, {"vm": "kvm", "container": "docker"})
    assert virt is not None
    assert (virt["kind"], virt["name"], virt["hypervisor"], virt["container"]) == (
        "vm+container", "Firecracker in docker", "Firecracker", "docker")
    assert virt["detected_by"] == ["ACPI OEM ID FIRECK (/sys/firmware/acpi/tables/DSDT)", "systemd-detect-virt --vm: kvm",
                                   "/proc/cpuinfo: hypervisor flag", "systemd-detect-virt --container: docker"]
    without_tool = virtualization(root, None)  # no systemd-detect-virt: /.dockerenv tells the container
    assert without_tool is not None and without_tool["container"] == "docker"
    assert without_tool["detected_by"][-1] == "/.dockerenv exists"
    only_flag = virtualization(write(tmp_path / "flag", {"/proc/cpuinfo": f"flags\t: {FLAGS} hypervisor"}), None)
    assert only_flag is not None and only_flag["hypervisor"] == "unknown hypervisor"


# ------------------------------------------------------------------------------------------------ WSL
def test_wsl2_with_a_drvfs_target(tmp_path: Path):
    """WSL2 measuring a file under /mnt/d: the Windows file-sharing layer (9P), not the SSD."""
    root = write(tmp_path / "wsl2", {
        "/proc/sys/kernel/osrelease": "5.15.167.4-microsoft-standard-WSL2",
        "/proc/version": "Linux version 5.15.167.4-microsoft-standard-WSL2 (root@f9c826d3017f) (gcc (GCC) 11.2.0) #1 SMP",
        "/proc/cpuinfo": f"flags\t: {FLAGS} hypervisor",
        "/sys/class/block/sdc/device/vendor": "Msft    ", "/sys/class/block/sdc/device/model": "Virtual Disk    "})
    info = wsl(root)
    assert info is not None and info["version"] == "WSL2" and info["kernel"] == "5.15.167.4-microsoft-standard-WSL2"
    target = {"fstype": "9p", "mountpoint": "/mnt/d", "source": "D:\\134", "disks": []}
    rec = machine_record(target, [], root=root, detect_virt=lambda: {"vm": "microsoft", "container": "wsl"})
    path = rec["storage_path"]
    assert path == {"fstype": "9p", "mountpoint": "/mnt/d", "layer": "9p (WSL drvfs)", "virtual_disk": None,
                    "flag": True, "meaning": WSL_DRVFS}
    assert rec["virtualization"]["hypervisor"] == "Microsoft Hyper-V" and rec["virtualization"]["container"] == "wsl"
    assert any("the Windows file-sharing layer (WSL drvfs/9P), not the drive" in c for c in rec["caveats"])
    assert any(c.startswith("WSL2: a Hyper-V VM") for c in rec["caveats"])
    # the Linux side of WSL2: ext4 on sdc, a Hyper-V virtual disk (ext4.vhdx)
    assert virtual_disk("sdc", root) == "Hyper-V"
    home = storage_path({"fstype": "ext4", "mountpoint": "/", "disks": [{"name": "sdc", "virtual_disk": "Hyper-V"}]},
                        "WSL2")
    assert home is not None and home["flag"] and home["virtual_disk"] == "Hyper-V"


def test_wsl1_and_not_wsl(tmp_path: Path):
    root = write(tmp_path / "wsl1", {"/proc/sys/kernel/osrelease": "4.4.0-19041-Microsoft",
                                      "/proc/version": "Linux version 4.4.0-19041-Microsoft (Microsoft@Microsoft.com)"})
    info = wsl(root)
    assert info is not None and info["version"] == "WSL1"
    assert fs_layer("drvfs", "WSL1") == ("drvfs", WSL_DRVFS)
    assert wsl(write(tmp_path / "linux", {"/proc/sys/kernel/osrelease": "6.8.0-45-generic"})) is None
    assert wsl(tmp_path / "nothing") is None


def test_file_system_layers():
    assert fs_layer("ext4") is None and fs_layer("xfs") is None and fs_layer(None) is None
    for fs in ("9p", "virtiofs", "nfs4", "cifs", "vboxsf", "overlay", "tmpfs", "fuse.sshfs", "fuseblk"):
        layer = fs_layer(fs)
        assert layer is not None and layer[1], fs
    assert fs_layer("fuse.sshfs") == ("fuse", "a FUSE file system (sshfs): a user-space daemon is in every I/O's path")
    assert "not a local drive" in fs_layer("9p")[1]  # type: ignore[index]
    assert storage_path(None) is None


# ------------------------------------------------------------------------------------------- power
def test_laptop_on_battery(tmp_path: Path):
    root = tmp_path / "laptop"
    supply(root, "AC", type="Mains", online="0")
    supply(root, "BAT0", type="Battery", status="Discharging", scope="System")
    supply(root, "hidpp_battery_0", type="Battery", status="Discharging", scope="Device")  # a wireless mouse
    pw = power(root)
    assert pw["state"] == "on battery" and pw["battery_present"] is True
    assert pw["detected_by"] == "battery discharging: BAT0"
    assert [s["name"] for s in pw["supplies"]] == ["AC", "BAT0"]
    rec = machine_record(None, [], root=root, detect_virt=lambda: {"vm": None, "container": None})
    assert rec["caveats"] == ["on battery: power saving may lower CPU and drive speeds"]
    assert rec["virtualization"] is None and rec["storage_path"] is None


def test_power_on_ac_and_unknown(tmp_path: Path):
    plugged = tmp_path / "plugged"
    supply(plugged, "ADP1", type="Mains", online="1")
    supply(plugged, "BAT0", type="Battery", status="Charging")
    assert power(plugged)["state"] == "on AC" and power(plugged)["detected_by"] == "adapter online: ADP1"
    usbc = tmp_path / "usbc"
    supply(usbc, "ucsi-source-psy-USBC000:001", type="USB", online="1")
    supply(usbc, "BAT1", type="Battery", status="Not charging")
    assert power(usbc)["state"] == "on AC"
    full = tmp_path / "full"  # no adapter listed, the battery full: plugged in
    supply(full, "BAT0", type="Battery", status="Full")
    assert power(full)["state"] == "on AC"
    assert power(tmp_path / "desktop") == {"state": "unknown", "battery_present": False, "supplies": [],
                                           "detected_by": "no power supply in /sys/class/power_supply (a desktop, "
                                                          "server or VM lists none)"}
    ups = tmp_path / "ups"
    supply(ups, "ups0", type="UPS", status="Unknown")
    assert power(ups)["state"] == "unknown" and power(ups)["detected_by"].startswith("power supplies say neither")


# ------------------------------------------------------------------------------------ bare metal
def test_bare_metal_with_nvme(tmp_path: Path):
    root = write(tmp_path / "metal", {
        "/sys/class/dmi/id/sys_vendor": "LENOVO", "/sys/class/dmi/id/product_name": "20XW00ABUS",
        "/sys/class/dmi/id/board_vendor": "LENOVO", "/proc/cpuinfo": f"flags\t: {FLAGS}",
        "/proc/sys/kernel/osrelease": "6.8.0-45-generic",
        "/sys/class/block/nvme0n1/device/model": "Samsung SSD 980 PRO 2TB",
        "/sys/class/block/nvme0n1/queue/rotational": "0"})
    supply(root, "AC", type="Mains", online="1")
    assert virtual_disk("nvme0n1", root) is None and disk_kind("nvme0n1", None) == "NVMe drive"
    target = {"fstype": "ext4", "mountpoint": "/", "source": "/dev/nvme0n1p2",
              "disks": [{"name": "nvme0n1", "rotational": False, "virtual_disk": None, "kind": "NVMe drive"}]}
    notes: list[str] = []
    unknown_rotation(target["disks"], notes)
    assert target["disks"][0]["rotational"] is False and notes == []
    rec = machine_record(target, notes, root=root, detect_virt=lambda: {"vm": None, "container": None})
    assert rec == {"virtualization": None, "wsl": None, "caveats": [],
                   "storage_path": {"fstype": "ext4", "mountpoint": "/", "layer": None, "virtual_disk": None,
                                    "flag": False, "meaning": "a local file system (ext4)"},
                   "power": {"state": "on AC", "battery_present": False, "detected_by": "adapter online: AC",
                             "supplies": [{"name": "AC", "type": "Mains", "status": None, "online": "1"}]}}
    # without systemd-detect-virt the other sources decide, and the notes say so
    rec = machine_record(target, notes, root=root)
    assert rec["virtualization"] is None
    assert notes == ["machine.virtualization: systemd-detect-virt not available; DMI, ACPI and cpuinfo decide"]


# ------------------------------------------------------------------------------------- this machine
@pytest.fixture(scope="module")
def here(tmp_path_factory) -> dict:
    """This machine's machine block, with the target on the temporary folder's file system."""
    notes: list[str] = []
    target = target_info(tmp_path_factory.mktemp("target"), notes)
    return {"record": machine_record(target, notes), "target": target, "notes": notes}


def _detect_virt(option: str) -> str:
    if shutil.which("systemd-detect-virt") is None:
        pytest.skip("systemd-detect-virt is not installed here")
    res = subprocess.run(["systemd-detect-virt", option], capture_output=True, text=True, timeout=10)
    return res.stdout.strip()


def test_this_machine_hypervisor(here):
    """Checked against systemd-detect-virt run here; on the lab's Firecracker VM also against the ACPI OEM ID."""
    said = _detect_virt("--vm")
    virt = here["record"]["virtualization"]
    if said == "none":
        assert virt is None or virt["hypervisor"] is None or "systemd-detect-virt" not in " ".join(virt["detected_by"])
        return
    assert virt is not None and virt["hypervisor"]
    assert f"systemd-detect-virt --vm: {said}" in virt["detected_by"]
    try:
        oem = Path("/sys/firmware/acpi/tables/DSDT").read_bytes()[10:16].decode("ascii", "replace")
    except OSError as err:
        pytest.skip(f"ACPI tables unreadable here ({err.strerror}: root only), the hypervisor's own name unknown")
    if oem == "FIRECK":
        assert virt["hypervisor"] == "Firecracker" and said == "kvm"
        assert not Path("/sys/class/dmi/id/sys_vendor").exists()  # Firecracker gives no SMBIOS


def test_this_machine_container(here):
    said = _detect_virt("--container")
    virt = here["record"]["virtualization"]
    if said == "none":
        assert virt is None or virt["container"] is None
    else:
        assert virt is not None and virt["container"] == said


def test_this_machine_disk_and_path(here):
    """A virtio disk (vda) under the target says rotational=1 in sysfs; sysinfo reports it unknown."""
    disks = here["target"]["disks"]
    if not disks:
        pytest.skip(f"the temporary folder is on {here['target']['fstype']}, not on a local block device")
    path = here["record"]["storage_path"]
    assert path["fstype"] == here["target"]["fstype"]
    for d in disks:
        rotational = Path(f"/sys/block/{d['name']}/queue/rotational")
        if d["name"].startswith("vd"):
            assert d["virtual_disk"] == "virtio" and d["kind"] == "virtual disk (virtio)"
            assert d["rotational"] is None and path["flag"] and path["virtual_disk"] == "virtio"
            assert any(n.startswith(f"target.disks.{d['name']}.rotational:") for n in here["notes"])
        elif rotational.exists() and d["virtual_disk"] is None:
            assert d["rotational"] == (rotational.read_text().strip() == "1")


def test_this_machine_wsl_and_power(here):
    version = Path("/proc/version").read_text()
    rec = here["record"]
    assert (rec["wsl"] is not None) == ("microsoft" in version.lower() or "wsl" in version.lower())
    folder = Path("/sys/class/power_supply")
    if not folder.is_dir():
        pytest.skip("no /sys/class/power_supply here")
    if not any(folder.iterdir()):
        assert rec["power"]["state"] == "unknown" and rec["power"]["battery_present"] is False
    else:
        assert rec["power"]["state"] in ("on battery", "on AC", "unknown")
    json.dumps(rec)


def test_detect_virt_is_time_boxed_and_optional(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no systemd-detect-virt
    assert machine.run_detect_virt() is None
    fake = tmp_path / "systemd-detect-virt"
    fake.write_text("#!/bin/sh\nif [ \"$1\" = --vm ]; then echo none; exit 1; fi\necho podman\n")
    fake.chmod(0o755)
    assert machine.run_detect_virt() == {"vm": None, "container": "podman"}
    assert os.access(fake, os.X_OK)
