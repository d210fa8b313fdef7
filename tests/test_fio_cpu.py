"""fio's own CPU use in the tidy rows (``cpu_usr_pct``, ``cpu_sys_pct``: percent of one CPU summed over the
job's threads), from the real outputs in tests/data/real (SOURCES.md) and from the real fio of this machine."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from memstor.analysis.dataset import load_dataset
from memstor.core.errors import MemstorError
from memstor.core.schema import FIO_COLUMNS, FIO_CPU_COLUMNS
from memstor.measure.fio_engine import fio_binary
from memstor.measure.shape import usable_cpus
from memstor.parse.fio import parse_fio
from memstor.parse.fio_json import cpu_pct, job_cpu_pct
from memstor.parse.fio_terse import terse_cpu, terse_record

MMN4 = "MMN0001__Repo-for-Advanced-Computer-Systems/Project4/result & figures/results_baseline"
AIALRA = "AIALRA-0__ECSE-4320-Advanced-Computer-Systems/Project3 SSD/results/bs_sweep"
DUNCA = "duncachunk1__ECSE-4320/HW3/fioResults"
ZMAN = "Zman350x__AdvancedComputerSystemsProjects/OctoberProject3/fio"
PKB = "GoogleCloudPlatform__PerfKitBenchmarker/tests/data/fio"
BERNEP = "bernep__Advanced-Computer-Systems/Project 3/results"


def _text(real: Path, rel: str) -> str:
    return (real / rel).read_text(encoding="utf-8", errors="replace")


def _rows(real: Path, rel: str) -> list[dict]:
    res = parse_fio(_text(real, rel), rel)
    assert res.errors == [], res.errors
    return res.rows


def test_columns_are_appended_to_the_schema():
    assert FIO_COLUMNS[-2:] == list(FIO_CPU_COLUMNS) == ["cpu_usr_pct", "cpu_sys_pct"]
    assert FIO_COLUMNS.index("fio_version") == len(FIO_COLUMNS) - 3  # every older column kept its place


def test_json_one_thread_is_fios_number(real):
    """fio-3.36, numjobs=1: usr_cpu 7.106667, sys_cpu 24.783333, job_runtime 30000 ms, read runtime 30001 ms."""
    (row,) = _rows(real, f"{AIALRA}/randread_bs4k_1.json")
    assert row["cpu_usr_pct"] == pytest.approx(7.106667 * 30000 / 30001)
    assert row["cpu_sys_pct"] == pytest.approx(24.783333 * 30000 / 30001)
    assert row["cpu_usr_pct"] == pytest.approx(7.106667, rel=1e-4)  # one thread: fio's own figure


def test_json_group_reporting_is_summed_over_threads(real):
    """fio-3.36 io_uring, numjobs=4 with group_reporting: one entry, usr 22.8575 / sys 77.175 (the per-thread
    average: they add up to 100 %), job_runtime 120000 ms over a 30001 ms run: four CPUs fully busy."""
    (row,) = _rows(real, f"{MMN4}/async_uring_c4.json")
    assert row["numjobs"] == 4
    assert row["cpu_usr_pct"] == pytest.approx(22.8575 * 120000 / 30001)
    assert row["cpu_sys_pct"] == pytest.approx(77.175 * 120000 / 30001)
    assert row["cpu_usr_pct"] + row["cpu_sys_pct"] == pytest.approx(400, abs=0.5)
    (row16,) = _rows(real, f"{MMN4}/sync_psync_c16.json")  # 16 psync threads: 17.303333 + 57.406875 each
    assert row16["cpu_usr_pct"] == pytest.approx(17.303333 * 480000 / 30001)
    assert row16["cpu_usr_pct"] + row16["cpu_sys_pct"] == pytest.approx(1195.3, abs=0.5)


def test_json_without_job_runtime(real):
    """fio 2.x JSON has no job_runtime: one thread (numjobs 1) keeps fio's figure; a group of two
    (PKB's fio-2.17, numjobs=2, group_reporting) or unknown numjobs (fio-2.1.4 without options) stays empty."""
    for row in _rows(real, f"{PKB}/hist/pkb-7fb0c9d8-0_fio.json"):
        assert row["numjobs"] == 2 and row["cpu_usr_pct"] is None and row["cpu_sys_pct"] is None
    for row in _rows(real, f"{PKB}/fio-parser-sample-result.json"):
        assert row["cpu_usr_pct"] is None
    job = {"usr_cpu": 0.57, "sys_cpu": 2.44, "read": {"runtime": 2788}}
    assert job_cpu_pct(job, 1) == {"cpu_usr_pct": 0.57, "cpu_sys_pct": 2.44}
    assert job_cpu_pct(job, 2) == {"cpu_usr_pct": None, "cpu_sys_pct": None}


def test_json_damaged_cpu_loses_the_cell_not_the_job():
    doc = {"fio version": "fio-3.36", "jobs": [{
        "jobname": "j", "groupid": 0, "error": 0, "job_runtime": 1000, "usr_cpu": "lots", "sys_cpu": -3,
        "job options": {"rw": "randread", "numjobs": "1"},
        "read": {"iops": 10.0, "bw_bytes": 40960, "runtime": 1000, "total_ios": 10,
                 "lat_ns": {"min": 1, "max": 3, "mean": 2.0, "stddev": 0.5, "N": 10}}}]}
    res = parse_fio(json.dumps(doc), "d.json")
    assert res.errors == [] and len(res.rows) == 1
    assert res.rows[0]["iops"] == 10.0 and res.rows[0]["cpu_usr_pct"] is None and res.rows[0]["cpu_sys_pct"] is None
    assert [cpu_pct(v) for v in ("64.717641%", 3, True, None, float("nan"), "1e999")] == [64.717641, 3.0, None, None,
                                                                                        None, None]


def test_error_job_has_no_cpu():
    doc = {"fio version": "fio-3.36", "jobs": [{"jobname": "j", "groupid": 0, "error": 5, "job_runtime": 1000,
                                                "usr_cpu": 1.0, "sys_cpu": 2.0, "job options": {"rw": "read"},
                                                "read": {"runtime": 1000}}]}
    (row,) = parse_fio(json.dumps(doc), "e.json").rows
    assert row["error"] == 5 and row["cpu_usr_pct"] is None


def test_text_jobs_n_is_summed(real):
    """fio-3.16 on Windows, group_reporting over jobs=4: ``cpu : usr=26.52%, sys=73.38%`` (the per-thread
    average) -> 106.08 % and 293.52 %, the same on the read and the write row of a mixed job."""
    rows = _rows(real, f"{DUNCA}/readOutput128.txt")
    assert rows[0]["numjobs"] == 4
    assert rows[0]["cpu_usr_pct"] == pytest.approx(26.52 * 4) and rows[0]["cpu_sys_pct"] == pytest.approx(73.38 * 4)
    mixed = _rows(real, f"{DUNCA}/mixedOutput128.txt")
    read, write = mixed[0], mixed[1]
    assert (read["direction"], write["direction"]) == ("read", "write")
    assert read["cpu_usr_pct"] == write["cpu_usr_pct"] == pytest.approx(106.08)
    (one,) = _rows(real, f"{BERNEP}/fio_read_write_128.txt")  # fio-3.28, jobs=1: usr=1.96%, sys=58.22%
    assert (one["cpu_usr_pct"], one["cpu_sys_pct"]) == (1.96, 58.22)


def test_terse_twin_refines_and_terse_alone_stays_empty(real):
    """fio-3.36 ``--output-format=normal,terse``: the text says usr=3.15%, sys=8.60%; its terse twin
    ``3.155000%;8.600000%``. Alone, a terse line cannot say whether it is one thread or a group."""
    text = _text(real, f"{ZMAN}/rand4k_qd1_result.txt")
    row = parse_fio(text, "z.txt").rows[0]
    assert (row["cpu_usr_pct"], row["cpu_sys_pct"]) == (3.155, 8.6)
    terse = "\n".join(ln for ln in text.splitlines() if ln.startswith("3;"))
    rec = terse_record(terse.splitlines()[0], None, None)
    assert rec is not None and rec["cpu"] == (3.155, 8.6)
    only = parse_fio(terse, "terse.txt")
    assert only.rows and only.rows[0]["iops"] is not None  # the rows are there, their CPU is not
    assert all(r["cpu_usr_pct"] is None and r["cpu_sys_pct"] is None for r in only.rows)


def test_terse_cpu_position_per_layout():
    """The CPU fields follow 3 direction blocks in v2/v4/v5 (fio-3.33) and 2 in v3; 41 fields a block, 47 in v5."""
    def line(head: int, blocks: int, size: int) -> list[str]:
        block = ["0"] * (size - 3) + ["100.000000%", "5.0", "1.0"]
        return ["x"] * head + block * blocks + ["12.500000%", "0.250000%", "77", "0", "9", "100.0%"]

    assert terse_cpu(line(4, 3, 41), 4, 41) == (12.5, 0.25)
    assert terse_cpu(line(5, 2, 41), 5, 41) == (12.5, 0.25)
    assert terse_cpu(line(5, 3, 47), 5, 47) == (12.5, 0.25)
    assert terse_cpu(line(5, 1, 47), 5, 47) == (12.5, 0.25)  # unified_rw_reporting: one block
    assert terse_cpu(line(5, 2, 41)[:-6], 5, 41) is None


def test_tables_processed_before_the_columns_still_load(tmp_path):
    """An imported fio.csv written before these columns existed loads beside a new one; old rows read empty."""
    old_cols = FIO_COLUMNS[:-2]
    base = {c: None for c in FIO_COLUMNS} | {"source": "a.json", "jobname": "j", "rw": "randread",
                                             "direction": "read", "bs_bytes": 4096, "iodepth": 1, "numjobs": 1,
                                             "ioengine": "psync", "direct": 1, "iops": 100.0, "error": 0}
    for host, cols, cpu in (("old", old_cols, None), ("new", FIO_COLUMNS, 42.0)):
        folder = tmp_path / "processed" / host
        folder.mkdir(parents=True)
        row = base | {"cpu_usr_pct": cpu, "cpu_sys_pct": cpu}
        pd.DataFrame([{c: row[c] for c in cols}], columns=cols).to_csv(folder / "fio.csv", index=False)
    ds = load_dataset(tmp_path)
    by_host = ds.fio.set_index("host")
    assert pd.isna(by_host.loc["old", "cpu_usr_pct"]) and by_host.loc["new", "cpu_usr_pct"] == 42.0
    assert set(FIO_CPU_COLUMNS) <= set(ds.fio.columns)


def _fio(tmp_path: Path, *args: str) -> str:
    cmd = [fio_binary(), "--name=cpu", "--ioengine=null", "--size=256m", "--rw=randread", "--bs=4k", "--runtime=1",
           "--time_based", "--numjobs=2", *args]
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert res.returncode == 0, res.stderr
    return res.stdout


@pytest.mark.fio
def test_real_fio_numjobs_and_group_reporting(tmp_path):
    """The real fio here (ioengine=null keeps its threads on the CPU): without group_reporting one row per
    thread with fio's figure; with it one row whose CPU is the per-thread figure times the threads; the sum
    never exceeds the CPUs this process may keep busy (affinity mask within the cgroup quota)."""
    try:
        fio_binary()  # $MEMSTOR_FIO or fio on PATH: the fio memstor runs
    except MemstorError as err:
        pytest.skip(str(err))
    cpus = usable_cpus()
    doc = _fio(tmp_path, "--output-format=json")
    jobs = json.loads(doc)["jobs"]
    rows = parse_fio(doc, "nogr.json").rows
    assert len(rows) == len(jobs) == 2
    for job, row in zip(jobs, rows):
        assert job["job_runtime"] == pytest.approx(job["read"]["runtime"], abs=10)
        assert row["cpu_usr_pct"] == pytest.approx(job["usr_cpu"], rel=0.01, abs=0.01)
    doc = _fio(tmp_path, "--output-format=json", "--group_reporting")
    (job,) = json.loads(doc)["jobs"]
    (row,) = parse_fio(doc, "gr.json").rows
    threads = job["job_runtime"] / job["read"]["runtime"]
    assert threads == pytest.approx(2, abs=0.05)
    assert row["cpu_usr_pct"] == pytest.approx(job["usr_cpu"] * threads)
    assert row["cpu_usr_pct"] + row["cpu_sys_pct"] <= 100 * cpus * 1.05
    text = _fio(tmp_path, "--output-format=normal,terse", "--group_reporting")
    (trow,) = parse_fio(text, "gr.txt").rows
    terse = next(ln for ln in text.splitlines() if ln[:2] == "3;")
    usr, _sys = terse_record(terse, None, None)["cpu"]
    assert trow["numjobs"] == 2 and trow["cpu_usr_pct"] == pytest.approx(2 * usr)
