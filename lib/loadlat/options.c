/* loadlat - an open, MLC-compatible loaded-latency tool (memstor).
 *
 * options.c: the modes, the command line (MLC's syntax: values attached to the option letter), the usage
 * text and usage errors, and the CPUs of a run and of each section (checked against the affinity mask).
 */
#include "hier.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const MODE_NAMES[] = {"",  "idle_latency", "loaded_latency", "peak_injection_bandwidth",
                                  "latency_matrix", "bandwidth_matrix", "max_bandwidth", "c2c_latency",
                                  "default", "working_set", "mlp"};

/* The sections of the default run, in their order (MLC's, with max bandwidth beside peak injection). */
const enum mode DEFAULT_SECTIONS[N_DEFAULT_SECTIONS] = {MODE_LATMAT, MODE_PEAK,   MODE_MAXBW,
                                                        MODE_BWMAT,  MODE_LOADED, MODE_C2C};

/* MLC's default inject delays for --loaded_latency. */
static const uint64_t MLC_DELAYS[] = {0,   2,   8,   15,   50,   100,  200,  300,  400, 500,
                                      700, 1000, 1300, 1700, 2500, 3500, 5000, 9000, 20000};

void die_usage(const char *fmt, ...)
{
    va_list ap;
    fputs("loadlat: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(" (see loadlat --help)\n", stderr);
    exit(2);
}

void die(const char *fmt, ...)
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
        "  --working_set              latency of one dependent chain vs buffer size, 4 KiB to 4 x the\n"
        "                             last-level cache (-c, -t per size, -L, and the options below)\n"
        "  --mlp                      memory-level parallelism: N independent random chains in one\n"
        "                             thread, latency and bandwidth per N (-b, -c, -t per N, -L)\n"
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
        "  --read_share=P  traffic: P %% of the DRAM traffic is reads (0..100), by construction: plain\n"
        "                writes (read for ownership + write-back) from 50 up (90 = 8 reads, 1 write), non-\n"
        "                temporal below (40 = 2 reads, 3 NT writes); 100, 80, 75, 0 = -R, -W3, -W2, -W6\n"
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
        "  --max-size=<n>[k|m|g]  --working_set: largest buffer (KiB or suffix; default 4 x the LLC)\n"
        "  --per-octave=N  --working_set: sizes per doubling of the buffer (default 4)\n"
        "  --stride=N    --working_set: sequential chain, a pointer every N bytes (default: random)\n"
        "  --accesses=N  --working_set: loads per size and pass instead of -t seconds\n"
        "  --batch=N     --working_set: loads per timed batch of the percentiles (default 256)\n"
        "  --chains=LIST  --mlp: chain counts, e.g. 1,2,4,8,16 (default 1,2,4,8,16,32)\n"
        "  --mlp-all-cores  --mlp: each count also on every CPU at once (-c and -k, default all)\n"
        "  -h, --help    this text\n");
}

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

size_t parse_kib(const char *opt, const char *s)
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

static void set_read_share(struct opts *o, const char *a);

static void set_mode(struct opts *o, enum mode m)
{
    if (o->mode != MODE_NONE && o->mode != m)
        die_usage("give only one mode (--%s and --%s both given)", MODE_NAMES[o->mode], MODE_NAMES[m]);
    o->mode = m;
}

/* A word option (--mode, --pacing, --windows, --sample-delays, --json, --help / -h) at argv[*i]; --pacing
 * and --json may take the next argument (*i advances). Anything else is a usage error. */
static void parse_word(struct opts *o, int argc, char **argv, int *i)
{
    static const struct {
        const char *word;
        enum mode mode;
    } modes[] = {{"--idle_latency", MODE_IDLE},     {"--loaded_latency", MODE_LOADED},
                 {"--peak_injection_bandwidth", MODE_PEAK}, {"--latency_matrix", MODE_LATMAT},
                 {"--bandwidth_matrix", MODE_BWMAT}, {"--max_bandwidth", MODE_MAXBW},
                 {"--c2c_latency", MODE_C2C}, {"--working_set", MODE_WSET}, {"--mlp", MODE_MLP}};
    const char *a = argv[*i];
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++)
        if (strcmp(a, modes[m].word) == 0) {
            set_mode(o, modes[m].mode);
            return;
        }
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
        usage(stdout);
        exit(0);
    } else if (strncmp(a, "--pacing=", 9) == 0 || strcmp(a, "--pacing") == 0) {
        const char *v = a[8] == '=' ? a + 9 : (*i + 1 < argc ? argv[++*i] : "");
        if (strcmp(v, "fixed") == 0)
            o->pacing_exp = 0;
        else if (strcmp(v, "exp") == 0)
            o->pacing_exp = 1;
        else
            die_usage("--pacing=%s: use --pacing=fixed (MLC's fixed delay loop, the default) or --pacing=exp "
                      "(exponential delays with the same mean)", v);
        o->pacing_given = 1;
    } else if (strncmp(a, "--read_share=", 13) == 0) {
        set_read_share(o, a);
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
        if (*i + 1 >= argc)
            die_usage("--json needs a file name (--json=FILE)");
        o->json = argv[++*i];
    } else if (!hier_parse_word(o, a)) {
        die_usage("unknown option '%s'", a);
    }
}

/* One traffic type for the run, chosen by option `flag` (-R, -W<n> or --read_share=P): a second, different
 * choice is refused. */
static void choose_traffic(struct opts *o, const struct traffic *t, const char *flag)
{
    if (o->tr_given && o->tr != t)
        die_usage("%s and %s both given: choose one traffic type", o->tr_flag, flag);
    o->tr = t;
    o->tr_given = 1;
    o->tr_flag = flag;
}

/* -R, or -W<code> (v: the text after the W): one traffic type for the run. */
static void set_traffic(struct opts *o, const char *a, const char *v)
{
    if (a[1] == 'R') {
        if (*v)
            die_usage("unknown option '%s'", a);
        choose_traffic(o, traffic_lookup("R"), a);
        return;
    }
    char code[16];
    snprintf(code, sizeof code, "W%s", v);
    const struct traffic *t = strlen(v) < 4 ? traffic_lookup(code) : NULL;
    if (!t)
        die_usage("unknown traffic code '-W%s' (use -R or -W2, -W3, -W4, -W5, -W6, -W7, -W8, "
                  "-W9, -W10, or --read_share=P for P %% DRAM reads)", v);
    choose_traffic(o, t, a);
}

/* --read_share=P (a: the whole argument): P % of the DRAM traffic reads (kernels.c traffic_share). */
static void set_read_share(struct opts *o, const char *a)
{
    uint64_t x;
    if (parse_u64(a + 13, &x) != 0 || x > 100)
        die_usage("%s: the read share is a whole percentage 0..100 of the DRAM traffic, e.g. --read_share=70",
                  a);
    choose_traffic(o, traffic_share((int)x), a);
}

/* A letter option (-b, -l, -d, -g, -t, -c, -k, -R, -W, -r, -U, -L, -T, -e), its value attached (MLC). */
static void parse_letter(struct opts *o, const char *a)
{
    const char *v = a + 2;
    uint64_t x;
    switch (a[1]) {
    case 'b':
        o->lat_bytes = o->load_bytes = parse_kib("-b", v);
        o->b_given = 1;
        break;
    case 'l':
        if (parse_u64(v, &x) != 0 || x < 64 || x % 64 || x > (1u << 20))
            die_usage("-l%s: access size must be a multiple of 64 bytes between 64 and 1048576", v);
        o->access = (size_t)x;
        break;
    case 'd':
        if (parse_u64(v, &x) != 0 || x > 1000000000ull)
            die_usage("-d%s: delay must be a whole number 0..1000000000", v);
        if (o->d_given)
            die_usage("-d given twice (use -g<file> for several delays)");
        o->delays[0] = x;
        o->ndelays = 1;
        o->d_given = 1;
        break;
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
    case 'c':
        if (parse_u64(v, &x) != 0 || x >= CPU_SETSIZE)
            die_usage("-c%s: expected a CPU number, e.g. -c0", v);
        o->lat_cpu = (int)x;
        o->c_given = 1;
        break;
    case 'k': {
        char err[200];
        int n = cpu_list_parse(v, o->load_cpus, LOADLAT_MAX_CPUS, err, sizeof err);
        if (n < 0)
            die_usage("-k%s: %s", v, err);
        o->nload = n;
        o->k_given = 1;
        break;
    }
    case 'R':
    case 'W':
        set_traffic(o, a, v);
        break;
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
}

/* Refuse options the mode does not take. */
static void check_mode_options(const struct opts *o)
{
    /* which options each mode takes: -d/-g/--pacing go to a loaded-latency sweep (also the default
     * run's), -R/-W to the traffic of loaded latency and the bandwidth matrix, -k to load threads (and
     * the c2c writer), -c to a latency thread (and the c2c reader) */
    enum mode m = o->mode;
    int sweep = m == MODE_DEFAULT, traffic = m == MODE_DEFAULT || m == MODE_BWMAT;
    int k_ok = m != MODE_IDLE && m != MODE_LATMAT && m != MODE_WSET;
    int c_ok = m == MODE_IDLE || m == MODE_LATMAT || m == MODE_C2C || m == MODE_DEFAULT || m == MODE_WSET ||
               m == MODE_MLP;
    const char *tr_opt = o->tr_given ? o->tr_flag : NULL;
    const char *bad = !sweep && o->d_given ? "-d" : !sweep && o->g_given ? "-g" : o->no_lat ? "-T"
                      : !sweep && o->pacing_given ? "--pacing" : !traffic && tr_opt ? tr_opt
                      : !k_ok && o->k_given ? "-k" : !c_ok && o->c_given ? "-c" : NULL;
    if (bad) {
        if (m == MODE_DEFAULT)
            die_usage("%s does not apply to the default run (no mode option)", bad);
        die_usage("%s does not apply to --%s", bad, MODE_NAMES[m]);
    }
}

void parse_args(int argc, char **argv, struct opts *o)
{
    memset(o, 0, sizeof *o);
    o->lat_bytes = DEFAULT_LAT_BYTES;
    o->load_bytes = DEFAULT_LOAD_BYTES;
    o->access = 64;
    o->seconds = 2.0;
    o->nwin = 5;
    o->tr = traffic_lookup("R");

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] == '-' && a[1] && a[1] != '-' && strcmp(a, "-h") != 0)
            parse_letter(o, a);
        else
            parse_word(o, argc, argv, &i);
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
    if (o->mode != MODE_LOADED)
        check_mode_options(o);
    hier_check_options(o);  /* hier.c: the options of --working_set and --mlp */
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

int in_node(const struct numa_topo *t, int idx, int cpu) { return cpu_list_has(cpu, t->cpu[idx], t->ncpu[idx]); }

/* The first allowed CPU of node index idx, -1 when none. */
int node_first_allowed(const struct env *e, int idx)
{
    for (int i = 0; i < e->nallowed; i++)
        if (in_node(&e->topo, idx, e->allowed[i]))
            return e->allowed[i];
    return -1;
}

/* Load CPUs of a section: the -k list, else every allowed CPU; without `skip`; only those of node index
 * `node_idx` when >= 0. Returns the count. */
int section_loads(const struct env *e, int skip, int node_idx, int *out)
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
void resolve_cpus(struct opts *o, struct env *e)
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
    int use_lat = uses_lat_thread(o) || o->mode == MODE_LATMAT || o->mode == MODE_C2C || o->mode == MODE_DEFAULT ||
                  o->mode == MODE_WSET || o->mode == MODE_MLP;  /* the measuring CPU of the hierarchy modes too */
    if (use_lat) {
        if (!o->c_given)
            o->lat_cpu = allowed[0];
        if (!cpu_list_has(o->lat_cpu, allowed, nallowed))
            die_usage("-c%d: CPU %d is not available to this process (allowed CPUs: %s)", o->lat_cpu, o->lat_cpu,
                      allowed_txt);
    }
    if (o->mode == MODE_IDLE || o->mode == MODE_LATMAT || o->mode == MODE_WSET) {
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
