"""ioarrive on aarch64 (issue 40): cross-built by `make ioarrive-arm64` (aarch64-linux-gnu-gcc, -Wall -Wextra,
static) and run under qemu-aarch64 user-mode emulation, as tests/test_loadlat_arm64.py does for loadlat.

Functional only: the build, a usage error, a virtual-time M/M/1 run (exact in any emulation: no clock is read
for its answer) and a real file run, where the engine that works under qemu-user is chosen and named. Needs
`scripts/install-system-deps --arm64`; skips with the reason without it, unless MEMSTOR_REQUIRE_ARM64=1.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from memstor.analysis.openloop import mm1_response_us
from memstor.parse.ioarrive import parse_ioarrive
from test_loadlat_arm64 import ARM64_CC, EM_AARCH64, _missing, _qemu, elf_header

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.qemu


@pytest.fixture(scope="module")
def arm64(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    tmp = tmp_path_factory.mktemp("ioarrive-arm64")
    why = _missing(tmp)
    if why:
        if os.environ.get("MEMSTOR_REQUIRE_ARM64") == "1":
            pytest.fail(f"MEMSTOR_REQUIRE_ARM64=1 but {why}")
        pytest.skip(why)
    out = tmp / "ioarrive"
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    proc = subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), "ioarrive-arm64",
                           f"IOARRIVE_ARM64={out}", f"ARM64_CC={ARM64_CC}"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, f"make ioarrive-arm64 failed:\n{proc.stdout}\n{proc.stderr}"
    return out, proc


def run(exe: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([_qemu(), str(exe), *args], capture_output=True, text=True, timeout=120)


def test_arm64_build_run_and_known_answer(arm64, tmp_path):
    exe, proc = arm64
    assert proc.stderr == "", f"warnings from {ARM64_CC}:\n{proc.stderr}"
    assert f"-O2 -g -Wall -Wextra -pthread -static -o {exe} lib/ioarrive/" in proc.stdout
    assert elf_header(exe) == (EM_AARCH64, False)
    bad = run(exe, "--rate", "0", "--sim", "servers=1,service=det:1")
    assert bad.returncode == 2 and bad.stdout == "" and len(bad.stderr.splitlines()) == 1

    res = run(exe, "--sim", "servers=1,service=exp:10", "--virtual", "--rate", "50000", "--runtime", "4")
    assert res.returncode == 0, res.stderr
    (row,) = parse_ioarrive(res.stdout)
    assert row["open_loop"] is True, row["reasons"]
    assert row["resp_mean_us"] == pytest.approx(mm1_response_us(10.0, rho=0.5), rel=0.03)

    target = tmp_path / "t.dat"
    target.write_bytes(os.urandom(4 << 20))
    res = run(exe, "--target", str(target), "--confirm-target", str(target), "--rate", "200", "--runtime", "1")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["engine"]["name"] in ("io_uring", "libaio", "sync") and doc["engine"]["why"].startswith("auto: ")
    assert doc["directions"]["read"]["completed"] > 0 and doc["directions"]["read"]["errors"] == 0
