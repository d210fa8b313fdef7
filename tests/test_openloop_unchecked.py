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
    assert "99.3–100 % of offered achieved" in write
    assert "held at 0 of 8 rates" in read and "(failed: open_loop_held)" in read


def test_the_slo_table_withholds_the_unchecked_answer_without_calling_it_failed():
    cells = slo_display(pd.read_csv(DATA / "slo-loop328.csv")).set_index("workload")["max IOPS meeting it"]
    assert cells["randwrite"].startswith("withheld: the open loop was not checked")
    assert "did not hold" not in cells["randwrite"]
    assert cells["randread"] == "not valid: the open loop did not hold (no answer)"
