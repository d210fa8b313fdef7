/* loadlat - an open, MLC-compatible loaded-latency tool (memstor).
 *
 * Shared declarations of the translation units (and the one random number generator, the
 * exponential delay sampler and the cheap time stamps, inline here so that every user compiles the same
 * code):
 *   main.c, options.c, run.c, output.c, sections.c, numa_sections.c: the tool itself (options, thread
 *              orchestration, the sections, MLC-style text output, JSON sidecar); their shared declarations
 *              are in tool.h; hier.c, wset.c, mlp.c the memory-hierarchy modes (hier.h)
 *   kernels.c  load-generation kernels (read / write / non-temporal / triad), delay loop, calibrations
 *              (kernel_tmpl.h: the body of one kernel, included once per instruction set)
 *   memory.c   buffers (mmap, huge pages, first touch, THP evidence), latency chain
 *   cpus.c     CPU lists (parse, format), the affinity mask, pinning
 *   clocks.c   time sources (CLOCK_MONOTONIC, thread CPU time) and sleeping
 *   numa.c     NUMA nodes from sysfs, mbind / get_mempolicy (raw system calls), SMT siblings
 *   c2c.c      cache-to-cache latency: one line bounced between two pinned threads
 */
#ifndef LOADLAT_H
#define LOADLAT_H

#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define LOADLAT_VERSION "0.5"
#define CORE_GHZ_METHOD "chain of dependent register adds, 1 add = 1 core clock"
#define LOADLAT_MAX_CPUS 4096
#define HUGE_2M ((size_t)2 << 20)
#define LOADLAT_MAX_WINDOWS 100  /* sub-windows per point (--windows) */

/* Phases a measurement point goes through; written by the main thread only. */
enum phase { PH_WARMUP = 1, PH_MEASURE = 2, PH_STOP = 3 };

/* A -R / -W traffic pattern: per request group, `reads` reads and `writes` writes of access_bytes each. */
struct traffic {
    const char *code;   /* "R", "W2" ... "W10" */
    const char *label;  /* memstor traffic label, e.g. "2:1-nt" */
    const char *mlc;    /* MLC's wording, e.g. "2 reads and 1 non-temporal write" */
    int reads;          /* read requests per group */
    int writes;         /* write requests per group */
    int nt;             /* writes are non-temporal stores */
    int triad;          /* reads come from two buffers and the write is their sum (stream triad like) */
};

const struct traffic *traffic_lookup(const char *code);  /* NULL when unknown */
const struct traffic *traffic_share(int pct);  /* --read_share=P (kernels.c); NULL outside 0..100 */

/* One buffer owned (allocated, first-touched) by one thread. */
struct buffer {
    void *base;           /* mmap result (for munmap) */
    size_t map_len;       /* bytes mapped */
    unsigned char *p;     /* 2 MiB aligned start */
    size_t len;           /* usable bytes */
    long long anon_huge_kib;  /* AnonHugePages of its mapping in /proc/self/smaps (-1 unknown) */
};

/* Allocate `len` bytes aligned to 2 MiB, madvise huge pages on (huge=1) or off (huge=0), first-touch
 * every page by writing `fill`. Returns 0 or an errno-style error with a message in err. */
int buffer_alloc(struct buffer *b, size_t len, int huge, unsigned char fill, char *err, size_t errlen);
void buffer_free(struct buffer *b);
/* AnonHugePages (KiB) of the mapping holding addr, from /proc/self/smaps; -1 when it cannot be read. */
long long smaps_anon_huge_kib(const void *addr);

/* Build a random cyclic pointer chain over the buffer: slots of `slot` bytes visited in random order,
 * each pointer at a random 8-byte-aligned offset inside its slot. Returns the start pointer. */
void **chain_build(struct buffer *b, size_t slot, uint64_t seed);
/* The same chain; *order (when order is not NULL) gets the visiting order, slot indexes in chain order
 * (malloc'd, the caller frees it): the k-th load of a chase from the start is slot order[k]. */
void **chain_build_order(struct buffer *b, size_t slot, uint64_t seed, uint32_t **order);
/* Where chain_build puts the pointer of slot `slot_index` (its random 8-byte offset inside the slot). */
void **chain_slot_at(const struct buffer *b, size_t slot, uint64_t seed, size_t slot_index);

/* Random numbers: splitmix64, the one generator of loadlat (latency chain order and offsets, random load
 * order, exponential delays; one state per thread). Any seed is fine (0 too); its output is also a good
 * 64-bit hash of the state, which chain_build uses per slot. Seeds k * 0x9E3779B97F4A7C15 give one stream
 * shifted by k: mix them first. */
static inline uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline uint64_t rng_below(uint64_t *s, uint64_t n)  /* uniform in [0, n) (multiply-shift) */
{
    return (uint64_t)(((unsigned __int128)rng_next(s) * n) >> 64);
}

/* Exponential delays (--pacing=exp): inverse-CDF sampling from a table, so that a draw costs one random
 * number, one table lookup and a multiply-add (no log()). The table holds the quantiles
 * q[i] = -ln(1 - i/K) of the unit exponential at K = 4096 equiprobable bins. One splitmix64 output
 * gives everything: its top 12 bits pick the bin, the next 26 bits the position inside it (linear
 * interpolation between the bin's quantiles), the low 26 bits a uniform dither that turns the scaled
 * draw into whole delay-loop iterations without bias (E[floor(x + u)] = x, so means of a few units stay
 * exact). The last bin [q[K-1], inf) uses memorylessness: Exp | Exp > q  =  q + Exp, so it adds q[K-1]
 * and draws again (the tail is exact and unbounded). (Two outputs per draw, every other one for the
 * bin, failed Kolmogorov-Smirnov tests across seeds: splitmix64 at an even stride is a poor stream.)
 * exp_table_init() must run once before any draw. */
#define EXP_TABLE_BITS 12
#define EXP_TABLE_SIZE (1u << EXP_TABLE_BITS)
extern double exp_q[EXP_TABLE_SIZE];  /* bin start quantiles of Exp(1) */
extern double exp_w[EXP_TABLE_SIZE];  /* bin widths q[i+1] - q[i] (the last is unused) */
void exp_table_init(void);

/* One draw of Exp(1) from the table; *dither gets a uniform [0, 1) from the same random number. */
static inline double exp_unit(uint64_t *s, double *dither)
{
    double x = 0.0;
    for (;;) {
        uint64_t r = rng_next(s);
        uint32_t i = (uint32_t)(r >> (64 - EXP_TABLE_BITS));
        double f = (double)((r >> 26) & ((1ull << 26) - 1)) * 0x1p-26;
        if (i < EXP_TABLE_SIZE - 1) {
            *dither = (double)(r & ((1ull << 26) - 1)) * 0x1p-26;
            return x + exp_q[i] + f * exp_w[i];
        }
        x += exp_q[EXP_TABLE_SIZE - 1];  /* tail: memoryless restart */
    }
}

static inline uint64_t exp_draw(uint64_t *s, double mean)  /* whole delay-loop iterations, E = mean */
{
    double u;
    double x = exp_unit(s, &u) * mean;
    return (uint64_t)(x + u);
}

/* The architecture, for messages. loadlat is built for Linux on x86-64 and aarch64 (`make loadlat`,
 * `make loadlat-arm64`); elsewhere it builds with the generic kernel and without non-temporal stores. */
#if defined(__x86_64__)
#define LOADLAT_ARCH "x86-64"
#elif defined(__aarch64__)
#define LOADLAT_ARCH "aarch64"
#else
#define LOADLAT_ARCH "this architecture"
#endif

/* Cheap time stamps for the inter-request times of load threads (arrival_cv): the TSC (rdtsc) on
 * x86-64, the virtual counter CNTVCT_EL0 on aarch64 (the Arm generic timer, readable at EL0 on Linux; a
 * fixed rate CNTFRQ_EL0, not the core clock; aarch64 has no TSC), CLOCK_MONOTONIC in ns elsewhere. */
#if defined(__x86_64__)
#include <x86intrin.h>
#define TICK_CLOCK "rdtsc"
static inline uint64_t tick_now(void) { return __rdtsc(); }
#elif defined(__aarch64__)
#define TICK_CLOCK "cntvct_el0"
static inline uint64_t tick_now(void)
{
    uint64_t v;
    __asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
    return v;
}
#else
#include <time.h>
#define TICK_CLOCK "clock_gettime(CLOCK_MONOTONIC)"
static inline uint64_t tick_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
#endif
double tick_ghz(double tsc_ghz);  /* ticks per ns of tick_now (x86: the measured TSC rate; aarch64: CNTFRQ_EL0
                                     checked against CLOCK_MONOTONIC; clocks.c) */

/* Sampled inter-request times of one load thread (ticks), binned on a log scale (8 bins per octave) with
 * the exact count, sum and sum of squares of each bin, so that the moments can be computed later over the
 * intervals below a cutoff (run.c excludes interruptions: intervals > 20 x the median). */
#define GAP_BINS 512
struct gap_hist {
    uint64_t n[GAP_BINS];
    double sum[GAP_BINS], sq[GAP_BINS];
};

static inline unsigned gap_bin(uint64_t x)
{
    if (x < 8)
        return (unsigned)x;
    unsigned e = 63u - (unsigned)__builtin_clzll(x);
    return e * 8u + (unsigned)((x >> (e - 3)) & 7u);
}

/* Sub-window boundaries of one thread in one point: index 0 = start of the measured window, nwin = its
 * end; each stamped when the thread saw the main thread's sub-window counter change. */
struct win_marks {
    double t[LOADLAT_MAX_WINDOWS + 1];    /* CLOCK_MONOTONIC s */
    double cpu[LOADLAT_MAX_WINDOWS + 1];  /* thread CPU time s */
    uint64_t n[LOADLAT_MAX_WINDOWS + 1];  /* request groups (load) or chased loads (latency) so far */
};

/* Stamp every boundary after `cur` up to `to` with (now, cpu, n): a thread that missed a boundary stamps it
 * late (an empty sub-window). Returns the new current boundary (`to` when it was ahead). */
static inline int marks_stamp(struct win_marks *m, int cur, int to, double now, double cpu, uint64_t n)
{
    while (cur < to) {
        cur++;
        m->t[cur] = now;
        m->cpu[cur] = cpu;
        m->n[cur] = n;
    }
    return cur;
}

/* The sub-window the main thread has reached (its counter, capped at the last of `nwin`); a relaxed load
 * on the hot path of the load and latency threads. */
static inline int subwin_reached(_Atomic int *subwin, int nwin)
{
    int w = atomic_load_explicit(subwin, memory_order_relaxed);
    return w > nwin - 1 ? nwin - 1 : w;
}

/* Close a thread's measured window at (now, cpu, n): stamp its last boundaries up to `nwin`, set the window
 * (t0, t1) and the CPU time inside it (cpu_s); returns the count inside it (n since the first boundary). */
static inline uint64_t marks_close(struct win_marks *m, int *cur, int nwin, double now, double cpu, uint64_t n,
                                   double *t0, double *t1, double *cpu_s)
{
    *cur = marks_stamp(m, *cur, nwin, now, cpu, n);
    *t0 = m->t[0];
    *t1 = now;
    *cpu_s = cpu - m->cpu[0];
    return n - m->n[0];
}

/* Time (clocks.c). */
double now_s(void);                     /* CLOCK_MONOTONIC in seconds */
double thread_cpu_s(void);              /* CLOCK_THREAD_CPUTIME_ID in seconds (CPU time of this thread) */
void sleep_s(double s);                 /* nanosleep, returns early on a signal */

/* CPUs (cpus.c). */
int cpu_list_parse(const char *text, int *cpus, int max, char *err, size_t errlen); /* count, or -1 + err */
void cpu_list_format(const int *cpus, int n, char *out, size_t len);                /* {1,2,3,5} -> "1-3,5" */
int cpu_list_has(int cpu, const int *cpus, int n);
int allowed_cpus(int *cpus, int max);   /* CPUs in this process's affinity mask, ascending */
int pin_self(int cpu);                  /* 0 or errno */
int cache_line_bytes(void);             /* sysfs coherency_line_size of cpu0 index0, 64 when unknown */

/* Kernels (kernels.c). */
struct load_args {
    const struct traffic *tr;
    unsigned char *rd, *rd2, *wr;       /* read buffer, second read buffer (triad), write buffer */
    size_t rd_len, wr_len;              /* bytes usable (multiples of access) */
    size_t access;                      /* bytes per request (multiple of 64) */
    uint64_t delay;                     /* delay-loop iterations after each request group (fixed pacing) */
    int pacing_exp;                     /* exponential delays of mean delay_mean (else fixed `delay`) */
    double delay_mean;                  /* mean of the exponential delays, delay-loop units */
    int random;                         /* random block order instead of sequential */
    uint64_t seed;
    _Atomic int *phase;
    _Atomic int *subwin;                /* sub-window index set by the main thread while measuring */
    int nwin;                           /* sub-windows per point */
    double tick_ns;                     /* cost of one tick_now() (sets the arrival sampling period) */
    /* results */
    double t0, t1;                      /* measured window (CLOCK_MONOTONIC s) */
    double cpu_s;                       /* CPU time the thread got inside the window (s) */
    uint64_t groups;                    /* request groups completed inside the window */
    struct win_marks marks;             /* sub-window boundaries */
    struct gap_hist gaps;               /* sampled inter-request times (ticks), while measuring */
    uint64_t gap_period;                /* one interval sampled every gap_period blocks of 16 groups */
    uint64_t sink;                      /* consumed read data */
    int measured;                       /* window seen (MEASURE then STOP) */
};
void load_run(struct load_args *a);     /* runs until phase == PH_STOP */
const char *load_isa(void);             /* "avx2", "sse2", "neon" or "generic" */
/* NULL when the load kernels can run (LOADLAT_ISA names a kernel this CPU has, and traffic `tr`, if given,
 * needs nothing the kernel lacks), else a one-line reason for a usage error (exit 2). */
const char *kernel_refusal(const struct traffic *tr);

struct chase_args {
    void **start;
    _Atomic int *phase;
    _Atomic int *subwin;                /* sub-window index set by the main thread while measuring */
    int nwin;
    struct win_marks marks;             /* sub-window boundaries */
    double t0, t1;
    double cpu_s;                       /* CPU time the thread got inside the window (s) */
    uint64_t loads;
    void **end;                         /* where the chase stopped (kept live) */
    int measured;
};
void chase_run(struct chase_args *a);   /* dependent loads until phase == PH_STOP */

void delay_loop(uint64_t n);
double calibrate_delay_ns(uint64_t *iters_used);   /* ns per delay-loop iteration (minimum of 5) */
double calibrate_core_ghz(void);                   /* chain of dependent register adds (1 add reg,reg = 1 clock) */
double cpufreq_max_ghz(int cpu);                   /* cpufreq cpuinfo_max_freq in GHz, 0 when not readable */
const char *core_clock_check(double core_ghz, double tsc_ghz, double cpufreq_max_ghz); /* "ok" or why not */
double calibrate_tsc_ghz(void);                    /* x86 TSC rate, 0 elsewhere */
double calibrate_exp_cost_ns(double delay_ns);    /* extra ns per request group of an exponential draw */
double calibrate_tick_ns(void);                    /* cost of one tick_now() stamp in ns */

/* Memory placement, buffers on a NUMA node (memory.c): as buffer_alloc, with the range bound to `node` by
 * numa_bind (mbind) before the first touch; node < 0 = no binding (buffer_alloc). Fails (errno, message in
 * err, nothing mapped) when mbind fails. */
int buffer_alloc_node(struct buffer *b, size_t len, int huge, unsigned char fill, int node, char *err,
                      size_t errlen);

/* NUMA nodes (numa.c): the nodes the kernel reports under /sys/devices/system/node (LOADLAT_NODE_DIR
 * overrides the folder, a test aid), their CPUs and memory; mbind and get_mempolicy as raw system calls. */
#define LOADLAT_MAX_NODES 256
struct numa_topo {
    int n;                              /* nodes (at least 1) */
    int from_sysfs;                     /* 0: no node folders, one node 0 holding the allowed CPUs */
    char source[320];                   /* the folder read, or why none was */
    int node[LOADLAT_MAX_NODES];        /* node numbers, ascending */
    long long mem_kib[LOADLAT_MAX_NODES];  /* MemTotal of the node in KiB, -1 unknown */
    int ncpu[LOADLAT_MAX_NODES];
    int *cpu[LOADLAT_MAX_NODES];        /* the node's CPUs (cpulist), ascending */
};
const char *numa_node_dir(void);
int numa_read(struct numa_topo *t, const int *allowed, int nallowed, char *err, size_t errlen);  /* 0 / -1 */
void numa_free(struct numa_topo *t);
int numa_index_of_cpu(const struct numa_topo *t, int cpu);  /* index into node[] of the CPU's node, -1 */
int numa_bind(void *p, size_t len, int node);               /* mbind(MPOL_BIND): 0 or errno */
/* Fraction of (up to 64 evenly spaced) pages of [p, p+len) that are on `node` (get_mempolicy); NAN when
 * it cannot be asked; *checked = pages asked. */
double numa_pages_on_node(const void *p, size_t len, int node, int *checked);
int cpu_smt_siblings(int a, int b);     /* 1: a and b share a core (SMT), 0: not, -1: unknown */

/* Cache-to-cache latency (c2c.c): one 64-byte line bounced between a writer and a reader thread. */
#include <signal.h>
#define C2C_HIT 1                       /* kinds: a clean line in the writer's cache */
#define C2C_HITM 2                      /* a modified line in the writer's cache */
struct c2c_args {
    int writer_cpu, reader_cpu;
    int home_node;                      /* node the line's page is bound to (mbind); -1: no binding */
    int home_is_reader;                 /* without mbind: the reader (1) or the writer (0) touches it first */
    int kinds;                          /* C2C_HIT | C2C_HITM: both alternate round by round */
    double seconds;                     /* time budget per kind */
    long long max_rounds;               /* cap of measured rounds (0: the built-in cap, 2e6) */
    double tick_ghz;                    /* timer ticks per ns (tick_ghz()) */
    const volatile sig_atomic_t *stop;  /* non-zero: end early (a signal) */
};
struct c2c_result {
    int ok, interrupted;
    double latency_ns;                  /* mean of the 10-90th percentile of (remote load - L1 load), ns */
    double median_ns, p10_ns, p90_ns;
    double resolution_ns;               /* smallest step between the differences seen (timer resolution) */
    int coarse;                         /* the timer's tick > 2 ns: mean of the 1-99th percentile instead */
    long long rounds;                   /* measured rounds of this kind */
    double seconds;                     /* time of all measured rounds (both kinds) */
    const char *placement;              /* "mbind", "first-touch (writer thread)", ... */
    char mbind_error[80];               /* why mbind failed (placement first-touch) */
    double pages_on_node;               /* get_mempolicy check of the line's page: 1 on home_node, 0 not */
    char why[200];                      /* when not ok */
};
/* r[0] HIT, r[1] HITM (those asked for in a->kinds). 0 ok, 1 interrupted (*stop), -1 failed (why). */
int c2c_measure(const struct c2c_args *a, struct c2c_result r[2]);
const char *c2c_timer(void);            /* the timed-load clock, e.g. "rdtsc between lfences" */
int c2c_can_flush(void);                /* 1 when the HIT protocol can flush the line (x86, aarch64) */

#endif
