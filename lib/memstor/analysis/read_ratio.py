"""The read-ratio family (pure): memory loaded-latency curves by the share of their DRAM traffic that is reads,
as Mess (Esmaili-Dokht et al., MICRO 2024) publishes curve families, and the published platforms nearest to
each host (memstor.analysis.reference_curves).

Every curve comes from the one curve analysis (memstor.analysis.memory_fit, itself memstor.analysis.curves):
this module only selects, renames and orders. A curve's DRAM read share is estimated from its request mix
(memstor.analysis.memory_fit.traffic_shares: a plain store adds its read for ownership, a non-temporal one does
not) — by construction, valid while the buffers are far larger than the caches; memstor reads no memory
controller counters. Units: % (shares), MB/s = 10^6 B/s, ns.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from memstor.analysis.memory_curves import UNKNOWN
from memstor.analysis.memory_fit import MEMORY_SETTINGS
from memstor.analysis.reference_curves import CLOSEST_COLUMNS, closest_platforms
from memstor.core.schema import missing

#: What tells read-ratio families apart (beside the read share): a family is one host, tool, access size and
#: settings; curves that differ in anything else are never drawn or compared as one family.
FAMILY_KEY = ["host", "tool", "access_bytes", *MEMORY_SETTINGS]
#: Columns of :func:`read_ratio_table` (``report/tables/memory_read_ratio_fit.csv``).
READ_RATIO_COLUMNS = [
    "host", "family", "family_size", "tool", "access_bytes", *MEMORY_SETTINGS, "curve", "traffic", "stores",
    "mix_read_pct", "dram_read_pct_est", "n_min", "points", "saturated", "b_max_MBps", "b_max_gate_failed",
    "r_at_b_max_ns", "r0_ns", "r0_ns_ci_low", "r0_ns_ci_high", "peak_MBps", "peak_MBps_ci_low", "peak_MBps_ci_high",
    "identifiable", "reason", "bw_at_2_r0_MBps", "bw_at_2_r0_censored", "write_penalty_pct",
]
#: Columns of :func:`reference_table` (``report/tables/memory_reference.csv``): per host, the nearest published
#: platforms (memstor.analysis.reference_curves.CLOSEST_COLUMNS) with what they are.
REFERENCE_MATCH_COLUMNS = ["host", "rank", *CLOSEST_COLUMNS, "cpu", "memory", "load_threads", "access_bytes"]
#: The access size (bytes) of the curves set beside Mess's: one cache line, as Mess's traffic generator moves.
LINE_BYTES = 64


def _host(v) -> str:
    """A host key: the name, or memstor.analysis.memory_curves.UNKNOWN for a table without one (imported)."""
    return UNKNOWN if missing(v) else str(v)


def _key(row: pd.Series) -> tuple:
    return tuple("" if missing(row.get(k)) else str(row.get(k)) for k in FAMILY_KEY)


def read_ratio_table(mem: pd.DataFrame | None) -> pd.DataFrame:
    """``memory_read_ratio_fit``: every curve of ``mem`` (memstor.analysis.memory_fit.memory_fit_table) whose read
    share is known, with the shares in percent (``mix_read_pct`` of the requests, ``dram_read_pct_est`` of the
    DRAM traffic) and the fit's figures (B_max, R0, peak with 95 % intervals, bandwidth at 2·R0, the write
    penalty). ``family`` numbers the families (:data:`FAMILY_KEY`) from 1 per host; ``family_size`` is how many
    DRAM read shares the family holds (a family needs two to say anything about the read share). Curves whose
    identity is incomplete (imported files) are left out: they cannot be put in a family. Sorted by host,
    family, DRAM read share (highest first). Columns :data:`READ_RATIO_COLUMNS`."""
    if mem is None or mem.empty:
        return pd.DataFrame(columns=READ_RATIO_COLUMNS)
    t = mem[pd.to_numeric(mem["mix_read_share"], errors="coerce").notna()]
    t = t[t["origin"].map(lambda v: missing(v) or not str(v))]
    if t.empty:
        return pd.DataFrame(columns=READ_RATIO_COLUMNS)
    t = t.assign(mix_read_pct=100 * pd.to_numeric(t["mix_read_share"]),
                 dram_read_pct_est=100 * pd.to_numeric(t["dram_read_share_est"], errors="coerce"),
                 _key=t.apply(_key, axis=1))
    t["family"] = t.groupby(t["host"].map(_host))["_key"].transform(lambda keys: pd.factorize(keys)[0] + 1)
    t["family_size"] = t.groupby("_key")["dram_read_pct_est"].transform("nunique")
    t = t.sort_values(["host", "family", "dram_read_pct_est"], ascending=[True, True, False], kind="stable")
    return t.reindex(columns=READ_RATIO_COLUMNS).reset_index(drop=True)


def main_family(table: pd.DataFrame) -> pd.DataFrame:
    """The family the report shows of ONE host's :func:`read_ratio_table` rows: the one with the most DRAM read
    shares, one cache line (64 B) first on a tie, then the first numbered."""
    order = table.assign(_line=(pd.to_numeric(table["access_bytes"], errors="coerce") != LINE_BYTES).astype(int))
    order = order.sort_values(["family_size", "_line", "family"], ascending=[False, True, True], kind="stable")
    return table[table["family"] == order["family"].iloc[0]]


def reference_table(curves: pd.DataFrame | None, mem: pd.DataFrame | None, reference: pd.DataFrame,
                    n: int = 3) -> pd.DataFrame:
    """``memory_reference``: per host, the ``n`` published platforms nearest to its read-only curve
    (memstor.analysis.reference_curves.closest_platforms: unloaded latency and the latency at the highest bandwidth the host reached, log distance).
    The host's curve is its read-only curve of one cache line (64 B) with fixed pacing, the one with the most
    load threads when several (each curve's points from ``curves``, memstor.analysis.memory_curves.curve_table).
    ``load_threads`` says how many threads made it: a published curve is a whole socket, so its peak is a
    socket's, not this run's. Columns :data:`REFERENCE_MATCH_COLUMNS`; empty without a read-only curve."""
    if curves is None or curves.empty or mem is None or mem.empty or reference.empty:
        return pd.DataFrame(columns=REFERENCE_MATCH_COLUMNS)
    read = mem[(mem["traffic"] == "read-only") & (pd.to_numeric(mem["access_bytes"], errors="coerce") == LINE_BYTES)
               & mem["pacing"].map(lambda v: missing(v) or str(v) == "fixed")]
    about = reference.drop_duplicates("platform").set_index("platform")
    curve_hosts = curves["host"].map(_host)
    parts = []
    for host, g in read.groupby(read["host"].map(_host), sort=False):
        best = g.loc[pd.to_numeric(g["load_threads"], errors="coerce").fillna(0).idxmax()]
        points = curves[(curve_hosts == host) & (curves["curve"] == best["curve"])]
        near = closest_platforms(points[["bandwidth_MBps", "latency_ns"]], reference, n)
        if near.empty:
            continue
        near.insert(0, "rank", np.arange(1, len(near) + 1))
        near.insert(0, "host", host)
        parts.append(near.assign(cpu=near["platform"].map(about["cpu"]), memory=near["platform"].map(about["memory"]),
                                 load_threads=best["load_threads"], access_bytes=LINE_BYTES))
    if not parts:
        return pd.DataFrame(columns=REFERENCE_MATCH_COLUMNS)
    return pd.concat(parts, ignore_index=True).reindex(columns=REFERENCE_MATCH_COLUMNS)


def nearest_share(shares, wanted: float) -> float:
    """The share in ``shares`` (%) nearest to ``wanted`` (%), NaN when there is none."""
    values = pd.to_numeric(pd.Series(list(shares)), errors="coerce").dropna().unique()
    if not len(values):
        return float("nan")
    return float(values[np.argmin(np.abs(values - wanted))])


def family_tables(curves: pd.DataFrame, mem: pd.DataFrame, published: pd.DataFrame) -> dict:
    """The synthesis' read-ratio fields: ``read_ratio`` (:func:`read_ratio_table`), ``reference``
    (:func:`reference_table` against ``published``, memstor.analysis.reference_curves.load_mess_curves) and
    ``reference_curves`` (the published points of the platforms it names)."""
    near = reference_table(curves, mem, published)
    return {"read_ratio": read_ratio_table(mem), "reference": near,
            "reference_curves": published[published["platform"].isin(set(near["platform"]))].reset_index(drop=True)}
