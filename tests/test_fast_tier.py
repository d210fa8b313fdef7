"""The fast tier (`make test-fast`) and its guard (tests/fast_tier_guard.py): a test that starts fio (or
loadlat, cc, a notebook, a browser, ssh, qemu) without its marker fails under MEMSTOR_FAST_TIER=1 with a message
naming the marker, whether it starts the program itself or through a Python child; a marked test is deselected
by the Makefile's -m expression. Each case runs pytest on a generated file in tmp_path; the guard stops every
start before it happens, so nothing here needs fio."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

import fast_tier_guard
from conftest import ROOT

UNMARKED = '''
import asyncio
import subprocess
import sys
from subprocess import Popen


def test_run_fio():
    subprocess.run(["fio", "--version"], capture_output=True)


def test_popen_imported_by_name():
    Popen(["/usr/bin/fio", "--version"]).wait()


def test_shell_string():
    subprocess.run("cd / && fio --version", shell=True)


def test_swallowed():
    try:
        subprocess.check_output(["loadlat", "--version"])
    except Exception:
        pass


def test_asyncio():
    async def start():
        proc = await asyncio.create_subprocess_exec("ssh", "-V")
        await proc.wait()
    asyncio.run(start())


def test_python_child_starts_fio():
    subprocess.run([sys.executable, "-c", "import subprocess; subprocess.run(['fio', '--version'])"])


def test_python_child_with_its_own_environment():
    subprocess.run([sys.executable, "-c", "import subprocess; subprocess.run(['fio', '--version'])"],
                   env={"PATH": "/usr/bin:/bin", "PYTHONPATH": "/nowhere"})


def test_python_m_papermill():
    subprocess.run([sys.executable, "-m", "papermill", "--version"], capture_output=True)


def test_starts_nothing_listed():
    assert subprocess.run([sys.executable, "-c", "print(1)"], capture_output=True).returncode == 0
'''

MARKED = '''
import pytest

import fast_tier_guard


@pytest.mark.fio
def test_marked_fio():
    fast_tier_guard.check(["fio", "--version"])  # what Popen asks: allowed (no error) with the marker


def test_unmarked_quick():
    pass
'''


def fast_expression() -> str:
    """The -m expression of the Makefile's test-fast recipe."""
    recipe = re.search(r"^test-fast:.*\n\t(.*)$", (ROOT / "Makefile").read_text(), re.MULTILINE)
    assert recipe, "Makefile has no test-fast target"
    assert "MEMSTOR_FAST_TIER=1" in recipe.group(1)
    return re.search(r'-m "([^"]+)"', recipe.group(1)).group(1)


def run_pytest(tmp_path, source: str, *args: str) -> subprocess.CompletedProcess:
    """pytest (this repository's markers, the guard as a plugin, MEMSTOR_FAST_TIER=1) on one generated file."""
    (tmp_path / "test_generated.py").write_text(source)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTOR_FAST_TIER") and k != "PYTHONPATH"}
    env.update(MEMSTOR_FAST_TIER="1", PYTHONPATH=str(ROOT / "tests"), PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir",
                           str(tmp_path), "-p", "fast_tier_guard", "-p", "no:cacheprovider", "-q", "-rfE",
                           "-o", "addopts=--strict-markers", str(tmp_path / "test_generated.py"), *args],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)


def test_unmarked_starts_fail_naming_the_marker(tmp_path):
    res = run_pytest(tmp_path, UNMARKED)
    out = res.stdout + res.stderr
    assert res.returncode == 1, out
    assert "8 failed, 1 passed" in out, out
    for test, prog, marker in [("test_run_fio", "fio", "fio"), ("test_popen_imported_by_name", "fio", "fio"),
                               ("test_shell_string", "fio", "fio"), ("test_swallowed", "loadlat", "loadlat"),
                               ("test_asyncio", "ssh", "fleet"), ("test_python_child_starts_fio", "fio", "fio"),
                               ("test_python_child_with_its_own_environment", "fio", "fio"),
                               ("test_python_m_papermill", "python -m papermill", "notebook")]:
        assert f"test test_generated.py::{test} started {prog} but has no {marker} marker: mark it" in out, out


def test_a_marked_test_is_deselected_by_the_fast_tier(tmp_path):
    res = run_pytest(tmp_path, MARKED, "-m", fast_expression())
    assert res.returncode == 0, res.stdout + res.stderr
    assert "1 passed, 1 deselected" in res.stdout, res.stdout
    # selected by its marker it runs, and the guard lets it start its program
    res = run_pytest(tmp_path, MARKED, "-m", "fio")
    assert res.returncode == 0 and "1 passed, 1 deselected" in res.stdout, res.stdout + res.stderr
    res = run_pytest(tmp_path, MARKED.replace("@pytest.mark.fio\n", ""))
    assert res.returncode == 1 and "started fio but has no fio marker" in res.stdout, res.stdout + res.stderr


def test_the_markers_are_declared_and_excluded_by_the_fast_tier():
    expression = fast_expression()
    declared = (ROOT / "pyproject.toml").read_text()
    for marker in sorted(set(fast_tier_guard.PROGRAMS.values())):
        assert re.search(rf'^\s*"{marker}: ', declared, re.MULTILINE), f"marker {marker} is not declared"
        assert re.search(rf"\b{marker}\b", expression), f"make test-fast does not leave out {marker}"


@pytest.mark.parametrize("argv, found", [
    (["fio", "--version"], ("fio", "fio")),
    (["/usr/sbin/losetup", "-f"], ("losetup", "fio")),
    (["cc", "-O2", "x.c"], ("cc", "loadlat")),
    (["aarch64-linux-gnu-gcc", "-static"], ("aarch64-linux-gnu-gcc", "qemu")),
    (["qemu-aarch64", "x"], ("qemu-aarch64", "qemu")),
    (["/usr/bin/chromium-browser"], ("chromium-browser", "browser")),
    (["ip", "netns", "exec", "ns1", "true"], ("ip", "fleet")),
    (["jupyter-lab"], ("jupyter-lab", "notebook")),
    (["/venv/bin/python3", "-m", "ipykernel_launcher", "-f", "k.json"], ("python -m ipykernel_launcher", "notebook")),
    (["timeout", "3", "fio", "--version"], ("fio", "fio")),
    (["taskset", "-c", "0", "pandoc", "-v"], ("pandoc", "notebook")),
    (["bash", "-c", "cd /tmp && exec sshd -D"], ("sshd", "fleet")),
    (["python3", "-m", "memstor.cli", "parse", "--kind", "fio", "x"], None),  # fio as an argument
    (["setpriv", "--reuid=1", "python3", "-m", "memstor.cli", "run", "fio-queue-depth"], None),
    (["taskset", "-c", "0", "/tmp/chase", "1024"], None),
    (["make", "-n", "all"], None),
    (["lint-imports", "--no-cache"], None),
    (["ctags", "-x"], None),
])
def test_the_guard_names_the_program_and_its_marker(argv, found):
    assert fast_tier_guard.started(argv) == found
