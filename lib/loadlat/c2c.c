/* loadlat: cache-to-cache transfer latency (--c2c_latency), a ping-pong on one 64-byte line between two
 * pinned threads.
 *
 * Each round: the writer (on writer_cpu) gets its turn from a flag on another page, then either modifies
 * the line (HITM: a store, so the line is Modified in the writer's cache and invalid everywhere else) or
 * flushes it from every cache and reads it back (HIT: clflush / dc civac, then a load, so the line is
 * clean - Exclusive - in the writer's cache only), and hands the turn to the reader (release store). The
 * reader (on reader_cpu) times one load of the line - served from the writer's cache - and at once the same
 * timed load again (now an L1 hit); the difference of the two cancels the timer's own cost. Rounds run for
 * the time given (at most C2C_MAX_ROUNDS); the first C2C_WARMUP_ROUNDS are dropped. The figure is the mean
 * of the differences between their 10th and 90th percentiles (interrupts and preemption fall outside;
 * a coarse timer's steps average out), in timer ticks / ticks per ns. The load is fenced on both sides
 * (x86: lfence around rdtsc; aarch64: dsb ish + isb around cntvct_el0), so neither the load nor the
 * second stamp can run ahead.
 *
 * When both HIT and HITM are asked for, the rounds alternate between them (odd rounds HIT, even rounds
 * HITM), so that both see the same conditions - on a virtual machine the host may move the two virtual CPUs
 * between cores sharing a cache and cores that do not, which changes the figure several-fold.
 *
 * The line's page is bound to home_node with mbind before its first touch; when mbind fails the thread on
 * the home side (writer or reader) touches it first. Where it landed is checked with get_mempolicy. */
#include "loadlat.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define C2C_MAX_ROUNDS 2000000
#define C2C_WARMUP_ROUNDS 2000
#define C2C_STOP UINT64_MAX   /* flag value: the reader ended the run */

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define C2C_TIMER "rdtsc between lfences"
#define C2C_FLUSH 1
static inline uint64_t c2c_stamp(void)
{
    _mm_lfence();  /* earlier instructions (the timed load) have completed */
    uint64_t t = __rdtsc();
    _mm_lfence();  /* later instructions (the timed load) start after the stamp */
    return t;
}
static inline void c2c_flush(volatile void *p)
{
    _mm_clflush((const void *)p);
    _mm_mfence();
}
static inline void c2c_relax(void) { _mm_pause(); }
#elif defined(__aarch64__)
#define C2C_TIMER "cntvct_el0 between dsb ish + isb"
#define C2C_FLUSH 1
static inline uint64_t c2c_stamp(void)
{
    uint64_t t;
    __asm__ volatile("dsb ish\n\tisb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(t) : : "memory");
    return t;
}
static inline void c2c_flush(volatile void *p)
{
    __asm__ volatile("dc civac, %0\n\tdsb ish" : : "r"(p) : "memory");
}
static inline void c2c_relax(void) { __asm__ volatile("yield" ::: "memory"); }
#else
#define C2C_TIMER "clock_gettime(CLOCK_MONOTONIC)"
#define C2C_FLUSH 0
static inline uint64_t c2c_stamp(void)
{
    struct timespec ts;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    clock_gettime(CLOCK_MONOTONIC, &ts);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
static inline void c2c_flush(volatile void *p) { (void)p; }
static inline void c2c_relax(void) {}
#endif

const char *c2c_timer(void) { return C2C_TIMER; }
int c2c_can_flush(void) { return C2C_FLUSH; }

struct c2c_shared {
    const struct c2c_args *a;
    volatile uint64_t *line;       /* the 64-byte line, alone on its page */
    _Atomic uint64_t *flag;        /* turns: 2r-1 = reader's turn of round r, 2r = writer's turn of r+1 */
    int bound;                     /* mbind succeeded: the first touch lands on home_node anyway */
    int touch_by_reader;           /* without mbind: the reader thread touches first (home = reader side) */
    pthread_barrier_t bar;
    int32_t *diff[2];              /* per measured round of each kind (HIT, HITM): remote - L1 load ticks */
    long long rounds[2];           /* measured rounds of each kind (after the warm-up) */
    double seconds;                /* time the measured rounds took */
    int failed;
    char err[200];
};

static volatile uint64_t c2c_sink;

static void c2c_touch(struct c2c_shared *s)
{
    memset((void *)s->line, 0, 64);
}

/* The kind of round r: 0 HIT, 1 HITM. */
static inline int c2c_kind(const struct c2c_args *a, uint64_t r)
{
    if (a->kinds == (C2C_HIT | C2C_HITM))
        return (int)(r & 1) ^ 1;  /* odd rounds HIT, even rounds HITM */
    return a->kinds == C2C_HITM;
}

static void *c2c_writer(void *arg)
{
    struct c2c_shared *s = arg;
    const struct c2c_args *a = s->a;
    int e = pin_self(a->writer_cpu);
    if (e) {
        snprintf(s->err, sizeof s->err, "cannot pin the writer to CPU %d: %s", a->writer_cpu, strerror(e));
        s->failed = 1;
    } else if (!s->bound && !s->touch_by_reader) {
        c2c_touch(s);
    }
    pthread_barrier_wait(&s->bar);
    if (s->failed)
        return NULL;
    volatile uint64_t *line = s->line;
    for (uint64_t r = 1;; r++) {
        uint64_t f;
        while ((f = atomic_load_explicit(s->flag, memory_order_acquire)) != 2 * r - 2) {
            if (f == C2C_STOP)
                return NULL;
            c2c_relax();
        }
        if (c2c_kind(a, r)) {
            *line = r;  /* HITM: the line becomes Modified here, invalid in the reader's cache */
            atomic_store_explicit(s->flag, 2 * r - 1, memory_order_release);
        } else {
            c2c_flush(line);          /* HIT: out of every cache ... */
            uint64_t v = *line;       /* ... and back, clean, into this core's cache only */
            atomic_store_explicit(s->flag, 2 * r - 1 + (v & 0), memory_order_release);
        }
    }
}

static void *c2c_reader(void *arg)
{
    struct c2c_shared *s = arg;
    const struct c2c_args *a = s->a;
    int e = pin_self(a->reader_cpu);
    if (e) {
        snprintf(s->err, sizeof s->err, "cannot pin the reader to CPU %d: %s", a->reader_cpu, strerror(e));
        s->failed = 1;
    } else if (!s->bound && s->touch_by_reader) {
        c2c_touch(s);
    }
    pthread_barrier_wait(&s->bar);
    if (s->failed) {
        atomic_store(s->flag, C2C_STOP);
        return NULL;
    }
    volatile uint64_t *line = s->line;
    uint64_t sink = 0;
    double t_start = 0, t_end = now_s();
    double deadline = t_end + a->seconds;
    long long n = 0, cap = a->max_rounds;
    for (uint64_t r = 1;; r++) {
        while (atomic_load_explicit(s->flag, memory_order_acquire) != 2 * r - 1) {
            if (*a->stop) {
                atomic_store(s->flag, C2C_STOP);
                goto done;
            }
            c2c_relax();
        }
        uint64_t t0 = c2c_stamp();
        sink += *line;               /* from the writer's cache */
        uint64_t t1 = c2c_stamp();
        sink += *line;               /* the same load again: an L1 hit (the timer's own cost) */
        uint64_t t2 = c2c_stamp();
        if (r > C2C_WARMUP_ROUNDS) {
            if (n == 0)
                t_start = now_s();
            int k = c2c_kind(a, r);
            int64_t d = (int64_t)(t1 - t0) - (int64_t)(t2 - t1);
            s->diff[k][s->rounds[k]++] = d > INT32_MAX ? INT32_MAX : d < INT32_MIN ? INT32_MIN : (int32_t)d;
            n++;
        }
        if ((r & 255) == 0 || n >= cap) {
            t_end = now_s();
            if (t_end >= deadline || n >= cap || *a->stop) {
                atomic_store(s->flag, C2C_STOP);
                break;
            }
        }
        atomic_store_explicit(s->flag, 2 * r, memory_order_release);
    }
done:
    s->seconds = n ? now_s() - t_start : 0;
    c2c_sink = sink;  /* keep the loads */
    return NULL;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Statistics of one kind's differences (sorted here) into r. The figure is the mean of the differences
 * between their 10th and 90th percentiles; with a coarse timer (a tick of more than C2C_COARSE_NS, e.g.
 * an Arm generic timer at 25-62.5 MHz) between the 1st and 99th, because trimming a distribution of a few
 * tick values at 10 % would bias it by a fraction of a tick (while the plain mean of quantized stamps at
 * random phases is unbiased). */
#define C2C_COARSE_NS 2.0
static void c2c_stats(int32_t *diff, long long n, double g, struct c2c_result *r)
{
    if (n < 100) {
        snprintf(r->why, sizeof r->why, "only %lld rounds measured (the two threads hardly ran: CPUs busy?)", n);
        return;
    }
    qsort(diff, (size_t)n, sizeof *diff, cmp_i32);
    int32_t step = 0;  /* the smallest step between differences seen (the timer's resolution, ticks) */
    for (long long i = 1; i < n; i++)
        if (diff[i] > diff[i - 1] && (!step || diff[i] - diff[i - 1] < step))
            step = diff[i] - diff[i - 1];
    double tick_ns = 1.0 / g;  /* one tick of the timer */
    r->resolution_ns = step ? step / g : NAN;
    r->coarse = tick_ns > C2C_COARSE_NS;
    long long cut = r->coarse ? n / 100 : n / 10;
    long long lo = cut, hi = n - cut;
    double sum = 0;
    for (long long i = lo; i < hi; i++)
        sum += diff[i];
    r->latency_ns = sum / (double)(hi - lo) / g;
    r->median_ns = diff[n / 2] / g;
    r->p10_ns = diff[n / 10] / g;
    r->p90_ns = diff[n - n / 10 - 1] / g;
    if (r->latency_ns > 0)
        r->ok = 1;
    else if (r->coarse && diff[n / 100] == diff[n - n / 100 - 1])
        snprintf(r->why, sizeof r->why, "not resolved: the timer's tick (%.1f ns) is coarser than the transfer "
                 "(every timed load took as many ticks as an L1 hit)", tick_ns);
    else
        snprintf(r->why, sizeof r->why, "the timed load was not slower than an L1 hit (%.2f ns): the line did not "
                 "come from the other core", r->latency_ns);
}

int c2c_measure(const struct c2c_args *a, struct c2c_result r[2])
{
    for (int k = 0; k < 2; k++) {
        memset(&r[k], 0, sizeof r[k]);
        r[k].latency_ns = r[k].median_ns = r[k].p10_ns = r[k].p90_ns = r[k].pages_on_node = NAN;
        r[k].resolution_ns = NAN;
        r[k].placement = "none";
    }
    int nk = (a->kinds & C2C_HIT ? 1 : 0) + (a->kinds & C2C_HITM ? 1 : 0);
    if (nk == 0) {
        snprintf(r[0].why, sizeof r[0].why, "no kind asked for");
        return -1;
    }
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    /* three pages: the flag on the first, the line alone on the third (no prefetcher pairs them) */
    unsigned char *m = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        snprintf(r[0].why, sizeof r[0].why, "mmap failed: %s", strerror(errno));
        snprintf(r[1].why, sizeof r[1].why, "%s", r[0].why);
        return -1;
    }
    struct c2c_shared s;
    memset(&s, 0, sizeof s);
    s.flag = (_Atomic uint64_t *)m;
    s.line = (volatile uint64_t *)(m + 2 * page);
    atomic_store(s.flag, 0);
    const char *placement = "first-touch (writer thread)";
    char mbind_error[80] = "";
    if (a->home_node >= 0) {
        int e = numa_bind((void *)(m + 2 * page), page, a->home_node);
        s.bound = e == 0;
        placement = s.bound ? "mbind" : a->home_is_reader ? "first-touch (reader thread)" : "first-touch (writer thread)";
        if (!s.bound)
            snprintf(mbind_error, sizeof mbind_error, "%s", strerror(e));
    }
    s.touch_by_reader = a->home_is_reader;
    if (s.bound)
        c2c_touch(&s);
    long long cap = a->max_rounds > 0 && a->max_rounds < C2C_MAX_ROUNDS ? a->max_rounds : C2C_MAX_ROUNDS;
    struct c2c_args aa = *a;
    aa.max_rounds = cap;
    aa.seconds = a->seconds * nk;  /* `seconds` per kind */
    s.a = &aa;
    s.diff[0] = malloc(sizeof(int32_t) * (size_t)cap);
    s.diff[1] = malloc(sizeof(int32_t) * (size_t)cap);
    int rc = 0;
    if (!s.diff[0] || !s.diff[1]) {
        snprintf(r[0].why, sizeof r[0].why, "out of memory");
        rc = -1;
    } else {
        pthread_barrier_init(&s.bar, NULL, 2);
        sigset_t block, old;
        sigemptyset(&block);
        sigaddset(&block, SIGINT);
        sigaddset(&block, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &block, &old);  /* the threads inherit it: only the main thread sees signals */
        pthread_t tw, tr;
        int e1 = pthread_create(&tw, NULL, c2c_writer, &s);
        int e2 = e1 ? 0 : pthread_create(&tr, NULL, c2c_reader, &s);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (e1 || e2) {
            snprintf(r[0].why, sizeof r[0].why, "pthread_create failed: %s", strerror(e1 ? e1 : e2));
            if (!e1) {  /* the writer waits at the barrier: release it as a failed run */
                s.failed = 1;
                pthread_barrier_wait(&s.bar);
                pthread_join(tw, NULL);
            }
            rc = -1;
        } else {
            pthread_join(tr, NULL);
            pthread_join(tw, NULL);
        }
        pthread_barrier_destroy(&s.bar);
    }
    if (rc == 0 && s.failed) {
        snprintf(r[0].why, sizeof r[0].why, "%s", s.err);
        rc = -1;
    } else if (rc == 0 && *a->stop) {
        r[0].interrupted = r[1].interrupted = 1;
        rc = 1;
    }
    double on = NAN;
    int checked;
    if (a->home_node >= 0)
        on = numa_pages_on_node((const void *)s.line, 64, a->home_node, &checked);
    double g = a->tick_ghz > 0 ? a->tick_ghz : 1.0;
    for (int k = 0; k < 2; k++) {
        if (!(a->kinds & (k ? C2C_HITM : C2C_HIT)))
            continue;
        r[k].placement = placement;
        snprintf(r[k].mbind_error, sizeof r[k].mbind_error, "%s", mbind_error);
        r[k].pages_on_node = on;
        r[k].rounds = s.rounds[k];
        r[k].seconds = s.seconds;
        if (rc == -1 && k == 1 && !r[1].why[0])
            snprintf(r[1].why, sizeof r[1].why, "%s", r[0].why);
        if (rc == 0 || rc == -2) {  /* measured: each kind's statistics (one may fail, the other not) */
            c2c_stats(s.diff[k], s.rounds[k], g, &r[k]);
            if (!r[k].ok)
                rc = -2;
        }
    }
    if (rc == -2)
        rc = -1;
    free(s.diff[0]);
    free(s.diff[1]);
    munmap(m, 3 * page);
    return rc;
}
