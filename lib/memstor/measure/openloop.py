"""Open-loop load with fio: Poisson arrivals at an offered rate, and what fio does with them.

An open-loop load generator submits each I/O at its arrival time whatever happens to the earlier ones;
a closed loop waits for completions, so a slow device slows the arrivals down and the latencies it
reports miss the waiting (coordinated omission). fio's ``rate_iops`` + ``rate_process=poisson`` draws
exponential gaps; everything below was measured with fio-3.33 on the 2-vCPU KVM VM this lab runs on
(null engine or a 64 MiB file on virtio ext4 with io_uring and O_DIRECT, QD1 read latency ~80 us).

1. Poisson overshoot. fio (backend.c ``usec_for_io``) computes ``(1000000 / iops)`` in integer us and
   truncates every gap ``m * -log(U)`` to whole us, so one job asked for ``r`` IOPS delivers on average
   ``1e6 * (exp(1/m) - 1)`` with ``m = 1e6 // r`` (:func:`poisson_iops`). Measured, null engine,
   iodepth 1, one job, 2 s x 3 runs (asked -> achieved, error; the model in brackets):
   10000 -> 10082 +0.8 % [+0.5 %]; 15000 -> 15222 +1.5 % [+1.8 %]; 20000 -> 20171 +0.9 % [+1.0 %];
   25000 -> 25309 +1.2 % [+1.3 %]; 30000 -> 30833 +2.8 % [+2.6 %]; 40000 -> 40826 +2.1 % [+2.0 %];
   50000 -> 51270 +2.5 % [+2.5 %]; 100000 -> 104880 +4.9 % [+5.2 %]; 150000 -> 181087 +20.7 % [+20.9 %];
   300000 -> 395844 +31.9 % [+31.9 %]. Split plans on the same engine: 8 x 18750 -> 152552 (model
   152376), 7 x 21429 -> 153854 (153840), 15 x 20000 -> 302650 (303020): the sum of independent Poisson
   streams is Poisson, and the model holds per job. :func:`split_rate` uses it.
2. ``io_submit_mode=inline`` (fio's default) is not an open loop: before each rate sleep fio waits for
   every in-flight I/O (io_u.c ``rate_ddir`` -> ``io_u_quiesce``) and then sleeps the time it computed
   BEFORE waiting; the schedule is kept on average by submitting back to back while behind. Arrivals
   bunch as soon as a job's rate x latency nears 1. Inter-arrival CV from fio's iolog (us), one job,
   iodepth 64, randread 4 KiB: file (io_uring) 5000 IOPS 1.03, 20000 IOPS 1.36, 40000 IOPS 1.99; null
   engine (no latency, same mode) 1.06, 1.14, 1.12. With a latency near zero (null engine) inline arrivals
   are Poisson; at per-job rate x latency >= ~1 they are completion-gated.
3. ``io_submit_mode=offload`` hangs: the job thread waits forever in ``workqueue_init`` for workers that
   all started (gdb backtrace; the race of axboe/fio#2053, fixed upstream in 2026-02). Measured: 2 of 8
   runs ran at 16 workers, 3 of 8 at 4, 6 of 10 at 64 on a quiet machine, 0 of 16 pinned to one CPU, 18 of
   18 at 1-2 workers. A hung job ignores SIGTERM (SIGKILL needed). Offload also needs a sync engine
   (io_uring/libaio refused), reports every I/O at depth 1 in ``iodepth_level``, adds the hand-off to a
   worker thread to each latency (10000 IOPS: 155 us mean vs 79 us inline), and with ``write_iolog``
   its job dies of SIGSEGV while fio exits 0 (axboe/fio#1511, fixed in 3.34). On other releases (the
   matrix, `make all PROFILE=quick` here): fio-3.28 hung in the probe's first offload run; fio-3.36 finished
   the probe's three offload runs, then its first rate points (1-6 jobs x iodepth 64, logs, 1 s ramp) hung
   until memstor killed them (2 min each); fio-3.42 (the race fixed, fio PR #2053/#2058) delivered 129-175 %
   of every asked rate on a 16-vCPU VM. A probe cannot prove a race absent, so the probe never uses offload
   (:data:`OFFLOAD_WHY`): inline is what runs, and its arrivals are measured and the points flagged.
4. Timer noise: on this VM, gaps of 1-5 ms without any cause in fio appear a few times per second; at
   20000 IOPS they alone push the null engine's inter-arrival CV to 1.05-1.18 (1.3-2.5 while other
   processes load both vCPUs). CVs are therefore checked at a few thousand IOPS, where gaps are long.
5. The null engine with iodepth > 1 answers BUSY while completions are pending; fio requeues the I/O,
   which counts against the rate twice (iolog: 2640 of 40178 lines doubled at 20000 IOPS, achieved
   18760): use the null engine with iodepth 1 for rate checks.

Pure helpers (rates, CV, iodepth ceiling) and one side effect: the submit-mode probe (short fio runs).
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from memstor.core.errors import MemstorError, ParseError, PointFailed, UsageError
from memstor.core.schema import OPEN_LOOP_RATE_TOLERANCE_PCT
from memstor.measure.fio import IOLOG_NAME, FioJob, fio_command, log_folder
from memstor.measure.fio_engine import fio_binary, fio_version
from memstor.measure.fio_facts import fio_facts
from memstor.measure.fio_output import check_fio_output
from memstor.measure.fio_process import die_with_parent, fio_processes_writing_into
from memstor.parse.fio import depth_bucket, depth_bucket_exact, iodepth_levels
from memstor.parse.fio_logs import read_interval_log, read_iolog, submit_times_us

#: Highest per-job Poisson rate whose achieved/asked error stays near 1 % when asked naively (no model):
#: fio-3.33, null engine, iodepth 1, 2 s x 3 runs, 2-vCPU KVM VM: 20000 -> +0.9 % (model +1.0 %),
#: 25000 -> +1.2 %, 30000 -> +2.8 %, 50000 -> +2.5 %, 100000 -> +4.9 % (all numbers in the module notes).
#: With the model (:func:`split_rate`) a plan's expected total is within +-1 % of the target anyway; the
#: cap also keeps each job's gaps (>= 50 us) well above the sleep granularity of a VM.
MAX_JOB_RATE_IOPS = 20_000
#: A share of submissions (percent) at the ceiling's iodepth bucket above which arrivals may have waited
#: for a free slot (fio prints 0.1 for any non-zero share below 0.1 %).
CEILING_MIN_PCT = 1.0
#: split_rate's tolerance on the expected total (fraction): the fewest jobs within it win.
PLAN_TOLERANCE = 0.005
#: Per-job rate x latency below which inline arrivals measured Poisson (5000 IOPS x 80 us = 0.4: CV 1.03;
#: 1.6: CV 1.36-1.75).
INLINE_MAX_LOAD = 0.5
#: Where arrivals bunched at PROBE_LOAD, the probe measures them again at these per-job loads (rate x QD1
#: latency), stopping at the first that holds: 1.5 x the split load first (so that points whose latency rose
#: up to 1.5 x under load are still covered by a measurement), then the split load itself.
CHECK_LOADS = (1.5 * INLINE_MAX_LOAD, INLINE_MAX_LOAD)
#: The probe's open-loop check: inter-arrival CV within 1 +- this at a per-job rate x latency of PROBE_LOAD.
CV_TOLERANCE = 0.15
PROBE_LOAD = 2.0
#: Why the probe never uses io_submit_mode=offload (module note 3): measured, not assumed from a version.
OFFLOAD_WHY = ("it hangs in a race on fio 3.28-3.41 (fio-3.36 here: three probe runs held, then rate points hung "
               "until killed) and delivers 1.3-1.75x the asked rate on fio-3.42 (16-vCPU VM)")
#: Achieved vs offered rate, two-sided (percent): a point outside it is not open loop, whichever side.
RATE_TOLERANCE_PCT = OPEN_LOOP_RATE_TOLERANCE_PCT
PROBE_MIN_RATE_IOPS = 1000
PROBE_RUNTIME_S = 0.5
PROBE_FILE_BYTES = 16 * 1024 * 1024


# ------------------------------------------------------------------------------------------ rates
def poisson_iops(rate_iops: int) -> float:
    """Mean arrival rate (I/O per second) fio delivers for one job with ``rate_iops=rate_iops`` and
    ``rate_process=poisson``: ``1e6 * (exp(1/m) - 1)``, m = 1e6 // rate_iops (whole-us mean gap, every
    gap truncated to whole us; fio-3.33 backend.c ``usec_for_io``). inf above 1e6 IOPS (gap 0: no limit).
    """
    if isinstance(rate_iops, bool) or not isinstance(rate_iops, (int, np.integer)) or rate_iops < 1:
        raise UsageError(f"rate_iops={rate_iops!r} is not allowed: an integer >= 1")
    m = 1_000_000 // int(rate_iops)
    return math.inf if m == 0 else 1e6 * math.expm1(1.0 / m)


@dataclass(frozen=True)
class RatePlan:
    """How to offer a total rate with fio: ``numjobs`` jobs of ``rate_iops=rate_per_job`` each.

    Unpacks as the pair ``numjobs, rate_per_job = split_rate(...)``. asked_iops = numjobs x rate_per_job
    (what fio is asked); expected_iops: what fio delivers on average (poisson: numjobs x
    :func:`poisson_iops`, linear: asked). expected_iops is the offered rate to report.
    """

    numjobs: int
    rate_per_job: int
    asked_iops: int
    expected_iops: float
    process: str = "poisson"

    def __iter__(self) -> Iterator[int]:
        return iter((self.numjobs, self.rate_per_job))

    def __len__(self) -> int:
        return 2

    def __getitem__(self, i: int) -> int:
        return (self.numjobs, self.rate_per_job)[i]


def split_rate(total_iops: float, max_per_job: int = MAX_JOB_RATE_IOPS, *, process: str = "poisson",
               max_jobs: int | None = None) -> RatePlan:
    """Equal integer per-job rates (fio's rate_iops is per job) offering ``total_iops`` in all.

    poisson: per-job rates near ``1e6 // m`` (a whole-us mean gap m, so fio's integer division loses
    nothing) and the fewest jobs from ceil(total / max_per_job) (up to 3 more) whose expected total
    (:func:`poisson_iops`) is within PLAN_TOLERANCE of ``total_iops``, else the closest of those. linear:
    fio's linear rate is exact, so ceil(total / max_per_job) jobs of round(total / jobs). UsageError for a
    total below 1 IOPS or a cap below 1.

    With io_submit_mode=inline a job's arrivals stay Poisson only while its rate x latency is small
    (module note 2): pass ``max_per_job=gating_cap_iops(latency_us)`` to split further. ``max_jobs`` bounds the
    jobs (fio processes) by the CPUs memstor may use: where the cap would need more, the rate per job rises
    above ``max_per_job`` (the open-loop check then says whether the arrivals held).
    """
    if not isinstance(total_iops, (int, float, np.integer, np.floating)) or isinstance(total_iops, bool) \
            or not math.isfinite(total_iops) or total_iops < 1:
        raise UsageError(f"total_iops={total_iops!r} is not allowed: a number of I/O per second >= 1")
    if isinstance(max_per_job, bool) or not isinstance(max_per_job, (int, np.integer)) or max_per_job < 1:
        raise UsageError(f"max_per_job={max_per_job!r} is not allowed: an integer >= 1")
    if process not in ("poisson", "linear"):
        raise UsageError(f"process={process!r} is not allowed: poisson or linear")
    if max_jobs is not None and (isinstance(max_jobs, bool) or not isinstance(max_jobs, (int, np.integer))
                                 or max_jobs < 1):
        raise UsageError(f"max_jobs={max_jobs!r} is not allowed: an integer >= 1 (the CPUs memstor may use)")
    n0 = max(1, math.ceil(total_iops / max_per_job))
    if max_jobs is not None and n0 > max_jobs:
        n0, max_per_job = int(max_jobs), math.ceil(total_iops / max_jobs)
    if process == "linear":
        rate = max(1, round(total_iops / n0))
        return RatePlan(n0, rate, n0 * rate, float(n0 * rate), "linear")
    best: tuple[float, int, int] | None = None
    for n in range(n0, n0 + 4 if max_jobs is None else min(n0 + 4, int(max_jobs) + 1)):
        target = total_iops / n
        m_star = 1.0 / math.log1p(target / 1e6)
        rates = {1_000_000 // m for m in range(max(1, math.floor(m_star) - 1), math.floor(m_star) + 3)}
        rates |= {math.floor(target), math.ceil(target)}
        for rate in sorted(r for r in rates if 1 <= r <= max_per_job):
            err = abs(n * poisson_iops(rate) - total_iops) / total_iops
            if best is None or err < best[0]:
                best = (err, n, rate)
        if best is not None and best[0] <= PLAN_TOLERANCE:
            break  # the fewest jobs within the tolerance
    assert best is not None  # floor/ceil(total / n0) is always a candidate
    _, n, rate = best
    return RatePlan(n, rate, n * rate, n * poisson_iops(rate))


def gating_cap_iops(latency_us: float, load: float = INLINE_MAX_LOAD, cap: int = MAX_JOB_RATE_IOPS) -> int:
    """The per-job rate (IOPS) at which one inline job's rate x latency reaches ``load``: split above it
    so that fio's wait for in-flight I/O before each rate sleep seldom delays an arrival (at most ``cap``,
    at least 1). latency_us: the I/O latency expected at the offered load (us)."""
    if not _is_number(latency_us) or latency_us <= 0:
        raise UsageError(f"latency_us={latency_us!r} is not allowed: a latency in us > 0")
    return int(max(1, min(cap, load * 1e6 / latency_us)))


# ------------------------------------------------------------------------------- arrival statistics
def interarrival_us(source: Any) -> np.ndarray:
    """Gaps (us) between consecutive submissions, in time order.

    source: submission times in us (array-like), a frame of :func:`memstor.parse.fio_logs.read_iolog` or a
    per-I/O lat log frame (``--log_avg_msec=0``; ms resolution), or the path of an iolog v3 / per-I/O lat
    log file. ParseError (one line) for a file fio did not write.
    """
    if isinstance(source, (str, Path)):
        path = Path(source)
        head = path.open("rb").read(32) if path.is_file() else b""
        source = read_iolog(path) if head.startswith(b"fio version") else read_interval_log(path, has_offset=True)
    times = submit_times_us(source) if isinstance(source, pd.DataFrame) else np.sort(np.asarray(source, float))
    return np.diff(times)


def cv(values: Any) -> float:
    """Coefficient of variation (sample standard deviation / mean) of ``values``; NaN for fewer than 2
    values or a mean of 0. 1 for exponential gaps (Poisson arrivals), 0 for a constant rate."""
    v = np.asarray(values, dtype=np.float64)
    if v.size < 2 or not np.isfinite(v).all():
        return math.nan
    mean = float(v.mean())
    return math.nan if mean == 0 else float(v.std(ddof=1)) / mean


# --------------------------------------------------------------------------------- iodepth ceiling
def ceiling_pct(job_json: dict, iodepth: int) -> float | None:
    """% of submissions fio made with the queue in the bucket of ``iodepth`` (its ``iodepth_level``:
    1, 2-3, 4-7, ..., 32-63, >=64); None when the job has no iodepth_level."""
    levels = iodepth_levels(job_json)
    if not levels:
        return None
    return float(levels.get(depth_bucket(int(iodepth)), 0.0))


def ceiling_reached(job_json: dict, iodepth: int, *, min_pct: float = CEILING_MIN_PCT) -> bool:
    """True when more than ``min_pct`` % of a job's submissions left the queue in the iodepth ceiling's
    bucket: arrivals may then have waited for a free slot (coordinated omission: flag the point).

    Only for ceilings 1, 2, 4, ..., 64 (a bucket's lowest depth): for others fio's buckets cannot show the
    queue full (512 in flight and 64 share the >=64 bucket; fourth read R-loop 8.2 found the flag on points
    with 34 of 512 in flight), so ValueError. Inline only: with io_submit_mode=offload fio reports depth 1 for
    every I/O (measured), so ValueError; ParseError when the job has no iodepth_level.
    """
    if isinstance(iodepth, bool) or not isinstance(iodepth, (int, np.integer)) or iodepth < 1:
        raise UsageError(f"iodepth={iodepth!r} is not allowed: an integer >= 1")
    if str((job_json.get("job options") or {}).get("io_submit_mode", "")).strip() == "offload":
        raise ValueError("ceiling_reached: fio reports depth 1 for every offloaded I/O; no ceiling to read")
    if not depth_bucket_exact(int(iodepth)):
        raise ValueError(f"ceiling_reached: fio's depth buckets cannot show a queue of {iodepth} full")
    pct = ceiling_pct(job_json, iodepth)
    if pct is None:
        raise ParseError(f"fio job {job_json.get('jobname')!r} has no iodepth_level (not fio 2.x/3.x JSON?)")
    return pct > min_pct


# ---------------------------------------------------------------------------- submit-mode probe
@dataclass(frozen=True)
class ModeTrial:
    """One submit mode tried by the probe."""

    mode: str
    status: str  # "ok" | "hung" | "failed"
    detail: str  # why, one line ("" when ok)
    runs: int  # fio runs made
    engine: str
    arrival_cv: float | None = None  # inter-arrival CV from fio's iolog (None: not measurable)
    achieved_iops: float | None = None
    load: float = PROBE_LOAD  # per-job rate x the trial's measured mean latency (NaN when it did not run)
    offered_iops: float | None = None  # the Poisson rate fio should deliver (poisson_iops of the asked rate)

    @property
    def rate_held(self) -> bool | None:
        """Achieved within +-RATE_TOLERANCE_PCT of the offered rate (both sides: fio-3.42's offload mode
        delivers 1.3-1.75x the asked rate); None when either is unknown."""
        if self.achieved_iops is None or not self.offered_iops:
            return None
        return abs(100.0 * self.achieved_iops / self.offered_iops - 100.0) <= RATE_TOLERANCE_PCT

    @property
    def open_loop(self) -> bool | None:
        """|CV - 1| <= CV_TOLERANCE and the rate held; None when the CV could not be measured."""
        if self.arrival_cv is None or math.isnan(self.arrival_cv):
            return None
        return abs(self.arrival_cv - 1.0) <= CV_TOLERANCE and bool(self.rate_held)


@dataclass(frozen=True)
class SubmitModeProbe:
    """The probe's decision and evidence."""

    mode: str  # "inline" (decisions recorded before OFFLOAD_WHY was measured may say "offload")
    why: str
    open_loop: bool | None  # the chosen mode held (arrivals and rate) at some load tried; None: not measurable
    latency_us: float  # QD1 mean latency of the target (us)
    rate_iops: int  # per-job Poisson rate of the trials at PROBE_LOAD
    trials: tuple[ModeTrial, ...]
    fio_version: str
    engine: str = ""  # the ioengine the rate points run with
    open_load: float | None = None  # highest per-job rate x latency at which the mode's arrivals and rate held;
    #                                 0.0: measured and held at none of the loads tried; None: not measurable


_PROBES: dict[tuple, SubmitModeProbe] = {}


def probe_submit_mode(target: Path | str, engine: str = "io_uring", *, timeout_s: float = 10.0,
                      direct: bool = True, iodepth: int = 64) -> tuple[str, str]:
    """(mode, why): the io_submit_mode to run open-loop points with on ``target``, and the evidence.

    See :func:`probe_submit_mode_details` (the same probe; this returns its mode and reason). Cached per
    process and (target, engine, direct, iodepth, timeout, fio binary).
    """
    probe = probe_submit_mode_details(target, engine, timeout_s=timeout_s, direct=direct, iodepth=iodepth)
    return probe.mode, probe.why


def probe_submit_mode_details(target: Path | str, engine: str = "io_uring", *, timeout_s: float = 10.0,
                              direct: bool = True, iodepth: int = 64) -> SubmitModeProbe:
    """Short real fio runs on ``target`` (a directory: a 16 MiB probe file is made there and removed; a
    file or device: read only) measuring how far fio's rate mode keeps its arrivals open here.

    1. QD1 closed-loop reads (0.3 s): the latency L of the target.
    2. Poisson reads (0.5 s) in fio's default (inline) submission at one job's rate lambda = PROBE_LOAD / L
       (kept within 1000..MAX_JOB_RATE_IOPS), iodepth ``iodepth``, with fio's iolog where this fio writes
       per-I/O times (memstor.measure.fio_facts); where the arrivals did not hold, again at the loads of
       CHECK_LOADS (1.5 x and 1 x the load the rate points are split to) until one holds. Every fio run is
       killed (SIGKILL, forked jobs too) after ``timeout_s`` seconds: a hang becomes "hung (killed after
       N s)", never a hung memstor.
    3. A trial holds when its arrivals passed the open-loop check (CV within 1 +- CV_TOLERANCE: at
       lambda x L = 2 a completion-gated loop bunches arrivals, CV >> 1) and fio delivered the offered rate
       within +-RATE_TOLERANCE_PCT; ``open_load`` is the highest per-job load (rate x the trial's own mean
       latency, as a rate point's check computes it) at which one held (0.0: at none of those tried; None:
       arrivals not measurable with this fio). Offload submission is never used (:data:`OFFLOAD_WHY`).
       MemstorError when inline does not run.
    """
    if not _is_number(timeout_s) or timeout_s < 1:
        raise UsageError(f"timeout_s={timeout_s!r} is not allowed: seconds >= 1 (a probe run takes ~0.5 s)")
    target = Path(target)
    if not target.exists():
        raise UsageError(f"{target}: no such file or directory for the submit-mode probe")
    binary = fio_binary()
    key = (str(target.resolve()), engine, bool(direct), int(iodepth), float(timeout_s), binary)
    if key in _PROBES:
        return _PROBES[key]
    with _probe_file(target) as path, _work_dir() as work:
        lat_us = _qd1_latency_us(path, engine, direct, work, timeout_s)

        def rate_at(load: float) -> int:
            return int(min(MAX_JOB_RATE_IOPS, max(PROBE_MIN_RATE_IOPS, load * 1e6 / max(lat_us, 1e-3))))

        def trial(rate: int) -> ModeTrial:
            return _trial("inline", path, engine, direct, rate, iodepth, work, timeout_s)

        # Inline arrivals bunch behind completions at high per-job load; where they did, measure them at
        # lower loads: CHECK_LOADS end at the load the rate points are split to (INLINE_MAX_LOAD, at QD1
        # latency), so that a point's check is a measurement at its own load or above.
        rates = [rate_at(PROBE_LOAD)]
        trials = [trial(rates[0])]
        for load in CHECK_LOADS:
            if trials[-1].status != "ok" or trials[-1].open_loop is not False or rate_at(load) >= rates[-1]:
                break  # held, not measurable, or no lower rate left (a fast target: every load at the floor)
            rates.append(rate_at(load))
            trials.append(trial(rates[-1]))
    probe = _decide(tuple(trials), lat_us, rate_at(PROBE_LOAD))
    _PROBES[key] = probe
    return probe


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _decide(trials: tuple[ModeTrial, ...], lat_us: float, rate: int) -> SubmitModeProbe:
    """The probe's result and its one-line reason: inline, open up to the highest per-job load (rate x the
    trial's measured mean latency) at which its arrivals and rate held (0.0: at none tried; None: arrivals not
    measurable with this fio)."""

    def said(t: ModeTrial) -> str:
        if t.status != "ok":
            return f"{t.mode} at {t.offered_iops or 0:.0f} IOPS/job: {t.detail}"
        got = f"achieved {t.achieved_iops or 0:.0f} of {t.offered_iops or 0:.0f} IOPS/job, rate x latency {t.load:.2f}"
        if t.arrival_cv is None:
            return f"{t.mode}: {got} ({t.detail})"
        verdict = ("open loop" if t.open_loop else "rate not held (not open loop)" if not t.rate_held
                   else "arrivals completion-gated (not open loop)")
        return f"{t.mode}: {got}, arrival CV {t.arrival_cv:.2f}: {verdict}"

    version = fio_version()
    why = "; ".join(said(t) for t in trials) + f" (QD1 latency {lat_us:.0f} us; offload not used: {OFFLOAD_WHY})"
    if trials[0].status != "ok":
        raise MemstorError(f"the rate mode does not run with {version}: {why}")
    held = [t.load for t in trials if t.status == "ok" and t.open_loop]
    measured = any(t.status == "ok" and t.open_loop is not None for t in trials)
    return SubmitModeProbe("inline", why, bool(held) if measured else None, lat_us, rate, trials, version,
                           trials[0].engine, max(held) if held else 0.0 if measured else None)


@contextlib.contextmanager
def _probe_file(target: Path) -> Iterator[Path]:
    """A file to read: a new 16 MiB probe file in a directory (removed after), else the target itself."""
    if not target.is_dir():
        yield target
        return
    try:
        fd, name = tempfile.mkstemp(dir=target, prefix="memstor-probe-", suffix=".tmp")
    except OSError as err:
        raise UsageError(f"cannot create a file in {target}: {err.strerror}; pick another --target") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            block = os.urandom(1024 * 1024)
            for _ in range(PROBE_FILE_BYTES // len(block)):
                fh.write(block)
        yield Path(name)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(name)


@contextlib.contextmanager
def _work_dir() -> Iterator[Path]:
    work = Path(tempfile.mkdtemp(prefix="memstor-submit-probe-"))
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _probe_job(path: Path, engine: str, direct: bool, **kw: Any) -> FioJob:
    size = path.stat().st_size if path.is_file() else _device_bytes(path)
    return FioJob(name="memstor-submit-probe", rw="randread", bs="4k", ioengine=engine, direct=direct,
                  size=str(max(4096, size - size % 4096)), time_based=True, group_reporting=True,
                  filename=str(path), **kw)


def _device_bytes(path: Path) -> int:
    """Size of a block device (bytes; the probe file size when it cannot be read)."""
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            return os.lseek(fd, 0, os.SEEK_END) or PROBE_FILE_BYTES
        finally:
            os.close(fd)
    except OSError:
        return PROBE_FILE_BYTES


def _qd1_latency_us(path: Path, engine: str, direct: bool, work: Path, timeout_s: float) -> float:
    """Mean total latency (us) of 0.3 s of QD1 random 4 KiB reads; MemstorError when fio cannot run."""
    job = _probe_job(path, engine, direct, iodepth=1, runtime_s=0.3)
    status, detail, doc = _run_probe(job, work / "qd1", timeout_s)
    if status != "ok":
        raise MemstorError(f"submit-mode probe on {path}: QD1 reads with {engine}: {detail}")
    assert doc is not None  # an "ok" probe comes with its document
    lat = (doc["jobs"][0].get("read") or {}).get("lat_ns") or {}
    return float(lat.get("mean") or 0.0) / 1000.0


def _trial(mode: str, path: Path, engine: str, direct: bool, rate: int, iodepth: int, work: Path,
           timeout_s: float) -> ModeTrial:
    """One Poisson run at ``rate`` IOPS: its achieved rate, its load (the rate x the mean latency it measured,
    the same product a rate point's check computes) and the CV of its arrivals, read from fio's iolog where
    this fio writes per-I/O times (measured: memstor.measure.fio_facts)."""
    iolog_ok = fio_facts().iolog_timestamps
    note = "" if iolog_ok else f"arrivals not checked: {fio_version()} writes its iolog without times"
    folder = work / f"{mode}-r{rate}"
    job = _probe_job(path, engine, direct, iodepth=iodepth, runtime_s=PROBE_RUNTIME_S, rate_iops=rate,
                     rate_process="poisson", io_submit_mode=mode, write_iolog=iolog_ok)
    status, detail, doc = _run_probe(job, folder, timeout_s)
    if status != "ok":
        return ModeTrial(mode, status, detail, 1, engine, load=math.nan, offered_iops=poisson_iops(rate))
    assert doc is not None  # an "ok" probe comes with its document
    read = doc["jobs"][0]["read"]
    lat_us = float((read.get("lat_ns") or {}).get("mean") or 0.0) / 1000.0
    cv_value = cv(interarrival_us(log_folder(folder / "out.json") / IOLOG_NAME)) if iolog_ok else None
    return ModeTrial(mode, "ok", note, 1, engine, cv_value, float(read["iops"]), rate * lat_us / 1e6,
                     poisson_iops(rate))


def _run_probe(job: FioJob, folder: Path, timeout_s: float) -> tuple[str, str, dict | None]:
    """("ok", "", doc) | ("hung", "hung (killed after N s)", None) | ("failed", fio's reason, None)."""
    folder.mkdir(parents=True)
    out = folder / "out.json"
    try:
        cmd = fio_command(job, out)
    except UsageError as err:
        return "failed", f"not runnable here ({err})", None
    if job.logs or job.write_iolog:
        log_folder(out).mkdir()
    preexec = die_with_parent if sys.platform.startswith("linux") else None
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=preexec)
    try:
        _, stderr = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_run(proc, folder)
        return "hung", f"hung (killed after {timeout_s:g} s)", None
    except BaseException:
        _kill_run(proc, folder)
        raise
    text = out.read_text(encoding="utf-8", errors="replace") if out.exists() else ""
    try:
        doc = check_fio_output("probe", proc.returncode, stderr, text)
    except PointFailed as failure:
        return "failed", str(failure).split(": ", 1)[-1], None
    ios = sum(int((j.get("read") or {}).get("total_ios", 0)) for j in doc.get("jobs", []))
    if ios <= 0:
        return "failed", "fio did no I/O", None
    return "ok", "", doc


def _kill_run(proc: subprocess.Popen, folder: Path) -> None:
    """SIGKILL a fio run: its main process and every forked job writing into ``folder`` (a hung offload
    job ignores SIGTERM); then reap the main process."""
    with contextlib.suppress(OSError):
        proc.kill()
    end = time.monotonic() + 5.0
    while time.monotonic() < end:
        pids = fio_processes_writing_into(folder)
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.02)
    with contextlib.suppress(Exception):
        proc.communicate(timeout=5)
