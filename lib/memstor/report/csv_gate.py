"""The report's CSV tables say no more than its PDF (issue 38, fourth read R-1cpu M7): a value the report withholds
is empty in its table and a ``not_valid`` column says why, as memstor.analysis.validity.gate does for the tables it
gates. Pure: a table (and the checks) in, the gated copy out.

- headline: a value page 1 withholds (a failed check bears on it) is empty; its metric reads as page 1 names it
  ('4K random write after preconditioning, steady state not shown', not 'Steady-state 4K random write').
- spec_comparison: no ratio where the target is not the sheet's drive (``comparable`` False).
- knee: no X_fit and fitted N* where the measured bound lies above the fit's whole N* interval (the PDF: 'not a
  finding: below the bound'), and ``saturated`` empty where the sweep's levelling off is not shown (knee_plateau
  did not pass) or the fit is no finding.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from memstor.core.schema import missing
from memstor.report.text.first_page import headline_evidence  # the page's own rule, not a copy of it

#: knee columns of the fitted ceiling and N* that a fit below the measured bound does not state.
KNEE_BELOW_COLUMNS = ("X_max_fit_iops", "X_max_fit_se_iops", "N_star_fit", "N_star_fit_ci_low", "N_star_fit_ci_high")


def _reason(old, new: str) -> str:
    """``old`` (a not_valid cell) with ``new`` added: 'a; b', or new alone."""
    old = "" if missing(old) else str(old)
    return f"{old}; {new}" if old else new


def gate_headline(headline: pd.DataFrame | None, validity: pd.DataFrame | None,
                  points: pd.DataFrame | None = None) -> pd.DataFrame | None:
    """headline.csv as page 1 says it (memstor.report.text.first_page.headline_evidence, row by row): a withheld
    value and its interval empty, ``not_valid`` the page's words; the metric named as the page names it."""
    if headline is None or headline.empty or "key" not in headline.columns:
        return headline
    out = headline.copy()
    out["not_valid"] = out["not_valid"] if "not_valid" in out.columns else ""
    for i in out.index:
        if missing(out.at[i, "value"]):
            continue
        page = headline_evidence(headline.loc[[i]], validity, points)
        page = page[page["quantity"] != "not measured"]
        if page.empty:
            continue
        said = page.iloc[0]
        out.at[i, "metric"] = str(said["quantity"]).removesuffix(f" ({out.at[i, 'unit']})")
        if str(said["value"]).startswith("withheld"):
            out.loc[i, [c for c in ("value", "value_ci_low", "value_ci_high") if c in out.columns]] = np.nan
            out.at[i, "not_valid"] = _reason(out.at[i, "not_valid"], f"{said['value']} ({said['trust']})")
    return out


def gate_spec(spec: pd.DataFrame | None) -> pd.DataFrame | None:
    """spec_comparison.csv with no ratio where ``comparable`` is False (the PDF: '– (not comparable)'), and
    ``not_valid`` 'ratio not given: not comparable (<interface>)'."""
    if spec is None or spec.empty or "comparable" not in spec.columns:
        return spec
    out = spec.copy()
    out["not_valid"] = out["not_valid"] if "not_valid" in out.columns else ""
    apart = ~out["comparable"].fillna(True).astype(bool) & out["ratio"].notna()
    iface = out["interface"] if "interface" in out.columns else pd.Series("", index=out.index)
    out.loc[apart, "not_valid"] = [_reason(o, f"ratio not given: not comparable ({i})")
                                   for o, i in zip(out.loc[apart, "not_valid"], iface[apart])]
    out.loc[apart, "ratio"] = np.nan
    return out


def gate_knee(knees: pd.DataFrame | None, validity: pd.DataFrame | None) -> pd.DataFrame | None:
    """knee.csv as the PDF says it (memstor.report.text.queueing.knee_display): the fitted ceiling and N* empty,
    ``valid`` False and ``not_valid`` why where the measured bound N* ≥ X_best R(N_min) lies above the fit's whole
    95 % interval; ``saturated`` empty there and where knee_plateau did not pass (whether the sweep levels off is
    not shown)."""
    if knees is None or knees.empty or "N_star_bound" not in knees.columns:
        return knees
    out = knees.copy()
    out["not_valid"] = out["not_valid"].astype(object).fillna("") if "not_valid" in out.columns else ""
    out["valid"] = out["valid"] if "valid" in out.columns else True
    bound = pd.to_numeric(out["N_star_bound"], errors="coerce")
    top = pd.to_numeric(out.get("N_star_fit_ci_high"), errors="coerce")
    below = (bound > top) & out["valid"].fillna(True).astype(bool)
    out.loc[below, "not_valid"] = [
        _reason(o, f"not a finding: the measured bound N* >= {b:.1f} lies above the fit's whole 95 % interval "
                   f"(top {t:.1f}): the fitted ceiling is below what the sweep measured")
        for o, b, t in zip(out.loc[below, "not_valid"], bound[below], top[below])]
    out.loc[below, [c for c in KNEE_BELOW_COLUMNS if c in out.columns]] = np.nan
    out.loc[below, "valid"] = False
    plateau = _not_passed(validity, "knee_plateau")
    unshown = below | pd.Series([(str(h), str(rw)) in plateau for h, rw in zip(out["host"], out["rw"])],
                                index=out.index)
    if "saturated" in out.columns:
        out["saturated"] = out["saturated"].astype(object)
        out.loc[unshown, "saturated"] = None
    return out


def _not_passed(validity: pd.DataFrame | None, check: str) -> set[tuple[str, str]]:
    """(host, subject) of the rows of ``check`` whose status is not 'pass'."""
    if validity is None or validity.empty:
        return set()
    rows = validity[(validity["check"] == check) & (validity["status"] != "pass")]
    return {(str(h), str(s)) for h, s in zip(rows["host"], rows["subject"])}


def gate_tables(tables: dict[str, pd.DataFrame], synthesis) -> dict[str, pd.DataFrame]:
    """{name: table} of memstor.report.tables.report_tables with headline, spec_comparison and knee gated as the
    PDF states them (the synthesis' ``validity`` and ``points``)."""
    validity, points = getattr(synthesis, "validity", None), getattr(synthesis, "points", None)
    out = dict(tables)
    if "headline" in out:
        out["headline"] = gate_headline(out["headline"], validity, points)
    if "spec_comparison" in out:
        out["spec_comparison"] = gate_spec(out["spec_comparison"])
    if "knee" in out:
        out["knee"] = gate_knee(out["knee"], validity)
    return out
