"""Record the /proc and /sys entries memstor.target reads into a small tree for the unprivileged tests.

Usage (as any user, on the machine to record): ``python3 record.py DEST NAME...`` with kernel block
device names (``nvme0n1``, ``sda``, ``loop0``...). Writes under DEST:

- ``proc/self/mountinfo`` (lines of block-device mounts only: major != 0, or a ``/dev/`` source, as
  btrfs reports an anonymous ``0:NN``) and ``proc/swaps``;
- for each NAME and its partitions: the sysfs folder (``dev``, ``size``, ``ro``, ``removable``, and
  ``partition``/``start`` for a partition, ``dm/name`` for a device-mapper ``dm-N``), its ``holders/``
  symlinks (an empty ``holders/`` is left out: git keeps no empty folders, and a missing one reads as
  no holders), and the ``sys/dev/block/MAJ:MIN``, ``sys/class/block/NAME`` and (whole devices)
  ``sys/block/NAME`` symlinks, all relative as in sysfs. Name the ``dm-N`` behind a ``/dev/mapper/X``
  mount source too, so the tests can resolve it.

Review the result before committing it (mount points and names are machine details).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

FILES = ("dev", "size", "ro", "removable", "partition", "start", "dm/name")


def _copy_link(link: Path, dest_root: Path) -> None:
    """Recreate the symlink ``link`` (an absolute path under /) at the same place under dest_root."""
    out = dest_root / str(link).lstrip("/")
    out.parent.mkdir(parents=True, exist_ok=True)
    if not out.is_symlink():
        out.symlink_to(os.readlink(link))


def _record_block(folder: Path, dest_root: Path) -> None:
    """Copy one sysfs block folder (resolved) and, recursively, its partition sub-folders."""
    out = dest_root / str(folder).lstrip("/")
    out.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        if (folder / name).is_file():
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            (out / name).write_text((folder / name).read_text())
    if (folder / "holders").is_dir():
        for link in sorted((folder / "holders").iterdir()):
            _copy_link(link, dest_root)
    name = folder.name
    _copy_link(Path("/sys/class/block") / name, dest_root)
    if (Path("/sys/block") / name).is_symlink():
        _copy_link(Path("/sys/block") / name, dest_root)
    _copy_link(Path("/sys/dev/block") / (folder / "dev").read_text().strip(), dest_root)
    for part in sorted(folder.iterdir()):
        if part.is_dir() and (part / "partition").is_file():
            _record_block(part, dest_root)


def _block_mount(line: str) -> bool:
    """True for a mountinfo line of a block-device mount: a real MAJ:MIN, or a source under /dev/."""
    fields = line.split()
    if len(fields) > 2 and not fields[2].startswith("0:"):
        return True
    sep = fields.index("-", 6) if "-" in fields[6:] else -1
    return sep > 0 and len(fields) > sep + 2 and fields[sep + 2].startswith("/dev/")


def main(argv: list[str]) -> int:
    """Record the devices named in argv[1:] into argv[0]."""
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    dest = Path(argv[0])
    (dest / "proc" / "self").mkdir(parents=True, exist_ok=True)
    lines = [ln for ln in Path("/proc/self/mountinfo").read_text().splitlines() if _block_mount(ln)]
    (dest / "proc" / "self" / "mountinfo").write_text("".join(ln + "\n" for ln in lines))
    (dest / "proc" / "swaps").write_text(Path("/proc/swaps").read_text())
    for name in argv[1:]:
        _record_block((Path("/sys/class/block") / name).resolve(strict=True), dest)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
