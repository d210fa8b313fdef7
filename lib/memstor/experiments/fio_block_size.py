"""fio-block-size, a storage family over the shared fio modules (``memstor.experiments._fio_*``): random
(and sequential) I/O at every block size, fixed queue depth."""

from __future__ import annotations

from dataclasses import dataclass

import memstor.experiments._fio_params as _fio_params
import memstor.experiments._fio_points as _fio_points
import memstor.experiments._fio_run as _fio_run
from memstor.core.validate import Section

EXPERIMENT = _fio_params.BLOCK_SIZE
NOTEBOOK = "20-fio-block-size"
KIND = "fio"
OPTIONAL_KEYS = _fio_params.OPTIONAL_KEYS + _fio_params.PRECISION_KEYS
#: This family's own keys, beside the ones every fio family has.
KEYS = ("iodepth", "bs", "rw", "seq_bs")


@dataclass(frozen=True)
class BlockSizeParams:
    """fio-block-size: random rw at every bs, sequential read/write at every seq_bs, fixed iodepth."""

    common: _fio_params.FioCommon
    iodepth: int
    bs: tuple          # fio size strings, normalised (4k, 64k, 1m)
    rw: tuple          # random (or sequential) patterns for the bs list
    seq_bs: tuple      # sizes for sequential read and write (may be empty)


def block_size_params(params: dict) -> BlockSizeParams:
    """Validate a fio-block-size section (UsageError naming the parameter and allowed values)."""
    v = Section(EXPERIMENT)
    c = _fio_params.common_params(v, params, KEYS, precision=True)
    return BlockSizeParams(
        common=c,
        iodepth=v.integer("iodepth", params["iodepth"], 1, _fio_params.MAX_IODEPTH),
        bs=_fio_params.block_sizes(v, "bs", v.items("bs", params["bs"]), c),
        rw=_fio_params.patterns(v, params),
        seq_bs=_fio_params.block_sizes(v, "seq_bs", v.items("seq_bs", params["seq_bs"], allow_empty=True), c),
    )


def block_size_configs(bp: BlockSizeParams, engine: str) -> list:
    """Configurations of fio-block-size: rw x bs at iodepth, then sequential read/write x seq_bs."""
    c = bp.common

    def config(rw: str, bs: str) -> dict:
        return _fio_points.point_params(EXPERIMENT, c, engine, rw=rw, bs=bs, iodepth=bp.iodepth, numjobs=c.numjobs)

    out = [config(rw, bs) for rw in bp.rw for bs in bp.bs]
    for rw in ("read", "write"):
        for bs in bp.seq_bs:
            cfg = config(rw, bs)
            if cfg not in out:
                out.append(cfg)
    return out


#: The fixed grid a fleet run (--hosts) measures on every host at once (memstor.experiments._fleet).
FLEET_CONFIGS = block_size_configs
validate = block_size_params
run = _fio_run.family_run(EXPERIMENT, block_size_configs, block_size_params)
