/* ioarrive - memstor's arrival-driven (open-loop) I/O generator.
 *
 * options.c: the command line (every option takes its value as the next word or after '='), the usage
 * text and the usage errors: one line `ioarrive: ...` on stderr, exit status 2.
 */
#include "ioarrive.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const char *const DIR_NAMES[NDIR] = {"read", "write"};
const char *const PROC_NAMES[] = {"none", "poisson", "constant", "trace"};
const char *const ENGINE_NAMES[] = {"auto", "io_uring", "libaio", "sync", "sim"};

void die_usage(const char *fmt, ...)
{
    va_list ap;
    fputs("ioarrive: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(" (see ioarrive --help)\n", stderr);
    exit(2);
}

void die(const char *fmt, ...)
{
    va_list ap;
    fputs("ioarrive: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void usage(FILE *f)
{
    fprintf(f,
        "ioarrive - v" IOARRIVE_VERSION "\n"
        "memstor's arrival-driven (open-loop) I/O generator: each I/O is issued at its intended arrival time\n"
        "whatever is in flight; response = completion - intended arrival, service = completion - submission,\n"
        "lag = submission - intended arrival. JSON on stdout (or --json FILE).\n"
        "\n"
        "USAGE: ioarrive --target PATH --confirm-target PATH --rate IOPS [options]\n"
        "       ioarrive --sim servers=C,service=det:US|exp:US|hist:FILE[,read-service=SPEC][,write-service=SPEC]\n"
        "                [--virtual] --rate IOPS [options]\n"
        "\n"
        "  --target PATH, --confirm-target PATH  the file or block device, named twice (must match); a file\n"
        "                         must exist (ioarrive never creates one); a mounted block device is refused\n"
        "  --bs SIZE              bytes per I/O (default 4k; suffix k/m/g = KiB/MiB/GiB)\n"
        "  --rate IOPS            offered rate, both directions together, split by --read-share\n"
        "  --read-share P         percent of --rate that is reads, 0-100 (default 100)\n"
        "  --read-rate IOPS, --write-rate IOPS   per-direction offered rates (instead of --rate)\n"
        "  --arrival PROC         both directions' arrival process: poisson (default), constant, trace:FILE\n"
        "  --read-arrival PROC, --write-arrival PROC   one direction's process\n"
        "                         trace:FILE replays lines 'time_s op offset size' (op r|read|w|write) of\n"
        "                         that direction's op, looped; a rate given rescales its time\n"
        "  --pattern random|sequential   offsets (default random; trace: the file's)\n"
        "  --span SIZE            bytes of the target used from offset 0 (default: all)\n"
        "  --runtime S            measured seconds (default 10)    --ramp S   seconds before (default 0)\n"
        "  --drain S              wait at most S for I/Os in flight at the end (default 10)\n"
        "  --engine E             auto (default), io_uring, libaio, sync\n"
        "  --threads N            sync engine: threads of the pool (default 64)\n"
        "  --max-outstanding N    cap on I/Os in flight (default 4096): reaching it stops the run, marked\n"
        "                         overloaded\n"
        "  --buffered             no O_DIRECT (default: O_DIRECT)\n"
        "  --seed N               random seed (default 1)\n"
        "  --spin-us US           sleep until US before an arrival, then spin (default 50)\n"
        "  --pause-probe S        before the run, spin S seconds on each CPU with no I/O and report the machine's\n"
        "                         pauses (gaps >= 50 us between clock reads; default 0: none)\n"
        "  --lag-fraction F       generator-bound: p99 lag > max(F x p99 response, floor) (default 0.1)\n"
        "  --lag-floor-us US      the floor (default 20)\n"
        "  --check-sample N       arrivals sampled for the arrival tests (default 5000)\n"
        "  --check-as P           test the arrivals against: asked (default), poisson, constant, none\n"
        "  --move-us US           the submitted arrivals may each move by US (default: the run's p99 lag);\n"
        "                         beyond the gaps' tolerance they are tested by counts in windows 20 x US\n"
        "  --ks-tolerance-us US   the submitted gaps' KS test lets each gap move by up to US (default 5),\n"
        "                         at most 5 %% of the mean gap\n"
        "  --rt-priority N        run the submitter and the reaper SCHED_FIFO at priority N (1-99; needs\n"
        "                         CAP_SYS_NICE; default 0: the normal scheduler)\n"
        "  --sim servers=C,service=det:US|exp:US|hist:FILE   a simulated device (no target): C FIFO servers,\n"
        "                         service time deterministic, exponential (mean US) or from a histogram file\n"
        "                         of lines 'value_us count'; read-service=SPEC, write-service=SPEC: one\n"
        "                         direction's service time (two classes sharing the servers, first come first\n"
        "                         served), e.g. servers=2,service=exp:50,write-service=det:400\n"
        "                         queue=Q (real time): a submission waits while Q I/Os are in the device, as\n"
        "                         the kernel's request queue makes a submit call wait (default: no limit)\n"
        "  --virtual              with --sim: virtual time (event-driven: no sleeping, no real I/O)\n"
        "  --json FILE            write the JSON to FILE instead of stdout\n"
        "  --help, --version\n");
}

static double num(const char *opt, const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v))
        die_usage("%s: '%s' is not a number", opt, s);
    return v;
}

double parse_size_or_die(const char *opt, const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !isfinite(v) || v < 0)
        die_usage("%s: '%s' is not a size (bytes, or k/m/g/t suffix)", opt, s);
    double mult = 1;
    switch (*end) {
    case 0: break;
    case 'k': case 'K': mult = 1024.0; end++; break;
    case 'm': case 'M': mult = 1048576.0; end++; break;
    case 'g': case 'G': mult = 1073741824.0; end++; break;
    case 't': case 'T': mult = 1099511627776.0; end++; break;
    default: die_usage("%s: '%s' is not a size (bytes, or k/m/g/t suffix)", opt, s);
    }
    if (*end == 'i' || *end == 'I') end++;
    if (*end == 'b' || *end == 'B') end++;
    if (*end)
        die_usage("%s: '%s' is not a size (bytes, or k/m/g/t suffix)", opt, s);
    return v * mult;
}

static double positive_rate(const char *opt, const char *s)
{
    double v = num(opt, s);
    if (v <= 0)
        die_usage("%s: the rate must be > 0 IOPS (got %s)", opt, s);
    return v;
}

static enum proc_kind parse_proc(struct job *j, const char *opt, const char *s)
{
    if (!strcmp(s, "poisson")) return PROC_POISSON;
    if (!strcmp(s, "constant")) return PROC_CONSTANT;
    if (!strncmp(s, "trace:", 6) && s[6]) {
        if (j->trace_path && strcmp(j->trace_path, s + 6))
            die_usage("%s: one trace file per run (got %s and %s)", opt, j->trace_path, s + 6);
        j->trace_path = s + 6;
        return PROC_TRACE;
    }
    die_usage("%s: '%s' is not an arrival process (poisson, constant or trace:FILE)", opt, s);
}

/* One class's service time: det:US, exp:US or hist:FILE (the histogram is read once the options are known). */
static void parse_service(struct svc_cfg *svc, const char *key, const char *spec)
{
    if (!strncmp(spec, "det:", 4) || !strncmp(spec, "exp:", 4)) {
        double us = num("--sim service", spec + 4);
        if (us <= 0)
            die_usage("--sim: the service time must be > 0 us (got %s=%s)", key, spec);
        svc->kind = spec[0] == 'd' ? SVC_DET : SVC_EXP;
        svc->mean_ns = us * 1e3;
        svc->m2_ns2 = (svc->kind == SVC_DET ? 1.0 : 2.0) * svc->mean_ns * svc->mean_ns;
        svc->hist_path = NULL;
    } else if (!strncmp(spec, "hist:", 5) && spec[5]) {
        svc->kind = SVC_HIST;
        svc->hist_path = strdup(spec + 5);
    } else {
        die_usage("--sim: %s='%s' is not det:US, exp:US or hist:FILE", key, spec);
    }
    svc->given = 1;
}

/* --sim servers=C,service=SPEC[,read-service=SPEC][,write-service=SPEC]: service= is both directions' service
 * time, read-service= and write-service= one direction's (they win over service= in any order). */
static void parse_sim(struct job *j, const char *s)
{
    static const char *const KEYS[] = {"service=", "read-service=", "write-service="};
    char buf[1024];
    if (strlen(s) >= sizeof buf)
        die_usage("--sim: too long");
    strcpy(buf, s);
    j->sim.on = 1;
    j->sim.servers = 1;
    struct svc_cfg svc[3] = {{0}};  /* service=, read-service=, write-service= */
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int k = 0;
        while (k < 3 && strncmp(tok, KEYS[k], strlen(KEYS[k]))) k++;
        if (!strncmp(tok, "servers=", 8)) {
            double c = num("--sim servers", tok + 8);
            if (c < 1 || c > 4096 || c != floor(c))
                die_usage("--sim: servers=%s must be a whole number 1-4096", tok + 8);
            j->sim.servers = (int)c;
        } else if (!strncmp(tok, "queue=", 6)) {
            double q = num("--sim queue", tok + 6);
            if (q < 1 || q > 65536 || q != floor(q))
                die_usage("--sim: queue=%s must be a whole number 1-65536", tok + 6);
            j->sim.queue = (int)q;
        } else if (k < 3) {
            char key[16];
            snprintf(key, sizeof key, "%.*s", (int)strlen(KEYS[k]) - 1, KEYS[k]);
            parse_service(&svc[k], key, tok + strlen(KEYS[k]));
        } else {
            die_usage("--sim: '%s' is neither servers=C, queue=Q nor service=det:US|exp:US|hist:FILE (or "
                      "read-service=, write-service=)", tok);
        }
    }
    if (!svc[0].given && !svc[1].given && !svc[2].given)
        die_usage("--sim: service=det:US, exp:US or hist:FILE is missing");
    for (int d = 0; d < NDIR; d++)
        j->sim.cls[d] = svc[1 + d].given ? svc[1 + d] : svc[0];
}

/* Options that take a value: the value is the next word or follows '='. */
static const char *const VALUED[] = {
    "--target", "--confirm-target", "--bs", "--rate", "--read-share", "--read-rate", "--write-rate",
    "--arrival", "--read-arrival", "--write-arrival", "--pattern", "--span", "--runtime", "--ramp", "--drain",
    "--engine", "--threads", "--max-outstanding", "--seed", "--spin-us", "--lag-fraction", "--lag-floor-us",
    "--check-sample", "--check-as", "--sim", "--json", "--rt-priority", "--ks-tolerance-us", "--move-us",
    "--pause-probe", NULL};

static int valued(const char *name)
{
    for (int i = 0; VALUED[i]; i++)
        if (!strcmp(VALUED[i], name)) return 1;
    return 0;
}

static double whole(const char *opt, const char *v, double lo, double hi)
{
    double x = num(opt, v);
    if (x != floor(x) || x < lo || x > hi)
        die_usage("%s: '%s' must be a whole number %.0f-%.0f", opt, v, lo, hi);
    return x;
}

static void set_option(struct job *j, const char *o, const char *v, double *rate, double *share,
                       enum proc_kind proc[NDIR])
{
    if (!strcmp(o, "--target")) j->target = v;
    else if (!strcmp(o, "--confirm-target")) j->confirm = v;
    else if (!strcmp(o, "--bs")) {
        double b = parse_size_or_die(o, v);
        if (b < 1 || b > 64.0 * 1048576 || b != floor(b))
            die_usage("--bs: %s must be 1 byte to 64 MiB", v);
        j->bs = (uint64_t)b;
    } else if (!strcmp(o, "--rate")) *rate = positive_rate(o, v);
    else if (!strcmp(o, "--read-share")) {
        *share = num(o, v);
        if (*share < 0 || *share > 100) die_usage("--read-share: %s is not a percentage 0-100", v);
    } else if (!strcmp(o, "--read-rate") || !strcmp(o, "--write-rate")) {
        int d = o[2] == 'r' ? DIR_READ : DIR_WRITE;
        j->dir[d].rate_iops = positive_rate(o, v);
        j->dir[d].rate_given = 1;
    } else if (!strcmp(o, "--arrival")) {
        proc[0] = proc[1] = parse_proc(j, o, v);
    } else if (!strcmp(o, "--read-arrival") || !strcmp(o, "--write-arrival")) {
        int d = o[2] == 'r' ? DIR_READ : DIR_WRITE;
        proc[d] = parse_proc(j, o, v);
    } else if (!strcmp(o, "--pattern")) {
        if (strcmp(v, "random") && strcmp(v, "sequential"))
            die_usage("--pattern: '%s' is neither random nor sequential", v);
        j->random = v[0] == 'r';
    } else if (!strcmp(o, "--span")) j->span = (uint64_t)parse_size_or_die(o, v);
    else if (!strcmp(o, "--runtime") || !strcmp(o, "--ramp") || !strcmp(o, "--drain")) {
        double s = num(o, v);
        if (s < 0 || s > 1e6 || (o[2] == 'r' && o[3] == 'u' && s <= 0))
            die_usage("%s: '%s' seconds is out of range", o, v);
        *(o[2] == 'd' ? &j->drain_s : o[3] == 'u' ? &j->runtime_s : &j->ramp_s) = s;
    } else if (!strcmp(o, "--engine")) {
        int k;
        for (k = ENG_AUTO; k <= ENG_SYNC; k++)
            if (!strcmp(v, ENGINE_NAMES[k])) break;
        if (k > ENG_SYNC) die_usage("--engine: '%s' is not auto, io_uring, libaio or sync", v);
        j->engine = (enum engine_kind)k;
    } else if (!strcmp(o, "--threads")) j->threads = (int)whole(o, v, 1, 4096);
    else if (!strcmp(o, "--max-outstanding")) j->max_outstanding = (uint32_t)whole(o, v, 1, 1 << 20);
    else if (!strcmp(o, "--seed")) j->seed = (uint64_t)whole(o, v, 0, 9007199254740992.0);
    else if (!strcmp(o, "--spin-us")) { j->spin_us = num(o, v); if (j->spin_us < 0) die_usage("--spin-us: < 0"); }
    else if (!strcmp(o, "--lag-fraction")) { j->lag_fraction = num(o, v); if (j->lag_fraction <= 0) die_usage("--lag-fraction: must be > 0"); }
    else if (!strcmp(o, "--lag-floor-us")) { j->lag_floor_us = num(o, v); if (j->lag_floor_us < 0) die_usage("--lag-floor-us: < 0"); }
    else if (!strcmp(o, "--check-sample")) j->check_sample = (int)whole(o, v, 10, 10000000);
    else if (!strcmp(o, "--rt-priority")) j->rt_priority = (int)whole(o, v, 0, 99);
    else if (!strcmp(o, "--pause-probe")) {
        j->pause_probe_s = num(o, v);
        if (j->pause_probe_s < 0 || j->pause_probe_s > 60) die_usage("--pause-probe: %s is not 0-60 seconds", v);
    } else if (!strcmp(o, "--move-us")) { j->move_us = num(o, v); if (j->move_us < 0) die_usage("--move-us: < 0"); }
    else if (!strcmp(o, "--ks-tolerance-us")) { j->ks_tol_us = num(o, v); if (j->ks_tol_us < 0) die_usage("--ks-tolerance-us: < 0"); }
    else if (!strcmp(o, "--check-as")) {
        static const char *const names[] = {"asked", "poisson", "constant", "none"};
        int k;
        for (k = 0; k < 4 && strcmp(v, names[k]); k++) {}
        if (k == 4) die_usage("--check-as: '%s' is not asked, poisson, constant or none", v);
        j->check_as = (enum check_as)k;
    } else if (!strcmp(o, "--sim")) parse_sim(j, v);
    else if (!strcmp(o, "--json")) j->json_path = v;
}

static void set_rates(struct job *j, double rate, double share, int share_given)
{
    int per_dir = j->dir[0].rate_given || j->dir[1].rate_given;
    if (rate > 0 && per_dir)
        die_usage("--rate with --read-rate/--write-rate: give either the total or the per-direction rates");
    if (share_given && rate <= 0)
        die_usage("--read-share needs --rate");
    if (rate > 0) {
        double s = share;
        if (s > 0) { j->dir[0].rate_iops = rate * s / 100.0; j->dir[0].rate_given = 1; }
        if (s < 100) { j->dir[1].rate_iops = rate * (100.0 - s) / 100.0; j->dir[1].rate_given = 1; }
    }
}

void parse_args(struct job *j, int argc, char **argv)
{
    memset(j, 0, sizeof *j);
    j->bs = 4096; j->random = 1; j->runtime_s = 10; j->drain_s = 10; j->direct = 1; j->threads = 64;
    j->max_outstanding = DEFAULT_MAX_OUTSTANDING; j->seed = 1; j->spin_us = 50; j->lag_fraction = 0.1;
    j->lag_floor_us = 20; j->ks_tol_us = 5; j->move_us = -1; j->check_sample = DEFAULT_CHECK_SAMPLE; j->argc = argc; j->argv = argv;
    double rate = 0, share = 100;
    int share_given = 0;
    enum proc_kind proc[NDIR] = {PROC_POISSON, PROC_POISSON};
    for (int i = 1; i < argc; i++) {
        char name[64];
        const char *a = argv[i], *eq = strchr(a, '='), *v = NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); exit(0); }
        if (!strcmp(a, "--version")) { printf("ioarrive %s\n", IOARRIVE_VERSION); exit(0); }
        if (!strcmp(a, "--virtual")) { j->virtual_time = 1; continue; }
        if (!strcmp(a, "--buffered")) { j->direct = 0; continue; }
        size_t len = eq && !strncmp(a, "--", 2) ? (size_t)(eq - a) : strlen(a);
        if (len >= sizeof name || !valued((memcpy(name, a, len), name[len] = 0, name)))
            die_usage("unknown option '%s'", a);
        if (eq && !strncmp(a, "--", 2)) v = eq + 1;
        else if (i + 1 < argc) v = argv[++i];
        else die_usage("%s needs a value", name);
        if (!strcmp(name, "--read-share")) share_given = 1;
        set_option(j, name, v, &rate, &share, proc);
    }
    for (int d = 0; d < NDIR; d++)
        j->dir[d].proc = proc[d];
    if (j->trace_path)
        load_trace(j);  /* trace directions get their rate from the file when none was given */
    if (!share_given && proc[0] == PROC_TRACE && proc[1] == PROC_TRACE)  /* --rate rescales the trace's mix */
        share = 100.0 * j->dir[0].tr.rate_iops / (j->dir[0].tr.rate_iops + j->dir[1].tr.rate_iops);
    set_rates(j, rate, share, share_given);
    int any = 0;
    for (int d = 0; d < NDIR; d++) {
        struct dir_job *dj = &j->dir[d];
        dj->active = dj->rate_given || (dj->proc == PROC_TRACE && dj->tr.n > 0);
        if (dj->active && !dj->rate_given)
            dj->rate_iops = dj->tr.rate_iops;
        if (dj->active && dj->proc == PROC_TRACE && dj->tr.n == 0)
            die_usage("trace %s has no %s lines but a %s rate was given", j->trace_path, DIR_NAMES[d], DIR_NAMES[d]);
        any |= dj->active;
    }
    if (!any)
        die_usage("no offered rate: give --rate IOPS (or --read-rate/--write-rate, or a trace)");
    if (j->virtual_time && !j->sim.on)
        die_usage("--virtual needs --sim (virtual time runs the simulated device only)");
    if (j->virtual_time && j->sim.queue)
        die_usage("--sim queue= needs real time (a submission that waits for a free request blocks a thread): "
                  "drop --virtual or queue=");
    for (int d = 0; j->sim.on && d < NDIR; d++) {
        if (j->dir[d].active && !j->sim.cls[d].given)
            die_usage("--sim: the %s I/Os have no service time: give service= or %s-service=", DIR_NAMES[d],
                      DIR_NAMES[d]);
        if (j->sim.cls[d].given && j->sim.cls[d].kind == SVC_HIST)
            load_sim_hist(&j->sim.cls[d]);
    }
    if (!j->sim.on) {
        if (!j->target || !j->confirm)
            die_usage("the target must be named twice: --target PATH --confirm-target PATH");
        if (strcmp(j->target, j->confirm))
            die_usage("--target '%s' and --confirm-target '%s' differ: name the same target twice", j->target,
                      j->confirm);
    } else if (j->target || j->confirm) {
        die_usage("--sim runs a simulated device: --target/--confirm-target do not apply");
    }
    j->engine = j->sim.on ? ENG_SIM : j->engine;
}
