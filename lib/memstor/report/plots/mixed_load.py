"""The mixed-load map (issue 41): read p99 over (write MB/s offered, read IOPS offered), the target contours,
and the read capacity at each write rate.

Inputs: ``cells``, the tidy cell table (memstor.experiments.mixed_load_map's table, or ``memstor parse --kind
diskplorer``'s: one row per cell x direction, columns ``write_offered_MBps`` (decimal MB/s), ``read_offered_iops``,
``direction``, ``resp_p99_us`` (µs, from the intended arrival), ``open_loop``); ``curve``,
memstor.analysis.mixed_load.capacity_curve's table. Cells whose loop did not hold are drawn as gray crosses and
never coloured or contoured: their latency is not what the offered load gave; held cells of a write rate where too
few held (memstor.analysis.mixed_load.credible) as hollow gray circles, not coloured either. :func:`drawn` says in
words what a map draws (its caption). Returns a Figure, or None when there is no cell.
"""

from __future__ import annotations

import math

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.colors import LogNorm
from matplotlib.ticker import LogLocator

from memstor.analysis import mixed_load
from memstor.report.plots import new_figure, per_host, plain_log, thousands

MAP_CMAP = "viridis"
NOT_HELD = "loop not held"
#: Held cells of a write rate where too few cells held to read them (memstor.analysis.mixed_load.credible).
TOO_FEW = "held, but too few cells of its write rate held: not read"
UNCHECKED = "loop not checked (imported; latency from submission)"
CAPACITY = "read capacity, p99 ≤ {target} (bars: bracket; ▲/▼: beyond the grid)"


def _target_text(us: float) -> str:
    return f"{us / 1000:g} ms" if us >= 1000 else f"{us:g} µs"


def _contours(ax, held: pd.DataFrame, targets) -> None:
    """Contour lines of log10(read p99) at the targets over the held cells (a triangulation: needs three cells
    not on one line)."""
    x, y, z = (held[c].to_numpy(float) for c in ("write_offered_MBps", "read_iops", "read_p99_us"))
    if len(held) < 3 or len(np.unique(x)) < 2 or len(np.unique(y)) < 2:
        return
    try:
        tri = matplotlib.tri.Triangulation(x, y)
        levels = sorted(math.log10(t) for t in targets)
        cs = ax.tricontour(tri, np.log10(z), levels=levels, colors="black", linewidths=1.2, linestyles="--")
        ax.clabel(cs, fmt={lv: f"p99 {_target_text(10 ** lv)}" for lv in levels}, fontsize=8)
    except (ValueError, RuntimeError):  # a degenerate triangulation: the map without contours
        return


def drawn(cells: pd.DataFrame, curve: pd.DataFrame | None = None, unchecked_as_held: bool = False) -> list[str]:
    """What :func:`map_figure` draws for these cells, in words for its caption (never a mark it does not draw):
    the coloured cells, the held cells not read, the crosses, the contours (three coloured cells not on one line),
    the capacity diamonds and arrow heads."""
    if cells is None or cells.empty:
        return []
    rc = mixed_load.read_cells(cells, unchecked_as_held=unchecked_as_held)
    ok = mixed_load.credible(rc)
    held, out = rc[ok], []
    if len(held):
        out.append(f"colour: read p99 of the {len(held)} held cell{'s' if len(held) > 1 else ''}")
    if (rc["held"] & ~ok).any():
        out.append(f"hollow circles: {TOO_FEW}")
    if (~rc["held"]).any():
        out.append(f"gray crosses: {NOT_HELD}")
    if len(held) >= 3 and held["write_offered_MBps"].nunique() > 1 and held["read_iops"].nunique() > 1:
        out.append("dashed: the targets' contours over the coloured cells")
    if curve is not None and len(curve):
        if pd.to_numeric(curve["read_capacity_iops"], errors="coerce").notna().any():
            out.append("diamonds: the read capacity at each write rate (bars: its bracket)")
        if curve["censored"].isin(["above_grid", "below_grid"]).any():
            out.append("▲/▼: a capacity beyond the grid")
    return out


@per_host
def map_figure(cells: pd.DataFrame, curve: pd.DataFrame | None = None, targets_us=(), unchecked_as_held: bool = False):
    """The map: each cell at (write MB/s offered, read IOPS offered), coloured by its read p99 (log scale);
    dashed contours at the targets; the capacity curve of each target on top (IOPS, bracket as error bars).
    unchecked_as_held: imported cells whose loop was never checked (diskplorer's) are coloured too, as hollow
    squares labelled so (memstor.analysis.mixed_load.read_cells)."""
    if cells is None or cells.empty:
        return None
    rc = mixed_load.read_cells(cells, unchecked_as_held=unchecked_as_held)
    if rc.empty:
        return None
    fig, (ax,) = new_figure()
    fig.set_size_inches(7.5, 3.4)  # wide: the report prints a short, wide box (a tall one shrank to nothing)
    held = rc[mixed_load.credible(rc)]  # coloured: a held cell among mostly failed ones is not read (R-bare M-14)
    few = rc[rc["held"] & ~rc.index.isin(held.index)]
    lost = rc[~rc["held"]]
    if len(held):
        low, high = max(1.0, float(held["read_p99_us"].min())), float(held["read_p99_us"].max())
        if high <= low * 1.2:  # one value (or nearly): a scale around it, not a degenerate one
            low, high = low / 1.5, max(high, low) * 1.5
        norm = LogNorm(vmin=low, vmax=high)
        for loop, marker, face in (("held", "o", None), ("not checked", "s", "none")):
            part = held[held["loop"] == loop]
            if part.empty:
                continue
            colours = matplotlib.colormaps[MAP_CMAP](norm(part["read_p99_us"].to_numpy(float)))
            ax.scatter(part["write_offered_MBps"], part["read_iops"], s=90, marker=marker, zorder=3,
                       facecolors="none" if face else colours, edgecolors=colours if face else "black",
                       linewidths=1.8 if face else 0.5, label=UNCHECKED if face else None)
        bar = fig.colorbar(matplotlib.cm.ScalarMappable(norm=norm, cmap=MAP_CMAP), ax=ax,
                           label="read p99 response (µs)")
        bar.ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))  # labels inside a narrow range too
        plain_log(bar.ax.yaxis)
        _contours(ax, held, targets_us)
    if len(lost):
        ax.scatter(lost["write_offered_MBps"], lost["read_iops"], marker="x", color="0.5", s=60, zorder=3,
                   label=NOT_HELD)
    if len(few):
        ax.scatter(few["write_offered_MBps"], few["read_iops"], marker="o", facecolors="none", edgecolors="0.4",
                   s=70, linewidths=1.5, zorder=3, label=TOO_FEW)
    if curve is not None and len(curve):
        for i, (target, g) in enumerate(curve.groupby("target_us", sort=True)):
            g = g.sort_values("write_offered_MBps")
            y = g["read_capacity_iops"].to_numpy(float)
            lo = np.where(np.isnan(y), np.nan, y - g["ci_low_iops"].to_numpy(float))
            hi = np.where(np.isnan(y), np.nan, g["ci_high_iops"].to_numpy(float) - y)
            colour = f"C{i + 1}"
            label: str | None = CAPACITY.format(target=_target_text(float(target)))
            if np.isfinite(y).any():
                ax.errorbar(g["write_offered_MBps"], y, yerr=[np.nan_to_num(lo), np.nan_to_num(hi)], marker="D",
                            ms=6, capsize=3, color=colour, zorder=4, label=label)
                label = None
            for side, col, marker in (("above_grid", "ci_low_iops", "^"), ("below_grid", "ci_high_iops", "v")):
                cen = g[g["censored"] == side]
                if len(cen):  # the capacity lies beyond the grid: the bound it is known to pass, as an arrow head
                    ax.scatter(cen["write_offered_MBps"], cen[col], marker=marker, s=80, color=colour, zorder=4,
                               label=label)
                    label = None
    for setter, values in ((ax.set_xlim, rc["write_offered_MBps"]), (ax.set_ylim, rc["read_iops"])):
        first, last = float(values.min()), float(values.max())
        pad = 0.08 * (last - first) if last > first else max(1.0, 0.1 * abs(last))
        setter(first - pad, last + pad)  # room around the outermost cells (a marker on the axis edge is cut)
    ax.set_xlabel("writes offered (MB/s, 10^6 B/s)")  # S20-bare 7: a superscript prints at 5 pt
    ax.set_ylabel("reads offered (IOPS)")
    thousands(ax.yaxis)
    if ax.get_legend_handles_labels()[0]:  # inside, where it covers the fewest cells: the printed figure is a
        # short, wide box, and a legend beside or below the axes squeezes them to nothing
        ax.legend(loc="best", fontsize=7, framealpha=0.85)
    return fig


def any_read(cells: pd.DataFrame) -> bool:
    """Some cell of one device's map is drawn coloured (read: held, among enough held cells of its write rate)."""
    return cells is not None and len(cells) > 0 and bool(mixed_load.credible(mixed_load.read_cells(cells)).any())


def show_maps(figs, mixed: pd.DataFrame, capacity: pd.DataFrame, read: bool) -> None:
    """Each device's map through ``figs.show`` (the notebook's figure counter), one per device (never two pooled),
    captioned with what it draws — only the maps with a cell read (`read` True: the report's body), or only those
    with none (False: the HTML's appendix, where a map of marks alone is kept out of the PDF)."""
    targets = sorted(set(capacity["target_us"])) if capacity is not None and len(capacity) else []
    for host, cells in mixed.groupby("host", sort=True):
        if any_read(cells) != read:
            continue
        curve = capacity[capacity["host"] == host] if capacity is not None and len(capacity) else None
        figs.show(map_figure(cells, curve, targets),
                  f"{host}: read p99 (µs, from the intended arrival) over writes offered (MB/s) and reads offered "
                  "(IOPS); " + "; ".join(drawn(cells, curve)) + ".")
