"""Report text, queueing: Little's law, the knee of the queue-depth sweep (two-asymptote fit and the
closed-system bound), the adaptive grid and the fleet's cluster rows as display tables, and their sentences
(markdown). Units in the headers: IOPS, µs, I/Os."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from memstor.analysis.adaptive_grid import knee_of
from memstor.analysis.load_latency import LT_POINT_PREFIX
from memstor.analysis.spread import Spread, flat_before_deepest, pure_iops, run_spread
from memstor.analysis.steady_state import OPEN_EXPERIMENTS
from memstor.analysis.validity.gate import WAY_OUT
from memstor.analysis.validity.rows import num
from memstor.core.fmt import fmt_interval, fmt_number, fmt_se, md_escape
from memstor.core.schema import missing
from memstor.core.units import size_text
from memstor.report.text.headline_table import SECTION_REF
from memstor.report.text.workloads import sweep_contradicted

#: The start of the knee gate's way out (memstor.analysis.validity.gate.WAY_OUT['knee']) that knee_sentences leaves
#: out: the sentence states the measured bound itself right after it.
KNEE_BOUND_ADVICE = "read the measured bound (latency at the smallest N, highest IOPS measured)"


def little_display(little: pd.DataFrame) -> pd.DataFrame:
    """Little's-law table with short headers and units, for the report: N, X, R (means over n runs),
    X·R, the residual (judged against the ±5 % band) and the flag with its reason."""
    if little.empty:
        return little
    def pct(v):
        return "–" if missing(v) else f"{v:+.1f}"
    return pd.DataFrame({
        "device": little["host"], "experiment": little["experiment"], "workload": little["rw"]
        + little["rwmixread"].map(lambda m: "" if missing(m) else f" {int(m)}% rd"),
        "bs": little["bs_bytes"].map(lambda b: "?" if missing(b) else f"{int(b) // 1024}K"),
        "QD×jobs": [f"{int(q)}×{int(j)}" for q, j in zip(little["iodepth"], little["numjobs"])],
        "n": little["n"], "N (I/Os)": little["outstanding_io"].map(lambda v: f"{v:g}"),
        "X (IOPS)": little["iops"].map(fmt_number), "R (µs)": little["lat_mean_us"].map(fmt_number),
        "X·R (I/Os)": little["littles_outstanding"].map(fmt_number),
        "residual (%)": little["residual_pct"].map(pct),
        "flag": [f"flagged: {r}" if f else "ok" for f, r in zip(little["flagged"], little["reason"])],
    })


def knee_display(knees: pd.DataFrame) -> pd.DataFrame:
    """Knee table with short headers and units: the two-asymptote fit (parameters ± standard error, N*
    with its 95 % interval; the fitted ceiling named X_fit; '– (not valid)' where the checks did not let the fit
    stand) and the closed-system bound N* ≥ X_best R(N_min) from the measured inputs (X_best: the highest IOPS the
    sweep measured, any job count; a lower bound) — named apart from each other and from the open loop's X_ref."""
    if knees.empty:
        return knees
    k = knees.copy()
    for col in ("R_min_fit_us", "X_max_fit_iops", "N_star_fit", "r2", "R_min_meas_us", "X_max_meas_iops",
                "N_star_bound", "R_min_fit_se_us", "X_max_fit_se_iops", "N_star_fit_ci_low", "N_star_fit_ci_high"):
        if col not in k.columns:
            k[col] = np.nan
    out = pd.DataFrame({
        "host": k["host"], "workload": k["rw"], "points": k["points"], "N range (I/Os)": k["N_range"],
        "R_min fit (mean, µs)": [fmt_se(v, e) for v, e in zip(k["R_min_fit_us"], k["R_min_fit_se_us"])],
        "X_fit (IOPS)": [fmt_se(v, e) for v, e in zip(k["X_max_fit_iops"], k["X_max_fit_se_iops"])],
        "N* fit (I/Os, 95 % CI)": [fmt_interval(v, lo, hi) for v, lo, hi in
                                   zip(k["N_star_fit"], k["N_star_fit_ci_low"], k["N_star_fit_ci_high"])],
        "R²": k["r2"].map(lambda v: "–" if missing(v) else f"{v:.3f}"),
        "mean R at N_min (µs)": k["R_min_meas_us"],
        "X_best (IOPS)": [_best(r)[0] for _, r in k.iterrows()],
        "N* bound (I/Os)": [f"≥ {floor_text(v)}" if not missing(v) else "–" for v in k["N_star_bound"]],
    })
    gated = k["not_valid"].map(lambda v: isinstance(v, str) and bool(v)) if "not_valid" in k else k["host"] == ""
    out.loc[gated.to_numpy(), ["R_min fit (mean, µs)", "X_fit (IOPS)", "R²"]] = "– (not valid)"
    # a fit whose whole N* interval lies below the measured bound is not a finding (knee_sentences): the table
    # says so too (third read R-1cpu M6: its N* 7.11 [5.06, 10.0] printed unmarked beside 'not a finding')
    below = (pd.to_numeric(k["N_star_bound"], errors="coerce") > pd.to_numeric(k["N_star_fit_ci_high"],
                                                                            errors="coerce")) & ~gated
    out.loc[below.to_numpy(), ["X_fit (IOPS)", "N* fit (I/Os, 95 % CI)"]] = "– (not a finding: below the bound)"
    over = k.apply(measured_above_fit, axis=1).astype(bool) & ~gated & ~below
    out.loc[over.to_numpy(), ["X_fit (IOPS)", "N* fit (I/Os, 95 % CI)"]] = "– (not a finding: below X_best)"
    # S22-cpu1 2: a fitted N* below the measured bound whose interval still reaches it: marked, not the knee to quote
    under = (pd.to_numeric(k["N_star_bound"], errors="coerce") > pd.to_numeric(k["N_star_fit"], errors="coerce")) \
        & ~gated & ~below & ~over
    out.loc[under.to_numpy(), "N* fit (I/Os, 95 % CI)"] = out.loc[under.to_numpy(), "N* fit (I/Os, 95 % CI)"] + \
        " (below the bound)"
    return out


def grid_display(grid: pd.DataFrame) -> pd.DataFrame:
    """The adaptive queue-depth grid's points (memstor.analysis.adaptive_grid.grid_table) for the report: device,
    workload, depth, the step that added the point, IOPS and mean latency, and why it was added."""
    if grid is None or grid.empty:
        return pd.DataFrame()
    return pd.DataFrame({
        "host": grid["host"], "workload": grid["rw"], "depth": grid["iodepth"], "step": grid["step"],
        "IOPS": grid["iops"].map(fmt_number), "mean latency (µs)": grid["lat_mean_us"].map(fmt_number),
        "why it was added": grid["grid_note"],
    })


def cluster_display(cluster: pd.DataFrame | None, fio: pd.DataFrame | None) -> pd.DataFrame:
    """Fleet runs for the report: one row per fleet x grid point x direction, each host's IOPS side by side (from
    its own table, ``fio``) and the cluster's summed IOPS and MB/s and its p50/p99 (µs) from the hosts' merged
    json+ bins (memstor.analysis.cluster)."""
    if cluster is None or cluster.empty:
        return pd.DataFrame()
    rows = []
    for _, c in cluster.iterrows():
        hosts = str(c["hosts"]).split()
        each = []
        for h in hosts:
            sel = fio[(fio["host"] == h) & (fio["point"] == c["point"]) & (fio["direction"] == c["direction"])] \
                if fio is not None and not fio.empty else fio
            each.append(f"{md_escape(h)} {fmt_number(sel['iops'].iloc[0])}" if sel is not None and len(sel) else
                        f"{md_escape(h)} –")
        rows.append({"fleet": c["fleet"], "workload": f"{c['rw']} {c['bs']} QD{int(c['iodepth'])}×{int(c['numjobs'])}",
                     "dir": c["direction"], "IOPS per host": ", ".join(each), "cluster IOPS": fmt_number(c["iops"]),
                     "cluster MB/s": fmt_number(c["bw_MBps"]), "p50 (µs)": fmt_number(c["clat_p50_us"]),
                     "p99 (µs)": fmt_number(c["clat_p99_us"])})
    return pd.DataFrame(rows)


def grid_sentences(grid: pd.DataFrame) -> list:
    """One sentence per device x workload of an adaptive grid (markdown): depths measured, how many the knee
    added, and the plateau and knee N* = X_plateau · R(depth 1) the rule found in them (X_plateau: the plateau's
    throughput, named apart from the knee fit's X_fit and the sweep's best X_best)."""
    out: list[str] = []
    if grid is None or grid.empty:
        return out
    for (host, rw), g in grid.groupby(["host", "rw"], sort=True):
        depths = ", ".join(str(int(d)) for d in g["iodepth"])
        knee = int((g["step"] == "knee").sum())
        k = knee_of(zip(g["iodepth"], g["iops"], g["lat_mean_us"]))
        found = (f"plateau from depth {k.plateau_from}, knee N* = X_plateau · R(depth 1) = {k.n_star:.1f} I/Os"
                 if k.plateau_from is not None else f"{k.done}: the grid stopped at its budget or depth limit")
        out.append(f"**{md_escape(str(host))}, {rw}**: the adaptive grid measured {len(g)} depths ({depths}), "
                   f"{knee} of them between two depths around the knee; {found}.")
    return out


def name_ceilings(evidence: str) -> str:
    """A knee check's evidence (memstor.analysis.validity) with its ceilings named as the report names them:
    'fitted X_max' -> 'X_fit (fitted ceiling)' and 'highest measured' -> "the one-job sweep's highest" (the checks'
    measured figure, X_max_meas_iops: S12-loop 3, 'X_best (highest measured) 149,970' beside 'X_best = 169,769 at
    QD32x4', the sweep's most at any job count), so that X_max never stands for three numbers (the fit's ceiling, the
    sweep's best, the open loop's reference) and X_best for two); 'highest measured 271,713 IOPS (at QD32x4)' ->
    'X_best 271,713 IOPS (at QD32x4)', knee_ceiling's figure where a point with more jobs is the sweep's most
    (S17-loop 1)."""
    named = re.sub(r"highest measured ([\d,.]+ IOPS \(at )", r"X_best \1", evidence)
    return (named.replace("fitted X_max", "X_fit (fitted ceiling)")
            .replace("highest measured", "the one-job sweep's highest"))


def _best(k: pd.Series) -> tuple[float, str]:
    """(X_best in IOPS, ' at QD32x4' or ''): the most the sweep measured (memstor.analysis.points.with_best_measured's
    X_best_iops, any job count), the one-job sweep's highest in older tables."""
    best = k.get("X_best_iops")
    if missing(best):
        return float(k["X_max_meas_iops"]), ""
    at = k.get("X_best_at")
    return float(best), (f" at {at}" if isinstance(at, str) and at else "")


def _measured(k: pd.Series) -> str:
    """'X_best = 75,231 IOPS at QD32x4, mean latency 52.6 µs at the smallest N': the sweep's measured inputs."""
    best, at = _best(k)
    return f"X_best = {fmt_number(best)} IOPS{at}, mean latency {fmt_number(k['R_min_meas_us'])} µs at the smallest N"


def measured_above_fit(k: pd.Series) -> bool:
    """The sweep measured X_best (IOPS, any job count) above the fitted ceiling's 95 % band, X_fit + 1.96 SE (fifth
    reads R-1cpu M1, R-def p6: N* 7.11 and 6.27 printed as findings beside 79,964 and 63,736 IOPS above their fits'
    67,408 and 62,171): the fitted ceiling is then below what the sweep measured, as where N* is below the bound."""
    best, fit, se = num(_best(k)[0]), num(k.get("X_max_fit_iops")), num(k.get("X_max_fit_se_iops"))
    return best is not None and fit is not None and best > fit + 1.96 * (se or 0.0)


def _apart(a: float, b: float) -> int:
    """The fewest decimals (1-4) at which a and b print differently (R-1cpu C7: N* ≥ 10.04 above an interval's top
    10.005 printed '10.0' beside '10.0')."""
    return next((d for d in range(1, 5) if f"{a:.{d}f}" != f"{b:.{d}f}"), 4)


def floor_text(v: float, digits: int = 1) -> str:
    """A lower bound to ``digits`` decimals, rounded down: a bound printed above its value is stronger than the data
    (S22-loop 9: 2.454 printed 'N* ≥ 2.5')."""
    return f"{math.floor(float(v) * 10 ** digits + 1e-9) / 10 ** digits:.{digits}f}"


def _bound(k: pd.Series, rising: bool, digits: int = 1) -> str:
    """'from the measured inputs (...) the closed-system bound gives N* ≥ b' (b to ``digits`` decimals): X_best is at
    most the ceiling, so X_best · R(N_min) bounds the knee from below only (no upper bound where it still rises)."""
    best, at = _best(k)
    if missing(k.get("N_star_bound")) and isinstance(k.get("bound_void"), str) and k["bound_void"]:
        return f"the closed-system bound X_best · R(N_min) does not apply here: {k['bound_void']}"
    why = ("the sweep had not levelled off, so the data set no upper bound" if rising else
           "X_best is at most the ceiling")
    return (f"from the measured inputs (mean latency {fmt_number(k['R_min_meas_us'])} µs at the smallest N, X_best = "
            f"{fmt_number(best)} IOPS{at}, the most the sweep measured) the closed-system bound gives "
            f"N* ≥ {floor_text(k['N_star_bound'], digits)} ({why}{_one_job_bound(k)})")


def _one_job_bound(k: pd.Series) -> str:
    """'; X_best is one run with 4 jobs: from the one-job sweep's most, 197,757 IOPS, N* ≥ 2.1' where X_best came from
    more jobs than the fitted one-job sweep and that sweep's most (X_max_meas_iops) is lower (nineteenth read S19-loop
    8: 'N* ≥ 3.0' rested on a 4-job single run the headline said may be high by 1.45x); '' otherwise."""
    jobs = re.search(r"QD\d+x(\d+)", str(k.get("X_best_at") or ""))
    one = pd.to_numeric(pd.Series([k.get("X_max_meas_iops")]), errors="coerce").iloc[0]
    if not jobs or int(jobs.group(1)) <= 1 or pd.isna(one) or one >= float(k["X_best_iops"]):
        return ""
    return (f"; X_best is one run with {jobs.group(1)} jobs: from the one-job sweep's most, {fmt_number(one)} IOPS, "
            f"N* ≥ {floor_text(one * float(k['R_min_meas_us']) / 1e6)}")


def knee_sentences(knees: pd.DataFrame, points: pd.DataFrame | None = None) -> list:
    """One sentence per host x workload stating N* with its inputs (markdown). The fitted N* is a finding only
    where the checks let it stand (not_valid empty) and its 95 % interval reaches the measured lower bound
    X_best · R(N_min) (an interval wholly below what the sweep measured is the fit's, not the device's). A sweep the
    same one-job job beat elsewhere (knee_sweep_agrees failed: the gate's not_valid ends with its way out) gets no
    knee at all, neither fitted nor bounded: its measured points stay."""
    out = []
    for _, k in knees.iterrows():
        who = f"**{md_escape(str(k['host']))}, 4K {k['rw']}**"
        if missing(k.get("N_star_fit")) and missing(k.get("R_min_meas_us")):
            # nothing was fitted or bounded (CI 2026-11-28: a 2-point sweep the gate also marked not valid read
            # the absent measured inputs): the note says why; the gate's reason follows
            why = _text(k.get("not_valid"))
            out.append(f"{who}: no fit — {_text(k.get('note')) or 'too few points'}" + (f"; {why}" if why else "")
                       + "." + _doubt(points, k))
            continue
        if isinstance(k.get("not_valid"), str) and WAY_OUT["knee_sweep_agrees"] in k["not_valid"]:
            out.append(f"{who}: no knee is stated — the sweep itself is in doubt: "
                       f"{k['not_valid'].removeprefix('not valid: ')}. Its measured points stay ({_measured(k)}); no "
                       "N* is read from them.")
            continue
        if isinstance(k.get("not_valid"), str) and k["not_valid"]:
            # the gate's way out 'read the measured bound (...)' left out: the sentence gives that bound next
            why = name_ceilings(k["not_valid"].removeprefix("not valid: ")).replace(f"{KNEE_BOUND_ADVICE}; ", "")
            rising = "keeps rising" in k["not_valid"]
            flat = flat_words(points, str(k["host"]), str(k["rw"])) if rising else ""
            out.append(f"{who}: the fitted knee is not a finding here — {why}. Instead, "
                       f"{_bound(k, rising)}{_fit_below(k, why)}." + (f" Yet {flat}." if flat else "")
                       + _doubt(points, k))
            continue
        if missing(k.get("N_star_fit")):
            out.append(f"{who}: no fit — {_text(k.get('note')) or 'too few points'}.")
            continue
        fit = (f"the two-asymptote fit gives N* = X_fit × R_min = {fmt_number(k['X_max_fit_iops'])} IOPS × "
               f"{fmt_number(k['R_min_fit_us'])} µs = ")
        shown = fmt_interval(k["N_star_fit"], k.get("N_star_fit_ci_low"), k.get("N_star_fit_ci_high"))
        fit_of = f"{int(k['points'])} points, N = {k['N_range']}, R² = {k['r2']:.3f}"
        high = k.get("N_star_fit_ci_high")
        if not missing(high) and not missing(k.get("N_star_bound")) and float(k["N_star_bound"]) > float(high):
            s = (f"{who}: {fit}{shown} ({fit_of}; the interval is from the fit's standard errors only) — not a "
                 f"finding: {_bound(k, False, d := _apart(float(k['N_star_bound']), float(high)))}, above the "
                 f"whole interval (its top {float(high):.{d}f}), so the fitted ceiling is below what "
                 f"the sweep measured; read the measured bound.")
        elif measured_above_fit(k):
            s = (f"{who}: {fit}{shown} ({fit_of}; the interval is from the fit's standard errors only) — not a "
                 f"finding: the sweep measured {fmt_number(_best(k)[0])} IOPS{_best(k)[1]}, above the fitted "
                 f"ceiling's 95 % band ({fmt_number(k['X_max_fit_iops'] + 1.96 * k['X_max_fit_se_iops'])} IOPS), so "
                 f"the fitted ceiling is below what the sweep measured; {_bound(k, False)}.")
        else:
            bound = num(k.get("N_star_bound"))
            below = bound is not None and bound > float(k["N_star_fit"])  # S22-cpu1 2: no bold below the bound
            s = (f"{who}: {fit}{shown} I/Os in flight" if below else f"{who}: {fit}**{shown} I/Os in flight**") + \
                f" (95 % interval; {fit_of}); {_bound(k, False)}."
            one = num(k.get("X_max_meas_iops"))
            one = None if one is None or not _one_job_bound(k) else one * float(k["R_min_meas_us"]) / 1e6
            if bound is not None and bound > float(k["N_star_fit"]):  # S19-1cpu 3: 7.88 printed beside ≥ 8.4
                s += (f" The fit's N* {fmt_number(k['N_star_fit'])} is below this bound, which its interval still "
                      "reaches" + (f", and above the one-job sweep's, {floor_text(one)}: quote N* ≥ {floor_text(one)} (≥ "
                                   f"{floor_text(bound)} if the many-job run is not high)."
                                   if one is not None and one <= float(k["N_star_fit"]) else
                                   f": quote N* ≥ {floor_text(bound)}."))
        if _text(k.get("note")):
            s += f" Note: {k['note']}."
        out.append(s + _doubt(points, k))
    return out


#: The fitted N* and its interval a withheld knee's gate text names ('N* 1.54 with 95 % interval [0.282, 8.43] ...').
_GATE_FIT = re.compile(r"\bN\* ([0-9][0-9,]*(?:\.[0-9]+)?) with 95 % interval \[[^,\]]*, ([0-9][0-9,]*(?:\.[0-9]+)?)\]")


def _fit_below(k: pd.Series, why: str) -> str:
    """', above the withheld fit's N* 1.54: the bound rejects that fit too' where the gate's text names a fitted N*
    whose whole 95 % interval lies below the measured bound (S12-bare 7: the fit's N* 1.54 printed beside N* ≥ 3.7
    with nothing said); where only the point estimate is below it, that the bound lies within the interval and, where
    the sweep measured above the fitted ceiling's band, that this is what rejects the fit (tenth read S13-bare 4: the
    bound 3.7 inside [0.282, 8.43] was said to reject the fit); else ''."""
    m, bound = _GATE_FIT.search(why), num(k.get("N_star_bound"))
    if not m or bound is None or float(m.group(1).replace(",", "")) >= bound:
        return ""
    if float(m.group(2).replace(",", "")) < bound:
        return f", above the withheld fit's N* {m.group(1)}: the bound rejects that fit too"
    # S19-bare 3: 'the bound does not reject the fit' lent a withheld fit support its failed checks deny
    return (", within the withheld fit's 95 % interval: the bound does not settle it"  # S20-bare 4: no N* repeated
            + ("; its ceiling below what the sweep measured rejects it" if measured_above_fit(k) else
               "; the fit stays withheld for its failed checks"))


def _text(v) -> str:
    """A table cell as text: '' for NaN, None or a non-string."""
    return v if isinstance(v, str) else ""


def _doubt(points: pd.DataFrame | None, k: pd.Series) -> str:
    """' The sweep itself is in doubt: the same one-job job measured ...' where another experiment measured the
    sweep's own kind of point beyond the run-to-run spread above it (workloads.sweep_contradicted; third read
    R-loop 2.1, S7-bare B-3: the knee read a sweep 2x below the same job elsewhere), else ''."""
    said = sweep_contradicted(points, str(k["host"]), str(k["rw"])) if points is not None else ""
    return f" The sweep itself is in doubt:{said.removeprefix('; yet')}." if said else ""


def _bs(v) -> str:
    """'128 KiB ' (a point's block size before its workload, S7-bare C-7), '' where not recorded."""
    return "" if missing(v) else f"{size_text(int(v))} "


def little_sentences(little: pd.DataFrame, most: int = 3) -> list[str]:
    """One sentence per device: at how many points X·R stayed within the ±5 % band of N, the residuals' range,
    and the flagged points (at most `most` named, each with its reason) — the report's Little's law in brief."""
    out: list[str] = []
    if little is None or little.empty:
        return out
    for host, g in little.groupby("host", sort=True):
        res = g["residual_pct"].dropna()
        flagged = g[g["flagged"].fillna(False).astype(bool)]
        span = f" (residuals {res.min():+.1f} to {res.max():+.1f} %)" if len(res) else ""
        text = f"**{host}**: X·R within the ±5 % band of N at {len(g) - len(flagged)} of {len(g)} points{span}"
        if len(flagged):
            named = "; ".join(f"{_bs(r.bs_bytes)}{r.rw} QD{int(r.iodepth)}×{int(r.numjobs)} in {r.experiment}: {r.reason}"
                              for r in flagged.head(most).itertuples())
            more = f" and {len(flagged) - most} more" if len(flagged) > most else ""
            text += f"; flagged: {named}{more}"
        out.append(text + ".")
    return out


def knee_rows(knees: pd.DataFrame | None, host: str, rws: set) -> pd.DataFrame:
    """The knee table's rows (memstor.analysis.points: N_star_bound in I/Os, NaN where bound_void says the
    measured bound does not apply) of `host` for the workloads `rws`; empty where there is no table."""
    if knees is None or len(knees) == 0 or not {"host", "rw", "N_star_bound"} <= set(knees.columns):
        return pd.DataFrame(columns=["N_star_bound"])
    return knees[(knees["host"].astype(str) == host) & knees["rw"].isin(rws)]


#: Another closed run within this share of the sweep's most IOPS, at most this share of its I/Os in flight, says
#: the sweep's latency at its most came with its depth, not with the throughput (S10-bare 9).
NEAR_IOPS, FEWER_IN_FLIGHT = 0.9, 0.5


#: Two runs of one configuration further apart than this (high / low) are both named (S14-bare 1).
TWIN_APART = 1.05


def fewer_in_flight(points: pd.DataFrame | None, host: str, rw: str, best: pd.Series) -> str:
    """'; fio-load-latency's closed run (QD32x4, fio latency_target) measured 30,023 IOPS (96 % of 31,235) at a
    mean of 398 µs, about 12 in flight by Little's law: the sweep's latency at its most came with its depth, not with
    its throughput' where another closed, 4 KiB random run of rw on host measured >= NEAR_IOPS of the sweep point
    ``best`` (iops, outstanding_io) with at most FEWER_IN_FLIGHT of its I/Os in flight (N = X · R); '' otherwise
    (S10-bare 9: 31,235 IOPS with 64 in flight at 2,048 µs, 13.6x the latency, beside 30,023 at 398 µs)."""
    need = {"host", "experiment", "rw", "bs_bytes", "pattern", "iops", "lat_mean_us", "iodepth", "numjobs", "point"}
    if points is None or points.empty or not need <= set(points.columns):
        return ""
    p = pure_iops(points, host)  # fio-rw-ratio's write-only mix is a random write too (S13-loop 6: 166,246 left out)
    p = p[(p["rw"] == rw) & (p["bs_bytes"] == 4096) & (p["experiment"] != "fio-queue-depth")
          & (p["pattern"] == "random")]
    # closed loops only: an open loop's in flight is not its depth, and its IOPS are offered (S19-bare 1: ioarrive's
    # u70 rate, 'QD4096x1' from its cap, and a mixed-load cell were called closed runs); fio's latency_target run stays
    lt_run = p["point"].astype(str).str.startswith(LT_POINT_PREFIX)
    p = p[~p["experiment"].isin(OPEN_EXPERIMENTS) | lt_run]
    if "open_loop_held" in p:
        p = p[p["open_loop_held"].isna()]
    iops, lat = pd.to_numeric(p["iops"], errors="coerce"), pd.to_numeric(p["lat_mean_us"], errors="coerce")
    n = iops * lat / 1e6
    hit = p[(iops >= NEAR_IOPS * float(best["iops"])) & (n <= FEWER_IN_FLIGHT * float(best["outstanding_io"]))]
    if hit.empty:
        return ""
    r = hit.loc[n[hit.index].idxmin()]
    lt = str(r["point"]).startswith(LT_POINT_PREFIX)  # S12-1cpu9 2: its depth is fio's search, up to iodepth per job
    qd = (f"{int(r['numjobs'])} jobs, fio latency_target searching up to QD{int(r['iodepth'])} per job" if lt
          else f"QD{int(r['iodepth'])}x{int(r['numjobs'])}")
    spread = run_spread(points, host, rw)
    return (f"; {r['experiment']}'s closed run ({qd}) measured "
            f"{fmt_number(r['iops'])} IOPS ({_share(float(r['iops']), float(best['iops']), spread)}"
            f"{'' if lt else _twin(p, r, float(best['iops']))}) at a mean of {fmt_number(r['lat_mean_us'])} µs, about "
            f"{float(n[r.name]):.0f} in flight by Little's law: the sweep's latency at its most came "
            f"{_cause(points, host, rw, r, best, spread)}, not with its throughput")


def _twin(p: pd.DataFrame, r: pd.Series, best: float) -> str:
    """'; the same job measured 69,472 IOPS in fio-rw-ratio, 1.25× the sweep's most' where another experiment's run
    of r's configuration (depth x jobs) measured more than TWIN_APART from r (eleventh read S14-bare 1: the finding
    quoted fio-block-size's 57,869 beside the sweep's 55,794 and left out fio-rw-ratio's 69,472); else ''. IOPS."""
    same = p[(p["iodepth"] == r["iodepth"]) & (p["numjobs"] == r["numjobs"]) & (p["experiment"] != r["experiment"])
             & ~p["point"].astype(str).str.startswith(LT_POINT_PREFIX)]
    iops = pd.to_numeric(same["iops"], errors="coerce")
    apart = same[(iops / float(r["iops"])).map(lambda x: max(x, 1 / x)) > TWIN_APART]
    if apart.empty:
        return ""
    t = apart.loc[(pd.to_numeric(apart["iops"]) - float(r["iops"])).abs().idxmax()]
    return (f"; the same job measured {fmt_number(t['iops'])} IOPS in {t['experiment']}, "
            f"{float(t['iops']) / best:.2f}× the sweep's most")


def _cause(points: pd.DataFrame, host: str, rw: str, r: pd.Series, best: pd.Series, spread: Spread) -> str:
    """'with its depth' where run r has the sweep point's job count, or where the sweep at r's job count took at least
    twice r's latency with at least twice its I/Os in flight and no more IOPS than r's beyond the spread (eleventh read
    S14-1cpu 1: at 4 jobs the sweep's QD32x4 took 2,139 µs with 128 in flight against latency_target's 227 µs with
    about 15, which tells depth from job count; thirteenth read S16-1cpu 1: a QD32x4 write at 53,507 IOPS, 1.185x the
    run's 45,166, bought throughput with its depth); else 'with its depth or its job count (... this run does not tell
    which)'."""
    if float(r["numjobs"]) == float(best.get("numjobs", r["numjobs"])):
        return "with its depth"
    p = points[(points["host"].astype(str) == host) & (points["experiment"] == "fio-queue-depth")
               & (points["rw"] == rw) & (points["bs_bytes"] == 4096) & (points["numjobs"] == r["numjobs"])]
    n_r = float(r["iops"]) * float(r["lat_mean_us"]) / 1e6
    lat = pd.to_numeric(p["lat_mean_us"], errors="coerce")
    n = pd.to_numeric(p["iops"], errors="coerce") * lat / 1e6  # I/Os in flight by Little's law
    more = pd.to_numeric(p["iops"], errors="coerce") > spread.limit * float(r["iops"])
    deep = p[(lat >= 2 * float(r["lat_mean_us"])) & (n >= 2 * n_r) & ~more]
    if deep.empty:
        return (f"with its depth or its job count ({int(r['numjobs'])} jobs against the sweep point's "
                f"{int(best['numjobs'])}: this run does not tell which)")
    d = deep.loc[pd.to_numeric(deep["lat_mean_us"]).idxmax()]
    return (f"with its depth (at {int(r['numjobs'])} jobs too, the sweep's QD{int(d['iodepth'])}x{int(d['numjobs'])} "
            f"took {fmt_number(d['lat_mean_us'])} µs with {float(n[d.name]):.0f} in flight)")


def _share(iops: float, best: float, spread: Spread) -> str:
    """'96 % of 31,235' below the sweep's most; 'more than the sweep's 41,446' above it by more than the run-to-run
    spread (memstor.analysis.spread, measured or the 10 % assumed); 'not shown to differ from the sweep's 149,970, within the
    10 % assumed for single fresh runs' between (S12-loop9 6: 155,066 was 'more than' 149,970, +3.4 %; S14-bare 1:
    the measured 1.20x, not the assumed 10 %, where the run measured it). IOPS."""
    if iops < best:
        return f"{100 * iops / best:.0f} % of {fmt_number(best)}"
    if iops <= best * spread.limit:
        return f"not shown to differ from the sweep's {fmt_number(best)}, within {spread.short()}"
    return f"more than the sweep's {fmt_number(best)}"


def flat_words(points: pd.DataFrame | None, host: str, rw: str) -> str:
    """'fio-block-size's QD32x1 (58,281 IOPS): QD64x1's 55,471 is -4.8 % from it, no gain beyond the 10 % assumed for
    single fresh runs, so more depth is not shown to add throughput' where the same job run elsewhere between the
    sweep's last two depths measured at least the deepest point less the spread (spread.flat_before_deepest; twelfth
    read S15-1cpu 1; thirteenth read S16-bare 1: not 'flat' where the deepest is 19.7 % below one of two such runs,
    a fall); '' where no such point or the last step still rose from it."""
    between, deepest, spread = flat_before_deepest(points, host, rw)
    if between.empty or deepest is None:
        return ""
    runs = " and ".join(f"{r.experiment}'s" for r in between.itertuples())
    said = " and ".join(fmt_number(v) for v in between["iops"])
    steps = " and ".join(f"{100 * (float(deepest['iops']) / v - 1):+.1f} %" for v in between["iops"])
    return (f"{runs} QD{int(between['iodepth'].iloc[0])}x1 ({said} IOPS): QD{int(deepest['iodepth'])}x1's "
            f"{fmt_number(deepest['iops'])} is {steps} from {'them' if len(between) > 1 else 'it'}, no gain beyond "
            f"{spread.brief()}, so more depth is not shown to add throughput")


def fit_sentence(bad_fit: list[str], knees: pd.DataFrame, points: pd.DataFrame | None = None, host: str = "",
                 band_high: dict | None = None, rising: set | frozenset = frozenset()) -> str:
    """Page 1's sentence on the failed knee-fit checks ('<workload>: <evidence>' each; knees: their knee rows): the
    first one's evidence, the other workloads named (S18: page 2 named one workload of two), and the measured bound
    'given instead' only where the knee table has one (R-def p2: bound_void). ``points``: the host's runs, whose
    one-job runs above the fit's band (``band_high``: {workload: knee_ceiling's high, X_fit + 1.96 SE, IOPS}) are
    named (S19-1cpu 2: 'beaten by a point with 4 jobs' where fio-rw-ratio's QD32x1 was above it too); a workload in
    ``rising`` (its knee_plateau failed) says its one-job sweep still rose at its deepest, by how much (S22-loop 5,
    S22-cpu1 1: the 4-job point alone was blamed while the one-job sweep rose +26.6 % from QD16 to QD64)."""
    first = bad_fit[0].split(":")[0]
    also = [w for w in dict.fromkeys(b.split(":")[0] for b in bad_fit[1:]) if w != first]
    more = f"; {' and '.join(also)}'s fit too" if also else ""
    one, beyond = _one_job_above((band_high or {}).get(first), points, host, first)
    lead = "The knee fit contradicts its own data" if beyond else _fit_contradicted(bad_fit[0])
    if first in rising:
        lead += f", and its one-job sweep still rose at its deepest{_last_step(points, host, first)}, knee_plateau failed"
    return (lead + " (" + name_ceilings(bad_fit[0]) + one + more + "); the measured bound "
            + ("does not apply either" if len(knees) and knees["N_star_bound"].isna().all() else "is given instead")
            + f" ({SECTION_REF['queue_depth']}).")


def _last_step(points: pd.DataFrame | None, host: str, rw: str) -> str:
    """': +26.6 % from QD16x1 to QD64x1' of the queue-depth sweep's last two one-job 4 KiB depths of ``rw``; ''
    without two."""
    need = {"host", "experiment", "rw", "bs_bytes", "iodepth", "numjobs", "iops"}
    if points is None or points.empty or not need <= set(points.columns):
        return ""
    p = points[(points["host"].astype(str) == host) & (points["experiment"] == "fio-queue-depth")
               & (points["rw"] == rw) & (points["bs_bytes"] == 4096) & (points["numjobs"] == 1)]
    p = p.dropna(subset=["iops"]).drop_duplicates("iodepth").sort_values("iodepth").tail(2)
    if len(p) < 2:
        return ""
    a, b = p.itertuples()
    return f": {100 * (b.iops / a.iops - 1):+.1f} % from QD{int(a.iodepth)}x1 to QD{int(b.iodepth)}x1"


def _fit_contradicted(evidence: str) -> str:
    """The lead of page 1's knee sentence: the fit against its own one-job points, or (S18-1cpu 1: 'contradicts its
    own data' where the one-job points lay under the band and only QD32x4 was above it) against a point with more
    jobs than the one-job sweep the fit was made from (knee_ceiling's 'highest measured ... (at QD32x4)')."""
    more = re.search(r"\(at QD\d+x(\d+)\)", evidence)
    if more and int(more.group(1)) > 1:
        return (f"The knee fit's ceiling is beaten by a point with {more.group(1)} jobs, outside the one-job sweep it "
                "was fitted to")
    return "The knee fit contradicts its own data"


def _fit_failed(validity: pd.DataFrame | None, host: str) -> dict[str, list[str]]:
    """{workload: the knee-fit checks it failed (knee_ceiling, knee_located)} of one host; {} without."""
    if validity is None or validity.empty:
        return {}
    v = validity[(validity["host"].astype(str) == host) & validity["check"].isin(["knee_ceiling", "knee_located"])
                 & (validity["status"] == "fail")]
    return {rw: list(dict.fromkeys(g["check"].astype(str))) for rw, g in v.groupby(v["subject"].astype(str))}


def knee_words(validity: pd.DataFrame | None, host: str, points: pd.DataFrame | None = None) -> str:
    """The conclusion's last sentence, per workload: past the knee only where its knee_plateau passed (S10-bare 7),
    'no knee was shown' only where it failed, naming the workloads (S11-1cpu H1: 'the sweeps still rose' where
    randwrite's levelled, its check warned); 'more depth may still add throughput' only where no run of the same job
    elsewhere between the sweep's last two depths shows the curve flat (queueing.flat_words: S15-1cpu 1)."""
    v = validity[(validity["host"].astype(str) == host) & (validity["check"] == "knee_plateau")] \
        if validity is not None and len(validity) else pd.DataFrame(columns=["status", "subject"])
    said = "Throughput is bought with outstanding requests"
    passed, failed = (list(dict.fromkeys(v.loc[v["status"] == s, "subject"].astype(str))) for s in ("pass", "fail"))
    parts = [f"past the knee of {' and '.join(passed)} every extra request adds waiting, not throughput"] \
        if passed else []
    flat = {rw: w for rw in failed if (w := flat_words(points, host, rw))}  # S15-1cpu 1
    if rising := [rw for rw in failed if rw not in flat]:
        whose = "its sweep" if len(rising) == 1 else "their sweeps"
        parts.append(f"no knee was shown for {' and '.join(rising)}: {whose} still rose at the deepest "
                     "(knee_plateau), so more depth may still add throughput")
    parts += [f"no knee was shown for {rw}: its sweep still rose at the deepest (knee_plateau); yet {w}"
              for rw, w in flat.items()]
    warned = [rw for rw in dict.fromkeys(v.loc[v["status"] == "warn", "subject"].astype(str))
              if rw not in passed + failed]  # S18 (page 2 named one workload of two): a warning is said too
    unfit = _fit_failed(validity, host)  # S20-cpu1 8: 'the fitted knee' of a workload whose fit failed its checks
    if stands := [rw for rw in warned if rw not in unfit]:
        parts.append(f"for {' and '.join(stands)} the points past the fitted knee do not confirm it (knee_plateau "
                     "warned)")
    parts += [f"for {rw} no fitted knee stands ({', '.join(unfit[rw])} failed)" for rw in warned if rw in unfit]
    return f"{said} (Little's law: N = X · R)" + "".join(f"; {p}" for p in parts) + "."


def _one_job_above(high: float | None, points: pd.DataFrame | None, host: str, rw: str) -> tuple[str, bool]:
    """('; one-job runs are above its band too: 81,811 IOPS (QD32x1, fio-rw-ratio)', whether by more than the run-to-run
    spread) where a closed one-job 4 KiB run of rw (any experiment but the open loops) measured above ``high``
    (knee_ceiling's X_fit + 1.96 SE, IOPS); within the spread the words say so (S21-loop 1: 233,051 IOPS, 1.09x the
    band's top, inside the 1.45x gap, was read as the fit contradicting its own data); ('', False) otherwise."""
    if high is None or missing(high):
        return "", False
    p = pure_iops(points, host)
    if p.empty:
        return "", False
    p = p[(p["rw"] == rw) & (p["bs_bytes"] == 4096) & (p["numjobs"] == 1) & ~p["experiment"].isin(OPEN_EXPERIMENTS)
          & (pd.to_numeric(p["iops"], errors="coerce") > high)]
    if p.empty:
        return "", False
    top = p.loc[pd.to_numeric(p["iops"]).idxmax()]
    spread = run_spread(points, host, rw)
    beyond = float(top["iops"]) > float(high) * spread.limit
    within = "" if beyond else f", {float(top['iops']) / float(high):.2f}× its top, within {spread.brief()}"
    return (f"; one-job runs are above its band too: {fmt_number(top['iops'])} IOPS (QD{int(top['iodepth'])}x1, "
            f"{top['experiment']}{within})"), beyond
