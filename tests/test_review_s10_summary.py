"""summary.csv of the sixth independent read (issue 38, S10-bare 8): its ioarrive rows set the response time's mean
(from the intended arrival) beside the service time's percentiles, e.g. randread u70 lat_mean_us 166,908 beside
clat_p99_us 47,841, a mean 3.5x its own row's 'p99'. The response p99 (361,759 µs) now stands beside its mean.
Data: the bare run's processed table (tests/data/review-s10/SOURCES.md)."""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from memstor.analysis.summary import SUMMARY_METRICS, summary_table

DATA = Path(__file__).resolve().parent / "data" / "review-s10"


def rows() -> pd.DataFrame:
    return pd.read_csv(DATA / "fio-load-latency-processed-bare.csv")


def test_an_open_loop_row_has_its_response_p99_beside_its_response_mean():
    s = summary_table(rows()).set_index("config")
    u70 = s.loc[s.index.str.startswith("randread-bs4k-u70-ioarrive")].iloc[0]
    assert round(u70["lat_mean_us"]) == 166_908 and round(u70["lat_p99_us"]) == 361_759
    assert round(u70["clat_p99_us"]) == 47_841                       # the service time's, as before
    assert list(SUMMARY_METRICS[2:4]) == ["lat_mean_us", "lat_p99_us"]
    open_rows = s[s.index.str.contains("-ioarrive-")]
    assert len(open_rows) == 16 and (open_rows["lat_p99_us"] >= open_rows["lat_mean_us"]).all()


def test_a_fio_row_without_total_latency_percentiles_leaves_the_response_p99_empty():
    s = summary_table(rows())
    lt = s[s["config"].str.startswith("lt-")]
    assert len(lt) == 2 and lt["lat_p99_us"].isna().all() and lt["clat_p99_us"].notna().all()


def test_clones_whose_own_p99s_cannot_be_merged_leave_it_empty():
    one = rows().iloc[[3]]
    two = pd.concat([one, one.assign(jobname=one["jobname"])], ignore_index=True)  # one job's two clones
    s = summary_table(two).iloc[0]
    assert s["iops"] == 2 * one["iops"].iloc[0] and math.isnan(s["lat_p99_us"])


def test_a_higher_figure_elsewhere_is_named_as_the_whole_run_mean_it_is():
    """S10-bare 3: 'other runs measured more: up to 1,528 MB/s (fio-pts-xsr: write 1 MiB)' while the report's XSR
    section gave that run's last 3 s as 1,626 MB/s: the figure is fio's whole-run mean, and now says so."""
    from memstor.report.text.headline_trust import elsewhere_caveat

    points = pd.read_csv(DATA / "summary-bare.csv")
    said = elsewhere_caveat("sound (its checks pass)", points, "vm", "seq_write_MBps", 1250.0)
    assert said == ("with caveats (other runs measured more: the same job ran at 1,329-1,528 MB/s (whole-run means) in "
                    "fio-pts-xsr)")  # S12-1cpu 6: the same job is named as such
    assert elsewhere_caveat("sound (its checks pass)", points, "vm", "seq_write_MBps", 1530.0) == "sound (its checks pass)"
