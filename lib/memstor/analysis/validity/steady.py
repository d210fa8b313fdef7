"""Steady-state plausibility, per host with a fio-steady-state run: the trace has no jump the window rule
cannot see (``steady_trace_jump``), the window no monotone trend (``steady_window_trend``), rounds are long
enough for the span (``steady_round_length``) and the steady IOPS is not above the fresh IOPS at the same
outstanding I/O (``steady_vs_fresh``). Inputs: the verdict table (memstor.analysis.steady_state.verdict_table),
the fio tidy rows (the rounds) and the fio summary points (the fresh queue-depth sweep)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from memstor.analysis import steady_state
from memstor.analysis.validity.rows import FAIL, PASS, WARN, has, n, num, row
from memstor.core.units import size_text

#: A round-to-round change beyond this factor is not the slow approach to steady state the PTS window
#: rule is built for (its window allows a 20 % range): a warning.
STEP_WARN_RATIO = 1.5
#: A rise beyond this factor from one round to the next, or a fall and a rise both beyond it, is not
#: something a drive does as it fills (it gets slower, not 3x faster): caching or throttling outside it. A
#: single fall beyond it is a write cliff: a warning, the rounds after it may be steady.
STEP_FAIL_RATIO = 3.0
#: A window whose every step goes the same way and whose ends differ by this much (% of its average,
#: half the PTS slope limit) is still drifting although the slope rule let it pass.
TREND_MIN_PCT = 5.0
#: Shortest round (s): a round must average over the drive's seconds-scale background work (garbage
#: collection, cache flushes); the PTS uses 60 s rounds.
MIN_ROUND_S = 10.0
#: The window must write at least this many spans, so every block of the span is rewritten within it.
MIN_WINDOW_SPANS = 1.0
#: Steady IOPS above the fresh IOPS by more than this factor: the steady state is not the worse state the
#: PTS measures (fresh-out-of-box is the best); within it, run-to-run noise.
ABOVE_FRESH_RATIO = 1.10

_SECTION = "steady_state"


def steady_rows(steady: pd.DataFrame | None, fio: pd.DataFrame | None, points: pd.DataFrame | None) -> list[dict]:
    """The four steady-state checks per host of the verdict table."""
    if not has(steady, "host") or fio is None:
        return []
    rows = []
    for _, v in steady.iterrows():
        rounds = steady_state.rounds_of(fio, v["host"])
        series = steady_state.successful_series(rounds)
        if len(series) < 2:
            continue
        rows.append(_jump(v, series))
        window = steady_state.window_of(rounds)
        if len(window):
            rows.append(_trend(v, window["iops"].astype(float).to_list(), int(window["round"].iloc[0])))
            length = _length(v, window)
            if length:
                rows.append(length)
        fresh = _fresh(v, points)
        if fresh:
            rows.append(fresh)
    return rows


def _jump(v: pd.Series, y: list[float]) -> dict:
    ratio = np.asarray(y[1:]) / np.asarray(y[:-1])
    up, down = float(ratio.max()), float(1.0 / ratio.min())
    worst = max(up, down)
    status = (FAIL if up > STEP_FAIL_RATIO or (down > STEP_FAIL_RATIO and up > STEP_WARN_RATIO)
              else WARN if worst > STEP_WARN_RATIO else PASS)
    at_up, at_down = int(np.argmax(ratio)) + 2, int(np.argmin(ratio)) + 2
    evidence = (f"{len(y)} rounds from {n(y[0])} to {n(y[-1])} IOPS (min {n(min(y))}, max {n(max(y))}); largest "
                f"fall {n(down)}x into round {at_down}, largest rise {n(up)}x into round {at_up}")
    consequence = {PASS: "", WARN: "the trace has a write cliff or step: the window after it is steady only if "
                   "the figure shows a flat tail", FAIL: "the trace jumps in ways a drive does not (a sudden "
                   "rise): the steady-state verdict and its IOPS are not shown as the drive's steady state"}[status]
    return row(v["host"], "steady_trace_jump", v["workload"], status, worst, STEP_WARN_RATIO, "x per round",
               evidence, consequence, _SECTION)


def _trend(v: pd.Series, w: list[float], first: int) -> dict:
    steps = np.diff(w)
    monotone = bool(np.all(steps > 0) or np.all(steps < 0))
    change = 100.0 * (w[-1] - w[0]) / float(np.mean(w))
    status = WARN if monotone and abs(change) >= TREND_MIN_PCT else PASS
    evidence = (f"window rounds {first}-{first + len(w) - 1}: {n(w[0])} to {n(w[-1])} IOPS ({n(change)} % of the "
                f"window average), {'every step the same way' if monotone else 'not monotone'}")
    consequence = "" if status == PASS else ("the window is still drifting: the steady-state IOPS is an average "
                                             "of a trend, more rounds would move it")
    return row(v["host"], "steady_window_trend", v["workload"], status, abs(change), TREND_MIN_PCT,
               "% of window average", evidence, consequence, _SECTION)


def _round_bytes(v: pd.Series, window: pd.DataFrame) -> float | None:
    """Mean bytes written per window round: IOPS x block size x round length."""
    bs, secs = num(v.get("bs_bytes")), num(v.get("round_s"))
    if bs is None or secs is None:
        return None
    return float(window["iops"].astype(float).mean()) * bs * secs


def _length(v: pd.Series, window: pd.DataFrame) -> dict | None:
    span, secs, per_round = num(v.get("span_bytes")), num(v.get("round_s")), _round_bytes(v, window)
    if span is None or secs is None or per_round is None or span <= 0:
        return None
    spans = len(window) * per_round / span
    short, thin = secs < MIN_ROUND_S, spans < MIN_WINDOW_SPANS
    evidence = (f"rounds of {n(secs)} s write {size_text(int(per_round))} each, {n(per_round / span)} of the "
                f"{size_text(int(span))} span; the {len(window)}-round window writes {n(spans)} spans")
    why = [w for w, bad in ((f"rounds shorter than {n(MIN_ROUND_S)} s", short),
                            (f"the window rewrites less than {n(MIN_WINDOW_SPANS)} span", thin)) if bad]
    status = WARN if why else PASS
    consequence = "" if not why else (f"{' and '.join(why)}: the window's rounds sample the drive's state too "
                                      "briefly for the window rule to mean steady state")
    return row(v["host"], "steady_round_length", v["workload"], status, secs, MIN_ROUND_S, "s", evidence,
               consequence, _SECTION)


def _fresh(v: pd.Series, points: pd.DataFrame | None) -> dict | None:
    """steady_vs_fresh against the queue-depth sweep's point of the same rw, block size and outstanding I/O
    (the same iodepth x numjobs when there is one); None without such a point."""
    if not has(points, "experiment", "rw", "bs_bytes", "outstanding_io", "iops") or num(v.get("window_avg_iops")) is None:
        return None
    p = points[(points["host"] == v["host"]) & (points["experiment"] == "fio-queue-depth") & (points["rw"] == v["rw"])
               & (points["bs_bytes"] == v["bs_bytes"]) & (points["outstanding_io"] == v["outstanding_io"])
               & points["iops"].notna()]
    if "direction" in p:
        p = p[p["direction"] != "total"]
    if p.empty:
        return None
    same = p[(p["iodepth"] == v["iodepth"]) & (p["numjobs"] == v["numjobs"])]
    f = (same if len(same) else p).iloc[0]
    steady, fresh = float(v["window_avg_iops"]), float(f["iops"])
    ratio = steady / fresh
    status = WARN if ratio > ABOVE_FRESH_RATIO else PASS
    evidence = (f"steady {n(steady)} IOPS against fresh {n(fresh)} IOPS (fio-queue-depth, QD{int(f['iodepth'])}x"
                f"{int(f['numjobs'])}) at {int(v['outstanding_io'])} outstanding I/Os: {n(ratio)}x")
    consequence = "" if status == PASS else ("the 'steady' state is faster than the fresh drive: the rounds did not "
                                             "measure the drive's worn-in state (caching, a small span); the steady "
                                             "IOPS is not a steady-state finding")
    return row(v["host"], "steady_vs_fresh", v["workload"], status, ratio, ABOVE_FRESH_RATIO, "x fresh", evidence,
               consequence, _SECTION)
