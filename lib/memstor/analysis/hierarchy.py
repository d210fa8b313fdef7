"""The memory hierarchy (issue 31): cache levels from loadlat's working-set curve, the TLB cost, memory-level
parallelism. Pure: tidy rows of the ``mem-hierarchy`` table (memstor.parse.loadlat_hierarchy's columns) and the
kernel's cache sizes (memstor.measure.sysinfo's ``caches`` block, passed in as a dict) in, tables out.
Units: bytes, ns, MB/s = 10^6 bytes/s.

**The curve.** Per host, pages and pattern, one point per buffer size: the mean over repetitions of
``latency_ns`` and the median of the batch percentiles. The levels are read from the batch MEDIANS
(``lat_p50_ns``; ``latency_ns`` where there are none): on a shared machine the measuring thread is
descheduled now and then, which inflates a mean (elapsed / loads) but not the median of 256-load batches.
The random chain with 2 MiB pages is used when the buffer really was on huge pages (>= 50 %): it has no TLB
steps of its own; else the one with 4 KiB pages. A size whose run's measuring thread was on a CPU outside
[:data:`CPU_LOW`, :data:`CPU_HIGH`] of the time (hierarchy_cpu_share) gives no level or TLB cost: the levels are
read without it and a :data:`LEFT_OUT_LEVEL` row names it; an MLP row keeps its ``cpu_share`` (the worst of its
repetitions) and the report states no figure from one outside the band.

**Levels** (:func:`find_levels`; numbers below are the defaults; issue 38 fifth read, S9-bare M-8, R-loop 10.1:
the change-point search it replaces missed the 35-39 ns plateau at 4-8 MiB and read 'level 3 151 ns' from two
sizes of a tail still rising):

1. A plateau is a run of :data:`LEVEL_POINTS` = 3 or more consecutive sizes over :data:`LEVEL_OCTAVES` = 1
   doubling or more (on a fine grid three sizes are no plateau) whose latencies (the batch medians)
   lie within a factor :data:`MERGE_RATIO` = 1.25 of each other (the report's resolution: a step between two
   levels is a factor 2-10; a cache filling with random lines climbs 10-20 % along its plateau). From each size
   the longest such run is a candidate; the longest are kept first (ties: the narrower), each where it shares no
   size with one kept before, then extended to the right while the next size lies within that factor of the
   plateau's values over the octave below it (memory climbing slowly past the TLB's reach stays one level).
   Every plateau so found is a level; a size on none lies on a step between levels.
2. A level's latency: the median of its plateau's values (ns; clocks = ns x the core GHz the rows give, None when
   loadlat did not know it). Where it ends (memstor.analysis.level_edge): between the last size it still held (under
   10 % of the way to the next level's latency: nine loads in ten hit it) and the next size measured (``held_bytes``,
   ``off_bytes``; ``ends_at_bytes`` their geometric middle). A level the curve ends on has no end:
   it lies beyond the sweep (not reached). A curve that rises :data:`MERGE_RATIO` or more past its last level to
   the sweep's end with no plateau there gives a :data:`RISE_LEVEL` row: the next level is not reached.
3. The last level is ``memory`` when the curve ends on it and the sweep went at least an octave beyond the largest
   cache the kernel reports; :data:`LAST_LEVEL` when it went beyond that cache by less.

**Against the kernel** (:func:`cache_levels`): the levels are matched in order to the kernel's L1d, L2, L3
(fewest octaves of difference); a level agrees when the sizes it ends between lie within a factor
:data:`AGREE_FACTOR` = 2 of the kernel's size (one octave either way). Why 2: the end is interpolated on a grid of a few sizes per octave; random
lines in a set-associative cache miss before it is full; on exclusive (victim) hierarchies a level holds
more than its own size; a shared L3 holds other cores' (and on a VM other guests') data. More than an octave
off is not this cache's size (e.g. an L3 partitioned by the host).

**TLB cost** (:func:`tlb_cost`): the 4 KiB-page minus 2 MiB-page latency (random chain, batch medians) at the
sizes beyond the TLB's reach: from the smallest size at which 4 KiB pages are slower by more than
:data:`TLB_MIN_PCT` = 10 % and stay so at every larger size (the 4K/2M ratio smoothed by a median over 3
neighbouring sizes first, so that one odd size neither starts nor breaks the run; the first size must be slower by
that much itself, S15-bare 4, and 2 sizes at least, S19-bare 7); the cost is the median difference there. 10 %:
twice the run-to-run spread of a batch median at one size on this repository's VM.

**MLP** (:func:`mlp_table`): per host, threads and chains N: latency and bandwidth (means over repetitions),
Little's law ``littles_MBps`` = threads x N x line bytes / latency and the residual (bandwidth -
littles) / littles in %. loadlat's latency is elapsed / loads per chain and its bandwidth the lines over the
same elapsed time, so for one thread the residual checks the bookkeeping (it is 0 up to rounding); with
several threads loadlat's latency is their summed time over their summed loads and the bandwidth the sum of
their rates, so the residual is the difference between the two averages: near 0 when the threads' windows
are equal (< 0.02 % here), larger when they were not. It is not an independent measurement of the memory
system: both figures come from the same loads and clock. ``saturated``: from the first N at which bandwidth grows by less than :data:`SATURATION_GAIN_PCT` =
10 % per doubling of N (to the next N measured) on.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from memstor.analysis.core_clock import level_clock, tlb_clock
from memstor.analysis.kernel_caches import KERNEL_LEVELS, kernel_levels, match_levels, off_by
from memstor.analysis.level_edge import Edge, edge_words, level_edge
from memstor.analysis.tlb_reach import TLB_MIN_PCT, slower_run, why_no_walk_cost
from memstor.core.schema import missing
from memstor.core.units import size_text

WORKING_SET_COLUMNS = ["host", "pages", "pattern", "buffer_bytes", "n", "latency_ns", "lat_p50_ns", "lat_p90_ns",
                       "lat_p99_ns", "clocks", "batch_accesses", "llc_bytes", "cpu_share"]
CACHE_LEVEL_COLUMNS = ["host", "level", "latency_ns", "clocks", "ends_at_bytes", "held_bytes", "off_bytes",
                       "kernel_bytes", "agrees", "note", "clock_note"]
MLP_COLUMNS = ["host", "threads", "chains", "latency_ns", "bandwidth_MBps", "littles_MBps", "residual_pct",
               "saturated", "cpu_share"]

#: Sizes (bytes) or latencies (ns) of one curve, ascending by size: a list or a numpy array.
Floats = Sequence[float] | np.ndarray
LEVEL_POINTS = 3         # a plateau is at least this many consecutive sizes
LEVEL_OCTAVES = 1.0      # ... spanning at least this many doublings of size
MERGE_RATIO = 1.25       # a plateau's latencies lie within this factor of each other
AGREE_FACTOR = 2.0       # a level agrees with the kernel's cache when it ends within this factor of its size
SATURATION_GAIN_PCT = 10.0  # bandwidth growth per doubling of chains below this: saturated
HUGE_MIN_SHARE = 0.5     # a "2M" curve counts as huge pages when at least this share was on them
TLB_LEVEL = "TLB (4K - 2M pages)"
#: A run whose measuring threads ran less of the time than this (fraction, loadlat's cpu_share: CPU time / wall
#: time of the measuring thread) timed waits for a CPU as well as memory (the memory gate's cpu_share rule); above
#: CPU_HIGH the share cannot be (a clock or accounting fault). Such runs fail hierarchy_cpu_share
#: (memstor.analysis.validity.memory) and give no level, TLB cost or MLP figure (issue 38, item M-4).
CPU_LOW, CPU_HIGH = 0.90, 1.01
#: The row of a curve that rises past its last level to the largest size without a level there (the sweep ended
#: first): its latency is the largest size's, ends_at_bytes that size.
RISE_LEVEL = "rising past the last level"
#: The label of a last plateau the curve ends on beyond the last-level cache that is not shown to be DRAM: the sweep
#: ended within an octave beyond that cache (S10-bare 5: 'memory 120 ns' from 2.8 MiB to 64 MiB beside a 48 MiB L3,
#: next to a coverage sentence saying the last level cannot be shown to be DRAM).
LAST_LEVEL = "last level, not shown to be DRAM"
#: The row naming the sizes whose runs failed hierarchy_cpu_share (:func:`left_out_words`; no latency): the levels
#: are read without them.
LEFT_OUT_LEVEL = "left out (CPU share)"


def _rows(df: pd.DataFrame, test: str) -> pd.DataFrame:
    """The measured rows of one test (failed points and rows without a latency left out)."""
    if df is None or df.empty or "test" not in df:
        return pd.DataFrame(columns=list(df.columns) if df is not None else [])
    out = df[(df["test"] == test) & df["latency_ns"].notna()]
    if "status" in out:
        out = out[out["status"].astype(str) != "failed"]
    return out


def _host_col(df: pd.DataFrame) -> pd.DataFrame:
    return df if "host" in df else df.assign(host="")


# ------------------------------------------------------------------------------------ the curve


def working_set_table(df: pd.DataFrame) -> pd.DataFrame:
    """The working-set points (:data:`WORKING_SET_COLUMNS`): per host x pages x pattern x buffer size, n
    repetitions, the mean of ``latency_ns`` and ``clocks``, the median of the batch percentiles."""
    ws = _host_col(_rows(df, "working_set"))
    if ws.empty:
        return pd.DataFrame(columns=WORKING_SET_COLUMNS)
    ws = ws.assign(pages=ws["pages"].fillna("?"), pattern=ws["pattern"].fillna("?"))
    ws = ws.assign(**{c: pd.to_numeric(ws[c], errors="coerce") if c in ws else np.nan for c in
                      ("latency_ns", "lat_p50_ns", "lat_p90_ns", "lat_p99_ns", "clocks", "batch_accesses",
                       "llc_bytes", "cpu_share")})
    g = ws.groupby(["host", "pages", "pattern", "buffer_bytes"], sort=True)
    out = g.agg(n=("latency_ns", "size"), latency_ns=("latency_ns", "mean"), lat_p50_ns=("lat_p50_ns", "median"),
                lat_p90_ns=("lat_p90_ns", "median"), lat_p99_ns=("lat_p99_ns", "median"), clocks=("clocks", "mean"),
                batch_accesses=("batch_accesses", "first"), llc_bytes=("llc_bytes", "first"),
                cpu_share=("cpu_share", _worst_share)).reset_index()
    return out[WORKING_SET_COLUMNS]


def _worst_share(share: pd.Series) -> float:
    """The repetition whose CPU share lies furthest outside [CPU_LOW, CPU_HIGH] (fraction; the lowest when none
    does); NaN where none was recorded."""
    share = share.dropna()
    return math.nan if share.empty else float(share.max() if share.max() > CPU_HIGH else share.min())


def cpu_held(share: pd.Series) -> pd.Series:
    """Per run (or table row): its measuring threads were on a CPU [CPU_LOW, CPU_HIGH] of the time, or no share was
    recorded (not judged here: hierarchy_cpu_share says 'not checked')."""
    share = pd.to_numeric(share, errors="coerce")
    return share.isna() | share.between(CPU_LOW, CPU_HIGH)


def left_out_words(ws: pd.DataFrame) -> str:
    """'2 sizes left out (1 MiB and 8 MiB), their runs' measuring thread on a CPU 78-87 % of the time, outside
    90-101 % (hierarchy_cpu_share)' of one curve's rows that :func:`cpu_held` rejects (the sizes listed, up to 4;
    R-loop 10.2: '1.0-8.0 MiB' read as a range); '' when none."""
    bad = ws[~cpu_held(ws["cpu_share"])] if "cpu_share" in ws else ws.iloc[:0]
    if bad.empty:
        return ""
    sizes, share = bad["buffer_bytes"].astype(float), 100 * bad["cpu_share"].astype(float)
    listed = [size_text(v) for v in sorted(sizes)]  # S22-loop 8: '0.0 and 0.1 MiB' were 32 and 128 KiB
    where = (" and ".join([", ".join(listed[:-1]), listed[-1]]) if 1 < len(listed) <= 4 else listed[0]
             if len(listed) == 1 else f"{size_text(sizes.min())}-{size_text(sizes.max())}")
    lo, hi = f"{share.min():.0f}", f"{share.max():.0f}"
    whose = "their runs'" if len(bad) > 1 else "its run's"
    return (f"{len(bad)} size{'s' if len(bad) > 1 else ''} left out ({where}), {whose} measuring thread on a "
            f"CPU {lo if lo == hi else f'{lo}-{hi}'} % of the time, outside {100 * CPU_LOW:.0f}-{100 * CPU_HIGH:.0f} % "
            "(hierarchy_cpu_share)")


def _curve_value(t: pd.DataFrame) -> np.ndarray:
    """The latency the levels are read from: the batch median, the mean where there is none (ns)."""
    p50 = pd.to_numeric(t["lat_p50_ns"], errors="coerce")
    return p50.fillna(pd.to_numeric(t["latency_ns"], errors="coerce")).to_numpy(dtype=float)


def huge_share(pages) -> float | None:
    """The huge-page share (0-1) a ``pages`` text gives (``2M (THP, 98 %)`` -> 0.98), 0 for 4K, None unknown."""
    text = str(pages)
    if text.startswith("4K"):
        return 0.0
    if "%" in text:
        try:
            return float(text.split(",")[-1].split("%")[0]) / 100
        except ValueError:
            return None
    return None


def choose_curve(ws: pd.DataFrame) -> tuple[str | None, pd.DataFrame]:
    """(pages, points) of ONE host's random-chain curve the levels are read from: 2 MiB pages when >= 50 % of
    the buffer was on them, else 4 KiB pages; (None, empty) without a random curve."""
    rnd = ws[ws["pattern"] == "random"]
    if rnd.empty:
        return None, rnd
    shares = {p: huge_share(p) for p in rnd["pages"].unique()}
    huge = [p for p, s in shares.items() if s is not None and s >= HUGE_MIN_SHARE]
    small = [p for p, s in shares.items() if s == 0.0]
    pages = (huge or small or list(shares))[0]
    return pages, rnd[rnd["pages"] == pages].sort_values("buffer_bytes")


# ------------------------------------------------------------------------------------ levels


@dataclass(frozen=True)
class Level:
    """One plateau of the curve: its first and last point (indexes into the sizes) and latency (ns)."""

    first: int
    last: int
    latency_ns: float


def theil_sen(x: np.ndarray, y: np.ndarray) -> float:
    """The median of the pairwise slopes (0 for fewer than 2 points)."""
    slopes = [(y[j] - y[i]) / (x[j] - x[i]) for i, j in itertools.combinations(range(len(x)), 2) if x[j] != x[i]]
    return float(np.median(slopes)) if slopes else 0.0


def _window3(y: np.ndarray) -> np.ndarray:
    """Median over 3 neighbouring points, the ends over the 3 nearest (every value smoothed)."""
    if len(y) < 3:
        return np.asarray(y, dtype=float)
    lo = np.clip(np.arange(len(y)) - 1, 0, len(y) - 3)
    return np.array([np.median(y[i:i + 3]) for i in lo])


def _runs(x: np.ndarray, y: np.ndarray, band: float, least: int) -> list[tuple[int, int]]:
    """(first, last) of the longest run from each point of y = ln(ns) whose values lie within a factor ``band`` of
    each other and whose Theil-Sen slope per octave of x = log2(bytes) is below ln(band) (a ramp through a gradual
    step, sampled finely, is no plateau), where it has at least ``least`` points over LEVEL_OCTAVES or more."""
    out = []
    for a in range(len(y)):
        b = a
        while b + 1 < len(y) and np.ptp(y[a:b + 2]) <= math.log(band):
            b += 1
        while b - a + 1 >= least and theil_sen(x[a:b + 1], y[a:b + 1]) >= math.log(band):
            b -= 1
        if b - a + 1 >= least and x[b] - x[a] >= LEVEL_OCTAVES - 1e-9:
            out.append((a, b))
    return out


def _extend(x: np.ndarray, y: np.ndarray, a: int, b: int, limit: int, band: float) -> int:
    """The last index of a plateau a..b extended to the right (up to ``limit``) while the next size lies within a
    factor ``band`` of the median of the plateau's values over the octave below it (a level that drifts up slowly,
    as memory past the TLB's reach does, is one level: the curve leaves it at a step)."""
    while b < limit:
        near = [y[j] for j in range(a, b + 1) if x[j] >= x[b + 1] - 1] or [y[b]]
        if abs(y[b + 1] - float(np.median(near))) > math.log(band):
            break
        b += 1
    return b


def find_levels(sizes: Floats, latency_ns: Floats, band: float = MERGE_RATIO,
                least: int = LEVEL_POINTS) -> list[Level]:
    """The plateaus of a latency-vs-size curve (sizes ascending, bytes; latency ns, > 0), in order (module
    docstring, Levels): the runs of :func:`_runs`, the longest first (ties: the narrower, then the smaller sizes),
    each kept where it shares no size with one kept before, then extended (:func:`_extend`); a level's latency is
    its plateau's median (ns)."""
    x, y = np.log2(np.asarray(sizes, dtype=float)), np.log(np.asarray(latency_ns, dtype=float))
    runs = sorted(_runs(x, y, band, least), key=lambda r: (r[0] - r[1], float(np.ptp(y[r[0]:r[1] + 1])), r[0]))
    kept: list[tuple[int, int]] = []
    for a, b in runs:
        if all(b < c or a > d for c, d in kept):
            kept.append((a, b))
    kept.sort()
    limits = [c - 1 for c, _ in kept[1:]] + [len(y) - 1]
    kept = _join_gentle(x, y, [(a, _extend(x, y, a, b, lim, band)) for (a, b), lim in zip(kept, limits)], band)
    return [Level(a, b, float(np.exp(np.median(y[a:b + 1])))) for a, b in kept]


def _join_gentle(x: np.ndarray, y: np.ndarray, kept: list[tuple[int, int]], band: float) -> list[tuple[int, int]]:
    """Plateaus (first, last) with no step between them joined into one level: from the first's first size to the
    second's last, no two neighbouring sizes a factor ``band`` apart and a Theil-Sen slope under ln(band) per
    octave (ninth read S12-1cpu9 7: 4.3 ns at 64 KiB rising to 6.4 ns at 1 MiB in steps of 1.07-1.11x, then 20.9 ns
    at 1.4 MiB, was read as a level ending at 181-256 KiB beside the kernel's L2)."""
    out = kept[:1]
    for a, b in kept[1:]:
        first = out[-1][0]
        if np.diff(y[first:b + 1]).max() < math.log(band) and theil_sen(x[first:b + 1], y[first:b + 1]) < math.log(band):
            out[-1] = (first, b)
        else:
            out.append((a, b))
    return out


def level_edges(latency_ns: Floats, levels: Sequence[Level]) -> list[Edge | None]:
    """Per level, where it ends (memstor.analysis.level_edge.level_edge: the last size it held and the next size
    measured, against the next level's latency where one follows); None for a level the curve ends on."""
    nxt = [(b.first, b.latency_ns) for b in levels[1:]] + [(None, None)]
    return [level_edge(np.asarray(latency_ns, dtype=float), lv.last, lv.latency_ns, *n) for lv, n in zip(levels, nxt)]


def level_ends(sizes: Floats, latency_ns: Floats, levels: Sequence[Level]) -> list[float | None]:
    """Where each level ends (bytes): the geometric middle of the last size it held and the next size measured
    (:func:`level_edges`); None for a level the curve ends on (its end lies beyond the sweep: not reached)."""
    s = np.asarray(sizes, dtype=float)
    return [float(math.sqrt(s[e.held] * s[e.off])) if e else None for e in level_edges(latency_ns, levels)]


# ------------------------------------------------------------------------------------ against the kernel


def _level_row(host, name, lat, ghz, ends, kernel, note, span=None) -> dict:
    """One cache_levels row; ``agrees`` where the level's end (``span``: the sizes it lies between, held_bytes and
    off_bytes, else ``ends``) is within AGREE_FACTOR of the kernel's size."""
    agrees = None
    if ends is not None and kernel is not None:
        agrees = bool(off_by(kernel, *(span or (ends, ends))) <= AGREE_FACTOR)
    return {"host": host, "level": name, "latency_ns": lat, "clocks": lat * ghz if ghz and lat is not None else None,
            "ends_at_bytes": ends, "held_bytes": span[0] if span else None, "off_bytes": span[1] if span else None,
            "kernel_bytes": kernel, "agrees": agrees, "note": note}


def _kib(n: float) -> str:
    return f"{n / 1024:,.0f} KiB" if n < 2**20 * 10 else f"{n / 2**20:,.1f} MiB"


def kept_curve(curve: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """(rows, sizes, latencies) of the curve :func:`choose_curve` chose that the levels are read from: its runs whose
    measuring thread held a CPU (:func:`cpu_held`) with a latency > 0; sizes ascending (bytes), latency ns."""
    curve = curve[cpu_held(curve["cpu_share"])] if "cpu_share" in curve else curve
    sizes, lat = curve["buffer_bytes"].to_numpy(dtype=float), _curve_value(curve)
    ok = np.isfinite(lat) & (lat > 0)
    return curve, sizes[ok], lat[ok]


def _one_host_levels(host: str, ws: pd.DataFrame, caches: Mapping | None) -> list[dict]:
    pages, curve = choose_curve(ws)
    if pages is None:
        return []
    left = left_out_words(curve)
    curve, sizes, lat = kept_curve(curve)
    levels = find_levels(sizes, lat)
    ends, edges = level_ends(sizes, lat, levels), level_edges(lat, levels)
    kernel = kernel_levels(caches)
    llc = max((b for _, b in kernel), default=None)
    if llc is None:  # the kernel's sizes not given: the LLC loadlat read, if it did
        llc = pd.to_numeric(curve["llc_bytes"], errors="coerce").max()
    memory = bool(levels) and ends[-1] is None and not missing(llc) and sizes[-1] > float(llc)
    match = match_levels(ends[:-1] if memory else ends, kernel)
    (ghz, clock_note), src = level_clock(curve, ws), f"random chain, {pages}"
    rows = []
    for i, lv in enumerate(levels):
        if memory and i == len(levels) - 1:
            dram = sizes[-1] >= 2 * float(llc)  # the coverage sentence's rule (report.text.hierarchy)
            rows.append(_level_row(host, "memory" if dram else LAST_LEVEL, lv.latency_ns, ghz, None, None,
                                   f"the last plateau, from {_kib(sizes[lv.first])} to the largest size "
                                   f"{_kib(sizes[-1])} ({src})"))
            continue
        j = match.get(i)
        name, kb = (kernel[j][0], kernel[j][1]) if j is not None else (f"plateau {i + 1} (no kernel cache)", None)
        e = edges[i]
        span = (float(sizes[e.held]), float(sizes[e.off])) if e else None
        rows.append(_level_row(host, name, lv.latency_ns, ghz, ends[i], kb, _level_note(lv, sizes, lat, e, kb, src), span))
    rise = _rise(sizes, lat, levels)
    if rise:  # R-loop 10.1, S9-bare M-8: the next level is not reached; none is read from a rising tail
        rows.append(_level_row(host, RISE_LEVEL, float(lat[-1]), ghz, float(sizes[-1]), None,
                               f"{rise}; no level found there: the sweep ended first, the next level not reached "
                               f"({src})"))
    for j, (name, kb) in enumerate(kernel):
        if j not in match.values():
            note, agrees = _unmatched(sizes, lat, kb)
            rows.append({**_level_row(host, name, None, ghz, None, kb, f"{note} ({src})"), "agrees": agrees})
    if left:  # issue 38, M-4: the levels above come from the runs that passed only
        rows.append(_level_row(host, LEFT_OUT_LEVEL, None, ghz, None, None, f"{left} ({src})"))
    return [{**r, "clock_note": clock_note} for r in rows]


def _unmatched(sizes: np.ndarray, lat: np.ndarray, kb: float) -> tuple[str, bool | None]:
    """(note, agrees) of a kernel cache (kb bytes) no level was matched to: beyond the sweep's largest size by more
    than AGREE_FACTOR 'not reached' (None: nothing compared); a rise of MERGE_RATIO or more over the sizes within
    AGREE_FACTOR of it 'the curve steps near it ... its end is not shown' (None: R-loop p9, 4.53 -> 40.1 ns at 1.4-4
    MiB read 'no step near 2,048 KiB'); else 'no step near it' (False)."""
    if not len(sizes) or sizes[-1] * AGREE_FACTOR < kb:
        top = f"{_kib(sizes[-1])}" if len(sizes) else "no size"
        return f"not reached: the sweep ended at {top}, below it", None
    near = (sizes >= kb / AGREE_FACTOR) & (sizes <= kb * AGREE_FACTOR)
    if near.sum() >= 2 and lat[near][-1] >= MERGE_RATIO * lat[near][0]:
        (a, b), (ya, yb) = sizes[near][[0, -1]], lat[near][[0, -1]]
        return (f"the curve steps near it ({ya:.3g} ns at {_kib(a)} to {yb:.3g} ns at {_kib(b)}), but no level of "
                "the curve follows the step: where this cache ends is not shown"), None
    return f"no level of the curve matched to it: no step near {_kib(kb)}", False


def _rise(sizes: np.ndarray, lat: np.ndarray, levels: list[Level]) -> str:
    """'41.0 ns to 170 ns at 64.0 MiB, 4.2x' when the curve's largest size lies MERGE_RATIO or more above its last
    level (a step the level search found no plateau for before the sweep ended); '' otherwise."""
    if not levels or levels[-1].last >= len(sizes) - 1 or lat[-1] < MERGE_RATIO * levels[-1].latency_ns:
        return ""
    last = levels[-1].latency_ns
    return f"{last:.3g} ns to {lat[-1]:.3g} ns at {_kib(sizes[-1])}, {lat[-1] / last:.1f}x"


def _level_note(lv: Level, sizes: np.ndarray, lat: np.ndarray, edge: Edge | None, kb, src: str) -> str:
    """Where the level lies and where it ends ('ends between 724 KiB and 1,024 KiB: on it 64 KiB-256 KiB (5 sizes),
    held at 724 KiB (6.92 ns, 2 % of the way to the next level's 123 ns), not at ...': level_edge.edge_words), or
    that the curve ends on it; beside the kernel's cache of its rank, judged on the sizes it ends between."""
    held = lat[lv.first:lv.last + 1]
    rising = (f", rising {held.min():.2g}-{held.max():.2g} ns with no step of {MERGE_RATIO:g}x between neighbouring "
              "sizes" if held.max() >= MERGE_RATIO * held.min() else "")
    on = f"on it {_kib(sizes[lv.first])}-{_kib(sizes[lv.last])} ({lv.last - lv.first + 1} sizes{rising})"
    if edge is None:
        return f"the curve ends on this level, {on}: its end is beyond the sweep, not reached ({src})"
    head, detail = edge_words(edge, sizes, lat, _kib).split(": ", 1)
    text = f"{head}: {on}, {detail}"
    if kb is None:
        return f"{text}; no cache of the kernel's matched ({src})"
    factor = off_by(kb, sizes[edge.held], sizes[edge.off])
    verdict = (f"within a factor {AGREE_FACTOR:g} of the kernel's {_kib(kb)}" if factor <= AGREE_FACTOR else
               f"at least a factor {factor:.1f} from the kernel's {_kib(kb)} (> {AGREE_FACTOR:g}: the step is not this "
               "cache's size; a shared or partitioned cache, e.g. on a VM, holds less)")
    if factor > AGREE_FACTOR:  # the report's sentence names the kernel's size: the note says the rest once
        return (f"{head} (on it {_kib(sizes[lv.first])}-{_kib(sizes[lv.last])}, {detail}), at least a factor {factor:.1f} "
                f"from the kernel's {_kib(kb)}: a shared or partitioned cache holds less (e.g. on a VM) ({src})")
    return f"{text}: {verdict} ({src})"


def host_caches(caches: Mapping | None, host: str) -> Mapping | None:
    """The kernel caches of `host`: ``caches`` itself (a sysinfo ``caches`` block) or ``caches[host]``."""
    if caches is None:
        return None
    if any(key in caches for _, key in KERNEL_LEVELS):
        return caches
    return caches.get(host)


def cache_levels(df: pd.DataFrame, caches: Mapping | None = None) -> pd.DataFrame:
    """The ``cache_levels`` table (:data:`CACHE_LEVEL_COLUMNS`) of every host: its levels and memory from the
    working-set rows (the tidy table, or :func:`working_set_table`), each beside the kernel's cache of the same
    rank (``caches``: sysinfo's ``caches`` block, or {host: block}) with ``agrees``, then the TLB cost row."""
    ws = df if "n" in df and "pattern" in df and "test" not in df else working_set_table(df)
    rows: list[dict] = []
    for host, g in ws.groupby("host", sort=True):
        mine = _one_host_levels(str(host), g, host_caches(caches, str(host)))
        rows += mine
        if (g["pattern"] == "random").any():
            tlb = tlb_cost(g[cpu_held(g["cpu_share"])] if "cpu_share" in g else g)
            ghz, why = tlb_clock(g)
            # S15-bare 5: the header's clock (the levels'), not the TLB runs' own mean (79.9 clocks under 3.37 GHz)
            ghz = ghz and next((r["clocks"] / r["latency_ns"] for r in mine if r["clocks"] and r["latency_ns"]), ghz)
            rows.append(_level_row(host, TLB_LEVEL, tlb["cost_ns"], ghz, tlb["from_bytes"], None,
                                   "; ".join(w for w in (tlb["note"], why) if w)))
    return pd.DataFrame(rows, columns=CACHE_LEVEL_COLUMNS)


def last_step(levels: pd.DataFrame | None, host: str) -> tuple[float, float] | None:
    """(bytes, ns): where ``host``'s working-set curve steps off its last cache level onto the level it ends on (the
    end of the last level but one: :func:`level_ends` gives an end only where a level lies beyond) and that last
    level's latency; None where the curve gives no such step (no curve, one level, or a curve that rises past its
    last level with no level found: the last step lies beyond the sweep). S7-bare M-10: the step at 15.2 MiB onto
    a 156 ns level, against the kernel's 480 MiB L3."""
    if levels is None or len(levels) == 0:
        return None
    mine = levels[levels["host"].astype(str) == str(host)]
    t = mine[~mine["level"].isin([TLB_LEVEL, RISE_LEVEL])]
    t = t[pd.to_numeric(t["latency_ns"], errors="coerce").notna()].reset_index(drop=True)
    ends = pd.to_numeric(t["ends_at_bytes"], errors="coerce")
    if (mine["level"] == RISE_LEVEL).any() or ends.dropna().empty or ends.idxmax() + 2 != len(t):
        return None
    i = int(ends.idxmax())
    return float(ends[i]), float(t.loc[i + 1, "latency_ns"])


def tlb_cost(ws: pd.DataFrame) -> dict:
    """ONE host's TLB cost from its random-chain curves with 4 KiB and with 2 MiB pages (module docstring):
    {"from_bytes", "cost_ns" (median 4K - 2M difference from there on), "at_largest_ns", "note"}; None values
    and the reason in ``note`` when it cannot be said."""
    out: dict = {"from_bytes": None, "cost_ns": None, "at_largest_ns": None, "note": ""}
    rnd = ws[ws["pattern"] == "random"]
    shares = {p: huge_share(p) for p in rnd["pages"].unique()}
    small = [p for p, s in shares.items() if s == 0.0]
    huge = [p for p, s in shares.items() if s is not None and s >= HUGE_MIN_SHARE]
    if not small or not huge:
        out["note"] = "not available: needs the random chain with 4 KiB and with 2 MiB pages (>= 50 % huge)"
        return out
    a = rnd[rnd["pages"] == small[0]].set_index("buffer_bytes")
    b = rnd[rnd["pages"] == huge[0]].set_index("buffer_bytes")
    common = sorted(set(a.index) & set(b.index))
    la = pd.Series(_curve_value(a.loc[common]), index=common)
    lb = pd.Series(_curve_value(b.loc[common]), index=common)
    ratio = (la / lb).to_numpy()
    slower = _window3(ratio) > 1 + TLB_MIN_PCT / 100
    out["at_largest_ns"] = float(la.iloc[-1] - lb.iloc[-1]) if common else None
    if not len(slower) or not slower[-1]:
        out["note"] = _no_tlb_cost(common, ratio, slower)
        return out
    not_slower = np.flatnonzero(~slower)
    start = int(not_slower[-1]) + 1 if len(not_slower) else 0
    own = ratio[start:] > 1 + TLB_MIN_PCT / 100  # S15-bare 4: a size slower by the margin itself, not by the median
    if not own.any() or own.size - int(np.argmax(own)) < 2:  # S19-bare 7: one size (64 MiB, 27.7 ns) is no cost
        out["note"] = _no_tlb_cost(common, ratio, own)
        return out
    start += int(np.argmax(own))
    diff = (la - lb).iloc[start:]
    out["from_bytes"] = float(common[start])
    out["cost_ns"] = float(diff.median())
    out["note"] = (f"median of 4K - 2M latency over {len(diff)} sizes from {_kib(common[start])} (4 KiB pages "
                   f"slower by > {TLB_MIN_PCT:g} % there and at every larger size, median of 3 sizes: beyond the "
                   f"TLB's reach) to "
                   f"{_kib(common[-1])}; ends_at_bytes = that first size; batch medians")
    return out


def _no_tlb_cost(sizes: list, ratio: np.ndarray, slower: np.ndarray) -> str:
    """Why no TLB cost is stated (4K / 2M ``ratio`` per size; ``slower``: beyond TLB_MIN_PCT): 'not shown: ...' with
    the numbers (R-1cpu M10, S11-1cpu 6, S19-bare 7); 'at every size' only where each lies within the band."""
    if not len(sizes) or not np.isfinite(ratio).any():
        return "not shown: no buffer size measured with both page sizes"
    finite = ratio[np.isfinite(ratio)]  # S20-bare 2: how many sizes measured 4 KiB pages slower at all
    slower_at = f"{int((finite > 1).sum())} of {len(finite)} sizes"
    if _window3(ratio)[-1] > 1 + TLB_MIN_PCT / 100:  # slower to the end, but from fewer than 2 sizes of their own
        lo, hi = int(np.nanargmin(ratio)), int(np.nanargmax(ratio))  # S19-loop 2: name the scatter, not 'only at'
        return (f"not shown: 4 KiB pages not slower by > {TLB_MIN_PCT:g} % at 2 sizes or more in a row to the sweep's "
                f"end ({_kib(sizes[-1])}: {ratio[-1]:.2f}×); single sizes, one run each, scatter {ratio[lo]:.2f}× "
                f"({_kib(sizes[lo])}) to {ratio[hi]:.2f}× ({_kib(sizes[hi])}), 4 KiB pages slower at "
                f"{slower_at}{slower_run([_kib(b) for b in sizes], list(ratio))}: a cost not established from single "
                "runs")  # S20-bare 2: not 'no cost'; S21-bare 1: the run to the end named

    said = (f"not shown: 4 KiB pages within {TLB_MIN_PCT:g} % of 2 MiB pages at the largest size ({_kib(sizes[-1])}: "
            f"{_window3(ratio)[-1]:.2f}×, the median of the 3 largest)")
    if slower.any():
        top = int(np.nanargmax(ratio))
        return (f"{said}, though slower below it (up to {ratio[top]:.2f}× at {_kib(sizes[top])}): a page-walk cost "
                "that does not hold to the sweep's end is not one the curves show")
    lo, hi = int(np.nanargmin(ratio)), int(np.nanargmax(ratio))
    if ratio[hi] <= 1 + TLB_MIN_PCT / 100 and ratio[lo] >= 1 - TLB_MIN_PCT / 100:
        return f"{said} and at every size: {why_no_walk_cost(sizes[-1])}"
    return (f"{said}, and no median of 3 neighbouring sizes more than {TLB_MIN_PCT:g} % slower; single sizes, one run "
            f"each, scatter {ratio[lo]:.2f}× ({_kib(sizes[lo])}{': 4 KiB pages faster' if ratio[lo] < 1 else ''}) to "
            f"{ratio[hi]:.2f}× ({_kib(sizes[hi])}), 4 KiB pages slower at {slower_at}: a cost not "
            "established from single runs")


# ------------------------------------------------------------------------------------ MLP


def mlp_table(df: pd.DataFrame) -> pd.DataFrame:
    """The ``mlp`` table (:data:`MLP_COLUMNS`): per host x threads x chains, latency and bandwidth (means over
    repetitions), Little's law and its residual, and ``saturated`` (module docstring)."""
    m = _host_col(_rows(df, "mlp"))
    if m.empty:
        return pd.DataFrame(columns=MLP_COLUMNS)
    m = m.assign(latency_ns=pd.to_numeric(m["latency_ns"], errors="coerce"),
                 bandwidth_MBps=pd.to_numeric(m["bandwidth_MBps"], errors="coerce"),
                 line=pd.to_numeric(m["access_bytes"], errors="coerce").fillna(64),
                 cpu_share=pd.to_numeric(m["cpu_share"], errors="coerce") if "cpu_share" in m else np.nan)
    g = m.groupby(["host", "threads", "chains"], sort=True)
    out = g.agg(latency_ns=("latency_ns", "mean"), bandwidth_MBps=("bandwidth_MBps", "mean"),
                line=("line", "first"), cpu_share=("cpu_share", _worst_share)).reset_index()
    out["littles_MBps"] = out["threads"] * out["chains"] * out["line"] / out["latency_ns"] * 1e3
    out["residual_pct"] = 100 * (out["bandwidth_MBps"] - out["littles_MBps"]) / out["littles_MBps"]
    out["saturated"] = False
    for _, idx in out.groupby(["host", "threads"]).groups.items():
        part = out.loc[idx].sort_values("chains")
        n_sat = saturation_chains(part["chains"].tolist(), part["bandwidth_MBps"].tolist())
        if n_sat is not None:
            out.loc[part.index[part["chains"] >= n_sat], "saturated"] = True
    return out[MLP_COLUMNS]


def growth_per_doubling(n1: float, bw1: float, n2: float, bw2: float) -> float:
    """Bandwidth growth from n1 to n2 chains, per doubling of the chains, in % ((bw2/bw1)^(1/log2(n2/n1)) - 1)."""
    return 100 * ((bw2 / bw1) ** (1 / math.log2(n2 / n1)) - 1)


def saturation_chains(chains: Sequence[float], bandwidth: Sequence[float]) -> float | None:
    """The first chain count from which bandwidth grows by less than :data:`SATURATION_GAIN_PCT` per doubling
    to the next count (chains ascending); None when it grows faster everywhere."""
    for (n1, b1), (n2, b2) in zip(zip(chains, bandwidth), list(zip(chains, bandwidth))[1:]):
        if b1 > 0 and b2 > 0 and n2 > n1 and growth_per_doubling(n1, b1, n2, b2) < SATURATION_GAIN_PCT:
            return n1
    return None
