"""loadlat, memstor's MLC-compatible loaded-latency tool: the real C tool, built and run with tiny buffers.

Fast tests use 4-16 MiB buffers and 0.05-0.2 s per point (the numbers are real but not DRAM numbers);
the slow test checks realistic values on a 1 GiB buffer against the independent pointer chase.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memstor.core.errors import MemstorError
from memstor.measure import loadlat

ROOT = Path(__file__).resolve().parents[1]
ROW_RE = re.compile(r"^ (\d{5})\t( *\d+\.\d{2})\t( *\d+\.\d)$")
PEAK_LABELS = ["ALL Reads        ", "3:1 Reads-Writes ", "2:1 Reads-Writes ", "1:1 Reads-Writes ",
               "Stream-triad like"]


@pytest.fixture(scope="module")
def exe(loadlat_built) -> Path:
    """loadlat compiled by memstor.measure.loadlat.build (the `make loadlat` command) into a temp folder (conftest:
    once per session)."""
    return loadlat_built


def run(exe: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run loadlat with args; text output."""
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=timeout)


def table_rows(stdout: str) -> list[tuple[int, float, float]]:
    """(delay, latency ns, bandwidth MB/s) of the loaded-latency rows; every row must match MLC's format."""
    lines = stdout.splitlines()
    start = lines.index("==========================") + 1
    rows = []
    for line in lines[start:]:
        if not line.strip():
            break
        m = ROW_RE.match(line)
        assert m, f"row not in MLC's ' %05d\\t%6.2f\\t%9.1f' format: {line!r}"
        assert len(m.group(2)) >= 6 and len(m.group(3)) >= 9, line
        rows.append((int(m.group(1)), float(m.group(2)), float(m.group(3))))
    return rows


def allowed_cpus() -> list[int]:
    """The CPUs of this process's affinity mask, sorted (loadlat's -c/-k must name CPUs from it)."""
    return sorted(os.sched_getaffinity(0))


def latency_and_load_cpu() -> tuple[int, int]:
    """(latency CPU, load CPU): the first two CPUs of the affinity mask; skips the test with fewer (a loaded
    latency point runs its latency thread and its load thread on different CPUs)."""
    cpus = allowed_cpus()
    if len(cpus) < 2:
        pytest.skip(f"needs 2 CPUs in the affinity mask (a latency and a load thread); this process may only run "
                    f"on CPU {cpus[0]}")
    return cpus[0], cpus[1]


def comment(stdout: str, prefix: str) -> str:
    """The '#' line starting with `# prefix`."""
    for line in stdout.splitlines():
        if line.startswith(f"# {prefix}"):
            return line
    raise AssertionError(f"no '# {prefix}' line in:\n{stdout}")


def test_compile_command_is_the_makefile_rule():
    cmd = loadlat.compile_command(ROOT)
    assert cmd[1:7] == ["-O2", "-g", "-Wall", "-Wextra", "-pthread", "-o"]
    assert cmd[7] == str(ROOT / "build" / "bin" / "loadlat") and cmd[-1] == "-lm"
    assert sorted(Path(p).name for p in cmd[8:-1]) == sorted(p.name for p in (ROOT / "lib/loadlat").glob("*.c"))
    makefile = (ROOT / "Makefile").read_text()
    assert "-O2 -g -Wall -Wextra -pthread -o $@ lib/loadlat/*.c -lm" in makefile


@pytest.mark.loadlat
def test_build_is_warning_free(tmp_path):
    cmd = loadlat.compile_command(ROOT, tmp_path / "loadlat")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


@pytest.mark.loadlat
def test_idle_latency_output(exe, tmp_path):
    res = run(exe, "--idle_latency", "-b8m", "-t0.2", f"--json={tmp_path / 'idle.json'}")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0] == f"loadlat (Memory Latency Checker-compatible) - v{loadlat.version(exe)}"
    assert lines[1] == "Command line parameters: --idle_latency -b8m -t0.2 " + f"--json={tmp_path / 'idle.json'} "
    assert "Using buffer size of 8.000MiB" in lines
    m = [re.match(r"^Each iteration took (\d+\.\d) core clocks \(\t(\d+\.\d)\tns\)$", ln) for ln in lines]
    m = [x for x in m if x]
    assert len(m) == 1
    clocks, ns = float(m[0].group(1)), float(m[0].group(2))
    ghz = float(re.search(r"core (\d+\.\d+) GHz", comment(res.stdout, "clocks")).group(1))
    assert ns > 1 and clocks == pytest.approx(ns * ghz, rel=0.02, abs=0.2)
    doc = json.loads((tmp_path / "idle.json").read_text())
    cal = doc["calibration"]
    assert cal["core_ghz"] == pytest.approx(ghz, abs=6e-4)
    assert cal["core_ghz_method"] == "chain of dependent register adds, 1 add = 1 core clock"
    assert cal["core_ghz_check"] == "ok", cal
    assert doc["mode"] == "idle_latency" and doc["latency_buffer_bytes"] == 8 << 20
    assert doc["points"][0]["latency_ns"] == pytest.approx(ns, abs=0.06)
    assert doc["points"][0]["latency_loads"] > 1000


@pytest.fixture(scope="module")
def regchain_ghz(tmp_path_factory) -> float:
    """The core clock measured independently of loadlat: tests/data/clock/regchain.c (register adds in asm)."""
    if os.uname().machine not in ("x86_64", "aarch64"):
        pytest.skip(f"the independent clock chain is written for x86-64 and arm64, not {os.uname().machine}")
    out = tmp_path_factory.mktemp("regchain") / "regchain"
    subprocess.run(["cc", "-O2", "-o", str(out), str(ROOT / "tests/data/clock/regchain.c")], check=True)
    return float(subprocess.run([str(out)], capture_output=True, text=True, check=True).stdout.split()[0])


@pytest.mark.loadlat
def test_core_clock_matches_an_independent_register_chain(exe, regchain_ghz):
    """loadlat's core GHz within 15 % of an independent asm chain, and within 0.25-2.2x of the TSC: an
    add-immediate chain (folded at rename on recent Intel cores: 18.9 GHz reported on a 2.6 GHz Xeon, ~6x)
    or any other >= 1.5x error fails here."""
    ghz = []
    for _ in range(3):  # best of 3: on a shared VM contention only ever makes a clock chain read slow
        res = run(exe, "--idle_latency", "-b4m", "-t0.05")
        assert res.returncode == 0, res.stderr
        ghz.append(float(re.search(r"core (\d+\.\d+) GHz", comment(res.stdout, "clocks")).group(1)))
    core = max(ghz)
    assert core == pytest.approx(regchain_ghz, rel=0.15), (ghz, regchain_ghz)
    tsc = float(re.search(r"TSC (\d+\.\d+) GHz", comment(res.stdout, "clocks")).group(1))
    if tsc > 0:
        assert 0.25 * tsc < core < 2.2 * tsc, (core, tsc)


@pytest.mark.loadlat
def test_loaded_latency_sweep_output_and_json(exe, tmp_path):
    delays = [0, 300, 3000, 20000]
    gfile = loadlat.write_delay_file(tmp_path / "delays.txt", delays)
    js = tmp_path / "ll.json"
    lat_cpu, load_cpu = latency_and_load_cpu()
    res = run(exe, "--loaded_latency", "-b16m", "-t0.2", f"-g{gfile}", f"-c{lat_cpu}", f"-k{load_cpu}",
              f"--json={js}")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    i = lines.index("Measuring Loaded Latencies for the system")
    assert lines[i:i + 6] == ["Measuring Loaded Latencies for the system",
                              "Using all the threads from each core if Hyper-threading is enabled",
                              "Using Read-only traffic type", "Inject\tLatency\tBandwidth", "Delay\t(ns)\tMB/sec",
                              "=========================="]
    assert all(ln.startswith("#") for ln in lines[4:i] if ln)  # extra information only on '#' lines
    rows = table_rows(res.stdout)
    assert [r[0] for r in rows] == delays
    bw = [r[2] for r in rows]
    assert all(r[1] > 0 for r in rows)
    # bandwidth falls with the inject delay (tolerant: the CPUs are shared while tests run)
    assert bw[-1] < bw[0] / 5
    assert all(b2 <= b1 * 1.3 for b1, b2 in zip(bw, bw[1:])), bw
    ns_per_unit = float(re.search(r"1 delay unit = (\d+\.\d+) ns", comment(res.stdout, "delay calibration")).group(1))
    assert 0.01 < ns_per_unit < 20
    # one 64-byte read per delay loop at delay 20000 cannot exceed 64 B / (20000 x ns per unit). The unit
    # is calibrated once, over ~30 ms of thread CPU time, so on a shared VM it can read slow: measured
    # here (2-vCPU EPYC KVM) 0.27 ns/unit usually, once 0.498 ns/unit with 8.7 MB/s against a 6.4 MB/s
    # bound. A factor 2.5 still fails a delay that is not applied (delay 0 gives thousands of MB/s).
    assert bw[-1] <= 64 / (20000 * ns_per_unit * 1e-9) / 1e6 * 2.5

    doc = json.loads(js.read_text())
    assert doc["tool"] == "loadlat" and doc["version"] == loadlat.version(exe)
    assert doc["latency_cpu"] == lat_cpu and doc["load_cpus"] == [load_cpu]
    assert doc["traffic"]["code"] == "R" and doc["access_bytes"] == 64
    assert doc["load_buffer_bytes"] == 16 << 20 and doc["latency_buffer_bytes"] == 16 << 20
    assert doc["calibration"]["delay_ns_per_unit"] == pytest.approx(ns_per_unit, abs=1e-4)
    assert doc["points_planned"] == 4 and not doc["interrupted"]
    for point, (delay, lat, bw_row) in zip(doc["points"], rows):
        assert point["status"] == "ok" and point["delay"] == delay
        assert point["latency_ns"] == pytest.approx(lat, abs=0.006)
        assert point["bandwidth_MBps"] == pytest.approx(bw_row, abs=0.06)
        assert point["delay_ns"] == pytest.approx(delay * doc["calibration"]["delay_ns_per_unit"])
        assert point["write_MBps"] == 0 and point["read_MBps"] == pytest.approx(point["bandwidth_MBps"])
    roles = sorted(b["role"] for b in doc["huge_pages"]["buffers"])
    assert roles == ["latency", "read"]  # read-only traffic: no write buffer allocated


@pytest.mark.loadlat
def test_peak_injection_bandwidth_output(exe):
    res = run(exe, "--peak_injection_bandwidth", "-b8m", "-t0.1")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    i = lines.index("Measuring Peak Injection Memory Bandwidths for the system")
    assert lines[i + 1:i + 4] == ["Bandwidths are in MB/sec (1 MB/sec = 1,000,000 Bytes/sec)",
                                  "Using all the threads from each core if Hyper-threading is enabled",
                                  "Using traffic with the following read-write ratios"]
    for label, line in zip(PEAK_LABELS, lines[i + 4:i + 9]):
        m = re.match(r"^(.{17}):\t(\d+\.\d)\t$", line)
        assert m and m.group(1) == label, line
        assert float(m.group(2)) > 10


@pytest.mark.parametrize("code", ["W2", "W3", "W4", "W5", "W6", "W7", "W8", "W9", "W10"])
@pytest.mark.loadlat
def test_every_traffic_code_moves_bytes_in_its_ratio(exe, tmp_path, code):
    js = tmp_path / f"{code}.json"
    res = run(exe, "--loaded_latency", "-T", f"-k{allowed_cpus()[0]}", "-b4m", "-l128", "-t0.05", "-d0", f"-{code}", f"--json={js}")
    assert res.returncode == 0, res.stderr
    assert "Using Read-only traffic type" not in res.stdout  # MLC prints it for -R only
    assert f"# traffic {code} (" in res.stdout
    (row,) = table_rows(res.stdout)
    assert row[0] == 0 and row[1] == 0.0 and row[2] > 10  # -T: latency column 0.00
    doc = json.loads(js.read_text())
    t, p = doc["traffic"], doc["points"][0]
    assert p["latency_ns"] is None
    assert p["read_MBps"] * t["writes_per_group"] == pytest.approx(p["write_MBps"] * t["reads_per_group"])
    roles = {b["role"] for b in doc["huge_pages"]["buffers"]}
    assert ("write" in roles) and (("read" in roles) == (t["reads_per_group"] > 0))
    assert ("read2" in roles) == (code == "W10")


@pytest.mark.parametrize("share, code, reads, writes, nt", [
    (90, "S90", 8, 1, False), (70, "S70", 4, 3, False), (60, "S60", 1, 2, False), (50, "S50", 0, 1, False),
    (40, "S40", 2, 3, True), (33, "S33", 33, 67, True), (80, "W3", 3, 1, False), (75, "W2", 2, 1, False),
    (0, "W6", 0, 1, True), (100, "R", 1, 0, False)])
@pytest.mark.loadlat
def test_read_share_moves_bytes_in_its_ratio(exe, tmp_path, share, code, reads, writes, nt):
    """--read_share=P: P % of the DRAM traffic is reads by construction, in the smallest request group: plain
    stores (each also reads its line for ownership) from 50 % up, non-temporal stores below; a share MLC's
    codes already mix is that code (one traffic, one name)."""
    js = tmp_path / "s.json"
    res = run(exe, "--loaded_latency", "-T", f"-k{allowed_cpus()[0]}", "-b4m", "-t0.05", "-d0",
              f"--read_share={share}", f"--json={js}")
    assert res.returncode == 0, res.stderr
    assert f"# traffic {code} (" in res.stdout
    doc = json.loads(js.read_text())
    t, p = doc["traffic"], doc["points"][0]
    assert (t["code"], t["reads_per_group"], t["writes_per_group"], t["non_temporal"]) == (code, reads, writes, nt)
    assert p["traffic"] == code
    # the bytes the requests move (loadlat counts requests, not DRAM transfers) ...
    assert p["read_MBps"] * writes == pytest.approx(p["write_MBps"] * reads, rel=1e-9)
    # ... and the DRAM read share they make: plain writes add their read for ownership
    dram_reads = p["read_MBps"] + (0 if nt else p["write_MBps"])
    assert 100 * dram_reads / (dram_reads + p["write_MBps"]) == pytest.approx(share, abs=1e-6)


@pytest.mark.loadlat
def test_huge_pages_evidence_from_smaps(exe, tmp_path):
    thp = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    res = run(exe, "--idle_latency", "-b16m", "-t0.05", "-L", f"--json={tmp_path / 'h.json'}")
    assert res.returncode == 0, res.stderr
    doc = json.loads((tmp_path / "h.json").read_text())
    hp = doc["huge_pages"]
    assert hp["requested"] is True
    (buf,) = hp["buffers"]
    assert buf["bytes"] == 16 << 20
    line = comment(res.stdout, "huge pages")
    m = re.search(r"AnonHugePages in buffers: (\d+) of (\d+) KiB", line)
    assert int(m.group(1)) * 1024 == buf["anon_huge_bytes"] and int(m.group(2)) == 16384
    if thp.exists() and "[never]" not in thp.read_text():
        assert buf["anon_huge_bytes"] > 0, "madvise(MADV_HUGEPAGE) got no huge page"
    res = run(exe, "--idle_latency", "-b16m", "-t0.05", f"--json={tmp_path / 'n.json'}")
    doc = json.loads((tmp_path / "n.json").read_text())
    assert doc["huge_pages"]["requested"] is False
    assert doc["huge_pages"]["buffers"][0]["anon_huge_bytes"] == 0  # MADV_NOHUGEPAGE without -L


@pytest.mark.parametrize("args, needle", [
    (["--loaded_latency", "-Q"], "unknown option '-Q'"),
    (["--loaded_latency", "-W11"], "unknown traffic code '-W11'"),
    (["--loaded_latency", "-W1"], "unknown traffic code '-W1'"),
    (["--loaded_latency", "--read_share=101"], "--read_share=101: the read share is a whole percentage 0..100 of the DRAM"),
    (["--loaded_latency", "--read_share=7x"], "--read_share=7x: the read share is a whole percentage 0..100"),
    (["--loaded_latency", "-W5", "--read_share=70"], "-W5 and --read_share=70 both given"),
    (["--idle_latency", "--read_share=70"], "--read_share=70 does not apply to --idle_latency"),
    (["--idle_latency", "-b12x"], "-b12x"),
    (["-R", "-T"], "-T does not apply to the default run"),
    (["--latency_matrix", "-k1"], "-k does not apply to --latency_matrix"),
    (["--c2c_latency", "-d5"], "-d does not apply to --c2c_latency"),
    (["--max_bandwidth", "-W5"], "-W5 does not apply to --max_bandwidth"),
    (["--bandwidth_matrix", "-c0"], "-c does not apply to --bandwidth_matrix"),
    (["--c2c_latency", "--bandwidth_matrix"], "give only one mode"),
    (["--loaded_latency", "-R", "-W5"], "choose one traffic type"),
    (["--peak_injection_bandwidth", "-d5"], "-d does not apply"),
    (["--loaded_latency", "-k999"], "CPU 999 is not available"),
    (["--loaded_latency", "-l100"], "multiple of 64"),
    (["--loaded_latency", "-g/nonexistent/delays"], "cannot open delay file"),
    (["--loaded_latency", "-tfast"], "-tfast"),
])
@pytest.mark.loadlat
def test_bad_input_is_one_line_and_exit_2(exe, args, needle):
    res = run(exe, *args)
    assert res.returncode == 2
    assert res.stdout == ""
    err = res.stderr.splitlines()
    assert len(err) == 1 and err[0].startswith("loadlat: ") and needle in err[0], res.stderr


@pytest.mark.loadlat
def test_help(exe):
    res = run(exe, "--help")
    assert res.returncode == 0 and "--loaded_latency" in res.stdout and "-W<n>" in res.stdout


@pytest.mark.loadlat
def test_sigint_stops_cleanly_and_keeps_finished_rows(exe, tmp_path):
    js = tmp_path / "int.json"
    lat_cpu, load_cpu = latency_and_load_cpu()
    proc = subprocess.Popen([str(exe), "--loaded_latency", "-b8m", "-t0.3", f"-c{lat_cpu}", f"-k{load_cpu}",
                             f"--json={js}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = []
    deadline = time.monotonic() + 30
    for line in proc.stdout:  # wait for the first row, then interrupt
        out.append(line)
        if ROW_RE.match(line.rstrip("\n")) or time.monotonic() > deadline:
            break
    proc.send_signal(signal.SIGINT)
    rest, err = proc.communicate(timeout=30)
    text = "".join(out) + rest
    assert proc.returncode == 128 + signal.SIGINT
    rows = table_rows(text)
    assert 1 <= len(rows) < 19
    assert re.search(rf"# interrupted by signal 2 after {len(rows)} of 19 points", text)
    assert f"interrupted after {len(rows)} of 19 points" in err
    doc = json.loads(js.read_text())
    assert doc["interrupted"] is True and len(doc["points"]) == len(rows)


@pytest.mark.loadlat
def test_mlc_parser_reads_loadlat_output(exe):
    from memstor.parse.mlc import parse_mlc

    lat_cpu, load_cpu = latency_and_load_cpu()
    res = run(exe, "--loaded_latency", "-b8m", "-t0.1", "-d50", "-W5", "-l256", f"-c{lat_cpu}", f"-k{load_cpu}")
    assert res.returncode == 0, res.stderr
    (row,) = table_rows(res.stdout)
    parsed = parse_mlc(res.stdout, "loadlat.txt")
    assert parsed.errors == []
    (r,) = parsed.rows
    assert r["tool"] == "loadlat" and r["test"] == "loaded_latency" and r["traffic"] == "1:1"
    assert r["access_bytes"] == 256 and r["inject_delay"] == 50
    assert r["latency_ns"] == pytest.approx(row[1]) and r["bandwidth_MBps"] == pytest.approx(row[2])


@pytest.mark.loadlat
def test_binary_lookup(tmp_path, monkeypatch, exe):
    monkeypatch.setenv("LOADLAT", str(exe))
    assert loadlat.binary(tmp_path) == exe
    monkeypatch.setenv("LOADLAT", str(tmp_path / "missing"))
    with pytest.raises(MemstorError, match="is not an executable file"):
        loadlat.binary(tmp_path)
    monkeypatch.delenv("LOADLAT")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(MemstorError) as err:
        loadlat.binary(tmp_path)
    assert str(err.value) == ("loadlat is not built: run `make loadlat` in the memstor checkout (or put a built "
                              "loadlat on PATH, or set LOADLAT=/path/to/loadlat)")
    (tmp_path / "build" / "bin").mkdir(parents=True)
    shutil.copy(exe, tmp_path / "build" / "bin" / "loadlat")
    assert loadlat.binary(tmp_path) == tmp_path / "build" / "bin" / "loadlat"


@pytest.mark.slow
@pytest.mark.loadlat
def test_idle_latency_on_1gib_is_dram_not_cache(exe):
    """A 1 GiB chain (32x this machine's L3) reads DRAM: never below 50 ns per load."""
    res = run(exe, "--idle_latency", "-b1g", "-L", "-t1", f"-c{allowed_cpus()[0]}", timeout=120)
    assert res.returncode == 0, res.stderr
    assert float(re.search(r"\(\t(\d+\.\d)\tns\)", res.stdout).group(1)) >= 50


# A fidelity comparison on a shared machine is noisy: it runs in `make soak`, and `make bench` reports the
# same ratio (median of 3 with its spread); a unit-test run must not fail on a busy neighbour.
@pytest.mark.soak
@pytest.mark.loadlat
def test_realistic_idle_latency_on_1gib_matches_the_pointer_chase(exe, tmp_path):
    """1 GiB with huge pages: DRAM latency (>= 50 ns, not cache) and within 15% of bench/chase.c (medians of 3
    interleaved runs). Both tools also time the chase with the thread's CPU time; those are compared, so
    that other work time-slicing the shared CPUs does not decide the test."""
    if (os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")) < 6 << 30:
        pytest.skip("needs 6 GiB of RAM")
    chase = tmp_path / "chase"
    subprocess.run(["cc", "-O2", "-o", str(chase), str(ROOT / "bench" / "chase.c")], check=True)
    ours, ref, ours_wall, ref_wall = [], [], [], []
    cpu = allowed_cpus()[0]  # both chases on the same allowed CPU
    for i in range(3):
        js = tmp_path / f"idle{i}.json"
        res = run(exe, "--idle_latency", "-b1g", "-L", "-t1", f"-c{cpu}", f"--json={js}", timeout=120)
        assert res.returncode == 0, res.stderr
        ours_wall.append(float(re.search(r"\(\t(\d+\.\d)\tns\)", res.stdout).group(1)))
        point = json.loads(js.read_text())["points"][0]
        assert point["latency_ns"] == pytest.approx(ours_wall[-1], abs=0.06)
        ours.append(point["latency_ns_per_cpu_time"])
        out = subprocess.run(["taskset", "-c", str(cpu), str(chase), "1024", "1"], capture_output=True, text=True,
                             check=True, timeout=120).stdout
        ref_wall.append(float(re.search(r"ns per load: (\d+\.\d+)", out).group(1)))
        ref.append(float(re.search(r"ns per load \(thread CPU time\): (\d+\.\d+)", out).group(1)))
    print(f"CPU-time ns: loadlat {ours}, chase {ref}; wall ns: loadlat {ours_wall}, chase {ref_wall}",
          file=sys.stderr)
    assert min(ours_wall) >= 50 and min(ref_wall) >= 50 and min(ours) >= 50
    assert statistics.median(ours) == pytest.approx(statistics.median(ref), rel=0.15)


@pytest.mark.loadlat
def test_cpu_list_format_never_writes_past_its_buffer(tmp_path):
    """A long patchy CPU list truncates inside the buffer (it used to overflow it with pairs like 3,4)."""
    out = tmp_path / "cpufmt"
    src = [str(ROOT / "tests/data/loadlat/cpu_list_format.c"), str(ROOT / "lib/loadlat/cpus.c")]
    asan = subprocess.run(["cc", "-fsanitize=address", "-g", "-o", str(out), *src], capture_output=True)
    if asan.returncode != 0:  # no AddressSanitizer runtime: still check the results
        subprocess.run(["cc", "-g", "-o", str(out), *src], check=True)
    res = subprocess.run([str(out)], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "ASAN_OPTIONS": "detect_leaks=0"})
    assert res.returncode == 0, res.stderr
    assert res.stdout.split("\n")[:3] == ["511", "1,2,5", "1,2"]
