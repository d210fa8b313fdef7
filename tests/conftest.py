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


@pytest.fixture(scope="session")
def loadlat_built(tmp_path_factory) -> Path:
    """loadlat compiled from this checkout's sources by memstor.measure.loadlat.build (the `make loadlat` command)
    into a temp folder, once per session: every module that runs a fresh build shares it (a compile takes ~6 s
    on a 2-vCPU VM; five modules compiled the same sources each)."""
    from memstor.measure import loadlat

    return Path(loadlat.build(ROOT, tmp_path_factory.mktemp("loadlat") / "loadlat"))


@pytest.fixture(scope="session")
def ioarrive_built(tmp_path_factory) -> Path:
    """ioarrive compiled by memstor.measure.ioarrive.build (the `make ioarrive` command) into a temp folder, once
    per session (shared by the modules that run a fresh build)."""
    from memstor.measure import ioarrive

    return Path(ioarrive.build(ROOT, tmp_path_factory.mktemp("ioarrive") / "ioarrive"))


@pytest.fixture(scope="session")
def loadlat_arm64_built(tmp_path_factory):
    """(the executable, the make run) of `make loadlat-arm64` into a temp folder, once per session
    (test_loadlat_arm64.cross_build: skips, or fails under MEMSTOR_REQUIRE_ARM64=1, without the cross tools)."""
    from test_loadlat_arm64 import cross_build

    return cross_build(tmp_path_factory.mktemp("loadlat-arm64"))


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


#: The faked machine of the memory family's parameter, point-name and stand-in tests: CPUs 0-3 (no SMT sibling,
#: no cgroup CPU quota, one NUMA node) and 16 GiB usable memory (tests/test_machine_fit.py fakes other shapes).
FAKED_CPU_COUNT = 4
FAKED_MEMORY_BYTES = 16 * 2**30


def faked_cpu_shape(n: int, *, smt: bool = False, usable: int | None = None):
    """A faked CpuShape of ``n`` CPUs 0..n-1 (SMT: CPU i and i + n/2 share a core), ``usable`` of them by a
    cgroup quota (None: no quota), one NUMA node."""
    from memstor.measure.shape import CpuShape

    cpus = tuple(range(n))
    siblings = {c: ((c + n // 2) % n,) for c in cpus} if smt else {c: () for c in cpus}
    return CpuShape(affinity=cpus, quota_cpus=None if usable is None else float(usable), usable=usable or n,
                    siblings=siblings, nodes={0: cpus}, source=f"faked {n} CPUs")


def two_allowed_cpus() -> tuple[int, int]:
    """(latency CPU, load CPU): the first two CPUs of this process's affinity mask, whichever they are; skips
    the test when the mask holds one CPU (a loaded-latency point needs a latency and a load thread)."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip(f"needs 2 CPUs in the affinity mask (a latency and a load thread); this process may only "
                    f"run on CPU {cpus[0]}")
    return cpus[0], cpus[1]


@pytest.fixture
def faked_machine(monkeypatch):
    """The memory family (memstor.experiments._mlc_params, mlc_loaded_latency) sees the faked machine above
    instead of this one: the profiles' latency CPU 0, the default load CPUs (1-3) and the refusals do not depend
    on the CPUs, SMT siblings, quota or memory of the machine running the tests. Never for real loadlat runs:
    those name CPUs of the real mask (two_allowed_cpus)."""
    from memstor.experiments import _mlc_params, mlc_loaded_latency

    shape = faked_cpu_shape(FAKED_CPU_COUNT)
    for module in (_mlc_params, mlc_loaded_latency):
        monkeypatch.setattr(module, "cpu_shape", lambda: shape)
        monkeypatch.setattr(module, "usable_memory_bytes", lambda: FAKED_MEMORY_BYTES)
    return shape
