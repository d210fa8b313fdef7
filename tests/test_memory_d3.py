"""Memory findings follow their preconditions (issue 38, fifth review, workstream D, part 2): a headline from a run
that failed the memory gate is withheld, B_max from gate-failed points is not stated, the buffer is checked
against the last-level cache before a value is called DRAM's, 'peak memory bandwidth' is one definition, and the
'every measurement' table holds every measurement. Real runs: tests/data/memory-d3 (SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstor.analysis import synthesis as syn
from memstor.analysis.dataset import load_dataset
from memstor.report.text.first_page import headline_evidence

DATA = Path(__file__).parent / "data" / "memory-d3"


@pytest.fixture(scope="module")
def loop():
    return load_dataset(DATA / "loop328")


@pytest.fixture(scope="module")
def bare():
    return load_dataset(DATA / "bare")


def _headline(ds, quantity: str):
    table = headline_evidence(syn.headline_long(ds), None)
    return table[table["quantity"].str.startswith(quantity)].iloc[0]


def test_an_idle_latency_headline_whose_run_failed_the_gate_is_withheld(loop, bare):
    """R-loop 2.3: loop's 243.6 ns (2 MiB pages: latency spread 14.0 %, measuring thread at 75 % of its CPU) read
    '244 [227, 266]' 'with caveats'; now withheld with the gate's numbers. bare's 168.7 ns passed its gate: stated."""
    row = _headline(loop, "Idle memory")
    assert row["value"].startswith("withheld: its run failed the memory gate (latency spread 14.0 %")
    assert "75 % of its CPU" in row["value"] and "244" not in row["value"]
    assert row["trust"] == "not valid (memory_gate: latency_unstable, cpu_share)"
    kept = _headline(bare, "Idle memory")
    assert kept["value"].startswith("169") and not kept["trust"].startswith("not valid")
    assert _headline(loop, "Peak memory")["value"].startswith("20,655")  # its gate passed
