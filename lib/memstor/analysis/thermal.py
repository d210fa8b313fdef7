"""Was a throughput drop thermal? The drive's temperature series during a long run and the verdict on each
drop of a cliffs table (pure: samples and tables in, tables out).

A consumer SSD throttles when hot: a lasting drop during a long write is called **thermal** when, within
``window_s`` seconds of it, the composite temperature reaches the drive's warning threshold (WCTEMP; when
only the critical threshold CCTEMP is known, :data:`CRITICAL_MARGIN_C` below it: drives start throttling
before their critical temperature, and the spacing of WCTEMP below CCTEMP on real drives is 2-12 °C), a
thermal-management transition counter (TMT1, TMT2) goes up, the warning- or critical-temperature time goes
up, or the critical warning's temperature bit is set. Otherwise the drop keeps its kind (a cliff: an SLC
cache exhausted, garbage collection...). Without thermal data the verdict says "not available (reason)".

The samples are :func:`memstor.parse.smart.parse_thermal_log`'s (``t_s`` since the sampler started);
``offset_s`` moves them onto the cliffs' clock (cliff time = sample ``t_s`` + ``offset_s``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import pandas as pd

from memstor.core.fmt import plain
from memstor.core.schema import missing

#: Columns of :func:`thermal_series`, in order: temperatures in °C, the counters as increases since the
#: first sample that reported them (minutes, transitions, seconds, bytes).
THERMAL_SERIES_COLUMNS = ("t_s", "temperature_c", "warning_temp_c", "critical_temp_c", "warning_temp_time_delta_min",
                          "critical_comp_time_delta_min", "tmt1_transitions_delta", "tmt2_transitions_delta",
                          "tmt1_time_delta_s", "tmt2_time_delta_s", "temperature_flag", "data_written_delta_bytes")
#: Columns :func:`thermal_verdict` adds to a cliffs table (``kind`` itself may change to ``thermal``).
VERDICT_COLUMNS = ("cliff_kind", "thermal_available", "thermal_reason", "thermal_verdict", "thermal_evidence")
#: °C below the critical threshold that counts as the warning level when a drive reports no warning one.
CRITICAL_MARGIN_C = 5.0
#: Seconds either side of a drop within which the temperature and counters are looked at.
WINDOW_S = 10.0

# series column <- reading field, for the counters taken as increases since the first sample
_DELTAS = {"warning_temp_time_delta_min": "warning_temp_time_min", "critical_comp_time_delta_min": "critical_comp_time_min",
           "tmt1_transitions_delta": "thm_temp1_trans_count", "tmt2_transitions_delta": "thm_temp2_trans_count",
           "tmt1_time_delta_s": "thm_temp1_total_time_s", "tmt2_time_delta_s": "thm_temp2_total_time_s",
           "data_written_delta_bytes": "data_written_bytes"}
# counter column -> how the evidence names its increase
_COUNTERS = {"tmt1_transitions_delta": ("TMT1 transitions", ""), "tmt2_transitions_delta": ("TMT2 transitions", ""),
             "warning_temp_time_delta_min": ("warning-temperature time", " min"),
             "critical_comp_time_delta_min": ("critical-temperature time", " min")}


def _shown(v: Any) -> str:
    """A temperature, time or count for the evidence text: at most one decimal, no trailing ``.0``."""
    return plain(round(float(v), 1))


def _num(v: Any) -> float | None:
    return None if v is None or missing(v) or isinstance(v, bool) else float(v)


def thermal_series(samples: Iterable[dict] | dict, *, reason: str | None = None) -> pd.DataFrame:
    """The temperature series of a run: one row per readable sample, sorted by ``t_s``, with the columns
    :data:`THERMAL_SERIES_COLUMNS` (thresholds as read, the counters as increases since the first sample
    that reported them; a counter that went down, a drive reset, is NaN from there). ``samples``: the
    ``samples`` of :func:`memstor.parse.smart.parse_thermal_log`, or its whole result (then its
    availability and reason carry over). ``attrs["available"]`` / ``attrs["reason"]`` say whether there
    is anything to judge by and why not."""
    available = True
    if isinstance(samples, dict):
        available, reason = bool(samples.get("available", True)), samples.get("reason") or reason
        samples = samples.get("samples") or []
    samples = list(samples)
    rows = [s for s in samples if s.get("ok", True) and _num(s.get("t_s")) is not None]
    failed = sum(1 for s in samples if not s.get("ok", True))
    frame = pd.DataFrame([{c: s.get(c) for c in ("t_s", "temperature_c", "warning_temp_c", "critical_temp_c",
                                                 "temperature_flag", *_DELTAS.values())} for s in rows])
    out = pd.DataFrame(index=range(len(frame)), columns=list(THERMAL_SERIES_COLUMNS), dtype=float)
    if len(frame):
        frame = frame.sort_values("t_s", kind="stable").reset_index(drop=True)
        for col in ("t_s", "temperature_c", "warning_temp_c", "critical_temp_c"):
            out[col] = pd.to_numeric(frame[col], errors="coerce")
        out["temperature_flag"] = frame["temperature_flag"].astype(object).where(frame["temperature_flag"].notna(), None)
        for col, field in _DELTAS.items():
            out[col] = _increase(pd.to_numeric(frame[field], errors="coerce"))
    if available and not len(out):
        available = False
        reason = reason or (f"all {failed} thermal samples failed" if failed else "no thermal samples")
    out.attrs.update(available=available, reason=None if available else (reason or "no thermal data"))
    return out


def _increase(values: pd.Series) -> pd.Series:
    """``values`` minus its first known value; NaN from the first drop on (a counter reset)."""
    known = values.dropna()
    if known.empty:
        return values * math.nan
    out = values - known.iloc[0]
    went_down = (values.ffill().diff() < 0).cummax()
    return out.where(~went_down)


def _is_drop(row: pd.Series) -> bool:
    """A drop (level after below level before, or ratio below 1); a row that says neither counts as one."""
    before, after, ratio = _num(row.get("level_before")), _num(row.get("level_after")), _num(row.get("ratio"))
    if before is not None and after is not None:
        return after < before
    return ratio is None or ratio < 1


def _threshold(window: pd.DataFrame, margin_c: float) -> tuple[float | None, str]:
    """The warning level in the window and its name: the warning threshold, else critical - margin."""
    warn = window["warning_temp_c"].dropna()
    if len(warn):
        return float(warn.max()), "warning"
    crit = window["critical_temp_c"].dropna()
    if len(crit):
        return float(crit.max()) - margin_c, f"critical {_shown(float(crit.max()))} °C − {_shown(margin_c)} °C margin"
    return None, ""


def _counter_increases(thermal: pd.DataFrame, t0: float, window_s: float, col: str) -> float | None:
    """How much counter ``col`` went up from the last sample before the window to the end of the window;
    None when the window has no value of it."""
    inside = thermal[(thermal["t"] >= t0 - window_s) & (thermal["t"] <= t0 + window_s)][col].dropna()
    if inside.empty:
        return None
    earlier = thermal[thermal["t"] < t0 - window_s][col].dropna()
    base = earlier.iloc[-1] if len(earlier) else inside.iloc[0]
    return float(inside.max() - base)


def _judge(thermal: pd.DataFrame, t0: float, window_s: float, margin_c: float) -> tuple[str, str]:
    """(verdict, evidence) for a drop at ``t0`` (cliff clock): ``thermal``, ``not thermal`` or ``undetermined``."""
    window = thermal[(thermal["t"] >= t0 - window_s) & (thermal["t"] <= t0 + window_s)]
    where = f"within ±{_shown(window_s)} s of t={_shown(t0)} s"
    if window.empty:
        return "not available", f"no thermal sample {where}"
    found, calm = [], []
    level, name = _threshold(window, margin_c)
    temps = window.dropna(subset=["temperature_c"])
    if level is not None and len(temps):
        hot = temps[temps["temperature_c"] >= level]
        if len(hot):
            first = hot.iloc[0]
            found.append(f"composite {_shown(first['temperature_c'])} °C ≥ {name} {_shown(level)} °C "
                         f"at t={_shown(first['t'])} s")
        else:
            calm.append(f"max composite {_shown(temps['temperature_c'].max())} °C < {name} {_shown(level)} °C {where}")
    for col, (label, unit) in _COUNTERS.items():
        inc = _counter_increases(thermal, t0, window_s, col)
        if inc is not None and inc > 0:
            found.append(f"{label} +{_shown(inc)}{unit}")
        elif inc is not None:
            calm.append(f"{label} +0{unit}")
    if window["temperature_flag"].map(lambda v: v is True).any():
        found.append("critical warning temperature bit set")
    if found:
        return "thermal", "; ".join(found)
    if calm:
        return "not thermal", "; ".join(calm)
    hottest = _shown(temps["temperature_c"].max()) if len(temps) else "–"
    return "undetermined", f"max composite {hottest} °C {where}; no warning threshold and no throttle counters"


def thermal_verdict(cliffs: pd.DataFrame, thermal: pd.DataFrame | None, *, window_s: float = WINDOW_S,
                    offset_s: float = 0.0, margin_c: float = CRITICAL_MARGIN_C, reason: str | None = None) -> pd.DataFrame:
    """``cliffs`` (columns at least ``t_s``, ``kind`` and the levels ``level_before`` / ``level_after`` or
    ``ratio``) with each drop judged against ``thermal`` (:func:`thermal_series`): ``kind`` becomes
    ``thermal`` where the evidence says so, and :data:`VERDICT_COLUMNS` are added: ``cliff_kind`` (the kind
    before), ``thermal_available``, ``thermal_reason`` (why not), ``thermal_verdict`` (``thermal``, ``not
    thermal``, ``undetermined``, ``not a drop`` or ``not available (reason)``) and ``thermal_evidence`` (the
    numbers: "composite 71 °C ≥ warning 70 °C at t=312 s; TMT1 transitions +3"). ``window_s``: seconds
    either side of the drop; ``offset_s``: added to the samples' ``t_s``; ``margin_c``: below the critical
    threshold when no warning one is known; ``reason``: why there is no thermal data (else the series'
    own)."""
    out = cliffs.copy()
    out["cliff_kind"] = out["kind"] if "kind" in out.columns else None
    if "kind" not in out.columns:
        out["kind"] = None
    attrs = thermal.attrs if thermal is not None else {}
    usable = thermal is not None and len(thermal) > 0 and attrs.get("available", True)
    why = reason or attrs.get("reason") or ("no thermal samples" if thermal is not None else "no thermal data")
    series = thermal.assign(t=thermal["t_s"] + offset_s).sort_values("t") if usable and thermal is not None else None
    verdicts: list[tuple[Any, bool, Any, str, Any]] = []
    for _, row in out.iterrows():
        t0 = _num(row.get("t_s"))
        if series is None:
            verdicts.append((row["kind"], False, why, f"not available ({why})", None))
        elif not _is_drop(row):
            verdicts.append((row["kind"], True, None, "not a drop", None))
        elif t0 is None:
            verdicts.append((row["kind"], False, "the drop has no time", "not available (the drop has no time)", None))
        else:
            verdict, evidence = _judge(series, t0, window_s, margin_c)
            if verdict == "not available":
                verdicts.append((row["kind"], False, evidence, f"not available ({evidence})", None))
            else:
                verdicts.append(("thermal" if verdict == "thermal" else row["kind"], True, None, verdict, evidence))
    cols = ["kind", "thermal_available", "thermal_reason", "thermal_verdict", "thermal_evidence"]
    values = pd.DataFrame(verdicts, columns=cols, index=out.index) if verdicts else pd.DataFrame(columns=cols)
    for col in cols:
        out[col] = values[col] if len(values) else pd.Series(dtype=object)
    return out
