"""The fast paths of `memstor parse` (issue 39) give what the rules they stand in for give: the row pre-check
never passes an impossible cell, the remembered job layouts never mix two option sets, the percentiles
are fio's, and one decoding per file yields the rows and the json+ bins of the real fixtures."""

from __future__ import annotations

import copy
import itertools
import json
import math

import pytest

from memstor.core.schema import FIO_COLUMNS
from memstor.parse import files
from memstor.parse.fio import _bad_value, _plainly_valid, load_fio_json, parse_fio, read_fio
from memstor.parse.fio_bins import bin_rows, text_bin_rows
from memstor.parse.fio_spec import spec_from_options

# Cells of every kind a damaged file can put into a row: numbers at and past each bound, texts, None, bools.
_CELLS = (None, "", "x", True, False, 0, 1, 2, 100, 101, -1, (1 << 63) - 1, 1 << 63, -(1 << 63), 0.0, -0.0, 0.5,
          100.0, 100.5, -0.5, 1e308, math.inf, -math.inf, math.nan, [1], {"a": 1})


@pytest.mark.parametrize("column", ["iops", "rwmixread", "direct", "cpu_usr_pct", "error", "jobname"])
def test_plainly_valid_rows_hold_no_impossible_cell(column):
    """Both sides: every cell value in every column kind, alone in an otherwise clean row. The pre-check may
    send a clean row to the rule (conservative), never pass a row the rule would empty."""
    base = dict.fromkeys(FIO_COLUMNS) | {"iops": 10.0, "rwmixread": 70, "direct": 1, "error": 0, "jobname": "j"}
    assert _plainly_valid(base) and not any(_bad_value(c, v) for c, v in base.items())
    passed = rejected = 0
    for value in _CELLS:
        row = base | {column: value}
        if _plainly_valid(row):
            passed += 1
            assert not any(_bad_value(c, v) for c, v in row.items()), (column, value)
        else:
            rejected += 1
    assert passed and rejected  # the pre-check decides both ways in every column


def _doc(**options) -> dict:
    """A small fio 3.x JSON document with one job of the given job options and a read direction."""
    read = {"io_bytes": 4096 * 10, "bw_bytes": 40960, "iops": 10.0, "runtime": 1000, "total_ios": 10,
            "clat_ns": {"min": 1000, "max": 9000, "mean": 5000.0, "stddev": 10.0, "N": 10,
                        "percentile": {"50.000000": 5120, "99.000000": 8960, "99.900000": 8960}},
            "lat_ns": {"min": 1100, "max": 9100, "mean": 5100.0, "stddev": 11.0, "N": 10}}
    job = {"jobname": "j", "groupid": 0, "error": 0, "job options": options, "read": read,
           "write": {"io_bytes": 0, "runtime": 0, "total_ios": 0}, "usr_cpu": 1.0, "sys_cpu": 2.0,
           "job_runtime": 1000}
    return {"fio version": "fio-3.33", "jobs": [job]}


def test_remembered_job_layouts_follow_the_options():
    """The same options twice give the same rows; other options (as text, as fio writes them, or as other
    types that compare equal: 1 and True) give their own, never the remembered ones."""
    first = parse_fio(json.dumps(_doc(rw="randread", bs="8k", iodepth="4", direct="1")), "a").rows
    again = parse_fio(json.dumps(_doc(rw="randread", bs="8k", iodepth="4", direct="1")), "a").rows
    assert first == again and first[0]["bs_bytes"] == 8192 and first[0]["iodepth"] == 4
    other = parse_fio(json.dumps(_doc(rw="randread", bs="16k", iodepth="4", direct="1")), "a").rows
    assert other[0]["bs_bytes"] == 16384
    as_int = parse_fio(json.dumps(_doc(rw="randread", direct=1)), "b").rows
    as_bool = parse_fio(json.dumps(_doc(rw="randread", direct=True)), "b").rows
    uncached = spec_from_options({"rw": "randread", "direct": True}, "fio-3.33", True)["direct"]
    assert as_int[0]["direct"] == 1 and as_bool[0]["direct"] == uncached != 1  # JSON true is read as before
    mixed = parse_fio(json.dumps(_doc(rw="randrw", rwmixread="70")), "c").rows
    assert [(r["direction"], r["rwmixread"]) for r in mixed] == [("read", 70), ("write", 70)]
    assert mixed[0]["cpu_usr_pct"] == mixed[1]["cpu_usr_pct"] == pytest.approx(1.0)  # one per job


def test_percentiles_later_key_wins_and_damage_is_still_found():
    doc = _doc(rw="randread")
    pct = doc["jobs"][0]["read"]["clat_ns"]["percentile"]
    pct["99.9"] = 7000  # a second key of the 99.9th percentile, after fio's own: it counts
    pct["nonsense"] = 1  # a key that is no percentile: ignored
    row = parse_fio(json.dumps(doc), "p").rows[0]
    assert row["clat_p50_us"] == 5.12 and row["clat_p99_us"] == 8.96 and row["clat_p99_9_us"] == 7.0
    assert row["clat_p90_us"] is None  # not printed by fio: empty, never a guess
    damaged = copy.deepcopy(doc)
    damaged["jobs"][0]["read"]["clat_ns"]["percentile"]["5.000000"] = None  # a percentile fio never writes
    result = parse_fio(json.dumps(damaged), "d")
    assert result.rows == [] and "job 0 ('j') is damaged" in result.errors[0]
    text_value = copy.deepcopy(doc)
    text_value["jobs"][0]["read"]["clat_ns"]["percentile"]["50.000000"] = "n/a"  # no number: left out
    assert parse_fio(json.dumps(text_value), "t").rows[0]["clat_p50_us"] is None


def test_one_decoding_gives_the_rows_and_bins_of_every_real_fio_fixture(real):
    """read_fio's document is the one load_fio_json reads, and its bins are text_bin_rows' (json+ fixtures
    have some); parse_fio's rows are read_fio's."""
    checked = with_bins = 0
    for path in sorted(itertools.chain(real.rglob("*.json"), real.rglob("*.txt"))):
        text = files.read_text(path)
        if files.detect(text) != "fio":
            continue
        result, doc = read_fio(text, str(path))
        assert result.rows == parse_fio(text, str(path)).rows
        if doc is not None:
            assert doc == load_fio_json(text)
            assert bin_rows(doc, "s") == text_bin_rows(text, "s")
            with_bins += bool(bin_rows(doc, "s"))
        checked += 1
    assert checked > 100 and with_bins > 0
