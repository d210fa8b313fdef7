"""``memory_gate``: memstor's quality gate over the MLC/loadlat values of a host (tidy ``ds.mlc`` rows whose
``gate`` is ``passed`` or ``failed:<codes>``), per test (loaded_latency, idle_latency, ...). A reason that at
least MACHINE_SHARE of the values fail for is read as a property of the machine: ONE warn row with the spread
this machine shows against the gate's limit, not a failure per point; its words say 'every point' only where
every value fails, else the share and the passing values' figure (S7-bare M-9). Each other reason: one warn row
with its count. No failure: one pass row per test. memory_buffer_llc judges the buffer against the working-set
curve's last cache step where that curve (read from runs within hierarchy_cpu_share's band) gives one, else
against the kernel's last-level cache, and names its basis (S7-bare M-10).

Both sides: the value is the share of a test's values failing (band [0, 0] %: any failure warns), or for a
machine row the median figure against the gate's limit (band [MIN_SPREAD_PCT, limit]). The low side: values
that pass with a sub-window spread below MIN_SPREAD_PCT (sub-windows equal to 5 digits: a counter that did not
move or one window read twice, not a quiet machine) get a warn row ``<test>: implausibly steady``. A test whose
values were never judged (Intel MLC: no sub-windows; loadlat before v0.3; ``not_evaluated:*`` or no gate) gets
one ``unchecked`` row with the reason; values of a family without the gate (an empty ``gate``: mem-hierarchy)
have no row."""

from __future__ import annotations

import math
import re

import pandas as pd

from memstor.analysis import hierarchy
from memstor.analysis.validity.rows import FAIL, PASS, WARN, band, has, n, num, row, unchecked
from memstor.core.schema import truthy

#: A gate reason shared by at least this share of a test's values describes the machine, not the points.
MACHINE_SHARE = 0.8
#: ... among at least this many values (fewer cannot tell a machine from a few bad points).
MACHINE_MIN_VALUES = 5
#: Sub-window spreads (%) below this are implausibly steady: 10 sub-windows of a real machine differ by
#: 0.05-1 % (this VM: 0.1-7 %); 0.001 % is five equal digits.
MIN_SPREAD_PCT = 1e-3
#: The spread columns judged on the low side.
SPREAD_COLUMNS = ("latency_spread_pct", "bandwidth_spread_pct")

#: Gate reason -> (the tidy column with the figure it judges, the limit as written in gate_detail, the limit
#: when gate_detail does not say it: memstor.measure.loadlat's GATE_* values, which analysis cannot import,
#: what the figure is).
REASONS = {
    "latency_unstable": ("latency_spread_pct", r"latency spread [\d.]+ % >= ([\d.]+) %", 2.0,
                         "sub-window latency spread"),
    "bandwidth_unstable": ("bandwidth_spread_pct", r"bandwidth spread [\d.]+ % >= ([\d.]+) %", 5.0,
                           "sub-window bandwidth spread"),
    "cpu_share": ("cpu_share_min_pct", r"of its CPU \(< ([\d.]+) %\)", 90.0, "lowest CPU share of a measuring thread"),
    "steal": ("steal_pct", r"steal time [\d.]+ % of the window \(> ([\d.]+) %\)", 2.0, "steal time"),
    "bandwidth_rises_with_delay": ("", r"at the smaller delay \S+ \(> ([\d.]+) %\)", 5.0,
                                   "bandwidth rise over the next smaller delay"),
}

_SECTION = "memory"


def failed_codes(gate) -> list[str]:
    """The gate codes of a ``failed:<code>,...`` outcome, in order; [] for any other outcome."""
    text = str(gate)
    return [c for c in text.split(":", 1)[1].split(",") if c] if text.startswith("failed:") else []


def _limit(g: pd.DataFrame, reason: str) -> float | None:
    _, pattern, default, _ = REASONS.get(reason, ("", "", math.nan, ""))
    if pattern and "gate_detail" in g:
        for text in g["gate_detail"].dropna().astype(str):
            m = re.search(pattern, text)
            if m:
                return float(m.group(1))
    return num(default)


def memory_rows(mlc: pd.DataFrame | None) -> list[dict]:
    """memory_gate rows per host x test with gate-evaluated values."""
    if not has(mlc, "host", "test", "gate"):
        return []
    ok = mlc[mlc["ok"].map(truthy)] if "ok" in mlc else mlc
    judged = ok["gate"].astype(str).str.match(r"^(passed|failed:)")
    skipped = ok["gate"].astype(str).str.startswith("not_evaluated")  # empty: a family without the gate
    rows = [_not_judged(host, test, g) for (host, test), g in ok[skipped].groupby(["host", "test"], sort=True)
            if not ((ok["host"] == host) & (ok["test"] == test) & judged).any()]
    for (host, test), g in ok[judged].groupby(["host", "test"], sort=True):
        codes = g["gate"].map(failed_codes)
        total, failed = len(g), int(codes.map(bool).sum())
        steady = _steady_row(host, test, g[~codes.map(bool)])
        if steady:
            rows.append(steady)
        if not failed:
            rows.append(row(host, "memory_gate", test, PASS, 0.0, 0.0, "% of values failing",
                            f"all {total} {test} values pass the quality gate", "", _SECTION, low=0.0, high=0.0))
            continue
        counts = pd.Series([c for cs in codes for c in cs]).value_counts()
        for reason, k in counts.items():
            bad = g[codes.map(lambda cs, r=reason: r in cs)]
            rows.append(_reason_row(host, test, bad, reason, int(k), total, g))
    return rows


def _not_judged(host, test: str, g: pd.DataFrame) -> dict:
    """unchecked: none of the test's values went through the gate (why: their gate outcomes)."""
    why = sorted({str(x) for x in g["gate"] if str(x) not in ("", "nan", "None")}) or ["no gate outcome recorded"]
    return unchecked(host, "memory_gate", test, f"{len(g)} {test} values not judged by the quality gate "
                     f"({', '.join(why)})", _SECTION, "% of values failing", low=0.0, high=0.0)


def _steady_row(host, test: str, passed: pd.DataFrame) -> dict | None:
    """warn when passing values have a sub-window spread below MIN_SPREAD_PCT (the gate's low side)."""
    for col in SPREAD_COLUMNS:
        if col not in passed:
            continue
        spread = pd.to_numeric(passed[col], errors="coerce")
        flat = spread[spread < MIN_SPREAD_PCT]
        if len(flat):
            return row(host, "memory_gate", f"{test}: implausibly steady", WARN, float(flat.min()), MIN_SPREAD_PCT,
                       "%", f"{len(flat)} of {len(passed)} passing {test} values have a {col.split('_')[0]} spread "
                       f"of {n(flat.min())} % across their sub-windows (below {n(MIN_SPREAD_PCT)} %)",
                       "sub-windows this equal were not measured apart (a counter that did not move): these values "
                       "pass the gate without showing their noise", _SECTION, low=MIN_SPREAD_PCT, high=None)
    return None


def _shared_words(g: pd.DataFrame, bad: pd.DataFrame, reason: str, k: int, total: int) -> str:
    """Why k of total failing values are read as the machine's, as the count allows (S7-bare M-9: 'a failure every
    point shares' said of 16 of 18): every value, 'a failure every point shares is a property of this machine, not
    of a point'; fewer, the share against MACHINE_SHARE and the other values' own figure (%), 'not every point
    shares it: 1 is within this bound (...)' (twelfth read S15-loop 5: '1 pass' of a value other checks failed)."""
    if k >= total:
        return "a failure every point shares is a property of this machine, not of a point"
    col, _, _, what = REASONS.get(reason, ("", "", math.nan, reason))
    rest = g.drop(index=bad.index, errors="ignore")
    fig = pd.to_numeric(rest[col], errors="coerce").dropna() if col and col in rest else pd.Series(dtype=float)
    theirs = "" if fig.empty else f" ({what} {n(fig.min())} %)" if len(fig) == 1 else \
        f" ({what} {n(fig.min())}-{n(fig.max())} %)"
    return (f"a failure {100.0 * k / total:.0f} % of the values share (at least {100 * MACHINE_SHARE:.0f} %) is read "
            f"as a property of this machine rather than of single points; not every point shares it: {total - k} "
            f"{'is' if total - k == 1 else 'are'} within this bound{theirs}")  # S15-loop 5: not 'pass' (other checks)


def _reason_row(host, test: str, bad: pd.DataFrame, reason: str, k: int, total: int, g: pd.DataFrame) -> dict:
    col, _, _, what = REASONS.get(reason, ("", "", math.nan, reason))
    limit = _limit(bad, reason)
    median = num(pd.to_numeric(bad[col], errors="coerce").median()) if col and col in bad else None
    figure = f"; their median {what} {n(median)} % against the gate's {n(limit)} %" if median is not None else ""
    if k >= MACHINE_SHARE * total and total >= MACHINE_MIN_VALUES:
        return row(host, "memory_gate", f"{test}: {reason} (machine)", WARN,
                   median if median is not None else 100.0 * k / total,
                   limit if median is not None else None, "%" if median is not None else "% of values",
                   f"{k} of {total} {test} values fail '{reason}'{figure}: " + _shared_words(g, bad, reason, k, total),
                   f"the memory results are shown with this machine's {what} as their noise floor"
                   + (f" (~{n(median)} %)" if median is not None else "")
                   + ": differences smaller than it are not findings; the points stay in the section's tables, "
                     "while a headline value whose own run failed the gate is withheld",  # S12-bare9 5
                   _SECTION, low=MIN_SPREAD_PCT if median is not None else 0.0,
                   high=limit if median is not None else 0.0)
    return row(host, "memory_gate", f"{test}: {reason}", WARN, 100.0 * k / total, 0.0, "% of values failing",
               f"{k} of {total} {test} values fail '{reason}'{figure}",
               (f"these {k} values are" if k > 1 else "this value is") + " marked as failing the gate; read "
               + ("them" if k > 1 else "it") + " with care", _SECTION, low=0.0, high=0.0)


#: The tests whose values the report calls memory's (DRAM's): a chase or a load over the run's buffer (mem-hierarchy's
#: working-set sweep judges its own sizes against the caches: memstor.analysis.hierarchy).
BUFFER_TESTS = ("idle_latency", "loaded_latency", "peak_injection_bandwidth", "max_bandwidth", "latency_matrix",
                "bandwidth_matrix")
#: buffer / last-level cache below this warns: a random chase over a buffer B finds ~C/B of its lines in a cache
#: of C (at 4x, a quarter), so the latency is part cache; at or below 1x the cache may hold all of it: fail.
LLC_MULTIPLE = 4.0
#: buffer / usable memory above this warns, above 1 fails: a buffer the memory cannot hold pages (swap, not DRAM).
MEMORY_SHARE = 0.5


def _mib(b: float) -> str:
    return f"{n(b / 2**20)} MiB"


def buffer_llc_rows(mlc: pd.DataFrame | None, sysinfo: dict | None) -> list[dict]:
    """memory_buffer_llc per host: the smallest buffer (bytes, ``buffer_kib``) of its :data:`BUFFER_TESTS` values
    against the last cache (:func:`llc_basis`: the working-set curve's last step where its hierarchy_cpu_share check
    passed, else the kernel's last-level cache, sysinfo ``caches.L3_bytes``, else L2) and the usable memory. Value:
    buffer / cache (x); fail <= 1 (the cache may hold the buffer), warn < :data:`LLC_MULTIPLE`; high side: buffer /
    usable memory > :data:`MEMORY_SHARE` warn, > 1 fail. No cache size or no buffer recorded: unchecked."""
    if not has(mlc, "host", "test"):
        return []
    rows = []
    for host, g in mlc[mlc["test"].isin(BUFFER_TESTS)].groupby("host", sort=True):
        info = (sysinfo or {}).get(str(host)) or {}
        llc, basis, label = llc_basis(mlc[mlc["host"] == host], info.get("caches") or {})
        kib = pd.to_numeric(g["buffer_kib"], errors="coerce").dropna() if "buffer_kib" in g else pd.Series([])
        if not llc or kib.empty:
            why = "no last-level cache size known (sysinfo caches)" if not llc else "no buffer size recorded"
            rows.append(unchecked(host, "memory_buffer_llc", "buffer against last-level cache", why, _SECTION, "x",
                                  low=LLC_MULTIPLE, consequence="the memory values are not shown to be DRAM's: "
                                  "the buffer was not compared with the caches"))
            continue
        rows.append(_buffer_row(host, float(kib.min()) * 1024, (llc, basis, label), _usable_memory(info)))
    return rows


def llc_basis(mlc: pd.DataFrame, caches: dict) -> tuple[float | None, str, str]:
    """(bytes, basis, label) of one host's last cache for memory_buffer_llc (S7-bare M-10: the kernel's 480 MiB L3
    against the working-set curve's step at 15.2 MiB): the curve's last step (memstor.analysis.hierarchy.last_step,
    read only from runs within hierarchy_cpu_share's band) where it gives one, basis 'the working-set curve's last
    cache step ... the kernel reports ...'; else the kernel's L3 (else L2), basis saying why the curve gave none
    (no curve; no step from the runs within the band, with the sizes left out); label: the cache's name in the
    words ('last-level cache', 'last cache step of the working-set curve')."""
    kernel = num(caches.get("L3_bytes")) or num(caches.get("L2_bytes"))
    ws = mlc[mlc["test"] == "working_set"]
    whole = len(ws) and set(hierarchy.WORKING_SET_COLUMNS) - {"host", "n", "cpu_share"} <= set(ws.columns)
    levels = hierarchy.cache_levels(ws, caches) if whole else None
    step = hierarchy.last_step(levels, str(mlc["host"].iloc[0])) if whole else None
    theirs = f"the kernel's {_mib(kernel)} last-level cache (sysinfo caches)" if kernel else "no kernel cache size"
    if step:
        kernel_said = f"; the kernel reports a {_mib(kernel)} last-level cache, which the curve does not show" \
            if kernel else ""
        return step[0], (f"the working-set curve's last cache step at {_mib(step[0])} (beyond it the curve's last "
                         f"level, {n(step[1])} ns; from runs within hierarchy_cpu_share's band{kernel_said})"), \
            "last cache step of the working-set curve"
    left = [] if levels is None else levels.loc[levels["level"] == hierarchy.LEFT_OUT_LEVEL, "note"].tolist()
    why = "no working-set curve" if not whole else "the working-set curve gives no last step" + (
        f" from the runs within hierarchy_cpu_share's band ({str(left[0]).split(', their')[0]})" if left else "")
    rise = None if levels is None else levels[levels["level"] == hierarchy.RISE_LEVEL]
    if rise is not None and len(rise) and kernel:  # R-loop p9: 167 ns by 64 MiB beside a 480 MiB LLC
        ns, size = n(rise["latency_ns"].iloc[0]), _mib(float(rise["ends_at_bytes"].iloc[0]))
        return kernel, (f"{theirs}; {why}: it rises past its last level to {ns} ns at {size}, with no level found "
                        "before the sweep ended, a DRAM-like latency: which holds, that or the kernel's cache, is "
                        "not shown"), "last-level cache the kernel reports"
    return kernel, f"{theirs}; {why}", "last-level cache"


def _usable_memory(info: dict) -> float | None:
    """The memory the run could use (bytes): sysinfo shape.usable_memory_bytes, else memory.total_bytes."""
    return num((info.get("shape") or {}).get("usable_memory_bytes")) or num((info.get("memory") or {}).get(
        "total_bytes"))


def buffer_words(buffer: float, llc: float, label: str = "last-level cache") -> str:
    """'256 MiB buffer, within the 480 MiB last-level cache: not shown to be DRAM' (bytes in; label: the cache's
    name, :func:`llc_basis`)."""
    return f"{_mib(buffer)} buffer, within the {_mib(llc)} {label}: not shown to be DRAM"


def _buffer_row(host, buffer: float, cache: tuple[float, str, str], memory: float | None) -> dict:
    """One memory_buffer_llc row from the buffer, the cache (bytes, basis and label: :func:`llc_basis`) and the
    usable memory (bytes)."""
    llc, basis, label = cache
    ratio = buffer / llc
    status, _ = band(ratio, 1.0, None, warn_low=LLC_MULTIPLE)
    status = FAIL if ratio <= 1.0 else status
    said = f"{_mib(buffer)} buffer, {n(ratio)}x {basis}"
    if status == FAIL:
        return row(host, "memory_buffer_llc", "buffer against last-level cache", FAIL, ratio, 1.0, "x", said,
                   f"{buffer_words(buffer, llc, label)}; the idle latency, peak bandwidth and loaded-latency values "
                   f"are that buffer's; a buffer of {LLC_MULTIPLE:g}x the cache or more (loadlat/MLC -b) measures "
                   "DRAM", _SECTION, low=LLC_MULTIPLE)
    share = buffer / memory if memory else None
    if share is not None and share > MEMORY_SHARE:
        return row(host, "memory_buffer_llc", "buffer against last-level cache", FAIL if share > 1 else WARN, share,
                   MEMORY_SHARE, "x usable memory", f"{said}; {n(100 * share)} % of the usable {_mib(memory or 0)}",
                   "a buffer the memory cannot hold beside the rest pages: the values may be swap's, not DRAM's",
                   _SECTION, high=MEMORY_SHARE)
    if status == WARN:
        return row(host, "memory_buffer_llc", "buffer against last-level cache", WARN, ratio, LLC_MULTIPLE, "x",
                   said, f"up to {n(100 / ratio)} % of a random chase's lines may come from the last-level cache: "
                   "the memory values are part cache", _SECTION, low=LLC_MULTIPLE)
    return row(host, "memory_buffer_llc", "buffer against last-level cache", PASS, ratio, LLC_MULTIPLE, "x", said,
               "", _SECTION, low=LLC_MULTIPLE)


#: The band of a memory-hierarchy run's CPU share (memstor.analysis.hierarchy: its levels use only runs within it).
HIERARCHY_CPU_LOW, HIERARCHY_CPU_HIGH = hierarchy.CPU_LOW, hierarchy.CPU_HIGH


def hierarchy_rows(mlc: pd.DataFrame | None) -> list[dict]:
    """hierarchy_cpu_share per host x test of mem-hierarchy (working_set, mlp): the lowest cpu_share of its runs
    (%) against [HIERARCHY_CPU_LOW, HIERARCHY_CPU_HIGH]; fail names the runs below (size, pages, threads); no
    cpu_share recorded: unchecked. Third read R-1cpu M1, R-loop: the hierarchy's levels and MLP bandwidth had no
    check at all (loop's 2-thread MLP runs: 49-64 % of a CPU)."""
    if mlc is None or mlc.empty or "test" not in mlc.columns:
        return []
    rows = []
    h = mlc[mlc["test"].isin(("working_set", "mlp"))]
    for (host, test), g in h.groupby(["host", "test"], sort=True):
        share = pd.to_numeric(g["cpu_share"], errors="coerce") if "cpu_share" in g else pd.Series(dtype=float)
        subject = f"mem-hierarchy {test}"
        if share.dropna().empty:
            rows.append(unchecked(host, "hierarchy_cpu_share", subject, "the runs recorded no CPU share (loadlat "
                                  "before v0.5, or Intel MLC)", _SECTION, "%"))
            continue
        low, high = 100 * share.min(), 100 * share.max()
        value = high if high > 100 * HIERARCHY_CPU_HIGH else low   # the side that is out, else the lowest run
        status, limit = band(value, 100 * HIERARCHY_CPU_LOW, 100 * HIERARCHY_CPU_HIGH)
        bad = g[(share < HIERARCHY_CPU_LOW) | (share > HIERARCHY_CPU_HIGH)]
        said = f"measuring threads on a CPU {n(low)}-{n(high)} % of the time over {len(g)} runs"
        if len(bad):
            said += f"; {len(bad)} outside {n(100 * HIERARCHY_CPU_LOW)}-{n(100 * HIERARCHY_CPU_HIGH)} %: " + ", ".join(
                _run_name(r) for _, r in bad.head(4).iterrows()) + (" ..." if len(bad) > 4 else "")
        # S14-bare 1 (twelfth read): with every run outside the band there are no others whose findings stand
        rows.append(row(host, "hierarchy_cpu_share", subject, status, value, limit, "%", said,
            "" if status == PASS else "their latencies include time the thread waited for a CPU: every run is "
            f"outside the band, so §4.5 states nothing of the {test} runs" if len(bad) == len(g) else
            "their latencies include time the thread waited for a CPU: those runs are left out, and §4.5 states only "
            "what the runs within the band give", _SECTION, low=100 * HIERARCHY_CPU_LOW, high=100 * HIERARCHY_CPU_HIGH))
        rows.append(_no_interval_row(host, test, g))
    return rows


def _no_interval_row(host, test: str, g: pd.DataFrame) -> dict:
    """interval_holds_value of a mem-hierarchy test, unchecked (R-1cpu M6: its levels, TLB cost and MLP bandwidth
    were stated with no interval and no row saying so): the runs per size or chain count and that none gives a 95 %
    interval, so page 1 lists it among the findings stated without a check."""
    key = ["buffer_bytes", "pages", "pattern"] if test == "working_set" else ["threads", "chains"]
    runs = g.groupby([k for k in key if k in g.columns], dropna=False).size() if set(key) & set(g.columns) else None
    most = int(runs.max()) if runs is not None and len(runs) else len(g)
    what = "levels and TLB cost" if test == "working_set" else "MLP bandwidths"
    return unchecked(host, "interval_holds_value", f"mem-hierarchy {test}",
                     f"the {what} are read from {'one run' if most == 1 else f'up to {most} runs'} per "
                     f"{'size' if test == 'working_set' else 'chain count'}, with no 95 % interval", _SECTION,
                     consequence=f"the {what} are stated without an interval or a repeat: read them with care")


def _run_name(r: pd.Series) -> str:
    """'16 MiB 4K, 2 threads at 49 %' of one hierarchy run."""
    size = "" if pd.isna(r.get("buffer_bytes")) else f"{_mib(float(r['buffer_bytes']))} "
    threads = "" if pd.isna(r.get("threads")) else f", {int(r['threads'])} thread{'s' if r['threads'] != 1 else ''}"
    return f"{size}{r.get('pages', '')}{threads} at {n(100 * float(r['cpu_share']))} %"
