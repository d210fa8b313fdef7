"""Running a family: the one entry point `memstor run` and the notebooks use, and the machine description
it stores beside the processed tables (`<data>/processed/<device>/sysinfo.json`).

Imported on first use of ``memstor.experiments.run_experiment`` (or ``run_profile``, ``write_sysinfo``):
it brings pandas and the measure layer, which ``memstor --help`` and ``memstor parse`` do not need.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

import memstor.experiments._registry as _registry
from memstor.core import profiles as _params
from memstor.core.errors import UsageError
from memstor.core.files import atomic_write, read_json
from memstor.experiments._fleet import run_fleet
from memstor.experiments._provenance import write_metas
from memstor.measure import drive as drives
from memstor.measure.device import resolve
from memstor.measure.drive import merge_runs
from memstor.measure.machine import with_target
from memstor.measure.sweep import SweepSession, check_name
from memstor.measure.sysinfo import collect, host_name


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
    out = Path(data_root) / "processed" / host / "sysinfo.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    info = collect(target_dir)
    info["device"] = device
    old = read_json(out) or {}
    stored = old.get("device")
    if not isinstance(stored, dict):
        stored = {}
    if target_dir is None and (device or {}).get("kind") in (None, "memory") and \
            stored.get("kind") not in (None, "memory"):
        info["target"], info["device"] = old.get("target"), stored
        if isinstance(info.get("machine"), dict):
            info["machine"] = with_target(info["machine"], info["target"])
    old_drive = old.get("drive") if isinstance(old.get("drive"), dict) else None
    info["drive"] = merge_runs(old_drive, drive) if drive is not None else old_drive
    atomic_write(out, json.dumps(info, indent=2, sort_keys=True, default=str) + "\n")
    return out


def run_experiment(experiment: str, params: dict, data_root: Path | str = "data",
                   target_dir: Path | str | None = None, host: str | None = None,
                   progress: bool = True, hosts: Path | str | None = None) -> pd.DataFrame:
    """Run or resume `experiment` with `params` (a profile section); write and return its processed table.

    Raw outputs go to `<data_root>/raw/<device>/<experiment>/`, the tidy table to
    `<data_root>/processed/<device>/<experiment>.csv` (with its side tables and the points' provenance
    `<experiment>-metas.json`: memstor.experiments._provenance), the machine description to `.../sysinfo.json`.
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
    fam = _registry.family(experiment)
    data_root = Path(data_root).expanduser().resolve()
    if hosts not in (None, ""):
        if target_dir not in (None, "") or host:
            raise UsageError("--hosts measures the hosts of its file, each on its own target: drop --target and "
                             "--host (a host's label and target are in the file)")
        table = run_fleet(fam, params, Path(hosts).expanduser(), data_root, progress=progress)
        write_metas(data_root, experiment)
        return table
    target = Path(target_dir).expanduser() if target_dir not in (None, "") else None
    if target is not None and not os.path.lexists(target):
        raise UsageError(f"--target {target}: no such directory; create it first or pick an existing one")
    if host:
        check_name("host", host)
    storage = fam.KIND == "fio"
    name, device = resolve(fam.KIND, params, data_root, target if storage else None, host or None, host_name())
    check_name("host", name)
    where = drives.locate_device(device) if storage else None
    before = drives.health_snapshot(where) if where else None
    session = SweepSession(record={"device": device})
    table = fam.run(params, data_root=data_root, target_dir=target, host=name, progress=progress, session=session)
    write_metas(data_root, experiment)
    if session.ran == 0 and (data_root / "processed" / name / "sysinfo.json").is_file():
        return table  # nothing measured: the stored machine description (and drive health) stays as it was
    after = drives.health_snapshot(where) if where else None
    described = (target or data_root / "scratch") if storage and device.get("kind") == "filesystem" else None
    write_sysinfo(data_root, name, described, device, drives.run_record(where, before, after) if where else None)
    return table


def run_profile(experiment: str, profile: str = _params.DEFAULT_PROFILE, overrides: dict | None = None,
                **kwargs) -> pd.DataFrame:
    """`run_experiment` with the parameters of `profile` (params/<profile>.yaml) and `overrides`."""
    return run_experiment(experiment, _registry.load_profile(profile, experiment, overrides), **kwargs)
