/* ioarrive - memstor's arrival-driven (open-loop) I/O generator.
 *
 * engines.c: the ways an I/O reaches the target. No library is needed at build time (static and arm64
 * builds stay plain): io_uring and Linux native AIO are driven by their raw system calls, with the kernel's
 * own UAPI headers (linux/io_uring.h, linux/aio_abi.h).
 *   io_uring  one ring; the submitter fills an SQE (IORING_OP_READV/WRITEV: every kernel from 5.1) and
 *             calls io_uring_enter(1 to submit, 0 to wait); the reaper waits with io_uring_enter(GETEVENTS)
 *             and reads the CQ ring (single producer, single consumer each). A NOP wakes the reaper.
 *   libaio    io_setup / io_submit one iocb / io_getevents (50 ms timeout). Asynchronous only with O_DIRECT.
 *   sync      a pool of --threads threads, each takes the next I/O from a queue and runs pread/pwrite; its
 *             submission time is when the thread starts the call (time waiting for a free thread is lag).
 * Each engine is probed with one read of the target before it is chosen (--engine auto: the first that works,
 * libaio first with O_DIRECT, io_uring first for buffered I/O: engine_select).
 */
#include "ioarrive.h"

#include <errno.h>
#include <linux/aio_abi.h>
#include <linux/io_uring.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#endif
#ifndef __NR_io_uring_enter
#define __NR_io_uring_enter 426
#endif

#define WAKE_TAG UINT64_MAX
#define LOAD_ACQ(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE_REL(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

/* ------------------------------------------------------------------------------------------ io_uring */

struct uring {
    int fd;
    unsigned *sq_head, *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
    struct io_uring_sqe *sqes;
    struct io_uring_cqe *cqes;
    void *sq_ptr, *cq_ptr;
    size_t sq_sz, cq_sz, sqes_sz;
};

static int uring_enter(int fd, unsigned submit, unsigned wait, unsigned flags)
{
    return (int)syscall(__NR_io_uring_enter, fd, submit, wait, flags, NULL, 0);
}

static int uring_map(struct uring *u, const struct io_uring_params *p)
{
    u->sq_sz = p->sq_off.array + p->sq_entries * sizeof(unsigned);
    u->cq_sz = p->cq_off.cqes + p->cq_entries * sizeof(struct io_uring_cqe);
    if (p->features & IORING_FEAT_SINGLE_MMAP)
        u->sq_sz = u->cq_sz = u->sq_sz > u->cq_sz ? u->sq_sz : u->cq_sz;
    u->sq_ptr = mmap(NULL, u->sq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd, IORING_OFF_SQ_RING);
    if (u->sq_ptr == MAP_FAILED) return -errno;
    u->cq_ptr = u->sq_ptr;
    if (!(p->features & IORING_FEAT_SINGLE_MMAP)) {
        u->cq_ptr = mmap(NULL, u->cq_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd,
                         IORING_OFF_CQ_RING);
        if (u->cq_ptr == MAP_FAILED) return -errno;
    }
    u->sqes_sz = p->sq_entries * sizeof(struct io_uring_sqe);
    u->sqes = mmap(NULL, u->sqes_sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd, IORING_OFF_SQES);
    if (u->sqes == MAP_FAILED) return -errno;
    char *sq = u->sq_ptr, *cq = u->cq_ptr;
    u->sq_head = (unsigned *)(sq + p->sq_off.head);
    u->sq_tail = (unsigned *)(sq + p->sq_off.tail);
    u->sq_mask = (unsigned *)(sq + p->sq_off.ring_mask);
    u->sq_array = (unsigned *)(sq + p->sq_off.array);
    u->cq_head = (unsigned *)(cq + p->cq_off.head);
    u->cq_tail = (unsigned *)(cq + p->cq_off.tail);
    u->cq_mask = (unsigned *)(cq + p->cq_off.ring_mask);
    u->cqes = (struct io_uring_cqe *)(cq + p->cq_off.cqes);
    return 0;
}

/* Put one SQE in the submission ring (not yet submitted: uring_enter_all does). */
static void uring_queue(struct uring *u, uint8_t op, int fd, const struct iovec *iov, uint64_t off, uint64_t tag)
{
    unsigned tail = *u->sq_tail, idx = tail & *u->sq_mask;
    struct io_uring_sqe *sqe = &u->sqes[idx];
    memset(sqe, 0, sizeof *sqe);
    sqe->opcode = op;
    sqe->fd = fd;
    sqe->addr = (uint64_t)(uintptr_t)iov;
    sqe->len = iov ? 1 : 0;
    sqe->off = off;
    sqe->user_data = tag;
    u->sq_array[idx] = idx;
    STORE_REL(u->sq_tail, tail + 1);
}

/* Submit the n SQEs queued last (io_uring_enter may take fewer at a time: enter again for the rest). */
static int uring_enter_all(struct uring *u, unsigned n)
{
    while (n > 0) {
        int r = uring_enter(u->fd, n, 0, 0);
        if (r > 0) { n -= (unsigned)r; continue; }
        if (r < 0 && (errno == EINTR || errno == EAGAIN || errno == EBUSY)) continue;
        return r < 0 ? -errno : -EIO;
    }
    return 0;
}

static int uring_push(struct uring *u, uint8_t op, int fd, const struct iovec *iov, uint64_t off, uint64_t tag)
{
    uring_queue(u, op, fd, iov, off, tag);
    return uring_enter_all(u, 1);
}

/* Wait for (wait = 1) and collect CQEs: slots into out, the wake NOPs dropped. */
static int uring_collect(struct ctx *c, struct io_slot **out, int max, int wait)
{
    struct uring *u = c->eng_state;
    unsigned head = *u->cq_head, tail = LOAD_ACQ(u->cq_tail);
    if (head == tail && wait) {
        if (uring_enter(u->fd, 0, 1, IORING_ENTER_GETEVENTS) < 0 && errno != EINTR && errno != EAGAIN)
            die("io_uring_enter (wait): %s", strerror(errno));
        tail = LOAD_ACQ(u->cq_tail);
    }
    int n = 0;
    for (; head != tail && n < max; head++) {
        struct io_uring_cqe *cqe = &u->cqes[head & *u->cq_mask];
        if (cqe->user_data == WAKE_TAG) continue;
        struct io_slot *s = &c->slots[cqe->user_data];
        s->res = cqe->res;
        out[n++] = s;
    }
    STORE_REL(u->cq_head, head);
    return n;
}

static int probe_read(struct ctx *c, int (*submit)(struct ctx *, struct io_slot *),
                      int (*reap)(struct ctx *, struct io_slot **, int, int), char *why, size_t whylen,
                      const char *name)
{
    struct io_slot *s = &c->slots[0], *out[4];
    s->off = 0;
    s->len = (uint32_t)(c->j->bs < c->tgt.size_bytes ? c->j->bs : c->tgt.lbs);
    s->iov.iov_len = s->len;
    s->res = -EINPROGRESS;
    int r = submit(c, s);
    if (r < 0) {
        snprintf(why, whylen, "%s: the probe read failed to submit: %s", name, strerror(-r));
        return -1;
    }
    int64_t deadline = now_ns() + 5000000000LL;
    int n = 0;
    while (n == 0 && now_ns() < deadline)
        n = reap(c, out, 4, 100);
    if (n == 0 || s->res < 0) {
        snprintf(why, whylen, "%s: the probe read of the target failed: %s", name,
                 n == 0 ? "no completion in 5 s" : strerror(-s->res));
        return -1;
    }
    return 0;
}

static int uring_submit(struct ctx *c, struct io_slot *s)
{
    uint8_t op = s->dir == DIR_WRITE ? IORING_OP_WRITEV : IORING_OP_READV;
    return uring_push(c->eng_state, op, c->tgt.fd, &s->iov, s->off, s->id);
}

static int uring_submit_many(struct ctx *c, struct io_slot **s, int n)
{
    struct uring *u = c->eng_state;
    for (int i = 0; i < n; i++)
        uring_queue(u, s[i]->dir == DIR_WRITE ? IORING_OP_WRITEV : IORING_OP_READV, c->tgt.fd, &s[i]->iov,
                    s[i]->off, s[i]->id);
    return uring_enter_all(u, (unsigned)n);
}

static int uring_reap(struct ctx *c, struct io_slot **out, int max, int timeout_ms)
{
    (void)timeout_ms;  /* io_uring_enter waits without a timeout: the submitter's wake NOP ends the wait */
    return uring_collect(c, out, max, 1);
}

static void uring_wake(struct ctx *c)
{
    uring_push(c->eng_state, IORING_OP_NOP, -1, NULL, 0, WAKE_TAG);
}

static void uring_fini(struct ctx *c)
{
    struct uring *u = c->eng_state;
    if (!u) return;
    if (u->sqes && u->sqes != MAP_FAILED) munmap(u->sqes, u->sqes_sz);
    if (u->cq_ptr && u->cq_ptr != MAP_FAILED && u->cq_ptr != u->sq_ptr) munmap(u->cq_ptr, u->cq_sz);
    if (u->sq_ptr && u->sq_ptr != MAP_FAILED) munmap(u->sq_ptr, u->sq_sz);
    if (u->fd >= 0) close(u->fd);
    free(u);
    c->eng_state = NULL;
}

static int uring_init(struct ctx *c, char *why, size_t whylen)
{
    struct uring *u = calloc(1, sizeof *u);
    struct io_uring_params p;
    if (!u) die("out of memory");
    unsigned cq = 64;
    while (cq < c->nslots + 64) cq *= 2;
    memset(&p, 0, sizeof p);
    p.flags = IORING_SETUP_CQSIZE;
    p.cq_entries = cq;
    c->eng_state = u;
    u->fd = (int)syscall(__NR_io_uring_setup, 64, &p);
    if (u->fd < 0 && errno == EINVAL) {  /* before 5.5: no CQSIZE; the CQ ring is twice the SQ ring */
        memset(&p, 0, sizeof p);
        u->fd = (int)syscall(__NR_io_uring_setup, cq / 2, &p);
    }
    if (u->fd < 0) {
        int e = errno;
        snprintf(why, whylen, "io_uring: io_uring_setup failed: %s%s", strerror(e),
                 e == EPERM || e == ENOSYS ? " (kernel.io_uring_disabled, a seccomp filter, an old kernel or an emulator)" : "");
        uring_fini(c);
        return -1;
    }
    int r = uring_map(u, &p);
    if (r < 0) {
        snprintf(why, whylen, "io_uring: mmap of the rings failed: %s", strerror(-r));
        uring_fini(c);
        return -1;
    }
    if (probe_read(c, uring_submit, uring_reap, why, whylen, "io_uring")) {
        uring_fini(c);
        return -1;
    }
    snprintf(why, whylen, "io_uring: io_uring_setup works here and a probe read of the target succeeded "
             "(raw system calls, %u CQ entries)", p.cq_entries);
    return 0;
}

const struct engine ENGINE_URING = {ENG_URING, uring_init, uring_submit, uring_reap, uring_wake, uring_fini, 0,
                                    uring_submit_many};

/* -------------------------------------------------------------------------------------------- libaio */

struct aio {
    aio_context_t ctx;
    struct iocb *cbs;
    struct io_event ev[256];
};

static void aio_fill(struct ctx *c, struct iocb *cb, const struct io_slot *s)
{
    memset(cb, 0, sizeof *cb);
    cb->aio_fildes = (uint32_t)c->tgt.fd;
    cb->aio_lio_opcode = s->dir == DIR_WRITE ? IOCB_CMD_PWRITE : IOCB_CMD_PREAD;
    cb->aio_buf = (uint64_t)(uintptr_t)s->iov.iov_base;
    cb->aio_nbytes = s->len;
    cb->aio_offset = (int64_t)s->off;
    cb->aio_data = s->id;
}

static int aio_submit_many(struct ctx *c, struct io_slot **s, int n)
{
    struct aio *a = c->eng_state;
    struct iocb *list[SUBMIT_BATCH_MAX];
    for (int i = 0; i < n; i++) {
        list[i] = &a->cbs[s[i]->id];
        aio_fill(c, list[i], s[i]);
    }
    for (int done = 0; done < n;) {
        long r = syscall(__NR_io_submit, a->ctx, (long)(n - done), list + done);
        if (r > 0) { done += (int)r; continue; }
        if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        return r < 0 ? -errno : -EIO;
    }
    return 0;
}

static int aio_submit(struct ctx *c, struct io_slot *s)
{
    return aio_submit_many(c, &s, 1);
}

static int aio_reap(struct ctx *c, struct io_slot **out, int max, int timeout_ms)
{
    struct aio *a = c->eng_state;
    struct timespec ts = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L};
    if (max > 256) max = 256;
    long n = syscall(__NR_io_getevents, a->ctx, 1, max, a->ev, &ts);
    if (n < 0) {
        if (errno == EINTR) return 0;
        die("io_getevents: %s", strerror(errno));
    }
    for (long i = 0; i < n; i++) {
        struct io_slot *s = &c->slots[a->ev[i].data];
        s->res = (int)a->ev[i].res;
        out[i] = s;
    }
    return (int)n;
}

static void aio_wake(struct ctx *c) { (void)c; }

static void aio_fini(struct ctx *c)
{
    struct aio *a = c->eng_state;
    if (!a) return;
    if (a->ctx) syscall(__NR_io_destroy, a->ctx);
    free(a->cbs);
    free(a);
    c->eng_state = NULL;
}

static int aio_init(struct ctx *c, char *why, size_t whylen)
{
    struct aio *a = calloc(1, sizeof *a);
    if (!a || !(a->cbs = calloc(c->nslots, sizeof *a->cbs))) die("out of memory");
    c->eng_state = a;
    if (syscall(__NR_io_setup, c->nslots, &a->ctx) < 0) {
        snprintf(why, whylen, "libaio: io_setup(%u) failed: %s%s", c->nslots, strerror(errno),
                 errno == EAGAIN ? " (fs.aio-max-nr too small)" : "");
        a->ctx = 0;
        aio_fini(c);
        return -1;
    }
    if (probe_read(c, aio_submit, aio_reap, why, whylen, "libaio")) {
        aio_fini(c);
        return -1;
    }
    snprintf(why, whylen, "libaio: io_setup works here and a probe read of the target succeeded (raw system "
             "calls%s)", c->j->direct ? "" : "; without O_DIRECT the kernel completes each I/O inside io_submit");
    return 0;
}

const struct engine ENGINE_AIO = {ENG_AIO, aio_init, aio_submit, aio_reap, aio_wake, aio_fini, 0, aio_submit_many};

/* ------------------------------------------------------------------------------ pool of sync threads */

struct pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint32_t *q, mask;
    uint64_t head, tail;
    int done;
    struct ctx *c;
};

static void *pool_worker(void *arg)
{
    struct pool *p = arg;
    struct ctx *c = p->c;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (p->head == p->tail && !p->done)
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->head == p->tail) {
            pthread_mutex_unlock(&p->mu);
            return NULL;
        }
        struct io_slot *s = &c->slots[p->q[p->head++ & p->mask]];
        pthread_mutex_unlock(&p->mu);
        s->submit = now_ns();
        ssize_t r = s->dir == DIR_WRITE ? pwrite(c->tgt.fd, s->iov.iov_base, s->len, (off_t)s->off)
                                        : pread(c->tgt.fd, s->iov.iov_base, s->len, (off_t)s->off);
        s->done = now_ns();
        s->res = r < 0 ? -errno : (int)r;
        pthread_mutex_lock(&c->rec_mu);
        if (!__atomic_load_n(&c->stop_reaping, __ATOMIC_ACQUIRE))
            finish_io(c, s);
        pthread_mutex_unlock(&c->rec_mu);
    }
}

static int pool_submit(struct ctx *c, struct io_slot *s)
{
    struct pool *p = c->eng_state;
    pthread_mutex_lock(&p->mu);
    p->q[p->tail++ & p->mask] = s->id;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    return 0;
}

static void pool_wake(struct ctx *c)
{
    struct pool *p = c->eng_state;
    pthread_mutex_lock(&p->mu);
    p->done = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static void pool_fini(struct ctx *c) { (void)c; }  /* workers are detached; a stuck pread cannot be joined */

static int pool_init(struct ctx *c, char *why, size_t whylen)
{
    struct pool *p = calloc(1, sizeof *p);
    uint32_t n = 1;
    while (n < c->nslots) n *= 2;
    if (!p || !(p->q = calloc(n, sizeof *p->q))) die("out of memory");
    p->mask = n - 1;
    p->c = c;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    c->eng_state = p;
    struct io_slot *s = &c->slots[0];
    s->len = (uint32_t)(c->j->bs < c->tgt.size_bytes ? c->j->bs : c->tgt.lbs);
    if (pread(c->tgt.fd, s->iov.iov_base, s->len, 0) < 0) {
        snprintf(why, whylen, "sync: the probe read of the target failed: %s", strerror(errno));
        return -1;
    }
    for (int i = 0; i < c->j->threads; i++) {
        pthread_t t;
        pthread_attr_t at;
        pthread_attr_init(&at);
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &at, pool_worker, p))
            die("cannot start pool thread %d of %d", i + 1, c->j->threads);
        pthread_attr_destroy(&at);
    }
    snprintf(why, whylen, "sync: a pool of %d threads running pread/pwrite", c->j->threads);
    return 0;
}

const struct engine ENGINE_SYNC = {ENG_SYNC, pool_init, pool_submit, NULL, pool_wake, pool_fini, 1, NULL};

/* --------------------------------------------------------------------------------------- the choice */

int engine_select(struct ctx *c)
{
    /* With O_DIRECT libaio first: io_uring's completions run as task work of the submitting thread, so the
     * reaper sees them only after the submitter ran them (service p50 101-122 us against 63-90 us with libaio
     * at 41-69k IOPS on a 2-vCPU VM); buffered, libaio blocks in its submit call. */
    static const struct engine *const direct_order[] = {&ENGINE_AIO, &ENGINE_URING, &ENGINE_SYNC};
    static const struct engine *const buffered_order[] = {&ENGINE_URING, &ENGINE_AIO, &ENGINE_SYNC};
    const struct engine *const *order = c->j->direct ? direct_order : buffered_order;
    char why[3][400];
    if (c->j->engine == ENG_SIM) {
        c->eng = &ENGINE_SIM;
        return c->eng->init(c, c->engine_why, sizeof c->engine_why);
    }
    for (int i = 0; i < 3; i++) {
        if (c->j->engine != ENG_AUTO && order[i]->kind != c->j->engine) continue;
        why[i][0] = 0;
        if (order[i]->init(c, why[i], sizeof why[i]) == 0) {
            c->eng = order[i];
            if (c->j->engine != ENG_AUTO)
                snprintf(c->engine_why, sizeof c->engine_why, "asked (--engine %s); %.399s",
                         ENGINE_NAMES[order[i]->kind], why[i]);
            else
                snprintf(c->engine_why, sizeof c->engine_why, "auto: %.399s%s%.399s%s%.399s", why[0],
                         i > 0 ? "; " : "", i > 0 ? why[1] : "", i > 1 ? "; " : "", i > 1 ? why[2] : "");
            return 0;
        }
        if (c->j->engine != ENG_AUTO)
            die("--engine %s does not work here: %s", ENGINE_NAMES[c->j->engine], why[i]);
    }
    die("no engine works on %s: %s; %s; %s", c->j->target, why[0], why[1], why[2]);
}
