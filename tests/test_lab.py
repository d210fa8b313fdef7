"""The lab as a way in (issue 17): every notebook names the memstor kernel, the landing notebook exists and is
not an experiment, and `make lab` serves JupyterLab on 127.0.0.1 only, with a token, headless-friendly."""

from __future__ import annotations

import json
import socket
import subprocess

import pytest

from conftest import ROOT
from lab_helpers import JUPYTER, free_port, http_status, non_loopback_address, running_lab

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
KERNELSPEC = {"name": "memstor", "display_name": "Python (memstor)", "language": "python"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_names_the_memstor_kernel_and_has_no_outputs(path):
    nb = json.loads(path.read_text())
    assert nb["metadata"].get("kernelspec") == KERNELSPEC, (
        f"{path.name}: kernelspec must be {KERNELSPEC} (the kernel make env registers)")
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert not cell["outputs"] and cell["execution_count"] is None, f"{path.name} is committed with outputs"


def test_start_here_is_a_landing_page_not_an_experiment():
    path = ROOT / "notebooks" / "00-start-here.ipynb"
    nb = json.loads(path.read_text())
    text = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    for stem in (p.stem for p in NOTEBOOKS if p.stem != "00-start-here"):
        assert stem in text, f"00-start-here does not describe {stem}"
    for how in ("make report", "memstor run", "--set", "parameter cell", "make all"):
        assert how in text
    assert all(c["cell_type"] == "markdown" for c in nb["cells"])
    # make all's experiment glob does not pick it up
    assert path not in (ROOT / "notebooks").glob("[1-8][0-9]-*.ipynb")


def test_make_lab_runs_scripts_lab_with_the_port():
    out = subprocess.run(["make", "-n", "lab", "PORT=12345"], capture_output=True, text=True, cwd=ROOT,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert "PORT=12345" in out.stdout and "scripts/lab" in out.stdout


@pytest.mark.slow
@pytest.mark.skipif(not JUPYTER.exists(), reason=".venv/bin/jupyter missing: make env")
@pytest.mark.notebook
def test_make_lab_listens_on_loopback_only_with_a_token(tmp_path):
    port = free_port()
    with running_lab(tmp_path, port=port, token=None) as lab:
        # the URL printed carries the token; headless (no DISPLAY in the test): the SSH tunnel command
        printed = lab.output()
        assert f"http://127.0.0.1:{port}/lab?token={lab.token}" in printed
        assert f"ssh -N -L {port}:127.0.0.1:{port} " in printed
        assert len(lab.token) >= 32

        assert http_status(lab.url("/api/status")) == 200
        assert http_status(lab.url("/lab")) == 200
        assert http_status(f"{lab.base}/api/status") == 403  # no token: refused
        assert http_status(f"{lab.base}/api/status?token=wrong") == 403
        assert http_status(f"{lab.base}/lab") in (302, 403)  # no token: redirected to the login page

        addr = non_loopback_address()
        if addr is None:
            pytest.skip("this machine has no non-loopback IPv4 address to check the binding against")
        with pytest.raises(OSError):  # refused (nothing listens there), or unreachable
            socket.create_connection((addr, port), timeout=3).close()
    assert lab.proc.returncode is not None
    assert http_status(f"{lab.base}/api/status", timeout=2) == 0  # stopped: nothing answers any more


def test_random_token_per_start(tmp_path):
    """Two starts print two different tokens (scripts/lab's own generator, no LAB_TOKEN)."""
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "LAB_TOKEN")}
    env["JUPYTER"] = "/bin/true"  # stops right after printing: only the printed URL is looked at
    tokens = set()
    for _ in range(2):
        out = subprocess.run([str(ROOT / "scripts" / "lab")], capture_output=True, text=True, env=env, timeout=30)
        line = next(ln for ln in out.stdout.splitlines() if "token=" in ln)
        tokens.add(line.split("token=")[1].strip())
    assert len(tokens) == 2 and all(len(t) >= 32 for t in tokens)
