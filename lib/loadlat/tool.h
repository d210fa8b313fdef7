/* loadlat - an open, MLC-compatible loaded-latency tool (memstor).
 *
 * tool.h: the declarations the tool's own translation units share (loadlat.h holds those of the
 * measurement code below them):
 *   main.c           the steps of a run: options, CPUs, memory preflight, calibration, then one single mode
 *                    or the sections; --sample-delays
 *   options.c        modes, the command line (parse_args, usage), usage errors, the CPUs of a run and of
 *                    each section
 *   run.c            threads (barrier-synchronised points: warm-up, measured window, stop), their buffers
 *                    and placement, load generation and pacing, the chase, the figures of a point, groups
 *                    of threads, calibration
 *   output.c         MLC v3.10/v3.11-style text ('#' setup lines, header) and the JSON sidecar
 *   sections.c       the single modes' points (idle, peak injection, loaded latency), max bandwidth and the
 *                    sections of MLC's default run
 *   numa_sections.c  the sections across NUMA nodes: latency and bandwidth matrices, cache-to-cache latency
 *   hier.c, wset.c, mlp.c  the memory-hierarchy modes --working_set and --mlp (declared in hier.h)
 * See README.md for the method.
 */
#ifndef LOADLAT_TOOL_H
#define LOADLAT_TOOL_H

#include "loadlat.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>

/* MODE_IDLE, MODE_LOADED and MODE_PEAK are also the worker setups the other sections run on: a latency
 * thread alone, a latency thread (or none, -T) with load threads, load threads with every buffer. */
enum mode { MODE_NONE = 0, MODE_IDLE, MODE_LOADED, MODE_PEAK, MODE_LATMAT, MODE_BWMAT, MODE_MAXBW, MODE_C2C,
            MODE_DEFAULT, MODE_WSET, MODE_MLP };  /* MODE_WSET, MODE_MLP: the memory hierarchy (hier.h) */

extern const char *const MODE_NAMES[];   /* by enum mode: "idle_latency" ... "default" (options.c) */

/* The sections of the default run, in their order (MLC's, with max bandwidth beside peak injection). */
#define N_DEFAULT_SECTIONS 6
extern const enum mode DEFAULT_SECTIONS[N_DEFAULT_SECTIONS];

#define DEFAULT_LAT_BYTES ((size_t)1 << 30)       /* latency chain: 1 GiB, far beyond any LLC */
#define DEFAULT_LOAD_BYTES ((size_t)100000 * 1024) /* per load buffer: MLC's default -b100000 (KiB) */
#define CHAIN_SLOT cache_line_bytes()               /* bytes per latency-chain slot: a cache line (cpus.c) */
#define MAX_DELAYS 4096
#define MAX_CHAINS 64                               /* --chains: most independent chains per thread (hier.h) */

struct opts {
    enum mode mode;
    size_t lat_bytes, load_bytes;
    int b_given;
    size_t access;
    uint64_t delays[MAX_DELAYS];
    int ndelays;
    int d_given, g_given;
    const char *delay_file;
    double seconds;
    int t_given;
    int lat_cpu, c_given;
    int load_cpus[LOADLAT_MAX_CPUS];
    int nload, k_given;
    const struct traffic *tr;
    int tr_given;
    const char *tr_flag;           /* the option that chose tr: "-R", "-W<n>" or "--read_share=P" */
    int random, huge, no_lat;
    int pacing_exp, pacing_given;  /* --pacing=exp: exponential delays of mean -d (default fixed) */
    int nwin;                      /* --windows: sub-windows per point (default 5) */
    long long sample_delays;       /* --sample-delays=N: print N exponential draws of mean -d and exit */
    const char *json;
    /* --working_set and --mlp (hier.h; 0 = not given, the mode's default) */
    size_t max_size;               /* --max-size: largest working set, bytes (default 4 x the LLC) */
    int per_octave;                /* --per-octave: sizes per doubling (default 4) */
    size_t stride;                 /* --stride: sequential chain with this stride, bytes (0: random chain) */
    uint64_t accesses;             /* --accesses: dependent loads per size and pass (0: -t time budget) */
    int batch;                     /* --batch: dependent loads per timed batch (default 256) */
    int chains[MAX_CHAINS];        /* --chains: independent chains per thread, in order */
    int nchains;
    int mlp_all;                   /* --mlp-all-cores: each chain count also on every CPU at once */
};

/* What one measuring thread got in one point. */
struct thread_stat {
    int cpu, is_lat;
    double share;                  /* CPU time / window time */
    double steal_pct;              /* steal time of its CPU, % of the window (NAN: /proc/stat unreadable) */
    double arrival_cv, arrival_mean_ns;  /* load threads: sampled time between request-group starts */
    uint64_t arrival_samples;            /* intervals in arrival_cv */
    uint64_t arrival_period;             /* one interval sampled per this many blocks of 16 groups */
    uint64_t arrival_interruptions;      /* intervals > 20 x the median, left out (descheduled, interrupts) */
    double arrival_cv_all;               /* CV over every sampled interval, interruptions included */
};

/* One sub-window of a point (all threads). */
struct win_stat {
    double window_s;               /* mean over threads */
    double latency_ns;             /* NAN when not measured */
    double bw_MBps;
    double share_min;              /* min over measuring threads of CPU time / sub-window time */
};

/* A point: one traffic pattern at one delay. */
struct result {
    const struct traffic *tr;
    uint64_t delay;
    double delay_mean;             /* mean delay-loop iterations the load threads drew (exp) or ran (fixed) */
    int ok;
    double latency_ns;
    double bw_MBps, read_MBps, write_MBps;
    double window_s;
    double lat_share, load_share;  /* CPU time / window time of the latency thread, min over load threads */
    double steal_pct;              /* max over the measuring CPUs, % of the window */
    double arrival_cv;             /* median over load threads */
    uint64_t loads;
    struct thread_stat *ts;        /* one per thread (nts) */
    int nts;
    struct win_stat *ws;           /* one per sub-window (nws) */
    int nws;
    char why[200];
};

/* The points of a run: planned, done (nres, in order), and how the run ended. */
struct run {
    struct result *res;
    int planned, nres;
    int interrupted, any_failed;
};

/* Calibrations made before the threads start. */
struct calib {
    double delay_ns;
    uint64_t delay_iters;
    int cpu;
    double core_ghz, tsc_ghz, cpufreq_max_ghz;  /* cpufreq_max_ghz 0 = not readable */
    const char *core_check;                     /* "ok" or why the core clock is implausible */
    double exp_cost_ns;                         /* extra ns per request group of an exponential draw */
    double tick_ns, tick_ghz;                   /* cost of one arrival stamp; stamp ticks per ns */
};

/* Transparent huge page settings ("unavailable" when not readable). */
struct thp {
    char enabled[64], defrag[64];
};

struct ctx;

struct worker {
    struct ctx *ctx;
    int cpu;
    int is_lat;
    int index;
    pthread_t th;
    struct buffer rd, rd2, wr, lat;
    struct load_args la;
    struct chase_args ca;
    void **chain;
    int failed;
    char err[300];
    const char *placement;         /* NUMA cell: "mbind" or "first-touch" (its buffers); NULL: not placed */
    char mbind_err[80];            /* why mbind failed (placement first-touch) */
    double on_node;                /* least fraction of its buffers' sampled pages on the target node */
};

struct ctx {
    const struct opts *o;
    pthread_barrier_t bar;
    _Atomic int phase;
    _Atomic int subwin;            /* sub-window index while measuring (main thread writes it) */
    _Atomic int quit;
    int need_rd, need_rd2, need_wr;
    const struct traffic *cur_tr;  /* written by main between points only (barriers order it) */
    uint64_t cur_delay;
    double cur_delay_mean;         /* mean of the exponential delays (--pacing=exp) */
    struct worker *w;
    int nw;
    double exp_cost_units;         /* calibrated cost of an exponential draw, delay-loop units */
    double cal_tick_ghz;           /* arrival stamp ticks per ns */
    double cal_tick_ns;            /* cost of one arrival stamp, ns */
    int mem_node;                  /* NUMA node every buffer is placed on (mbind), -1: local first touch */
    int touch_cpu;                 /* CPU on mem_node for the first touch when mbind fails, -1: none */
};

/* Set by SIGINT / SIGTERM (run.c): a signal ends the run after the current point. */
extern volatile sig_atomic_t g_signal;

/* A latency thread runs for --idle_latency and for --loaded_latency without -T. */
static inline int uses_lat_thread(const struct opts *o)
{
    return o->mode == MODE_IDLE || (o->mode == MODE_LOADED && !o->no_lat);
}

static inline size_t lat_len(const struct opts *o) { return o->lat_bytes / CHAIN_SLOT * CHAIN_SLOT; }  /* bytes chained */
static inline size_t load_len(const struct opts *o) { return o->load_bytes / o->access * o->access; }  /* per load buffer */

/* One section's JSON, built while it runs: each group of threads (one for most sections, one per cell of a
 * NUMA matrix) writes its points and buffers here before its buffers are freed; write_section writes the
 * document. The document of --idle_latency, --loaded_latency and --peak_injection_bandwidth is the one
 * loadlat always wrote; the other sections add their own objects after "points" (matrix, max_bandwidth,
 * c2c, numa). */
struct jsec {
    enum mode mode;
    const struct opts *o;          /* the user's options */
    FILE *pf, *bf, *xf;            /* points, buffers, extra objects (open_memstream) */
    char *pts, *bufs, *xtra;
    size_t pts_len, bufs_len, xtra_len;
    int npts, nbufs, planned, interrupted;
    long long tot_bytes, huge_bytes;
    int *load_cpus;                /* load threads' CPUs over the section's groups, in order of first use */
    int nload;
    int lat_cpu;                   /* the first latency thread's CPU, -1: none */
    const struct traffic *tr;      /* the section's one traffic (loaded latency, bandwidth matrix) or NULL */
    size_t lat_bytes;              /* latency buffer bytes, 0 without a latency thread */
};

/* What every section needs: the options, the allowed CPUs, the NUMA nodes, calibrations, THP settings, and
 * how the run went. */
struct env {
    const struct opts *o;
    int argc;
    char **argv;
    int *allowed;
    int nallowed;
    char allowed_txt[512];
    struct numa_topo topo;
    struct calib cal;
    struct thp thp;
    int any_failed;                /* a point, cell or c2c value failed */
    int interrupted;               /* a signal ended the run */
};

/* Errors (options.c): die_usage = "loadlat: ... (see loadlat --help)", exit 2; die = "loadlat: ...", exit 1. */
void die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Options and CPUs (options.c). */
void parse_args(int argc, char **argv, struct opts *o);
size_t parse_kib(const char *opt, const char *s);  /* -b syntax: KiB, or a k/m/g suffix; usage error if bad */
void resolve_cpus(struct opts *o, struct env *e);
int in_node(const struct numa_topo *t, int idx, int cpu);
int node_first_allowed(const struct env *e, int idx);
int section_loads(const struct env *e, int skip, int node_idx, int *out);

/* Threads, points and groups of threads (run.c). */
void install_signals(void);
long long mem_available_bytes(void);  /* MemAvailable of /proc/meminfo in bytes, -1 unknown */
void plan_buffers(struct ctx *c);
void check_memory(const struct ctx *c);
void calibrate(struct calib *cal, const struct opts *o, int cpu);
void start_workers(struct ctx *c);
int workers_ready(struct ctx *c);
void stop_workers(struct ctx *c);
void free_workers(struct ctx *c);
double warmup_s(const struct opts *o);
int run_point(struct ctx *c, const struct traffic *tr, uint64_t delay, struct result *r);
void run_alloc(struct run *run, int planned);
void run_free(struct run *run);
struct opts *group_opts(const struct env *e, enum mode wmode, int lat_cpu, const int *loads, int nload,
                        const struct traffic *tr, int no_lat);
int group_start(struct ctx *c, const struct env *e, const struct opts *g, int mem_node, int touch_cpu);
int loaded_home_node(const struct env *e, const struct opts *g, int *touch_cpu);
void group_end(struct ctx *c);
void group_placement(const struct ctx *c, const char **placement, double *on_node, const char **mbind_err);

/* Text and JSON output (output.c). */
#define PART_GLOBAL 1  /* ISA and allowed CPUs, calibrations, clocks, timing */
#define PART_GROUP 2   /* the threads of one group, their buffers and huge pages, traffic, pacing */
#define PART_BLANK 4   /* a blank line after them */
void print_header(const struct opts *o, int argc, char **argv);
void print_setup(const struct opts *o, const struct ctx *c, const struct calib *cal, const char *allowed_txt,
                 const struct thp *thp, int parts);
void print_numa(const struct opts *o, const struct numa_topo *t);
void print_row(const struct result *r, int has_lat);
void print_interrupted(int done, int planned);
void read_thp(struct thp *t);
void json_calibration(FILE *f, const struct calib *cal);
void json_command(FILE *f, int argc, char **argv);
void json_str(FILE *f, const char *s);
void json_num(FILE *f, double v);
void json_numa(FILE *f, const struct numa_topo *t);
void json_cell(FILE *f, int first, int cpu_node, int mem_node, const char *cpus, const char *status,
               double value, const char *placement, double on_node, const char *mbind_err, const char *why);
void jsec_open(struct jsec *s, enum mode mode, const struct opts *o);
void jsec_free(struct jsec *s);
void jsec_workers(struct jsec *s, const struct ctx *c);
void jsec_points(struct jsec *s, const struct ctx *c, const struct calib *cal, const struct run *run,
                 int from, int to, const char *extra);
void write_json(const struct opts *o, int argc, char **argv, struct jsec *secs, int nsec, int interrupted,
                const struct calib *cal, const struct thp *thp, const struct numa_topo *topo);

/* Sections (sections.c, numa_sections.c); each returns 1 when a signal interrupted the run. */
void run_points(struct ctx *c, const struct calib *cal, struct run *run);
int run_section(struct env *e, enum mode m, struct jsec *js);
int sec_matrix(struct env *e, struct jsec *js, int bandwidth);
int sec_c2c(struct env *e, struct jsec *js);

#endif
