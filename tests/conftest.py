"""Shared test fixtures: paths to the real public outputs and to the repository."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT.parent / "shared" / "fixtures" / "real"


@pytest.fixture(scope="session")
def real() -> Path:
    """The folder of real MLC/fio outputs from public repositories (see its SOURCES.md)."""
    if not REAL.is_dir():
        pytest.fail(f"shared fixtures not found at {REAL}: clone the repo with shared/ beside it")
    return REAL
