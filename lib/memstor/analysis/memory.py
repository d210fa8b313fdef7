"""Memory analysis (pure): idle latency (huge pages, 4 KiB pages and the page-walk cost between them), peak
bandwidth, loaded-latency curves, the fitted knee, checks.

**A curve's identity** is everything that changes it (:data:`CURVE_KEY`): host, tool, traffic, access size,
load thread count, buffer size, random vs sequential latency chase and loads, huge pages. Values a table
does not give stay unknown (NaN, shown as ``?``), never guessed: memstor's own tables carry them
(:data:`memstor.experiments.mlc_loaded_latency.SETTING_COLUMNS`); for imported MLC/loadlat files they are
read from the row's own text where it says them (:func:`with_settings`). Rows with the same *complete*
identity are repetitions: one curve, each point summarised by n, mean and the 95 % Student-t interval
(:func:`memstor.analysis.summary.ci95`). When any part of the identity is unknown, nobody can tell that two
files measured the same thing, so each source file (and run within it) stays its own curve (``origin``).

**The curve analysis** is memstor.analysis.curves's, the one used for memory and storage alike
(:func:`fit_table`): saturation (plateau, hook, Little's law), the open-queue model fitted below the
plateau with 95 % intervals and an identifiability flag, a held-out check, and the model-free family
metrics. The *knee* is the bandwidth at which the **measured** latency reaches 2·R0
(:data:`KNEE_DEFINITION`; interpolated between measured points, censored when not reached — never a
fitted value beyond the data). The model-free *latency +25 % point* (:func:`latency_rise_table`,
unloaded latency = median at light load) is kept for notebook 10; memory_fit's ``bw_at_1p25_r0_MBps``
is the same idea with the fitted R0.

Units: latency in ns, bandwidth in MB/s (10^6 bytes/s), buffer in KiB, access size in bytes, inject delay
in cycles of the tool's delay loop.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from memstor.analysis.curves import MEMORY_FIT_COLUMNS
from memstor.analysis.hosts import each_host

#: Settings columns that, with host, tool, traffic and access size, identify a curve.
SETTINGS = ["load_threads", "buffer_kib", "random", "load_random", "huge_pages"]
#: The identity of a loaded-latency curve (repetitions share all of it).
CURVE_KEY = ["host", "tool", "traffic", "access_bytes", *SETTINGS]
#: Optional identity part: the load threads' pacing (``fixed`` delay loops, ``exp`` Poisson-like), when a
#: table records it; a curve without it keeps its label (no "?"), and never pools with one that has it.
OPTIONAL_KEY = ["pacing"]
#: Parts of a curve's label, in order (see :func:`curve_label`).
LABEL_PARTS = ["traffic", "access_bytes", "tool", "load_threads", "buffer_kib", "huge_pages", "load_random",
               "random", "pacing", "origin"]
#: Columns of :func:`curve_table`.
CURVE_COLUMNS = [*CURVE_KEY, "pages", "pacing", "origin", "curve", "inject_delay", "n", "gate_failed", "latency_ns",
                 "latency_ns_ci_low", "latency_ns_ci_high", "bandwidth_MBps", "bandwidth_MBps_ci_low",
                 "bandwidth_MBps_ci_high", "ci_method"]
#: A memory point's own 95 % interval from its sub-windows (:func:`sub_window_ci_columns`): the columns the
#: memory tidy table adds (memstor.experiments.mlc_loaded_latency), in order.
POINT_CI_COLUMNS = ["latency_ns_ci_low", "latency_ns_ci_high", "bandwidth_MBps_ci_low", "bandwidth_MBps_ci_high",
                    "ci_method", "ci_note"]
#: Sub-windows of one point count as of equal length (bandwidth unweighted) when every length is within
#: this share of their mean; else the bandwidth mean is weighted by the lengths.
EQUAL_WINDOWS_TOL = 0.02
#: Columns of :func:`fit_table` (the report's ``memory_fit`` table; memstor.analysis.curves).
FIT_COLUMNS = MEMORY_FIT_COLUMNS
#: What the knee is, in words (tables, figures and text use this name).
KNEE_DEFINITION = ("knee: the bandwidth at which the measured latency reaches 2·R0 (R0 of the open-queue fit "
                   "below the plateau; interpolated between measured points, censored when not reached)")
UNKNOWN = "?"


def ci95(values) -> tuple[float, float, float, int]:
    """(mean, low, high, n): the 95 % Student-t interval of the mean; memstor's one summary helper
    (:func:`memstor.analysis.summary.ci95`; NaN bounds when n < 2)."""
    from memstor.analysis.summary import ci95 as _ci95

    return _ci95(values)


def measured(df: pd.DataFrame) -> pd.DataFrame:
    """Rows with a measurement (failed points dropped)."""
    return df[df["status"] != "failed"] if "status" in df else df


# ----------------------------------------------------------------------------------------- settings


def _known(v) -> bool:
    """A value that is not None/NaN/empty."""
    if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA:
        return False
    return not (isinstance(v, str) and not v.strip())


def _bool_or_nan(v):
    """True/False from a CSV cell (True, 'True', 'true', 1...), NaN when empty or unreadable."""
    if not _known(v):
        return np.nan
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    text = str(v).strip().lower()
    if text in ("true", "1", "1.0", "yes"):
        return True
    if text in ("false", "0", "0.0", "no"):
        return False
    return np.nan


def _options(detail) -> list[str]:
    """The tool options a parsed row recorded in its detail (``options: -b1g -k1-3 -L``), else []."""
    if not _known(detail):
        return []
    for part in str(detail).split("; "):
        if part.startswith("options: "):
            return part[len("options: "):].split()
    return []


def _cpu_count(text: str) -> int | None:
    """Number of CPUs in an MLC list ``1-3,5`` (None when malformed)."""
    n = 0
    for item in text.split(","):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", item.strip())
        if not m:
            return None
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if hi < lo:
            return None
        n += hi - lo + 1
    return n or None


def _buffer_kib(value: str) -> float:
    """KiB of a ``-b`` value: digits are KiB (MLC); k/m/g suffixes are KiB/MiB/GiB (loadlat)."""
    m = re.fullmatch(r"(\d+)([kmgKMG]?)", value)
    if not m:
        return np.nan
    return float(int(m.group(1)) * {"": 1, "k": 1, "m": 1024, "g": 1024**2}[m.group(2).lower()])


def _row_settings(row: pd.Series) -> dict:
    """Settings a row's own text gives (its test, tool and recorded options); NaN where it says nothing."""
    test, tool, detail = row.get("test"), row.get("tool"), row.get("detail")
    opts = _options(detail)
    out = dict.fromkeys(SETTINGS, np.nan)
    out["pages"] = np.nan
    if test == "idle_latency":
        out["load_threads"] = 0
    for o in opts:
        if o.startswith("-k") and test != "idle_latency":
            count = _cpu_count(o[2:])
            out["load_threads"] = count if count else np.nan
        elif o.startswith("-m") and test != "idle_latency":
            try:
                out["load_threads"] = bin(int(o[2:], 16)).count("1") or np.nan
            except ValueError:
                pass
        elif o.startswith("-b"):
            out["buffer_kib"] = _buffer_kib(o[2:])
        elif o == "-L":
            out["huge_pages"], out["pages"] = True, f"2M ({tool or 'tool'} -L)"
        elif o == "-U" or (o == "-r" and tool == "loadlat"):
            out["load_random"] = True
        elif o == "-r":  # MLC: random access reads for the latency thread
            out["random"] = True
    if test in ("idle_latency", "loaded_latency", "latency_matrix"):
        if tool == "loadlat" or "random access" in str(detail if _known(detail) else ""):
            out["random"] = True  # loadlat's latency chain is always random; MLC says when it is
    return out


def with_settings(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with the :data:`SETTINGS` columns and ``pages`` (added when missing); empty cells are filled
    with what the row's own text gives (:func:`_row_settings`: an idle-latency test has no load threads,
    ``options: -b.. -k.. -L -U`` recorded from the command line, MLC's "random access", loadlat's random
    chain) and otherwise stay NaN. Booleans become True/False/NaN, counts floats."""
    out = df.copy()
    for col in [*SETTINGS, "pages"]:
        if col not in out.columns:
            out[col] = np.nan
    for col in ("random", "load_random", "huge_pages"):
        out[col] = out[col].map(_bool_or_nan).astype(object)
    for col in ("load_threads", "buffer_kib"):
        out[col] = pd.to_numeric(out[col], errors="coerce").astype(float)
    out["pages"] = out["pages"].astype(object)
    gaps = out[[*SETTINGS, "pages"]].isna().any(axis=1)
    for i in out.index[gaps]:
        derived = _row_settings(out.loc[i])
        for col, value in derived.items():
            if not _known(out.at[i, col]) and _known(value):
                out.at[i, col] = value
    return out


# ------------------------------------------------------------------------------- a point's own interval


def sub_window_ci_columns(series: dict | None, tool=None, confidence: float = 0.95) -> dict:
    """The :data:`POINT_CI_COLUMNS` of one memory point from its sub-windows (loadlat ``--windows``; the
    ``series`` of memstor.parse.loadlat_json.point_figures: lists ``window_s`` (s), ``latency_ns``,
    ``bandwidth_MBps``, a list None when the point does not measure that figure).

    The 95 % batch-means interval of the point's mean (memstor.analysis.batch_means.batch_means_ci; at
    least 10 batches, else empty) of latency (ns) and bandwidth (MB/s): ``latency_ns_ci_low/high``,
    ``bandwidth_MBps_ci_low/high``; ``ci_method`` ``batch-means`` when a bound is a number, else "";
    ``ci_note`` says why a bound is empty or what to know about it ("no sub-windows (MLC)", "no
    sub-windows (loadlat before v0.3)", "too few batches (5 sub-windows < 10)", "correlated (lag-1 ...)",
    "lost sub-window: latency" (a thread descheduled across a whole sub-window: no interval for it)).

    Choices (loadlat's sub-windows, lib/loadlat/README.md):
    - No ramp (``ramp_intervals=0``): loadlat runs a warm-up of min(0.5 s, max(0.05 s, t/4)) with the
      same loops before it starts the measured window and its first sub-window, so the first sub-window
      is not a start-up transient (checked here: over 18 points of 10 sub-windows the first one's
      deviation from the others averaged -0.05 (latency) and +0.07 (bandwidth) of their standard
      deviation).
    - Latency UNWEIGHTED: loadlat's JSON does not record the chased loads of each sub-window. The point's
      latency is window time / loads, i.e. the sub-windows' latencies weighted by their loads; with
      sub-windows of equal length the unweighted mean differs from it by about the squared coefficient
      of variation of the sub-windows (0.01 % at a 1 % spread), far inside the interval.
    - Bandwidth unweighted when the sub-windows are of equal length (within :data:`EQUAL_WINDOWS_TOL`,
      the usual case: loadlat splits the window evenly), else weighted by their lengths ``window_s``
      (the point's bandwidth is bytes / time).
    """
    from memstor.analysis.batch_means import METHOD, MIN_BATCHES, _notes, batch_means_ci

    cols: dict = dict.fromkeys(POINT_CI_COLUMNS, math.nan)
    cols["ci_method"], cols["ci_note"] = "", ""
    if not isinstance(series, dict):
        cols["ci_note"] = ("no sub-windows (MLC)" if tool == "mlc"
                           else "no sub-windows (loadlat before v0.3)" if tool == "loadlat" else "no sub-windows")
        return cols
    secs = series.get("window_s") or []
    n = max((len(v) for v in series.values() if isinstance(v, list)), default=0)
    good = len(secs) == n and n > 0 and all(isinstance(t, (int, float)) and t > 0 for t in secs)
    equal = good and max(abs(t / (sum(secs) / n) - 1) for t in secs) <= EQUAL_WINDOWS_TOL
    cis, lost = {}, []
    for metric in ("latency_ns", "bandwidth_MBps"):
        values = series.get(metric)
        if not isinstance(values, list) or not values:
            continue  # not measured by this point (idle latency: no bandwidth; peak bandwidth: no latency)
        if any(v is None or not math.isfinite(float(v)) for v in values):
            lost.append(metric.split("_")[0])
            continue
        weights = secs if metric == "bandwidth_MBps" and good and not equal else None
        cis[metric] = r = batch_means_ci(values, weights, min_batches=MIN_BATCHES, ramp_intervals=0,
                                         confidence=confidence)
        cols[f"{metric}_ci_low"], cols[f"{metric}_ci_high"] = r.ci_low, r.ci_high
    if any(r.finite for r in cis.values()):
        cols["ci_method"] = METHOD
    notes = _notes({m.split("_")[0]: r for m, r in cis.items()}, MIN_BATCHES, unit="sub-windows")
    if lost:
        notes.append(f"lost sub-window: {', '.join(lost)}")
    cols["ci_note"] = "; ".join(notes)
    return cols


def _own_interval(rows: pd.DataFrame, metric: str) -> tuple[float, float]:
    """The single row's own batch-means interval of ``metric`` (its sub-windows), else (NaN, NaN)."""
    one = rows.iloc[0]
    if str(one.get("ci_method")) != "batch-means":
        return math.nan, math.nan
    lo, hi = pd.to_numeric(pd.Series([one.get(f"{metric}_ci_low"), one.get(f"{metric}_ci_high")]), errors="coerce")
    return float(lo), float(hi)


def _summary(rows: pd.DataFrame, metric: str) -> tuple[float, float, float, int, str]:
    """(mean, low, high, n, ci_method) of ``metric`` over ``rows``, the repetitions of one point: the 95 %
    t-interval between them when n >= 2 (``repetitions``), the one run's own batch-means interval when
    n = 1 (``batch-means``), else empty bounds and ""."""
    vals = pd.to_numeric(rows[metric], errors="coerce")
    mean, lo, hi, n = ci95(vals.tolist())
    if n >= 2:
        return mean, lo, hi, n, "repetitions"
    if n == 1:
        lo, hi = _own_interval(rows[vals.notna()], metric)
        return mean, lo, hi, n, "batch-means" if lo == lo else ""
    return mean, lo, hi, n, ""


def _method(*methods: str) -> str:
    """One ci_method for several metrics of a row: the one any interval has (both come from the same rows)."""
    return next((m for m in methods if m), "")


# ---------------------------------------------------------------------------------------- idle latency


@each_host
def idle_table(df: pd.DataFrame) -> pd.DataFrame:
    """Idle latency per page size: columns huge_pages (True/False/NaN), pages, n, latency_ns (mean),
    latency_ns_ci_low, latency_ns_ci_high (95 % interval: between the runs when n >= 2, the one run's own
    batch-means interval from its sub-windows when n = 1, else NaN) and ci_method (``repetitions``,
    ``batch-means`` or ""). Huge pages first."""
    rows = with_settings(measured(df))
    rows = rows[(rows["test"] == "idle_latency") & rows["latency_ns"].notna()]
    out = []
    for huge in (True, False, None):
        sel = rows[rows["huge_pages"].map(lambda v, h=huge: v is h if h is not None else not _known(v))]
        if sel.empty:
            continue
        mean, lo, hi, n, method = _summary(sel, "latency_ns")
        pages = ", ".join(dict.fromkeys(str(p) for p in sel["pages"] if _known(p))) or UNKNOWN
        out.append({"huge_pages": huge if huge is not None else np.nan, "pages": pages, "n": n,
                    "latency_ns": mean, "latency_ns_ci_low": lo, "latency_ns_ci_high": hi, "ci_method": method})
    return pd.DataFrame(out, columns=["huge_pages", "pages", "n", "latency_ns", "latency_ns_ci_low",
                                      "latency_ns_ci_high", "ci_method"])


# ------------------------------------------------------------------ the other sections of MLC's default run

#: MLC default-run sections beside idle latency, peak injection and loaded latency (memstor.measure.mlc.SECTIONS),
#: with the column holding each one's value.
SECTION_VALUES = {"latency_matrix": "latency_ns", "bandwidth_matrix": "bandwidth_MBps",
                  "max_bandwidth": "bandwidth_MBps", "c2c_latency": "latency_ns"}
SECTIONS_COLUMNS = ["host", "tool", "section", "what", "src_node", "dst_node", "unit", "n", "value", "ci_low",
                    "ci_high", "ci_method"]


def c2c_kind(detail) -> str:
    """The kind of a c2c row ("Local Socket L2->L2 HITM") from its ``detail`` (memstor's tables append
    "; options: ..." to it)."""
    return str(detail or "").split(";")[0].strip()


def _what(row: pd.Series) -> str:
    """What a section row measured beside its nodes: the c2c kind ("Local Socket L2->L2 HITM"), "idle latency"
    for the latency matrix, else the traffic ("read-only"; "?" when the output did not say)."""
    if row["test"] == "c2c_latency":
        return c2c_kind(row.get("detail"))
    if row["test"] == "latency_matrix":
        return "idle latency"
    return str(row["traffic"]) if _known(row.get("traffic")) else UNKNOWN


def sections_table(df: pd.DataFrame) -> pd.DataFrame:
    """The other sections of MLC's default run (Intel MLC or loadlat, measured or imported): one row per device x
    tool x section x what (c2c kind or traffic) x source node x destination node x configuration.

    Columns :data:`SECTIONS_COLUMNS`: ``section`` (latency_matrix: idle latency from the CPUs of node
    ``src_node`` to the memory of ``dst_node``; bandwidth_matrix: the same in MB/s; max_bandwidth: the best
    of several injection rates per traffic; c2c_latency: a cache line's transfer from one core's cache to
    another's, ``what`` = HIT (clean) or HITM (modified), local or remote socket), ``unit`` (ns or MB/s =
    10^6 bytes/s), n, the mean ``value`` and its 95 % interval (between repetitions when n >= 2, else
    empty). Only repetitions of one configuration are pooled (memstor's ``config``; for imported files the
    source file and run)."""
    rows = measured(df)
    if rows.empty or "test" not in rows:
        return pd.DataFrame(columns=SECTIONS_COLUMNS)
    rows = rows[rows["test"].isin(list(SECTION_VALUES))].copy()
    if rows.empty:
        return pd.DataFrame(columns=SECTIONS_COLUMNS)
    rows["what"] = rows.apply(_what, axis=1)
    conf = rows["config"] if "config" in rows else pd.Series(np.nan, index=rows.index)
    run = rows["run"] if "run" in rows else pd.Series(np.nan, index=rows.index)
    rows["_config"] = [str(c) if _known(c) else f"{s}#{r}" for c, s, r in zip(conf, rows["source"], run)]
    keys = ["host", "tool", "test", "what", "src_node", "dst_node", "_config"]
    out = []
    for key, g in rows.groupby([rows[k].map(lambda v: v if _known(v) else UNKNOWN) for k in keys], sort=False):
        host, tool, test, what, src, dst, _ = key
        col = SECTION_VALUES[test]
        vals = pd.to_numeric(g[col], errors="coerce").dropna()
        if vals.empty:
            continue
        mean, lo, hi, n = ci95(vals.tolist())
        out.append({"host": host, "tool": tool, "section": test, "what": what,
                    "src_node": src if src != UNKNOWN else np.nan, "dst_node": dst if dst != UNKNOWN else np.nan,
                    "unit": "ns" if col == "latency_ns" else "MB/s", "n": n, "value": mean, "ci_low": lo,
                    "ci_high": hi, "ci_method": "repetitions" if n >= 2 else ""})
    order = {t: i for i, t in enumerate(SECTION_VALUES)}
    table = pd.DataFrame(out, columns=SECTIONS_COLUMNS)
    # devices, then sections in MLC's order; inside a section the order of the output (MLC's rows, node pairs)
    return table.sort_values(["host", "section"], key=lambda c: c.map(order) if c.name == "section" else c,
                             kind="stable", ignore_index=True)


@each_host
def idle_latency_ns(df: pd.DataFrame) -> float | None:
    """Idle (DRAM) latency in ns: the mean of the idle-latency rows measured with huge pages when there
    are any (no page walks), else of the other idle rows (4 KiB or unknown pages); None when not measured."""
    table = idle_table(df)
    if table.empty:
        return None
    huge = table[table["huge_pages"].map(lambda v: _bool_or_nan(v) is True)]
    if not huge.empty:
        return float(huge["latency_ns"].iloc[0])
    rest = table["latency_ns"].to_numpy(dtype=float)
    weights = table["n"].to_numpy(dtype=float)
    return float(np.sum(rest * weights) / np.sum(weights))


@each_host
def page_walk(df: pd.DataFrame) -> dict:
    """The two idle figures and their difference, in ns: ``huge_page_ns`` (DRAM latency, buffers on 2 MiB
    pages), ``small_page_ns`` (4 KiB pages: each random load also misses the TLB and walks the page
    table), ``page_walk_ns`` = small - huge, ``page_walk_pct`` (of the huge-page figure), ``pages`` (how
    the huge-page buffer was paged, e.g. ``2M (THP, 100 %)``) and ``n_huge``, ``n_small``. NaN where a
    figure was not measured."""
    table = idle_table(df)
    out = {"huge_page_ns": math.nan, "small_page_ns": math.nan, "page_walk_ns": math.nan,
           "page_walk_pct": math.nan, "pages": "", "n_huge": 0, "n_small": 0}
    for _, r in table.iterrows():
        huge = _bool_or_nan(r["huge_pages"])
        if huge is True:
            out.update(huge_page_ns=float(r["latency_ns"]), pages=r["pages"], n_huge=int(r["n"]))
        elif huge is False:
            out.update(small_page_ns=float(r["latency_ns"]), n_small=int(r["n"]))
    if out["n_huge"] and out["n_small"]:
        out["page_walk_ns"] = out["small_page_ns"] - out["huge_page_ns"]
        out["page_walk_pct"] = 100.0 * out["page_walk_ns"] / out["huge_page_ns"]
    return out


@each_host
def page_walk_text(df: pd.DataFrame) -> str:
    """One markdown sentence on the idle latency with huge and 4 KiB pages (or why one is missing)."""
    w = page_walk(df)
    if w["n_huge"] and w["n_small"] and w["page_walk_ns"] <= 0:
        return (f"Idle latency {w['huge_page_ns']:.1f} ns with huge pages ({w['pages']}) and "
                f"{w['small_page_ns']:.1f} ns with 4 KiB pages: no page-walk cost shows here (the buffer's "
                "page tables fit the caches, or the noise is larger than the cost).")
    if w["n_huge"] and w["n_small"]:
        return (f"Idle latency **{w['huge_page_ns']:.1f} ns** with huge pages ({w['pages']}; the DRAM latency) "
                f"and {w['small_page_ns']:.1f} ns with 4 KiB pages: the difference, "
                f"**{w['page_walk_ns']:+.1f} ns ({w['page_walk_pct']:+.0f} %)**, is the page-walk cost. With 4 KiB "
                "pages a random chase over a buffer far larger than the TLB's reach misses the TLB on almost "
                "every load and walks the page tables first (on a VM with nested paging, two levels of "
                "them), so that figure is DRAM latency plus translation, not DRAM latency.")
    if w["n_small"]:
        return (f"Idle latency {w['small_page_ns']:.1f} ns with 4 KiB pages only (huge pages were not used): it "
                "includes the page-walk cost of TLB misses, so the DRAM latency is lower.")
    if w["n_huge"]:
        return f"Idle latency {w['huge_page_ns']:.1f} ns with huge pages ({w['pages']}); no 4 KiB-page figure."
    return "Idle latency was not measured."


@each_host
def peak_bandwidth_MBps(df: pd.DataFrame) -> pd.Series:
    """Peak injection bandwidth in MB/s per traffic label (index, in the tool's order): the mean over the
    rows of that traffic."""
    rows = measured(df).query("test == 'peak_injection_bandwidth'").dropna(subset=["bandwidth_MBps"])
    return rows.groupby("traffic", sort=False)["bandwidth_MBps"].mean().rename("peak_bandwidth_MBps")


# -------------------------------------------------------------------------------------------- curves


def loaded_curves(df: pd.DataFrame) -> pd.DataFrame:
    """Loaded-latency rows (not summarised) sorted by access size, traffic (in order of appearance) and
    inject delay."""
    rows = measured(df).query("test == 'loaded_latency'").dropna(subset=["latency_ns", "bandwidth_MBps"])
    order = {t: i for i, t in enumerate(pd.unique(rows["traffic"]))}
    key = rows["traffic"].map(order)
    return rows.assign(_order=key).sort_values(["access_bytes", "_order", "inject_delay"], kind="stable").drop(
        columns="_order")


def _part(name: str, v) -> str:
    """One part of a curve label; ``?`` for an unknown value."""
    known = _known(v)
    if name == "traffic":
        return str(v) if known else f"{UNKNOWN} traffic"
    if name == "access_bytes":
        return f"{int(v)} B" if known else f"{UNKNOWN} B"
    if name == "tool":
        return str(v) if known else f"{UNKNOWN} tool"
    if name == "load_threads":
        return (f"{int(v)} load thread" + ("" if int(v) == 1 else "s")) if known else f"{UNKNOWN} load threads"
    if name == "buffer_kib":
        if not known:
            return f"{UNKNOWN} buffer"
        kib = int(v)
        for unit, suffix in ((1024**2, "GiB"), (1024, "MiB")):
            if kib % unit == 0:
                return f"{kib // unit} {suffix} buffer"
        return f"{kib} KiB buffer"
    if name == "huge_pages":
        return ("2M pages" if v else "4K pages") if known else f"{UNKNOWN} pages"
    if name == "load_random":
        return ("random loads" if v else "sequential loads") if known else f"{UNKNOWN} load order"
    if name == "random":
        return ("random chase" if v else "sequential chase") if known else f"{UNKNOWN} chase"
    if name == "pacing":
        return f"{v} pacing" if known else ""
    if name == "origin":
        return str(v) if known else ""
    return str(v) if known else UNKNOWN


def curve_label(row, parts=LABEL_PARTS, short_origin: bool = False) -> str:
    """A curve's label from ``parts`` of a row (``?`` where unknown), e.g. ``read-only, 64 B, loadlat, 1 load
    thread, 1 GiB buffer, 2M pages, sequential loads, random chase``; ``short_origin`` keeps only the file
    name of the origin."""
    words = []
    for name in parts:
        v = row.get(name) if hasattr(row, "get") else row[name]
        if name == "origin" and short_origin and _known(v):
            v = Path(str(v).split(" (run ")[0]).name + (f" (run {str(v).split(' (run ')[1]}" if " (run " in str(v)
                                                         else "")
        text = _part(name, v)
        if text:
            words.append(text)
    return ", ".join(words)


def varying_parts(curves: pd.DataFrame, parts=LABEL_PARTS, exclude=()) -> list[str]:
    """The label parts whose value differs between the curves of ``curves`` (for short legend labels)."""
    out = []
    for name in parts:
        if name in exclude or name not in curves.columns:
            continue
        if curves[name].map(lambda v, n=name: _part(n, v)).nunique() > 1:
            out.append(name)
    return out


def legend_labels(curves: pd.DataFrame, panel_by=("host", "access_bytes")) -> dict:
    """{curve: short label} for figures with one panel per ``panel_by`` value: only the label parts that
    differ between curves (traffic at least), the panel's own parts left out, and the origin file name
    only when the curves of a panel cannot be told apart without it."""
    if curves.empty:
        return {}
    firsts = curves.drop_duplicates("curve").copy()
    panel_by = [c for c in panel_by if c in firsts.columns]
    panel = firsts[panel_by].map(lambda v: str(v) if _known(v) else UNKNOWN).agg("|".join, axis=1) \
        if panel_by else pd.Series("", index=firsts.index)
    parts = varying_parts(firsts, exclude=(*panel_by, "origin")) or ["traffic"]
    labels = firsts.apply(lambda r: curve_label(r, parts), axis=1)
    if labels.groupby(panel).transform("nunique").lt(panel.groupby(panel).transform("size")).any():
        labels = firsts.apply(lambda r: curve_label(r, [*parts, "origin"], short_origin=True), axis=1)
    return dict(zip(firsts["curve"], labels))


def _origin(row, with_run: bool) -> str:
    """Where an incompletely described row came from: its source file, and its run when the file held
    several runs."""
    src = str(row["source"]) if _known(row.get("source")) else UNKNOWN
    run = row.get("run")
    return f"{src} (run {int(run)})" if with_run and _known(run) else src


def curve_table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per loaded-latency curve x inject delay: the curve's identity (:data:`CURVE_KEY`, ``pages``,
    ``origin``, the ``curve`` label) and, over the repetitions of that point, ``n`` and the mean and 95 %
    interval of ``latency_ns`` and ``bandwidth_MBps``, and ``ci_method``: ``repetitions`` (the 95 %
    t-interval between runs) when n >= 2, ``batch-means`` (the one run's own interval from its sub-windows,
    :func:`sub_window_ci_columns`) when n = 1 and the run has one, else "" with NaN bounds. See the module
    docstring for when rows are repetitions. Sorted by host, access size, traffic (order of appearance),
    curve, delay. Columns: :data:`CURVE_COLUMNS`."""
    rows = with_settings(loaded_curves(df))
    if rows.empty:
        return pd.DataFrame(columns=CURVE_COLUMNS)
    for col in ("host", "source", "run", *OPTIONAL_KEY):
        if col not in rows.columns:
            rows[col] = np.nan
    complete = rows[CURVE_KEY].map(_known).all(axis=1)
    rows["origin"] = ""
    if (~complete).any():
        runs = rows.groupby(rows["source"].astype(str))["run"].transform("nunique")
        rows.loc[~complete, "origin"] = [_origin(r, runs[i] > 1) for i, r in rows.loc[~complete].iterrows()]
    rows["curve"] = rows.apply(lambda r: curve_label(r, short_origin=True), axis=1)
    rows["_host"] = rows["host"].map(lambda v: str(v) if _known(v) else UNKNOWN)
    traffic_order = {t: i for i, t in enumerate(pd.unique(rows["traffic"].map(lambda v: _part("traffic", v))))}
    out = []
    for (_, _, delay), g in rows.groupby(["_host", "curve", "inject_delay"], sort=False):
        first = g.iloc[0]
        lat, lat_lo, lat_hi, n, lat_how = _summary(g, "latency_ns")
        bw, bw_lo, bw_hi, _, bw_how = _summary(g, "bandwidth_MBps")
        pages = ", ".join(dict.fromkeys(str(p) for p in g["pages"] if _known(p))) or np.nan
        out.append({**{k: first[k] for k in CURVE_KEY}, "pages": pages, "pacing": first["pacing"],
                    "origin": first["origin"],
                    "curve": first["curve"], "inject_delay": delay, "n": n, "gate_failed": gate_failed(g),
                    "latency_ns": lat,
                    "latency_ns_ci_low": lat_lo, "latency_ns_ci_high": lat_hi, "bandwidth_MBps": bw,
                    "bandwidth_MBps_ci_low": bw_lo, "bandwidth_MBps_ci_high": bw_hi,
                    "ci_method": _method(lat_how, bw_how)})
    table = pd.DataFrame(out, columns=CURVE_COLUMNS)
    sort = pd.DataFrame({
        "h": table["host"].map(lambda v: str(v) if _known(v) else "~"),
        "a": table["access_bytes"].map(lambda v: float(v) if _known(v) else math.inf),
        "t": table["traffic"].map(lambda v: traffic_order[_part("traffic", v)]),
        "c": table["curve"], "d": table["inject_delay"].astype(float)})
    return table.loc[sort.sort_values(["h", "a", "t", "c", "d"], kind="stable").index].reset_index(drop=True)


def gate_failed(rows: pd.DataFrame) -> int:
    """How many of `rows` (runs of one point) failed memstor's quality gate (``gate`` = ``failed:...``; MLC
    rows and imported tables have none: 0)."""
    if "gate" not in rows.columns:
        return 0
    return int(rows["gate"].astype(str).str.startswith("failed").sum())


def pacing_table(curves: pd.DataFrame, shares=(0.5, 0.9)) -> pd.DataFrame:
    """Fixed against exponential (Poisson-like) pacing of the load threads: for every pair of curves that
    differ only in ``pacing`` (same device, tool, traffic, access size and settings), the latency of each at
    the same bandwidths — `shares` of the lower of the two curves' highest bandwidth — interpolated between
    measured points (never extrapolated). Columns: host, traffic, access_bytes, share_of_max_pct,
    bandwidth_MBps, latency_fixed_ns, latency_exp_ns, exp_vs_fixed_pct. Empty without such pairs."""
    cols = ["host", "traffic", "access_bytes", "share_of_max_pct", "bandwidth_MBps", "latency_fixed_ns",
            "latency_exp_ns", "exp_vs_fixed_pct"]
    if curves is None or curves.empty or "pacing" not in curves.columns:
        return pd.DataFrame(columns=cols)
    key = [k for k in CURVE_KEY if k in curves.columns]
    ident = curves[key].apply(lambda col: col.map(str)).agg("|".join, axis=1)  # NaN as "nan", not a float
    out = []
    for _, g in curves.groupby(ident, sort=False):
        by = {p: c.sort_values("bandwidth_MBps") for p, c in g.groupby(g["pacing"].astype(str))}
        if not {"fixed", "exp"} <= set(by):
            continue
        fixed, exp = by["fixed"], by["exp"]
        top = min(fixed["bandwidth_MBps"].max(), exp["bandwidth_MBps"].max())
        first = g.iloc[0]
        for share in shares:
            bw = share * top
            lat = [float(np.interp(bw, c["bandwidth_MBps"], c["latency_ns"]))
                   if c["bandwidth_MBps"].min() <= bw else np.nan for c in (fixed, exp)]
            out.append({"host": first["host"], "traffic": first["traffic"], "access_bytes": first["access_bytes"],
                        "share_of_max_pct": round(100 * share), "bandwidth_MBps": bw, "latency_fixed_ns": lat[0],
                        "latency_exp_ns": lat[1], "exp_vs_fixed_pct": 100 * (lat[1] / lat[0] - 1)
                        if lat[0] == lat[0] and lat[1] == lat[1] and lat[0] > 0 else np.nan})
    return pd.DataFrame(out, columns=cols)


def _curves(curves: pd.DataFrame):
    """(host key, curve label, that curve's rows sorted by inject delay) for each curve of a curve_table."""
    hosts = curves["host"].map(lambda v: str(v) if _known(v) else UNKNOWN)
    for (host, curve), g in curves.groupby([hosts, curves["curve"]], sort=False):
        yield host, curve, g.sort_values("inject_delay")


# ------------------------------------------------------------------------------------------ the fit


def fit_table(curves: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """The latency–throughput analysis of every curve of a :func:`curve_table` (mean points): saturation,
    the open-queue model below the plateau with 95 % intervals, identifiability, the held-out check and
    the family metrics — memstor.analysis.curves.memory_fit_table, the report's ``memory_fit`` table
    (columns :data:`FIT_COLUMNS`).

    Returns (table, fits); fits maps (host, curve) -> memstor.analysis.curves.CurveFit (host ``?`` when
    unknown)."""
    from memstor.analysis.curves import memory_fit_table

    return memory_fit_table(curves)


def _num(v, digits: int = 1) -> str:
    """A number with thousands separators and ``digits`` fixed decimals (``–`` when missing)."""
    if not _known(v) or (isinstance(v, float) and not math.isfinite(v)):
        return "–"
    return f"{float(v):,.{digits}f}"


def _ci(v, lo, hi, digits: int = 1) -> str:
    """``value [low, high]`` (95 % interval); the value alone when the interval is unknown."""
    if not _known(v) or (isinstance(v, float) and not math.isfinite(v)):
        return "–"
    if _known(lo) and _known(hi) and math.isfinite(float(lo)) and math.isfinite(float(hi)):
        return f"{_num(v, digits)} [{_num(lo, digits)}, {_num(hi, digits)}]"
    return _num(v, digits)


def saturation_text(r) -> str:
    """``plateau 135,394 MB/s (4 points)``, ``no plateau``, plus ``; hook`` (a memory_fit row)."""
    text = (f"plateau {_num(r['b_sat_MBps'], 0)} MB/s ({int(r['plateau_points'])} points)"
            if bool(r.get("saturated")) else "no plateau")
    return text + ("; hook" if bool(r.get("hook")) else "")


def peak_text(r, unit: str = "MBps") -> str:
    """The fitted peak with its 95 % interval, or ``not identifiable: <reason>`` (a fit-table row)."""
    if not bool(r.get("identifiable")):
        return f"not identifiable: {r.get('reason') or 'no model'}"
    return _ci(r[f"peak_{unit}"], r.get(f"peak_{unit}_ci_low"), r.get(f"peak_{unit}_ci_high"), 0)


def crossing_text(value, censored, level: str) -> str:
    """Bandwidth at a latency level: the number, ``not reached`` (censored) or ``–``."""
    if _known(value) and math.isfinite(float(value)):
        return _num(value, 0)
    return "not reached" if bool(censored) else "–"


def holdout_text(err, points) -> str:
    """Held-out error: ``12.3 % (3 points)``, ``> 1,000 %`` for a model that diverges, ``–``."""
    if not _known(err) or not math.isfinite(float(err)):
        return "–"
    pts = f" ({int(points)} point{'s' if int(points) != 1 else ''})"
    return ("> 1,000 %" if float(err) > 1000 else f"{float(err):.1f} %") + pts


def fit_summary(fits: pd.DataFrame) -> pd.DataFrame:
    """The :func:`fit_table` as a short table to read: curve, points, saturation (plateau bandwidth,
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
        if not _known(r.get("dram_read_share_est")):
            return "–"
        return f"{r['dram_read_share_est']:.2f} ({r['mix_read_share']:.2f})"

    rows = []
    for _, r in fits.iterrows():
        rows.append([
            r["curve"], r["points"], saturation_text(r),
            _ci(r["r0_ns"], r["r0_ns_ci_low"], r["r0_ns_ci_high"], 1), peak_text(r),
            _num(r["b_max_MBps"], 0),
            _num(r["r_at_b_max_over_r0"], 2),
            crossing_text(r["bw_at_1p25_r0_MBps"], r["bw_at_1p25_r0_censored"], "1.25"),
            crossing_text(r["bw_at_2_r0_MBps"], r["bw_at_2_r0_censored"], "2"),
            holdout_text(r["holdout_error_pct"], r["holdout_points"]), shares(r)])
    return pd.DataFrame(rows, columns=cols)


def latency_rise_table(df: pd.DataFrame, rise: float = 0.25) -> pd.DataFrame:
    """The model-free *latency +25 % point* of each curve (not a knee: the knee is :func:`fit_table`'s):
    the highest bandwidth reached while the mean latency stays within ``rise`` (0.25 = 25 %) of the
    unloaded latency (median latency of the points at <= 25 % of the curve's maximum bandwidth).

    Columns: host, curve, traffic, access_bytes, unloaded_latency_ns, max_bandwidth_MBps,
    latency_at_max_bandwidth_ns, rise_delay, rise_bandwidth_MBps, rise_latency_ns, rise_share_of_max
    (rise bandwidth / max bandwidth)."""
    out = []
    for _, curve, g in _curves(curve_table(df)):
        bw, lat = g["bandwidth_MBps"], g["latency_ns"]
        light = lat[bw <= 0.25 * bw.max()]
        unloaded = float(light.median()) if len(light) else float(lat.min())
        top = g.loc[bw.idxmax()]
        within = g[lat <= (1 + rise) * unloaded]
        hit = within.loc[within["bandwidth_MBps"].idxmax()] if len(within) else None
        out.append({
            "host": g["host"].iloc[0], "curve": curve, "traffic": g["traffic"].iloc[0],
            "access_bytes": g["access_bytes"].iloc[0], "unloaded_latency_ns": unloaded,
            "max_bandwidth_MBps": float(top["bandwidth_MBps"]),
            "latency_at_max_bandwidth_ns": float(top["latency_ns"]),
            "rise_delay": int(hit["inject_delay"]) if hit is not None else None,
            "rise_bandwidth_MBps": float(hit["bandwidth_MBps"]) if hit is not None else None,
            "rise_latency_ns": float(hit["latency_ns"]) if hit is not None else None,
            "rise_share_of_max": float(hit["bandwidth_MBps"] / top["bandwidth_MBps"]) if hit is not None else None,
        })
    return pd.DataFrame(out)


# ------------------------------------------------------------------------------------------- checks


@each_host
def check_table(df: pd.DataFrame, bw_tol: float = 0.05, lat_tol: float = 0.15) -> pd.DataFrame:
    """Acceptance checks per curve (issue 4, acceptance 3), on the mean points of :func:`curve_table`.

    - ``bw_non_increasing``: bandwidth never rises by more than ``bw_tol`` (5%) from one inject delay to
      the next larger one (``max_bw_increase_pct`` is the largest step-to-step change in %; negative
      when bandwidth falls at every step).
    - ``latency_near_idle``: latency at the largest delay is within ``lat_tol`` (15%) of the idle latency
      measured with the same pages as the curve (huge or 4 KiB; any idle figure when the curve's pages are
      unknown) (``latency_vs_idle_pct`` = (latency / idle - 1) x 100; False when idle latency is missing).
    """
    idle = idle_table(df)
    by_pages = {_bool_or_nan(r["huge_pages"]): float(r["latency_ns"]) for _, r in idle.iterrows()
                if _known(r["huge_pages"])}
    any_idle = idle_latency_ns(df)
    out = []
    for _, curve, g in _curves(curve_table(df)):
        bw = g["bandwidth_MBps"].to_numpy(dtype=float)
        rises = [(b / a - 1) * 100 for a, b in zip(bw[:-1], bw[1:]) if a > 0]
        worst = max(rises) if rises else 0.0
        last = g.iloc[-1]
        huge = _bool_or_nan(last["huge_pages"])
        ref = by_pages.get(huge, any_idle) if _known(huge) else any_idle
        vs_idle = (float(last["latency_ns"]) / ref - 1) * 100 if ref else None
        near = vs_idle is not None and abs(vs_idle) <= lat_tol * 100
        out.append({
            "host": last["host"],
            "curve": curve,
            "traffic": last["traffic"],
            "access_bytes": last["access_bytes"],
            "delays": len(g),
            "max_bw_increase_pct": round(worst, 2),
            "bw_non_increasing": worst <= bw_tol * 100,
            "idle_latency_ns": ref,
            "largest_delay": int(last["inject_delay"]),
            "latency_at_largest_delay_ns": float(last["latency_ns"]),
            "latency_vs_idle_pct": round(vs_idle, 2) if vs_idle is not None else None,
            "latency_near_idle": near,
            "ok": bool(worst <= bw_tol * 100 and near),
        })
    return pd.DataFrame(out)
