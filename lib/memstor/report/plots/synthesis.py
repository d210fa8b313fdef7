"""Figures of the synthesis report: every host side by side, units on every axis, sized for print.

Each function takes tables from :mod:`memstor.analysis.synthesis` and returns a matplotlib Figure (or None when
there is nothing to draw). Hosts keep the same colour and marker in every figure (:func:`host_styles`).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

from memstor.analysis import queueing
from memstor.analysis.adaptive_grid import is_knee_point
from memstor.analysis.curves import HOOK, PLATEAU
from memstor.analysis.memory_curves import legend_labels
from memstor.analysis.spread import DISAGREE_RATIO, disagreeing
from memstor.analysis.storage_fit import CLOSED
from memstor.core.schema import missing
from memstor.report.figure_numbers import CAPTION_KEY
from memstor.report.plots import MARKERS, new_figure, size_label, style
from memstor.report.plots.memory_captions import (  # noqa: F401 (the notebook and tests call them as figs.*)
    memory_caption,
    memory_figure_caption,
    memory_panels,
    panel_all_failed,
)
from memstor.report.plots.printing import compact, fit_for_print
from memstor.report.plots.storage import KNEE_LABEL, KNEE_MARK, labelled_ticks

#: Scale of memstor's standard panel (plots.PANEL_IN) for report figures: 2 panels fit a printed page.
SCALE = 0.72
#: Resolution of figures embedded in the report (sharp in the PDF, small enough for the HTML).
REPORT_DPI = 150


#: The report's figure numbers, in the order the notebook shows them (one notebook run, one sequence).
_FIGURE_NUMBERS = itertools.count(1)


def show(fig, caption: str = "") -> None:
    """Display `fig` once in a notebook and close it (no second copy from the inline backend), sized as the PDF
    prints it (memstor.report.plots.printing.fit_for_print: no text under 7 pt, no overlapping tick labels); with
    a caption, the next figure number and the caption under it ("Figure 3. ...", markdown)."""
    from IPython.display import Markdown, display  # notebooks only: IPython is not needed to build figures

    if fig is None:
        return
    fig.set_dpi(REPORT_DPI)  # sharp in the PDF whatever dpi the figure was drawn at; the printed size is the same
    text = f"*Figure {next(_FIGURE_NUMBERS)}.* {caption}" if caption else ""
    # the caption rides with the figure too (output metadata CAPTION_KEY): the PDF sets both as one unit that a
    # page break never splits, and leaves out the caption's own output; the HTML shows that output
    display(fit_for_print(fig), metadata={CAPTION_KEY: text} if text else None)
    plt.close(fig)
    if text:
        display(Markdown(text), metadata={CAPTION_KEY: True})


def host_styles(hosts) -> dict:
    """{host: (colour, marker)} — stable over figures (sorted host names, colour-blind palette)."""
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


def _log_thousands(ax, axis: str = "y") -> None:
    """A log throughput axis whose labels can be read: where its data span less than a factor 4, major ticks at 3-4
    evenly spaced values (50,000, 100,000, 150,000); less than a decade, at 1, 2, 3 and 5 per decade; where fewer than two powers of ten lie among them (S6-bare C-10: bare's 13,398-150,645 IOPS
    showed 100,000 alone), at 1, 2 and 5; thousands separators."""
    which = ax.yaxis if axis == "y" else ax.xaxis
    lo, hi = which.get_data_interval()
    decades = math.floor(math.log10(hi)) - math.ceil(math.log10(lo)) + 1 if lo > 0 and hi > 0 else 2
    if lo > 0 and hi / lo < 4:  # S12-loop 11: 64,727-169,769 IOPS showed 100,000 alone
        which.set_major_locator(MaxNLocator(nbins=4, steps=[1, 2, 2.5, 5, 10]))  # evenly spaced values
    elif lo > 0 and hi / lo < 10:
        which.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 3.0, 5.0)))
    elif decades < 2:
        which.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    _thousands(ax, axis)
    which.set_minor_formatter(NullFormatter())


def _log2_x(ax, values) -> None:
    """Log2 x axis with a tick at every measured value (labels as plain integers; between interleaved powers
    of two only those are labelled: memstor.report.plots.storage.labelled_ticks)."""
    ax.set_xscale("log", base=2)
    vals, others = labelled_ticks(values)
    if vals:
        ax.set_xticks(vals)
        ax.set_xticklabels([f"{int(v)}" for v in vals], rotation=0 if len(vals) < 9 else 45)
        ax.set_xticks(others, minor=True)
        ax.xaxis.set_minor_formatter(NullFormatter())


# ------------------------------------------------------------------------------------- queue depth


def _below_measured(f, x_best: float) -> bool:
    """Whether a knee fit's whole 95 % interval of N* lies below the measured bound X_best · R(N_min) (X_best: the
    most the sweep measured, IOPS): the text states no such knee, and the figure draws none."""
    high = getattr(f, "n_star_ci_high", float("nan"))
    return bool(np.isfinite(high) and _measured_bound(f, x_best) > high)


def _measured_bound(f, x_best: float) -> float:
    """The closed-system bound X_best · R(N_min) of a knee fit (I/Os in flight; X_best IOPS, R_min measured µs)."""
    return x_best * f.r_min_measured_us * 1e-6


def queue_depth_figure(qd: pd.DataFrame, fits: dict, grid: pd.DataFrame | None = None):
    """2 x 2 panels, randread and randwrite: (top) IOPS vs outstanding I/O N with the two-asymptote fit
    min(N / R_min, X_max) and the knee N*; (bottom) mean latency vs IOPS (the latency-throughput knee).
    Points an adaptive grid added around the knee (`grid`: memstor.analysis.adaptive_grid.grid_table) are
    ringed. A fit whose N* interval lies below the measured bound is not drawn (_below_measured)."""
    if qd is None or qd.empty:
        return None
    added = set()
    if grid is not None and not grid.empty:
        added = {(h, c) for h, c, n in zip(grid["host"], grid["config"], grid["grid_note"]) if is_knee_point(n)}
    workloads = [w for w in ("randread", "randwrite") if (qd["rw"] == w).any()]
    styles = host_styles(qd["host"])
    fig, axes = _figure(ncols=2, nrows=2, scale=SCALE * 1.05)
    fig.set_size_inches(10.0, 5.8)  # printed at about 0.6 of this: 6 x 3.3 in, two rows of readable panels
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
            ringed = g[[(host, c) in added for c in g["config"]]] if added and "config" in g else g.iloc[:0]
            if not ringed.empty:
                top.scatter(ringed["outstanding_io"], ringed["iops"], **KNEE_MARK,
                            label=None if KNEE_LABEL in top.get_legend_handles_labels()[1] else KNEE_LABEL)
                bottom.scatter(ringed["iops"], ringed["lat_mean_us"], **KNEE_MARK)
            f = fits.get((host, rw))
            if f is None or _below_measured(f, float(g["iops"].max())):
                continue
            n = np.geomspace(max(min(f.n_min, f.n_star) / 1.5, 0.5), max(f.n_max, f.n_star) * 1.5, 200)
            x = queueing.closed_bound_iops(n, f.r_min_us, f.x_max_iops)
            top.plot(n, x, ls="--", lw=1.3, color=colour, label=f"{host}: two-asymptote fit")
            bottom.plot(x, queueing.closed_bound_latency_us(n, f.r_min_us, f.x_max_iops), ls="--", lw=1.3,
                        color=colour)
            if _measured_bound(f, float(g["iops"].max())) > f.n_star:  # S22-cpu1 2, S23-cpu1 6: a fitted
                continue  # knee below the measured bound is no knee to mark (the text says to quote the bound)
            top.plot([f.n_star], [f.x_max_iops], marker="*", ms=15, color=colour, mec="black", ls="none")
            k = sorted(fits).index((host, rw)) if (host, rw) in fits else 0
            top.annotate(f"N* = {f.n_star:.1f}", (f.n_star, f.x_max_iops), textcoords="offset points",
                         xytext=(10, -20 - 12 * (k % 2)), fontsize=8, color=colour, fontweight="bold")  # S19-1cpu 6
            bottom.plot([f.x_max_iops], [f.r_min_us], marker="*", ms=15, color=colour, mec="black", ls="none")
        top.set_xscale("log", base=2)
        top.set_yscale("log")
        _log2_x(top, d["outstanding_io"])
        _log_thousands(top)
        top.set_xlabel("outstanding I/O N (I/Os)")
        top.set_ylabel("throughput X (IOPS)")
        top.set_title(f"4K {rw}", fontsize=10)  # the column's workload; each axis names its quantity
        bottom.set_xscale("log")
        bottom.set_yscale("log")
        _log_thousands(bottom, "x")
        bottom.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v / 1000:,.4g}k"))  # '50k': unrotated (C-10)
        _log_thousands(bottom)  # S9-bare C-6: randwrite's 118-1,005 µs read '1,000' alone on decade ticks
        bottom.set_xlabel("throughput X (IOPS)")
        bottom.set_ylabel("mean latency R (µs)")
    handles, labels = axes[0].get_legend_handles_labels()
    for ax in axes[1:]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    # three columns when the labels are short; long host names in two (a wider legend set the figure's width)
    ncol = min(3 if sum(map(len, labels)) <= 80 else 2, len(labels))
    fig.legend(handles, labels, loc="outside lower center", ncol=ncol, fontsize=8)
    return fig


# ---------------------------------------------------------------------------------------- memory


def _draw_curve(ax, cf, colour, marker: str, x_div: float) -> set:
    """One latency–throughput curve (memstor.analysis.curves.CurveFit) on `ax`: the points (hollow in a
    hook), a thick outline on the plateau points with a dotted vertical line at the plateau's throughput,
    the open-queue model dashed over its fit range only, and a star where the measured latency reaches
    2·R0. x_div divides the throughput for the axis (1e3: MB/s -> GB/s). Returns the marks drawn (keys of
    :data:`CURVE_MARKS`)."""
    drawn = set()
    hook = cf.role == HOOK
    plateau = cf.role == PLATEAU
    ax.plot(cf.x[~hook] / x_div, cf.r[~hook], marker=marker, ls="none", color=colour)
    if hook.any():
        ax.plot(cf.x[hook] / x_div, cf.r[hook], marker=marker, ls="none", mfc="none", mec=colour, mew=1.5)
        drawn.add("hook")
    if plateau.any():
        ax.plot(cf.x[plateau] / x_div, cf.r[plateau], marker=marker, ls="none", color=colour, mec="black", mew=1.3)
        ax.vlines(cf.sat.x_sat / x_div, float(cf.r[plateau].min()), float(cf.r[plateau].max()), colors=colour,
                  linestyles=":", lw=1.6)
        drawn.add("plateau")
    lo, hi = cf.x_fit_range
    if cf.identifiable and hi == hi:
        xs = np.linspace(lo, hi, 150)
        ax.plot(xs / x_div, cf.latency(xs), ls="--", lw=1.3, color=colour)
        drawn.add("fit")
    bw2, _ = cf.x_at_level.get(2.0, (math.nan, ""))
    if bw2 == bw2:
        ax.plot([bw2 / x_div], [2 * cf.model.r0], marker="*", ms=13, color=colour, mec="black", ls="none")
        drawn.add("2r0")
    return drawn


#: The marks of a latency–throughput panel: key -> (legend handle, legend text, the name said when absent).
CURVE_MARKS: dict[str, tuple[dict, str, str]] = {
    "fit": (dict(ls="--", color="0.3"), "fit R0 + a·ρ/(1−ρ), over its fit range", "model fit"),
    "plateau": (dict(marker="o", ls="none", color="0.6", mec="black", mew=1.3),
                "plateau (saturated; dotted: its throughput)", "plateau"),
    "hook": (dict(marker="o", ls="none", mfc="none", mec="0.3", mew=1.5), "hook (beyond the maximum)", "hook"),
    "2r0": (dict(marker="*", ms=11, color="0.5", mec="black", ls="none"), "measured latency = 2·R0", "2·R0"),
}


def _curve_legend_extras(drawn: set | None = None) -> tuple[list, list]:
    """(handles, texts) explaining the marks a latency–throughput panel shows: each mark drawn on it (all of
    them when `drawn` is None), then one line naming the marks these curves do not have ('none in these
    curves: plateau, hook'), so that a caption promising a mark is answered by the figure."""
    drawn = set(CURVE_MARKS) if drawn is None else drawn
    handles = [Line2D([], [], **CURVE_MARKS[k][0]) for k in CURVE_MARKS if k in drawn]
    texts = [CURVE_MARKS[k][1] for k in CURVE_MARKS if k in drawn]
    absent = [CURVE_MARKS[k][2] for k in CURVE_MARKS if k not in drawn]
    if absent:
        handles.append(Line2D([], [], ls="none"))
        texts.append("none in these curves: " + ", ".join(absent))
    return handles, texts


#: The mark over a memory point whose run failed memstor's quality gate.
GATE_MARK: dict[str, Any] = dict(marker="x", ls="none", color="black", ms=5, mew=1.0)


def _mark_gate_failed(ax, g: pd.DataFrame) -> set:
    """A black × over the points of one curve (its curve_table rows) whose runs failed the quality gate
    (``gate_failed`` > 0); {'gate'} when there was one, else set()."""
    bad = g[pd.to_numeric(g.get("gate_failed", pd.Series(0, index=g.index)), errors="coerce").fillna(0) > 0]
    if bad.empty:
        return set()
    ax.plot(bad["bandwidth_MBps"] / 1e3, bad["latency_ns"], **GATE_MARK)
    return {"gate"}


def memory_figure(curves: pd.DataFrame, fits: dict, panel: tuple[str, float] | None = None):
    """Loaded latency (ns) vs bandwidth (GB/s): one panel per host x access size (title: the host, plus the
    access size when the host has several), mean points per curve (95 % intervals as error bars when
    repeated); the analysis of memstor.analysis.curves on top: plateau points outlined with a dotted line
    at the plateau's bandwidth, hook points hollow, the open-queue model dashed over its fit range only
    (never beyond the data; not drawn when not identifiable) and a star where the measured latency
    reaches 2·R0. Each panel's legend sits outside it, to the right, and names only the settings that
    differ between curves (memstor.analysis.memory labels), with "saturated" or "peak not identifiable". `panel`
    (:func:`memory_panels`): that panel alone."""
    if curves is None or curves.empty:
        return None
    d = curves.assign(_host=curves["host"].map(lambda v: "?" if missing(v) else str(v)),
                      _acc=curves["access_bytes"].map(lambda v: -1.0 if missing(v) else float(v)))
    panels = sorted({(h, a) for h, a in zip(d["_host"], d["_acc"])})
    if panel is not None:  # one panel of them (memory_panels), titled as in the whole figure
        panels = [p for p in panels if p == panel]
        if not panels:
            return None
    per_host = d.groupby("_host")["_acc"].nunique()
    labels = legend_labels(d)
    keys = list(dict.fromkeys(labels.values()))
    colours = dict(zip(keys, sns.color_palette("colorblind", max(len(keys), 1))))
    style()
    fig, axes_grid = plt.subplots(len(panels), 1, figsize=(7.2, 2.9 * len(panels)), squeeze=False,
                                  constrained_layout=True, dpi=REPORT_DPI)
    axes = list(axes_grid.flat)
    for ax, (host, acc) in zip(axes, panels):
        p = d[(d["_host"] == host) & (d["_acc"] == acc)]
        handles, texts, drawn = [], [], set()
        for curve, g in p.groupby("curve", sort=False):
            label = labels[curve]
            colour, marker = colours[label], MARKERS[keys.index(label) % len(MARKERS)]
            f = fits.get((host, curve))
            g = g.sort_values("bandwidth_MBps")
            if (g["n"] > 1).any():
                yerr = [(g["latency_ns"] - g["latency_ns_ci_low"]).fillna(0),
                        (g["latency_ns_ci_high"] - g["latency_ns"]).fillna(0)]
                ax.errorbar(g["bandwidth_MBps"] / 1e3, g["latency_ns"], yerr=yerr, ls="none", color=colour,
                            capsize=2, lw=1)
            if f is None:
                ax.plot(g["bandwidth_MBps"] / 1e3, g["latency_ns"], marker=marker, ls="none", color=colour)
                state = "no analysis"
            else:
                drawn |= _draw_curve(ax, f, colour, marker, 1e3)
                state = ("saturated" if f.saturated else "no plateau") + \
                    ("" if f.identifiable else ", peak not identifiable")
            handles.append(Line2D([], [], marker=marker, ls="none", color=colour))
            texts.append(f"{label} ({state})")
            drawn |= _mark_gate_failed(ax, g)
        extra_h, extra_t = _curve_legend_extras(drawn - {"gate"})
        if "gate" in drawn:  # S6-bare C-11: 13 of 18 points failed a gate and were drawn unmarked
            extra_h.insert(0, Line2D([], [], **GATE_MARK))
            extra_t.insert(0, "× failed memstor's quality gate (memory_gate)")
        ax.legend(handles + extra_h, texts + extra_t, fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0),
                  borderaxespad=0)
        ax.set_xlabel("bandwidth (GB/s, 1 GB/s = 1000 MB/s)")
        ax.set_ylabel("loaded mean latency (ns)")
        size = f"{int(acc)} B accesses" if acc >= 0 else "? B accesses"
        ax.set_title(host if per_host[host] == 1 else f"{host}, {size}")
        ax.set_xlim(0, float(p["bandwidth_MBps"].max()) * 1.08 / 1e3)   # the data's range, nothing beyond
        high = pd.concat([p["latency_ns"], p.get("latency_ns_ci_high", p["latency_ns"])]).max()
        ax.set_ylim(0, max(ax.get_ylim()[1], float(high) * 1.08))  # S9-bare C-8: the 323 ns point was cut off
    return compact(fig)  # its legend beside the panel: one panel prints in the compact box


def storage_curve_figure(fits: dict):
    """Mean latency (µs) vs throughput (IOPS) of every storage curve analysed by memstor.analysis.curves
    (Synthesis.storage_fits: (host, kind, rw) -> CurveFit): one panel per workload, closed queue-depth
    sweep solid markers and open loop squares, with the same marks as :func:`memory_figure` (plateau,
    hook, model over its fit range, measured 2·R0), legend outside to the right. None when there is no
    storage curve."""
    if not fits:
        return None
    workloads = sorted({rw for _, _, rw in fits})
    styles = host_styles({h for h, _, _ in fits})
    style()
    # one panel per workload, its legend beside it on short lines (on one line each, the legends left the panels
    # under an inch wide in print); printed at about 0.6 of this size
    fig, axes_grid = plt.subplots(len(workloads), 1, figsize=(10.0, 0.6 + 2.6 * len(workloads)), squeeze=False,
                                  constrained_layout=True, dpi=REPORT_DPI)
    axes = list(axes_grid.flat)
    for ax, rw in zip(axes, workloads):
        handles, texts, drawn = [], [], set()
        for (host, kind, w), cf in sorted(fits.items()):
            if w != rw:
                continue
            colour, _ = styles[host]
            marker = "o" if kind == CLOSED else "s"
            drawn |= _draw_curve(ax, cf, colour, marker, 1.0)
            handles.append(Line2D([], [], marker=marker, ls="none", color=colour))
            state = ("saturated" if cf.saturated else "no plateau") + ("" if cf.identifiable else
                                                                        ", peak not identifiable")
            texts.append(f"{host}, {kind}\n({state})")
        extra_h, extra_t = _curve_legend_extras(drawn)
        ax.legend(handles + extra_h, texts + extra_t, fontsize=7, loc="upper left", bbox_to_anchor=(1.08, 1.0),
                  borderaxespad=0)  # clear of the last x tick label, centred on the panel's edge
        ax.xaxis.set_major_locator(MaxNLocator(4))
        _thousands(ax, "x")
        ax.set_xlabel("throughput X (IOPS)")
        ax.set_ylabel("mean latency R (µs)")
        ax.set_title(rw)
        ax.set_xlim(left=0)
        ax.set_ylim(bottom=0)
    return fig


# ------------------------------------------------------------------------------------------ specs


def spec_figure(comp: pd.DataFrame):
    """Measured / spec ratio per spec value and host (log scale; 1 = the spec); a ratio whose target is not the
    sheet's drive (``comparable`` False) is not drawn, as the table gives none (R-loop X.1: bars at 0.23-0.99
    beside 'No ratio is given where it is marked not comparable'); None where no ratio is left."""
    if comp is None or comp.empty or comp["ratio"].isna().all():
        return None
    keep = comp["comparable"].fillna(True).astype(bool) if "comparable" in comp.columns else True
    d = comp[comp["ratio"].notna() & keep].copy()
    if d.empty:
        return None
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
        apart = [m in g.index and "comparable" in g.columns and not bool(g.loc[m, "comparable"]) for m in labels]
        ax.barh(ys, vals, height=bar_h * 0.9, color=colour, label=host)
        for y, v, a in zip(ys, vals, apart):
            if v == v:
                ax.annotate(f"{v:.2f}" + (" not comparable" if a else ""), (v, y), textcoords="offset points",
                            xytext=(3, -3), fontsize=7.5, bbox={"fc": "white", "ec": "none", "pad": 0.5})
    ax.axvline(1.0, color="black", lw=1.2)
    lo, hi = float(d["ratio"].min()), float(d["ratio"].max())
    said = "comparable" in d.columns and not d["comparable"].fillna(True).astype(bool).all()
    ax.set_xlim(min(lo, 1.0) / 1.6, max(hi, 1.0) * (8.0 if said else 1.8))  # room for "not comparable" beside
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels)
    ax.invert_yaxis()
    ax.set_xlabel("measured / spec (ratio; 1 = spec value, log scale)")
    ax.set_ylabel("spec value")
    ax.legend(fontsize=8, loc="upper right" if said else "lower right")
    ax.grid(axis="y", visible=False)
    return fig


# ------------------------------------------------------------------------------------- block size


def block_size_figure(points: pd.DataFrame):
    """Bandwidth (MB/s) vs block size per workload, every host; at each host's usual queue depth. A host with a
    block-size sweep (fio-block-size) is drawn from its rows alone — points of other experiments (XSR's access
    groups, run in another drive state) are not repetitions of them; sequential reads and writes are drawn even
    at one block size (the headline's sequential points)."""
    if points is None or points.empty:
        return None
    d = points[points["rw"].isin(["randread", "randwrite", "read", "write"])]
    d = d[d["direction"] == np.where(d["rw"].str.contains("write"), "write", "read")]
    for col in ("tables", "experiment"):  # a host with a block-size sweep: its rows only (not XSR's, another state)
        if col in d.columns and d[col].astype(str).str.contains("fio-block-size").any():
            own = d[col].astype(str).str.contains("fio-block-size")
            d = d[own | ~d["host"].isin(d.loc[own, "host"])]
    keep = []
    for (_, rw), g in d.groupby(["host", "rw"]):
        if g["bs_bytes"].nunique() < (1 if rw in ("read", "write") else 2):  # a sequential point: one block
            continue
        counts = g.groupby("outstanding_io")["bs_bytes"].nunique()
        n = counts.idxmax()
        keep.append(g[g["outstanding_io"] == n])
    if not keep:
        return None
    d = pd.concat(keep)
    workloads = [w for w in ("randread", "randwrite", "read", "write") if (d["rw"] == w).any()]
    styles = host_styles(d["host"])
    multi = d["host"].nunique() > 1
    # one row of panels (a 2 x 2 grid left each panel a sliver of the printed height); printed at about 0.6
    # of this size, 6 in wide
    fig, axes = _figure(ncols=len(workloads), nrows=1)
    fig.set_size_inches(min(10.0, 1.0 + 3.0 * len(workloads)), 4.0)
    if not multi:  # one device: named above the panels, its queue depth in their titles, no legend
        fig.suptitle(str(d["host"].iloc[0]), fontsize="medium")
        compact(fig)  # the row prints 2.4 in high
    rings: set = set()
    rings_drawn = None
    for ax, rw in zip(axes, workloads):
        g = d[d["rw"] == rw]
        qds, ring = [], None
        for host, h in g.groupby("host", sort=True):
            colour, marker = styles[host]
            h = h.sort_values("bs_bytes")
            qd = f"QD{int(h['iodepth'].iloc[0])}×{int(h['numjobs'].iloc[0])}"
            qds.append(qd)
            ax.plot(h["bs_bytes"], h["bw_MBps"], marker=marker, color=colour, label=f"{host} ({qd})")
            ring = _ring_disagreeing(ax, points, h, rings) or ring
        ax.set_xscale("log", base=2)
        ticks = sorted(g["bs_bytes"].unique())
        ax.set_xticks(ticks)
        ax.set_xticklabels([size_label(t) for t in ticks], rotation=45 if len(ticks) > 5 else 0)
        ax.xaxis.set_minor_formatter(NullFormatter())
        _thousands(ax)
        if ax is axes[0]:
            ax.set_ylabel("bandwidth (MB/s, 10^6 B/s)")  # S20-bare 7: a superscript prints at 5 pt
        ax.set_title(rw if multi else f"{rw}, {qds[0]}")  # one device: its queue depth in the title, no legend
        ax.set_ylim(bottom=0)
        if multi:
            ax.legend(fontsize=7.5)
        rings_drawn = rings_drawn or ring
    # one x label under the row (a label per panel ran into its neighbour's in print) and one bandwidth scale for
    # the row, numbered on the first panel only (four sets of tick labels left each panel under 1.1 in in print)
    if rings_drawn is not None and not multi:  # one device, no legend: the rings said beside its name
        fig.suptitle(f"{d['host'].iloc[0]} (red {DISAGREED_LABEL})", fontsize="medium")
    fig.supxlabel("block size (bytes, K = 1024)", fontsize="medium")
    top = max(a.get_ylim()[1] for a in axes[:len(workloads)])  # each panel's own top, before they share one
    for ax in axes[1:len(workloads)]:
        ax.sharey(axes[0])
        ax.tick_params(labelleft=False)
    axes[0].set_ylim(bottom=0, top=top)
    return fig


#: Legend of a ring round a block-size point another experiment measured beyond DISAGREE_RATIO from it.
DISAGREED_LABEL = f"ringed: another run of this configuration >{DISAGREE_RATIO:g}× apart"


def _ring_disagreeing(ax, points: pd.DataFrame, h: pd.DataFrame, rings: set):
    """A red ring round each of h's points whose configuration another FRESH experiment measured beyond
    DISAGREE_RATIO from it (fourth read R-1cpu M3: Figure 1 drew 47,150 IOPS unmarked beside 76,512 elsewhere);
    one legend entry per figure. Returns the rings' Line2D, None when none."""
    bad = [i for i, r in h.iterrows() if "iops" in h.columns and r["iops"] == r["iops"]
           and not disagreeing(points, str(r["host"]), r).empty]
    if not bad:
        return None
    (line,) = ax.plot(h.loc[bad, "bs_bytes"], h.loc[bad, "bw_MBps"], linestyle="none", marker="o", markersize=12,
            markerfacecolor="none", markeredgecolor="tab:red", markeredgewidth=1.4, gid="disagreed",
            label=DISAGREED_LABEL if not rings else "_nolegend_")
    rings.add("ring")
    return line


# ----------------------------------------------------------------------------------------- Little


def littles_law_figure(little: pd.DataFrame):
    """Little's-law residual 100 (X R - N) / N (%) per configuration of the queue-depth sweeps (4K random,
    single direction) and device, with the ±5 % band; flagged configurations hollow."""
    if little is None or little.empty:
        return None
    little = little[(little["bs_bytes"] == 4096) & little["rw"].isin(["randread", "randwrite"])
                    & ~little["spec_point"].astype(bool) & little["residual_pct"].notna()]
    if little.empty:
        return None
    styles = host_styles(little["host"])
    fig, axes = _figure(ncols=1, nrows=1, scale=SCALE)
    fig.set_size_inches(9.0, 4.0)  # printed at about 0.6 of this: the panel and its legend beside it
    compact(fig)
    ax = axes[0]
    for (host, rw), g in little.groupby(["host", "rw"], sort=True):
        colour, marker = styles[host]
        g = g.sort_values("outstanding_io")
        ax.plot(g["outstanding_io"], g["residual_pct"], color=colour, ls="-" if rw == "randread" else ":",
                label=f"{host}, {rw}")
        for flagged, part in g.groupby("flagged"):
            ax.plot(part["outstanding_io"], part["residual_pct"], marker=marker, ls="none", color=colour,
                    markerfacecolor="none" if flagged else colour)
    ax.axhspan(-5, 5, color="green", alpha=0.12, label="±5 % band")
    ax.axhline(0, color="black", lw=1)
    ax.set_xscale("log", base=2)
    _log2_x(ax, little["outstanding_io"])
    ax.set_xlabel("outstanding I/O N (I/Os)")
    ax.set_ylabel("Little's-law residual (%)")
    ax.legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    return fig
