"""Sizes and shares from the machine, not from constants: the memory family's CPUs (SMT siblings, cgroup quota)
and buffers (scaled to the usable memory), the fio CPU check over the usable CPUs, the open-loop job split and
open-loop flag, each on faked machine shapes and on both sides of every bound."""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import faked_cpu_shape
from memstor.analysis.validity import openloop as vol
from memstor.core.errors import UsageError
from memstor.experiments import _mlc_params as mp
from memstor.experiments import fio_load_latency as fll
from memstor.experiments import load_profile
from memstor.measure.openloop import INLINE_MAX_LOAD, MAX_JOB_RATE_IOPS
from memstor.measure.shape import CpuShape

GIB = 2**30


shape = faked_cpu_shape  # a faked machine of n CPUs (tests/conftest.py)


@pytest.fixture
def machine(monkeypatch):
    """Install a faked CPU shape, usable memory and last-level cache (bytes; buffer_kib auto is 4 x it: 256 MiB
    gives the 1 GiB the standard profile had as a number) for the memory family's parameters."""
    def install(cpu: CpuShape, mem_bytes: int | None = None, llc_bytes: int = 256 * 2**20) -> None:
        monkeypatch.setattr(mp, "cpu_shape", lambda: cpu)
        monkeypatch.setattr(mp, "usable_memory_bytes", lambda: mem_bytes)
        monkeypatch.setattr(mp, "cache_info", lambda notes: {"L1d_bytes": 48 * 1024, "L1i_bytes": 32 * 1024,
                                                             "L2_bytes": 2 * 2**20, "L3_bytes": llc_bytes})
    return install


# ------------------------------------------------------------------------------ memory family: CPUs
def test_load_cpus_skip_the_latency_cpus_smt_sibling(machine):
    machine(shape(16, smt=True))
    p = mp.validate_params(load_profile("standard", mp.EXPERIMENT))
    assert p.latency_cpu == 0 and 8 not in p.load_cpus and 0 not in p.load_cpus
    assert len(p.load_cpus) == 14  # every other CPU


def test_load_cpus_without_smt_take_every_other_cpu(machine):
    machine(shape(16))
    assert mp.validate_params(load_profile("standard", mp.EXPERIMENT)).load_cpus == tuple(range(1, 16))


def test_load_threads_stay_within_the_cgroup_quota(machine):
    machine(shape(16, usable=2))  # 16 CPUs in the mask, a 2-CPU quota: one load thread beside the latency one
    assert mp.validate_params(load_profile("standard", mp.EXPERIMENT)).load_cpus == (1,)


@pytest.mark.parametrize("cpu", [shape(1), shape(2, smt=True)])
def test_one_core_is_refused_in_one_line_naming_the_way_out(machine, cpu):
    machine(cpu)
    with pytest.raises(UsageError) as err:
        mp.validate_params(load_profile("quick", mp.EXPERIMENT))
    text = str(err.value)
    assert "\n" not in text and "load thread" in text and "2+ cores" in text


# ------------------------------------------------------------------------------ memory family: buffers
def _standard(machine, n: int) -> mp.LoadedLatencyParams:
    machine(shape(n))
    return mp.validate_params(load_profile("standard", mp.EXPERIMENT))


def test_a_16_cpu_32_gib_machine_runs_the_standard_profile_with_scaled_buffers(machine):
    p = _standard(machine, 16)
    assert mp.memory_need_bytes(p) > mp.MEMORY_FRACTION * 32 * GIB  # refused before this round
    fit, said = mp.fit_to_memory(p, 32 * GIB, 64 * 1024)
    assert mp.memory_need_bytes(fit) <= mp.MEMORY_FRACTION * 32 * GIB
    assert fit.load_cpus == p.load_cpus and fit.buffer_kib < p.buffer_kib and fit.buffer_kib % 1024 == 0
    assert f"{fit.buffer_kib // 1024} MiB per thread instead of 1024 MiB" in said and "31 buffers" in said


def test_enough_memory_changes_nothing(machine):
    p = _standard(machine, 16)
    assert mp.fit_to_memory(p, 64 * GIB, 64 * 1024) == (p, "")
    assert mp.fit_to_memory(p, None, 64 * 1024) == (p, "")  # unknown memory: as asked (the check says so)


def test_below_the_smallest_buffer_load_threads_are_dropped(machine):
    p = _standard(machine, 16)
    fit, said = mp.fit_to_memory(p, 2 * GIB, 256 * 1024)  # 1.6 GiB: 6 buffers of 256 MiB -> 2 load threads
    assert fit.buffer_kib == 256 * 1024 and fit.load_cpus == p.load_cpus[:2]
    assert "2 of 15 load threads" in said
    assert mp.memory_need_bytes(fit) <= mp.MEMORY_FRACTION * 2 * GIB


def test_too_little_memory_for_one_load_thread_is_refused_naming_the_parameter(machine):
    p = _standard(machine, 16)
    with pytest.raises(UsageError, match="buffer_kib"):
        mp.fit_to_memory(p, 512 * 2**20, 256 * 1024)


# ------------------------------------------------------------------------------ fio CPU check
def _usage(busy: float, thread: float) -> pd.DataFrame:
    return pd.DataFrame({"point": ["p1"], "rep": [1], "busy": [busy], "thread": [thread]})


def test_one_saturated_thread_fails_as_a_thread_not_as_a_core_count():
    r = vol._cpu_row("h", "fio-load-latency", _usage(busy=474.0, thread=94.7), cores=16, section="open_loop")
    assert r["status"] == "fail" and r["value"] == pytest.approx(94.7) and r["limit"] == vol.THREAD_FAIL_PCT
    assert "thread" in r["unit"] and "more jobs" in r["consequence"] and "more cores" not in r["consequence"]


def test_all_usable_cpus_busy_fails_on_the_share():
    r = vol._cpu_row("h", "fio-queue-depth", _usage(busy=190.0, thread=60.0), cores=2, section="storage_points")
    assert r["status"] == "fail" and r["value"] == pytest.approx(95.0) and r["unit"] == "% of usable CPUs"


def test_a_quiet_generator_passes():
    r = vol._cpu_row("h", "fio-queue-depth", _usage(busy=40.0, thread=40.0), cores=2, section="storage_points")
    assert r["status"] == "pass" and r["value"] == pytest.approx(20.0)


def test_the_share_is_over_the_usable_cpus_when_recorded():
    info = {"cpu": {"logical_cpus": 16}, "shape": {"usable_cpus": 2}}
    assert vol.cores(info) == 2
    assert vol.cores({"cpu": {"logical_cpus": 16}}) == 16  # data from before the shape was recorded
    assert vol.cores({}) is None


# ------------------------------------------------------------------------------ open-loop split and flag
def test_job_rate_cap_splits_at_the_inline_load_at_qd1_latency():
    lat = 100.0  # us
    assert fll.job_rate_cap({"mode": "inline", "latency_us": lat}) == int(INLINE_MAX_LOAD * 1e6 / lat) == 5000
    for held in (None, 0.0, 0.8):  # what the probe measured does not rename the points
        assert fll.job_rate_cap({"mode": "inline", "latency_us": lat, "open_load": held}) == 5000
    assert fll.job_rate_cap({"mode": "offload", "latency_us": lat}) == MAX_JOB_RATE_IOPS  # an old record


@pytest.mark.parametrize("achieved, held, lat_us, expected", [
    (10_000, 0.5, 40.0, True),     # rate held, per-job load 1000 x 40 us = 0.04 <= 0.5 measured
    (13_000, 0.5, 40.0, False),    # 130 % of offered: fio-3.42's offload overshoot is not an open loop
    (9_400, 0.5, 40.0, False),     # 94 %: fell behind
    (10_400, 0.5, 40.0, True),     # +4 %: within the two-sided tolerance
    (10_000, 0.5, 600.0, False),   # per-job load 0.6 above the load at which arrivals were seen Poisson
    (10_000, None, 40.0, None),    # arrivals never measured (fio < 3.31: no iolog times): not checked
    (10_000, 0.0, 40.0, False),    # measured: bunched at every load the probe tried (a 1-CPU machine)
    (None, 0.5, 40.0, None),       # no achieved rate: not checked
])
def test_open_loop_flag_is_measured_on_both_sides(achieved, held, lat_us, expected):
    params = {"offered_iops": 10_000.0, "rate_iops": 1000, "arrivals_open_load": held}
    assert fll._open_loop(params, {"iops": achieved, "lat_mean_us": lat_us}) is expected


def test_open_loop_flag_of_a_point_recorded_before_arrivals_were_measured_is_not_checked():
    params = {"offered_iops": 10_000.0, "rate_iops": 1000, "io_submit_mode": "offload"}  # no arrivals_open_load
    assert fll._open_loop(params, {"iops": 10_000, "lat_mean_us": 40.0}) is None


# ------------------------------------------------------------------------------ memory hierarchy: MLP buffers
def _hierarchy(monkeypatch, ncpu: int, mem_bytes: int | None):
    from memstor.experiments import mem_hierarchy as mh

    monkeypatch.setattr(mh, "available_cpus", lambda: list(range(ncpu)))
    monkeypatch.setattr(mh, "usable_memory_bytes", lambda: mem_bytes)
    monkeypatch.setattr(mh, "min_buffer_kib", lambda: 64 * 1024)
    return mh, mh.validate(load_profile("standard", mh.EXPERIMENT))


def test_mlp_buffers_on_every_cpu_of_a_128_cpu_32_gib_machine_are_scaled_and_said(monkeypatch, capsys):
    mh, p = _hierarchy(monkeypatch, 128, 32 * GIB)
    fit = mh._fit_memory(p, 64 * 2**20)
    per = mh.V.size("mlp_buffer", fit.mlp_buffer)[1]
    assert 64 * 2**20 <= per < mh.V.size("mlp_buffer", p.mlp_buffer)[1]
    assert per * 128 * 1.07 <= mh.MEMORY_FRACTION * 32 * GIB
    assert "MLP buffers scaled to the memory" in capsys.readouterr().err


def test_mlp_buffers_that_fit_are_kept(monkeypatch):
    mh, p = _hierarchy(monkeypatch, 2, 32 * GIB)
    assert mh._fit_memory(p, 64 * 2**20) == p


def test_mlp_on_every_cpu_below_the_smallest_buffer_is_not_run_here(monkeypatch):
    from memstor.core.errors import NotOnThisMachine

    mh, p = _hierarchy(monkeypatch, 128, 4 * GIB)
    with pytest.raises(NotOnThisMachine, match="mlp_all_cores: false"):
        mh._fit_memory(p, 64 * 2**20)
    with pytest.raises(UsageError, match="max_size"):  # a working set beyond the memory: the parameter's fault
        mh._fit_memory(p, 8 * GIB)


def test_split_rate_stays_within_the_jobs_the_cpus_allow():
    from memstor.measure.openloop import split_rate

    free = split_rate(980_000, 20_000)
    assert free.numjobs >= 49  # the split alone: one fio process per 20,000 IOPS
    bounded = split_rate(980_000, 20_000, max_jobs=16)
    assert bounded.numjobs == 16 and abs(bounded.expected_iops - 980_000) / 980_000 < 0.06
    assert split_rate(10_000, 20_000, max_jobs=16).numjobs == 1  # a bound that does not bind changes nothing
    with pytest.raises(UsageError, match="max_jobs"):
        split_rate(10_000, 20_000, max_jobs=0)


# ------------------------------------------------------------------------------ the latency CPU
def test_latency_cpu_auto_is_the_first_cpu_of_the_mask(machine):
    no_cpu0 = CpuShape(affinity=(4, 5, 6), quota_cpus=None, usable=3, siblings={4: (), 5: (), 6: ()},
                       nodes={0: (4, 5, 6)}, source="taskset -c 4-6")
    machine(no_cpu0)
    p = mp.validate_params(load_profile("quick", mp.EXPERIMENT))  # the profiles say latency_cpu: auto
    assert p.latency_cpu == 4 and p.load_cpus == (5, 6)
    with pytest.raises(UsageError, match=r"latency_cpu=0 is invalid: not an available CPU; this machine offers "
                                         r"CPUs 4-6 \(auto: the first of them\)"):
        mp.validate_params(load_profile("quick", mp.EXPERIMENT, {"latency_cpu": 0}))


def test_a_bad_parameter_is_named_on_one_core_too(machine):
    machine(shape(1))
    with pytest.raises(UsageError, match="traffic='W99'"):
        mp.validate_params(load_profile("quick", mp.EXPERIMENT, {"traffic": ["W99"]}))


def test_mem_hierarchy_latency_cpu_auto(monkeypatch):
    from memstor.experiments import mem_hierarchy as mh

    monkeypatch.setattr(mh, "cpu_shape", lambda: shape(1))
    assert mh.validate(load_profile("quick", mh.EXPERIMENT)).latency_cpu == 0
    monkeypatch.setattr(mh, "cpu_shape", lambda: CpuShape(affinity=(3,), quota_cpus=None, usable=1,
                                                          siblings={3: ()}, nodes={}, source="taskset -c 3"))
    assert mh.validate(load_profile("quick", mh.EXPERIMENT)).latency_cpu == 3


def test_probe_measures_lower_rates_only_and_never_the_same_rate_twice(monkeypatch, tmp_path):
    """A fast target (page cache: QD1 latency of a few us) puts every load at the per-job rate cap: the probe
    stops after one trial instead of measuring the same rate again (it once reused the trial's folder)."""
    from memstor.measure import openloop as ol

    asked: list[int] = []

    def fake_trial(mode, path, engine, direct, rate, iodepth, work, timeout_s):
        asked.append(rate)
        return ol.ModeTrial(mode, "ok", "", 1, engine, arrival_cv=1.6, achieved_iops=float(rate),
                            load=rate * 5e-6, offered_iops=float(rate))

    monkeypatch.setattr(ol, "_trial", fake_trial)
    monkeypatch.setattr(ol, "fio_version", lambda: "fio-test")
    for lat_us, expected in ((5.0, [ol.MAX_JOB_RATE_IOPS]), (100.0, [20000, 7500, 5000])):
        asked.clear()
        monkeypatch.setattr(ol, "_qd1_latency_us", lambda *a, lat=lat_us: lat)
        ol._PROBES.clear()
        probe = ol.probe_submit_mode_details(tmp_path, "psync", direct=False)
        assert asked == expected and probe.open_load == 0.0  # bunched (CV 1.6) at every rate tried
