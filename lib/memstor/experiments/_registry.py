"""The registry of experiment families: their names, modules and kinds, and their profile sections.

Cheap to import (the CLI builds its help from :func:`names`): only core, no family is imported until
:func:`family` asks for one. The package docstring (``memstor.experiments``) describes what a family module
defines.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from types import ModuleType

from memstor.core import profiles as _params
from memstor.core.errors import UsageError

_REQUIRED = ("EXPERIMENT", "NOTEBOOK", "KIND", "validate", "run")


def names() -> tuple[str, ...]:
    """The registered experiment names, sorted (cheap: the family modules' file names, nothing imported; not
    pkgutil.iter_modules, which imports inspect: 5-10 ms of every `memstor` start, memstor.cli's budget)."""
    return tuple(sorted(f.stem.replace("_", "-") for f in Path(__file__).parent.glob("*.py")
                        if not f.stem.startswith("_")))


def family(experiment: str) -> ModuleType:
    """The family module of `experiment`; UsageError listing the known names when there is none."""
    if experiment not in names():
        raise UsageError(f"unknown experiment {experiment!r}; choose one of: {', '.join(names())}")
    mod = importlib.import_module(f"{__package__}.{experiment.replace('-', '_')}")
    missing = [a for a in _REQUIRED if not hasattr(mod, a)]
    if missing or mod.EXPERIMENT != experiment or mod.KIND not in ("fio", "mlc"):
        raise UsageError(f"{mod.__file__}: not a complete experiment family (needs {', '.join(_REQUIRED)}, "
                         f"EXPERIMENT = {experiment!r}, KIND fio or mlc); see memstor/experiments/__init__.py")
    return mod


def families(kind: str | None = None) -> list[ModuleType]:
    """Every family module (of one KIND when given), in notebook order."""
    mods = [family(n) for n in names()]
    return sorted((m for m in mods if kind in (None, m.KIND)), key=lambda m: m.NOTEBOOK)


def kinds() -> dict[str, str]:
    """{experiment: "fio" | "mlc"} of every family, in notebook order: the processed tables that
    memstor.analysis.dataset.load_dataset reads (the CLI and the notebooks pass it down; analysis is below)."""
    return {m.EXPERIMENT: m.KIND for m in families()}


def check_experiment(experiment: str) -> str:
    """Return `experiment` when it is registered, else raise UsageError listing the known ones."""
    if experiment not in names():
        raise UsageError(f"unknown experiment {experiment!r}; choose one of: {', '.join(names())}")
    return experiment


def load_profile(profile: str, experiment: str, overrides: dict | None = None,
                 root: Path | None = None) -> dict:
    """Parameters of `experiment` in `profile` (params/<profile>.yaml), with `overrides` applied: keys
    outside the section and the family's OPTIONAL_KEYS (e.g. precision_pct) are refused."""
    check_experiment(experiment)
    optional = tuple(getattr(family(experiment), "OPTIONAL_KEYS", ())) if overrides else ()
    return _params.section(profile, experiment, overrides, optional, root)


#: The profile whose values a notebook's parameters cell holds when the default profile leaves the family out.
CELL_PROFILE = "full"


def cell_profile(experiment: str) -> str:
    """The profile a family notebook's parameters cell follows: the default one, else (a family it leaves
    out with ``{skip: "why"}``) :data:`CELL_PROFILE`."""
    section = _params.read_profile(_params.DEFAULT_PROFILE).get(experiment)
    return CELL_PROFILE if _params.skipped(section) else _params.DEFAULT_PROFILE


def notebook_params(experiment: str, namespace: dict, announce: bool = True) -> dict:
    """The profile section of `experiment` as a notebook's parameters cell gives it, so that editing the cell
    and re-running does what ``memstor run EXPERIMENT --profile P --set key=value`` does.

    The cell holds every key of the default profile's section with its default value, plus ``profile``.
    The result is the section of the cell's ``profile`` with the values the cell changed (those differing
    from the default profile's) on top, plus the family's ``OPTIONAL_KEYS`` from `namespace` (the notebook's
    globals, where papermill put its parameters). A value changed back to the default profile's is the
    chosen profile's value: the line printed (`announce`) says which values came from where. A family the
    default profile leaves out (``{skip: "why"}``: the SNIA PTS tests) has the :data:`CELL_PROFILE`'s values
    in its cell instead."""
    fam = family(experiment)
    base = cell_profile(experiment)
    default = load_profile(base, experiment)
    keys = [k for k in default if k != "profile"]
    missing = [k for k in keys if k not in namespace]
    if missing:
        raise UsageError(f"{experiment}: the notebook has no parameter {', '.join(missing)}; add it to its "
                         f"parameters cell (params/{base}.yaml has it)")
    profile = str(namespace.get("profile") or base)

    def same(a, b) -> bool:
        return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)

    changed = {k: namespace[k] for k in keys if not same(namespace[k], default[k])}
    chosen = load_profile(profile, experiment, changed)
    out = {k: chosen[k] for k in keys} | {"profile": profile}  # the profile the values came from (departures name it)
    out.update({k: namespace[k] for k in getattr(fam, "OPTIONAL_KEYS", ()) if k in namespace})
    if announce:
        edits = ", ".join(f"{k}={out[k]!r}" for k in changed) or "none"
        print(f"{experiment}: profile {profile} (params/{profile}.yaml); changed in the parameters cell: {edits}")
    return out
