"""Figures of the storage experiments (fio). Inputs are `memstor.analysis.storage.summary` tables (one row per
configuration x direction with <metric> (mean) / <metric>_ci_low / <metric>_ci_high and n), so the 95% confidence
interval is drawn as error bars whenever a point has repetitions. Every axis carries its unit.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from memstor.analysis.adaptive_grid import is_knee_point, knee_of
from memstor.core.schema import truthy
from memstor.report.plots import DASHES, MARKERS, new_figure, per_host, plain_log, size_label, thousands

RW_ORDER = ("randread", "randwrite", "read", "write", "randrw")
RW_LABEL = {"randread": "random read", "randwrite": "random write", "read": "sequential read",
            "write": "sequential write", "randrw": "random read/write"}
METRIC_LABEL = {
    "iops": "IOPS (I/O per s)",
    "bw_MBps": "throughput (MB/s, 10^6 B/s)",
    "lat_mean_us": "mean latency (µs)",
    "clat_p50_us": "p50 completion latency (µs)",
    "clat_p99_us": "p99 completion latency (µs)",
    "clat_p99_9_us": "p99.9 completion latency (µs)",
}


#: How a point the adaptive grid (iodepth: auto) added around the knee is marked, and its legend entry.
KNEE_MARK = {"marker": "o", "s": 170, "facecolors": "none", "edgecolors": "black", "linewidths": 1.3, "zorder": 4}
KNEE_LABEL = "added around the knee N* (adaptive grid)"


def grid_notes(summ: pd.DataFrame, grid: pd.DataFrame | None = None) -> pd.Series:
    """The ``grid_note`` of every row of `summ` (why an adaptive grid measured it; empty for a listed grid):
    its own column, else looked up by ``config`` in `grid` (the processed table, or
    memstor.analysis.adaptive_grid.grid_table)."""
    if "grid_note" in summ.columns:
        return summ["grid_note"]
    if grid is None or grid.empty or not {"config", "grid_note"} <= set(grid.columns) or "config" not in summ:
        return pd.Series(None, index=summ.index, dtype=object)
    notes = grid[grid["grid_note"].notna()].drop_duplicates("config").set_index("config")["grid_note"]
    return summ["config"].map(notes)


def _knee_marks(axes_xy, s: pd.DataFrame, grid, x: str) -> None:
    """Mark the points the adaptive grid added around the knee (hollow black rings) in every (ax, y) of
    `axes_xy`, x from column `x`; and in a panel against queue depth a dotted line per pattern at its knee
    N* = X_max · R(depth 1) (in depth: N* / jobs)."""
    knee = s[grid_notes(s, grid).map(is_knee_point).astype(bool)]
    if knee.empty:
        return
    for k, (ax, y) in enumerate(axes_xy):
        ax.scatter(knee[x], knee[y], label=KNEE_LABEL if k == 0 else None, **KNEE_MARK)
        if x != "iodepth":
            continue
        for i, rw in enumerate(_rws(s)):
            g = s[s["rw"] == rw]
            if not (knee["rw"] == rw).any():
                continue
            n_star = knee_of(zip(g["iodepth"], g["iops"], g["lat_mean_us"])).n_star
            jobs = float(g["numjobs"].dropna().iloc[0]) if g["numjobs"].notna().any() else 1.0
            if n_star is not None and n_star > 0:
                ax.axvline(n_star / jobs, color=f"C{i}", linestyle=":", linewidth=1.2,
                           label=f"{RW_LABEL.get(rw, rw)}: N* = {n_star:.1f}" if k == 0 else None)


def _no_spec(summ: pd.DataFrame) -> pd.DataFrame:
    """Rows that are not the spec-conditions point."""
    if "spec_point" in summ.columns:
        return summ[~summ["spec_point"].map(truthy)]
    return summ


def _spec_only(summ: pd.DataFrame) -> pd.DataFrame:
    """Rows of the spec-conditions point only."""
    if "spec_point" not in summ.columns:
        return summ.iloc[:0]
    return summ[summ["spec_point"].map(truthy)]


def _err(g: pd.DataFrame, metric: str):
    """Error-bar half-lengths (2 x n) from the 95% CI columns, or None without any CI. A value outside its own
    interval (its interval left out a window the value kept: validity check interval_holds_value) gets no bar,
    not a negative one (matplotlib refuses those: a standard make all failed on one such point)."""
    lo, hi = f"{metric}_ci_low", f"{metric}_ci_high"
    if lo not in g.columns or g[lo].isna().all():
        return None
    mean = g[metric].to_numpy(float)
    below, above = mean - g[lo].to_numpy(float), g[hi].to_numpy(float) - mean
    outside = (below < 0) | (above < 0)
    below[outside], above[outside] = 0.0, 0.0
    return np.vstack([np.nan_to_num(below), np.nan_to_num(above)])


def _series(ax, g: pd.DataFrame, x: str, metric: str, label: str, i: int, **kw) -> None:
    """One line with markers (and CI error bars) of metric_mean against x."""
    g = g.sort_values(x)
    y = g[metric].to_numpy(float)
    if np.all(np.isnan(y)):
        return
    ax.errorbar(g[x].to_numpy(float), y, yerr=_err(g, metric), label=label, marker=MARKERS[i % len(MARKERS)],
                dashes=DASHES[i % len(DASHES)] or (None, None), capsize=3, **kw)


def _log2_size_axis(ax, sizes) -> None:
    """x axis in log2 with block-size tick labels (4K, 8K, ... 1M)."""
    ax.set_xscale("log", base=2)
    ticks = sorted({int(s) for s in sizes if not pd.isna(s)})
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: size_label(v)))
    ax.set_xlabel("block size (bytes, K = 1024)")


def labelled_ticks(values) -> tuple[list, list]:
    """(labelled, unlabelled) ticks of a log2 depth axis: every measured value, except that when the powers of
    two among them are interleaved with other values (an adaptive grid's points around the knee) only the
    powers of two are labelled and the others are plain ticks, so the labels do not run into each other."""
    ticks = sorted({int(v) for v in values if not pd.isna(v) and v > 0})
    powers = [t for t in ticks if t & (t - 1) == 0]
    if len(powers) >= 2 and len(powers) < len(ticks):
        return powers, [t for t in ticks if t not in powers]
    return ticks, []


def _log2_depth_axis(ax, depths, label: str = "queue depth (outstanding I/Os per job)") -> None:
    """x axis in log2 with integer queue-depth ticks (:func:`labelled_ticks`)."""
    ax.set_xscale("log", base=2)
    ticks, others = labelled_ticks(depths)
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(FixedLocator(others) if others else NullLocator())
    ax.xaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{int(round(v))}"))
    if len(ticks) > 8:
        ax.tick_params(axis="x", labelrotation=45)
    ax.set_xlabel(label)


def _rws(summ: pd.DataFrame) -> list:
    present = list(dict.fromkeys(summ["rw"].dropna()))
    return [r for r in RW_ORDER if r in present] + [r for r in present if r not in RW_ORDER]


def _empty(ax, what: str) -> None:
    ax.text(0.5, 0.5, f"no successful {what} measurement", ha="center", va="center", transform=ax.transAxes)


def _y_axis(ax, log: bool) -> None:
    """y from 0 with thousands separators, or log with plain numbers."""
    if log:
        ax.set_yscale("log")
        plain_log(ax.yaxis)
    else:
        ax.set_ylim(bottom=0)
        thousands(ax.yaxis)


def _pattern_panels(s: pd.DataFrame, x: str, x_axis, panels):
    """Two panels side by side, one series per access pattern (95% CI bars) in each. `panels`: two
    (metric, log y, title); `x_axis(ax, values)` draws the x axis of `x`. Returns (fig, left, right)."""
    fig, axes = new_figure(2)
    for i, rw in enumerate(_rws(s)):
        g = s[s["rw"] == rw]
        for ax, (metric, _, _) in zip(axes, panels):
            _series(ax, g, x, metric, RW_LABEL.get(rw, rw), i)
    for ax, (metric, log, title) in zip(axes, panels):
        x_axis(ax, s[x])
        _y_axis(ax, log)
        ax.set_ylabel(METRIC_LABEL[metric])
        ax.set_title(title)
    return fig, *axes


def _titled(fig, title: str):
    """The figure with `title` as its suptitle (none when empty)."""
    if title:
        fig.suptitle(title)
    return fig


def _block_size_figure(summ: pd.DataFrame, panels, title: str):
    """Two metrics vs block size (log2 axis), one line per access pattern, the queue depth in the legend."""
    s = summ[summ["direction"] != "total"]
    fig, a1, _ = _pattern_panels(s, "bs_bytes", _log2_size_axis, panels)
    a1.legend(title=_qd_title(s), fontsize="small")
    return _titled(fig, title)


@per_host
def block_size_throughput(summ: pd.DataFrame, title: str = ""):
    """IOPS and MB/s vs block size (log2 axis), one line per access pattern; returns the figure."""
    return _block_size_figure(summ, (("iops", False, "IOPS vs block size"),
                                     ("bw_MBps", False, "Throughput vs block size")), title)


def _qd_title(s: pd.DataFrame) -> str:
    qd, nj = s["iodepth"].dropna().unique(), s["numjobs"].dropna().unique()
    if len(qd) == 1 and len(nj) == 1:
        return f"QD {int(qd[0])} x {int(nj[0])} job(s)"
    return ""


@per_host
def block_size_latency(summ: pd.DataFrame, title: str = ""):
    """Mean and p99 latency vs block size (log2 x, log y), one line per access pattern."""
    return _block_size_figure(summ, (("lat_mean_us", True, "Mean latency vs block size"),
                                     ("clat_p99_us", True, "p99 latency vs block size")), title)


@per_host
def rw_ratio(summ: pd.DataFrame, title: str = ""):
    """Per block size: stacked read + write IOPS vs read share (%), and mean latency of read, write and
    total vs read share. `summ` = summary(with_totals(df))."""
    summ = summ.assign(rwmixread=[_read_share(m, rw) for m, rw in zip(summ["rwmixread"], summ["rw"])])
    summ = summ[summ["rwmixread"].notna()]
    sizes = sorted(summ["bs_bytes"].dropna().unique())
    # one row per block size, IOPS and latency side by side (a column per size, two panels high, left each
    # panel under an inch in print)
    fig, axes = new_figure(2, max(len(sizes), 1))
    fig.set_size_inches(10.0, 0.8 + 3.8 * max(len(sizes), 1))
    for j, bs in enumerate(sizes):
        top, bottom = axes[2 * j], axes[2 * j + 1]
        g = summ[summ["bs_bytes"] == bs]
        shares = sorted(g["rwmixread"].dropna().unique())
        x = np.arange(len(shares))
        base = np.zeros(len(shares))
        for k, (d, hatch) in enumerate((("read", ""), ("write", "//"))):
            gd = g[g["direction"] == d].set_index("rwmixread").reindex(shares)
            y = np.nan_to_num(gd["iops"].to_numpy(float))
            top.bar(x, y, 0.6, bottom=base, label=d, hatch=hatch, color=f"C{k}", edgecolor="black", linewidth=0.5)
            base = base + y
        tot = g[g["direction"] == "total"].set_index("rwmixread").reindex(shares)
        if "iops_ci_low" in tot and tot["iops_ci_low"].notna().any():
            top.errorbar(x, tot["iops"], yerr=_err(tot.reset_index(), "iops"), fmt="none", ecolor="black",
                         capsize=4, label="total, 95% CI")
        top.set_xticks(x, [f"{int(v)}" for v in shares])
        top.set_xlabel("read share (% of I/Os, rwmixread)")
        top.set_ylabel(METRIC_LABEL["iops"])
        thousands(top.yaxis)
        top.set_title(f"{size_label(bs)} random read/write: IOPS")
        top.legend(fontsize="small")
        for i, d in enumerate(("read", "write", "total")):
            gd = g[g["direction"] == d]
            gd = gd[gd["lat_mean_us"].notna()]
            _series(bottom, gd, "rwmixread", "lat_mean_us", d, i)
        bottom.set_xlabel("read share (% of I/Os, rwmixread)")
        bottom.set_ylabel(METRIC_LABEL["lat_mean_us"])
        bottom.set_xticks([float(v) for v in shares])
        bottom.set_ylim(bottom=0)
        bottom.set_title(f"{size_label(bs)}: mean latency")
        bottom.legend(fontsize="small")
    if not sizes:
        _empty(axes[0], "read/write")
    return _titled(fig, title)


def _read_share(mix, rw) -> float:
    """Read share (%) of a point: rwmixread, or 100 / 0 for a pure read / write pattern."""
    if not pd.isna(mix):
        return float(mix)
    if rw in ("randread", "read"):
        return 100.0
    if rw in ("randwrite", "write"):
        return 0.0
    return math.nan


@per_host
def throughput_latency(summ: pd.DataFrame, title: str = "", grid: pd.DataFrame | None = None):
    """The throughput-latency curve: mean latency vs IOPS, one line per pattern, each point labelled
    with its queue depth; the spec-conditions point drawn as a star; the points an adaptive grid added around
    the knee ringed (their ``grid_note``, in `summ` or by config in `grid`: the processed table)."""
    s = summ[summ["direction"] != "total"]
    fig, (ax,) = new_figure(1, scale=1.25)
    curve = _no_spec(s)
    _knee_marks([(ax, "lat_mean_us")], curve[curve["iops"].notna()], grid, "iops")
    for i, rw in enumerate(_rws(s)):
        g = curve[curve["rw"] == rw].sort_values("outstanding_io")
        g = g[g["iops"].notna()]
        if g.empty:
            continue
        ax.errorbar(g["iops"], g["lat_mean_us"], xerr=_err(g, "iops"), yerr=_err(g, "lat_mean_us"),
                    marker=MARKERS[i], dashes=DASHES[i] or (None, None), label=RW_LABEL.get(rw, rw),
                    color=f"C{i}", capsize=3)
        for _, r in g.iterrows():
            ax.annotate(_qd_text(r), (r["iops"], r["lat_mean_us"]), textcoords="offset points",
                        xytext=(-6, 6), ha="right", fontsize="x-small", color=f"C{i}",
                        bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.8})
        spec = _spec_only(s[s["rw"] == rw])
        for _, r in spec.iterrows():
            if pd.isna(r["iops"]):
                continue
            ax.plot(r["iops"], r["lat_mean_us"], marker="*", markersize=15, color=f"C{i}",
                    markeredgecolor="black", linestyle="none",
                    label=f"{RW_LABEL.get(rw, rw)}, spec point QD {int(r['iodepth'])} x {int(r['numjobs'])} jobs")
    ax.set_yscale("log")
    ax.margins(x=0.08, y=0.12)  # room for the star markers and the QD labels at the edges
    plain_log(ax.yaxis)
    thousands(ax.xaxis)
    ax.set_xlabel(METRIC_LABEL["iops"])
    ax.set_ylabel(METRIC_LABEL["lat_mean_us"])
    ax.set_xlim(left=0)
    ax.set_title("Throughput-latency curve (labels: queue depth)")
    ax.legend(fontsize="small")
    return _titled(fig, title)


def _qd_text(r) -> str:
    nj = int(r["numjobs"]) if not pd.isna(r["numjobs"]) else 1
    return f"QD{int(r['iodepth'])}" + (f"x{nj}" if nj > 1 else "")


@per_host
def qd_percentiles(summ: pd.DataFrame, title: str = ""):
    """p50 / p99 / p99.9 completion latency vs queue depth (log2 x, log y), one panel per pattern."""
    s = _no_spec(summ[summ["direction"] != "total"])
    rws = _rws(s)
    fig, axes = new_figure(max(len(rws), 1), sharey=True)
    for ax, rw in zip(axes, rws):
        g = s[s["rw"] == rw]
        for i, m in enumerate(("clat_p50_us", "clat_p99_us", "clat_p99_9_us")):
            _series(ax, g, "iodepth", m, m.replace("clat_", "").replace("_us", "").replace("_", "."), i)
        _log2_depth_axis(ax, g["iodepth"])
        ax.set_yscale("log")
        plain_log(ax.yaxis)
        ax.set_ylabel("completion latency (µs)")
        ax.set_title(f"{RW_LABEL.get(rw, rw)} latency percentiles")
        ax.legend(fontsize="small")
    if not rws:
        _empty(axes[0], "queue-depth")
    return _titled(fig, title)


@per_host
def qd_iops(summ: pd.DataFrame, title: str = "", grid: pd.DataFrame | None = None):
    """IOPS and mean latency vs queue depth (log2 x), one line per pattern. An adaptive grid's points added
    around the knee are ringed and each pattern's knee N* = X_max · R(depth 1) is a dotted line (their
    ``grid_note``, in `summ` or by config in `grid`: the processed table)."""
    s = _no_spec(summ[summ["direction"] != "total"])
    fig, a1, a2 = _pattern_panels(s, "iodepth", _log2_depth_axis, (
        ("iops", False, "IOPS vs queue depth"), ("lat_mean_us", True, "Mean latency vs queue depth")))
    _knee_marks([(a1, "iops"), (a2, "lat_mean_us")], s, grid, "iodepth")
    a1.legend(fontsize="small")
    return _titled(fig, title)


@per_host
def latency_cdf(cdfs: pd.DataFrame, title: str = ""):
    """Completion-latency distribution from json+ bins, one line per `label`: the CDF (left) and the
    tail 1 - CDF on a log axis (right, where p99 and p99.9 are readable). Latency axis log, in µs."""
    fig, (a1, a2) = new_figure(2)
    for i, (label, g) in enumerate(cdfs.groupby("label", sort=False)):
        style = {"color": f"C{i}", "linestyle": ("-", "--", ":", "-.")[i % 4], "label": label}
        a1.step(g["clat_us"], g["cdf"], where="post", **style)
        tail = 1.0 - g["cdf"].to_numpy(float)
        keep = tail > 0
        a2.step(g["clat_us"].to_numpy(float)[keep], tail[keep], where="post", **style)
    a1.axhline(0.5, color="gray", linewidth=0.8, linestyle=":")
    a1.text(0.02, 0.52, "p50", transform=a1.get_yaxis_transform(), fontsize="x-small")
    a1.set_ylabel("cumulative fraction of I/Os")
    a1.set_ylim(0, 1.01)
    a1.set_title("Latency CDF")
    a2.set_yscale("log")
    for q, name in ((1e-2, "p99"), (1e-3, "p99.9")):
        a2.axhline(q, color="gray", linewidth=0.8, linestyle=":")
        a2.text(0.02, q * 1.15, name, transform=a2.get_yaxis_transform(), fontsize="x-small")
    a2.set_ylabel("fraction of I/Os slower (1 − CDF)")
    a2.set_title("Latency tail")
    for ax in (a1, a2):
        ax.set_xlabel("completion latency (µs, log scale)")
        if cdfs.empty:
            _empty(ax, "json+ latency histogram")
        else:
            ax.set_xscale("log")
            plain_log(ax.xaxis)
    if not cdfs.empty:
        a1.legend(fontsize="small", loc="lower right")
    fig.suptitle(title or "Latency distribution at QD 1 and at saturation")
    return fig


@per_host
def littles_law(table: pd.DataFrame, tol_pct: float = 5.0, title: str = ""):
    """Little's-law residual (%) vs intended outstanding I/O, with the ±tol band; flagged points hollow."""
    fig, (ax,) = new_figure(1, scale=1.1)
    t = table[table["residual_pct"].notna()] if not table.empty else table
    for i, (rw, g) in enumerate(t.groupby("rw", sort=False)):
        ok, bad = g[~g["flagged"]], g[g["flagged"]]
        ax.plot(ok["outstanding_io"], ok["residual_pct"], marker=MARKERS[i], linestyle="none", color=f"C{i}",
                label=f"{RW_LABEL.get(rw, rw)}")
        if not bad.empty:
            ax.plot(bad["outstanding_io"], bad["residual_pct"], marker=MARKERS[i], linestyle="none",
                    markerfacecolor="none", color=f"C{i}", label=f"{RW_LABEL.get(rw, rw)} (flagged)")
    ax.axhspan(-tol_pct, tol_pct, color="green", alpha=0.12, label=f"±{tol_pct:g}%")
    ax.axhline(0, color="gray", linewidth=0.8)
    if not t.empty:
        _log2_depth_axis(ax, t["outstanding_io"], "outstanding I/O (QD x jobs)")
        lim = max(tol_pct * 2, float(np.nanmax(np.abs(t["residual_pct"]))) * 1.15)
        ax.set_ylim(-lim if math.isfinite(lim) else -10, lim if math.isfinite(lim) else 10)
    else:
        _empty(ax, "queue-depth")
    ax.set_ylabel("residual (X·R − N) / N (%)")
    ax.set_title("Little's law: IOPS x mean latency vs outstanding I/O")
    ax.legend(fontsize="small")
    return _titled(fig, title)
