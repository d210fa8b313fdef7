"""A headline value whose check bears on what it means, not on its number (S6-bare M-3): the value stands and its
trust names the failure. Tables: tests/data/review-s5 (SOURCES.md)."""

from __future__ import annotations

from test_report_storage_review import fp, shown, table


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
    passed = fp.headline_evidence(table("headline", "bare"), v).set_index("quantity")
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
