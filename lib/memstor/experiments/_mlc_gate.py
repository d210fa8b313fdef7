"""mlc-loaded-latency, its quality gate: which attempt of each measured value a table uses (its own gates,
bandwidth rising with the delay) and the re-measurements of the values that fail (new points, new raw files).
The thresholds are memstor.measure.loadlat's.
"""

from __future__ import annotations

from collections.abc import Sequence

from memstor.analysis.memory import c2c_kind
from memstor.analysis.validity.memory import MACHINE_MIN_VALUES, MACHINE_SHARE, failed_codes
from memstor.experiments._mlc_points import config_name, point_name
from memstor.measure import mlc
from memstor.measure.loadlat import GATE_BANDWIDTH_RISE_PCT, gate_reasons, gate_text
from memstor.measure.sweep import Point

# ------------------------------------------------------------------------------------ quality gate

#: Gate reasons that describe a moment, not the machine: a re-measurement can pass where the first
#: attempt failed (a thread lost its CPU, the hypervisor stole time, a neighbour's burst raised one
#: point's bandwidth). The sub-window spreads are transient only when few values fail them: a spread
#: that MACHINE_SHARE of a test's values exceed is this machine's noise floor, said once in the report
#: (memstor.analysis.validity.memory) and never re-measured point by point.
TRANSIENT_CODES = frozenset({"cpu_share", "steal", "bandwidth_rises_with_delay"})


def row_key(row: dict) -> tuple:
    """A measured value's identity across attempts: (config, repetition, test, traffic, inject delay, source
    node, destination node, c2c kind): a matrix point holds one value per node pair, a c2c point one per
    kind (``detail``: "Local Socket L2->L2 HITM")."""

    def whole(x):
        return int(x) if x is not None and x == x else None

    kind = c2c_kind(row.get("detail")) if row.get("test") == "c2c_latency" else None
    return (row["config"], int(row["repetition"]), row.get("test"), row.get("traffic"), whole(row.get("inject_delay")),
            whole(row.get("src_node")), whole(row.get("dst_node")), kind)


def _own_gate(row: dict) -> list[tuple[str, str]]:
    """The quality gates one measured row fails on its own figures (:func:`memstor.measure.loadlat.gate_reasons`)."""
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
    groups: dict[tuple, list[dict]] = {}
    out: list[dict] = []
    for row in rows:
        if row.get("status") != "done":
            out.append(row)
            continue
        groups.setdefault(row_key(row), []).append(row)
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

    ``rows``: every attempt's rows so far (memstor.experiments._mlc_rows.point_rows, before :func:`choose_attempts`); ``points``:
    every point measured so far. A loaded-latency value that fails its own gates, or whose bandwidth
    rises with the delay (then with the value at the next smaller delay too: either may be the bad one),
    is re-measured while it was measured at most ``max_remeasure`` times before; the delays of one
    configuration x repetition that need their n-th attempt share one new point (params ``attempt`` = n,
    ``delays`` = those delays, ``config``). Idle latency and peak bandwidth points are re-measured whole.
    A value whose only failures are this machine's (:func:`machine_codes`) is not re-measured: another
    attempt would fail the same way. MLC rows are never re-measured (no gate).
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
    machine = machine_codes(final)
    want: dict[tuple, set] = {}  # (config, repetition) -> delays (None: the whole point)
    bases: dict[tuple, dict | None] = {}
    for row in final:
        codes = set(failed_codes(row.get("gate")))
        if not codes or codes <= machine.get(str(row.get("test")), set()):
            continue
        cfg, rep = row["config"], int(row["repetition"])
        delay = row_key(row)[4] if row.get("test") == "loaded_latency" else None
        marks = [delay]
        if "bandwidth_rises_with_delay" in row["gate"] and delay is not None:
            smaller = [row_key(r)[4] for r in final if r["config"] == cfg and int(r["repetition"]) == rep
                       and r.get("test") == "loaded_latency" and row_key(r)[4] is not None
                       and row_key(r)[4] < delay]
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


def machine_codes(final: list[dict]) -> dict[str, set[str]]:
    """Per test, the non-transient gate codes (:data:`TRANSIENT_CODES`) that at least MACHINE_SHARE of its
    gate-evaluated values fail, among at least MACHINE_MIN_VALUES: a property of the machine, not of a point."""
    by_test: dict[str, list[list[str]]] = {}
    for row in final:
        if str(row.get("gate", "")).startswith(("passed", "failed:")):
            by_test.setdefault(str(row.get("test")), []).append(failed_codes(row.get("gate")))
    out: dict[str, set[str]] = {}
    for test, codes in by_test.items():
        if len(codes) < MACHINE_MIN_VALUES:
            continue
        every = {c for cs in codes for c in cs} - TRANSIENT_CODES
        out[test] = {c for c in every if sum(c in cs for cs in codes) >= MACHINE_SHARE * len(codes)}
    return out


def _full_delays(points: Sequence[Point], config: str) -> list[int]:
    """The delay list of a configuration's first attempt (the measuring order), [] when unknown."""
    for pt in points:
        if "attempt" not in pt.params and config_name(pt.params) == config:
            return [int(d) for d in pt.params.get("delays") or []]
    return []
