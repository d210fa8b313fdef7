"""Hostile inputs to `memstor parse`: property-based fuzzing seeded from the real fixtures.

Every input is a real public fio/MLC output (tests/data/real, tests/data/mlc) mutated by
hypothesis: truncations, byte flips, hostile numbers (huge, negative, nan/inf strings), inserted
binary junk, duplicated chunks, CRLF, deeply nested and gigantic JSON, splices of two files. For each
input the pure parsers (parse_fio, parse_mlc) and the `memstor parse` driver (parse_paths, on a real
file) must: raise nothing, finish within a time bound, return rows with exactly the schema columns,
one-line errors, and never a NaN/inf or negative count/latency as a number.

Default suite: ~500 fuzzed inputs in-process + a few subprocess runs of the real CLI and the special
files (FIFO, /dev/zero, symlink loops, unreadable files, a 100 MB file). `make soak`: 10,000 inputs.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import REAL, ROOT
from memstor.core.schema import FIO_COLUMNS, MLC_COLUMNS
from memstor.parse.files import parse_paths
from memstor.parse.fio import parse_fio
from memstor.parse.mlc import parse_mlc
from reliability_helpers import (
    TRACEBACK,
    cli_env,
    deep_json,
    gigantic_json,
    memstor_cmd,
    read_csv,
    replace_numbers,
)

#: Seconds one input may take in one parser before it counts as a hang (a 2-core shared machine).
BOUND_S = 10.0
#: Seed files: every real output (not the provenance notes) plus the repository's MLC examples.
SEEDS = sorted(p for p in REAL.rglob("*") if p.is_file() and p.name != "SOURCES.md") + sorted(
    (ROOT / "tests" / "data" / "mlc").glob("*.txt"))
SEED_BYTES = {p: p.read_bytes() for p in SEEDS}

NON_NEGATIVE = {
    "fio": ["groupid", "bs_bytes", "iodepth", "numjobs", "rwmixread", "iops", "bw_MBps", "lat_mean_us",
            "lat_stddev_us", "lat_min_us", "lat_max_us", "clat_p50_us", "clat_p90_us", "clat_p99_us",
            "clat_p99_9_us", "clat_p99_99_us", "runtime_s", "total_ios"],
    "mlc": ["run", "read_fraction", "access_bytes", "inject_delay", "latency_ns", "bandwidth_MBps",
            "src_node", "dst_node"],
}

# Totals over every fuzzed input of this session (reported by the soak test and the closing note).
TOTALS = {"inputs": 0, "tracebacks": 0, "hangs": 0, "rows": 0, "errors": 0, "max_s": 0.0}


class Hang(BaseException):
    """Raised by the interval timer inside a parser that exceeded BOUND_S (BaseException: no parser's
    `except Exception` may swallow it)."""


def _alarm(signum, frame):  # noqa: ARG001 - signal handler signature
    raise Hang()


def bounded(fn, *args):
    """(result, seconds) of fn(*args) under a real-time bound of BOUND_S; raises Hang past it."""
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, BOUND_S)
    t0 = time.monotonic()
    try:
        return fn(*args), time.monotonic() - t0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


# ------------------------------------------------------------------------------------- mutations

OPS = st.one_of(
    st.tuples(st.just("truncate"), st.floats(0, 1)),
    st.tuples(st.just("flip"), st.lists(st.tuples(st.integers(0, 1 << 30), st.integers(0, 255)),
                                        min_size=1, max_size=40)),
    st.tuples(st.just("numbers"), st.lists(st.tuples(st.integers(0, 1 << 20), st.integers(0, 99)),
                                           min_size=1, max_size=25)),
    st.tuples(st.just("insert"), st.integers(0, 1 << 30), st.binary(min_size=1, max_size=600)),
    st.tuples(st.just("dup"), st.integers(0, 1 << 30), st.integers(1, 5000), st.integers(1, 8)),
    st.tuples(st.just("crlf")),
    st.tuples(st.just("junk"), st.binary(max_size=5000)),
    st.tuples(st.just("text"), st.text(max_size=2000)),
    st.tuples(st.just("deep"), st.integers(50, 200_000), st.booleans()),
    st.tuples(st.just("giant"), st.integers(1, 4000)),
    st.tuples(st.just("splice"), st.sampled_from(SEEDS), st.floats(0, 1)),
    st.tuples(st.just("utf16")),
)


def mutate(data: bytes, op: tuple) -> bytes:
    """Apply one mutation (from OPS) to the bytes of a file."""
    kind, *a = op
    n = len(data)
    if kind == "truncate":
        return data[: int(n * a[0])]
    if kind == "flip":
        b = bytearray(data)
        for pos, byte in a[0]:
            if b:
                b[pos % len(b)] = byte
        return bytes(b)
    if kind == "numbers":
        return replace_numbers(data, a[0])
    if kind == "insert":
        pos = a[0] % (n + 1)
        return data[:pos] + a[1] + data[pos:]
    if kind == "dup":
        s = a[0] % (n + 1)
        chunk = data[s : s + a[1]]
        return data[: s + len(chunk)] + chunk * a[2] + data[s + len(chunk):]
    if kind == "crlf":
        return data.replace(b"\n", b"\r\n")
    if kind == "junk":
        return a[0]
    if kind == "text":
        return a[0].encode("utf-8", "surrogatepass")
    if kind == "deep":
        return deep_json(a[0], fio_like=a[1])
    if kind == "giant":
        return gigantic_json(a[0])
    if kind == "splice":
        other = SEED_BYTES[a[0]]
        return data[: int(n * a[1])] + other
    if kind == "utf16":
        return b"\xff\xfe" + data.decode("utf-8", "replace").encode("utf-16-le")
    raise AssertionError(kind)


FUZZ_INPUTS = st.tuples(st.sampled_from(SEEDS), st.lists(OPS, min_size=1, max_size=3))


# ------------------------------------------------------------------------------------ the checks


def check_rows(rows: list, kind: str, columns: list, strict_numbers: bool) -> None:
    """Rows have exactly the schema columns; numbers are finite and >= 0 where they must be."""
    for row in rows:
        assert list(row) == columns or set(row) == set(columns), sorted(set(row) ^ set(columns))
        for c in NON_NEGATIVE[kind] if strict_numbers else ():
            v = row[c]
            if v is None or isinstance(v, str):
                continue
            assert not isinstance(v, bool) and isinstance(v, (int, float)), (c, v)
            if isinstance(v, int):
                assert 0 <= v < 1 << 63, f"{c}={v!r} smuggled into a row"
            else:
                assert math.isfinite(v) and v >= 0, f"{c}={v!r} smuggled into a row"


def check_errors(errors: list) -> None:
    """Every error is one non-empty line."""
    for e in errors:
        assert isinstance(e, str) and e.strip() and "\n" not in e and "\r" not in e, repr(e)[:300]
        assert TRACEBACK not in e


def check_input(data: bytes, folder: Path) -> None:
    """All the properties for one fuzzed input; counts it in TOTALS (a failure counts as a traceback
    or a hang before the assertion error propagates)."""
    TOTALS["inputs"] += 1
    text = data.decode("utf-8", "replace")
    path = folder / f"fuzz-{TOTALS['inputs']}.out"
    path.write_bytes(data)
    try:
        fio, t1 = bounded(parse_fio, text, "fuzz.out")
        mlc, t2 = bounded(parse_mlc, text, "fuzz.out")
        out, t3 = bounded(parse_paths, [path], None)
    except Hang:
        TOTALS["hangs"] += 1
        raise AssertionError(f"a parser took more than {BOUND_S} s on {len(data)} bytes: {data[:200]!r}") from None
    except Exception:
        TOTALS["tracebacks"] += 1
        raise
    finally:
        path.unlink()
    TOTALS["max_s"] = max(TOTALS["max_s"], t1, t2, t3)
    check_rows(fio.rows, "fio", FIO_COLUMNS, strict_numbers=True)
    check_rows(mlc.rows, "mlc", MLC_COLUMNS, strict_numbers=False)
    check_rows(out.rows["fio"], "fio", FIO_COLUMNS, strict_numbers=True)
    check_rows(out.rows["mlc"], "mlc", MLC_COLUMNS, strict_numbers=True)
    for res in (fio, mlc):
        check_errors(res.errors)
        assert res.rows or res.errors, "no rows and no error: the input vanished silently"
    check_errors(out.errors)
    assert out.rows["fio"] or out.rows["mlc"] or out.errors, "parse_paths: no rows and no error"
    TOTALS["rows"] += len(out.rows["fio"]) + len(out.rows["mlc"])
    TOTALS["errors"] += len(out.errors)


def _fuzz(seed_and_ops, folder: Path) -> None:
    seed, ops = seed_and_ops
    data = SEED_BYTES[seed]
    for op in ops:
        data = mutate(data, op)
    check_input(data, folder)


FUZZ_SETTINGS = dict(deadline=None, database=None, derandomize=True, print_blob=True,
                     suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def test_seeds_parse_cleanly_before_fuzzing(fuzz_dir):
    """The unmutated seeds pass the same checks (so a fuzz failure is about the mutation)."""
    for data in SEED_BYTES.values():
        check_input(data, fuzz_dir)
    assert TOTALS["tracebacks"] == TOTALS["hangs"] == 0


@settings(max_examples=500, **FUZZ_SETTINGS)
@given(FUZZ_INPUTS)
def _fuzz_500(fuzz_dir, seed_and_ops):
    _fuzz(seed_and_ops, fuzz_dir)


@settings(max_examples=10_000, **dict(FUZZ_SETTINGS, derandomize=False))
@given(FUZZ_INPUTS)
def _fuzz_10000(fuzz_dir, seed_and_ops):
    _fuzz(seed_and_ops, fuzz_dir)


def _fuzz_and_count(search, fuzz_dir: Path, least: int) -> None:
    """Runs one hypothesis search and judges its own totals in the same test (the totals of a module-level counter
    read in another test are empty where pytest-xdist ran that test in another worker: CI, 2026-11-28)."""
    before = dict(TOTALS)
    search(fuzz_dir)
    done = {k: TOTALS[k] - before[k] for k in ("inputs", "tracebacks", "hangs", "rows", "errors")}
    print(f"\nfuzz totals: {done}, slowest parse {TOTALS['max_s']:.3f} s")
    assert done["tracebacks"] == 0 and done["hangs"] == 0
    assert done["inputs"] >= least, f"only {done['inputs']} fuzzed inputs went through the parsers"


def test_fuzz_500_inputs_no_traceback_no_hang(fuzz_dir):
    """~500 fuzzed inputs (deterministic): no traceback, no hang, clean rows, one-line errors; at least 450 of them
    went through all three parsers (hypothesis may stop short of max_examples)."""
    _fuzz_and_count(_fuzz_500, fuzz_dir, 450)


@pytest.mark.soak
def test_soak_fuzz_10000_inputs(fuzz_dir):
    """The acceptance run: 10,000 fuzzed inputs (random each soak run) with 0 tracebacks, 0 hangs."""
    _fuzz_and_count(_fuzz_10000, fuzz_dir, 10_000)


# ------------------------------------------------------------------------------ targeted hostile cases

FIO_JSON = next(p for p in SEEDS if p.suffix == ".json" and b'"fio version"' in SEED_BYTES[p]
                and b'"lat_ns"' in SEED_BYTES[p])
MLC_LOADED = next(p for p in SEEDS if p.name == "mlc_write0_64.txt")


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e999", "-1", "-0.5", "9" * 400])
def test_fio_json_impossible_numbers_are_emptied_with_an_error(token):
    """A fio JSON whose IOPS and mean latency are NaN/inf/negative/huge: metric empty + one error line."""
    import json

    doc = json.loads(SEED_BYTES[FIO_JSON])
    text = SEED_BYTES[FIO_JSON].decode()
    job = doc["jobs"][0]
    ddir = next(d for d in ("read", "write") if job[d]["total_ios"])
    iops = json.dumps(job[ddir]["iops"])
    assert text.count(f'"iops" : {iops}') >= 1
    bad = text.replace(f'"iops" : {iops}', f'"iops" : {token}', 1)
    res = parse_fio(bad, "x.json")
    row = next(r for r in res.rows if r["jobname"] == job["jobname"] and r["direction"] == ddir)
    check_rows(res.rows, "fio", FIO_COLUMNS, strict_numbers=True)
    if token == "9" * 400:  # a finite int too big for a float: the job is skipped with a reason
        assert row["iops"] is None or row["iops"] >= 0
    else:
        assert row["iops"] is None
        assert any("iops" in e and "x.json" in e for e in res.errors), res.errors
    assert row["bw_MBps"] is not None and row["bw_MBps"] > 0  # the rest of the row is kept
    check_errors(res.errors)


def test_fio_text_one_damaged_line_keeps_the_other_jobs():
    """A damaged line in fio text costs that line only: rows of the intact jobs stay, one error line."""
    text_seed = next(p for p in SEEDS if p.suffix == ".txt" and b"(groupid=" in SEED_BYTES[p]
                     and SEED_BYTES[p].count(b"(groupid=") >= 2)
    clean = parse_fio(SEED_BYTES[text_seed].decode("utf-8", "replace"), "t.txt")
    assert clean.rows and not clean.errors
    lines = SEED_BYTES[text_seed].decode("utf-8", "replace").splitlines()
    # a terse-looking line with non-numbers: previously it made the whole file unreadable
    lines.insert(1, "3;fio-3.1;job;0;0;" + ";".join(["x"] * 120))
    res = parse_fio("\n".join(lines), "t.txt")
    assert len(res.rows) == len(clean.rows)
    assert [r["iops"] for r in res.rows] == [r["iops"] for r in clean.rows]
    check_errors(res.errors)
    assert len(res.errors) == 1 and "line 2" in res.errors[0]


def test_mlc_parser_never_returns_infinity():
    """parse_mlc itself (used directly by memory.point_rows) must not return inf as a measurement."""
    text = SEED_BYTES[MLC_LOADED].decode().replace("111.22", "9" * 400)
    res = parse_mlc(text, "m.txt")
    check_rows(res.rows, "mlc", MLC_COLUMNS, strict_numbers=True)


def test_memstor_parse_empties_mlc_infinity():
    """The `memstor parse` driver is the last guard: the same file gives an empty cell + one error."""
    text = SEED_BYTES[MLC_LOADED].decode().replace("111.22", "9" * 400)
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "m.txt"
        p.write_text(text)
        out = parse_paths([p], "mlc")
    check_rows(out.rows["mlc"], "mlc", MLC_COLUMNS, strict_numbers=True)
    assert len(out.rows["mlc"]) == 19
    assert out.rows["mlc"][0]["latency_ns"] is None and out.rows["mlc"][0]["inject_delay"] == 0
    assert any("latency_ns" in e for e in out.errors), out.errors


@pytest.mark.parametrize("token", ["nan", "-5.0"])
def test_mlc_damaged_row_is_reported_not_silently_dropped(token):
    text = SEED_BYTES[MLC_LOADED].decode().replace("111.22", token)
    res = parse_mlc(text, "m.txt")
    assert len(res.rows) == 18
    assert res.errors, "a damaged row vanished without an error line"


# --------------------------------------------------------------------- special files and the real CLI


def _cli_parse(args: list, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(memstor_cmd("parse", *args), capture_output=True, text=True, timeout=timeout,
                          env=cli_env(), cwd=ROOT)


def test_cli_on_a_folder_of_fuzzed_files(tmp_path):
    """The real CLI over 60 fuzzed files + specials in one folder: exit 1, one line per problem, CSVs
    with only clean numbers, no traceback."""
    import random

    rng = random.Random(6)
    folder = tmp_path / "in"
    folder.mkdir()
    for i in range(60):
        seed = rng.choice(SEEDS)
        data = SEED_BYTES[seed]
        for _ in range(rng.randint(1, 3)):
            op = rng.choice([("truncate", rng.random()), ("numbers", [(rng.randrange(1 << 20), rng.randrange(99))
                                                                      for _ in range(8)]),
                             ("flip", [(rng.randrange(1 << 30), rng.randrange(256)) for _ in range(10)]),
                             ("insert", rng.randrange(1 << 30), os.urandom(64)), ("crlf",)])
            data = mutate(data, op)
        (folder / f"f{i:02d}{seed.suffix}").write_bytes(data)
    (folder / "deep.json").write_bytes(deep_json(100_000))
    (folder / "junk.bin").write_bytes(os.urandom(50_000))
    os.mkfifo(folder / "pipe.out")
    (folder / "loop").symlink_to(folder)  # a symlinked folder pointing to itself (not followed)
    (folder / "a.txt").symlink_to(folder / "b.txt")
    (folder / "b.txt").symlink_to(folder / "a.txt")  # a symlink loop between two files
    (folder / "dangling.json").symlink_to(folder / "nowhere.json")
    out = tmp_path / "out"
    res = _cli_parse([str(folder), "-o", str(out)])
    assert res.returncode in (0, 1), res.stderr
    assert TRACEBACK not in res.stderr and "internal error" not in res.stderr, res.stderr
    assert res.returncode == 1  # some files are damaged beyond reading
    problems = [ln for ln in res.stderr.splitlines() if not ln.startswith("memstor parse:")]
    assert problems and all(": " in ln and ln.startswith(str(folder)) for ln in problems), res.stderr
    assert any("pipe.out" in ln and "not a regular file" in ln for ln in problems), res.stderr
    assert any("a.txt" in ln and "symbolic links" in ln for ln in problems), res.stderr
    summary = res.stderr.strip().splitlines()[-1]
    assert summary.startswith("memstor parse:") and f"{len(problems)} problems" in summary
    for kind, cols in (("fio", FIO_COLUMNS), ("mlc", MLC_COLUMNS)):
        rows = read_csv(out / f"{kind}.csv")
        assert rows, kind
        assert list(rows[0]) == cols
        for row in rows:
            for c in NON_NEGATIVE[kind]:
                if row[c] != "":
                    v = float(row[c])
                    assert math.isfinite(v) and v >= 0, (c, row[c])


def test_cli_named_special_files_do_not_hang(tmp_path):
    """/dev/zero (endless), a FIFO nobody writes to (blocks), a folder symlink loop: one line each."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    loop = tmp_path / "self"
    loop.symlink_to(loop)
    good = next(p for p in SEEDS if p.suffix == ".json" and b'"fio version"' in SEED_BYTES[p])
    res = _cli_parse(["--kind", "fio", "/dev/zero", str(fifo), str(loop), str(good)], timeout=60)
    assert res.returncode == 1 and TRACEBACK not in res.stderr, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 3, res.stderr
    assert lines[0].startswith("/dev/zero: cannot read: not a regular file")
    assert lines[1].startswith(f"{fifo}: cannot read: not a regular file")
    assert lines[2].startswith(f"{loop}: cannot read: Too many levels of symbolic links")
    assert len(res.stdout.splitlines()) > 1  # the good file's rows still come out


def test_cli_unreadable_file_without_dac_override(tmp_path):
    """chmod 000 stops nobody as root, so the CLI runs as root *without* the capabilities that bypass
    file permissions (setpriv drops CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH), over a folder holding an
    unreadable file: one `cannot read: Permission denied` line, the readable file's rows still written."""
    import shutil

    if os.geteuid() != 0:
        pytest.skip("not root: chmod 000 works as is, but this test drops root's capabilities with setpriv")
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) not installed: cannot drop CAP_DAC_OVERRIDE to make chmod 000 bite")
    good = next(p for p in SEEDS if p.suffix == ".json" and b'"fio version"' in SEED_BYTES[p])
    (tmp_path / "good.json").write_bytes(SEED_BYTES[good])
    secret = tmp_path / "secret.json"
    secret.write_bytes(SEED_BYTES[good])
    secret.chmod(0)
    caps = "-dac_override,-dac_read_search"
    cmd = ["setpriv", f"--inh-caps={caps}", f"--bounding-set={caps}",
           *memstor_cmd("parse", "--kind", "fio", str(tmp_path), str(secret))]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=cli_env(), cwd=ROOT)
    if "setpriv:" in res.stderr:
        pytest.skip(f"setpriv cannot drop capabilities here: {res.stderr.strip()[:200]}")
    assert res.returncode == 1 and TRACEBACK not in res.stderr, res.stderr
    # named once and found once in the folder walk: the same one line each time
    assert res.stderr.strip().splitlines() == [f"{secret}: cannot read: Permission denied"] * 2, res.stderr
    assert len(res.stdout.splitlines()) > 1  # good.json's rows


@pytest.mark.parametrize("mb", [20, pytest.param(100, marks=pytest.mark.soak)])
def test_big_files_bounded_time(tmp_path, mb):
    """A 100 MB (soak; 20 MB in the default suite) file of binary junk and a fio JSON with a 100 MB
    tail of junk lines: one line for the junk, rows for the valid document, each within the time bound."""
    junk = tmp_path / "junk.out"
    with open(junk, "wb") as fh:
        block = os.urandom(1 << 20)
        for _ in range(mb):
            fh.write(block)
    big = tmp_path / "big.json"
    good = SEED_BYTES[FIO_JSON]
    with open(big, "wb") as fh:
        fh.write(good)
        line = b"x" * 1023 + b"\n"
        for _ in range(mb * 1024):
            fh.write(line)
    t0 = time.monotonic()
    out, _ = bounded(parse_paths, [junk], None)
    t_junk = time.monotonic() - t0
    assert out.errors == [f"{junk}: not a fio or MLC output (no measurement found)"]
    t0 = time.monotonic()
    out, _ = bounded(parse_paths, [big], "fio")
    t_big = time.monotonic() - t0
    assert out.rows["fio"] and not out.errors, out.errors
    assert t_junk < BOUND_S and t_big < BOUND_S, (t_junk, t_big)


def test_file_over_the_size_limit_is_refused_unread(tmp_path):
    """A sparse 300 GB 'file' is refused by size (one line), never read into memory."""
    huge = tmp_path / "huge.json"
    with open(huge, "wb") as fh:
        fh.truncate(300 * 10**9)
    out, dt = bounded(parse_paths, [huge], None)
    assert out.errors and "larger than the" in out.errors[0] and dt < 1.0


@settings(max_examples=300, **FUZZ_SETTINGS)
@given(st.one_of(st.text(max_size=60), st.sampled_from([b.decode() for b in
                                                         (b"1" * 400, b"1e999", b"nan", b"inf", b"-4k", b"0x" + b"f" * 40)])))
def test_units_hostile_strings_only_value_error(text):
    """parse_size / parse_duration_s on any string: a finite number or ValueError, nothing else."""
    from memstor.core.units import parse_duration_s, parse_size

    for fn in (parse_size, parse_duration_s):
        try:
            v = fn(text)
        except ValueError:
            continue
        assert isinstance(v, (int, float)) and math.isfinite(v), (fn.__name__, text, v)
