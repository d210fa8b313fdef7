"""The SNIA PTS recovery tests' numbers: host idle recovery (HIR) and cross-stimulus recovery (XSR). Pure:
tables in, tables out (memstor.experiments.fio_pts_hir and fio_pts_xsr describe the runs).

**HIR** (:func:`hir_baseline`, :func:`hir_table`). The baseline is the device's steady-state IOPS under
continuous writes: the average of the PTS Measurement Window (memstor.analysis.steady_state: five rounds,
§2.1.24's rule) of the preconditioning rounds, with the 95 % Student-t interval over those five rounds; when
the rule was not met, the last five rounds' mean (said in ``note``). A wait state's IOPS is the mean of its
access segments that FOLLOW an idle of that length (every segment but the first of each wait state, which
follows continuous writes; with the PTS's 360 segments that moves the mean by < 0.3 %), with the 95 %
Student-t interval over those segments (n >= 2; memstor.analysis.summary.ci95). The recovery ratio is that
mean / the baseline, its interval the IOPS interval / the baseline (the baseline's own interval is not folded
in: its half-width, % of the baseline, is in ``note``).

**A recovery is shown, not read off a ratio** (:func:`recovery_shown`): the ratio is a difference from the
baseline only where (1) the baseline's rounds and the segments are windows of one length (within
WINDOW_MATCH; the quick profile's rounds and segments are both 2 s since a reader found its 1-s rounds made the
check unpassable; the full and PTS profiles' 60-s rounds and 5-s segments still differ), (2) there are
MIN_SEGMENTS_CI segments or more and (3) every segment lies beyond the baseline rounds' range, all above it or all below it (with 3
segments and 5 rounds a chance of 2 / C(8, 3) = 3.6 % under no difference: a rank test at 5 %). Otherwise
``recovery_shown`` is False and ``recovery_note`` says which failed, with the numbers (the loop run's 1.15x
came from 2 segments, 119,830-121,992 IOPS, against 1-s rounds; its 0.98x from segments 92,780-112,860 inside
the rounds' 101,285-108,546). ``idle_s_mean`` is the idle measured before the counted segments: fio's exit and
restart add 0.3-0.5 s to the planned wait (0.5 s planned, 0.79-1.12 s measured), so the report names both.

**XSR** (:func:`final_level`, :func:`settle_time`, :func:`xsr_table`). Per transition (phase k -> k+1, e.g.
SEQ 1024KiB -> RND 8KiB):

- a phase's **final level** is the mean throughput (MB/s) of its last third of complete seconds (at least
  one), with the 95 % batch-means interval of memstor.analysis.cliffs.segment_level (empty below 10 seconds);
- the **settle time** (the rule, :data:`SETTLE_RULE`): the per-second MB/s of the new phase is smoothed by a
  centred rolling median of :data:`SETTLE_SMOOTH_S` seconds (the shortest lasting level of the cliff
  analysis: a one- or two-second spike does not count); ``settle_s`` is the start, in s after the new
  phase's first I/O, of the first second from which the smoothed series stays within ±
  :data:`SETTLE_BAND_PCT` % of the new phase's final level until the phase ends. ±10 % is half the PTS
  steady-state data excursion (max - min within 20 % of the average). None when the last smoothed second is
  outside the band ("not settled"). Resolution: 1 s; a step change is found within ± (1 s + half the median
  window) of where it settles.
- **back before it settles** (:func:`back_time`; S12-1cpu 4: "RND 8KiB → SEQ 1024KiB ... settles in 6.00 s" where
  the SEQ phase ran 1,832 MB/s in its first second, above the 1,604 MB/s the same SEQ access held before the
  stimulus; the 6 s were a later step to 2,050 MB/s): where the new phase's access ran in an earlier phase, ``back_s``
  is the first second from which the smoothed series stays at or above (100 - SETTLE_BAND_PCT) % of that earlier
  phase's final level (recovered from the stimulus; above it counts), by the settle rule's smoothing.
- a final level is a level only where its seconds are one (:func:`phase_level`): their data excursion (max - min,
  % of their mean) within the PTS steady-state rule's DATA_EXCURSION_PCT (20 %). The loop run's RND phase ended
  883, 606, 237 MB/s (113 %): its "575 MB/s, settles in 8 s" was a collapse still under way when the phase
  ended; that level is empty now (``from_level_note`` / ``to_level_note`` say why) and no settle time is given.
- whether such a phase was **still moving** is a test of its own (:func:`phase_trend`): the least-squares slope
  of all its seconds (MB/s per s) with its 95 % Student-t interval (n - 2 degrees of freedom); "still moving"
  only where that interval excludes 0, else "stepped after k s: median A before, B after" where the medians either
  side of a split differ by more than the PTS data excursion (:func:`_step`), else "scattering lo-hi MB/s from its
  first second, with no trend"; fewer
  than MIN_TREND_S seconds: not tested. (The 1-CPU run's RND phase, 401, 316, 372, 345, 375, 370, 351, 389,
  310 MB/s, failed the 20 % rule on its last 3 s with a slope of -2.68 MB/s per s, interval -12.5 to 7.1: scatter
  from its first second, not movement; the report had said "still moving".)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from memstor.analysis import steady_state as ss
from memstor.analysis.cliffs import Level, segment_level
from memstor.analysis.summary import ci95
from memstor.core.fmt import fmt_number

#: Columns of :func:`hir_table` (report/tables/hir.csv): one row per device x wait state. wait_s: the planned
#: idle (s); idle_s_mean: the idle measured before the counted segments (s, fio's clock); segments: how many
#: counted; iops_*: their mean IOPS and 95 % interval; baseline_iops: steady-state continuous-write IOPS;
#: recovery_ratio_*: iops / baseline; departure: where the run departs from PTS; note: why a value is empty.
HIR_COLUMNS = ["host", "wait_s", "idle_s_mean", "segments", "iops_mean", "iops_ci_low", "iops_ci_high",
               "baseline_iops", "recovery_ratio", "recovery_ratio_ci_low", "recovery_ratio_ci_high", "departure",
               "note", "baseline_round_s", "segment_s", "recovery_shown", "recovery_note"]
#: Baseline rounds and segments are windows of one length when their median runtimes differ by at most this
#: share (fio's runtimes run a few ms over the asked length).
WINDOW_MATCH = 0.1
#: Columns of :func:`xsr_table` (report/tables/xsr.csv): one row per device x transition. t_transition_s: the new
#: phase's first I/O, s since the test's; *_level_MBps: the phases' final levels (MB/s = 10^6 B/s) with their
#: 95 % intervals; settle_s: s after the transition (empty: not settled); settle_rule: the rule in words;
#: earlier_level_MBps: the final level of the same access in an earlier phase (before the stimulus; empty where the new
#: phase's access ran first here), back_s: s after the transition until the new phase is back at it (:func:`back_time`).
XSR_COLUMNS = ["host", "transition", "t_transition_s", "from_level_MBps", "from_level_MBps_ci_low",
               "from_level_MBps_ci_high", "to_level_MBps", "to_level_MBps_ci_low", "to_level_MBps_ci_high",
               "settle_s", "settle_rule", "departure", "note", "from_level_note", "to_level_note",
               "earlier_level_MBps", "back_s"]
#: The settle band, % of the new phase's final level, and the centred rolling-median window (s).
SETTLE_BAND_PCT = 10.0
SETTLE_SMOOTH_S = 5
#: Fewest seconds of a phase for its trend test (:func:`phase_trend`; 4 degrees of freedom for the slope).
MIN_TREND_S = 6
#: Share of a phase's seconds (its last part) that make its final level.
FINAL_SHARE = 1.0 / 3.0
SETTLE_RULE = (f"first second after the transition from which the {SETTLE_SMOOTH_S}-s centred rolling median of "
               f"the per-second MB/s stays within ±{SETTLE_BAND_PCT:g} % of the new phase's final level (mean of "
               "its last third) until the phase ends")


# ------------------------------------------------------------------------------------------------ HIR


@dataclass(frozen=True)
class Baseline:
    """The continuous-write baseline: IOPS with its 95 % interval (None bounds below two rounds), the
    preconditioning rounds it averages (1-based, inclusive), the steady-state status and a note."""

    iops: float | None
    ci_low: float | None
    ci_high: float | None
    rounds: tuple[int, int] | None
    status: str
    note: str


def _finite(x) -> float | None:
    """x as a float when finite, else None (an empty cell)."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def hir_baseline(iops_per_round: Sequence[float], max_rounds: int) -> Baseline:
    """The baseline of a HIR run from its preconditioning rounds' IOPS (round 1 first; rounds after a failed one
    left out by the caller) and the round limit: the steady-state window's mean (module docstring)."""
    values = [float(v) for v in iops_per_round]
    if not values:
        return Baseline(None, None, None, None, ss.NOT_EVALUABLE, "no preconditioning round measured")
    verdict = ss.evaluate(values, max(max_rounds, ss.WINDOW_ROUNDS))
    first, last = verdict.window if verdict.window else (1, len(values))
    mean, lo, hi, n = ci95(values[first - 1:last])
    note = "" if verdict.achieved else \
        f"steady state {verdict.verdict}: baseline = the mean of rounds {first}-{last}"
    return Baseline(_finite(mean), _finite(lo), _finite(hi), (first, last), verdict.status, note)


def _first(g: pd.DataFrame, col: str):
    """The first non-empty value of a column (None when there is none or no such column)."""
    if col not in g.columns:
        return None
    vals = g[col].dropna()
    vals = vals[vals.astype(str).str.len() > 0]
    return vals.iloc[0] if len(vals) else None


#: Fewest counted segments for an interval of a wait state's mean: with 2 the t-interval has 1 degree of
#: freedom (t = 12.7) and a reviewer saw an IOPS ratio quoted as [-0.08, 1.92]; 3 give t = 4.3.
MIN_SEGMENTS_CI = 3


def _wait_row(host: str, wait: float, seg: pd.DataFrame, base: float | None, departure) -> dict:
    """One hir_table row: the counted segments of one wait state against the baseline."""
    m, low, high, n = ci95(pd.to_numeric(seg["iops"], errors="coerce").tolist())
    mean, lo, hi = _finite(m), _finite(low), _finite(high)
    notes = [] if n >= MIN_SEGMENTS_CI else [f"{n} segment(s) after an idle: no interval (fewer than "
                                              f"{MIN_SEGMENTS_CI})"]
    if n < MIN_SEGMENTS_CI:
        lo = hi = None
    if base is None or not base > 0:
        notes.append("no baseline (no steady-state preconditioning rounds)")

    def ratio(x: float | None) -> float | None:
        return x / base if x is not None and base else None

    idle = _finite(pd.to_numeric(seg.get("idle_s"), errors="coerce").mean()) if "idle_s" in seg else None
    return {"host": host, "wait_s": float(wait), "idle_s_mean": idle, "segments": n, "iops_mean": mean,
            "iops_ci_low": lo, "iops_ci_high": hi, "baseline_iops": base, "recovery_ratio": ratio(mean),
            "recovery_ratio_ci_low": ratio(lo), "recovery_ratio_ci_high": ratio(hi), "departure": departure,
            "note": "; ".join(notes)}


def hir_table(rows: pd.DataFrame, seconds: pd.DataFrame | None = None) -> pd.DataFrame:
    """report/tables/hir.csv (:data:`HIR_COLUMNS`) from fio-pts-hir tables (one or several devices): per device
    and wait state, its access segments after an idle (``phase`` access, ``segment`` >= 2, status done, the write
    direction) against the device's ``baseline_iops``. ``seconds`` (fio-pts-hir-seconds.csv: host, point, iops per
    complete second) lets a recovery be judged where the rounds are longer than the segments (:func:`_shown_columns`).
    No such rows: an empty table with the columns."""
    out: list[dict] = []
    if rows is None or not len(rows) or not {"phase", "wait_s", "segment", "iops"} <= set(rows.columns):
        return pd.DataFrame(out, columns=HIR_COLUMNS)
    df = rows
    if "direction" in df.columns:
        df = df[df["direction"].fillna("write") == "write"]
    for host, g in df.groupby(df["host"] if "host" in df.columns else pd.Series("", index=df.index), sort=True):
        base, departure = _finite(_first(g, "baseline_iops")), _first(g, "departure")
        acc = g[(g["phase"] == "access") & (pd.to_numeric(g["segment"], errors="coerce") >= 2)]
        if "status" in acc.columns:
            acc = acc[acc["status"] == "done"]
        for wait, seg in acc.groupby(pd.to_numeric(acc["wait_s"], errors="coerce"), sort=True):
            row = _with_ratio_interval({**_wait_row(str(host), float(wait), seg, base, departure),
                                        **_shown_columns(g, seg, seconds)})
            half = _baseline_half_pct(g)
            if half is not None:
                row["note"] = "; ".join(x for x in (row["note"], f"baseline ±{half:.1f} % (95 %), not folded "
                                                    "into the ratio's interval") if x)  # S19-bare 4: 'not in' read as outside
            out.append(row)
    return pd.DataFrame(out, columns=HIR_COLUMNS)


def recovery_shown(rounds: Sequence[float], round_s: float | None, segments: Sequence[float],
                   segment_s: float | None, name: str = "baseline rounds") -> tuple[bool | None, str]:
    """(shown, why) of a wait state's recovery (module docstring): the baseline window's round IOPS and their
    length (s), the counted segments' IOPS and their length (s); ``name`` what the baseline values are ('baseline
    rounds', or 'baseline's 5-s windows' where cut from the rounds). None without rounds or segments."""
    if not len(rounds) or not len(segments):
        return None, "no baseline rounds or no counted segments"
    lo, hi, a, b = min(rounds), max(rounds), min(segments), max(segments)
    said = f"segments {fmt_number(a)}-{fmt_number(b)} IOPS against the {name}' {fmt_number(lo)}-{fmt_number(hi)}"
    why = []
    if round_s and segment_s and abs(segment_s / round_s - 1.0) > WINDOW_MATCH:
        why.append(f"baseline from {fmt_number(round_s)}-s rounds, segments of {fmt_number(segment_s)} s (unlike "
                   "windows)")
    if len(segments) < MIN_SEGMENTS_CI:
        why.append(f"{len(segments)} segment(s), fewer than {MIN_SEGMENTS_CI}")
    if not (a > hi or b < lo):
        why.append("the segments' range overlaps the rounds'")  # S11-loop 11: not 'inside' (a mean above them)
    if why:
        return False, f"not shown: {'; '.join(why)} ({said})"
    return True, f"every segment {'above' if a > hi else 'below'} the {name} ({said})"


def _median_runtime(rows: pd.DataFrame) -> float | None:
    """The median ``runtime_s`` (s) of rows; None without the column or values."""
    return _finite(pd.to_numeric(rows["runtime_s"], errors="coerce").median()) if "runtime_s" in rows else None


def _with_ratio_interval(row: dict) -> dict:
    """A wait state's row whose segments all lie beyond the baseline (recovery_shown) but whose ratio's 95 % interval
    includes 1: not shown, the note says both (S21-bare 3: the PDF stated no ratio while hir.csv and hir_recovery
    said it was shown; one verdict everywhere)."""
    lo, hi = row.get("recovery_ratio_ci_low"), row.get("recovery_ratio_ci_high")
    if row.get("recovery_shown") and lo is not None and hi is not None and lo <= 1.0 <= hi:
        return {**row, "recovery_shown": False, "recovery_note": f"not shown: {row['recovery_note']}, but the ratio's "
                f"95 % interval [{fmt_number(lo)}, {fmt_number(hi)}] includes 1"}
    return row


def round_windows(seconds: pd.DataFrame | None, host: str, points: Sequence[str], window_s: float) -> list[float]:
    """Mean IOPS of consecutive windows of ``window_s`` complete seconds cut from each of ``points``' per-second
    IOPS (the HIR seconds table; a round's last partial window left out); [] where a point has fewer seconds than one
    window or no seconds table is given. What a segment of ``window_s`` seconds is compared with where the
    preconditioning rounds are longer (the PTS's 60-s rounds against 5-s segments: S17-1cpu 2, a check the full and
    PTS profiles could only fail)."""
    k = int(round(window_s)) if window_s else 0
    if seconds is None or seconds.empty or k < 1 or not {"host", "point", "iops"} <= set(seconds.columns):
        return []
    own = seconds[seconds["host"].astype(str) == str(host)]
    out: list[float] = []
    for point in points:
        y = pd.to_numeric(own.loc[own["point"] == point, "iops"], errors="coerce").dropna().to_numpy()
        if y.size < k:
            return []
        out += [float(w.mean()) for w in np.split(y[: y.size // k * k], y.size // k)]
    return out


def _shown_columns(g: pd.DataFrame, seg: pd.DataFrame, seconds: pd.DataFrame | None = None) -> dict:
    """baseline_round_s, segment_s, recovery_shown, recovery_note of one wait state (``seg``: its counted
    segments) of one device's rows ``g``: the baseline window's rounds as :func:`hir_baseline` picks them; where
    the rounds are longer than the segments and ``seconds`` holds the rounds' per-second IOPS, windows of the
    segments' length cut from them (:func:`round_windows`) stand for the rounds and baseline_round_s is their
    length."""
    pre = g[g["phase"] == "precondition"] if "phase" in g else g.iloc[0:0]
    pre_iops = pd.to_numeric(pre["iops"], errors="coerce").dropna()
    rounds = pre.loc[pre_iops.index]
    window = hir_baseline(pre_iops.tolist(), len(pre_iops)).rounds if len(pre_iops) else None
    if window:
        rounds = rounds.iloc[window[0] - 1:window[1]]
    round_s, seg_s = _median_runtime(rounds), _median_runtime(seg)
    base, name = pd.to_numeric(rounds["iops"], errors="coerce").tolist(), "baseline rounds"
    if round_s and seg_s and abs(seg_s / round_s - 1.0) > WINDOW_MATCH and "point" in rounds.columns:
        cut = round_windows(seconds, str(_first(g, "host") or ""), rounds["point"].astype(str).tolist(), seg_s)
        if len(cut) >= len(base):
            base, round_s = cut, float(round(seg_s))
            name = f"baseline rounds' {round_s:g}-s windows"
    shown, note = recovery_shown(base, round_s, pd.to_numeric(seg["iops"], errors="coerce").dropna().tolist(), seg_s,
                                 name)
    return {"baseline_round_s": round_s, "segment_s": seg_s, "recovery_shown": shown, "recovery_note": note}


def _baseline_half_pct(g: pd.DataFrame) -> float | None:
    """Half-width of the baseline's 95 % interval in % of the baseline, from the table's columns (None: absent)."""
    base, lo, hi = (_finite(_first(g, c)) for c in ("baseline_iops", "baseline_ci_low", "baseline_ci_high"))
    if base is None or lo is None or hi is None or not base > 0:
        return None
    return 100.0 * (hi - lo) / 2.0 / base


# ------------------------------------------------------------------------------------------------ XSR


def final_level(values: Sequence[float], share: float = FINAL_SHARE) -> Level | None:
    """The final level of a phase's per-second values (in order): segment_level of its last ``share`` (at least
    one second); None without values."""
    y = np.asarray([v for v in values if _finite(v) is not None], dtype=np.float64)
    if y.size == 0:
        return None
    k = max(1, int(math.ceil(y.size * share)))
    return segment_level(y[-k:])


def phase_level(values: Sequence[float], share: float = FINAL_SHARE) -> tuple[Level | None, str]:
    """(the phase's :func:`final_level`, '') where its last ``share`` of seconds is one level (data excursion
    within ss.DATA_EXCURSION_PCT % of their mean), else (None, why: the seconds in MB/s and the excursion)."""
    level = final_level(values, share)
    if level is None:
        return None, ""
    y = [float(v) for v in values if _finite(v) is not None]
    last = y[-max(1, int(math.ceil(len(y) * share))):]
    mean = sum(last) / len(last)
    excursion = 100.0 * (max(last) - min(last)) / mean if mean > 0 else math.inf
    if excursion <= ss.DATA_EXCURSION_PCT:
        return level, ""
    return None, (f"no level: its last {len(last)} s ran {', '.join(fmt_number(v) for v in last)} MB/s, a data "
                  f"excursion of {fmt_number(excursion)} % of their mean {fmt_number(mean)} (PTS: at most "
                  f"{ss.DATA_EXCURSION_PCT:g} %): {phase_trend(y)}")


def phase_trend(values: Sequence[float]) -> str:
    """Whether a phase's per-second MB/s (in order, every second of the phase) were still moving: the
    least-squares slope (MB/s per s) and its 95 % Student-t interval; 'still moving' where the interval excludes
    0, 'scattering lo-hi MB/s from its first second, with no trend' where it holds 0; fewer than
    :data:`MIN_TREND_S` seconds: not tested, with why."""
    y = np.asarray([v for v in values if _finite(v) is not None], dtype=np.float64)
    if y.size < MIN_TREND_S:
        return f"whether it was still moving is not tested ({y.size} s, fewer than {MIN_TREND_S})"
    from scipy import stats  # slow first import: only when a phase has no level

    fit = stats.linregress(np.arange(y.size, dtype=np.float64), y)
    half = float(stats.t.ppf(0.975, y.size - 2)) * float(fit.stderr)  # 0 on a straight line: its slope stands
    lo, hi = float(fit.slope) - half, float(fit.slope) + half
    said = (f"least-squares slope {fmt_number(fit.slope)} MB/s per s over its {y.size} s, 95 % interval "
            f"{fmt_number(lo)} to {fmt_number(hi)}")
    if lo > 0 or hi < 0:
        return f"still moving when the phase ended ({said})"
    if step := _step(y):  # S12-loop9 1: a step (2,735, 2,551, then 1,188 ... MB/s) is no scatter
        return f"{step}; no linear trend ({said})"
    return (f"scattering {fmt_number(y.min())}-{fmt_number(y.max())} MB/s from its first second, with no trend "
            f"({said})")


def _step(y: np.ndarray) -> str:
    """'stepped after 2 s: median 2,643 MB/s before, 938 MB/s after' at the split (2 s or more on each side) that
    leaves the least squared deviation about the two sides' means (one change point, least squares), where the medians
    either side differ by more than the PTS data-excursion share (ss.DATA_EXCURSION_PCT); '' where they do not (the
    series scatters about one level)."""
    splits = range(2, y.size - 1)
    if not len(splits):
        return ""
    k = min(splits, key=lambda j: float(((y[:j] - y[:j].mean()) ** 2).sum() + ((y[j:] - y[j:].mean()) ** 2).sum()))
    a, b = float(np.median(y[:k])), float(np.median(y[k:]))
    if min(a, b) <= 0 or max(a, b) / min(a, b) <= 1 + ss.DATA_EXCURSION_PCT / 100:
        return ""
    return f"stepped after {k} s: median {fmt_number(a)} MB/s before, {fmt_number(b)} MB/s after"


def settle_time(values: Sequence[float], level: float, band_pct: float = SETTLE_BAND_PCT,
                smooth_s: int = SETTLE_SMOOTH_S) -> float | None:
    """Seconds after the transition until the phase settles (module docstring): ``values`` are the new phase's
    per-second MB/s, second 1 first (the second i covers [i - 1, i) s after the transition); ``level`` its
    final level. 0: within the band from the first second; None: outside it at the end (not settled)."""
    if not math.isfinite(level):
        return None
    return _stays_from(values, smooth_s, lambda m: np.abs(m - level) <= band_pct / 100.0 * abs(level))


def back_time(values: Sequence[float], earlier: float, band_pct: float = SETTLE_BAND_PCT,
              smooth_s: int = SETTLE_SMOOTH_S) -> float | None:
    """Seconds after the transition until the new phase is back at the level its access held before the stimulus
    (``earlier``, MB/s): the first second from which the smoothed series (as :func:`settle_time`) stays at or above
    (100 - ``band_pct``) % of it. 0: from the first second; None: below it at the end (not back)."""
    if not math.isfinite(earlier) or earlier <= 0:
        return None
    return _stays_from(values, smooth_s, lambda m: m >= (1.0 - band_pct / 100.0) * earlier)


def _stays_from(values: Sequence[float], smooth_s: int, inside) -> float | None:
    """The start (s after the transition) of the first second from which the per-second ``values``, smoothed by a
    centred rolling median of ``smooth_s`` s, stay ``inside`` (a test on the smoothed array) to the end; 0: from
    the first second; None: without values, or outside at the last second."""
    y = pd.Series([float(v) for v in values], dtype=float)
    if y.empty:
        return None
    smooth = y.rolling(int(smooth_s), center=True, min_periods=1).median().to_numpy()
    outside = np.flatnonzero(~inside(smooth))
    if outside.size == 0:
        return 0.0
    last = int(outside[-1])
    return None if last == y.size - 1 else float(last + 1)


def _phase_values(sec: pd.DataFrame, phase) -> tuple[list[float], float | None]:
    """(MB/s per second in order, first second's start) of one phase of one device's seconds table."""
    s = sec[sec["phase"] == phase].sort_values("t_s")
    vals = pd.to_numeric(s["bw_MBps"], errors="coerce").tolist()
    start = float(s["t_s"].iloc[0]) - 1.0 if len(s) else None
    return vals, start


def _transition_row(host: str, label: str, t_start, before: Level | None, after: Level | None,
                    settle: float | None, departure, notes: list[str], why: tuple[str, str] = ("", ""),
                    back: tuple[float | None, float | None] = (None, None)) -> dict:
    """One xsr_table row; ``why``: the (from, to) levels' notes of :func:`phase_level`; ``back``: (the access's
    earlier level, MB/s, and :func:`back_time`)."""
    notes = notes + [f"{side}: {lv.note}" for side, lv in (("from", before), ("to", after)) if lv and lv.note]
    return {"host": host, "transition": label, "t_transition_s": _finite(t_start),
            "from_level_MBps": before.mean if before else None, "from_level_MBps_ci_low": before.lo if before else None,
            "from_level_MBps_ci_high": before.hi if before else None, "to_level_MBps": after.mean if after else None,
            "to_level_MBps_ci_low": after.lo if after else None, "to_level_MBps_ci_high": after.hi if after else None,
            "settle_s": settle, "settle_rule": SETTLE_RULE, "departure": departure, "note": "; ".join(notes),
            "from_level_note": why[0], "to_level_note": why[1], "earlier_level_MBps": back[0], "back_s": back[1]}


def xsr_table(seconds: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """report/tables/xsr.csv (:data:`XSR_COLUMNS`) from fio-pts-xsr's per-second table (``host, phase, t_s,
    bw_MBps``) and its table (``host, phase, stimulus, t_start_s, status, departure``): one row per device and
    transition between consecutive phases. Nothing to compare: an empty table with the columns."""
    out: list[dict] = []
    need = {"host", "phase", "stimulus"}
    if seconds is None or rows is None or not len(rows) or not need <= set(rows.columns):
        return pd.DataFrame(out, columns=XSR_COLUMNS)
    for host, g in rows.groupby("host", sort=True):
        phases = g.drop_duplicates("phase").sort_values("phase")
        sec = seconds[seconds["host"] == host] if len(seconds) else seconds
        departure = _first(g, "departure")
        seen: dict[str, Level | None] = {}  # stimulus -> the final level of its first phase
        for (_, a), (_, b) in zip(phases.iterrows(), phases.iloc[1:].iterrows()):
            label = f"{a['stimulus']} → {b['stimulus']}"
            va, _ = _phase_values(sec, a["phase"]) if len(sec) else ([], None)
            vb, start_b = _phase_values(sec, b["phase"]) if len(sec) else ([], None)
            (before, why_a), (after, why_b) = phase_level(va), phase_level(vb)
            seen.setdefault(str(a["stimulus"]), before)
            earlier = seen.get(str(b["stimulus"]))
            back = (earlier.mean, back_time(vb, earlier.mean)) if earlier else (None, None)
            notes = [] if vb else [f"phase {b['phase']}: no per-second throughput"]
            t_start = b.get("t_start_s") if _finite(b.get("t_start_s")) is not None else start_b
            settle = settle_time(vb, after.mean) if after else None
            if after and settle is None:
                notes.append(f"not settled within the phase's {len(vb)} s")
            out.append(_transition_row(str(host), label, t_start, before, after, settle, departure, notes,
                                       (why_a, why_b), back))
    return pd.DataFrame(out, columns=XSR_COLUMNS)
