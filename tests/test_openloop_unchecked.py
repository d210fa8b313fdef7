"""An open loop that nothing checked is said to be not checked, not to have failed (issue 38, fifth review,
workstream E; R-loop 2.7): loop (fio-3.28, no arrival times) had randwrite's open_loop_held unchecked at 99.3-100 %
of offered achieved, yet page 1 read 'held at 0 of 8 rates ... (failed: open_loop_held)' and the SLO table 'not
valid: the open loop did not hold'. Built from the reviewed loop tables (tests/data/review-s5)."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from memstor.report.text import first_page as fp
from memstor.report.text.openloop import slo_display

DATA = Path(__file__).parent / "data" / "review-s5"
H = "vm2-loop-fio328"


def loop() -> SimpleNamespace:
    """The loop run's gated open-loop curve and its validity table, as the first page reads them."""
    load = pd.read_csv(DATA / "load_latency-loop328.csv")
    load["valid"] = load["valid"].astype(object).map(lambda v: str(v) == "True")
    return SimpleNamespace(load=load, validity=pd.read_csv(DATA / "validity-open-loop328.csv"))


def test_the_unchecked_workload_reads_not_checked_and_the_failed_one_failed():
    said = fp._not_open_workloads(loop(), H)
    write = next(s for s in said if s.startswith("randwrite"))
    read = next(s for s in said if s.startswith("randread"))
    assert "not checked" in write and "failed" not in write and "held at" not in write
    assert "every rate 99.3–100.3 % of offered achieved" in write  # fifth read S9-bare C-1: not "100"
    assert "held at 0 of 8 rates" in read and "(failed: open_loop_held)" in read


def test_the_slo_table_withholds_the_unchecked_answer_without_calling_it_failed():
    cells = slo_display(pd.read_csv(DATA / "slo-loop328.csv")).set_index("workload")["max IOPS meeting it"]
    assert cells["randwrite"].startswith("withheld: the open loop was not checked")
    assert "did not hold" not in cells["randwrite"]
    assert cells["randread"] == ("no answer: the open loop did not hold (0 of 8 offered-rate points kept open-loop "
                                 "arrivals (share 0 %))")  # S11-loop 12: one wording, with its reason


def test_the_slo_table_says_no_answer_one_way_with_the_reason():
    """S11-loop 12: 'no answer: none of the 8 rates held' beside 'not valid: the open loop did not hold (no answer)'
    for two workloads that both held at 0 of 8; the second also failed open_loop_rate. Now both begin 'no answer'
    and the second names its failed rate."""
    cells = slo_display(pd.read_csv(DATA.parent / "review-s11" / "loop" / "slo.csv")).set_index("workload")[
        "max IOPS meeting it"]
    assert cells["randread"] == "no answer: none of the 8 rates held"
    assert cells["randwrite"] == ("no answer: none of the 8 rates held; achieved / offered 48.4-99.7 % over 8 "
                                  "offered-rate points")  # S15-bare 7: that none held first, then the rate


def test_a_latency_target_search_the_run_cut_off_gives_no_closed_loop_answer():
    """R-bare M-13: bare's fio latency_target rows (2-s runs, 0.5-s windows) ended at QD 8 and 16 of 32, p99 387 and
    659 µs under 1,000: still doubling, never a missed window; their 81,593 / 50,157 IOPS stood beside the
    sweep's 150,645 / 118,379 at p99 823 µs. A bisected depth (12) or one at iodepth is an answer."""
    from memstor.analysis.load_latency import cut_off_search

    lt = pd.read_csv(DATA / "fio-lt-bare-loop328.csv")
    cut = cut_off_search(lt["latency_depth"], lt["iodepth"], lt["clat_p99_us"], lt["latency_target_us"])
    assert cut.tolist() == [True, True, False, False]          # loop's runs missed the target: 'missed', not cut
    bare = lt[lt["host"] == "vm"].head(1)
    for depth in (12.0, 32.0):
        assert not cut_off_search(bare["latency_depth"] * 0 + depth, bare["iodepth"], bare["clat_p99_us"],
                                  bare["latency_target_us"]).any()


def test_the_slo_table_says_the_cut_off_search_is_no_answer():
    from memstor.analysis.load_latency import slo

    lt = pd.read_csv(DATA / "fio-lt-bare-loop328.csv").assign(ok=True)
    load = pd.read_csv(DATA / "load_latency-loop328.csv")
    rows = slo(load.assign(host="vm"), [1000.0], lt[lt["host"] == "vm"]).set_index("rw")
    assert rows["fio_latency_target_iops"].isna().all() and rows["fio_latency_cut_off_s"].round().eq(2).all()
    cells = slo_display(rows.reset_index()).set_index("workload")
    said = cells["fio latency_target, closed loop (IOPS, depth per job, its p99)"]
    # S11-loop 4: the run itself met the target over its whole length: a lower bound, not no answer
    assert said["randread"].startswith("≥ ") and "a lower bound: cut off by its 2-s run at QD 8, still doubling" in \
        said["randread"]
    kept = slo(load, [1000.0], lt[lt["host"] != "vm"]).set_index("rw")   # loop: missed, no cut-off claimed
    assert kept["fio_latency_cut_off_s"].isna().all()


def test_the_offload_overshoot_is_said_as_a_fact_of_fio_342_not_of_this_run():
    """R-loop 10.2, R-1cpu C4: loop ran fio-3.28 (1cpu fio-3.33), yet read 'offload mode overshot the asked rate
    1.3-1.75x on fio-3.42' as if of this run."""
    from memstor.report.text.loadgen import measured_sentences

    (said,) = measured_sentences(pd.read_csv(DATA / "load_latency-loop328.csv"))
    # fifth read R-1cpu C10 / R-def p8: no other version's fact at all; this table did not record the mode
    assert "fio-3.42" not in said and "fio's submit mode was not recorded." in said


def test_no_closed_loop_is_drawn_beside_an_open_loop_the_gate_withheld():
    """R-1cpu M11: the figure set 16 gated points (open_loop_held failed) beside the closed loop while the text said
    no open-against-closed comparison is given; the same rows with the gate passing keep the closed loop."""
    import matplotlib.pyplot as plt

    from memstor.report.plots.openloop import latency_throughput_figure

    load = pd.read_csv(DATA / "load_latency-1cpu.csv")
    qd = pd.read_csv(DATA / "summary-1cpu.csv")
    qd = qd[qd["experiment"] == "fio-queue-depth"]

    def closed(fig) -> int:
        n = sum(1 for ax in fig.axes for line in ax.get_lines() if str(line.get_gid()).startswith("closed"))
        plt.close(fig)
        return n

    assert closed(latency_throughput_figure(load, qd)) == 0
    assert closed(latency_throughput_figure(load.assign(valid=True), qd)) > 0


def test_no_held_rate_gives_no_answer_not_a_miss():
    """loop's SLO cell read 'none: even the lowest held rate misses it (from the 0 of 8 rates that held)' (9617af3's
    answer from the held points, with none held): there is no held rate to miss the target."""
    cells = slo_display(pd.read_csv(DATA / "slo-held-loop328.csv")).set_index("workload")["max IOPS meeting it"]
    assert cells["randread"] == "no answer: none of the 8 rates held"
    assert "withheld: the open loop was not checked" in cells["randwrite"]      # unchecked: as before
