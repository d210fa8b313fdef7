"""``--set`` / ``--add`` pairs of ``memstor run`` and ``memstor params``: each value read as YAML.

Apart from :mod:`memstor.cli._common` because reading YAML imports PyYAML and the profiles (13 ms of start-up on
the 2-vCPU VM, ``python -X importtime``), which ``memstor --help``, a usage error and ``memstor parse`` never need.
"""

from __future__ import annotations

from memstor.core.profiles import parse_override


def overrides(pairs: list) -> dict:
    """``KEY=VALUE`` texts (``--set``/``--add``, repeatable) as {key: typed value}; UsageError on a bad pair."""
    return dict(parse_override(p) for p in pairs)
