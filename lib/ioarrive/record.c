/* ioarrive - memstor's arrival-driven (open-loop) I/O generator.
 *
 * record.c: what happens to a finished I/O. One caller at a time (the reaper thread, the simulated device's
 * completions, the virtual-time loop, or a pool worker holding rec_mu).
 *   - An I/O whose intended arrival lies in the measured window [t0, t1) adds its response, service and
 *     lag to its direction's histograms and counts in the trend bins (by intended and by submission time).
 *   - A completion inside the window counts towards the achieved rate and the per-second series (IOPS,
 *     mean and p99 response of the I/Os completed in that second).
 *   - Submissions inside the window are also counted per fine bin (FINE_BIN_NS): the submitted count tests.
 *   - Arrivals k*stride, k*stride+1, k*stride+2 (k < --check-sample) of each direction keep their intended
 *     and submission times: the gaps the arrival tests use (the completion order does not matter).
 */
#include "ioarrive.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) die("out of memory (%zu x %zu bytes)", n, size);
    return p;
}

void rec_init(struct recorder *r, const struct job *j, int64_t t0)
{
    memset(r, 0, sizeof *r);
    r->t0 = t0;
    r->t1 = t0 + (int64_t)llround(j->runtime_s * 1e9);
    for (int d = 0; d < NDIR; d++) {
        struct dir_rec *dr = &r->d[d];
        if (!j->dir[d].active) continue;
        double expected = j->dir[d].rate_iops * j->runtime_s;
        dr->stride = (uint64_t)fmax(1.0, floor(expected / j->check_sample));
        dr->nsamp = j->check_sample;
        dr->samp = xcalloc((size_t)dr->nsamp, sizeof *dr->samp);
        dr->nbins = j->runtime_s >= 20 ? (int)floor(j->runtime_s) : 20;
        dr->bins_intended = xcalloc((size_t)dr->nbins, sizeof(uint64_t));
        dr->bins_submitted = xcalloc((size_t)dr->nbins, sizeof(uint64_t));
        int64_t span = r->t1 - r->t0;
        dr->fine_ns = span / FINE_BINS_MAX > FINE_BIN_NS ? span / FINE_BINS_MAX + 1 : FINE_BIN_NS;
        dr->nfine = (int)((span + dr->fine_ns - 1) / dr->fine_ns);
        dr->fine_submitted = xcalloc((size_t)dr->nfine, sizeof(uint32_t));
        dr->nsec = (int)ceil(j->runtime_s);
        dr->sec_h = xcalloc((size_t)dr->nsec, sizeof(uint32_t *));
        dr->sec_n = xcalloc((size_t)dr->nsec, sizeof(uint64_t));
        dr->sec_sum = xcalloc((size_t)dr->nsec, sizeof(double));
    }
}

static int bin_of(const struct recorder *r, const struct dir_rec *d, int64_t t)
{
    if (t < r->t0 || t >= r->t1) return -1;
    int b = (int)((double)(t - r->t0) * d->nbins / (double)(r->t1 - r->t0));
    return b < d->nbins ? b : d->nbins - 1;
}

static void sample_store(struct dir_rec *d, const struct io_slot *s)
{
    for (int pos = 0; pos < 3; pos++) {
        int64_t base = s->idx - pos;
        if (base < 0 || (uint64_t)base % d->stride) continue;
        uint64_t k = (uint64_t)base / d->stride;
        if (k >= (uint64_t)d->nsamp) continue;
        d->samp[k].ti[pos] = s->intended;
        d->samp[k].ts[pos] = s->submit;
        d->samp[k].have |= (uint8_t)(1 << pos);
    }
}

static void per_second(struct recorder *r, struct dir_rec *d, const struct io_slot *s)
{
    int64_t sec = (s->done - r->t0) / 1000000000LL;
    if (sec < 0 || sec >= d->nsec) return;
    if (!d->sec_h[sec])
        d->sec_h[sec] = xcalloc(H_N, sizeof(uint32_t));
    int64_t resp = s->done - s->intended;
    d->sec_h[sec][h_index(resp < 0 ? 0 : (uint64_t)resp)]++;
    d->sec_n[sec]++;
    d->sec_sum[sec] += (double)resp;
}

void rec_complete(struct recorder *r, const struct io_slot *s)
{
    struct dir_rec *d = &r->d[s->dir];
    int measured = s->intended >= r->t0 && s->intended < r->t1;
    if (s->res < 0 || (uint32_t)s->res != s->len) {
        if (!d->errors) d->first_errno = s->res < 0 ? -s->res : 0;
        d->errors++;
        return;
    }
    if (measured) {
        int64_t resp = s->done - s->intended, svc = s->done - s->submit, lag = s->submit - s->intended;
        if (svc < 0 || lag < 0) d->negative++;
        hist_add(&d->resp, resp);
        hist_add(&d->svc, svc);
        hist_add(&d->lag, lag);
        d->completed++;
        d->bytes += s->len;
        d->bins_intended[bin_of(r, d, s->intended)]++;
    }
    int b = bin_of(r, d, s->submit);
    if (b >= 0) {
        d->bins_submitted[b]++;
        d->fine_submitted[(s->submit - r->t0) / d->fine_ns]++;
    }
    if (s->done >= r->t0 && s->done < r->t1) {
        d->window_done++;
        per_second(r, d, s);
    }
    if (s->idx >= 0)
        sample_store(d, s);
}

void rec_free(struct recorder *r)
{
    for (int d = 0; d < NDIR; d++) {
        struct dir_rec *dr = &r->d[d];
        for (int i = 0; i < dr->nsec; i++)
            free(dr->sec_h[i]);
        free(dr->sec_h); free(dr->sec_n); free(dr->sec_sum);
        free(dr->samp); free(dr->bins_intended); free(dr->bins_submitted); free(dr->fine_submitted);
    }
}
