"""Issue 38, fifth read, workstream A (memory): checks over the fifth reviews' real memory rows.
Data: tests/data/review-s9a (SOURCES.md)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from memstor.analysis import hierarchy as h
from memstor.analysis.validity.fits import gate_failed_points, holdout_rows
from memstor.report.text import hierarchy as hier_text

DATA = Path(__file__).parent / "data" / "review-s9a"


def _fits(mem: pd.DataFrame) -> dict:
    """{(host, curve): a fitted CurveFit stand-in with the row's held-out error}."""
    return {(r["host"], r["curve"]): SimpleNamespace(model=SimpleNamespace(fitted=True), holdout_points=r["holdout_points"],
                                                     holdout_error_pct=r["holdout_error_pct"], holdout_note="")
            for _, r in mem.iterrows()}


def test_a_held_out_check_over_failed_points_is_not_checked_both_sides():
    """R-def 26: validity.csv counted curve_holdout 'pass' (read-only 2.82 %, 1:1 0.43 %) on curves whose 6 of 6
    points failed the memory gate (bare: 0.75 % and 5.88 % on 5 of 6). Now such a curve's row is not checked, with
    why; a curve whose points mostly passed (the same rows with 3 of 6 failed) keeps its pass."""
    mem = pd.read_csv(DATA / "memory_fit.csv")
    rows = holdout_rows(_fits(mem), "memory", lambda k: (k[0], str(k[1])), gate_failed_points(mem))
    assert len(rows) == 6 and {r["status"] for r in rows} == {"unchecked"}
    ro = next(r for r in rows if r["host"] == "xeon-defects" and r["subject"] == "memory curve read-only")
    assert ro["evidence"].startswith("not checked: 6 of the curve read-only, 64 B, loadlat") and ro["evidence"].endswith(
        "'s 6 points failed the memory gate: a model fitted to them predicts nothing checked")
    half = mem.assign(gate_failed_points=3)
    rows = holdout_rows(_fits(half), "memory", lambda k: (k[0], str(k[1])), gate_failed_points(half))
    got = {(r["host"], r["subject"].split(",")[0]): r["status"] for r in rows}
    assert got[("xeon-defects", "read-only")] == "pass" and got[("vm", "1:1")] == "pass"
    assert got[("xeon-defects", "write-only-nt")] == "unchecked"  # no held-out error: unchecked as before
    assert holdout_rows(_fits(mem), "memory", lambda k: (k[0], str(k[1])))[0]["status"] == "pass"  # no gate given


def test_the_coverage_sentence_names_the_curves_last_step_not_only_the_kernels_cache():
    """R-loop 10.1: 'below the kernel's 480 MiB last-level cache: ... its last level is not shown to be DRAM' while
    the curve leaves its 40.6 ns level at 13.5 MiB for a 159 ns level it ends on (177.5 ns at 256 MiB) and
    memory_buffer_llc judges the buffer against that step. The other side: cut at 22.6 MiB the curve still rises
    and the sentence keeps 'not shown to be DRAM'. Real rows: tests/data/memory-d3/loop328-hierarchy."""
    df = pd.read_csv(Path(__file__).parent / "data" / "memory-d3" / "loop328-hierarchy" / "mem-hierarchy.csv")
    caches = {"L1d_bytes": 49152, "L2_bytes": 2097152, "L3_bytes": 503316480}

    def said(rows):
        return hier_text.hierarchy_sentences(h.cache_levels(rows, caches), None, h.working_set_table(rows))[0]

    whole = said(df)
    assert ("The sweep covered 4 KiB to 64 MiB, below the kernel's 480 MiB last-level cache: it leaves its last cache "
            "level at about 13.5 MiB (midway between the sizes measured either side), passes 77.7 ns at 16 MiB (no level) and reaches the 159 ns level it ends on from 22.6 MiB (140 ns there), "
            "the step memory_buffer_llc judges the buffers against") in whole  # S14: where it reaches that level
    assert "not shown to be DRAM" not in whole
    cut = df[(df["test"] != "working_set") | (pd.to_numeric(df["buffer_bytes"]) <= 23 << 20)]
    assert "last-level cache: not shown to be DRAM" in said(cut)


def test_the_hierarchy_says_which_run_it_left_out_and_page_one_says_so_too():
    """S9-bare M-7: page 1 listed hierarchy_cpu_share (mem-hierarchy working_set) failed, 'their findings are not
    stated' and 'the levels and bandwidths from them are not shown to be the memory's', while §4.5 stated the levels
    and TLB cost and never said a run was dropped (4 KiB pages at 724 KiB, 84.4 %: not on the 2 MiB curve the
    levels come from, so no LEFT_OUT row). Now §4.5 names it and the consequence says the run is left out. The other
    side: with that run's share in the band nothing is named and the check passes."""
    from memstor.analysis.validity.memory import hierarchy_rows

    df = pd.read_csv(DATA / "mem-hierarchy-bare.csv")
    caches = {"L1d_bytes": 49152, "L2_bytes": 2097152, "L3_bytes": 503316480}
    said = hier_text.hierarchy_sentences(h.cache_levels(df, caches), None, h.working_set_table(df))[0]
    assert ("Left out (hierarchy_cpu_share: on a CPU outside 90-101 % of the time): random chain, "
            "4K pages, 724.1 KiB (84 %); the levels and TLB cost come from the other runs.") in said  # S12-loop 8: in its own unit (0.7 MiB)
    (ws,) = [r for r in hierarchy_rows(df) if r["check"] == "hierarchy_cpu_share" and r["subject"].endswith("set")]
    assert ws["status"] == "fail" and "those runs are left out, and §4.5 states only what the runs within the band " \
        "give" in ws["consequence"]
    ok = df.assign(cpu_share=df["cpu_share"].clip(lower=0.95))
    said = hier_text.hierarchy_sentences(h.cache_levels(ok, caches), None, h.working_set_table(ok))[0]
    assert "left out" not in said
    assert {r["status"] for r in hierarchy_rows(ok) if r["check"] == "hierarchy_cpu_share"} == {"pass"}


def test_every_row_of_a_buffer_not_shown_to_be_drams_says_so_and_a_withheld_headline_is_not_the_headline():
    """R-def 17, R-loop 8.1: the §4.3 table marked only the two headline rows withheld while 220 [218, 222] ns,
    11,344 [11,275, 11,413] and 19,368 MB/s of the same 256 MiB buffer (memory_buffer_llc failed) showed gate
    'passed' with nothing in 'used as'. S9-bare C-7: the withheld 213 ns (its run failed latency_unstable) read
    'used as: the headline'. Both sides: the bare buffer passed, so its other rows say nothing and its headline
    bandwidth (not judged) stays 'the headline'."""
    from memstor.report.text.headline import memory_figures_display

    figs = pd.read_csv(DATA / "memory_figures.csv")
    validity = pd.read_csv(DATA / "validity-buffer.csv")
    shown = memory_figures_display(figs, validity)
    defects = shown[shown["device"] == "xeon-defects"]
    assert set(defects["used as"]) == {"withheld: memory_buffer_llc failed (not shown to be DRAM)",
                                       "not shown to be DRAM (memory_buffer_llc failed)"}
    row = defects[defects["value [95 % interval]"].str.startswith("11,344")].iloc[0]
    assert row["gate"] == "passed" and row["used as"] == "not shown to be DRAM (memory_buffer_llc failed)"
    bare = shown[shown["device"] == "vm"].set_index("value [95 % interval]")["used as"]
    assert bare["213"] == "withheld: its run failed the memory gate" and bare["29,041"] == "the headline"
    assert (bare.drop(["213", "29,041"]) == "").all()


def test_a_memory_headline_says_its_load_threads_took_every_cpu_and_what_its_section_did_not_check():
    """S9-bare M-1: 'Peak memory bandwidth 29,041' (the matrix, 2 load threads on the 2-vCPU guest) was the one
    memory figure no gate looked at ('memory_gate not checked for its section') and the condition was unsaid. Now
    'measured as' ends '2 load threads on 2 usable CPUs: every CPU loaded' and the trust says what was not checked.
    The other side: the same row on a 4-CPU host, and a 1-thread figure, say nothing more."""
    from memstor.report.text.headline_table import headline_evidence
    from memstor.report.text.headline_trust import on_cpus

    head = pd.read_csv(DATA / "headline-bare.csv")
    detail = head.set_index("key").loc["peak_bw_MBps", "detail"]
    assert on_cpus(detail, 2) == f"{detail} on 2 usable CPUs: every CPU loaded"
    assert on_cpus(detail, 4) == detail and on_cpus("peak injection, read-only, 1 load thread", 2).endswith("thread")
    shown = headline_evidence(head, pd.DataFrame(columns=["host", "check", "subject", "status", "evidence",
                                                          "consequence", "section", "value", "limit"]),
                              cpus={"vm": 2.0})
    row = shown[shown["quantity"].str.startswith("Peak memory bandwidth")].iloc[0]
    assert row["measured as"].endswith("2 load threads on 2 usable CPUs: every CPU loaded")
    assert "memory_gate not checked for its section: no CPU share or stability" in row["trust"]
