"""Figures of the memory loaded-latency experiment (Intel MLC or loadlat).

Input: the tidy table of :func:`memstor.experiments.mlc_loaded_latency.run_loaded_latency` (or any ``mlc`` schema table).
Latency in ns, bandwidth in MB/s (10^6 bytes/s), inject delay in cycles of the tool's delay loop.
"""

from __future__ import annotations

import pandas as pd
from matplotlib.ticker import FuncFormatter, MaxNLocator

from memstor.analysis.memory import idle_latency_ns, loaded_curves
from memstor.report.plots import DASHES, MARKERS, new_figure

BW_LABEL = "bandwidth (MB/s, 1 MB = 10^6 B)"
LAT_LABEL = "latency (ns)"
DELAY_LABEL = "inject delay (cycles of the delay loop)"
BW_COLOR, LAT_COLOR, IDLE_COLOR = "C0", "C3", "0.35"


def _thousands(ax_axis, nbins: int = 5) -> None:
    """At most ``nbins`` ticks, labelled with thousands separators (25,000 MB/s)."""
    ax_axis.set_major_locator(MaxNLocator(nbins))
    ax_axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))


def _no_data(ax, what: str, xlabel: str = BW_LABEL, ylabel: str = LAT_LABEL) -> None:
    """Mark an empty panel instead of failing (e.g. every point of the sweep failed)."""
    ax.text(0.5, 0.5, f"no {what} measured", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)


def latency_vs_bandwidth(df: pd.DataFrame, idle_ns: float | None = None):
    """Latency (ns) against bandwidth (MB/s): one line per traffic, one panel per access size.

    Points are joined in inject-delay order (largest delay = lightest load first); the idle latency
    (from the table unless ``idle_ns`` is given) is a dotted horizontal line. Returns the Figure.
    """
    curves = loaded_curves(df)
    idle = idle_ns if idle_ns is not None else idle_latency_ns(df)
    sizes = sorted(curves["access_bytes"].dropna().unique()) or [None]
    fig, axes = new_figure(ncols=len(sizes), sharey=True)
    traffics = list(pd.unique(curves["traffic"]))
    for ax, size in zip(axes, sizes):
        if size is None:
            _no_data(ax, "loaded latency")
            continue
        for i, traffic in enumerate(traffics):
            g = curves[(curves["access_bytes"] == size) & (curves["traffic"] == traffic)]
            if g.empty:
                continue
            g = g.sort_values("inject_delay", ascending=False)
            ax.plot(g["bandwidth_MBps"], g["latency_ns"], marker=MARKERS[i % len(MARKERS)],
                    dashes=DASHES[i % len(DASHES)] or (None, None), label=traffic)
        if idle is not None:
            ax.axhline(idle, color=IDLE_COLOR, linestyle=":", linewidth=1.5, label=f"idle latency {idle:.0f} ns")
        ax.set_title(f"access size {int(size)} B")
        ax.set_xlabel(BW_LABEL)
        ax.set_ylabel(LAT_LABEL)
        _thousands(ax.xaxis, nbins=4)
        ax.legend(title="traffic (reads:writes)", fontsize="small")
    for ax in axes:  # after all panels are drawn, so the shared latency axis fits every curve
        ax.set_xlim(left=0)
        ax.set_ylim(bottom=0)
    fig.suptitle("Loaded latency: latency vs bandwidth")
    return fig


def delay_sweep(df: pd.DataFrame, idle_ns: float | None = None):
    """Bandwidth (left axis, MB/s) and latency (right axis, ns) against inject delay (cycles), one panel
    per traffic (rows) x access size (columns), as the MLC course reports plotted them.

    The delay axis is symmetric-log (delay 0 included); the idle latency is a dotted line on the
    latency axis. Returns the Figure.
    """
    curves = loaded_curves(df)
    idle = idle_ns if idle_ns is not None else idle_latency_ns(df)
    sizes = sorted(curves["access_bytes"].dropna().unique())
    traffics = list(pd.unique(curves["traffic"]))
    if not sizes:
        fig, axes = new_figure()
        _no_data(axes[0], "loaded latency", DELAY_LABEL, BW_LABEL)
        return fig
    fig, axes = new_figure(ncols=len(sizes), nrows=len(traffics), scale=0.9)
    handles = []
    for r, traffic in enumerate(traffics):
        for c, size in enumerate(sizes):
            ax = axes[r * len(sizes) + c]
            g = curves[(curves["access_bytes"] == size) & (curves["traffic"] == traffic)].sort_values("inject_delay")
            ax.set_title(f"{traffic}, {int(size)} B accesses")
            if g.empty:
                _no_data(ax, "loaded latency", DELAY_LABEL, BW_LABEL)
                continue
            ax.plot(g["inject_delay"], g["bandwidth_MBps"], color=BW_COLOR, marker="o", label="bandwidth (MB/s)")
            ax.set_xscale("symlog", linthresh=1, linscale=0.5)
            ax.set_xlabel(DELAY_LABEL)
            ax.set_ylabel(BW_LABEL, color=BW_COLOR)
            ax.tick_params(axis="y", colors=BW_COLOR)
            ax.set_ylim(bottom=0)
            _thousands(ax.yaxis)
            ax2 = ax.twinx()
            ax2.spines["right"].set_visible(True)
            ax2.grid(False)
            ax2.plot(g["inject_delay"], g["latency_ns"], color=LAT_COLOR, marker="s", dashes=(4, 1.5),
                     label="latency (ns)")
            if idle is not None:
                ax2.axhline(idle, color=IDLE_COLOR, linestyle=":", linewidth=1.5,
                            label=f"idle latency {idle:.0f} ns")
            ax2.set_ylabel(LAT_LABEL, color=LAT_COLOR)
            ax2.tick_params(axis="y", colors=LAT_COLOR)
            ax2.set_ylim(bottom=0)
            if not handles:
                handles = ax.get_lines() + ax2.get_lines()
    if handles:
        fig.legend(handles, [h.get_label() for h in handles], loc="outside lower center", ncols=len(handles))
    fig.suptitle("Loaded latency: bandwidth and latency vs inject delay")
    return fig


def peak_bandwidth(df: pd.DataFrame):
    """Peak injection bandwidth (MB/s) per read-write mix as horizontal bars. Returns the Figure."""
    from memstor.analysis.memory import peak_bandwidth_MBps

    peak = peak_bandwidth_MBps(df)
    fig, axes = new_figure()
    ax = axes[0]
    if peak.empty:
        ax.text(0.5, 0.5, "no peak bandwidth measured", ha="center", va="center", transform=ax.transAxes)
    else:
        ax.barh(list(peak.index)[::-1], list(peak.to_numpy())[::-1], color=BW_COLOR)
        for y, v in enumerate(list(peak.to_numpy())[::-1]):
            ax.text(v, y, f" {v:,.0f}", va="center", fontsize="small")
    ax.set_xlabel(BW_LABEL)
    ax.set_ylabel("traffic (reads:writes)")
    _thousands(ax.xaxis)
    ax.set_title("Peak injection bandwidth")
    return fig
