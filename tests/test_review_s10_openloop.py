"""Sixth independent read, bare quick run (baf2a79, 2026-11-28): the open-loop sentences that its own tables
contradicted, each from the reviewed rows (tests/data/review-s10)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from memstor.report.text import openloop as text

DATA = Path(__file__).parent / "data" / "review-s10"


@pytest.fixture(scope="module")
def tables() -> dict:
    return {k: pd.read_csv(DATA / f"{k}-bare.csv") for k in ("load_latency", "slo", "load_latency_models")}


def _paragraph(t: dict, rw: str) -> str:
    ps = text.load_sentences(t["load_latency"], t["slo"], t["load_latency_models"], pd.DataFrame())
    (p,) = [p for p in ps if p.startswith(f"**vm, {rw}")]
    return p


def test_a_target_missed_names_the_lowest_rate_that_held_not_the_lowest_offered(tables):
    """S10-bare 2: 'missed even at the lowest offered rate (u90 ...)' where u90 was the only rate of eight that
    held and u10 the lowest offered; now the lowest that held, and what the seven others' p99 were."""
    p = _paragraph(tables, "randwrite")
    assert ("p99 ≤ 1,000 µs is missed even at the lowest rate that held (u90: 27,913 IOPS, p99 3,744 µs; the only "
            "one; the 7 that did not hold had p99 4,735–27,722 µs)") in p, p
    assert "lowest offered rate" not in p


def test_every_rate_held_keeps_the_lowest_offered_rate(tables):
    """The other side: where every rate held, the lowest that held is the lowest offered."""
    g = tables["load_latency"]
    g = g[g["rw"] == "randwrite"].assign(open_loop=True)
    noun, aside = text._lowest_words(g)
    assert (noun, aside) == ("offered rate", "")
    noun, _ = text._lowest_words(g.assign(open_loop=float("nan")))  # not recorded: not judged
    assert noun == "offered rate"


def test_lower_rates_are_not_advised_where_the_lowest_already_filled_the_queue(tables):
    """S10-bare 10: 'lower offered rates, or a deeper request queue' where the lowest rate (u10, 5,038 IOPS)
    already had 365 I/Os in flight against the queue of 256. randwrite's u10 did not fill it but was late too (S11-bare
    5: the advice kept there was contradicted by u10 and u30 late on the submitter's sleeps)."""
    read, write = _paragraph(tables, "randread"), _paragraph(tables, "randwrite")
    # S12-loop9 2: u10, u30, u80 and u90 also paused beyond their bounds: a quieter machine joins the ways out
    assert ("a deeper request queue on the disk (its nr_requests); or a quieter machine (its own pauses exceeded the "
            "lag bound); lower offered rates are not shown to help: the lowest, u10 (5,038 IOPS), was late too: up to "
            "365 I/Os in flight against the queue of 256 (14.7 in service on average), its submissions blocked 50.5 % "
            "of the run") in read, read  # S16-loop 1: the peak, the mean and the blocked share
    assert ("lower offered rates are not shown to help: the lowest, u10 (3,123 IOPS), was late too (p99 lag 8,110 µs "
            "against its bound of 1,517 µs)") in write, write
    assert "lower offered rates, or" not in write


def test_the_closed_point_beside_a_held_rate_is_named_the_one_job_sweeps(tables):
    """S10-bare 11: 'at the sweep's depth nearest its throughput' while the QD32x4 point of the same sweep (30,439
    IOPS, 1.09x u90's rate) was nearer: only the one-job sweep is searched (a spec point is another curve), and the
    words now say so."""
    p = _paragraph(tables, "randwrite")
    assert "at the one-job sweep's depth nearest its throughput" in p and "QD64 8,225 µs at 31,235" in p, p
    assert "else at the lightest depth whose IOPS reach it" in p  # S12-1cpu 11: the rule's second half
