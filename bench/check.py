"""`make bench-check` (CI): measure the quick benchmark figures and fail when one is worse than its committed
baseline (bench/baseline.json) by more than its tolerance, naming the figure, the baseline and the commit
that set it. ``--write-baseline --reason "..."`` writes the measured medians as the new baseline instead (then
commit the file: a baseline changes only by such a deliberate commit).

Usage: bench/check.py [--only FIGURES] [--reps N] [--files N] [--baseline FILE] [--out DIR]
                      [--write-baseline --reason TEXT [--tolerance FRACTION]]
Exit status: 0 every figure within its baseline (or the baseline written), 1 a figure worse, not measured or
without a baseline, 2 a usage error. Each figure is a median of --reps (>= 3) repetitions in this one run.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import baseline
from common import MIN_REPS, Config, cached_bytecode, load_average, machine_line, write_report
from harness import FIGURES, run_figures

from memstor.cli import guarded
from memstor.core.errors import UsageError

#: The figures CI checks (about a minute here): CLI start-up, parse throughput, the no-op make all.
CHECK_FIGURES = ("startup", "parse", "noop-make")


def main(argv: Sequence[str] | None = None) -> int:
    """The command line above, under memstor's error policy (one line, exit 2 for a usage error)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    return guarded(lambda: _main(argv), debug="--debug" in argv, prog="bench-check")


def _args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="bench/check.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", metavar="NAME,...", default=",".join(CHECK_FIGURES),
                    help=f"figures to measure (default {','.join(CHECK_FIGURES)}; any of {', '.join(FIGURES)})")
    ap.add_argument("--reps", type=int, default=MIN_REPS, help=f"repetitions per figure (>= {MIN_REPS})")
    ap.add_argument("--files", type=int, metavar="N", help="files of the parse figure (default 5,000)")
    ap.add_argument("--baseline", type=Path, default=baseline.BASELINE, help="baseline file (default bench/baseline.json)")
    ap.add_argument("--out", type=Path, metavar="DIR", help="also write bench.md and bench.csv there")
    ap.add_argument("--write-baseline", action="store_true", help="write the measured medians as the baseline")
    ap.add_argument("--reason", default="", help="why the baseline changes (required with --write-baseline)")
    ap.add_argument("--tolerance", type=float, metavar="FRACTION",
                    help="tolerance of the figures written (default: the entry's own, else bench/baseline.py's)")
    ap.add_argument("--debug", action="store_true", help="show Python tracebacks")
    args = ap.parse_args(argv)
    if args.reps < MIN_REPS:
        raise UsageError(f"--reps {args.reps}: every figure is a median of at least {MIN_REPS} repetitions")
    if args.files is not None and args.files < 1:
        raise UsageError(f"--files {args.files}: give a number of files >= 1")
    if args.write_baseline and not args.reason.strip():
        raise UsageError("--write-baseline needs --reason \"why this baseline\" (it goes into the file and the commit)")
    if args.tolerance is not None and not 0 <= args.tolerance < 10:
        raise UsageError(f"--tolerance {args.tolerance}: a fraction such as 0.3 (30 %)")
    unknown = [n for n in args.only.split(",") if n.strip() not in FIGURES]
    if unknown:
        raise UsageError(f"--only: unknown figure {', '.join(unknown)}; choose from {', '.join(FIGURES)}")
    return args


def _main(argv: list[str]) -> int:
    args = _args(argv)
    cached_bytecode()
    try:
        current = baseline.load(args.baseline)
    except ValueError as err:
        raise UsageError(str(err)) from None
    work = Path(tempfile.mkdtemp(prefix="memstor-bench-check-"))
    cfg = Config(out=args.out or work, reps=args.reps, work=work, parse_files=args.files)
    started = time.perf_counter()
    try:
        figures = run_figures(cfg, [n.strip() for n in args.only.split(",")])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    machine = machine_line()
    if args.out:
        write_report(args.out, figures, machine, {"summary": machine},
                     {"reps": args.reps, "load_after": load_average()}, baseline.versus_column(figures, current))
    if args.write_baseline:
        try:
            new = baseline.updated(current, figures, args.reason, machine, args.reps, args.tolerance)
        except ValueError as err:
            print(f"bench-check: {err}", file=sys.stderr)
            return 1
        baseline.write(new, args.baseline)
        print(f"bench-check: wrote {', '.join(f.name for f in figures)} to {args.baseline}; commit it with its "
              f"reason: git add {args.baseline} && git commit -m \"Bench baseline: {args.reason.strip()}\"",
              file=sys.stderr)
        return 0
    verdicts = [baseline.compare(f, current.get(f.name), args.baseline) for f in figures]
    for v in verdicts:
        print(f"bench-check: {'ok  ' if v.ok else 'FAIL'} {v.line}", file=sys.stderr)
    bad = [v.name for v in verdicts if not v.ok]
    print(f"bench-check: {len(verdicts) - len(bad)} of {len(verdicts)} figures within their baselines "
          f"({time.perf_counter() - started:.0f} s, {machine})" + (f"; worse or unchecked: {', '.join(bad)}" if bad else ""),
          file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
