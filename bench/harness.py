"""`make bench`: memstor's benchmark harness (issue 7) -> ``<out>/bench.md`` and ``<out>/bench.csv``.

These machines are shared and noisy, so every figure is the RATIO of two things measured in the same
run, right after each other (their order alternates between repetitions), reported as the median of
``--reps`` (>= 3) repetitions with the min-max spread. Wall times come from ``time.perf_counter``.

Figures (``--only`` takes these names, comma separated):

``overhead``   a sweep of 8 fio points x 1 s through ``memstor.measure.sweep.run_sweep`` + ``FioRunner`` (fresh
               data folder per repetition, no progress bar; the I/O engine is probed once, untimed)
               vs the exact fio command lines from the points' ``.meta.json`` run by bash: wall time.
``parse``      ``memstor parse --kind fio DIR -o out.csv`` (a subprocess) over 5,000 copies of real fio
               JSON outputs vs a ``python -c`` loop of bare ``json.load`` over the same files: wall time.
``rebuild``    in a fresh checkout of the repository: a second ``make all PROFILE=quick`` vs the first
               (no-op rebuild), and ``make report`` vs the first (report-only rebuild; reported only).
``latency``    ``loadlat --idle_latency -b1g -L`` vs the independent pointer chase ``build/bin/chase``
               (``bench/chase.c``) over 1 GiB with huge pages: ns per load.
``bandwidth``  ``loadlat --loaded_latency -d0 -T -R`` vs ``likwid-bench -t load_avx -w S0:1GB:N`` with
               N = 1 and 2 threads: decimal MB/s.
``qd``         the fio-queue-depth experiment's best 4K randread IOPS vs the best of a hand-written fio
               grid numjobs {1,2,4} x iodepth {16..256} on the same test file.
``precision``  the standard fio-queue-depth sweep with ``precision_pct: 2`` vs the same sweep at its fixed
               runtime: wall time (target ≤ 0.5), with the achieved half-widths of both in the notes.
``auto-grid``  the standard 4K randread queue-depth sweep with ``iodepth: auto`` vs the listed depths 1..1024:
               wall time (target < 1) and best IOPS (target ≥ 0.97).
``honesty``    one 4K QD1 randread point run 5 times at 10 s: the mean within-run batch-means half-width
               vs the between-run t-interval's (IOPS and mean latency; target 0.5–2).
``startup``    ``memstor --help`` and a usage error (``memstor parse``, exit 2) vs ``python -c pass``: wall time,
               the shortest of 10 runs per repetition (``startup-help``, ``startup-usage``).
``noop-make``  ``make all PROFILE=quick`` in a fresh checkout whose targets are all up to date (``make -t``) vs
               a fixed pure-Python loop of about a second: wall time.
``fast-tier``  ``make test-fast`` vs a fixed pure-Python loop: wall time (not in --smoke).

Every figure is also set beside its committed baseline (bench/baseline.json: value, tolerance, reason, commit)
in bench.md's ``vs baseline`` column; ``bench/check.py`` (``make bench-check``, in CI) measures the quick ones
and fails on a figure worse than its baseline by more than its tolerance.

A figure whose prerequisite is missing (a tool not installed or not built, likwid-bench refused by the
VM...) is reported as ``not measured: <reason>``; the other figures still run.
``--smoke`` shrinks every figure (200 files, 2 fio points of 0.5 s, small buffers) to test the harness.

The harness (this file: the figure registry, running the figures, the command line) and ``common.py``
(statistics, figures, timing, report files) are shared; each figure family has its own module:
``fig_overhead``, ``fig_parse``, ``fig_rebuild``, ``fig_loadlat`` (latency, bandwidth), ``fig_queue_depth``
(qd, precision, auto-grid, honesty), ``fig_steady``, ``fig_openloop``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import baseline
from common import (
    MIN_REPS,
    Config,
    Figure,
    NotMeasured,
    Target,
    cached_bytecode,
    load_average,
    machine_summary,
    median,
    write_report,
)
from fig_loadlat import fig_bandwidth, fig_latency
from fig_openloop import fig_openloop
from fig_overhead import fig_overhead
from fig_parse import fig_parse
from fig_queue_depth import fig_auto_grid, fig_honesty, fig_precision, fig_qd
from fig_rebuild import fig_rebuild
from fig_startup import fig_fast_tier, fig_noop_make, fig_startup
from fig_steady import fig_steady_state

from memstor.cli import guarded
from memstor.core.errors import Interrupted, UsageError, first_line

FIGURES: dict[str, Callable[[Config], list[Figure]]] = {
    "overhead": fig_overhead,
    "parse": fig_parse,
    "rebuild": fig_rebuild,
    "latency": fig_latency,
    "bandwidth": fig_bandwidth,
    "qd": fig_qd,
    "steady": fig_steady_state,
    "openloop": fig_openloop,
    "precision": fig_precision,
    "auto-grid": fig_auto_grid,
    "honesty": fig_honesty,
    "startup": fig_startup,
    "noop-make": fig_noop_make,
    "fast-tier": fig_fast_tier,
}


def run_figures(cfg: Config, names: Sequence[str]) -> list[Figure]:
    """Measure the named figures in order; any error becomes that figure's `not measured` reason."""
    out: list[Figure] = []
    for name in names:
        cfg.log(f"bench: {name} (load average {load_average()})")
        t0 = time.perf_counter()
        try:
            figs = FIGURES[name](cfg)
        except NotMeasured as err:
            figs = [Figure(name, name, name, Target(), not_measured=str(err))]
        except Exception as err:  # noqa: BLE001 - one figure's bug must not lose the others
            figs = [Figure(name, name, name, Target(),
                           not_measured=f"{type(err).__name__}: {first_line(err)}")]
        for f in figs:
            f.elapsed_s = time.perf_counter() - t0
            ratio = f"{median(f.ratios()):.3f}" if f.samples else "–"
            cfg.log(f"bench: {f.name}: ratio {ratio} target {f.target.text()} -> {f.verdict()}"
                    + (f" ({f.not_measured})" if f.not_measured else "")
                    + (f" ({f.failure})" if f.failure else ""))
        out.extend(figs)
    return out


def _names(only: str | None) -> list[str]:
    """Figure names from --only (comma separated), in the canonical order; SystemExit(2) if unknown."""
    if not only:
        return list(FIGURES)
    asked = [n.strip() for n in only.split(",") if n.strip()]
    bad = [n for n in asked if n not in FIGURES]
    if bad or not asked:
        raise UsageError(f"--only {only!r}: unknown figure {', '.join(bad) or '(none)'}; choose from "
                         f"{', '.join(FIGURES)}")
    return [n for n in FIGURES if n in asked]


def main(argv: Sequence[str] | None = None) -> int:
    """`bench/harness.py --out DIR [--only NAME,...] [--reps N] [--smoke] [--keep] [--strict]` (`make bench`),
    under the `memstor` command's error and exit-status policy."""
    argv = list(sys.argv[1:] if argv is None else argv)
    return guarded(lambda: _main(argv), debug="--debug" in argv, prog="memstor bench")


def _main(argv: list[str]) -> int:
    cached_bytecode()
    ap = argparse.ArgumentParser(prog="bench/harness.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, metavar="DIR", help="folder for bench.md, bench.csv")
    ap.add_argument("--only", metavar="NAME,...", help="figures to measure: " + ", ".join(FIGURES))
    ap.add_argument("--reps", type=int, default=MIN_REPS, help=f"repetitions per figure (>= {MIN_REPS})")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: tests the harness, measures nothing real")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder (printed at the end)")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a measured figure misses its target")
    ap.add_argument("--debug", action="store_true", help="show Python tracebacks")
    args = ap.parse_args(argv)
    if args.reps < MIN_REPS:
        raise UsageError(f"--reps {args.reps}: every figure is a median of at least {MIN_REPS} repetitions; "
                         f"use --reps {MIN_REPS} or more")
    names = _names(args.only)
    out = Path(args.out)
    work = Path(tempfile.mkdtemp(prefix="memstor-bench-"))
    cfg = Config(out=out, reps=args.reps, smoke=args.smoke, work=work)
    meta = {"started": _now(), "reps": args.reps, "smoke": args.smoke, "load_before": load_average()}
    machine, machine_full = machine_summary()
    try:
        figures = run_figures(cfg, names)
    except KeyboardInterrupt:
        raise Interrupted("interrupted; nothing written") from None
    finally:
        if args.keep:
            print(f"memstor bench: scratch folder kept: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    meta.update(finished=_now(), load_after=load_average())
    try:
        versus = baseline.versus_column(figures, baseline.load())
    except ValueError as err:
        versus = {f.name: f"baseline unreadable: {err}" for f in figures}
    write_report(out, figures, machine, machine_full, meta, versus)
    print(f"memstor bench: wrote {out / 'bench.md'} and {out / 'bench.csv'}", file=sys.stderr)
    missed = [f.name for f in figures if f.verdict() == "fail"]
    return 1 if (args.strict and missed) else 0


def _now() -> str:
    """UTC now, ISO-8601 to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


if __name__ == "__main__":
    sys.exit(main())
