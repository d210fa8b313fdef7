"""Write saturation (SNIA PTS WSAT) and the write cliff, from the processed tables of fio-write-saturation
(pure).

A write-saturation run writes continuously (4 KiB random writes, and 128 KiB sequential ones: the consumer
"copy a big file") until a multiple of the span is written. Its per-second series
(``fio-write-saturation-seconds.csv``) goes through the one cliff detector (memstor.analysis.cliffs: change
points with a penalty from the series' own noise, levels with 95 % intervals) and each drop through the
thermal verdict (memstor.analysis.thermal: the drive's warning temperature or throttle counters near it make
it "thermal"; without a readable sensor: "not available (reason)").

Levels of one run: **burst** = the first segment's level (the SLC cache, or the drive's first state),
**sustained** = the last segment's level (after every cliff): the figure a sustained-write spec is compared
with. Without a cliff both are the whole run's level ("no cliff" is a result) and ``sustained_over_burst`` is
empty: one window compared with itself is 1.00 by construction, not a measurement. Units: MB/s = 10^6 B/s,
IOPS, GB = 10^9 B, s.

**One level is tested, not assumed.** A run without a cliff is one level only if its series is one: the
detector can miss a rise or a slow drift (the loop device's 4 KiB run rose from a median 154 MB/s in its first
11 whole seconds to 249 MB/s in its last 11, Mann-Whitney p = 0.002, with no change point found).
:func:`level_shift` gives the medians of the first and second halves of the seconds the sustained level is
read from (after the last change point; all of them without one) (``first_half_MBps``,
``second_half_MBps``) and the two-sided Mann-Whitney p of the two halves (``level_p``); validity's
wsat_one_level judges them.

**Whole seconds only.** The seconds table (t_s = the END of each second since the job started) holds every
second the run touched: a run stopped by bytes ends inside its last second (runtime 1.708 s: second 2 holds
0.7 s of writing, logged as a second at 1,608 MB/s beside fio's 2,515 MB/s; a 16-vCPU run's "no cliff, 1,980
MB/s throughout" was 3,212 and a partial last second's 748 where fio said 3,234). Levels and cliffs are found
in the WHOLE seconds only (:func:`whole_seconds`): those that end by fio's own ``runtime_s`` (+
WHOLE_SECOND_SLACK_S); without a recorded runtime, every second but the last (fio up to 3.36 never logs a
job's last window and 3.42 logs it partial: the last second is partial in either). The table's ``seconds``
counts every second, ``whole_seconds`` those used; ``series_MBps`` (their mean) beside ``run_MBps`` (fio's
whole-run figure) is checked by validity's series_matches_whole.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from memstor.analysis.cliffs import CLIFF_COLUMNS, find_cliffs, segment_level
from memstor.analysis.job_regions import regions_table
from memstor.analysis.thermal import THERMAL_SERIES_COLUMNS, thermal_verdict
from memstor.core.fmt import fmt_number
from memstor.core.schema import missing, truthy
from memstor.core.units import size_text

EXPERIMENT = "fio-write-saturation"
SECONDS = f"{EXPERIMENT}-seconds"
THERMAL = f"{EXPERIMENT}-thermal"

#: Columns of :func:`wsat_cliffs` (report/tables/wsat_cliffs.csv).
CLIFFS_COLUMNS = ["host", "point", "config", "workload", *CLIFF_COLUMNS, "thermal_verdict", "thermal_evidence"]
#: Columns of :func:`wsat_table` (report/tables/wsat.csv).
WSAT_COLUMNS = ["host", "point", "config", "workload", "rw", "bs_bytes", "span", "span_bytes", "state_at_start",
                "tgbw_GB", "stopped_by", "seconds", "burst_MBps", "burst_MBps_ci_low", "burst_MBps_ci_high",
                "sustained_MBps", "sustained_MBps_ci_low", "sustained_MBps_ci_high", "sustained_iops",
                "sustained_over_burst", "cliffs", "first_cliff_GB", "first_cliff_s", "thermal", "target_bytes",
                "bytes_written", "status", "runtime_s", "whole_seconds", "series_MBps", "run_MBps",
                "level_seconds", "first_half_MBps", "second_half_MBps", "level_p"]
#: A second that ends within this many seconds after fio's runtime is whole: fio's runtime is in ms and its
#: windows close a few ms late (1001, 2002 ms); a second covered to 99 % biases its value by 1 %, half the 2 %
#: tolerance of series_matches_whole.
WHOLE_SECOND_SLACK_S = 0.01
#: Fewest whole seconds in each half of a series for :func:`level_shift` (4 + 4: the smallest two-sided
#: Mann-Whitney p is then 2/70 = 0.029, below the 0.05 the check uses; fewer cannot show a shift at all).
LEVEL_HALF_MIN = 4
#: Columns of :func:`thermal_table` (report/tables/thermal.csv).
THERMAL_COLUMNS = ["host", "point", "t_s", "temperature_c", "warning_temp_c", "critical_temp_c",
                   "tmt1_transitions_delta", "tmt2_transitions_delta", "warning_temp_time_delta_min",
                   "available", "reason"]


def workload_name(rw, bs_bytes, overlapped: bool = False) -> str:
    """'4 KiB random write' / '128 KiB sequential write' from fio's rw and the block size (bytes); '128 KiB write,
    jobs overlapped (not sequential)' for a sequential run whose jobs all wrote the same span from offset 0
    (memstor.analysis.job_regions; S7-bare M-12)."""
    bs = int(bs_bytes) if not missing(bs_bytes) else 0
    size = f"{bs // 1024} KiB" if bs and bs % 1024 == 0 else f"{bs} B"
    if overlapped and not str(rw).startswith("rand"):
        return f"{size} write, jobs overlapped (not sequential)"
    return f"{size} {'random' if str(rw).startswith('rand') else 'sequential'} write"


def _point_series(seconds: pd.DataFrame, host: str, point: str) -> pd.DataFrame:
    s = seconds[(seconds["host"] == host) & (seconds["point"] == point)]
    if "direction" in s.columns:
        s = s[s["direction"].fillna("write") == "write"]
    return s.sort_values("t_s")


def whole_seconds(series: pd.DataFrame, runtime_s=None) -> pd.DataFrame:
    """The rows of one run's per-second series (``t_s``: the END of the second, s since the job started) that
    are whole seconds of writing: ending by fio's ``runtime_s`` (s) + WHOLE_SECOND_SLACK_S; without a
    runtime, every row but the last (the module docstring: the last second is partial in every fio)."""
    if series.empty:
        return series
    t = pd.to_numeric(series["t_s"], errors="coerce")
    runtime = pd.to_numeric(pd.Series([runtime_s]), errors="coerce").iloc[0]
    if runtime == runtime and runtime > 0:
        return series[(t >= 1.0) & (t <= float(runtime) + WHOLE_SECOND_SLACK_S)]
    return series[t < t.max()]


def mark_whole(runs: pd.DataFrame, seconds: pd.DataFrame | None) -> pd.DataFrame | None:
    """The per-second table with, on each row, ``whole_second`` (bool: a whole second of writing by
    :func:`whole_seconds`, fio's ``runtime_s`` of its run) and its run's ``runtime_s`` (s) and ``run_MBps`` (fio's
    whole-run MB/s, 10^6 B/s): the figures draw whole seconds only, and a run with none as fio's figure (R-def:
    a 0.149-s run's one logged second, 64 MB/s, was drawn beside fio's 450 MB/s)."""
    if seconds is None or seconds.empty or runs is None or runs.empty:
        return seconds
    out = seconds.copy()
    out["whole_second"], out["runtime_s"], out["run_MBps"] = False, np.nan, np.nan
    for _, r in _runs(runs).iterrows():
        every, whole = _run_series(out, r)
        out.loc[whole.index, "whole_second"] = True
        out.loc[every.index, ["runtime_s", "run_MBps"]] = [r.get("runtime_s"), r.get("bw_MBps")]
    return out


def _run_series(seconds: pd.DataFrame, r: pd.Series) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(every second, the whole seconds) of run ``r``'s series."""
    series = _point_series(seconds, r["host"], r["point"])
    return series, whole_seconds(series, r.get("runtime_s"))


def _thermal_series(thermal: pd.DataFrame, host: str, point: str) -> tuple[pd.DataFrame | None, str | None]:
    """(the point's temperature series for memstor.analysis.thermal.thermal_verdict, or None; the reason
    when there is none)."""
    if thermal is None or thermal.empty or "point" not in thermal:
        return None, "no temperature table (run before drive sampling existed)"
    t = thermal[(thermal["host"] == host) & (thermal["point"] == point)]
    ok = t[t["available"].map(truthy)] if "available" in t else t
    if ok.empty:
        reasons = t["reason"].dropna().astype(str) if "reason" in t else pd.Series([], dtype=str)
        return None, reasons.iloc[0] if len(reasons) else "no temperature readings"
    series = ok.reindex(columns=list(THERMAL_SERIES_COLUMNS))
    series.attrs.update(available=True, reason=None)
    return series, None


def point_cliffs(series: pd.DataFrame, thermal: pd.DataFrame | None, why: str | None) -> pd.DataFrame:
    """The cliffs of one run's per-second MB/s (``t_s``, ``bw_MBps``, ``gb_written``), each drop judged
    thermal or not (memstor.analysis.thermal.thermal_verdict)."""
    cols = [c for c in ("t_s", "bw_MBps", "gb_written") if c in series]
    cliffs = find_cliffs(series[cols], "bw_MBps")
    if cliffs.empty:
        return cliffs.assign(thermal_verdict=pd.Series(dtype=object), thermal_evidence=pd.Series(dtype=object))
    return thermal_verdict(cliffs, thermal, reason=why)


def wsat_cliffs(runs: pd.DataFrame, seconds: pd.DataFrame, thermal: pd.DataFrame | None) -> pd.DataFrame:
    """Every cliff of every write-saturation run (:data:`CLIFFS_COLUMNS`); runs: the experiment's rows."""
    out = []
    for _, r in _runs(runs).iterrows():
        _, series = _run_series(seconds, r)
        if len(series) == 0:
            continue
        th, why = _thermal_series(thermal, r["host"], r["point"])
        c = point_cliffs(series, th, why)
        for _, row in c.iterrows():
            out.append({"host": r["host"], "point": r["point"], "config": r.get("config"),
                        "workload": workload_name(r["rw"], r["bs_bytes"]), **row.to_dict()})
    return pd.DataFrame(out, columns=CLIFFS_COLUMNS)


def _runs(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per run (point): the write direction of done points."""
    if runs is None or runs.empty:
        return pd.DataFrame(columns=["host", "point", "config", "rw", "bs_bytes"])
    r = runs[runs["table"] == EXPERIMENT] if "table" in runs else runs
    if "direction" in r:
        r = r[r["direction"] == "write"]
    return r.drop_duplicates(["host", "point"])


def _levels(series: pd.DataFrame, cliffs: pd.DataFrame) -> tuple:
    """((burst, lo, hi), (sustained, lo, hi)) in MB/s: the first and last segment's levels, or the whole
    run's when there is no cliff."""
    if len(cliffs):
        first, last = cliffs.iloc[0], cliffs.iloc[-1]
        return ((first["level_before"], first["level_before_lo"], first["level_before_hi"]),
                (last["level_after"], last["level_after_lo"], last["level_after_hi"]))
    whole = segment_level(pd.to_numeric(series["bw_MBps"], errors="coerce").dropna().to_numpy(np.float64))
    level = (whole.mean, whole.lo, whole.hi)
    return level, level


def wsat_table(runs: pd.DataFrame, seconds: pd.DataFrame, cliffs: pd.DataFrame,
               metas: list | None = None) -> pd.DataFrame:
    """One row per write-saturation run (:data:`WSAT_COLUMNS`): the span and its state, TGBW, burst and
    sustained levels with their 95 % intervals, the sustained IOPS, how many cliffs and where the first is. metas
    (the points' meta sidecars with their device as ``host``, memstor.analysis.dataset.Dataset.metas): a run whose
    jobs overlapped is named so (:func:`workload_name`), not a sequential write."""
    regions = regions_table(metas or [])
    overlapped = {(str(h), str(p)) for h, p, o in zip(regions["host"], regions["point"], regions["overlap"]) if o}
    out = []
    for _, r in _runs(runs).iterrows():
        every, series = _run_series(seconds, r)
        mine = cliffs[(cliffs["host"] == r["host"]) & (cliffs["point"] == r["point"])] if len(cliffs) else cliffs
        if len(series) == 0:
            burst = sustained = (None, None, None)
        else:
            burst, sustained = _levels(series, mine)
        bs = float(r["bs_bytes"]) if not missing(r.get("bs_bytes")) else math.nan
        drops = mine[mine["level_after"] < mine["level_before"]] if len(mine) else mine
        out.append({
            "host": r["host"], "point": r["point"], "config": r.get("config"),
            "workload": workload_name(r["rw"], r["bs_bytes"], (str(r["host"]), str(r["point"])) in overlapped),
            "rw": r["rw"], "bs_bytes": r["bs_bytes"],
            "span": r.get("span"), "span_bytes": r.get("span_bytes"), "state_at_start": r.get("state_at_start"),
            "tgbw_GB": r.get("tgbw_GB"), "stopped_by": r.get("stopped_by"), "seconds": len(every),
            "burst_MBps": burst[0], "burst_MBps_ci_low": burst[1], "burst_MBps_ci_high": burst[2],
            "sustained_MBps": sustained[0], "sustained_MBps_ci_low": sustained[1],
            "sustained_MBps_ci_high": sustained[2],
            "sustained_iops": sustained[0] * 1e6 / bs if sustained[0] is not None and bs > 0 else None,
            "sustained_over_burst": sustained[0] / burst[0] if len(mine) and sustained[0] is not None and burst[0]
            else None,
            "cliffs": len(drops), "first_cliff_GB": drops["gb_written"].iloc[0] if len(drops) else None,
            "first_cliff_s": drops["t_s"].iloc[0] if len(drops) else None, "thermal": r.get("thermal"),
            **_run_figures(r, series), **_level_test(series, mine),
        })
    return pd.DataFrame(out, columns=WSAT_COLUMNS)


def level_shift(mbps) -> tuple[float | None, float | None, float | None]:
    """(first half's median MB/s, second half's median MB/s, two-sided Mann-Whitney p of the two halves) of a
    per-second series (MB/s, whole seconds in time order; an odd middle second is left out); (None, None,
    None) with fewer than LEVEL_HALF_MIN values per half. Medians far apart with a small p: the series rises
    or falls, so it is not one level."""
    x = pd.to_numeric(pd.Series(mbps), errors="coerce").dropna().to_numpy(np.float64)
    half = x.size // 2
    if half < LEVEL_HALF_MIN:
        return None, None, None
    first, second = x[:half], x[x.size - half:]
    from scipy.stats import mannwhitneyu  # slow first import (1.7 s measured): only when a series is tested
    p = float(mannwhitneyu(first, second, alternative="two-sided").pvalue)
    return float(np.median(first)), float(np.median(second)), p


def _level_test(whole: pd.DataFrame, cliffs: pd.DataFrame) -> dict:
    """:func:`level_shift` of the seconds the sustained level is read from: the whole seconds after the last
    change point (t_s after its t_s), or all of them without one; ``level_seconds`` how many."""
    tail = whole
    if len(cliffs) and len(whole):
        tail = whole[pd.to_numeric(whole["t_s"], errors="coerce") > float(cliffs["t_s"].max())]
    mbps = pd.to_numeric(tail["bw_MBps"], errors="coerce").dropna() if "bw_MBps" in tail else pd.Series([])
    first, second, p = level_shift(mbps)
    return {"level_seconds": len(mbps), "first_half_MBps": first, "second_half_MBps": second, "level_p": p}


def _run_figures(r: pd.Series, whole: pd.DataFrame) -> dict:
    """The run's own figures beside its series: target and written bytes, status, fio's runtime (s) and
    whole-run MB/s, the whole seconds and their mean MB/s (None where not recorded)."""
    mbps = pd.to_numeric(whole["bw_MBps"], errors="coerce").dropna() if "bw_MBps" in whole else pd.Series([])
    return {"target_bytes": r.get("target_bytes"), "bytes_written": r.get("bytes_written"),
            "status": r.get("status"), "runtime_s": r.get("runtime_s"), "whole_seconds": len(whole),
            "series_MBps": float(mbps.mean()) if len(mbps) else None, "run_MBps": r.get("bw_MBps")}


def thermal_table(thermal: pd.DataFrame | None) -> pd.DataFrame:
    """The drive-temperature readings of the write-saturation runs (:data:`THERMAL_COLUMNS`): one row per
    reading, or one row per run saying why there is none."""
    if thermal is None or thermal.empty:
        return pd.DataFrame(columns=THERMAL_COLUMNS)
    return thermal.reindex(columns=THERMAL_COLUMNS)


def no_cliff_words(runs: pd.DataFrame | None, host: str, rw: str, bs_bytes: int | None) -> str:
    """'; the write-saturation run wrote 128 KiB (QD32x4) over the whole device at 1,316 MB/s (its one level: ...) with
    no cliff, another drive state' for host's write-saturation run of ``rw`` at ``bs_bytes`` that found no cliff and
    could tell one from noise (no wsat_series caveat: S19-bare 2, a 2-s run called 'no cliff'); a run with a cliff is
    compared itself, on its level after it (synthesis._wsat_choice); '' where none. Said beside a spec row whose block
    size the sweeps lacked (S18-loop 1: 'the spec's 128 KiB ... not in them' beside such a run)."""
    if runs is None or runs.empty or not bs_bytes:
        return ""
    told = runs["caveat"].fillna("").astype(str) == "" if "caveat" in runs else True  # S19-bare 2: a 2-s run
    sel = runs[(runs["host"].astype(str) == host) & (runs["rw"] == rw) & (runs["bs_bytes"] == bs_bytes)
               & (pd.to_numeric(runs["cliffs"], errors="coerce") == 0) & told  # can tell no cliff from noise
               & pd.to_numeric(runs["sustained_MBps"], errors="coerce").notna()]
    if sel.empty:
        return ""
    r = sel.iloc[0]
    qd = re.search(r"qd(\d+)x(\d+)", str(r.get("config") or ""), re.IGNORECASE)
    where = "the whole device" if r["span"] == "full_device" else "its span"
    return (f"; the write-saturation run wrote {size_text(int(bs_bytes))}{f' (QD{qd[1]}x{qd[2]})' if qd else ''} over "
            f"{where} at {fmt_number(r['sustained_MBps'])} MB/s (its one level: the mean of its whole seconds) with no "
            "cliff, another drive state")
