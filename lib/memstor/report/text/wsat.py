"""Report text, write saturation: the runs (burst and sustained levels), their cliffs, and one paragraph per
run in plain words (memstor.analysis.wsat). Pure: DataFrame in, display table or markdown out."""

from __future__ import annotations

import pandas as pd

from memstor.analysis.validity.wsat import LEVEL_ALPHA, LEVEL_BAND, MATCH_PCT
from memstor.core.fmt import and_join, fmt_interval, fmt_number
from memstor.core.schema import missing


def _gb(v) -> str:
    """GB (10^9 B) to 0.1, or to 2 significant digits below 1 GB (R-def p5: 0.0671 GB printed '0.1')."""
    return "–" if missing(v) else f"{float(v):,.1f}" if abs(float(v)) >= 1 else f"{float(v):.2g}"


def _short(w: pd.DataFrame) -> list[bool]:
    """Per run: a level stands but wsat_series warned (``caveat``: too short to tell a cliff from noise)."""
    caveat = w["caveat"] if "caveat" in w.columns else pd.Series("", index=w.index)
    return [bool(str(c or "")) and not missing(v) for c, v in zip(caveat.fillna(""), w["sustained_MBps"])]


def _told(w: pd.DataFrame) -> list[bool]:
    """Per run: its series could tell a cliff from none — a level stands (the gate kept it: wsat_series,
    series_matches_whole and wsat_one_level did not fail) and no wsat_series warning (too short). Third read
    R-loop 5.1: 'cliffs 0' beside a run whose wsat_one_level failed (154 -> 249 MB/s) and one of 1 whole second."""
    short = _short(w)
    return [not missing(v) and not s for v, s in zip(w["sustained_MBps"], short)]


def wsat_display(w: pd.DataFrame | None) -> pd.DataFrame:
    """One row per write-saturation run: device (with several), workload, span, GB written (TGBW) and what
    stopped the run, burst and sustained MB/s with their 95 % intervals, sustained / burst, cliffs and the GB
    where the first one happens. Without a cliff the run is one window: its level stands under "sustained", the
    burst reads '– (no cliff: one level)' (S12-loop9 9: not 'one window') and the ratio '–' (1.00 by construction is no measurement). A run too
    short to tell a cliff from noise (wsat_series warned) gives its mean without an interval; a run that could not
    tell (:func:`_told`: too short, or its level withheld) reads cliffs 'not determined', burst '–'."""
    cols = ["device", "workload", "span", "written (GB)", "burst (MB/s)", "sustained (MB/s)", "sustained / burst",
            "cliffs", "first cliff at (GB)"]
    if w is None or w.empty:
        return pd.DataFrame(columns=cols)
    cliffs = pd.to_numeric(w["cliffs"], errors="coerce").fillna(0).astype(int).tolist()
    out = pd.DataFrame({
        "device": w["host"], "workload": w["workload"],
        "span": [("whole device" if s == "full_device" else f"test file {fmt_number(b / 2**30)} GiB"
                  if not missing(b) else "test file") for s, b in zip(w["span"], w["span_bytes"])],
        "written (GB)": [f"{_gb(g)} ({'stopped by the time cap' if s == 'time' else 'target reached'})"
                         if s in ("time", "bytes") else _gb(g) for g, s in zip(w["tgbw_GB"], w["stopped_by"])],
        "burst (MB/s)": ["–" if short else fmt_interval(v, lo, hi) if c else f"{fmt_interval(v, lo, hi)} (before a "
                         "rise)" if rose else "–" if not told else "– (no cliff: one level)"
                         for v, lo, hi, c, told, rose, short in
                         zip(w["burst_MBps"], w["burst_MBps_ci_low"], w["burst_MBps_ci_high"], cliffs, _told(w),
                             [_rose(r) for _, r in w.iterrows()], _short(w))],
        "sustained (MB/s)": [f"no level (too short); mean {fmt_number(_seconds_mean(r))}" if short else
                             fmt_interval(r["sustained_MBps"], r["sustained_MBps_ci_low"], r["sustained_MBps_ci_high"])
                             for (_, r), short in zip(w.iterrows(), _short(w))],
        "sustained / burst": ["–" if missing(r) or short else f"{float(r):.2f}"
                              for r, short in zip(w["sustained_over_burst"], _short(w))],
        "cliffs": [str(int(c)) if told else "not determined" for c, told in zip(cliffs, _told(w))],
        "first cliff at (GB)": [_gb(g) for g in w["first_cliff_GB"]],
    })
    return out if w["host"].nunique() > 1 else out.drop(columns="device")


def _seconds_mean(r) -> float:
    """The mean of a run's whole seconds (MB/s): ``series_MBps`` where recorded, else its one level (S22-loop 1: a
    short run's 'mean 2,441' was the level after its rise; its 12 seconds averaged 2,108)."""
    return r["series_MBps"] if "series_MBps" in r and not missing(r["series_MBps"]) else r["sustained_MBps"]


def cliffs_display(c: pd.DataFrame | None, w: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per cliff: device, workload, time (s) and GB written, the levels before and after with their
    95 % intervals, the kind (cliff, recovery, thermal) and the thermal verdict; with the runs ``w`` (the wsat table),
    not the steps of a run too short to tell a cliff from noise (S22-loop 4: 'no cliff found ... not determined'
    beside a row for its 8-s step)."""
    cols = ["device", "workload", "at (s)", "at (GB)", "before", "after", "kind", "heat"]
    if c is not None and w is not None and len(c) and len(w) and {"host", "workload"} <= set(c.columns):
        untold = {(str(h), str(k)) for h, k, s in zip(w["host"], w["workload"], _short(w)) if s}
        c = c[[(str(h), str(k)) not in untold for h, k in zip(c["host"], c["workload"])]]
    if c is None or c.empty:
        return pd.DataFrame(columns=cols)
    unit = c["unit"].fillna("MB/s")
    out = pd.DataFrame({
        "device": c["host"], "workload": c["workload"], "at (s)": [fmt_number(t) for t in c["t_s"]],
        "at (GB)": [_gb(g) for g in c["gb_written"]],
        "before": [f"{fmt_interval(v, lo, hi)} {u}" for v, lo, hi, u in
                   zip(c["level_before"], c["level_before_lo"], c["level_before_hi"], unit)],
        "after": [f"{fmt_interval(v, lo, hi)} {u}" for v, lo, hi, u in
                  zip(c["level_after"], c["level_after_lo"], c["level_after_hi"], unit)],
        "kind": c["kind"], "heat": c["thermal_verdict"].fillna(""),
    })
    return out if c["host"].nunique() > 1 else out.drop(columns="device")


def _halves(r) -> str:
    """'its halves' medians 280 and 282 MB/s, Mann-Whitney p = 0.8' (memstor.analysis.wsat.level_shift), or ''."""
    if missing(r.get("level_p")) or missing(r.get("first_half_MBps")):
        return ""
    first, second, p = float(r["first_half_MBps"]), float(r["second_half_MBps"]), float(r["level_p"])
    said = (f" (its halves' medians {fmt_number(first)} and {fmt_number(second)} MB/s, Mann-Whitney p = {p:.2g}")
    if p < LEVEL_ALPHA and first and second:  # apart, yet within the band: one level by the rule, not a flat line
        fast, slow = ("second", "first") if second > first else ("first", "second")
        hi, lo = max(first, second), min(first, second)  # S12-loop 7: each share on its own base
        said += (f": the {fast} half {(hi / lo - 1) * 100:.1f} % faster (the {slow} {(1 - lo / hi) * 100:.1f} % "
                 f"slower), within the ±{LEVEL_BAND * 100:g} % wsat_one_level takes as one level")  # S10-bare 4
    return said + ")"


def series_vs_fio(r) -> str:
    """' fio's whole-run figure: 1,508 MB/s (-9.2 % apart, beyond series_matches_whole's ±2 %).' beside the mean of
    the whole seconds where they differ by more than MATCH_PCT (S9-bare M-3: the same run given as 1,508 on p.3 and
    1,369 on p.5), else ''."""
    run, mean = r.get("run_MBps"), r.get("series_MBps")
    if missing(run) or missing(mean) or not float(run):
        return ""
    pct = (float(mean) / float(run) - 1) * 100
    if abs(pct) <= MATCH_PCT:
        return ""
    return (f" fio's whole-run figure: {fmt_number(run)} MB/s ({pct:+.1f} % apart, beyond series_matches_whole's "
            f"±{MATCH_PCT:g} %).")


def no_cliff_text(r) -> str:
    """What a run without a cliff shows (a wsat_table row, gated): 'no cliff — one level of L [lo, hi] MB/s from
    start to end' only where the series was long enough to tell a cliff from noise (no ``caveat``: wsat_series
    passed) and one level (wsat_one_level: its halves' medians, said); a run too short gives the mean of its
    whole seconds, without an interval (the interval would assume the one level not shown), and says that
    nothing was told."""
    level = fmt_interval(r["sustained_MBps"], r["sustained_MBps_ci_low"], r["sustained_MBps_ci_high"])
    secs = "" if missing(r.get("whole_seconds")) else f"{int(r['whole_seconds'])} "
    if str(r.get("caveat") or ""):
        return (f"no cliff found, but {secs}whole seconds are too short to tell a cliff from noise (wsat_series): "
                f"the mean of those seconds is {fmt_number(_seconds_mean(r))} MB/s, one level at most, not shown "
                "(so no interval is given for it)." + series_vs_fio(r))
    how = "mean, 95 % interval of this run's one-second values" if "[" in level or "±" in level else "mean; no 95 % interval from these seconds"
    if _rose(r):  # S12-bare 2: a change point that rose (171 -> 225 MB/s at 10 s) is no 'start to end'
        return (f"no cliff, but a rise: {fmt_number(r['burst_MBps'])} MB/s before it (the cliffs table says where), "
                f"then one level{_halves(r)} of {level} MB/s ({how}) over its last {int(r['level_seconds'])} of "
                f"{secs}whole seconds (its mean leaves the run's last second out, a segment's edge)"  # S12-bare9 3
                f"{' (within its band)' if _apart(r) else ''}; the whole run's mean is no one "
                "level." + series_vs_fio(r))
    span = "within its band" if _apart(r) else "from start to end"
    return f"no cliff — one level{_halves(r)} of {level} MB/s ({how}) {span}." + series_vs_fio(r)


def _rose(r) -> bool:
    """A run with change points but no fall (``cliffs`` 0 where a level before the first change point was read,
    ``burst_MBps``): its level is the one after the last change point, not the whole run's."""
    cliffs = 0 if missing(r.get("cliffs")) else int(r["cliffs"])
    return cliffs == 0 and not missing(r.get("burst_MBps")) and not missing(r.get("sustained_over_burst")) \
        and not missing(r.get("level_seconds"))


def _apart(r) -> bool:
    """The halves differ by Mann-Whitney (p < LEVEL_ALPHA), though wsat_one_level's band holds them one level."""
    return not missing(r.get("level_p")) and float(r["level_p"]) < LEVEL_ALPHA


def _held(r) -> str:
    """', held its last 13 whole seconds of 22.6 s (not shown to last longer)': what
    the level after a cliff measured (S9-bare M-2: 'a sustained 130 MB/s ... what long writes get; the spec
    comparison uses it', for a level of 13 s that no spec row used)."""
    secs = "" if missing(r.get("level_seconds")) else f" its last {int(r['level_seconds'])} whole seconds"
    run = "" if missing(r.get("runtime_s")) else f" of {fmt_number(r['runtime_s'])} s"
    return f", held{secs}{run} (not shown to last longer)" if secs or run else ""


def _from_state(state) -> str:
    """'from <state>', or 'starting as the point before left it (...)' (R-loop 5.3: 'from as the point ...')."""
    text = "an unknown state" if missing(state) or not str(state) else str(state)
    return f"starting {text}" if text.startswith("as ") else f"from {text}"


#: A whole second below this share of its run's median second is a stall (a dip, not a level: the cliff detector
#: looks for lasting changes only). R-loop p5: seconds 5, 10 and 15 of the 4 KiB run at 26-39 MB/s beside 145-249.
STALL_SHARE = 0.25


def stalls_text(r, seconds: pd.DataFrame | None) -> str:
    """' Stalls: seconds 5, 10 and 15 at 26-39 MB/s (p99 completion latency 0.68-0.85 s), under 25 % of the
    run's median second of 180 MB/s.' for a run (wsat_table row) whose whole seconds (t_s <= whole_seconds) hold
    any below :data:`STALL_SHARE` of their median MB/s; '' where none or no series."""
    if seconds is None or seconds.empty or missing(r.get("whole_seconds")):
        return ""
    s = seconds[(seconds["host"] == r["host"]) & (seconds["point"] == r["point"])]
    s = s[s["t_s"] <= int(r["whole_seconds"])]
    if len(s) < 3:
        return ""
    med = float(s["bw_MBps"].median())
    low = s[s["bw_MBps"] < STALL_SHARE * med]
    if low.empty:
        return ""
    secs = [str(int(t)) for t in low["t_s"]]
    which = and_join(secs)
    bw = f"{fmt_number(low['bw_MBps'].min())}-{fmt_number(low['bw_MBps'].max())}" if len(low) > 1 else fmt_number(
        low["bw_MBps"].iloc[0])
    p99 = ""
    if "clat_p99_us" in low.columns and low["clat_p99_us"].notna().all():
        lo, hi = low["clat_p99_us"].min() / 1e6, low["clat_p99_us"].max() / 1e6
        p99 = f" (p99 completion latency {lo:.2f}-{hi:.2f} s)" if len(low) > 1 else f" (p99 completion latency {hi:.2f} s)"
    return (f" Stalls: second{'s' if len(secs) > 1 else ''} {which} at {bw} MB/s{p99}, under "
            f"{STALL_SHARE * 100:.0f} % of the run's median second of {fmt_number(med)} MB/s (dips, not cliffs: the "
            "run recovered after each; what caused them is not measured here).")


def cliffs_empty(w: pd.DataFrame | None) -> str:
    """What the cliffs table says when it has no row (after 'none — ', or alone where it begins 'not determined':
    memstor.report.export.Table): 'no cliff found' only for runs whose series
    could tell a cliff from none (:func:`_told`), 'not determined' for the others (R-loop p5: 'none — no cliff found' below a table
    reading 'not determined' for both runs)."""
    if w is None or w.empty:
        return "no write-saturation run"
    told = _told(w)
    names = [str(x) for x in w["workload"]]
    yes = [n for n, t in zip(names, told) if t]
    no = [n for n, t in zip(names, told) if not t]
    if not no:
        return "no cliff found in any run"
    why = "(a series that could not tell a cliff from none: the table and sentences above)"
    if yes:
        return f"no cliff found in {', '.join(yes)}; not determined for {', '.join(no)} {why}"
    return f"not determined: no run could show one ({', '.join(no)}) {why}"


def wsat_sentences(w: pd.DataFrame | None, cliffs: pd.DataFrame | None,
                   seconds: pd.DataFrame | None = None) -> list[str]:
    """One paragraph per run (markdown): how much was written over which span, the burst and the sustained
    level, where the first cliff is and whether heat explains it; "no cliff" said as a result; any stalls of its
    per-second series (:func:`stalls_text`, with ``seconds``), its level stated or not."""
    if w is None or w.empty:
        return []
    return [p + stalls_text(r, seconds) for p, (_, r) in zip(_paragraphs(w, cliffs), w.iterrows())]


def _paragraphs(w: pd.DataFrame, cliffs: pd.DataFrame | None) -> list[str]:
    """The paragraph of each run of :func:`wsat_sentences`, without its stalls."""
    out = []
    for _, r in w.iterrows():
        where = "the whole device" if r["span"] == "full_device" else "a test file (the file, not the drive, is the span)"
        head = (f"**{r['host']}, {r['workload']}**: {_gb(r['tgbw_GB'])} GB written over {where}, "
                f"{_from_state(r['state_at_start'])}")
        if missing(r["sustained_MBps"]):
            why = str(r.get("not_valid") or "")
            whole = "" if missing(r.get("run_MBps")) else f" fio's whole-run figure: {fmt_number(r['run_MBps'])} MB/s."
            why = why.removeprefix("not valid ").removesuffix("; fio's whole-run figure stays in the table")
            check, _, rest = why.partition(": ")
            why = f"{check.strip('()')} failed: {rest}" if rest and check.startswith("(") else why
            out.append(head + (f": no level is stated ({why})." if why else ": no per-second series, so no levels.")
                       + whole)
            continue
        if int(r["cliffs"]) == 0:
            out.append(head + ": " + no_cliff_text(r) + " A drive with a write cache larger than what was written "
                       "would show its cliff only with more data (capacity_multiple).")
            continue
        mine = cliffs[(cliffs["host"] == r["host"]) & (cliffs["point"] == r["point"])] if cliffs is not None else None
        first = mine[mine["level_after"] < mine["level_before"]].iloc[0] if mine is not None and len(mine) else None
        heat = ""
        if first is not None:
            verdict = str(first.get("thermal_verdict") or "")
            heat = (" The drive's temperature says it is thermal throttling: " + str(first["thermal_evidence"]) + "."
                    if first["kind"] == "thermal" else f" Heat: {verdict}." if verdict else "")
        out.append(head + f": {fmt_number(r['burst_MBps'])} MB/s at first, then a cliff at "
                   f"{_gb(r['first_cliff_GB'])} GB ({fmt_number(r['first_cliff_s'])} s) down to "
                   f"{fmt_interval(r['sustained_MBps'], r['sustained_MBps_ci_low'], r['sustained_MBps_ci_high'])} MB/s "
                   f"({float(r['sustained_over_burst']):.2f} of the burst){_held(r)}." + series_vs_fio(r) + heat)
    return out
