"""The eighth independent read of the bare quick run (issue 38, S12-bare), built from its tables
(tests/data/review-s12/SOURCES.md)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from memstor.report.text import wsat as wtext

DATA = Path(__file__).resolve().parent / "data" / "review-s12"


def test_a_run_that_rose_is_not_one_level_from_start_to_end():
    """S12-bare 2: the 4 KiB random write rose at 10 s (171 -> 225 MB/s, a 'recovery' change point), found no
    fall (cliffs 0), and the report said 'no cliff — one level ... of 225 [213, 237] MB/s from start to end' with
    burst '– (no cliff: one window)' beside sustained / burst 1.32. Now the level is the one after the rise, over
    its last 12 of 22 whole seconds, and the burst cell gives the level before it. The other side: the 128 KiB
    write, too short to tell, keeps its own wording."""
    w = pd.read_csv(DATA / "wsat-bare.csv", keep_default_na=False, na_values=[""]).fillna({"caveat": ""})
    rose = w[w["workload"] == "4 KiB random write"].iloc[0]
    said = wtext.no_cliff_text(rose)
    assert "from start to end" not in said and said.startswith("no cliff, but a rise: 171 MB/s before it")
    assert "one level (its halves' medians" in said and "of 225 [213, 237] MB/s" in said
    assert "over its last 12 of 22 whole seconds" in said
    shown = wtext.wsat_display(w).set_index("workload")
    assert shown.loc["4 KiB random write", "burst (MB/s)"] == "171 (before a rise)"
    assert shown.loc["4 KiB random write", "sustained / burst"] == "1.32"
    assert "rise" not in wtext.no_cliff_text(w[w["workload"] != "4 KiB random write"].iloc[0])
    one = rose.copy()
    one[["burst_MBps", "sustained_over_burst"]] = float("nan")  # no change point at all: one window
    one["level_seconds"] = one["whole_seconds"]
    assert "from start to end" in wtext.no_cliff_text(one) and "rise" not in wtext.no_cliff_text(one)


def test_the_best_iops_headline_is_held_against_the_sweeps_best_at_any_job_count():
    """S12-bare 3: headline_definition failed both best-IOPS headlines (0.558x, 0.467x) against the one-job sweep's
    highest, 24,406 / 28,944 IOPS, named 'queue-depth sweep's highest (knee table)', while the knee table prints
    X_best 43,748 / 60,490 (any job count). Now X_best is the two-sided figure and the one-job curve only bounds
    from above: both pass. The other sides: X_best 2x above the headline fails, and 2x below it."""
    from memstor.analysis.validity.headline import headline_rows

    knees, storage = pd.read_csv(DATA / "knee-bare.csv"), pd.read_csv(DATA / "storage_fit-bare.csv")

    def judged(read, write):
        head = pd.DataFrame({"host": "vm", "key": ["best_randread_iops", "best_randwrite_iops"], "value": [read, write]})
        return {r["subject"]: r for r in headline_rows(head, knees, None, storage, None, None)}

    ok = judged(61_929.0, 43_748.0)
    assert ok["best 4K randread IOPS"]["status"] == "pass" and ok["best 4K randwrite IOPS"]["status"] == "pass"
    assert "queue-depth sweep's highest at any job count (knee table's X_best) 43,748" in \
        ok["best 4K randwrite IOPS"]["evidence"]
    other = judged(30_000.0, 87_500.0)
    assert other["best 4K randread IOPS"]["status"] == "fail" and other["best 4K randread IOPS"]["value"] > 2  # above
    assert other["best 4K randwrite IOPS"]["status"] == "fail" and other["best 4K randwrite IOPS"]["value"] < 0.51


def test_the_sweeps_p99_in_the_slo_table_is_named_a_completion_p99():
    """S12-bare 5: '(QD1, p99 52.0 µs)' beside the same point's mean total latency of 67.9 µs: fio's clat p99
    leaves out the 65 µs the io_uring submission took. Now 'completion p99 52.0 µs; below its mean total latency,
    67.9 µs: the submission time is not in it'; randwrite's (p99 175 µs above its mean 83.7 µs) says only
    'completion p99'."""
    from memstor.analysis.load_latency import closed_meeting
    from memstor.report.text.openloop import slo_display

    fio = pd.read_csv(DATA / "fio-queue-depth-bare.csv").assign(ok=True)
    slo = pd.read_csv(DATA / "slo-bare.csv").drop(columns=["closed_sweep_iops", "closed_sweep_qd",
                                                         "closed_sweep_p99_us"], errors="ignore")
    slo = slo.join(pd.DataFrame([closed_meeting(fio, r.host, r.rw, r.target_p99_us) for r in slo.itertuples()],
                                index=slo.index))
    cells = slo_display(slo).set_index("workload")["fio latency_target, closed loop (IOPS, depth per job, its p99)"]
    assert cells["randread"].endswith("met it up to 14,465 IOPS (QD1, completion p99 52.0 µs; below its mean total "
                                      "latency, 67.9 µs: the submission time is not in it)")
    assert cells["randwrite"].endswith("met it up to 11,735 IOPS (QD1, completion p99 175 µs)")
