/* loadlat: load-generation kernels per instruction set, the latency chase, the delay loop and the
 * calibrations (delay units -> ns, core clock rate, TSC rate).
 *
 * x86-64: AVX2 (32-byte loads/stores, _mm256_stream_si256 for non-temporal stores) when the CPU has it,
 *         else SSE2 (16-byte, _mm_stream_si128), chosen at run time with __builtin_cpu_supports; no
 *         -march flags are needed. LOADLAT_ISA=avx2|sse2|generic forces one.
 * aarch64: NEON, 32 bytes per access as a pair of 16-byte Q registers (LDP/STP); non-temporal stores with
 *         STNP of the Q pair. STNP is only a hint ("data caching is not required"): a core may still
 *         allocate the line and read it for ownership, so W6..W10 are non-temporal in name on cores that
 *         ignore the hint. LOADLAT_ISA=neon|generic forces one.
 * generic: plain 64-bit loads and stores; its non-temporal stores are MOVNTI on x86-64 and STNP (of two
 *         32-bit halves) on aarch64. On other architectures it has none: kernel_refusal() refuses W6..W10.
 */
#include "loadlat.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__)
#include <immintrin.h>
#include <x86intrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

static const struct traffic TRAFFIC[] = {
    {"R", "read-only", "Read-only", 1, 0, 0, 0},
    {"W2", "2:1", "2 reads and 1 write", 2, 1, 0, 0},
    {"W3", "3:1", "3 reads and 1 write", 3, 1, 0, 0},
    {"W4", "3:2", "3 reads and 2 writes", 3, 2, 0, 0},
    {"W5", "1:1", "1 read and 1 write", 1, 1, 0, 0},
    {"W6", "write-only-nt", "100% non-temporal write", 0, 1, 1, 0},
    {"W7", "2:1-nt", "2 reads and 1 non-temporal write", 2, 1, 1, 0},
    {"W8", "1:1-nt", "1 reads and 1 non-temporal write", 1, 1, 1, 0},
    {"W9", "3:1-nt", "3 reads and 1 non-temporal write", 3, 1, 1, 0},
    {"W10", "stream-triad", "stream-triad like: 2 reads from 2 buffers and 1 non-temporal write", 2, 1, 1, 1},
};

const struct traffic *traffic_lookup(const char *code)
{
    for (size_t i = 0; i < sizeof TRAFFIC / sizeof TRAFFIC[0]; i++)
        if (strcmp(TRAFFIC[i].code, code) == 0)
            return &TRAFFIC[i];
    return NULL;
}

static int gcd_int(int a, int b)
{
    while (b) {
        int t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* --read_share=P: P % of the DRAM traffic is reads (as Mess labels its curves), by construction, in the smallest
 * whole-number request group. A plain store reads its line for ownership and later writes it back: with r reads
 * and w plain writes DRAM sees r + w reads and w writes, so P >= 50 takes r:w = (2P - 100):(100 - P) (90 -> 8:1,
 * 70 -> 4:3, 50 -> write-only). Below 50 the writes are non-temporal (no read for ownership): r:w = P:(100 - P)
 * (40 -> 2:3 NT). Holds while the buffers are far larger than the caches (every line leaves them) and the core
 * honours non-temporal stores (x86; an Arm core may treat STNP as a plain store: see the top of this file).
 * A share that one of MLC's codes mixes gives that code (100 R, 80 W3, 75 W2, 0 W6): one traffic, one name; any
 * other share is code "S<P>", label "<r>:<w>" (+ "-nt"), "write-only" at 50. NULL when P is outside 0..100. One
 * share per run: the struct returned for "S<P>" is static. */
const struct traffic *traffic_share(int pct)
{
    static struct traffic share;
    static char code[8], label[24], mlc[64];
    if (pct < 0 || pct > 100)
        return NULL;
    int nt = pct < 50;
    int reads = nt ? pct : 2 * pct - 100, writes = 100 - pct;
    int g = gcd_int(reads, writes);
    reads /= g;
    writes /= g;
    for (size_t i = 0; i < sizeof TRAFFIC / sizeof TRAFFIC[0]; i++)
        if (!TRAFFIC[i].triad && TRAFFIC[i].nt == nt && TRAFFIC[i].reads == reads && TRAFFIC[i].writes == writes)
            return &TRAFFIC[i];
    snprintf(code, sizeof code, "S%d", pct);
    if (reads == 0)
        snprintf(label, sizeof label, "write-only");  /* nt: W6 above */
    else
        snprintf(label, sizeof label, "%d:%d%s", reads, writes, nt ? "-nt" : "");
    snprintf(mlc, sizeof mlc, "%d reads and %d %swrites", reads, writes, nt ? "non-temporal " : "");
    share = (struct traffic){code, label, mlc, reads, writes, nt, 0};
    return &share;
}

/* One delay unit = one iteration of this loop (an add of a register, a compare and a taken branch: ~1 core
 * clock). The counter steps by an opaque register, not an immediate: recent Intel cores fold immediate
 * adds at rename, which would make the loop's speed depend on where it is inlined. The unit is
 * calibrated in ns anyway (calibrate_delay_ns). */
static inline __attribute__((always_inline)) void delay_inline(uint64_t n)
{
    uint64_t one = 1;
    __asm__ volatile("" : "+r"(one));
    for (uint64_t i = 0; i < n; i += one)
        __asm__ volatile("" : "+r"(i));
}

void delay_loop(uint64_t n) { delay_inline(n); }

/* ------------------------------------------------------------ exponential delays (loadlat.h) */

double exp_q[EXP_TABLE_SIZE];
double exp_w[EXP_TABLE_SIZE];

void exp_table_init(void)
{
    for (unsigned i = 0; i < EXP_TABLE_SIZE; i++)
        exp_q[i] = -log1p(-(double)i / EXP_TABLE_SIZE);
    for (unsigned i = 0; i + 1 < EXP_TABLE_SIZE; i++)
        exp_w[i] = exp_q[i + 1] - exp_q[i];
    exp_w[EXP_TABLE_SIZE - 1] = 0;
}

/* ------------------------------------------------------------ generic (64-bit scalar) kernel */
#define KN(x) gen_##x
#define ATTR
#define VT uint64_t
#define VB 8
#define VLOAD(p) (*(const uint64_t *)(const void *)(p))
#define VSTORE(p, v) (*(uint64_t *)(void *)(p) = (v))
#if defined(__x86_64__)
#define GEN_HAS_NT 1
#define VSTREAM(p, v) _mm_stream_si64((long long *)(void *)(p), (long long)(v))  /* MOVNTI */
#define VFENCE() _mm_sfence()
#elif defined(__aarch64__)
#define GEN_HAS_NT 1
static inline void stnp8(unsigned char *p, uint64_t v)  /* STNP of two 32-bit registers: 8 bytes */
{
    __asm__ volatile("stnp %w0, %w1, [%2]" : : "r"((uint32_t)v), "r"((uint32_t)(v >> 32)), "r"(p) : "memory");
}
#define VSTREAM(p, v) stnp8((p), (v))
#define VFENCE() __asm__ volatile("dmb ishst" ::: "memory")
#else
#define GEN_HAS_NT 0  /* no non-temporal store here: kernel_refusal() refuses the non-temporal codes */
#define VSTREAM(p, v) VSTORE(p, v)
#define VFENCE() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#endif
#define VXOR(a, b) ((a) ^ (b))
#define VADD(a, b) ((a) + (b))
#define VZERO 0
#define VFOLD(v) (v)
#include "kernel_tmpl.h"

#if defined(__x86_64__)
/* ------------------------------------------------------------ SSE2 (baseline x86-64) */
static inline uint64_t fold128(__m128i v)
{
    return (uint64_t)_mm_cvtsi128_si64(v) ^ (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(v, v));
}
#define KN(x) sse2_##x
#define ATTR
#define VT __m128i
#define VB 16
#define VLOAD(p) _mm_load_si128((const __m128i *)(const void *)(p))
#define VSTORE(p, v) _mm_store_si128((__m128i *)(void *)(p), (v))
#define VSTREAM(p, v) _mm_stream_si128((__m128i *)(void *)(p), (v))
#define VXOR(a, b) _mm_xor_si128((a), (b))
#define VADD(a, b) _mm_add_epi64((a), (b))
#define VZERO _mm_setzero_si128()
#define VFENCE() _mm_sfence()
#define VFOLD(v) fold128(v)
#include "kernel_tmpl.h"

/* ------------------------------------------------------------ AVX2 (run-time dispatched) */
__attribute__((target("avx2"))) static inline uint64_t fold256(__m256i v)
{
    return fold128(_mm_xor_si128(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
}
#define KN(x) avx2_##x
#define ATTR __attribute__((target("avx2")))
#define VT __m256i
#define VB 32
#define VLOAD(p) _mm256_load_si256((const __m256i *)(const void *)(p))
#define VSTORE(p, v) _mm256_store_si256((__m256i *)(void *)(p), (v))
#define VSTREAM(p, v) _mm256_stream_si256((__m256i *)(void *)(p), (v))
#define VXOR(a, b) _mm256_xor_si256((a), (b))
#define VADD(a, b) _mm256_add_epi64((a), (b))
#define VZERO _mm256_setzero_si256()
#define VFENCE() _mm_sfence()
#define VFOLD(v) fold256(v)
#include "kernel_tmpl.h"

#elif defined(__aarch64__)
/* ------------------------------------------------------------ NEON, Q-register pairs + STNP */
/* 32 bytes per vector, as the AVX2 kernel: a pair of 16-byte NEON registers, loaded and stored as a pair
 * (LDP/STP q), streamed with STNP q, q (the architecture's non-temporal store; a hint only). */
typedef struct {
    uint64x2_t lo, hi;
} q2_t;
static inline q2_t q2_load(const unsigned char *p)
{
    q2_t v = {vld1q_u64((const uint64_t *)(const void *)p), vld1q_u64((const uint64_t *)(const void *)(p + 16))};
    return v;
}
static inline void q2_store(unsigned char *p, q2_t v)
{
    vst1q_u64((uint64_t *)(void *)p, v.lo);
    vst1q_u64((uint64_t *)(void *)(p + 16), v.hi);
}
static inline void q2_stnp(unsigned char *p, q2_t v)
{
    __asm__ volatile("stnp %q0, %q1, [%2]" : : "w"(v.lo), "w"(v.hi), "r"(p) : "memory");
}
static inline q2_t q2_xor(q2_t a, q2_t b)
{
    q2_t v = {veorq_u64(a.lo, b.lo), veorq_u64(a.hi, b.hi)};
    return v;
}
static inline q2_t q2_add(q2_t a, q2_t b)
{
    q2_t v = {vaddq_u64(a.lo, b.lo), vaddq_u64(a.hi, b.hi)};
    return v;
}
static inline uint64_t q2_fold(q2_t v)
{
    uint64x2_t x = veorq_u64(v.lo, v.hi);
    return vgetq_lane_u64(x, 0) ^ vgetq_lane_u64(x, 1);
}
static const q2_t Q2_ZERO;  /* all zero */
#define KN(x) neon_##x
#define ATTR
#define VT q2_t
#define VB 32
#define VLOAD(p) q2_load((const unsigned char *)(p))
#define VSTORE(p, v) q2_store((p), (v))
#define VSTREAM(p, v) q2_stnp((p), (v))
#define VXOR(a, b) q2_xor((a), (b))
#define VADD(a, b) q2_add((a), (b))
#define VZERO Q2_ZERO
#define VFENCE() __asm__ volatile("dmb ishst" ::: "memory")
#define VFOLD(v) q2_fold(v)
#include "kernel_tmpl.h"
#endif

/* 1 when this build has kernel `isa` ("avx2", "sse2", "neon", "generic") and this CPU can run it. */
static int isa_available(const char *isa)
{
    if (strcmp(isa, "generic") == 0)
        return 1;
#if defined(__x86_64__)
    if (strcmp(isa, "sse2") == 0)
        return 1;
    if (strcmp(isa, "avx2") == 0) {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2");
    }
#elif defined(__aarch64__)
    if (strcmp(isa, "neon") == 0)
        return 1;  /* Advanced SIMD is mandatory in ARMv8-A (AArch64) */
#endif
    return 0;
}

#if defined(__x86_64__)
#define ISA_CHOICES "avx2 (CPUs with AVX2), sse2 or generic"
#elif defined(__aarch64__)
#define ISA_CHOICES "neon or generic"
#else
#define ISA_CHOICES "generic"
#endif

const char *load_isa(void)
{
    const char *force = getenv("LOADLAT_ISA");
    if (force && *force && isa_available(force)) {
        static const char *const names[] = {"generic", "sse2", "avx2", "neon"};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (strcmp(force, names[i]) == 0)
                return names[i];
    }
#if defined(__x86_64__)
    return isa_available("avx2") ? "avx2" : "sse2";
#elif defined(__aarch64__)
    return "neon";
#else
    return "generic";
#endif
}

const char *kernel_refusal(const struct traffic *tr)
{
    static char why[200];
    const char *force = getenv("LOADLAT_ISA");
    if (force && *force && !isa_available(force)) {
        snprintf(why, sizeof why, "LOADLAT_ISA=%.40s: no such kernel on this CPU (%s: " ISA_CHOICES
                 "; or unset it)", force, LOADLAT_ARCH);
        return why;
    }
    if (tr && tr->nt && strcmp(load_isa(), "generic") == 0 && !GEN_HAS_NT) {
        snprintf(why, sizeof why, "-%s needs non-temporal stores, which loadlat has only on x86-64 and aarch64: "
                 "use -R or -W2..-W5", tr->code);
        return why;
    }
    return NULL;
}

void load_run(struct load_args *a)
{
    const char *isa = load_isa();
#if defined(__x86_64__)
    if (strcmp(isa, "avx2") == 0) {
        avx2_run(a);
        return;
    }
    if (strcmp(isa, "sse2") == 0) {
        sse2_run(a);
        return;
    }
#elif defined(__aarch64__)
    if (strcmp(isa, "neon") == 0) {
        neon_run(a);
        return;
    }
#else
    (void)isa;  /* the generic kernel only */
#endif
    gen_run(a);
}

/* ------------------------------------------------------------ latency chase */

#define STEP p = (void **)*p;
#define STEP8 STEP STEP STEP STEP STEP STEP STEP STEP

void chase_run(struct chase_args *a)
{
    void **p = a->start;
    uint64_t n = 0;
    int measuring = 0, cur = -1;
    const int nwin = a->nwin;
    for (;;) {
        STEP8 STEP8 STEP8 STEP8 STEP8 STEP8 STEP8 STEP8
        n += 64;
        int ph = atomic_load_explicit(a->phase, memory_order_relaxed);
        if (ph == PH_MEASURE) {
            int w = subwin_reached(a->subwin, nwin);
            if (cur < w) {
                double now = now_s(), cpu = thread_cpu_s();
                measuring = 1;
                cur = marks_stamp(&a->marks, cur, w, now, cpu, n);
            }
        } else if (ph == PH_STOP) {
            if (measuring) {
                double now = now_s(), cpu = thread_cpu_s();
                a->loads = marks_close(&a->marks, &cur, nwin, now, cpu, n, &a->t0, &a->t1, &a->cpu_s);
                a->measured = 1;
            }
            break;
        }
    }
    a->end = p;
}

/* ------------------------------------------------------------ calibrations */

double calibrate_delay_ns(uint64_t *iters_used)
{
    const uint64_t n = 20000000;
    double best = 1e30;
    delay_loop(n / 4);  /* let the core reach its clock */
    for (int r = 0; r < 5; r++) {
        double t0 = thread_cpu_s();  /* CPU time: immune to being descheduled on a shared machine */
        delay_loop(n);
        double dt = thread_cpu_s() - t0;
        if (dt < best)
            best = dt;
    }
    if (iters_used)
        *iters_used = n;
    return best * 1e9 / (double)n;
}

/* One link of the clock chain: x += y with y in a register the compiler cannot see through, so the
 * instruction is `add reg, reg` (x86-64) or `add xD, xD, xS` (arm64): 1 core clock of latency on every
 * x86-64 and arm64 core. An add with an IMMEDIATE (x += 1) is not a clock: recent Intel cores (Golden Cove
 * and later) fold such adds at register rename, and a chain of them ran ~7 adds per clock on a 2.6 GHz
 * Xeon (reported 18.9 GHz). The empty asm keeps each add in the chain (no reassociation to x += 16*y). */
#define ADD1 x += y; __asm__ volatile("" : "+r"(x));
#define ADD8 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1

double calibrate_core_ghz(void)
{
    const uint64_t iters = 5000000;  /* x 16 dependent adds = 80 M clocks */
    double best = 1e30;
    uint64_t x = 0, y = 1;
    __asm__ volatile("" : "+r"(y));  /* y is opaque: the adds take a register operand */
    for (int r = 0; r < 5; r++) {
        double t0 = thread_cpu_s();
        for (uint64_t i = 0; i < iters; i++) {
            ADD8 ADD8
        }
        double dt = thread_cpu_s() - t0;
        if (dt < best)
            best = dt;
    }
    volatile uint64_t sink = x;
    (void)sink;
    return (double)iters * 16.0 / best * 1e-9;
}

/* What an exponential draw adds to a request group: time of n (draw + delay loop of the drawn length)
 * minus n fixed delay loops of the same mean, over n, in ns (thread CPU time, minimum of 5 runs each).
 * Measured the way the load loop uses it (the random loop lengths cost branch mispredictions too). The
 * load threads shorten the mean of their exponential by this much, so that fixed and exp pacing space
 * request groups alike (approximately: the delay loop overlaps the memory accesses differently). */
double calibrate_exp_cost_ns(double delay_ns)
{
    const uint64_t n = 300000;
    const double mean = delay_ns > 0 ? 20.0 / delay_ns : 50.0;  /* ~20 ns of delay per group */
    const uint64_t fixed = (uint64_t)(mean + 0.5);
    uint64_t s = 0x243F6A8885A308D3ull;
    double best_exp = 1e30, best_fix = 1e30;
    for (int r = 0; r < 5; r++) {
        double t0 = thread_cpu_s();
        for (uint64_t i = 0; i < n; i++) {
            uint64_t d = exp_draw(&s, (double)fixed);
            __asm__ volatile("" : "+r"(d));
            delay_inline(d);
        }
        double t1 = thread_cpu_s();
        for (uint64_t i = 0; i < n; i++) {
            uint64_t d = fixed;
            __asm__ volatile("" : "+r"(d));
            delay_inline(d);
        }
        double t2 = thread_cpu_s();
        if (t1 - t0 < best_exp)
            best_exp = t1 - t0;
        if (t2 - t1 < best_fix)
            best_fix = t2 - t1;
    }
    double extra = (best_exp - best_fix) * 1e9 / (double)n;
    return extra > 0 ? extra : 0.0;
}

double calibrate_tick_ns(void)
{
    const uint64_t n = 100000;
    uint64_t sink = 0;
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
        double t0 = thread_cpu_s();
        for (uint64_t i = 0; i < n; i++) {
            sink += tick_now();
            __asm__ volatile("" : "+r"(sink));
        }
        double dt = thread_cpu_s() - t0;
        if (dt < best)
            best = dt;
    }
    return best * 1e9 / (double)n;
}

double cpufreq_max_ghz(int cpu)
{
    char path[128];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cpufreq/cpuinfo_max_freq", cpu);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0.0;
    double khz = 0.0;
    if (fscanf(f, "%lf", &khz) != 1)
        khz = 0.0;
    fclose(f);
    return khz > 0 ? khz * 1e-6 : 0.0;
}

const char *core_clock_check(double core_ghz, double tsc_ghz, double cpufreq_max)
{
    if (!(core_ghz > 0.2 && core_ghz < 7.0))
        return "implausible: outside 0.2-7 GHz";
    if (cpufreq_max > 0 && core_ghz > cpufreq_max * 1.15)
        return "implausible: above cpufreq's cpuinfo_max_freq";
    /* A core runs between ~1/4 of the TSC (deep power saving) and ~2x (turbo of a low-base part). */
    if (tsc_ghz > 0 && (core_ghz > tsc_ghz * 2.2 || core_ghz < tsc_ghz * 0.25))
        return "implausible: not within 0.25-2.2 x the TSC rate";
    return "ok";
}

double calibrate_tsc_ghz(void)
{
#if defined(__x86_64__)
    double t0 = now_s();
    uint64_t c0 = __rdtsc();
    while (now_s() - t0 < 0.05)
        ;
    uint64_t c1 = __rdtsc();
    double t1 = now_s();
    return (double)(c1 - c0) / (t1 - t0) * 1e-9;
#else
    return 0.0;
#endif
}
