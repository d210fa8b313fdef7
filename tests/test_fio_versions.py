"""What differs between fio releases, on documents shaped as each writes them: the PTS I/O window from
``job_start`` (fio 3.36+) or from the end time stamp (3.28, 3.33)."""

from __future__ import annotations

import json

from memstor.experiments._pts import io_window


def _doc(jobs: list[dict], timestamp_ms: int = 1_000_010_000) -> str:
    return json.dumps({"fio version": "fio-3.x", "timestamp": timestamp_ms // 1000, "timestamp_ms": timestamp_ms,
                       "jobs": jobs})


def _job(runtime_ms: int, **extra) -> dict:
    return {"jobname": "j", "groupid": 0, "error": 0, "write": {"runtime": runtime_ms, "iops": 1.0}, **extra}


def test_window_from_job_start_where_fio_gives_it():
    # 3.36+: the I/O starts at job_start; the document's time stamp comes later (teardown, output)
    text = _doc([_job(2000, job_start=1_000_007_000), _job(1990, job_start=1_000_007_004)])
    assert io_window(text) == (1_000_007_000.0, 1_000_009_000.0)


def test_window_from_the_end_stamp_without_job_start():
    # 3.28 and 3.33: no job_start; the I/O ends at timestamp_ms
    assert io_window(_doc([_job(2000)])) == (1_000_008_000.0, 1_000_010_000.0)


def test_a_job_without_start_among_others_falls_back_to_the_end_stamp():
    text = _doc([_job(2000, job_start=1_000_007_000), _job(2000)])
    assert io_window(text) == (1_000_008_000.0, 1_000_010_000.0)


def test_no_runtime_or_stamp_is_no_window():
    assert io_window(json.dumps({"fio version": "fio-3.x", "jobs": [_job(2000)]})) is None
    assert io_window("not json") is None
