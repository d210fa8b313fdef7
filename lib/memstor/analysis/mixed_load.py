"""The mixed-load capacity curve (issue 41): for each write rate, the highest read IOPS whose read p99 meets a
latency target, with the interval its neighbouring cells give.

Input: a tidy cell table, one row per (cell, direction) — a cell is one run offering writes at
``write_offered_MBps`` (decimal MB/s, 10⁶ bytes/s) and reads at ``read_offered_iops`` (IOPS) together, each
direction's arrivals independent of the other's (memstor's open-loop generator, ioarrive). Columns used:
``write_offered_MBps, read_offered_iops, direction, offered_iops, achieved_iops, resp_p99_us, open_loop``
(others are ignored; ``resp_p99_us`` is the response time from the intended arrival, µs). Output: tidy rows of
:data:`CAPACITY_COLUMNS`, and :func:`sentence` for the report's words. Pure: DataFrame in, DataFrame out.

The rule, per write rate and target T (µs), over that write rate's cells whose loop held (see
:func:`read_cells`) in order of read IOPS: the capacity lies between the last cell meeting the target before the
first cell missing it (read p99 > T) and that first miss — the bracket, given as ``ci_low_iops`` and
``ci_high_iops`` — and is interpolated between the two (:func:`interpolate`). Cells above the first miss are
not looked at (a noisy p99 that meets the target again at a higher rate does not raise the answer; the same
rule as memstor.analysis.openloop.slo_max_iops). Censored, with no number invented: ``below_grid`` when the
lowest held cell already misses T (capacity below it: ``ci_high_iops`` = that cell), ``above_grid`` when every
held cell meets T (capacity above the highest one: ``ci_low_iops`` = that cell). A write rate without a held cell
has an empty capacity, ``censored`` "" and a note saying so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from memstor.analysis.validity.openloop import OPEN_SHARE_FAIL_PCT
from memstor.core.fmt import fmt_number
from memstor.core.schema import missing, truthy

#: The columns of the cell table that capacity_curve reads (others are ignored).
CELL_COLUMNS = ("write_offered_MBps", "read_offered_iops", "direction", "offered_iops", "achieved_iops",
                "resp_p99_us", "open_loop")
#: The columns of capacity_curve's table (after the ``by`` columns, when any): the write rate (MB/s), the read
#: p99 target (µs), the read capacity (IOPS, empty when censored or unknown), its bracket (IOPS: the last held
#: cell meeting the target, the first missing it; one side empty when censored), censored ("" | "below_grid" |
#: "above_grid"), the held cells of that write rate the rule looked at, and a note in words.
CAPACITY_COLUMNS = ["write_offered_MBps", "target_us", "read_capacity_iops", "ci_low_iops", "ci_high_iops",
                    "censored", "cells_used", "note"]
CENSORED = ("", "below_grid", "above_grid")
#: A write rate whose cells held less often than this (%) gets no capacity: the share the open-loop rule asks of a
#: workload's offered rates (memstor.analysis.validity.openloop.OPEN_SHARE_FAIL_PCT).
MIN_HELD_PCT = OPEN_SHARE_FAIL_PCT
#: The interpolations between the bracketing cells (see interpolate).
RULES = ("reciprocal", "log", "linear")
#: The columns of read_cells' table (after the ``by`` columns).
READ_CELL_COLUMNS = ["write_offered_MBps", "read_iops", "read_p99_us", "held", "runs", "loop"]


def _float(v) -> float:
    """A finite float, or NaN (missing, text that is not a number, ±inf)."""
    if missing(v):
        return math.nan
    try:
        f = float(v)
    except (TypeError, ValueError):
        return math.nan
    return f if math.isfinite(f) else math.nan


def read_cells(cells: pd.DataFrame, by: Sequence[str] = (), unchecked_as_held: bool = False) -> pd.DataFrame:
    """One row per cell (``by`` columns, ``write_offered_MBps``, ``read_offered_iops``) that offered reads.

    Columns :data:`READ_CELL_COLUMNS`: ``read_iops`` — the read rate the generator offered (the read row's
    ``offered_iops``, IOPS; the cell's ``read_offered_iops`` where that is empty). The offered rate, not the
    achieved one, is the cell's coordinate: it is the designed, noise-free rate a user would offer, and in a
    cell whose loop held the achieved rate is within ±5 % of it (ioarrive's two-sided rate check), so
    ``achieved_iops`` is not used here. ``read_p99_us`` — the read rows' p99 response (µs; the mean over
    repetitions of the cell). ``held`` — every row of the cell, both directions and every repetition, has
    ``open_loop`` true (a cell whose writes fell behind did not offer the load it names either). ``runs`` —
    read rows of the cell. Cells without a read row (writes alone) are left out.

    unchecked_as_held: imported results whose loop was never checked (``open_loop`` empty: diskplorer's, timed
    from fio's submission under fio's rate limits) count as held unless their ``held_note`` says why not (e.g.
    diskplorer's own 97 % rule) — the caller says so beside every number (``loop`` column: held, not held, not
    checked). Never for memstor's own cells, whose ``open_loop`` is always true or false.
    """
    need = [*by, *CELL_COLUMNS]
    absent = [c for c in need if c not in cells.columns]
    if absent:
        raise ValueError(f"cells: missing column(s) {', '.join(absent)} (needs {', '.join(need)})")
    keys = [*by, "write_offered_MBps", "read_offered_iops"]
    df = cells[need].copy()
    for c in ("write_offered_MBps", "read_offered_iops", "offered_iops", "resp_p99_us"):
        df[c] = [_float(v) for v in df[c]]
    note = cells["held_note"] if "held_note" in cells.columns else pd.Series("", index=cells.index)
    unchecked = [missing(v) and (missing(n) or not str(n).strip()) for v, n in zip(df["open_loop"], note)]
    df["held"] = [truthy(v) or (unchecked_as_held and u) for v, u in zip(df["open_loop"], unchecked)]
    df["unchecked"] = unchecked
    df = df[df["write_offered_MBps"].notna() & df["read_offered_iops"].notna()]
    rows = []
    for key, g in df.groupby(keys, sort=True, dropna=False):
        reads = g[g["direction"].astype(str) == "read"]
        if reads.empty:
            continue
        offered = reads["offered_iops"].dropna()
        p99 = reads["resp_p99_us"].dropna()
        p99 = p99[p99 > 0]
        rows.append({**dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True)),
                     "read_iops": float(offered.mean()) if len(offered) else float(key[-1]),
                     "read_p99_us": float(p99.mean()) if len(p99) else math.nan,
                     "held": bool(g["held"].all()), "runs": len(reads),
                     "loop": "not held" if not g["held"].all() else "not checked" if g["unchecked"].any() else "held"})
    out = pd.DataFrame(rows, columns=[*by, "write_offered_MBps", "read_offered_iops", "read_iops", "read_p99_us",
                                      "held", "runs", "loop"])
    return out.drop(columns="read_offered_iops")


def interpolate(x_a: float, p_a: float, x_b: float, p_b: float, target_us: float, rule: str = "reciprocal") -> float:
    """The read rate (IOPS) at which p99 reaches target_us between a meeting cell (x_a IOPS, p99 p_a µs ≤ target)
    and a missing one (x_b > x_a IOPS, p_b µs > target).

    ``reciprocal`` (the default): 1/p99 linear in read IOPS. It is exact for the exponential response tail of
    M/M/1 (p99 = ln 100 / (μ − λ), so 1/p99 = (μ − λ) / ln 100 is linear in λ = λ_read + λ_write) and it is the
    form of the heavy-traffic limit of any G/G/c queue, whose waiting time tends to an exponential of mean
    proportional to 1/(λ_max − λ) (Kingman): near the knee, where the targets cross, p99 ≈ a / (λ_max − λ) + b.
    ``log``: ln p99 linear in read IOPS — a curve that rises faster than any straight line, so it removes much
    of the knee's curvature, not all of it (between the cells it lies above the true p99 of M/M/1 and answers
    a little low). ``linear``: p99 linear in read IOPS — the chord of a convex curve lies above it, so the
    answer is the lowest of the three. All three are monotone between the cells: the answer always lies inside
    the bracket [x_a, x_b], which is the interval reported with it.
    """
    if rule not in RULES:
        raise ValueError(f"rule: {rule!r} is not one of {', '.join(RULES)}")
    if not (x_b > x_a and 0 < p_a <= target_us < p_b):
        raise ValueError(f"not a bracket: ({x_a}, {p_a}) must meet and ({x_b}, {p_b}) miss {target_us} us, in order")
    f = {"reciprocal": lambda p: 1.0 / p, "log": math.log, "linear": float}[rule]
    share = (f(target_us) - f(p_a)) / (f(p_b) - f(p_a))
    return x_a + share * (x_b - x_a)


def _order(held: pd.DataFrame, target_us: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(read IOPS, p99 µs, miss) of the held cells in order of rate (a meet before a miss at an equal rate)."""
    x = held["read_iops"].to_numpy(float)
    p = held["read_p99_us"].to_numpy(float)
    miss = p > target_us
    order = np.lexsort((miss, x))
    return x[order], p[order], miss[order]


def _not_held_note(group: pd.DataFrame, above_iops: float | None = None) -> str:
    """Words on the cells left out: not held (and, when above_iops is given, how many lie above that rate)."""
    out = group[~group["held"]]
    parts = []
    if len(out):
        parts.append(f"{len(out)} cell(s) did not hold (ignored)")
        if above_iops is not None:
            above = out[out["read_iops"] > above_iops]["read_iops"]
            if len(above):
                parts.append(f"{len(above)} of them above the highest held cell, the first at "
                             f"{fmt_number(float(above.min()))} IOPS")
    nop99 = group[group["held"] & group["read_p99_us"].isna()]
    if len(nop99):
        parts.append(f"{len(nop99)} held cell(s) without a read p99 (ignored)")
    return "; ".join(parts)


#: Where capacity_at's note gives the held cells of a write rate withheld for too few (sentence reads it back).
HELD_AGAINST = "; held: "


def _held_against(held: pd.DataFrame, target_us: float) -> str:
    """'; held: 30,129 IOPS offered at read p99 2,351 µs, 2.35× the target' — what the held cells of a withheld
    write rate measured against the target (R-bare M-14: a withheld capacity hid that its one held cell missed the
    target 2.35×); the rate is the offered one, said so (S9-bare C-10: w0-r20's 24,524 offered, 24,597.5 achieved)."""
    each = "; ".join(f"{fmt_number(x)} IOPS offered at read p99 {fmt_number(p)} µs, {p / target_us:.2f}× the target"
                     for x, p in zip(held["read_iops"], held["read_p99_us"]))
    return HELD_AGAINST + each if each else ""


def credible(rc: pd.DataFrame, by: Sequence[str] = ()) -> pd.Series:
    """Per row of :func:`read_cells`, whether its latency may be read as the offered load's: the cell held, has a
    read p99, and at least :data:`MIN_HELD_PCT` % of its write rate's cells held (the capacity's own rule: a held
    verdict among mostly failed ones is chance on that machine, not a property of the load)."""
    keys = [*by, "write_offered_MBps"]
    share = rc.groupby(keys, dropna=False)["held"].transform("mean") * 100.0
    return rc["held"] & rc["read_p99_us"].notna() & (share >= MIN_HELD_PCT)


def capacity_at(group: pd.DataFrame, target_us: float, rule: str = "reciprocal") -> dict:
    """The read capacity of one write rate at one p99 target (µs): the dict of :data:`CAPACITY_COLUMNS` but
    ``write_offered_MBps`` and ``target_us``. group: that write rate's rows of :func:`read_cells`. Withheld (empty,
    with the reason) when fewer than :data:`MIN_HELD_PCT` % of the write rate's cells held: a held verdict among
    mostly failed ones is chance on that machine, not a property of the load."""
    held = group[group["held"] & group["read_p99_us"].notna()]
    nan = math.nan
    out = {"read_capacity_iops": nan, "ci_low_iops": nan, "ci_high_iops": nan, "censored": "",
           "cells_used": len(held)}
    if held.empty:
        return {**out, "note": "; ".join(filter(None, ["no held cell with a read p99: no capacity",
                                                        _not_held_note(group)]))}
    if 100.0 * len(held) < MIN_HELD_PCT * len(group):
        return {**out, "note": (f"only {len(held)} of {len(group)} cells held (< {MIN_HELD_PCT:g} %, the open-loop "
                                "rule of every workload): no capacity" + _held_against(held, target_us))}
    x, p, miss = _order(held, target_us)
    if not miss.any():
        note = (f"read p99 <= {target_us:g} us in every held cell, up to {fmt_number(x[-1])} IOPS: "
                "the capacity lies above the grid")
        return {**out, "ci_low_iops": float(x[-1]), "censored": "above_grid",
                "note": "; ".join(filter(None, [note, _not_held_note(group, float(x[-1]))]))}
    i = int(np.argmax(miss))
    if i == 0:
        note = (f"read p99 {fmt_number(p[0])} us > {target_us:g} us already in the lowest held cell, "
                f"{fmt_number(x[0])} IOPS: the capacity lies below the grid")
        return {**out, "ci_high_iops": float(x[0]), "censored": "below_grid",
                "note": "; ".join(filter(None, [note, _not_held_note(group)]))}
    cap = interpolate(float(x[i - 1]), float(p[i - 1]), float(x[i]), float(p[i]), target_us, rule)
    again = int((~miss[i + 1:]).sum())
    notes = [f"{rule} interpolation between {fmt_number(x[i - 1])} IOPS (p99 {fmt_number(p[i - 1])} us) and "
             f"{fmt_number(x[i])} IOPS (p99 {fmt_number(p[i])} us)",
             f"{again} held cell(s) above the first miss meet the target again (not used)" if again else "",
             _not_held_note(group)]
    return {**out, "read_capacity_iops": cap, "ci_low_iops": float(x[i - 1]), "ci_high_iops": float(x[i]),
            "note": "; ".join(filter(None, notes))}


def capacity_curve(cells: pd.DataFrame, targets_us, by: Sequence[str] = (), rule: str = "reciprocal",
                   unchecked_as_held: bool = False) -> pd.DataFrame:
    """The capacity curve: per write rate (and ``by`` group, e.g. ``("host",)``) and read p99 target, the highest
    read IOPS whose read p99 meets the target (:func:`capacity_at`), from the cells whose loop held.

    cells: the tidy cell table (:data:`CELL_COLUMNS`, one row per cell and direction); targets_us: one read p99
    target or several (µs, each > 0); rule: the interpolation between the bracketing cells (:func:`interpolate`);
    unchecked_as_held: imported cells whose loop was never checked count (:func:`read_cells`).
    Returns ``by`` columns then :data:`CAPACITY_COLUMNS`, sorted by group and write rate, targets in the order
    given. IOPS in ``_iops``, MB/s decimal.
    """
    targets = [_float(t) for t in np.atleast_1d(np.asarray(targets_us, dtype=object))]
    for t in targets:
        if not t > 0:
            raise ValueError(f"targets_us: every read p99 target must be a number > 0 us, got {targets_us!r}")
    if rule not in RULES:
        raise ValueError(f"rule: {rule!r} is not one of {', '.join(RULES)}")
    rc = read_cells(cells, by, unchecked_as_held)
    keys = [*by, "write_offered_MBps"]
    rows = []
    for key, group in rc.groupby(keys, sort=True, dropna=False):
        head = dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True))
        for t in targets:
            rows.append({**head, "target_us": t, **capacity_at(group, t, rule)})
    out = pd.DataFrame(rows, columns=[*by, *CAPACITY_COLUMNS])
    for c in ("write_offered_MBps", "target_us", "read_capacity_iops", "ci_low_iops", "ci_high_iops"):
        out[c] = out[c].astype(float)
    out["cells_used"] = out["cells_used"].astype(int)
    return out


# --------------------------------------------------------------------------------------------------
# Words
# --------------------------------------------------------------------------------------------------


def _duration(us: float) -> str:
    """A target in words, 4 significant digits at most: '500 µs', '28.48 µs', '1 ms', '2.5 ms'."""
    return f"{us / 1000:.4g} ms" if us >= 1000 else f"{us:.4g} µs"


def _mbps(v: float) -> str:
    """A write rate in decimal MB/s, 4 significant digits at most: '40.96', '500', '1,311'."""
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.4g}"


def _rounded_iops(v: float) -> str:
    """An interpolated rate to 3 significant figures, with thousands separators ('41,200')."""
    return f"{float(f'{v:.3g}'):,.0f}" if abs(v) >= 100 else fmt_number(v)


def sentence(row: Mapping, subject: str = "this drive") -> str:
    """One sentence for a row of :func:`capacity_curve` (a dict, a Series or a CSV row read back), e.g. "at 500
    MB/s of writes this drive keeps read p99 ≤ 1 ms up to 41,200 IOPS (between 40,000 and 42,000)"; the write
    rate in decimal MB/s, the capacity to 3 significant figures, its bracket as measured. Censored rows say on
    which side of the grid the capacity lies; a row without a held cell says so."""
    w, t = _float(row["write_offered_MBps"]), _float(row["target_us"])
    where = "with no writes" if w == 0 else f"at {_mbps(w)} MB/s of writes"
    goal = f"read p99 ≤ {_duration(t)}"
    cap, lo, hi = _float(row["read_capacity_iops"]), _float(row["ci_low_iops"]), _float(row["ci_high_iops"])
    censored = "" if missing(row.get("censored")) else str(row["censored"])
    if censored == "above_grid":
        return (f"{where} {subject} keeps {goal} at every read rate whose loop held, up to {fmt_number(lo)} IOPS: its read "
                "capacity is higher")
    if censored == "below_grid":
        return (f"{where} {subject} misses {goal} already at {fmt_number(hi)} IOPS, the lowest read rate whose loop held: "
                "its read capacity is lower")
    if math.isnan(cap):
        used = 0 if missing(row.get("cells_used")) else int(row["cells_used"])
        held = f"too few cells of {subject} held ({used}, under {MIN_HELD_PCT:g} % of them)" if used \
            else f"no cell of {subject} held"
        note = "" if missing(row.get("note")) else str(row["note"])
        measured = f" (held: {note.split(HELD_AGAINST, 1)[1]})" if HELD_AGAINST in note else ""
        return f"{where} {held}: no read capacity for {goal}{measured}"
    return (f"{where} {subject} keeps {goal} up to {_rounded_iops(cap)} IOPS "
            f"(between {fmt_number(lo)} and {fmt_number(hi)})")


def map_tables(fio: pd.DataFrame, targets_us: list[float], generator_failed: dict | None = None) -> dict:
    """{'mixed': the mixed-load map's cells (the done rows of the tidy fio table ``fio``, its ``table``
    mixed-load-map), 'capacity': their read capacity per device (:func:`capacity_curve`)}. generator_failed:
    {host: why} of the devices whose load_generator_cpu failed for the map (memstor.analysis.validity.gate
    .generator_failed): their cells did not hold, whatever ioarrive's own checks said (S19-1cpu 1: a held cell's
    p99 quoted while the generator took 92.8 % of the one usable CPU)."""
    cells = fio[(fio["table"] == "mixed-load-map") & (fio["status"].astype(str) == "done")]
    if generator_failed:
        hit = cells["host"].astype(str).isin(list(generator_failed)) & cells["open_loop"].map(truthy)
        cells = cells.assign(open_loop=cells["open_loop"].mask(hit, False), held_note=cells.get(
            "held_note", pd.Series("", index=cells.index)).astype(object).mask(
            hit, [f"load_generator_cpu failed: {generator_failed[str(h)]}" for h in cells.loc[hit, "host"]]))
    return {"mixed": cells, "capacity": capacity_curve(cells, targets_us, by=("host",)) if len(cells)
            else pd.DataFrame(columns=["host", *CAPACITY_COLUMNS])}
