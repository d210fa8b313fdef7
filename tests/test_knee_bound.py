"""The closed-system bound N* >= X_best x R(N_min) only where R(N_min) is the latency without queueing (issue 38,
fourth read R-1cpu M4). The rows are the 1-CPU run's own (tests/data/review-s5 summary, review-s7 knee table)."""

from __future__ import annotations

import pandas as pd

from memstor.analysis.points import with_best_measured
from memstor.report.text import queueing as q
from test_knee_spread import DATA, qd, table


def _knees() -> tuple[pd.DataFrame, pd.DataFrame]:
    s = table("summary", "1cpu")
    k = pd.read_csv(DATA / "review-s7" / "knee-1cpu.csv").drop(columns=["X_best_iops", "X_best_at", "N_star_bound"])
    return with_best_measured(k, qd(s)).set_index("rw"), s


def test_a_bound_whose_smallest_n_is_not_the_lowest_latency_does_not_apply():
    """R-1cpu M4: randwrite 125.5 us at N = 1, 107.6 us at N = 4: 'N* >= 10.04 (79,964 x 125.5 us), above the whole
    interval (its top 10.01), so the fitted ceiling is below what the sweep measured' rested on no bound. Now no
    bound, and the sentence says why. The other side: randread (98.0 us at N = 1, 98.03 at N = 4) keeps its
    N* >= 13.4 (136,314 x 98.0 us)."""
    k, s = _knees()
    assert pd.isna(k.loc["randwrite", "N_star_bound"])
    assert k.loc["randwrite", "bound_void"].startswith("the mean latency fell from 125.5 µs at N = 1 to 107.6 µs at N = 4")
    assert round(float(k.loc["randread", "N_star_bound"]), 1) == 13.4 and k.loc["randread", "bound_void"] == ""
    read, write = q.knee_sentences(k.reset_index(), s)
    assert "does not apply here: the mean latency fell from 125.5 µs at N = 1 to 107.6 µs at N = 4" in write
    assert "N* ≥" not in write and "above the whole interval" not in write
    assert "the closed-system bound gives N* ≥ 13.3" in read
