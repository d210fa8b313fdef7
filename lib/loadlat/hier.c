/* loadlat - an open, MLC-compatible loaded-latency tool (memstor).
 *
 * hier.c: what the memory-hierarchy modes (--working_set, --mlp; hier.h) share: their options and checks,
 * the caches the kernel reports (sysfs), the setup (calibration, header, '#' lines), the JSON head and file,
 * and percentiles of batch times.
 */
#include "hier.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------- options */

static uint64_t word_u64(const char *opt, const char *v, uint64_t lo, uint64_t hi, const char *want)
{
    char *end;
    errno = 0;
    unsigned long long x = (*v >= '0' && *v <= '9') ? strtoull(v, &end, 10) : 0;
    if (*v < '0' || *v > '9' || errno || *end || x < lo || x > hi)
        die_usage("%s%s: %s", opt, v, want);
    return (uint64_t)x;
}

/* --chains=1,2,4,8,16: each 1..MAX_CHAINS, each once. */
static void parse_chains(struct opts *o, const char *v)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", v);
    o->nchains = 0;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        uint64_t n = word_u64("--chains=", tok, 1, MAX_CHAINS, "give chain counts 1..64 separated by commas, "
                              "e.g. --chains=1,2,4,8,16");
        for (int i = 0; i < o->nchains; i++)
            if (o->chains[i] == (int)n)
                die_usage("--chains=%s: %llu listed twice", v, (unsigned long long)n);
        if (o->nchains >= MAX_CHAINS)
            die_usage("--chains=%s: at most %d counts", v, MAX_CHAINS);
        o->chains[o->nchains++] = (int)n;
    }
    if (o->nchains == 0)
        die_usage("--chains=%s: give chain counts, e.g. --chains=1,2,4,8,16", v);
}

int hier_parse_word(struct opts *o, const char *a)
{
    if (strncmp(a, "--max-size=", 11) == 0) {
        o->max_size = parse_kib("--max-size=", a + 11);
    } else if (strncmp(a, "--per-octave=", 13) == 0) {
        o->per_octave = (int)word_u64("--per-octave=", a + 13, 1, 64, "sizes per doubling must be 1..64 (default 4)");
    } else if (strncmp(a, "--stride=", 9) == 0) {
        o->stride = (size_t)word_u64("--stride=", a + 9, 8, 1 << 20, "stride in bytes, 8..1048576");
        if (o->stride % 8)
            die_usage("--stride=%s: the stride must be a multiple of 8 bytes (one pointer)", a + 9);
    } else if (strncmp(a, "--accesses=", 11) == 0) {
        o->accesses = word_u64("--accesses=", a + 11, 1024, 1000000000000ull,
                               "dependent loads per size and pass, 1024..10^12 (default: -t seconds)");
    } else if (strncmp(a, "--batch=", 8) == 0) {
        o->batch = (int)word_u64("--batch=", a + 8, 16, 65536, "loads per timed batch must be 16..65536 (default 256)");
    } else if (strncmp(a, "--chains=", 9) == 0) {
        parse_chains(o, a + 9);
    } else if (strcmp(a, "--mlp-all-cores") == 0) {
        o->mlp_all = 1;
    } else {
        return 0;
    }
    return 1;
}

void hier_check_options(const struct opts *o)
{
    const char *ws_opt = o->max_size ? "--max-size" : o->per_octave ? "--per-octave" : o->stride ? "--stride"
                         : o->accesses ? "--accesses" : o->batch ? "--batch" : NULL;
    const char *mlp_opt = o->nchains ? "--chains" : o->mlp_all ? "--mlp-all-cores" : NULL;
    const char *bad = o->mode != MODE_WSET && ws_opt ? ws_opt : o->mode != MODE_MLP && mlp_opt ? mlp_opt : NULL;
    if (bad) {
        if (o->mode == MODE_DEFAULT)
            die_usage("%s does not apply to the default run (no mode option)", bad);
        die_usage("%s does not apply to --%s", bad, MODE_NAMES[o->mode]);
    }
    if (o->mode == MODE_WSET && o->b_given)
        die_usage("-b does not apply to --working_set: give the largest working set with --max-size (default "
                  "%d x the last-level cache)", WS_LLC_FACTOR);
    if (o->mode == MODE_WSET && o->max_size && o->max_size < WS_MIN_BYTES)
        die_usage("--max-size: the largest working set must be at least 4 KiB (4k)");
    if (o->mode == MODE_WSET && o->stride && o->max_size && o->stride > o->max_size)
        die_usage("--stride=%zu: larger than --max-size", o->stride);
}

/* ------------------------------------------------------------------------------------- caches */

static size_t parse_cache_size(const char *s)  /* "32K", "1024K", "16M", "32768K" -> bytes; 0 unreadable */
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s)
        return 0;
    if (*end == 'K' || *end == 'k')
        v *= 1024;
    else if (*end == 'M' || *end == 'm')
        v *= 1024 * 1024;
    else if (*end == 'G' || *end == 'g')
        v *= 1024ull * 1024 * 1024;
    return (size_t)v;
}

static int read_word(const char *dir, int idx, const char *name, char *out, size_t len)
{
    char path[600];
    snprintf(path, sizeof path, "%s/index%d/%s", dir, idx, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int ok = fgets(out, (int)len, f) != NULL;
    fclose(f);
    if (!ok)
        return -1;
    out[strcspn(out, "\r\n")] = '\0';
    return 0;
}

void caches_read(struct caches *k)
{
    memset(k, 0, sizeof *k);
    const char *dir = getenv("LOADLAT_CPU_DIR");
    snprintf(k->source, sizeof k->source, "%s/cpu0/cache", dir && *dir ? dir : "/sys/devices/system/cpu");
    for (int i = 0; i < 32 && k->n < HIER_MAX_CACHES; i++) {
        char level[32], type[32], size[32];
        if (read_word(k->source, i, "level", level, sizeof level) != 0 ||
            read_word(k->source, i, "type", type, sizeof type) != 0 ||
            read_word(k->source, i, "size", size, sizeof size) != 0)
            continue;
        struct cache_desc *c = &k->c[k->n];
        c->level = atoi(level);
        snprintf(c->type, sizeof c->type, "%s", type);
        c->bytes = parse_cache_size(size);
        if (c->level <= 0 || c->bytes == 0)
            continue;
        k->n++;
        if (strcmp(type, "Instruction") != 0 && c->level >= k->llc_level) {
            k->llc_level = c->level;
            k->llc_bytes = c->bytes;
        }
    }
}

/* ------------------------------------------------------------------------------------- setup */

int clocks_known(const struct calib *cal) { return cal->core_check && strcmp(cal->core_check, "ok") == 0; }

void print_clocks_cell(double ns, const struct calib *cal)
{
    if (clocks_known(cal))
        printf("%7.1f", ns * cal->core_ghz);
    else
        printf("unknown");
}

void hier_setup(struct env *e, int cpu, const struct caches *k)
{
    const struct opts *o = e->o;
    calibrate(&e->cal, o, cpu);
    read_thp(&e->thp);
    print_header(o, e->argc, e->argv);
    printf("# loadlat v%s: allowed CPUs %s; measuring CPU %d\n", LOADLAT_VERSION, e->allowed_txt, cpu);
    if (clocks_known(&e->cal))
        printf("# clocks: core %.3f GHz (%s; check: ok), TSC %.3f GHz; core clocks = ns x core GHz\n",
               e->cal.core_ghz, CORE_GHZ_METHOD, e->cal.tsc_ghz);
    else
        printf("# clocks: core clocks unknown (the core clock estimate %.3f GHz is %s); only ns are given\n",
               e->cal.core_ghz, e->cal.core_check);
    printf("# caches (%s):", k->source);
    for (int i = 0; i < k->n; i++)
        printf("%s L%d %s %zu KiB", i ? "," : "", k->c[i].level, k->c[i].type, k->c[i].bytes / 1024);
    if (k->llc_bytes)
        printf("; last level: L%d, %zu KiB\n", k->llc_level, k->llc_bytes / 1024);
    else
        printf(" none reported (no sysfs cache information)\n");
    fflush(stdout);
}

void hier_json_head(FILE *f, const struct env *e, const char *mode, const struct caches *k)
{
    fprintf(f, "{\n  \"tool\": \"loadlat\",\n  \"version\": \"%s\",\n  \"command\": ", LOADLAT_VERSION);
    json_command(f, e->argc, e->argv);
    fprintf(f, ",\n  \"mode\": \"%s\",\n  \"isa\": \"%s\",\n  \"online_cpus\": %ld,\n  \"allowed_cpus\": ", mode,
            load_isa(), sysconf(_SC_NPROCESSORS_ONLN));
    json_str(f, e->allowed_txt);
    fputs(",\n  \"calibration\": ", f);
    json_calibration(f, &e->cal);
    fprintf(f, ",\n  \"core_clocks_known\": %s,\n  \"core_clocks_note\": ", clocks_known(&e->cal) ? "true" : "false");
    json_str(f, clocks_known(&e->cal) ? "core clocks = ns x calibration.core_ghz"
                                      : "unknown: the core clock estimate failed its check (calibration.core_ghz_check)");
    fputs(",\n  \"caches\": {\"source\": ", f);
    json_str(f, k->source);
    fputs(", \"llc_bytes\": ", f);
    if (k->llc_bytes)
        fprintf(f, "%zu, \"llc_level\": %d", k->llc_bytes, k->llc_level);
    else
        fputs("null, \"llc_level\": null", f);
    fputs(", \"list\": [", f);
    for (int i = 0; i < k->n; i++) {
        fprintf(f, "%s{\"level\": %d, \"type\": ", i ? ", " : "", k->c[i].level);
        json_str(f, k->c[i].type);
        fprintf(f, ", \"bytes\": %zu}", k->c[i].bytes);
    }
    fputs("]}", f);
}

FILE *hier_json_open(const char *path, char *tmp, size_t len)
{
    snprintf(tmp, len, "%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        die("--json: cannot write %s: %s", tmp, strerror(errno));
    return f;
}

void hier_json_close(FILE *f, const char *tmp, const char *path)
{
    fputc('\n', f);
    if (ferror(f) || fclose(f) != 0) {
        remove(tmp);
        die("--json: write to %s failed", tmp);
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        remove(tmp);
        die("--json: cannot rename %s to %s: %s", tmp, path, strerror(e));
    }
}

/* ------------------------------------------------------------------------------------- statistics */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

void sort_u64(uint64_t *v, size_t n) { qsort(v, n, sizeof *v, cmp_u64); }

double percentile_u64(const uint64_t *sorted, size_t n, double q)
{
    if (n == 0)
        return 0.0;
    size_t rank = (size_t)((double)n * q + 0.999999999);  /* ceil(n q), the nearest rank */
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return (double)sorted[rank - 1];
}
