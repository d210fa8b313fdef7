"""No finding without its preconditions: the report tables with the results whose checks failed taken out.

Where a validity row (memstor.analysis.validity) fails, the table the finding lives in keeps its row — the
measured numbers stay — but the finding itself is emptied and a ``not_valid`` column says why, with the numbers
and the way out:

- open loop (``open_loop_held``, ``open_loop_rate``, ``littles_law`` of the fio-load-latency points or
  ``below_closed_max`` fail for a device x workload): the SLO answer (``slo.max_iops``) and every queueing
  model's prediction and error (``load_latency_models``) — gated arrivals make the curve a partly closed loop,
  rates fio did not deliver as offered are not the rates the models and the answer are stated at, and more
  I/Os in flight than the jobs could hold or more IOPS than the closed-loop maximum are not the device's;
  ``not_valid`` names each failed check's evidence;
- knee (``knee_ceiling``, ``knee_min_latency`` or ``knee_sweep_agrees`` fail): the two-asymptote fit's R_min,
  X_max and N* with their errors — a fit that contradicts its data, or of a sweep the same job beat elsewhere beyond
  the spread, is not a result; the measured bound stays; ``knee_located`` or
  ``knee_plateau`` fail: N* and its interval only (the interval spans the sweep: it does not place the knee; the
  sweep still rises past it: no knee there); ``knee_plateau`` warn: ``note`` carries its evidence (N* stated
  with the points past it that lie above X_fit, or with none reaching it);
- steady state (``steady_trace_jump`` or ``steady_vs_fresh`` fail): the verdict says "not valid", and ``valid`` is
  False, so the spec comparison withholds its window average; a window that met the PTS rule but whose
  ``steady_window_trend`` or ``steady_round_length`` warns (a level from a window that still drifts is not one
  level; rounds too short to average the drive's background work do not sample a state) is not shown to be the
  steady state: ``steady_shown`` False, ``not_shown`` says why, the verdict says "not shown" and the spec
  comparison states it as such, never as steady state.

Pure: DataFrames in, DataFrames out (copies).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from memstor.analysis.validity.rows import FAIL, UNCHECKED, WARN

#: load_latency_models columns that are model results (emptied where the open loop did not hold).
MODEL_COLUMNS = ("servers_c", "rho_c", "mm1_us", "md1_us", "mg1_us", "mgc_us", "mm1_err_pct", "md1_err_pct",
                 "mg1_err_pct", "mgc_err_pct", "fit_rms_err_pct")
#: knee columns of the two-asymptote fit, and of N* alone.
#: ``saturated`` (the sweep's largest N past the fitted N*) goes with N* (S6-bare M-7: True beside a failed check).
KNEE_FIT_COLUMNS = ("R_min_fit_us", "X_max_fit_iops", "N_star_fit", "r2", "R_min_fit_se_us", "X_max_fit_se_iops",
                    "N_star_fit_ci_low", "N_star_fit_ci_high", "saturated")
KNEE_STAR_COLUMNS = ("N_star_fit", "N_star_fit_ci_low", "N_star_fit_ci_high", "saturated")
#: The checks that withhold the open-loop findings of a workload, in the order their evidence is given.
OPEN_LOOP_CHECKS = ("open_loop_held", "open_loop_rate", "littles_law", "below_closed_max")
#: The experiment whose littles_law rows gate the open loop (their subject: '<experiment> <rw>').
OPEN_EXPERIMENT = "fio-load-latency"
#: The way out, per gated finding. open_loop_held's names no cause for ioarrive: what delayed its submissions (the
#: I/O path's queue, the CPUs, the machine's pauses) is the report's to say from its columns (S6-bare M-10:
#: 'a quieter machine' stood where the I/Os in service sat at a full queue with ioarrive at 20-34 % of one CPU).
WAY_OUT = {
    "open_loop_held": "with ioarrive, remove what delayed its submissions (the I/O path's queue, the CPUs or the "
                      "machine's pauses: the report says which its columns support); with fio's rate mode, fewer "
                      "jobs per rate (its inline submission cannot keep arrivals open here); until then read the "
                      "closed-loop curve of the queue-depth sweep",
    "open_loop_rate": "a submit mode that holds the offered rate (inline, more jobs per rate), or a fio whose "
                      "rate process delivers what is offered; until then read the closed-loop curve of the "
                      "queue-depth sweep",
    "littles_law": "check fio's latency and IOPS accounting for this submit mode (offload); until then read the "
                   "closed-loop curve of the queue-depth sweep",
    "below_closed_max": "rerun the queue-depth sweep and the open loop back to back on a quiet machine; until "
                        "then read the closed-loop curve of the queue-depth sweep",
    "knee": "read the measured bound (latency at the smallest N, highest IOPS measured); more queue depths around "
            "the knee (iodepth: auto) give the fit more to hold on to",
    "knee_sweep_agrees": "read the measured points; rerun the queue-depth sweep beside the experiments that measured "
                         "more (the same job, minutes apart) on a quiet machine",
    "steady_trace_jump": "rerun on a quiet machine with longer rounds (round_s) and a span the rounds overwrite",
    "steady_vs_fresh": "rerun with longer rounds (round_s) over a span larger than the caches in front of the device "
                       "(the whole device), on a quiet machine, beside fresh points on that same span",
    "wsat": "write more (capacity_multiple, file_size) so that the run lasts whole seconds; fio's whole-run figure "
            "stays in the table",
    "wsat_one_level": "write more (capacity_multiple, file_size) until the series settles; fio's whole-run figure "
                      "stays in the table",
}
#: write-saturation columns that are levels read from the per-second series (emptied where it cannot give one).
WSAT_LEVEL_COLUMNS = ("burst_MBps", "burst_MBps_ci_low", "burst_MBps_ci_high", "sustained_MBps",
                      "sustained_MBps_ci_low", "sustained_MBps_ci_high", "sustained_iops", "sustained_over_burst")
#: The checks whose failure means a write-saturation run's series gives no level.
WSAT_CHECKS = ("wsat_series", "series_matches_whole", "wsat_one_level")
#: Warnings of the steady-state checks that leave the PTS window rule met but the steady state not shown: a window
#: that still drifts or see-saws is not one level; rounds too short do not sample a state.
STEADY_SHOWN_CHECKS = ("steady_window_trend", "steady_round_length")
#: storage_fit columns that are the open-queue model of a curve (emptied for an open loop that did not hold).
CURVE_MODEL_COLUMNS = ("fit_points", "fit_x_max_iops", "r0_us", "r0_us_ci_low", "r0_us_ci_high", "a_us", "a_us_ci_low",
                       "a_us_ci_high", "peak_iops", "peak_iops_ci_low", "peak_iops_ci_high", "fit_rms_pct",
                       "holdout_error_pct", "x_at_1p25_r0_iops", "x_at_2_r0_iops")


def failed(validity: pd.DataFrame | None, check: str, status: str = FAIL) -> dict[tuple[str, str], str]:
    """{(host, subject): evidence} of the rows of ``check`` with ``status`` (default: those that failed)."""
    if validity is None or validity.empty:
        return {}
    rows = validity[(validity["check"] == check) & (validity["status"] == status)]
    return {(str(r["host"]), str(r["subject"])): str(r["evidence"]) for _, r in rows.iterrows()}


def _reason(evidence: str, check: str) -> str:
    return f"not valid: {evidence}; {WAY_OUT[check]}"


def _gate(df: pd.DataFrame | None, bad: dict[tuple[str, str], str], columns: tuple, check: str,
          key: str = "rw") -> pd.DataFrame | None:
    """Empty ``columns`` of the rows of a failed (host, df[key]); add ``valid`` and ``not_valid``."""
    if df is None or df.empty or key not in df.columns:
        return df
    out = df.copy()
    reasons = [bad.get((str(h), str(s))) for h, s in zip(out["host"], out[key])]
    hit = np.array([r is not None for r in reasons], dtype=bool)
    for col in columns:
        if col in out.columns:
            out[col] = out[col].astype(object)
            out.loc[hit, col] = None
    out["valid"] = ~hit
    out["not_valid"] = [_reason(r, check) if r is not None else "" for r in reasons]
    return out


def open_loop_failures(validity: pd.DataFrame | None, spare: tuple[str, ...] = ()) -> dict[tuple[str, str], str]:
    """{(host, rw): the not_valid reason} of the open-loop workloads a check of :data:`OPEN_LOOP_CHECKS`
    failed for (but those in `spare`): the first failing check's evidence, then each further one by name with
    the first clause of its evidence, then the way out of the first."""
    found: dict[tuple[str, str], list[str]] = {}
    # a failure first; then an open loop not shown to hold (open_loop_held unchecked): no finding rests on it
    for check, status in [*((c, FAIL) for c in OPEN_LOOP_CHECKS if c not in spare), ("open_loop_held", UNCHECKED)]:
        for (host, subject), evidence in failed(validity, check, status).items():
            if check == "littles_law":
                if not subject.startswith(f"{OPEN_EXPERIMENT} "):
                    continue
                subject = subject.removeprefix(f"{OPEN_EXPERIMENT} ")
            found.setdefault((host, subject), []).append(check)
            found[(host, subject)].append(evidence)
    return {key: "not valid: " + v[1] + "".join(f"; {c}: {e.split('; ')[0]}" for c, e in zip(v[2::2], v[3::2]))
            + f"; {WAY_OUT[v[0]]}" for key, v in found.items()}


def _gate_reasons(df: pd.DataFrame | None, reasons: dict[tuple[str, str], str], columns: tuple,
                  key: str = "rw") -> pd.DataFrame | None:
    """Empty ``columns`` of the rows of a (host, df[key]) in reasons; add ``valid`` and ``not_valid`` (the
    reason, whole)."""
    if df is None or df.empty or key not in df.columns:
        return df
    out = df.copy()
    said = [reasons.get((str(h), str(s)), "") for h, s in zip(out["host"], out[key])]
    hit = np.array([bool(r) for r in said], dtype=bool)
    for col in columns:
        if col in out.columns:
            out[col] = out[col].astype(object)
            out.loc[hit, col] = None
    out["valid"] = ~hit
    out["not_valid"] = said
    return out


def gate_open_loop(slo: pd.DataFrame | None, models: pd.DataFrame | None,
                   validity: pd.DataFrame | None) -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
    """The SLO answer and the model predictions emptied where the open loop did not hold: its arrivals were
    gated (open_loop_held; the SLO answer taken from the held points alone is spared that one), fio did not
    deliver the offered rates (open_loop_rate), more I/Os were in flight
    than the jobs could hold (littles_law of the fio-load-latency points) or the open loop delivered more than
    the closed-loop maximum (below_closed_max); ``not_valid`` names every one that failed, with its numbers."""
    bad = open_loop_failures(validity)
    # the SLO answer rests on the held points alone (load_latency.held_slo): too few held (open_loop_held) does
    # not void it where it was taken from them; it stays a lower bound where the next rate did not hold
    spared = open_loop_failures(validity, spare=("open_loop_held",))
    on_held = slo is not None and "held_points" in slo.columns and not slo.empty
    return (_gate_reasons(slo, spared if on_held else bad, ("max_iops", "censored", "ratio_to_fio")),
            _gate_reasons(models, bad, MODEL_COLUMNS))


def gate_open_curve_table(load: pd.DataFrame | None, validity: pd.DataFrame | None) -> pd.DataFrame | None:
    """The open-loop curve table with its open-against-closed comparison emptied where the open loop did not
    hold (the measured points stay; ``valid``/``not_valid`` added)."""
    return _gate_reasons(load, open_loop_failures(validity), ("closed_lat_mean_us", "open_vs_closed_pct"))


def gate_open_curves(storage: pd.DataFrame | None, fits: dict | None, validity: pd.DataFrame | None,
                     open_kind: str) -> tuple[pd.DataFrame | None, dict]:
    """The storage curve table and its fits {(host, kind, rw): CurveFit} without the open-queue model of an open
    loop that did not hold (:func:`open_loop_failures`): its rows (kind ``open_kind``) keep their measured
    points, the model columns are emptied with the reason; the fit is dropped so no figure draws it."""
    bad = open_loop_failures(validity)
    if storage is None or storage.empty or not bad:
        return storage, dict(fits or {})
    is_open = storage["kind"] == open_kind
    gated = _gate_reasons(storage[is_open], bad, CURVE_MODEL_COLUMNS)
    out = pd.concat([storage[~is_open].assign(valid=True, not_valid=""), gated]).loc[storage.index]
    kept = {k: f for k, f in (fits or {}).items() if not (k[1] == open_kind and (str(k[0]), str(k[2])) in bad)}
    return out, kept


def gate_wsat(wsat: pd.DataFrame | None, validity: pd.DataFrame | None) -> pd.DataFrame | None:
    """The write-saturation runs whose per-second series cannot give a level (``wsat_series``,
    ``series_matches_whole`` or ``wsat_one_level`` failed) with their levels emptied, ``valid`` False and
    ``not_valid`` saying why; the written bytes and fio's whole-run figure (``run_MBps``) stay. ``caveat``: the
    wsat_series warning ('evidence: consequence') of a run too short to tell a cliff from noise, else ''."""
    if wsat is None or wsat.empty:
        return wsat
    bad: dict[tuple[str, str], str] = {}
    for check in WSAT_CHECKS:
        for key, evidence in failed(validity, check).items():
            bad.setdefault(key, f"not valid ({check}): {evidence}; {WAY_OUT.get(check, WAY_OUT['wsat'])}")
    keyed = wsat.assign(_subject=[f"{w} ({p})" for w, p in zip(wsat["workload"], wsat["point"])])
    overlap = _overlapped(wsat, validity)
    bad.update(overlap)  # its jobs overlapped: the first reason, before any level's
    out = _gate_reasons(keyed, bad, WSAT_LEVEL_COLUMNS, key="_subject")
    assert out is not None
    hit = pd.Series([(str(h), str(s)) in overlap for h, s in zip(out["host"], out["_subject"])], index=out.index)
    if hit.any() and "run_MBps" in out.columns:  # not a sequential workload (S7-bare M-12): no whole-run figure
        out["run_MBps"] = out["run_MBps"].astype(object).where(~hit, None)
    short = _caveats(validity, "wsat_series")
    out["caveat"] = [short.get((str(h), s), "") for h, s in zip(out["host"], out["_subject"])]
    return out.drop(columns="_subject")


def _overlapped(wsat: pd.DataFrame, validity: pd.DataFrame | None) -> dict[tuple[str, str], str]:
    """{(host, '<workload> (<point>)'): reason} of the write-saturation runs whose jobs_disjoint failed (the check's
    subject ends with the point in parentheses): not a sequential workload, no figure of it stated."""
    said = {(h, s[s.rindex("(") + 1:-1]): e for (h, s), e in failed(validity, "jobs_disjoint").items()
            if s.endswith(")") and "(" in s}
    return {(str(h), f"{w} ({p})"): f"not valid (jobs_disjoint): {said[(str(h), str(p))]}; not a sequential "
            "workload: no figure of it is stated" for h, w, p in zip(wsat["host"], wsat["workload"], wsat["point"])
            if (str(h), str(p)) in said}


def _caveats(validity: pd.DataFrame | None, check: str) -> dict[tuple[str, str], str]:
    """{(host, subject): 'evidence: consequence'} of the rows of ``check`` that warn."""
    if validity is None or validity.empty:
        return {}
    rows = validity[(validity["check"] == check) & (validity["status"] == WARN)]
    return {(str(r["host"]), str(r["subject"])): f"{r['evidence']}: {r['consequence']}" for _, r in rows.iterrows()}


def gate_knees(knees: pd.DataFrame | None, validity: pd.DataFrame | None) -> pd.DataFrame | None:
    """The knee fit emptied where it contradicts its data (ceiling below a measured point, R_min above the
    measured latency), N* alone where its interval spans the sweep or the sweep still rises past it; ``note`` says
    why."""
    if knees is None or knees.empty:
        return knees
    fit_bad = {**failed(validity, "knee_min_latency"), **failed(validity, "knee_ceiling")}
    out = _gate(knees, fit_bad, KNEE_FIT_COLUMNS, "knee")
    # a sweep the same one-job job beat elsewhere beyond the spread is not the target's: no fit of it is stated
    sweep_bad = {k: e for k, e in failed(validity, "knee_sweep_agrees").items() if k not in fit_bad}
    out = _merge(out, _gate(out, sweep_bad, (*KNEE_FIT_COLUMNS, "N_star_bound"), "knee_sweep_agrees"))
    fit_bad.update(sweep_bad)
    star_bad: dict[tuple[str, str], str] = {}
    for check in ("knee_located", "knee_plateau"):  # N* alone: its interval spans the sweep, or the sweep still rises
        for key, evidence in failed(validity, check).items():
            if key not in fit_bad:
                star_bad[key] = f"{star_bad[key]}; {evidence}" if key in star_bad else evidence
    star = _merge(out, _gate(out, star_bad, KNEE_STAR_COLUMNS, "knee"))
    if "note" in star.columns:
        star["note"] = [nv if nv else note for nv, note in zip(star["not_valid"], star["note"].fillna(""))]
    caveats = _caveats(validity, "knee_plateau")  # a knee stated with the points past it that disagree
    if caveats and "note" in star.columns:
        star["note"] = [note if nv or (str(h), str(rw)) not in caveats else
                        "; ".join(x for x in (caveats[(str(h), str(rw))], note) if x)
                        for h, rw, nv, note in zip(star["host"], star["rw"], star["not_valid"], star["note"])]
    return star


def _merge(first: pd.DataFrame | None, second: pd.DataFrame | None) -> pd.DataFrame:
    """second (a _gate of first) with first's ``valid`` and ``not_valid`` kept: valid where both are, the first
    reason where first has one."""
    assert first is not None and second is not None
    second["valid"] = first["valid"] & second["valid"]
    second["not_valid"] = [a or b for a, b in zip(first["not_valid"], second["not_valid"])]
    return second


def gate_steady(steady: pd.DataFrame | None, validity: pd.DataFrame | None) -> pd.DataFrame | None:
    """The steady-state verdict marked not valid where its trace jumped or its level is far above the fresh drive's
    (``steady_trace_jump`` / ``steady_vs_fresh`` failed: ``valid`` False, ``not_valid``), and not shown to be the
    steady state where the window rule was met but a check of :data:`STEADY_SHOWN_CHECKS` warns (``steady_shown``
    False, ``not_shown``: each warning's evidence). The verdict says which: 'not valid: window rule met at round 7
    (rounds 3-7); steady_vs_fresh failed', 'not shown: ...; steady_window_trend, steady_round_length warn'; a verdict
    whose window rule was not met stays as it was."""
    if steady is None or steady.empty or "workload" not in steady.columns:
        return steady
    fresh, jump = failed(validity, "steady_vs_fresh"), failed(validity, "steady_trace_jump")
    out = _gate(steady, {**fresh, **jump}, (), "steady_trace_jump", key="workload")
    assert out is not None
    only_fresh = [(str(h), str(w)) in fresh and (str(h), str(w)) not in jump
                  for h, w in zip(out["host"], out["workload"])]  # S12-loop9 4: its own way out
    out["not_valid"] = [_reason(fresh[(str(h), str(w))], "steady_vs_fresh") if o else nv
                        for o, nv, h, w in zip(only_fresh, out["not_valid"], out["host"], out["workload"])]
    warned: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for check in STEADY_SHOWN_CHECKS:
        for key, evidence in failed(validity, check, WARN).items():
            warned.setdefault(key, []).append((check, evidence))
    met = out["ss_achieved"].fillna(False).astype(bool) if "ss_achieved" in out.columns else \
        pd.Series(False, index=out.index)
    keys = [(str(h), str(w)) for h, w in zip(out["host"], out["workload"])]
    out["steady_shown"] = [bool(m and ok and k not in warned) for m, ok, k in zip(met, out["valid"], keys)]
    out["not_shown"] = ["" if shown else nv if nv else "; ".join(f"{c}: {e}" for c, e in warned[k]) if k in warned
                        else str(v) for shown, nv, k, v in zip(out["steady_shown"], out["not_valid"], keys,
                                                                out.get("verdict", pd.Series("", index=out.index)))]
    if "verdict" in out.columns:
        out["verdict"] = [_steady_verdict(v, bool(m), nv, [c for c, _ in warned.get(k, [])], bad_checks(validity, k))
                          for v, m, nv, k in zip(out["verdict"], met, out["not_valid"], keys)]
    return out



def bad_checks(validity: pd.DataFrame | None, key: tuple[str, str]) -> list[str]:
    """The steady-state checks that failed for (host, workload), by name."""
    return [c for c in ("steady_trace_jump", "steady_vs_fresh") if key in failed(validity, c)]


def _steady_verdict(verdict: str, met: bool, not_valid: str, warned: list[str], fails: list[str]) -> str:
    """A verdict that says steady state only where it is shown (:func:`gate_steady`)."""
    rule = str(verdict).replace("steady state at round", "window rule met at round", 1).replace("(window rounds",
                                                                                               "(rounds", 1)
    if not_valid:
        return f"not valid: {rule}; {', '.join(fails)} failed" if met else f"not valid ({verdict})"
    if met and warned:
        return f"not shown: {rule}; {', '.join(warned)} warn{'s' if len(warned) == 1 else ''}"
    return str(verdict)


def valid_rows(df: pd.DataFrame | None) -> pd.DataFrame | None:
    """The rows of a gated table whose finding holds (``valid`` not False); the table itself when ungated."""
    if df is None or "valid" not in df.columns:
        return df
    return df[~df["valid"].eq(False)]


def not_valid_reasons(df: pd.DataFrame | None, host: str, rw: str, key: str = "rw") -> list[str]:
    """The distinct ``not_valid`` reasons of one device x workload of a gated table (empty when it holds)."""
    if df is None or df.empty or "not_valid" not in df.columns or key not in df.columns:
        return []
    sel = df[(df["host"].astype(str) == str(host)) & (df[key].astype(str) == str(rw))]
    return list(dict.fromkeys(r for r in sel["not_valid"] if isinstance(r, str) and r))


def valid_keys(knees: pd.DataFrame | None) -> set[tuple[str, str]]:
    """(host, rw) of the knee rows whose fit holds (gated by :func:`gate_knees`, or ungated)."""
    if knees is None or knees.empty:
        return set()
    ok = valid_rows(knees)
    assert ok is not None
    return {(str(h), str(r)) for h, r in zip(ok["host"], ok["rw"])}


def generator_failed(validity: pd.DataFrame | None, experiment: str) -> dict[str, str]:
    """{host: evidence} of the devices whose load_generator_cpu failed for ``experiment`` (subject '<experiment>' or
    '<experiment> (ioarrive)'): their points' latencies describe the generator, not the device."""
    if validity is None or validity.empty:
        return {}
    rows = validity[(validity["check"] == "load_generator_cpu") & (validity["status"] == FAIL)
                    & validity["subject"].astype(str).str.fullmatch(rf"{re.escape(experiment)}( \(ioarrive\))?")]
    return {str(r["host"]): str(r["evidence"]) for _, r in rows.iterrows()}
