"""PTS and steady-state text against the eighth review's real tables (issue 38, workstream C fourth read;
tests/data/review-s8c, SOURCES.md there).

- S8-bare M-2: 'min: 7,770 IOPS at T1 Q1' stated as a DIRTH role though pts_repeat failed on that point (its
  rerun gave 5,690 IOPS, 0.732x): a role rests on one run only where that run repeats.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from memstor.report import text

DATA = Path(__file__).parent / "data" / "review-s8c"


def _bare() -> tuple[pd.DataFrame, pd.DataFrame]:
    return pd.read_csv(DATA / "dirth-bare.csv"), pd.read_csv(DATA / "validity-pts-bare.csv")


def test_no_dirth_role_on_a_point_whose_rerun_failed():
    dirth, valid = _bare()
    cell = text.pts_summary(None, None, None, dirth, valid)["result"].iloc[0]
    assert "min:" not in cell and "7,770" not in cell
    assert "T1 Q1 0.732×" in cell and "no role is stated on a point whose rerun failed" in cell
    roles = text.gated_roles(dirth, valid).set_index(["threads", "qd"])["role"]
    assert roles[(1, 1)] == "" and roles[(4, 4)] == "max IOPS"  # optimal: dirth_optimal failed


def test_a_role_whose_rerun_repeats_stands():
    dirth, valid = _bare()
    valid = valid.copy()
    valid.loc[valid["subject"] == "DIRTH T1 Q1 rerun", "status"] = "pass"
    cell = text.pts_summary(None, None, None, dirth, valid)["result"].iloc[0]
    assert "min: 7,770 IOPS at T1 Q1" in cell and "no role is stated" not in cell


def test_histogram_of_an_unrepeated_role_is_not_drawn():
    dirth, valid = _bare()
    hist = pd.DataFrame({"host": ["vm", "vm"], "role": ["min", "max IOPS"], "threads": [1, 4], "qd": [1, 4],
                         "latency_us": [34.56, 40.0], "count": [1, 1], "share": [0.1, 0.1]})
    assert text.gated_histograms(hist, valid)["role"].tolist() == ["max IOPS"]
