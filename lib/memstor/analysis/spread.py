"""The run-to-run spread of single runs, one rule for every decision that compares two single values (issue 38,
third read R-1cpu M8, S7-bare M-11): measured where one configuration (rw, block size, iodepth x numjobs) was
measured fresh by two experiments (FRESH, config_agreement's same-configuration pairs: the largest high / low ratio
of any such pair on the host in the direction judged, reads or writes), else assumed, ASSUMED_RATIO, and then said
to be assumed, not measured. A decision uses the larger of the two (a measured pair closer than 10 % is one pair,
not a spread below it). A difference within the limit is not shown; one beyond only the assumed limit is qualified
as such. A pair further apart than DISAGREE_RATIO (config_agreement fails it: something changed between them) is
a disagreement, named, not a spread to divide by (fourth read S8-bare M-1: randwrite 2.19x, which failed, was the
'spread' of reads, whose pair differed 1.35x; R-1cpu M5: 1.62x against the reads' 1.16x). A disagreement the
queue-depth sweep settles (:func:`sweep_bracket`: its neighbouring depths side with one of the two) is one run out
of line, not a limit on other differences (eighth read S12-loop 6: a 4 KiB read at 2,949 IOPS against 184,245, with
the sweep at 186,505 and 184,083 around it, voided a +87 % block-size step as 'within the 62.47x').

Also the queue-depth sweep against the same one-job job measured by the other fresh experiments
(:func:`sweep_beaten`): a sweep that job beat beyond the spread is not the target's (third read R-loop 2.1).

Pure: DataFrames (memstor.analysis.points.fio_summary) in, numbers and words out (IOPS; ratios high / low).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from memstor.core.fmt import fmt_number
from memstor.core.units import size_text

#: The spread assumed for single fresh runs where nothing measured one: config_agreement's limit (AGREE_RATIO).
ASSUMED_RATIO = 1.10
#: The experiments that measure a configuration fresh, in the same drive state (config_agreement's): their values of
#: one configuration differ by run-to-run spread only (XSR, steady state and WSAT run in another state).
FRESH = ("fio-block-size", "fio-rw-ratio", "fio-queue-depth")
#: The queue-depth sweep; the other FRESH experiments measure its one-job 4 KiB point at one depth each.
SWEEP = "fio-queue-depth"
#: fio-rw-ratio's pure mixes stand for these workloads (rwmixread 100: random reads, 0: random writes).
_PURE = {100.0: ("randread", "read"), 0.0: ("randwrite", "write")}
#: A pair further apart than this is a disagreement (something changed between them), not run-to-run spread;
#: config_agreement (memstor.analysis.validity.agreement) fails such a pair by this same number.
DISAGREE_RATIO = 1.5
#: What a measured spread is, in words: the largest ratio of one job's two fresh runs (nineteenth read S19-loop 4:
#: 'the run-to-run spread of fresh runs measured here, 1.45x' was one pair of single runs, read as a measured spread).
GAP = "the largest gap between two fresh runs of one job measured here"


def gap_words(ratio: float, pairs: int = 0, times: str = "×", kind: str = "") -> str:
    """'the largest gap between two fresh runs of one read job measured here, 1.45× (one pair)': a measured spread
    (high / low) of ``kind``'s jobs ('read', 'write'; '' both: S21-cpu1 1, the reads' 1.13× and the writes' 1.20× were
    both 'the largest gap') and, where it rests on one pair (``pairs`` 1), that it does; ``times`` the sign after the
    ratio."""
    gap = GAP.replace("one job", f"one {kind} job") if kind else GAP
    return f"{gap}, {ratio:.2f}{times}" + (" (one pair)" if pairs == 1 else "")


def _ratio(r: float) -> str:
    """'1.07×', or '0.2 % (1.002×)' below 1.01 (ninth read S12-1cpu9 8: 'within 1.00×' read as identical)."""
    return f"{r:.2f}×" if r >= 1.01 else f"{100 * (r - 1):.1f} % ({r:.3f}×)"


@dataclass(frozen=True)
class Spread:
    """The host's run-to-run spread. measured: the largest ratio of one configuration's two fresh measurements
    (None where no configuration was measured twice); how: that configuration and its values in words; disagreed:
    the largest pair beyond DISAGREE_RATIO in words ('' where none), which is not counted as spread."""

    measured: float | None = None
    how: str = ""
    disagreed: str = ""
    disagreed_ratio: float | None = None  # that pair's high / low
    outlier: str = ""  # the largest disagreement the queue-depth sweep settled, in words ('' where none)
    pairs: int = 0  # how many configurations were measured fresh twice within DISAGREE_RATIO
    kind: str = ""  # the direction whose jobs it is of: 'read', 'write', '' both

    def within_disagreement(self, ratio: float) -> bool:
        """Whether two single values `ratio` apart (high / low) differ by no more than the pair measured twice
        that disagreed (seventh read S11-1cpu 5: block sizes 1.59x apart 'more than the 10 % assumed' beside one
        configuration measured 1.70x apart): a difference the machine's own changes between runs reached is not
        shown to be the device's."""
        return self.disagreed_ratio is not None and ratio <= self.disagreed_ratio

    def disagreement(self) -> str:
        """'the 1.70× by which one configuration measured twice disagreed (4 KiB randread QD32×1: ...)'."""
        return (f"the {self.disagreed_ratio:.2f}× by which one configuration measured twice disagreed "
                f"({self.disagreed.rsplit(' (', 1)[0]})") if self.disagreed_ratio is not None else ""

    @property
    def shown(self) -> bool:
        """A measured spread sets the limit (it is at least the assumed one)."""
        return self.measured is not None and self.measured >= ASSUMED_RATIO

    @property
    def limit(self) -> float:
        """The ratio two single values must exceed to differ: the measured spread, at least ASSUMED_RATIO."""
        return max(self.measured or 1.0, ASSUMED_RATIO)

    def brief(self) -> str:
        """'the largest gap between two fresh runs of one job measured here, 1.20×' or 'the 10 % assumed for single fresh runs': :meth:`short`
        without its qualifiers, where a page has no room for them (page 2's findings)."""
        if self.shown:
            return gap_words(self.limit, self.pairs, kind=self.kind)
        return f"the {100 * (ASSUMED_RATIO - 1):.0f} % assumed for single fresh runs"

    def short(self) -> str:
        """'the largest gap between two fresh runs of one job measured here, 1.35× (one pair)' or 'the 10 % assumed for single fresh runs, not measured', then
        '(the pair measured twice disagreed, 2.19×: not counted as spread)' where a pair disagreed."""
        if self.shown:
            return gap_words(self.limit, self.pairs, kind=self.kind)
        apart = self.disagreed.rsplit("(", 1)[-1].removesuffix(" apart)") if self.disagreed else ""
        # S11-bare 7: 'not measured' where one pair measured 1.09x, inside the assumed 10 %
        one = f" (the one pair measured twice agreed within {_ratio(self.measured)})" if self.measured else \
            ", not measured"
        return (f"the {100 * (ASSUMED_RATIO - 1):.0f} % assumed for single fresh runs{one}"
                + (f" (the pair measured twice disagreed, {apart}: not counted as spread)" if apart else "")
                + (f" (the pair measured twice that disagreed, {self.outlier_ratio():.2f}×, had one run out of line by the "
                   "queue-depth sweep: not counted as spread)" if self.outlier and not apart else ""))

    def outlier_ratio(self) -> float:
        """The settled disagreement's high / low (its words carry it: '... (5.47× apart; ...)')."""
        return float(self.outlier.rsplit(" (", 1)[1].split("×", 1)[0]) if self.outlier else 1.0

    def beyond(self) -> str:
        """'' where the spread is measured, else ': a difference between single runs beyond an assumed spread only'
        — how a finding that exceeds only the assumed spread is qualified."""
        return "" if self.shown else ": a difference between single runs beyond an assumed spread only"

    def words(self) -> str:
        """'the largest gap between two fresh runs of one job measured here, 1.62× (4 KiB randwrite QD32×1: ...)' or '10 %, the spread assumed
        for single runs, not measured (...)'."""
        if self.shown:
            return f"{gap_words(self.limit, kind=self.kind)} ({self.how}{'; one pair' if self.pairs == 1 else ''})"
        why = (f"the one configuration measured twice agreed within {self.measured:.3f}×: {self.how}; one pair is "
               "no spread" if self.measured is not None else "no configuration was measured twice in agreement"
               if self.disagreed or self.outlier else "no configuration was measured twice")
        if self.disagreed:
            why += f"; {self.disagreed}: a disagreement (something changed between them), not a spread"
        if self.outlier:
            why += f"; {self.outlier}: not a spread"
        return f"{100 * (ASSUMED_RATIO - 1):.0f} %, the spread assumed for single fresh runs, not measured ({why})"


def disagreeing(points: pd.DataFrame | None, host: str, r: pd.Series) -> pd.DataFrame:
    """The host's measurements of point r's configuration (rw, block size, depth x jobs) in another FRESH
    experiment further than DISAGREE_RATIO from its IOPS (config_agreement fails such a pair); empty when none."""
    p = pure_iops(points, host)
    same = p[(p["rw"] == r["rw"]) & (p["bs_bytes"] == r["bs_bytes"]) & (p["iodepth"] == r["iodepth"])
             & (p["numjobs"] == r["numjobs"]) & p["experiment"].isin(FRESH) & (p["experiment"] != r["experiment"])]
    return same[(same["iops"] / float(r["iops"])).map(lambda x: max(x, 1 / x)) > DISAGREE_RATIO]


def sweep_bracket(points: pd.DataFrame | None, host: str, r: pd.Series) -> pd.DataFrame:
    """The queue-depth sweep's points of r's workload (rw, block size, jobs) at the nearest depth below r's and the
    nearest above it (two rows, depth order; empty where the sweep has no depth on either side, or measured r's depth
    itself): a bracket that sides with one of two disagreeing measurements of r's configuration (eighth read
    S12-1cpu 5: 58,281 IOPS at QD32x1 against fio-rw-ratio's 10,647, with QD16x1 at 42,917 and QD64x1 at 55,471)."""
    p = pure_iops(points, host)
    g = p[(p["experiment"] == "fio-queue-depth") & (p["rw"] == r["rw"]) & (p["bs_bytes"] == r["bs_bytes"])
          & (p["numjobs"] == r["numjobs"])].drop_duplicates("iodepth").sort_values("iodepth")
    depth = float(r["iodepth"])
    below, above = g[g["iodepth"] < depth], g[g["iodepth"] > depth]
    if below.empty or above.empty or (g["iodepth"] == depth).any():
        return g.iloc[0:0]
    return pd.concat([below.iloc[[-1]], above.iloc[[0]]])


def _far_from(iops: float, bracket: pd.DataFrame) -> bool:
    """True where ``iops`` lies beyond the bracket's IOPS by more than DISAGREE_RATIO (a disagreement with the sweep
    as config_agreement counts one; ninth read S12-bare9 2: 35,685 IOPS beside a bracket of 19,445-24,406, 1.46x,
    was called out of line while the checks said the sweep could not arbitrate)."""
    lo, hi = sorted(float(v) for v in bracket["iops"])
    return float(iops) * DISAGREE_RATIO < lo or float(iops) > hi * DISAGREE_RATIO


def in_bracket(iops: float, bracket: pd.DataFrame) -> bool:
    """True where ``iops`` lies within the bracket's two IOPS widened by the single-run ASSUMED_RATIO each way."""
    lo, hi = sorted(float(v) for v in bracket["iops"])
    return lo / ASSUMED_RATIO <= float(iops) <= hi * ASSUMED_RATIO


def pure_iops(points: pd.DataFrame | None, host: str) -> pd.DataFrame:
    """The host's single-direction measurements (experiment, rw, direction, bs_bytes, iodepth, numjobs, iops):
    fio-rw-ratio's read-only and write-only mixes named as the random reads and writes they are."""
    need = {"host", "experiment", "rw", "direction", "bs_bytes", "iodepth", "numjobs", "iops"}
    if points is None or points.empty or not need <= set(points.columns):
        return pd.DataFrame(columns=sorted(need))
    sel = points[(points["host"].astype(str) == host) & points["iops"].notna()].copy()
    mix = sel["rw"] == "randrw"
    share = pd.to_numeric(sel.get("rwmixread"), errors="coerce") if "rwmixread" in sel else pd.Series(dtype=float)
    pure = mix & share.isin(list(_PURE)) & (sel["direction"] != "total")
    sel.loc[pure, "rw"] = [_PURE[float(v)][0] for v in share[pure]]
    return sel[~mix | pure]


def is_read(rw: str) -> bool:
    """True for a read workload (read, randread), False for a write (write, randwrite)."""
    return "read" in str(rw)


def run_spread(points: pd.DataFrame | None, host: str, rw: str | None = None) -> Spread:
    """The host's Spread in rw's direction (reads for read/randread, writes for write/randwrite; both where None):
    the largest ratio between two FRESH experiments' measurements of one configuration, among the pairs within
    DISAGREE_RATIO; the largest pair beyond it is named as Spread.disagreed."""
    p = pure_iops(points, host)
    p = p[p["experiment"].isin(FRESH)]
    if rw is not None:
        p = p[p["rw"].map(is_read) == is_read(rw)]
    ratios: list[tuple[float, str]] = []
    settled: list[tuple[float, str]] = []
    for (kind, bs, qd, jobs), g in p.groupby(["rw", "bs_bytes", "iodepth", "numjobs"]):
        each = g.drop_duplicates("experiment")
        if len(each) >= 2:
            pair = float(each["iops"].max() / each["iops"].min())
            how = f"{size_text(int(bs))} {kind} QD{int(qd)}×{int(jobs)}: " + ", ".join(
                f"{fmt_number(r.iops)} IOPS in {r.experiment}" for r in each.itertuples())
            odd = _settled(points, host, each) if pair > DISAGREE_RATIO else ""
            (settled if odd else ratios).append((pair, f"{how} ({pair:.2f}× apart; {odd})" if odd else how))
    agree = [r for r in ratios if r[0] <= DISAGREE_RATIO]
    apart = [r for r in ratios if r[0] > DISAGREE_RATIO]
    worst = f"{max(apart)[1]} ({max(apart)[0]:.2f}× apart)" if apart else ""
    ratio = max(apart)[0] if apart else None
    odd = max(settled)[1] if settled else ""
    kind = "" if rw is None else "read" if is_read(rw) else "write"
    return Spread(*max(agree), disagreed=worst, disagreed_ratio=ratio, outlier=odd, pairs=len(agree), kind=kind) \
        if agree else Spread(disagreed=worst, disagreed_ratio=ratio, outlier=odd, kind=kind)


def sides_with(points: pd.DataFrame | None, host: str, r: pd.Series, values: list[float]) -> tuple[pd.DataFrame, float | None]:
    """(the queue-depth sweep's bracket around r's configuration, :func:`sweep_bracket`; the one of ``values`` (IOPS,
    r's configuration measured in several experiments) it sides with, or None): a value sides with it where exactly
    one lies within the bracket (:func:`in_bracket`) and every other beyond it by more than DISAGREE_RATIO
    (:func:`_far_from`); else None, and neither alone is the configuration's value."""
    bracket = sweep_bracket(points, host, r)
    if bracket.empty:
        return bracket, None
    inside = [v for v in values if in_bracket(v, bracket)]
    outside = [v for v in values if not in_bracket(v, bracket)]
    return bracket, (inside[0] if len(inside) == 1 and all(_far_from(v, bracket) for v in outside) else None)


def bracket_words(bracket: pd.DataFrame) -> str:
    """'the queue-depth sweep's 186,505 IOPS at QD16×1 and 184,083 at QD64×1'."""
    (lo, hi), jobs = bracket.itertuples(), int(bracket["numjobs"].iloc[0])
    return (f"the queue-depth sweep's {fmt_number(lo.iops)} IOPS at QD{int(lo.iodepth)}×{jobs} and "
            f"{fmt_number(hi.iops)} at QD{int(hi.iodepth)}×{jobs}")


def _settled(points: pd.DataFrame | None, host: str, each: pd.DataFrame) -> str:
    """'the queue-depth sweep's 186,505 IOPS at QD16×1 and 184,083 at QD64×1 side with 184,245: the other run is out
    of line' where the sweep settles a disagreeing configuration's measurements (``each``: one row per experiment;
    :func:`sides_with`), else ''."""
    bracket, side = sides_with(points, host, each.iloc[0], [float(v) for v in each["iops"]])
    if side is None:
        return ""
    return f"{bracket_words(bracket)} side with {fmt_number(side)}: the other run is out of line"


def one_job_elsewhere(points: pd.DataFrame | None, host: str, rw: str) -> pd.DataFrame:
    """The sweep's own kind of point measured by the other FRESH experiments (rw, 4 KiB, one job; fio-rw-ratio's
    write-only mix counted as randwrite) at a depth inside the sweep's range, highest IOPS first."""
    p = pure_iops(points, host)
    p = p[(p["rw"] == rw) & (p["bs_bytes"] == 4096) & (p["numjobs"] == 1)]
    sweep, other = p[p["experiment"] == SWEEP], p[p["experiment"].isin(FRESH) & (p["experiment"] != SWEEP)]
    if sweep.empty:
        return other.iloc[0:0]
    inside = other[(other["iodepth"] >= sweep["iodepth"].min()) & (other["iodepth"] <= sweep["iodepth"].max())]
    return inside.sort_values("iops", ascending=False)


def sweep_beaten(points: pd.DataFrame | None, host: str, rw: str) -> tuple[float | None, pd.DataFrame, Spread]:
    """(the highest one_job_elsewhere IOPS over the sweep's highest, or None where nothing to compare; the points
    above the sweep's highest by more than the spread's limit, save a depth whose own measurements elsewhere
    disagree and one of them is within it (the configuration's value is then neither, S8-bare M-1: 1-CPU's 76,512
    and 47,150 IOPS at QD32 bracket the sweep's 61,151), with times_sweep (each over the sweep's highest) and
    sweep_top (IOPS); the Spread in rw's direction)."""
    spread = run_spread(points, host, rw)
    p = pure_iops(points, host)
    sweep = p[(p["experiment"] == SWEEP) & (p["rw"] == rw) & (p["bs_bytes"] == 4096) & (p["numjobs"] == 1)]
    other = one_job_elsewhere(points, host, rw)
    if sweep.empty or other.empty:
        return None, other, spread
    top = float(sweep["iops"].max())
    lowest = other.groupby("iodepth")["iops"].transform("min")
    above = other[lowest > spread.limit * top]
    return float(other["iops"].max()) / top, above.assign(times_sweep=above["iops"] / top, sweep_top=top), spread


def points_said(p: pd.DataFrame) -> str:
    """'121,409 IOPS at QD32 in fio-block-size, 102,782 IOPS at QD32 in fio-rw-ratio'."""
    return ", ".join(f"{fmt_number(r.iops)} IOPS at QD{int(r.iodepth)} in {r.experiment}" for r in p.itertuples())


def flat_before_deepest(points: pd.DataFrame | None, host: str, rw: str) -> tuple[pd.DataFrame, pd.Series | None,
                                                                                  Spread]:
    """(the one_job_elsewhere points between the sweep's last two depths and in line with them (not beyond
    DISAGREE_RATIO of both, nor of each other), where the sweep's deepest point measured at most the run-to-run
    spread's limit times every one of them; the sweep's deepest point; the Spread in rw's direction). Empty where none
    or where one of them leaves the last step rising (twelfth read S15-1cpu 1: 'the sweep had not levelled off' from QD16's 42,917 to QD64's
    55,471 IOPS, while fio-block-size's QD32x1 measured 58,281: from it the one-job curve is flat, -4.8 %)."""
    spread = run_spread(points, host, rw)
    p = pure_iops(points, host)
    sweep = p[(p["experiment"] == SWEEP) & (p["rw"] == rw) & (p["bs_bytes"] == 4096) & (p["numjobs"] == 1)]
    if len(sweep) < 2:
        return sweep.iloc[0:0], None, spread
    last = sweep.sort_values("iodepth").iloc[-2:]
    deepest = last.iloc[-1]
    other = one_job_elsewhere(points, host, rw)
    between = other[(other["iodepth"] > last["iodepth"].iloc[0]) & (other["iodepth"] < deepest["iodepth"])]
    between = between[[not _far_from(v, last) for v in between["iops"]]]
    low = float(between["iops"].min()) if len(between) else math.nan  # (an empty mask above leaves no columns)
    # none; runs that disagree among themselves (neither is the depth's value); or a last step still rising from one
    if not len(between) or not (float(between["iops"].max()) <= DISAGREE_RATIO * low
                                and float(deepest["iops"]) <= spread.limit * low):
        return between.iloc[0:0], deepest, spread
    return between, deepest, spread
