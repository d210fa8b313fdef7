"""The kernel's data caches (memstor.measure.sysinfo's ``caches`` block) and which level of a working-set curve
(memstor.analysis.hierarchy) each is matched to: by size, in order, a level or cache left unmatched where naming it
after a far cache would mislead (eighth read S12-bare 4). Bytes in, indices out."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping

from memstor.core.schema import missing

KERNEL_LEVELS = (("L1", "L1d_bytes"), ("L2", "L2_bytes"), ("L3", "L3_bytes"))
#: A level or kernel cache left unmatched costs this many octaves in :func:`match_levels`: a match by rank that puts levels
#: beside the wrong caches costs more than leaving two out (S12-bare 4: 1-1.4 MiB beside 48 MiB while the kernel's
#: L2 is 1.25 MiB), while a VM's partitioned share of a large cache (13.5 MiB of the host's 480 MiB, 5.2 octaves,
#: under 2 x 3) stays matched to it.
UNMATCHED_OCTAVES = 3.0


def kernel_levels(caches: Mapping | None) -> list[tuple[str, int]]:
    """[(name, bytes)] of the data caches the kernel reports (sysinfo's ``caches``: L1d_bytes, L2_bytes,
    L3_bytes), in order, the missing ones left out."""
    caches = caches or {}
    return [(name, int(caches[key])) for name, key in KERNEL_LEVELS if not missing(caches.get(key))]


def match_levels(ends: list[float | None], kernel: list[tuple[str, int]]) -> dict[int, int]:
    """{level index: kernel index}: the order-keeping match with the fewest octaves of difference in total, each
    level or kernel cache left unmatched costing UNMATCHED_OCTAVES (eighth read S12-bare 4: matched by rank, a level
    ending at 1-1.4 MiB was called 'L3, a factor 33.9 from the kernel's 48 MiB' beside the kernel's 1.25 MiB L2,
    and a step at 256-362 KiB 'L2, a factor 3.5 from 1,280 KiB'): a pair further apart than twice that is left
    unmatched on both sides."""
    known = [i for i, e in enumerate(ends) if e is not None]
    best: tuple[float, dict[int, int]] = (math.inf, {})
    for k in range(min(len(known), len(kernel)), -1, -1):
        for lv in itertools.combinations(known, k):
            for kn in itertools.combinations(range(len(kernel)), k):
                cost = sum(abs(math.log2(float(ends[i] or 1) / kernel[j][1])) for i, j in zip(lv, kn)) + \
                    UNMATCHED_OCTAVES * (len(known) + len(kernel) - 2 * k)
                if cost < best[0] - 1e-9:
                    best = (cost, dict(zip(lv, kn)))
    return best[1]


def off_by(kb: float, lo: float, hi: float) -> float:
    """How far (a factor >= 1) the size kb lies from [lo, hi] (bytes): 1 within it."""
    return max(1.0, lo / kb, kb / hi)
