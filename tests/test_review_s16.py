"""The fifteenth independent reads (session 16, issue 38): statements a reader found its own report's tables
contradict or mislead on, tested on both sides (the reviewed runs' rows where the statement came from data)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from memstor.analysis.dataset import HostData
from memstor.analysis.spread import Spread
from memstor.report.text import first_page as fp
from memstor.report.text.queueing import _fit_contradicted, fit_sentence

H = "vm"
S12 = Path(__file__).resolve().parent / "data" / "review-s12"
DATA = Path(__file__).resolve().parent / "data" / "review-s16"


def _quick_advice(kinds: dict) -> str:
    ds = SimpleNamespace(hosts=[HostData(name=H, tables=[], kinds=kinds, sysinfo={})])
    S = SimpleNamespace(dataset=ds, validity=pd.DataFrame(columns=["host", "check", "status"]))
    return fp.next_steps(S, H, "quick")[0]


def test_the_rerun_advice_names_the_pts_tests_the_standard_profile_skips():
    """S18-bare 2: 'Rerun with the standard profile for intervals on every stationary storage point' on a run
    whose DIRTH and CBW points the standard profile does not run at all (params/standard.yaml skips the PTS tests).
    The other side: a run without PTS tests keeps the plain advice."""
    pts = _quick_advice({"fio-queue-depth": "fio", "fio-pts-cbw": "fio", "fio-pts-dirth": "fio"})
    assert pts.startswith("Rerun with the standard profile (`make all`) for intervals on every stationary storage "
                          "point of the experiments it runs (it skips CBW and DIRTH, which take hours under it: "
                          "`make all PROFILE=full` runs them) (a PTS-recovery")
    plain = _quick_advice({"fio-queue-depth": "fio"})
    assert "it skips" not in plain and "every stationary storage point (a PTS-recovery" in plain


def test_the_spread_words_say_they_count_fresh_runs_only():
    """S18-bare 1: 'the run-to-run spread measured here, 1.20×' beside DIRTH reruns 1.29× apart, which it does not
    count (they ran after preconditioning); the words now say whose spread it is. The assumed side is unchanged."""
    measured = Spread(measured=1.20, how="4 KiB randread QD32×1: 57,869 and 69,472 IOPS")
    assert measured.brief() == measured.short() == "the largest gap between two fresh runs of one job measured here, 1.20×"
    assert Spread().brief() == "the 10 % assumed for single fresh runs"


def test_page_one_says_a_multi_job_point_beat_the_one_job_fit():
    """S18-1cpu 1: 'The knee fit contradicts its own data (randwrite: ... X_best 53,507 IOPS (at QD32x4) ...)'
    where the one-job fit's own points lay under its band and only the 4-job point, outside the fitted range, was
    above it. A one-job point beyond the band (or the fit far above every point) still contradicts its own data."""
    four = ("randwrite: fitted X_max 41,020 ± 2,310 IOPS (SE); highest measured 53,507 IOPS (at QD32x4), 30.4 % "
            "above the fit and beyond its 1.96 SE")
    assert _fit_contradicted(four) == ("The knee fit's ceiling is beaten by a point with 4 jobs, outside the "
                                          "one-job sweep it was fitted to")
    one = four.replace("QD32x4", "QD64x1")
    assert _fit_contradicted(one) == "The knee fit contradicts its own data"
    far = "randread: fitted X_max 900,000 ± 1,000 IOPS (SE); highest measured 60,000 IOPS: the fit puts the ceiling"
    assert _fit_contradicted(far) == "The knee fit contradicts its own data"


def test_the_dram_ceilings_best_measured_is_a_measured_bandwidth_not_a_derived_one():
    """S18-1cpu 4: the physical-ceilings row's 'best measured (MB/s, whole-run mean)' was an MLP run's bandwidth by
    Little's law (chains x 64 B / latency), derived, not a transfer rate measured over a run. A measured figure now
    stands there and the higher derived one is named beside it; with nothing measured directly (no headline, no
    curve) the derived figure is the only one and says how it was got."""
    from memstor.analysis import ceilings

    mlp, head = pd.read_csv(S12 / "mlp-loop.csv").assign(cpu_share=0.99), pd.read_csv(S12 / "headline-loop.csv")
    ceil = pd.DataFrame([{"host": "vm-loop328", "what": ceilings.DRAM, "ceiling": 51_200.0, "how": "x", "reason": ""}])
    row = ceilings.ceiling_use(ceil, head, mlp=mlp).iloc[0]
    assert round(row["measured"]) == 6632 and "higher, derived, not measured: 8,209 MB/s" in row["measured_as"]
    alone = ceilings.ceiling_use(ceil, head.iloc[0:0], mlp=mlp).iloc[0]
    assert round(alone["measured"]) == 8209 and alone["measured_as"] == ("derived, not measured: MLP run, 2 threads x 16 chains, by Little's law")  # S20-cpu1 6
    lower = ceilings.ceiling_use(ceil, head, mlp=mlp.assign(bandwidth_MBps=1000.0)).iloc[0]
    assert round(lower["measured"]) == 6632 and "derived" not in lower["measured_as"]


def test_the_qd1_caveat_names_the_runs_that_measured_more_beside_those_that_measured_less():
    """S18-bare 3: the QD1 headline's caveat named only the runs at one in flight that measured less (DIRTH's
    T1Q1), while CBW's T1Q1 measured more: one-sided. The 1-CPU run's own rows (review-s12): 209 µs with DIRTH's
    92.7 and 163 and CBW's 168 below it; moved to 260 µs, CBW's run is now more. The other sides: nothing below
    keeps the trust unchanged even with runs above (heavier mixes are slower, as expected)."""
    from memstor.report.text.headline_trust import qd1_caveat

    runs = pd.read_csv(S12 / "summary-1cpu.csv")
    cbw = (runs["experiment"] == "fio-pts-cbw") & (runs["iodepth"] == 1) & (runs["direction"] == "read")
    moved = runs.assign(lat_mean_us=runs["lat_mean_us"].mask(cbw, 260.0))
    said = qd1_caveat("sound (its checks pass)", moved, "vm", "qd1_randread_lat_us", 209.349)
    assert said == ("with caveats (other runs with one I/O in flight measured 1.28-2.26× lower means: 92.7-163 µs (fio-pts-dirth: "
                    "the reads of 8 KiB, 65 % reads), and its own median completion is 70.1 µs: its mean rests on its "
                    "tail; others 1.24× higher means: 260 µs (fio-pts-cbw: the reads of a mix of block sizes, 40 % "
                    "reads))"), said  # S19-bare 9: which runs, not 'other blocks or mixes'
    assert "higher means" not in qd1_caveat("sound (its checks pass)", runs, "vm", "qd1_randread_lat_us", 209.349)
    assert qd1_caveat("sound (its checks pass)", moved, "vm", "qd1_randread_lat_us", 90.0) == "sound (its checks pass)"


def test_a_spec_row_whose_block_size_the_sweeps_lacked_names_the_write_saturation_run_that_wrote_it():
    """S18-loop 1 (S17-loop 2), S19-bare 2: the spec table's sequential write was the sweeps' 1 MiB QD32 point, 'the spec's
    128 KiB and 128 outstanding I/Os are not in them', while write saturation wrote 128 KiB sequentially at QD32x4
    over the whole device (1,316 MB/s) with no cliff. The selection and the PDF's short cell now name that run. The
    other sides: no such run (the bare run's 128 KiB run measured nothing), or another block size, adds nothing."""
    from memstor.analysis.wsat import no_cliff_words
    from memstor.report.text.spec import _short_selection

    runs = pd.read_csv(Path(__file__).resolve().parent / "data" / "review-s14" / "wsat-bare14.csv")
    assert no_cliff_words(runs, "vm", "write", 131072) == ""  # its 128 KiB run has no level (NaN)
    held = runs.assign(sustained_MBps=runs["sustained_MBps"].fillna(1316.0), span="full_device", caveat="")
    words = no_cliff_words(held, "vm", "write", 131072)
    assert words == ("; the write-saturation run wrote 128 KiB (QD32x4) over the whole device at 1,316 MB/s (its one "
                     "level: the mean of its whole seconds) with no cliff, another drive state"), words
    assert no_cliff_words(held, "vm", "write", 1 << 20) == ""
    assert no_cliff_words(held.assign(cliffs=1), "vm", "write", 131072) == ""  # compared itself (_wsat_choice)
    # S19-bare 2: a run too short to tell a cliff from noise (wsat_series' caveat; cliffs not counted) is no 'no cliff'
    short = held.assign(caveat="2 whole seconds of 3 per-second values (fio's runtime 2.08 s): too short to tell")
    assert no_cliff_words(short, "vm", "write", 131072) == ""
    assert no_cliff_words(held.assign(cliffs=float("nan")), "vm", "write", 131072) == ""
    assert no_cliff_words(held.assign(caveat=""), "vm", "write", 131072) == words
    how = ("nearest point of the sweeps (QD32x1, io_uring, O_DIRECT, fio-block-size, n=1, bs 1 MiB; the spec's 128 KiB "
           "and 128 outstanding I/Os are not in them)")
    assert _short_selection(how + words) == "nearest sweep point (WSAT's 128 KiB run: 1,316 MB/s, no cliff)"
    assert _short_selection(how) == "nearest sweep point"


def test_page_ones_knee_sentence_names_every_workload_whose_fit_failed():
    """S18 (cosmetic, page 2): the knee sentence gave one workload's evidence and did not name the other whose fit
    failed too. The other side: one workload (or two checks of one) names nothing more."""
    read = "randread: fitted X_max 60,000 ± 500 IOPS (SE); highest measured 75,211 IOPS (at QD32x4), 25 % above"
    write = "randwrite: fitted X_max 41,020 ± 2,310 IOPS (SE); highest measured 53,507 IOPS (at QD32x4), 30.4 % above"
    lat = "randread: fitted R_min -50 ± 3 µs (SE); measured at the smallest outstanding I/O 70 µs"
    knees = pd.DataFrame({"N_star_bound": [12.0, 10.0]})
    both = fit_sentence([read, lat, write], knees)
    assert "(at QD32x4), 25 % above; randwrite's fit too); the measured bound is given instead (§4.2)." in both, both
    one = fit_sentence([read, lat], knees)
    assert "fit too" not in one and one.endswith("25 % above); the measured bound is given instead (§4.2).")
    assert fit_sentence([read], pd.DataFrame({"N_star_bound": [float("nan")]})).endswith(
        "the measured bound does not apply either (§4.2).")


def test_the_memory_gates_median_says_it_is_the_failing_values():
    """S18 (cosmetic): 'Memory: 17 of 18 loaded_latency values fail 'bandwidth_unstable'; median sub-window bandwidth
    spread 20.4 %' read as the median of all 18; it is the failing values' median, and now says so. The passing
    value's own spread is named beside it (within this bound), as before."""
    from memstor.analysis.validity.memory import _reason_row

    g = pd.DataFrame({"bandwidth_spread_pct": [float(v) for v in range(8, 25)] + [3.0],
                      "gate_detail": ["bandwidth spread 9 % >= 5 %"] * 17 + [""]})
    bad = g.iloc[:17]
    r = _reason_row("vm", "loaded_latency", bad, "bandwidth_unstable", 17, 18, g)
    assert r["evidence"].startswith("17 of 18 loaded_latency values fail 'bandwidth_unstable'; their median "
                                    "sub-window bandwidth spread 16.0 % against the gate's 5.00 %: "), r["evidence"]
    assert r["evidence"].endswith("1 is within this bound (sub-window bandwidth spread 3.00 %)")
    few = _reason_row("vm", "loaded_latency", bad.iloc[:2], "bandwidth_unstable", 2, 18, g)
    assert "; their median sub-window bandwidth spread 8.50 %" in few["evidence"] and "(machine)" not in few["subject"]


def test_the_hir_and_xsr_captions_promise_intervals_only_where_a_cell_has_one():
    """S18 (cosmetic, HTML): 'XSR: ... (MB/s, 95 % intervals)' and 'HIR: ... (95 % intervals)' above tables of the
    quick profile's short runs in which no cell had an interval (the bare run's XSR table, review-s15). The other
    side: a level with an interval keeps the promise."""
    from memstor.report.text.pts import hir_caption, xsr_caption

    xsr = pd.read_csv(Path(__file__).resolve().parent / "data" / "review-s15" / "xsr-bare14.csv")
    assert "no 95 % interval" in xsr_caption(xsr) and "MB/s, 95 % intervals" not in xsr_caption(xsr)
    assert "(MB/s, 95 % intervals)" in xsr_caption(xsr.assign(to_level_MBps_ci_low=[900.0, None]))
    hir = pd.DataFrame({"iops_ci_low": [None, None], "recovery_ratio_ci_low": [None, None]})
    assert hir_caption(hir).endswith("(short segments: no 95 % interval)")
    assert hir_caption(hir.assign(iops_ci_low=[41_000.0, None])).endswith("(95 % intervals)")


def test_a_long_no_interval_reason_of_one_headline_goes_below_the_table():
    """Session 16's bare quick PDF ran to 11 pages: the after-preconditioning row's reason ('one run: the average of
    its window's rounds, not repetitions; ...', 150 characters) took seven lines of the value column. A reason over
    LONG_REASON characters is now said below the table even for one value; a short one stays in its cell."""
    long = ("one run: the average of its window's rounds, not repetitions; their excursions (§3) are within that run "
            "and bound no spread between runs, which §3's other experiments show")
    table = pd.DataFrame({"quantity": ["a", "b"], "value": [f"75,096 — no interval ({long})",
                                                             "79.9 — no interval (n = 1)"]})
    out, note = fp.factor_reasons(table)
    assert list(out["value"]) == ["75,096 — no interval (a)", "79.9 — no interval (n = 1)"]
    assert note == f"Note (a): {long}."
    short, none = fp.factor_reasons(table.tail(1))
    assert short.equals(table.tail(1)) and none == ""


def test_a_closed_run_beside_the_sweep_is_never_an_open_loops_offered_rate():
    """S19-bare 1: page 2's finding called ioarrive's offered rate u70 (79,092 IOPS, open_loop False, 'QD4096x1' from
    its cap) 'fio-load-latency's closed run' and set a mixed-load cell (22,668 IOPS, offered) beside it as the same
    job. The bare run's own rows (review-s16): the closed run named now is fio-rw-ratio's QD32x1, and no open loop's
    point is named; fio's latency_target run (lt-, closed) still counts."""
    from memstor.report.text.queueing import fewer_in_flight

    p = pd.read_csv(DATA / "summary-bare16.csv")
    sweep = p[(p["experiment"] == "fio-queue-depth") & (p["rw"] == "randread") & (p["numjobs"] == 1)]
    best = sweep.loc[sweep["iops"].idxmax()]
    said = fewer_in_flight(p, "vm", "randread", best)
    assert said.startswith("; fio-rw-ratio's closed run (QD32x1) measured 81,848 IOPS"), said
    assert "ioarrive" not in said and "mixed-load-map" not in said and "QD4096" not in said
    u70 = p["point"].astype(str).str.startswith("randread-bs4k-u70-ioarrive")
    lt = p.assign(point=p["point"].mask(u70, "lt-randread-bs4k-qd32x1-rep1"), iodepth=p["iodepth"].mask(u70, 32),
                  open_loop_held=p["open_loop_held"].mask(u70, float("nan")))
    assert "fio-load-latency's closed run (1 jobs, fio latency_target searching up to QD32" in fewer_in_flight(
        lt, "vm", "randread", best)


def test_a_bound_within_a_withheld_fits_interval_lends_the_fit_no_support():
    """S19-bare 3: 'N* ≥ 8.4 ..., within the withheld fit's 95 % interval (N* 7.91): the bound does not reject the fit'
    while knee_located and knee_plateau had failed for randwrite (the bare run's knee table, review-s16). It now
    says the bound does not settle it and the fit stays withheld; where the sweep measured above the fit's ceiling,
    that rejects it (tests/test_review_s12)."""
    from memstor.report.text import queueing as q

    k = pd.read_csv(DATA / "knee-bare16.csv")
    said = " ".join(q.knee_sentences(k))
    assert "within the withheld fit's 95 % interval: the bound does not settle it; the fit stays withheld " \
           "for its failed checks" in said, said
    assert "does not reject the fit" not in said


def test_the_not_open_paragraph_denies_comparisons_only_for_the_rates_that_did_not_hold():
    """S19-bare 5: 'Not an open loop: randread (ioarrive). ... no SLO answer, queueing model or open-against-closed
    comparison is given' while the page before compared randread's one held rate (u30: 1,135 µs at 33,860 IOPS
    against QD4's 210 µs, 5.4x). It now says 'from the rates that did not hold', for either generator."""
    from memstor.report.text.loadgen import not_open_closing

    for gen in ("ioarrive", "fio"):
        said = not_open_closing(["randread"], gen)
        assert "open-against-closed comparison is given from the rates that did not hold." in said, said


def test_a_hir_ratio_shown_by_its_segments_says_so_where_its_interval_includes_one():
    """S19-bare 4: 'after 0.805 s idle (0.5 s planned) 0.893 [0.705, 1.08] × (83,252 IOPS)' was stated while its own
    interval includes 1; hir_recovery passed on the segments' ranks (every segment below the baseline rounds), which
    the PDF did not say; and the note 'baseline ±5.0 % (95 %) not in the ratio's interval' read as 'outside it'. The
    bare run's HIR table (review-s16): the basis is now said; a ratio whose interval excludes 1 is unchanged."""
    from memstor.report.text.pts import _hir_wait

    h = pd.read_csv(DATA / "hir-bare16.csv")
    said = _hir_wait(h.iloc[0])
    # S20-bare 1 (session 17): where that interval includes 1 no ratio is stated, the segments' basis is
    assert said == ("after 0.805 s idle (0.5 s planned) 83,252 [65,661, 100,844] IOPS — every segment below the "
                    "baseline rounds (segments 75,087-87,717 IOPS against the baseline rounds' 88,213-97,032), but the "
                    "ratio's 95 % interval [0.705, 1.08] includes 1: no recovery ratio is stated"), said
    tight = h.iloc[0].copy()
    tight["recovery_ratio_ci_high"] = 0.95
    assert _hir_wait(tight) == "after 0.805 s idle (0.5 s planned) 0.893 [0.705, 0.95] × (83,252 IOPS)"
    from memstor.analysis.pts_recovery import hir_table
    rows = pd.read_csv(Path(__file__).resolve().parent / "data" / "review-s15" / "fio-pts-hir-bare14.csv")
    notes = hir_table(rows)["note"].astype(str)
    assert notes.str.contains(r"baseline ±[\d.]+ % \(95 %\), not folded into the ratio's interval").all(), list(notes)


def test_a_tlb_cost_from_one_size_is_not_shown():
    """S19-bare 7: 'Page walks (4 KiB against 2 MiB pages) add 27.7 ns per access' rested on the sweep's last size
    alone (64 MiB; 'over 1 sizes from 64.0 MiB'), while the sizes past the L3 step gave 9.6-21.5 ns. The bare run's
    working set (review-s16): no cost now, and why. The other side: the recorded hierarchy (two sizes slower to the
    end) keeps its cost (tests/test_mem_hierarchy)."""
    from memstor.analysis.hierarchy import tlb_cost

    ws = pd.read_csv(DATA / "working_set-bare16.csv")
    out = tlb_cost(ws[ws["host"] == "vm"])
    assert out["cost_ns"] is None and round(out["at_largest_ns"], 1) == 27.7
    # S19-loop 2: the words name the scatter, not 'only at the largest size' (the loop run had 1.18x at 32 MiB too)
    assert out["note"] == ("not shown: 4 KiB pages not slower by > 10 % at 2 sizes or more in a row to the sweep's end "
                           "(64.0 MiB: 1.20×); single sizes, one run each, scatter 0.87× (32 KiB) to 3.16× (8,192 KiB), "
                           "4 KiB pages slower at 15 of 29 sizes; at each of the last 12 sizes in a row (1,448 KiB to 64.0 MiB: "
                           "1.03-3.16×), by > 10 % at 8 of them, not at 45.3 MiB (1.097×): a cost not established from "
                           "single runs"), out["note"]  # S21-bare 1: the run to the end named
    # S20-bare 2 (session 17): 'no page-walk cost the curves support' read as no cost; the count of slower sizes said


def test_the_steady_state_headline_names_hirs_window_where_it_met_the_rule_elsewhere():
    """S19-bare 8: '4K random write after preconditioning, steady state not shown 75,096' while HIR's preconditioning
    of 4 KiB random writes met the PTS window rule at 93,202 IOPS (pts_steady_state passed), said nowhere. The bare
    run's headline and checks (review-s16). The other sides: HIR's window failing, or within 10 %, adds nothing."""
    from memstor.report.text import headline_table as ht

    head, v = pd.read_csv(DATA / "headline-bare16.csv"), pd.read_csv(DATA / "validity-bare16.csv")
    table = pd.read_csv(DATA / "hir-bare16.csv")  # its baseline_iops: the window's mean (session 17: a column, not
    # the check's evidence text)

    def trust(validity, hir=table) -> str:
        t = ht.headline_evidence(head, validity, hir=hir).set_index("quantity")
        return t.loc[[q for q in t.index if "preconditioning" in q][0], "trust"]

    assert trust(v).endswith("; fio-pts-hir's preconditioning (its 4 KiB random writes) met the PTS window rule at "
                             "93,202 IOPS, 1.24× this)"), trust(v)
    hir = (v["check"] == "pts_steady_state") & (v["subject"] == "HIR preconditioning")
    assert "fio-pts-hir" not in trust(v.assign(status=v["status"].mask(hir, "fail")))
    assert "fio-pts-hir" not in trust(v, table.assign(baseline_iops=80_000.0))
    assert "fio-pts-hir" not in trust(v, None)


def test_a_mixed_load_cell_whose_generator_failed_its_cpu_check_did_not_hold():
    """S19-1cpu 1: the mixed-load section quoted its one held cell, 'held: 74,157 IOPS offered at read p99 4,342 µs',
    while load_generator_cpu had failed for the map (ioarrive at 92.8 % of the one usable CPU): its latency is the
    generator's. The 1-CPU run's cells (review-s16, the processed table as the dataset reads it): with the check
    failed no cell holds and no latency is quoted; without it the held cell stands."""
    from memstor.analysis import mixed_load
    from memstor.analysis.validity.gate import generator_failed

    cells = pd.read_csv(DATA / "mixed-load-map-cpu116.csv").assign(table="mixed-load-map", status="done")
    plain = mixed_load.map_tables(cells, [1000.0])["capacity"]["note"].iloc[0]
    assert plain.endswith("; held: 74,157 IOPS offered at read p99 4,342 µs, 4.34× the target"), plain
    v = pd.DataFrame([{"host": "vm", "check": "load_generator_cpu", "subject": "mixed-load-map (ioarrive)",
                       "status": "fail", "evidence": "ioarrive's busiest point used 92.8 % of the 1 usable CPUs"},
                      {"host": "vm", "check": "load_generator_cpu", "subject": "fio-load-latency (ioarrive)",
                       "status": "pass", "evidence": "x"}])
    failed = generator_failed(v, "mixed-load-map")
    assert failed == {"vm": "ioarrive's busiest point used 92.8 % of the 1 usable CPUs"}
    gated = mixed_load.map_tables(cells, [1000.0], failed)
    assert "held:" not in " ".join(gated["capacity"]["note"]) and not gated["mixed"]["open_loop"].map(bool).any()
    assert generator_failed(v.assign(status="pass"), "mixed-load-map") == {}
    assert generator_failed(v, "fio-load-latency") == {}


def test_the_knee_sentence_blames_job_count_only_where_no_one_job_run_beat_the_fit():
    """S19-1cpu 2: 'The knee fit's ceiling is beaten by a point with 4 jobs' while fio-rw-ratio's one-job QD32x1 write,
    81,811 IOPS, was above the fit's band (56,835 + 1.96 x 9,929 = 76,295) too. The 1-CPU run's rows (review-s16): the
    fit now 'contradicts its own data' and that run is named. The other side: the bare run's reads, where no one-job
    run reached the band (86,503 < 94,270), keep the job-count lead."""
    # S21-loop 1 (session 17): a one-job run above the band within the run-to-run gap is named, not 'contradicts'
    rw_ratio = "fio-rw-ratio, 1.07× its top, within the largest gap between two fresh runs of one write job measured here, 1.20× "
    for run, lead, tail, lift in (
            ("cpu116", "The knee fit's ceiling is beaten by a point with 4 jobs",
             f"; one-job runs are above its band too: 81,811 IOPS (QD32x1, {rw_ratio}(one pair))); ", 1.0),
            ("cpu116", "The knee fit contradicts its own data (randwrite:",  # a band's top beyond the gap's reach
             "; one-job runs are above its band too: 81,811 IOPS (QD32x1, fio-rw-ratio)); ", 0.8),
            ("bare16", "The knee fit's ceiling is beaten by a point with 4 jobs", "beyond its 1.96 SE); ", 1.0)):
        v, p = pd.read_csv(DATA / f"validity-{run}.csv"), pd.read_csv(DATA / f"summary-{run}.csv")
        bad = [f"{r['subject']}: {r['evidence']}" for _, r in v[v["check"].isin(["knee_ceiling", "knee_min_latency"])
                                                                & (v["status"] == "fail")].iterrows()]
        ceiling = v[(v["check"] == "knee_ceiling") & (v["status"] == "fail")]
        said = fit_sentence(bad, pd.read_csv(DATA / f"knee-{run}.csv"), p, "vm",
                            dict(zip(ceiling["subject"], ceiling["high"] * lift)))
        assert said.startswith(lead) and tail in said, said


def test_a_stated_knee_below_its_measured_bound_says_to_quote_the_bound():
    """S19-1cpu 3: 'N* fit 7.88 [3.33, 18.6]' beside the same row's 'N* ≥ 8.4' with nothing said. The 1-CPU run's knee
    table (review-s16): the sentence now says the fit's N* is below the bound and to quote the bound. The other side:
    a bound below the fit's N* adds nothing."""
    from memstor.report.text.queueing import knee_sentences

    k = pd.read_csv(DATA / "knee-cpu116.csv")
    read = knee_sentences(k)[0]
    assert "N* ≥ 8.4 (X_best is at most the ceiling; X_best is one run with 4 jobs: from the one-job sweep's most, " \
           "84,736 IOPS, N* ≥ 7.7). The fit's N* 7.88 is below this bound, which its interval still reaches, and above " \
           "the one-job sweep's, 7.7: quote N* ≥ 7.7 (≥ 8.4 if the many-job run is not high)." in read, read  # S19-loop 8
    one = knee_sentences(k.assign(X_max_meas_iops=k["X_best_iops"] * 0.99))[0]  # the one-job bound above the fit
    assert "reaches: quote N* ≥ 8.4." in one, one
    assert "quote N*" not in knee_sentences(k.assign(N_star_bound=5.0))[0]


def test_the_mix_verdict_says_which_parts_its_differences_rest_on():
    """S19-bare 6: '50 % reads 60,290 IOPS against 67,082 predicted (-10.1 %) — ... (the furthest, -15.9 %, is outside
    ±10 %)': -15.9 % came from fio-block-size's parts (86,503 and 61,225), not the ones the sentence names. The bare
    run's rows (review-s16): the sentence now gives the range and says other experiments' parts are in it."""
    from memstor.report.text.workloads import rw_mix_sentences

    said = rw_mix_sentences(pd.read_csv(DATA / "summary-bare16.csv"), "vm")[0]
    assert "the difference runs from -15.9 to -10.1 % with the parts other experiments measured too, outside ±10 %" \
        in said and "furthest" not in said, said


def test_the_dram_ceilings_best_measured_counts_the_peak_bandwidth_figures_that_passed_their_gate():
    """S19-loop 1: the ceilings row's best measured was an MLP figure (5,168 MB/s) while the read-only peak injection,
    7,672 MB/s, had passed the memory gate and was named nowhere; the headline's stream-triad (failed) and the
    unjudged matrix figure were not named as left out either. The loop run's memory figures (review-s16). The other
    side: with that figure failing too, it is named as left out, not best."""
    from memstor.analysis import ceilings

    figs = pd.read_csv(DATA / "memory_figures-loop16.csv")
    ceil = pd.DataFrame([{"host": "vm", "what": ceilings.DRAM, "ceiling": 51_200.0, "how": "x", "reason": ""}])
    head = pd.DataFrame(columns=["host", "key", "value", "detail", "gate"])
    row = ceilings.ceiling_use(ceil, head, figures=figs).iloc[0]
    assert round(row["measured"]) == 7672 and row["measured_as"].startswith(
        "peak injection, read-only, 1 load thread; higher, left out: 16,194 MB/s (peak injection, stream-triad, 1 load "
        "thread: memory gate failed: bandwidth_unstable); 13,647 MB/s (matrix, local node 0, read-only, 2 load "
        "threads: memory gate not judged)"), row["measured_as"]
    failing = figs.assign(gate=figs["gate"].mask(figs["gate"] == "passed", "failed: steal"))
    none = ceilings.ceiling_use(ceil, head, figures=failing).iloc[0]
    assert pd.isna(none["measured"]) and "7,672 MB/s (peak injection, read-only, 1 load thread: memory gate failed: " \
        "steal)" in none["measured_as"]


def test_a_device_without_storage_data_gets_no_storage_advice():
    """S19-loop 7: 'What to run next (vm)' gave the storage rerun and virtual-disk advice to the loop run's memory
    device, which has no storage data (its storage is the device vm-loop0). The other side: a device with fio tables
    keeps it."""
    def steps(kinds: dict) -> str:
        info = {"machine": {"virtualization": {"hypervisor": "KVM"}}}
        ds = SimpleNamespace(hosts=[HostData(name=H, tables=[], kinds=kinds, sysinfo=info)])
        return " ".join(fp.next_steps(SimpleNamespace(dataset=ds, validity=pd.DataFrame(
            columns=["host", "check", "status", "subject", "section"])), H, "quick"))

    memory = steps({"mlc-loaded-latency": "mlc"})
    assert memory.startswith("Rerun with the standard profile (`make all`) for intervals on every stationary point.")
    assert "storage" not in memory and "virtual disk" not in memory
    disk = steps({"fio-queue-depth": "fio"})
    assert "every stationary storage point" in disk and "hypervisor's virtual disk" in disk
