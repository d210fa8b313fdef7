"""The report's CSV tables say no more than its PDF (issue 38, fourth read R-1cpu M7): a value the report withholds
is empty in its table and a ``not_valid`` column says why, as memstor.analysis.validity.gate does for the tables it
gates. Pure: a table (and the checks) in, the gated copy out.

- headline: a value page 1 withholds (a failed check bears on it) is empty; its metric reads as page 1 names it
  ('4K random write after preconditioning, steady state not shown', not 'Steady-state 4K random write').
- spec_comparison: no ratio where the target is not the sheet's drive (``comparable`` False).
- knee: no X_fit and fitted N* where the measured bound lies above the fit's whole N* interval (the PDF: 'not a
  finding: below the bound'), and ``saturated`` empty where the sweep's levelling off is not shown (knee_plateau
  did not pass) or the fit is no finding.
- dirth, dirth_histograms: only the roles the PDF states (fifth read R-def, S9-bare C-5: 'max IOPS, optimal' where
  dirth_optimal failed, 'min' where pts_repeat failed); ``not_valid`` names the check.
- steady_state: a window the PDF calls 'not shown' is not 'achieved' (R-def: ss_status achieved, valid True).
- wsat: no burst or sustained level for a run too short to tell one (R-1cpu M4).
- summary: the open-loop points say whether their loop held (R-def: 157,878 IOPS at u98, above the closed maximum,
  with no flag).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from memstor.analysis.memory import below_l1
from memstor.core.schema import missing
from memstor.report.text.headline_table import headline_evidence  # the page's own rule, not a copy of it
from memstor.report.text.pts import gated_histograms, gated_roles, withheld_roles
from memstor.report.text.queueing import measured_above_fit

#: knee columns of the fitted ceiling and N* that a fit below the measured bound does not state.
KNEE_BELOW_COLUMNS = ("X_max_fit_iops", "X_max_fit_se_iops", "N_star_fit", "N_star_fit_ci_low", "N_star_fit_ci_high")


def _reason(old, new: str) -> str:
    """``old`` (a not_valid cell) with ``new`` added: 'a; b', or new alone."""
    old = "" if missing(old) else str(old)
    return f"{old}; {new}" if old else new


def gate_headline(headline: pd.DataFrame | None, validity: pd.DataFrame | None,
                  points: pd.DataFrame | None = None) -> pd.DataFrame | None:
    """headline.csv as page 1 says it (memstor.report.text.headline_table.headline_evidence, row by row): a withheld
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


def shown_knee_fits(knees: pd.DataFrame | None, fits: dict, validity: pd.DataFrame | None) -> dict:
    """The knee fits {(host, rw): fit} the queue-depth figure draws: those whose knee the page states, by
    :func:`gate_knee`'s rule (eighth read S12-loop 2: Figure 3 drew 'N* = 1.8' with its fit where the text and table
    called that knee 'not a finding', X_best 271,713 IOPS above the fit's band)."""
    shown = gate_knee(knees, validity)
    if shown is None or shown.empty or "valid" not in shown.columns:
        return dict(fits)
    ok = {(str(h), str(r)) for h, r, v in zip(shown["host"], shown["rw"], shown["valid"]) if missing(v) or bool(v)}
    return {key: fit for key, fit in fits.items() if (str(key[0]), str(key[1])) in ok}


def gate_knee(knees: pd.DataFrame | None, validity: pd.DataFrame | None) -> pd.DataFrame | None:
    """knee.csv as the PDF says it (memstor.report.text.queueing.knee_display): the fitted ceiling and N* empty,
    ``valid`` False and ``not_valid`` why where the measured bound N* ≥ X_best R(N_min) lies above the fit's whole
    95 % interval or X_best lies above the fitted ceiling's 95 % band; ``saturated`` empty there and where knee_plateau did not pass (whether the sweep levels off is
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
    over = out.apply(measured_above_fit, axis=1).astype(bool) & ~below & out["valid"].fillna(True).astype(bool)
    out.loc[over, "not_valid"] = [_reason(o, "not a finding: the sweep measured X_best above the fitted ceiling's "
                                             "95 % band (X_fit + 1.96 SE)") for o in out.loc[over, "not_valid"]]
    below = below | over
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


def gate_dirth(dirth: pd.DataFrame | None, validity: pd.DataFrame | None) -> pd.DataFrame | None:
    """dirth.csv with the PDF's roles (memstor.report.text.pts.gated_roles) and ``not_valid`` naming the failed
    check behind each role removed."""
    if dirth is None or dirth.empty or "role" not in dirth.columns:
        return dirth
    out = gated_roles(dirth, validity)
    out["not_valid"] = withheld_roles(dirth, validity)
    return out


def gate_steady_csv(steady: pd.DataFrame | None) -> pd.DataFrame | None:
    """steady_state.csv where the PDF says 'not shown' (``steady_shown`` False) or 'not valid': ``ss_achieved``
    False, ``ss_status`` 'not shown (window rule met)', ``valid`` False and ``not_valid`` the verdict's reason."""
    if steady is None or steady.empty or "steady_shown" not in steady.columns:
        return steady
    out = steady.copy()
    met = out["ss_achieved"].fillna(False).astype(bool) if "ss_achieved" in out.columns else False
    unshown = met & ~out["steady_shown"].fillna(False).astype(bool)
    out["not_valid"] = out["not_valid"].astype(object).fillna("") if "not_valid" in out.columns else ""
    out["ss_status"] = out["ss_status"].astype(object)
    out.loc[unshown, "ss_status"] = "not shown (window rule met)"
    out.loc[unshown, "ss_achieved"] = False
    out.loc[unshown, "not_valid"] = [_reason(o, f"not a steady-state figure: {v}")
                                     for o, v in zip(out.loc[unshown, "not_valid"], out.loc[unshown, "verdict"])]
    out.loc[unshown, "valid"] = False
    return out


def gate_summary(points: pd.DataFrame | None, load: pd.DataFrame | None) -> pd.DataFrame | None:
    """summary.csv with ``open_loop_held`` on each fio-load-latency row (its offered rate's ``open_loop`` in the
    load table, matched by device, rw and the 'u<percent>' of its configuration; empty on other rows) and
    ``not_valid`` on a rate that did not hold: its IOPS and latency are not an open loop's."""
    if points is None or points.empty or load is None or load.empty or "config" not in points.columns:
        return points
    out = points.copy()
    held = {(str(h), str(rw), float(u)): bool(o) for h, rw, u, o in
            zip(load["host"], load["rw"], load["utilisation_pct"], load["open_loop"]) if not missing(o)}
    util = out["config"].astype(str).str.extract(r"-u(\d+(?:\.\d+)?)-")[0].astype(float)
    is_ol = out["experiment"] == "fio-load-latency"
    out["open_loop_held"] = [held.get((str(h), str(rw), u)) if ol else None
                             for h, rw, u, ol in zip(out["host"], out["rw"], util, is_ol)]
    out["not_valid"] = ["not valid: the open loop did not hold at this offered rate (load_latency.csv says why)"
                        if h is False else "" for h in out["open_loop_held"]]
    return out


#: wsat columns that state a level: empty for a run whose series is too short to tell one (``caveat``).
WSAT_LEVEL_COLUMNS = ("burst_MBps", "burst_MBps_ci_low", "burst_MBps_ci_high", "sustained_MBps",
                      "sustained_MBps_ci_low", "sustained_MBps_ci_high", "sustained_iops", "sustained_over_burst")


def gate_wsat_csv(wsat: pd.DataFrame | None) -> pd.DataFrame | None:
    """wsat.csv with no burst or sustained level where the series was too short to tell a cliff from noise
    (``caveat``, wsat_series warned; the PDF: 'no level (too short)'): those columns empty, ``valid`` False,
    ``not_valid`` 'no level: <caveat>'; the seconds' mean stays in ``series_MBps`` (R-1cpu M4: sustained_MBps =
    burst_MBps = 228.9, valid True, for 18 whole seconds). A run with no level has its cliffs empty too (not
    determined, as the PDF says), not 0; a run with one level (no cliff) has no burst level of its own (empty)."""
    if wsat is None or wsat.empty or "caveat" not in wsat.columns:
        return wsat
    out = wsat.copy()
    out["not_valid"] = out["not_valid"].astype(object).fillna("") if "not_valid" in out.columns else ""
    short = out["caveat"].fillna("").astype(str).ne("") & out["sustained_MBps"].notna()
    out.loc[short, "not_valid"] = [_reason(o, f"no level: {c}") for o, c in
                                   zip(out.loc[short, "not_valid"], out.loc[short, "caveat"])]
    out.loc[short, [c for c in WSAT_LEVEL_COLUMNS if c in out.columns]] = np.nan
    out.loc[short, "valid"] = False
    # S14-bare 5: 'cliffs 0' of a run the PDF calls 'not determined' (no level: the series could not tell)
    untold = out["sustained_MBps"].isna()
    cliff = [c for c in ("cliffs", "first_cliff_GB", "first_cliff_s") if c in out.columns]
    out[cliff] = out[cliff].astype(float)
    out.loc[untold, cliff] = np.nan
    # S15-bare 6: a run with one level (no cliff) read burst_MBps = sustained_MBps, ratio 1.00, where the PDF says
    # '– (no cliff: one level)': that burst is the sustained level again, no second measurement
    if {"burst_MBps", "cliffs"} <= set(out.columns):
        one = (pd.to_numeric(out["cliffs"], errors="coerce") == 0) & np.isclose(
            pd.to_numeric(out["burst_MBps"], errors="coerce"), pd.to_numeric(out["sustained_MBps"], errors="coerce"))
        out.loc[one, [c for c in ("burst_MBps", "burst_MBps_ci_low", "burst_MBps_ci_high", "sustained_over_burst")
                      if c in out.columns]] = np.nan
    return out


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
    if "dirth_histograms" in out:
        out["dirth_histograms"] = gated_histograms(out["dirth_histograms"], validity, out.get("dirth"))
    if "dirth" in out:
        out["dirth"] = gate_dirth(out["dirth"], validity)
    if "wsat" in out:
        out["wsat"] = gate_wsat_csv(out["wsat"])
    if "steady_state" in out:
        out["steady_state"] = gate_steady_csv(out["steady_state"])
    if "summary" in out:
        out["summary"] = gate_summary(out["summary"], out.get("load_latency"))
    if "slo" in out:
        out["slo"] = gate_slo_csv(out["slo"])
    if "memory_sections" in out:
        out["memory_sections"] = gate_sections_csv(out["memory_sections"], getattr(synthesis, "cache_levels", None))
    return out


def gate_sections_csv(sections: pd.DataFrame | None, levels: pd.DataFrame | None) -> pd.DataFrame | None:
    """memory_sections.csv with a cache-to-cache value below the host's L1 latency emptied and ``not_valid`` saying
    why (memstor.analysis.memory.below_l1; S14-bare 7)."""
    if sections is None or sections.empty:
        return sections
    why = below_l1(sections, levels)
    out = sections.assign(not_valid=why)
    bad = why.astype(bool)
    out[["value", "ci_low", "ci_high"]] = out[["value", "ci_low", "ci_high"]].astype(object)
    out.loc[bad, ["value", "ci_low", "ci_high"]] = None
    return out


def gate_slo_csv(slo: pd.DataFrame | None) -> pd.DataFrame | None:
    """slo.csv with a row that no held rate answered (held_points 0 of points) not valid, 'not valid: none of the N
    rates held (open_loop_held): no answer', as every not_valid begins (S14-bare 6: randread's 'no answer' row read
    valid True beside randwrite's False, both 0 of 8 held; the PDF says 'no answer' of both)."""
    if slo is None or slo.empty or not {"held_points", "points"} <= set(slo.columns):
        return slo
    out = slo.copy()
    out["not_valid"] = out["not_valid"].astype(object).fillna("") if "not_valid" in out.columns else ""
    none = (pd.to_numeric(out["held_points"], errors="coerce") == 0) & out["max_iops"].isna()
    out.loc[none, "not_valid"] = [o or f"not valid: none of the {int(n)} rates held (open_loop_held): no answer"
                                  for o, n in zip(out.loc[none, "not_valid"], out.loc[none, "points"])]
    out.loc[none, "valid"] = False
    return out
