"""A flagged Little's-law point is named with its block size and experiment, and its causes are offered as
possibilities (issue 38, S7-bare C-7, R-1cpu C6): 'flagged: write QD32×4: ... (CPU-bound, shared CPU) or a too-short
run' was the 128 KiB fio-write-saturation write, whose fio used 9.5 % usr + 9.8 % sys of one CPU; its 4 jobs, each
bounded by size, end at different times. Rows: the fresh bare run's fio-write-saturation points
(tests/data/review-s7/littles_law-wsat-bare.csv, SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from memstor.analysis.storage import _reason
from memstor.report.text.queueing import little_sentences

ROWS = Path(__file__).parent / "data" / "review-s7" / "littles_law-wsat-bare.csv"


def test_a_flagged_point_names_its_block_size_and_experiment_and_offers_causes_not_one():
    little = pd.read_csv(ROWS)
    said = little_sentences(little)[0]
    assert "flagged: 128 KiB write QD32×4 in fio-write-saturation: IOPS x mean latency is -24.9% below" in said
    low = float(little["residual_pct"].min())
    four = _reason({"iodepth": 32, "numjobs": 4, "iodepth_reached": True}, low, "io_uring", True)
    assert "CPU-bound, shared CPU" not in four
    assert ("(a busy load generator), its 4 jobs ending at different times (fewer in flight once the first ends), or "
            "a too-short run; which, these columns do not show") in four
    one = _reason({"iodepth": 32, "numjobs": 1, "iodepth_reached": True}, low, "io_uring", True)
    assert "jobs ending" not in one and "(a busy load generator), or a too-short run" in one


def test_a_residual_above_the_depth_offers_its_cause_as_a_possibility():
    """R-loop 6.6: '+6.6 % ...: fio's IOPS and its mean latency are not on one time base ..., not the device' was
    asserted, not shown: now a possibility ('would give this; these columns do not show it')."""
    said = _reason({"iodepth": 32, "numjobs": 1, "iodepth_reached": True}, 6.6, "io_uring", True)
    assert "gaps only lower it" in said and "would give this; these columns do not show it" in said
    assert "not the device" not in said
