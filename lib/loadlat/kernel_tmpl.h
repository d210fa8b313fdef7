/* loadlat: body of one load-generation kernel, included once per instruction set by kernels.c.
 *
 * The includer defines: KN(x) (name mangling), ATTR (function attributes), VT (vector type), VB (bytes
 * per vector), VLOAD(p), VSTORE(p, v), VSTREAM(p, v) (non-temporal store), VXOR(a, b), VADD(a, b), VZERO,
 * VFENCE() (orders non-temporal stores) and VFOLD(v) (vector -> uint64_t, keeps the read data alive);
 * this file undefines them all at its end.
 */

ATTR static inline void KN(read_block)(const unsigned char *p, size_t n, VT *acc0, VT *acc1)
{
    for (size_t i = 0; i < n; i += 2 * VB) {
        *acc0 = VXOR(*acc0, VLOAD(p + i));
        *acc1 = VXOR(*acc1, VLOAD(p + i + VB));
    }
}

ATTR static inline void KN(write_block)(unsigned char *p, size_t n, VT v, int nt)
{
    if (nt) {
        for (size_t i = 0; i < n; i += VB)
            VSTREAM(p + i, v);
    } else {
        for (size_t i = 0; i < n; i += VB)
            VSTORE(p + i, v);
    }
}

/* a[i] = b[i] + c[i] with non-temporal stores (the integer analogue of STREAM triad). */
ATTR static inline void KN(triad_block)(unsigned char *a, const unsigned char *b, const unsigned char *c,
                                        size_t n, VT *acc0)
{
    for (size_t i = 0; i < n; i += VB) {
        VT s = VADD(VLOAD(b + i), VLOAD(c + i));
        *acc0 = VXOR(*acc0, s);
        VSTREAM(a + i, s);
    }
}

/* The load loop: blocks of 16 request groups, each followed by its delay (fixed, or an exponential draw
 * for --pacing=exp), then one check of the phase and sub-window flags. In every gap_period-th block the
 * starts of groups 0 and 1 are stamped with tick_now(): one inter-request time (group + delay) sampled
 * for arrival_cv. gap_period is set when the measured window starts, from the warm-up's rate, so that the
 * stamps cost at most ARRIVAL_BUDGET of the time (1 at delays of ~100 ns and more). */
#ifndef ARRIVAL_BUDGET
#define ARRIVAL_BUDGET 0.005
#endif
ATTR static void KN(run)(struct load_args *a)
{
    const struct traffic *tr = a->tr;
    const size_t L = a->access;
    const size_t rblocks = a->rd_len / L, wblocks = a->wr_len / L;
    const uint64_t delay = a->delay;
    const int expm = a->pacing_exp && a->delay > 0;
    const double mean = a->delay_mean;
    const int random = a->random;
    const int nwin = a->nwin;
    VT acc0 = VZERO, acc1 = VZERO;
    size_t roff = 0, woff = 0;
    uint64_t rng = a->seed;  /* random block order: rng_below (loadlat.h) */
    uint64_t drng = a->seed ^ 0xD1B54A32D192ED03ull;  /* exponential delays: another stream */
    uint64_t groups = 0;
    struct gap_hist *gaps = &a->gaps;  /* zeroed by the caller */
    uint64_t period = 1, left = 1;
    const double start = now_s();
    int measuring = 0, cur = -1;

#define LL_GROUP()                                                                                     \
    do {                                                                                               \
        if (tr->triad) {                                                                               \
            size_t o = random ? L * rng_below(&rng, rblocks) : roff;                                   \
            KN(triad_block)(a->wr + o, a->rd + o, a->rd2 + o, L, &acc0);                               \
            roff = (roff + L == a->rd_len) ? 0 : roff + L;                                             \
        } else {                                                                                       \
            for (int r = 0; r < tr->reads; r++) {                                                      \
                size_t o = random ? L * rng_below(&rng, rblocks) : roff;                               \
                KN(read_block)(a->rd + o, L, &acc0, &acc1);                                            \
                roff = (roff + L == a->rd_len) ? 0 : roff + L;                                         \
            }                                                                                          \
            for (int w = 0; w < tr->writes; w++) {                                                     \
                size_t o = random ? L * rng_below(&rng, wblocks) : woff;                               \
                KN(write_block)(a->wr + o, L, VXOR(acc0, acc1), tr->nt);                               \
                woff = (woff + L == a->wr_len) ? 0 : woff + L;                                         \
            }                                                                                          \
        }                                                                                              \
        delay_inline(expm ? exp_draw(&drng, mean) : delay);                                            \
        groups++;                                                                                      \
    } while (0)

    for (;;) {
        int k = 0;
        if (--left == 0) {
            left = period;
            uint64_t ta = tick_now();
            LL_GROUP();
            uint64_t tb = tick_now();
            if (measuring) {
                uint64_t gap = tb - ta;
                unsigned b = gap_bin(gap);
                double g = (double)gap;
                gaps->n[b]++;
                gaps->sum[b] += g;
                gaps->sq[b] += g * g;
            }
            k = 1;
        }
        for (; k < 16; k++)
            LL_GROUP();
        int ph = atomic_load_explicit(a->phase, memory_order_relaxed);
        if (ph == PH_MEASURE) {
            int w = subwin_reached(a->subwin, nwin);
            if (cur < w) {
                if (tr->nt)
                    VFENCE();
                double now = now_s(), cpu = thread_cpu_s();
                if (!measuring && groups > 0) {
                    double per_block = (now - start) * 1e9 / (double)groups * 16.0;
                    double p = 2.0 * a->tick_ns / (ARRIVAL_BUDGET * per_block);
                    period = p > 1 ? (uint64_t)p + 1 : 1;
                    if (period > 4096)
                        period = 4096;
                    left = 1;
                }
                measuring = 1;
                cur = marks_stamp(&a->marks, cur, w, now, cpu, groups);
            }
        } else if (ph == PH_STOP) {
            if (tr->nt)
                VFENCE();
            if (measuring) {
                double now = now_s(), cpu = thread_cpu_s();
                a->groups = marks_close(&a->marks, &cur, nwin, now, cpu, groups, &a->t0, &a->t1, &a->cpu_s);
                a->gap_period = period;
                a->measured = 1;
            }
            break;
        }
    }
#undef LL_GROUP
    a->sink = VFOLD(VXOR(acc0, acc1));
}

/* The parameters are undefined here, so the next instantiation can define them again. */
#undef KN
#undef ATTR
#undef VT
#undef VB
#undef VLOAD
#undef VSTORE
#undef VSTREAM
#undef VXOR
#undef VADD
#undef VZERO
#undef VFENCE
#undef VFOLD
