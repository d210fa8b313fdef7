"""The report built from a real data folder with the defects a senior reviewer found on a 16-vCPU VM (issue 38,
acceptance 2): fio-3.42's offload mode overshooting every offered rate, a closed sweep whose IOPS fall at the
top, write-saturation runs shorter than a second (tests/data/report-defects/SOURCES.md). None of the trust-blocking
findings is stated, and page 1 names the checks that failed."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from memstor.analysis import load_latency
from memstor.report import text
from memstor.report.text import first_page as fp
from report_helpers import synthesise_copy

DATA = Path(__file__).parent / "data" / "report-defects"
H = "vm2-fio342"


@pytest.fixture(scope="module")
def S(tmp_path_factory):
    return synthesise_copy(tmp_path_factory, DATA, "defects")


def _status(S, check: str, subject: str | None = None) -> set[str]:
    v = S.validity[(S.validity["check"] == check) & (S.validity["host"] == H)]
    return set(v["status"] if subject is None else v.loc[v["subject"] == subject, "status"])


def test_the_overshooting_open_loop_states_no_slo_answer_and_no_model(S):
    load = S.load[S.load["host"] == H]
    assert (load["achieved_pct"] > 105).all()                        # fio overshot every rate: the data's defect
    assert _status(S, "open_loop_rate") == {"fail"}                  # was "pass" (it tested achieved >= 95 % only)
    assert _status(S, "below_closed_max") == {"fail"}                # above the closed-loop maximum of page 1
    assert _status(S, "littles_law", "fio-load-latency randread") == {"fail"}    # 583 in flight, at most 448
    assert S.slo["max_iops"].isna().all() and S.slo["not_valid"].str.startswith("not valid").all()
    assert S.slo["ratio_to_fio"].isna().all()                       # no answer leaks through as a ratio
    models = S.load_models[S.load_models["host"] == H]
    assert models["mm1_us"].isna().all() and models["mgc_us"].isna().all()
    measured, *said, closing = text.load_sentences(S.load, S.slo, S.load_models, S.unloaded)
    assert len(said) == 2 and all("not an open loop" in s for s in said)
    assert closing.startswith("**Not an open loop: randread, randwrite (fio).**") and "no SLO answer" in closing
    assert not any("without falling behind" in s or "The highest rate that keeps" in s for s in said)
    # fio-made data (no generator column) is said to be fio's rate mode, with the numbers of its rows
    assert measured.startswith("**Measured with fio's rate mode**") and "held at 0 of 16 offered rates" in measured
    assert "intended arrival" in measured and "ioarrive" not in measured
    read = next(s for s in said if "randread" in s)
    assert "(fio)" in read and "at u10–u98 it achieved 108–175 % of the offered rate (more than offered)" in read
    assert "inline submission cannot keep arrivals open" not in read      # the way out of fio's inline mode
    assert "`generator: ioarrive`" in closing and "X_max" not in read   # X_ref: the reference of the rates
    flags = text.load_display(S.load)["flags"]                         # fio overshot: not 'arrivals gated'
    assert flags.str.contains("more than offered").all() and not flags.str.contains("arrivals gated").any()


def test_open_vs_closed_reads_the_sweep_in_order_of_load(S):
    qd = pd.read_csv(DATA / "processed" / H / "fio-queue-depth.csv")
    sweep = qd[(qd["rw"] == "randread") & (qd["numjobs"] == 1)].sort_values("iodepth")
    x, r = sweep["iops"].to_numpy(), sweep["lat_mean_us"].to_numpy()
    assert x[-1] < x.max()                                           # the sweep falls at the top
    assert S.load["open_vs_closed_pct"].isna().all()                 # not stated: the open loop did not hold
    curves = load_latency.curve_table(S.dataset.fio)                 # the comparison as computed before the gate
    row = curves[(curves["rw"] == "randread") & (curves["utilisation_pct"] == 90)].iloc[0]
    i = next(k for k in range(len(x) - 1) if min(x[k], x[k + 1]) <= row["achieved_iops"] <= max(x[k], x[k + 1]))
    expected = r[i] + (row["achieved_iops"] - x[i]) / (x[i + 1] - x[i]) * (r[i + 1] - r[i])
    assert row["closed_lat_mean_us"] == pytest.approx(expected)


def test_write_saturation_runs_shorter_than_a_second_give_no_level_and_no_spec_row(S):
    w = S.wsat[S.wsat["host"] == H]
    assert len(w) == 2 and (w["cliffs"] == 0).all()
    assert not S.spec["selection"].astype(str).str.contains("write saturation").any()
    assert "pass" not in _status(S, "wsat_series")


def test_a_run_without_a_whole_second_is_drawn_as_fios_figure_not_as_a_series(S):
    """R-def (fifth read): the 0.149-s 4 KiB run's one logged second, 64 MB/s (15,689 IOPS), was drawn as a
    1-s series beside fio's 450 MB/s. Now no series; fio's whole-run figure at its runtime, labelled."""
    from memstor.report.plots import wsat as plots

    sec = S.wsat_seconds[S.wsat_seconds["host"] == H]
    assert not sec["whole_second"].any() and set(sec["run_MBps"].round(1)) == {450.4}
    for fig in (plots.wsat_time_figure(S.wsat_seconds), plots.wsat_tgbw_figure(S.wsat_seconds)):
        (line,) = fig.axes[0].get_lines()
        assert list(line.get_ydata()) == pytest.approx([450.395])    # not the 64.26 MB/s partial second
        assert "fio's whole-run figure\n(0.149-s run, no whole second" in line.get_label()
    time_x = plots.wsat_time_figure(S.wsat_seconds).axes[0].get_lines()[0].get_xdata()
    assert list(time_x) == pytest.approx([0.149])
    whole = S.wsat_seconds.assign(whole_second=True)                 # the other side: a whole second is drawn
    (line,) = plots.wsat_time_figure(whole).axes[0].get_lines()
    assert list(line.get_ydata()) == pytest.approx([64.2619]) and line.get_label() == "repetition 1"


def test_page_one_names_the_failed_checks(S):
    names = " ".join(fp.check_names(S.validity))
    assert "Failed checks" in names and "`open_loop_held`" in names and "`load_generator_cpu`" in names
    assert "`open_loop_rate`" in names and "`below_closed_max`" in names and "`littles_law`" in names
    assert "Not checked" in names and "`physical_ceiling`" in names      # a virtio disk: no interface ceiling
    finding = next(f for f in fp.findings(S, H) if f.startswith("The open loop did not hold"))
    assert "no SLO answer" in finding


def test_a_run_whose_series_gives_no_level_states_none_and_the_failed_open_loop_has_no_curve_model(S):
    w = S.wsat.set_index("workload")
    short = w.loc["4 KiB random write"]                              # 0.149 s: wsat_series failed
    assert short["valid"] is False or not short["valid"]
    assert pd.isna(short["sustained_MBps"]) and short["not_valid"].startswith("not valid (wsat_series)")
    said = " ".join(text.wsat_sentences(S.wsat, S.wsat_cliffs))
    assert "no level is stated" in said and "no cliff — one level" not in said
    open_rows = S.storage[S.storage["kind"] == "open loop"]
    assert len(open_rows) and open_rows["r0_us"].isna().all() and open_rows["peak_iops"].isna().all()
    assert not [k for k in S.storage_fits if k[1] == "open loop"]   # no figure draws the model


def test_every_judged_row_states_its_passing_band_and_no_pass_lacks_a_value(S):
    """Issue 38: every check judges both sides. On real data with defects of every kind, each row that was judged
    names at least one bound of its band (low or high; the module says why a side is open) and every pass has
    the value it was judged on."""
    v = S.validity
    judged = v[v["status"] != "unchecked"]
    assert len(judged) > 20
    assert (judged["low"].notna() | judged["high"].notna()).all(), judged[judged["low"].isna() & judged["high"].isna()]
    assert v.loc[v["status"] == "pass", "value"].notna().all()
    assert set(v["status"]) <= {"pass", "unchecked", "warn", "fail"}
    assert v.loc[v["status"] == "unchecked", "evidence"].str.startswith("not checked").all()


def test_the_three_ceilings_are_named_apart_where_printed(S):
    """Reviewers found 'X_max' printed for three numbers: the knee fit's ceiling (118,403), the sweep's best
    (143,703) and the open loop's reference (the fio-queue-depth table's best of every configuration). Each is
    named: X_fit, X_best, X_ref."""
    knees = " ".join(text.knee_sentences(S.knees))
    assert "X_fit (fitted ceiling)" in knees and "X_best = " in knees
    assert "X_best (highest measured)" not in knees  # S12-loop 3: that was the one-job sweep's, not X_best
    assert {"X_fit (IOPS)", "X_best (IOPS)"} <= set(text.knee_display(S.knees).columns)
    page = " ".join(fp.findings(S, H))
    said = knees + page + " ".join(text.load_sentences(S.load, S.slo, S.load_models, S.unloaded))
    assert "X_max" not in said
    assert "X_ref" in " ".join(text.load_sentences(S.load, S.slo, S.load_models, S.unloaded))
    assert "X_ref (IOPS)" in text.load_display(S.load).columns
