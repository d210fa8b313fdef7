"""The experiment registry: every family is one module, one notebook and one profile section, and a new
family is found by the CLI, the profiles, the Makefile's notebook list and the synthesis without editing
anything else (checked on a toy family added to a temporary copy of the repository)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT
from memstor import experiments
from memstor.core import profiles
from memstor.core.errors import UsageError

TOY_MODULE = '''"""toy-echo: one tiny random-read fio point (a test family; nothing else in the tree knows it)."""

from __future__ import annotations

from memstor.experiments._fio_params import common_params
from memstor.experiments._fio_points import point_params
from memstor.experiments._fio_run import run_family
from memstor.core.validate import Section

EXPERIMENT = "toy-echo"
NOTEBOOK = "50-toy-echo"
KIND = "fio"


def validate(params: dict):
    """The shared fio keys are all a toy needs (wrapped like the real families' parameter models)."""
    from types import SimpleNamespace

    return SimpleNamespace(common=common_params(Section(EXPERIMENT), params))


def _configs(p, engine: str) -> list:
    return [point_params(EXPERIMENT, p.common, engine, rw="randread", bs="4k", iodepth=1, numjobs=1)]


def run(params: dict, *, data_root, target_dir, host: str, progress: bool = True, session=None):
    return run_family(EXPERIMENT, _configs, validate(params), data_root=data_root, target_dir=target_dir,
                      host=host, progress=progress, session=session)
'''

TOY_SECTION = {"runtime_s": 1, "ramp_s": 0, "file_size": "16m", "ioengine": "psync", "direct": 0,
               "numjobs": 1, "repetitions": 1}


def test_every_family_has_its_notebook_and_a_section_in_every_profile():
    fams = experiments.families()
    names = [m.EXPERIMENT for m in fams]
    first = ["mlc-loaded-latency", "fio-block-size", "fio-rw-ratio", "fio-queue-depth", "fio-steady-state",
             "fio-load-latency"]
    assert [n for n in names if n in first] == first and set(first) <= set(names)  # in notebook order
    notebooks = sorted(p.stem for p in (ROOT / "notebooks").glob("[1-8][0-9]-*.ipynb"))
    assert notebooks == sorted(m.NOTEBOOK for m in fams)
    for profile in sorted((ROOT / "params").glob("*.yaml")):
        doc = yaml.safe_load(profile.read_text())
        for m in fams:
            assert isinstance(doc.get(m.EXPERIMENT), dict), f"{profile.name} has no {m.EXPERIMENT} section"
            if profiles.skipped(doc[m.EXPERIMENT]):  # left out, with its reason on the one line make reads
                assert doc[m.EXPERIMENT]["skip"].strip(), f"{profile.name}: {m.EXPERIMENT} skipped without a reason"
                assert re.search(rf"^{m.EXPERIMENT}: *{{ *skip:", profile.read_text(), re.M), profile.name
                continue
            m.validate(dict(doc[m.EXPERIMENT]))  # every section passes its family's validation


def test_make_names_the_raw_device_to_every_storage_family_and_no_other():
    """S11-loop 2: `make all DEVICE=... CONFIRM_DEVICE=...` set the device for the fio-* sections only, so the
    mixed-load map (a storage family) measured the scratch file beside a raw device, and its sysinfo.json named the
    scratch folder's disk as the run's target."""
    said = {}
    for m in experiments.families():
        out = subprocess.run(["make", "-s", "--no-print-directory", "--eval",
                              'devset-%: ; @echo "$(call DEVICE_SET,$*)"', f"devset-{m.EXPERIMENT}",
                              "DEVICE=/dev/loop9", "CONFIRM_DEVICE=/dev/loop9"], cwd=ROOT, capture_output=True,
                             text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        said[m.EXPERIMENT] = (m.KIND, out.stdout.strip())
    assert said["mixed-load-map"][1] == "--set device=/dev/loop9 --set confirm_device=/dev/loop9"
    assert all((kind == "fio") == (opts != "") for kind, opts in said.values()), said


def test_unknown_experiment_names_the_registered_ones():
    with pytest.raises(UsageError, match="unknown experiment 'nope'; choose one of: fio-block-size"):
        experiments.family("nope")


def _copy_repo(dest: Path) -> Path:
    """The repository's files (as a bare clone has them, plus uncommitted edits) without generated folders."""
    skip = {".git", ".venv", "build", "data", "report", "__pycache__", ".pytest_cache", ".ruff_cache"}
    shutil.copytree(ROOT, dest, symlinks=True,
                    ignore=lambda d, names: [n for n in names if (n in skip and not (n == "report" and
                                             Path(d).name == "memstor")) or n.endswith(".egg-info")])
    return dest


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
@pytest.mark.fio
def test_a_toy_family_runs_through_cli_makefile_and_synthesis(tmp_path):
    repo = _copy_repo(tmp_path / "repo")
    # the three additions a new family needs, and nothing else
    (repo / "lib/memstor/experiments/toy_echo.py").write_text(TOY_MODULE)
    nb = json.loads((ROOT / "notebooks/20-fio-block-size.ipynb").read_text())
    nb["cells"] = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    (repo / "notebooks/50-toy-echo.ipynb").write_text(json.dumps(nb))
    for profile in (repo / "params").glob("*.yaml"):
        profile.write_text(profile.read_text() + "\n" + yaml.safe_dump({"toy-echo": TOY_SECTION}))

    env = dict(os.environ, PYTHONPATH=str(repo / "lib"))  # the copy's package, not the installed one
    data = tmp_path / "data"
    run = subprocess.run([sys.executable, "-m", "memstor.cli", "run", "toy-echo", "--profile", "quick",
                          "--data", str(data), "--host", "toyhost", "--no-progress"],
                         capture_output=True, text=True, timeout=300, env=env, cwd=repo)
    assert run.returncode == 0, run.stderr
    table = data / "processed/toyhost/toy-echo.csv"
    assert table.is_file()

    make = subprocess.run(["make", "-n", "all", "PROFILE=quick"], capture_output=True, text=True, timeout=120,
                          cwd=repo)
    assert make.returncode == 0, make.stderr
    assert "notebooks/50-toy-echo.ipynb build/notebooks/50-toy-echo.ipynb" in make.stdout

    probe = ("import sys; from memstor.analysis.dataset import load_dataset; ds = load_dataset(sys.argv[1]); "
             "print(ds.host('toyhost').tables, sorted(set(ds.fio['table'])), int(ds.fio['ok'].sum()))")
    syn = subprocess.run([sys.executable, "-c", probe, str(data)], capture_output=True, text=True, timeout=120,
                         env=env, cwd=repo)
    assert syn.returncode == 0, syn.stderr
    assert syn.stdout.split("] ")[0] + "]" == "['toy-echo.csv']"
    assert "['toy-echo']" in syn.stdout and syn.stdout.strip().endswith(" 1")


def test_a_profile_leaves_a_family_out_with_a_skip_section(tmp_path):
    """`<experiment>: {skip: "why"}`: make all leaves its notebook out and memstor run names the reason."""

    (tmp_path / "params").mkdir()
    (tmp_path / "notebooks").mkdir()
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    for nb in ("20-fio-block-size", "30-fio-rw-ratio"):
        (tmp_path / "notebooks" / f"{nb}.ipynb").write_text("{}")
    (tmp_path / "params" / "t.yaml").write_text('fio-block-size: {skip: "not in this profile"}\nfio-rw-ratio:\n  x: 1\n')
    out = subprocess.run(["make", "-pn", "PROFILE=t", "help"], cwd=tmp_path, capture_output=True, text=True).stdout
    line = next(ln for ln in out.splitlines() if ln.startswith("EXPERIMENT_NBS :="))
    assert line.split(":=")[1].split() == ["30-fio-rw-ratio"]
    with pytest.raises(UsageError, match=r"profile 't' leaves fio-block-size out \(not in this profile\)"):
        profiles.section("t", "fio-block-size", root=tmp_path)
    assert profiles.skipped({"skip": "x"}) and not profiles.skipped({"skip": "x", "bs": "4k"})
