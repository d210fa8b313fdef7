"""A queue-depth sweep too short to fit (the JupyterLab test's data set: randread at N = 1 and 4 only) that the
validity gate also marks not valid: CI, 2026-11-28, the synthesis notebook stopped on KeyError 'R_min_meas_us'
because knee_fits wrote an unfitted row without the fit's columns and knee_sentences read them under not_valid."""
from __future__ import annotations

import math

import pandas as pd

from memstor.analysis import queueing
from memstor.analysis import synthesis as syn
from memstor.analysis.validity.gate import WAY_OUT
from memstor.report.text import queueing as qt

#: The lab data set's sweep as `memstor run fio-queue-depth` measured it here (2 sweep points; the QD2x2 spec
#: point is not in the sweep).
SWEEP = pd.DataFrame({"host": "labtest", "rw": "randread", "iodepth": [1, 4, 2], "numjobs": [1, 1, 2],
                      "outstanding_io": [1, 4, 4], "iops": [10934.1, 19407.2, 20432.5],
                      "lat_mean_us": [90.16, 204.67, 193.29], "in_sweep": [True, True, False]})


def test_an_unfitted_sweep_has_every_knee_column_and_says_why():
    knees, fits = syn.knee_fits(SWEEP)
    assert list(knees.columns) == list(queueing.KNEE_COLUMNS) and fits == {}
    row = knees.iloc[0]
    assert row["points"] == 2 and row["N_range"] == "1-4" and "need >= 3 points" in row["note"]
    assert math.isnan(row["R_min_meas_us"]) and math.isnan(row["N_star_fit"]) and math.isnan(row["N_star_bound"])
    fitted, _ = syn.knee_fits(pd.concat([SWEEP, SWEEP.iloc[[1]].assign(outstanding_io=16, iops=21000.0,
                                                                      lat_mean_us=760.0)]))
    assert list(fitted.columns) == list(queueing.KNEE_COLUMNS) and fitted["R_min_meas_us"].iloc[0] == 90.16


def test_an_unfitted_sweep_the_gate_doubts_gets_no_fit_and_the_gates_reason():
    knees, _ = syn.knee_fits(SWEEP)
    doubted = knees.assign(not_valid=f"not valid: knee_sweep_agrees failed; {WAY_OUT['knee_sweep_agrees']}")
    (said,) = qt.knee_sentences(doubted)
    assert said.startswith("**labtest, 4K randread**: no fit — need >= 3 points")
    assert WAY_OUT["knee_sweep_agrees"] in said and "nan" not in said
    (plain,) = qt.knee_sentences(knees.assign(not_valid=""))
    assert plain.startswith("**labtest, 4K randread**: no fit — need >= 3 points") and "nan" not in plain
    shown = qt.knee_display(doubted)
    assert shown["N* bound (I/Os)"].iloc[0] == "–" and shown["points"].iloc[0] == 2
