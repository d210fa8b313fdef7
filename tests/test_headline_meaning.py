"""A headline value whose check bears on what it means, not on its number (S6-bare M-3): the value stands and its
trust names the failure. Tables: tests/data/review-s5 (SOURCES.md)."""

from __future__ import annotations

from test_report_storage_review import fp, ht, shown, table


def test_a_best_iops_from_a_sweep_still_rising_names_the_failed_knee_plateau_and_stands():
    """S6-bare M-3: 'Best 4K random read 150,645' and 'Best 4K random write 124,524' named only interval_exists and
    interval_holds_value while knee_plateau failed for both (the sweep still rose): the most measured, not the
    device's maximum. The value stands (it was measured); its trust names the failure."""
    bare = shown("bare")
    for q, v in (("Best 4K random read (IOPS)", "150,645"), ("Best 4K random write (IOPS)", "124,524")):
        assert bare.loc[q, "value"].startswith(v)
        assert bare.loc[q, "trust"].startswith("with caveats (knee_plateau failed: the sweep still rose")
    assert "knee_plateau" not in bare.loc["4K QD1 random read mean latency (µs)", "trust"]
    # the other side: a knee_plateau that warned (1cpu randwrite) is a caveat, not a failure; one that passed is silent
    one = shown("1cpu").loc["Best 4K random write (IOPS)", "trust"]
    assert "knee_plateau" in one and "knee_plateau failed" not in one
    v = table("validity", "bare")
    v.loc[v["check"] == "knee_plateau", "status"] = "pass"
    passed = ht.headline_evidence(table("headline", "bare"), v).set_index("quantity")
    assert "knee_plateau" not in passed.loc["Best 4K random read (IOPS)", "trust"]


def test_the_write_back_cause_names_the_cache_the_kernel_reports():
    """S6-bare C-1: 'a write-back cache above the drive ... would give this, but nothing here measured it' while
    sysinfo recorded vda's write_cache 'write back' (the kernel's view): now said, and still not called the cause."""
    from pathlib import Path
    from types import SimpleNamespace

    import pandas as pd
    drive = pd.read_csv(Path(__file__).parent / "data" / "ceilings-m4" / "drive-bare.csv")
    h = table("headline", "bare")
    S = SimpleNamespace(qd=None, headline=h, validity=table("validity", "bare"), wsat=None, cache_levels=None,
                        drive=drive)
    said = " ".join(fp.findings(S, "vm"))
    assert "the kernel reports one on vda (write_cache: write back), but whether it took these writes nothing here " \
        "measured" in said
    # the other side: no such row (or write through) leaves the sentence as it was
    S.drive = drive.assign(value="write through")
    assert "would give this, but nothing here measured it" in " ".join(fp.findings(S, "vm"))


def test_a_best_of_single_runs_names_the_run_to_run_spread_measured_or_assumed():
    """R-loop 1.1: 'Best 4K random read 375,887' (the most of single 2-s runs) named knee_plateau and the interval
    checks but not the spread its own run measured: 4 KiB randread QD32x1 at 355,441 and 269,960 IOPS in two
    experiments, 1.32x. Its trust now ends with memstor.analysis.spread's words: measured where measured (loop
    1.32x), else assumed and said so (the fresh bare s7 run: one pair, 1.026x: 'the 10 % assumed for single fresh runs,
    not measured'); a withheld value and a value that is no best of runs (QD1 latency) say nothing of it."""
    import pandas as pd

    from test_report_storage_review import DATA

    loop = ht.headline_evidence(table("headline", "loop328"), table("validity", "loop328"),
                                table("summary", "loop328")).set_index("quantity")["trust"]
    assert loop["Best 4K random read (IOPS)"].endswith(
        "; the most of single runs: may be high by the largest gap between two fresh runs of one read job measured here, 1.32× (one pair))")
    assert loop["Best 4K random write (IOPS)"] == "not valid (headline_definition)"
    assert "single runs" not in loop["4K QD1 random read mean latency (µs)"]
    s7 = DATA.parent / "review-s7"
    bare = ht.headline_evidence(pd.read_csv(s7 / "headline-bare.csv"), None,
                                pd.read_csv(s7 / "summary-bare.csv")).set_index("quantity")["trust"]
    assert bare["Best 4K random write (IOPS)"] == ("with caveats (the most of single runs: may be high by the 10 % "
                                                   "assumed for single fresh runs (the one pair measured twice agreed within 1.03×); other runs measured more: "
                                                   "up to 88,491 IOPS as a whole-run mean (fio-rw-ratio: randwrite 4 KiB))")  # S9 B-1
    assert bare["Sequential read (MB/s)"] == "sound (its checks pass)"
    without = ht.headline_evidence(table("headline", "loop328"), table("validity", "loop328")).set_index("quantity")
    assert "single runs" not in without.loc["Best 4K random read (IOPS)", "trust"]


def test_a_trust_cell_says_which_checks_warned_and_which_were_not_checked():
    """R-loop 1.3: 'with caveats (interval_exists, interval_holds_value not checked)' read as both unchecked, while
    interval_exists warned (it ran and found no interval); now one group per status."""
    loop = shown("loop328")
    assert loop.loc["4K QD1 random read mean latency (µs)", "trust"] == (
        "with caveats (interval_exists warned; interval_holds_value not checked)")
