"""The lab in a real browser (issue 17): JupyterLab from the project's environment (scripts/lab, what `make lab`
runs) on a free loopback port with a random token, driven by headless Chromium through selenium, on a small data
set measured once for the session. Each notebook is opened at /lab/tree/<name>.ipynb, "Run → Run All Cells" is
clicked, and once the kernel is idle the page must show: no error output, every code cell executed, the expected
number of figures, and the kernel "Python (memstor)". The raw data must be byte-identical afterwards and no fio
process may have started (the lab's kernels run fio through a logging wrapper, MEMSTOR_FIO): the notebooks find
their points measured and only re-analyse. In the synthesis notebook the explorer's metric dropdown is changed
and the interactive figure (ipympl canvas) must change with it. Notebook 40 is also run twice in a row on fresh
data: the first Run All measures, the second starts no fio and leaves every raw byte as it was. A screenshot
of each notebook is saved under the test's temporary folder (paths printed; `pytest -s` shows them).

The same checker is shown to fail on broken temporary copies: a cell that raises, a figure that is no longer
drawn, a notebook whose kernelspec is python3.

Every notebook runs here: 10, 20, 30, 40, 50, 60 and 90 (about 3 minutes on a 2-vCPU VM, ~40 s of it measuring
the data set)."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import ROOT
from lab_helpers import JUPYTER, running_lab

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = "/usr/bin/chromedriver" if Path("/usr/bin/chromedriver").exists() else shutil.which("chromedriver")
try:
    import selenium  # noqa: F401
    HAVE_SELENIUM = True
except ImportError:
    HAVE_SELENIUM = False

pytestmark = [
    pytest.mark.slow,
    pytest.mark.browser,
    pytest.mark.notebook,
    pytest.mark.fio,
    pytest.mark.loadlat,
    pytest.mark.skipif(not HAVE_SELENIUM, reason="selenium is not installed (make env installs requirements.txt)"),
    pytest.mark.skipif(CHROMIUM is None or CHROMEDRIVER is None,
                       reason="chromium and chromedriver are not installed: scripts/install-system-deps --browser"),
    pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (make env installs it)"),
    pytest.mark.skipif(not JUPYTER.exists(), reason=".venv/bin/jupyter missing: make env"),
    pytest.mark.skipif(not (ROOT / "build" / "bin" / "loadlat").exists(), reason="loadlat is not built: make loadlat"),
]

HOST = "labtest"
PROFILE = "quick"
TINY = {"runtime_s": 0.5, "ramp_s": 0, "file_size": "16m", "repetitions": 1}
#: what the session fixture measures with `memstor run EXPERIMENT --profile quick --set ...`; the notebooks get
#: exactly these parameters (the quick section with the same overrides), so they find every point measured.
#: The memory sweep's latency and load CPU: the first two of this process's affinity mask (the profile's CPU 0 and
#: every other CPU may not be in it); one CPU measures no memory sweep, and the lab data set needs one.
MEM_CPUS = sorted(os.sched_getaffinity(0))[:2]
MEASURED = {
    "mlc-loaded-latency": {"tool": "loadlat", "traffic": ["R"], "access_bytes": [64], "delays": [0, 20000],
                           "seconds_per_point": 0.3, "buffer_kib": 65536, "latency_cpu": MEM_CPUS[0],
                           "load_cpus": str(MEM_CPUS[-1])},
    "fio-steady-state": {"runtime_s": 0.5, "ramp_s": 0, "file_size": "16m", "max_rounds": 6},
    "fio-block-size": dict(TINY, bs=["4k", "64k"], rw=["randread"], seq_bs=["64k"], iodepth=4),
    "fio-rw-ratio": dict(TINY, rwmixread=[100, 50], bs=["4k"], iodepth=4),
    "fio-queue-depth": dict(TINY, rw=["randread"], iodepth=[1, 4], spec_iodepth=2, spec_numjobs=2),
    "fio-load-latency": dict(TINY, runtime_s=1, rw=["randread"], utilisation_pct=[30, 90], probe_iodepth=8,
                             probe_numjobs=1),
}
#: notebook -> (experiment it re-analyses or None, figures it must show)
RUN = {
    "10-mlc-loaded-latency": ("mlc-loaded-latency", 3),  # peak bandwidth, latency vs bandwidth, delay sweep
    "20-fio-block-size": ("fio-block-size", 2),
    "30-fio-rw-ratio": ("fio-rw-ratio", 1),
    "40-fio-queue-depth": ("fio-queue-depth", 5),
    "50-fio-steady-state": ("fio-steady-state", 3),  # convergence, window, bytes written
    "60-fio-load-latency": ("fio-load-latency", 3),
    "90-synthesis": (None, 9),  # spec ratios, 2 steady state, Little's law, knee, memory, 2 open loop, block size
}
KERNEL_LABEL = "Python (memstor)"
RUN_TIMEOUT_S = 150
#: The explorer's metric the synthesis test switches to (memstor.report.explore.METRICS["qd"]).
OTHER_METRIC = "p99 latency vs IOPS"


def _yaml_flow(value) -> str:
    return json.dumps(value) if isinstance(value, list) else str(value)


def _statuses(folder: Path, experiment: str) -> dict[str, str]:
    """Point -> status in the experiment's manifest (`done` when measured, `cached` when found measured)."""
    doc = json.loads((folder / HOST / experiment / "manifest.json").read_text())
    points = doc["points"]
    items = points.items() if isinstance(points, dict) else ((p.get("name") or p.get("point"), p) for p in points)
    return {str(k): v.get("status") for k, v in items}


@pytest.fixture(scope="module")
def measured(tmp_path_factory) -> Path:
    """A small measured data set: `memstor run` of fio-block-size and fio-queue-depth with tiny overrides."""
    if len(MEM_CPUS) < 2:
        pytest.skip("the lab data set has a memory sweep: needs 2 CPUs in the affinity mask (a latency and a load "
                    f"thread); this process may only run on CPU {MEM_CPUS[0]}")
    data = tmp_path_factory.mktemp("labdata") / "data"
    for experiment, overrides in MEASURED.items():
        cmd = [str(ROOT / ".venv/bin/memstor"), "run", experiment, "--profile", PROFILE, "--data", str(data),
               "--host", HOST, "--no-progress"]
        for key, value in overrides.items():
            cmd += ["--set", f"{key}={_yaml_flow(value)}"]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=ROOT)
        assert res.returncode == 0, f"{' '.join(cmd)}\n{res.stderr}"
    return data


def _digest_all(folder: Path) -> dict[str, str]:
    """sha256 of every file under `folder`, the sweeps' manifests and locks included."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def fio_log(tmp_path_factory) -> Path:
    """The log of every fio command the lab's kernels start (MEMSTOR_FIO points at a wrapper writing it)."""
    folder = tmp_path_factory.mktemp("fio-wrapper")
    log = folder / "fio-calls.log"
    log.touch()
    shim = folder / "fio"
    shim.write_text(f"#!/bin/sh\necho \"$@\" >> {log}\nexec {shutil.which('fio')} \"$@\"\n")
    shim.chmod(0o755)
    return log


def _fio_calls(log: Path) -> list[str]:
    return log.read_text().splitlines()


def _inject(nb: dict, params: dict) -> dict:
    """A copy of `nb` with a cell right after its parameters cell assigning `params` (what papermill does)."""
    nb = copy.deepcopy(nb)
    at = next(i for i, c in enumerate(nb["cells"]) if "parameters" in c.get("metadata", {}).get("tags", []))
    src = "# Parameters injected by tests/test_lab_browser.py\n" + "".join(
        f"{k} = {v!r}\n" for k, v in params.items())
    nb["cells"].insert(at + 1, {"cell_type": "code", "execution_count": None, "id": "injected-params",
                                "metadata": {"tags": ["injected-parameters"]}, "outputs": [], "source": src})
    return nb


def notebook_params(name: str, data: Path) -> dict:
    """The parameters `name` runs with in the lab: those the data was measured with, pointing at `data`."""
    from memstor.experiments import load_profile

    experiment, _ = RUN.get(name, (None, 0))
    if name.startswith("90-"):
        return {"data_dir": str(data), "specs_dir": str(ROOT / "data" / "specs"), "profile": PROFILE,
                "tables_dir": ""}
    params = load_profile(PROFILE, experiment, dict(MEASURED[experiment]))
    return dict(params, profile=PROFILE, data_dir=str(data), host=HOST, target_dir="", figures_dir="")


def write_notebook(folder: Path, name: str, nb: dict) -> Path:
    path = folder / f"{name}.ipynb"
    path.write_text(json.dumps(nb, indent=1))
    return path


@pytest.fixture(scope="module")
def lab_dir(measured, tmp_path_factory) -> Path:
    """Temporary copies of the notebooks run here, their parameters pointing at the measured data set."""
    folder = tmp_path_factory.mktemp("labnotebooks")
    for name in RUN:
        nb = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text())
        write_notebook(folder, name, _inject(nb, notebook_params(name, measured)))
    return folder


@pytest.fixture(scope="module")
def lab(lab_dir, fio_log, tmp_path_factory):
    with running_lab(tmp_path_factory.mktemp("lab"), lab_dir,
                     extra_env={"MEMSTOR_FIO": str(fio_log.parent / "fio")}) as running:
        yield running


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1000", "--no-first-run", "--disable-extensions"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("lab-screenshots")


# --- driving the lab ----------------------------------------------------------------------------------------
@dataclass
class LabRun:
    """What the page showed after Run All."""

    name: str
    kernel_label: str = ""
    kernel_name: str = ""
    prompts: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    figures: int = 0
    dialogs: list[str] = field(default_factory=list)
    progress_widgets: int = 0
    raw_bars: list[str] = field(default_factory=list)
    seconds: float = 0.0
    screenshot: Path | None = None
    timed_out: bool = False
    extra: dict = field(default_factory=dict)


def _sessions(lab) -> list[dict]:
    import urllib.request

    with urllib.request.urlopen(lab.url("/api/sessions"), timeout=10) as resp:
        return json.loads(resp.read())


def _session_of(lab, name: str) -> dict | None:
    return next((s for s in _sessions(lab) if s.get("path", "").endswith(f"{name}.ipynb")), None)


def _wait(cond, timeout: float, what: str, poll: float = 0.3):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = cond()
        if value:
            return value
        time.sleep(poll)
    raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")


def _click_menu(driver, menu: str, label: str) -> None:
    """Open the top menu `menu` ("Run") and click its item labelled `label` ("Run All Cells"), as a user does."""
    from selenium.webdriver.common.by import By

    item = next(i for i in driver.find_elements(By.CSS_SELECTOR, ".lm-MenuBar-item") if i.text.strip() == menu)
    item.click()

    def entry():
        for e in driver.find_elements(By.CSS_SELECTOR, ".lm-MenuBar-menu .lm-Menu-item"):
            names = e.find_elements(By.CSS_SELECTOR, ".lm-Menu-itemLabel")
            if e.is_displayed() and names and names[0].text.strip() == label:
                return [e]
        return None

    found = _wait(entry, 10, f"menu item {menu} → {label}")[0]
    assert "lm-mod-disabled" not in (found.get_attribute("class") or ""), f"{menu} → {label} is disabled"
    found.click()


def open_in_lab(driver, lab, name: str) -> None:
    """Open notebooks/<name>.ipynb in the lab and wait for its kernel to be started and idle."""
    from selenium.webdriver.common.by import By

    driver.get(lab.url(f"/lab/tree/{name}.ipynb?reset"))
    _wait(lambda: driver.find_elements(By.CSS_SELECTOR, ".jp-NotebookPanel .jp-Notebook .jp-Cell"), 60,
          f"{name} to open")
    # the kernel started and idle (the REST view of the same session the page shows)
    _wait(lambda: (s := _session_of(lab, name)) and s["kernel"]["execution_state"] == "idle", 60,
          f"the kernel of {name} to start")
    _wait(lambda: KERNEL_LABEL in _kernel_label(driver) or "Python" in _kernel_label(driver), 20,
          "the kernel name in the toolbar")


def run_all(driver, lab, name: str) -> bool:
    """Run → Run All Cells, then wait until the kernel is idle with no cell queued; False when it timed out."""
    _click_menu(driver, "Run", "Run All Cells")

    def busy() -> bool:
        prompts = _prompts(driver)
        s = _session_of(lab, name)
        return any("*" in p for p in prompts) or s is None or s["kernel"]["execution_state"] != "idle"

    try:
        _wait(lambda: any(p.strip("[]: ") for p in _prompts(driver)) and busy(), 30, "the first cell to start",
              poll=0.1)
    except TimeoutError:
        pass  # a fast notebook may already be done: the idle check below decides
    stable = 0
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while stable < 3:  # idle three polls in a row: the queue is empty, not between two cells
        if time.monotonic() > deadline:
            return False
        stable = 0 if busy() else stable + 1
        time.sleep(0.5)
    return True


def collect(driver, lab, name: str, out: LabRun) -> LabRun:
    """What the page shows now: prompts, kernel, error outputs, figures, progress bars, dialogs."""
    from selenium.webdriver.common.by import By

    out.prompts = _prompts(driver)
    out.kernel_label = _kernel_label(driver)
    s = _session_of(lab, name)
    out.kernel_name = s["kernel"]["name"] if s else ""
    out.errors = [el.text[-2000:] for el in driver.find_elements(By.CSS_SELECTOR, ".jp-OutputArea-output")
                  if (el.get_attribute("data-mime-type") or "") == "application/vnd.jupyter.stderr"
                  and _looks_like_error(el.text)]
    out.figures = len(driver.find_elements(By.CSS_SELECTOR, ".jp-OutputArea-output img"))
    # tqdm.auto with ipywidgets: a progress-bar widget, not carriage-return text on stderr
    out.progress_widgets = len(driver.find_elements(By.CSS_SELECTOR, ".jp-OutputArea-output .widget-hprogress"))
    out.raw_bars = [e.text[:200] for e in driver.find_elements(By.CSS_SELECTOR, ".jp-OutputArea-output")
                    if "%|" in e.text and "█" in e.text]
    out.dialogs = [d.text[:300] for d in driver.find_elements(By.CSS_SELECTOR, ".jp-Dialog") if d.is_displayed()]
    out.extra["text"] = "\n".join(e.text for e in driver.find_elements(By.CSS_SELECTOR, ".jp-OutputArea-output"))
    return out


def run_all_in_lab(driver, lab, name: str, shot_dir: Path, interact=None, out: LabRun | None = None) -> LabRun:
    """Open notebooks/<name>.ipynb in the lab, Run → Run All Cells, wait for the kernel to be idle, report
    (into `out` when given). interact(driver, run): called before the screenshot (e.g. to change a widget);
    its findings go to run.extra."""
    t0 = time.monotonic()
    out = out or LabRun(name)
    open_in_lab(driver, lab, name)
    try:
        out.timed_out = not run_all(driver, lab, name)
    except TimeoutError:
        out.timed_out = True
    out.seconds = time.monotonic() - t0
    collect(driver, lab, name, out)
    if interact is not None and not out.timed_out:
        interact(driver, out)
    out.screenshot = _screenshot(driver, shot_dir / f"{name}.png")
    _close(driver, lab, name)
    return out


def _looks_like_error(text: str) -> bool:
    import re

    return "Traceback" in text or bool(re.search(r"^\w*(Error|Exception)\b.*", text, re.M))


def _prompts(driver) -> list[str]:
    from selenium.webdriver.common.by import By

    return [p.text.strip() for p in driver.find_elements(By.CSS_SELECTOR, ".jp-CodeCell .jp-InputArea-prompt")]


def _kernel_label(driver) -> str:
    from selenium.webdriver.common.by import By

    labels = driver.find_elements(By.CSS_SELECTOR, ".jp-NotebookPanel-toolbar .jp-Toolbar-kernelName")
    return " ".join(lbl.text.strip() for lbl in labels if lbl.is_displayed())


def _screenshot(driver, path: Path) -> Path:
    """The notebook scrolled to its first error output, else its first figure (the toolbar with the kernel
    name and the status bar stay in view)."""
    from selenium.webdriver.common.by import By

    errors = [e for e in driver.find_elements(
        By.CSS_SELECTOR, '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')
        if _looks_like_error(e.text)]
    target = errors or driver.find_elements(By.CSS_SELECTOR, ".jp-OutputArea-output img")
    if target:
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", target[0])
        time.sleep(0.3)
    driver.save_screenshot(str(path))
    print(f"screenshot: {path}")
    return path


def _close(driver, lab, name: str) -> None:
    """Save the temporary copy (no unsaved-changes prompt on the next page) and shut its kernel down."""
    import urllib.request

    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    try:
        _click_menu(driver, "File", "Save Notebook")
    except Exception:  # noqa: BLE001 - a menu hiccup must not hide the run's own result
        ActionChains(driver).key_down(Keys.CONTROL).send_keys("s").key_up(Keys.CONTROL).perform()
    time.sleep(0.5)
    s = _session_of(lab, name)
    if s:
        req = urllib.request.Request(lab.url(f"/api/sessions/{s['id']}"), method="DELETE")
        urllib.request.urlopen(req, timeout=30).close()


def problems(run: LabRun, expected_figures: int) -> list[str]:
    """Everything a user would call broken in this run; empty when the notebook is fine."""
    found = []
    if run.timed_out:
        found.append(f"the kernel was still busy after {RUN_TIMEOUT_S} s")
    if run.errors:
        found.append(f"{len(run.errors)} error output(s): {run.errors[0][-600:]}")
    unexecuted = [p for p in run.prompts if not p.strip("[]: ").isdigit()]
    if unexecuted or not run.prompts:
        found.append(f"{len(unexecuted)} of {len(run.prompts)} code cells not executed")
    if run.figures < expected_figures:
        found.append(f"{run.figures} figures rendered, expected {expected_figures}")
    if KERNEL_LABEL not in run.kernel_label or run.kernel_name != "memstor":
        found.append(f"kernel is {run.kernel_label!r} ({run.kernel_name}), not {KERNEL_LABEL!r} (memstor)")
    if run.dialogs:
        found.append(f"a dialog is open: {run.dialogs[0]}")
    return found


# --- the tests ---------------------------------------------------------------------------------------------
def _explore(driver, run: LabRun) -> None:
    """Switch the synthesis explorer's metric and record the caption and the ipympl canvas before and after."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    def canvas_png() -> str:
        canvases = driver.find_elements(By.CSS_SELECTOR, ".jupyter-matplotlib canvas")
        return driver.execute_script("return arguments[0].toDataURL('image/png');", canvases[0]) if canvases else ""

    def caption() -> str:
        found = [e.text for e in driver.find_elements(By.CSS_SELECTOR, ".widget-html") if "points drawn" in e.text]
        return found[0] if found else ""

    box = next((d for d in driver.find_elements(By.CSS_SELECTOR, ".widget-dropdown")
                if d.find_elements(By.TAG_NAME, "label") and
                d.find_element(By.TAG_NAME, "label").text.strip() == "metric"), None)
    run.extra.update(caption_before=_wait(caption, 30, "the explorer's caption"),
                     canvas_before=_wait(canvas_png, 30, "the explorer's figure"))
    if box is None:
        return
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", box)
    Select(box.find_element(By.TAG_NAME, "select")).select_by_visible_text(OTHER_METRIC)
    try:
        _wait(lambda: OTHER_METRIC in caption(), 30, "the caption to follow the metric")
        _wait(lambda: canvas_png() not in ("", run.extra["canvas_before"]), 30, "the figure to be redrawn")
    except TimeoutError:
        pass
    run.extra.update(caption_after=caption(), canvas_after=canvas_png())
    canvases = driver.find_elements(By.CSS_SELECTOR, ".jupyter-matplotlib canvas")
    if canvases:
        driver.execute_script("arguments[0].scrollIntoView({block: 'end'});", canvases[0])
        time.sleep(0.3)
    run.extra["explorer_shot"] = driver.save_screenshot(str(run.extra["shots"] / f"{run.name}-explorer.png"))


@pytest.mark.parametrize("name", list(RUN))
def test_notebook_runs_all_in_the_lab(name, lab, browser, measured, shots, fio_log):
    before, calls = _digest_all(measured / "raw"), len(_fio_calls(fio_log))
    run = LabRun(name, extra={"shots": shots})
    run = run_all_in_lab(browser, lab, name, shots, interact=_explore if name.startswith("90-") else None, out=run)
    print(f"{name}: {run.seconds:.1f} s, {run.figures} figures, kernel {run.kernel_label!r}, "
          f"{len(run.prompts)} code cells", file=sys.stderr)
    assert problems(run, RUN[name][1]) == []
    assert run.screenshot is not None and run.screenshot.stat().st_size > 10_000
    # Run All re-analysed: no raw byte changed (points, metas, manifests; the locks hold the pid of the
    # last process that measured) and no fio process started
    after = _digest_all(measured / "raw")
    changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k) and not k.endswith(".lock")}
    assert not changed, f"Run All changed raw files: {sorted(changed)[:5]}"
    assert _fio_calls(fio_log)[calls:] == [], "Run All started fio"
    experiment = RUN[name][0]
    if experiment:
        # the sweep says that it measures nothing; no progress bar as raw "\r" text (a bar, when there is one,
        # is a widget: see the notebook-40 test, whose first run measures)
        assert f"{experiment}: all " in run.extra["text"] and "nothing is measured" in run.extra["text"]
        assert not run.raw_bars, run.raw_bars
    else:
        # the explorer: switching the metric redraws the interactive figure and its caption says so
        assert run.extra.get("canvas_before"), "the explorer's interactive figure (ipympl canvas) is missing"
        assert OTHER_METRIC in run.extra.get("caption_after", ""), run.extra.get("caption_after")
        assert run.extra["canvas_after"] not in ("", run.extra["canvas_before"]), "the figure did not change"


def test_notebook_40_twice_in_a_row_measures_only_the_first_time(lab, lab_dir, browser, shots, fio_log,
                                                                  tmp_path_factory):
    """Acceptance 3: Run All twice in a row in one lab session on fresh data. The first run measures (fio
    runs), the second re-measures nothing: no fio process, every raw byte (manifest and lock included, the
    kernel being the same process) as it was."""
    name, experiment = "40-twice", "fio-queue-depth"
    data = tmp_path_factory.mktemp("twice") / "data"
    nb = json.loads((ROOT / "notebooks" / "40-fio-queue-depth.ipynb").read_text())
    write_notebook(lab_dir, name, _inject(nb, dict(notebook_params("40-fio-queue-depth", data))))
    open_in_lab(browser, lab, name)
    try:
        calls = len(_fio_calls(fio_log))
        first = collect(browser, lab, name, LabRun(name, timed_out=not run_all(browser, lab, name)))
        measured_calls = [c for c in _fio_calls(fio_log)[calls:] if "--output-format=json+" in c]
        raw = _digest_all(data / "raw")
        calls = len(_fio_calls(fio_log))
        second = collect(browser, lab, name, LabRun(name, timed_out=not run_all(browser, lab, name)))
        again = _fio_calls(fio_log)[calls:]
        _screenshot(browser, shots / f"{name}.png")
    finally:
        _close(browser, lab, name)
    assert problems(first, RUN["40-fio-queue-depth"][1]) == []
    assert problems(second, RUN["40-fio-queue-depth"][1]) == []
    n_points = len(_statuses(data / "raw", experiment))
    assert len(measured_calls) == n_points >= 2 and f"{experiment}: measuring {n_points} of {n_points}" in first.extra["text"]
    # the sweep's progress bar renders as a widget in the lab (ipywidgets), not as raw "\r" text
    assert first.progress_widgets >= 1 and not first.raw_bars, (first.progress_widgets, first.raw_bars)
    assert again == [], f"the second Run All started fio: {again}"
    assert _digest_all(data / "raw") == raw
    assert f"{experiment}: all {n_points} points already measured" in second.extra["text"]


def _broken_copy(lab_dir: Path, measured: Path, kind: str) -> str:
    name = "20-fio-block-size"
    nb = json.loads((lab_dir / f"{name}.ipynb").read_text())
    if kind == "raises":
        at = next(i for i, c in enumerate(nb["cells"]) if c.get("id") == "injected-params")
        nb["cells"].insert(at + 2, {"cell_type": "code", "execution_count": None, "id": "boom", "metadata": {},
                                    "outputs": [], "source": "raise RuntimeError('deliberately broken copy')"})
    elif kind == "no-figure":
        cell = next(c for c in nb["cells"] if "fig_lat = splots.block_size_latency" in "".join(c["source"]))
        cell["source"] = "".join(cell["source"]) + "\nimport matplotlib.pyplot as plt\nplt.close(fig_lat)"
    elif kind == "python3":
        nb["metadata"]["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                        "language": "python"}
    broken = f"broken-{kind}"
    write_notebook(lab_dir, broken, nb)
    return broken


@pytest.mark.parametrize("kind, expect", [
    ("raises", "error output"),
    ("no-figure", "1 figures rendered, expected 2"),
    ("python3", "not 'Python (memstor)'"),
], ids=["raises", "no-figure", "python3-kernel"])
def test_the_checker_catches_a_broken_notebook(kind, expect, lab, lab_dir, browser, measured, shots):
    name = _broken_copy(lab_dir, measured, kind)
    run = run_all_in_lab(browser, lab, name, shots)
    found = problems(run, RUN["20-fio-block-size"][1])
    print(f"{name}: {found}", file=sys.stderr)
    assert any(expect in p for p in found), found
