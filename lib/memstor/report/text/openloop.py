"""Report text, open loop (fio-load-latency for people): memstor.analysis.load_latency's curve_table (load),
slo, models and unloaded as display tables with short headers and units, and one paragraph per device x
workload (markdown). Units: IOPS, µs, % of X_ref.

What was measured is said per generator, from the rows (memstor.report.text.loadgen: ``ioarrive``, memstor's
arrival-driven generator, latency = response time from the intended arrival; or ``fio``, fio's rate mode, latency
from fio's submission; a table without the ``generator`` column is fio's).
**X_ref** is the reference the offered rates are shares of (``x_max_iops``: the best IOPS of the workload in the
queue-depth and block-size sweeps, ``x_max_source`` says where from) — named apart from the knee's fitted ceiling X_fit and the sweep's
best X_best (memstor.report.text.queueing)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from memstor.analysis.load_latency import (
    BELOW_NOT_HELD,
    LOWER_MISSED,
    NOT_MONOTONE,
    QUEUE_DEPTH,
    answered_from_held,
    held_mask,
    lowest_held,
)
from memstor.analysis.openloop_families import FAMILIES_DISAGREE
from memstor.analysis.spread import points_said, sweep_beaten
from memstor.analysis.validity.gate import not_valid_reasons
from memstor.core.fmt import fmt_number, md_escape
from memstor.core.schema import truthy
from memstor.report.text.loadgen import (
    FIO,
    IOARRIVE,
    RATE_BAND_PCT,
    X_REF,
    cause_paragraph,
    generators,
    measured_sentences,
    not_open_closing,
    not_open_sentence,
    ordered,
)
from memstor.report.text.openloop_causes import arrivals_cost, engines, ratio_cell
from memstor.report.text.openloop_cells import _ol_float, _ol_fmt, _ol_rows, _ol_target, _ol_u
from memstor.report.text.openloop_models import _model_sentences

#: An open loop faster than the closed loop by at most this (%) is called small.
OPEN_CLOSED_SMALL_PCT = 10.0


def _ol_flag_words(over, ceil, open_loop=None, generator: str = FIO, achieved_pct=None) -> str:
    """The flags of one open-loop point as words ('ok' when none is set). open_loop False: above 105 % of the offered
    rate, the generator delivered more than offered (fio's offload mode); else for fio, its inline submission gated
    the arrivals (rate per job x latency above memstor.measure.openloop.INLINE_MAX_LOAD); for ioarrive, one of its
    own checks failed (rate, arrival tests, lag bound, drain). The ceiling is fio's per-job iodepth, or ioarrive's
    cap on I/Os in flight."""
    not_open = open_loop is not None and open_loop == open_loop and not truthy(open_loop)
    mine = generator == IOARRIVE
    pct = _ol_float(achieved_pct)
    why = ("more than offered" if pct > RATE_BAND_PCT[1] else "ioarrive's checks failed" if mine
           else "arrivals gated")
    words = [w for f, w in ((over, "overloaded"),
                            (ceil, "cap on I/Os in flight reached" if mine else "iodepth ceiling reached"),
                            (not_open, why))
             if truthy(f)]
    return ", ".join(words) or "ok"


LOAD_DISPLAY_COLUMNS = [
    "device", "workload", "generator", "offered load (% of X_ref)", "offered (IOPS)", "achieved (IOPS)",
    "achieved (% of offered)", "mean (µs)", "p50 (µs)", "p99 (µs)", "p99.9 (µs)", "flags", "CV of 1-s IOPS",
    "min 1-s IOPS (% of mean)", "closed loop at same IOPS (µs)", "open vs closed (%)", "X_ref (IOPS)", "n",
]


#: The fewest whole 1-s windows a point's CV of 1-s IOPS and lowest 1-s IOPS are printed from: the standard
#: deviation of k windows is itself uncertain by about 1 / sqrt(2 (k - 1)) (71 % at 2 windows, 35 % at 5), and
#: the lowest of 2 windows is one of two numbers, not a dip the run shows.
MIN_WINDOWS_1S = 5


def _per_second(values, windows, spec: str) -> list[str]:
    """A per-second statistic's cells: the value where its point had MIN_WINDOWS_1S whole 1-s windows or more
    (or the count is unknown), else "– (k windows)"."""
    out = []
    for v, k in zip(values, windows):
        k = _ol_float(k)
        if k == k and k < MIN_WINDOWS_1S:
            out.append(f"– ({int(k)} window{'s' if int(k) != 1 else ''})")
        else:
            out.append("–" if _ol_float(v) != _ol_float(v) else format(_ol_float(v), spec))
    return out


def windows_note(load: pd.DataFrame | None) -> str:
    """One sentence under the open-loop table where a point's per-second statistics are withheld (markdown): how
    many points, their window counts, the minimum and why; "" where none is."""
    if load is None or len(load) == 0 or "windows_1s" not in load.columns:
        return ""
    k = pd.to_numeric(load["windows_1s"], errors="coerce")
    few = k[k < MIN_WINDOWS_1S]
    if few.empty:
        return ""
    counts = sorted({int(v) for v in few})
    said = " or ".join(str(c) for c in counts)
    return (f"CV of 1-s IOPS and min 1-s IOPS withheld at {len(few)} of {len(load)} points ({said} whole one-second "
            f"windows each; printed from {MIN_WINDOWS_1S}): the spread of k windows is itself uncertain by about "
            f"1/√(2(k − 1)) — ±71 % at 2 windows, ±35 % at 5 — and the lowest of so few windows is no dip the run "
            "shows. Longer points (runtime_s) give them.")


def load_display(load: pd.DataFrame) -> pd.DataFrame:
    """The open-loop curves (memstor.analysis.load_latency.curve_table) for people, one row per device x
    workload x offered rate: the generator (ioarrive: latencies are response times from the intended arrival;
    fio: from fio's submission), offered load (% of X_ref), offered and achieved IOPS (achieved also in % of
    offered), mean / p50 / p99 / p99.9 latency (µs), the flags as words (overloaded: achieved < 95 % of
    offered; iodepth ceiling reached (fio) / cap on I/Os in flight reached (ioarrive); more than offered: the
    generator delivered above 105 % of the offered rate; arrivals gated: fio's inline submission held arrivals back
    for completions; ioarrive's checks failed: the loop did not hold there), the coefficient of variation of the
    per-second IOPS and the lowest 1-s IOPS (% of the mean of the seconds) — withheld, with the count, for a point of
    fewer than MIN_WINDOWS_1S whole 1-s windows (:func:`windows_note` says why) —, the closed queue-depth loop's mean latency at the same IOPS (µs) with the open loop's
    difference to it (%), X_ref and n."""
    if load is None or len(load) == 0:
        return pd.DataFrame(columns=LOAD_DISPLAY_COLUMNS)
    ld = load.reset_index(drop=True)

    def col(name):
        return ld[name] if name in ld.columns else pd.Series([None] * len(ld))

    def formatted(values, spec):
        return [("–" if _ol_float(v) != _ol_float(v) else format(_ol_float(v), spec)) for v in values]

    gens = generators(ld)
    out = pd.DataFrame({
        "device": ld["host"].astype(str),
        "workload": ld["rw"],
        "generator": gens,
        "offered load (% of X_ref)": formatted(ld["utilisation_pct"], "g"),
        "offered (IOPS)": col("offered_iops").map(_ol_fmt),
        "achieved (IOPS)": col("achieved_iops").map(_ol_fmt),
        "achieved (% of offered)": formatted(col("achieved_pct"), ".1f"),
        "mean (µs)": col("lat_mean_us").map(_ol_fmt),
        "p50 (µs)": col("lat_p50_us").map(_ol_fmt),
        "p99 (µs)": col("lat_p99_us").map(_ol_fmt),
        "p99.9 (µs)": col("lat_p99_9_us").map(_ol_fmt),
        "flags": [_ol_flag_words(o, c, g, gen, p) for o, c, g, gen, p in zip(
            col("overloaded"), col("ceiling_reached"), col("open_loop"), gens, col("achieved_pct"))],
        "CV of 1-s IOPS": _per_second(col("iops_cv"), col("windows_1s"), ".3f"),
        "min 1-s IOPS (% of mean)": _per_second(col("min_1s_iops_pct"), col("windows_1s"), ".0f"),
        "closed loop at same IOPS (µs)": col("closed_lat_mean_us").map(_ol_fmt),
        "open vs closed (%)": formatted(col("open_vs_closed_pct"), "+.1f"),
        "X_ref (IOPS)": col("x_max_iops").map(_ol_fmt),
        "n": [("–" if _ol_float(v) != _ol_float(v) else int(_ol_float(v))) for v in col("n")],
    })
    return out[LOAD_DISPLAY_COLUMNS]


def _fio_target_cell(iops, depth, p99, target, cut_s=None, settled=None, run_iops=None,
                     missed: tuple = (None, None, None)) -> str:
    """fio's latency_target search (a closed loop: not the open loop's answer, beside it for comparison): 'IOPS (QD
    d; p99 X µs from fio's submission)', d per job; 'missed: its own p99 X µs' when its run missed the target; 'no
    answer: cut off ...' when the run (cut_s seconds) ended while the search still doubled; '–' without a run. A
    cell that met the target is set against the queue-depth sweep where that missed it at every depth (`missed`:
    its lightest depth, IOPS and completion p99 µs; :func:`_against_sweep`)."""
    if _ol_float(p99) == _ol_float(p99) and _ol_float(p99) > _ol_float(target):
        at = (f"{_ol_fmt(run_iops)} IOPS" if _ol_float(run_iops) == _ol_float(run_iops) else "") + (
            f" over its depth search up to QD {int(_ol_float(depth))}" if _ol_float(depth) == _ol_float(depth) else "")
        # S13-bare 7; S14-bare 3: the run's mean over fio's search (12.4 in flight of 4 x 8), not a rate at QD 8
        return f"missed: its own p99 {_ol_fmt(p99)} µs" + (f" ({at.strip()})" if at else "")
    if _ol_float(cut_s) == _ol_float(cut_s):
        cut = (f"cut off by its {_ol_float(cut_s):.0f}-s run at QD {int(_ol_float(depth))}, still doubling (no "
               "window had missed the target)")
        if _ol_float(run_iops) == _ol_float(run_iops) and _ol_float(p99) == _ol_float(p99):  # S11-loop 4
            return _against_sweep(f"≥ {_ol_fmt(run_iops)} (its run's p99 {_ol_fmt(p99)} µs; a lower bound: {cut})",
                                  *missed)
        return f"no answer: {cut}"
    if _ol_float(settled) == _ol_float(settled) and _ol_float(depth) == _ol_float(depth):
        return (f"no answer: its run averaged fio's depth search (at most {int(_ol_float(settled))} of its windows "
                f"at the final QD {int(_ol_float(depth))})")
    if _ol_float(iops) != _ol_float(iops):
        return "–"
    qd = "?" if _ol_float(depth) != _ol_float(depth) else int(_ol_float(depth))
    own = "" if _ol_float(p99) != _ol_float(p99) else f"; p99 {_ol_fmt(p99)} µs from fio's submission"
    return _against_sweep(f"{_ol_fmt(iops)} (QD {qd}{own})", *missed)


def _sweep_met(fio_iops, fio_p99, target, iops, qd, p99, mean=None, run_iops=None, experiment=None,
               same_missed=None) -> str:
    """'; the most IOPS of a closed QD sweep's point whose completion p99 met it: 30,953 (QD4, 420 µs; the
    submission time is not in it, so whether the total met it is not shown)' (fio's clat, no total-latency percentiles: S12-bare 5, S12-bare9 1;
    ', below its mean total latency, 67.9 µs' where the point's mean exceeds it) where fio's search gave no IOPS, its own
    run did not meet the target either (or there was none) and a depth of the sweep met it (S11-1cpu 12), or where the
    sweep met it above the IOPS fio's cell states (its answer, or its cut-off run's lower bound: S13-loop 7), else ''
    (S11-bare 12: beside a cut-off search whose 4-job run met 1 ms at 45,360 IOPS, the one-job sweep's 9,184 at QD1
    understated what the closed loop met). '... of a closed run whose ... (fio-rw-ratio's QD32, ...)' where
    another fresh experiment's run of the sweep's job met it highest (twelfth read S15-loop 1); then '; the same job
    missed it elsewhere (fio-rw-ratio: 160,309 IOPS, p99 3,195 µs): the closed runs disagree' where another run of
    that job missed it (``same_missed``, S21-loop 2)."""
    met = _ol_float(fio_p99) == _ol_float(fio_p99) and _ol_float(fio_p99) <= _ol_float(target)
    # the IOPS fio's cell states as met: its answer, or a cut-off run's lower bound where that run met the target
    stated = _ol_float(fio_iops) if _ol_float(fio_iops) == _ol_float(fio_iops) else (
        _ol_float(run_iops) if met else math.nan)
    if _ol_float(iops) != _ol_float(iops) or (met and stated != stated):
        return ""
    if stated == stated and not _ol_float(iops) > 1.005 * stated:
        return ""  # a sweep that met it above fio's figure is said too (S13-loop 7: '≥ 124,502' beside 129,387)
    below = (f", below its mean total latency, {_ol_fmt(mean)} µs"
             if _ol_float(mean) == _ol_float(mean) and _ol_float(mean) > _ol_float(p99) else "")
    other = isinstance(experiment, str) and experiment not in ("", QUEUE_DEPTH)
    who, at = ("closed run", f"{experiment}'s {qd}") if other else ("closed QD sweep's point", qd)
    disagree = (f"; the same job missed it elsewhere ({same_missed}): the closed runs disagree"
                 if isinstance(same_missed, str) and same_missed else "")
    if _ol_float(fio_p99) > _ol_float(target) and _ol_float(run_iops) < _ol_float(iops):  # S23-cpu1 4
        disagree += "; fio's latency_target run missed it at fewer IOPS (its completion p99 too): the closed runs disagree"
    # S20-cpu1 2: 'met it up to' read as every lower rate meeting it, while deeper or other runs below it missed
    return (f"; the most IOPS of a {who} whose completion p99 met it: {_ol_fmt(iops)} ({at}, {_ol_fmt(p99)} µs{below}; "
            f"the submission time is not in it, so whether the total met it is not shown){disagree}")  # S12-bare9 1


def _against_sweep(cell: str, qd, iops, p99) -> str:
    """A latency_target cell that met the target, where the queue-depth sweep missed it at every depth, its lightest
    (qd, iops, p99 µs) too: 'the closed runs disagree: fio's latency_target run met it (...), while the queue-depth
    sweep missed it from its lightest depth (QD1: 4,723 IOPS, completion p99 1,974 µs): no closed-loop bound is
    stated' (ninth read S12-1cpu9 1: '≥ 65,752' from one 2-s run beside a sweep that missed 1 ms from 4,723 IOPS up);
    the cell itself where the sweep met it somewhere (iops NaN)."""
    if _ol_float(iops) != _ol_float(iops):
        return cell
    return (f"the closed runs disagree: fio's latency_target run met it ({cell}), while the queue-depth sweep missed "
            f"it from its lightest depth ({qd}: {_ol_fmt(iops)} IOPS, completion p99 {_ol_fmt(p99)} µs): no "
            "closed-loop bound is stated")


def _slo_cell(max_iops, censored, not_valid="", censored_by="", held=None, points=None, lower_missed="") -> str:
    """The SLO answer of one target: the rate, '≥ rate (censored: why)', 'none ...' or 'not valid ...'; from
    the held points alone ('; from the 3 of 8 rates that held') when some did not hold; 'no range: ...' where a lower
    rate that did not hold missed it (``lower_missed``, S21-bare 4)."""
    v, h, m = _ol_float(max_iops), _ol_float(held), _ol_float(points)
    first = not_valid.removeprefix("not valid: ").split(";")[0].strip() if isinstance(not_valid, str) else ""
    if v != v and h == 0:  # no rate held: that first (S15-bare 7), then a check that failed besides (S11-loop 12)
        none = f"no answer: none of the {int(m) if m == m else ''} rates held".replace("the  rates", "the rates")
        return none + (f"; {first}" if first and not first.startswith("not checked") else "")
    if isinstance(not_valid, str) and not_valid:
        if not_valid.startswith("not valid: not checked"):  # open_loop_held unchecked, nothing failed
            return "withheld: the open loop was not checked (no arrival times recorded; no answer)"
        return f"no answer: the open loop did not hold ({first})" if first else "no answer: the open loop did not hold"
    some = f"{int(h)} of {int(m)} rates that held" if h == h and m == m and h < m else ""
    if censored_by == NOT_MONOTONE:
        return "none: the held rates meet it, miss it and meet it again (not monotone)"
    if censored_by == BELOW_NOT_HELD:
        return f"not determined: the lowest rate that held misses it, the lower ones did not hold (from the {some})"
    if censored_by == FAMILIES_DISAGREE:
        return "withheld: the held rates of fio-load-latency and the mixed-load map disagree (below)"
    if censored_by == LOWER_MISSED and v == v and isinstance(lower_missed, str):
        return (f"no range: the held rates met it at {fmt_number(v)}, but a lower rate that did not hold missed it "
                f"({lower_missed})" + (f"; from the {some})" if some else ")"))
    if v != v:
        return f"none: even the lowest {'held ' if some else ''}rate misses it" + (f" (from the {some})" if some else "")
    if truthy(censored):
        why = censored_by if isinstance(censored_by, str) and censored_by else "every point met it"
        return f"≥ {fmt_number(v)} (censored: {why}" + (f"; from the {some})" if some else ")")
    return fmt_number(v) + (f" (from the {some})" if some else "")


def slo_display(slo: pd.DataFrame) -> pd.DataFrame:
    """The SLO table (memstor.analysis.load_latency.slo) for people: device, workload, the p99 target (µs)
    and the highest achieved IOPS meeting it (interpolated between measured rates); '≥ X (censored: every
    point met it)' when the limit lies beyond the highest measured rate, 'none: even the lowest rate
    misses it' when no rate meets it; beside it fio's own latency_target search at the same target (its
    IOPS and the queue depth it ended at) and the ratio max IOPS / fio's."""
    cols = ["device", "workload", "p99 target (µs)", "max IOPS meeting it", "fio latency_target, closed loop (IOPS, depth per job, its p99)",
            "ratio"]
    if slo is None or len(slo) == 0:
        return pd.DataFrame(columns=cols)
    s = slo.reset_index(drop=True)

    def col(name):
        return s[name] if name in s.columns else pd.Series([None] * len(s))

    sweep = [_sweep_met(*a) for a in zip(col("fio_latency_target_iops"), col("fio_latency_target_p99_us"),
                                         s["target_p99_us"], col("closed_sweep_iops"), col("closed_sweep_qd"),
                                         col("closed_sweep_p99_us"), col("closed_sweep_lat_mean_us"),
                                         col("fio_latency_run_iops"), col("closed_sweep_experiment"),
                                         col("closed_sweep_same_missed"))]
    missed = zip(col("closed_sweep_missed_qd"), col("closed_sweep_missed_iops"), col("closed_sweep_missed_p99_us"))
    fio = [_fio_target_cell(*a) + swept for *a, swept in zip(
        col("fio_latency_target_iops"), col("fio_latency_depth"), col("fio_latency_target_p99_us"),
        s["target_p99_us"], col("fio_latency_cut_off_s"), col("fio_latency_settled_windows"),
        col("fio_latency_run_iops"), missed, sweep)]
    return pd.DataFrame({
        "device": s["host"].astype(str), "workload": s["rw"],
        "p99 target (µs)": s["target_p99_us"].map(_ol_target),
        "max IOPS meeting it": [_slo_cell(*a) for a in zip(s["max_iops"], s["censored"], col("not_valid"),
                                                            col("censored_by"), col("held_points"), col("points"),
                                                            col("lower_missed"))],
        "fio latency_target, closed loop (IOPS, depth per job, its p99)": fio,
        "ratio": [ratio_cell(*a) for a in zip(col("ratio_to_fio"), col("ioengine"), col("fio_latency_ioengine"))],
    })[cols]


def _lowest_words(g: pd.DataFrame) -> tuple[str, str]:
    """(noun, aside) of the lowest rate an SLO nobody met was missed at: 'offered rate' where every rate held (or
    none was flagged), else 'rate that held' (S10-bare 2: 'the lowest offered rate (u90 ...)' where u90 was the
    only rate of eight that held) with an aside on the rates that did not hold and their p99 (µs)."""
    held = held_mask(g)
    if held is None or held.all() or not held.any():
        return "offered rate", ""
    only = "the only one; " if held.sum() == 1 else ""
    p99 = pd.to_numeric(g.loc[~held, "lat_p99_us"], errors="coerce").dropna()
    if p99.empty:
        return "rate that held", f"; {only}{int((~held).sum())} did not hold"
    span = _ol_fmt(p99.min()) + ("" if p99.min() == p99.max() else f"–{_ol_fmt(p99.max())}")
    return "rate that held", f"; {only}the {len(p99)} that did not hold had p99 {span} µs"


def _slo_sentences(s: pd.DataFrame, g: pd.DataFrame, x_max: float) -> list:
    """The SLO answer of one device x workload, one sentence per p99 target."""
    out = []
    low = lowest_held(g)  # the lowest rate cited is the lowest that held (third read S7-bare M-5)
    for _, r in s.iterrows():
        t = _ol_target(r["target_p99_us"])
        v = _ol_float(r["max_iops"])
        share = f" ({100 * v / x_max:.0f} % of {X_REF} = {fmt_number(x_max)} IOPS)" if v == v and x_max > 0 else ""
        if r.get("censored_by") == NOT_MONOTONE:
            out.append(f"p99 ≤ {t} µs has no single answer: the rates that held meet it, miss it and meet it again.")
        elif r.get("censored_by") == FAMILIES_DISAGREE:
            out.append(f"p99 ≤ {t} µs: no answer, the two open-loop experiments' held points disagree "
                       f"({r.get('families')}).")
        elif v != v:
            noun, aside = _lowest_words(g)
            where = ""
            if low is not None:
                where = (f" ({_ol_u(low['utilisation_pct'])}: {_ol_fmt(low['achieved_iops'])} IOPS, p99 "
                         f"{_ol_fmt(low['lat_p99_us'])} µs{aside})")
            out.append(f"p99 ≤ {t} µs is missed even at the lowest {noun}{where}: " + (
                "the rates below it did not hold, so whether a lower rate meets it is not determined."
                if r.get("censored_by") == BELOW_NOT_HELD else "no measured rate meets it."))
        elif r.get("censored_by") == LOWER_MISSED:  # S21-bare 4: '≥ 25,226' from u30 while u10 missed it
            out.append(f"p99 ≤ {t} µs was met by the held rates at {fmt_number(v)} IOPS{share}, but a lower rate whose "
                       f"loop did not hold missed it ({r.get('lower_missed')}): no range of rates is shown to meet it.")
        elif truthy(r["censored"]) and r.get("censored_by") == "the next rate did not hold":
            out.append(f"p99 ≤ {t} µs held up to **≥ {fmt_number(v)} IOPS**{share}, the highest rate whose open "
                       "loop held and met it; the next rate's loop did not hold, so the limit is not measured "
                       "(a lower bound).")
        elif truthy(r["censored"]):
            out.append(f"p99 ≤ {t} µs held at every measured rate, up to **≥ {fmt_number(v)} IOPS**{share}: "
                       "the limit lies beyond the highest rate measured (censored).")
        elif _before_overload(g, v):
            out.append(f"The highest rate that keeps p99 ≤ {t} µs is **{fmt_number(v)} IOPS**{share}, the last "
                       "measured rate before an overloaded point (an overloaded point counts as a miss).")
        else:
            basis = "held rate" if _ol_float(r.get("held_points")) < _ol_float(r.get("points")) else "rate"
            out.append(f"The highest rate that keeps p99 ≤ {t} µs is about **{fmt_number(v)} IOPS**{share}, "
                       f"interpolated between the last {basis} that met it and the first that missed it.")
        fam = r.get("families")  # what the mixed-load map's held one-direction cells say of it (openloop_families)
        if isinstance(fam, str) and fam and r.get("censored_by") != FAMILIES_DISAGREE:
            out[-1] = out[-1][:-1] + f"; {fam}."
        if v == v:
            out += _fio_target_sentence(r, t, v)
    return out


def _fio_target_sentence(r: pd.Series, target: str, max_iops: float) -> list:
    """fio's own latency_target search beside the SLO answer, and why they differ when fio's is higher: the
    answer above is for Poisson arrivals (an open loop), fio's for a closed loop it throttles by queue depth."""
    fio_iops, depth = _ol_float(r.get("fio_latency_target_iops")), _ol_float(r.get("fio_latency_depth"))
    if fio_iops != fio_iops:
        return []
    qd = f"QD {int(depth)}" if depth == depth else "its queue depth"
    said = (f"fio's own latency_target search (a closed loop, {qd}) kept p99 ≤ {target} µs at "
            f"{fmt_number(fio_iops)} IOPS ({fio_iops / max_iops:.2f}× the answer above)")
    if fio_iops > max_iops * 1.1 and not truthy(r.get("censored")):
        return [said + ": the answer above is for random (Poisson) arrivals, which queue behind each other in "
                "bursts; a closed loop admits an I/O only when one completes and queues less, so it keeps the "
                "target at a higher rate. Quote each with its arrival process."]
    return [said + "."]


def _before_overload(g: pd.DataFrame, max_iops: float) -> bool:
    """The SLO answer is a measured steady rate with an overloaded point above it (slo_max_iops then stops
    at that rate instead of interpolating)."""
    if g.empty or "overloaded" not in g.columns:
        return False
    x = pd.to_numeric(g["achieved_iops"], errors="coerce").to_numpy(float)
    over = np.array([truthy(v) for v in g["overloaded"]], dtype=bool)
    at = np.isclose(x, max_iops, rtol=1e-9, atol=1e-6) & ~over
    return bool(at.any() and (over & (x >= max_iops)).any())


def _unloaded_sentence(u: pd.DataFrame) -> list:
    """The unloaded latency and, when flagged, the low-rate anomaly."""
    if u.empty:
        return []
    r = u.iloc[0]
    lat, used = _ol_float(r.get("lat_unloaded_us")), _ol_u(100 * _ol_float(r.get("util_used")))
    if lat != lat:
        return []
    if truthy(r.get("low_rate_anomaly")):
        return [f"Low-rate anomaly: at the lowest rate ({_ol_u(100 * _ol_float(r.get('util_lowest')))}) the mean "
                f"latency is {_ol_fmt(r.get('lat_lowest_rate_us'))} µs, "
                f"{_ol_float(r.get('low_rate_excess_pct')):.0f} % above the {fmt_number(lat)} µs at {used}. More "
                "latency at less load is not queueing (between sparse I/Os a drive's power states or the CPU's idle "
                f"states can add it; nothing here measured which), so the unloaded latency is taken at {used}."]
    return [f"Mean latency at the lightest load that held: {fmt_number(lat)} µs (at {used} of X_ref, response "
            "time from the intended arrival, the generator's lag included; not an idle latency)."]


#: The per-generator sentences of a workload's flagged points ({where}: their offered loads).
_CEILING_FIO = ("A job's queue was at its iodepth ceiling in more than 1 % of its submissions at {where} (× in the "
                "figure; a job's queue, not the device's: it says nothing of saturation): arrivals then waited for a "
                "free slot before fio issued them, time fio does not count (coordinated omission), so the latency "
                "there is a lower bound.")
_CEILING_IOARRIVE = ("ioarrive's cap on I/Os in flight was reached at {where}: it stopped issuing there and marked "
                     "the run overloaded (its response times still count from the intended arrivals).")
_NOT_OPEN_FIO = ("Arrivals were gated at {where}: fio's inline submission waits for the I/O in flight before each "
                 "rate sleep, so once rate per job x latency exceeds 0.5 the arrivals bunch up behind completions: "
                 "the offered rate is still delivered, but the loop there is partly closed and the latency a lower "
                 "bound.")
_NOT_OPEN_IOARRIVE = ("ioarrive's own checks failed at {where} (its rate, arrival tests, lag bound or drain): the "
                      "loop did not hold there, and those response times include the generator's lateness.")


def _stress_sentences(g: pd.DataFrame, modelled: bool = True) -> list:
    """Overloaded points, points at the generator's I/O ceiling, and points whose loop did not hold, in its terms
    (fio: iodepth, inline gating; ioarrive: its cap, its checks: not `modelled`, the held summary says them)."""
    out = []
    gens = np.array(generators(g), dtype=object)
    over = g[[truthy(v) for v in g["overloaded"]]] if "overloaded" in g.columns else g.iloc[0:0]
    if len(over):
        where = ", ".join(f"{_ol_u(r['utilisation_pct'])} ({_ol_float(r.get('achieved_pct')):.1f} % achieved)"
                          for _, r in over.iterrows())
        out.append(f"Overloaded (achieved < 95 % of the offered rate) at {where}: the device (or the I/O path to "
                   "it) did not keep up, so the queue grew for the whole run; their latency depends on the run's "
                   "length, not on a steady state" + (", and the model fit leaves them out" if modelled else "")
                   + ". X_ref is the best of short closed-loop runs: whether the device sustains it for longer they "
                   "do not show.")
    ceil = np.array([truthy(v) for v in g["ceiling_reached"]], dtype=bool) if "ceiling_reached" in g.columns \
        else np.zeros(len(g), dtype=bool)
    flag = np.array([v is not None and v == v and not truthy(v) for v in g["open_loop"]], dtype=bool) \
        if "open_loop" in g.columns else np.zeros(len(g), dtype=bool)
    for mask, gen, sentence in ((ceil, FIO, _CEILING_FIO), (ceil, IOARRIVE, _CEILING_IOARRIVE),
                                (flag, FIO, _NOT_OPEN_FIO), (flag & modelled, IOARRIVE, _NOT_OPEN_IOARRIVE)):
        at = mask & (gens == gen)
        if at.any():
            out.append(sentence.format(where=", ".join(_ol_u(u) for u in g.loc[at, "utilisation_pct"])))
    return out


def _open_closed_sentences(g: pd.DataFrame) -> list:
    """Where the open loop is faster than the closed loop at the same IOPS, why it should not be, and what
    explains it (briefly for a small gap, in full for a large one)."""
    if "open_vs_closed_pct" not in g.columns:
        return []
    diff = pd.to_numeric(g["open_vs_closed_pct"], errors="coerce")
    if diff.notna().sum() == 0:
        return []
    faster = g[diff < 0]
    if faster.empty:
        d = diff.dropna()
        by = f"about {d.mean():.0f} %" if round(d.min()) == round(d.max()) else f"{d.min():.0f}–{d.max():.0f} %"
        return [f"At equal throughput the open loop is {by} slower than the closed queue-depth loop "
                f"({len(d)} rates compared): {arrivals_cost(g)}."]
    where = ", ".join(f"{_ol_u(r['utilisation_pct'])} ({_ol_fmt(r['lat_mean_us'])} vs "
                      f"{_ol_fmt(r['closed_lat_mean_us'])} µs, {_ol_float(r['open_vs_closed_pct']):+.1f} %)"
                      for _, r in faster.iterrows())
    worst = float(-diff[diff < 0].min())
    opened, closed, same = engines(g)  # S7-bare M-7: the two sides' generators, engines and clocks
    s = (f"At {where} the open loop ({opened}) is faster than the closed loop ({closed}) at the same throughput"
         + ("" if same else ", two I/O engines and two clocks") + ". It should not be: "
         "at the same X a closed loop keeps N = X·R I/Os in flight all the time, while the open loop's queue "
         "fluctuates around its mean as Poisson arrivals bunch up, and that variability only adds waiting.")
    if worst <= OPEN_CLOSED_SMALL_PCT:
        s += (f" A gap of {worst:.1f} % or less is within what the comparison itself explains: the closed-loop "
              "value is interpolated linearly between two queue-depth points, and the latency–throughput curve is "
              "convex, so the straight line lies above it; and those points come from another run, with its "
              "own noise" + ("." if same else ", on another I/O engine and clock."))
    else:
        split = ("the open loop's ioarrive process submits from one thread and reaps from another"
                 if IOARRIVE in generators(faster) else "the open loop splits its rate over several jobs")
        s += (f" A gap of {worst:.0f} % is more than interpolation (the closed-loop value is interpolated "
              "linearly between two queue-depth points, and on a convex curve the line lies above it) and "
              "noise usually explain. Other differences between the runs can: "
              + ("" if same else "another I/O engine and clock (named above), ")
              + "another device state (write cache, garbage collection, power state), and another configuration (the closed points run their "
              "own iodepth x numjobs, typically one fio job at a large iodepth whose single submitting thread can "
              f"add latency, while {split}). Compare the closed sweep's points around this rate and rerun both "
              "with repetitions.")
    return [s]


def x_ref_beaten(g: pd.DataFrame, points: pd.DataFrame | None, host: str, rw: str) -> list:
    """'X_ref (75,231 IOPS, the queue-depth sweep's best) is itself in doubt: ...' where the rates are shares of the
    queue-depth sweep's best and the same one-job job measured more than it elsewhere, beyond the run-to-run spread
    (memstor.analysis.spread.sweep_beaten; fourth read R-loop 8.1: 'u98' was 0.61x the 121,409 IOPS one job measured
    at QD32); [] otherwise (tables measured since e394f21 take X_ref from every closed-loop run)."""
    src = g["x_max_source"].dropna().astype(str) if "x_max_source" in g else pd.Series(dtype=str)
    x_ref = float(np.nanmax(pd.to_numeric(g["x_max_iops"], errors="coerce"))) if "x_max_iops" in g else math.nan
    if points is None or src.empty or not src.iloc[0].startswith("fio-queue-depth") or not x_ref == x_ref:
        return []
    _, above, spread = sweep_beaten(points, host, rw)
    above = above[above["iops"] > spread.limit * x_ref] if len(above) else above
    if above.empty:
        return []
    top = float(above["iops"].max())
    return [f"X_ref ({_ol_fmt(x_ref)} IOPS, the queue-depth sweep's best) is itself in doubt: the same one-job job "
            f"measured {points_said(above)} ({top / x_ref:.2f}× X_ref, beyond {spread.short()}), so the offered loads "
            f"are shares of a figure the device beat (the highest, {_ol_u(np.nanmax(g['utilisation_pct']))}, is "
            f"{np.nanmax(g['utilisation_pct']) / 100 * x_ref / top:.2f}× of {fmt_number(top)} IOPS)."]


def load_sentences(load: pd.DataFrame, slo: pd.DataFrame, models: pd.DataFrame, unloaded: pd.DataFrame,
                   points: pd.DataFrame | None = None, causes: bool = True) -> list:
    """What was measured (one paragraph per generator, :func:`measured_sentences`), then one markdown paragraph
    per device x workload of the open loop: the SLO answer (per p99 target), the unloaded latency and the
    low-rate anomaly when flagged, overloaded points, points at the generator's ceiling and points whose loop did
    not hold, where the open loop is faster than the closed loop at equal throughput (and why it should not
    be), and which queueing model explains the measured mean latency best (lowest mean |error| over the
    steady points it predicts, most points first) and where each breaks; a workload whose open loop did not
    hold (memstor.analysis.validity.gate) gets where it held and the failed checks instead
    (memstor.report.text.loadgen.not_open_sentence), and the workloads of one generator that did not hold one
    closing paragraph at the end (what their latencies are, the way out); X_ref in doubt where the sweep it came
    from was beaten (:func:`x_ref_beaten`, from the measured `points`). Inputs: the tables of
    memstor.analysis.load_latency (curve_table, slo, models, unloaded); any may be empty. ``causes`` False: a
    workload that did not hold without why (:func:`cause_paragraphs` gives them apart: S21's loop report ran a page
    past its budget on them)."""
    if load is None or len(load) == 0:
        return []
    out = measured_sentences(load)
    not_open: dict[str, list] = {}  # generator -> [(workload named, littles_law among the evidence)]
    hosts = sorted(load["host"].astype(str).unique())
    for host, rw, g, h, invalid, no_model in _workloads(load, slo, models):
        x_max = float(np.nanmean(pd.to_numeric(g["x_max_iops"], errors="coerce"))) \
            if "x_max_iops" in g.columns and pd.to_numeric(g["x_max_iops"], errors="coerce").notna().any() \
            else math.nan
        if invalid:
            gens = ordered(generators(g)) or ["fio"]
            out.append(f"**{md_escape(host)}, {rw}: not an open loop** ({' and '.join(gens)}). "
                       + " ".join([not_open_sentence(invalid[0], g, h, causes), *x_ref_beaten(g, points, host,
                                                                                               rw)]))
            named = f"{md_escape(host)} {rw}" if len(hosts) > 1 else rw
            not_open.setdefault(gens[0], []).append((named, "littles_law: " in invalid[0]))
            continue
        parts = _slo_sentences(_ol_rows(slo, host, rw), g, x_max)
        parts += _unloaded_sentence(_ol_rows(unloaded, host, rw))
        parts += _stress_sentences(g, modelled=not no_model)
        if no_model:  # the SLO answer from the held points; no curve or model across rates that did not hold
            why = not_open_sentence(no_model[0], g, h)
            parts.append("No queueing model and no open-against-closed curve across its rates (only rates that "
                         "held are set beside the closed loop, one by one): " + why[:1].lower() + why[1:])
        else:
            parts += _open_closed_sentences(g) + _model_sentences(_ol_rows(models, host, rw))
        out.append(f"**{md_escape(host)}, {rw}**: " + " ".join(parts + x_ref_beaten(g, points, host, rw)))
    for gen, said in not_open.items():
        out.append(not_open_closing([w for w, _ in said], gen, any(lit for _, lit in said), causes))
    return out


def _workloads(load: pd.DataFrame, slo: pd.DataFrame, models: pd.DataFrame):
    """Per device x workload of the open loop: (host, rw, its rows, the device's rows, the reasons its open loop is
    not one (empty where it is; the models' where the SLO answer did not come from held rates), the models' reasons)."""
    for host in sorted(load["host"].astype(str).unique()):
        h = load[load["host"].astype(str) == host]
        for rw in sorted(h["rw"].dropna().unique()):
            invalid, no_model = not_valid_reasons(slo, host, rw), not_valid_reasons(models, host, rw)
            if not invalid and no_model and not answered_from_held(_ol_rows(slo, host, rw)):
                invalid = no_model
            yield host, rw, _ol_rows(load, host, rw), h, invalid, no_model


def cause_paragraphs(load: pd.DataFrame | None, slo: pd.DataFrame, models: pd.DataFrame) -> list[str]:
    """'**vm-loop0, randread: why the loop did not hold.** ...' per workload whose open loop is not one and whose
    generator's columns say why (ioarrive: memstor.report.text.loadgen.cause_paragraph), for :func:`load_sentences`
    with ``causes`` False: the PDF may leave them to the HTML."""
    if load is None or len(load) == 0:
        return []
    return [f"**{md_escape(host)}, {rw}: why the loop did not hold.** {why}"
            for host, rw, g, h, invalid, _ in _workloads(load, slo, models) if invalid and (why := cause_paragraph(g, h))]
