"""loadlat's JSON sidecar (``--json=FILE``, stored as ``loadlat_json`` in a point's ``.meta.json``) -> the
quality figures of each measured point. Pure: a parsed JSON document in, plain dicts out.

Per point (lib/loadlat/README.md): ``windows`` (``latency_ns``, ``bandwidth_MBps`` and ``cpu_share_min`` of
each sub-window of the measured window), ``threads`` (each measuring thread's ``cpu_share`` and
``steal_pct``; load threads also ``arrival_cv``), ``steal_pct`` (max over the measuring CPUs, % of the
window), ``arrival_cv`` (median over load threads) and, in the header, ``pacing`` and
``windows_per_point``. loadlat before v0.3 wrote none of these: the figures are then None.

:func:`point_figures` reduces each point to the numbers the quality gate
(:func:`memstor.measure.loadlat.gate_reasons`) and the tidy table use, units in the names:

- ``bandwidth_spread_pct``, ``latency_spread_pct``: (max - min) / mean of the sub-windows' values, in %;
  NaN when a sub-window lost its value (a thread was descheduled across all of it), None when the point
  has no sub-windows (older loadlat) or no such figure (idle latency has no bandwidth, peak bandwidth no
  latency);
- ``cpu_share_min_pct``: the smallest CPU share (CPU time / window time) of the measuring threads, in %;
- ``steal_pct``: steal time of the busiest measuring CPU, % of the window (None when /proc/stat was not
  readable);
- ``arrival_cv``: coefficient of variation of the time between request-group starts (median over load
  threads; interruptions > 20 x the median interval left out, see the README);
- ``windows``: the number of sub-windows; ``pacing``: ``fixed`` or ``exp``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

#: loadlat's mode names -> the ``test`` of memstor's rows (the same words).
MODES = ("idle_latency", "loaded_latency", "peak_injection_bandwidth")


def _num(v) -> float | None:
    """A finite float, or None (JSON null, missing, not a number)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    v = float(v)
    return v if math.isfinite(v) else None


def spread_pct(values: Sequence) -> float | None:
    """(max - min) / mean of ``values`` in %: None for no values; NaN when any value is missing (a lost
    sub-window) or the mean is not positive."""
    if not values:
        return None
    nums = [_num(v) for v in values]
    if any(v is None for v in nums):
        return math.nan
    mean = sum(nums) / len(nums)
    if not mean > 0:
        return math.nan
    return 100.0 * (max(nums) - min(nums)) / mean


def point_figures(doc: dict, point: dict) -> dict:
    """The quality figures of one ``points[]`` entry of a loadlat JSON document (see the module docstring)."""
    mode = doc.get("mode")
    windows = point.get("windows") if isinstance(point.get("windows"), list) else None
    out = {"pacing": doc.get("pacing") if doc.get("pacing") in ("fixed", "exp") else None,
           "windows": len(windows) if windows is not None else None,
           "bandwidth_spread_pct": None, "latency_spread_pct": None, "cpu_share_min_pct": None,
           "steal_pct": _num(point.get("steal_pct")), "arrival_cv": _num(point.get("arrival_cv"))}
    if windows:
        if mode != "idle_latency":
            out["bandwidth_spread_pct"] = spread_pct([w.get("bandwidth_MBps") for w in windows])
        if mode != "peak_injection_bandwidth" and doc.get("latency_cpu") is not None:
            out["latency_spread_pct"] = spread_pct([w.get("latency_ns") for w in windows])
    threads = point.get("threads") if isinstance(point.get("threads"), list) else []
    shares = [_num(t.get("cpu_share")) for t in threads if isinstance(t, dict)]
    if not shares:  # loadlat < 0.3: the two summary shares
        shares = [_num(point.get("latency_thread_cpu_share")), _num(point.get("load_threads_cpu_share_min"))]
    shares = [s for s in shares if s is not None]
    if shares:
        out["cpu_share_min_pct"] = 100.0 * min(shares)
    return out


def point_key(test, traffic_code, delay) -> tuple:
    """How rows and sidecar points are matched: (test, traffic -W code or None, inject delay or None).
    Idle latency has one point (no traffic, no delay); peak bandwidth one per traffic; loaded latency one
    per delay."""
    if test == "idle_latency":
        return (test, None, None)
    if test == "peak_injection_bandwidth":
        return (test, traffic_code, None)
    return (test, None, int(delay) if delay is not None else None)


def figures_by_point(doc: dict | None) -> dict:
    """{:func:`point_key`: :func:`point_figures`} of every measured (status ok) point of a sidecar; {} for
    no document."""
    if not isinstance(doc, dict) or doc.get("mode") not in MODES:
        return {}
    out = {}
    for p in doc.get("points") or []:
        if not isinstance(p, dict) or p.get("status") != "ok":
            continue
        out[point_key(doc["mode"], p.get("traffic"), p.get("delay"))] = point_figures(doc, p)
    return out
