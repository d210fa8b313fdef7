"""mlc-loaded-latency, its tidy rows: each point's parsed measurements (or one row marking it failed) with the
settings, repetition, quality-gate and own-interval columns, the experiment's table and its CSV
(see memstor.experiments.mlc_loaded_latency for the columns).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from memstor.analysis.memory_curves import sub_window_ci_columns
from memstor.core.files import atomic_write, read_json
from memstor.core.schema import MLC_COLUMNS, traffic_code_of_label, traffic_info
from memstor.experiments._mlc_gate import choose_attempts
from memstor.experiments._mlc_params import PACINGS
from memstor.experiments._mlc_points import config_name
from memstor.measure import mlc
from memstor.measure.sweep import PointResult
from memstor.parse.loadlat_json import figures_by_point, point_key
from memstor.parse.mlc import parse_mlc

#: Settings of each row (see memstor.experiments.mlc_loaded_latency); empty when unknown.
SETTING_COLUMNS = ["load_threads", "buffer_kib", "random", "load_random", "huge_pages", "pages", "pacing"]
#: Repetitions, re-measurements and the quality gate of each row (see memstor.experiments.mlc_loaded_latency).
GATE_COLUMNS = ["config", "repetition", "attempt", "attempts", "gate", "gate_detail", "windows",
                "bandwidth_spread_pct", "latency_spread_pct", "cpu_share_min_pct", "steal_pct", "arrival_cv"]
#: Each row's own 95 % interval from its sub-windows (memstor.analysis.memory_curves.sub_window_ci_columns; see
#: memstor.experiments.mlc_loaded_latency).
CI_COLUMNS = ["latency_ns_ci_low", "latency_ns_ci_high", "bandwidth_MBps_ci_low", "bandwidth_MBps_ci_high",
              "ci_method", "ci_note"]
EXTRA_COLUMNS = ["host", "point", "status", "error", "note", *GATE_COLUMNS, *CI_COLUMNS, *SETTING_COLUMNS]


# ------------------------------------------------------------------------------------------- table


def settings(params: dict, meta: dict | None = None, text: str = "", detail: str | None = None) -> dict:
    """The :data:`SETTING_COLUMNS` of a point's rows: what was asked (``params``), corrected by what the
    tool reports (loadlat's JSON sidecar in ``meta``, its ``# huge pages`` header in ``text``; MLC's
    "random access" note in the row's ``detail``). Unknown values are None."""
    meta = meta or {}
    mode, tool = params.get("mode"), params.get("tool")
    sidecar = meta.get("loadlat_json")
    if not isinstance(sidecar, dict):
        sidecar = {}
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
        row["traffic"], row["read_fraction"] = traffic_info(params["traffic"]) or (params["traffic"], None)
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
    figures = figures_by_point(meta.get("loadlat_json"))
    params = result.point.params
    out = []
    for r in rows:
        row = {c: r.get(c) for c in MLC_COLUMNS}
        row.update(host=host, point=result.point.name, status="done", error=None, note=meta.get("note"))
        row.update(settings(params, meta, text, r.get("detail")))
        row.update(_identity(params))
        code = traffic_code_of_label(r.get("traffic")) if r.get("traffic") else None
        fig = figures.get(point_key(r.get("test"), code, r.get("inject_delay")), {})
        for col in ("windows", "bandwidth_spread_pct", "latency_spread_pct", "cpu_share_min_pct", "steal_pct",
                    "arrival_cv"):
            row[col] = fig.get(col)
        row.update(sub_window_ci_columns(fig.get("series"), params.get("tool")))
        out.append(row)
    return out


#: Traffic labels (table) -> MLC -W codes (loadlat's JSON); looked up with a row's traffic, which may be None.


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
