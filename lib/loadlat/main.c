/* loadlat - an open, MLC-compatible loaded-latency tool (memstor).
 *
 * main.c: the steps of a run: options, CPUs, memory preflight, calibration, then one single mode (the output
 * and JSON of loadlat <= 0.3) or the sections of MLC's default run (idle latency matrix, peak injection and
 * maximum bandwidth, bandwidth matrix, loaded latency, cache-to-cache latency; each also alone). The files
 * are listed in tool.h; see README.md for the method.
 */
#include "hier.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Refuse, before anything is printed, buffers beyond the memory available for the largest group of threads
 * a section of this run starts. */
static void preflight_memory(const struct env *e, const enum mode *secs, int nsec)
{
    const struct opts *o = e->o;
    static int cpus[LOADLAT_MAX_CPUS];
    for (int s = 0; s < nsec; s++) {
        struct opts *g = NULL;
        if (secs[s] == MODE_LATMAT) {
            g = group_opts(e, MODE_IDLE, o->lat_cpu, NULL, 0, traffic_lookup("R"), 0);
        } else if (secs[s] == MODE_PEAK || secs[s] == MODE_MAXBW) {
            g = group_opts(e, MODE_PEAK, -1, cpus, section_loads(e, -1, -1, cpus), traffic_lookup("R"), 0);
        } else if (secs[s] == MODE_BWMAT) {
            int best = 0;
            for (int i = 0; i < e->topo.n; i++) {
                int k = section_loads(e, -1, i, cpus);
                best = k > best ? k : best;
            }
            g = group_opts(e, MODE_LOADED, -1, cpus, best, o->tr, 1);
        } else if (secs[s] == MODE_LOADED) {
            g = group_opts(e, MODE_LOADED, o->lat_cpu, cpus, section_loads(e, o->lat_cpu, -1, cpus), o->tr, 0);
        }
        if (!g)
            continue;
        struct ctx c;
        memset(&c, 0, sizeof c);
        c.o = g;
        plan_buffers(&c);
        check_memory(&c);
        free(g);
    }
}

/* --sample-delays=N -d<mean>: N draws of the exponential delay sampler (the load threads' code, seeded as
 * load thread 0), one whole number of delay-loop iterations per line. For tests of the distribution. */
static int sample_delays(const struct opts *o)
{
    uint64_t s = 0;
    uint64_t seed = rng_next(&s);
    uint64_t drng = seed ^ 0xD1B54A32D192ED03ull;
    double mean = (double)o->delays[0];
    for (long long i = 0; i < o->sample_delays; i++)
        printf("%llu\n", (unsigned long long)(o->delays[0] ? exp_draw(&drng, mean) : 0));
    return fflush(stdout) == 0 ? 0 : 1;
}

/* --idle_latency, --loaded_latency, --peak_injection_bandwidth: one group of threads, the output and JSON of
 * loadlat <= 0.3. Returns the exit status. */
static int run_single(struct env *e, struct opts *o)
{
    static struct ctx c;
    struct run run;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.mem_node = loaded_home_node(e, o, &c.touch_cpu);
    plan_buffers(&c);
    check_memory(&c);
    calibrate(&e->cal, o, o->nload ? o->load_cpus[0] : o->lat_cpu);
    c.exp_cost_units = o->pacing_exp && e->cal.delay_ns > 0 ? e->cal.exp_cost_ns / e->cal.delay_ns : 0.0;
    c.cal_tick_ghz = e->cal.tick_ghz;
    c.cal_tick_ns = e->cal.tick_ns;
    print_header(o, e->argc, e->argv);
    start_workers(&c);
    if (!workers_ready(&c)) {
        stop_workers(&c);
        return 1;
    }
    read_thp(&e->thp);
    print_setup(o, &c, &e->cal, e->allowed_txt, &e->thp, PART_GLOBAL | PART_GROUP | PART_BLANK);
    run_points(&c, &e->cal, &run);
    stop_workers(&c);
    if (o->json) {
        struct jsec js;
        jsec_open(&js, o->mode, o);
        js.planned = run.planned;
        js.interrupted = run.interrupted;
        js.tr = o->mode == MODE_LOADED ? o->tr : NULL;
        jsec_workers(&js, &c);
        jsec_points(&js, &c, &e->cal, &run, 0, run.nres, NULL);
        write_json(o, e->argc, e->argv, &js, 1, run.interrupted, &e->cal, &e->thp, NULL);
        jsec_free(&js);
    }
    free_workers(&c);
    int status = run.interrupted ? 128 + (int)g_signal : run.any_failed ? 1 : 0;
    run_free(&run);
    return status;
}

int main(int argc, char **argv)
{
    static struct opts o;  /* large (CPU and delay arrays): not on the stack */
    static struct env e;

    exp_table_init();
    parse_args(argc, argv, &o);
    if (o.sample_delays)
        return sample_delays(&o);
    e.o = &o;
    e.argc = argc;
    e.argv = argv;
    resolve_cpus(&o, &e);
    install_signals();
    if (o.mode == MODE_WSET)
        return run_working_set(&e);  /* wset.c */
    if (o.mode == MODE_MLP)
        return run_mlp(&e);          /* mlp.c */

    char err[300];
    int numa_ok = numa_read(&e.topo, e.allowed, e.nallowed, err, sizeof err) == 0;
    if (o.mode == MODE_IDLE || o.mode == MODE_LOADED || o.mode == MODE_PEAK) {
        if (!numa_ok)  /* one node as far as the load's placement goes; said, not fatal */
            fprintf(stderr, "loadlat: warning: NUMA nodes unknown (%s): each buffer stays local to its thread\n", err);
        int status = run_single(&e, &o);
        if (numa_ok)
            numa_free(&e.topo);
        return status;
    }
    if (!numa_ok)
        die("NUMA nodes: %s", err);
    enum mode secs[N_DEFAULT_SECTIONS];
    int nsec = 0;
    if (o.mode == MODE_DEFAULT)
        for (int i = 0; i < N_DEFAULT_SECTIONS; i++)
            secs[nsec++] = DEFAULT_SECTIONS[i];
    else
        secs[nsec++] = o.mode;
    preflight_memory(&e, secs, nsec);
    static int cpus[LOADLAT_MAX_CPUS];
    int cal_cpu = o.mode == MODE_DEFAULT ? (section_loads(&e, o.lat_cpu, -1, cpus) ? cpus[0] : o.lat_cpu)
                  : o.mode == MODE_MAXBW || o.mode == MODE_BWMAT ? (section_loads(&e, -1, -1, cpus) ? cpus[0] : e.allowed[0])
                  : o.lat_cpu;
    calibrate(&e.cal, &o, cal_cpu);
    read_thp(&e.thp);
    print_header(&o, argc, argv);
    print_setup(&o, NULL, &e.cal, e.allowed_txt, &e.thp, PART_GLOBAL);
    print_numa(&o, &e.topo);

    struct jsec js[N_DEFAULT_SECTIONS];
    int ran = 0;
    for (int s = 0; s < nsec; s++) {
        jsec_open(&js[s], secs[s], &o);
        ran++;
        if (run_section(&e, secs[s], &js[s]))
            break;
    }
    if (o.json)
        write_json(&o, argc, argv, js, ran, e.interrupted, &e.cal, &e.thp, &e.topo);
    for (int s = 0; s < ran; s++)
        jsec_free(&js[s]);
    numa_free(&e.topo);
    return e.interrupted ? 128 + (int)g_signal : e.any_failed ? 1 : 0;
}
