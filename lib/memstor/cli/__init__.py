"""The `memstor` command line (contract in DESIGN.md). No Python traceback reaches a user without --debug.

Start-up budget: ``memstor --help``, ``memstor --version`` and a usage error take at most
:data:`STARTUP_BUDGET_S` (0.2 s, whole process, median of 5 on the 2-vCPU VM of the README), and
``memstor params`` (which ``make all`` runs once per notebook, even when nothing is to be done) about as
long. So this module imports only argparse, memstor.core.errors and memstor.core.files: ``python -X importtime
-m memstor.cli --help`` shows about 25 ms of imports (before: 450 ms, pandas, numpy, the fleet and the fio
runner; then 45 ms with the experiment registry, whose profiles' YAML is 13 ms of it: the registry is imported
by :func:`_experiment_help` only for a command line that names ``run``, whose help lists the names). Each
subcommand's code lives in its own module ``memstor.cli.cmd_<name>`` (``main(args) -> exit status``),
imported by :data:`COMMANDS` only when that subcommand runs: ``memstor parse`` never imports pandas or the
measure layer, ``memstor run`` imports what a sweep needs. tests/test_cli.py checks which modules each of
these imports; ``make bench-check`` (bench/check.py, in CI) times them against ``python -c pass``.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import signal
import sys
import threading
from pathlib import Path

from memstor import __version__
from memstor.cli._common import EXIT_NOT_HERE, EXIT_OK, EXIT_PARTIAL, EXIT_USAGE
from memstor.core.errors import Interrupted, MemstorError, NotOnThisMachine, UsageError, first_line

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (2 ms of start-up; mypy reads it as True)
if TYPE_CHECKING:
    from typing import NoReturn

__all__ = ["COMMANDS", "EXIT_NOT_HERE", "EXIT_OK", "EXIT_PARTIAL", "EXIT_USAGE", "STARTUP_BUDGET_S", "guarded",
           "main"]

#: Seconds `memstor --help`, `--version` or a usage error may take, whole process (see the module docstring).
STARTUP_BUDGET_S = 0.2


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit status 2."""

    def error(self, message: str) -> NoReturn:  # noqa: D102
        sub = self.prog.removeprefix("memstor").strip()  # the CLI prints "memstor: " itself, once
        raise UsageError(f"{sub + ': ' if sub else ''}{message} (see {self.prog} --help)")


def _build_parser(argv: list) -> argparse.ArgumentParser:
    """The parser of ``argv`` (a command line that does not name ``run`` gets no experiment names in run's help,
    which it cannot show: :func:`_experiment_help`)."""
    # a _Parser like the subcommands (add_parser's parents are typed by parser_class); a parent only lends its
    # arguments, its error() never runs
    common = _Parser(add_help=False)
    common.add_argument("--debug", action="store_true", help="show Python tracebacks")
    p = _Parser(prog="memstor", parents=[common],
                description="Reproducible memory and storage performance profiling (fio, Intel MLC, loadlat).")
    p.add_argument("--version", action="version", version=f"memstor {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    pp = sub.add_parser("parse", parents=[common], help="fio/MLC output files -> tidy CSV")
    pp.add_argument("--kind", choices=("fio", "mlc", "diskplorer"),
                    help="force the parser (default: detect per file)")
    pp.add_argument("paths", nargs="+", metavar="PATH", help="files or folders (recursive)")
    pp.add_argument("-o", "--output", metavar="OUT",
                    help="CSV file (with --kind) or folder (writes fio.csv and mlc.csv); default stdout")

    pr = sub.add_parser("run", parents=[common], help="run or resume one experiment sweep")
    pr.add_argument("experiment", metavar="EXPERIMENT", help=_experiment_help(argv))
    pr.add_argument("--profile", default="standard",
                    help="quick | standard | full (params/<profile>.yaml; default standard) or a FILE.yaml")
    pr.add_argument("--target", metavar="DIR", help="directory for the fio test file (default DATA/scratch)")
    pr.add_argument("--data", metavar="DIR", default="data", help="data root holding raw/ and processed/")
    pr.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                    help="override one profile parameter (repeatable)")
    pr.add_argument("--host", help="host label for the data folders (default: this machine's hostname)")
    pr.add_argument("--hosts", metavar="HOSTS.yaml",
                    help="measure the hosts of this file over SSH (fio sweeps: every point on all hosts at once)")
    pr.add_argument("--no-progress", action="store_true", help="no progress bar")
    pr.add_argument("--skip-note", metavar="FILE",
                    help="when this machine cannot run the family (exit status 3), write the one-line reason here")

    ps = sub.add_parser("sysinfo", parents=[common], help="JSON description of the machine under test")
    ps.add_argument("--target", metavar="DIR", help="also describe the filesystem/device of DIR")
    ps.add_argument("--data", metavar="DIR", default="data",
                    help="data root: without --target or --device, the drive under DIR/scratch is described")
    ps.add_argument("--device", metavar="DEV", help="describe the drive of this raw block device instead")

    pt = sub.add_parser("testfile", parents=[common],
                        help="prepare memstor's fio test file in DIR and print it as JSON (fleet runs call it); "
                             "--remove deletes it")
    pt.add_argument("--size", type=int, metavar="BYTES", help="test file size in bytes (to prepare it)")
    pt.add_argument("--remove", action="store_true",
                    help="delete memstor's test file from --target DIR (only its own: the marker is checked)")
    pt.add_argument("--target", metavar="DIR", help="directory for the test file")
    pt.add_argument("--device", metavar="DEV", help="a raw block device instead (with --confirm-device DEV)")
    pt.add_argument("--confirm-device", metavar="DEV", help="the same device again: it will be written")
    pt.add_argument("--ioengine", default="io_uring", help="preferred engine (probed; default io_uring)")
    pt.add_argument("--direct", type=int, choices=(0, 1), default=1, help="O_DIRECT (probed when 1)")

    pa = sub.add_parser("params", parents=[common], help="print a profile section as YAML (for papermill -f)")
    pa.add_argument("experiment", metavar="EXPERIMENT")
    pa.add_argument("--profile", default="standard", help="a profile name or a FILE.yaml (default standard)")
    pa.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    pa.add_argument("--add", action="append", default=[], metavar="KEY=VALUE",
                    help="add a notebook parameter that is not in the profile (e.g. target_dir)")
    pa.add_argument("-o", "--output", metavar="FILE", help="write FILE only when its content changes")

    pm = sub.add_parser("summary", parents=[common],
                        help="per-configuration summary (n, mean, 95 %% CI) of every device's fio results")
    pm.add_argument("--data", metavar="DIR", default="data", help="data root holding processed/ (default data)")
    pm.add_argument("-o", "--output", metavar="FILE.csv", help="CSV file (default: stdout)")

    pc = sub.add_parser("cliffs", parents=[common],
                        help="change points (cliffs) in fio bw/iops logs or a per-second CSV -> CSV")
    pc.add_argument("paths", nargs="+", metavar="PATH",
                    help="fio bw/iops logs, per-second CSVs (t_s and bw_MBps|MBps|MB_s|MB/s|iops|IOPS) or folders "
                         "of them (their bw logs, else iops logs, else CSVs; per-job logs of one run summed)")
    pc.add_argument("-o", "--output", metavar="FILE.csv", help="CSV file (default: stdout)")
    pc.add_argument("--block-size", type=int, metavar="BYTES",
                    help="bytes per I/O of averaged iops logs or IOPS CSVs, for gb_written (else left empty)")

    pe = sub.add_parser("report", parents=[common], help="export an executed notebook to HTML (and PDF)")
    pe.add_argument("notebook", type=Path, metavar="EXECUTED.ipynb", help="the executed notebook (papermill output)")
    pe.add_argument("outdir", type=Path, metavar="OUTDIR", help="folder for NAME.html, NAME.pdf and figures/")
    pe.add_argument("--name", default="report", help="output file stem (default: report)")
    pe.add_argument("--html-only", action="store_true", help="write the HTML only")
    return p


#: The subcommands' modules, imported on demand by :func:`run_command` (the deliberate lazy loading of the
#: start-up budget above): each defines ``main(args) -> exit status``.
COMMANDS = {name: f"memstor.cli.cmd_{name}"
            for name in ("parse", "run", "sysinfo", "testfile", "params", "summary", "cliffs", "report")}


#: The experiment registry, imported by :func:`_experiment_help` on demand, as :data:`COMMANDS` are: it reads the
#: profiles' YAML as it is imported (PyYAML and the profiles: 13 ms of start-up, ``python -X importtime``).
REGISTRY = "memstor.experiments"


def _experiment_help(argv: list) -> str:
    """The help of run's EXPERIMENT: the registered names (from :data:`REGISTRY`) when ``argv`` names ``run``, the
    only command line that can show it (``memstor run --help``), else a placeholder."""
    if "run" not in argv:
        return "an experiment family (memstor run --help lists them)"
    return " | ".join(importlib.import_module(REGISTRY).names())


def _check_args(args: argparse.Namespace) -> None:
    """Usage errors argparse cannot see, found before a subcommand's (possibly slow) modules are imported."""
    if args.command == "cliffs" and args.block_size is not None and args.block_size <= 0:
        raise UsageError(f"--block-size {args.block_size}: give the bytes per I/O, a whole number > 0")


def run_command(args: argparse.Namespace) -> int:
    """Run the parsed subcommand: import its module (:data:`COMMANDS`) now, then call its ``main(args)``."""
    _check_args(args)
    return importlib.import_module(COMMANDS[args.command]).main(args)


def _os_error_line(exc: OSError) -> str:
    """One line for an operating-system error that reached the CLI (disk full, read-only, permissions)."""
    where = f" writing {exc.filename}" if exc.filename else ""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return (f"no space left on the device{where}: free some space (or use another --data / --target), "
                "then rerun the same command to resume (completed points are kept)")
    if exc.errno == errno.EROFS:
        return f"read-only filesystem{where}: use a writable --data / --target folder"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"permission denied{where.replace(' writing', '')}: use a folder you can write to"
    return f"{exc.strerror or exc}{where.replace(' writing', ' on')} (rerun with --debug for the traceback)"


def _failure(exc: Exception) -> tuple[int, str]:
    """(exit status, one-line reason) of an error that reached the CLI: 2 for a usage error, else 1."""
    if isinstance(exc, NotOnThisMachine):
        return EXIT_NOT_HERE, f"not run on this machine: {exc}"
    if isinstance(exc, UsageError):
        return EXIT_USAGE, str(exc)
    if isinstance(exc, MemstorError):
        return EXIT_PARTIAL, str(exc)
    if isinstance(exc, OSError):
        return EXIT_PARTIAL, _os_error_line(exc)
    return EXIT_PARTIAL, (f"internal error: {type(exc).__name__}: {first_line(exc)}"
                          " (rerun with --debug for the traceback and report it)")


def guarded(command, debug: bool = False, prog: str = "memstor") -> int:
    """Run ``command()`` (returns an exit status) under memstor's error policy: one ``prog: reason`` line
    on stderr and exit 2 for a usage error, 1 for a failed measurement or file, 130 when interrupted; a
    traceback only with ``debug``. Shared by the ``memstor`` command and ``bench/harness.py``."""
    try:
        return command()
    except BrokenPipeError:  # the reader went away (`memstor ... | head`): nothing left to say
        return EXIT_OK
    except (Interrupted, KeyboardInterrupt) as exc:
        reason = (str(exc) if isinstance(exc, Interrupted)
                  else "interrupted; rerun the same command to resume (completed points are kept)")
        print(f"{prog}: {reason}", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the promise: no traceback without --debug
        if debug:
            raise
        status, reason = _failure(exc)
        print(f"{prog}: {reason}", file=sys.stderr)
        return status


def main(argv: list | None = None) -> int:
    """Entry point of the `memstor` command; returns the exit status. As the program (no `argv` given), a
    Ctrl-C that arrives once the command is over is ignored: it would only print a traceback from the
    interpreter's shutdown, the work being done and its files written."""
    as_program = argv is None
    argv = sys.argv[1:] if argv is None else argv

    def command() -> int:
        args = _build_parser(argv).parse_args(argv)
        if not args.command:
            _build_parser(argv).print_help(sys.stderr)
            return EXIT_USAGE
        return run_command(args)

    status = guarded(command, debug="--debug" in argv)
    if as_program and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    return status


if __name__ == "__main__":
    sys.exit(main())
