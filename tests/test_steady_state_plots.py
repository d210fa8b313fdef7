"""memstor.report.plots.steady_state: the fio-steady-state figures and table helpers, on synthetic rounds
built with the rule's own round_table (so the table's verdict columns are those a real run writes), checked
for what is drawn: points, shaded window, bands, the least-squares line, the preconditioning offset."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from memstor.analysis import steady_state as ss  # noqa: E402
from memstor.report import text  # noqa: E402
from memstor.report.plots import steady_state as sp  # noqa: E402

BS = 4096
ROUND_S = 2
PC_BYTES = 2.0e9
SPAN = 1.0e9

#: Decays, then settles: steady at round 9 (window rounds 5-9).
STEADY = [100000.0, 80000.0, 65000.0, 55000.0, 50000.0, 48000.0, 47000.0, 46500.0, 46000.0, 45800.0]
#: Swings by 30 % every round: never steady within 25 rounds.
SWINGING = [100000.0 if i % 2 else 70000.0 for i in range(25)]


COLUMNS = ["host", "rw", "direction", "bs_bytes", "iodepth", "numjobs", "iops", "bw_MBps", "lat_mean_us",
           "clat_p99_us", "status", "error", "point", "rep", "round", "round_s", "span_bytes", "span",
           "precondition_passes", "precondition_bytes", "precondition_s", "bytes_written", "ss_status",
           "ss_achieved", "ss_round", "window_avg_iops", "data_excursion_pct", "slope_excursion_pct",
           "in_window", "max_rounds"]


def rounds_frame(iops, host="dev", max_rounds=25, pc_bytes=PC_BYTES, failed_round=None) -> pd.DataFrame:
    """A fio-steady-state table as the experiment writes it: one row per round with the fio columns used
    by the figures and the SS_COLUMNS (verdict columns from memstor.analysis.steady_state)."""
    iops = [float(v) for v in iops]
    ok = [v for i, v in enumerate(iops, 1) if i != failed_round]
    result = ss.evaluate(ok, max_rounds)
    rt = ss.round_table(ok, max_rounds)
    written = pc_bytes + np.cumsum(np.array(iops) * ROUND_S * BS)
    rows = []
    for i, v in enumerate(iops, 1):
        failed = i == failed_round
        k = i - 1 - (failed_round is not None and i > failed_round)
        rows.append({
            "host": host, "rw": "randwrite", "direction": "write", "bs_bytes": BS, "iodepth": 32,
            "numjobs": 4,
            "iops": np.nan if failed else v, "bw_MBps": np.nan if failed else v * BS / 1e6,
            "lat_mean_us": np.nan if failed else 128 / v * 1e6, "clat_p99_us": np.nan if failed else 3e8 / v,
            "status": "failed" if failed else "done", "error": 5 if failed else 0,
            "point": f"r{i:02d}-randwrite-bs4k-qd32x4-abcd1234", "rep": 1,
            "round": i, "round_s": ROUND_S, "span_bytes": SPAN, "span": "file", "precondition_passes": 2,
            "precondition_bytes": pc_bytes, "precondition_s": 12.5, "bytes_written": written[i - 1],
            "ss_status": result.status, "ss_achieved": result.achieved, "ss_round": result.round,
            "window_avg_iops": result.window_avg_iops, "data_excursion_pct": result.data_excursion_pct,
            "slope_excursion_pct": result.slope_excursion_pct,
            "in_window": False if failed else bool(rt["in_window"].iloc[k]), "max_rounds": max_rounds,
        })
    df = pd.DataFrame(rows, columns=COLUMNS)
    df["ss_round"] = df["ss_round"].astype("Int64")
    return df


def csv_round_trip(df: pd.DataFrame, tmp_path) -> pd.DataFrame:
    """The table as a notebook reads it back from the processed CSV."""
    path = tmp_path / "fio-steady-state.csv"
    df.to_csv(path, index=False)
    return pd.read_csv(path)


def by_gid(fig, gid: str):
    """Every artist of the figure's axes whose gid is `gid`."""
    return [a for ax in fig.axes for a in ax.get_children() if a.get_gid() == gid]


def x_extent(patch) -> list[float]:
    """x data limits of an axvspan (a Rectangle in matplotlib >= 3.9, a Polygon before)."""
    if hasattr(patch, "get_width"):
        return [patch.get_x(), patch.get_x() + patch.get_width()]
    return list(np.asarray(patch.get_xy())[:, 0])


def one(fig, gid: str):
    found = by_gid(fig, gid)
    assert len(found) == 1, f"{gid}: {len(found)} artists"
    return found[0]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# ----------------------------------------------------------------------------------------- verdicts


@pytest.mark.parametrize("series, max_rounds", [(STEADY, 25), (SWINGING, 25), (SWINGING[:8], 25),
                                                 (STEADY[:3], 25)])
def test_verdict_reads_the_table_in_the_rules_words(series, max_rounds):
    df = rounds_frame(series, max_rounds=max_rounds)
    assert ss.verdict_row("dev", df)["verdict"] == ss.evaluate(series, max_rounds).verdict


def test_steady_sentences_one_per_device_with_the_window_numbers():
    df = pd.concat([rounds_frame(STEADY, host="a"), rounds_frame(SWINGING, host="b")]).assign(
        experiment=ss.EXPERIMENT, rw="randwrite", iodepth=32, numjobs=4)
    lines = text.steady_sentences(ss.verdict_table(df))
    res = ss.evaluate(STEADY)
    assert lines[0].startswith(f"**a**: 4 KiB randwrite, QD32x4 reached steady state at round {res.round}")
    assert f"{res.window_avg_iops:,.0f} IOPS on average over the window" in lines[0]
    assert lines[1].startswith("**b**: 4 KiB randwrite, QD32x4: not achieved within 25 rounds")
    assert ss.verdict_table(rounds_frame([]).assign(experiment=ss.EXPERIMENT)).empty


# -------------------------------------------------------------------------------------- convergence


def test_convergence_of_a_steady_run(tmp_path):
    df = csv_round_trip(rounds_frame(STEADY), tmp_path)
    res = ss.evaluate(STEADY)
    assert (res.round, res.window) == (9, (5, 9))
    fig = sp.convergence_figure(df)
    line = one(fig, "iops:dev")
    assert list(line.get_xdata()) == list(range(1, len(STEADY) + 1))
    assert list(line.get_ydata()) == STEADY
    span = one(fig, "window:dev")
    xs = x_extent(span)
    assert min(xs) == pytest.approx(5 - 0.4) and max(xs) == pytest.approx(9 + 0.4)
    note = one(fig, "steady:dev")
    assert note.get_label() == "steady at round 9"                   # a ring named in the legend, not a note on the line
    assert list(note.get_xdata()) == [9] and list(note.get_ydata()) == [STEADY[8]]
    ax = fig.axes[0]
    assert ax.get_title() == "steady state at round 9 (window rounds 5-9)"
    assert "IOPS" in ax.get_ylabel() and "round" in ax.get_xlabel()
    assert ax.get_ylim()[0] == 0


def test_convergence_not_achieved_marks_the_last_window_and_no_steady_round():
    fig = sp.convergence_figure(rounds_frame(SWINGING))
    assert fig.axes[0].get_title() == "not achieved within 25 rounds"
    assert len(one(fig, "iops:dev").get_xdata()) == 25
    span = one(fig, "window:dev")
    xs = x_extent(span)
    assert (min(xs), max(xs)) == (pytest.approx(20.6), pytest.approx(25.4))
    assert by_gid(fig, "steady:dev") == []


def test_only_successful_rounds_are_drawn():
    df = rounds_frame(STEADY[:7], failed_round=7)  # the run stopped at a failed round 7
    fig = sp.convergence_figure(df)
    assert list(one(fig, "iops:dev").get_xdata()) == [1, 2, 3, 4, 5, 6]
    assert len(ss.done_rounds(df)) == 6
    table = text.steady_rounds_display(df)
    assert len(table) == 7 and list(table["status"]) == ["done"] * 6 + ["failed"]


def test_convergence_two_devices_one_line_each_and_a_verdict_each():
    df = pd.concat([rounds_frame(STEADY, host="ssd-a"), rounds_frame(SWINGING, host="ssd-b")],
                   ignore_index=True)
    fig = sp.convergence_figure(df)
    assert len(one(fig, "iops:ssd-a").get_xdata()) == len(STEADY)
    assert len(one(fig, "iops:ssd-b").get_xdata()) == len(SWINGING)
    assert one(fig, "iops:ssd-a").get_color() != one(fig, "iops:ssd-b").get_color()
    assert len(by_gid(fig, "window:ssd-a")) == len(by_gid(fig, "window:ssd-b")) == 1
    assert fig.axes[0].get_title().splitlines() == ["ssd-a: steady state at round 9 (window rounds 5-9)",
                                                    "ssd-b: not achieved within 25 rounds"]


def test_no_successful_round_no_figure():
    empty = rounds_frame([])
    assert sp.convergence_figure(empty) is None
    assert sp.window_figure(empty) is None
    assert sp.written_figure(empty) is None
    assert sp.convergence_figure(None) is None
    all_failed = rounds_frame([1000.0], failed_round=1)
    assert sp.convergence_figure(all_failed) is None


# ------------------------------------------------------------------------------------------- window


def _check_window(fig, window_iops, first):
    """The window panel's points, average, bands and least-squares line against independent numbers."""
    y = np.array(window_iops, float)
    x = np.arange(first, first + len(y))
    avg = y.mean()
    slope = np.polyfit(x, y, 1)[0]
    pts = one(fig, "iops")
    assert list(pts.get_xdata()) == list(x) and np.allclose(pts.get_ydata(), y)
    assert np.allclose(one(fig, "average").get_ydata(), [avg, avg])
    for pct in (10, 20):
        assert np.allclose(one(fig, f"band{pct}:high").get_ydata(), avg * (1 + pct / 100))
        assert np.allclose(one(fig, f"band{pct}:low").get_ydata(), avg * (1 - pct / 100))
    fit = one(fig, "slope")
    assert list(fit.get_xdata()) == [x[0], x[-1]]
    assert np.allclose(fit.get_ydata(), [avg - 2 * slope, avg + 2 * slope])
    return avg, slope


def test_window_figure_of_a_steady_run(tmp_path):
    df = csv_round_trip(rounds_frame(STEADY), tmp_path)
    fig = sp.window_figure(df)
    assert len(fig.axes) == 1
    _check_window(fig, STEADY[4:9], 5)
    check = ss.window_check(STEADY[4:9])
    labels = fig.axes[0].get_legend_handles_labels()[1]
    assert f"data excursion {check.data_excursion_pct:.1f} % (limit 20 %, met)" in " | ".join(labels)
    assert f"slope excursion {check.slope_excursion_pct:.1f} % (limit 10 %, met)" in " | ".join(labels)
    assert "rounds 5-9" in fig.axes[0].get_title()


def test_window_figure_not_achieved_names_the_exceeded_limit():
    decaying = [100000.0 * 0.96 ** i for i in range(25)]  # -4 %/round: range 16 %, slope ~16 %: not steady
    fig = sp.window_figure(rounds_frame(decaying))
    avg, slope = _check_window(fig, decaying[20:], 21)
    assert slope < 0
    check = ss.window_check(decaying[20:])
    assert check.data_ok and not check.slope_ok
    labels = " | ".join(fig.axes[0].get_legend_handles_labels()[1])
    assert f"data excursion {check.data_excursion_pct:.1f} % (limit 20 %, met)" in labels
    assert f"slope excursion {check.slope_excursion_pct:.1f} % (limit 10 %, exceeded)" in labels
    assert "not achieved within 25 rounds" in fig.axes[0].get_title()


@pytest.mark.parametrize("n", [0, 1, 4])
def test_fewer_than_5_rounds_no_window_figure(n):
    assert sp.window_figure(rounds_frame(STEADY[:n])) is None


def test_window_figure_two_devices_one_panel_each_with_a_window():
    df = pd.concat([rounds_frame(STEADY, host="a"), rounds_frame(SWINGING[:3], host="b"),
                    rounds_frame(SWINGING, host="c")], ignore_index=True)
    fig = sp.window_figure(df)
    assert len(fig.axes) == 2  # b has 3 rounds: no window, no panel
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[0].startswith("a: measurement window, rounds 5-9")
    assert titles[1].startswith("c: measurement window, rounds 21-25")


# ------------------------------------------------------------------------------------------ written


def test_written_figure_x_is_cumulative_decimal_gb_after_preconditioning(tmp_path):
    df = csv_round_trip(rounds_frame(STEADY), tmp_path)
    fig = sp.written_figure(df)
    line = one(fig, "iops:dev")
    expected = (PC_BYTES + np.cumsum(np.array(STEADY) * ROUND_S * BS)) / 1e9
    assert np.allclose(line.get_xdata(), expected) and list(line.get_ydata()) == STEADY
    assert line.get_xdata()[0] > PC_BYTES / 1e9
    assert np.allclose(one(fig, "precondition:dev").get_xdata(), PC_BYTES / 1e9)
    assert one(fig, "precondition-text:dev").get_text() == "after preconditioning: 2.00 GB"
    ring = one(fig, "window:dev")
    assert np.allclose(ring.get_xdata(), expected[4:9])
    assert "GB" in fig.axes[0].get_xlabel() and "IOPS" in fig.axes[0].get_ylabel()
    assert fig.axes[0].get_xlim()[0] == 0


def test_written_figure_two_devices_and_few_rounds():
    df = pd.concat([rounds_frame(STEADY[:3], host="a", pc_bytes=5e8), rounds_frame(STEADY, host="b")],
                   ignore_index=True)
    fig = sp.written_figure(df)
    assert len(one(fig, "iops:a").get_xdata()) == 3 and len(one(fig, "iops:b").get_xdata()) == len(STEADY)
    assert one(fig, "precondition-text:a").get_text() == "a: after preconditioning: 0.50 GB"
    assert one(fig, "precondition-text:b").get_text() == "b: after preconditioning: 2.00 GB"
    assert by_gid(fig, "window:a") == [] and len(by_gid(fig, "window:b")) == 1


# ------------------------------------------------------------------------------------ table helpers


def test_rounds_table_units_and_window():
    df = rounds_frame(STEADY)
    t = text.steady_rounds_display(df)
    assert list(t.columns) == ["round", "IOPS", "MB/s", "mean latency (µs)", "p99 latency (µs)",
                               "GB written", "in window"]
    assert list(t["round"]) == list(range(1, 11))
    assert t["IOPS"].iloc[0] == 100000 and t["MB/s"].iloc[0] == pytest.approx(409.6)
    assert t["GB written"].iloc[0] == pytest.approx(round((PC_BYTES + 100000 * ROUND_S * BS) / 1e9, 3))
    assert list(t["in window"]) == [False] * 4 + [True] * 5 + [False]


def _matrix_rows(rnd: int, in_window: bool, scale: float) -> list[dict]:
    base = {"host": "dev", "round": rnd, "in_window": in_window, "status": "done"}
    rows = []
    for bs in (4096, 65536):
        k = scale * 4096 / bs
        tag = f"r{rnd:02d}-bs{bs}"
        rows += [dict(base, rw="randread", bs_bytes=bs, rwmixread=np.nan, direction="read", iops=900 * k,
                      point=f"{tag}-rr", tracking=False),
                 dict(base, rw="randrw", bs_bytes=bs, rwmixread=65, direction="read", iops=400 * k,
                      point=f"{tag}-rw65", tracking=False),
                 dict(base, rw="randrw", bs_bytes=bs, rwmixread=65, direction="write", iops=200 * k,
                      point=f"{tag}-rw65", tracking=False),
                 dict(base, rw="randwrite", bs_bytes=bs, rwmixread=np.nan, direction="write", iops=300 * k,
                      point=f"{tag}-rw", tracking=bs == 4096)]
    return rows


def test_window_matrix_averages_the_window_and_sums_mixed_directions():
    rows = []
    for rnd in range(1, 8):
        rows += _matrix_rows(rnd, in_window=rnd >= 3, scale=10.0 if rnd < 3 else float(rnd))
    m = text.steady_matrix_display(pd.DataFrame(rows))
    assert list(m.columns) == ["100 % read", "65 % read", "0 % read"]
    assert list(m.index) == ["4 KiB", "64 KiB"] and m.index.name == "block size"
    mean_scale = np.mean([3, 4, 5, 6, 7])  # rounds 1-2 (scale 10) are outside the window
    assert m.loc["4 KiB", "100 % read"] == round(900 * mean_scale)
    assert m.loc["4 KiB", "65 % read"] == round(600 * mean_scale)  # read + write of the mixed point
    assert m.loc["64 KiB", "0 % read"] == round(300 * mean_scale / 16)
    assert text.steady_matrix_display(pd.DataFrame(_matrix_rows(1, False, 1.0))).empty
    assert text.steady_matrix_display(pd.DataFrame()).empty
