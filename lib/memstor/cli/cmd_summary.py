"""``memstor summary``: per-configuration summary (n, mean, 95 % CI) of every device's fio results."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from memstor.analysis import dataset, synthesis
from memstor.cli._common import EXIT_OK, EXIT_PARTIAL
from memstor.core.files import atomic_write
from memstor.experiments import kinds


def main(args: argparse.Namespace) -> int:
    """Write the summary CSV (stdout or ``-o``); EXIT_PARTIAL when a processed table had a problem."""
    ds = dataset.load_dataset(args.data, kinds())
    for problem in ds.problems:
        print(f"memstor: {problem}", file=sys.stderr)
    text = synthesis.fio_summary(ds).to_csv(index=False)
    if args.output:
        out = Path(args.output)
        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(out, text)
    else:
        sys.stdout.write(text)
    return EXIT_PARTIAL if ds.problems else EXIT_OK
