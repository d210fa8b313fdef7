"""Report text, the SNIA PTS tests beyond steady state and write saturation: host idle recovery (HIR),
cross-stimulus recovery (XSR), the composite block-size workload (CBW) and demand intensity (DIRTH)
(memstor.analysis.pts_recovery, memstor.analysis.pts_demand). Pure: DataFrame in, display table out."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from memstor.analysis.pts_demand import MAX_IOPS, MID, MIN, OPTIMAL, ROLES
from memstor.analysis.pts_recovery import SETTLE_BAND_PCT, SETTLE_SMOOTH_S
from memstor.core.fmt import fmt_interval, fmt_number
from memstor.core.schema import missing


def _one(df: pd.DataFrame, out: pd.DataFrame) -> pd.DataFrame:
    """`out` without its device column when `df` holds one device."""
    return out if df["host"].nunique() > 1 else out.drop(columns="device")


def _int(v) -> str:
    """A count (threads, queue depth, outstanding I/O, segments) as a whole number; '–' when missing."""
    return "–" if missing(v) else f"{int(round(float(v))):,}"


def departures(*tables: pd.DataFrame | None) -> list[str]:
    """The distinct departure texts of the tables, per device ("device: text")."""
    seen: dict[str, None] = {}
    for t in tables:
        if t is None or t.empty or "departure" not in t:
            continue
        for host, text in zip(t["host"], t["departure"]):
            if not missing(text):
                seen.setdefault(f"{host}: {text}", None)
    return list(seen)


def hir_display(hir: pd.DataFrame | None) -> pd.DataFrame:
    """One row per device x wait state: the idle (s), segments, IOPS [95 % interval], the baseline and the
    recovery ratio [95 % interval], and whether that ratio shows a recovery (memstor.analysis.pts_recovery)."""
    cols = ["device", "wait planned (s)", "idle measured (s)", "segments", "IOPS", "baseline IOPS",
            "recovery (× baseline)", "shown"]
    if hir is None or hir.empty:
        return pd.DataFrame(columns=cols)
    out = pd.DataFrame({
        "device": hir["host"], "wait planned (s)": hir["wait_s"].map(fmt_number),
        "idle measured (s)": hir["idle_s_mean"].map(fmt_number), "segments": hir["segments"].map(_int),
        "IOPS": [fmt_interval(v, lo, hi) for v, lo, hi in zip(hir["iops_mean"], hir["iops_ci_low"], hir["iops_ci_high"])],
        "baseline IOPS": hir["baseline_iops"].map(fmt_number),
        "recovery (× baseline)": [fmt_interval(v, lo, hi) for v, lo, hi in
                                  zip(hir["recovery_ratio"], hir["recovery_ratio_ci_low"], hir["recovery_ratio_ci_high"])],
        "shown": [_shown_cell(v) for v in hir.get("recovery_shown", pd.Series(None, index=hir.index))],
    })
    return _one(hir, out)


def _shown_cell(v) -> str:
    """'yes' / 'no' / '–' (not checked) of a wait state's recovery_shown."""
    return "–" if missing(v) else ("yes" if bool(v) else "no")


def settle_text(settle_s, with_unit: bool = True) -> str:
    """An XSR settle time as the report says it: 'not settled' (missing), 'from the first second' (0: the series
    is at its new level, within the settle rule's band of its smoothed seconds, from the first second after the
    transition, nothing to settle — never 'settles in 0 s'; R-1cpu C3: it read as flat where the seconds drift 12 %),
    else 'settles in N s' ('N' without the unit and verb, for the table's 'settles in (s)' column)."""
    if missing(settle_s):
        return "not settled"
    if float(settle_s) <= 0:
        return f"at its new level (±{SETTLE_BAND_PCT:g} %) from the first second" if with_unit else \
            "from the first second"
    return f"settles in {fmt_number(settle_s)} s" if with_unit else fmt_number(settle_s)


def xsr_display(xsr: pd.DataFrame | None) -> pd.DataFrame:
    """One row per device x transition: when it happens (s), the levels before and after (MB/s [95 %
    interval]) and the settle time (s; "not settled" when the phase never settled, "from the first second" when
    there was nothing to settle)."""
    cols = ["device", "transition", "at (s)", "before (MB/s)", "after (MB/s)", "settles in (s)"]
    if xsr is None or xsr.empty:
        return pd.DataFrame(columns=cols)
    out = pd.DataFrame({
        "device": xsr["host"], "transition": xsr["transition"], "at (s)": xsr["t_transition_s"].map(fmt_number),
        "before (MB/s)": [fmt_interval(v, lo, hi) for v, lo, hi in
                          zip(xsr["from_level_MBps"], xsr["from_level_MBps_ci_low"], xsr["from_level_MBps_ci_high"])],
        "after (MB/s)": [fmt_interval(v, lo, hi) for v, lo, hi in
                         zip(xsr["to_level_MBps"], xsr["to_level_MBps_ci_low"], xsr["to_level_MBps_ci_high"])],
        "settles in (s)": [settle_text(v, with_unit=False) if not missing(lv) else "– (no level)"
                           for v, lv in zip(xsr["settle_s"], xsr["to_level_MBps"])],
    })
    if "earlier_level_MBps" in xsr and xsr["earlier_level_MBps"].notna().any():  # S12-1cpu 4
        out[f"back at ≥ {100 - SETTLE_BAND_PCT:g} % of before (s)"] = [
            "–" if missing(e) else _back_when(b).removeprefix("in ").removesuffix(" s")
            for e, b in zip(xsr["earlier_level_MBps"], xsr["back_s"])]
    return _one(xsr, out)


def cbw_display(cbw: pd.DataFrame | None) -> pd.DataFrame:
    """One row per device x threads x queue depth: outstanding I/O, IOPS, MB/s and the response time (µs:
    mean, p99, p99.99, maximum)."""
    cols = ["device", "T", "Q", "OIO", "IOPS", "MB/s", "mean (µs)", "p99 (µs)", "p99.99 (µs)", "max (µs)"]
    if cbw is None or cbw.empty:
        return pd.DataFrame(columns=cols)
    out = pd.DataFrame({
        "device": cbw["host"], "T": cbw["threads"].map(_int), "Q": cbw["qd"].map(_int),
        "OIO": cbw["total_oio"].map(_int), "IOPS": cbw["iops"].map(fmt_number), "MB/s": cbw["MBps"].map(fmt_number),
        "mean (µs)": cbw["lat_mean_us"].map(fmt_number), "p99 (µs)": cbw["p99_us"].map(fmt_number),
        "p99.99 (µs)": cbw["p99_99_us"].map(fmt_number), "max (µs)": cbw["lat_max_us"].map(fmt_number),
    })
    return _one(cbw, out)


def _checks(validity: pd.DataFrame | None, host, check: str, statuses=("fail",)) -> pd.DataFrame:
    """The validity rows of ``check`` on ``host`` with a status in ``statuses`` (memstor.analysis.validity.pts)."""
    if validity is None or validity.empty:
        return pd.DataFrame(columns=["check", "subject", "status", "evidence"])
    return validity[(validity["host"].astype(str) == str(host)) & (validity["check"] == check)
                    & validity["status"].isin(statuses)]


def _no_roles(validity: pd.DataFrame | None, host) -> bool:
    """DIRTH on `host` gives no roles: IOPS fall as demand rises (pts_demand failed) or its matrix was measured
    while the state still moved (pts_steady_state failed: no result stated, :func:`_unsteady`)."""
    return bool(len(_test_checks(validity, host, "pts_demand", "DIRTH"))
                or len(_test_checks(validity, host, "pts_steady_state", "DIRTH")))


def _unrepeated(validity: pd.DataFrame | None, host) -> set[tuple[str, str]]:
    """The (threads, queue depth) of the DIRTH points on ``host`` whose rerun failed pts_repeat ('DIRTH T1 Q1
    rerun'): a role on such a point rests on one run that did not repeat (S8-bare M-2: 'min 7,770 IOPS at T1 Q1',
    rerun 5,690, 0.732x)."""
    out = set()
    for subject in _checks(validity, host, "pts_repeat")["subject"]:
        m = re.match(r"DIRTH T(\d+) Q(\d+) rerun", str(subject))
        if m:
            out.add((_int(m.group(1)), _int(m.group(2))))
    return out


def _rerun_spread(validity: pd.DataFrame | None, host) -> float | None:
    """The reruns' spread on ``host``: the largest of max(r, 1/r) over the DIRTH pts_repeat ratios r (rerun /
    matrix IOPS; defects: 1.53, 0.739, 0.866 -> 1.53); None without a rerun."""
    rows = _checks(validity, host, "pts_repeat", ("pass", "warn", "fail"))
    r = pd.to_numeric(rows["value"], errors="coerce").dropna() if "value" in rows else pd.Series([], dtype=float)
    r = r[r > 0]
    return float(np.maximum(r, 1 / r).max()) if len(r) else None


def rank_held(top: pd.DataFrame, validity: pd.DataFrame | None) -> str:
    """'the two highest points kept their order in the reruns (T4 Q4 55,300 and 39,839 IOPS, T2 Q4 34,032 and
    27,976), T4 Q4's value did not (0.72×): no maximum is stated' where both of the two highest DIRTH points (``top``)
    were rerun and every measurement of the first (matrix and rerun, IOPS = its pts_repeat ratio x matrix) lies above
    every one of the second; else '' (tenth read S13-1cpu 2: this read 'no maximum located ... within the reruns' spread';
    a value whose rerun failed pts_repeat still withholds its role on its own)."""
    rows = _checks(validity, top["host"].iloc[0], "pts_repeat", ("pass", "warn", "fail"))
    if rows.empty or len(top) < 2:
        return ""
    ratio = {str(s): v for s, v in zip(rows["subject"], pd.to_numeric(rows["value"], errors="coerce"))}
    each = []
    for r in top.itertuples():
        v = ratio.get(f"DIRTH T{_int(r.threads)} Q{_int(r.qd)} rerun")
        if v is None or not v > 0:
            return ""
        each.append((float(r.iops), float(r.iops) * float(v), f"T{_int(r.threads)} Q{_int(r.qd)}"))
    (a, a2, at), (b, b2, bt) = each
    if not min(a, a2) > max(b, b2):
        return ""
    # S14-1cpu 2: 'T4 Q4 is the highest point' read as the max-IOPS role its failed rerun withholds
    return (f"the two highest points kept their order in the reruns ({at} {fmt_number(a)} and {fmt_number(a2)} IOPS, "
            f"{bt} {fmt_number(b)} and {fmt_number(b2)}), {at}'s value did not ({a2 / a:.2f}×): no maximum is stated")


def max_within_spread(g: pd.DataFrame, validity: pd.DataFrame | None) -> str:
    """'' where the highest-IOPS point of one device's DIRTH matrix ``g`` is above the next by more than the reruns'
    spread (:func:`_rerun_spread`) or the two kept their order in the reruns (:func:`rank_held`), else why it is no
    maximum: 'no maximum located: 45,546 IOPS at T4 Q4 and 45,028
    at T2 Q4 are 1.01x apart, within the reruns' spread of up to 1.53x (reruns at 0.739-1.53x of their matrix points)'
    (fifth read R-def p6; S11-loop 10: '1.24x apart, within the reruns' 0.777-1.09x' read as a contradiction)."""
    spread = _rerun_spread(validity, g["host"].iloc[0]) if len(g) > 1 else None
    top = g.sort_values("iops", ascending=False).head(2)
    if spread is None or top["iops"].isna().any() or top["iops"].iloc[0] / top["iops"].iloc[1] > spread:
        return ""
    if rank_held(top, validity):
        return ""
    r = pd.to_numeric(_checks(validity, g["host"].iloc[0], "pts_repeat", ("pass", "warn", "fail"))["value"],
                      errors="coerce").dropna()
    a, b = top.iloc[0], top.iloc[1]
    return (f"no maximum located: {fmt_number(a['iops'])} IOPS at T{_int(a['threads'])} Q{_int(a['qd'])} and "
            f"{fmt_number(b['iops'])} at T{_int(b['threads'])} Q{_int(b['qd'])} are {a['iops'] / b['iops']:.2f}x "
            f"apart, within the reruns' spread of up to {spread:.2f}x (reruns at {fmt_number(r.min())}-"
            f"{fmt_number(r.max())}x of their matrix points)")


def gated_roles(dirth: pd.DataFrame, validity: pd.DataFrame | None) -> pd.DataFrame:
    """``dirth`` with the roles its checks do not support removed, per device: none where pts_demand or
    pts_steady_state failed (:func:`_no_roles`: no demand-intensity result), no 'optimal' or 'mid' where
    dirth_optimal failed (no point reached the ceiling: the 'optimal' point is the grid's corner), none on a
    point whose rerun failed pts_repeat (:func:`_unrepeated`), and no 'max IOPS' on a highest point within the
    reruns' spread of the next (:func:`max_within_spread`)."""
    out = dirth.copy()
    for host in out["host"].unique():
        drop = set(ROLES) if _no_roles(validity, host) else \
            {OPTIMAL, MID} if len(_checks(validity, host, "dirth_optimal")) else set()
        if max_within_spread(out[out["host"] == host], validity):
            drop |= {MAX_IOPS}
        bad = _unrepeated(validity, host)
        mine = out["host"] == host
        out.loc[mine, "role"] = [
            cell if missing(cell) else "" if (_int(t), _int(q)) in bad else
            ", ".join(r for r in str(cell).split(", ") if r and r not in drop)
            for cell, t, q in zip(out.loc[mine, "role"], out.loc[mine, "threads"], out.loc[mine, "qd"])]
    return out


def _why_withheld(dirth: pd.DataFrame, validity: pd.DataFrame | None, row: pd.Series, gone: list[str]) -> str:
    """The failed check (or the spread) that removed the roles ``gone`` from DIRTH point ``row``."""
    host = row["host"]
    if _no_roles(validity, host):
        return "pts_demand or pts_steady_state failed (DIRTH)"
    if (_int(row["threads"]), _int(row["qd"])) in _unrepeated(validity, host):
        return "its rerun failed pts_repeat"
    why = ["dirth_optimal failed"] if {OPTIMAL, MID} & set(gone) else []
    return "; ".join(why + ([max_within_spread(dirth[dirth["host"] == host], validity)] if MAX_IOPS in gone else []))


def withheld_roles(dirth: pd.DataFrame, validity: pd.DataFrame | None) -> list[str]:
    """Per row of ``dirth``, the roles :func:`gated_roles` removes and the failed check that removes them ('role
    optimal not stated: dirth_optimal failed'), '' where none is (the CSV says what the PDF withholds)."""
    gated = gated_roles(dirth, validity)
    out = []
    for (_, row), kept in zip(dirth.iterrows(), gated["role"]):
        gone = [r for r in ("" if missing(row["role"]) else str(row["role"])).split(", ")
                if r and r not in ("" if missing(kept) else str(kept)).split(", ")]
        out.append(f"role {', '.join(gone)} not stated: {_why_withheld(dirth, validity, row, gone)}" if gone else "")
    return out


def gated_histograms(hist: pd.DataFrame | None, validity: pd.DataFrame | None,
                     dirth: pd.DataFrame | None = None) -> pd.DataFrame | None:
    """The DIRTH histogram rows (memstor.analysis.pts_demand.dirth_histograms) of the roles :func:`gated_roles`
    keeps: none where pts_demand failed, no 'optimal' or 'mid' where dirth_optimal failed, none of a point whose
    rerun failed pts_repeat; given the matrix ``dirth``, no 'max IOPS' within the reruns' spread
    (:func:`max_within_spread`)."""
    if hist is None or hist.empty or "role" not in hist.columns:
        return hist
    if dirth is not None and len(dirth):
        unsure = {h for h in dirth["host"].unique() if max_within_spread(dirth[dirth["host"] == h], validity)}
        hist = hist[~(hist["host"].isin(unsure) & (hist["role"] == MAX_IOPS))]
    keep = []
    t = hist["threads"] if "threads" in hist.columns else pd.Series(None, index=hist.index)
    q = hist["qd"] if "qd" in hist.columns else pd.Series(None, index=hist.index)
    for host, role, th, qd in zip(hist["host"], hist["role"], t, q):
        if _no_roles(validity, host) or (_int(th), _int(qd)) in _unrepeated(validity, host):
            keep.append(False)
        else:
            keep.append(not (role in (OPTIMAL, MID) and len(_checks(validity, host, "dirth_optimal"))))
    return hist[keep]


def demand_caption(gated: pd.DataFrame | None) -> str:
    """The caption of the DIRTH demand-intensity figure drawn from :func:`gated_roles`: 'the optimal point ringed'
    only where a point keeps that role (fifth read R-def 24: the caption promised a ring the gating removed)."""
    has = gated is not None and "role" in gated and gated["role"].fillna("").str.contains(OPTIMAL).any()
    return ("DIRTH demand intensity: mean response time (µs) against IOPS, one line per thread count; the ceiling "
            "dashed, " + ("the optimal point ringed." if has else "no optimal point ringed (its checks did not "
                          "support one: the PTS table says why)."))


def histograms_caption(hist: pd.DataFrame | None) -> str:
    """The caption of the DIRTH histograms drawn from :func:`gated_histograms`: the roles it holds, by name."""
    names = {MIN: "minimum", MID: "mid", OPTIMAL: "optimal", MAX_IOPS: "maximum-IOPS"}
    held = [n for r, n in names.items() if hist is not None and "role" in hist and (hist["role"] == r).any()]
    return ("DIRTH response-time histograms (share of I/Os, %, against µs) at the " + ", ".join(held) + " points."
            if held else "DIRTH response-time histograms: none drawn (no role's point is supported by its checks).")


def _test_checks(validity: pd.DataFrame | None, host, check: str, test: str) -> pd.DataFrame:
    """The failed rows of ``check`` on ``host`` whose subject is of ``test`` (CBW, DIRTH)."""
    rows = _checks(validity, host, check)
    return rows[rows["subject"].astype(str).str.startswith(test)]


def dirth_display(dirth: pd.DataFrame | None, validity: pd.DataFrame | None = None) -> pd.DataFrame:
    """The DIRTH points that have a role (max IOPS, min, optimal and mid under the ceiling) that its checks support
    (:func:`gated_roles`): T, Q, IOPS, mean and p99 response time (µs), the ceiling; where the checks leave no role,
    every point, its role 'none stated (why)'."""
    cols = ["device", "role", "T", "Q", "IOPS", "mean (µs)", "p99 (µs)", "ceiling (µs)"]
    if dirth is None or dirth.empty:
        return pd.DataFrame(columns=cols)
    dirth = gated_roles(dirth, validity)
    d = dirth[dirth["role"].astype(object).fillna("").astype(str) != ""]
    if d.empty:  # S14-loop 2: every role withheld left 'nothing in the data' beside six measured points
        d = dirth.assign(role=[f"none stated ({str(n).split(': ', 1)[-1]})" if not missing(n) else "none stated"
                               for n in dirth.get("not_valid", pd.Series([None] * len(dirth), index=dirth.index))])
    out = pd.DataFrame({
        "device": d["host"], "role": d["role"], "T": d["threads"].map(_int), "Q": d["qd"].map(_int),
        "IOPS": d["iops"].map(fmt_number), "mean (µs)": d["lat_mean_us"].map(fmt_number),
        "p99 (µs)": d["p99_us"].map(fmt_number), "ceiling (µs)": d["ceiling_us"].map(fmt_number),
    })
    return _one(dirth, out) if len(d) else pd.DataFrame(columns=cols)


def dirth_caption(table: pd.DataFrame) -> str:
    """The caption of :func:`dirth_display`'s table: its roles, or its points where no role is stated."""
    if len(table) and table["role"].astype(str).str.startswith("none stated").all():
        return "DIRTH: every point of the matrix; no role is stated (why: the role column)"
    return ("DIRTH: the maximum-IOPS, minimum and optimal points (the most IOPS whose mean response time stays under "
            "the ceiling)")


def _idle(r) -> str:
    """'1.12 s idle (0.5 s planned)': the idle measured before the counted segments, beside the planned wait."""
    if missing(r.get("idle_s_mean")):
        return f"{fmt_number(r['wait_s'])} s idle (planned; not measured)"
    return f"{fmt_number(r['idle_s_mean'])} s idle ({fmt_number(r['wait_s'])} s planned)"


def _not_shown(r) -> str:
    """' — no recovery ratio: why (short); neither a change nor its absence is shown' of a wait state whose ratio
    shows nothing (memstor.analysis.pts_recovery.recovery_shown False), else ''."""
    shown = r.get("recovery_shown")
    if missing(shown) or bool(shown):
        return ""
    note = str(r.get("recovery_note") or "")
    why = []
    if not missing(r.get("segment_s")) and "unlike windows" in note:
        why.append(f"{fmt_number(r['segment_s'])}-s segments against {fmt_number(r['baseline_round_s'])}-s rounds")
    if not missing(r.get("segments")) and "fewer than" in note:
        why.append(f"{_int(r['segments'])} segments")
    if "overlaps the rounds'" in note or "inside the rounds' range" in note:  # the latter: tables before S11
        why.append("the segments' range overlaps the rounds'")
    if "includes 1" in note:  # S21-bare 3: every segment beyond the rounds, the mean's ratio interval spanning 1
        why.append(f"every segment {'below' if 'segment below' in note else 'above'} the baseline rounds, but the "
                   f"ratio's 95 % interval {note.rsplit('interval ', 1)[-1]}")
    return (" — no recovery ratio: " + ("; ".join(why) if why else "its windows cannot tell")
            + "; neither a change nor its absence is shown")


def _hir_wait(r) -> str:
    """One wait state: 'after 1.12 s idle (0.5 s planned) 0.98 × (81,963 IOPS)'; where the ratio shows nothing
    (:func:`_not_shown`; hir_recovery failed) its IOPS and why, no ratio (third read R-1cpu M4: 0.868 × printed
    beside 'no change shown', read as 'no change')."""
    why = _not_shown(r)
    if why:  # its IOPS with their interval where the segments give one (S19-loop 10: the caption promised brackets)
        return (f"after {_idle(r)} {fmt_interval(r['iops_mean'], r.get('iops_ci_low'), r.get('iops_ci_high'))} "
                f"IOPS{why}")
    ratio = fmt_interval(r["recovery_ratio"], r["recovery_ratio_ci_low"], r["recovery_ratio_ci_high"])
    lo, hi = r.get("recovery_ratio_ci_low"), r.get("recovery_ratio_ci_high")
    basis = str(r.get("recovery_note") or "")  # S19-bare 4: shown by the segments' ranks, its mean's interval spans 1
    if basis and not missing(lo) and not missing(hi) and lo <= 1.0 <= hi:  # S20-bare 1 (tables before S21-bare 3)
        iops = fmt_interval(r["iops_mean"], r.get("iops_ci_low"), r.get("iops_ci_high"))
        return (f"after {_idle(r)} {iops} IOPS — {basis}, but the ratio's 95 % interval [{fmt_number(lo)}, "
                f"{fmt_number(hi)}] includes 1: no recovery ratio is stated")
    return f"after {_idle(r)} {ratio} × ({fmt_number(r['iops_mean'])} IOPS)"


def _hir_result(g: pd.DataFrame, validity: pd.DataFrame | None = None) -> str:
    """'baseline N IOPS; after ...' per wait state; 'no result stated: steady state not reached (...)' where the HIR
    preconditioning rounds the baseline averages were no steady state (pts_steady_state failed: fourteenth read
    S17-bare 1, a 'baseline' of five rounds rising 36,231 -> 58,646 IOPS, the ratios against it no PTS figures)."""
    unsteady = _unsteady(g["host"].iloc[0], "HIR", validity)
    if unsteady:
        return unsteady
    waits = "; ".join(_hir_wait(r) for _, r in g.iterrows())
    return f"baseline {fmt_number(g['baseline_iops'].iloc[0])} IOPS; {waits}"


def _xsr_one(r, first: bool = False) -> str:
    """One transition: 'A → B MB/s, settles in N s'; a phase whose last third is no level (memstor.analysis.
    pts_recovery.phase_level) reads 'no level', and without the new phase's level no settle time is given, the
    reason (its last seconds) said instead; the ``first`` transition gives its old phase's reason too (the later
    ones' old phase is the transition before's new one; S12-loop 10: 'no level → no level (its last 3 s ran 454,
    408, 333 MB/s ...)' read as the SEQ phase's reason, which was not printed)."""
    a = "no level" if missing(r["from_level_MBps"]) else f"{fmt_number(r['from_level_MBps'])} MB/s"
    was = str(r.get("from_level_note") or "") if first and missing(r["from_level_MBps"]) else ""
    a += f" ({was.removeprefix('no level: ')})" if was else ""
    why = str(r.get("to_level_note") or "")
    if missing(r["to_level_MBps"]):
        return f"{r['transition']}: {a} → no level" + (f" ({why.removeprefix('no level: ')}; no settle time)"
                                                      if why else "")
    head = f"{r['transition']}: {a} → {fmt_number(r['to_level_MBps'])} MB/s"
    back = _back(r)
    return f"{head}, {settle_text(r['settle_s'])}" if not back else f"{head}{back}"


def _back(r) -> str:
    """', back at ≥ 90 % of its level before the stimulus (1,604 MB/s) from the first second; within ±10 % of its
    final level from 6.00 s' where the new phase's access ran before the stimulus (S12-1cpu 4: 'settles in 6.00 s'
    read as 6 s to recover, while the SEQ phase ran above its pre-stimulus level from its first second), else ''."""
    earlier = r.get("earlier_level_MBps")
    if missing(earlier):
        return ""
    settle = r.get("settle_s")
    final = ("never (not settled)" if missing(settle) else
             "from the first second" if float(settle) <= 0 else f"from {fmt_number(settle)} s")
    return (f", back at ≥ {100 - SETTLE_BAND_PCT:g} % of its level before the stimulus ({fmt_number(earlier)} MB/s) "
            f"{_back_when(r.get('back_s'))}; within ±{SETTLE_BAND_PCT:g} % of its final level {final}")


def _back_when(back_s) -> str:
    """'from the first second' / 'in 3.00 s' / 'not within the phase' of a back_s (s; missing: never back)."""
    if missing(back_s):
        return "not within the phase"
    return "from the first second" if float(back_s) <= 0 else f"in {fmt_number(back_s)} s"


def _xsr_result(g: pd.DataFrame) -> str:
    """The transitions, then the rule their times follow where one is given (fourteenth read S17-bare 2: 'settles in
    3.00 s' held only for the 5-s centred rolling median, stated nowhere; single seconds after it dipped 17 %)."""
    said = "; ".join(_xsr_one(r, first=i == 0) for i, (_, r) in enumerate(g.iterrows()))
    timed = g["settle_s"].notna().any() if "settle_s" in g else False
    levels = "levels: each phase's last third, not its whole-run mean"  # S19-bare 12: beside the headline's means
    return said + (f" ({levels}; times by a {SETTLE_SMOOTH_S}-s centred rolling median of the per-second MB/s; single "
                   "seconds may dip further)" if timed else f" ({levels})")


#: What CBW's and DIRTH's times are, said once per result (S10-bare 12: DIRTH's 'p99 766 µs' is fio's total latency,
#: 1.9x the completion-latency p99 of its own directions that every other section prints).
#: The means are total latency in every section (S11-bare 4): only the p99s differ in kind.
RESPONSE_TIME = ("; times are response times (fio's total latency, submission included, as PTS): its p99 is a "
                 "total-latency p99, the other fio sections' p99s are completion p99s (their means are total latency, "
                 "as here; the open loop's are from the intended arrival)")  # S15-1cpu 3: §4.4 is not completion


def _point(r) -> str:
    return (f"{fmt_number(r['iops'])} IOPS at T{_int(r['threads'])} Q{_int(r['qd'])} (mean {fmt_number(r['lat_mean_us'])} µs, "
            f"p99 {fmt_number(r['p99_us'])} µs)")


def _steady_prefix(host, test: str, validity: pd.DataFrame | None) -> str:
    """'steady state not reached (data excursion N % ...): ' (plain text: a table cell) where the test's pts_steady_state failed, else ''."""
    bad = _test_checks(validity, host, "pts_steady_state", test)
    if bad.empty:
        return ""
    both = re.search(r"data excursion \S+ % and slope excursion \S+ % of their mean \S+ \(PTS: at most 20 % and "
                     r"10 %\)", str(bad["evidence"].iloc[0]))  # the one that failed may be the slope (S7-bare M-8)
    if both:
        return f"steady state not reached (preconditioning rounds' {both.group(0)}): "
    return (f"steady state not reached (preconditioning rounds' data excursion {fmt_number(bad['value'].iloc[0])} "
            "% of their mean; PTS: at most 20 %): ")


def _unsteady(host, test: str, validity: pd.DataFrame | None) -> str:
    """'no result stated: steady state not reached (...); its points: the test's table in report.html' where the
    test's pts_steady_state failed (a matrix measured while the state moved is no PTS figure: third read R-1cpu M5,
    page 1's promise), else ''."""
    head = _steady_prefix(host, test, validity)
    return ("no result stated: " + head.removesuffix(": ") + "; its points: the test's table in report.html") if head \
        else ""  # S14-loop 2: report.html has no section called an appendix


def _cbw_result(g: pd.DataFrame, validity: pd.DataFrame | None = None) -> str:
    best, least = g.loc[g["iops"].idxmax()], g.loc[g["iops"].idxmin()]
    host = g["host"].iloc[0]
    unsteady = _unsteady(host, "CBW", validity)
    if unsteady:
        return unsteady
    falls = _test_checks(validity, host, "pts_demand", "CBW")
    return (f"most {_point(best)}; least {_point(least)}"
            + (f"; IOPS fall as demand rises ({falls['evidence'].iloc[0]})" if len(falls) else "") + RESPONSE_TIME)


def _reruns(host, validity: pd.DataFrame | None) -> str:
    """'; reruns of its points: T1 Q1 1.50x (fail)' for the DIRTH reruns that warn or fail, else ''."""
    rows = _checks(validity, host, "pts_repeat", ("warn", "fail"))
    if rows.empty:
        return ""
    said = [f"{str(s).removeprefix('DIRTH ').removesuffix(' rerun')} {fmt_number(v)}×"
            for s, v in zip(rows["subject"], rows["value"])]
    failed = (rows["status"] == "fail").any()
    return ("; the same points rerun gave " + ", ".join(said) + " their matrix IOPS"
            + (" (pts_repeat failed: no role is stated on a point whose rerun failed)" if failed else ""))


def _dirth_result(g: pd.DataFrame, validity: pd.DataFrame | None = None) -> str:
    host = g["host"].iloc[0]
    unsteady = _unsteady(host, "DIRTH", validity)
    if unsteady:
        return unsteady + _reruns(host, validity)
    head = ""
    falls = _test_checks(validity, host, "pts_demand", "DIRTH")
    if len(falls):
        return (head + f"no demand-intensity result: IOPS fall as demand rises ({falls['evidence'].iloc[0]})"
                + _reruns(host, validity))
    g = gated_roles(g, validity)
    roles = g[g["role"].astype(object).fillna("").astype(str) != ""]
    parts = [f"{r['role']}: {_point(r)}" for _, r in roles.iterrows() if r["role"] != "mid"]
    top = g.sort_values("iops", ascending=False).head(2)
    unrepeated = len(top) and (_int(top["threads"].iloc[0]), _int(top["qd"].iloc[0])) in _unrepeated(validity, host)
    # its order held but its value did not repeat: said, as the role is withheld (a repeated one keeps its role)
    parts += [m for m in [max_within_spread(g, validity), rank_held(top, validity) if unrepeated else ""] if m]
    ceiling = g["ceiling_us"].dropna()
    unplaced = _checks(validity, host, "dirth_optimal")
    tail = (f"; optimal point not located: {unplaced['evidence'].iloc[0]} (the grid stops before the ceiling)"
            if len(unplaced) else f" (ceiling {fmt_number(ceiling.iloc[0])} µs mean response time)" if len(ceiling)
            else "")
    return (head + "; ".join(parts) + tail + (RESPONSE_TIME if parts else "") + _reruns(host, validity)).removeprefix("; ")


#: The interval columns of the HIR and XSR tables (IOPS or ratio; MB/s): a caption promises intervals where one is set.
HIR_CI = ("iops_ci_low", "recovery_ratio_ci_low")
XSR_CI = ("from_level_MBps_ci_low", "to_level_MBps_ci_low")


def _has_ci(table: pd.DataFrame | None, cols: tuple) -> bool:
    """Whether any of ``cols`` of ``table`` has a value (an interval somewhere in the table)."""
    return table is not None and any(c in table.columns and table[c].notna().any() for c in cols)


def hir_caption(hir: pd.DataFrame | None) -> str:
    """The HIR table's caption: '(95 % intervals)' only where a cell has one (S18: captions promised intervals no
    cell had, under the quick profile's short segments)."""
    return ("HIR: IOPS of the access segments after each idle period, against the steady-state baseline ("
            + ("95 % intervals" if _has_ci(hir, HIR_CI) else "short segments: no 95 % interval") + ")")


def xsr_caption(xsr: pd.DataFrame | None) -> str:
    """The XSR table's caption: its levels' '95 % intervals' promised only where a level has one (as hir_caption)."""
    return ("XSR: the level before and after each change of workload (MB/s, "
            + ("95 % intervals" if _has_ci(xsr, XSR_CI) else "no 95 % interval: short levels") + ") and the time it "
            "takes to settle")


def summary_caption(hir: pd.DataFrame | None, xsr: pd.DataFrame | None) -> str:
    """The caption of :func:`pts_summary`'s table: it promises 95 % intervals only where a HIR or XSR result has
    one (CBW and DIRTH results are single runs and never do); with HIR, which segments its IOPS average (R-loop
    6.1: s001 left out unsaid; memstor.analysis.pts_recovery: each wait state's first follows continuous writes)."""
    has = _has_ci(hir, HIR_CI) or _has_ci(xsr, XSR_CI)
    segs = "; HIR: the segments after an idle, not each wait's first, which follows writes" \
        if hir is not None and len(hir) else ""
    return ("The other SNIA PTS tests: the result of each (" + ("95 % intervals in brackets where a result has one"
            if has else "single short runs: no result here has a 95 % interval") + f"; T threads, Q queue depth{segs})")


def pts_summary(hir: pd.DataFrame | None, xsr: pd.DataFrame | None, cbw: pd.DataFrame | None,
                dirth: pd.DataFrame | None, validity: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per device x PTS test that ran: the test and its result in one cell (HIR: the recovery ratio after
    each idle period [95 % interval]; XSR: the levels around each transition and the settle time; CBW: the most and
    the least IOPS; DIRTH: the optimal, maximum-IOPS and minimum points). The report's compact table (the PDF);
    the per-test tables keep every row. With ``validity`` (memstor.analysis.validity.pts) CBW and DIRTH say where
    steady state was not reached, DIRTH gives no roles where IOPS fall as demand rises and no 'optimal' point
    the ceiling did not place, and names the reruns that differ from their matrix point."""
    rows = []
    for test, table, result in (("HIR (host idle recovery)", hir, _hir_result),
                                ("XSR (cross-stimulus recovery)", xsr, _xsr_result),
                                ("CBW (composite block-size workload)", cbw, _cbw_result),
                                ("DIRTH (demand intensity)", dirth, _dirth_result)):
        if table is None or table.empty:
            continue
        for host, g in table.groupby("host", sort=True):
            rows.append({"device": host, "test": test,
                         "result": result(g, validity) if result in (_cbw_result, _dirth_result, _hir_result)
                         else result(g)})
    out = pd.DataFrame(rows, columns=["device", "test", "result"])
    return out if out["device"].nunique() > 1 else out.drop(columns="device")
