/* loadlat - an open, MLC-compatible loaded-latency tool (memstor).
 *
 * run.c: thread orchestration (barrier-synchronised points: warm-up, measured window in sub-windows, stop),
 * the workers (pinning, buffers placed and first-touched, the latency chase and the load kernels with their
 * pacing), the figures of a finished point (bandwidth, latency, CPU shares, steal, arrival CV), groups of
 * threads, the memory check and the calibrations made before the threads start.
 */
#include "tool.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

volatile sig_atomic_t g_signal;

static void on_signal(int sig) { g_signal = sig; }

long long mem_available_bytes(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return -1;
    char line[256];
    long long kib = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lld kB", &kib) == 1)
            break;
    fclose(f);
    return kib < 0 ? -1 : kib * 1024;
}

/* A buffer of the worker, first-touched by it; in a NUMA matrix cell (ctx mem_node >= 0) placed on that node:
 * bound with mbind before the touch, or, when mbind is refused (kernel without NUMA system calls, seccomp,
 * a node the kernel cannot bind), first-touched by this thread moved for the moment to a CPU of that node.
 * Where the pages landed is checked (numa_pages_on_node) and kept in w->on_node. */
static int alloc_placed(struct worker *w, struct buffer *b, size_t len, unsigned char fill, char *err,
                        size_t errlen)
{
    struct ctx *c = w->ctx;
    int huge = c->o->huge;
    if (c->mem_node < 0)
        return buffer_alloc(b, len, huge, fill, err, errlen);
    int e = buffer_alloc_node(b, len, huge, fill, c->mem_node, err, errlen);
    if (e == 0) {
        w->placement = "mbind";
    } else {
        if (c->touch_cpu < 0)
            return e;  /* err says why mbind failed; no CPU of that node to touch from */
        snprintf(w->mbind_err, sizeof w->mbind_err, "%s", strerror(e));
        e = pin_self(c->touch_cpu);
        if (e) {
            snprintf(err, errlen, "mbind failed and cannot move to CPU %d of node %d for the first touch: %s",
                     c->touch_cpu, c->mem_node, strerror(e));
            return e;
        }
        e = buffer_alloc(b, len, huge, fill, err, errlen);
        int e2 = pin_self(w->cpu);
        if (e)
            return e;
        if (e2) {
            snprintf(err, errlen, "cannot pin back to CPU %d: %s", w->cpu, strerror(e2));
            return e2;
        }
        w->placement = "first-touch";
    }
    int checked;
    double f = numa_pages_on_node(b->p, b->len, c->mem_node, &checked);
    if (!isnan(f) && (isnan(w->on_node) || f < w->on_node))
        w->on_node = f;
    return 0;
}

static int worker_init(struct worker *w)
{
    struct ctx *c = w->ctx;
    const struct opts *o = c->o;
    int e = pin_self(w->cpu);
    if (e) {
        snprintf(w->err, sizeof w->err, "cannot pin a thread to CPU %d: %s (choose CPUs with -c/-k)", w->cpu,
                 strerror(e));
        return -1;
    }
    char err[200];
    if (w->is_lat) {
        if (alloc_placed(w, &w->lat, lat_len(o), 0, err, sizeof err) != 0) {
            snprintf(w->err, sizeof w->err, "latency buffer on CPU %d: %s", w->cpu, err);
            return -1;
        }
        w->chain = chain_build(&w->lat, CHAIN_SLOT, 0x1234567ull + (uint64_t)w->cpu);
        if (!w->chain) {
            snprintf(w->err, sizeof w->err, "latency chain on CPU %d: out of memory (use a smaller -b)",
                     w->cpu);
            return -1;
        }
        w->lat.anon_huge_kib = smaps_anon_huge_kib(w->lat.p);
        return 0;
    }
    size_t len = load_len(o);
    struct {
        int need;
        struct buffer *b;
        unsigned char fill;
        const char *what;
    } want[3] = {{c->need_rd, &w->rd, 0x5a, "read"}, {c->need_rd2, &w->rd2, 0x3c, "second read"},
                 {c->need_wr, &w->wr, 0x11, "write"}};
    for (int i = 0; i < 3; i++) {
        if (!want[i].need)
            continue;
        /* non-zero fill writes every page: untouched anonymous memory would read the shared zero page */
        if (alloc_placed(w, want[i].b, len, want[i].fill, err, sizeof err) != 0) {
            snprintf(w->err, sizeof w->err, "%s buffer on CPU %d: %s", want[i].what, w->cpu, err);
            return -1;
        }
    }
    return 0;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct ctx *c = w->ctx;
    w->failed = worker_init(w) != 0;
    pthread_barrier_wait(&c->bar);  /* init done */
    for (;;) {
        pthread_barrier_wait(&c->bar);  /* point start */
        if (atomic_load(&c->quit))
            break;
        if (!w->failed) {
            if (w->is_lat) {
                memset(&w->ca, 0, sizeof w->ca);
                w->ca.start = w->chain;
                w->ca.phase = &c->phase;
                w->ca.subwin = &c->subwin;
                w->ca.nwin = c->o->nwin;
                chase_run(&w->ca);
                w->chain = w->ca.end;  /* continue where the chase stopped */
            } else {
                struct load_args *a = &w->la;
                memset(a, 0, sizeof *a);
                a->tr = c->cur_tr;
                a->rd = w->rd.p;
                a->rd2 = w->rd2.p;
                a->wr = w->wr.p;
                a->rd_len = w->rd.len;
                a->wr_len = w->wr.len;
                a->access = c->o->access;
                a->delay = c->cur_delay;
                a->pacing_exp = c->o->pacing_exp;
                a->delay_mean = c->cur_delay_mean;
                a->random = c->o->random;
                uint64_t s = (uint64_t)w->index;
                a->seed = rng_next(&s);  /* a well-mixed seed per thread: streams far apart */
                a->phase = &c->phase;
                a->subwin = &c->subwin;
                a->nwin = c->o->nwin;
                a->tick_ns = c->cal_tick_ns;
                load_run(a);
            }
        }
        pthread_barrier_wait(&c->bar);  /* point done */
    }
    return NULL;
}

/* Sleep up to s seconds; returns 1 when a signal asked to stop. */
static int sleep_interruptible(double s)
{
    double end = now_s() + s;
    for (;;) {
        if (g_signal)
            return 1;
        double left = end - now_s();
        if (left <= 0)
            return 0;
        sleep_s(left < 0.05 ? left : 0.05);
    }
}

double warmup_s(const struct opts *o)
{
    double w = o->seconds / 4;
    return w > 0.5 ? 0.5 : (w < 0.05 ? 0.05 : w);
}

/* Steal time (USER_HZ ticks) of every CPU in /proc/stat: steal[cpu], -1 when not listed. Returns 0, or -1
 * when /proc/stat cannot be read. */
static int read_steal(long long *steal, int max)
{
    for (int i = 0; i < max; i++)
        steal[i] = -1;
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return -1;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        int cpu;
        long long v[8];
        if (strncmp(line, "cpu", 3) != 0 || line[3] < '0' || line[3] > '9')
            continue;
        if (sscanf(line, "cpu%d %lld %lld %lld %lld %lld %lld %lld %lld", &cpu, &v[0], &v[1], &v[2], &v[3], &v[4],
                   &v[5], &v[6], &v[7]) == 9 && cpu >= 0 && cpu < max)
            steal[cpu] = v[7];
    }
    fclose(f);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)  /* sorts v; NAN when n == 0 */
{
    if (n == 0)
        return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The mean of the delays the load threads run at `delay`: the delay itself (fixed pacing), or for exp
 * pacing the delay less what a draw costs (calibrate_exp_cost_ns), so both pacings space request groups
 * alike; never below 0. */
static double exp_mean_units(const struct ctx *c, uint64_t delay)
{
    if (!c->o->pacing_exp || delay == 0)
        return (double)delay;
    double m = (double)delay - c->exp_cost_units;
    return m > 0 ? m : 0.0;
}

/* CV of n, sum, sum of squares; NAN for fewer than 2 values. */
static double cv_of(double n, double sum, double sq, double *mean)
{
    *mean = n > 0 ? sum / n : NAN;
    if (n < 2 || !(*mean > 0))
        return NAN;
    double var = (sq - n * *mean * *mean) / (n - 1);
    return var > 0 ? sqrt(var) / *mean : 0.0;
}

/* arrival_cv of one load thread from its interval histogram: the median interval (the mean of the bin
 * holding it), then the moments of the bins whose mean is at most ARRIVAL_CUTOFF x the median. Longer
 * intervals are interruptions of the thread (descheduled, interrupts), not its pacing: under exponential
 * pacing an interval exceeds 20 x the median (13.9 x the mean) with probability 1e-6. */
#define ARRIVAL_CUTOFF 20.0
static void arrival_stats(const struct gap_hist *h, double ghz, struct thread_stat *t)
{
    double n = 0, sum = 0, sq = 0;
    for (int b = 0; b < GAP_BINS; b++) {
        n += (double)h->n[b];
        sum += h->sum[b];
        sq += h->sq[b];
    }
    double mean_all;
    t->arrival_cv_all = cv_of(n, sum, sq, &mean_all);
    if (n < 2)
        return;
    double half = n / 2, acc = 0, med = 0;
    for (int b = 0; b < GAP_BINS; b++) {
        acc += (double)h->n[b];
        if (h->n[b] && acc >= half) {
            med = h->sum[b] / (double)h->n[b];
            break;
        }
    }
    double kn = 0, ksum = 0, ksq = 0;
    uint64_t out = 0;
    for (int b = 0; b < GAP_BINS; b++) {
        if (!h->n[b])
            continue;
        if (h->sum[b] / (double)h->n[b] <= ARRIVAL_CUTOFF * med) {
            kn += (double)h->n[b];
            ksum += h->sum[b];
            ksq += h->sq[b];
        } else {
            out += h->n[b];
        }
    }
    double mean;
    t->arrival_cv = cv_of(kn, ksum, ksq, &mean);
    t->arrival_mean_ns = ghz > 0 && mean > 0 ? mean / ghz : NAN;
    t->arrival_samples = (uint64_t)kn;
    t->arrival_interruptions = out;
}

/* Per-thread and per-sub-window figures of a finished point (the JSON's threads[] and windows[]). */
static void point_details(struct ctx *c, const struct traffic *tr, struct result *r, const long long *steal0,
                          const long long *steal1, int have_steal)
{
    const struct opts *o = c->o;
    double bytes_per_group = (double)(tr->reads + tr->writes) * (double)o->access;
    double hz = (double)sysconf(_SC_CLK_TCK);
    r->nts = c->nw;
    r->ts = calloc((size_t)c->nw, sizeof *r->ts);
    r->nws = o->nwin;
    r->ws = calloc((size_t)o->nwin, sizeof *r->ws);
    double *cvs = calloc((size_t)c->nw + 1, sizeof *cvs);
    if (!r->ts || !r->ws || !cvs)
        die("out of memory");
    int ncv = 0;
    r->steal_pct = have_steal ? 0.0 : NAN;
    for (int i = 0; i < c->nw; i++) {
        struct worker *w = &c->w[i];
        struct thread_stat *t = &r->ts[i];
        t->cpu = w->cpu;
        t->is_lat = w->is_lat;
        t->arrival_cv = t->arrival_mean_ns = t->arrival_cv_all = NAN;
        double dt = w->is_lat ? w->ca.t1 - w->ca.t0 : w->la.t1 - w->la.t0;
        t->share = dt > 0 ? (w->is_lat ? w->ca.cpu_s : w->la.cpu_s) / dt : NAN;
        t->steal_pct = NAN;
        if (have_steal && w->cpu < LOADLAT_MAX_CPUS && steal0[w->cpu] >= 0 && steal1[w->cpu] >= 0 && dt > 0) {
            t->steal_pct = 100.0 * (double)(steal1[w->cpu] - steal0[w->cpu]) / hz / dt;
            if (t->steal_pct > r->steal_pct)
                r->steal_pct = t->steal_pct;
        }
        if (!w->is_lat) {
            arrival_stats(&w->la.gaps, c->cal_tick_ghz, t);
            t->arrival_period = w->la.gap_period;
        }
        if (!w->is_lat && !isnan(t->arrival_cv))
            cvs[ncv++] = t->arrival_cv;
    }
    r->arrival_cv = median(cvs, ncv);
    free(cvs);
    for (int k = 0; k < o->nwin; k++) {
        struct win_stat *ws = &r->ws[k];
        ws->latency_ns = NAN;
        ws->share_min = NAN;
        double sum_s = 0;
        int n = 0, bad = 0;
        for (int i = 0; i < c->nw; i++) {
            struct worker *w = &c->w[i];
            const struct win_marks *m = w->is_lat ? &w->ca.marks : &w->la.marks;
            double dt = m->t[k + 1] - m->t[k];
            if (!(dt > 0)) {
                bad = 1;
                continue;
            }
            double share = (m->cpu[k + 1] - m->cpu[k]) / dt;
            if (isnan(ws->share_min) || share < ws->share_min)
                ws->share_min = share;
            double cnt = (double)(m->n[k + 1] - m->n[k]);
            if (w->is_lat)
                ws->latency_ns = cnt > 0 ? dt * 1e9 / cnt : NAN;
            else
                ws->bw_MBps += cnt * bytes_per_group / dt / 1e6;
            sum_s += dt;
            n++;
        }
        ws->window_s = n ? sum_s / n : 0;
        if (bad) {  /* a thread saw this sub-window start and end at once (descheduled across it) */
            ws->latency_ns = NAN;
            ws->bw_MBps = NAN;
        }
    }
}

/* Run one point on the running threads. Returns 1 when interrupted (point discarded). */
int run_point(struct ctx *c, const struct traffic *tr, uint64_t delay, struct result *r)
{
    const struct opts *o = c->o;
    static long long steal0[LOADLAT_MAX_CPUS], steal1[LOADLAT_MAX_CPUS];
    memset(r, 0, sizeof *r);
    r->tr = tr;
    r->delay = delay;
    r->delay_mean = exp_mean_units(c, delay);
    c->cur_tr = tr;
    c->cur_delay = delay;
    c->cur_delay_mean = r->delay_mean;
    atomic_store(&c->subwin, 0);
    atomic_store(&c->phase, PH_WARMUP);
    pthread_barrier_wait(&c->bar);
    int stop = sleep_interruptible(warmup_s(o));
    int have_steal = 0;
    if (!stop) {
        have_steal = read_steal(steal0, LOADLAT_MAX_CPUS) == 0;
        double t0 = now_s();
        atomic_store(&c->phase, PH_MEASURE);
        for (int k = 1; k <= o->nwin && !stop; k++) {  /* sub-window k-1 ends at t0 + k * seconds / nwin */
            stop = sleep_interruptible(t0 + o->seconds * k / o->nwin - now_s());
            if (k < o->nwin)
                atomic_store(&c->subwin, k);
        }
        if (have_steal)
            have_steal = read_steal(steal1, LOADLAT_MAX_CPUS) == 0;
    }
    atomic_store(&c->phase, PH_STOP);
    pthread_barrier_wait(&c->bar);
    if (stop)
        return 1;

    r->ok = 1;
    r->lat_share = NAN;
    r->load_share = NAN;
    double bytes_per_group = (double)(tr->reads + tr->writes) * (double)o->access;
    double win = 0;
    int nwin = 0;
    for (int i = 0; i < c->nw; i++) {
        struct worker *w = &c->w[i];
        if (w->is_lat) {
            if (!w->ca.measured || w->ca.loads == 0) {
                r->ok = 0;
                snprintf(r->why, sizeof r->why, "latency thread on CPU %d saw no measured window", w->cpu);
                continue;
            }
            double dt = w->ca.t1 - w->ca.t0;
            r->latency_ns = dt * 1e9 / (double)w->ca.loads;
            r->loads = w->ca.loads;
            r->lat_share = w->ca.cpu_s / dt;
            win += dt;
            nwin++;
        } else {
            if (!w->la.measured) {
                r->ok = 0;
                snprintf(r->why, sizeof r->why, "load thread on CPU %d saw no measured window", w->cpu);
                continue;
            }
            double dt = w->la.t1 - w->la.t0;
            double g = (double)w->la.groups;
            r->bw_MBps += g * bytes_per_group / dt / 1e6;
            r->read_MBps += g * tr->reads * (double)o->access / dt / 1e6;
            r->write_MBps += g * tr->writes * (double)o->access / dt / 1e6;
            double share = w->la.cpu_s / dt;
            if (isnan(r->load_share) || share < r->load_share)
                r->load_share = share;
            win += dt;
            nwin++;
        }
    }
    r->window_s = nwin ? win / nwin : 0;
    if (r->ok)
        point_details(c, tr, r, steal0, steal1, have_steal);
    double share = isnan(r->lat_share) ? r->load_share
                   : isnan(r->load_share) ? r->lat_share
                   : fmin(r->lat_share, r->load_share);
    if (r->ok && share < 0.9)
        fprintf(stderr, "loadlat: warning: %s delay %llu: a measuring thread ran only %.0f%% of the window "
                        "(the CPU is shared with other work; this point is inflated)\n",
                tr->code, (unsigned long long)delay, 100.0 * share);
    return 0;
}

/* Which buffers each load thread needs: all three for peak bandwidth (its mixes change per point), else
 * those of the traffic type. */
void plan_buffers(struct ctx *c)
{
    const struct opts *o = c->o;
    if (o->mode == MODE_PEAK) {
        c->need_rd = c->need_rd2 = c->need_wr = 1;
    } else if (o->mode == MODE_LOADED) {
        c->need_rd = o->tr->reads > 0;
        c->need_rd2 = o->tr->triad;
        c->need_wr = o->tr->writes > 0;
    }
}

/* Refuse buffers beyond 90% of MemAvailable (the latency buffer counts 7% extra for its chain order). */
void check_memory(const struct ctx *c)
{
    const struct opts *o = c->o;
    double need = (uses_lat_thread(o) ? (double)o->lat_bytes * 1.07 : 0) +
                  (double)o->nload * (double)load_len(o) * (c->need_rd + c->need_rd2 + c->need_wr);
    long long avail = mem_available_bytes();
    if (avail > 0 && need > 0.9 * (double)avail)
        die_usage("-b: buffers need %.0f MiB but only %.0f MiB of memory are available: use a smaller -b",
                  need / 1048576.0, (double)avail / 1048576.0);
}

/* Delay unit and clock rates, measured on `cpu` (the CPU that will run the delay loop: the first load CPU,
 * else the latency CPU); the process's affinity mask is restored afterwards. */
void calibrate(struct calib *cal, const struct opts *o, int cpu)
{
    memset(cal, 0, sizeof *cal);
    cal->cpu = cpu;
    cpu_set_t saved;
    if (sched_getaffinity(0, sizeof saved, &saved) != 0)
        die("sched_getaffinity failed: %s", strerror(errno));
    int e = pin_self(cal->cpu);
    if (e)
        die("cannot pin to CPU %d for calibration: %s", cal->cpu, strerror(e));
    cal->core_ghz = calibrate_core_ghz();
    cal->delay_ns = calibrate_delay_ns(&cal->delay_iters);
    cal->tsc_ghz = calibrate_tsc_ghz();
    cal->cpufreq_max_ghz = cpufreq_max_ghz(cal->cpu);
    cal->core_check = core_clock_check(cal->core_ghz, cal->tsc_ghz, cal->cpufreq_max_ghz);
    cal->exp_cost_ns = o->pacing_exp ? calibrate_exp_cost_ns(cal->delay_ns) : NAN;
    cal->tick_ns = calibrate_tick_ns();
    cal->tick_ghz = tick_ghz(cal->tsc_ghz);
    if (strcmp(cal->core_check, "ok") != 0)
        fprintf(stderr, "loadlat: warning: core clock %.3f GHz is %s (TSC %.3f GHz); core-clock figures are "
                "unreliable, use the ns figures\n", cal->core_ghz, cal->core_check, cal->tsc_ghz);
    if (sched_setaffinity(0, sizeof saved, &saved) != 0)
        die("sched_setaffinity failed: %s", strerror(errno));
}

/* One thread per CPU, the latency thread first; each pins itself and sets up its buffers (worker_init).
 * SIGINT/SIGTERM are blocked in them so that only main sees them (main installs the handlers). */
void start_workers(struct ctx *c)
{
    const struct opts *o = c->o;
    int use_lat = uses_lat_thread(o);
    c->nw = (use_lat ? 1 : 0) + o->nload;
    c->w = calloc((size_t)c->nw, sizeof *c->w);
    if (!c->w)
        die("out of memory");
    int k = 0;
    if (use_lat) {
        c->w[k].cpu = o->lat_cpu;
        c->w[k].is_lat = 1;
        k++;
    }
    for (int i = 0; i < o->nload; i++, k++)
        c->w[k].cpu = o->load_cpus[i];
    for (int i = 0; i < c->nw; i++) {
        c->w[i].ctx = c;
        c->w[i].index = i;
        c->w[i].on_node = NAN;
    }
    int e = pthread_barrier_init(&c->bar, NULL, (unsigned)c->nw + 1);
    if (e)
        die("pthread_barrier_init failed: %s", strerror(e));
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    for (int i = 0; i < c->nw; i++) {
        e = pthread_create(&c->w[i].th, NULL, worker_main, &c->w[i]);
        if (e)
            die("pthread_create failed: %s", strerror(e));
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* Wait until every thread is pinned, its buffers first-touched and the chain built. Returns 0, with the
 * threads' errors on stderr, when any of them failed. */
int workers_ready(struct ctx *c)
{
    pthread_barrier_wait(&c->bar);
    int ok = 1;
    for (int i = 0; i < c->nw; i++)
        if (c->w[i].failed) {
            fprintf(stderr, "loadlat: %s\n", c->w[i].err);
            ok = 0;
        }
    return ok;
}

void stop_workers(struct ctx *c)
{
    atomic_store(&c->quit, 1);
    pthread_barrier_wait(&c->bar);
    for (int i = 0; i < c->nw; i++)
        pthread_join(c->w[i].th, NULL);
}

void run_alloc(struct run *run, int planned)
{
    memset(run, 0, sizeof *run);
    run->planned = planned;
    run->res = calloc((size_t)(planned > 0 ? planned : 1), sizeof *run->res);
    if (!run->res)
        die("out of memory");
}

void run_free(struct run *run)
{
    for (int i = 0; i < run->nres; i++) {
        free(run->res[i].ts);
        free(run->res[i].ws);
    }
    free(run->res);
    memset(run, 0, sizeof *run);
}

void free_workers(struct ctx *c)
{
    for (int i = 0; i < c->nw; i++) {
        buffer_free(&c->w[i].lat);
        buffer_free(&c->w[i].rd);
        buffer_free(&c->w[i].rd2);
        buffer_free(&c->w[i].wr);
    }
    pthread_barrier_destroy(&c->bar);
    free(c->w);
    c->w = NULL;
    c->nw = 0;
}

/* The options of one group of threads: the user's, with the worker mode (MODE_IDLE: a latency thread;
 * MODE_LOADED: a latency thread unless no_lat, and load threads; MODE_PEAK: load threads with every buffer),
 * its CPUs and its traffic. Free with free(). */
struct opts *group_opts(const struct env *e, enum mode wmode, int lat_cpu, const int *loads, int nload,
                        const struct traffic *tr, int no_lat)
{
    struct opts *g = malloc(sizeof *g);
    if (!g)
        die("out of memory");
    *g = *e->o;
    g->mode = wmode;
    g->lat_cpu = lat_cpu;
    g->nload = nload;
    if (nload)
        memcpy(g->load_cpus, loads, sizeof(int) * (size_t)nload);
    g->tr = tr;
    g->no_lat = no_lat;
    if (wmode != MODE_LOADED || no_lat)
        g->pacing_exp = 0;  /* pacing is the loaded-latency sweep's; the other groups run at delay 0 */
    return g;
}

/* Start the threads of a group on the options g, their buffers placed on mem_node (-1: local first touch;
 * touch_cpu: a CPU of mem_node for the first touch when mbind fails). Returns 0, or -1 (threads' errors on
 * stderr, nothing left running). */
int group_start(struct ctx *c, const struct env *e, const struct opts *g, int mem_node, int touch_cpu)
{
    memset(c, 0, sizeof *c);
    c->o = g;
    c->mem_node = mem_node;
    c->touch_cpu = touch_cpu;
    c->exp_cost_units = g->pacing_exp && e->cal.delay_ns > 0 ? e->cal.exp_cost_ns / e->cal.delay_ns : 0.0;
    c->cal_tick_ghz = e->cal.tick_ghz;
    c->cal_tick_ns = e->cal.tick_ns;
    plan_buffers(c);
    start_workers(c);
    if (!workers_ready(c)) {
        stop_workers(c);
        free_workers(c);
        return -1;
    }
    return 0;
}

/* MLC's rule for loaded latency on a machine of several NUMA nodes: the load threads' buffers go where the
 * latency thread reads, the latency CPU's node (else the latency thread would see only the share of the load
 * that lands on its own node). Returns that node, with *touch_cpu = the latency CPU (the first touch when mbind
 * is refused), or -1 (one node, no latency thread, or its node unknown: each thread's buffer local to it). */
int loaded_home_node(const struct env *e, const struct opts *g, int *touch_cpu)
{
    *touch_cpu = -1;
    if (e->topo.n < 2 || g->mode != MODE_LOADED || g->lat_cpu < 0 || !g->nload)
        return -1;
    int i = numa_index_of_cpu(&e->topo, g->lat_cpu);
    if (i < 0)
        return -1;
    *touch_cpu = g->lat_cpu;
    return e->topo.node[i];
}

void group_end(struct ctx *c)
{
    stop_workers(c);
    free_workers(c);
}

/* Where a group's buffers went: the first placement recorded, the least fraction of pages on the node. */
void group_placement(const struct ctx *c, const char **placement, double *on_node, const char **mbind_err)
{
    *placement = NULL;
    *on_node = NAN;
    *mbind_err = NULL;
    for (int i = 0; i < c->nw; i++) {
        const struct worker *w = &c->w[i];
        if (!*placement && w->placement)
            *placement = w->placement;
        if (!*mbind_err && w->mbind_err[0])
            *mbind_err = w->mbind_err;
        if (!isnan(w->on_node) && (isnan(*on_node) || w->on_node < *on_node))
            *on_node = w->on_node;
    }
}
