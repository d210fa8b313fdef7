"""One entry point for every experiment, used by `memstor run` and by the notebooks."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

from . import params as _params
from .errors import UsageError


def _runner(experiment: str):
    """The library function that runs (or resumes) `experiment` and returns its tidy table."""
    if experiment == "mlc-loaded-latency":
        from .memory import run_loaded_latency
        return run_loaded_latency
    from . import storage
    return {
        "fio-block-size": storage.run_block_size,
        "fio-rw-ratio": storage.run_rw_ratio,
        "fio-queue-depth": storage.run_queue_depth,
    }[experiment]


def write_sysinfo(data_root: Path, host: str, target_dir: Path | None) -> Path:
    """Store the machine description beside the processed tables: `<data>/processed/<host>/sysinfo.json`."""
    from .sweep import atomic_write
    from .sysinfo import collect

    out = Path(data_root) / "processed" / host / "sysinfo.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(out, json.dumps(collect(target_dir), indent=2, sort_keys=True, default=str) + "\n")
    return out


def run_experiment(experiment: str, params: dict, data_root: Path | str = "data",
                   target_dir: Path | str | None = None, host: str | None = None,
                   progress: bool = True) -> pd.DataFrame:
    """Run or resume `experiment` with `params` (a profile section); write and return its processed table.

    Raw outputs go to `<data_root>/raw/<host>/<experiment>/`, the tidy table to
    `<data_root>/processed/<host>/<experiment>.csv`, the machine description to `.../sysinfo.json`.
    """
    from .sweep import check_name
    from .sysinfo import host_name

    _params.check_experiment(experiment)
    data_root = Path(data_root).expanduser().resolve()
    target = Path(target_dir).expanduser() if target_dir not in (None, "") else None
    if target is not None and not os.path.lexists(target):
        raise UsageError(f"--target {target}: no such directory; create it first or pick an existing one")
    host = host or host_name()
    check_name("host", host)
    table = _runner(experiment)(params, data_root=data_root, target_dir=target, host=host, progress=progress)
    write_sysinfo(data_root, host, target)
    return table


def run_profile(experiment: str, profile: str = _params.DEFAULT_PROFILE, overrides: dict | None = None,
                **kwargs) -> pd.DataFrame:
    """`run_experiment` with the parameters of `profile` (params/<profile>.yaml) and `overrides`."""
    return run_experiment(experiment, _params.load_profile(profile, experiment, overrides), **kwargs)
