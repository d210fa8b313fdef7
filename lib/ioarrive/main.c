/* ioarrive - memstor's arrival-driven (open-loop) I/O generator.
 *
 * main.c: the steps of a run: the command line, the target (or the simulated device), the slots and
 * buffers, the engine, the run (real or virtual time), the checks, the JSON.
 * Exit status: 0 the run finished (its JSON says whether the loop held: "open_loop"); 1 I/O errors (the
 * JSON is still written) or a failure of this machine (no engine works, out of memory); 2 a usage error
 * (one line on stderr, nothing on stdout); 128+N interrupted by signal N (the JSON of what ran is written).
 */
#include "ioarrive.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>

volatile sig_atomic_t stop_signal;

static void on_signal(int sig) { stop_signal = sig; }

static void span_and_alignment(struct job *j, const struct target *t)
{
    if (j->sim.on) {
        if (!j->span) j->span = j->bs << 20;  /* offsets of a simulated device mean nothing */
        return;
    }
    if (j->span > t->size_bytes)
        die_usage("--span %llu exceeds the target's %llu bytes", (unsigned long long)j->span,
                  (unsigned long long)t->size_bytes);
    uint64_t span = (j->span ? j->span : t->size_bytes) / j->bs * j->bs;
    int uses_bs = (j->dir[0].active && j->dir[0].proc != PROC_TRACE) || (j->dir[1].active && j->dir[1].proc != PROC_TRACE);
    if (span == 0 && uses_bs)
        die_usage("the target %s (%llu bytes) is smaller than one block of %llu bytes", j->target,
                  (unsigned long long)t->size_bytes, (unsigned long long)j->bs);
    if (j->direct && j->bs % t->lbs)
        die_usage("--bs %llu is not a multiple of the target's logical block size %u (O_DIRECT)",
                  (unsigned long long)j->bs, t->lbs);
    j->span = span;
    for (int d = 0; d < NDIR; d++) {
        const struct trace *tr = &j->dir[d].tr;
        if (!j->dir[d].active || j->dir[d].proc != PROC_TRACE) continue;
        for (size_t i = 0; i < tr->n; i++) {
            if (tr->off[i] + tr->len[i] > t->size_bytes)
                die_usage("trace %s: a %s of %u bytes at offset %llu ends beyond the target's %llu bytes",
                          j->trace_path, DIR_NAMES[d], tr->len[i], (unsigned long long)tr->off[i],
                          (unsigned long long)t->size_bytes);
            if (j->direct && (tr->off[i] % t->lbs || tr->len[i] % t->lbs))
                die_usage("trace %s: offset %llu size %u not aligned to %u bytes (O_DIRECT; or --buffered)",
                          j->trace_path, (unsigned long long)tr->off[i], tr->len[i], t->lbs);
        }
    }
}

static void setup_slots(struct ctx *c)
{
    const struct job *j = c->j;
    uint32_t n = 1;
    c->nslots = j->max_outstanding;
    while (n < c->nslots) n *= 2;
    c->slots = calloc(c->nslots, sizeof *c->slots);
    c->ring = calloc(n, sizeof *c->ring);
    if (!c->slots || !c->ring) die("out of memory for %u slots", c->nslots);
    c->ring_mask = n - 1;
    for (uint32_t i = 0; i < c->nslots; i++) {
        c->slots[i].id = i;
        c->ring[i] = i;
    }
    c->ring_tail = c->nslots;
    if (j->sim.on) return;
    uint64_t maxlen = j->bs;
    for (int d = 0; d < NDIR; d++)
        for (size_t i = 0; i < j->dir[d].tr.n; i++)
            if (j->dir[d].tr.len[i] > maxlen) maxlen = j->dir[d].tr.len[i];
    maxlen = (maxlen + 4095) / 4096 * 4096;
    c->nbufs = c->nslots < 64 ? (int)c->nslots : 64;  /* I/Os share buffers: their contents do not matter */
    c->bufs = calloc((size_t)c->nbufs, sizeof *c->bufs);
    struct rng r;
    rng_seed(&r, j->seed, 77);
    for (int i = 0; i < c->nbufs; i++) {
        if (posix_memalign(&c->bufs[i], 4096, maxlen))
            die("out of memory for %d buffers of %llu bytes", c->nbufs, (unsigned long long)maxlen);
        for (uint64_t k = 0; k < maxlen / 8; k++)
            ((uint64_t *)c->bufs[i])[k] = rng_next(&r);  /* written data: not compressible, not zeros */
    }
    for (uint32_t i = 0; i < c->nslots; i++)
        c->slots[i].iov.iov_base = c->bufs[i % (uint32_t)c->nbufs];
}

static double tv_s(struct timeval tv) { return (double)tv.tv_sec + tv.tv_usec / 1e6; }

int main(int argc, char **argv)
{
    static struct job j;
    static struct ctx c;
    parse_args(&j, argc, argv);
    c.j = &j;
    pthread_mutex_init(&c.rec_mu, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    if (!j.sim.on)
        open_target(&j, &c.tgt);
    span_and_alignment(&j, &c.tgt);
    setup_slots(&c);
    engine_select(&c);
    if (!j.virtual_time && j.pause_probe_s > 0)
        probe_pauses(j.pause_probe_s, &c.pauses);
    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    int64_t w0 = now_ns();
    if (j.virtual_time)
        run_virtual(&c);
    else
        run_real(&c);
    getrusage(RUSAGE_SELF, &r1);
    struct cpu_use proc = {tv_s(r1.ru_utime) - tv_s(r0.ru_utime), tv_s(r1.ru_stime) - tv_s(r0.ru_stime),
                           (double)(now_ns() - w0) / 1e9};
    if (j.virtual_time)
        c.cpu_submitter = proc;
    static struct checks ck;
    run_checks(&j, &c.rec, &c.facts, &ck);
    FILE *out = stdout;
    if (j.json_path && !(out = fopen(j.json_path, "w")))
        die("cannot write %s: %s", j.json_path, strerror(errno));
    write_json(out, &c, &ck, &proc);
    if (fflush(out) || (out != stdout && fclose(out)))
        die("writing the JSON failed: %s", strerror(errno));
    uint64_t errors = c.rec.d[0].errors + c.rec.d[1].errors;
    if (stop_signal)
        return 128 + stop_signal;
    if (errors)
        fprintf(stderr, "ioarrive: %llu I/Os failed (the JSON's checks name the first error)\n",
                (unsigned long long)errors);
    return errors ? 1 : 0;
}
