"""Figures of the sixth independent reads (issue 38, S10-bare 18, 19): built from the reviewed bare run's tables
(tests/data/review-s10, SOURCES.md). Figure 13's open 'spec / extra point' markers at N = 128 (randread 2,538 µs,
randwrite 4,199 µs) were cut at their centres by the top edge of the latency panels."""
from __future__ import annotations

from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import matplotlib.transforms
import numpy as np
import pandas as pd

from memstor.report.plots import openloop as ol
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


# ------------------------------------------------------------------------- S10-bare 19: labels by proximity


def load_figure():
    """Figure 16 of the bare run: the open-loop points of load_latency-bare.csv beside the closed sweep."""
    load = pd.read_csv(DATA / "load_latency-bare.csv")
    load["valid"] = load["valid"].astype(object).map(lambda v: str(v) == "True")
    return printing.fit_for_print(ol.latency_throughput_figure(load, queue_depth_points()))


def ambiguous(fig) -> list[str]:
    """Shown labels whose box lies less than NEARER_BY times as far from another marker centre as from its own
    point (own check: every line marker of the panel, display pixels)."""
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    out = []
    for ax in fig.axes:
        pts = [ax.transData.transform(xy) for line in ax.get_lines() if line.get_marker() not in (None, "", "None")
               for xy in np.column_stack([line.get_xdata(), line.get_ydata()]).astype(float) if np.isfinite(xy).all()]
        for t in ax.texts:
            if not t.get_visible() or not t.get_text():
                continue
            box, own = t.get_window_extent(r), ax.transData.transform(t.xy)
            mine = printing._gap(box, *own)
            out += [f"{ax.get_title()}: {t.get_text()}" for x, y in pts if abs(x - own[0]) + abs(y - own[1]) > 1
                    and printing._gap(box, x, y) < printing.NEARER_BY * mine]
    return out


def test_figure_16_puts_no_label_about_as_near_another_point_as_its_own():
    """S10-bare 19: randread u90 (46,282 IOPS, 7,599 µs) and u95 (47,992, 7,096 µs) lie 1.7k IOPS apart; 'u95' sat
    below-left of the u90 point and 'u90' right of u95's: read by proximity, swapped."""
    fig = load_figure()
    mean = fig.axes[0]
    xy = {t.get_text(): t.xy for t in mean.texts if t.get_color() == mean.get_lines()[0].get_color()}
    assert round(xy["u90"][0]) == 46282 and round(xy["u95"][1]) == 7096      # the reviewed rows
    assert ambiguous(fig) == [] and printing.print_problems(fig) == []
    shown = [t.get_text() for t in mean.texts if t.get_visible()]
    assert len(shown) >= 12                                          # most points keep their label
    plt.close(fig)


def test_a_label_is_judged_against_its_own_point_and_the_nearest_other():
    box = matplotlib.transforms.Bbox([[10.0, 0.0], [30.0, 10.0]])      # a label 10 px right of its point at (0, 5)
    own = np.array([0.0, 5.0])
    assert not printing._nearer_other(box, [(60.0, 5.0, 4.0)], own)  # the other 30 px off: 3x as far, clear
    assert printing._nearer_other(box, [(35.0, 5.0, 4.0)], own)      # the other 5 px off: nearer than its own
    assert printing.NEARER_BY == 1.2
    assert printing._nearer_other(box, [(41.0, 5.0, 4.0)], own)      # 11 px: less than 1.2x as far, ambiguous
    assert not printing._nearer_other(box, [(43.0, 5.0, 4.0)], own)  # 13 px: more than 1.2x as far, clear
    assert not printing._nearer_other(box, [(0.5, 5.0, 4.0)], own)   # its own point's marker (another series)
    assert not printing._nearer_other(box, [(35.0, 5.0, 4.0)], np.array([np.nan, np.nan]))  # no point of its own
    assert not printing._nearer_other(box, [], own)                  # nothing else drawn
