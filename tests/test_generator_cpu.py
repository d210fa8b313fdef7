"""load_generator_cpu judges the generator that ran (issue 38, workstream E; R-bare M-14, S6-bare M-12): bare's
fio-load-latency row judged fio's 2 latency_target points ('2 points') and left out ioarrive, which issued the 16
offered-rate points at 69-109 % of one of the machine's 2 usable CPUs. Built from bare's curve table
(tests/data/review-s5/load_curve-bare.csv: generator_cpu_pct, achieved_iops per point)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from memstor.analysis.validity import validity_table
from memstor.analysis.validity.generator_cpu import ioarrive_cpu_rows

DATA = Path(__file__).parent / "data" / "review-s5"
TWO = {"vm": {"shape": {"usable_cpus": 2}}}


def bare(flags: bool = False) -> pd.DataFrame:
    """bare's 16 ioarrive points as the tidy table carries them (one row per point, its own direction); without
    ``flags`` the open-loop flags are dropped (every point judged: a run that did not record them)."""
    c = pd.read_csv(DATA / "load_curve-bare.csv")
    if not flags:
        c = c.drop(columns="open_loop")
    return c.assign(experiment="fio-load-latency", ok=True,
                    point=[f"{rw}-u{u:g}" for rw, u in zip(c["rw"], c["utilisation_pct"])])


def one(rows: list[dict]) -> dict:
    (r,) = rows
    assert r["check"] == "load_generator_cpu" and r["subject"] == "fio-load-latency (ioarrive)"
    return r


def test_ioarrive_is_judged_on_its_share_of_the_usable_cpus_both_ways():
    r = one(ioarrive_cpu_rows(bare(), TWO))
    assert r["status"] == "pass" and round(r["value"], 1) == 54.6
    assert "ioarrive's busiest point used 54.6 % of the 2 usable CPUs (its process 109 % of one CPU, randread u50)" in \
        r["evidence"] and "16 points, 20.2-109 % of one CPU" in r["evidence"]
    r = one(ioarrive_cpu_rows(bare(), {"vm": {"shape": {"usable_cpus": 1}}}))   # the same points on one CPU
    assert r["status"] == "fail" and r["limit"] == 90.0 and "not the device" in r["consequence"]
    warm = bare().assign(generator_cpu_pct=lambda d: d["generator_cpu_pct"].clip(upper=75.0) * 2)   # 150 % of 2
    assert one(ioarrive_cpu_rows(warm, TWO))["status"] == "warn"


def test_not_recorded_or_implausible_cpu_is_not_checked():
    r = one(ioarrive_cpu_rows(bare().drop(columns="generator_cpu_pct"), TWO))
    assert r["status"] == "unchecked" and "not recorded: ioarrive's CPU use (generator_cpu_pct)" in r["evidence"]
    assert one(ioarrive_cpu_rows(bare(), {}))["status"] == "unchecked"          # no core count
    r = one(ioarrive_cpu_rows(bare().assign(generator_cpu_pct=0.0), TWO))       # 0 ns per I/O: no measurement
    assert r["status"] == "unchecked" and "16 of 16 points recorded less than 50.0 ns" in r["evidence"]


def test_the_validity_table_has_a_row_for_the_generator_that_ran():
    t = validity_table(fio=bare(), sysinfo=TWO)
    rows = t[t["check"] == "load_generator_cpu"]
    assert rows["subject"].tolist() == ["fio-load-latency (ioarrive)"]


def test_page_one_names_the_generator_whose_cpu_failed():
    from types import SimpleNamespace

    from memstor.report.text import first_page as fp

    def steps(sysinfo):
        t = validity_table(fio=bare(), sysinfo=sysinfo)
        ds = SimpleNamespace(hosts=[SimpleNamespace(name="vm", sysinfo={})])
        return " ".join(fp.next_steps(SimpleNamespace(validity=t, dataset=ds, load=bare()), "vm", "quick"))

    assert "ioarrive took most of the CPUs" in steps({"vm": {"shape": {"usable_cpus": 1}}})
    assert "fio was CPU-bound" not in steps({"vm": {"shape": {"usable_cpus": 1}}})
    assert "ioarrive took most" not in steps(TWO)


def test_judged_at_the_points_whose_loop_held_where_some_did():
    """S12-1cpu 9: on one CPU the row failed at randread u98 (92.6 %) while the SLO answer was read from randwrite
    u10, the one rate that held, at 28.6 % (tests/data/review-s12/load_latency-1cpu.csv)."""
    c = pd.read_csv(DATA.parent / "review-s12" / "load_latency-1cpu.csv")
    c = c.assign(experiment="fio-load-latency", ok=True, point=[f"{rw}-u{u:g}" for rw, u in
                                                                zip(c["rw"], c["utilisation_pct"])])
    one_cpu = {"vm": {"shape": {"usable_cpus": 1}}}
    r = one(ioarrive_cpu_rows(c, one_cpu))
    assert r["status"] == "pass" and round(r["value"], 1) == 28.6, r["evidence"]
    assert "judged at the 1 points whose loop held" in r["evidence"]
    assert "the 15 that did not reached 92.6 % of one CPU, randread u98" in r["evidence"]
    # the other side: the held point itself at 92 % of the one CPU fails
    hot = c.assign(generator_cpu_pct=c["generator_cpu_pct"].where(~((c["rw"] == "randwrite")
                                                                     & (c["utilisation_pct"] == 10)), 92.0))
    assert one(ioarrive_cpu_rows(hot, one_cpu))["status"] == "fail"
    # no point held: every point is judged, as before
    none_held = c.assign(open_loop=False)
    r = one(ioarrive_cpu_rows(none_held, one_cpu))
    assert r["status"] == "fail" and round(r["value"], 1) == 92.6 and "judged at the" not in r["evidence"]
    # bare (2 CPUs): 3 held points, the busiest 108.9 % of one CPU (randread u30), u50's 109.2 % left out
    r = one(ioarrive_cpu_rows(bare(flags=True), TWO))
    assert round(r["value"], 1) == 54.4 and "the 13 that did not reached 109 % of one CPU, randread u50" in \
        r["evidence"]
