"""Issue 38, workstream M (the seventh reviews S7-bare, R-loop, R-1cpu): the memory checks and the report's memory
findings on the reviewed runs' real tables (tests/data/memory-m4, tests/data/memory-d3: SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from memstor.analysis.validity.memory import memory_rows

DATA = Path(__file__).parent / "data"
BARE = DATA / "memory-m4" / "bare"
LOOP = DATA / "memory-d3" / "loop328" / "processed" / "vm2-loop-fio328"


def _machine(mlc: pd.DataFrame, reason: str) -> dict:
    return next(r for r in memory_rows(mlc) if r["subject"] == f"loaded_latency: {reason} (machine)")


def test_a_machine_row_says_every_point_only_where_every_point_fails():
    """S7-bare M-9: 16 of 18 loaded_latency values failed latency_unstable and the row said 'a failure every point
    shares'; now it states the share (89 %, at least 80 %) and the 2 that pass (1.20-1.38 %). Loop's 18 of 18 keep
    'every point shares'."""
    bare = _machine(pd.read_csv(BARE / "mlc-loaded-latency.csv"), "latency_unstable")
    assert bare["evidence"].startswith("16 of 18 loaded_latency values fail 'latency_unstable'")
    assert "a failure every point shares" not in bare["evidence"]
    assert "a failure 89 % of the values share (at least 80 %)" in bare["evidence"]
    assert "not every point shares it: 2 pass (1.20-1.38 %)" in bare["evidence"]
    loop = _machine(pd.read_csv(LOOP / "mlc-loaded-latency.csv"), "latency_unstable")
    assert loop["evidence"].startswith("18 of 18") and "a failure every point shares is a property of this " \
        "machine" in loop["evidence"] and "not every point" not in loop["evidence"]
