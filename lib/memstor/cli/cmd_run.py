"""``memstor run``: run or resume one experiment sweep (memstor.experiments.run_profile)."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

import memstor.experiments as experiments
from memstor.cli._common import EXIT_OK, EXIT_PARTIAL
from memstor.cli._overrides import overrides
from memstor.core.errors import MemstorError, NotOnThisMachine
from memstor.core.units import size_text
from memstor.measure.target import kept_test_file


def main(args: argparse.Namespace) -> int:
    """Run ``args.experiment`` with its profile; EXIT_PARTIAL when a point failed. A family this machine
    cannot run raises NotOnThisMachine (exit 3), its reason written to ``--skip-note`` first."""
    experiments.check_experiment(args.experiment)
    # experiments.run_profile is memstor.experiments._run's (imported by the package on first use)
    try:
        table = experiments.run_profile(args.experiment, args.profile, overrides(args.overrides),
                                        data_root=args.data, target_dir=args.target, host=args.host,
                                        progress=not args.no_progress, hosts=args.hosts)
    except NotOnThisMachine as exc:
        if args.skip_note:
            Path(args.skip_note).write_text(f"{exc}\n", encoding="utf-8")
        raise
    failed = int((table["status"] == "failed").sum()) if "status" in table.columns else 0
    print(f"memstor run {args.experiment}: {len(table)} rows"
          + (f", {failed} failed (see the error column)" if failed else ""), file=sys.stderr)
    notice = kept_file_notice(args)
    if notice:
        print(notice, file=sys.stderr)
    return EXIT_PARTIAL if failed else EXIT_OK


def kept_file_notice(args: argparse.Namespace) -> str | None:
    """The line naming the test file a local fio run left for reuse, with the command that removes it."""
    if args.hosts or "device" in overrides(args.overrides) or not args.experiment.startswith("fio-"):
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
