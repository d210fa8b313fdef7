/* loadlat - an open, MLC-compatible loaded-latency tool (memstor).
 *
 * main.c: options, thread orchestration (barrier-synchronised points: warm-up, measured window, stop),
 * MLC v3.10-style text output and the JSON sidecar. See README.md for the method.
 */
#include "loadlat.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum mode { MODE_NONE = 0, MODE_IDLE, MODE_LOADED, MODE_PEAK };

static const char *const MODE_NAMES[] = {"", "idle_latency", "loaded_latency", "peak_injection_bandwidth"};

/* MLC's default inject delays for --loaded_latency. */
static const uint64_t MLC_DELAYS[] = {0,   2,   8,   15,   50,   100,  200,  300,  400, 500,
                                      700, 1000, 1300, 1700, 2500, 3500, 5000, 9000, 20000};

#define DEFAULT_LAT_BYTES ((size_t)1 << 30)       /* latency chain: 1 GiB, far beyond any LLC */
#define DEFAULT_LOAD_BYTES ((size_t)100000 * 1024) /* per load buffer: MLC's default -b100000 (KiB) */
#define CHAIN_SLOT 64                               /* bytes per latency-chain slot (a cache line) */
#define MAX_DELAYS 4096

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
    int random, huge, no_lat;
    int pacing_exp, pacing_given;  /* --pacing=exp: exponential delays of mean -d (default fixed) */
    int nwin;                      /* --windows: sub-windows per point (default 5) */
    long long sample_delays;       /* --sample-delays=N: print N exponential draws of mean -d and exit */
    const char *json;
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
};

static volatile sig_atomic_t g_signal;

static void on_signal(int sig) { g_signal = sig; }

/* A latency thread runs for --idle_latency and for --loaded_latency without -T. */
static int uses_lat_thread(const struct opts *o)
{
    return o->mode == MODE_IDLE || (o->mode == MODE_LOADED && !o->no_lat);
}

static size_t lat_len(const struct opts *o) { return o->lat_bytes / CHAIN_SLOT * CHAIN_SLOT; }  /* bytes chained */
static size_t load_len(const struct opts *o) { return o->load_bytes / o->access * o->access; }  /* per load buffer */

static void die_usage(const char *fmt, ...)
{
    va_list ap;
    fputs("loadlat: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(" (see loadlat --help)\n", stderr);
    exit(2);
}

static void die(const char *fmt, ...)
{
    va_list ap;
    fputs("loadlat: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void usage(FILE *f)
{
    fprintf(f,
        "loadlat (Memory Latency Checker-compatible) - v" LOADLAT_VERSION "\n"
        "Open loaded-latency tool with Intel MLC's command-line syntax and text output (memstor).\n"
        "\n"
        "USAGE: loadlat --idle_latency | --loaded_latency | --peak_injection_bandwidth [options]\n"
        "Values are attached to the option letter, as in MLC (-b200m, -l256, -k1-3,5).\n"
        "\n"
        "  --idle_latency             latency of dependent loads on an idle system\n"
        "  --loaded_latency           latency while load threads inject traffic, for each inject delay\n"
        "  --peak_injection_bandwidth bandwidth of all load threads at delay 0 for MLC's five mixes\n"
        "  -b<n>[k|m|g]  buffer size per thread in KiB (suffix k/m/g = KiB/MiB/GiB); sets both the\n"
        "                latency buffer (default 1g) and each load buffer (default 100000 KiB)\n"
        "  -l<n>         bytes per load request (access size and stride), multiple of 64 (default 64)\n"
        "  -d<n>         one inject delay (delay-loop iterations after each request group)\n"
        "  -g<file>      file with inject delays (whitespace separated; '#' starts a comment)\n"
        "                default: MLC's 19 delays 0 2 8 15 50 100 ... 9000 20000\n"
        "  -t<s>         seconds measured per point (default 2; decimals allowed), after a warm-up\n"
        "  -c<n>         CPU of the latency thread (default: the first allowed CPU)\n"
        "  -k<list>      CPUs of the load threads, e.g. -k1-3,5 (default: all allowed CPUs except -c)\n"
        "  -R            read-only traffic (default)\n"
        "  -W<n>         traffic: 2 = 2:1 reads:writes, 3 = 3:1, 4 = 3:2, 5 = 1:1, 6 = non-temporal\n"
        "                writes only, 7 = 2:1 NT, 8 = 1:1 NT, 9 = 3:1 NT, 10 = stream-triad like\n"
        "  -r  (or -U)   random order of load requests (default sequential); the latency chain is\n"
        "                always random\n"
        "  -L            huge pages via madvise(MADV_HUGEPAGE); the real use is reported from smaps\n"
        "  -T            load threads only, no latency thread (latency column prints 0.00)\n"
        "  -e            accepted for MLC compatibility (loadlat never changes prefetchers)\n"
        "  --pacing=fixed|exp  delay after each request group: fixed (default, as MLC) or drawn from an\n"
        "                exponential distribution with the same mean (Poisson-like request arrivals)\n"
        "  --windows=N   sub-windows per point for the stability figures in the JSON (default 5, 1-100)\n"
        "  --sample-delays=N  with -d<mean>: print N exponential delays (iterations) and exit (a test)\n"
        "  --json=FILE   also write a JSON sidecar (or --json FILE)\n"
        "  -h, --help    this text\n");
}

/* ------------------------------------------------------------------ option parsing */

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

static size_t parse_kib(const char *opt, const char *s)
{
    char *end;
    if (*s < '0' || *s > '9')
        die_usage("%s%s: expected a size in KiB with an optional k/m/g suffix, e.g. -b200m", opt, s);
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned long long mult = 1024;
    if (*end == 'k' || *end == 'K')
        end++;
    else if (*end == 'm' || *end == 'M')
        mult = 1024ull * 1024, end++;
    else if (*end == 'g' || *end == 'G')
        mult = 1024ull * 1024 * 1024, end++;
    if (errno || *end || v == 0)
        die_usage("%s%s: expected a size in KiB with an optional k/m/g suffix, e.g. -b200m", opt, s);
    if (v > (1ull << 40) / mult)
        die_usage("%s: size too large (limit 1 TiB)", opt);
    return (size_t)(v * mult);
}

static void read_delay_file(struct opts *o, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        die_usage("-g%s: cannot open delay file: %s", path, strerror(errno));
    char line[1024];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        for (char *tok = strtok(line, " \t\r\n,"); tok; tok = strtok(NULL, " \t\r\n,")) {
            uint64_t v;
            if (parse_u64(tok, &v) != 0 || v > 1000000000ull)
                die_usage("-g%s line %d: '%s' is not a delay (a whole number 0..1000000000)", path, lineno,
                          tok);
            if (o->ndelays >= MAX_DELAYS)
                die_usage("-g%s: more than %d delays", path, MAX_DELAYS);
            o->delays[o->ndelays++] = v;
        }
    }
    if (ferror(f))
        die_usage("-g%s: read error: %s", path, strerror(errno));
    fclose(f);
    if (o->ndelays == 0)
        die_usage("-g%s: the delay file holds no delays", path);
}

static void set_mode(struct opts *o, enum mode m)
{
    if (o->mode != MODE_NONE && o->mode != m)
        die_usage("give only one mode (--%s and --%s both given)", MODE_NAMES[o->mode], MODE_NAMES[m]);
    o->mode = m;
}

static void parse_args(int argc, char **argv, struct opts *o)
{
    memset(o, 0, sizeof *o);
    o->lat_bytes = DEFAULT_LAT_BYTES;
    o->load_bytes = DEFAULT_LOAD_BYTES;
    o->access = 64;
    o->seconds = 2.0;
    o->nwin = 5;
    o->tr = traffic_lookup("R");
    char err[200];

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--idle_latency") == 0)
            set_mode(o, MODE_IDLE);
        else if (strcmp(a, "--loaded_latency") == 0)
            set_mode(o, MODE_LOADED);
        else if (strcmp(a, "--peak_injection_bandwidth") == 0)
            set_mode(o, MODE_PEAK);
        else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if (strncmp(a, "--pacing=", 9) == 0 || strcmp(a, "--pacing") == 0) {
            const char *v = a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : "");
            if (strcmp(v, "fixed") == 0)
                o->pacing_exp = 0;
            else if (strcmp(v, "exp") == 0)
                o->pacing_exp = 1;
            else
                die_usage("--pacing=%s: use --pacing=fixed (MLC's fixed delay loop, the default) or --pacing=exp "
                          "(exponential delays with the same mean)", v);
            o->pacing_given = 1;
        } else if (strncmp(a, "--windows=", 10) == 0) {
            uint64_t x;
            if (parse_u64(a + 10, &x) != 0 || x < 1 || x > LOADLAT_MAX_WINDOWS)
                die_usage("--windows=%s: sub-windows per point must be a whole number 1..%d (default 5)", a + 10,
                          LOADLAT_MAX_WINDOWS);
            o->nwin = (int)x;
        } else if (strncmp(a, "--sample-delays=", 16) == 0) {
            uint64_t x;
            if (parse_u64(a + 16, &x) != 0 || x < 1 || x > 100000000ull)
                die_usage("--sample-delays=%s: give a number of draws 1..100000000, e.g. "
                          "--sample-delays=10000 -d1000", a + 16);
            o->sample_delays = (long long)x;
        } else if (strncmp(a, "--json=", 7) == 0) {
            o->json = a + 7;
            if (!*o->json)
                die_usage("--json= needs a file name");
        } else if (strcmp(a, "--json") == 0) {
            if (i + 1 >= argc)
                die_usage("--json needs a file name (--json=FILE)");
            o->json = argv[++i];
        } else if (a[0] == '-' && a[1] && a[1] != '-') {
            const char *v = a + 2;
            switch (a[1]) {
            case 'b':
                o->lat_bytes = o->load_bytes = parse_kib("-b", v);
                o->b_given = 1;
                break;
            case 'l': {
                uint64_t x;
                if (parse_u64(v, &x) != 0 || x < 64 || x % 64 || x > (1u << 20))
                    die_usage("-l%s: access size must be a multiple of 64 bytes between 64 and 1048576", v);
                o->access = (size_t)x;
                break;
            }
            case 'd': {
                uint64_t x;
                if (parse_u64(v, &x) != 0 || x > 1000000000ull)
                    die_usage("-d%s: delay must be a whole number 0..1000000000", v);
                if (o->d_given)
                    die_usage("-d given twice (use -g<file> for several delays)");
                o->delays[0] = x;
                o->ndelays = 1;
                o->d_given = 1;
                break;
            }
            case 'g':
                if (!*v)
                    die_usage("-g needs a file name attached, e.g. -gdelays.txt");
                o->delay_file = v;
                o->g_given = 1;
                break;
            case 't': {
                char *end;
                errno = 0;
                double t = strtod(v, &end);
                if (!*v || *end || errno || !(t > 0) || t > 86400)
                    die_usage("-t%s: seconds per point must be a number > 0 (e.g. -t2 or -t0.5)", v);
                o->seconds = t;
                o->t_given = 1;
                break;
            }
            case 'c': {
                uint64_t x;
                if (parse_u64(v, &x) != 0 || x >= CPU_SETSIZE)
                    die_usage("-c%s: expected a CPU number, e.g. -c0", v);
                o->lat_cpu = (int)x;
                o->c_given = 1;
                break;
            }
            case 'k': {
                int n = cpu_list_parse(v, o->load_cpus, LOADLAT_MAX_CPUS, err, sizeof err);
                if (n < 0)
                    die_usage("-k%s: %s", v, err);
                o->nload = n;
                o->k_given = 1;
                break;
            }
            case 'R':
                if (*v)
                    die_usage("unknown option '%s'", a);
                if (o->tr_given && strcmp(o->tr->code, "R") != 0)
                    die_usage("-R and -W%s both given: choose one traffic type", o->tr->code + 1);
                o->tr = traffic_lookup("R");
                o->tr_given = 1;
                break;
            case 'W': {
                char code[16];
                snprintf(code, sizeof code, "W%s", v);
                const struct traffic *t = strlen(v) < 4 ? traffic_lookup(code) : NULL;
                if (!t)
                    die_usage("unknown traffic code '-W%s' (use -R or -W2, -W3, -W4, -W5, -W6, -W7, -W8, "
                              "-W9, -W10)", v);
                if (o->tr_given && o->tr != t)
                    die_usage("-%s and -%s both given: choose one traffic type",
                              strcmp(o->tr->code, "R") == 0 ? "R" : o->tr->code, code);
                o->tr = t;
                o->tr_given = 1;
                break;
            }
            case 'r':
            case 'U':
            case 'L':
            case 'T':
            case 'e':
                if (*v)
                    die_usage("unknown option '%s'", a);
                if (a[1] == 'r' || a[1] == 'U')
                    o->random = 1;
                else if (a[1] == 'L')
                    o->huge = 1;
                else if (a[1] == 'T')
                    o->no_lat = 1;
                break;
            default:
                die_usage("unknown option '%s'", a);
            }
        } else {
            die_usage("unknown option '%s'", a);
        }
    }

    if (o->sample_delays) {
        if (!o->d_given)
            die_usage("--sample-delays needs the mean as -d<iterations>, e.g. --sample-delays=10000 -d1000");
        return;
    }
    if (o->mode == MODE_NONE)
        die_usage("no mode given: use --idle_latency, --loaded_latency or --peak_injection_bandwidth");
    if (o->d_given && o->g_given)
        die_usage("-d and -g both given: use one of them");
    if (o->mode != MODE_LOADED) {
        const char *bad = o->d_given ? "-d" : o->g_given ? "-g" : o->no_lat ? "-T"
                          : o->pacing_given ? "--pacing" : NULL;
        if (!bad && o->mode == MODE_IDLE)
            bad = o->k_given ? "-k" : o->tr_given ? (strcmp(o->tr->code, "R") ? "-W" : "-R") : NULL;
        if (!bad && o->mode == MODE_PEAK)
            bad = o->c_given ? "-c" : o->tr_given ? (strcmp(o->tr->code, "R") ? "-W" : "-R") : NULL;
        if (bad)
            die_usage("%s does not apply to --%s", bad, MODE_NAMES[o->mode]);
    }
    if (o->no_lat && o->c_given)
        die_usage("-c and -T both given: -T runs no latency thread");
    if (o->g_given)
        read_delay_file(o, o->delay_file);
    if (o->mode == MODE_LOADED && o->ndelays == 0) {
        memcpy(o->delays, MLC_DELAYS, sizeof MLC_DELAYS);
        o->ndelays = (int)(sizeof MLC_DELAYS / sizeof MLC_DELAYS[0]);
    }
    if (o->load_bytes < o->access || o->load_bytes < 4096)
        die_usage("-b: buffer (%zu bytes) must hold at least one %zu-byte request and 4 KiB", o->load_bytes,
                  o->access);
    if (o->lat_bytes / CHAIN_SLOT >= UINT32_MAX)
        die_usage("-b: latency buffer too large (limit 256 GiB)");
}

/* ------------------------------------------------------------------ memory and THP */

static long long mem_available_bytes(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return -1;
    char line[256];
    long long kib = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lld kB", &kib) == 1)
            break;
    fclose(f);
    return kib < 0 ? -1 : kib * 1024;
}

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

/* ------------------------------------------------------------------ threads */

static int worker_init(struct worker *w)
{
    struct ctx *c = w->ctx;
    const struct opts *o = c->o;
    int e = pin_self(w->cpu);
    if (e) {
        snprintf(w->err, sizeof w->err, "cannot pin a thread to CPU %d: %s (choose CPUs with -c/-k)", w->cpu,
                 strerror(e));
        return -1;
    }
    char err[200];
    if (w->is_lat) {
        if (buffer_alloc(&w->lat, lat_len(o), o->huge, 0, err, sizeof err) != 0) {
            snprintf(w->err, sizeof w->err, "latency buffer on CPU %d: %s", w->cpu, err);
            return -1;
        }
        w->chain = chain_build(&w->lat, CHAIN_SLOT, 0x1234567ull + (uint64_t)w->cpu);
        if (!w->chain) {
            snprintf(w->err, sizeof w->err, "latency chain on CPU %d: out of memory (use a smaller -b)",
                     w->cpu);
            return -1;
        }
        w->lat.anon_huge_kib = smaps_anon_huge_kib(w->lat.p);
        return 0;
    }
    size_t len = load_len(o);
    struct {
        int need;
        struct buffer *b;
        unsigned char fill;
        const char *what;
    } want[3] = {{c->need_rd, &w->rd, 0x5a, "read"}, {c->need_rd2, &w->rd2, 0x3c, "second read"},
                 {c->need_wr, &w->wr, 0x11, "write"}};
    for (int i = 0; i < 3; i++) {
        if (!want[i].need)
            continue;
        /* non-zero fill writes every page: untouched anonymous memory would read the shared zero page */
        if (buffer_alloc(want[i].b, len, o->huge, want[i].fill, err, sizeof err) != 0) {
            snprintf(w->err, sizeof w->err, "%s buffer on CPU %d: %s", want[i].what, w->cpu, err);
            return -1;
        }
    }
    return 0;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct ctx *c = w->ctx;
    w->failed = worker_init(w) != 0;
    pthread_barrier_wait(&c->bar);  /* init done */
    for (;;) {
        pthread_barrier_wait(&c->bar);  /* point start */
        if (atomic_load(&c->quit))
            break;
        if (!w->failed) {
            if (w->is_lat) {
                memset(&w->ca, 0, sizeof w->ca);
                w->ca.start = w->chain;
                w->ca.phase = &c->phase;
                w->ca.subwin = &c->subwin;
                w->ca.nwin = c->o->nwin;
                chase_run(&w->ca);
                w->chain = w->ca.end;  /* continue where the chase stopped */
            } else {
                struct load_args *a = &w->la;
                memset(a, 0, sizeof *a);
                a->tr = c->cur_tr;
                a->rd = w->rd.p;
                a->rd2 = w->rd2.p;
                a->wr = w->wr.p;
                a->rd_len = w->rd.len;
                a->wr_len = w->wr.len;
                a->access = c->o->access;
                a->delay = c->cur_delay;
                a->pacing_exp = c->o->pacing_exp;
                a->delay_mean = c->cur_delay_mean;
                a->random = c->o->random;
                uint64_t s = (uint64_t)w->index;
                a->seed = rng_next(&s);  /* a well-mixed seed per thread: streams far apart */
                a->phase = &c->phase;
                a->subwin = &c->subwin;
                a->nwin = c->o->nwin;
                a->tick_ns = c->cal_tick_ns;
                load_run(a);
            }
        }
        pthread_barrier_wait(&c->bar);  /* point done */
    }
    return NULL;
}

/* Sleep up to s seconds; returns 1 when a signal asked to stop. */
static int sleep_interruptible(double s)
{
    double end = now_s() + s;
    for (;;) {
        if (g_signal)
            return 1;
        double left = end - now_s();
        if (left <= 0)
            return 0;
        sleep_s(left < 0.05 ? left : 0.05);
    }
}

static double warmup_s(const struct opts *o)
{
    double w = o->seconds / 4;
    return w > 0.5 ? 0.5 : (w < 0.05 ? 0.05 : w);
}

/* Steal time (USER_HZ ticks) of every CPU in /proc/stat: steal[cpu], -1 when not listed. Returns 0, or -1
 * when /proc/stat cannot be read. */
static int read_steal(long long *steal, int max)
{
    for (int i = 0; i < max; i++)
        steal[i] = -1;
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return -1;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        int cpu;
        long long v[8];
        if (strncmp(line, "cpu", 3) != 0 || line[3] < '0' || line[3] > '9')
            continue;
        if (sscanf(line, "cpu%d %lld %lld %lld %lld %lld %lld %lld %lld", &cpu, &v[0], &v[1], &v[2], &v[3], &v[4],
                   &v[5], &v[6], &v[7]) == 9 && cpu >= 0 && cpu < max)
            steal[cpu] = v[7];
    }
    fclose(f);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)  /* sorts v; NAN when n == 0 */
{
    if (n == 0)
        return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The mean of the delays the load threads run at `delay`: the delay itself (fixed pacing), or for exp
 * pacing the delay less what a draw costs (calibrate_exp_cost_ns), so both pacings space request groups
 * alike; never below 0. */
static double exp_mean_units(const struct ctx *c, uint64_t delay)
{
    if (!c->o->pacing_exp || delay == 0)
        return (double)delay;
    double m = (double)delay - c->exp_cost_units;
    return m > 0 ? m : 0.0;
}

/* CV of n, sum, sum of squares; NAN for fewer than 2 values. */
static double cv_of(double n, double sum, double sq, double *mean)
{
    *mean = n > 0 ? sum / n : NAN;
    if (n < 2 || !(*mean > 0))
        return NAN;
    double var = (sq - n * *mean * *mean) / (n - 1);
    return var > 0 ? sqrt(var) / *mean : 0.0;
}

/* arrival_cv of one load thread from its interval histogram: the median interval (the mean of the bin
 * holding it), then the moments of the bins whose mean is at most ARRIVAL_CUTOFF x the median. Longer
 * intervals are interruptions of the thread (descheduled, interrupts), not its pacing: under exponential
 * pacing an interval exceeds 20 x the median (13.9 x the mean) with probability 1e-6. */
#define ARRIVAL_CUTOFF 20.0
static void arrival_stats(const struct gap_hist *h, double ghz, struct thread_stat *t)
{
    double n = 0, sum = 0, sq = 0;
    for (int b = 0; b < GAP_BINS; b++) {
        n += (double)h->n[b];
        sum += h->sum[b];
        sq += h->sq[b];
    }
    double mean_all;
    t->arrival_cv_all = cv_of(n, sum, sq, &mean_all);
    if (n < 2)
        return;
    double half = n / 2, acc = 0, med = 0;
    for (int b = 0; b < GAP_BINS; b++) {
        acc += (double)h->n[b];
        if (h->n[b] && acc >= half) {
            med = h->sum[b] / (double)h->n[b];
            break;
        }
    }
    double kn = 0, ksum = 0, ksq = 0;
    uint64_t out = 0;
    for (int b = 0; b < GAP_BINS; b++) {
        if (!h->n[b])
            continue;
        if (h->sum[b] / (double)h->n[b] <= ARRIVAL_CUTOFF * med) {
            kn += (double)h->n[b];
            ksum += h->sum[b];
            ksq += h->sq[b];
        } else {
            out += h->n[b];
        }
    }
    double mean;
    t->arrival_cv = cv_of(kn, ksum, ksq, &mean);
    t->arrival_mean_ns = ghz > 0 && mean > 0 ? mean / ghz : NAN;
    t->arrival_samples = (uint64_t)kn;
    t->arrival_interruptions = out;
}

/* Per-thread and per-sub-window figures of a finished point (the JSON's threads[] and windows[]). */
static void point_details(struct ctx *c, const struct traffic *tr, struct result *r, const long long *steal0,
                          const long long *steal1, int have_steal)
{
    const struct opts *o = c->o;
    double bytes_per_group = (double)(tr->reads + tr->writes) * (double)o->access;
    double hz = (double)sysconf(_SC_CLK_TCK);
    r->nts = c->nw;
    r->ts = calloc((size_t)c->nw, sizeof *r->ts);
    r->nws = o->nwin;
    r->ws = calloc((size_t)o->nwin, sizeof *r->ws);
    double *cvs = calloc((size_t)c->nw + 1, sizeof *cvs);
    if (!r->ts || !r->ws || !cvs)
        die("out of memory");
    int ncv = 0;
    r->steal_pct = have_steal ? 0.0 : NAN;
    for (int i = 0; i < c->nw; i++) {
        struct worker *w = &c->w[i];
        struct thread_stat *t = &r->ts[i];
        t->cpu = w->cpu;
        t->is_lat = w->is_lat;
        t->arrival_cv = t->arrival_mean_ns = t->arrival_cv_all = NAN;
        double dt = w->is_lat ? w->ca.t1 - w->ca.t0 : w->la.t1 - w->la.t0;
        t->share = dt > 0 ? (w->is_lat ? w->ca.cpu_s : w->la.cpu_s) / dt : NAN;
        t->steal_pct = NAN;
        if (have_steal && w->cpu < LOADLAT_MAX_CPUS && steal0[w->cpu] >= 0 && steal1[w->cpu] >= 0 && dt > 0) {
            t->steal_pct = 100.0 * (double)(steal1[w->cpu] - steal0[w->cpu]) / hz / dt;
            if (t->steal_pct > r->steal_pct)
                r->steal_pct = t->steal_pct;
        }
        if (!w->is_lat) {
            arrival_stats(&w->la.gaps, c->cal_tick_ghz, t);
            t->arrival_period = w->la.gap_period;
        }
        if (!w->is_lat && !isnan(t->arrival_cv))
            cvs[ncv++] = t->arrival_cv;
    }
    r->arrival_cv = median(cvs, ncv);
    free(cvs);
    for (int k = 0; k < o->nwin; k++) {
        struct win_stat *ws = &r->ws[k];
        ws->latency_ns = NAN;
        ws->share_min = NAN;
        double sum_s = 0;
        int n = 0, bad = 0;
        for (int i = 0; i < c->nw; i++) {
            struct worker *w = &c->w[i];
            const struct win_marks *m = w->is_lat ? &w->ca.marks : &w->la.marks;
            double dt = m->t[k + 1] - m->t[k];
            if (!(dt > 0)) {
                bad = 1;
                continue;
            }
            double share = (m->cpu[k + 1] - m->cpu[k]) / dt;
            if (isnan(ws->share_min) || share < ws->share_min)
                ws->share_min = share;
            double cnt = (double)(m->n[k + 1] - m->n[k]);
            if (w->is_lat)
                ws->latency_ns = cnt > 0 ? dt * 1e9 / cnt : NAN;
            else
                ws->bw_MBps += cnt * bytes_per_group / dt / 1e6;
            sum_s += dt;
            n++;
        }
        ws->window_s = n ? sum_s / n : 0;
        if (bad) {  /* a thread saw this sub-window start and end at once (descheduled across it) */
            ws->latency_ns = NAN;
            ws->bw_MBps = NAN;
        }
    }
}

/* Run one point on the running threads. Returns 1 when interrupted (point discarded). */
static int run_point(struct ctx *c, const struct traffic *tr, uint64_t delay, struct result *r)
{
    const struct opts *o = c->o;
    static long long steal0[LOADLAT_MAX_CPUS], steal1[LOADLAT_MAX_CPUS];
    memset(r, 0, sizeof *r);
    r->tr = tr;
    r->delay = delay;
    r->delay_mean = exp_mean_units(c, delay);
    c->cur_tr = tr;
    c->cur_delay = delay;
    c->cur_delay_mean = r->delay_mean;
    atomic_store(&c->subwin, 0);
    atomic_store(&c->phase, PH_WARMUP);
    pthread_barrier_wait(&c->bar);
    int stop = sleep_interruptible(warmup_s(o));
    int have_steal = 0;
    if (!stop) {
        have_steal = read_steal(steal0, LOADLAT_MAX_CPUS) == 0;
        double t0 = now_s();
        atomic_store(&c->phase, PH_MEASURE);
        for (int k = 1; k <= o->nwin && !stop; k++) {  /* sub-window k-1 ends at t0 + k * seconds / nwin */
            stop = sleep_interruptible(t0 + o->seconds * k / o->nwin - now_s());
            if (k < o->nwin)
                atomic_store(&c->subwin, k);
        }
        if (have_steal)
            have_steal = read_steal(steal1, LOADLAT_MAX_CPUS) == 0;
    }
    atomic_store(&c->phase, PH_STOP);
    pthread_barrier_wait(&c->bar);
    if (stop)
        return 1;

    r->ok = 1;
    r->lat_share = NAN;
    r->load_share = NAN;
    double bytes_per_group = (double)(tr->reads + tr->writes) * (double)o->access;
    double win = 0;
    int nwin = 0;
    for (int i = 0; i < c->nw; i++) {
        struct worker *w = &c->w[i];
        if (w->is_lat) {
            if (!w->ca.measured || w->ca.loads == 0) {
                r->ok = 0;
                snprintf(r->why, sizeof r->why, "latency thread on CPU %d saw no measured window", w->cpu);
                continue;
            }
            double dt = w->ca.t1 - w->ca.t0;
            r->latency_ns = dt * 1e9 / (double)w->ca.loads;
            r->loads = w->ca.loads;
            r->lat_share = w->ca.cpu_s / dt;
            win += dt;
            nwin++;
        } else {
            if (!w->la.measured) {
                r->ok = 0;
                snprintf(r->why, sizeof r->why, "load thread on CPU %d saw no measured window", w->cpu);
                continue;
            }
            double dt = w->la.t1 - w->la.t0;
            double g = (double)w->la.groups;
            r->bw_MBps += g * bytes_per_group / dt / 1e6;
            r->read_MBps += g * tr->reads * (double)o->access / dt / 1e6;
            r->write_MBps += g * tr->writes * (double)o->access / dt / 1e6;
            double share = w->la.cpu_s / dt;
            if (isnan(r->load_share) || share < r->load_share)
                r->load_share = share;
            win += dt;
            nwin++;
        }
    }
    r->window_s = nwin ? win / nwin : 0;
    if (r->ok)
        point_details(c, tr, r, steal0, steal1, have_steal);
    double share = isnan(r->lat_share) ? r->load_share
                   : isnan(r->load_share) ? r->lat_share
                   : fmin(r->lat_share, r->load_share);
    if (r->ok && share < 0.9)
        fprintf(stderr, "loadlat: warning: %s delay %llu: a measuring thread ran only %.0f%% of the window "
                        "(the CPU is shared with other work; this point is inflated)\n",
                tr->code, (unsigned long long)delay, 100.0 * share);
    return 0;
}

/* ------------------------------------------------------------------ JSON */

static void json_str(FILE *f, const char *s)
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

static void json_num(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.10g", v);
    else
        fputs("null", f);
}

static void write_json(const struct opts *o, int argc, char **argv, const struct ctx *c, const struct calib *cal,
                       const struct run *run, const struct thp *thp)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", o->json, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        die("--json: cannot write %s: %s", tmp, strerror(errno));
    fprintf(f, "{\n  \"tool\": \"loadlat\",\n  \"version\": \"%s\",\n  \"command\": [", LOADLAT_VERSION);
    for (int i = 0; i < argc; i++) {
        if (i)
            fputs(", ", f);
        json_str(f, argv[i]);
    }
    fprintf(f, "],\n  \"mode\": \"%s\",\n  \"isa\": \"%s\",\n", MODE_NAMES[o->mode], load_isa());
    fprintf(f, "  \"online_cpus\": %ld,\n", sysconf(_SC_NPROCESSORS_ONLN));
    int lat_cpu = -1;
    fputs("  \"load_cpus\": [", f);
    int first = 1;
    for (int i = 0; i < c->nw; i++) {
        if (c->w[i].is_lat) {
            lat_cpu = c->w[i].cpu;
            continue;
        }
        fprintf(f, "%s%d", first ? "" : ", ", c->w[i].cpu);
        first = 0;
    }
    fputs("],\n  \"latency_cpu\": ", f);
    if (lat_cpu >= 0)
        fprintf(f, "%d", lat_cpu);
    else
        fputs("null", f);
    if (o->mode == MODE_LOADED)
        fprintf(f, ",\n  \"traffic\": {\"code\": \"%s\", \"label\": \"%s\", \"reads_per_group\": %d, "
                   "\"writes_per_group\": %d, \"non_temporal\": %s},\n",
                o->tr->code, o->tr->label, o->tr->reads, o->tr->writes, o->tr->nt ? "true" : "false");
    else
        fputs(",\n  \"traffic\": null,\n", f);  /* idle: none; peak: per point */
    fprintf(f, "  \"access_bytes\": %zu,\n  \"random_load_access\": %s,\n", o->access,
            o->random ? "true" : "false");
    fprintf(f, "  \"latency_buffer_bytes\": %zu,\n  \"load_buffer_bytes\": %zu,\n  \"chain_slot_bytes\": %d,\n",
            lat_cpu >= 0 ? lat_len(o) : (size_t)0, load_len(o), CHAIN_SLOT);
    fprintf(f, "  \"seconds_per_point\": ");
    json_num(f, o->seconds);
    fprintf(f, ",\n  \"warmup_s\": ");
    json_num(f, warmup_s(o));
    fprintf(f, ",\n  \"pacing\": \"%s\",\n  \"windows_per_point\": %d,\n  \"arrival_clock\": \"%s\"",
            o->pacing_exp ? "exp" : "fixed", o->nwin, TICK_CLOCK);
    fprintf(f, ",\n  \"huge_pages\": {\"requested\": %s, \"thp_enabled\": \"%s\", \"thp_defrag\": \"%s\", "
               "\"buffers\": [",
            o->huge ? "true" : "false", thp->enabled, thp->defrag);
    first = 1;
    long long tot = 0, huge = 0;
    for (int i = 0; i < c->nw; i++) {
        const struct worker *w = &c->w[i];
        const struct buffer *bs[4] = {&w->lat, &w->rd, &w->rd2, &w->wr};
        const char *names[4] = {"latency", "read", "read2", "write"};
        for (int j = 0; j < 4; j++) {
            if (!bs[j]->p)
                continue;
            fprintf(f, "%s\n    {\"role\": \"%s\", \"cpu\": %d, \"bytes\": %zu, \"anon_huge_bytes\": ",
                    first ? "" : ",", names[j], w->cpu, bs[j]->len);
            if (bs[j]->anon_huge_kib >= 0)
                fprintf(f, "%lld}", bs[j]->anon_huge_kib * 1024);
            else
                fputs("null}", f);
            first = 0;
            tot += (long long)bs[j]->len;
            huge += bs[j]->anon_huge_kib > 0 ? bs[j]->anon_huge_kib * 1024 : 0;
        }
    }
    fprintf(f, "],\n    \"huge_fraction\": ");
    json_num(f, tot ? (double)huge / (double)tot : 0.0);
    fprintf(f, "},\n  \"calibration\": {\"delay_ns_per_unit\": ");
    json_num(f, cal->delay_ns);
    fprintf(f, ", \"delay_loop_iterations\": %llu, \"cpu\": %d, \"core_ghz\": ",
            (unsigned long long)cal->delay_iters, cal->cpu);
    json_num(f, cal->core_ghz);
    fprintf(f, ", \"core_ghz_method\": \"%s\", \"core_ghz_check\": ", CORE_GHZ_METHOD);
    json_str(f, cal->core_check);
    fputs(", \"tsc_ghz\": ", f);
    json_num(f, cal->tsc_ghz);
    fputs(", \"cpufreq_max_ghz\": ", f);
    if (cal->cpufreq_max_ghz > 0)
        json_num(f, cal->cpufreq_max_ghz);
    else
        fputs("null", f);
    fputs(", \"exp_draw_ns\": ", f);
    json_num(f, cal->exp_cost_ns);
    fputs(", \"arrival_stamp_ns\": ", f);
    json_num(f, cal->tick_ns);
    fputs(", \"arrival_clock_ghz\": ", f);
    json_num(f, cal->tick_ghz > 0 ? cal->tick_ghz : NAN);
    fprintf(f, "},\n  \"points_planned\": %d,\n  \"interrupted\": %s,\n  \"points\": [", run->planned,
            run->interrupted ? "true" : "false");
    for (int i = 0; i < run->nres; i++) {
        const struct result *r = &run->res[i];
        int has_lat = lat_cpu >= 0 && r->ok;
        fprintf(f, "%s\n    {\"status\": \"%s\", \"traffic\": \"%s\", \"delay\": %llu, \"delay_ns\": ",
                i ? "," : "", r->ok ? "ok" : "failed", r->tr->code, (unsigned long long)r->delay);
        json_num(f, (double)r->delay * cal->delay_ns);
        fputs(", \"latency_ns\": ", f);
        if (has_lat)
            json_num(f, r->latency_ns);
        else
            fputs("null", f);
        fputs(", \"latency_core_clocks\": ", f);
        if (has_lat)
            json_num(f, r->latency_ns * cal->core_ghz);
        else
            fputs("null", f);
        fputs(", \"bandwidth_MBps\": ", f);
        if (o->mode != MODE_IDLE && r->ok)
            json_num(f, r->bw_MBps);
        else
            fputs("null", f);
        fputs(", \"read_MBps\": ", f);
        json_num(f, r->read_MBps);
        fputs(", \"write_MBps\": ", f);
        json_num(f, r->write_MBps);
        fputs(", \"window_s\": ", f);
        json_num(f, r->window_s);
        fprintf(f, ", \"latency_loads\": %llu, \"latency_thread_cpu_share\": ", (unsigned long long)r->loads);
        json_num(f, r->lat_share);
        fputs(", \"latency_ns_per_cpu_time\": ", f);
        if (has_lat)
            json_num(f, r->latency_ns * r->lat_share);
        else
            fputs("null", f);
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
        if (!r->ok) {
            fputs(", \"error\": ", f);
            json_str(f, r->why);
        }
        fputc('}', f);
    }
    fputs("\n  ]\n}\n", f);
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

/* ------------------------------------------------------------------ the steps of main */

/* The latency CPU (-c, default the first allowed CPU) and the load CPUs (-k, default every other allowed
 * CPU), checked against the affinity mask; allowed_txt gets the allowed CPUs as a list ("0-3,8"). */
static void resolve_cpus(struct opts *o, char *allowed_txt, size_t len)
{
    static int allowed[LOADLAT_MAX_CPUS];
    int nallowed = allowed_cpus(allowed, LOADLAT_MAX_CPUS);
    if (nallowed <= 0)
        die("cannot read the CPU affinity mask: %s", strerror(errno));
    cpu_list_format(allowed, nallowed, allowed_txt, len);
    int use_lat = uses_lat_thread(o);
    if (use_lat) {
        if (!o->c_given)
            o->lat_cpu = allowed[0];
        if (!cpu_list_has(o->lat_cpu, allowed, nallowed))
            die_usage("-c%d: CPU %d is not available to this process (allowed CPUs: %s)", o->lat_cpu, o->lat_cpu,
                      allowed_txt);
    }
    if (o->mode == MODE_IDLE) {
        o->nload = 0;
        return;
    }
    if (!o->k_given) {
        o->nload = 0;
        for (int i = 0; i < nallowed; i++)
            if (!use_lat || allowed[i] != o->lat_cpu)
                o->load_cpus[o->nload++] = allowed[i];
        if (o->nload == 0)
            die_usage("no CPU left for load threads besides the latency CPU %d: give -k or -T", o->lat_cpu);
    }
    for (int i = 0; i < o->nload; i++) {
        if (!cpu_list_has(o->load_cpus[i], allowed, nallowed))
            die_usage("-k: CPU %d is not available to this process (allowed CPUs: %s)", o->load_cpus[i],
                      allowed_txt);
        if (use_lat && o->load_cpus[i] == o->lat_cpu)
            die_usage("-k: CPU %d is also the latency CPU (-c%d): leave it out or add -T", o->lat_cpu, o->lat_cpu);
    }
}

/* Which buffers each load thread needs: all three for peak bandwidth (its mixes change per point), else
 * those of the traffic type. */
static void plan_buffers(struct ctx *c)
{
    const struct opts *o = c->o;
    if (o->mode == MODE_PEAK) {
        c->need_rd = c->need_rd2 = c->need_wr = 1;
    } else if (o->mode == MODE_LOADED) {
        c->need_rd = o->tr->reads > 0;
        c->need_rd2 = o->tr->triad;
        c->need_wr = o->tr->writes > 0;
    }
}

/* Refuse buffers beyond 90% of MemAvailable (the latency buffer counts 7% extra for its chain order). */
static void check_memory(const struct ctx *c)
{
    const struct opts *o = c->o;
    double need = (uses_lat_thread(o) ? (double)o->lat_bytes * 1.07 : 0) +
                  (double)o->nload * (double)load_len(o) * (c->need_rd + c->need_rd2 + c->need_wr);
    long long avail = mem_available_bytes();
    if (avail > 0 && need > 0.9 * (double)avail)
        die_usage("-b: buffers need %.0f MiB but only %.0f MiB of memory are available: use a smaller -b",
                  need / 1048576.0, (double)avail / 1048576.0);
}

/* Delay unit and clock rates, measured on the CPU that will run the delay loop (the first load CPU, else
 * the latency CPU); the process's affinity mask is restored afterwards. */
static void calibrate(struct calib *cal, const struct opts *o)
{
    memset(cal, 0, sizeof *cal);
    cal->cpu = o->nload ? o->load_cpus[0] : o->lat_cpu;
    cpu_set_t saved;
    if (sched_getaffinity(0, sizeof saved, &saved) != 0)
        die("sched_getaffinity failed: %s", strerror(errno));
    int e = pin_self(cal->cpu);
    if (e)
        die("cannot pin to CPU %d for calibration: %s", cal->cpu, strerror(e));
    cal->core_ghz = calibrate_core_ghz();
    cal->delay_ns = calibrate_delay_ns(&cal->delay_iters);
    cal->tsc_ghz = calibrate_tsc_ghz();
    cal->cpufreq_max_ghz = cpufreq_max_ghz(cal->cpu);
    cal->core_check = core_clock_check(cal->core_ghz, cal->tsc_ghz, cal->cpufreq_max_ghz);
    cal->exp_cost_ns = o->pacing_exp ? calibrate_exp_cost_ns(cal->delay_ns) : NAN;
    cal->tick_ns = calibrate_tick_ns();
    cal->tick_ghz = tick_ghz(cal->tsc_ghz);
    if (strcmp(cal->core_check, "ok") != 0)
        fprintf(stderr, "loadlat: warning: core clock %.3f GHz is %s (TSC %.3f GHz); core-clock figures are "
                "unreliable, use the ns figures\n", cal->core_ghz, cal->core_check, cal->tsc_ghz);
    if (sched_setaffinity(0, sizeof saved, &saved) != 0)
        die("sched_setaffinity failed: %s", strerror(errno));
}

/* The header, as MLC prints it. */
static void print_header(const struct opts *o, int argc, char **argv)
{
    printf("loadlat (Memory Latency Checker-compatible) - v%s\n", LOADLAT_VERSION);
    printf("Command line parameters: ");
    for (int i = 1; i < argc; i++)
        printf("%s ", argv[i]);
    printf("\n\n");
    if (o->mode == MODE_IDLE)
        printf("Using buffer size of %.3fMiB\n", (double)lat_len(o) / 1048576.0);
    else
        printf("Using buffer size of %.3fMiB/thread for reads and an additional %.3fMiB/thread for writes\n",
               (double)load_len(o) / 1048576.0, (double)load_len(o) / 1048576.0);
    fflush(stdout);
}

/* One thread per CPU, the latency thread first; each pins itself and sets up its buffers (worker_init).
 * SIGINT/SIGTERM are blocked in them so that only main sees them. */
static void start_workers(struct ctx *c)
{
    const struct opts *o = c->o;
    int use_lat = uses_lat_thread(o);
    c->nw = (use_lat ? 1 : 0) + o->nload;
    c->w = calloc((size_t)c->nw, sizeof *c->w);
    if (!c->w)
        die("out of memory");
    int k = 0;
    if (use_lat) {
        c->w[k].cpu = o->lat_cpu;
        c->w[k].is_lat = 1;
        k++;
    }
    for (int i = 0; i < o->nload; i++, k++)
        c->w[k].cpu = o->load_cpus[i];
    for (int i = 0; i < c->nw; i++) {
        c->w[i].ctx = c;
        c->w[i].index = i;
    }
    int e = pthread_barrier_init(&c->bar, NULL, (unsigned)c->nw + 1);
    if (e)
        die("pthread_barrier_init failed: %s", strerror(e));
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    for (int i = 0; i < c->nw; i++) {
        e = pthread_create(&c->w[i].th, NULL, worker_main, &c->w[i]);
        if (e)
            die("pthread_create failed: %s", strerror(e));
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Wait until every thread is pinned, its buffers first-touched and the chain built. Returns 0, with the
 * threads' errors on stderr, when any of them failed. */
static int workers_ready(struct ctx *c)
{
    pthread_barrier_wait(&c->bar);
    int ok = 1;
    for (int i = 0; i < c->nw; i++)
        if (c->w[i].failed) {
            fprintf(stderr, "loadlat: %s\n", c->w[i].err);
            ok = 0;
        }
    return ok;
}

static void stop_workers(struct ctx *c)
{
    atomic_store(&c->quit, 1);
    pthread_barrier_wait(&c->bar);
    for (int i = 0; i < c->nw; i++)
        pthread_join(c->w[i].th, NULL);
}

static void read_thp(struct thp *t)
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

/* The '#' lines: everything MLC does not print (threads, buffers, huge pages, calibrations, timing). */
static void print_setup(const struct ctx *c, const struct calib *cal, const char *allowed_txt,
                        const struct thp *thp)
{
    const struct opts *o = c->o;
    char loadtxt[512] = "none";
    if (o->nload)
        cpu_list_format(o->load_cpus, o->nload, loadtxt, sizeof loadtxt);
    printf("# loadlat v%s: %s kernels; allowed CPUs %s\n", LOADLAT_VERSION, load_isa(), allowed_txt);
    if (uses_lat_thread(o))
        printf("# latency thread: CPU %d, %.3f MiB buffer, random cyclic chain of %zu slots of %d bytes "
               "(random 8-byte offset in each)\n",
               o->lat_cpu, (double)c->w[0].lat.len / 1048576.0, c->w[0].lat.len / CHAIN_SLOT, CHAIN_SLOT);
    if (o->nload)
        printf("# load threads: CPUs %s (%d threads), %zu-byte %s requests, own buffers of %.3f MiB each\n",
               loadtxt, o->nload, o->access, o->random ? "random" : "sequential", (double)load_len(o) / 1048576.0);
    long long huge_kib, tot_kib;
    int unknown;
    huge_page_totals(c, &huge_kib, &tot_kib, &unknown);
    printf("# huge pages: %s; THP enabled=%s defrag=%s; AnonHugePages in buffers: %s%lld of %lld KiB (%.1f%%)\n",
           o->huge ? "requested with madvise(MADV_HUGEPAGE) (-L)" : "not requested (MADV_NOHUGEPAGE)",
           thp->enabled, thp->defrag, unknown ? "at least " : "", huge_kib, tot_kib,
           tot_kib ? 100.0 * (double)huge_kib / (double)tot_kib : 0.0);
    if (o->huge && huge_kib == 0)
        fprintf(stderr, "loadlat: warning: -L asked for huge pages but none are in use (THP enabled=%s)\n",
                thp->enabled);
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
    if (o->no_lat)
        printf("# -T: no latency thread; the latency column is 0.00 (not measured)\n");
    if (o->mode == MODE_LOADED)
        printf("# traffic %s (%s): per request group %d read(s) and %d %swrite(s) of %zu bytes, then the "
               "delay loop\n",
               o->tr->code, o->tr->label, o->tr->reads, o->tr->writes, o->tr->nt ? "non-temporal " : "", o->access);
    if (o->pacing_exp)
        printf("# pacing exp: each delay drawn from an exponential of mean (delay - %.1f) units (a draw costs "
               "%.2f ns, %.2f ns per %s stamp); arrival_cv in the JSON\n",
               c->exp_cost_units, cal->exp_cost_ns, cal->tick_ns, TICK_CLOCK);
    printf("\n");
    fflush(stdout);
}

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
    const struct traffic *peak_tr[5] = {traffic_lookup("R"), traffic_lookup("W3"), traffic_lookup("W2"),
                                        traffic_lookup("W5"), traffic_lookup("W10")};
    static const char *const peak_names[5] = {"ALL Reads        ", "3:1 Reads-Writes ", "2:1 Reads-Writes ",
                                              "1:1 Reads-Writes ", "Stream-triad like"};
    printf("Measuring Peak Injection Memory Bandwidths for the system\n");
    printf("Bandwidths are in MB/sec (1 MB/sec = 1,000,000 Bytes/sec)\n");
    printf("Using all the threads from each core if Hyper-threading is enabled\n");
    printf("Using traffic with the following read-write ratios\n");
    fflush(stdout);
    for (int i = 0; i < 5; i++) {
        struct result *r = &run->res[i];
        if (run_point(c, peak_tr[i], 0, r)) {
            run->interrupted = 1;
            return;
        }
        run->nres++;
        if (r->ok)
            printf("%s:\t%.1f\t\n", peak_names[i], r->bw_MBps);
        else {
            printf("# %s failed: %s\n", peak_names[i], r->why);
            run->any_failed = 1;
        }
        fflush(stdout);
    }
}

static void print_row(const struct result *r, int has_lat)
{
    printf(" %05llu\t%6.2f\t%9.1f\n", (unsigned long long)r->delay, has_lat ? r->latency_ns : 0.0, r->bw_MBps);
    fflush(stdout);
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

/* Every point of the mode, printed as it completes; a signal ends the run after a '#' line. */
static void run_points(struct ctx *c, const struct calib *cal, struct run *run)
{
    const struct opts *o = c->o;
    memset(run, 0, sizeof *run);
    run->planned = o->mode == MODE_LOADED ? o->ndelays : o->mode == MODE_PEAK ? 5 : 1;
    run->res = calloc((size_t)run->planned, sizeof *run->res);
    if (!run->res)
        die("out of memory");
    if (o->mode == MODE_IDLE)
        run_idle(c, cal, run);
    else if (o->mode == MODE_PEAK)
        run_peak(c, run);
    else
        run_loaded(c, run);
    if (run->interrupted) {
        printf("\n# interrupted by signal %d after %d of %d points\n", (int)g_signal, run->nres, run->planned);
        fflush(stdout);
        fprintf(stderr, "loadlat: interrupted after %d of %d points\n", run->nres, run->planned);
    }
}

static void free_all(struct ctx *c, struct run *run)
{
    for (int i = 0; i < c->nw; i++) {
        buffer_free(&c->w[i].lat);
        buffer_free(&c->w[i].rd);
        buffer_free(&c->w[i].rd2);
        buffer_free(&c->w[i].wr);
    }
    pthread_barrier_destroy(&c->bar);
    for (int i = 0; i < run->nres; i++) {
        free(run->res[i].ts);
        free(run->res[i].ws);
    }
    free(run->res);
    free(c->w);
}

/* 0; 1 when a point failed; 128 + signal when interrupted. */
static int exit_status(const struct run *run)
{
    if (run->interrupted)
        return 128 + (int)g_signal;
    return run->any_failed ? 1 : 0;
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

/* ------------------------------------------------------------------ main */

int main(int argc, char **argv)
{
    static struct opts o;  /* large (CPU and delay arrays): not on the stack */
    static struct ctx c;
    char allowed_txt[512];
    struct calib cal;
    struct thp thp;
    struct run run;

    exp_table_init();
    parse_args(argc, argv, &o);
    if (o.sample_delays)
        return sample_delays(&o);
    resolve_cpus(&o, allowed_txt, sizeof allowed_txt);
    c.o = &o;
    plan_buffers(&c);
    check_memory(&c);
    calibrate(&cal, &o);
    c.exp_cost_units = o.pacing_exp && cal.delay_ns > 0 ? cal.exp_cost_ns / cal.delay_ns : 0.0;
    c.cal_tick_ghz = cal.tick_ghz;
    c.cal_tick_ns = cal.tick_ns;
    print_header(&o, argc, argv);
    start_workers(&c);
    if (!workers_ready(&c)) {
        stop_workers(&c);
        return 1;
    }
    read_thp(&thp);
    print_setup(&c, &cal, allowed_txt, &thp);
    run_points(&c, &cal, &run);
    stop_workers(&c);
    if (o.json)
        write_json(&o, argc, argv, &c, &cal, &run, &thp);
    free_all(&c, &run);
    return exit_status(&run);
}
