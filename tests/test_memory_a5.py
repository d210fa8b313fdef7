"""Issue 38, workstream A (fourth reads S8-bare, R-loop, R-1cpu): the memory findings of §4.3 and §4.5 on the
reviewed runs' real tables (tests/data/memory-a5: SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from memstor.report.text.headline import memory_figures_display, page_walk_sentence

DATA = Path(__file__).parent / "data" / "memory-a5"
BARE = DATA / "bare"
LOOP = DATA / "loop328"


def _bare_validity(status: str = "fail") -> pd.DataFrame:
    """The fresh-clone bare run's memory_buffer_llc row (fail, 0.533x), or that row passed."""
    return pd.read_csv(BARE / "validity-buffer.csv").assign(status=status)


def test_the_memory_table_marks_a_withheld_headline_withheld():
    """S8-bare B-1: §4.3's table called 184 ns and 22,117 MB/s 'the headline' while page 1 withheld both
    (memory_buffer_llc failed); now the two rows say withheld, and with the check passed they stay the headline."""
    figs = pd.read_csv(BARE / "memory_figures.csv")
    failed = memory_figures_display(figs, _bare_validity())
    assert "the headline" not in set(failed["used as"])
    assert (failed["used as"] == "withheld: memory_buffer_llc failed (not shown to be DRAM)").sum() == 2
    passed = memory_figures_display(figs, _bare_validity("pass"))
    assert list(passed.loc[passed["used as"] != "", "value [95 % interval]"]) == ["184", "22,117"]
    assert (passed["used as"] == "the headline").sum() == 2


def _idle_rows() -> pd.DataFrame:
    """The bare run's idle-latency rows (183.6 ns huge pages, 235.1 ns 4 KiB pages) as ds.mlc holds them."""
    return pd.read_csv(BARE / "mlc-idle.csv").assign(ok=True)


def test_no_page_walk_cost_from_a_buffer_not_shown_to_be_dram():
    """S8-bare B-1: '+51.5 ns (+28 %), is the page-walk cost' from the 256 MiB buffer page 1 withholds: with
    memory_buffer_llc failed no cost and no 'the difference' is stated; with it passed the cost is."""
    rows = _idle_rows()
    withheld = page_walk_sentence(rows, "vm", _bare_validity())
    assert "no page-walk cost is stated" in withheld and "memory_buffer_llc failed" in withheld
    assert "+51.5" not in withheld
    stated = page_walk_sentence(rows, "vm", _bare_validity("pass"))
    assert "+51.5 ns (+28 %)" in stated
