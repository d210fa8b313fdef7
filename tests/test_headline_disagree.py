"""A failed sweep check named in its QD1 latency's trust, a short write's headline marked where the same job ran
slower for longer, more jobs than usable CPUs named (issue 38, fourth read R-loop p2, R-1cpu M1, M8). The rows are the reviewed runs' own
(tests/data/review-s5; SOURCES.md there)."""

from __future__ import annotations

import pandas as pd

from memstor.report.text import headline_table as ht
from memstor.report.text.headline_trust import elsewhere_caveat, on_cpus
from test_knee_spread import DATA, checks, table


def test_the_qd1_latency_names_the_failed_check_of_its_sweep():
    """R-loop p2: the QD1 random-write latency 52.6 µs comes from the randwrite sweep whose knee_sweep_agrees
    failed (2.32x), and its trust did not say so. The other side: the randread sweep passed it."""
    trust = ht.headline_evidence(table("headline", "loop328"), checks("loop328"),
                                 table("summary", "loop328")).set_index("quantity")["trust"]
    assert trust["4K QD1 random write mean latency (µs)"].startswith(
        "with caveats (knee_sweep_agrees failed: its sweep is not shown to be the target's;")
    assert "knee_sweep_agrees" not in trust["4K QD1 random read mean latency (µs)"]


def test_a_short_write_headline_says_the_same_job_ran_slower_for_longer():
    """R-1cpu M1: 'Sequential write 2,368 MB/s' (fio-block-size, 2 s) while the same job (write, 1 MiB, QD32x1)
    ran 10 s in fio-pts-xsr at 1,038-1,112 MB/s: the trust cell says it. The other side: the read, and a value
    the other runs are within 10 % of, keep their trust."""
    s5 = DATA / "review-s5"
    trust = ht.headline_evidence(pd.read_csv(s5 / "headline-1cpu.csv"), pd.read_csv(s5 / "validity-1cpu.csv"),
                                 pd.read_csv(s5 / "summary-1cpu.csv")).set_index("quantity")["trust"]
    assert trust["Sequential write (MB/s)"].startswith(
        "with caveats (not shown to last: the same job ran at 1,038-1,112 MB/s in fio-pts-xsr; interval_exists")
    assert "not shown to last" not in trust["Sequential read (MB/s)"]
    from memstor.report.text.headline_trust import lasting_caveat
    points = pd.read_csv(s5 / "summary-1cpu.csv")
    assert lasting_caveat("sound (its checks pass)", points, "vm-1cpu", 1_100.0) == "sound (its checks pass)"


def test_a_headline_of_more_jobs_than_usable_cpus_says_so():
    """R-1cpu M8: 'Best 4K random read 136,314 IOPS, QD32x4' of a run that could use one CPU did not say that its
    four jobs shared it. Now its 'measured as' does; the QD1x1 rows and a run with CPUs enough stay as they were."""
    headline, validity = table("headline", "1cpu"), table("validity", "1cpu")
    one = ht.headline_evidence(headline, validity, cpus={"vm-1cpu": 1.0}).set_index("quantity")["measured as"]
    assert one["Best 4K random read (IOPS)"].endswith("QD32x4, io_uring, O_DIRECT, fio-queue-depth, n=1, "
                                                     "4 jobs on 1 usable CPU"), one["Best 4K random read (IOPS)"]
    assert "usable CPU" not in one["4K QD1 random read mean latency (µs)"]
    four = ht.headline_evidence(headline, validity, cpus={"vm-1cpu": 4.0}).set_index("quantity")["measured as"]
    assert not four.str.contains("usable CPU").any()
    assert on_cpus("QD32x4, io_uring", 2.0) == "QD32x4, io_uring, 4 jobs on 2 usable CPUs"
    assert on_cpus("QD32x4, io_uring", None) == "QD32x4, io_uring"


def test_a_sweep_best_names_a_higher_figure_other_runs_measured():
    """S9-bare B-1: 'Best 4K random write 66,699 IOPS ... the most measured' while the steady-state rounds measured
    up to 121,968 IOPS and fio-pts-hir 87,461 on the same file. Now its trust names the highest; the best read
    (122,622, the most of every run) stays as it was; a rate-limited open loop or a write-saturation run is never a
    higher best."""
    rows = pd.read_csv(DATA / "review-s9a" / "summary-best-bare.csv")
    said = elsewhere_caveat("sound (its checks pass)", rows, "vm", "best_randwrite_iops", 66_698.95)
    assert said == "with caveats (other runs measured more: up to 121,968 IOPS as a whole-run mean (fio-steady-state: randwrite 4 KiB))"
    assert elsewhere_caveat("sound (its checks pass)", rows, "vm", "best_randread_iops", 122_622.19).startswith("sound")
    # R-loop 2.4: a sequential read headline below random reads of a large block says so (bare: 64 KiB, 1,251 MB/s)
    assert elsewhere_caveat("sound (its checks pass)", rows, "vm", "seq_read_MBps", 1_003.70) == \
        "with caveats (other runs measured more: up to 1,251 MB/s as a whole-run mean (fio-block-size: randread 64 KiB))"
    assert elsewhere_caveat("sound (its checks pass)", rows, "vm", "seq_read_MBps", 1_300.0).startswith("sound")
    # S19-bare 10 (session 17): a write-saturation run's whole-run MB/s counts for the sequential write
    assert elsewhere_caveat("with caveats (x warned)", rows, "vm", "seq_write_MBps", 1_412.78) == (
        "with caveats (x warned; other runs measured more: up to 1,508 MB/s as a whole-run mean (fio-write-saturation: "
        "write 128 KiB))")
    assert elsewhere_caveat("with caveats (x warned)", rows, "vm", "seq_write_MBps", 1_600.0) == "with caveats (x warned)"
    assert elsewhere_caveat("not valid (x)", rows, "vm", "best_randwrite_iops", 1.0) == "not valid (x)"
