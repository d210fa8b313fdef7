"""The committed baseline of the benchmark figures (``bench/baseline.json``) and the comparison that guards it.

One entry per figure: ``value`` (the median ratio when it was set), ``tolerance`` (the fraction by which a
later median may exceed it: 0.30 = 30 % worse is still within), ``reason`` (why this value), ``commit`` (the
code that was measured: ``git describe``-like short hash, ``+dirty`` when the working tree differed), ``date``,
``machine``, ``reps``. Every figure here is lower-is-better (a wall-time ratio). The file is written one figure
per line, so that ``git log -G`` finds the commit that set each figure: :func:`set_by` names it in a failure.

A baseline changes only through ``bench/check.py --write-baseline --reason "..."`` followed by a commit of the
file (never automatically); the check and ``make bench`` only read it.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from common import ROOT, Figure, median

from memstor.core.files import atomic_write

#: The committed baseline.
BASELINE = ROOT / "bench" / "baseline.json"
#: The tolerance a figure gets when its baseline is first written without --tolerance (fraction of its value),
#: from the medians of repeated bench-check runs on the 2-vCPU VM while another session's fio runs loaded it
#: (load average 3-9): startup 3.9-7.0 (the short process starts move most), parse 1.9-2.5, noop-make 1.87-1.96,
#: overhead 0.99-1.05. Each still fails the regressions issue 39 found: --help importing pandas (ratio ~28),
#: parse at 4.4x json.load, a no-op make all of 5.6 s (ratio ~5 against the 1 s reference loop).
DEFAULT_TOLERANCE = {"startup-help": 1.0, "startup-usage": 1.0, "parse": 0.6, "noop-make": 0.5,
                     "overhead": 0.15, "fast-tier": 0.5}
FALLBACK_TOLERANCE = 0.3


@dataclass(frozen=True)
class Verdict:
    """A measured figure against its baseline: ``ok`` and the one line that says so (or why not)."""

    name: str
    ok: bool
    line: str


def load(path: Path = BASELINE) -> dict[str, dict]:
    """{figure: entry} of a baseline file; {} when there is none. ValueError naming the file when it is not a
    baseline (not JSON, no ``figures`` mapping, an entry without a positive value or a tolerance >= 0)."""
    if not path.is_file():
        return {}
    try:
        figures = json.loads(path.read_text(encoding="utf-8"))["figures"]
    except (ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{path}: not a benchmark baseline ({type(err).__name__}: {err})") from None
    for name, entry in figures.items():
        if not (isinstance(entry, dict) and _number(entry.get("value")) > 0 and _number(entry.get("tolerance")) >= 0):
            raise ValueError(f"{path}: figure {name!r} needs a value > 0 and a tolerance >= 0, got {entry!r}")
    return figures


def _number(value) -> float:
    """value as a float, -1 when it is not a number (never a bool)."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else -1.0


def dump(figures: dict[str, dict]) -> str:
    """The baseline file's text: one figure per line (sorted), so that git shows and finds each one alone."""
    body = ",\n".join(f"    {json.dumps(name)}: {json.dumps(figures[name], sort_keys=True)}" for name in sorted(figures))
    about = ("memstor benchmark baselines (bench/baseline.py): median ratio per figure, lower is better; "
             "bench/check.py fails a figure worse than value x (1 + tolerance). Change only with "
             "bench/check.py --write-baseline --reason ... and a commit.")
    return "{\n" + f'  "about": {json.dumps(about)},\n  "figures": {{\n{body}\n  }}\n}}\n'


def head_commit(root: Path = ROOT) -> str:
    """The short hash of the code being measured, ``+dirty`` when lib/, bench/ or the Makefile differ from it;
    ``unknown`` outside git."""
    git = ["git", "-C", str(root)]
    try:
        sha = subprocess.run(git + ["rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=30)
        dirty = subprocess.run(git + ["status", "--porcelain", "--", "lib", "bench", "Makefile"],
                               capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    if sha.returncode != 0:
        return "unknown"
    return sha.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def set_by(name: str, path: Path = BASELINE) -> str:
    """``commit <hash> "<subject>"``: the last commit that changed figure ``name``'s line of the baseline file;
    ``no commit (...)`` when the working file's entry is not committed (or the file is outside git)."""
    try:
        rel = path.resolve().relative_to(ROOT)
    except ValueError:
        return "no commit (the file is not in the repository)"
    git = ["git", "-C", str(ROOT)]
    try:
        changed = subprocess.run(git + ["diff", "--quiet", "HEAD", "--", str(rel)], capture_output=True, timeout=30)
        log = subprocess.run(git + ["log", "-1", "--format=%h \"%s\"", f"-G^    {json.dumps(name)}: ", "--",
                                    str(rel)], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "no commit known (git unavailable)"
    if changed.returncode != 0 and name in _committed_changed(rel):
        return f"no commit ({rel} changed in the working tree)"
    found = log.stdout.strip()
    return f"commit {found[:100]}{'...' if len(found) > 100 else ''}" if found else "no commit (never committed)"


def _committed_changed(rel: Path) -> set[str]:
    """The figures whose entry in the working file differs from HEAD's."""
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "show", f"HEAD:{rel.as_posix()}"], capture_output=True,
                              text=True, timeout=30)
        old = json.loads(head.stdout)["figures"] if head.returncode == 0 else {}
        new = json.loads((ROOT / rel).read_text(encoding="utf-8"))["figures"]
    except (OSError, ValueError, KeyError, subprocess.TimeoutExpired):
        return set()
    return {n for n in set(old) | set(new) if old.get(n) != new.get(n)}


def compare(fig: Figure, entry: dict | None, path: Path = BASELINE) -> Verdict:
    """A measured figure against its baseline entry: within when its median ratio <= value x (1 + tolerance).
    A figure without an entry, not measured, or whose measurement went wrong (a no-op that rebuilt, a parse
    that lost rows) is not within: what it guards was not checked."""
    if fig.not_measured is not None or not fig.samples:
        return Verdict(fig.name, False, f"{fig.name}: not measured ({fig.not_measured or 'no repetition'}), so "
                                        "not checked against its baseline")
    ratio = median(fig.ratios())
    if fig.failure:
        return Verdict(fig.name, False, f"{fig.name}: ratio {ratio:.3f}, but the measurement failed: {fig.failure}")
    if entry is None:
        return Verdict(fig.name, False, f"{fig.name}: ratio {ratio:.3f} has no baseline in {path}; set one with "
                                        f"bench/check.py --only ... --write-baseline --reason \"...\"")
    value, tol = float(entry["value"]), float(entry["tolerance"])
    limit = value * (1 + tol)
    if ratio <= limit:
        return Verdict(fig.name, True, f"{fig.name}: ratio {ratio:.3f} within its baseline {value:.3f} "
                                       f"(+{tol:.0%} tolerance: <= {limit:.3f})")
    return Verdict(fig.name, False, f"{fig.name}: ratio {ratio:.3f} is worse than its baseline {value:.3f} by "
                                    f"{ratio / value - 1:.1%}, more than its tolerance {tol:.0%} (limit {limit:.3f}); "
                                    f"baseline set by {set_by(fig.name, path)}, measured at code "
                                    f"{entry.get('commit', '?')}: {entry.get('reason', '')}")


def versus_column(figures: list[Figure], baseline: dict[str, dict]) -> dict[str, str]:
    """{figure: text} for bench.md's ``vs baseline`` column: the baseline and tolerance, and whether within."""
    out = {}
    for fig in figures:
        entry = baseline.get(fig.name)
        if entry is None:
            out[fig.name] = "no baseline"
            continue
        head = f"{float(entry['value']):.3f} +{float(entry['tolerance']):.0%} ({entry.get('commit', '?')})"
        if fig.samples and fig.not_measured is None:
            head += ": " + ("within" if compare(fig, entry).ok else "WORSE")
        out[fig.name] = head
    return out


def updated(baseline: dict[str, dict], figures: list[Figure], reason: str, machine: str, reps: int,
            tolerance: float | None = None) -> dict[str, dict]:
    """The baseline with the measured figures' medians as their new values (the others kept): tolerance from
    ``tolerance``, else the entry's own, else DEFAULT_TOLERANCE; ValueError when a figure was not measured
    cleanly (a failed measurement is no baseline)."""
    if not reason.strip():
        raise ValueError("a baseline needs its reason (--reason \"...\")")
    out = dict(baseline)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d")
    commit = head_commit()
    for fig in figures:
        if fig.not_measured is not None or not fig.samples or fig.failure:
            raise ValueError(f"{fig.name}: not measured cleanly ({fig.not_measured or fig.failure or 'no samples'}); "
                             "no baseline written")
        old = baseline.get(fig.name, {})
        tol = tolerance if tolerance is not None else old.get("tolerance", DEFAULT_TOLERANCE.get(fig.name, FALLBACK_TOLERANCE))
        out[fig.name] = {"value": round(median(fig.ratios()), 4), "tolerance": float(tol), "reason": reason.strip(),
                         "commit": commit, "date": stamp, "machine": machine, "reps": reps}
    return out


def write(figures: dict[str, dict], path: Path = BASELINE) -> None:
    """Write the baseline file (atomically)."""
    atomic_write(path, dump(figures))
