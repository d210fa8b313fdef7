"""What the `memstor` command and its subcommand modules share: the exit statuses and ``--set`` pairs.

Cheap to import (core only): :mod:`memstor.cli` imports it before it knows which subcommand runs.
"""

from __future__ import annotations

from memstor.core.profiles import parse_override

#: Exit statuses of every subcommand (DESIGN.md): done, done with problems (or failed), usage error, the
#: family cannot run on this machine.
EXIT_OK, EXIT_PARTIAL, EXIT_USAGE, EXIT_NOT_HERE = 0, 1, 2, 3


def overrides(pairs: list) -> dict:
    """``KEY=VALUE`` texts (``--set``/``--add``, repeatable) as {key: typed value}; UsageError on a bad pair."""
    return dict(parse_override(p) for p in pairs)
