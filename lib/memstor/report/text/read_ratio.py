"""Report text, the read-ratio family: this machine's memory curves by DRAM read share and the published
platforms nearest to it (memstor.analysis.read_ratio). Pure: DataFrame in, display table or markdown out."""

from __future__ import annotations

import pandas as pd

from memstor.analysis.read_ratio import main_family
from memstor.analysis.reference_curves import reference_caption
from memstor.core.fmt import ci_text, fmt_number
from memstor.core.schema import missing
from memstor.report.text.headline import dram_words


def _pct(v) -> str:
    return "–" if missing(v) else f"{float(v):.0f} %"


def _threads(v) -> str:
    return "an unknown number of load threads (imported data)" if missing(v) else f"{int(v)} load thread(s)"


def _gate_failed(r) -> bool:
    """Whether the run a curve's B_max is read at failed memstor's quality gate (``b_max_gate_failed``)."""
    v = r.get("b_max_gate_failed")
    return False if missing(v) else bool(v)


def b_max_text(r) -> str:
    """A curve's B_max (MB/s), with '(gate failed)' where its run failed memstor's quality gate."""
    return fmt_number(r["b_max_MBps"]) + (" (gate failed)" if _gate_failed(r) else "")


def read_ratio_display(table: pd.DataFrame | None) -> pd.DataFrame:
    """One row per curve of a family of two read shares or more: device (with several), access size, the
    traffic and its shares (DRAM estimated, requests), B_max, R0 and the fitted peak with their 95 % intervals
    (or why none)."""
    cols = ["device", "access (B)", "traffic", "DRAM reads", "request reads", "B_max (MB/s)", "R0 (ns)",
            "peak (MB/s)"]
    if table is None or table.empty:
        return pd.DataFrame(columns=cols)
    t = table[table["family_size"] >= 2]
    out = pd.DataFrame({
        "device": t["host"], "access (B)": t["access_bytes"].map(lambda v: str(int(v))), "traffic": t["traffic"],
        "DRAM reads": t["dram_read_pct_est"].map(_pct), "request reads": t["mix_read_pct"].map(_pct),
        "B_max (MB/s)": [b_max_text(r) for _, r in t.iterrows()],
        "R0 (ns)": [ci_text(r["r0_ns"], r["r0_ns_ci_low"], r["r0_ns_ci_high"], 0, "") for _, r in t.iterrows()],
        "peak (MB/s)": ["–" if missing(r["identifiable"]) else "not identifiable" if not bool(r["identifiable"])
                        else ci_text(r["peak_MBps"], r["peak_MBps_ci_low"], r["peak_MBps_ci_high"], 0, "")
                        for _, r in t.iterrows()],
    })
    return out if t["host"].nunique() > 1 else out.drop(columns="device")


def read_ratio_sentences(table: pd.DataFrame | None, reference: pd.DataFrame | None,
                         validity: pd.DataFrame | None = None) -> list[str]:
    """Per device: how B_max moves from the most-read to the least-read curve of its largest family, and the
    nearest published platforms with their distance and the source (markdown). The read shares are DRAM's only
    where the buffer passed the last-level cache (validity's memory_buffer_llc; else the sentence says so)."""
    out = []
    families = table[table["family_size"] >= 2] if table is not None and len(table) else pd.DataFrame()
    for host, g in (families.groupby("host", sort=True) if len(families) else []):
        fam = main_family(g)  # the family the figure draws
        hi, lo = fam.iloc[0], fam.iloc[-1]
        bad = [str(r["traffic"]) for r in (hi, lo) if _gate_failed(r)]
        if bad:  # R-loop 11.1, R-bare M-15: a maximum from a run that failed its gate is no finding
            out.append(f"**{host}** ({int(hi['access_bytes'])} B, {_threads(hi['load_threads'])}): how B_max moves "
                       f"from the most- to the least-read curve is not stated: the {'runs' if len(bad) > 1 else 'run'} B_max "
                       "is read from "
                       f"({', '.join(bad)}) failed the memory gate (memory_gate in the checks); {len(fam)} read "
                       "shares.")
            continue
        words = dram_words(validity, str(host))  # R-loop 11.1, R-bare M-12: 'DRAM reads' of a buffer the LLC holds
        out.append(f"**{host}** ({int(hi['access_bytes'])} B, {_threads(hi['load_threads'])}): B_max "
                   f"{fmt_number(hi['b_max_MBps'])} MB/s at {_pct(hi['dram_read_pct_est'])} "
                   f"{'reads' if words else 'DRAM reads'} ({hi['traffic']}), {fmt_number(lo['b_max_MBps'])} MB/s at "
                   f"{_pct(lo['dram_read_pct_est'])} ({lo['traffic']}); {len(fam)} read shares"
                   + (f" ({words})." if words else "."))
    if reference is not None and len(reference):
        for host, g in reference.groupby("host", sort=True):
            first = g.iloc[0]
            near = ", ".join(f"{r['platform']} ({r['distance']:.2f})" for _, r in g.iterrows())
            out.append(
                f"Nearest published platforms to **{host}** (log distance of the unloaded latency and of the "
                f"latency at the highest bandwidth this host reached; 0.1 ≈ 10 %): "
                f"{near}; this machine: {fmt_number(first['measured_idle_latency_ns'])} ns at its lightest load, "
                f"{fmt_number(first['measured_peak_MBps'])} MB/s with {_threads(first['load_threads'])} "
                f"({reference_caption(g['platform']).removesuffix('.')}).")
    return out
