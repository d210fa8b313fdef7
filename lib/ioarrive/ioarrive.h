/* ioarrive - memstor's arrival-driven (open-loop) I/O generator.
 *
 * ioarrive.h: what the translation units share.
 *   main.c     the steps of a run: options, target, engine, the run (real time or virtual), checks, JSON
 *   options.c  the command line (parse_args, usage), usage errors (one line, exit 2)
 *   target.c   the target named twice: an existing file or an unmounted block device, opened O_DIRECT
 *   arrivals.c random numbers, the arrival processes (poisson, constant, trace), offsets, trace files,
 *              the simulated device's service times
 *   hist.c     log-linear histograms (128 linear sub-buckets per power of two: <= 0.4 % relative error)
 *   record.c   what happens to a finished I/O: its three times into the histograms, the per-second series
 *              and the arrival samples the checks test
 *   checks.c   the self-checks (rate, arrival process, trend, independence, lag, overload)
 *   engines.c  io_uring and libaio (raw system calls, no library needed), the pool of synchronous threads
 *   sim.c      the simulated device: c FIFO servers shared by reads and writes (a service time per
 *              direction), in real time (a device thread) or in virtual time
 *   run.c      the submitter (absolute intended times, sleep then spin), the reaper, the drain
 *   output.c   the JSON document
 * See README.md for the options, the method and the JSON schema.
 */
#ifndef IOARRIVE_H
#define IOARRIVE_H

#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/uio.h>

#define IOARRIVE_VERSION "0.1"

enum { DIR_READ = 0, DIR_WRITE = 1, NDIR = 2 };
extern const char *const DIR_NAMES[NDIR];

enum proc_kind { PROC_NONE = 0, PROC_POISSON, PROC_CONSTANT, PROC_TRACE };
extern const char *const PROC_NAMES[];
enum check_as { CHECK_ASKED = 0, CHECK_POISSON, CHECK_CONSTANT, CHECK_NONE };
enum engine_kind { ENG_AUTO = 0, ENG_URING, ENG_AIO, ENG_SYNC, ENG_SIM };
extern const char *const ENGINE_NAMES[];
enum svc_kind { SVC_DET = 0, SVC_EXP, SVC_HIST };

#define DEFAULT_MAX_OUTSTANDING 4096u
#define DEFAULT_CHECK_SAMPLE 5000
#define RATE_TOL_PCT 5.0        /* achieved vs offered, two-sided */
#define CONSTANT_CV_MAX 0.1     /* a constant process: CV of the gaps at most this */
#define ARRIVAL_ALPHA 0.01      /* chance that a run's Poisson tests fail a correct generator (Bonferroni) */
#define FINE_BIN_NS 10000LL     /* the submissions' fine count bins (at least; at most FINE_BINS_MAX of them) */
#define FINE_BINS_MAX 4000000
#define WINDOW_LAGS 20          /* count windows of the submitted tests: this many p99 lags wide */

struct trace {                  /* the lines of one direction's op, times from 0 */
    double *t_s;
    uint64_t *off;
    uint32_t *len;
    size_t n;
    double rate_iops;           /* n / duration (duration: last - first + one mean gap) */
};

struct dir_job {
    int active;
    enum proc_kind proc;
    double rate_iops;           /* offered */
    int rate_given;
    struct trace tr;
};

struct svc_cfg {                /* one class's service time */
    int given;
    enum svc_kind kind;
    double mean_ns;             /* det and exp: the service time; hist: the histogram's mean */
    double m2_ns2;              /* E[S^2] */
    const char *hist_path;
    double *hv_ns, *hcum;       /* hist: values and cumulative weights (last = 1) */
    size_t hn;
};

struct sim_cfg {
    int on;
    int servers;
    int queue;                  /* real time: a submission waits while this many I/Os are in the device; 0 none */
    struct svc_cfg cls[NDIR];   /* the service time of each direction's I/Os (service= sets both) */
};

struct job {
    const char *target, *confirm;
    uint64_t bs;
    int random;
    uint64_t span;              /* 0: the whole target */
    double runtime_s, ramp_s, drain_s;
    struct dir_job dir[NDIR];
    const char *trace_path;     /* the file a trace:FILE process names (one for both directions) */
    int direct;
    enum engine_kind engine;
    int threads;                /* sync pool */
    uint32_t max_outstanding;
    uint64_t seed;
    double spin_us, lag_fraction, lag_floor_us, ks_tol_us;
    double move_us;             /* how far a submission may move for the submitted tests; < 0: its p99 lag */
    double pause_probe_s;       /* seconds of the machine-pause probe before a real-time run (0: none) */
    int check_sample;
    int rt_priority;            /* SCHED_FIFO priority of the submitter and reaper (0: off) */
    enum check_as check_as;
    int virtual_time;
    struct sim_cfg sim;
    const char *json_path;      /* NULL: stdout */
    int argc;
    char **argv;
};

/* ------------------------------------------------------------------ options.c */
void die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void parse_args(struct job *j, int argc, char **argv);
double parse_size_or_die(const char *opt, const char *s);

/* ------------------------------------------------------------------ target.c */
struct target {
    int fd;
    int is_block;
    uint64_t size_bytes;
    unsigned lbs;               /* alignment asked of O_DIRECT offsets and sizes */
    unsigned queue_requests;    /* the block layer's request queue of the disk under it (nr_requests); 0 unknown */
    char queue_disk[32];        /* that disk's "MAJ:MIN" ("" unknown: no block device, e.g. tmpfs) */
};
void open_target(const struct job *j, struct target *t);

/* ------------------------------------------------------------------ arrivals.c */
struct rng { uint64_t s[4]; };
void rng_seed(struct rng *r, uint64_t seed, uint64_t stream);
uint64_t rng_next(struct rng *r);
double rng_unit(struct rng *r);           /* (0, 1] */

struct gen {                              /* one direction's arrival process */
    const struct dir_job *dj;
    struct rng arr, off;
    double t_ns;                          /* the next intended time, ns after the start */
    uint64_t n;                           /* arrivals generated */
    double phase;
    uint64_t seq_cursor, nblocks, bs;
    int random;
};
void gen_init(struct gen *g, const struct job *j, int d, uint64_t span);
void gen_advance(struct gen *g);          /* t_ns <- the next arrival */
void gen_io(struct gen *g, uint64_t *off, uint32_t *len);
void load_trace(struct job *j);
void load_sim_hist(struct svc_cfg *s);
double sim_service_ns(const struct svc_cfg *s, struct rng *r);
int svc_same(const struct svc_cfg *a, const struct svc_cfg *b);

/* ------------------------------------------------------------------ hist.c */
#define H_SUBBITS 7
#define H_SUB (1 << H_SUBBITS)
#define H_LINEAR (2 * H_SUB)
#define H_MAXEXP 47
#define H_N (H_LINEAR + (H_MAXEXP - H_SUBBITS) * H_SUB)
struct hist {
    uint64_t c[H_N];
    uint64_t n;
    double sum, sumsq;
    uint64_t min, max;
};
int h_index(uint64_t v);
uint64_t h_lower(int i);
uint64_t h_upper(int i);                  /* exclusive */
void hist_add(struct hist *h, int64_t v);
double hist_pct(const struct hist *h, double p);
double hist_pct32(const uint32_t *c, uint64_t n, double p);

/* ------------------------------------------------------------------ record.c */
struct io_slot {
    int64_t intended, submit, done;
    uint64_t off;
    uint32_t len;
    uint32_t id;
    int64_t idx;                          /* index among the measured arrivals of its direction, or -1 */
    int dir;
    int res;                              /* bytes, or -errno */
    struct iovec iov;
    void *engine_data;
};

struct sample { int64_t ti[3], ts[3]; uint8_t have; };

struct dir_rec {
    struct hist resp, svc, lag;
    uint64_t issued;                      /* measured arrivals issued */
    uint64_t completed;                   /* measured arrivals completed */
    uint64_t window_done;                 /* completions (any) inside the window: the achieved rate */
    uint64_t bytes, errors, negative;
    int first_errno;
    uint64_t stride;                      /* the arrival sample: arrivals k*stride .. k*stride+2 */
    struct sample *samp;
    int nsamp;
    int nbins;                            /* trend bins over the window */
    uint64_t *bins_intended, *bins_submitted;
    int64_t fine_ns;                      /* submissions per fine bin of the window (the count tests) */
    int nfine;
    uint32_t *fine_submitted;
    int nsec;                             /* per-second series */
    uint32_t **sec_h;
    uint64_t *sec_n;
    double *sec_sum;
};

struct recorder {
    int64_t t0, t1;                       /* the measured window [t0, t1), ns */
    struct dir_rec d[NDIR];
};
void rec_init(struct recorder *r, const struct job *j, int64_t t0);
void rec_complete(struct recorder *r, const struct io_slot *s);
void rec_free(struct recorder *r);

/* ------------------------------------------------------------------ checks.c */
#define MAX_CHECKS 64
struct check {
    const char *name;
    int dir;                              /* -1: the run */
    const char *source;                   /* "intended", "submitted" or NULL */
    int passed;
    double value, low, high;              /* NAN: no bound */
    char detail[400];
};
struct run_facts {
    int overloaded;
    double overload_at_s;
    uint64_t unfinished;
    int interrupted;
    double measured_s;
    double submit_call_ns;      /* the engine's submit calls: their summed duration and count (real time) */
    uint64_t submit_calls;
    double blocked_ns;          /* the submit calls of >= SUBMIT_BLOCKED_NS made in the measured window [t0, t1):
                                 * their summed duration (ns), a share of runtime_s */
    uint64_t blocked_calls;     /* their number */
};
/* A submit call this long (ns) blocked: a usual one takes 2-40 us on a VM (p50, p99 of libaio at 68-110k IOPS on
 * the 2-vCPU VM, 2026-11-28); one of 100 us or more waited for a request of the block layer's full queue (the
 * disk's nr_requests), or lost its CPU. */
#define SUBMIT_BLOCKED_NS 100000LL
/* Submit calls blocked this share of the run (%) or more: as many arrivals as the p99 lag's 1 % waited behind them
 * (at rate X, blocked time b delays about X b arrivals); the lag check's sentence then names them. */
#define SUBMIT_BLOCKED_PCT 1.0
struct checks {
    struct check c[MAX_CHECKS];
    int n;
    int open_loop, generator_bound;
    double lag_bound_ns[NDIR];
    double alpha;               /* each Poisson test's level: ARRIVAL_ALPHA / the run's number of them */
};
void run_checks(const struct job *j, const struct recorder *r, const struct run_facts *f, struct checks *out);
double ks_exponential(double *x, int n, double rate_per_ns, double tol_ns);
double normal_quantile(double p);
double t_quantile(double z, int df);
double ks_critical(double alpha);

/* ------------------------------------------------------------------ engines.c, sim.c, run.c */
struct ctx;
struct engine {
    enum engine_kind kind;
    int (*init)(struct ctx *c, char *why, size_t whylen);
    int (*submit)(struct ctx *c, struct io_slot *s);       /* 0 or -errno */
    int (*reap)(struct ctx *c, struct io_slot **out, int max, int timeout_ms);  /* async engines */
    void (*wake)(struct ctx *c);                          /* make a blocked reap return */
    void (*fini)(struct ctx *c);
    int self_reaping;                                    /* the sync pool: workers record themselves */
    /* submit n I/Os with one system call (0 or -errno); NULL: submit() each. The submitter hands over every
       arrival already due at once (run.c), so a submission that costs more than the gap between arrivals
       does not push every later arrival back by its cost. */
    int (*submit_many)(struct ctx *c, struct io_slot **s, int n);
};
/* Most arrivals handed to the engine in one call (<= the io_uring SQ ring's 64 entries). */
#define SUBMIT_BATCH_MAX 32
extern const struct engine ENGINE_URING, ENGINE_AIO, ENGINE_SYNC, ENGINE_SIM;

struct cpu_use { double user_s, sys_s, wall_s; };

/* ------------------------------------------------------------------ pauses.c */
#define PAUSE_MIN_NS 50000      /* a gap between two clock reads of a spinning thread counted as a pause */
struct pause_probe {
    double seconds;             /* how long each CPU's thread spun */
    int cpus;                   /* threads that ran (one per CPU of the affinity mask); 0: no probe */
    uint64_t pauses, over_1ms;  /* gaps >= PAUSE_MIN_NS, and of them >= 1 ms, over all CPUs */
    int64_t max_ns, paused_ns;  /* the longest gap; the gaps' sum over all CPUs */
};
void probe_pauses(double seconds, struct pause_probe *p);

struct ctx {
    const struct job *j;
    struct target tgt;
    const struct engine *eng;
    char engine_why[1300];
    struct io_slot *slots;
    uint32_t nslots;
    void **bufs;
    int nbufs;
    uint32_t *ring;                        /* the free slots: filled by the reaper, emptied by the submitter */
    uint32_t ring_mask;
    uint64_t ring_head, ring_tail;         /* atomics */
    struct recorder rec;
    pthread_mutex_t rec_mu;                /* the sync pool's workers and the simulated device */
    int submit_done, stop_reaping;         /* atomics */
    void *eng_state;
    struct cpu_use cpu_submitter, cpu_reaper;
    struct run_facts facts;
    struct hist wake_delay;                /* how late each of the submitter's sleeps woke (ns) */
    struct hist submit_call;               /* how long each submit call took (ns): a long one blocked in the kernel */
    uint32_t peak_outstanding;             /* the most I/Os in flight right after a submit call */
    int rt_granted;                        /* SCHED_FIFO set on the submitter (and the reaper) */
    char rt_note[160];
    struct pause_probe pauses;             /* the machine's pauses before the run (--pause-probe) */
};

int64_t now_ns(void);
int engine_select(struct ctx *c);          /* --engine auto: the first that works; fills engine_why */
void free_push(struct ctx *c, uint32_t id);
void finish_io(struct ctx *c, struct io_slot *s);   /* stamp done (if 0), record, free the slot */
void run_real(struct ctx *c);
void run_virtual(struct ctx *c);
void thread_cpu(struct cpu_use *u, int64_t wall_ns);

/* ------------------------------------------------------------------ output.c */
void write_json(FILE *f, const struct ctx *c, const struct checks *ck, const struct cpu_use *proc);

#endif
