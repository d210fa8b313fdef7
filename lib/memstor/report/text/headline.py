"""Report text, headline: the hosts' headline numbers side by side, the precision-target sentence and the
page-walk sentence of a memory device (pure: DataFrame in, DataFrame/markdown out)."""

from __future__ import annotations

import pandas as pd

from memstor.analysis.synthesis import HEADLINE_METRICS
from memstor.core.fmt import fmt_ci
from memstor.core.schema import missing, truthy
from memstor.report.memory_text import page_walk_text


def headline_table(long: pd.DataFrame) -> pd.DataFrame:
    """Hosts side by side: one row per metric ('metric (unit)'), one column per host, cells as text
    'value ± 95 % CI half-width (95 % CI: method; configuration, n)' — method ``repetitions`` (between runs)
    or ``batch-means`` (the single run's own interval); '–' where not measured."""
    hosts = list(dict.fromkeys(long["host"]))
    out = []
    for key, label, unit in HEADLINE_METRICS:
        row = {"metric": f"{label} ({unit})"}
        for h in hosts:
            r = long[(long["host"] == h) & (long["key"] == key)]
            v = r["value"].iloc[0] if not r.empty else None
            d = r["detail"].iloc[0] if not r.empty else ""
            lo = r["value_ci_low"].iloc[0] if not r.empty and "value_ci_low" in r else None
            hi = r["value_ci_high"].iloc[0] if not r.empty and "value_ci_high" in r else None
            how = r["ci_method"].iloc[0] if not r.empty and "ci_method" in r else ""
            shown = fmt_ci(v, lo, hi) if v is not None and not missing(v) else "–"
            if how and "±" in shown:
                d = f"95 % CI: {how}" + (f"; {d}" if d else "")
            row[h] = shown if shown == "–" else shown + (f" ({d})" if d else "")
        out.append(row)
    return pd.DataFrame(out)


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
