"""Discrete-event simulation of a FIFO queue with Poisson arrivals and c servers (pure; tests and teaching):
the response time of each customer, to check memstor.analysis.openloop's formulas (M/M/1, M/G/1, M/G/c) against.

Units: times in microseconds (``_us``), ``lam_per_us`` an arrival rate per microsecond (IOPS · 1e-6).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable

import numpy as np

from memstor.analysis.openloop import check_servers

_CHUNK = 1 << 20  # customers drawn per block (bounds memory; part of what a seed reproduces)


def _lindley_chunk(inter_us: np.ndarray, service_us: np.ndarray, w_prev: float, s_prev: float):
    """Response times (µs) of one block of a FIFO single-server queue, and the state for the next block.

    Lindley: W_n = max(0, W_{n−1} + S_{n−1} − A_n) (A_n: gap before arrival n), solved in closed form
    W_n = P_n − min(−W_0, min_{k<=n} P_k), P the cumulative sum of S_{n−1} − A_n (vectorised).
    w_prev, s_prev: wait and service of the customer before the block (0, 0 at the start: W_0 = 0).
    """
    u = np.concatenate(([s_prev], service_us[:-1])) - inter_us
    p = np.cumsum(u)
    w = p - np.minimum(-w_prev, np.minimum.accumulate(p))
    return w + service_us, float(w[-1]), float(service_us[-1])


def _multiserver_chunk(arrival_us: np.ndarray, service_us: np.ndarray, free_us: list) -> np.ndarray:
    """Response times (µs) of one block of a FIFO c-server queue; free_us is the heap of the times at which
    each server becomes free (updated in place). Each customer, in arrival order, starts on the server
    free first, at max(arrival, that time)."""
    out = np.empty(len(arrival_us))
    for i, (t, s) in enumerate(zip(arrival_us.tolist(), service_us.tolist())):
        start = t if t > free_us[0] else free_us[0]
        heapq.heapreplace(free_us, start + s)
        out[i] = start + s - t
    return out


def simulate_queue(lam_per_us: float, service_sampler: Callable[[np.random.Generator, int], np.ndarray],
                   n_customers: int, servers: int = 1, seed: int = 0) -> np.ndarray:
    """Simulate a FIFO queue with Poisson arrivals and c servers; the response time of each customer (µs).

    lam_per_us: arrival rate per microsecond (IOPS · 1e-6); service_sampler(rng, n): n service times in
    µs (>= 0) drawn from the numpy Generator it is given; n_customers: customers simulated; servers: c;
    seed: the Generator's seed — the same arguments give the same result. The queue starts empty, so
    drop a warm-up prefix before averaging. c = 1 uses the vectorised Lindley recursion (about 10^7
    customers a second), c > 1 an event loop over a heap of server free times (about 10^6 a second).
    """
    lam = float(lam_per_us)
    if not (math.isfinite(lam) and lam > 0):
        raise ValueError(f"lam_per_us (arrival rate per us) must be > 0, got {lam_per_us!r}")
    n = int(n_customers)
    if n < 1 or n != n_customers:
        raise ValueError(f"n_customers must be an integer >= 1, got {n_customers!r}")
    c = check_servers(servers, "servers")
    rng = np.random.default_rng(seed)
    out = np.empty(n)
    w_prev = s_prev = 0.0
    t0 = 0.0
    free = [0.0] * c
    for lo in range(0, n, _CHUNK):
        m = min(_CHUNK, n - lo)
        inter = rng.exponential(1.0 / lam, m)
        serv = np.asarray(service_sampler(rng, m), dtype=float)
        if serv.shape != (m,) or not np.all(np.isfinite(serv)) or np.any(serv < 0):
            raise ValueError(f"service_sampler must return {m} finite service times >= 0 (us)")
        if c == 1:
            out[lo:lo + m], w_prev, s_prev = _lindley_chunk(inter, serv, w_prev, s_prev)
        else:
            arrivals = t0 + np.cumsum(inter)
            t0 = float(arrivals[-1])
            out[lo:lo + m] = _multiserver_chunk(arrivals, serv, free)
    return out
