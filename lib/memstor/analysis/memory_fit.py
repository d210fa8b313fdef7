"""The ``memory_fit`` table (pure): the latency–throughput analysis (memstor.analysis.curves.analyse) of
every memory loaded-latency curve of a memstor.analysis.memory_curves.curve_table, with the memory units in
the column names (ns, MB/s = 10^6 B/s, bytes), the requests in flight by Little's law, the write penalty
and the DRAM read share of each traffic.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from memstor.analysis.curves import FIT, analyse, littles_outstanding, metric_row
from memstor.analysis.memory_curves import each_curve
from memstor.core.schema import missing, traffic_fraction

#: Traffic labels (memstor.core.schema.TRAFFIC_CODES) whose stores are non-temporal (MLC and loadlat -W6..-W10:
#: no read-for-ownership); the other mixes with writes use plain stores.
NON_TEMPORAL = {"write-only-nt", "2:1-nt", "1:1-nt", "3:1-nt", "stream-triad"}
#: Settings that, beside host, tool and access size, tell memory curves apart in memory_fit.
MEMORY_SETTINGS = ["load_threads", "buffer_kib", "random", "load_random", "huge_pages", "pages", "pacing"]
#: Columns of :func:`memory_fit_table` (``report/tables/memory_fit.csv``).
MEMORY_FIT_COLUMNS = [
    "host", "curve", "tool", "traffic", "access_bytes", *MEMORY_SETTINGS, "origin", "n_min", "gate_failed_points",
    "points", "saturated", "b_sat_MBps", "plateau_points", "hook", "b_max_MBps", "b_max_gate_failed",
    "r_at_b_max_ns", "outstanding_at_b_max", "fit_points", "fit_b_max_MBps",
    "r0_ns", "r0_ns_ci_low", "r0_ns_ci_high", "a_ns", "a_ns_ci_low", "a_ns_ci_high",
    "peak_MBps", "peak_MBps_ci_low", "peak_MBps_ci_high", "identifiable", "reason", "fit_rms_pct",
    "holdout_error_pct", "holdout_points", "holdout_note", "r_at_b_max_over_r0",
    "bw_at_1p25_r0_MBps", "bw_at_1p25_r0_censored", "bw_at_2_r0_MBps", "bw_at_2_r0_censored",
    "write_penalty_pct", "mix_read_share", "dram_read_share_est", "stores", "note",
]


def memory_outstanding(bw_MBps, latency_ns, access_bytes) -> np.ndarray:
    """Requests in flight by Little's law for a memory point: bandwidth (MB/s = 10^6 B/s) / access size
    (bytes) requests per second × latency (ns) — e.g. 135,500 MB/s × 130 ns / 64 B = 275."""
    bw = np.asarray(bw_MBps, dtype=float)
    lat = np.asarray(latency_ns, dtype=float)
    acc = np.asarray(access_bytes, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return littles_outstanding(bw * 1e6 / acc, lat * 1e-9)


def traffic_shares(traffic, read_fraction=None) -> tuple[float, float, str]:
    """(MLC's instruction mix read share, estimated DRAM read share, stores) of a traffic label.

    The mix read share is the share of the load threads' accesses that are reads (memstor.core.schema
    traffic_fraction: MLC's -W mixes and loadlat's read shares; the row's own read_fraction when given). With plain stores every written line is
    first read for ownership and later written back, so DRAM sees reads = f + (1 − f) and writes =
    1 − f: read share 1 / (2 − f). Non-temporal stores write without that read: read share f.
    NaN/'' when the traffic is unknown."""
    if missing(traffic):
        return math.nan, math.nan, ""
    label = str(traffic)
    known = traffic_fraction(label)
    f = float(read_fraction) if not missing(read_fraction) else known if known is not None else math.nan
    if not math.isfinite(f):
        return math.nan, math.nan, ""
    if f >= 1.0:
        return 1.0, 1.0, "none"
    if label in NON_TEMPORAL or label.endswith("-nt"):  # also loadlat's read shares below 50 % (``2:3-nt``)
        return f, f, "non-temporal"
    return f, 1.0 / (2.0 - f), "plain (read for ownership)"


def memory_fit_table(curves: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """``memory_fit``: the analysis (memstor.analysis.curves.analyse) of every curve of a
    memstor.analysis.memory_curves.curve_table (mean points; lower inject delay = heavier load). One row per
    device × curve (:data:`MEMORY_FIT_COLUMNS`): the identity (host, curve label, tool, traffic,
    access_bytes, settings, origin when the identity is incomplete), n_min (fewest repetitions of a
    point), saturation (saturated, b_sat_MBps, plateau_points, hook, b_max_MBps, r_at_b_max_ns and the
    outstanding requests there by Little's law; b_max_gate_failed: the run B_max is read from failed memstor's
    quality gate, so B_max is no finding), the model below the plateau (fit_points, fit_b_max_MBps,
    R0, a, peak with 95 % intervals, identifiable, reason, fit_rms_pct), the held-out check, the family
    metrics (R(B_max)/R0, bandwidth at 1.25·R0 and 2·R0 with censoring flags), the write penalty
    (100 · (1 − B_max / B_max of the read-only curve with the same host, tool, access size and known
    settings); NaN when there is none), the instruction-mix and estimated DRAM read shares
    (:func:`traffic_shares`) and note. Units: ns, MB/s (10^6 B/s), bytes.

    Returns (table, fits): fits maps (host, curve label) -> memstor.analysis.curves.CurveFit (host ``?`` when
    unknown)."""
    if curves is None or curves.empty:
        return pd.DataFrame(columns=MEMORY_FIT_COLUMNS), {}
    rows, fits = [], {}
    for host, curve, g in each_curve(curves):
        first = g.iloc[0]
        cf = analyse(g["inject_delay"], g["bandwidth_MBps"], g["latency_ns"], heavier_first=True)
        fits[(host, curve)] = cf
        acc = first.get("access_bytes")
        metrics = metric_row(cf, "b", "MBps", "ns")
        metrics["bw_at_1p25_r0_MBps"] = metrics.pop("b_at_1p25_r0_MBps")
        metrics["bw_at_1p25_r0_censored"] = metrics.pop("b_at_1p25_r0_censored")
        metrics["bw_at_2_r0_MBps"] = metrics.pop("b_at_2_r0_MBps")
        metrics["bw_at_2_r0_censored"] = metrics.pop("b_at_2_r0_censored")
        mix, dram, stores = traffic_shares(first.get("traffic"), first.get("read_fraction"))
        rows.append({
            "host": first.get("host"), "curve": curve, "tool": first.get("tool"), "traffic": first.get("traffic"),
            "access_bytes": acc, **{k: first.get(k, np.nan) for k in MEMORY_SETTINGS},
            "origin": first.get("origin", ""), "n_min": int(g["n"].min()) if "n" in g else 1,
            "gate_failed_points": int((pd.to_numeric(g["gate_failed"], errors="coerce") > 0).sum())
            if "gate_failed" in g else 0,
            **metrics, "b_max_gate_failed": b_max_gate_failed(g),
            "outstanding_at_b_max": float(memory_outstanding(cf.sat.x_max, cf.sat.r_at_x_max, acc))
            if not missing(acc) else math.nan,
            "mix_read_share": mix, "dram_read_share_est": dram, "stores": stores,
        })
    table = pd.DataFrame(rows)
    table["write_penalty_pct"] = _write_penalty(table)
    table = table.reindex(columns=MEMORY_FIT_COLUMNS)
    for col in ("access_bytes", "load_threads", "buffer_kib", "points", "n_min", "gate_failed_points",
                "plateau_points", "fit_points",
                "holdout_points"):
        table[col] = pd.to_numeric(table[col], errors="coerce").astype("Int64")
    return table, fits


def b_max_gate_failed(g: pd.DataFrame) -> bool:
    """Whether a run of the point with the highest bandwidth (B_max, MB/s) of one curve's points failed memstor's
    quality gate (``gate_failed`` > 0; a table without the column: False)."""
    if "gate_failed" not in g.columns or g["bandwidth_MBps"].isna().all():
        return False
    return bool(pd.to_numeric(pd.Series([g.loc[g["bandwidth_MBps"].idxmax(), "gate_failed"]]),
                              errors="coerce").fillna(0).iloc[0] > 0)


def _write_penalty(table: pd.DataFrame) -> pd.Series:
    """100 · (1 − B_max / B_max of the read-only curve with the same host, tool, access size and settings),
    only between curves whose identity is fully known (imported files with unknown settings are never
    compared: they may have been measured differently); NaN otherwise (and for read-only curves: 0)."""
    key = ["host", "tool", "access_bytes", *[c for c in MEMORY_SETTINGS if c != "pacing"]]

    def ident(r) -> tuple | None:
        if not missing(r.get("origin")) and str(r.get("origin")):
            return None
        vals = [r.get(k) for k in key]
        if any(missing(v) for v in vals):
            return None
        pacing = r.get("pacing")
        return (*[str(v) for v in vals], str(pacing) if not missing(pacing) else "")

    read = {}
    for _, r in table.iterrows():
        k = ident(r)
        if k is not None and r.get("traffic") == "read-only":
            read[k] = r["b_max_MBps"]
    out = []
    for _, r in table.iterrows():
        k = ident(r)
        ref = read.get(k) if k is not None else None
        out.append(100.0 * (1.0 - r["b_max_MBps"] / ref) if ref else math.nan)
    return pd.Series(out, index=table.index, dtype=float)


def annotate_points(curves: pd.DataFrame, fits: dict) -> pd.DataFrame:
    """``curves`` (memory.curve_table) with each point's ``role`` (fit / plateau / hook) and its
    ``outstanding`` requests by Little's law (bandwidth / access size × latency)."""
    if curves is None:
        return curves
    if curves.empty:
        return curves.assign(role=pd.Series(dtype=object), outstanding=pd.Series(dtype=float))
    out = curves.copy()
    hosts = out["host"].map(lambda v: str(v) if not missing(v) else "?")
    role = pd.Series(FIT, index=out.index, dtype=object)
    for (host, curve), cf in fits.items():
        sel = out[(hosts == host) & (out["curve"] == curve)]
        by_delay = dict(zip(cf.load.tolist(), cf.role.tolist()))
        role.loc[sel.index] = sel["inject_delay"].astype(float).map(by_delay).fillna(FIT)
    out["role"] = role
    out["outstanding"] = memory_outstanding(out["bandwidth_MBps"], out["latency_ns"], out["access_bytes"])
    return out
