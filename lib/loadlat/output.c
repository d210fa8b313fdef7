/* loadlat - an open, MLC-compatible loaded-latency tool (memstor).
 *
 * output.c: MLC v3.10/v3.11-style text (header, the '#' setup lines MLC does not print, rows, the
 * interrupted note) and the JSON sidecar (one document per section; the default run's holds them all).
 */
#include "tool.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The [selected] word of a sysfs choice file such as "always [madvise] never"; "unavailable" otherwise. */
static void read_sysfs_word(const char *path, char *out, size_t len)
{
    FILE *f = fopen(path, "r");
    snprintf(out, len, "unavailable");
    if (!f)
        return;
    char line[256];
    if (fgets(line, sizeof line, f)) {
        char *a = strchr(line, '['), *b = a ? strchr(a, ']') : NULL;
        if (a && b) {
            *b = '\0';
            snprintf(out, len, "%s", a + 1);
        }
    }
    fclose(f);
}

void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* A JSON number, or null for NaN and infinities (a value not measured is passed as NAN). */
void json_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.10g", v);
    else
        fputs("null", f);
}

void jsec_open(struct jsec *s, enum mode mode, const struct opts *o)
{
    memset(s, 0, sizeof *s);
    s->mode = mode;
    s->o = o;
    s->lat_cpu = -1;
    s->pf = open_memstream(&s->pts, &s->pts_len);
    s->bf = open_memstream(&s->bufs, &s->bufs_len);
    s->xf = open_memstream(&s->xtra, &s->xtra_len);
    s->load_cpus = malloc(sizeof(int) * LOADLAT_MAX_CPUS);
    if (!s->pf || !s->bf || !s->xf || !s->load_cpus)
        die("out of memory");
}

static void jsec_close(struct jsec *s)  /* the texts are complete after this */
{
    if (s->pf && (fclose(s->pf) != 0 || fclose(s->bf) != 0 || fclose(s->xf) != 0))
        die("out of memory");
    s->pf = s->bf = s->xf = NULL;
}

void jsec_free(struct jsec *s)
{
    jsec_close(s);
    free(s->pts);
    free(s->bufs);
    free(s->xtra);
    free(s->load_cpus);
    memset(s, 0, sizeof *s);
}

/* One point object (a leading ",\n    " or "\n    "); `extra` = more fields (", \"cpu_node\": 0, ...") or NULL. */
static void json_point(FILE *f, int first, const struct ctx *c, const struct calib *cal, const struct result *r,
                       const char *extra)
{
    const struct opts *o = c->o;
    int has_lat = uses_lat_thread(o) && r->ok;
    fprintf(f, "%s\n    {\"status\": \"%s\", \"traffic\": \"%s\", \"delay\": %llu, \"delay_ns\": ",
            first ? "" : ",", r->ok ? "ok" : "failed", r->tr->code, (unsigned long long)r->delay);
    json_num(f, (double)r->delay * cal->delay_ns);
    fputs(", \"latency_ns\": ", f);
    json_num(f, has_lat ? r->latency_ns : NAN);
    fputs(", \"latency_core_clocks\": ", f);
    json_num(f, has_lat ? r->latency_ns * cal->core_ghz : NAN);
    fputs(", \"bandwidth_MBps\": ", f);
    json_num(f, o->mode != MODE_IDLE && r->ok ? r->bw_MBps : NAN);
    fputs(", \"read_MBps\": ", f);
    json_num(f, r->read_MBps);
    fputs(", \"write_MBps\": ", f);
    json_num(f, r->write_MBps);
    fputs(", \"window_s\": ", f);
    json_num(f, r->window_s);
    fprintf(f, ", \"latency_loads\": %llu, \"latency_thread_cpu_share\": ", (unsigned long long)r->loads);
    json_num(f, r->lat_share);
    fputs(", \"latency_ns_per_cpu_time\": ", f);
    json_num(f, has_lat ? r->latency_ns * r->lat_share : NAN);
    fputs(", \"load_threads_cpu_share_min\": ", f);
    json_num(f, r->load_share);
    fputs(", \"delay_mean\": ", f);
    json_num(f, r->delay_mean);
    fputs(", \"steal_pct\": ", f);
    json_num(f, r->ok ? r->steal_pct : NAN);
    fputs(", \"arrival_cv\": ", f);
    json_num(f, r->ok ? r->arrival_cv : NAN);
    fputs(",\n     \"threads\": [", f);
    for (int k = 0; k < r->nts; k++) {
        const struct thread_stat *t = &r->ts[k];
        fprintf(f, "%s{\"role\": \"%s\", \"cpu\": %d, \"cpu_share\": ", k ? ", " : "",
                t->is_lat ? "latency" : "load", t->cpu);
        json_num(f, t->share);
        fputs(", \"steal_pct\": ", f);
        json_num(f, t->steal_pct);
        if (!t->is_lat) {
            fputs(", \"arrival_cv\": ", f);
            json_num(f, t->arrival_cv);
            fputs(", \"arrival_mean_ns\": ", f);
            json_num(f, t->arrival_mean_ns);
            fprintf(f, ", \"arrival_samples\": %llu, \"arrival_sample_every_groups\": %llu, "
                       "\"arrival_interruptions\": %llu, \"arrival_cv_all\": ",
                    (unsigned long long)t->arrival_samples, (unsigned long long)t->arrival_period * 16,
                    (unsigned long long)t->arrival_interruptions);
            json_num(f, t->arrival_cv_all);
        }
        fputc('}', f);
    }
    fputs("],\n     \"windows\": [", f);
    for (int k = 0; k < r->nws; k++) {
        const struct win_stat *ws = &r->ws[k];
        fprintf(f, "%s{\"window_s\": ", k ? ", " : "");
        json_num(f, ws->window_s);
        fputs(", \"latency_ns\": ", f);
        json_num(f, has_lat ? ws->latency_ns : NAN);
        fputs(", \"bandwidth_MBps\": ", f);
        json_num(f, o->mode != MODE_IDLE ? ws->bw_MBps : NAN);
        fputs(", \"cpu_share_min\": ", f);
        json_num(f, ws->share_min);
        fputc('}', f);
    }
    fputc(']', f);
    if (extra)
        fputs(extra, f);
    if (!r->ok) {
        fputs(", \"error\": ", f);
        json_str(f, r->why);
    }
    fputc('}', f);
}

/* The CPUs and buffers of a group of threads (a ctx), added to the section before the buffers are freed. */
void jsec_workers(struct jsec *s, const struct ctx *c)
{
    for (int i = 0; i < c->nw; i++) {
        const struct worker *w = &c->w[i];
        if (w->is_lat) {
            if (s->lat_cpu < 0)
                s->lat_cpu = w->cpu;
            s->lat_bytes = lat_len(c->o);
        } else if (!cpu_list_has(w->cpu, s->load_cpus, s->nload)) {
            s->load_cpus[s->nload++] = w->cpu;
        }
        const struct buffer *bs[4] = {&w->lat, &w->rd, &w->rd2, &w->wr};
        const char *names[4] = {"latency", "read", "read2", "write"};
        for (int j = 0; j < 4; j++) {
            if (!bs[j]->p)
                continue;
            fprintf(s->bf, "%s\n    {\"role\": \"%s\", \"cpu\": %d, \"bytes\": %zu, \"anon_huge_bytes\": ",
                    s->nbufs ? "," : "", names[j], w->cpu, bs[j]->len);
            if (bs[j]->anon_huge_kib >= 0)
                fprintf(s->bf, "%lld", bs[j]->anon_huge_kib * 1024);
            else
                fputs("null", s->bf);
            if (c->mem_node >= 0) {
                fprintf(s->bf, ", \"node\": %d, \"placement\": ", c->mem_node);
                json_str(s->bf, w->placement ? w->placement : "none");
                fputs(", \"pages_on_node\": ", s->bf);
                json_num(s->bf, w->on_node);
            }
            fputc('}', s->bf);
            s->nbufs++;
            s->tot_bytes += (long long)bs[j]->len;
            s->huge_bytes += bs[j]->anon_huge_kib > 0 ? bs[j]->anon_huge_kib * 1024 : 0;
        }
    }
}

/* Points [from, to) of a run, measured on the threads of c, with the same extra fields. */
void jsec_points(struct jsec *s, const struct ctx *c, const struct calib *cal, const struct run *run,
                 int from, int to, const char *extra)
{
    for (int i = from; i < to; i++)
        json_point(s->pf, s->npts++ == 0, c, cal, &run->res[i], extra);
}

void json_calibration(FILE *f, const struct calib *cal)
{
    fprintf(f, "{\"delay_ns_per_unit\": ");
    json_num(f, cal->delay_ns);
    fprintf(f, ", \"delay_loop_iterations\": %llu, \"cpu\": %d, \"core_ghz\": ",
            (unsigned long long)cal->delay_iters, cal->cpu);
    json_num(f, cal->core_ghz);
    fprintf(f, ", \"core_ghz_method\": \"%s\", \"core_ghz_check\": ", CORE_GHZ_METHOD);
    json_str(f, cal->core_check);
    fputs(", \"tsc_ghz\": ", f);
    json_num(f, cal->tsc_ghz);
    fputs(", \"cpufreq_max_ghz\": ", f);
    json_num(f, cal->cpufreq_max_ghz > 0 ? cal->cpufreq_max_ghz : NAN);
    fputs(", \"exp_draw_ns\": ", f);
    json_num(f, cal->exp_cost_ns);
    fputs(", \"arrival_stamp_ns\": ", f);
    json_num(f, cal->tick_ns);
    fputs(", \"arrival_clock_ghz\": ", f);
    json_num(f, cal->tick_ghz > 0 ? cal->tick_ghz : NAN);
    fputc('}', f);
}

void json_command(FILE *f, int argc, char **argv)
{
    fputc('[', f);
    for (int i = 0; i < argc; i++) {
        if (i)
            fputs(", ", f);
        json_str(f, argv[i]);
    }
    fputc(']', f);
}

/* The document of one section (no final newline). */
static void write_section(FILE *f, const struct jsec *s, int argc, char **argv, const struct calib *cal,
                          const struct thp *thp)
{
    const struct opts *o = s->o;
    fprintf(f, "{\n  \"tool\": \"loadlat\",\n  \"version\": \"%s\",\n  \"command\": ", LOADLAT_VERSION);
    json_command(f, argc, argv);
    fprintf(f, ",\n  \"mode\": \"%s\",\n  \"isa\": \"%s\",\n", MODE_NAMES[s->mode], load_isa());
    fprintf(f, "  \"online_cpus\": %ld,\n", sysconf(_SC_NPROCESSORS_ONLN));
    fputs("  \"load_cpus\": [", f);
    for (int i = 0; i < s->nload; i++)
        fprintf(f, "%s%d", i ? ", " : "", s->load_cpus[i]);
    fputs("],\n  \"latency_cpu\": ", f);
    if (s->lat_cpu >= 0)
        fprintf(f, "%d", s->lat_cpu);
    else
        fputs("null", f);
    if (s->tr)
        fprintf(f, ",\n  \"traffic\": {\"code\": \"%s\", \"label\": \"%s\", \"reads_per_group\": %d, "
                   "\"writes_per_group\": %d, \"non_temporal\": %s},\n",
                s->tr->code, s->tr->label, s->tr->reads, s->tr->writes, s->tr->nt ? "true" : "false");
    else
        fputs(",\n  \"traffic\": null,\n", f);  /* idle: none; peak: per point */
    fprintf(f, "  \"access_bytes\": %zu,\n  \"random_load_access\": %s,\n", o->access,
            o->random ? "true" : "false");
    fprintf(f, "  \"latency_buffer_bytes\": %zu,\n  \"load_buffer_bytes\": %zu,\n  \"chain_slot_bytes\": %d,\n",
            s->lat_cpu >= 0 ? s->lat_bytes : (size_t)0, load_len(o), CHAIN_SLOT);
    fprintf(f, "  \"seconds_per_point\": ");
    json_num(f, o->seconds);
    fprintf(f, ",\n  \"warmup_s\": ");
    json_num(f, warmup_s(o));
    fprintf(f, ",\n  \"pacing\": \"%s\",\n  \"windows_per_point\": %d,\n  \"arrival_clock\": \"%s\"",
            o->pacing_exp ? "exp" : "fixed", o->nwin, TICK_CLOCK);
    fprintf(f, ",\n  \"huge_pages\": {\"requested\": %s, \"thp_enabled\": \"%s\", \"thp_defrag\": \"%s\", "
               "\"buffers\": [",
            o->huge ? "true" : "false", thp->enabled, thp->defrag);
    fwrite(s->bufs, 1, s->bufs_len, f);
    fprintf(f, "],\n    \"huge_fraction\": ");
    json_num(f, s->tot_bytes ? (double)s->huge_bytes / (double)s->tot_bytes : 0.0);
    fprintf(f, "},\n  \"calibration\": ");
    json_calibration(f, cal);
    fprintf(f, ",\n  \"points_planned\": %d,\n  \"interrupted\": %s,\n  \"points\": [", s->planned,
            s->interrupted ? "true" : "false");
    fwrite(s->pts, 1, s->pts_len, f);
    fputs("\n  ]", f);
    fwrite(s->xtra, 1, s->xtra_len, f);
    fputs("\n}", f);
}

/* The NUMA nodes as read (an object). */
void json_numa(FILE *f, const struct numa_topo *t)
{
    fputs("{\"source\": ", f);
    json_str(f, t->source);
    fprintf(f, ", \"from_sysfs\": %s, \"placement_method\": \"mbind(MPOL_BIND) before the first touch; when mbind "
               "fails, first touch by the thread moved to a CPU of the node\", \"nodes\": [",
            t->from_sysfs ? "true" : "false");
    for (int i = 0; i < t->n; i++) {
        char cpus[1024] = "";
        cpu_list_format(t->cpu[i], t->ncpu[i], cpus, sizeof cpus);
        fprintf(f, "%s{\"node\": %d, \"cpus\": ", i ? ", " : "", t->node[i]);
        json_str(f, cpus);
        fputs(", \"mem_total_bytes\": ", f);
        if (t->mem_kib[i] >= 0)
            fprintf(f, "%lld", t->mem_kib[i] * 1024);
        else
            fputs("null", f);
        fputc('}', f);
    }
    fputs("]}", f);
}

/* The sidecar: one section's document, or for the default run a document holding every section's. */
void write_json(const struct opts *o, int argc, char **argv, struct jsec *secs, int nsec, int interrupted,
                const struct calib *cal, const struct thp *thp, const struct numa_topo *topo)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", o->json, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        die("--json: cannot write %s: %s", tmp, strerror(errno));
    for (int i = 0; i < nsec; i++)
        jsec_close(&secs[i]);
    if (o->mode != MODE_DEFAULT) {
        write_section(f, &secs[0], argc, argv, cal, thp);
    } else {
        fprintf(f, "{\n  \"tool\": \"loadlat\",\n  \"version\": \"%s\",\n  \"command\": ", LOADLAT_VERSION);
        json_command(f, argc, argv);
        fprintf(f, ",\n  \"mode\": \"default\",\n  \"isa\": \"%s\",\n  \"online_cpus\": %ld,\n  \"numa\": ", load_isa(),
                sysconf(_SC_NPROCESSORS_ONLN));
        json_numa(f, topo);
        fputs(",\n  \"calibration\": ", f);
        json_calibration(f, cal);
        fputs(",\n  \"sections_planned\": [", f);
        for (int i = 0; i < N_DEFAULT_SECTIONS; i++)
            fprintf(f, "%s\"%s\"", i ? ", " : "", MODE_NAMES[DEFAULT_SECTIONS[i]]);
        fprintf(f, "],\n  \"interrupted\": %s,\n  \"sections\": [\n", interrupted ? "true" : "false");
        for (int i = 0; i < nsec; i++) {
            if (i)
                fputs(",\n", f);
            write_section(f, &secs[i], argc, argv, cal, thp);
        }
        fputs("\n  ]\n}", f);
    }
    fputc('\n', f);
    if (ferror(f) || fclose(f) != 0) {
        remove(tmp);
        die("--json: write to %s failed", tmp);
    }
    if (rename(tmp, o->json) != 0) {
        int e = errno;
        remove(tmp);
        die("--json: cannot rename %s to %s: %s", tmp, o->json, strerror(e));
    }
}

/* The '#' line of the NUMA nodes (runs with sections), and the blank line MLC's max bandwidth and bandwidth
 * matrix print before their heading. */
void print_numa(const struct opts *o, const struct numa_topo *t)
{
    char nodes_txt[1024] = "";
    for (int i = 0, pos = 0; i < t->n && pos < (int)sizeof nodes_txt - 60; i++) {
        char list[256] = "none";
        if (t->ncpu[i])
            cpu_list_format(t->cpu[i], t->ncpu[i], list, sizeof list);
        pos += snprintf(nodes_txt + pos, sizeof nodes_txt - (size_t)pos, "%snode %d: CPUs %s", i ? "; " : "",
                        t->node[i], list);
        if (t->mem_kib[i] >= 0)
            pos += snprintf(nodes_txt + pos, sizeof nodes_txt - (size_t)pos, ", %.1f GiB",
                            (double)t->mem_kib[i] / 1048576.0);
    }
    printf("# numa: %d node%s (%s) from %s; memory placed on its node with mbind(MPOL_BIND) before the first "
           "touch (first touch from a CPU of the node when mbind fails)\n",
           t->n, t->n > 1 ? "s" : "", nodes_txt, t->source);
    if (o->mode == MODE_MAXBW || o->mode == MODE_BWMAT)
        printf("\n");
    fflush(stdout);
}

/* The header, as MLC prints it: banner, command line, buffer size. MLC's default run prints the banner
 * only (and the command line when there is one). */
void print_header(const struct opts *o, int argc, char **argv)
{
    printf("loadlat (Memory Latency Checker-compatible) - v%s\n", LOADLAT_VERSION);
    if (o->mode == MODE_DEFAULT && argc < 2) {
        fflush(stdout);
        return;
    }
    printf("Command line parameters: ");
    for (int i = 1; i < argc; i++)
        printf("%s ", argv[i]);
    printf(o->mode == MODE_DEFAULT ? "\n" : "\n\n");
    if (o->mode == MODE_IDLE || o->mode == MODE_LATMAT)
        printf("Using buffer size of %.3fMiB\n", (double)lat_len(o) / 1048576.0);
    else if (o->mode == MODE_MLP)
        printf("Using buffer size of %.3fMiB/thread\n", (double)lat_len(o) / 1048576.0);
    else if (o->mode != MODE_C2C && o->mode != MODE_DEFAULT && o->mode != MODE_WSET)
        printf("Using buffer size of %.3fMiB/thread for reads and an additional %.3fMiB/thread for writes\n",
               (double)load_len(o) / 1048576.0, (double)load_len(o) / 1048576.0);
    fflush(stdout);
}

void read_thp(struct thp *t)
{
    read_sysfs_word("/sys/kernel/mm/transparent_hugepage/enabled", t->enabled, sizeof t->enabled);
    read_sysfs_word("/sys/kernel/mm/transparent_hugepage/defrag", t->defrag, sizeof t->defrag);
}

/* KiB of all buffers and of AnonHugePages in them; *unknown = 1 when some buffer's smaps was unreadable. */
static void huge_page_totals(const struct ctx *c, long long *huge_kib, long long *tot_kib, int *unknown)
{
    *huge_kib = *tot_kib = 0;
    *unknown = 0;
    for (int i = 0; i < c->nw; i++) {
        const struct buffer *bs[4] = {&c->w[i].lat, &c->w[i].rd, &c->w[i].rd2, &c->w[i].wr};
        for (int j = 0; j < 4; j++) {
            if (!bs[j]->p)
                continue;
            *tot_kib += (long long)(bs[j]->len / 1024);
            if (bs[j]->anon_huge_kib < 0)
                *unknown = 1;
            else
                *huge_kib += bs[j]->anon_huge_kib;
        }
    }
}

/* The '#' lines: everything MLC does not print (threads, buffers, huge pages, calibrations, timing). The
 * single modes of loadlat <= 0.3 print every part at once; the default run prints the global part once and
 * each section's group part before its heading. c may be NULL without PART_GROUP. */
void print_setup(const struct opts *o, const struct ctx *c, const struct calib *cal, const char *allowed_txt,
                 const struct thp *thp, int parts)
{
    if (parts & PART_GLOBAL)
        printf("# loadlat v%s: %s kernels; allowed CPUs %s\n", LOADLAT_VERSION, load_isa(), allowed_txt);
    if (parts & PART_GROUP) {
        const struct opts *g = c->o;
        char loadtxt[512] = "none";
        if (g->nload)
            cpu_list_format(g->load_cpus, g->nload, loadtxt, sizeof loadtxt);
        if (uses_lat_thread(g))
            printf("# latency thread: CPU %d, %.3f MiB buffer, random cyclic chain of %zu slots of %d bytes "
                   "(random 8-byte offset in each)\n",
                   g->lat_cpu, (double)c->w[0].lat.len / 1048576.0, c->w[0].lat.len / CHAIN_SLOT, CHAIN_SLOT);
        if (g->nload)
            printf("# load threads: CPUs %s (%d threads), %zu-byte %s requests, own buffers of %.3f MiB each\n",
                   loadtxt, g->nload, g->access, g->random ? "random" : "sequential", (double)load_len(g) / 1048576.0);
        if (c->mem_node >= 0)
            printf("# NUMA: every buffer on node %d, the latency thread's (MLC's rule: the load goes where the "
                   "latency thread reads)\n", c->mem_node);
        long long huge_kib, tot_kib;
        int unknown;
        huge_page_totals(c, &huge_kib, &tot_kib, &unknown);
        printf("# huge pages: %s; THP enabled=%s defrag=%s; AnonHugePages in buffers: %s%lld of %lld KiB (%.1f%%)\n",
               g->huge ? "requested with madvise(MADV_HUGEPAGE) (-L)" : "not requested (MADV_NOHUGEPAGE)",
               thp->enabled, thp->defrag, unknown ? "at least " : "", huge_kib, tot_kib,
               tot_kib ? 100.0 * (double)huge_kib / (double)tot_kib : 0.0);
        if (g->huge && huge_kib == 0)
            fprintf(stderr, "loadlat: warning: -L asked for huge pages but none are in use (THP enabled=%s)\n",
                    thp->enabled);
    }
    if (parts & PART_GLOBAL) {
        printf("# delay calibration: 1 delay unit = %.4f ns on CPU %d (thread CPU time, min of 5 runs of %llu iterations)\n",
               cal->delay_ns, cal->cpu, (unsigned long long)cal->delay_iters);
        printf("# clocks: core %.3f GHz (%s; check: %s), TSC %.3f GHz, cpufreq max ", cal->core_ghz, CORE_GHZ_METHOD,
               cal->core_check, cal->tsc_ghz);
        if (cal->cpufreq_max_ghz > 0)
            printf("%.3f GHz", cal->cpufreq_max_ghz);
        else
            printf("not readable");
        printf("; core clocks = ns x core GHz\n");
        printf("# timing: CLOCK_MONOTONIC; warm-up %.3f s then %.3f s measured per point; MB = 1e6 bytes\n",
               warmup_s(o), o->seconds);
    }
    if (parts & PART_GROUP) {
        const struct opts *g = c->o;
        if (g->no_lat)
            printf("# -T: no latency thread; the latency column is 0.00 (not measured)\n");
        if (g->mode == MODE_LOADED)
            printf("# traffic %s (%s): per request group %d read(s) and %d %swrite(s) of %zu bytes, then the "
                   "delay loop\n",
                   g->tr->code, g->tr->label, g->tr->reads, g->tr->writes, g->tr->nt ? "non-temporal " : "",
                   g->access);
        if (g->pacing_exp)
            printf("# pacing exp: each delay drawn from an exponential of mean (delay - %.1f) units (a draw costs "
                   "%.2f ns, %.2f ns per %s stamp); arrival_cv in the JSON\n",
                   c->exp_cost_units, cal->exp_cost_ns, cal->tick_ns, TICK_CLOCK);
    }
    if (parts & PART_BLANK)
        printf("\n");
    fflush(stdout);
}

void print_row(const struct result *r, int has_lat)
{
    printf(" %05llu\t%6.2f\t%9.1f\n", (unsigned long long)r->delay, has_lat ? r->latency_ns : 0.0, r->bw_MBps);
    fflush(stdout);
}

void print_interrupted(int done, int planned)
{
    printf("\n# interrupted by signal %d after %d of %d points\n", (int)g_signal, done, planned);
    fflush(stdout);
    fprintf(stderr, "loadlat: interrupted after %d of %d points\n", done, planned);
}

void json_cell(FILE *f, int first, int cpu_node, int mem_node, const char *cpus, const char *status,
               double value, const char *placement, double on_node, const char *mbind_err, const char *why)
{
    fprintf(f, "%s\n      {\"cpu_node\": %d, \"mem_node\": %d, \"cpus\": ", first ? "" : ",", cpu_node, mem_node);
    json_str(f, cpus);
    fputs(", \"status\": ", f);
    json_str(f, status);
    fputs(", \"value\": ", f);
    json_num(f, value);
    fputs(", \"placement\": ", f);
    if (placement)
        json_str(f, placement);
    else
        fputs("null", f);
    fputs(", \"pages_on_node\": ", f);
    json_num(f, on_node);
    fputs(", \"mbind_error\": ", f);
    if (mbind_err)
        json_str(f, mbind_err);
    else
        fputs("null", f);
    fputs(", \"why\": ", f);
    if (why)
        json_str(f, why);
    else
        fputs("null", f);
    fputc('}', f);
}
