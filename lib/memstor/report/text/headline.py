"""Report text, headline: the precision-target sentence and the page-walk sentence of a memory device (the
headline numbers themselves: memstor.report.text.first_page). Pure: DataFrame in, markdown out."""

from __future__ import annotations

import pandas as pd

from memstor.core.schema import truthy
from memstor.report.memory_text import page_walk_text


def precision_sentence(points: pd.DataFrame) -> str:
    """How many configurations with a precision target reached it, per device and experiment (markdown);
    "" when no point had a target (fixed runtimes). points: the fio summary (precision_pct,
    precision_reached)."""
    if "precision_reached" not in points or "precision_pct" not in points:
        return ""
    sel = points[points["precision_pct"].notna() & points["precision_reached"].notna()]
    if sel.empty:
        return ""
    parts = []
    for (host, exp, pct), g in sel.groupby(["host", "experiment", "precision_pct"], sort=True):
        reached = g["precision_reached"].map(truthy)
        parts.append(f"{host}, {exp}: {int(reached.sum())} of {len(g)} configurations reached ±{float(pct):g} % "
                     "for IOPS and mean latency")
    return ("**Precision targets.** Each point with a target ran until the 95 % intervals of its mean IOPS and "
            "mean latency were within the target, or for its longest time (`max_runtime_s`): "
            + "; ".join(parts) + ". `precision_reached` in `summary.csv` says which.")


def page_walk_sentence(mlc: pd.DataFrame, host: str) -> str:
    """The idle latency of one device with huge and with 4 KiB pages, and the page-walk cost (markdown)."""
    rows = mlc[(mlc["host"] == host) & mlc["ok"]]
    if not (rows["test"] == "idle_latency").any():
        return "no idle-latency measurement."
    return page_walk_text(rows)
