"""loadlat's core-clock calibration in the cache-level table: the clocks a latency (ns) is worth, stated only where
the runs it rests on were calibrated alike. loadlat gives each row ``clocks`` beside ``latency_ns``; their ratio is
the core GHz its run calibrated (a VM's or a turbo CPU's clock moves between runs: S6-bare C-14, 3.57-3.99 GHz).

- :func:`level_clock`: the levels' clocks column, from the calibration of the curve the levels come from, where the
  host's working-set runs (pages x pattern) lie within CLOCK_SPREAD of each other; else none, and why.
- :func:`tlb_clock`: the TLB row's, a difference of two runs (4 KiB and huge pages), only where those two were
  calibrated within TLB_CLOCK_SPREAD (S12-bare 9: 11.3 ns printed as 35.4 clocks under a 3.23 GHz header, its runs
  calibrated at 3.14 and 3.23 GHz).

Pure: the working-set tables (memstor.analysis.hierarchy) in, GHz and words out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: loadlat's core-clock calibrations (GHz) of one host's working-set runs further apart than this ratio give no
#: clocks: a level's clocks would depend on which run's calibration is taken (S6-bare C-14: 3.57-3.99 GHz).
CLOCK_SPREAD = 1.05
#: Largest ratio between the TLB row's two runs' core-clock calibrations for its clocks to be stated.
TLB_CLOCK_SPREAD = 1.01


def clocks_per_ns(t: pd.DataFrame) -> float | None:
    """Core GHz the rows imply (clocks / latency_ns, median), None when loadlat gave no clocks."""
    ratio = pd.to_numeric(t["clocks"], errors="coerce") / pd.to_numeric(t["latency_ns"], errors="coerce")
    ratio = ratio[np.isfinite(ratio) & (ratio > 0)]
    return float(ratio.median()) if len(ratio) else None


def level_clock(curve: pd.DataFrame, ws: pd.DataFrame) -> tuple[float | None, str]:
    """(GHz, note) for the clocks column: the calibration of the levels' run (:func:`clocks_per_ns`) and
    'at 3.97 GHz (loadlat's calibration of its run)'; None and 'not stated: ...' when the host's working-set runs
    (pages x pattern) were calibrated further apart than :data:`CLOCK_SPREAD`."""
    ghz = clocks_per_ns(curve)
    if ghz is None:
        return None, ""
    runs = [g for g in (clocks_per_ns(r) for _, r in ws.groupby(["pages", "pattern"])) if g]
    lo, hi = min(runs, default=ghz), max(runs, default=ghz)
    if hi / lo > CLOCK_SPREAD:
        return None, (f"not stated: loadlat's core-clock calibration moved {lo:.2f}-{hi:.2f} GHz across this host's "
                      f"{len(runs)} working-set runs")
    return ghz, f"at {ghz:.2f} GHz (loadlat's calibration of its run)"


def tlb_clock(g: pd.DataFrame) -> tuple[float | None, str]:
    """(GHz, '') for the TLB row's clocks: the random chain's runs' calibrations (4 KiB and huge pages; the cost is
    their difference), their mean where within TLB_CLOCK_SPREAD; (None, 'clocks not stated: ...') where further
    apart."""
    runs = [c for c in (clocks_per_ns(r) for _, r in g[g["pattern"] == "random"].groupby("pages")) if c]
    if not runs:
        return None, ""
    if max(runs) / min(runs) > TLB_CLOCK_SPREAD:
        return None, (f"clocks not stated: its two runs' core clocks were calibrated {min(runs):.2f} and "
                      f"{max(runs):.2f} GHz")
    return float(np.mean(runs)), ""


__all__ = ["CLOCK_SPREAD", "TLB_CLOCK_SPREAD", "clocks_per_ns", "level_clock", "tlb_clock"]
