"""The fio compatibility tier: what memstor relies on, checked against the fio it runs ($MEMSTOR_FIO or PATH).

`make fio-matrix` runs this file (marker ``fio_compat``) against every fio release in third_party/fio (3.28,
3.36, 3.42, built by scripts/build-fio); `make test` runs it with the system fio (Debian 12: 3.33). Every test
decides what to expect from what this fio does (memstor.measure.fio_facts, measured with it), never from its
version number: the output formats parse (JSON, json+, normal text, terse, interval and histogram logs, the
iolog), a few short points of every storage family run and give their rows, and the open-loop path calls no
point open unless its rate and its arrivals were measured and held.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from memstor.core.errors import ParseError, UsageError
from memstor.experiments import _registry, load_profile, run_experiment
from memstor.measure.fio import FioJob, fio_command, log_folder
from memstor.measure.fio_engine import choose_engine, fio_binary, fio_version, probe_direct
from memstor.measure.fio_facts import fio_facts
from memstor.measure.openloop import RATE_TOLERANCE_PCT
from memstor.parse.fio import parse_fio
from memstor.parse.fio_json import latency_bins, load_fio_json
from memstor.parse.fio_logs import per_second, read_iolog, read_log_folder


def _have_fio() -> bool:
    try:
        fio_binary()
    except Exception:  # noqa: BLE001 - any reason fio cannot be found is a skip reason
        return False
    return True


pytestmark = [pytest.mark.fio, pytest.mark.fio_compat,
              pytest.mark.skipif(not _have_fio(), reason="no fio ($MEMSTOR_FIO or PATH): make env installs it")]

HOST = "compat"
#: A few short points of each storage family (seconds each): enough to run every code path that reads fio's
#: output (JSON, json+, logs, per-second tables), not to measure anything.
TINY_FAMILY = {
    "fio-block-size": {"runtime_s": 0.5, "ramp_s": 0, "file_size": "16m", "bs": ["4k"], "rw": ["randread"],
                       "seq_bs": ["128k"]},
    "fio-rw-ratio": {"runtime_s": 0.5, "ramp_s": 0, "file_size": "16m", "rwmixread": [100, 50]},
    "fio-queue-depth": {"runtime_s": 0.5, "ramp_s": 0, "file_size": "16m", "rw": ["randread"], "iodepth": [1, 8],
                        "spec_iodepth": 4, "spec_numjobs": 2},
    "fio-steady-state": {"runtime_s": 0.3, "ramp_s": 0, "file_size": "8m", "iodepth": 4, "numjobs": 2,
                         "max_rounds": 5, "precondition_passes": 1},
    "fio-write-saturation": {"file_size": "8m", "workloads": ["randwrite 4k"], "iodepth": 4, "numjobs": 2,
                             "capacity_multiple": 1, "max_runtime_s": 3},
    "fio-pts-hir": {"file_size": "8m", "iodepth": 4, "numjobs": 2, "precondition_round_s": 0.3,
                    "access_s": 0.5, "wait_states_s": [0.3], "segments_per_wait": 2, "return_s": 0.5},
    "fio-pts-xsr": {"file_size": "8m", "iodepth": 4, "seq1_s": 0.5, "rnd_s": 0.5, "seq2_s": 0.5},
    "fio-pts-cbw": {"runtime_s": 0.3, "file_size": "8m", "threads": [1, 2], "qd": [1]},
    "fio-pts-dirth": {"runtime_s": 0.3, "file_size": "8m", "threads": [1, 2], "qd": [1], "histogram_s": 0.3},
    "fio-load-latency": {"runtime_s": 1, "ramp_s": 0, "file_size": "16m", "rw": ["randread"],
                         "utilisation_pct": [20, 60], "probe_iodepth": 8, "probe_numjobs": 1,
                         "slo_p99_us": [100000]},
    "mixed-load-map": {"runtime_s": 1, "ramp_s": 0, "file_size": "16m", "write_pct": [0, 20], "read_pct": [30],
                       "refine_rounds": 0, "probe_iodepth": 8, "probe_numjobs": 1},
}


def test_every_storage_family_has_a_tiny_section_here():
    """A new fio family joins the tier (the matrix must run every storage family)."""
    assert sorted(TINY_FAMILY) == sorted(m.EXPERIMENT for m in _registry.families("fio"))


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> tuple[str, bool]:
    """(ioengine, O_DIRECT) that works with this fio in a temporary folder."""
    folder = tmp_path_factory.mktemp("engine")
    try:
        probe_direct(folder)
        direct = True
    except UsageError:  # a filesystem without O_DIRECT (tmpfs): the page cache, said by the engine check
        direct = False
    return choose_engine("io_uring", folder, direct=direct)[0], direct


def _run(job: FioJob, out: Path, fmt: str = "json+") -> str:
    """Run ``job`` with the fio under test; its output text (fio's exit status must be 0)."""
    cmd = fio_command(job, out)
    cmd = [c if not c.startswith("--output-format=") else f"--output-format={fmt}" for c in cmd]
    if job.logs or job.write_iolog:
        log_folder(out).mkdir(parents=True, exist_ok=True)
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    return out.read_text(encoding="utf-8", errors="replace")


@pytest.fixture(scope="module")
def mixed_run(tmp_path_factory, engine):
    """One 2 s mixed random run with json+, every log and the iolog: (output path, text)."""
    work = tmp_path_factory.mktemp("mixed")
    target = work / "target.dat"
    with open(target, "wb") as fh:
        fh.write(b"\xa5" * (16 << 20))
    eng, direct = engine
    job = FioJob(name="compat", rw="randrw", rwmixread=70, bs="4k", iodepth=4, ioengine=eng, direct=direct,
                 size="16m", runtime_s=2, filename=str(target), logs=True, hist_log=True, lat_percentiles=True,
                 write_iolog=True)
    out = work / "out.json"
    return out, _run(job, out)


def test_json_plus_rows_and_histograms(mixed_run):
    out, text = mixed_run
    result = parse_fio(text, str(out))
    assert not result.errors
    rows = {r["direction"]: r for r in result.rows}
    assert set(rows) == {"read", "write"}
    doc = load_fio_json(text)
    for direction, row in rows.items():
        assert row["fio_version"] == fio_version()
        assert row["iops"] > 0 and row["bw_MBps"] > 0 and 0 < row["lat_mean_us"] < 1e7
        assert row["clat_p50_us"] <= row["clat_p99_us"] <= row["lat_max_us"] * 1.01
        bins = latency_bins(doc["jobs"][0], direction, "clat")
        assert sum(bins.values()) == row["total_ios"]  # json+ bins hold every I/O
    assert rows["read"]["total_ios"] > rows["write"]["total_ios"]  # rwmixread=70 was read as written


def test_job_start_is_given_exactly_when_this_fio_says_so(mixed_run):
    doc = load_fio_json(mixed_run[1])
    job = doc["jobs"][0]
    assert ("job_start" in job) == fio_facts().json_job_start
    if fio_facts().json_job_start:  # ms since the epoch, before the document's own time stamp
        assert 0 < job["job_start"] <= doc["timestamp_ms"]


def test_interval_and_histogram_logs_per_second(mixed_run):
    out, text = mixed_run
    logs = read_log_folder(log_folder(out))
    sec = per_second(logs)
    assert set(sec["direction"]) == {"read", "write"}
    whole = {r["direction"]: r["iops"] for r in parse_fio(text, str(out)).rows}
    for direction, g in sec.groupby("direction"):
        g = g.sort_values("t_s")
        logged = g["iops"].notna()
        # fio up to 3.36 never writes a run's last window (3.37+ does): a gap only at the end
        assert logged.iloc[0] and (logged.cummin() == logged).all(), g
        # every logged second within a factor of the run's mean (nothing lost, nothing counted twice)
        assert ((g["iops"][logged] > 0.2 * whole[direction]) & (g["iops"][logged] < 5 * whole[direction])).all(), g


def test_iolog_times_read_or_refused_as_this_fio_writes_them(mixed_run):
    out, text = mixed_run
    path = log_folder(out) / next(p.name for p in log_folder(out).iterdir() if "iolog" in p.name)
    total = sum(r["total_ios"] for r in parse_fio(text, str(out)).rows)
    if fio_facts().iolog_timestamps:
        log = read_iolog(path)
        assert set(log["action"]) == {"read", "write"}
        assert abs(len(log) - total) <= 0.02 * total + 8  # one line per submitted I/O
        assert log["time_us"].max() <= 2.5e6  # times in us within the 2 s run
    else:
        with pytest.raises(ParseError, match="no times"):
            read_iolog(path)


@pytest.mark.parametrize("fmt", ["normal", "terse"])
def test_text_formats_give_the_json_numbers(tmp_path, fmt):
    job = FioJob(name="compat-text", rw="randread", bs="4k", iodepth=1, ioengine="null", direct=False, size="1m",
                 runtime_s=0.3, filename=str(tmp_path / "null-target"))
    as_json = parse_fio(_run(job, tmp_path / "a.json", "json"), "a").rows[0]
    result = parse_fio(_run(job, tmp_path / f"b.{fmt}", fmt), "b")
    assert not result.errors and len(result.rows) == 1
    row = result.rows[0]
    assert row["direction"] == "read" and row["iops"] > 0
    assert row["fio_version"] in (fio_version(), None)  # terse carries only its own version field
    assert 0.2 < row["iops"] / as_json["iops"] < 5  # two separate short runs: same order of magnitude


@pytest.fixture(scope="module")
def family_run(tmp_path_factory):
    """``family_run(experiment, **overrides)``: (table, data root) of ``run_experiment`` on the experiment's tiny
    section with the overrides, run once per resolved parameter set in this module. The family test of
    fio-load-latency and the open-loop test of its default generator (ioarrive) ask for the same run (6 s a
    version): it is measured once and both check it."""
    done: dict[str, tuple[pd.DataFrame, Path]] = {}

    def measured(experiment: str, **overrides) -> tuple[pd.DataFrame, Path]:
        params = load_profile("quick", experiment, {**TINY_FAMILY[experiment], **overrides})
        key = json.dumps([experiment, params], sort_keys=True, default=str)
        if key not in done:
            data = tmp_path_factory.mktemp(experiment) / "data"
            done[key] = run_experiment(experiment, params, data_root=data, host=HOST, progress=False), data
        return done[key]

    return measured


@pytest.mark.parametrize("experiment", sorted(TINY_FAMILY))
def test_a_few_points_of_every_storage_family_run(experiment, family_run):
    table, data = family_run(experiment)
    assert isinstance(table, pd.DataFrame) and len(table), experiment
    if "status" in table:
        assert not (table["status"] == "failed").any(), table.loc[table["status"] == "failed"].to_dict("records")
    versions = set(table["fio_version"].dropna()) if "fio_version" in table else {fio_version()}
    ioarrive_only = "generator" in table and (table["generator"] == "ioarrive").all()
    assert versions == ({fio_version()} if not ioarrive_only else set())  # ioarrive's rows: no fio in their path
    processed = data / "processed" / HOST / f"{experiment}.csv"
    assert processed.is_file()


@pytest.mark.parametrize("generator", ["ioarrive", "fio"])
def test_open_loop_points_are_open_only_where_measured(family_run, generator):
    """No point is called open unless its rate was delivered within +-5 % (both sides) and its arrivals were
    measured and held. ioarrive (the default): fio is not in the open loop's path (only the X_max probe and the
    ``lt`` point are fio runs, no submit-mode probe), the flag is ioarrive's own checks and the rate rule. fio (the
    option): the probe measured this submit mode's arrivals Poisson (an iolog with times) at the point's load."""
    exp = "fio-load-latency"
    table, data = family_run(exp, generator=generator)
    rates = table[table["phase"] == "rate"]
    assert len(rates) == 2 and (rates["generator"] == generator).all() and (rates["status"] == "done").all()
    assert set(table.loc[table["phase"] != "rate", "generator"]) == {"fio"}
    raw = data / "raw" / HOST / exp
    assert (raw / "submit-mode.json").exists() == (generator == "fio")
    if generator == "ioarrive":
        assert rates["fio_version"].isna().all() and rates["submit_mode"].isna().all()
        assert (rates["max_outstanding"] == 4096).all() and rates["lag_p99_us"].notna().all()
    for _, r in rates.iterrows():
        flag = r["open_loop"]
        if isinstance(flag, float) and math.isnan(flag):
            flag = None
        off = abs(100.0 * r["achieved_iops"] / r["offered_iops"] - 100.0)
        if off > RATE_TOLERANCE_PCT:
            assert flag is False or flag == False  # noqa: E712 - a CSV round trip gives numpy bools
        if generator == "fio" and not fio_facts().iolog_timestamps:
            assert flag is None or not flag  # arrivals not measurable with this fio: never open
        if generator == "ioarrive":
            assert bool(flag) == (r["generator_checks"] == "ok" and off <= RATE_TOLERANCE_PCT)
        if flag:
            assert off <= RATE_TOLERANCE_PCT


def test_the_fio_under_test_is_the_one_asked_for():
    """make fio-matrix sets MEMSTOR_FIO; the binary memstor runs is that one (not the first fio on PATH)."""
    asked = os.environ.get("MEMSTOR_FIO")
    got = fio_binary()
    assert got == (os.path.abspath(asked) if asked else shutil.which("fio"))


def test_sequential_jobs_stream_through_disjoint_regions(tmp_path, engine):
    """S7-bare M-12: fio-write-saturation's '128 KiB sequential write' ran 4 jobs over the same 1 GiB from offset 0
    (no offset_increment): not a sequential workload. memstor's command now gives each of the 4 jobs its own quarter
    (4 MiB of a 16 MiB file) and each job's offsets, read from fio's per-I/O log with offsets, stay in it, also when
    it writes its region twice (io_size 8 MiB); a random job keeps the whole file."""
    target = tmp_path / "target.dat"
    target.write_bytes(b"\xa5" * (16 << 20))
    eng, direct = engine
    job = FioJob(name="compat-seq", rw="write", bs="128k", iodepth=4, numjobs=4, ioengine=eng, direct=direct,
                 size="16m", io_size="8m", time_based=False, runtime_s=20, filename=str(target))
    cmd = fio_command(job, tmp_path / "out.json")
    assert "--size=4194304" in cmd and "--offset_increment=4194304" in cmd
    (tmp_path / "logs").mkdir()
    cmd += [f"--write_lat_log={tmp_path / 'logs' / 'off'}", "--log_offset=1", "--per_job_logs=1"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    regions = set()
    for n in range(1, 5):           # fio numbers the logs in the order the jobs end, not by their region
        log = pd.read_csv(tmp_path / "logs" / f"off_clat.{n}.log", header=None, skipinitialspace=True)
        offsets = log[4].astype(int)
        assert len(log) == 64                                   # 8 MiB of 128 KiB writes, one line each
        k = int(offsets.min()) // (4 << 20)
        assert offsets.min() == k * (4 << 20) and offsets.max() == (k + 1) * (4 << 20) - (128 << 10)
        assert (offsets.value_counts() == 2).all()              # its 32 blocks, each written twice
        regions.add(k)
    assert regions == {0, 1, 2, 3}
    rand = FioJob(name="compat-rand", rw="randwrite", bs="4k", numjobs=4, size="16m", filename=str(target))
    assert "--size=16m" in fio_command(rand, tmp_path / "r.json") and \
        not any(c.startswith("--offset_increment") for c in fio_command(rand, tmp_path / "r.json"))
