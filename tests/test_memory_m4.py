"""Issue 38, workstream M (the seventh reviews S7-bare, R-loop, R-1cpu): the memory checks and the report's memory
findings on the reviewed runs' real tables (tests/data/memory-m4, tests/data/memory-d3: SOURCES.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from memstor.analysis import hierarchy as h
from memstor.analysis import memory_figures as mf
from memstor.analysis.memory_curves import sub_window_ci_columns
from memstor.analysis.validity.memory import buffer_llc_rows, memory_rows
from memstor.report.text import hierarchy as hier_text
from memstor.report.text.headline import ceilings_display
from memstor.report.text.headline_table import headline_evidence

DATA = Path(__file__).parent / "data"
BARE = DATA / "memory-m4" / "bare"
LOOP = DATA / "memory-d3" / "loop328" / "processed" / "vm2-loop-fio328"


def _machine(mlc: pd.DataFrame, reason: str) -> dict:
    return next(r for r in memory_rows(mlc) if r["subject"] == f"loaded_latency: {reason} (machine)")


def test_a_machine_row_says_every_point_only_where_every_point_fails():
    """S7-bare M-9: 16 of 18 loaded_latency values failed latency_unstable and the row said 'a failure every point
    shares'; now it states the share (89 %, at least 80 %) and the 2 that pass (1.20-1.38 %). Loop's 18 of 18 keep
    'every point shares'."""
    bare = _machine(pd.read_csv(BARE / "mlc-loaded-latency.csv"), "latency_unstable")
    assert bare["evidence"].startswith("16 of 18 loaded_latency values fail 'latency_unstable'")
    assert "a failure every point shares" not in bare["evidence"]
    assert "a failure 89 % of the values share (at least 80 %)" in bare["evidence"]
    assert "not every point shares it: 2 are within this bound (sub-window latency spread 1.20-1.38 %)" in bare["evidence"]
    loop = _machine(pd.read_csv(LOOP / "mlc-loaded-latency.csv"), "latency_unstable")
    assert loop["evidence"].startswith("18 of 18") and "a failure every point shares is a property of this " \
        "machine" in loop["evidence"] and "not every point" not in loop["evidence"]


def _bare_memory(cpu_floor: float | None = None) -> tuple[pd.DataFrame, dict]:
    """The fresh-clone bare run's memory rows with its mem-hierarchy rows (as ds.mlc holds them) and sysinfo; with
    cpu_floor, every hierarchy run's cpu_share raised to at least it (the side where hierarchy_cpu_share passes)."""
    hier = pd.read_csv(BARE / "mem-hierarchy.csv")
    if cpu_floor is not None:
        hier["cpu_share"] = hier["cpu_share"].clip(lower=cpu_floor)
    mlc = pd.concat([pd.read_csv(BARE / "mlc-loaded-latency.csv"), hier], ignore_index=True)
    return mlc, {"vm": json.loads((BARE / "sysinfo.json").read_text())}


def test_buffer_llc_judges_against_the_curves_last_step_where_its_check_held_and_says_which():
    """S7-bare M-10 (second half): memory_buffer_llc judged the 256 MiB buffer against the kernel's 480 MiB L3 while
    §4.5's curve steps at 15.2 MiB onto a 156 ns level. That level's runs (22.6-64 MiB) had 52-56 % of a CPU: without
    them the curve gives no step, so the kernel's figure stays and the row says why. With the runs' CPU share within
    the band, the step is the basis (16.9x: pass) and the kernel's 480 MiB is named beside it."""
    mlc, info = _bare_memory()
    r = next(r for r in buffer_llc_rows(mlc, info))
    assert r["status"] == "fail" and round(r["value"], 3) == 0.533
    assert "0.533x the kernel's 480 MiB last-level cache" in r["evidence"]
    assert "the working-set curve gives no last step from the runs within hierarchy_cpu_share's band (4 sizes left " \
        "out (22.6 MiB, 32 MiB, 45.3 MiB and 64 MiB))" in r["evidence"]
    mlc, info = _bare_memory(cpu_floor=0.95)
    r = next(r for r in buffer_llc_rows(mlc, info))
    assert r["status"] == "pass" and round(r["value"], 1) == 19.0  # fifth read: the level ends where the curve
    assert "19.0x the working-set curve's last cache step at 13.5 MiB (beyond it the curve's last level, 158 ns" \
        in r["evidence"] and "the kernel reports a 480 MiB last-level cache" in r["evidence"]  # leaves it
    step = h.last_step(h.cache_levels(pd.read_csv(DATA / "memory-d3" / "1cpu" / "mem-hierarchy.csv"),
                                      info["vm"]["caches"]), "vm-1cpu")  # 149-170 ns at 32-64 MiB: a level
    # S11-1cpu 4: 16 MiB at 52.5 ns is 9 % of the way from the 40.6 ns level to 167 ns, still held: it ends between
    # 16 and 22.6 MiB (95.1 ns, 43 %), not between 11.3 and 16 MiB
    assert step is not None and round(step[0] / 2**20, 1) == 19.0 and round(step[1]) == 167


def _hier(name: str) -> pd.DataFrame:
    return pd.read_csv(DATA / "memory-d3" / name / "mem-hierarchy.csv")


def test_levels_and_mlp_come_only_from_runs_that_passed_hierarchy_cpu_share():
    """Item M-4 (hierarchy_cpu_share, 9ad2ba4): page 1 listed loop's failed runs while §4.5 still stated the levels
    and MLP bandwidth read from them. Loop's 2 MiB-page chain at 1 and 8 MiB (78-87 % of a CPU) made its 42.4 ns
    'level 3'; its 2-thread MLP runs (49-64 %) gave 6,202 MB/s. Now the levels are read without those sizes, which
    a row names, and the 2-thread figure is not stated. 1-CPU passes (90.8 %): its levels stand, nothing left out."""
    caches = {"L1d_bytes": 49152, "L2_bytes": 2097152, "L3_bytes": 503316480}
    loop = h.cache_levels(_hier("loop328-hierarchy"), caches).set_index("level")
    assert "42.4 ns" not in " ".join(loop["note"].astype(str)) and h.LEFT_OUT_LEVEL in loop.index
    assert loop.loc["L3", "note"].startswith("ends between 11.3 MiB and 16.0 MiB (on it 2,896 KiB-11.3 MiB, held at "
                                             "11.3 MiB")  # 8 MiB left out
    assert loop.loc[h.LEFT_OUT_LEVEL, "note"].startswith("2 sizes left out (1 MiB and 8 MiB), their runs' measuring "
                                                         "thread on a CPU 78-87 % of the time, outside 90-101 %")
    said = hier_text.hierarchy_sentences(loop.reset_index(), h.mlp_table(_hier("loop328-hierarchy")))
    assert "Left out (hierarchy_cpu_share: on a CPU outside 90-101 % of the time): 2 sizes left out (1 MiB and 8 MiB)" in said[0]
    assert "42.4 ns" not in said[0] and not any("6,202" in s for s in said)
    assert "2 thread(s): not stated: their measuring threads were on a CPU 49-64 % of the time" in said[-1]
    one = h.cache_levels(_hier("1cpu"), caches).set_index("level")
    assert h.LEFT_OUT_LEVEL not in one.index and round(one.loc["L3", "latency_ns"], 1) == 40.6
    said = hier_text.hierarchy_sentences(one.reset_index(), h.mlp_table(_hier("1cpu")))
    assert "left out" not in " ".join(said) and "4,861 MB/s at 16 independent chains" in said[-1]


def test_memory_headlines_and_the_dram_row_are_withheld_where_the_buffer_check_failed():
    """S7-bare M-10, R-loop 1.2: page 1 says failed checks' findings are not stated, yet 'Peak bandwidth 28,778 —
    with caveats (memory_buffer_llc failed ...)' and the ceilings' 'DRAM peak ... 28,778' stood while the idle
    latency was withheld. Now both memory headlines and the DRAM row are withheld under the failed check; where the
    check passes (the curve's 15.2 MiB step, runs within the CPU band) the peak is stated and the DRAM row shows it."""
    head = pd.read_csv(BARE / "headline.csv")
    v = pd.read_csv(BARE / "validity-memory.csv")
    use = pd.read_csv(BARE / "ceilings-dram.csv")
    table = headline_evidence(head, v).set_index("quantity")
    peak = table.loc[[q for q in table.index if q.startswith("Peak")][0]]
    idle = table.loc[[q for q in table.index if q.startswith("Idle")][0]]
    assert peak["value"].startswith("withheld: memory_buffer_llc failed") and "28,778" not in peak["value"]
    assert peak["trust"] == "not valid (memory_buffer_llc)"
    assert idle["value"].startswith("withheld") and idle["trust"] == "not valid (memory_gate: latency_unstable, " \
        "memory_buffer_llc)"
    dram = ceilings_display(use, v).iloc[0]
    assert dram["best measured (MB/s, whole-run mean)"].startswith("withheld: memory_buffer_llc failed (256 MiB buffer, within the "
                                                   "480 MiB last-level cache") and "28,778" not in dram.to_string()
    mlc, info = _bare_memory(cpu_floor=0.95)
    passed = pd.concat([v[v["check"] != "memory_buffer_llc"], pd.DataFrame(buffer_llc_rows(mlc, info))])
    table = headline_evidence(head, passed).set_index("quantity")
    assert table.loc["Peak memory bandwidth (MB/s)", "value"].startswith("28,778")
    assert ceilings_display(use, passed).iloc[0]["best measured (MB/s, whole-run mean)"].startswith("28,778 (loadlat v0.5: matrix")


def test_the_stream_triad_peak_names_its_byte_accounting():
    """R-loop 1.2: loop's peak bandwidth is stream-triad's 20,655 MB/s, 1.49x the 2:1 mix's 13,881 at the same read
    share: its non-temporal write reads no line for ownership. The measurement now says so; read-only is unchanged."""
    figs = mf.memory_figures(pd.read_csv(LOOP / "mlc-loaded-latency.csv"))
    head = figs[(figs["quantity"] == "peak bandwidth") & (figs["role"] == "headline")].iloc[0]
    assert round(head["value"]) == 20655 and head["measurement"].startswith(
        "peak injection, stream-triad (2 reads + 1 non-temporal write per element, every byte counted; the "
        "ordinary-store mixes also read each line they write, uncounted: not comparable)")
    assert "peak injection, read-only, 1 load thread" in set(figs["measurement"])


def test_a_latency_interval_is_for_the_printed_value():
    """R-loop 7.1: loop's lightest 1:1 point printed '401 [311, 791]': 401.2 ns is window time / loads, the interval
    the t-interval of the 10 sub-windows' unweighted mean (551.3 ns). The interval is now the load-weighted mean's
    (the same estimator: centred within 10 % of its half-width on 401); a table written before keeps no interval
    for that value (centred on 551), while an interval centred on its value (idle, 4 KiB pages: 225 [223, 228])
    stays."""
    point = json.loads((DATA / "memory-m4" / "loop328" / "loaded-latency-W5-d20000-windows.json").read_text())
    ci = sub_window_ci_columns(point["series"], "loadlat")
    lo, hi = ci["latency_ns_ci_low"], ci["latency_ns_ci_high"]
    assert abs((lo + hi) / 2 - point["latency_ns"]) < 0.1 * (hi - lo) / 2 and lo < 401.2 < hi
    figs = mf.memory_figures(pd.read_csv(LOOP / "mlc-loaded-latency.csv")).set_index("measurement")
    light = figs.loc["loaded, lightest load (delay 20000, 1:1)"]
    assert round(light["value"], 1) == 401.2 and pd.isna(light["ci_low"]) and pd.isna(light["ci_high"])
    said = {c["measurement"]: c for c in mf.idle_candidates(pd.read_csv(LOOP / "mlc-loaded-latency.csv"),
                                                            "vm2-loop-fio328")}
    assert said["loaded, lightest load (delay 20000, 1:1)"]["ci_note"] == (
        "its sub-windows' interval is centred on 551.3, not on this value: another estimator's (their unweighted mean)")
    idle = figs.loc["idle, 4 KiB pages"]
    assert round(idle["ci_low"], 1) == 222.7 and round(idle["ci_high"], 1) == 228.1
