"""A configuration whose config_agreement failed is given with both its numbers in §2 (issue 38, fourth read R-1cpu
M3). The rows are the reviewed runs' own (tests/data/review-s5, review-s8; SOURCES.md there)."""

from __future__ import annotations

import pandas as pd

from memstor.report.text.workloads import block_size_sentences
from test_knee_spread import DATA, table


def test_a_configuration_whose_agreement_failed_is_given_with_both_numbers():
    """R-1cpu M3: 'Random writes (QD32x1): 47,150 IOPS (193 MB/s) at 4 KiB' alone, though config_agreement failed
    (76,512 in fio-rw-ratio, 1.62x); s8-bare likewise (55,947 against 25,591, 2.19x). The other side: the reads,
    whose pairs agree within 1.5x (1.16x, 1.35x), say nothing more."""
    reads, writes = block_size_sentences(table("summary", "1cpu"), "vm-1cpu")
    assert ("47,150 IOPS (193 MB/s) at 4 KiB (here; 76,512 IOPS in fio-rw-ratio, 1.62× apart: config_agreement "
            "failed, neither alone is this configuration's value)") in writes
    assert "config_agreement" not in reads
    bare = block_size_sentences(pd.read_csv(DATA / "review-s8" / "summary-bare.csv"), "vm")
    assert "(here; 25,591 IOPS in fio-rw-ratio, 2.19× apart" in bare[1] and "config_agreement" not in bare[0]
