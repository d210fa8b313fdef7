"""Report text, spec comparison: memstor.analysis.synthesis.spec_comparison for display (short headers with
units, numbers formatted, the conditions of both sides)."""

from __future__ import annotations

import re

import pandas as pd

from memstor.core.fmt import fmt_ci, fmt_number
from memstor.core.schema import missing

#: Beside a ratio whose target is not the sheet's drive.
NOT_COMPARABLE = "(not comparable)"


def spec_table(comp: pd.DataFrame, compact: bool = False) -> pd.DataFrame:
    """The comparison for display: short headers with units, numbers formatted, conditions both sides. Compact
    (the PDF): the measured side's outstanding I/O and block size and which point it is, instead of every
    condition of both sides (the flag still names each condition that differs); no host column for one device.
    A ratio of a target that is not the sheet's drive (``comparable`` False: a virtual disk, a loop device) is not
    printed: the cell says "– (not comparable)" (spec_comparison.csv leaves it empty); the full table's flag
    says why first (the compact one leaves that to :func:`spec_note`). A measured value reads "(1 run)" beside it,
    or "(n runs)": a steady-state window average is one run, its rounds are not repetitions."""
    if comp.empty:
        return comp
    apart = ~comp["comparable"].fillna(True).astype(bool) if "comparable" in comp.columns \
        else pd.Series(False, index=comp.index)
    out = pd.DataFrame({
        "host": comp["host"],
        "spec value": comp["metric"] + comp["headline"].map(lambda b: " ★" if b else ""),
        "unit": comp["unit"],
        "measured": [fmt_number(v) if missing(v) else f"{fmt_ci(v, lo, hi)} ({int(k)} run{'s' if k != 1 else ''})"
                     for v, lo, hi, k in zip(comp["measured"], comp["measured_ci_low"], comp["measured_ci_high"],
                                             comp["n"])],
        "spec": comp["spec"].map(fmt_number),
        "state": comp["state"] if "state" in comp.columns else "",
        "ratio": [("–" if missing(v) else f"– {NOT_COMPARABLE}" if a else f"{v:.2f}")
                  for v, a in zip(comp["ratio"], apart)],
        "conditions": [
            f"measured: {m}" + (f" [{_short_selection(sel)}]" if sel else "") + f"\nspec: {s}"
            for m, s, sel in zip(comp["measured_conditions"], comp["spec_conditions"], comp["selection"])],
        "flag": [f"{_not_drive(i)}; {f}" if a and not missing(v) else f for f, i, a, v in
                 zip(comp["flag"], comp.get("interface", pd.Series("", index=comp.index)), apart, comp["ratio"])],
    })
    if compact:
        out["flag"] = comp["flag"].to_numpy()
        out["conditions"] = [("–" if m == "not measured" else ", ".join(str(m).split(", ")[:2]))
                             + (f" [{_short_selection(sel)}]" if sel else "")
                             for m, sel in zip(comp["measured_conditions"], comp["selection"])]
        out = out.rename(columns={"conditions": "measured at"})
        if out["host"].nunique() == 1:
            out = out.drop(columns="host")
    return out


def spec_note(comp: pd.DataFrame | None) -> str:
    """One sentence before the compact table where ratios are marked not comparable: per device, why (markdown);
    "" where every ratio compares the sheet's kind of drive."""
    if comp is None or comp.empty or "comparable" not in comp.columns:
        return ""
    apart = comp[~comp["comparable"].fillna(True).astype(bool) & comp["ratio"].notna()]
    said = [f"{host}: {_not_drive(g['interface'].iloc[0] if 'interface' in g else '')}"
            for host, g in apart.groupby("host", sort=True)]
    if not said:
        return ""
    return ("No ratio is given where it is marked *not comparable*: " + "; ".join(said) + " — it would set a "
            "different device against the sheet's drive and say nothing about the drive (`spec_comparison.csv` "
            "leaves it empty too and says why in not_valid).")


def _not_drive(interface) -> str:
    """'not the sheet's drive (virtio disk vda)' from the interface check's text."""
    text = str(interface)
    inner = text[text.find("(") + 1:] if "(" in text else ""
    what = inner.split("(", 1)[1].split(")", 1)[0] if "(" in inner else ""
    return f"not the sheet's drive ({what})" if what else "not the sheet's drive"


def _short_selection(selection: str) -> str:
    """'spec point', 'steady-state window', 'withheld', 'write saturation' or 'nearest sweep point' from a selection
    text (memstor.analysis.synthesis.spec_comparison)."""
    for start, short in (("spec-conditions", "spec point"), ("steady state", "steady-state window, 1 run"),
                         ("withheld", "withheld"), ("write saturation", "write saturation")):
        if selection.startswith(start):
            return short
    short = "nearest sweep point; no spec point" if "no spec-conditions" in selection else "nearest sweep point"
    wsat = re.search(r"the write-saturation run wrote (\S+ \S+)(?: \(\S+\))? over .* at ([\d,.]+ MB/s) .*with no cliff",
                     selection)  # S18-loop 1: the spec's block size ran there (synthesis: wsat.no_cliff_words)
    return short + (f" (WSAT's {wsat[1]} run: {wsat[2]}, no cliff)" if wsat else "")
