"""What the `memstor` command and its subcommand modules share: the exit statuses and where a table's text goes
(stdout or ``-o``).

Cheap to import (core only, no YAML: ``--set`` pairs are :mod:`memstor.cli._overrides`): :mod:`memstor.cli` imports
it before it knows which subcommand runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

from memstor.core.files import atomic_write

#: Exit statuses of every subcommand (DESIGN.md): done, done with problems (or failed), usage error, the
#: family cannot run on this machine.
EXIT_OK, EXIT_PARTIAL, EXIT_USAGE, EXIT_NOT_HERE = 0, 1, 2, 3


def emit(text: str, output: str | None) -> None:
    """A subcommand's table: to ``output`` (written atomically, its folder made) or, without one, to stdout."""
    if output:
        out = Path(output)
        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(out, text)
    else:
        sys.stdout.write(text)
