"""ioarrive's JSON (lib/ioarrive/README.md, *JSON*) -> tidy rows, like fio's. Pure: text or a parsed document
in, lists of dicts out.

ioarrive is memstor's arrival-driven (open-loop) I/O generator: each I/O has three times, its intended
arrival, its submission and its completion; response = completion - intended arrival, service = completion -
submission, lag = submission - intended arrival. The tool checks itself (achieved vs offered rate, the
arrivals it issued against the process asked for, lag, overload) and says ``open_loop: false`` with the
reasons when a check fails.

- :func:`parse_ioarrive`: one row per direction (:data:`COLUMNS`), times in µs (``_us``), rates in IOPS
  (``_iops``); ``checks`` is ``ok`` or the failed checks ``name[/source]`` joined by ``;`` (run-level ones,
  such as ``not_overloaded``, on every direction's row) and ``reasons`` their sentences;
- :func:`bin_rows`: the log-linear histograms as tidy bins (``kind`` response | service | lag,
  ``latency_ns`` = the bin's lower bound, ``latency_high_ns`` its exclusive upper bound, ``count``);
- :func:`series_rows`: the per-second series (IOPS, mean and p99 response of the I/Os completed that second);
- :func:`check_rows`: every check with its value and bounds.
A number the document does not hold (a percentile of nothing) is None, never 0.
"""

from __future__ import annotations

import json
import math
from typing import Any

from memstor.core.errors import ParseError

TOOL = "ioarrive"
#: The machine's pauses measured before the run with no I/O (``--pause-probe``): pauses (gaps >= 50 µs between
#: a spinning thread's clock reads) per CPU-second, the longest (µs), and the share of the probe's CPU time lost.
PAUSE_COLUMNS = ("pause_per_cpu_s", "pause_max_us", "paused_pct")
#: The run's own submit calls: the summed time of those that took >= 1 ms (blocked in the kernel: the block
#: layer's request queue full, or the CPU taken), the longest (µs), the most I/Os in flight after one, and the
#: request queue of the disk under the target (nr_requests; a submit call blocks when it is full).
SUBMIT_COLUMNS = ("submit_blocked_s", "submit_call_max_us", "peak_outstanding", "queue_requests")
#: The tidy row of one direction of one run.
COLUMNS = (
    "source", "tool", "tool_version", "engine", "target_kind", "virtual_time", "direction", "process", "bs_bytes",
    "pattern", "runtime_s", "offered_iops", "issued_iops", "achieved_iops", "achieved_pct",
    "resp_mean_us", "resp_p50_us", "resp_p99_us", "resp_p99_9_us",
    "service_mean_us", "service_p50_us", "service_p99_us", "service_p99_9_us",
    "lag_mean_us", "lag_p50_us", "lag_p99_us", "lag_p99_9_us", "lag_bound_us",
    "completed", "errors", "overloaded", "generator_bound", "open_loop", "checks", "reasons",
    "cpu_pct", "submitter_cpu_pct", "wake_delay_p99_us", *PAUSE_COLUMNS, *SUBMIT_COLUMNS, "sim_servers", "sim_service_mean_us", "sim_service_cs2",
)
BIN_COLUMNS = ("source", "direction", "kind", "latency_ns", "latency_high_ns", "count")
SERIES_COLUMNS = ("source", "direction", "t_s", "iops", "resp_mean_us", "resp_p99_us")
CHECK_COLUMNS = ("source", "name", "direction", "check_source", "passed", "value", "low", "high", "detail")
_STATS = (("resp", "response_ns"), ("service", "service_ns"), ("lag", "lag_ns"))
_PCTS = (("mean", "mean"), ("p50", "p50"), ("p99", "p99"), ("p99_9", "p99_9"))


def _num(v: Any) -> float | None:
    """A finite float, or None (JSON null, missing, not a number)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    v = float(v)
    return v if math.isfinite(v) else None


def _us(v: Any) -> float | None:
    n = _num(v)
    return None if n is None else n / 1e3


def load(doc: dict | str | bytes) -> dict:
    """The document: a parsed dict is checked, text is decoded; ParseError when it is not ioarrive's JSON."""
    if isinstance(doc, (str, bytes)):
        try:
            doc = json.loads(doc)
        except ValueError as e:
            raise ParseError(f"not JSON: {e}") from None
    if not isinstance(doc, dict) or doc.get("tool") != TOOL or not isinstance(doc.get("directions"), dict):
        raise ParseError("not an ioarrive JSON document (no \"tool\": \"ioarrive\" with \"directions\")")
    return doc


def _failed(doc: dict, direction: str) -> tuple[str, str]:
    """(checks, reasons) of one direction: ``ok`` and "" when nothing of it or of the run failed."""
    names, details = [], []
    for c in doc.get("checks") or []:
        if c.get("passed") or c.get("direction") not in (direction, None):
            continue
        names.append(c.get("name", "?") + (f"/{c['source']}" if c.get("source") else ""))
        details.append(str(c.get("detail", "")))
    return (";".join(names) or "ok"), "; ".join(details)


def _cpu_pct(doc: dict, who: str) -> float | None:
    return _num(((doc.get("cpu") or {}).get(who) or {}).get("cpu_pct"))


def wake_delay_p99_us(doc: dict) -> float | None:
    """How late the submitter's sleeps woke, p99 (µs): the machine's scheduling, the usual cause of lag on a
    shared machine; None in virtual time and from ioarrive before 0.1's wake_delay."""
    return _num((doc.get("wake_delay") or {}).get("p99_us"))


def pause_columns(doc: dict) -> dict[str, float | None]:
    """:data:`PAUSE_COLUMNS` from the document's ``pause_probe`` (all None without a probe: virtual time, no
    ``--pause-probe``, ioarrive before it had one)."""
    p = doc.get("pause_probe") or {}
    return dict(zip(PAUSE_COLUMNS, (_num(p.get("per_cpu_s")), _num(p.get("max_us")), _num(p.get("paused_pct")))))


def submit_columns(doc: dict) -> dict[str, float | None]:
    """:data:`SUBMIT_COLUMNS` from the document's ``submit_call`` (all None in virtual time and from ioarrive
    before it recorded them)."""
    s = doc.get("submit_call") or {}
    return dict(zip(SUBMIT_COLUMNS, (_num(s.get("blocked_s")), _num(s.get("max_us")), _num(s.get("peak_outstanding")),
                                     _num(s.get("queue_requests")))))


def parse_ioarrive(doc: dict | str | bytes, source: str = "") -> list[dict]:
    """One tidy row per direction (:data:`COLUMNS`)."""
    doc = load(doc)
    job, sim = doc.get("job") or {}, doc.get("sim") or {}
    rows = []
    for direction, d in doc["directions"].items():
        checks, reasons = _failed(doc, direction)
        row: dict[str, Any] = {
            "source": source, "tool": TOOL, "tool_version": doc.get("version"),
            "engine": (doc.get("engine") or {}).get("name"), "target_kind": job.get("target_kind"),
            "virtual_time": bool(job.get("virtual_time")), "direction": direction, "process": d.get("process"),
            "bs_bytes": job.get("bs_bytes"), "pattern": job.get("pattern"), "runtime_s": _num(job.get("runtime_s")),
            "offered_iops": _num(d.get("offered_iops")), "issued_iops": _num(d.get("issued_iops")),
            "achieved_iops": _num(d.get("achieved_iops")), "achieved_pct": _num(d.get("achieved_pct")),
        }
        for prefix, key in _STATS:
            stats = d.get(key) or {}
            for name, field in _PCTS:
                row[f"{prefix}_{name}_us"] = _us(stats.get(field))
        row.update({
            "lag_bound_us": _us(d.get("lag_bound_ns")), "completed": d.get("completed"), "errors": d.get("errors"),
            "overloaded": bool(doc.get("overloaded")), "generator_bound": bool(doc.get("generator_bound")),
            "open_loop": bool(doc.get("open_loop")), "checks": checks, "reasons": reasons,
            "cpu_pct": _cpu_pct(doc, "process"), "submitter_cpu_pct": _cpu_pct(doc, "submitter"),
            "wake_delay_p99_us": wake_delay_p99_us(doc), **pause_columns(doc), **submit_columns(doc),
            "sim_servers": sim.get("servers"), "sim_service_mean_us": _us(sim.get("service_mean_ns")),
            "sim_service_cs2": _num(sim.get("service_cs2")),
        })
        rows.append({c: row.get(c) for c in COLUMNS})
    return rows


def bin_rows(doc: dict | str | bytes, source: str = "") -> list[dict]:
    """The histograms' non-empty bins, tidy (:data:`BIN_COLUMNS`)."""
    doc = load(doc)
    out = []
    for direction, d in doc["directions"].items():
        for kind, key in (("response", "response_ns"), ("service", "service_ns"), ("lag", "lag_ns")):
            for low, high, count in (d.get("bins") or {}).get(key) or []:
                out.append({"source": source, "direction": direction, "kind": kind, "latency_ns": int(low),
                            "latency_high_ns": int(high), "count": int(count)})
    return out


def series_rows(doc: dict | str | bytes, source: str = "") -> list[dict]:
    """The per-second series of each direction (:data:`SERIES_COLUMNS`)."""
    doc = load(doc)
    out = []
    for direction, d in doc["directions"].items():
        ps = d.get("per_second") or {}
        for t, iops, mean, p99 in zip(ps.get("t_s", []), ps.get("iops", []), ps.get("resp_mean_ns", []),
                                      ps.get("resp_p99_ns", []), strict=True):
            out.append({"source": source, "direction": direction, "t_s": t, "iops": _num(iops),
                        "resp_mean_us": _us(mean), "resp_p99_us": _us(p99)})
    return out


def check_rows(doc: dict | str | bytes, source: str = "") -> list[dict]:
    """Every self-check of the run (:data:`CHECK_COLUMNS`)."""
    doc = load(doc)
    return [{"source": source, "name": c.get("name"), "direction": c.get("direction"),
             "check_source": c.get("source"), "passed": bool(c.get("passed")), "value": _num(c.get("value")),
             "low": _num(c.get("low")), "high": _num(c.get("high")), "detail": c.get("detail")}
            for c in doc.get("checks") or []]


__all__ = ["BIN_COLUMNS", "CHECK_COLUMNS", "COLUMNS", "SERIES_COLUMNS", "bin_rows", "check_rows", "load",
           "parse_ioarrive", "series_rows"]
