"""The fio engine: a typed job spec becomes ONE fio invocation with json+ output, checked thoroughly.

Choices (documented here because they change what is measured):

- ``--output-format=json+ --output=FILE``: the per-job JSON plus the completion-latency histogram bins.
  fio's stdout and stderr are captured separately; fio also copies its error lines into FILE before
  the JSON, which is why the JSON is read with "text before the JSON" tolerated.
- ``--randrepeat=0``: each run draws a fresh random offset sequence, so repetitions of a point are
  independent samples (fio's default repeats the same offsets run after run).
- ``--norandommap`` (random patterns only): offsets are drawn uniformly with replacement, as most
  published SSD/NVMe tests do; fio's default "touch every block once" map costs CPU on big files and
  makes the tail of a long run sequential-ish. Ignored by fio for sequential patterns, so not passed.
- ``--invalidate=1``: drop the test file's page cache before the job (fio's default, made explicit).
- ``--allow_file_create=0``: fio never creates a file; the test file is created and owned by
  memstor.measure.target, so a vanished test file is an error instead of a new file somewhere.
- ``--eta=never``: no progress lines in the captured output.
- time in ms (``--runtime=1500ms``) so fractional seconds are exact.
- ``--thread`` is not used (fio's default processes, as in the seed reports).
- sequential jobs (read, write, rw) with numjobs > 1 get disjoint regions: ``--size`` = the file size /
  numjobs (whole blocks) and ``--offset_increment`` the same, so job k streams through its own k-th slice
  (memstor.measure.fio_regions.job_regions). Without it every clone starts at offset 0 and writes the same
  blocks as the others: not a sequential stream, and a write-back cache merges them (S7-bare M-12: 4 x 128 KiB writers over one
  1 GiB file, 2,436 MB/s in 1.76 s). fio 3.28-3.42 take ``offset_increment`` alike (options.c).

Open-loop options (all off by default: a job without them gives exactly the command it always gave):

- ``rate_iops`` (per job), ``rate_process`` (poisson | linear), ``io_submit_mode`` (inline | offload): see
  memstor.measure.openloop for what fio-3.33 does with them (Poisson overshoot, inline gating, offload
  hang) and for the rate split and the submit-mode probe.
- ``logs``: fio's interval logs in the point's sidecar folder (``sweep.sidecar_tmp(out_tmp)``, moved with
  the point to ``<point>.files/``): ``--write_bw_log --write_iops_log --write_lat_log --write_hist_log``
  with prefix ``fio`` (files ``fio_bw.N.log``, ``fio_iops.N.log``, ``fio_lat.N.log``, ``fio_clat.N.log``,
  ``fio_slat.N.log``, ``fio_clat_hist.N.log``; N = job number), ``--log_avg_msec``, ``--log_hist_msec``,
  ``--log_hist_coarseness=0`` (every one of fio's 1856 histogram bins: the percentiles of a second are
  exact, the same as json+ gives for the whole run), ``--per_job_logs=1`` (one file per job: with
  ``per_job_logs=0`` the clones of a job would write into one file; memstor.parse.fio_logs.per_second
  sums IOPS and MB/s over the jobs and merges their histograms). ``log_avg_msec=0`` logs every I/O and
  adds ``--log_offset=1`` (offsets; time still in whole ms).
- ``lat_percentiles``: ``--lat_percentiles=1``: json+ then holds total-latency (``lat_ns``) percentiles and
  bins beside the completion-latency ones (``clat_ns``, unchanged). The histogram LOG stays completion
  latency (measured: its bins equal json+ ``clat_ns`` bins, not ``lat_ns``, with lat_percentiles=1).
- ``write_iolog``: fio's iolog v3 (``fio.iolog`` in the sidecar folder): every I/O's submission time in
  microseconds, the only fio-3.33 log fine enough for inter-arrival times at thousands of IOPS. One job
  only (clones would append into one file), and not with offload on fio < 3.34 (the job segfaults:
  axboe/fio#1511; measured: ``got signal=11``, exit status 0, JSON with zero I/O).
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from memstor.core.errors import PointFailed, UsageError
from memstor.core.files import atomic_write
from memstor.core.units import parse_size as _parse_size
from memstor.measure.fio_engine import (
    ENGINE_CHAIN,
    choose_engine,
    fio_binary,
    fio_engines,
    fio_version,
    probe_direct,
    version_tuple,
)
from memstor.measure.fio_output import check_fio_output, json_complete
from memstor.measure.fio_process import kill_stale_fio, run_fio
from memstor.measure.fio_regions import SEQUENTIAL_MODES, job_regions, laid_out_alike, region_options  # noqa: F401
from memstor.measure.precision import Watcher
from memstor.measure.sweep import sidecar_tmp
from memstor.parse.fio_status import STATUS_NAME, split_final

RW_MODES = ("read", "write", "randread", "randwrite", "rw", "randrw", "trim", "randtrim")
MIXED_MODES = ("rw", "randrw")
RANDOM_MODES = ("randread", "randwrite", "randrw", "randtrim")
#: Seconds fio may take beyond runtime + ramp before it is killed (startup, file layout, teardown).
TIMEOUT_MARGIN_S = 120.0
RATE_PROCESSES = ("poisson", "linear")
SUBMIT_MODES = ("inline", "offload")
#: Engines fio refuses with io_submit_mode=offload ("can't be used with offloaded submit. Use a sync engine").
ASYNC_ENGINES = ("io_uring", "libaio", "posixaio")
#: fio's Poisson gaps are whole microseconds of 1e6 // rate_iops: above 1e6 IOPS the gap is 0 (no limit).
MAX_POISSON_RATE_IOPS = 1_000_000
#: File-name prefix of fio's logs inside a point's sidecar folder (fio_bw.1.log, fio_clat_hist.1.log...).
LOG_PREFIX = "fio"
#: fio's iolog (submission times) inside a point's sidecar folder.
IOLOG_NAME = "fio.iolog"


# ------------------------------------------------------------------------------------------ job spec


@dataclass(frozen=True)
class FioJob:
    """One fio job. Sizes are fio size strings (``4k`` = 4096 bytes), times in seconds."""

    name: str
    rw: str = "randread"  # read|write|randread|randwrite|rw|randrw|trim|randtrim
    bs: str = "4k"  # block size, fio size string
    iodepth: int = 1  # outstanding I/Os per job
    numjobs: int = 1  # parallel jobs (processes) on the same file
    rwmixread: int | None = None  # % reads, for rw/randrw (fio's default 50 when None)
    ioengine: str = "io_uring"
    direct: bool = True  # O_DIRECT: bypass the page cache
    size: str = "1g"  # test file size (bytes each job works on; sequential multi-job: size / numjobs, job_regions)
    io_size: str | None = None  # bytes EACH job transfers (fio's --io_size), then it stops; None: not passed.
    # Measured (fio-3.33, 2-vCPU KVM VM, O_DIRECT io_uring): with numjobs=2 and io_size=64m each job writes
    # 64 MiB, 128 MiB in all (total = numjobs x io_size); io_size > size wraps around the file (sequential
    # writes restart at offset 0, random ones keep drawing offsets in it); not time based, the job stops at
    # io_size or --runtime, whichever comes first (io_size=64g, runtime 2 s: stopped at 2001 ms, 0.54 GB).
    bssplit: str | None = None  # block-size mix (fio's --bssplit, e.g. "4k/67:8k/33": size/% of I/Os); None: bs only
    random_distribution: str | None = None  # where random offsets fall (fio's --random_distribution, e.g.
    #                                          "zoned:50/5:30/15:20/80"); None: fio's default, uniform
    runtime_s: float = 10  # measured time, seconds
    ramp_s: float = 0  # warm-up before measuring, seconds
    time_based: bool = True  # run for runtime_s even when the file is covered sooner
    group_reporting: bool = True  # numjobs reported as one aggregate
    filename: str = ""  # the test file (from memstor.measure.target)
    rate_iops: int | None = None  # I/O per second PER JOB (fio's rate_iops); None = as fast as possible
    rate_process: str | None = None  # "poisson" | "linear" (None: fio's default, linear); needs rate_iops
    io_submit_mode: str | None = None  # "inline" | "offload" (None: fio's default, inline)
    logs: bool = False  # fio's bw/iops/lat/hist logs into the point's sidecar folder
    log_avg_msec: int = 1000  # averaging window of the bw/iops/lat logs, ms (0: one line per I/O)
    log_hist_msec: int = 1000  # window of the completion-latency histogram log, ms
    hist_log: bool = True  # with logs: also the histogram log (1856 bins per line; off when only the means matter)
    write_iolog: bool = False  # fio's iolog v3 (submission time of every I/O, us) into the sidecar folder
    lat_percentiles: bool = False  # json+ also holds TOTAL-latency percentiles and bins (lat_ns)
    latency_target_us: int | None = None  # fio's latency_target: the queue depth (<= iodepth) is searched that
    latency_window_s: float | None = None  # keeps latency_percentile % of the I/Os of every window under it
    latency_percentile: float | None = None  # (fio reports the depth found as latency_depth in its JSON)
    status_interval_ms: int = 0  # fio's --status-interval: a cumulative JSON snapshot every N ms (0: none)
    precision_pct: float | None = None  # stop when IOPS and mean latency are this precise (memstor.measure.precision);
    #                                     runtime_s is then the longest the point may run

    def _bad(self, param: str, value: Any, allowed: str) -> UsageError:
        return UsageError(f"fio job {self.name!r}: {param}={value!r} is not allowed: {allowed}")

    def validate(self) -> None:
        """Raise UsageError naming the parameter and the allowed values for anything fio would reject."""
        if not isinstance(self.name, str) or not self.name.strip() or "\n" in self.name:
            raise UsageError(f"fio job name {self.name!r} is not allowed: use a non-empty one-line name")
        if self.rw not in RW_MODES:
            raise self._bad("rw", self.rw, "one of " + ", ".join(RW_MODES))
        bs = self._size("bs", self.bs, "a positive size like 512, 4k, 64k, 1m")
        size = self._size("size", self.size, "a positive size like 16m, 1g")
        if self.io_size is not None:
            io_size = self._size("io_size", self.io_size, "a positive size like 64m, 4g (bytes each job writes) or None")
            if io_size < bs:
                raise self._bad("io_size", self.io_size, f"at least one block of bs={self.bs}")
        if bs > size:
            raise self._bad("bs", self.bs, f"at most the file size {self.size}")
        for param in ("iodepth", "numjobs"):
            v = getattr(self, param)
            if not _is_int(v) or v < 1:
                raise self._bad(param, v, "an integer >= 1")
        if self.rwmixread is not None:
            if not _is_int(self.rwmixread) or not 0 <= self.rwmixread <= 100:
                raise self._bad("rwmixread", self.rwmixread, "an integer percentage of reads, 0..100")
            if self.rw not in MIXED_MODES:
                raise self._bad("rwmixread", self.rwmixread, f"only with rw=rw or rw=randrw (this job is rw={self.rw})")
        if not isinstance(self.ioengine, str) or not self.ioengine:
            raise self._bad("ioengine", self.ioengine, "an ioengine name such as " + ", ".join(ENGINE_CHAIN))
        engines = fio_engines()
        if engines and self.ioengine not in engines:
            raise self._bad("ioengine", self.ioengine, "one of this fio's engines: " + ", ".join(sorted(engines)))
        if not isinstance(self.direct, bool) and self.direct not in (0, 1):
            raise self._bad("direct", self.direct, "true/1 (O_DIRECT) or false/0 (page cache)")
        if not _is_num(self.runtime_s) or self.runtime_s <= 0:
            raise self._bad("runtime_s", self.runtime_s, "a number of seconds > 0")
        if round(self.runtime_s * 1000) < 1:
            raise self._bad("runtime_s", self.runtime_s, "at least 0.001 s")
        if not _is_num(self.ramp_s) or self.ramp_s < 0:
            raise self._bad("ramp_s", self.ramp_s, "a number of seconds >= 0")
        self._validate_access(size)
        self._validate_open_loop()

    def _validate_access(self, size: int) -> None:
        """bssplit and random_distribution: UsageError unless fio-3.33 reads them as written (it accepts
        percentages that do not add up to 100 and sizes like ``4q`` silently, measured; see :func:`bssplit_error`)."""
        if self.bssplit is not None:
            why = bssplit_error(self.bssplit, size, bool(self.direct))
            if why:
                raise self._bad("bssplit", self.bssplit, why)
        if self.random_distribution is not None:
            why = distribution_error(self.random_distribution, size)
            if why:
                raise self._bad("random_distribution", self.random_distribution, why)
        if self.random_distribution is not None and self.rw not in RANDOM_MODES:
            raise self._bad("random_distribution", self.random_distribution, f"only with a random rw (this job is "
                            f"rw={self.rw}: fio draws no random offsets for it)")

    def _validate_open_loop(self) -> None:
        """The rate, submit-mode and log options (UsageError naming the parameter)."""
        if self.rate_iops is not None:
            if not _is_int(self.rate_iops) or self.rate_iops < 1:
                raise self._bad("rate_iops", self.rate_iops, "an integer >= 1 (I/O per second per job) or None")
            if self.rw in MIXED_MODES:
                raise self._bad("rate_iops", self.rate_iops, f"only with a one-direction rw (fio limits each "
                                f"direction of rw={self.rw} separately); use randread or randwrite")
            if self.rate_process == "poisson" and self.rate_iops > MAX_POISSON_RATE_IOPS:
                raise self._bad("rate_iops", self.rate_iops, f"at most {MAX_POISSON_RATE_IOPS} per job with "
                                "rate_process=poisson (fio's gaps are whole us); split the rate over more jobs")
        if self.rate_process is not None:
            if self.rate_process not in RATE_PROCESSES:
                raise self._bad("rate_process", self.rate_process, "one of " + ", ".join(RATE_PROCESSES) + " or None")
            if self.rate_iops is None:
                raise self._bad("rate_process", self.rate_process, "only together with rate_iops")
        if self.io_submit_mode is not None:
            if self.io_submit_mode not in SUBMIT_MODES:
                raise self._bad("io_submit_mode", self.io_submit_mode, "one of " + ", ".join(SUBMIT_MODES) + " or None")
            if self.io_submit_mode == "offload" and self.ioengine in ASYNC_ENGINES:
                raise self._bad("io_submit_mode", self.io_submit_mode, f"offload needs a sync engine such as psync "
                                f"(fio refuses ioengine={self.ioengine} with offloaded submission)")
        if self.latency_target_us is not None:
            if not _is_int(self.latency_target_us) or self.latency_target_us < 1:
                raise self._bad("latency_target_us", self.latency_target_us, "an integer number of us >= 1 or None")
            if not _is_num(self.latency_window_s) or self.latency_window_s <= 0:
                raise self._bad("latency_window_s", self.latency_window_s, "seconds > 0 (with latency_target_us)")
            if not _is_num(self.latency_percentile) or not 0 < self.latency_percentile <= 100:
                raise self._bad("latency_percentile", self.latency_percentile, "a percentage in (0, 100]")
        for param in ("logs", "hist_log", "write_iolog", "lat_percentiles"):
            if not isinstance(getattr(self, param), bool):
                raise self._bad(param, getattr(self, param), "true or false")
        if not _is_int(self.log_avg_msec) or self.log_avg_msec < 0:
            raise self._bad("log_avg_msec", self.log_avg_msec, "an integer number of ms >= 0 (0: every I/O)")
        if not _is_int(self.status_interval_ms) or self.status_interval_ms < 0:
            raise self._bad("status_interval_ms", self.status_interval_ms, "an integer number of ms >= 0 (0: none)")
        if self.precision_pct is not None:
            if not _is_num(self.precision_pct) or not 0 < self.precision_pct <= 100:
                raise self._bad("precision_pct", self.precision_pct, "a percentage in (0, 100] or None")
            if not self.status_interval_ms or not self.time_based:
                raise self._bad("precision_pct", self.precision_pct, "only with status_interval_ms > 0 and time_based "
                                "(the rule is evaluated on fio's status snapshots)")
        if not _is_int(self.log_hist_msec) or self.log_hist_msec < 1:
            raise self._bad("log_hist_msec", self.log_hist_msec, "an integer number of ms >= 1")
        if self.write_iolog:
            if self.numjobs != 1:
                raise self._bad("write_iolog", self.write_iolog, f"only with numjobs=1 (the {self.numjobs} clones "
                                "would append into one iolog file)")
            if self.io_submit_mode == "offload" and version_tuple(fio_version()) < (3, 34):
                raise self._bad("write_iolog", self.write_iolog, f"not with io_submit_mode=offload on "
                                f"{fio_version()} (the job segfaults, axboe/fio#1511; fixed in fio 3.34)")

    def _size(self, param: str, value: Any, allowed: str) -> int:
        try:
            n = _parse_size(str(value))
        except (ValueError, TypeError):
            raise self._bad(param, value, allowed) from None
        if n <= 0 or isinstance(value, bool):
            raise self._bad(param, value, allowed)
        return n

    @property
    def bs_bytes(self) -> int:
        """Block size in bytes."""
        return _parse_size(self.bs)

    @property
    def size_bytes(self) -> int:
        """Test file size in bytes."""
        return _parse_size(self.size)


def _is_int(v: Any) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> TypeGuard[float]:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


#: A bssplit block size: whole bytes or k/m/g (KiB/MiB/GiB, fio's default base); fio-3.33 reads ``4q`` as 4 bytes.
_SPLIT_SIZE = re.compile(r"^[1-9][0-9]*[kKmMgG]?$")
#: A whole percentage 0..100 (fio-3.33 truncates ``50.5``).
_PCT = re.compile(r"^(100|[1-9]?[0-9])$")
#: random_distribution's one-number forms: (low, high, low included, high included) of the number.
_SHAPES = {"zipf": (0.0, math.inf, False, False), "pareto": (0.0, 1.0, False, False),
           "normal": (0.0, 100.0, True, False)}


def bssplit_error(text: str, size_bytes: int, direct: bool) -> str | None:
    """Why fio's ``--bssplit`` value ``text`` is refused, or None. Accepted: ``size/pct:size/pct...`` (one list for
    every direction, or up to three comma-separated lists: read, write, trim), sizes whole bytes or k/m/g, each
    once a list, > 0, <= the file size and (O_DIRECT) a multiple of 512, whole percentages adding up to 100. fio-3.33
    takes more without an error and does something else (measured: ``4k/50:8k/40`` gave ~66/34 %, ``4k/50:8k/60``
    50/50 %, ``4q`` 4-byte blocks, ``1000`` with O_DIRECT EINVAL at the first I/O)."""
    want = "size/% entries joined by ':' (e.g. 512/4:4k/67:8k/29), whole % adding up to 100"
    lists = str(text).split(",")
    if not 1 <= len(lists) <= 3:
        return f"one list for every direction or up to three (read,write,trim): {want}"
    for part in lists:
        entries = [e.split("/") for e in part.split(":")]
        if any(len(e) != 2 or not _SPLIT_SIZE.match(e[0]) or not _PCT.match(e[1]) for e in entries):
            return want
        sizes = [_parse_size(e[0]) for e in entries]
        if sum(int(e[1]) for e in entries) != 100:
            return f"percentages of {part!r} add up to {sum(int(e[1]) for e in entries)}: {want}"
        if len(set(sizes)) != len(sizes):
            return f"a block size appears twice in {part!r}: give each size once"
        if max(sizes) > size_bytes:
            return f"block sizes at most the file size ({size_bytes} bytes)"
        if direct and any(n % 512 for n in sizes):
            return "multiples of 512 bytes with O_DIRECT (direct=1); fio fails with EINVAL otherwise"
    return None


def distribution_error(text: str, size_bytes: int) -> str | None:
    """Why fio's ``--random_distribution`` value ``text`` is refused, or None. Accepted as fio-3.33 reads them:
    ``random``; ``zipf:theta`` (theta > 0, not 1), ``pareto:h`` (0 < h < 1), ``normal:dev`` (0 <= dev < 100), each
    with an optional ``:center`` 0..1; ``zoned:a/r:a/r...`` (whole % of the accesses / % of the range, each adding
    up to 100); ``zoned_abs:a/size:...`` (sizes adding up to at most the file size). fio-3.33 itself takes ranges
    adding up to 95 % without an error, and zoned_abs sizes beyond the file with only a message (measured)."""
    kind, _, rest = str(text).partition(":")
    if kind == "random" and not rest:
        return None
    if kind in _SHAPES:
        lo, hi, lo_in, hi_in = _SHAPES[kind]
        nums = rest.split(":")
        try:
            value, center = float(nums[0]), float(nums[1]) if len(nums) == 2 else 0.0
        except ValueError:
            value, center = math.nan, 0.0
        ok = (lo < value or (lo_in and value == lo)) and (value < hi or (hi_in and value == hi))
        if len(nums) > 2 or not ok or not 0 <= center <= 1 or (kind == "zipf" and value == 1):
            return (f"{kind}:N with N in {'[' if lo_in else '('}{lo:g}, {hi:g}{']' if hi_in else ')'}"
                    f"{' and not 1' if kind == 'zipf' else ''}, optionally :center 0..1")
    elif kind in ("zoned", "zoned_abs"):
        entries = [e.split("/") for e in rest.split(":")]
        second = _PCT if kind == "zoned" else _SPLIT_SIZE
        if not rest or any(len(e) != 2 or not _PCT.match(e[0]) or not second.match(e[1]) for e in entries):
            return f"{kind}:a/{'r' if kind == 'zoned' else 'size'}:... (whole % of accesses / " \
                   f"{'% of the range' if kind == 'zoned' else 'a size'} per zone), e.g. zoned:50/5:30/15:20/80"
        if sum(int(e[0]) for e in entries) != 100:
            return "access percentages adding up to 100"
        ranges = [int(e[1]) if kind == "zoned" else _parse_size(e[1]) for e in entries]
        if kind == "zoned" and sum(ranges) != 100:
            return "range percentages adding up to 100 (fio-3.33 takes less without an error)"
        if kind == "zoned_abs" and sum(ranges) > size_bytes:
            return f"zone sizes adding up to at most the file size ({size_bytes} bytes)"
    else:
        return "random, zipf:theta, pareto:h, normal:dev, zoned:a/r:... or zoned_abs:a/size:..."
    return None


def log_folder(output: Path) -> Path:
    """Where a job's logs go: the sidecar folder of its raw output (``sweep.sidecar_tmp(output)``)."""
    return sidecar_tmp(Path(output))


def _ms(seconds: float) -> str:
    """fio time option value in whole milliseconds (``1.5`` -> ``1500ms``)."""
    return f"{int(round(seconds * 1000))}ms"


def fio_command(job: FioJob, output: Path) -> list[str]:
    """The exact fio argv for ``job`` writing json+ to ``output`` (validates the job first)."""
    job.validate()
    if not job.filename:
        raise UsageError(f"fio job {job.name!r}: no filename: prepare a test file with memstor.measure.target first")
    cmd = [
        fio_binary(),
        f"--name={job.name}",
        f"--filename={job.filename}",
        f"--rw={job.rw}",
        f"--bs={job.bs}",
        *([f"--bssplit={job.bssplit}"] if job.bssplit is not None else []),
        *([f"--random_distribution={job.random_distribution}"] if job.random_distribution is not None else []),
        f"--iodepth={job.iodepth}",
        f"--numjobs={job.numjobs}",
    ]
    if job.rw in MIXED_MODES and job.rwmixread is not None:
        cmd.append(f"--rwmixread={job.rwmixread}")
    cmd += [
        f"--ioengine={job.ioengine}",
        f"--direct={int(bool(job.direct))}",
        *region_options(job),
        *([f"--io_size={job.io_size}"] if job.io_size is not None else []),
        f"--runtime={_ms(job.runtime_s)}",
        f"--ramp_time={_ms(job.ramp_s)}",
    ]
    if job.time_based:
        cmd.append("--time_based")
    if job.group_reporting:
        cmd.append("--group_reporting")
    cmd += _open_loop_options(job, output)
    if job.status_interval_ms:
        cmd.append(f"--status-interval={job.status_interval_ms}ms")
    cmd += ["--randrepeat=0"]
    if job.rw in RANDOM_MODES:
        cmd.append("--norandommap")
    cmd += [
        "--invalidate=1",
        "--allow_file_create=0",
        "--eta=never",
        "--output-format=json+",
        f"--output={output}",
    ]
    return cmd


#: fio options that stay on a client's command line (not job options): fio_command's output handling.
_CLIENT_SIDE = ("--output-format", "--output", "--eta", "--status-interval")


def job_file_text(job: FioJob, output: Path) -> str:
    """The job of :func:`fio_command` as fio job-file text (one ``[name]`` section), for fio's client mode
    (``fio --client=H job.fio``), which sends job files, not options. The output options stay with the client
    (json+ on its stdout). Log paths (``job.logs``) are the client's: measured (fio-3.33), a server sends its
    logs to the client, which writes each as ``<path>.<client address>`` (e.g. ``fio_iops.1.log.127.0.0.3``)."""
    cmd = fio_command(job, output)[1:]
    lines = [f"[{job.name}]"]
    for opt in cmd:
        key, _, value = opt[2:].partition("=")
        if key == "name" or "--" + key in _CLIENT_SIDE:
            continue
        if "\n" in value or "[" in key:
            raise UsageError(f"fio job {job.name!r}: option {key} cannot go into a job file")
        lines.append(f"{key}={value}" if _ else key)
    return "\n".join(lines) + "\n"


def _open_loop_options(job: FioJob, output: Path) -> list[str]:
    """fio options of the rate, submit mode and logs ([] when the job asks for none of them)."""
    opts = []
    if job.rate_iops is not None:
        opts.append(f"--rate_iops={job.rate_iops}")
    if job.rate_process is not None:
        opts.append(f"--rate_process={job.rate_process}")
    if job.io_submit_mode is not None:
        opts.append(f"--io_submit_mode={job.io_submit_mode}")
    if job.lat_percentiles:
        opts.append("--lat_percentiles=1")
    if job.latency_target_us is not None:
        assert job.latency_window_s is not None  # job.validate() (fio_command): latency_target_us needs it
        opts += [f"--latency_target={job.latency_target_us}us", f"--latency_window={_ms(job.latency_window_s)}",
                 f"--latency_percentile={job.latency_percentile:g}"]
    if job.logs:
        prefix = log_folder(output) / LOG_PREFIX
        opts += [f"--write_bw_log={prefix}", f"--write_iops_log={prefix}", f"--write_lat_log={prefix}",
                 f"--log_avg_msec={job.log_avg_msec}", "--per_job_logs=1"]
        if job.hist_log:
            opts += [f"--write_hist_log={prefix}", f"--log_hist_msec={job.log_hist_msec}", "--log_hist_coarseness=0"]
        if job.log_avg_msec == 0:
            opts.append("--log_offset=1")
    if job.write_iolog:
        opts.append(f"--write_iolog={log_folder(output) / IOLOG_NAME}")
    return opts


# ------------------------------------------------------------------------------------------- runner


def _keep_status(output: Path) -> None:
    """Move fio's status snapshots out of ``output`` into the sidecar's memstor.parse.fio_status.STATUS_NAME
    (bytes as written; status first, then the output's final document, so a crash between the two
    writes leaves both copies, never none)."""
    if not output.exists():
        return
    status, final = split_final(output.read_text(encoding="utf-8", errors="replace"))
    if status:
        atomic_write(log_folder(output) / STATUS_NAME, status)
        atomic_write(output, final)


def _tail(text: str, n_chars: int = 2000) -> str:
    return text[-n_chars:] if text else ""


class FioRunner:
    """sweep.Runner for fio: point name -> FioJob, raw output = fio's json+ file (suffix ".json").

    The test file (memstor.measure.target.TestFile) fills in jobs without a filename. The ioengine is probed
    once per (engine, directory, direct) and the choice and its reason go into every point's meta.
    """

    suffix = ".json"

    def __init__(self, jobs: dict[str, FioJob], test_file: Any = None, *, timeout_margin_s: float = TIMEOUT_MARGIN_S):
        self.jobs = dict(jobs)
        self.test_file = test_file
        self.timeout_margin_s = timeout_margin_s
        self._engines: dict[tuple[str, str, bool], tuple[str, str]] = {}
        self._direct_ok: set[str] = set()
        self._stale_checked: set[str] = set()  # folders already cleared of a killed sweep's fio

    def job_for(self, point_name: str) -> FioJob:
        """The job of a point, with the test file filled in; UsageError if the point has no job."""
        try:
            job = self.jobs[point_name]
        except KeyError:
            raise UsageError(f"point {point_name}: no fio job defined for it (a bug in the experiment's grid)") from None
        if not job.filename and self.test_file is not None:
            job = dataclasses.replace(job, filename=str(self.test_file.path))
        job.validate()
        if not job.filename:
            raise UsageError(f"fio job {job.name!r}: no filename: prepare a test file with memstor.measure.target first")
        return job

    def _engine(self, job: FioJob) -> tuple[str, str]:
        path = Path(job.filename)
        if path.is_block_device() or path.is_char_device():
            return job.ioengine, f"{job.ioengine} as asked (raw device: not probed)"
        directory = path.parent
        if job.direct and str(directory) not in self._direct_ok:
            probe_direct(directory)
            self._direct_ok.add(str(directory))
        key = (job.ioengine, str(directory), bool(job.direct))
        if key not in self._engines:
            self._engines[key] = choose_engine(job.ioengine, directory, direct=bool(job.direct))
        return self._engines[key]

    def run(self, point: Any, out_tmp: Path) -> dict:
        """Run the point's fio job writing json+ to out_tmp; return meta extras; PointFailed on failure."""
        job = self.job_for(point.name)
        if not os.path.exists(job.filename):
            raise UsageError(
                f"point {point.name}: test file {job.filename} does not exist: create it with "
                "memstor.measure.target.prepare_test_file (memstor run does) and rerun"
            )
        folder = str(Path(out_tmp).parent)
        stale = [] if folder in self._stale_checked else kill_stale_fio(Path(folder))
        self._stale_checked.add(folder)
        engine, why = self._engine(job)
        job = dataclasses.replace(job, ioengine=engine)
        cmd = fio_command(job, Path(out_tmp))
        if job.logs or job.write_iolog or job.status_interval_ms:  # fio writes no log into a missing folder
            folder_tmp = log_folder(Path(out_tmp))
            shutil.rmtree(folder_tmp, ignore_errors=True)  # of a killed attempt
            folder_tmp.mkdir(parents=True)
        meta: dict[str, Any] = {
            "command": cmd,
            "command_line": shlex.join(cmd),
            "tool": "fio",
            "tool_version": fio_version(),
            "job": dataclasses.asdict(job),
            "ioengine": engine,
            "ioengine_reason": why,
        }
        if stale:
            meta["killed_stale_fio_pids"] = stale
        timeout = job.runtime_s + job.ramp_s + self.timeout_margin_s
        watcher = None
        if job.precision_pct is not None:
            watcher = Watcher(Path(out_tmp), job.precision_pct)
        try:
            res = run_fio(cmd, timeout, Path(out_tmp), watch=watcher)
        except subprocess.TimeoutExpired:
            err = PointFailed(f"point {point.name}: fio did not finish within {timeout:.0f} s and was killed")
            err.meta = meta
            raise err from None
        meta.update(returncode=res.returncode, fio_stderr=_tail(res.stderr))
        if job.status_interval_ms:
            _keep_status(Path(out_tmp))
        if watcher is not None:
            meta["precision"] = {"precision_pct": job.precision_pct, "stopped_by_memstor": res.stopped,
                                 "evaluations": watcher.evaluations,
                                 "note": watcher.last.note if watcher.last else "no snapshot read"}
        text = Path(out_tmp).read_text(encoding="utf-8", errors="replace") if Path(out_tmp).exists() else ""
        try:
            check_fio_output(point.name, res.returncode, res.stderr, text)
        except PointFailed as err:
            err.meta = meta
            raise
        return meta

    def same_method(self, point: Any, meta: dict) -> bool:
        """False when the point's recorded fio command laid its jobs over the file otherwise than memstor builds the
        job now (fio_regions.laid_out_alike: a sequential multi-job point measured before job_regions, whose jobs
        overlapped): memstor.measure.sweep.is_cached then has it re-measured. True for a point without a job here."""
        job = self.jobs.get(point.name)
        return job is None or laid_out_alike(job, meta.get("command"))

    def complete(self, raw: Path) -> bool:
        """True when raw holds fio JSON with jobs and no job error."""
        return json_complete(raw)
