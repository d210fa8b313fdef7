"""Devices (DESIGN.md "Devices"): every storage target is its own data folder, named from what it is.

The naming runs unprivileged over recorded /proc and /sys trees (tests/data/sysroot/, see its README)
and over small synthetic trees; the end-to-end tests mount two real tmpfs (root only, else skipped with
the reason) and run real fio: two targets on one host are two devices, and the first one's raw files
are byte-identical after the second run.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import two_allowed_cpus
from memstor import cli
from memstor.experiments import run_experiment
from memstor.measure import device as dev
from reliability_helpers import ROOT, can_mount, snapshot, tmpfs

SYSROOT = Path(__file__).resolve().parent / "data" / "sysroot"
BTRFS = SYSROOT / "nvme-btrfs-luks"
LAPTOP = SYSROOT / "nvme-lvm-md"
HOST = "devbox"
FIO = shutil.which("fio")
LOADLAT = ROOT / "build" / "bin" / "loadlat"
needs_fio = pytest.mark.skipif(FIO is None, reason="fio not installed (apt-get install fio)")
#: The tiniest fio-queue-depth sweep on any filesystem (tmpfs has no O_DIRECT): 2 points of 1 s.
TINY_QD = {"runtime_s": 1, "ramp_s": 0, "file_size": "16m", "ioengine": "psync", "direct": 0,
           "bs": "4k", "rw": ["randread"], "iodepth": [1], "numjobs": 1, "spec_iodepth": 2, "spec_numjobs": 1,
           "repetitions": 1}
TINY_QD_SETS = [a for k, v in TINY_QD.items()
                for a in ("--set", f"{k}={json.dumps(v) if isinstance(v, list) else v}")]


def _hash6(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:6]


def _raw_files(folder: Path) -> dict:
    """snapshot() of the raw outputs and metas under folder (not the sweep's manifest and lock file)."""
    return {k: v for k, v in snapshot(folder).items() if not k.endswith(("manifest.json", ".lock"))}


def _synthetic_root(tmp_path: Path) -> Path:
    """/proc and /sys of a machine with ext4 on sda1 (8:1, by-uuid link) and a whole disk nvme1n1 (259:0,
    wwid), written like the kernel shows them (uevent DEVNAME, relative sysfs symlinks)."""
    root = tmp_path / "root"
    (root / "proc/self").mkdir(parents=True)
    (root / "proc/self/mountinfo").write_text(
        "28 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
        "40 28 8:1 /srv /mnt/bind rw,relatime shared:1 - ext4 /dev/sda1 rw\n")
    sda = root / "sys/devices/pci0000:00/ata1/block/sda"
    (sda / "sda1").mkdir(parents=True)
    (sda / "sda1/partition").write_text("1\n")
    (sda / "sda1/uevent").write_text("MAJOR=8\nMINOR=1\nDEVNAME=sda1\nDEVTYPE=partition\n")
    (sda / "sda1/dev").write_text("8:1\n")
    (sda / "device").mkdir()
    (sda / "device/wwid").write_text("naa.5000c500a1b2c3d4\n")
    nvme = root / "sys/devices/pci0000:00/nvme/nvme1/nvme1n1"
    nvme.mkdir(parents=True)
    (nvme / "uevent").write_text("MAJOR=259\nMINOR=0\nDEVNAME=nvme1n1\nDEVTYPE=disk\n")
    (nvme / "wwid").write_text("eui.0025388b91b2c0e5\n")
    (nvme / "dev").write_text("259:0\n")
    (root / "sys/dev/block").mkdir(parents=True)
    (root / "sys/class/block").mkdir(parents=True)
    for num, target in (("8:1", sda / "sda1"), ("259:0", nvme)):
        os.symlink(os.path.relpath(target, root / "sys/dev/block"), root / "sys/dev/block" / num)
        os.symlink(os.path.relpath(target, root / "sys/class/block"), root / "sys/class/block" / target.name)
    (root / "dev/disk/by-uuid").mkdir(parents=True)
    os.symlink("../../sda1", root / "dev/disk/by-uuid/0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9")
    return root


# ------------------------------------------------------------------------------- naming, unprivileged


@pytest.mark.parametrize("path, st_dev, want", [
    ("/home/u/bench", (0, 32), {"mountpoint": "/home", "fstype": "btrfs", "source": "/dev/nvme0n1p2",
                                "kernel_name": "nvme0n1p2", "label": "nvme0n1p2"}),
    ("/boot/efi/x", (259, 1), {"mountpoint": "/boot/efi", "fstype": "vfat", "kernel_name": "nvme0n1p1",
                               "label": "nvme0n1p1"}),
    ("/data/fio", (0, 45), {"fstype": "btrfs", "kernel_name": "dm-0",
                            "dm_name": "luks-5c1e7a2d-9b44-4c1f-8e0a-2f6d3b7c9e10",
                            "label": "luks-5c1e7a2d-9b44-4c1f-8e0a-2f6d3b7c9e10"}),
    ("/run/media/u/My Backup/t", (0, 51), {"mountpoint": "/run/media/u/My Backup", "kernel_name": "sdb1",
                                           "label": "sdb1"}),
    ("/tmp/fio", (0, 36), {"fstype": "tmpfs", "source": "tmpfs", "kernel_name": None, "uuid": None,
                           "label": f"tmpfs-{_hash6('/tmp')}"}),
], ids=["btrfs-subvolume", "vfat-partition", "btrfs-on-luks", "escaped-space", "tmpfs"])
def test_filesystem_identity_from_recorded_trees(path, st_dev, want):
    """The label is the block device's kernel (or dm) name, found by st_dev or, for btrfs's anonymous
    numbers, by the mount source; without a block device it is <fstype>-<hash of the mount point>."""
    info = dev.filesystem_identity(path, root=BTRFS, st_dev=os.makedev(*st_dev))
    assert info["kind"] == "filesystem" and info["st_dev"] == f"{st_dev[0]}:{st_dev[1]}"
    assert {k: info[k] for k in want} == want
    assert dev.label_of(info) == want["label"]


def test_dm_without_name_and_uuid_from_by_uuid_link(tmp_path):
    info = dev.filesystem_identity("/data/x", root=LAPTOP, st_dev=os.makedev(253, 0))
    assert (info["source"], info["kernel_name"], info["label"]) == ("/dev/mapper/vg0-data", "dm-0", "dm-0")
    root = _synthetic_root(tmp_path)
    info = dev.filesystem_identity("/mnt/bind/fio", root=root, st_dev=os.makedev(8, 1))
    assert info["mountpoint"] == "/mnt/bind" and info["kernel_name"] == "sda1" and info["label"] == "sda1"
    assert info["uuid"] == "0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9"
    assert dev.stable_id(info) == info["uuid"]


def test_device_name_rules():
    """host for memory and for the scratch filesystem; host-<label> for another filesystem or a raw device."""
    fs = {"kind": "filesystem", "st_dev": "8:1", "label": "sda1"}
    assert dev.device_name("h", None, "8:1") == "h"
    assert dev.device_name("h", fs, "8:1") == "h"
    assert dev.device_name("h", fs, "259:2") == "h-sda1"
    assert dev.device_name("h", {"kind": "filesystem", "st_dev": "0:36", "fstype": "tmpfs", "mountpoint": "/mnt/a"},
                           "259:2") == f"h-tmpfs-{_hash6('/mnt/a')}"
    assert dev.device_name("h", {"kind": "raw-device", "kernel_name": "nvme1n1", "label": "nvme1n1"}, "259:0") \
        == "h-nvme1n1"
    two = {dev.label_of({"fstype": "tmpfs", "mountpoint": m}) for m in ("/mnt/a", "/mnt/b")}
    assert len(two) == 2 and all(dev.safe_label(x) == x for x in two)
    assert dev.safe_label("My Disk/01!") == "My-Disk-01"


def test_raw_device_identity(tmp_path):
    root = _synthetic_root(tmp_path)
    info = dev.raw_device_identity("/dev/nvme1n1", root=root, rdev=os.makedev(259, 0))
    assert (info["kind"], info["kernel_name"], info["label"], info["st_rdev"]) == ("raw-device", "nvme1n1",
                                                                                   "nvme1n1", "259:0")
    assert info["wwid"] == "eui.0025388b91b2c0e5" and dev.stable_id(info) == info["wwid"]
    assert dev.device_name("box", info, "8:1") == "box-nvme1n1"
    part = dev.raw_device_identity("/dev/sda1", root=root, rdev=os.makedev(8, 1))
    assert part["label"] == "sda1" and part["wwid"] == "naa.5000c500a1b2c3d4"  # the partition's disk


def test_another_medium_under_a_known_label_gets_its_own_name(tmp_path):
    """Kernel names move between boots: a label already recorded for another UUID/WWID is disambiguated."""
    data = tmp_path / "data"
    (data / "processed" / "h-sda1").mkdir(parents=True)
    (data / "processed" / "h-sda1" / "sysinfo.json").write_text(json.dumps({"device": {"uuid": "aaaa-1111"}}))
    (data / "raw" / "h-nvme1n1" / "fio-queue-depth").mkdir(parents=True)
    (data / "raw" / "h-nvme1n1" / "fio-queue-depth" / "manifest.json").write_text(
        json.dumps({"device": {"wwid": "eui.1111"}}))
    uuid = "0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9"
    assert dev.disambiguate(data, "h-sda1", {"uuid": uuid}) == "h-sda1-0a1b2c3d"
    assert dev.disambiguate(data, "h-sda1", {"uuid": "aaaa-1111"}) == "h-sda1"
    assert dev.disambiguate(data, "h-new", {"uuid": uuid}) == "h-new"  # nothing recorded there yet
    assert dev.disambiguate(data, "h-sda1", {"uuid": None}) == "h-sda1"  # nothing to compare
    other = dev.disambiguate(data, "h-nvme1n1", {"wwid": "eui.2222"})
    assert other == "h-nvme1n1-" + hashlib.sha256(b"eui.2222").hexdigest()[:8]


def test_resolve_scratch_same_filesystem_memory_and_explicit(tmp_path):
    """No target, a target on the scratch's filesystem, a memory family: the host; --host always wins."""
    data = tmp_path / "data"
    same = tmp_path / "same-fs"
    same.mkdir()
    name, rec = dev.resolve("fio", {}, data, None, None, "box")
    assert name == "box" and rec["named_by"] == "host" and rec["kind"] == "filesystem"
    assert rec["same_filesystem_as_scratch"] is True and rec["st_dev"] and rec["machine"] == "box"
    assert not data.exists()  # naming creates nothing
    name, rec = dev.resolve("fio", {}, data, same, None, "box")
    assert name == "box" and rec["real_path"] == os.path.realpath(same)
    name, rec = dev.resolve("mlc", {}, data, None, None, "box")
    assert (name, rec["kind"], rec["named_by"]) == ("box", "memory", "host")
    name, rec = dev.resolve("fio", {}, data, same, "lab-a", "box")
    assert (name, rec["named_by"], rec["kind"]) == ("lab-a", "--host", "filesystem")


# ----------------------------------------------------------------------------- end to end, two tmpfs


def _two_tmpfs(tmp_path):
    reason = can_mount()
    if reason:
        pytest.skip(reason)
    return tmpfs(tmp_path / "A", "64m"), tmpfs(tmp_path / "B", "64m")


@needs_fio
@pytest.mark.fio
@pytest.mark.loadlat
def test_two_targets_are_two_devices_and_the_first_raw_files_stay(tmp_path, capsys, monkeypatch):
    """`memstor run fio-queue-depth --profile quick --target A`, then `--target B` (two tmpfs), same host
    and data root: two device folders, every raw file of the first run byte-identical afterwards."""
    monkeypatch.setenv("MEMSTOR_HOST", HOST)
    data = tmp_path / "data"
    ctx_a, ctx_b = _two_tmpfs(tmp_path)
    with ctx_a as a, ctx_b as b:
        base = ["run", "fio-queue-depth", "--profile", "quick", "--data", str(data), "--no-progress", *TINY_QD_SETS]
        assert cli.main([*base, "--target", str(a)]) == 0, capsys.readouterr().err
        name_a, name_b = f"{HOST}-tmpfs-{_hash6(str(a))}", f"{HOST}-tmpfs-{_hash6(str(b))}"
        first = snapshot(data / "raw" / name_a)
        assert any(k.endswith(".json") and "meta" not in k and "manifest" not in k for k in first)
        assert cli.main([*base, "--target", str(b)]) == 0, capsys.readouterr().err
        assert snapshot(data / "raw" / name_a) == first
        assert sorted(p.name for p in (data / "raw").iterdir()) == sorted([name_a, name_b])
        assert sorted(p.name for p in (data / "processed").iterdir()) == sorted([name_a, name_b])
        for name, mnt in ((name_a, a), (name_b, b)):
            info = json.loads((data / "processed" / name / "sysinfo.json").read_text())
            rec = info["device"]
            assert (rec["name"], rec["named_by"], rec["fstype"], rec["mountpoint"]) == (
                name, "target filesystem", "tmpfs", str(mnt))
            assert rec["st_dev"] == f"{os.major(mnt.stat().st_dev)}:{os.minor(mnt.stat().st_dev)}"
            assert info["target"]["mountpoint"] == str(mnt)
            man = json.loads((data / "raw" / name / "fio-queue-depth" / "manifest.json").read_text())
            assert man["device"]["mountpoint"] == str(mnt) and man["host"] == name
            metas = list((data / "raw" / name / "fio-queue-depth").glob("*.meta.json"))
            assert metas and all(json.loads(m.read_text())["device"]["name"] == name for m in metas)
            csv = (data / "processed" / name / "fio-queue-depth.csv").read_text()
            assert f",{name}," in csv


@needs_fio
@pytest.mark.fio
@pytest.mark.loadlat
def test_same_host_name_for_two_targets_never_replaces_the_first(tmp_path, capsys):
    """With one --host for both targets the second run measures nothing: every point fails with one line
    naming the kept raw file and the way out; the first run's raw files stay byte-identical."""
    data = tmp_path / "data"
    ctx_a, ctx_b = _two_tmpfs(tmp_path)
    with ctx_a as a, ctx_b as b:
        base = ["run", "fio-queue-depth", "--profile", "quick", "--data", str(data), "--host", "lab",
                "--no-progress", *TINY_QD_SETS]
        assert cli.main([*base, "--target", str(a)]) == 0, capsys.readouterr().err
        first = _raw_files(data / "raw" / "lab")
        capsys.readouterr()
        assert cli.main([*base, "--target", str(b)]) == 1
        err = capsys.readouterr().err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
        assert "is a completed measurement with other parameters (medium)" in err
        assert "it is kept, not replaced" in err and "another --data or --host" in err
        assert _raw_files(data / "raw" / "lab") == first


@pytest.mark.skipif(not LOADLAT.is_file(), reason="loadlat not built (make loadlat)")
@pytest.mark.fio
@pytest.mark.loadlat
def test_a_standard_memory_run_after_a_quick_one_keeps_the_quick_raw_files(tmp_path, capsys):
    """The same memory points with other settings (quick, then standard-like seconds per point) never
    replace the quick run's raw files."""
    data = tmp_path / "data"
    lat_cpu, load_cpu = two_allowed_cpus()
    tiny = ["--set", "tool=loadlat", "--set", "buffer_kib=4096", "--set", "delays=[0,1000]",
            "--set", "access_bytes=[64]", "--set", "traffic=[R]", "--set", f"latency_cpu={lat_cpu}",
            "--set", f"load_cpus={load_cpu}"]
    base = ["run", "mlc-loaded-latency", "--profile", "quick", "--data", str(data), "--host", HOST, "--no-progress"]
    code = cli.main([*base, *tiny, "--set", "seconds_per_point=0.2"])
    assert code in (0, 1), capsys.readouterr().err
    first = _raw_files(data / "raw" / HOST)
    assert any(k.endswith(".txt") for k in first)
    capsys.readouterr()
    cli.main([*base, *tiny, "--set", "seconds_per_point=0.3"])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    after = _raw_files(data / "raw" / HOST)
    assert {k: after.get(k) for k in first} == first


# --------------------------------------------------------------------------------------- raw device


@pytest.mark.fio
def test_raw_device_is_named_after_its_kernel_name(tmp_path, loop_device):
    """A raw device (named twice) is `<host>-<kernel name>` (a real loop device; root only)."""
    loop = loop_device(16 << 20)
    params = {"device": loop, "confirm_device": loop}
    name, rec = dev.resolve("fio", params, tmp_path / "data", None, None, "box")
    assert name == f"box-{Path(loop).name}" and rec["named_by"] == "raw device"
    assert rec["kind"] == "raw-device" and rec["st_rdev"] and rec["kernel_name"] == Path(loop).name
    assert dev.resolve("fio", params, tmp_path / "data", None, "mine", "box")[0] == "mine"


def test_run_experiment_validates_an_explicit_host_before_naming(tmp_path):
    from memstor.core.errors import UsageError

    with pytest.raises(UsageError, match="host name"):
        run_experiment("fio-queue-depth", dict(TINY_QD), data_root=tmp_path / "data", host="../x", progress=False)
    assert not (tmp_path / "data").exists()
