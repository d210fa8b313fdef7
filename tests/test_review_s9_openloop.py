"""Fifth read (issue 38), workstream D: the open loop against its repeat in the mixed-load map, the SLO answer
from the held points of both families, the lightest held load. Real rows of the s9-bare run
(tests/data/review-s9d, SOURCES.md there)."""

from pathlib import Path

import pandas as pd
import pytest

from memstor.analysis import load_latency, openloop_families
from memstor.analysis.validity.openloop_repeat import repeat_rows
from memstor.report.text.openloop import slo_display

DATA = Path(__file__).parent / "data" / "review-s9d"


def _tables():
    return (pd.read_csv(DATA / "load_latency-bare.csv"), pd.read_csv(DATA / "mixed-bare.csv"),
            pd.read_csv(DATA / "slo-bare.csv"))


def test_open_loop_repeat_judges_u50_against_w0_r50_both_sides():
    """S9-bare B-2: u50 and w0-r50 both offered 61,311 IOPS: mean 205 against 138 µs (1.49x), p99 2,810 against
    2,318 µs (1.21x): warn; the same latencies pass, 1.6x fails; randwrite has no repeat: not checked."""
    load, mixed, _ = _tables()
    rows = {r["subject"]: r for r in repeat_rows(load, mixed)}
    r = rows["randread"]
    assert r["status"] == "warn" and r["value"] == pytest.approx(205.232442 / 138.016768)
    assert "w0-r50" in r["evidence"] and "1.49x" in r["evidence"] and "1.21x" in r["evidence"]
    assert rows["randwrite"]["status"] == "unchecked"
    at = mixed["cell"] == "w0-r50"
    same = mixed.assign(lat_mean_us=mixed["lat_mean_us"].where(~at, 205.232442),
                        resp_p99_us=mixed["resp_p99_us"].where(~at, 2809.856))
    assert {r["subject"]: r for r in repeat_rows(load, same)}["randread"]["status"] == "pass"
    far = mixed.assign(lat_mean_us=mixed["lat_mean_us"].where(~at, 205.232442 * 1.6))
    assert {r["subject"]: r for r in repeat_rows(load, far)}["randread"]["status"] == "fail"
    unheld = mixed.assign(open_loop=mixed["open_loop"].where(~at, False))
    assert {r["subject"]: r for r in repeat_rows(load, unheld)}["randread"]["status"] == "unchecked"
    assert repeat_rows(load, mixed.iloc[0:0]) == []


def test_slo_none_is_withheld_where_a_held_read_only_cell_meets_it():
    """S9-bare B-2: 'no measured rate meets p99 <= 1 ms' (u10 12,318 IOPS at 1,233 µs) while w0-r20 held at
    24,598 IOPS, p99 404 µs: withheld, both named; with w0-r20 missing the target the answer stands, the cells
    named as agreeing; randwrite (no write-only cell) is untouched."""
    load, mixed, slo = _tables()
    out = openloop_families.cross_slo(slo, load, mixed).set_index("rw")
    r = out.loc["randread"]
    assert r["censored_by"] == openloop_families.FAMILIES_DISAGREE and r["max_iops"] != r["max_iops"]
    assert "w0-r20 (24,598 IOPS, p99 404 µs) meets it" in r["families"] and "u10 (12,318 IOPS" in r["families"]
    assert slo_display(out.reset_index())["max IOPS meeting it"].iloc[0].startswith("withheld")
    assert out.loc["randwrite", "max_iops"] == pytest.approx(59784.0) and out.loc["randwrite", "families"] == ""
    slow = mixed.assign(resp_p99_us=mixed["resp_p99_us"].where(mixed["cell"] != "w0-r20", 1500.0))
    kept = openloop_families.cross_slo(slo, load, slow).set_index("rw").loc["randread"]
    assert kept["censored_by"] != openloop_families.FAMILIES_DISAGREE
    assert kept["families"] == "the mixed-load map's held read-only cells w0-r20, w0-r50 agree"


def test_slo_answer_contradicted_by_a_miss_below_it():
    """The other side: a held cell that misses the target below an answer the load family gives withholds it."""
    load, mixed, slo = _tables()
    s = slo.assign(max_iops=[20000.0, 59784.0], censored=[False, True], censored_by=["", ""])
    out = openloop_families.cross_slo(s, load, mixed).set_index("rw")
    assert out.loc["randread", "censored_by"] == openloop_families.FAMILIES_DISAGREE  # w0-r20 meets above 20,000
    s2 = slo.assign(max_iops=[70000.0, 59784.0], censored=[False, True], censored_by=["", ""])
    out2 = openloop_families.cross_slo(s2, load, mixed).set_index("rw")
    assert "w0-r50" in out2.loc["randread", "families"] and "misses it" in out2.loc["randread", "families"]


def test_unloaded_latency_is_the_lightest_held_load_unless_it_is_slower():
    """S9-bare M-4: 'lightest load that held: 205 µs (at u50)' while u10 held at 130.1 µs: now u10; a lightest
    load more than 10 % slower than the moderate one (the low-rate anomaly) still gives way to it."""
    load, _, _ = _tables()
    u = load_latency.unloaded(load).set_index("rw")
    assert u.loc["randread", "util_used"] == pytest.approx(0.10)
    assert u.loc["randread", "lat_unloaded_us"] == pytest.approx(130.1004798)
    slow = load.assign(lat_mean_us=load["lat_mean_us"].where(~((load["rw"] == "randread")
                                                               & (load["utilisation_pct"] == 10)), 300.0))
    u = load_latency.unloaded(slow).set_index("rw")
    assert u.loc["randread", "util_used"] == pytest.approx(0.50) and bool(u.loc["randread", "low_rate_anomaly"])
    assert u.loc["randwrite", "util_used"] == pytest.approx(0.30)  # u10 did not hold


def test_open_closed_p99_only_at_like_loads():
    """S9-bare M-5: randwrite u70-u90 (46.6k-59.8k IOPS) were all set against QD64 at 63,634 IOPS (1.37x-1.06x
    their rate) and read '0.5x, 0.7x, 0.6x'. Now the closed point nearest in IOPS within 1.1x is used (u70: QD16 at
    46,536, 0.999x), its IOPS printed; u80 (53,224) has none within 1.1x: QD64's numbers without a ratio; u90
    (59,784) keeps QD64 (1.06x) with its ratio."""
    from memstor.report.text.openloop_causes import _beside

    closed = pd.read_csv(DATA / "qd-bare.csv")
    w = closed[closed["rw"] == "randwrite"].reset_index(drop=True)
    load = pd.read_csv(DATA / "load_latency-bare.csv")
    at = load[(load["rw"] == "randwrite")].set_index("utilisation_pct")
    picked = {u: load_latency._closed_p99(w, 4096, at.loc[u, "achieved_iops"]) for u in (70.0, 80.0, 90.0)}
    assert picked[70.0]["closed_qd"] == "QD16" and picked[70.0]["closed_iops"] == pytest.approx(46536.231884)
    assert picked[80.0]["closed_qd"] == "QD64" and picked[90.0]["closed_qd"] == "QD64"
    said = {u: _beside(pd.Series({**at.loc[u].to_dict(), **picked[u], "utilisation_pct": u})) for u in picked}
    assert "u70: 698 µs at 46,598 IOPS, QD16 594 µs at 46,536: 1.2×" in said[70.0]
    assert "QD64 1,286 µs at 63,634 (1.20× the rate: no ratio)" in said[80.0]
    assert "QD64 1,286 µs at 63,634: 0.6×" in said[90.0]


def test_request_queue_named_alone_only_where_blocked_well_beyond_the_late_one_percent():
    """S9-bare M-6: randwrite u95 'waited for the block layer's full request queue' with its submit calls blocked
    0.0257 s of 2 s (1.3 %), about 12 I/Os in service on average (285 a momentary peak), ioarrive at 98.3 % of one
    CPU: now the queue or a CPU, not told apart; randread u80-u98 (7-31 % blocked) keep the queue; u95 with a
    CPU to spare keeps 'not for a CPU'."""
    from memstor.report.text.openloop_causes import late_causes

    load = pd.read_csv(DATA / "load_latency-bare.csv")
    w, r = load[load["rw"] == "randwrite"], load[load["rw"] == "randread"]
    said, causes = late_causes(w, load)
    assert "(1.29 % of the run)" in said and "12.1 submitted and not completed on average" in said
    assert ("full request queue (blocked only about as long as the late 1 % needs) or for a CPU: these columns do "
            "not tell which") in said and "request_queue" in causes
    said, _ = late_causes(r, load)
    assert "(7.20–30.7 % of the run)" in said and "full request queue and perhaps for a CPU as well" in said
    idle = w.assign(generator_cpu_pct=w["generator_cpu_pct"].where(w["utilisation_pct"] != 95, 40.0))
    said, _ = late_causes(idle, load)
    assert "needs), not for a CPU" in said


def test_page_two_range_of_achieved_rates_says_every_rate_and_one_decimal():
    """S9-bare C-1: 'held at 2 of 8 rates, 100-100 % of offered achieved' rounded 100.1-100.5 % away and read as a
    range of the held rates; now 'every rate 100.1–100.5 % of offered achieved'."""
    from types import SimpleNamespace

    from memstor.report.text import first_page as fp

    load = pd.read_csv(DATA / "load_latency-bare.csv")
    S = SimpleNamespace(load=load.assign(valid=False), validity=pd.DataFrame(
        [{"host": "vm", "check": "open_loop_held", "subject": "randread", "status": "fail", "section": "open_loop"}]))
    said = next(s for s in fp._not_open_workloads(S, "vm") if s.startswith("randread"))
    assert "held at 2 of 8 rates, every rate 100.1–100.5 % of offered achieved" in said


def test_mixed_load_sentence_names_the_held_rates_as_offered():
    """S9-bare C-10: 'held: 24,524 IOPS at read p99 404 µs' quoted w0-r20's offered rate (achieved 24,597.5) as
    what held; now 'IOPS offered'."""
    from memstor.analysis import mixed_load

    curve = mixed_load.capacity_curve(pd.read_csv(DATA / "mixed-bare.csv"), [1000.0], by=("host",))
    said = mixed_load.sentence(curve.iloc[0], "vm")
    assert "held: 24,524 IOPS offered at read p99 404 µs, 0.40× the target" in said


def test_figure_16_promises_a_closed_curve_only_where_it_draws_one():
    """S9-bare C-9 (R-def p9): the right panel read 'p99 (open: response, closed: completion)' with no closed curve
    drawn (no workload held); now 'p99 (response)' there, and closed_drawn tells the caption; the other side: a
    workload not withheld whole draws the closed sweep and keeps the title."""
    from memstor.report.plots import openloop as op

    load, qd = pd.read_csv(DATA / "load_latency-bare.csv"), pd.read_csv(DATA / "qd-bare.csv")
    gated = load.assign(valid=False)
    assert not op.closed_drawn(gated, qd)
    fig = op.latency_throughput_figure(gated, qd)
    assert fig.axes[1].get_title() == "p99 (response)"
    held = load.assign(valid=True)
    assert op.closed_drawn(held, qd) and not op.closed_drawn(held, None)
    fig = op.latency_throughput_figure(held, qd)
    assert fig.axes[1].get_title() == "p99 (open: response, closed: completion)"


def test_latency_target_average_over_its_depth_search_is_no_answer(monkeypatch):
    """R-def p8: the SLO table's only number, randwrite '27,933 (QD 3; p99 897 µs ...)', averaged fio's 2-s depth
    search (QD 1, 2, 4 before QD 3: at most one of its four 0.5-s windows at QD 3); now 'no answer'. The other
    side: a search with 16 windows (13 at QD 3) keeps its IOPS."""
    lt = pd.read_csv(DATA / "lt-defects.csv").assign(ok=True)
    curves = pd.read_csv(DATA / "load_latency-defects.csv")
    s = load_latency.slo(curves, [1000.0], lt).set_index("rw")
    assert s.loc["randwrite", "fio_latency_target_iops"] != s.loc["randwrite", "fio_latency_target_iops"]
    assert s.loc["randwrite", "fio_latency_settled_windows"] == 1.0
    cell = slo_display(s.reset_index())["fio latency_target, closed loop (IOPS, depth per job, its p99)"]
    assert cell.iloc[1] == "no answer: its run averaged fio's depth search (at most 1 of its windows at the final QD 3)"
    assert "a lower bound: cut off by its 2-s run at QD 16" in cell.iloc[0]   # the randread twin (S11-loop 4)
    monkeypatch.setattr(load_latency, "SEARCH_WINDOWS", 16)
    s = load_latency.slo(curves, [1000.0], lt.assign(runtime_s=60.0)).set_index("rw")
    assert s.loc["randwrite", "fio_latency_target_iops"] == pytest.approx(27932.567433)


def test_fio_rate_mode_paragraph_says_this_runs_submit_mode_and_what_it_achieved():
    """R-def p8: 'offload mode overshot the asked rate 1.3-1.75x in memstor's own tests of fio-3.42 (... not
    measured in this run)' in a run of offload points (every point named '-offload-') that achieved 108-175 % of
    offered; R-1cpu C10: the same fio-3.42 fact in a fio-3.33 run. Now the run's own mode and range; without the
    column, 'not recorded'."""
    from memstor.report.text.loadgen import measured_sentences

    load = pd.read_csv(DATA / "load_latency-defects.csv")
    said = measured_sentences(load.assign(submit_mode="offload"))[0]
    assert "This run used offload mode: 108–175 % of offered achieved." in said
    assert "fio-3.42" not in said and "not measured in this run" not in said
    assert "fio's submit mode was not recorded." in measured_sentences(load)[0]


def test_figure_16_draws_no_curve_through_points_that_break_an_invariant():
    """R-def p9: Figure 16 joined the offload points (108-175 % of offered; randread u95 583 in flight where 448
    could be; randwrite up to 161 % of the closed maximum) into latency curves; now unjoined, the failed checks
    named in the legend. The other side: the bare run's points (no invariant failed, open_loop_held only) keep
    their dashed line."""
    from memstor.report.plots import openloop as op
    from memstor.report.plots import printing

    fig = op.latency_throughput_figure(pd.read_csv(DATA / "load_latency-defects.csv"), None)
    lines = [ln for ln in fig.axes[0].get_lines()]
    gids = [str(ln.get_gid()) for ln in lines]
    assert any(g.startswith("invalid:") for g in gids) and not any(g.startswith("notheld:") for g in gids)
    labels = [ln.get_label() for ln in lines if str(ln.get_gid()).startswith("invalid:")]
    assert "random read: no curve (open_loop_rate, littles_law, below_closed_max failed)" in " ".join(labels)
    assert all(ln.get_linestyle() == "None" for ln in lines if str(ln.get_gid()).startswith("invalid:"))
    fig = printing.fit_for_print(fig)  # the long labels in one legend column: the figure still prints
    fig.canvas.draw()
    assert all(ax.get_position().width * fig.get_figwidth() > 2.0 for ax in fig.axes)  # inches: not collapsed
    fig = op.latency_throughput_figure(pd.read_csv(DATA / "load_latency-bare.csv"), None)
    gids = [str(ln.get_gid()) for ln in fig.axes[0].get_lines()]
    assert any(g.startswith("notheld:") for g in gids) and not any(g.startswith("invalid:") for g in gids)
