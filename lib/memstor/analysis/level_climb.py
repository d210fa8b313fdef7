"""How a working-set curve climbs from its last cache level to the level it ends on (eleventh reads S14-loop 3,
S14-1cpu 3, S14-bare 2): §4.5 said 'it steps at 1.2 MiB to the 120 ns level' where the curve passed 21-33 ns at
1.4-2 MiB and reached 120 ns only at 2.8 MiB, and '4 KiB to 64 MiB, 1.3× the kernel's 48 MiB last-level cache' of a
levels' curve whose runs above 22.6 MiB were left out. :func:`last_climb` gives the climb's sizes and latencies
from the curve the levels are read from (memstor.analysis.hierarchy.kept_curve).

Pure: the working-set table and the cache_levels table (memstor.analysis.hierarchy) in; bytes and ns out.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from memstor.analysis.hierarchy import choose_curve, find_levels, kept_curve, last_step, level_edges


class Climb(NamedTuple):
    """left_at: where the curve leaves its last cache level (bytes: that level's end, last_step's); level_ns: the
    latency of the level it ends on; reached_at: that level's first size (bytes; None where not known); between:
    (bytes, ns) of each size measured between the two levels; kept_to: the largest size of the levels' curve kept
    (bytes; None where not known); reached_ns: the latency measured at reached_at (ns; None where not known)."""

    left_at: float
    level_ns: float
    reached_at: float | None = None
    between: tuple[tuple[float, float], ...] = ()
    kept_to: float | None = None
    reached_ns: float | None = None


def _kept(working_set: pd.DataFrame | None, host: str) -> tuple[np.ndarray, np.ndarray] | None:
    """(sizes in bytes, latencies in ns) of ``host``'s levels' curve as kept (hierarchy.kept_curve); None without
    one."""
    if working_set is None or working_set.empty or "pattern" not in working_set.columns:
        return None
    pages, curve = choose_curve(working_set[working_set["host"].astype(str) == str(host)])
    if pages is None:
        return None
    _, sizes, lat = kept_curve(curve)
    return (sizes, lat) if len(sizes) else None


def kept_to(working_set: pd.DataFrame | None, host: str) -> float | None:
    """The largest size (bytes) of ``host``'s levels' curve that was kept (its CPU held); None without one."""
    kept = _kept(working_set, host)
    return float(kept[0].max()) if kept is not None else None


def last_climb(working_set: pd.DataFrame | None, levels: pd.DataFrame | None, host: str) -> Climb | None:
    """The climb of ``host``'s levels' curve from its last cache level to the level it ends on; None where the
    curve gives no such step (last_step's None). Without the working-set rows, the step alone."""
    step = last_step(levels, host)
    if step is None:
        return None
    kept = _kept(working_set, host)
    if kept is None:
        return Climb(*step)
    sizes, lat = kept
    found = find_levels(sizes, lat)
    edge = level_edges(lat, found)[-2] if len(found) >= 2 else None
    if edge is None:
        return Climb(*step, kept_to=float(sizes.max()))
    first = found[-1].first
    between = tuple((float(sizes[i]), float(lat[i])) for i in range(edge.off, first))
    return Climb(*step, float(sizes[first]), between, float(sizes.max()), float(lat[first]))
