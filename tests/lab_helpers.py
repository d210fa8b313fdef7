"""Start and stop `make lab`'s JupyterLab (scripts/lab) from tests: a free loopback port, a random token,
a private Jupyter runtime/settings folder, and a clean shutdown."""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAB_SCRIPT = ROOT / "scripts" / "lab"
JUPYTER = ROOT / ".venv" / "bin" / "jupyter"

#: JupyterLab settings for the tests: every cell stays in the page (no windowing, so the figures of cells
#: scrolled out of view can be counted), no news or update pop-ups over the notebook.
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": '{"windowingMode": "none"}',
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
        '{"checkForUpdates": false, "fetchNews": "false", "doNotDisturbMode": true}',
}


def free_port() -> int:
    """A TCP port nobody listens on at the moment (bound to 127.0.0.1 then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_status(url: str, timeout: float = 5.0) -> int:
    """The HTTP status of a GET (redirects not followed); 0 when nothing answers."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(url, timeout=timeout) as resp:
            return resp.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except (urllib.error.URLError, OSError):
        return 0


def non_loopback_address() -> str | None:
    """An IPv4 address of this machine that is not loopback (`hostname -I`, else the UDP-connect trick)."""
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=5).stdout.split()
    except (OSError, subprocess.SubprocessError):
        out = []
    for addr in out:
        if ":" not in addr and not addr.startswith("127."):
            return addr
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("192.0.2.1", 9))  # no packet is sent: only picks the outgoing interface's address
        addr = s.getsockname()[0]
        if not addr.startswith("127.") and addr != "0.0.0.0":
            return addr
    return None


class Lab:
    """A running JupyterLab started by scripts/lab (what `make lab` runs)."""

    def __init__(self, proc: subprocess.Popen, port: int, token: str, log: Path):
        self.proc, self.port, self.token, self.log = proc, port, token, log
        self.base = f"http://127.0.0.1:{port}"

    def url(self, path: str) -> str:
        sep = "&" if "?" in path else "?"
        return f"{self.base}{path}{sep}token={self.token}"

    def output(self) -> str:
        return self.log.read_text(errors="replace")


@contextlib.contextmanager
def running_lab(tmp: Path, notebook_dir: Path | None = None, *, port: int | None = None, token: str | None = None,
                timeout: float = 90.0, extra_env: dict | None = None):
    """Start scripts/lab on a free loopback port with a random token (headless: no DISPLAY), wait until it
    answers, yield a Lab, and stop it with SIGTERM (then SIGKILL of its process group if it lingers).
    extra_env: more environment for the server and its kernels (e.g. MEMSTOR_FIO)."""
    port = port or free_port()
    token = token or secrets.token_hex(24)
    tmp.mkdir(parents=True, exist_ok=True)
    settings = tmp / "lab-settings"
    for rel, text in LAB_SETTINGS.items():
        path = settings / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "JUPYTER_TOKEN")}
    env.update(PORT=str(port), LAB_TOKEN=token, JUPYTER=str(JUPYTER),
               JUPYTER_RUNTIME_DIR=str(tmp / "jupyter-runtime"), JUPYTERLAB_SETTINGS_DIR=str(settings),
               JUPYTERLAB_WORKSPACES_DIR=str(tmp / "lab-workspaces"), PYTHONUNBUFFERED="1")
    if notebook_dir is not None:
        env["NOTEBOOK_DIR"] = str(notebook_dir)
    env.update(extra_env or {})
    log = tmp / "lab.log"
    with open(log, "wb") as fh:
        proc = subprocess.Popen([str(LAB_SCRIPT)], stdout=fh, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True, cwd=ROOT)
    lab = Lab(proc, port, token, log)
    try:
        deadline = time.monotonic() + timeout
        while http_status(lab.url("/api/status"), timeout=2) != 200:
            if proc.poll() is not None:
                raise RuntimeError(f"scripts/lab exited with {proc.returncode}:\n{lab.output()[-3000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"JupyterLab did not answer on port {port} within {timeout:.0f} s:\n"
                                   f"{lab.output()[-3000:]}")
            time.sleep(0.3)
        yield lab
    finally:
        stop(proc)


def stop(proc: subprocess.Popen, grace: float = 20.0) -> int:
    """SIGTERM (Jupyter shuts its kernels down), then SIGKILL of the process group after `grace` s."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    # kernels are the server's children in the same session: none may outlive it
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    return proc.returncode
