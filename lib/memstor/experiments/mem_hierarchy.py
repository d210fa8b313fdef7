"""The memory hierarchy experiment (``mem-hierarchy``, issue 31): what lmbench's lat_mem_rd and multichase's
parallelN show, measured by loadlat (lib/loadlat/README.md, *Memory hierarchy*) on x86-64 and arm64.

Points (each one loadlat run, raw text ``<point>.txt``, its JSON sidecar kept in the point's ``.meta.json``
under ``loadlat_json``), ``repetitions`` times, repetitions outer:

- ``working_set`` with the random chain (the idle-latency chain: every line once, random order) for each of
  ``page_sizes`` (``4K``; ``2M``: loadlat ``-L``, transparent huge pages, left out with a note when the
  kernel has none), sizes from 4 KiB to ``max_size`` (``4x LLC``, a size such as ``64m``, or
  ``min(2x LLC, 64m)``; the LLC is the largest cache sysfs reports, 256 MiB when it reports none),
  ``sizes_per_octave`` per doubling, ``seconds_per_size`` per size (half for the mean, half for the batch
  percentiles) or ``accesses_per_size`` loads per pass when > 0, batches of ``batch_accesses`` loads;
- the same with the sequential chain (``stride_bytes`` > 0: a pointer every ``stride_bytes`` bytes, in
  address order; the hardware prefetchers follow it) on the first of ``page_sizes``;
- ``mlp``: ``chains`` independent chains in one thread over a ``mlp_buffer`` buffer, ``mlp_seconds`` each,
  and with ``mlp_all_cores`` the same on every allowed CPU at once; on 2 MiB pages when ``page_sizes`` has
  them (no page walks in the way), else 4 KiB.

Result: ``<data>/processed/<host>/mem-hierarchy.csv`` with the mlc schema's columns (``test`` = working_set
or mlp, ``tool`` = loadlat, ``latency_ns``, ``bandwidth_MBps``, ``access_bytes`` = the line each load fetches),
then :data:`HIERARCHY_COLUMNS` (memstor.parse.loadlat_hierarchy: ``buffer_bytes``, ``pages``, ``pattern``,
``chains``, ``threads``, ``lat_p50_ns``/``lat_p90_ns``/``lat_p99_ns`` over means of batches of
``batch_accesses`` loads, ``clocks``, ``batch_accesses``, ``llc_bytes``), then ``cpu_share``,
``huge_fraction`` and :data:`BOOK_COLUMNS` (``host, point, status, error, repetition``). The analysis is
memstor.analysis.hierarchy (cache levels against the kernel's sizes, TLB cost, MLP and Little's law).
Units: bytes, ns, MB/s = 10^6 bytes/s.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import pandas as pd

from memstor.core.errors import MemstorError, NotOnThisMachine, PointFailed, UsageError
from memstor.core.files import read_json
from memstor.core.schema import MLC_COLUMNS, missing
from memstor.core.units import format_size
from memstor.core.validate import Section
from memstor.experiments._mlc_params import (
    available_cpus,
    latency_cpu_of,
    min_buffer_kib,
)
from memstor.experiments._mlc_rows import write_table
from memstor.measure import loadlat, mlc
from memstor.measure.shape import cpu_shape, usable_memory_bytes
from memstor.measure.sweep import Point, PointResult, SweepSession, processed_path, run_sweep
from memstor.measure.sysinfo import cache_info, collect
from memstor.parse.loadlat_hierarchy import (
    DETAIL_COLUMNS,
    HIERARCHY_COLUMNS,
    interrupted,
    mode_of_text,
    parse_hierarchy,
    parse_text,
    planned,
)

EXPERIMENT = "mem-hierarchy"
NOTEBOOK = "15-mem-hierarchy"
KIND = "mlc"
#: The rows' bookkeeping, after the mlc schema, HIERARCHY_COLUMNS and DETAIL_COLUMNS.
BOOK_COLUMNS = ["host", "point", "status", "error", "repetition"]
COLUMNS = MLC_COLUMNS + HIERARCHY_COLUMNS + DETAIL_COLUMNS + BOOK_COLUMNS
PAGE_SIZES = ("4K", "2M")
#: The largest working set when sysfs reports no cache size (bytes; loadlat's own default then).
NO_LLC_MAX = 256 * 2**20
#: Share of the available memory the buffers may take.
MEMORY_FRACTION = 0.8
#: Extra seconds per loadlat run (calibration, buffers, chains) in the time estimates.
STARTUP_S = 2.0

V = Section(EXPERIMENT)


def _llc_factor(part: str) -> float | None:
    """k of ``<k>x LLC`` (spaces and case free), None for anything else."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)xllc", part.replace(" ", "").lower())
    return float(m.group(1)) if m and float(m.group(1)) > 0 else None


@dataclass(frozen=True)
class HierarchyParams:
    """Validated parameters of the experiment (the ``mem-hierarchy`` section of a profile)."""

    sizes_per_octave: int = 4            # working-set sizes per doubling (4 K, 4.76 K, 5.66 K, 6.73 K, 8 K ...)
    max_size: str = "4x LLC"             # largest working set: "<k>x LLC", a size (64m), or min(2x LLC, 64m)
    page_sizes: tuple = PAGE_SIZES       # 4K and/or 2M (loadlat -L, transparent huge pages)
    stride_bytes: int = 64               # the sequential variant's stride (0: none)
    seconds_per_size: float = 0.4        # per working-set size: half for the mean, half for the percentiles
    accesses_per_size: int = 0           # > 0: this many loads per size and pass instead of seconds
    batch_accesses: int = 256            # dependent loads per timed batch (the percentiles are over batch means)
    chains: tuple = (1, 2, 4, 8, 16, 32)  # MLP: independent chains in one thread
    mlp_buffer: str = "1g"               # MLP buffer per thread (far beyond the LLC)
    mlp_seconds: float = 1.0             # per chain count
    mlp_all_cores: bool = True           # each chain count also on every allowed CPU at once
    latency_cpu: int = 0                 # the measuring CPU
    repetitions: int = 1                 # runs of every point (separate raw files)
    profile: str = ""


# ------------------------------------------------------------------------------------- validation


def _max_size(value) -> str:
    """``4x LLC``, a size (``64m``), or ``min(A, B)`` of two of them; normalised text."""
    want = "use '<k>x LLC' (e.g. 4x LLC), a size such as 64m, or min(2x LLC, 64m)"
    text = str(value).strip().lower()
    parts = [text]
    m = re.fullmatch(r"min\((.+),(.+)\)", text)
    if m:
        parts = [m.group(1).strip(), m.group(2).strip()]
    out = []
    for part in parts:
        factor = _llc_factor(part)
        if factor is not None:
            out.append(f"{factor:g}x LLC")
        else:
            try:
                n = V.size("max_size", part)[1]
            except UsageError:
                raise V.error("max_size", value, want) from None
            if n < 4096:
                raise V.error("max_size", value, "the largest working set must be at least 4k")
            out.append(format_size(n))
    return out[0] if len(out) == 1 else f"min({out[0]}, {out[1]})"


def _pages(values) -> tuple:
    out = []
    for v in V.items("page_sizes", values):
        text = str(v).strip().upper().replace("IB", "").replace("B", "")
        if text not in PAGE_SIZES:
            raise V.error("page_sizes", v, "use 4K and/or 2M, e.g. [4K, 2M]")
        out.append(text)
    return V.unique("page_sizes", out)


def validate(params: dict) -> HierarchyParams:
    """Check a profile section and return it typed; UsageError (one line) naming the bad parameter. Keys missing
    from ``params`` take the defaults above; unknown keys are refused."""
    V.keys(params, [f.name for f in fields(HierarchyParams) if f.name != "profile"], required=False)
    d, get = HierarchyParams(), params.get
    stride = V.integer("stride_bytes", get("stride_bytes", d.stride_bytes), 0, 1 << 20)
    if stride and (stride < 8 or stride % 8):
        raise V.error("stride_bytes", stride, "use 0 (no sequential variant) or a multiple of 8 bytes, e.g. 64")
    accesses = V.integer("accesses_per_size", get("accesses_per_size", d.accesses_per_size), 0)
    if 0 < accesses < 1024:
        raise V.error("accesses_per_size", accesses, "use 0 (seconds_per_size) or at least 1024 loads")
    chains = V.unique("chains", [V.integer("chains", c, 1, 64) for c in V.items("chains", get("chains", list(d.chains)))])
    cpu = latency_cpu_of(get("latency_cpu", "auto"), cpu_shape())
    buf = V.size("mlp_buffer", get("mlp_buffer", d.mlp_buffer))
    if buf[1] < 2**20:
        raise V.error("mlp_buffer", get("mlp_buffer"), "use at least 1m (far beyond the last-level cache: 1g)")
    return HierarchyParams(
        sizes_per_octave=V.integer("sizes_per_octave", get("sizes_per_octave", d.sizes_per_octave), 1, 64),
        max_size=_max_size(get("max_size", d.max_size)),
        page_sizes=_pages(get("page_sizes", list(d.page_sizes))),
        stride_bytes=stride,
        seconds_per_size=V.seconds("seconds_per_size", get("seconds_per_size", d.seconds_per_size)),
        accesses_per_size=accesses,
        batch_accesses=V.integer("batch_accesses", get("batch_accesses", d.batch_accesses), 16, 65536),
        chains=tuple(sorted(chains)),
        mlp_buffer=buf[0],
        mlp_seconds=V.seconds("mlp_seconds", get("mlp_seconds", d.mlp_seconds)),
        mlp_all_cores=V.boolean("mlp_all_cores", get("mlp_all_cores", d.mlp_all_cores)),
        latency_cpu=cpu,
        repetitions=V.integer("repetitions", get("repetitions", d.repetitions), 1, 100),
        profile=str(get("profile", "") or ""),
    )


def llc_bytes(caches: dict | None) -> int | None:
    """The last-level cache of sysinfo's ``caches`` block (the largest of L3, L2, L1d; None when none)."""
    for key in ("L3_bytes", "L2_bytes", "L1d_bytes"):
        if caches and not missing(caches.get(key)):
            return int(caches[key])
    return None


def resolve_max(max_size: str, llc: int | None) -> tuple[int, str]:
    """(largest working set in bytes, a whole number of KiB >= 4 KiB; how it was chosen) of a validated
    ``max_size`` and the LLC (None: unknown, :data:`NO_LLC_MAX` stands in for ``<k>x LLC``)."""
    m = re.fullmatch(r"min\((.+), (.+)\)", max_size)
    parts = [m.group(1), m.group(2)] if m else [max_size]
    values = []
    for part in parts:
        factor = _llc_factor(part)
        if factor is not None:
            values.append(int(factor * llc) if llc else NO_LLC_MAX)
        else:
            values.append(int(V.size("max_size", part)[1]))
    n = max(4096, min(values) // 1024 * 1024)
    how = max_size + (f" (LLC {format_size(llc)})" if llc else " (no LLC size in sysfs: 256m stands in for it)")
    return n, how


# ------------------------------------------------------------------------------------- points


def _seconds_text(seconds: float) -> str:
    """``2s``, ``200ms`` (no dot in point names)."""
    seconds = float(seconds)
    return f"{int(seconds)}s" if seconds.is_integer() else f"{seconds * 1000:g}ms".replace(".", "p")


def point_name(params: dict) -> str:
    """File-safe point name encoding every setting, then 8 hex digits of the SHA-256 of all params, e.g.
    ``working-set_random_2M_max128m_o4_t400ms_c0_1f0c2a9b`` or ``mlp_2M_b1g_n6_all_t1s_c0_ab12cd34``."""
    mode = params["mode"]
    if mode == "working_set":
        pattern = f"seq{params['stride']}" if params.get("stride") else "random"
        timing = f"a{params['accesses']}" if params.get("accesses") else f"t{_seconds_text(params['seconds'])}"
        parts = ["working-set", pattern, params["pages"], f"max{format_size(params['max_bytes'])}",
                 f"o{params['per_octave']}", timing]
    else:
        parts = ["mlp", params["pages"], f"b{format_size(params['buffer_bytes'])}", f"n{len(params['chains'])}",
                 "all" if params["all_cores"] else "one", f"t{_seconds_text(params['seconds'])}"]
    parts.append(f"c{params['latency_cpu']}")
    if int(params.get("repetition", 1)) > 1:
        parts.append(f"r{int(params['repetition'])}")
    digest = hashlib.sha256(json.dumps(params, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    return "_".join(parts) + f"_{digest[:8]}"


def n_sizes(max_bytes: int, per_octave: int) -> int:
    """How many working-set sizes loadlat measures from 4 KiB to ``max_bytes`` (about)."""
    return int(max(0.0, math.log2(max(max_bytes, 4096) / 4096)) * per_octave) + 2


def estimate_s(params: dict) -> float:
    """Expected seconds of a point (the progress bar's ETA)."""
    if params["mode"] == "working_set":
        per = params["seconds"] if not params.get("accesses") else params["accesses"] * 2e-7
        return n_sizes(params["max_bytes"], params["per_octave"]) * per * 1.2 + params["max_bytes"] / 2e8 + STARTUP_S
    runs = len(params["chains"]) * (2 if params["all_cores"] else 1)
    return runs * params["seconds"] * 1.3 + params["buffer_bytes"] / 1e8 + STARTUP_S


def build_points(p: HierarchyParams, max_bytes: int, huge: bool) -> list[Point]:
    """The sweep's points (module docstring): working-set random per page size, sequential, MLP; repetitions
    outer. ``huge``: 2 MiB pages usable (else the 2M working-set point is left out, MLP runs on 4K)."""
    pages = [pg for pg in p.page_sizes if pg == "4K" or huge]
    ws = {"mode": "working_set", "tool": "loadlat", "max_bytes": max_bytes, "per_octave": p.sizes_per_octave,
          "seconds": float(p.seconds_per_size), "batch": p.batch_accesses, "latency_cpu": p.latency_cpu}
    if p.accesses_per_size:
        ws["accesses"] = p.accesses_per_size
    specs = [dict(ws, pages=pg) for pg in pages]
    if p.stride_bytes and pages:
        specs.append(dict(ws, pages=pages[0], stride=p.stride_bytes))
    mlp_pages = "2M" if "2M" in pages else "4K"
    specs.append({"mode": "mlp", "tool": "loadlat", "pages": mlp_pages, "buffer_bytes": V.size("mlp_buffer", p.mlp_buffer)[1],
                  "chains": list(p.chains), "all_cores": p.mlp_all_cores, "seconds": float(p.mlp_seconds),
                  "latency_cpu": p.latency_cpu})
    points = []
    for rep in range(1, p.repetitions + 1):
        for spec in specs:
            params = dict(spec, repetition=rep) if rep > 1 else spec
            points.append(Point(point_name(params), params, estimate_s(params)))
    return points


def command_args(params: dict) -> list[str]:
    """loadlat's options for a point's params (without ``--json``)."""
    cpu, huge = f"-c{int(params['latency_cpu'])}", ["-L"] if params["pages"] == "2M" else []
    if params["mode"] == "working_set":
        args = ["--working_set", f"--max-size={int(params['max_bytes']) // 1024}", f"--per-octave={params['per_octave']}",
                cpu, f"--batch={params['batch']}", *huge]
        args.append(f"--accesses={params['accesses']}" if params.get("accesses") else
                    f"-t{mlc.format_seconds(params['seconds'])}")
        if params.get("stride"):
            args.append(f"--stride={params['stride']}")
        return args
    args = ["--mlp", f"-b{int(params['buffer_bytes']) // 1024}", cpu, f"-t{mlc.format_seconds(params['seconds'])}",
            "--chains=" + ",".join(str(c) for c in params["chains"]), *huge]
    return args + (["--mlp-all-cores"] if params["all_cores"] else [])


# ------------------------------------------------------------------------------------- runner


def check_text(text: str, params: dict) -> str | None:
    """None when a point's text output holds its complete measurement, else why not."""
    mode = mode_of_text(text)
    if mode != params["mode"]:
        return f"no loadlat --{params['mode']} table in the output"
    if interrupted(text):
        return "the run was interrupted (its last sizes are missing)"
    rows, want = parse_text(text, "output").rows, planned(text)
    if not rows or want is None or len(rows) != want:
        return f"{len(rows)} of {want if want is not None else '?'} rows in the output"
    return None


class HierarchyRunner:
    """memstor.measure.sweep.Runner for loadlat's ``--working_set`` and ``--mlp``: one run per point, its text
    output the raw file (``.txt``), its JSON sidecar in the point's meta (``loadlat_json``)."""

    suffix = ".txt"

    def __init__(self, executable: str, points):
        self.executable = str(executable)
        self.params = {p.name: dict(p.params) for p in points}

    def command(self, params: dict) -> list[str]:
        """The full argv of a point (without ``--json``)."""
        return [self.executable, *command_args(params)]

    def run(self, point: Point, out_tmp: Path) -> dict:
        """Run loadlat for ``point``, stdout to ``out_tmp``; PointFailed (one line) when it fails."""
        params = dict(point.params)
        timeout = estimate_s(params) * 4 + 120
        with tempfile.TemporaryDirectory(prefix="memstor-hier-") as tmp:
            json_file = Path(tmp) / "loadlat.json"
            argv = [*self.command(params), f"--json={json_file}"]
            meta: dict[str, Any] = {"command": argv, "tool": "loadlat", "executable": self.executable,
                                    "thp_enabled": mlc.thp_mode()}
            try:
                with open(out_tmp, "wb") as out:
                    proc = subprocess.run(argv, stdout=out, stderr=subprocess.PIPE, timeout=timeout,
                                          stdin=subprocess.DEVNULL, check=False)
            except (FileNotFoundError, PermissionError) as err:
                raise _failed(point, f"loadlat cannot run ({err.strerror}): run `make loadlat`", meta) from None
            except subprocess.TimeoutExpired:
                raise _failed(point, f"loadlat did not finish within {timeout:.0f} s; killed", meta) from None
            if json_file.is_file():
                try:
                    meta["loadlat_json"] = json.loads(json_file.read_text())
                except ValueError:
                    meta["loadlat_json"] = None
        text = Path(out_tmp).read_text(encoding="utf-8", errors="replace")
        stderr = proc.stderr.decode("utf-8", errors="replace")
        meta.update(tool_version=mlc.tool_version(text), returncode=proc.returncode, stderr=stderr[-4000:] or None)
        if proc.returncode != 0:
            lines = [ln for ln in stderr.splitlines() if ln.startswith("loadlat:") and "warning" not in ln]
            raise _failed(point, f"loadlat exited with status {proc.returncode}: "
                                 f"{(lines or stderr.splitlines() or ['no message'])[-1]}", meta)
        problem = check_text(text, params)
        if problem:
            raise _failed(point, problem, meta)
        return meta

    def complete(self, raw: Path) -> bool:
        """True when the raw text holds every row its run planned."""
        try:
            text = Path(raw).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False
        name = Path(raw).name.split(".tmp", 1)[0].removesuffix(self.suffix)
        params = self.params.get(name) or {"mode": mode_of_text(text) or "?"}
        return check_text(text, params) is None


def _failed(point: Point, reason: str, meta: dict) -> PointFailed:
    err = PointFailed(f"point {point.name}: {reason}".replace("\n", " "))
    err.meta = meta  # recorded in the failed point's meta (memstor.measure.sweep)
    return err


# ------------------------------------------------------------------------------------- rows, table


def point_rows(result: PointResult, data_root: Path, host: str) -> list[dict]:
    """Tidy rows (:data:`COLUMNS`) of one point: its measurements (JSON sidecar, else the text), or one row
    marking it failed."""
    params = result.point.params
    book = {"host": host, "point": result.point.name, "repetition": int(params.get("repetition", 1))}
    if result.status == "failed" or result.raw is None:
        row = dict.fromkeys(COLUMNS)
        row.update(tool="loadlat", test=params.get("mode"), status="failed", error=result.error, **book)
        return [row]
    meta = read_json(result.meta) or {}
    try:
        source = str(Path(result.raw).relative_to(data_root))
    except ValueError:
        source = str(result.raw)
    text = Path(result.raw).read_text(encoding="utf-8", errors="replace")
    parsed = parse_hierarchy(text, source, meta.get("loadlat_json"))
    return [{**{c: r.get(c) for c in COLUMNS}, "status": "done", "error": None, **book} for r in parsed.rows]


def build_table(results: list[PointResult], data_root: Path, host: str) -> pd.DataFrame:
    """The experiment's table: one row per size (working set) or chain count x threads (mlp) x repetition."""
    rows = [row for res in results for row in point_rows(res, Path(data_root), host)]
    df = pd.DataFrame(rows, columns=COLUMNS)
    for col in ("run", "access_bytes", "buffer_bytes", "chains", "threads", "batch_accesses", "llc_bytes",
                "repetition"):
        df[col] = pd.to_numeric(df[col]).astype("Int64")
    for col in ("latency_ns", "bandwidth_MBps", "lat_p50_ns", "lat_p90_ns", "lat_p99_ns", "clocks", "cpu_share",
                "huge_fraction"):
        df[col] = pd.to_numeric(df[col]).astype("float64")
    return df


def kernel_caches(data_root: Path, host: str) -> dict:
    """The caches of the machine that measured ``host`` (sysinfo.json's ``caches`` beside the table), else this
    machine's (memstor.measure.sysinfo.cache_info): {L1d_bytes, L1i_bytes, L2_bytes, L3_bytes} (None = not
    reported)."""
    stored = read_json(Path(data_root) / "processed" / host / "sysinfo.json") or {}
    caches = stored.get("caches") if isinstance(stored, dict) else None
    return dict(caches) if isinstance(caches, dict) else cache_info([])


def _sysinfo() -> dict | None:
    """The machine description for the sweep manifest, or None when it fails (run_experiment stores it anyway)."""
    try:
        return collect(None)
    except Exception:  # the manifest can do without it
        return None


def _say(line: str) -> None:
    print(f"{EXPERIMENT}: {line}", file=sys.stderr, flush=True)


def _fit_memory(p: HierarchyParams, max_bytes: int) -> HierarchyParams:
    """The MLP buffers scaled to MEMORY_FRACTION of the usable memory (one point runs at a time; every CPU's
    thread has its own buffer when mlp_all_cores), said on stderr, not below memstor's smallest DRAM buffer
    (NotOnThisMachine below it); a working set beyond it is refused naming max_size."""
    avail = usable_memory_bytes()
    if avail and max_bytes * 1.07 > MEMORY_FRACTION * avail:
        raise V.error("max_size", p.max_size, f"{max_bytes / 2**30:.1f} GiB is more than the "
                      f"{avail / 2**30:.1f} GiB usable here; give a smaller max_size")
    threads = len(available_cpus()) if p.mlp_all_cores else 1
    per = V.size("mlp_buffer", p.mlp_buffer)[1]
    if not avail or per * threads * 1.07 <= MEMORY_FRACTION * avail:
        return p
    fit_mib = int(MEMORY_FRACTION * avail / threads / 1.07) // 2**20
    floor_mib = min_buffer_kib() // 1024
    if fit_mib < floor_mib:
        raise NotOnThisMachine(str(V.error(
            "mlp_buffer", p.mlp_buffer, f"{threads} thread(s) need at least {floor_mib} MiB each "
            f"({threads * floor_mib / 1024:.1f} GiB), {avail / 2**30:.1f} GiB is usable here; set mlp_all_cores: "
            "false")))
    _say(f"MLP buffers scaled to the memory: {fit_mib} MiB per thread instead of {per // 2**20} MiB "
         f"({threads} threads, {avail / 2**30:.1f} GiB usable)")
    return dataclasses.replace(p, mlp_buffer=f"{fit_mib}m")


def run(params: dict, *, data_root: Path, target_dir: Path | None = None, host: str, progress: bool = True,
        session: SweepSession | None = None) -> pd.DataFrame:
    """Run or resume the sweep; write and return ``processed/<host>/mem-hierarchy.csv``. Parameters are checked
    and loadlat found before anything runs; ``target_dir`` is unused (a memory experiment)."""
    del target_dir
    p = validate(params)
    try:
        exe = str(loadlat.binary())
    except MemstorError as err:
        raise UsageError(str(err)) from None
    data_root = Path(data_root)
    caches = kernel_caches(data_root, host)
    max_bytes, how = resolve_max(p.max_size, llc_bytes(cache_info([])))
    p = _fit_memory(p, max_bytes)
    huge, why = mlc.huge_pages_available("loadlat", max_bytes) if "2M" in p.page_sizes else (False, "")
    if "2M" in p.page_sizes and not huge:
        _say(f"2 MiB pages not available ({why}): the 2M working-set curve is left out, MLP runs on 4 KiB pages")
    points = build_points(p, max_bytes, huge)
    results = run_sweep(EXPERIMENT, points, HierarchyRunner(exe, points), data_root, host, progress=progress,
                        sysinfo=_sysinfo, session=session)
    df = build_table(results, data_root, host)
    out = write_table(df, processed_path(data_root, host, EXPERIMENT))
    df.attrs.update(params=asdict(p), max_bytes=max_bytes, max_size=how, kernel_caches=caches, csv=str(out),
                    huge_pages=huge, huge_pages_why=why)
    failed = [r for r in results if r.status == "failed"]
    if failed:
        _say(f"{len(failed)} of {len(results)} points failed (status=failed in {out}); first: {failed[0].error}")
    return df
