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

from memstor.core.fmt import fmt_number, md_escape
from memstor.core.units import size_text

#: Share of the best MB/s at which the bandwidth is said to level off.
LEVEL_OFF = 0.9
#: A mix within this share of its parts' prediction costs what its parts cost.
MIX_TOLERANCE = 0.10
_WHAT = {"randread": "Random reads", "randwrite": "Random writes", "read": "Sequential reads",
         "write": "Sequential writes"}


def _rows(points: pd.DataFrame, host: str, experiment: str) -> pd.DataFrame:
    if points is None or points.empty or not {"experiment", "rw", "bs_bytes"} <= set(points.columns):
        return pd.DataFrame(columns=["rw", "bs_bytes", "direction", "iops", "bw_MBps"])
    sel = points[(points["host"].astype(str) == host) & (points["experiment"] == experiment)]
    return sel[sel["iops"].notna() & sel["bw_MBps"].notna()]


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
        level_text = (f"first reaches {100 * LEVEL_OFF:.0f} % of its best ({fmt_number(g['bw_MBps'].max())} MB/s) at "
                      f"{size_text(int(level['bs_bytes']))}: below it the per-I/O cost dominates, above it the transfer"
                      if level["bs_bytes"] < large["bs_bytes"] else
                      f"still grows at the largest block measured ({size_text(int(large['bs_bytes']))}): "
                      "a larger block would still move more bytes per second")
        out.append(
            f"**{_WHAT[rw]}** ({qd}): {fmt_number(small['iops'])} IOPS ({fmt_number(small['bw_MBps'])} MB/s) at "
            f"{size_text(int(small['bs_bytes']))}, {fmt_number(large['iops'])} IOPS ({fmt_number(large['bw_MBps'])} "
            f"MB/s) at {size_text(int(large['bs_bytes']))}: larger blocks trade operations for bytes. The bandwidth "
            f"{level_text}.")
    return out


def _mix_sentence(g: pd.DataFrame, bs: int) -> str | None:
    """The mixes of one block size against their parts' prediction (total rows, rwmixread in %)."""
    by = g.set_index("rwmixread")["iops"]
    if 100.0 not in by.index or 0.0 not in by.index or len(by) < 3:
        return None
    x_r, x_w = float(by[100.0]), float(by[0.0])
    parts = []
    for share in sorted((s for s in by.index if 0 < s < 100), reverse=True):
        f = share / 100
        predicted = 1 / (f / x_r + (1 - f) / x_w)
        diff = float(by[share]) / predicted - 1
        parts.append(f"{share:.0f} % reads {fmt_number(by[share])} IOPS against {fmt_number(predicted)} predicted "
                     f"({100 * diff:+.1f} %)")
    diffs = [float(by[s]) / (1 / ((s / 100) / x_r + (1 - s / 100) / x_w)) - 1 for s in by.index if 0 < s < 100]
    worst = max(diffs, key=abs)
    rule = f"±{100 * MIX_TOLERANCE:.0f} % of the weighted harmonic mean of the read-only and write-only IOPS"
    verdict = (f"the mixes cost what their reads and writes cost apart (every mix within {rule})"
               if abs(worst) <= MIX_TOLERANCE else
               f"the mix does not cost what its parts cost: reads and writes interfere (or overlap) here (the "
               f"furthest, {100 * worst:+.1f} %, is outside {rule})")
    return (f"**{size_text(bs)} mixes**: {fmt_number(x_r)} IOPS reads only, {fmt_number(x_w)} writes only; "
            + "; ".join(parts) + f" — {verdict}.")


def rw_mix_sentences(points: pd.DataFrame, host: str) -> list[str]:
    """One sentence per block size of the read/write-mix sweep (markdown); total IOPS of each mix against the
    prediction from its pure-read and pure-write points."""
    rows = _rows(points, host, "fio-rw-ratio")
    if rows.empty or "direction" not in rows.columns:
        return []
    total = rows[rows["direction"] == "total"]
    out = []
    for bs, g in total.groupby("bs_bytes", sort=True):
        s = _mix_sentence(g, int(bs))
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
