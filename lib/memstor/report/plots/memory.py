"""Figures of the memory loaded-latency experiment (Intel MLC or loadlat).

Input: the tidy table of :func:`memstor.experiments.mlc_loaded_latency.run_loaded_latency` (or any ``mlc`` schema table).
Latency in ns, bandwidth in MB/s (10^6 bytes/s), inject delay in cycles of the tool's delay loop.
"""

from __future__ import annotations

import pandas as pd
from matplotlib.ticker import FuncFormatter, MaxNLocator

from memstor.analysis.memory import idle_latency_ns, page_walk, peak_bandwidth_MBps
from memstor.analysis.memory_curves import curve_table, legend_labels
from memstor.report.plots import DASHES, MARKERS, new_figure, per_host

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


def _idle_lines(df: pd.DataFrame, idle_ns: float | None) -> list[tuple[float, str, str]]:
    """(ns, label, line style) of the idle latency lines: the huge-page figure (DRAM latency) and the 4 KiB
    figure beside it (its excess is the page-walk cost); ``idle_ns`` overrides both with one line."""
    if idle_ns is not None:
        return [(idle_ns, f"idle latency {idle_ns:.0f} ns", ":")]
    walk = page_walk(df)
    if walk["n_huge"] and walk["n_small"]:
        return [(walk["huge_page_ns"], f"idle latency, 2M pages: {walk['huge_page_ns']:.0f} ns", ":"),
                (walk["small_page_ns"], f"idle latency, 4K pages: {walk['small_page_ns']:.0f} ns "
                                        f"(page walks {walk['page_walk_ns']:+.0f} ns)", "-.")]
    idle = idle_latency_ns(df)
    return [(idle, f"idle latency {idle:.0f} ns", ":")] if idle is not None else []


@per_host
def latency_vs_bandwidth(df: pd.DataFrame, idle_ns: float | None = None):
    """Latency (ns) against bandwidth (MB/s): one line per curve (traffic, and any other setting that
    differs between curves), one panel per access size; mean points, with 95 % intervals as error bars
    where points were repeated. Points are joined in inject-delay order (largest delay = lightest load
    first). The idle latency is a dotted line (huge pages) with the 4 KiB-page figure dash-dotted beside it
    (from the table unless ``idle_ns`` is given). One legend outside the panels, below them. Returns the
    Figure."""
    curves = curve_table(df)
    sizes = sorted(curves["access_bytes"].dropna().unique()) or [None]
    if curves["access_bytes"].isna().any() and sizes != [None]:
        sizes.append(float("nan"))
    fig, axes = new_figure(ncols=len(sizes), sharey=True)
    labels = legend_labels(curves, panel_by=("access_bytes",))
    order = list(dict.fromkeys(labels.values()))  # one colour and marker per label, the same in every panel
    idle_lines = _idle_lines(df, idle_ns)
    handles: dict = {}
    for ax, size in zip(axes, sizes):
        if size is None:
            _no_data(ax, "loaded latency")
            continue
        in_panel = curves[curves["access_bytes"] == size] if size == size else curves[curves["access_bytes"].isna()]
        for curve, g in in_panel.groupby("curve", sort=False):
            i = order.index(labels[curve])
            g = g.sort_values("inject_delay", ascending=False)
            style = {"marker": MARKERS[i % len(MARKERS)], "dashes": DASHES[i % len(DASHES)] or (None, None),
                     "color": f"C{i % 10}", "label": labels[curve]}
            if (g["n"] > 1).any():
                yerr = [(g["latency_ns"] - g["latency_ns_ci_low"]).fillna(0),
                        (g["latency_ns_ci_high"] - g["latency_ns"]).fillna(0)]
                line = ax.errorbar(g["bandwidth_MBps"], g["latency_ns"], yerr=yerr, capsize=2, **style).lines[0]
            else:
                (line,) = ax.plot(g["bandwidth_MBps"], g["latency_ns"], **style)
            handles.setdefault(labels[curve], line)
        for ns, label, ls in idle_lines:
            handles.setdefault(label, ax.axhline(ns, color=IDLE_COLOR, linestyle=ls, linewidth=1.5, label=label))
        ax.set_title(f"access size {int(size)} B" if size == size else "access size ? B")
        ax.set_xlabel(BW_LABEL)
        ax.set_ylabel(LAT_LABEL)
        _thousands(ax.xaxis, nbins=4)
    for ax in axes:  # after all panels are drawn, so the shared latency axis fits every curve
        ax.set_xlim(left=0)
        ax.set_ylim(bottom=0)
    if handles:
        fig.legend(list(handles.values()), list(handles), loc="outside lower center",
                   ncols=min(3, len(handles)), fontsize="small", title="traffic (reads:writes) and settings")
    fig.suptitle("Loaded latency: latency vs bandwidth")
    return fig


@per_host
def delay_sweep(df: pd.DataFrame, idle_ns: float | None = None):
    """Bandwidth (left axis, MB/s) and latency (right axis, ns) against inject delay (cycles), one panel
    per traffic (rows) x access size (columns), as the MLC course reports plotted them.

    The delay axis is symmetric-log (delay 0 included); the idle latency is a dotted line on the
    latency axis (huge pages; the 4 KiB-page figure dash-dotted). Returns the Figure.
    """
    curves = curve_table(df)
    sizes = sorted(curves["access_bytes"].dropna().unique())
    traffics = list(pd.unique(curves["traffic"].dropna()))
    if not sizes or not traffics:
        fig, axes = new_figure()
        _no_data(axes[0], "loaded latency", DELAY_LABEL, BW_LABEL)
        return fig
    labels = legend_labels(curves, panel_by=("access_bytes", "traffic"))
    idle_lines = _idle_lines(df, idle_ns)
    fig, axes = new_figure(ncols=len(sizes), nrows=len(traffics), scale=0.9)
    handles: list = []
    for r, traffic in enumerate(traffics):
        for c, size in enumerate(sizes):
            ax = axes[r * len(sizes) + c]
            panel = curves[(curves["access_bytes"] == size) & (curves["traffic"] == traffic)]
            ax.set_title(f"{traffic}, {int(size)} B accesses")
            if panel.empty:
                _no_data(ax, "loaded latency", DELAY_LABEL, BW_LABEL)
                continue
            ax2 = ax.twinx()
            ax2.spines["right"].set_visible(True)
            ax2.grid(False)
            several = panel["curve"].nunique() > 1
            for k, (curve, g) in enumerate(panel.groupby("curve", sort=False)):
                g = g.sort_values("inject_delay")
                suffix = f" — {labels[curve]}" if several else ""
                ax.plot(g["inject_delay"], g["bandwidth_MBps"], color=BW_COLOR, marker="o",
                        dashes=DASHES[k % len(DASHES)] or (None, None), label=f"bandwidth (MB/s){suffix}")
                ax2.plot(g["inject_delay"], g["latency_ns"], color=LAT_COLOR, marker="s",
                         dashes=DASHES[(k + 1) % len(DASHES)] or (None, None), label=f"latency (ns){suffix}")
            ax.set_xscale("symlog", linthresh=1, linscale=0.5)
            ax.set_xlabel(DELAY_LABEL)
            ax.set_ylabel(BW_LABEL, color=BW_COLOR)
            ax.tick_params(axis="y", colors=BW_COLOR)
            ax.set_ylim(bottom=0)
            _thousands(ax.yaxis)
            for ns, label, ls in idle_lines:
                ax2.axhline(ns, color=IDLE_COLOR, linestyle=ls, linewidth=1.5, label=label)
            ax2.set_ylabel(LAT_LABEL, color=LAT_COLOR)
            ax2.tick_params(axis="y", colors=LAT_COLOR)
            ax2.set_ylim(bottom=0)
            if not handles:
                handles = ax.get_lines() + ax2.get_lines()
    if handles:
        fig.legend(handles, [h.get_label() for h in handles], loc="outside lower center",
                   ncols=min(len(handles), 3))
    fig.suptitle("Loaded latency: bandwidth and latency vs inject delay")
    return fig


@per_host
def peak_bandwidth(df: pd.DataFrame):
    """Peak injection bandwidth (MB/s) per read-write mix as horizontal bars. Returns the Figure."""
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
