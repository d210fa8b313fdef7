"""The test file a local fio run keeps for reuse: `memstor run` names it, its size and the command that removes
it; `memstor testfile --remove --target DIR` removes memstor's own file only."""

from __future__ import annotations

import shlex
import subprocess
import sys

import pytest

MEMSTOR = [sys.executable, "-m", "memstor.cli"]
TINY = ["--set", "runtime_s=0.5", "--set", "ramp_s=0", "--set", "file_size=16m", "--set", "bs=[4k]",
        "--set", "rw=[randread]", "--set", "seq_bs=[]", "--set", "repetitions=1", "--set", "ioengine=psync"]


def _memstor(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*MEMSTOR, *args], capture_output=True, text=True, timeout=300)


@pytest.mark.fio
@pytest.mark.loadlat
def test_run_names_the_kept_file_and_its_removal_command_which_works(tmp_path):
    target = tmp_path / "target dir"
    target.mkdir()
    run = _memstor("run", "fio-block-size", "--profile", "quick", "--target", str(target),
                   "--data", str(tmp_path / "data"), "--no-progress", *TINY)
    assert run.returncode == 0, run.stderr
    kept = target / "memstor-testfile.dat"
    assert kept.is_file() and (target / "memstor-testfile.dat.memstor.json").is_file()
    notice = run.stderr.strip().splitlines()[-1]
    assert notice.startswith(f"memstor run: kept the test file {kept} (16 MiB) for the next run")
    command = notice.split("remove it with: ", 1)[1]
    assert shlex.split(command) == ["memstor", "testfile", "--remove", "--target", str(target)]

    removed = _memstor(*shlex.split(command)[1:])
    assert removed.returncode == 0, removed.stderr
    assert removed.stderr.strip() == f"memstor testfile: removed {kept} (16 MiB)"
    assert list(target.iterdir()) == []
    again = _memstor("testfile", "--remove", "--target", str(target))
    assert again.returncode == 0 and "nothing to remove" in again.stderr


def test_remove_leaves_a_file_that_is_not_memstors(tmp_path):
    foreign = tmp_path / "memstor-testfile.dat"
    foreign.write_bytes(b"the user's data")
    res = _memstor("testfile", "--remove", "--target", str(tmp_path))
    assert res.returncode != 0
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "is not memstor's test file" in lines[0] and "Traceback" not in res.stderr
    assert foreign.read_bytes() == b"the user's data"


@pytest.mark.parametrize("args, expected", [
    (["--remove"], "give --target DIR"),
    (["--remove", "--device", "/dev/null", "--target", "x"], "a raw device is never removed"),
    (["--target", "x"], "give --size BYTES"),
])
def test_testfile_usage_errors_are_one_line(tmp_path, args, expected):
    res = _memstor("testfile", *args)
    assert res.returncode == 2
    assert expected in res.stderr and len(res.stderr.strip().splitlines()) == 1
