"""The synthesis notebook's explorer (JupyterLab only): pick the devices, the workload and the metric of a
latency–throughput figure with widgets (ipywidgets), then zoom, pan and read values on it (ipympl).

The data functions are plain pandas (tested without a browser): :func:`sources`, :func:`workloads`,
:func:`metrics` and :func:`selection` read a :class:`memstor.analysis.synthesis.Synthesis`; :func:`draw`
puts a selection on a matplotlib Axes. :class:`Explorer` wires them to widgets. The exported HTML and PDF
report leave the explorer out (its cell is tagged ``explore``, see :mod:`memstor.report.export`) and keep
their static figures.

Units: storage throughput in IOPS (I/O per s) or MB/s (10^6 B/s), storage latency in µs; memory bandwidth
in MB/s, memory latency in ns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.ticker import LogLocator

from memstor.core.units import size_text
from memstor.report.export import EXPLORE_TAG  # noqa: F401 (re-exported: the tag of the explorer's cell)
from memstor.report.plots import plain_log


@dataclass(frozen=True)
class Metric:
    """One figure: x and y columns of the source's table, with their axis labels (units included)."""

    x: str
    y: str
    x_label: str
    y_label: str
    log_y: bool = False


#: Source key -> (what the user reads, the Synthesis table, the workload columns).
SOURCES = {
    "qd": ("storage, closed loop (queue-depth sweep)", "qd", ("rw", "bs_bytes")),
    "load": ("storage, open loop (offered rate)", "load", ("rw",)),
    "memory": ("memory, loaded latency (inject-delay sweep)", "curves", ("curve",)),
}

_IOPS, _MBPS = "throughput (IOPS, I/O per s)", "throughput (MB/s, 10^6 B/s)"
METRICS = {
    "qd": {
        "mean latency vs IOPS": Metric("iops", "lat_mean_us", _IOPS, "mean latency (µs)"),
        "p99 latency vs IOPS": Metric("iops", "clat_p99_us", _IOPS, "p99 completion latency (µs)", True),
        "p99.9 latency vs IOPS": Metric("iops", "clat_p99_9_us", _IOPS, "p99.9 completion latency (µs)", True),
        "mean latency vs MB/s": Metric("bw_MBps", "lat_mean_us", _MBPS, "mean latency (µs)"),
        "IOPS vs outstanding I/O": Metric("outstanding_io", "iops", "outstanding I/O (iodepth × jobs)", _IOPS),
    },
    "load": {
        "mean latency vs achieved IOPS": Metric("achieved_iops", "lat_mean_us", "achieved " + _IOPS,
                                                "mean total latency (µs)"),
        "p99 latency vs achieved IOPS": Metric("achieved_iops", "lat_p99_us", "achieved " + _IOPS,
                                               "p99 total latency (µs)", True),
        "p99.9 latency vs achieved IOPS": Metric("achieved_iops", "lat_p99_9_us", "achieved " + _IOPS,
                                                 "p99.9 total latency (µs)", True),
        "achieved vs offered IOPS": Metric("offered_iops", "achieved_iops", "offered " + _IOPS, "achieved " + _IOPS),
    },
    "memory": {
        "latency vs bandwidth": Metric("bandwidth_MBps", "latency_ns", "bandwidth (MB/s, 10^6 B/s)", "latency (ns)"),
        "bandwidth vs inject delay": Metric("inject_delay", "bandwidth_MBps", "inject delay (delay-loop cycles)",
                                            "bandwidth (MB/s, 10^6 B/s)"),
        "latency vs inject delay": Metric("inject_delay", "latency_ns", "inject delay (delay-loop cycles)",
                                          "latency (ns)"),
    },
}


def _table(S, source: str) -> pd.DataFrame:
    """The Synthesis table behind `source` (empty when the data has none)."""
    df = getattr(S, SOURCES[source][1], None)
    return df if isinstance(df, pd.DataFrame) else pd.DataFrame()


def _bs_text(v) -> str:
    """A block size in bytes as text (4096 -> "4 KiB"); "?" when unknown."""
    try:
        return size_text(int(float(v)))
    except (TypeError, ValueError):
        return "?"


def _workload_labels(df: pd.DataFrame, source: str) -> pd.Series:
    """One workload label per row: "randread, 4 KiB" (closed loop), "randread" (open loop), the curve label
    (memory)."""
    if df.empty:
        return pd.Series([], dtype=object)
    if source == "qd":
        return df["rw"].astype(str) + ", " + df["bs_bytes"].map(_bs_text)
    if source == "load":
        return df["rw"].astype(str)
    return df["curve"].astype(str)


def sources(S) -> dict[str, str]:
    """{source key: label} of the sources with data in S, in SOURCES order."""
    return {k: v[0] for k, v in SOURCES.items() if not _table(S, k).empty}


def devices(S, source: str) -> list[str]:
    """The devices (hosts) with data for `source`, sorted."""
    df = _table(S, source)
    return sorted(df["host"].astype(str).unique()) if not df.empty else []


def workloads(S, source: str, hosts=None) -> list[str]:
    """The workload labels of `source` (on `hosts` when given), in first-seen order."""
    df = _table(S, source)
    if df.empty:
        return []
    if hosts:
        df = df[df["host"].astype(str).isin([str(h) for h in hosts])]
    return list(dict.fromkeys(_workload_labels(df, source)))


def metrics(source: str) -> list[str]:
    """The metric (figure) names of `source`."""
    return list(METRICS[source])


def selection(S, source: str, hosts, workload: str, metric: str) -> pd.DataFrame:
    """The points to draw: columns host, x, y (floats; rows with either missing dropped), sorted by host and
    x. For the closed loop only the sweep's own points (``in_sweep``; not the spec-conditions point)."""
    m = METRICS[source][metric]
    df = _table(S, source)
    if df.empty:
        return pd.DataFrame(columns=["host", "x", "y"])
    df = df[df["host"].astype(str).isin([str(h) for h in hosts]) & (_workload_labels(df, source) == workload)]
    if source == "qd" and "in_sweep" in df.columns:
        df = df[df["in_sweep"].map(lambda v: v is True or str(v).lower() == "true")]
    out = pd.DataFrame({"host": df["host"].astype(str),
                        "x": pd.to_numeric(df.get(m.x), errors="coerce"),
                        "y": pd.to_numeric(df.get(m.y), errors="coerce")})
    return out.dropna(subset=["x", "y"]).sort_values(["host", "x"]).reset_index(drop=True)


def draw(ax, data: pd.DataFrame, source: str, workload: str, metric: str) -> int:
    """Draw `data` (:func:`selection`) on `ax`: one line with markers per device; returns the points drawn."""
    m = METRICS[source][metric]
    ax.clear()
    for host, g in data.groupby("host", sort=True):
        ax.plot(g["x"].to_numpy(float), g["y"].to_numpy(float), marker="o", lw=1.4, ms=4, label=host)
    ax.set_xlabel(m.x_label)
    ax.set_ylabel(m.y_label)
    ax.set_title(f"{SOURCES[source][0]}: {workload}", fontsize=9)
    if m.log_y and len(data) and (data["y"] > 0).all():
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        plain_log(ax.yaxis)
    if m.x == "outstanding_io" and len(data) and (data["x"] > 0).all():
        ax.set_xscale("log", base=2)
        plain_log(ax.xaxis)
    ax.grid(True, alpha=0.3)
    if len(data):
        ax.legend(title="device", fontsize=8)
    else:
        ax.text(0.5, 0.5, "no points for this choice", ha="center", va="center", transform=ax.transAxes)
    return int(np.isfinite(data["y"].to_numpy(float)).sum()) if len(data) else 0


class Explorer:
    """Widgets over a Synthesis: source, devices, workload and metric choosers above one interactive figure
    (ipympl: zoom, pan, the cursor's x and y in the figure's footer) and a caption saying what is drawn.
    ``display(Explorer(S).widget)`` in a notebook cell tagged ``explore``."""

    def __init__(self, S):
        import ipywidgets as w
        from matplotlib.figure import Figure

        self.S = S
        self.srcs = sources(S)
        first = next(iter(self.srcs), None)
        self.source = w.Dropdown(options=[(v, k) for k, v in self.srcs.items()], value=first,
                                 description="data", layout=w.Layout(width="440px"))
        self.devices = w.SelectMultiple(description="devices", rows=3, layout=w.Layout(width="300px"))
        self.workload = w.Dropdown(description="workload", layout=w.Layout(width="440px"))
        self.metric = w.Dropdown(description="metric", layout=w.Layout(width="300px"))
        self.caption = w.HTML()
        self.fig = Figure(figsize=(7.0, 4.0), constrained_layout=True)
        self.ax = self.fig.add_subplot()
        self.canvas = _canvas(self.fig)
        self.drawn = 0
        self._quiet = False
        self.source.observe(self._on_source, "value")
        self.devices.observe(self._on_devices, "value")
        for box in (self.workload, self.metric):
            box.observe(lambda _change: self.update(), "value")
        controls = w.HBox([w.VBox([self.source, self.workload]), w.VBox([self.devices, self.metric])])
        self.widget = w.VBox([controls, self.caption, self.canvas] if first else
                             [w.HTML("No storage or memory results in this data to explore.")])
        if first:
            self._on_source()

    def _on_source(self, _change=None) -> None:
        """A new source: its devices (all selected), workloads and metrics."""
        self._quiet = True
        hosts = devices(self.S, self.source.value)
        self.devices.options = hosts
        self.devices.value = tuple(hosts)
        self.metric.options = metrics(self.source.value)
        self.metric.value = self.metric.options[0]
        self._quiet = False
        self._on_devices()

    def _on_devices(self, _change=None) -> None:
        """Other devices: the workloads they have (the current one kept when it is still there)."""
        if self._quiet:
            return
        self._quiet = True
        current = self.workload.value
        options = workloads(self.S, self.source.value, self.devices.value)
        self.workload.options = options
        self.workload.value = current if current in options else (options[0] if options else None)
        self._quiet = False
        self.update()

    def update(self) -> None:
        """Redraw the figure for the current choice and say what it shows in the caption."""
        if self._quiet or self.source.value is None:
            return
        source, metric, workload = self.source.value, self.metric.value, self.workload.value
        data = selection(self.S, source, self.devices.value, workload, metric) if workload else \
            pd.DataFrame(columns=["host", "x", "y"])
        self.drawn = draw(self.ax, data, source, workload or "–", metric)
        self.canvas.draw_idle()
        hosts = ", ".join(self.devices.value) or "no device"
        self.caption.value = (f"<b>{metric}</b> — {SOURCES[source][0]}, workload <b>{workload or '–'}</b>, "
                              f"devices: {hosts}; <span class='memstor-drawn'>{self.drawn} points drawn</span>. "
                              "Zoom with the toolbar's rectangle, pan with the cross; the cursor's values are "
                              "shown under the figure.")


def _canvas(fig):
    """An ipympl canvas widget for `fig` (zoom, pan, values under the cursor) without changing the notebook's
    matplotlib backend (the report's other figures stay static images)."""
    from ipympl.backend_nbagg import Canvas, FigureManager

    canvas = Canvas(fig)
    FigureManager(canvas, 0)  # gives the canvas its toolbar
    canvas.header_visible = False
    canvas.toolbar_visible = True  # zoom, pan, home and save always shown (not only on hover)
    canvas.footer_visible = True  # the x and y under the cursor
    return canvas
