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

ATTR static void KN(run)(struct load_args *a)
{
    const struct traffic *tr = a->tr;
    const size_t L = a->access;
    const size_t rblocks = a->rd_len / L, wblocks = a->wr_len / L;
    const uint64_t delay = a->delay;
    const int random = a->random;
    VT acc0 = VZERO, acc1 = VZERO;
    size_t roff = 0, woff = 0;
    uint64_t rng = a->seed;  /* random block order: rng_below (loadlat.h) */
    uint64_t groups = 0, g0 = 0;
    int measuring = 0;

    for (;;) {
        for (int k = 0; k < 16; k++) {
            if (tr->triad) {
                size_t o = random ? L * rng_below(&rng, rblocks) : roff;
                KN(triad_block)(a->wr + o, a->rd + o, a->rd2 + o, L, &acc0);
                roff = (roff + L == a->rd_len) ? 0 : roff + L;
            } else {
                for (int r = 0; r < tr->reads; r++) {
                    size_t o = random ? L * rng_below(&rng, rblocks) : roff;
                    KN(read_block)(a->rd + o, L, &acc0, &acc1);
                    roff = (roff + L == a->rd_len) ? 0 : roff + L;
                }
                for (int w = 0; w < tr->writes; w++) {
                    size_t o = random ? L * rng_below(&rng, wblocks) : woff;
                    KN(write_block)(a->wr + o, L, VXOR(acc0, acc1), tr->nt);
                    woff = (woff + L == a->wr_len) ? 0 : woff + L;
                }
            }
            delay_inline(delay);
            groups++;
        }
        int ph = atomic_load_explicit(a->phase, memory_order_relaxed);
        if (ph == PH_MEASURE && !measuring) {
            if (tr->nt)
                VFENCE();
            a->cpu_s = thread_cpu_s();
            a->t0 = now_s();
            g0 = groups;
            measuring = 1;
        } else if (ph == PH_STOP) {
            if (tr->nt)
                VFENCE();
            if (measuring) {
                a->t1 = now_s();
                a->cpu_s = thread_cpu_s() - a->cpu_s;
                a->groups = groups - g0;
                a->measured = 1;
            }
            break;
        }
    }
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
