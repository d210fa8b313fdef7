"""PTS and steady-state text against the eighth review's real tables (issue 38, workstream C fourth read;
tests/data/review-s8c, SOURCES.md there).

- S8-bare M-2: 'min: 7,770 IOPS at T1 Q1' stated as a DIRTH role though pts_repeat failed on that point (its
  rerun gave 5,690 IOPS, 0.732x): a role rests on one run only where that run repeats.
- R-1cpu M2: the steady headline's 'the excursions in §3 bound its spread' (rounds of one run bound no spread
  between runs).
- R-1cpu M7 / R-loop X.1: the CSV tables and the spec figure stated what the PDF withholds.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from memstor.report import csv_gate, text  # noqa: E402
from memstor.report.plots import synthesis as figs  # noqa: E402
from memstor.report.text import headline_table as ht

DATA = Path(__file__).parent / "data" / "review-s8c"


def _bare() -> tuple[pd.DataFrame, pd.DataFrame]:
    return pd.read_csv(DATA / "dirth-bare.csv"), pd.read_csv(DATA / "validity-pts-bare.csv")


def test_no_dirth_role_on_a_point_whose_rerun_failed():
    dirth, valid = _bare()
    cell = text.pts_summary(None, None, None, dirth, valid)["result"].iloc[0]
    assert "min:" not in cell and "7,770" not in cell
    assert "T1 Q1 0.732×" in cell and "no role is stated on a point whose rerun failed" in cell
    roles = text.gated_roles(dirth, valid).set_index(["threads", "qd"])["role"]
    # optimal: dirth_optimal failed; max IOPS: 45,070 is 1.30x the next, within the 0.732x rerun (fifth read R-def p6)
    assert roles[(1, 1)] == "" and roles[(4, 4)] == ""


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


def test_the_steady_headline_names_no_bound_on_its_spread_between_runs():
    """R-1cpu M2 (fourth read): the steady-state headline (78,019 IOPS) said 'the excursions in §3 bound its
    spread', but they cover five 2-s rounds of one run, while the same workload elsewhere ran 0.72-1.23x it and the
    checks measured a 1.62x spread between runs: the rounds bound nothing between runs. Other values keep theirs."""
    h = pd.read_csv(Path(__file__).parent / "data" / "review-s5" / "headline-1cpu.csv")
    r = h[h["key"] == "ss_randwrite_iops"].iloc[0].copy()
    said = ht._interval(r)
    assert "78,019" in said and "bound its spread" not in said and "bound no spread between runs" in said
    q = h[h["key"] == "qd1_randread_lat_us"].iloc[0].copy()
    assert "bound no spread" not in ht._interval(q)


# ------------------------------------- R-1cpu M7, R-loop X.1: the CSV tables and the figure withhold what the PDF does

def _one_cpu(name: str) -> pd.DataFrame:
    return pd.read_csv(DATA / f"{name}-1cpu.csv")


def test_headline_csv_names_the_steady_figure_as_page_one_does():
    """headline.csv called the 78,019 IOPS 'Steady-state 4K random write' where page 1 says 'steady state not
    shown' (steady_round_length warns); a value page 1 withholds is empty with its reason; the others stay."""
    h, v = _one_cpu("headline"), _one_cpu("validity")
    out = csv_gate.gate_headline(h, v).set_index("key")
    assert out.loc["ss_randwrite_iops", "metric"] == "4K random write after preconditioning, steady state not shown"
    assert out.loc["ss_randwrite_iops", "value"] == pytest.approx(78018.52)  # stated (as not shown), not withheld
    assert out.loc["qd1_randread_lat_us", "metric"] == "4K QD1 random read mean latency"
    failed = v.assign(status=[("fail" if c == "steady_round_length" else s) for c, s in zip(v["check"], v["status"])])
    gone = csv_gate.gate_headline(h, failed).set_index("key").loc["ss_randwrite_iops"]
    assert pd.isna(gone["value"]) and "steady_round_length" in gone["not_valid"]


def test_spec_csv_gives_no_ratio_where_not_comparable_and_the_figure_draws_none():
    spec = _one_cpu("spec_comparison")
    assert spec["ratio"].notna().all() and not spec["comparable"].any()  # 0.600 ... as the reviewer read them
    out = csv_gate.gate_spec(spec)
    assert out["ratio"].isna().all() and out["not_valid"].str.startswith("ratio not given: not comparable").all()
    assert figs.spec_figure(spec) is None
    same = csv_gate.gate_spec(spec.assign(comparable=True))
    assert same["ratio"].notna().all() and (same["not_valid"] == "").all()
    fig = figs.spec_figure(spec.assign(comparable=True))
    assert fig is not None
    plt.close(fig)


def test_knee_csv_withholds_a_fit_below_the_bound_and_an_unshown_plateau():
    """knee.csv said valid=True, saturated=True where the PDF says 'not a finding: below the bound' (randread N*
    interval top 12.4 under the bound 13.4; randwrite 10.005 under 10.04) and 'whether the sweep levels off at
    X_fit is not shown' (knee_plateau warns)."""
    k, v = _one_cpu("knee"), _one_cpu("validity")
    assert k["valid"].all() and k["saturated"].all()
    out = csv_gate.gate_knee(k, v)
    assert not out["valid"].any() and out["X_max_fit_iops"].isna().all() and out["saturated"].isna().all()
    assert out["not_valid"].str.startswith("not a finding: the measured bound").all()
    above = k.assign(N_star_bound=5.0, X_max_fit_se_iops=50_000.0)  # and a band that reaches X_best (fifth read)
    passed = v.assign(status=[("pass" if c == "knee_plateau" else s) for c, s in zip(v["check"], v["status"])])
    kept = csv_gate.gate_knee(above, passed)
    assert kept["valid"].all() and kept["X_max_fit_iops"].notna().all() and kept["saturated"].all()
    assert csv_gate.gate_knee(above, v)["saturated"].isna().all()  # knee_plateau warns: not shown
