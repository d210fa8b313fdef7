"""Cliff detection (issue 29, part 2): memstor.analysis.cliffs, memstor.parse.cliff_input and `memstor cliffs`.

Constructed series check the detector (one step, flat noise, spikes, two steps), small hand-written fio logs
and CSVs check the input parsing, `memstor.cli.main` in-process checks the command and its one-line errors,
and one real fio run with a known cliff (plus ten steady runs) checks the whole chain.
"""

from __future__ import annotations

import csv
import json
import math
import subprocess

import numpy as np
import pandas as pd
import pytest

from memstor.analysis.cliffs import CLIFF_COLUMNS, find_cliffs, segment_level
from memstor.cli import main
from memstor.core.errors import MemstorError, ParseError, UsageError
from memstor.measure.fio_engine import fio_binary
from memstor.parse.cliff_input import collect_inputs, read_throughput_series


# ------------------------------------------------------------------------------------------ helpers
def noisy(level: float, n: int, rng: np.random.Generator, cv: float = 0.03, phi: float = 0.3) -> np.ndarray:
    """n seconds at ``level`` with AR(1) noise (lag-1 correlation phi, CV cv): a drive's per-second rate."""
    e = rng.normal(0.0, 1.0, n)
    x = np.empty(n)
    x[0] = e[0]
    for i in range(1, n):
        x[i] = phi * x[i - 1] + math.sqrt(1.0 - phi * phi) * e[i]
    return level * (1.0 + cv * x)


def series(values) -> pd.DataFrame:
    return pd.DataFrame({"t_s": np.arange(len(values)), "bw_MBps": np.asarray(values, dtype=float)})


def within(value, truth, pct=5.0) -> bool:
    return abs(value / truth - 1.0) <= pct / 100.0


def write_log(path, lines) -> None:
    path.write_text("".join(", ".join(str(v) for v in line) + "\n" for line in lines))


# ------------------------------------------------------------------------------- constructed series
@pytest.mark.parametrize("seed", range(6))
def test_a_step_is_one_cliff_at_the_right_place(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(60, 240))
    y = np.concatenate([noisy(1000.0, k, rng), noisy(333.0, 300 - k, rng, cv=0.05)])
    y[int(rng.integers(0, 300))] *= 0.3  # one dropout somewhere, as real logs have
    out = find_cliffs(series(y), "bw_MBps")
    assert list(out.columns) == list(CLIFF_COLUMNS)
    assert len(out) == 1, out
    row = out.iloc[0]
    assert row["kind"] == "cliff" and row["unit"] == "MB/s"
    assert within(row["gb_written"], y[:k].sum() / 1000.0)  # decimal GB written when the rate changed
    assert abs(row["t_s"] - k) <= 1
    assert within(row["level_before"], 1000.0) and within(row["level_after"], 333.0)
    assert row["level_before_lo"] < row["level_before"] < row["level_before_hi"]
    assert row["level_after_lo"] < row["level_after"] < row["level_after_hi"]
    assert within(row["ratio"], 333.0 / 1000.0)


def test_the_level_intervals_hold_the_true_levels():
    """95 % intervals: over 40 steps, at least 85 % of the 80 intervals hold the true level (measured over 200
    steps: 91.5 % with this lag-1 0.3 noise, 95.75 % with white noise; core.batchmeans takes 1 s batches once
    the lag-1 estimate is <= 0.2, so correlated noise makes them somewhat narrow). A level whose batches stay
    correlated at 10 batches gets no interval (issue 38): 1 of the 80 here (measured), the other 79 hold 68."""
    held = given = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        k = int(rng.integers(60, 240))
        y = np.concatenate([noisy(1000.0, k, rng), noisy(333.0, 300 - k, rng, cv=0.05)])
        row = find_cliffs(series(y), "bw_MBps").iloc[0]
        for side, true in (("before", 1000.0), ("after", 333.0)):
            lo, hi = row[f"level_{side}_lo"], row[f"level_{side}_hi"]
            if lo is None:
                assert hi is None and "correlated (lag-1" in row["note"] and "no interval" in row["note"]
                continue
            given += 1
            held += lo <= true <= hi
    assert given >= 0.95 * 80 and held >= 0.85 * given, (held, given)


def test_a_level_from_correlated_seconds_has_no_interval():
    """Issue 38: no interval from batches whose lag-1 stays above 0.2 at 10 batches (a slow drift of 40 s)."""
    y = 1000.0 + 50.0 * np.sin(np.arange(40) / 40.0 * math.pi)
    lv = segment_level(y)
    assert lv.lo is None and lv.hi is None and lv.mean == pytest.approx(float(y.mean()))
    assert lv.note.startswith("correlated (lag-1 ") and lv.note.endswith("at 10 batches of 4 s): no interval")
    white = segment_level(1000.0 + np.random.default_rng(0).normal(0, 10, 40))
    assert white.lo is not None and white.lo < 1000.0 < white.hi and white.note == ""


@pytest.mark.parametrize("seed", range(12))
def test_flat_noise_is_no_cliff(seed):
    rng = np.random.default_rng(1000 + seed)
    n = [30, 120, 600, 1800][seed % 4]
    cv, phi = [(0.02, 0.0), (0.05, 0.3), (0.10, 0.6)][seed % 3]
    out = find_cliffs(series(noisy(800.0, n, rng, cv=cv, phi=phi)), "bw_MBps")
    assert out.empty and list(out.columns) == list(CLIFF_COLUMNS)


@pytest.mark.parametrize("factor", [0.0, 0.1, 3.0])
@pytest.mark.parametrize("seed", range(4))
def test_a_one_second_spike_or_dropout_is_no_cliff(seed, factor):
    rng = np.random.default_rng(2000 + seed)
    y = noisy(500.0, 120, rng)
    y[int(rng.integers(0, 120))] *= factor
    assert find_cliffs(series(y), "bw_MBps").empty


def test_two_steps_are_two_changes():
    rng = np.random.default_rng(7)
    y = np.concatenate([noisy(1000.0, 90, rng), noisy(333.0, 120, rng), noisy(800.0, 90, rng)])
    out = find_cliffs(series(y), "bw_MBps")
    assert list(out["kind"]) == ["cliff", "recovery"]
    assert [abs(t - k) <= 1 for t, k in zip(out["t_s"], (90, 210))] == [True, True]
    assert within(out["gb_written"].iloc[1], y[:210].sum() / 1000.0)
    assert within(out["level_after"].iloc[0], 333.0) and within(out["level_before"].iloc[1], 333.0)


def test_a_short_segment_has_a_level_but_no_interval_and_says_why():
    rng = np.random.default_rng(3)
    y = np.concatenate([noisy(1000.0, 40, rng, cv=0.01), noisy(300.0, 8, rng, cv=0.01)])
    row = find_cliffs(series(y), "bw_MBps").iloc[0]
    assert within(row["level_after"], 300.0)
    assert pd.isna(row["level_after_lo"]) and pd.isna(row["level_after_hi"])
    assert "after: 6 s < 10 batches: no interval" in row["note"]


def test_gb_written_from_iops_needs_the_block_size():
    rng = np.random.default_rng(4)
    y = np.concatenate([noisy(20000.0, 60, rng), noisy(5000.0, 60, rng)])
    df = pd.DataFrame({"t_s": np.arange(120), "iops": y})
    unknown = find_cliffs(df, "iops").iloc[0]
    assert unknown["unit"] == "IOPS" and pd.isna(unknown["gb_written"])  # never guessed
    known = find_cliffs(df, "iops", block_size_bytes=4096).iloc[0]
    assert within(known["gb_written"], y[:60].sum() * 4096 / 1e9)


def test_gb_written_is_unknown_after_a_missing_second():
    rng = np.random.default_rng(5)
    y = np.concatenate([noisy(1000.0, 60, rng), noisy(300.0, 60, rng)])
    df = series(y).drop(index=[20])  # fio lost a window before the change
    assert pd.isna(find_cliffs(df, "bw_MBps").iloc[0]["gb_written"])


def test_bad_arguments_are_one_line_usage_errors():
    df = series(np.ones(30))
    with pytest.raises(UsageError, match="no 'MBps' column"):
        find_cliffs(df, "MBps")
    with pytest.raises(UsageError, match="unit of column 'speed'"):
        find_cliffs(df.rename(columns={"bw_MBps": "speed"}), "speed")
    with pytest.raises(UsageError, match="rel_tol"):
        find_cliffs(df, "bw_MBps", rel_tol=1.5)


# ------------------------------------------------------------------------------------ input parsing
def test_fio_bw_log_values_are_kib_per_s(tmp_path):
    log = tmp_path / "run_bw.1.log"
    write_log(log, [(1000 * (i + 1), 19531, 1, 0, 0) for i in range(12)])  # rate=20000000 B/s as fio logs it
    frame, column, unit = read_throughput_series(log)
    assert (column, unit) == ("bw_MBps", "MB/s")
    assert list(frame["t_s"]) == list(range(12))
    assert np.allclose(frame["bw_MBps"], 19531 * 1024 / 1e6)  # 19.9997 MB/s


def test_per_job_logs_of_one_run_are_summed_per_second(tmp_path):
    write_log(tmp_path / "run_bw.1.log", [(1000 * (i + 1), 10000, 1, 0, 0) for i in range(10)])
    write_log(tmp_path / "run_bw.2.log", [(1000 * (i + 1) + 2, 30000, 1, 0, 0) for i in range(10)])
    write_log(tmp_path / "other_bw.1.log", [(1000 * (i + 1), 5, 1, 0, 0) for i in range(10)])
    inputs, notes, errors = collect_inputs([tmp_path])
    assert errors == [] and "used its fio bw logs (3 files)" in notes[0]
    assert [len(i.paths) for i in inputs] == [1, 2]  # other_bw (alone), run_bw (two jobs): never pooled
    frame, _, _ = read_throughput_series(inputs[1].paths)
    assert np.allclose(frame["bw_MBps"].iloc[1:], 40000 * 1024 / 1e6)
    assert "2 job logs summed" in frame.attrs["note"]
    with pytest.raises(ParseError, match="never pooled"):
        read_throughput_series([tmp_path / "run_bw.1.log", tmp_path / "other_bw.1.log"])


def test_half_second_windows_are_binned_to_seconds(tmp_path):
    log = tmp_path / "half_iops.1.log"
    write_log(log, [(500 * (i + 1), 300, 1, 0, 0) for i in range(8)])  # log_avg_msec=500
    frame, column, unit = read_throughput_series(log)
    assert (column, unit) == ("iops", "IOPS") and "gb_written" not in frame.columns  # bs 0: bytes unknown
    assert list(frame["iops"]) == [300.0] * 4


def test_per_io_iops_log_gives_exact_bytes(tmp_path):
    log = tmp_path / "pio_iops.1.log"
    lines = [(t, 1, 1, 65536, 0) for t in (10, 400, 900, 1200, 2500, 2600)]  # --log_avg_msec=0
    write_log(log, lines)
    frame, column, _ = read_throughput_series(log)
    assert list(frame["iops"]) == [3.0, 1.0, 2.0]
    assert np.allclose(frame["gb_written"], np.array([3, 4, 6]) * 65536 / 1e9)


def test_times_that_go_back_are_refused(tmp_path):
    log = tmp_path / "two_bw.log"  # --per_job_logs=0 with two stonewalled jobs, as fio-3.33 writes it
    write_log(log, [(1125, 58595, 1, 0, 0), (2124, 58618, 1, 0, 0),
                    (1000, 19584, 1, 0, 0), (2001, 19520, 1, 0, 0)])
    with pytest.raises(ParseError, match="per_job_logs") as err:
        read_throughput_series(log)
    assert str(log) in str(err.value) and "\n" not in str(err.value)


def test_windows_longer_than_a_second_are_refused(tmp_path):
    log = tmp_path / "slow_bw.1.log"
    write_log(log, [(2000 * (i + 1), 100, 1, 0, 0) for i in range(6)])
    with pytest.raises(ParseError, match="log_avg_msec=1000"):
        read_throughput_series(log)


@pytest.mark.parametrize("name, unit", [("MBps", "MB/s"), ("bw_MBps", "MB/s"), ("MB_s", "MB/s"),
                                        ("iops", "IOPS")])
def test_a_csv_series(tmp_path, name, unit):
    path = tmp_path / "series.csv"
    pd.DataFrame({"t_s": [2, 0, 1], name: [5.0, 7.0, 6.0]}).to_csv(path, index=False)
    frame, column, got_unit = read_throughput_series(path)
    assert got_unit == unit and column in ("bw_MBps", "iops")
    assert list(frame["t_s"]) == [0, 1, 2] and list(frame[column]) == [7.0, 6.0, 5.0]


def test_a_csv_without_a_throughput_column_names_the_accepted_ones(tmp_path):
    path = tmp_path / "speed.csv"
    path.write_text("t_s,speed\n0,1\n")
    with pytest.raises(ParseError) as err:
        read_throughput_series(path)
    msg = str(err.value)
    assert str(path) in msg and "bw_MBps" in msg and "iops" in msg and "\n" not in msg


# ------------------------------------------------------------------------------------------------ CLI
def one_line(err: str, *needles: str) -> None:
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_cli_writes_source_and_the_cliff_columns(tmp_path, capsys):
    rng = np.random.default_rng(11)
    path = tmp_path / "ssd.csv"
    series(np.concatenate([noisy(1500.0, 50, rng), noisy(400.0, 70, rng)])).to_csv(path, index=False)
    out = tmp_path / "cliffs.csv"
    assert main(["cliffs", str(path), "-o", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert list(rows[0]) == ["source", *CLIFF_COLUMNS]
    assert len(rows) == 1 and rows[0]["source"] == str(path) and rows[0]["kind"] == "cliff"
    assert "1 change(s) in 120 s" in capsys.readouterr().err


def test_cli_no_cliff_is_a_header_only(tmp_path, capsys):
    path = tmp_path / "flat.csv"
    series(noisy(300.0, 60, np.random.default_rng(1))).to_csv(path, index=False)
    assert main(["cliffs", str(path)]) == 0
    assert capsys.readouterr().out == ",".join(["source", *CLIFF_COLUMNS]) + "\n"


def test_cli_errors_are_one_line(tmp_path, capsys):
    missing = tmp_path / "nope_bw.1.log"
    assert main(["cliffs", str(missing)]) == 1
    one_line(capsys.readouterr().err, str(missing), "no such file")

    no_column = tmp_path / "speed.csv"
    no_column.write_text("t_s,speed\n0,1\n1,2\n")
    assert main(["cliffs", str(no_column)]) == 1
    one_line(capsys.readouterr().err, str(no_column), "bw_MBps")

    empty = tmp_path / "empty_bw.1.log"
    empty.write_text("")
    assert main(["cliffs", str(empty), "-o", str(tmp_path / "x.csv")]) == 1
    one_line(capsys.readouterr().err, str(empty), "empty")
    assert not (tmp_path / "x.csv").exists()

    assert main(["cliffs", str(no_column), "--block-size", "0"]) == 2
    one_line(capsys.readouterr().err, "--block-size")


# ---------------------------------------------------------------------------------------- real fio
# What fio-3.33 writes (measured on a 2-vCPU KVM VM, virtio disk, ext4, O_DIRECT, 64 KiB writes; the real run
# below uses the fio memstor runs, $MEMSTOR_FIO or PATH, and must hold on every release, 3.28-3.43):
# - two stonewalled jobs with --per_job_logs=0 share ONE bw log, but each job's times count from ITS OWN
#   start: lines at 1125, 2124, 3124, 4124 ms (job 1, 5 s at 60 MB/s) then 1000, 2001, 3000, 4000 ms (job 2):
#   the time axis does not continue, and the parser refuses such a file (times go back).
# - with --log_unix_epoch=1 the times are absolute ms and do continue, but the first job's LAST window is
#   lost (fio writes a window when a later sample arrives) and the second job's first window ends 1 s
#   after its start: a 2.2 s hole at the phase change (entries at ...907327 then ...909503 ms).
# - a job with time_based runtime=N.1 s logs all N whole-second windows (runtime=3000ms: 2 lines;
#   3050/3100/3200/3500 ms: 3), so only its last 0.1 s is missing from its log.
# Hence the one continuous series here: two jobs that run TOGETHER, one per-job log each (summed per second
# by the parser, as for numjobs): "base" at R/3 for the whole run and "burst" at 2R/3 for the first phase
# only. Their sum is R up to the burst's end, then R/3; fio's JSON gives each job's rate and bytes.
CLIFF_JOB = """
[global]
ioengine=libaio
direct=1
bs=64k
iodepth=2
rw=write
time_based
size=256m
log_avg_msec=1000
write_bw_log={logs}/cliff

[base]
filename={data}/base.dat
rate=20000000
runtime=30100ms

[burst]
filename={data}/burst.dat
rate=40000000
runtime=15100ms
"""
# Ten steady runs of 30 s at 10 MB/s each (one job each, its own log): room for five 5 s segments apiece.
STEADY_JOB = """
[global]
ioengine=libaio
direct=1
bs=64k
iodepth=2
rw=write
time_based
size=64m
log_avg_msec=1000
rate=10000000
runtime=30100ms
numjobs=10
write_bw_log={logs}/steady
directory={data}

[steady]
"""


def _fio(job: str, tmp_path, name: str) -> subprocess.Popen:
    (tmp_path / f"{name}.fio").write_text(job)
    return subprocess.Popen([fio_binary(), f"{name}.fio", "--output-format=json", f"--output={name}.json"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.fio
@pytest.mark.slow
def test_real_fio_cliff_and_steady_runs(tmp_path, capsys):
    try:
        fio_binary()  # $MEMSTOR_FIO or fio on PATH: the fio memstor runs
    except MemstorError as err:
        pytest.skip(str(err))
    cliff_logs, steady_logs, data = tmp_path / "cliff", tmp_path / "steady", tmp_path / "data"
    for d in (cliff_logs, steady_logs, data):
        d.mkdir()
    procs = [_fio(CLIFF_JOB.format(logs=cliff_logs, data=data), tmp_path, "cliff"),
             _fio(STEADY_JOB.format(logs=steady_logs, data=data), tmp_path, "steady")]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    jobs = {j["jobname"]: j["write"] for j in json.loads((tmp_path / "cliff.json").read_text())["jobs"]}
    base, burst = jobs["base"], jobs["burst"]
    fast_MBps = (base["bw_bytes"] + burst["bw_bytes"]) / 1e6  # phase 1, measured by fio (about 60)
    slow_MBps = base["bw_bytes"] / 1e6  # phase 2 (about 20)
    change_gb = (burst["io_bytes"] + base["bw_bytes"] * burst["runtime"] / 1000.0) / 1e9  # when the burst ended

    frame, column, unit = read_throughput_series(sorted(cliff_logs.glob("cliff_bw.*.log")))
    for found in (find_cliffs(frame, column, unit=unit), _cli_rows(cliff_logs, tmp_path, capsys)):
        assert len(found) == 1, found
        row = found.iloc[0]
        assert row["kind"] == "cliff"
        # the detector sees 1-s windows: where the change falls is known to one window's bytes at the fast
        # level (0.06 GB here; a loaded machine put it one window early: 0.847 against 0.906 GB)
        window_gb = fast_MBps * 1.0 / 1e3
        assert abs(float(row["gb_written"]) - change_gb) <= window_gb + 0.02 * change_gb, \
            (row["gb_written"], change_gb, window_gb)
        # each level within 5 % of fio's own figure, or that figure inside the level's interval: under load fio's
        # rate limiter catches up after a stall, and the seconds after the change averaged 21.3 MB/s against 20
        # where the seconds stay correlated no interval is published (the note says why; CI's loaded machine
        # had one): the level is then judged with the widest batches the segment allows (5, t with 4 df)
        for side, truth in (("before", fast_MBps), ("after", slow_MBps)):
            level, lo, hi = (_number(row[f"level_{side}{k}"]) for k in ("", "_lo", "_hi"))
            if math.isnan(lo) or math.isnan(hi):
                assert f"{side}: " in str(row["note"]) and "no interval" in str(row["note"]), row["note"]
                lo, hi = _five_batch_interval(frame, column, float(row["t_s"]), side)
            assert within(level, truth) or lo <= truth <= hi, (side, level, lo, hi, truth, row["note"])

    steady = sorted(steady_logs.glob("steady_bw.*.log"))
    assert len(steady) == 10
    for log in steady:  # each run alone: no cliff
        frame, column, unit = read_throughput_series(log)
        assert len(frame) >= 28
        assert find_cliffs(frame, column, unit=unit).empty, log


def _number(value) -> float:
    """A cliff row's cell as a float: NaN for None (find_cliffs) or an empty CSV cell (the CLI's table)."""
    return math.nan if value is None or value == "" else float(value)


def _five_batch_interval(frame: pd.DataFrame, column: str, change_t_s: float, side: str) -> tuple[float, float]:
    """95 % interval (series unit) of one side's level from 5 batches of its inner seconds (find_cliffs drops
    each segment's first and last), whatever their correlation: the test's own yardstick where none is published."""
    t = frame["t_s"].to_numpy(np.float64)
    y = pd.to_numeric(frame[column], errors="coerce").to_numpy(np.float64)
    seg = y[(t < change_t_s) if side == "before" else (t >= change_t_s)]
    seg = seg[np.isfinite(seg)][1:-1]
    batches = np.array([b.mean() for b in np.array_split(seg, 5)])
    half = 2.776 * batches.std(ddof=1) / math.sqrt(5)  # t(0.975, 4 df)
    return float(seg.mean() - half), float(seg.mean() + half)


def _cli_rows(folder, tmp_path, capsys) -> pd.DataFrame:
    out = tmp_path / "cliffs.csv"
    assert main(["cliffs", str(folder), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "used its fio bw logs (2 files)" in err and "2 job logs summed per second" in err
    return pd.read_csv(out)
