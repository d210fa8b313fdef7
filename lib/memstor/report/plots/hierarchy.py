"""Figures of the memory-hierarchy experiment (``mem-hierarchy``): latency against the working set, and
memory-level parallelism.

Input: the tables of memstor.analysis.hierarchy (``working_set_table``, ``cache_levels``, ``mlp_table``) and the
kernel's cache sizes (sysinfo's ``caches`` block). Latency in ns, sizes in bytes, bandwidth in MB/s (10^6 B/s).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter

from memstor.analysis.hierarchy import host_caches
from memstor.analysis.kernel_caches import kernel_levels
from memstor.report.plots import DASHES, MARKERS, new_figure, per_host, plain_log, size_label

LAT_LABEL = "latency per load (ns, log scale)"
SIZE_LABEL = "buffer size (bytes, log2 scale)"
BW_LABEL = "bandwidth (MB/s, 1 MB = 10^6 B)"
CHAINS_LABEL = "independent chains per thread (log2 scale)"


def _size_axis(axis) -> None:
    """A log2 axis of bytes labelled 4K, 64K, 1M ..."""
    axis.set_major_formatter(FuncFormatter(lambda v, _: size_label(v) if v >= 1 else ""))


def _no_data(ax, what: str) -> None:
    ax.text(0.5, 0.5, f"no {what} measured", ha="center", va="center", transform=ax.transAxes)


def _curve_label(pages: str, pattern: str) -> str:
    return f"{pattern}, {pages}"


@per_host
def working_set(ws: pd.DataFrame, caches: Mapping | None = None, levels: pd.DataFrame | None = None):
    """Latency (ns, log) against the buffer size (bytes, log2): one line per pages x pattern (the mean, solid;
    the batch median, dashed) with bands from the batch p50 to p90 and p90 to p99 (percentiles over means of
    batches of loads, not single loads); the kernel's cache sizes as grey vertical lines (``caches``: sysinfo's ``caches``
    block) and, when ``levels`` (memstor.analysis.hierarchy.cache_levels) is given, where each level ends as a
    marker on the x axis. Returns the Figure."""
    fig, axes = new_figure(scale=1.0)
    fig.set_size_inches(9.6, 4.4)  # the legend beside the panel: printed about 6 x 2.8 in, the panel 3.5 in wide
    ax = axes[0]
    if ws is None or ws.empty:
        _no_data(ax, "working set")
        return fig
    curves = list(ws.groupby(["pattern", "pages"], sort=True))
    for i, ((pattern, pages), g) in enumerate(curves):
        g = g.sort_values("buffer_bytes")
        color = f"C{i % 10}"
        label = _curve_label(pages, pattern)
        ax.plot(g["buffer_bytes"], g["latency_ns"], color=color, marker=MARKERS[i % len(MARKERS)], markersize=3,
                label=f"{label}: mean")
        if g["lat_p50_ns"].notna().any():
            ax.plot(g["buffer_bytes"], g["lat_p50_ns"], color=color, dashes=DASHES[1], linewidth=1.2,
                    label=f"{label}: batch p50")
            ax.fill_between(g["buffer_bytes"], g["lat_p50_ns"], g["lat_p90_ns"], color=color, alpha=0.25,
                            linewidth=0)
            ax.fill_between(g["buffer_bytes"], g["lat_p90_ns"], g["lat_p99_ns"], color=color, alpha=0.08,
                            linewidth=0)
    if "host" in ws and ws["host"].nunique() == 1:  # caches may be {host: block}
        caches = host_caches(caches, str(ws["host"].iloc[0]))
    for name, size in kernel_levels(caches):
        ax.axvline(size, color="0.45", linestyle=":", linewidth=1.2)
        ax.annotate(f"{name} {size_label(size)}", (size, 1), xycoords=("data", "axes fraction"), rotation=90,
                    va="top", ha="right", fontsize=8, color="0.3")
    if levels is not None and not levels.empty:
        ends = levels.dropna(subset=["ends_at_bytes"])
        ends = ends[~ends["level"].astype(str).str.startswith("TLB")]
        ax.plot(ends["ends_at_bytes"], np.full(len(ends), 0.0), "v", color="k", markersize=7, clip_on=False,
                transform=ax.get_xaxis_transform(), label="a level ends (curve crossing)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    _size_axis(ax.xaxis)
    plain_log(ax.yaxis)
    ax.set_xlabel(SIZE_LABEL)
    ax.set_ylabel(LAT_LABEL)
    ax.set_title("Latency vs working set (bands: batch p50-p90, p90-p99)")
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    return fig


@per_host
def mlp(table: pd.DataFrame):
    """Memory-level parallelism: bandwidth (MB/s) and latency per load (ns) against the chains per thread
    (log2), one line per thread count, Little's law (threads x chains x line / latency) dotted, the saturated
    points (bandwidth grows < 10 % per doubling from there on) ringed. Returns the Figure."""
    fig, axes = new_figure(ncols=2)
    ax_bw, ax_lat = axes
    if table is None or table.empty:
        _no_data(ax_bw, "MLP")
        _no_data(ax_lat, "MLP")
        return fig
    for i, (threads, g) in enumerate(table.groupby("threads", sort=True)):
        g = g.sort_values("chains")
        style = {"color": f"C{i % 10}", "marker": MARKERS[i % len(MARKERS)]}
        label = f"{int(threads)} thread{'s' if threads != 1 else ''}"
        ax_bw.plot(g["chains"], g["bandwidth_MBps"], label=label, **style)
        ax_bw.plot(g["chains"], g["littles_MBps"], color=style["color"], linestyle=":", linewidth=1.2)
        sat = g[g["saturated"].astype(bool)]
        ax_bw.plot(sat["chains"], sat["bandwidth_MBps"], "o", markersize=13, markerfacecolor="none",
                   color=style["color"])
        ax_lat.plot(g["chains"], g["latency_ns"], label=label, **style)
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_xlabel(CHAINS_LABEL)
    ax_bw.set_ylabel(BW_LABEL)
    ax_bw.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax_bw.set_title("Bandwidth (dotted: Little's law; ringed: saturated)")
    ax_lat.set_ylabel("latency per load of a chain (ns)")
    ax_lat.set_title("Latency")
    ax_bw.legend(fontsize=9)
    return fig
