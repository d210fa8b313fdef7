/* Independent core-clock measurement for tests/test_loadlat.py: a chain of dependent register-operand adds
 * written in assembly (x86-64 `add %reg, %reg`, arm64 `add x, x, x`; 1 clock of latency on every core of
 * both), timed with the thread's CPU time, best of 7 runs. Prints the clock in GHz. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#if defined(__x86_64__)
#define ADD1 __asm__ volatile("add %1, %0" : "+r"(x) : "r"(y));
#elif defined(__aarch64__)
#define ADD1 __asm__ volatile("add %0, %0, %1" : "+r"(x) : "r"(y));
#else
#error "x86-64 or arm64 only"
#endif
#define ADD10 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1 ADD1

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(void)
{
    const uint64_t iters = 4000000; /* x 50 adds = 200 M clocks */
    uint64_t x = 0, y = 3;
    double best = 1e30;
    for (int r = 0; r < 7; r++) {
        double t0 = cpu_s();
        for (uint64_t i = 0; i < iters; i++) {
            ADD10 ADD10 ADD10 ADD10 ADD10
        }
        double dt = cpu_s() - t0;
        if (dt < best)
            best = dt;
    }
    printf("%.4f %llu\n", (double)iters * 50.0 / best * 1e-9, (unsigned long long)x);
    return 0;
}
