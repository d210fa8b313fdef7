"""Report text, the first page: what this run can and cannot tell — the machine as it is, the profile and its
limits, the headline table (memstor.report.text.headline_table), the findings (each pointing to its section)
and what to run next; and the conclusion.

Pure: the synthesis tables in (memstor.analysis.synthesis.Synthesis: headline, validity, qd, steady,
dataset), markdown / DataFrames out. Every sentence is built from a table row; nothing is said that a check
has failed for (memstor.analysis.validity).
"""

from __future__ import annotations

import math
import re

import pandas as pd

from memstor.analysis.load_latency import answered_from_held
from memstor.analysis.spread import ASSUMED_RATIO
from memstor.analysis.validity.gate import OPEN_EXPERIMENT, OPEN_LOOP_CHECKS
from memstor.analysis.validity.intervals import exists_counts
from memstor.core.errors import UsageError
from memstor.core.fmt import and_join, fmt_number, md_escape
from memstor.core.profiles import read_profile
from memstor.core.schema import missing, truthy
from memstor.report.text.headline import dram_words
from memstor.report.text.headline_table import SECTION_REF, cpu_bound_point, host_checks
from memstor.report.text.headline_trust import (
    elsewhere_caveat,
    job_split,
    lasting_words,
    mlp_above,
)
from memstor.report.text.hierarchy import hierarchy_finding
from memstor.report.text.loadgen import NOT_OPEN_WAY_OUT, generators, held_points
from memstor.report.text.queueing import fewer_in_flight, fit_sentence, knee_rows, knee_words
from memstor.report.text.sweep_finding import sweep_best, tradeoff
from memstor.report.text.sweep_finding import tradeoff as _tradeoff  # noqa: F401 (the tests read fp._tradeoff)
from memstor.report.text.workloads import sweep_contradicted, write_elsewhere

#: Profile -> what its runs cannot show (the profile files' own repetitions and run lengths).
PROFILE_LIMITS = {
    "quick": "one short run per point (n = 1, a few seconds): {intervals}; a first look, not a result to quote",
    "standard": "one run per point (n = 1): intervals come from each run's own log windows (batch means), not "
                "from repetitions, so run-to-run drift (another job on the disk, the drive's background work) "
                "is not in them",
    "full": "60 s per point and 3 repetitions: intervals between runs",
}
#: What a loop-device target measures (said on page 1 beside the machine).
LOOP_CAVEAT = ("the target is a loop device: its I/O goes to a file on another filesystem, through that file's page "
               "cache unless the loop device was set up with direct I/O, so the storage numbers describe the loop "
               "driver and memory, not a drive")


def machine_sentences(dataset) -> list[str]:
    """One line per device: CPU, memory, and what the machine is (VM, WSL, the target's storage path, power)
    from sysinfo.json's ``machine`` block; older data: the drive's label only."""
    out = []
    for h in dataset.hosts:
        info = h.sysinfo or {}
        cpu, mem = info.get("cpu") or {}, info.get("memory") or {}
        parts = [f"{cpu.get('model') or 'CPU model not recorded'}, {cpu.get('logical_cpus') or '?'} logical CPUs"
                 + _usable(info)]
        if mem.get("total_bytes"):
            parts.append(f"{mem['total_bytes'] / 2**30:.1f} GiB memory")
        drive = info.get("drive") or {}
        if drive.get("disk_label"):
            parts.append(f"storage target on {drive['disk_label']}")
        caveats = ((info.get("machine") or {}).get("caveats")) or []
        if not info.get("machine"):
            caveats = ["whether this is a VM, WSL or on battery was not recorded (data from before memstor "
                       "recorded it: rerun `memstor sysinfo`)"]
        if "loop" in str(drive.get("disk_label") or "").lower():
            caveats = [*caveats, LOOP_CAVEAT]
        out.append(f"**{md_escape(h.name)}**: " + "; ".join(parts) + "."
                   + (" " + " ".join(f"Note: {c}." for c in caveats) if caveats else ""))
    return out


def _usable(info: dict) -> str:
    """', of which memstor could use N (source)' when the run could use fewer CPUs than the machine has
    (sysinfo ``shape``: affinity mask, cgroup quota); '' otherwise or when not recorded."""
    shape = info.get("shape") or {}
    usable, logical = shape.get("usable_cpus"), (info.get("cpu") or {}).get("logical_cpus")
    if not usable or not logical or float(usable) >= float(logical):
        return ""
    why = str(shape.get("cpu_source") or "").split(";")[0]
    return f", of which this run could use {float(usable):g}" + (f" ({why})" if why else "")


def interval_clause(validity: pd.DataFrame | None, wsat: pd.DataFrame | None = None,
                    hir: pd.DataFrame | None = None) -> str:
    """How many storage points have no 95 % interval and why, from validity's interval_exists rows
    (memstor.analysis.validity.intervals.exists_counts): 'no storage value (of N, ...) has ...' / 'k of N storage
    values (...) have no ...' with the reasons that occur; 'not checked' without judged rows; no validity table given:
    a pointer to the interval columns (no count). The write-saturation level's own interval is mentioned only where
    ``wsat`` (the gated table; None: not known) gives one (eleventh read S14-loop 5); a HIR result's where ``hir``
    (memstor.analysis.pts_recovery.hir_table) gives one (nineteenth read S19-loop 10: page 6 printed HIR intervals
    beside 'no storage value has a 95 % interval')."""
    if validity is None:
        return "the n and interval columns say which values have a 95 % interval"
    counts = exists_counts(validity)
    if counts is None:
        return "whether the storage points have a 95 % interval was not checked (no interval_exists row)"
    k, n, why = counts
    if not k:
        return f"each of the {n} storage values (a point's directions counted apart) has a 95 % interval"
    # S12-bare9 6: counted per direction (129 values of 110 points), as interval_exists judges them
    head = (f"no storage value (of {n}, a point's directions counted apart) has a" if k == n else
            f"{k} of {n} storage values (a point's directions counted apart) have no")
    # S12-1cpu 7: beside 'no storage point has a 95 % interval' the WSAT table printed one, over one run's seconds
    # S22-bare 3: a burst's interval too ('162 [160, 164]' beside 'no storage value has a 95 % interval')
    shown = wsat is None or any(c in wsat.columns and wsat[c].notna().any()
                                for c in ("sustained_MBps_ci_low", "burst_MBps_ci_low"))
    level = (" (a write-saturation level's interval is over its one run's one-second values, not between runs)"
             if shown and (wsat is not None or any("write-saturation" in w for w in why)) else "")
    segs = (" (a HIR result's interval is over its wait state's segments in one run, not between runs)"
            if hir is not None and "iops_ci_low" in hir.columns and hir["iops_ci_low"].notna().any() else "")
    return f"{head} 95 % interval" + (f" ({'; '.join(why)})" if why else "") + (
        ", so differences between single values may be noise") + level + segs


def profile_sentence(profile: str, validity: pd.DataFrame | None = None, wsat: pd.DataFrame | None = None,
                     hir: pd.DataFrame | None = None) -> str:
    """What the profile cannot show (markdown), the quick profile's intervals counted from ``validity``
    (:func:`interval_clause`, ``wsat``: the gated write-saturation table, ``hir``: the HIR table); unknown profiles
    say so."""
    limit = PROFILE_LIMITS.get(profile or "")
    limit = limit.replace("{intervals}", interval_clause(validity, wsat, hir)) if limit else limit
    if not profile:
        return "Profile: not recorded (pass `-p profile NAME`); the n and interval columns say what each value rests on."
    return f"Profile **{md_escape(profile)}**: " + (limit or "a profile of your own; n and the intervals say what "
                                                    "each value rests on") + "."


#: A no-interval reason longer than this (characters) goes below the headline table even when one value has it.
LONG_REASON = 100
#: A value cell's reason for having no interval ('99.3 — no interval (n = 1 and ...)').
_NO_INTERVAL = re.compile(r"^(.*) — no interval \((.*)\)$")


def factor_reasons(table: pd.DataFrame, column: str = "value") -> tuple[pd.DataFrame, str]:
    """The headline table with a no-interval reason that several values share, or one longer than LONG_REASON
    characters, said once below it: each such cell reads '99.3 — no interval (a)' and the returned line '(a) n = 1
    and too few log windows: ...' says it (markdown; "" when none). A short reason of one value stays in its cell;
    a long one took seven lines of the value column (session 16: the quick PDF's eleventh page)."""
    if table is None or table.empty or column not in table.columns:
        return table, ""
    found = [(_NO_INTERVAL.match(str(v)) if isinstance(v, str) else None) for v in table[column]]
    reasons = [m.group(2) for m in found if m]
    shared = [r for r in dict.fromkeys(reasons) if reasons.count(r) > 1 or len(r) > LONG_REASON]
    if not shared:
        return table, ""
    mark = {r: f"({chr(ord('a') + i)})" for i, r in enumerate(shared)}
    out = table.copy()
    out[column] = [f"{m.group(1)} — no interval {mark[m.group(2)]}" if m and m.group(2) in mark else v
                   for v, m in zip(table[column], found)]
    return out, " ".join(f"Note {mark[r]}: {r}." for r in shared)


def _cpu_bound(validity: pd.DataFrame | None, host: str, rw: str, best: pd.Series) -> str:
    """' (load_generator_cpu failed at that point, fio at 90.7 % of one CPU (busiest thread): its IOPS are fio's on
    this machine as much as the device's)' where the queue-depth sweep's load_generator_cpu failed at its
    most (S11-loop 1: page 2 stated 133,731 IOPS at QD64x1, the point the check failed), else ''."""
    rows = host_checks(validity, host, statuses=("fail",))
    rows = rows[(rows["check"] == "load_generator_cpu") & (rows["subject"] == "fio-queue-depth")]
    if rows.empty or missing(best.get("iodepth")) or missing(best.get("numjobs")):
        return ""
    own = (rw, f"QD{int(best['iodepth'])}x{int(best['numjobs'])}")
    for _, r in rows.iterrows():
        if cpu_bound_point(r) == own:
            return (f" (load_generator_cpu failed at that point, fio at {float(r['value']):.1f} {r['unit']}: its "
                    "IOPS are fio's on this machine as much as the device's)")
    return ""


def _shared_tail(items: list[str]) -> tuple[list[str], str]:
    """(items, tail): a closing '(...)' that every item ends with said once after them ('' when they do not share
    one, or there is one item)."""
    if len(items) < 2:
        return items, ""
    m = re.search(r" (\([^()]*\))$", items[0])
    if not m or not all(i.endswith(m.group(1)) for i in items):
        return items, ""
    return [i[: -len(m.group(0))] for i in items], m.group(1)


def _check_sentences(validity: pd.DataFrame | None, host: str, checks: tuple, statuses=("fail",),
                     sections: tuple = ()) -> list[str]:
    rows = host_checks(validity, host, sections, statuses=statuses)
    rows = rows[rows["check"].isin(checks)]
    return [f"{r['subject']}: {r['evidence']}" for _, r in rows.iterrows()]


def _answered_from_held(slo: pd.DataFrame | None, host: str) -> list[str]:
    """The workloads of `host` whose SLO answer the gate let stand, taken from their held rates
    (memstor.analysis.load_latency.answered_from_held)."""
    if slo is None or len(slo) == 0 or "valid" not in slo.columns:
        return []
    s = slo[(slo["host"].astype(str) == host) & slo["valid"].map(truthy)]
    return [str(rw) for rw, g in s.groupby("rw", sort=True) if answered_from_held(g)]


def _random_read_above(points: pd.DataFrame | None, host: str, read_MBps: float, write_MBps: float) -> str:
    """'; yet the same-size random read measured 1,377 MB/s in fio-block-size: the sequential read (0.60x it) is
    doubtful, and with it the comparison' where the block-size sweep's random read of the sequential job's size (1 MiB,
    QD32x1) beat the sequential read by more than the 10 % assumed for single fresh runs (ninth read S12-1cpu9 5);
    where the same-size random write beat the sequential write as well and still wrote faster than the random read
    read, both points are low and the random pair shows the same order (eleventh read S14-1cpu 4: 1,910 against
    1,377 MB/s); where the sequential write beats that random read too, the order is not in doubt (twelfth read
    S15-bare 3: 1,135 MB/s against 719); else ''. MB/s."""
    r, _ = job_split(points, host, "randread")
    if r.empty:
        return ""
    top = float(pd.to_numeric(r["bw_MBps"], errors="coerce").max())
    if not top > read_MBps * ASSUMED_RATIO:
        return ""
    w, _ = job_split(points, host, "randwrite")
    w_top = float(pd.to_numeric(w["bw_MBps"], errors="coerce").max()) if len(w) else math.nan
    if w_top > write_MBps * ASSUMED_RATIO and w_top > top * ASSUMED_RATIO:
        return (f"; the same-size random runs in fio-block-size measured more, {fmt_number(top)} MB/s read and "
                f"{fmt_number(w_top)} MB/s write: both sequential points are low ({read_MBps / top:.2f}× and "
                f"{write_MBps / w_top:.2f}×), and the random pair writes faster too")
    # S15-bare 3: where the write beats that better read too, the order holds; only the gap is in doubt
    order = (f", the order not (the write is {write_MBps / top:.2f}× that read too)" if write_MBps > top * ASSUMED_RATIO
             else ", and with it the comparison")  # S13-1cpu 3: not 'the' one
    return (f"; yet the same-size random read measured {fmt_number(top)} MB/s in fio-block-size: the sequential read "
            f"({read_MBps / top:.2f}× it) is doubtful{order}")


def _not_lasting(pts: pd.DataFrame | None, host: str, write_MBps: float) -> str:
    """', the write not shown to last' where a longer run of the sequential write job measured less (the headline's
    caveat, here too: S13-loop 5), with '(the read ran only in the block-size sweep's short run)' where no other
    experiment ran the read (fourteenth read S17-loop 3: read as 'the read was shown to last'); '' otherwise."""
    if not lasting_words(pts, host, write_MBps):
        return ""
    alone = not len(job_split(pts, host, "read")[1])
    return ", the write not shown to last" + (" (the read ran only in the block-size sweep's short run)" if alone else "")


def findings(S, host: str) -> list[str]:
    """Three to six findings of one device in plain sentences, each pointing to its section (markdown); only
    what the checks let stand."""
    pts = getattr(S, "points", None)
    out = [f"{t}{_cpu_bound(S.validity, host, rw, best)}{sweep_contradicted(pts, host, rw)}"
           f"{fewer_in_flight(pts, host, rw, best)} ({SECTION_REF['queue_depth']})." for rw in ("randread", "randwrite")
           if (t := tradeoff(S.qd, host, rw, pts)) and (best := sweep_best(S.qd, host, rw)) is not None]
    h = S.headline[S.headline["host"].astype(str) == host].set_index("key")
    seq = {k: h.loc[k, "value"] for k in ("seq_read_MBps", "seq_write_MBps") if k in h.index and not missing(h.loc[k, "value"])}
    if len(seq) == 2:
        s = f"Sequential transfers: {fmt_number(seq['seq_read_MBps'])} MB/s read, {fmt_number(seq['seq_write_MBps'])} MB/s write"
        s += _not_lasting(pts, host, float(seq["seq_write_MBps"]))
        more = [w for k, w in (("seq_read_MBps", "read"), ("seq_write_MBps", "write"))  # S20-loop 3: unsaid here
                if not elsewhere_caveat("sound", pts, host, k, float(seq[k])).startswith("sound")]
        s += f"; single runs: other runs measured more for the {' and the '.join(more)}" if more else ""
        if seq["seq_write_MBps"] > 1.2 * seq["seq_read_MBps"]:
            later = write_elsewhere(getattr(S, "points", None), host, float(seq["seq_read_MBps"]))
            s += (f" — {'the block-size sweep wrote' if later else 'writes'} faster than {'it read' if later else 'reads in these runs'}, which a drive rarely does; a write-back cache above "
                  "the drive (the hypervisor's, on a VM) would give this" + _cache_seen(getattr(S, "drive", None), host)
                  + later + _random_read_above(pts, host, float(seq["seq_read_MBps"]), float(seq["seq_write_MBps"])))
        out.append(s + f" (the headline table; {SECTION_REF['storage_points']}'s block-size figure).")
    gated = _check_sentences(S.validity, host, OPEN_LOOP_CHECKS, sections=("open_loop",))
    if gated:
        said = _not_open_workloads(S, host)
        why = "; ".join(said) if said else \
            "; ".join(gated[:2]).replace("X_max", "X_ref") + (f"; {len(gated) - 2} more" if len(gated) > 2 else "")
        verb = "was not shown to hold" if said and all(": not checked" in w for w in said) else "did not hold"
        held = _answered_from_held(getattr(S, "slo", None), host)
        gives = (f"gives an SLO answer only from the rates that held ({', '.join(held)}) and no queueing model"
                 if held else "gives no SLO answer and no queueing model")
        out.append(f"The open loop {verb} ({why}): the latency-under-load section {gives} "
                   f"({SECTION_REF['open_loop']}).")
    bad_fit = _check_sentences(S.validity, host, ("knee_ceiling", "knee_min_latency"))
    if bad_fit:
        ceiling = host_checks(S.validity, host, statuses=("fail",)).query("check == 'knee_ceiling'")
        high = dict(zip(ceiling["subject"].astype(str), pd.to_numeric(ceiling["high"], errors="coerce")))
        rising = set(host_checks(S.validity, host, statuses=("fail",)).query("check == 'knee_plateau'")["subject"]
                     .astype(str))
        out.append(fit_sentence(bad_fit, knee_rows(getattr(S, "knees", None), host, {b.split(":")[0] for b in bad_fit}),
                                getattr(S, "points", None), host, high, rising))
    machine_gate = host_checks(S.validity, host, ("memory",))
    machine_gate = machine_gate[machine_gate["subject"].str.endswith("(machine)")]
    for _, r in machine_gate.head(1).iterrows():
        out.append(f"Memory: {r['evidence']} ({SECTION_REF['memory']}).")
    disagree = _check_sentences(S.validity, host, ("config_agreement",), ("warn", "fail"))
    if disagree:
        said, tail = _shared_tail(disagree[:2])
        # S15-1cpu 5: page 1 defines a configuration with its experiment; these pairs are two experiments' runs
        out.append("The same I/O parameters measured in two experiments gave different numbers: " + "; ".join(said)
                   + (f" {tail}" if tail else "") + f" ({SECTION_REF['storage_points']}).")
    w = S.wsat[S.wsat["host"].astype(str) == host] if S.wsat is not None else None
    for _, r in (w.head(2).iterrows() if w is not None else ()):
        if missing(r["sustained_MBps"]):
            continue
        span = "" if r["span"] == "full_device" else " (on a test file: the file, not the drive, is the span)"
        out.append(_wsat_bullet(r) + f"{span} ({SECTION_REF['write_saturation']}).")
    if levels := hierarchy_finding(S.cache_levels, host):
        out.append(f"{levels} ({SECTION_REF['hierarchy']}).")
    return out[:6]


def _wsat_bullet(r) -> str:
    """Page 1's write-saturation finding of a run with a level (a gated wsat_table row): the burst, the cliff and
    the sustained level; without a cliff, one level only where the series could tell (no wsat_series
    ``caveat``), else the mean of the few seconds it had, said as such (MB/s, GB)."""
    if int(r["cliffs"]):
        return (f"Sustained writes, {r['workload']}: {fmt_number(r['burst_MBps'])} MB/s at first, a cliff at "
                f"{fmt_number(r['first_cliff_GB'])} GB, then {fmt_number(r['sustained_MBps'])} MB/s"
                + ("" if missing(r.get("level_seconds")) else f" over its last {int(r['level_seconds'])} whole seconds"))
    head, gb = f"Write saturation, {r['workload']}: ", fmt_number(r["tgbw_GB"])
    if str(r.get("caveat") or ""):
        secs = "" if missing(r.get("whole_seconds")) else f" in {fmt_number(r.get('runtime_s'))} s " \
            f"({int(r['whole_seconds'])} whole seconds)"
        return (head + f"{gb} GB written{secs}, too short to tell a cliff from noise: "
                f"{fmt_number(r['sustained_MBps'])} MB/s on average, no cliff or level shown")
    return (head + f"no cliff in {gb} GB written, one level of {fmt_number(r['sustained_MBps'])} MB/s (a write "
            f"cache larger than {gb} GB would hide its cliff)")


def _cache_seen(drive: pd.DataFrame | None, host: str) -> str:
    """How the write-back cause stands against the drive table (memstor.analysis.drive): where the kernel reports a
    write-back cache on the disk (identity write_cache 'write back'; S6-bare C-1: vda's sysfs queue/write_cache),
    '; the kernel reports one on vda (write_cache: write back), but whether it took these writes nothing here
    measured', else ', but nothing here measured it'."""
    d = drive if drive is not None and len(drive) and {"host", "field", "value"} <= set(drive.columns) else None
    hit = None if d is None else d[(d["host"].astype(str) == host) & (d["field"] == "write_cache")
                                   & d["value"].astype(str).str.lower().str.contains("write back")]
    if hit is None or hit.empty:
        return ", but nothing here measured it"
    return (f"; the kernel reports one on {hit['disk'].iloc[0] if 'disk' in hit.columns else 'the disk'} "
            "(write_cache: write back), but whether it took these writes nothing here measured")


def _not_open_rows(S, host: str) -> pd.DataFrame:
    """The open-loop curve rows (Synthesis.load) of this device's workloads whose loop did not hold (``valid``
    False, memstor.analysis.validity.gate); empty without the table or the column."""
    load = getattr(S, "load", None)
    if load is None or len(load) == 0 or "valid" not in load.columns:
        return pd.DataFrame()
    return load[(load["host"].astype(str) == str(host)) & load["valid"].eq(False)]


def _measured_nothing(rows: pd.DataFrame) -> str:
    """'; u98 completed nothing in its window (overloaded: its cap of outstanding I/Os reached)' for open-loop rows
    whose achieved rate is 0 (no completion counted, not a rate of 0 %); '' without them."""
    if rows.empty:
        return ""
    names = ", ".join(f"u{float(u):g}" for u in rows.get("utilisation_pct", pd.Series(dtype=float)))
    over = "overloaded" in rows.columns and rows["overloaded"].fillna(False).astype(bool).all()
    return f"; {names or 'a rate'} completed nothing in its window" + (
        " (overloaded: its cap of outstanding I/Os reached)" if over else "")


def _not_open_workloads(S, host: str) -> list[str]:
    """'randread (ioarrive): held at 0 of 8 rates, every rate 99.0-100.5 % of offered achieved' per workload
    whose open loop did not hold, from the rows; [] without them."""
    rows = _not_open_rows(S, host)
    out = []
    for rw, g in (rows.groupby("rw", sort=True) if len(rows) else ()):
        gens = " and ".join(dict.fromkeys(generators(g)))
        held = held_points(g.assign(valid=True))
        pct = pd.to_numeric(g["achieved_pct"], errors="coerce") if "achieved_pct" in g.columns \
            else pd.Series(dtype=float)
        none = g[pct <= 0] if len(pct) else g.iloc[0:0]  # S12-loop 4: a rate that completed nothing is no 0 %
        pct = pct[pct > 0]
        span = f"{pct.min():.1f}" + (f"–{pct.max():.1f}" if f"{pct.min():.1f}" != f"{pct.max():.1f}" else "")
        every = f"{len(pct)} of {len(g)} rates" if len(none) else "every rate"  # S13-loop 10: u98 achieved none
        got = (f", {every} {span} % of offered achieved" if len(pct) else "") + _measured_nothing(none)
        names = _open_loop_failed(S.validity, host, str(rw))
        if names:
            out.append(f"{rw} ({gens}): held at {int(held.sum())} of {len(g)} rates{got} (failed: {', '.join(names)})")
        else:  # gated because open_loop_held is unchecked: not shown to hold, not failed
            out.append(f"{rw} ({gens}): not checked (no arrival times recorded){got}")
    return out


def _open_loop_failed(validity, host: str, rw: str) -> list[str]:
    """The open-loop checks (OPEN_LOOP_CHECKS) that failed for this workload: subject ``rw``, or
    '<experiment> rw' for littles_law; [] where none failed (the loop is then only not checked)."""
    rows = host_checks(validity, host, ("open_loop",), statuses=("fail",))
    rows = rows[rows["check"].isin(OPEN_LOOP_CHECKS)]
    hit = rows["subject"].astype(str).isin([rw, f"{OPEN_EXPERIMENT} {rw}"])
    return list(dict.fromkeys(rows.loc[hit, "check"]))


def standard_skips(dataset, host: str) -> list[str]:
    """Short names (HIR, XSR, ...) of the experiments this host ran that the shipped standard profile skips
    (a section with ``skip``); [] where the profile cannot be read."""
    try:
        sections = read_profile("standard")
    except UsageError:
        return []
    ran = next((set(getattr(h, "kinds", ())) for h in getattr(dataset, "hosts", ()) if h.name == host), set())
    return [name.removeprefix("fio-pts-").upper() for name, sec in sections.items()
            if isinstance(sec, dict) and "skip" in sec and name in ran]


def next_steps(S, host: str, profile: str) -> list[str]:
    """What to run next for a better answer, from the profile, the machine and the failed checks."""
    out = []
    h = next((h for h in S.dataset.hosts if h.name == host), None)
    kinds = getattr(h, "kinds", None)  # S19-loop 7: no storage advice for a device without storage data
    storage = kinds is None or "fio" in kinds.values() or not kinds
    if profile == "quick":
        skips = standard_skips(S.dataset, host)  # S18-bare 2: 'every stationary point' where standard skips DIRTH
        out.append("Rerun with the standard profile (`make all`) for intervals on every stationary "
                   + ("storage point " if storage else "point.")
                   + (f"of the experiments it runs (it skips {and_join(skips)}, which take hours under it: "
                      "`make all PROFILE=full` runs them) " if skips and storage else "")
                   + ("(a PTS-recovery or write-saturation trajectory has none under any profile)." if storage else ""))
    if not host_checks(S.validity, host, statuses=("warn",)).query("check == 'interval_exists'").empty:
        out.append("Repeat the points (`repetitions: 3`, or `make all PROFILE=full`) for intervals between runs.")
    info = next((h.sysinfo or {} for h in S.dataset.hosts if h.name == host), {})
    machine = info.get("machine") or {}
    label = str((info.get("drive") or {}).get("disk_label") or "")
    if storage and "loop" in label.lower():  # R-loop 2.2: page 1's loop caveat, not the hypervisor's disk
        out.append("The storage numbers describe the loop driver and the file behind it: to measure a drive, put "
                   "`TARGET` on a filesystem on that drive.")
    elif storage and ((machine.get("virtualization") or {}).get("hypervisor") or "virtio" in label):
        out.append("The storage numbers describe the hypervisor's virtual disk: to measure a drive, run on the "
                   "machine that holds it and put `TARGET` on it.")
    if (machine.get("storage_path") or {}).get("layer") and machine.get("wsl"):
        out.append("Put `TARGET` on a Linux filesystem (inside WSL's own disk), not a Windows drive under /mnt.")
    if _check_sentences(S.validity, host, ("load_generator_cpu",)):
        cpu = host_checks(S.validity, host, statuses=("fail",))
        cpu = cpu[cpu["check"] == "load_generator_cpu"]
        thread = bool(cpu["unit"].astype(str).str.contains("thread").all()) if "unit" in cpu else False
        ioarrive = bool(len(cpu)) and bool(cpu["subject"].astype(str).str.endswith("(ioarrive)").all())
        out.append("One fio thread saturated its CPU: split the load over more jobs." if thread else
                   "ioarrive took most of the CPUs it may use: more usable CPUs (affinity, cgroup quota)." if ioarrive
                   else "fio was CPU-bound on the CPUs it may use: fewer jobs, or more usable CPUs (affinity, cgroup "
                   "quota).")
    if _check_sentences(S.validity, host, OPEN_LOOP_CHECKS, sections=("open_loop",)):
        gens = list(dict.fromkeys(generators(_not_open_rows(S, host)))) or ["fio"]
        out += [NOT_OPEN_WAY_OUT.get(g, NOT_OPEN_WAY_OUT["fio"]) for g in gens]
    if words := dram_words(S.validity, host):  # memory_buffer_llc failed: R-loop 1.1
        out.append(f"For DRAM figures: a memory buffer of 4x the last-level cache or more (mlc-loaded-latency's "
                   f"`buffer_kib: auto` sizes it so; now a {words}).")
    if not host_checks(S.validity, host, ("memory",)).query("subject.str.endswith('(machine)')", engine="python").empty:
        out.append("For memory numbers that pass the quality gate: a quiet machine, bare metal if possible.")
    return out or ["Nothing to add: every check passed."]


def conclusion(S, host: str) -> str:
    """The latency–throughput trade-off this device shows, in plain language, from the same rows (markdown)."""
    pts = getattr(S, "points", None)  # the other experiments' runs: the spread and the flat step (S15-1cpu 2)
    parts = [t for rw in ("randread", "randwrite") if (t := tradeoff(S.qd, host, rw, pts))]
    h = S.headline[S.headline["host"].astype(str) == host].set_index("key")
    if "idle_latency_ns" in h.index and not missing(h.loc["idle_latency_ns", "value"]) and not any(
            str(h.loc[k].get("gate") or "").startswith("failed") for k in ("idle_latency_ns", "peak_bw_MBps")
            if k in h.index) and not dram_words(S.validity, host):  # no memory sentence from a failed check's run
        peak = float(h.loc["peak_bw_MBps", "value"])
        more = mlp_above(getattr(S, "mlp", None), host, peak)  # S12-loop 5: no 'at most'
        more = f"; {more}" if more else ""
        parts.append(f"memory answers a lone access in {fmt_number(h.loc['idle_latency_ns', 'value'])} ns on "
                     f"average and moved {fmt_number(peak)} MB/s with many in flight (the peak-bandwidth headline"
                     f"{more})")
    if not parts:
        return f"**{md_escape(host)}**: too little was measured for a conclusion."
    return f"**{md_escape(host)}**: " + "; ".join(parts) + ". " + knee_words(S.validity, host, pts)


def validity_display(validity: pd.DataFrame | None) -> pd.DataFrame:
    """The checks that did not pass, for the report (every row, passes included, is in validity.csv)."""
    cols = ["device", "check", "subject", "status", "evidence", "what follows"]
    if validity is None or validity.empty:
        return pd.DataFrame(columns=cols)
    order = {"fail": 0, "warn": 1, "unchecked": 2}
    v = validity[validity["status"].isin(list(order))]
    v = v.assign(_o=v["status"].map(order)).sort_values(["host", "_o", "section"], kind="stable")
    return pd.DataFrame({"device": v["host"], "check": v["check"], "subject": v["subject"], "status": v["status"],
                         "evidence": v["evidence"], "what follows": v["consequence"]})[cols]


def check_counts(validity: pd.DataFrame | None) -> str:
    """'N checks: a pass, b warn, c fail' (markdown)."""
    if validity is None or validity.empty:
        return "No validity check applied (nothing measured that a check covers)."
    c = validity["status"].value_counts()
    return (f"{len(validity)} checks of this run's preconditions: {int(c.get('pass', 0))} pass, "
            f"{int(c.get('warn', 0))} warn, {int(c.get('fail', 0))} fail, {int(c.get('unchecked', 0))} not checked "
            "(`report/tables/validity.csv`).")


#: A failed check's consequence that leaves out only the runs it failed (hierarchy_cpu_share; S11-bare 2: page 1
#: listed it under 'their findings are not stated' while §4.5 stated the levels of the other 84 of 87 runs).
LEFT_OUT = "those runs are left out"
#: Failed checks whose findings stand for the part that passed, said beside their name on page 1 (S20-bare 5:
#: 'their findings are not stated' beside open_loop_held, while the SLO answer from the rates that held was given).
PARTIAL = {"open_loop_held": "the rates that held are still read"}
#: How many subjects a check's name lists on the first page before "and N more".
NAMED_SUBJECTS = 12
#: A point's id after its subject ('4 KiB random write (randwrite-bs4k-qd32x4-x1-max60-io_uring-d1-f64m-rep1)'):
#: page 1 names the subject; the id is in the appendix table and validity.csv.
_POINT_ID = re.compile(r" \([A-Za-z0-9_.]+(?:-[A-Za-z0-9_.]+)+-rep\d+\)$")


def check_names(validity: pd.DataFrame | None) -> list[str]:
    """The first page's list of the checks that failed, and of those that could not be checked, by name with
    their subjects, one line per device and status (markdown); [] when every check passed. The reasons and
    numbers are in the appendix table and validity.csv."""
    if validity is None or validity.empty:
        return []
    out = []
    for host in dict.fromkeys(validity["host"].astype(str)):
        v = validity[validity["host"].astype(str) == host]
        runs = v["consequence"].astype(str).str.contains(LEFT_OUT, regex=False) if "consequence" in v else False
        for status, head, only in (("fail", "Failed checks (their findings are not stated)", ~runs),
                                   ("fail", "Failed checks of single runs (those runs are left out; the findings "
                                            "of the others stand)", runs),
                                   ("unchecked", "Not checked (no value to judge, or a point without one: the "
                                                 "findings they gate carry no check)", True)):  # S12-loop9 8
            sel = v[(v["status"] == status) & only]
            if sel.empty:
                continue
            named = []
            for check, g in sel.groupby("check", sort=True):
                said = [_POINT_ID.sub("", x) for x in g["subject"].astype(str)]  # the point ids: in the table
                subjects = [f"{x} ×{said.count(x)}" if said.count(x) > 1 else x for x in dict.fromkeys(said)]
                keep = NAMED_SUBJECTS if len(subjects) > NAMED_SUBJECTS + 1 else len(subjects)  # 'and 1 more' saves
                more = f" and {len(subjects) - keep} more" if len(subjects) > keep else ""  # nothing (S10-bare 15)
                some = pd.to_numeric(g["value"], errors="coerce").fillna(0) > 0 if "value" in g else g["check"] == ""
                # S21-cpu1 4: nothing is read from the rates that held where none held
                part = f": {PARTIAL[check]}" if status == "fail" and check in PARTIAL and some.any() else ""
                named.append(f"`{check}` ({'; '.join(md_escape(x) for x in subjects[:keep])}{more}{part})")
            out.append(f"**{md_escape(host)}** — {head}: " + ", ".join(named) + ".")
        gated = gate_failures(v)
        if gated:
            out.append(f"**{md_escape(host)}** — Values that failed their quality gate (a warning of `memory_gate`: "
                       f"kept in the tables, not settled): {'; '.join(md_escape(g) for g in gated)}.")
    return out


#: A quality-gate warning's count of values that failed it ('9 of 18 loaded_latency values fail ...').
_GATE_COUNT = re.compile(r"^(\d+ of \d+) ")


def gate_failures(validity: pd.DataFrame) -> list[str]:
    """'loaded_latency: latency_unstable (11 of 18)' per memory_gate warning whose values failed the gate (one
    device's rows): a warning of the check counts values that failed, which page 1 names beside the failed checks."""
    rows = validity[(validity["check"] == "memory_gate") & (validity["status"] == "warn")]
    out = []
    for subject, evidence in zip(rows["subject"].astype(str), rows["evidence"].astype(str)):
        m = _GATE_COUNT.match(evidence)
        if m and " fail " in evidence:
            out.append(f"{subject} ({m.group(1)})")
    return out
