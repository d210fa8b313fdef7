"""fio as a process: run one fio command time-boxed (optionally watched and stopped early with SIGINT), make it
die with memstor, and find and stop the fio processes a killed sweep left writing into a folder (Linux /proc).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def die_with_parent() -> None:
    """In the fio child (Linux): get SIGKILL when the sweep process dies, even by SIGKILL.

    This covers fio's main process only: the job processes it forks call setsid() and survive it;
    kill_stale_fio() removes those when the sweep resumes.
    """
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG = 1, SIGKILL = 9



def fio_processes_writing_into(directory: Path) -> list[int]:
    """pids of live fio processes (main and forked jobs) whose ``--output=`` is inside ``directory``.

    Reads /proc (Linux); elsewhere returns []. Forked fio jobs keep their parent's argv, so the
    output path identifies every process of one fio run, even after its parent died.
    """
    proc = Path("/proc")
    if not proc.is_dir():
        return []
    prefix = f"--output={Path(directory)}/".encode()
    pids = []
    for d in proc.iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            argv = (d / "cmdline").read_bytes().split(b"\0")
            if not os.path.basename(argv[0]).startswith(b"fio") or not any(a.startswith(prefix) for a in argv):
                continue
            state = (d / "stat").read_text().rsplit(") ", 1)[1][:1]
        except (OSError, IndexError):
            continue
        if state not in ("Z", "X"):
            pids.append(int(d.name))
    return sorted(pids)



def kill_stale_fio(directory: Path, grace_s: float = 2.0) -> list[int]:
    """Stop fio processes still writing into ``directory`` (left by a killed sweep); return their pids.

    SIGTERM first (fio stops its jobs), SIGKILL after ``grace_s`` seconds. Only call while holding
    the experiment's sweep lock: any fio writing there then belongs to a dead sweep.
    """
    pids = fio_processes_writing_into(directory)
    if not pids:
        return []
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    end = time.monotonic() + grace_s
    while time.monotonic() < end and fio_processes_writing_into(directory):
        time.sleep(0.05)
    for pid in fio_processes_writing_into(directory):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return pids



#: How often a watched fio run's output is read (s), and how long fio may take to end after SIGINT (s).
WATCH_POLL_S, STOP_GRACE_S = 0.1, 30.0



#: fio's exit status after it ended its jobs on SIGINT (measured, fio-3.33; its final JSON is complete).
SIGINT_EXIT = 128



def _watch(proc: subprocess.Popen, watch, timeout_s: float) -> bool:
    """Poll ``watch()`` every WATCH_POLL_S while fio runs; on True send fio SIGINT (it ends its jobs and
    writes its final output). Returns True when memstor stopped fio. TimeoutExpired past ``timeout_s``."""
    end = time.monotonic() + timeout_s
    while proc.poll() is None:
        if time.monotonic() > end:
            raise subprocess.TimeoutExpired(proc.args, timeout_s)
        if watch():
            proc.send_signal(signal.SIGINT)
            return True
        time.sleep(WATCH_POLL_S)
    return False



class FioRun(subprocess.CompletedProcess[str]):
    """fio's CompletedProcess (text) and ``stopped``: True when memstor ended the point early (SIGINT)."""

    stopped: bool = False


def run_fio(cmd: list[str], timeout_s: float, output: Path, watch=None) -> FioRun:
    """Run fio capturing stdout and stderr separately (text); on timeout or any interruption every
    process of this fio run is stopped before the exception goes on. fio dies with its parent (Linux).

    ``watch``: a callable polled while fio runs (memstor.measure.precision.Watcher); when it returns True
    fio gets SIGINT and ends the point early. The result then has ``stopped = True`` and fio's exit status
    128 (its answer to SIGINT) reads as 0."""
    preexec = die_with_parent if sys.platform.startswith("linux") else None
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=preexec)
    stopped = False
    try:
        if watch is not None:
            # fio writes its results into --output; stdout/stderr stay small, so the pipes cannot fill
            stopped = _watch(proc, watch, timeout_s)
        out, err = proc.communicate(timeout=STOP_GRACE_S if stopped else timeout_s)
    except BaseException:  # TimeoutExpired, KeyboardInterrupt...
        with contextlib.suppress(OSError):
            proc.terminate()
        try:
            proc.communicate(timeout=2)
        except BaseException:
            proc.kill()
            proc.wait()
        kill_stale_fio(Path(output).parent)
        raise
    rc = 0 if stopped and proc.returncode == SIGINT_EXIT else proc.returncode
    res = FioRun(cmd, rc, out, err)
    res.stopped = stopped
    return res
