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
from memstor.errors import UnsafeTarget, UsageError

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


def _fmt_bytes(n: float) -> str:
    """Human size in binary units (``1.5 GiB``), for messages."""
    for unit, div in (("TiB", 1 << 40), ("GiB", GiB), ("MiB", MiB), ("KiB", 1024)):
        if abs(n) >= div:
            return f"{n / div:.1f} {unit}"
    return f"{int(n)} B"


def _sys_block(rdev: int) -> Path | None:
    """The sysfs folder of a block device number (``/sys/dev/block/MAJ:MIN`` resolved), or None."""
    p = Path(f"/sys/dev/block/{os.major(rdev)}:{os.minor(rdev)}")
    try:
        return p.resolve(strict=True)
    except OSError:
        return None


def is_partition(rdev: int) -> bool:
    """True when the block device number is a partition (sysfs has a ``partition`` file)."""
    d = _sys_block(rdev)
    return bool(d and (d / "partition").exists())


def _block_kind(rdev: int) -> str:
    """'a partition' or 'a block device', for messages."""
    return "a partition" if is_partition(rdev) else "a block device"


def _describe_special(path: Path, st: os.stat_result) -> str | None:
    """'a block device' / 'a partition' / 'a character device' / 'a FIFO' / 'a socket', or None."""
    if stat.S_ISBLK(st.st_mode):
        return _block_kind(st.st_rdev)
    if stat.S_ISCHR(st.st_mode):
        return "a character device"
    if stat.S_ISFIFO(st.st_mode):
        return "a FIFO"
    if stat.S_ISSOCK(st.st_mode):
        return "a socket"
    return None


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
    special = _describe_special(directory, st)
    if special:
        kind = "raw device" if special in ("a block device", "a partition") else "special file"
        way = (
            "give a directory on a mounted filesystem (e.g. the disk's mount point); to test the raw device "
            "itself (destroys its data) name it twice: device=DEV confirm_device=DEV"
            if kind == "raw device"
            else "give a directory on a disk filesystem"
        )
        raise UnsafeTarget(f"{given_as} {directory}{via} is {special}: memstor never writes to a {kind}; {way}")
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
    from memstor.sweep import read_json

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
    from memstor.sweep import utc_now, write_json

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
    from memstor.sweep import utc_now

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
            f"no room in {directory}: the test file needs {_fmt_bytes(size_bytes)} plus a margin of "
            f"{_fmt_bytes(margin)} (min(10% of the filesystem, 1 GiB)) and {_fmt_bytes(avail + existing)} "
            f"is free; free space, pick another --target, or a smaller file size"
        )
    if existing or os.path.lexists(path):
        path.unlink()  # ours (marker verified above), but the wrong size or never finished
    try:
        _create(path, size_bytes)
    except OSError as err:
        if err.errno in (errno.ENOSPC, errno.EDQUOT):
            raise UnsafeTarget(
                f"no room in {directory} while writing the {_fmt_bytes(size_bytes)} test file: free space, "
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


# --------------------------------------------------------------------------------------- raw devices


def _mounted_devices() -> set[int]:
    """Device numbers of every mounted filesystem (``/proc/self/mountinfo``)."""
    out: set[int] = set()
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            fields = line.split()
            if len(fields) > 2 and ":" in fields[2]:
                major, minor = fields[2].split(":", 1)
                with contextlib.suppress(ValueError):
                    out.add(os.makedev(int(major), int(minor)))
    return out


def _swap_devices() -> set[int]:
    """Device numbers of block devices used as swap (``/proc/swaps``)."""
    out: set[int] = set()
    with contextlib.suppress(OSError):
        for line in Path("/proc/swaps").read_text().splitlines()[1:]:
            name = line.split()[0] if line.split() else ""
            with contextlib.suppress(OSError):
                st = os.stat(name)
                if stat.S_ISBLK(st.st_mode):
                    out.add(st.st_rdev)
    return out


def _family(rdev: int) -> list[tuple[int, Path]]:
    """The device and its partitions as (device number, sysfs folder)."""
    d = _sys_block(rdev)
    fam = [(rdev, d)] if d else []
    if d:
        for sub in sorted(d.iterdir()):
            if (sub / "partition").exists():
                with contextlib.suppress(OSError, ValueError):
                    major, minor = (sub / "dev").read_text().strip().split(":")
                    fam.append((os.makedev(int(major), int(minor)), sub))
    return fam


def check_device(device: str | None, confirm_device: str | None, size_bytes: int) -> TestFile:
    """A raw block device fio may write to, after every check; UnsafeTarget/UsageError otherwise."""
    if not device or not confirm_device:
        named = device or confirm_device
        raise UnsafeTarget(
            f"raw device {named}: writing to it destroys its data; to really do it, name the same device "
            f"twice (device={named} confirm_device={named}), else use --target DIR"
        )
    sts = []
    for param, name in (("device", device), ("confirm_device", confirm_device)):
        try:
            st = os.stat(name)
        except OSError as err:
            raise UsageError(f"{param}={name}: {err.strerror}; name an existing block device such as /dev/sdX") from None
        if not stat.S_ISBLK(st.st_mode):
            what = _describe_special(Path(name), st) or ("a directory" if stat.S_ISDIR(st.st_mode) else "a file")
            raise UnsafeTarget(f"{param}={name} is {what}, not a block device: use --target DIR for a test file")
        sts.append(st)
    if sts[0].st_rdev != sts[1].st_rdev:
        raise UnsafeTarget(
            f"device={device} and confirm_device={confirm_device} are different devices: name the same device "
            "twice to confirm, or use --target DIR"
        )
    real = Path(os.path.realpath(device))
    rdev = sts[0].st_rdev
    mounted, swaps = _mounted_devices(), _swap_devices()
    for dev, sysdir in _family(rdev):
        name = sysdir.name if sysdir else str(real)
        if dev in mounted:
            raise UnsafeTarget(f"device {real}: {name} is mounted; unmount it first, or use --target on its mount point")
        if dev in swaps:
            raise UnsafeTarget(f"device {real}: {name} is used as swap; swapoff it first, or use --target DIR")
        holders = sysdir / "holders" if sysdir else None
        if holders and holders.is_dir() and any(holders.iterdir()):
            users = ", ".join(sorted(h.name for h in holders.iterdir()))
            raise UnsafeTarget(f"device {real}: {name} is in use by {users} (LVM/RAID/dm); free it first, or use --target DIR")
    d = _sys_block(rdev)
    dev_bytes = None
    with contextlib.suppress(OSError, ValueError, TypeError):
        dev_bytes = int((d / "size").read_text()) * 512  # sysfs counts 512-byte sectors
    if dev_bytes is not None and size_bytes > dev_bytes:
        raise UsageError(
            f"device {real} holds {_fmt_bytes(dev_bytes)}, less than the asked {_fmt_bytes(size_bytes)}: "
            "ask for a smaller size"
        )
    return TestFile(path=real, size_bytes=size_bytes, created=False)
