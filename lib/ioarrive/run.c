/* ioarrive - memstor's arrival-driven (open-loop) I/O generator.
 *
 * run.c: a run in real time.
 *   The submitter (the main thread) takes the earliest next arrival of the directions, an absolute
 *   CLOCK_MONOTONIC time computed from the start (never from the previous submission, so a late I/O does
 *   not delay the schedule), sleeps with clock_nanosleep(TIMER_ABSTIME) until the spin before it, spins to
 *   it (--spin-us; how late each sleep woke is recorded: wake_delay in the JSON, the usual cause of lag on a
 *   shared machine. A longer spin does not help there: on a 2-vCPU VM beside one busy process, a spin that
 *   followed the recent wake-up delays (0.4 ms on average) made the sleeps wake later, p99 0.49-0.65 ms
 *   against 0.15-0.16 ms with 50 us, as the scheduler then treats the submitter as a CPU hog), takes a free
 *   slot, stamps the submission and submits without waiting for anything. Every further
 *   arrival already due by then (the previous submission took longer than the gap) joins it, up to
 *   SUBMIT_BATCH_MAX, and they go to the engine in one system call stamped with one submission time: a
 *   submission costs 10-50 us of system time on a VM (a virtio kick), so one call per I/O would push every
 *   later arrival back once the rate exceeds 1 / that cost. No free slot (--max-outstanding in flight) ends
 *   the issuing: the run is "overloaded", never silently gated.
 *   The reaper thread waits for completions, stamps them, records them (record.c) and frees their slots.
 *   The free slots are a single-producer single-consumer ring (reaper -> submitter); the pool engine's
 *   workers push under rec_mu. After the last arrival the run waits up to --drain s for what is in flight.
 *   Both threads run with a timer slack of 1 ns (PR_SET_TIMERSLACK).
 */
#include "ioarrive.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>

extern volatile sig_atomic_t stop_signal;

int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

void thread_cpu(struct cpu_use *u, int64_t wall_ns)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    u->user_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
    u->sys_s = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    u->wall_s = (double)wall_ns / 1e9;
}

static int free_pop(struct ctx *c, uint32_t *id)
{
    uint64_t head = c->ring_head, tail = __atomic_load_n(&c->ring_tail, __ATOMIC_ACQUIRE);
    if (head == tail) return 0;
    *id = c->ring[head & c->ring_mask];
    __atomic_store_n(&c->ring_head, head + 1, __ATOMIC_RELEASE);
    return 1;
}

void free_push(struct ctx *c, uint32_t id)
{
    uint64_t tail = c->ring_tail;
    c->ring[tail & c->ring_mask] = id;
    __atomic_store_n(&c->ring_tail, tail + 1, __ATOMIC_RELEASE);
}

static uint32_t outstanding(struct ctx *c)
{
    uint64_t tail = __atomic_load_n(&c->ring_tail, __ATOMIC_ACQUIRE);
    uint64_t head = __atomic_load_n(&c->ring_head, __ATOMIC_ACQUIRE);
    return c->nslots - (uint32_t)(tail - head);
}

void finish_io(struct ctx *c, struct io_slot *s)
{
    rec_complete(&c->rec, s);
    free_push(c, s->id);
}

/* SCHED_FIFO for the calling thread when --rt-priority asks; the first call notes the outcome. */
static void realtime(struct ctx *c)
{
    if (c->j->rt_priority <= 0) return;
    struct sched_param sp = {.sched_priority = c->j->rt_priority};
    int r = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
    if (c->rt_note[0]) return;
    c->rt_granted = r == 0;
    snprintf(c->rt_note, sizeof c->rt_note, r == 0 ? "SCHED_FIFO priority %d" : "SCHED_FIFO priority %d refused: %s "
             "(needs CAP_SYS_NICE or an RLIMIT_RTPRIO); the normal scheduler ran", c->j->rt_priority, strerror(r));
    if (r) fprintf(stderr, "ioarrive: %s\n", c->rt_note);
}

static void *reaper(void *arg)
{
    struct ctx *c = arg;
    struct io_slot *out[256];
    int64_t start = now_ns();
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    realtime(c);
    for (;;) {
        if (__atomic_load_n(&c->stop_reaping, __ATOMIC_ACQUIRE)) break;
        if (__atomic_load_n(&c->submit_done, __ATOMIC_ACQUIRE) && outstanding(c) == 0) break;
        int n = c->eng->reap(c, out, 256, 50);
        if (n <= 0) continue;
        int64_t done = now_ns();
        for (int i = 0; i < n; i++) {
            out[i]->done = done;
            finish_io(c, out[i]);
        }
    }
    thread_cpu(&c->cpu_reaper, now_ns() - start);
    return NULL;
}

/* Sleep until spin_ns before t, then spin to t (ns, CLOCK_MONOTONIC); how late the sleep woke goes to wake_delay. */
static void wait_until(int64_t t, int64_t spin_ns, struct hist *wake_delay)
{
    int64_t wake = t - spin_ns;
    if (wake > now_ns()) {
        struct timespec ts = {(time_t)(wake / 1000000000LL), (long)(wake % 1000000000LL)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR && !stop_signal) {}
        hist_add(wake_delay, now_ns() - wake);
    }
    while (now_ns() < t && !stop_signal)
        cpu_relax();
}

/* The direction whose next arrival is earliest. */
static int earliest(const struct job *j, const struct gen *g)
{
    int d = -1;
    for (int x = 0; x < NDIR; x++)
        if (j->dir[x].active && (d < 0 || g[x].t_ns < g[d].t_ns)) d = x;
    return d;
}

/* Hand n prepared slots to the engine, stamped with one submission time. */
static void submit_batch(struct ctx *c, struct io_slot **batch, int n)
{
    int64_t stamp = now_ns();
    for (int i = 0; i < n; i++)
        batch[i]->submit = stamp;
    int r = 0;
    if (c->eng->submit_many)
        r = c->eng->submit_many(c, batch, n);
    else
        for (int i = 0; i < n && r >= 0; i++)
            r = c->eng->submit(c, batch[i]);
    int64_t took = now_ns() - stamp;
    c->facts.submit_call_ns += (double)took;
    c->facts.submit_calls++;
    hist_add(&c->submit_call, (uint64_t)took);
    if (took >= SUBMIT_BLOCKED_NS && stamp >= c->rec.t0 && stamp < c->rec.t1) {  /* the measured window's: a
        * share of runtime_s (calls of the ramp counted too gave 2.59 s in a 2-s run, S10-bare 1) */
        c->facts.blocked_ns += (double)took;
        c->facts.blocked_calls++;
    }
    uint32_t busy = outstanding(c);
    if (busy > c->peak_outstanding) c->peak_outstanding = busy;
    if (r < 0)
        die("submitting a %s at offset %llu failed: %s", DIR_NAMES[batch[0]->dir],
            (unsigned long long)batch[0]->off, strerror(-r));
}

/* Issue every arrival of [t_start, t_end) at its time; returns when issuing ends. */
static void submit_loop(struct ctx *c, struct gen *g, int64_t t_start, int64_t t0, int64_t t_end)
{
    const struct job *j = c->j;
    int64_t spin_ns = llround(j->spin_us * 1e3);
    struct io_slot *batch[SUBMIT_BATCH_MAX];
    for (;;) {
        int d = earliest(j, g);
        int64_t t = t_start + llround(g[d].t_ns);
        if (t >= t_end) break;
        wait_until(t, spin_ns, &c->wake_delay);
        if (stop_signal) { c->facts.interrupted = 1; break; }
        int n = 0, full = 0;
        do {  /* this arrival and every one already due */
            uint32_t id;
            if (!free_pop(c, &id)) { full = 1; break; }
            struct io_slot *s = &c->slots[id];
            s->intended = t;
            s->dir = d;
            gen_io(&g[d], &s->off, &s->len);
            s->iov.iov_len = s->len;
            s->idx = t >= t0 ? (int64_t)c->rec.d[d].issued++ : -1;
            s->done = 0;
            s->res = 0;
            batch[n++] = s;
            gen_advance(&g[d]);
            d = earliest(j, g);
            t = t_start + llround(g[d].t_ns);
        } while (n < SUBMIT_BATCH_MAX && t < t_end && t <= now_ns());
        if (n) submit_batch(c, batch, n);
        if (full) {
            c->facts.overloaded = 1;
            c->facts.overload_at_s = (double)(now_ns() - t0) / 1e9;
            break;
        }
    }
}

void run_real(struct ctx *c)
{
    const struct job *j = c->j;
    struct gen g[NDIR];
    pthread_t rt;
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    for (int d = 0; d < NDIR; d++)
        if (j->dir[d].active) gen_init(&g[d], j, d, j->span);
    int64_t t_start = now_ns() + 2000000;  /* 2 ms to start the reaper */
    int64_t t0 = t_start + llround(j->ramp_s * 1e9), t_end = t0 + llround(j->runtime_s * 1e9);
    rec_init(&c->rec, j, t0);
    realtime(c);
    if (!c->eng->self_reaping && pthread_create(&rt, NULL, reaper, c))
        die("cannot start the reaper thread");
    int64_t sub_start = now_ns();
    submit_loop(c, g, t_start, t0, t_end);
    thread_cpu(&c->cpu_submitter, now_ns() - sub_start);
    __atomic_store_n(&c->submit_done, 1, __ATOMIC_RELEASE);
    c->eng->wake(c);
    int64_t deadline = now_ns() + llround(j->drain_s * 1e9);
    struct timespec ms = {0, 1000000};
    while (outstanding(c) > 0 && now_ns() < deadline && !(stop_signal && c->facts.interrupted == 0))
        nanosleep(&ms, NULL);
    pthread_mutex_lock(&c->rec_mu);  /* the pool's workers record under it: none records after this */
    __atomic_store_n(&c->stop_reaping, 1, __ATOMIC_RELEASE);
    if (c->eng->self_reaping)
        c->facts.unfinished = outstanding(c);
    pthread_mutex_unlock(&c->rec_mu);
    c->eng->wake(c);
    if (!c->eng->self_reaping) {
        pthread_join(rt, NULL);
        c->facts.unfinished = outstanding(c);
    }
    double elapsed = (double)(now_ns() - t0) / 1e9;
    c->facts.measured_s = c->facts.interrupted ? fmin(fmax(elapsed, 1e-3), j->runtime_s) : j->runtime_s;
}
