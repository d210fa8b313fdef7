/* loadlat: buffers (mmap, huge pages, first touch, THP evidence) and the latency chain. */
#include "loadlat.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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
    return buffer_alloc_node(b, len, huge, fill, -1, err, errlen);
}

int buffer_alloc_node(struct buffer *b, size_t len, int huge, unsigned char fill, int node, char *err,
                      size_t errlen)
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
    if (node >= 0) {  /* NUMA placement (numa.c): bind before the first touch below */
        int e = numa_bind((void *)start, len, node);
        if (e) {
            snprintf(err, errlen, "mbind to node %d failed: %s", node, strerror(e));
            munmap(base, map_len);
            return e;
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

/* The 8-byte-aligned offset of the pointer inside a slot: the first rng_below draw from a state made of
 * (seed, slot index), i.e. splitmix64 used as a hash, so each slot's offset is recomputed, never stored. */
static size_t slot_offset(uint64_t slot_index, size_t slot, uint64_t seed)
{
    uint64_t s = seed ^ (slot_index * 0xD6E8FEB86659FD93ull);
    return (size_t)rng_below(&s, slot / sizeof(void *)) * sizeof(void *);
}

void **chain_slot_at(const struct buffer *b, size_t slot, uint64_t seed, size_t slot_index)
{
    return (void **)(b->p + slot_index * slot + slot_offset(slot_index, slot, seed));
}

void **chain_build(struct buffer *b, size_t slot, uint64_t seed) { return chain_build_order(b, slot, seed, NULL); }

void **chain_build_order(struct buffer *b, size_t slot, uint64_t seed, uint32_t **order)
{
    size_t n = b->len / slot;
    uint32_t *perm = malloc(n * sizeof *perm);
    if (!perm)
        return NULL;
    for (size_t i = 0; i < n; i++)
        perm[i] = (uint32_t)i;
    uint64_t s = seed;
    for (size_t i = n - 1; i > 0; i--) {  /* Fisher-Yates: a uniformly random visiting order */
        size_t j = (size_t)rng_below(&s, i + 1);
        uint32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    void **first = NULL;
    for (size_t k = 0; k < n; k++) {
        size_t cur = perm[k], nxt = perm[(k + 1) % n];
        void **pc = chain_slot_at(b, slot, seed, cur);
        *pc = (void *)chain_slot_at(b, slot, seed, nxt);
        if (k == 0)
            first = pc;
    }
    if (order)
        *order = perm;  /* the caller's: the visiting order (slot indexes), free() it */
    else
        free(perm);
    return first;
}
