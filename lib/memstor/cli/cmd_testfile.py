"""``memstor testfile``: prepare memstor's fio test file (fleet runs call it) or remove it."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from memstor.cli._common import EXIT_OK
from memstor.core.errors import UsageError
from memstor.core.units import size_text
from memstor.measure.fleet_target import local_target
from memstor.measure.target import kept_test_file, remove_test_file


def main(args: argparse.Namespace) -> int:
    """Prepare the test file and print it as JSON, or (``--remove``) delete memstor's own test file."""
    if args.remove:
        return _remove(args)
    if not args.target and not args.device:
        raise UsageError("memstor testfile: give --target DIR (or --device DEV --confirm-device DEV)")
    if args.size is None:
        raise UsageError("memstor testfile: give --size BYTES to prepare the test file, or --remove to delete it")
    info = local_target(args.size, args.target, args.device, args.confirm_device, args.ioengine, args.direct)
    print(json.dumps(info, sort_keys=True))
    return EXIT_OK


def _remove(args: argparse.Namespace) -> int:
    """``--remove --target DIR``: delete the test file memstor made there (its marker checked)."""
    if args.device or not args.target:
        raise UsageError("memstor testfile --remove: give --target DIR, the folder holding the test file "
                         "(a raw device is never removed)")
    tf = kept_test_file(Path(args.target))
    if tf is None:
        print(f"memstor testfile: no test file in {args.target}; nothing to remove", file=sys.stderr)
        return EXIT_OK
    remove_test_file(tf)
    print(f"memstor testfile: removed {tf.path} ({size_text(tf.size_bytes)})", file=sys.stderr)
    return EXIT_OK
