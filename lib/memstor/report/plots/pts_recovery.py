"""Figures of the SNIA PTS recovery tests: host idle recovery (fio-pts-hir) and cross-stimulus recovery
(fio-pts-xsr).

- :func:`hir_figure`: the IOPS of every point of a HIR run (fio's own count over each segment) against its time
  since the test's first I/O (s, or min beyond :data:`MINUTES_FROM_S`), drawn at the segment's middle: the
  preconditioning rounds (grey), the access segments coloured by wait state (each wait state's stretch
  shaded and labelled), the returns to baseline (black squares), and the baseline (steady-state IOPS under
  continuous writes, dashed, its 95 % interval shaded). Input: ``fio-pts-hir.csv``.
- :func:`xsr_figure`: the per-second throughput (MB/s = 10^6 B/s) of a XSR run against time (s since the test's
  first I/O), one colour per access group; each transition a solid vertical line, each settle time a dotted
  one with its seconds (a group at its level from the first second: said beside the transition, no second
  line), each group's final level a thin horizontal line over the group. Input:
  ``fio-pts-xsr-seconds.csv`` and memstor.analysis.pts_recovery.xsr_table. The axis is logarithmic when the
  groups differ by more than :data:`LOG_RATIO` (SEQ 1024 KiB and RND 8 KiB often do).

Several devices: one figure per device (memstor.report.plots.per_host). Each function returns a matplotlib
Figure, or None when there is nothing to draw.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from memstor.report.plots import MARKERS, new_figure, per_host, plain_log, thousands

IOPS_LABEL = "IOPS (I/O per s, each point's mean)"
MBPS_LABEL = "throughput (MB/s, 10^6 B/s, 1-s intervals)"
#: Time axes in minutes once the run is longer than this (s).
MINUTES_FROM_S = 1200.0
#: A logarithmic throughput axis when max / min of the plotted seconds exceeds this.
LOG_RATIO = 10.0


def _num(df: pd.DataFrame, col: str) -> pd.Series:
    return pd.to_numeric(df[col], errors="coerce") if col in df.columns else pd.Series(np.nan, index=df.index)


def _time_axis(t_max: float) -> tuple[float, str]:
    """(divisor, label) of the time axis: seconds, or minutes for long runs."""
    if t_max > MINUTES_FROM_S:
        return 60.0, "time since the test's first I/O (min)"
    return 1.0, "time since the test's first I/O (s)"


def _hir_points(rows: pd.DataFrame | None) -> pd.DataFrame | None:
    """The measured write rows with a start time and IOPS, ``t_mid_s`` added; None when there are none."""
    if rows is None or not len(rows) or not {"phase", "t_start_s", "iops"} <= set(rows.columns):
        return None
    r = rows[rows["direction"].fillna("write") == "write"] if "direction" in rows.columns else rows
    r = r.assign(t_start_s=_num(r, "t_start_s"), iops=_num(r, "iops"), runtime_s=_num(r, "runtime_s").fillna(0),
                 wait_s=_num(r, "wait_s"))
    r = r[np.isfinite(r["t_start_s"].to_numpy(float)) & np.isfinite(r["iops"].to_numpy(float))]
    return r.assign(t_mid_s=r["t_start_s"] + r["runtime_s"] / 2.0) if len(r) else None


def _baseline(ax, r: pd.DataFrame, div: float, t_max: float) -> None:
    """The baseline as a dashed line, its interval shaded (when the table has them)."""
    base = _num(r, "baseline_iops").dropna()
    if not len(base):
        return
    ax.axhline(float(base.iloc[0]), color="black", linestyle="--", linewidth=1.2,
               label="baseline: steady state, continuous writes", gid="hir:baseline")
    lo, hi = _num(r, "baseline_ci_low").dropna(), _num(r, "baseline_ci_high").dropna()
    if len(lo) and len(hi):
        ax.fill_between([0, t_max / div], float(lo.iloc[0]), float(hi.iloc[0]), color="black", alpha=0.08,
                        linewidth=0)


@per_host
def _wait_label(acc: pd.DataFrame, wait: float) -> str:
    """'wait 0.5 s\n(1.12 s idle)': the planned wait over the mean idle measured (s) before the counted segments
    (segment >= 2); the planned wait alone where no idle was recorded (fio's restart adds 0.3-0.5 s)."""
    idle = _num(acc[_num(acc, "segment") >= 2], "idle_s").dropna() if "idle_s" in acc else pd.Series(dtype=float)
    return f"wait {wait:g} s\n({idle.mean():.3g} s idle)" if len(idle) else f"wait {wait:g} s"


def hir_figure(rows: pd.DataFrame | None):
    """IOPS per point against time with the wait states marked and the baseline (module docstring); None
    without a measured point."""
    r = _hir_points(rows)
    if r is None:
        return None
    t_max = float((r["t_start_s"] + r["runtime_s"]).max())
    div, xlabel = _time_axis(t_max)
    fig, (ax,) = new_figure(scale=1.35)
    pc = r[r["phase"] == "precondition"]
    ax.plot(pc["t_mid_s"] / div, pc["iops"], "o", color="0.55", markersize=5, label="preconditioning rounds",
            gid="hir:precondition")
    waits = sorted(r.loc[r["phase"] == "access", "wait_s"].dropna().unique())
    for j, wait in enumerate(waits):
        g = r[(r["wait_s"] == wait) & (r["phase"] != "precondition")]
        acc = g[g["phase"] == "access"]
        colour = f"C{j % 10}"
        ax.axvspan(g["t_start_s"].min() / div, (g["t_start_s"] + g["runtime_s"]).max() / div, color=colour,
                   alpha=0.07, linewidth=0)
        ax.plot(acc["t_mid_s"] / div, acc["iops"], MARKERS[j % len(MARKERS)], color=colour, markersize=5,
                label=f"access segments, wait {wait:g} s", gid=f"hir:wait:{wait:g}")
        ax.annotate(_wait_label(acc, wait), (g["t_start_s"].min() / div, 1.0), xycoords=("data", "axes fraction"),
                    xytext=(2, -2), textcoords="offset points", va="top", fontsize="small", color=colour)
    ret = r[r["phase"] == "return"]
    ax.plot(ret["t_mid_s"] / div, ret["iops"], "X", color="black", markersize=7, label="returns to baseline",
            gid="hir:return")
    _baseline(ax, r, div, t_max)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(IOPS_LABEL)
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    thousands(ax.yaxis)
    ax.legend(fontsize="small", loc="lower right")
    fig.suptitle("Host idle recovery: IOPS per segment over time")
    return fig


def _xsr_seconds(seconds: pd.DataFrame | None) -> pd.DataFrame | None:
    """The seconds with a finite time and MB/s, numeric; None when there are none."""
    if seconds is None or not len(seconds) or not {"phase", "t_s", "bw_MBps"} <= set(seconds.columns):
        return None
    s = seconds.assign(t_s=_num(seconds, "t_s"), bw_MBps=_num(seconds, "bw_MBps"))
    s = s[np.isfinite(s["t_s"].to_numpy(float)) & (s["bw_MBps"].to_numpy(float) > 0)]
    return s if len(s) else None


def _marks(ax, xsr: pd.DataFrame | None, s: pd.DataFrame, div: float) -> None:
    """Transitions (solid), settle times (dotted, labelled) and the new groups' final levels."""
    if xsr is None or not len(xsr):
        return
    spans = [(float(g["t_s"].min()) - 1.0, float(g["t_s"].max())) for _, g in s.groupby("phase", sort=True)]
    for i, row in enumerate(xsr.itertuples(index=False)):
        t = pd.to_numeric(getattr(row, "t_transition_s", None), errors="coerce")
        if not np.isfinite(t):
            continue
        ax.axvline(t / div, color="black", linewidth=1.2, gid=f"xsr:transition:{i}")
        ax.annotate(str(row.transition), (t / div, 1.0), xycoords=("data", "axes fraction"), xytext=(3, -3),
                    textcoords="offset points", va="top", fontsize="small", in_layout=False)  # (the panel's text)
        levels = [(i + 1, row.to_level_MBps)] + ([(0, row.from_level_MBps)] if i == 0 else [])
        for k, level in levels:
            level = pd.to_numeric(level, errors="coerce")
            if np.isfinite(level) and k < len(spans):
                ax.hlines(level, spans[k][0] / div, spans[k][1] / div, colors="black", linestyles=":",
                          linewidth=1.0, gid=f"xsr:level:{k + 1}")
        settle = pd.to_numeric(row.settle_s, errors="coerce")
        if np.isfinite(settle) and settle <= 0:  # at its level from the first second: no settle line on the transition
            ax.annotate("at its level from the first second", (t / div, 0.0), xycoords=("data", "axes fraction"),
                        xytext=(3, 3), textcoords="offset points", fontsize="small", rotation=90, va="bottom",
                        gid=f"xsr:settled-at-once:{i}", in_layout=False)
        elif np.isfinite(settle):
            ax.axvline((t + settle) / div, color="black", linestyle=":", linewidth=1.2, gid=f"xsr:settle:{i}")
            ax.annotate(f"settled after {settle:g} s", ((t + settle) / div, 0.0), xycoords=("data", "axes fraction"),
                        xytext=(3, 3), textcoords="offset points", fontsize="small", rotation=90, va="bottom",
                        in_layout=False)  # inside the panel: the layout leaves it out (it squeezed the panel)


def _phase_names(xsr: pd.DataFrame | None) -> list[str]:
    """The groups' workloads in order, from the transitions ("SEQ 1024KiB → RND 8KiB", ...); [] without them."""
    if xsr is None or not len(xsr) or "transition" not in xsr.columns:
        return []
    parts = [str(t).split(" → ") for t in xsr["transition"]]
    return [p[0] for p in parts] + [parts[-1][-1]]


@per_host
def xsr_figure(seconds: pd.DataFrame | None, xsr: pd.DataFrame | None = None):
    """Throughput per second against time with the transitions and settle times marked (module docstring);
    ``xsr``: memstor.analysis.pts_recovery.xsr_table of the same run. None without a second to draw."""
    s = _xsr_seconds(seconds)
    if s is None:
        return None
    div, xlabel = _time_axis(float(s["t_s"].max()))
    fig, (ax,) = new_figure(scale=1.35)
    names = _phase_names(xsr)
    for j, (phase, g) in enumerate(s.groupby("phase", sort=True)):
        g = g.sort_values("t_s")
        name = names[j] if j < len(names) else "?"
        ax.plot(g["t_s"] / div, g["bw_MBps"], color=f"C{j % 10}", linewidth=1.5, marker=MARKERS[j % len(MARKERS)],
                markevery=max(1, len(g) // 10), markersize=4, label=f"group {phase}: {name}", gid=f"xsr:phase:{phase}")
    _marks(ax, xsr, s, div)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(MBPS_LABEL)
    ax.set_xlim(left=0)
    bw = s["bw_MBps"].to_numpy(float)
    if bw.max() / bw.min() > LOG_RATIO:
        ax.set_yscale("log")
        plain_log(ax.yaxis)
        ax.set_ylabel(MBPS_LABEL + ", log scale")
    else:
        ax.set_ylim(bottom=0)
        thousands(ax.yaxis)
    ax.legend(fontsize="small", loc="best")
    fig.suptitle("Cross-stimulus recovery: throughput over time")
    return fig
