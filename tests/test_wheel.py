"""memstor as a package that installs anywhere: the wheel, installed into a clean virtual environment outside
the repository, finds its profiles, spec sheets and templates (package data) and measures.

The wheel is built from a copy of the package's sources (so the build's ``build/`` and ``*.egg-info`` never
touch the checkout), its dependencies installed at the lock's versions (requirements.txt as constraints).
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT

pytestmark = [pytest.mark.fio, pytest.mark.slow]

#: What the wheel is built from: the package, its metadata and the folders its resource links point to.
SOURCES = ("lib", "pyproject.toml", "README.md", "params", "data/specs", "data/reference")


def _run(argv: list, cwd: Path, timeout: int = 900, env: dict | None = None) -> subprocess.CompletedProcess:
    res = subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    assert res.returncode == 0, f"{' '.join(map(str, argv))} exited {res.returncode}:\n{res.stderr[-3000:]}"
    return res


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """bin/ of a fresh venv (no system site-packages) holding memstor from its wheel."""
    work = tmp_path_factory.mktemp("wheel")
    src = work / "src"
    for rel in SOURCES:
        dst = src / rel
        if (ROOT / rel).is_dir():
            shutil.copytree(ROOT / rel, dst, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dst)
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", work / "dist", src], cwd=work)
    wheel = next((work / "dist").glob("memstor-*.whl"))
    venv = work / "venv"
    _run([sys.executable, "-m", "venv", venv], cwd=work)
    # --no-compile: pip byte-compiles every installed module (numpy, pandas, scipy, matplotlib...: ~9 s of ~28 s
    # here); the commands below compile what they import, once (their environment lets Python write bytecode)
    _run([venv / "bin/python", "-m", "pip", "install", "-q", "--no-compile", "-c", ROOT / "requirements.txt", wheel],
         cwd=work)
    return venv / "bin"


def test_wheel_ships_profiles_specs_templates_and_reference_curves(installed):
    wheel_names = set()
    for whl in installed.parent.parent.glob("dist/memstor-*.whl"):
        wheel_names = set(zipfile.ZipFile(whl).namelist())
    shipped = {f"memstor/_resources/profiles/{p.name}" for p in (ROOT / "params").glob("*.yaml")}
    shipped |= {f"memstor/_resources/specs/{p.name}" for p in (ROOT / "data/specs").glob("*.yaml")}
    shipped |= {f"memstor/report/templates/{p.name}" for p in (ROOT / "lib/memstor/report/templates").iterdir()}
    shipped |= {f"memstor/_resources/reference/mess/{p.name}" for p in (ROOT / "data/reference/mess").iterdir()}
    assert shipped and shipped <= wheel_names


def test_installed_wheel_measures_and_summarises_outside_the_repository(installed, tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE")}
    env["PATH"] = f"{installed}{os.pathsep}{env.get('PATH', '')}"
    where = _run([installed / "python", "-c", "import memstor, sys; print(memstor.__file__)"], tmp_path, env=env)
    assert str(installed.parent) in where.stdout and str(ROOT) not in where.stdout

    params = _run([installed / "memstor", "params", "fio-block-size", "--profile", "quick"], tmp_path, env=env)
    assert "runtime_s:" in params.stdout

    target, data = tmp_path / "target", tmp_path / "data"
    target.mkdir()
    _run([installed / "memstor", "run", "fio-block-size", "--profile", "quick", "--target", target, "--data", data,
          "--no-progress", "--set", "runtime_s=1", "--set", "ramp_s=0", "--set", "file_size=32m"], tmp_path, env=env)
    summary = _run([installed / "memstor", "summary", "--data", data], tmp_path, env=env)
    rows = list(csv.DictReader(io.StringIO(summary.stdout)))
    assert rows and {r["experiment"] for r in rows} == {"fio-block-size"}
    assert all(float(r["iops"]) > 0 for r in rows)

    raw = sorted(p for p in (data / "raw").rglob("*.json") if not p.name.endswith(("meta.json", "manifest.json")))
    parsed = _run([installed / "memstor", "parse", "--kind", "fio", *raw], tmp_path, env=env)
    assert len(list(csv.DictReader(io.StringIO(parsed.stdout)))) >= len(rows)

