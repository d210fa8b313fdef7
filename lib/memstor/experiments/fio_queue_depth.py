"""fio-queue-depth, a storage family over :mod:`memstor.experiments._fio`: every pattern at every queue
depth, plus the spec-conditions point."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from memstor.experiments import _fio
from memstor.validate import Section

EXPERIMENT = _fio.QUEUE_DEPTH
NOTEBOOK = "40-fio-queue-depth"
KIND = "fio"
OPTIONAL_KEYS = _fio.OPTIONAL_KEYS
#: This family's own keys, beside the ones every fio family has.
KEYS = ("bs", "rw", "iodepth", "spec_iodepth", "spec_numjobs")


@dataclass(frozen=True)
class QueueDepthParams:
    """fio-queue-depth: every rw at every iodepth (numjobs jobs), plus the spec-conditions point."""

    common: _fio.FioCommon
    bs: str
    rw: tuple
    iodepth: tuple
    spec_iodepth: int  # 0 = no spec-conditions point
    spec_numjobs: int


def queue_depth_params(params: dict) -> QueueDepthParams:
    """Validate a fio-queue-depth section (UsageError naming the parameter and allowed values)."""
    v = Section(EXPERIMENT)
    c = _fio.common_params(v, params, KEYS)
    depths = [v.integer("iodepth", d, 1, _fio.MAX_IODEPTH) for d in v.items("iodepth", params["iodepth"])]
    return QueueDepthParams(
        common=c,
        bs=_fio.single_block_size(v, params, c),
        rw=_fio.patterns(v, params),
        iodepth=v.unique("iodepth", depths),
        spec_iodepth=v.integer("spec_iodepth", params["spec_iodepth"], 0, _fio.MAX_IODEPTH),
        spec_numjobs=v.integer("spec_numjobs", params["spec_numjobs"], 1, _fio.MAX_NUMJOBS),
    )


# ------------------------------------------------------------------------------------------- points


def queue_depth_configs(qp: QueueDepthParams, engine: str) -> list:
    """Configurations of fio-queue-depth: rw x iodepth, then the spec-conditions point per rw."""
    c = qp.common
    out = [_fio.point_params(EXPERIMENT, c, engine, rw=rw, bs=qp.bs, iodepth=qd, numjobs=c.numjobs)
           for rw in qp.rw for qd in qp.iodepth]
    if qp.spec_iodepth:
        out += [_fio.point_params(EXPERIMENT, c, engine, rw=rw, bs=qp.bs, iodepth=qp.spec_iodepth,
                                  numjobs=qp.spec_numjobs, spec_point=True) for rw in qp.rw]
    return out


def run_queue_depth(params: dict, *, data_root: Path, target_dir: Path | None, host: str,
                    progress: bool = True) -> pd.DataFrame:
    """Run or resume fio-queue-depth (incl. the spec-conditions point); write and return its tidy table."""
    qp = queue_depth_params(params)
    return _fio.run_family(EXPERIMENT, queue_depth_configs, qp, data_root=data_root, target_dir=target_dir,
                           host=host, progress=progress)


validate = queue_depth_params
run = run_queue_depth
