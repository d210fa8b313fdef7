"""Report text, the two experiments a course discusses first: block size (fio-block-size) and the read/write
mix (fio-rw-ratio), one short interpretation each from the fio summary (memstor.analysis.points.fio_summary).

Block size: operations against bytes — IOPS fall and MB/s rise with the block, until the bandwidth levels off
(the block size where it first reaches 90 % of its best). Read/write mix: the mix's total IOPS against what its
parts predict if each read and each write kept its own cost (the weighted harmonic mean of the read-only and
write-only IOPS, 1 / (f / X_read + (1 − f) / X_write)); a mix well below it interferes (writes slow reads
down, garbage collection), one above it overlaps the two.

Pure: DataFrames in, markdown out.
"""

from __future__ import annotations

import pandas as pd

from memstor.analysis.spread import (
    FRESH,
    Spread,
    bracket_words,
    disagreeing,
    pure_iops,
    run_spread,
    sides_with,
    sweep_beaten,
)
from memstor.core.fmt import fmt_number, md_escape
from memstor.core.units import size_text
from memstor.report.text.headline_trust import job_split, seq_write_said

#: Share of the best MB/s at which the bandwidth is said to level off.
LEVEL_OFF = 0.9
#: A mix within this share of its parts' prediction costs what its parts cost.
MIX_TOLERANCE = 0.10
_PURE = {100.0: ("randread", "read"), 0.0: ("randwrite", "write")}
_WHAT = {"randread": "Random reads", "randwrite": "Random writes", "read": "Sequential reads",
         "write": "Sequential writes"}


def _rows(points: pd.DataFrame, host: str, experiment: str) -> pd.DataFrame:
    if points is None or points.empty or not {"experiment", "rw", "bs_bytes"} <= set(points.columns):
        return pd.DataFrame(columns=["rw", "bs_bytes", "direction", "iops", "bw_MBps"])
    sel = points[(points["host"].astype(str) == host) & (points["experiment"] == experiment)]
    return sel[sel["iops"].notna() & sel["bw_MBps"].notna()]


def same_config(points: pd.DataFrame, host: str, rw: str, bs: int, iodepth, numjobs) -> pd.Series:
    """IOPS of one configuration (rw, block size in bytes, iodepth x numjobs) in every FRESH experiment that measured it,
    indexed by experiment (the first row of each)."""
    p = pure_iops(points, host)
    p = p[p["experiment"].isin(FRESH)]
    g = p[(p["rw"] == rw) & (p["bs_bytes"] == bs) & (p["iodepth"] == iodepth) & (p["numjobs"] == numjobs)]
    return g.drop_duplicates("experiment").set_index("experiment")["iops"].astype(float)


def block_size_sentences(points: pd.DataFrame, host: str) -> list[str]:
    """One sentence per workload of the block-size sweep with at least two block sizes (markdown)."""
    out = []
    rows = _rows(points, host, "fio-block-size")
    for rw in ("randread", "randwrite"):
        g = rows[(rows["rw"] == rw)].sort_values("bs_bytes")
        if g["bs_bytes"].nunique() < 2:
            continue
        small, large = g.iloc[0], g.iloc[-1]
        level = g[g["bw_MBps"] >= LEVEL_OFF * g["bw_MBps"].max()].iloc[0]
        qd = f"QD{int(small['iodepth'])}×{int(small['numjobs'])}"
        level_text = (_level_text(g, level, points, host) if level["bs_bytes"] < large["bs_bytes"]
                      else _last_step(g, points, host))
        out.append(
            f"**{_WHAT[rw]}** ({qd}): {fmt_number(small['iops'])} IOPS ({fmt_number(small['bw_MBps'])} MB/s) at "
            f"{size_text(int(small['bs_bytes']))}{disagreed(points, host, small)}, {fmt_number(large['iops'])} IOPS ({fmt_number(large['bw_MBps'])} "
            f"MB/s) at {size_text(int(large['bs_bytes']))}: {_trade(small, large)}{_counters(g)}. "
            f"The bandwidth {level_text}.")
    return out


def _trade(small: pd.Series, large: pd.Series) -> str:
    """'larger blocks trade operations for bytes' where the largest block's IOPS are below the smallest's; else what
    the two numbers show (S12-loop 6: said beside 2,949 IOPS at 4 KiB and 3,710 at 1 MiB)."""
    if float(large["iops"]) < float(small["iops"]):
        return "larger blocks trade operations for bytes"
    return ("the largest blocks completed as many operations or more: the smallest block's figure is not the device's "
            "operation rate (an outlier, or a limit other than the device)")


def disagreed(points: pd.DataFrame, host: str, r: pd.Series) -> str:
    """' (here; 76,512 IOPS in fio-rw-ratio, 1.62× apart: config_agreement failed, neither alone is this
    configuration's value)' where another FRESH experiment measured point r's configuration (rw, block size, depth x
    jobs) beyond memstor.analysis.spread.DISAGREE_RATIO from it, else '' (fourth read R-1cpu M3: '47,150 IOPS' was
    given alone)."""
    apart = disagreeing(points, host, r)
    if apart.empty:
        return ""
    ratio = max(max(x, 1 / x) for x in apart["iops"] / float(r["iops"]))
    other = "; ".join(f"{fmt_number(o.iops)} IOPS in {o.experiment}" for o in apart.itertuples())
    words, settled = _sided(points, host, r, apart)  # settled: the check warns (S13-1cpu 1: 'failed' beside warn)
    return f" (here; {other}, {ratio:.2f}× apart: config_agreement {'warned' if settled else 'failed'}, {words})"


def _sided(points: pd.DataFrame, host: str, r: pd.Series, apart: pd.DataFrame) -> tuple[str, bool]:
    """(words, settled): which of two disagreeing measurements the queue-depth sweep's neighbouring depths side with
    (spread.sides_with: S12-1cpu 5, S12-bare9 2), or 'neither alone is this configuration's value' where the sweep
    has no bracket or does not settle them (config_agreement warns where it settles, fails where not)."""
    values = [("here", float(r["iops"]))] + [(str(o.experiment), float(o.iops)) for o in apart.itertuples()]
    bracket, side = sides_with(points, host, r, [v for _, v in values])
    if bracket.empty:
        return "neither alone is this configuration's value", False
    if side is None:
        return f"{bracket_words(bracket)} settle neither: neither alone is this configuration's value", False
    won = next(w for w, v in values if v == side)
    out = [f"{fmt_number(v)} ({w})" for w, v in values if v != side]
    return (f"{bracket_words(bracket)} side with {fmt_number(side)} ({won}): {', '.join(out)} is the one out of line "
            "(a run in another state of the machine or the file, not shown which)"), True


#: Largest gap between fio's bandwidth counter and IOPS x block size left unsaid (fraction).
COUNTER_GAP = 0.005


def _counters(g: pd.DataFrame) -> str:
    """' (MB/s is fio's bandwidth counter, kept apart from its IOPS: at 1 MiB it reads +1.1 % against IOPS x block
    size)' where the two disagree by more than COUNTER_GAP at the largest block (S6-bare C-2: 1,487 IOPS x 1 MiB is
    1,559.6 MB/s, the row said 1,576), else ''. MB/s = 10^6 B/s."""
    r = g.iloc[-1]
    product = float(r["iops"]) * float(r["bs_bytes"]) / 1e6
    gap = float(r["bw_MBps"]) / product - 1 if product > 0 else 0.0
    return ("" if abs(gap) <= COUNTER_GAP else f" (MB/s is fio's bandwidth counter, kept apart from its IOPS: at "
            f"{size_text(int(r['bs_bytes']))} it reads {100 * gap:+.1f} % against IOPS × block size, "
            f"{fmt_number(product)} MB/s)")


def _level_text(g: pd.DataFrame, level: pd.Series, points: pd.DataFrame, host: str) -> str:
    """Where the bandwidth first reaches LEVEL_OFF of its best, as the sizes measured place it (S7-bare C-8: with
    4 KiB, 64 KiB and 1 MiB measured, 'at 64 KiB' is 'between 4 KiB and 64 KiB'), and a fall from the best to the
    largest block named against the run-to-run spread (1,307 -> 1,159 MB/s, -11.3 %, was left unsaid). MB/s."""
    best, large = g.loc[g["bw_MBps"].idxmax()], g.iloc[-1]
    before = g[g["bs_bytes"] < level["bs_bytes"]]
    where = (f"between {size_text(int(before['bs_bytes'].iloc[-1]))} and {size_text(int(level['bs_bytes']))} (no "
             "size measured between)" if len(before) else f"at {size_text(int(level['bs_bytes']))}")
    text = (f"first reaches {100 * LEVEL_OFF:.0f} % of its best ({fmt_number(best['bw_MBps'])} MB/s at "
            f"{size_text(int(best['bs_bytes']))}) {where}: there the transfer, not the per-I/O cost, starts to dominate")
    fall = float(best["bw_MBps"] / large["bw_MBps"])
    if large["bs_bytes"] > best["bs_bytes"] and fall > 1:
        spread = run_spread(points, host, str(g["rw"].iloc[0]))
        beyond = fall > spread.limit and not spread.within_disagreement(fall)
        within = spread.disagreement() if fall > spread.limit else spread.short()
        text += (f"; at {size_text(int(large['bs_bytes']))} it is {fmt_number(large['bw_MBps'])} MB/s "
                 f"({100 * (1 / fall - 1):+.1f} %, {'beyond' if beyond else 'within'} "
                 f"{spread.short() if beyond else within}{spread.beyond() if beyond else ''})")
    return text


def _last_step(g: pd.DataFrame, points: pd.DataFrame, host: str) -> str:
    """Where the best MB/s is at the largest block: whether its last step beats the run-to-run spread (spread.run_spread:
    measured, or the 10 % assumed and said so) — only then 'still grew up to the largest block measured' is a finding;
    what a larger block would do is not measured (third read R-1cpu M3, R-loop: no extrapolation beyond the sweep;
    S7-bare M-11: an assumed 1.10× was called the run-to-run spread)."""
    prev, large = g.iloc[-2], g.iloc[-1]
    step = float(large["bw_MBps"] / prev["bw_MBps"])
    spread = run_spread(points, host, str(g["rw"].iloc[0]))
    moved = (f"{fmt_number(prev['bw_MBps'])} → {fmt_number(large['bw_MBps'])} MB/s from "
             f"{size_text(int(prev['bs_bytes']))} to {size_text(int(large['bs_bytes']))}, {100 * (step - 1):+.1f} %")
    if step > spread.limit and spread.within_disagreement(step):
        return (f"is highest at the largest block measured, but its last step ({moved}) is within "
                f"{spread.disagreement()}: whether it still grows is not shown")
    if step > spread.limit:
        return (f"still grew up to the largest block measured ({moved}, more than {spread.short()}{spread.beyond()}); "
                "larger blocks were not measured")
    return (f"is highest at the largest block measured, but its last step ({moved}) is within {spread.words()}: "
            "whether it still grows is not shown")


def _predicted(share: float, x_r: float, x_w: float) -> float:
    """The weighted harmonic mean of the read-only and write-only IOPS at share % reads (IOPS)."""
    f = share / 100
    return 1 / (f / x_r + (1 - f) / x_w)


def _inputs(g: pd.DataFrame, points: pd.DataFrame, host: str, bs: int) -> tuple[list, list, list]:
    """(read-only IOPS values, write-only IOPS values, those left out): the mix sweep's own, then the same configuration's in other
    experiments (same_config) — each a measurement the prediction could rest on; the others left out where the
    queue-depth sweep sides with the mix sweep's own (spread.sides_with; tenth read S13-loop 1: the 4 KiB mixes were
    no finding over fio-block-size's 2,949 IOPS, which §2 names out of line against 184,245). Where it sides with
    another, the mix sweep's own part is out of line and so may its mixes be: all values stay (no finding)."""
    by = g.set_index("rwmixread")["iops"]
    first = g.iloc[0]
    qd, jobs = first.get("iodepth"), first.get("numjobs")
    out, left = [], []
    for share, (rw, _d) in sorted(_PURE.items(), reverse=True):
        other = same_config(points, host, rw, bs, qd, jobs) if not pd.isna(qd) else pd.Series(dtype=float)
        values = list(dict.fromkeys([float(by[share]), *other.tolist()]))
        if len(values) > 1:
            r = pd.Series({"rw": rw, "bs_bytes": bs, "iodepth": qd, "numjobs": jobs})
            _, side = sides_with(points, host, r, values)
            left += values[1:] if side == values[0] else []  # its own out of line: its mixes are suspect too
            values = values[:1] if side == values[0] else values
        out.append(values)
    return out[0], out[1], left


def _mix_sentence(g: pd.DataFrame, bs: int, points: pd.DataFrame | None = None, host: str = "") -> str | None:
    """The mixes of one block size against their parts' prediction (total rows, rwmixread in %). A verdict only
    where it holds for every measurement of the parts (the same configuration in another experiment gives another
    prediction), parts that agree within MIX_TOLERANCE, and a difference beyond the host's run-to-run spread
    (_mix_verdict)."""
    by = g.set_index("rwmixread")["iops"]
    if 100.0 not in by.index or 0.0 not in by.index or len(by) < 3:
        return None
    x_r, x_w = float(by[100.0]), float(by[0.0])
    reads, writes, left = _inputs(g, points, host, bs) if points is not None else ([x_r], [x_w], [])
    spread = max(max(reads) / min(reads), max(writes) / min(writes))
    shares = sorted((s for s in by.index if 0 < s < 100), reverse=True)
    parts = [f"{share:.0f} % reads {fmt_number(by[share])} IOPS against {fmt_number(_predicted(share, x_r, x_w))} "
             f"predicted ({100 * (float(by[share]) / _predicted(share, x_r, x_w) - 1):+.1f} %)" for share in shares]
    diffs = [float(by[s]) / _predicted(s, r, w) - 1 for s in shares for r in reads for w in writes]
    rule = f"±{100 * MIX_TOLERANCE:.0f} % of the weighted harmonic mean of the read-only and write-only IOPS"
    span = f"from {100 * min(diffs):+.1f} to {100 * max(diffs):+.1f} %" + (
        " with the parts other experiments measured too" if len(reads) * len(writes) > 1 else "")  # S19-bare 6
    if spread > 1 + MIX_TOLERANCE:
        verdict = (f"not a finding: the parts measured in two experiments differ by {spread:.2f}×, more than "
                   f"{rule}; with either value the difference runs {span}")
    else:
        verdict = _mix_verdict(diffs, run_spread(points, host), len(shares) > 1, rule, span)
    out = ", ".join(fmt_number(v) for v in left)
    verdict += f" ({out} IOPS elsewhere left out: out of line by the queue-depth sweep, §2)" if left else ""
    return (f"**{size_text(bs)} mixes**: {fmt_number(x_r)} IOPS reads only, {fmt_number(x_w)} writes only; "
            + "; ".join(parts) + f" — {verdict}.")


def _mix_verdict(diffs: list[float], spread: Spread, many: bool, rule: str, span: str) -> str:
    """The verdict on the mixes' differences from their parts' prediction (fractions): within MIX_TOLERANCE they cost
    what their parts cost; all beyond the run-to-run spread on one side (spread.Spread's limit, qualified where it is
    only assumed: S7-bare M-11) they interfere or overlap; else not shown (R-1cpu M8: a difference within the
    measured spread is not a finding)."""
    edge = spread.limit - 1
    if all(abs(d) <= MIX_TOLERANCE for d in diffs):
        return (f"{'the mixes cost what their' if many else 'the mix costs what its'} reads and writes cost apart "
                f"({'every mix' if many else 'the mix'} within {rule})")
    if all(d < -edge for d in diffs) or all(d > edge for d in diffs):
        # S19-bare 6: 'the furthest, -15.9 %' came from another experiment's parts, not the ones the sentence names
        lo, hi = min(diffs), max(diffs)
        runs = f"runs {span}" if round(1000 * lo) != round(1000 * hi) else f"is {100 * lo:+.1f} %"
        how = "interfere (the mix is slower)" if hi < 0 else "overlap (the mix is faster)"  # S20-bare 3: the sign
        if not spread.shown:  # S20-bare 3: beyond an assumed spread only, the lead says so, not a finding
            return (f"a difference between single runs only, not shown to be the device's: the difference {runs}, "
                    f"outside {rule} but beyond only the spread assumed for single fresh runs, not measured")
        return (f"the mix does not cost what its parts cost: reads and writes {how} here (the difference {runs}, "
                f"outside {rule} and beyond {spread.short()})")
    return f"not a finding: the difference runs {span}, not beyond {spread.words()}"


def rw_mix_sentences(points: pd.DataFrame, host: str) -> list[str]:
    """One sentence per block size of the read/write-mix sweep (markdown); total IOPS of each mix against the
    prediction from its pure-read and pure-write points."""
    rows = _rows(points, host, "fio-rw-ratio")
    if rows.empty or "direction" not in rows.columns:
        return []
    total = rows[rows["direction"] == "total"]
    out = []
    for bs, g in total.groupby("bs_bytes", sort=True):
        s = _mix_sentence(g, int(bs), points, host)
        if s:
            out.append(s)
    return out


def workload_paragraphs(points: pd.DataFrame, hosts: list[str]) -> tuple[str, str]:
    """(block-size text, read/write-mix text) for every host (markdown); each says when nothing was measured."""
    bs, mix = [], []
    for host in hosts:
        b, m = block_size_sentences(points, host), rw_mix_sentences(points, host)
        if b:
            bs.append(f"*{md_escape(host)}*. " + " ".join(b))
        if m:
            mix.append(f"*{md_escape(host)}*. " + " ".join(m))
    return ("\n\n".join(bs) or "No block-size sweep in this data (memstor run fio-block-size).",
            "\n\n".join(mix) or "No read/write-mix sweep in this data (memstor run fio-rw-ratio).")


def sweep_contradicted(points: pd.DataFrame, host: str, rw: str) -> str:
    """'; yet the same one-job job measured 121,409 IOPS at QD32 in fio-block-size (2.32× the sweep's most, 52,330
    IOPS), 102,782 IOPS at QD32 in fio-rw-ratio (1.96×), beyond the largest gap between two fresh runs of one job measured here, 1.32×: the
    sweep's most is not shown to be the target's' where another
    FRESH experiment measured the queue-depth sweep's own kind of point above the sweep's highest IOPS by more than
    the run-to-run spread (spread.sweep_beaten); '' otherwise (third read R-loop 2.1: the sweep plateaued at 52,330
    while the same job at QD32 measured 102,782-121,409 IOPS elsewhere)."""
    ratio, above, spread = sweep_beaten(points, host, rw)
    if ratio is None or above.empty:
        return ""
    top = fmt_number(above["sweep_top"].iloc[0])
    each = ", ".join(f"{fmt_number(r.iops)} IOPS at QD{int(r.iodepth)} in {r.experiment} ({r.times_sweep:.2f}×"
                     + (f" the sweep's most, {top} IOPS)" if i == 0 else ")")
                     for i, r in enumerate(above.itertuples()))  # S12-bare 8: one ratio after two read as the last's
    return (f"; yet the same one-job job measured {each}, beyond {spread.short()}: the sweep's most is not shown to "
            "be the target's")


def write_elsewhere(points: pd.DataFrame | None, host: str, read_MBps: float) -> str:
    """'; yet the same 1 MiB write at QD32x1 ran in fio-pts-xsr at 1,038-1,112 MB/s, below the read: the faster
    write is fio-block-size's short run' where another experiment measured the block-size sweep's sequential write
    (write, 1 MiB, QD32, one job) at or below `read_MBps` (MB/s); '' otherwise (third read R-1cpu M2: 'writes faster
    than reads' from a 2-s write at 2,368 MB/s while the same job ran 10 s in XSR at 1,038-1,112 MB/s)."""
    own, p = job_split(points, host)
    slow = p[pd.to_numeric(p["bw_MBps"], errors="coerce") <= read_MBps] if not p.empty else p
    if slow.empty:
        return ""
    said = seq_write_said(slow, own).replace("the same job ran", "the same 1 MiB write at QD32x1 ran", 1)
    return (f"; yet {said}, not above the read: the faster "
            "write is the block-size sweep's short run, not shown to last")
