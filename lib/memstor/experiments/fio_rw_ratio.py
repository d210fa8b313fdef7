"""fio-rw-ratio: randrw at every read share (rwmixread) x block size, fixed queue depth.

Registered experiment family (see memstor.experiments): ``EXPERIMENT``, ``NOTEBOOK``, ``KIND``,
``validate(params)`` and ``run(params, *, data_root, target_dir, host, progress)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from memstor.experiments._fio import (
    MAX_IODEPTH,
    RW_RATIO,
    FioCommon,
    _run,
    block_sizes,
    common_params,
    point_params,
)
from memstor.validate import Section

EXPERIMENT = RW_RATIO
NOTEBOOK = "30-fio-rw-ratio"
KIND = "fio"
#: Keys a section may leave out: a raw device instead of the test file (both must name it).
OPTIONAL_KEYS = ("device", "confirm_device")
#: This family's own keys, beside the ones every fio family has (memstor.experiments._fio).
KEYS = ("iodepth", "rwmixread", "bs")


@dataclass(frozen=True)
class RwRatioParams:
    """fio-rw-ratio: randrw at every rwmixread (% reads) x bs, fixed iodepth."""

    common: FioCommon
    iodepth: int
    rwmixread: tuple   # percent reads, 0..100
    bs: tuple


def rw_ratio_params(params: dict) -> RwRatioParams:
    """Validate a fio-rw-ratio section (UsageError naming the parameter and allowed values)."""
    v = Section(EXPERIMENT)
    c = common_params(v, params, KEYS)
    mixes = [v.integer("rwmixread", m, 0, 100) for m in v.items("rwmixread", params["rwmixread"])]
    return RwRatioParams(
        common=c,
        iodepth=v.integer("iodepth", params["iodepth"], 1, MAX_IODEPTH),
        rwmixread=v.unique("rwmixread", mixes),
        bs=block_sizes(v, "bs", v.items("bs", params["bs"]), c),
    )


def rw_ratio_configs(rp: RwRatioParams, engine: str) -> list:
    """Configurations of fio-rw-ratio: randrw at every rwmixread x bs (100 and 0 included, same engine path)."""
    c = rp.common
    return [point_params(RW_RATIO, c, engine, rw="randrw", bs=bs, iodepth=rp.iodepth, numjobs=c.numjobs,
                         rwmixread=mix) for bs in rp.bs for mix in rp.rwmixread]


def run_rw_ratio(params: dict, *, data_root: Path, target_dir: Path | None, host: str,
                 progress: bool = True) -> pd.DataFrame:
    """Run or resume fio-rw-ratio; write and return its tidy table (COLUMNS)."""
    rp = rw_ratio_params(params)
    return _run(RW_RATIO, rw_ratio_configs, rp, data_root=data_root, target_dir=target_dir, host=host,
                progress=progress)


validate = rw_ratio_params
run = run_rw_ratio
