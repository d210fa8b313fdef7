"""The first page (memstor.report.text.first_page): with constructed data in which each precondition fails in
turn, page 1 flags it (findings, trust word, what to run next); with data where every precondition holds, it
carries no warning at all."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from memstor.analysis.dataset import HostData
from memstor.analysis.validity import validity_table
from memstor.analysis.validity.rows import FAIL, frame, row, unchecked
from memstor.report.text import first_page as fp
from memstor.report.text import headline_table as ht
from memstor.report.text.queueing import knee_words
from test_validity import H, knee_frame, load_frame, mlc_frame, points_frame, steady_fio, tables

WARNINGS = ("did not hold", "contradicts", "different numbers", "Memory:", "not valid", "with caveats")


def headline() -> pd.DataFrame:
    rows = [("idle_latency_ns", 95.0, None), ("peak_bw_MBps", 20_000.0, None),
            ("qd1_randread_lat_us", 45.0, (44.0, 46.0)), ("best_randread_iops", 98_000.0, (97_000.0, 99_000.0)),
            ("ss_randwrite_iops", 40_000.0, None)]
    return pd.DataFrame([{"host": H, "key": k, "value": v, "detail": "QD32x1, io_uring, O_DIRECT, n=1",
                          "value_ci_low": ci[0] if ci else None, "value_ci_high": ci[1] if ci else None,
                          "n": 1, "ci_method": "batch-means" if ci else ""} for k, v, ci in rows])


def qd() -> pd.DataFrame:
    n = [1, 4, 16, 64]
    x = [20_000.0, 60_000.0, 95_000.0, 98_000.0]
    return pd.DataFrame({"host": H, "rw": "randread", "outstanding_io": n, "iops": x,
                         "lat_mean_us": [1e6 * k / v for k, v in zip(n, x)], "in_sweep": True})


def synthesis(**over) -> SimpleNamespace:
    """What the first page reads of a Synthesis, every precondition holding unless `over` replaces inputs."""
    sysinfo = {"cpu": {"model": "Test CPU", "logical_cpus": 8}, "memory": {"total_bytes": 16 << 30},
               "caches": {"L3_bytes": 32 << 20},  # the memory runs' 1 GiB buffer is 32x it (memory_buffer_llc)
               "machine": {"virtualization": None, "wsl": None, "storage_path": None, "power": {"state": "on AC"},
                           "caveats": []}}
    t = tables(**over)
    t["sysinfo"] = {H: sysinfo}
    ds = SimpleNamespace(hosts=[HostData(name=H, tables=["fio.csv"], sysinfo=sysinfo)])
    return SimpleNamespace(headline=headline(), validity=validity_table(**t), qd=qd(), dataset=ds, wsat=None,
                           cache_levels=None)


def page(S, profile: str = "standard") -> str:
    parts = [*fp.machine_sentences(S.dataset), fp.profile_sentence(profile), fp.check_counts(S.validity),
             ht.headline_evidence(S.headline, S.validity).to_string(), *fp.findings(S, H),
             *fp.next_steps(S, H, profile)]
    return "\n".join(parts)


def test_all_preconditions_hold_gives_a_page_without_warnings():
    S = synthesis()
    text = page(S)
    assert not [w for w in WARNINGS if w in text], text
    assert "0 warn, 0 fail" in fp.check_counts(S.validity)
    shown = ht.headline_evidence(S.headline, S.validity)
    assert set(shown.loc[shown["quantity"] != "not measured", "trust"]) == {"sound (its checks pass)"}
    assert fp.next_steps(S, H, "standard") == ["Nothing to add: every check passed."]
    assert fp.findings(S, H)[0].startswith("4 KiB random reads along the queue-depth sweep: 20,000 IOPS with 1 I/O "
                                           "in flight")
    assert fp.validity_display(S.validity).empty


def test_each_failed_precondition_is_flagged_on_page_one():
    cases = {
        "open loop": ({"load": load_frame((True,) + (False,) * 5)}, "The open loop did not hold"),
        "knee": ({"knees": knee_frame(x_max_fit=90_000.0, r_min_fit=60.0)}, "The knee fit contradicts its own data"),
        "steady": ({"fio": steady_fio([40_000.0] * 3 + [4_000.0] * 3 + [100_000.0] * 5)},
                   "not valid (steady_trace_jump"),
        "disagreement": ({"points": points_frame(bs_iops=81_279.0, qd_iops=29_082.0)},
                         "The same I/O parameters measured in two experiments gave different numbers"),
        "memory gate": ({"mlc": mlc_frame(failing=19, total=20)}, "Memory: 19 of 20"),
    }
    for name, (over, expected) in cases.items():
        S = synthesis(**over)
        text = page(S)
        assert expected in text, f"{name}: {text}"
        assert "0 warn, 0 fail" not in fp.check_counts(S.validity), name
        assert not fp.validity_display(S.validity).empty, name
    disagree = page(synthesis(points=points_frame(bs_iops=81_279.0, qd_iops=29_082.0)))
    assert "81,279" in disagree and "29,082" in disagree
    best = ht.headline_evidence(synthesis(points=points_frame(bs_iops=81_279.0, qd_iops=29_082.0)).headline,
                                synthesis(points=points_frame(bs_iops=81_279.0, qd_iops=29_082.0)).validity)
    assert best.set_index("quantity").loc["Best 4K random read (IOPS)", "trust"] == "not valid (config_agreement)"
    assert best.set_index("quantity").loc["Best 4K random read (IOPS)", "value"] == (
        "withheld: config_agreement failed (numbers: report.html's 'Checks that did not pass')")  # S11-loop 13
    assert not best.set_index("quantity").loc["Idle memory mean latency (ns)", "value"].startswith("withheld")


def test_values_without_an_interval_say_why_and_unmeasured_ones_fold_into_one_line():
    table = ht.headline_evidence(headline(), None).set_index("quantity")
    assert table.loc["Idle memory mean latency (ns)", "value"].startswith("95.0 — no interval (n = 1")
    assert table.loc["Best 4K random read (IOPS)", "value"] == "98,000 ± 1,000 (95 %, batch-means)"
    assert "sequential read" in table.loc["not measured", "value"]


def test_the_machine_and_the_profile_are_named():
    S = synthesis()
    S.dataset.hosts[0].sysinfo["machine"]["caveats"] = ["a virtual machine (KVM): its CPUs, memory and disks are "
                                                        "the hypervisor's"]
    S.dataset.hosts[0].sysinfo["machine"]["virtualization"] = {"hypervisor": "KVM"}
    assert "Note: a virtual machine (KVM)" in fp.machine_sentences(S.dataset)[0]
    assert any("hypervisor's virtual disk" in s for s in fp.next_steps(S, H, "quick"))
    assert "n = 1, a few seconds" in fp.profile_sentence("quick")
    assert fp.next_steps(S, H, "quick")[0].startswith("Rerun with the standard profile")
    assert "intervals on every stationary storage point (a PTS-recovery or write-saturation trajectory has none" in \
        fp.next_steps(S, H, "quick")[0]  # S12-1cpu 8: standard gives them no interval either
    # R-loop 2.2: a loop device in a VM is the loop driver and its file, as page 1 says, not the hypervisor's disk
    S.dataset.hosts[0].sysinfo.setdefault("drive", {})["disk_label"] = "loop0"
    loop = " ".join(fp.next_steps(S, H, "quick"))
    assert "describe the loop driver and the file behind it" in loop and "hypervisor's virtual disk" not in loop


def test_page_one_names_the_failed_and_the_unchecked_checks():
    assert fp.check_names(synthesis().validity) == []          # every check passed: nothing to name
    rws = ("randread", "randwrite", "read", "write", *(f"w{i}" for i in range(fp.NAMED_SUBJECTS - 2)))
    rows = [row(H, "open_loop_rate", rw, FAIL, 174.0, 105.0, "% of offered", "achieved 174 %", "gated", "open_loop",
                low=95.0, high=105.0) for rw in rws]
    rows.append(unchecked(H, "littles_law", "fio-load-latency", "no latency recorded", "open_loop"))
    names = fp.check_names(frame(rows))
    assert len(names) == 2 and names[0].startswith(f"**{H}** — Failed checks")
    assert "`open_loop_rate` (randread; randwrite; read; write; w0" in names[0] and "and 2 more)" in names[0]
    # S10-bare 15: one subject beyond the list is named, not 'and 1 more' (the words would take its place)
    one_more = fp.check_names(frame(rows[:fp.NAMED_SUBJECTS + 1]))[0]
    assert "more)" not in one_more and f"w{fp.NAMED_SUBJECTS - 4})" in one_more, one_more
    assert names[1].startswith(f"**{H}** — Not checked") and "`littles_law` (fio-load-latency)" in names[1]
    assert "Not checked (no value to judge, or a point without one" in names[1]  # S12-loop9 8: 8 of 9 judged
    counts = fp.check_counts(frame(rows))
    assert f"{len(rws)} fail, 1 not checked" in counts
    shown = fp.validity_display(frame(rows))
    assert list(shown["status"]) == ["fail"] * len(rws) + ["unchecked"]


def test_the_machine_line_says_how_many_cpus_the_run_could_use_and_what_a_loop_device_measures():
    """Reviewers of a 1-CPU run and of a loop-device run found neither condition on page 1."""
    info = {"cpu": {"model": "Test CPU", "logical_cpus": 2}, "memory": {"total_bytes": 24 << 30},
            "shape": {"usable_cpus": 1, "cpu_source": "affinity 1 (1 CPU), no cgroup v1 CPU quota -> 1 usable; "
                                                      "no SMT siblings seen"},
            "drive": {"disk_label": "loop device loop0"}, "machine": {"caveats": []}}
    (line,) = fp.machine_sentences(SimpleNamespace(hosts=[HostData(name=H, sysinfo=info)]))
    assert "2 logical CPUs, of which this run could use 1 (affinity 1 (1 CPU), no cgroup v1 CPU quota -> 1 " \
           "usable)" in line
    assert "loop device" in line and "page cache" in line
    whole = dict(info, shape={"usable_cpus": 2}, drive={"disk_label": "virtio disk vda"})
    (line,) = fp.machine_sentences(SimpleNamespace(hosts=[HostData(name=H, sysinfo=whole)]))
    assert "could use" not in line and "page cache" not in line


def test_an_ioarrive_loop_that_did_not_hold_is_said_in_ioarrive_terms_on_page_one():
    """Page 1 advised 'memstor's own generator (generator: ioarrive)' to data ioarrive had measured, and led with
    the Little's-law evidence; it now names the generator and where the loop held, from the rows."""
    from memstor.analysis.validity.gate import gate_open_curve_table
    from test_openloop_report import ioarrive_curve

    load = ioarrive_curve(H)
    S = synthesis(load=load)
    S.load = gate_open_curve_table(load, S.validity)
    finding = next(f for f in fp.findings(S, H) if f.startswith("The open loop did not hold"))
    assert "randwrite (ioarrive): held at 0 of 8 rates, 7 of 8 rates 88.7–99.6 % of offered achieved; u70 completed " \
           "nothing in its window (overloaded: its cap of outstanding I/Os reached)" in finding  # S12-loop 4: no 0.0 %
    assert "open_loop_held" in finding and "no SLO answer" in finding
    steps = " ".join(fp.next_steps(S, H, "standard"))
    assert "decides the remedy" in steps and "`generator: ioarrive`" not in steps
    fio = synthesis(load=load_frame((True,) + (False,) * 5))       # fio-made data: the way to ioarrive stays
    fio.load = gate_open_curve_table(load_frame((True,) + (False,) * 5), fio.validity)
    assert "`generator: ioarrive`" in " ".join(fp.next_steps(fio, H, "standard"))


def test_a_memory_value_without_interval_gives_the_reason_its_run_had_not_n():
    """R-loop 2.5: loop's peak bandwidth had 10 sub-windows, its interval withheld for correlated batches; the
    page said 'no interval (n = 1; memory summaries get one from repetitions or >= 10 sub-windows)'. With the
    rows' ci_note (headline_long) it says that reason; without one, the general rule as before."""
    from pathlib import Path
    head = pd.read_csv(Path(__file__).parent / "data" / "review-s5" / "headline-loop328.csv")
    note = "correlated (lag-1 bandwidth 0.53 at 10 batches of 1 sub-windows)"   # headline_long on build/run-loop328
    shown = ht.headline_evidence(head.assign(ci_note=head["key"].map({"peak_bw_MBps": note})), None)
    value = shown.set_index("quantity").loc["Peak memory bandwidth (MB/s)", "value"]
    assert value.endswith(f"no interval (one run; its sub-windows: {note})") and "n = 1" not in value
    bare = ht.headline_evidence(head, None).set_index("quantity").loc["Peak memory bandwidth (MB/s)", "value"]
    assert "n = 1; memory summaries get one from repetitions" in bare


def test_the_conclusion_says_past_the_knee_only_where_a_knee_plateau_passed():
    """S10-bare 7: 'past the knee every extra request adds waiting, not throughput' was said where both sweeps'
    knee_plateau failed (+17 % and +44 % at their deepest step); now only where one passed."""
    def plateau(status):
        return frame([row(H, "knee_plateau", rw, status, 50_376.0, 49_769.0, "IOPS", "rose", "", "queue_depth",
                          low=41_131.0, high=49_769.0) for rw in ("randread", "randwrite")])
    failed = knee_words(plateau(FAIL), H)
    assert "no knee was shown for randread and randwrite: their sweeps still rose" in failed
    assert "past the knee" not in failed
    assert "past the knee of randread and randwrite every extra request adds waiting" in knee_words(
        plateau("pass"), H)
    # S11-1cpu H1: randread's sweep still rose (fail), randwrite's levelled above its fit (warn): only randread's said
    mixed = frame([row(H, "knee_plateau", "randread", FAIL, 94_076.0, 69_900.0, "IOPS", "rose", "", "queue_depth"),
                   row(H, "knee_plateau", "randwrite", "warn", 46_579.0, 45_000.0, "IOPS", "above", "", "queue_depth")])
    said = knee_words(mixed, H)
    assert "no knee was shown for randread: its sweep still rose" in said and "randwrite: its" not in said
    # S18 (session 16): the warned workload is named too, as not confirming the knee (page 2 named one of two)
    assert said.endswith("; for randwrite the points past the fitted knee do not confirm it (knee_plateau warned).")
    none = knee_words(None, H)
    assert "knee" not in none and none.startswith("Throughput is bought")
