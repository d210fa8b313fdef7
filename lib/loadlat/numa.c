/* loadlat: NUMA nodes as the kernel reports them (/sys/devices/system/node/node<N>/cpulist, meminfo), memory
 * placement with mbind(MPOL_BIND) as a raw system call (no libnuma), the check of where pages landed
 * (get_mempolicy(MPOL_F_NODE | MPOL_F_ADDR)) and SMT siblings (topology/thread_siblings_list).
 *
 * LOADLAT_NODE_DIR=<dir> reads the node folders from <dir> instead of /sys/devices/system/node (a test aid:
 * a fake two-node layout on a one-node machine; mbind then fails for the fake node and loadlat falls back to
 * first touch, which the placement check reports honestly). */
#include "loadlat.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SYSFS_NODE_DIR "/sys/devices/system/node"
#define LL_MPOL_BIND 2           /* <linux/mempolicy.h>, not every libc ships it */
#define LL_MPOL_MF_STRICT 1
#define LL_MPOL_F_NODE 1
#define LL_MPOL_F_ADDR 2
#define MASK_BITS 1024           /* node mask passed to mbind: nodes 0..1023 */

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The first line of a small file, newline removed; -1 when it cannot be read. */
static int read_line(const char *path, char *out, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    out[0] = '\0';
    if (!fgets(out, (int)len, f))
        out[0] = '\0';
    fclose(f);
    out[strcspn(out, "\r\n")] = '\0';
    return 0;
}

static long long node_mem_kib(const char *dir, int node)
{
    char path[512], line[256];
    snprintf(path, sizeof path, "%s/node%d/meminfo", dir, node);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    long long kib = -1;
    while (fgets(line, sizeof line, f)) {
        int n;
        long long v;
        if (sscanf(line, "Node %d MemTotal: %lld kB", &n, &v) == 2) {
            kib = v;
            break;
        }
    }
    fclose(f);
    return kib;
}

const char *numa_node_dir(void)
{
    const char *env = getenv("LOADLAT_NODE_DIR");
    return env && *env ? env : SYSFS_NODE_DIR;
}

int numa_read(struct numa_topo *t, const int *allowed, int nallowed, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    const char *dir = numa_node_dir();
    snprintf(t->source, sizeof t->source, "%s", dir);
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            int id;
            char rest;
            if (sscanf(e->d_name, "node%d%c", &id, &rest) != 1 || id < 0)
                continue;
            if (t->n >= LOADLAT_MAX_NODES) {
                closedir(d);
                snprintf(err, errlen, "%s: more than %d NUMA nodes", dir, LOADLAT_MAX_NODES);
                return -1;
            }
            t->node[t->n++] = id;
        }
        closedir(d);
        qsort(t->node, (size_t)t->n, sizeof t->node[0], cmp_int);
    }
    if (t->n == 0) {  /* no NUMA sysfs (kernel without CONFIG_NUMA): one node 0 holding the allowed CPUs */
        snprintf(t->source, sizeof t->source, "none (%s not readable: one node 0 assumed)", dir);
        t->n = 1;
        t->node[0] = 0;
        t->mem_kib[0] = -1;
        t->cpu[0] = malloc(sizeof(int) * (size_t)(nallowed > 0 ? nallowed : 1));
        if (!t->cpu[0]) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        memcpy(t->cpu[0], allowed, sizeof(int) * (size_t)nallowed);
        t->ncpu[0] = nallowed;
        return 0;
    }
    t->from_sysfs = 1;
    static int buf[LOADLAT_MAX_CPUS];
    for (int i = 0; i < t->n; i++) {
        char path[512], line[4096], perr[200];
        snprintf(path, sizeof path, "%s/node%d/cpulist", dir, t->node[i]);
        int n = 0;
        if (read_line(path, line, sizeof line) == 0 && line[0]) {
            n = cpu_list_parse(line, buf, LOADLAT_MAX_CPUS, perr, sizeof perr);
            if (n < 0) {
                snprintf(err, errlen, "%s: %s", path, perr);
                return -1;
            }
        }
        t->cpu[i] = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
        if (!t->cpu[i]) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        memcpy(t->cpu[i], buf, sizeof(int) * (size_t)n);
        t->ncpu[i] = n;
        t->mem_kib[i] = node_mem_kib(dir, t->node[i]);
    }
    return 0;
}

void numa_free(struct numa_topo *t)
{
    for (int i = 0; i < t->n; i++)
        free(t->cpu[i]);
    memset(t, 0, sizeof *t);
}

int numa_index_of_cpu(const struct numa_topo *t, int cpu)
{
    for (int i = 0; i < t->n; i++)
        if (cpu_list_has(cpu, t->cpu[i], t->ncpu[i]))
            return i;
    return -1;
}

int numa_bind(void *p, size_t len, int node)
{
#ifdef SYS_mbind
    unsigned long mask[MASK_BITS / (8 * sizeof(unsigned long))];
    if (node < 0 || node >= MASK_BITS)
        return EINVAL;
    memset(mask, 0, sizeof mask);
    mask[(size_t)node / (8 * sizeof(unsigned long))] = 1ul << ((size_t)node % (8 * sizeof(unsigned long)));
    /* maxnode is one more than the bits passed (the kernel reads maxnode - 1 bits, as libnuma does) */
    if (syscall(SYS_mbind, p, len, LL_MPOL_BIND, mask, (unsigned long)MASK_BITS + 1, LL_MPOL_MF_STRICT) != 0)
        return errno ? errno : EINVAL;
    return 0;
#else
    (void)p, (void)len, (void)node;
    return ENOSYS;
#endif
}

double numa_pages_on_node(const void *p, size_t len, int node, int *checked)
{
    *checked = 0;
#ifdef SYS_get_mempolicy
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t pages = len / page;
    if (pages == 0)
        pages = 1;
    size_t samples = pages < 64 ? pages : 64;
    int on = 0;
    for (size_t k = 0; k < samples; k++) {
        const char *a = (const char *)p + (pages * k / samples) * page;
        int where = -1;
        if (syscall(SYS_get_mempolicy, &where, NULL, 0ul, a, (unsigned long)(LL_MPOL_F_NODE | LL_MPOL_F_ADDR)) != 0)
            return NAN;
        (*checked)++;
        on += where == node;
    }
    return *checked ? (double)on / (double)*checked : NAN;
#else
    (void)p, (void)len, (void)node;
    return NAN;
#endif
}

int cpu_smt_siblings(int a, int b)
{
    char path[256], line[1024], err[100];
    static int sib[LOADLAT_MAX_CPUS];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", a);
    if (read_line(path, line, sizeof line) != 0 || !line[0])
        return -1;
    int n = cpu_list_parse(line, sib, LOADLAT_MAX_CPUS, err, sizeof err);
    if (n < 0)
        return -1;
    return cpu_list_has(b, sib, n);
}
