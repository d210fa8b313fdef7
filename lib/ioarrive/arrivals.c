/* ioarrive - memstor's arrival-driven (open-loop) I/O generator.
 *
 * arrivals.c: random numbers (xoshiro256**, seeded by splitmix64: one stream per direction and purpose),
 * the arrival processes (times in ns after the start), the offsets, the trace file and the simulated
 * device's service times (det, exp, or drawn from a histogram file; one class per direction).
 */
#include "ioarrive.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void rng_seed(struct rng *r, uint64_t seed, uint64_t stream)
{
    uint64_t x = seed * 0x2545f4914f6cdd1dULL + stream * 0x9e3779b97f4a7c15ULL + 1;
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t rng_next(struct rng *r)
{
    uint64_t *s = r->s, result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t; s[3] = rotl(s[3], 45);
    return result;
}

double rng_unit(struct rng *r)
{
    return ((double)(rng_next(r) >> 11) + 1.0) * 0x1.0p-53;  /* (0, 1]: log() never sees 0 */
}

/* ------------------------------------------------------------------------------------------ arrivals */

static double trace_time_ns(const struct gen *g, uint64_t n)
{
    const struct trace *tr = &g->dj->tr;
    uint64_t cycle = n / tr->n, i = n % tr->n;
    double scale = tr->rate_iops / g->dj->rate_iops;      /* > 1: the trace slowed down */
    double period_s = (double)tr->n / g->dj->rate_iops;
    return ((double)cycle * period_s + tr->t_s[i] * scale) * 1e9;
}

void gen_init(struct gen *g, const struct job *j, int d, uint64_t span)
{
    memset(g, 0, sizeof *g);
    g->dj = &j->dir[d];
    rng_seed(&g->arr, j->seed, 2 * (uint64_t)d + 1);
    rng_seed(&g->off, j->seed, 2 * (uint64_t)d + 2);
    g->bs = j->bs;
    g->nblocks = span / j->bs;
    g->random = j->random;
    g->phase = rng_unit(&g->arr);
    if (g->dj->proc == PROC_POISSON)
        g->t_ns = -log(rng_unit(&g->arr)) / g->dj->rate_iops * 1e9;
    else if (g->dj->proc == PROC_CONSTANT)
        g->t_ns = g->phase / g->dj->rate_iops * 1e9;
    else
        g->t_ns = trace_time_ns(g, 0);
}

void gen_advance(struct gen *g)
{
    g->n++;
    switch (g->dj->proc) {
    case PROC_POISSON: g->t_ns += -log(rng_unit(&g->arr)) / g->dj->rate_iops * 1e9; break;
    case PROC_CONSTANT: g->t_ns = ((double)g->n + g->phase) / g->dj->rate_iops * 1e9; break;
    default: g->t_ns = trace_time_ns(g, g->n); break;
    }
}

void gen_io(struct gen *g, uint64_t *off, uint32_t *len)
{
    if (g->dj->proc == PROC_TRACE) {
        uint64_t i = g->n % g->dj->tr.n;
        *off = g->dj->tr.off[i];
        *len = g->dj->tr.len[i];
        return;
    }
    *len = (uint32_t)g->bs;
    if (g->nblocks == 0) { *off = 0; return; }
    if (g->random) {
        *off = (rng_next(&g->off) % g->nblocks) * g->bs;
    } else {
        *off = g->seq_cursor * g->bs;
        g->seq_cursor = (g->seq_cursor + 1) % g->nblocks;
    }
}

/* --------------------------------------------------------------------------------------- trace files */

static int parse_op(const char *s)
{
    if (!strcmp(s, "r") || !strcmp(s, "R") || !strcmp(s, "read")) return DIR_READ;
    if (!strcmp(s, "w") || !strcmp(s, "W") || !strcmp(s, "write")) return DIR_WRITE;
    return -1;
}

static void trace_push(struct trace *tr, size_t *cap, double t, uint64_t off, uint32_t len)
{
    if (tr->n == *cap) {
        *cap = *cap ? 2 * *cap : 1024;
        tr->t_s = realloc(tr->t_s, *cap * sizeof *tr->t_s);
        tr->off = realloc(tr->off, *cap * sizeof *tr->off);
        tr->len = realloc(tr->len, *cap * sizeof *tr->len);
        if (!tr->t_s || !tr->off || !tr->len) die("out of memory reading the trace");
    }
    tr->t_s[tr->n] = t;
    tr->off[tr->n] = off;
    tr->len[tr->n++] = len;
}

/* Lines 'time_s op offset size' ('#' comments, blank lines skipped), times non-decreasing; the lines of
 * each op become that direction's trace (times from its first line). */
void load_trace(struct job *j)
{
    FILE *f = fopen(j->trace_path, "r");
    if (!f)
        die_usage("cannot read trace %s: %s", j->trace_path, strerror(errno));
    char line[512];
    size_t cap[NDIR] = {0, 0};
    double last = -INFINITY;
    for (int ln = 1; fgets(line, sizeof line, f); ln++) {
        char *hash = strchr(line, '#'), op[16];
        if (hash) *hash = 0;
        double t, off, len;
        int k = sscanf(line, "%lf %15s %lf %lf", &t, op, &off, &len);
        if (k <= 0) continue;
        int d = k == 4 ? parse_op(op) : -1;
        if (d < 0 || !isfinite(t) || t < 0 || off < 0 || len < 1 || len > 64.0 * 1048576 || off != floor(off)
            || len != floor(len))
            die_usage("trace %s line %d: expected 'time_s op offset size' (op r|read|w|write, size 1 B-64 MiB)",
                      j->trace_path, ln);
        if (t < last)
            die_usage("trace %s line %d: time %g s goes back (the lines must be in time order)", j->trace_path, ln, t);
        last = t;
        trace_push(&j->dir[d].tr, &cap[d], t, (uint64_t)off, (uint32_t)len);
    }
    fclose(f);
    for (int d = 0; d < NDIR; d++) {
        struct trace *tr = &j->dir[d].tr;
        if (j->dir[d].proc != PROC_TRACE || tr->n == 0) continue;
        if (tr->n < 2 || tr->t_s[tr->n - 1] <= tr->t_s[0])
            die_usage("trace %s: the %s lines need at least 2 distinct times (a rate)", j->trace_path, DIR_NAMES[d]);
        double t0 = tr->t_s[0], gap = (tr->t_s[tr->n - 1] - t0) / (double)(tr->n - 1);
        for (size_t i = 0; i < tr->n; i++)
            tr->t_s[i] -= t0;
        tr->rate_iops = 1.0 / gap;
    }
}

/* ------------------------------------------------------------------------------- simulated service */

void load_sim_hist(struct svc_cfg *s)
{
    FILE *f = fopen(s->hist_path, "r");
    if (!f)
        die_usage("--sim: cannot read the service histogram %s: %s", s->hist_path, strerror(errno));
    char line[256];
    size_t cap = 0;
    double total = 0, m1 = 0, m2 = 0;
    for (int ln = 1; fgets(line, sizeof line, f); ln++) {
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        double v, c;
        int k = sscanf(line, "%lf %lf", &v, &c);
        if (k <= 0) continue;
        if (k != 2 || !(v >= 0) || !(c >= 0) || !isfinite(v) || !isfinite(c))
            die_usage("--sim: %s line %d: expected 'value_us count'", s->hist_path, ln);
        if (s->hn == cap) {
            cap = cap ? 2 * cap : 64;
            s->hv_ns = realloc(s->hv_ns, cap * sizeof *s->hv_ns);
            s->hcum = realloc(s->hcum, cap * sizeof *s->hcum);
            if (!s->hv_ns || !s->hcum) die("out of memory");
        }
        s->hv_ns[s->hn] = v * 1e3;
        total += c;
        s->hcum[s->hn++] = total;
        m1 += c * v * 1e3;
        m2 += c * v * v * 1e6;
    }
    fclose(f);
    if (total <= 0 || m1 <= 0)
        die_usage("--sim: %s holds no positive service time with a count", s->hist_path);
    for (size_t i = 0; i < s->hn; i++)
        s->hcum[i] /= total;
    s->hcum[s->hn - 1] = 1.0;
    s->mean_ns = m1 / total;
    s->m2_ns2 = m2 / total;
}

double sim_service_ns(const struct svc_cfg *s, struct rng *r)
{
    if (s->kind == SVC_DET)
        return s->mean_ns;
    double u = rng_unit(r);
    if (s->kind == SVC_EXP)
        return -log(u) * s->mean_ns;
    size_t lo = 0, hi = s->hn - 1;  /* the first value whose cumulative weight reaches u */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->hcum[mid] >= u) hi = mid; else lo = mid + 1;
    }
    return s->hv_ns[lo];
}

/* Two classes with the same service time (kind, moments and histogram file): one distribution. */
int svc_same(const struct svc_cfg *a, const struct svc_cfg *b)
{
    return a->given == b->given && a->kind == b->kind && a->mean_ns == b->mean_ns && a->m2_ns2 == b->m2_ns2 &&
           (a->hist_path == b->hist_path || (a->hist_path && b->hist_path && !strcmp(a->hist_path, b->hist_path)));
}
