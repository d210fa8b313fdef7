"""A sequential point whose fio jobs all ran over the same blocks is not called sequential (issue 38, S7-bare
M-12): fio-write-saturation's '128 KiB sequential write' ran --rw=write --numjobs=4 --size=1g with no
offset_increment, four jobs writing the same 1 GiB from offset 0 (the fresh-clone run: 2,436 MB/s in 1.76 s).
jobs_disjoint fails on such a point's meta and the write-saturation table and text say what ran, with no figure;
a job memstor builds now (each its own region) passes. Real metas: the bare VM's and the loop device's quick runs
(tests/data/report-steady/SOURCES.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from memstor.analysis.job_regions import regions_table
from memstor.analysis.validity.regions import region_rows
from memstor.measure.fio import FioJob, fio_command
from memstor.report import text
from report_helpers import synthesise_copy

DATA = Path(__file__).parent / "data" / "report-steady"
WRITE = "write-bs128k-qd32x4-x4-max60-io_uring-d1-f1g-rep1"


def _metas(host: str) -> list[dict]:
    entries = json.loads((DATA / "processed" / host / "fio-write-saturation-metas.json").read_text())
    return [dict(e["meta"], host=host, point=e["point"]) for e in entries]


@pytest.fixture(scope="module")
def S(tmp_path_factory):
    return synthesise_copy(tmp_path_factory, DATA, "regions")


def test_the_old_sequential_write_overlapped_and_the_random_one_is_not_judged():
    rows = region_rows(_metas("vm"))
    assert len(rows) == 1                       # randwrite draws from the whole file: no region to judge
    r = rows[0]
    assert (r["check"], r["status"], r["value"], r["low"], r["high"]) == ("jobs_disjoint", "fail", 4.0, 1.0, 1.0)
    assert r["subject"] == f"fio-write-saturation write 128k, 4 jobs ({WRITE})"
    assert r["evidence"] == ("4 jobs of rw=write over the same 1 GiB from offset 0 (fio's size=1g each, no offset_increment): "
                             "the jobs overlapped")
    assert r["consequence"].startswith("not a sequential workload")


@pytest.mark.fio  # fio_command asks the installed fio which options it takes
@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (make env installs it)")
def test_a_job_memstor_builds_now_gives_each_job_its_own_region(tmp_path):
    job = FioJob(name="w", rw="write", bs="128k", iodepth=32, numjobs=4, size="1g", filename=str(tmp_path / "f"))
    meta = {"host": "vm", "experiment": "fio-write-saturation", "point": "w", "command": fio_command(job, tmp_path / "o")}
    table = regions_table([meta])
    assert list(table["overlap"]) == [False] and list(table["offset_increment_bytes"]) == [256 << 20]
    (r,) = region_rows([meta])
    assert (r["status"], r["value"]) == ("pass", 1.0)
    assert r["evidence"] == "4 jobs of rw=write, each through its own 256 MiB region (offset_increment 256 MiB)"
    one = FioJob(name="o", rw="write", bs="128k", numjobs=1, size="1g", filename=str(tmp_path / "f"))
    assert region_rows([dict(meta, command=fio_command(one, tmp_path / "o"))]) == []   # one job: one stream


def test_the_report_calls_the_overlapped_run_no_sequential_write_and_gives_no_figure(S):
    """bare VM (2,627 MB/s whole-run) and loop device: the table row and the sentence say what ran, no MB/s."""
    for host in ("vm", "vm2-loop-fio328"):
        v = S.validity[(S.validity["host"] == host) & (S.validity["check"] == "jobs_disjoint")]
        assert list(v["status"]) == ["fail"]
        w = S.wsat[(S.wsat["host"] == host) & (S.wsat["point"] == WRITE)].iloc[0]
        assert w["workload"] == "128 KiB write, jobs overlapped (not sequential)"
        assert w["run_MBps"] is None and not w["valid"]
        said = [s for s in text.wsat_sentences(S.wsat[S.wsat["host"] == host], S.wsat_cliffs) if "128 KiB" in s]
        assert len(said) == 1 and "sequential write" not in said[0] and "MB/s" not in said[0]
        assert "jobs_disjoint failed: 4 jobs of rw=write over the same 1 GiB from offset 0" in said[0]
    assert not S.validity["subject"].str.contains("128 KiB sequential write").any()   # page 1 names it so too
    random = S.wsat[S.wsat["workload"] == "4 KiB random write"]
    assert len(random) == 2 and random["run_MBps"].notna().all()      # the random runs keep their figure


def test_the_notebook_names_the_overlapped_run_as_the_report_does():
    """Workstream S item 2: notebook 55 called wsat_table without metas, so the bare VM's overlapped run (4 jobs
    over one 1 GiB from offset 0) read '128 KiB sequential write'; through dataset.experiment_metas (what the
    notebook now passes) it reads as the report's table; the random run keeps its name; no metas file: nothing."""
    from memstor.analysis import wsat
    from memstor.analysis.dataset import experiment_metas

    folder = DATA / "processed" / "vm"
    runs = pd.read_csv(folder / "fio-write-saturation.csv").assign(host="vm")
    seconds = pd.read_csv(folder / "fio-write-saturation-seconds.csv").assign(host="vm")
    cliffs = wsat.wsat_cliffs(runs, seconds, None)
    metas = experiment_metas(DATA, ["vm", "no-such-device"], "fio-write-saturation")
    assert {m["host"] for m in metas} == {"vm"} and WRITE in {m["point"] for m in metas}
    named = dict(zip(wsat.wsat_table(runs, seconds, cliffs, metas)["point"],
                     wsat.wsat_table(runs, seconds, cliffs, metas)["workload"]))
    assert named[WRITE] == "128 KiB write, jobs overlapped (not sequential)"
    assert sorted(set(named.values())) == ["128 KiB write, jobs overlapped (not sequential)", "4 KiB random write"]
    before = wsat.wsat_table(runs, seconds, cliffs)                    # what the notebook computed
    assert dict(zip(before["point"], before["workload"]))[WRITE] == "128 KiB sequential write"


def test_jobs_that_move_less_than_their_size_say_which_part_they_rewrote():
    """R-def p5 (fifth read): the defects run's 128 KiB write (fio-3.42, build/defects-342, its meta's argv) ran
    --size=64m --io_size=16777216 --numjobs=4: each job rewrote the first 16 MiB, not 'the same 64 MiB'."""
    argv = ["fio", "--name=write-bs128k-qd32x4-x1-max60-io_uring-d1-f64m-rep1", "--rw=write", "--bs=128k",
            "--iodepth=32", "--numjobs=4", "--ioengine=io_uring", "--direct=1", "--size=64m", "--io_size=16777216"]
    meta = {"host": "xeon-defects", "experiment": "fio-write-saturation", "point": "w", "command": argv}
    (r,) = region_rows([meta])
    assert r["status"] == "fail" and r["evidence"] == (
        "4 jobs of rw=write over the first 16 MiB of the same 64 MiB from offset 0 (fio's size=64m each, "
        "io_size=16777216, no offset_increment): the jobs overlapped")
    (whole,) = region_rows([{**meta, "command": argv[:-1]}])          # without io_size: the whole span
    assert whole["evidence"].startswith("4 jobs of rw=write over the same 64 MiB from offset 0 (fio's size=64m each, no")
