"""The seventh independent read of the loop-device run (issue 38, S11-loop): built from its tables
(tests/data/review-s11/loop/SOURCES.md)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from memstor.report.text import headline_table as ht

DATA = Path(__file__).resolve().parent / "data" / "review-s11" / "loop"
#: The four fio headline values page 1 withheld (fio-queue-depth's points in summary.csv).
MEASURED = {"qd1_randread_lat_us": 117.15, "qd1_randwrite_lat_us": 72.18, "best_randread_iops": 162_154.8,
            "best_randwrite_iops": 162_685.8}


def headline() -> pd.DataFrame:
    h = pd.read_csv(DATA / "headline.csv")
    return h.assign(value=h["key"].map(MEASURED).fillna(h["value"]))


def test_a_failed_cpu_check_withholds_only_the_headline_of_its_busiest_point():
    """S11-loop 1: load_generator_cpu failed on fio-queue-depth at its busiest point, randread QD64x1 (90.7 % of one
    CPU), and page 1 withheld all four fio headlines (QD1 latencies at 22 % and 37 % of one CPU, the QD32x4 bests)
    while page 2's findings stated them."""
    v = pd.read_csv(DATA / "validity.csv")
    (row,) = v[(v["check"] == "load_generator_cpu") & (v["subject"] == "fio-queue-depth")].to_dict("records")
    assert row["status"] == "fail" and ht.cpu_bound_point(pd.Series(row)) == ("randread", "QD64x1")
    t = ht.headline_evidence(headline(), v).set_index("quantity")
    assert t.loc["4K QD1 random read mean latency (µs)", "value"].startswith("117")
    for q in ("4K QD1 random read mean latency (µs)", "Best 4K random write (IOPS)"):
        assert "load_generator_cpu failed at another point (randread QD64x1), not this one" in t.loc[q, "trust"]
    busiest = headline().assign(detail=lambda d: d["detail"].where(d["key"] != "best_randread_iops",
                                                                   "QD64x1, io_uring, O_DIRECT, fio-queue-depth, n=1"))
    shown = ht.headline_evidence(busiest, v).set_index("quantity")
    assert shown.loc["Best 4K random read (IOPS)", "value"].startswith("withheld: load_generator_cpu failed")


def test_a_cpu_check_without_a_named_point_withholds_as_before():
    v = pd.read_csv(DATA / "validity.csv")
    v["evidence"] = v["evidence"].where(v["check"] != "load_generator_cpu", "fio's busiest point used 45 %")
    t = ht.headline_evidence(headline(), v).set_index("quantity")
    assert t.loc["4K QD1 random read mean latency (µs)", "value"].startswith("withheld: load_generator_cpu failed")


def test_the_findings_say_where_the_sweeps_most_is_the_point_the_cpu_check_failed():
    """S11-loop 1, the other half: page 2 stated 'the most along its one-job sweep, 133,731 IOPS' at QD64x1, the
    very point load_generator_cpu failed; it now says so there, and nothing at another point."""
    from memstor.report.text.first_page import _cpu_bound

    v = pd.read_csv(DATA / "validity.csv")
    at = pd.Series({"iodepth": 64, "numjobs": 1})
    assert _cpu_bound(v, "vm-loop328", "randread", at) == (
        " (load_generator_cpu failed at that point, fio at 90.7 % of one CPU (busiest thread): its IOPS are fio's on "
        "this machine as much as the device's)")
    assert _cpu_bound(v, "vm-loop328", "randwrite", at) == ""
    assert _cpu_bound(v, "vm-loop328", "randread", pd.Series({"iodepth": 16, "numjobs": 1})) == ""
    assert _cpu_bound(None, "vm-loop328", "randread", at) == ""


def test_more_submitted_than_the_request_queue_holds_is_said():
    """S11-loop 3: '(4.54–167 in service on average) against the disk's request queue of 128' - achieved x mean
    service time above the queue at randwrite u70-u98 and randread u95, printed without comment."""
    from memstor.report.text.openloop_causes import late_causes

    load = pd.read_csv(DATA / "load_latency.csv")
    said, _ = late_causes(load[load["rw"] == "randwrite"], load)
    assert "submitted and not completed on average (achieved × mean service time; more than the queue holds at " \
        "u70" in said and "those waited in the block layer before it)" in said and "in service on average" not in said
    low = load[(load["rw"] == "randwrite")].assign(service_mean_us=1.0)  # far under the queue: nothing said of it
    assert "more than the queue holds" not in late_causes(low, load)[0]


def test_a_cut_off_search_whose_run_met_the_target_gives_a_lower_bound():
    """S11-loop 4: 'no answer: cut off by its 2-s run at QD 8, still doubling' beside fio's own latency_target runs
    that met p99 <= 1 ms over the whole run at 93,519 (read, p99 987 µs) and 107,526 IOPS (write, p99 561 µs)."""
    from memstor.report.text.openloop import slo_display

    slo = pd.read_csv(DATA / "slo.csv").assign(fio_latency_run_iops=[93_518.7, 107_525.7])
    cells = slo_display(slo)["fio latency_target, closed loop (IOPS, depth per job, its p99)"].tolist()
    assert cells[0] == ("≥ 93,519 (its run's p99 987 µs; a lower bound: cut off by its 2-s run at QD 8, still "
                        "doubling (no window had missed the target))")
    assert cells[1].startswith("≥ 107,526 (its run's p99 561 µs; a lower bound") and "sweep" not in cells[1]
    old = slo_display(pd.read_csv(DATA / "slo.csv"))["fio latency_target, closed loop (IOPS, depth per job, its p99)"]
    assert old.iloc[0].startswith("no answer: cut off by its 2-s run")    # a table without the run's IOPS


def test_the_sequential_write_caveat_names_the_other_span_of_the_xsr_runs():
    """S11-loop 5: 'not shown to last: the same job ran at 1,070-1,323 MB/s in fio-pts-xsr' while XSR's phases
    wrote the whole 6 GiB device and the headline's fio-block-size run 256 MiB of it: another region, so not 'the
    same job'. The other side: the 1-CPU run's XSR on the headline's own 256 MiB file keeps 'the same job'."""
    from memstor.report.text.headline_trust import lasting_caveat
    from memstor.report.text.workloads import write_elsewhere

    points = pd.read_csv(DATA / "summary-seqwrite-qd.csv")
    said = lasting_caveat("sound (its checks pass)", points, "vm-loop328", 2_356.4)
    assert said == ("with caveats (not shown to last: the same 1 MiB QD32x1 write ran at 1,070-1,323 MB/s "
                    "(whole-run means) over 6 GiB (the block-size sweep's: 256 MiB) in fio-pts-xsr)")
    assert "over 6 GiB (the block-size sweep's: 256 MiB)" in write_elsewhere(points, "vm-loop328", 1_400.0)
    same = pd.read_csv(DATA.parent.parent / "review-s5" / "summary-1cpu.csv")
    assert lasting_caveat("sound (its checks pass)", same, "vm-1cpu", 2_368.4) == (
        "with caveats (not shown to last: the same job ran at 1,038-1,112 MB/s in fio-pts-xsr)")


def test_steady_vs_fresh_is_not_checked_against_a_fresh_point_on_another_span():
    """S11-loop 7: steady_vs_fresh passed at 1.08x comparing the rounds over the whole 6 GiB device (176,450 IOPS)
    with the fresh QD32x4 point over 256 MiB of it (162,686): another region, no reference. Now not checked, with
    both spans; the other side: the same rounds on the fresh point's span are judged (1.08x, pass)."""
    from memstor.analysis.validity import steady

    points = pd.read_csv(DATA / "summary-seqwrite-qd.csv")
    v = pd.read_csv(DATA / "steady_state.csv").iloc[0]
    row = steady.fresh_row(v, points)
    assert row["status"] == "unchecked" and "wrote 256 MiB, the rounds 6 GiB" in row["evidence"]
    assert "steady 176,450 IOPS not compared" in row["evidence"] and row["value"] is None
    same_span = v.copy()
    same_span["span_bytes"] = 2**28
    judged = steady.fresh_row(same_span, points)
    assert judged["status"] == "pass" and abs(judged["value"] - 176_450 / 162_686) < 0.01
