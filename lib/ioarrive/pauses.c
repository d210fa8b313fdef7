/* ioarrive - memstor's arrival-driven (open-loop) I/O generator.
 *
 * pauses.c: the machine's own pauses, measured before a real-time run with no I/O in flight (--pause-probe S).
 * One thread per CPU the process may run on, pinned there, reads CLOCK_MONOTONIC in a loop for S seconds; a gap
 * of PAUSE_MIN_NS or more between two reads is a pause: the thread was not running (another task, an interrupt,
 * or the whole virtual CPU descheduled by its hypervisor). A generator cannot issue an arrival that falls in a
 * pause of its own CPU: pauses longer than the lag bound fail the lag check and send the arrivals due in them as
 * one burst (the count tests), whatever the generator does. On the 2-vCPU VM memstor was built on, two spinning
 * threads with nothing else running saw 1.0-1.4 pauses over 1 ms per CPU-second, up to 5.8-8.2 ms.
 */
#include "ioarrive.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

struct spinner {
    int cpu;
    int64_t until_ns;
    pthread_t th;
    uint64_t pauses, over_1ms;
    int64_t max_ns, paused_ns;
};

static void *spin(void *arg)
{
    struct spinner *s = arg;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(s->cpu, &one);
    pthread_setaffinity_np(pthread_self(), sizeof one, &one);
    int64_t prev = now_ns();
    while (prev < s->until_ns) {
        int64_t t = now_ns(), gap = t - prev;
        if (gap >= PAUSE_MIN_NS) {
            s->pauses++;
            s->paused_ns += gap;
            if (gap >= 1000000) s->over_1ms++;
            if (gap > s->max_ns) s->max_ns = gap;
        }
        prev = t;
    }
    return NULL;
}

/* Spin on every CPU of the affinity mask for seconds (s > 0); the sums go to p (p->cpus 0 when none could run). */
void probe_pauses(double seconds, struct pause_probe *p)
{
    cpu_set_t mask;
    memset(p, 0, sizeof *p);
    p->seconds = seconds;
    if (sched_getaffinity(0, sizeof mask, &mask)) return;
    int n = CPU_COUNT(&mask);
    struct spinner *s = calloc((size_t)n, sizeof *s);
    if (!s) return;
    int64_t until = now_ns() + (int64_t)(seconds * 1e9);
    int k = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && k < n; cpu++) {
        if (!CPU_ISSET(cpu, &mask)) continue;
        s[k].cpu = cpu;
        s[k].until_ns = until;
        if (pthread_create(&s[k].th, NULL, spin, &s[k])) break;
        k++;
    }
    for (int i = 0; i < k; i++) {
        pthread_join(s[i].th, NULL);
        p->pauses += s[i].pauses;
        p->over_1ms += s[i].over_1ms;
        p->paused_ns += s[i].paused_ns;
        if (s[i].max_ns > p->max_ns) p->max_ns = s[i].max_ns;
    }
    p->cpus = k;
    free(s);
}
