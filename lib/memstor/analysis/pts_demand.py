"""The SNIA PTS demand-intensity tables: CBW (composite block-size workload) and DIRTH (demand intensity /
response-time histogram), from the tables of memstor.experiments.fio_pts_cbw and fio_pts_dirth.

Pure: tables in, tables out. Input: an experiment table (one row per point x direction: memstor's fio
columns plus ``threads`` T, ``qd`` Q, ``total_oio`` T x Q, ``phase`` steady | matrix | histogram, ``role``,
``ceiling_us``, ``departure``) and its bins table (memstor.core.fiohist.BIN_COLUMNS, the json+ histograms).

One point's totals (:func:`point_totals`), over its read and write rows:

- ``iops`` = read IOPS + write IOPS; ``MBps`` = read + write MB/s (10^6 B/s);
- ``lat_mean_us`` = mean response time: the directions' mean total latency (fio ``lat``) weighted by their
  I/O counts (µs); ``lat_max_us`` = the larger maximum (µs);
- ``p99_us``, ``p99_99_us`` = percentiles of the point's response times: the total-latency (``lat``) json+
  histograms of both directions merged bin by bin and read by fio's rule (memstor.core.fiohist; never averaged
  percentiles); empty (not available) without the point's ``lat`` bins.

DIRTH's points (PTS 2.0.2 DIRTH test; memstor.experiments.fio_pts_dirth for the section): ``max IOPS`` = the
matrix point with the highest IOPS; ``min`` = the point with the least demand, T1 Q1 (the smallest T x Q,
then the smallest T); ``optimal`` = the highest-IOPS point whose MEAN response time stays under the
response-time ceiling (``lat_mean_us < ceiling_us``; none when no point does or no ceiling is given); ``mid``
= among the points under the ceiling, the one whose IOPS is nearest (optimal IOPS + min IOPS) / 2 (the
smaller T x Q on a tie; none without an optimal point). A point may hold several roles (``role`` "max IOPS,
optimal"). Failed points (no IOPS) take no role.

How these map to the PTS's DIRTH points (the PTS 2.0 implementation Alan-ADATA/SSS-PTS-TEST; the PTS 2.0.2 text
was not reachable): the PTS's MaxIOPS is the highest-IOPS point whose average response time is under 5 ms,
i.e. memstor's ``optimal`` with the 5000 µs ceiling; its MinIOPS is T1 Q1, memstor's ``min``; its MidIOPS (the
point under the ceiling whose IOPS is nearest (MaxIOPS + MinIOPS) / 2) is memstor's ``mid``; memstor's
``max IOPS`` (no ceiling) is not a PTS point.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from memstor.analysis.histograms import as_histogram, select
from memstor.core import fiohist
from memstor.core.schema import missing

#: Phases of the PTS experiment tables: steady-state rounds, the T x Q matrix, histogram captures.
STEADY, MATRIX, HISTOGRAM = "steady", "matrix", "histogram"
#: The roles of DIRTH's points, in the order a multi-role cell lists them.
MAX_IOPS, OPTIMAL, MID, MIN = "max IOPS", "optimal", "mid", "min"
ROLES = (MAX_IOPS, OPTIMAL, MID, MIN)
#: The percentiles of the tables' p99_us and p99_99_us (response time, µs).
P99, P99_99 = 99.0, 99.99
#: Histogram kind of the response time: fio's total latency (json+ ``lat_ns``, written with lat_percentiles=1).
RT_KIND = "lat"

#: Columns of point_totals(): one row per host x point. Units: IOPS, MB/s (10^6 B/s), µs.
TOTAL_COLUMNS = ["host", "point", "source", "phase", "role", "threads", "qd", "total_oio", "status", "iops", "MBps",
                 "lat_mean_us", "lat_max_us", "p99_us", "p99_99_us", "ceiling_us", "departure"]
#: report/tables/cbw.csv: one row per host x matrix point.
CBW_COLUMNS = ["host", "threads", "qd", "total_oio", "iops", "MBps", "lat_mean_us", "lat_max_us", "p99_us",
               "p99_99_us", "departure", "source"]
#: report/tables/dirth.csv: one row per host x matrix point; role as in the module docstring.
DIRTH_COLUMNS = ["host", "threads", "qd", "total_oio", "iops", "lat_mean_us", "p99_us", "role", "departure",
                 "ceiling_us", "source"]
#: report/tables/dirth_histograms.csv: one row per host x role x non-empty fio histogram bin. latency_us: the
#: bin's representative response time (µs); count: I/Os; share: count / the histogram's I/Os (0..1); capture:
#: histogram (a separate capture at that point) | matrix (the matrix point's own histogram).
HISTOGRAM_COLUMNS = ["host", "role", "threads", "qd", "latency_us", "count", "share", "capture", "source"]
#: cbw_histograms(): the same per CBW matrix point.
CBW_HISTOGRAM_COLUMNS = ["host", "threads", "qd", "total_oio", "latency_us", "count", "share", "source"]


def _num(df: pd.DataFrame, col: str) -> pd.Series:
    """A column as numbers (NaN where missing or not a number); all NaN when the column is absent."""
    return pd.to_numeric(df[col], errors="coerce") if col in df.columns else pd.Series(np.nan, index=df.index)


def _text(df: pd.DataFrame, col: str, default: str = "") -> pd.Series:
    """A column as text (``default`` where missing, and everywhere when the column is absent)."""
    if col not in df.columns:
        return pd.Series(default, index=df.index, dtype=object)
    return df[col].map(lambda v: default if missing(v) else str(v)).astype(object)


def _first(g: pd.DataFrame, col: str):
    """The first non-empty value of a column in a group, else None."""
    if col not in g.columns:
        return None
    return next((v for v in g[col] if not missing(v)), None)


def response_percentiles(bins: pd.DataFrame | None, source) -> dict[float, float | None]:
    """{P99: µs, P99_99: µs} of the merged total-latency histograms (every direction) of one raw file; None
    for each when the bins table holds none for it (not available)."""
    if bins is None or source is None or len(bins) == 0:
        return {P99: None, P99_99: None}
    hist = as_histogram(select(bins, source=source, kind=RT_KIND))
    if not hist:
        return {P99: None, P99_99: None}
    pct = fiohist.percentiles(hist, (P99, P99_99))
    return {p: fiohist.ns_to_us(v) for p, v in pct.items()}


def _point_total(host, point, g: pd.DataFrame, bins: pd.DataFrame | None) -> dict:
    """One point's totals (TOTAL_COLUMNS) from its direction rows."""
    done = bool((_text(g, "status", "done") == "done").all())
    iops, mbps, ios = _num(g, "iops"), _num(g, "bw_MBps"), _num(g, "total_ios")
    lat, lat_max = _num(g, "lat_mean_us"), _num(g, "lat_max_us")
    use = ios.gt(0) & lat.notna()
    source = _first(g, "source")
    pct = response_percentiles(bins, source) if done else {P99: None, P99_99: None}
    return {
        "host": host, "point": point, "source": source, "phase": _first(g, "phase"), "role": _first(g, "role"),
        "threads": _first(g, "threads"), "qd": _first(g, "qd"), "total_oio": _first(g, "total_oio"),
        "status": "done" if done else "failed",
        "iops": float(iops.sum()) if done and iops.notna().any() else None,
        "MBps": float(mbps.sum()) if done and mbps.notna().any() else None,
        "lat_mean_us": float((lat[use] * ios[use]).sum() / ios[use].sum()) if done and use.any() else None,
        "lat_max_us": float(lat_max.max()) if done and lat_max.notna().any() else None,
        "p99_us": pct[P99], "p99_99_us": pct[P99_99],
        "ceiling_us": _first(g, "ceiling_us"), "departure": _first(g, "departure"),
    }


def point_totals(rows: pd.DataFrame, bins: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per host x point (TOTAL_COLUMNS) of a PTS experiment table, in the table's order: the
    directions summed (module docstring), the response-time percentiles from ``bins`` (the experiment's bins
    table; without it p99_us and p99_99_us are empty)."""
    if rows is None or len(rows) == 0 or "point" not in rows.columns:
        return pd.DataFrame(columns=TOTAL_COLUMNS)
    host = rows["host"] if "host" in rows.columns else pd.Series("", index=rows.index)
    out = [_point_total(h, p, g, bins) for (h, p), g in rows.groupby([host, rows["point"]], sort=False)]
    df = pd.DataFrame(out, columns=TOTAL_COLUMNS)
    for col in ("threads", "qd", "total_oio"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype("Int64")
    for col in ("iops", "MBps", "lat_mean_us", "lat_max_us", "p99_us", "p99_99_us", "ceiling_us"):
        df[col] = pd.to_numeric(df[col], errors="coerce")
    return df


def matrix_totals(rows: pd.DataFrame, bins: pd.DataFrame | None = None) -> pd.DataFrame:
    """:func:`point_totals` of the matrix points only, sorted by host, threads, qd."""
    tot = point_totals(rows, bins)
    tot = tot[_text(tot, "phase") == MATRIX]
    return tot.sort_values(["host", "threads", "qd"], kind="stable").reset_index(drop=True)


def demand_roles(totals: pd.DataFrame, ceiling_us: float | None) -> dict[str, object]:
    """{role: index label in ``totals``} of ONE device's matrix totals (module docstring): max IOPS, min, and
    optimal and mid when a point's mean response time is under ``ceiling_us`` (µs). Points without IOPS take no
    role."""
    ok = totals[_num(totals, "iops").notna() & (_text(totals, "status", "done") == "done")]
    if ok.empty:
        return {}
    iops = _num(ok, "iops")
    roles: dict[str, object] = {MAX_IOPS: iops.idxmax()}
    if ceiling_us is not None and math.isfinite(float(ceiling_us)):
        under = ok[_num(ok, "lat_mean_us") < float(ceiling_us)]
        if not under.empty:
            roles[OPTIMAL] = _num(under, "iops").idxmax()
    order = ok.assign(_oio=_num(ok, "total_oio"), _t=_num(ok, "threads")).sort_values(["_oio", "_t"], kind="stable")
    roles[MIN] = order.index[0]
    if OPTIMAL in roles:
        under = order[_num(order, "lat_mean_us") < float(ceiling_us)]  # type: ignore[arg-type]
        target = (iops[roles[OPTIMAL]] + iops[roles[MIN]]) / 2
        roles[MID] = (_num(under, "iops") - target).abs().idxmin()  # first of equals: the smaller T x Q
    return roles


def role_text(roles: dict[str, object], label) -> str:
    """The ``role`` cell of the point ``label``: its roles in ROLES order joined by ", " ("" for none)."""
    return ", ".join(r for r in ROLES if r in roles and roles[r] == label)


def table_ceiling(rows: pd.DataFrame, ceiling_us: float | None = None) -> float | None:
    """``ceiling_us`` when given, else the run's own (the experiment table's ``ceiling_us`` column), else None."""
    if ceiling_us is not None:
        return float(ceiling_us)
    vals = _num(rows, "ceiling_us").dropna() if rows is not None else pd.Series(dtype=float)
    return float(vals.iloc[0]) if len(vals) else None


def cbw_table(rows: pd.DataFrame, bins: pd.DataFrame | None = None) -> pd.DataFrame:
    """report/tables/cbw.csv (CBW_COLUMNS) from fio-pts-cbw tables (every device): one row per matrix point."""
    return matrix_totals(rows, bins).reindex(columns=CBW_COLUMNS)


def dirth_table(rows: pd.DataFrame, ceiling_us: float | None = None,
                bins: pd.DataFrame | None = None) -> pd.DataFrame:
    """report/tables/dirth.csv (DIRTH_COLUMNS) from fio-pts-dirth tables: one row per matrix point with its
    role (module docstring), per device. ``ceiling_us``: the response-time ceiling (µs) of the optimal point;
    default: each device's run's own (its ``ceiling_us`` column)."""
    tot = matrix_totals(rows, bins)
    parts = []
    for _host, g in tot.groupby("host", sort=False):
        ceiling = table_ceiling(g, ceiling_us)
        roles = demand_roles(g, ceiling)
        parts.append(g.assign(role=[role_text(roles, i) for i in g.index], ceiling_us=ceiling))
    if not parts:
        return pd.DataFrame(columns=DIRTH_COLUMNS)
    return pd.concat(parts).reset_index(drop=True).reindex(columns=DIRTH_COLUMNS)


def histogram_rows(bins: pd.DataFrame | None, source) -> pd.DataFrame:
    """(latency_us, count, share) of one raw file's merged response-time histogram (every direction, fio's
    ``lat`` bins), one row per non-empty bin in increasing latency; no rows without bins."""
    if bins is None or source is None or len(bins) == 0:
        return pd.DataFrame(columns=["latency_us", "count", "share"])
    hist = as_histogram(select(bins, source=source, kind=RT_KIND))
    values, counts, _ = fiohist.cdf(hist)
    total = counts.sum()
    return pd.DataFrame({"latency_us": values / 1000.0, "count": counts.astype(int),
                         "share": counts / total if total else counts.astype(float)})


def _capture_source(rows: pd.DataFrame | None, host, role: str):
    """The raw file of the separate histogram capture at ``role`` on ``host`` (phase histogram), else None."""
    if rows is None or len(rows) == 0 or "phase" not in rows.columns:
        return None
    has_role = _text(rows, "role").map(lambda cell: role in cell.split(", "))
    sel = rows[(_text(rows, "phase") == HISTOGRAM) & has_role & (_text(rows, "status", "done") == "done")]
    if "host" in rows.columns:
        sel = sel[sel["host"].astype(str) == str(host)]
    return _first(sel, "source")


def dirth_histograms(bins: pd.DataFrame | None, dirth: pd.DataFrame,
                     rows: pd.DataFrame | None = None) -> pd.DataFrame:
    """report/tables/dirth_histograms.csv (HISTOGRAM_COLUMNS): the response-time histogram at the min, mid, optimal
    and max-IOPS points of ``dirth`` (:func:`dirth_table`), from ``bins`` (memstor.core.fiohist). With the
    experiment ``rows``, a role's separate histogram capture (phase histogram) is used when the run made one,
    else the matrix point's own histogram."""
    parts = []
    for _, point in dirth.iterrows():
        cell = point.get("role")
        for role in [] if missing(cell) else [r for r in str(cell).split(", ") if r]:
            source = _capture_source(rows, point["host"], role)
            capture = HISTOGRAM if source is not None else MATRIX
            h = histogram_rows(bins, source if source is not None else point.get("source"))
            if len(h):
                parts.append(h.assign(host=point["host"], role=role, threads=point["threads"], qd=point["qd"],
                                      capture=capture, source=source if source is not None else point["source"]))
    if not parts:
        return pd.DataFrame(columns=HISTOGRAM_COLUMNS)
    return pd.concat(parts, ignore_index=True).reindex(columns=HISTOGRAM_COLUMNS)


def cbw_histograms(bins: pd.DataFrame | None, cbw: pd.DataFrame) -> pd.DataFrame:
    """The response-time histogram of every CBW matrix point (CBW_HISTOGRAM_COLUMNS) from ``bins``."""
    parts = [histogram_rows(bins, p["source"]).assign(host=p["host"], threads=p["threads"], qd=p["qd"],
                                                      total_oio=p["total_oio"], source=p["source"])
             for _, p in cbw.iterrows()]
    parts = [p for p in parts if len(p)]
    if not parts:
        return pd.DataFrame(columns=CBW_HISTOGRAM_COLUMNS)
    return pd.concat(parts, ignore_index=True).reindex(columns=CBW_HISTOGRAM_COLUMNS)
