"""The SLO answer from the points whose open loop held (issue 40, acceptance 4; memstor.analysis.load_latency
held_slo, the gate that spares it, the report's cell and sentence) on two real quick runs' curve tables
(tests/data/slo-held/SOURCES.md). A point whose loop did not hold says nothing about the device at its rate,
so the answer is taken from the held points, and it is only a lower bound where a rate between the last held
rate that met the target and the first held one that missed it (or above it) did not hold."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from memstor.analysis import load_latency
from memstor.analysis.validity import gate
from memstor.report.text import openloop as text

DATA = Path(__file__).parent / "data" / "slo-held"


def curves(name: str) -> pd.DataFrame:
    return pd.read_csv(DATA / f"curves-{name}.csv")


def answer(c: pd.DataFrame, rw: str, target: float) -> pd.Series:
    s = load_latency.slo(c, [target])
    return s[s["rw"] == rw].iloc[0]


def test_interpolated_between_two_held_points():
    """quiet6 randread: 10-50 % held (p99 392, 1,913, 2,613 µs), 70 % up did not: p99 <= 1 ms lies between the
    held 10 % and 30 % points, interpolated there as before (no rate between them failed)."""
    r = answer(curves("quiet6"), "randread", 1000.0)
    c = curves("quiet6").query("rw == 'randread'")
    lo, hi = c.iloc[0], c.iloc[1]
    expected = lo["achieved_iops"] + (1000 - lo["lat_p99_us"]) * (hi["achieved_iops"] - lo["achieved_iops"]) / (
        hi["lat_p99_us"] - lo["lat_p99_us"])
    assert r["max_iops"] == pytest.approx(expected) and not r["censored"] and r["censored_by"] == ""
    assert (r["held_points"], r["points"]) == (3, 8)


def test_a_lower_bound_where_the_next_rate_did_not_hold():
    """quiet6 randread, p99 <= 5 ms: every held point meets it (the highest, 50 %: 2,613 µs) and the next rate
    (70 %) did not hold: the answer is the held 50 % point's achieved IOPS, censored 'the next rate did not
    hold' — not the old all-points interpolation toward the 70 % point (5,194 µs), whose loop was late."""
    c = curves("quiet6")
    r = answer(c, "randread", 5000.0)
    top = c[(c["rw"] == "randread") & (c["utilisation_pct"] == 50)].iloc[0]
    assert r["max_iops"] == pytest.approx(top["achieved_iops"]) and r["censored"]
    assert r["censored_by"] == "the next rate did not hold"
    # the other side: every point held and met it -> 'every point met it' (the flags all true)
    every = c[c["rw"] == "randread"].head(3)
    r = answer(every, "randread", 5000.0)
    assert r["censored"] and r["censored_by"] == "every held point met it" and r["held_points"] == r["points"] == 3


def test_no_answer_when_the_lowest_held_rate_misses_it():
    """bare randwrite held at 30 % only (p99 3,809 µs): p99 <= 1 ms has no answer from the held points (the
    10 % point met it at 674 µs, but its loop did not hold); none at all when nothing held."""
    r = answer(curves("bare"), "randwrite", 1000.0)
    assert pd.isna(r["max_iops"]) and not r["censored"] and r["held_points"] == 1
    none = curves("bare").assign(open_loop=False)
    r = answer(none, "randwrite", 5000.0)
    assert pd.isna(r["max_iops"]) and r["held_points"] == 0


def test_without_flags_the_answer_is_all_points_and_not_checked():
    """fio < 3.31 records no arrival times (open_loop empty): held_points empty, the answer of all points as
    before (the gate withholds it: open_loop_held unchecked)."""
    c = curves("quiet6").assign(open_loop=None)
    r = answer(c, "randread", 5000.0)
    assert pd.isna(r["held_points"]) and r["points"] == 8 and r["max_iops"] > 0


def _validity(check: str, status: str) -> pd.DataFrame:
    return pd.DataFrame([{"host": "vm", "check": check, "subject": "randread", "status": status,
                          "evidence": "3 of 8 offered-rate points kept open-loop arrivals (share 37.5 %)"}])


def test_the_gate_spares_the_held_answer_but_not_other_failures():
    """open_loop_held failed (3 of 8 held): the answer from the held points stands, the models do not; an
    overshoot (open_loop_rate failed) or an unchecked loop still withholds it (both ways)."""
    s = load_latency.slo(curves("quiet6"), [5000.0])
    models = pd.DataFrame([{"host": "vm", "rw": "randread", "mm1_p99_us": 1.0}])
    slo, mod = gate.gate_open_loop(s, models, _validity("open_loop_held", "fail"))
    read = slo[slo["rw"] == "randread"].iloc[0]
    assert read["valid"] and read["max_iops"] > 0 and not mod.iloc[0]["valid"]
    for check, status in (("open_loop_rate", "fail"), ("open_loop_held", "unchecked")):
        slo, _ = gate.gate_open_loop(s, models, _validity(check, status))
        read = slo[slo["rw"] == "randread"].iloc[0]
        assert not read["valid"] and read["max_iops"] is None, check


def test_the_report_says_from_which_points_and_why_a_bound():
    """The SLO cell names the held rates and why the answer is a bound; the sentence says the next rate's loop
    did not hold."""
    s = load_latency.slo(curves("quiet6"), [1000.0, 5000.0])
    shown = text.slo_display(s[s["rw"] == "randread"]).set_index("p99 target (µs)")["max IOPS meeting it"]
    assert shown.iloc[0].endswith("(from the 3 of 8 rates that held)") and not shown.iloc[0].startswith("≥")
    assert shown.iloc[1].startswith("≥ ") and "censored: the next rate did not hold; from the 3 of 8 rates" in \
        shown.iloc[1]
    g = curves("quiet6").query("rw == 'randread'")
    said = " ".join(text._slo_sentences(s[s["rw"] == "randread"], g, float(g["x_max_iops"].iloc[0])))
    assert "the next rate's loop did not hold, so the limit is not measured (a lower bound)" in said


def test_the_interpolated_answer_says_held_rate_and_page_one_names_the_answered_workloads():
    """The interpolated sentence says 'last held rate' when some rates did not hold ('last rate' when all
    held); page 1 says the section answers from the held rates for the workloads whose answer the gate let
    stand, and gives none when the gate withheld it (both ways)."""
    from memstor.report.text import first_page as fp

    s = load_latency.slo(curves("quiet6"), [1000.0])
    g = curves("quiet6").query("rw == 'randread'")
    said = " ".join(text._slo_sentences(s[s["rw"] == "randread"], g, float(g["x_max_iops"].iloc[0])))
    assert "interpolated between the last held rate that met it" in said
    every = load_latency.slo(g.head(3), [1000.0])
    assert "between the last rate that met it" in " ".join(text._slo_sentences(every, g.head(3), 1e5))
    slo, _ = gate.gate_open_loop(s, None, _validity("open_loop_held", "fail"))
    assert fp._answered_from_held(slo, "vm") == ["randread", "randwrite"]
    slo, _ = gate.gate_open_loop(s, None, _validity("open_loop_rate", "fail"))  # randread withheld
    assert fp._answered_from_held(slo, "vm") == ["randwrite"]


def test_figure_17s_caption_names_rings_only_where_it_draws_them():
    """Third read R-1cpu M9: the caption named rings ('a point whose own checks passed in a workload whose loop
    did not hold') where none were drawn, beside hollow overloaded markers. Rings: held points of a workload the
    gate withheld; none where no point held or where the workload is kept (both ways)."""
    from memstor.report.plots import openloop as olfigs

    c = curves("quiet6")
    assert olfigs.rings_drawn(c.assign(valid=False))            # randread u10-u50 held, the workload withheld
    assert not olfigs.rings_drawn(c.assign(valid=False, open_loop=False))   # nothing held: nothing ringed
    assert not olfigs.rings_drawn(c.assign(valid=True))         # kept: its held points are the line itself


def test_a_held_meet_above_the_first_held_miss_does_not_hide_a_rate_that_did_not_hold():
    """Fresh clone of 543374c, randwrite: held at 10 % (p99 456 µs), 50 % (2,941 µs), 95 % and 98 % (539, 312
    µs); 30 % did not hold. p99 <= 1 ms: the rule stops at the first held miss (50 %), so the held 95-98 % meets
    above it must not count as 'the last meet' — the 30 % rate between 10 % and 50 % did not hold, so the answer is
    the 10 % point's 4,933 IOPS as a lower bound (it printed 9,271, interpolated across the unheld rate). With the
    held 95-98 % meets above the miss the p99 is not monotone in the load: no answer at all."""
    c = curves("fresh543")
    r = answer(c, "randwrite", 1000.0)
    # third read S7-bare B-1: the held u95/u98 meet 1 ms again above the held miss at u50: no single answer
    assert pd.isna(r["max_iops"]) and r["censored_by"] == "not monotone"
    assert text.slo_display(load_latency.slo(c[c["rw"] == "randwrite"], [1000.0]))["max IOPS meeting it"].iloc[0] \
        == "none: the held rates meet it, miss it and meet it again (not monotone)"
    cut = c[~((c["rw"] == "randwrite") & (c["utilisation_pct"] >= 95))]   # without them: the lower bound
    r = answer(cut, "randwrite", 1000.0)
    assert r["censored"] and r["censored_by"] == "the next rate did not hold"
    assert r["max_iops"] == pytest.approx(4932.5)
    r = answer(c, "randwrite", 5000.0)   # every held point meets 5 ms: the highest held rate, a bound
    assert r["censored"] and r["censored_by"] == "every held point met it" and r["max_iops"] == pytest.approx(48528.5)


def test_unloaded_latency_lowest_rate_and_the_closed_tail_read_held_points_only():
    """Third read S7-bare: M-2 'Unloaded mean latency 584 µs (at u30)' from a randwrite rate whose loop did not hold
    (the held u50 gives 190 µs at the moderate rate); M-5 the 'lowest rate' cited was u10, which did not hold for
    randread (u30 did); M-3 coordinated omission was offered at held points whose p99 lies BELOW the closed loop's
    p99 (u95/u98: 539 / 312 µs): only a p99 above the closed p99 and within its p99.99 is said so (both sides)."""
    from memstor.report.text.openloop_causes import closed_tail

    c = curves("fresh543")
    u = load_latency.unloaded(c).set_index("rw")
    # not the unheld u30's 584 µs; and the lightest held load, u10 (136 µs), not u50's 190 (fifth read S9-bare M-4)
    assert u.loc["randwrite", "util_used"] == 0.1 and round(u.loc["randwrite", "lat_unloaded_us"]) == 136
    assert load_latency.lowest_held(c[c["rw"] == "randread"])["utilisation_pct"] == 30
    assert load_latency.lowest_held(c[c["rw"] == "randread"].assign(open_loop=None))["utilisation_pct"] == 10
    fast = c[(c["rw"] == "randwrite") & (c["utilisation_pct"] >= 95)]
    assert "coordinated omission" not in closed_tail(fast) and "beyond" not in closed_tail(fast)
    slow = fast.assign(lat_p99_us=fast["closed_p99_us"] * 1.5, closed_p99_99_us=fast["closed_p99_us"] * 3)
    assert "coordinated omission" in closed_tail(slow)
