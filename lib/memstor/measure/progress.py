"""What a sweep shows a person: the plan line it prints before it starts (what, how long, on what) and its
progress bar (a tqdm.auto bar weighted by each point's expected seconds, Point.est_s)."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol


class Weighted(Protocol):
    """What the bar needs of a point: its name and expected wall time in seconds (read only: Point is frozen)."""

    @property
    def name(self) -> str: ...

    @property
    def est_s(self) -> float: ...


class Progress:
    """A tqdm.auto bar weighted by Point.est_s (seconds), or nothing when disabled.

    The bar's total is the sum of est_s over all points and each finished point advances it by its
    est_s, so tqdm's ETA is in real seconds even when points differ in length (when no point has an
    estimate, every point counts 1). Points already complete count from the start (tqdm's ``initial``)
    and do not distort the rate. The description shows "<experiment> [done/total] <point running>".
    """

    def __init__(self, points: Sequence[Weighted], cached: set[str], experiment: str, enabled: bool):
        self.weighted = any(p.est_s > 0 for p in points)
        self.experiment = experiment
        self.total = len(points)
        self.done = sum(1 for p in points if p.name in cached)
        self.bar = None
        if not enabled:
            return
        with warnings.catch_warnings():  # no "IProgress not found" noise in notebooks without ipywidgets:
            warnings.simplefilter("ignore")  # tqdm.auto then falls back to the text bar
            from tqdm.auto import tqdm

        self.bar = tqdm(
            total=sum(self._weight(p) for p in points),
            initial=sum(self._weight(p) for p in points if p.name in cached),
            desc=self._desc(""),
            bar_format="{desc}{percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]",
            file=sys.stderr,
            dynamic_ncols=True,
            leave=True,
        )

    def _weight(self, p: Weighted) -> float:
        """The bar units of one point: est_s seconds when any point has an estimate, else 1."""
        return max(float(p.est_s), 0.0) if self.weighted else 1.0

    def _desc(self, running: str) -> str:
        return f"{self.experiment} [{self.done}/{self.total}]" + (f" {running}" if running else "")

    def start(self, p: Weighted) -> None:
        """Show the point now running."""
        if self.bar is not None:
            self.bar.set_description(self._desc(p.name), refresh=True)

    def finish(self, p: Weighted) -> None:
        """Advance by the point's weight."""
        self.done += 1
        if self.bar is not None:
            self.bar.update(self._weight(p))
            self.bar.set_description(self._desc(""), refresh=True)

    def close(self) -> None:
        """Close the bar (leaves the final line on screen)."""
        if self.bar is not None:
            self.bar.close()


def duration_text(seconds: float) -> str:
    """A rough human duration for a plan: "about 40 s", "about 12 min", "about 2.5 h"."""
    if seconds < 90:
        return f"about {max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"about {round(seconds / 60)} min"
    return f"about {seconds / 3600:.1f} h"


def _where(device: dict | None) -> str:
    """What a sweep measures, for a person: the test file's folder and its filesystem, a raw device, or memory."""
    if not isinstance(device, dict):
        return "this machine"
    kind, path = device.get("kind"), device.get("path") or device.get("real_path")
    if kind == "filesystem":
        return f"a test file in {path} ({device.get('fstype') or '?'} on {device.get('source') or '?'})"
    if kind == "raw-device":
        return f"the raw device {path} (its data is overwritten)"
    if kind == "memory":
        return "this machine's memory"
    return str(path or kind or "this machine")


def plan_line(experiment: str, points: Sequence[Weighted], done: set[str], directory: Path,
              device: dict | None, note: str = "") -> str:
    """The line a sweep prints before it starts: what it will measure, how long (the points' est_s) and on what;
    or that everything is already measured and nothing runs. ``note`` (a session's plan note) follows."""
    note = f"; {note}" if note else ""
    todo = [p for p in points if p.name not in done]
    if not todo:
        return (f"{experiment}: all {len(points)} points already measured in {directory}: nothing is measured, "
                f"the results are re-read{note}")
    est = sum(max(float(p.est_s), 0.0) for p in todo)
    how_long = f", {duration_text(est)}" if est > 0 else ""
    kept = f"; {len(points) - len(todo)} already measured" if len(todo) < len(points) else ""
    return f"{experiment}: measuring {len(todo)} of {len(points)} points{how_long}, on {_where(device)}{kept}{note}"

