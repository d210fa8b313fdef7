"""Build, locate and drive ``loadlat``, memstor's open MLC-compatible loaded-latency tool (C, lib/loadlat/).

``loadlat`` takes Intel MLC's options (values attached: ``-b200m -l256 -W5 -k1-3``) and prints MLC v3.10's
text layout, so :func:`memstor.parse.mlc.parse_mlc` reads it (tool = ``loadlat``). Units: buffer sizes in
KiB (``-b``), access size in bytes (``-l``), seconds per point (``-t``), inject delay in delay-loop
iterations (``-d``; the ns per iteration is printed as a ``#`` line and stored in the ``--json`` sidecar).

loadlat v0.3 adds ``--pacing=fixed|exp`` (exponential delays of the same mean), ``--windows=N`` (sub-windows
per point) and, in the JSON, per-point sub-windows, per-thread CPU shares, steal time and the load threads'
arrival CV (lib/loadlat/README.md). The **quality gate** of a point is here (:func:`gate_reasons`, thresholds
``GATE_*``); memstor.parse.loadlat_json turns the JSON into the figures it judges and
memstor.experiments.mlc_loaded_latency re-measures what fails.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

from memstor.core.errors import MemstorError, UsageError
from memstor.measure.ctool import CTool
from memstor.measure.ctool import repo_root as ctool_repo_root
from memstor.parse.loadlat_json import GATE_GROUPS, gate_groups

#: The tool: its sources, its build and its executable (memstor.measure.ctool, shared with the other C tools).
TOOL = CTool("loadlat", "LOADLAT")
#: Where ``make loadlat`` puts the tool, relative to the repository root.
BINARY_RELPATH = TOOL.binary_relpath
#: Sources, relative to the repository root.
SOURCE_DIR = TOOL.source_dir
#: The modes loadlat implements (MLC's names); without a mode it runs MLC's default run (v0.4: every section
#: but idle_latency).
MODES = ("idle_latency", "loaded_latency", "peak_injection_bandwidth", "latency_matrix", "bandwidth_matrix",
         "max_bandwidth", "c2c_latency")
#: MLC's default inject delays for --loaded_latency (delay-loop iterations).
MLC_DELAYS = (0, 2, 8, 15, 50, 100, 200, 300, 400, 500, 700, 1000, 1300, 1700, 2500, 3500, 5000, 9000, 20000)
_VERSION_RE = re.compile(r"loadlat \(Memory Latency Checker-compatible\) - v(\S+)")


repo_root = ctool_repo_root
compile_command = TOOL.compile_command
build = TOOL.build
binary = TOOL.binary


def version(exe: Path | str | None = None) -> str:
    """loadlat's version (``"0.1"``) from the banner of ``loadlat --help``."""
    exe = str(exe) if exe is not None else str(binary())
    proc = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=30)
    m = _VERSION_RE.search(proc.stdout)
    if proc.returncode != 0 or not m:
        raise MemstorError(f"{exe} --help printed no loadlat banner: is it loadlat? rebuild with `make loadlat`")
    return m.group(1)


def format_cpus(cpus: Iterable[int] | str | int) -> str:
    """MLC CPU list: ``[1, 2, 3, 5]`` -> ``"1-3,5"``; a string is passed through (loadlat checks it)."""
    if isinstance(cpus, str):
        return cpus
    if isinstance(cpus, bool):
        raise UsageError(f"load_cpus={cpus!r}: give CPU numbers such as [1, 2] or '1-3,5'")
    items = sorted({int(c) for c in ([cpus] if isinstance(cpus, int) else cpus)})
    if not items or items[0] < 0:
        raise UsageError(f"load_cpus={cpus!r}: give at least one CPU number >= 0")
    parts: list[str] = []
    i = 0
    while i < len(items):
        j = i
        while j + 1 < len(items) and items[j + 1] == items[j] + 1:
            j += 1
        parts.append(str(items[i]) if i == j else f"{items[i]}-{items[j]}")
        i = j + 1
    return ",".join(parts)


def write_delay_file(path: Path, delays: Iterable[int]) -> Path:
    """Write a ``-g`` delay file (one delay per line, delay-loop iterations) and return its path."""
    values = [int(d) for d in delays]
    if not values or any(d < 0 for d in values):
        raise UsageError(f"delays={values!r}: give one or more whole numbers >= 0")
    path = Path(path)
    path.write_text("".join(f"{d}\n" for d in values))
    return path


# ---------------------------------------------------------------------------------------- sub-windows

#: Shortest sub-window memstor asks loadlat for (s): shorter ones are dominated by scheduler noise.
SUB_WINDOW_S = 0.1
#: Most sub-windows loadlat accepts (``--windows``, 1-100).
MAX_SUB_WINDOWS = 100


def sub_windows(seconds: float) -> int:
    """Sub-windows (loadlat ``--windows``) memstor asks for in a point of ``seconds`` s: windows of
    :data:`SUB_WINDOW_S` (0.1 s) or longer, a multiple of the gate's 5 groups
    (memstor.parse.loadlat_json.GATE_GROUPS), 5 at least, 100 at most: 1 s -> 10, 2 s -> 20, 5 s -> 50,
    0.3 s -> 5 (60 ms: loadlat's default, too few for a batch-means interval).

    loadlat's default of 5 gives every point an EMPTY batch-means interval (fewer than 10 batches,
    memstor.core.batchmeans); 10 sub-windows at the quick profile's 1 s and 20 at the standard 2 s
    give the interval its 10 batches with windows of 100 ms. The quality gate is unchanged: it judges the
    spreads of the sub-windows merged into 5 consecutive groups, i.e. of the same 5 windows as before."""
    per_group = max(1, int(float(seconds) / (GATE_GROUPS * SUB_WINDOW_S) + 1e-9))
    return min(MAX_SUB_WINDOWS, GATE_GROUPS * per_group)


# ------------------------------------------------------------------------------------- quality gate

#: A point is accepted when, across its sub-windows (loadlat ``--windows``; memstor asks for a multiple of 5,
#: :func:`sub_windows`, and judges them merged into 5 consecutive groups), bandwidth varies by
#: less than this ((max - min) / mean, %) ...
GATE_BANDWIDTH_SPREAD_PCT = 5.0
#: ... and latency by less than this ((max - min) / mean, %) ...
GATE_LATENCY_SPREAD_PCT = 2.0
#: ... every measuring thread got at least this share of its CPU over the window (CPU time / wall time, %) ...
GATE_CPU_SHARE_PCT = 90.0
#: ... and the hypervisor stole at most this much of the busiest measuring CPU (% of the window; from
#: /proc/stat in USER_HZ ticks of 10 ms, so 1 tick is 1 % of a 1 s point). 2 %: a point that lost more
#: than 1/50 of a CPU to other guests ran on a contended host; below that, steal is within the other
#: gates' noise.
GATE_STEAL_PCT = 2.0
#: A loaded-latency point whose bandwidth exceeds the one at the next smaller delay by more than this (%)
#: is re-measured (more delay is less load: bandwidth must not rise).
GATE_BANDWIDTH_RISE_PCT = 5.0
#: Gate outcomes (the ``gate`` column): ``passed``, ``failed:<code>[,<code>...]``, ``not_evaluated:<code>``.
GATE_CODES = {
    "bandwidth_unstable": "bandwidth varies across the sub-windows",
    "latency_unstable": "latency varies across the sub-windows",
    "cpu_share": "a measuring thread got too little of its CPU",
    "steal": "the hypervisor stole CPU time",
    "bandwidth_rises_with_delay": "bandwidth rises with more delay",
}


def _gate_windows(n) -> str:
    """What a spread was taken over: ``5 sub-windows``, or ``20 sub-windows in 5 groups`` (parse.loadlat_json)."""
    try:
        n = int(n)
    except (TypeError, ValueError):
        return f"{n} sub-windows"
    groups = gate_groups(n)
    return f"{n} sub-windows" + (f" in {groups} groups" if groups != n else "")


def gate_reasons(fig: dict) -> list[tuple[str, str]]:
    """The gates a point's figures (:func:`memstor.parse.loadlat_json.point_figures`) fail, as (code, one
    readable clause) pairs; [] when it passes. Figures that are None (not measured for this mode) are not
    judged; a NaN spread (a sub-window lost its value) fails."""
    out = []

    def spread(key: str, code: str, limit: float, what: str) -> None:
        v = fig.get(key)
        if v is None:
            return
        if v != v:  # NaN
            out.append((code, f"{what}: a sub-window has no value (a thread was descheduled across it)"))
        elif v >= limit:
            out.append((code, f"{what} spread {v:.1f} % >= {limit:g} % across {_gate_windows(fig.get('windows'))}"))

    spread("bandwidth_spread_pct", "bandwidth_unstable", GATE_BANDWIDTH_SPREAD_PCT, "bandwidth")
    spread("latency_spread_pct", "latency_unstable", GATE_LATENCY_SPREAD_PCT, "latency")
    share = fig.get("cpu_share_min_pct")
    if share is not None and share < GATE_CPU_SHARE_PCT:
        out.append(("cpu_share", f"a measuring thread got {share:.0f} % of its CPU (< {GATE_CPU_SHARE_PCT:g} %)"))
    steal = fig.get("steal_pct")
    if steal is not None and steal > GATE_STEAL_PCT:
        out.append(("steal", f"steal time {steal:.1f} % of the window (> {GATE_STEAL_PCT:g} %)"))
    return out


def gate_text(reasons: list[tuple[str, str]]) -> str:
    """``passed`` or ``failed:<code>,<code>`` (codes in :data:`GATE_CODES`, each once, in order)."""
    if not reasons:
        return "passed"
    return "failed:" + ",".join(dict.fromkeys(code for code, _ in reasons))
