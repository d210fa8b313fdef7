"""Report figures readable in print (issue 38 item 5): memstor.report.plots.printing measures a figure at the size
the PDF prints it (memstor.tex.j2's box) and lists text under 7 pt there and overlapping tick labels; the synthesis
notebook shows every figure through fit_for_print (memstor.report.plots.synthesis.show). Checked on bad cases of
its own and on every figure the synthesis draws, from the synthetic tables the plot tests already use and (fio)
from the synthesis data of test_synthesis."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from memstor.report.plots import printing  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _clean(fig, name: str) -> list[str]:
    """The problems left once the figure went through the report's fit_for_print."""
    if isinstance(fig, dict):
        return [p for host, f in fig.items() for p in _clean(f, f"{name} ({host})")]
    return printing.print_problems(printing.fit_for_print(fig), name)


# ------------------------------------------------------------------------------------------ the check itself


def test_small_text_at_the_printed_size_is_found():
    fig, ax = plt.subplots(figsize=(12, 4))  # wider than the print box: printed at ~0.6 of its size
    ax.plot([1, 2], [1, 2])
    ax.set_title("title", fontsize=10)
    ax.text(1.5, 1.5, "note", fontsize=10)
    assert printing.printed_scale(fig) < 0.7
    problems = printing.print_problems(fig)
    assert any("'note'" in p for p in problems) and any("'title'" in p for p in problems)


def test_a_figure_that_fits_with_large_enough_text_has_no_problem():
    fig, ax = plt.subplots(figsize=(4, 2.5))
    ax.plot([1, 2, 3], [1, 4, 9])
    for t in fig.findobj(matplotlib.text.Text):
        t.set_fontsize(8)
    assert printing.printed_scale(fig) == 1.0
    assert printing.print_problems(fig) == []


def test_overlapping_tick_labels_are_found_and_decluttered():
    fig, ax = plt.subplots(figsize=(3, 2.5))
    x = np.arange(30)
    ax.plot(x, x)
    ax.set_xticks(x, [f"{v:,}000" for v in x])
    assert any("overlap" in p for p in printing.print_problems(fig))
    assert _clean(fig, "ticks") == []
    assert len([lab for lab in ax.get_xticklabels() if lab.get_text()]) < 30


def test_a_collapsed_layout_is_found():
    """A legend wider than its panel (constrained layout squeezes the panel to a sliver) and titles that run into
    each other: readable text, yet nothing to read."""
    fig, axes = plt.subplots(1, 2, figsize=(4, 2.5), constrained_layout=True)
    for ax in axes:
        ax.plot([1, 2], [1, 2], label="a legend entry far wider than the panel it describes, in 9 pt type")
        ax.set_title("a title wider than its panel and its neighbour")
        ax.legend(fontsize=9)
    problems = printing.print_problems(fig)
    assert any("the layout collapsed" in p for p in problems)
    assert any("overlap" in p and "title" not in p.split(":")[0] for p in problems)


def test_figures_of_several_rows_get_the_taller_box_and_compact_ones_the_shorter():
    two_rows, _ = plt.subplots(2, 2, figsize=(10, 6))
    one_row, _ = plt.subplots(1, 2, figsize=(10, 4))
    one, _ = plt.subplots(figsize=(10, 4))
    assert printing.panel_rows(two_rows) == 2 and printing.report_box(two_rows) == printing.TALL_BOX_IN
    assert printing.report_box(one_row) == printing.REPORT_BOX_IN
    assert printing.report_box(one) == printing.REPORT_BOX_IN  # a panel may hold its legend: drawn for the box
    assert printing.report_box(printing.compact(one)) == printing.SINGLE_BOX_IN


def test_fit_for_print_shrinks_the_figure_not_the_text_below_7_pt():
    fig, axes = plt.subplots(1, 2, figsize=(12, 4), constrained_layout=True)
    for ax in axes:
        ax.plot([1, 2], [3, 4])
        ax.set_xlabel("x label (unit)", fontsize=12)
        ax.tick_params(labelsize=9)
    printing.fit_for_print(fig)
    assert printing.printed_scale(fig) >= 0.98
    assert printing.print_problems(fig) == []
    assert fig.get_size_inches()[0] <= printing.REPORT_BOX_IN[0]


# ------------------------------------------------------------------------- the figures the synthesis draws


def test_open_loop_figures_print_readably():
    from memstor.report.plots import openloop as op
    from test_openloop_report import curves_frame, gated_ioarrive, models_frame, qd_frame

    curves = curves_frame()
    one = curves[curves["host"] == "nvme-a"]  # one device, as one machine's run draws it
    assert _clean(op.latency_throughput_figure(one, qd_frame()), "open loop") == []
    assert _clean(op.model_figure(models_frame(curves)), "models") == []
    held_not = gated_ioarrive()["load"]                           # ioarrive's points, the loop not held: dashed
    closed = qd_frame().query("host == 'nvme-a' and rw == 'randwrite'").assign(host="vm2-standard")
    assert _clean(op.latency_throughput_figure(held_not, closed), "open loop, not held") == []


def test_steady_state_figures_print_readably():
    from memstor.report.plots import steady_state as ssfigs
    from test_steady_state_plots import rounds_frame

    rounds = rounds_frame([50_000, 42_000, 40_500, 40_000, 40_200, 39_900, 40_100])
    assert _clean(ssfigs.convergence_figure(rounds), "convergence") == []
    assert _clean(ssfigs.window_figure(rounds), "window") == []


def test_pts_figures_print_readably():
    from memstor.analysis import pts_demand, pts_recovery
    from memstor.report.plots import pts_demand as demandfigs
    from memstor.report.plots import pts_recovery as ptsfigs
    from test_pts_demand import MATRIX_POINTS, synthetic
    from test_pts_recovery import _hir_rows, _xsr_seconds

    hir = _hir_rows().assign(t_start_s=lambda d: np.arange(len(d)) * 7.0, runtime_s=5.0)
    assert _clean(ptsfigs.hir_figure(hir), "HIR") == []
    seconds, table = _xsr_seconds()
    assert _clean(ptsfigs.xsr_figure(seconds, pts_recovery.xsr_table(seconds, table)), "XSR") == []
    d = pts_demand.dirth_table(synthetic(MATRIX_POINTS))
    assert _clean(demandfigs.demand_intensity_figure(d), "DIRTH") == []
    assert _clean(demandfigs.oio_figure(d), "CBW") == []


def test_dirth_histograms_print_readably():
    """The DIRTH histograms (HTML appendix; shown through fit_for_print like every report figure): four panels in a
    row, each with both axis labels, printed 1.2 x 0.6 in with the labels over one another (the bare, 1cpu and loop
    runs' tables/dirth_histograms.csv); now 2 x 2, each axis named once. Four roles of ~60 fio bins, as those runs'."""
    import pandas as pd

    from memstor.analysis.pts_demand import HISTOGRAM_COLUMNS
    from memstor.report.plots import pts_demand as demandfigs

    rows = []
    for role, (t, q, centre) in {"max IOPS": (4, 4, 220.0), "optimal": (4, 4, 220.0), "mid": (2, 4, 120.0),
                                 "min": (1, 1, 74.0)}.items():
        lat = np.geomspace(20, 5000, 60)
        share = np.exp(-np.log(lat / centre) ** 2 / 0.1)
        share /= share.sum()
        rows += [("h", role, t, q, x, int(1e5 * s), s, "matrix", "raw/h.json") for x, s in zip(lat, share)]
    hist = pd.DataFrame(rows, columns=HISTOGRAM_COLUMNS)
    assert _clean(demandfigs.histograms_figure(hist), "DIRTH histograms") == []
    assert _clean(demandfigs.histograms_figure(hist[hist["role"] != "mid"]), "DIRTH histograms, three") == []


def test_read_ratio_family_prints_readably(real):
    """The read-ratio family beside the nearest published curves (HTML appendix), on bernep's real MLC curves."""
    from memstor.analysis import read_ratio
    from memstor.analysis.memory_curves import curve_table
    from memstor.analysis.memory_fit import memory_fit_table
    from memstor.analysis.reference_curves import load_mess_curves
    from memstor.report.plots import read_ratio as rfigs
    from test_read_ratio import SETTINGS, bernep

    curves = curve_table(bernep(real, **SETTINGS))
    mem, _ = memory_fit_table(curves)
    t = read_ratio.read_ratio_table(mem)
    near = read_ratio.reference_table(curves, mem, load_mess_curves())
    published = load_mess_curves()
    fig = rfigs.family_figure(t, curves, near, published[published["platform"].isin(near["platform"])])
    assert _clean(fig, "read-ratio family") == []


@pytest.mark.fio
def test_synthesis_figures_print_readably(synth_data):
    """Every figure of the synthesis notebook that its data draws (test_synthesis's data: an imported SSD and MLC
    host beside this machine's quick queue-depth sweep), as the notebook shows it."""
    from memstor.analysis import synthesis as syn
    from memstor.report.plots import storage as splots
    from memstor.report.plots import synthesis as figs
    from test_synthesis import SPECS

    S = syn.synthesise(synth_data, SPECS)
    drawn = {
        "block size": figs.block_size_figure(S.points),
        "spec": figs.spec_figure(S.spec),
        "little": figs.littles_law_figure(S.little),
        "queue depth": figs.queue_depth_figure(S.qd, S.knee_fits, S.grid),
        "memory": figs.memory_figure(S.curves, S.mem_fits),
        "storage curves": figs.storage_curve_figure(S.storage_fits),
    }
    mix = S.points[S.points["experiment"] == "fio-rw-ratio"]
    if not mix.empty:
        drawn["mix"] = splots.rw_ratio(mix, title="mix")
    problems = [p for name, fig in drawn.items() if fig is not None for p in _clean(fig, name)]
    assert problems == []


def test_a_latency_throughput_legend_explains_only_the_marks_drawn_and_names_the_absent():
    """The memory figure's caption promises plateau and hook marks and its legend explained all four marks on
    every panel, drawn or not (a reviewer looked for a hook that was not there): the legend now lists the marks
    drawn and says which the curves do not have."""
    from memstor.analysis import curves as ac
    from memstor.report.plots import synthesis as sfigs

    n = np.array([1, 2, 4, 8, 16, 32.0])
    x = 20_000 * n / (1 + n / 40)                        # still rising at the top: no plateau, no hook
    cf = ac.analyse(n, x, n / x * 1e6)
    fig = sfigs.storage_curve_figure({("h", "closed loop", "randread"): cf})
    texts = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "hook (beyond the maximum)" not in texts and "plateau (saturated; dotted: its throughput)" not in texts
    assert texts[-1].startswith("none in these curves:") and "plateau" in texts[-1] and "hook" in texts[-1]
    _, every = sfigs._curve_legend_extras()
    assert len(every) == 4 and not any(t.startswith("none") for t in every)
    plt.close("all")
