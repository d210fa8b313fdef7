"""The eighteenth independent reads' remaining items (session 18, issue 38): statements a reader found its own report's
tables contradict or mislead on, tested on both sides (the reviewed runs' rows; fixtures in tests/data/review-s16 and
review-s17, SOURCES.md there)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from memstor.report.text import headline_table as ht
from memstor.report.text.headline_trust import OUT_OF_LINE, qd1_caveat

H, LOOP = "vm", "vm-loop0"
HERE = Path(__file__).resolve().parent / "data"
S16, S17 = HERE / "review-s16", HERE / "review-s17"


def _trust(name: str, run: str, folder: Path) -> pd.Series:
    tables = {t: pd.read_csv(folder / f"{t}-{run}.csv") for t in ("headline", "validity", "summary")}
    return ht.headline_evidence(tables["headline"], tables["validity"], tables["summary"]).set_index("quantity")[
        "trust"][name]


def test_a_qd1_headline_its_own_sweep_contradicts_reads_out_of_line_not_with_caveats():
    """S21-loop 3: the loop run's QD1 read, 58.2 µs, slower than the same sweep's QD4 (44.9 µs), read 'with caveats'
    like any other row, and 'over 10 % less' stood for 12.1-28.4 µs elsewhere (2-5×). Its trust word is now 'out of
    line: repeat before quoting' and the gap is given as ratios. The other side: the QD1 write of the same run, below
    its deeper points, keeps 'with caveats'."""
    read = _trust("4K QD1 random read mean latency (µs)", "loop16", S17)
    assert read.startswith(f"{OUT_OF_LINE} (the same sweep's QD4x1 measured a lower mean, 44.9 µs: this QD1 run is "
                           "out of line; "), read
    assert "lower means: 12.1-28.4 µs (fio-pts-dirth" in read and "2.05-4.81×" in read, read
    assert "over 10 %" not in read
    write = _trust("4K QD1 random write mean latency (µs)", "loop16", S17)
    assert not write.startswith(OUT_OF_LINE) and "out of line" not in write, write


def test_a_qd1_headline_is_not_compared_with_a_pts_run_whose_preconditioning_failed():
    """S21-bare 5: the bare run's QD1 write (98.9 µs) was set beside CBW's T1Q1 writes, 78.7 µs, while CBW's
    preconditioning failed pts_steady_state (slope excursion 22.4 %) and page 6 stated no CBW result. CBW's runs are
    now left out, and said to be. The other sides: with CBW's preconditioning passing, its run is compared again;
    without a validity table nothing is left out."""
    runs = pd.read_csv(S16 / "summary-bare16.csv")
    checks = pd.read_csv(S16 / "validity-bare16.csv")
    cbw = checks[(checks["check"] == "pts_steady_state") & (checks["subject"] == "CBW preconditioning")]
    assert cbw["status"].tolist() == ["fail"]
    said = qd1_caveat("sound (its checks pass)", runs, H, "qd1_randwrite_lat_us", 98.864, checks)
    assert said == "sound (its checks pass)", said  # no steady run below it: DIRTH's 105-113 µs are above
    moved = runs.assign(lat_mean_us=runs["lat_mean_us"].mask(runs["experiment"] == "fio-pts-dirth", 60.0))
    said = qd1_caveat("sound (its checks pass)", moved, H, "qd1_randwrite_lat_us", 98.864, checks)
    assert "1.65× lower means: 60.0 µs (fio-pts-dirth: the writes of 8 KiB, 65 % reads)" in said, said
    assert said.endswith("; fio-pts-cbw left out: its preconditioning failed pts_steady_state)"), said
    assert "78.7" not in said
    steady = checks.assign(status=checks["status"].mask(checks.index.isin(cbw.index), "pass"))
    again = qd1_caveat("sound (its checks pass)", runs, H, "qd1_randwrite_lat_us", 98.864, steady)
    assert "1.26× lower means: 78.7 µs (fio-pts-cbw: the writes of a mix of block sizes, 40 % reads)" in again, again
    assert "left out" not in again
    assert "78.7 µs (fio-pts-cbw" in qd1_caveat("sound (its checks pass)", runs, H, "qd1_randwrite_lat_us", 98.864)
