/* loadlat - an open, MLC-compatible loaded-latency tool (memstor).
 *
 * Shared declarations of the five translation units (and the one random number generator):
 *   main.c     options, thread orchestration, MLC-style text output, JSON sidecar
 *   kernels.c  load-generation kernels (read / write / non-temporal / triad), delay loop, calibrations
 *              (kernel_tmpl.h: the body of one kernel, included once per instruction set)
 *   memory.c   buffers (mmap, huge pages, first touch, THP evidence), latency chain
 *   cpus.c     CPU lists (parse, format), the affinity mask, pinning
 *   clocks.c   time sources (CLOCK_MONOTONIC, thread CPU time) and sleeping
 */
#ifndef LOADLAT_H
#define LOADLAT_H

#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define LOADLAT_VERSION "0.2"
#define CORE_GHZ_METHOD "chain of dependent register adds, 1 add = 1 core clock"
#define LOADLAT_MAX_CPUS 4096
#define HUGE_2M ((size_t)2 << 20)

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

/* Random numbers: splitmix64, the one generator of loadlat (latency chain order and offsets, random load
 * order). Any seed is fine (0 too); its output is also a good 64-bit hash of the state, which
 * chain_build uses per slot. Seeds k * 0x9E3779B97F4A7C15 give one stream shifted by k: mix them first. */
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

/* Kernels (kernels.c). */
struct load_args {
    const struct traffic *tr;
    unsigned char *rd, *rd2, *wr;       /* read buffer, second read buffer (triad), write buffer */
    size_t rd_len, wr_len;              /* bytes usable (multiples of access) */
    size_t access;                      /* bytes per request (multiple of 64) */
    uint64_t delay;                     /* delay-loop iterations after each request group */
    int random;                         /* random block order instead of sequential */
    uint64_t seed;
    _Atomic int *phase;
    /* results */
    double t0, t1;                      /* measured window (CLOCK_MONOTONIC s) */
    double cpu_s;                       /* CPU time the thread got inside the window (s) */
    uint64_t groups;                    /* request groups completed inside the window */
    uint64_t sink;                      /* consumed read data */
    int measured;                       /* window seen (MEASURE then STOP) */
};
void load_run(struct load_args *a);     /* runs until phase == PH_STOP */
const char *load_isa(void);             /* "avx2", "sse2" or "generic" */

struct chase_args {
    void **start;
    _Atomic int *phase;
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

#endif
