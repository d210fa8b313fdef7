/* loadlat - an open, MLC-compatible loaded-latency tool (memstor).
 *
 * main.c: options, thread orchestration (barrier-synchronised points: warm-up, measured window, stop),
 * the sections of MLC's default run (idle latency matrix, peak injection and maximum bandwidth, bandwidth
 * matrix, loaded latency, cache-to-cache latency; each also alone), MLC v3.10/v3.11-style text output and
 * the JSON sidecar. See README.md for the method.
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

/* MODE_IDLE, MODE_LOADED and MODE_PEAK are also the worker setups the other sections run on: a latency
 * thread alone, a latency thread (or none, -T) with load threads, load threads with every buffer. */
enum mode { MODE_NONE = 0, MODE_IDLE, MODE_LOADED, MODE_PEAK, MODE_LATMAT, MODE_BWMAT, MODE_MAXBW, MODE_C2C,
            MODE_DEFAULT };

static const char *const MODE_NAMES[] = {"",  "idle_latency", "loaded_latency", "peak_injection_bandwidth",
                                         "latency_matrix", "bandwidth_matrix", "max_bandwidth", "c2c_latency",
                                         "default"};

/* The sections of the default run, in their order (MLC's, with max bandwidth beside peak injection). */
static const enum mode DEFAULT_SECTIONS[] = {MODE_LATMAT, MODE_PEAK, MODE_MAXBW, MODE_BWMAT, MODE_LOADED, MODE_C2C};
#define N_DEFAULT_SECTIONS ((int)(sizeof DEFAULT_SECTIONS / sizeof DEFAULT_SECTIONS[0]))

/* --max_bandwidth: the inject delays tried for each mix, in this order; a mix stops after two delays in a
 * row below MAXBW_STOP x its best bandwidth (past the best injection rate bandwidth only falls). */
static const uint64_t MAXBW_DELAYS[] = {0, 2, 8, 15, 30, 50, 100, 200, 400};
#define N_MAXBW_DELAYS ((int)(sizeof MAXBW_DELAYS / sizeof MAXBW_DELAYS[0]))
#define MAXBW_STOP 0.8

/* MLC's five read/write mixes of peak injection and max bandwidth, and its row labels. */
static const char *const MIX_CODES[5] = {"R", "W3", "W2", "W5", "W10"};
static const char *const MIX_NAMES[5] = {"ALL Reads        ", "3:1 Reads-Writes ", "2:1 Reads-Writes ",
                                         "1:1 Reads-Writes ", "Stream-triad like"};

/* MLC's default inject delays for --loaded_latency. */
static const uint64_t MLC_DELAYS[] = {0,   2,   8,   15,   50,   100,  200,  300,  400, 500,
                                      700, 1000, 1300, 1700, 2500, 3500, 5000, 9000, 20000};

#define DEFAULT_LAT_BYTES ((size_t)1 << 30)       /* latency chain: 1 GiB, far beyond any LLC */
#define DEFAULT_LOAD_BYTES ((size_t)100000 * 1024) /* per load buffer: MLC's default -b100000 (KiB) */
#define CHAIN_SLOT cache_line_bytes()               /* bytes per latency-chain slot: a cache line (cpus.c) */
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
        "USAGE: loadlat [mode] [options]\n"
        "Values are attached to the option letter, as in MLC (-b200m, -l256, -k1-3,5).\n"
        "\n"
        "  (no mode)                  MLC's default run: every section below but idle latency, in the\n"
        "                             order latency matrix, peak injection, max bandwidth, bandwidth\n"
        "                             matrix, loaded latency, c2c latency (-b, -t, -c, -k, -L, -W, -d/-g\n"
        "                             apply to the sections they concern)\n"
        "  --idle_latency             latency of dependent loads on an idle system\n"
        "  --latency_matrix           idle latency from every NUMA node's CPU to every node's memory\n"
        "  --loaded_latency           latency while load threads inject traffic, for each inject delay\n"
        "  --peak_injection_bandwidth bandwidth of all load threads at delay 0 for MLC's five mixes\n"
        "  --max_bandwidth            the five mixes at several inject delays, the best of each kept\n"
        "  --bandwidth_matrix         read bandwidth from every node's CPUs to every node's memory\n"
        "  --c2c_latency              cache-to-cache transfer latency: one line bounced between two\n"
        "                             cores, clean (HIT) and modified (HITM); remote across nodes\n"
        "  -b<n>[k|m|g]  buffer size per thread in KiB (suffix k/m/g = KiB/MiB/GiB); sets both the\n"
        "                latency buffer (default 1g) and each load buffer (default 100000 KiB)\n"
        "  -l<n>         bytes per load request (access size and stride), multiple of 64 (default 64)\n"
        "  -d<n>         one inject delay (delay-loop iterations after each request group)\n"
        "  -g<file>      file with inject delays (whitespace separated; '#' starts a comment)\n"
        "                default: MLC's 19 delays 0 2 8 15 50 100 ... 9000 20000\n"
        "  -t<s>         seconds measured per point (default 2; decimals allowed), after a warm-up\n"
        "  -c<n>         CPU of the latency thread (default: the first allowed CPU); for the latency\n"
        "                matrix that of its node's row, for c2c the reader CPU\n"
        "  -k<list>      CPUs of the load threads, e.g. -k1-3,5 (default: all allowed CPUs except -c;\n"
        "                for the bandwidth matrix those of each node); for c2c the writer CPU (the first)\n"
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
        else if (strcmp(a, "--latency_matrix") == 0)
            set_mode(o, MODE_LATMAT);
        else if (strcmp(a, "--bandwidth_matrix") == 0)
            set_mode(o, MODE_BWMAT);
        else if (strcmp(a, "--max_bandwidth") == 0)
            set_mode(o, MODE_MAXBW);
        else if (strcmp(a, "--c2c_latency") == 0)
            set_mode(o, MODE_C2C);
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
        o->mode = MODE_DEFAULT;  /* no mode: MLC's default run */
    if (o->d_given && o->g_given)
        die_usage("-d and -g both given: use one of them");
    if (o->mode != MODE_LOADED) {
        /* which options each mode takes: -d/-g/--pacing go to a loaded-latency sweep (also the default
         * run's), -R/-W to the traffic of loaded latency and the bandwidth matrix, -k to load threads (and
         * the c2c writer), -c to a latency thread (and the c2c reader) */
        enum mode m = o->mode;
        int sweep = m == MODE_DEFAULT, traffic = m == MODE_DEFAULT || m == MODE_BWMAT;
        int k_ok = m != MODE_IDLE && m != MODE_LATMAT;
        int c_ok = m == MODE_IDLE || m == MODE_LATMAT || m == MODE_C2C || m == MODE_DEFAULT;
        const char *tr_opt = o->tr_given ? (strcmp(o->tr->code, "R") ? "-W" : "-R") : NULL;
        const char *bad = !sweep && o->d_given ? "-d" : !sweep && o->g_given ? "-g" : o->no_lat ? "-T"
                          : !sweep && o->pacing_given ? "--pacing" : !traffic && tr_opt ? tr_opt
                          : !k_ok && o->k_given ? "-k" : !c_ok && o->c_given ? "-c" : NULL;
        if (bad) {
            if (m == MODE_DEFAULT)
                die_usage("%s does not apply to the default run (no mode option)", bad);
            die_usage("%s does not apply to --%s", bad, MODE_NAMES[m]);
        }
    }
    if (o->no_lat && o->c_given)
        die_usage("-c and -T both given: -T runs no latency thread");
    const char *refusal = kernel_refusal(o->tr);  /* kernels.c: LOADLAT_ISA, traffic this CPU's kernel lacks */
    if (refusal)
        die_usage("%s", refusal);
    if (o->g_given)
        read_delay_file(o, o->delay_file);
    if ((o->mode == MODE_LOADED || o->mode == MODE_DEFAULT) && o->ndelays == 0) {
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

/* A buffer of the worker, first-touched by it; in a NUMA matrix cell (ctx mem_node >= 0) placed on that node:
 * bound with mbind before the touch, or, when mbind is refused (kernel without NUMA system calls, seccomp,
 * a node the kernel cannot bind), first-touched by this thread moved for the moment to a CPU of that node.
 * Where the pages landed is checked (numa_pages_on_node) and kept in w->on_node. */
static int alloc_placed(struct worker *w, struct buffer *b, size_t len, unsigned char fill, char *err,
                        size_t errlen)
{
    struct ctx *c = w->ctx;
    int huge = c->o->huge;
    if (c->mem_node < 0)
        return buffer_alloc(b, len, huge, fill, err, errlen);
    int e = buffer_alloc_node(b, len, huge, fill, c->mem_node, err, errlen);
    if (e == 0) {
        w->placement = "mbind";
    } else {
        if (c->touch_cpu < 0)
            return e;  /* err says why mbind failed; no CPU of that node to touch from */
        snprintf(w->mbind_err, sizeof w->mbind_err, "%s", strerror(e));
        e = pin_self(c->touch_cpu);
        if (e) {
            snprintf(err, errlen, "mbind failed and cannot move to CPU %d of node %d for the first touch: %s",
                     c->touch_cpu, c->mem_node, strerror(e));
            return e;
        }
        e = buffer_alloc(b, len, huge, fill, err, errlen);
        int e2 = pin_self(w->cpu);
        if (e)
            return e;
        if (e2) {
            snprintf(err, errlen, "cannot pin back to CPU %d: %s", w->cpu, strerror(e2));
            return e2;
        }
        w->placement = "first-touch";
    }
    int checked;
    double f = numa_pages_on_node(b->p, b->len, c->mem_node, &checked);
    if (!isnan(f) && (isnan(w->on_node) || f < w->on_node))
        w->on_node = f;
    return 0;
}

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
        if (alloc_placed(w, &w->lat, lat_len(o), 0, err, sizeof err) != 0) {
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
        if (alloc_placed(w, want[i].b, len, want[i].fill, err, sizeof err) != 0) {
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

static void jsec_open(struct jsec *s, enum mode mode, const struct opts *o)
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

static void jsec_free(struct jsec *s)
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
    if (extra)
        fputs(extra, f);
    if (!r->ok) {
        fputs(", \"error\": ", f);
        json_str(f, r->why);
    }
    fputc('}', f);
}

/* The CPUs and buffers of a group of threads (a ctx), added to the section before the buffers are freed. */
static void jsec_workers(struct jsec *s, const struct ctx *c)
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
static void jsec_points(struct jsec *s, const struct ctx *c, const struct calib *cal, const struct run *run,
                        int from, int to, const char *extra)
{
    for (int i = from; i < to; i++)
        json_point(s->pf, s->npts++ == 0, c, cal, &run->res[i], extra);
}

static void json_calibration(FILE *f, const struct calib *cal)
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
    fputc('}', f);
}

static void json_command(FILE *f, int argc, char **argv)
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
static void json_numa(FILE *f, const struct numa_topo *t)
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
static void write_json(const struct opts *o, int argc, char **argv, struct jsec *secs, int nsec, int interrupted,
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

/* ------------------------------------------------------------------ the steps of main */

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

static int in_node(const struct numa_topo *t, int idx, int cpu) { return cpu_list_has(cpu, t->cpu[idx], t->ncpu[idx]); }

/* The first allowed CPU of node index idx, -1 when none. */
static int node_first_allowed(const struct env *e, int idx)
{
    for (int i = 0; i < e->nallowed; i++)
        if (in_node(&e->topo, idx, e->allowed[i]))
            return e->allowed[i];
    return -1;
}

/* Load CPUs of a section: the -k list, else every allowed CPU; without `skip`; only those of node index
 * `node_idx` when >= 0. Returns the count. */
static int section_loads(const struct env *e, int skip, int node_idx, int *out)
{
    const struct opts *o = e->o;
    const int *src = o->k_given ? o->load_cpus : e->allowed;
    int nsrc = o->k_given ? o->nload : e->nallowed, n = 0;
    for (int i = 0; i < nsrc; i++)
        if (src[i] != skip && (node_idx < 0 || in_node(&e->topo, node_idx, src[i])))
            out[n++] = src[i];
    return n;
}

/* The latency CPU (-c, default the first allowed CPU) and the load CPUs (-k, default every other allowed
 * CPU), checked against the affinity mask; e->allowed_txt gets the allowed CPUs as a list ("0-3,8"). For
 * the sections of the default run and the new modes the load CPUs are chosen per section (section_loads). */
static void resolve_cpus(struct opts *o, struct env *e)
{
    static int allowed[LOADLAT_MAX_CPUS];
    int nallowed = allowed_cpus(allowed, LOADLAT_MAX_CPUS);
    if (nallowed <= 0)
        die("cannot read the CPU affinity mask: %s", strerror(errno));
    e->allowed = allowed;
    e->nallowed = nallowed;
    cpu_list_format(allowed, nallowed, e->allowed_txt, sizeof e->allowed_txt);
    const char *allowed_txt = e->allowed_txt;
    if ((o->mode == MODE_C2C || o->mode == MODE_DEFAULT) && nallowed < 2)
        die_usage("%s needs two CPUs (a writer and a reader core for the cache-to-cache latency%s), but this process "
                  "may only run on CPU %s: allow two or more CPUs (e.g. taskset -c 0,1)",
                  o->mode == MODE_C2C ? "--c2c_latency" : "the default run",
                  o->mode == MODE_C2C ? "" : "; a load CPU besides the latency CPU", allowed_txt);
    int use_lat = uses_lat_thread(o) || o->mode == MODE_LATMAT || o->mode == MODE_C2C || o->mode == MODE_DEFAULT;
    if (use_lat) {
        if (!o->c_given)
            o->lat_cpu = allowed[0];
        if (!cpu_list_has(o->lat_cpu, allowed, nallowed))
            die_usage("-c%d: CPU %d is not available to this process (allowed CPUs: %s)", o->lat_cpu, o->lat_cpu,
                      allowed_txt);
    }
    if (o->mode == MODE_IDLE || o->mode == MODE_LATMAT) {
        o->nload = 0;
        return;
    }
    if (!o->k_given && (o->mode == MODE_LOADED || o->mode == MODE_PEAK)) {
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
        if (o->mode == MODE_LOADED && use_lat && o->load_cpus[i] == o->lat_cpu)
            die_usage("-k: CPU %d is also the latency CPU (-c%d): leave it out or add -T", o->lat_cpu, o->lat_cpu);
    }
    if ((o->mode == MODE_C2C || o->mode == MODE_DEFAULT) && o->k_given && o->nload == 1 &&
        o->load_cpus[0] == o->lat_cpu)
        die_usage("-k%d: CPU %d is also the %s CPU (-c%d): give another CPU", o->lat_cpu, o->lat_cpu,
                  o->mode == MODE_C2C ? "c2c reader" : "latency", o->lat_cpu);
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

/* Delay unit and clock rates, measured on `cpu` (the CPU that will run the delay loop: the first load CPU,
 * else the latency CPU); the process's affinity mask is restored afterwards. */
static void calibrate(struct calib *cal, const struct opts *o, int cpu)
{
    memset(cal, 0, sizeof *cal);
    cal->cpu = cpu;
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

/* The header, as MLC prints it: banner, command line, buffer size. MLC's default run prints the banner
 * only (and the command line when there is one). */
static void print_header(const struct opts *o, int argc, char **argv)
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
    else if (o->mode != MODE_C2C && o->mode != MODE_DEFAULT)
        printf("Using buffer size of %.3fMiB/thread for reads and an additional %.3fMiB/thread for writes\n",
               (double)load_len(o) / 1048576.0, (double)load_len(o) / 1048576.0);
    fflush(stdout);
}

/* One thread per CPU, the latency thread first; each pins itself and sets up its buffers (worker_init).
 * SIGINT/SIGTERM are blocked in them so that only main sees them (main installs the handlers). */
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
        c->w[i].on_node = NAN;
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
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
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

#define PART_GLOBAL 1  /* ISA and allowed CPUs, calibrations, clocks, timing */
#define PART_GROUP 2   /* the threads of one group, their buffers and huge pages, traffic, pacing */
#define PART_BLANK 4   /* a blank line after them */

/* The '#' lines: everything MLC does not print (threads, buffers, huge pages, calibrations, timing). The
 * single modes of loadlat <= 0.3 print every part at once; the default run prints the global part once and
 * each section's group part before its heading. c may be NULL without PART_GROUP. */
static void print_setup(const struct opts *o, const struct ctx *c, const struct calib *cal, const char *allowed_txt,
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

static void run_alloc(struct run *run, int planned)
{
    memset(run, 0, sizeof *run);
    run->planned = planned;
    run->res = calloc((size_t)(planned > 0 ? planned : 1), sizeof *run->res);
    if (!run->res)
        die("out of memory");
}

static void run_free(struct run *run)
{
    for (int i = 0; i < run->nres; i++) {
        free(run->res[i].ts);
        free(run->res[i].ws);
    }
    free(run->res);
    memset(run, 0, sizeof *run);
}

static void print_interrupted(int done, int planned)
{
    printf("\n# interrupted by signal %d after %d of %d points\n", (int)g_signal, done, planned);
    fflush(stdout);
    fprintf(stderr, "loadlat: interrupted after %d of %d points\n", done, planned);
}

/* Every point of a single mode (idle, loaded, peak), printed as it completes; a signal ends the run after a
 * '#' line. */
static void run_points(struct ctx *c, const struct calib *cal, struct run *run)
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

static void free_workers(struct ctx *c)
{
    for (int i = 0; i < c->nw; i++) {
        buffer_free(&c->w[i].lat);
        buffer_free(&c->w[i].rd);
        buffer_free(&c->w[i].rd2);
        buffer_free(&c->w[i].wr);
    }
    pthread_barrier_destroy(&c->bar);
    free(c->w);
    c->w = NULL;
    c->nw = 0;
}

/* ------------------------------------------------------------------ groups of threads and sections */

/* The options of one group of threads: the user's, with the worker mode (MODE_IDLE: a latency thread;
 * MODE_LOADED: a latency thread unless no_lat, and load threads; MODE_PEAK: load threads with every buffer),
 * its CPUs and its traffic. Free with free(). */
static struct opts *group_opts(const struct env *e, enum mode wmode, int lat_cpu, const int *loads, int nload,
                               const struct traffic *tr, int no_lat)
{
    struct opts *g = malloc(sizeof *g);
    if (!g)
        die("out of memory");
    *g = *e->o;
    g->mode = wmode;
    g->lat_cpu = lat_cpu;
    g->nload = nload;
    if (nload)
        memcpy(g->load_cpus, loads, sizeof(int) * (size_t)nload);
    g->tr = tr;
    g->no_lat = no_lat;
    if (wmode != MODE_LOADED || no_lat)
        g->pacing_exp = 0;  /* pacing is the loaded-latency sweep's; the other groups run at delay 0 */
    return g;
}

/* Start the threads of a group on the options g, their buffers placed on mem_node (-1: local first touch;
 * touch_cpu: a CPU of mem_node for the first touch when mbind fails). Returns 0, or -1 (threads' errors on
 * stderr, nothing left running). */
static int group_start(struct ctx *c, const struct env *e, const struct opts *g, int mem_node, int touch_cpu)
{
    memset(c, 0, sizeof *c);
    c->o = g;
    c->mem_node = mem_node;
    c->touch_cpu = touch_cpu;
    c->exp_cost_units = g->pacing_exp && e->cal.delay_ns > 0 ? e->cal.exp_cost_ns / e->cal.delay_ns : 0.0;
    c->cal_tick_ghz = e->cal.tick_ghz;
    c->cal_tick_ns = e->cal.tick_ns;
    plan_buffers(c);
    start_workers(c);
    if (!workers_ready(c)) {
        stop_workers(c);
        free_workers(c);
        return -1;
    }
    return 0;
}

static void group_end(struct ctx *c)
{
    stop_workers(c);
    free_workers(c);
}

/* Where a group's buffers went: the first placement recorded, the least fraction of pages on the node. */
static void group_placement(const struct ctx *c, const char **placement, double *on_node, const char **mbind_err)
{
    *placement = NULL;
    *on_node = NAN;
    *mbind_err = NULL;
    for (int i = 0; i < c->nw; i++) {
        const struct worker *w = &c->w[i];
        if (!*placement && w->placement)
            *placement = w->placement;
        if (!*mbind_err && w->mbind_err[0])
            *mbind_err = w->mbind_err;
        if (!isnan(w->on_node) && (isnan(*on_node) || w->on_node < *on_node))
            *on_node = w->on_node;
    }
}

/* A single-group section (peak injection, max bandwidth, loaded latency of the default run): start the
 * threads, print their '#' lines. Returns 0 or -1 (a '#' line says the section failed). */
static int single_group(struct ctx *c, struct env *e, const struct opts *g, const char *section)
{
    if (group_start(c, e, g, -1, -1) != 0) {
        e->any_failed = 1;
        printf("# %s failed: its threads could not set up their buffers (the loadlat: lines on stderr say why)\n\n",
               section);
        fflush(stdout);
        return -1;
    }
    print_setup(e->o, c, &e->cal, e->allowed_txt, &e->thp, PART_GROUP);
    return 0;
}

static void json_cell(FILE *f, int first, int cpu_node, int mem_node, const char *cpus, const char *status,
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

/* --latency_matrix and --bandwidth_matrix: MLC's "Numa node" table, rows = the node of the CPUs, columns =
 * the node of the memory. Every cell is one group of threads (latency: one latency thread on one CPU of the
 * row's node; bandwidth: load threads on the row's allowed CPUs (or its -k CPUs), reads at delay 0) whose
 * buffers are placed on the column's node. A row without an allowed CPU or a column without memory prints
 * "-". Returns 1 when interrupted. */
static int sec_matrix(struct env *e, struct jsec *js, int bandwidth)
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
    char rows_txt[1024] = "";
    for (int i = 0, pos = 0; i < n && pos < (int)sizeof rows_txt - 40; i++) {
        char list[256] = "none";
        int k = bandwidth ? section_loads(e, -1, i, cpus) : (rowcpu[i] >= 0 ? (cpus[0] = rowcpu[i], 1) : 0);
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
    for (int i = 0; i < n && !stop; i++) {
        printf("%8d\t", t->node[i]);
        fflush(stdout);
        int k = bandwidth ? section_loads(e, -1, i, cpus) : (rowcpu[i] >= 0 ? (cpus[0] = rowcpu[i], 1) : 0);
        char list[256] = "";
        if (k)
            cpu_list_format(cpus, k, list, sizeof list);
        for (int j = 0; j < n && !stop; j++) {
            double v = NAN;
            const char *status = "ok", *why = NULL, *placement = NULL, *mbind_err = NULL;
            double on_node = NAN;
            char whybuf[200];
            if (!k) {
                status = "not measured";
                why = "no allowed CPU on this node";
            } else if (t->mem_kib[j] == 0) {
                status = "not measured";
                why = "no memory on this node";
            } else {
                struct opts *g = bandwidth ? group_opts(e, MODE_LOADED, -1, cpus, k, o->tr, 1)
                                           : group_opts(e, MODE_IDLE, cpus[0], NULL, 0, traffic_lookup("R"), 0);
                static struct ctx c;
                if (group_start(&c, e, g, t->node[j], node_first_allowed(e, j)) != 0) {
                    status = "failed";
                    why = "the threads could not set up their buffers (see the loadlat: lines on stderr)";
                    e->any_failed = 1;
                } else {
                    struct run run;
                    run_alloc(&run, 1);
                    if (run_point(&c, g->tr, 0, &run.res[0])) {
                        stop = 1;
                        status = "interrupted";
                    } else {
                        run.nres = 1;
                        done++;
                        struct result *r = &run.res[0];
                        group_placement(&c, &placement, &on_node, &mbind_err);
                        if (r->ok) {
                            v = bandwidth ? r->bw_MBps : r->latency_ns;
                        } else {
                            status = "failed";
                            snprintf(whybuf, sizeof whybuf, "%s", r->why);
                            why = whybuf;
                            e->any_failed = 1;
                            fprintf(stderr, "loadlat: %s matrix cell %d,%d failed: %s\n",
                                    bandwidth ? "bandwidth" : "latency", t->node[i], t->node[j], r->why);
                        }
                        char extra[300];
                        snprintf(extra, sizeof extra, ", \"cpu_node\": %d, \"mem_node\": %d, \"placement\": \"%s\", "
                                 "\"pages_on_node\": ", t->node[i], t->node[j], placement ? placement : "none");
                        size_t l = strlen(extra);
                        if (isfinite(on_node))
                            snprintf(extra + l, sizeof extra - l, "%.4g", on_node);
                        else
                            snprintf(extra + l, sizeof extra - l, "null");
                        jsec_workers(js, &c);
                        jsec_points(js, &c, &e->cal, &run, 0, 1, extra);
                    }
                    run_free(&run);
                    group_end(&c);
                }
                free(g);
            }
            if (stop)
                break;
            vals[i * n + j] = v;
            json_cell(cf, ncell++ == 0, t->node[i], t->node[j], list, status, v, placement, on_node, mbind_err, why);
            if (isfinite(v))
                printf(bandwidth ? "%.1f\t" : "%6.1f\t", v);
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
    fputs(",\n  \"numa\": ", js->xf);
    json_numa(js->xf, t);
    fprintf(js->xf, ",\n  \"matrix\": {\"quantity\": \"%s\", \"rows\": \"node of the CPUs\", \"columns\": \"node of "
                    "the memory\", \"nodes\": [", bandwidth ? "bandwidth_MBps" : "latency_ns");
    for (int j = 0; j < n; j++)
        fprintf(js->xf, "%s%d", j ? ", " : "", t->node[j]);
    fputs("], \"values\": [", js->xf);
    for (int i = 0; i < n; i++) {
        fputs(i ? ", [" : "[", js->xf);
        for (int j = 0; j < n; j++) {
            if (j)
                fputs(", ", js->xf);
            json_num(js->xf, vals[i * n + j]);
        }
        fputc(']', js->xf);
    }
    fputs("],\n    \"cells\": [", js->xf);
    fwrite(cells, 1, cells_len, js->xf);
    fputs("]}", js->xf);
    free(cells);
    free(vals);
    free(rowcpu);
    return stop;
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
    jsec_workers(js, &c);
    for (int i = 0; i < run.nres; i++) {
        char extra[120];
        snprintf(extra, sizeof extra, ", \"mix\": \"%s\", \"best\": %s", MIX_CODES[mix_of[i]],
                 i == best_i[mix_of[i]] ? "true" : "false");
        jsec_points(js, &c, &e->cal, &run, i, i + 1, extra);
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
        json_num(js->xf, best_i[m] >= 0 ? run.res[best_i[m]].bw_MBps : NAN);
        fputs(", \"best_delay\": ", js->xf);
        if (best_i[m] >= 0)
            fprintf(js->xf, "%llu", (unsigned long long)run.res[best_i[m]].delay);
        else
            fputs("null", js->xf);
        fputs(", \"delays\": [", js->xf);
        int k = 0;
        for (int i = 0; i < run.nres; i++)
            if (mix_of[i] == m)
                fprintf(js->xf, "%s%llu", k++ ? ", " : "", (unsigned long long)run.res[i].delay);
        fputs("], \"bandwidths_MBps\": [", js->xf);
        k = 0;
        for (int i = 0; i < run.nres; i++)
            if (mix_of[i] == m) {
                if (k++)
                    fputs(", ", js->xf);
                json_num(js->xf, run.res[i].ok ? run.res[i].bw_MBps : NAN);
            }
        fputs("]}", js->xf);
    }
    fputs("\n  ]", js->xf);
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
static int sec_c2c(struct env *e, struct jsec *js)
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

static int run_section(struct env *e, enum mode m, struct jsec *js)
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
    c.mem_node = c.touch_cpu = -1;
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

/* ------------------------------------------------------------------ main */

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
    if (o.mode == MODE_IDLE || o.mode == MODE_LOADED || o.mode == MODE_PEAK)
        return run_single(&e, &o);

    char err[300];
    if (numa_read(&e.topo, e.allowed, e.nallowed, err, sizeof err) != 0)
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
    char nodes_txt[1024] = "";
    for (int i = 0, pos = 0; i < e.topo.n && pos < (int)sizeof nodes_txt - 60; i++) {
        char list[256] = "none";
        if (e.topo.ncpu[i])
            cpu_list_format(e.topo.cpu[i], e.topo.ncpu[i], list, sizeof list);
        pos += snprintf(nodes_txt + pos, sizeof nodes_txt - (size_t)pos, "%snode %d: CPUs %s", i ? "; " : "",
                        e.topo.node[i], list);
        if (e.topo.mem_kib[i] >= 0)
            pos += snprintf(nodes_txt + pos, sizeof nodes_txt - (size_t)pos, ", %.1f GiB",
                            (double)e.topo.mem_kib[i] / 1048576.0);
    }
    printf("# numa: %d node%s (%s) from %s; memory placed on its node with mbind(MPOL_BIND) before the first "
           "touch (first touch from a CPU of the node when mbind fails)\n",
           e.topo.n, e.topo.n > 1 ? "s" : "", nodes_txt, e.topo.source);
    if (o.mode == MODE_MAXBW || o.mode == MODE_BWMAT)
        printf("\n");
    fflush(stdout);

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
