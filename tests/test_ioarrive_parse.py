"""memstor.parse.ioarrive on stored ioarrive JSON (tests/data/ioarrive/, virtual-time runs): tidy rows, bins,
per-second series and checks. Starts no program (fast tier); tests/test_ioarrive.py runs the tool itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstor.analysis.openloop import mgc_response_us
from memstor.core.errors import ParseError
from memstor.parse.ioarrive import (
    BIN_COLUMNS,
    COLUMNS,
    SERIES_COLUMNS,
    bin_rows,
    check_rows,
    parse_ioarrive,
    series_rows,
)

DATA = Path(__file__).resolve().parent / "data" / "ioarrive"


@pytest.fixture(scope="module")
def mm2() -> str:
    return (DATA / "virtual-mm2-rw.json").read_text()


def test_rows_per_direction(mm2):
    rows = parse_ioarrive(mm2, "virtual-mm2-rw.json")
    assert [r["direction"] for r in rows] == ["read", "write"]
    for r in rows:
        assert list(r) == list(COLUMNS)
        assert r["source"] == "virtual-mm2-rw.json" and r["tool"] == "ioarrive" and r["engine"] == "sim"
        assert r["open_loop"] is True and r["checks"] == "ok" and r["reasons"] == ""
        assert r["overloaded"] is False and r["generator_bound"] is False
        assert r["achieved_pct"] == pytest.approx(100, abs=5)
        assert r["lag_mean_us"] == 0 and r["resp_mean_us"] == r["service_mean_us"]
        assert r["resp_p50_us"] <= r["resp_p99_us"] <= r["resp_p99_9_us"]
        assert r["sim_servers"] == 2 and r["sim_service_mean_us"] == 50 and r["sim_service_cs2"] == 1
    read, write = rows
    assert read["offered_iops"] == 10000 and write["offered_iops"] == 5000
    # both directions share one M/M/2 queue: lambda = 15000, S = 50 us, rho = 0.375 (2 s of arrivals: +-5 %)
    assert read["resp_mean_us"] == pytest.approx(mgc_response_us(50.0, 1.0, 2, lambda_iops=15000), rel=0.05)


def test_failed_run_names_its_checks():
    (row,) = parse_ioarrive((DATA / "virtual-overloaded.json").read_bytes())
    assert row["open_loop"] is False and row["overloaded"] is True
    assert row["checks"].split(";") == ["rate", "not_overloaded"]
    assert "overloaded: 100 I/Os outstanding" in row["reasons"] and "achieved 1.0 %" in row["reasons"]


def test_bins_series_and_checks(mm2):
    doc = json.loads(mm2)
    bins = bin_rows(doc, "x")
    assert bins and all(list(b) == list(BIN_COLUMNS) for b in bins)
    resp = [b for b in bins if b["direction"] == "read" and b["kind"] == "response"]
    assert sum(b["count"] for b in resp) == doc["directions"]["read"]["response_ns"]["n"]
    assert all(b["latency_high_ns"] > b["latency_ns"] for b in bins)
    series = series_rows(doc)
    assert [s["t_s"] for s in series if s["direction"] == "read"] == [0, 1]
    assert all(list(s) == list(SERIES_COLUMNS) and s["iops"] > 0 and s["resp_p99_us"] > 0 for s in series)
    checks = check_rows(doc)
    assert all(c["passed"] for c in checks)
    ks = [c for c in checks if c["name"] == "exp_gaps"]
    assert {(c["direction"], c["check_source"]) for c in ks} == {(d, s) for d in ("read", "write")
                                                                 for s in ("intended", "submitted")}
    assert all(0 < c["value"] <= c["high"] for c in ks)


@pytest.mark.parametrize("text", ["not json", "{}", '{"tool": "fio"}', '{"tool": "ioarrive"}'])
def test_not_ioarrive_json_is_a_parse_error(text):
    with pytest.raises(ParseError):
        parse_ioarrive(text)


def test_missing_numbers_are_none(mm2):
    doc = json.loads(mm2)
    doc["directions"]["read"]["lag_ns"] = {"n": 0, "mean": None, "p99": None}
    del doc["directions"]["read"]["achieved_iops"]
    read = parse_ioarrive(doc)[0]
    assert read["lag_mean_us"] is None and read["lag_p99_us"] is None and read["achieved_iops"] is None
