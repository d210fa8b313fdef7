"""The files memstor ships beside its code: profiles, spec sheets, published reference data, report templates.

They are package data (``memstor/_resources/…``, ``memstor/report/templates``), found through
``importlib.resources``, so a wheel installed anywhere finds them. In the repository ``_resources/profiles``,
``_resources/specs`` and ``_resources/reference`` are symbolic links to ``params/``, ``data/specs/`` and
``data/reference/`` (published curves from other projects, each folder with its licence and sources, e.g.
``reference/mess/``); building the wheel copies their files in.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from memstor.core.errors import MemstorError

#: The shipped resource folders, by name.
KINDS = ("profiles", "specs", "reference")


def resource_dir(kind: str) -> Path:
    """The folder of shipped ``kind`` files (``profiles``: the profile YAMLs, ``specs``: the spec sheets,
    ``reference``: published reference data such as ``reference/mess/``, the Mess bandwidth–latency curves).

    MemstorError naming the folder when the installation lacks it (a broken install or a checkout whose
    symbolic links were not kept: reinstall, or clone with git).
    """
    if kind not in KINDS:
        raise ValueError(f"unknown resource kind {kind!r}: one of {', '.join(KINDS)}")
    path = Path(str(resources.files("memstor") / "_resources" / kind)).resolve()
    if not path.is_dir():
        raise MemstorError(f"{path}: memstor's {kind} folder is missing; reinstall memstor (pip install memstor) "
                           "or clone the repository with git (it keeps the symbolic links)")
    return path
