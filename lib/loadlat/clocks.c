/* loadlat: time sources and sleeping (CLOCK_MONOTONIC, thread CPU time, nanosleep) and the rate of the
 * cheap time stamps (tick_now in loadlat.h: x86-64 TSC, aarch64 CNTVCT_EL0, else CLOCK_MONOTONIC in ns). */
#include "loadlat.h"

#include <math.h>
#include <time.h>

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

#if defined(__aarch64__)
/* Ticks of CNTVCT_EL0 per ns over >= 10 ms of CLOCK_MONOTONIC (busy wait). */
static double counter_measured_ghz(void)
{
    double t0 = now_s(), t1;
    uint64_t c0 = tick_now();
    while ((t1 = now_s()) - t0 < 0.01)
        ;
    uint64_t c1 = tick_now();
    return (double)(c1 - c0) / ((t1 - t0) * 1e9);
}
#endif

/* x86-64: the TSC rate measured by calibrate_tsc_ghz. aarch64: the generic timer's frequency CNTFRQ_EL0
 * (a fixed rate, not the core clock: 1 GHz from Armv8.6, often 19.2-100 MHz before), checked against three
 * 10 ms measurements with CLOCK_MONOTONIC: firmware sometimes leaves CNTFRQ_EL0 wrong (Linux then takes the
 * rate from the device tree), so when it is 0 or more than 2 % off every measurement, their median is used.
 * Else: tick_now counts ns (1.0). Computed once. */
double tick_ghz(double tsc_ghz)
{
#if defined(__x86_64__)
    return tsc_ghz;
#elif defined(__aarch64__)
    (void)tsc_ghz;
    static _Atomic double cached;  /* 0 = not yet */
    double g = atomic_load_explicit(&cached, memory_order_relaxed);
    if (g > 0)
        return g;
    uint64_t f;
    __asm__ volatile("mrs %0, cntfrq_el0" : "=r"(f));
    double reg = (double)f * 1e-9, m[3];
    g = 0;
    for (int i = 0; i < 3; i++) {
        m[i] = counter_measured_ghz();
        if (reg > 0 && fabs(reg - m[i]) <= 0.02 * m[i]) {
            g = reg;  /* the register agrees with a measurement (one not disturbed by preemption) */
            break;
        }
    }
    if (g == 0) {  /* median of the three */
        double lo = fmin(m[0], fmin(m[1], m[2])), hi = fmax(m[0], fmax(m[1], m[2]));
        g = m[0] + m[1] + m[2] - lo - hi;
    }
    atomic_store_explicit(&cached, g, memory_order_relaxed);
    return g;
#else
    (void)tsc_ghz;
    return 1.0;
#endif
}
