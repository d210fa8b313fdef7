"""memstor.target: the test file, and every refusal, on real files, real devices and real mounts.

Block devices and partitions are real loop devices (a sparse image with an MBR partition table) when
this user may create them (root with losetup); mounts (read-only, small tmpfs, ext4 on a loop) the same.
Without root those tests are skipped with the reason. No test ever writes to a device: refusals are
checked, and the bytes of every foreign file/device are hashed before and after.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import time
from pathlib import Path

import pytest

from memstor.errors import UnsafeTarget, UsageError
from memstor.target import (
    MARKER_SUFFIX,
    TESTFILE_NAME,
    TestFile,
    margin_bytes,
    prepare_test_file,
    remove_test_file,
)
from reliability_helpers import sha256

MiB = 1 << 20




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
