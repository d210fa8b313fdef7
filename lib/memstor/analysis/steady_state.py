"""Steady-state detection after the SNIA Solid State Storage Performance Test Specification (PTS).

Pure: numbers in, numbers out (no I/O). The fio-steady-state experiment family calls it after every round
of 4 KiB random writes; its tracking variable is the round's IOPS.

The definition (SNIA Solid State Storage (SSS) Performance Test Specification (PTS) Version 2.0.2, SNIA
Standard, October 1, 2020, §2.1.24 "Steady State", PDF p. 17; the same text in v2.0.1):

    "A device is said to be in Steady State when, for the dependent variable (y) being tracked:
     a) Range(y) is less than 20% of Ave(y): Max(y)-Min(y) within the Measurement Window is no more than
        20% of the Ave(y) within the Measurement Window; and
     b) Slope(y) is less than 10%: Max(y)-Min(y), where Max(y) and Min(y) are the maximum and minimum
        values on the best linear curve fit of the y-values within the Measurement Window, is within 10%
        of Ave(y) value within the Measurement Window."

The Measurement Window (PTS §2.1.13) is five rounds: the round just finished and the four before it. The
PTS tests run at most 25 rounds; a device that does not meet the rule by then is reported as "steady state
not achieved", which is a result, not a failure.

What this module computes, for the window y_1..y_5 (rounds x = 1..5 of the window):

- window average  Ave = (y_1 + ... + y_5) / 5                                              (IOPS)
- data excursion  100 * (max y - min y) / Ave                                  (% of the window average)
- slope           least squares, closed form: sum((x - x_mean) * y) / sum((x - x_mean)^2)  (IOPS/round)
- slope excursion 100 * |slope| * (5 - 1) / Ave: the fitted line's change across the window, which is
                  the PTS "Max(y)-Min(y) on the best linear curve fit"          (% of the window average)

Both limits are inclusive ("no more than", "within"): a window exactly at 20 % / 10 % meets them. Ties are
judged with a relative tolerance of 1e-12 so that floating-point rounding of an exact tie does not flip it.

Source read through: the definition as quoted in public code that cites SSS_PTS_2.0.2.pdf p. 17 and
SSS_PTS_2.0.1.pdf (https://www.snia.org/sites/default/files/technical_work/PTS/SSS_PTS_2.0.1.pdf).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from memstor.core.units import size_text

#: Rounds in the PTS Measurement Window (the round just finished and the four before it).
WINDOW_ROUNDS = 5
#: Limit of the data excursion, max - min over the window, in % of the window average (inclusive).
DATA_EXCURSION_PCT = 20.0
#: Limit of the slope excursion, the fitted line's change across the window, in % of the window average.
SLOPE_EXCURSION_PCT = 10.0
#: Round limit of the PTS: steady state not met by this round is reported as "not achieved".
MAX_ROUNDS = 25
#: Relative tolerance for a tie with a limit (floating-point rounding only; the rule itself is <=).
TIE_RTOL = 1e-12

#: Columns of round_table(): one row per round, the run-level result repeated on every row.
ROUND_TABLE_COLUMNS = ["round", "iops", "ss_achieved", "ss_round", "window_avg_iops", "data_excursion_pct",
                       "slope_excursion_pct", "in_window"]

#: SteadyState.status values.
ACHIEVED = "achieved"
NOT_ACHIEVED = "not achieved"     # the round limit was reached without a steady window
IN_PROGRESS = "in progress"       # evaluable, not steady yet, rounds left before the limit
NOT_EVALUABLE = "not evaluable"   # fewer than WINDOW_ROUNDS rounds


@dataclass(frozen=True)
class WindowCheck:
    """The PTS steady-state rule applied to one Measurement Window of WINDOW_ROUNDS rounds.

    window_avg: average of the tracking variable over the window (IOPS);
    data_excursion_pct: (max - min) over the window, in % of window_avg;
    slope_per_round: least-squares slope of the window (IOPS per round; negative = decaying);
    slope_excursion_pct: |slope_per_round| x (WINDOW_ROUNDS - 1), in % of window_avg;
    data_ok / slope_ok: each excursion within its limit (inclusive); steady: both.
    """

    window_avg: float
    data_excursion_pct: float
    slope_per_round: float
    slope_excursion_pct: float
    data_ok: bool
    slope_ok: bool
    steady: bool


@dataclass(frozen=True)
class SteadyState:
    """Result of evaluating a run's per-round series after every round, in order.

    achieved: a window met the rule; round: the 1-based round at which it was first met (the window's
    last round), else None; window: (first, last) 1-based rounds of the reported window (the steady one,
    else the last one evaluated; None when not evaluable); window_avg_iops (IOPS), data_excursion_pct and
    slope_excursion_pct (% of the window average): that window's numbers (None when not evaluable);
    rounds_evaluated: rounds looked at (stops at the steady round and at the round limit);
    status: "achieved" | "not achieved" (limit reached) | "in progress" | "not evaluable";
    verdict: one line for reports, e.g. "steady state at round 7 (window rounds 3-7)".
    """

    achieved: bool
    round: int | None
    window: tuple[int, int] | None
    window_avg_iops: float | None
    data_excursion_pct: float | None
    slope_excursion_pct: float | None
    rounds_evaluated: int
    status: str
    verdict: str


def _within(value_pct: float, limit_pct: float) -> bool:
    """value_pct <= limit_pct, a tie within floating-point rounding (TIE_RTOL) counting as met."""
    return value_pct <= limit_pct or math.isclose(value_pct, limit_pct, rel_tol=TIE_RTOL, abs_tol=0.0)


def least_squares_slope(values: Sequence[float]) -> float:
    """Slope of the least-squares line through (x, values[x]), x = 0, 1, ... (units of values per round).

    Closed form: sum((x - x_mean) * y) / sum((x - x_mean)^2). Needs at least two values.
    """
    n = len(values)
    if n < 2:
        raise ValueError(f"a slope needs at least 2 values, got {n}")
    x_mean = (n - 1) / 2.0
    sxy = math.fsum((x - x_mean) * float(y) for x, y in enumerate(values))
    sxx = math.fsum((x - x_mean) ** 2 for x in range(n))
    return sxy / sxx


def _checked_values(series: Sequence[float]) -> list[float]:
    """The series as floats; ValueError naming the 1-based round of a NaN, infinite or negative value."""
    values = [float(v) for v in series]
    for i, v in enumerate(values, start=1):
        if not math.isfinite(v) or v < 0:
            raise ValueError(f"round {i}: the tracking variable (IOPS) must be a finite number >= 0, got {v}")
    return values


def window_check(values: Sequence[float]) -> WindowCheck:
    """Apply the PTS rule to exactly one Measurement Window (the last WINDOW_ROUNDS rounds, in order).

    values: the tracking variable per round (IOPS), oldest first. ValueError when there are not exactly
    WINDOW_ROUNDS values, when a value is NaN, infinite or negative, or when the window average is not > 0
    (the excursions are percentages of it).
    """
    if len(values) != WINDOW_ROUNDS:
        raise ValueError(f"a steady-state window is exactly {WINDOW_ROUNDS} rounds, got {len(values)} values; "
                         f"pass the last {WINDOW_ROUNDS} rounds")
    ys = _checked_values(values)
    avg = math.fsum(ys) / len(ys)
    if not avg > 0:
        raise ValueError(f"the window average must be > 0 to express excursions as % of it, got {avg}")
    data_pct = 100.0 * (max(ys) - min(ys)) / avg
    slope = least_squares_slope(ys)
    slope_pct = 100.0 * abs(slope) * (len(ys) - 1) / avg
    data_ok = _within(data_pct, DATA_EXCURSION_PCT)
    slope_ok = _within(slope_pct, SLOPE_EXCURSION_PCT)
    return WindowCheck(window_avg=avg, data_excursion_pct=data_pct, slope_per_round=slope,
                       slope_excursion_pct=slope_pct, data_ok=data_ok, slope_ok=slope_ok,
                       steady=data_ok and slope_ok)


def _check_max_rounds(max_rounds: int) -> None:
    """ValueError unless max_rounds is an integer >= WINDOW_ROUNDS (else no window could ever be judged)."""
    if isinstance(max_rounds, bool) or not isinstance(max_rounds, int) or max_rounds < WINDOW_ROUNDS:
        raise ValueError(f"max_rounds must be an integer >= {WINDOW_ROUNDS} (the window length), "
                         f"got {max_rounds!r}")


def _verdict(status: str, last_round: int, first_round: int, rounds: int, max_rounds: int) -> str:
    """The one-line verdict of a SteadyState."""
    if status == ACHIEVED:
        return f"steady state at round {last_round} (window rounds {first_round}-{last_round})"
    if status == NOT_ACHIEVED:
        return f"not achieved within {max_rounds} rounds"
    if status == IN_PROGRESS:
        return f"not achieved yet: {rounds} of {max_rounds} rounds"
    return f"not evaluable: {rounds} of {WINDOW_ROUNDS} rounds"


def evaluate(series: Sequence[float], max_rounds: int = MAX_ROUNDS) -> SteadyState:
    """Evaluate the PTS rule after every round of `series` (IOPS per round, round 1 first).

    Stops at the first steady window (its last round is the steady round). Rounds after max_rounds are
    not evaluated (the limit is part of the rule). When no window is steady, the last evaluated window's
    numbers are reported: status "not achieved" once max_rounds rounds were evaluated, "in progress"
    before that, "not evaluable" with fewer than WINDOW_ROUNDS rounds.
    """
    _check_max_rounds(max_rounds)
    values = _checked_values(series)
    n = min(len(values), max_rounds)
    if n < WINDOW_ROUNDS:
        return SteadyState(achieved=False, round=None, window=None, window_avg_iops=None,
                           data_excursion_pct=None, slope_excursion_pct=None, rounds_evaluated=n,
                           status=NOT_EVALUABLE, verdict=_verdict(NOT_EVALUABLE, n, 0, n, max_rounds))
    for last in range(WINDOW_ROUNDS, n + 1):
        check = window_check(values[last - WINDOW_ROUNDS:last])
        if check.steady or last == n:
            break
    first = last - WINDOW_ROUNDS + 1
    if check.steady:
        status = ACHIEVED
    else:
        status = NOT_ACHIEVED if last >= max_rounds else IN_PROGRESS
    return SteadyState(achieved=check.steady, round=last if check.steady else None, window=(first, last),
                       window_avg_iops=check.window_avg, data_excursion_pct=check.data_excursion_pct,
                       slope_excursion_pct=check.slope_excursion_pct, rounds_evaluated=last, status=status,
                       verdict=_verdict(status, last, first, last, max_rounds))


def should_stop(series: Sequence[float], max_rounds: int = MAX_ROUNDS) -> bool:
    """For the experiment loop, after each round: stop when steady state is reached or max_rounds rounds ran."""
    return evaluate(series, max_rounds).achieved or len(series) >= max_rounds


def round_table(series: Sequence[float], max_rounds: int = MAX_ROUNDS) -> pd.DataFrame:
    """One row per round: round (1-based), iops, the run-level result of evaluate() repeated on every row
    (ss_achieved, ss_round, window_avg_iops in IOPS, data_excursion_pct, slope_excursion_pct in % of the
    window average; empty when not available) and in_window (the round belongs to the reported window).

    Columns are ROUND_TABLE_COLUMNS; ss_round is a nullable integer (empty CSV cell when not achieved).
    """
    values = _checked_values(series)
    result = evaluate(values, max_rounds)
    rounds = list(range(1, len(values) + 1))
    first, last = result.window if result.window is not None else (0, -1)
    df = pd.DataFrame({
        "round": pd.Series(rounds, dtype="int64"),
        "iops": pd.Series(values, dtype="float64"),
        "ss_achieved": pd.Series([result.achieved] * len(values), dtype="bool"),
        "ss_round": pd.Series([result.round] * len(values), dtype="Int64"),
        "window_avg_iops": pd.Series([result.window_avg_iops] * len(values), dtype="float64"),
        "data_excursion_pct": pd.Series([result.data_excursion_pct] * len(values), dtype="float64"),
        "slope_excursion_pct": pd.Series([result.slope_excursion_pct] * len(values), dtype="float64"),
        "in_window": pd.Series([first <= r <= last for r in rounds], dtype="bool"),
    })
    return df[ROUND_TABLE_COLUMNS]


# ------------------------------------------------------------------------ runs of fio-steady-state

#: The experiment whose table holds the rounds (memstor.experiments.fio_steady_state).
EXPERIMENT = "fio-steady-state"

#: Columns of verdict_table() (``report/tables/steady_state.csv``): one row per device. Units: bytes,
#: seconds, IOPS, MB/s (10^6 bytes/s), µs, % of the window average.
VERDICT_COLUMNS = [
    "host", "workload", "rw", "bs_bytes", "iodepth", "numjobs", "outstanding_io", "ioengine", "direct",
    "span", "span_bytes", "round_s", "precondition_passes", "precondition_bytes", "rounds", "max_rounds",
    "ss_status", "ss_achieved", "ss_round", "window_first", "window_last", "window_avg_iops",
    "window_avg_bw_MBps", "window_avg_lat_mean_us", "window_avg_clat_p99_us", "data_excursion_pct",
    "slope_excursion_pct", "bytes_written", "verdict",
]


def rounds_of(fio: pd.DataFrame, host: str | None = None) -> pd.DataFrame:
    """The tracking rounds of fio-steady-state (every host, or `host`), sorted by host and round: rows of
    a fio table (memstor.analysis.dataset's ``ds.fio`` or the processed CSV) whose experiment is
    fio-steady-state, with the columns of memstor.experiments.fio_steady_state.SS_COLUMNS."""
    if "experiment" not in fio.columns or "round" not in fio.columns:
        return fio.iloc[0:0]
    sel = fio[fio["experiment"] == EXPERIMENT]
    if host is not None:
        sel = sel[sel["host"] == host]
    return sel.sort_values(["host", "round"], kind="stable")


def done_rounds(rounds: pd.DataFrame | None) -> pd.DataFrame:
    """The successful rounds (status done when the column exists, iops present), sorted by host and round;
    an empty frame for None or an empty table."""
    if rounds is None or rounds.empty or "iops" not in rounds.columns:
        return pd.DataFrame(columns=list(rounds.columns) if rounds is not None else ["round", "iops"])
    ok = rounds[rounds["iops"].notna()]
    if "status" in ok.columns:
        ok = ok[ok["status"] == "done"]
    return ok.sort_values([c for c in ("host", "round") if c in ok.columns]).reset_index(drop=True)


def by_host(rounds: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """[(host, its rows)] sorted by host; [("", rounds)] without a host column; [] when empty."""
    if rounds.empty:
        return []
    if "host" not in rounds.columns:
        return [("", rounds)]
    return [(str(h), g) for h, g in rounds.groupby(rounds["host"].fillna("").astype(str), sort=True)]


def successful_series(rounds: pd.DataFrame) -> list[float]:
    """Tracking IOPS of one run's rounds 1, 2, ... up to the first round without a result (the series
    the rule is evaluated on: a failed round ends it)."""
    out: list[float] = []
    ok = rounds["status"] == "done" if "status" in rounds.columns else pd.Series(True, rounds.index)
    for expected, (rnd, good, iops) in enumerate(zip(rounds["round"], ok, rounds["iops"]), start=1):
        if int(rnd) != expected or not good or not iops == iops:
            break
        out.append(float(iops))
    return out


def run_value(rounds: pd.DataFrame, col: str):
    """A run-level column's value (repeated on every row): the first non-empty cell, None when none."""
    if col not in rounds.columns:
        return None
    vals = rounds[col].dropna()
    return vals.iloc[0] if len(vals) else None


def round_span(rounds: pd.DataFrame) -> dict:
    """{span, span_bytes} the rounds wrote over: the run's (file | full_device and its bytes), or 'region' and the
    rounds' own file_size_bytes where they wrote less of a raw device than it preconditioned (eighth read
    S12-loop 1: rounds at --size=256m on a 6 GiB device, measured before memstor wrote rounds over the whole
    device, were read as 'the whole raw device')."""
    span, span_bytes, size = (run_value(rounds, c) for c in ("span", "span_bytes", "file_size_bytes"))
    if span == "full_device" and size and span_bytes and float(size) < float(span_bytes):
        return {"span": "region", "span_bytes": float(size)}
    return {"span": span, "span_bytes": span_bytes}


def verdict_row(host: str, rounds: pd.DataFrame) -> dict:
    """One device's verdict (VERDICT_COLUMNS) from its rounds, the rule applied anew (:func:`evaluate`)
    to the table's IOPS; window averages of MB/s, mean and p99 latency over the same window's rounds."""
    max_rounds = int(run_value(rounds, "max_rounds") or MAX_ROUNDS)
    series = successful_series(rounds)
    res = evaluate(series, max_rounds)
    first, last = res.window or (None, None)
    win = rounds[rounds["round"].between(first, last)] if res.window else rounds.iloc[0:0]

    def mean(col: str) -> float | None:
        """The window's mean of `col` (None unless every window round has it)."""
        return float(win[col].mean()) if len(win) and col in win and win[col].notna().all() else None

    bs = run_value(rounds, "bs_bytes")
    qd, nj = run_value(rounds, "iodepth"), run_value(rounds, "numjobs")
    workload = (f"{size_text(int(bs)) if bs else '?'} {run_value(rounds, 'rw')}, "
                f"QD{int(qd) if qd else '?'}x{int(nj) if nj else '?'}")
    done = done_rounds(rounds)
    return {
        "host": host, "workload": workload, "rw": run_value(rounds, "rw"), "bs_bytes": bs, "iodepth": qd,
        "numjobs": nj, "outstanding_io": qd * nj if qd and nj else None, "ioengine": run_value(rounds, "ioengine"),
        "direct": run_value(rounds, "direct"), **round_span(rounds),
        "round_s": run_value(rounds, "round_s"), "precondition_passes": run_value(rounds, "precondition_passes"),
        "precondition_bytes": run_value(rounds, "precondition_bytes"), "rounds": len(series),
        "max_rounds": max_rounds, "ss_status": res.status, "ss_achieved": res.achieved, "ss_round": res.round,
        "window_first": first, "window_last": last, "window_avg_iops": res.window_avg_iops,
        "window_avg_bw_MBps": mean("bw_MBps"), "window_avg_lat_mean_us": mean("lat_mean_us"),
        "window_avg_clat_p99_us": mean("clat_p99_us"), "data_excursion_pct": res.data_excursion_pct,
        "slope_excursion_pct": res.slope_excursion_pct,
        "bytes_written": float(done["bytes_written"].max()) if len(done) and "bytes_written" in done else None,
        "verdict": res.verdict,
    }


def window_of(rounds: pd.DataFrame) -> pd.DataFrame:
    """One run's rows in the window the rule reports (evaluated anew on the table's IOPS), in round
    order; empty when there is none (fewer than WINDOW_ROUNDS successful rounds)."""
    res = evaluate(successful_series(rounds), int(run_value(rounds, "max_rounds") or MAX_ROUNDS))
    if res.window is None:
        return rounds.iloc[0:0]
    return rounds[rounds["round"].between(*res.window)].sort_values("round")


def verdict_table(fio: pd.DataFrame) -> pd.DataFrame:
    """One row per device with a fio-steady-state run (VERDICT_COLUMNS): ``report/tables/steady_state.csv``."""
    rounds = rounds_of(fio)
    rows = [verdict_row(h, g) for h, g in rounds.groupby("host", sort=True)] if len(rounds) else []
    df = pd.DataFrame(rows, columns=VERDICT_COLUMNS)
    for col in ("ss_round", "window_first", "window_last", "rounds", "max_rounds", "bs_bytes", "iodepth", "numjobs",
                "outstanding_io", "direct", "span_bytes", "precondition_passes", "precondition_bytes", "bytes_written"):
        df[col] = pd.to_numeric(df[col], errors="coerce").round().astype("Int64")
    return df


#: Experiments whose points offer a rate (or search a depth for a latency target) instead of keeping the depth full:
#: their IOPS at the same nominal outstanding I/O are not the closed loop's, so never set beside a window average.
OPEN_EXPERIMENTS = ("fio-load-latency", "mixed-load-map")


def same_configuration(points: pd.DataFrame | None, v: pd.Series) -> pd.DataFrame:
    """The other experiments' measurements of a verdict's configuration (same host, rw, block size and outstanding
    I/O, closed loops only: not :data:`OPEN_EXPERIMENTS`; a fio summary table, memstor.analysis.synthesis
    .fio_summary): one row per experiment with ``points``,
    ``iops_min``, ``iops_max`` (IOPS) and ``file_size_bytes`` (the test file, bytes; empty when not recorded), so
    a window average is read beside what the same workload gave elsewhere in the run (another state, span or
    length). Empty without such points."""
    cols = ["experiment", "points", "iops_min", "iops_max", "file_size_bytes"]
    need = {"host", "experiment", "rw", "bs_bytes", "outstanding_io", "iops"}
    if points is None or points.empty or not need <= set(points.columns):
        return pd.DataFrame(columns=cols)
    p = points[(points["host"].astype(str) == str(v["host"])) & (points["rw"] == v["rw"])
               & (points["bs_bytes"] == v["bs_bytes"]) & (points["outstanding_io"] == v["outstanding_io"])
               & ~points["experiment"].isin((EXPERIMENT, *OPEN_EXPERIMENTS)) & points["iops"].notna()]
    if "direction" in p.columns:
        p = p[p["direction"] != "total"]
    if p.empty:
        return pd.DataFrame(columns=cols)
    size = p["file_size_bytes"] if "file_size_bytes" in p.columns else pd.Series(float("nan"), index=p.index)
    g = p.assign(_size=size).groupby("experiment", sort=True)
    return pd.DataFrame({"points": g["iops"].size(), "iops_min": g["iops"].min(), "iops_max": g["iops"].max(),
                         "file_size_bytes": g["_size"].max()}).reset_index()[cols]
