"""What the open loop's own columns say when it did not hold, and only that (issue 38, workstream E; R-bare M-14,
S6-bare M-10): bare's report said 'a quieter machine, or more usable CPUs for ioarrive's submitter (a late
generator, not the device ...)' while at the 7 points that missed their rate ioarrive used 20-34 % of one CPU, woke
43-45 µs late and the I/Os in service sat at 251-270 against a cap of 4,096; its held points (randread u10, u30,
randwrite u30) showed 4.5-11x the closed loop's p99 without a word. Built from the curve tables of the reviewed
bare run and of s5-std (the one with the machine's pauses) (tests/data/review-s5/load_curve-*.csv)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from memstor.analysis.validity.gate import WAY_OUT
from memstor.report.text import loadgen
from memstor.report.text.openloop import load_sentences
from memstor.report.text.openloop_causes import cause_sentences as _causes
from memstor.report.text.openloop_causes import way_out

DATA = Path(__file__).parent / "data" / "review-s5"


def cause_sentences(g: pd.DataFrame) -> tuple[str, set]:
    """openloop_causes.cause_sentences with the points' own held flags, as loadgen.not_open_sentence calls it."""
    return _causes(g, loadgen.held_points(g.assign(valid=True)))


def curve(name: str, rw: str) -> pd.DataFrame:
    c = pd.read_csv(DATA / f"load_curve-{name}.csv")
    return c[c["rw"] == rw].reset_index(drop=True)


def test_held_points_stand_beside_the_closed_loop_with_their_ratio():
    said, _ = cause_sentences(curve("bare", "randread"))
    assert "u30: 1,479 µs at 45,306 IOPS against QD4's 142 µs (10.4×)" in said
    assert "u10: 637 µs at 14,988 IOPS against QD4's 142 µs (4.5×)" in said
    assert "ioarrive used 69.1–109 % of one CPU there" in said
    assert "pauses were not recorded" in said and "What sets this tail (the device under bursty arrivals, ioarrive's CPU or the machine) these columns do not show." in said
    said, _ = cause_sentences(curve("bare", "randwrite"))
    assert "u30: 3,809 µs at 37,246 IOPS against QD4's 346 µs (11.0×)" in said


def test_a_full_queue_is_said_where_the_ios_in_service_level_off_and_no_late_generator_is_claimed():
    g = curve("bare", "randwrite")
    said, causes = cause_sentences(g)
    assert causes == {"queue"}
    assert "at u70, u80, u90, u95, u98 the I/Os in service (achieved × mean service time) levelled at 251–270" in said
    assert "ioarrive at 20.2–28.4 % of one CPU" in said and "not for a CPU" in said
    way = way_out(causes, g)
    assert "lower offered rates" in way and "quieter machine" not in way and "more usable CPUs" not in way
    # the other side: no level (the levelled points taken away) -> no queue named, no remedy named
    rest = g[g["utilisation_pct"] <= 50]
    said, causes = cause_sentences(rest)
    assert causes == set() and "levelled" not in said and "these columns do not show" in said
    assert "no remedy is named" in way_out(causes, rest)


def test_late_wakes_and_the_machines_pauses_are_named_only_where_recorded_beyond_the_bound():
    g = curve("std", "randwrite")   # 0.4-42 I/Os in service, wake p99 up to 2,728 µs, pauses up to 20 ms
    said, causes = cause_sentences(g)
    assert causes == {"wake", "pause"} and "levelled" not in said
    assert "the machine's longest pause before them 2,353–20,069 µs" in said
    assert "the submitter's sleeps woke later than the lag bound at u10, u90, u95; the machine paused" in said
    way = way_out(causes, g)
    assert "more usable CPUs" in way and "a quieter machine" in way and "lower offered rates" not in way
    quiet = g.assign(pause_max_us=float("nan"), wake_delay_p99_us=10.0)
    said, causes = cause_sentences(quiet)
    assert causes == set() and said.endswith("(the machine's pauses were not recorded).") and said.count("not recorded") == 1


def test_the_report_no_longer_blames_a_late_generator_the_data_do_not_show():
    load = pd.concat([curve("bare", "randread"), curve("bare", "randwrite")], ignore_index=True)
    reason = f"not valid: 2 of 8 offered-rate points kept open-loop arrivals; {WAY_OUT['open_loop_held']}"
    slo = pd.DataFrame({"host": ["vm", "vm"], "rw": ["randread", "randwrite"], "not_valid": [reason] * 2})
    text = "\n".join(load_sentences(load.assign(valid=False), slo, pd.DataFrame(), pd.DataFrame()))
    assert "late generator" not in text and "more usable CPUs" not in text
    assert "For an open loop: lower offered rates (the I/O path served no more than about 270 I/Os at once)" in text
    assert "levelled at 248–265" in text and "(10.4×)" in text   # said in the workload's own paragraph
    assert "late generator" not in loadgen.NOT_OPEN_WAY_OUT[loadgen.IOARRIVE]


def test_the_gates_way_out_names_no_cause_and_old_tables_still_read():
    """The tables' not_valid said 'ioarrive ... on a quieter machine' whatever the columns showed; stored tables of
    earlier runs end with that text and still split into check and evidence (loop's slo.csv)."""
    assert "quieter machine" not in WAY_OUT["open_loop_held"]
    assert "the report says which its columns support" in WAY_OUT["open_loop_held"]
    old = pd.read_csv(DATA / "slo-loop328.csv").set_index("rw").loc["randread", "not_valid"]
    assert "on a quieter machine" in old
    first, checks = loadgen.split_reason(old)
    assert first == "open_loop_held" and "quieter" not in " ".join(e for _, e in checks)


def test_a_held_p99_within_the_closed_loops_own_tail_is_said_as_its_coordinated_omission():
    """Bare's held randread u10 and u30 (p99 637 and 1,479 µs, 4.5x and 10.4x QD4's p99 of 142 µs) lie within
    QD4's own tail (p99.9 1,139 µs, p99.99 2,605 µs): the closed loop met I/Os as slow, at a smaller share. The
    held randwrite u30 (3,809 µs) lies beyond QD4's p99.99 (676 µs): no cause claimed (both sides; the curve
    tables of tests/data/slo-held carry the closed tail)."""
    from memstor.report.text.openloop_causes import held_beside_closed

    c = pd.read_csv(Path(__file__).parent / "data" / "slo-held" / "curves-bare.csv")
    read, write = (c[c["rw"] == rw].reset_index(drop=True) for rw in ("randread", "randwrite"))
    said = held_beside_closed(read, read["open_loop"].astype(bool).to_numpy())
    assert ("At u10, u30 the open loop's p99 lies within the closed loop's own tail (QD4: p99.9 1,139 µs, "
            "p99.99 2,605 µs): the closed loop met I/Os as slow, at a smaller share of its I/Os") in said
    assert "coordinated omission" in said and "do not show" not in said
    said = held_beside_closed(write, write["open_loop"].astype(bool).to_numpy())
    assert "At u30 the open loop's p99 lies beyond even the closed loop's p99.99 (676 µs): what sets this tail" in said
    assert "coordinated omission" not in said


def test_a_pause_as_long_at_a_held_rate_is_not_named_as_the_cause():
    """Third read S7-bare M-4: 'a quieter machine (its pauses exceeded the lag bound)' while the rates that held
    paused as long (randwrite u10/u50/u95/u98: up to 16,033 µs against the late u70's 876 µs). The other side:
    with the held rates' pauses short, the late point's pause over its bound is named."""
    from memstor.report.text.openloop_causes import late_causes

    c = pd.read_csv(Path(__file__).parent / "data" / "slo-held" / "curves-fresh543.csv")
    g = c[c["rw"] == "randwrite"].reset_index(drop=True)
    said, causes = late_causes(g)
    assert "pause" not in causes and "these columns do not show" in said
    calm = g.assign(pause_max_us=[100.0 if v else p for v, p in zip(g["open_loop"], g["pause_max_us"])])
    said, causes = late_causes(calm)
    assert causes == {"pause"} and "the machine paused longer than the lag bound and than at any rate that held " \
        "(100 µs) at u70" in said


def test_a_full_request_queue_is_named_from_ioarrives_submit_columns():
    """The fresh-clone run (543374c) records ioarrive's submit calls: randread's late u80-u98 had 581-858 I/Os in
    flight against vda's request queue of 256 and submit calls blocked 0.11-1.13 s: the block layer's full request
    queue is named, with its way out. The other side: the same points without a blocked call name no queue."""
    from memstor.report.text.openloop_causes import late_causes

    c = pd.read_csv(Path(__file__).parent / "data" / "slo-held" / "curves-fresh543.csv")
    g = c[c["rw"] == "randread"].reset_index(drop=True)
    said, causes = late_causes(g)
    # u95 and u98 also paused beyond their bound and the held rates' 2,114 µs: named beside the queue (S12-loop9 2)
    assert causes == {"request_queue", "pause"} and "against the disk's request queue of 256" in said
    assert "up to 581–858 I/Os were in flight" in said and "block layer's full request queue" in said
    assert "deeper request queue on the disk" in way_out(causes, g)
    said, causes = late_causes(g.assign(submit_blocked_s=0.0))
    assert "request_queue" not in causes and "request queue of" not in said


def test_the_open_against_closed_ratios_name_both_engines_and_both_clocks():
    """Third read S7-bare M-7: §4.4 set ioarrive's p99 response on libaio beside fio's p99 completion latency on
    io_uring (randwrite u10 456 against QD1's 276 µs, 1.6x; u95 539 against QD64's 1,925 µs, 0.3x) naming neither
    engine. Now both engines and both clocks are said and, with two engines, that the ratios are not the cost of
    open arrivals alone; the other side: one engine on both sides reads without that clause. Tables before the
    engine columns say the engine was not recorded."""
    from memstor.report.text.openloop_causes import arrivals_cost, held_beside_closed

    c = pd.read_csv(Path(__file__).parent / "data" / "slo-held" / "curves-fresh543.csv")
    g = c[c["rw"] == "randwrite"].reset_index(drop=True)
    assert set(g["ioengine"]) == {"libaio"} and set(g["closed_ioengine"]) == {"io_uring"}
    said = held_beside_closed(g, g["open_loop"].astype(bool).to_numpy())
    assert ("the open loop's p99 response (ioarrive on libaio, from each I/O's intended arrival) stood beside the "
            "closed loop's p99 completion latency (fio on io_uring, from submission)") in said
    assert "u10: 456 µs at 4,932 IOPS against QD1's 276 µs (1.6×)" in said
    assert "ratios across two I/O engines as well as two clocks, not the cost of open arrivals alone" in said
    assert arrivals_cost(g).startswith("not the cost of random (Poisson) arrivals alone: ioarrive on libaio")
    same = g.assign(ioengine="io_uring")
    said = held_beside_closed(same, same["open_loop"].astype(bool).to_numpy())
    assert "(ioarrive on io_uring, from each I/O's intended arrival)" in said and "two I/O engines" not in said
    assert arrivals_cost(same) == ("the cost of random (Poisson) arrivals (ioarrive on io_uring, from each I/O's "
                                   "intended arrival, against fio on io_uring, from submission)")
    old = g.drop(columns=["ioengine", "closed_ioengine"])
    said = held_beside_closed(old, old["open_loop"].astype(bool).to_numpy())
    assert "(ioarrive (engine not recorded), from each I/O's intended arrival)" in said and "two I/O engines" in said


def test_the_slo_ratio_to_fios_search_names_two_engines():
    """The SLO table's max IOPS / fio latency_target IOPS crosses engines too: the report-defects run's open loop
    ran fio's rate mode on psync, its latency_target search on io_uring (the slo table now carries both); a ratio
    between two engines says so, one between the same engine or with an engine not recorded does not claim one."""
    from memstor.analysis import synthesis as syn
    from memstor.report.text.openloop_causes import ratio_cell

    slo = syn.synthesise(Path(__file__).parent / "data" / "report-defects").slo
    assert set(slo["ioengine"]) == {"psync"} and set(slo["fio_latency_ioengine"]) == {"io_uring"}
    assert ratio_cell(0.5384, "psync", "io_uring") == "0.54 (psync against io_uring)"
    assert ratio_cell(0.5384, "io_uring", "io_uring") == "0.54"
    assert ratio_cell(0.5384, None, "io_uring") == "0.54" and ratio_cell(float("nan"), "psync", "io_uring") == "–"


def test_open_faster_than_closed_names_both_engines():
    """Workstream S round 2, item 3 (S7-bare M-7, df50461): the fresh-clone run's randwrite is faster in the open loop
    at u50-u98 (-37 % to -92 %) and the explanation named interpolation, device state and configuration but not that
    the open side ran ioarrive on libaio and the closed side fio on io_uring; now it does, and lists the engine among
    the differences. One engine on both sides: named, with no 'two I/O engines'."""
    from memstor.report.text.openloop import _open_closed_sentences

    c = pd.read_csv(Path(__file__).parent / "data" / "slo-held" / "curves-fresh543.csv")
    g = c[c["rw"] == "randwrite"].reset_index(drop=True)
    (said,) = _open_closed_sentences(g)
    assert ("the open loop (ioarrive on libaio, from each I/O's intended arrival) is faster than the closed loop "
            "(fio on io_uring, from submission) at the same throughput, two I/O engines and two clocks. It should "
            "not be") in said
    assert "Other differences between the runs can: another I/O engine and clock (named above), another device" in said
    same = g.assign(ioengine="io_uring")
    (said,) = _open_closed_sentences(same)
    assert "the open loop (ioarrive on io_uring, from each I/O's intended arrival) is faster" in said
    assert "two I/O engines" not in said and "another I/O engine" not in said
