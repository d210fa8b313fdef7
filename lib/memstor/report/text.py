"""Report text: numbers formatted for tables, display tables with short headers and units, sentences,
the systems table and the commands of the methods section (pure: DataFrame in, DataFrame/text out)."""

from __future__ import annotations

import json
import math
import shlex
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd

from memstor.analysis.curves import POOR_FIT_PCT
from memstor.analysis.dataset import Dataset
from memstor.analysis.synthesis import HEADLINE_METRICS
from memstor.core.schema import truthy
from memstor.core.fmt import ci_text, fixed, fmt_ci, fmt_interval, fmt_number, fmt_se, md_escape  # noqa: F401 (report API)
from memstor.core.units import size_text


def headline_table(long: pd.DataFrame) -> pd.DataFrame:
    """Hosts side by side: one row per metric ('metric (unit)'), one column per host, cells as text
    'value ± 95 % CI half-width (95 % CI: method; configuration, n)' — method ``repetitions`` (between runs)
    or ``batch-means`` (the single run's own interval); '–' where not measured."""
    hosts = list(dict.fromkeys(long["host"]))
    out = []
    for key, label, unit in HEADLINE_METRICS:
        row = {"metric": f"{label} ({unit})"}
        for h in hosts:
            r = long[(long["host"] == h) & (long["key"] == key)]
            v = r["value"].iloc[0] if not r.empty else None
            d = r["detail"].iloc[0] if not r.empty else ""
            lo = r["value_ci_low"].iloc[0] if not r.empty and "value_ci_low" in r else None
            hi = r["value_ci_high"].iloc[0] if not r.empty and "value_ci_high" in r else None
            how = r["ci_method"].iloc[0] if not r.empty and "ci_method" in r else ""
            shown = fmt_ci(v, lo, hi) if v is not None and v == v else "–"
            if how and "±" in shown:
                d = f"95 % CI: {how}" + (f"; {d}" if d else "")
            row[h] = shown if shown == "–" else shown + (f" ({d})" if d else "")
        out.append(row)
    return pd.DataFrame(out)


def precision_sentence(points: pd.DataFrame) -> str:
    """How many configurations with a precision target reached it, per device and experiment (markdown);
    "" when no point had a target (fixed runtimes). points: the fio summary (precision_pct,
    precision_reached)."""
    if "precision_reached" not in points or "precision_pct" not in points:
        return ""
    sel = points[points["precision_pct"].notna() & points["precision_reached"].notna()]
    if sel.empty:
        return ""
    parts = []
    for (host, exp, pct), g in sel.groupby(["host", "experiment", "precision_pct"], sort=True):
        reached = g["precision_reached"].map(truthy)
        parts.append(f"{host}, {exp}: {int(reached.sum())} of {len(g)} configurations reached ±{float(pct):g} % "
                     "for IOPS and mean latency")
    return ("**Precision targets.** Each point with a target ran until the 95 % intervals of its mean IOPS and "
            "mean latency were within the target, or for its longest time (`max_runtime_s`): "
            + "; ".join(parts) + ". `precision_reached` in `summary.csv` says which.")


def page_walk_sentence(mlc: pd.DataFrame, host: str) -> str:
    """The idle latency of one device with huge and with 4 KiB pages, and the page-walk cost (markdown)."""
    from memstor.analysis.memory import page_walk_text

    rows = mlc[(mlc["host"] == host) & mlc["ok"]]
    if not (rows["test"] == "idle_latency").any():
        return "no idle-latency measurement."
    return page_walk_text(rows)


# ------------------------------------------------------------------------------------- systems


def _flat(d, prefix: str = "") -> dict:
    """Nested dict -> {'a.b': value} (lists kept as values)."""
    out = {}
    if isinstance(d, dict):
        for k, v in d.items():
            key = f"{prefix}.{k}" if prefix else str(k)
            if isinstance(v, dict):
                out.update(_flat(v, key))
            else:
                out[key] = v
    return out


def _pick(flat: dict, *needles: str):
    """The first value whose key contains all the words of one needle ('cpu model'), else None."""
    for needle in needles:
        words = needle.lower().split()
        for k, v in flat.items():
            kl = k.lower()
            if all(w in kl for w in words) and v not in (None, "", [], {}):
                return v
    return None


SYSTEM_FIELDS = [
    ("CPU", ("cpu.model", "cpu model", "model name")),
    ("Logical CPUs", ("cpu.logical_cpus", "logical", "cpu count")),
    ("Memory (GiB)", ("memory.total_bytes", "mem total bytes", "memtotal")),
    ("NUMA nodes", ("memory.numa_nodes", "numa nodes")),
    ("OS", ("os.name", "os name")),
    ("Kernel", ("os.kernel", "kernel")),
    ("Test file folder", ("target.path", "target path")),
    ("Block device", ("target.source", "target device")),
    ("Filesystem", ("target.fstype", "fstype", "filesystem")),
    ("fio", ("tools.fio", "fio version")),
    ("Memory tool (sysinfo)", ("tools.mlc", "tools.loadlat")),
    ("memstor", ("memstor_version", "memstor version")),
]


def _sys_value(label: str, v) -> str:
    """A sysinfo value as short text (bytes -> GiB for the memory row)."""
    if isinstance(v, (list, tuple)):
        v = ", ".join(str(x) for x in v[:3])
    if label.startswith("Memory (GiB)") and isinstance(v, (int, float)) and v > 2**20:
        return f"{v / 2**30:.1f}"
    text = " ".join(str(v).split())
    return text if len(text) <= 60 else text[:57] + "..."


def _disk_text(info: dict) -> str | None:
    """'vda, 256.0 GiB, rotational, vendor 0x1af4' from sysinfo target.disks (first disk)."""
    disks = ((info or {}).get("target") or {}).get("disks") or []
    if not disks or not isinstance(disks[0], dict):
        return None
    d = disks[0]
    parts = [str(d.get("name") or "?")]
    if d.get("model"):
        parts.append(str(d["model"]))
    if d.get("size_bytes"):
        parts.append(f"{d['size_bytes'] / 2**30:.0f} GiB")
    if d.get("rotational") is not None:
        parts.append("rotational" if d["rotational"] else "non-rotational")
    if d.get("vendor") and not d.get("model"):
        parts.append(f"vendor {d['vendor']}")
    return ", ".join(parts)


def systems_table(ds: Dataset) -> pd.DataFrame:
    """Systems under test side by side: one row per property, one column per host ('–' if unknown).

    From sysinfo.json where present; imported hosts show their tool versions from the tables."""
    out = []
    flats = {h.name: _flat(h.sysinfo or {}) for h in ds.hosts}
    for label, needles in SYSTEM_FIELDS:
        row = {"property": label}
        for h in ds.hosts:
            flat = flats[h.name]
            v = next((flat[n] for n in needles if flat.get(n) not in (None, "", [], {})), None)
            if v is None:
                v = _pick(flat, *[n.replace(".", " ").replace("_", " ") for n in needles])
            if v is None and label == "fio":
                vs = ds.fio.loc[ds.fio["host"] == h.name, "fio_version"].dropna().unique()
                v = ", ".join(sorted(map(str, vs))) or None
            row[h.name] = "–" if v is None else _sys_value(label, v)
        if any(v != "–" for k, v in row.items() if k != "property"):
            out.append(row)
        if label == "Block device":
            disk = {h.name: _disk_text(h.sysinfo) for h in ds.hosts}
            if any(disk.values()):
                out.append({"property": "Disk", **{k: v or "–" for k, v in disk.items()}})
    row = {"property": "Memory tool"}
    for h in ds.hosts:
        m = ds.mlc[ds.mlc["host"] == h.name]
        tools = sorted({f"{t} {v}".strip() for t, v in zip(m["tool"].fillna(""), m["tool_version"].fillna(""))
                        if t})
        row[h.name] = ", ".join(tools) or "–"
    out.append(row)
    row = {"property": "Data"}
    for h in ds.hosts:
        row[h.name] = "measured by memstor" if h.sysinfo else "imported (memstor parse)"
    out.append(row)
    return pd.DataFrame(out)


# ------------------------------------------------------------------------------- spec comparison


def spec_table(comp: pd.DataFrame) -> pd.DataFrame:
    """The comparison for display: short headers with units, numbers formatted, conditions both sides."""
    if comp.empty:
        return comp
    return pd.DataFrame({
        "host": comp["host"],
        "spec value": comp["metric"] + comp["headline"].map(lambda b: " ★" if b else ""),
        "unit": comp["unit"],
        "measured": [fmt_number(v) if v is None or v != v else f"{fmt_ci(v, lo, hi)} (n={int(k)})"
                     for v, lo, hi, k in zip(comp["measured"], comp["measured_ci_low"], comp["measured_ci_high"],
                                             comp["n"])],
        "spec": comp["spec"].map(fmt_number),
        "state": comp["state"] if "state" in comp.columns else "",
        "ratio": comp["ratio"].map(lambda v: "–" if v is None or v != v else f"{v:.2f}"),
        "conditions": [
            f"measured: {m}" + (f" [{_short_selection(sel)}]" if sel else "") + f"\nspec: {s}"
            for m, s, sel in zip(comp["measured_conditions"], comp["spec_conditions"], comp["selection"])],
        "flag": comp["flag"],
    })


def _short_selection(selection: str) -> str:
    """'spec point' or 'closest point' from a selection text."""
    if selection.startswith("spec-conditions"):
        return "spec point"
    return "closest point; no spec point" if "no spec-conditions" in selection else "closest point"


# ------------------------------------------------------------------------------------- queueing


def _shell_word(word: str) -> str:
    """A command word quoted for a POSIX shell only when needed ($DATA stays expandable)."""
    import re

    if re.fullmatch(r"[\w@%+=:,./$-]+", word):
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"' if "$DATA" in word else shlex.quote(word)


def _wrap_command(cmd, width: int = 110) -> str:
    """A command list as shell text wrapped at spaces with ' \\' continuations (fits a printed page)."""
    text = " ".join(_shell_word(str(c)) for c in cmd) if isinstance(cmd, list) else str(cmd)
    lines = textwrap.wrap(text, width=width - 2, break_long_words=False, break_on_hyphens=False,
                          subsequent_indent="    ")
    return " \\\n".join(lines)


def _with_data_var(cmd, data_dir: Path):
    """The command with the data root written as $DATA (shorter; the report names the folder)."""
    if not isinstance(cmd, list):
        return cmd
    root = str(Path(data_dir).resolve())
    return [str(c).replace(root, "$DATA") for c in cmd]


def commands(ds: Dataset, width: int = 110) -> list:
    """One example command per host x experiment from the meta sidecars, with what varies between points.

    Returns a list of dicts: host, experiment, points, command (wrapped text), varies (param names), params."""
    out = []
    for h in ds.hosts:
        by_exp: dict = {}
        for m in h.metas:
            by_exp.setdefault(m.get("experiment"), []).append(m)
        for exp in sorted(by_exp):
            ms = sorted(by_exp[exp], key=lambda m: str(m.get("start_time") or ""))
            first = next((m for m in ms if m.get("command")), ms[0])
            params = [m.get("params") or {} for m in ms]
            keys = sorted({k for p in params for k in p})
            varies = [k for k in keys if len({json.dumps(p.get(k), sort_keys=True) for p in params}) > 1]
            fixed = {k: params[0].get(k) for k in keys if k not in varies}
            out.append({
                "host": h.name, "experiment": exp, "points": len(ms),
                "command": _wrap_command(_with_data_var(first.get("command"), ds.data_dir)
                                         or "(no command recorded)", width),
                "tool": f"{first.get('tool', '')} {first.get('tool_version', '')}".strip(),
                "varies": varies, "params": fixed,
            })
    return out


# ------------------------------------------------------------------------------------ everything


# ------------------------------------------------------------------------- display (short headers)


def little_display(little: pd.DataFrame) -> pd.DataFrame:
    """Little's-law table with short headers and units, for the report: N, X, R (means over n runs),
    X·R, the residual (judged against the ±5 % band) and the flag with its reason."""
    if little.empty:
        return little
    def pct(v):
        return "–" if v is None or v != v else f"{v:+.1f}"
    return pd.DataFrame({
        "device": little["host"], "experiment": little["experiment"], "workload": little["rw"]
        + little["rwmixread"].map(lambda m: "" if m != m or m is None else f" {int(m)}% rd"),
        "bs": little["bs_bytes"].map(lambda b: "?" if b != b else f"{int(b) // 1024}K"),
        "QD×jobs": [f"{int(q)}×{int(j)}" for q, j in zip(little["iodepth"], little["numjobs"])],
        "n": little["n"], "N (I/Os)": little["outstanding_io"].map(lambda v: f"{v:g}"),
        "X (IOPS)": little["iops"].map(fmt_number), "R (µs)": little["lat_mean_us"].map(fmt_number),
        "X·R (I/Os)": little["littles_outstanding"].map(fmt_number),
        "residual (%)": little["residual_pct"].map(pct),
        "flag": [f"flagged: {r}" if f else "ok" for f, r in zip(little["flagged"], little["reason"])],
    })


def knee_display(knees: pd.DataFrame) -> pd.DataFrame:
    """Knee table with short headers and units: the two-asymptote fit (parameters ± standard error, N*
    with its 95 % interval) and the closed-system bound N* = X_max R_min from the measured inputs."""
    if knees.empty:
        return knees
    k = knees.copy()
    for col in ("R_min_fit_us", "X_max_fit_iops", "N_star_fit", "r2", "R_min_meas_us", "X_max_meas_iops",
                "N_star_bound", "R_min_fit_se_us", "X_max_fit_se_iops", "N_star_fit_ci_low", "N_star_fit_ci_high"):
        if col not in k.columns:
            k[col] = np.nan
    return pd.DataFrame({
        "host": k["host"], "workload": k["rw"], "points": k["points"], "N range (I/Os)": k["N_range"],
        "R_min fit (µs)": [fmt_se(v, e) for v, e in zip(k["R_min_fit_us"], k["R_min_fit_se_us"])],
        "X_max fit (IOPS)": [fmt_se(v, e) for v, e in zip(k["X_max_fit_iops"], k["X_max_fit_se_iops"])],
        "N* fit (I/Os, 95 % CI)": [fmt_interval(v, lo, hi) for v, lo, hi in
                                   zip(k["N_star_fit"], k["N_star_fit_ci_low"], k["N_star_fit_ci_high"])],
        "R²": k["r2"].map(lambda v: "–" if v != v else f"{v:.3f}"),
        "R at N_min (µs)": k["R_min_meas_us"], "X max meas. (IOPS)": k["X_max_meas_iops"],
        "N* bound (I/Os)": k["N_star_bound"],
    })


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
    added, and the plateau and knee N* = X_max · R(depth 1) the rule found in them."""
    from memstor.analysis.adaptive_grid import knee_of

    out = []
    if grid is None or grid.empty:
        return out
    for (host, rw), g in grid.groupby(["host", "rw"], sort=True):
        depths = ", ".join(str(int(d)) for d in g["iodepth"])
        knee = int((g["step"] == "knee").sum())
        k = knee_of(zip(g["iodepth"], g["iops"], g["lat_mean_us"]))
        found = (f"plateau from depth {k.plateau_from}, knee N* = X_max · R(depth 1) = {k.n_star:.1f} I/Os"
                 if k.plateau_from is not None else f"{k.done}: the grid stopped at its budget or depth limit")
        out.append(f"**{md_escape(str(host))}, {rw}**: the adaptive grid measured {len(g)} depths ({depths}), "
                   f"{knee} of them between two depths around the knee; {found}.")
    return out


def memory_display(mem: pd.DataFrame) -> pd.DataFrame:
    """The memory_fit table (memstor.analysis.curves) for the report: the device, then
    memstor.analysis.memory.fit_summary — saturation, R0 and the peak with 95 % intervals (or
    "not identifiable: <reason>"), the measured maximum, R(B_max)/R0, the bandwidth at 1.25·R0 and 2·R0
    (censored: "not reached"), the held-out error and the DRAM read share."""
    from memstor.analysis.memory import fit_summary

    if mem is None or mem.empty:
        return pd.DataFrame()
    shown = fit_summary(mem)
    return shown.assign(device=mem["host"].to_numpy())[["device", *shown.columns]]


def knee_sentences(knees: pd.DataFrame) -> list:
    """One sentence per host x workload stating N* with its inputs (markdown)."""
    out = []
    for _, k in knees.iterrows():
        if k.get("N_star_fit") is None or k.get("N_star_fit") != k.get("N_star_fit"):
            out.append(f"**{md_escape(str(k['host']))}, 4K {k['rw']}**: no fit — {k.get('note') or 'too few points'}.")
            continue
        s = (f"**{md_escape(str(k['host']))}, 4K {k['rw']}**: the two-asymptote fit gives N* = X_max × R_min = "
             f"{fmt_number(k['X_max_fit_iops'])} IOPS × {fmt_number(k['R_min_fit_us'])} µs = "
             f"**{fmt_interval(k['N_star_fit'], k.get('N_star_fit_ci_low'), k.get('N_star_fit_ci_high'))} "
             f"I/Os in flight** (95 % interval; {int(k['points'])} points, N = {k['N_range']}, "
             f"R² = {k['r2']:.3f}); from the measured inputs "
             f"(latency {fmt_number(k['R_min_meas_us'])} µs at the smallest N, best "
             f"{fmt_number(k['X_max_meas_iops'])} IOPS) the closed-system bound gives N* = "
             f"{k['N_star_bound']:.1f}.")
        if k.get("note"):
            s += f" Note: {k['note']}."
        out.append(s)
    return out


#: Units and decimals of the two kinds of curve: (throughput column stem, throughput unit, its decimals,
#: latency column unit, latency unit shown, its decimals, throughput prefix in metric names).
_MEM = ("MBps", "MB/s", 0, "ns", "ns", 1, "b")
_STO = ("iops", "IOPS", 0, "us", "µs", 1, "x")


def _curve_sentence(name: str, r, kind) -> str:
    """One markdown sentence on one row of memory_fit / storage_fit: saturation, the model below the
    plateau (R0, peak with 95 % intervals, or why not identifiable), the measured maximum and the latency
    levels, the held-out check."""
    xu, xs, xd, ru, rs, rd, xp = kind
    parts = []
    n_pts = int(r["points"])
    if bool(r.get("saturated")):
        out = r.get("outstanding_at_b_max" if xp == "b" else "outstanding_at_x_max")
        little = (f", with about {fixed(out, 0)} requests in flight by Little's law"
                  if out is not None and out == out else "")
        parts.append(f"saturated: a plateau at **{fixed(r[f'{xp}_sat_{xu}'], xd)} {xs}** over "
                     f"{int(r['plateau_points'])} of {n_pts} points{little}")
    else:
        parts.append(f"no plateau over {n_pts} points")
    if bool(r.get("hook")):
        parts.append("it hooks (beyond its maximum, throughput falls while latency rises)")
    if r.get(f"r0_{ru}") != r.get(f"r0_{ru}") or r.get(f"r0_{ru}") is None:
        parts.append(f"no model: {r.get('reason') or 'too few points'}")
    else:
        r0 = ci_text(r[f"r0_{ru}"], r[f"r0_{ru}_ci_low"], r[f"r0_{ru}_ci_high"], rd, rs)
        where = "below it " if bool(r.get("saturated")) else ""
        fit = f"{where}the open-queue model gives R0 = {r0} (95 % interval, {int(r['fit_points'])} points)"
        if bool(r.get("identifiable")):
            peak = ci_text(r[f"peak_{xu}"], r[f"peak_{xu}_ci_low"], r[f"peak_{xu}_ci_high"], xd, xs)
            bound = " — bounded by the measured plateau" if bool(r.get("saturated")) else ""
            fit += f" and a peak of {peak}{bound}"
        else:
            fit += f"; its peak is not identifiable: {r.get('reason')}"
        rms = r.get("fit_rms_pct")
        if rms is not None and rms == rms and rms > POOR_FIT_PCT:
            fit += f" — and the open-queue form fits these points poorly (RMS error {rms:.0f} %)"
        parts.append(fit)
    xmax = fixed(r[f"{xp}_max_{xu}"], xd)
    ratio = r.get(f"r_at_{xp}_max_over_r0")
    parts.append(f"the highest throughput measured is {xmax} {xs}"
                 + (f", at {fixed(ratio, 2)} × R0" if ratio is not None and ratio == ratio else ""))
    reached, censored = [], []
    stem = "bw" if xp == "b" else "x"
    for level, key in (("1.25·R0", "1p25"), ("2·R0", "2")):
        v, cens = r.get(f"{stem}_at_{key}_r0_{xu}"), r.get(f"{stem}_at_{key}_r0_censored")
        if v is not None and v == v:
            reached.append(f"{level} at {fixed(v, xd)} {xs}")
        elif bool(cens):
            censored.append(level)
    if reached:
        parts.append("the measured latency reaches " + " and ".join(reached))
    if censored:
        parts.append(("it never reaches " if reached else "the measured latency never reaches ")
                     + " or ".join(censored) + " (censored: not extrapolated)")
    err = r.get("holdout_error_pct")
    if err is not None and err == err:
        shown = "more than 1,000 %" if err > 1000 else f"{err:.1f} %"
        parts.append(f"fitted below 80 % of its range, the model misses the top {int(r['holdout_points'])} "
                     f"point(s) by {shown}")
    elif r.get("holdout_note"):
        parts.append(f"no held-out check: {r['holdout_note']}")
    return f"{name}: " + "; ".join(parts) + "."


def memory_sentences(mem: pd.DataFrame) -> list:
    """One sentence per loaded-latency curve (memory_fit row): saturation and Little's law, R0 and the peak
    with 95 % intervals (or "not identifiable: <reason>"), the measured maximum, the bandwidth where the
    measured latency reaches 1.25·R0 and 2·R0 (censored when not reached), the held-out check, and the
    DRAM read share beside MLC's instruction mix and the write penalty where known (markdown)."""
    out = []
    if mem is None:
        return out
    for _, m in mem.iterrows():
        name = f"**{md_escape(str(m['host']))}, {md_escape(str(m['curve']))}**"
        s = _curve_sentence(name, m, _MEM)
        extra = []
        if m.get("dram_read_share_est") == m.get("dram_read_share_est") and m.get("stores") not in ("", "none", None):
            extra.append(f"MLC's mix is {m['mix_read_share']:.0%} reads; with {m['stores']} stores DRAM sees "
                         f"about {m['dram_read_share_est']:.0%} reads")
        wp = m.get("write_penalty_pct")
        if wp is not None and wp == wp and m.get("traffic") != "read-only":
            extra.append(f"write penalty: its maximum is {wp:.1f} % below the read-only curve's" if wp >= 0 else
                         f"write penalty: none (its maximum is {-wp:.1f} % above the read-only curve's)")
        if extra:
            s = s[:-1] + "; " + "; ".join(extra) + "."
        out.append(s)
    return out


def storage_sentences(storage: pd.DataFrame) -> list:
    """One sentence per storage curve (storage_fit row), in the same words as the memory curves."""
    out = []
    if storage is None:
        return out
    for _, r in storage.iterrows():
        bs = "" if pd.isna(r.get("bs_bytes")) else f"{size_text(int(r['bs_bytes']))} "
        name = f"**{md_escape(str(r['host']))}, {bs}{r['rw']}, {r['kind']}**"
        out.append(_curve_sentence(name, r, _STO))
    return out


def _curve_rows(df: pd.DataFrame, kind, label) -> list:
    """Rows of the latency–throughput display for memory_fit or storage_fit rows."""
    from memstor.analysis.memory import holdout_text

    xu, xs, xd, ru, rs, rd, xp = kind
    stem = "bw" if xp == "b" else "x"
    rows = []
    for _, r in df.iterrows():
        sat = (f"plateau {fixed(r[f'{xp}_sat_{xu}'], xd)} {xs} ({int(r['plateau_points'])} pts)"
               if bool(r.get("saturated")) else "no plateau") + ("; hook" if bool(r.get("hook")) else "")
        if r.get(f"r0_{ru}") is None or r.get(f"r0_{ru}") != r.get(f"r0_{ru}"):
            r0, peak = f"no model: {r.get('reason') or 'too few points'}", "–"
        else:
            r0 = ci_text(r[f"r0_{ru}"], r[f"r0_{ru}_ci_low"], r[f"r0_{ru}_ci_high"], rd, rs)
            peak = (ci_text(r[f"peak_{xu}"], r[f"peak_{xu}_ci_low"], r[f"peak_{xu}_ci_high"], xd, xs)
                    if bool(r.get("identifiable")) else f"not identifiable: {r.get('reason')}")

        def level(key, r=r):
            v, cens = r.get(f"{stem}_at_{key}_r0_{xu}"), r.get(f"{stem}_at_{key}_r0_censored")
            if v is not None and v == v:
                return f"{fixed(v, xd)} {xs}"
            return "not reached" if bool(cens) else "–"

        ratio = r.get(f"r_at_{xp}_max_over_r0")
        rows.append({"device": r["host"], "curve": label(r), "points": int(r["points"]), "saturation": sat,
                     "R0 [95 % CI]": r0, "peak [95 % CI]": peak,
                     "max measured": f"{fixed(r[f'{xp}_max_{xu}'], xd)} {xs}",
                     "R(max)/R0": fixed(ratio, 2) if ratio is not None else "–",
                     "at 1.25·R0": level("1p25"), "at 2·R0": level("2"),
                     "held-out error": holdout_text(r.get("holdout_error_pct"), r.get("holdout_points")),
                     "quality gate": _gate_text(r)})
    return rows


def _gate_text(r) -> str:
    """A memory curve's quality gate in words: how many of its points failed it (loadlat sub-window spreads,
    CPU share, steal; memstor.measure.loadlat), or "–" where it is not evaluated (storage, MLC, imports)."""
    failed = r.get("gate_failed_points")
    if failed is None or failed != failed or str(r.get("tool")) != "loadlat":
        return "–"
    return "all points passed" if int(failed) == 0 else f"{int(failed)} of {int(r['points'])} points failed"


def pacing_display(pacing: pd.DataFrame | None) -> pd.DataFrame:
    """The fixed-vs-exponential pacing comparison (memstor.analysis.memory.pacing_table) for the report."""
    if pacing is None or pacing.empty:
        return pd.DataFrame()
    return pd.DataFrame({
        "device": pacing["host"], "traffic": pacing["traffic"],
        "access": pacing["access_bytes"].map(lambda v: f"{int(v)} B" if v == v else "?"),
        "bandwidth (MB/s)": [f"{fixed(b, 0)} ({int(s)} % of max)" for b, s in
                             zip(pacing["bandwidth_MBps"], pacing["share_of_max_pct"])],
        "latency, fixed (ns)": pacing["latency_fixed_ns"].map(lambda v: fixed(v, 0)),
        "latency, exp (ns)": pacing["latency_exp_ns"].map(lambda v: fixed(v, 0)),
        "exp vs fixed": pacing["exp_vs_fixed_pct"].map(lambda v: "–" if v != v else f"{v:+.1f} %"),
    })


#: How the report names each MLC default-run section.
SECTION_NAMES = {"latency_matrix": "idle latency matrix", "bandwidth_matrix": "bandwidth matrix",
                 "max_bandwidth": "max bandwidth", "c2c_latency": "cache to cache"}


def sections_display(sections: pd.DataFrame | None) -> pd.DataFrame:
    """The other sections of MLC's default run (memstor.analysis.memory.sections_table) for the report: one row
    per device x section x what x node pair, the value with its unit ([95 % interval] when repeated) and n."""
    if sections is None or sections.empty:
        return pd.DataFrame()

    def nodes(src, dst) -> str:
        return "–" if src != src and dst != dst else f"{fixed(src, 0)} → {fixed(dst, 0)}"

    return pd.DataFrame({
        "device": sections["host"], "tool": sections["tool"],
        "section": sections["section"].map(lambda v: SECTION_NAMES.get(v, v)), "what": sections["what"],
        "nodes (CPU → memory; writer → reader)": [nodes(a, b) for a, b in zip(sections["src_node"], sections["dst_node"])],
        "value (95 % CI)": [ci_text(v, lo, hi, 1 if u == "ns" else 0, u) for v, lo, hi, u in
                            zip(sections["value"], sections["ci_low"], sections["ci_high"], sections["unit"])],
        "n": sections["n"],
    })


def curves_display(mem: pd.DataFrame | None, storage: pd.DataFrame | None) -> pd.DataFrame:
    """One "latency–throughput curves" table for memory and storage together, one vocabulary
    (memstor.analysis.curves): per device × curve the saturation (plateau throughput, hook), R0 and the
    peak with 95 % intervals (or "not identifiable: <reason>"), the highest throughput measured,
    R(max)/R0, the throughput where the measured latency reaches 1.25·R0 and 2·R0 ("not reached" =
    censored) and the held-out error. Units are in the cells (memory: ns, MB/s; storage: µs, IOPS)."""
    rows = []
    if mem is not None and not mem.empty:
        rows += _curve_rows(mem, _MEM, lambda r: f"memory: {r['curve']}")
    if storage is not None and not storage.empty:
        def label(r):
            bs = "" if pd.isna(r.get("bs_bytes")) else f"{size_text(int(r['bs_bytes']))} "
            return f"storage: {bs}{r['rw']}, {r['kind']}"
        rows += _curve_rows(storage, _STO, label)
    return pd.DataFrame(rows)


def curves_sentences(mem: pd.DataFrame | None, storage: pd.DataFrame | None) -> list:
    """The sentences of the latency–throughput section: memory curves, then storage curves (markdown)."""
    return memory_sentences(mem) + storage_sentences(storage)


# ---------------------------------------------------------------------------------- steady state


def steady_display(steady: pd.DataFrame) -> pd.DataFrame:
    """The steady-state verdicts (memstor.analysis.steady_state.verdict_table) for the report: workload,
    span, preconditioning, rounds, verdict, the window averages and both excursions against their limits."""
    from memstor.analysis import steady_state as ss

    if steady.empty:
        return steady

    def pct(v, limit):
        return "–" if v is None or v != v else f"{v:.1f} % (≤ {limit:g})"

    def gb(v):
        return "–" if v is None or v != v else f"{v / 1e9:.2f}"

    return pd.DataFrame({
        "device": steady["host"],
        "workload": steady["workload"],
        "span": [f"{size_text(int(b))} {'raw device' if s == 'full_device' else 'test file'}" if b == b and b
                 else "?" for s, b in zip(steady["span"], steady["span_bytes"])],
        "preconditioning": [f"{int(n)} × sequential writes ({gb(b)} GB)" if n == n and n else "–"
                            for n, b in zip(steady["precondition_passes"], steady["precondition_bytes"])],
        "rounds": [f"{int(r)} of ≤ {int(m)}, {fmt_number(s)} s each" for r, m, s in
                   zip(steady["rounds"], steady["max_rounds"], steady["round_s"])],
        "verdict": steady["verdict"],
        "window IOPS": steady["window_avg_iops"].map(fmt_number),
        "window MB/s": steady["window_avg_bw_MBps"].map(fmt_number),
        "window mean lat (µs)": steady["window_avg_lat_mean_us"].map(fmt_number),
        "window p99 (µs)": steady["window_avg_clat_p99_us"].map(fmt_number),
        "data excursion": [pct(v, ss.DATA_EXCURSION_PCT) for v in steady["data_excursion_pct"]],
        "slope excursion": [pct(v, ss.SLOPE_EXCURSION_PCT) for v in steady["slope_excursion_pct"]],
        "GB written": steady["bytes_written"].map(gb),
    })


def steady_sentences(steady: pd.DataFrame) -> list:
    """One sentence per device: the verdict, the window average, and what it means for the comparison."""
    out = []
    for _, v in steady.iterrows():
        where = "the whole raw device" if v["span"] == "full_device" else "the test file's span"
        if v["ss_achieved"]:
            out.append(f"**{v['host']}**: {v['workload']} reached steady state at round {int(v['ss_round'])} "
                       f"(window rounds {int(v['window_first'])}–{int(v['window_last'])}) on {where}: "
                       f"{fmt_number(v['window_avg_iops'])} IOPS on average over the window; the spec table "
                       "compares this value and its state matches the spec sheet's.")
        elif v["window_avg_iops"] == v["window_avg_iops"] and v["window_avg_iops"] is not None:
            out.append(f"**{v['host']}**: {v['workload']}: {v['verdict']} on {where}; the last window averages "
                       f"{fmt_number(v['window_avg_iops'])} IOPS (data excursion {v['data_excursion_pct']:.1f} %, "
                       f"slope excursion {v['slope_excursion_pct']:.1f} %). The spec table uses it flagged "
                       "'steady state not achieved'.")
        else:
            out.append(f"**{v['host']}**: {v['workload']}: {v['verdict']} (a window needs 5 rounds).")
    return out


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


# ------------------------------------------------------------------------------------------ drive


def drive_display(drive: pd.DataFrame) -> pd.DataFrame:
    """The drive table (memstor.analysis.drive.drive_table) for the report: device, section, field (units
    in the name), and what is known: the value, for health 'before → after, delta', or 'not available
    (reason)'."""
    if drive.empty:
        return drive

    def shown(row) -> str:
        if not row["available"] or row["section"] == "health":
            return str(row["note"] or "")
        v = row["value"]
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v)

    return pd.DataFrame({"device": drive["host"], "disk": drive["disk"].fillna("–"), "section": drive["section"],
                         "field": drive["field"], "value": drive.apply(shown, axis=1)})


# -------------------------------------------------------------------------------------- open loop
# fio-load-latency for people: memstor.analysis.load_latency's curve_table (load), slo, models and
# unloaded as display tables with short headers and units, and one paragraph per device x workload.

#: The queueing models of memstor.analysis.openloop.model_table: (column prefix, name).
OPEN_LOOP_MODELS = (("mm1", "M/M/1"), ("md1", "M/D/1"), ("mg1", "M/G/1"), ("mgc", "M/G/c"))
#: A model is said to break where |model − measured| / measured passes this (%).
MODEL_BREAK_PCT = 20.0
#: An open loop faster than the closed loop by at most this (%) is called small.
OPEN_CLOSED_SMALL_PCT = 10.0


def _ol_float(v) -> float:
    """A cell as a float (NaN when missing or not a number)."""
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _ol_fmt(v) -> str:
    """fmt_number of a cell that may be None, text or NaN."""
    return fmt_number(_ol_float(v))


def _ol_target(t) -> str:
    """A p99 target (µs) as people write it: 50, 1,000, 2.5."""
    t = _ol_float(t)
    if t != t:
        return "–"
    return f"{t:,.0f}" if t == int(t) else f"{t:g}"


def _ol_u(u) -> str:
    """An offered utilisation (% of X_max) as the figures label it: 50 -> 'u50'."""
    u = _ol_float(u)
    return "u?" if u != u else f"u{u:g}"


def _ol_rows(df: pd.DataFrame | None, host: str, rw: str) -> pd.DataFrame:
    """Rows of `df` for one device and workload (empty without the columns)."""
    if df is None or len(df) == 0 or not {"host", "rw"} <= set(df.columns):
        return pd.DataFrame()
    return df[(df["host"].astype(str) == str(host)) & (df["rw"] == rw)]


def _ol_flag_words(over, ceil, open_loop=None) -> str:
    """The flags of one open-loop point as words ('ok' when none is set); open_loop False: fio's inline
    submission gated the arrivals (rate per job x latency above memstor.measure.openloop.INLINE_MAX_LOAD)."""
    gated = open_loop is not None and open_loop == open_loop and not truthy(open_loop)
    words = [w for f, w in ((over, "overloaded"), (ceil, "iodepth ceiling reached"), (gated, "arrivals gated"))
             if truthy(f)]
    return ", ".join(words) or "ok"


LOAD_DISPLAY_COLUMNS = [
    "device", "workload", "utilisation (% of X_max)", "offered (IOPS)", "achieved (IOPS)",
    "achieved (% of offered)", "mean (µs)", "p50 (µs)", "p99 (µs)", "p99.9 (µs)", "flags", "CV of 1-s IOPS",
    "min 1-s IOPS (% of mean)", "closed loop at same IOPS (µs)", "open vs closed (%)", "X_max (IOPS)", "n",
]


def load_display(load: pd.DataFrame) -> pd.DataFrame:
    """The open-loop curves (memstor.analysis.load_latency.curve_table) for people, one row per device x
    workload x offered rate: utilisation (% of X_max), offered and achieved IOPS (achieved also in % of
    offered), mean / p50 / p99 / p99.9 total latency (µs), the flags as words (overloaded: achieved < 95 %
    of offered; iodepth ceiling reached: arrivals may have waited for a slot; arrivals gated: fio's inline
    submission held arrivals back for completions, not a pure open loop), the coefficient of variation
    of the per-second IOPS, the lowest 1-s IOPS (% of the mean of the seconds), the closed queue-depth
    loop's mean latency at the same IOPS (µs) with the open loop's difference to it (%), X_max and n."""
    if load is None or len(load) == 0:
        return pd.DataFrame(columns=LOAD_DISPLAY_COLUMNS)
    ld = load.reset_index(drop=True)

    def col(name):
        return ld[name] if name in ld.columns else pd.Series([None] * len(ld))

    def fixed(values, spec):
        return [("–" if _ol_float(v) != _ol_float(v) else format(_ol_float(v), spec)) for v in values]

    out = pd.DataFrame({
        "device": ld["host"].astype(str),
        "workload": ld["rw"],
        "utilisation (% of X_max)": fixed(ld["utilisation_pct"], "g"),
        "offered (IOPS)": col("offered_iops").map(_ol_fmt),
        "achieved (IOPS)": col("achieved_iops").map(_ol_fmt),
        "achieved (% of offered)": fixed(col("achieved_pct"), ".1f"),
        "mean (µs)": col("lat_mean_us").map(_ol_fmt),
        "p50 (µs)": col("lat_p50_us").map(_ol_fmt),
        "p99 (µs)": col("lat_p99_us").map(_ol_fmt),
        "p99.9 (µs)": col("lat_p99_9_us").map(_ol_fmt),
        "flags": [_ol_flag_words(o, c, g) for o, c, g in zip(col("overloaded"), col("ceiling_reached"),
                                                              col("open_loop"))],
        "CV of 1-s IOPS": fixed(col("iops_cv"), ".3f"),
        "min 1-s IOPS (% of mean)": fixed(col("min_1s_iops_pct"), ".0f"),
        "closed loop at same IOPS (µs)": col("closed_lat_mean_us").map(_ol_fmt),
        "open vs closed (%)": fixed(col("open_vs_closed_pct"), "+.1f"),
        "X_max (IOPS)": col("x_max_iops").map(_ol_fmt),
        "n": [("–" if _ol_float(v) != _ol_float(v) else int(_ol_float(v))) for v in col("n")],
    })
    return out[LOAD_DISPLAY_COLUMNS]


def _slo_cell(max_iops, censored) -> str:
    """The SLO answer of one target: the rate, '≥ rate (censored ...)' or 'none ...'."""
    v = _ol_float(max_iops)
    if v != v:
        return "none: even the lowest rate misses it"
    if truthy(censored):
        return f"≥ {fmt_number(v)} (censored: every point met it)"
    return fmt_number(v)


def slo_display(slo: pd.DataFrame) -> pd.DataFrame:
    """The SLO table (memstor.analysis.load_latency.slo) for people: device, workload, the p99 target (µs)
    and the highest achieved IOPS meeting it (interpolated between measured rates); '≥ X (censored: every
    point met it)' when the limit lies beyond the highest measured rate, 'none: even the lowest rate
    misses it' when no rate meets it; beside it fio's own latency_target search at the same target (its
    IOPS and the queue depth it ended at) and the ratio max IOPS / fio's."""
    cols = ["device", "workload", "p99 target (µs)", "max IOPS meeting it", "fio latency_target (IOPS, depth)",
            "ratio"]
    if slo is None or len(slo) == 0:
        return pd.DataFrame(columns=cols)
    s = slo.reset_index(drop=True)

    def col(name):
        return s[name] if name in s.columns else pd.Series([None] * len(s))

    return pd.DataFrame({
        "device": s["host"].astype(str), "workload": s["rw"],
        "p99 target (µs)": s["target_p99_us"].map(_ol_target),
        "max IOPS meeting it": [_slo_cell(m, c) for m, c in zip(s["max_iops"], s["censored"])],
        "fio latency_target (IOPS, depth)": ["–" if _ol_float(i) != _ol_float(i) else
                                             f"{_ol_fmt(i)} (QD {'?' if _ol_float(d) != _ol_float(d) else int(d)})"
                                             for i, d in zip(col("fio_latency_target_iops"), col("fio_latency_depth"))],
        "ratio": ["–" if _ol_float(r) != _ol_float(r) else f"{_ol_float(r):.2f}" for r in col("ratio_to_fio")],
    })[cols]


def _model_cell(pred, err, rho) -> str:
    """'predicted µs (error %)'; '– (ρ ≥ 1: no steady state)' where the model has none."""
    p, e = _ol_float(pred), _ol_float(err)
    if p != p:
        return "– (ρ ≥ 1: no steady state)" if _ol_float(rho) >= 1 else "–"
    return fmt_number(p) if e != e else f"{fmt_number(p)} ({e:+.1f} %)"


def models_display(models: pd.DataFrame) -> pd.DataFrame:
    """The model table (memstor.analysis.load_latency.models) for people, one row per open-loop point:
    utilisation (% of X_max), achieved IOPS, ρ₁ = λ·S, the measured mean latency (µs), each model's mean
    response time in µs with its error 100 (model − measured) / measured in %, the fitted c of M/G/c, the
    service time S (µs) and its cs², and the overloaded flag (not a steady state: left out of the fit)."""
    names = [f"{name} (µs, error)" for _, name in OPEN_LOOP_MODELS]
    cols = ["device", "workload", "utilisation (% of X_max)", "achieved (IOPS)", "ρ₁ = λ·S", "measured (µs)",
            *names, "c", "S (µs)", "cs²", "flag"]
    if models is None or len(models) == 0 or "rho_1" not in models.columns:
        return pd.DataFrame(columns=cols)
    m = models.reset_index(drop=True)
    out = {
        "device": m["host"].astype(str), "workload": m["rw"],
        "utilisation (% of X_max)": [("–" if _ol_float(v) != _ol_float(v) else f"{_ol_float(v):g}")
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


def _slo_sentences(s: pd.DataFrame, g: pd.DataFrame, x_max: float) -> list:
    """The SLO answer of one device x workload, one sentence per p99 target."""
    out = []
    low = g.sort_values("utilisation_pct").iloc[0] if len(g) else None
    for _, r in s.iterrows():
        t = _ol_target(r["target_p99_us"])
        v = _ol_float(r["max_iops"])
        share = f" ({100 * v / x_max:.0f} % of X_max = {fmt_number(x_max)} IOPS)" if v == v and x_max > 0 else ""
        if v != v:
            where = ""
            if low is not None:
                where = (f" ({_ol_u(low['utilisation_pct'])}: {_ol_fmt(low['achieved_iops'])} IOPS, p99 "
                         f"{_ol_fmt(low['lat_p99_us'])} µs)")
            out.append(f"p99 ≤ {t} µs is missed even at the lowest offered rate{where}: no measured rate meets it.")
        elif truthy(r["censored"]):
            out.append(f"p99 ≤ {t} µs held at every measured rate, up to **≥ {fmt_number(v)} IOPS**{share}: "
                       "the limit lies beyond the highest rate measured (censored).")
        elif _before_overload(g, v):
            out.append(f"The highest rate that keeps p99 ≤ {t} µs is **{fmt_number(v)} IOPS**{share}, the last "
                       "measured rate before an overloaded point (an overloaded point counts as a miss).")
        else:
            out.append(f"The highest rate that keeps p99 ≤ {t} µs is about **{fmt_number(v)} IOPS**{share}, "
                       "interpolated between the last rate that met it and the first that missed it.")
    return out


def _before_overload(g: pd.DataFrame, max_iops: float) -> bool:
    """The SLO answer is a measured steady rate with an overloaded point above it (slo_max_iops then stops
    at that rate instead of interpolating)."""
    if g.empty or "overloaded" not in g.columns:
        return False
    x = pd.to_numeric(g["achieved_iops"], errors="coerce").to_numpy(float)
    over = np.array([truthy(v) for v in g["overloaded"]], dtype=bool)
    at = np.isclose(x, max_iops, rtol=1e-9, atol=1e-6) & ~over
    return bool(at.any() and (over & (x >= max_iops)).any())


def _unloaded_sentence(u: pd.DataFrame) -> list:
    """The unloaded latency and, when flagged, the low-rate anomaly."""
    if u.empty:
        return []
    r = u.iloc[0]
    lat, used = _ol_float(r.get("lat_unloaded_us")), _ol_u(100 * _ol_float(r.get("util_used")))
    if lat != lat:
        return []
    if truthy(r.get("low_rate_anomaly")):
        return [f"Low-rate anomaly: at the lowest rate ({_ol_u(100 * _ol_float(r.get('util_lowest')))}) the mean "
                f"latency is {_ol_fmt(r.get('lat_lowest_rate_us'))} µs, "
                f"{_ol_float(r.get('low_rate_excess_pct')):.0f} % above the {fmt_number(lat)} µs at {used}. More "
                "latency at less load is not queueing: between sparse I/Os the drive can drop into a power state "
                "(NVMe APST) and the CPU into an idle state, and waking up adds latency; the unloaded latency is "
                f"therefore taken at {used}."]
    return [f"Unloaded mean latency {fmt_number(lat)} µs (at {used})."]


def _stress_sentences(g: pd.DataFrame) -> list:
    """Overloaded points and points that reached the iodepth ceiling."""
    out = []
    over = g[[truthy(v) for v in g["overloaded"]]] if "overloaded" in g.columns else g.iloc[0:0]
    if len(over):
        where = ", ".join(f"{_ol_u(r['utilisation_pct'])} ({_ol_float(r.get('achieved_pct')):.1f} % achieved)"
                          for _, r in over.iterrows())
        out.append(f"Overloaded (achieved < 95 % of the offered rate) at {where}: the device did not keep up, "
                   "so the queue grew for the whole run; their latency depends on the run's length, not on a "
                   "steady state, and the model fit leaves them out.")
    ceil = g[[truthy(v) for v in g["ceiling_reached"]]] if "ceiling_reached" in g.columns else g.iloc[0:0]
    if len(ceil):
        where = ", ".join(_ol_u(u) for u in ceil["utilisation_pct"])
        out.append(f"The per-job iodepth ceiling was reached at {where}: arrivals then waited for a free slot "
                   "before fio issued them, time fio does not count (coordinated omission), so the latency there "
                   "is a lower bound.")
    gated = g[[v is not None and v == v and not truthy(v) for v in g["open_loop"]]] if "open_loop" in g.columns \
        else g.iloc[0:0]
    if len(gated):
        where = ", ".join(_ol_u(u) for u in gated["utilisation_pct"])
        out.append(f"Arrivals were gated at {where}: fio's inline submission (the mode the submit-mode probe "
                   "chose: offload hung or failed the open-loop check here, see the experiment's manifest) waits "
                   "for the I/O in flight before each rate sleep, so once rate "
                   "per job x latency exceeds 0.5 the arrivals bunch up behind completions: the offered rate is "
                   "still delivered, but the loop there is partly closed and the latency a lower bound.")
    return out


def _open_closed_sentences(g: pd.DataFrame) -> list:
    """Where the open loop is faster than the closed loop at the same IOPS, why it should not be, and what
    explains it (briefly for a small gap, in full for a large one)."""
    if "open_vs_closed_pct" not in g.columns:
        return []
    diff = pd.to_numeric(g["open_vs_closed_pct"], errors="coerce")
    if diff.notna().sum() == 0:
        return []
    faster = g[diff < 0]
    if faster.empty:
        d = diff.dropna()
        by = f"about {d.mean():.0f} %" if round(d.min()) == round(d.max()) else f"{d.min():.0f}–{d.max():.0f} %"
        return [f"At equal throughput the open loop is {by} slower than the closed queue-depth loop "
                f"({len(d)} rates compared): the cost of random (Poisson) arrivals."]
    where = ", ".join(f"{_ol_u(r['utilisation_pct'])} ({_ol_fmt(r['lat_mean_us'])} vs "
                      f"{_ol_fmt(r['closed_lat_mean_us'])} µs, {_ol_float(r['open_vs_closed_pct']):+.1f} %)"
                      for _, r in faster.iterrows())
    worst = float(-diff[diff < 0].min())
    s = (f"At {where} the open loop is faster than the closed loop at the same throughput. It should not be: "
         "at the same X a closed loop keeps N = X·R I/Os in flight all the time, while the open loop's queue "
         "fluctuates around its mean as Poisson arrivals bunch up, and that variability only adds waiting.")
    if worst <= OPEN_CLOSED_SMALL_PCT:
        s += (f" A gap of {worst:.1f} % or less is within what the comparison itself explains: the closed-loop "
              "value is interpolated linearly between two queue-depth points, and the latency–throughput curve is "
              "convex, so the straight line lies above it; and those points come from another run, with its "
              "own noise.")
    else:
        s += (f" A gap of {worst:.0f} % is more than interpolation (the closed-loop value is interpolated "
              "linearly between two queue-depth points, and on a convex curve the line lies above it) and "
              "noise usually explain. Other differences between the runs can: another device state (write "
              "cache, garbage collection, power state), and another configuration (the closed points run their "
              "own iodepth x numjobs, typically one job at a large iodepth whose single submitting thread can add "
              "latency, while the open loop splits its rate over several jobs). Compare the closed sweep's points "
              "around this rate and rerun both with repetitions.")
    return [s]


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


def load_sentences(load: pd.DataFrame, slo: pd.DataFrame, models: pd.DataFrame, unloaded: pd.DataFrame) -> list:
    """One markdown paragraph per device x workload of the open loop: the SLO answer (per p99 target), the
    unloaded latency and the low-rate anomaly when flagged, overloaded points and points at the iodepth
    ceiling, where the open loop is faster than the closed loop at equal throughput (and why it should not
    be), and which queueing model explains the measured mean latency best (lowest mean |error| over the
    steady points it predicts, most points first) and where each breaks. Inputs: the tables of
    memstor.analysis.load_latency (curve_table, slo, models, unloaded); any may be empty."""
    if load is None or len(load) == 0:
        return []
    out = []
    hosts = sorted(load["host"].astype(str).unique())
    for host in hosts:
        h = load[load["host"].astype(str) == host]
        for rw in sorted(h["rw"].dropna().unique()):
            g = _ol_rows(load, host, rw)
            x_max = float(np.nanmean(pd.to_numeric(g["x_max_iops"], errors="coerce"))) \
                if "x_max_iops" in g.columns and pd.to_numeric(g["x_max_iops"], errors="coerce").notna().any() \
                else math.nan
            parts = _slo_sentences(_ol_rows(slo, host, rw), g, x_max)
            parts += _unloaded_sentence(_ol_rows(unloaded, host, rw))
            parts += _stress_sentences(g)
            parts += _open_closed_sentences(g)
            parts += _model_sentences(_ol_rows(models, host, rw))
            out.append(f"**{md_escape(host)}, {rw}**: " + " ".join(parts))
    return out
