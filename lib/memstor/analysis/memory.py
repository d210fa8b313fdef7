"""Memory analysis (pure): idle latency (huge pages, 4 KiB pages and the page-walk cost between them), peak
bandwidth, the other sections of MLC's default run, loaded-latency curves and their fit, checks.

The curve tables (a curve's identity, settings, a point's own interval, labels, :func:`curve_table`) are
memstor.analysis.memory_curves's, re-exported here; ``memory_fit`` is memstor.analysis.memory_fit's
(:func:`fit_table`). Display text for these tables is memstor.report.memory_text's.

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
from typing import Any

import numpy as np
import pandas as pd

from memstor.analysis.hosts import each_host
from memstor.analysis.memory_curves import (
    CURVE_COLUMNS,
    CURVE_KEY,
    LABEL_PARTS,
    OPTIONAL_KEY,
    POINT_CI_COLUMNS,
    SETTINGS,
    UNKNOWN,
    bool_or_nan,
    curve_label,
    curve_table,
    each_curve,
    gate_failed,
    legend_labels,
    loaded_curves,
    measured,
    point_summary,
    sub_window_ci_columns,
    varying_parts,
    with_settings,
)
from memstor.analysis.memory_fit import MEMORY_FIT_COLUMNS as FIT_COLUMNS
from memstor.analysis.memory_fit import memory_fit_table as fit_table
from memstor.analysis.summary import ci95
from memstor.core.schema import missing

__all__ = [
    "CURVE_COLUMNS", "CURVE_KEY", "FIT_COLUMNS", "KNEE_DEFINITION", "LABEL_PARTS", "OPTIONAL_KEY",
    "POINT_CI_COLUMNS", "SECTIONS_COLUMNS", "SECTION_VALUES", "SETTINGS", "UNKNOWN", "c2c_kind", "check_table",
    "ci95", "curve_label", "curve_table", "fit_table", "gate_failed", "idle_latency_ns", "idle_table",
    "latency_rise_table", "legend_labels", "loaded_curves", "measured", "pacing_table", "page_walk",
    "peak_bandwidth_MBps", "sections_table", "sub_window_ci_columns", "varying_parts", "with_settings",
]

#: What the knee is, in words (tables, figures and text use this name).
KNEE_DEFINITION = ("knee: the bandwidth at which the measured latency reaches 2·R0 (R0 of the open-queue fit "
                   "below the plateau; interpolated between measured points, censored when not reached)")


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
        sel = rows[rows["huge_pages"].map(lambda v, h=huge: v is h if h is not None else missing(v))]
        if sel.empty:
            continue
        mean, lo, hi, n, method = point_summary(sel, "latency_ns")
        pages = ", ".join(dict.fromkeys(str(p) for p in sel["pages"] if not missing(p))) or UNKNOWN
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
    return str(row["traffic"]) if not missing(row.get("traffic")) else UNKNOWN


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
    rows["_config"] = [str(c) if not missing(c) else f"{s}#{r}" for c, s, r in zip(conf, rows["source"], run)]
    keys = ["host", "tool", "test", "what", "src_node", "dst_node", "_config"]
    out = []
    for key, g in rows.groupby([rows[k].map(lambda v: v if not missing(v) else UNKNOWN) for k in keys], sort=False):
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
    huge = table[table["huge_pages"].map(lambda v: bool_or_nan(v) is True)]
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
    figure was not measured. ``gate_failed``: the runs' gate details of a figure whose run failed its gate
    ({'huge' | 'small': detail}; a difference from such a run is not a page-walk cost)."""
    table = idle_table(df)
    out: dict[str, Any] = {"huge_page_ns": math.nan, "small_page_ns": math.nan, "page_walk_ns": math.nan,
                           "page_walk_pct": math.nan, "pages": "", "n_huge": 0, "n_small": 0,
                           "gate_failed": _idle_gates_failed(df)}
    for _, r in table.iterrows():
        huge = bool_or_nan(r["huge_pages"])
        if huge is True:
            out.update(huge_page_ns=float(r["latency_ns"]), pages=r["pages"], n_huge=int(r["n"]))
        elif huge is False:
            out.update(small_page_ns=float(r["latency_ns"]), n_small=int(r["n"]))
    if out["n_huge"] and out["n_small"]:
        out["page_walk_ns"] = out["small_page_ns"] - out["huge_page_ns"]
        out["page_walk_pct"] = 100.0 * out["page_walk_ns"] / out["huge_page_ns"]
    return out


def _idle_gates_failed(df: pd.DataFrame) -> dict:
    """{'huge' | 'small': gate detail} of the idle-latency runs whose gate failed (columns gate, gate_detail)."""
    if "gate" not in df.columns or "test" not in df.columns:
        return {}
    rows = df[(df["test"] == "idle_latency") & df["gate"].astype(str).str.startswith("failed")]
    out: dict = {}
    for _, r in rows.iterrows():
        huge = bool_or_nan(r.get("huge_pages"))
        if huge is True or huge is False:
            out["huge" if huge else "small"] = str(r.get("gate_detail") or r["gate"])
    return out


@each_host
def peak_bandwidth_MBps(df: pd.DataFrame) -> pd.Series:
    """Peak injection bandwidth in MB/s per traffic label (index, in the tool's order): the mean over the
    rows of that traffic."""
    rows = measured(df).query("test == 'peak_injection_bandwidth'").dropna(subset=["bandwidth_MBps"])
    return rows.groupby("traffic", sort=False)["bandwidth_MBps"].mean().rename("peak_bandwidth_MBps")



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


def latency_rise_table(df: pd.DataFrame, rise: float = 0.25) -> pd.DataFrame:
    """The model-free *latency +25 % point* of each curve (not a knee: the knee is :func:`fit_table`'s):
    the highest bandwidth reached while the mean latency stays within ``rise`` (0.25 = 25 %) of the
    unloaded latency (median latency of the points at <= 25 % of the curve's maximum bandwidth).

    Columns: host, curve, traffic, access_bytes, unloaded_latency_ns, max_bandwidth_MBps,
    latency_at_max_bandwidth_ns, rise_delay, rise_bandwidth_MBps, rise_latency_ns, rise_share_of_max
    (rise bandwidth / max bandwidth)."""
    out = []
    for _, curve, g in each_curve(curve_table(df)):
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
    by_pages = {bool_or_nan(r["huge_pages"]): float(r["latency_ns"]) for _, r in idle.iterrows()
                if not missing(r["huge_pages"])}
    any_idle = idle_latency_ns(df)
    out = []
    for _, curve, g in each_curve(curve_table(df)):
        bw = g["bandwidth_MBps"].to_numpy(dtype=float)
        rises = [(b / a - 1) * 100 for a, b in zip(bw[:-1], bw[1:]) if a > 0]
        worst = max(rises) if rises else 0.0
        last = g.iloc[-1]
        huge = bool_or_nan(last["huge_pages"])
        ref = by_pages.get(huge, any_idle) if not missing(huge) else any_idle
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


def below_l1(sections: pd.DataFrame | None, levels: pd.DataFrame | None) -> pd.Series:
    """Per row of :func:`sections_table`: why a cache-to-cache latency is not one ('' where it stands): below the
    host's L1 hit latency (hierarchy.cache_levels' L1 row, ns), the reader's load found the line in a cache it
    shares with the writer, so no transfer between two cores' caches was timed (eleventh read S14-bare 7: 0.6-0.7 ns
    on a 2-vCPU guest beside its L1's 1.51 ns)."""
    if sections is None or sections.empty:
        return pd.Series([], dtype=object)
    l1: dict[str, float] = {}
    if levels is not None and len(levels) and {"host", "level", "latency_ns"} <= set(levels.columns):
        rows = levels[levels["level"].astype(str) == "L1"]
        l1 = {str(h): float(v) for h, v in zip(rows["host"], pd.to_numeric(rows["latency_ns"], errors="coerce"))
              if v == v}
    value = pd.to_numeric(sections["value"], errors="coerce")
    return pd.Series([
        f"below this host's L1 hit latency ({l1[str(h)]:.2f} ns): no transfer between two cores' caches was timed (the "
        "two CPUs may share their caches)" if sec == "c2c_latency" and str(h) in l1 and v < l1[str(h)] else ""
        for h, sec, v in zip(sections["host"], sections["section"], value)], index=sections.index, dtype=object)
