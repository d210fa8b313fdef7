"""The block-size and read/write-mix interpretations (memstor.report.text.workloads) on constructed summaries."""

from __future__ import annotations

import pandas as pd

from memstor.report.text.workloads import block_size_sentences, rw_mix_sentences, workload_paragraphs

H = "dut"


def bs_points(bw=(400.0, 800.0, 1500.0, 1900.0, 2000.0)) -> pd.DataFrame:
    sizes = [4096, 16384, 65536, 262144, 1048576]
    return pd.DataFrame({"host": H, "experiment": "fio-block-size", "rw": "randread", "direction": "read",
                         "bs_bytes": sizes, "iodepth": 32, "numjobs": 1, "bw_MBps": list(bw),
                         "iops": [b * 1e6 / s for b, s in zip(bw, sizes)]})


def mix_points(x_read=90_000.0, x_write=30_000.0, factor=1.0) -> pd.DataFrame:
    rows = []
    for share in (100.0, 70.0, 50.0, 30.0, 0.0):
        f = share / 100
        x = 1 / (f / x_read + (1 - f) / x_write) * (factor if 0 < share < 100 else 1.0)
        rows.append({"host": H, "experiment": "fio-rw-ratio", "rw": "randrw", "direction": "total",
                     "bs_bytes": 4096, "rwmixread": share, "iops": x, "bw_MBps": x * 4096 / 1e6})
    return pd.DataFrame(rows)


def test_block_size_names_both_ends_and_where_the_bandwidth_levels_off():
    s = block_size_sentences(bs_points(), H)[0]
    assert "97,656 IOPS (400 MB/s) at 4 KiB" in s and "1,907 IOPS (2,000 MB/s) at 1 MiB" in s
    assert "first reaches 90 % of its best (2,000 MB/s at 1 MiB) between 64 KiB and 256 KiB (no size measured" in s
    rising = block_size_sentences(bs_points((400.0, 800.0, 1000.0, 1200.0, 2000.0)), H)[0]
    assert "still grew up to the largest block measured (1,200 → 2,000 MB/s from 256 KiB to 1 MiB, +66.7 %" in rising


def test_a_mix_is_held_against_what_its_parts_predict():
    fair = rw_mix_sentences(mix_points(), H)[0]
    assert "70 % reads 56,250 IOPS against 56,250 predicted (+0.0 %)" in fair
    assert "cost what their reads and writes cost apart" in fair
    slow = rw_mix_sentences(mix_points(factor=0.7), H)[0]
    assert "(-30.0 %)" in slow and "a difference between single runs only" in slow  # no spread measured: S20-bare 3
    # S19-bare 6 (session 16): the difference is said as it runs over every measurement of the parts, not 'the furthest'
    assert "the difference is -30.0 %, outside ±10 %" in slow and "every mix within" not in slow
    edge = rw_mix_sentences(mix_points(factor=0.89), H)[0]        # -11.0 %: outside, never "within ±10 %"
    assert "(-11.0 %)" in edge and "outside ±10 %" in edge and "every mix within" not in edge
    inside = rw_mix_sentences(mix_points(factor=0.91), H)[0]      # -9.0 %: inside
    assert "every mix within ±10 %" in inside


def test_nothing_measured_says_so():
    empty = pd.DataFrame(columns=["host", "experiment", "iops", "bw_MBps"])
    assert workload_paragraphs(empty, [H]) == ("No block-size sweep in this data (memstor run fio-block-size).",
                                               "No read/write-mix sweep in this data (memstor run fio-rw-ratio).")
    assert rw_mix_sentences(mix_points().query("rwmixread != 0"), H) == []  # no write-only point: no prediction
