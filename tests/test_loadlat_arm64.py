"""loadlat on aarch64 (issue 19): cross-built by `make loadlat-arm64` (aarch64-linux-gnu-gcc, -Wall -Wextra,
static) and run under qemu-aarch64 user-mode emulation.

Functional only: the options, exit statuses, MLC's text layout (read by memstor's MLC parser), the JSON
sidecar and the arm64 choices (CNTVCT_EL0 stamps, NEON kernels with STNP, the cache line from sysfs). Numbers
under emulation mean nothing and are not checked. Tiny buffers and 0.05-0.1 s points: the whole file takes
about 15 s.

Needs `scripts/install-system-deps --arm64` (gcc-aarch64-linux-gnu, libc6-dev-arm64-cross, qemu-user) and
skips with the reason without them, unless MEMSTOR_REQUIRE_ARM64=1 (set by .ci/run): then it fails.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from memstor.core.schema import traffic_info
from memstor.parse.mlc import parse_mlc

ROOT = Path(__file__).resolve().parents[1]
ARM64_CC = os.environ.get("ARM64_CC") or "aarch64-linux-gnu-gcc"
INSTALL_HINT = "scripts/install-system-deps --arm64 (apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user)"
EM_AARCH64 = 183
pytestmark = pytest.mark.qemu  # every test cross-builds loadlat and runs it under qemu-user
PEAK_TRAFFIC = ["read-only", "3:1", "2:1", "1:1", "stream-triad"]


def _qemu() -> str | None:
    return shutil.which("qemu-aarch64") or shutil.which("qemu-aarch64-static")


def _missing(tmp: Path) -> str | None:
    """Why the cross build or its emulation cannot run here, or None."""
    if shutil.which(ARM64_CC.split()[0]) is None:
        return f"no aarch64 cross compiler ({ARM64_CC}): {INSTALL_HINT}"
    probe = tmp / "probe.c"
    probe.write_text("#include <stdio.h>\nint main(void) { puts(\"ok\"); return 0; }\n")
    proc = subprocess.run([*ARM64_CC.split(), "-static", "-o", str(tmp / "probe"), str(probe)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        first = (proc.stderr.strip().splitlines() or ["?"])[0]
        return (f"{ARM64_CC} cannot link a static aarch64 program (no aarch64 C library? {first}): "
                f"{INSTALL_HINT}")
    if _qemu() is None:
        return f"no qemu-aarch64 (user-mode emulation): {INSTALL_HINT}"
    return None


def cross_build(tmp: Path) -> tuple[Path, subprocess.CompletedProcess]:
    """(the executable, the make run) of `make loadlat-arm64` into the folder ``tmp``."""
    why = _missing(tmp)
    if why:
        if os.environ.get("MEMSTOR_REQUIRE_ARM64") == "1":
            pytest.fail(f"MEMSTOR_REQUIRE_ARM64=1 but {why}")
        pytest.skip(why)
    out = tmp / "loadlat"
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}  # not -s
    proc = subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), "loadlat-arm64",
                           f"LOADLAT_ARM64={out}", f"ARM64_CC={ARM64_CC}"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, f"make loadlat-arm64 failed:\n{proc.stdout}\n{proc.stderr}"
    return out, proc


@pytest.fixture(scope="module")
def arm64(loadlat_arm64_built) -> tuple[Path, subprocess.CompletedProcess]:
    """(the executable, the make run) of `make loadlat-arm64` into a temporary folder (conftest: once per session,
    shared with test_mem_hierarchy's arm64 tests)."""
    return loadlat_arm64_built


@pytest.fixture(scope="module")
def exe(arm64) -> Path:
    return arm64[0]


def run(exe: Path, *args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """loadlat under qemu-aarch64 (text output)."""
    return subprocess.run([_qemu(), str(exe), *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def one_line_usage_error(res: subprocess.CompletedProcess) -> str:
    """Exit status 2, nothing on stdout, one line `loadlat: ...` on stderr; returns the line."""
    assert res.returncode == 2, (res.returncode, res.stdout, res.stderr)
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("loadlat: "), res.stderr
    assert res.stdout == ""
    return lines[0]


def load_cpu_args() -> list[str]:
    """-k1 beside the latency CPU when two CPUs are allowed, else -T (load threads only)."""
    cpus = sorted(os.sched_getaffinity(0))
    return [f"-c{cpus[0]}", f"-k{cpus[1]}"] if len(cpus) >= 2 else ["-T"]


def elf_header(path: Path) -> tuple[int, bool]:
    """(e_machine, has a PT_INTERP program header = dynamically linked) of a 64-bit little-endian ELF."""
    data = path.read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, "not a 64-bit little-endian ELF"
    machine = struct.unpack_from("<H", data, 18)[0]
    phoff = struct.unpack_from("<Q", data, 0x20)[0]
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    types = [struct.unpack_from("<I", data, phoff + i * phentsize)[0] for i in range(phnum)]
    return machine, 3 in types  # PT_INTERP = 3


# ---------------------------------------------------------------------------------------------- build


def test_cross_build_is_warning_free_static_aarch64(arm64):
    exe, proc = arm64
    assert proc.stderr == "", f"warnings from {ARM64_CC} -Wall -Wextra:\n{proc.stderr}"
    assert f"-O2 -g -Wall -Wextra -pthread -static -o {exe} lib/loadlat/" in proc.stdout
    machine, dynamic = elf_header(exe)
    assert machine == EM_AARCH64 and not dynamic
    rule = "$(ARM64_CC) -O2 -g -Wall -Wextra -pthread -static -o $@ lib/loadlat/*.c -lm"
    assert rule in (ROOT / "Makefile").read_text()


def test_non_temporal_stores_are_stnp(exe):
    """The NEON kernel streams with STNP of a Q-register pair, the generic one with STNP of two W registers."""
    objdump = shutil.which("aarch64-linux-gnu-objdump")
    if objdump is None:
        pytest.skip("no aarch64-linux-gnu-objdump (binutils-aarch64-linux-gnu)")
    asm = subprocess.run([objdump, "-d", "--no-show-raw-insn", str(exe)], capture_output=True, text=True,
                         check=True).stdout
    ops = [line.split("\t")[1:3] for line in asm.splitlines() if "\tstnp\t" in line]
    assert any(o[1].startswith("q") for o in ops), "no STNP of Q registers (NEON kernel)"
    assert any(o[1].startswith("w") for o in ops), "no STNP of W registers (generic kernel)"


# ------------------------------------------------------------------------------------- usage errors


def test_help_and_usage_errors(exe):
    res = run(exe, "--help")
    assert res.returncode == 0 and res.stderr == ""
    assert res.stdout.startswith("loadlat (Memory Latency Checker-compatible) - v")
    for opt in ("--idle_latency", "--loaded_latency", "--peak_injection_bandwidth", "-W<n>"):
        assert opt in res.stdout, opt
    assert "unknown option '--bogus'" in one_line_usage_error(run(exe, "--bogus"))
    assert "-t" in one_line_usage_error(run(exe, "--idle_latency", "-tx"))


@pytest.mark.parametrize("code", ["W1", "W11", "W0"])
def test_unsupported_traffic_code_exits_2_with_one_line(exe, code):
    line = one_line_usage_error(run(exe, "--loaded_latency", f"-{code}", "-d0", "-b4m", "-t0.05"))
    assert f"'-{code}'" in line and "-W10" in line


@pytest.mark.parametrize("isa", ["avx2", "sse2", "nosuch"])
def test_kernel_this_cpu_lacks_exits_2_with_one_line(exe, isa):
    line = one_line_usage_error(run(exe, "--idle_latency", "-b4m", "-t0.05", env={"LOADLAT_ISA": isa}))
    assert f"LOADLAT_ISA={isa}" in line and "aarch64" in line and "neon or generic" in line


# ------------------------------------------------------------------------------------------- modes


def test_idle_latency_mlc_layout_parser_and_json(exe, tmp_path):
    js = tmp_path / "idle.json"
    res = run(exe, "--idle_latency", "-b4m", "-t0.1", f"--json={js}")
    assert res.returncode == 0, res.stderr
    assert "Each iteration took " in res.stdout and "# loadlat v" in res.stdout
    assert "neon kernels" in res.stdout
    parsed = parse_mlc(res.stdout, "idle.txt")
    assert parsed.errors == []
    (row,) = parsed.rows
    assert row["tool"] == "loadlat" and row["test"] == "idle_latency" and row["latency_ns"] > 0
    doc = json.loads(js.read_text())
    assert doc["tool"] == "loadlat" and doc["mode"] == "idle_latency" and doc["isa"] == "neon"
    assert doc["arrival_clock"] == "cntvct_el0"
    cal = doc["calibration"]
    assert cal["tsc_ghz"] in (0, None)  # no TSC on aarch64
    assert cal["arrival_clock_ghz"] > 0 and cal["core_ghz"] > 0 and cal["delay_ns_per_unit"] > 0
    assert doc["chain_slot_bytes"] in (32, 64, 128, 256)  # the host's sysfs value (qemu passes /sys through)
    assert [p["status"] for p in doc["points"]] == ["ok"]


def test_memstor_parse_cli_reads_arm64_output(exe, tmp_path):
    res = run(exe, "--idle_latency", "-b4m", "-t0.05")
    assert res.returncode == 0, res.stderr
    (tmp_path / "idle.txt").write_text(res.stdout)
    proc = subprocess.run([sys.executable, "-m", "memstor.cli", "parse", "--kind", "mlc", str(tmp_path / "idle.txt")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    header, row, *rest = proc.stdout.splitlines()
    cells = dict(zip(header.split(","), row.split(",")))
    assert cells["tool"] == "loadlat" and cells["test"] == "idle_latency" and not rest


def test_loaded_latency_two_delays(exe, tmp_path):
    delays = tmp_path / "delays.txt"
    delays.write_text("0\n200\n")
    js = tmp_path / "loaded.json"
    res = run(exe, "--loaded_latency", "-b4m", "-t0.1", f"-g{delays}", *load_cpu_args(), "-W5", f"--json={js}")
    assert res.returncode == 0, res.stderr
    parsed = parse_mlc(res.stdout, "loaded.txt")
    assert parsed.errors == []
    assert [r["inject_delay"] for r in parsed.rows] == [0, 200]
    assert {r["test"] for r in parsed.rows} == {"loaded_latency"} and {r["traffic"] for r in parsed.rows} == {"1:1"}
    doc = json.loads(js.read_text())
    assert [p["delay"] for p in doc["points"]] == [0, 200]
    assert all(p["status"] == "ok" for p in doc["points"])
    assert doc["traffic"]["code"] == "W5" and doc["traffic"]["non_temporal"] is False


@pytest.mark.parametrize("code, isa", [("W6", "neon"), ("W10", "neon"), ("W7", "generic")])
def test_non_temporal_traffic_runs(exe, tmp_path, code, isa):
    """W6..W10 run on aarch64 with STNP (a hint: README, *arm64*), in the NEON and the generic kernel."""
    js = tmp_path / "nt.json"
    res = run(exe, "--loaded_latency", "-b4m", "-t0.05", "-d0", *load_cpu_args(), f"-{code}", f"--json={js}",
              env={"LOADLAT_ISA": isa})
    assert res.returncode == 0, res.stderr
    (row,) = parse_mlc(res.stdout, "nt.txt").rows
    assert row["inject_delay"] == 0
    doc = json.loads(js.read_text())
    assert doc["isa"] == isa and doc["traffic"]["code"] == code and doc["traffic"]["non_temporal"] is True
    assert doc["points"][0]["status"] == "ok"


def test_peak_injection_bandwidth(exe, tmp_path):
    js = tmp_path / "peak.json"
    res = run(exe, "--peak_injection_bandwidth", "-b4m", "-t0.05", f"--json={js}")
    assert res.returncode == 0, res.stderr
    parsed = parse_mlc(res.stdout, "peak.txt")
    assert parsed.errors == []
    assert [r["traffic"] for r in parsed.rows] == PEAK_TRAFFIC
    assert all(r["test"] == "peak_injection_bandwidth" and r["bandwidth_MBps"] > 0 for r in parsed.rows)
    doc = json.loads(js.read_text())
    assert doc["mode"] == "peak_injection_bandwidth" and len(doc["points"]) == 5


@pytest.mark.parametrize("content, expect", [("128", 128), ("256", 256), ("96", 64), ("x", 64), (None, 64)])
def test_cache_line_from_sysfs(exe, tmp_path, content, expect):
    """The latency chain's slot is cpu0's coherency_line_size (LOADLAT_CPU_DIR stands in for
    /sys/devices/system/cpu); 64 when it is missing or not a power of two."""
    cpu_dir = tmp_path / "cpu"
    index0 = cpu_dir / "cpu0" / "cache" / "index0"
    index0.mkdir(parents=True)
    if content is not None:
        (index0 / "coherency_line_size").write_text(content + "\n")
    js = tmp_path / "idle.json"
    res = run(exe, "--idle_latency", "-b1m", "-t0.05", f"--json={js}", env={"LOADLAT_CPU_DIR": str(cpu_dir)})
    assert res.returncode == 0, res.stderr
    assert f"random cyclic chain of {(1 << 20) // expect} slots of {expect} bytes" in res.stdout
    assert json.loads(js.read_text())["chain_slot_bytes"] == expect


@pytest.mark.parametrize("share, code, label, isa", [(70, "S70", "4:3", "neon"), (40, "S40", "2:3-nt", "neon"),
                                                     (40, "S40", "2:3-nt", "generic")])
def test_read_share_traffic_runs_and_parses(exe, tmp_path, share, code, label, isa):
    """--read_share=P on aarch64: plain stores from 50 % up, STNP below (a hint there: README, *arm64*), in the
    NEON and the generic kernel; memstor parses the share back from the command line."""
    js = tmp_path / "share.json"
    res = run(exe, "--loaded_latency", "-b4m", "-t0.05", "-d0", *load_cpu_args(), f"--read_share={share}",
              f"--json={js}", env={"LOADLAT_ISA": isa})
    assert res.returncode == 0, res.stderr
    (row,) = parse_mlc(res.stdout, "share.txt").rows
    assert row["traffic"] == label and row["read_fraction"] == traffic_info(code)[1]
    doc = json.loads(js.read_text())
    assert doc["isa"] == isa and doc["traffic"]["code"] == code and doc["traffic"]["non_temporal"] is (share < 50)
    assert doc["points"][0]["status"] == "ok"
