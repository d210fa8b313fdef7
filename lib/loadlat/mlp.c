/* loadlat - an open, MLC-compatible loaded-latency tool (memstor).
 *
 * mlp.c: --mlp, memory-level parallelism (multichase's parallelN): N independent random chains interleaved in
 * ONE thread, one loop (p1 = *p1; p2 = *p2; ... pN = *pN), over a buffer far larger than the last-level cache
 * (-b, default 1 GiB). The chains are N points spaced slots/N apart on one random cyclic chain over every
 * line of the buffer (the idle-latency chain, chain_build_order), which all advance one line per round: they
 * never meet, no load depends on another chain's, and together they cover the whole buffer.
 * Per chain count N (--chains, default 1,2,4,8,16,32): a warm-up, then -t seconds (default 1):
 *   latency_ns     = elapsed / loads per chain (ns per access of one chain);
 *   bandwidth_MBps = N x line bytes x loads per chain / elapsed / 10^6 (every line fetched counted once; the
 *                    adjacent-line prefetcher may fetch more from DRAM, which this count does not see).
 * With --mlp-all-cores each N also runs on every CPU at once (-c and the -k CPUs, default every allowed CPU),
 * one thread per CPU on its own buffer (first touch): latency = the threads' seconds / their loads per chain,
 * summed (the mean latency of all their loads; a mean of the threads' latencies would overweight a thread
 * that was descheduled), bandwidth = the sum of the threads' bandwidths.
 */
#include "hier.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MLP_SEED 0x1234567ull                     /* + the CPU, as the idle-latency chain */
static const int MLP_DEFAULT_CHAINS[] = {1, 2, 4, 8, 16, 32};

struct mlp_stat {                                 /* one thread in one point */
    int cpu;
    uint64_t rounds;                              /* loads per chain */
    double seconds, cpu_s;
};

struct mlp_ctx;
struct mlp_thread {
    struct mlp_ctx *ctx;
    int cpu, index, failed;
    pthread_t th;
    struct buffer buf;
    uint32_t *order;                              /* the chain's visiting order (slot indexes) */
    size_t slots;
    struct mlp_stat st;
    char err[300];
};

struct mlp_ctx {
    pthread_barrier_t bar;
    _Atomic int quit;
    int cur_n, cur_all;                           /* the point: chains, all threads (1) or thread 0 only */
    int all_cores;                                /* --mlp-all-cores with more than one CPU */
    double seconds, warm_s;
    size_t bytes;
    int huge;
    struct mlp_thread *t;
    int nt;
};

/* `rounds` rounds of one load on each of the n chains p[0..n-1], interleaved in one loop. */
#define MLP_CASE(N)                                                                                           \
    case N: {                                                                                                 \
        void **q[N];                                                                                          \
        memcpy(q, p, sizeof q);                                                                               \
        for (uint64_t r = 0; r < rounds; r++) {                                                               \
            _Pragma("GCC unroll 64") for (int j = 0; j < N; j++) q[j] = (void **)*q[j];                       \
        }                                                                                                     \
        memcpy(p, q, sizeof q);                                                                               \
        break;                                                                                                \
    }
static void mlp_rounds(void **p[], int n, uint64_t rounds)
{
    switch (n) {
        MLP_CASE(1)
        MLP_CASE(2)
        MLP_CASE(4)
        MLP_CASE(8)
        MLP_CASE(16)
        MLP_CASE(32)
    default:
        for (uint64_t r = 0; r < rounds; r++)
            for (int j = 0; j < n; j++)
                p[j] = (void **)*p[j];
    }
}

/* Run n chains for `seconds` (blocks of ~16384 loads between clock reads); returns the rounds done. */
static uint64_t mlp_timed(void **p[], int n, double seconds, double *elapsed, double *cpu_s)
{
    uint64_t block = 16384 / (uint64_t)n, done = 0;
    double c0 = thread_cpu_s(), t0 = now_s(), t1 = t0;
    do {
        mlp_rounds(p, n, block);
        done += block;
        t1 = now_s();
    } while (t1 - t0 < seconds && !g_signal);
    *elapsed = t1 - t0;
    *cpu_s = thread_cpu_s() - c0;
    return done;
}

static void mlp_point(struct mlp_thread *t, int n)
{
    const struct mlp_ctx *c = t->ctx;
    void **p[MAX_CHAINS];
    for (int j = 0; j < n; j++)
        p[j] = chain_slot_at(&t->buf, (size_t)CHAIN_SLOT, MLP_SEED + (uint64_t)t->cpu,
                             t->order[(size_t)j * t->slots / (size_t)n]);
    double el, cpu;
    mlp_timed(p, n, c->warm_s, &el, &cpu);
    t->st.cpu = t->cpu;
    t->st.rounds = mlp_timed(p, n, c->seconds, &t->st.seconds, &t->st.cpu_s);
    volatile void *sink = p[0];  /* keep the chase live */
    (void)sink;
}

static void *mlp_main(void *arg)
{
    struct mlp_thread *t = arg;
    struct mlp_ctx *c = t->ctx;
    int e = pin_self(t->cpu);
    if (e) {
        snprintf(t->err, sizeof t->err, "cannot pin a thread to CPU %d: %s", t->cpu, strerror(e));
        t->failed = 1;
    } else if (buffer_alloc(&t->buf, c->bytes, c->huge, 0x00, t->err, sizeof t->err) != 0) {
        t->failed = 1;
    } else {
        t->slots = t->buf.len / (size_t)CHAIN_SLOT;
        if (!chain_build_order(&t->buf, (size_t)CHAIN_SLOT, MLP_SEED + (uint64_t)t->cpu, &t->order)) {
            snprintf(t->err, sizeof t->err, "chain on CPU %d: out of memory (use a smaller -b)", t->cpu);
            t->failed = 1;
        } else {
            t->buf.anon_huge_kib = smaps_anon_huge_kib(t->buf.p);
        }
    }
    pthread_barrier_wait(&c->bar);  /* set up */
    for (;;) {
        pthread_barrier_wait(&c->bar);  /* point start */
        if (atomic_load(&c->quit))
            break;
        memset(&t->st, 0, sizeof t->st);
        if (!t->failed && (c->cur_all || t->index == 0))
            mlp_point(t, c->cur_n);
        pthread_barrier_wait(&c->bar);  /* point done */
    }
    return NULL;
}

/* The CPUs: -c first, then the -k CPUs (default every allowed CPU) without it; one with --mlp-all-cores. */
static int mlp_cpus(const struct env *e, int *out)
{
    const struct opts *o = e->o;
    int n = 0;
    out[n++] = o->lat_cpu;
    if (!o->mlp_all)
        return n;
    const int *src = o->k_given ? o->load_cpus : e->allowed;
    int nsrc = o->k_given ? o->nload : e->nallowed;
    for (int i = 0; i < nsrc; i++)
        if (src[i] != o->lat_cpu)
            out[n++] = src[i];
    return n;
}

static void mlp_start(struct mlp_ctx *c, const int *cpus, int n)
{
    c->nt = n;
    c->t = calloc((size_t)n, sizeof *c->t);
    if (!c->t)
        die("out of memory");
    int e = pthread_barrier_init(&c->bar, NULL, (unsigned)n + 1);
    if (e)
        die("pthread_barrier_init failed: %s", strerror(e));
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &block, &old);  /* only main sees the signals */
    for (int i = 0; i < n; i++) {
        c->t[i].ctx = c;
        c->t[i].cpu = cpus[i];
        c->t[i].index = i;
        e = pthread_create(&c->t[i].th, NULL, mlp_main, &c->t[i]);
        if (e)
            die("pthread_create failed: %s", strerror(e));
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_barrier_wait(&c->bar);
}

static void mlp_stop(struct mlp_ctx *c)
{
    atomic_store(&c->quit, 1);
    pthread_barrier_wait(&c->bar);
    for (int i = 0; i < c->nt; i++) {
        pthread_join(c->t[i].th, NULL);
        buffer_free(&c->t[i].buf);
        free(c->t[i].order);
    }
    pthread_barrier_destroy(&c->bar);
    free(c->t);
}

/* One measured point (n chains on `threads` threads) as found in the threads' stats. */
struct mlp_point {
    int chains, threads, ok;
    double latency_ns, bandwidth_MBps, seconds, cpu_share_min;
    struct mlp_stat st[LOADLAT_MAX_CPUS > 256 ? 256 : LOADLAT_MAX_CPUS];
};

static void mlp_collect(const struct mlp_ctx *c, struct mlp_point *pt)
{
    double secs = 0, loads = 0;
    pt->ok = 1;
    pt->cpu_share_min = NAN;
    pt->bandwidth_MBps = 0;
    for (int i = 0; i < pt->threads; i++) {
        const struct mlp_stat *s = &c->t[i].st;
        pt->st[i] = *s;
        if (c->t[i].failed || s->rounds == 0 || !(s->seconds > 0)) {
            pt->ok = 0;
            continue;
        }
        loads += (double)s->rounds;
        secs += s->seconds;
        pt->bandwidth_MBps += (double)pt->chains * CHAIN_SLOT * (double)s->rounds / s->seconds / 1e6;
        double share = s->cpu_s / s->seconds;
        if (isnan(pt->cpu_share_min) || share < pt->cpu_share_min)
            pt->cpu_share_min = share;
    }
    pt->latency_ns = loads > 0 ? secs * 1e9 / loads : NAN;  /* over every load of every thread's chains */
    pt->seconds = secs / pt->threads;
    if (pt->ok && pt->cpu_share_min < 0.9)
        fprintf(stderr, "loadlat: warning: %d chains on %d thread(s): a thread ran only %.0f%% of the window (the "
                        "CPU is shared with other work; this point is inflated)\n",
                pt->chains, pt->threads, 100 * pt->cpu_share_min);
}

static void mlp_print_setup(const struct env *e, const struct mlp_ctx *c, const int *chains, int nchains)
{
    const struct opts *o = e->o;
    char cpus[512] = "";
    for (int i = 0, pos = 0; i < c->nt && pos < (int)sizeof cpus - 12; i++)
        pos += snprintf(cpus + pos, sizeof cpus - (size_t)pos, "%s%d", i ? "," : "", c->t[i].cpu);
    printf("# mlp: chains");
    for (int i = 0; i < nchains; i++)
        printf(" %d", chains[i]);
    printf(" interleaved in one thread on CPU %d%s%s; each N: warm-up %.3f s, then %.3f s measured\n", o->lat_cpu,
           c->all_cores ? ", then on every CPU at once: " : "", c->all_cores ? cpus : "", c->warm_s, c->seconds);
    if (o->mlp_all && !c->all_cores)
        printf("# --mlp-all-cores: only CPU %d is allowed, so there are no rows on every CPU at once\n", o->lat_cpu);
    printf("# chains: N points spaced evenly on one random cyclic chain over every %d-byte line of a %.3f MiB "
           "buffer per thread; latency = elapsed / loads per chain, bandwidth = N x %d B x loads per chain / "
           "elapsed (MB = 1e6 bytes)\n", CHAIN_SLOT, (double)c->bytes / 1048576.0, CHAIN_SLOT);
    long long huge = 0, tot = 0;
    for (int i = 0; i < c->nt; i++) {
        tot += (long long)(c->t[i].buf.len / 1024);
        huge += c->t[i].buf.anon_huge_kib > 0 ? c->t[i].buf.anon_huge_kib : 0;
    }
    printf("# huge pages: %s; THP enabled=%s defrag=%s; AnonHugePages in buffers: %lld of %lld KiB (%.1f%%)\n",
           o->huge ? "requested with madvise(MADV_HUGEPAGE) (-L)" : "not requested (MADV_NOHUGEPAGE)",
           e->thp.enabled, e->thp.defrag, huge, tot, tot ? 100.0 * (double)huge / (double)tot : 0.0);
    if (o->huge && huge == 0)
        fprintf(stderr, "loadlat: warning: -L asked for huge pages but none are in use (THP enabled=%s)\n",
                e->thp.enabled);
    printf("Measuring memory-level parallelism (independent random chains in one thread)\n");
    printf("Chains\tThreads\tLatency\tCore\tBandwidth\n");
    printf("\t\t(ns)\tclocks\tMB/sec\n");
    printf("==========================================\n");
    fflush(stdout);
}

static void mlp_print_row(const struct mlp_point *pt, const struct calib *cal)
{
    if (!pt->ok) {
        printf("# %d chains on %d thread(s): failed (a thread could not set up its buffer)\n", pt->chains, pt->threads);
        return;
    }
    printf("%6d\t%6d\t%7.2f\t", pt->chains, pt->threads, pt->latency_ns);
    print_clocks_cell(pt->latency_ns, cal);
    printf("\t%9.1f\n", pt->bandwidth_MBps);
    fflush(stdout);
}

static void mlp_json_point(FILE *f, int first, const struct mlp_point *pt, const struct calib *cal)
{
    fprintf(f, "%s\n    {\"status\": \"%s\", \"chains\": %d, \"threads\": %d, \"latency_ns\": ", first ? "" : ",",
            pt->ok ? "ok" : "failed", pt->chains, pt->threads);
    json_num(f, pt->ok ? pt->latency_ns : NAN);
    fputs(", \"latency_core_clocks\": ", f);
    json_num(f, pt->ok && clocks_known(cal) ? pt->latency_ns * cal->core_ghz : NAN);
    fputs(", \"bandwidth_MBps\": ", f);
    json_num(f, pt->ok ? pt->bandwidth_MBps : NAN);
    fputs(", \"seconds\": ", f);
    json_num(f, pt->seconds);
    fputs(", \"cpu_share_min\": ", f);
    json_num(f, pt->cpu_share_min);
    fputs(",\n     \"per_thread\": [", f);
    for (int i = 0; i < pt->threads; i++) {
        const struct mlp_stat *s = &pt->st[i];
        fprintf(f, "%s{\"cpu\": %d, \"loads_per_chain\": %llu, \"seconds\": ", i ? ", " : "", s->cpu,
                (unsigned long long)s->rounds);
        json_num(f, s->seconds);
        fputs(", \"latency_ns\": ", f);
        json_num(f, s->rounds ? s->seconds * 1e9 / (double)s->rounds : NAN);
        fputs(", \"bandwidth_MBps\": ", f);
        json_num(f, s->seconds > 0 ? (double)pt->chains * CHAIN_SLOT * (double)s->rounds / s->seconds / 1e6 : NAN);
        fputs(", \"cpu_share\": ", f);
        json_num(f, s->seconds > 0 ? s->cpu_s / s->seconds : NAN);
        fputc('}', f);
    }
    fputs("]}", f);
}

static void mlp_json(const struct env *e, const struct caches *k, const struct mlp_ctx *c, const int *chains,
                     int nchains, const struct mlp_point *pts, int done, int planned, int interrupted)
{
    const struct opts *o = e->o;
    char tmp[4096];
    FILE *f = hier_json_open(o->json, tmp, sizeof tmp);
    hier_json_head(f, e, MODE_NAMES[MODE_MLP], k);
    fprintf(f, ",\n  \"latency_cpu\": %d,\n  \"cpus\": [", o->lat_cpu);
    for (int i = 0; i < c->nt; i++)
        fprintf(f, "%s%d", i ? ", " : "", c->t[i].cpu);
    fprintf(f, "],\n  \"all_cores\": %s,\n  \"chains_list\": [", c->all_cores ? "true" : "false");
    for (int i = 0; i < nchains; i++)
        fprintf(f, "%s%d", i ? ", " : "", chains[i]);
    fprintf(f, "],\n  \"buffer_bytes\": %zu,\n  \"line_bytes\": %d,\n  \"seconds_per_point\": ", c->bytes, CHAIN_SLOT);
    json_num(f, c->seconds);
    fputs(",\n  \"warmup_s\": ", f);
    json_num(f, c->warm_s);
    fputs(",\n  \"latency_method\": \"elapsed / loads per chain (CLOCK_MONOTONIC); threads: sum of elapsed / sum of "
          "loads per chain\",\n  \"bandwidth_method\": "
          "\"chains x line_bytes x loads per chain / elapsed, summed over threads (MB = 1e6 bytes)\",\n", f);
    long long huge = 0, tot = 0;
    fprintf(f, "  \"huge_pages\": {\"requested\": %s, \"thp_enabled\": \"%s\", \"thp_defrag\": \"%s\", \"buffers\": [",
            o->huge ? "true" : "false", e->thp.enabled, e->thp.defrag);
    for (int i = 0; i < c->nt; i++) {
        const struct buffer *b = &c->t[i].buf;
        fprintf(f, "%s{\"cpu\": %d, \"bytes\": %zu, \"anon_huge_bytes\": ", i ? ", " : "", c->t[i].cpu, b->len);
        if (b->anon_huge_kib >= 0)
            fprintf(f, "%lld}", b->anon_huge_kib * 1024);
        else
            fputs("null}", f);
        tot += (long long)b->len;
        huge += b->anon_huge_kib > 0 ? b->anon_huge_kib * 1024 : 0;
    }
    fputs("], \"huge_fraction\": ", f);
    json_num(f, tot ? (double)huge / (double)tot : NAN);
    fprintf(f, "},\n  \"points_planned\": %d,\n  \"interrupted\": %s,\n  \"points\": [", planned,
            interrupted ? "true" : "false");
    for (int i = 0; i < done; i++)
        mlp_json_point(f, i == 0, &pts[i], &e->cal);
    fputs("\n  ]\n}", f);
    hier_json_close(f, tmp, o->json);
}

int run_mlp(struct env *e)
{
    const struct opts *o = e->o;
    struct caches k;
    caches_read(&k);
    const int *chains = o->nchains ? o->chains : MLP_DEFAULT_CHAINS;
    int nchains = o->nchains ? o->nchains : (int)(sizeof MLP_DEFAULT_CHAINS / sizeof MLP_DEFAULT_CHAINS[0]);
    static int cpus[LOADLAT_MAX_CPUS];
    int ncpu = mlp_cpus(e, cpus);
    if (ncpu > 256)
        die_usage("--mlp-all-cores: at most 256 CPUs (give -k)");
    static struct mlp_ctx c;
    c.bytes = lat_len(o);
    c.huge = o->huge;
    c.seconds = o->t_given ? o->seconds : MLP_DEFAULT_SECONDS;
    c.warm_s = fmin(0.5, fmax(0.05, c.seconds / 4));
    long long avail = mem_available_bytes();
    double need = (double)ncpu * (double)c.bytes * 1.07;  /* + 4 bytes of chain order per 64-byte line */
    if (avail > 0 && need > 0.9 * (double)avail)
        die_usage("-b: %d buffer(s) need %.0f MiB but only %.0f MiB of memory are available: use a smaller -b",
                  ncpu, need / 1048576.0, (double)avail / 1048576.0);
    hier_setup(e, o->lat_cpu, &k);
    mlp_start(&c, cpus, ncpu);
    c.all_cores = o->mlp_all && c.nt > 1;
    for (int i = 0; i < c.nt; i++)
        if (c.t[i].failed)
            die("%s", c.t[i].err);
    mlp_print_setup(e, &c, chains, nchains);
    int planned = nchains * (c.all_cores ? 2 : 1), done = 0, stop = 0;
    struct mlp_point *pts = calloc((size_t)planned, sizeof *pts);
    if (!pts)
        die("out of memory");
    for (int i = 0; i < nchains && !stop; i++)
        for (int all = 0; all <= c.all_cores && !stop; all++) {
            struct mlp_point *pt = &pts[done];
            c.cur_n = pt->chains = chains[i];
            c.cur_all = all;
            pt->threads = all ? c.nt : 1;
            pthread_barrier_wait(&c.bar);  /* point start */
            pthread_barrier_wait(&c.bar);  /* point done */
            if ((stop = g_signal != 0))
                break;
            mlp_collect(&c, pt);
            mlp_print_row(pt, &e->cal);
            done++;
        }
    if (stop)
        print_interrupted(done, planned);
    if (o->json)
        mlp_json(e, &k, &c, chains, nchains, pts, done, planned, stop);
    int failed = 0;
    for (int i = 0; i < done; i++)
        failed |= !pts[i].ok;
    mlp_stop(&c);
    free(pts);
    return stop ? 128 + (int)g_signal : failed ? 1 : 0;
}
