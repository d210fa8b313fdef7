"""Report text, what the open loop's own columns say about a workload whose loop did not hold (issue 38, sixth
review, workstream E; R-bare M-14, S6-bare M-10): the points whose own checks passed set beside the closed loop
(the measured p99 ratio), and at the late points (ioarrive's lag check failed) the facts that bear on why —
the I/Os in service, the generator's CPU, its sleeps' wake-up delay, the machine's pauses — with a cause named
only where those columns support it, and the way out that follows from it.

Input: the open-loop curve rows of one workload (memstor.analysis.load_latency.curve_table: CURVE_COLUMNS, the
generator's columns and ``closed_p99_us`` / ``closed_qd``). Pure: DataFrame in, markdown out. Units: IOPS, µs,
% of one CPU (``generator_cpu_pct``), I/Os in service = achieved IOPS x mean service time (Little's law).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from memstor.analysis.load_latency import LIKE_LOAD
from memstor.analysis.validity.openloop import CPU_WARN_PCT
from memstor.core.fmt import fmt_number
from memstor.core.schema import missing, truthy

#: I/Os in service within this share of the workload's most (%) count as one level ...
LEVEL_PCT = 15.0
#: ... and a level of at least two late points at or under this share of the generator's cap on I/Os in flight
#: is a queue below the generator's (the I/O path's: the device's or the block layer's), full: submissions wait
#: for a free slot, whatever the CPUs do.
QUEUE_SHARE_OF_CAP = 0.5
#: Submit calls blocked for at least this share of the run (%) delay about that share of its arrivals (at rate X,
#: blocked time b delays about X b of X T arrivals): enough for the late 1 % (ioarrive's SUBMIT_BLOCKED_PCT).
BLOCKED_PCT = 1.0
#: Blocked less than this many times BLOCKED_PCT, the queue could make the late 1 % only just: it is named beside
#: a busy CPU, not before it (fifth read S9-bare M-6: randwrite u95 blocked 1.3 % of 2 s, about 16 I/Os in service
#: on average against a momentary 285, ioarrive at 98.3 % of one CPU; randread u80-u98 blocked 7-31 %).
CLEAR_BLOCKED_FACTOR = 2.0
#: ioarrive at or above this share of one CPU (%) may have waited for the CPU too: the cause is then not said to
#: be the queue alone (third read S8-bare M-3: 97-101 % of one CPU at u30/u50).
BUSY_CPU_PCT = 90.0
#: Ways out, by the cause the columns support.
WAY_OUT = {
    "request_queue": "lower offered rates, or a deeper request queue on the disk (its nr_requests)",
    "queue": "lower offered rates (the I/O path served no more than about {level} I/Os at once)",
    "wake": "more usable CPUs for ioarrive's submitter (its sleeps woke late)",
    "pause": "a quieter machine (its own pauses exceeded the lag bound)",
}


def _num(g: pd.DataFrame, col: str) -> np.ndarray:
    """A column as floats (all NaN when absent)."""
    return pd.to_numeric(g[col], errors="coerce").to_numpy(float) if col in g else np.full(len(g), np.nan)


def _range(v: np.ndarray, unit: str = "") -> str:
    """'a-b unit' (one value: 'a unit') of the finite values; '' when none."""
    v = v[np.isfinite(v)]
    if not v.size:
        return ""
    lo, hi = fmt_number(float(v.min())), fmt_number(float(v.max()))
    return (lo if lo == hi else f"{lo}–{hi}") + (f" {unit}" if unit else "")


def u_label(u) -> str:
    """An offered load (% of X_ref) as the figures label it: 50 -> 'u50' (memstor.report.text.loadgen.u_label's
    form; not imported: loadgen calls this module)."""
    f = pd.to_numeric(pd.Series([u]), errors="coerce").iloc[0]
    return "u?" if f != f else f"u{float(f):g}"


def _us(points: pd.DataFrame) -> str:
    """'u10, u30' of the rows' offered loads."""
    return ", ".join(u_label(u) for u in points["utilisation_pct"])


def in_service(g: pd.DataFrame) -> np.ndarray:
    """I/Os in service per row: achieved IOPS x mean service time (submission to completion, µs) / 10⁶."""
    return _num(g, "achieved_iops") * _num(g, "service_mean_us") / 1e6


def _beside(r: pd.Series) -> str:
    """'u90: 829 µs at 59,784 IOPS, QD64 1,286 µs at 63,634: 0.6×'; at a closed point beyond LIKE_LOAD of the open
    rate, its numbers without a ratio (closed_iops not recorded: the ratio, as older tables read) (fifth read S9-bare M-5: randwrite u70
    against QD64 at 1.37× its rate read as '0.5×')."""
    at = float(r.get("closed_iops", math.nan))
    head = (f"{u_label(r['utilisation_pct'])}: {fmt_number(r['lat_p99_us'])} µs at {fmt_number(r['achieved_iops'])}"
            f" IOPS")
    load = at / float(r["achieved_iops"]) if at == at and r["achieved_iops"] > 0 else math.nan
    if load == load and max(load, 1 / load) > LIKE_LOAD:
        return (f"{head}, {r['closed_qd']} {fmt_number(r['closed_p99_us'])} µs at {fmt_number(at)} ({load:.2f}× "
                "the rate: no ratio)")
    if load == load:
        return (f"{head}, {r['closed_qd']} {fmt_number(r['closed_p99_us'])} µs at {fmt_number(at)}: "
                f"{r['lat_p99_us'] / r['closed_p99_us']:.1f}×")
    return (f"{head} against {r['closed_qd']}'s {fmt_number(r['closed_p99_us'])} µs "  # tables before closed_iops
            f"({r['lat_p99_us'] / r['closed_p99_us']:.1f}×)")


def _alike(rows: pd.DataFrame) -> np.ndarray:
    """Per row: its closed point ran within LIKE_LOAD of its rate (True where closed_iops was not recorded: older
    tables keep their reading)."""
    ratio = _num(rows, "closed_iops") / _num(rows, "achieved_iops")
    return ~np.isfinite(ratio) | ((ratio <= LIKE_LOAD) & (ratio >= 1 / LIKE_LOAD))


def held_beside_closed(g: pd.DataFrame, held_mask: np.ndarray) -> str:
    """The points whose own checks passed (`held_mask`, memstor.report.text.loadgen.held_points of the points
    themselves), beside the closed loop: their p99 response against the closed sweep's p99 at its depth nearest
    their throughput (load_latency._closed_p99), the ratio where the loads are alike (:func:`_beside`), and the generator's CPU there; '' without such a point or a closed p99."""
    held = g[np.asarray(held_mask, dtype=bool)]
    p99, closed = _num(held, "lat_p99_us"), _num(held, "closed_p99_us")
    ok = np.isfinite(p99) & np.isfinite(closed) & (closed > 0)
    if not ok.any():
        return ""
    rows = held[ok]
    opened, closing, same = engines(rows)
    each = "; ".join(_beside(r) for _, r in rows.iterrows())
    said = (f"Where ioarrive's own checks passed ({_us(rows)}), the open loop's p99 response ({opened}) stood "
            f"beside the closed loop's p99 completion latency ({closing}) at the one-job sweep's depth nearest its "
            f"throughput within {LIKE_LOAD:.1f}× of its rate, else at the lightest depth whose IOPS reach it"
            f", a ratio only within {LIKE_LOAD:.1f}×: {each}"
            + ("" if same else " — ratios across two I/O engines as well as two clocks, not the cost of open arrivals "
               "alone"))
    cpu = _range(_num(rows, "generator_cpu_pct"), "% of one CPU")
    said += f"; ioarrive used {cpu} there" if cpu else ""
    pauses = _range(_num(rows, "pause_max_us"), "µs")
    said += (f"; the machine's longest pause before them {pauses}" if pauses
             else "; the machine's own pauses were not recorded for them")
    return said + "." + closed_tail(rows[_alike(rows)])


def _engine(g: pd.DataFrame, col: str) -> str:
    """The one I/O engine of a curve column ('libaio'); '' where not recorded or not one."""
    v = g[col].dropna().astype(str).unique() if col in g else []
    return v[0] if len(v) == 1 else ""


def engines(g: pd.DataFrame) -> tuple[str, str, bool]:
    """(the open loop's side, the closed loop's side, same engine) of a comparison, in words: 'ioarrive on libaio,
    from each I/O's intended arrival', 'fio on io_uring, from submission' (curve columns ``generator``,
    ``ioengine``, ``closed_ioengine``; S7-bare M-7: the ratios set libaio's response times against io_uring's
    completion latencies unsaid). same: both engines recorded and equal."""
    gen = str(g["generator"].dropna().iloc[0]) if "generator" in g and g["generator"].notna().any() else "fio"
    mine, theirs = _engine(g, "ioengine"), _engine(g, "closed_ioengine")
    on = {e: f" on {e}" if e else " (engine not recorded)" for e in (mine, theirs)}
    clock = "from each I/O's intended arrival" if gen == "ioarrive" else "from submission"
    return f"{gen}{on[mine]}, {clock}", f"fio{on[theirs]}, from submission", bool(mine) and mine == theirs


def arrivals_cost(g: pd.DataFrame) -> str:
    """What the open loop's extra latency over the closed loop's at the same IOPS is: 'the cost of random (Poisson)
    arrivals (ioarrive on io_uring, ... against fio on io_uring, ...)' with one engine on both sides; with two, 'not
    the cost of random (Poisson) arrivals alone: ... against ..., two I/O engines' (:func:`engines`)."""
    opened, closed, same = engines(g)
    if same:
        return f"the cost of random (Poisson) arrivals ({opened}, against {closed})"
    return f"not the cost of random (Poisson) arrivals alone: {opened}, against {closed}, two I/O engines"


def ratio_cell(ratio, engine, fio_engine) -> str:
    """The SLO table's max IOPS / fio latency_target IOPS: '0.85', '0.85 (libaio against io_uring)' where the open
    loop and fio's search ran on two recorded I/O engines (S7-bare M-7), '–' without a ratio."""
    r = pd.to_numeric(pd.Series([ratio]), errors="coerce").iloc[0]
    if r != r:
        return "–"
    two = all(isinstance(e, str) and e for e in (engine, fio_engine)) and engine != fio_engine
    return f"{r:.2f} ({engine} against {fio_engine})" if two else f"{r:.2f}"


def closed_tail(rows: pd.DataFrame) -> str:
    """Where each held point's p99 lies against the closed configuration's own tail (closed_p99_9_us,
    closed_p99_99_us): within it (above the closed p99, up to its p99.99), the closed loop saw I/Os as slow, at a
    smaller share of its I/Os — a closed loop of N in flight exposes only its N I/Os to a stall of the I/O path,
    an open loop every arrival during one; beyond it, or without the closed tail, the columns do not say what
    sets the tail. '' without rows."""
    p99, top, base = _num(rows, "lat_p99_us"), _num(rows, "closed_p99_99_us"), _num(rows, "closed_p99_us")
    within = np.isfinite(top) & (p99 <= top) & ~(p99 <= base)  # above the closed p99 (third read S7-bare M-3)
    out = ""
    if within.any():
        r = rows[within]
        tails = "; ".join(dict.fromkeys(f"{q}: p99.9 {fmt_number(a)} µs, p99.99 {fmt_number(b)} µs" for q, a, b in
                                        zip(r["closed_qd"], r["closed_p99_9_us"], r["closed_p99_99_us"])))
        out += (f" At {_us(r)} the open loop's p99 lies within the closed loop's own tail ({tails}): the closed loop "
                "met I/Os as slow, at a smaller share of its I/Os — a closed loop of N in flight lets only its N I/Os "
                "meet a stall of the I/O path, an open loop every arrival during one (the closed loop's coordinated "
                "omission).")
    unknown = "what sets this tail (the device under bursty arrivals, ioarrive's CPU or the machine) these columns do not show."
    beyond = rows[np.isfinite(top) & (p99 > top)]
    if len(beyond):
        out += (f" At {_us(beyond)} the open loop's p99 lies beyond even the closed loop's p99.99 "
                f"({_range(_num(beyond, 'closed_p99_99_us'), 'µs')}): {unknown}")
    if not (np.isfinite(top) | (p99 <= base)).all():  # the closed tail not recorded (tables before it)
        out += " " + unknown[:1].upper() + unknown[1:]
    return out


def _at(rows: pd.DataFrame, what: str, queue: str, marginal: bool = False, also: str = "") -> str:
    """'at u80, u90 <what>, with <the generator's columns>: the submissions waited for <queue>, not for a CPU' (or,
    where ioarrive used :func:`busy_pct` of a CPU or more, 'and perhaps for a CPU as well'; `marginal`, the queue only
    just enough: 'for <queue> or for a CPU: these columns do not tell which'; `also`, the late wake-ups and pauses
    at the same points (:func:`_also`), which replace 'not for a CPU')."""
    busy = bool((_num(rows, "generator_cpu_pct") >= busy_pct(rows)).any())
    tail = (" or for a CPU: these columns do not tell which" if marginal else " and perhaps for a CPU as well") \
        if busy else ("" if also else ", not for a CPU")
    return f"at {_us(rows)} {what}, with {_facts(rows)}: the submissions waited for {queue}" + tail + also


def busy_pct(rows: pd.DataFrame) -> np.ndarray:
    """Per row, the share of one CPU (%) from which ioarrive may have waited for a CPU: BUSY_CPU_PCT, or the
    load_generator_cpu check's warning share of the usable CPUs where that is lower (CPU_WARN_PCT x usable_cpus;
    S11-1cpu 2: ioarrive at 79 % of the one usable CPU, the check warned, and the text said 'not for a CPU')."""
    usable = _num(rows, "usable_cpus")
    return np.where(np.isfinite(usable), np.minimum(BUSY_CPU_PCT, CPU_WARN_PCT * usable), BUSY_CPU_PCT)


def _beyond_queue(f: pd.DataFrame) -> str:
    """'4.54–167 submitted and not completed on average (achieved × mean service time; more than the queue holds at
    u70, u95: those waited in the block layer before it)' (S11-loop 3: '167 in service on average against the disk's
    request queue of 128' printed without comment; service time runs from the submit call, queueing included)."""
    n, queue = in_service(f), _num(f, "queue_requests")
    over = f[np.isfinite(n) & np.isfinite(queue) & (n > queue)]
    said = f"{_range(n)} submitted and not completed on average (achieved × mean service time"
    return said + (f"; more than the queue holds at {_us(over)}: those waited in the block layer before it)"
                   if len(over) else ")")


def _blocked_share(rows: pd.DataFrame) -> np.ndarray:
    """ioarrive's submit calls' blocked time as a share of the run (%; NaN where either is not recorded)."""
    return 100.0 * _num(rows, "submit_blocked_s") / _num(rows, "runtime_s")


def _queue_full(late: pd.DataFrame) -> pd.Series:
    """Per late row: ioarrive's submit calls blocked for at least BLOCKED_PCT of the run (runtime_s; where not
    recorded, at all) with at least the disk's request queue (queue_requests, its nr_requests) in flight at some
    time (peak_outstanding): the block layer's queue was full long enough to make the late 1 %."""
    peak, queue, blocked = (_num(late, c) for c in ("peak_outstanding", "queue_requests", "submit_blocked_s"))
    run = _num(late, "runtime_s")
    enough = np.where(np.isfinite(run), blocked >= BLOCKED_PCT / 100.0 * run, blocked > 0)
    return pd.Series((peak >= queue) & enough, index=late.index)


def _levelled(late: pd.DataFrame) -> pd.Series:
    """Per late row, whether its I/Os in service sit on the workload's level: within LEVEL_PCT of the most, at
    least two such rows, the most at or under QUEUE_SHARE_OF_CAP of the generator's cap."""
    n = pd.Series(in_service(late), index=late.index)
    cap = float(np.nanmax(_num(late, "max_outstanding"))) if np.isfinite(_num(late, "max_outstanding")).any() \
        else np.nan
    if n.notna().sum() < 2 or not np.isfinite(cap):
        return pd.Series(False, index=late.index)
    top = float(n.max())
    on = n >= top * (1 - LEVEL_PCT / 100.0)
    return on if on.sum() >= 2 and top <= QUEUE_SHARE_OF_CAP * cap else pd.Series(False, index=late.index)


def _facts(rows: pd.DataFrame) -> str:
    """The generator's columns over some late points: CPU, wake-up delay against the lag, the machine's pauses
    (each said only where recorded; late_causes says once when no pause was recorded)."""
    cpu, woke = _range(_num(rows, "generator_cpu_pct"), "% of one CPU"), _range(_num(rows, "wake_delay_p99_us"), "µs")
    lag, pauses = _range(_num(rows, "lag_p99_us"), "µs"), _range(_num(rows, "pause_max_us"), "µs")
    usable = _num(rows, "usable_cpus")
    of = f" ({usable[0]:g} usable CPU{'' if usable[0] == 1 else 's'})" if cpu and np.isfinite(usable).any() else ""
    said = [f"ioarrive at {cpu}{of}" if cpu else "ioarrive's CPU not recorded",
            (f"its sleeps waking {woke} late (p99)" if woke else "") + (f" against p99 lags of {lag}" if lag else ""),
            f"the machine's longest pause before them {pauses}" if pauses else ""]
    return ", ".join(s.strip() for s in said if s.strip())


def _host_delays(rows: pd.DataFrame, g: pd.DataFrame, host_rows: pd.DataFrame | None
                 ) -> tuple[np.ndarray, np.ndarray, str]:
    """(woke, paused, than) per late row: the submitter's sleeps woke (p99) at least the lag bound late; the machine
    paused at least as long as the lag bound and longer than at any rate of the host that held (a pause as long at a
    rate that held does not tell the late ones apart: third read S7-bare M-4; every workload of the host counts:
    S8-bare M-4), `than` saying that longest held pause where there is one (S12-1cpu9 4)."""
    bound = _num(rows, "lag_bound_us")
    woke, paused = _num(rows, "wake_delay_p99_us") >= bound, _num(rows, "pause_max_us") >= bound
    every = g if host_rows is None else host_rows
    flags = every["open_loop"] if "open_loop" in every else pd.Series(False, index=every.index)
    calm = _num(every[flags.map(lambda v: not missing(v) and bool(truthy(v)))], "pause_max_us")
    if not np.isfinite(calm).any():
        return woke, paused, ""
    return woke, paused & (_num(rows, "pause_max_us") > np.nanmax(calm)), \
        f" and than at any rate that held ({fmt_number(float(np.nanmax(calm)))} µs)"


def _also(rows: pd.DataFrame, g: pd.DataFrame, host_rows: pd.DataFrame | None, causes: set[str]) -> str:
    """'; at u30 the sleeps also woke later than the lag bound and at u10, u30, u70 the machine paused longer than it:
    the columns do not separate these causes' over points whose queue was full (ninth read
    S12-loop9 2: the queue named alone, 'not for a CPU', where u10, u30 and u70 paused beyond the bound and u30's
    sleeps woke 2,171 µs late against 1,130); adds 'wake' / 'pause' to `causes`; '' where neither."""
    woke, paused, than = _host_delays(rows, g, host_rows)
    said = [f"at {_us(rows[hit])} {what}" for what, hit in (
        ("the sleeps also woke later than the lag bound", woke),
        (f"the machine {'' if woke.any() else 'also '}paused longer than {'it' if woke.any() else 'the lag bound'}"
         f"{than}", paused)) if hit.any()]
    causes |= {c for c, hit in (("wake", woke), ("pause", paused)) if hit.any()}
    return f"; {' and '.join(said)}: the columns do not separate these causes" if said else ""


def late_causes(g: pd.DataFrame, host_rows: pd.DataFrame | None = None) -> tuple[str, set]:
    """(sentence, causes) over the points whose lag check failed: where ioarrive's submit calls blocked with the
    disk's request queue full (:func:`_queue_full`: 'request_queue'), where their I/Os in service levelled well
    under the generator's cap (the I/O path's queue full: 'queue'), and at the others whether the submitter's sleeps
    woke later than the lag bound ('wake') or the machine paused longer than it ('pause'); neither: the columns do
    not say why. ('', set()) without a late point."""
    checks = g["generator_checks"] if "generator_checks" in g else pd.Series("", index=g.index)
    late = g[checks.map(lambda v: not missing(v) and "lag" in str(v).split(";"))]
    if late.empty:
        return "", set()
    full = _queue_full(late)
    parts: list[str] = []
    causes: set[str] = set()
    share = _blocked_share(late)
    for marginal in (False, True):  # blocked well beyond the late 1 %; then only just (CLEAR_BLOCKED_FACTOR)
        near = share < CLEAR_BLOCKED_FACTOR * BLOCKED_PCT
        f = late[full & (near if marginal else ~near)]
        if f.empty:
            continue
        pct = _range(_blocked_share(f), "% of the run")
        parts.append(_at(f, f"up to {_range(_num(f, 'peak_outstanding'))} I/Os were in flight at a time "
                            f"({_beyond_queue(f)}) against the disk's request queue of "
                            f"{fmt_number(_num(f, 'queue_requests')[0])} and ioarrive's submit calls blocked "
                            f"{_range(_num(f, 'submit_blocked_s'), 's')}" + (f" ({pct})" if pct else ""),
                         "the block layer's full request queue" + (" (blocked only about as long as the late 1 % "
                                                                   "needs)" if marginal else ""), marginal,
                         _also(f, g, host_rows, causes)))
        causes.add("request_queue")
    on = _levelled(late) & ~full
    if on.any():
        q = late[on]
        parts.append(_at(q, f"the I/Os in service (achieved × mean service time) levelled at {_range(in_service(q))} "
                            f"against ioarrive's cap of {fmt_number(_num(q, 'max_outstanding')[0])}",
                         "a full queue of the I/O path (the device's or the block layer's: this run does not tell which)",
                         also=_also(q, g, host_rows, causes)))
        causes.add("queue")
    idle = _num(late, "lag_p99_us")
    empty = late[~on & ~full & ~np.isfinite(idle)]  # S12-loop9 5: u98 overloaded in its ramp, issued nothing
    if len(empty):
        parts.append(f"at {_us(empty)} ioarrive reached its cap of {fmt_number(_num(empty, 'max_outstanding')[0])} "
                     "I/Os in flight before the window and issued nothing in it: no lag was measured there, so no "
                     "cause is read from it")
    rest = late[~on & ~full & np.isfinite(idle)]
    if len(rest):
        woke, paused, than = _host_delays(rest, g, host_rows)
        why = "; ".join(f"{what} at {_us(rest[hit])}" for what, hit in (
            ("the submitter's sleeps woke later than the lag bound", woke),
            (f"the machine paused longer than the lag bound{than}", paused)) if hit.any())
        causes |= {c for c, hit in (("wake", woke), ("pause", paused)) if hit.any()}
        busy = _range(in_service(rest))
        parts.append(f"at {_us(rest)}{f' ({busy} I/Os in service)' if busy else ''} {_facts(rest)}: "
                     + (why if why else "what delayed the submissions these columns do not show"))
    unpaused = "" if np.isfinite(_num(late, "pause_max_us")).any() else " (the machine's pauses were not recorded)"
    # every late point named first, then its groups (S13-bare 8: u10 and u30 read as not late, their group last)
    # S16-loop 2: 'At every rate' named 7 of 8 rates where u98 failed the lag check with no lag measured (achieved 0)
    lagged = late[np.isfinite(_num(late, "lag_p99_us"))]
    head = ("At the late points (p99 lag over its bound) " if len(parts) == 1 else "At every rate (p99 lag over its "
            "bound): " if len(lagged) == len(g) else f"At the late points (p99 lag over its bound: {_us(lagged)}): ")
    return head + "; ".join(parts) + unpaused + ".", causes


def way_out(causes: set, g: pd.DataFrame) -> str:
    """The way out that follows from the causes the columns support; none: that this run does not show one."""
    if not causes:
        return ("For an open loop: this run does not show what delayed the submissions (the I/O path, the CPUs or "
                "the machine), so no remedy is named; until then read the queue-depth sweep's closed-loop curve.")
    on = _levelled(g[g["generator_checks"].map(lambda v: not missing(v) and "lag" in str(v).split(";"))]) \
        if "generator_checks" in g else pd.Series(dtype=bool)
    level = fmt_number(float(np.nanmax(in_service(g.loc[on[on].index])))) if on.any() else "?"
    lowest = _lowest_late(g) if causes & {"request_queue", "queue"} else ""
    ways = [WAY_OUT[c].format(level=level) for c in ("request_queue", "queue", "wake", "pause")
            if c in causes and not (lowest and c == "queue")]
    if lowest:
        ways = [w.replace("lower offered rates, or ", "") for w in ways]
    said = "; or ".join(ways)
    if lowest:  # S10-bare 10, S11-bare 5: no lower rate where the lowest was late too
        said += ("; " if said else "") + f"lower offered rates are not shown to help: {lowest}"
    return f"For an open loop: {said}; until then read the queue-depth sweep's closed-loop curve."


def _lowest_late(g: pd.DataFrame) -> str:
    """Why lower offered rates are not shown to help, where the lowest offered rate of g was late too (its lag check
    failed), else '': 'the lowest, u10 (27,171 IOPS), was late too: up to 313 I/Os in flight against the queue of 128
    (39.5 in service on average), its submissions blocked 7.3 % of the run' with the request queue full
    (:func:`_queue_full`; S10-bare 10; S16-loop 1: the peak alone read as a standing queue), else 'the lowest, u10 (3,123 IOPS), was late too
    (p99 lag 8,110 µs against its bound of 1,517 µs)' (S11-bare 5: 'lower offered rates' advised for randwrite,
    whose u10 and u30 were late on the submitter's sleeps)."""
    if g.empty or "utilisation_pct" not in g or "generator_checks" not in g:
        return ""
    low = g.sort_values("utilisation_pct").iloc[[0]]
    if "lag" not in str(low["generator_checks"].iloc[0]).split(";"):
        return ""
    r = low.iloc[0]
    said = f"the lowest, u{float(r['utilisation_pct']):g} ({fmt_number(float(r['offered_iops']))} IOPS), "
    if bool(_queue_full(low).iloc[0]):  # S16-loop 1: a peak, not a standing queue: the mean and the blocked share too
        run, blocked = float(r.get("runtime_s", math.nan)), float(r.get("submit_blocked_s", math.nan))
        share = f", its submissions blocked {100 * blocked / run:.1f} % of the run" if run > 0 and blocked == blocked \
            else ""
        mean = float(in_service(low)[0])
        return (said + f"was late too: up to {fmt_number(float(r['peak_outstanding']))} I/Os in flight against the "
                f"queue of {fmt_number(float(r['queue_requests']))}" + (f" ({mean:.1f} in service on average)"
                                                                         if mean == mean else "") + share)
    lag, bound = _num(low, "lag_p99_us")[0], _num(low, "lag_bound_us")[0]
    return said + "was late too" + (f" (p99 lag {fmt_number(lag)} µs against its bound of {fmt_number(bound)} µs)"
                                    if np.isfinite(lag) and np.isfinite(bound) else "")


def cause_sentences(g: pd.DataFrame, held_mask: np.ndarray, host_rows: pd.DataFrame | None = None
                    ) -> tuple[str, set]:
    """(markdown, causes) of one ioarrive workload whose loop did not hold: its held points (`held_mask`) beside the
    closed loop, then the late points' facts and supported causes (`host_rows`: every workload's rows of its host,
    whose held points tell whether a pause explains a late one)."""
    late, causes = late_causes(g, host_rows)
    return " ".join(s for s in (held_beside_closed(g, held_mask), late) if s), causes
