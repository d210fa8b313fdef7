"""``memstor parse``: fio/MLC output files -> tidy CSV (memstor.parse.files does the work)."""

from __future__ import annotations

import argparse
import gc
import sys
from pathlib import Path

from memstor.cli._common import EXIT_OK, EXIT_PARTIAL
from memstor.core.errors import UsageError
from memstor.parse.files import parse_paths, to_csv, write_bins_csv, write_csv, write_csv_text


def main(args: argparse.Namespace) -> int:
    """Parse ``args.paths`` (files or folders) into fio.csv / mlc.csv or stdout; the exit status."""
    # The rows (dicts of numbers and texts) and their CSV lines hold no reference cycles, so the cyclic collector,
    # which their growing number sets off again and again, has nothing to find: off while they are made and
    # written (17 of its 37 collections in a 5,000-file parse, 2 ms; issue 39); they are freed by their references.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _parse(args)
    finally:
        if collecting:
            gc.enable()


def _parse(args: argparse.Namespace) -> int:
    """:func:`main`'s work."""
    # the json+ bins are written only beside fio.csv in an output folder (no --kind): made only then; with --kind
    # there is one table, whose CSV lines are made as the files are read (memstor.parse.files.ParseOutcome)
    outcome = parse_paths(args.paths, args.kind, bins=not args.kind and bool(args.output), lines=bool(args.kind))
    out = Path(args.output) if args.output else None
    if not args.kind and out is None and sum(map(bool, outcome.rows.values())) > 1:
        found = " and ".join(kind for kind, rows in outcome.rows.items() if rows)
        raise UsageError(f"these paths hold {found} outputs: use -o OUTDIR (writes fio.csv, mlc.csv and "
                         "diskplorer.csv when it has rows) or --kind fio|mlc|diskplorer")
    for line in outcome.errors:
        print(line.replace("\n", " "), file=sys.stderr)
    if args.kind:
        if out is not None and (out.is_dir() or args.output.endswith(("/", "\\"))):
            out = out / f"{args.kind}.csv"
        if out is None:
            sys.stdout.write(outcome.csv_text())
        else:
            write_csv_text(out, outcome.csv_text())
    elif out is None:
        kind = next((k for k in ("mlc", "diskplorer") if outcome.rows[k]), "fio")
        sys.stdout.write(to_csv(outcome.rows[kind], kind))
    else:
        if out.suffix.lower() == ".csv":
            raise UsageError(f"-o {out}: without --kind, -o names a folder (it gets fio.csv and mlc.csv)")
        for kind in ("fio", "mlc"):
            write_csv(out / f"{kind}.csv", outcome.rows[kind], kind)
        if outcome.rows["diskplorer"]:  # diskplorer's grid cells (memstor.parse.diskplorer), only when found
            write_csv(out / "diskplorer.csv", outcome.rows["diskplorer"], "diskplorer")
        if outcome.bins:  # fio's json+ histograms beside fio.csv, for the analysis (memstor.analysis.histograms)
            write_bins_csv(out, outcome.bins)
    nrows = sum(map(len, outcome.rows.values())) + outcome.line_rows
    if out is not None:
        print(f"memstor parse: {outcome.files} files, {nrows} rows, {len(outcome.errors)} problems -> {out}",
              file=sys.stderr)
    return EXIT_PARTIAL if outcome.errors else EXIT_OK
