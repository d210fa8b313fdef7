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


def slower_run(labels: list[str], ratio: list[float]) -> str:
    """'; at each of the last 10 sizes in a row (2.9 MiB to 64.0 MiB: 1.03-3.16×), by > 10 % at 6
    of them, not at 47.2 MiB (1.097×)': the unbroken run of sizes up to the sweep's end at which 4 KiB pages measured
    slower at all (``ratio`` 4K / 2M per size, ``labels`` the sizes in words), where it is 3 sizes or more, and the
    last size in it within TLB_MIN_PCT, which broke the rule's 2 sizes in a row (S21-bare 1: the rule missed by
    47 MiB's 1.097× and the words read as no evidence); '' otherwise."""
    k = 0
    while k < len(ratio) and ratio[-1 - k] > 1:
        k += 1
    if k < 3:
        return ""
    run = ratio[-k:]
    margin = 1 + TLB_MIN_PCT / 100
    within = [i for i in range(len(ratio) - k, len(ratio) - 1) if ratio[i] <= margin]
    broke = f", not at {labels[within[-1]]} ({ratio[within[-1]]:.3f}×)" if within else ""
    return (f"; at each of the last {k} sizes in a row ({labels[-k]} to {labels[-1]}: "
            f"{min(run):.2f}-{max(run):.2f}×), by > {TLB_MIN_PCT:g} % at {sum(r > margin for r in run)} of them{broke}")
