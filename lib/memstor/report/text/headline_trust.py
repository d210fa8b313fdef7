"""Report text, the first page's trust cells: what a headline value's trust says beyond its checks' statuses — the
run-to-run spread of a best of single runs (memstor.analysis.spread, per direction), a short run the same job
ran slower for longer, more jobs than the run could use CPUs.

Pure: DataFrames (memstor.analysis.points.fio_summary) and words in, words out.
"""

from __future__ import annotations

import re

import pandas as pd

from memstor.analysis.hierarchy import cpu_held
from memstor.analysis.load_latency import EXPERIMENT as LOAD_LATENCY
from memstor.analysis.load_latency import LT_POINT_PREFIX
from memstor.analysis.spread import ASSUMED_RATIO, pure_iops, run_spread
from memstor.core.fmt import fmt_number
from memstor.core.units import size_text


def caveat_last(trust: str, said: str) -> str:
    """A trust word with one more caveat last: 'sound ...' becomes 'with caveats (said)', 'with caveats (a)' becomes
    'with caveats (a; said)'."""
    return f"with caveats ({said})" if trust.startswith("sound") else f"{trust[:-1]}; {said})"


def spread_caveat(trust: str, points: pd.DataFrame | None, host: str, key: str = "best_randread_iops") -> str:
    """A best-of-single-runs headline's trust with the host's run-to-run spread last (memstor.analysis.spread's one
    rule, R-loop 1.1: the most of single runs is lifted by their spread): 'the most of single runs: may be high by
    the largest gap between two fresh runs of one job measured here, 1.32×' or '... by the 10 % assumed for single fresh runs, not measured'. A
    withheld value ('not valid') and no points given: unchanged. The spread is the headline's direction's (key
    best_randread_iops: reads; S8-bare M-1: a write pair's 2.19x disagreement was the reads' caveat)."""
    if points is None or trust.startswith("not valid"):
        return trust
    rw = "randread" if "read" in key else "randwrite"
    said = f"the most of single runs: may be high by {run_spread(points, host, rw).short()}"
    return caveat_last(trust, said)


#: The block-size sweep's sequential write job (rw, block size in bytes, iodepth, numjobs).
SEQ_WRITE_JOB = ("write", 2**20, 32, 1)


def job_split(points: pd.DataFrame | None, host: str, rw: str = SEQ_WRITE_JOB[0]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows of host's `rw` at the sequential write job's block size, depth and jobs (SEQ_WRITE_JOB: 1 MiB,
    QD32x1): (fio-block-size's own, other experiments'); two empty frames where points lack the columns."""
    need = {"host", "experiment", "rw", "bs_bytes", "iodepth", "numjobs", "bw_MBps"}
    if points is None or points.empty or not need <= set(points.columns):
        return pd.DataFrame(), pd.DataFrame()
    _, bs, qd, nj = SEQ_WRITE_JOB
    p = points[(points["host"].astype(str) == host) & (points["rw"] == rw) & (points["bs_bytes"] == bs)
               & (points["iodepth"] == qd) & (points["numjobs"] == nj)]
    own = p["experiment"] == "fio-block-size"
    return p[own], p[~own]


def other_span(own: pd.DataFrame, other: pd.DataFrame) -> str:
    """' over 6 GiB (the block-size sweep's: 256 MiB)' where the other rows' spans (file_size_bytes) are not the
    block-size sweep's: another region of the drive, not the same job (seventh read S11-loop 5: XSR wrote the whole
    6 GiB loop device, the headline 256 MiB of it); '' where they are the same or a span is unknown."""
    if "file_size_bytes" not in own.columns or "file_size_bytes" not in other.columns:
        return ""
    mine = set(pd.to_numeric(own["file_size_bytes"], errors="coerce").dropna())
    theirs = sorted(set(pd.to_numeric(other["file_size_bytes"], errors="coerce").dropna()))
    if len(mine) != 1 or not theirs or set(theirs) == mine:
        return ""
    return f" over {', '.join(size_text(b) for b in theirs)} (the block-size sweep's: {size_text(mine.pop())})"


def seq_write_said(slow: pd.DataFrame, own: pd.DataFrame, means: bool = False) -> str:
    """'the same job ran at 1,038-1,112 MB/s in fio-pts-xsr' (``means``: '... MB/s (whole-run means) in ...'), or
    where its span differs 'the same 1 MiB QD32x1 write ran at 1,070-1,323 MB/s (whole-run means) over 6 GiB (the
    block-size sweep's: 256 MiB) in fio-pts-xsr'."""
    lo, hi = slow["bw_MBps"].min(), slow["bw_MBps"].max()
    rate = fmt_number(lo) if lo == hi else f"{fmt_number(lo)}-{fmt_number(hi)}"
    where = ", ".join(dict.fromkeys(slow["experiment"].astype(str)))
    if not (span := other_span(own, slow)):
        kind = " (whole-run means)" if means and len(slow) > 1 else " (a whole-run mean)" if means else ""
        return f"the same job ran at {rate} MB/s{kind} in {where}"
    return f"the same 1 MiB QD32x1 write ran at {rate} MB/s (whole-run means){span} in {where}"


def lasting_caveat(trust: str, points: pd.DataFrame | None, host: str, value: float) -> str:
    """The sequential write headline's trust with 'not shown to last: the same job ran at 1,038-1,112 MB/s in
    fio-pts-xsr' first where another experiment measured its job (write, 1 MiB, QD32x1) below value / ASSUMED_RATIO
    (MB/s; fourth read R-1cpu M1: the 2-s 2,368 MB/s headline beside the same job's 10-s XSR runs), naming the
    other span where it differs (seq_write_said); else unchanged."""
    said = "" if trust.startswith("not valid") else lasting_words(points, host, value)
    if not said:
        return trust
    return f"with caveats ({said})" if trust.startswith("sound") else trust.replace("with caveats (",
                                                                                    f"with caveats ({said}; ", 1)


def lasting_words(points: pd.DataFrame | None, host: str, value: float) -> str:
    """'not shown to last: the same job ran at 1,038-1,112 MB/s in fio-pts-xsr' where another experiment measured
    the sequential write job below value / ASSUMED_RATIO (MB/s), else '' (:func:`lasting_caveat`; page 2's finding
    too: tenth read S13-loop 5)."""
    own, p = job_split(points, host)
    slow = p[pd.to_numeric(p["bw_MBps"], errors="coerce") < value / ASSUMED_RATIO] if not p.empty else p
    return f"not shown to last: {seq_write_said(slow, own)}" if not slow.empty else ""


#: Headline keys the closed-loop sweeps give (memstor.analysis.points.sweep_points): (rw the value is of, column,
#: block size or None for any, unit).
SWEEP_BEST = {"best_randread_iops": (("randread",), "iops", 4096, "IOPS"),
              "best_randwrite_iops": (("randwrite",), "iops", 4096, "IOPS"),
              "seq_read_MBps": (("read", "randread"), "bw_MBps", None, "MB/s"),  # R-loop 2.4: random 1 MiB reads
              "seq_write_MBps": (("write", "randwrite"), "bw_MBps", None, "MB/s")}
#: Not candidates for a higher best: rate-limited runs (their IOPS are offered shares, an overshoot a failure) and
#: write saturation (burst and cliff in one run: its levels have their own section).
NOT_CANDIDATES = ("fio-load-latency", "mixed-load-map", "fio-write-saturation")
#: Experiments that write the target over before they measure (SNIA PTS preconditioning): their runs of a job
#: measure it in another drive state than the fresh sweeps (eleventh reads S14-loop 1, S14-1cpu 5).
PRECONDITIONED = ("fio-steady-state", "fio-pts-hir", "fio-pts-cbw", "fio-pts-dirth")
#: Runs of a best's own job in other experiments from which their range is said (fewer: elsewhere_caveat's top).
SAME_JOB_RUNS = 3
#: Above the headline by more than its printed rounding (a candidate's own row, or a tie, is no higher figure).
ABOVE = 1.005


def closed_target_run(points: pd.DataFrame) -> pd.Series:
    """Per row: fio-load-latency's fio latency_target run (its point named 'lt-...'), a closed loop whose IOPS are
    measured, not offered: a candidate for a higher best (eighth read S12-1cpu 1: its 65,752 IOPS at QD32x4 beside
    'Best 4K random read 59,753', the same job, with no caveat)."""
    name = points["point"] if "point" in points.columns else points.get("config", pd.Series("", index=points.index))
    return (points["experiment"] == LOAD_LATENCY) & name.astype(str).str.startswith(LT_POINT_PREFIX)


#: Runs whose IOPS are offered rates, not a closed loop's: no run of a fixed-depth job.
RATE_LIMITED = ("fio-load-latency", "mixed-load-map")


def fixed_depth_runs(p: pd.DataFrame, rws, m: re.Match, left_out=RATE_LIMITED) -> pd.DataFrame:
    """The rows of ``p`` (memstor.analysis.spread.pure_iops) of one fixed-depth job: rw in ``rws``, 4 KiB, the depth
    x jobs ``m`` matched ('QD32x4'), outside the experiments ``left_out`` and not fio's latency_target search (whose
    depth varies)."""
    return p[p["rw"].isin(rws) & (p["bs_bytes"] == 4096) & (p["iodepth"] == int(m[1])) & (p["numjobs"] == int(m[2]))
             & ~p["experiment"].isin(left_out) & ~closed_target_run(p)]


def elsewhere_caveat(trust: str, points: pd.DataFrame | None, host: str, key: str, value: float) -> str:
    """A sweep headline's trust with 'other runs measured more: up to 121,968 IOPS as a whole-run mean
    (fio-steady-state: randwrite 4 KiB)' last where a closed-loop run outside the headline's candidates measured its workload (rw,
    4 KiB for IOPS; for MB/s any block, random too: R-loop 2.4's 1 MiB random reads at 6,365 MB/s) above value (fifth read S9-bare B-1: 'the most measured' while
    fio-pts-hir measured 87,461 and the steady-state rounds 121,968 IOPS on the same file; R-def: fio-rw-ratio's
    write-only mix 72,383 against 63,736); else unchanged. 'A whole-run mean', fio's figure like the headline's (S10-bare
    3: 'up to 1,528 MB/s' from fio-pts-xsr, whose last 3 s averaged 1,626)."""
    if key not in SWEEP_BEST or points is None or points.empty or trust.startswith("not valid"):
        return trust
    rws, col, bs, unit = SWEEP_BEST[key]
    p = pure_iops(points, host) if col == "iops" else points[points["host"].astype(str) == host]
    if p.empty or col not in p.columns:
        return trust
    # S19-bare 10: a write-saturation run's whole-run MB/s is a measured rate too (its IOPS at 4 KiB are the same
    # job over another span: other_span_caveat); '2,066 MB/s' was left out beside '1,712-1,914 MB/s' from XSR
    left_out = p["experiment"].isin(NOT_CANDIDATES) & ~((p["experiment"] == "fio-write-saturation") & (col == "bw_MBps"))
    p = p[p["rw"].isin(rws) & (~left_out | closed_target_run(p))
          & (pd.to_numeric(p[col], errors="coerce") > value * ABOVE) & ((p["bs_bytes"] == bs) if bs else True)]
    if p.empty:
        return trust
    top = p.loc[pd.to_numeric(p[col], errors="coerce").idxmax()]
    how = ", fio latency_target's closed run" if bool(closed_target_run(p.loc[[top.name]]).iloc[0]) else ""
    same, top_is_same = _same_job_above(points, host, key, value, top)
    said = "other runs measured more: " + (same + "; " if same else "") + (
        "" if top_is_same else f"up to {fmt_number(top[col])} {unit} as a whole-run mean ({top['experiment']}"
                               f"{how}: {top['rw']} {size_text(int(top['bs_bytes']))})")
    said = said.removesuffix("; ")
    return caveat_last(trust, said)


def same_job_caveat(trust: str, points: pd.DataFrame | None, host: str, key: str, detail: str,
                    value: float) -> tuple[str, bool]:
    """(words, most above) for a best-IOPS headline whose own job (its rw, 4 KiB, the depth x jobs its detail names)
    ran SAME_JOB_RUNS times or more elsewhere at fixed depth (not the rate-limited runs, not fio's latency_target
    search, whose depth varies) where some measured more: 'the same job (QD32x4) measured 32,435-75,211 IOPS in 35
    other runs (fio-pts-hir, fio-steady-state), 30 of them more', and whether more than half measured more by over
    the 10 % assumed for single fresh runs (then the value is no maximum, not 'may be high': tenth reads S13-bare 1,
    S13-loop 2, S13-1cpu 4); ('', False) otherwise and for a withheld value."""
    m = re.search(r"QD(\d+)x(\d+)", detail)
    if key not in SWEEP_BEST or SWEEP_BEST[key][1] != "iops" or not m or trust.startswith("not valid"):
        return "", False
    p = pure_iops(points, host)
    if p.empty:
        return "", False
    p = fixed_depth_runs(p, SWEEP_BEST[key][0], m, NOT_CANDIDATES)
    iops = pd.to_numeric(p["iops"], errors="coerce")
    mine = (iops - value).abs() <= 1e-9 * value
    others = _same_span(p[~mine & iops.notna()], p[mine])
    other = pd.to_numeric(others["iops"], errors="coerce")
    above = others[other > value]  # S15-bare 2: 65,499 against 65,483 is more, if by 0.02 %
    if above.empty or len(others) < SAME_JOB_RUNS:
        return "", False
    where = sorted(others["experiment"].astype(str).unique())
    during = others["point"].astype(str).str.startswith("pc").any() if "point" in others.columns else False
    state = ((" during or after preconditioning" if during else " after preconditioning")
             if set(where) <= set(PRECONDITIONED) else "")  # S15-bare 2: fio-pts-hir's pc rounds precondition
    said = (f"the same job ({m[0]}) measured {fmt_number(other.min())}–{fmt_number(other.max())} IOPS in "
            f"{len(others)} other runs{state} ({', '.join(where)}), {len(above)} of them more")
    return said, 2 * int((other > value * ASSUMED_RATIO).sum()) > len(others)


def other_span_caveat(trust: str, points: pd.DataFrame | None, host: str, key: str, detail: str,
                      value: float) -> str:
    """A best-IOPS headline's trust with 'over 6 GiB the same job (QD32x4) measured 65,267-94,977 IOPS (whole-run
    means) in 14 runs (fio-pts-hir, fio-steady-state, fio-write-saturation)' last where runs of its own job (its rw,
    4 KiB, the depth x jobs its detail names) over another span (file_size_bytes) measured outside the 10 % assumed
    for single runs from ``value`` (IOPS; nineteenth read S19-loop 5: 278,954 IOPS over 256 MiB of a fresh loop
    device, 2.9-4.3x the same job over all of it, said only on page 5); else unchanged. Another span is another
    condition, not a disagreement: the value stands, its reader is told."""
    m = re.search(r"QD(\d+)x(\d+)", detail)
    if key not in SWEEP_BEST or SWEEP_BEST[key][1] != "iops" or not m or trust.startswith("not valid"):
        return trust
    p = pure_iops(points, host)
    if p.empty or "file_size_bytes" not in p.columns:
        return trust
    p = fixed_depth_runs(p, SWEEP_BEST[key][0], m)
    iops = pd.to_numeric(p["iops"], errors="coerce")
    own = p[(iops - value).abs() <= 1e-9 * value]
    others = p.drop(own.index)
    others = others.drop(_same_span(others, own).index) if len(own) else others.iloc[0:0]
    other = pd.to_numeric(others["iops"], errors="coerce").dropna()
    if other.empty or (other.min() >= value / ASSUMED_RATIO and other.max() <= value * ASSUMED_RATIO):
        return trust
    spans = ", ".join(size_text(int(b)) for b in sorted(set(pd.to_numeric(others["file_size_bytes"]).dropna())))
    where = ", ".join(sorted(others["experiment"].astype(str).unique()))
    rate = fmt_number(other.min()) if other.min() == other.max() else f"{fmt_number(other.min())}-{fmt_number(other.max())}"
    runs = f"(whole-run means) in {len(other)} runs" if len(other) > 1 else "(a whole-run mean) in one run"
    return caveat_last(trust, f"over {spans} the same job ({m[0]}) measured {rate} IOPS {runs} ({where}), another "
                              "span and state")


def steady_same_job_caveat(trust: str, points: pd.DataFrame | None, host: str, detail: str, value: float) -> str:
    """The steady-state headline's trust with 'other runs of its job (QD32x4, 256 MiB) measured 67,174-91,245 IOPS
    (whole-run means) in 16 runs (fio-pts-hir, fio-queue-depth): all lower, 0.68-0.93× this' last where another
    experiment's closed run of its job (4 KiB randwrite, the depth x jobs its ``detail`` names, the same span) measured
    beyond the 10 % assumed for single runs from ``value`` (IOPS; S21-cpu1 3: 98,278 beside every other run of its
    job lower, said only on page 4); else unchanged."""
    m = re.search(r"QD(\d+)x(\d+)", detail)
    p = pure_iops(points, host)
    if not m or p.empty or trust.startswith("not valid"):
        return trust
    job = fixed_depth_runs(p, ("randwrite",), m)
    own = job[job["experiment"] == "fio-steady-state"]
    others = _same_span(job[job["experiment"] != "fio-steady-state"], own) if len(own) else job.iloc[0:0]
    iops = pd.to_numeric(others["iops"], errors="coerce").dropna()
    if iops.empty or (iops.min() >= value / ASSUMED_RATIO and iops.max() <= value * ASSUMED_RATIO):
        return trust
    lo, hi = iops.min() / value, iops.max() / value
    side = "all lower, " if hi < 1 else "all higher, " if lo > 1 else ""
    span = f", {size_text(int(own['file_size_bytes'].iloc[0]))}" if "file_size_bytes" in own.columns and \
        pd.notna(own["file_size_bytes"].iloc[0]) else ""
    runs = f"(whole-run means) in {len(iops)} runs" if len(iops) > 1 else "(a whole-run mean) in one run"
    where = ", ".join(sorted(others["experiment"].astype(str).unique()))
    return caveat_last(trust, f"other runs of its job ({m[0]}{span}) measured {fmt_number(iops.min())}-"
                              f"{fmt_number(iops.max())} IOPS {runs} ({where}): {side}{lo:.2f}-{hi:.2f}× this")


def failed_wsat_caveat(trust: str, points: pd.DataFrame | None, validity: pd.DataFrame | None, host: str,
                       value: float) -> str:
    """The sequential write headline's trust with 'fio-write-saturation's 128 KiB write measured 2,755 MB/s (fio's
    whole-run figure), left out: wsat_series failed (1 whole second of 2 per-second values (fio's runtime 1.56 s))'
    last where a write-saturation run that wsat_series failed measured above ``value`` (MB/s; S21-cpu1 2: the
    left-out run was said on page 5 only, so page 1 read 'up to 2,171 MB/s'); else unchanged."""
    if points is None or validity is None or validity.empty or "point" not in points.columns or \
            trust.startswith("not valid"):
        return trust
    rows = validity[(validity["host"].astype(str) == host) & (validity["check"] == "wsat_series")
                    & (validity["status"] == "fail")]
    said = []
    for r in rows.itertuples():
        name = str(r.subject).rsplit("(", 1)[-1].rstrip(")")
        run = points[(points["host"].astype(str) == host) & (points["experiment"] == "fio-write-saturation")
                     & (points["point"].astype(str) == name)]
        bw = pd.to_numeric(run.get("bw_MBps"), errors="coerce").dropna() if len(run) else pd.Series(dtype=float)
        if len(bw) and float(bw.max()) > value * ABOVE:
            said.append(f"fio-write-saturation's {str(r.subject).split(' (')[0]} measured {fmt_number(bw.max())} "
                        f"MB/s (fio's whole-run figure), left out: wsat_series failed ({r.evidence})")
    return caveat_last(trust, "; ".join(said)) if said else trust


def _same_span(others: pd.DataFrame, own: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``others`` over the span (file_size_bytes) of ``own`` where both are known; all of them where not
    (eleventh read S14-loop 1: fio-pts-hir's 13 runs over the 6 GiB device were counted as the same job as the
    queue-depth sweep's 256 MiB point)."""
    if "file_size_bytes" not in others.columns or "file_size_bytes" not in own.columns:
        return others
    span = set(pd.to_numeric(own["file_size_bytes"], errors="coerce").dropna())
    theirs = pd.to_numeric(others["file_size_bytes"], errors="coerce")
    return others[theirs.isna() | theirs.isin(span)] if len(span) == 1 else others


def _same_job_above(points: pd.DataFrame, host: str, key: str, value: float, top: pd.Series) -> tuple[str, bool]:
    """('the same job ran at 1,656-1,902 MB/s in fio-pts-xsr', whether ``top`` is one of those rows) for the
    sequential write headline where other experiments' runs of its own job (SEQ_WRITE_JOB) measured above value
    (eighth read S12-1cpu 6: the caveat named only a random 1 MiB write at 1,910 MB/s while the same sequential job
    measured 1,656 and 1,902 MB/s in fio-pts-xsr); ('', False) otherwise."""
    if key != "seq_write_MBps":
        return "", False
    own, other = job_split(points, host)
    above = other[pd.to_numeric(other.get("bw_MBps"), errors="coerce") > value * ABOVE] if len(other) else other
    if above.empty:
        return "", False
    return seq_write_said(above, own, means=True), bool(top.name in above.index)


def memory_elsewhere_caveat(trust: str, mlp: pd.DataFrame | None, host: str, value: float) -> str:
    """The peak memory bandwidth headline's trust with :func:`mlp_above` last (eighth read S12-loop 5: 'Peak memory
    bandwidth 6,632' beside the MLP table's 8,209 with no caveat); else unchanged."""
    said = mlp_above(mlp, host, value)
    return caveat_last(trust, said) if said and not trust.startswith("not valid") else trust


def mlp_above(mlp: pd.DataFrame | None, host: str, value: float) -> str:
    """'other runs measured more: 8,209 MB/s (mem-hierarchy's MLP run, 2 threads × 16 chains, its bandwidth by
    Little's law; left out of its curve by hierarchy_cpu_share: its threads on a CPU 88.6 % of the time)' where an MLP
    run (hierarchy.mlp_table: per host x threads x chains, bandwidth_MBps, cpu_share) measured more than ``value``
    (MB/s); '' otherwise."""
    need = {"host", "threads", "chains", "bandwidth_MBps"}
    if mlp is None or mlp.empty or not need <= set(mlp.columns):
        return ""
    m = mlp[(mlp["host"].astype(str) == host) & (pd.to_numeric(mlp["bandwidth_MBps"], errors="coerce") > value * ABOVE)]
    if m.empty:
        return ""
    top = m.loc[pd.to_numeric(m["bandwidth_MBps"], errors="coerce").idxmax()]
    share = top.get("cpu_share")
    out = "" if bool(cpu_held(pd.Series([share])).iloc[0]) else (
        f"; left out of its curve by hierarchy_cpu_share: its threads on a CPU {100 * float(share):.1f} % of the time")
    return (f"other runs measured more: {fmt_number(top['bandwidth_MBps'])} MB/s (mem-hierarchy's MLP run, "
            f"{int(top['threads'])} threads × {int(top['chains'])} chains, its bandwidth by Little's law{out})")


#: QD1 latency headlines: key -> the direction their runs measured.
QD1_KEYS = {"qd1_randread_lat_us": "read", "qd1_randwrite_lat_us": "write"}


def qd1_caveat(trust: str, points: pd.DataFrame | None, host: str, key: str, value: float,
               validity: pd.DataFrame | None = None) -> str:
    """A QD1 mean-latency headline's trust with 'other runs with one I/O in flight measured 1.25-2.26× lower means:
    92.7-168 µs (fio-pts-dirth: the reads of 8 KiB, 65 % reads; ...), and its own median completion is 70.1 µs: its
    mean rests on its tail' where another experiment's run of one job at depth 1 in the same direction measured a
    mean below value by more than the 10 % assumed for single fresh runs (ninth read S12-1cpu9 3: 209 µs beside
    93-173 µs elsewhere), then '; others 1.14× higher: ...' for those above it by as much (S18-bare 3: the less
    alone read one-sided); else unchanged (only more: other blocks and mixes are slower, as expected). Runs of an
    experiment whose preconditioning failed pts_steady_state (``validity``) are no comparison and are named as left
    out (S21-bare 5: CBW's T1Q1, 'no result stated' on page 6, was page 2's comparison). A QD1 run slower than a
    deeper point of its own sweep (:func:`deeper_faster`) is 'out of line: repeat before quoting (...)', a trust
    word of its own (S21-loop 3: it read 'with caveats' like any other row). µs."""
    need = {"host", "experiment", "direction", "iodepth", "numjobs", "lat_mean_us"}
    if key not in QD1_KEYS or points is None or points.empty or not need <= set(points.columns) or \
            trust.startswith("not valid"):
        return trust
    deeper = deeper_faster(points, host, "rand" + QD1_KEYS[key], value)
    trust = trust if deeper is None else out_of_line(trust, deeper_words(deeper))  # S19-loop 3, S21-loop 3
    p = points[(points["host"].astype(str) == host) & (points["direction"] == QD1_KEYS[key])
               & (points["iodepth"] == 1) & (points["numjobs"] == 1) & (points["experiment"] != "fio-queue-depth")]
    unsteady = p["experiment"].astype(str).isin(unsteady_experiments(validity, host))
    lat = pd.to_numeric(p["lat_mean_us"], errors="coerce")
    low, high = lat < value / ASSUMED_RATIO, lat > value * ASSUMED_RATIO
    less, more, gone = p[low & ~unsteady], p[high & ~unsteady], p[(low | high) & unsteady]
    if less.empty:
        return trust
    own = points[(points["host"].astype(str) == host) & (points["direction"] == QD1_KEYS[key])
                 & (points["iodepth"] == 1) & (points["numjobs"] == 1) & (points["experiment"] == "fio-queue-depth")]
    median = pd.to_numeric(own.get("clat_p50_us"), errors="coerce").dropna() if len(own) else pd.Series([])
    tail = (f", and its own median completion is {fmt_number(median.iloc[0])} µs: its mean rests on its tail"
            if len(median) and float(median.iloc[0]) < value / 2 else "")
    said = f"other runs with one I/O in flight measured {_lat_range(less, value)}{tail}"
    if not more.empty:  # S18-bare 3: the less alone read one-sided beside CBW's T1Q1 that measured more
        said += f"; others {_lat_range(more, value)}"
    if not gone.empty:  # S21-bare 5
        said += f"; {', '.join(dict.fromkeys(gone['experiment'].astype(str)))} left out: its preconditioning failed " \
                "pts_steady_state"
    return caveat_last(trust, said)


#: The trust word of a value its own sweep contradicts (S21-loop 3).
OUT_OF_LINE = "out of line: repeat before quoting"


def out_of_line(trust: str, said: str) -> str:
    """'out of line: repeat before quoting (said; the checks' caveats)' from a 'sound ...' or 'with caveats (...)'
    trust word ('not valid' stays): a value its own sweep contradicts reads apart from the rows that are merely
    caveated."""
    if trust.startswith("not valid"):
        return trust
    rest = trust.removeprefix("with caveats (")[:-1] if trust.startswith("with caveats (") else ""
    return f"{OUT_OF_LINE} ({said}{'; ' + rest if rest else ''})"


def unsteady_experiments(validity: pd.DataFrame | None, host: str) -> set[str]:
    """The host's PTS experiments whose preconditioning failed pts_steady_state (subject '<TEST> preconditioning':
    fio-pts-cbw, fio-pts-dirth, fio-pts-hir): their points were measured while the drive's state still moved."""
    if validity is None or validity.empty or not {"host", "check", "subject", "status"} <= set(validity.columns):
        return set()
    rows = validity[(validity["host"].astype(str) == host) & (validity["check"] == "pts_steady_state")
                    & (validity["status"] == "fail")]
    tests = rows["subject"].astype(str).str.removesuffix(" preconditioning").str.lower()
    return {f"fio-pts-{t}" for t in tests}


def deeper_faster(points: pd.DataFrame | None, host: str, rw: str, value: float) -> pd.Series | None:
    """The queue-depth sweep's one-job point of ``rw`` (4 KiB) with more than one I/O in flight and the lowest mean
    latency, where that is below ``value`` (the QD1 point's mean, µs) by more than the 10 % assumed for single runs;
    None otherwise (nineteenth read S19-loop 3: QD1's 58.2 µs stood as the headline and as '1.0× the latency' of the
    sweep's most while QD4 took 44.9 µs: queueing adds latency, so a lower mean deeper says the QD1 run is out of
    line, not that the device answers one I/O slower than four)."""
    need = {"host", "experiment", "rw", "bs_bytes", "iodepth", "numjobs", "lat_mean_us"}
    if points is None or points.empty or not need <= set(points.columns) or not value:
        return None
    p = points[(points["host"].astype(str) == host) & (points["experiment"] == "fio-queue-depth")
               & (points["rw"] == rw) & (points["bs_bytes"] == 4096) & (points["numjobs"] == 1)
               & (points["iodepth"] > 1)]
    lat = pd.to_numeric(p["lat_mean_us"], errors="coerce")
    low = p[lat < value / ASSUMED_RATIO]
    return None if low.empty else low.loc[pd.to_numeric(low["lat_mean_us"]).idxmin()]


def deeper_words(row: pd.Series) -> str:
    """'the same sweep's QD4x1 measured a lower mean, 44.9 µs: this QD1 run is out of line' (:func:`deeper_faster`)."""
    return (f"the same sweep's QD{int(row['iodepth'])}x1 measured a lower mean, {fmt_number(row['lat_mean_us'])} µs: "
            "this QD1 run is out of line")


def _lat_range(rows: pd.DataFrame, value: float) -> str:
    """'1.25-2.26× lower means: 92.7-168 µs (fio-pts-cbw: the reads of a mix of block sizes, 40 % reads; fio-pts-dirth:
    the reads of 8 KiB, 65 % reads)' or '1.14× higher means: ...': the rows' lat_mean_us beside ``value`` (µs) as
    ratios (S21-loop 3: 'over 10 % less' understated 2-5×) and what each experiment's runs were (S19-bare 9)."""
    lo, hi = (float(pd.to_numeric(rows["lat_mean_us"]).agg(f)) for f in ("min", "max"))
    lower = hi < value
    r1, r2 = sorted((value / lo, value / hi) if lower else (lo / value, hi / value))
    ratio = f"{r1:.2f}×" if f"{r1:.2f}" == f"{r2:.2f}" else f"{r1:.2f}-{r2:.2f}×"
    where = "; ".join(f"{exp}: {_job_words(g)}" for exp, g in rows.groupby(rows["experiment"].astype(str), sort=False))
    return (f"{ratio} {'lower' if lower else 'higher'} means: {fmt_number(lo)}{'' if lo == hi else f'-{fmt_number(hi)}'}"
            f" µs ({where})")


def _job_words(rows: pd.DataFrame) -> str:
    """'the writes of 8 KiB, 65 % reads' (one experiment's rows at one I/O in flight: their direction, block size or
    'a mix of block sizes', and read share where they mix reads and writes)."""
    r = rows.iloc[0]
    bs = "a mix of block sizes" if pd.isna(pd.to_numeric(r.get("bs_bytes"), errors="coerce")) else size_text(
        int(r["bs_bytes"]))
    mix = pd.to_numeric(r.get("rwmixread"), errors="coerce")
    share = f", {mix:g} % reads" if str(r.get("rw")) in ("randrw", "rw", "readwrite") and pd.notna(mix) else ""
    return f"the {r['direction']}s of {bs}{share}"


def usable_cpus(dataset) -> dict[str, float]:
    """{host: the CPUs its run could use} (memstor.analysis.dataset.Dataset.usable_cpus)."""
    return dataset.usable_cpus()


def on_cpus(detail: str, cpus: float | None) -> str:
    """detail + ', 4 jobs on 1 usable CPU' where its QDdxj point ran more jobs than the run's usable CPUs (fourth
    read R-1cpu M8: a 1-CPU run's best IOPS is the submission side's as much as the device's); a memory figure's
    '2 load threads' + ' on 2 usable CPUs: every CPU loaded' where its load threads are as many as the CPUs or
    more (S9-bare M-1: the peak bandwidth 29,041 MB/s, its section not judged by the memory gate)."""
    jobs = re.search(r"QD\d+x(\d+)", detail)
    threads = re.search(r"(\d+) load threads?", detail)  # S9-bare M-1: 2 load threads on a 2-vCPU guest, unsaid
    if threads and cpus and int(threads.group(1)) >= cpus:
        return f"{detail} on {cpus:g} usable CPU{'s' if cpus != 1 else ''}: every CPU loaded"
    if not jobs or not cpus or int(jobs.group(1)) <= cpus:
        return detail
    return f"{detail}, {jobs.group(1)} jobs on {cpus:g} usable CPU{'s' if cpus != 1 else ''}"


def hir_window_caveat(trust: str, validity: pd.DataFrame | None, host: str, value: float,
                      hir: pd.DataFrame | None = None) -> str:
    """The steady-state headline's trust with 'fio-pts-hir's preconditioning (its 4 KiB random writes) met the PTS
    window rule at 93,202 IOPS, 1.24× this' where HIR's preconditioning passed pts_steady_state at a mean
    beyond the 10 % assumed for single runs from ``value`` (IOPS; S19-bare 8: 75,096 'after preconditioning, steady
    state not shown' beside HIR's window at 93,202, said nowhere); else unchanged. The window's mean is ``hir``'s
    baseline_iops (memstor.analysis.pts_recovery.hir_table: the mean of the steady-state window's rounds)."""
    if validity is None or validity.empty or hir is None or hir.empty or trust.startswith("not valid"):
        return trust
    rows = validity[(validity["host"].astype(str) == host) & (validity["check"] == "pts_steady_state")
                    & (validity["subject"] == "HIR preconditioning") & (validity["status"] == "pass")]
    base = pd.to_numeric(hir.loc[hir["host"].astype(str) == host, "baseline_iops"], errors="coerce").dropna()
    mean = float(base.iloc[0]) if len(rows) and len(base) else None
    if not mean or not value or max(mean / value, value / mean) <= ASSUMED_RATIO:
        return trust
    return caveat_last(trust, f"fio-pts-hir's preconditioning (its 4 KiB random writes) met the PTS window rule at "
                              f"{fmt_number(mean)} IOPS, {mean / value:.2f}× this")
