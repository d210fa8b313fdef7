"""Issue 41, acceptance 1: the mixed-load capacity curve (memstor.analysis.mixed_load), proven in virtual time
against a simulated device with two classes (reads and writes) sharing c FIFO servers (ioarrive --sim ...
--virtual, lib/ioarrive/README.md *Simulated device*).

Every cell is a real ioarrive run (virtual time, 10⁶ arrivals of both directions together, 2 % more as ramp,
its own seed) parsed by memstor.parse.ioarrive — the path a measured cell takes — then tagged with its
coordinates (write MB/s, read IOPS). Each write rate gets a coarse read-rate grid (fractions of the read rate
that saturates the servers, one cell beyond it, which overloads and does not hold), then three more cells
inside each target's bracket (the refinement the family's adaptive grid will do).

(a) one server, reads and writes exponential with the same mean S: M/M/1 with λ = λr + λw, response
    exponential with rate μ − λ, p99 = ln(100)/(μ − λ), so the read capacity at target T is
    μ − ln(100)/T − λw; the curve matches within 5 %.
(b) c = 2, reads exponential (mean 50 µs), writes deterministic (400 µs): against a direct simulation written
    here (numpy arrivals and services, the FCFS c-server Kiefer–Wolfowitz recursion in a loop), whose own read
    capacity is found by the secant method on 1/p99 with common random numbers; within 5 %.
(c) censoring on both sides, a cell that did not hold being ignored, and the interval bracketing the answer.
Then the option syntax of the two classes (the JSON's sim object, the usage errors) and the sentences.
"""

from __future__ import annotations

import heapq
import math
import re
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from memstor.analysis import mixed_load
from memstor.analysis.mixed_load import capacity_curve, interpolate, read_cells, sentence
from memstor.measure import ioarrive
from memstor.measure.ioarrive import IoarriveJob

ROOT = Path(__file__).resolve().parents[1]
needs_tool = pytest.mark.loadlat  # builds and runs the ioarrive C tool
N_CELL = 1e6  # arrivals per cell, both directions together
COARSE = (0.1, 0.3, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 1.1)  # read rate / the saturating read rate
LN100 = math.log(100.0)

# (a) M/M/1: one server, S = 10 µs for both classes (μ = 100,000 IOPS); 4 KiB I/Os
MM1_S_US, MM1_BS = 10.0, 4096
MM1_SIM = f"servers=1,read-service=exp:{MM1_S_US:g},write-service=exp:{MM1_S_US:g}"
MM1_WRITES = (10_000.0, 20_000.0, 30_000.0)  # IOPS
MM1_TARGETS = (100.0, 250.0)  # read p99, µs
# (b) two classes on c = 2 servers; 128 KiB I/Os
TC_SERVERS, TC_READ_US, TC_WRITE_US, TC_BS = 2, 50.0, 400.0, 131072
TC_SIM = f"servers={TC_SERVERS},service=exp:{TC_READ_US:g},write-service=det:{TC_WRITE_US:g}"
TC_WRITES = (500.0, 1500.0)  # IOPS
TC_TARGETS = (1000.0, 2000.0)  # µs


@pytest.fixture(scope="module")
def exe(ioarrive_built) -> Path:
    """ioarrive compiled by memstor.measure.ioarrive.build (the `make ioarrive` command) into a temp folder (conftest:
    once per session)."""
    return ioarrive_built


def cell(exe: Path, sim: str, read_iops: float, write_iops: float, bs: int, seed: int,
         extra: tuple[str, ...] = ()) -> list[dict]:
    """One cell: ioarrive in virtual time offering both rates (IOPS) for about N_CELL arrivals, its tidy rows
    (memstor.parse.ioarrive) with the cell's coordinates: write_offered_MBps (decimal) and read_offered_iops."""
    runtime = N_CELL / (read_iops + write_iops)
    res = ioarrive.run(IoarriveJob(sim=sim, virtual=True, read_rate_iops=read_iops,
                                   write_rate_iops=write_iops or None, bs=bs, runtime_s=runtime,
                                   ramp_s=runtime * 0.02, seed=seed, extra=extra), exe=exe)
    assert res.status == "ok", (res.reason, res.stderr)
    return [{**r, "write_offered_MBps": write_iops * bs / 1e6, "read_offered_iops": read_iops} for r in res.rows]


def grid(exe: Path, sim: str, bs: int, writes, read_max, targets, seed0: int) -> pd.DataFrame:
    """The cell table of every write rate: the coarse grid (COARSE x read_max(write IOPS)), then three cells at
    1/4, 1/2 and 3/4 of each target's bracket."""
    rows: list[dict] = []
    seed = seed0
    for w in writes:
        for f in COARSE:
            seed += 1
            rows += cell(exe, sim, f * read_max(w), w, bs, seed)
    curve = capacity_curve(pd.DataFrame(rows), targets)
    for _, r in curve[curve["censored"] == ""].iterrows():
        w_iops = r["write_offered_MBps"] * 1e6 / bs
        for q in (0.25, 0.5, 0.75):
            seed += 1
            rows += cell(exe, sim, r["ci_low_iops"] + q * (r["ci_high_iops"] - r["ci_low_iops"]), w_iops, bs, seed)
    return pd.DataFrame(rows)


def mm1_read_max(w: float) -> float:
    return 1e6 / MM1_S_US - w


def mm1_capacity(w: float, target_us: float) -> float:
    """M/M/1's read capacity (IOPS) at a read p99 target: μ − ln(100)/T − λw."""
    return 1e6 / MM1_S_US - LN100 / (target_us * 1e-6) - w


def tc_read_max(w: float) -> float:
    """The read rate that saturates the c servers: λr E[Sr] + λw E[Sw] = c."""
    return (TC_SERVERS - w * TC_WRITE_US * 1e-6) / (TC_READ_US * 1e-6)


@pytest.fixture(scope="module")
def mm1_cells(exe) -> pd.DataFrame:
    return grid(exe, MM1_SIM, MM1_BS, MM1_WRITES, mm1_read_max, MM1_TARGETS, seed0=100)


@pytest.fixture(scope="module")
def tc_cells(exe) -> pd.DataFrame:
    return grid(exe, TC_SIM, TC_BS, TC_WRITES, tc_read_max, TC_TARGETS, seed0=500)


def deviations(curve: pd.DataFrame, truth, bs: int) -> list[tuple[float, float, float, float, float]]:
    """(write IOPS, target µs, capacity, truth, deviation %) of every row."""
    out = []
    for _, r in curve.iterrows():
        w = r["write_offered_MBps"] * 1e6 / bs
        t = truth(w, r["target_us"])
        out.append((w, r["target_us"], r["read_capacity_iops"], t, 100 * (r["read_capacity_iops"] - t) / t))
    return out


# ------------------------------------------------------------------------------ (a) M/M/1, closed form


@needs_tool
def test_mm1_capacity_curve_matches_the_closed_form_within_5_percent(mm1_cells):
    curve = capacity_curve(mm1_cells, MM1_TARGETS)
    assert len(curve) == len(MM1_WRITES) * len(MM1_TARGETS)
    assert set(curve["censored"]) == {""} and curve["read_capacity_iops"].notna().all()
    assert list(curve["write_offered_MBps"].unique()) == [w * MM1_BS / 1e6 for w in MM1_WRITES]
    dev = deviations(curve, mm1_capacity, MM1_BS)
    print("\nM/M/1 capacity (write IOPS, target us, measured, closed form, deviation %):")
    for d in dev:
        print("  {:8.0f} {:6.0f} {:9.0f} {:9.0f} {:+6.2f}".format(*d))
    assert all(abs(d[-1]) < 5 for d in dev), dev
    # every held cell was used: the coarse ones but the overloaded one beyond saturation, and 3 per target inside
    # its bracket, less those whose arrival checks failed by chance (each test at 1 %)
    rc = read_cells(mm1_cells)
    held = rc[rc["held"]].groupby("write_offered_MBps").size()
    assert (curve["cells_used"].to_numpy() == held.reindex(curve["write_offered_MBps"]).to_numpy()).all()
    assert (curve["cells_used"] >= len(COARSE) - 1 + 3 * len(MM1_TARGETS) - 2).all(), curve["cells_used"]


@needs_tool
def test_the_mm1_cells_themselves_follow_the_exponential_tail(mm1_cells):
    """The path below the curve: each held cell's read p99 up to ρ = 0.9 is ln(100)/(μ − λr − λw) within 5 %
    (above, 10⁶ arrivals leave a few % of noise in p99), and both classes see the same response distribution."""
    rc = read_cells(mm1_cells)
    lam = rc["read_iops"] + rc["write_offered_MBps"] * 1e6 / MM1_BS
    held = rc[rc["held"] & (lam <= 0.9e6 / MM1_S_US)]
    lam = held["read_iops"] + held["write_offered_MBps"] * 1e6 / MM1_BS
    expect = LN100 / (1e6 / MM1_S_US - lam) * 1e6
    assert np.allclose(held["read_p99_us"], expect, rtol=0.05), (held["read_p99_us"] / expect).describe()
    both = mm1_cells[mm1_cells["open_loop"]].pivot_table(index=["write_offered_MBps", "read_offered_iops"],
                                                         columns="direction", values="resp_mean_us")
    assert np.allclose(both["read"], both["write"], rtol=0.05)


# ---------------------------------------------------------------------- (b) two classes, direct simulation


def direct_read_p99_us(c: int, read_iops: float, write_iops: float, horizon_s: float, draws: dict) -> float:
    """Read p99 response (µs) of the two-class FCFS c-server queue, simulated directly: Poisson reads (gaps
    draws['read_gaps'] / λr) and writes (draws['write_gaps'] / λw) over horizon_s, read service exponential
    (draws['read_svc'] × TC_READ_US), write service TC_WRITE_US; merged in order of arrival, each I/O starts at
    max(its arrival, the earliest time a server is free) — the Kiefer–Wolfowitz recursion of the servers'
    workloads, kept as a heap of their free times — and the first 2 % of the horizon left out (the queue starts
    empty). The draws are fixed (common random numbers), so p99 moves smoothly with the rate."""
    t_r = np.cumsum(draws["read_gaps"]) / read_iops
    t_r = t_r[t_r < horizon_s]
    t_w = np.cumsum(draws["write_gaps"]) / write_iops
    t_w = t_w[t_w < horizon_s]
    t = np.concatenate([t_r, t_w])
    is_read = np.arange(len(t)) < len(t_r)
    svc = np.where(is_read, np.resize(draws["read_svc"], len(t)) * TC_READ_US * 1e-6, TC_WRITE_US * 1e-6)
    order = np.argsort(t, kind="stable")
    t, svc, is_read = t[order], svc[order], is_read[order]
    free, resp = [0.0] * c, []
    push, record = heapq.heapreplace, resp.append
    for ti, si in zip(t.tolist(), svc.tolist(), strict=True):
        done = (ti if ti > free[0] else free[0]) + si
        push(free, done)
        record(done - ti)
    keep = is_read & (t >= 0.02 * horizon_s)
    return float(np.percentile(np.asarray(resp)[keep], 99)) * 1e6


def direct_capacity(write_iops: float, target_us: float, n: float = 2e6, seed: int = 7) -> float:
    """The read rate (IOPS) at which the direct simulation's read p99 equals target_us: the secant method on
    1/p99 − 1/T (nearly linear in the read rate near the knee, and smooth with common random numbers) from 0.7
    and 0.9 of the saturating read rate, until a step is under 0.5 % of the rate."""
    r_max = tc_read_max(write_iops)
    horizon = n / (r_max + write_iops)
    rng = np.random.default_rng(seed)
    m = int(r_max * horizon * 1.1) + 1000
    draws = {"read_gaps": rng.exponential(size=m), "write_gaps": rng.exponential(size=int(write_iops * horizon * 1.1) + 1000),
             "read_svc": rng.exponential(size=m)}

    def g(r: float) -> float:
        return 1.0 / direct_read_p99_us(TC_SERVERS, r, write_iops, horizon, draws) - 1.0 / target_us

    x0, x1 = 0.7 * r_max, 0.9 * r_max
    g0, g1 = g(x0), g(x1)
    for _ in range(20):
        if g1 == g0:
            return x1
        x2 = min(max(x1 - g1 * (x1 - x0) / (g1 - g0), 0.05 * r_max), 0.99 * r_max)
        if abs(x2 - x1) < 5e-3 * x2:
            return x2
        x0, g0, x1, g1 = x1, g1, x2, g(x2)
    raise AssertionError(f"the direct simulation's capacity did not converge ({x0}, {x1})")


@needs_tool
def test_two_class_capacity_curve_matches_a_direct_simulation_within_5_percent(tc_cells):
    curve = capacity_curve(tc_cells, TC_TARGETS)
    assert set(curve["censored"]) == {""} and curve["read_capacity_iops"].notna().all()
    dev = deviations(curve, direct_capacity, TC_BS)
    print("\ntwo classes (write IOPS, target us, measured, direct simulation, deviation %):")
    for d in dev:
        print("  {:8.0f} {:6.0f} {:9.0f} {:9.0f} {:+6.2f}".format(*d))
    assert all(abs(d[-1]) < 5 for d in dev), dev


@needs_tool
def test_two_class_json_records_both_classes_and_the_mixture(exe):
    res = ioarrive.run(IoarriveJob(sim=TC_SIM, virtual=True, read_rate_iops=9000, write_rate_iops=1000,
                                   runtime_s=2), exe=exe)
    sim = res.doc["sim"]
    assert sim["servers"] == 2
    assert sim["classes"]["read"] == {"service": "exp", "service_mean_ns": 50000, "service_cs2": 1, "hist_file": None}
    assert sim["classes"]["write"] == {"service": "det", "service_mean_ns": 400000, "service_cs2": 0, "hist_file": None}
    # the service time of an I/O drawn from the offered mix (weights 0.9 / 0.1)
    mean = 0.9 * 50e3 + 0.1 * 400e3
    m2 = 0.9 * 2 * 50e3**2 + 0.1 * 400e3**2
    assert sim["service"] == "mix" and sim["service_mean_ns"] == pytest.approx(mean)
    assert sim["service_cs2"] == pytest.approx(m2 / mean**2 - 1)
    rows = {r["direction"]: r for r in res.rows}
    assert rows["read"]["sim_service_mean_us"] == pytest.approx(mean / 1e3)
    # reads wait as long as writes (one FIFO queue): the response means differ by the service means
    gap = rows["write"]["resp_mean_us"] - rows["read"]["resp_mean_us"]
    assert gap == pytest.approx(TC_WRITE_US - TC_READ_US, rel=0.1)


@needs_tool
def test_one_class_given_twice_is_the_same_run_as_service(exe):
    def doc(sim):
        return ioarrive.run(IoarriveJob(sim=sim, virtual=True, read_rate_iops=40000, write_rate_iops=30000,
                                        runtime_s=1, seed=3), exe=exe).doc
    one, two = doc("servers=1,service=exp:10"), doc(MM1_SIM)
    assert one["sim"]["service"] == "exp" and one["sim"] | {"classes": None} == two["sim"] | {"classes": None}
    assert one["sim"]["classes"] == two["sim"]["classes"]
    for d in ("read", "write"):
        assert one["directions"][d]["response_ns"] == two["directions"][d]["response_ns"]
    # one direction offered: the top of sim is its class
    only = ioarrive.run(IoarriveJob(sim=TC_SIM, virtual=True, write_rate_iops=100, runtime_s=1), exe=exe).doc
    assert only["sim"]["service"] == "det" and only["sim"]["service_mean_ns"] == 400000


def usage_error(exe: Path, *args: str) -> str:
    proc = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ioarrive: ") and proc.stdout == "", proc.stderr
    return lines[0]


@needs_tool
def test_bad_service_classes_are_one_line_usage_errors(exe, tmp_path):
    def err(sim, *rates):
        return usage_error(exe, "--sim", sim, "--virtual", *(rates or ("--read-rate", "10", "--write-rate", "10")))

    assert "the write I/Os have no service time" in err("servers=1,read-service=exp:10")
    assert "the read I/Os have no service time" in err("servers=1,write-service=exp:10")
    assert "must be > 0 us (got write-service=det:0)" in err("servers=1,service=exp:10,write-service=det:0")
    assert "must be > 0 us (got read-service=exp:-3)" in err("servers=1,read-service=exp:-3,write-service=exp:1")
    assert "'x' is not a number" in err("servers=1,service=exp:10,write-service=exp:x")
    assert "read-service='gamma:3' is not det:US, exp:US or hist:FILE" in err("servers=1,read-service=gamma:3,service=exp:1")
    assert "write-service='hist:' is not" in err("servers=1,service=exp:1,write-service=hist:")
    assert "cannot read the service histogram" in err(f"servers=1,service=exp:1,write-service=hist:{tmp_path / 'no'}")
    assert "'writes=det:1' is neither" in err("servers=1,service=exp:1,writes=det:1")
    assert "service=det:US, exp:US or hist:FILE is missing" in err("servers=2")
    # a class for a direction that is not offered is allowed; a direction offered without one is not
    ok = subprocess.run([str(exe), "--sim", "servers=1,read-service=exp:10", "--virtual", "--read-rate", "100",
                         "--runtime", "1"], capture_output=True, text=True, timeout=30)
    assert ok.returncode == 0, ok.stderr


# ------------------------------------------------------------------ (c) censoring, cells that did not hold


@needs_tool
def test_censored_on_both_sides_of_the_grid(mm1_cells):
    rc = read_cells(mm1_cells)
    held = rc[rc["held"]]
    low, high = held["read_p99_us"].min(), held["read_p99_us"].max()
    curve = capacity_curve(mm1_cells, [low / 2, high * 2])
    below, above = curve.iloc[::2], curve.iloc[1::2]
    assert (below["censored"] == "below_grid").all() and (above["censored"] == "above_grid").all()
    assert below["read_capacity_iops"].isna().all() and above["read_capacity_iops"].isna().all()
    # the side that is known: below the lowest held cell, above the highest held cell
    lowest = held.groupby("write_offered_MBps")["read_iops"].min()
    highest = held.groupby("write_offered_MBps")["read_iops"].max()
    assert below["ci_low_iops"].isna().all() and np.allclose(below["ci_high_iops"], lowest.to_numpy())
    assert above["ci_high_iops"].isna().all() and np.allclose(above["ci_low_iops"], highest.to_numpy())
    assert all("below the grid" in n for n in below["note"]) and all("above the grid" in n for n in above["note"])
    # the overloaded cell beyond saturation (1.1) did not hold: the notes say it lies above the highest held one
    assert all(re.search(r"\d cell\(s\) did not hold \(ignored\); 1 of them above the highest held cell", n)
               for n in above["note"])
    w = float(mm1_cells["write_offered_MBps"].iloc[0])
    assert sentence(below.iloc[0]).startswith(f"at {w:g} MB/s of writes this drive misses read p99 ≤ ")
    assert "at every read rate whose loop held, up to" in sentence(above.iloc[0])


@needs_tool
def test_a_cell_that_did_not_hold_is_ignored(exe, mm1_cells):
    """A cell at a read rate well below the capacity whose run fell behind (here: a queue cap of 4 I/Os, so the
    run stops overloaded) and whose p99 would be the first miss if it counted: the curve stays the same."""
    base = capacity_curve(mm1_cells, MM1_TARGETS)
    w = MM1_WRITES[0]
    bad = cell(exe, MM1_SIM, 0.2 * mm1_read_max(w), w, MM1_BS, seed=999, extra=("--max-outstanding", "4"))
    assert not any(r["open_loop"] for r in bad) and all(r["overloaded"] for r in bad)
    assert {r["checks"] for r in bad} != {"ok"}
    with_bad = pd.concat([mm1_cells, pd.DataFrame(bad)], ignore_index=True)
    again = capacity_curve(with_bad, MM1_TARGETS)
    pd.testing.assert_frame_equal(base.drop(columns="note"), again.drop(columns="note"))
    first = again[again["write_offered_MBps"] == w * MM1_BS / 1e6]
    rc = read_cells(with_bad)
    n_out = int((~rc[rc["write_offered_MBps"] == w * MM1_BS / 1e6]["held"]).sum())
    assert n_out >= 2 and all(f"{n_out} cell(s) did not hold (ignored)" in n for n in first["note"])
    # counted as held, its p99 (forced to a miss here, as a slow cell would be) would have lowered the answer
    forced = with_bad.copy()
    is_bad = forced["read_offered_iops"] == bad[0]["read_offered_iops"]
    forced.loc[is_bad, "open_loop"] = True
    forced.loc[is_bad, "resp_p99_us"] = 10 * max(MM1_TARGETS)
    wrong = capacity_curve(forced, MM1_TARGETS)
    assert (wrong["read_capacity_iops"].isna() | (wrong["read_capacity_iops"] < base["read_capacity_iops"])).any()


@needs_tool
def test_the_interval_brackets_the_answer(mm1_cells, tc_cells):
    for cells, targets, truth, bs in ((mm1_cells, MM1_TARGETS, mm1_capacity, MM1_BS),
                                      (tc_cells, TC_TARGETS, None, TC_BS)):
        curve = capacity_curve(cells, targets)
        assert (curve["ci_low_iops"] <= curve["read_capacity_iops"]).all()
        assert (curve["read_capacity_iops"] <= curve["ci_high_iops"]).all()
        rc = read_cells(cells)
        for _, r in curve.iterrows():
            g = rc[(rc["write_offered_MBps"] == r["write_offered_MBps"]) & rc["held"]].set_index("read_iops")
            # the bracket is two neighbouring held cells: the last meeting the target, the first missing it
            assert g.loc[r["ci_low_iops"], "read_p99_us"] <= r["target_us"] < g.loc[r["ci_high_iops"], "read_p99_us"]
            inside = g[(g.index > r["ci_low_iops"]) & (g.index < r["ci_high_iops"])]
            assert inside.empty
            if truth is not None:  # the closed form lies inside it
                w = r["write_offered_MBps"] * 1e6 / bs
                assert r["ci_low_iops"] <= truth(w, r["target_us"]) <= r["ci_high_iops"]


# ------------------------------------------------------------------------------------- words, rules, input


def test_sentence_says_the_capacity_with_its_bracket():
    row = {"write_offered_MBps": 500.0, "target_us": 1000.0, "read_capacity_iops": 41_234.5, "ci_low_iops": 40_000.0,
           "ci_high_iops": 42_000.0, "censored": "", "cells_used": 9, "note": ""}
    assert sentence(row) == ("at 500 MB/s of writes this drive keeps read p99 ≤ 1 ms up to 41,200 IOPS "
                             "(between 40,000 and 42,000)")
    assert sentence({**row, "write_offered_MBps": 65.536, "target_us": 250.0}).startswith(
        "at 65.54 MB/s of writes this drive keeps read p99 ≤ 250 µs up to 41,200 IOPS")
    assert sentence({**row, "write_offered_MBps": 0.0}).startswith("with no writes this drive keeps")
    none = {**row, "read_capacity_iops": math.nan, "ci_low_iops": math.nan, "ci_high_iops": math.nan, "cells_used": 0}
    assert "no cell of this drive held" in sentence(none)


def test_interpolation_rules():
    """1/p99 linear in the rate is exact on M/M/1's tail; log and linear answer lower (a convex curve's chord lies
    above it); every rule stays inside the bracket; a pair that is not a bracket is refused."""
    mu, w, target = 100_000.0, 20_000.0, 250.0
    p99 = lambda r: LN100 / (mu - w - r) * 1e6  # noqa: E731
    a, b = 40_000.0, 70_000.0
    exact = mm1_capacity(w, target)
    got = {rule: interpolate(a, p99(a), b, p99(b), target, rule) for rule in mixed_load.RULES}
    assert got["reciprocal"] == pytest.approx(exact, rel=1e-12)
    assert a < got["linear"] < got["log"] < got["reciprocal"] < b
    with pytest.raises(ValueError, match="not a bracket"):
        interpolate(b, p99(b), a, p99(a), target)
    with pytest.raises(ValueError, match="not one of"):
        interpolate(a, p99(a), b, p99(b), target, "cubic")


def test_capacity_curve_refuses_a_table_without_its_columns_or_a_bad_target():
    with pytest.raises(ValueError, match="missing column"):
        capacity_curve(pd.DataFrame({"direction": ["read"]}), [100])
    cells = pd.DataFrame(columns=list(mixed_load.CELL_COLUMNS))
    with pytest.raises(ValueError, match="> 0 us"):
        capacity_curve(cells, [0])
    assert list(capacity_curve(cells, [100]).columns) == mixed_load.CAPACITY_COLUMNS
