"""``memstor summary``: per-configuration summary (n, mean, 95 % CI) of every device's fio results."""

from __future__ import annotations

import argparse
import sys

from memstor.analysis import dataset, synthesis
from memstor.cli._common import EXIT_OK, EXIT_PARTIAL, emit
from memstor.experiments import kinds


def main(args: argparse.Namespace) -> int:
    """Write the summary CSV (stdout or ``-o``); EXIT_PARTIAL when a processed table had a problem."""
    ds = dataset.load_dataset(args.data, kinds())
    for problem in ds.problems:
        print(f"memstor: {problem}", file=sys.stderr)
    text = synthesis.fio_summary(ds).to_csv(index=False)
    emit(text, args.output)
    return EXIT_PARTIAL if ds.problems else EXIT_OK
