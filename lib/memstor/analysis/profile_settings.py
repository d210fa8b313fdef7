"""What a profile asks of the report, beside its experiments' runs: the SLO answer's p99 targets (the
fio-load-latency section's ``slo_p99_us``) and the DRAM ceiling's channels and transfer rate when SMBIOS cannot
say them (the mlc-loaded-latency section's ``memory_channels`` / ``memory_mts``). Reads the profile
(memstor.core.profiles); every other analysis module reads tables only."""

from __future__ import annotations

from memstor.core import profiles
from memstor.core.errors import UsageError

#: The SLO answer's p99 target (µs) when no profile section names one.
DEFAULT_SLO_P99_US = 1000.0


def slo_targets(profile: str | None = None, experiment: str = "fio-load-latency") -> list[float]:
    """The p99 targets (µs) of the SLO answer: ``slo_p99_us`` of the profile's fio-load-latency section
    (the default profile when None; ``experiment="mixed-load-map"``: the read capacity's targets), else
    [DEFAULT_SLO_P99_US]."""
    try:
        section = profiles.section(profile or profiles.DEFAULT_PROFILE, experiment)
    except UsageError:
        return [DEFAULT_SLO_P99_US]
    return [float(t) for t in section.get("slo_p99_us") or [DEFAULT_SLO_P99_US]]


def dram_overrides(profile: str | None = None) -> dict:
    """``memory_channels`` / ``memory_mts`` of the profile's mlc-loaded-latency section (the default profile
    when None) where set (> 0): what the DRAM ceiling uses when SMBIOS cannot say it (a VM); {} otherwise."""
    try:
        section = profiles.section(profile or profiles.DEFAULT_PROFILE, "mlc-loaded-latency")
    except UsageError:
        return {}
    out = {}
    for key in ("memory_channels", "memory_mts"):
        value = section.get(key) or 0
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0 or value != int(value):
            raise UsageError(f"profile {profile or profiles.DEFAULT_PROFILE!r}: mlc-loaded-latency {key}={value!r}: "
                             "use a whole number (0 = read it from SMBIOS)")
        if value:
            out[key] = int(value)
    return out
