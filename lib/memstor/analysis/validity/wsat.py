"""Write-saturation checks per run (memstor.analysis.wsat.wsat_table rows). Each judges both sides; a run without
the number a check needs gives ``unchecked`` (never pass).

- ``wsat_written``: the run wrote the multiple of the span it was asked to. Value: bytes written / target
  bytes (or, without a recorded target, the GB written of a run stopped by its bytes). Below WRITTEN_LOW
  (stopped by the time cap: a cliff after that point is not seen): warn; above WRITTEN_HIGH (more than asked:
  the span or io_size was not what the run planned): warn. A failed run, a status other than done, stopped_by
  not ``bytes``/``time`` or no bytes written: unchecked ("the target written" is never said of those).
- ``wsat_series``: the series is long enough to tell a lasting level from noise. Value: whole seconds
  (memstor.analysis.wsat.whole_seconds). Below MIN_SECONDS: warn (one level at most); below MIN_LEVEL_SECONDS:
  fail (no level at all: a run under 2 s is fio's whole figure only); above the run's own runtime (+1 s): fail
  (the series is not this run's). No series: unchecked.
- ``series_matches_whole``: the mean of the whole seconds (MB/s) against fio's whole-run MB/s, as a signed %
  difference. Within +-MATCH_PCT: pass; within +-MATCH_FAIL_PCT: warn; beyond: fail (the levels drawn from the
  series are not the run's). Either figure missing: unchecked; no row when the table has no fio figure at all.
- ``wsat_one_level``: a run's series is one level (a run without a cliff says "one level"; the detector can miss
  a rise or a drift). Value: the second half's median MB/s / the first half's (memstor.analysis.wsat.level_shift).
  Fail when the halves differ (two-sided Mann-Whitney p < LEVEL_ALPHA) by more than LEVEL_BAND either way (a
  rise above 1 + LEVEL_BAND or a fall below 1 - LEVEL_BAND); a shift inside the band, or one the test cannot tell
  from noise, passes. Fewer than 2 x 4 whole seconds: unchecked; under MIN_LEVEL_SECONDS no row (wsat_series
  fails: no level at all). A run with a cliff is tested on the seconds after its last change point, where its
  sustained level is read (a rise there is as much not one level).
"""

from __future__ import annotations

import math

import pandas as pd

from memstor.analysis.cliffs import MIN_SEGMENT_S
from memstor.analysis.validity.rows import FAIL, PASS, WARN, band, has, n, num, row, unchecked

#: Fewest whole seconds of a run's series in which a cliff can be found and both levels measured.
MIN_SECONDS = 4 * MIN_SEGMENT_S
#: Fewest whole seconds for a level at all: one whole second has no spread to tell it from noise.
MIN_LEVEL_SECONDS = 2
#: Share of the target written below which the run stopped early (the time cap; fio writes io_size per job
#: exactly when it is not cut: measured ratios 1.000).
WRITTEN_LOW = 1.0
#: Above this share the run wrote more than asked (a span or io_size other than planned; 1 % covers rounding
#: io_size to whole blocks per job).
WRITTEN_HIGH = 1.01
#: The per-second series (whole seconds) averages to fio's whole-run figure within this many % (both ways):
#: the series and the figure count the same bytes; whole seconds leave out at most a second's drift.
MATCH_PCT = 2.0
#: Beyond this many % the series does not describe the run (the 16-vCPU run's partial last second made it
#: -39 %): its levels are not shown.
MATCH_FAIL_PCT = 10.0
#: Two-sided Mann-Whitney p of the halves below which they differ.
LEVEL_ALPHA = 0.05
#: A shift between the halves' medians within this fraction (either way) is one level: the spread assumed for
#: single runs elsewhere in the report (10 %); a long series makes a tiny drift significant, not a second level.
LEVEL_BAND = 0.10
_SECTION = "write_saturation"


def wsat_rows(wsat: pd.DataFrame | None) -> list[dict]:
    """wsat_written, wsat_series, series_matches_whole and wsat_one_level per write-saturation run."""
    if not has(wsat, "host", "workload", "stopped_by", "seconds"):
        return []
    rows = []
    for _, r in wsat.iterrows():
        subject = f"{r['workload']} ({r['point']})"
        rows.append(_written(r, subject))
        rows.append(_series(r, subject))
        if "run_MBps" in wsat and wsat["run_MBps"].notna().any():
            rows.append(_matches(r, subject))
        if "level_p" in wsat and (num(r.get("whole_seconds")) or 0) >= MIN_LEVEL_SECONDS:
            rows.append(_one_level(r, subject))
    return rows


def _written(r: pd.Series, subject: str) -> dict:
    gb, how = num(r.get("tgbw_GB")), str(r.get("stopped_by"))
    target, written = num(r.get("target_bytes")), num(r.get("bytes_written"))
    status_ok = str(r.get("status", "done")) in ("done", "nan", "None")
    if not status_ok or how not in ("bytes", "time") or gb is None or gb <= 0:
        why = (f"the run's status is {r.get('status')}" if not status_ok else
               f"stopped by {how!r} (not the target, not the time cap)" if how not in ("bytes", "time")
               else "no bytes written recorded")
        return unchecked(r["host"], "wsat_written", subject, why + ": nothing was written to judge", _SECTION,
                         "x target", low=WRITTEN_LOW, high=WRITTEN_HIGH,
                         consequence="the run gives no write-saturation finding")
    if target is None or written is None or target <= 0:
        share = 1.0 if how == "bytes" else math.nan
        said = f"{n(gb)} GB written, stopped by {how} (the target's bytes not recorded)"
    else:
        share, said = written / target, f"{n(gb)} GB written of {n(target / 1e9)} GB asked ({n(written / target)}x)"
    if how == "time" or share < WRITTEN_LOW:
        return row(r["host"], "wsat_written", subject, WARN, share if share == share else gb, WRITTEN_LOW,
                   "x target" if share == share else "GB",
                   f"the time cap stopped the run: {said}, before the multiple of the span it was to write",
                   "a cliff after that point is not seen: raise max_runtime_s or lower capacity_multiple",
                   _SECTION, low=WRITTEN_LOW, high=WRITTEN_HIGH)
    status, limit = band(share, None, None, warn_low=WRITTEN_LOW, warn_high=WRITTEN_HIGH)
    consequence = "" if status == PASS else ("the run wrote more than it was asked to: the span or io_size was "
                                             "not what the plan says; the GB written at a cliff are not the plan's")
    return row(r["host"], "wsat_written", subject, status, share, limit, "x target",
               f"{said}, the target" if status == PASS else said, consequence, _SECTION, low=WRITTEN_LOW,
               high=WRITTEN_HIGH)


def _series(r: pd.Series, subject: str) -> dict:
    every = num(r.get("seconds")) or 0
    whole = num(r.get("whole_seconds"))
    secs = int(whole if whole is not None else max(every - 1, 0))
    runtime = num(r.get("runtime_s"))
    high = math.floor(runtime) + 1 if runtime is not None else None
    if every <= 0:
        return unchecked(r["host"], "wsat_series", subject, "no per-second series (no logs)", _SECTION, "s",
                         low=MIN_SECONDS, high=high)
    status, limit = band(secs, MIN_LEVEL_SECONDS, high, warn_low=MIN_SECONDS)
    evidence = f"{secs} whole second{'' if secs == 1 else 's'} of {int(every)} per-second values" + (
        f" (fio's runtime {n(runtime)} s)" if runtime is not None else " (runtime not recorded: the last left out)")
    consequence = {PASS: "", WARN: "too short to tell a cliff from noise: the run gives one level at most; write "
                   "more (capacity_multiple, file_size)",
                   FAIL: "no level: under 2 whole seconds the run is fio's whole-run figure only" if secs < MIN_LEVEL_SECONDS
                   else "the series is longer than the run: it is not this run's series"}[status]
    return row(r["host"], "wsat_series", subject, status, secs, limit, "s", evidence, consequence, _SECTION,
               low=MIN_SECONDS, high=high)


def _matches(r: pd.Series, subject: str) -> dict:
    series, whole = num(r.get("series_MBps")), num(r.get("run_MBps"))
    if series is None or whole is None or whole <= 0:
        why = "no whole second in the series" if series is None else "fio's whole-run MB/s not recorded"
        return unchecked(r["host"], "series_matches_whole", subject, why, _SECTION, "%", low=-MATCH_PCT,
                         high=MATCH_PCT)
    diff = 100.0 * (series / whole - 1.0)
    status, limit = band(diff, -MATCH_FAIL_PCT, MATCH_FAIL_PCT, warn_low=-MATCH_PCT, warn_high=MATCH_PCT)
    evidence = (f"mean of {int(num(r.get('whole_seconds')) or 0)} whole seconds {n(series)} MB/s against fio's "
                f"{n(whole)} MB/s for the whole run: {n(diff)} %")
    consequence = {PASS: "", WARN: "the levels differ from the run's own figure by more than the series' rounding: "
                   "read them to that precision",
                   FAIL: "the series does not describe the run: its levels and cliffs are not shown, fio's figure "
                   "stands"}[status]
    return row(r["host"], "series_matches_whole", subject, status, diff, limit, "%", evidence, consequence,
               _SECTION, low=-MATCH_PCT, high=MATCH_PCT)


def _one_level(r: pd.Series, subject: str) -> dict:
    first, second, p = num(r.get("first_half_MBps")), num(r.get("second_half_MBps")), num(r.get("level_p"))
    low, high = 1.0 - LEVEL_BAND, 1.0 + LEVEL_BAND
    if first is None or second is None or p is None or first <= 0:
        return unchecked(r["host"], "wsat_one_level", subject, "fewer than 8 whole seconds of one level: no halves to "
                         "compare",
                         _SECTION, "x first half", low=low, high=high,
                         consequence="one level is not shown: the run's mean is a mean, not a level")
    ratio = second / first
    status, limit = band(ratio, low, high)
    secs = int(num(r.get("level_seconds")) or 0)
    if p >= LEVEL_ALPHA and status != PASS:  # outside the band but not apart: the test's p is what passed it
        return row(r["host"], "wsat_one_level", subject, PASS, p, LEVEL_ALPHA, f"Mann-Whitney p (halves {n(ratio)}x)",
                   f"median of the first half of {secs} whole seconds {n(first)} MB/s, of the second half "
                   f"{n(second)} MB/s ({n(ratio)}x, outside {n(low)}-{n(high)}x, but Mann-Whitney p = {p:.2g} >= "
                   f"{LEVEL_ALPHA:g}: the halves are not shown apart)", "", _SECTION, low=LEVEL_ALPHA, high=1.0)
    after = " after the last change point" if (num(r.get("cliffs")) or 0) > 0 else ""
    evidence = (f"median of the first half of {secs} whole seconds{after} {n(first)} MB/s, of the second half {n(second)} "
                f"MB/s ({n(ratio)}x; Mann-Whitney p = {p:.2g})")
    consequence = "" if status == PASS else (
        f"the series {'rises' if ratio > 1 else 'falls'} through the run: it is not one level, its mean and "
        "interval are not a level (the interval assumes one), and 'no cliff' is not shown")
    return row(r["host"], "wsat_one_level", subject, status, ratio, limit, "x first half", evidence, consequence,
               _SECTION, low=low, high=high)
