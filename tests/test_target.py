"""memstor.measure.target: the test file, and every refusal, on real files, real devices and real mounts.

Block devices and partitions are real loop devices (a sparse image with an MBR partition table) when
this user may create them (root with losetup); mounts (read-only, small tmpfs, ext4 on a loop) the same.
Without root those tests are skipped with the reason. No test ever writes to a device: refusals are
checked, and the bytes of every foreign file/device are hashed before and after.

Every device refusal also runs without root, over recorded /proc and /sys trees (tests/data/sysroot/,
see its README): the same decision code, given device numbers instead of device nodes.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import struct
import subprocess
import time
from pathlib import Path

import pytest

from memstor.core.errors import UnsafeTarget, UsageError
from memstor.measure import sysfs, target
from memstor.measure.target import (
    MARKER_SUFFIX,
    TESTFILE_NAME,
    TestFile,
    check_device,
    check_device_numbers,
    is_partition,
    margin_bytes,
    prepare_test_file,
    refuse_special,
    remove_test_file,
)
from reliability_helpers import sha256

MiB = 1 << 20
#: Recorded /proc and /sys trees (README there): a loop disk recorded on a test machine, a laptop-like
#: NVMe + SATA layout with LVM and md, and a Fedora-like one whose btrfs mounts have anonymous numbers.
SYSROOT = Path(__file__).resolve().parent / "data" / "sysroot"
LOOP = SYSROOT / "loop-swap-mounted"
LAPTOP = SYSROOT / "nvme-lvm-md"
BTRFS = SYSROOT / "nvme-btrfs-luks"


def can_root(*tools: str) -> str | None:
    """None when we are root with the tools, else the skip reason."""
    if os.geteuid() != 0:
        return "needs root (loop devices / mounts)"
    missing = [t for t in tools if shutil.which(t) is None]
    return f"missing {', '.join(missing)}" if missing else None


@pytest.fixture(scope="module")
def loopdev(tmp_path_factory):
    """A real 64 MiB loop block device with one partition: (disk, partition or None, image file)."""
    reason = can_root("losetup")
    if reason:
        pytest.skip(reason)
    img = tmp_path_factory.mktemp("loop") / "disk.img"
    with open(img, "wb") as fh:
        fh.truncate(64 * MiB)
        mbr = bytearray(512)
        mbr[446:462] = struct.pack("<B3sB3sII", 0, b"\0\0\0", 0x83, b"\0\0\0", 2048, 32768)  # Linux, 16 MiB
        mbr[510:512] = b"\x55\xaa"
        fh.write(mbr)
    res = subprocess.run(["losetup", "-f", "--show", "-P", str(img)], capture_output=True, text=True)
    if res.returncode != 0:
        pytest.skip(f"cannot create a loop device here: {res.stderr.strip()}")
    disk = res.stdout.strip()
    part = disk + "p1"
    end = time.monotonic() + 3
    while not os.path.exists(part) and time.monotonic() < end:
        subprocess.run(["partx", "-a", disk], capture_output=True)
        time.sleep(0.1)
    try:
        yield disk, (part if os.path.exists(part) else None), img
    finally:
        subprocess.run(["partx", "-d", disk], capture_output=True)
        subprocess.run(["losetup", "-d", disk], capture_output=True)


@pytest.fixture
def mount(tmp_path):
    """mount(fstype, source, options) -> a fresh mount point, unmounted after the test."""
    points = []

    def _mount(fstype: str, source: str, options: str = "") -> Path:
        reason = can_root("mount", "umount")
        if reason:
            pytest.skip(reason)
        mnt = tmp_path / f"mnt{len(points)}"
        mnt.mkdir()
        cmd = ["mount", "-t", fstype] + (["-o", options] if options else []) + [source, str(mnt)]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            pytest.skip(f"cannot mount {fstype} here: {res.stderr.strip()}")
        points.append(mnt)
        return mnt

    yield _mount
    for mnt in reversed(points):
        subprocess.run(["umount", str(mnt)], capture_output=True)


# ------------------------------------------------------------------------------------ the test file


def test_creates_marks_fills_reuses_and_removes(tmp_path):
    tf = prepare_test_file(8 * MiB, tmp_path)
    path = tmp_path / "scratch" / TESTFILE_NAME
    assert tf == TestFile(path=path, size_bytes=8 * MiB, created=True, reused=False)
    st = path.stat()
    assert st.st_size == 8 * MiB and st.st_blocks * 512 >= 8 * MiB  # really allocated
    marker = json.loads((tmp_path / "scratch" / (TESTFILE_NAME + MARKER_SUFFIX)).read_text())
    assert marker["inode"] == st.st_ino and marker["device"] == st.st_dev
    assert marker["size_bytes"] == 8 * MiB and marker["status"] == "ready" and marker["created"].endswith("Z")
    data = path.read_bytes()
    pages = {data[i:i + 4096] for i in range(0, len(data), 4096)}
    assert len(pages) == 8 * MiB // 4096  # real bytes, no page repeats (not zeros, not one block)
    token = int(marker["token"], 16)
    assert struct.unpack_from("<QQ", data, 5 * 4096) == (5 * 4096, token)  # page stamped: offset, token
    mtime = st.st_mtime_ns
    again = prepare_test_file(8 * MiB, tmp_path)
    assert again.reused and again.created and path.stat().st_mtime_ns == mtime and path.stat().st_ino == st.st_ino
    bigger = prepare_test_file(12 * MiB, tmp_path)
    assert not bigger.reused and path.stat().st_size == 12 * MiB
    assert json.loads((tmp_path / "scratch" / (TESTFILE_NAME + MARKER_SUFFIX)).read_text())["size_bytes"] == 12 * MiB
    remove_test_file(bigger)
    assert sorted(os.listdir(tmp_path / "scratch")) == []


def test_target_dir_is_used_and_resolved(tmp_path):
    real = tmp_path / "disk"
    real.mkdir()
    (tmp_path / "a").mkdir()
    tf = prepare_test_file(1 * MiB, tmp_path / "data", target_dir=tmp_path / "a" / ".." / "disk")
    assert tf.path == real / TESTFILE_NAME and tf.path.stat().st_size == MiB
    assert not (tmp_path / "data" / "scratch").exists()
    link = tmp_path / "link"
    link.symlink_to(real)
    assert prepare_test_file(1 * MiB, tmp_path, target_dir=link).reused  # a symlink to a directory is fine


def test_foreign_file_with_our_name_is_refused_untouched(tmp_path):
    d = tmp_path / "scratch"
    d.mkdir()
    foreign = d / TESTFILE_NAME
    foreign.write_bytes(b"someone's precious data\n" * 1000)
    before = sha256(foreign)
    with pytest.raises(UnsafeTarget) as ei:
        prepare_test_file(1 * MiB, tmp_path)
    msg = str(ei.value)
    assert msg == (
        f"{foreign} exists but memstor did not create it (no ownership marker {TESTFILE_NAME}{MARKER_SUFFIX} "
        "beside it): memstor never writes to files it did not create; move or delete it yourself, or pick "
        "another --target"
    )
    assert sha256(foreign) == before and foreign.stat().st_size == 24000
    with pytest.raises(UnsafeTarget):
        remove_test_file(TestFile(foreign, 24000, created=True))
    assert sha256(foreign) == before


def test_replaced_file_or_hard_link_does_not_match_marker(tmp_path):
    tf = prepare_test_file(1 * MiB, tmp_path)
    m = tf.path.with_name(tf.path.name + MARKER_SUFFIX)
    assert json.loads(m.read_text())["xattr_token"] is True  # ext4/xfs/tmpfs: the inode carries the token
    os.unlink(tf.path)
    tf.path.write_bytes(b"x" * 4096)  # a new file under the old name (ext4 often reuses the inode number)
    before = sha256(tf.path)
    with pytest.raises(UnsafeTarget, match="belongs to another file|does not carry the token"):
        prepare_test_file(1 * MiB, tmp_path)
    assert sha256(tf.path) == before
    marker = json.loads(m.read_text())
    st = tf.path.stat()
    marker.update(inode=st.st_ino, device=st.st_dev)  # even a marker naming this very inode is not enough
    m.write_text(json.dumps(marker))
    with pytest.raises(UnsafeTarget, match="does not carry the token"):
        prepare_test_file(1 * MiB, tmp_path)
    assert sha256(tf.path) == before
    os.unlink(tf.path)
    tf = prepare_test_file(1 * MiB, tmp_path)
    os.link(tf.path, tmp_path / "someones-name.dat")
    with pytest.raises(UnsafeTarget, match="2 hard links"):
        prepare_test_file(2 * MiB, tmp_path)
    assert tf.path.stat().st_size == MiB


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
@pytest.mark.fio
def test_file_stays_ours_after_fio_overwrites_it(tmp_path):
    """Write tests overwrite every byte; the file must still be recognised (and reused) afterwards."""
    tf = prepare_test_file(1 * MiB, tmp_path)
    ino = tf.path.stat().st_ino
    before = sha256(tf.path)
    subprocess.run(["fio", "--name=w", f"--filename={tf.path}", "--rw=write", "--bs=64k", "--size=1m",
                    "--allow_file_create=0", "--eta=never", "--output=/dev/null"], check=True, capture_output=True)
    assert sha256(tf.path) != before  # fio really rewrote it
    again = prepare_test_file(1 * MiB, tmp_path)
    assert again.reused and again.path.stat().st_ino == ino


def test_symlink_with_our_name_is_refused(tmp_path):
    victim = tmp_path / "victim.dat"
    victim.write_bytes(b"v" * 100)
    (tmp_path / "scratch").mkdir()
    (tmp_path / "scratch" / TESTFILE_NAME).symlink_to(victim)
    with pytest.raises(UnsafeTarget, match="not a regular file"):
        prepare_test_file(1 * MiB, tmp_path)
    assert victim.read_bytes() == b"v" * 100


def test_unfinished_file_of_ours_is_recreated(tmp_path):
    tf = prepare_test_file(1 * MiB, tmp_path)
    m = tf.path.with_name(tf.path.name + MARKER_SUFFIX)
    marker = json.loads(m.read_text())
    marker["status"] = "filling"  # as if killed while filling
    m.write_text(json.dumps(marker))
    again = prepare_test_file(1 * MiB, tmp_path)
    assert not again.reused and json.loads(m.read_text())["status"] == "ready"


def test_missing_or_file_target_dir(tmp_path):
    with pytest.raises(UsageError) as ei:
        prepare_test_file(MiB, tmp_path, target_dir=tmp_path / "nope")
    assert str(ei.value) == (f"--target {tmp_path / 'nope'}: no such directory; create it "
                             f"(mkdir -p {tmp_path / 'nope'}) or pick an existing one")
    f = tmp_path / "notes.txt"
    f.write_text("keep me")
    with pytest.raises(UnsafeTarget, match="is a file, not a directory"):
        prepare_test_file(MiB, tmp_path, target_dir=f)
    assert f.read_text() == "keep me"
    with pytest.raises(UsageError, match="positive number of bytes"):
        prepare_test_file(0, tmp_path)


@pytest.mark.parametrize("dev", ["/dev/null", "/dev/zero"])
def test_character_device_and_symlink_to_it_refused(tmp_path, dev):
    with pytest.raises(UnsafeTarget) as ei:
        prepare_test_file(MiB, tmp_path, target_dir=Path(dev))
    assert str(ei.value) == (f"--target {dev} is a character device: memstor never writes to a special file; "
                             "give a directory on a disk filesystem")
    link = tmp_path / "innocent-looking"
    link.symlink_to(dev)
    with pytest.raises(UnsafeTarget) as ei:
        prepare_test_file(MiB, tmp_path, target_dir=link)
    assert f"(a symlink to {dev}) is a character device" in str(ei.value)


def test_no_room_is_refused_before_writing(tmp_path):
    free = shutil.disk_usage(tmp_path).free
    with pytest.raises(UnsafeTarget) as ei:
        prepare_test_file(free + 1, tmp_path)
    assert str(ei.value).startswith(f"no room in {tmp_path / 'scratch'}: the test file needs ")
    assert "min(10% of the filesystem, 1 GiB)" in str(ei.value)
    assert os.listdir(tmp_path / "scratch") == []
    assert margin_bytes(100 * MiB) == 10 * MiB and margin_bytes(1 << 40) == 1 << 30


def test_small_tmpfs_margin(mount):
    mnt = mount("tmpfs", "tmpfs", "size=16m")
    with pytest.raises(UnsafeTarget, match="no room"):
        prepare_test_file(15 * MiB, mnt.parent, target_dir=mnt)  # 15 MiB + 1.6 MiB margin > 16 MiB
    assert os.listdir(mnt) == []
    tf = prepare_test_file(8 * MiB, mnt.parent, target_dir=mnt)
    assert tf.path.stat().st_size == 8 * MiB


def test_read_only_filesystem_refused(mount):
    mnt = mount("tmpfs", "tmpfs", "ro,size=16m")
    with pytest.raises(UnsafeTarget) as ei:
        prepare_test_file(MiB, mnt.parent, target_dir=mnt)
    assert str(ei.value) == f"--target {mnt} is on a read-only filesystem: pick a writable directory"


# ------------------------------------------------------------------------------------------ devices


@pytest.mark.fio
def test_block_device_partition_and_symlink_refused_bytes_unchanged(tmp_path, loopdev):
    disk, part, img = loopdev
    before = sha256(img)
    with pytest.raises(UnsafeTarget) as ei:
        prepare_test_file(MiB, tmp_path, target_dir=Path(disk))
    assert str(ei.value).startswith(f"--target {disk} is a block device: memstor never writes to a raw device; ")
    assert "confirm_device" in str(ei.value)
    link = tmp_path / "fast-disk"
    link.symlink_to(disk)
    with pytest.raises(UnsafeTarget, match=rf"\(a symlink to {disk}\) is a block device"):
        prepare_test_file(MiB, tmp_path, target_dir=link)
    if part is None:
        pytest.skip("the kernel did not create the loop partition node")
    with pytest.raises(UnsafeTarget) as ei:
        prepare_test_file(MiB, tmp_path, target_dir=Path(part))
    assert str(ei.value).startswith(f"--target {part} is a partition: ")
    assert sha256(img) == before


@pytest.mark.fio
def test_raw_device_needs_the_same_device_named_twice(tmp_path, loopdev):
    disk, part, img = loopdev
    before = sha256(img)
    with pytest.raises(UnsafeTarget) as ei:
        prepare_test_file(MiB, tmp_path, device=disk)
    assert str(ei.value) == (f"raw device {disk}: writing to it destroys its data; to really do it, name the same "
                             f"device twice (device={disk} confirm_device={disk}), else use --target DIR")
    with pytest.raises(UnsafeTarget, match="are different devices"):
        prepare_test_file(MiB, tmp_path, device=disk, confirm_device=part or "/dev/null")
    with pytest.raises(UnsafeTarget, match="is a character device, not a block device"):
        prepare_test_file(MiB, tmp_path, device="/dev/null", confirm_device="/dev/null")
    with pytest.raises(UsageError, match="not both"):
        prepare_test_file(MiB, tmp_path, target_dir=tmp_path, device=disk, confirm_device=disk)
    with pytest.raises(UsageError, match="less than the asked"):
        prepare_test_file(128 * MiB, tmp_path, device=disk, confirm_device=disk)
    link = tmp_path / "same-disk"
    link.symlink_to(disk)
    tf = prepare_test_file(8 * MiB, tmp_path, device=disk, confirm_device=str(link))
    assert tf == TestFile(path=Path(disk), size_bytes=8 * MiB, created=False)
    remove_test_file(tf)  # never deletes a device
    assert os.path.exists(disk) and sha256(img) == before


@pytest.mark.fio
def test_mounted_partition_refused(tmp_path, loopdev, mount):
    disk, part, img = loopdev
    if part is None:
        pytest.skip("the kernel did not create the loop partition node")
    if shutil.which("mkfs.ext4") is None:
        pytest.skip("mkfs.ext4 missing")
    subprocess.run(["mkfs.ext4", "-q", "-F", part], check=True, capture_output=True)
    mount("ext4", part)
    with pytest.raises(UnsafeTarget) as ei:
        prepare_test_file(MiB, tmp_path, device=disk, confirm_device=disk)
    assert str(ei.value) == (f"device {disk}: {Path(part).name} is mounted; unmount it first, or use --target "
                             "on its mount point")
    with pytest.raises(UnsafeTarget, match="is mounted"):
        prepare_test_file(MiB, tmp_path, device=part, confirm_device=part)


def _tiny_block_size(**extra) -> dict:
    return {"runtime_s": 0.5, "ramp_s": 0, "file_size": "16m", "ioengine": "psync", "direct": 1, "iodepth": 1,
            "numjobs": 1, "bs": ["4k"], "rw": ["randread"], "seq_bs": [], "repetitions": 1, **extra}


@pytest.mark.fio
@pytest.mark.loadlat
def test_raw_device_named_twice_is_measured_end_to_end(loopdev, tmp_path):
    """`--set device=D --set confirm_device=D`: fio runs on the real block device, no test file is made."""
    from memstor.experiments import run_experiment

    disk, _, _ = loopdev
    df = run_experiment("fio-block-size", _tiny_block_size(device=disk, confirm_device=disk),
                        data_root=tmp_path / "data", host="h", progress=False)
    assert (df["status"] == "done").all() and (df["iops"] > 0).all()
    assert df["ioengine_note"].str.contains("raw device").all()
    assert not any((tmp_path / "data" / "scratch").glob("memstor-testfile*"))


@pytest.mark.parametrize("extra", [{"device": "DISK"}, {"confirm_device": "DISK"},
                                   {"device": "DISK", "confirm_device": "/dev/null"}])
@pytest.mark.fio
def test_raw_device_not_named_twice_is_refused_before_fio(loopdev, tmp_path, extra):
    from memstor.experiments import run_experiment

    disk, _, img = loopdev
    before = sha256(img)
    params = _tiny_block_size(**{k: (disk if v == "DISK" else v) for k, v in extra.items()})
    with pytest.raises((UsageError, UnsafeTarget)) as err:
        run_experiment("fio-block-size", params, data_root=tmp_path / "data", host="h", progress=False)
    assert "\n" not in str(err.value) and "device" in str(err.value)
    assert sha256(img) == before
    assert not (tmp_path / "data" / "raw").exists()


# ------------------------------------------------- devices over recorded /proc and /sys (no root needed)


def num(majmin: str) -> int:
    """The device number of 'MAJ:MIN'."""
    major, minor = majmin.split(":")
    return os.makedev(int(major), int(minor))


def refused_raw(root: Path, device: str, majmin: str, size_bytes: int = MiB) -> str:
    """The one-line refusal of `device` (numbered MAJ:MIN) named twice, decided over the recorded root."""
    with pytest.raises(UnsafeTarget) as ei:
        check_device_numbers(device, device, num(majmin), num(majmin), size_bytes, root=root)
    msg = str(ei.value)
    assert "\n" not in msg and msg.startswith(f"device {device}: "), msg
    return msg


def test_recordings_are_what_the_tests_say():
    """The recorded trees hold the layout the tests rely on (a broken recording must not pass silently)."""
    assert (LOOP / "sys/dev/block/7:0").resolve() == LOOP / "sys/devices/virtual/block/loop0"
    assert "259:0 / /mnt/rec " in (LOOP / "proc/self/mountinfo").read_text()
    assert (LOOP / "proc/swaps").read_text().splitlines()[1].startswith("/dev/loop0p2 ")
    assert sorted(p.name for p in (LAPTOP / "sys/class/block/sda1/holders").iterdir()) == ["dm-0", "dm-1"]
    assert [ln.split()[0] for ln in (LAPTOP / "proc/swaps").read_text().splitlines()[1:]] == \
        ["/dev/nvme0n1p3", "/dev/dm-1"]
    btrfs = [ln.split() for ln in (BTRFS / "proc/self/mountinfo").read_text().splitlines() if " - btrfs " in ln]
    # every btrfs mount carries an anonymous number (0:NN), never its partition's: only the source names it
    assert [(f[2], f[4], f[-2]) for f in btrfs] == [
        ("0:32", "/", "/dev/nvme0n1p2"), ("0:32", "/home", "/dev/nvme0n1p2"),
        ("0:45", "/data", "/dev/mapper/luks-5c1e7a2d-9b44-4c1f-8e0a-2f6d3b7c9e10"),
        ("0:51", "/run/media/u/My\\040Backup", "/dev/sdb1")]
    assert (BTRFS / "sys/block/dm-0/dm/name").read_text().strip() == "luks-5c1e7a2d-9b44-4c1f-8e0a-2f6d3b7c9e10"


def test_recorded_mounted_partition_refused():
    assert refused_raw(LOOP, "/dev/loop0p1", "259:0") == (
        "device /dev/loop0p1: loop0p1 is mounted; unmount it first, or use --target on its mount point")
    assert refused_raw(LAPTOP, "/dev/nvme0n1p2", "259:2") == (
        "device /dev/nvme0n1p2: nvme0n1p2 is mounted; unmount it first, or use --target on its mount point")
    assert refused_raw(LAPTOP, "/dev/dm-0", "253:0") == (  # an LVM volume (mountinfo names /dev/mapper/vg0-data)
        "device /dev/dm-0: dm-0 is mounted; unmount it first, or use --target on its mount point")


def test_recorded_btrfs_with_anonymous_device_number_refused():
    """btrfs's mountinfo number is 0:NN, not its partition's: the mount source (/dev/..., /dev/mapper/...)
    resolved through the recorded /sys must still refuse the partition, its disk, and a dm device."""
    mounted = "is mounted; unmount it first, or use --target on its mount point"
    assert refused_raw(BTRFS, "/dev/nvme0n1p2", "259:2") == f"device /dev/nvme0n1p2: nvme0n1p2 {mounted}"
    assert refused_raw(BTRFS, "/dev/sdb1", "8:17") == f"device /dev/sdb1: sdb1 {mounted}"  # mount point has a space
    assert refused_raw(BTRFS, "/dev/sdb", "8:16") == f"device /dev/sdb: sdb1 {mounted}"  # the disk of it
    assert refused_raw(BTRFS, "/dev/dm-0", "253:0") == f"device /dev/dm-0: dm-0 {mounted}"  # /dev/mapper/luks-...
    # the other partition of that disk is not mounted: anonymous numbers refuse nothing by themselves
    assert check_device_numbers("/dev/sdb2", "/dev/sdb2", num("8:18"), num("8:18"), MiB, root=BTRFS) == \
        TestFile(path=Path("/dev/sdb2"), size_bytes=MiB, created=False)
    assert sysfs.mounted_devices(BTRFS) == {num(n) for n in (
        "0:32", "0:21", "0:22", "0:5", "0:36", "0:45", "0:51", "259:1", "259:2", "253:0", "8:17")}


def test_mount_sources_resolved_or_ignored(tmp_path):
    """Sources outside /dev/, unknown names and unknown /dev/mapper names resolve to nothing."""
    for source in ("tmpfs", "server:/export", "/dev/root", "/dev/mapper/nope", "/dev/disk/by-uuid/1234", "/dev/..",
                   "/dev/vg0/sda"):  # an LV named like a disk is not that disk
        assert sysfs.source_number(source, root=BTRFS) is None, source
    assert sysfs.source_number("/dev/nvme0n1p2", root=BTRFS) == num("259:2")
    assert sysfs.source_number("/dev/mapper/luks-5c1e7a2d-9b44-4c1f-8e0a-2f6d3b7c9e10", root=BTRFS) == num("253:0")
    assert sysfs.source_number("/dev/mapper/luks-5c1e7a2d-9b44-4c1f-8e0a-2f6d3b7c9e10", root=tmp_path) is None
    assert sysfs.mounted_devices(tmp_path) == set()  # no mountinfo at all: nothing known mounted


def test_mount_source_stat_on_the_running_system():
    """On the running system (root /) the source node itself is stat'ed; a non-block node gives nothing."""
    assert sysfs.source_number("/dev/null") is None  # a character device
    blocks = sorted(p for p in Path("/dev").iterdir() if not p.is_symlink() and p.is_block_device())
    if blocks:  # e.g. /dev/loop0: its own number, whatever sysfs says
        assert sysfs.source_number(str(blocks[0])) == os.stat(blocks[0]).st_rdev


def test_recorded_whole_disk_with_a_mounted_partition_refused():
    assert refused_raw(LOOP, "/dev/loop0", "7:0") == (
        "device /dev/loop0: loop0p1 is mounted; unmount it first, or use --target on its mount point")
    assert refused_raw(LAPTOP, "/dev/nvme0n1", "259:0") == (
        "device /dev/nvme0n1: nvme0n1p1 is mounted; unmount it first, or use --target on its mount point")


def test_recorded_swap_refused():
    assert refused_raw(LOOP, "/dev/loop0p2", "259:1") == (
        "device /dev/loop0p2: loop0p2 is used as swap; swapoff it first, or use --target DIR")
    assert refused_raw(LAPTOP, "/dev/nvme0n1p3", "259:3") == (
        "device /dev/nvme0n1p3: nvme0n1p3 is used as swap; swapoff it first, or use --target DIR")
    assert refused_raw(LAPTOP, "/dev/dm-1", "253:1") == (  # swap on an LVM volume
        "device /dev/dm-1: dm-1 is used as swap; swapoff it first, or use --target DIR")


def test_recorded_device_with_holders_refused():
    assert refused_raw(LAPTOP, "/dev/sda", "8:0") == (  # its partition is an LVM physical volume
        "device /dev/sda: sda1 is in use by dm-0, dm-1 (LVM/RAID/dm); free it first, or use --target DIR")
    assert refused_raw(LAPTOP, "/dev/sda1", "8:1") == (
        "device /dev/sda1: sda1 is in use by dm-0, dm-1 (LVM/RAID/dm); free it first, or use --target DIR")
    assert refused_raw(LAPTOP, "/dev/sdc", "8:32") == (  # the whole disk is an md RAID member
        "device /dev/sdc: sdc is in use by md127 (LVM/RAID/dm); free it first, or use --target DIR")


def test_recorded_raw_device_must_be_named_twice_the_same():
    for device, confirm in (("/dev/sdb", None), (None, "/dev/sdb"), ("/dev/sdb", "")):
        with pytest.raises(UnsafeTarget) as ei:
            check_device(device, confirm, MiB, root=LAPTOP)  # refused before any stat or /sys read
        assert str(ei.value) == ("raw device /dev/sdb: writing to it destroys its data; to really do it, name the "
                                 "same device twice (device=/dev/sdb confirm_device=/dev/sdb), else use --target DIR")
    with pytest.raises(UnsafeTarget) as ei:
        check_device_numbers("/dev/sdb", "/dev/sdc", num("8:16"), num("8:32"), MiB, root=LAPTOP)
    assert str(ei.value) == ("device=/dev/sdb and confirm_device=/dev/sdc are different devices: name the same "
                             "device twice to confirm, or use --target DIR")
    with pytest.raises(UnsafeTarget) as ei:
        check_device("/dev/null", "/dev/null", MiB, root=LAPTOP)
    assert str(ei.value) == ("device=/dev/null is a character device, not a block device: use --target DIR for a "
                             "test file")
    by_id = "/dev/disk/by-id/ata-WDC_WD10EZEX-00BN5A0_WD-WCC3F1234567"  # two names, one device: fine
    assert check_device_numbers("/dev/sdb", by_id, num("8:16"), num("8:16"), MiB, root=LAPTOP).path == Path("/dev/sdb")


def test_recorded_partition_refused_as_a_target():
    """A partition (or a whole disk) given as --target is refused, told apart by /sys."""
    assert is_partition(num("259:2"), root=LAPTOP) and not is_partition(num("259:0"), root=LAPTOP)
    way = ("memstor never writes to a raw device; give a directory on a mounted filesystem (e.g. the disk's mount "
           "point); to test the raw device itself (destroys its data) name it twice: device=DEV confirm_device=DEV")
    for shown, majmin, kind in (("/dev/nvme0n1p2", "259:2", "a partition"), ("/dev/loop0p1", "259:0", "a partition"),
                                ("/dev/nvme0n1", "259:0", "a block device")):
        root = LOOP if "loop" in shown else LAPTOP
        with pytest.raises(UnsafeTarget) as ei:
            refuse_special("--target", shown, stat.S_IFBLK | 0o660, num(majmin), root=root)
        assert str(ei.value) == f"--target {shown} is {kind}: {way}"
    with pytest.raises(UnsafeTarget, match=r"^--target /home/u/fast \(a symlink to /dev/sda1\) is a partition: "):
        refuse_special("--target", "/home/u/fast (a symlink to /dev/sda1)", stat.S_IFBLK | 0o660, num("8:1"),
                       root=LAPTOP)
    refuse_special("--target", "/home/u", stat.S_IFDIR | 0o755, 0, root=LAPTOP)  # a directory: no refusal


def test_recorded_unmounted_whole_disk_named_twice_is_accepted():
    assert check_device_numbers("/dev/sdb", "/dev/sdb", num("8:16"), num("8:16"), 8 * MiB, root=LAPTOP) == \
        TestFile(path=Path("/dev/sdb"), size_bytes=8 * MiB, created=False)
    assert check_device_numbers("/dev/loop1", "/dev/loop1", num("7:1"), num("7:1"), 32 * MiB, root=LOOP) == \
        TestFile(path=Path("/dev/loop1"), size_bytes=32 * MiB, created=False)
    with pytest.raises(UsageError) as ei:  # loop1 holds 65536 sectors of 512 bytes
        check_device_numbers("/dev/loop1", "/dev/loop1", num("7:1"), num("7:1"), 64 * MiB, root=LOOP)
    assert str(ei.value) == "device /dev/loop1 holds 32 MiB, less than the asked 64 MiB: ask for a smaller size"


@pytest.mark.parametrize("extra", [{"device": "/dev/sdb"}, {"confirm_device": "/dev/sdb"},
                                   {"device": "/dev/null", "confirm_device": "/dev/null"}])
def test_raw_device_not_named_twice_is_refused_before_fio_without_root(tmp_path, extra):
    from memstor.experiments import run_experiment

    with pytest.raises(UnsafeTarget) as err:
        run_experiment("fio-block-size", _tiny_block_size(**extra), data_root=tmp_path / "data", host="h",
                       progress=False)
    assert "\n" not in str(err.value) and ("/dev/sdb" in str(err.value) or "/dev/null" in str(err.value))
    assert not (tmp_path / "data" / "raw").exists()


def test_read_only_filesystem_refused_without_root(tmp_path, monkeypatch):
    """The read-only refusal, with statvfs's ST_RDONLY answered (the root-only test mounts a real one)."""
    monkeypatch.setattr(target, "free_space", lambda directory: (1 << 40, 1 << 40, True))
    with pytest.raises(UnsafeTarget) as ei:
        prepare_test_file(MiB, tmp_path, target_dir=tmp_path)
    assert str(ei.value) == f"--target {tmp_path} is on a read-only filesystem: pick a writable directory"
    assert os.listdir(tmp_path) == []
