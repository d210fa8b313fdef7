"""Provenance of a loaded data root (memstor.analysis.dataset): per host and table, its rows, points, failed
points, the tools that measured them with their versions, and when (from the meta sidecars)."""

from __future__ import annotations

import pandas as pd

from memstor.analysis.dataset import IMPORTED, IMPORTED_TABLE, Dataset


def _point_tools(d: pd.DataFrame, metas: pd.DataFrame) -> list[str]:
    """The tools of a fio-kind table's points, each with its version, and with how many points where several
    ('ioarrive 0.1 (16 points)', 'fio-3.33 (2 points)'): the table's ``generator`` column names the tool of each
    point (empty: fio), fio's version from its ``fio_version``, another tool's from the point's meta sidecar."""
    versions = {}
    if not metas.empty and {"point", "tool", "tool_version"} <= set(metas.columns):
        versions = {(str(p), str(t)): str(v) for p, t, v in zip(metas["point"], metas["tool"], metas["tool_version"])}
    counts: dict[str, int] = {}
    for point, g in d.groupby("point", sort=False):
        gen = g["generator"].dropna().astype(str) if "generator" in g.columns else pd.Series(dtype=str)
        gen_name = gen.iloc[0] if len(gen) and gen.iloc[0] else "fio"
        if gen_name == "fio":
            fv = g["fio_version"].dropna().astype(str)
            name = fv.iloc[0] if len(fv) else "fio"
        else:
            name = f"{gen_name} {versions.get((str(point), gen_name), '')}".strip()
        counts[name] = counts.get(name, 0) + 1
    if len(counts) <= 1:
        return list(counts)
    return [f"{name} ({k} points)" for name, k in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def provenance(ds: Dataset) -> pd.DataFrame:
    """Per host x table: rows, points, failed points, tool versions, time span, memstor version, data path.

    Columns: host, table, rows, points, failed, tools (each point's, counted where several: :func:`_point_tools`),
    measured (UTC) (time span from the meta sidecars). The table's path is ``<data>/processed/<host>/<table>``."""
    rows = []
    for h in ds.hosts:
        metas = pd.DataFrame(h.metas) if h.metas else pd.DataFrame()
        for t in h.tables:
            table = t[:-4]
            kind = "fio" if (h.kinds.get(table) == "fio" or t == "fio.csv") else "mlc"
            src = ds.fio if kind == "fio" else ds.mlc
            tab = IMPORTED_TABLE if t in IMPORTED else table
            d = src[(src["host"] == h.name) & (src["table"] == tab)]
            if t in IMPORTED:
                d = d if kind == "fio" else d
            m = metas[metas["experiment"] == table] if not metas.empty and "experiment" in metas else pd.DataFrame()
            if kind == "fio":
                tools = _point_tools(d, m)
                npts = d["point"].nunique()
                failed = d.loc[~d["ok"], "point"].nunique()
            else:
                tools = sorted({f"{a} {b}".strip() for a, b in zip(d["tool"].fillna(""), d["tool_version"].fillna(""))})
                npts = d["source"].nunique() if table == "mlc" else len(d)
                failed = int((~d["ok"]).sum())
            span = "imported (no meta)"
            if "start_time" in m and not m.empty:
                a = str(m["start_time"].min())[:16].replace("T", " ")
                b = str(m["end_time"].max())[:16].replace("T", " ") if "end_time" in m else ""
                span = f"{a} to {b[11:] if b[:10] == a[:10] else b}"
            rows.append({
                "host": h.name, "table": t, "rows": int(len(d)), "points": int(npts), "failed": int(failed),
                "tools": ", ".join(tools) or "–", "measured (UTC)": span,
            })
    return pd.DataFrame(rows)
