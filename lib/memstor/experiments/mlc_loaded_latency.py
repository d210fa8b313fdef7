"""The memory loaded-latency experiment (``mlc-loaded-latency``): idle latency, peak injection bandwidth,
and latency under load at each inject delay for every traffic (MLC -W code) x access size.

Runs Intel MLC when present, else memstor's MLC-compatible ``loadlat`` (parameter ``tool``), through the
resumable sweep (:mod:`memstor.measure.sweep`); every raw output is parsed by :func:`memstor.parse.mlc.parse_mlc`.
Result: ``<data>/processed/<host>/mlc-loaded-latency.csv`` with the DESIGN.md ``mlc`` columns first,
then ``host, point, status`` (done | failed), ``error, note``. Units: latency in ns, bandwidth in MB/s (10^6 bytes/s),
inject delay in cycles of the tool's delay loop (not ns), buffer in KiB, access size in bytes.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import pandas as pd

from memstor.errors import UsageError
from memstor.measure import mlc
from memstor.measure.sweep import Point, PointResult, atomic_write, processed_path, read_json, run_sweep
from memstor.schema import MLC_COLUMNS, TRAFFIC_CODES

EXPERIMENT = "mlc-loaded-latency"
#: MLC's default inject delays (cycles), used when a profile gives none.
MLC_DELAYS = (0, 2, 8, 15, 50, 100, 200, 300, 400, 500, 700, 1000, 1300, 1700, 2500, 3500, 5000, 9000, 20000)
EXTRA_COLUMNS = ["host", "point", "status", "error", "note"]
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
    profile: str = ""                      # profile the values came from (for the record)


# -------------------------------------------------------------------------------------- validation


def _where(key: str) -> str:
    return f"{EXPERIMENT}: parameter {key}"


def _as_list(key: str, value) -> list:
    """A list parameter: a list/tuple as is, a scalar as a one-item list; UsageError when empty."""
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if not items or (len(items) == 1 and items[0] in (None, "")):
        raise UsageError(f"{_where(key)} is empty; give at least one value")
    return items


def _int(key: str, value, *, minimum: int = 0) -> int:
    """An integer >= minimum (ints, integral floats and digit strings are accepted)."""
    if isinstance(value, bool):
        raise UsageError(f"{_where(key)}={value!r}: expected a whole number >= {minimum}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise UsageError(f"{_where(key)}={value!r}: expected a whole number >= {minimum}") from None
    if not math.isfinite(number) or not number.is_integer() or number < minimum:
        raise UsageError(f"{_where(key)}={value!r}: expected a whole number >= {minimum}")
    return int(number)


def _traffic(values) -> tuple:
    """Validated MLC -W codes ("R", "W2" ... "W10"); "r", "w5", "5" are accepted as R, W5, W5."""
    codes = []
    for value in _as_list("traffic", values):
        code = str(value).strip().upper()
        if code.isdigit():
            code = f"W{code}"
        if code not in TRAFFIC_CODES:
            allowed = ", ".join(f"{c} ({TRAFFIC_CODES[c][0]})" for c in TRAFFIC_CODES)
            raise UsageError(f"{_where('traffic')}: unknown traffic code {value!r}; allowed: {allowed}")
        if code in codes:
            raise UsageError(f"{_where('traffic')}: {code} appears twice; list each code once")
        codes.append(code)
    return tuple(codes)


def _access_sizes(values) -> tuple:
    """Access sizes in bytes: positive multiples of the 64-byte cache line, each once."""
    sizes = []
    for value in _as_list("access_bytes", values):
        try:
            size = _int("access_bytes", value, minimum=1)
        except UsageError:
            size = None
        if size is None or size % 64:
            raise UsageError(
                f"{_where('access_bytes')}: {value!r} is not a positive multiple of 64 bytes (a cache line); "
                "use e.g. 64, 128, 256"
            )
        if size in sizes:
            raise UsageError(f"{_where('access_bytes')}: {size} appears twice; list each size once")
        sizes.append(size)
    return tuple(sizes)


def _delays(values) -> tuple:
    """Inject delays (delay-loop cycles): whole numbers >= 0, each once, kept in the given order."""
    delays = []
    for value in _as_list("delays", values):
        try:
            delay = _int("delays", value, minimum=0)
        except UsageError:
            raise UsageError(
                f"{_where('delays')}: {value!r} is not a whole number >= 0 (inject delay in cycles); "
                f"MLC's default list is {list(MLC_DELAYS)}"
            ) from None
        if delay in delays:
            raise UsageError(f"{_where('delays')}: {delay} appears twice; list each delay once")
        delays.append(delay)
    return tuple(delays)


def _seconds(value) -> float:
    """Seconds per delay point: a finite number > 0."""
    try:
        seconds = float(value) if not isinstance(value, bool) else float("nan")
    except (TypeError, ValueError):
        seconds = float("nan")
    if not math.isfinite(seconds) or seconds <= 0:
        raise UsageError(f"{_where('seconds_per_point')}={value!r}: expected a number of seconds > 0, e.g. 2")
    return seconds


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
    lat = _int("latency_cpu", latency_cpu, minimum=0)
    if lat not in cpus:
        raise UsageError(f"{_where('latency_cpu')}={lat}: not an available CPU; this machine offers CPUs {shown}")
    if load_cpus in (None, "", []):
        load = [c for c in cpus if c != lat]
        if not load:
            raise UsageError(
                f"{EXPERIMENT}: needs at least 2 CPUs (a latency thread and a load thread); only CPU {shown} is available"
            )
    else:
        try:
            load = mlc.parse_cpus(load_cpus)
        except ValueError:
            raise UsageError(
                f"{_where('load_cpus')}={load_cpus!r}: expected a CPU list like '1', '1-3,5' or '' (all but latency_cpu)"
            ) from None
        bad = [c for c in load if c not in cpus]
        if bad:
            raise UsageError(f"{_where('load_cpus')}: CPU {bad[0]} is not available; this machine offers CPUs {shown}")
        if lat in load:
            raise UsageError(
                f"{_where('load_cpus')}={load_cpus!r} includes latency_cpu {lat}; the latency thread needs its own CPU"
            )
    return lat, tuple(load)


def validate_params(params: dict) -> LoadedLatencyParams:
    """Check a profile section and return it typed; UsageError (one line) naming the bad parameter.

    Keys missing from ``params`` take the standard profile's values; unknown keys are refused.
    """
    if not isinstance(params, dict):
        raise UsageError(f"{EXPERIMENT}: parameters must be a mapping, got {type(params).__name__}")
    known = {f.name for f in fields(LoadedLatencyParams)}
    unknown = sorted(set(params) - known)
    if unknown:
        raise UsageError(f"{EXPERIMENT}: unknown parameter {unknown[0]!r}; known: {', '.join(sorted(known))}")
    d = LoadedLatencyParams()
    get = params.get
    tool = str(get("tool", d.tool) or "auto").strip().lower()
    if tool not in mlc.TOOLS:
        raise UsageError(f"{_where('tool')}={get('tool')!r}: choose one of {', '.join(mlc.TOOLS)}")
    lat, load = _cpus(get("latency_cpu", d.latency_cpu), get("load_cpus", ""))
    return LoadedLatencyParams(
        tool=tool,
        mlc_path=str(get("mlc_path", d.mlc_path) or ""),
        traffic=_traffic(get("traffic", list(d.traffic))),
        access_bytes=_access_sizes(get("access_bytes", list(d.access_bytes))),
        delays=_delays(get("delays", list(d.delays))),
        seconds_per_point=_seconds(get("seconds_per_point", d.seconds_per_point)),
        buffer_kib=_int("buffer_kib", get("buffer_kib", d.buffer_kib), minimum=1),
        latency_cpu=lat,
        load_cpus=load,
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


def check_for_tool(p: LoadedLatencyParams, tool: str) -> None:
    """Checks that depend on the chosen tool (MLC takes whole seconds) and on the free memory."""
    if tool == "mlc" and not float(p.seconds_per_point).is_integer():
        raise UsageError(
            f"{_where('seconds_per_point')}={p.seconds_per_point:g}: Intel MLC takes whole seconds (-t); "
            "use 1 or more, or tool=loadlat"
        )
    need = p.buffer_kib * 1024 * (2 * len(p.load_cpus) + 1)  # read + write buffer per load thread, + latency
    avail = _mem_available_bytes()
    if avail and need > MEMORY_FRACTION * avail:
        raise UsageError(
            f"{_where('buffer_kib')}={p.buffer_kib}: {len(p.load_cpus)} load threads would need "
            f"{need / 2**30:.1f} GiB, {avail / 2**30:.1f} GiB is available; lower buffer_kib or set load_cpus"
        )


# ------------------------------------------------------------------------------------------ points


def point_name(mode: str, traffic: str | None = None, access_bytes: int | None = None) -> str:
    """File-safe point names: ``idle-latency``, ``peak-injection-bandwidth``, ``loaded-latency_W5_l64``."""
    if mode == "loaded_latency":
        return f"loaded-latency_{traffic}_l{access_bytes}"
    return mode.replace("_", "-")


def build_points(p: LoadedLatencyParams, tool: str) -> list[Point]:
    """Idle latency, peak injection bandwidth, then one loaded-latency point per traffic x access size.

    Each loaded-latency point runs the whole delay list in one tool invocation (``-g`` delay file;
    ``-d`` when there is a single delay). Point params hold everything that changes the measurement,
    so a changed parameter reruns the point and an unchanged one is resumed from its raw file.
    """
    common = {
        "tool": tool,
        "buffer_kib": p.buffer_kib,
        "seconds": p.seconds_per_point,
    }
    specs = [
        {"mode": "idle_latency", **common, "latency_cpu": p.latency_cpu},
        {"mode": "peak_injection_bandwidth", **common, "load_cpus": list(p.load_cpus)},
    ]
    for size in p.access_bytes:
        for code in p.traffic:
            specs.append({
                "mode": "loaded_latency", **common, "latency_cpu": p.latency_cpu, "load_cpus": list(p.load_cpus),
                "traffic": code, "access_bytes": size, "delays": list(p.delays),
            })
    return [
        Point(point_name(s["mode"], s.get("traffic"), s.get("access_bytes")), s, mlc.estimate_s(s)) for s in specs
    ]


# ------------------------------------------------------------------------------------------- table


def _failed_row(result: PointResult, host: str) -> dict:
    """The row that marks a failed point: its coordinates, no numbers, the error."""
    params = result.point.params
    row = dict.fromkeys(MLC_COLUMNS)
    row.update(tool=params.get("tool"), test=params.get("mode"))
    if params.get("traffic"):
        row["traffic"], row["read_fraction"] = TRAFFIC_CODES[params["traffic"]]
    if params.get("access_bytes"):
        row["access_bytes"] = params["access_bytes"]
    note = (read_json(result.meta) or {}).get("note")  # e.g. the tool lacked root / the msr module
    row.update(host=host, point=result.point.name, status="failed", error=result.error, note=note)
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
        out.append(row)
    return out


def build_table(results: Sequence[PointResult], data_root: Path, host: str) -> pd.DataFrame:
    """The experiment's tidy table: schema columns first, then ``host, point, status, error, note``."""
    rows = [row for res in results for row in point_rows(res, Path(data_root), host)]
    df = pd.DataFrame(rows, columns=MLC_COLUMNS + EXTRA_COLUMNS)
    for col in ("access_bytes", "inject_delay", "run"):
        df[col] = pd.to_numeric(df[col]).astype("Int64")
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
    points = build_points(p, tool)
    runner = mlc.MlcRunner(tool, executable, points, requested=p.tool)
    data_root = Path(data_root)
    results = run_sweep(EXPERIMENT, points, runner, data_root, host, sysinfo=_sysinfo(), progress=progress)
    df = build_table(results, data_root, host)
    out = write_table(df, processed_path(data_root, host, EXPERIMENT))
    df.attrs.update(params=asdict(p), tool=tool, executable=executable, csv=str(out))
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
