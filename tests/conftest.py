"""Shared test fixtures: paths to the real public outputs (inside the repository) and to the repository."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

# A shell that starts the tests in the background (`cmd &` without job control) hands them SIGINT
# ignored, and an ignored signal stays ignored across exec: the Ctrl-C tests' subprocesses would never
# see it. Handle SIGINT in this process, so the children start with the default disposition.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = Path(__file__).resolve().parents[1]
# bench/harness.py (`make bench`) is a developer tool outside the package; its tests import it from there.
sys.path.insert(0, str(ROOT / "bench"))
#: Real MLC/fio outputs from public repositories, copied byte for byte (tests/data/real/SOURCES.md).
REAL = ROOT / "tests" / "data" / "real"


def pytest_configure(config):
    """`make test-fast` (MEMSTOR_FAST_TIER=1): a test that starts fio, loadlat or cc, a notebook, a browser, ssh
    or qemu without its marker fails, saying which marker it needs (tests/fast_tier_guard.py)."""
    if os.environ.get("MEMSTOR_FAST_TIER") == "1":
        import fast_tier_guard

        config.pluginmanager.register(fast_tier_guard, "fast_tier_guard")


@pytest.fixture(scope="session")
def real() -> Path:
    """The folder of real MLC/fio outputs from public repositories (see its SOURCES.md)."""
    return REAL


@pytest.fixture(scope="session")
def synth_data(real, tmp_path_factory) -> Path:
    """The synthesis data root measured once per session (test_synthesis.build_data: real fixtures imported beside
    this machine's quick fio queue-depth sweep), shared by test_synthesis and test_report. Read-only: a test that
    changes it copies it into its tmp_path first."""
    from test_synthesis import build_data

    return build_data(tmp_path_factory.mktemp("synth"), real)


@pytest.fixture(scope="session")
def loadlat_bin(tmp_path_factory) -> Path:
    """The real loadlat: build/bin/loadlat, or compiled into a temp folder when not built yet."""
    from memstor.core.errors import MemstorError
    from memstor.measure import loadlat

    try:
        return Path(loadlat.binary())
    except MemstorError:
        return Path(loadlat.build(output=tmp_path_factory.mktemp("loadlat") / "loadlat"))


@pytest.fixture
def loop_device(tmp_path):
    """A factory: ``loop_device(size_bytes)`` -> the path of a real loop device over a sparse file in
    tmp_path (root and losetup only: skips otherwise), detached after the test."""
    import os
    import shutil
    import subprocess

    if os.geteuid() != 0 or shutil.which("losetup") is None:
        pytest.skip("needs root and losetup to create a loop device")
    made: list[str] = []

    def make(size_bytes: int) -> str:
        img = tmp_path / f"disk{len(made)}.img"
        with open(img, "wb") as fh:
            fh.truncate(size_bytes)
        res = subprocess.run(["losetup", "-f", "--show", str(img)], capture_output=True, text=True)
        if res.returncode != 0:
            pytest.skip(f"cannot create a loop device here: {res.stderr.strip()}")
        made.append(res.stdout.strip())
        return made[-1]

    yield make
    for dev in made:
        subprocess.run(["losetup", "-d", dev], capture_output=True)
