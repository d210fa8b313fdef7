"""The fast tier's guard (`make test-fast`, MEMSTOR_FAST_TIER=1): a test that starts one of the slow external
programs must carry its marker, so the fast tier's ``-m "not (... fio or loadlat ...)"`` leaves it out.

How: ``subprocess.Popen.__init__``, ``os.execv``/``os.execve`` and ``os.system`` are patched, so every start
goes through ``check`` (subprocess.run/check_output, ``from subprocess import Popen`` and asyncio's subprocesses
all build a Popen; every os.exec*/os.spawn* ends in os.execv/os.execve: `jupyter lab` execs jupyter-lab;
nothing in lib/ or tests/ uses pexpect). ``check`` names the program: argv[0]'s basename (or
``executable=``), the command after a wrapper such as timeout/taskset/env/setpriv, each command of a
``sh -c`` script, and ``python -m papermill|nbconvert|jupyter|ipykernel*``. A start by a test with none of
the markers raises GuardError before anything runs, and is also written to a log, which the plugin hooks below
read after each phase, so a start whose error was swallowed still fails the test, with the message. Starts in
a teardown are not checked (they undo what a checked setup started).
Children: MEMSTOR_FAST_TIER_TEST/_MARKS name the running test and its markers in os.environ, and PYTHONPATH
gets tests/fast_tier_site, whose sitecustomize.py installs the same patch in every Python child (the
``python -m memstor.cli run`` a test starts is itself not slow; the fio it starts is); a child given its own
``env=`` gets them added. Not followed: the non-Python children of non-Python programs (make -> cc; a shell
script that execs a Python program, like scripts/lab -> jupyter, is followed again from there).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import tempfile
from pathlib import Path

import pytest

#: program basename (or prefix ending in *) -> the marker a test starting it must carry
PROGRAMS = {
    "fio": "fio", "losetup": "fio",
    "loadlat": "loadlat", "ioarrive": "loadlat", "cc": "loadlat", "gcc": "loadlat",
    "papermill": "notebook", "jupyter*": "notebook", "xelatex": "notebook", "pandoc": "notebook",
    "chromium*": "browser", "chromedriver": "browser",
    "ssh": "fleet", "sshd": "fleet", "ip": "fleet",
    "qemu-*": "qemu", "aarch64-linux-gnu-gcc": "qemu",
}
#: ``python -m MODULE`` that runs a notebook or a Jupyter kernel
PY_MODULES = ("papermill", "nbconvert", "jupyter", "ipykernel")
#: programs that run their first operand: the guard looks at the rest of their argv too
WRAPPERS = {"env", "timeout", "taskset", "nice", "ionice", "chrt", "setpriv", "stdbuf", "nohup", "sudo"}
SHELLS = {"sh", "bash", "dash"}
ENV_TEST, ENV_MARKS, ENV_LOG = "MEMSTOR_FAST_TIER_TEST", "MEMSTOR_FAST_TIER_MARKS", "MEMSTOR_FAST_TIER_LOG"
SITE_DIR = Path(__file__).resolve().parent / "fast_tier_site"


class GuardError(RuntimeError):
    """An unmarked test started a program the fast tier leaves out."""


def _marker(word: str) -> str | None:
    name = os.path.basename(word)
    for prog, marker in PROGRAMS.items():
        if name == prog or (prog.endswith("*") and name.startswith(prog[:-1])):
            return marker
    return None


def started(argv: list[str]) -> tuple[str, str] | None:
    """(program, marker) when argv starts one of PROGRAMS, else None."""
    if not argv:
        return None
    name = os.path.basename(argv[0])
    if name.startswith("python") and "-m" in argv[:-1]:
        module = argv[argv.index("-m") + 1]
        if module.split(".")[0].startswith(PY_MODULES):
            return f"python -m {module}", "notebook"
    if name in SHELLS and "-c" in argv[:-1]:
        words = shlex.split(argv[argv.index("-c") + 1], posix=True)
        heads = [w for i, w in enumerate(words) if i == 0 or words[i - 1] in {";", "&&", "||", "|", "exec"}]
        return next((found for w in heads if (found := started([w]))), None)
    if name in WRAPPERS:  # the wrapped command: the first word not an option, VAR=value or a number/duration
        i = next((i for i, w in enumerate(argv[1:], 1) if not re.fullmatch(r"-.*|\w+=.*|[\d.,:-]+[smhd]?", w)), 0)
        return started(argv[i:]) if i else None
    marker = _marker(argv[0])
    return (name, marker) if marker else None


def check(args, executable=None, shell=False) -> None:
    """Raise GuardError (and log it) when a Popen of these arguments starts one of PROGRAMS and the running
    test (os.environ[ENV_TEST]) has none of their markers (os.environ[ENV_MARKS], comma-separated). One is
    enough: it keeps the test out of the fast tier (a `fio` sweep also starts `loadlat --version` for its
    sysinfo snapshot; it need not be marked `loadlat` too)."""
    if isinstance(args, (str, bytes, os.PathLike)):
        args = os.fsdecode(args)
        argv = ["sh", "-c", args] if shell else [args]
    else:
        argv = [os.fsdecode(a) for a in args]
    found = started([os.fsdecode(executable), *argv[1:]] if executable and not shell else argv)
    marks = set(os.environ.get(ENV_MARKS, "").split(","))
    if found is None or marks & {*PROGRAMS.values(), "*"}:  # any of them keeps the test out of the fast tier
        return
    msg = (f"test {os.environ.get(ENV_TEST, '?')} started {found[0]} but has no {found[1]} marker: mark it "
           f"(@pytest.mark.{found[1]}, or pytestmark for the module; the fast tier leaves it out)")
    if os.environ.get(ENV_LOG):
        with open(os.environ[ENV_LOG], "a") as fh:
            fh.write(msg + "\n")
    raise GuardError(msg)


def child_env(env):
    """A copy of a child's own environment with the guard's variables and PYTHONPATH entry added (a test that
    gives its child an environment of its own, e.g. PYTHONPATH=<a copy>/lib, still has that child guarded)."""
    if not all(isinstance(k, str) for k in env):
        return env
    env = {**env, **{k: v for k, v in os.environ.items() if k.startswith("MEMSTOR_FAST_TIER")}}
    if str(SITE_DIR) not in env.get("PYTHONPATH", "").split(os.pathsep):
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SITE_DIR), env.get("PYTHONPATH")]))
    return env


def install() -> None:
    """Patch subprocess.Popen.__init__, os.execv/os.execve (every os.exec*; `jupyter lab` execs jupyter-lab)
    and os.system in this process (once)."""
    popen_init, execv, execve, system = subprocess.Popen.__init__, os.execv, os.execve, os.system
    if getattr(popen_init, "fast_tier_guard", False):
        return

    def __init__(self, args, *a, **kw):
        check(args, kw.get("executable"), kw.get("shell", False))
        if kw.get("env") is not None:
            kw["env"] = child_env(kw["env"])
        popen_init(self, args, *a, **kw)

    def guarded_execv(path, args):
        check(args, path)
        execv(path, args)

    def guarded_execve(path, args, env):
        check(args, path)
        execve(path, args, child_env(env))

    def guarded_system(command):
        check(command, shell=True)
        return system(command)

    __init__.fast_tier_guard = True
    subprocess.Popen.__init__ = __init__
    os.execv, os.execve, os.system = guarded_execv, guarded_execve, guarded_system


# --- the pytest plugin (tests/conftest.py registers it when MEMSTOR_FAST_TIER=1) ----------------------------

def pytest_configure(config):
    install()
    fd, log = tempfile.mkstemp(prefix="memstor-fast-tier-", suffix=".log")  # this process's (xdist: worker's)
    os.close(fd)
    os.environ[ENV_LOG] = log
    os.environ["PYTHONPATH"] = child_env(dict(os.environ))["PYTHONPATH"]  # Python children install install()


def pytest_unconfigure(config):
    if os.environ.get(ENV_LOG):
        Path(os.environ.pop(ENV_LOG)).unlink(missing_ok=True)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    os.environ[ENV_TEST] = item.nodeid
    os.environ[ENV_MARKS] = ",".join(m.name for m in item.iter_markers())
    try:
        return (yield)
    finally:
        os.environ.pop(ENV_TEST, None)
        os.environ.pop(ENV_MARKS, None)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item, nextitem):
    # A teardown undoes what a setup started, and that start was checked: a module fixture's `losetup -d`
    # runs in the teardown of whichever test of the module came last, marked or not.
    os.environ[ENV_MARKS] = "*"
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    log = Path(os.environ.get(ENV_LOG, ""))
    starts = log.read_text().strip() if log.is_file() else ""
    if starts:
        log.write_text("")
        if report.failed:
            report.sections.append(("fast-tier guard", starts))
        else:
            report.outcome, report.longrepr = "failed", starts
    return report
