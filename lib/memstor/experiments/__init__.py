"""Experiment families: the registry, and the one entry point that runs them (`memstor run`, notebooks).

A family is one module here, ``memstor/experiments/<name>.py`` with the experiment's name in snake case
(``fio_block_size.py`` is ``fio-block-size``); modules starting with ``_`` are shared helpers. A family
module defines:

- ``EXPERIMENT``: its name (``fio-block-size``), the section name in every ``params/<profile>.yaml``;
- ``NOTEBOOK``: its notebook's stem (``20-fio-block-size``: ``notebooks/20-fio-block-size.ipynb``);
- ``KIND``: the schema of its processed table, ``"fio"`` or ``"mlc"`` (how the synthesis reads it);
- ``validate(params) -> typed parameters`` (UsageError naming the parameter, the value and the way out);
- ``run(params, *, data_root, target_dir, host, progress) -> DataFrame`` (runs or resumes the sweep and
  writes ``<data>/processed/<host>/<EXPERIMENT>.csv``).

Adding a family is that module, its notebook and one section per profile: the CLI, the profiles, the
Makefile (which lists ``notebooks/[1-8]*.ipynb``) and the synthesis find it here.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from memstor.core import profiles as _params
from memstor.core.errors import UsageError

if TYPE_CHECKING:
    import pandas as pd

_REQUIRED = ("EXPERIMENT", "NOTEBOOK", "KIND", "validate", "run")


def names() -> tuple[str, ...]:
    """The registered experiment names, sorted (cheap: module names only, nothing imported)."""
    return tuple(sorted(m.name.replace("_", "-") for m in pkgutil.iter_modules(__path__)
                        if not m.name.startswith("_")))


def family(experiment: str) -> ModuleType:
    """The family module of `experiment`; UsageError listing the known names when there is none."""
    if experiment not in names():
        raise UsageError(f"unknown experiment {experiment!r}; choose one of: {', '.join(names())}")
    mod = importlib.import_module(f"{__name__}.{experiment.replace('-', '_')}")
    missing = [a for a in _REQUIRED if not hasattr(mod, a)]
    if missing or mod.EXPERIMENT != experiment or mod.KIND not in ("fio", "mlc"):
        raise UsageError(f"{mod.__file__}: not a complete experiment family (needs {', '.join(_REQUIRED)}, "
                         f"EXPERIMENT = {experiment!r}, KIND fio or mlc); see memstor/experiments/__init__.py")
    return mod


def families(kind: str | None = None) -> list[ModuleType]:
    """Every family module (of one KIND when given), in notebook order."""
    mods = [family(n) for n in names()]
    return sorted((m for m in mods if kind in (None, m.KIND)), key=lambda m: m.NOTEBOOK)



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


def notebook_params(experiment: str, namespace: dict, announce: bool = True) -> dict:
    """The profile section of `experiment` as a notebook's parameters cell gives it, so that editing the cell
    and re-running does what ``memstor run EXPERIMENT --profile P --set key=value`` does.

    The cell holds every key of the default profile's section with its default value, plus ``profile``.
    The result is the section of the cell's ``profile`` with the values the cell changed (those differing
    from the default profile's) on top, plus the family's ``OPTIONAL_KEYS`` from `namespace` (the notebook's
    globals, where papermill put its parameters). A value changed back to the default profile's is the
    chosen profile's value: the line printed (`announce`) says which values came from where."""
    fam = family(experiment)
    default = load_profile(_params.DEFAULT_PROFILE, experiment)
    keys = [k for k in default if k != "profile"]
    missing = [k for k in keys if k not in namespace]
    if missing:
        raise UsageError(f"{experiment}: the notebook has no parameter {', '.join(missing)}; add it to its "
                         f"parameters cell (params/{_params.DEFAULT_PROFILE}.yaml has it)")
    profile = str(namespace.get("profile") or _params.DEFAULT_PROFILE)

    def same(a, b) -> bool:
        return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)

    changed = {k: namespace[k] for k in keys if not same(namespace[k], default[k])}
    chosen = load_profile(profile, experiment, changed)
    out = {k: chosen[k] for k in keys}
    out.update({k: namespace[k] for k in getattr(fam, "OPTIONAL_KEYS", ()) if k in namespace})
    if announce:
        edits = ", ".join(f"{k}={out[k]!r}" for k in changed) or "none"
        print(f"{experiment}: profile {profile} (params/{profile}.yaml); changed in the parameters cell: {edits}")
    return out


def write_sysinfo(data_root: Path, host: str, target_dir: Path | None, device: dict | None = None,
                  drive: dict | None = None) -> Path:
    """Store the machine description beside the processed tables: `<data>/processed/<host>/sysinfo.json`.

    host: the device (folder) name; target_dir: the folder whose filesystem and disks are described
    (None for a memory experiment); device: the record of what was measured (memstor.measure.device),
    stored under ``device``; drive: a storage run's drive section (memstor.measure.drive.run_record:
    identity, pcie_link, health_before, health_after, health_delta), stored under ``drive`` merged with
    the one stored before (the earliest health_before is kept while it is the same drive). A memory run
    (target_dir None, device kind ``memory``, no drive) keeps the ``target``, ``device`` and ``drive`` a
    storage run stored there before: the folder still describes that storage.
    """
    from memstor.measure.drive import merge_runs
    from memstor.core.files import atomic_write, read_json
    from memstor.measure.sysinfo import collect

    out = Path(data_root) / "processed" / host / "sysinfo.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    info = collect(target_dir)
    info["device"] = device
    old = read_json(out) or {}
    stored = old.get("device") if isinstance(old.get("device"), dict) else {}
    if target_dir is None and (device or {}).get("kind") in (None, "memory") and \
            stored.get("kind") not in (None, "memory"):
        info["target"], info["device"] = old.get("target"), stored
    old_drive = old.get("drive") if isinstance(old.get("drive"), dict) else None
    info["drive"] = merge_runs(old_drive, drive) if drive is not None else old_drive
    atomic_write(out, json.dumps(info, indent=2, sort_keys=True, default=str) + "\n")
    return out


def run_experiment(experiment: str, params: dict, data_root: Path | str = "data",
                   target_dir: Path | str | None = None, host: str | None = None,
                   progress: bool = True, hosts: Path | str | None = None) -> pd.DataFrame:
    """Run or resume `experiment` with `params` (a profile section); write and return its processed table.

    Raw outputs go to `<data_root>/raw/<device>/<experiment>/`, the tidy table to
    `<data_root>/processed/<device>/<experiment>.csv`, the machine description to `.../sysinfo.json`.
    The device (folder) name is `host` when given; else, for a storage family, this machine's host name
    when the test file is in `<data>/scratch` or on its filesystem, `<host>-<label>` for a `target_dir`
    on another filesystem or a raw device (`params` device + confirm_device); for a memory family, the
    host name (memstor.measure.device). What was measured is recorded in every manifest and point meta
    and in sysinfo.json (key ``device``). A storage family's drive gets a health snapshot right before
    and right after the sweep (one nvme or smartctl run each, time-boxed; memstor.measure.drive),
    stored with its identity under ``drive`` in sysinfo.json. A run that measured nothing (every point found
    measured) leaves sysinfo.json as it was: it describes the machine when the data was measured.

    hosts: a host file (memstor.measure.fleet_hosts): the hosts it lists are measured over SSH, each host's
    data under its label (memstor.experiments._fleet: the fio sweeps run every point on all hosts at once, the
    other families run memstor on each host); not with `target_dir` or `host`.
    """
    from memstor.measure import drive
    from memstor.measure.device import resolve
    from memstor.measure.sweep import check_name, points_run, recording
    from memstor.measure.sysinfo import host_name

    fam = family(experiment)
    data_root = Path(data_root).expanduser().resolve()
    if hosts not in (None, ""):
        if target_dir not in (None, "") or host:
            raise UsageError("--hosts measures the hosts of its file, each on its own target: drop --target and "
                             "--host (a host's label and target are in the file)")
        from memstor.experiments._fleet import run_fleet

        return run_fleet(fam, params, Path(hosts).expanduser(), data_root, progress=progress)
    target = Path(target_dir).expanduser() if target_dir not in (None, "") else None
    if target is not None and not os.path.lexists(target):
        raise UsageError(f"--target {target}: no such directory; create it first or pick an existing one")
    if host:
        check_name("host", host)
    storage = fam.KIND == "fio"
    name, device = resolve(fam.KIND, params, data_root, target if storage else None, host or None, host_name())
    check_name("host", name)
    where = drive.locate_device(device) if storage else None
    before = drive.health_snapshot(where) if where else None
    ran = points_run()
    with recording(device=device):
        table = fam.run(params, data_root=data_root, target_dir=target, host=name, progress=progress)
    if points_run() == ran and (data_root / "processed" / name / "sysinfo.json").is_file():
        return table  # nothing measured: the stored machine description (and drive health) stays as it was
    after = drive.health_snapshot(where) if where else None
    described = (target or data_root / "scratch") if storage and device.get("kind") == "filesystem" else None
    write_sysinfo(data_root, name, described, device, drive.run_record(where, before, after) if where else None)
    return table


def run_profile(experiment: str, profile: str = _params.DEFAULT_PROFILE, overrides: dict | None = None,
                **kwargs) -> pd.DataFrame:
    """`run_experiment` with the parameters of `profile` (params/<profile>.yaml) and `overrides`."""
    return run_experiment(experiment, load_profile(profile, experiment, overrides), **kwargs)
