"""Report text, spec comparison: memstor.analysis.synthesis.spec_comparison for display (short headers with
units, numbers formatted, the conditions of both sides)."""

from __future__ import annotations

import pandas as pd

from memstor.core.fmt import fmt_ci, fmt_number
from memstor.core.schema import missing


def spec_table(comp: pd.DataFrame, compact: bool = False) -> pd.DataFrame:
    """The comparison for display: short headers with units, numbers formatted, conditions both sides. Compact
    (the PDF): the measured side's outstanding I/O and block size and which point it is, instead of every
    condition of both sides (the flag still names each condition that differs); no host column for one device."""
    if comp.empty:
        return comp
    out = pd.DataFrame({
        "host": comp["host"],
        "spec value": comp["metric"] + comp["headline"].map(lambda b: " ★" if b else ""),
        "unit": comp["unit"],
        "measured": [fmt_number(v) if missing(v) else f"{fmt_ci(v, lo, hi)} (n={int(k)})"
                     for v, lo, hi, k in zip(comp["measured"], comp["measured_ci_low"], comp["measured_ci_high"],
                                             comp["n"])],
        "spec": comp["spec"].map(fmt_number),
        "state": comp["state"] if "state" in comp.columns else "",
        "ratio": comp["ratio"].map(lambda v: "–" if missing(v) else f"{v:.2f}"),
        "conditions": [
            f"measured: {m}" + (f" [{_short_selection(sel)}]" if sel else "") + f"\nspec: {s}"
            for m, s, sel in zip(comp["measured_conditions"], comp["spec_conditions"], comp["selection"])],
        "flag": comp["flag"],
    })
    if compact:
        out["conditions"] = [", ".join(str(m).split(", ")[:2]) + (f" [{_short_selection(sel)}]" if sel else "")
                             for m, sel in zip(comp["measured_conditions"], comp["selection"])]
        out = out.rename(columns={"conditions": "measured at"})
        if out["host"].nunique() == 1:
            out = out.drop(columns="host")
    return out


def _short_selection(selection: str) -> str:
    """'spec point' or 'closest point' from a selection text."""
    if selection.startswith("spec-conditions"):
        return "spec point"
    return "closest point; no spec point" if "no spec-conditions" in selection else "closest point"
