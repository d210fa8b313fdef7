"""One definition per memory quantity: every measurement of the idle latency and of the peak bandwidth a
device has, each named for what it is, and which of them is the headline (pure).

A memory tool reports the "idle latency" several ways, and they differ by tens of ns: the idle-latency test
with huge pages (2 MiB: no page walks), the same test with 4 KiB pages (each random load
also walks the page table), the local entries of the idle latency matrix (MLC's default run: its own buffer
and page size) and the loaded latency at the lightest load (a little load is still load). "Peak bandwidth"
likewise: the peak-injection figure per traffic, the max-bandwidth section (the best of several injection
rates per mix), the bandwidth matrix's local entries (MLC's default run, its own load threads) and the highest
loaded-latency bandwidth, each named with its traffic and load threads (a stream-triad counts its bytes
otherwise than a read-only run, and 2 load threads move more than 1). The report shows them in one
table (:func:`memory_figures`), so a reader who finds 155 ns here and 185 ns there sees why, and the
headline takes the first available of :data:`IDLE_ORDER` / the highest of the bandwidth sections (peak
injection, max bandwidth, bandwidth matrix; the loaded-latency maximum only without them).

Units: ns, MB/s (10^6 B/s).
"""

from __future__ import annotations

import pandas as pd

from memstor.analysis.memory import page_walk
from memstor.analysis.memory_curves import point_summary

#: The idle-latency measurements in the order the headline takes them (the first available).
IDLE_ORDER = ("idle, huge pages", "idle, 4 KiB pages", "idle, pages unknown", "matrix, local node",
              "loaded, lightest load")
#: Columns of :func:`memory_figures`.
COLUMNS = ["host", "quantity", "measurement", "tool", "value", "unit", "n", "ci_low", "ci_high", "role", "gate",
           "gate_detail"]

_SECTION = {"peak_injection_bandwidth": "peak injection", "max_bandwidth": "max bandwidth"}


def tool_name(rows: pd.DataFrame) -> str:
    """The tool (and version) that measured `rows`: "Intel MLC v3.11", "loadlat v0.4", both joined with
    "and"; "MLC or loadlat" when the rows do not say."""
    if "tool" not in rows.columns or rows["tool"].dropna().empty:
        return "MLC or loadlat"
    names = []
    for tool, g in rows.groupby(rows["tool"].fillna(""), sort=True):
        version = g["tool_version"].dropna().astype(str) if "tool_version" in g.columns else pd.Series([], dtype=str)
        label = {"mlc": "Intel MLC", "loadlat": "loadlat"}.get(str(tool), str(tool) or "unknown tool")
        names.append(label + (f" v{version.iloc[0].lstrip('v')}" if not version.empty else ""))
    return " and ".join(names)


def _ok(mlc: pd.DataFrame, host: str, metric: str) -> pd.DataFrame:
    m = mlc[(mlc["host"] == host) & mlc[metric].notna()]
    return m[m["ok"]] if "ok" in m else m


def idle_candidates(mlc: pd.DataFrame, host: str) -> list[dict]:
    """Every idle-latency measurement of `host` (of the loaded latency at the lightest load, the lowest
    traffic's), in :data:`IDLE_ORDER`: dicts with measurement, tool, value
    (ns), n, ci_low, ci_high (95 %; None without), ci_method (``repetitions``, ``batch-means`` or "")."""
    m = _ok(mlc, host, "latency_ns")
    out = []
    idle = m[m["test"] == "idle_latency"]
    if not idle.empty:
        pages = idle["huge_pages"] if "huge_pages" in idle else pd.Series(None, index=idle.index)
        for label, sel in (("idle, huge pages", idle[pages.map(lambda v: v is True or v == 1.0)]),
                           ("idle, 4 KiB pages", idle[pages.map(lambda v: v is False or v == 0.0)]),
                           ("idle, pages unknown", idle[pages.isna()])):
            if not sel.empty:
                out.append(_summary(label, sel, "latency_ns"))
        walk = page_walk(idle)
        if walk["n_huge"] and out and out[0]["measurement"] == "idle, huge pages" and walk["pages"]:
            out[0]["measurement"] += f" ({walk['pages']})"
    mat = m[(m["test"] == "latency_matrix") & (m["src_node"] == m["dst_node"])]
    nodes = [_summary(f"matrix, local node {int(node)}", g, "latency_ns") for node, g in mat.groupby("src_node")]
    out += sorted(nodes, key=lambda c: c["value"])       # the lowest local entry first (the headline's)
    ll = m[(m["test"] == "loaded_latency") & m["inject_delay"].notna()]
    if not ll.empty:
        top = ll[ll["inject_delay"] == ll["inject_delay"].max()]
        light = [_summary(f"loaded, lightest load (delay {int(top['inject_delay'].iloc[0])}, {traffic})", g,
                          "latency_ns") for traffic, g in top.groupby("traffic", sort=False)]
        out += sorted(light, key=lambda c: c["value"])[:1]  # the lowest: the closest to an idle chase
    return out


def bandwidth_candidates(mlc: pd.DataFrame, host: str) -> list[dict]:
    """The peak-bandwidth measurements of `host` that define the quantity: per section (peak injection, max
    bandwidth) its read-only figure and its best traffic, then the highest loaded-latency bandwidth; dicts as
    :func:`idle_candidates` (MB/s). The other traffics are in the memory sections' tables."""
    m = _ok(mlc, host, "bandwidth_MBps")
    out = []
    for test, name in _SECTION.items():  # per section its read-only figure and its best traffic
        rows = [_summary(f"{name}, {BYTES_COUNTED.get(str(traffic), traffic)}{_threads(g)}", g, "bandwidth_MBps")
                for traffic, g in m[m["test"] == test].groupby("traffic", sort=False)]
        keep = {id(c) for c in rows if ", read-only" in c["measurement"]}
        keep |= {id(max(rows, key=lambda c: c["value"]))} if rows else set()
        out += [c for c in rows if id(c) in keep]
    mat = m[(m["test"] == "bandwidth_matrix") & (m["src_node"] == m["dst_node"])]  # S6-bare M-8: was left out
    out += sorted((_summary(f"matrix, local node {int(node)}, {_traffic(g)}{_threads(g)}", g, "bandwidth_MBps")
                   for node, g in mat.groupby("src_node")), key=lambda c: -c["value"])
    ll = m[m["test"] == "loaded_latency"]
    if not ll.empty:
        i = ll["bandwidth_MBps"].idxmax()
        best = ll.loc[[i]]
        out.append(dict(_summary(f"loaded latency, highest ({best['traffic'].iloc[0]}{_threads(best)})", best,
                                 "bandwidth_MBps"), n=1, ci_low=None, ci_high=None, ci_method=""))
    return out


#: A traffic whose bytes are counted otherwise than the ordinary-store mixes', named with how (R-loop 1.2: the peak was
#: stream-triad's 20,655 MB/s, 1.49x the 2:1 mix's 13,881 at the same read share: loadlat/MLC W10 writes with
#: non-temporal stores, which read no line for ownership; an ordinary store reads its line first, uncounted).
BYTES_COUNTED = {"stream-triad": "stream-triad (2 reads + 1 non-temporal write per element, every byte counted; "
                                 "the ordinary-store mixes also read each line they write, uncounted: not comparable)"}


def _threads(rows: pd.DataFrame) -> str:
    """', 2 load threads' of a bandwidth measurement's rows (their ``load_threads``), '' when not recorded."""
    k = pd.to_numeric(rows["load_threads"], errors="coerce").dropna() if "load_threads" in rows else pd.Series([])
    k = k[k > 0]
    return "" if k.empty else f", {int(k.max())} load thread{'s' if int(k.max()) != 1 else ''}"


def _traffic(rows: pd.DataFrame) -> str:
    """The traffic of a matrix entry's rows ('read-only' when not recorded: MLC's matrix reads)."""
    t = rows["traffic"].dropna().astype(str) if "traffic" in rows else pd.Series([], dtype=str)
    return t.iloc[0] if len(t) else "read-only"


def gate_outcome(rows: pd.DataFrame) -> tuple[str, str]:
    """(gate, gate_detail) of the runs of one measurement under memstor's quality gate: ``failed: <codes>`` when
    any run failed it (detail: the failed runs' gate_detail, the numbers against the limits), ``passed`` when
    every run passed, ``not judged`` otherwise (Intel MLC, a section the gate does not judge, imported data)."""
    gates = rows["gate"].astype(str) if "gate" in rows.columns else pd.Series("", index=rows.index)
    bad = gates.str.startswith("failed:")
    if bad.any():
        codes = dict.fromkeys(c for g in gates[bad] for c in g.split(":", 1)[1].split(",") if c)
        detail = rows.loc[bad, "gate_detail"].dropna().astype(str) if "gate_detail" in rows.columns else []
        return "failed: " + ", ".join(codes), "; ".join(dict.fromkeys(d for d in detail if d))
    if len(gates) and gates.eq("passed").all():
        return "passed", ""
    return "not judged", ""


def _summary(label: str, rows: pd.DataFrame, metric: str) -> dict:
    mean, lo, hi, n, method = point_summary(rows, metric)
    notes = rows["ci_note"].dropna().astype(str) if "ci_note" in rows else pd.Series(dtype=str)
    if "gate" in rows and rows["gate"].astype(str).eq("not_evaluated:section").all():  # loadlat v0.5's matrices
        notes = notes.str.replace("no sub-windows (loadlat before v0.3)", "no sub-windows (a section loadlat "
                                  "measures in one window)", regex=False)
    stored = pd.to_numeric(rows.get(f"{metric}_ci_low", pd.Series(dtype=float)), errors="coerce").dropna()
    if n == 1 and lo != lo and len(stored) and "correlated" not in " ".join(notes):  # R-loop 7.1: another estimator's
        mid = (float(stored.iloc[0]) + float(pd.to_numeric(rows[f"{metric}_ci_high"], errors="coerce").iloc[0])) / 2
        notes = pd.concat([notes, pd.Series([f"its sub-windows' interval is centred on {mid:,.1f}, not on this value: "
                                             "another estimator's (their unweighted mean)"])])
    gate, detail = gate_outcome(rows)
    return {"measurement": label, "tool": tool_name(rows), "value": float(mean), "n": int(n),
            "ci_low": None if lo != lo else float(lo), "ci_high": None if hi != hi else float(hi),
            "ci_method": method, "ci_note": "; ".join(dict.fromkeys(x for x in notes if x)), "gate": gate,
            "gate_detail": detail}


def headline_idle(cands: list[dict]) -> dict | None:
    """The idle latency the headline uses: the first of :data:`IDLE_ORDER` that was measured (the lowest
    local matrix entry, the lowest lightest-load latency)."""
    return cands[0] if cands else None


def headline_bandwidth(cands: list[dict]) -> dict | None:
    """The peak bandwidth the headline uses: the highest figure of the bandwidth sections (peak injection, max
    bandwidth, the bandwidth matrix's local entries; each named with its traffic and load threads), else the
    highest loaded-latency bandwidth."""
    sections = [c for c in cands if not c["measurement"].startswith("loaded")]
    pool = sections or cands
    return max(pool, key=lambda c: c["value"]) if pool else None


def memory_figures(mlc: pd.DataFrame | None) -> pd.DataFrame:
    """One row per device x quantity x measurement (:data:`COLUMNS`): quantity ``idle latency`` (ns) or
    ``peak bandwidth`` (MB/s), what was measured, the tool, value, n, its 95 % interval, and ``role``:
    ``headline`` for the one the first page uses, else ``also measured``; ``gate`` and ``gate_detail``: its runs
    under memstor's quality gate (:func:`gate_outcome`)."""
    if mlc is None or mlc.empty or not {"host", "test"} <= set(mlc.columns):
        return pd.DataFrame(columns=COLUMNS)
    rows = []
    for host in sorted(mlc["host"].dropna().unique()):
        for quantity, unit, cands, pick in (("idle latency", "ns", idle_candidates(mlc, host), headline_idle),
                                            ("peak bandwidth", "MB/s", bandwidth_candidates(mlc, host),
                                             headline_bandwidth)):
            head = pick(cands)
            for c in cands:
                rows.append({"host": host, "quantity": quantity, **c, "unit": unit,
                             "role": "headline" if c is head else "also measured"})
    return pd.DataFrame(rows, columns=COLUMNS)
