"""The adaptive queue-depth grid (``iodepth: auto``, issue 18 part 3): which depths to measure next.

Pure decision logic, per access pattern, from the points measured so far (queue depth, IOPS, mean total
latency in µs); memstor.experiments.fio_queue_depth measures what it asks for and asks again.

1. **Doubling.** Start at depth 1 and double (1, 2, 4, ...) until IOPS gained less than ``GAIN_PCT`` (3 %)
   on two doublings in a row: the *plateau*, from the depth of the best IOPS before those two doublings. A
   doubling's gain is its IOPS over the best IOPS of the smaller depths (on a rising curve: over the depth
   before; a noisy dip and the recovery after it are not a gain). A doubling that gained less than 3 % is
   followed by a *plateau check* (one more doubling to confirm it). No doubling goes past ``max_iodepth``: a
   sweep that gets there first ends without a plateau (and without a knee).
2. **Around the knee.** With the plateau found, the knee is Little's law's N* = X_max · R (X_max the best
   IOPS measured, R the mean latency at depth 1 in seconds; in I/Os, divided by the jobs for a depth). Between
   the two doubling depths around it (a <= N*/jobs < 2a), a depth is added between every two neighbouring
   measured depths that differ by ``NEIGHBOUR_PCT`` (10 %) or more in IOPS or in mean latency and have a
   whole depth between them (their geometric mean, rounded; the pairs nearest the knee first), until no
   such pair is left.
3. **Budget.** At most ``max_points`` points per pattern, doublings included: the rule stops there. Without
   ``max_points`` the knee gets only what the plateau saved: at most one point fewer than the doubling grid to
   ``max_iodepth`` (:func:`default_budget`, 10 points for 1024: depths 1..1024 are 11), the doublings never cut
   by it. So by default the adaptive grid measures less than the standard profile's listed grid (the doubling
   grid to 1024) whenever its plateau comes before the last doubling, and never more.

:func:`next_depths` returns the next depths with a one-line reason each (it becomes the point's
``grid_note``), or none and why the grid is complete. A difference of two values is
100 · (larger / smaller − 1) %.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from memstor.analysis.queueing import knee_outstanding

#: A doubling that gains less than this (% IOPS) adds nothing; two in a row are the plateau.
GAIN_PCT = 3.0
#: Doublings in a row below GAIN_PCT that make the plateau.
PLATEAU_DOUBLINGS = 2
#: Around the knee, neighbouring points are close enough when they differ by less than this (%) in IOPS
#: and in mean latency.
NEIGHBOUR_PCT = 10.0
#: Default deepest queue the doubling goes to (the standard profile's fixed grid ends there).
DEFAULT_MAX_IODEPTH = 1024
#: The smallest budget that can confirm a plateau (depths 1, 2, 4).
MIN_POINTS = PLATEAU_DOUBLINGS + 1

#: The reason of the first point, and the words every knee point's reason starts with.
START = "start at depth 1 (its mean latency R gives the knee N* = X_max · R)"
KNEE_WORD = "between"


@dataclass(frozen=True)
class Step:
    """What the rule asks for next: ``depths`` ((depth, reason) pairs, the nearest to the knee first), or
    none and ``done`` (why the grid is complete). ``plateau_from``: the depth the plateau starts at (None
    before it is found); ``n_star``: Little's law's knee X_max · R in I/Os (None before the plateau)."""

    depths: tuple = ()
    done: str = ""
    plateau_from: int | None = None
    n_star: float | None = None


def doubling_grid_points(max_iodepth: int) -> int:
    """How many depths the doubling grid 1, 2, 4, ... up to ``max_iodepth`` has (11 for 1024)."""
    return int(math.floor(math.log2(max(int(max_iodepth), 1)))) + 1


def default_budget(max_iodepth: int) -> int:
    """The points per pattern when no ``max_points`` is given: one fewer than the doubling grid to
    ``max_iodepth`` (10 for 1024), so that the points added around the knee are paid for by the doublings the
    plateau saved and the grid costs less than the listed doubling grid."""
    return doubling_grid_points(max_iodepth) - 1


def most_points(max_points: int | None, max_iodepth: int) -> int:
    """The most points one pattern's adaptive grid can measure: ``max_points``, or without it the doubling grid
    to ``max_iodepth`` (its doublings are not cut by the default budget)."""
    return int(max_points) if max_points is not None else doubling_grid_points(max_iodepth)


def pct_diff(a: float, b: float) -> float:
    """100 · (larger / smaller − 1): how much two positive values differ, in %."""
    lo, hi = sorted((float(a), float(b)))
    return math.inf if lo <= 0 else 100.0 * (hi / lo - 1.0)


def is_knee_point(note) -> bool:
    """True for a point the rule added between two depths around the knee (by its ``grid_note``)."""
    return isinstance(note, str) and note.startswith(KNEE_WORD)


def step_of(note) -> str:
    """The step a ``grid_note`` names: ``start``, ``doubling``, ``plateau check``, ``knee``, or '' (a listed grid)."""
    if isinstance(note, str):
        for prefix, step in (("start", "start"), (KNEE_WORD, "knee"), ("plateau check", "plateau check"),
                             ("doubling", "doubling")):
            if note.startswith(prefix):
                return step
    return ""


def _clean(points: Iterable) -> dict[int, tuple[float, float]]:
    """{depth: (iops, lat_mean_us)} of the points with both values > 0 (one per depth: the caller averages
    repetitions)."""
    out: dict[int, tuple[float, float]] = {}
    for depth, iops, lat in points:
        try:
            d, x, r = int(depth), float(iops), float(lat)
        except (TypeError, ValueError):
            continue
        if d >= 1 and x > 0 and r > 0 and math.isfinite(x) and math.isfinite(r):
            out[d] = (x, r)
    return out


@dataclass(frozen=True)
class _Chain:
    """The measured doubling chain 1, 2, 4, ... (up to its first gap): ``gains[i]`` is the % IOPS of
    ``depths[i]`` over the best of ``depths[:i]`` (``best[i]`` its depth); ``plateau`` the depth the plateau
    starts at (None before PLATEAU_DOUBLINGS gains in a row below GAIN_PCT)."""

    depths: list
    gains: list
    best: list
    plateau: int | None

    def gained(self, i: int = -1) -> str:
        """'64 gained +12.3 % over 32' (the IOPS of depths[i] over the best smaller depth)."""
        return f"{self.depths[i]} gained {self.gains[i]:+.1f} % over {self.best[i]}"


def _doubling(pts: dict) -> _Chain:
    """The doubling chain of `pts` (:class:`_Chain`), cut after the doubling that confirms the plateau."""
    chain = [1]
    while chain[-1] * 2 in pts:
        chain.append(chain[-1] * 2)
    gains, best, low, top = [math.nan], [0], 0, 1
    for i in range(1, len(chain)):
        d = chain[i]
        gains.append(100.0 * (pts[d][0] / pts[top][0] - 1.0))
        best.append(top)
        low = low + 1 if gains[-1] < GAIN_PCT else 0
        if low == PLATEAU_DOUBLINGS:
            return _Chain(chain[: i + 1], gains, best, best[i - PLATEAU_DOUBLINGS + 1])
        if pts[d][0] > pts[top][0]:
            top = d
    return _Chain(chain, gains, best, None)


def _midpoint(a: int, b: int) -> int:
    """A whole depth strictly between a and b (b - a >= 2): their geometric mean (the depth axis is log2),
    rounded."""
    return min(max(round(math.sqrt(a * b)), a + 1), b - 1)


def _differences(x: tuple, y: tuple) -> str:
    """'IOPS differ 23 %, mean latency 41 %': the metrics of two points that differ >= NEIGHBOUR_PCT."""
    parts = []
    di, dl = pct_diff(x[0], y[0]), pct_diff(x[1], y[1])
    if di >= NEIGHBOUR_PCT:
        parts.append(f"IOPS differ {di:.0f} %")
    if dl >= NEIGHBOUR_PCT:
        parts.append(f"mean latency {'differs ' if not parts else ''}{dl:.0f} %")
    return ", ".join(parts)


def _n_star_text(n_star: float, numjobs: int) -> str:
    if numjobs > 1:
        return f"N* = {n_star:.1f} I/Os (depth {n_star / numjobs:.1f} x {numjobs} jobs)"
    return f"N* = {n_star:.1f}"


def next_depths(points: Iterable, *, max_points: int | None = None,
                max_iodepth: int = DEFAULT_MAX_IODEPTH, numjobs: int = 1) -> Step:
    """The next depths of one pattern's adaptive grid (module docstring), from ``points``: (iodepth, iops,
    lat_mean_us) of every point measured so far (one per depth; points without IOPS or latency are left out).

    max_points: the budget per pattern, all steps counted; None: :func:`default_budget` for the knee points,
    the doublings not cut. numjobs: jobs per point (N* is in I/Os in flight; the depth around it is
    N* / numjobs). Returns a Step:
    depths to measure with their reasons, or ``done`` with why the grid is complete: plateau found and the
    neighbours around the knee within 10 % (or whole depths apart), the budget reached, or the depth limit."""
    pts = _clean(points)
    n = len(pts)
    explicit = max_points is not None
    budget = int(max_points) if max_points is not None else default_budget(max_iodepth)
    if 1 not in pts:
        if max_points is not None and n >= max_points:
            return Step(done=f"budget reached: {n} points and none at depth 1")
        return Step(depths=((1, START),))
    ch = _doubling(pts)
    chain, plateau = ch.depths, ch.plateau
    if plateau is None:
        last = chain[-1]
        gained = ch.gained() if len(chain) > 1 else ""
        if last * 2 > max_iodepth:
            return Step(done=f"depth limit {max_iodepth} reached without a plateau"
                             + (f" ({gained})" if gained else ""))
        if max_points is not None and n >= max_points:
            return Step(done=f"budget of {max_points} points reached before a plateau"
                             + (f" ({gained})" if gained else ""))
        if len(chain) == 1:
            why = "doubling from 1"
        elif ch.gains[-1] < GAIN_PCT:
            why = f"plateau check: {gained} (< {GAIN_PCT:g} %), one more doubling to confirm"
        else:
            why = f"doubling from {last} ({gained})"
        return Step(depths=((last * 2, why),))

    x_max = max(x for x, _ in pts.values())
    n_star = knee_outstanding(pts[1][1], x_max)
    knee = n_star / max(int(numjobs), 1)  # in queue depth
    lo = 1
    while lo * 2 <= knee and lo * 2 < chain[-1]:
        lo *= 2
    hi = lo * 2
    star = _n_star_text(n_star, int(numjobs))
    inside = sorted(d for d in pts if lo <= d <= hi)
    wanted, adjacent = [], False
    for a, b in zip(inside, inside[1:]):
        why = _differences(pts[a], pts[b])
        if not why:
            continue
        if b - a < 2:
            adjacent = True
            continue
        m = _midpoint(a, b)
        wanted.append((abs(math.log(m / knee)) if knee > 0 else m, m,
                       f"{KNEE_WORD} {a} and {b} around the knee {star}: {why}"))
    found = (f"plateau from depth {plateau} (the {PLATEAU_DOUBLINGS} doublings after it gained < {GAIN_PCT:g} % "
             f"each); knee {star}")
    if not wanted:
        close = f"between {lo} and {hi} within {NEIGHBOUR_PCT:g} % in IOPS and mean latency"
        return Step(done=f"{found}: neighbours {close}" + (" or whole depths apart" if adjacent else ""),
                    plateau_from=plateau, n_star=n_star)
    room = budget - n
    if room <= 0:
        whose = "" if explicit else f" (one fewer than the doubling grid to {max_iodepth}; max_points for more)"
        return Step(done=f"{found}; budget of {budget} points{whose} reached with neighbours between {lo} and {hi} "
                         f"still {NEIGHBOUR_PCT:g} % or more apart", plateau_from=plateau, n_star=n_star)
    wanted.sort()
    return Step(depths=tuple((m, why) for _, m, why in wanted[:room]), plateau_from=plateau, n_star=n_star)


# ------------------------------------------------------------------------------------------- report

#: Columns of the report's adaptive-grid table (``report/tables/adaptive_grid.csv``), units in the names.
GRID_COLUMNS = ["host", "rw", "bs_bytes", "numjobs", "iodepth", "step", "n", "iops", "lat_mean_us", "grid_note",
                "config"]


def grid_table(fio: pd.DataFrame, summary: pd.DataFrame) -> pd.DataFrame:
    """The points of every adaptive queue-depth grid (fio-queue-depth rows with a ``grid_note``): one row per
    device x pattern x depth with the step that added it (start, doubling, plateau check, knee), n, the mean
    IOPS and mean latency (µs) of the one summary path (``summary``: memstor.analysis.summary.summary_table
    rows of the same data) and why it was added. Sorted by device, pattern, depth."""
    need = {"grid_note", "config", "host"}
    if fio is None or fio.empty or not need <= set(fio.columns):
        return pd.DataFrame(columns=GRID_COLUMNS)
    rows = fio[fio["grid_note"].map(lambda x: isinstance(x, str) and bool(x.strip()))]
    if "experiment" in rows.columns:
        rows = rows[rows["experiment"].fillna("fio-queue-depth") == "fio-queue-depth"]
    if rows.empty:
        return pd.DataFrame(columns=GRID_COLUMNS)
    notes = rows.drop_duplicates(["host", "config"])[["host", "config", "rw", "bs_bytes", "numjobs", "iodepth",
                                                       "grid_note"]]
    metrics = summary[["host", "config", "n", "iops", "lat_mean_us"]] if not summary.empty else \
        pd.DataFrame(columns=["host", "config", "n", "iops", "lat_mean_us"])
    out = notes.merge(metrics.drop_duplicates(["host", "config"]), on=["host", "config"], how="left")
    out["step"] = out["grid_note"].map(step_of)
    for col in ("bs_bytes", "numjobs", "iodepth", "n"):
        out[col] = pd.to_numeric(out[col], errors="coerce").astype("Int64")
    out = out.sort_values(["host", "rw", "iodepth"], kind="stable").reset_index(drop=True)
    return out[GRID_COLUMNS]


def knee_of(points: Iterable) -> Step:
    """The plateau and knee the rule finds in one pattern's measured points (whatever the budget was): a Step
    with ``plateau_from`` and ``n_star`` (both None when the points show no plateau)."""
    pts = _clean(points)
    if 1 not in pts:
        return Step(done="no point at depth 1")
    plateau = _doubling(pts).plateau
    if plateau is None:
        return Step(done="no plateau in the measured depths")
    x_max = max(x for x, _ in pts.values())
    return Step(done="plateau found", plateau_from=plateau, n_star=knee_outstanding(pts[1][1], x_max))
