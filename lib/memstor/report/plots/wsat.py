"""Figures of the fio-write-saturation experiment (SNIA PTS WSAT): throughput against time and against the
total data written (TGBW), and the drive's temperature.

Input: the per-second table ``<data>/processed/<device>/fio-write-saturation-seconds.csv`` (columns
:data:`memstor.experiments.fio_write_saturation.SECOND_COLUMNS`: ``t_s`` = end of the 1-s interval in s since
the point's start, ``bw_MBps`` in MB/s = 10^6 B/s, ``iops`` in I/O per s, ``gb_written`` cumulative decimal GB
= 10^9 B) and the thermal table ``fio-write-saturation-thermal.csv`` (``t_s`` s, ``temperature_c`` °C).
One panel per workload (``config``: rw, block size, queue depth x jobs, multiple, cap...), one line per
repetition; throughput in MB/s on the left axis and, for the workload's single block size, the same curve in
IOPS on the right axis (IOPS = MB/s x 10^6 / block size). Several devices: one figure per device
(:func:`memstor.report.plots.per_host`). Each function returns a matplotlib Figure, or None when there is
nothing to draw. No cliff is computed here (memstor.analysis.cliffs does that for the synthesis).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from memstor.report.plots import MARKERS, new_figure, per_host, size_label, thousands
from memstor.report.plots.storage import RW_LABEL

TIME_LABEL = "time (s since the workload's start)"
TGBW_LABEL = "total data written, TGBW (GB, 10^9 B)"
MBPS_LABEL = "throughput (MB/s, 10^6 B/s,\n1-s intervals)"  # two lines: one ran past a panel in print
IOPS_LABEL = "IOPS (I/O per s)"
TEMP_LABEL = "drive temperature (°C)"
#: At most this many panels per row.
MAX_COLS = 2


def _num(df: pd.DataFrame, col: str) -> pd.Series:
    return pd.to_numeric(df[col], errors="coerce") if col in df.columns else pd.Series(np.nan, index=df.index)


def _workload_title(config: str, g: pd.DataFrame) -> str:
    """e.g. "4K random write" + the config name (queue depth, multiple, cap) in small print."""
    bs = _num(g, "bs_bytes").dropna()
    rw = str(g["rw"].iloc[0]) if "rw" in g.columns and len(g) else ""
    what = f"{size_label(bs.iloc[0]) if len(bs) else ''} {RW_LABEL.get(rw, rw)}".strip()
    return f"{what}\n{_wrap_name(str(config))}"


def _wrap_name(name: str, width: int = 32) -> str:
    """A long configuration name on lines of about `width` characters, broken after its hyphens (in print it
    ran past its panel into the next one)."""
    lines, line = [], ""
    for part in name.split("-"):
        piece = part if not line else "-" + part
        if line and len(line) + len(piece) > width:
            lines.append(line + "-")
            line = part
        else:
            line += piece
    return "\n".join(lines + [line])


def _grid(n: int):
    """(fig, axes) with n panels, MAX_COLS per row (the spare panels hidden)."""
    cols = min(n, MAX_COLS)
    rows = math.ceil(n / cols)
    fig, axes = new_figure(cols, rows, scale=1.1)
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes[:n]


def _usable(seconds: pd.DataFrame | None, x: str) -> pd.DataFrame | None:
    """The rows with a finite x and throughput, numeric; None when there are none."""
    if seconds is None or len(seconds) == 0 or not {x, "bw_MBps", "config"} <= set(seconds.columns):
        return None
    s = seconds.copy()
    for col in (x, "bw_MBps", "iops", "bs_bytes", "repetition", "runtime_s", "run_MBps"):
        s[col] = _num(s, col)
    s = s[np.isfinite(s[x].to_numpy(float)) & np.isfinite(s["bw_MBps"].to_numpy(float))]
    return s if len(s) else None


def _whole_run(ax, gr: pd.DataFrame, x: str, label: str, gid: str) -> None:
    """A repetition without a whole second (``whole_second`` all False, memstor.analysis.wsat.mark_whole): no
    series; fio's whole-run MB/s at its runtime (s) or its data written (GB), as one labelled marker."""
    run = _num(gr, "run_MBps").dropna()
    if not len(run):
        return
    at = _num(gr, "runtime_s").max() if x == "t_s" else _num(gr, "gb_written").max()
    runtime = _num(gr, "runtime_s").max()
    ax.plot([at], [float(run.iloc[0])], marker="D", linestyle="none", markersize=6, gid=gid,
            label=f"{label}: fio's whole-run figure\n({runtime:g}-s run, no whole second:\nno series; wsat_series failed)")


def _draw(seconds: pd.DataFrame | None, x: str, xlabel: str, title: str):
    """One panel per workload: MB/s against ``x`` per repetition, IOPS on the right axis; only whole seconds
    where the table marks them (``whole_second``), a repetition with none as fio's whole-run figure."""
    s = _usable(seconds, x)
    if s is None:
        return None
    configs = list(dict.fromkeys(s["config"]))
    fig, axes = _grid(len(configs))
    for ax, config in zip(axes, configs):
        g = s[s["config"] == config]
        by_rep = g.groupby("repetition", sort=True, dropna=False) if "repetition" in g.columns else [(1, g)]
        for j, (rep, gr) in enumerate(by_rep):
            gr = gr.sort_values(x)
            label = f"repetition {int(rep)}" if rep == rep else "repetition ?"
            if "whole_second" in gr.columns:
                whole = gr[gr["whole_second"].astype(bool)]
                if not len(whole):
                    _whole_run(ax, gr, x, label, f"{x}:{config}:{label}")
                    continue
                gr = whole
            ax.plot(gr[x], gr["bw_MBps"], marker=MARKERS[j % len(MARKERS)], markevery=max(1, len(gr) // 12),
                    markersize=5, linewidth=1.5, label=label, gid=f"{x}:{config}:{label}")
        ax.set_title(_workload_title(config, g), fontsize="small")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(MBPS_LABEL)
        ax.set_xlim(left=0)
        ax.set_ylim(bottom=0)
        thousands(ax.yaxis)
        bs = _num(g, "bs_bytes").dropna()
        if bs.nunique() == 1 and float(bs.iloc[0]) > 0:
            b = float(bs.iloc[0])
            right = ax.secondary_yaxis("right", functions=(lambda mb, b=b: mb * 1e6 / b, lambda io, b=b: io * b / 1e6))
            right.set_ylabel(f"{IOPS_LABEL}, {size_label(b)} blocks")
            thousands(right.yaxis)
        ax.legend(fontsize="small", loc="best")
    fig.suptitle(title)
    return fig


@per_host
def wsat_time_figure(seconds: pd.DataFrame | None):
    """Throughput (MB/s, left) and IOPS (right) per second against time (s since the workload's start): one
    panel per workload, one line per repetition; None without a second to draw."""
    return _draw(seconds, "t_s", TIME_LABEL, "Write saturation: throughput over time")


@per_host
def wsat_tgbw_figure(seconds: pd.DataFrame | None):
    """Throughput (MB/s, left) and IOPS (right) per second against the total data written by the end of that
    second (TGBW, decimal GB): one panel per workload, one line per repetition; None without data."""
    return _draw(seconds, "gb_written", TGBW_LABEL, "Write saturation: throughput against data written (TGBW)")


def thermal_readings(thermal: pd.DataFrame | None) -> pd.DataFrame:
    """The thermal table's rows that hold a temperature (available, ``temperature_c`` a number)."""
    if thermal is None or len(thermal) == 0 or "temperature_c" not in thermal.columns:
        return pd.DataFrame(columns=["point", "t_s", "temperature_c"])
    ok = thermal["available"].astype(str).str.lower().isin(("true", "1")) if "available" in thermal.columns \
        else pd.Series(True, index=thermal.index)
    t = thermal[ok].copy()
    t["t_s"], t["temperature_c"] = _num(t, "t_s"), _num(t, "temperature_c")
    return t[np.isfinite(t["t_s"].to_numpy(float)) & np.isfinite(t["temperature_c"].to_numpy(float))]


@per_host
def wsat_thermal_figure(thermal: pd.DataFrame | None):
    """The drive's composite temperature (°C) against time (s since each point's start), one line per point,
    the warning threshold dashed when the drive reports one; None when the table holds no reading (its
    ``reason`` column says why)."""
    t = thermal_readings(thermal)
    if len(t) == 0:
        return None
    fig, (ax,) = new_figure(1, 1, scale=1.1)
    for j, (point, g) in enumerate(t.groupby("point", sort=False)):
        g = g.sort_values("t_s")
        ax.plot(g["t_s"], g["temperature_c"], marker=MARKERS[j % len(MARKERS)], markersize=4, linewidth=1.5,
                label=str(point), gid=f"thermal:{point}")
    warn = _num(t, "warning_temp_c").dropna()
    if len(warn):
        ax.axhline(float(warn.max()), color="0.3", linestyle="--", linewidth=1,
                   label=f"warning threshold {float(warn.max()):g} °C")
    ax.set_xlabel(TIME_LABEL)
    ax.set_ylabel(TEMP_LABEL)
    ax.set_xlim(left=0)
    ax.legend(fontsize="x-small", loc="best")
    fig.suptitle("Drive temperature during the writes")
    return fig
