"""Memory findings follow their preconditions (issue 38, fifth review, workstream D, part 2): a headline from a run
that failed the memory gate is withheld, B_max from gate-failed points is not stated, the buffer is checked
against the last-level cache before a value is called DRAM's, 'peak memory bandwidth' is one definition, and the
'every measurement' table holds every measurement. Real runs: tests/data/memory-d3 (SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstor.analysis import synthesis as syn
from memstor.analysis.dataset import load_dataset
from memstor.analysis.memory_curves import curve_table
from memstor.analysis.memory_fit import memory_fit_table
from memstor.analysis.read_ratio import read_ratio_table
from memstor.report.text.first_page import headline_evidence
from memstor.report.text.read_ratio import read_ratio_display, read_ratio_sentences

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


def _read_ratio(ds):
    mem, _ = memory_fit_table(curve_table(ds.mlc))
    return mem, read_ratio_table(mem)


def test_b_max_read_at_a_run_that_failed_its_gate_is_not_stated(loop, bare):
    """R-loop 11.1, R-bare M-15, S6-bare M-13: 'B_max 3,880 MB/s at 100 % DRAM reads (read-only), 5,844 MB/s at
    0 %' (loop: all 18 points failed) and bare's '15,549 ... 25,206' (read-only delay 0 bandwidth_unstable 5.5 %,
    write-only-nt delay 0 latency_unstable 2.8 %) are not stated; bare's 1:1 B_max 12,907 (its run passed) is
    shown without the mark; a family whose B_max runs passed still says how B_max moves."""
    for ds, figures in ((loop, ("3,880", "5,844")), (bare, ("15,549", "25,206"))):
        mem, rr = _read_ratio(ds)
        said = read_ratio_sentences(rr, None)[0]
        assert "is not stated: the run B_max is read at failed the memory gate (read-only, write-only-nt" in said
        assert not any(f in said for f in figures)
        shown = read_ratio_display(rr)["B_max (MB/s)"].tolist()
        assert f"{figures[0]} (gate failed)" in shown and f"{figures[1]} (gate failed)" in shown
    mem, rr = _read_ratio(bare)
    assert "12,907" in read_ratio_display(rr)["B_max (MB/s)"].tolist()
    passed = read_ratio_sentences(rr.assign(b_max_gate_failed=False), None)[0]
    assert "B_max 15,549 MB/s at 100 %" in passed
