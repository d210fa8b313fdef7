"""``memstor params``: a profile section as YAML (papermill -f); `make all` calls it once per notebook."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

from memstor.cli._common import EXIT_OK
from memstor.cli._overrides import overrides
from memstor.experiments import load_profile


def main(args: argparse.Namespace) -> int:
    """Print the section (``--set`` applied, ``--add`` keys added), or write ``-o FILE`` only when its
    content changes (make then sees an unchanged file and reruns nothing)."""
    section = load_profile(args.profile, args.experiment, overrides(args.overrides))
    section.update(overrides(args.add))
    text = yaml.safe_dump(section, sort_keys=False, default_flow_style=None)
    if not args.output:
        sys.stdout.write(text)
        return EXIT_OK
    out = Path(args.output)
    if not out.is_file() or out.read_text() != text:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
    return EXIT_OK
