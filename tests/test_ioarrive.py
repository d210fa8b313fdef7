"""ioarrive, memstor's arrival-driven (open-loop) I/O generator (lib/ioarrive/, issue 40): the real C tool, built
into a temporary folder, run through memstor.measure.ioarrive and memstor.parse.ioarrive.

Known answers: the simulated device in virtual time (no sleeping, no I/O: the same arrival generator, times,
histograms, checks and JSON) against the queueing closed forms of memstor.analysis.openloop — M/M/1, M/D/1 and
M/M/4 (Erlang C) at rho = 0.3, 0.6, 0.9, M/M/1's exponential tail, M/G/1 with a histogram service time
(Pollaczek-Khinchine). Arrivals: 10^6 per point at rho 0.3 and 0.6, 10^7 at rho 0.9, where the relative standard
error of a mean from 10^6 M/M/1 arrivals is about 2 % (asymptotic variance 2(1+rho)/(n(1-rho)^2), Whitt 1989):
with 10^7 the 2 % bound is more than 3 standard errors, and every point is about 3 s of CPU at most. Fixed seeds.
Then the self-checks on both sides, a real-time simulator at an impossible rate, a real run on a temporary
file (O_DIRECT) and the usage errors.
"""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
from pathlib import Path

import pytest

from memstor.analysis.openloop import md1_response_us, mg1_response_us, mgc_response_us, mm1_response_us
from memstor.measure import ioarrive
from memstor.measure.ioarrive import IoarriveJob
from memstor.parse.ioarrive import COLUMNS, bin_rows, check_rows, series_rows

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.loadlat  # builds and runs a C tool (the loadlat marker: "or runs the C compiler")
S_US = 10.0  # the simulated service time of the known-answer runs


@pytest.fixture(scope="module")
def exe(ioarrive_built) -> Path:
    """ioarrive compiled by memstor.measure.ioarrive.build (the `make ioarrive` command) into a temp folder (conftest:
    once per session)."""
    return ioarrive_built


def run(exe: Path, job: IoarriveJob) -> ioarrive.IoarriveResult:
    res = ioarrive.run(job, exe=exe)
    assert res.status == "ok", (res.reason, res.stderr)
    return res


def virtual(exe: Path, service: str, servers: int, rho: float, n: float, **kw) -> ioarrive.IoarriveResult:
    """A virtual-time run of about n arrivals at utilisation rho per server (1 % of the time as ramp)."""
    rate = rho * servers * 1e6 / S_US
    runtime = n / rate
    return run(exe, IoarriveJob(sim=f"servers={servers},service={service}", virtual=True, rate_iops=rate,
                                runtime_s=runtime, ramp_s=runtime / 100, seed=kw.pop("seed", 7), **kw))


def arrivals(rho: float) -> float:
    return 1e7 if rho >= 0.9 else 1e6


def usage_error(exe: Path, *args: str) -> str:
    proc = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ioarrive: "), proc.stderr
    assert proc.stdout == ""
    return lines[0]


# ------------------------------------------------------------------------------------------------- build


def test_build_is_warning_free(tmp_path):
    cmd = ioarrive.compile_command(ROOT, tmp_path / "ioarrive")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert "$(CC) -O2 -g -Wall -Wextra -pthread -o $@ lib/ioarrive/*.c -lm" in (ROOT / "Makefile").read_text()


def test_help_lists_every_option_and_the_readme_documents_them(exe):
    proc = subprocess.run([str(exe), "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.startswith("ioarrive - v")
    readme = (ROOT / "lib" / "ioarrive" / "README.md").read_text()
    options = sorted({w.split("=")[0].rstrip(",):") for w in proc.stdout.split() if w.startswith("--")})
    assert len(options) > 25
    for opt in options:
        assert f"`{opt}" in readme, f"{opt} is not documented in lib/ioarrive/README.md"


# ------------------------------------------------------------------------------------- known answers


@pytest.mark.parametrize("rho", [0.3, 0.6, 0.9])
def test_virtual_mm1_mean_and_p99(exe, rho):
    res = virtual(exe, f"exp:{S_US:g}", 1, rho, arrivals(rho))
    (row,) = res.rows
    assert row["open_loop"] is True and row["checks"] == "ok", row["reasons"]
    assert row["virtual_time"] and row["engine"] == "sim" and row["lag_p99_us"] == 0
    assert row["resp_mean_us"] == pytest.approx(mm1_response_us(S_US, rho=rho), rel=0.02)
    mu, lam = 1e6 / S_US, rho * 1e6 / S_US
    assert row["resp_p99_us"] == pytest.approx(-math.log(0.01) / (mu - lam) * 1e6, rel=0.05)
    assert row["achieved_pct"] == pytest.approx(100, abs=1)


@pytest.mark.parametrize("rho", [0.3, 0.6, 0.9])
def test_virtual_md1_mean(exe, rho):
    (row,) = virtual(exe, f"det:{S_US:g}", 1, rho, arrivals(rho)).rows
    assert row["open_loop"] is True, row["reasons"]
    assert row["resp_mean_us"] == pytest.approx(md1_response_us(S_US, rho=rho), rel=0.02)
    assert row["sim_service_cs2"] == 0


@pytest.mark.parametrize("rho", [0.3, 0.6, 0.9])
def test_virtual_mm4_mean_erlang_c(exe, rho):
    (row,) = virtual(exe, f"exp:{S_US:g}", 4, rho, arrivals(rho)).rows
    assert row["open_loop"] is True, row["reasons"]
    assert row["sim_servers"] == 4
    assert row["resp_mean_us"] == pytest.approx(mgc_response_us(S_US, 1.0, 4, rho=rho), rel=0.02)


def test_virtual_mg1_histogram_service_pollaczek_khinchine(exe, tmp_path):
    """A measured-looking service histogram (values in us, counts): M/G/1 against Pollaczek-Khinchine."""
    hist = {4.0: 500, 8.0: 300, 25.0: 150, 60.0: 50}
    (tmp_path / "svc.txt").write_text("# value_us count\n" + "".join(f"{v} {c}\n" for v, c in hist.items()))
    total = sum(hist.values())
    mean = sum(v * c for v, c in hist.items()) / total
    cs2 = sum(v * v * c for v, c in hist.items()) / total / mean**2 - 1
    rho = 0.6
    rate = rho * 1e6 / mean
    runtime = 2e6 / rate
    (row,) = run(exe, IoarriveJob(sim=f"servers=1,service=hist:{tmp_path / 'svc.txt'}", virtual=True,
                                  rate_iops=rate, runtime_s=runtime, ramp_s=runtime / 100, seed=3)).rows
    assert row["sim_service_mean_us"] == pytest.approx(mean) and row["sim_service_cs2"] == pytest.approx(cs2)
    assert row["open_loop"] is True, row["reasons"]
    assert row["resp_mean_us"] == pytest.approx(mg1_response_us(mean, cs2, rho=rho), rel=0.02)


def test_histograms_within_one_percent_and_tidy_tables(exe):
    """A deterministic 37.3 us service, constant arrivals 10 ms apart: every response is 37.3 us; the percentiles hit it within
    the histogram's error (< 1 %, bins 1/128 of their lower bound wide), and the tidy tables hold together."""
    res = run(exe, IoarriveJob(sim="servers=1,service=det:37.3", virtual=True, rate_iops=100, runtime_s=30,
                               arrival="constant"))
    (row,) = res.rows
    for col in ("resp_p50_us", "resp_p99_us", "resp_p99_9_us", "service_p99_us"):
        assert row[col] == pytest.approx(37.3, rel=0.01)
    assert row["resp_mean_us"] == pytest.approx(37.3, rel=1e-9)
    bins = bin_rows(res.doc)
    assert {b["kind"] for b in bins} == {"response", "service", "lag"}
    for b in bin_rows(run(exe, IoarriveJob(sim="servers=1,service=exp:100", virtual=True, rate_iops=5000,
                                           runtime_s=2)).doc):
        width = b["latency_high_ns"] - b["latency_ns"]
        assert width == 1 or width <= b["latency_ns"] / 128
    series = series_rows(res.doc)
    assert [s["t_s"] for s in series] == list(range(30)) and all(s["iops"] > 0 for s in series)
    assert {c["name"] for c in check_rows(res.doc)} >= {"rate", "constant_cv", "no_trend", "lag"}
    assert list(row) == list(COLUMNS)
    assert res.doc["wake_delay"] is None and row["wake_delay_p99_us"] is None  # virtual time never sleeps


# --------------------------------------------------------------------------------- self-checks, both ways


def _failed_checks(res: ioarrive.IoarriveResult) -> set[str]:
    return {f"{c['name']}/{c['source']}" if c["source"] else c["name"] for c in res.doc["checks"] if not c["passed"]}


def test_constant_arrivals_asked_as_poisson_fail_the_arrival_tests(exe):
    res = run(exe, IoarriveJob(sim="servers=1,service=exp:10", virtual=True, rate_iops=20000, runtime_s=5,
                               arrival="constant", check_as="poisson"))
    assert res.doc["open_loop"] is False
    assert {"exp_gaps/intended", "exp_gaps/submitted"} <= _failed_checks(res)
    # asked as what it is, it passes (gap CV 0)
    res = run(exe, IoarriveJob(sim="servers=1,service=exp:10", virtual=True, rate_iops=20000, runtime_s=5,
                               arrival="constant"))
    assert res.doc["open_loop"] is True, res.doc["reasons"]
    assert any(c["name"] == "constant_cv" and c["value"] == 0 for c in res.doc["checks"])


def test_a_correct_generator_fails_its_arrival_tests_at_most_1_pct_of_runs(exe):
    """Bonferroni: each of the run's Poisson tests at 1 % / their number (12 for reads and writes). Without the
    correction 8 of 200 such runs failed a test by chance (README). 150 runs, failure count judged against the
    binomial(150, 0.01) bound: P(X >= 6) < 0.0004 at p = 1 %; a correct generator rarely fails 1."""
    failed = []
    for seed in range(1, 151):
        res = run(exe, IoarriveJob(sim="servers=2,service=exp:10", virtual=True, read_rate_iops=30000,
                                   write_rate_iops=20000, runtime_s=2, seed=seed))
        assert res.doc["arrival_test_alpha"] == pytest.approx(0.01 / 12, rel=1e-5)
        if not res.doc["open_loop"]:
            failed.append((seed, sorted(_failed_checks(res))))
    assert len(failed) <= 5, failed
    # one direction: 6 tests
    res = run(exe, IoarriveJob(sim="servers=2,service=exp:10", virtual=True, rate_iops=30000, runtime_s=1))
    assert res.doc["arrival_test_alpha"] == pytest.approx(0.01 / 6, rel=1e-5)


def _checks_of(res: ioarrive.IoarriveResult, source: str) -> dict[str, dict]:
    return {c["name"]: c for c in res.doc["checks"] if c["source"] == source}


def test_submissions_that_move_more_than_the_gaps_tolerance_are_tested_by_counts(exe):
    """--move-us (default: the run's p99 lag) beyond the gaps' tolerance: the submitted arrivals are tested by
    their counts in windows 20 x that wide, the intended ones still by their gaps. Poisson passes; constant
    arrivals asked as Poisson are under-dispersed (variance 0) and fail."""
    job = dict(sim="servers=1,service=exp:10", virtual=True, rate_iops=20000, runtime_s=5, extra=("--move-us", "10"))
    res = run(exe, IoarriveJob(**job))
    sub, intended = _checks_of(res, "submitted"), _checks_of(res, "intended")
    assert set(sub) == {"dispersion", "independence", "no_trend"} and "exp_gaps" in intended
    assert "windows of 250 us (20 x 10 us" in sub["dispersion"]["detail"]       # 5 arrivals at 20,000 IOPS: 250 us
    assert sub["dispersion"]["low"] < 1 < sub["dispersion"]["high"] and res.doc["open_loop"] is True, res.doc["reasons"]
    res = run(exe, IoarriveJob(**job, arrival="constant", check_as="poisson"))
    sub = _checks_of(res, "submitted")
    assert sub["dispersion"]["passed"] is False and sub["dispersion"]["value"] < sub["dispersion"]["low"]
    # not checkable: windows 20 x 10 ms wide leave fewer than 20 in a 2-s run; the run says so and is not open
    res = run(exe, IoarriveJob(**{**job, "runtime_s": 2, "extra": ("--move-us", "10000")}))
    few = _checks_of(res, "submitted")["arrivals"]
    assert few["passed"] is False and "too few to test" in few["detail"] and res.doc["open_loop"] is False
    # a move within the gaps' tolerance (5 us here) keeps the gap tests
    res = run(exe, IoarriveJob(**{**job, "extra": ("--move-us", "2")}))
    assert {"exp_gaps", "independence", "no_trend"} == set(_checks_of(res, "submitted"))


def test_counts_of_a_correct_generator_fail_at_most_1_pct_of_runs(exe):
    """The count tests share the run's alpha (Bonferroni): 100 correct virtual-time runs, at most 4 fail
    (binomial(100, 0.01): P(X >= 5) < 0.003)."""
    failed = []
    for seed in range(1, 101):
        res = run(exe, IoarriveJob(sim="servers=2,service=exp:10", virtual=True, read_rate_iops=30000,
                                   write_rate_iops=20000, runtime_s=2, seed=seed, extra=("--move-us", "10")))
        assert "dispersion/submitted" not in _failed_checks(res) or not res.doc["open_loop"]
        if not res.doc["open_loop"]:
            failed.append((seed, sorted(_failed_checks(res))))
    assert len(failed) <= 4, failed


def _write_trace(path: Path, times: list[float]) -> Path:
    rng = random.Random(5)
    path.write_text("# time_s op offset size\n"
                    + "".join(f"{t:.9f} {'r' if rng.random() < 0.8 else 'w'} {rng.randrange(1024) * 4096} 4096\n"
                              for t in times))
    return path


def test_trace_replay_poisson_passes_bunched_fails(exe, tmp_path):
    rng = random.Random(11)
    t, times = 0.0, []
    for _ in range(40000):
        t += rng.expovariate(10000.0)
        times.append(t)
    good = _write_trace(tmp_path / "poisson.trace", times)
    res = run(exe, IoarriveJob(sim="servers=1,service=exp:20", virtual=True, arrival=f"trace:{good}",
                               runtime_s=3, check_as="poisson"))
    assert set(res.doc["directions"]) == {"read", "write"}
    assert res.doc["open_loop"] is True, res.doc["reasons"]
    assert res.rows[0]["offered_iops"] == pytest.approx(8000, rel=0.05)
    # the same number of arrivals, bunched: 20 within 2 us, bursts every 2 ms
    bunched = _write_trace(tmp_path / "bunched.trace", [k // 20 * 2e-3 + (k % 20) * 1e-7 for k in range(40000)])
    res = run(exe, IoarriveJob(sim="servers=1,service=exp:20", virtual=True, arrival=f"trace:{bunched}",
                               runtime_s=3, check_as="poisson"))
    assert res.doc["open_loop"] is False
    assert {"exp_gaps/intended", "exp_gaps/submitted"} <= _failed_checks(res)
    # tested by counts (the submissions may move by 20 us: windows of 400 us+), the bursts are over-dispersed
    res = run(exe, IoarriveJob(sim="servers=1,service=exp:20", virtual=True, arrival=f"trace:{bunched}",
                               runtime_s=3, check_as="poisson", extra=("--move-us", "20")))
    disp = _checks_of(res, "submitted")["dispersion"]
    assert disp["passed"] is False and disp["value"] > disp["high"]


def test_rate_achieved_outside_5_pct_fails(exe):
    """rho = 1.2 with a cap far above the queue: completions at mu = 83 % of the offered rate."""
    res = run(exe, IoarriveJob(sim="servers=1,service=det:100", virtual=True, rate_iops=12000, runtime_s=5,
                               max_outstanding=1_000_000))
    (row,) = res.rows
    assert row["achieved_pct"] == pytest.approx(100 / 1.2, abs=1)
    assert "rate" in row["checks"].split(";") and row["open_loop"] is False and row["overloaded"] is False


def test_overload_cap_marks_the_run_overloaded(exe):
    res = run(exe, IoarriveJob(sim="servers=1,service=det:100", virtual=True, rate_iops=20000, runtime_s=2,
                               max_outstanding=100))
    (row,) = res.rows
    assert row["overloaded"] is True and row["open_loop"] is False
    assert "not_overloaded" in row["checks"] and "overloaded: 100 I/Os outstanding" in row["reasons"]


def test_real_time_simulator_at_an_impossible_rate_is_generator_bound_or_overloaded(exe):
    res = run(exe, IoarriveJob(sim="servers=64,service=det:1", rate_iops=3_000_000, runtime_s=1, drain_s=2))
    doc = res.doc
    assert doc["open_loop"] is False and (doc["generator_bound"] or doc["overloaded"]), doc["reasons"]
    assert doc["cpu"]["submitter"]["cpu_pct"] > 0 and doc["cpu"]["reaper"] is not None


def test_real_time_simulator_at_a_modest_rate_measures_the_lag(exe):
    (row,) = run(exe, IoarriveJob(sim="servers=4,service=exp:100", rate_iops=2000, runtime_s=2)).rows
    assert row["virtual_time"] is False and row["engine"] == "sim"
    assert row["lag_p50_us"] >= 0 and row["resp_mean_us"] >= row["service_mean_us"] > 90
    assert row["achieved_pct"] == pytest.approx(100, abs=10)


def _lag_check(doc: dict) -> dict:
    (lag,) = [c for c in doc["checks"] if c["name"] == "lag"]
    return lag


def test_blocked_time_is_the_measured_windows_share_of_the_run(exe):
    """The submit calls' blocked time counts the measured window's calls only, so it is a share of runtime_s
    (S10-bare 1: counted over the 1-s ramp too, a 2.0-s run said 'blocked 2.59 s (129 % of the run)'). Here a
    device of 4 x 1 ms servers behind a queue of 4 is offered 6,000 IOPS (1.5x its 4,000): its submit calls block
    nearly all the time, through the 1-s ramp and the 1-s window; the window's share stays <= 100 %, and is large."""
    job = IoarriveJob(sim="servers=4,service=det:1000,queue=4", rate_iops=6000, runtime_s=1.0, ramp_s=1.0,
                      drain_s=5)
    sub = run(exe, job).doc["submit_call"]
    assert 0.5 <= sub["blocked_s"] <= 1.0 + 0.01, sub  # one submitter: at most the window's length
    assert 0 < sub["blocked_calls"] <= sub["calls"], sub


def test_lag_behind_a_full_request_queue_names_the_blocked_submit_calls(exe):
    """A submit call that waits for a request of a full queue (the simulator's queue=4, as the kernel's
    nr_requests) makes later arrivals late: the lag check fails (generator-bound: they were not issued on time)
    and its sentence says how long the calls blocked (41 % of the run here). The other side, on the same device
    without the queue limit: the submitter pinned to one CPU beside a spinning competitor is late by itself
    (its sleeps wake late: p99 0.5 ms here), and its calls blocked far less (1.2 % here, preempted inside one)."""
    job = IoarriveJob(sim="servers=4,service=det:1000,queue=4", rate_iops=3000, runtime_s=1.5, drain_s=2)
    doc = run(exe, job).doc
    sub, lag = doc["submit_call"], _lag_check(doc)
    assert sub["queue_requests"] == 4 and sub["queue_disk"] == "sim" and sub["blocked_min_us"] == 100
    assert sub["blocked_s"] / 1.5 >= 0.1 and sub["blocked_calls"] > 0 and sub["max_us"] >= 1000, sub
    assert lag["passed"] is False and doc["open_loop"] is False and doc["generator_bound"] is True, lag
    assert "submit calls >= 100 us took" in lag["detail"] and "request queue full" in lag["detail"]
    cpu = min(os.sched_getaffinity(0))
    free = IoarriveJob(sim="servers=4,service=det:1000", rate_iops=3000, runtime_s=1.5, drain_s=2)
    hog = subprocess.Popen(["taskset", "-c", str(cpu), "sh", "-c", "while :; do :; done"])
    try:
        out = subprocess.run(["taskset", "-c", str(cpu), str(exe), *free.args()], capture_output=True, text=True,
                             timeout=60, check=True).stdout
    finally:
        hog.kill()
        hog.wait()
    doc = json.loads(out)
    lag = _lag_check(doc)
    assert doc["submit_call"]["queue_requests"] is None and doc["submit_call"]["blocked_s"] / 1.5 < 0.1
    assert lag["passed"] is False and doc["generator_bound"] is True and "generator-bound" in lag["detail"], lag


def _probe(exe: Path, cpu: int, **kw) -> dict:
    """The pause probe of a short real-time simulator run pinned to one CPU (a child with that affinity)."""
    job = IoarriveJob(sim="servers=1,service=det:10", rate_iops=200, runtime_s=0.2, drain_s=1, **kw)
    cmd = ["taskset", "-c", str(cpu), str(exe), *job.args()]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=True).stdout
    return json.loads(out)


def test_the_pause_probe_sees_a_competitor_for_its_cpu_and_not_without_one(exe):
    """--pause-probe spins one thread per CPU of the affinity with no I/O: pinned to one CPU beside a spinning
    competitor the scheduler shares it (about half the time paused, in slices: many pauses); alone there it
    loses far less (both sides, on the same CPU). Virtual time and no --pause-probe: null."""
    cpu = min(os.sched_getaffinity(0))
    alone = _probe(exe, cpu, pause_probe_s=1.0)["pause_probe"]
    hog = subprocess.Popen(["taskset", "-c", str(cpu), "sh", "-c", "while :; do :; done"])
    try:
        shared = _probe(exe, cpu, pause_probe_s=1.0)["pause_probe"]
    finally:
        hog.kill()
        hog.wait()
    assert alone["cpus"] == shared["cpus"] == 1 and alone["seconds"] == 1 and alone["min_us"] == 50
    assert 25 <= shared["paused_pct"] <= 90 and shared["per_cpu_s"] >= 50, shared
    # The competitor's share on top of the machine's own pauses: on a contended host the probe alone saw the vCPU
    # paused 50 % of a second (2026-11-28, the VM's pauses up to 32 ms that day) and 75 % beside the competitor, so
    # 'alone < half of shared' failed a correct probe; the competitor adds >= 15 points in either case, and a probe
    # that did not see it (shared = alone) fails. The quieter of two probes alone, before and after.
    again = _probe(exe, cpu, pause_probe_s=1.0)["pause_probe"]
    alone = min(alone, again, key=lambda p: p["paused_pct"])
    assert shared["paused_pct"] - alone["paused_pct"] >= 15, (alone, shared)
    assert shared["max_us"] >= 50 and shared["pauses"] >= shared["over_1ms"]
    (row,) = run(exe, IoarriveJob(sim="servers=1,service=det:10", rate_iops=200, runtime_s=0.2,
                                  pause_probe_s=0.2)).rows
    assert row["pause_per_cpu_s"] is not None and row["paused_pct"] is not None and row["pause_max_us"] is not None
    assert _probe(exe, cpu)["pause_probe"] is None
    res = run(exe, IoarriveJob(sim="servers=1,service=det:10", virtual=True, rate_iops=1000, runtime_s=1,
                               pause_probe_s=1.0))
    assert res.doc["pause_probe"] is None and res.rows[0]["pause_per_cpu_s"] is None  # virtual time: no probe


# ------------------------------------------------------------------------------------------ a real file


@pytest.fixture
def testfile(tmp_path) -> Path:
    path = tmp_path / "ioarrive-test.dat"
    with open(path, "wb") as fh:
        for _ in range(32):
            fh.write(os.urandom(1 << 20))
        fh.flush()
        os.fsync(fh.fileno())
    return path


def test_real_run_on_a_file_through_runner_and_parser(exe, testfile):
    """O_DIRECT random 4 KiB, 70 % reads, 1000 IOPS for 2 s: a small share of what a virtio disk sustains. The
    loop may not hold on a shared VM (the JSON then says why); the path, the times and the tables must."""
    res = run(exe, IoarriveJob(target=str(testfile), rate_iops=1000, read_share=70, runtime_s=2, drain_s=5))
    doc = res.doc
    assert doc["job"]["direct"] is True and doc["job"]["target_kind"] == "file"
    assert doc["engine"]["name"] in ("io_uring", "libaio", "sync") and doc["engine"]["why"]
    assert {r["direction"] for r in res.rows} == {"read", "write"}
    for row in res.rows:
        assert row["errors"] == 0 and row["completed"] > 0
        assert row["resp_mean_us"] >= row["service_mean_us"] > 0 and row["lag_mean_us"] >= 0
        assert row["achieved_pct"] == pytest.approx(100, abs=25)
    # a submission is placed no more finely than one submit call: the submitted gaps' tolerance is at least its cost
    call_ns = doc["submit_call_mean_us"] * 1e3
    assert call_ns > 0
    tol_us = min(max(min(5.0, 0.05 * 1e6 / 700), call_ns / 1e3), 1e6 / 700)
    sub = {c["name"]: c for c in doc["checks"] if c["source"] == "submitted" and c["direction"] == "read"}
    lag99_us = doc["directions"]["read"]["lag_ns"]["p99"] / 1e3
    if lag99_us > tol_us:  # the submissions moved more than the gaps' tolerance: tested by counts (both ways)
        # windows 20 x the p99 lag wide; a long pause (a contended host: 2 s over windows of 20 x 20 ms) leaves
        # fewer than 20 of them, and the run says it could not test (make test in a bare clone, 2026-11-29)
        counted = sub.get("dispersion") or sub["arrivals"]
        assert "exp_gaps" not in sub and f"20 x {lag99_us:.4g} us" in counted["detail"]
        assert "dispersion" in sub or "too few to test" in counted["detail"]
    else:
        ks_tol_us = float(sub["exp_gaps"]["detail"].split("(gaps +-")[1].split(" us")[0])
        assert ks_tol_us == pytest.approx(tol_us, rel=0.01) and "dispersion" not in sub
    # how late the submitter's sleeps woke: at 1000 IOPS it sleeps before most arrivals (gaps >> the 50 us spin)
    wake = doc["wake_delay"]
    assert wake["sleeps"] > 0.5 * 2 * 1000 and 0 <= wake["p50_us"] <= wake["p99_us"] <= wake["max_us"]
    assert all(row["wake_delay_p99_us"] == wake["p99_us"] for row in res.rows)
    # the loop is the run's: open only when no check of either direction (or of the run) failed
    assert all(row["open_loop"] is all(r["checks"] == "ok" for r in res.rows) for row in res.rows)


def test_auto_takes_libaio_with_o_direct_and_io_uring_buffered(exe, testfile):
    """io_uring's completions run in the submitter's context (engines.c, engine_select): with O_DIRECT auto takes
    libaio where it works, buffered io_uring where it works (libaio would block), each saying why."""
    works = {e: run(exe, IoarriveJob(target=str(testfile), rate_iops=200, runtime_s=0.3, engine=e)).status == "ok"
             for e in ("libaio", "io_uring")}
    direct = run(exe, IoarriveJob(target=str(testfile), rate_iops=200, runtime_s=0.3)).doc["engine"]
    buffered = run(exe, IoarriveJob(target=str(testfile), rate_iops=200, runtime_s=0.3, direct=False)).doc["engine"]
    assert direct["name"] == ("libaio" if works["libaio"] else "io_uring" if works["io_uring"] else "sync")
    assert buffered["name"] == ("io_uring" if works["io_uring"] else "libaio" if works["libaio"] else "sync")
    assert direct["why"].startswith("auto: ") and buffered["why"].startswith("auto: ")


@pytest.mark.parametrize("engine", ["libaio", "sync"])
def test_other_engines_on_a_file(exe, testfile, engine):
    res = run(exe, IoarriveJob(target=str(testfile), rate_iops=500, runtime_s=1, engine=engine, drain_s=5))
    assert res.doc["engine"]["name"] == engine and res.doc["engine"]["why"].startswith("asked")
    assert res.rows[0]["errors"] == 0 and res.rows[0]["completed"] > 0


# ------------------------------------------------------------------------------------------ bad input


def test_usage_errors_exit_2_with_one_line(exe, tmp_path, testfile):
    t = str(testfile)
    assert "unknown option '--bogus'" in usage_error(exe, "--bogus")
    assert "named twice" in usage_error(exe, "--target", t, "--rate", "100")
    assert "differ" in usage_error(exe, "--target", t, "--confirm-target", t + "x", "--rate", "100")
    assert "> 0" in usage_error(exe, "--target", t, "--confirm-target", t, "--rate", "0")
    assert "> 0" in usage_error(exe, "--target", t, "--confirm-target", t, "--rate", "-5")
    assert "cannot read trace" in usage_error(exe, "--target", t, "--confirm-target", t, "--arrival",
                                              f"trace:{tmp_path / 'missing.trace'}")
    missing = str(tmp_path / "nope.dat")
    assert "does not exist" in usage_error(exe, "--target", missing, "--confirm-target", missing, "--rate", "10")
    assert "--virtual needs --sim" in usage_error(exe, "--virtual", "--rate", "10")


def test_runner_reports_a_usage_error_as_a_failed_run(exe, testfile):
    res = ioarrive.run(IoarriveJob(target=str(testfile), rate_iops=100, extra=("--bogus",)), exe=exe)
    assert res.status == "failed" and res.returncode == 2 and res.rows == []
    assert res.reason.startswith("usage error: ioarrive: unknown option '--bogus'") and "\n" not in res.reason


def test_runner_timeout_is_a_failed_run(exe):
    res = ioarrive.run(IoarriveJob(sim="servers=1,service=det:10", rate_iops=100, runtime_s=30), exe=exe,
                       timeout_s=1)
    assert res.status == "failed" and "timed out after 1 s" in res.reason


def test_memstor_ioarrive_env_overrides_the_binary(exe, monkeypatch, tmp_path):
    monkeypatch.setenv("MEMSTOR_IOARRIVE", str(exe))
    assert ioarrive.binary() == exe
    monkeypatch.setenv("MEMSTOR_IOARRIVE", str(tmp_path / "none"))
    with pytest.raises(ioarrive.MemstorError, match="MEMSTOR_IOARRIVE"):
        ioarrive.binary()
    assert json.loads(json.dumps(IoarriveJob(sim="servers=1,service=det:1").args()))[:2] == ["--sim",
                                                                                           "servers=1,service=det:1"]
