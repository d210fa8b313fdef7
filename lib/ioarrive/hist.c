/* ioarrive - memstor's arrival-driven (open-loop) I/O generator.
 *
 * hist.c: log-linear histograms of nanoseconds, as HdrHistogram lays them out: values below 256 ns exact,
 * then every power of two [2^k, 2^(k+1)) (k = 8..47) split into 128 equal buckets, so a bucket is at most
 * 1/128 of its lower bound wide; a percentile is reported as its bucket's midpoint (error <= 0.4 %).
 * Values from 2^48 ns (78 hours) up fall into the last bucket. Mean, min and max are exact.
 */
#include "ioarrive.h"

#include <math.h>

int h_index(uint64_t v)
{
    if (v < H_LINEAR)
        return (int)v;
    int k = 63 - __builtin_clzll(v);
    if (k > H_MAXEXP)
        return H_N - 1;
    int shift = k - H_SUBBITS;
    return H_LINEAR + (k - H_SUBBITS - 1) * H_SUB + (int)((v >> shift) - H_SUB);
}

uint64_t h_lower(int i)
{
    if (i < H_LINEAR)
        return (uint64_t)i;
    int k = H_SUBBITS + 1 + (i - H_LINEAR) / H_SUB, sub = (i - H_LINEAR) % H_SUB;
    return (uint64_t)(H_SUB + sub) << (k - H_SUBBITS);
}

uint64_t h_upper(int i)
{
    if (i < H_LINEAR)
        return (uint64_t)i + 1;
    int k = H_SUBBITS + 1 + (i - H_LINEAR) / H_SUB;
    return h_lower(i) + ((uint64_t)1 << (k - H_SUBBITS));
}

static double h_mid(int i)
{
    return i < H_LINEAR ? (double)i : 0.5 * ((double)h_lower(i) + (double)h_upper(i));
}

void hist_add(struct hist *h, int64_t v)
{
    uint64_t u = v < 0 ? 0 : (uint64_t)v;
    h->c[h_index(u)]++;
    if (h->n == 0 || u < h->min) h->min = u;
    if (u > h->max) h->max = u;
    h->n++;
    h->sum += (double)u;
    h->sumsq += (double)u * (double)u;
}

/* The value at rank ceil(p/100 * n) (p in percent), as its bucket's midpoint clamped to [min, max]. */
double hist_pct(const struct hist *h, double p)
{
    if (h->n == 0)
        return NAN;
    uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)h->n), seen = 0;
    if (rank < 1) rank = 1;
    for (int i = 0; i < H_N; i++) {
        seen += h->c[i];
        if (seen >= rank) {
            double v = h_mid(i);
            return v < (double)h->min ? (double)h->min : v > (double)h->max ? (double)h->max : v;
        }
    }
    return (double)h->max;
}

double hist_pct32(const uint32_t *c, uint64_t n, double p)
{
    if (n == 0 || !c)
        return NAN;
    uint64_t rank = (uint64_t)ceil(p / 100.0 * (double)n), seen = 0;
    if (rank < 1) rank = 1;
    for (int i = 0; i < H_N; i++) {
        seen += c[i];
        if (seen >= rank)
            return h_mid(i);
    }
    return h_mid(H_N - 1);
}
