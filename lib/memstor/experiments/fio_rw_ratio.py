"""fio-rw-ratio, a storage family over :mod:`memstor.experiments._fio`: randrw at every read share
(rwmixread) x block size, fixed queue depth."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from memstor.experiments import _fio
from memstor.core.validate import Section

EXPERIMENT = _fio.RW_RATIO
NOTEBOOK = "30-fio-rw-ratio"
KIND = "fio"
OPTIONAL_KEYS = _fio.OPTIONAL_KEYS + _fio.PRECISION_KEYS
#: This family's own keys, beside the ones every fio family has.
KEYS = ("iodepth", "rwmixread", "bs")


@dataclass(frozen=True)
class RwRatioParams:
    """fio-rw-ratio: randrw at every rwmixread (% reads) x bs, fixed iodepth."""

    common: _fio.FioCommon
    iodepth: int
    rwmixread: tuple   # percent reads, 0..100
    bs: tuple


def rw_ratio_params(params: dict) -> RwRatioParams:
    """Validate a fio-rw-ratio section (UsageError naming the parameter and allowed values)."""
    v = Section(EXPERIMENT)
    c = _fio.common_params(v, params, KEYS, precision=True)
    mixes = [v.integer("rwmixread", m, 0, 100) for m in v.items("rwmixread", params["rwmixread"])]
    return RwRatioParams(
        common=c,
        iodepth=v.integer("iodepth", params["iodepth"], 1, _fio.MAX_IODEPTH),
        rwmixread=v.unique("rwmixread", mixes),
        bs=_fio.block_sizes(v, "bs", v.items("bs", params["bs"]), c),
    )


def rw_ratio_configs(rp: RwRatioParams, engine: str) -> list:
    """Configurations of fio-rw-ratio: randrw at every rwmixread x bs (100 and 0 included, same engine path)."""
    c = rp.common
    return [_fio.point_params(EXPERIMENT, c, engine, rw="randrw", bs=bs, iodepth=rp.iodepth,
                              numjobs=c.numjobs, rwmixread=mix) for bs in rp.bs for mix in rp.rwmixread]


def run_rw_ratio(params: dict, *, data_root: Path, target_dir: Path | None, host: str,
                 progress: bool = True) -> pd.DataFrame:
    """Run or resume fio-rw-ratio; write and return its tidy table (COLUMNS)."""
    rp = rw_ratio_params(params)
    return _fio.run_family(EXPERIMENT, rw_ratio_configs, rp, data_root=data_root, target_dir=target_dir,
                           host=host, progress=progress)


#: The fixed grid a fleet run (--hosts) measures on every host at once (memstor.experiments._fleet).
FLEET_CONFIGS = rw_ratio_configs
validate = rw_ratio_params
run = run_rw_ratio
