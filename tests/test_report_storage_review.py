"""The storage sweeps' statements against the tables of three reviewed runs (issue 38, fifth review, workstream B):
the rows in tests/data/review-s5 (SOURCES.md) are copied from the tables the reviewed reports were built from."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from memstor.report.text import first_page as fp

DATA = Path(__file__).parent / "data" / "review-s5"


def table(name: str, run: str) -> pd.DataFrame:
    return pd.read_csv(DATA / f"{name}-{run}.csv")


def shown(run: str) -> pd.DataFrame:
    return fp.headline_evidence(table("headline", run), table("validity", run)).set_index("quantity")


def test_a_disagreement_at_one_configuration_withholds_only_that_configurations_values():
    """R-1cpu B2: config_agreement failed at 4 KiB randwrite QD32x1 (76,512 against 47,150 IOPS); the QD1x1
    latency (125.5 µs) and the QD32x4 best (79,964 IOPS) were withheld for it, yet stated in the findings."""
    one = shown("1cpu")
    assert one.loc["4K QD1 random write mean latency (µs)", "value"].startswith("126")
    assert "config_agreement" not in one.loc["4K QD1 random write mean latency (µs)", "trust"]
    assert one.loc["Best 4K random write (IOPS)", "value"].startswith("79,964")
    # the other side: the same value had it been measured at the disagreeing configuration (QD32x1) is withheld
    h = table("headline", "1cpu")
    h.loc[h["key"] == "best_randwrite_iops", "detail"] = "QD32x1, io_uring, O_DIRECT, fio-block-size, n=1"
    at = fp.headline_evidence(h, table("validity", "1cpu")).set_index("quantity").loc["Best 4K random write (IOPS)"]
    assert at["value"].startswith("withheld: config_agreement failed")


def qd(run: str) -> pd.DataFrame:
    """The queue-depth sweep's rows as memstor.analysis.points.qd_points marks them (spec points not in_sweep)."""
    s = table("summary", run)
    s = s[(s["experiment"] == "fio-queue-depth") & (s["bs_bytes"] == 4096)].copy()
    s["in_sweep"] = ~s["spec_point"].astype(bool)
    return s


def test_the_most_along_the_sweep_is_never_below_a_point_of_the_same_sweep():
    """R-loop 2.6 / R-1cpu M1 / R-bare M-2: 'the most, 52,330 IOPS ... with 16 in flight' while the same sweep's
    QD32x4 point measured 75,231 IOPS (loop); 61,151 against 79,964 (1cpu)."""
    loop = fp._tradeoff(qd("loop328"), qd("loop328")["host"].iloc[0], "randwrite")
    assert "the most along its one-job sweep, 52,330 IOPS" in loop
    assert "with 4 jobs (QD32x4, 128 in flight) the same sweep measured more, 75,231 IOPS" in loop
    one = qd("1cpu")
    assert "79,964 IOPS" in fp._tradeoff(one, one["host"].iloc[0], "randwrite")
    # the other side: loop's randread QD32x4 (227,302) is below QD64x1 (375,887): 'the most' as it was
    read = fp._tradeoff(qd("loop328"), qd("loop328")["host"].iloc[0], "randread")
    assert "; the most, 375,887 IOPS" in read and "jobs" not in read
