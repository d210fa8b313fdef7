"""Report text, steady state: the verdicts (memstor.analysis.steady_state.verdict_table), the per-round
table and the PTS IOPS matrix for display, and one sentence per device (markdown). Units: IOPS, MB/s
(10^6 B/s), µs, GB (10^9 B)."""

from __future__ import annotations

import math

import pandas as pd

from memstor.analysis import steady_state as ss
from memstor.analysis.validity.agreement import NOT_COMPARED, drive_state
from memstor.analysis.validity.steady import doubt_words, fresh_doubt
from memstor.core.fmt import fmt_number
from memstor.core.schema import missing, truthy
from memstor.core.units import size_text

#: The caption of :func:`steady_display`'s table (R-1cpu C5, fifth read: 'GB written 3.74' = the rounds' 3.20 + 0.54
#: of preconditioning; a longer column header took the bare PDF to 11 pages).
STEADY_CAPTION = ("Steady state: verdict, window averages and excursions (limits 20 % and 10 %); GB written includes "
                  "the preconditioning")


#: The span column's words after its size: a raw device, part of one (region: S12-loop 1), else a test file.
SPAN_WORDS = {"full_device": "raw device", "region": "of a raw device"}


def steady_display(steady: pd.DataFrame) -> pd.DataFrame:
    """The steady-state verdicts (memstor.analysis.steady_state.verdict_table) for the report: workload,
    span, preconditioning, rounds, verdict, the window averages and both excursions against their limits (the
    device column only with several devices; the verdict without the checks behind it, which
    :func:`steady_sentences` gives). The p99 column is the mean of the window rounds' p99s, named so:
    a mean of percentiles is not the window's p99."""
    if steady.empty:
        return steady

    def pct(v, limit):
        return "–" if missing(v) else f"{v:.1f} % (≤ {limit:g})"

    def gb(v):
        return "–" if missing(v) else f"{v / 1e9:.2f}"

    out = pd.DataFrame({
        "device": steady["host"],
        "workload": steady["workload"],
        "span": [f"{size_text(int(b))} {SPAN_WORDS.get(s, 'test file')}" if not missing(b) and b
                 else "?" for s, b in zip(steady["span"], steady["span_bytes"])],
        "preconditioning": [_preconditioning(n, b, span, gb(b)) for n, b, span in
                            zip(steady["precondition_passes"], steady["precondition_bytes"], steady["span_bytes"])],
        "rounds": [f"{int(r)} of ≤ {int(m)}, {fmt_number(s)} s each" for r, m, s in
                   zip(steady["rounds"], steady["max_rounds"], steady["round_s"])],
        # the rule's verdict, without the checks after it ('; steady_window_trend, steady_round_length warn'):
        # the sentence under the table gives them with their numbers (the column wrapped to 7 lines and ran over)
        "verdict": steady["verdict"].astype(str).str.split("; ").str[0],
        "window IOPS": steady["window_avg_iops"].map(fmt_number),
        "window MB/s": steady["window_avg_bw_MBps"].map(fmt_number),
        "window mean lat (µs)": steady["window_avg_lat_mean_us"].map(fmt_number),
        "mean of the rounds' p99 (µs)": steady["window_avg_clat_p99_us"].map(fmt_number),
        "excursions: data / slope": [f"{pct(d, ss.DATA_EXCURSION_PCT)} / {pct(sl, ss.SLOPE_EXCURSION_PCT)}" for d, sl
                                     in zip(steady["data_excursion_pct"], steady["slope_excursion_pct"])],
        "GB written": steady["bytes_written"].map(gb),  # with the preconditioning (R-1cpu C5): STEADY_CAPTION says so
    })
    return out if steady["host"].nunique() > 1 else out.drop(columns="device")


def _preconditioning(passes, written, span, gb: str) -> str:
    """'2 × sequential writes (0.54 GB)'; where the passes wrote more than the span the rounds wrote (by over 5 %),
    what each pass covered: '2 × sequential writes over 6 GiB (12.88 GB; each 24× the rounds' span)'
    (ninth read S12-loop9 3: a run whose rounds wrote 256 MiB of a 6 GiB device it had preconditioned whole read as 'the span
    written twice'); '–' without passes."""
    if missing(passes) or not passes:
        return "–"
    head = f"{int(passes)} × sequential writes"
    each = written / passes if not missing(written) else float("nan")
    if missing(span) or not span or not each > 1.05 * span:
        return f"{head} ({gb} GB)"
    return f"{head} over {size_text(int(each))} ({gb} GB; each {each / span:.0f}× the rounds' span)"


def steady_sentences(steady: pd.DataFrame, points: pd.DataFrame | None = None,
                     validity: pd.DataFrame | None = None) -> list:
    """One sentence per device: the verdict, the window average, and what it means for the comparison. Steady state
    is said only where the gate lets it stand (memstor.analysis.validity.gate.gate_steady: ``valid`` and
    ``steady_shown``); a run that met the window rule but not the checks reads 'not shown' or 'not valid' with why.
    With ``points`` (the fio summary), the same configuration's measurements in the other experiments follow; with
    ``validity``, one whose series is no level (:data:`NO_LEVEL`) is given without a ratio."""
    out = []
    for _, v in steady.iterrows():
        where = ("the whole raw device" if v["span"] == "full_device" else
                 f"{size_text(v['span_bytes'])} of the raw device" if v["span"] == "region" else "the test file's span")
        head = f"**{v['host']}**: {v['workload']}"
        if missing(v["window_avg_iops"]):
            out.append(f"{head}: {v['verdict']} (a window needs 5 rounds).")
            continue
        avg = fmt_number(v["window_avg_iops"])
        window = f"window rounds {int(v['window_first'])}–{int(v['window_last'])}"
        if not _stands(v, "valid"):
            why = str(v.get("not_valid") or "").removeprefix("not valid: ")
            said = (f"{head} on {where}: {v['verdict']} ({why}). The average of its {window}, {avg} IOPS, is not a "
                    "steady-state figure; the spec table withholds it.")
        elif v["ss_achieved"] and not _stands(v, "steady_shown"):
            said = (f"{head} on {where}: {v['verdict']} ({v.get('not_shown') or ''}). The average of its {window}, "
                    f"{avg} IOPS, is an average of successive rounds of one run, not a steady-state level; the spec "
                    "table states it as 'steady state not shown'.")
        elif v["ss_achieved"]:
            said = (f"{head} reached steady state at round {int(v['ss_round'])} ({window}) on {where}: {avg} IOPS "
                    "on average over the window (one run); the spec table compares this value as the steady state "
                    "its sheet states.")
        else:
            said = (f"{head}: {v['verdict']} on {where}; the last window averages {avg} IOPS (data excursion "
                    f"{v['data_excursion_pct']:.1f} %, slope excursion {v['slope_excursion_pct']:.1f} %). The spec "
                    "table uses it flagged 'steady state not achieved'.")
        out.append(said + _elsewhere(points, v, validity))
    return out


def _stands(v: pd.Series, col: str) -> bool:
    """A gate column (``valid``, ``steady_shown``) lets the verdict stand: absent, empty or true."""
    x = v.get(col)
    return True if x is None or missing(x) else bool(x)


#: Checks whose failure says a point's figure is no level of its series (a mean over a series that moves): such a
#: figure is given beside a window without a ratio (R-loop p4: the write-saturation run's 45,781 IOPS, '0.44x',
#: the mean of a series wsat_one_level says rises 154 -> 249 MB/s).
NO_LEVEL = ("wsat_one_level", "wsat_series")


def _no_level(validity: pd.DataFrame | None, points: pd.DataFrame | None, v: pd.Series, experiment) -> str:
    """The first failed :data:`NO_LEVEL` check ('wsat_one_level') whose subject names a point of ``experiment``
    at v's configuration, or ''."""
    if validity is None or validity.empty or points is None or "point" not in points.columns:
        return ""
    mine = points[(points["host"].astype(str) == str(v["host"])) & (points["experiment"] == experiment)
                  & (points["rw"] == v["rw"]) & (points["bs_bytes"] == v["bs_bytes"])]
    bad = validity[(validity["host"].astype(str) == str(v["host"])) & validity["check"].isin(NO_LEVEL)
                   & (validity["status"] == "fail")]
    for check, subject in zip(bad["check"], bad["subject"]):
        if any(f"({p})" in str(subject) for p in mine["point"].dropna().astype(str)):
            return str(check)
    return ""


def _elsewhere(points: pd.DataFrame | None, v: pd.Series, validity: pd.DataFrame | None = None) -> str:
    """' The same workload (128 outstanding I/Os) in other experiments of this run: 100,307–116,240 IOPS
    (fio-pts-hir, 13 points, 256 MiB file), 0.81–0.94× this window's average; ...' ('' without any): the other
    experiments' IOPS of the verdict's rw, block size and outstanding I/O, each as a ratio to the window average.
    Not called the same configuration: run length and state differ, and a point on another file span than the
    window's (v's span_bytes) is said apart, with what follows (S6-bare M-2: 68,307 IOPS on a 1 GiB file, 0.55× the
    256 MiB window's 124,035), never that the window's figure 'holds' on its own span (S12-1cpu 10: the same span's
    other runs measured 0.63-0.97x of it)."""
    same = ss.same_configuration(points, v)
    if same.empty:
        return ""
    span = int(v["span_bytes"]) if v.get("span") == "file" and not missing(v.get("span_bytes")) else 0
    said: list[str] = []
    other: list[str] = []
    of = "file" if v.get("span") == "file" else "of the device"  # S13-loop 11: a raw device's span is no file
    for _, r in same.iterrows():
        lo, hi = fmt_number(r["iops_min"]), fmt_number(r["iops_max"])
        size = "" if missing(r["file_size_bytes"]) else f", {size_text(int(r['file_size_bytes']))} {of}"
        pts = f"{int(r['points'])} point{'s' if r['points'] != 1 else ''}"
        flat = _no_level(validity, points, v, r["experiment"])
        tail = (f" ({r['experiment']}, {pts}{size}; its whole-run mean, no level: {flat} failed, so no ratio to this "
                "window)" if flat else f" ({r['experiment']}, {pts}{size}){_ratio(r, v)}")
        text = f"{lo if lo == hi else f'{lo}–{hi}'} IOPS{tail}{_doubt(points, v, r)}"
        apart = bool(span) and not missing(r["file_size_bytes"]) and int(r["file_size_bytes"]) != span
        (other if apart else said).append(text)
    out = (f" The same workload ({int(v['outstanding_io'])} outstanding I/Os) in other experiments of this run "
           f"(other run lengths and states): " + "; ".join(said) + ".") if said else ""
    if other:
        out += (f" On another file span than the window's {size_text(span)}: " + "; ".join(other)
                + f": the window measured its {size_text(span)} file only; whether the span, the run "
                "length, the file's state or the machine's makes the difference is not shown.")
    return out


def _doubt(points: pd.DataFrame | None, v: pd.Series, r: pd.Series) -> str:
    """', itself in doubt: the same run measured 88,491 IOPS at 32 in flight in fio-rw-ratio, ... (2.07-2.13x ...):
    it may have been measured in another state of the machine or the file (...)' where a closed-loop fresh experiment's point of the verdict's
    configuration (r: a same_configuration row) lies below the run's fresh points with no more I/Os in flight by
    more than the run-to-run spread (memstor.analysis.validity.steady.fresh_doubt; S7-bare M-1: the sweep's 41,612
    IOPS at 128); '' otherwise."""
    if drive_state(r["experiment"]) != "fresh" or r["experiment"] in NOT_COMPARED:
        return ""  # another drive state, or a trajectory (write saturation): no closed-loop point to doubt
    above, spread = fresh_doubt(points, str(v["host"]), v["rw"], v["bs_bytes"], v["outstanding_io"],
                                float(r["iops_min"]), apart_from=str(r["experiment"]))
    if above.empty:
        return ""
    return (f", itself in doubt: the same run measured {doubt_words(above, float(r['iops_min']), spread)}: it may "
            "have been measured in another state of the machine or the file (not shown here: a rerun of it beside "
            "those points would show it)")


def _ratio(r: pd.Series, v: pd.Series) -> str:
    """', 0.81–0.94× this window's average' (r's IOPS range over v's window_avg_iops), '' without one."""
    if missing(v.get("window_avg_iops")) or not float(v["window_avg_iops"]) > 0:
        return ""
    lo, hi = (float(r[c]) / float(v["window_avg_iops"]) for c in ("iops_min", "iops_max"))
    return f", {lo:.2f}{'' if f'{lo:.2f}' == f'{hi:.2f}' else f'–{hi:.2f}'}× this window's average"


def steady_rounds_display(rounds: pd.DataFrame) -> pd.DataFrame:
    """The per-round table for people: round, IOPS, MB/s (10^6 B/s), mean latency (µs), p99 completion
    latency (µs), GB written (cumulative, 10^9 B, preconditioning included), in window; a host column with
    several devices and status / error columns when a round failed. Every round, in order."""
    if rounds is None or rounds.empty:
        return pd.DataFrame(columns=["round", "IOPS", "MB/s", "mean latency (µs)", "p99 latency (µs)",
                                     "GB written", "in window"])
    r = rounds.sort_values([c for c in ("host", "round") if c in rounds.columns])
    out = pd.DataFrame({
        "round": r["round"].astype(int),
        "IOPS": r["iops"].round(0),
        "MB/s": r["bw_MBps"].round(1),
        "mean latency (µs)": r["lat_mean_us"].round(1),
        "p99 latency (µs)": r["clat_p99_us"].round(1),
        "GB written": (r["bytes_written"] / 1e9).round(3),
        "in window": r["in_window"].map(truthy),
    })
    if "host" in r.columns and r["host"].nunique() > 1:
        out.insert(0, "host", r["host"])
    if "status" in r.columns and (r["status"] != "done").any():
        out["status"] = r["status"]
        out["error"] = r.get("error")
    return out.reset_index(drop=True)


def _read_pct(rw, mix) -> float:
    """Read share (%) of a matrix point: rwmixread, or 100 / 0 for pure random read / write."""
    if not pd.isna(mix):
        return float(mix)
    return {"randread": 100.0, "read": 100.0, "randwrite": 0.0, "write": 0.0}.get(rw, math.nan)


def steady_matrix_display(matrix: pd.DataFrame) -> pd.DataFrame:
    """The PTS IOPS matrix averaged over the measurement window: rows block size (K = 1024 B), columns
    read % (100 ... 0, PTS order), cells the mean over the window's rounds of each point's IOPS (read +
    write of a mixed point). Input: fio-steady-state-matrix.csv; successful window rows only; with
    several devices the rows are (host, block size). Empty frame without a window."""
    if matrix is None or matrix.empty:
        return pd.DataFrame()
    m = matrix[matrix["in_window"].map(truthy) & matrix["iops"].notna()]
    if "status" in m.columns:
        m = m[m["status"] == "done"]
    if m.empty:
        return pd.DataFrame()
    m = m.assign(read_pct=[_read_pct(rw, mix) for rw, mix in zip(m["rw"], m["rwmixread"])],
                 host=m["host"] if "host" in m.columns else "")
    point = "point" if "point" in m.columns else "round"
    per_point = m.groupby(["host", "bs_bytes", "read_pct", "round", point], dropna=False)["iops"].sum()
    cells = per_point.groupby(level=["host", "bs_bytes", "read_pct"]).mean().unstack("read_pct")
    cells = cells[sorted(cells.columns, reverse=True)]
    cells.columns = [f"{c:g} % read" for c in cells.columns]
    cells = cells.round(0)
    if m["host"].nunique() > 1:
        cells.index = cells.index.set_levels([cells.index.levels[0],
                                              [size_text(int(b)) for b in cells.index.levels[1]]])
        cells.index.names = ["host", "block size"]
    else:
        cells = cells.droplevel("host")
        cells.index = [size_text(int(b)) for b in cells.index]
        cells.index.name = "block size"
    cells.columns.name = "IOPS, window average"
    return cells
