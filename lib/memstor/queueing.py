"""Queueing theory helpers: Little's law, operational bounds of a closed system, M/M/1-style fits.

Units are in the names: iops (I/O per second), lat_us (microseconds), outstanding (I/Os in flight).
"""

from __future__ import annotations


def littles_law_outstanding(iops: float, lat_mean_us: float) -> float:
    """Outstanding I/Os implied by Little's law: N = X * R (X in IO/s, R in us -> R * 1e-6 s)."""
    return iops * lat_mean_us * 1e-6


def littles_law_residual_pct(outstanding: float, iops: float, lat_mean_us: float) -> float:
    """Residual of Little's law in percent of the intended outstanding I/O: 100 * (X*R - N) / N."""
    if outstanding <= 0:
        raise ValueError(f"outstanding I/O must be > 0, got {outstanding}")
    return 100.0 * (littles_law_outstanding(iops, lat_mean_us) - outstanding) / outstanding
