/* ioarrive - memstor's arrival-driven (open-loop) I/O generator.
 *
 * sim.c: the simulated device (--sim servers=C,service=...): C servers, one FIFO queue; an I/O submitted at
 * time s starts at max(s, the earliest time a server is free) and completes a service time later (FCFS
 * M/G/c: the Kiefer-Wolfowitz recursion). The service time is deterministic, exponential or drawn from a
 * histogram file (arrivals.c), one class per direction (read-service=, write-service=): reads and writes
 * share the servers and the queue, in order of submission.
 *   Real time: an engine like the others. submit() computes the completion time on the real clock from the
 *   real submission time; the reaper sleeps until the earliest one is due (a condition variable with an
 *   absolute CLOCK_MONOTONIC deadline) and stamps the completion when it wakes, so the timers and CPUs of
 *   this machine show in the lag (submitter) and in service - simulated service (reaper).
 *   queue=Q (real time): a submission waits, sleeping inside the submit call, while Q I/Os are in the device,
 *   as a submit call waits for a request of the kernel's full request queue (the I/O's service starts when it
 *   got in; its submission stamp stays the call's start, as with a real engine).
 *   Virtual time (--virtual): no threads, no sleeping, no I/O. The same arrival generator, slots,
 *   recorder, histograms, checks and JSON; submission = intended arrival (lag 0) and the completion is the
 *   simulated one. The cap on outstanding I/Os holds there too (a heap of the pending completions).
 */
#include "ioarrive.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct heap { int64_t *key; uint32_t *val; uint32_t n, cap; };

static void heap_init(struct heap *h, uint32_t cap)
{
    h->key = calloc(cap + 1, sizeof *h->key);
    h->val = calloc(cap + 1, sizeof *h->val);
    if (!h->key || !h->val) die("out of memory");
    h->n = 0;
    h->cap = cap;
}

static void heap_push(struct heap *h, int64_t key, uint32_t val)
{
    uint32_t i = h->n++;
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (h->key[parent] <= key) break;
        h->key[i] = h->key[parent];
        h->val[i] = h->val[parent];
        i = parent;
    }
    h->key[i] = key;
    h->val[i] = val;
}

static void heap_pop(struct heap *h)
{
    int64_t key = h->key[--h->n];
    uint32_t val = h->val[h->n], i = 0;
    for (;;) {
        uint32_t l = 2 * i + 1, m = i;
        if (l >= h->n) break;
        m = l + 1 < h->n && h->key[l + 1] < h->key[l] ? l + 1 : l;
        if (h->key[m] >= key) break;
        h->key[i] = h->key[m];
        h->val[i] = h->val[m];
        i = m;
    }
    h->key[i] = key;
    h->val[i] = val;
}

struct simdev {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_cond_t space;     /* queue=: never signalled; a waiting submission wakes at the next completion time */
    struct heap servers;      /* free times of the servers */
    struct heap pending;      /* completion time -> slot id */
    struct rng rng;
    int woken;
};

/* The completion time of an I/O of direction `dir` submitted at `submit`: the FIFO queue's next free server,
 * busy for a service time of the direction's class (reads and writes share the servers, first come first
 * served; one random stream, so a run whose classes are the same draws the same times as one class). */
static int64_t serve(struct simdev *d, const struct sim_cfg *cfg, int64_t submit, int dir)
{
    int64_t free_at = d->servers.key[0], start = submit > free_at ? submit : free_at;
    int64_t done = start + llround(sim_service_ns(&cfg->cls[dir], &d->rng));
    heap_pop(&d->servers);
    heap_push(&d->servers, done, 0);
    return done;
}

static struct simdev *simdev_new(const struct job *j, uint32_t pending_cap)
{
    struct simdev *d = calloc(1, sizeof *d);
    if (!d) die("out of memory");
    heap_init(&d->servers, (uint32_t)j->sim.servers);
    for (int i = 0; i < j->sim.servers; i++)
        heap_push(&d->servers, INT64_MIN, 0);
    heap_init(&d->pending, pending_cap);
    rng_seed(&d->rng, j->seed, 99);
    return d;
}

static int sim_init(struct ctx *c, char *why, size_t whylen)
{
    struct simdev *d = simdev_new(c->j, c->nslots + 1);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&d->cv, &ca);
    pthread_cond_init(&d->space, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&d->mu, NULL);
    c->eng_state = d;
    snprintf(why, whylen, "sim: a simulated device of %d FIFO server%s in %s time%s", c->j->sim.servers,
             c->j->sim.servers > 1 ? "s" : "", c->j->virtual_time ? "virtual" : "real",
             c->j->sim.queue ? ", submissions wait for one of its queue=" : "");
    if (c->j->sim.queue) snprintf(why + strlen(why), whylen - strlen(why), "%d requests", c->j->sim.queue);
    return 0;
}

/* The I/Os in the device at `now` (ns): pending ones not yet complete (a completed one frees its request at
 * once, as the kernel's does, whether or not it was reaped). */
static uint32_t in_device(const struct simdev *d, int64_t now)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < d->pending.n; i++)
        n += d->pending.key[i] > now;
    return n;
}

/* queue=Q: wait (sleeping, as a submit call waits for a free request) while Q I/Os are in the device; the
 * I/O then enters the device when it got in. */
static int64_t wait_for_request(struct simdev *d, int queue, int64_t submit)
{
    int64_t now = submit;
    while (queue && in_device(d, now) >= (uint32_t)queue) {
        int64_t next = INT64_MAX;
        for (uint32_t i = 0; i < d->pending.n; i++)
            if (d->pending.key[i] > now && d->pending.key[i] < next) next = d->pending.key[i];
        struct timespec ts = {(time_t)(next / 1000000000LL), (long)(next % 1000000000LL)};
        pthread_cond_timedwait(&d->space, &d->mu, &ts);
        now = now_ns();
    }
    return now;
}

static int sim_submit(struct ctx *c, struct io_slot *s)
{
    struct simdev *d = c->eng_state;
    pthread_mutex_lock(&d->mu);
    int64_t entered = wait_for_request(d, c->j->sim.queue, s->submit);
    int64_t done = serve(d, &c->j->sim, entered, s->dir);
    int earliest = d->pending.n == 0 || done < d->pending.key[0];
    heap_push(&d->pending, done, s->id);
    s->res = (int)s->len;
    if (earliest)
        pthread_cond_signal(&d->cv);
    pthread_mutex_unlock(&d->mu);
    return 0;
}

static struct timespec ts_of(int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
    return ts;
}

static int sim_reap(struct ctx *c, struct io_slot **out, int max, int timeout_ms)
{
    struct simdev *d = c->eng_state;
    int n = 0;
    int64_t give_up = now_ns() + (int64_t)timeout_ms * 1000000LL;
    pthread_mutex_lock(&d->mu);
    while (n == 0 && !d->woken) {
        int64_t now = now_ns();
        while (d->pending.n && d->pending.key[0] <= now && n < max) {
            out[n++] = &c->slots[d->pending.val[0]];
            heap_pop(&d->pending);
        }
        if (n || now >= give_up) break;
        int64_t until = d->pending.n && d->pending.key[0] < give_up ? d->pending.key[0] : give_up;
        struct timespec ts = ts_of(until);
        pthread_cond_timedwait(&d->cv, &d->mu, &ts);
    }
    d->woken = 0;
    pthread_mutex_unlock(&d->mu);
    return n;
}

static void sim_wake(struct ctx *c)
{
    struct simdev *d = c->eng_state;
    pthread_mutex_lock(&d->mu);
    d->woken = 1;
    pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->mu);
}

static void sim_fini(struct ctx *c) { (void)c; }

const struct engine ENGINE_SIM = {ENG_SIM, sim_init, sim_submit, sim_reap, sim_wake, sim_fini, 0, NULL};

/* -------------------------------------------------------------------------------------- virtual time */

void run_virtual(struct ctx *c)
{
    const struct job *j = c->j;
    struct simdev *d = simdev_new(j, c->nslots + 1);
    struct gen g[NDIR];
    uint64_t issued[NDIR] = {0, 0};
    int64_t t0 = llround(j->ramp_s * 1e9), t_end = t0 + llround(j->runtime_s * 1e9);
    rec_init(&c->rec, j, t0);
    for (int k = 0; k < NDIR; k++)
        if (j->dir[k].active) gen_init(&g[k], j, k, j->span);
    for (;;) {
        int k = -1;
        for (int x = 0; x < NDIR; x++)
            if (j->dir[x].active && (k < 0 || g[x].t_ns < g[k].t_ns)) k = x;
        int64_t t = llround(g[k].t_ns);
        if (t >= t_end) break;
        while (d->pending.n && d->pending.key[0] <= t)
            heap_pop(&d->pending);
        if (d->pending.n >= c->nslots) {
            c->facts.overloaded = 1;
            c->facts.overload_at_s = (double)(t - t0) / 1e9;
            break;
        }
        struct io_slot s = {.intended = t, .submit = t, .dir = k, .idx = t >= t0 ? (int64_t)issued[k]++ : -1};
        gen_io(&g[k], &s.off, &s.len);
        s.done = serve(d, &j->sim, t, k);
        s.res = (int)s.len;
        heap_push(&d->pending, s.done, 0);
        rec_complete(&c->rec, &s);
        gen_advance(&g[k]);
    }
    for (int k = 0; k < NDIR; k++)
        c->rec.d[k].issued = issued[k];
    c->facts.measured_s = j->runtime_s;
}
