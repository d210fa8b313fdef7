"""Figure of the read-ratio family: this machine's loaded-latency curves coloured by their DRAM read share,
beside the published curves (Mess) of the nearest platforms in the same colours.

Input: memstor.analysis.read_ratio's tables (``read_ratio_table``, ``reference_table``), the curve points
(memstor.analysis.memory_curves.curve_table) and the published points of those platforms
(memstor.analysis.reference_curves.load_mess_curves). Latency in ns, bandwidth in MB/s (10^6 B/s; GB/s on the figure's axis), shares in %.
"""

from __future__ import annotations

import matplotlib as mpl
import pandas as pd
from matplotlib.ticker import MaxNLocator

from memstor.analysis.read_ratio import main_family, nearest_share
from memstor.analysis.reference_curves import reference_caption
from memstor.report.plots import new_figure, per_host

LAT_LABEL = "latency (ns)"
#: GB/s on the axis (short tick labels in a narrow panel), as the memory figure of the synthesis draws it
BW_LABEL = "bandwidth (GB/s)"
#: The colour of a DRAM read share (0 … 100 %), the same in every panel.
SHARE_NORM = mpl.colors.Normalize(vmin=0, vmax=100)
SHARE_MAP = mpl.colormaps["viridis"]
#: Most curves the left panel names in a legend (beyond, it would hide them).
LEGEND_MAX = 6


def _share_line(ax, points: pd.DataFrame, share: float, **kw) -> None:
    """One curve in the colour of its DRAM read share (%), its points in load order: this machine's by inject
    delay (as measured; a noisy point stays where it was measured), a published one as published."""
    if "inject_delay" in points.columns:
        points = points.sort_values("inject_delay")
    ax.plot(points["bandwidth_MBps"] / 1e3, points["latency_ns"], color=SHARE_MAP(SHARE_NORM(share)), **kw)


@per_host
def family_figure(read_ratio: pd.DataFrame | None, curves: pd.DataFrame, reference: pd.DataFrame | None = None,
                  published: pd.DataFrame | None = None):
    """Latency (ns) against bandwidth (MB/s): the left panel this machine's read-ratio family (one line per
    curve, its colour its estimated DRAM read share), then one panel per nearest published platform
    (``reference``) with its published curves at the read shares nearest to this machine's, in the same
    colours, and this machine's read-only curve dashed for scale (a published curve is a whole socket's).
    None without a family of two read shares or more."""
    if read_ratio is None or read_ratio.empty or read_ratio["family_size"].max() < 2:
        return None
    family = main_family(read_ratio)
    platforms = list(reference["platform"]) if reference is not None and len(reference) else []
    n = 1 + len(platforms)
    ncols = min(n, 2)  # two panels a row (a row of four left each panel an inch: unreadable in print)
    nrows = -(-n // ncols)
    fig, axes = new_figure(ncols, nrows)
    fig.set_size_inches(10.0, 1.0 + 2.4 * nrows)  # printed at about 0.6 of this: 6 in wide, ~1.4 in per row
    for ax in axes[n:]:
        ax.set_visible(False)
    axes = axes[:n]
    own = axes[0]
    read_only = None
    for _, row in family.iterrows():
        pts = curves[curves["curve"] == row["curve"]]
        share = float(row["dram_read_pct_est"])
        _share_line(own, pts, share, marker="o", markersize=3, label=f"{share:.0f} % ({row['traffic']})")
        if row["traffic"] == "read-only":
            read_only = pts
    own.set_title(f"this machine\n({int(family['access_bytes'].iloc[0])} B, "
                  f"{int(family['load_threads'].iloc[0])} load thread(s))", fontsize="small")
    shares = family["dram_read_pct_est"].tolist()
    for ax, (_, near) in zip(axes[1:], (reference if reference is not None else pd.DataFrame()).iterrows()):
        pub = published[published["platform"] == near["platform"]] if published is not None else pd.DataFrame()
        for share in dict.fromkeys(nearest_share(pub["read_share_pct"], s) for s in shares):
            _share_line(ax, pub[pub["read_share_pct"] == share], share, linewidth=1.2)
        if read_only is not None:
            ordered = read_only.sort_values("inject_delay")
            ax.plot(ordered["bandwidth_MBps"] / 1e3, ordered["latency_ns"], color="0.2", linestyle="--", linewidth=1,
                    label="this machine, read-only")
        ax.set_title(f"Mess: {near['platform']}\n(distance {near['distance']:.2f})", fontsize="small")
    for k, ax in enumerate(axes):
        if k + ncols >= n:  # the bottom panel of each column names the axis (the same in every panel)
            ax.set_xlabel(BW_LABEL)
        if k % ncols == 0:
            ax.set_ylabel(LAT_LABEL)
        ax.set_xlim(left=0)
        ax.set_ylim(bottom=0)
        ax.xaxis.set_major_locator(MaxNLocator(4))
    # one legend for every panel, below them: the family's shares (the colour bar instead when there are more
    # than LEGEND_MAX; the table says the mix) and this machine's read-only curve drawn beside the published ones
    handles, labels = own.get_legend_handles_labels()
    if len(family) > LEGEND_MAX:
        handles, labels = [], []
        fig.colorbar(mpl.cm.ScalarMappable(norm=SHARE_NORM, cmap=SHARE_MAP), ax=axes, label="DRAM read share (%)",
                     shrink=0.8)
    for ax in axes[1:]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
                break
    if handles:  # beside the panels: below them it took the height the panels need
        fig.legend(handles, labels, loc="outside right lower", fontsize="small",
                   title="DRAM reads (mix)" if len(family) <= LEGEND_MAX else None, title_fontsize="small")
    return fig


def nearest_caption(reference: pd.DataFrame | None) -> str:
    """The figure caption's sentence naming the published platforms drawn, their log distance to this machine
    (memstor.analysis.read_ratio.reference_table) and the source; '' without any."""
    if reference is None or reference.empty:
        return ""
    names = ", ".join(f"{r['platform']} ({r['distance']:.2f})" for _, r in reference.iterrows())
    return (f"Nearest by log distance of unloaded latency and of latency at this host's highest bandwidth: {names}; "
            f"{reference_caption(reference['platform']).split(';')[0].removeprefix('Published curves: ')}.")
