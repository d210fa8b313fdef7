"""mixed-load-map (issue 41): its parameters (both sides of every bound), the adaptive grid's rule on tables whose
answer is known, and a real run of ioarrive on a test file here: every cell held or marked with its reason,
offered rates as asked, and a rerun that reads instead of measuring."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from conftest import ROOT
from memstor.analysis import mixed_load
from memstor.core.errors import UsageError
from memstor.experiments import _registry
from memstor.experiments import mixed_load_map as mlm
from memstor.measure import ioarrive
from memstor.parse.diskplorer import parse_diskplorer
from memstor.report.plots import mixed_load as mlplots

QUICK = _registry.load_profile("quick", mlm.EXPERIMENT)


def _params(**over):
    return mlm.mixed_load_params(dict(QUICK, **over))


@pytest.mark.parametrize("key,value", [("write_pct", [120]), ("write_pct", [-1]), ("read_pct", [0]),
                                       ("read_pct", [101]), ("pattern", "zigzag"), ("resolution_pct", 0),
                                       ("resolution_pct", 60), ("refine_rounds", 11), ("read_x_max_iops", -5)])
def test_a_value_outside_its_range_is_refused_naming_the_key(key, value):
    with pytest.raises(UsageError) as err:
        _params(**{key: value})
    assert key in str(err.value) and "\n" not in str(err.value)


def test_the_edges_of_every_range_are_accepted():
    p = _params(write_pct=[0, 100], read_pct=[0.5, 100], resolution_pct=50, refine_rounds=0, pattern="sequential")
    assert p.write_pct == (0, 100) and p.read_pct == (0.5, 100) and (p.read_rw, p.write_rw) == ("read", "write")


# ------------------------------------------------------------------------------------------ the grid


def _table(cells: list[tuple[float, float, float, bool]], x_read: float = 100_000.0) -> pd.DataFrame:
    """Rows as the family writes them: (write %, read %, read p99 µs, held) -> one read row per cell."""
    return pd.DataFrame([{"status": "done", "direction": "read", "write_pct": w, "read_pct": r,
                          "write_offered_MBps": 4.096 * w, "read_offered_iops": r / 100 * x_read,
                          "offered_iops": r / 100 * x_read, "achieved_iops": r / 100 * x_read, "resp_p99_us": p99,
                          "open_loop": held, "read_x_max_iops": x_read} for w, r, p99, held in cells])


def test_a_wide_bracket_gets_its_middle_and_a_narrow_one_nothing():
    p = _params(read_pct=[20, 50, 80], slo_p99_us=[1000], resolution_pct=10)
    grid = mlm.start_grid(p)
    wide = _table([(0, 20, 200, True), (0, 50, 600, True), (0, 80, 5000, True)])
    add = mlm.next_cells(p, grid, wide)
    assert list(add) == [0] and list(add[0]) == [65.0] and "between 50 and 80 %" in add[0][65.0]
    narrow = _table([(0, 20, 200, True), (0, 50, 600, True), (0, 55, 5000, True)])
    assert mlm.next_cells(p, {0: {20: "", 50: "", 55: ""}}, narrow) == {}


def test_a_target_met_everywhere_or_nowhere_extends_the_grid_on_its_side():
    p = _params(read_pct=[20, 50], slo_p99_us=[1000], resolution_pct=10)
    met = mlm.next_cells(p, mlm.start_grid(p), _table([(0, 20, 100, True), (0, 50, 200, True)]))
    assert list(met[0]) == [75.0] and "half-way to 100 %" in met[0][75.0]
    missed = mlm.next_cells(p, mlm.start_grid(p), _table([(0, 20, 5000, True), (0, 50, 9000, True)]))
    assert list(missed[0]) == [10.0] and "half the lowest share" in missed[0][10.0]


def test_a_cell_that_did_not_hold_is_not_a_bracket_end():
    p = _params(read_pct=[20, 50, 80], slo_p99_us=[1000], resolution_pct=10)
    # the 50 % cell "missed" but did not hold: the bracket is 20 .. 80, its middle 50 is measured already
    t = _table([(0, 20, 200, True), (0, 50, 9000, False), (0, 80, 5000, True)])
    assert mlm.next_cells(p, mlm.start_grid(p), t) == {}
    held = _table([(0, 20, 200, True), (0, 50, 9000, True), (0, 80, 5000, True)])
    assert list(mlm.next_cells(p, mlm.start_grid(p), held)[0]) == [35.0]


# ------------------------------------------------------------------------------------------ a real run


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    if shutil.which("fio") is None:
        pytest.skip("fio is not installed (make env installs it): the X_max probe needs it")
    ioarrive.ensure_binary()
    data = tmp_path_factory.mktemp("mlm") / "data"
    params = dict(QUICK, runtime_s=1, ramp_s=0, file_size="16m", write_pct=[0, 20], read_pct=[10, 40],
                  refine_rounds=1, probe_iodepth=8, probe_numjobs=1, write_x_max_iops=20_000)
    table = _registry.family(mlm.EXPERIMENT).run(params, data_root=data, target_dir=None, host="h", progress=False)
    return data, params, table


@pytest.mark.fio
def test_every_cell_is_held_or_says_why(measured):
    _, params, table = measured
    assert (table["status"] == "done").all()
    cells = table.groupby("point")
    assert {c for c, _ in table.groupby("cell")} >= {"w0-r10", "w0-r40", "w20-r10", "w20-r40"}
    for _, g in cells:
        held = g["open_loop"].astype(bool)
        assert held.all() or not held.any()  # a cell is held in both directions or in none
        if not held.any():
            assert (g["held_note"].astype(str).str.len() > 10).all(), g["held_note"].tolist()
        else:
            assert (g["held_note"].fillna("") == "").all() and (g["resp_p99_us"] > 0).all()
    assert set(table.loc[table["write_pct"] == 0, "direction"]) == {"read"}  # reads alone
    assert set(table.loc[table["write_pct"] == 20, "direction"]) == {"read", "write"}


@pytest.mark.fio
def test_offered_rates_are_the_asked_shares_of_x_max(measured):
    _, _, table = measured
    reads, writes = table[table["direction"] == "read"], table[table["direction"] == "write"]
    x_read = reads["read_x_max_iops"].iloc[0]
    assert x_read > 0 and "probe" in reads["x_max_source"].iloc[0]  # no queue-depth table here: the probe
    # the table's X_max is rounded to 0.1 IOPS, the offered rate came from the unrounded one: within 1 IOPS
    asked = (reads["read_pct"] / 100 * x_read).clip(lower=1)
    assert ((reads["offered_iops"] - asked).abs() <= 1).all(), (reads["offered_iops"].tolist(), asked.tolist())
    assert (reads["offered_iops"] == reads["offered_iops"].round()).all()  # whole IOPS, what ioarrive is asked
    assert (writes["offered_iops"] == 4000).all()  # 20 % of the profile's 20,000 IOPS
    assert writes["write_offered_MBps"].tolist() == pytest.approx([4000 * 4096 / 1e6] * len(writes))
    assert (reads["achieved_iops"] > 0).all()


@pytest.mark.fio
def test_a_rerun_reads_the_cells_and_takes_the_same_decisions(measured):
    data, params, table = measured
    again = _registry.family(mlm.EXPERIMENT).run(params, data_root=data, target_dir=None, host="h", progress=False)
    cols = ["point", "direction", "achieved_iops", "resp_p99_us", "grid_note"]
    pd.testing.assert_frame_equal(again[cols].reset_index(drop=True), table[cols].reset_index(drop=True))


# ------------------------------------------------------------------------------------------ anyone's data

DISKPLORER = ROOT / "tests/data/diskplorer/scylladb__diskplorer/latency-matrix-results/m7gd.4xlarge.excerpt.json"


def test_a_diskplorer_result_draws_the_same_map_its_cells_marked_unchecked():
    """Acceptance 3: diskplorer's real result (3 cells of scylladb/diskplorer's m7gd.4xlarge run) parses into the
    cell table and draws the map: coloured, as cells whose loop was never checked (fio's rate, latency from
    submission) — not as held cells, and not dropped either."""
    res = parse_diskplorer(DISKPLORER.read_text(), str(DISKPLORER))
    cells = pd.DataFrame(res.rows).assign(host="m7gd.4xlarge")
    assert not res.errors and len(cells) >= 4 and cells["open_loop"].isna().all()
    strict = mixed_load.read_cells(cells)
    assert not strict["held"].any()  # memstor's rule: a loop never checked did not hold
    loose = mixed_load.read_cells(cells, unchecked_as_held=True)
    assert loose["held"].all() and set(loose["loop"]) == {"not checked"}
    curve = mixed_load.capacity_curve(cells, [1000], unchecked_as_held=True)
    assert (curve["cells_used"] > 0).all()
    fig = mlplots.map_figure(cells, curve, [1000], unchecked_as_held=True)
    ax = fig.axes[0]
    labels = ax.get_legend_handles_labels()[1]
    assert mlplots.UNCHECKED in labels and mlplots.NOT_HELD not in labels
    drawn = sum(len(c.get_offsets()) for c in ax.collections if hasattr(c, "get_offsets"))
    assert drawn >= len(loose)  # every cell drawn (and the capacity markers)


def test_rt_priority_reaches_ioarrive_only_when_asked():
    p = _params(rt_priority=10)
    cfg = mlm.cell_config(p, "io_uring", 20, 50, {"read": (100_000.0, "t"), "write": (50_000.0, "t")}, "listed")
    point = mlm.make_points([cfg], p.common, {}, "/f")[0]
    assert p.rt_priority == 10 and "--rt-priority" in mlm.job(point, "/f", p.rt_priority).args()
    assert "--rt-priority" not in mlm.job(point, "/f", _params().rt_priority).args()
    assert (mlm.job(point, "/f").read_rate_iops, mlm.job(point, "/f").write_rate_iops) == (50_000, 10_000)


def test_the_map_prints_with_one_held_cell_and_with_many():
    """The review's case: one held cell among crosses (a colour scale of one value) printed as a collapsed
    speck; the printed figure must keep a plotting area and readable text both then and with a full grid."""
    from memstor.report.plots.printing import fit_for_print, print_problems

    one = _table([(0, 20, 3500, False), (0, 50, 3300, True), (0, 80, 8000, False), (30, 20, 4000, False),
                  (30, 50, 9e5, False)]).assign(host="vm")
    many = _table([(w, r, 200 + 40 * r + 20 * w, True) for w in (0, 10, 25) for r in (10, 30, 50, 70, 90)]
                  ).assign(host="vm")
    for cells in (one, many):
        curve = mixed_load.capacity_curve(cells, [1000, 3000])
        fig = fit_for_print(mlplots.map_figure(cells, curve, [1000, 3000]))
        assert print_problems(fig) == []
        if cells is many:  # the colour bar has a scale; one held cell among crosses is not read: no colour at all
            assert [t.get_text() for t in fig.axes[1].get_yticklabels() if t.get_text()]
        else:
            assert len(fig.axes) == 1


def test_a_capacity_needs_most_of_its_write_rates_cells_held():
    """The review's case: one held cell of four gave a capacity, while the same load's workload in the
    open-loop section was withheld (open_loop_held: < 80 % held). 4 of 5 held: stated; 3 of 5: withheld."""
    base = [(0, 10, 200, True), (0, 30, 400, True), (0, 50, 900, True), (0, 70, 3000, True)]
    four = mixed_load.capacity_curve(_table(base + [(0, 90, 9000, False)]), [1000]).iloc[0]
    assert four["read_capacity_iops"] > 0 and four["cells_used"] == 4
    three = mixed_load.capacity_curve(_table(base[:3] + [(0, 70, 3000, False), (0, 90, 9000, False)]),
                                      [1000]).iloc[0]
    assert pd.isna(three["read_capacity_iops"]) and "only 3 of 5 cells held" in three["note"]
    assert mixed_load.sentence(three) == ("with no writes too few cells of this drive held (3, under 80 % of them): "
                                          "no read capacity for read p99 ≤ 1 ms (held: 10,000 IOPS offered at read p99 "
                                          "200 µs, 0.20× the target; 30,000 IOPS offered at read p99 400 µs, 0.40× the "
                                          "target; 50,000 IOPS offered at read p99 900 µs, 0.90× the target)")
