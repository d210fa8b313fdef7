"""The open loop measured by two experiment families of one run: fio-load-latency's offered rates and the
mixed-load map's cells that offer nothing in the other direction (a read-only cell is a randread open loop:
the same generator, block size and file). Where both ran one configuration, the two are repeats: their
latencies say how far one open-loop run may be from another, and an SLO answer is one only if the held points
of both families agree with it (fifth read S9-bare B-2: randread 'no measured rate meets p99 <= 1 ms' from
fio-load-latency while the same run's read-only cell w0-r20 held and met it at 24,598 IOPS, p99 404 µs; u50 and
w0-r50 both offered 61,311 IOPS: mean 205 against 138 µs, 1.49x).

Inputs: ``curves`` (memstor.analysis.load_latency.curve_table: host, rw, utilisation_pct, offered_iops,
achieved_iops, achieved_pct, lat_mean_us, lat_p99_us, open_loop, generator) and ``mixed`` (the mixed-load
map's done rows: host, cell, direction, write_offered_MBps, read_offered_iops, offered_iops, achieved_iops,
achieved_pct, lat_mean_us, resp_p99_us, open_loop, generator). Latencies are response times from the intended
arrival (µs); rates IOPS.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from memstor.analysis.load_latency import held_mask
from memstor.core.fmt import fmt_number

#: The mixed-load map's direction -> the pure workload of fio-load-latency, and the column whose zero makes a
#: cell pure (nothing offered in the other direction).
PURE = {"read": ("randread", "write_offered_MBps"), "write": ("randwrite", "read_offered_iops")}
#: Two offered rates within this relative difference are one configuration (both are rounded to whole IOPS).
RATE_MATCH = 0.01
#: The SLO rows' censored_by where the held points of the two families disagree about the target.
FAMILIES_DISAGREE = "the two open-loop experiments disagree"

_PURE_COLUMNS = ["host", "rw", "cell", "offered_iops", "achieved_iops", "lat_mean_us", "lat_p99_us", "held"]


def pure_cells(mixed: pd.DataFrame | None) -> pd.DataFrame:
    """The mixed-load map's rows of cells with no traffic in the other direction, as open-loop points of their
    pure workload (:data:`PURE`): host, rw, cell, offered_iops, achieved_iops (IOPS), lat_mean_us, lat_p99_us
    (the response p99, µs) and held (ioarrive's checks passed and achieved within ±5 % of offered)."""
    need = {"host", "cell", "direction", "offered_iops", "achieved_iops", "resp_p99_us", "open_loop"}
    if mixed is None or mixed.empty or not need <= set(mixed.columns):
        return pd.DataFrame(columns=_PURE_COLUMNS)
    out = []
    for direction, (rw, other) in PURE.items():
        g = mixed[mixed["direction"] == direction]
        if other in g.columns:
            g = g[pd.to_numeric(g[other], errors="coerce") == 0]
        if g.empty:
            continue
        held = held_mask(g)
        out.append(pd.DataFrame({
            "host": g["host"].astype(str), "rw": rw, "cell": g["cell"].astype(str),
            "offered_iops": pd.to_numeric(g["offered_iops"], errors="coerce"),
            "achieved_iops": pd.to_numeric(g["achieved_iops"], errors="coerce"),
            "lat_mean_us": pd.to_numeric(g.get("lat_mean_us"), errors="coerce"),
            "lat_p99_us": pd.to_numeric(g["resp_p99_us"], errors="coerce"),
            "held": held if held is not None else False}))
    return pd.concat(out, ignore_index=True)[_PURE_COLUMNS] if out else pd.DataFrame(columns=_PURE_COLUMNS)


def _ioarrive(curves: pd.DataFrame) -> pd.DataFrame:
    """The open-loop points ioarrive issued (the mixed-load map's generator): fio's rate mode is another loop."""
    if "generator" not in curves.columns:
        return curves.iloc[0:0]
    return curves[curves["generator"].astype(str) == "ioarrive"]


def repeats(curves: pd.DataFrame | None, mixed: pd.DataFrame | None) -> pd.DataFrame:
    """Each fio-load-latency point whose offered rate (within :data:`RATE_MATCH`) a pure mixed-load cell of the
    same host and workload also offered: host, rw, u (the point's % of X_ref), cell, offered_iops, the two
    means and p99s (µs: ``*_load``, ``*_mixed``) and whether each held."""
    cells = pure_cells(mixed)
    if curves is None or curves.empty or cells.empty:
        return pd.DataFrame()
    pts = _ioarrive(curves)
    rows = []
    for (host, rw), g in pts.groupby(["host", "rw"], sort=True):
        held = held_mask(g)
        c = cells[(cells["host"] == str(host)) & (cells["rw"] == rw)]
        for i, p in g.iterrows():
            at = float(p["offered_iops"])
            same = c[(c["offered_iops"] - at).abs() <= RATE_MATCH * at]
            for _, m in same.iterrows():
                rows.append({"host": host, "rw": rw, "u": float(p["utilisation_pct"]), "cell": m["cell"],
                             "offered_iops": at, "lat_mean_us_load": float(p["lat_mean_us"]),
                             "lat_p99_us_load": float(p["lat_p99_us"]), "held_load": bool(held[i]) if held is not None
                             else False, "lat_mean_us_mixed": float(m["lat_mean_us"]),
                             "lat_p99_us_mixed": float(m["lat_p99_us"]), "held_mixed": bool(m["held"])})
    return pd.DataFrame(rows)


def _point(x: float, p99: float) -> str:
    return f"{fmt_number(x)} IOPS, p99 {fmt_number(p99)} µs"


def _conflicts(load: pd.DataFrame, cells: pd.DataFrame, target: float, answer: float, censored: bool) -> str:
    """The words of the held points that contradict one SLO answer ('' when none does): a held cell meeting the
    target above the answer (or where there is none), or missing it below the answer; with the held
    fio-load-latency points on the other side."""
    meet = cells["lat_p99_us"] <= target
    x = cells["achieved_iops"]
    if answer != answer:
        bad = cells[meet]
    else:
        bad = cells[(~meet & (x < answer * (1 - 1e-9))) | (meet & (x > answer * (1 + 1e-9)) & (not censored))]
    if bad.empty:
        return ""
    said = []
    for _, c in bad.iterrows():
        meets = c["lat_p99_us"] <= target
        lmeet = load["lat_p99_us"] <= target
        side = load[(~lmeet & (load["achieved_iops"] <= c["achieved_iops"])) if meets
                    else (lmeet & (load["achieved_iops"] >= c["achieved_iops"]))]
        other = "; ".join(f"u{p['utilisation_pct']:.0f} ({_point(p['achieved_iops'], p['lat_p99_us'])})"
                          for _, p in side.iterrows())
        said.append(f"mixed-load cell {c['cell']} ({_point(c['achieved_iops'], c['lat_p99_us'])}) "
                    f"{'meets' if meets else 'misses'} it" + (f", {other} {'misses' if meets else 'meets'} it"
                                                               if other else ""))
    return "; ".join(said)


def cross_slo(slo: pd.DataFrame | None, curves: pd.DataFrame | None, mixed: pd.DataFrame | None) -> pd.DataFrame | None:
    """The SLO table (memstor.analysis.load_latency.slo) with ``families``: what the held pure cells of the
    mixed-load map say of each answer. Where one contradicts it (:func:`_conflicts`), the answer is withheld
    (max_iops empty, censored False, censored_by :data:`FAMILIES_DISAGREE`) and ``families`` names both sides;
    where they agree, ``families`` names the cells; '' where the map has no held pure cell of the workload."""
    if slo is None or slo.empty:
        return slo
    out = slo.copy()
    out["families"] = ""
    cells = pure_cells(mixed)
    cells = cells[cells["held"].astype(bool)] if len(cells) else cells
    if cells.empty or curves is None or curves.empty:
        return out
    out["censored_by"] = out["censored_by"].astype(object)
    for i, r in out.iterrows():
        c = cells[(cells["host"] == str(r["host"])) & (cells["rw"] == r["rw"])]
        g = _ioarrive(curves[(curves["host"] == r["host"]) & (curves["rw"] == r["rw"])])
        held = held_mask(g) if len(g) else None
        if c.empty or held is None or not held.any():
            continue
        v = float(r["max_iops"]) if r["max_iops"] == r["max_iops"] else math.nan
        said = _conflicts(g[held], c, float(r["target_p99_us"]), v, bool(r["censored"]))
        if said:
            out.loc[i, ["max_iops", "censored", "censored_by", "families"]] = [np.nan, False, FAMILIES_DISAGREE, said]
        else:
            out.loc[i, "families"] = ("the mixed-load map's held " + r["rw"].removeprefix("rand") + "-only cells "
                                      + ", ".join(c["cell"]) + " agree")
    return out


__all__ = ["FAMILIES_DISAGREE", "PURE", "RATE_MATCH", "cross_slo", "pure_cells", "repeats"]
