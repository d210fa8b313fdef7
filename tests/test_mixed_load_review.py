"""The mixed-load map draws and says only what its cells support (issue 38, workstream E; R-bare M-14, C-18,
S6-bare M-12, C-15): bare's map coloured its one held cell (w0-r20, read p99 2,351 µs at 30,129 IOPS, while 2 of
3 cells at its write rate failed) on a colour bar of its own, its caption promised contours and capacity diamonds
that were not drawn, and 'too few cells held: no read capacity' hid that the held cell missed 1 ms 2.35×. Built
from bare's mixed-load-map rows (tests/data/review-s5/mixed-load-map-bare.csv)."""
from __future__ import annotations

from pathlib import Path

import matplotlib
import pandas as pd

from memstor.analysis import mixed_load
from memstor.report.plots import mixed_load as mlfigs

matplotlib.use("Agg")
DATA = Path(__file__).parent / "data" / "review-s5"


def cells() -> pd.DataFrame:
    return pd.read_csv(DATA / "mixed-load-map-bare.csv")


def curve(c: pd.DataFrame) -> pd.DataFrame:
    return mixed_load.capacity_curve(c, [1000.0], by=("host",))


def test_a_held_cell_among_mostly_failed_ones_is_not_coloured():
    c = cells()
    fig = mlfigs.map_figure(c, curve(c), [1000.0])
    assert len(fig.axes) == 1                                   # no colour bar for a cell that is not read
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert mlfigs.TOO_FEW in labels and mlfigs.NOT_HELD in labels
    every = c.assign(open_loop=True)                            # the other side: every cell held -> coloured
    fig = mlfigs.map_figure(every, curve(every), [1000.0])
    assert len(fig.axes) == 2 and mlfigs.TOO_FEW not in fig.axes[0].get_legend_handles_labels()[1]


def test_the_caption_names_only_what_is_drawn():
    c = cells()
    said = "; ".join(mlfigs.drawn(c, curve(c)))
    assert "contours" not in said and "diamonds" not in said and "colour" not in said
    assert "hollow circles" in said and "gray crosses" in said
    every = c.assign(open_loop=True)
    said = "; ".join(mlfigs.drawn(every, curve(every)))
    assert "colour: read p99 of the 6 held cells" in said and "dashed: the targets' contours" in said
    assert "gray crosses" not in said and "▲/▼: a capacity beyond the grid" in said  # p99 > 1 ms everywhere


def test_a_withheld_capacity_says_what_its_held_cells_measured():
    c = cells()
    first = curve(c).iloc[0]
    said = mixed_load.sentence(first, "vm")
    assert said.endswith("no read capacity for read p99 ≤ 1 ms (held: 30,129 IOPS offered at read p99 2,351 µs, 2.35× the "
                         "target)")
    none = mixed_load.sentence(curve(c).iloc[1], "vm")          # no held cell at 153 MB/s: nothing to add
    assert none.endswith("no cell of vm held: no read capacity for read p99 ≤ 1 ms")


def test_a_cells_reason_is_said_whole_in_microseconds():
    """S6-bare C-12 / R-bare C-17: '784 windows of 2550 us (20 x 127.2 us …)' and a reason cut at 160 characters,
    '(mean 192.6 per w (…)'."""
    from memstor.report.text import mixed_load as mltext

    said = mltext.held_summary(cells())
    assert "784 windows of 2550 µs (20 x 127.2 µs, by which they may move)" in said
    assert said.endswith("(mean 192.6 per window) (and 1 more reason)") and " us" not in said and "(…)" not in said
    held = mltext.cells_display(cells())["held"].tolist()
    assert held[0] == "yes" and "28 windows of 70,950 µs (20 x 3547 µs" in held[2] and "e+04" not in held[2]


def test_missed_rates_near_x_max_are_not_called_beyond_the_ceiling():
    """S6-bare C-17: validity.csv said randread's open_loop_rate misses were 'beyond the device's ceiling'; they were
    offered at 95-98 % of X_max, below it."""
    from memstor.analysis.validity.openloop import open_loop_rows

    load = pd.read_csv(DATA / "load_curve-bare.csv")
    rate = {r["subject"]: r for r in open_loop_rows(load) if r["check"] == "open_loop_rate"}
    assert rate["randread"]["status"] == "warn"
    assert "beyond the device's ceiling" not in rate["randread"]["consequence"]
    assert "offered near X_max (at 95.0-98.0 % of X_max, from 80 %)" in rate["randread"]["consequence"]
    assert rate["randwrite"]["status"] == "fail"       # missed at 70 %: not near the ceiling, the other side


def test_the_headline_check_names_which_open_loop_points_it_read():
    """R-bare C-20: headline_definition said 'open loop's highest achieved 61,932' (randwrite u50, within +-5 % of
    its rate) while below_closed_max said 95,836 (u95, 81 % of its rate): one name, two definitions."""
    from memstor.analysis.validity.headline import _best_iops

    load = pd.read_csv(DATA / "load_curve-bare.csv")
    pts = pd.DataFrame({"host": ["vm"], "experiment": ["fio-load-latency"], "rw": ["randwrite"], "bs_bytes": [4096]})
    said = {what: v for what, v, _ in _best_iops("vm", "randwrite", None, load, None, pts)}
    assert said == {"open loop's highest achieved at a point within ±5 % of its offered rate": 61932.5}


def test_open_loop_held_says_what_is_withheld_in_the_generators_terms():
    """validity.csv said 'the open-loop models ... and the SLO answer ... are not shown: gated arrivals make the
    curve a partly closed loop' for ioarrive's bare randread, whose SLO answer comes from its 2 held points
    (9617af3) and whose arrivals were never gated (ioarrive issues them whatever is in flight)."""
    from memstor.analysis.validity.openloop import open_loop_rows

    held = {r["subject"]: r for r in open_loop_rows(pd.read_csv(DATA / "load_curve-bare.csv"))
            if r["check"] == "open_loop_held"}
    said = held["randread"]["consequence"]
    assert held["randread"]["status"] == "fail" and "gated arrivals make" not in said
    assert "its SLO answer, and any comparison with the closed loop, come from the held points alone" in said and "ioarrive: its own checks failed" in said
