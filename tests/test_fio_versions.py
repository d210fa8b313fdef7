"""What differs between fio releases, on documents shaped as each writes them: the PTS I/O window from
``job_start`` (fio 3.36+) or from the end time stamp (3.28, 3.33)."""

from __future__ import annotations

import json
from pathlib import Path

from memstor.experiments._pts import io_window
from memstor.measure.fleet import FioServer, client_argv
from memstor.measure.fleet_hosts import Host


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


def test_a_fleet_client_runs_the_fio_memstor_was_pointed_at(tmp_path, monkeypatch):
    """MEMSTOR_FIO (a fio of the matrix) reaches the fleet's client too, not only the local runs."""
    fio = tmp_path / "fio-3.28"
    fio.write_text("#!/bin/sh\n")
    fio.chmod(0o755)
    srv = FioServer(host=Host(ssh="u@h", label="h", target="/t"), remote_port=8765, pid=1, pidfile="/p",
                    local_address="127.0.0.1", local_port=40000)
    monkeypatch.setenv("MEMSTOR_FIO", str(fio))
    assert client_argv([srv], [Path("job.fio")])[0] == str(fio)
    monkeypatch.delenv("MEMSTOR_FIO")
    assert Path(client_argv([srv], [Path("job.fio")])[0]).name == "fio"
