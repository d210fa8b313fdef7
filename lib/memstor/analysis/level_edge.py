"""Where a cache level of the working-set curve ends (memstor.analysis.hierarchy's levels; issue 38 seventh read
S11-1cpu 4: 'L2 ends at 362 KiB ... a factor 2.5 from the kernel's 1,280 KiB' where the curve, 4.86 ns on the level,
was 6.17 ns at 512 KiB and 6.92 ns at 724 KiB, then 28.1 ns at 1 MiB and 123 ns on the next level: the plateau's
band (a factor 1.25) cut the level at its first size above it, though a 724 KiB set still hit the level 98 % of the
time). Units: bytes, ns.

**The rule.** A size on the step after a level, at latency R, lies a share m = (R - L) / (L_next - L) of the way from
the level's latency L to the next level's L_next: for loads that hit the level or go to the next one, m is the
share that missed. A size is still held by the level while m < :data:`MISS_BOUND` = 10 %: nine loads in ten or more
hit it. Why 10 %: random loads over W bytes of a level holding C < W bytes miss about 1 - C/W of them, so a size
held to 90 % is at most 1 / 0.9 = 1.11x the capacity and one that misses 10 % or more is at least 1.11x it: the
capacity lies between 0.9x the last size held and the first size off, within 10 % of the sizes named, finer than
the sweep's grid (sqrt 2 = 1.41x a step) and well within memstor.analysis.hierarchy's AGREE_FACTOR; a cache filling
with random lines misses a few per cent before it is full (set conflicts: 1-2 % at 512-724 KiB above), which the
bound leaves held. Walking up from the plateau's largest size, the level ends between the last size held and the next size
measured (the first with m >= 10 %); sizes without a latency are not measured and are skipped, never judged. A
plateau's own largest sizes a tenth or more of the way up (its latency band takes them in) are not held either: the
walk starts at the largest size under the bound (eighth read S12-1cpu: 'held at 362 KiB (55 % of the way)'). A
level with no next level (the curve rises past it to the sweep's end: no L_next) ends where the curve leaves its
plateau, between the plateau's largest size and the next size; a level the curve ends on has no end.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: A size is held by a level while less than this share of its loads miss it (module docstring).
MISS_BOUND = 0.10


@dataclass(frozen=True)
class Edge:
    """Where a level ends: ``held`` the index of the last size it held, ``off`` of the next size measured, their
    miss shares (0-1; None where there is no next level to measure them against) and the next level's ns."""

    held: int
    off: int
    held_miss: float | None = None
    off_miss: float | None = None
    next_ns: float | None = None


def miss_share(lat: np.ndarray, level_ns: float, next_ns: float) -> np.ndarray:
    """(R - L) / (L_next - L) per latency R (ns): 0 on the level, 1 on the next; NaN where R is not finite."""
    return (np.asarray(lat, dtype=float) - level_ns) / (next_ns - level_ns)


def level_edge(lat: np.ndarray, last: int, level_ns: float, next_first: int | None = None,
               next_ns: float | None = None) -> Edge | None:
    """Where the level whose plateau ends at index ``last`` (latency level_ns) ends on the curve ``lat`` (ns, one per
    size, ascending sizes): the last size held (miss share under MISS_BOUND, walking up from ``last`` through the
    step up to the next level's first index ``next_first``) and the next size measured; without a next level (or a
    next_ns not above level_ns) the plateau's last size and the next one; None where the curve ends on the level."""
    lat = np.asarray(lat, dtype=float)
    after = [i for i in range(last + 1, len(lat)) if np.isfinite(lat[i])]
    if not after:
        return None
    if next_first is None or next_ns is None or not np.isfinite(next_ns) or not next_ns > level_ns:
        return Edge(last, after[0])
    m = miss_share(lat, level_ns, next_ns)
    held = _last_held(m, last)
    if held < last:  # the plateau's band kept a size the level no longer held (S12-1cpu: 362 KiB at 55 %)
        off = next(i for i in range(held + 1, len(lat)) if np.isfinite(lat[i]))
        return Edge(held, off, float(m[held]), float(m[off]), float(next_ns))
    for i in after:
        if i >= next_first or m[i] >= MISS_BOUND:
            return Edge(held, i, float(m[held]), float(m[i]), float(next_ns))
        held = i
    return Edge(held, after[-1], float(m[held]), float(m[after[-1]]), float(next_ns))


def _last_held(m: np.ndarray, last: int) -> int:
    """The plateau's largest index at or below ``last`` whose miss share is under MISS_BOUND (walking down over sizes
    the plateau's latency band took in though a tenth or more of their loads missed); ``last`` where none is."""
    for i in range(last, -1, -1):
        if np.isfinite(m[i]) and m[i] < MISS_BOUND:
            return i
    return last


def edge_words(edge: Edge, sizes: np.ndarray, lat: np.ndarray, kib: Callable[[float], str]) -> str:
    """'ends between 724 KiB and 1,024 KiB: held at 724 KiB (6.92 ns, 2 % of the way to the next level's 123 ns),
    not at 1,024 KiB (28.1 ns, 20 %; held: under 10 % of the way, ...)', or without a next level 'ends between 256 KiB and 512 KiB:
    off it by 512 KiB (6.17 ns)' (``kib`` formats bytes)."""
    head = f"ends between {kib(sizes[edge.held])} and {kib(sizes[edge.off])}"
    off = f"{kib(sizes[edge.off])} ({lat[edge.off]:.3g} ns"
    if edge.off_miss is None or edge.next_ns is None:
        return f"{head}: off it by {off})"
    held = f"held at {kib(sizes[edge.held])} ({lat[edge.held]:.3g} ns, {max(0.0, 100 * (edge.held_miss or 0)):.0f} % of the way"
    return (f"{head}: {held} to the next level's {edge.next_ns:.3g} ns), not at {off}, {100 * edge.off_miss:.0f} %; "
            f"held: under {100 * MISS_BOUND:.0f} % of the way, nine loads in ten hitting)")
