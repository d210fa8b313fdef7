"""How far a TLB reaches and when page walks cost nothing measurable: the words memstor.analysis.hierarchy gives
where 4 KiB pages are no slower than 2 MiB pages (sizes in bytes, percentages of an access's latency)."""

from __future__ import annotations

from memstor.core.units import size_text

#: 4 KiB pages slower than 2 MiB pages by more than this (%): beyond the TLB's reach.
TLB_MIN_PCT = 10.0
#: The most entries of a second-level TLB for 4 KiB pages on the cores memstor meets (Intel 1,536-2,048, AMD
#: Zen 4 3,072, Arm Neoverse V2 2,048), with room: a buffer of more 4 KiB pages is beyond any of their reach.
STLB_MAX_ENTRIES = 4096
#: Bytes of last-level page-table entries per 4 KiB page (x86-64 and arm64 4 KiB granule: 8-byte entries).
PTE_BYTES = 8


def why_no_walk_cost(largest: float) -> str:
    """Why 4 KiB pages cost no more than 2 MiB pages up to ``largest`` (bytes): within a second-level TLB's reach
    only where its 4 KiB pages are at most STLB_MAX_ENTRIES; beyond it (seventh read S11-loop 9: 64 MiB is 16,384
    pages, 'stayed within the TLB's reach' was not possible) the walks were cheap, their page-table entries
    (pages x 8 B) small enough to stay in the caches; or the huge pages gave no relief."""
    pages = largest / 4096
    relief = "or the huge pages gave no TLB relief (e.g. a VM whose host backs them with 4 KiB pages)"
    if pages <= STLB_MAX_ENTRIES:
        return f"the sweep may have stayed within the TLB's reach ({pages:,.0f} 4 KiB pages at most), {relief}"
    return (f"the largest buffer's {pages:,.0f} 4 KiB pages are beyond a second-level TLB's reach (at most about "
            f"{STLB_MAX_ENTRIES:,} entries): its walks were cheap, likely because their page-table entries "
            f"({size_text(pages * PTE_BYTES)}) stayed in the caches, a walk under {TLB_MIN_PCT:g} % of an access "
            f"to memory; {relief}; a sweep several times past the last-level cache shows what a walk to memory costs")
