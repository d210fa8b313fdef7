"""Issue 38, fifth read, workstream A (memory): checks over the fifth reviews' real memory rows.
Data: tests/data/review-s9a (SOURCES.md)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from memstor.analysis.validity.fits import gate_failed_points, holdout_rows

DATA = Path(__file__).parent / "data" / "review-s9a"


def _fits(mem: pd.DataFrame) -> dict:
    """{(host, curve): a fitted CurveFit stand-in with the row's held-out error}."""
    return {(r["host"], r["curve"]): SimpleNamespace(model=SimpleNamespace(fitted=True), holdout_points=r["holdout_points"],
                                                     holdout_error_pct=r["holdout_error_pct"], holdout_note="")
            for _, r in mem.iterrows()}


def test_a_held_out_check_over_failed_points_is_not_checked_both_sides():
    """R-def 26: validity.csv counted curve_holdout 'pass' (read-only 2.82 %, 1:1 0.43 %) on curves whose 6 of 6
    points failed the memory gate (bare: 0.75 % and 5.88 % on 5 of 6). Now such a curve's row is not checked, with
    why; a curve whose points mostly passed (the same rows with 3 of 6 failed) keeps its pass."""
    mem = pd.read_csv(DATA / "memory_fit.csv")
    rows = holdout_rows(_fits(mem), "memory", lambda k: (k[0], str(k[1])), gate_failed_points(mem))
    assert len(rows) == 6 and {r["status"] for r in rows} == {"unchecked"}
    ro = next(r for r in rows if r["host"] == "xeon-defects" and r["subject"].startswith("read-only"))
    assert ro["evidence"] == ("not checked: 6 of the curve's 6 points failed the memory gate: a model fitted to them "
                              "predicts nothing checked")
    half = mem.assign(gate_failed_points=3)
    rows = holdout_rows(_fits(half), "memory", lambda k: (k[0], str(k[1])), gate_failed_points(half))
    got = {(r["host"], r["subject"].split(",")[0]): r["status"] for r in rows}
    assert got[("xeon-defects", "read-only")] == "pass" and got[("vm", "1:1")] == "pass"
    assert got[("xeon-defects", "write-only-nt")] == "unchecked"  # no held-out error: unchecked as before
    assert holdout_rows(_fits(mem), "memory", lambda k: (k[0], str(k[1])))[0]["status"] == "pass"  # no gate given
