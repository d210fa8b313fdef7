"""The memory loaded-latency experiment (``mlc-loaded-latency``): idle latency, peak injection bandwidth,
and latency under load at each inject delay for every traffic (MLC -W code) x access size x pacing.

Runs Intel MLC when present, else memstor's MLC-compatible ``loadlat`` (parameter ``tool``), through the
resumable sweep (:mod:`memstor.measure.sweep`); every raw output is parsed by :func:`memstor.parse.mlc.parse_mlc`,
loadlat's JSON sidecar (kept in each point's ``.meta.json``) by :mod:`memstor.parse.loadlat_json`.
Result: ``<data>/processed/<host>/mlc-loaded-latency.csv`` with the DESIGN.md ``mlc`` columns first,
then ``host, point, status`` (done | failed), ``error, note``, then the repetition and quality-gate columns
(:data:`GATE_COLUMNS`, below), each value's own interval (:data:`CI_COLUMNS`, below), then the settings
that make a curve what it is (:data:`SETTING_COLUMNS`):
``load_threads`` (0 for idle latency), ``buffer_kib`` (per thread), ``random`` (the latency thread chases
random addresses: always for loadlat, for MLC when it could not disable the prefetchers), ``load_random``
(load threads use random addresses, ``-U``), ``huge_pages`` (the buffers were on 2 MiB pages), ``pages``
(how: ``2M (THP, 100 %)``, ``2M (MLC -L)``, ``4K``) and ``pacing`` (loaded latency: ``fixed``, MLC's fixed
delay loop, or ``exp``, loadlat's exponential delays of the same mean; empty for idle and peak rows).
Units: latency in ns, bandwidth in MB/s (10^6 bytes/s), inject delay in cycles of the tool's delay loop
(not ns), buffer in KiB, access size in bytes.

Idle latency is measured twice when ``huge_pages`` is on (and the kernel allows them): with huge pages
(the DRAM latency) and with 4 KiB pages (adds the page-walk cost of TLB misses over the big buffer);
:func:`memstor.analysis.memory.page_walk` compares the two.

**Pacing** (parameter ``pacing``, a list: ``[fixed, exp]`` measures every loaded curve under both, back to
back): with few load threads, fixed delays make nearly periodic requests, exponential ones Poisson-like
requests (``arrival_cv`` ~ 1 instead of ~0.1); queueing at the same bandwidth differs. Intel MLC has only
fixed delays (``exp`` with MLC is refused before anything runs). The pacing is part of the point name and
of the ``pacing`` column, so curves under different pacings are never repetitions of each other.

**Repetitions** (``repetitions``): every point is measured n times, repetitions outer, each into its own raw
file; the table keeps one row per value x repetition. ``config`` names the configuration (the point name of
its first repetition): rows with the same ``config``, ``test``, ``traffic`` and ``inject_delay`` are
repetitions, ``repetition`` numbers them (1-based); summaries (n, mean, 95 % interval) group on that.

**Quality gate** (loadlat v0.3+; :mod:`memstor.measure.loadlat` holds the thresholds): loadlat splits each
point's window into sub-windows (merged into 5 groups when there are more than 5). A value passes when
bandwidth varies by less than 5 % and latency by less than 2 % across them (``bandwidth_spread_pct``, ``latency_spread_pct``: (max - min) / mean, %), every
measuring thread got >= 90 % of its CPU (``cpu_share_min_pct``) and steal time was <= 2 % of the window
(``steal_pct``, the busiest measuring CPU); a loaded-latency value whose bandwidth exceeds the one at the
next smaller delay by more than 5 % fails too (it and that neighbour are re-measured). A failing value is
re-measured (``max_remeasure`` times at most) in a new point with only the failing delays (name part
``a<n>``, a new raw file: raw outputs are never overwritten); the table uses the latest attempt that passes
its own gates, else the latest attempt, and says which (``attempt`` of ``attempts``). ``gate``: ``passed``,
``failed:<codes>`` (bandwidth_unstable, latency_unstable, cpu_share, steal, bandwidth_rises_with_delay) or
``not_evaluated:mlc`` / ``not_evaluated:no_sub_windows`` / ``not_evaluated:section`` (matrices, max bandwidth, c2c); ``gate_detail`` says why in words and lists
every attempt's outcome. A value that never passes is kept and marked, never dropped or averaged away.
``windows`` (sub-windows) and ``arrival_cv`` (coefficient of variation of the load threads' time between
request groups, median over threads) come with it. Failed points (the tool did not run) have empty gate
columns. memstor asks loadlat for sub-windows of 0.1 s or more, a multiple of 5 (10 at 1 s, 20 at 2 s:
:func:`memstor.measure.loadlat.sub_windows`); the gate judges them merged into 5 consecutive groups, so
its thresholds keep their meaning.

**A point's own interval** (:data:`CI_COLUMNS`, between the gate and the setting columns): ``latency_ns_ci_low/high`` and
``bandwidth_MBps_ci_low/high``, the 95 % batch-means interval of the value from its sub-windows
(:func:`memstor.analysis.memory.sub_window_ci_columns`: at least 10 batches, no ramp excluded: loadlat
warms up before the first sub-window), ``ci_method`` (``batch-means`` when a bound is a number, else
empty) and ``ci_note`` (why a bound is empty: ``no sub-windows (MLC)``, ``too few batches (5 sub-windows
< 10)``, ``correlated (...)``, ...). Summaries (memstor.analysis.memory.curve_table) use the interval
between repetitions when n >= 2 and this one when n = 1.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import pandas as pd

from memstor.core.errors import UsageError
from memstor.measure import mlc
from memstor.core.files import atomic_write, read_json
from memstor.measure.sweep import Point, PointResult, processed_path, raw_dir, run_sweep
from memstor.core.schema import MLC_COLUMNS, TRAFFIC_CODES
from memstor.core.units import format_size
from memstor.core.validate import Section

EXPERIMENT = "mlc-loaded-latency"
#: MLC's default inject delays (cycles), used when a profile gives none.
MLC_DELAYS = (0, 2, 8, 15, 50, 100, 200, 300, 400, 500, 700, 1000, 1300, 1700, 2500, 3500, 5000, 9000, 20000)
#: Settings of each row (see the module docstring); empty when unknown.
SETTING_COLUMNS = ["load_threads", "buffer_kib", "random", "load_random", "huge_pages", "pages", "pacing"]
#: Repetitions, re-measurements and the quality gate of each row (see the module docstring).
GATE_COLUMNS = ["config", "repetition", "attempt", "attempts", "gate", "gate_detail", "windows",
                "bandwidth_spread_pct", "latency_spread_pct", "cpu_share_min_pct", "steal_pct", "arrival_cv"]
#: Each row's own 95 % interval from its sub-windows (memstor.analysis.memory.sub_window_ci_columns; see the
#: module docstring).
CI_COLUMNS = ["latency_ns_ci_low", "latency_ns_ci_high", "bandwidth_MBps_ci_low", "bandwidth_MBps_ci_high",
              "ci_method", "ci_note"]
EXTRA_COLUMNS = ["host", "point", "status", "error", "note", *GATE_COLUMNS, *CI_COLUMNS, *SETTING_COLUMNS]
#: Pacings of the load threads' delays (loadlat --pacing); Intel MLC has only fixed.
PACINGS = ("fixed", "exp")
#: Upper limits of the repetitions and max_remeasure parameters.
MAX_REPETITIONS = 100
MAX_REMEASURE = 10
#: Re-measurement rounds at most (each round re-measures the points that failed the gate; a point is
#: re-measured at most max_remeasure times, so this only guards against a bug).
MAX_ROUNDS = 50
#: Share of the available memory the tool's buffers may take.
MEMORY_FRACTION = 0.8


@dataclass(frozen=True)
class LoadedLatencyParams:
    """Validated parameters of the experiment (the ``mlc-loaded-latency`` section of a profile)."""

    tool: str = "auto"                     # auto (MLC on PATH, else loadlat; loadlat for exp) | mlc | loadlat
    mlc_path: str = ""                     # Intel MLC binary when not on PATH
    traffic: tuple = ("R", "W3", "W2", "W5", "W6")  # MLC -W codes ("R" = read-only)
    access_bytes: tuple = (64, 256)        # -l access size / stride in bytes
    delays: tuple = MLC_DELAYS             # inject delays in delay-loop cycles, measured in this order
    seconds_per_point: float = 2           # -t seconds per delay (MLC: whole seconds)
    buffer_kib: int = 1048576              # -b buffer per thread in KiB
    latency_cpu: int = 0                   # -c CPU of the latency thread
    load_cpus: tuple = ()                  # -k CPUs of the load threads (resolved: never empty)
    huge_pages: bool = True                # -L huge pages where the kernel allows them (+ a 4 KiB idle point)
    random_access: bool = False            # -U random addresses for the load threads (default sequential)
    pacing: tuple = ("fixed",)             # loadlat --pacing of each loaded curve: fixed (MLC) and/or exp
    sections: tuple = ()                   # MLC default-run sections beside these: latency_matrix, bandwidth_matrix,
    #                                        max_bandwidth, c2c_latency (one point each)
    repetitions: int = 1                   # runs of every point (separate raw files)
    max_remeasure: int = 1                 # re-measurements of a point that fails the quality gate
    profile: str = ""                      # profile the values came from (for the record)


# -------------------------------------------------------------------------------------- validation


V = Section(EXPERIMENT)


def _traffic(values) -> tuple:
    """Validated MLC -W codes ("R", "W2" ... "W10"), each once; "r", "w5", "5" are accepted as R, W5, W5."""
    allowed = ", ".join(f"{c} ({TRAFFIC_CODES[c][0]})" for c in TRAFFIC_CODES)
    codes = []
    for value in V.items("traffic", values):
        code = str(value).strip().upper()
        code = f"W{code}" if code.isdigit() else code
        if code not in TRAFFIC_CODES:
            raise V.error("traffic", value, f"unknown traffic code; allowed: {allowed}")
        codes.append(code)
    return V.unique("traffic", codes)


def _access_sizes(values) -> tuple:
    """Access sizes in bytes: positive multiples of the 64-byte cache line, each once."""
    want = "use a positive multiple of 64 bytes (a cache line), e.g. 64, 128, 256"
    sizes = [V.integer("access_bytes", v, 64, want=want) for v in V.items("access_bytes", values)]
    for size in sizes:
        if size % 64:
            raise V.error("access_bytes", size, want)
    return V.unique("access_bytes", sizes)


def _delays(values) -> tuple:
    """Inject delays (delay-loop cycles): whole numbers >= 0, each once, kept in the given order."""
    want = f"use whole numbers >= 0 (inject delays in cycles); MLC's default list is {list(MLC_DELAYS)}"
    return V.unique("delays", [V.integer("delays", v, 0, want=want) for v in V.items("delays", values)])


def _sections(values) -> tuple:
    """The other sections of MLC's default run to measure (memstor.measure.mlc.SECTIONS), each once, in order."""
    want = f"use a list of {', '.join(mlc.SECTIONS)} (or [] for none)"
    out = []
    for value in V.items("sections", values, allow_empty=True):
        text = str(value).strip().lower().lstrip("-")
        if text not in mlc.SECTIONS:
            raise V.error("sections", value, want)
        out.append(text)
    return V.unique("sections", out)


def _pacing(values) -> tuple:
    """Pacings of the loaded curves: ``fixed`` (MLC's fixed delay loop) and/or ``exp`` (exponential delays
    of the same mean, loadlat only), each once, in the given order."""
    want = "use fixed (MLC's fixed delay loop) and/or exp (exponential delays, loadlat), e.g. [fixed, exp]"
    out = []
    for value in V.items("pacing", values):
        text = str(value).strip().lower()
        if text not in PACINGS:
            raise V.error("pacing", value, want)
        out.append(text)
    return V.unique("pacing", out)


def available_cpus() -> list[int]:
    """CPUs this process may run on (affinity mask), sorted."""
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return list(range(os.cpu_count() or 1))


def _cpus(latency_cpu, load_cpus) -> tuple[int, tuple]:
    """Validated latency CPU and load CPUs ("" = every available CPU except the latency CPU)."""
    cpus = available_cpus()
    shown = mlc.format_cpus(cpus)
    lat = V.integer("latency_cpu", latency_cpu, 0)
    if lat not in cpus:
        raise V.error("latency_cpu", lat, f"not an available CPU; this machine offers CPUs {shown}")
    if load_cpus in (None, "", []):
        load = [c for c in cpus if c != lat]
        if not load:
            raise UsageError(
                f"{EXPERIMENT}: needs at least 2 CPUs (a latency thread and a load thread); only CPU {shown} is available"
            )
        return lat, tuple(load)
    try:
        load = mlc.parse_cpus(load_cpus)
    except ValueError:
        raise V.error("load_cpus", load_cpus, "use a CPU list like '1', '1-3,5' or '' (all but latency_cpu)") from None
    bad = [c for c in load if c not in cpus]
    if bad:
        raise V.error("load_cpus", load_cpus, f"CPU {bad[0]} is not available; this machine offers CPUs {shown}")
    if lat in load:
        raise V.error("load_cpus", load_cpus, f"it includes latency_cpu {lat}; the latency thread needs its own CPU")
    return lat, tuple(load)


def validate_params(params: dict) -> LoadedLatencyParams:
    """Check a profile section and return it typed; UsageError (one line) naming the bad parameter.

    Keys missing from ``params`` take the standard profile's values; unknown keys are refused.
    """
    V.keys(params, [f.name for f in fields(LoadedLatencyParams) if f.name != "profile"], required=False)
    d = LoadedLatencyParams()
    get = params.get
    tool = V.choice("tool", str(get("tool", d.tool) or "auto").strip().lower(), mlc.TOOLS)
    lat, load = _cpus(get("latency_cpu", d.latency_cpu), get("load_cpus", ""))
    return LoadedLatencyParams(
        tool=tool,
        mlc_path=str(get("mlc_path", d.mlc_path) or ""),
        traffic=_traffic(get("traffic", list(d.traffic))),
        access_bytes=_access_sizes(get("access_bytes", list(d.access_bytes))),
        delays=_delays(get("delays", list(d.delays))),
        seconds_per_point=V.seconds("seconds_per_point", get("seconds_per_point", d.seconds_per_point)),
        buffer_kib=V.integer("buffer_kib", get("buffer_kib", d.buffer_kib), 1),
        latency_cpu=lat,
        load_cpus=load,
        huge_pages=V.boolean("huge_pages", get("huge_pages", d.huge_pages)),
        random_access=V.boolean("random_access", get("random_access", d.random_access)),
        pacing=_pacing(get("pacing", list(d.pacing))),
        sections=_sections(get("sections", list(d.sections))),
        repetitions=V.integer("repetitions", get("repetitions", d.repetitions), 1, MAX_REPETITIONS),
        max_remeasure=V.integer("max_remeasure", get("max_remeasure", d.max_remeasure), 0, MAX_REMEASURE),
        profile=str(get("profile", "") or ""),
    )


def _mem_available_bytes() -> int | None:
    """MemAvailable from /proc/meminfo in bytes, or None when unknown."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def memory_need_bytes(p: LoadedLatencyParams) -> int:
    """Bytes the tool's buffers take at most: a read and a write buffer per load thread, plus the latency
    thread's buffer."""
    return p.buffer_kib * 1024 * (2 * len(p.load_cpus) + 1)


def check_for_tool(p: LoadedLatencyParams, tool: str) -> None:
    """Checks that depend on the chosen tool (MLC takes whole seconds and paces only with fixed delays) and
    on the free memory."""
    if tool == "mlc" and "exp" in p.pacing:
        raise V.error("pacing", list(p.pacing),
                      "Intel MLC paces its load threads only with a fixed delay loop; use pacing: [fixed], "
                      "or tool: loadlat for exponential pacing")
    if tool == "mlc" and not float(p.seconds_per_point).is_integer():
        raise V.error("seconds_per_point", p.seconds_per_point,
                      "Intel MLC takes whole seconds (-t); use 1 or more, or tool=loadlat")
    need = memory_need_bytes(p)
    avail = _mem_available_bytes()
    if avail and need > MEMORY_FRACTION * avail:
        raise V.error("buffer_kib", p.buffer_kib,
                      f"{len(p.load_cpus)} load threads would need {need / 2**30:.1f} GiB, "
                      f"{avail / 2**30:.1f} GiB is available; lower buffer_kib or set load_cpus")


# ------------------------------------------------------------------------------------------ points


def _seconds_text(seconds: float) -> str:
    """``2s``, ``500ms`` (no dot in point names)."""
    seconds = float(seconds)
    if seconds.is_integer():
        return f"{int(seconds)}s"
    return f"{seconds * 1000:g}ms".replace(".", "p")


def point_name(params: dict) -> str:
    """File-safe point name that encodes every setting of ``params`` (a :func:`build_points` spec).

    Readable parts first — mode, traffic and access size, tool, buffer (``b1g``), seconds per delay
    (``t2s``), latency CPU (``c0``), load CPUs (``k1-3`` when short, else their count), the number of
    delays (``d19``), pages (``2M``/``4K``), load order (``seq``/``rnd``), ``exp`` for exponential pacing,
    ``r<n>`` for repetition n > 1, ``a<n>`` for re-measurement attempt n > 1 — then the first 8 hex digits
    of the SHA-256 of all params (JSON, sorted keys), so that two points that differ in anything (the
    delay list, a long CPU list...) never share a raw file. Example:
    ``loaded-latency_R_l64_loadlat_b1g_t2s_c0_k1_d19_2M_seq_1f0c2a9b``. Fixed pacing, the first repetition
    and the first attempt add nothing to the params, so their names are those of earlier memstor versions
    (their raw files stay valid).
    """
    mode = params["mode"]
    parts = [mode.replace("_", "-")]
    if mode == "loaded_latency":
        parts += [str(params["traffic"]), f"l{int(params['access_bytes'])}"]
    parts += [str(params["tool"]), f"b{format_size(int(params['buffer_kib']) * 1024)}",
              f"t{_seconds_text(params['seconds'])}"]
    if "latency_cpu" in params:
        parts.append(f"c{int(params['latency_cpu'])}")
    if "load_cpus" in params:
        cpus = mlc.format_cpus(params["load_cpus"])
        parts.append(f"k{cpus.replace(',', '+')}" if len(cpus) <= 12 else f"k{len(params['load_cpus'])}cpus")
    if "delays" in params:
        parts.append(f"d{len(params['delays'])}")
    parts.append("2M" if params.get("huge_pages") else "4K")
    if "random_access" in params:
        parts.append("rnd" if params["random_access"] else "seq")
    if params.get("pacing", "fixed") != "fixed":
        parts.append(str(params["pacing"]))
    if int(params.get("repetition", 1)) > 1:
        parts.append(f"r{int(params['repetition'])}")
    if int(params.get("attempt", 1)) > 1:
        parts.append(f"a{int(params['attempt'])}")
    digest = hashlib.sha256(json.dumps(params, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    return "_".join(parts) + f"_{digest[:8]}"


def build_points(p: LoadedLatencyParams, tool: str, huge: bool | None = None) -> list[Point]:
    """Idle latency (huge pages, and 4 KiB pages), peak injection bandwidth, one point per asked-for section
    (``sections``: latency/bandwidth matrix, max bandwidth, c2c latency), then one loaded-latency point
    per access size x traffic x pacing; all of it ``p.repetitions`` times (repetitions outer: a first full
    pass over the grid comes first).

    ``huge``: use huge pages (``-L``); None = ``p.huge_pages`` where the kernel allows them for ``tool``
    (:func:`memstor.measure.mlc.huge_pages_available`). With huge pages every point runs with ``-L`` and an
    extra idle-latency point runs with 4 KiB pages, so both idle figures exist (their difference is the
    page-walk cost). Each loaded-latency point runs the whole delay list in one tool invocation (``-g``
    delay file; ``-d`` when there is a single delay). Point params hold everything that changes the
    measurement and the point name encodes all of them (:func:`point_name`), so a changed parameter
    measures a new point (in a new raw file) and an unchanged one is resumed from its raw file. Params
    carry ``pacing`` only for ``exp`` and ``repetition`` only from 2 on (see :func:`point_name`).
    Re-measurements (attempts) are added by :func:`remeasure_points`.
    """
    if huge is None:
        huge = p.huge_pages and mlc.huge_pages_available(tool, memory_need_bytes(p))[0]
    common = {
        "tool": tool,
        "buffer_kib": p.buffer_kib,
        "seconds": float(p.seconds_per_point),
        "huge_pages": bool(huge),
    }
    specs = [{"mode": "idle_latency", **common, "latency_cpu": p.latency_cpu}]
    if huge:
        specs.append({"mode": "idle_latency", **common, "huge_pages": False, "latency_cpu": p.latency_cpu})
    loads = {"load_cpus": list(p.load_cpus), "random_access": bool(p.random_access)}
    specs.append({"mode": "peak_injection_bandwidth", **common, **loads})
    specs += [{"mode": section, **common} for section in p.sections]
    for size in p.access_bytes:
        for code in p.traffic:
            for pacing in p.pacing:
                spec = {"mode": "loaded_latency", **common, "latency_cpu": p.latency_cpu, **loads,
                        "traffic": code, "access_bytes": size, "delays": list(p.delays)}
                if pacing != "fixed":
                    spec["pacing"] = pacing
                specs.append(spec)
    points = []
    for rep in range(1, p.repetitions + 1):
        for spec in specs:
            params = dict(spec, repetition=rep) if rep > 1 else spec
            points.append(Point(point_name(params), params, mlc.estimate_s(params)))
    return points


def config_name(params: dict) -> str:
    """The configuration a point measures: its name without repetition and attempt (the name of its first
    repetition's first attempt). Rows with the same ``config`` (and test, traffic, delay) are repetitions."""
    if params.get("config"):
        return str(params["config"])
    return point_name({k: v for k, v in params.items() if k not in ("repetition", "attempt", "config")})


# ------------------------------------------------------------------------------------ quality gate


def _row_key(row: dict) -> tuple:
    """A measured value's identity across attempts: (config, repetition, test, traffic, inject delay, source
    node, destination node, c2c kind): a matrix point holds one value per node pair, a c2c point one per
    kind (``detail``: "Local Socket L2->L2 HITM")."""

    def whole(x):
        return int(x) if x is not None and x == x else None

    from memstor.analysis.memory import c2c_kind

    kind = c2c_kind(row.get("detail")) if row.get("test") == "c2c_latency" else None
    return (row["config"], int(row["repetition"]), row.get("test"), row.get("traffic"), whole(row.get("inject_delay")),
            whole(row.get("src_node")), whole(row.get("dst_node")), kind)


def _own_gate(row: dict) -> list[tuple[str, str]]:
    """The quality gates one measured row fails on its own figures (:func:`memstor.measure.loadlat.gate_reasons`)."""
    from memstor.measure.loadlat import gate_reasons

    return gate_reasons({k: row.get(k) for k in ("windows", "bandwidth_spread_pct", "latency_spread_pct",
                                                 "cpu_share_min_pct", "steal_pct")})


def _evaluable(row: dict) -> bool:
    """A row the gate can judge: measured by a loadlat that wrote sub-windows."""
    return row.get("status") == "done" and row.get("tool") == "loadlat" and bool(row.get("windows"))


def choose_attempts(rows: list[dict]) -> list[dict]:
    """One row per measured value (:func:`_row_key`) out of all attempts' rows, with the gate columns set.

    The row used is the latest attempt that passes its own gates (sub-window spreads, CPU share, steal),
    else the latest attempt: a value that never passes is kept and marked, never dropped or averaged.
    Then, per configuration x repetition, a loaded-latency value whose bandwidth exceeds the one at the
    next smaller delay by more than GATE_BANDWIDTH_RISE_PCT fails ``bandwidth_rises_with_delay``.
    ``gate``: ``passed``, ``failed:<codes>`` or ``not_evaluated:<why>``; ``gate_detail``: the reasons in
    words and, when there were several attempts, each attempt's outcome; ``attempts``: how many attempts
    measured the value; ``attempt``: the one used. Failed points (no numbers) pass through unchanged.
    """
    from memstor.measure.loadlat import GATE_BANDWIDTH_RISE_PCT, gate_text

    groups: dict[tuple, list[dict]] = {}
    out: list[dict] = []
    for row in rows:
        if row.get("status") != "done":
            out.append(row)
            continue
        groups.setdefault(_row_key(row), []).append(row)
    chosen: dict[tuple, dict] = {}
    for key, attempts in groups.items():
        attempts = sorted(attempts, key=lambda r: int(r["attempt"]))
        verdicts = [(r, _own_gate(r) if _evaluable(r) else None) for r in attempts]
        used, reasons = next(((r, v) for r, v in reversed(verdicts) if v == []), verdicts[-1])
        row = dict(used)
        row["attempts"] = len(attempts)
        row["_reasons"] = reasons
        if len(attempts) > 1:
            row["_history"] = "; ".join(
                f"attempt {r['attempt']}: {gate_text(v) if v is not None else 'not evaluated'}" for r, v in verdicts)
        chosen[key] = row
    # bandwidth must not rise with the delay (per configuration x repetition, by delay)
    curves: dict[tuple, list[tuple]] = {}
    for key, row in chosen.items():
        if row.get("test") == "loaded_latency" and key[4] is not None and row.get("bandwidth_MBps") is not None:
            curves.setdefault(key[:4], []).append(key)
    for keys in curves.values():
        keys.sort(key=lambda k: k[4])
        for lo, hi in zip(keys, keys[1:]):
            a, b = chosen[lo], chosen[hi]
            bw_a, bw_b = float(a["bandwidth_MBps"]), float(b["bandwidth_MBps"])
            if bw_a > 0 and bw_b > bw_a * (1 + GATE_BANDWIDTH_RISE_PCT / 100) and b["_reasons"] is not None:
                b["_reasons"] = [*b["_reasons"], (
                    "bandwidth_rises_with_delay",
                    f"bandwidth {bw_b:.1f} MB/s is {100 * (bw_b / bw_a - 1):.1f} % above {bw_a:.1f} MB/s at the "
                    f"smaller delay {lo[4]} (> {GATE_BANDWIDTH_RISE_PCT:g} %)")]
    for row in chosen.values():
        reasons = row.pop("_reasons")
        history = row.pop("_history", "")
        if reasons is None:
            if row.get("tool") == "mlc":
                row["gate"], why = "not_evaluated:mlc", "Intel MLC reports no sub-windows, CPU shares or steal time"
            elif row.get("test") in mlc.SECTIONS:
                row["gate"] = "not_evaluated:section"
                why = "the gate judges idle latency, peak injection and loaded latency (their sub-windows); not this section"
            else:
                row["gate"], why = "not_evaluated:no_sub_windows", "the raw output has no sub-windows (loadlat before v0.3)"
            row["gate_detail"] = why
        else:
            row["gate"] = gate_text(reasons)
            row["gate_detail"] = "; ".join(text for _, text in reasons) or None
        if history:
            row["gate_detail"] = f"{row['gate_detail'] or 'passed'} ({history})"
        out.append(row)
    return out


def remeasure_points(points: Sequence[Point], rows: list[dict], max_remeasure: int) -> list[Point]:
    """The next round's re-measurements: new points (new raw files) for the values that fail the gate.

    ``rows``: every attempt's rows so far (:func:`point_rows`, before :func:`choose_attempts`); ``points``:
    every point measured so far. A loaded-latency value that fails its own gates, or whose bandwidth
    rises with the delay (then with the value at the next smaller delay too: either may be the bad one),
    is re-measured while it was measured at most ``max_remeasure`` times before; the delays of one
    configuration x repetition that need their n-th attempt share one new point (params ``attempt`` = n,
    ``delays`` = those delays, ``config``). Idle latency and peak bandwidth points are re-measured whole.
    MLC rows are never re-measured (no gate).
    """
    if max_remeasure <= 0:
        return []
    counts: dict[tuple, int] = {}  # (config, repetition, delay or None) -> attempts so far (failed ones too)
    by_name = {}
    for pt in points:
        prm = pt.params
        by_name[pt.name] = pt
        cfg, rep = config_name(prm), int(prm.get("repetition", 1))
        for d in (prm.get("delays") or [None]) if prm.get("mode") == "loaded_latency" else [None]:
            counts[(cfg, rep, d)] = counts.get((cfg, rep, d), 0) + 1
    final = [r for r in choose_attempts(rows) if r.get("status") == "done"]
    want: dict[tuple, set] = {}  # (config, repetition) -> delays (None: the whole point)
    bases: dict[tuple, dict] = {}
    for row in final:
        if not str(row.get("gate", "")).startswith("failed:"):
            continue
        cfg, rep = row["config"], int(row["repetition"])
        delay = _row_key(row)[4] if row.get("test") == "loaded_latency" else None
        marks = [delay]
        if "bandwidth_rises_with_delay" in row["gate"] and delay is not None:
            smaller = [_row_key(r)[4] for r in final if r["config"] == cfg and int(r["repetition"]) == rep
                       and r.get("test") == "loaded_latency" and _row_key(r)[4] is not None
                       and _row_key(r)[4] < delay]
            if smaller:
                marks.append(max(smaller))
        for d in marks:
            if counts.get((cfg, rep, d), 0) <= max_remeasure:
                want.setdefault((cfg, rep), set()).add(d)
        bases[(cfg, rep)] = by_name[row["point"]].params if row["point"] in by_name else None
    new: list[Point] = []
    for (cfg, rep), delays in want.items():
        base = bases.get((cfg, rep))
        if base is None:
            continue
        base = {k: v for k, v in base.items() if k not in ("attempt", "config")}
        if base.get("mode") == "loaded_latency":
            order = [int(d) for d in base["delays"]]
            by_attempt: dict[int, list[int]] = {}
            for d in delays:
                by_attempt.setdefault(counts.get((cfg, rep, d), 0) + 1, []).append(d)
            full = _full_delays(points, cfg)
            for attempt, ds in sorted(by_attempt.items()):
                ds = sorted(ds, key=lambda d: full.index(d) if d in full else order.index(d) if d in order else d)
                params = dict(base, delays=ds, attempt=attempt, config=cfg)
                new.append(Point(point_name(params), params, mlc.estimate_s(params)))
        else:
            params = dict(base, attempt=counts.get((cfg, rep, None), 0) + 1, config=cfg)
            new.append(Point(point_name(params), params, mlc.estimate_s(params)))
    known = {pt.name for pt in points}
    return [pt for pt in new if pt.name not in known]


def _full_delays(points: Sequence[Point], config: str) -> list[int]:
    """The delay list of a configuration's first attempt (the measuring order), [] when unknown."""
    for pt in points:
        if "attempt" not in pt.params and config_name(pt.params) == config:
            return [int(d) for d in pt.params.get("delays") or []]
    return []


# ------------------------------------------------------------------------------------------- table


def settings(params: dict, meta: dict | None = None, text: str = "", detail: str | None = None) -> dict:
    """The :data:`SETTING_COLUMNS` of a point's rows: what was asked (``params``), corrected by what the
    tool reports (loadlat's JSON sidecar in ``meta``, its ``# huge pages`` header in ``text``; MLC's
    "random access" note in the row's ``detail``). Unknown values are None."""
    meta = meta or {}
    mode, tool = params.get("mode"), params.get("tool")
    sidecar = meta.get("loadlat_json") if isinstance(meta.get("loadlat_json"), dict) else {}
    loads = mode != "idle_latency"
    threads = len(params.get("load_cpus") or []) if loads else 0
    if loads and isinstance(sidecar.get("load_cpus"), list) and sidecar["load_cpus"]:
        threads = len(sidecar["load_cpus"])
    buffer_kib = params.get("buffer_kib")
    key = "load_buffer_bytes" if mode == "peak_injection_bandwidth" else "latency_buffer_bytes"
    if isinstance(sidecar.get(key), int) and sidecar[key] > 0:
        buffer_kib = sidecar[key] // 1024
    if mode == "peak_injection_bandwidth":
        latency_random = None  # no latency thread
    elif tool == "loadlat":
        latency_random = True  # loadlat's latency chain is always random
    else:
        latency_random = "random access" in str(detail or "")
    load_random = bool(params.get("random_access", False)) if loads else None
    if loads and isinstance(sidecar.get("random_load_access"), bool):
        load_random = sidecar["random_load_access"]
    pacing = None  # only loaded latency has inject delays to pace
    if mode == "loaded_latency":
        pacing = sidecar.get("pacing") if sidecar.get("pacing") in PACINGS else params.get("pacing", "fixed")
    requested = bool(params.get("huge_pages", False))
    share = mlc.huge_page_share(text) if tool == "loadlat" else None
    if share is None and isinstance((sidecar.get("huge_pages") or {}).get("huge_fraction"), (int, float)):
        share = float(sidecar["huge_pages"]["huge_fraction"])
    thp = meta.get("thp_enabled")
    if tool == "loadlat":
        huge = (share >= 0.5) if share is not None else (False if not requested else None)
    else:
        huge = True if requested else (None if thp == "always" else False)
    return {"load_threads": threads, "buffer_kib": buffer_kib, "random": latency_random,
            "load_random": load_random, "huge_pages": huge, "pages": mlc.pages_text(tool, requested, share, thp),
            "pacing": pacing}


def _identity(params: dict) -> dict:
    """The repetition columns of a point's rows: ``config``, ``repetition``, ``attempt`` (1-based)."""
    return {"config": config_name(params), "repetition": int(params.get("repetition", 1)),
            "attempt": int(params.get("attempt", 1)), "attempts": 1}


def _failed_row(result: PointResult, host: str) -> dict:
    """The row that marks a failed point: its coordinates and settings, no numbers, the error."""
    params = result.point.params
    row = dict.fromkeys(MLC_COLUMNS + GATE_COLUMNS)
    row.update(tool=params.get("tool"), test=params.get("mode"))
    if params.get("traffic"):
        row["traffic"], row["read_fraction"] = TRAFFIC_CODES[params["traffic"]]
    if params.get("access_bytes"):
        row["access_bytes"] = params["access_bytes"]
    meta = read_json(result.meta) or {}
    note = meta.get("note")  # e.g. the tool lacked root / the msr module
    row.update(host=host, point=result.point.name, status="failed", error=result.error, note=note)
    row.update(settings(params, meta))
    row.update(_identity(params))
    row.update(dict.fromkeys(CI_COLUMNS), ci_method="", ci_note="point failed")
    return row


def point_rows(result: PointResult, data_root: Path, host: str) -> list[dict]:
    """Tidy rows of one sweep point: its parsed measurements, or one row marking it failed."""
    from memstor.parse.mlc import parse_mlc

    if result.status == "failed" or result.raw is None:
        return [_failed_row(result, host)]
    meta = read_json(result.meta) or {}
    try:
        source = str(Path(result.raw).relative_to(data_root))
    except ValueError:
        source = str(result.raw)
    text = Path(result.raw).read_text(encoding="utf-8", errors="replace")
    rows = mlc.select_rows(parse_mlc(text, source).rows, result.point.params)
    if result.point.params.get("mode") == "loaded_latency":
        order = {int(d): i for i, d in enumerate(result.point.params["delays"])}
        rows = sorted(rows, key=lambda r: (r.get("run") or 0, order.get(int(r["inject_delay"]), 0)))
    from memstor.analysis.memory import sub_window_ci_columns
    from memstor.parse.loadlat_json import figures_by_point, point_key

    figures = figures_by_point(meta.get("loadlat_json"))
    params = result.point.params
    out = []
    for r in rows:
        row = {c: r.get(c) for c in MLC_COLUMNS}
        row.update(host=host, point=result.point.name, status="done", error=None, note=meta.get("note"))
        row.update(settings(params, meta, text, r.get("detail")))
        row.update(_identity(params))
        code = _LABEL_CODE.get(r.get("traffic"))
        fig = figures.get(point_key(r.get("test"), code, r.get("inject_delay")), {})
        for col in ("windows", "bandwidth_spread_pct", "latency_spread_pct", "cpu_share_min_pct", "steal_pct",
                    "arrival_cv"):
            row[col] = fig.get(col)
        row.update(sub_window_ci_columns(fig.get("series"), params.get("tool")))
        out.append(row)
    return out


#: Traffic labels (table) -> MLC -W codes (loadlat's JSON).
_LABEL_CODE = {label: code for code, (label, _frac) in TRAFFIC_CODES.items()}


def build_table(results: Sequence[PointResult], data_root: Path, host: str) -> pd.DataFrame:
    """The experiment's tidy table: schema columns first, then ``host, point, status, error, note``, the
    :data:`GATE_COLUMNS`, the :data:`CI_COLUMNS` and the :data:`SETTING_COLUMNS`; one row per measured value x
    repetition, from the
    attempt :func:`choose_attempts` uses (``point`` names its raw file). A re-measurement that failed to
    run leaves no row of its own: its error is added to the ``gate_detail`` of the values it was for."""
    rows = [row for res in results for row in point_rows(res, Path(data_root), host)]
    lost = [r for r in rows if r.get("status") == "failed" and int(r.get("attempt") or 1) > 1]
    rows = choose_attempts([r for r in rows if not (r.get("status") == "failed" and int(r.get("attempt") or 1) > 1)])
    for bad in lost:
        res = next((x for x in results if x.point.name == bad["point"]), None)
        delays = {int(d) for d in (res.point.params.get("delays") or [])} if res else set()
        for row in rows:
            if row.get("status") == "done" and row["config"] == bad["config"] and \
                    row["repetition"] == bad["repetition"] and (not delays or row.get("inject_delay") in delays):
                row["gate_detail"] = f"{row.get('gate_detail') or row.get('gate')}; attempt {bad['attempt']} " \
                                     f"could not run: {bad['error']}"
    df = pd.DataFrame(rows, columns=MLC_COLUMNS + EXTRA_COLUMNS)
    for col in ("access_bytes", "inject_delay", "run", "load_threads", "buffer_kib", "repetition", "attempt",
                "attempts", "windows"):
        df[col] = pd.to_numeric(df[col]).astype("Int64")
    for col in ("random", "load_random", "huge_pages"):
        df[col] = df[col].astype("boolean")
    for col in ("read_fraction", "latency_ns", "bandwidth_MBps", "bandwidth_spread_pct", "latency_spread_pct",
                "cpu_share_min_pct", "steal_pct", "arrival_cv", *CI_COLUMNS[:4]):
        df[col] = pd.to_numeric(df[col]).astype("float64")
    return df


def write_table(df: pd.DataFrame, path: Path) -> Path:
    """Write the table as CSV atomically (empty cell = not available)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, df.to_csv(index=False))
    return path


def _sysinfo() -> dict | None:
    """The machine description for the sweep manifest, or None when memstor.measure.sysinfo is unavailable."""
    try:
        from memstor.measure.sysinfo import collect

        return collect(None)
    except Exception:  # the manifest can do without it; run_experiment stores sysinfo.json anyway
        return None


def _say(line: str) -> None:
    """One line for the user on stderr (notebooks show it, the CLI prints it)."""
    print(f"{EXPERIMENT}: {line}", file=sys.stderr, flush=True)


def measure(points: Sequence[Point], tool: str, executable: str, *, data_root: Path, host: str,
            requested: str = "", max_remeasure: int = 0, progress: bool = True) -> list[PointResult]:
    """Run or resume ``points``, then re-measure what fails the quality gate, round after round.

    Each round is one resumable sweep over every point so far (the earlier ones are cached), so the
    manifest lists them all; :func:`remeasure_points` adds new points (new raw files: raw outputs are
    never overwritten) until no value needs another attempt or each has had ``max_remeasure``
    re-measurements. A rerun with the same points finds the same raw files and makes the same decisions.
    Returns the PointResults of the last round (all points). Intel MLC points are never re-measured.
    """
    every = list(points)
    results: list[PointResult] = []
    for _ in range(MAX_ROUNDS):
        runner = mlc.MlcRunner(tool, executable, every, requested=requested or tool)
        results = run_sweep(EXPERIMENT, every, runner, Path(data_root), host, sysinfo=_sysinfo, progress=progress)
        if tool != "loadlat" or max_remeasure <= 0:
            break
        rows = [row for res in results for row in point_rows(res, Path(data_root), host)]
        more = remeasure_points(every, rows, max_remeasure)
        if not more:
            break
        todo = [pt for pt in more if not (raw_dir(Path(data_root), host, EXPERIMENT) / f"{pt.name}.txt").is_file()]
        if todo:
            values = sum(len(pt.params.get("delays") or [None]) for pt in todo)
            _say(f"quality gate: re-measuring {values} value(s) in {len(todo)} new point(s) (new raw files), "
                 f"e.g. {todo[0].name}")
        every += more
    return results


def run_loaded_latency(params: dict, *, data_root: Path, target_dir: Path | None = None, host: str,
                       progress: bool = True) -> pd.DataFrame:
    """Run or resume the loaded-latency sweep; write and return ``processed/<host>/mlc-loaded-latency.csv``.

    Parameters are validated (and the tool found) before anything runs. ``target_dir`` is unused: the
    experiment measures memory, not storage. Failed points keep one row with ``status`` = failed and the
    reason in ``error``; privilege notes from the tool (no root / msr module) go to ``note`` and stderr.
    """
    del target_dir  # memory experiment: no test file
    p = validate_params(params)
    # auto = Intel MLC when installed, but only loadlat paces with exponential delays
    tool, executable = mlc.resolve_tool("loadlat" if p.tool == "auto" and "exp" in p.pacing else p.tool,
                                        p.mlc_path)
    check_for_tool(p, tool)
    huge, why = mlc.huge_pages_available(tool, memory_need_bytes(p)) if p.huge_pages else (False, "")
    if p.huge_pages and not huge:
        _say(f"huge pages not used ({why}); every point runs with 4 KiB pages, the idle latency includes "
             "page walks")
    points = build_points(p, tool, huge=huge)
    data_root = Path(data_root)
    results = measure(points, tool, executable, data_root=data_root, host=host, requested=p.tool,
                      max_remeasure=p.max_remeasure, progress=progress)
    df = build_table(results, data_root, host)
    out = write_table(df, processed_path(data_root, host, EXPERIMENT))
    df.attrs.update(params=asdict(p), tool=tool, executable=executable, csv=str(out), huge_pages=huge,
                    huge_pages_why=why)
    for note in dict.fromkeys(n for n in df["note"].dropna()):
        _say(f"note: {note}")
    failed = [r for r in results if r.status == "failed"]
    if failed:
        _say(f"{len(failed)} of {len(results)} points failed (status=failed in {out}); first: {failed[0].error}")
    return df


NOTEBOOK = "10-mlc-loaded-latency"
KIND = "mlc"
validate = validate_params
run = run_loaded_latency
