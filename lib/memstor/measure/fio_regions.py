"""Where each fio job of a point works in the file: one region for all, or one region each (S7-bare M-12).

A sequential job (read, write, rw, trim) with numjobs > 1 gets ``--size`` = the file size / numjobs (whole
blocks) and ``--offset_increment`` the same, so job k streams through its own k-th slice (:func:`job_regions`);
random jobs, and a single job, keep the whole file. Points measured before this layout ran every clone from
offset 0 over the same blocks: :func:`laid_out_alike` tells such a recorded command from today's, so a rerun
re-measures the point rather than reuse it (memstor.measure.sweep.is_cached, through FioRunner.same_method).
"""

from __future__ import annotations

from typing import Any

#: Modes whose offsets follow each other: several jobs of one get disjoint regions (:func:`job_regions`).
SEQUENTIAL_MODES = ("read", "write", "rw", "readwrite", "trim")
#: The fio option that sets where job k starts (k x its value, bytes).
OFFSET_STEP = "--offset_increment="


def job_regions(job: Any) -> int | None:
    """Bytes of each job's own region of the file (the file size / numjobs, rounded down to whole blocks) for a
    sequential FioJob with numjobs > 1; None for one job or random offsets (every job draws from the whole file).
    UsageError when a region would be smaller than one block."""
    if job.numjobs <= 1 or job.rw not in SEQUENTIAL_MODES:
        return None
    per = job.size_bytes // job.numjobs // job.bs_bytes * job.bs_bytes
    if per < job.bs_bytes:
        raise job._bad("numjobs", job.numjobs, f"at most {job.size_bytes // job.bs_bytes} sequential jobs on a "
                       f"{job.size} file of bs={job.bs} blocks (each job streams through its own region)")
    return per


def region_options(job: Any) -> list[str]:
    """``--size`` (bytes each job works on), and for a sequential multi-job job ``--offset_increment``: job k
    starts at k x its region (:func:`job_regions`)."""
    per = job_regions(job)
    return [f"--size={job.size}"] if per is None else [f"--size={per}", f"{OFFSET_STEP}{per}"]


def laid_out_alike(job: Any, command: Any) -> bool:
    """True when a recorded fio argv (a point meta's ``command``) placed the jobs as ``job`` would now: the same
    ``--offset_increment`` (bytes), or none where none is built. False for a sequential multi-job point recorded
    without it (its jobs overlapped). True where nothing can be judged: no argv recorded (a job file, imported
    data), or a job that cannot be built (its run will say why)."""
    if not isinstance(command, (list, tuple)):
        return True
    try:
        now = [o for o in region_options(job) if o.startswith(OFFSET_STEP)]
    except Exception:  # UsageError of an invalid job: the run reports it
        return True
    return [str(c) for c in command if str(c).startswith(OFFSET_STEP)] == now
