"""Report text, the open loop's generators (fio-load-latency): which generator issued each offered-rate point, what
it measured, where its loop held, and what the section says instead of findings when the loop did not hold.

The generator is read from the rows (column ``generator``; a table without it, or an empty cell, is fio's:
tables measured before ioarrive existed): ``ioarrive`` (memstor's arrival-driven generator: latency = response
time, completion − intended arrival) or ``fio`` (fio's rate mode: latency from fio's submission). Never assumed.
Pure: DataFrames in, markdown out. Units: IOPS, µs, % of X_ref."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from memstor.analysis.validity.gate import OPEN_LOOP_CHECKS, WAY_OUT
from memstor.core.fmt import md_escape
from memstor.core.schema import missing, truthy
from memstor.report.text.openloop_causes import cause_sentences, way_out

#: The generators of the offered rates (memstor.experiments._load_ioarrive.GENERATORS), in the order the report
#: names them.
IOARRIVE, FIO = "ioarrive", "fio"
GENERATORS = (IOARRIVE, FIO)
#: A point held its rate when achieved / offered stayed within this band (%; DESIGN.md's ±5 %, the family's rule).
RATE_BAND_PCT = (95.0, 105.0)
#: The reference the offered rates are shares of, as every open-loop text and figure names it.
X_REF = "X_ref"


def generators(df: pd.DataFrame | None) -> list[str]:
    """Per row of `df`, the generator that issued it: ``ioarrive`` or ``fio`` (no ``generator`` column, or an
    empty cell: fio — tables measured before the column existed are fio's; another name is kept as written)."""
    if df is None or len(df) == 0:
        return []
    if "generator" not in df.columns:
        return [FIO] * len(df)
    return [FIO if missing(v) else str(v).strip() for v in df["generator"]]


def ordered(names) -> list[str]:
    """Generator names in the report's order (ioarrive, fio, then others as met)."""
    seen = list(dict.fromkeys(names))
    return [g for g in GENERATORS if g in seen] + [g for g in seen if g not in GENERATORS]


def held_points(df: pd.DataFrame) -> np.ndarray:
    """Per row, whether the loop held there: its generator's ``open_loop`` flag is true AND achieved / offered is
    within RATE_BAND_PCT (the validity check's own rule: a flag beside an overshoot is not believed) AND the
    workload was not gated as a whole (``valid`` False, memstor.analysis.validity.gate). An unknown flag
    counts as held only in a table the gate has not seen (no ``valid`` column: the bare curve table)."""
    n = len(df)
    if n == 0:
        return np.zeros(0, dtype=bool)
    if "open_loop" in df.columns:
        held = np.array([truthy(v) for v in df["open_loop"]], dtype=bool)
        unknown = np.array([missing(v) for v in df["open_loop"]], dtype=bool)
        held |= unknown & ("valid" not in df.columns)
    else:
        held = np.ones(n, dtype=bool)
    pct = _achieved_pct(df)
    held &= ~(np.isfinite(pct) & ((pct < RATE_BAND_PCT[0]) | (pct > RATE_BAND_PCT[1])))
    if "valid" in df.columns:
        held &= ~df["valid"].eq(False).to_numpy(bool)
    return held


def failed_points(df: pd.DataFrame) -> np.ndarray:
    """Per row, whether the loop is known to have failed there (its ``open_loop`` flag false, or achieved /
    offered outside RATE_BAND_PCT) — as against not shown to hold (flag unknown)."""
    if len(df) == 0:
        return np.zeros(0, dtype=bool)
    flag = np.array([not missing(v) and not truthy(v) for v in df["open_loop"]], dtype=bool) \
        if "open_loop" in df.columns else np.zeros(len(df), dtype=bool)
    pct = _achieved_pct(df)
    return flag | (np.isfinite(pct) & ((pct < RATE_BAND_PCT[0]) | (pct > RATE_BAND_PCT[1])))


def _achieved_pct(df: pd.DataFrame) -> np.ndarray:
    """achieved / offered (%) per row: ``achieved_pct``, else from the IOPS columns; NaN where neither."""
    pct = pd.to_numeric(df["achieved_pct"], errors="coerce") if "achieved_pct" in df.columns \
        else pd.Series(np.nan, index=df.index)
    if {"achieved_iops", "offered_iops"} <= set(df.columns):
        off = pd.to_numeric(df["offered_iops"], errors="coerce")
        pct = pct.fillna(100.0 * pd.to_numeric(df["achieved_iops"], errors="coerce") / off.where(off > 0))
    return pct.to_numpy(float)


def u_label(u) -> str:
    """An offered load (% of X_ref) as the figures label it: 50 -> 'u50'; 'u?' when missing."""
    try:
        f = float(u)
    except (TypeError, ValueError):
        return "u?"
    return "u?" if f != f else f"u{f:g}"


def where_text(load: pd.DataFrame, named: bool) -> str:
    """'randread, randwrite', or with `named` (several devices in the data) 'dev-a randread, dev-b randwrite', of
    the rows' workloads."""
    pairs = list(dict.fromkeys(zip(load["host"].astype(str), load["rw"].astype(str))))
    return ", ".join(f"{md_escape(h)} {rw}" if named else rw for h, rw in pairs)


#: What each generator measures, said once per generator present (markdown; {where}: its workloads, {held}: at how
#: many of its offered rates the loop held).
MEASURED = {
    IOARRIVE: ("**Measured with ioarrive** ({where}; the loop held at {held}): every I/O issued at its intended "
               "arrival time (Poisson) whatever is in flight; latency = response time, completion − intended arrival, "
               "the generator's lag (submission − intended arrival) included, not hidden. A rate holds when ioarrive's "
               "own checks pass: achieved within ±5 % of offered, its issued arrivals Poisson (exponential gaps, no "
               "trend, independence), p99 lag ≤ max(10 % of the p99 response, 20 µs)."),
    FIO: ("**Measured with fio's rate mode** ({where}; the loop held at {held}): `rate_iops`, "
          "`rate_process=poisson`; latency from fio's own submission, not from the intended arrival. Inline mode (the "
          "default) waits for the I/O in flight before each rate sleep, so arrivals bunch behind completions; offload "
          "mode submits from another thread, whose rate process may deliver more than asked. {mode}A rate holds when "
          "achieved within ±5 % of offered and fio's arrivals were seen Poisson at that load."),
}


def measured_sentences(load: pd.DataFrame | None) -> list:
    """What was measured, one paragraph per generator in the rows (ioarrive, fio; column ``generator``, absent or
    empty: fio): how it issues arrivals, what its latency is, when a rate counts as held, and at how many of its
    offered rates the loop held (:func:`held_points`; 'not recorded' where the flag is unknown)."""
    if load is None or len(load) == 0:
        return []
    gens = np.array(generators(load), dtype=object)
    held = held_points(load.assign(valid=True))  # the points themselves: an unknown flag is not a held loop
    known = np.array([not missing(v) for v in load["open_loop"]], dtype=bool) if "open_loop" in load.columns \
        else np.zeros(len(load), dtype=bool)
    out = []
    for gen in ordered(gens):
        sel = gens == gen
        if not (sel & known).any():
            count = f"whether it held was not recorded at its {int(sel.sum())} offered rates"
        else:
            count = f"{int((held & sel).sum())} of {int(sel.sum())} offered rates"
            if (sel & ~known).any():
                count += f", not recorded at {int((sel & ~known).sum())}"
        template = MEASURED.get(gen, "**Measured with {gen}** ({where}; the loop held at {held}).")
        if count.startswith("whether"):
            template = template.replace("the loop held at {held}", "{held}")
        out.append(template.format(where=where_text(load[sel], load["host"].nunique() > 1), held=count,
                                   gen=md_escape(gen), mode=mode_sentence(load[sel])))
    return out


def mode_sentence(g: pd.DataFrame) -> str:
    """'This run used offload mode: 108–175 % of offered achieved. ' — fio's submit mode of these rows (column
    ``submit_mode``) and what they achieved; 'fio's submit mode was not recorded. ' without it (fifth read R-def
    p8: the text said offload's overshoot was 'not measured in this run' of offload points at 108-175 %; R-1cpu
    C10: it cited fio-3.42 in a fio-3.33 run)."""
    modes = list(dict.fromkeys(str(v) for v in g.get("submit_mode", pd.Series(dtype=object)).dropna()))
    if not modes:
        return "fio's submit mode was not recorded. "
    pct = _achieved_pct(g)
    got = (f": {np.nanmin(pct):.0f}–{np.nanmax(pct):.0f} % of offered achieved" if np.isfinite(pct).any() else "")
    return f"This run used {' and '.join(modes)} mode{got}. "


#: The way out of an open loop that did not hold, per generator (what the gate's own way out says is fio's).
NOT_OPEN_WAY_OUT = {
    IOARRIVE: "For an open loop: what delayed ioarrive's submissions (the I/O path's queue, the CPUs or the machine's "
              "pauses; §4.4 says per workload which its columns support) decides the remedy; until then read the "
              "queue-depth sweep's closed-loop curve.",
    FIO: "For an open loop: memstor's own generator (`generator: ioarrive`, the default), which issues every I/O at "
         "its intended arrival; until then read the queue-depth sweep's closed-loop curve.",
}


#: Ways out the gate wrote before (tables read back from earlier runs still end with them).
LEGACY_WAY_OUT = {"open_loop_held": ("ioarrive (generator: ioarrive) on a quieter machine, or fio's rate mode with fewer "
                                     "jobs per rate (its inline submission cannot keep arrivals open here); until then "
                                     "read the closed-loop curve of the queue-depth sweep",)}


def split_reason(reason: str) -> tuple[str, list[tuple[str, str]]]:
    """The gate's not_valid reason (memstor.analysis.validity.gate.open_loop_failures: 'not valid: <first
    failing check's evidence>; <check>: <first clause>; ...; <way out>') as (the first check's name, [(check,
    evidence)]) with the way out taken off; ('', [('', reason)]) when it is not of that form."""
    text = reason.removeprefix("not valid: ")
    ways = [(c, w) for c in OPEN_LOOP_CHECKS for w in (WAY_OUT[c], *LEGACY_WAY_OUT.get(c, ()))]
    first, way = next(((c, w) for c, w in ways if text.endswith(f"; {w}")), ("", ""))
    if not first:
        return "", [("", text)]
    text = text[: -len(f"; {way}")]
    names = "|".join(re.escape(c) for c in OPEN_LOOP_CHECKS)
    pieces = re.split(rf"; ({names}): ", text)
    out = [(first, pieces[0])] + [(pieces[i], pieces[i + 1]) for i in range(1, len(pieces) - 1, 2)]
    return first, out


def held_summary(g: pd.DataFrame) -> str:
    """Where the loop held and where not, from the workload's rows, in its generator's terms: 'the loop held at
    k of n offered rates; at u10-u50 the rate was met within ±5 % but ...; u70-u98 achieved 0-93 % ...'."""
    held = held_points(g.assign(valid=True)) if len(g) else np.zeros(0, dtype=bool)  # the points themselves
    pct = _achieved_pct(g)
    utils = pd.to_numeric(g["utilisation_pct"], errors="coerce").to_numpy(float)
    gens = set(generators(g))
    inside = np.isfinite(pct) & (pct >= RATE_BAND_PCT[0]) & (pct <= RATE_BAND_PCT[1])
    parts = [f"the loop held at {int(held.sum())} of {len(g)} offered rates"]
    unknown = np.array([missing(v) for v in g["open_loop"]], dtype=bool) if "open_loop" in g.columns \
        else np.zeros(len(g), dtype=bool)
    if unknown.any():
        parts[0] += (f" ({int(unknown.sum())} not recorded: no arrival times"
                     + (", fio < 3.31 writes none)" if gens == {FIO} else ")"))

    order = np.argsort(np.where(np.isfinite(utils), utils, np.inf), kind="stable")

    def span(mask) -> str:
        """The offered loads of `mask`, runs of neighbours (in offered order) as 'u10–u50': 'u10–u50, u80–u90'."""
        runs, cur = [], []
        for i in order:
            if mask[i] and np.isfinite(utils[i]):
                cur.append(utils[i])
            elif cur:
                runs.append(cur)
                cur = []
        runs += [cur] if cur else []
        return ", ".join(u_label(r[0]) if len(r) == 1 else f"{u_label(r[0])}–{u_label(r[-1])}" for r in runs)

    met = inside & ~held & ~unknown
    if met.any():
        why = ("another of ioarrive's checks failed (arrival tests, p99 lag bound or drain)" if gens == {IOARRIVE}
               else "fio's arrivals were gated by completions" if gens == {FIO} else "the generator's checks failed")
        parts.append(f"at {span(met)} the rate was met within ±5 % but {why}")
    out = np.isfinite(pct) & ~inside
    if out.any():
        lo, hi = float(np.nanmin(pct[out])), float(np.nanmax(pct[out]))
        rng = f"{lo:.0f} %" if round(lo) == round(hi) else f"{lo:.0f}–{hi:.0f} %"
        what = "more than offered" if lo > RATE_BAND_PCT[1] else "less than offered" if hi < RATE_BAND_PCT[0] \
            else "outside ±5 % of offered"
        parts.append(f"at {span(out)} it achieved {rng} of the offered rate ({what})")
    return "; ".join(parts)


#: A point's name in a check's evidence ('at randread-bs4k-u98-ioarrive-r110428-...-f4g'), said by its offered load.
_POINT_NAME = re.compile(r" at [A-Za-z0-9_]+-bs[^\s;,)]*?-u(\d+(?:\.\d+)?)-[^\s;,)]+")


def not_open_sentence(reason: str, g: pd.DataFrame | None = None, host_rows: pd.DataFrame | None = None,
                      causes: bool = True) -> str:
    """Where the open loop of one workload held and where not (from the rows, in the generator's terms) and the
    failed checks' evidence (the gate's reason without its way out; its open_loop_held and open_loop_rate parts
    said by the rows instead, X_max named X_ref, a point named by its offered load) — markdown; with ioarrive, what
    its own columns say of why and the way out that follows (memstor.report.text.openloop_causes); what the
    latencies are follows once for all such workloads (:func:`not_open_closing`); `host_rows`: every workload's rows
    of the device (a pause that a held point of any workload also met explains no late point); ``causes`` False: without
    the why and the way out (:func:`cause_paragraph` gives them apart, a paragraph the PDF may leave to the HTML)."""
    g = g if g is not None else pd.DataFrame()
    _, checks = split_reason(reason)
    rows_said = len(g) > 0 and "utilisation_pct" in g.columns
    # open_loop_held and open_loop_rate say where the loop held and what was achieved: the rows say it already
    evidence = [(c, e) for c, e in checks if not (rows_said and c in ("open_loop_held", "open_loop_rate"))]
    said = (held_summary(g) + ".") if rows_said else ""
    said = said[:1].upper() + said[1:]
    if evidence:
        failed = "; ".join(f"{c}: {e}" if c else e for c, e in evidence).replace("X_max", X_REF)
        said += " Failed: " + _POINT_NAME.sub(r" at u\1", failed) + "."
    if causes and rows_said:  # what its own columns say of why, and the way out
        said += f" {cause_paragraph(g, host_rows)}"
    return said.strip()


def cause_paragraph(g: pd.DataFrame, host_rows: pd.DataFrame | None = None) -> str:
    """What ioarrive's own columns say of why one workload's loop did not hold, and the way out that follows
    (memstor.report.text.openloop_causes); '' for fio's rows or without rows."""
    if g is None or g.empty or "utilisation_pct" not in g.columns or set(generators(g)) != {IOARRIVE}:
        return ""
    why, causes = cause_sentences(g, held_points(g.assign(valid=True)), host_rows)
    return f"{why} {way_out(causes, g)}".strip()


def not_open_closing(workloads: list[str], gen: str, littles: bool = False, causes_inline: bool = True) -> str:
    """The one paragraph after the workloads whose open loop did not hold with generator `gen`: what the latencies
    in the table are, that no SLO answer, model or comparison is given, and the way out (markdown). `littles`:
    a littles_law failure is among their evidence (with ioarrive, a backlog inside the generator)."""
    said = f"**Not an open loop: {', '.join(workloads)} ({md_escape(gen)}).** "
    if gen == IOARRIVE:
        said += ("Their response times count from the intended arrivals, the generator's lateness included: with its "
                 "checks failed they are not the device's response to the offered Poisson load")
        if littles:
            said += " (X·R above the cap counts arrivals not yet issued: a backlog inside the generator)"
    else:
        said += "Their latencies are measured, but not at the offered rates from open (Poisson) arrivals"
    # S19-bare 5: a held rate of the same workload does get its comparison (and its SLO answer)
    said += ("; no SLO answer, queueing model or open-against-closed comparison is given from the rates that did not "
             "hold.")
    if gen == IOARRIVE:  # each workload's paragraph gave the way out its own columns support (openloop_causes)
        return said + (" Each workload's paragraph above names what delayed the submissions, where its columns show it."
                       if causes_inline else " Why each loop did not hold, where its columns show it: the paragraphs "
                       "'why the loop did not hold' (in the HTML report where the PDF leaves them out).")
    return said + " " + NOT_OPEN_WAY_OUT.get(gen, NOT_OPEN_WAY_OUT[FIO])
