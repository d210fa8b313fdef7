"""Safe storage targets: memstor writes only to a test file it created and marked as its own.

Rules (DESIGN.md, "Safety rules"), all checked BEFORE fio starts:

- The test file is ``memstor-testfile.dat`` in ``<data>/scratch/`` unless ``target_dir`` names another
  directory, which must exist. Its ownership marker is the sidecar ``memstor-testfile.dat.memstor.json``
  (inode, device, size, creation time, status). An existing test file is reused only when the marker
  matches it (same inode and device, one hard link, status ready); otherwise it is refused untouched.
- Refused with the reason and the way out: a target that is a block device, a partition, a character
  device, a FIFO/socket, a symlink to any of those, a regular file, a missing directory, a directory on
  a read-only filesystem, and a filesystem without room for the file plus a margin. The margin is
  ``min(10 % of the filesystem size, 1 GiB)``: enough that the test never fills a small disk, never
  more than 1 GiB on a big one.
- A raw block device only when the caller names the same device twice (``device`` and
  ``confirm_device``, resolving to the same device number), the device is a block device, and neither it
  nor any of its partitions is mounted, used as swap, or held by LVM/md/dm.

What the device checks know of the system comes from ``/proc/self/mountinfo``, ``/proc/swaps`` and
``/sys/dev/block/MAJ:MIN`` read under a root (``root``, default ``/``, the running system). A mount
counts by its device number and by its source device (``/dev/nvme0n1p2``, ``/dev/mapper/X``, resolved
through ``/sys/class/block``): btrfs reports an anonymous number (``0:NN``) that is not its partition.
The tests pass a recorded tree (``tests/data/sysroot/``) so every refusal also runs without root.
The decisions take device numbers (``check_device_numbers``, ``refuse_special``); only ``check_device``
and ``check_directory`` stat the names they are given (and mount sources, on the running system only).

The test file is created with ``posix_fallocate`` (so a full disk fails at once, not halfway) and then
filled by writing real bytes: fallocated-but-unwritten extents read back as zeros without touching the
device, which would make every read test measure nothing. The bytes are a random 4 MiB block with each
4 KiB page stamped with its offset, so no page repeats: compressing or deduplicating filesystems
(btrfs compress, ZFS) cannot shortcut the reads. Zeros would do on ext4/xfs; the random fill costs
little and is right everywhere.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import struct
from dataclasses import dataclass
from pathlib import Path

from memstor import __version__
from memstor.core.errors import UnsafeTarget, UsageError
from memstor.core.files import read_json, utc_now, write_json
from memstor.core.units import size_text
from memstor.measure.sysfs import SYSTEM_ROOT, mounted_devices, swap_devices, sys_block

TESTFILE_NAME = "memstor-testfile.dat"
MARKER_SUFFIX = ".memstor.json"
GiB = 1 << 30
MiB = 1 << 20
#: Fill chunk (bytes) and page (bytes) of the test file writer.
FILL_CHUNK = 4 * MiB
FILL_PAGE = 4096
#: Extended attribute holding the test file's token (survives fio's writes, not a new inode).
XATTR = "user.memstor.token"


@dataclass
class TestFile:
    """The target fio works on.

    path: the test file (or the raw device). size_bytes: bytes fio may use.
    created: True for a memstor test file (made now or earlier, marker verified; remove_test_file may
    delete it); False for a raw device (never deleted). reused: an existing test file was kept.
    """

    __test__ = False  # not a pytest test class

    path: Path
    size_bytes: int
    created: bool
    reused: bool = False


# ------------------------------------------------------------------------------------------- helpers



def is_partition(rdev: int, root: Path = SYSTEM_ROOT) -> bool:
    """True when the block device number is a partition (sysfs has a ``partition`` file)."""
    d = sys_block(rdev, root)
    return bool(d and (d / "partition").exists())


def _block_kind(rdev: int, root: Path = SYSTEM_ROOT) -> str:
    """'a partition' or 'a block device', for messages."""
    return "a partition" if is_partition(rdev, root) else "a block device"


def _describe_special(mode: int, rdev: int, root: Path = SYSTEM_ROOT) -> str | None:
    """'a block device' / 'a partition' / 'a character device' / 'a FIFO' / 'a socket', or None, from a
    stat's st_mode and st_rdev."""
    if stat.S_ISBLK(mode):
        return _block_kind(rdev, root)
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return None


def refuse_special(given_as: str, shown: str, mode: int, rdev: int = 0, root: Path = SYSTEM_ROOT) -> None:
    """UnsafeTarget when a would-be target directory is a device, partition, FIFO or socket.

    given_as: how the caller named it (``--target``); shown: the path as given, with any ``(a symlink
    to X)``; mode, rdev: its (followed) stat's st_mode and st_rdev; root: where /sys is read.
    """
    special = _describe_special(mode, rdev, root)
    if special:
        kind = "raw device" if special in ("a block device", "a partition") else "special file"
        way = (
            "give a directory on a mounted filesystem (e.g. the disk's mount point); to test the raw device "
            "itself (destroys its data) name it twice: device=DEV confirm_device=DEV"
            if kind == "raw device"
            else "give a directory on a disk filesystem"
        )
        raise UnsafeTarget(f"{given_as} {shown} is {special}: memstor never writes to a {kind}; {way}")


def free_space(directory: Path) -> tuple[int, int, bool]:
    """(bytes available to this user, filesystem size in bytes, read-only?) of the fs holding directory."""
    v = os.statvfs(directory)
    return v.f_bavail * v.f_frsize, v.f_blocks * v.f_frsize, bool(v.f_flag & os.ST_RDONLY)


def margin_bytes(fs_size_bytes: int) -> int:
    """Space left free beyond the test file: min(10 % of the filesystem, 1 GiB), in bytes."""
    return int(min(fs_size_bytes * 0.10, GiB))


# ------------------------------------------------------------------------------------- the directory


def check_directory(directory: Path, given_as: str = "--target") -> Path:
    """The real path of a directory memstor may put its test file in; UsageError/UnsafeTarget otherwise."""
    directory = Path(directory).expanduser()
    try:
        lst = os.lstat(directory)
    except FileNotFoundError:
        raise UsageError(
            f"{given_as} {directory}: no such directory; create it (mkdir -p {directory}) or pick an existing one"
        ) from None
    except OSError as err:
        raise UsageError(f"{given_as} {directory}: {err.strerror}; pick another directory") from None
    real = Path(os.path.realpath(directory))
    via = f" (a symlink to {real})" if stat.S_ISLNK(lst.st_mode) else ""
    try:
        st = os.stat(directory)
    except OSError:
        raise UsageError(f"{given_as} {directory}{via}: the link points nowhere; give an existing directory") from None
    refuse_special(given_as, f"{directory}{via}", st.st_mode, st.st_rdev)
    if stat.S_ISREG(st.st_mode):
        raise UnsafeTarget(
            f"{given_as} {directory}{via} is a file, not a directory: memstor never writes to existing files; "
            "give the directory to put its test file in"
        )
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafeTarget(f"{given_as} {directory}{via} is not a directory: give a directory on a disk filesystem")
    _, _, read_only = free_space(real)
    if read_only:
        raise UnsafeTarget(f"{given_as} {real} is on a read-only filesystem: pick a writable directory")
    if not os.access(real, os.W_OK | os.X_OK):
        raise UnsafeTarget(f"{given_as} {real}: no write permission; pick a directory you can write to")
    return real


def marker_path(path: Path) -> Path:
    """The ownership marker of a test file: ``<file>.memstor.json`` beside it."""
    return Path(path).with_name(Path(path).name + MARKER_SUFFIX)


def read_marker(path: Path) -> dict | None:
    """The marker of a test file, or None when missing or unreadable."""
    return read_json(marker_path(path))


def owned(path: Path) -> tuple[bool, str]:
    """(True, '') when ``path`` is a test file memstor created: its marker matches; else (False, why)."""
    path = Path(path)
    try:
        st = os.lstat(path)
    except OSError:
        return False, "it does not exist"
    if not stat.S_ISREG(st.st_mode):
        return False, "it is not a regular file"
    m = read_marker(path)
    if m is None:
        return False, f"no ownership marker {marker_path(path).name} beside it"
    if m.get("inode") != st.st_ino or m.get("device") != st.st_dev:
        return False, f"its marker {marker_path(path).name} belongs to another file (replaced or copied?)"
    if st.st_nlink != 1:
        return False, f"it has {st.st_nlink} hard links (other names may be someone's data)"
    if m.get("xattr_token"):  # inode numbers are reused: the inode itself must carry this marker's token
        try:
            tag = os.getxattr(path, XATTR, follow_symlinks=False).decode("ascii", "replace")
        except OSError:
            tag = None
        if tag != m.get("token"):
            return False, f"it does not carry the token of its marker {marker_path(path).name} (replaced?)"
    elif not _pages_carry_token(path, st.st_size, m.get("token")):
        return False, ("this filesystem keeps no xattr token and none of its sampled pages carries its marker's "
                       "token (replaced, or fio overwrote them all)")
    return True, ""


def _pages_carry_token(path: Path, size_bytes: int, token_hex: object, samples: int = 256) -> bool:
    """True when at least one of `samples` evenly spaced 4 KiB pages still holds the file's token (the
    ownership check where the filesystem has no user xattrs: inode numbers alone are reused)."""
    try:
        token = int(str(token_hex), 16)
    except ValueError:
        return False
    pages = max(1, size_bytes // FILL_PAGE)
    step = max(1, pages // samples)
    try:
        with open(path, "rb") as f:
            for page in range(0, pages, step):
                f.seek(page * FILL_PAGE)
                head = f.read(16)
                if len(head) == 16 and struct.unpack("<QQ", head)[1] == token:
                    return True
    except OSError:
        return False
    return False


def _write_marker(path: Path, st: os.stat_result, size_bytes: int, status: str, created: str, token: int,
                  xattr_token: bool) -> None:
    write_json(
        marker_path(path),
        {
            "what": "memstor test file: memstor may overwrite or delete it",
            "memstor_version": __version__,
            "path": str(path),
            "inode": st.st_ino,
            "device": st.st_dev,
            "size_bytes": size_bytes,
            "created": created or utc_now(),
            "status": status,
            "token": f"{token:016x}",
            "xattr_token": xattr_token,
        },
    )


def _tag(fd: int, token: int) -> bool:
    """Put the token on the inode as the xattr ``user.memstor.token``; False where xattrs are unsupported."""
    try:
        os.setxattr(fd, XATTR, f"{token:016x}".encode("ascii"))
        return True
    except (OSError, AttributeError):
        return False


def _fill(fd: int, size_bytes: int, token: int) -> None:
    """Write size_bytes of non-repeating bytes: a random block, each 4 KiB page stamped with its offset
    and the file's token (uint64 little-endian each), so no two pages of the file are equal."""
    block = bytearray(os.urandom(FILL_CHUNK))
    view = memoryview(block)
    off = 0
    while off < size_bytes:
        n = min(FILL_CHUNK, size_bytes - off)
        for page in range(0, n, FILL_PAGE):
            struct.pack_into("<QQ", block, page, off + page, token)
        done = 0
        while done < n:
            done += os.pwrite(fd, view[done:n], off + done)
        off += n


def _create(path: Path, size_bytes: int) -> None:
    """Create the test file (O_EXCL), mark it, reserve the space, fill it, fsync, mark it ready.

    On any error (ENOSPC, Ctrl-C...) the half-made file and its marker are removed.
    """
    created = utc_now()
    token = int.from_bytes(os.urandom(8), "little")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        st = os.fstat(fd)
        tagged = _tag(fd, token)
        _write_marker(path, st, size_bytes, "filling", created, token, tagged)
        with contextlib.suppress(OSError, AttributeError):
            os.posix_fallocate(fd, 0, size_bytes)  # not every filesystem supports it: writing is the truth
        _fill(fd, size_bytes, token)
        os.ftruncate(fd, size_bytes)
        os.fsync(fd)
        _write_marker(path, os.fstat(fd), size_bytes, "ready", created, token, tagged)
    except BaseException:
        os.close(fd)
        fd = -1
        with contextlib.suppress(OSError):
            path.unlink()
        with contextlib.suppress(OSError):
            marker_path(path).unlink()
        raise
    finally:
        if fd >= 0:
            os.close(fd)


def prepare_test_file(
    size_bytes: int,
    data_root: Path,
    target_dir: Path | None = None,
    device: str | None = None,
    confirm_device: str | None = None,
) -> TestFile:
    """The test file fio may write to: made (or reused) in ``<data_root>/scratch/`` or ``target_dir``.

    size_bytes: file size in bytes. With ``device`` and ``confirm_device`` naming the same unmounted
    block device, that device is returned instead (created=False). Raises UsageError (bad parameter)
    or UnsafeTarget (refused target), one line each with the way out, before anything is written.
    """
    if isinstance(size_bytes, bool) or not isinstance(size_bytes, int) or size_bytes <= 0:
        raise UsageError(f"test file size {size_bytes!r} is not allowed: use a positive number of bytes")
    if device is not None or confirm_device is not None:
        if target_dir is not None:
            raise UsageError("give either a target directory or a raw device (device + confirm_device), not both")
        return check_device(device, confirm_device, size_bytes)
    if target_dir is None:
        scratch = Path(data_root).expanduser() / "scratch"
        if not scratch.is_symlink():
            try:
                scratch.mkdir(parents=True, exist_ok=True)
            except OSError as err:
                raise UsageError(f"cannot create {scratch}: {err.strerror}; use --target DIR or another --data") from None
        directory = check_directory(scratch, given_as="scratch directory")
    else:
        directory = check_directory(Path(target_dir))
    path = directory / TESTFILE_NAME
    existing = 0
    if os.path.lexists(path):
        ok, why = owned(path)
        if not ok:
            raise UnsafeTarget(
                f"{path} exists but memstor did not create it ({why}): memstor never writes to files it did "
                f"not create; move or delete it yourself, or pick another --target"
            )
        marker = read_marker(path) or {}
        existing = os.stat(path).st_size
        if marker.get("status") == "ready" and marker.get("size_bytes") == size_bytes == existing:
            return TestFile(path=path, size_bytes=size_bytes, created=True, reused=True)
    avail, fs_size, _ = free_space(directory)
    margin = margin_bytes(fs_size)
    if avail + existing - size_bytes < margin:
        raise UnsafeTarget(
            f"no room in {directory}: the test file needs {size_text(size_bytes)} plus a margin of "
            f"{size_text(margin)} (min(10% of the filesystem, 1 GiB)) and {size_text(avail + existing)} "
            f"is free; free space, pick another --target, or a smaller file size"
        )
    if existing or os.path.lexists(path):
        path.unlink()  # ours (marker verified above), but the wrong size or never finished
    try:
        _create(path, size_bytes)
    except OSError as err:
        if err.errno in (errno.ENOSPC, errno.EDQUOT):
            raise UnsafeTarget(
                f"no room in {directory} while writing the {size_text(size_bytes)} test file: free space, "
                "pick another --target, or a smaller file size"
            ) from None
        raise UsageError(f"cannot create the test file {path}: {err.strerror}; pick another --target") from None
    return TestFile(path=path, size_bytes=size_bytes, created=True, reused=False)


def remove_test_file(tf: TestFile) -> None:
    """Delete a memstor test file and its marker; never a raw device or a file whose marker does not match."""
    if not tf.created:
        return
    path = Path(tf.path)
    if not os.path.lexists(path):
        with contextlib.suppress(OSError):
            marker_path(path).unlink()
        return
    ok, why = owned(path)
    if not ok:
        raise UnsafeTarget(f"not deleting {path}: {why}; memstor deletes only its own test file")
    path.unlink()
    with contextlib.suppress(OSError):
        marker_path(path).unlink()


def kept_test_file(directory: Path) -> TestFile | None:
    """memstor's test file left in ``directory`` for reuse (its marker verified), or None when there is none.

    UnsafeTarget when a file of that name is there but is not memstor's (never reported as ours, never deleted).
    """
    path = Path(directory) / TESTFILE_NAME
    if not os.path.lexists(path):
        return None
    ok, why = owned(path)
    if not ok:
        raise UnsafeTarget(f"{path} is not memstor's test file ({why}); memstor leaves it alone")
    return TestFile(path=path, size_bytes=path.stat().st_size, created=True, reused=True)


# --------------------------------------------------------------------------------------- raw devices



def _family(rdev: int, root: Path = SYSTEM_ROOT) -> list[tuple[int, Path]]:
    """The device and its partitions as (device number, sysfs folder)."""
    d = sys_block(rdev, root)
    fam = [(rdev, d)] if d else []
    if d:
        for sub in sorted(d.iterdir()):
            if (sub / "partition").exists():
                with contextlib.suppress(OSError, ValueError):
                    major, minor = (sub / "dev").read_text().strip().split(":")
                    fam.append((os.makedev(int(major), int(minor)), sub))
    return fam


def check_device(device: str | None, confirm_device: str | None, size_bytes: int,
                 root: Path = SYSTEM_ROOT) -> TestFile:
    """A raw block device fio may write to, after every check; UnsafeTarget/UsageError otherwise.

    Both names must be given and be block devices (stat'ed as given, never under root); the rest is
    decided by check_device_numbers from their device numbers, with /proc and /sys read under root.
    """
    if not device or not confirm_device:
        named = device or confirm_device
        raise UnsafeTarget(
            f"raw device {named}: writing to it destroys its data; to really do it, name the same device "
            f"twice (device={named} confirm_device={named}), else use --target DIR"
        )
    rdevs = []
    for param, name in (("device", device), ("confirm_device", confirm_device)):
        try:
            st = os.stat(name)
        except OSError as err:
            raise UsageError(f"{param}={name}: {err.strerror}; name an existing block device such as /dev/sdX") from None
        if not stat.S_ISBLK(st.st_mode):
            what = (_describe_special(st.st_mode, st.st_rdev, root)
                    or ("a directory" if stat.S_ISDIR(st.st_mode) else "a file"))
            raise UnsafeTarget(f"{param}={name} is {what}, not a block device: use --target DIR for a test file")
        rdevs.append(st.st_rdev)
    return check_device_numbers(device, confirm_device, rdevs[0], rdevs[1], size_bytes,
                                real=Path(os.path.realpath(device)), root=root)


def _device_bytes(rdev: int, root: Path = SYSTEM_ROOT) -> int | None:
    """Size in bytes of block device number `rdev` from sysfs (512-byte sectors), None when unreadable."""
    with contextlib.suppress(OSError, ValueError, TypeError):
        block = sys_block(rdev, root)
        if block is not None:
            return int((block / "size").read_text()) * 512
    return None


def device_bytes(device: Path | str, root: Path = SYSTEM_ROOT) -> int | None:
    """Size in bytes of the block device at `device` (None when it is not one or sysfs is unreadable)."""
    try:
        st = os.stat(device)
    except OSError:
        return None
    return _device_bytes(st.st_rdev, root) if stat.S_ISBLK(st.st_mode) else None


def check_device_numbers(device: str, confirm_device: str, rdev: int, confirm_rdev: int, size_bytes: int,
                         real: Path | None = None, root: Path = SYSTEM_ROOT) -> TestFile:
    """The raw-device decision from device numbers; UnsafeTarget/UsageError, one line each, otherwise.

    device, confirm_device: the two names as given, block devices numbered rdev and confirm_rdev (both
    st_rdev). They must be the same device; neither it nor any of its partitions mounted
    (``/proc/self/mountinfo``, by number or source device), used as swap (``/proc/swaps``) or held
    (``/sys/.../holders``, LVM/md/dm); and it must hold size_bytes. real: the device's path for messages
    and the result (default: device). root: where /proc and /sys are read (``/``, or a recorded tree in
    tests).
    """
    if rdev != confirm_rdev:
        raise UnsafeTarget(
            f"device={device} and confirm_device={confirm_device} are different devices: name the same device "
            "twice to confirm, or use --target DIR"
        )
    real = Path(device) if real is None else Path(real)
    mounted, swaps = mounted_devices(root), swap_devices(root)
    for dev, sysdir in _family(rdev, root):
        name = sysdir.name if sysdir else str(real)
        if dev in mounted:
            raise UnsafeTarget(f"device {real}: {name} is mounted; unmount it first, or use --target on its mount point")
        if dev in swaps:
            raise UnsafeTarget(f"device {real}: {name} is used as swap; swapoff it first, or use --target DIR")
        holders = sysdir / "holders" if sysdir else None
        if holders and holders.is_dir() and any(holders.iterdir()):
            users = ", ".join(sorted(h.name for h in holders.iterdir()))
            raise UnsafeTarget(f"device {real}: {name} is in use by {users} (LVM/RAID/dm); free it first, or use --target DIR")
    dev_bytes = _device_bytes(rdev, root)
    if dev_bytes is not None and size_bytes > dev_bytes:
        raise UsageError(
            f"device {real} holds {size_text(dev_bytes)}, less than the asked {size_text(size_bytes)}: "
            "ask for a smaller size"
        )
    return TestFile(path=real, size_bytes=size_bytes, created=False)
