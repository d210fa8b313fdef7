"""Report text, the first page's headline table: each headline value with its 95 % interval or the reason it has
none, where it comes from, and a trust word from the validity checks that bear on it (a value a failed check bears
on is withheld); the checks of a host by status.

Pure: the synthesis tables in (headline, validity, points), DataFrames and words out. memstor.report.text.first_page
builds the rest of the page around it.
"""

from __future__ import annotations

import re

import pandas as pd

from memstor.analysis.ceilings import failed_points
from memstor.analysis.synthesis import HEADLINE_METRICS
from memstor.analysis.validity.gate import STEADY_SHOWN_CHECKS
from memstor.core.fmt import fmt_ci, fmt_interval
from memstor.core.schema import missing
from memstor.report.text.headline import dram_words
from memstor.report.text.headline_trust import (
    caveat_last,
    elsewhere_caveat,
    failed_wsat_caveat,
    hir_window_caveat,
    lasting_caveat,
    memory_elsewhere_caveat,
    on_cpus,
    other_span_caveat,
    qd1_caveat,
    same_job_caveat,
    spread_caveat,
    steady_same_job_caveat,
)

#: The storage checks that bear on every fio headline value (their subject: the experiment).
_FIO = (("load_generator_cpu", ""), ("interval_exists", ""), ("interval_holds_value", ""))
#: Headline metric -> the validity checks bearing on it: (check id, a text its subject must contain).
HEADLINE_CHECKS = {
    "idle_latency_ns": (("memory_gate", "idle_latency"), ("headline_definition", "idle memory latency"),
                        ("memory_buffer_llc", "")),  # S7-bare M-10: a failed check's finding is not stated
    "peak_bw_MBps": (("memory_gate", "peak_injection"), ("headline_definition", "peak memory bandwidth"),
                     ("physical_ceiling", "DRAM"), ("memory_buffer_llc", "")),
    "qd1_randread_lat_us": (*_FIO, ("config_agreement", "randread"), ("knee_sweep_agrees", "randread")),
    "qd1_randwrite_lat_us": (*_FIO, ("config_agreement", "randwrite"), ("knee_sweep_agrees", "randwrite")),
    "best_randread_iops": (*_FIO, ("config_agreement", "randread"), ("headline_definition", "randread"),
                           ("knee_plateau", "randread")),
    "best_randwrite_iops": (*_FIO, ("config_agreement", "randwrite"), ("headline_definition", "randwrite"),
                            ("knee_plateau", "randwrite")),
    "ss_randwrite_iops": (("steady_trace_jump", ""), ("steady_window_trend", ""), ("steady_round_length", ""),
                          ("steady_vs_fresh", ""), ("load_generator_cpu", "fio-steady-state"),
                          ("interval_exists", "fio-steady-state"), ("interval_holds_value", "fio-steady-state")),
    "seq_read_MBps": (*_FIO, ("config_agreement", " read "), ("physical_ceiling", "storage")),
    "seq_write_MBps": (*_FIO, ("config_agreement", " write "), ("physical_ceiling", "storage")),
}
#: Checks whose failure bears on what a headline value means, not on its number: the value stands and its trust
#: names the failure (S6-bare M-3: a 'best' IOPS from a sweep still rising is the most measured, not a maximum).
MEANING_CHECKS = {"knee_plateau": "failed: the sweep still rose, so the most measured, not the device's maximum",
                  "knee_sweep_agrees": "failed: its sweep is not shown to be the target's"}  # R-loop p2
#: Headlines that are the most of several single runs, which their run-to-run spread lifts (R-loop 1.1).
BEST_OF_RUNS = ("best_randread_iops", "best_randwrite_iops")
#: A sweep headline's detail names its drive state (memstor.analysis.synthesis._with_state): '..., n=1, fresh, ...'.
FRESH = ", fresh, "
#: The steady-state headline's label where the window rule was met but a check leaves the steady state not shown
#: (memstor.analysis.validity.gate.STEADY_SHOWN_CHECKS warn): the value is a window average, not a steady state.
NOT_SHOWN_LABEL = "4K random write after preconditioning, steady state not shown"
#: Where each section of the report is (headings of notebooks/90-synthesis.ipynb).
SECTION_REF = {"memory": "§4.3", "queue_depth": "§4.2", "curves": "§4.3", "open_loop": "§4.4",
               "steady_state": "§3 (steady state)", "write_saturation": "§3 (write saturation)", "hierarchy": "§4.5",
               "storage_points": "§2", "headline": "§1"}



def host_checks(validity: pd.DataFrame | None, host: str, sections: tuple = (),
          statuses=("unchecked", "warn", "fail")) -> pd.DataFrame:
    """The validity rows of host with one of statuses (in sections, when given)."""
    if validity is None or validity.empty:
        return pd.DataFrame(columns=["check", "subject", "status", "evidence", "consequence", "section"])
    sel = validity[(validity["host"].astype(str) == str(host)) & validity["status"].isin(statuses)]
    return sel[sel["section"].isin(sections)] if sections else sel


def _interval(r: pd.Series) -> str:
    """'value ± CI (method)' or 'value — no interval: reason'."""
    if missing(r["value"]):
        return "not measured"
    shown = _ci_text(r["value"], r.get("value_ci_low"), r.get("value_ci_high"))
    if "±" in shown or "[" in shown:
        return f"{shown} (95 %, {r.get('ci_method') or 'interval'})"
    n = r.get("n")
    why = f"n = {int(n)}" if not missing(n) else "a single measurement"
    if r["key"] in ("idle_latency_ns", "peak_bw_MBps"):
        note = r.get("ci_note")  # the reason the run's own sub-windows gave none (R-loop 2.5: correlated, not n)
        return f"{shown} — no interval (" + (f"one run; its sub-windows: {note}" if isinstance(note, str) and note
                                             else f"{why}; memory summaries get one from repetitions or ≥ 10 "
                                             "sub-windows") + ")"
    if r["key"] == "ss_randwrite_iops":
        return (f"{shown} — no interval (one run: the average of its window's rounds, not repetitions; their excursions "
                "(§3) are within that run and bound no spread between runs, which §3's other experiments show)")
    return f"{shown} — no interval ({why} and too few log windows: repeat the point or run it longer)"


def _ci_text(v, lo, hi) -> str:
    """'value ± half-width' of a symmetric 95 % interval, 'value [low, high]' of one whose sides differ by more
    than a tenth of the half-width (a '±' would misstate one side), the value alone without one."""
    if missing(lo) or missing(hi):
        return fmt_ci(v, lo, hi)
    below, above = float(v) - float(lo), float(hi) - float(v)
    return fmt_ci(v, lo, hi) if abs(above - below) <= 0.1 * (above + below) / 2 else fmt_interval(v, lo, hi)


#: The experiment a headline's detail names ('QD1x1, io_uring, O_DIRECT, fio-queue-depth, n=1').
_EXPERIMENT = re.compile(r"\b(?:fio-[a-z0-9-]+|mixed-load-map)\b")
#: The queue depth x jobs of a configuration ('QD32x1') in a headline's detail and a config_agreement subject.
_QD_JOBS = re.compile(r"\bQD\d+x\d+\b")


def _bears_on(r: pd.Series, check: str, text: str, detail: str) -> bool:
    """Whether validity row r is the check (check, subject text) of a headline value measured as detail: a
    config_agreement bears only on a value of its own configuration (the same QDaxb: a disagreement at QD32x1
    says nothing about the QD1x1 latency); a check of every fio experiment (_FIO) only on the experiment the
    detail names (S11-1cpu 1: ioarrive's load_generator_cpu warned at 79 % and every fio headline, measured in
    fio-queue-depth at 42 % and fio-block-size at 35 %, named it); the others as HEADLINE_CHECKS names them."""
    if r["check"] != check or text not in str(r["subject"]):
        return False
    if (check, text) in _FIO and (exp := _EXPERIMENT.search(detail or "")):
        return str(r["subject"]).split(" (")[0] == exp.group(0)  # its own experiment's (S11-1cpu 1)
    if check != "config_agreement":
        return True
    mine, theirs = _QD_JOBS.search(detail or ""), _QD_JOBS.search(str(r["subject"]))
    return not mine or not theirs or mine.group(0) == theirs.group(0)


#: The point a load_generator_cpu row's evidence names ('... point randread-bs4k-qd64-nj1-io_uring-...-rep1)').
_CPU_POINT = re.compile(r"point (?:spec-)?([a-z]+)-bs\w+-qd(\d+)-(?:nj|x)(\d+)")


def cpu_bound_point(r: pd.Series) -> tuple[str, str] | None:
    """(rw, 'QD64x1') of the busiest point a load_generator_cpu row names, None where it names none (S11-loop 1:
    the check judges the experiment by its busiest point; its consequence is about 'its busiest points')."""
    m = _CPU_POINT.search(str(r.get("evidence") or ""))
    return (m.group(1), f"QD{m.group(2)}x{m.group(3)}") if m else None


def _own_point(key: str, detail: str) -> tuple[str, str] | None:
    """(rw, 'QD1x1') of a fio headline from its key and detail; None where the detail names no QDaxb."""
    rw = next((w for w in ("randread", "randwrite") if w in key), "read" if "_read" in key else "write")
    qd = _QD_JOBS.search(detail or "")
    return (rw, qd.group(0)) if qd else None


def _trust(validity: pd.DataFrame | None, host: str, key: str, detail: str = "") -> str:
    """A word from the checks bearing on one headline value (measured as detail, the headline's 'QD1x1, ...'):
    'sound', 'with caveats (...)', 'not valid (...)'."""
    rows = host_checks(validity, host)
    keep = [any(_bears_on(r, check, text, detail) for check, text in HEADLINE_CHECKS.get(key, ()))
            for _, r in rows.iterrows()]
    rows = rows[keep] if len(rows) else rows
    if key != "ss_randwrite_iops":  # the fio values come from the closed-loop sweeps, not the steady state
        rows = rows[~rows["subject"].isin(["fio-steady-state", "fio-load-latency"])]
    elsewhere = [f"load_generator_cpu failed at another point ({p[0]} {p[1]}), not this one"
                 for _, r in rows.iterrows() if r["check"] == "load_generator_cpu" and r["status"] == "fail"
                 and (p := cpu_bound_point(r)) is not None and p != _own_point(key, detail)]
    if elsewhere:  # S11-loop 1: its busiest point failed it, this point is another
        rows = rows[~((rows["check"] == "load_generator_cpu") & (rows["status"] == "fail"))]
    fails, warns = rows[rows["status"] == "fail"], rows[rows["status"] == "warn"]
    unchecked = rows[rows["status"] == "unchecked"]
    meaning, fails = fails[fails["check"].isin(MEANING_CHECKS)], fails[~fails["check"].isin(MEANING_CHECKS)]
    if not fails.empty:
        return "not valid (" + ", ".join(dict.fromkeys(fails["check"])) + ")"
    if not warns.empty or not unchecked.empty or not meaning.empty or elsewhere:
        said = [*(f"{c} {MEANING_CHECKS[c]}" for c in dict.fromkeys(meaning["check"])), *elsewhere,
                *(f"{', '.join(dict.fromkeys(g['check']))} {word}" for g, word in ((warns, "warned"),
                                                                                  (unchecked, "not checked")) if len(g))]
        return "with caveats (" + "; ".join(said) + ")"  # one group per status (R-loop 1.3)
    return "sound (its checks pass)"


def headline_evidence(headline: pd.DataFrame, validity: pd.DataFrame | None,
                      points: pd.DataFrame | None = None, cpus: dict | None = None,
                      mlp: pd.DataFrame | None = None, hir: pd.DataFrame | None = None) -> pd.DataFrame:
    """The first page's table: device, quantity (unit), value with its 95 % interval or why it has none, where
    it comes from, and a trust word from the validity checks (validity.csv names them). A value a failed check
    bears on is withheld (the report states no finding whose preconditions failed; the numbers stay in the
    tables and the checks' evidence). A best-of-runs value (BEST_OF_RUNS) names the run-to-run spread of ``points``
    (memstor.analysis.points.fio_summary) where given; ``cpus`` (usable_cpus) names more jobs than usable CPUs;
    ``mlp`` (hierarchy.mlp_table) names an MLP run above the peak memory bandwidth; ``hir`` (the HIR table) gives
    the steady-state headline HIR's window where it differs.
    Unmeasured rows are folded into one line per device."""
    out = []
    for host in dict.fromkeys(headline["host"].astype(str)):
        h = headline[headline["host"].astype(str) == host].set_index("key")
        absent = []
        for key, label, unit in HEADLINE_METRICS:
            if key not in h.index or missing(h.loc[key, "value"]):
                absent.append(label.lower())
                continue
            r = h.loc[key].copy()
            r["key"] = key
            trust = _trust(validity, host, key, str(r.get("detail") or ""))
            value = (f"withheld: {trust.removeprefix('not valid (').rstrip(')')} failed (numbers: report.html's "
                     "'Checks that did not pass')") if trust.startswith("not valid") else _interval(r)
            if str(r.get("gate") or "").startswith("failed"):  # its own run failed the memory gate (R-loop 2.3)
                gate_trust, value = _gate_failed(r)
                trust = gate_trust if not trust.startswith("not valid (") else gate_trust.replace(
                    ")", ", " + trust.removeprefix("not valid ("), 1)  # and the other failed checks
            elif r.get("gate") == "not judged":  # e.g. the bandwidth matrix: the gate does not judge its section
                trust = _caveat(trust, "memory_gate not checked for its section: no CPU share or stability")
                trust = caveat_last(trust, m) if (m := _machine_failures(validity, host)) else trust
            if key in ("idle_latency_ns", "peak_bw_MBps") and (words := dram_words(validity, host)):
                label, trust = _not_dram(label, trust, words)  # R-loop 1.1: a buffer within the LLC
            same, most = same_job_caveat(trust, points, host, key, str(r.get("detail") or ""), float(r["value"]))
            if key in BEST_OF_RUNS and not most:  # most runs of its own job measured more: no 'may be high'
                trust = spread_caveat(trust, points, host, key)
            if same:  # the range names the most of its job (S13-bare 1): no 'other runs measured more' after it
                trust = caveat_last(trust, ("a single run, not a maximum: " if most else "") + same)
            if key == "seq_write_MBps":
                trust = lasting_caveat(trust, points, host, float(r["value"]))
            trust = trust if same else elsewhere_caveat(trust, _without_failed_wsat(points, validity, host), host, key,
                                                        float(r["value"]))
            trust = other_span_caveat(trust, points, host, key, str(r.get("detail") or ""), float(r["value"]))
            trust = qd1_caveat(trust, points, host, key, float(r["value"]), validity)
            if key == "peak_bw_MBps":
                trust = memory_elsewhere_caveat(trust, mlp, host, float(r["value"]))
            if key == "ss_randwrite_iops" and host_checks(validity, host, statuses=("warn",))["check"].isin(
                    STEADY_SHOWN_CHECKS).any():
                label = NOT_SHOWN_LABEL
            if key == "ss_randwrite_iops":
                trust = hir_window_caveat(trust, validity, host, float(r["value"]), hir)
                trust = steady_same_job_caveat(trust, points, host, str(r.get("detail") or ""), float(r["value"]))
            if key == "seq_write_MBps":
                trust = failed_wsat_caveat(trust, points, validity, host, float(r["value"]))
            if key in BEST_OF_RUNS and FRESH in str(r.get("detail") or ""):
                label = f"{label}, fresh"  # S19-1cpu 4: 'Best' beside higher runs of its job after preconditioning
            out.append({"device": host, "quantity": f"{label} ({unit})", "value": value,
                        "measured as": on_cpus(str(r.get("detail") or ""), (cpus or {}).get(host)),
                        "trust": trust})
        if absent:
            out.append({"device": host, "quantity": "not measured", "value": ", ".join(absent), "measured as": "",
                        "trust": ""})
    return pd.DataFrame(out, columns=["device", "quantity", "value", "measured as", "trust"])


def _without_failed_wsat(points: pd.DataFrame | None, validity: pd.DataFrame | None, host: str) -> pd.DataFrame | None:
    """``points`` less the host's write-saturation runs whose wsat_series failed (S20-cpu1 3: a 1.56-s run's 2,755
    MB/s was 'other runs measured more' on page 1 and left out of page 3's ceiling for that failure: one rule)."""
    if points is None or validity is None or validity.empty or "point" not in points.columns:
        return points
    names = {p for p, checks in failed_points(validity, host).items() if "wsat_series" in checks.split(", ")}
    return points[~((points["host"].astype(str) == host) & points["point"].astype(str).isin(names))] if names else points


def _machine_failures(validity: pd.DataFrame | None, host: str) -> str:
    """'the values the gate judged here failed bandwidth_unstable, cpu_share machine-wide: an unjudged one is no
    firmer' from the host's memory_gate rows whose failure every (or nearly every) value shares (subject '<section>:
    <criterion> (machine)'; latency_unstable alone bears on no bandwidth); '' without (tenth read S13-loop 8: the
    unjudged 6,632 MB/s read 'with caveats' beside every judged bandwidth failing both)."""
    rows = host_checks(validity, host)
    rows = rows[(rows["check"] == "memory_gate") & rows["subject"].astype(str).str.endswith("(machine)")] \
        if len(rows) else rows
    if rows.empty:
        return ""
    parts = rows["subject"].astype(str).str.removesuffix(" (machine)").str.split(": ", n=1)
    crit = sorted({c for _, c in parts if c != "latency_unstable"})
    return f"the values the gate judged here failed {', '.join(crit)} machine-wide: an unjudged one is no firmer" \
        if crit else ""


def _not_dram(label: str, trust: str, words: str) -> tuple[str, str]:
    """(label, trust) of a memory headline whose buffer the last-level cache may hold (memory_buffer_llc failed):
    'Idle mean latency (256 MiB buffer, within ...: not shown to be DRAM)', the check named in the trust."""
    return f"{label.replace('memory ', '')} ({words})", _caveat(trust, "memory_buffer_llc failed: not shown to be DRAM")


def _caveat(trust: str, said: str) -> str:
    """A trust word with one more caveat first ('sound' becomes 'with caveats (said)'; 'not valid' stays)."""
    if trust.startswith("not valid"):
        return trust
    return f"with caveats ({said})" if trust.startswith("sound") else trust.replace("with caveats (",
                                                                                    f"with caveats ({said}, ", 1)


def _gate_failed(r: pd.Series) -> tuple[str, str]:
    """(trust, value) of a memory headline whose own run failed memstor's quality gate (a headline row with
    ``gate`` 'failed: <codes>' and ``gate_detail``): withheld, as a value a failed check bears on is."""
    codes = str(r["gate"]).removeprefix("failed:").strip()
    detail = str(r.get("gate_detail") or "") if not missing(r.get("gate_detail")) else ""
    return (f"not valid (memory_gate: {codes})",
            f"withheld: its run failed the memory gate ({detail or codes}); every measurement in report.html's "
            f"{SECTION_REF['memory']} table")  # S12-bare9 5: the PDF's §4.3 prints no bandwidth
