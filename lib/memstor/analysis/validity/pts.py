"""The SNIA PTS demand tests' checks (CBW, DIRTH: memstor.analysis.pts_demand), from the experiments' own rows
(``fio``: ds.fio, its ``table`` fio-pts-cbw / fio-pts-dirth). Each judges both sides; a number not recorded gives
``unchecked``. Section ``pts``: a failure withholds the finding it gates in memstor.report.text.pts.

- ``pts_steady_state``: the drive reached the PTS steady state before the T x Q matrix. Value: of the data
  excursion (% of the window average, (max - min) / mean, PTS bound DATA_EXCURSION_PCT) and the slope excursion
  (bound SLOPE_EXCURSION_PCT) of the last WINDOW_ROUNDS preconditioning rounds (IOPS, T and Q of the rounds), the
  one nearer its bound, which is the band's high side and the limit (the unit names which); the status is the
  run's own verdict (``ss_status``): achieved pass, not achieved fail (the matrix was measured while the state still
  moved), anything else unchecked. Both excursions are in the evidence. HIR's preconditioning too (subject 'HIR
  preconditioning': the baseline its recovery ratios are read against), judged by the two excursions themselves
  (HIR records no verdict).
- ``pts_repeat``: a DIRTH point re-measured (its histogram capture, phase histogram) gives the IOPS of the matrix
  point. Value: capture / matrix IOPS; within 1/REPEAT_WARN..REPEAT_WARN pass, within 1/REPEAT_FAIL..REPEAT_FAIL
  warn, beyond fail (the matrix's differences between points are no larger than one point's own rerun).
- ``pts_demand``: more demand gives more IOPS. Value: the IOPS of the largest T x Q over the IOPS of the
  smallest (T1 Q1). Below 1 fail (IOPS fall as demand rises: the state drifted between points, or the device
  collapses under load: the roles are no demand-intensity result); above the ratio of their outstanding I/O
  fail (by Little's law X = N / R, more than N-fold needs a response time that fell with load: the points are
  not one state). One point or no IOPS: unchecked.
- ``dirth_optimal``: the response-time ceiling places DIRTH's optimal point. Value: the share of matrix points
  whose mean response time is under the ceiling; pass strictly between 0 and 1. 1: every point is under it, so
  the "optimal" point is where the grid stops, not where the ceiling is (fail); 0: no point is under it (fail:
  no optimal point). No ceiling: unchecked.
- ``hir_recovery``: a HIR wait state's recovery ratio is a difference from the baseline (memstor.analysis.
  pts_recovery.recovery_shown: windows of one length, 3+ segments, every segment beyond the baseline rounds'
  range either way: a two-sided rank comparison, so no band of its own). Value: the ratio; pass where shown,
  fail where not (the report says 'not shown' beside the ratio), unchecked without a baseline. The evidence
  names the measured idle beside the planned wait (fio's restart adds 0.3-0.5 s).
"""

from __future__ import annotations

import pandas as pd

from memstor.analysis import pts_demand as pd_
from memstor.analysis.pts_recovery import hir_table
from memstor.analysis.steady_state import DATA_EXCURSION_PCT, SLOPE_EXCURSION_PCT, WINDOW_ROUNDS, window_check
from memstor.analysis.validity.rows import FAIL, PASS, band, has, n, row, unchecked

#: A rerun within this factor (either way) of its matrix point agrees: the 10 % spread assumed for single fresh runs.
REPEAT_WARN = 1.1
#: Beyond this factor (either way) the rerun contradicts the matrix point: the 1.25x of config_agreement.
REPEAT_FAIL = 1.25
#: The experiment tables and their names in subjects.
TESTS = {"fio-pts-cbw": "CBW", "fio-pts-dirth": "DIRTH"}
_SECTION = "pts"


def pts_rows(fio: pd.DataFrame | None, hir_seconds: pd.DataFrame | None = None) -> list[dict]:
    """hir_recovery per HIR wait state and pts_steady_state of its preconditioning; pts_steady_state and pts_demand
    per device x test (CBW, DIRTH);
    pts_repeat per re-measured DIRTH point; dirth_optimal per device."""
    if not has(fio, "table", "point", "phase"):
        return []
    hir = fio[fio["table"] == "fio-pts-hir"]
    out: list[dict] = hir_rows(hir_table(hir, hir_seconds))
    out += [_hir_steady(str(host), g) for host, g in hir.groupby("host", sort=True)] if "host" in hir else []
    for table, test in TESTS.items():
        rows = fio[fio["table"] == table]
        if rows.empty:
            continue
        tot = pd_.point_totals(rows)
        for host, g in tot.groupby("host", sort=True):
            mine = rows[rows["host"] == host]
            out.append(_steady(host, test, g, mine))
            out.append(_demand(host, test, g[g["phase"] == pd_.MATRIX]))
            if test == "DIRTH":
                out.extend(_repeats(host, g))
                out.append(_optimal(host, g[g["phase"] == pd_.MATRIX]))
    return out


def _tq(r) -> str:
    return f"T{int(r['threads'])} Q{int(r['qd'])}"


def _steady(host, test: str, tot: pd.DataFrame, rows: pd.DataFrame) -> dict:
    subject = f"{test} preconditioning"
    rounds = tot[tot["phase"] == pd_.STEADY]
    status = next((str(s) for s in rows.get("ss_status", pd.Series(dtype=object)).dropna()), "")
    iops = pd.to_numeric(rounds["iops"], errors="coerce").dropna().tolist()
    if len(iops) < WINDOW_ROUNDS or status not in ("achieved", "not achieved"):
        why = (f"{len(iops)} preconditioning rounds recorded (a window is {WINDOW_ROUNDS})" if len(iops) < WINDOW_ROUNDS
               else f"the run's steady-state verdict is {status or 'not recorded'}")
        return unchecked(host, "pts_steady_state", subject, why, _SECTION, "%", low=0.0, high=DATA_EXCURSION_PCT,
                         consequence=f"the {test} matrix is not shown to come from a steady state")
    where = _tq(rounds.iloc[0]) if len(rounds) else ""
    first = f" (round 1: {n(iops[0])})" if len(iops) > WINDOW_ROUNDS else ""
    return _window_row(host, subject, iops, status == "achieved", f" at {where}", f"{first}",
                       f"; the run's verdict: {status}", f"steady state not reached: the {test} matrix was measured "
                       "while the drive's state still moved, so its points are no PTS figures and differ by that "
                       "drift as well")


def _window_row(host, subject: str, iops: list, ok: bool | None, at: str, first: str, verdict: str,
                consequence: str) -> dict:
    """pts_steady_state from the last WINDOW_ROUNDS preconditioning rounds' IOPS: value and limit the excursion nearer
    its PTS bound (S11-loop 17: fail with data excursion 9.87 <= 20 shown, the slope excursion 11.2 > 10 that failed
    only in the evidence), both in the evidence; ``ok`` the verdict (None: the excursions judge, as for HIR)."""
    w = window_check(iops[-WINDOW_ROUNDS:])
    if ok is None:
        ok = w.data_excursion_pct <= DATA_EXCURSION_PCT and w.slope_excursion_pct <= SLOPE_EXCURSION_PCT
    value, bound, what = max((w.data_excursion_pct, DATA_EXCURSION_PCT, "data"),
                             (w.slope_excursion_pct, SLOPE_EXCURSION_PCT, "slope"), key=lambda e: e[0] / e[1])
    evidence = (f"last {WINDOW_ROUNDS} rounds{at}: {n(min(iops[-WINDOW_ROUNDS:]))}-{n(max(iops[-WINDOW_ROUNDS:]))} "
                f"IOPS{first}, data excursion {n(w.data_excursion_pct)} % and slope excursion "
                f"{n(w.slope_excursion_pct)} % of their mean {n(w.window_avg)} (PTS: at most 20 % and 10 %){verdict}")
    return row(host, "pts_steady_state", subject, PASS if ok else FAIL, value, bound, f"% ({what} excursion)",
               evidence, "" if ok else consequence, _SECTION, low=0.0, high=bound)


def _hir_steady(host: str, rows: pd.DataFrame) -> dict:
    """pts_steady_state of HIR's preconditioning: its last WINDOW_ROUNDS rounds (phase precondition, the write
    direction) within PTS's data and slope excursions (20 %, 10 % of their mean), the baseline its recovery ratios are
    read against (fourteenth read S17-bare 1: a 'baseline' of rounds rising 36,231 -> 58,646 IOPS, 48 % excursions,
    had no check while CBW's and DIRTH's did)."""
    subject = "HIR preconditioning"
    pc = rows[rows["phase"] == "precondition"] if "phase" in rows else rows.iloc[0:0]
    if "direction" in pc:
        pc = pc[pc["direction"].fillna("write") == "write"]
    iops = pd.to_numeric(pc.get("iops"), errors="coerce").dropna().tolist()
    if len(iops) < WINDOW_ROUNDS:
        return unchecked(host, "pts_steady_state", subject, f"{len(iops)} preconditioning rounds recorded (a window "
                         f"is {WINDOW_ROUNDS})", _SECTION, "%", low=0.0, high=DATA_EXCURSION_PCT,
                         consequence="the HIR baseline is not shown to be a steady state")
    return _window_row(host, subject, iops, None, "", "", "", "steady state not reached: the HIR baseline averages "
                       "rounds whose state still moved, so the recovery ratios against it are no PTS figures")


def _demand(host, test: str, matrix: pd.DataFrame) -> dict:
    subject = f"{test} matrix"
    ok = matrix[pd.to_numeric(matrix["iops"], errors="coerce") > 0].copy()
    if len(ok) < 2:
        return unchecked(host, "pts_demand", subject, "fewer than two matrix points with IOPS", _SECTION, "x",
                         low=1.0)
    ok = ok.assign(_oio=pd.to_numeric(ok["total_oio"], errors="coerce"), _t=pd.to_numeric(ok["threads"]))
    ok = ok.sort_values(["_oio", "_t"], kind="stable")
    least, most = ok.iloc[0], ok.iloc[-1]
    ratio, high = float(most["iops"]) / float(least["iops"]), float(most["_oio"]) / float(least["_oio"])
    status, limit = band(ratio, 1.0, high)
    evidence = (f"{_tq(most)} {n(most['iops'])} IOPS against {_tq(least)} {n(least['iops'])} ({n(ratio)}x, "
                f"{n(high)}x the outstanding I/O)")
    consequence = "" if status == PASS else (
        "IOPS fall as demand rises: the drive's state drifted between the points (or it collapses under load); "
        "the roles are no demand-intensity result" if ratio < 1 else
        "more than the outstanding I/O's ratio needs a response time that fell with load: the points are not one "
        "state")
    return row(host, "pts_demand", subject, status, ratio, limit, "x", evidence, consequence, _SECTION, low=1.0,
               high=high)


def _repeats(host, tot: pd.DataFrame) -> list[dict]:
    matrix = tot[tot["phase"] == pd_.MATRIX]
    out = []
    for _, cap in tot[tot["phase"] == pd_.HISTOGRAM].iterrows():
        same = matrix[(matrix["threads"] == cap["threads"]) & (matrix["qd"] == cap["qd"])]
        subject = f"DIRTH {_tq(cap)} rerun"
        if same.empty or pd.isna(cap["iops"]) or pd.isna(same["iops"].iloc[0]) or same["iops"].iloc[0] <= 0:
            out.append(unchecked(host, "pts_repeat", subject, "no IOPS of the matrix point or of its rerun",
                                 _SECTION, "x matrix", low=1 / REPEAT_WARN, high=REPEAT_WARN))
            continue
        first = float(same["iops"].iloc[0])
        ratio = float(cap["iops"]) / first
        status, limit = band(ratio, 1 / REPEAT_FAIL, REPEAT_FAIL, warn_low=1 / REPEAT_WARN, warn_high=REPEAT_WARN)
        evidence = (f"the {cap['role'] or 'role'} point rerun for its histogram: {n(cap['iops'])} IOPS against the "
                    f"matrix's {n(first)} ({n(ratio)}x)")
        consequence = "" if status == PASS else (
            "one point's rerun differs more than the matrix's points may: the roles rest on single runs that do "
            "not repeat" if status == FAIL else "the rerun differs by more than 10 %: read the matrix to that "
            "precision")
        out.append(row(host, "pts_repeat", subject, status, ratio, limit, "x matrix", evidence, consequence,
                       _SECTION, low=1 / REPEAT_WARN, high=REPEAT_WARN))
    return out


def _optimal(host, matrix: pd.DataFrame) -> dict:
    subject = "DIRTH optimal point"
    ceiling = pd.to_numeric(matrix["ceiling_us"], errors="coerce").dropna()
    lat = pd.to_numeric(matrix["lat_mean_us"], errors="coerce")
    if ceiling.empty or lat.dropna().empty:
        return unchecked(host, "dirth_optimal", subject, "no response-time ceiling or no mean response time",
                         _SECTION, "share", low=0.0, high=1.0,
                         consequence="an 'optimal' point is not placed by a ceiling")
    c = float(ceiling.iloc[0])
    share = float((lat.dropna() < c).mean())
    worst = matrix.loc[lat.idxmax()]
    evidence = (f"{int(round(share * lat.notna().sum()))} of {int(lat.notna().sum())} points under the "
                f"{n(c)} µs ceiling; the slowest, {_tq(worst)}, at {n(worst['lat_mean_us'])} µs mean")
    if 0.0 < share < 1.0:
        return row(host, "dirth_optimal", subject, PASS, share, 1.0, "share", evidence, "", _SECTION, low=0.0,
                   high=1.0)
    consequence = ("no point reached the ceiling: the 'optimal' point is where the grid stops, not where the "
                   "ceiling is; PTS's optimal point lies beyond this grid" if share >= 1.0
                   else "no point is under the ceiling: there is no optimal point")
    return row(host, "dirth_optimal", subject, FAIL, share, 1.0 if share >= 1.0 else 0.0, "share", evidence,
               consequence, _SECTION, low=0.0, high=1.0)


def hir_rows(hir: pd.DataFrame | None) -> list[dict]:
    """hir_recovery per device x wait state of the HIR table (memstor.analysis.pts_recovery.hir_table)."""
    if not has(hir, "host", "wait_s", "recovery_shown"):
        return []
    out = []
    for _, r in hir.iterrows():
        subject = f"HIR after {n(r['idle_s_mean'])} s idle ({n(r['wait_s'])} s planned)"
        shown = r["recovery_shown"]
        if shown is None or shown != shown:
            out.append(unchecked(r["host"], "hir_recovery", subject, str(r.get("recovery_note") or "no baseline"),
                                 _SECTION, "x baseline"))
            continue
        ratio = f"{n(r['recovery_ratio'])}x the baseline {n(r['baseline_iops'])} IOPS: "
        out.append(row(r["host"], "hir_recovery", subject, PASS if bool(shown) else FAIL, r["recovery_ratio"], None,
                       "x baseline", ratio + str(r["recovery_note"]), "" if bool(shown) else
                       "no recovery (or loss) after this idle is shown: the ratio is within what the windows "
                       "compared allow", _SECTION))
    return out
