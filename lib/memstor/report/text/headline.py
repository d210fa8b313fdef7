"""Report text, headline: the precision-target sentence, the page-walk sentence of a memory device and the
table of every idle-latency and peak-bandwidth measurement (the headline numbers themselves:
memstor.report.text.first_page). Pure: DataFrame in, markdown or display table out."""

from __future__ import annotations

import pandas as pd

from memstor.core.fmt import fmt_interval
from memstor.core.schema import missing, truthy
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


def page_walk_sentence(mlc: pd.DataFrame, host: str, validity: pd.DataFrame | None = None) -> str:
    """The idle latency of one device with huge and with 4 KiB pages, and the page-walk cost (markdown); where
    host's memory_buffer_llc failed (:func:`dram_words`) no page-walk cost is stated (S8-bare B-1: '+51.5 ns
    (+28 %)' from the 256 MiB buffer page 1 withholds): the values are that buffer's, not DRAM's."""
    rows = mlc[(mlc["host"] == host) & mlc["ok"]]
    if not (rows["test"] == "idle_latency").any():
        return "no idle-latency measurement."
    if dram_words(validity, host):
        return ("no page-walk cost is stated from the idle latencies: memory_buffer_llc failed (their buffer is "
                "not shown to be DRAM's; §4.5's page-walk row is the working-set curves').")
    return page_walk_text(rows)


def dram_words(validity: pd.DataFrame | None, host: str) -> str:
    """'256 MiB buffer, within the 480 MiB last-level cache: not shown to be DRAM' where host's memory_buffer_llc
    check failed on the cache side (its consequence's first clause), else '' (memstor.analysis.validity.memory)."""
    if validity is None or validity.empty:
        return ""
    sel = validity[(validity["check"] == "memory_buffer_llc") & (validity["host"].astype(str) == str(host))
                   & (validity["status"] == "fail")]
    said = [str(c).split("; ")[0] for c in sel["consequence"] if "not shown to be DRAM" in str(c)]
    return said[0] if said else ""


def no_memory_figures_sentence(cache_levels: pd.DataFrame | None) -> str:
    """§4.3's line without idle-latency or bandwidth runs: what is missing, and where the working-set sweep is when
    it ran (R-1cpu M12: 'No memory measurement in this data' beside §4.5's)."""
    swept = cache_levels is not None and len(cache_levels) > 0
    return ("No idle-latency, loaded-latency or peak-bandwidth measurement in this data (`memstor run "
            "mlc-loaded-latency`)" + ("; the memory hierarchy's working-set sweep is in §4.5." if swept else "."))


def _used_as(role, host, validity: pd.DataFrame | None, gate="") -> str:
    """What page 1 makes of a row: one rule for every row of the host's buffer where memory_buffer_llc failed
    ('withheld: ...' on the headline's, 'not shown to be DRAM (memory_buffer_llc failed)' on the others: R-loop
    8.1, R-def 17: only the two headline rows were marked, 11,868 [11,804, 11,933] MB/s showed 'passed'); the
    headline's value whose run failed the memory gate 'withheld: its run failed the memory gate' (S9-bare C-7:
    the withheld 213 ns read 'the headline'); 'the headline'; '' for the others."""
    if dram_words(validity, host):
        return ("withheld: memory_buffer_llc failed (not shown to be DRAM)" if role == "headline" else
                "not shown to be DRAM (memory_buffer_llc failed)")
    if role != "headline":
        return ""
    return "withheld: its run failed the memory gate" if str(gate).startswith("failed") else "the headline"


def memory_figures_display(figs: pd.DataFrame | None, validity: pd.DataFrame | None = None) -> pd.DataFrame:
    """memstor.analysis.memory_figures.memory_figures for the report: device (with several), quantity (with
    its unit), what was measured, tool, value [95 % interval] (the value alone without one), n, its runs under
    the quality gate ('failed: latency_unstable', 'passed', 'not judged') and which one the headline uses
    (withheld, as on page 1, where memory_buffer_llc failed: :func:`_used_as`)."""
    cols = ["device", "quantity", "measured as", "tool", "value [95 % interval]", "n", "gate", "used as"]
    if figs is None or figs.empty:
        return pd.DataFrame(columns=cols)
    out = pd.DataFrame({
        "device": figs["host"], "quantity": figs["quantity"].str.replace("idle latency", "idle mean latency")
        + " (" + figs["unit"] + ")",
        "measured as": figs["measurement"], "tool": figs["tool"],
        "value [95 % interval]": [fmt_interval(v, lo, hi) for v, lo, hi in
                                  zip(figs["value"], figs["ci_low"], figs["ci_high"])],
        "n": [("–" if missing(k) else str(int(k))) for k in figs["n"]],
        "gate": figs["gate"].fillna("") if "gate" in figs else "",  # S6-bare C-11: a failed one was unmarked
        "used as": [_used_as(r, h, validity, g) for r, h, g in
                    zip(figs["role"], figs["host"], figs["gate"] if "gate" in figs else [""] * len(figs))],
    })
    return out if figs["host"].nunique() > 1 else out.drop(columns="device")


def _not_dram(validity: pd.DataFrame | None, host, ceiling) -> str:
    """:func:`dram_words` beside a DRAM ceiling, '' beside any other."""
    return dram_words(validity, str(host)) if "DRAM" in str(ceiling) else ""


def _withheld(words: str) -> str:
    """A DRAM ceiling's 'best measured' cell where memory_buffer_llc failed (S7-bare M-10: 'DRAM peak ... 28,778'
    under that failed check): no figure in a row named DRAM for a value not shown to be DRAM's."""
    return f"withheld: memory_buffer_llc failed ({words}); every measurement in §4.3"


def ceilings_display(use: pd.DataFrame | None, validity: pd.DataFrame | None = None) -> pd.DataFrame:
    """memstor.analysis.ceilings.ceiling_use for the report: device (with several), ceiling, its value (MB/s)
    and arithmetic or why it is unknown, the best number measured against it and its % of the ceiling; beside a
    DRAM ceiling, a memory figure whose buffer the last-level cache may hold is withheld with the reason
    (:func:`dram_words`)."""
    cols = ["device", "ceiling", "MB/s", "from", "best measured (MB/s, whole-run mean)", "% of ceiling"]
    if use is None or use.empty:
        return pd.DataFrame(columns=cols)
    out = pd.DataFrame({
        "device": use["host"], "ceiling": use["what"],
        "MB/s": [("–" if missing(c) else fmt_interval(c, None, None)) for c in use["ceiling"]],
        "from": [h if not missing(c) else (r or "unknown") for c, h, r in zip(use["ceiling"], use["how"], use["reason"])],
        "best measured (MB/s, whole-run mean)": [("–" if missing(v) else _withheld(w) if (w := _not_dram(validity, h, c)) else
                                  f"{fmt_interval(v, None, None)} ({a})")
                                 for v, a, h, c in zip(use["measured"], use["measured_as"], use["host"],
                                                       use["what"])],
        "% of ceiling": [("–" if missing(p) or _not_dram(validity, h, c) else f"{float(p):.0f} %")
                         for p, h, c in zip(use["pct_of_ceiling"], use["host"], use["what"])],
    })
    return out if use["host"].nunique() > 1 else out.drop(columns="device")
