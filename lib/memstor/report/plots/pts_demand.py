"""Figures of the SNIA PTS demand-intensity tests (fio-pts-cbw, fio-pts-dirth): the demand-intensity curve
(IOPS against mean response time, one line per thread count T, the optimal point ringed under the
response-time ceiling), IOPS and mean response time against the total outstanding I/O T x Q, and the
response-time histograms at DIRTH's min, mid, optimal and max-IOPS points.

Input: the tables of memstor.analysis.pts_demand (``cbw_table``, ``dirth_table``: ``threads``, ``qd``,
``total_oio`` I/Os, ``iops`` I/O per s, ``lat_mean_us`` µs (mean total latency,
fio ``lat``), ``role``, ``ceiling_us`` µs; ``dirth_histograms``:
``latency_us`` µs, ``share`` 0..1 per fio histogram bin). Several devices: one figure per device
(:func:`memstor.report.plots.per_host`). Each function returns a matplotlib Figure, or None when there is
nothing to draw.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.ticker import LogLocator

from memstor.analysis.pts_demand import MAX_IOPS, MID, MIN, OPTIMAL, ROLES
from memstor.report.plots import MARKERS, new_figure, per_host, plain_log, thousands

IOPS_LABEL = "IOPS (I/O per s, read + write)"
RT_LABEL = "mean response time (µs)"
OIO_LABEL = "total outstanding I/O T x Q (log scale)"
HIST_X_LABEL = "response time (µs, log scale; fio histogram bins)"
HIST_Y_LABEL = "share of the I/Os (% per fio bin)"


def _num(df: pd.DataFrame, col: str) -> pd.Series:
    return pd.to_numeric(df[col], errors="coerce") if col in df.columns else pd.Series(np.nan, index=df.index)


def _usable(table: pd.DataFrame | None) -> pd.DataFrame | None:
    """The rows with threads, qd, IOPS and mean response time, numeric; None when there are none."""
    if table is None or len(table) == 0 or not {"threads", "qd", "iops", "lat_mean_us"} <= set(table.columns):
        return None
    t = table.copy()
    for col in ("threads", "qd", "total_oio", "iops", "lat_mean_us", "ceiling_us"):
        t[col] = _num(t, col)
    t = t[np.isfinite(t["iops"].to_numpy(float)) & np.isfinite(t["lat_mean_us"].to_numpy(float))]
    return t if len(t) else None


def _has_role(t: pd.DataFrame, role: str) -> pd.Series:
    return t["role"].fillna("").astype(str).str.split(", ").apply(lambda rs: role in rs) if "role" in t.columns \
        else pd.Series(False, index=t.index)


def _lines(ax, t: pd.DataFrame, x: str, y: str) -> None:
    """One line per thread count T (points in increasing Q), labelled T1, T2, ..."""
    for j, (threads, g) in enumerate(t.groupby("threads", sort=True)):
        g = g.sort_values("qd")
        ax.plot(g[x], g[y], marker=MARKERS[j % len(MARKERS)], linewidth=1.5, label=f"T{int(threads)}",
                gid=f"{x}:{y}:T{int(threads)}")


@per_host
def demand_intensity_figure(dirth: pd.DataFrame | None):
    """The demand-intensity curve: mean response time (µs) against IOPS, one line per T (points in increasing
    Q); the response-time ceiling dashed, the optimal point ringed, the max-IOPS, mid and min points marked. None
    without a point to draw."""
    t = _usable(dirth)
    if t is None:
        return None
    fig, (ax,) = new_figure(1, 1, scale=1.2)
    _lines(ax, t, "iops", "lat_mean_us")
    ceiling = t["ceiling_us"].dropna()
    if len(ceiling):
        ax.axhline(float(ceiling.iloc[0]), color="0.3", linestyle="--", linewidth=1,
                   label=f"ceiling {float(ceiling.iloc[0]):,.0f} µs (mean response time)")
    marks = {OPTIMAL: dict(s=260, facecolors="none", edgecolors="black", linewidths=2),
             MAX_IOPS: dict(s=120, marker="*", color="black"), MID: dict(s=70, marker="D", color="0.25"),
             MIN: dict(s=70, marker="v", color="0.4")}
    for role in ROLES:
        p = t[_has_role(t, role)]
        if len(p):
            r = p.iloc[0]
            ax.scatter([r["iops"]], [r["lat_mean_us"]], zorder=5, gid=f"role:{role}",
                       label=f"{role}: T{int(r['threads'])} Q{int(r['qd'])}", **marks[role])
    ax.set_xlabel(IOPS_LABEL)
    ax.set_ylabel(RT_LABEL)
    top = max([float(t["lat_mean_us"].max()), *[float(c) for c in ceiling[:1]]])
    ax.set_xlim(left=0)
    ax.set_ylim(0, 1.15 * top)
    thousands(ax.xaxis)
    thousands(ax.yaxis)
    ax.legend(fontsize="x-small", loc="upper left")
    fig.suptitle("Demand intensity: response time against IOPS")
    return fig


@per_host
def oio_figure(table: pd.DataFrame | None, title: str = "Demand intensity"):
    """Two panels against the total outstanding I/O T x Q (log scale): IOPS, and mean response time (µs); one
    line per T. For cbw_table and dirth_table alike. None without a point to draw."""
    t = _usable(table)
    if t is None:
        return None
    t = t.assign(total_oio=t["threads"] * t["qd"])
    fig, axes = new_figure(2, 1)
    for ax, y, label in zip(axes, ("iops", "lat_mean_us"), (IOPS_LABEL, RT_LABEL)):
        _lines(ax, t, "total_oio", y)
        ax.set_xscale("log", base=2)
        plain_log(ax.xaxis)
        ax.set_xlabel(OIO_LABEL)
        ax.set_ylabel(label)
        ax.set_ylim(0, 1.15 * float(t[y].max()))
        thousands(ax.yaxis)
        ax.legend(fontsize="x-small", loc="best", title="threads")
    fig.suptitle(f"{title}: IOPS and response time against outstanding I/O")
    return fig


@per_host
def histograms_figure(hist: pd.DataFrame | None, by: str = "role"):
    """The response-time histograms: share of the I/Os (%) per fio bin against the response time (µs, log
    scale), one panel per value of ``by`` (DIRTH: min, mid, optimal, max IOPS). None without bins."""
    if hist is None or len(hist) == 0 or not {by, "latency_us", "share"} <= set(hist.columns):
        return None
    h = hist.assign(latency_us=_num(hist, "latency_us"), share=_num(hist, "share"))
    h = h[(h["latency_us"] > 0) & h["share"].notna()]
    groups = [g for g in ROLES if g in set(h[by])] if by == "role" else list(dict.fromkeys(h[by]))
    if not groups:
        return None
    # two panels a row, each axis named once for the figure: four panels in a row, each with both labels, printed
    # 1.2 x 0.6 in with the labels over one another (the print check, issue 38 item 5)
    cols = min(len(groups), 2)
    fig, axes = new_figure(cols, math.ceil(len(groups) / cols), sharex=True)
    for i, (ax, key) in enumerate(zip(axes, groups)):
        g = h[h[by] == key].sort_values("latency_us")
        ax.vlines(g["latency_us"], 0, 100 * g["share"], linewidth=1.2, gid=f"hist:{key}")  # one line per bin
        where = f" (T{int(g['threads'].iloc[0])} Q{int(g['qd'].iloc[0])})" if {"threads", "qd"} <= set(g.columns) \
            else ""
        ax.set_title(f"{key}{where}", fontsize="small")
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        plain_log(ax.xaxis)
        if i + cols >= len(groups):  # the lowest panel of its column shows the ticks
            ax.xaxis.set_tick_params(labelbottom=True)
        ax.set_ylim(bottom=0)
    for ax in axes[len(groups):]:
        ax.set_visible(False)
    fig.supxlabel(HIST_X_LABEL, fontsize="medium")
    fig.supylabel(HIST_Y_LABEL, fontsize="medium")
    fig.suptitle("Response-time histograms")
    return fig
