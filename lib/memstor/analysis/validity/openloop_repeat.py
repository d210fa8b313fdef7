"""``open_loop_repeat``: one open-loop configuration (the workload, ioarrive, the offered rate within 1 %) run by
fio-load-latency and again by a mixed-load-map cell with nothing in the other direction
(memstor.analysis.openloop_families.repeats). config_agreement compares closed-loop points only; this is its
open-loop twin (fifth read S9-bare B-2: randread u50 and w0-r50, both 61,311 IOPS offered, mean 205 against
138 µs, p99 2,810 against 2,318 µs, and no check said so).

Value: the larger of the two ratios high / low, mean response latency and p99 response latency, over the pairs
whose loops both held (>= 1 by construction: both directions are folded into it, the evidence names which run
is slower). Bounds, two-sided through the fold: within :data:`AGREE_RATIO` pass (a 2-s run's p99 rests on a
few hundred I/Os); beyond :data:`FAIL_RATIO` fail (config_agreement's bound: the two runs cannot both describe
the device in one state); between: warn. A workload with no repeated rate, or whose repeats did not both hold:
``unchecked``. No mixed-load map on the host: no row.
"""

from __future__ import annotations

import pandas as pd

from memstor.analysis.openloop_families import repeats
from memstor.analysis.spread import DISAGREE_RATIO
from memstor.analysis.validity.rows import FAIL, PASS, WARN, n, row, unchecked

#: Two runs of one open-loop configuration agree on their latency within this ratio.
AGREE_RATIO = 1.25
#: Beyond this ratio they disagree (spread.DISAGREE_RATIO, config_agreement's fail bound).
FAIL_RATIO = DISAGREE_RATIO

_SECTION = "open_loop"
_UNIT = "x (high / low, mean or p99)"


def _ratio(a: float, b: float) -> float:
    lo, hi = sorted((a, b))
    return hi / lo if lo > 0 else float("inf")


def _pair_words(p: pd.Series) -> str:
    return (f"u{p['u']:.0f} of fio-load-latency and cell {p['cell']} of the mixed-load map ({n(p['offered_iops'])} "
            f"IOPS offered): mean {n(p['lat_mean_us_load'])} against {n(p['lat_mean_us_mixed'])} µs "
            f"({n(_ratio(p['lat_mean_us_load'], p['lat_mean_us_mixed']))}x), p99 {n(p['lat_p99_us_load'])} against "
            f"{n(p['lat_p99_us_mixed'])} µs ({n(_ratio(p['lat_p99_us_load'], p['lat_p99_us_mixed']))}x)")


def _row(host: str, rw: str, pairs: pd.DataFrame) -> dict:
    both = pairs[pairs["held_load"] & pairs["held_mixed"]]
    if both.empty:
        cells = ", ".join(f"u{p['u']:.0f} / {p['cell']}" for _, p in pairs.iterrows())
        return unchecked(host, "open_loop_repeat", rw, f"the repeated rates ({cells}) did not hold in both runs",
                         _SECTION, _UNIT, low=1.0, high=AGREE_RATIO,
                         consequence="how far one open-loop run lies from another is not measured here")
    worst = max(max(_ratio(p["lat_mean_us_load"], p["lat_mean_us_mixed"]),
                    _ratio(p["lat_p99_us_load"], p["lat_p99_us_mixed"])) for _, p in both.iterrows())
    status = FAIL if worst > FAIL_RATIO else WARN if worst > AGREE_RATIO else PASS
    consequence = {PASS: "", WARN: f"the same open-loop rate measured twice differs {n(worst)}x: differences "
                   "between rates or against the closed loop of this size are not findings",
                   FAIL: f"the two runs of one open-loop rate differ {n(worst)}x: neither is the device's latency "
                         "at that rate alone"}[status]
    limit = FAIL_RATIO if status == FAIL else AGREE_RATIO
    return row(host, "open_loop_repeat", rw, status, worst, limit, _UNIT,
               "; ".join(_pair_words(p) for _, p in both.iterrows()), consequence, _SECTION, low=1.0,
               high=AGREE_RATIO)


def repeat_rows(load: pd.DataFrame | None, mixed: pd.DataFrame | None) -> list[dict]:
    """open_loop_repeat per host x workload of fio-load-latency on a host whose mixed-load map ran."""
    if load is None or load.empty or mixed is None or mixed.empty or not {"host", "rw"} <= set(load.columns):
        return []
    pairs, mapped = repeats(load, mixed), set(mixed["host"].astype(str)) if "host" in mixed.columns else set()
    rows = []
    for host, rw in sorted({(str(h), str(r)) for h, r in zip(load["host"], load["rw"])}):
        if host not in mapped:
            continue
        mine = pairs[(pairs["host"].astype(str) == host) & (pairs["rw"] == rw)] if len(pairs) else pairs
        if mine.empty:
            rows.append(unchecked(host, "open_loop_repeat", rw, "no offered rate of fio-load-latency was run again "
                                  "by a mixed-load-map cell without traffic in the other direction", _SECTION,
                                  _UNIT, low=1.0, high=AGREE_RATIO,
                                  consequence="how far one open-loop run lies from another is not measured here"))
        else:
            rows.append(_row(host, rw, mine))
    return rows
