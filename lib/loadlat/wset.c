/* loadlat - an open, MLC-compatible loaded-latency tool (memstor).
 *
 * wset.c: --working_set, the latency of one dependent chain against the buffer size (lmbench's lat_mem_rd).
 *
 * One buffer of the largest size is allocated (first touch, -L: madvise(MADV_HUGEPAGE), the huge-page share
 * from smaps as in the other modes); each size chases a chain over the first `size` bytes of it, from
 * 4 KiB to --max-size (default 4 x the last-level cache from sysfs), --per-octave sizes per doubling
 * (4 K x 2^(i/per_octave), rounded to cache lines). The chain is the idle-latency chain (chain_build: every
 * line of the prefix once, in a random cyclic order, the pointer at a random 8-byte offset in its line), or
 * with --stride=N a sequential one (a pointer every N bytes, in address order, wrapping), which the hardware
 * prefetchers can follow. Per size, on the measuring CPU (-c):
 *   warm-up   two passes over the chain (at most a quarter of the size's time, 20 ms at least);
 *   mean      a stamp-free chase timed with CLOCK_MONOTONIC: ns per load = elapsed / loads (-t/2 s, or
 *             --accesses loads), and core clocks = ns x the calibrated core GHz when that passed its check;
 *   batches   the chase again in batches of --batch loads (default 256), each timed with the fenced cheap
 *             stamp (batch_stamp, hier.h); p50/p90/p99 of the batch means (ns per load) - percentiles over
 *             batch means, not over single loads. Every batch holds one stamp (stamp_ns in the JSON):
 *             its means are higher than single loads by at most stamp_ns / batch.
 */
#include "hier.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define WS_MAX_SIZES 4096
#define WS_MAX_BATCHES ((size_t)1 << 20)   /* batch times kept per size (8 MiB) */
#define WS_MEAN_BLOCK 16384                /* loads between clock reads in the mean pass */
#define WS_SEED 0x1234567ull               /* + the CPU, as the idle-latency chain */

struct ws_plan {
    size_t slot;                           /* bytes per line of the random chain */
    size_t stride;                         /* sequential chain stride in bytes; 0: random chain */
    double pass_s;                         /* time per pass (mean, batches) when accesses == 0 */
    uint64_t accesses;                     /* loads per pass (--accesses), 0: time budget */
    int batch;                             /* loads per timed batch */
    double tick_ghz;                       /* batch_stamp ticks per ns */
    double stamp_ns;                       /* cost of one batch_stamp in ns (median of back-to-back pairs) */
    double warm_cap_s;
    uint64_t seed;
};

struct ws_point {
    size_t bytes, slots;
    uint64_t warm_loads, accesses, batches;
    double seconds, latency_ns, cpu_share;
    double batch_mean_ns, p50_ns, p90_ns, p99_ns, min_ns, max_ns;
};

/* 4 KiB x 2^(i / per_octave) up to `hi`, rounded to `unit`, increasing; `hi` itself last when the grid
 * misses it. Returns the count. */
static int ws_sizes(size_t hi, int per_octave, size_t unit, size_t *out, int max)
{
    int n = 0;
    for (int i = 0; n < max; i++) {
        double x = (double)WS_MIN_BYTES * pow(2.0, (double)i / per_octave);
        if (x > (double)hi * (1 + 1e-9))
            break;
        size_t s = (size_t)llround(x / (double)unit) * unit;
        if (s < unit)
            s = unit;
        if (n == 0 || s > out[n - 1])
            out[n++] = s;
    }
    size_t top = hi / unit * unit;
    if (n < max && (n == 0 || top > out[n - 1]))
        out[n++] = top;
    return n;
}

/* The sequential chain over v: a pointer every `stride` bytes pointing to the next, the last to the first. */
static void **ws_link_seq(const struct buffer *v, size_t stride)
{
    size_t n = v->len / stride;
    if (n == 0)
        n = 1;
    for (size_t k = 0; k < n; k++)
        *(void **)(v->p + k * stride) = (void *)(v->p + ((k + 1) % n) * stride);
    return (void **)v->p;
}

/* Warm-up: two passes over the chain (`slots` loads each), at most cap_s seconds. Returns the loads. */
static uint64_t ws_warm(void ***pp, size_t slots, double cap_s)
{
    uint64_t want = 2 * (uint64_t)slots, done = 0;
    double t0 = now_s();
    while (done < want && !g_signal) {
        uint64_t n = want - done < 4096 ? want - done : 4096;
        chase_loads(pp, n);
        done += n;
        if (now_s() - t0 > cap_s)
            break;
    }
    return done;
}

/* The mean: a stamp-free chase, CLOCK_MONOTONIC around blocks of WS_MEAN_BLOCK loads. 1 = interrupted. */
static int ws_mean(void ***pp, const struct ws_plan *pl, struct ws_point *pt)
{
    uint64_t n = 0;
    double c0 = thread_cpu_s(), t0 = now_s(), t1 = t0;
    for (;;) {
        uint64_t todo = WS_MEAN_BLOCK;
        if (pl->accesses) {
            if (n >= pl->accesses)
                break;
            todo = pl->accesses - n < todo ? pl->accesses - n : todo;
        }
        chase_loads(pp, todo);
        n += todo;
        t1 = now_s();
        if (g_signal)
            return 1;
        if (!pl->accesses && t1 - t0 >= pl->pass_s)
            break;
    }
    pt->accesses = n;
    pt->seconds = t1 - t0;
    pt->latency_ns = (t1 - t0) * 1e9 / (double)n;
    pt->cpu_share = (thread_cpu_s() - c0) / (t1 - t0);
    return 0;
}

/* The batched pass: batch times (ticks) into buf, then their percentiles per load. 1 = interrupted. */
static int ws_batched(void ***pp, const struct ws_plan *pl, struct ws_point *pt, uint64_t *buf)
{
    const uint64_t b = (uint64_t)pl->batch;
    uint64_t want = pl->accesses ? (pl->accesses + b - 1) / b : WS_MAX_BATCHES;
    uint64_t budget = (uint64_t)(pl->pass_s * 1e9 * pl->tick_ghz);
    size_t nb = 0;
    uint64_t sum = 0, start = batch_stamp(), prev = start;
    while (nb < want && nb < WS_MAX_BATCHES) {
        chase_loads(pp, b);
        uint64_t t = batch_stamp();
        buf[nb++] = t - prev;
        sum += t - prev;
        prev = t;
        if ((nb & 63) == 0) {
            if (g_signal)
                return 1;
            if (!pl->accesses && t - start >= budget)
                break;
        }
    }
    double per = 1.0 / (pl->tick_ghz * (double)b);  /* ticks of a batch -> ns per load */
    sort_u64(buf, nb);
    pt->batches = nb;
    pt->batch_mean_ns = (double)sum / (double)nb * per;
    pt->p50_ns = percentile_u64(buf, nb, 0.50) * per;
    pt->p90_ns = percentile_u64(buf, nb, 0.90) * per;
    pt->p99_ns = percentile_u64(buf, nb, 0.99) * per;
    pt->min_ns = (double)buf[0] * per;
    pt->max_ns = (double)buf[nb - 1] * per;
    return 0;
}

/* One size: its chain over the first `bytes` of the buffer, warm-up, mean, batches. 1 = interrupted. */
static int ws_measure(const struct buffer *buf, const struct ws_plan *pl, size_t bytes, struct ws_point *pt,
                      uint64_t *times)
{
    struct buffer v = *buf;
    v.len = bytes;
    memset(pt, 0, sizeof *pt);
    pt->bytes = bytes;
    void **p;
    if (pl->stride) {
        pt->slots = bytes / pl->stride ? bytes / pl->stride : 1;
        p = ws_link_seq(&v, pl->stride);
    } else {
        pt->slots = bytes / pl->slot;
        p = chain_build(&v, pl->slot, pl->seed);
        if (!p)
            die("working set %zu bytes: out of memory for the chain order", bytes);
    }
    double cap = pl->accesses ? 0.1 : fmax(0.02, pl->pass_s / 2);
    pt->warm_loads = ws_warm(&p, pt->slots, fmin(cap, pl->warm_cap_s));
    int stop = g_signal || ws_mean(&p, pl, pt) || ws_batched(&p, pl, pt, times);
    volatile void *sink = p;  /* keep the chase live */
    (void)sink;
    if (!stop && pt->cpu_share < 0.9)
        fprintf(stderr, "loadlat: warning: working set %.2f KiB: the measuring thread ran only %.0f%% of the "
                        "time (the CPU is shared with other work; this size is inflated)\n",
                (double)bytes / 1024, 100 * pt->cpu_share);
    return stop;
}

/* Cost of one batch_stamp in ns: the median of 1001 differences of back-to-back stamps. */
static double stamp_cost_ns(double tick_ghz)
{
    static uint64_t d[1001];
    for (int i = 0; i < 1001; i++) {
        uint64_t a = batch_stamp(), b = batch_stamp();
        d[i] = b - a;
    }
    sort_u64(d, 1001);
    return (double)d[500] / tick_ghz;
}

/* The '#' lines of the mode and the table heading. */
static void ws_print_setup(const struct env *e, const struct ws_plan *pl, const size_t *sizes, int n,
                           const char *max_src, const struct buffer *buf)
{
    const struct opts *o = e->o;
    printf("# working set: %.2f KiB to %.2f KiB, %d sizes per doubling (%d sizes), rounded to %zu-byte lines; "
           "largest: %s\n", (double)sizes[0] / 1024, (double)sizes[n - 1] / 1024,
           o->per_octave ? o->per_octave : WS_DEFAULT_PER_OCTAVE, n, pl->slot, max_src);
    if (pl->stride)
        printf("# chain: sequential, one pointer every %zu bytes in address order, wrapping (stride %zu B); the "
               "hardware prefetchers can follow it\n", pl->stride, pl->stride);
    else
        printf("# chain: every %zu-byte line of the buffer once in a random cyclic order (the idle-latency chain, "
               "a random 8-byte offset in each line); one dependent load at a time\n", pl->slot);
    long long huge = buf->anon_huge_kib;
    printf("# huge pages: %s; THP enabled=%s defrag=%s; AnonHugePages in the buffer: %s%lld of %zu KiB (%.1f%%)\n",
           o->huge ? "requested with madvise(MADV_HUGEPAGE) (-L)" : "not requested (MADV_NOHUGEPAGE)",
           e->thp.enabled, e->thp.defrag, huge < 0 ? "unknown " : "", huge < 0 ? 0 : huge, buf->len / 1024,
           huge < 0 ? 0.0 : 100.0 * (double)huge * 1024 / (double)buf->len);
    if (o->huge && huge == 0)
        fprintf(stderr, "loadlat: warning: -L asked for huge pages but none are in use (THP enabled=%s)\n",
                e->thp.enabled);
    if (pl->accesses)
        printf("# timing per size: warm-up (two passes over the chain, at most 0.1 s), then %llu loads for the "
               "mean (CLOCK_MONOTONIC, no stamps) and %llu for the percentiles\n",
               (unsigned long long)pl->accesses, (unsigned long long)pl->accesses);
    else
        printf("# timing per size: warm-up (two passes over the chain, at most %.3f s), then %.3f s for the mean "
               "(CLOCK_MONOTONIC, no stamps) and %.3f s for the percentiles\n",
               fmin(fmax(0.02, pl->pass_s / 2), pl->warm_cap_s), pl->pass_s, pl->pass_s);
    printf("# percentiles p50/p90/p99: over the means of batches of %d dependent loads timed with %s "
           "(one tick %.3f ns, %.2f ns per stamp: at most +%.3f ns per load in them), not over single loads\n",
           pl->batch, BATCH_TIMER, 1.0 / pl->tick_ghz, pl->stamp_ns, pl->stamp_ns / pl->batch);
    printf("Measuring latency vs working set (one dependent chain, %s)\n", pl->stride ? "sequential" : "random");
    printf("Buffer\tLatency\tCore\tp50\tp90\tp99\n");
    printf("(KiB)\t(ns)\tclocks\t(ns)\t(ns)\t(ns)\n");
    printf("==================================================\n");
    fflush(stdout);
}

static void ws_print_row(const struct ws_point *pt, const struct calib *cal)
{
    printf("%10.2f\t%7.2f\t", (double)pt->bytes / 1024, pt->latency_ns);
    print_clocks_cell(pt->latency_ns, cal);
    printf("\t%7.2f\t%7.2f\t%7.2f\n", pt->p50_ns, pt->p90_ns, pt->p99_ns);
    fflush(stdout);
}

static void ws_json_point(FILE *f, int first, const struct ws_point *pt, const struct calib *cal)
{
    fprintf(f, "%s\n    {\"status\": \"ok\", \"buffer_bytes\": %zu, \"slots\": %zu, \"latency_ns\": ", first ? "" : ",",
            pt->bytes, pt->slots);
    json_num(f, pt->latency_ns);
    fputs(", \"latency_core_clocks\": ", f);
    json_num(f, clocks_known(cal) ? pt->latency_ns * cal->core_ghz : NAN);
    fprintf(f, ", \"accesses\": %llu, \"seconds\": ", (unsigned long long)pt->accesses);
    json_num(f, pt->seconds);
    fputs(", \"cpu_share\": ", f);
    json_num(f, pt->cpu_share);
    fputs(", \"latency_ns_per_cpu_time\": ", f);
    json_num(f, pt->latency_ns * pt->cpu_share);
    fprintf(f, ", \"warm_loads\": %llu, \"batches\": %llu, \"batch_mean_ns\": ", (unsigned long long)pt->warm_loads,
            (unsigned long long)pt->batches);
    json_num(f, pt->batch_mean_ns);
    const double v[5] = {pt->p50_ns, pt->p90_ns, pt->p99_ns, pt->min_ns, pt->max_ns};
    const char *names[5] = {"p50_ns", "p90_ns", "p99_ns", "batch_min_ns", "batch_max_ns"};
    for (int i = 0; i < 5; i++) {
        fprintf(f, ", \"%s\": ", names[i]);
        json_num(f, v[i]);
    }
    fputc('}', f);
}

static void ws_json(const struct env *e, const struct caches *k, const struct ws_plan *pl, const char *max_src,
                    size_t hi, const struct buffer *buf, const struct ws_point *pts, int done, int planned,
                    int interrupted)
{
    const struct opts *o = e->o;
    char tmp[4096];
    FILE *f = hier_json_open(o->json, tmp, sizeof tmp);
    hier_json_head(f, e, MODE_NAMES[MODE_WSET], k);
    fprintf(f, ",\n  \"latency_cpu\": %d,\n  \"pattern\": \"%s\",\n  \"stride_bytes\": ", o->lat_cpu,
            pl->stride ? "sequential" : "random");
    if (pl->stride)
        fprintf(f, "%zu", pl->stride);
    else
        fputs("null", f);
    fprintf(f, ",\n  \"line_bytes\": %zu,\n  \"chain_slot_bytes\": %d,\n  \"sizes_per_octave\": %d,\n"
               "  \"min_bytes\": %zu,\n  \"max_bytes\": %zu,\n  \"max_bytes_source\": ",
            pl->slot, CHAIN_SLOT, o->per_octave ? o->per_octave : WS_DEFAULT_PER_OCTAVE, WS_MIN_BYTES, hi);
    json_str(f, max_src);
    fputs(",\n  \"seconds_per_pass\": ", f);
    json_num(f, pl->accesses ? NAN : pl->pass_s);
    fputs(",\n  \"accesses_per_pass\": ", f);
    json_num(f, pl->accesses ? (double)pl->accesses : NAN);
    fprintf(f, ",\n  \"mean_method\": \"CLOCK_MONOTONIC over a stamp-free chase: elapsed / loads\",\n"
               "  \"batch_accesses\": %d,\n  \"batch_timer\": \"%s\",\n  \"batch_timer_ghz\": ", pl->batch, BATCH_TIMER);
    json_num(f, pl->tick_ghz);
    fputs(",\n  \"batch_timer_tick_ns\": ", f);
    json_num(f, 1.0 / pl->tick_ghz);
    fputs(",\n  \"stamp_ns\": ", f);
    json_num(f, pl->stamp_ns);
    fputs(",\n  \"percentile_bias_ns_per_access\": ", f);
    json_num(f, pl->stamp_ns / pl->batch);
    fputs(",\n  \"percentile_note\": \"p50/p90/p99 are over the means of batches of batch_accesses dependent "
          "loads, not over single loads\",\n", f);
    long long huge = buf->anon_huge_kib;
    fprintf(f, "  \"huge_pages\": {\"requested\": %s, \"thp_enabled\": \"%s\", \"thp_defrag\": \"%s\", "
               "\"buffer_bytes\": %zu, \"anon_huge_bytes\": ", o->huge ? "true" : "false", e->thp.enabled,
            e->thp.defrag, buf->len);
    if (huge >= 0)
        fprintf(f, "%lld, \"huge_fraction\": ", huge * 1024);
    else
        fputs("null, \"huge_fraction\": ", f);
    json_num(f, huge >= 0 ? (double)huge * 1024 / (double)buf->len : NAN);
    fprintf(f, "},\n  \"points_planned\": %d,\n  \"interrupted\": %s,\n  \"points\": [", planned,
            interrupted ? "true" : "false");
    for (int i = 0; i < done; i++)
        ws_json_point(f, i == 0, &pts[i], &e->cal);
    fputs("\n  ]\n}", f);
    hier_json_close(f, tmp, o->json);
}

/* The largest size (bytes) and where it comes from (text). */
static size_t ws_max_bytes(const struct opts *o, const struct caches *k, char *src, size_t len)
{
    if (o->max_size) {
        snprintf(src, len, "--max-size");
        return o->max_size;
    }
    if (k->llc_bytes) {
        snprintf(src, len, "%d x the last-level cache (L%d, %zu KiB, sysfs)", WS_LLC_FACTOR, k->llc_level,
                 k->llc_bytes / 1024);
        return WS_LLC_FACTOR * k->llc_bytes;
    }
    snprintf(src, len, "%zu MiB: no last-level cache size in sysfs (give --max-size)", WS_NO_LLC_MAX >> 20);
    return WS_NO_LLC_MAX;
}

int run_working_set(struct env *e)
{
    const struct opts *o = e->o;
    struct caches k;
    caches_read(&k);
    char max_src[200];
    size_t hi = ws_max_bytes(o, &k, max_src, sizeof max_src);
    struct ws_plan pl = {.slot = (size_t)CHAIN_SLOT, .stride = o->stride, .accesses = o->accesses,
                         .batch = o->batch ? o->batch : WS_DEFAULT_BATCH,
                         .seed = WS_SEED + (uint64_t)o->lat_cpu};
    pl.pass_s = (o->t_given ? o->seconds : WS_DEFAULT_SECONDS) / 2;
    pl.warm_cap_s = fmax(0.02, pl.pass_s / 2);
    static size_t sizes[WS_MAX_SIZES];
    int n = ws_sizes(hi, o->per_octave ? o->per_octave : WS_DEFAULT_PER_OCTAVE, pl.slot, sizes, WS_MAX_SIZES);
    size_t len = (sizes[n - 1] + HUGE_2M - 1) / HUGE_2M * HUGE_2M;  /* whole 2 MiB pages, for -L */
    long long avail = mem_available_bytes();
    if (avail > 0 && (double)len * 1.07 > 0.9 * (double)avail)
        die_usage("--max-size: the buffer needs %.0f MiB but only %.0f MiB of memory are available: give a "
                  "smaller --max-size", (double)len * 1.07 / 1048576.0, (double)avail / 1048576.0);
    hier_setup(e, o->lat_cpu, &k);
    pl.tick_ghz = tick_ghz(e->cal.tsc_ghz);
    if (!(pl.tick_ghz > 0))
        die("the batch timer's rate is unknown (%s): cannot time batches", BATCH_TIMER);
    int err = pin_self(o->lat_cpu);
    if (err)
        die("cannot pin to CPU %d: %s", o->lat_cpu, strerror(err));
    pl.stamp_ns = stamp_cost_ns(pl.tick_ghz);
    char why[300];
    struct buffer buf;
    if (buffer_alloc(&buf, len, o->huge, 0x00, why, sizeof why) != 0)
        die("working-set buffer: %s", why);
    ws_print_setup(e, &pl, sizes, n, max_src, &buf);
    struct ws_point *pts = calloc((size_t)n, sizeof *pts);
    uint64_t *times = malloc(WS_MAX_BATCHES * sizeof *times);
    if (!pts || !times)
        die("out of memory");
    int done = 0, stop = 0;
    for (; done < n && !stop; done++) {
        stop = ws_measure(&buf, &pl, sizes[done], &pts[done], times);
        if (!stop)
            ws_print_row(&pts[done], &e->cal);
    }
    done -= stop;
    if (stop)
        print_interrupted(done, n);
    if (o->json)
        ws_json(e, &k, &pl, max_src, sizes[n - 1], &buf, pts, done, n, stop);
    free(times);
    free(pts);
    buffer_free(&buf);
    return stop ? 128 + (int)g_signal : 0;
}
