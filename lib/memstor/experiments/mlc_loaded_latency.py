"""The memory loaded-latency experiment (``mlc-loaded-latency``): idle latency, peak injection bandwidth,
and latency under load at each inject delay for every traffic (MLC -W code) x access size.

Runs Intel MLC when present, else memstor's MLC-compatible ``loadlat`` (parameter ``tool``), through the
resumable sweep (:mod:`memstor.measure.sweep`); every raw output is parsed by :func:`memstor.parse.mlc.parse_mlc`.
Result: ``<data>/processed/<host>/mlc-loaded-latency.csv`` with the DESIGN.md ``mlc`` columns first,
then ``host, point, status`` (done | failed), ``error, note``, then the settings that make a curve what it is
(:data:`SETTING_COLUMNS`): ``load_threads`` (0 for idle latency), ``buffer_kib`` (per thread),
``random`` (the latency thread chases random addresses: always for loadlat, for MLC when it could not
disable the prefetchers), ``load_random`` (load threads use random addresses, ``-U``), ``huge_pages``
(the buffers were on 2 MiB pages) and ``pages`` (how: ``2M (THP, 100 %)``, ``2M (MLC -L)``, ``4K``).
Units: latency in ns, bandwidth in MB/s (10^6 bytes/s), inject delay in cycles of the tool's delay loop
(not ns), buffer in KiB, access size in bytes.

Idle latency is measured twice when ``huge_pages`` is on (and the kernel allows them): with huge pages
(the DRAM latency) and with 4 KiB pages (adds the page-walk cost of TLB misses over the big buffer);
:func:`memstor.analysis.memory.page_walk` compares the two.
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

from memstor.errors import UsageError
from memstor.measure import mlc
from memstor.measure.files import atomic_write, read_json
from memstor.measure.sweep import Point, PointResult, processed_path, run_sweep
from memstor.schema import MLC_COLUMNS, TRAFFIC_CODES
from memstor.units import format_size
from memstor.validate import Section

EXPERIMENT = "mlc-loaded-latency"
#: MLC's default inject delays (cycles), used when a profile gives none.
MLC_DELAYS = (0, 2, 8, 15, 50, 100, 200, 300, 400, 500, 700, 1000, 1300, 1700, 2500, 3500, 5000, 9000, 20000)
#: Settings of each row (see the module docstring); empty when unknown.
SETTING_COLUMNS = ["load_threads", "buffer_kib", "random", "load_random", "huge_pages", "pages"]
EXTRA_COLUMNS = ["host", "point", "status", "error", "note", *SETTING_COLUMNS]
#: Share of the available memory the tool's buffers may take.
MEMORY_FRACTION = 0.8


@dataclass(frozen=True)
class LoadedLatencyParams:
    """Validated parameters of the experiment (the ``mlc-loaded-latency`` section of a profile)."""

    tool: str = "auto"                     # auto (MLC when on PATH, else loadlat) | mlc | loadlat
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
    """Checks that depend on the chosen tool (MLC takes whole seconds) and on the free memory."""
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
    delays (``d19``), pages (``2M``/``4K``), load order (``seq``/``rnd``) — then the first 8 hex digits
    of the SHA-256 of all params (JSON, sorted keys), so that two points that differ in anything (the
    delay list, a long CPU list...) never share a raw file. Example:
    ``loaded-latency_R_l64_loadlat_b1g_t2s_c0_k1_d19_2M_seq_1f0c2a9b``.
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
    digest = hashlib.sha256(json.dumps(params, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    return "_".join(parts) + f"_{digest[:8]}"


def build_points(p: LoadedLatencyParams, tool: str, huge: bool | None = None) -> list[Point]:
    """Idle latency (huge pages, and 4 KiB pages), peak injection bandwidth, then one loaded-latency point
    per traffic x access size.

    ``huge``: use huge pages (``-L``); None = ``p.huge_pages`` where the kernel allows them for ``tool``
    (:func:`memstor.measure.mlc.huge_pages_available`). With huge pages every point runs with ``-L`` and an
    extra idle-latency point runs with 4 KiB pages, so both idle figures exist (their difference is the
    page-walk cost). Each loaded-latency point runs the whole delay list in one tool invocation (``-g``
    delay file; ``-d`` when there is a single delay). Point params hold everything that changes the
    measurement and the point name encodes all of them (:func:`point_name`), so a changed parameter
    measures a new point (in a new raw file) and an unchanged one is resumed from its raw file.
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
    for size in p.access_bytes:
        for code in p.traffic:
            specs.append({
                "mode": "loaded_latency", **common, "latency_cpu": p.latency_cpu, **loads,
                "traffic": code, "access_bytes": size, "delays": list(p.delays),
            })
    return [Point(point_name(s), s, mlc.estimate_s(s)) for s in specs]


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
            "load_random": load_random, "huge_pages": huge, "pages": mlc.pages_text(tool, requested, share, thp)}


def _failed_row(result: PointResult, host: str) -> dict:
    """The row that marks a failed point: its coordinates and settings, no numbers, the error."""
    params = result.point.params
    row = dict.fromkeys(MLC_COLUMNS)
    row.update(tool=params.get("tool"), test=params.get("mode"))
    if params.get("traffic"):
        row["traffic"], row["read_fraction"] = TRAFFIC_CODES[params["traffic"]]
    if params.get("access_bytes"):
        row["access_bytes"] = params["access_bytes"]
    meta = read_json(result.meta) or {}
    note = meta.get("note")  # e.g. the tool lacked root / the msr module
    row.update(host=host, point=result.point.name, status="failed", error=result.error, note=note)
    row.update(settings(params, meta))
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
    out = []
    for r in rows:
        row = {c: r.get(c) for c in MLC_COLUMNS}
        row.update(host=host, point=result.point.name, status="done", error=None, note=meta.get("note"))
        row.update(settings(result.point.params, meta, text, r.get("detail")))
        out.append(row)
    return out


def build_table(results: Sequence[PointResult], data_root: Path, host: str) -> pd.DataFrame:
    """The experiment's tidy table: schema columns first, then ``host, point, status, error, note`` and the
    :data:`SETTING_COLUMNS`."""
    rows = [row for res in results for row in point_rows(res, Path(data_root), host)]
    df = pd.DataFrame(rows, columns=MLC_COLUMNS + EXTRA_COLUMNS)
    for col in ("access_bytes", "inject_delay", "run", "load_threads", "buffer_kib"):
        df[col] = pd.to_numeric(df[col]).astype("Int64")
    for col in ("random", "load_random", "huge_pages"):
        df[col] = df[col].astype("boolean")
    for col in ("read_fraction", "latency_ns", "bandwidth_MBps"):
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


def run_loaded_latency(params: dict, *, data_root: Path, target_dir: Path | None = None, host: str,
                       progress: bool = True) -> pd.DataFrame:
    """Run or resume the loaded-latency sweep; write and return ``processed/<host>/mlc-loaded-latency.csv``.

    Parameters are validated (and the tool found) before anything runs. ``target_dir`` is unused: the
    experiment measures memory, not storage. Failed points keep one row with ``status`` = failed and the
    reason in ``error``; privilege notes from the tool (no root / msr module) go to ``note`` and stderr.
    """
    del target_dir  # memory experiment: no test file
    p = validate_params(params)
    tool, executable = mlc.resolve_tool(p.tool, p.mlc_path)
    check_for_tool(p, tool)
    huge, why = mlc.huge_pages_available(tool, memory_need_bytes(p)) if p.huge_pages else (False, "")
    if p.huge_pages and not huge:
        _say(f"huge pages not used ({why}); every point runs with 4 KiB pages, the idle latency includes "
             "page walks")
    points = build_points(p, tool, huge=huge)
    runner = mlc.MlcRunner(tool, executable, points, requested=p.tool)
    data_root = Path(data_root)
    results = run_sweep(EXPERIMENT, points, runner, data_root, host, sysinfo=_sysinfo(), progress=progress)
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
