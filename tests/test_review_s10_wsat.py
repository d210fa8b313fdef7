"""Sixth independent read, bare quick run (baf2a79): write saturation's 'one level ... from start to end' beside
halves that differ (tests/data/review-s10/wsat-bare.csv)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from memstor.report.text.wsat import no_cliff_text

ROW = pd.read_csv(Path(__file__).parent / "data" / "review-s10" / "wsat-bare.csv").fillna({"caveat": ""}).iloc[0]


def test_halves_apart_within_the_band_are_not_one_level_from_start_to_end():
    """S10-bare 4: halves 128 and 139 MB/s, Mann-Whitney p = 0.04, were printed as 'one level ... from start to
    end'; the check's ±10 % band holds them one level, and the sentence now says the second half ran 8.2 % faster."""
    said = no_cliff_text(ROW)
    assert "the second half 8.2 % faster (the first 7.5 % slower), within the ±10 % wsat_one_level takes as one " \
        "level" in said, said
    # S12-loop 7: the first half faster, 292 against 274 MB/s, was '6.3 % faster' (the second's share of the first)
    first = no_cliff_text(pd.concat([ROW.drop(["first_half_MBps", "second_half_MBps"]),
                                     pd.Series({"first_half_MBps": 292.26, "second_half_MBps": 273.83})]))
    assert "the first half 6.7 % faster (the second 6.3 % slower)" in first, first
    assert "from start to end" not in said and "within its band" in said


def test_halves_not_apart_keep_from_start_to_end():
    """The other side: p >= 0.05 (here 0.5) is one level from start to end, no faster half said."""
    said = no_cliff_text(pd.concat([ROW.drop("level_p"), pd.Series({"level_p": 0.5})]))
    assert "from start to end" in said and "faster" not in said, said
