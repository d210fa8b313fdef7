"""Where users wait (issue 39): the ``startup`` figures (``memstor --help`` and a usage error vs ``python -c pass``),
``noop-make`` (a no-op ``make all PROFILE=quick`` in a checkout whose targets are all up to date vs a fixed
pure-Python loop) and ``fast-tier`` (``make test-fast`` vs a fixed pure-Python workload): wall time.

Each repetition of a short command takes the shortest of several back-to-back runs (:data:`RUNS`, 3 for the
no-op make): the run that the other work on this shared VM disturbed least (within a minute here a json.load
loop took 0.36-1.24 s), while a slower memstor, by more work or by a sleep, lengthens every run. The two sides
of a ratio alternate their order between repetitions like every figure of the harness; the CPU-time ratio of
the same runs is in the notes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from common import (
    Config,
    Figure,
    NotMeasured,
    Target,
    children_cpu_s,
    fmt4,
    last_line,
    median,
    paired,
    require_ok,
    stop_all,
    timed,
)
from fig_parse import memstor_command
from fig_rebuild import _make_env, borrow_venv, fresh_checkout, make_error, snapshot

from memstor.cli import STARTUP_BUDGET_S

#: Runs of a short command per repetition (their mean is the repetition's number).
RUNS = 10
#: The interpreter start every short command is compared with.
PYTHON_PASS = ("-c", "pass")
#: The pure-Python reference workload of the noop-make and fast-tier figures (about 0.5 s on the 2-vCPU VM): it
#: scales with the machine's single-core speed as make's Python children and the tests do.
REFERENCE_WORK = "s = 0\nfor i in range(6_000_000):\n    s += i * i\nprint(s)\n"
#: `make all` directories of targets that `make -t` must be able to touch (it makes no folders).
TOUCH_DIRS = ("build/bin", "build/notebooks", "build/params", "report")


def best_times(cmd: Sequence[str], runs: int = RUNS, *, ok: Sequence[int] = (0,), env: dict | None = None,
               cwd: Path | None = None) -> tuple[float, float]:
    """(shortest wall seconds, mean CPU seconds of the process and its children) over ``runs`` runs of ``cmd``
    (output discarded); NotMeasured naming the command when it cannot start or exits with a status outside
    ``ok``. The shortest wall time is the run the other work of this shared VM disturbed least; a slower memstor
    (more work, or a sleep) lengthens every run, the shortest too."""
    best, cpu = float("inf"), 0.0
    for _ in range(runs):
        cpu0, t0 = children_cpu_s(), time.perf_counter()
        try:
            res = subprocess.run(list(cmd), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                 env=env, cwd=cwd, timeout=600)
        except (FileNotFoundError, subprocess.TimeoutExpired) as err:
            raise NotMeasured(f"{' '.join(cmd)}: {type(err).__name__}: {err}") from None
        best = min(best, time.perf_counter() - t0)
        cpu += children_cpu_s() - cpu0
        if res.returncode not in ok:
            raise NotMeasured(f"{' '.join(cmd)} exited {res.returncode}: {last_line(res.stderr)}")
    return best, cpu / runs


def fig_startup(cfg: Config) -> list[Figure]:
    """CLI start-up: `memstor --help` and a usage error (`memstor parse` without a path, exit 2), each / `python
    -c pass`: wall time of the whole process, the shortest of RUNS runs per repetition (report; the budget and
    the CPU-time ratio in the notes)."""
    memstor = memstor_command()
    cases = (("startup-help", "memstor --help", [*memstor, "--help"], (0,)),
             ("startup-usage", "memstor parse (usage error, exit 2)", [*memstor, "parse"], (2,)))
    figs = []
    runs = 3 if cfg.smoke else RUNS
    for name, what, cmd, ok in cases:
        fig = Figure("startup", name, f"wall time of `{what}` / `python -c pass` (whole processes, the shortest of "
                     f"{RUNS} runs each per repetition)", Target(), what, "python -c pass")
        figs.append(fig)
        cpu: list[float] = []
        try:
            paired(cfg, fig, (what, lambda cmd=cmd, ok=ok: best_times(cmd, runs, ok=ok)),
                   ("python", lambda: best_times([cfg.python, *PYTHON_PASS], runs)), cpu)
        except NotMeasured as err:
            fig.stopped(str(err))
            continue
        secs = median([s.numerator for s in fig.samples])
        fig.notes.append(f"{fmt4(secs * 1e3)} ms, budget {STARTUP_BUDGET_S * 1e3:.0f} ms (memstor.cli."
                         f"STARTUP_BUDGET_S): {'within' if secs <= STARTUP_BUDGET_S else 'OVER'}; CPU-time ratio "
                         f"{fmt4(median(cpu))}")
    return figs


def up_to_date_checkout(cfg: Config, dest: Path) -> tuple[dict, str]:
    """A fresh checkout of the repository (its .venv borrowed) where every target of `make all PROFILE=quick`
    is up to date without measuring anything: the profile sections written by make itself (`memstor params`),
    then every other target touched in dependency order (`make -t`). Returns (make's environment, what was
    done). NotMeasured with make's own error line when a step fails."""
    how = fresh_checkout(cfg.root, dest)
    venv_how = borrow_venv(cfg.root, dest)
    env = _make_env(dest)
    for d in TOUCH_DIRS:
        (dest / d).mkdir(parents=True, exist_ok=True)
    make = ["make", "--no-print-directory", "-C", str(dest)]
    listed = subprocess.run(make + ["--eval", "bench-params: ; @echo $(EXECUTED:$(BUILD)/notebooks/%.ipynb="
                                    "$(BUILD)/params/%.yaml)", "bench-params", "PROFILE=quick"],
                            env=env, capture_output=True, text=True, timeout=120)
    require_ok(listed, "make bench-params (the list of profile sections)")
    for step in (listed.stdout.split(), ["-t", "all"]):
        res = subprocess.run(make + [*step, "PROFILE=quick"], env=env, capture_output=True, text=True, timeout=600)
        if res.returncode != 0:
            raise NotMeasured(f"make {' '.join(step)[:60]} in the checkout exited {res.returncode}: "
                              f"{make_error(res.stderr + res.stdout)}")
    return env, f"{how}; {venv_how}; targets made up to date with `make <params>` then `make -t all`"


def fig_noop_make(cfg: Config) -> list[Figure]:
    """No-op `make all PROFILE=quick` (every target up to date) / the reference loop: wall time (report; issue
    39's 1 s bound and the CPU-time ratio in the notes). Both last about a second, so the other work of a shared
    VM weighs on both alike (a 10 ms `python -c pass` would catch its quiet moments, a 1 s make never)."""
    fig = Figure("noop-make", "noop-make", "wall time of `make all PROFILE=quick` with every target up to date (a "
                 "fresh checkout made so by `make -t`) / a fixed pure-Python loop of about the same length "
                 "(REFERENCE_WORK; the shortest of 3 runs each per repetition)", Target(), "no-op make all",
                 "reference loop")
    if shutil.which("make") is None or shutil.which("git") is None or not (cfg.root / ".git").exists():
        fig.not_measured = "make or git not on PATH, or no git repository"
        return [fig]
    checkout = cfg.work / "noop-make" / "memstor"
    checkout.parent.mkdir(parents=True, exist_ok=True)
    cpu: list[float] = []
    try:
        env, how = up_to_date_checkout(cfg, checkout)
        before = snapshot(checkout)
        cmd = ["make", "--no-print-directory", "-C", str(checkout), "all", "PROFILE=quick"]
        paired(cfg, fig, ("make", lambda: best_times(cmd, 1 if cfg.smoke else 3, env=env)),
               ("reference", lambda: best_times([cfg.python, "-c", REFERENCE_WORK], 1 if cfg.smoke else 3)), cpu)
    except NotMeasured as err:
        stop_all([fig], err)
        return [fig]
    touched = sorted(k for k, v in snapshot(checkout).items() if before.get(k) != v)
    if touched:
        fig.failure = f"the no-op make all changed {len(touched)} files, e.g. {touched[0]}"
    secs = median([s.numerator for s in fig.samples])
    fig.notes.append(f"{fmt4(secs)} s (issue 39's bound: 1 s); CPU-time ratio {fmt4(median(cpu))}; {how}")
    return [fig]


def fig_fast_tier(cfg: Config) -> list[Figure]:
    """`make test-fast` / a fixed pure-Python workload (REFERENCE_WORK): wall time (report). Not in --smoke."""
    fig = Figure("fast-tier", "fast-tier", "wall time of `make test-fast` (the fast tier, pytest -n auto) / a "
                 "fixed pure-Python loop (bench/fig_startup.REFERENCE_WORK, one core)", Target(),
                 "make test-fast", "reference loop")
    if cfg.smoke:
        fig.not_measured = "--smoke: the fast tier is not run in smoke mode"
        return [fig]
    if shutil.which("make") is None:
        fig.not_measured = "make not on PATH"
        return [fig]
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    failed: list[str] = []

    def tier() -> float:
        secs, res = timed(["make", "--no-print-directory", "-C", str(cfg.root), "test-fast"], env=env,
                          timeout=3600, what="make test-fast")
        if res.returncode != 0:
            failed.append(last_line(res.stdout or res.stderr))
        return secs

    def reference() -> float:
        secs, res = timed([sys.executable, "-c", REFERENCE_WORK], what="the reference loop")
        require_ok(res, "the reference loop")
        return secs

    try:
        for rep in range(cfg.reps):
            t = {name: measure() for name, measure in
                 ((("test-fast", tier), ("reference", reference)) if rep % 2 == 0 else
                  (("reference", reference), ("test-fast", tier)))}
            fig.add(rep, t["test-fast"], t["reference"], "s")
            cfg.log(f"  fast-tier rep {rep}: make test-fast {t['test-fast']:.1f} s, reference {t['reference']:.2f} s")
    except NotMeasured as err:
        stop_all([fig], err)
        return [fig]
    if failed:
        fig.failure = f"make test-fast failed in {len(failed)} repetition(s): {failed[-1]}"
    fig.notes.append(f"make test-fast {fmt4(median([s.numerator for s in fig.samples]))} s")
    return [fig]
