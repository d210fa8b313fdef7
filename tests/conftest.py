"""Shared test fixtures: paths to the real public outputs (inside the repository) and to the repository."""

from __future__ import annotations

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


@pytest.fixture(scope="session")
def real() -> Path:
    """The folder of real MLC/fio outputs from public repositories (see its SOURCES.md)."""
    return REAL
