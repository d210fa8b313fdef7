"""What every figure of `make bench` shares: the statistics (median, spread, quartiles), a figure and its
target and repetitions, the run's settings (Config), running a command with its wall time, and the report
files (``bench.md``, ``bench.csv``, ``bench-machine.json``).

``fmt4`` (4 significant digits, ``nan`` for NaN) is bench's own number format, not
``memstor.core.fmt.fmt_number``: that one prints by magnitude with fixed decimals (8.8 -> ``8.80``) and ``–``
for NaN, which would change bench.md's absolute-numbers column.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from memstor.core.errors import first_line
from memstor.core.files import atomic_write
from memstor.measure.sysinfo import collect

#: The repository root (the folder holding the Makefile); bench/common.py -> ..
ROOT = Path(__file__).resolve().parents[1]


CSV_COLUMNS = ("figure", "rep", "numerator", "denominator", "unit", "ratio")
MIN_REPS = 3


class NotMeasured(Exception):
    """A figure cannot be measured here; str() is the one-line reason (what is missing, how to get it)."""


# --------------------------------------------------------------------------------------- statistics


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
        parts = [f"{self.num_label} {fmt4(num)} {unit}", f"{self.den_label} {fmt4(den)} {unit}",
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


def fmt4(x: float) -> str:
    """A number with 4 significant digits, no exponent for everyday magnitudes."""
    if x != x:  # NaN
        return "nan"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.4g}"


# ------------------------------------------------------------------------------------------- report


def machine_summary() -> tuple[str, dict]:
    """(one-line description, full JSON-able description) of this machine.

    The full description is memstor.measure.sysinfo.collect() when that module exists, else /proc/cpuinfo's
    model name, the CPU count and the memory size.
    """
    line = machine_line()
    full: dict = {"summary": line}
    try:
        full["sysinfo"] = collect(None)
    except Exception as err:  # noqa: BLE001 - the machine line above is enough for the report
        full["sysinfo"] = f"memstor.measure.sysinfo.collect failed: {type(err).__name__}: {err}"
    return line, full


def machine_line() -> str:
    """This machine in one line: host name, CPU model, CPU count, memory (GiB) and kernel (no tool is run)."""
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
    return line


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


def to_markdown(figures: Sequence[Figure], machine: str, meta: dict, versus: dict | None = None) -> str:
    """The bench.md report: one table row per figure, then how it was measured. ``versus``: {figure name: text}
    comparing the figure with its committed baseline (bench/baseline.py), shown as its own column."""
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
        "| figure | ratio (median) | spread (min–max) | target | result | vs baseline | absolute numbers (medians) "
        "| machine |",
        "|---|---|---|---|---|---|---|---|",
    ]
    versus = versus or {}
    host = machine.split(":", 1)[0]
    for f in figures:
        if f.not_measured is not None or not f.samples:
            reason = f.not_measured or "no repetition completed"
            lines.append(f"| {f.name} | – | – | {f.target.text()} | not measured: {_md_cell(reason)} | "
                         f"{_md_cell(versus.get(f.name, '–'))} | {_md_cell('; '.join(f.notes)) or '–'} | {host} |")
            continue
        r = f.ratios()
        lo, hi = spread(r)
        lines.append(f"| {f.name} | {median(r):.3f} | {lo:.3f}–{hi:.3f} | {f.target.text()} | "
                     f"{f.verdict()} | {_md_cell(versus.get(f.name, '–'))} | {_md_cell(f.absolute())} | {host} |")
    lines += ["", "## Figures", ""]
    for f in figures:
        lines.append(f"- **{f.name}**: {f.title} ({f.elapsed_s:.0f} s to measure).")
    lines += ["", "Raw repetitions: `bench.csv` (figure, rep, numerator, denominator, unit, ratio); "
              "machine description: `bench-machine.json`.", ""]
    return "\n".join(lines)


def write_report(out: Path, figures: Sequence[Figure], machine: str, machine_full: dict, meta: dict,
                 versus: dict | None = None) -> None:
    """Write ``bench.md``, ``bench.csv`` and ``bench-machine.json`` into ``out`` (atomically each); ``versus``
    as in :func:`to_markdown`."""
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / "bench.csv", to_csv(figures))
    atomic_write(out / "bench.md", to_markdown(figures, machine, meta, versus))
    atomic_write(out / "bench-machine.json", json.dumps(machine_full, indent=2, default=str) + "\n")


# -------------------------------------------------------------------------------------- run context


@dataclass
class Config:
    """Settings shared by the figures."""

    out: Path
    reps: int = MIN_REPS
    smoke: bool = False
    root: Path = ROOT
    work: Path = Path(tempfile.gettempdir())  # scratch folder of this run (removed at the end)
    parse_files: int | None = None  # files of the parse figure (None: 5,000, or 200 with smoke)
    log: Callable[[str], None] = lambda msg: print(msg, file=sys.stderr, flush=True)

    @property
    def python(self) -> str:
        """The interpreter running memstor (the repository's .venv under make)."""
        return sys.executable


def cached_bytecode() -> None:
    """Let the measured commands write and reuse their bytecode as a user's do: without this, a
    PYTHONDONTWRITEBYTECODE of the calling shell makes every edited module compile again in every run (a few ms
    per module, counted against memstor's start-up)."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def load_average() -> str:
    """The 1-minute load average, formatted (``?`` when unknown)."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return "?"


def last_line(text: str, limit: int = 240) -> str:
    """The last non-empty line of text (a tool's error), shortened to `limit` characters."""
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    line = lines[-1] if lines else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def timed(cmd: Sequence[str], *, cwd: Path | None = None, env: dict | None = None, timeout: float = 3600,
          what: str = "") -> tuple[float, subprocess.CompletedProcess]:
    """Run cmd (captured output) and return (wall seconds, result); NotMeasured when it cannot start."""
    wall, _cpu, res = timed_cpu(cmd, cwd=cwd, env=env, timeout=timeout, what=what)
    return wall, res


def children_cpu_s() -> float:
    """CPU seconds (user + system) of this process's finished children and their descendants so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_cpu(cmd: Sequence[str], *, cwd: Path | None = None, env: dict | None = None, timeout: float = 3600,
              what: str = "") -> tuple[float, float, subprocess.CompletedProcess]:
    """Run cmd (captured output) and return (wall seconds, CPU seconds of it and its children, result).

    CPU time is what a slower memstor spends more of; on a VM shared with other work the wall time of the
    same command swings several-fold with their load (measured here: a json.load loop 0.36-1.24 s within a
    minute), its CPU time by a few percent. NotMeasured when the command cannot start."""
    cpu0, t0 = children_cpu_s(), time.perf_counter()
    try:
        res = subprocess.run(list(cmd), cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise NotMeasured(f"{what or cmd[0]}: {cmd[0]} not found") from None
    except subprocess.TimeoutExpired:
        raise NotMeasured(f"{what or cmd[0]}: did not finish within {timeout:.0f} s") from None
    return time.perf_counter() - t0, children_cpu_s() - cpu0, res


def require_ok(res: subprocess.CompletedProcess, what: str) -> None:
    """NotMeasured naming the command's own last error line when it exited non-zero."""
    if res.returncode != 0:
        raise NotMeasured(f"{what} exited {res.returncode}: {last_line(res.stderr or res.stdout)}")


Side = tuple[str, Callable[[], tuple[float, float]]]


def paired(cfg: Config, fig: Figure, num: Side, den: Side, cpu: list[float] | None = None) -> None:
    """``cfg.reps`` repetitions of a wall-time ratio: each side (name, a callable giving (wall, CPU) seconds),
    their order alternating; the CPU-time ratio of each repetition goes to ``cpu`` (the notes say it)."""
    for rep in range(cfg.reps):
        t = {}
        for name, measure in ((num, den) if rep % 2 == 0 else (den, num)):
            t[name] = measure()
        fig.add(rep, t[num[0]][0], t[den[0]][0], "s")
        if cpu is not None and t[den[0]][1] > 0:
            cpu.append(t[num[0]][1] / t[den[0]][1])
        cfg.log(f"  {fig.name} rep {rep}: {num[0]} {t[num[0]][0] * 1e3:.1f} ms ({t[num[0]][1] * 1e3:.1f} ms CPU), "
                f"{den[0]} {t[den[0]][0] * 1e3:.1f} ms ({t[den[0]][1] * 1e3:.1f} ms CPU)")


def interleaved(rep: int, first: tuple[str, list], second: tuple[str, list]) -> tuple[tuple[str, list], ...]:
    """The two (name, command) of a paired comparison in the order of repetition `rep`: A B, then B A, so
    that a drift of the machine during the runs favours neither tool."""
    return (first, second) if rep % 2 == 0 else (second, first)
