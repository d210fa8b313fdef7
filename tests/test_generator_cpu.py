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


def bare() -> pd.DataFrame:
    """bare's 16 ioarrive points as the tidy table carries them (one row per point, its own direction)."""
    c = pd.read_csv(DATA / "load_curve-bare.csv")
    return c.assign(experiment="fio-load-latency", ok=True,
                    point=[f"{rw}-u{u:g}" for rw, u in zip(c["rw"], c["utilisation_pct"])])


def one(rows: list[dict]) -> dict:
    (r,) = rows
    assert r["check"] == "load_generator_cpu" and r["subject"] == "fio-load-latency (ioarrive)"
    return r


def test_ioarrive_is_judged_on_its_share_of_the_usable_cpus_both_ways():
    r = one(ioarrive_cpu_rows(bare(), TWO))
    assert r["status"] == "pass" and round(r["value"], 1) == 54.6
    assert "ioarrive's busiest point used 54.6 % of the 2 usable CPUs (its process 109 % of one CPU, u50)" in \
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
