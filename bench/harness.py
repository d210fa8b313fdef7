"""`make bench`: memstor's benchmark harness (issue 7) -> ``<out>/bench.md`` and ``<out>/bench.csv``.

These machines are shared and noisy, so every figure is the RATIO of two things measured in the same
run, right after each other (their order alternates between repetitions), reported as the median of
``--reps`` (>= 3) repetitions with the min-max spread. Wall times come from ``time.perf_counter``.

Figures (``--only`` takes these names, comma separated):

``overhead``   a sweep of 8 fio points x 1 s through ``memstor.measure.sweep.run_sweep`` + ``FioRunner`` (fresh
               data folder per repetition, no progress bar; the I/O engine is probed once, untimed)
               vs the exact fio command lines from the points' ``.meta.json`` run by bash: wall time.
``parse``      ``memstor parse --kind fio DIR -o out.csv`` (a subprocess) over 5,000 copies of real fio
               JSON outputs vs a ``python -c`` loop of bare ``json.load`` over the same files: wall time.
``rebuild``    in a fresh checkout of the repository: a second ``make all PROFILE=quick`` vs the first
               (no-op rebuild), and ``make report`` vs the first (report-only rebuild; reported only).
``latency``    ``loadlat --idle_latency -b1g -L`` vs the independent pointer chase ``build/bin/chase``
               (``bench/chase.c``) over 1 GiB with huge pages: ns per load.
``bandwidth``  ``loadlat --loaded_latency -d0 -T -R`` vs ``likwid-bench -t load_avx -w S0:1GB:N`` with
               N = 1 and 2 threads: decimal MB/s.
``qd``         the fio-queue-depth experiment's best 4K randread IOPS vs the best of a hand-written fio
               grid numjobs {1,2,4} x iodepth {16..256} on the same test file.
``precision``  the standard fio-queue-depth sweep with ``precision_pct: 2`` vs the same sweep at its fixed
               runtime: wall time (target ≤ 0.5), with the achieved half-widths of both in the notes.
``auto-grid``  the standard 4K randread queue-depth sweep with ``iodepth: auto`` vs the listed depths 1..1024:
               wall time (target < 1) and best IOPS (target ≥ 0.97).
``honesty``    one 4K QD1 randread point run 5 times at 10 s: the mean within-run batch-means half-width
               vs the between-run t-interval's (IOPS and mean latency; target 0.5–2).

A figure whose prerequisite is missing (a module not written yet, a tool not built, likwid-bench
refused by the VM...) is reported as ``not measured: <reason>``; the other figures still run.
``--smoke`` shrinks every figure (200 files, 2 fio points of 0.5 s, small buffers) to test the harness.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from memstor.cli import guarded
from memstor.core.errors import Interrupted, MemstorError, UsageError, first_line
from memstor.measure.sysinfo import collect
from memstor.measure.target import prepare_test_file
from memstor.parse.mlc import parse_mlc

#: The repository root (the folder holding the Makefile); bench/bench.py -> ..
ROOT = Path(__file__).resolve().parents[1]
#: The real public tool outputs the parse figure copies (see its SOURCES.md).
REAL = ROOT / "tests" / "data" / "real"
#: Repositories in REAL whose fio JSON outputs the parse figure copies.
PARSE_SOURCES = ("AIALRA-0__ECSE-4320-Advanced-Computer-Systems", "fiumad__Advanced-Computer-Systems")
CSV_COLUMNS = ("figure", "rep", "numerator", "denominator", "unit", "ratio")
MIN_REPS = 3

#: The baseline of the parse figure: walk DIR like `memstor parse` does and json.load every file.
JSON_LOOP = (
    "import json, os, sys\n"
    "n = 0\n"
    "for top, dirs, files in os.walk(sys.argv[1]):\n"
    "    dirs.sort()\n"
    "    for name in sorted(files):\n"
    "        with open(os.path.join(top, name), encoding='utf-8') as fh:\n"
    "            json.load(fh)\n"
    "        n += 1\n"
    "print(n)\n"
)


class NotMeasured(Exception):
    """A figure cannot be measured here; str() is the one-line reason (what is missing, how to get it)."""


# ----------------------------------------------------------------------------------- statistics


def median(values: Sequence[float]) -> float:
    """The median of values (same unit as the values); ValueError when empty."""
    if not values:
        raise ValueError("median of no values")
    return float(statistics.median(values))


def spread(values: Sequence[float]) -> tuple[float, float]:
    """(min, max) of values, the spread reported beside every median."""
    if not values:
        raise ValueError("spread of no values")
    return float(min(values)), float(max(values))


def iqr(values: Sequence[float]) -> tuple[float, float]:
    """(25th, 75th) percentile of values (inclusive method; equals (min, max) for fewer than 3 values)."""
    if len(values) < 3:
        return spread(values)
    q = statistics.quantiles(values, n=4, method="inclusive")
    return float(q[0]), float(q[2])


@dataclass(frozen=True)
class Target:
    """The acceptance range of a ratio: lo <= ratio <= hi (None = unbounded); both None = report only."""

    lo: float | None = None
    hi: float | None = None

    def text(self) -> str:
        """The target as the report prints it, e.g. ``≤ 1.10``, ``≥ 0.70``, ``0.85–1.15``, ``report``."""
        if self.lo is None and self.hi is None:
            return "report"
        if self.lo is None:
            return f"≤ {self.hi:.2f}"
        if self.hi is None:
            return f"≥ {self.lo:.2f}"
        return f"{self.lo:.2f}–{self.hi:.2f}"

    def judge(self, ratio: float) -> str:
        """``pass`` or ``fail`` for a ratio (``reported`` when there is no target)."""
        if self.lo is None and self.hi is None:
            return "reported"
        ok = (self.lo is None or ratio >= self.lo) and (self.hi is None or ratio <= self.hi)
        return "pass" if ok else "fail"


@dataclass
class Sample:
    """One repetition of a figure: numerator / denominator, both in `unit`."""

    figure: str
    rep: int
    numerator: float
    denominator: float
    unit: str

    @property
    def ratio(self) -> float:
        """numerator / denominator (dimensionless); NaN when the denominator is not positive."""
        return self.numerator / self.denominator if self.denominator > 0 else float("nan")


@dataclass
class Figure:
    """A figure's definition and, after measuring, its samples or the reason it was not measured."""

    key: str  # the --only name of the function that measures it
    name: str  # row name in bench.csv / bench.md, e.g. "bandwidth-1t"
    title: str  # what is divided by what
    target: Target
    num_label: str = "numerator"  # what the numerator is (for the absolute-numbers column)
    den_label: str = "denominator"
    samples: list[Sample] = field(default_factory=list)
    not_measured: str | None = None  # reason, when not measured
    notes: list[str] = field(default_factory=list)  # extra absolute numbers and caveats
    failure: str | None = None  # a measurement that ran but is wrong (e.g. a no-op that rebuilt)
    elapsed_s: float = 0.0

    def add(self, rep: int, numerator: float, denominator: float, unit: str) -> Sample:
        """Record one repetition."""
        s = Sample(self.name, rep, float(numerator), float(denominator), unit)
        self.samples.append(s)
        return s

    def stopped(self, reason: str) -> None:
        """A repetition could not run: the figure is failed if some repetitions ran, else not measured."""
        if self.samples:
            self.failure = reason
        else:
            self.not_measured = reason

    def ratios(self) -> list[float]:
        """The ratio of every repetition."""
        return [s.ratio for s in self.samples]

    def verdict(self) -> str:
        """``pass`` | ``fail`` | ``reported`` | ``not measured``."""
        if self.not_measured is not None or not self.samples:
            return "not measured"
        if self.failure is not None:
            return "fail"
        return self.target.judge(median(self.ratios()))

    def absolute(self) -> str:
        """Medians of numerator and denominator with their unit, plus the notes."""
        if not self.samples:
            return "; ".join(self.notes)
        unit = self.samples[0].unit
        num = median([s.numerator for s in self.samples])
        den = median([s.denominator for s in self.samples])
        parts = [f"{self.num_label} {_fmt(num)} {unit}", f"{self.den_label} {_fmt(den)} {unit}",
                 f"n={len(self.samples)}"]
        if self.failure:
            parts.append(f"FAILED: {self.failure}")
        return "; ".join(parts + self.notes)


def stop_all(figures, err: BaseException) -> None:
    """Every figure in `figures` stopped by `err`: a NotMeasured's reason as it is, any other error as one line
    ``Type: first line`` (Figure.stopped: failed when some repetitions ran, else not measured)."""
    reason = str(err) if isinstance(err, NotMeasured) else f"{type(err).__name__}: {first_line(err)}"
    for f in figures:
        f.stopped(reason)


def _fmt(x: float) -> str:
    """A number with 4 significant digits, no exponent for everyday magnitudes."""
    if x != x:  # NaN
        return "nan"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.4g}"


# ------------------------------------------------------------------------------------- report


def machine_summary() -> tuple[str, dict]:
    """(one-line description, full JSON-able description) of this machine.

    The full description is memstor.measure.sysinfo.collect() when that module exists, else /proc/cpuinfo's
    model name, the CPU count and the memory size.
    """
    model = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("model name", "Model", "Hardware")) and ":" in line:
                model = line.split(":", 1)[1].strip()
                break
    mem_gib = None
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_gib = int(line.split()[1]) / 1024**2
    line = f"{platform.node()}: {model or platform.processor() or platform.machine()}, {os.cpu_count()} CPUs"
    if mem_gib:
        line += f", {mem_gib:.1f} GiB RAM"
    line += f", Linux {platform.release()}" if sys.platform.startswith("linux") else f", {platform.platform()}"
    full: dict = {"summary": line}
    try:
        full["sysinfo"] = collect(None)
    except Exception as err:  # noqa: BLE001 - the machine line above is enough for the report
        full["sysinfo"] = f"memstor.measure.sysinfo.collect failed: {type(err).__name__}: {err}"
    return line, full


def to_csv(figures: Sequence[Figure]) -> str:
    """The tidy table: one row per figure x repetition (columns CSV_COLUMNS)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for f in figures:
        for s in f.samples:
            w.writerow([s.figure, s.rep, repr(s.numerator), repr(s.denominator), s.unit, f"{s.ratio:.6g}"])
    return buf.getvalue()


def _md_cell(text: str) -> str:
    """Text safe inside a markdown table cell (no pipes, no newlines)."""
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(figures: Sequence[Figure], machine: str, meta: dict) -> str:
    """The bench.md report: one table row per figure, then how it was measured."""
    lines = [
        "# memstor benchmarks",
        "",
        f"Machine: {machine}  ",
        f"Run: {meta.get('started', '')} → {meta.get('finished', '')}, {meta.get('reps')} repetitions per "
        f"figure{' (--smoke: tiny sizes, not a real measurement)' if meta.get('smoke') else ''}, "
        f"load average {meta.get('load_before', '?')} before / {meta.get('load_after', '?')} after.  ",
        "Every figure is a ratio of two things measured in the same run (order alternating between "
        "repetitions); median and min–max spread over the repetitions. Machines here are shared: "
        "read the ratios, not the absolute numbers.",
        "",
        "| figure | ratio (median) | spread (min–max) | target | result | absolute numbers (medians) | machine |",
        "|---|---|---|---|---|---|---|",
    ]
    host = machine.split(":", 1)[0]
    for f in figures:
        if f.not_measured is not None or not f.samples:
            reason = f.not_measured or "no repetition completed"
            lines.append(f"| {f.name} | – | – | {f.target.text()} | not measured: {_md_cell(reason)} | "
                         f"{_md_cell('; '.join(f.notes)) or '–'} | {host} |")
            continue
        r = f.ratios()
        lo, hi = spread(r)
        lines.append(f"| {f.name} | {median(r):.3f} | {lo:.3f}–{hi:.3f} | {f.target.text()} | "
                     f"{f.verdict()} | {_md_cell(f.absolute())} | {host} |")
    lines += ["", "## Figures", ""]
    for f in figures:
        lines.append(f"- **{f.name}**: {f.title} ({f.elapsed_s:.0f} s to measure).")
    lines += ["", "Raw repetitions: `bench.csv` (figure, rep, numerator, denominator, unit, ratio); "
              "machine description: `bench-machine.json`.", ""]
    return "\n".join(lines)


def write_report(out: Path, figures: Sequence[Figure], machine: str, machine_full: dict, meta: dict) -> None:
    """Write ``bench.md``, ``bench.csv`` and ``bench-machine.json`` into ``out`` (atomically each)."""
    from memstor.core.files import atomic_write

    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / "bench.csv", to_csv(figures))
    atomic_write(out / "bench.md", to_markdown(figures, machine, meta))
    atomic_write(out / "bench-machine.json", json.dumps(machine_full, indent=2, default=str) + "\n")


# --------------------------------------------------------------------------------- run context


@dataclass
class Config:
    """Settings shared by the figures."""

    out: Path
    reps: int = MIN_REPS
    smoke: bool = False
    root: Path = ROOT
    work: Path = Path(tempfile.gettempdir())  # scratch folder of this run (removed at the end)
    log: Callable[[str], None] = lambda msg: print(msg, file=sys.stderr, flush=True)

    @property
    def python(self) -> str:
        """The interpreter running memstor (the repository's .venv under make)."""
        return sys.executable


def _load() -> str:
    """The 1-minute load average, formatted (``?`` when unknown)."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return "?"


def _last_line(text: str, limit: int = 240) -> str:
    """The last non-empty line of text (a tool's error), shortened to `limit` characters."""
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    line = lines[-1] if lines else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def timed(cmd: Sequence[str], *, cwd: Path | None = None, env: dict | None = None, timeout: float = 3600,
          what: str = "") -> tuple[float, subprocess.CompletedProcess]:
    """Run cmd (captured output) and return (wall seconds, result); NotMeasured when it cannot start."""
    t0 = time.perf_counter()
    try:
        res = subprocess.run(list(cmd), cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise NotMeasured(f"{what or cmd[0]}: {cmd[0]} not found") from None
    except subprocess.TimeoutExpired:
        raise NotMeasured(f"{what or cmd[0]}: did not finish within {timeout:.0f} s") from None
    return time.perf_counter() - t0, res


def _require_ok(res: subprocess.CompletedProcess, what: str) -> None:
    """NotMeasured naming the command's own last error line when it exited non-zero."""
    if res.returncode != 0:
        raise NotMeasured(f"{what} exited {res.returncode}: {_last_line(res.stderr or res.stdout)}")


# ------------------------------------------------------------------------------ fio test files


def make_test_file(size_bytes: int, data_root: Path):
    """A test file of size_bytes for fio (memstor.measure.target's own, filled: reads hit the device)."""
    return prepare_test_file(size_bytes, Path(data_root))


# --------------------------------------------------------------------------- figure: overhead


def _overhead_jobs(smoke: bool) -> list[tuple[str, dict]]:
    """The sweep's points: (name, FioJob kwargs). 8 x 1 s (rw x bs x iodepth), or 2 x 0.5 s in smoke."""
    if smoke:
        grid = [("randread", "4k", 1), ("randwrite", "4k", 8)]
        runtime = 0.5
    else:
        grid = [(rw, bs, qd) for rw in ("randread", "randwrite") for bs in ("4k", "64k") for qd in (1, 16)]
        runtime = 1.0
    return [(f"{rw}-bs{bs}-qd{qd}", dict(rw=rw, bs=bs, iodepth=qd, runtime_s=runtime, ramp_s=0))
            for rw, bs, qd in grid]


def direct_script(commands: Sequence[Sequence[str]], out_dir: Path) -> str:
    """A bash script running the fio command lines one after the other, each --output= redirected into
    out_dir (same file name as memstor's raw output, without the temp suffix)."""
    lines = ["set -e"]
    for cmd in commands:
        argv = []
        for a in cmd:
            if a.startswith("--output="):
                name = Path(a.split("=", 1)[1]).name.split(".tmp")[0]
                a = f"--output={out_dir / name}"
            argv.append(a)
        lines.append(shlex.join(argv))
    return "\n".join(lines) + "\n"


def fig_overhead(cfg: Config) -> list[Figure]:
    """Harness overhead: wall time of a memstor sweep / the same fio commands in bash (target ≤ 1.10)."""
    fig = Figure("overhead", "overhead", "wall time of a sweep of 8 fio points x 1 s through memstor "
                 "(run_sweep + FioRunner, fresh data folder, no progress bar) / the same 8 fio command lines "
                 "(from the points' .meta.json) run by bash", Target(hi=1.10), "memstor", "bash")
    from memstor.measure import fio, sweep

    try:
        fio.fio_binary()
    except MemstorError as err:  # no fio: one line with the install command
        fig.not_measured = str(err)
        return [fig]
    work = cfg.work / "overhead"
    specs = _overhead_jobs(cfg.smoke)
    size = "64m" if cfg.smoke else "256m"
    tf = make_test_file(64 << 20 if cfg.smoke else 256 << 20, work / "data")
    jobs = {name: fio.FioJob(name=name, size=size, filename=str(tf.path), **kw) for name, kw in specs}
    points = [sweep.Point(name, {"bench": "overhead", **kw}, est_s=kw["runtime_s"]) for name, kw in specs]
    runner = fio.FioRunner(jobs, tf)
    # Untimed warm-up: probes O_DIRECT and the engine once (FioRunner caches the choice) and warms the
    # fio binary and the file's metadata.
    warm = sweep.run_sweep("bench-warmup", points[:1], runner, work / "warmup", "bench", progress=False)
    if warm[0].status != "done":
        fig.not_measured = f"fio warm-up point failed: {warm[0].error}"
        return [fig]
    commands: list[list[str]] = []
    for rep in range(cfg.reps):
        order = ("memstor", "bash") if rep % 2 == 0 or not commands else ("bash", "memstor")
        t = {}
        for who in order:
            if who == "memstor":
                data = work / f"rep{rep}"
                t0 = time.perf_counter()
                results = sweep.run_sweep("bench-overhead", points, runner, data, "bench", progress=False)
                t[who] = time.perf_counter() - t0
                bad = [r for r in results if r.status != "done"]
                if bad:
                    fig.failure = f"memstor point {bad[0].point.name}: {bad[0].status} {bad[0].error or ''}".strip()
                    return [fig]
                if not commands:
                    commands = [json.loads(r.meta.read_text())["command"] for r in results]
            else:
                direct = work / f"direct{rep}"
                direct.mkdir(parents=True, exist_ok=True)
                script = work / f"direct{rep}.sh"
                script.write_text(direct_script(commands, direct))
                secs, res = timed(["bash", str(script)], what="the bash loop of fio commands")
                _require_ok(res, "the bash loop of fio commands")
                t[who] = secs
                missing = [p.name for p in points if not fio.json_complete(direct / f"{p.name}.json")]
                if missing:
                    fig.failure = f"direct fio run of {missing[0]} wrote no complete JSON"
                    return [fig]
        fig.add(rep, t["memstor"], t["bash"], "s")
        cfg.log(f"  overhead rep {rep}: memstor {t['memstor']:.2f} s, bash {t['bash']:.2f} s")
    meta0 = json.loads((work / "rep0" / "raw" / "bench" / "bench-overhead" /
                        f"{points[0].name}.meta.json").read_text())
    fig.notes.append(f"{len(points)} points x {specs[0][1]['runtime_s']:g} s, ioengine {meta0.get('ioengine')}, "
                     f"test file {size}")
    return [fig]


# ------------------------------------------------------------------------------ figure: parse


def parse_sources(real: Path = REAL) -> list[Path]:
    """The real fio JSON outputs the parse figure copies: *.json of PARSE_SOURCES that json.load reads
    as an object with "jobs" (sorted, for a reproducible mix)."""
    found = []
    for repo in PARSE_SOURCES:
        for p in sorted((real / repo).rglob("*.json")):
            with contextlib.suppress(OSError, ValueError):
                doc = json.loads(p.read_text(encoding="utf-8"))
                if isinstance(doc, dict) and doc.get("jobs"):
                    found.append(p)
    return found


def make_parse_corpus(sources: Sequence[Path], n_files: int, dest: Path) -> int:
    """Copy sources round-robin into dest until it holds n_files files (100 per sub-folder); returns
    the number of fio rows memstor's parser makes of them (the expected row count of the CSV)."""
    from memstor.parse.fio import parse_fio

    rows_per = {}
    for src in sources:
        res = parse_fio(src.read_text(encoding="utf-8"), str(src))
        if res.errors or not res.rows:
            raise NotMeasured(f"{src}: memstor.parse.fio does not read this real file cleanly "
                              f"({(res.errors or ['no rows'])[0]}); fix the parser first")
        rows_per[src] = len(res.rows)
    expected = 0
    for i in range(n_files):
        src = sources[i % len(sources)]
        sub = dest / f"d{i // 100:03d}"
        sub.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, sub / f"{i:05d}-{src.name}")
        expected += rows_per[src]
    return expected


def memstor_command() -> list[str]:
    """argv prefix of the `memstor` command of this interpreter's environment."""
    exe = Path(sys.executable).parent / "memstor"
    return [str(exe)] if exe.is_file() else [sys.executable, "-m", "memstor.cli"]


def fig_parse(cfg: Config) -> list[Figure]:
    """Parse throughput: `memstor parse --kind fio` / a bare json.load loop, both subprocesses (≤ 3.0)."""
    fig = Figure("parse", "parse", "wall time of `memstor parse --kind fio DIR -o out.csv` / a `python -c` "
                 "loop of bare json.load over the same files (both fresh processes)", Target(hi=3.0),
                 "memstor parse", "json.load")
    try:
        sources = parse_sources()
        if not sources:
            raise NotMeasured(f"no real fio JSON files under {REAL} ({', '.join(PARSE_SOURCES)})")
        n_files = 200 if cfg.smoke else 5000
        corpus = cfg.work / "parse" / "corpus"
        expected_rows = make_parse_corpus(sources, n_files, corpus)
    except NotMeasured as err:
        fig.not_measured = str(err)
        return [fig]
    out_csv = cfg.work / "parse" / "out.csv"
    parse_cmd = memstor_command() + ["parse", "--kind", "fio", str(corpus), "-o", str(out_csv)]
    json_cmd = [cfg.python, "-c", JSON_LOOP, str(corpus)]
    def once(who: str) -> float:
        """Wall seconds of one run of `who` (memstor parse | json.load loop), checked for completeness."""
        if who == "memstor":
            with contextlib.suppress(OSError):
                out_csv.unlink()
            secs, res = timed(parse_cmd, what="memstor parse")
            _require_ok(res, "memstor parse")
            with open(out_csv, encoding="utf-8") as fh:
                rows = sum(1 for _ in fh) - 1
            if rows != expected_rows:
                fig.failure = f"memstor parse wrote {rows} rows, expected {expected_rows}"
            return secs
        secs, res = timed(json_cmd, what="json.load loop")
        _require_ok(res, "the json.load loop")
        if res.stdout.strip() != str(n_files):
            fig.failure = f"the json.load loop read {res.stdout.strip()} files, expected {n_files}"
        return secs

    try:
        once("memstor"), once("json")  # untimed warm-up: page cache, .pyc files
        for rep in range(cfg.reps):
            t = {who: once(who) for who in (("memstor", "json") if rep % 2 == 0 else ("json", "memstor"))}
            fig.add(rep, t["memstor"], t["json"], "s")
            cfg.log(f"  parse rep {rep}: memstor {t['memstor']:.2f} s, json.load {t['json']:.2f} s")
    except NotMeasured as err:
        fig.stopped(str(err))
        return [fig]
    fps = [n_files / s.numerator for s in fig.samples]
    fig.notes.append(f"{n_files} files ({len(sources)} distinct real fio JSON from {' and '.join(p.split('__')[0] for p in PARSE_SOURCES)}), "
                     f"{expected_rows} rows; memstor parse {_fmt(median(fps))} files/s "
                     f"({_fmt(min(fps))}–{_fmt(max(fps))}), json.load {_fmt(median([n_files / s.denominator for s in fig.samples]))} files/s")
    return [fig]


# ---------------------------------------------------------------------------- figure: rebuild


def fresh_checkout(root: Path, dest: Path) -> str:
    """`git clone` root into dest, then copy the working tree's uncommitted changes over it (tracked +
    untracked-not-ignored files; deleted files removed), so the checkout is what a user would get after
    the lead commits. Read-only for root. Returns a one-line description of what was done."""
    res = subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(root), str(dest)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise NotMeasured(f"git clone {root} failed: {_last_line(res.stderr)}")
    git = ["git", "--no-optional-locks", "-C", str(root)]
    status = subprocess.run(git + ["status", "--porcelain"], capture_output=True, text=True).stdout
    if not status.strip():
        return "fresh git clone (clean working tree)"
    listed = subprocess.run(git + ["ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            capture_output=True, text=True).stdout
    deleted = subprocess.run(git + ["ls-files", "-z", "--deleted"], capture_output=True, text=True).stdout
    gone = {p for p in deleted.split("\0") if p}
    copied = 0
    for rel in (p for p in listed.split("\0") if p):
        src, dst = root / rel, dest / rel
        if rel in gone or not (src.is_file() or src.is_symlink()):
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            dst.unlink()
        shutil.copy2(src, dst, follow_symlinks=False)
        copied += 1
    for rel in gone:
        with contextlib.suppress(OSError):
            (dest / rel).unlink()
    n_changed = len([ln for ln in status.splitlines() if ln.strip()])
    return (f"fresh git clone + the working tree's {n_changed} uncommitted changes copied over "
            f"({copied} files copied, {len(gone)} deleted)")


def borrow_venv(root: Path, dest: Path) -> str:
    """Give the checkout at dest the repository's .venv without rebuilding it: a real .venv folder whose
    entries are symlinks into root/.venv, plus its own fresh stamps (.venv/.memstor-installed and
    build/.sysdeps), so make sees the environment and system packages as installed and never writes
    into root's venv. Returns what was done (one line)."""
    src = root / ".venv"
    if not (src / "bin" / "python").exists():
        raise NotMeasured(f"{src} has no bin/python: run make env first")
    kernels = list((src / "share" / "jupyter" / "kernels").glob("memstor/kernel.json"))
    if not kernels:
        raise NotMeasured(f"the Jupyter kernel 'memstor' is not registered in {src}: run make env first")
    venv = dest / ".venv"
    venv.mkdir()
    for entry in src.iterdir():
        if entry.name != ".memstor-installed":
            (venv / entry.name).symlink_to(entry)
    (dest / "build").mkdir(exist_ok=True)
    (dest / "build" / ".sysdeps").touch()
    (venv / ".memstor-installed").touch()
    return (f"{dest.name}/.venv = symlinks into {src} with fresh stamps .venv/.memstor-installed and "
            f"build/.sysdeps; PYTHONPATH={dest.name}/lib so the checkout's own memstor is imported")


def _make_env(checkout: Path) -> dict:
    """The environment of make in the checkout: no MAKEFLAGS of an outer make, the checkout's lib first."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "PROFILE", "TARGET", "DATA")}
    env["PYTHONPATH"] = str(checkout / "lib") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def make_error(text: str) -> str:
    """The most telling line of a failed make: the last Python exception line (``UnsafeTarget: ...``,
    as papermill prints it), else make's first ``*** [...] Error`` line, else the last line."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    exc = [ln for ln in lines if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Target|Failed|Interrupted)\b:\s*\S", ln)]
    if exc:
        return _last_line(exc[-1])
    stars = [ln for ln in lines if re.search(r"\*\*\* \[.*\] Error", ln)]
    return _last_line(stars[0] if stars else (lines[-1] if lines else "no output"))


def snapshot(checkout: Path) -> dict[str, int]:
    """mtime_ns of every generated file (build/, report/, data/) of a checkout: what a no-op must not touch."""
    snap = {}
    for top in ("build", "report", "data"):
        base = checkout / top
        if base.is_dir():
            for p in base.rglob("*"):
                if p.is_file() and ".tmp" not in p.name:
                    snap[str(p.relative_to(checkout))] = p.stat().st_mtime_ns
    return snap


def fig_rebuild(cfg: Config) -> list[Figure]:
    """No-op rebuild (second `make all PROFILE=quick` / first, ≤ 0.05) and report-only rebuild
    (`make report` / first `make all`, reported)."""
    noop = Figure("rebuild", "rebuild-noop", "wall time of a second `make all PROFILE=quick` / the first one, "
                  "in a fresh checkout of the repository", Target(hi=0.05), "second make all", "first make all")
    report = Figure("rebuild", "rebuild-report", "wall time of `make report PROFILE=quick` (report only, "
                    "measures nothing) / the first full `make all PROFILE=quick`", Target(),
                    "make report", "first make all")
    figs = [noop, report]
    if shutil.which("make") is None or shutil.which("git") is None:
        for f in figs:
            f.not_measured = "make or git not on PATH"
        return figs
    if cfg.smoke:
        for f in figs:
            f.not_measured = "--smoke: a full make all is not run in smoke mode"
        return figs
    if not (cfg.root / ".git").exists():
        for f in figs:
            f.not_measured = f"{cfg.root} is not a git repository"
        return figs
    checkout = cfg.work / "rebuild" / "memstor"
    checkout.parent.mkdir(parents=True, exist_ok=True)
    logs = cfg.work / "rebuild"
    try:
        how = fresh_checkout(cfg.root, checkout)
        venv_how = borrow_venv(cfg.root, checkout)
    except NotMeasured as err:
        for f in figs:
            f.not_measured = str(err)
        return figs
    env = _make_env(checkout)
    make = ["make", "--no-print-directory", "-C", str(checkout)]

    def run(target: str, log_name: str) -> float:
        secs, res = timed(make + [target, "PROFILE=quick"], env=env, timeout=3600, what=f"make {target}")
        (logs / log_name).write_text(res.stdout + "\n--- stderr ---\n" + res.stderr)
        if res.returncode != 0:
            keep = cfg.out / "bench-logs"
            keep.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(logs / log_name, keep / log_name)
            raise NotMeasured(f"make {target} PROFILE=quick failed in the checkout (exit {res.returncode}): "
                              f"{make_error(res.stderr + res.stdout)} (log: {keep / log_name})")
        return secs

    try:
        cfg.log("  rebuild: first make all PROFILE=quick (several minutes)")
        full_s = run("all", "make-all-1.log")
        cfg.log(f"  rebuild: first make all {full_s:.1f} s")
        if not (checkout / "report" / "report.html").is_file():
            raise NotMeasured("make all PROFILE=quick succeeded but wrote no report/report.html")
        before = snapshot(checkout)
        for rep in range(cfg.reps):
            secs = run("all", f"make-all-noop-{rep}.log")
            noop.add(rep, secs, full_s, "s")
            cfg.log(f"  rebuild: no-op make all {secs:.2f} s")
        after = snapshot(checkout)
        touched = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        if touched:
            noop.failure = f"the second make all changed {len(touched)} files, e.g. {touched[0]}"
        for rep in range(cfg.reps):
            secs = run("report", f"make-report-{rep}.log")
            report.add(rep, secs, full_s, "s")
            cfg.log(f"  rebuild: make report {secs:.1f} s")
    except NotMeasured as err:
        for f in figs:
            if not f.samples:
                f.not_measured = str(err)
            else:
                f.failure = str(err)
        return figs
    for f in figs:
        f.notes.append(f"denominator = ONE full quick build ({full_s:.0f} s), environment not rebuilt: {venv_how}")
        f.notes.append(how)
    return figs


# ---------------------------------------------------------------------- figures: latency, bandwidth


def _tool(cfg: Config, name: str) -> Path:
    """build/bin/<name> of the repository, built on the fly for the chase; NotMeasured when absent."""
    path = cfg.root / "build" / "bin" / name
    if name == "chase" and not path.exists() and (cfg.root / "bench" / "chase.c").is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        res = subprocess.run(["cc", "-O2", "-o", str(path), str(cfg.root / "bench" / "chase.c")],
                             capture_output=True, text=True)
        if res.returncode != 0:
            raise NotMeasured(f"cc -O2 -o build/bin/chase bench/chase.c failed: {_last_line(res.stderr)}")
    if not (path.is_file() and os.access(path, os.X_OK)):
        how = "make loadlat" if name == "loadlat" else "cc -O2 -o build/bin/chase bench/chase.c"
        raise NotMeasured(f"{path} not found: build it ({how})")
    return path


def loadlat_values(text: str, field_name: str) -> list[float]:
    """The `latency_ns` or `bandwidth_MBps` values in loadlat's MLC-style output (memstor.parse.mlc)."""
    res = parse_mlc(text, "loadlat")
    return [float(r[field_name]) for r in res.rows if r.get(field_name) is not None]


def chase_ns(text: str) -> float:
    """ns per load from the pointer chase's output (``ns per load: X``; else the last ``X ns``)."""
    m = re.findall(r"ns per load:\s*([0-9]+(?:\.[0-9]+)?)", text)
    if not m:
        m = re.findall(r"([0-9]+(?:\.[0-9]+)?)\s*ns\b", text)
    if not m:
        raise NotMeasured(f"the pointer chase printed no 'ns per load: X' line: {_last_line(text)!r}")
    return float(m[-1])


def huge_evidence(loadlat_out: str, chase_out: str) -> str:
    """What each tool says about huge pages: loadlat's AnonHugePages line and chase's huge_KiB=."""
    ll = re.search(r"AnonHugePages in buffers:\s*([^\n]*)", loadlat_out)
    ch = re.search(r"buffer_MiB=(\d+)\s+huge_KiB=(-?\d+)", chase_out)
    parts = [f"loadlat AnonHugePages {ll.group(1).strip()}" if ll else "loadlat: no huge-page line"]
    parts.append(f"chase huge {int(ch.group(2)) / 1024:.0f} of {ch.group(1)} MiB" if ch else "chase: no huge_KiB")
    return ", ".join(parts)


def fig_latency(cfg: Config) -> list[Figure]:
    """loadlat idle latency / the independent pointer chase, 1 GiB with huge pages (target 0.85–1.15)."""
    fig = Figure("latency", "latency", "loadlat --idle_latency ns per load / the independent random pointer "
                 "chase build/bin/chase (bench/chase.c), both over 1 GiB with huge pages (madvise)",
                 Target(0.85, 1.15), "loadlat", "chase")
    size = "256m" if cfg.smoke else "1g"
    try:
        loadlat, chase = _tool(cfg, "loadlat"), _tool(cfg, "chase")
    except NotMeasured as err:
        fig.not_measured = str(err)
        return [fig]
    seconds = 1 if cfg.smoke else 2
    ll_cmd = [str(loadlat), "--idle_latency", f"-b{size}", "-L", f"-t{seconds}"]
    # chase [MiB] [seconds] [nohuge]: huge pages (madvise) by default
    ch_cmd = [str(chase), "256" if cfg.smoke else "1024", str(seconds)]
    outs = {}
    try:
        for rep in range(cfg.reps):
            v = {}
            for who in (("loadlat", "chase") if rep % 2 == 0 else ("chase", "loadlat")):
                cmd = ll_cmd if who == "loadlat" else ch_cmd
                _, res = timed(cmd, timeout=600, what=who)
                _require_ok(res, shlex.join(cmd))
                outs[who] = res.stdout
                if who == "loadlat":
                    vals = loadlat_values(res.stdout, "latency_ns")
                    if not vals:
                        raise NotMeasured(f"loadlat printed no idle latency: {_last_line(res.stdout)!r}")
                    v[who] = vals[-1]
                else:
                    v[who] = chase_ns(res.stdout)
            fig.add(rep, v["loadlat"], v["chase"], "ns")
            cfg.log(f"  latency rep {rep}: loadlat {v['loadlat']:.1f} ns, chase {v['chase']:.1f} ns")
    except NotMeasured as err:
        fig.stopped(str(err))
    if len(outs) == 2:
        fig.notes.append(huge_evidence(outs["loadlat"], outs["chase"]) + " (last repetition)")
    fig.notes.append(f"buffer {size}; commands: {shlex.join(ll_cmd)} | {shlex.join(ch_cmd)}")
    return [fig]


def likwid_mbps(text: str) -> float:
    """likwid-bench's `MByte/s:` value (decimal MB/s, 10^6 bytes/s)."""
    m = re.findall(r"^MByte/s:\s*([0-9.]+)", text, re.M)
    if not m:
        raise NotMeasured(f"likwid-bench printed no MByte/s line: {_last_line(text)!r}")
    return float(m[-1])


def fig_bandwidth(cfg: Config) -> list[Figure]:
    """loadlat delay-0 read bandwidth / likwid-bench load_avx, 1 and 2 threads (target ≥ 0.70 each)."""
    threads = (1, 2)
    figs = [Figure("bandwidth", f"bandwidth-{n}t", f"loadlat --loaded_latency -d0 -T -R with {n} load "
                   f"thread(s) MB/s / likwid-bench -t load_avx -w S0:1GB:{n} MB/s", Target(lo=0.70),
                   "loadlat", "likwid-bench") for n in threads]
    try:
        loadlat = _tool(cfg, "loadlat")
        likwid = shutil.which("likwid-bench")
        if likwid is None:
            raise NotMeasured("likwid-bench not installed (Debian/Ubuntu: sudo apt-get install likwid; "
                              "or scripts/install-system-deps --bench)")
    except NotMeasured as err:
        for f in figs:
            f.not_measured = str(err)
        return figs
    total = "100MB" if cfg.smoke else "1GB"
    total_bytes = 100e6 if cfg.smoke else 1e9
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))
    for n, fig in zip(threads, figs):
        if n > len(cpus):
            fig.not_measured = f"{n} threads need {n} CPUs; this process may use {len(cpus)}"
            continue
        # the same total footprint as likwid's S0:<total>:<n>, in whole MiB per thread (page multiple)
        mib = max(1, round(total_bytes / n / 2**20))
        ll_cmd = [str(loadlat), "--loaded_latency", "-d0", "-T", "-R", f"-b{mib}m",
                  "-k" + ",".join(str(c) for c in cpus[:n]), "-t1" if cfg.smoke else "-t2"]
        lk_cmd = [likwid, "-t", "load_avx", "-w", f"S0:{total}:{n}"]
        try:
            for rep in range(cfg.reps):
                v = {}
                for who in (("loadlat", "likwid") if rep % 2 == 0 else ("likwid", "loadlat")):
                    cmd = ll_cmd if who == "loadlat" else lk_cmd
                    _, res = timed(cmd, timeout=600, what=who)
                    if who == "likwid" and res.returncode != 0:
                        raise NotMeasured(f"likwid-bench cannot run in this VM (exit {res.returncode}): "
                                          f"{_last_line(res.stderr or res.stdout)}")
                    _require_ok(res, shlex.join(cmd))
                    if who == "loadlat":
                        vals = loadlat_values(res.stdout, "bandwidth_MBps")
                        if not vals:
                            raise NotMeasured(f"loadlat printed no bandwidth: {_last_line(res.stdout)!r}")
                        v[who] = vals[0]
                    else:
                        v[who] = likwid_mbps(res.stdout)
                fig.add(rep, v["loadlat"], v["likwid"], "MBps")
                cfg.log(f"  bandwidth {n}t rep {rep}: loadlat {v['loadlat']:.0f} MB/s, likwid {v['likwid']:.0f} MB/s")
        except NotMeasured as err:
            fig.stopped(str(err))
        fig.notes.append(f"MB = 10^6 bytes; {shlex.join(ll_cmd)} | {shlex.join(lk_cmd)}")
    return figs


# --------------------------------------------------------------------------------- figure: qd


def hand_grid(smoke: bool) -> list[tuple[int, int]]:
    """(numjobs, iodepth) of the hand-tuned fio search."""
    if smoke:
        return [(1, 32), (2, 32)]
    return [(nj, qd) for nj in (1, 2, 4) for qd in (16, 32, 64, 128, 256)]


def hand_fio_command(filename: str, size: str, engine: str, numjobs: int, iodepth: int, runtime_s: float,
                     ramp_s: float, output: Path) -> list[str]:
    """A fio command line written by hand (no memstor code): 4K random reads, O_DIRECT, group reporting."""
    return ["fio", "--name=hand", f"--filename={filename}", f"--size={size}", "--rw=randread", "--bs=4k",
            f"--ioengine={engine}", "--direct=1", f"--numjobs={numjobs}", f"--iodepth={iodepth}",
            "--time_based", f"--runtime={int(runtime_s * 1000)}ms", f"--ramp_time={int(ramp_s * 1000)}ms",
            "--norandommap", "--randrepeat=0", "--group_reporting", "--allow_file_create=0",
            "--output-format=json", f"--output={output}"]


def fio_read_iops(path: Path) -> float:
    """Read IOPS summed over the jobs of a fio JSON output (one group-reported job here)."""
    doc = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    jobs = doc.get("jobs") or []
    if not jobs or any(j.get("error") for j in jobs):
        raise NotMeasured(f"{path.name}: fio reported an error or no job")
    return float(sum(j["read"]["iops"] for j in jobs))


def fig_qd(cfg: Config) -> list[Figure]:
    """Best 4K randread IOPS of memstor's queue-depth sweep / best of a hand-tuned fio grid (≥ 0.95)."""
    fig = Figure("qd", "qd-best-iops", "best 4K randread IOPS of the fio-queue-depth experiment "
                 "(memstor.experiments.fio_queue_depth) / best of a hand-written fio grid numjobs x iodepth on the "
                 "same test file", Target(lo=0.95), "memstor", "hand-tuned fio")
    from memstor.experiments import load_profile
    from memstor.experiments import fio_queue_depth as queue_depth
    runtime, ramp = (0.5, 0.2) if cfg.smoke else (2.0, 1.0)
    overrides = {"rw": ["randread"], "runtime_s": runtime, "ramp_s": ramp, "repetitions": 1}
    if cfg.smoke:
        overrides.update(iodepth=[1, 32], file_size="64m", spec_numjobs=2)
    params = load_profile("standard", "fio-queue-depth", overrides)
    data = cfg.work / "qd" / "data"
    grid = hand_grid(cfg.smoke)
    best_hand: dict = {}
    try:
        for rep in range(cfg.reps):
            v = {}
            for who in (("memstor", "hand") if rep % 2 == 0 or "file" not in best_hand else ("hand", "memstor")):
                if who == "memstor":
                    df = queue_depth.run_queue_depth(params, data_root=data, target_dir=None, host=f"bench-rep{rep}",
                                                 progress=False)
                    ok = df[(df["rw"] == "randread") & (df["direction"] == "read") & (df["bs_bytes"] == 4096)
                            & df["iops"].notna()]
                    if "status" in ok.columns:
                        ok = ok[ok["status"] != "failed"]
                    if ok.empty:
                        raise NotMeasured("the queue-depth sweep produced no 4K randread IOPS")
                    best = ok.loc[ok["iops"].idxmax()]
                    v[who] = float(best["iops"])
                    manifest = json.loads((data / "raw" / f"bench-rep{rep}" / "fio-queue-depth" /
                                           "manifest.json").read_text())
                    info = manifest.get("sysinfo") or {}
                    best_hand.update(file=info["test_file"], engine=info.get("ioengine", "io_uring"),
                                     size=str(params["file_size"]))
                    best_hand.setdefault("memstor_points", []).append(
                        f"qd{int(best['iodepth'])}xnj{int(best['numjobs'])}")
                else:
                    if not Path(best_hand["file"]).is_file():
                        raise NotMeasured(f"memstor's test file {best_hand['file']} vanished after the sweep")
                    iops = {}
                    for nj, qd in grid:
                        out = cfg.work / "qd" / f"hand-r{rep}-nj{nj}-qd{qd}.json"
                        cmd = hand_fio_command(best_hand["file"], best_hand["size"], best_hand["engine"], nj, qd,
                                               runtime, ramp, out)
                        _, res = timed(cmd, timeout=runtime + ramp + 120, what="fio")
                        _require_ok(res, "hand-tuned fio")
                        iops[(nj, qd)] = fio_read_iops(out)
                    arg = max(iops, key=iops.get)
                    v[who] = iops[arg]
                    best_hand.setdefault("hand_points", []).append(f"qd{arg[1]}xnj{arg[0]}")
            fig.add(rep, v["memstor"], v["hand"], "IOPS")
            cfg.log(f"  qd rep {rep}: memstor best {v['memstor']:.0f} IOPS, hand-tuned best {v['hand']:.0f} IOPS")
    except NotMeasured as err:
        fig.stopped(str(err))
    except Exception as err:  # noqa: BLE001 - a MemstorError from the experiment: one line in the report
        msg = f"{type(err).__name__}: {first_line(err)}"
        if fig.samples:
            fig.failure = msg
        else:
            fig.not_measured = msg
    if best_hand:
        fig.notes.append(f"{runtime:g} s + {ramp:g} s ramp per point, file {best_hand.get('size')}, "
                         f"engine {best_hand.get('engine')}; best memstor point per rep "
                         f"{','.join(best_hand.get('memstor_points', []))}; best hand point per rep "
                         f"{','.join(best_hand.get('hand_points', []))}; grid numjobs x iodepth "
                         f"{sorted({g[0] for g in grid})} x {sorted({g[1] for g in grid})}")
    return [fig]


def fig_steady_state(cfg: Config) -> list[Figure]:
    """Time to the steady-state verdict of the quick profile's fio-steady-state run / the time fio measured
    in it (preconditioning + rounds); notes: verdict, rounds and the standard profile's estimate."""
    fig = Figure("steady", "ss-time-to-verdict", "wall time of `memstor run fio-steady-state --profile quick` "
                 "from nothing to its verdict / the seconds fio measured in it (preconditioning passes + rounds "
                 "x runtime_s)", Target(hi=1.5), "wall", "fio measured")
    from memstor.experiments import load_profile
    from memstor.analysis import steady_state as ss
    from memstor.experiments import run_experiment

    overrides = {"file_size": "64m", "runtime_s": 0.5, "max_rounds": 6} if cfg.smoke else {}
    params = load_profile("quick", ss.EXPERIMENT, overrides)
    std = load_profile("standard", ss.EXPERIMENT)
    verdicts, per_point, pc_bps = [], [], []
    try:
        for rep in range(cfg.reps):
            t0 = time.perf_counter()
            df = run_experiment(ss.EXPERIMENT, params, data_root=cfg.work / "steady" / f"rep{rep}",
                                host=f"bench-rep{rep}", progress=False)
            wall = time.perf_counter() - t0
            done = df[df["status"] == "done"]
            if done.empty:
                raise NotMeasured("the steady-state run measured no round")
            pc_s, rounds = float(done["precondition_s"].iloc[0]), int(done["round"].max())
            fig.add(rep, wall, pc_s + float(done["runtime_s"].sum()), "s")
            v = ss.verdict_row(f"rep{rep}", done)
            verdicts.append(f"{v['verdict']} ({rounds} rounds, {wall:.0f} s)")
            per_point.append((wall - pc_s) / rounds)  # wall seconds per round, fio start-up included
            if pc_s > 0:
                pc_bps.append(float(done["precondition_bytes"].iloc[0]) / pc_s)
            cfg.log(f"  steady rep {rep}: {verdicts[-1]}")
    except Exception as err:  # noqa: BLE001 - NotMeasured, or a MemstorError from the experiment: one line
        stop_all([fig], err)
    if verdicts:
        overhead = median(per_point) - float(params["runtime_s"])  # s per round beyond its runtime
        from memstor.core.units import parse_size

        span = parse_size(str(std["file_size"]))
        pc = std["precondition_passes"] * span / median(pc_bps) if pc_bps else float("nan")
        lo = pc + ss.WINDOW_ROUNDS * (std["runtime_s"] + overhead)
        hi = pc + std["max_rounds"] * (std["runtime_s"] + overhead)
        fig.notes.append("verdicts: " + "; ".join(verdicts))
        fig.notes.append(f"standard profile estimate: {lo / 60:.1f}–{hi / 60:.1f} min (preconditioning "
                         f"{std['precondition_passes']} x {std['file_size']} at the measured "
                         f"{median(pc_bps) / 1e6:.0f} MB/s, then 5–{std['max_rounds']} rounds of "
                         f"{std['runtime_s']} s + {overhead:.2f} s measured overhead)" if pc_bps else
                         "standard profile estimate: preconditioning speed not measured")
    return [fig]


def fig_openloop(cfg: Config) -> list[Figure]:
    """Achieved / offered IOPS of fio-load-latency's open-loop points at 30, 60 and 90 % of X_max (4K
    random read; target 0.95–1.05: the rate split neutralises fio's Poisson overshoot)."""
    from memstor.experiments import load_profile
    from memstor.experiments import fio_load_latency as fll
    from memstor.experiments import run_experiment

    utils = (30, 60, 90)
    figs = {u: Figure("openloop", f"openloop-u{u}", f"achieved / offered IOPS of a fio-load-latency point at {u} % "
                      "of X_max (4K random read, Poisson arrivals split over jobs)", Target(lo=0.95, hi=1.05),
                      "achieved", "offered") for u in utils}
    runtime = 1.0 if cfg.smoke else 3.0
    overrides = {"rw": ["randread"], "utilisation_pct": list(utils), "runtime_s": runtime, "ramp_s": 0.5,
                 "file_size": "64m" if cfg.smoke else "256m", "repetitions": 1}
    params = load_profile("quick", fll.EXPERIMENT, overrides)
    notes: list[str] = []
    try:
        for rep in range(cfg.reps):
            df = run_experiment(fll.EXPERIMENT, params, data_root=cfg.work / "openloop" / f"rep{rep}",
                                host=f"bench-rep{rep}", progress=False)
            rates = df[(df["phase"] == "rate") & (df["status"] == "done")]
            for u in utils:
                r = rates[rates["utilisation_pct"] == u]
                if r.empty:
                    raise NotMeasured(f"no successful point at {u} % of X_max")
                r = r.iloc[0]
                figs[u].add(rep, float(r["achieved_iops"]), float(r["offered_iops"]), "IOPS")
                notes.append(f"rep {rep} u{u}: {int(r['numjobs'])} jobs x {int(r['rate_per_job_iops'])} IOPS, "
                             f"open loop {r['open_loop']}, overloaded {r['overloaded']}")
            cfg.log(f"  openloop rep {rep}: X_max {float(rates['x_max_iops'].iloc[0]):.0f} IOPS "
                    f"({rates['x_max_source'].iloc[0]})")
    except Exception as err:  # noqa: BLE001 - NotMeasured, or a MemstorError from the experiment: one line each
        stop_all(figs.values(), err)
    for u, f in figs.items():
        f.notes += [n for n in notes if f" u{u}:" in n]
    return list(figs.values())


# ----------------------------------------------------------------------------------- driver

def _hw_pct(df, metric: str):
    """Half-widths of the 95 % intervals of `metric` in % of its value, one per row with an interval."""
    lo, hi, v = df[f"{metric}_ci_low"], df[f"{metric}_ci_high"], df[metric]
    return ((hi - lo) / 2 / v * 100).dropna()


def _qd_sweep(cfg: Config, overrides: dict, data: Path, host: str):
    """(wall s, table) of one fio-queue-depth sweep from nothing (fresh data folder) with the standard
    profile and `overrides`."""
    from memstor.experiments import load_profile
    from memstor.experiments import run_experiment

    params = load_profile("standard", "fio-queue-depth", overrides)
    t0 = time.perf_counter()
    df = run_experiment("fio-queue-depth", params, data_root=data, host=host, progress=False)
    return time.perf_counter() - t0, df[df["status"] == "done"]


def fig_precision(cfg: Config) -> list[Figure]:
    """Time to precision (issue 18, acceptance 4): wall time of the standard fio-queue-depth sweep with
    precision_pct 2 / the same sweep at its fixed runtime (target ≤ 0.5), plus the achieved half-widths of
    both (notes: median and worst over points, IOPS and mean latency)."""
    fig = Figure("precision", "precision-time", "wall time of the standard fio-queue-depth sweep with "
                 "precision_pct=2 (each point stops when its IOPS and mean latency are within ±2 %, 95 %) / the same "
                 "sweep at the fixed runtime_s", Target(hi=0.5), "precision_pct 2", "fixed runtime")
    small = {"file_size": "64m", "iodepth": [1, 16], "rw": ["randread"], "spec_numjobs": 2, "runtime_s": 3,
             "ramp_s": 0.5} if cfg.smoke else {}
    aims = {"precision_pct": 2, "max_runtime_s": 6} if cfg.smoke else {"precision_pct": 2}
    try:
        for rep in range(cfg.reps):
            walls, hws = {}, {}
            order = ("fixed", "precise") if rep % 2 == 0 else ("precise", "fixed")
            for who in order:
                data = cfg.work / "precision" / f"{who}-rep{rep}"
                wall, df = _qd_sweep(cfg, dict(small, **(aims if who == "precise" else {})), data, f"bench-{who}")
                if df.empty:
                    raise NotMeasured(f"the {who} sweep measured no point")
                walls[who] = wall
                hws[who] = (_hw_pct(df, "iops"), _hw_pct(df, "lat_mean_us"),
                            int(df["precision_reached"].map(lambda x: str(x) == "True").sum()), len(df))
                shutil.rmtree(data / "scratch", ignore_errors=True)
            fig.add(rep, walls["precise"], walls["fixed"], "s")
            for who in order:
                iops, lat, reached, n = hws[who]
                fig.notes.append(
                    f"rep {rep} {who}: {walls[who]:.0f} s, half-width % IOPS median {iops.median():.2f} worst "
                    f"{iops.max():.2f}, mean latency median {lat.median():.2f} worst {lat.max():.2f} "
                    f"({len(iops)} of {n} points with an interval" + (f", {reached} reached ±2 %)" if who == "precise"
                                                                     else ")"))
            cfg.log(f"  precision rep {rep}: {walls['precise']:.0f} s with precision_pct 2, {walls['fixed']:.0f} s "
                    "fixed")
    except Exception as err:  # noqa: BLE001 - NotMeasured, or a MemstorError from the experiment: one line
        stop_all([fig], err)
    return [fig]


def fig_auto_grid(cfg: Config) -> list[Figure]:
    """The adaptive queue-depth grid (issue 18, acceptance 5): the standard fio-queue-depth sweep of 4K randread
    with ``iodepth: auto`` vs the same with the standard listed depths (1..1024), no spec-conditions point:
    wall time (target < 1) and best IOPS (target ≥ 0.97); fio's measured seconds and the depths in the notes."""
    time_fig = Figure("auto-grid", "auto-grid-time", "wall time of the standard 4K randread queue-depth sweep with "
                      "iodepth: auto / with the listed depths 1..1024", Target(hi=0.99), "auto", "listed")
    best_fig = Figure("auto-grid", "auto-grid-best", "best IOPS of the same two sweeps: auto / listed",
                      Target(lo=0.97), "auto", "listed")
    base = {"rw": ["randread"], "spec_iodepth": 0}
    if cfg.smoke:
        base.update(file_size="64m", runtime_s=0.5, ramp_s=0, max_iodepth=8)
    try:
        for rep in range(cfg.reps):
            walls, tables = {}, {}
            order = ("listed", "auto") if rep % 2 == 0 else ("auto", "listed")
            for who in order:
                data = cfg.work / "auto-grid" / f"{who}-rep{rep}"
                over = dict(base, iodepth="auto") if who == "auto" else dict(base)
                if cfg.smoke and who == "listed":
                    over["iodepth"] = [1, 2, 4, 8]
                wall, df = _qd_sweep(cfg, over, data, f"bench-{who}")
                if df.empty:
                    raise NotMeasured(f"the {who} sweep measured no point")
                walls[who], tables[who] = wall, df
                shutil.rmtree(data / "scratch", ignore_errors=True)
            time_fig.add(rep, walls["auto"], walls["listed"], "s")
            best = {who: float(df["iops"].max()) for who, df in tables.items()}
            best_fig.add(rep, best["auto"], best["listed"], "IOPS")
            for who in order:
                df = tables[who]
                top = df.loc[df["iops"].idxmax()]
                time_fig.notes.append(
                    f"rep {rep} {who}: {walls[who]:.0f} s wall, {df['runtime_s'].sum():.0f} s measured by fio, "
                    f"{len(df)} points (depths {','.join(str(int(d)) for d in sorted(df['iodepth']))}), best "
                    f"{top['iops']:,.0f} IOPS at depth {int(top['iodepth'])}")
            cfg.log(f"  auto-grid rep {rep}: auto {walls['auto']:.0f} s, {best['auto']:,.0f} IOPS; listed "
                    f"{walls['listed']:.0f} s, {best['listed']:,.0f} IOPS")
    except Exception as err:  # noqa: BLE001 - NotMeasured, or a MemstorError from the experiment: one line
        stop_all([time_fig, best_fig], err)
    return [time_fig, best_fig]


def fig_honesty(cfg: Config) -> list[Figure]:
    """Honesty of the one-run interval (issue 18, acceptance 3): one 4K QD1 randread point run 5 times at
    10 s; the mean within-run (batch-means) half-width of IOPS / the between-run t-interval's half-width
    (target 0.5–2: the one-run interval neither hides nor inflates the run-to-run spread)."""
    from memstor.analysis.summary import summary_table

    figs = {m: Figure("honesty", f"honesty-{m}", f"mean within-run 95 % half-width of {m} (batch means, one 10 s "
                      f"run each) / between-run 95 % half-width (t-interval over the 5 runs), 4K QD1 randread",
                      Target(lo=0.5, hi=2.0), "within-run", "between-run") for m in ("iops", "lat_mean_us")}
    overrides = {"rw": ["randread"], "iodepth": [1], "spec_iodepth": 0, "repetitions": 5, "file_size": "1g"}
    if cfg.smoke:
        overrides.update(runtime_s=3, ramp_s=0.5, file_size="64m", repetitions=3)
    try:
        for rep in range(cfg.reps):
            data = cfg.work / "honesty" / f"rep{rep}"
            _, df = _qd_sweep(cfg, overrides, data, "bench-honesty")
            summ = summary_table(df, data)
            row = summ[summ["direction"] == "read"].iloc[0]
            for m, f in figs.items():
                within = _hw_pct(df, m).mean()
                between = (row[f"{m}_ci_high"] - row[f"{m}_ci_low"]) / 2 / row[m] * 100
                f.add(rep, within, between, "% of the mean")
                f.notes.append(f"rep {rep}: {int(row['n'])} runs, mean {m} {row[m]:.4g}, within-run half-widths "
                               + ", ".join(f"{x:.2f}" for x in _hw_pct(df, m)) + f" %, between-run {between:.2f} %")
            shutil.rmtree(data / "scratch", ignore_errors=True)
    except Exception as err:  # noqa: BLE001 - NotMeasured, or a MemstorError from the experiment: one line each
        stop_all(figs.values(), err)
    return list(figs.values())


FIGURES: dict[str, Callable[[Config], list[Figure]]] = {
    "overhead": fig_overhead,
    "parse": fig_parse,
    "rebuild": fig_rebuild,
    "latency": fig_latency,
    "bandwidth": fig_bandwidth,
    "qd": fig_qd,
    "steady": fig_steady_state,
    "openloop": fig_openloop,
    "precision": fig_precision,
    "auto-grid": fig_auto_grid,
    "honesty": fig_honesty,
}


def run_figures(cfg: Config, names: Sequence[str]) -> list[Figure]:
    """Measure the named figures in order; any error becomes that figure's `not measured` reason."""
    out: list[Figure] = []
    for name in names:
        cfg.log(f"bench: {name} (load average {_load()})")
        t0 = time.perf_counter()
        try:
            figs = FIGURES[name](cfg)
        except NotMeasured as err:
            figs = [Figure(name, name, name, Target(), not_measured=str(err))]
        except Exception as err:  # noqa: BLE001 - one figure's bug must not lose the others
            figs = [Figure(name, name, name, Target(),
                           not_measured=f"{type(err).__name__}: {first_line(err)}")]
        for f in figs:
            f.elapsed_s = time.perf_counter() - t0
            ratio = f"{median(f.ratios()):.3f}" if f.samples else "–"
            cfg.log(f"bench: {f.name}: ratio {ratio} target {f.target.text()} -> {f.verdict()}"
                    + (f" ({f.not_measured})" if f.not_measured else "")
                    + (f" ({f.failure})" if f.failure else ""))
        out.extend(figs)
    return out


def _names(only: str | None) -> list[str]:
    """Figure names from --only (comma separated), in the canonical order; SystemExit(2) if unknown."""
    if not only:
        return list(FIGURES)
    asked = [n.strip() for n in only.split(",") if n.strip()]
    bad = [n for n in asked if n not in FIGURES]
    if bad or not asked:
        raise UsageError(f"--only {only!r}: unknown figure {', '.join(bad) or '(none)'}; choose from "
                         f"{', '.join(FIGURES)}")
    return [n for n in FIGURES if n in asked]


def main(argv: Sequence[str] | None = None) -> int:
    """`bench/harness.py --out DIR [--only NAME,...] [--reps N] [--smoke] [--keep] [--strict]` (`make bench`),
    under the `memstor` command's error and exit-status policy."""
    argv = list(sys.argv[1:] if argv is None else argv)
    return guarded(lambda: _main(argv), debug="--debug" in argv, prog="memstor bench")


def _main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="bench/harness.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, metavar="DIR", help="folder for bench.md, bench.csv")
    ap.add_argument("--only", metavar="NAME,...", help="figures to measure: " + ", ".join(FIGURES))
    ap.add_argument("--reps", type=int, default=MIN_REPS, help=f"repetitions per figure (>= {MIN_REPS})")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: tests the harness, measures nothing real")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder (printed at the end)")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a measured figure misses its target")
    ap.add_argument("--debug", action="store_true", help="show Python tracebacks")
    args = ap.parse_args(argv)
    if args.reps < MIN_REPS:
        raise UsageError(f"--reps {args.reps}: every figure is a median of at least {MIN_REPS} repetitions; "
                         f"use --reps {MIN_REPS} or more")
    names = _names(args.only)
    out = Path(args.out)
    work = Path(tempfile.mkdtemp(prefix="memstor-bench-"))
    cfg = Config(out=out, reps=args.reps, smoke=args.smoke, work=work)
    meta = {"started": _now(), "reps": args.reps, "smoke": args.smoke, "load_before": _load()}
    machine, machine_full = machine_summary()
    try:
        figures = run_figures(cfg, names)
    except KeyboardInterrupt:
        raise Interrupted("interrupted; nothing written") from None
    finally:
        if args.keep:
            print(f"memstor bench: scratch folder kept: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    meta.update(finished=_now(), load_after=_load())
    write_report(out, figures, machine, machine_full, meta)
    print(f"memstor bench: wrote {out / 'bench.md'} and {out / 'bench.csv'}", file=sys.stderr)
    missed = [f.name for f in figures if f.verdict() == "fail"]
    return 1 if (args.strict and missed) else 0


def _now() -> str:
    """UTC now, ISO-8601 to the second."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


if __name__ == "__main__":
    sys.exit(main())
