/* loadlat - an open, MLC-compatible loaded-latency tool (memstor).
 *
 * hier.h: the memory-hierarchy modes (memstor issue 31), what lmbench's lat_mem_rd and multichase's parallelN
 * show:
 *   hier.c  their options, the caches the kernel reports (sysfs), the common '#' lines, the JSON header and
 *           the atomic JSON file, the percentiles of batch times
 *   wset.c  --working_set: the latency of ONE dependent chain against the buffer size (4 KiB to 4 x the LLC),
 *           random (the idle-latency chain) or sequential with a stride; mean, core clocks and percentiles of
 *           batched timer reads per size
 *   mlp.c   --mlp: N independent random chains interleaved in one thread (memory-level parallelism):
 *           latency per access and bandwidth per N, and with --mlp-all-cores the same on every CPU at once
 * Units: bytes, ns, MB/s = 10^6 bytes/s. See README.md (*Memory hierarchy*).
 */
#ifndef LOADLAT_HIER_H
#define LOADLAT_HIER_H

#include "tool.h"

#include <stdio.h>
#include <time.h>

#define WS_MIN_BYTES ((size_t)4096)          /* the smallest working set: 4 KiB */
#define WS_DEFAULT_PER_OCTAVE 4              /* sizes per doubling: 4 K, 4.76 K, 5.66 K, 6.73 K, 8 K ... */
#define WS_DEFAULT_SECONDS 0.2               /* per size: half for the mean, half for the batched pass */
#define WS_DEFAULT_BATCH 256                 /* dependent loads per timed batch */
#define WS_LLC_FACTOR 4                      /* default largest size: 4 x the LLC */
#define WS_NO_LLC_MAX ((size_t)256 << 20)    /* default largest size when sysfs reports no cache: 256 MiB */
#define MLP_DEFAULT_SECONDS 1.0              /* measured per chain count (after a warm-up) */

/* One cache as the kernel reports it (sysfs cpu0/cache/index<N>). */
#define HIER_MAX_CACHES 16
struct cache_desc {
    int level;
    char type[32];                           /* Data, Instruction, Unified */
    size_t bytes;
};
struct caches {
    int n;
    struct cache_desc c[HIER_MAX_CACHES];
    size_t llc_bytes;                        /* the largest level's data or unified cache, 0 unknown */
    int llc_level;
    char source[300];                        /* the folder read */
};
void caches_read(struct caches *k);          /* LOADLAT_CPU_DIR replaces /sys/devices/system/cpu (a test aid) */

/* Options (hier.c): a word option of these modes at `a` (1 = taken), and the checks after parsing. */
int hier_parse_word(struct opts *o, const char *a);
void hier_check_options(const struct opts *o);

/* The two modes; each returns the exit status. */
int run_working_set(struct env *e);
int run_mlp(struct env *e);

/* Common steps (hier.c): calibrate on `cpu`, read THP, print the header and the global '#' lines. */
void hier_setup(struct env *e, int cpu, const struct caches *k);
int clocks_known(const struct calib *cal);  /* the core clock rate passed its check: core clocks can be given */
void print_clocks_cell(double ns, const struct calib *cal);  /* "%7.1f" core clocks, or "unknown" */
/* The JSON document's common head ("{ tool, version, command, mode, isa, online_cpus, allowed_cpus,
 * calibration, core_clocks_known, core_clocks_note, caches"), without a trailing comma. */
void hier_json_head(FILE *f, const struct env *e, const char *mode, const struct caches *k);
FILE *hier_json_open(const char *path, char *tmp, size_t len);   /* a temporary beside `path` */
void hier_json_close(FILE *f, const char *tmp, const char *path);  /* flush, rename over `path` (dies on error) */
double percentile_u64(const uint64_t *sorted, size_t n, double q);  /* nearest rank, q in (0, 1] */
void sort_u64(uint64_t *v, size_t n);

/* The batch timer: the cheap stamp loadlat uses (tick_now: x86-64 TSC, aarch64 CNTVCT_EL0, else
 * CLOCK_MONOTONIC in ns), fenced so that the loads before it have completed and those after it have not
 * started (the c2c timer's fences). Its rate is tick_ghz() (ticks per ns). */
#if defined(__x86_64__)
#define BATCH_TIMER "rdtsc between lfences"
static inline uint64_t batch_stamp(void)
{
    _mm_lfence();
    uint64_t t = __rdtsc();
    _mm_lfence();
    return t;
}
#elif defined(__aarch64__)
#define BATCH_TIMER "cntvct_el0 after dsb ish + isb"
static inline uint64_t batch_stamp(void)
{
    uint64_t t;
    __asm__ volatile("dsb ish\n\tisb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(t) : : "memory");
    return t;
}
#else
#define BATCH_TIMER "clock_gettime(CLOCK_MONOTONIC)"
static inline uint64_t batch_stamp(void)
{
    struct timespec ts;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    clock_gettime(CLOCK_MONOTONIC, &ts);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
#endif

/* n dependent loads p = *p from *pp (any n; 64 per unrolled step), *pp left where the chase stopped. */
static inline void chase_loads(void ***pp, uint64_t n)
{
    void **p = *pp;
#define HSTEP p = (void **)*p;
#define HSTEP8 HSTEP HSTEP HSTEP HSTEP HSTEP HSTEP HSTEP HSTEP
    for (uint64_t i = n / 64; i > 0; i--) {
        HSTEP8 HSTEP8 HSTEP8 HSTEP8 HSTEP8 HSTEP8 HSTEP8 HSTEP8
    }
    for (uint64_t i = n % 64; i > 0; i--) {
        HSTEP
    }
#undef HSTEP8
#undef HSTEP
    *pp = p;
}

#endif
