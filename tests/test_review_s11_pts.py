"""Seventh independent read of the 1-CPU run (review cpu17), the PTS items: fixtures in tests/data/review-s11/pts/
(SOURCES.md says where each came from)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from memstor.analysis import pts_recovery as pr
from memstor.report.text import pts as pts_text

DATA = Path(__file__).parent / "data" / "review-s11" / "pts"


def _xsr() -> pd.DataFrame:
    return pr.xsr_table(pd.read_csv(DATA / "fio-pts-xsr-seconds.csv"), pd.read_csv(DATA / "fio-pts-xsr.csv"))


def test_xsr_rnd_phase_scattering_from_its_first_second_is_not_said_still_moving():
    # item 7: RND 8KiB ran 401, 316, 372, 345, 375, 370, 351, 389, 310 MB/s; its last 3 s (351, 389, 310) fail
    # the 20 % rule (22.4 %), but the phase has no trend: the report said "still moving when the phase ended"
    out = _xsr()
    why = out["to_level_note"].iloc[0]
    assert pd.isna(out["to_level_MBps"].iloc[0]) and pd.isna(out["settle_s"].iloc[0])
    assert why.startswith("no level: its last 3 s ran 351, 389, 310 MB/s, a data excursion of 22.4 % of their mean 350")
    assert "still moving" not in why
    assert "scattering 310-401 MB/s from its first second, with no trend (least-squares slope -2.68 MB/s per s " \
           "over its 9 s, 95 % interval -12.5 to 7.14)" in why
    assert out["from_level_note"].iloc[1] == why
    shown = pts_text._xsr_one(out.iloc[0])
    assert "scattering 310-401 MB/s from its first second, with no trend" in shown and shown.endswith(
        "; no settle time)") and "still moving" not in shown


def test_xsr_phase_with_a_trend_is_still_moving():
    # the loop run's collapse (its RND phase ended 883, 606, 237 MB/s): a slope whose interval excludes 0
    falling = [1000, 990, 960, 980, 940, 900, 883, 606, 237]
    level, why = pr.phase_level(falling)
    assert level is None and "still moving when the phase ended (least-squares slope" in why
    assert "scattering" not in why
    assert pr.phase_trend(falling).startswith("still moving")
    assert pr.phase_trend([100, 110, 120, 130, 140, 150]).startswith("still moving")  # a straight line


def test_xsr_phase_too_short_for_a_trend_is_not_tested():
    level, why = pr.phase_level([900, 880, 883, 606, 237])  # its last 2 s: 606, 237
    assert level is None and why.endswith("whether it was still moving is not tested (5 s, fewer than 6)")
    assert pr.phase_trend([1.0, float("nan"), 2.0, 3.0, 4.0, 5.0]).endswith("(5 s, fewer than 6)")
    assert pr.phase_trend([]).endswith("(0 s, fewer than 6)")
