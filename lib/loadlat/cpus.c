/* loadlat: CPU lists ("1-3,5" parsed and printed), the affinity mask, pinning and the cache-line size. */
#include "loadlat.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

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

/* {1,2,3,5} -> "1-3,5" (truncated to len). */
void cpu_list_format(const int *c, int n, char *out, size_t len)
{
    size_t pos = 0;
    out[0] = '\0';
    for (int i = 0; i < n && pos < len; i++) {
        int j = i;
        while (j + 1 < n && c[j + 1] == c[j] + 1)
            j++;
        int w = (j > i + 1) ? snprintf(out + pos, len - pos, "%s%d-%d", i ? "," : "", c[i], c[j])
                            : snprintf(out + pos, len - pos, "%s%d", i ? "," : "", c[i]);
        if (w < 0 || (size_t)w >= len - pos) {  /* truncated: the text ends here */
            pos = len;
            break;
        }
        if (j == i + 1) {
            int w2 = snprintf(out + pos + w, len - pos - (size_t)w, ",%d", c[j]);
            w = (w2 < 0 || (size_t)w2 >= len - pos - (size_t)w) ? (int)(len - pos) : w + w2;
        }
        pos += (size_t)w;
        i = j;
    }
}

int cpu_list_has(int cpu, const int *c, int n)
{
    for (int i = 0; i < n; i++)
        if (c[i] == cpu)
            return 1;
    return 0;
}

/* Bytes per cache line: coherency_line_size of cpu0's first cache (index0, the L1 data cache on Linux) in
 * /sys/devices/system/cpu (LOADLAT_CPU_DIR replaces that folder, a test aid); 64 when it is missing or not
 * a power of two between 16 and 1024 (x86-64 and most Arm cores have 64; Apple M1 and ThunderX 128, A64FX
 * 256). Read once. */
int cache_line_bytes(void)
{
    static _Atomic int cached;  /* 0 = not read yet */
    int v = atomic_load_explicit(&cached, memory_order_relaxed);
    if (v)
        return v;
    const char *dir = getenv("LOADLAT_CPU_DIR");
    char path[512];
    snprintf(path, sizeof path, "%s/cpu0/cache/index0/coherency_line_size",
             dir && *dir ? dir : "/sys/devices/system/cpu");
    long n = 0;
    FILE *f = fopen(path, "r");
    if (f) {
        if (fscanf(f, "%ld", &n) != 1)
            n = 0;
        fclose(f);
    }
    v = (n >= 16 && n <= 1024 && (n & (n - 1)) == 0) ? (int)n : 64;
    atomic_store_explicit(&cached, v, memory_order_relaxed);
    return v;
}
