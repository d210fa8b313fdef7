"""The steady-state finding, the spec comparison and the headline's trust column on two real quick-profile runs
(tests/data/report-steady/SOURCES.md) against what three senior reviews found the report stated without support
(issue 38, the fifth review): a steady state whose check failed compared with the spec as steady state, a window
that still drifts in 2-s rounds stated as steady state, five rounds of one run called n = 5, a mean of per-round
p99s called the window's p99, ratios of a loop device and a virtual disk printed against an NVMe sheet, and trust
words that left out the checks nothing could judge."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import LineCollection
from matplotlib.colors import to_rgba

from memstor.analysis import specs
from memstor.analysis import steady_state as ss
from memstor.analysis import synthesis as syn
from memstor.analysis.validity import gate
from memstor.report import text
from memstor.report.plots import steady_state as ssfigs
from memstor.report.text import first_page as fp
from memstor.report.text import headline_table as ht
from memstor.report.text import steady_state as steady_mod
from report_helpers import synthesise_copy

DATA = Path(__file__).parent / "data" / "report-steady"
BARE, LOOP = "vm", "vm2-loop-fio328"


@pytest.fixture(scope="module")
def S(tmp_path_factory):
    return synthesise_copy(tmp_path_factory, DATA, "steady")


@pytest.fixture(scope="module")
def S_agreeing(tmp_path_factory):
    """The same runs without the loop device's block-size sweep, whose 121,409 IOPS at 32 in flight puts the
    sweep's fresh reference (75,231 at 128) in doubt (S7-bare M-1): there the reference stands and is judged."""
    root = tmp_path_factory.mktemp("steady-agreeing")
    shutil.copytree(DATA / "processed", root / "processed")
    for name in ("fio-block-size.csv", "fio-block-size-metas.json"):
        (root / "processed" / LOOP / name).unlink()
    return syn.synthesise(root)


def _one(df: pd.DataFrame, host: str, **cols) -> pd.Series:
    sel = df[df["host"] == host]
    for c, v in cols.items():
        sel = sel[sel[c] == v]
    assert len(sel) == 1, sel.to_string()
    return sel.iloc[0]


def _check(S, host: str, name: str) -> pd.Series:
    return _one(S.validity, host, check=name)


# ------------------------------------- R-loop 5.1 / 5.2: a steady state whose check failed is not stated


def test_a_fresh_reference_the_same_run_contradicts_judges_nothing(S):
    """S7-bare M-1: the loop's fresh reference, the queue-depth sweep's 75,231 IOPS at 128 in flight, lies 1.61x
    below the same 4 KiB randwrite at 32 in flight in fio-block-size (121,409): steady_vs_fresh is not checked
    and says why; the bare VM's reference (124,524, nothing above it) is judged (0.996x, pass)."""
    loop = _check(S, LOOP, "steady_vs_fresh")
    assert loop["status"] == "unchecked"
    assert ("the fresh reference, 75,231 IOPS (fio-queue-depth, QD32x4) at 128 outstanding I/Os, is itself in doubt: "
            "the same run measured 121,409 IOPS at 32 in flight in fio-block-size (1.61x its IOPS") in loop["evidence"]
    assert _check(S, BARE, "steady_vs_fresh")["status"] == "pass"
    said = " ".join(text.steady_sentences(S.steady[S.steady["host"] == LOOP], S.points))
    assert "75,231 IOPS (fio-queue-depth, 1 point, 256 MiB file), 0.73× this window's average, itself in doubt" in said
    assert "it may have been measured in another state of the machine" in said
    assert "the run length, the file's state or the machine's makes the difference" in said
    bare = " ".join(text.steady_sentences(S.steady[S.steady["host"] == BARE], S.points))
    assert "in doubt" not in bare


def test_a_steady_state_whose_fresh_check_failed_is_withheld_from_the_spec_table(S_agreeing):
    """Loop device: steady 102,881 IOPS against fresh 75,231 at the same 128 outstanding I/Os (1.37x): the report
    printed it in three spec rows (the course target's 0.79 among them) with the state 'steady state'."""
    S = S_agreeing
    assert _check(S, LOOP, "steady_vs_fresh")["status"] == "fail"
    rows = S.spec[(S.spec["host"] == LOOP) & S.spec["id"].str.startswith("randwrite_4k")]
    assert len(rows) == 3
    assert rows["measured"].isna().all() and rows["ratio"].isna().all()
    assert (rows["state"] == "not valid").all()
    assert rows["flag"].eq("withheld: the steady-state run is not valid").all()
    assert rows["selection"].str.contains("steady 102,881 IOPS against fresh 75,231 IOPS", regex=False).all()
    shown = text.spec_table(S.spec, compact=True)
    assert not shown["measured"].str.contains("102,881").any()


def test_the_verdict_text_and_figure_of_a_failed_steady_state_do_not_say_steady(S_agreeing):
    S = S_agreeing
    v = _one(S.steady, LOOP)
    assert v["verdict"] == "not valid: window rule met at round 7 (rounds 3-7); steady_vs_fresh failed"
    said = " ".join(text.steady_sentences(S.steady[S.steady["host"] == LOOP]))
    assert "reached steady state" not in said and "matches the spec sheet" not in said
    assert "is not a steady-state figure; the spec table withholds it" in said
    rounds = ss.rounds_of(S.dataset.fio, LOOP)
    fig = ssfigs.convergence_figure(rounds, S.steady)
    words = fig.axes[0].get_legend_handles_labels()[1] + [fig.axes[0].get_title()]   # ringed, named in the legend
    assert any("window rule met at round 7" in w for w in words) and not fig.axes[0].texts  # nothing on the line
    assert not any("steady at round" in w or w.startswith("steady state at") for w in words)
    assert any(w.startswith("window average 102,881 IOPS (not steady state)") for w in words)   # S9-bare C-2
    ungated = ssfigs.convergence_figure(rounds)  # the rule's own verdict, where no check is known
    said = ungated.axes[0].get_legend_handles_labels()[1]
    assert "steady at round 7" in said and "window average 102,881 IOPS" in said


def test_the_window_average_stands_out_from_the_tracking_line(S_agreeing):
    """Tenth read S13-bare 6: the window average, dashed in the series' own colour at 1.2 pt, could not be told from
    the tracking line inside the window at print size. One device: black and heavier than the tracking line; several
    devices keep one colour per device (black would not say whose average it is)."""
    def average_and_tracking(fig):
        ax = fig.axes[0]
        avgs = [c for c in ax.collections if isinstance(c, LineCollection) and "window average" in c.get_label()]
        tracks = [ln for ln in ax.lines if str(ln.get_gid()).startswith("iops:")]
        return avgs, tracks

    one = ssfigs.convergence_figure(ss.rounds_of(S_agreeing.dataset.fio, LOOP), S_agreeing.steady)
    (avg,), (track,) = average_and_tracking(one)
    assert tuple(avg.get_colors()[0]) == to_rgba("black") != to_rgba(track.get_color())
    assert float(avg.get_linewidths()[0]) > float(track.get_linewidth())
    both = ssfigs.convergence_figure(ss.rounds_of(S_agreeing.dataset.fio), S_agreeing.steady)
    avgs, tracks = average_and_tracking(both)
    assert len(avgs) == len(tracks) == 2
    for a, t in zip(avgs, tracks):
        assert tuple(a.get_colors()[0]) == to_rgba(t.get_color()) != to_rgba("black")


def test_numpy_false_of_the_gate_is_not_taken_for_valid():
    """The spec comparison read ``v.get("valid") is not False``: numpy's False is not Python's, so a row the gate
    marked not valid kept the state 'steady state'."""
    base = pd.Series({"ss_achieved": np.True_, "valid": np.True_, "steady_shown": np.True_})
    assert syn._steady_state(base) == "steady_state"
    assert syn._steady_state(base.replace({"valid": np.True_}).copy()) == "steady_state"
    for col in ("valid", "steady_shown"):
        bad = base.copy()
        bad[col] = np.False_
        assert syn._steady_state(bad) == specs.NOT_SHOWN
    assert syn._steady_state(pd.Series({"ss_achieved": np.False_})) == specs.NOT_STEADY
    assert syn._steady_state(pd.Series({"ss_achieved": True})) == "steady_state"  # ungated: the rule's word


# ------------------------- R-bare B-1, R-1cpu M7: a window that still drifts in 2-s rounds is not one level


def test_a_window_drifting_in_two_second_rounds_is_not_stated_as_steady_state(S):
    """Bare VM: rounds 1-5 of 2 s fall every round (129,112 -> 119,661 IOPS, steady_window_trend warn) and are
    shorter than 10 s (steady_round_length warn); the report said 'Steady-state 4K random write 124,035' and
    0.95 of the course target in steady state."""
    assert _check(S, BARE, "steady_window_trend")["status"] == "warn"
    assert _check(S, BARE, "steady_round_length")["status"] == "warn"
    v = _one(S.steady, BARE)
    assert bool(v["valid"]) and not bool(v["steady_shown"])
    assert v["verdict"] == "not shown: window rule met at round 5 (rounds 1-5); steady_window_trend, " \
                           "steady_round_length warn"
    assert "first 129,112, last 119,661 IOPS" in v["not_shown"] and "rounds of 2.00 s" in v["not_shown"]
    rows = S.spec[(S.spec["host"] == BARE) & S.spec["id"].str.startswith("randwrite_4k")]
    assert len(rows) == 3 and (rows["state"] == "steady state not shown (file span)").all()
    assert rows["flag"].str.contains("state").all()
    said = " ".join(text.steady_sentences(S.steady[S.steady["host"] == BARE], S.points))
    assert "reached steady state" not in said and "not a steady-state level" in said
    # the same configuration elsewhere in the run, beside it
    assert "124,524 IOPS (fio-queue-depth, 1 point, 256 MiB file)" in said
    assert "68,307 IOPS (fio-write-saturation, 1 point, 1 GiB file)" in said
    assert "100,307–116,240 IOPS (fio-pts-hir" in said
    head = ht.headline_evidence(S.headline, S.validity)
    row = head[(head["device"] == BARE) & head["quantity"].str.startswith("4K random write after")].iloc[0]
    assert row["quantity"] == f"{ht.NOT_SHOWN_LABEL} (IOPS)"
    assert "steady_window_trend" in row["trust"] and "steady_round_length" in row["trust"]
    assert "steady state at" not in row["measured as"]


def test_the_same_window_with_its_checks_passing_is_stated_as_steady_state(S):
    """The other side: the trend and round-length checks pass, the verdict, the spec state and the headline say
    steady state."""
    passed = S.validity.copy()
    passed.loc[passed["check"].isin(gate.STEADY_SHOWN_CHECKS), "status"] = "pass"
    raw = ss.verdict_table(S.dataset.fio)
    v = _one(gate.gate_steady(raw, passed), BARE)
    assert bool(v["steady_shown"]) and v["verdict"] == "steady state at round 5 (window rounds 1-5)"
    assert syn._steady_state(v) == "steady_state"
    assert text.steady_sentences(pd.DataFrame([v]))[0].startswith("**vm**: 4 KiB randwrite, QD32x4 reached steady "
                                                                 "state at round 5")
    head = ht.headline_evidence(S.headline, passed)
    assert (head["quantity"] == "Steady-state 4K random write (IOPS)").any()


# ----------------------------------- R-loop 5.3 / 5.4, R-bare C-8 / C-9: n and the p99 of the window named


def test_a_window_of_rounds_is_one_run_and_its_p99_is_named_a_mean_of_the_rounds(S):
    h = _one(S.headline, BARE, key="ss_randwrite_iops")
    assert h["n"] == 1 and "average of window rounds 1-5 of 2.00 s (one run)" in h["detail"]
    assert "steady state" not in h["detail"]
    spec = _one(S.spec, BARE, id="randwrite_4k_course")
    assert spec["n"] == 1
    shown = text.spec_table(S.spec, compact=True)
    assert "124,035 (1 run)" in set(shown["measured"]) and not shown["measured"].str.contains("n=5").any()
    assert shown["measured at"].str.contains("[steady-state window, 1 run]", regex=False).any()
    head = ht.headline_evidence(S.headline, S.validity)
    value = head[(head["device"] == BARE) & head["quantity"].str.startswith("4K random write after")].iloc[0]["value"]
    assert "n = 5" not in value and "one run" in value
    display = text.steady_display(S.steady)
    assert "mean of the rounds' p99 (µs)" in display.columns and "window p99 (µs)" not in display.columns
    assert "GB written" in display.columns and "GB written includes the preconditioning" in steady_mod.STEADY_CAPTION
    # the value is the mean of the five rounds' p99s: named so, not called the window's p99
    rounds = ss.window_of(ss.rounds_of(S.dataset.fio, BARE))
    assert _one(S.steady, BARE)["window_avg_clat_p99_us"] == pytest.approx(rounds["clat_p99_us"].mean())


# ---------------------------- R-loop 5.5, R-bare M-6 / M-7: no ratio for another device; the nearest point


def test_no_ratio_is_printed_for_a_loop_device_or_virtual_disk_and_one_for_the_sheets_drive(S):
    measured = S.spec[S.spec["measured"].notna()]
    assert len(measured) and not measured["comparable"].any()
    shown = text.spec_table(measured, compact=True)
    assert (shown["ratio"] == "– (not comparable)").all()
    assert not shown["ratio"].str.contains(r"\d", regex=True).any()
    same = text.spec_table(measured.assign(comparable=True), compact=True)
    assert same["ratio"].str.fullmatch(r"\d+\.\d\d").all()


def test_the_sequential_rows_name_the_spec_conditions_the_sweeps_did_not_measure(S):
    """The sequential spec (128 KiB, 128 outstanding) was compared with the block-size sweep's 1 MiB at QD32x1,
    called the 'closest point'; it is the nearest of the sweeps, which measured neither condition."""
    row = _one(S.spec, BARE, id="seqwrite_series")
    assert row["selection"].startswith("nearest point of the sweeps (QD32x1")
    assert row["selection"].endswith("the spec's 128 KiB and 128 outstanding I/Os are not in them)")
    shown = text.spec_table(S.spec, compact=True)
    assert not shown["measured at"].str.contains("closest point").any()
    assert shown["measured at"].str.contains("[nearest sweep point]", regex=False).any()


# ---------------------------------- R-loop 2.1, R-1cpu M13, R-bare C-1: the trust column and page 1


def test_trust_words_name_the_unchecked_checks_that_bear_on_a_value(S):
    head = ht.headline_evidence(S.headline, S.validity)
    seq = head[(head["device"] == LOOP) & (head["quantity"] == "Sequential read (MB/s)")].iloc[0]
    assert "physical_ceiling not checked" in seq["trust"]
    steady = head[(head["device"] == BARE) & head["quantity"].str.startswith("4K random write after")].iloc[0]
    assert "interval_exists" in steady["trust"] and "interval_holds_value not checked" in steady["trust"]
    # the other side: the ceiling checked and passed, the word names it no more
    passed = S.validity.copy()
    passed.loc[passed["check"] == "physical_ceiling", "status"] = "pass"
    again = ht.headline_evidence(S.headline, passed)
    assert "physical_ceiling" not in again[again["quantity"] == "Sequential read (MB/s)"].iloc[0]["trust"]


def _memory_rows(status: str, evidence: str, check: str = "memory_gate") -> pd.DataFrame:
    """Rows of the bare VM's validity.csv (build/review/s5-bare/tables/validity.csv rows 85-91)."""
    return pd.DataFrame([{"host": BARE, "check": check, "subject": "peak memory bandwidth", "status": "pass",
                          "evidence": "", "consequence": "", "section": "memory", "unit": ""},
                         {"host": BARE, "check": "physical_ceiling", "subject": "DRAM peak", "status": status,
                          "evidence": evidence, "consequence": "", "section": "ceilings", "unit": ""}])


def test_peak_memory_bandwidth_is_not_sound_while_its_dram_ceiling_is_unchecked():
    headline = pd.DataFrame([{"host": BARE, "key": "peak_bw_MBps", "metric": "Peak memory bandwidth", "unit": "MB/s",
                              "value": 21822.8, "detail": "loadlat: peak injection", "value_ci_low": None,
                              "value_ci_high": None, "n": 1, "ci_method": ""}])
    unchecked = _memory_rows("unchecked", "not checked: no DRAM peak ceiling known")
    assert ht.headline_evidence(headline, unchecked).iloc[0]["trust"] == \
        "with caveats (physical_ceiling not checked)"
    assert ht.headline_evidence(headline, _memory_rows("pass", "")).iloc[0]["trust"] == "sound (its checks pass)"


def test_page_one_names_the_values_that_failed_their_quality_gate():
    rows = pd.DataFrame([
        {"host": BARE, "check": "memory_gate", "subject": "idle_latency: latency_unstable", "status": "warn",
         "evidence": "1 of 2 idle_latency values fail 'latency_unstable'; median sub-window latency spread 4.73 % "
                     "against the gate's 2.00 %"},
        {"host": BARE, "check": "memory_gate", "subject": "loaded_latency: bandwidth_unstable", "status": "warn",
         "evidence": "9 of 18 loaded_latency values fail 'bandwidth_unstable'; median sub-window bandwidth spread "
                     "5.50 % against the gate's 5.00 %"},
        {"host": BARE, "check": "memory_gate", "subject": "latency_matrix", "status": "unchecked",
         "evidence": "not checked: 1 latency_matrix values not judged by the quality gate (not_evaluated:section)"},
        {"host": BARE, "check": "memory_gate", "subject": "peak_injection_bandwidth", "status": "pass",
         "evidence": "all 5 peak_injection_bandwidth values pass the quality gate"}])
    said = fp.check_names(rows)
    gated = [s for s in said if "failed their quality gate" in s]
    assert len(gated) == 1
    assert "idle\\_latency: latency\\_unstable (1 of 2)" in gated[0] or "idle_latency: latency_unstable (1 of 2)" \
        in gated[0]
    assert "(9 of 18)" in gated[0] and "peak_injection" not in gated[0] and "latency_matrix" not in gated[0]
    assert not [s for s in fp.check_names(rows[rows["status"] != "warn"]) if "failed their quality gate" in s]


# ----------------------------------------- COSMETIC: the headline table's interval and page 1's memory size


def test_the_headline_gives_an_asymmetric_interval_as_its_ends_and_the_real_reason_for_none(S):
    """Loop device (R-loop 2.4, 2.5; R-bare C-4): the idle latency 243.6 [226.5, 266.0] read '244 ± 19.7'; the peak
    bandwidth had 10 sub-windows but correlated ones, and the page said it lacked sub-windows."""
    head = ht.headline_evidence(S.headline, S.validity)
    loop = head[head["device"] == LOOP]
    idle, peak = (loop[loop["quantity"].str.startswith(q)].iloc[0] for q in ("Idle", "Peak"))
    # its run failed the memory gate (R-loop 2.3): withheld; the interval's form on the same numbers below
    assert idle["value"].startswith("withheld: its run failed the memory gate")
    asymmetric = pd.Series({"key": "idle_latency_ns", "value": 243.6, "value_ci_low": 226.549, "value_ci_high": 265.988,
                            "ci_method": "batch-means", "n": 1})
    assert ht._interval(asymmetric) == "244 [227, 266] (95 %, batch-means)"
    # memory_buffer_llc failed on loop (S7-bare M-10): withheld; the reason for no interval on its own row below
    assert peak["value"].startswith("withheld: memory_buffer_llc failed")
    row = S.headline[(S.headline["host"] == LOOP) & (S.headline["key"] == "peak_bw_MBps")].iloc[0]
    assert ht._interval(row) == (
        "20,655 — no interval (one run; its sub-windows: correlated (lag-1 bandwidth 0.53 at 10 batches of 1 "
        "sub-windows))")
    symmetric = pd.Series({"key": "idle_latency_ns", "value": 100.0, "value_ci_low": 95.0, "value_ci_high": 105.0,
                           "ci_method": "batch-means", "n": 1})
    assert ht._interval(symmetric) == "100 ± 5.00 (95 %, batch-means)"
    none = symmetric.drop(["value_ci_low", "value_ci_high"])
    assert "memory summaries get one from repetitions" in ht._interval(none)


def test_page_one_gives_the_memory_to_a_tenth_of_a_gib(S):
    """25,276,502,016 B is 23.5 GiB; page 1 said 24 (R-loop 1.2, R-1cpu C10)."""
    said = fp.machine_sentences(S.dataset)
    assert all("; 23.5 GiB memory;" in s for s in said)


def test_the_same_configuration_elsewhere_leaves_out_the_open_loops(S):
    """1-CPU run (R-1cpu M7): fio's latency_target points at QD32x4 (8,000-23,668 IOPS, a depth searched for a p99
    target) were listed beside the window average as the same configuration; only closed loops are."""
    v = _one(S.steady, BARE)
    pts = S.points[S.points["host"] == BARE]
    extra = pts[pts["experiment"] == "fio-queue-depth"].head(1).assign(experiment="fio-load-latency", iops=8_000.0,
                                                                       rw="randwrite", bs_bytes=4096,
                                                                       outstanding_io=128)
    same = ss.same_configuration(pd.concat([pts, extra]), v)
    assert set(same["experiment"]) == {"fio-queue-depth", "fio-write-saturation", "fio-pts-hir"}
    assert ss.same_configuration(extra, v).empty and ss.same_configuration(None, v).empty


def test_a_trace_that_only_falls_has_no_largest_rise(S):
    """Bare VM (R-bare C-20): every round falls (129,112 -> 119,661 IOPS), and the evidence called a 0.985x step
    the 'largest rise'; the loop device's trace rises 1.42x into round 3, which stays said."""
    bare = _check(S, BARE, "steady_trace_jump")["evidence"]
    assert "no rise (every step falls or stays)" in bare and "largest rise" not in bare
    assert "largest fall 1.03x into round 2" in bare
    loop = _check(S, LOOP, "steady_trace_jump")["evidence"]
    assert "largest rise 1.42x into round 3" in loop and "largest fall 1.56x into round 2" in loop


def test_the_experiment_notebook_gates_its_verdict_as_the_synthesis_does(S, S_agreeing):
    """notebooks/50-fio-steady-state.ipynb said 'reached steady state at round 5' of the bare VM's drifting 2-s
    rounds: its verdict is now gated by the same checks (steady_vs_fresh needs the sweep: not judged there)."""
    from memstor.analysis.validity.steady import gated_verdicts

    rounds = S.dataset.fio[S.dataset.fio["table"] == ss.EXPERIMENT]
    v = gated_verdicts(rounds).set_index("host")
    assert v.loc[BARE, "verdict"].startswith("not shown: window rule met at round 5") and not v.loc[BARE, "steady_shown"]
    assert v.loc[LOOP, "verdict"] == "not shown: window rule met at round 7 (rounds 3-7); steady_round_length warns"
    with_sweep = gated_verdicts(rounds, S.points).set_index("host")   # its reference in doubt: not judged
    assert with_sweep.loc[LOOP, "verdict"] == v.loc[LOOP, "verdict"]
    agreeing = gated_verdicts(rounds, S_agreeing.points).set_index("host")
    assert agreeing.loc[LOOP, "verdict"].startswith("not valid: window rule met at round 7")


def test_a_point_on_another_file_span_is_not_called_the_same_configuration(S):
    """S6-bare M-2: 'The same configuration (128 outstanding I/Os) elsewhere in this run: ... 68,307 IOPS
    (fio-write-saturation, 1 point, 1 GiB file)' beside a window average of 124,035 IOPS on a 256 MiB file: by
    page 1's definition the file size is part of the configuration, and 0.55x went unsaid. Now the 1 GiB point is
    said apart, with its ratio and what follows; the 256 MiB points (HIR, the sweep) keep theirs, not called 'the same
    configuration' either (other run lengths and states)."""
    v = _one(S.steady, BARE)
    said = " ".join(text.steady_sentences(S.steady[S.steady["host"] == BARE], S.points))
    assert "The same configuration (" not in said
    assert "On another file span than the window's 256 MiB: 68,307 IOPS (fio-write-saturation, 1 point, 1 GiB " \
        "file), 0.55× this window's average: the window measured its 256 MiB file only" in said
    assert "holds for" not in said  # S12-1cpu 10: the same span's other runs measured 0.63-0.97x of the window
    assert "in other experiments of this run (other run lengths and states): " in said
    assert "fio-pts-hir" in said.split("On another file span")[0]          # same span: in the first list
    detail = S.headline[(S.headline["host"] == BARE) & (S.headline["key"] == "ss_randwrite_iops")]["detail"].iloc[0]
    assert detail.startswith("4 KiB randwrite, QD32x4, 256 MiB file, ")   # the headline names its span
    # the other side: a raw-device window has no file span to set apart
    whole = text.steady_sentences(S.steady[S.steady["host"] == BARE].assign(span="full_device"), S.points)
    assert "On another file span" not in " ".join(whole) and v["span_bytes"] == 268435456


def test_a_series_that_is_no_level_is_set_beside_the_window_without_a_ratio(S):
    """R-loop p4 (fourth read): the write-saturation run's 45,781 IOPS was printed '0.44x this window's average',
    the mean of a series wsat_one_level says is not one level (154 -> 249 MB/s); and the sweep's doubt was stated as
    a cause ('it was measured in another state of the machine') that nothing in the tables shows. Without the
    validity table (the check not known) the ratio is given, as before."""
    loop = S.steady[S.steady["host"] == LOOP]
    assert _check(S, LOOP, "wsat_one_level")["status"] == "fail"
    said = " ".join(text.steady_sentences(loop, S.points, S.validity))
    assert "0.44×" not in said and "its whole-run mean, no level: wsat_one_level failed, so no ratio" in said
    assert "0.73× this window's average" in said  # the sweep's point is one point, not a series: its ratio stands
    assert "it was measured in another state" not in said and "may have been measured in another state" in said
    assert "0.44× this window's average" in " ".join(text.steady_sentences(loop, S.points))
