"""Figures of the fio-steady-state experiment, drawn the way SNIA PTS reports draw them.

Input: the experiment's table ``<data>/processed/<device>/fio-steady-state.csv`` (one row per round of the
tracking workload; columns :data:`memstor.experiments.fio_steady_state.TABLE_COLUMNS`), one device or
several stacked (column ``host``: one line, panel or label per device). Only successful rounds are drawn
(``status`` done, ``iops`` present). The verdict, the measurement window, its average, excursions and
least-squares line are computed anew from the drawn IOPS with :mod:`memstor.analysis.steady_state` (the
rule that stopped the run); the preconditioning figures are read from the table.

Units: IOPS (I/O per s), rounds (1-based), data written in decimal GB (10^9 bytes), excursions in % of the
window average. Every figure function returns a matplotlib Figure, or None when there is nothing to draw.
"""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator

from memstor.analysis import steady_state as ss
from memstor.report.plots import MARKERS, new_figure, printing, size_label, thousands

IOPS_LABEL = "IOPS (I/O per s)"
ROUND_LABEL = "round (1-based)"
GB = 1e9  # decimal gigabyte, bytes
WRITTEN_LABEL = "data written, cumulative (GB, 10^9 B, preconditioning included)"
#: The bands the window figure draws around the window average (% of it): the PTS plot's 90 %-110 %
#: lines (all points inside them keep the range within the 20 % data-excursion limit) and ±20 %.
BANDS_PCT = (10.0, 20.0)
_BAND_ALPHA = {10.0: 0.16, 20.0: 0.07}
_BAND_STYLE = {10.0: "--", 20.0: ":"}


# --------------------------------------------------------------------------------------- table access


def _workload(ok: pd.DataFrame) -> str | None:
    """The tracking workload for a legend title, e.g. "4K random write, QD 32 x 4 jobs, 2 s rounds"; None
    when the devices ran different ones."""
    texts = {_workload_of(g) for _, g in ss.by_host(ok)}
    return texts.pop() if len(texts) == 1 else None


def _workload_of(g: pd.DataFrame) -> str:
    """One device's tracking workload, e.g. "4K random write, QD 32 x 4 jobs, 2 s rounds"."""
    bs, qd, nj, rs = (ss.run_value(g, c) for c in ("bs_bytes", "iodepth", "numjobs", "round_s"))
    parts = [f"{size_label(bs)} random write" if bs is not None else "random write"]
    if qd is not None:
        parts.append(f"QD {int(qd)} x {int(nj) if nj is not None else 1} jobs")
    if rs is not None:
        parts.append(f"{float(rs):g} s rounds")
    return ", ".join(parts)


def _legend(fig, ax, title: str | None) -> None:
    """The legend below the panel, titled with the workload (beside it, its long entries left the panel a third of
    the width in print: eighth reads S12-bare 11, S12-1cpu 13; inside it, they covered the rounds)."""
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=2, fontsize="small", title=title,
               title_fontsize="small")


def _seconds(s: float) -> str:
    """Seconds for a caption: two decimals below 100 s, whole seconds above."""
    return f"{s:.2f}" if s < 100 else f"{s:,.0f}"


def _round_axis(ax) -> None:
    """Integer round ticks."""
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(ROUND_LABEL)


# ------------------------------------------------------------------------------------------ figures


def _gated(verdicts: pd.DataFrame | None, host: str, v: dict) -> tuple[str, bool]:
    """(verdict, steady shown) of a device: from the gated verdict table (memstor.analysis.validity.gate
    .gate_steady: 'not valid: ...', 'not shown: ...'; ``valid`` and ``steady_shown``) where given, else the
    rule's own verdict and whether it was met."""
    row = None if verdicts is None or "host" not in verdicts else verdicts[verdicts["host"].astype(str) == str(host)]
    if row is None or row.empty:
        return str(v["verdict"]), bool(v["ss_achieved"])
    r = row.iloc[0]
    stands = all(c not in r.index or pd.isna(r[c]) or bool(r[c]) for c in ("valid", "steady_shown"))
    return str(r["verdict"]), bool(v["ss_achieved"]) and stands


#: Below this share of the highest round the lowest one is a collapse: the axis starts at 0 to give its scale.
ZERO_BASED_BELOW = 0.5


def _iops_limits(iops: pd.Series) -> tuple[float, float]:
    """(bottom, top) of the convergence figure's IOPS axis: from 0 where the rounds span more than half their
    highest value, else around them (a margin of 30 % of their range, at least 2 % of the highest, above, and
    twice that below for the steady-round note), so that a drift of a few % is not drawn flat (S6-bare C-6: 129,112 -> 119,661, 7.6 %, on an axis from
    0). The tick labels say where the axis starts."""
    y = pd.to_numeric(iops, errors="coerce").dropna().to_numpy(float)
    lo, hi = float(y.min()), float(y.max())
    if lo < ZERO_BASED_BELOW * hi:
        return 0.0, hi * 1.15
    pad = max(0.3 * (hi - lo), 0.02 * hi)
    return max(0.0, lo - 2 * pad), hi + pad


def convergence_figure(rounds: pd.DataFrame, verdicts: pd.DataFrame | None = None):
    """The PTS steady-state convergence plot: tracking IOPS per round (markers + line, one line per
    device), the measurement window's rounds shaded, the steady round annotated; the title holds the
    verdict (one line per device). IOPS against 1-based round. None without a successful round.
    verdicts: the gated verdict table (memstor.analysis.validity.gate.gate_steady): a run whose steady state the
    checks do not let stand is titled with its 'not valid' / 'not shown' verdict and its round annotated
    'window rule met at round N', never 'steady'."""
    ok = ss.done_rounds(rounds)
    hosts = ss.by_host(ok)
    if not hosts:
        return None
    multi = len(hosts) > 1
    fig, (ax,) = new_figure(1, scale=1.25)
    fig.set_size_inches(9.6, 5.0)  # printed at about 0.6 of this: the panel, its legend below it
    printing.compact(fig)
    titles = []
    for i, (host, g) in enumerate(hosts):
        colour, who = f"C{i}", (f"{host}: " if multi else "")
        ax.plot(g["round"], g["iops"], marker=MARKERS[i % len(MARKERS)], color=colour,
                label=host if multi else "tracking IOPS per round", gid=f"iops:{host}")
        v = ss.verdict_row(host, g)
        rnd = v["ss_round"]
        verdict, shown = _gated(verdicts, host, v)
        w = ss.window_of(g)
        if not w.empty:
            first, last = int(w["round"].iloc[0]), int(w["round"].iloc[-1])
            ax.axvspan(first - 0.4, last + 0.4, color=colour, alpha=0.12, gid=f"window:{host}",
                       label=f"{who}measurement window (rounds {first}-{last})")
            avg = float(np.mean(w["iops"].to_numpy(float)))
            # black and heavier than the tracking line where one host is drawn (tenth read S13-bare 6: a dashed line in
            # the series' own colour could not be told from it inside the window at print size)
            ax.hlines(avg, first - 0.4, last + 0.4, colors=colour if multi else "black", linestyles=(0, (4, 2)),
                      linewidth=2.2, zorder=4,
                      label=f"{who}window average {avg:,.0f} IOPS" + ("" if shown else " (not steady state)"))
        if v["ss_achieved"] and (g["round"] == int(rnd)).any():
            # ringed and named in the legend, not annotated on the panel (fifth reads: the text crossed the line)
            y = float(g.loc[g["round"] == int(rnd), "iops"].iloc[0])
            said = f"steady at round {int(rnd)}" if shown else f"window rule met at round {int(rnd)}"
            ax.plot([int(rnd)], [y], marker="o", markersize=14, markerfacecolor="none", markeredgewidth=1.5,
                    linestyle="none", color=colour, label=f"{who}{said}", gid=f"steady:{host}")
        titles.append(f"{who}{verdict}")
    _round_axis(ax)
    ax.set_ylabel(IOPS_LABEL)
    ax.set_ylim(*_iops_limits(ok["iops"]))
    thousands(ax.yaxis)
    _legend(fig, ax, _workload(ok))
    ax.set_title("\n".join(textwrap.fill(t, 90) for t in titles), fontsize="medium")
    fig.suptitle("Steady-state convergence (SNIA PTS)")
    return fig


def _window_panel(ax, host: str, w: pd.DataFrame, colour: str, marker: str, result: str) -> None:
    """One device's measurement window: IOPS, average, ±10 / ±20 % bands and the least-squares line."""
    x = w["round"].to_numpy(float)
    y = w["iops"].to_numpy(float)
    check = ss.window_check(y)
    avg = check.window_avg
    slope = ss.least_squares_slope(y)  # IOPS per round
    half = slope * (len(y) - 1) / 2.0  # the fitted line passes through (mean round, average)
    lo_x, hi_x = x[0] - 0.3, x[-1] + 0.3
    for pct in sorted(BANDS_PCT, reverse=True):
        lo, hi = avg * (1 - pct / 100), avg * (1 + pct / 100)
        ax.axhspan(lo, hi, color=colour, alpha=_BAND_ALPHA.get(pct, 0.1), linewidth=0)
        ax.plot([lo_x, hi_x], [hi, hi], color="0.35", linestyle=_BAND_STYLE.get(pct, "--"), linewidth=1,
                label=f"±{pct:g} % of the average", gid=f"band{pct:g}:high")
        ax.plot([lo_x, hi_x], [lo, lo], color="0.35", linestyle=_BAND_STYLE.get(pct, "--"), linewidth=1,
                gid=f"band{pct:g}:low")
    ax.plot([x[0], x[-1]], [avg, avg], color="black", linewidth=1.5,
            label=f"window average {avg:,.0f} IOPS", gid="average")
    ok_d = "met" if check.data_ok else "exceeded"
    ok_s = "met" if check.slope_ok else "exceeded"
    ax.plot(x, y, marker=marker, color=colour, linestyle="none", markersize=8, gid="iops",
            label=f"IOPS per round:\ndata excursion {check.data_excursion_pct:.1f} % "
                  f"(limit {ss.DATA_EXCURSION_PCT:g} %, {ok_d})")
    ax.plot([x[0], x[-1]], [avg - half, avg + half], color=colour, linestyle="-.", linewidth=2,
            label=f"least-squares fit {slope:+,.0f} IOPS/round:\nslope excursion "
                  f"{check.slope_excursion_pct:.1f} % (limit {ss.SLOPE_EXCURSION_PCT:g} %, {ok_s})",
            gid="slope")
    top = max(avg * (1 + max(BANDS_PCT) / 100), float(y.max())) * 1.05
    bottom = min(avg * (1 - max(BANDS_PCT) / 100), float(y.min())) * 0.95
    ax.set_ylim(bottom, top)
    ax.set_xlim(lo_x, hi_x)
    _round_axis(ax)
    ax.set_ylabel(IOPS_LABEL)
    thousands(ax.yaxis)
    # beside the panel, not in it: its entries are as wide as the panel is in print (the panel collapsed)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    who = f"{host}: " if host else ""
    ax.set_title(f"{who}measurement window, rounds {int(x[0])}-{int(x[-1])}\n{result}", fontsize="medium")


def window_figure(rounds: pd.DataFrame, verdicts: pd.DataFrame | None = None):
    """The PTS measurement-window plot, one panel per device with a window: the window's IOPS per round,
    the window average, ±10 % and ±20 % bands around it, the least-squares line (its ends are average ∓
    slope x 2 rounds), and the data / slope excursions (% of the average) against their limits 20 / 10 in
    the legend. IOPS against round. None when no device has a 5-round window. verdicts: as
    :func:`convergence_figure` (each panel's verdict from the gated table)."""
    hosts = ss.by_host(ss.done_rounds(rounds))
    panels = [(i, h, g, ss.window_of(g)) for i, (h, g) in enumerate(hosts)]
    panels = [p for p in panels if not p[3].empty]
    if not panels:
        return None
    multi = len(hosts) > 1
    fig, axes = new_figure(len(panels), scale=1.2)
    fig.set_size_inches(9.6 * len(panels), 4.6)  # printed at about 0.6 of this: the panel and its legend beside it
    for ax, (i, host, g, w) in zip(axes, panels):
        _window_panel(ax, host if multi else "", w, f"C{i}", MARKERS[i % len(MARKERS)],
                      textwrap.fill(_gated(verdicts, host, ss.verdict_row(host, g))[0], 70))
    fig.suptitle("Steady-state measurement window (SNIA PTS)")
    return fig


def written_figure(rounds: pd.DataFrame):
    """Tracking IOPS against the cumulative data written (decimal GB = bytes_written / 1e9, the
    preconditioning passes included), one line per device: the x offset of round 1 is the preconditioning
    (a vertical line, annotated "after preconditioning: X GB"), the window's rounds ringed. For one device
    a top axis counts span fills (data written / span_bytes). None without a successful round."""
    ok = ss.done_rounds(rounds)
    ok = ok[ok["bytes_written"].notna()] if "bytes_written" in ok.columns else ok.iloc[:0]
    hosts = ss.by_host(ok)
    if not hosts:
        return None
    multi = len(hosts) > 1
    fig, (ax,) = new_figure(1, scale=1.25)
    top = float(ok["iops"].max()) * 1.2
    for i, (host, g) in enumerate(hosts):
        colour, who = f"C{i}", (f"{host}: " if multi else "")
        gb = g["bytes_written"].to_numpy(float) / GB
        ax.plot(gb, g["iops"], marker=MARKERS[i % len(MARKERS)], color=colour,
                label=host if multi else "tracking IOPS per round", gid=f"iops:{host}")
        w = ss.window_of(g)
        if not w.empty:
            ax.plot(w["bytes_written"].to_numpy(float) / GB, w["iops"], marker="o", markersize=13,
                    markerfacecolor="none", markeredgecolor=colour, linestyle="none",
                    label=f"{who}measurement window", gid=f"window:{host}")
        pc = ss.run_value(g, "precondition_bytes")
        if pc is not None and not math.isnan(float(pc)):
            pc_gb = float(pc) / GB
            passes = ss.run_value(g, "precondition_passes")
            ax.axvline(pc_gb, color=colour, linestyle=":", linewidth=1.3, gid=f"precondition:{host}",
                       label=f"{who}end of preconditioning"
                             + (f" ({int(passes)} sequential passes)" if passes is not None else ""))
            ax.annotate(f"{who}after preconditioning: {pc_gb:,.2f} GB", (pc_gb, top * (0.95 - 0.07 * i)),
                        xytext=(4, 0), textcoords="offset points", fontsize="small", color=colour,
                        va="top", gid=f"precondition-text:{host}")
    ax.set_xlim(left=0)
    ax.set_ylim(0, top)
    ax.set_xlabel(WRITTEN_LABEL)
    ax.set_ylabel(IOPS_LABEL)
    thousands(ax.yaxis)
    span = ss.run_value(ok, "span_bytes")
    if not multi and span is not None and float(span) > 0:
        fills = float(span) / GB
        sec = ax.secondary_xaxis("top", functions=(lambda v: v / fills, lambda v: v * fills))
        sec.set_xlabel(f"span fills (span {fills:,.2f} GB, {ss.run_value(ok, 'span') or 'file'})", fontsize="small")
    _legend(fig, ax, _workload(ok))
    ax.set_title("IOPS vs data written", fontsize="medium")
    return fig


# ------------------------------------------------------------------------------------ table helpers


