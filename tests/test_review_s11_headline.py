"""Page 1's headline table of the seventh independent read, 1-CPU run (issue 38, S11-1cpu): built from its tables
(tests/data/review-s11/headline/SOURCES.md)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from memstor.report.text import headline_table as ht

DATA = Path(__file__).resolve().parent / "data" / "review-s11" / "headline"


def table(name: str) -> pd.DataFrame:
    return pd.read_csv(DATA / f"{name}.csv")


def trust() -> pd.Series:
    return ht.headline_evidence(table("headline"), table("validity")).set_index("quantity")["trust"]


def test_a_fio_headline_names_the_checks_of_its_own_experiment_only():
    """S11-1cpu 1: every fio headline said 'load_generator_cpu ... warned', the open loop's (ioarrive at 79 %),
    while fio-queue-depth passed at 42.5 % and fio-block-size at 34.6 %."""
    v = table("validity").set_index(["check", "subject"])["status"]
    assert v[("load_generator_cpu", "fio-load-latency (ioarrive)")] == "warn"
    assert v[("load_generator_cpu", "fio-queue-depth")] == v[("load_generator_cpu", "fio-block-size")] == "pass"
    t = trust()
    fio = [q for q in t.index if q.startswith(("4K QD1", "Best 4K", "Sequential"))]
    assert len(fio) == 6 and not any("load_generator_cpu" in t[q] for q in fio)
    assert all("interval_exists" in t[q] for q in fio)                # its own experiment's warning stays


def test_the_own_experiments_warning_still_bears_on_it():
    warned = table("validity").copy()
    mask = (warned["check"] == "load_generator_cpu") & (warned["subject"] == "fio-queue-depth")
    warned.loc[mask, "status"] = "warn"
    t = ht.headline_evidence(table("headline"), warned).set_index("quantity")["trust"]
    assert "load_generator_cpu" in t["Best 4K random read (IOPS)"] and "load_generator_cpu" in t[
        "4K QD1 random read mean latency (µs)"]
    assert "load_generator_cpu" not in t["Sequential read (MB/s)"]    # fio-block-size still passed


def test_a_detail_without_an_experiment_keeps_every_experiments_checks():
    head = table("headline").assign(detail="QD64x1")
    t = ht.headline_evidence(head, table("validity")).set_index("quantity")["trust"]
    assert "load_generator_cpu" in t["Best 4K random read (IOPS)"]
