"""Shared helpers of the reliability tests (tests/test_reliability_*.py).

Nothing here fakes a tool: the helpers run the real `memstor` CLI as a subprocess, snapshot data
folders (sizes, mtimes, SHA-256) to prove that completed results were not touched, read the tidy CSVs
back, mount small real filesystems (tmpfs) when the machine allows it, and mutate real fixture bytes
for the parser fuzzing.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
TRACEBACK = "Traceback (most recent call last)"

#: The tiniest storage sweep that still runs real fio: 0.3 s per point, no ramp, a 4 MiB test file.
TINY_FIO = ["--set", "runtime_s=0.3", "--set", "ramp_s=0", "--set", "file_size=4m", "--set", "seq_bs=[]",
            "--set", "rw=[randread]"]
#: The tiniest memory sweep with loadlat: 0.2 s per point, 4 MiB buffers, two delays, only the traffic asked for
#: (no read-ratio family: quick's read_shares would add W6).
#: Its latency and load CPU: the first two CPUs of this process's affinity mask (the profiles' CPU 0 and every
#: other CPU may not be in the mask); with one CPU there is no memory sweep (MEM_SKIP says why).
MEM_CPUS = sorted(os.sched_getaffinity(0))[:2]
MEM_SKIP = "" if len(MEM_CPUS) >= 2 else ("needs 2 CPUs in the affinity mask (a latency and a load thread); this "
                                          f"process may only run on CPU {MEM_CPUS[0]}")
TINY_MEM = ["--set", "tool=loadlat", "--set", "seconds_per_point=0.2", "--set", "buffer_kib=4096",
            "--set", "delays=[0,1000]", "--set", "access_bytes=[64]", "--set", "read_shares=[]",
            *(["--set", f"latency_cpu={MEM_CPUS[0]}", "--set", f"load_cpus={MEM_CPUS[1]}"] if not MEM_SKIP else [])]


# ------------------------------------------------------------------------------------------ the CLI


def cli_env(extra: dict | None = None, path: str | None = None) -> dict:
    """Environment of a `memstor` subprocess: this interpreter's, no colour, unbuffered output."""
    env = dict(os.environ)
    env.pop("MEMSTOR_FIO", None)
    env.update(PYTHONUNBUFFERED="1", NO_COLOR="1", COLUMNS="120")
    if path is not None:
        env["PATH"] = path
    env.update(extra or {})
    return env


def memstor_cmd(*args: str) -> list[str]:
    """argv of the real CLI run as `python -m memstor.cli ARGS`."""
    return [PY, "-m", "memstor.cli", *args]


def run_cli(*args: str, env: dict | None = None, timeout: float = 120, cwd: Path | None = None
            ) -> subprocess.CompletedProcess:
    """Run `memstor ARGS` to completion; stdout/stderr captured as text."""
    return subprocess.run(memstor_cmd(*args), capture_output=True, text=True, timeout=timeout,
                          env=env or cli_env(), cwd=cwd or ROOT)


def start_cli(*args: str, env: dict | None = None, stderr_path: Path | None = None) -> subprocess.Popen:
    """Start `memstor ARGS` in its own session (process group), like a shell job; stderr to a file."""
    err = open(stderr_path, "w") if stderr_path else subprocess.DEVNULL  # noqa: SIM115 - closed by caller's wait
    return subprocess.Popen(memstor_cmd(*args), stdout=subprocess.DEVNULL, stderr=err, env=env or cli_env(),
                            cwd=ROOT, start_new_session=True)


def stop_group(proc: subprocess.Popen, sig: int, group: bool = True) -> None:
    """Send `sig` to the process (and, when `group`, to its whole process group, like a terminal's Ctrl-C)."""
    with contextlib.suppress(ProcessLookupError):
        if group:
            os.killpg(proc.pid, sig)
        else:
            os.kill(proc.pid, sig)


def reap(proc: subprocess.Popen, timeout: float = 60) -> int:
    """Wait for a started CLI; kill its group if it does not end in `timeout` seconds (then fail loudly)."""
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop_group(proc, signal.SIGKILL)
        proc.wait()
        raise AssertionError(f"memstor did not end within {timeout} s after the signal (hang)") from None


def assert_one_clean_line(stderr: str, *needles: str) -> str:
    """stderr holds no traceback and one `memstor: ...` line containing every needle; return that line."""
    assert TRACEBACK not in stderr, stderr
    lines = [ln for ln in stderr.splitlines() if ln.startswith("memstor")]
    hits = [ln for ln in lines if all(n.lower() in ln.lower() for n in needles)]
    assert len(hits) == 1, f"expected one line with {needles}, got:\n{stderr}"
    return hits[0]


# ------------------------------------------------------------------------------------- data folders


def sha256(path: Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def snapshot(folder: Path) -> dict[str, tuple[int, int, str]]:
    """{relative path: (size bytes, mtime ns, sha256)} of every regular file under folder."""
    out = {}
    for p in sorted(Path(folder).rglob("*")):
        if p.is_file() and not p.is_symlink():
            st = p.stat()
            out[str(p.relative_to(folder))] = (st.st_size, st.st_mtime_ns, sha256(p))
    return out


def temp_files(folder: Path) -> list[Path]:
    """Leftover temporary files (memstor's `*.tmp*` mark, mkstemp names) under folder."""
    return sorted(p for p in Path(folder).rglob("*") if ".tmp" in p.name and p.name != ".lock")


def read_csv(path: Path) -> list[dict]:
    """A tidy CSV as a list of dicts (strings; empty cell = '')."""
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def number(cell: str) -> float | None:
    """A CSV cell as a float (None when empty); raises ValueError for anything else."""
    return None if cell == "" else float(cell)


def assert_finite_non_negative(rows: list[dict], columns: list[str]) -> None:
    """Every listed cell is empty or a finite number >= 0."""
    for row in rows:
        for c in columns:
            v = number(row[c])
            assert v is None or (math.isfinite(v) and v >= 0), (c, row[c], row)


def meta_of(raw_dir: Path) -> dict[str, dict]:
    """{point name: its .meta.json} of an experiment folder."""
    return {p.name[: -len(".meta.json")]: json.loads(p.read_text()) for p in raw_dir.glob("*.meta.json")}


def manifest_of(raw_dir: Path) -> dict:
    """The experiment folder's manifest.json."""
    return json.loads((raw_dir / "manifest.json").read_text())


def wait_for(cond, timeout: float, step: float = 0.02, what: str = "condition") -> None:
    """Poll `cond()` until true; AssertionError after `timeout` seconds."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def done_points(raw_dir: Path) -> int:
    """Points whose meta says done (the sweep renamed their raw file into place)."""
    n = 0
    for p in raw_dir.glob("*.meta.json"):
        with contextlib.suppress(OSError, ValueError):
            n += json.loads(p.read_text()).get("status") == "done"
    return n


def live_pids(pattern: bytes, under: Path) -> list[int]:
    """pids of live processes whose argv[0] basename starts with `pattern` and whose argv mentions `under`."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            argv = (d / "cmdline").read_bytes().split(b"\0")
            state = (d / "stat").read_text().rsplit(") ", 1)[1][:1]
        except (OSError, IndexError):
            continue
        if state in ("Z", "X") or not argv or not os.path.basename(argv[0]).startswith(pattern):
            continue
        if any(str(under).encode() in a for a in argv):
            out.append(int(d.name))
    return out


# ------------------------------------------------------------------------------------- filesystems


def can_mount() -> str | None:
    """None when this process may mount a tmpfs, else the reason it cannot (for pytest.skip)."""
    if os.geteuid() != 0:
        return "not root: mounting a size-limited tmpfs needs root (run the suite as root to cover this)"
    if shutil.which("mount") is None:
        return "no mount command on PATH"
    return None


@contextlib.contextmanager
def tmpfs(where: Path, size: str = "64m", options: str = "") -> Iterator[Path]:
    """Mount a size-limited tmpfs on `where` for the duration of the block (root only)."""
    where.mkdir(parents=True, exist_ok=True)
    opts = f"size={size}" + (f",{options}" if options else "")
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "memstor-test", str(where)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        import pytest

        pytest.skip(f"cannot mount a tmpfs here ({res.stderr.strip() or res.returncode}); "
                    "run as root on a machine that allows mounts")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


# ------------------------------------------------------------------------------------------ fuzzing

HOSTILE_NUMBERS = [b"-1", b"-0.5", b"-123456789", b"0", b"-0", b"1e308", b"1e999", b"-1e999", b"9" * 400,
                   b"nan", b"NaN", b"-nan", b"inf", b"-inf", b"Infinity", b"-Infinity", b'"nan"', b'"inf"',
                   b"0x7fffffffffffffff", b"18446744073709551617", b"1.7976931348623157e+308", b"4.9e-324"]
NUMBER_RE = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")


def replace_numbers(data: bytes, picks: list[tuple[int, int]]) -> bytes:
    """Replace numbers of data: picks = [(index among the numbers, index into HOSTILE_NUMBERS)]."""
    spans = [m.span() for m in NUMBER_RE.finditer(data)]
    if not spans:
        return data
    chosen = {spans[i % len(spans)]: HOSTILE_NUMBERS[j % len(HOSTILE_NUMBERS)] for i, j in picks}
    out, last = [], 0
    for (s, e), rep in sorted(chosen.items()):
        out += [data[last:s], rep]
        last = e
    out.append(data[last:])
    return b"".join(out)


def deep_json(depth: int, fio_like: bool = True) -> bytes:
    """A JSON document nested `depth` levels deep (inside a fio-looking document when fio_like)."""
    inner = b"[" * depth + b"]" * depth
    if fio_like:
        return b'{\n  "fio version" : "fio-3.36",\n  "jobs" : [ {"jobname": "x", "read": ' + inner + b"} ]\n}\n"
    return inner


def gigantic_json(n_jobs: int) -> bytes:
    """A valid fio 3.x JSON document with `n_jobs` copies of one real job (a few hundred bytes each)."""
    job = {"jobname": "j", "groupid": 0, "error": 0, "job options": {"rw": "randread", "bs": "4k"},
           "read": {"iops": 1000.0, "bw_bytes": 4096000, "runtime": 1000, "total_ios": 1000,
                    "lat_ns": {"min": 1000, "max": 9000, "mean": 2000.0, "stddev": 10.0, "N": 1000}}}
    doc = {"fio version": "fio-3.36", "jobs": [dict(job, jobname=f"j{i}") for i in range(n_jobs)]}
    return json.dumps(doc).encode()
