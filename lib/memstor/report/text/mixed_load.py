"""Words and tables of the mixed-load map (issue 41): the cells for people, the read capacity at each write
rate and target, and one sentence per target and write rate (memstor.analysis.mixed_load.sentence).

Units: MB/s decimal (10⁶ B/s), IOPS, µs. A cell whose loop did not hold shows its reason, never a latency
presented as the offered load's.
"""

from __future__ import annotations

import math
import re

import pandas as pd

from memstor.analysis import mixed_load
from memstor.core.fmt import fmt_number
from memstor.core.schema import missing, truthy

#: The synthesis's words before the mixed-load map (printed only when the data holds one).
INTRO = ("Reads and writes offered together by ioarrive (`mixed-load-map`): each cell one run with writes at a "
         "share of the write X_max and reads at a share of the read X_max, both Poisson and independent, every "
         "latency timed from the intended arrival. For each write rate, the read capacity is the highest read IOPS "
         "whose p99 meets each target, between the last held cell meeting it and the first missing it. Only cells "
         "whose loop held count, and only at a write rate where at least 80 % of the cells held (fewer: the held ones are "
         "chance on that machine, drawn hollow and not read); the others are drawn as gray crosses.")
CELL_DISPLAY_COLUMNS = ["device", "writes offered (MB/s)", "reads offered (IOPS)", "direction",
                        "achieved (% of offered)", "p50 (µs)", "p99 (µs)", "p99.9 (µs)", "p99 lag (µs)", "held",
                        "why measured"]
CAPACITY_DISPLAY_COLUMNS = ["device", "writes offered (MB/s)", "read p99 target (µs)", "read capacity (IOPS)",
                            "bracket (IOPS)", "held cells"]


def _num(v, spec: str = ",.0f") -> str:
    if missing(v):
        return "–"
    f = float(v)
    return "–" if not math.isfinite(f) else format(f, spec)


def cells_display(cells: pd.DataFrame) -> pd.DataFrame:
    """One row per cell x direction: offered rates, achieved share, response percentiles (µs, from the
    intended arrival; '–' where the loop did not hold), p99 lag, held (yes, or why not) and why the cell was
    measured (the adaptive grid's note)."""
    if cells is None or cells.empty:
        return pd.DataFrame(columns=CELL_DISPLAY_COLUMNS)
    c = cells.sort_values(["host", "write_offered_MBps", "read_offered_iops", "direction"]).reset_index(drop=True)
    held = [truthy(v) for v in c["open_loop"]]

    def lat(col):
        return [_num(v) if h else "–" for v, h in zip(c[col], held)]

    return pd.DataFrame({
        "device": c["host"].astype(str), "writes offered (MB/s)": [_num(v, ",.1f") for v in c["write_offered_MBps"]],
        "reads offered (IOPS)": [_num(v) for v in c["read_offered_iops"]], "direction": c["direction"],
        "achieved (% of offered)": [_num(v, ".1f") for v in c["achieved_pct"]],
        "p50 (µs)": lat("resp_p50_us"), "p99 (µs)": lat("resp_p99_us"), "p99.9 (µs)": lat("resp_p99_9_us"),
        "p99 lag (µs)": [_num(v, ",.1f") for v in c.get("lag_p99_us", pd.Series([None] * len(c)))],
        "held": ["yes" if h else f"no: {first_reason(n)}" for h, n in zip(held, c.get("held_note", [""] * len(c)))],
        "why measured": c.get("grid_note", pd.Series([""] * len(c))).fillna("").astype(str),
    })[CELL_DISPLAY_COLUMNS]


def capacity(cells: pd.DataFrame, targets_us) -> pd.DataFrame:
    """The capacity curve of every device (memstor.analysis.mixed_load.capacity_curve by host)."""
    if cells is None or cells.empty:
        return pd.DataFrame(columns=["host", *mixed_load.CAPACITY_COLUMNS])
    return mixed_load.capacity_curve(cells, list(targets_us), by=("host",))


def _bracket(low, high) -> str:
    """The capacity's bracket in words: 'a to b', 'above a', 'below b' or '–' (IOPS)."""
    lo, hi = _num(low), _num(high)
    if lo != "–" and hi != "–":
        return f"{lo} to {hi}"
    return f"above {lo}" if lo != "–" else f"below {hi}" if hi != "–" else "–"


def capacity_display(curve: pd.DataFrame) -> pd.DataFrame:
    """The capacity table for people: '≥ N' / '< N' where the capacity lies beyond the grid, the bracket of the
    neighbouring cells, and the held cells the rule used."""
    if curve is None or curve.empty:
        return pd.DataFrame(columns=CAPACITY_DISPLAY_COLUMNS)
    rows = []
    for _, r in curve.iterrows():
        cens = "" if missing(r["censored"]) else str(r["censored"])
        if cens == "above_grid":
            cap = f"≥ {_num(r['ci_low_iops'])} (every held cell met it)"
        elif cens == "below_grid":
            cap = f"< {_num(r['ci_high_iops'])} (the lowest held cell missed it)"
        else:
            cap = _num(r["read_capacity_iops"])
        rows.append({"device": str(r.get("host", "")), "writes offered (MB/s)": _num(r["write_offered_MBps"], ",.1f"),
                     "read p99 target (µs)": _num(r["target_us"], "g"), "read capacity (IOPS)": cap,
                     "bracket (IOPS)": _bracket(r["ci_low_iops"], r["ci_high_iops"]),
                     "held cells": "0" if missing(r["cells_used"]) else str(int(r["cells_used"]))})
    return pd.DataFrame(rows, columns=CAPACITY_DISPLAY_COLUMNS)


def capacity_sentences(curve: pd.DataFrame) -> list[str]:
    """One sentence per device, target and write rate (mixed_load.sentence), capitalised."""
    out = []
    for _, r in (curve if curve is not None else pd.DataFrame()).iterrows():
        s = mixed_load.sentence(r, subject=str(r["host"]) if "host" in r and not missing(r["host"]) else "this drive")
        out.append(s[0].upper() + s[1:] + ".")
    return out


def no_capacity(curve: pd.DataFrame | None) -> str:
    """'No cell held at any write rate (0.0, 53.8 MB/s offered): no read capacity is stated for read p99 ≤ 1,000 µs.'
    where no row of the capacity curve used a held cell (the table would hold dashes only and a sentence per row:
    tenth reads, the quick PDF at 11 pages); '' where some did or there is no curve."""
    if curve is None or curve.empty or pd.to_numeric(curve["cells_used"], errors="coerce").fillna(0).gt(0).any():
        return ""
    rates = ", ".join(dict.fromkeys(_num(v, ",.1f") for v in sorted(curve["write_offered_MBps"].dropna())))
    targets = ", ".join(dict.fromkeys(_num(v, ",.0f") for v in curve["target_us"].dropna()))
    return (f"No cell held at any write rate ({rates} MB/s offered): no read capacity is stated for read p99 ≤ "
            f"{targets} µs.")


def first_reason(note) -> str:
    """The first whole reason of a cell's held_note (ioarrive's reasons are '; '-joined clauses: never cut
    inside one, R-bare C-17 '(mean 192.6 per w (…)'), µs written as such (ioarrive writes 'us'), its lag verdict
    'generator-bound' as the fact it is, 'submitted late'."""
    first = str(note).split("; ")[0].strip().rstrip(".")
    first = re.sub(r"\b\d+(?:\.\d+)?e[+-]\d+\b", lambda m: fmt_number(float(m.group())), first)  # 7.095e+04
    first = re.sub(r"(\d) us\b", "\\1 µs", first)
    # S16-1cpu 3: ioarrive's 'generator-bound' (its p99 lag over the bound) read as a diagnosis the columns do not make
    return first.removesuffix(": generator-bound") + (": submitted late" if first.endswith(": generator-bound") else "")


def _failed_checks(g: pd.DataFrame) -> list[str]:
    """The names of ioarrive's self-checks that failed in one cell (its directions' ``generator_checks``, the
    '/source' dropped), in their first order, then load_generator_cpu where its note says that check failed for the
    map (S20-cpu1 1: '0 of 6 cells held; of the 6 that did not, ...' counted 5, the sixth held by ioarrive's own
    checks and failed by memstor's); [] where none is named."""
    names: list[str] = []
    for v in g.get("generator_checks", pd.Series(dtype=object)).dropna().astype(str):
        for c in v.split(";"):
            c = c.split("/")[0].strip()
            if c and c != "ok" and c not in names:
                names.append(c)
    if g.get("held_note", pd.Series(dtype=object)).astype(str).str.startswith("load_generator_cpu failed").any():
        names.append("load_generator_cpu")
    return names


def held_summary(cells: pd.DataFrame) -> str:
    """'N of M cells held' and, of those that did not, how many failed each of ioarrive's checks (counted per
    cell), with one cell's first reason as an example, named by its cell (one line): never one cell's numbers as
    those of 'most'."""
    if cells is None or cells.empty:
        return "no cells"
    key = ["host", "point"] if "point" in cells else ["host", "cell"]
    per = cells.groupby(key, sort=False)
    held = per["open_loop"].apply(lambda s: all(truthy(v) for v in s))
    text = f"{int(held.sum())} of {len(held)} cells held"
    if held.all():
        return text
    bad = [g for k, g in per if not held[k]]
    counts: dict[str, int] = {}
    for g in bad:
        for c in _failed_checks(g):
            counts[c] = counts.get(c, 0) + 1
    if counts:
        ranked = sorted(counts.items(), key=lambda kv: -kv[1])
        text += (f"; of the {len(bad)} that did not, their checks failed: "
                 + ", ".join(f"{c} at {k}" + (" cells" if i == 0 else "") for i, (c, k) in enumerate(ranked)))
    example = next(((g, r) for g in bad for _, r in g.iterrows()
                    if str(r.get("held_note") or "") not in ("", "nan", "not measured")), None)
    if example is not None:
        g, r = example
        where = str(g["cell"].iloc[0]) if "cell" in g else str(g["point"].iloc[0])
        # S16-bare 2, S16-loop 3: the failed checks of that direction, not the note's clauses (one explains the lag)
        more = len(_failed_checks(r.to_frame().T)) - 1
        text += (f"; e.g. cell {where}: {first_reason(str(r['held_note']))}"
                 + (f" (and {more} more reason{'s' if more > 1 else ''})" if more > 0 else ""))
    return text
