"""fio-block-size: random (and sequential) I/O at every block size, fixed queue depth.

Registered experiment family (see memstor.experiments): ``EXPERIMENT``, ``NOTEBOOK``, ``KIND``,
``validate(params)`` and ``run(params, *, data_root, target_dir, host, progress)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from memstor.experiments._fio import (
    BLOCK_SIZE,
    MAX_IODEPTH,
    FioCommon,
    _run,
    block_sizes,
    common_params,
    patterns,
    point_params,
)
from memstor.validate import Section

EXPERIMENT = BLOCK_SIZE
NOTEBOOK = "20-fio-block-size"
KIND = "fio"
#: Keys a section may leave out: a raw device instead of the test file (both must name it).
OPTIONAL_KEYS = ("device", "confirm_device")
#: This family's own keys, beside the ones every fio family has (memstor.experiments._fio).
KEYS = ("iodepth", "bs", "rw", "seq_bs")


@dataclass(frozen=True)
class BlockSizeParams:
    """fio-block-size: random rw at every bs, sequential read/write at every seq_bs, fixed iodepth."""

    common: FioCommon
    iodepth: int
    bs: tuple          # fio size strings, normalised (4k, 64k, 1m)
    rw: tuple          # random (or sequential) patterns for the bs list
    seq_bs: tuple      # sizes for sequential read and write (may be empty)


def block_size_params(params: dict) -> BlockSizeParams:
    """Validate a fio-block-size section (UsageError naming the parameter and allowed values)."""
    v = Section(EXPERIMENT)
    c = common_params(v, params, KEYS)
    return BlockSizeParams(
        common=c,
        iodepth=v.integer("iodepth", params["iodepth"], 1, MAX_IODEPTH),
        bs=block_sizes(v, "bs", v.items("bs", params["bs"]), c),
        rw=patterns(v, params),
        seq_bs=block_sizes(v, "seq_bs", v.items("seq_bs", params["seq_bs"], allow_empty=True), c),
    )


def block_size_configs(bp: BlockSizeParams, engine: str) -> list:
    """Configurations of fio-block-size: rw x bs at iodepth, then sequential read/write x seq_bs."""
    c = bp.common
    out = [point_params(BLOCK_SIZE, c, engine, rw=rw, bs=bs, iodepth=bp.iodepth, numjobs=c.numjobs)
           for rw in bp.rw for bs in bp.bs]
    for rw in ("read", "write"):
        for bs in bp.seq_bs:
            cfg = point_params(BLOCK_SIZE, c, engine, rw=rw, bs=bs, iodepth=bp.iodepth, numjobs=c.numjobs)
            if cfg not in out:
                out.append(cfg)
    return out


def run_block_size(params: dict, *, data_root: Path, target_dir: Path | None, host: str,
                   progress: bool = True) -> pd.DataFrame:
    """Run or resume fio-block-size; write and return its tidy table (COLUMNS)."""
    bp = block_size_params(params)
    return _run(BLOCK_SIZE, block_size_configs, bp, data_root=data_root, target_dir=target_dir, host=host,
                progress=progress)


validate = block_size_params
run = run_block_size
