"""``memstor cliffs``: change points (cliffs) in fio bw/iops logs or per-second CSVs -> CSV."""

from __future__ import annotations

import argparse
import sys

from memstor.analysis.cliffs import CLIFF_COLUMNS, find_cliffs
from memstor.cli._common import EXIT_OK, EXIT_PARTIAL, emit
from memstor.core.errors import MemstorError, first_line
from memstor.parse.cliff_input import collect_inputs, read_throughput_series


def main(args: argparse.Namespace) -> int:
    """One CSV row per change found in each input (series), with the input as ``source``."""
    inputs, notes, errors = collect_inputs(args.paths)
    for line in notes:
        print(f"memstor cliffs: {line}", file=sys.stderr)
    tables = []
    for inp in inputs:
        try:
            series, column, unit = read_throughput_series(inp.paths)
            found = find_cliffs(series, column, unit=unit, block_size_bytes=args.block_size)
        except MemstorError as err:
            errors.append(first_line(err))
            continue
        note = series.attrs.get("note")
        print(f"memstor cliffs: {inp.source}: {len(found)} change(s) in {len(series)} s"
              + (f" ({note})" if note else ""), file=sys.stderr)
        tables.append(found.assign(source=inp.source)[["source", *CLIFF_COLUMNS]])
    for line in errors:
        print(f"memstor: {line}", file=sys.stderr)
    if not tables and errors:
        return EXIT_PARTIAL
    header = ",".join(["source", *CLIFF_COLUMNS]) + "\n"
    text = header + "".join(t.to_csv(index=False, header=False) for t in tables)
    emit(text, args.output)
    return EXIT_PARTIAL if errors else EXIT_OK
