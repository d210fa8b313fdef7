"""The `memstor` command line (contract in DESIGN.md). No Python traceback reaches a user without --debug."""

from __future__ import annotations

import argparse
import errno
import json
import shlex
import signal
import sys
import threading
from pathlib import Path
from typing import NoReturn

import yaml

import memstor.experiments as experiments
from memstor import __version__
from memstor.core.errors import Interrupted, MemstorError, NotOnThisMachine, UsageError, first_line
from memstor.core.files import atomic_write
from memstor.core.profiles import parse_override
from memstor.core.units import size_text
from memstor.experiments import check_experiment, load_profile
from memstor.experiments import kinds as experiment_kinds
from memstor.experiments import names as experiment_names
from memstor.measure.fleet_target import local_target
from memstor.measure.target import kept_test_file, remove_test_file
from memstor.parse.cliff_input import collect_inputs, read_throughput_series
from memstor.report.export import export

EXIT_OK, EXIT_PARTIAL, EXIT_USAGE, EXIT_NOT_HERE = 0, 1, 2, 3


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line and exit status 2."""

    def error(self, message: str) -> NoReturn:  # noqa: D102
        sub = self.prog.removeprefix("memstor").strip()  # the CLI prints "memstor: " itself, once
        raise UsageError(f"{sub + ': ' if sub else ''}{message} (see {self.prog} --help)")


def _build_parser() -> argparse.ArgumentParser:
    # a _Parser like the subcommands (add_parser's parents are typed by parser_class); a parent only lends its
    # arguments, its error() never runs
    common = _Parser(add_help=False)
    common.add_argument("--debug", action="store_true", help="show Python tracebacks")
    p = _Parser(prog="memstor", parents=[common],
                description="Reproducible memory and storage performance profiling (fio, Intel MLC, loadlat).")
    p.add_argument("--version", action="version", version=f"memstor {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    pp = sub.add_parser("parse", parents=[common], help="fio/MLC output files -> tidy CSV")
    pp.add_argument("--kind", choices=("fio", "mlc"), help="force the parser (default: detect per file)")
    pp.add_argument("paths", nargs="+", metavar="PATH", help="files or folders (recursive)")
    pp.add_argument("-o", "--output", metavar="OUT",
                    help="CSV file (with --kind) or folder (writes fio.csv and mlc.csv); default stdout")

    pr = sub.add_parser("run", parents=[common], help="run or resume one experiment sweep")
    pr.add_argument("experiment", metavar="EXPERIMENT", help=" | ".join(experiment_names()))
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


def _cmd_parse(args: argparse.Namespace) -> int:
    # lazy: memstor.parse.files brings numpy (json+ bins): +0.4 s on `memstor --help` (median of 7)
    from memstor.parse.files import parse_paths, to_csv, write_bins_csv, write_csv

    outcome = parse_paths(args.paths, args.kind)
    out = Path(args.output) if args.output else None
    if not args.kind and out is None and all(outcome.rows.values()):
        raise UsageError("these paths hold both fio and MLC outputs: use -o OUTDIR (writes fio.csv and "
                         "mlc.csv) or --kind fio|mlc")
    for line in outcome.errors:
        print(line.replace("\n", " "), file=sys.stderr)
    if args.kind:
        if out is not None and (out.is_dir() or args.output.endswith(("/", "\\"))):
            out = out / f"{args.kind}.csv"
        rows = outcome.rows[args.kind]
        if out is None:
            sys.stdout.write(to_csv(rows, args.kind))
        else:
            write_csv(out, rows, args.kind)
    elif out is None:
        kind = "mlc" if outcome.rows["mlc"] else "fio"
        sys.stdout.write(to_csv(outcome.rows[kind], kind))
    else:
        if out.suffix.lower() == ".csv":
            raise UsageError(f"-o {out}: without --kind, -o names a folder (it gets fio.csv and mlc.csv)")
        for kind in ("fio", "mlc"):
            write_csv(out / f"{kind}.csv", outcome.rows[kind], kind)
        if outcome.bins:  # fio's json+ histograms beside fio.csv, for the analysis (memstor.analysis.histograms)
            write_bins_csv(out, outcome.bins)
    nrows = len(outcome.rows["fio"]) + len(outcome.rows["mlc"])
    if out is not None:
        print(f"memstor parse: {outcome.files} files, {nrows} rows, {len(outcome.errors)} problems -> {out}",
              file=sys.stderr)
    return EXIT_PARTIAL if outcome.errors else EXIT_OK


def _overrides(pairs: list) -> dict:
    return dict(parse_override(p) for p in pairs)


def _cmd_run(args: argparse.Namespace) -> int:
    check_experiment(args.experiment)
    # experiments.run_profile is imported on first use (memstor.experiments.__getattr__): pandas, the measure layer
    try:
        table = experiments.run_profile(args.experiment, args.profile, _overrides(args.overrides),
                                        data_root=args.data, target_dir=args.target, host=args.host,
                                        progress=not args.no_progress, hosts=args.hosts)
    except NotOnThisMachine as exc:
        if args.skip_note:
            Path(args.skip_note).write_text(f"{exc}\n", encoding="utf-8")
        raise
    failed = int((table["status"] == "failed").sum()) if "status" in table.columns else 0
    print(f"memstor run {args.experiment}: {len(table)} rows"
          + (f", {failed} failed (see the error column)" if failed else ""), file=sys.stderr)
    notice = _kept_file_notice(args)
    if notice:
        print(notice, file=sys.stderr)
    return EXIT_PARTIAL if failed else EXIT_OK


def _cmd_testfile(args: argparse.Namespace) -> int:
    if args.remove:
        return _remove_testfile(args)
    if not args.target and not args.device:
        raise UsageError("memstor testfile: give --target DIR (or --device DEV --confirm-device DEV)")
    if args.size is None:
        raise UsageError("memstor testfile: give --size BYTES to prepare the test file, or --remove to delete it")
    info = local_target(args.size, args.target, args.device, args.confirm_device, args.ioengine, args.direct)
    print(json.dumps(info, sort_keys=True))
    return EXIT_OK


def _remove_testfile(args: argparse.Namespace) -> int:
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


def _kept_file_notice(args: argparse.Namespace) -> str | None:
    """The line naming the test file a local fio run left for reuse, with the command that removes it."""
    if args.hosts or "device" in _overrides(args.overrides) or not args.experiment.startswith("fio-"):
        return None
    folder = Path(args.target) if args.target else Path(args.data) / "scratch"
    try:
        tf = kept_test_file(folder)
    except MemstorError:
        return None
    if tf is None:
        return None
    return (f"memstor run: kept the test file {tf.path} ({size_text(tf.size_bytes)}) for the next run; remove it "
            f"with: memstor testfile --remove --target {shlex.quote(str(folder))}")


def _cmd_sysinfo(args: argparse.Namespace) -> int:
    # lazy: memstor.measure.sysinfo brings the fio runner and parsers: +0.1 s on `memstor --help`
    from memstor.measure.sysinfo import collect

    target = Path(args.target) if args.target else None
    drive_of = args.device or target or Path(args.data) / "scratch"
    print(json.dumps(collect(target, drive_of=drive_of, raw=bool(args.device)), indent=2, default=str))
    return EXIT_OK


def _cmd_params(args: argparse.Namespace) -> int:
    section = load_profile(args.profile, args.experiment, _overrides(args.overrides))
    section.update(_overrides(args.add))
    text = yaml.safe_dump(section, sort_keys=False, default_flow_style=None)
    if not args.output:
        sys.stdout.write(text)
        return EXIT_OK
    out = Path(args.output)
    if not out.is_file() or out.read_text() != text:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
    return EXIT_OK


def _cmd_summary(args: argparse.Namespace) -> int:
    # lazy: the analysis layer brings pandas: +1.2 s on `memstor --help` (median of 7)
    from memstor.analysis import dataset, synthesis

    ds = dataset.load_dataset(args.data, experiment_kinds())
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


def _cmd_cliffs(args: argparse.Namespace) -> int:
    if args.block_size is not None and args.block_size <= 0:
        raise UsageError(f"--block-size {args.block_size}: give the bytes per I/O, a whole number > 0")
    # lazy: ruptures and scipy's ndimage/stats: +0.7 s on `memstor --help` (median of 5)
    from memstor.analysis.cliffs import CLIFF_COLUMNS, find_cliffs

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
    if args.output:
        out = Path(args.output)
        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(out, text)
    else:
        sys.stdout.write(text)
    return EXIT_PARTIAL if errors else EXIT_OK


def _cmd_report(args: argparse.Namespace) -> int:
    res = export(args.notebook, args.outdir, name=args.name, pdf=not args.html_only)
    print(f"memstor: {res['message']}", file=sys.stderr)
    return EXIT_OK


COMMANDS = {"parse": _cmd_parse, "run": _cmd_run, "sysinfo": _cmd_sysinfo, "testfile": _cmd_testfile,
            "params": _cmd_params, "summary": _cmd_summary, "cliffs": _cmd_cliffs, "report": _cmd_report}


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
        args = _build_parser().parse_args(argv)
        if not args.command:
            _build_parser().print_help(sys.stderr)
            return EXIT_USAGE
        return COMMANDS[args.command](args)

    status = guarded(command, debug="--debug" in argv)
    if as_program and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    return status


if __name__ == "__main__":
    sys.exit(main())
