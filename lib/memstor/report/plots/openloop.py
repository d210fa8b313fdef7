"""Figures of the fio-load-latency experiment: open-loop latency under offered load (Poisson arrivals at
a share of X_ref, the best IOPS of the workload in the queue-depth and block-size sweeps), beside the closed queue-depth loop and the queueing
models. Points whose loop did not hold (their generator's checks failed, or the workload was gated by
memstor.analysis.validity.gate) are labelled and drawn as such, never as an open loop.

Inputs (one device or several stacked; column ``host``: one line or panel per device x workload):

- ``load``: the open-loop curves, :func:`memstor.analysis.load_latency.curve_table` (CURVE_COLUMNS: one row
  per device x rw x offered rate, ``overloaded`` / ``ceiling_reached`` flags as booleans or CSV text);
- ``qd``: the closed-loop queue-depth configurations (``memstor.analysis.synthesis.qd_points``, i.e.
  ``Synthesis.qd``: fio summary rows with host, rw, direction, iodepth, numjobs, iops, lat_mean_us,
  clat_p99_us, in_sweep);
- ``models``: :func:`memstor.analysis.load_latency.models` (openloop.model_table columns + host, rw,
  service_source, fit_rms_err_pct);
- ``seconds``: ``<data>/processed/<device>/fio-load-latency-seconds.csv``
  (:data:`memstor.experiments.fio_load_latency.SECOND_COLUMNS`): fio's rows hold completion latency
  (``clat_p99_us``), ioarrive's the response time from the intended arrival (``lat_p99_us``; column
  ``generator``, absent or empty: fio).

Units: IOPS (I/O per s), µs, % of X_ref (the offered load, "u50" = 50 % of X_ref), s. Every figure
function returns a matplotlib Figure, or None when there is nothing to draw. Colours: the colour-blind
palette for devices x workloads; offered rates (an ordered quantity) in viridis, which stays readable for
colour-blind readers and in gray scale.
"""

from __future__ import annotations

import math

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator

from memstor.analysis import openloop
from memstor.analysis.validity.gate import valid_rows
from memstor.core.schema import missing, truthy
from memstor.report.plots import MARKERS, new_figure, plain_log, printing, thousands
from memstor.report.plots.storage import RW_LABEL, RW_ORDER
from memstor.report.text.loadgen import IOARRIVE, X_REF, failed_points, generators, held_points, split_reason

IOPS_LABEL = "achieved IOPS (I/O per s; k = 1,000)"
OVERLOADED_LABEL = "hollow: overloaded (achieved < 95 % of offered)"
CEILING_LABEL = "×: a job's queue at its ceiling"
#: The legend of points whose loop did not hold (dashed, faded): offered, but not an open loop.
NOT_HELD = "offered, loop not held"
#: Checks whose failure says the points' IOPS are not what the device delivered at the offered rate (open_loop_rate
#: where a point overshot it), or break a physical invariant: such points are drawn unjoined, the checks named (fifth read R-def p9: offload points at
#: 108-175 % of offered, 583 in flight where 448 could be, 161 % of the closed maximum, drawn as a curve).
INVARIANTS = ("open_loop_rate", "littles_law", "below_closed_max")
#: ... of points whose loop is not known to have held (no arrival record; the gate withholds their findings).
NOT_SHOWN = "offered, loop not shown to hold"
#: ... of points whose own checks passed in a workload the gate withheld (ringed: held there, not read as the
#: device's response: memstor.report.text.openloop_causes says why).
OWN_HELD = "ringed: its own checks passed"
#: Offered rates in this colour map (ordered: light = high rate).
RATE_CMAP = "viridis"


# ------------------------------------------------------------------------------------------ helpers


def _flags(col: pd.Series) -> np.ndarray:
    """Booleans of a flag column (bools, or CSV text True/False/empty)."""
    return np.array([truthy(v) for v in col], dtype=bool)


def _num(df: pd.DataFrame, col: str) -> np.ndarray:
    """A column as floats (NaN where missing or not a number; all NaN when the column is absent)."""
    if col not in df.columns:
        return np.full(len(df), np.nan)
    return pd.to_numeric(df[col], errors="coerce").to_numpy(float)


def _util(u) -> str:
    """An offered load (% of X_ref) as a point label: 50 -> "u50", 97.5 -> "u97.5"."""
    return "u?" if missing(u) else f"u{float(u):g}"


def _groups(df: pd.DataFrame) -> list:
    """[(host, rw, rows)] sorted by host, then rw in the storage figures' order."""
    out = []
    for host in sorted(df["host"].dropna().astype(str).unique()):
        h = df[df["host"].astype(str) == host]
        present = list(dict.fromkeys(h["rw"].dropna()))
        for rw in [r for r in RW_ORDER if r in present] + sorted(r for r in present if r not in RW_ORDER):
            out.append((host, rw, h[h["rw"] == rw]))
    return out


def _log(axis, decades: bool = False) -> None:
    """A log axis with plain numbers at 1, 2, 5 x 10^k (readable when the data span less than a decade); with
    `decades`, at the decades alone where the data span more than two (the latency-throughput panels: a 1-2-5 ladder
    over three decades or more left no room in print, its labels thinned to none)."""
    lo, hi = axis.get_data_interval()  # the data drawn (the view may not be autoscaled yet)
    wide = bool(decades and lo > 0 and hi / lo > 1000)  # two decades or less: 1-2-5, else 2 decade labels
    axis.set_major_locator(LogLocator(base=10, subs=(1.0,) if wide else (1.0, 2.0, 5.0)))
    plain_log(axis)


def _kilo(v: float, _pos=None) -> str:
    """An IOPS tick in thousands: 200000 -> '200k', 0 -> '0', 2500 -> '2.5k'."""
    return "0" if v == 0 else f"{v / 1000:,.4g}k"


def _direction(rw: str) -> str:
    return "write" if "write" in str(rw) else "read"


def _name(host: str, rw: str, multi_host: bool) -> str:
    """Series name: "random read", or "host, random read" with several devices."""
    what = RW_LABEL.get(rw, rw)
    return f"{host}, {what}" if multi_host else what


def _qd_text(r) -> str:
    """"QD8", or "QD32x4" with several jobs."""
    qd = r.get("iodepth")
    nj = r.get("numjobs")
    if missing(qd):
        return "QD?"
    nj = 1 if missing(nj) else int(nj)
    return f"QD{int(qd)}" + (f"x{nj}" if nj > 1 else "")


def _compared(g: pd.DataFrame) -> bool:
    """Whether a workload's open loop may be set beside its closed loop: not where the gate
    (memstor.analysis.validity.gate, column ``valid``) withheld every point, as the text gives no open-against-
    closed comparison there (R-1cpu M11: 16 gated points drawn beside the closed loop)."""
    if "valid" not in g.columns:
        return True
    return not all(v is False or str(v) == "False" for v in g["valid"])


def closed_drawn(load: pd.DataFrame | None, qd: pd.DataFrame | None) -> bool:
    """Whether latency_throughput_figure draws a closed queue-depth curve beside some workload (one whose open loop
    the gate did not withhold whole, :func:`_compared`, with closed points): the caption says so only then."""
    if load is None or len(load) == 0 or "achieved_iops" not in load.columns:
        return False
    return any(_compared(g) and len(_closed(qd, host, rw)) for host, rw, g in _groups(load))


def _closed(qd: pd.DataFrame | None, host: str, rw: str) -> pd.DataFrame:
    """The closed-loop configurations of `host` and `rw` (its own direction) with an IOPS, by IOPS."""
    if qd is None or len(qd) == 0 or not {"host", "rw", "iops"} <= set(qd.columns):
        return pd.DataFrame()
    c = qd[(qd["host"].astype(str) == host) & (qd["rw"] == rw)]
    if "direction" in c.columns:
        c = c[c["direction"] == _direction(rw)]
    c = c[pd.to_numeric(c["iops"], errors="coerce").notna()]
    return c.assign(iops=pd.to_numeric(c["iops"], errors="coerce")).sort_values("iops")


def _legend(fig, axes, n_entries: int) -> None:
    """The figure's legend: below the panels (one legend for both), two or three columns."""
    handles, labels, seen = [], [], set()
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in seen:
                seen.add(lab)
                handles.append(h)
                labels.append(lab)
    if handles:
        wide = max(len(lab) for lab in labels) > 50  # a label naming failed checks: one column, or the panels shrink
        fig.legend(handles, labels, loc="outside lower center", ncols=1 if wide else 2 if n_entries <= 6 else 3,
                   fontsize="small")


# ------------------------------------------------------------------------------ latency-throughput


def rings_drawn(load: pd.DataFrame | None) -> bool:
    """The latency-throughput figure rings some point (its own checks passed in a workload the gate withheld):
    its caption names the ring only then (third read R-1cpu M9: the caption named rings none were drawn, beside
    hollow overloaded markers)."""
    if load is None or len(load) == 0 or "achieved_iops" not in load.columns:
        return False
    pts = load[np.isfinite(_num(load, "achieved_iops"))]
    return any(bool((held_points(g.assign(valid=True)) & ~held_points(g)).any()) for _, _, g in _groups(pts))


def _open_series(ax, g: pd.DataFrame, col: str, colour: str, marker: str, name: str, key: str,
                 seen: set) -> None:
    """One open-loop curve on one panel: a line through every point in offered order; where the loop held
    (:func:`memstor.report.text.loadgen.held_points`) a solid line and filled markers labelled "open loop
    (Poisson)", where it did not a dashed, faded line and markers labelled "offered, loop not held" (or "not
    shown to hold" where no point says it failed); hollow where overloaded, a black × where the ceiling on I/Os
    in flight was reached, "uNN" labels."""
    x = _num(g, "achieved_iops")
    y = _num(g, col)
    keep = np.isfinite(x) & np.isfinite(y) & (y > 0)
    if not keep.any():
        return
    x, y = x[keep], y[keep]
    over = _flags(g["overloaded"])[keep] if "overloaded" in g.columns else np.zeros(len(x), bool)
    ceil = _flags(g["ceiling_reached"])[keep] if "ceiling_reached" in g.columns else np.zeros(len(x), bool)
    held = held_points(g)[keep]
    utils = _num(g, "utilisation_pct")[keep]
    if held.any():  # solid through neighbouring held points, filled markers where the device kept up
        hx, hy, marks = _path(x, y, held, lambda i: held[i] and held[i + 1], held & ~over)
        ax.plot(hx, hy, color=colour, marker=marker, markevery=marks, label=f"{name}: open loop (Poisson)",
                gid=f"open:{key}")
    broken = _invariants_failed(g)
    if not held.all() and broken:  # not the device's curve: its points unjoined, the failed invariants named
        ax.plot(x[~held], y[~held], color=colour, marker=marker, linestyle="none", alpha=0.45,
                label=f"{name}: no curve ({', '.join(broken)} failed)", gid=f"invalid:{key}")
    elif not held.all():  # dashed and faded wherever a point did not hold, its own legend entry
        failed = bool(failed_points(g)[keep][~held].any())
        nx, ny, marks = _path(x, y, ~held, lambda i: not (held[i] and held[i + 1]), ~held & ~over)
        ax.plot(nx, ny, color=colour, marker=marker, linestyle="--", alpha=0.55, markevery=marks, zorder=1.5,
                label=f"{name}: {NOT_HELD if failed else NOT_SHOWN}", gid=f"notheld:{key}")  # beneath the held
    own = held_points(g.assign(valid=True))[keep] & ~held  # its own checks passed, its workload withheld
    if own.any():
        ax.plot(x[own], y[own], color="black", marker="o", markersize=11, markerfacecolor="none",
                markeredgewidth=1.2, linestyle="none", gid=f"ownheld:{key}",
                label=OWN_HELD if "own" not in seen else "_nolegend_")
        seen.add("own")
    if over.any():
        ax.plot(x[over], y[over], color=colour, marker=marker, markersize=10, markerfacecolor="white",
                markeredgewidth=2, linestyle="none", gid=f"overloaded:{key}",
                label=OVERLOADED_LABEL if "over" not in seen else "_nolegend_")
        seen.add("over")
    if ceil.any():
        ax.plot(x[ceil], y[ceil], color="black", marker="x", markersize=9, markeredgewidth=2, linestyle="none",
                gid=f"ceiling:{key}", label=CEILING_LABEL if "ceil" not in seen else "_nolegend_")
        seen.add("ceil")
    for xi, yi, u, first in zip(x, y, utils, held | own):  # S21-bare 6: a held or ringed point's label placed first
        ax.annotate(_util(u), (xi, yi), textcoords="offset points", xytext=(5, -11), fontsize="x-small",
                    color=colour, gid=f"util:{key}", zorder=printing.FIRST_LABEL_ZORDER if first else None)


def _invariants_failed(g: pd.DataFrame) -> list[str]:
    """The :data:`INVARIANTS` the gate's reason (column ``not_valid``) names for this workload; [] without one."""
    reasons = g["not_valid"].dropna().astype(str) if "not_valid" in g.columns else pd.Series(dtype=str)
    named = [c for r in reasons if r for c, _ in split_reason(r)[1]]
    over = bool((_num(g, "achieved_pct") > 105.0).any())  # a rate not met is the device's; one overshot is not
    return [c for c in INVARIANTS if c in named and (c != "open_loop_rate" or over)]


def _path(x: np.ndarray, y: np.ndarray, points: np.ndarray, segment, marked: np.ndarray) -> tuple:
    """(xs, ys, marker indices) of one line through the points in order: segment i -> i+1 drawn where
    ``segment(i)``, a lone point of ``points`` kept as a point, NaN between pieces; the markers at the positions of
    the ``marked`` points (each once)."""
    xs: list[float] = []
    ys: list[float] = []
    at: dict[int, int] = {}
    marks: list[int] = []

    def add(i):
        if i not in at:
            at[i] = len(xs)
            if marked[i]:
                marks.append(len(xs))
        xs.append(x[i])
        ys.append(y[i])

    n = len(x)
    for i in range(n):
        joined_before = i > 0 and segment(i - 1)
        if points[i] or joined_before or (i < n - 1 and segment(i)):
            if not joined_before and xs:
                xs.append(np.nan)
                ys.append(np.nan)
            add(i)
    return np.array(xs, float), np.array(ys, float), marks


def _closed_series(ax, c: pd.DataFrame, col: str, colour: str, name: str, key: str) -> None:
    """The closed queue-depth loop of the same device and rw: dotted line through the sweep points,
    diamonds, "QD8" labels (configurations outside the sweep, e.g. the spec point, as diamonds only)."""
    if c.empty or col not in c.columns:
        return
    c = c[pd.to_numeric(c[col], errors="coerce") > 0]
    if c.empty:
        return
    sweep = _flags(c["in_sweep"]) if "in_sweep" in c.columns else np.ones(len(c), bool)
    x, y = c["iops"].to_numpy(float), pd.to_numeric(c[col], errors="coerce").to_numpy(float)
    ax.plot(x[sweep], y[sweep], color=colour, linestyle=":", marker="D", markersize=5, linewidth=1.5,
            label=f"{name}: closed loop (queue depth)", gid=f"closed:{key}")
    if (~sweep).any():
        ax.plot(x[~sweep], y[~sweep], color=colour, linestyle="none", marker="D", markersize=5,
                markerfacecolor="white", gid=f"closed-other:{key}", label="_nolegend_")
    for (_, r), xi, yi in zip(c.iterrows(), x, y):
        ax.annotate(_qd_text(r), (xi, yi), textcoords="offset points", xytext=(-4, 5), ha="right",
                    fontsize="xx-small", color=colour, alpha=0.9, gid=f"qd:{key}")


def latency_throughput_figure(load: pd.DataFrame, qd: pd.DataFrame | None = None):
    """Mean and p99 latency (µs, log y) against achieved IOPS: the open-loop points per device x rw
    (line + markers, each labelled with its offered load "u50"; points whose loop did not hold dashed and
    faded, labelled so; overloaded points hollow, points at the ceiling on I/Os in flight crossed) and the
    closed queue-depth loop of the same device and rw (dotted, diamonds, labelled "QD8"; not for a workload whose
    every point the gate withheld: no comparison against a loop not shown open). The open loop's
    latency is its generator's (ioarrive: response from the intended arrival; fio: total latency from its
    submission), the closed loop's p99 fio's completion latency. None without an open-loop point."""
    if load is None or len(load) == 0 or "achieved_iops" not in load.columns:
        return None
    pts = load[np.isfinite(_num(load, "achieved_iops"))]
    if pts.empty:
        return None
    groups = _groups(pts)
    multi = pts["host"].nunique() > 1
    gens = set(generators(pts))
    open_kind = ("response" if gens == {IOARRIVE} else "total" if IOARRIVE not in gens else "response or total")
    panels = (("lat_mean_us", "lat_mean_us", "mean latency (µs, log scale)", "Mean latency"),
              ("lat_p99_us", "clat_p99_us", "p99 latency (µs, log scale)",
               f"p99 (open: {open_kind}, closed: completion)"))
    fig, axes = new_figure(2, scale=1.3)
    fig.set_size_inches(10.0, 4.7)  # printed at about 0.6 of this (6 x 2.8 in): the legend below, panels readable
    seen: set = set()
    for i, (host, rw, g) in enumerate(groups):
        colour, marker = f"C{i % 10}", MARKERS[i % len(MARKERS)]
        name, key = _name(host, rw, multi), f"{host}:{rw}"
        g = g.sort_values("utilisation_pct")  # in offered order: an overloaded point bends the line back
        closed = _closed(qd, host, rw) if _compared(g) else pd.DataFrame()
        for ax, (ocol, ccol, _, _) in zip(axes, panels):
            _open_series(ax, g, ocol, colour, marker, name, key, seen)
            _closed_series(ax, closed, ccol, colour, name, key)
    if not closed_drawn(load, qd):  # no closed curve: the title promises none (fifth read S9-bare C-9, R-def p9)
        panels = (panels[0], (*panels[1][:3], f"p99 ({open_kind})"))
    for ax, (_, _, ylabel, title) in zip(axes, panels):
        ax.set_xlabel(IOPS_LABEL)
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize="medium")
        if any(line.get_ydata().size for line in ax.get_lines()):
            ax.set_yscale("log")
            _log(ax.yaxis, decades=True)
        ax.set_xlim(left=0)
        ax.margins(x=0.06, y=0.1)
        ax.xaxis.set_major_locator(MaxNLocator(nbins=4))  # five labels of six digits needed rotating in print
        ax.xaxis.set_major_formatter(FuncFormatter(_kilo))  # '200k': six digits were still rotated (R-loop 10.1)
    entries = 2 * len(groups) + len(seen)
    _legend(fig, axes, entries)  # no figure title: it sat over the y labels in print (R-loop 10.1); the caption says it
    if entries > 4:  # three rows of legend or more under the panels: the taller box keeps the panels readable
        fig.set_size_inches(10.0, 5.4)
        return printing.tall(fig)
    return fig


# ------------------------------------------------------------------------------------------- models


def _first(g: pd.DataFrame, col: str) -> float:
    v = _num(g, col)
    v = v[np.isfinite(v)]
    return float(v[0]) if v.size else math.nan


def _model_panel(ax, host: str, rw: str, g: pd.DataFrame, multi: bool) -> None:
    """Measured mean latency against ρ₁ = λ S and the M/M/1, M/G/1 and M/G/c lines of one device x rw."""
    key = f"{host}:{rw}"
    g = g.sort_values("rho_1")
    rho = _num(g, "rho_1")
    meas = _num(g, "lat_mean_us")
    ok = np.isfinite(rho) & np.isfinite(meas) & (meas > 0)
    s_us, cs2, c = _first(g, "service_mean_us"), _first(g, "service_cs2"), _first(g, "servers_c")
    rms = _first(g, "fit_rms_err_pct")
    hi = float(rho[ok].max()) * 1.1
    log_x = hi > 2.0  # beyond one server: the single-server region and the measured span both readable
    # from ρ₁ = 0.1 at least: where the single-server models rise to their asymptote at ρ₁ = 1 stays visible
    lo = min(0.1, float(rho[ok].min()) * 0.7) if log_x else 0.0
    if math.isfinite(s_us) and s_us > 0:
        grid = np.geomspace(max(lo, 1e-3), hi, 600) if log_x else np.linspace(0.0, hi, 600)
        # the legend (one for every panel, beside them) names the models; the panel's title their numbers
        lines = [("mm1", openloop.mm1_response_us(s_us, rho=grid), "M/M/1 (one server,\nexponential service)", "--")]
        if math.isfinite(cs2):
            lines.append(("mg1", openloop.mg1_response_us(s_us, cs2, rho=grid),
                          "M/G/1 (one server,\nmeasured cs²)", "-."))
            if math.isfinite(c) and c >= 1:
                lines.append(("mgc", openloop.mgc_response_us(s_us, cs2, int(c), rho=grid / int(c)),
                              "M/G/c (c servers,\nfitted)", "-"))
        for k, (name, y, label, style) in enumerate(lines):
            ax.plot(grid, y, color=f"C{k + 1}", linestyle=style, linewidth=1.8, label=label, gid=f"{name}:{key}")
        if lo <= 1.0 <= hi:
            ax.axvline(1.0, color="0.4", linewidth=1, linestyle=":", gid=f"rho1:{key}",
                       label="ρ₁ = 1: one server\nsaturates")
    else:  # no service time in the table: the per-point predictions only
        for k, (name, label) in enumerate((("mm1", "M/M/1"), ("mg1", "M/G/1"), ("mgc", "M/G/c"))):
            y = _num(g, f"{name}_us")
            if np.isfinite(y).any():
                ax.plot(rho, y, color=f"C{k + 1}", linestyle="--", label=label, gid=f"{name}:{key}")
    over = _flags(g["overloaded"]) if "overloaded" in g.columns else np.zeros(len(g), bool)
    steady, bad = ok & ~over, ok & over
    ax.plot(rho[steady], meas[steady], color="C0", marker="o", linestyle="none", markersize=8,
            label="measured mean latency", gid=f"measured:{key}")
    if bad.any():
        ax.plot(rho[bad], meas[bad], color="C0", marker="o", linestyle="none", markersize=9,
                markerfacecolor="white", markeredgewidth=2, label=OVERLOADED_LABEL, gid=f"overloaded:{key}")
    for x, y, u in zip(rho[ok], meas[ok], _num(g, "utilisation_pct")[ok]):
        ax.annotate(_util(u), (x, y), textcoords="offset points", xytext=(5, 4), fontsize="x-small", color="C0",
                    gid=f"util:{key}")
    bottom = min(float(meas[ok].min()), s_us if math.isfinite(s_us) else math.inf) * 0.7
    ax.set_yscale("log")
    ax.set_ylim(bottom, float(meas[ok].max()) * 3.0)
    _log(ax.yaxis)
    if log_x:
        ax.set_xscale("log")
        ax.set_xlim(lo, hi)
        _log(ax.xaxis)
    else:
        ax.set_xlim(0, hi)
    s_text = f"S = {s_us:.1f} µs" if math.isfinite(s_us) else "S unknown"
    ax.set_xlabel("ρ₁ = λ·S (one-server utilisation)")  # λ the achieved IOPS, S in the title
    ax.set_ylabel("mean latency (µs, log)")
    who = f"{host}: " if multi else ""
    cs = f", cs² = {cs2:.2f}" if math.isfinite(cs2) else ""
    mgc = ""  # the title's lines: the workload, S and cs², the fitted M/G/c
    if math.isfinite(c) and c >= 1 and math.isfinite(cs2) and math.isfinite(s_us) and s_us > 0:
        mgc = f"\nM/G/c: c = {int(c)} servers" + (f", rms {rms:.1f} %" if math.isfinite(rms) else "")
    ax.set_title(f"{who}{RW_LABEL.get(rw, rw)}\n{s_text}{cs}{mgc}", fontsize="medium", fontweight="normal")


def model_figure(models: pd.DataFrame):
    """Per device x rw panel: the measured mean latency (µs, log y) against the one-server utilisation
    ρ₁ = λ·S (λ the achieved IOPS, S the measured mean service time; log x once ρ₁ passes 2), each point
    labelled with its offered load, and the M/M/1, M/G/1 and M/G/c (fitted c in the legend) mean
    response times as lines; the single-server models end at ρ₁ = 1 (dotted line), M/G/c at ρ₁ = c.
    None without a modelled point."""
    models = valid_rows(models)  # only where the open loop held (memstor.analysis.validity.gate)
    if models is None or len(models) == 0 or not {"rho_1", "lat_mean_us", "host", "rw"} <= set(models.columns):
        return None
    usable = models[np.isfinite(_num(models, "rho_1")) & (_num(models, "lat_mean_us") > 0)]
    groups = _groups(usable)
    if not groups:
        return None
    ncols = min(2, len(groups))
    nrows = math.ceil(len(groups) / ncols)
    fig, axes = new_figure(ncols, nrows, scale=1.15)
    fig.set_size_inches(10.0, min(0.8 + 4.2 * nrows, 5.1))  # printed at about 0.6 of this
    multi = usable["host"].nunique() > 1
    for ax, (host, rw, g) in zip(axes, groups):
        _model_panel(ax, host, rw, g, multi)
    for ax in axes[len(groups):]:
        ax.set_visible(False)
    handles, labels = [], []
    for ax in axes[:len(groups)]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    if handles:  # one legend beside the panels, on short lines (one per panel left no room for them in print)
        short = {OVERLOADED_LABEL: "hollow: overloaded\n(achieved < 95 %\nof offered)"}
        fig.legend(handles, [short.get(lab, lab) for lab in labels], loc="outside right lower", fontsize="small",
                   markerscale=0.7)
    fig.suptitle(f"Queueing models of the open-loop mean latency (labels u = offered % of {X_REF})",
                 fontsize="medium")
    return printing.compact(fig) if len(groups) == 1 else fig  # one panel, the legend beside it: the compact box


# -------------------------------------------------------------------------------------- time series


#: Per generator: the per-second p99 column of fio-load-latency-seconds.csv and what it is.
SECOND_P99 = {"fio": ("clat_p99_us", "completion"), IOARRIVE: ("lat_p99_us", "response")}
#: Said in the figure where no per-second p99 was stored (the panel is left out, never drawn empty).
NO_P99 = "no per-second p99 stored for these points: the p99 panel is left out"


def second_p99(seconds: pd.DataFrame) -> np.ndarray:
    """Each row's per-second p99 (µs) in its generator's column (:data:`SECOND_P99`: fio's clat_p99_us, ioarrive's
    lat_p99_us; another generator: whichever of the two it has); NaN where none."""
    out = np.full(len(seconds), np.nan)
    gens = np.array(generators(seconds), dtype=object)
    for gen in set(gens):
        cols = [SECOND_P99[gen][0]] if gen in SECOND_P99 else ["lat_p99_us", "clat_p99_us"]
        sel = gens == gen
        for col in cols:
            v = _num(seconds, col)
            out[sel] = np.where(np.isfinite(out[sel]), out[sel], v[sel])
    return out


def _p99_label(gens: set) -> tuple[str, str]:
    """(axis label, title words) of the p99 panel for the generators drawn in it: ioarrive's response time (from
    the intended arrival), fio's completion latency (from its submission)."""
    what = sorted({SECOND_P99[g][1] for g in gens if g in SECOND_P99}) or ["latency"]
    said = {"response": "response from the intended arrival", "completion": "fio's completion latency"}
    return (f"p99 {' / '.join(what)} (µs, log scale)", "; ".join(said.get(w, w) for w in what))


def _time_series_row(a_iops, a_p99, host: str, rw_: str, g: pd.DataFrame, colour, multi: bool) -> None:
    """One device x rw of :func:`time_series_figure`: per-second IOPS (and the offered rates dotted) on `a_iops`,
    the per-second p99 on `a_p99` (None: no p99 stored, said in the IOPS panel's title and, with the reason, in
    the figure's), the legend beside the last panel."""
    key = f"{host}:{rw_}"
    offered_label = "dotted: offered rate"
    for u, gu in g.groupby("utilisation_pct", sort=True, dropna=False):
        col = colour(u)
        offered = float(np.nanmean(gu["offered_iops"])) if gu["offered_iops"].notna().any() else math.nan
        label = _util(u) + (f" ({offered:,.0f} IOPS offered)" if math.isfinite(offered) else "")
        by_point = gu.groupby("point", sort=False) if "point" in gu.columns else [(None, gu)]
        for j, (_, gp) in enumerate(by_point):
            gp = gp.sort_values("t_s")
            a_iops.plot(gp["t_s"], gp["iops"], color=col, linewidth=1.6, label=label if j == 0 else "_nolegend_",
                        gid=f"iops:{key}:{_util(u)}")
            p99 = gp[gp["p99_us"] > 0]
            if a_p99 is not None and len(p99):
                a_p99.plot(p99["t_s"], p99["p99_us"], color=col, linewidth=1.6,
                           label=label if j == 0 else "_nolegend_", gid=f"p99:{key}:{_util(u)}")
        if math.isfinite(offered):
            a_iops.axhline(offered, color=col, linestyle=":", linewidth=1, label=offered_label,
                           gid=f"offered:{key}:{_util(u)}")
            offered_label = "_nolegend_"
    who = f"{host}: " if multi else ""
    what = RW_LABEL.get(rw_, rw_)
    a_iops.set_title(f"{who}{what}: IOPS" + ("" if a_p99 is not None else " (no p99 stored)"), fontsize="medium")
    a_iops.set_ylabel("IOPS (I/O per s, 1-s intervals)")
    a_iops.set_ylim(bottom=0)
    thousands(a_iops.yaxis)
    shown = [a_iops]
    if a_p99 is not None:
        ylabel, meaning = _p99_label(set(g.loc[g["p99_us"] > 0, "_generator"]))
        a_p99.set_title(f"{who}{what}: p99\n({meaning})", fontsize="medium")
        a_p99.set_ylabel(ylabel)
        a_p99.set_yscale("log")
        _log(a_p99.yaxis)
        shown.append(a_p99)
    for ax in shown:
        ax.set_xlabel("time (s since the point's start)")
        ax.set_xlim(left=0)
    handles, labels = shown[-1].get_legend_handles_labels()
    if a_p99 is not None:
        for h, lab in zip(*a_iops.get_legend_handles_labels()):
            if lab.startswith("dotted"):
                handles.append(h)
                labels.append(lab)
    shown[-1].legend(handles, labels, fontsize="x-small", title=f"offered rate (% of {X_REF})",
                     title_fontsize="x-small", loc="center left", bbox_to_anchor=(1.01, 0.5))


def time_series_figure(seconds: pd.DataFrame, rw: str | None = None):
    """Per-second IOPS (left) and p99 latency (right, µs, log y) over each point's run (s since its start), one
    line per offered rate (colour by offered load, "u50" in the legend; repetitions share a colour), the offered
    rate dotted in the IOPS panel. The p99 is each generator's own (:func:`second_p99`: fio's histogram logs hold
    completion latency, ioarrive's series the response time from the intended arrival). One row of panels per
    device x rw (only `rw` when given); the rw's own direction. A row without any per-second p99 has no p99
    panel (its IOPS panel says why; a figure with none is one column wide). None without a second to draw."""
    if seconds is None or len(seconds) == 0 or not {"t_s", "iops", "rw", "host"} <= set(seconds.columns):
        return None
    s = seconds.copy()
    s["p99_us"] = second_p99(s)
    s["_generator"] = generators(s)
    for col in ("t_s", "iops", "utilisation_pct", "offered_iops"):
        s[col] = _num(s, col)
    if rw is not None:
        s = s[s["rw"] == rw]
    if "direction" in s.columns:
        s = s[s["direction"].to_numpy() == np.array([_direction(r) for r in s["rw"]], dtype=object)]
    s = s[np.isfinite(s["t_s"].to_numpy(float))]
    groups = _groups(s)
    if not groups:
        return None
    utils = sorted(u for u in s["utilisation_pct"].dropna().unique())
    cmap = matplotlib.colormaps[RATE_CMAP]

    def colour(u):
        k = utils.index(u) if u in utils else 0
        return cmap(0.9 * k / max(len(utils) - 1, 1))

    multi = s["host"].nunique() > 1
    has_p99 = [bool((g["p99_us"] > 0).any()) for _, _, g in groups]
    ncols = 2 if any(has_p99) else 1
    fig, axes = new_figure(ncols, len(groups), scale=1.1)
    for row, (host, rw_, g) in enumerate(groups):
        a_p99 = axes[ncols * row + 1] if ncols == 2 else None
        if a_p99 is not None and not has_p99[row]:
            a_p99.set_visible(False)
            a_p99 = None
        _time_series_row(axes[ncols * row], a_p99, host, rw_, g, colour, multi)
    fig.suptitle("Open loop over time: per-second IOPS" + (" and p99" if any(has_p99) else "")
                 + " at each offered rate" + ("" if any(has_p99) else f" ({NO_P99})"))
    return fig


__all__ = ["latency_throughput_figure", "model_figure", "second_p99", "time_series_figure"]
