"""Memory loaded-latency curves as tables (pure): each row's settings, a point's own interval from its
sub-windows, curve identities and labels, and the curve table (one row per curve x inject delay with n,
mean and 95 % interval).

**A curve's identity** is everything that changes it (:data:`CURVE_KEY`): host, tool, traffic, access size,
load thread count, buffer size, random vs sequential latency chase and loads, huge pages. Values a table
does not give stay unknown (NaN, shown as ``?``), never guessed: memstor's own tables carry them
(:data:`memstor.experiments.mlc_loaded_latency.SETTING_COLUMNS`); for imported MLC/loadlat files they are
read from the row's own text where it says them (:func:`with_settings`). Rows with the same *complete*
identity are repetitions: one curve, each point summarised by n, mean and the 95 % Student-t interval
(:func:`memstor.analysis.summary.ci95`). When any part of the identity is unknown, nobody can tell that two
files measured the same thing, so each source file (and run within it) stays its own curve (``origin``).

Units: latency in ns, bandwidth in MB/s (10^6 bytes/s), buffer in KiB, access size in bytes, inject delay
in cycles of the tool's delay loop.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from memstor.analysis.summary import ci95
from memstor.core.batchmeans import (
    METHOD,
    MIN_BATCHES,
    batch_means_ci,
    ci_notes,
    correlated_metrics,
    independent,
)
from memstor.core.schema import missing

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
UNKNOWN = "?"


def measured(df: pd.DataFrame) -> pd.DataFrame:
    """Rows with a measurement (failed points dropped)."""
    return df[df["status"] != "failed"] if "status" in df else df


# ----------------------------------------------------------------------------------------- settings


def bool_or_nan(v):
    """True/False from a CSV cell (True, 'True', 'true', 1...), NaN when empty or unreadable."""
    if missing(v):
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
    if missing(detail):
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
    out: dict[str, Any] = dict.fromkeys(SETTINGS, np.nan)
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
        if tool == "loadlat" or "random access" in str(detail if not missing(detail) else ""):
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
        out[col] = out[col].map(bool_or_nan).astype(object)
    for col in ("load_threads", "buffer_kib"):
        out[col] = pd.to_numeric(out[col], errors="coerce").astype(float)
    out["pages"] = out["pages"].astype(object)
    gaps = out[[*SETTINGS, "pages"]].isna().any(axis=1)
    for i in out.index[gaps]:
        derived = _row_settings(out.loc[i])
        for col, value in derived.items():
            if missing(out.at[i, col]) and not missing(value):
                out.at[i, col] = value
    return out


# ------------------------------------------------------------------------------- a point's own interval


def sub_window_ci_columns(series: dict | None, tool=None, confidence: float = 0.95) -> dict:
    """The :data:`POINT_CI_COLUMNS` of one memory point from its sub-windows (loadlat ``--windows``; the
    ``series`` of memstor.parse.loadlat_json.point_figures: lists ``window_s`` (s), ``latency_ns``,
    ``bandwidth_MBps``, a list None when the point does not measure that figure).

    The 95 % batch-means interval of the point's mean (memstor.core.batchmeans.batch_means_ci; at
    least 10 batches, else empty) of latency (ns) and bandwidth (MB/s): ``latency_ns_ci_low/high``,
    ``bandwidth_MBps_ci_low/high``; ``ci_method`` ``batch-means`` when a bound is a number, else "";
    ``ci_note`` says why a bound is empty or what to know about it ("no sub-windows (MLC)", "no
    sub-windows (loadlat before v0.3)", "too few batches (5 sub-windows < 10)", "correlated (lag-1 ...)"
    (no bound for that metric: 10 sub-windows allow no wider batches, memstor.core.batchmeans.independent),
    "lost sub-window: latency" (a thread descheduled across a whole sub-window: no interval for it)).

    Choices (loadlat's sub-windows, lib/loadlat/README.md):
    - No ramp (``ramp_intervals=0``): loadlat runs a warm-up of min(0.5 s, max(0.05 s, t/4)) with the
      same loops before it starts the measured window and its first sub-window, so the first sub-window
      is not a start-up transient (checked here: over 18 points of 10 sub-windows the first one's
      deviation from the others averaged -0.05 (latency) and +0.07 (bandwidth) of their standard
      deviation).
    - Latency weighted by each sub-window's loads (window_s / latency_ns: loadlat's JSON does not record the
      loads themselves): the point's latency is window time / loads, the load-weighted mean of the sub-windows'
      latencies, so its interval is that estimator's (R-loop 7.1: the unweighted mean of loop's lightest 1:1
      point, 551.3 ns, centred '401 [311, 791]'; the load-weighted one is the ratio, ~401 ns). Without lengths:
      unweighted.
    - Bandwidth unweighted when the sub-windows are of equal length (within :data:`EQUAL_WINDOWS_TOL`,
      the usual case: loadlat splits the window evenly), else weighted by their lengths ``window_s``
      (the point's bandwidth is bytes / time).
    """
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
        weights = (secs if not equal else None) if metric == "bandwidth_MBps" and good else \
            [t / float(v) for t, v in zip(secs, values)] if good and all(float(v) > 0 for v in values) else None
        cis[metric] = r = independent(batch_means_ci(values, weights, min_batches=MIN_BATCHES, ramp_intervals=0,
                                                     confidence=confidence))
        cols[f"{metric}_ci_low"], cols[f"{metric}_ci_high"] = r.ci_low, r.ci_high
    if any(r.finite for r in cis.values()):
        cols["ci_method"] = METHOD
    notes = ci_notes({m.split("_")[0]: r for m, r in cis.items()}, MIN_BATCHES, unit="sub-windows")
    if lost:
        notes.append(f"lost sub-window: {', '.join(lost)}")
    cols["ci_note"] = "; ".join(notes)
    return cols


#: A batch-means interval (symmetric about its estimate) whose centre lies further from the value than this share of
#: its half-width is another estimator's, not the value's (R-loop 7.1: '401 [311, 791]' centred on 551 ns).
OFF_CENTRE = 0.1


def _own_interval(rows: pd.DataFrame, metric: str) -> tuple[float, float]:
    """The single row's own batch-means interval of ``metric`` (its sub-windows), else (NaN, NaN); also (NaN, NaN)
    where it is not centred on the row's value (:data:`OFF_CENTRE`: a table written before the latency interval
    was load-weighted, sub_window_ci_columns)."""
    one = rows.iloc[0]
    if str(one.get("ci_method")) != "batch-means" or metric.split("_")[0] in correlated_metrics(one.get("ci_note")):
        return math.nan, math.nan  # none, or from correlated sub-windows (a table written before the rule)
    lo, hi = pd.to_numeric(pd.Series([one.get(f"{metric}_ci_low"), one.get(f"{metric}_ci_high")]), errors="coerce")
    value = pd.to_numeric(pd.Series([one.get(metric)]), errors="coerce").iloc[0]
    if abs((lo + hi) / 2 - value) > OFF_CENTRE * (hi - lo) / 2:
        return math.nan, math.nan
    return float(lo), float(hi)


def point_summary(rows: pd.DataFrame, metric: str) -> tuple[float, float, float, int, str]:
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
    known = not missing(v)
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
        if name == "origin" and short_origin and not missing(v):
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
    panel = firsts[panel_by].map(lambda v: str(v) if not missing(v) else UNKNOWN).agg("|".join, axis=1) \
        if panel_by else pd.Series("", index=firsts.index)
    parts = varying_parts(firsts, exclude=(*panel_by, "origin")) or ["traffic"]
    labels = firsts.apply(lambda r: curve_label(r, parts), axis=1)
    if labels.groupby(panel).transform("nunique").lt(panel.groupby(panel).transform("size")).any():
        labels = firsts.apply(lambda r: curve_label(r, [*parts, "origin"], short_origin=True), axis=1)
    return dict(zip(firsts["curve"], labels))


def _origin(row, with_run: bool) -> str:
    """Where an incompletely described row came from: its source file, and its run when the file held
    several runs."""
    src = str(row["source"]) if not missing(row.get("source")) else UNKNOWN
    run = row.get("run")
    return f"{src} (run {int(run)})" if with_run and not missing(run) else src


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
    complete = rows[CURVE_KEY].map(lambda v: not missing(v)).all(axis=1)
    rows["origin"] = ""
    if (~complete).any():
        runs = rows.groupby(rows["source"].astype(str))["run"].transform("nunique")
        rows.loc[~complete, "origin"] = [_origin(r, runs[i] > 1) for i, r in rows.loc[~complete].iterrows()]
    rows["curve"] = rows.apply(lambda r: curve_label(r, short_origin=True), axis=1)
    rows["_host"] = rows["host"].map(lambda v: str(v) if not missing(v) else UNKNOWN)
    traffic_order = {t: i for i, t in enumerate(pd.unique(rows["traffic"].map(lambda v: _part("traffic", v))))}
    out = []
    for (_, _, delay), g in rows.groupby(["_host", "curve", "inject_delay"], sort=False):
        first = g.iloc[0]
        lat, lat_lo, lat_hi, n, lat_how = point_summary(g, "latency_ns")
        bw, bw_lo, bw_hi, _, bw_how = point_summary(g, "bandwidth_MBps")
        pages = ", ".join(dict.fromkeys(str(p) for p in g["pages"] if not missing(p))) or np.nan
        out.append({**{k: first[k] for k in CURVE_KEY}, "pages": pages, "pacing": first["pacing"],
                    "origin": first["origin"],
                    "curve": first["curve"], "inject_delay": delay, "n": n, "gate_failed": gate_failed(g),
                    "latency_ns": lat,
                    "latency_ns_ci_low": lat_lo, "latency_ns_ci_high": lat_hi, "bandwidth_MBps": bw,
                    "bandwidth_MBps_ci_low": bw_lo, "bandwidth_MBps_ci_high": bw_hi,
                    "ci_method": _method(lat_how, bw_how)})
    table = pd.DataFrame(out, columns=CURVE_COLUMNS)
    sort = pd.DataFrame({
        "h": table["host"].map(lambda v: str(v) if not missing(v) else "~"),
        "a": table["access_bytes"].map(lambda v: float(v) if not missing(v) else math.inf),
        "t": table["traffic"].map(lambda v: traffic_order[_part("traffic", v)]),
        "c": table["curve"], "d": table["inject_delay"].astype(float)})
    return table.loc[sort.sort_values(["h", "a", "t", "c", "d"], kind="stable").index].reset_index(drop=True)


def gate_failed(rows: pd.DataFrame) -> int:
    """How many of `rows` (runs of one point) failed memstor's quality gate (``gate`` = ``failed:...``; MLC
    rows and imported tables have none: 0)."""
    if "gate" not in rows.columns:
        return 0
    return int(rows["gate"].astype(str).str.startswith("failed").sum())



def each_curve(curves: pd.DataFrame):
    """(host key, curve label, that curve's rows sorted by inject delay) for each curve of a curve_table."""
    hosts = curves["host"].map(lambda v: str(v) if not missing(v) else UNKNOWN)
    for (host, curve), g in curves.groupby([hosts, curves["curve"]], sort=False):
        yield host, curve, g.sort_values("inject_delay")


def all_failed_words(curves: pd.DataFrame | None, panel: tuple[str, float]) -> str:
    """'every point drawn failed memstor's quality gate: no finding is read from them' where every point of the
    (host, access bytes; -1 unknown) panel of a curve table failed its gate (R-def p8: a figure of 18 points, all
    failed, and a caption that said neither), else ''."""
    if curves is None or curves.empty or "gate_failed" not in curves.columns:
        return ""
    key = [(("?" if missing(h) else str(h)), (-1.0 if missing(a) else float(a)))
           for h, a in zip(curves["host"], curves["access_bytes"])]
    p = curves[[k == panel for k in key]]
    bad = pd.to_numeric(p["gate_failed"], errors="coerce").fillna(0) > 0
    return "every point drawn failed memstor's quality gate: no finding is read from them" if len(p) and bad.all() \
        else ""
