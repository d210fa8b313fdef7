"""Stop a fio point when it is precise enough (issue 18, part 2): the rule and the watcher.

A point with a precision target runs fio for up to ``max_runtime_s`` with ``--status-interval`` (every
250 or 500 ms fio appends a cumulative JSON snapshot to its output file; memstor.parse.fio_status). After
each snapshot the watcher rebuilds the point's window series and asks :func:`verdict`: for every direction
that does I/O, the 95 % batch-means interval (memstor.core.batchmeans, the same rule as every other
point's interval: the first window dropped as ramp, >= 10 batches, lag-1 <= 0.2) of the mean IOPS and of
the mean total latency must be ``ok`` (not ``correlated``, not empty) and its half-width at most
``precision_pct`` % of the mean. When it holds, memstor sends fio SIGINT: fio ends the job and writes its
final JSON and logs for the time measured (fio-3.33 exits 128 then; memstor.measure.fio.run_fio treats
that as success because it sent the signal). When it never holds, fio ends by itself at
``max_runtime_s`` and the point records ``precision_reached`` false.

The interval a point with a target reports is computed from the same snapshots
(memstor.parse.fio_status.status_windows) and the same order of evaluation (:func:`rule_as_applied`: after
each snapshot, up to the first where the rule holds), so the recorded ``precision_reached`` is the rule the
watcher applied, not a second estimate from differently aligned interval logs. (Measured in CI, 2026-11: fio
may append one more snapshot between memstor's decision and its SIGINT; judged on every snapshot, that point
was recorded as imprecise although it had stopped because it was precise.) A point interrupted before fio
wrote its final document is not complete: the next run measures it again from the start (resume).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from memstor.core.batchmeans import OK, interval_cis
from memstor.parse.fio_status import iter_docs, status_windows

#: Metrics the target applies to: mean IOPS and mean total latency.
METRICS = ("iops", "lat_mean_us")


@dataclass(frozen=True)
class Verdict:
    """The rule applied to a window series: reached, and the worst half-width found (% of the mean;
    NaN when some interval is empty), with a one-line note (which metric misses, or 'too few windows')."""

    reached: bool
    worst_pct: float
    note: str


def verdict(windows: pd.DataFrame, precision_pct: float) -> Verdict:
    """Whether every direction's IOPS and mean-latency intervals are ``ok`` and within ``precision_pct``."""
    if windows is None or windows.empty:
        return Verdict(False, math.nan, "no measured window yet")
    worst, misses = 0.0, []
    for direction in sorted(windows["direction"].unique()):
        cis = interval_cis(windows, direction)
        for metric in METRICS:
            r = cis.get(metric)
            if r is None or r.status != OK:
                why = "no value" if r is None else r.status.replace("_", " ")
                misses.append(f"{direction} {metric} {why}")
                worst = math.nan
                continue
            pct = r.half_width_pct
            if not math.isnan(worst):
                worst = max(worst, pct)
            if not pct <= precision_pct:
                misses.append(f"{direction} {metric} ±{pct:.1f} %")
    if misses:
        return Verdict(False, worst, "; ".join(misses))
    return Verdict(True, worst, f"within ±{precision_pct:g} % (worst ±{worst:.2f} %)")


def rule_as_applied(docs: list[dict], precision_pct: float, start: int = 1) -> tuple[int, Verdict]:
    """The stop rule evaluated after each snapshot in order (from the ``start``-th), as the watcher does:
    (snapshots used, verdict) at the first snapshot where it holds, else (all of them, the last verdict)."""
    last = Verdict(False, math.nan, "no measured window yet")
    for k in range(max(start, 1), len(docs) + 1):
        last = verdict(status_windows(docs[:k]), precision_pct)
        if last.reached:
            return k, last
    return len(docs), last


class Watcher:
    """Reads fio's output file as it grows and says when the point is precise enough.

    ``__call__()`` returns True once :func:`verdict` holds after some snapshot (each new one judged in turn,
    :func:`rule_as_applied`); it parses only the bytes added since the last call."""

    def __init__(self, output: Path, precision_pct: float):
        self.output = Path(output)
        self.precision_pct = float(precision_pct)
        self.docs: list[dict] = []
        self.last: Verdict | None = None
        self.evaluations = 0
        self._offset = 0
        self._pending = ""

    def _read_new(self) -> bool:
        """Append the complete snapshots written since the last call; True when there were any."""
        try:
            with open(self.output, encoding="utf-8", errors="replace") as fh:
                fh.seek(self._offset)
                chunk = fh.read()
                self._offset = fh.tell()
        except OSError:
            return False
        if not chunk:
            return False
        text = self._pending + chunk
        end = 0
        found = False
        for _, stop, doc in iter_docs(text):
            self.docs.append(doc)
            end, found = stop, True
        self._pending = text[end:]
        return found

    def __call__(self) -> bool:
        if self.last is not None and self.last.reached:
            return True
        before = len(self.docs)
        if not self._read_new():
            return False
        used, self.last = rule_as_applied(self.docs, self.precision_pct, before + 1)
        self.evaluations += used - before
        return self.last.reached
