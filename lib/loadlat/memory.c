/* loadlat: buffers (mmap, huge pages, first touch, THP evidence), latency chain, CPU lists, clocks. */
#include "loadlat.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------- clocks */

double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);  /* cannot fail for CLOCK_MONOTONIC on Linux */
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double thread_cpu_s(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0.0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void sleep_s(double s)
{
    if (s <= 0)
        return;
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    nanosleep(&ts, NULL);  /* EINTR (a signal) simply ends the sleep early; the caller checks flags */
}

/* ---------------------------------------------------------------- CPUs */

int allowed_cpus(int *cpus, int max)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return -1;
    int n = 0;
    for (int c = 0; c < CPU_SETSIZE && n < max; c++)
        if (CPU_ISSET(c, &set))
            cpus[n++] = c;
    return n;
}

int pin_self(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (cpu < 0 || cpu >= CPU_SETSIZE)
        return EINVAL;
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
        return errno;
    return 0;
}

static int parse_uint(const char **s, long *out)
{
    char *end;
    if (**s < '0' || **s > '9')
        return -1;
    errno = 0;
    long v = strtol(*s, &end, 10);
    if (errno || v < 0 || v >= CPU_SETSIZE)
        return -1;
    *out = v;
    *s = end;
    return 0;
}

/* "1-3,5" -> {1,2,3,5}. Returns the count, or -1 with a message in err. */
int cpu_list_parse(const char *text, int *cpus, int max, char *err, size_t errlen)
{
    int n = 0;
    const char *s = text;
    if (!*s) {
        snprintf(err, errlen, "empty CPU list");
        return -1;
    }
    while (*s) {
        long a, b;
        if (parse_uint(&s, &a) != 0) {
            snprintf(err, errlen, "bad CPU list '%s' (expected e.g. 1-3,5)", text);
            return -1;
        }
        b = a;
        if (*s == '-') {
            s++;
            if (parse_uint(&s, &b) != 0 || b < a) {
                snprintf(err, errlen, "bad CPU range in '%s' (expected e.g. 1-3,5)", text);
                return -1;
            }
        }
        for (long c = a; c <= b; c++) {
            for (int i = 0; i < n; i++)
                if (cpus[i] == c) {
                    snprintf(err, errlen, "CPU %ld listed twice in '%s'", c, text);
                    return -1;
                }
            if (n >= max) {
                snprintf(err, errlen, "too many CPUs in '%s'", text);
                return -1;
            }
            cpus[n++] = (int)c;
        }
        if (*s == ',')
            s++;
        else if (*s) {
            snprintf(err, errlen, "bad CPU list '%s' (expected e.g. 1-3,5)", text);
            return -1;
        }
        if (*s == '\0' && s[-1] == ',') {
            snprintf(err, errlen, "bad CPU list '%s' (trailing comma)", text);
            return -1;
        }
    }
    return n;
}

/* ---------------------------------------------------------------- buffers */

long long smaps_anon_huge_kib(const void *addr)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    char line[512];
    int inside = 0;
    long long kib = -1;
    uintptr_t a = (uintptr_t)addr;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char c;
        if (sscanf(line, "%lx-%lx%c", &lo, &hi, &c) == 3 && c == ' ') {
            if (inside)
                break;
            inside = (a >= lo && a < hi);
            continue;
        }
        if (inside && strncmp(line, "AnonHugePages:", 14) == 0) {
            kib = strtoll(line + 14, NULL, 10);
            break;
        }
    }
    fclose(f);
    return kib;
}

int buffer_alloc(struct buffer *b, size_t len, int huge, unsigned char fill, char *err, size_t errlen)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    memset(b, 0, sizeof *b);
    b->anon_huge_kib = -1;
    /* 2 MiB of slack to align, plus one page so that a PROT_NONE guard always follows the buffer and
     * the kernel cannot merge it with a neighbouring mapping (keeps the smaps evidence per buffer). */
    size_t map_len = len + HUGE_2M + page;
    void *base = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
        int e = errno;
        snprintf(err, errlen, "mmap of %zu bytes failed: %s (use a smaller -b)", map_len, strerror(e));
        return e;
    }
    uintptr_t start = ((uintptr_t)base + HUGE_2M - 1) & ~(uintptr_t)(HUGE_2M - 1);
    size_t head = start - (uintptr_t)base;
    size_t tail = map_len - head - len;
    if (head && mprotect(base, head, PROT_NONE) != 0) {
        int e = errno;
        snprintf(err, errlen, "mprotect (guard) failed: %s", strerror(e));
        munmap(base, map_len);
        return e;
    }
    if (mprotect((void *)(start + len), tail, PROT_NONE) != 0) {
        int e = errno;
        snprintf(err, errlen, "mprotect (guard) failed: %s", strerror(e));
        munmap(base, map_len);
        return e;
    }
    if (madvise((void *)start, len, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) != 0) {
        int e = errno;
        /* EINVAL: kernel without THP. Not fatal without -L; with -L the evidence will show 0. */
        if (huge) {
            fprintf(stderr, "loadlat: warning: madvise(MADV_HUGEPAGE) failed: %s "
                            "(kernel without transparent huge pages?)\n", strerror(e));
        }
    }
    b->base = base;
    b->map_len = map_len;
    b->p = (unsigned char *)start;
    b->len = len;
    memset(b->p, fill, len);  /* first touch by the owning (pinned) thread */
    b->anon_huge_kib = smaps_anon_huge_kib(b->p);
    return 0;
}

void buffer_free(struct buffer *b)
{
    if (b->base)
        munmap(b->base, b->map_len);
    memset(b, 0, sizeof *b);
}

/* ---------------------------------------------------------------- latency chain */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t below(uint64_t *s, uint64_t n)  /* uniform in [0, n) */
{
    return (uint64_t)(((unsigned __int128)splitmix64(s) * n) >> 64);
}

static size_t slot_offset(uint64_t slot_index, size_t slot, uint64_t seed)
{
    uint64_t s = seed ^ (slot_index * 0xD6E8FEB86659FD93ull);
    return (size_t)below(&s, slot / sizeof(void *)) * sizeof(void *);
}

void **chain_build(struct buffer *b, size_t slot, uint64_t seed)
{
    size_t n = b->len / slot;
    uint32_t *perm = malloc(n * sizeof *perm);
    if (!perm)
        return NULL;
    for (size_t i = 0; i < n; i++)
        perm[i] = (uint32_t)i;
    uint64_t s = seed;
    for (size_t i = n - 1; i > 0; i--) {  /* Fisher-Yates: a uniformly random visiting order */
        size_t j = (size_t)below(&s, i + 1);
        uint32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    void **first = NULL;
    for (size_t k = 0; k < n; k++) {
        size_t cur = perm[k], nxt = perm[(k + 1) % n];
        void **pc = (void **)(b->p + cur * slot + slot_offset(cur, slot, seed));
        void **pn = (void **)(b->p + nxt * slot + slot_offset(nxt, slot, seed));
        *pc = (void *)pn;
        if (k == 0)
            first = pc;
    }
    free(perm);
    return first;
}
