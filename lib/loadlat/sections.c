/* loadlat - an open, MLC-compatible loaded-latency tool (memstor).
 *
 * sections.c: the points of the single modes (--idle_latency, --loaded_latency, --peak_injection_bandwidth),
 * max bandwidth, and the sections of MLC's default run on one group of threads (peak injection, loaded
 * latency); run_section dispatches every section.
 */
#include "tool.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --max_bandwidth: the inject delays tried for each mix, in this order; a mix stops after two delays in a
 * row below MAXBW_STOP x its best bandwidth (past the best injection rate bandwidth only falls). */
static const uint64_t MAXBW_DELAYS[] = {0, 2, 8, 15, 30, 50, 100, 200, 400};
#define N_MAXBW_DELAYS ((int)(sizeof MAXBW_DELAYS / sizeof MAXBW_DELAYS[0]))
#define MAXBW_STOP 0.8

/* MLC's five read/write mixes of peak injection and max bandwidth, and its row labels. */
static const char *const MIX_CODES[5] = {"R", "W3", "W2", "W5", "W10"};
static const char *const MIX_NAMES[5] = {"ALL Reads        ", "3:1 Reads-Writes ", "2:1 Reads-Writes ",
                                         "1:1 Reads-Writes ", "Stream-triad like"};

/* --idle_latency: one point, MLC's "Each iteration took" line. */
static void run_idle(struct ctx *c, const struct calib *cal, struct run *run)
{
    struct result *r = &run->res[0];
    if (run_point(c, c->o->tr, 0, r)) {
        run->interrupted = 1;
        return;
    }
    run->nres = 1;
    if (r->ok) {
        printf("Each iteration took %.1f core clocks (\t%.1f\tns)\n", r->latency_ns * cal->core_ghz, r->latency_ns);
    } else {
        printf("# measurement failed: %s\n", r->why);
        run->any_failed = 1;
    }
}

/* --peak_injection_bandwidth: MLC's five mixes at delay 0, one line each. */
static void run_peak(struct ctx *c, struct run *run)
{
    printf("Measuring Peak Injection Memory Bandwidths for the system\n");
    printf("Bandwidths are in MB/sec (1 MB/sec = 1,000,000 Bytes/sec)\n");
    printf("Using all the threads from each core if Hyper-threading is enabled\n");
    printf("Using traffic with the following read-write ratios\n");
    fflush(stdout);
    for (int i = 0; i < 5; i++) {
        struct result *r = &run->res[i];
        if (run_point(c, traffic_lookup(MIX_CODES[i]), 0, r)) {
            run->interrupted = 1;
            return;
        }
        run->nres++;
        if (r->ok)
            printf("%s:\t%.1f\t\n", MIX_NAMES[i], r->bw_MBps);
        else {
            printf("# %s failed: %s\n", MIX_NAMES[i], r->why);
            run->any_failed = 1;
        }
        fflush(stdout);
    }
}

/* --loaded_latency: MLC's Inject Delay / Latency / Bandwidth table, one row per delay. */
static void run_loaded(struct ctx *c, struct run *run)
{
    const struct opts *o = c->o;
    printf("Measuring Loaded Latencies for the system\n");
    printf("Using all the threads from each core if Hyper-threading is enabled\n");
    if (o->tr->reads && !o->tr->writes)
        printf("Using Read-only traffic type\n");
    printf("Inject\tLatency\tBandwidth\n");
    printf("Delay\t(ns)\tMB/sec\n");
    printf("==========================\n");
    fflush(stdout);
    for (int i = 0; i < o->ndelays; i++) {
        struct result *r = &run->res[i];
        if (run_point(c, o->tr, o->delays[i], r)) {
            run->interrupted = 1;
            return;
        }
        run->nres++;
        if (r->ok)
            print_row(r, uses_lat_thread(o));
        else {
            fprintf(stderr, "loadlat: point delay %llu failed: %s\n", (unsigned long long)o->delays[i], r->why);
            run->any_failed = 1;
        }
    }
}

/* Every point of a single mode (idle, loaded, peak), printed as it completes; a signal ends the run after a
 * '#' line. */
void run_points(struct ctx *c, const struct calib *cal, struct run *run)
{
    const struct opts *o = c->o;
    run_alloc(run, o->mode == MODE_LOADED ? o->ndelays : o->mode == MODE_PEAK ? 5 : 1);
    if (o->mode == MODE_IDLE)
        run_idle(c, cal, run);
    else if (o->mode == MODE_PEAK)
        run_peak(c, run);
    else
        run_loaded(c, run);
    if (run->interrupted)
        print_interrupted(run->nres, run->planned);
}

/* A single-group section (peak injection, max bandwidth, loaded latency of the default run): start the
 * threads, print their '#' lines. Returns 0 or -1 (a '#' line says the section failed). */
static int single_group(struct ctx *c, struct env *e, const struct opts *g, const char *section)
{
    int touch, home = loaded_home_node(e, g, &touch);
    if (group_start(c, e, g, home, touch) != 0) {
        e->any_failed = 1;
        printf("# %s failed: its threads could not set up their buffers (the loadlat: lines on stderr say why)\n\n",
               section);
        fflush(stdout);
        return -1;
    }
    print_setup(e->o, c, &e->cal, e->allowed_txt, &e->thp, PART_GROUP);
    return 0;
}

/* One measuring group of a default-run section (peak injection, loaded latency): start the group `g`, measure
 * js->planned points with `measure`, end the section's text (blank line, or the interrupted note), write the
 * section's workers and points to its JSON, free `g`. Returns 1 when the run was interrupted. */
static int section_group(struct env *e, struct jsec *js, struct opts *g, const char *what,
                         void (*measure)(struct ctx *, struct run *))
{
    static struct ctx c;
    int stop = 0;
    if (single_group(&c, e, g, what) == 0) {
        struct run run;
        run_alloc(&run, js->planned);
        measure(&c, &run);
        if (run.any_failed)
            e->any_failed = 1;
        if (run.interrupted) {
            stop = js->interrupted = e->interrupted = 1;
            print_interrupted(run.nres, run.planned);
        } else {
            printf("\n");
        }
        jsec_workers(js, &c);
        jsec_points(js, &c, &e->cal, &run, 0, run.nres, NULL);
        run_free(&run);
        group_end(&c);
    }
    free(g);
    return stop;
}

/* Peak injection bandwidth (the default run's section; --peak_injection_bandwidth alone is a single mode). */
static int sec_peak(struct env *e, struct jsec *js)
{
    static int cpus[LOADLAT_MAX_CPUS];
    int k = section_loads(e, -1, -1, cpus);
    struct opts *g = group_opts(e, MODE_PEAK, -1, cpus, k, traffic_lookup("R"), 0);
    js->planned = 5;
    return section_group(e, js, g, "peak injection bandwidth", run_peak);
}

/* The max bandwidth section's JSON: its group's buffers, every point (its mix, whether it was the mix's best),
 * the delays tried and per mix begun the best bandwidth and every delay's. */
static void maxbw_json(struct jsec *js, const struct ctx *c, const struct calib *cal, const struct run *run,
                       const int *mix_of, const int *best_i, int started, int stop)
{
    jsec_workers(js, c);
    for (int i = 0; i < run->nres; i++) {
        char extra[120];
        snprintf(extra, sizeof extra, ", \"mix\": \"%s\", \"best\": %s", MIX_CODES[mix_of[i]],
                 i == best_i[mix_of[i]] ? "true" : "false");
        jsec_points(js, c, cal, run, i, i + 1, extra);
    }
    fputs(",\n  \"max_bandwidth_delays\": [", js->xf);
    for (int d = 0; d < N_MAXBW_DELAYS; d++)
        fprintf(js->xf, "%s%llu", d ? ", " : "", (unsigned long long)MAXBW_DELAYS[d]);
    fprintf(js->xf, "],\n  \"max_bandwidth_stop_fraction\": %.2f,\n  \"max_bandwidth\": [", MAXBW_STOP);
    for (int m = 0; m < started; m++) {
        char label[32];
        snprintf(label, sizeof label, "%s", MIX_NAMES[m]);
        for (int l = (int)strlen(label) - 1; l >= 0 && label[l] == ' '; l--)
            label[l] = '\0';
        fprintf(js->xf, "%s\n    {\"traffic\": \"%s\", \"label\": \"%s\", \"complete\": %s, \"bandwidth_MBps\": ",
                m ? "," : "", MIX_CODES[m], label, stop && m == started - 1 ? "false" : "true");
        json_num(js->xf, best_i[m] >= 0 ? run->res[best_i[m]].bw_MBps : NAN);
        fputs(", \"best_delay\": ", js->xf);
        if (best_i[m] >= 0)
            fprintf(js->xf, "%llu", (unsigned long long)run->res[best_i[m]].delay);
        else
            fputs("null", js->xf);
        fputs(", \"delays\": [", js->xf);
        int k = 0;
        for (int i = 0; i < run->nres; i++)
            if (mix_of[i] == m)
                fprintf(js->xf, "%s%llu", k++ ? ", " : "", (unsigned long long)run->res[i].delay);
        fputs("], \"bandwidths_MBps\": [", js->xf);
        k = 0;
        for (int i = 0; i < run->nres; i++)
            if (mix_of[i] == m) {
                if (k++)
                    fputs(", ", js->xf);
                json_num(js->xf, run->res[i].ok ? run->res[i].bw_MBps : NAN);
            }
        fputs("]}", js->xf);
    }
    fputs("\n  ]", js->xf);
}

/* --max_bandwidth: MLC's five mixes, each at the inject delays MAXBW_DELAYS in turn (fewer injected requests
 * can give more bandwidth when the memory system is over-subscribed), until two delays in a row fall below
 * MAXBW_STOP x the best; the best is printed with MLC's two decimals. */
static int sec_maxbw(struct env *e, struct jsec *js)
{
    static int cpus[LOADLAT_MAX_CPUS];
    int k = section_loads(e, -1, -1, cpus);
    struct opts *g = group_opts(e, MODE_PEAK, -1, cpus, k, traffic_lookup("R"), 0);
    static struct ctx c;
    js->planned = 5 * N_MAXBW_DELAYS;
    int stop = 0;
    if (single_group(&c, e, g, "max bandwidth") != 0) {
        free(g);
        return 0;
    }
    printf("# max bandwidth: each mix at inject delays");
    for (int d = 0; d < N_MAXBW_DELAYS; d++)
        printf(" %llu", (unsigned long long)MAXBW_DELAYS[d]);
    printf(" in turn, until two in a row fall below %.0f%% of its best; the best is printed (every delay in the "
           "JSON)\n", 100 * MAXBW_STOP);
    printf("Measuring Maximum Memory Bandwidths for the system\n");
    printf("Will take several minutes to complete as multiple injection rates will be tried to get the best "
           "bandwidth\n");
    printf("Bandwidths are in MB/sec (1 MB/sec = 1,000,000 Bytes/sec)\n");
    printf("Using all the threads from each core if Hyper-threading is enabled\n");
    printf("Using traffic with the following read-write ratios\n");
    fflush(stdout);
    struct run run;
    run_alloc(&run, 5 * N_MAXBW_DELAYS);
    int mix_of[5 * N_MAXBW_DELAYS];  /* the mix of each point */
    int best_i[5], started = 0;      /* best point of each mix; mixes begun */
    for (int m = 0; m < 5 && !stop; m++) {
        const struct traffic *tr = traffic_lookup(MIX_CODES[m]);
        best_i[m] = -1;
        started = m + 1;
        int below = 0;
        const char *why = NULL;
        for (int d = 0; d < N_MAXBW_DELAYS; d++) {
            struct result *r = &run.res[run.nres];
            if (run_point(&c, tr, MAXBW_DELAYS[d], r)) {
                stop = 1;
                break;
            }
            mix_of[run.nres++] = m;
            if (!r->ok) {
                why = r->why;
                continue;
            }
            double best = best_i[m] >= 0 ? run.res[best_i[m]].bw_MBps : 0;
            if (r->bw_MBps > best) {
                best_i[m] = run.nres - 1;
                below = 0;
            } else if (r->bw_MBps < MAXBW_STOP * best) {
                if (++below == 2)
                    break;
            } else {
                below = 0;
            }
        }
        if (stop)
            break;
        if (best_i[m] >= 0) {
            printf("%s:\t%.2f\t\n", MIX_NAMES[m], run.res[best_i[m]].bw_MBps);
        } else {
            printf("# %s failed: %s\n", MIX_NAMES[m], why ? why : "no point measured");
            e->any_failed = 1;
        }
        fflush(stdout);
    }
    if (stop) {
        js->interrupted = e->interrupted = 1;
        print_interrupted(run.nres, run.planned);
    } else {
        printf("\n");
    }
    fflush(stdout);
    maxbw_json(js, &c, &e->cal, &run, mix_of, best_i, started, stop);
    run_free(&run);
    group_end(&c);
    free(g);
    return stop;
}

/* Loaded latency (the default run's section; --loaded_latency alone is a single mode). */
static int sec_loaded(struct env *e, struct jsec *js)
{
    const struct opts *o = e->o;
    static int cpus[LOADLAT_MAX_CPUS];
    int k = section_loads(e, o->lat_cpu, -1, cpus);
    if (k == 0) {
        fprintf(stderr, "loadlat: loaded latency: no load CPU besides the latency CPU %d\n", o->lat_cpu);
        e->any_failed = 1;
        return 0;
    }
    struct opts *g = group_opts(e, MODE_LOADED, o->lat_cpu, cpus, k, o->tr, 0);
    js->planned = o->ndelays;
    js->tr = o->tr;
    return section_group(e, js, g, "loaded latency", run_loaded);
}

int run_section(struct env *e, enum mode m, struct jsec *js)
{
    switch (m) {
    case MODE_LATMAT:
        return sec_matrix(e, js, 0);
    case MODE_BWMAT:
        return sec_matrix(e, js, 1);
    case MODE_PEAK:
        return sec_peak(e, js);
    case MODE_MAXBW:
        return sec_maxbw(e, js);
    case MODE_LOADED:
        return sec_loaded(e, js);
    case MODE_C2C:
        return sec_c2c(e, js);
    default:
        die("internal error: no section %d", (int)m);
    }
    return 0;
}
