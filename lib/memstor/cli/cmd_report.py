"""``memstor report``: an executed notebook -> HTML (and PDF) (memstor.report.export)."""

from __future__ import annotations

import argparse
import sys

from memstor.cli._common import EXIT_OK
from memstor.report.export import export


def main(args: argparse.Namespace) -> int:
    """Export ``args.notebook`` into ``args.outdir`` as NAME.html (and NAME.pdf unless --html-only)."""
    res = export(args.notebook, args.outdir, name=args.name, pdf=not args.html_only)
    print(f"memstor: {res['message']}", file=sys.stderr)
    return EXIT_OK
