"""Memory analysis as text (report layer): the page-walk sentence and the short ``memory_fit`` table to read,
with the pieces they share (saturation, peak, crossing and held-out texts). Numbers are formatted by
memstor.core.fmt alone; missing is memstor.core.schema.missing ('–').

Inputs are the tables of memstor.analysis.memory (page_walk, fit_table). Units: ns, MB/s (10^6 B/s).
"""

from __future__ import annotations

import pandas as pd

from memstor.analysis.hosts import each_host
from memstor.analysis.memory import page_walk
from memstor.core.fmt import ci_text, fixed
from memstor.core.schema import missing


@each_host
def page_walk_text(df: pd.DataFrame) -> str:
    """One markdown sentence on the idle latency with huge and 4 KiB pages (or why one is missing)."""
    w = page_walk(df)
    if w["n_huge"] and w["n_small"] and w.get("gate_failed"):
        bad = w["gate_failed"]  # a value whose run failed its gate is not stated (S13-bare 2, S13-loop 9)
        said = [f"with {name} withheld (its run failed its gate: {bad[k]})" if k in bad else f"{ns:.1f} ns with {name}"
                for k, name, ns in (("huge", f"huge pages ({w['pages']})", w["huge_page_ns"]),
                                    ("small", "4 KiB pages", w["small_page_ns"]))]
        # S14-bare 4: 'no page-walk cost is stated' beside §4.5's 23.6 ns from the working-set sweep
        return (f"Idle mean latency {' and '.join(said)}: no page-walk cost is stated from these idle runs (the "
                "numbers: report.html's memory tables).")
    if w["n_huge"] and w["n_small"] and w["page_walk_ns"] <= 0:
        return (f"Idle mean latency {w['huge_page_ns']:.1f} ns with huge pages ({w['pages']}) and "
                f"{w['small_page_ns']:.1f} ns with 4 KiB pages: no page-walk cost shows here (the buffer's "
                "page tables fit the caches, or the noise is larger than the cost).")
    if w["n_huge"] and w["n_small"]:
        return (f"Idle mean latency **{w['huge_page_ns']:.1f} ns** with huge pages ({w['pages']}; no page walks) "
                f"and {w['small_page_ns']:.1f} ns with 4 KiB pages: the difference, "
                f"**{w['page_walk_ns']:+.1f} ns ({w['page_walk_pct']:+.0f} %)**, is the page-walk cost. With 4 KiB "
                "pages a random chase over a buffer far larger than the TLB's reach misses the TLB on almost "
                "every load and walks the page tables first (on a VM with nested paging, two levels of "
                "them), so that figure is the huge-page latency plus translation (whether either is DRAM's: the "
                "buffer against the last-level cache, memory_buffer_llc).")
    if w["n_small"]:
        return (f"Idle mean latency {w['small_page_ns']:.1f} ns with 4 KiB pages only (huge pages were not used): it "
                "includes the page-walk cost of TLB misses, so the latency without them is lower.")
    if w["n_huge"]:
        return f"Idle mean latency {w['huge_page_ns']:.1f} ns with huge pages ({w['pages']}); no 4 KiB-page figure."
    return "Idle latency was not measured."


def saturation_text(r) -> str:
    """``plateau 135,394 MB/s (4 points)``, ``no plateau``, plus ``; hook`` (a memory_fit row)."""
    text = (f"plateau {fixed(r['b_sat_MBps'], 0)} MB/s ({int(r['plateau_points'])} points)"
            if bool(r.get("saturated")) else "no plateau")
    return text + ("; hook" if bool(r.get("hook")) else "")


def peak_text(r, unit: str = "MBps") -> str:
    """The fitted peak with its 95 % interval, or ``not identifiable: <reason>`` (a fit-table row)."""
    if not bool(r.get("identifiable")):
        return f"not identifiable: {r.get('reason') or 'no model'}"
    return ci_text(r[f"peak_{unit}"], r.get(f"peak_{unit}_ci_low"), r.get(f"peak_{unit}_ci_high"), 0, "")


def crossing_text(value, censored, level: str) -> str:
    """Bandwidth at a latency level: the number, ``not reached`` (censored) or ``–``."""
    if not missing(value):
        return fixed(value, 0)
    return "not reached" if bool(censored) else "–"


def holdout_text(err, points) -> str:
    """Held-out error: ``12.3 % (3 points)``, ``> 1,000 %`` for a model that diverges, ``–``."""
    if missing(err):
        return "–"
    pts = f" ({int(points)} point{'s' if int(points) != 1 else ''})"
    return ("> 1,000 %" if float(err) > 1000 else f"{float(err):.1f} %") + pts


def fit_summary(fits: pd.DataFrame) -> pd.DataFrame:
    """The memstor.analysis.memory.fit_table as a short table to read: curve, points, saturation (plateau bandwidth,
    hook), R0 with its 95 % interval, the peak with its interval or ``not identifiable: <reason>``, the
    measured maximum B_max, R(B_max)/R0, the bandwidth where the measured latency reaches 1.25·R0 and
    2·R0 (``not reached`` = censored), the held-out error, and the DRAM read share beside MLC's mix.
    Every number in one format (thousands separators, fixed decimals per column)."""
    cols = ["curve", "points", "saturation", "R0 (ns) [95 % CI]", "peak (MB/s) [95 % CI]", "B_max (MB/s)",
            "R(B_max)/R0", "BW at 1.25·R0 (MB/s)", "BW at 2·R0 (MB/s)", "held-out error",
            "DRAM read share (mix)"]
    if fits.empty:
        return pd.DataFrame(columns=cols)

    def shares(r) -> str:
        if missing(r.get("dram_read_share_est")):
            return "–"
        return f"{r['dram_read_share_est']:.2f} ({r['mix_read_share']:.2f})"

    rows = []
    for _, r in fits.iterrows():
        rows.append([
            r["curve"], r["points"], saturation_text(r),
            ci_text(r["r0_ns"], r["r0_ns_ci_low"], r["r0_ns_ci_high"], 1, ""), peak_text(r),
            fixed(r["b_max_MBps"], 0) + (" (gate failed)" if not missing(r.get("b_max_gate_failed"))
                                         and bool(r.get("b_max_gate_failed")) else ""),
            fixed(r["r_at_b_max_over_r0"], 2),
            crossing_text(r["bw_at_1p25_r0_MBps"], r["bw_at_1p25_r0_censored"], "1.25"),
            crossing_text(r["bw_at_2_r0_MBps"], r["bw_at_2_r0_censored"], "2"),
            holdout_text(r["holdout_error_pct"], r["holdout_points"]), shares(r)])
    return pd.DataFrame(rows, columns=cols)
