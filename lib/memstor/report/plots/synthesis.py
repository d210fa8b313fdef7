"""Figures of the synthesis report: every host side by side, units on every axis, sized for print.

Each function takes tables from :mod:`memstor.analysis.synthesis` and returns a matplotlib Figure (or None when
there is nothing to draw). Hosts keep the same colour and marker in every figure (:func:`host_styles`).
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from memstor.report.plots import MARKERS, new_figure, size_label, style

#: Scale of memstor's standard panel (plots.PANEL_IN) for report figures: 2 panels fit a printed page.
SCALE = 0.72
#: Resolution of figures embedded in the report (sharp in the PDF, small enough for the HTML).
REPORT_DPI = 150


def show(fig) -> None:
    """Display `fig` once in a notebook and close it (no second copy from the inline backend)."""
    from IPython.display import display

    if fig is None:
        return
    display(fig)
    plt.close(fig)


def host_styles(hosts) -> dict:
    """{host: (colour, marker)} — stable over figures (sorted host names, colour-blind palette)."""
    import seaborn as sns

    hosts = sorted(set(hosts))
    colours = sns.color_palette("colorblind", max(len(hosts), 1))
    return {h: (colours[i % len(colours)], MARKERS[i % len(MARKERS)]) for i, h in enumerate(hosts)}


def _figure(ncols: int, nrows: int = 1, scale: float = SCALE, **kw):
    """(fig, axes) in the memstor style at report resolution."""
    style()
    fig, axes = new_figure(ncols=ncols, nrows=nrows, scale=scale, **kw)
    fig.set_dpi(REPORT_DPI)
    return fig, axes


def _thousands(ax, axis: str = "y") -> None:
    """Tick labels with thousands separators (1,000,000) on a linear or log axis."""
    fmt = FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}")
    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(fmt)


def _log2_x(ax, values) -> None:
    """Log2 x axis with a tick at every measured value (labels as plain integers)."""
    ax.set_xscale("log", base=2)
    vals = sorted({float(v) for v in values if v == v and v > 0})
    if vals:
        ax.set_xticks(vals)
        ax.set_xticklabels([f"{int(v)}" for v in vals], rotation=0 if len(vals) < 9 else 45)
        ax.xaxis.set_minor_formatter(NullFormatter())


# ------------------------------------------------------------------------------------- queue depth


def queue_depth_figure(qd: pd.DataFrame, fits: dict):
    """2 x 2 panels, randread and randwrite: (top) IOPS vs outstanding I/O N with the fitted bound
    min(N / R_min, X_max) and the knee N*; (bottom) mean latency vs IOPS (the latency-throughput knee)."""
    if qd is None or qd.empty:
        return None
    workloads = [w for w in ("randread", "randwrite") if (qd["rw"] == w).any()]
    styles = host_styles(qd["host"])
    fig, axes = _figure(ncols=2, nrows=2, scale=SCALE * 1.05)
    if len(workloads) == 1:
        axes = [axes[0], axes[2], axes[1], axes[3]]
        axes[2].set_visible(False)
        axes[3].set_visible(False)
    for j, rw in enumerate(workloads):
        top, bottom = axes[j], axes[len(workloads) + j]
        d = qd[qd["rw"] == rw]
        for host, g in d.groupby("host", sort=True):
            colour, marker = styles[host]
            sweep = g[g["in_sweep"]].sort_values("outstanding_io")
            other = g[~g["in_sweep"]]
            top.plot(sweep["outstanding_io"], sweep["iops"], marker=marker, color=colour, label=host)
            bottom.plot(sweep["iops"], sweep["lat_mean_us"], marker=marker, color=colour, label=host)
            if not other.empty:
                lab = f"{host}: spec / extra points"
                top.scatter(other["outstanding_io"], other["iops"], marker=marker, facecolors="none",
                            edgecolors=colour, s=70, zorder=3, label=lab)
                bottom.scatter(other["iops"], other["lat_mean_us"], marker=marker, facecolors="none",
                               edgecolors=colour, s=70, zorder=3)
            f = fits.get((host, rw))
            if f is None:
                continue
            n = np.geomspace(max(min(f.n_min, f.n_star) / 1.5, 0.5), max(f.n_max, f.n_star) * 1.5, 200)
            x = np.minimum(n / (f.r_min_us * 1e-6), f.x_max_iops)
            top.plot(n, x, ls="--", lw=1.3, color=colour, label=f"{host}: fitted bound")
            top.plot([f.n_star], [f.x_max_iops], marker="*", ms=15, color=colour, mec="black", ls="none")
            k = sorted(fits).index((host, rw)) if (host, rw) in fits else 0
            top.annotate(f"N* = {f.n_star:.1f}", (f.n_star, f.x_max_iops), textcoords="offset points",
                         xytext=(8, -16 - 12 * (k % 2)), fontsize=8, color=colour, fontweight="bold")
            bottom.plot(x, n / x * 1e6, ls="--", lw=1.3, color=colour)
            bottom.plot([f.x_max_iops], [f.r_min_us], marker="*", ms=15, color=colour, mec="black", ls="none")
        top.set_xscale("log", base=2)
        top.set_yscale("log")
        _log2_x(top, d["outstanding_io"])
        _thousands(top)
        top.yaxis.set_minor_formatter(NullFormatter())
        top.set_xlabel("outstanding I/O N (I/Os)")
        top.set_ylabel("throughput X (IOPS)")
        top.set_title(f"4K {rw}: throughput vs N", fontsize=10)
        bottom.set_xscale("log")
        bottom.set_yscale("log")
        _thousands(bottom, "x")
        _thousands(bottom)
        bottom.yaxis.set_minor_formatter(NullFormatter())
        bottom.xaxis.set_minor_formatter(NullFormatter())
        bottom.set_xlabel("throughput X (IOPS)")
        bottom.set_ylabel("mean latency R (µs)")
        bottom.set_title(f"4K {rw}: latency vs throughput", fontsize=10)
    handles, labels = axes[0].get_legend_handles_labels()
    for ax in axes[1:]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="outside lower center", ncol=min(3, len(labels)), fontsize=8)
    return fig


# ---------------------------------------------------------------------------------------- memory


def memory_figure(curves: pd.DataFrame, fits: dict):
    """One panel per host: loaded latency (ns) vs bandwidth (GB/s) per traffic, with the M/M/1-style
    fit R0 + a rho/(1 - rho) (dashed) and its knee (star, where queueing doubles the unloaded latency)."""
    if curves is None or curves.empty:
        return None
    hosts = sorted(curves["host"].unique())
    ncols = min(len(hosts), 3)
    nrows = math.ceil(len(hosts) / ncols)
    fig, axes = _figure(ncols=ncols, nrows=nrows, sharey=False)
    import seaborn as sns

    keys = sorted({(t, int(a)) for t, a in zip(curves["traffic"], curves["access_bytes"])})
    colours = dict(zip(keys, sns.color_palette("colorblind", max(len(keys), 1))))
    for ax, host in zip(axes, hosts):
        d = curves[curves["host"] == host]
        for i, ((tool, traffic, acc), g) in enumerate(d.groupby(["tool", "traffic", "access_bytes"], sort=True)):
            g = g.sort_values("bandwidth_MBps")
            colour = colours[(traffic, int(acc))]
            label = f"{traffic}, {int(acc)} B ({tool})"
            ax.plot(g["bandwidth_MBps"] / 1e3, g["latency_ns"], marker=MARKERS[i % len(MARKERS)], ls="none",
                    color=colour, label=label)
            f = fits.get((host, tool, traffic, acc))
            if f is None:
                continue
            bw = np.linspace(0, min(max(f.bw_max_MBps, f.knee_bw_MBps) * 1.02, f.peak_MBps * 0.995), 200)
            r = f.r0_ns + f.a_ns * (bw / f.peak_MBps) / (1 - bw / f.peak_MBps)
            ax.plot(bw / 1e3, r, ls="--", lw=1.3, color=colour, label=f"fit, R² = {f.r2:.3f}")
            ax.plot([f.knee_bw_MBps / 1e3], [f.knee_latency_ns], marker="*", ms=15, color=colour, mec="black",
                    ls="none")
        ax.set_xlabel("bandwidth (GB/s, 1 GB/s = 1000 MB/s)")
        ax.set_ylabel("loaded latency (ns)")
        ax.set_title(host)
        ax.set_xlim(left=0)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7.5, loc="upper left")
    for ax in axes[len(hosts):]:
        ax.set_visible(False)
    return fig


# ------------------------------------------------------------------------------------------ specs


def spec_figure(comp: pd.DataFrame):
    """Measured / spec ratio per spec value and host (log scale; 1 = the spec)."""
    if comp is None or comp.empty or comp["ratio"].isna().all():
        return None
    d = comp[comp["ratio"].notna()].copy()
    labels = list(dict.fromkeys(d["metric"]))
    hosts = sorted(d["host"].unique())
    styles = host_styles(hosts)
    height = max(2.4, 0.27 * len(labels) * max(len(hosts), 1) + 1.0)
    style()
    fig, ax = plt.subplots(figsize=(7.2, height), constrained_layout=True, dpi=REPORT_DPI)
    bar_h = 0.8 / max(len(hosts), 1)
    for k, host in enumerate(hosts):
        colour, _ = styles[host]
        g = d[d["host"] == host].set_index("metric")
        ys = [i + (k - (len(hosts) - 1) / 2) * bar_h for i in range(len(labels))]
        vals = [float(g.loc[m, "ratio"]) if m in g.index else np.nan for m in labels]
        ax.barh(ys, vals, height=bar_h * 0.9, color=colour, label=host)
        for y, v in zip(ys, vals):
            if v == v:
                ax.annotate(f"{v:.2f}", (v, y), textcoords="offset points", xytext=(3, -3), fontsize=7.5)
    ax.axvline(1.0, color="black", lw=1.2)
    lo, hi = float(d["ratio"].min()), float(d["ratio"].max())
    ax.set_xlim(min(lo, 1.0) / 1.6, max(hi, 1.0) * 1.8)
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels)
    ax.invert_yaxis()
    ax.set_xlabel("measured / spec (ratio; 1 = spec value, log scale)")
    ax.set_ylabel("spec value")
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(axis="y", visible=False)
    return fig


# ------------------------------------------------------------------------------------- block size


def block_size_figure(points: pd.DataFrame):
    """Bandwidth (MB/s) vs block size per workload, every host; at each host's usual queue depth."""
    if points is None or points.empty:
        return None
    d = points[points["rw"].isin(["randread", "randwrite", "read", "write"])]
    d = d[d["direction"] == np.where(d["rw"].str.contains("write"), "write", "read")]
    if "tables" in d.columns and d["tables"].str.contains("fio-block-size").any():
        d = d[d["tables"].str.contains("fio-block-size") | ~d["host"].isin(
            d.loc[d["tables"].str.contains("fio-block-size"), "host"])]
    keep = []
    for (_, _), g in d.groupby(["host", "rw"]):
        if g["bs_bytes"].nunique() < 2:
            continue
        counts = g.groupby("outstanding_io")["bs_bytes"].nunique()
        n = counts.idxmax()
        keep.append(g[g["outstanding_io"] == n])
    if not keep:
        return None
    d = pd.concat(keep)
    workloads = [w for w in ("randread", "randwrite", "read", "write") if (d["rw"] == w).any()]
    ncols = min(2, len(workloads))
    nrows = math.ceil(len(workloads) / ncols)
    styles = host_styles(d["host"])
    fig, axes = _figure(ncols=ncols, nrows=nrows)
    for ax, rw in zip(axes, workloads):
        g = d[d["rw"] == rw]
        for host, h in g.groupby("host", sort=True):
            colour, marker = styles[host]
            h = h.sort_values("bs_bytes")
            qd = f"QD{int(h['iodepth'].iloc[0])}×{int(h['numjobs'].iloc[0])}"
            ax.plot(h["bs_bytes"], h["bw_MBps"], marker=marker, color=colour, label=f"{host} ({qd})")
        ax.set_xscale("log", base=2)
        ticks = sorted(g["bs_bytes"].unique())
        ax.set_xticks(ticks)
        ax.set_xticklabels([size_label(t) for t in ticks], rotation=45 if len(ticks) > 5 else 0)
        ax.xaxis.set_minor_formatter(NullFormatter())
        _thousands(ax)
        ax.set_xlabel("block size (bytes, K = 1024)")
        ax.set_ylabel("bandwidth (MB/s, 10⁶ B/s)")
        ax.set_title(rw)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7.5)
    for ax in axes[len(workloads):]:
        ax.set_visible(False)
    return fig


# ----------------------------------------------------------------------------------------- Little


def littles_law_figure(little: pd.DataFrame):
    """Little's-law residual 100 (X R - N) / N (%) per queue-depth point and host."""
    if little is None or little.empty or little["residual_pct"].isna().all():
        return None
    styles = host_styles(little["host"])
    fig, axes = _figure(ncols=1, nrows=1, scale=SCALE)
    ax = axes[0]
    for (host, rw), g in little.groupby(["host", "rw"], sort=True):
        colour, marker = styles[host]
        g = g.sort_values("N_outstanding")
        ax.plot(g["N_outstanding"], g["residual_pct"], marker=marker, color=colour,
                ls="-" if rw == "randread" else ":", label=f"{host}, {rw}")
    ax.axhline(0, color="black", lw=1)
    ax.set_xscale("log", base=2)
    _log2_x(ax, little["N_outstanding"])
    ax.set_xlabel("outstanding I/O N (I/Os)")
    ax.set_ylabel("Little's-law residual (%)")
    ax.legend(fontsize=7.5)
    return fig
