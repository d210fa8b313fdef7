"""Memory findings follow their preconditions (issue 38, fifth review, workstream D, part 2): a headline from a run
that failed the memory gate is withheld, B_max from gate-failed points is not stated, the buffer is checked
against the last-level cache before a value is called DRAM's, 'peak memory bandwidth' is one definition, and the
'every measurement' table holds every measurement. Real runs: tests/data/memory-d3 (SOURCES.md)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from memstor.analysis import hierarchy as h
from memstor.analysis import memory_figures as mf
from memstor.analysis import synthesis as syn
from memstor.analysis.core_clock import level_clock as _clock
from memstor.analysis.dataset import load_dataset
from memstor.analysis.hierarchy import find_levels, level_ends
from memstor.analysis.memory_curves import curve_table
from memstor.analysis.memory_fit import memory_fit_table
from memstor.analysis.read_ratio import read_ratio_table
from memstor.analysis.validity import validity_table
from memstor.analysis.validity.memory import buffer_llc_rows
from memstor.report.memory_text import page_walk_text
from memstor.report.plots import synthesis as figs
from memstor.report.text import first_page as fp
from memstor.report.text.headline import ceilings_display, memory_figures_display, no_memory_figures_sentence
from memstor.report.text.headline_table import headline_evidence
from memstor.report.text.hierarchy import cache_levels_display, hierarchy_sentences
from memstor.report.text.read_ratio import read_ratio_display, read_ratio_sentences

DATA = Path(__file__).parent / "data" / "memory-d3"


@pytest.fixture(scope="module")
def loop():
    return load_dataset(DATA / "loop328")


@pytest.fixture(scope="module")
def bare():
    return load_dataset(DATA / "bare")


def _headline(ds, quantity: str, validity=None):
    table = headline_evidence(syn.headline_long(ds), validity)
    return table[table["quantity"].str.startswith(quantity)].iloc[0]


def test_an_idle_latency_headline_whose_run_failed_the_gate_is_withheld(loop, bare):
    """R-loop 2.3: loop's 243.6 ns (2 MiB pages: latency spread 14.0 %, measuring thread at 75 % of its CPU) read
    '244 [227, 266]' 'with caveats'; now withheld with the gate's numbers. bare's 168.7 ns passed its gate: stated."""
    row = _headline(loop, "Idle memory")
    assert row["value"].startswith("withheld: its run failed the memory gate (latency spread 14.0 %")
    assert "75 % of its CPU" in row["value"] and "244" not in row["value"]
    assert row["trust"] == "not valid (memory_gate: latency_unstable, cpu_share)"
    kept = _headline(bare, "Idle memory")
    assert kept["value"].startswith("169") and not kept["trust"].startswith("not valid")
    assert _headline(loop, "Peak memory")["value"].startswith("20,655")  # its gate passed


def _read_ratio(ds):
    mem, _ = memory_fit_table(curve_table(ds.mlc))
    return mem, read_ratio_table(mem)


def test_b_max_read_at_a_run_that_failed_its_gate_is_not_stated(loop, bare):
    """R-loop 11.1, R-bare M-15, S6-bare M-13: 'B_max 3,880 MB/s at 100 % DRAM reads (read-only), 5,844 MB/s at
    0 %' (loop: all 18 points failed) and bare's '15,549 ... 25,206' (read-only delay 0 bandwidth_unstable 5.5 %,
    write-only-nt delay 0 latency_unstable 2.8 %) are not stated; bare's 1:1 B_max 12,907 (its run passed) is
    shown without the mark; a family whose B_max runs passed still says how B_max moves."""
    for ds, figures in ((loop, ("3,880", "5,844")), (bare, ("15,549", "25,206"))):
        mem, rr = _read_ratio(ds)
        said = read_ratio_sentences(rr, None)[0]
        assert "is not stated: the runs B_max is read from (read-only, write-only-nt) failed the memory gate" in said
        assert not any(f in said for f in figures)
        shown = read_ratio_display(rr)["B_max (MB/s)"].tolist()
        assert f"{figures[0]} (gate failed)" in shown and f"{figures[1]} (gate failed)" in shown
    mem, rr = _read_ratio(bare)
    assert "12,907" in read_ratio_display(rr)["B_max (MB/s)"].tolist()
    passed = read_ratio_sentences(rr.assign(b_max_gate_failed=False), None)[0]
    assert "B_max 15,549 MB/s at 100 %" in passed


def _validity(ds):
    return validity_table(mlc=ds.mlc, headline=syn.headline_long(ds), sysinfo={h.name: h.sysinfo for h in ds.hosts})


def _llc(ds, **settings) -> dict:
    sysinfo = {h.name: h.sysinfo for h in ds.hosts}
    return buffer_llc_rows(ds.mlc.assign(**settings) if settings else ds.mlc, sysinfo)[0]


def test_the_memory_buffer_is_checked_against_the_last_level_cache_on_both_sides(loop, bare):
    """R-loop 1.1, R-bare M-12, R-1cpu M12, S6-bare M-9: every memory run used a 256 MiB buffer (-b262144) under the
    kernel's 480 MiB last-level cache (caches.L3_bytes 503,316,480), and no check said so. Now memory_buffer_llc
    fails at 0.533x; a 2 GiB buffer (4.27x) passes, 1 GiB (2.13x) warns, one larger than the usable memory fails on
    the high side, and without a cache size it is not checked."""
    for ds in (loop, bare):
        r = _llc(ds)
        assert r["status"] == "fail" and round(r["value"], 3) == 0.533 and r["section"] == "memory"
        assert r["evidence"].startswith("256 MiB buffer, 0.533x the kernel's 480 MiB last-level cache")
        assert r["consequence"].startswith("256 MiB buffer, within the 480 MiB last-level cache: not shown to be DRAM")
    assert _llc(loop, buffer_kib=2 << 20)["status"] == "pass"
    assert _llc(loop, buffer_kib=1 << 20)["status"] == "warn"
    high = _llc(loop, buffer_kib=30 << 20)
    assert high["status"] == "fail" and "% of the usable" in high["evidence"] and "swap" in high["consequence"]
    none = buffer_llc_rows(loop.mlc, {})[0]
    assert none["status"] == "unchecked" and "no last-level cache size known" in none["evidence"]


def test_a_failed_buffer_check_is_on_page_one_and_the_words_follow_it(loop, bare):
    """Page 1 names memory_buffer_llc among the failed checks; the headline says '256 MiB buffer, within the 480
    MiB last-level cache: not shown to be DRAM' instead of 'memory'; the read-ratio sentence no longer says 'DRAM
    reads'; the DRAM ceiling's best measured figure says it; a 2 GiB buffer keeps the words."""
    v = _validity(bare)
    assert any("`memory_buffer_llc`" in line for line in fp.check_names(v) if "Failed checks" in line)
    table = headline_evidence(syn.headline_long(bare), v)
    idle = table[table["quantity"].str.startswith("Idle")].iloc[0]
    assert idle["quantity"] == ("Idle mean latency (256 MiB buffer, within the 480 MiB last-level cache: not shown "
                                "to be DRAM) (ns)")
    assert idle["trust"] == "not valid (memory_buffer_llc)"  # S7-bare M-10: a failed check's finding is not stated
    assert idle["value"].startswith("withheld: memory_buffer_llc failed")
    mem, rr = _read_ratio(bare)
    said = read_ratio_sentences(rr.assign(b_max_gate_failed=False), None, v)[0]
    assert "DRAM reads" not in said and "not shown to be DRAM" in said
    use = pd.DataFrame([{"host": "vm", "what": "DRAM peak", "ceiling": None, "how": "", "reason": "unknown",
                         "measured": 21822.8, "measured_as": "peak injection, stream-triad", "pct_of_ceiling": None}])
    assert "not shown to be DRAM" in ceilings_display(use, v)["best measured (MB/s, whole-run mean)"].iloc[0]  # S11-bare 9: the header says what kind of figure
    ok = validity_table(mlc=bare.mlc.assign(buffer_kib=2 << 20), sysinfo={h.name: h.sysinfo for h in bare.hosts})
    assert headline_evidence(syn.headline_long(bare), ok)["quantity"].iloc[0] == "Idle memory mean latency (ns)"
    assert "DRAM reads" in read_ratio_sentences(rr.assign(b_max_gate_failed=False), None, ok)[0]
    assert "not shown" not in ceilings_display(use, ok)["best measured (MB/s, whole-run mean)"].iloc[0]


def test_no_idle_or_bandwidth_runs_point_to_the_hierarchy_that_ran():
    """R-1cpu M12: '§4.3 No memory measurement in this data' beside §4.5's 92 working-set rows."""
    assert "§4.5" in no_memory_figures_sentence(pd.DataFrame({"level": ["L1"]}))
    assert "§4.5" not in no_memory_figures_sentence(None)
    assert "No memory measurement" not in no_memory_figures_sentence(None)


def test_the_page_walk_sentence_does_not_call_the_huge_page_latency_dram():
    """The huge-page idle latency was 'the DRAM latency' whatever the buffer (R-bare M-12: 168.7 ns of a 256 MiB
    buffer within the 480 MiB cache); the sentence now leaves that to memory_buffer_llc."""
    rows = pd.read_csv(Path(__file__).parent / "data" / "review-s5" / "mlc-idle-loop328.csv")
    said = page_walk_text(rows.assign(gate="passed", gate_detail="", latency_ns=[160.0, 190.0]))
    assert "page-walk cost" in said and "DRAM latency" not in said and "memory_buffer_llc" in said


def test_every_plateau_is_a_level_and_a_rising_tail_is_none():
    """S9-bare M-8, R-loop 10.1 (fifth read): the change-point search missed bare's 35-39 ns plateau at 4-11.3 MiB
    (L2 then 'ended' at 2.6 MiB, where the curve crossed the geometric mean of 4.53 and 151 ns, the wrong
    neighbour) and read 'level 3 151 ns' from the two sizes 148 and 154 ns of a tail still rising (101 ns at 32
    MiB); on loop it missed the 40-48 ns shoulder at 2.9-11.6 MiB and the 140-167 ns plateau at 22.6-64 MiB. Now
    every run of >= 3 sizes over an octave within 1.25x is a level, and a level ends where the curve leaves it."""
    ws = pd.read_csv(DATA / "working-set-2m.csv")

    def found(run):
        c = ws[ws["run"] == run]
        sizes, lat = c["buffer_bytes"].to_numpy(), c["lat_ns"].to_numpy()
        levels = find_levels(sizes, lat)
        ends = level_ends(sizes, lat, levels)
        return [(sizes[lv.first] / 2**20, sizes[lv.last] / 2**20, round(lv.latency_ns, 1)) for lv in levels], ends

    bare, ends = found("s9bare")
    assert [lv[2] for lv in bare] == [1.4, 4.5, 36.4]                     # no level from 148-154 ns
    assert bare[1][1] == 1.0 and 1.0 < ends[1] / 2**20 < 1.45            # L2: on it to 1 MiB, off by 1.45 MiB (10.1 ns)
    assert bare[2][:2] == (4.0, 16.0) and 16 < ends[2] / 2**20 < 22.7
    loop, ends = found("loop328")
    assert [lv[2] for lv in loop][:2] == [1.4, 4.5] and 40 < loop[2][2] < 48 and loop[2][0] > 2.8
    assert 150 < loop[3][2] < 167 and loop[3][1] == 64 and ends[3] is None  # the curve ends on it: end not reached
    c = ws[ws["run"] == "s9bare"]
    flat = c["lat_ns"].to_numpy().copy()
    flat[c["buffer_bytes"].to_numpy() >= 32 << 20] = 160.0               # the other side: a tail that levels off
    assert round(find_levels(c["buffer_bytes"].to_numpy(), flat)[-1].latency_ns) == 160


def test_a_curve_rising_past_its_last_level_names_the_next_level_not_reached():
    """S9-bare M-8: 'level 3 151 ns ... the curve ends on this level' from a tail still rising; now the table has
    the 36.4 ns level ending where the curve leaves it and a row 'rising past the last level' (154 ns at 64 MiB,
    'the next level not reached'); no row says the curve ends on a level."""
    c = pd.read_csv(DATA / "working-set-2m.csv").query("run == 's9bare'")
    ws = c.assign(pattern="random", n=1, latency_ns=c["lat_ns"], lat_p50_ns=c["lat_ns"], lat_p90_ns=None,
                  lat_p99_ns=None, clocks=None, batch_accesses=256, llc_bytes=None, cpu_share=1.0)
    t = h.cache_levels(ws, {"L1d_bytes": 49152, "L2_bytes": 2097152, "L3_bytes": 503316480}).set_index("level")
    assert not any("the curve ends on this level" in str(n) for n in t["note"])
    rise = t.loc[h.RISE_LEVEL]
    assert round(rise["latency_ns"]) == 154 and "the next level not reached" in rise["note"]
    assert round(t.loc["L3", "latency_ns"], 1) == 36.4 and t.loc["L3", "agrees"] is False
    assert "off it by 22.6 MiB (79.1 ns)" in t.loc["L3", "note"] and "a factor 21.2" in t.loc["L3", "note"]


def test_every_bandwidth_measurement_is_in_the_table_named_with_its_traffic_and_threads(loop, bare):
    """R-loop 2.2, R-bare M-10, S6-bare M-8: the table headed 'every measurement' left out the bandwidth matrix
    (bare: read-only, 2 load threads, 28,288 MB/s; loop 14,065) and 'Peak memory bandwidth' (bare 21,823: a 1-thread
    stream-triad) did not say which measurements it is the highest of. Now the matrix's local entry is listed, each
    bandwidth names its traffic and load threads, the headline is the highest of the bandwidth sections (peak
    injection, max bandwidth, the matrix) and every row says its gate (S6-bare C-11)."""
    shown = memory_figures_display(mf.memory_figures(bare.mlc)).set_index("measured as")
    assert shown.loc["matrix, local node 0, read-only, 2 load threads", "value [95 % interval]"] == "28,288"
    assert shown.loc["matrix, local node 0, read-only, 2 load threads", "used as"] == "the headline"
    assert shown.loc[f"peak injection, {mf.BYTES_COUNTED['stream-triad']}, 1 load thread", "used as"] == ""
    assert shown.loc["loaded, lightest load (delay 20000, 1:1)", "gate"] == "failed: bandwidth_unstable"
    assert shown.loc["idle, huge pages (2M (THP, 100 %))", "gate"] == "passed"
    looped = memory_figures_display(mf.memory_figures(loop.mlc)).set_index("measured as")
    assert looped.loc["matrix, local node 0, read-only, 2 load threads", "value [95 % interval]"] == "14,065"
    assert looped.loc[f"peak injection, {mf.BYTES_COUNTED['stream-triad']}, 1 load thread", "used as"] == "the headline"  # 20,655 > 14,065
    head = syn.headline_long(bare).set_index("key").loc["peak_bw_MBps"]
    assert head["value"] == 28288.1 and head["detail"].endswith("matrix, local node 0, read-only, 2 load threads")


def test_a_headline_from_a_section_the_gate_does_not_judge_says_so(bare):
    """bare's peak bandwidth now comes from the bandwidth matrix (not_evaluated:section): its trust names the
    unchecked gate; a judged one (loop's peak injection, passed) does not."""
    ok = validity_table(mlc=bare.mlc.assign(buffer_kib=2 << 20), sysinfo={h.name: h.sysinfo for h in bare.hosts})
    assert "memory_gate not checked for its section" in _headline(bare, "Peak memory", ok)["trust"]
    judged = bare.mlc[bare.mlc["test"] != "bandwidth_matrix"]
    table = headline_evidence(syn.headline_long(replace(bare, mlc=judged)), ok)
    assert "memory_gate not checked" not in table[table["quantity"].str.startswith("Peak")].iloc[0]["trust"]


def _ws(ghz: dict) -> pd.DataFrame:
    """Working-set rows of one host, one per (pages, pattern) run, with loadlat's clocks at `ghz` GHz."""
    return pd.DataFrame([{"host": "vm", "pages": p, "pattern": pat, "buffer_bytes": 4096.0, "latency_ns": 10.0,
                          "clocks": 10.0 * g} for (p, pat), g in ghz.items()])


def test_clocks_are_stated_only_from_a_calibration_that_held():
    """S6-bare C-14: the clocks column multiplied by one run's calibration (3.97 GHz) while bare's working-set runs
    were calibrated 3.57 (random, 4K), 3.97 (random, 2M) and 3.99 GHz (seq64, 4K). Now the clocks are not stated
    and the sentence says why; calibrations within 5 % give the clocks with the GHz in the column's name."""
    moved = _ws({("2M (THP, 100 %)", "random"): 3.967, ("4K", "random"): 3.570, ("4K", "seq64"): 3.989})
    ghz, note = _clock(moved[moved["pattern"] == "random"].iloc[:1], moved)
    assert ghz is None and note.startswith("not stated: loadlat's core-clock calibration moved 3.57-3.99 GHz")
    held = _ws({("2M (THP, 100 %)", "random"): 3.967, ("4K", "random"): 3.950, ("4K", "seq64"): 3.989})
    ghz, note = _clock(held.iloc[:1], held)
    assert round(ghz, 3) == 3.967 and note == "at 3.97 GHz (loadlat's calibration of its run)"
    levels = pd.DataFrame([{"host": "vm", "level": "L1", "latency_ns": 1.29, "clocks": None, "ends_at_bytes": 54e3,
                            "kernel_bytes": 49152, "agrees": True, "note": "", "clock_note": "not stated: x"}])
    assert "clocks" not in cache_levels_display(levels).columns
    stated = levels.assign(clocks=5.12, clock_note="at 3.97 GHz (loadlat's calibration of its run)")
    assert "clocks (at 3.97 GHz (loadlat's calibration of its run))" in cache_levels_display(stated).columns


def test_the_memory_figure_promises_only_what_it_draws_and_marks_gate_failed_points(loop, bare):
    """R-loop 9.2, S6-bare C-11: Figure 15's caption promised 'plateau points outlined, hook points hollow, the
    open-queue model dashed over its fit range' over curves with none of them, and 13 of bare's 18 points (all 18
    of loop's) failed a gate and were drawn unmarked. Now the caption names what is drawn and what is not, and a ×
    marks each gate-failed point (bare: 15 of 18 curve points with a failed run)."""
    for ds, bad in ((loop, 18), (bare, 15)):
        curves = curve_table(ds.mlc)
        _, fits = memory_fit_table(curves)
        panel = figs.memory_panels(curves)[0]
        caption = figs.memory_caption(curves, fits, panel)
        assert "plateau points outlined" not in caption and "no plateau, hook or model in these curves" in caption
        assert "× over a point whose run failed" in caption
        fig = figs.memory_figure(curves, fits, panel)
        crosses = [ln for ln in fig.axes[0].lines if ln.get_marker() == "x"]
        assert len(crosses) == 3 and sum(len(ln.get_xdata()) for ln in crosses) == bad
    passed = curve_table(bare.mlc.assign(gate="passed"))
    assert "×" not in figs.memory_caption(passed, memory_fit_table(passed)[1], figs.memory_panels(passed)[0])


def test_a_kernel_level_no_level_matched_is_named_without_a_latency():
    """With the climbing tail no level (above), loop's and bare's kernel L3 (480 MiB) matched no level and the
    sentence read 'L3 – ns. L3 ends at –, not at the kernel's 480 MiB'; it now names the kernel's size alone, and
    says the latencies are batch medians (R-loop 10.3: 'mean latency per access')."""
    levels = pd.DataFrame([
        {"host": "vm", "level": "L1", "latency_ns": 1.29, "clocks": None, "ends_at_bytes": 54e3, "kernel_bytes": 49152,
         "agrees": True, "note": "", "clock_note": ""},
        {"host": "vm", "level": "L3", "latency_ns": None, "clocks": None, "ends_at_bytes": None,
         "kernel_bytes": 503316480, "agrees": False, "note": "no level of the curve matched to it: no step near "
         "480.0 MiB (random chain, 2M (THP, 100 %))", "clock_note": ""}])
    said = hierarchy_sentences(levels, None)[0]
    assert "– ns" not in said and "ends at –" not in said and "median latency per access (batch medians) L1 1.29" in said
    assert "L3 (the kernel's 480 MiB): no level of the curve matched to it" in said


def test_a_matrix_headline_without_an_interval_gives_the_sections_reason(bare):
    """bare's peak bandwidth (the matrix, loadlat v0.5) read 'no interval (one run; its sub-windows: no
    sub-windows (loadlat before v0.3))': the section is measured in one window, whatever loadlat's version."""
    head = syn.headline_long(bare).set_index("key").loc["peak_bw_MBps"]
    assert head["ci_note"] == "no sub-windows (a section loadlat measures in one window)"


def test_the_conclusion_says_whose_latency_it_is(bare):
    """The conclusion said 'memory answers a lone access in 169 ns' of the 256 MiB buffer within the 480 MiB LLC;
    memory_buffer_llc failed there, so (S7-bare M-10: a failed check's finding is not stated) it says nothing of
    memory; with a 2 GiB buffer 'memory answers' again."""
    sysinfo = {h.name: h.sysinfo for h in bare.hosts}
    for kib, said in ((None, ""), (2 << 20, "memory answers a lone access in 169 ns")):
        mlc = bare.mlc if kib is None else bare.mlc.assign(buffer_kib=kib)
        S = SimpleNamespace(qd=None, headline=syn.headline_long(bare), validity=validity_table(mlc=mlc, sysinfo=sysinfo))
        text = fp.conclusion(S, "vm")
        assert (said in text) if said else "answers a lone access" not in text


def test_what_to_run_next_names_the_buffer_when_it_sat_within_the_cache(bare):
    sysinfo = {h.name: h.sysinfo for h in bare.hosts}
    for kib, named in ((None, True), (2 << 20, False)):
        mlc = bare.mlc if kib is None else bare.mlc.assign(buffer_kib=kib)
        S = SimpleNamespace(qd=None, headline=syn.headline_long(bare), validity=validity_table(mlc=mlc, sysinfo=sysinfo),
                            dataset=bare)
        said = " ".join(fp.next_steps(S, "vm", "standard"))
        assert ("a memory buffer of 4x the last-level cache or more" in said) == named


def test_a_memory_figure_of_failed_points_says_so_and_shows_every_point(loop, bare):
    """R-def p8, S9-bare C-8: Figure 14 drew only gate-failed points (loop: all 18) with a caption that said
    nothing of it, and the highest point (write-only-nt 323 ns on bare) sat cut at the top of the frame. Now the
    caption says every point failed and no finding is read from them, and the latency axis reaches above the
    highest point. The other side: bare, 15 of 18 failed, says nothing more."""
    for ds, every in ((loop, True), (bare, False)):
        curves = curve_table(ds.mlc)
        _, fits = memory_fit_table(curves)
        panel = figs.memory_panels(curves)[0]
        said = "every point drawn failed memstor's quality gate: no finding is read from them"
        assert (said in figs.memory_caption(curves, fits, panel)) is every
        assert figs.panel_all_failed(curves, panel) is every  # the PDF names such a figure and leaves it to the HTML
        caption = figs.memory_figure_caption(curves, fits, panel)
        assert caption.startswith("Memory loaded latency (ns) against bandwidth (GB/s)") and (said in caption) is every
        ax = figs.memory_figure(curves, fits, panel).axes[0]
        assert ax.get_ylim()[1] >= 1.08 * curves["latency_ns"].max() - 1e-9
