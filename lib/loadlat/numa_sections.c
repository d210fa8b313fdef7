/* loadlat - an open, MLC-compatible loaded-latency tool (memstor).
 *
 * numa_sections.c: the sections across NUMA nodes: the idle latency and bandwidth matrices (one group of
 * threads per cell, buffers placed on the column's node) and cache-to-cache latency (local HIT / HITM, remote
 * HITM matrices).
 */
#include "tool.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The CPUs of matrix row i into cpus: bandwidth: the load CPUs of its node; latency: its one CPU rowcpu (-1:
 * none). Returns the count. */
static int matrix_row_cpus(const struct env *e, int bandwidth, int i, int rowcpu, int *cpus)
{
    return bandwidth ? section_loads(e, -1, i, cpus) : (rowcpu >= 0 ? (cpus[0] = rowcpu, 1) : 0);
}

/* The matrix's '#' line and MLC's heading, up to the column nodes. */
static void matrix_heading(const struct env *e, int bandwidth, const int *rowcpu, int *cpus)
{
    const struct opts *o = e->o;
    const struct numa_topo *t = &e->topo;
    int n = t->n;
    char rows_txt[1024] = "";
    for (int i = 0, pos = 0; i < n && pos < (int)sizeof rows_txt - 40; i++) {
        char list[256] = "none";
        int k = matrix_row_cpus(e, bandwidth, i, rowcpu[i], cpus);
        if (k)
            cpu_list_format(cpus, k, list, sizeof list);
        pos += snprintf(rows_txt + pos, sizeof rows_txt - (size_t)pos, "%snode %d: CPU%s %s", i ? ", " : "",
                        t->node[i], k > 1 ? "s" : "", list);
    }
    if (bandwidth) {
        printf("# bandwidth matrix: load threads on the allowed CPUs of each row's node (%s), %zu-byte %s %s "
               "requests at delay 0, own buffers of %.3f MiB each placed on the column's node\n",
               rows_txt, o->access, o->random ? "random" : "sequential", o->tr->code, (double)load_len(o) / 1048576.0);
        printf("Measuring Memory Bandwidths between nodes within system \n");
        printf("Bandwidths are in MB/sec (1 MB/sec = 1,000,000 Bytes/sec)\n");
        printf("Using all the threads from each core if Hyper-threading is enabled\n");
        if (o->tr->reads && !o->tr->writes)
            printf("Using Read-only traffic type\n");
    } else {
        printf("# latency matrix: a latency thread on one CPU of each row's node (%s), a %.3f MiB random chain "
               "placed on the column's node per cell\n", rows_txt, (double)lat_len(o) / 1048576.0);
        printf("Measuring idle latencies for random access (in ns)...\n");
    }
    printf("\t\tNuma node\n");
    printf("Numa node\t");
    for (int j = 0; j < n; j++)
        printf("%6d\t", t->node[j]);
    printf("\n");
    fflush(stdout);
}

/* What one matrix cell got: its value (NAN when not measured), status and why, where its buffers went. */
struct cell {
    double v;
    const char *status, *why, *placement, *mbind_err;
    double on_node;
    int measured;                  /* its point completed (ok or failed) */
    char whybuf[200];
};

/* Measure cell (i, j) with a group of threads on the k CPUs `cpus` (of row i's node), buffers on column j's
 * node; its point goes to the section's JSON. Returns 1 when interrupted (cell status "interrupted"). */
static int matrix_cell(struct env *e, struct jsec *js, int bandwidth, int i, int j, const int *cpus, int k,
                       struct cell *cl)
{
    const struct opts *o = e->o;
    const struct numa_topo *t = &e->topo;
    int stop = 0;
    struct opts *g = bandwidth ? group_opts(e, MODE_LOADED, -1, cpus, k, o->tr, 1)
                               : group_opts(e, MODE_IDLE, cpus[0], NULL, 0, traffic_lookup("R"), 0);
    static struct ctx c;
    if (group_start(&c, e, g, t->node[j], node_first_allowed(e, j)) != 0) {
        cl->status = "failed";
        cl->why = "the threads could not set up their buffers (see the loadlat: lines on stderr)";
        e->any_failed = 1;
        free(g);
        return 0;
    }
    struct run run;
    run_alloc(&run, 1);
    if (run_point(&c, g->tr, 0, &run.res[0])) {
        stop = 1;
        cl->status = "interrupted";
    } else {
        run.nres = 1;
        cl->measured = 1;
        struct result *r = &run.res[0];
        group_placement(&c, &cl->placement, &cl->on_node, &cl->mbind_err);
        if (r->ok) {
            cl->v = bandwidth ? r->bw_MBps : r->latency_ns;
        } else {
            cl->status = "failed";
            snprintf(cl->whybuf, sizeof cl->whybuf, "%s", r->why);
            cl->why = cl->whybuf;
            e->any_failed = 1;
            fprintf(stderr, "loadlat: %s matrix cell %d,%d failed: %s\n",
                    bandwidth ? "bandwidth" : "latency", t->node[i], t->node[j], r->why);
        }
        char extra[300];
        snprintf(extra, sizeof extra, ", \"cpu_node\": %d, \"mem_node\": %d, \"placement\": \"%s\", "
                 "\"pages_on_node\": ", t->node[i], t->node[j], cl->placement ? cl->placement : "none");
        size_t l = strlen(extra);
        if (isfinite(cl->on_node))
            snprintf(extra + l, sizeof extra - l, "%.4g", cl->on_node);
        else
            snprintf(extra + l, sizeof extra - l, "null");
        jsec_workers(js, &c);
        jsec_points(js, &c, &e->cal, &run, 0, 1, extra);
    }
    run_free(&run);
    group_end(&c);
    free(g);
    return stop;
}

/* The section's "numa" and "matrix" objects: the values (n x n, row-major) and the cells' JSON. */
static void matrix_json(FILE *xf, const struct numa_topo *t, int bandwidth, const double *vals, const char *cells,
                        size_t cells_len)
{
    int n = t->n;
    fputs(",\n  \"numa\": ", xf);
    json_numa(xf, t);
    fprintf(xf, ",\n  \"matrix\": {\"quantity\": \"%s\", \"rows\": \"node of the CPUs\", \"columns\": \"node of "
                "the memory\", \"nodes\": [", bandwidth ? "bandwidth_MBps" : "latency_ns");
    for (int j = 0; j < n; j++)
        fprintf(xf, "%s%d", j ? ", " : "", t->node[j]);
    fputs("], \"values\": [", xf);
    for (int i = 0; i < n; i++) {
        fputs(i ? ", [" : "[", xf);
        for (int j = 0; j < n; j++) {
            if (j)
                fputs(", ", xf);
            json_num(xf, vals[i * n + j]);
        }
        fputc(']', xf);
    }
    fputs("],\n    \"cells\": [", xf);
    fwrite(cells, 1, cells_len, xf);
    fputs("]}", xf);
}

/* --latency_matrix and --bandwidth_matrix: MLC's "Numa node" table, rows = the node of the CPUs, columns =
 * the node of the memory. Every cell is one group of threads (latency: one latency thread on one CPU of the
 * row's node; bandwidth: load threads on the row's allowed CPUs (or its -k CPUs), reads at delay 0) whose
 * buffers are placed on the column's node. A row without an allowed CPU or a column without memory prints
 * "-". Returns 1 when interrupted. */
int sec_matrix(struct env *e, struct jsec *js, int bandwidth)
{
    const struct opts *o = e->o;
    const struct numa_topo *t = &e->topo;
    int n = t->n;
    static int cpus[LOADLAT_MAX_CPUS];
    int *rowcpu = malloc(sizeof(int) * (size_t)n);  /* latency: the row's CPU */
    double *vals = malloc(sizeof(double) * (size_t)n * (size_t)n);
    char *cells = NULL;
    size_t cells_len = 0;
    FILE *cf = open_memstream(&cells, &cells_len);
    if (!rowcpu || !vals || !cf)
        die("out of memory");
    for (int i = 0; i < n * n; i++)
        vals[i] = NAN;
    int planned = 0, done = 0, ncell = 0, stop = 0;
    for (int i = 0; i < n; i++) {
        rowcpu[i] = o->c_given && in_node(t, i, o->lat_cpu) ? o->lat_cpu : node_first_allowed(e, i);
        int has_cpu = bandwidth ? section_loads(e, -1, i, cpus) > 0 : rowcpu[i] >= 0;
        for (int j = 0; j < n; j++)
            planned += has_cpu && t->mem_kib[j] != 0;
    }
    js->planned = planned;
    js->tr = bandwidth ? o->tr : NULL;
    matrix_heading(e, bandwidth, rowcpu, cpus);
    for (int i = 0; i < n && !stop; i++) {
        printf("%8d\t", t->node[i]);
        fflush(stdout);
        int k = matrix_row_cpus(e, bandwidth, i, rowcpu[i], cpus);
        char list[256] = "";
        if (k)
            cpu_list_format(cpus, k, list, sizeof list);
        for (int j = 0; j < n && !stop; j++) {
            struct cell cl = {.v = NAN, .status = "ok", .on_node = NAN};
            if (!k) {
                cl.status = "not measured";
                cl.why = "no allowed CPU on this node";
            } else if (t->mem_kib[j] == 0) {
                cl.status = "not measured";
                cl.why = "no memory on this node";
            } else {
                stop = matrix_cell(e, js, bandwidth, i, j, cpus, k, &cl);
                done += cl.measured;
            }
            if (stop)
                break;
            vals[i * n + j] = cl.v;
            json_cell(cf, ncell++ == 0, t->node[i], t->node[j], list, cl.status, cl.v, cl.placement, cl.on_node,
                      cl.mbind_err, cl.why);
            if (isfinite(cl.v))
                printf(bandwidth ? "%.1f\t" : "%6.1f\t", cl.v);
            else
                printf(bandwidth ? "-\t" : "%6s\t", "-");
            fflush(stdout);
        }
        printf("\n");
    }
    if (stop) {
        js->interrupted = e->interrupted = 1;
        print_interrupted(done, planned);
    } else {
        printf("\n");
    }
    fflush(stdout);
    if (fclose(cf) != 0)
        die("out of memory");
    matrix_json(js->xf, t, bandwidth, vals, cells, cells_len);
    free(cells);
    free(vals);
    free(rowcpu);
    return stop;
}

/* The c2c writer for a reader CPU: the first -k CPU that is not the reader, else an allowed CPU of the
 * reader's node that does not share its core (SMT), else any other CPU of its node, else any other allowed
 * CPU; -1 when none. Among nodes: node index `node_idx` only when >= 0. */
static int c2c_writer_cpu(const struct env *e, int reader, int node_idx)
{
    const struct opts *o = e->o;
    const struct numa_topo *t = &e->topo;
    if (o->k_given)
        for (int i = 0; i < o->nload; i++)
            if (o->load_cpus[i] != reader && (node_idx < 0 || in_node(t, node_idx, o->load_cpus[i])))
                return o->load_cpus[i];
    int rn = numa_index_of_cpu(t, reader);
    int same = -1, other = -1;
    for (int i = 0; i < e->nallowed; i++) {
        int cpu = e->allowed[i];
        if (cpu == reader || (node_idx >= 0 && !in_node(t, node_idx, cpu)))
            continue;
        if (node_idx < 0 && rn >= 0 && !in_node(t, rn, cpu)) {
            if (other < 0)
                other = cpu;
            continue;
        }
        if (cpu_smt_siblings(reader, cpu) == 0)
            return cpu;
        if (same < 0)
            same = cpu;
    }
    return same >= 0 ? same : other;
}

/* c2c values of the kinds asked for (C2C_HIT, C2C_HITM; both alternate round by round): measured, added to the
 * JSON (results[]), in v[0] (HIT) and v[1] (HITM), NAN when not measured. *stop = 1 when interrupted. */
static void c2c_values(struct env *e, FILE *xf, int *nres, const char *const labels[2], const char *scope,
                       const char *home, int writer, int reader, int home_idx, int kinds, double v[2], int *stop)
{
    const struct numa_topo *t = &e->topo;
    struct c2c_args a;
    memset(&a, 0, sizeof a);
    a.writer_cpu = writer;
    a.reader_cpu = reader;
    a.home_node = t->from_sysfs && home_idx >= 0 ? t->node[home_idx] : -1;
    a.home_is_reader = strcmp(home, "reader") == 0;
    a.kinds = kinds;
    a.seconds = e->o->seconds;
    a.tick_ghz = e->cal.tick_ghz;
    a.stop = &g_signal;
    struct c2c_result res[2];
    v[0] = v[1] = NAN;
    int rc = c2c_measure(&a, res);
    if (rc == 1) {
        *stop = 1;
        return;
    }
    int wi = numa_index_of_cpu(t, writer), ri = numa_index_of_cpu(t, reader);
    int smt = cpu_smt_siblings(reader, writer);
    for (int k = 0; k < 2; k++) {
        if (!(kinds & (k ? C2C_HITM : C2C_HIT)))
            continue;
        const struct c2c_result *r = &res[k];
        fprintf(xf, "%s\n      {\"label\": ", (*nres)++ ? "," : "");
        json_str(xf, labels[k]);
        fprintf(xf, ", \"kind\": \"%s\", \"scope\": \"%s\", \"home\": \"%s\", \"writer_cpu\": %d, \"reader_cpu\": %d, "
                    "\"writer_node\": %d, \"reader_node\": %d, \"home_node\": ",
                k ? "HITM" : "HIT", scope, home, writer, reader, wi >= 0 ? t->node[wi] : -1, ri >= 0 ? t->node[ri] : -1);
        if (home_idx >= 0)
            fprintf(xf, "%d", t->node[home_idx]);
        else
            fputs("null", xf);
        fprintf(xf, ", \"interleaved\": %s, \"smt_siblings\": %s, \"status\": \"%s\", \"latency_ns\": ",
                kinds == (C2C_HIT | C2C_HITM) ? "true" : "false", smt < 0 ? "null" : smt ? "true" : "false",
                r->ok ? "ok" : "failed");
        json_num(xf, r->latency_ns);
        fputs(", \"median_ns\": ", xf);
        json_num(xf, r->median_ns);
        fputs(", \"p10_ns\": ", xf);
        json_num(xf, r->p10_ns);
        fputs(", \"p90_ns\": ", xf);
        json_num(xf, r->p90_ns);
        fputs(", \"timer_resolution_ns\": ", xf);
        json_num(xf, r->resolution_ns);
        fprintf(xf, ", \"estimator\": \"%s\", \"rounds\": %lld, \"seconds\": ",
                r->coarse ? "mean of the 1-99th percentile (coarse timer)" : "mean of the 10-90th percentile", r->rounds);
        json_num(xf, r->seconds);
        fputs(", \"placement\": ", xf);
        json_str(xf, r->placement);
        fputs(", \"mbind_error\": ", xf);
        if (r->mbind_error[0])
            json_str(xf, r->mbind_error);
        else
            fputs("null", xf);
        fputs(", \"pages_on_node\": ", xf);
        json_num(xf, r->pages_on_node);
        if (!r->ok) {
            fputs(", \"error\": ", xf);
            json_str(xf, r->why);
        }
        fputc('}', xf);
        if (r->ok) {
            v[k] = r->latency_ns;
        } else {
            e->any_failed = 1;
            fprintf(stderr, "loadlat: c2c %s (writer CPU %d, reader CPU %d) failed: %s\n", labels[k], writer, reader,
                    r->why);
        }
    }
}

/* --c2c_latency: MLC's local HIT and HITM lines (a reader CPU and a writer CPU of one node, the line homed
 * on that node) and, with two or more nodes, its remote HITM matrices (writer node x reader node, the line
 * homed on the writer's, then on the reader's node). */
int sec_c2c(struct env *e, struct jsec *js)
{
    const struct opts *o = e->o;
    const struct numa_topo *t = &e->topo;
    int n = t->n, stop = 0, nres = 0, done = 0;
    int reader = o->lat_cpu;
    int writer = c2c_writer_cpu(e, reader, -1);
    int rn = numa_index_of_cpu(t, reader);
    int nodes_with_cpus = 0;
    for (int i = 0; i < n; i++)
        nodes_with_cpus += node_first_allowed(e, i) >= 0;
    int remote = nodes_with_cpus >= 2;
    js->planned = 2 + (remote ? 2 * n * (n - 1) : 0);
    js->lat_cpu = reader;
    if (writer >= 0)
        js->load_cpus[js->nload++] = writer;
    int smt = writer >= 0 ? cpu_smt_siblings(reader, writer) : -1;
    printf("# c2c: reader CPU %d, writer CPU %d (%s), the line's page homed on node %d; each value = mean of the "
           "10-90th percentile (1-99th with a timer tick over 2 ns) over up to %.3f s of rounds per value (HIT and "
           "HITM rounds alternate) of (timed load of the line - the same load again), %s%s\n",
           reader, writer, smt == 1 ? "SMT siblings: one core" : smt == 0 ? "not SMT siblings" : "SMT unknown",
           rn >= 0 ? t->node[rn] : 0, o->seconds, c2c_timer(),
           c2c_can_flush() ? "" : "; no cache flush on this architecture: HIT is not a clean-line transfer");
    printf("Measuring cache-to-cache transfer latency (in ns)...\n");
    fflush(stdout);
    fputs(",\n  \"numa\": ", js->xf);
    json_numa(js->xf, t);
    fprintf(js->xf, ",\n  \"c2c\": {\"timer\": \"%s\", \"timer_ticks_per_ns\": ", c2c_timer());
    json_num(js->xf, e->cal.tick_ghz);
    fprintf(js->xf, ", \"flush\": %s, \"seconds_per_value\": ", c2c_can_flush() ? "true" : "false");
    json_num(js->xf, o->seconds);
    fputs(", \"method\": \"a writer thread stores to (HITM) or flushes and reads (HIT) one 64-byte line, then a reader "
          "thread times one load of it and the same load again; latency_ns = mean of the 10-90th percentile of the "
          "differences\", \"results\": [", js->xf);
    static const char *const local_labels[2] = {"Local Socket L2->L2 HIT  latency", "Local Socket L2->L2 HITM latency"};
    if (writer < 0) {
        printf("# c2c local latencies not measured: no second CPU\n");
    } else {
        double v[2];
        c2c_values(e, js->xf, &nres, local_labels, "local", "local", writer, reader, rn, C2C_HIT | C2C_HITM, v, &stop);
        for (int m = 0; m < 2 && !stop; m++) {
            done++;
            if (isfinite(v[m]))
                printf("%s\t%.1f\n", local_labels[m], v[m]);
            else
                printf("# c2c %s failed: see stderr\n", local_labels[m]);
        }
        fflush(stdout);
    }
    for (int h = 0; h < 2 && remote && !stop; h++) {
        const char *home = h == 0 ? "writer" : "reader";
        printf("Remote Socket L2->L2 HITM latency (data address homed in %s socket)\n", home);
        printf("\t\t\tReader Numa Node\n");
        printf("Writer Numa Node");
        for (int j = 0; j < n; j++)
            printf("%6d\t", t->node[j]);
        printf("\n");
        fflush(stdout);
        for (int w = 0; w < n && !stop; w++) {
            printf("%13d\t", t->node[w]);
            fflush(stdout);
            for (int r = 0; r < n && !stop; r++) {
                double v = NAN;
                if (w != r) {
                    int rcpu = o->c_given && in_node(t, r, o->lat_cpu) ? o->lat_cpu : node_first_allowed(e, r);
                    int wcpu = rcpu >= 0 ? c2c_writer_cpu(e, rcpu, w) : -1;
                    if (rcpu >= 0 && wcpu >= 0) {
                        char label[120];
                        snprintf(label, sizeof label, "Remote Socket L2->L2 HITM latency (data address homed in %s "
                                 "socket)", home);
                        const char *const labels[2] = {label, label};
                        double vv[2];
                        c2c_values(e, js->xf, &nres, labels, "remote", home, wcpu, rcpu, h == 0 ? w : r, C2C_HITM, vv,
                                   &stop);
                        if (stop)
                            break;
                        v = vv[1];
                        done++;
                    }
                }
                if (isfinite(v))
                    printf("%6.1f\t", v);
                else
                    printf("%6s\t", "-");
                fflush(stdout);
            }
            printf("\n");
        }
    }
    fputs("]}", js->xf);
    if (stop) {
        js->interrupted = e->interrupted = 1;
        print_interrupted(done, js->planned);
    } else {
        printf("\n");
    }
    fflush(stdout);
    return stop;
}
