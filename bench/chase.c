/* chase - an independent, deliberately simple random pointer chase (memstor reference for loadlat).
 *
 * Build: cc -O2 -o build/bin/chase bench/chase.c
 * Usage: chase [MiB (default 1024)] [seconds (default 2)] [nohuge]
 *
 * One cyclic permutation of all 64-byte lines of the buffer (Sattolo's algorithm), each line holding
 * the address of the next line at offset 0; a single chain of dependent loads is timed with
 * CLOCK_MONOTONIC after one warm-up lap of a million loads. Huge pages via madvise(MADV_HUGEPAGE)
 * unless "nohuge" is given; the AnonHugePages of the buffer is printed from /proc/self/smaps.
 * Output (one line each): "chase: buffer_MiB=... huge_KiB=... loads=... seconds=..." then
 * "ns per load: X" (wall clock) and "ns per load (thread CPU time): Y" (time the thread really ran; the
 * two differ when the CPU is shared with other work).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define LINE 64

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rng_state = 88172645463325252ull;

static uint64_t xorshift(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static long huge_kib_of(void *addr)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[256];
    int in = 0;
    long kib = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
        } else if (in && sscanf(line, "AnonHugePages: %ld kB", &kib) == 1) {
            break;
        }
    }
    fclose(f);
    return kib;
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 1024;
    double secs = argc > 2 ? atof(argv[2]) : 2.0;
    int huge = !(argc > 3 && strcmp(argv[3], "nohuge") == 0);
    if (mib == 0 || !(secs > 0)) {
        fprintf(stderr, "usage: chase [MiB] [seconds] [nohuge]\n");
        return 2;
    }
    size_t bytes = mib << 20, n = bytes / LINE;
    char *raw = mmap(NULL, bytes + (2 << 20), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) {
        perror("chase: mmap");
        return 1;
    }
    char *buf = (char *)(((uintptr_t)raw + (2 << 20) - 1) & ~(uintptr_t)((2 << 20) - 1));
    if (madvise(buf, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) != 0)
        perror("chase: madvise");
    memset(buf, 1, bytes);

    /* Sattolo: a random permutation that is a single cycle through every line */
    uint32_t *next = malloc(n * sizeof *next);
    if (!next) {
        perror("chase: malloc");
        return 1;
    }
    for (size_t i = 0; i < n; i++)
        next[i] = (uint32_t)i;
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = xorshift() % i;  /* j < i: Sattolo, not Fisher-Yates */
        uint32_t t = next[i];
        next[i] = next[j];
        next[j] = t;
    }
    for (size_t i = 0; i < n; i++)
        *(char **)(buf + i * LINE) = buf + (size_t)next[i] * LINE;
    free(next);

    char **p = (char **)buf;
    for (int i = 0; i < 1000000; i++)  /* warm-up lap */
        p = (char **)*p;
    uint64_t loads = 0;
    double c0 = cpu_seconds_now(), t0 = seconds_now(), t1;
    do {
        for (int i = 0; i < 100000; i++)
            p = (char **)*p;
        loads += 100000;
        t1 = seconds_now();
    } while (t1 - t0 < secs);
    double c1 = cpu_seconds_now();
    printf("chase: buffer_MiB=%zu huge_KiB=%ld loads=%llu seconds=%.3f end=%p\n", mib, huge_kib_of(buf),
           (unsigned long long)loads, t1 - t0, (void *)p);
    printf("ns per load: %.2f\n", (t1 - t0) * 1e9 / (double)loads);
    printf("ns per load (thread CPU time): %.2f\n", (c1 - c0) * 1e9 / (double)loads);
    return 0;
}
