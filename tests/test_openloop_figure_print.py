"""Figure 17 (latency under offered load) reads in print (issue 38, workstream E; R-loop 10.1, S6-bare M-11, C-13):
loop's figure had its title over both y labels, u/QD labels over other points' markers, rotated six-digit x ticks;
bare's put 'QD16' beside the u50 circle and drew its three points whose own checks passed (randread u10, u30,
randwrite u30) like the rest. Built from the reviewed loop and bare tables (tests/data/review-s5)."""
from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd

from memstor.report.plots import openloop as ol
from memstor.report.plots import printing

matplotlib.use("Agg")
DATA = Path(__file__).parent / "data" / "review-s5"


def gated(name: str) -> pd.DataFrame:
    load = pd.read_csv(DATA / name)
    if "valid" in load:
        load["valid"] = load["valid"].astype(object).map(lambda v: str(v) == "True")
    return load


def loop_figure():
    summ = pd.read_csv(DATA / "summary-loop328.csv")
    qd = summ[summ["experiment"] == "fio-queue-depth"].assign(in_sweep=True)
    return printing.fit_for_print(ol.latency_throughput_figure(gated("load_latency-loop328.csv"), qd))


def covered(fig) -> list[str]:
    """Labels whose box covers a marker of another point (own check, not printing's)."""
    out = []
    r = printing._renderer(fig)
    for ax in fig.axes:
        pts = [ax.transData.transform(xy) for line in ax.get_lines() if line.get_marker() not in (None, "", "None")
               for xy in np.column_stack([line.get_xdata(), line.get_ydata()]).astype(float) if np.isfinite(xy).all()]
        for t in ax.texts:
            if not t.get_visible():
                continue
            box, own = t.get_window_extent(r), ax.transData.transform(t.xy)
            out += [t.get_text() for x, y in pts if abs(x - own[0]) + abs(y - own[1]) > 1
                    and box.x0 - 2 < x < box.x1 + 2 and box.y0 - 2 < y < box.y1 + 2]
    return out


def test_the_loop_figure_prints_with_labels_beside_their_own_points():
    fig = loop_figure()
    assert printing.print_problems(fig) == []
    assert covered(fig) == []
    assert fig.get_suptitle() == ""                               # no title over the y labels
    for ax in fig.axes:
        assert all(t.get_rotation() == 0 for t in ax.get_xticklabels())
        assert any(t.get_text().endswith("k") for t in ax.get_xticklabels())


def test_points_whose_own_checks_passed_are_ringed_only_in_a_withheld_workload():
    bare = gated("load_curve-bare.csv").assign(valid=False)
    fig = ol.latency_throughput_figure(bare, None)
    ring = {ln.get_gid(): len(ln.get_xdata()) for ln in fig.axes[0].get_lines() if str(ln.get_gid()).startswith("own")}
    assert ring == {"ownheld:vm:randread": 2, "ownheld:vm:randwrite": 1}
    assert ol.OWN_HELD in fig.axes[0].get_legend_handles_labels()[1]
    kept = ol.latency_throughput_figure(bare.assign(valid=True), None)   # the other side: the loop held there
    assert not [ln for ln in kept.axes[0].get_lines() if str(ln.get_gid()).startswith("own")]
