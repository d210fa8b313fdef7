/* ioarrive - memstor's arrival-driven (open-loop) I/O generator.
 *
 * output.c: the JSON document (schema in README.md, *JSON*). Units are in the names: _ns, _s, _iops,
 * _pct, _bytes, _MBps (10^6 bytes/s). A number that does not exist (a percentile of nothing) is null.
 */
#include "ioarrive.h"

#include <math.h>
#include <string.h>

static void jstr(FILE *f, const char *s)
{
    if (!s) { fputs("null", f); return; }
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

static void jnum(FILE *f, double v)
{
    if (isfinite(v)) fprintf(f, "%.10g", v);
    else fputs("null", f);
}

static void jkey(FILE *f, const char *k) { jstr(f, k); fputs(": ", f); }

static void stats(FILE *f, const char *name, const struct hist *h)
{
    static const double P[] = {50, 90, 99, 99.9, 99.99};
    static const char *const PN[] = {"p50", "p90", "p99", "p99_9", "p99_99"};
    double mean = h->n ? h->sum / (double)h->n : NAN;
    double var = h->n > 1 ? (h->sumsq - h->sum * mean) / (double)(h->n - 1) : NAN;
    jkey(f, name);
    fprintf(f, "{\"n\": %llu, \"mean\": ", (unsigned long long)h->n);
    jnum(f, mean);
    fputs(", \"stddev\": ", f);
    jnum(f, var >= 0 ? sqrt(var) : var < 0 ? 0 : NAN);
    fputs(", \"min\": ", f);
    jnum(f, h->n ? (double)h->min : NAN);
    fputs(", \"max\": ", f);
    jnum(f, h->n ? (double)h->max : NAN);
    for (int i = 0; i < 5; i++) {
        fprintf(f, ", \"%s\": ", PN[i]);
        jnum(f, hist_pct(h, P[i]));
    }
    fputc('}', f);
}

static void bins(FILE *f, const char *name, const struct hist *h)
{
    jkey(f, name);
    fputc('[', f);
    int first = 1;
    for (int i = 0; i < H_N; i++) {
        if (!h->c[i]) continue;
        fprintf(f, "%s[%llu, %llu, %llu]", first ? "" : ", ", (unsigned long long)h_lower(i),
                (unsigned long long)h_upper(i), (unsigned long long)h->c[i]);
        first = 0;
    }
    fputc(']', f);
}

static void u64_array(FILE *f, const uint64_t *v, int n)
{
    fputc('[', f);
    for (int i = 0; i < n; i++) fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)v[i]);
    fputc(']', f);
}

static void per_second(FILE *f, const struct job *j, const struct dir_rec *d)
{
    fputs("\"per_second\": {\"t_s\": [", f);
    for (int i = 0; i < d->nsec; i++) fprintf(f, "%s%d", i ? ", " : "", i);
    fputs("], \"iops\": [", f);
    for (int i = 0; i < d->nsec; i++) {
        double len = fmin(1.0, j->runtime_s - i);
        fputs(i ? ", " : "", f);
        jnum(f, (double)d->sec_n[i] / len);
    }
    fputs("], \"resp_mean_ns\": [", f);
    for (int i = 0; i < d->nsec; i++) {
        fputs(i ? ", " : "", f);
        jnum(f, d->sec_n[i] ? d->sec_sum[i] / (double)d->sec_n[i] : NAN);
    }
    fputs("], \"resp_p99_ns\": [", f);
    for (int i = 0; i < d->nsec; i++) {
        fputs(i ? ", " : "", f);
        jnum(f, hist_pct32(d->sec_h[i], d->sec_n[i], 99));
    }
    fputs("]}", f);
}

static void direction(FILE *f, const struct ctx *c, const struct checks *ck, int k)
{
    const struct job *j = c->j;
    const struct dir_rec *d = &c->rec.d[k];
    double secs = c->facts.measured_s, achieved = (double)d->window_done / secs;
    fprintf(f, "    \"%s\": {\"process\": ", DIR_NAMES[k]);
    jstr(f, PROC_NAMES[j->dir[k].proc]);
    fputs(", \"offered_iops\": ", f);
    jnum(f, j->dir[k].rate_iops);
    fprintf(f, ", \"issued\": %llu, \"issued_iops\": ", (unsigned long long)d->issued);
    jnum(f, (double)d->issued / secs);
    fprintf(f, ", \"completed\": %llu, \"window_completions\": %llu, \"achieved_iops\": ",
            (unsigned long long)d->completed, (unsigned long long)d->window_done);
    jnum(f, achieved);
    fputs(", \"achieved_pct\": ", f);
    jnum(f, 100.0 * achieved / j->dir[k].rate_iops);
    fprintf(f, ", \"errors\": %llu, \"bytes\": %llu, \"bw_MBps\": ", (unsigned long long)d->errors,
            (unsigned long long)d->bytes);
    jnum(f, (double)d->bytes / secs / 1e6);
    fprintf(f, ", \"negative_times\": %llu,\n      ", (unsigned long long)d->negative);
    if (j->dir[k].proc == PROC_TRACE) {
        fprintf(f, "\"trace\": {\"lines\": %zu, \"rate_iops\": ", j->dir[k].tr.n);
        jnum(f, j->dir[k].tr.rate_iops);
        fputs("},\n      ", f);
    }
    stats(f, "response_ns", &d->resp);
    fputs(",\n      ", f);
    stats(f, "service_ns", &d->svc);
    fputs(",\n      ", f);
    stats(f, "lag_ns", &d->lag);
    fputs(",\n      \"lag_bound_ns\": ", f);
    jnum(f, ck->lag_bound_ns[k]);
    fputs(",\n      ", f);
    per_second(f, j, d);
    fputs(",\n      \"arrival_bins\": {\"bin_s\": ", f);
    jnum(f, j->runtime_s / d->nbins);
    fputs(", \"intended\": ", f);
    u64_array(f, d->bins_intended, d->nbins);
    fputs(", \"submitted\": ", f);
    u64_array(f, d->bins_submitted, d->nbins);
    fputs("},\n      \"bins\": {", f);
    bins(f, "response_ns", &d->resp);
    fputs(", ", f);
    bins(f, "service_ns", &d->svc);
    fputs(", ", f);
    bins(f, "lag_ns", &d->lag);
    fputs("}}", f);
}

static void cpu(FILE *f, const char *name, const struct cpu_use *u)
{
    jkey(f, name);
    fputs("{\"user_s\": ", f);
    jnum(f, u->user_s);
    fputs(", \"sys_s\": ", f);
    jnum(f, u->sys_s);
    fputs(", \"wall_s\": ", f);
    jnum(f, u->wall_s);
    fputs(", \"cpu_pct\": ", f);
    jnum(f, u->wall_s > 0 ? 100.0 * (u->user_s + u->sys_s) / u->wall_s : NAN);
    fputc('}', f);
}

/* "service", "service_mean_ns", "service_cs2", "hist_file" of one service time (kind "mix": two classes). */
static void service_fields(FILE *f, const struct svc_cfg *s)
{
    static const char *const K[] = {"det", "exp", "hist"};
    double cs2 = s->m2_ns2 / (s->mean_ns * s->mean_ns) - 1.0;
    fputs("\"service\": ", f);
    jstr(f, s->given ? K[s->kind] : "mix");
    fputs(", \"service_mean_ns\": ", f);
    jnum(f, s->mean_ns);
    fputs(", \"service_cs2\": ", f);
    jnum(f, fabs(cs2) < 1e-12 ? 0 : cs2);
    fputs(", \"hist_file\": ", f);
    jstr(f, s->hist_path);
}

/* The service time of an I/O drawn from the offered mix: the active directions' class when they share one,
 * else (given = 0: "mix") the moments of the mixture weighted by the offered rates, E[S] = sum(l_d E[S_d]) / l
 * and E[S^2] likewise - the M/G/c model's inputs for the two classes together. */
static struct svc_cfg sim_mixture(const struct job *j)
{
    int first = j->dir[DIR_READ].active ? DIR_READ : DIR_WRITE;
    if (!j->dir[DIR_READ].active || !j->dir[DIR_WRITE].active || svc_same(&j->sim.cls[0], &j->sim.cls[1]))
        return j->sim.cls[first];
    struct svc_cfg m = {0};
    double total = 0;
    for (int d = 0; d < NDIR; d++) {
        total += j->dir[d].rate_iops;
        m.mean_ns += j->dir[d].rate_iops * j->sim.cls[d].mean_ns;
        m.m2_ns2 += j->dir[d].rate_iops * j->sim.cls[d].m2_ns2;
    }
    m.mean_ns /= total;
    m.m2_ns2 /= total;
    return m;
}

static void job(FILE *f, const struct ctx *c)
{
    static const char *const AS[] = {"asked", "poisson", "constant", "none"};
    const struct job *j = c->j;
    fputs("  \"job\": {\"target\": ", f);
    jstr(f, j->target);
    fputs(", \"target_kind\": ", f);
    jstr(f, j->sim.on ? "sim" : c->tgt.is_block ? "block" : "file");
    fprintf(f, ", \"target_bytes\": %llu, \"bs_bytes\": %llu, \"pattern\": ", (unsigned long long)c->tgt.size_bytes,
            (unsigned long long)j->bs);
    jstr(f, j->random ? "random" : "sequential");
    fprintf(f, ", \"span_bytes\": %llu, \"runtime_s\": ", (unsigned long long)j->span);
    jnum(f, j->runtime_s);
    fputs(", \"ramp_s\": ", f);
    jnum(f, j->ramp_s);
    fputs(", \"drain_s\": ", f);
    jnum(f, j->drain_s);
    fprintf(f, ", \"direct\": %s, \"max_outstanding\": %u, \"seed\": %llu, \"spin_us\": ", j->direct ? "true" : "false",
            j->max_outstanding, (unsigned long long)j->seed);
    jnum(f, j->spin_us);
    fputs(", \"lag_fraction\": ", f);
    jnum(f, j->lag_fraction);
    fputs(", \"lag_floor_us\": ", f);
    jnum(f, j->lag_floor_us);
    fputs(", \"ks_tolerance_us\": ", f);
    jnum(f, j->ks_tol_us);
    fputs(", \"move_us\": ", f);
    jnum(f, j->move_us < 0 ? NAN : j->move_us);
    fputs(", \"pause_probe_s\": ", f);
    jnum(f, j->pause_probe_s);
    fprintf(f, ", \"rt_priority\": %d", j->rt_priority);
    fprintf(f, ", \"check_sample\": %d, \"check_as\": \"%s\", \"virtual_time\": %s, \"trace\": ", j->check_sample,
            AS[j->check_as], j->virtual_time ? "true" : "false");
    jstr(f, j->trace_path);
    fputs("},\n  \"sim\": ", f);
    if (!j->sim.on) {
        fputs("null", f);
    } else {
        struct svc_cfg all = sim_mixture(j);
        fprintf(f, "{\"servers\": %d, ", j->sim.servers);
        service_fields(f, &all);
        fputs(", \"classes\": {", f);
        for (int d = 0; d < NDIR; d++) {
            fprintf(f, "%s\"%s\": ", d ? ", " : "", DIR_NAMES[d]);
            if (!j->sim.cls[d].given) {
                fputs("null", f);
                continue;
            }
            fputc('{', f);
            service_fields(f, &j->sim.cls[d]);
            fputc('}', f);
        }
        fputs("}}", f);
    }
}

/* ', "p50_us": .., "p99_us": .., "max_us": ..' of a histogram of nanoseconds, in us (null when empty). */
static void p50_p99_max(FILE *f, const struct hist *h)
{
    fputs(", \"p50_us\": ", f);
    jnum(f, hist_pct(h, 50) / 1e3);
    fputs(", \"p99_us\": ", f);
    jnum(f, hist_pct(h, 99) / 1e3);
    fputs(", \"max_us\": ", f);
    jnum(f, h->n ? (double)h->max / 1e3 : NAN);
}

/* Writes ',\n  "name": ' and, in virtual time (no real clock), null; returns whether it did (nothing follows). */
static int real_time_only(FILE *f, const struct ctx *c, const char *name)
{
    fprintf(f, ",\n  \"%s\": ", name);
    if (c->j->virtual_time) fputs("null", f);
    return c->j->virtual_time;
}

/* How late the submitter's sleeps woke (us): p50, p99, max and their number; null in virtual time. */
static void wake_delay(FILE *f, const struct ctx *c)
{
    if (real_time_only(f, c, "wake_delay")) return;
    fprintf(f, "{\"sleeps\": %llu", (unsigned long long)c->wake_delay.n);
    p50_p99_max(f, &c->wake_delay);
    fputc('}', f);
}

/* How long the engine's submit calls took (us), those of >= SUBMIT_BLOCKED_NS made in the measured window (blocked:
 * the request queue full, or the CPU taken), the most I/Os in flight after one and the request queue's size (the disk under the target,
 * or the simulator's queue=); null in virtual time. */
static void submit_calls(FILE *f, const struct ctx *c)
{
    const struct hist *h = &c->submit_call;
    if (real_time_only(f, c, "submit_call")) return;
    fprintf(f, "{\"calls\": %llu", (unsigned long long)h->n);
    p50_p99_max(f, h);
    fprintf(f, ", \"blocked_min_us\": %lld, \"blocked_calls\": %llu, \"blocked_s\": ", SUBMIT_BLOCKED_NS / 1000,
            (unsigned long long)c->facts.blocked_calls);
    jnum(f, c->facts.blocked_ns / 1e9);
    fprintf(f, ", \"peak_outstanding\": %u, \"queue_requests\": ", c->peak_outstanding);
    unsigned queue = c->j->sim.on ? (unsigned)c->j->sim.queue : c->tgt.queue_requests;
    if (queue) fprintf(f, "%u, \"queue_disk\": ", queue);
    else fputs("null, \"queue_disk\": ", f);
    jstr(f, c->j->sim.on ? (queue ? "sim" : NULL) : c->tgt.queue_disk[0] ? c->tgt.queue_disk : NULL);
    fputc('}', f);
}

/* The machine's pauses before the run (pause_probe): null without --pause-probe and in virtual time. */
static void pause_probe(FILE *f, const struct ctx *c)
{
    const struct pause_probe *p = &c->pauses;
    fputs(",\n  \"pause_probe\": ", f);
    if (!p->cpus) {
        fputs("null", f);
        return;
    }
    double cpu_s = p->seconds * p->cpus;
    fprintf(f, "{\"seconds\": %.6g, \"cpus\": %d, \"min_us\": %d, \"pauses\": %llu, \"over_1ms\": %llu, "
            "\"per_cpu_s\": ", p->seconds, p->cpus, PAUSE_MIN_NS / 1000, (unsigned long long)p->pauses,
            (unsigned long long)p->over_1ms);
    jnum(f, (double)p->pauses / cpu_s);
    fputs(", \"over_1ms_per_cpu_s\": ", f);
    jnum(f, (double)p->over_1ms / cpu_s);
    fputs(", \"max_us\": ", f);
    jnum(f, (double)p->max_ns / 1e3);
    fputs(", \"paused_pct\": ", f);
    jnum(f, 100.0 * (double)p->paused_ns / 1e9 / cpu_s);
    fputc('}', f);
}

void write_json(FILE *f, const struct ctx *c, const struct checks *ck, const struct cpu_use *proc)
{
    const struct job *j = c->j;
    fprintf(f, "{\n  \"tool\": \"ioarrive\", \"version\": \"%s\",\n  \"command\": [", IOARRIVE_VERSION);
    for (int i = 0; i < j->argc; i++) {
        fputs(i ? ", " : "", f);
        jstr(f, j->argv[i]);
    }
    fputs("],\n", f);
    job(f, c);
    fputs(",\n  \"engine\": {\"name\": ", f);
    jstr(f, ENGINE_NAMES[c->eng->kind]);
    fputs(", \"asked\": ", f);
    jstr(f, j->sim.on ? "sim" : ENGINE_NAMES[j->engine]);
    fputs(", \"why\": ", f);
    jstr(f, c->engine_why);
    fprintf(f, "},\n  \"scheduling\": {\"rt_priority\": %d, \"policy\": \"%s\", \"note\": ", j->rt_priority,
            c->rt_granted ? "SCHED_FIFO" : "SCHED_OTHER");
    jstr(f, c->rt_note[0] ? c->rt_note : NULL);
    fputs("},\n  \"clock\": \"CLOCK_MONOTONIC\", \"measured_s\": ", f);
    jnum(f, c->facts.measured_s);
    fputs(", \"submit_call_mean_us\": ", f);
    jnum(f, c->facts.submit_calls ? c->facts.submit_call_ns / (double)c->facts.submit_calls / 1e3 : NAN);
    wake_delay(f, c);
    submit_calls(f, c);
    pause_probe(f, c);
    fprintf(f, ",\n  \"overloaded\": %s, \"overload_at_s\": ", c->facts.overloaded ? "true" : "false");
    jnum(f, c->facts.overloaded ? c->facts.overload_at_s : NAN);
    fprintf(f, ", \"unfinished\": %llu, \"interrupted\": %s,\n", (unsigned long long)c->facts.unfinished,
            c->facts.interrupted ? "true" : "false");
    fprintf(f, "  \"open_loop\": %s, \"generator_bound\": %s, \"arrival_test_alpha\": %.6g,\n  \"reasons\": [",
            ck->open_loop ? "true" : "false", ck->generator_bound ? "true" : "false", ck->alpha);
    for (int i = 0, first = 1; i < ck->n; i++) {
        if (ck->c[i].passed) continue;
        fputs(first ? "" : ", ", f);
        jstr(f, ck->c[i].detail);
        first = 0;
    }
    fputs("],\n  \"cpu\": {", f);
    cpu(f, "process", proc);
    fputs(", ", f);
    cpu(f, "submitter", &c->cpu_submitter);
    fputs(", ", f);
    if (c->eng->self_reaping || j->virtual_time) fputs("\"reaper\": null", f);
    else cpu(f, "reaper", &c->cpu_reaper);
    fputs("},\n  \"directions\": {\n", f);
    for (int k = 0, first = 1; k < NDIR; k++) {
        if (!j->dir[k].active) continue;
        fputs(first ? "" : ",\n", f);
        direction(f, c, ck, k);
        first = 0;
    }
    fputs("\n  },\n  \"checks\": [", f);
    for (int i = 0; i < ck->n; i++) {
        const struct check *x = &ck->c[i];
        fputs(i ? ",\n    " : "\n    ", f);
        fputs("{\"name\": ", f);
        jstr(f, x->name);
        fputs(", \"direction\": ", f);
        jstr(f, x->dir >= 0 ? DIR_NAMES[x->dir] : NULL);
        fputs(", \"source\": ", f);
        jstr(f, x->source);
        fprintf(f, ", \"passed\": %s, \"value\": ", x->passed ? "true" : "false");
        jnum(f, x->value);
        fputs(", \"low\": ", f);
        jnum(f, x->low);
        fputs(", \"high\": ", f);
        jnum(f, x->high);
        fputs(", \"detail\": ", f);
        jstr(f, x->detail);
        fputc('}', f);
    }
    fputs("\n  ]\n}\n", f);
}
