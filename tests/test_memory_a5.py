"""Issue 38, workstream A (fourth reads S8-bare, R-loop, R-1cpu): the memory findings of §4.3 and §4.5 on the
reviewed runs' real tables (tests/data/memory-a5: SOURCES.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from memstor.analysis import hierarchy as h
from memstor.analysis.validity.memory import buffer_llc_rows, hierarchy_rows
from memstor.report.text import hierarchy as hier_text
from memstor.report.text.first_page import check_names
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


def _loop_hierarchy() -> tuple[pd.DataFrame, dict]:
    """R-loop's mem-hierarchy rows (working set and MLP) and its kernel caches (L1d 48 KiB, L2 2 MiB, L3 480 MiB)."""
    info = json.loads((DATA.parent / "memory-d3" / "loop328" / "processed" / "vm2-loop-fio328" / "sysinfo.json")
                      .read_text())
    return pd.read_csv(LOOP / "mem-hierarchy.csv"), info["caches"]


def _level(levels: pd.DataFrame, name: str) -> pd.Series:
    return levels[levels["level"] == name].iloc[0]


def test_a_kernel_cache_the_curve_steps_near_is_not_said_to_have_no_step():
    """R-loop p9: 'L2 (the kernel's 2 MiB): no step near 2,048 KiB' while the curve rises 8.7 -> 18.6 -> 35.8 -> 40.1
    ns at 1.4-4 MiB. Fifth read (R-loop 10.1): the level search now finds L2 (4.53 ns, 64-724 KiB, 1 MiB left out)
    ending between 724 and 1,448 KiB, within a factor 2 of the kernel's 2 MiB, and the 40-48 ns shoulder (L3,
    2.9-11.3 MiB, a factor 30 from the kernel's 480 MiB). A kernel cache no level is matched to still reads 'the curve
    steps near it' where it does (not 'no step'), and 'no step near' where the curve is flat (agrees False)."""
    mlc, caches = _loop_hierarchy()
    levels = h.cache_levels(mlc, caches)
    l2, l3 = _level(levels, "L2"), _level(levels, "L3")
    assert l2["note"].startswith("ends between 724 KiB and 1,448 KiB: on it 64 KiB-724 KiB (8 sizes), held at 724 KiB "
                                 "(5.35 ns, 2 % of the way")  # S11-1cpu 4: the sizes it ends between
    assert l2["agrees"] is True and l3["agrees"] is False and "a factor 30.0 from the kernel's 480" in l3["note"]
    ws = h.working_set_table(mlc)
    curve = h.choose_curve(ws)[1]
    curve = curve[h.cpu_held(curve["cpu_share"])]
    sizes, lat = curve["buffer_bytes"].to_numpy(dtype=float), curve["lat_p50_ns"].to_numpy(dtype=float)
    note, agrees = h._unmatched(sizes, lat, 2 << 20)
    assert note.startswith("the curve steps near it (8.7 ns at 1,448 KiB to 40.1 ns at 4,096 KiB)") and agrees is None
    note, agrees = h._unmatched(sizes, lat, 256 << 10)  # 4.53-5.07 ns over 128-512 KiB
    assert note.startswith("no level of the curve matched to it: no step near 256 KiB") and agrees is False


def test_the_buffer_check_names_a_curve_that_reaches_dram_like_latency_below_the_kernels_cache():
    """R-loop p9, 10.1: memory_buffer_llc withheld every DRAM figure on the kernel's 480 MiB alone while the working-set
    curve levels off at 140-167 ns over 22.6-64 MiB (MLP: 177.5 ns at 256 MiB). That plateau is now a level, so the
    check judges the 256 MiB buffer against the curve's last step (13.5 MiB: 19x, pass) and names the kernel's 480
    MiB beside it. The other side: the same curve cut at 22.6 MiB rises past its last level with no level found,
    and the check keeps the kernel's figure (fail), saying both; a curve that ends on its level (cut at 44 KiB) adds
    nothing."""
    mlc, caches = _loop_hierarchy()
    idle = pd.DataFrame({"host": "vm2-loop-fio328", "test": ["idle_latency"], "buffer_kib": [262144.0]})
    both = pd.concat([mlc, idle], ignore_index=True)
    (r,) = buffer_llc_rows(both, {"vm2-loop-fio328": {"caches": caches}})
    assert r["status"] == "pass" and "19.0x the working-set curve's last cache step at 13.5 MiB (beyond it the " \
        "curve's last level, 159 ns" in r["evidence"] and "the kernel reports a 480 MiB" in r["evidence"]
    cut = mlc[(mlc["test"] != "working_set") | (pd.to_numeric(mlc["buffer_bytes"]) <= 23 << 20)]
    (r,) = buffer_llc_rows(pd.concat([cut, idle], ignore_index=True), {"vm2-loop-fio328": {"caches": caches}})
    assert r["status"] == "fail" and "it rises past its last level to 140 ns at 22.6 MiB" in r["evidence"]
    assert r["evidence"].endswith("a DRAM-like latency: which holds, that or the kernel's cache, is not shown")
    assert r["consequence"].startswith("256 MiB buffer, within the 480 MiB last-level cache the kernel reports: not "
                                       "shown to be DRAM")
    short = mlc[(mlc["test"] != "working_set") | (pd.to_numeric(mlc["buffer_bytes"]) <= 45 * 1024)]
    (r,) = buffer_llc_rows(pd.concat([short, idle], ignore_index=True), {"vm2-loop-fio328": {"caches": caches}})
    assert "rises past" not in r["evidence"] and r["consequence"].startswith(
        "256 MiB buffer, within the 480 MiB last-level cache: not shown to be DRAM")


def test_the_mlp_bandwidth_follows_the_buffer_rule_of_every_memory_bandwidth():
    """R-loop p9: '1 thread(s): 4,920 MB/s at 16 independent chains' was stated without the memory_buffer_llc
    caveat that withholds every other memory bandwidth; now it carries it, and with the check passed it does not."""
    mlp = pd.read_csv(LOOP / "mlp.csv")
    validity = pd.read_csv(LOOP / "validity-memory.csv")
    one, two = hier_text.hierarchy_sentences(None, mlp, None, validity)
    assert one.startswith("**vm2-loop-fio328**, 1 thread(s): 4,920 MB/s") and \
        one.endswith("; not shown to be DRAM's (memory_buffer_llc failed).")
    assert two.startswith("**vm2-loop-fio328**, 2 thread(s): not stated")
    passed = validity.assign(status="pass")
    one = hier_text.hierarchy_sentences(None, mlp, None, passed)[0]
    assert "4,920 MB/s" in one and "not shown to be DRAM" not in one and one.endswith(".")


def test_the_hierarchy_findings_are_listed_as_not_checked_on_page_one():
    """R-1cpu M6: §4.5's levels, TLB cost and MLP bandwidth (one run per size, n = 1) had no interval row, and page 1
    listed no memory finding as not checked. Now each mem-hierarchy test has an unchecked interval_holds_value row
    that page 1 names; repeated runs are counted as such (still no interval)."""
    mlc, _ = _loop_hierarchy()
    rows = [r for r in hierarchy_rows(mlc) if r["check"] == "interval_holds_value"]
    assert [(r["subject"], r["status"]) for r in rows] == [("mem-hierarchy mlp", "unchecked"),
                                                           ("mem-hierarchy working_set", "unchecked")]
    assert rows[1]["evidence"] == ("not checked: the levels and TLB cost are read from one run per size, with no "
                                   "95 % interval")
    page1 = " ".join(check_names(pd.DataFrame(hierarchy_rows(mlc))))
    assert "Not checked" in page1 and "`interval_holds_value` (mem-hierarchy mlp; mem-hierarchy working\\_set)" in page1
    twice = pd.concat([mlc, mlc], ignore_index=True)
    (ws,) = [r for r in hierarchy_rows(twice) if r["subject"] == "mem-hierarchy working_set"
             and r["check"] == "interval_holds_value"]
    assert "read from up to 2 runs per size" in ws["evidence"]
