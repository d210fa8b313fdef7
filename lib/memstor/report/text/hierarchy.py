"""Report text, the memory hierarchy: the cache levels beside the kernel's sizes, the TLB cost and
memory-level parallelism (memstor.analysis.hierarchy). Pure: DataFrame in, display table or markdown out."""

from __future__ import annotations

import re

import pandas as pd

from memstor.analysis.hierarchy import (
    AGREE_FACTOR,
    CPU_HIGH,
    CPU_LOW,
    LAST_LEVEL,
    LEFT_OUT_LEVEL,
    RISE_LEVEL,
    cpu_held,
    saturation_chains,
)
from memstor.analysis.level_climb import Climb, kept_to, last_climb
from memstor.analysis.spread import ASSUMED_RATIO
from memstor.core.fmt import fmt_number
from memstor.core.schema import missing
from memstor.core.units import size_text
from memstor.report.text.headline import dram_words


def _size(v) -> str:
    return "–" if missing(v) else size_text(int(v))


def _latency_cell(r: pd.Series) -> str:
    """A level's latency (ns); the TLB row without one says what its note says: 'not shown' (R-1cpu M10: not
    'unknown' beside a note that gives the reason; the reason follows the table, :func:`hierarchy_sentences`)."""
    if missing(r["latency_ns"]):
        return "not shown" if str(r.get("note") or "").startswith("not shown") else "–"
    return fmt_number(r["latency_ns"])


#: The display's agreement column: within a factor AGREE_FACTOR of the kernel's size, said in its header.
AGREES = f"agrees (within {AGREE_FACTOR:g}×)"


def cache_levels_display(levels: pd.DataFrame | None) -> pd.DataFrame:
    """One row per level: device (with several), level, latency (ns and core clocks: the median of the batch
    medians the levels are read from, memstor.analysis.hierarchy; not the mean, which descheduling inflates;
    R-loop 10.3: L1 1.39 ns is the p50, the means 1.42-1.45), where it ends (the working-set size), the
    kernel's cache size and whether they agree, the rule in its header (twelfth read S15-1cpu 4: 'yes' beside 32-45.2
    KiB and 48 KiB; the reasons: the table's CSV and :func:`hierarchy_sentences`)."""
    cols = ["device", "level", "median latency (ns)", "clocks", "ends at", "kernel's size", AGREES]
    if levels is None or levels.empty:
        return pd.DataFrame(columns=cols)
    out = pd.DataFrame({
        "device": levels["host"], "level": levels["level"],
        "median latency (ns)": [_latency_cell(r) for _, r in levels.iterrows()],
        "clocks": [("–" if missing(r["latency_ns"]) else "unknown" if missing(r["clocks"]) else fmt_number(r["clocks"]))
                   for _, r in levels.iterrows()],  # clock_note: the GHz; no latency, nothing to convert
        "ends at": [(f"from {_size(r['ends_at_bytes'])}" if str(r["level"]).startswith("TLB") and  # R-loop 9.5: where
                     not missing(r["ends_at_bytes"]) else _ends(r))    # the page-walk cost starts
                    for _, r in levels.iterrows()],
        "kernel's size": levels["kernel_bytes"].map(_size),
        AGREES: [("–" if missing(a) else "yes" if bool(a) else "no") for a in levels["agrees"]],
    })
    notes = levels["clock_note"].dropna().astype(str) if "clock_note" in levels else pd.Series([], dtype=str)
    if notes.str.startswith("not stated").any():  # S6-bare C-14: clocks from a calibration that moved
        out = out.drop(columns="clocks")
    elif len(notes) and notes.iloc[0]:
        out = out.rename(columns={"clocks": f"clocks ({notes.iloc[0]})"})
    return out if levels["host"].nunique() > 1 else out.drop(columns="device")


def _ends(r: pd.Series) -> str:
    """Where a level ends: '724.1 KiB-1 MiB', the last size it held and the next size measured (S11-1cpu 4: not the
    single '861 KiB' between them), else its ``ends_at_bytes``; '–' without one."""
    held, off = r.get("held_bytes"), r.get("off_bytes")
    return _size(r["ends_at_bytes"]) if missing(held) or missing(off) else f"{_size(held)}-{_size(off)}"


def mlp_display(mlp: pd.DataFrame | None) -> pd.DataFrame:
    """One row per threads x chains: mean latency per load (ns), bandwidth (MB/s) and where bandwidth stops
    growing. The bandwidth is derived from the same clock as the latency (loadlat: chains x 64 B x loads /
    elapsed, i.e. X = N x 64 B / R), not measured apart from it, so the column says so and Little's law is not
    shown as a check: its residual is 0 by construction (R-loop 11.2: 16 x 64 B / 208.1 ns = 4,920 MB/s,
    residual ~1e-8 %). ``used``: 'no: on a CPU 85 % of the time' for a run hierarchy_cpu_share leaves out, as the
    sentences do (S11: the HTML table listed the left-out runs beside '2 of 5 runs left out'); 'yes' otherwise."""
    bw = "bandwidth (MB/s, = N × 64 B / R)"
    cols = ["device", "threads", "chains", "mean latency (ns)", bw, "saturated", "used"]
    if mlp is None or mlp.empty:
        return pd.DataFrame(columns=cols)
    share = mlp["cpu_share"] if "cpu_share" in mlp else pd.Series(index=mlp.index, dtype=float)
    out = pd.DataFrame({
        "device": mlp["host"], "threads": mlp["threads"].map(lambda v: str(int(v))),
        "chains": mlp["chains"].map(lambda v: str(int(v))), "mean latency (ns)": mlp["latency_ns"].map(fmt_number),
        bw: mlp["bandwidth_MBps"].map(fmt_number),
        "saturated": [("yes" if not missing(s) and bool(s) else "") for s in mlp["saturated"]],
        "used": ["yes" if ok else f"no: on a CPU {100 * float(c):.0f} % of the time"
                 for ok, c in zip(cpu_held(share), share, strict=True)],
    })
    return out if mlp["host"].nunique() > 1 else out.drop(columns="device")


def left_out_sentence(working_set: pd.DataFrame | None, host: str, levels: pd.DataFrame) -> str:
    """'Left out (hierarchy_cpu_share: a measuring thread on a CPU outside 90-101 % of the time): random chain, 4K
    pages, 0.7 MiB (84 %); the levels and TLB cost come from the other runs.' naming every working-set run of
    `host` outside the band, of any pages and pattern (S9-bare M-7: page 1 listed the failed check, §4.5 never said
    a run was dropped); without the runs' table, the levels' own LEFT_OUT_LEVEL row; '' when none was left out."""
    parts = []
    if working_set is not None and {"host", "pages", "pattern", "cpu_share"} <= set(working_set.columns):
        w = working_set[working_set["host"].astype(str) == str(host)]
        for (pages, pattern), c in w.groupby(["pages", "pattern"], sort=True):
            bad = c[~cpu_held(c["cpu_share"])]
            if len(bad):
                share = 100 * bad["cpu_share"].astype(float)
                lo, hi = f"{share.min():.0f}", f"{share.max():.0f}"
                parts.append(f"{pattern} chain, {pages} pages, {_mib_list(bad['buffer_bytes'])} "
                             f"({lo if lo == hi else f'{lo}-{hi}'} %)")
    else:
        parts = [str(n) for n in levels.loc[levels["level"] == LEFT_OUT_LEVEL, "note"]]
    return (f"Left out (hierarchy_cpu_share: on a CPU outside {100 * CPU_LOW:.0f}-{100 * CPU_HIGH:.0f} % of the "
            "time): " + "; ".join(parts) + "; the levels and TLB cost come from the other runs.") if parts else ""


def _mib_list(sizes: pd.Series) -> str:
    """'724 KiB', '1 MiB and 8 MiB', or '20 sizes, 4 KiB-64 MiB' (more than 4); each in its own unit (S12-loop 8: an
    11.3 KiB buffer printed '0.0 MiB')."""
    v = [size_text(x) for x in sorted(float(x) for x in sizes)]
    if len(v) > 4:
        return f"{len(v)} sizes, {v[0]}-{v[-1]}"
    return " and ".join([", ".join(v[:-1]), v[-1]]) if len(v) > 1 else v[0]


def _climb_words(c: Climb) -> str:
    """'it steps at 1.2 MiB to the 120 ns level it ends on' where the next size is on that level, else 'it leaves its
    last cache level at 1.2 MiB, passes 20.9-32.6 ns at 1.4-2 MiB (no level) and reaches the 120 ns level it ends on
    at 2.8 MiB' (eleventh reads S14-loop 3, S14-1cpu 3: the step was placed at the level's end, not where the
    curve reached the level it ends on)."""
    if not c.between or c.reached_at is None:
        return f"it steps at {size_text(c.left_at)} to the {fmt_number(c.level_ns)} ns level it ends on"
    ns = [b[1] for b in c.between]
    lo, hi = size_text(c.between[0][0]), size_text(c.between[-1][0])
    at = lo if lo == hi else f"{lo}-{hi}"
    passes = fmt_number(ns[0]) if len(ns) == 1 else f"{fmt_number(min(ns))}-{fmt_number(max(ns))}"
    # S20-loop 5: '2.4 MiB' is no size measured: the midpoint of the two either side
    first = (f"from {size_text(c.reached_at)} ({fmt_number(c.reached_ns)} ns there)" if c.reached_ns is not None and
             abs(c.reached_ns - c.level_ns) > (ASSUMED_RATIO - 1) * c.level_ns else f"at {size_text(c.reached_at)}")
    return (f"it leaves its last cache level at about {size_text(c.left_at)} (midway between the sizes measured either "
            f"side), passes {passes} ns at {at} (no level) and "
            f"reaches the {fmt_number(c.level_ns)} ns level it ends on {first}")  # S22-cpu1 6: 114 ns 'on' 132


def coverage_sentence(working_set: pd.DataFrame | None, host: str,
                      step: Climb | tuple[float, float] | None = None, judged: bool = True) -> str:
    """What the working-set sweep of `host` covered beside the last-level cache the kernel reports (the table's
    ``llc_bytes``, memstor.analysis.hierarchy.WORKING_SET_COLUMNS): 'The sweep covered 4 KiB to 64 MiB, below the
    kernel's 480 MiB last-level cache: ...' or '..., 4.2× the kernel's 480 MiB last-level cache.'; '' without
    the sizes. A sweep that stops below the LLC never reads as going beyond it; where the curve steps onto a last
    level it ends on (``step``: memstor.analysis.level_climb.last_climb, or last_step's (bytes, ns)) that level is
    named as the one memory_buffer_llc judges against (R-loop 10.1: 'not shown to be DRAM' rested on the kernel's
    480 MiB alone), with the sizes it passed on the way (:func:`_climb_words`). Where the levels' curve kept fewer
    sizes than the sweep measured (runs left out for CPU share), the LLC is set against the sizes kept (eleventh
    read S14-bare 2: '64 MiB, 1.3× the kernel's 48 MiB' of a levels' curve kept to 22.6 MiB). ``judged`` False: no
    memory run was judged against it (no memory_buffer_llc row: S20-cpu1 5, a check named that had no row)."""
    if working_set is None or working_set.empty or not {"host", "buffer_bytes"} <= set(working_set.columns):
        return ""
    w = working_set[working_set["host"].astype(str) == str(host)]
    sizes = pd.to_numeric(w["buffer_bytes"], errors="coerce").dropna()
    if sizes.empty:
        return ""
    climb = step if isinstance(step, Climb) or step is None else Climb(*step)
    lo, hi = int(sizes.min()), int(sizes.max())
    llc = pd.to_numeric(w["llc_bytes"], errors="coerce").dropna() if "llc_bytes" in w.columns else pd.Series([])
    covered = f"The sweep covered {size_text(lo)} to {size_text(hi)}"
    top = climb.kept_to if climb is not None and climb.kept_to is not None else kept_to(working_set, host)
    if top is not None and top < hi:
        covered += f", the levels' curve to {size_text(top)} (its larger sizes left out)"
        hi = int(top)
    if llc.empty:
        return covered + " (the kernel reported no last-level cache size)."
    llc_b = int(llc.max())
    as_level = " as a level" if climb is not None and climb.between else ""  # sizes between may be its hits
    if hi < llc_b and climb:
        return (f"{covered}, below the kernel's {size_text(llc_b)} last-level cache: {_climb_words(climb)}, the step "
                + ("memory_buffer_llc judges the buffers against." if judged else "a memory run's buffer would be "
                   "judged against (memory_buffer_llc: no memory run here to judge)."))
    if hi < llc_b:
        return f"{covered}, below the kernel's {size_text(llc_b)} last-level cache: not shown to be DRAM."
    if hi < 2 * llc_b and climb and 2 * climb.left_at < llc_b:  # S13-bare 3: the step lay 16x below the 48 MiB LLC
        return (f"{covered}, {hi / llc_b:.1f}× the kernel's {size_text(llc_b)} last-level cache, which the curve does "
                f"not show{as_level} ({_climb_words(climb)}; as on a VM): that level is not shown to be DRAM.")
    if hi < 2 * llc_b:
        return (f"{covered}, only {hi / llc_b:.1f}× the kernel's {size_text(llc_b)} last-level cache: too little "
                "beyond it for the last level to be shown to be DRAM.")
    return f"{covered}, {hi / llc_b:.1f}× the kernel's {size_text(llc_b)} last-level cache."


def _level_part(r: pd.Series) -> str:
    """'L2 4.86 ns ending between 724.1 KiB and 1 MiB' of a level row (the last size it held and the next size; 'up
    to 1.8 MiB' where a table gives only ends_at_bytes); 'then 170 ns at 64 MiB (no level found there before the sweep
    ended)' of the row of a curve that rises past its last level (hierarchy.RISE_LEVEL); 'plateau 4 (no kernel cache) 167 ns to the
    sweep's end (its end not reached)' of a level the curve ends on."""
    if r["level"] == RISE_LEVEL:
        return (f"then {fmt_number(r['latency_ns'])} ns at {_size(r['ends_at_bytes'])} (still rising: the next "
                "level not reached)")
    held, off = r.get("held_bytes"), r.get("off_bytes")
    end = (f" ending between {_size(held)} and {_size(off)}" if not missing(held) and not missing(off) else
           f" up to {_size(r['ends_at_bytes'])}" if not missing(r["ends_at_bytes"]) else
           "" if r["level"] in ("memory", LAST_LEVEL) else " to the sweep's end (its end not reached)")
    return f"{r['level']} {fmt_number(r['latency_ns'])} ns{end}"


def _left_out_runs(g: pd.DataFrame, bad: pd.Series) -> str:
    """'2 of 5 runs left out (8 and 16 chains, their measuring threads on a CPU 80 and 73 % of the time, outside
    90-101 %: hierarchy_cpu_share failed)' of one threads group's rows (``bad``: outside the band)."""
    out = g[bad].sort_values("chains")
    chains = [str(int(c)) for c in out["chains"]]
    shares = [f"{100 * float(v):.0f}" for v in out["cpu_share"]]
    def both(v: list[str]) -> str:
        return " and ".join([", ".join(v[:-1]), v[-1]]) if len(v) > 1 else v[0]
    return (f"{len(out)} of {len(g)} runs left out ({both(chains)} chain{'s' if len(chains) > 1 else ''}, "
            f"{'their' if len(out) > 1 else 'its'} measuring thread{'s' if len(out) > 1 else ''} on a CPU "
            f"{both(shares)} % of the time, outside {100 * CPU_LOW:.0f}-{100 * CPU_HIGH:.0f} %: hierarchy_cpu_share "
            "failed)")


def mlp_sentence(host: str, threads: int, g: pd.DataFrame, said: set[str], dram_failed: bool) -> str:
    """One threads group's MLP sentence from the runs within hierarchy_cpu_share's band (its consequence: 'those runs
    are left out, and §4.5 states only what the runs within the band give'): the most MB/s and the chain count, and
    where bandwidth stops growing among those runs (memstor.analysis.hierarchy.saturation_chains); the runs left out
    named first (S11-1cpu 3: 'not stated: their measuring threads were on a CPU 73-99 %' where 3 of 5 runs, 96-99 %,
    were inside); 'not stated' only where none is inside. ``said``: the hosts whose law was already given."""
    held = cpu_held(g["cpu_share"] if "cpu_share" in g else pd.Series(index=g.index, dtype=float))
    if not held.any():
        share = 100 * pd.to_numeric(g["cpu_share"], errors="coerce")
        lo, hi = f"{share.min():.0f}", f"{share.max():.0f}"
        return (f"**{host}**, {threads} thread(s): not stated: their measuring threads were on a CPU "
                f"{lo if lo == hi else f'{lo}-{hi}'} % of the time (all {len(g)} runs), outside {100 * CPU_LOW:.0f}-"
                f"{100 * CPU_HIGH:.0f} % (hierarchy_cpu_share failed): their latencies include waits for a CPU.")
    kept = g[held].sort_values("chains")
    left = f"{_left_out_runs(g, ~held)}; from the other {len(kept)}: " if not held.all() else ""
    n_sat = saturation_chains(kept["chains"].tolist(), kept["bandwidth_MBps"].tolist())
    top = kept.loc[kept["bandwidth_MBps"].idxmax()]
    most = "the most chains measured" if held.all() else f"{int(kept['chains'].max())} chains, the most kept"
    where = f"stops growing from {int(n_sat)} chains" if n_sat is not None else f"still grows at {most}"
    law = "" if host in said else " (derived, not measured apart: X = N × 64 B / R)"
    said.add(host)
    return (f"**{host}**, {threads} thread(s): {left}{fmt_number(top['bandwidth_MBps'])} MB/s at {int(top['chains'])} "
            f"independent chains per thread; bandwidth {where}{law}"
            + ("; not shown to be DRAM's (memory_buffer_llc failed)." if dram_failed else "."))


def plateau_caveat(g: pd.DataFrame, mlp: pd.DataFrame | None, figures: pd.DataFrame | None, host: str) -> str:
    """'The last level's 135 ns is one run's batch medians, which no memory gate judges; the memory latency measured
    otherwise here is 160-182 ns (MLP run, 1 chain: 160 ns; matrix, local node 0 (not judged by the gate): 182 ns):
    it is no idle latency to quote.' where a host's last level is a plateau no kernel cache ends at (or memory) and
    another measurement of the latency beyond the caches that did not fail its checks (``mlp``'s one-thread one-chain
    run within hierarchy_cpu_share's band; ``figures``' idle-latency rows whose gate did not fail,
    memstor.analysis.memory_figures) lies beyond the 10 % assumed for single runs from it; where every other one
    failed or was withheld, that instead; '' otherwise (S21-bare 2: 135 ns the one quotable memory latency beside
    160-291 ns measured; S22-loop 2: a range from runs the report withholds is no comparison)."""
    last = g[~g["level"].astype(str).str.startswith("TLB") & g["latency_ns"].map(lambda v: not missing(v))]
    if last.empty or not (str(last["level"].iloc[-1]).startswith("plateau") or last["level"].iloc[-1] == "memory"):
        return ""
    lat = float(last["latency_ns"].iloc[-1])
    others: list[tuple[float, str]] = []
    failed = [0, 0]  # idle-latency figures the gate failed, MLP runs outside hierarchy_cpu_share's band
    if mlp is not None and {"host", "threads", "chains", "latency_ns"} <= set(mlp.columns):
        one = mlp[(mlp["host"].astype(str) == host) & (mlp["threads"] == 1) & (mlp["chains"] == 1)]
        held = cpu_held(one["cpu_share"]) if "cpu_share" in one.columns else pd.Series(True, index=one.index)
        failed[1] += int((~held).sum())
        others += [(float(v), "MLP run, 1 chain") for v in pd.to_numeric(one.loc[held, "latency_ns"], errors="coerce")
                   .dropna()]
    if figures is not None and {"host", "quantity", "measurement", "value"} <= set(figures.columns):
        idle = figures[(figures["host"].astype(str) == host) & (figures["quantity"] == "idle latency")
                       & figures["value"].map(lambda v: not missing(v))]
        gate = idle.get("gate", pd.Series("", index=idle.index)).fillna("").astype(str)
        failed[0] += int(gate.str.startswith("failed").sum())
        others += [(float(r.value), str(r.measurement).split(" (")[0] + (" (not judged by the gate)" if
                    str(gt).startswith("not judged") else "")) for r, gt in zip(idle.itertuples(), gate)
                   if not str(gt).startswith("failed")]
    head = f"The last level's {fmt_number(lat)} ns is one run's batch medians, which no memory gate judges"
    if not others:
        return (f"{head}; every other memory latency measured here ({_gone(failed)}) failed its checks: it is "
                "no idle latency to quote.") if sum(failed) else ""
    if all(lat / ASSUMED_RATIO <= v <= lat * ASSUMED_RATIO for v, _ in others):
        return ""
    lo, hi = min(v for v, _ in others), max(v for v, _ in others)
    said = "; ".join(f"{w}: {fmt_number(v)} ns" for v, w in sorted(others))
    span = fmt_number(lo) if fmt_number(lo) == fmt_number(hi) else f"{fmt_number(lo)}-{fmt_number(hi)}"
    gone = f"; left out, their checks failed: {_gone(failed)}" if sum(failed) else ""
    return (f"{head}; the memory latency measured otherwise here is {span} ns ({said}{gone}): it is no idle latency "
            "to quote.")


def _gone(failed: list[int]) -> str:
    """'3 idle-latency runs the memory gate failed and 1 MLP run outside hierarchy_cpu_share's band' (S23-loop 5: '4
    more' beside a table of 3)."""
    parts = [f"{k} idle-latency run{'s' if k > 1 else ''} the memory gate failed" for k in failed[:1] if k] + \
        [f"{k} MLP run{'s' if k > 1 else ''} outside hierarchy_cpu_share's band" for k in failed[1:] if k]
    return " and ".join(parts)


def hierarchy_sentences(levels: pd.DataFrame | None, mlp: pd.DataFrame | None,
                        working_set: pd.DataFrame | None = None, validity: pd.DataFrame | None = None,
                        figures: pd.DataFrame | None = None) -> list[str]:
    """Per device: the levels in one sentence (latency and where each ends, a disagreement with the kernel's
    size named), what the sweep covered beside the last-level cache when `working_set` is given
    (:func:`coverage_sentence`), the last plateau set against the other memory latencies (``figures``:
    :func:`plateau_caveat`), and where memory-level parallelism stops paying (markdown), its MB/s not shown to
    be DRAM's where the device's memory_buffer_llc failed (R-loop p9: one rule for every memory bandwidth)."""
    out = []
    levels = levels if levels is not None else pd.DataFrame(columns=["host"])
    for host in sorted(set(levels["host"])):
        g = levels[levels["host"] == host]
        parts = [_level_part(r) for _, r in g.iterrows()
                 if not str(r["level"]).startswith("TLB") and not missing(r["latency_ns"])]  # a kernel level unmatched
        text = f"**{host}**: median latency per access (batch medians) " + ", ".join(parts) + "."
        unmatched = g["latency_ns"].map(missing) & g["kernel_bytes"].map(lambda k: not missing(k)) & ~(
            g["note"].astype(str).str.startswith("not reached") & (working_set is not None))  # coverage says it
        bad = g[g["agrees"].map(lambda a: not missing(a) and not bool(a)) | unmatched]
        for _, r in bad.iterrows():
            note = str(r["note"] or "the curve and the kernel disagree")
            if note.startswith("ends ") and "from the kernel's" in note:  # the note names both sizes
                text += f" {r['level']} {note.split(' (random chain')[0].split(' (e.g.')[0]}."
                continue
            note = note.removeprefix(f"ends at {_size(r['ends_at_bytes'])}: ")  # said just before
            text += (f" {r['level']} ends at {_size(r['ends_at_bytes'])}, not at the kernel's {_size(r['kernel_bytes'])}: "
                     f"{note}." if not missing(r["ends_at_bytes"]) else
                     f" {r['level']} (the kernel's {_size(r['kernel_bytes'])}): {note}.")
        tlb = g[g["level"].astype(str).str.startswith("TLB")]
        if len(tlb) and not missing(tlb["latency_ns"].iloc[0]):
            text += (f" Page walks (4 KiB against 2 MiB pages) add {fmt_number(tlb['latency_ns'].iloc[0])} ns per "
                     "access in the working-set sweep's batch medians (not the idle means).")
        elif len(tlb) and str(tlb["note"].iloc[0]).startswith("not shown"):
            text += f" Page walks (4 KiB against 2 MiB pages): {tlb['note'].iloc[0]}."
        left = left_out_sentence(working_set, host, g)
        text += f" {left}" if left else ""
        text += f" {plateau}" if (plateau := plateau_caveat(g, mlp, figures, str(host))) else ""
        judged = validity is None or bool(((validity["host"].astype(str) == str(host))
                                           & (validity["check"] == "memory_buffer_llc")).any())
        covered = coverage_sentence(working_set, host, last_climb(working_set, levels, host), judged)
        clock = [str(c) for c in g.get("clock_note", pd.Series([], dtype=str)).dropna() if str(c).startswith("not")]
        out.append(text + (f" {covered}" if covered else "") + (f" Clocks {clock[0]}." if clock else ""))
    if mlp is not None and len(mlp):
        said: set[str] = set()  # the law once per device, not once per thread count
        for (host, threads), g in mlp.groupby(["host", "threads"], sort=True):
            out.append(mlp_sentence(str(host), int(threads), g, said, bool(dram_words(validity, str(host)))))
    return out


#: A level's sizes in its note ('on it 8,192 KiB-64.0 MiB (7 sizes)').
_ON_IT = re.compile(r"on it ([^ ]+ [KMG]i?B)-([^ ]+ [KMG]i?B)")
#: A left-out row's sizes ('1 size left out (4.0 MiB)').
_LEFT = re.compile(r"^(\d+ sizes? left out \([^)]*\))")


def hierarchy_finding(levels: pd.DataFrame, host: str) -> str:
    """Page 2's memory-hierarchy finding from a host's cache_levels rows (memstor.analysis.hierarchy.level_table):
    'Memory hierarchy: 2 cache levels, 1.76 ns (L1) and 5.55 ns (L2); then 136 ns from 8,192 KiB to the sweep's end
    (64.0 MiB), 77.3× L1, a plateau no cache the kernel reports ends at (its L3, 260 MiB, not reached); 1 size left out
    (4.0 MiB) by hierarchy_cpu_share, where a level would not be seen' (nineteenth read S19-loop 6: '2 cache levels
    from 1.76 ns (L1) to 136 ns (plateau 3 (no kernel cache))' named the last plateau as if it were a cache, and a
    level the failed check hid went unsaid). A sweep that ends on a kernel-named cache counts it as one. '' with
    fewer than two levels found. ns."""
    lv = levels[levels["host"].astype(str) == str(host)] if levels is not None and len(levels) else None
    if lv is None or lv.empty:
        return ""
    rise, out = lv[lv["level"] == RISE_LEVEL], lv[lv["level"] == LEFT_OUT_LEVEL]
    unreached = lv[lv["latency_ns"].isna() & lv["level"].astype(str).str.match(r"L\d") & lv["kernel_bytes"].notna()]
    found = lv[~lv["level"].astype(str).str.startswith("TLB") & (lv["level"] != RISE_LEVEL) & lv["latency_ns"].notna()]
    if len(found) < 2:
        return ""
    first, last = found.iloc[0], found.iloc[-1]
    cached = found if str(last["level"]).startswith("L") else found.iloc[:-1]
    each = [f"{fmt_number(r['latency_ns'])} ns ({r['level']})" for _, r in cached.iterrows()]
    text = (f"Memory hierarchy: {len(cached)} cache level{'s' if len(cached) != 1 else ''}, "
            + (", ".join(each[:-1]) + " and " + each[-1] if len(each) > 1 else each[0]))
    if len(cached) < len(found):
        on = _ON_IT.search(str(last.get("note") or ""))
        where = f" from {on.group(1)} to the sweep's end ({on.group(2)})" if on else ""
        beyond = "" if unreached.empty else (f" (its {unreached['level'].iloc[0]}, "
                                             f"{size_text(int(unreached['kernel_bytes'].iloc[0]))}, not reached)")
        text += (f"; then {fmt_number(last['latency_ns'])} ns{where}, "
                 f"{fmt_number(last['latency_ns'] / first['latency_ns'])}× {first['level']}, a plateau no cache the "
                 f"kernel reports ends at{beyond}")
    else:
        text += f": the sweep ended on {last['level']}, beyond it not reached"
    if not rise.empty:
        text += f", then {fmt_number(rise['latency_ns'].iloc[0])} ns at the sweep's largest size with no level found there"
    if not out.empty and (m := _LEFT.search(str(out["note"].iloc[0]))):
        text += (f"; of the chain the levels come from, {m.group(1)} by hierarchy_cpu_share, where a level would not be "
                 "seen")  # S20-loop 6: the other chains' runs left out are §4.5's
    return text
