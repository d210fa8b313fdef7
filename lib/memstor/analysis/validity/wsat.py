"""Write-saturation checks per run (memstor.analysis.wsat.wsat_table rows): ``wsat_written`` — the run wrote
the multiple of the span it was asked to (a run the time cap stopped early may end before the cliff); and
``wsat_series`` — the per-second series is long enough for the cliff detector to see a lasting level (at least
MIN_SECONDS: two segments of memstor.analysis.cliffs.MIN_SEGMENT_S plus the edges)."""

from __future__ import annotations

import pandas as pd

from memstor.analysis.cliffs import MIN_SEGMENT_S
from memstor.analysis.validity.rows import PASS, WARN, has, n, num, row

#: Fewest seconds of a run's series in which a cliff can be found and both levels measured.
MIN_SECONDS = 4 * MIN_SEGMENT_S
_SECTION = "write_saturation"


def wsat_rows(wsat: pd.DataFrame | None) -> list[dict]:
    """wsat_written and wsat_series per write-saturation run."""
    if not has(wsat, "host", "workload", "stopped_by", "seconds"):
        return []
    rows = []
    for _, r in wsat.iterrows():
        subject = f"{r['workload']} ({r['point']})"
        gb = num(r.get("tgbw_GB"))
        if r["stopped_by"] == "time":
            rows.append(row(r["host"], "wsat_written", subject, WARN, gb, None, "GB",
                            f"the time cap stopped the run at {n(gb)} GB, before the multiple of the span it was to write",
                            "a cliff after that point is not seen: raise max_runtime_s or lower capacity_multiple",
                            _SECTION))
        else:
            rows.append(row(r["host"], "wsat_written", subject, PASS, gb, None, "GB",
                            f"{n(gb)} GB written, the target", "", _SECTION))
        secs = int(r["seconds"])
        ok = secs >= MIN_SECONDS
        rows.append(row(r["host"], "wsat_series", subject, PASS if ok else WARN, secs, MIN_SECONDS, "s",
                        f"{secs} per-second values", "" if ok else "too short to tell a cliff from noise: the run "
                        "gives one level at most; write more (capacity_multiple, file_size)", _SECTION))
    return rows
