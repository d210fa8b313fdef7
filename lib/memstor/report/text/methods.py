"""The report's method text, section by section: a short summary that the PDF prints and the full method that
only the HTML keeps (the synthesis notebook shows it in a cell tagged ``appendix``, memstor.report.export). A
section whose experiment did not run prints neither: its own cell says in one line what is not measured.
Pure text; the notebook decides whether a section's data is present."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Method:
    """One section's method: ``summary`` (two or three sentences, in the PDF) and ``details`` (the full
    method, markdown, in the HTML report only)."""

    summary: str
    details: str


#: The report sections with a method, by key (the synthesis notebook's order).
METHODS: dict[str, Method] = {
    "workloads": Method(
        summary="""Random and sequential I/O at every block size (`fio-block-size`) and share of reads (`fio-rw-ratio`):
small blocks measure the cost of an operation (IOPS), large blocks of moving bytes (MB/s). A mix is set beside the
weighted harmonic mean of the read-only and write-only IOPS, reached when reads and writes keep their own cost.""",
        details="""**Block size** (`fio-block-size`): random reads and writes at every block size at one queue depth, plus
sequential transfers at the spec sheet's block sizes. Small blocks measure the cost of an operation (IOPS), large
blocks the cost of moving bytes (MB/s); the block size where the bandwidth levels off is where the transfer starts
to dominate. **Read/write mix** (`fio-rw-ratio`): the share of reads from 100 % to 0 % at each block size. If every
read and every write kept its own cost, a mix with a share f of reads would reach the weighted harmonic mean
1 / (f / X_read + (1 − f) / X_write) of the read-only and write-only IOPS; a mix well below it shows reads and
writes slowing each other down."""),
    "spec": Method(
        summary="""Each measured value beside the vendor's, ratio = measured / spec; the flag names every test condition that
differs between the two sides (outstanding I/O, block size, span, drive state, target; `?`: not known on one
side). The headline row (★) is the course assignment's target, 4K random write 130,000 IOPS.""",
        details="""Each measured value is put beside the vendor's value with the test conditions of both sides.
Ratio = measured / spec. The flag lists every condition that differs: outstanding I/O
(iodepth × jobs), block size, span (full raw device or a test file), state (steady state after
preconditioning, or fresh), target (raw device or a file on a filesystem) and MB (decimal);
a `?` marks a condition not known on one side (e.g. imported data). The headline row (★) is the
target the course assignment gives: 4K random write 130,000 IOPS. The measured point is the
queue-depth experiment's spec-conditions point (4K at QD 32 × 4 jobs = 128 outstanding I/Os, as on
the spec sheet) when it exists, else the nearest point of the closed-loop sweeps, whose selection names the spec
conditions the sweeps did not measure. No ratio is printed where the target is not the sheet's kind of drive (a
virtual disk, a loop device): it would compare two different devices (spec_comparison.csv keeps the number)."""),
    "steady_state": Method(
        summary="""`fio-steady-state` follows the SNIA PTS: the target written twice sequentially (the table says over what), then
rounds of 4 KiB random writes at QD 32 × 4 jobs until the last 5 rounds stay within 20 % (range) and 10 % (slope) of their average ("not
achieved" is a result). The spec table takes the window average as steady state only where the checks let it stand
(no drift, rounds of 10 s or more, not far above the fresh drive).""",
        details="""Spec sheets give random-write IOPS in **steady state**: after the whole span was written (preconditioning)
and the drive's background work settled. The `fio-steady-state` experiment follows the SNIA Solid State
Storage Performance Test Specification: two sequential 128 KiB write passes over the span, then rounds of
4 KiB random writes at QD 32 × 4 jobs. After every round the last 5 rounds form the measurement window:
steady state means the IOPS range (max − min) is at most 20 % of the window average (data excursion) and
the least-squares line changes by at most 10 % of the average across the window (slope excursion). The run
stops at the first steady window or at the round limit; "not achieved" is a result. Where a device has
such a run, the spec table above compares the window average, and its state condition matches only when
the rule was met and the steady-state checks let it stand: a window that still drifts (every step the same way,
5 % or more) or rounds shorter than 10 s leave it "steady state not shown"; a trace that jumps or a level far
above the fresh drive's make it not valid, and the table withholds it. The window average is one run: its
rounds follow one another and are not repetitions. On a test file the span is the file, not the whole drive
(the span and target flags say so)."""),
    "wsat": Method(
        summary="""`fio-write-saturation` writes without pause (4 KiB random as PTS WSAT, 128 KiB sequential) to a multiple of
the span and records every second; lasting level changes (cliffs) are change points with the levels before and
after, and a drop is thermal when the drive reached its warning temperature or throttled.""",
        details="""A drive writes fast while its fast tier lasts (the SLC cache of a TLC or QLC drive, a DRAM buffer), then falls to
what its flash sustains, and lower again when it throttles from heat. `fio-write-saturation` writes without pause
(4 KiB random writes as PTS WSAT, and 128 KiB sequential: copying a big file) until a multiple of the span, and
records every second. Lasting level changes are change points (`ruptures`, penalty from the series' own noise),
each with where it happens (s, GB written) and the levels before and after (95 % intervals); "no cliff" is a
result too. A drop is **thermal** when the drive reached its warning temperature or throttled around it; where
the temperature cannot be read the table says why. The spec comparison takes the sustained level (after the
cliff) for a sustained-write figure. `memstor cliffs` finds the same in anyone's fio logs."""),
    "little": Method(
        summary="""fio keeps N = iodepth × jobs I/Os in flight, so by Little's law X · R = N (X: IOPS, R: mean total latency):
the residual 100 · (X · R − N) / N shows how well the queue was kept full (clearly negative: fewer I/Os in
flight than asked for). Every fixed-depth closed-loop point is judged; fio's latency_target runs, whose depth varies,
and the open-loop rates (§4.4) are not among them.""",
        details="""In a closed system that always keeps N requests in flight, Little's law N = X · R holds exactly in
steady state: X is the throughput (IOPS) and R the mean response time (fio's total latency `lat`,
from submission to completion). fio keeps N = iodepth × numjobs I/Os outstanding, so X · R should
equal N. The residual 100 · (X · R − N) / N shows how well the queue was kept full: a clearly
negative residual means fewer I/Os were really in flight than asked for (the I/O engine or the CPU
could not submit fast enough, or the I/O completed without queueing, e.g. from a cache); a clearly positive
one is more than a closed loop of N can hold, so it is an accounting difference between fio's IOPS and its
latency (time bases), not the device; a residual within a few percent is normal (ramp and reaping gaps)."""),
    "knee": Method(
        summary="""A closed sweep's throughput is bounded by X(N) ≤ min(N / R_min, X_max), X_max the ceiling of what
was measured (the device, or the CPU and jobs submitting its I/O: a point with more jobs above the one-job sweep
says the latter, unless the one-job job measured elsewhere is above it too); past the knee N* = X_max · R_min more I/Os in flight add only latency. Two estimates: the
two-asymptote fit (X_fit and R_min ± standard errors, N* with its 95 % interval) and the closed-system bound
N* ≥ X_best · R(N_min) (X_best: the most the sweep measured, any job count; R at its smallest N), a lower bound.""",
        details="""Operational analysis bounds a closed system's throughput by X(N) ≤ min(N / R_min, X_max). With few
requests in flight each sees the unloaded latency R_min, and throughput grows in proportion to N
(latency bound, N / R_min). Once the bottleneck — the device's parallel flash channels, or the CPU
submitting I/O — is saturated, throughput stays at X_max and more requests only wait: the latency
grows as N / X_max (throughput bound). The two asymptotes cross at the knee **N* = X_max · R_min**:
fewer I/Os in flight leave throughput unused, more add only latency. Two numbers are given, and named
apart: the **two-asymptote fit** — R_min and the ceiling **X_fit** fitted with scipy (least squares on log
IOPS, so the low-N and the high-N points weigh alike), each ± its standard error, and N* = X_fit · R_min with
its 95 % interval — and the **closed-system bound** N* ≥ X_best · R(N_min) from the measured inputs (**X_best**
the highest IOPS the sweep measured, its spec-conditions point included, R(N_min) the latency at its smallest N;
a lower bound: X_best is at most the ceiling, and where the sweep still rises the data set no upper bound). A
fitted N* whose 95 % interval lies below that bound is not stated as a finding. The open loop's reference X_ref (§4.4)
is a third number: the best IOPS of every closed-loop run of the workload (the sweep and fio-block-size). The
figures draw the two-asymptote fit (dashed) over the data and mark N* with a star; the lower panels show the same data as latency against throughput — flat latency up
to the knee, then a wall at the ceiling. Hollow markers are points not in the fit (the spec-conditions
point with 4 jobs, or a second point at the same N). Every comparison of two single runs here uses one
run-to-run spread: the largest ratio between two experiments' measurements of one configuration where the run
measured one (config_agreement's pairs), else 10 % assumed, and then said to be assumed, not measured (DIRTH's
reruns and the steady-state rounds measure the preconditioned drive, another state, and are not counted). The fitted N*
is not stated where a point measured past it lies more than 10 % above X_fit (beyond its 95 % interval where it has
one) while the sweep's last step still gained more than that spread: the sweep has not levelled off, so it shows no
knee (validity check knee_plateau); where it levelled off above X_fit beyond the spread, N* is stated with those
points beside it; above X_fit within the spread, whether it levels off there is not shown. No fit is stated of a
sweep the same one-job job measured elsewhere beat by more than the spread (knee_sweep_agrees): that sweep is not
shown to be the target's."""),
    "curves": Method(
        summary="""Memory curves (loaded latency: a pointer chase while load threads are throttled by an inject delay) and
storage curves (the closed queue-depth sweep, the open loop's held rates) go through one analysis: a plateau of ≥ 3
points within 2 % marks saturation; the open-queue model R = R0 + a·ρ/(1−ρ) is fitted only below it (its peak not
identifiable when unbounded or beyond 1.5× the highest throughput measured); the throughput where latency reaches
1.25 and 2 × R0 is read off the measured points, never extrapolated.""",
        details="""MLC's loaded-latency test (`mlc --loaded_latency`, or memstor's MLC-compatible `loadlat`) runs one thread that
measures latency with a dependent pointer chase while the other cores generate memory traffic, throttled by an
**inject delay** between their requests (a think time, not a queue length: delay 0 is the heaviest load). Each
delay gives one point (bandwidth, latency). The storage curves are the queue-depth sweep (closed loop: N I/Os
in flight) and the offered-load sweep of section 4.4 (open loop: only its rates whose loop held and that kept up
are points of the curve, the table says how many of the rates offered; fewer than 2: no curve). All of them go
through one analysis
(`memstor.analysis.curves`), with one vocabulary:

- **Plateau (saturated)**: at the heaviest loads, a run of three or more points whose throughput changes by less
  than 2 % from one to the next; `b_sat` is its mean. A closed loop (a fixed number of outstanding misses or
  I/Os) saturates there, and its latency then grows only with the work in flight (Little's law: outstanding =
  throughput × latency / access size, given for every point). A **hook** is the heaviest points losing
  throughput while latency still rises.
- **Open-queue fit** R = R0 + a·ρ/(1−ρ), ρ = throughput / peak, fitted only **below the plateau**, with 95 %
  profile-likelihood intervals for R0, a and the peak; the peak is never above the plateau. It is **not
  identifiable** (shown as such, with the reason) when the peak's interval is unbounded or more than 1.5× the
  highest throughput measured, or when too few points lie below the plateau.
- **Held-out check**: fitted on the points below 80 % of the measured maximum, the model predicts the top
  points; the error is given where that prediction is bounded.
- **Model-free levels**: the throughput where the measured latency first reaches 1.25 × R0 and 2 × R0 (the
  knee), interpolated between measured points; *not reached* is censored, never extrapolated. For memory also
  R(B_max)/R0, the write penalty against the read-only curve and the estimated DRAM read share (plain stores
  add a read-for-ownership per line, non-temporal stores do not).
- **Quality gate** (loadlat): a point passes when its bandwidth varies by less than 5 % and its latency by less
  than 2 % across the sub-windows of its measurement, every measuring thread got ≥ 90 % of its CPU and steal
  time stayed ≤ 2 %; a failing point is re-measured (profile key `max_remeasure`), and the table says how many
  points of each curve never passed.
- **Pacing**: MLC's load threads wait a fixed delay loop between requests, so arrivals are nearly periodic with
  few threads; loadlat's `--pacing=exp` draws each delay from an exponential with the same mean (Poisson-like
  arrivals). Where a device has both, the latency of each at the same bandwidth is compared."""),
    "openloop": Method(
        summary="""`fio-load-latency` offers Poisson arrivals at 10 … 98 % of X_ref (the best IOPS of the workload in the queue-depth and block-size sweeps; other closed runs
may measure more: the headline table says where)
and measures the latency each rate gets; the paragraphs below the table name the generator (memstor's ioarrive or
fio's rate mode) and what its latency is. A rate holds where its generator's checks passed and it achieved within ±5 % of
the offered rate; the SLO answer (the highest IOPS whose p99 meets each target) is read from the rates that held only
(a lower bound where a rate between did not hold; none where held rates meet, miss and meet again), and queueing
models (M/M/1, M/G/1, M/G/c) only where every rate held.""",
        details="""The queue-depth sweep is a closed loop: N I/Os always in flight, so latency follows N / X by Little's law.
The `fio-load-latency` experiment offers a rate instead — Poisson arrivals at 10 … 98 % of **X_ref**, the best IOPS
of the same workload in this device's closed-loop runs (the queue-depth sweep and fio-block-size, on a file of the
same size; else a short closed-loop fio probe, else the profile's
`x_max_iops`; the table's X_ref column and `x_max_source` say which) — and measures the latency each rate gets.
The rows' `generator` column says which generator issued a point (a table without it is fio's):

- **ioarrive** (`generator: ioarrive`, the default; `lib/ioarrive/`): one process per rate issues every I/O at its
  intended arrival time whatever is in flight (io_uring where the kernel allows it, else Linux AIO, else a pool
  of synchronous threads — the table's ioengine column; O_DIRECT; up to 4096 I/Os in flight, reaching the cap
  marks the run overloaded) and times it three ways: **response** = completion − intended arrival (the latency
  of this section: what a user waits, the generator's own lateness included, so nothing is hidden), **service**
  = completion − submission, **lag** = submission − intended arrival. It checks itself: achieved within ±5 % of
  offered (both sides), the arrivals it issued tested against the Poisson process asked (exponential gaps by
  Kolmogorov–Smirnov, no trend, independence; on the intended and on the submitted times), p99 lag under
  max(10 % of the p99 response, 20 µs) (else *generator-bound*), nothing left unfinished. A rate holds only
  when every check passed.
- **fio** (`generator: fio`, and data measured before ioarrive): `rate_iops` with `rate_process=poisson`, the
  rate split over jobs so that fio's truncated Poisson gaps do not overshoot it, the submit mode probed. fio
  times latency from its actual submission, never from the intended arrival, and in inline mode (its default)
  waits for the I/O in flight before each rate sleep, so arrivals bunch behind completions and the loop partly
  closes (*arrivals gated*); a point whose queue reached the per-job iodepth ceiling may have made arrivals wait
  (*ceiling*). A rate holds only when it achieved within ±5 % and the probe saw this mode's arrivals Poisson at
  the point's load.

A point whose achieved IOPS fell below 95 % of the offered rate is *overloaded*. The models use the service time S
of the QD1 point and its squared coefficient of variation cs² (json+ histogram): M/M/1 R = S/(1−ρ), M/G/1
(Pollaczek–Khinchine) R = S + ρS(1+cs²)/(2(1−ρ)), and M/G/c (Allen–Cunneen with Erlang C) with c, the effective
number of servers, fitted to the points that kept up. The SLO answer is the highest achieved IOPS whose p99
meets each target, interpolated between measured rates; both are given only for workloads whose loop held."""),
    "hierarchy": Method(
        summary="""`mem-hierarchy` chases pointers through buffers from 4 KiB to the profile's largest size (meant to pass the
last-level cache; the sentence below the table says whether it did): each cache level is a latency plateau, set
beside the kernel's cache sizes; 4 KiB against 2 MiB pages give a page walk's cost, and N independent chains in one
thread turn latency into bandwidth, X = N × 64 B / R.""",
        details="""The `mem-hierarchy` experiment chases pointers through buffers from 4 KiB to the profile's largest size,
meant to be several times the last-level cache (loadlat `--working_set`, as lmbench's `lat_mem_rd`): each cache level is a plateau of the latency
curve, and where a plateau ends is how much that level holds. They are set beside the sizes the kernel
reports; a level that ends far from its size (a factor 2) is named — on a VM the last-level cache is shared
with other guests. 4 KiB pages against 2 MiB pages beyond the TLB's reach give the cost of a page walk.
Memory-level parallelism (loadlat `--mlp`, as multichase's `parallelN`): N independent chains in one
thread keep N misses in flight, and Little's law turns latency into bandwidth, X = N × 64 B / R: the
bandwidth is derived from the measured latency (one clock), so it is no check of the law; where it stops growing is how many misses a core can keep outstanding.
Only runs whose measuring thread was on a CPU 90-101 % of the time (hierarchy_cpu_share) give a level, a page walk's
cost or an MLP figure: a thread that waited for a CPU timed the wait too; the sizes and thread counts left out are
named."""),
    "read_ratio": Method(
        summary="""Mess (Esmaili-Dokht et al., MICRO 2024) publishes latency–bandwidth curves per DRAM read share; memstor's
read/write mixes form such a family (a plain store also reads its line for ownership), drawn beside the published
platforms nearest to this machine's read-only curve (whole sockets: compare latency and shape, not bandwidth).""",
        details="""Mess (Esmaili-Dokht et al., MICRO 2024) publishes, per platform, one latency–bandwidth curve per **read share
of the DRAM traffic**. A plain store also reads its line for ownership, so r reads and w plain writes make
(r + w) / (r + 2w) DRAM reads, non-temporal writes r / (r + w): memstor's mixes (MLC `-W`, loadlat
`--read_share`, profile key `read_shares`) form such a family, estimated by construction. The published
platforms drawn are the nearest to this machine's read-only curve; they are whole sockets, so compare unloaded
latency and shape, not bandwidth."""),
}


def summary(key: str, present: bool = True) -> str:
    """The section's method in brief (markdown) when its data is present, else ''."""
    return " ".join(METHODS[key].summary.split()) if present else ""


#: The curves summary's lead, per kind of curve measured: (memory, storage) -> its subject.
_CURVES_LEAD = {
    (True, True): None,  # the summary as written: both kinds
    (True, False): "The memory curves (loaded latency: a pointer chase while load threads are throttled by an inject "
                   "delay) go",
    (False, True): "The storage curves (the closed queue-depth sweep, the open loop's held rates) go",
}


def curves_summary(memory: bool, storage: bool) -> str:
    """The latency–throughput section's method in brief for the curves measured (markdown): the memory curves' or the
    storage curves' words only where the other kind did not run; '' where neither did."""
    if not (memory or storage):
        return ""
    text = summary("curves")
    lead = _CURVES_LEAD[(memory, storage)]
    return text if lead is None else lead + text[text.index(" through one analysis"):]


def details(key: str, present: bool = True) -> str:
    """The section's full method (markdown, for the HTML appendix) when its data is present, else ''."""
    return METHODS[key].details if present else ""


def present(table) -> bool:
    """Whether a section's table holds data (not None, at least one row)."""
    return table is not None and len(table) > 0
