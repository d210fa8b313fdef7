"""Reliability of `memstor run`: interruption, concurrency, disk full, missing tools, bad parameters and
target safety. Everything runs the real CLI (in-process `memstor.cli.main` or a subprocess), real fio on
a tiny test file and the real loadlat; nothing is stubbed. A `fio` shim on PATH (it logs its argv, then
execs the real fio) proves when fio was never started.

Default suite: deterministic cases (a few seconds each). `make soak`: interruptions at many random moments.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ROOT
from memstor import cli
from memstor.analysis.memory import c2c_kind
from memstor.measure.target import MARKER_SUFFIX, TESTFILE_NAME, owned
from reliability_helpers import (
    MEM_CPUS,
    MEM_SKIP,
    TINY_FIO,
    TINY_MEM,
    TRACEBACK,
    assert_finite_non_negative,
    assert_one_clean_line,
    cli_env,
    done_points,
    live_pids,
    manifest_of,
    meta_of,
    read_csv,
    reap,
    run_cli,
    snapshot,
    start_cli,
    stop_group,
    temp_files,
    tmpfs,
    wait_for,
)

HOST = "reltest"
FIO = shutil.which("fio")
LOADLAT = ROOT / "build" / "bin" / "loadlat"
needs_fio = pytest.mark.skipif(FIO is None, reason="fio not installed (apt-get install fio)")
needs_loadlat = pytest.mark.skipif(not LOADLAT.is_file(), reason="loadlat not built (make loadlat)")
needs_two_cpus = pytest.mark.skipif(bool(MEM_SKIP), reason=MEM_SKIP or "-")
FIO_BS = ["--set", "bs=[4k,8k,16k]"]  # 3 points of ~1 s each
FIO_POINTS = [f"randread-bs{b}-qd32-nj1-{{engine}}-d{{d}}-t0.3-r0-f4m-rep1" for b in ("4k", "8k", "16k")]
def mem_points(*sets: str) -> list[str]:
    """The memory sweep's point names for the quick profile with `--set` overrides (the experiment's own
    naming: every setting is in the name, so quick and standard runs never share a raw file)."""
    from memstor.core.profiles import parse_override
    from memstor.experiments import load_profile
    from memstor.experiments import mlc_loaded_latency as ll

    params = load_profile("quick", "mlc-loaded-latency", dict(parse_override(s) for s in sets if s != "--set"))
    return [p.name for p in ll.build_points(ll.validate_params(params), "loadlat")]


# ------------------------------------------------------------------------------------------ fixtures


@pytest.fixture
def fio_shim(tmp_path, monkeypatch) -> Path:
    """A `fio` first on PATH that appends its argv to a log and execs the real fio; returns the log."""
    if FIO is None:
        pytest.skip("fio not installed (apt-get install fio)")
    shim = tmp_path / "shim"
    shim.mkdir()
    log = tmp_path / "fio-calls.log"
    log.write_text("")
    (shim / "fio").write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nexec "{FIO}" "$@"\n')
    (shim / "fio").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("MEMSTOR_FIO", raising=False)
    return log


def fio_runs(log: Path) -> list[str]:
    """fio invocations in the shim log that touch a file (not `fio --version` / `--enghelp` queries)."""
    return [ln for ln in log.read_text().splitlines() if ln.strip() and not ln.startswith(("--version", "--enghelp"))]


def cli_main(capsys, *args: str) -> tuple[int, str]:
    """The real CLI in-process: (exit status, stderr)."""
    capsys.readouterr()
    code = cli.main(list(args))
    return code, capsys.readouterr().err


def raw_dir(data: Path, experiment: str) -> Path:
    return data / "raw" / HOST / experiment


# -------------------------------------------------------------------------------------- bad parameters

# (experiment, --set args, parameter named, words of the allowed values) -- each must exit 2 before
# anything runs: no raw folder, no test file, fio never started.
BAD_PARAMS = [
    ("fio-block-size", ["bs=[0]"], "bs", "size > 0"),
    ("fio-block-size", ["bs=[-4k]"], "bs", "size > 0"),
    ("fio-block-size", ["bs=[abc]"], "bs", "size > 0"),
    ("fio-block-size", ["bs=[4q]"], "bs", "multiple of 512"),  # fio reads 4q as 4 bytes
    ("fio-block-size", ["bs=[1000]"], "bs", "multiple of 512"),
    ("fio-rw-ratio", ["rwmixread=[150]"], "rwmixread", "0..100"),
    ("fio-rw-ratio", ["rwmixread=[-1]"], "rwmixread", "0..100"),
    ("fio-block-size", ["iodepth=0"], "iodepth", "integer 1.."),
    ("fio-queue-depth", ["iodepth=[0]"], "iodepth", "integer 1.."),
    ("fio-block-size", ["ioengine=nosuchengine"], "ioengine", "choose one of"),
    ("fio-block-size", ["runtime_s=0"], "runtime_s", "seconds > 0"),
    ("fio-block-size", ["runtime_s=-5"], "runtime_s", "seconds > 0"),
    ("fio-block-size", ["numjobs=0"], "numjobs", "integer 1.."),
    ("fio-block-size", ["file_size=0"], "file_size", "size > 0"),
    ("fio-block-size", ["rw=[sideways]"], "rw", "choose one of"),
    ("fio-block-size", ["nosuchkey=1"], "nosuchkey", "known:"),
    ("mlc-loaded-latency", ["traffic=[W99]"], "traffic", "allowed:"),
    ("mlc-loaded-latency", ["tool=nosuchtool"], "tool", "choose one of"),
    ("mlc-loaded-latency", ["seconds_per_point=0"], "seconds_per_point", "seconds > 0"),
]


@pytest.mark.parametrize("experiment,sets,param,allowed", BAD_PARAMS,
                         ids=[f"{e}:{s[0]}" for e, s, _, _ in BAD_PARAMS])
@pytest.mark.usefixtures("faked_machine")  # conftest: the memory family sees CPUs 0-3, whatever runs the tests
def test_bad_parameter_rejected_before_anything_runs(tmp_path, capsys, fio_shim, experiment, sets, param, allowed):
    data = tmp_path / "data"
    args = ["run", experiment, "--profile", "quick", "--data", str(data), "--host", HOST, "--no-progress"]
    for s in sets:
        args += ["--set", s]
    code, err = cli_main(capsys, *args)
    assert code == 2, err
    line = assert_one_clean_line(err, param, allowed)
    assert len(err.strip().splitlines()) == 1, err
    assert line.startswith("memstor: ")
    assert not (data / "raw").exists() and not (data / "scratch").exists()
    assert fio_runs(fio_shim) == [], "fio was started"


@pytest.mark.parametrize("args,needles", [
    (["run", "nosuch-experiment"], ("unknown experiment", "fio-block-size")),
    (["run", "fio-block-size", "--profile", "nosuchprofile"], ("unknown profile", "quick")),
    (["run", "fio-block-size", "--profile", "quick", "--target", "/nonexistent/dir"], ("/nonexistent/dir", "no such directory")),
    (["run", "fio-block-size", "--profile", "quick", "--set", "runtime_s"], ("KEY=VALUE",)),
], ids=["experiment", "profile", "target", "set-syntax"])
def test_bad_names_rejected_before_anything_runs(tmp_path, capsys, fio_shim, args, needles):
    data = tmp_path / "data"
    code, err = cli_main(capsys, *args, "--data", str(data), "--host", HOST, "--no-progress")
    assert code == 2, err
    assert_one_clean_line(err, *needles)
    assert not (data / "raw").exists() and not (data / "scratch").exists()
    assert fio_runs(fio_shim) == []


def test_bad_parameter_via_subprocess_exit_2_no_traceback(tmp_path):
    """The same contract through a real process (exit status 2 as a shell sees it)."""
    res = run_cli("run", "fio-rw-ratio", "--profile", "quick", "--data", str(tmp_path), "--host", HOST,
                  "--set", "rwmixread=[150]")
    assert res.returncode == 2 and TRACEBACK not in res.stderr
    assert_one_clean_line(res.stderr, "rwmixread=150", "0..100")


# -------------------------------------------------------------------------------------- target safety


def _refused(capsys, fio_shim, data: Path, *extra: str, needles=()) -> str:
    """Run a tiny fio sweep that must be refused (exit 1 or 2, one line with needles), fio never started."""
    code, err = cli_main(capsys, "run", "fio-block-size", "--profile", "quick", "--data", str(data), "--host", HOST,
                         "--no-progress", *TINY_FIO, *extra)
    assert code in (1, 2), err
    line = assert_one_clean_line(err, *needles)
    assert fio_runs(fio_shim) == [], "fio was started on a refused target"
    assert not (data / "raw").exists()
    return line


def _refused_both(capsys, fio_shim, data: Path, target: str, needles=()) -> str:
    """The library (target.prepare_test_file) refuses with the exact reason + way out; the CLI refuses
    too (exit 1/2, one line naming the target), fio never started, nothing written."""
    from memstor.core.errors import MemstorError
    from memstor.measure.target import prepare_test_file

    with pytest.raises(MemstorError) as exc:
        prepare_test_file(4 << 20, data, Path(target))
    msg = str(exc.value)
    assert "\n" not in msg and all(n.lower() in msg.lower() for n in needles), msg
    _refused(capsys, fio_shim, data, "--target", target, needles=(target,))
    return msg


def _partition() -> tuple[str | None, str]:
    """A partition device node, or (None, why not)."""
    for d in sorted(Path("/sys/class/block").iterdir()):
        if (d / "partition").exists() and Path(f"/dev/{d.name}").exists():
            return f"/dev/{d.name}", ""
    return None, "this machine has no partition device (only whole disks)"


@pytest.mark.parametrize("kind", ["block-device", "symlink-to-device", "char-device", "partition", "fifo",
                                  "regular-file", "symlink-loop"])
def test_special_targets_refused(tmp_path, capsys, fio_shim, kind):
    data = tmp_path / "data"
    if kind in ("block-device", "symlink-to-device"):
        dev = next((f"/dev/{d.name}" for d in sorted(Path("/sys/class/block").iterdir())
                    if Path(f"/dev/{d.name}").exists() and not (d / "partition").exists()), None)
        if dev is None:
            pytest.skip("no block device node in /dev")
        target = dev
        if kind == "symlink-to-device":
            target = str(tmp_path / "link")
            os.symlink(dev, target)
        before = hashlib.sha256(open(dev, "rb").read(1 << 16)).hexdigest()
        line = _refused_both(capsys, fio_shim, data, target, needles=("block device", "--target"))
        assert "confirm_device" in line  # the way out for someone who really means the raw device
        assert hashlib.sha256(open(dev, "rb").read(1 << 16)).hexdigest() == before
    elif kind == "partition":
        part, why = _partition()
        if part is None:
            pytest.skip(why)
        _refused_both(capsys, fio_shim, data, part, needles=("partition",))
    elif kind == "char-device":
        _refused_both(capsys, fio_shim, data, "/dev/null", needles=("character device",))
    elif kind == "fifo":
        os.mkfifo(tmp_path / "fifo")
        _refused_both(capsys, fio_shim, data, str(tmp_path / "fifo"), needles=("fifo",))
    elif kind == "regular-file":
        f = tmp_path / "precious.db"
        f.write_bytes(b"user data" * 1000)
        digest = hashlib.sha256(f.read_bytes()).hexdigest()
        _refused_both(capsys, fio_shim, data, str(f), needles=("is a file", "never writes"))
        assert hashlib.sha256(f.read_bytes()).hexdigest() == digest
    elif kind == "symlink-loop":
        (tmp_path / "loop").symlink_to(tmp_path / "loop")
        _refused_both(capsys, fio_shim, data, str(tmp_path / "loop"), needles=("--target",))


def test_cli_gives_the_real_reason_for_a_device_target(tmp_path, capsys, fio_shim):
    _refused(capsys, fio_shim, tmp_path / "data", "--target", "/dev/null", needles=("character device",))


def _user_file(scratch: Path, content: bytes = b"somebody's thesis\n" * 50000) -> tuple[Path, str]:
    scratch.mkdir(parents=True, exist_ok=True)
    f = scratch / TESTFILE_NAME
    f.write_bytes(content)
    return f, hashlib.sha256(content).hexdigest()


@pytest.mark.parametrize("case", ["no-marker", "copied-marker", "hard-link", "symlink-out", "dotdot-symlink",
                                  "marker-no-token"])
@pytest.mark.fio
def test_files_memstor_did_not_create_are_never_touched(tmp_path, capsys, fio_shim, case):
    """A test-file name that holds someone's data (or points outside the chosen directory) is refused
    untouched: its bytes hash the same before and after, fio never starts."""
    data = tmp_path / "data"
    scratch = data / "scratch"
    outside = tmp_path / "outside.bin"
    outside.write_bytes(b"outside the chosen directory\n" * 40000)
    out_digest = hashlib.sha256(outside.read_bytes()).hexdigest()
    if case == "no-marker":
        f, digest = _user_file(scratch)
    elif case == "copied-marker":  # a marker copied from a real memstor file, for another inode
        f, digest = _user_file(scratch)
        (scratch / (TESTFILE_NAME + MARKER_SUFFIX)).write_text(json.dumps(
            {"inode": 1, "device": os.stat(f).st_dev, "size_bytes": f.stat().st_size, "status": "ready",
             "token": "00000000000000ff"}))
    elif case == "hard-link":  # memstor's own file, but another name links to it (someone's data)
        code, err = cli_main(capsys, "run", "fio-block-size", "--profile", "quick", "--data", str(data), "--host",
                             HOST, "--no-progress", *TINY_FIO)
        assert code == 0, err
        shutil.rmtree(data / "raw")
        fio_shim.write_text("")
        f = scratch / TESTFILE_NAME
        os.link(f, tmp_path / "someones-link")
        digest = hashlib.sha256(f.read_bytes()).hexdigest()
    elif case in ("symlink-out", "dotdot-symlink"):
        scratch.mkdir(parents=True)
        f = scratch / TESTFILE_NAME
        f.symlink_to(outside if case == "symlink-out" else Path("..") / ".." / outside.name)
        digest = out_digest
    else:  # a marker with the right inode but a file without memstor's token in its first page
        f, digest = _user_file(scratch)
        st = os.stat(f)
        (scratch / (TESTFILE_NAME + MARKER_SUFFIX)).write_text(json.dumps(
            {"inode": st.st_ino, "device": st.st_dev, "size_bytes": st.st_size, "status": "ready",
             "token": "00000000000000ff"}))
    line = _refused(capsys, fio_shim, data, needles=("did not create",))
    assert "move or delete it yourself" in line or "pick another" in line
    assert os.path.lexists(f)
    assert hashlib.sha256(Path(f).read_bytes()).hexdigest() == digest
    assert hashlib.sha256(outside.read_bytes()).hexdigest() == out_digest


def test_host_with_dotdot_cannot_escape_the_data_root(tmp_path, capsys, fio_shim):
    data = tmp_path / "a" / "b" / "data"
    data.mkdir(parents=True)
    code, err = cli_main(capsys, "run", "fio-block-size", "--profile", "quick", "--data", str(data),
                         "--host", "../../../escaped", "--no-progress", *TINY_FIO)
    assert code == 2 and "host name" in err, err
    assert not (tmp_path / "a" / "escaped").exists() and not (tmp_path / "escaped").exists()


def test_read_only_filesystem_refused(tmp_path, capsys, fio_shim):
    """A target on a read-only mount (a tmpfs mounted ro) is refused before anything is written."""
    with tmpfs(tmp_path / "ro", "16m", "ro") as mnt:
        _refused(capsys, fio_shim, tmp_path / "data", "--target", str(mnt), needles=("read-only",))
        assert list(mnt.iterdir()) == []


def test_read_only_bind_mount_refused(tmp_path, capsys, fio_shim):
    """The same through a read-only bind mount of a writable folder (the common `ro` mount of a share)."""
    src, mnt = tmp_path / "src", tmp_path / "bind"
    src.mkdir()
    mnt.mkdir()
    if subprocess.run(["mount", "--bind", str(src), str(mnt)], capture_output=True).returncode != 0:
        pytest.skip("cannot bind-mount here (needs root and mount permission)")
    try:
        if subprocess.run(["mount", "-o", "remount,bind,ro", str(mnt)], capture_output=True).returncode != 0:
            pytest.skip("cannot remount a bind mount read-only here")
        _refused(capsys, fio_shim, tmp_path / "data", "--target", str(mnt), needles=("read-only",))
        assert list(src.iterdir()) == []
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


# ----------------------------------------------------------------------------------------- disk full


def test_no_room_for_file_plus_margin_refused_before_fio(tmp_path, capsys, fio_shim):
    """A 64 MiB target cannot hold a 60 MiB test file plus the margin: refused, nothing written."""
    with tmpfs(tmp_path / "small", "64m") as mnt:
        line = _refused(capsys, fio_shim, tmp_path / "data", "--target", str(mnt), "--set", "file_size=60m",
                        "--set", "direct=0", needles=("no room", str(mnt)))
        assert "smaller file size" in line
        assert list(mnt.iterdir()) == []


@needs_fio
@pytest.mark.fio
def test_disk_fills_during_run(tmp_path):
    """Data and target on one 64 MiB tmpfs; after the first point another file fills the disk. The
    run ends with a clear one-line error, the first point's files are intact, no temp files remain,
    and the test file is removed or still verifiably memstor's (never a half-written foreign file)."""
    with tmpfs(tmp_path / "small", "64m") as mnt:
        data = mnt / "data"
        args = ["run", "fio-block-size", "--profile", "quick", "--data", str(data), "--host", HOST, "--no-progress",
                *TINY_FIO, *FIO_BS, "--set", "direct=0", "--set", "runtime_s=1"]
        errf = tmp_path / "stderr.txt"
        proc = start_cli(*args, stderr_path=errf)
        rdir = raw_dir(data, "fio-block-size")
        try:
            wait_for(lambda: done_points(rdir) >= 1, 60, what="first point done")
        except AssertionError:
            stop_group(proc, signal.SIGKILL)
            raise
        first = snapshot(rdir)
        with open(mnt / "filler", "wb") as fh:  # fill every free byte
            with contextlib.suppress(OSError):
                while True:
                    fh.write(b"\0" * (1 << 20))
                    fh.flush()
        code = reap(proc, 120)
        err = errf.read_text()
        assert code == 1, err
        assert TRACEBACK not in err and "internal error" not in err, err
        now = snapshot(rdir)
        done = [n for n, m in meta_of(rdir).items() if m.get("status") == "done"]
        assert done, "the completed point lost its meta"
        for name in done:
            for suffix in (".json", ".meta.json"):
                key = name + suffix
                if key in first:
                    assert now[key] == first[key], f"{key} changed after the disk filled"
        assert temp_files(data) == []
        lines = [ln for ln in err.splitlines() if "space" in ln.lower() or "no room" in ln.lower()]
        assert lines, f"no clear 'no space' message:\n{err}"
        tf = data / "scratch" / TESTFILE_NAME
        assert not tf.exists() or owned(tf)[0]


# ------------------------------------------------------------------------------------- missing tools


def test_no_fio_one_line_with_install_command(tmp_path):
    """PATH without fio: one line naming the install command, exit 1, no traceback, no raw point."""
    empty = tmp_path / "bin"
    empty.mkdir()
    res = run_cli("run", "fio-block-size", "--profile", "quick", "--data", str(tmp_path / "data"), "--host", HOST,
                  "--no-progress", *TINY_FIO, env=cli_env(path=str(empty)))
    assert res.returncode == 1, res.stderr
    assert_one_clean_line(res.stderr, "fio not found", "apt-get install fio")
    assert not list((tmp_path / "data").glob("raw/*/*/*.json"))


def test_no_c_compiler_one_line_with_install_command(tmp_path, monkeypatch):
    """memstor.measure.loadlat.build (the `make loadlat` command) without a C compiler: MemstorError naming the
    package to install; nothing is written."""
    from memstor.core.errors import MemstorError
    from memstor.measure.loadlat import build

    monkeypatch.setenv("PATH", str(tmp_path))  # no cc on it
    monkeypatch.delenv("CC", raising=False)
    out = tmp_path / "bin" / "loadlat"
    with pytest.raises(MemstorError) as exc:
        build(ROOT, out)
    msg = str(exc.value)
    assert "\n" not in msg and "not found" in msg and "apt-get install build-essential" in msg
    assert not out.exists()
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    with pytest.raises(MemstorError, match="install gcc"):
        build(ROOT, out)


@pytest.mark.usefixtures("faked_machine")  # the tool is judged, not this machine's CPUs
def test_no_mlc_tool_mlc_one_line_and_auto_falls_back(tmp_path, capsys, monkeypatch):
    """tool=mlc without Intel MLC: one line with the download URL (exit 2); tool=auto picks loadlat."""
    from memstor.measure.mlc import resolve_tool

    monkeypatch.setenv("PATH", str(tmp_path))
    code, err = cli_main(capsys, "run", "mlc-loaded-latency", "--profile", "quick", "--data", str(tmp_path / "d"),
                         "--host", HOST, "--no-progress", "--set", "tool=mlc")
    assert code == 2
    assert_one_clean_line(err, "tool=mlc", "download", "tool=loadlat")
    assert not (tmp_path / "d" / "raw").exists()
    if LOADLAT.is_file():
        assert resolve_tool("auto") == ("loadlat", str(LOADLAT))


@pytest.mark.usefixtures("faked_machine")  # the tool is judged, not this machine's CPUs
def test_loadlat_not_built_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LOADLAT", str(tmp_path / "missing-loadlat"))
    monkeypatch.setenv("PATH", str(tmp_path))
    code, err = cli_main(capsys, "run", "mlc-loaded-latency", "--profile", "quick", "--data", str(tmp_path / "d"),
                         "--host", HOST, "--no-progress", "--set", "tool=loadlat")
    assert code in (1, 2)
    assert_one_clean_line(err, "make loadlat")


@pytest.mark.soak
def test_no_xelatex_or_pandoc_html_still_built(tmp_path):
    """`memstor report` with neither xelatex nor pandoc on PATH: report.html written, exit 0, one message
    line with the install command; no PDF."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Reliability\nSome *text*."),
                nbformat.v4.new_code_cell("print(6 * 7)", outputs=[nbformat.v4.new_output(
                    "stream", name="stdout", text="42\n")], execution_count=1)]
    src = tmp_path / "nb.ipynb"
    nbformat.write(nb, src)
    empty = tmp_path / "bin"
    empty.mkdir()
    res = subprocess.run([cli.sys.executable, "-m", "memstor.cli", "report", str(src), str(tmp_path / "out")],
                         capture_output=True, text=True, timeout=300, env=cli_env(path=str(empty)), cwd=ROOT)
    assert res.returncode == 0, res.stderr
    assert TRACEBACK not in res.stderr
    html = (tmp_path / "out" / "report.html").read_text()
    assert "Reliability" in html and "42" in html
    assert not (tmp_path / "out" / "report.pdf").exists()
    assert_one_clean_line(res.stderr, "PDF not built", "xelatex", "pandoc", "apt-get install")


# ------------------------------------------------------------------------------------- interruption


def _fio_names(data: Path) -> list[str]:
    m = manifest_of(raw_dir(data, "fio-block-size"))
    return [p["name"] for p in m["points"]]


def _check_resumed(data: Path, experiment: str, n_points: int, kept: dict, kind: str) -> None:
    """After the rerun: kept points untouched, every point done once, CSV/manifest consistent, clean."""
    rdir = raw_dir(data, experiment)
    now = snapshot(rdir)
    for key, sig in kept.items():
        assert now.get(key) == sig, f"completed point file {key} was rewritten by the resume"
    metas = meta_of(rdir)
    assert len(metas) == n_points and all(m["status"] == "done" for m in metas.values()), metas
    man = manifest_of(rdir)
    names = [p["name"] for p in man["points"]]
    assert len(names) == len(set(names)) == n_points and set(names) == set(metas)
    kept_names = {k.rsplit(".meta.json", 1)[0] for k in kept if k.endswith(".meta.json")}
    for p in man["points"]:
        assert p["status"] == ("cached" if p["name"] in kept_names else "done"), p
        assert p["raw"] and (rdir / p["raw"]).is_file()
    rows = read_csv(data / "processed" / HOST / f"{experiment}.csv")
    if kind == "fio":
        keys = [(r["point"], r["direction"]) for r in rows]
        assert len(keys) == len(set(keys)) == n_points, keys
        assert all(r["status"] == "done" and float(r["iops"]) > 0 and float(r["lat_mean_us"]) > 0 for r in rows)
        assert_finite_non_negative(rows, ["iops", "bw_MBps", "lat_mean_us", "lat_max_us", "runtime_s"])
        tf = data / "scratch" / TESTFILE_NAME
        ok, why = owned(tf)
        assert ok, why  # reused safely: ownership marker intact
    else:
        # one value per point x test x traffic x delay x run, and per node pair (matrices) and kind (c2c: HIT, HITM)
        keys = [(r["point"], r["test"], r["traffic"], r["inject_delay"], r["run"], r["src_node"], r["dst_node"],
                 c2c_kind(r["detail"]) if r["test"] == "c2c_latency" else "") for r in rows]
        assert len(keys) == len(set(keys)), "duplicate rows"
        want = set(mem_points(*TINY_MEM, "--set", "traffic=[R,W5]"))
        assert {r["point"] for r in rows} == want and all(r["status"] == "done" for r in rows)
        assert_finite_non_negative(rows, ["latency_ns", "bandwidth_MBps"])
        loaded = [r for r in rows if r["test"] == "loaded_latency"]
        assert len(loaded) == 4 and all(float(r["latency_ns"]) > 0 for r in loaded)
    assert temp_files(data) == []
    assert not live_pids(b"fio", data) and not live_pids(b"loadlat", data)


def interrupt_and_resume(tmp_path: Path, kind: str, sig: int, group: bool, after_done: int, delay_s: float,
                         env: dict | None = None) -> dict:
    """Start a tiny sweep, send `sig` once `after_done` points are done plus `delay_s`, then rerun and
    check everything. Returns facts for the caller (exit status, stderr, kept points)."""
    data = tmp_path / "data"
    if kind == "fio":
        experiment, extra, n_points = "fio-block-size", [*TINY_FIO, *FIO_BS], 3
    else:
        if MEM_SKIP:
            pytest.skip(MEM_SKIP)
        experiment, extra = "mlc-loaded-latency", [*TINY_MEM, "--set", "traffic=[R,W5]"]
        n_points = len(mem_points(*extra))
    args = ["run", experiment, "--profile", "quick", "--data", str(data), "--host", HOST, "--no-progress", *extra]
    errf = tmp_path / "stderr-1.txt"
    proc = start_cli(*args, env=env, stderr_path=errf)
    rdir = raw_dir(data, experiment)
    try:
        wait_for(lambda: done_points(rdir) >= after_done and rdir.is_dir(), 90, what=f"{after_done} points done")
    except AssertionError:
        stop_group(proc, signal.SIGKILL)
        reap(proc)
        raise
    time.sleep(delay_s)
    stop_group(proc, sig, group)
    code = reap(proc, 60)
    err = errf.read_text()
    assert TRACEBACK not in err, err
    # what survived: points whose meta said done at the moment of the signal
    kept = {}
    snap = snapshot(rdir) if rdir.is_dir() else {}
    for name, meta in (meta_of(rdir) if rdir.is_dir() else {}).items():
        if meta.get("status") == "done":
            suffix = ".json" if kind == "fio" else ".txt"
            kept[name + ".meta.json"] = snap[name + ".meta.json"]
            kept[name + suffix] = snap[name + suffix]
    if sig == signal.SIGINT and code != 0:
        assert code in (1, 130), (code, err)
        assert_one_clean_line(err, "rerun the same command to resume")
        assert temp_files(data) == [], "Ctrl-C left temp files"
    # give orphans (SIGKILL of the sweep alone) a moment, as a user would before rerunning
    res = run_cli(*args, env=env, timeout=180)
    assert res.returncode == 0, res.stderr
    assert TRACEBACK not in res.stderr
    _check_resumed(data, experiment, n_points, kept, kind)
    return {"code": code, "stderr": err, "kept": len(kept) // 2}


@needs_fio
@pytest.mark.fio
def test_ctrl_c_during_second_fio_point_then_resume(tmp_path):
    """Ctrl-C (SIGINT to the process group, as a terminal sends it) in the middle of point 2 of 3."""
    facts = interrupt_and_resume(tmp_path, "fio", signal.SIGINT, True, after_done=1, delay_s=0.4)
    assert facts["code"] in (1, 130) and facts["kept"] >= 1


@needs_loadlat
@pytest.mark.fio
@pytest.mark.loadlat
def test_sigkill_of_the_sweep_during_loadlat_then_resume(tmp_path):
    """SIGKILL of the sweep process alone (OOM killer) while loadlat measures point 2 of 4; the rerun
    cleans the temp file and redoes the point. tool=auto without MLC on PATH uses loadlat."""
    env = cli_env(path=os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                                       if not (Path(p) / "mlc").exists()))
    facts = interrupt_and_resume(tmp_path, "mem", signal.SIGKILL, False, after_done=1, delay_s=0.2, env=env)
    assert facts["code"] == -signal.SIGKILL and facts["kept"] >= 1
    tools = {m["tool"] for m in meta_of(raw_dir(tmp_path / "data", "mlc-loaded-latency")).values()}
    assert tools == {"loadlat"}


@pytest.mark.soak
@needs_fio
@pytest.mark.fio
def test_sigkill_of_the_whole_group_during_fio_then_resume(tmp_path):
    """kill -9 of the sweep and its fio together, half-way through point 2."""
    facts = interrupt_and_resume(tmp_path, "fio", signal.SIGKILL, True, after_done=1, delay_s=0.5)
    assert facts["code"] == -signal.SIGKILL


@needs_loadlat
@needs_two_cpus
@pytest.mark.soak
@pytest.mark.fio
@pytest.mark.loadlat
def test_loadlat_dies_with_a_killed_sweep(tmp_path):
    data = tmp_path / "data"
    args = ["run", "mlc-loaded-latency", "--profile", "quick", "--data", str(data), "--host", HOST, "--no-progress",
            *TINY_MEM, "--set", "seconds_per_point=2", "--set", "traffic=[R]"]
    proc = start_cli(*args)
    rdir = raw_dir(data, "mlc-loaded-latency")
    wait_for(lambda: bool(live_pids(b"loadlat", Path(f"-c{MEM_CPUS[0]}"))) or bool(list(rdir.glob("*.tmp*"))), 60,
             what="loadlat running")
    time.sleep(0.3)
    before = {p for p in live_pids(b"loadlat", Path("-b4096"))}
    stop_group(proc, signal.SIGKILL, group=False)
    reap(proc)
    time.sleep(0.5)
    after = {p for p in live_pids(b"loadlat", Path("-b4096"))} & before
    for pid in after:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    assert before and not after, f"orphan loadlat still running: {after}"


SOAK_CASES = 12


@pytest.mark.soak
@pytest.mark.parametrize("i", range(SOAK_CASES))
@pytest.mark.fio
@pytest.mark.loadlat
def test_soak_interrupt_at_random_moments(tmp_path, i):
    """Random signal (Ctrl-C to the group, SIGKILL of the sweep, SIGKILL of the group), random
    experiment (fio or loadlat), random moment (0..2 points done + 0..1.2 s)."""
    rng = random.Random(1000 + i)
    kind = rng.choice(["fio", "mem"]) if LOADLAT.is_file() else "fio"
    sig, group = rng.choice([(signal.SIGINT, True), (signal.SIGKILL, False), (signal.SIGKILL, True)])
    after, delay = rng.randint(0, 2), rng.uniform(0, 1.2)
    try:
        interrupt_and_resume(tmp_path, kind, sig, group, after_done=after, delay_s=delay)
    except AssertionError as err:
        raise AssertionError(f"case {i}: {kind} sig={sig} group={group} after={after} delay={delay:.2f}: {err}") from None


# -------------------------------------------------------------------------------------- concurrency


def _concurrent(tmp_path: Path, first_args: list, second_args: list, experiment: str) -> tuple[str, int]:
    data = tmp_path / "data"
    base = ["run", experiment, "--profile", "quick", "--data", str(data), "--host", HOST, "--no-progress"]
    errf = tmp_path / "first.txt"
    proc = start_cli(*base, *first_args, stderr_path=errf)
    rdir = raw_dir(data, experiment)
    try:
        wait_for(lambda: (rdir / ".lock").is_file() and (rdir / ".lock").read_text().strip() == str(proc.pid),
                 60, what="the first sweep holding the lock")
        res = run_cli(*base, *second_args, timeout=120)
        first_code = reap(proc, 120)
    finally:
        stop_group(proc, signal.SIGKILL)
    assert first_code == 0, errf.read_text()
    assert res.returncode == 1, res.stderr
    line = assert_one_clean_line(res.stderr, "another memstor sweep is running", str(proc.pid))
    # the experiment's lock, or (fio) the lock on the folder of the shared test file
    assert (str(rdir) in line or str(data / "scratch") in line) and "rerun" in line
    return line, proc.pid


@needs_fio
@pytest.mark.fio
def test_second_identical_fio_sweep_refuses_with_the_lock(tmp_path):
    _concurrent(tmp_path, [*TINY_FIO, *FIO_BS], [*TINY_FIO, *FIO_BS], "fio-block-size")
    data = tmp_path / "data"
    rdir = raw_dir(data, "fio-block-size")
    metas = meta_of(rdir)
    assert len(metas) == 3 and all(m["status"] == "done" for m in metas.values())
    # one writer: every meta records the first process's command and no point ran twice
    rows = read_csv(data / "processed" / HOST / "fio-block-size.csv")
    assert len(rows) == 3 and len({r["point"] for r in rows}) == 3
    assert temp_files(data) == [] and owned(data / "scratch" / TESTFILE_NAME)[0]


@pytest.mark.soak
@needs_loadlat
@needs_two_cpus
@pytest.mark.fio
@pytest.mark.loadlat
def test_second_memory_sweep_refuses_with_the_lock(tmp_path):
    _concurrent(tmp_path, [*TINY_MEM, "--set", "traffic=[R]"], [*TINY_MEM, "--set", "traffic=[R]"],
                "mlc-loaded-latency")
    rdir = raw_dir(tmp_path / "data", "mlc-loaded-latency")
    metas = meta_of(rdir)
    # every point the run planned (7 since the family measures the matrices, c2c and both idle pages) ran once
    assert len(metas) == len(manifest_of(rdir)["points"]) >= 3 and all(m["status"] == "done" for m in metas.values())


@pytest.mark.soak
@needs_fio
@pytest.mark.fio
def test_second_sweep_with_other_file_size_does_not_touch_the_running_test_file(tmp_path):
    data = tmp_path / "data"
    base = ["run", "fio-block-size", "--profile", "quick", "--data", str(data), "--host", HOST, "--no-progress"]
    proc = start_cli(*base, *TINY_FIO, *FIO_BS, "--set", "runtime_s=1")
    rdir = raw_dir(data, "fio-block-size")
    tf = data / "scratch" / TESTFILE_NAME
    try:
        wait_for(lambda: (rdir / ".lock").is_file() and tf.is_file(), 60, what="first sweep running")
        ino = tf.stat().st_ino
        res = run_cli(*base, *TINY_FIO, "--set", "file_size=8m", timeout=120)
        reap(proc, 120)
    finally:
        stop_group(proc, signal.SIGKILL)
    assert "another memstor sweep is running" in res.stderr, res.stderr
    assert tf.stat().st_ino == ino, "the running sweep's test file was replaced"
