"""``memstor sysinfo``: JSON description of the machine under test (memstor.measure.sysinfo)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from memstor.cli._common import EXIT_OK
from memstor.measure.sysinfo import collect


def main(args: argparse.Namespace) -> int:
    """Print the machine's description; the drive described is ``--device``, else ``--target``'s, else
    the one under ``DATA/scratch``."""
    target = Path(args.target) if args.target else None
    drive_of = args.device or target or Path(args.data) / "scratch"
    print(json.dumps(collect(target, drive_of=drive_of, raw=bool(args.device)), indent=2, default=str))
    return EXIT_OK
