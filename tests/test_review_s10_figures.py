"""Figures of the sixth independent reads (issue 38, S10-bare 18): built from the reviewed bare run's tables
(tests/data/review-s10, SOURCES.md). Figure 13's open 'spec / extra point' markers at N = 128 (randread 2,538 µs,
randwrite 4,199 µs) were cut at their centres by the top edge of the latency panels."""
from __future__ import annotations

from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from memstor.report.plots import printing
from memstor.report.plots import synthesis as figs

matplotlib.use("Agg")
DATA = Path(__file__).parent / "data" / "review-s10"


def queue_depth_points() -> pd.DataFrame:
    """The bare run's queue-depth table as the figure gets it: the one-job sweep (QD1-64) and the spec point
    QD32x4 (128 in flight) outside it."""
    s = pd.read_csv(DATA / "summary-bare.csv")
    s = s[s["experiment"] == "fio-queue-depth"]
    return pd.DataFrame({"host": s["host"], "rw": s["rw"], "config": s["rw"] + "-qd" + s["iodepth"].astype(str),
                         "outstanding_io": s["iodepth"] * s["numjobs"], "iops": s["iops"],
                         "lat_mean_us": s["lat_mean_us"], "in_sweep": s["numjobs"] == 1})


def cut_markers(fig) -> list[str]:
    """Markers whose centre lies in a panel's view but whose edge reaches past its frame (own check: every line
    marker and scatter point, display pixels)."""
    fig.canvas.draw()
    out = []
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        b = ax.bbox
        for x, y, h in printing._markers(ax, fig) + printing._scatter_markers(ax, fig):
            if b.x0 - 1 <= x <= b.x1 + 1 and b.y0 - 1 <= y <= b.y1 + 1 and \
                    (x - h < b.x0 - 0.5 or x + h > b.x1 + 0.5 or y - h < b.y0 - 0.5 or y + h > b.y1 + 0.5):
                out.append(f"axes {i} ({ax.get_xlabel()}): {ax.transData.inverted().transform((x, y))}")
    return out


def test_figure_13_draws_the_spec_points_at_128_in_flight_whole():
    """S10-bare 18: the open markers at N = 128 (randread 50,377 IOPS at 2,538 µs; randwrite 30,439 at 4,199 µs)
    sat on the panels' top edge, half cut off."""
    qd = queue_depth_points()
    assert sorted(qd.loc[~qd["in_sweep"], "lat_mean_us"].round()) == [2538.0, 4199.0]
    fig = printing.fit_for_print(figs.queue_depth_figure(qd, {}))
    assert cut_markers(fig) == []
    lat_top = [ax.get_ylim()[1] for ax in fig.axes if ax.get_ylabel().startswith("mean latency")]
    assert lat_top[0] > 2538.0 and lat_top[1] > 4199.0
    assert printing.print_problems(fig) == []
    plt.close(fig)


def _panel(y: float, ylim=(0.0, 10.0)):
    fig, ax = plt.subplots(figsize=(3, 2), constrained_layout=True)
    ax.plot([1.0, 2.0, 3.0], [2.0, 5.0, y], marker="o", markersize=10)
    ax.set_xlim(0, 4)
    ax.set_ylim(*ylim)
    return fig, ax


def test_a_marker_on_the_frame_widens_the_view_and_no_other_does():
    on_edge, ax = _panel(10.0)                                   # centre on the top edge: widened past it
    printing.keep_markers_inside(on_edge)
    assert ax.get_ylim()[0] == 0.0 and ax.get_ylim()[1] > 10.0 and cut_markers(on_edge) == []
    inside, ax = _panel(8.0)                                     # well inside: the view stays
    printing.keep_markers_inside(inside)
    assert ax.get_ylim() == (0.0, 10.0)
    outside, ax = _panel(30.0)                                   # outside the view on purpose: left out, not chased
    printing.keep_markers_inside(outside)
    assert ax.get_ylim() == (0.0, 10.0)
    missing, ax = _panel(np.nan)                                 # no value: nothing to draw, nothing to widen for
    printing.keep_markers_inside(missing)
    assert ax.get_ylim() == (0.0, 10.0)
    log_edge, ax = _panel(1000.0, (1.0, 1000.0))                 # a log axis alike
    ax.set_yscale("log")
    ax.set_ylim(1.0, 1000.0)
    printing.keep_markers_inside(log_edge)
    assert ax.get_ylim()[1] > 1000.0 and cut_markers(log_edge) == []
    for f in (on_edge, inside, outside, missing, log_edge):
        plt.close(f)
