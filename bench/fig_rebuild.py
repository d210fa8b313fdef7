"""The ``rebuild`` figures: in a fresh checkout of the repository, a second ``make all PROFILE=quick`` (a no-op)
and ``make report`` vs the first ``make all``: wall time."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
from pathlib import Path

from common import Config, Figure, NotMeasured, Target, last_line, timed


def fresh_checkout(root: Path, dest: Path) -> str:
    """`git clone` root into dest, then copy the working tree's uncommitted changes over it (tracked +
    untracked-not-ignored files; deleted files removed), so the checkout is what a user would get after
    the lead commits. Read-only for root. Returns a one-line description of what was done."""
    res = subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(root), str(dest)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise NotMeasured(f"git clone {root} failed: {last_line(res.stderr)}")
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
        return last_line(exc[-1])
    stars = [ln for ln in lines if re.search(r"\*\*\* \[.*\] Error", ln)]
    return last_line(stars[0] if stars else (lines[-1] if lines else "no output"))


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
