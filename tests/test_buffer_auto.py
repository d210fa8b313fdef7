"""mlc-loaded-latency's buffer_kib: auto sizes the buffer per thread from the machine's last-level cache (4 x it,
at least 256 MiB), so that a machine with a large LLC measures DRAM, not cache (this 2-vCPU VM's kernel reports a
480 MiB L3: the quick profile's former 256 MiB buffer lay inside it, and memory_buffer_llc withheld every DRAM
figure). The cache sizes are the machine's (sysfs): tests give other machines' by replacing that reader."""
from __future__ import annotations

import pytest

import memstor.experiments._mlc_params as mp
from memstor.core.errors import UsageError
from memstor.experiments._registry import load_profile

MIB = 1024  # KiB


def _caches(l3_bytes):
    return lambda notes: {"L1d_bytes": 48 * 1024, "L1i_bytes": 32 * 1024, "L2_bytes": 2 * 2**20, "L3_bytes": l3_bytes}


@pytest.mark.parametrize("l3_bytes, kib", [
    (480 * 2**20, 1920 * MIB),  # this VM's kernel: 4 x 480 MiB
    (32 * 2**20, 256 * MIB),    # a laptop: 4 x 32 MiB = 128 MiB, below the 256 MiB floor
    (None, 256 * MIB),          # no cache reported: the floor
    (100 * 2**20 + 1, 401 * MIB),  # whole MiB, rounded up: never below 4 x the cache
])
def test_auto_is_four_times_the_last_level_cache_at_least_256_mib(monkeypatch, l3_bytes, kib):
    monkeypatch.setattr(mp, "cache_info", _caches(l3_bytes))
    assert mp.validate_params({"buffer_kib": "auto"}).buffer_kib == kib
    assert mp.validate_params({"buffer_kib": " AUTO "}).buffer_kib == kib


def test_a_number_is_the_users_and_is_kept(monkeypatch):
    monkeypatch.setattr(mp, "cache_info", _caches(480 * 2**20))
    assert mp.validate_params({"buffer_kib": 65536}).buffer_kib == 65536  # memory_buffer_llc judges it later


@pytest.mark.parametrize("bad", ["automatic", "", -1, 0, 1.5, True])
def test_anything_else_is_refused_in_one_line_naming_the_way_out(bad):
    with pytest.raises(UsageError) as err:
        mp.validate_params({"buffer_kib": bad})
    msg = str(err.value)
    assert "buffer_kib" in msg and "auto" in msg and "\n" not in msg


@pytest.mark.parametrize("profile", ["quick", "standard"])
def test_the_profiles_size_it_from_this_machine(profile):
    p = mp.validate_params({k: v for k, v in load_profile(profile, mp.EXPERIMENT).items() if k != "profile"})
    assert p.buffer_kib == mp.auto_buffer_kib()
    assert p.buffer_kib * 1024 >= mp.MIN_BUFFER_LLC_MULTIPLE * mp.llc_bytes()
