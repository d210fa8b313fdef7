"""X_max of an open loop: the most IOPS a closed loop measured on this device for the same job.

The open loop's offered rates are shares of X_max. A queue-depth sweep's best alone can lie far below what the same
job measured minutes earlier: on the fresh-clone quick run (2-vCPU VM, 2026-11-28) the randwrite sweep's best was
49,642 IOPS (QD64x1) while fio-block-size measured 86,257 IOPS at QD32x1 on a file of the same size, so the open
loop offered "10-98 % of X_max" that were 6-56 % of what the device did. X_max is therefore the best successful
closed-loop run of the same rw and block size, on a file of the same size where the tables record it, in this
device's fio-queue-depth and fio-block-size tables; its source names the table and configuration that gave it and,
where the queue-depth sweep's best was lower, that one too (its 'best of N runs' wording is what
memstor.analysis.load_latency.x_max_source_text reads).
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from memstor.core.units import parse_size
from memstor.experiments._fio_params import BLOCK_SIZE, QUEUE_DEPTH
from memstor.measure.sweep import processed_path

#: The closed-loop tables X_max is taken from, in order of preference at equal IOPS.
TABLES = (QUEUE_DEPTH, BLOCK_SIZE)


def closed_runs(data_root: Path, host: str, table: str, rw: str, bs: str,
                file_size_bytes: int | None = None) -> tuple[pd.DataFrame | None, str]:
    """(successful runs of `rw` at block size `bs` in `host`'s `table`, in rw's own direction, on a file of
    `file_size_bytes` where the table records file sizes; or None, why)."""
    path = processed_path(Path(data_root), host, table)
    if not path.is_file():
        return None, f"no {table} table for {host}"
    try:
        runs = pd.read_csv(path)
    except (OSError, ValueError, pd.errors.ParserError) as err:
        return None, f"{path}: unreadable ({err})"
    need = {"rw", "direction", "bs_bytes", "status", "iops"}
    if not need <= set(runs.columns):
        return None, f"{path}: no {', '.join(sorted(need - set(runs.columns)))} column"
    direction = "write" if "write" in rw else "read"
    sel = runs[(runs["rw"] == rw) & (runs["direction"] == direction) & (runs["bs_bytes"] == parse_size(bs))
               & (runs["status"] == "done") & runs["iops"].notna()]
    if file_size_bytes and "file_size_bytes" in sel.columns:
        size = pd.to_numeric(sel["file_size_bytes"], errors="coerce")
        sel = sel[size.isna() | (size == file_size_bytes)]  # a run whose size is not recorded is not ruled out
    if sel.empty:
        return None, f"no successful {rw} {bs} point in {path.name}"
    return sel, ""


def _config(row: pd.Series) -> str:
    """'QD64x1' of a run row."""
    return f"QD{int(row['iodepth'])}x{int(row['numjobs'])}"


def x_max_closed(data_root: Path, host: str, rw: str, bs: str,
                 file_size_bytes: int | None = None) -> tuple[float | None, str]:
    """(X_max IOPS, where from) of `rw` at `bs`: the best closed-loop run in `host`'s queue-depth and block-size
    tables (see the module docstring), else (None, why none)."""
    found, whys = {}, []
    for table in TABLES:
        runs, why = closed_runs(data_root, host, table, rw, bs, file_size_bytes)
        if runs is None:
            whys.append(why)
        else:
            found[table] = (runs, runs.loc[runs["iops"].idxmax()])
    if not found:
        return None, "; ".join(whys)
    best_table = max(found, key=lambda t: (float(found[t][1]["iops"]), t == QUEUE_DEPTH))
    best = found[best_table][1]
    qd_said = ""
    if QUEUE_DEPTH in found:
        qd_runs, qd_best = found[QUEUE_DEPTH]
        qd_said = f"{QUEUE_DEPTH} table: best of {len(qd_runs)} runs ({_config(qd_best)})"
        if best_table == QUEUE_DEPTH:
            return float(best["iops"]), qd_said
        qd_said = f", above the {qd_said}: {float(qd_best['iops']):,.0f} IOPS"
    return float(best["iops"]), f"{best_table} table: {_config(best)}, {float(best['iops']):,.0f} IOPS{qd_said}"
