"""Report text, latency–throughput curves: memory (memory_fit) and storage (storage_fit) curves in one
vocabulary (memstor.analysis.curves), the pacing comparison and the other sections of MLC's default run, as
display tables and sentences (markdown). Units in the cells: memory ns and MB/s, storage µs and IOPS."""

from __future__ import annotations

import pandas as pd

from memstor.analysis.curves import POOR_FIT_PCT
from memstor.analysis.memory import below_l1
from memstor.core.fmt import ci_text, fixed, md_escape
from memstor.core.schema import missing
from memstor.core.units import size_text
from memstor.report.memory_text import fit_summary, holdout_text


def memory_display(mem: pd.DataFrame) -> pd.DataFrame:
    """The memory_fit table (memstor.analysis.curves) for the report: the device, then
    memstor.report.memory_text.fit_summary — saturation, R0 and the peak with 95 % intervals (or
    "not identifiable: <reason>"), the measured maximum, R(B_max)/R0, the bandwidth at 1.25·R0 and 2·R0
    (censored: "not reached"), the held-out error and the DRAM read share."""
    if mem is None or mem.empty:
        return pd.DataFrame()
    shown = fit_summary(mem)
    return shown.assign(device=mem["host"].to_numpy())[["device", *shown.columns]]


#: Units and decimals of the two kinds of curve: (throughput column stem, throughput unit, its decimals,
#: latency column unit, latency unit shown, its decimals, throughput prefix in metric names).
_MEM = ("MBps", "MB/s", 0, "ns", "ns", 1, "b")
_STO = ("iops", "IOPS", 0, "us", "µs", 1, "x")


def _curve_sentence(name: str, r, kind) -> str:
    """One markdown sentence on one row of memory_fit / storage_fit: saturation, the model below the
    plateau (R0, peak with 95 % intervals, or why not identifiable), the measured maximum and the latency
    levels, the held-out check."""
    xu, xs, xd, ru, rs, rd, xp = kind
    parts = []
    n_pts = int(r["points"])
    if bool(r.get("saturated")):
        out = r.get("outstanding_at_b_max" if xp == "b" else "outstanding_at_x_max")
        little = (f", with about {fixed(out, 0)} requests in flight by Little's law"
                  if not missing(out) else "")
        parts.append(f"saturated: a plateau at **{fixed(r[f'{xp}_sat_{xu}'], xd)} {xs}** over "
                     f"{int(r['plateau_points'])} of {n_pts} points{little}")
    else:
        parts.append(f"no plateau over {n_pts} points")
    if bool(r.get("hook")):
        parts.append("it hooks (beyond its maximum, throughput falls while latency rises)")
    if missing(r.get(f"r0_{ru}")):
        parts.append(f"no model: {r.get('reason') or 'too few points'}")
    else:
        r0 = ci_text(r[f"r0_{ru}"], r[f"r0_{ru}_ci_low"], r[f"r0_{ru}_ci_high"], rd, rs)
        where = "below it " if bool(r.get("saturated")) else ""
        fit = f"{where}the open-queue model gives R0 = {r0} (95 % interval, {int(r['fit_points'])} points)"
        if bool(r.get("identifiable")):
            peak = ci_text(r[f"peak_{xu}"], r[f"peak_{xu}_ci_low"], r[f"peak_{xu}_ci_high"], xd, xs)
            bound = " — bounded by the measured plateau" if bool(r.get("saturated")) else ""
            fit += f" and a peak of {peak}{bound}"
        else:
            fit += f"; its peak is not identifiable: {r.get('reason')}"
        rms = r.get("fit_rms_pct")
        if not missing(rms) and rms > POOR_FIT_PCT:
            fit += f" — and the open-queue form fits these points poorly (RMS error {rms:.0f} %)"
        parts.append(fit)
    xmax = fixed(r[f"{xp}_max_{xu}"], xd)
    ratio = r.get(f"r_at_{xp}_max_over_r0")
    parts.append(f"the highest throughput measured is {xmax} {xs}"
                 + (f", at {fixed(ratio, 2)} × R0" if not missing(ratio) else ""))
    reached, censored = [], []
    stem = "bw" if xp == "b" else "x"
    for level, key in (("1.25·R0", "1p25"), ("2·R0", "2")):
        v, cens = r.get(f"{stem}_at_{key}_r0_{xu}"), r.get(f"{stem}_at_{key}_r0_censored")
        if not missing(v):
            reached.append(f"{level} at {fixed(v, xd)} {xs}")
        elif bool(cens):
            censored.append(level)
    if reached:
        parts.append("the measured latency reaches " + " and ".join(reached))
    if censored:
        parts.append(("it never reaches " if reached else "the measured latency never reaches ")
                     + " or ".join(censored) + " (censored: not extrapolated)")
    err = r.get("holdout_error_pct")
    if not missing(err):
        shown = "more than 1,000 %" if err > 1000 else f"{err:.1f} %"
        how = f" ({r['holdout_note']})" if not missing(r.get("holdout_note")) else ""
        parts.append(f"fitted below 80 % of its range, the model misses the top {int(r['holdout_points'])} "
                     f"point(s) by {shown}{how}")
    elif r.get("holdout_note"):
        parts.append(f"no held-out check: {r['holdout_note']}")
    return f"{name}: " + "; ".join(parts) + "."


def memory_sentences(mem: pd.DataFrame) -> list:
    """One sentence per loaded-latency curve (memory_fit row): saturation and Little's law, R0 and the peak
    with 95 % intervals (or "not identifiable: <reason>"), the measured maximum, the bandwidth where the
    measured latency reaches 1.25·R0 and 2·R0 (censored when not reached), the held-out check, and the
    DRAM read share beside MLC's instruction mix and the write penalty where known (markdown)."""
    out: list[str] = []
    if mem is None:
        return out
    for _, m in mem.iterrows():
        name = f"**{md_escape(str(m['host']))}, {md_escape(str(m['curve']))}**"
        s = _curve_sentence(name, m, _MEM)
        extra = []
        if not missing(m.get("dram_read_share_est")) and m.get("stores") not in ("", "none", None):
            extra.append(f"MLC's mix is {m['mix_read_share']:.0%} reads; with {m['stores']} stores DRAM sees "
                         f"about {m['dram_read_share_est']:.0%} reads")
        wp = m.get("write_penalty_pct")
        if not missing(wp) and m.get("traffic") != "read-only":
            extra.append(f"write penalty: its maximum is {wp:.1f} % below the read-only curve's" if wp >= 0 else
                         f"write penalty: none (its maximum is {-wp:.1f} % above the read-only curve's)")
        if extra:
            s = s[:-1] + "; " + "; ".join(extra) + "."
        out.append(s)
    return out


def held_text(r) -> str:
    """An open loop's points as the curve counts them: "4 held of 8 rates" (storage_fit's points, the held rates that
    kept up, of the rates offered); "" for a curve without offered rates (a closed sweep, memory)."""
    rates = r.get("rates")
    if missing(rates):
        return ""
    return f"{int(r['points'])} held of {int(rates)} rate{'s' if int(rates) != 1 else ''}"


def storage_sentences(storage: pd.DataFrame) -> list:
    """One sentence per storage curve (storage_fit row), in the same words as the memory curves; an open loop's
    says how many of its rates held (its curve is theirs only), or why it has no curve."""
    out: list[str] = []
    if storage is None:
        return out
    for _, r in storage.iterrows():
        bs = "" if pd.isna(r.get("bs_bytes")) else f"{size_text(int(r['bs_bytes']))} "
        name = f"**{md_escape(str(r['host']))}, {bs}{r['rw']}, {r['kind']}**"
        held = held_text(r)
        if held and missing(r.get("x_max_iops")):
            out.append(f"{name}: no curve — {held} (a curve needs 2 rates whose loop held and that kept up).")
            continue
        out.append(_curve_sentence(f"{name} ({held}: the curve is theirs only)" if held else name, r, _STO))
    return out


def _curve_rows(df: pd.DataFrame, kind, label) -> list:
    """Rows of the latency–throughput display for memory_fit or storage_fit rows."""
    xu, xs, xd, ru, rs, rd, xp = kind
    stem = "bw" if xp == "b" else "x"
    rows = []
    for _, r in df.iterrows():
        sat = (f"plateau {fixed(r[f'{xp}_sat_{xu}'], xd)} {xs} ({int(r['plateau_points'])} pts)"
               if bool(r.get("saturated")) else "no plateau") + ("; hook" if bool(r.get("hook")) else "")
        if missing(r.get(f"r0_{ru}")):
            r0, peak = f"no model: {r.get('reason') or 'too few points'}", "–"
        else:
            r0 = ci_text(r[f"r0_{ru}"], r[f"r0_{ru}_ci_low"], r[f"r0_{ru}_ci_high"], rd, rs)
            peak = (ci_text(r[f"peak_{xu}"], r[f"peak_{xu}_ci_low"], r[f"peak_{xu}_ci_high"], xd, xs)
                    if bool(r.get("identifiable")) else f"not identifiable: {r.get('reason')}")

        def level(key, r=r):
            v, cens = r.get(f"{stem}_at_{key}_r0_{xu}"), r.get(f"{stem}_at_{key}_r0_censored")
            if not missing(v):
                return f"{fixed(v, xd)} {xs}"
            return "not reached" if not missing(cens) and bool(cens) else "–"

        ratio = r.get(f"r_at_{xp}_max_over_r0")
        top = r.get(f"{xp}_max_{xu}")
        rows.append({"device": r["host"], "curve": label(r), "points": held_text(r) or int(r["points"]),
                     "saturation": sat, "R0 [95 % CI]": r0, "peak [95 % CI]": peak,
                     "max measured": "–" if missing(top) else f"{fixed(top, xd)} {xs}",
                     "R(max)/R0": fixed(ratio, 2) if ratio is not None else "–",
                     "at 1.25·R0": level("1p25"), "at 2·R0": level("2"),
                     "held-out error": holdout_text(r.get("holdout_error_pct"), r.get("holdout_points")),
                     "quality gate": _gate_text(r)})
    return rows


def _gate_text(r) -> str:
    """A memory curve's quality gate in words: how many of its points failed it (loadlat sub-window spreads,
    CPU share, steal; memstor.measure.loadlat), or "–" where it is not evaluated (storage, MLC, imports)."""
    failed = r.get("gate_failed_points")
    if missing(failed) or str(r.get("tool")) != "loadlat":
        return "–"
    return "all points passed" if int(failed) == 0 else f"{int(failed)} of {int(r['points'])} points failed"


def pacing_display(pacing: pd.DataFrame | None) -> pd.DataFrame:
    """The fixed-vs-exponential pacing comparison (memstor.analysis.memory.pacing_table) for the report."""
    if pacing is None or pacing.empty:
        return pd.DataFrame()
    return pd.DataFrame({
        "device": pacing["host"], "traffic": pacing["traffic"],
        "access": pacing["access_bytes"].map(lambda v: "?" if missing(v) else f"{int(v)} B"),
        "bandwidth (MB/s)": [f"{fixed(b, 0)} ({int(s)} % of max)" for b, s in
                             zip(pacing["bandwidth_MBps"], pacing["share_of_max_pct"])],
        "latency, fixed (ns)": pacing["latency_fixed_ns"].map(lambda v: fixed(v, 0)),
        "latency, exp (ns)": pacing["latency_exp_ns"].map(lambda v: fixed(v, 0)),
        "exp vs fixed": pacing["exp_vs_fixed_pct"].map(lambda v: "–" if missing(v) else f"{v:+.1f} %"),
    })


#: How the report names each MLC default-run section.
SECTION_NAMES = {"latency_matrix": "idle latency matrix", "bandwidth_matrix": "bandwidth matrix",
                 "max_bandwidth": "max bandwidth", "c2c_latency": "cache to cache"}


def sections_display(sections: pd.DataFrame | None, levels: pd.DataFrame | None = None) -> pd.DataFrame:
    """The other sections of MLC's default run (memstor.analysis.memory.sections_table) for the report: one row
    per device x section x what x node pair, the value with its unit ([95 % interval] when repeated) and n; a
    cache-to-cache value below the host's L1 latency (``levels``: hierarchy.cache_levels) withheld with why
    (memstor.analysis.memory.below_l1)."""
    if sections is None or sections.empty:
        return pd.DataFrame()
    floor = below_l1(sections, levels)

    def nodes(src, dst) -> str:
        return "–" if missing(src) and missing(dst) else f"{fixed(src, 0)} → {fixed(dst, 0)}"

    return pd.DataFrame({
        "device": sections["host"], "tool": sections["tool"],
        "section": sections["section"].map(lambda v: SECTION_NAMES.get(v, v)), "what": sections["what"],
        "nodes (CPU → memory; writer → reader)": [nodes(a, b) for a, b in zip(sections["src_node"], sections["dst_node"])],
        "value (95 % CI)": [f"withheld: {f}" if f else ci_text(v, lo, hi, 1 if u == "ns" else 0, u) for v, lo, hi, u, f in
                            zip(sections["value"], sections["ci_low"], sections["ci_high"], sections["unit"], floor)],
        "n": sections["n"],
    })


def curves_display(mem: pd.DataFrame | None, storage: pd.DataFrame | None) -> pd.DataFrame:
    """One "latency–throughput curves" table for memory and storage together, one vocabulary
    (memstor.analysis.curves): per device × curve the saturation (plateau throughput, hook), R0 and the
    peak with 95 % intervals (or "not identifiable: <reason>"), the highest throughput measured,
    R(max)/R0, the throughput where the measured latency reaches 1.25·R0 and 2·R0 ("not reached" =
    censored) and the held-out error. Units are in the cells (memory: ns, MB/s; storage: µs, IOPS)."""
    rows = []
    if mem is not None and not mem.empty:
        rows += _curve_rows(mem, _MEM, lambda r: f"memory: {r['curve']}")
    if storage is not None and not storage.empty:
        def label(r):
            bs = "" if pd.isna(r.get("bs_bytes")) else f"{size_text(int(r['bs_bytes']))} "
            return f"storage: {bs}{r['rw']}, {r['kind']}"
        rows += _curve_rows(storage, _STO, label)
    return pd.DataFrame(rows)


def curves_sentences(mem: pd.DataFrame | None, storage: pd.DataFrame | None) -> list:
    """The sentences of the latency–throughput section: memory curves, then storage curves (markdown)."""
    return memory_sentences(mem) + storage_sentences(storage)
