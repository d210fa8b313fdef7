"""X_max of the open loop from every closed-loop table of the device (memstor.experiments._closed_x_max), on the
real tables of a quick run whose randwrite queue-depth sweep the same job beat by 1.74x in fio-block-size."""
from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from memstor.analysis.load_latency import x_max_source_text
from memstor.experiments._closed_x_max import x_max_closed

DATA = Path(__file__).parent / "data" / "closed-x-max"
MIB256 = 256 * 2**20


@pytest.fixture
def data(tmp_path) -> Path:
    """A copy of the real tables (tests may edit it)."""
    shutil.copytree(DATA / "processed", tmp_path / "processed")
    return tmp_path


def test_a_block_size_run_above_the_sweep_is_x_max_and_both_are_named(data):
    x, said = x_max_closed(data, "vm", "randwrite", "4k", MIB256)
    assert x == pytest.approx(86_256.871564)
    assert said == ("fio-block-size table: QD32x1, 86,257 IOPS, above the fio-queue-depth table: best of 5 runs "
                    "(QD64x1): 49,642 IOPS")
    # the report's wording of the source still counts the queue-depth sweep's runs
    counts = {"randwrite": (5, 5)}
    assert "best of 5 configurations, 1 run each (QD64x1)" in x_max_source_text(said, counts, "randwrite")


def test_the_sweep_stays_x_max_where_it_measured_the_most(data):
    assert x_max_closed(data, "vm", "randread", "4k", MIB256) == (
        pytest.approx(118_597.201399), "fio-queue-depth table: best of 5 runs (QD64x1)")


def test_another_file_size_failed_runs_and_other_block_sizes_do_not_count(data):
    bs_path = data / "processed" / "vm" / "fio-block-size.csv"
    runs = pd.read_csv(bs_path)
    runs.loc[runs["rw"] == "randwrite", "file_size_bytes"] = 2**30  # a 1 GiB file: another configuration
    runs.to_csv(bs_path, index=False)
    assert x_max_closed(data, "vm", "randwrite", "4k", MIB256)[0] == pytest.approx(49_641.679160)
    assert x_max_closed(data, "vm", "randwrite", "4k", 2**30)[0] == pytest.approx(86_256.871564)
    runs["file_size_bytes"] = MIB256
    runs.loc[(runs["rw"] == "randwrite") & (runs["bs_bytes"] == 4096), "status"] = "failed"
    runs.to_csv(bs_path, index=False)
    assert x_max_closed(data, "vm", "randwrite", "4k", MIB256)[0] == pytest.approx(49_641.679160)
    assert x_max_closed(data, "vm", "randwrite", "64k", MIB256) == (
        pytest.approx(23_326.336832), "fio-block-size table: QD32x1, 23,326 IOPS")  # no 64 KiB sweep point


def test_no_table_says_why_for_each(tmp_path_factory, data):
    x, why = x_max_closed(tmp_path_factory.mktemp("empty"), "vm", "randread", "4k")
    assert x is None and why == "no fio-queue-depth table for vm; no fio-block-size table for vm"
    x, why = x_max_closed(data, "vm", "randread", "8k", MIB256)
    assert x is None and "no successful randread 8k point in fio-queue-depth.csv" in why
