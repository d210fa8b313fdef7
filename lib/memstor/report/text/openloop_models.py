"""Report text, open loop: the queueing models (memstor.analysis.load_latency.models: M/M/1, M/D/1, M/G/1, M/G/c
against the measured mean latency) as a display table, why it is empty, and the sentences of which model explains
the measured latency best and where each breaks. Units: µs, % error, ρ = λ·S."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from memstor.analysis.validity.gate import valid_rows
from memstor.core.fmt import fmt_number
from memstor.core.schema import truthy
from memstor.report.text.loadgen import held_points
from memstor.report.text.openloop_cells import _ol_float, _ol_fmt, _ol_rows, _ol_u

#: The queueing models of memstor.analysis.openloop.model_table: (column prefix, name).
OPEN_LOOP_MODELS = (("mm1", "M/M/1"), ("md1", "M/D/1"), ("mg1", "M/G/1"), ("mgc", "M/G/c"))
#: A model is said to break where |model − measured| / measured passes this (%).
MODEL_BREAK_PCT = 20.0


def _model_cell(pred, err, rho) -> str:
    """'predicted µs (error %)'; '– (ρ ≥ 1: no steady state)' where the model has none."""
    p, e = _ol_float(pred), _ol_float(err)
    if p != p:
        return "– (ρ ≥ 1: no steady state)" if _ol_float(rho) >= 1 else "–"
    return fmt_number(p) if e != e else f"{fmt_number(p)} ({e:+.1f} %)"


def models_display(models: pd.DataFrame) -> pd.DataFrame:
    """The model table (memstor.analysis.load_latency.models) for people, one row per open-loop point:
    offered load (% of X_ref), achieved IOPS, ρ₁ = λ·S, the measured mean latency (µs), each model's mean
    response time in µs with its error 100 (model − measured) / measured in %, the fitted c of M/G/c, the
    service time S (µs) and its cs², and the overloaded flag (not a steady state: left out of the fit)."""
    names = [f"{name} (µs, error)" for _, name in OPEN_LOOP_MODELS]
    cols = ["device", "workload", "offered load (% of X_ref)", "achieved (IOPS)", "ρ₁ = λ·S", "measured (µs)",
            *names, "c", "S (µs)", "cs²", "flag"]
    models = valid_rows(models)  # no model against a loop that was not open (memstor.analysis.validity.gate)
    if models is None or len(models) == 0 or "rho_1" not in models.columns:
        return pd.DataFrame(columns=cols)
    m = models.reset_index(drop=True)
    out = {
        "device": m["host"].astype(str), "workload": m["rw"],
        "offered load (% of X_ref)": [("–" if _ol_float(v) != _ol_float(v) else f"{_ol_float(v):g}")
                                     for v in m["utilisation_pct"]],
        "achieved (IOPS)": m["achieved_iops"].map(_ol_fmt),
        "ρ₁ = λ·S": [("–" if _ol_float(v) != _ol_float(v) else f"{_ol_float(v):.2f}") for v in m["rho_1"]],
        "measured (µs)": m["lat_mean_us"].map(_ol_fmt),
    }
    for (key, _), name in zip(OPEN_LOOP_MODELS, names):
        rho = m["rho_c"] if key == "mgc" else m["rho_1"]
        out[name] = [_model_cell(p, e, r) for p, e, r in zip(m[f"{key}_us"], m[f"{key}_err_pct"], rho)]
    out["c"] = m["servers_c"].map(lambda v: "–" if _ol_float(v) != _ol_float(v) else f"{int(_ol_float(v))}")
    out["S (µs)"] = m["service_mean_us"].map(_ol_fmt)
    out["cs²"] = m["service_cs2"].map(lambda v: "–" if _ol_float(v) != _ol_float(v) else f"{_ol_float(v):.2f}")
    over = m["overloaded"] if "overloaded" in m.columns else pd.Series([False] * len(m))
    out["flag"] = ["overloaded (not fitted)" if truthy(o) else "ok" for o in over]
    return pd.DataFrame(out)[cols]


def models_empty(models: pd.DataFrame | None, load: pd.DataFrame | None) -> str:
    """Why the queueing-model table has no row, per device x workload of the open loop (the table's ``empty``
    text): no open-loop run; no service time (no QD1 point of the queue-depth sweep for the workload); or the
    open loop did not hold (memstor.analysis.validity.gate: no model against a loop that was not open) — with
    how many of its offered rates held. "" where some model row is shown."""
    shown = valid_rows(models)
    if shown is not None and len(shown):
        return ""
    if load is None or len(load) == 0:
        return "no open-loop run in this data (memstor run fio-load-latency)"
    held, no_service = [], []
    for (host, rw), g in load.groupby(["host", "rw"], sort=True):
        name = f"{host} {rw}" if load["host"].nunique() > 1 else str(rw)
        has_model = models is not None and len(_ol_rows(models, str(host), rw)) > 0
        if not has_model:
            no_service.append(name)
        else:
            ok = int(held_points(g.assign(valid=True)).sum())
            held.append(f"{name}: {ok} of {len(g)} offered rates held")
    said = []
    if held:
        said.append("the open loop did not hold (" + "; ".join(held) + "), and no model is fitted to a loop "
                    "that was not open")
    if no_service:
        said.append("no service time: no QD1 point of the queue-depth sweep for " + ", ".join(no_service))
    return "; ".join(said)


def _model_scores(ok: pd.DataFrame) -> list:
    """Per model: (prefix, name, points predicted, steady points, mean |error| %, worst |error| %)."""
    out = []
    for key, name in OPEN_LOOP_MODELS:
        err = pd.to_numeric(ok[f"{key}_err_pct"], errors="coerce").to_numpy(float) if len(ok) else np.array([])
        fin = np.isfinite(err)
        mean = float(np.mean(np.abs(err[fin]))) if fin.any() else math.nan
        worst = float(np.max(np.abs(err[fin]))) if fin.any() else math.nan
        out.append((key, name, int(fin.sum()), len(ok), mean, worst))
    return out


def _where_off(ok: pd.DataFrame, key: str) -> str | None:
    """Where the model is off by more than MODEL_BREAK_PCT at the steady points it predicts: 'from u70 on
    (ρ₁ = 0.62: +35 %)' when every predicted point from there on is, else 'at u10 (-33 %), u98 (+24 %)';
    None when it never is."""
    pts = ok.sort_values("utilisation_pct")
    err = pd.to_numeric(pts[f"{key}_err_pct"], errors="coerce").to_numpy(float)
    pred = np.isfinite(err)
    off = pred & (np.abs(err) > MODEL_BREAK_PCT)
    if not off.any():
        return None
    first = int(np.argmax(off))
    r = pts.iloc[first]
    if np.all(off[first:][pred[first:]]) and first > 0:
        return f"from {_ol_u(r['utilisation_pct'])} on (ρ₁ = {_ol_float(r['rho_1']):.2f}: {err[first]:+.0f} %)"
    utils = pts["utilisation_pct"].to_numpy()[off]
    if off.sum() > 3:
        k = int(np.nanargmax(np.where(off, np.abs(err), -1.0)))
        return (f"at {int(off.sum())} of {int(pred.sum())} steady points ({_ol_u(utils[0])} to {_ol_u(utils[-1])}; "
                f"worst {err[k]:+.0f} % at {_ol_u(pts['utilisation_pct'].iloc[k])})")
    return "at " + ", ".join(f"{_ol_u(u)} ({e:+.0f} %)" for u, e in zip(utils, err[off]))


def _model_sentences(m: pd.DataFrame) -> list:
    """Which model explains the measured mean latency best, and where each breaks."""
    if m.empty or "rho_1" not in m.columns:
        return ["No queueing model: no service time (no QD1 point in fio-queue-depth and no json+ latency "
                "histogram of an open-loop point)."]
    ok = m[[not truthy(v) for v in m["overloaded"]]] if "overloaded" in m.columns else m
    s_us, cs2 = _ol_float(m["service_mean_us"].iloc[0]), _ol_float(m["service_cs2"].iloc[0])
    c = _ol_float(m["servers_c"].iloc[0])
    source = str(m["service_source"].iloc[0]).split(":")[0] if "service_source" in m.columns else ""
    head = f"Queueing models, with S = {fmt_number(s_us)} µs and cs² = {cs2:.2f}" + (
        f" from the {source}" if source and source != "nan" else "")
    scores = [sc for sc in _model_scores(ok) if sc[2] > 0]
    if not scores:
        return [head + ": no steady point to compare them with."]
    key, name, n, total, mean, _ = min(scores, key=lambda sc: (-sc[2], sc[4]))
    label = f"M/G/c with c = {int(c)}" if key == "mgc" and c == c else name
    if mean <= MODEL_BREAK_PCT:
        out = [f"{head}: {label} explains the mean latency best (mean |error| {mean:.1f} % over {n} of {total} "
               "steady points)."]
    else:
        out = [f"{head}: {label} comes closest, but no model explains the mean latency well (mean |error| "
               f"{mean:.1f} % over {n} of {total} steady points)."]
    lat = pd.to_numeric(ok["lat_mean_us"], errors="coerce")
    if lat.notna().any() and s_us == s_us and float(lat.min()) < 0.9 * s_us:
        out.append(f"The service time S = {fmt_number(s_us)} µs is above the lowest mean latency measured here "
                   f"({fmt_number(float(lat.min()))} µs): it does not describe this run (it comes from another "
                   "run or device state), and every model inherits that bias.")
    rho = pd.to_numeric(ok["rho_1"], errors="coerce")
    if (rho >= 1).any():
        top = ok.loc[rho.idxmax()]
        out.append(f"M/M/1, M/D/1 and M/G/1 have no steady state from ρ₁ = λ·S = 1 on "
                   f"({fmt_number(1e6 / s_us)} IOPS), yet the device served {_ol_fmt(top['achieved_iops'])} IOPS "
                   f"({_ol_u(top['utilisation_pct'])}, ρ₁ = {_ol_float(top['rho_1']):.1f}) without falling behind: "
                   "it is not one server; it works on several I/Os at once (flash channels, dies, queues).")
    for k, nm in (("mm1", "M/M/1"), ("mg1", "M/G/1")):
        where = _where_off(ok, k)
        if where is not None:
            out.append(f"{nm} is off by more than {MODEL_BREAK_PCT:g} % {where}.")
    if c == c:
        rms = _ol_float(m["fit_rms_err_pct"].iloc[0]) if "fit_rms_err_pct" in m.columns else math.nan
        fit = f"fitted to the steady points, rms error {rms:.1f} %" if rms == rms else "not fitted: too few points"
        what = f"M/G/c's c = {int(c)} ({fit}) is an effective parallelism of the model, not a count of flash channels"
        where = _where_off(ok, "mgc")
        worst = next((sc[5] for sc in scores if sc[0] == "mgc"), math.nan)
        if where is not None:
            out.append(f"{what}; it is off by more than {MODEL_BREAK_PCT:g} % {where}.")
        elif worst == worst:
            out.append(f"{what}; it stays within {worst:.0f} % at every steady point it predicts.")
    return out
