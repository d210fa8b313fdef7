"""Every table the report shows, also as CSV: ``report/tables/<name>.csv`` (units in the column names,
empty cell = not available). Students paste them into their own reports; checks read numbers from them
without parsing HTML."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd

from memstor.core.files import atomic_write
from memstor.report.csv_gate import gate_tables

#: Table name -> (Synthesis attribute, what one row is). Written in this order.
TABLES = {
    "headline": ("headline", "device x headline metric: value, its configuration, 95 % CI and n"),
    "spec_comparison": ("spec", "device x spec value: measured (with CI and n), spec, ratio, conditions, flag"),
    "littles_law": ("little", "device x experiment x configuration: N, X, R, X·R, residual, band, flag, reason"),
    "knee": ("knees", "device x workload: two-asymptote fit (± SE, N* with 95 % CI) and closed-system bound"),
    "adaptive_grid": ("grid", "device x workload x queue depth of an adaptive queue-depth grid (iodepth: auto): "
                              "the step that added the point, IOPS, mean latency and why it was added"),
    "memory_fit": ("mem", "device x loaded-latency curve: saturation (plateau, hook), open-queue model below the "
                          "plateau with 95 % CIs and identifiability, held-out error, curve-family metrics"),
    "memory_pacing": ("pacing", "device x traffic x access size x bandwidth (50 and 90 % of the lower maximum): "
                                "latency under fixed and exponential load pacing, difference"),
    "memory_sections": ("mem_sections", "device x MLC default-run section (latency_matrix, bandwidth_matrix, "
                                        "max_bandwidth, c2c_latency) x what x source node x destination node: n, "
                                        "mean value (ns or MB/s) and 95 % CI"),
    "storage_fit": ("storage", "device x storage curve (closed queue-depth sweep, open loop): the same analysis "
                               "and names as memory_fit, in IOPS and µs"),
    "steady_state": ("steady", "device: SNIA PTS steady-state verdict, window, window averages, bytes written"),
    "load_latency": ("load", "device x workload x offered rate: offered/achieved IOPS, mean/p50/p99/p99.9 latency, "
                             "flags, stability, the closed loop at the same IOPS"),
    "slo": ("slo", "device x workload x p99 target: the highest IOPS meeting it (interpolated; censored)"),
    "load_latency_models": ("load_models", "device x workload x offered rate: M/M/1, M/D/1, M/G/1, M/G/c predictions "
                                           "and errors"),
    "drive": ("drive", "device x drive field: identity, PCIe link, health before/after and delta, or why not available"),
    "interface": ("interface", "device x spec sheet: measured PCIe link vs the sheet's interface, flag"),
    "cluster": ("cluster", "fleet x experiment x grid point x direction: the hosts measured at once, summed IOPS "
                           "and MB/s, cluster latency percentiles from their merged json+ bins (µs)"),
    "summary": ("points", "device x experiment x configuration x direction: n, means and 95 % CIs"),
    "validity": ("validity", "device x check x subject: status (pass/warn/fail), the numbers behind it, what follows "
                             "for the reader, the report section it gates"),
    "wsat": ("wsat", "device x write-saturation run: span and its state, TGBW, burst and sustained levels (MB/s, "
                     "95 % CI), sustained IOPS, cliffs and where the first is, temperature sampling"),
    "wsat_cliffs": ("wsat_cliffs", "device x run x cliff: time (s) and GB written where it happens, the levels before "
                                   "and after with 95 % CIs, kind (cliff, recovery, thermal) and the thermal evidence"),
    "thermal": ("thermal", "device x run x reading: drive temperature (°C), its thresholds and throttle counters, or why "
                           "there is none"),
    "ceilings": ("ceilings", "device x ceiling (DRAM peak, storage interface): MB/s and the arithmetic, or why unknown; "
                             "the best measured number it bounds and its % of the ceiling"),
    "above_ceiling": ("above_ceiling", "storage points faster than their device's interface: not the drive (page cache, "
                                       "compression or another device); kept out of the spec comparison"),
    "cache_levels": ("cache_levels", "device x level (L1, L2, L3, memory, TLB cost): latency (ns, clocks), the buffer size "
                                     "where it ends, the kernel's cache size beside it and whether they agree"),
    "working_set": ("working_set", "device x pages x pattern x buffer size: mean latency (ns) and batch percentiles"),
    "mlp": ("mlp", "device x threads x chains: latency (ns), bandwidth (MB/s), Little's law and its residual, saturated"),
    "memory_read_ratio_fit": ("read_ratio", "device x family x memory curve with its read share (% of requests, "
                              "estimated % of DRAM traffic): B_max, R0 and peak with 95 % intervals (MB/s, ns)"),
    "memory_reference": ("reference", "device x nearest published platform (Mess, BSD-3-Clause): log distance, "
                         "unloaded latency (ns), peak (MB/s) of both"),
    "hir": ("hir", "device x wait state (SNIA PTS HIR): access segments after an idle, IOPS with 95 % CI, the "
                   "steady-state baseline and the recovery ratio, departures from PTS"),
    "xsr": ("xsr", "device x transition (SNIA PTS XSR): levels before and after (MB/s, 95 % CI), the settle time and "
                   "its rule, departures from PTS"),
    "cbw": ("cbw", "device x threads x queue depth (SNIA PTS CBW): IOPS, MB/s, mean, maximum, p99 and p99.99 response "
                   "time (µs), departures from PTS"),
    "dirth": ("dirth", "device x threads x queue depth (SNIA PTS DIRTH): IOPS, mean and p99 response time (µs), the role "
                       "(max IOPS, min, optimal and mid under the ceiling), departures from PTS"),
    "dirth_histograms": ("dirth_histograms", "device x role x latency bin (µs): count and share of the response-time "
                                             "histogram at the min, mid, optimal and max-IOPS points"),
    "memory_figures": ("memory_figures", "device x quantity (idle latency, peak bandwidth) x measurement: tool, value, "
                                         "n, 95 % CI, and which one the headline uses"),
}


def report_tables(synthesis) -> dict[str, pd.DataFrame]:
    """{name: DataFrame} of every report table of a memstor.analysis.synthesis.Synthesis, what the PDF withholds
    empty with a ``not_valid`` reason (memstor.report.csv_gate)."""
    out = {}
    for name, (attr, _) in TABLES.items():
        df = getattr(synthesis, attr, None)
        out[name] = pd.DataFrame() if df is None else df
    return gate_tables(out, synthesis)


def write_tables(synthesis, outdir: Path | str) -> list[Path]:
    """Write every report table to ``outdir/<name>.csv`` atomically (an empty table keeps its header);
    returns the paths."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, df in report_tables(synthesis).items():
        buf = io.StringIO()
        df.to_csv(buf, index=False)
        path = outdir / f"{name}.csv"
        atomic_write(path, buf.getvalue())
        paths.append(path)
    return paths
