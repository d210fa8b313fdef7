"""The open-loop section of the seventh independent read, 1-CPU run (issue 38, S11-1cpu): built from its
load_latency table (tests/data/review-s11/openloop/SOURCES.md)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from memstor.analysis import load_latency
from memstor.report.text.openloop_causes import busy_pct, late_causes

DATA = Path(__file__).resolve().parent / "data" / "review-s11" / "openloop"


def load(cpus=None) -> pd.DataFrame:
    t = pd.read_csv(DATA / "load_latency-1cpu.csv")
    return t if cpus is None else t.assign(usable_cpus=cpus)


def test_a_cpu_is_not_ruled_out_where_ioarrive_used_the_checks_share_of_the_usable_cpus():
    """S11-1cpu 2: randwrite u50-u98 'waited for the block layer's full request queue, not for a CPU' with ioarrive
    at up to 79.0 % of the one usable CPU, where load_generator_cpu warned (70 % of the usable CPUs)."""
    l1 = load(1.0)
    said, causes = late_causes(l1[l1["rw"] == "randwrite"], l1)
    assert "ioarrive at 32.0–79.0 % of one CPU (1 usable CPU)" in said and "request_queue" in causes
    assert "full request queue and perhaps for a CPU as well" in said and "not for a CPU" not in said


def test_two_usable_cpus_leave_79_percent_of_one_to_spare():
    l2 = load(2.0)
    said, _ = late_causes(l2[l2["rw"] == "randwrite"], l2)
    # u50 and u70 paused beyond their lag bounds: named beside the queue, no 'not for a CPU' (S12-loop9 2)
    assert "(2 usable CPUs)" in said and "perhaps for a CPU" not in said
    assert "full request queue; at u50, u70 the machine also paused longer than the lag bound" in said, said
    said, _ = late_causes(l2[l2["rw"] == "randwrite"].assign(pause_max_us=0.0), l2)
    assert "(2 usable CPUs)" in said and "full request queue, not for a CPU" in said
    assert list(busy_pct(pd.DataFrame({"usable_cpus": [1.0, 2.0, 16.0]}))) == [70.0, 90.0, 90.0]


def test_usable_cpus_not_recorded_keep_the_one_cpu_threshold():
    said, _ = late_causes(load()[load()["rw"] == "randwrite"].assign(pause_max_us=0.0), load())
    assert "usable CPU" not in said and "full request queue, not for a CPU" in said
    assert list(busy_pct(pd.DataFrame({"x": [1]}))) == [90.0]


def test_the_curve_table_carries_each_hosts_usable_cpus():
    fio = pd.read_csv(Path(__file__).resolve().parent / "data" / "review-s10" / "fio-load-latency-processed-bare.csv")
    t = load_latency.curve_table(fio.assign(host="vm", ok=True), cpus={"vm": 2.0})
    assert len(t) == 16 and (t["usable_cpus"] == 2.0).all()
    assert load_latency.curve_table(fio.assign(host="vm", ok=True))["usable_cpus"].isna().all()
