"""fio-rw-ratio, a storage family over the shared fio modules (``memstor.experiments._fio_*``): randrw at
every read share (rwmixread) x block size, fixed queue depth."""

from __future__ import annotations

from dataclasses import dataclass

import memstor.experiments._fio_params as _fio_params
import memstor.experiments._fio_points as _fio_points
import memstor.experiments._fio_run as _fio_run
from memstor.core.validate import Section

EXPERIMENT = _fio_params.RW_RATIO
NOTEBOOK = "30-fio-rw-ratio"
KIND = "fio"
OPTIONAL_KEYS = _fio_params.OPTIONAL_KEYS + _fio_params.PRECISION_KEYS
#: This family's own keys, beside the ones every fio family has.
KEYS = ("iodepth", "rwmixread", "bs")


@dataclass(frozen=True)
class RwRatioParams:
    """fio-rw-ratio: randrw at every rwmixread (% reads) x bs, fixed iodepth."""

    common: _fio_params.FioCommon
    iodepth: int
    rwmixread: tuple   # percent reads, 0..100
    bs: tuple


def rw_ratio_params(params: dict) -> RwRatioParams:
    """Validate a fio-rw-ratio section (UsageError naming the parameter and allowed values)."""
    v = Section(EXPERIMENT)
    c = _fio_params.common_params(v, params, KEYS, precision=True)
    mixes = [v.integer("rwmixread", m, 0, 100) for m in v.items("rwmixread", params["rwmixread"])]
    return RwRatioParams(
        common=c,
        iodepth=v.integer("iodepth", params["iodepth"], 1, _fio_params.MAX_IODEPTH),
        rwmixread=v.unique("rwmixread", mixes),
        bs=_fio_params.block_sizes(v, "bs", v.items("bs", params["bs"]), c),
    )


def rw_ratio_configs(rp: RwRatioParams, engine: str) -> list:
    """Configurations of fio-rw-ratio: randrw at every rwmixread x bs (100 and 0 included, same engine path)."""
    c = rp.common
    return [_fio_points.point_params(EXPERIMENT, c, engine, rw="randrw", bs=bs, iodepth=rp.iodepth,
                              numjobs=c.numjobs, rwmixread=mix) for bs in rp.bs for mix in rp.rwmixread]


#: The fixed grid a fleet run (--hosts) measures on every host at once (memstor.experiments._fleet).
FLEET_CONFIGS = rw_ratio_configs
validate = rw_ratio_params
run = _fio_run.family_run(EXPERIMENT, rw_ratio_configs, rw_ratio_params)
