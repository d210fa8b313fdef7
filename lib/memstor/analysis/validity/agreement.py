"""``config_agreement``: one configuration (same rw, block size, iodepth, numjobs, rwmixread, ioengine, O_DIRECT
and direction) measured in two or more experiments of one host, in the SAME drive state (the fio summary
points, memstor.analysis.points.fio_summary).

Drive state (:func:`drive_state`): the SNIA PTS experiments (``fio-pts-*``) and fio-steady-state measure after
their own preconditioning (their tidy rows carry ``phase`` / ``ss_status`` / ``precondition_passes``; the
summary points keep only the experiment's name, which says it): each is its own state, compared with nothing
here (fresh against steady is steady_vs_fresh). Every other closed-loop experiment measures the file as it was
(``fresh``): those are compared. Left out: fio-load-latency (paced: its iodepth is a ceiling) and
fio-write-saturation (a trajectory: its figure averages a burst and a cliff). A different file size is not a
different configuration, but the span can explain a difference: such a row is at most ``warn``.

Value: the ratio high / low of the experiments' IOPS (>= 1 by construction: the lower side of the band is 1,
both directions are folded into it; the evidence names which experiment is higher). Pass: the 95 % intervals
overlap within OVERLAP_CAP (wide intervals that overlap do not make a 5x difference an agreement: the cap
bounds what an interval may explain), or, without intervals, within AGREE_RATIO. Intervals that miss each
other warn at any ratio (the run-to-run spread exceeds the single-run intervals). Beyond FAIL_RATIO: fail,
whatever the intervals. An experiment of the configuration without IOPS (a failed point): ``unchecked``.
"""

from __future__ import annotations

import pandas as pd

from memstor.analysis.spread import DISAGREE_RATIO, sides_with
from memstor.analysis.validity.rows import FAIL, PASS, WARN, has, n, num, row, unchecked
from memstor.core.units import size_text

#: Configuration columns: equal in all of them = the same configuration (the file size is reported beside).
CONFIG_KEYS = ("rw", "bs_bytes", "iodepth", "numjobs", "rwmixread", "ioengine", "direct", "direction")
#: Experiments that do not measure a plain closed-loop point: paced (its iodepth a ceiling) and a trajectory.
NOT_COMPARED = ("fio-load-latency", "fio-write-saturation", "mixed-load-map")
#: Experiments that measure after their own preconditioning (another drive state than the fresh file).
PRECONDITIONED = ("fio-steady-state",)
PRECONDITIONED_PREFIX = "fio-pts-"
FRESH = "fresh"
#: Without intervals, or with intervals that miss each other, two values within this ratio agree up to the
#: run-to-run spread a single run's interval does not hold.
AGREE_RATIO = 1.10
#: Overlapping intervals count as agreement up to this ratio only: beyond it the intervals are too wide to
#: say anything (a 5x difference inside two wide intervals is a disagreement, not a noisy agreement).
OVERLAP_CAP = 1.25
#: Two measurements of one configuration further apart than this cannot both describe the device in one
#: state: something changed between them (the spread rule's own bound, one number for both).
FAIL_RATIO = DISAGREE_RATIO

_SECTION = "storage_points"


def drive_state(experiment: str) -> str:
    """``fresh`` for an experiment measuring the file as it is, else ``preconditioned (<experiment>)``: the
    PTS experiments and fio-steady-state precondition the span their own way before they measure."""
    exp = str(experiment)
    if exp in PRECONDITIONED or exp.startswith(PRECONDITIONED_PREFIX):
        return f"preconditioned ({exp})"
    return FRESH


def agreement_rows(points: pd.DataFrame | None) -> list[dict]:
    """config_agreement per host x configuration measured in more than one fresh experiment."""
    if not has(points, "host", "experiment", "iops", *CONFIG_KEYS):
        return []
    p = points[~points["experiment"].isin(NOT_COMPARED) & (points["direction"] != "total")]
    p = p[p["experiment"].map(drive_state) == FRESH]
    p = pure_mixes(p)
    p = p.assign(_n=_count(p, "n"))
    p = p[p["_n"] + _count(p, "n_failed") > 0] if "n" in points else p
    keys = ["host", *CONFIG_KEYS]
    p = p.assign(**{f"_{k}": p[k].astype(object).where(p[k].notna(), "") for k in keys})
    rows = []
    for _, g in p.groupby([f"_{k}" for k in keys], sort=True):
        per_exp = g.assign(_has=g["iops"].notna()).sort_values(["_has", "_n"], ascending=False, kind="stable") \
            .drop_duplicates("experiment")
        if len(per_exp) >= 2:
            rows.append(_row(per_exp, points))
    return rows


#: A mixed workload with 100 % or 0 % reads is the pure one: (mixed rw, read share) -> the pure rw.
PURE = {("randrw", 100.0): "randread", ("randrw", 0.0): "randwrite", ("rw", 100.0): "read", ("rw", 0.0): "write",
        ("readwrite", 100.0): "read", ("readwrite", 0.0): "write"}


def pure_mixes(p: pd.DataFrame) -> pd.DataFrame:
    """The points with a 100 % / 0 % read mix (the rw-ratio sweep's ends) named as the pure workload they are
    (``randrw`` at 0 % reads is ``randwrite``, read share empty), so that the same I/O measured by the
    block-size and the mix sweeps is compared (a reviewer saw 47,150 and 76,512 IOPS of one configuration with no
    row)."""
    mix = pd.to_numeric(p["rwmixread"], errors="coerce")
    pure = [PURE.get((str(rw), float(m))) if m == m else None for rw, m in zip(p["rw"], mix)]
    hit = pd.Series([x is not None for x in pure], index=p.index)
    if not hit.any():
        return p
    out = p.copy()
    out.loc[hit, "rw"] = [x for x in pure if x is not None]
    out["rwmixread"] = out["rwmixread"].astype(object)
    out.loc[hit, "rwmixread"] = None
    return out


def _count(p: pd.DataFrame, col: str) -> pd.Series:
    """A count column of the points as numbers (0 where empty or absent)."""
    return pd.to_numeric(p[col], errors="coerce").fillna(0) if col in p else pd.Series(0, index=p.index)


def _subject(r: pd.Series) -> str:
    mix = "" if num(r["rwmixread"]) is None else f" {int(r['rwmixread'])} % reads"
    return (f"{size_text(int(r['bs_bytes']))} {r['rw']}{mix} ({r['direction']}), QD{int(r['iodepth'])}x"
            f"{int(r['numjobs'])}, {r['ioengine']}, direct={int(r['direct']) if num(r['direct']) is not None else '?'}")


def _ci(r: pd.Series) -> tuple[float, float] | None:
    lo, hi = num(r.get("iops_ci_low")), num(r.get("iops_ci_high"))
    return None if lo is None or hi is None else (lo, hi)


def _sizes(g: pd.DataFrame) -> list[int]:
    """The distinct file sizes (bytes) of the experiments' points."""
    if "file_size_bytes" not in g:
        return []
    return sorted({int(s) for s in g["file_size_bytes"] if num(s) is not None})


def _said(r: pd.Series) -> str:
    ci = _ci(r)
    size = f", {size_text(int(r['file_size_bytes']))} file" if num(r.get("file_size_bytes")) is not None else ""
    return f"{n(r['iops'])} IOPS" + (f" [{n(ci[0])}, {n(ci[1])}]" if ci else "") + f" in {r['experiment']}{size}"


def _disagreed(g: pd.DataFrame, points: pd.DataFrame | None, hi_r: pd.Series, lo_r: pd.Series) -> str:
    """A failed pair's consequence: which run the queue-depth sweep's neighbouring depths side with where they settle
    it (spread.sides_with; the report's text says the same: ninth read S12-bare9 2), else that neither number alone
    is the configuration's value."""
    both = f"({n(hi_r['iops'])} and {n(lo_r['iops'])} IOPS)"
    _, side = sides_with(points, str(hi_r["host"]), hi_r, [float(v) for v in g["iops"]]) if points is not None \
        else (None, None)
    if side is None:
        return (f"neither number alone is this configuration's value: the report gives both {both}: the machine, the "
                "file or the runs changed between them")
    other = " and ".join(n(v) for v in g["iops"] if float(v) != side)
    return (f"the queue-depth sweep's neighbouring depths side with {n(side)} IOPS: {other} IOPS is the run out of "
            "line (a run in another state of the machine or the file); the report says so beside both")


def judge(ratio: float, with_ci: bool, overlap: bool, same_span: bool = True) -> str:
    """pass / warn / fail of a high / low ratio (module docstring); a different span caps it at warn."""
    if ratio > FAIL_RATIO:
        return FAIL if same_span else WARN
    if overlap:
        return PASS if ratio <= OVERLAP_CAP else WARN
    return PASS if not with_ci and ratio <= AGREE_RATIO else WARN


def _row(g: pd.DataFrame, points: pd.DataFrame | None = None) -> dict:
    first, unit = g.iloc[0], "x (high / low)"
    if g["iops"].isna().any():
        lacking = ", ".join(g.loc[g["iops"].isna(), "experiment"].astype(str))
        return unchecked(first["host"], "config_agreement", _subject(first),
                         f"no IOPS in {lacking} (the point failed): nothing to compare with "
                         + ", ".join(g.loc[g["iops"].notna(), "experiment"].astype(str)), _SECTION, unit,
                         low=1.0, high=AGREE_RATIO)
    hi_r, lo_r = g.loc[g["iops"].idxmax()], g.loc[g["iops"].idxmin()]
    ratio = float(hi_r["iops"]) / float(lo_r["iops"]) if float(lo_r["iops"]) > 0 else float("inf")
    cis = [_ci(r) for _, r in g.iterrows()]
    with_ci = all(c is not None for c in cis)
    overlap = with_ci and max(c[0] for c in cis if c) <= min(c[1] for c in cis if c)
    sizes = _sizes(g)
    status = judge(ratio, with_ci, overlap, len(sizes) <= 1)
    values = "; ".join(_said(r) for _, r in g.sort_values("iops", ascending=False).iterrows())
    if status == PASS:
        how = (f"the 95 % intervals overlap, within {n(OVERLAP_CAP)}x" if overlap and ratio > AGREE_RATIO
               else f"within {n(AGREE_RATIO)}x")
    else:
        how = f"{n(ratio)}x apart" + ((", the 95 % intervals overlap but beyond " + f"{n(OVERLAP_CAP)}x")
                                      if overlap else ", the 95 % intervals miss each other" if with_ci
                                      else ", without intervals")
    span = "" if len(sizes) <= 1 else (f"; the file sizes differ ({', '.join(size_text(s) for s in sizes)}): "
                                       "the span may explain part of it")
    consequence = {PASS: "", WARN: "the run-to-run spread of this configuration exceeds its single-run intervals: "
                   "differences between experiments of this size are not findings",
                   FAIL: _disagreed(g, points, hi_r, lo_r)}[status]
    if status == FAIL and not consequence.startswith("neither"):  # S12-1cpu9 6: the sweep settled it: the value
        status = WARN                                               # is stated, the run out of line named
    limit = FAIL_RATIO if ratio > FAIL_RATIO else OVERLAP_CAP if overlap and ratio > AGREE_RATIO else AGREE_RATIO
    return row(hi_r["host"], "config_agreement", _subject(hi_r), status, ratio, limit, unit,
               f"{values}: {how}{span} (all fresh: the file as it was, no preconditioning)", consequence, _SECTION,
               low=1.0, high=AGREE_RATIO)
