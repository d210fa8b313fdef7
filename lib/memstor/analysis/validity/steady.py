"""Steady-state plausibility, per host with a fio-steady-state run. Inputs: the verdict table
(memstor.analysis.steady_state.verdict_table), the fio tidy rows (the rounds) and the fio summary points (the
fresh queue-depth sweep). Each check judges both sides; a check without a number to judge is ``unchecked``.

- ``steady_trace_jump``: the trace moves the way a drive filling up moves. Value: the worst factor (larger /
  smaller, >= 1: falls and rises are folded into it, the evidence says which), round to round AND cumulative
  (peak to a later trough, trough to a later peak). Falls: a round-to-round fall > STEP_WARN_RATIO, or a
  cumulative fall > CUMULATIVE_FALL_WARN (a 12x fall in 1.43x steps is still a 12x fall), warns: a write cliff,
  the rounds after it may be steady. Rises: > STEP_WARN_RATIO warns; a rise > STEP_FAIL_RATIO in one round or
  cumulatively, or a fall and a rise both beyond their bounds, fails (a drive gets slower as it fills, never 3x
  faster). Band: low 1 (equal rounds), high STEP_WARN_RATIO for a round-to-round factor (the value when
  a step crosses it or no cumulative factor crosses CUMULATIVE_FALL_WARN), else CUMULATIVE_FALL_WARN for the
  cumulative factor. Fewer than 2 successful rounds: unchecked.
- ``steady_window_trend``: the window is neither drifting nor oscillating. Value: the monotone drift, |end -
  start| % of the window average for a window whose every step goes the same way (0 when it turns;
  >= TREND_MIN_PCT warns: the slope rule let a drift pass), or for an oscillating window (every step turns,
  at least 3 steps) its range % (>= OSCILLATION_MIN_PCT warns: the PTS 20 % range rule let a see-saw pass).
  Band: low 0, high TREND_MIN_PCT (drift) or OSCILLATION_MIN_PCT (oscillation). No window (fewer than 5
  rounds) or an empty round: unchecked.
- ``steady_round_length``: rounds last MIN_ROUND_S..MAX_ROUND_S and the window rewrites >= MIN_WINDOW_SPANS
  spans. Round length, block size or span not recorded: unchecked.
- ``steady_vs_fresh``: steady / fresh IOPS at the same rw, block size and outstanding I/O. Above
  ABOVE_FRESH_RATIO warns, above ABOVE_FRESH_FAIL fails (the steady state is the worse state); below
  BELOW_FRESH_WARN warns, below BELOW_FRESH_FAIL fails (a different state or a broken run). No fresh point:
  no row (the queue-depth sweep did not run it); a fresh point without IOPS or no steady window: unchecked. A
  fresh point the run itself contradicts (:func:`fresh_doubt`: a fresh measurement of the same rw and block size
  with no more I/Os in flight above it beyond the run-to-run spread) is no reference: unchecked, with the points
  that contradict it (S7-bare M-1: 41,612 IOPS at 128 in flight against 86,257-88,491 at 32 minutes earlier). A
  fresh point on another span than the rounds' (:func:`other_span`) is no reference either: unchecked.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from memstor.analysis import steady_state
from memstor.analysis.spread import gap_words, run_spread
from memstor.analysis.validity.agreement import AGREE_RATIO, NOT_COMPARED, drive_state, pure_mixes
from memstor.analysis.validity.gate import gate_steady
from memstor.analysis.validity.rows import FAIL, PASS, WARN, band, has, n, num, row, unchecked
from memstor.core.units import size_text

#: A round-to-round change beyond this factor (either way) is not the slow approach to steady state the PTS
#: window rule is built for (its window allows a 20 % range): a warning.
STEP_WARN_RATIO = 1.5
#: A rise beyond this factor (in one round or cumulatively), or a fall and a rise both beyond their warning
#: bounds, is not something a drive does as it fills (it gets slower, not 3x faster): caching or throttling
#: outside it. A single fall beyond it is a write cliff: a warning, the rounds after it may be steady.
STEP_FAIL_RATIO = 3.0
#: A cumulative fall (a round's peak to a later trough) beyond this factor is a cliff even when made of
#: small steps (1.43^7 = 12): a warning, as a one-round cliff (consumer drives fall 10-30x to their native
#: flash rate, so it is not a failure by itself).
CUMULATIVE_FALL_WARN = 3.0
#: A window whose every step goes the same way and whose ends differ by this much (% of its average,
#: half the PTS slope limit) is still drifting although the slope rule let it pass.
TREND_MIN_PCT = 5.0
#: A window whose every step turns (up, down, up, ...) with a range of this much (% of its average, half the
#: PTS 20 % range limit) is oscillating: its average depends on which rounds the window happens to hold.
OSCILLATION_MIN_PCT = 10.0
#: Shortest round (s): a round must average over the drive's seconds-scale background work (garbage
#: collection, cache flushes); the PTS uses 60 s rounds.
MIN_ROUND_S = 10.0
#: Longest round (s), 10x the PTS's 60 s: a longer round averages over the state changes the trace is meant
#: to show (a cliff inside a round is invisible to the window rule).
MAX_ROUND_S = 600.0
#: The window must write at least this many spans, so every block of the span is rewritten within it.
MIN_WINDOW_SPANS = 1.0
#: Steady IOPS above the fresh IOPS by more than this factor: the steady state is not the worse state the
#: PTS measures (fresh-out-of-box is the best); within it, run-to-run noise.
ABOVE_FRESH_RATIO = 1.10
#: ... by more than this factor: beyond the run-to-run spread of one configuration on the machines seen (up to
#: 1.23x between experiments on this VM), the rounds measured a cache or another target, not the worn-in drive
#: (a reviewer saw 1.37x printed as a steady state matching the spec's).
ABOVE_FRESH_FAIL = 1.25
#: Steady IOPS below this share of the fresh IOPS: beyond the fall of most drives to their native flash
#: rate; a different state (another span, a throttled drive) or a broken run: a warning to read the trace.
BELOW_FRESH_WARN = 0.1
#: ... below this share (50x): beyond any published fresh-to-steady fall of an SSD (consumer QLC 4 KiB
#: random writes fall 10-30x): the run is broken (a stalled job, a failing device), not a steady state.
BELOW_FRESH_FAIL = 0.02

_SECTION = "steady_state"


def steady_rows(steady: pd.DataFrame | None, fio: pd.DataFrame | None, points: pd.DataFrame | None,
                metas: list | None = None) -> list[dict]:
    """The four steady-state checks per host of the verdict table (metas: the points' meta sidecars, each with its
    device as ``host``, for the times of a fresh reference in doubt)."""
    if not has(steady, "host") or fio is None:
        return []
    rows = []
    for _, v in steady.iterrows():
        rounds = steady_state.rounds_of(fio, v["host"])
        series = steady_state.successful_series(rounds)
        if len(series) < 2:
            rows.append(unchecked(v["host"], "steady_trace_jump", v["workload"],
                                  f"{len(series)} successful round(s): no round-to-round change to judge", _SECTION,
                                  "x", low=1.0, high=STEP_WARN_RATIO))
            continue
        rows.append(_jump(v, series))
        window = steady_state.window_of(rounds)
        rows.append(_trend(v, window) if len(window) else unchecked(
            v["host"], "steady_window_trend", v["workload"], f"{len(series)} rounds: no 5-round window", _SECTION,
            "% of window average", low=0.0, high=TREND_MIN_PCT))
        if len(window):
            rows.append(_length(v, window))
        fresh = fresh_row(v, points, metas)
        if fresh:
            rows.append(fresh)
    return rows


def cumulative_factors(y: list[float]) -> tuple[float, int, float, int]:
    """(fall, round, rise, round) of a trace (IOPS): the largest factor by which a round lies below an
    earlier round's peak (and the round it is reached at, 1-based), and above an earlier round's trough."""
    a = np.asarray(y, dtype=float)
    peak, trough = np.maximum.accumulate(a), np.minimum.accumulate(a)
    fall, rise = peak / a, a / trough
    return float(fall.max()), int(np.argmax(fall)) + 1, float(rise.max()), int(np.argmax(rise)) + 1


def _jump(v: pd.Series, y: list[float]) -> dict:
    ratio = np.asarray(y[1:]) / np.asarray(y[:-1])
    up, down = float(ratio.max()), float(1.0 / ratio.min())
    cum_fall, at_fall, cum_rise, at_rise = cumulative_factors(y)
    fall_bad = down > STEP_WARN_RATIO or cum_fall > CUMULATIVE_FALL_WARN
    status = (FAIL if up > STEP_FAIL_RATIO or cum_rise > STEP_FAIL_RATIO
              or (fall_bad and (down > STEP_FAIL_RATIO or cum_fall > STEP_FAIL_RATIO) and up > STEP_WARN_RATIO)
              else WARN if fall_bad or up > STEP_WARN_RATIO else PASS)
    steps_bad = max(up, down) > STEP_WARN_RATIO or max(cum_fall, cum_rise) <= CUMULATIVE_FALL_WARN
    worst, high = (max(up, down), STEP_WARN_RATIO) if steps_bad else (max(cum_fall, cum_rise), CUMULATIVE_FALL_WARN)
    at_up, at_down = int(np.argmax(ratio)) + 2, int(np.argmin(ratio)) + 2
    fall = f"largest fall {n(down)}x into round {at_down}" if down > 1 else "no fall (every step rises or stays)"
    rise = f"largest rise {n(up)}x into round {at_up}" if up > 1 else "no rise (every step falls or stays)"
    evidence = (f"{len(y)} rounds from {n(y[0])} to {n(y[-1])} IOPS (min {n(min(y))}, max {n(max(y))}); {fall}, "
                f"{rise}; cumulative: {n(cum_fall)}x below an earlier peak at round {at_fall}, {n(cum_rise)}x above "
                f"an earlier trough at round {at_rise}")
    consequence = {PASS: "", WARN: "the trace has a write cliff or step: the window after it is steady only if "
                   "the figure shows a flat tail", FAIL: "the trace jumps in ways a drive does not (a sudden "
                   "rise): the steady-state verdict and its IOPS are not shown as the drive's steady state"}[status]
    limit = STEP_FAIL_RATIO if status == FAIL else high
    return row(v["host"], "steady_trace_jump", v["workload"], status, worst, limit, "x (larger / smaller)",
               evidence, consequence, _SECTION, low=1.0, high=high)


def window_shape(w: list[float]) -> tuple[bool, bool, float, float]:
    """(monotone, oscillating, change %, range %) of a window's IOPS: every step the same way; every step
    turning (at least 3 steps); (last - first) and (max - min) as % of the window average."""
    steps = np.diff(np.asarray(w, dtype=float))
    monotone = bool(np.all(steps > 0) or np.all(steps < 0))
    oscillating = bool(steps.size >= 3 and np.all(steps != 0) and np.all(np.sign(steps[1:]) != np.sign(steps[:-1])))
    avg = float(np.mean(w))
    return monotone, oscillating, 100.0 * (w[-1] - w[0]) / avg, 100.0 * (max(w) - min(w)) / avg


def _trend(v: pd.Series, window: pd.DataFrame) -> dict:
    w = pd.to_numeric(window["iops"], errors="coerce").to_list()
    first = int(window["round"].iloc[0])
    subject, unit = v["workload"], "% of window average"
    if any(num(x) is None or x <= 0 for x in w):
        return unchecked(v["host"], "steady_window_trend", subject, "a window round has no IOPS", _SECTION, unit,
                         low=0.0, high=TREND_MIN_PCT)
    monotone, oscillating, change, spread = window_shape(w)
    drift = monotone and abs(change) >= TREND_MIN_PCT
    see_saw = oscillating and spread >= OSCILLATION_MIN_PCT
    value, high = (spread, OSCILLATION_MIN_PCT) if oscillating else (abs(change) if monotone else 0.0, TREND_MIN_PCT)
    status = WARN if drift or see_saw else PASS
    shape = "every step the same way" if monotone else "every step turning" if oscillating else "not monotone"
    # S20-loop 4: 'rounds 2-6: 61,444 to 62,789 IOPS' read as the window's range (61,444-69,788)
    evidence = (f"window rounds {first}-{first + len(w) - 1}: first {n(w[0])}, last {n(w[-1])} IOPS (a change of "
                f"{n(change)} % of the window average), from {n(min(w))} to {n(max(w))} (range {n(spread)} %), {shape}")
    consequence = "" if status == PASS else (
        "the window is still drifting: the steady-state IOPS is an average of a trend, more rounds would move it"
        if drift else "the window oscillates: its average depends on which rounds it holds, the steady-state IOPS "
        "is known only to the range")
    return row(v["host"], "steady_window_trend", subject, status, value, high, unit, evidence, consequence, _SECTION,
               low=0.0, high=high)


def _round_bytes(v: pd.Series, window: pd.DataFrame) -> float | None:
    """Mean bytes written per window round: IOPS x block size x round length."""
    bs, secs = num(v.get("bs_bytes")), num(v.get("round_s"))
    if bs is None or secs is None:
        return None
    return num(float(pd.to_numeric(window["iops"], errors="coerce").mean()) * bs * secs)


def _length(v: pd.Series, window: pd.DataFrame) -> dict:
    span, secs, per_round = num(v.get("span_bytes")), num(v.get("round_s")), _round_bytes(v, window)
    if span is None or secs is None or per_round is None or span <= 0:
        missing = [c for c, x in (("span_bytes", span), ("round_s", secs), ("bytes per round", per_round)) if not x]
        return unchecked(v["host"], "steady_round_length", v["workload"], f"not recorded: {', '.join(missing)}",
                         _SECTION, "s", low=MIN_ROUND_S, high=MAX_ROUND_S)
    spans = len(window) * per_round / span
    status, limit = band(secs, None, None, warn_low=MIN_ROUND_S, warn_high=MAX_ROUND_S)
    evidence = (f"rounds of {n(secs)} s write {size_text(int(per_round))} each, {n(per_round / span)} of the "
                f"{size_text(int(span))} span; the {len(window)}-round window writes {n(spans)} spans")
    why = [w for w, bad in ((f"rounds shorter than {n(MIN_ROUND_S)} s", secs < MIN_ROUND_S),
                            (f"rounds longer than {n(MAX_ROUND_S)} s (a change inside a round is averaged away)",
                             secs > MAX_ROUND_S),
                            (f"the window rewrites less than {n(MIN_WINDOW_SPANS)} span", spans < MIN_WINDOW_SPANS))
           if bad]
    status = WARN if why else PASS
    consequence = "" if not why else (f"{' and '.join(why)}: the window's rounds sample the drive's state too "
                                      "briefly or too coarsely for the window rule to mean steady state")
    return row(v["host"], "steady_round_length", v["workload"], status, secs, limit, "s", evidence, consequence,
               _SECTION, low=MIN_ROUND_S, high=MAX_ROUND_S)


def _fresh_point(v: pd.Series, points: pd.DataFrame | None) -> pd.Series | None:
    """The queue-depth sweep's point of the same rw, block size and outstanding I/O (the same iodepth x
    numjobs when there is one); None without such a point."""
    if not has(points, "experiment", "rw", "bs_bytes", "outstanding_io", "iops"):
        return None
    p = points[(points["host"] == v["host"]) & (points["experiment"] == "fio-queue-depth") & (points["rw"] == v["rw"])
               & (points["bs_bytes"] == v["bs_bytes"]) & (points["outstanding_io"] == v["outstanding_io"])]
    if "direction" in p:
        p = p[p["direction"] != "total"]
    if p.empty:
        return None
    p = p.assign(_has=p["iops"].notna()).sort_values("_has", ascending=False, kind="stable")
    same = p[(p["iodepth"] == v["iodepth"]) & (p["numjobs"] == v["numjobs"])]
    return (same if len(same) else p).iloc[0]


def _fresh_points(points: pd.DataFrame, host: str) -> pd.DataFrame:
    """The host's closed-loop single-direction points measured on the file as it was (agreement.drive_state
    fresh, not NOT_COMPARED), with IOPS; the rw-ratio sweep's 100 % / 0 % mixes named as the pure workloads."""
    if not has(points, "host", "experiment", "rw", "bs_bytes", "outstanding_io", "iops", "rwmixread"):
        return pd.DataFrame(columns=["experiment", "rw", "bs_bytes", "outstanding_io", "iops"])
    p = points[(points["host"].astype(str) == str(host)) & points["iops"].notna()
               & ~points["experiment"].isin(NOT_COMPARED)]
    p = p[p["experiment"].map(drive_state) == "fresh"]
    if "direction" in p:
        p = p[p["direction"] != "total"]
    return pure_mixes(p)


def fresh_spread(points: pd.DataFrame | None, host: str, rw: str | None = None) -> float:
    """The run-to-run spread a difference must beat (x, >= 1.10): memstor.analysis.spread's one rule (the largest
    ratio between two fresh experiments' IOPS of one configuration on the host in rw's direction, a disagreeing pair
    not counted, at least the assumed 1.10)."""
    return run_spread(points, host, rw).limit


def fresh_doubt(points: pd.DataFrame | None, host: str, rw: str, bs: float, outstanding: float,
                iops: float, apart_from: str = "") -> tuple[pd.DataFrame, float]:
    """(contradicting points, spread): the fresh points (:func:`_fresh_points`) of the same rw and block size
    (bytes) with at most ``outstanding`` I/Os in flight, outside experiment ``apart_from`` (the point's own run),
    whose IOPS exceed ``iops`` by more than the run-to-run spread (:func:`fresh_spread`), highest first. A closed
    loop with more I/Os in flight does not lose that much in one state of the machine: a point below them was
    measured in another state (S7-bare M-1: the sweep's 41,612 IOPS at 128 in flight, 86,257 and 88,491 at 32 in
    fio-block-size and fio-rw-ratio a minute before)."""
    spread = fresh_spread(points, host, rw)
    p = _fresh_points(points, host) if points is not None else pd.DataFrame()
    if p.empty or not iops or iops <= 0:
        return p, spread
    p = p[(p["rw"] == rw) & (p["bs_bytes"] == bs) & (p["outstanding_io"] <= outstanding)
          & (p["iops"] > spread * iops) & (p["experiment"] != apart_from)]
    return p.sort_values("iops", ascending=False), spread


def doubt_words(above: pd.DataFrame, iops: float, spread: float) -> str:
    """'86,257 IOPS at 32 in flight in fio-block-size, 88,491 ... (2.07-2.13x this point's, beyond the 10 % assumed
    for single runs, not measured)' (or 'the largest gap between two fresh runs of one job measured here, 1.32x'): the points of :func:`fresh_doubt` against a point of ``iops`` (IOPS)."""
    top = above.drop_duplicates("experiment").head(3)
    said = ", ".join(f"{n(r.iops)} IOPS at {int(r.outstanding_io)} in flight in {r.experiment}"
                     for r in top.itertuples())
    lo, hi = float(top["iops"].min()) / iops, float(top["iops"].max()) / iops
    ratio = f"{lo:.2f}x" if f"{lo:.2f}" == f"{hi:.2f}" else f"{lo:.2f}-{hi:.2f}x"
    # one rule for the spread (memstor.analysis.spread, S7-bare M-11): the floor is assumed, not measured
    kind = str(top["direction"].iloc[0]) if "direction" in top.columns else ""  # S21-cpu1 1: whose jobs' gap
    beyond = (gap_words(spread, times="x", kind=kind) if spread > AGREE_RATIO else
              f"the {100 * (AGREE_RATIO - 1):.0f} % assumed for single fresh runs, not measured")
    return f"{said} ({ratio} its IOPS with no more I/Os in flight, beyond {beyond})"


def ended(metas: list | None, host, point) -> str:
    """'10:30:55' (UTC): when a point's run ended, from its meta sidecar (``end_time``); '' where not recorded."""
    for m in metas or []:
        if str(m.get("host")) == str(host) and str(m.get("point")) == str(point) and m.get("end_time"):
            return str(m["end_time"])[11:19]
    return ""


def _when(metas: list | None, host, ref: pd.Series, above: pd.DataFrame) -> str:
    """'; the reference's run ended 10:30:55 UTC, those above it 10:30:16 (fio-rw-ratio), 10:29:46 (fio-block-size)'
    where the meta sidecars give the times (S7-bare M-1: the sweep ran after the runs that beat it); '' else."""
    mine = ended(metas, host, ref.get("point"))
    theirs = [f"{t} ({r.experiment})" for r in above.drop_duplicates("experiment").head(3).itertuples()
              if (t := ended(metas, host, getattr(r, "point", "")))]
    return f"; the reference's run ended {mine} UTC, those above it {', '.join(theirs)}" if mine and theirs else ""


#: Spans (bytes) further apart than this factor are different regions of the drive: a fresh point on another
#: span is no reference for the rounds' state (seventh read S11-loop 7: the rounds wrote the whole 6 GiB device,
#: the fresh point 256 MiB of it, 24x smaller).
SAME_SPAN_RATIO = 1.01


def other_span(v: pd.Series, f: pd.Series) -> str:
    """'wrote 256 MiB, the rounds 6 GiB' where the fresh point's span (file_size_bytes) and the rounds' span
    (span_bytes) are both known and differ beyond SAME_SPAN_RATIO; '' otherwise."""
    rounds, fresh = num(v.get("span_bytes")), num(f.get("file_size_bytes"))
    if not rounds or not fresh or max(rounds, fresh) / min(rounds, fresh) <= SAME_SPAN_RATIO:
        return ""
    return f"wrote {size_text(fresh)}, the rounds {size_text(rounds)}"


def fresh_row(v: pd.Series, points: pd.DataFrame | None, metas: list | None = None) -> dict | None:
    """steady_vs_fresh against the queue-depth sweep's point (:func:`_fresh_point`); None without one; not checked
    where the run contradicts that point (:func:`fresh_doubt`), with the runs' end times from ``metas``."""
    f = _fresh_point(v, points)
    if f is None:
        return None
    steady, fresh, unit = num(v.get("window_avg_iops")), num(f["iops"]), "x fresh"
    if steady is None or fresh is None or fresh <= 0:
        why = "no steady window average (not evaluable)" if steady is None else "the fresh point has no IOPS (failed)"
        return unchecked(v["host"], "steady_vs_fresh", v["workload"], why, _SECTION, unit, low=BELOW_FRESH_WARN,
                         high=ABOVE_FRESH_RATIO)
    if other := other_span(v, f):
        return unchecked(v["host"], "steady_vs_fresh", v["workload"],
                         f"the fresh point, {n(fresh)} IOPS (fio-queue-depth, QD{int(f['iodepth'])}x"
                         f"{int(f['numjobs'])}), {other}: another region of the drive, no fresh point on the rounds' "
                         f"span (steady {n(steady)} IOPS not compared)", _SECTION, unit, low=BELOW_FRESH_WARN,
                         high=ABOVE_FRESH_RATIO, consequence="the steady IOPS is not compared with the fresh drive: "
                         "whether the rounds measured a worn-in state is not shown")
    above, spread = fresh_doubt(points, v["host"], v["rw"], v["bs_bytes"], v["outstanding_io"], fresh,
                                apart_from="fio-queue-depth")
    if len(above):
        why = (f"the fresh reference, {n(fresh)} IOPS (fio-queue-depth, QD{int(f['iodepth'])}x{int(f['numjobs'])}) at "
               f"{int(v['outstanding_io'])} outstanding I/Os, is itself in doubt: the same run measured "
               f"{doubt_words(above, fresh, spread)}{_when(metas, v['host'], f, above)}; it ran in another state "
               "of the machine, and no fresh "
               f"measurement of this configuration agrees with it (steady {n(steady)} IOPS not compared)")
        return unchecked(v["host"], "steady_vs_fresh", v["workload"], why, _SECTION, unit, low=BELOW_FRESH_WARN,
                         high=ABOVE_FRESH_RATIO, consequence="the steady IOPS is not compared with the fresh "
                         "drive: whether the rounds measured a worn-in state is not shown")
    ratio = steady / fresh
    status, limit = band(ratio, BELOW_FRESH_FAIL, ABOVE_FRESH_FAIL, warn_low=BELOW_FRESH_WARN,
                         warn_high=ABOVE_FRESH_RATIO)
    evidence = (f"steady {n(steady)} IOPS against fresh {n(fresh)} IOPS (fio-queue-depth, QD{int(f['iodepth'])}x"
                f"{int(f['numjobs'])}) at {int(v['outstanding_io'])} outstanding I/Os: {n(ratio)}x")
    above = ratio > 1
    consequence = "" if status == PASS else (
        ("the 'steady' state is faster than the fresh drive: the rounds did not measure the drive's worn-in state "
         "(caching, a small span); the steady IOPS is not a steady-state finding" if status == FAIL else
         f"the 'steady' state is a little faster than the fresh drive ({n(ABOVE_FRESH_RATIO)}-{n(ABOVE_FRESH_FAIL)}x: "
         "more than a worn-in drive gives, too little to call caching): the worn-in state is not shown; read the "
         "steady IOPS with care") if above else
        "the steady state is far below the fresh drive: a different state (another span, throttling) or a broken "
        "run; the steady IOPS is shown only with the trace" + ("" if status == WARN else
                                                                ", and not as the drive's steady state"))
    return row(v["host"], "steady_vs_fresh", v["workload"], status, ratio, limit, unit, evidence, consequence,
               _SECTION, low=BELOW_FRESH_WARN, high=ABOVE_FRESH_RATIO)


def gated_verdicts(fio: pd.DataFrame, points: pd.DataFrame | None = None) -> pd.DataFrame:
    """The steady-state verdict table (memstor.analysis.steady_state.verdict_table of ``fio``) gated by these
    checks (memstor.analysis.validity.gate.gate_steady): what an experiment's own notebook states, as the synthesis
    does. Without ``points`` (the fio summary with the fresh queue-depth sweep) steady_vs_fresh is not judged."""
    verdicts = steady_state.verdict_table(fio)
    checks = pd.DataFrame(steady_rows(verdicts, fio, points))
    return gate_steady(verdicts, checks if len(checks) else None)
