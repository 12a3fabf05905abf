/*
 * pt_queue.c — the prefetch queue (paper Section 3): predictions {descriptor, byte range,
 * call ID} the prefetch thread made and has not issued yet, at most 64.  At a flush an
 * entry whose call the computation thread has already reached (call ID <= the clock's)
 * is expired: the read it names is being made or was made, so a prefetch could only
 * compete with it; it is dropped, counted, never issued.  The rest are sorted by
 * (descriptor, offset) and merged (touching, overlapping, or across a gap of at most
 * 64 KiB, which is cheaper read than sought over) into requests of at most 4 MiB (a
 * request the device takes whole: max_sectors_kb), each one posix_fadvise(WILLNEED),
 * which starts the reads and returns, unless cachestat(2) (Linux 6.5) says every page of
 * it is in the page cache already: then it is counted (pt_cached) and not issued, the
 * paper's residency check before a prefetch goes to the disk.  (On older kernels every
 * request is issued; WILLNEED itself skips cached pages, so the check saves the
 * request's walk of the cache, and says how much of the thread's work was needed.)
 * Under FORESIGHT_PT_ISSUE=uring the same requests are IORING_OP_FADVISE entries of a
 * ring of the thread's own (liburing; restricted to that operation), submitted together
 * at the end of a flush and whenever the ring is full: the kernel's io-wq workers start
 * the reads, and the thread goes on.  Without the ring (not
 * built with liburing, io_uring refused) they are posix_fadvise calls, and the statistics
 * say why.
 *
 * Flushed when 64 are pending, before the thread sleeps, at a close (that descriptor's),
 * and when the thread ends.  Only the prefetch thread touches the queue.
 *
 * Under FORESIGHT_PT_SCHED=eq1 the queue holds the whole window (the paper's kernel
 * prefetch queue) and an entry goes to the disk only when the paper's Eq. (1) and (2)
 * say it is due: with i the program's call ID and j the entry's,
 *     C * (j - i) - (K + 1) * T <= Time_Threshold   and   j - i <= Queue_Threshold,
 * C the program's time per call, T a request's time on the device, K the requests there
 * (pt_sched.c measures them), Time_Threshold FORESIGHT_PT_SLACK, Queue_Threshold
 * FORESIGHT_PT_QUEUE.  What is due is looked at every 64 predictions and at every wake
 * of the thread (at least every millisecond while it sleeps).  A close, the thread's end
 * and a wait at a sync point issue everything.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef FORESIGHT_HAVE_URING
#include <liburing.h>
#endif

#include "internal.h"

#define MERGE_GAP (64u << 10)
#define REQUEST_MAX (4u << 20)

struct pt_entry {
    int fd;
    uint64_t off, len, call;
};

#define HOLD (FS_PT_QUEUE_MAX + 2 * FS_PT_PENDING) /* eq1: the window and some */

static struct pt_entry pending[HOLD];
static unsigned npending, since_schedule;

/* cachestat(2): the system call's number and structures (the headers of systems older
 * than Linux 6.5 lack them). */
#define PT_SYS_CACHESTAT 451
struct pt_cachestat_range {
    uint64_t off, len;
};
struct pt_cachestat {
    uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};
static bool no_cachestat; /* the kernel lacks it */

/* Whether every page of FD's bytes [OFF, OFF + LEN) is in the page cache. */
static bool cached(int fd, uint64_t off, uint64_t len)
{
    if (no_cachestat || len == 0)
        return false;
    struct pt_cachestat_range r = {.off = off, .len = len};
    struct pt_cachestat cs;
    const int e = errno;
    if (syscall(PT_SYS_CACHESTAT, fd, &r, &cs, 0) != 0) {
        if (errno == ENOSYS)
            no_cachestat = true;
        errno = e;
        return false;
    }
    const uint64_t pages = ((off + len - 1) >> FORESIGHT_PAGE_SHIFT) - (off >> FORESIGHT_PAGE_SHIFT) + 1;
    return cs.nr_cache >= pages;
}

const char *fs_global_pt_issue = "fadvise"; /* read with __atomic_load_n (stats.c) */
unsigned long fs_global_pt_issue_failed;

static int ring_used; /* a ring was made: the process may have io_uring workers */

static void say_issue(const char *how)
{
    __atomic_store_n(&fs_global_pt_issue, how, __ATOMIC_RELEASE);
}

#ifdef FORESIGHT_HAVE_URING
#define RING_ENTRIES 64u
static struct io_uring ring;
static bool ring_open;
static unsigned in_flight; /* submitted, not yet reaped */

/* Completions so far: what the kernel refused is counted (the request was counted issued). */
static void reap(void)
{
    struct io_uring_cqe *cqe;
    while (io_uring_peek_cqe(&ring, &cqe) == 0) {
        if (cqe->res < 0)
            __atomic_fetch_add(&fs_global_pt_issue_failed, 1, __ATOMIC_RELAXED);
        io_uring_cqe_seen(&ring, cqe);
        in_flight--;
    }
}

/* Waits for one completion (retrying when a signal interrupts); false: it cannot. */
static bool wait_one(void)
{
    struct io_uring_cqe *cqe;
    int r;
    while ((r = io_uring_wait_cqe(&ring, &cqe)) == -EINTR)
        ;
    if (r != 0)
        return false;
    reap();
    return true;
}

/* Hands the prepared entries to the kernel.  The completions never outrun their queue
 * (twice the ring): at that many in flight, the oldest are waited for first. */
static void submit(void)
{
    if (!ring_open)
        return;
    const int e = errno;
    reap();
    while (in_flight + io_uring_sq_ready(&ring) > 2 * RING_ENTRIES && wait_one())
        ;
    int n;
    while ((n = io_uring_submit(&ring)) == -EINTR)
        ;
    if (n > 0)
        in_flight += (unsigned)n;
    reap();
    errno = e;
}

/* Before the thread closes a descriptor: every request is submitted and has ended (a
 * worker resolves the number when it starts one, and the number may name another file
 * next).  If the kernel takes none, the ring is given up: posix_fadvise from then on. */
static void settle(void)
{
    if (!ring_open)
        return;
    const int e = errno;
    submit();
    while (in_flight > 0 && wait_one())
        ;
    if (io_uring_sq_ready(&ring) > 0 || in_flight > 0) {
        io_uring_queue_exit(&ring); /* cancels and waits for what is left */
        ring_open = false;
        say_issue("fadvise (FORESIGHT_PT_ISSUE=uring: the ring failed; posix_fadvise since)");
    }
    errno = e;
}

/* The ring takes WILLNEED advice and nothing else (the thread's seccomp filter lets
 * io_uring_enter pass: what the ring may do is fixed here), on a descriptor above the
 * thread's handles.  0: ready; else a negative errno. */
static int ring_init(void)
{
    int r = io_uring_queue_init(RING_ENTRIES, &ring, IORING_SETUP_R_DISABLED);
    if (r != 0)
        return r;
    struct io_uring_restriction only = {.opcode = IORING_RESTRICTION_SQE_OP,
                                        .sqe_op = IORING_OP_FADVISE};
    r = io_uring_register_restrictions(&ring, &only, 1);
    if (r == 0)
        r = io_uring_enable_rings(&ring);
    if (r == 0 && ring.ring_fd < FS_PT_FILES) {
        const int up = (int)syscall(SYS_fcntl, ring.ring_fd, F_DUPFD_CLOEXEC, FS_PT_FILES);
        if (up < 0) {
            r = -errno;
        } else {
            close(ring.ring_fd);
            ring.ring_fd = ring.enter_ring_fd = up;
        }
    }
    if (r != 0)
        io_uring_queue_exit(&ring);
    return r;
}
#else
static void submit(void)
{
}

static void settle(void)
{
}
#endif

bool fs_pt_ring_in_use(void)
{
    return __atomic_load_n(&ring_used, __ATOMIC_ACQUIRE) != 0;
}

void fs_pt_issue_open(void)
{
    if (!fs_cfg.pt_uring)
        return;
#ifdef FORESIGHT_HAVE_URING
    const int e = errno;
    const int r = ring_init();
    errno = e;
    if (r == 0) {
        ring_open = true;
        __atomic_store_n(&ring_used, 1, __ATOMIC_RELEASE);
        say_issue("uring");
    } else if (r == -ENOSYS || r == -EPERM) {
        say_issue("fadvise (FORESIGHT_PT_ISSUE=uring: io_uring is off in this kernel or for "
                  "this process)");
    } else {
        say_issue("fadvise (FORESIGHT_PT_ISSUE=uring: the ring could not be made)");
    }
#else
    say_issue("fadvise (FORESIGHT_PT_ISSUE=uring: built without liburing)");
#endif
}

/* One WILLNEED request: into the ring, else to posix_fadvise.  False: refused. */
static bool advise(int fd, uint64_t off, uint64_t n)
{
#ifdef FORESIGHT_HAVE_URING
    if (ring_open) {
        struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
        if (sqe == NULL) { /* full: what is in it goes first */
            submit();
            sqe = io_uring_get_sqe(&ring);
        }
        if (sqe != NULL) {
            io_uring_prep_fadvise(sqe, fd, off, (off_t)n, POSIX_FADV_WILLNEED);
            return true;
        }
    }
#endif
    return posix_fadvise(fd, (off_t)off, (off_t)n, POSIX_FADV_WILLNEED) == 0;
}

static void issue(int fd, uint64_t off, uint64_t len)
{
    while (len > 0) {
        const uint64_t n = len < REQUEST_MAX ? len : REQUEST_MAX;
        if (cached(fd, off, n)) {
            __atomic_fetch_add(&fs_global_pt_cached, 1, __ATOMIC_RELAXED);
            __atomic_fetch_add(&fs_global_pt_cached_bytes, n, __ATOMIC_RELAXED);
        } else if (advise(fd, off, n)) {
            __atomic_fetch_add(&fs_global_pt_issued, 1, __ATOMIC_RELAXED);
            __atomic_fetch_add(&fs_global_pt_issued_bytes, n, __ATOMIC_RELAXED);
        }
        off += n;
        len -= n;
    }
}

static bool before(const struct pt_entry *a, const struct pt_entry *b)
{
    return a->fd != b->fd ? a->fd < b->fd : a->off < b->off;
}

/* Eq. (1) and (2) for an entry of call J when the program is at call I. */
static bool due(uint64_t j, uint64_t i, uint64_t c_ns, uint64_t kt_ns)
{
    if (j - i > fs_cfg.pt_queue)
        return false;
    if (c_ns == 0) /* the program's pace not known yet: its next 64 calls */
        return j - i <= FS_PT_PENDING;
    const uint64_t until = c_ns * (j - i); /* when the program gets there */
    return until <= kt_ns || until - kt_ns <= fs_cfg.pt_slack_ns;
}

/* Heapsort by (descriptor, offset), in place: libc's qsort may call malloc, which the
 * prefetch thread never does. */
static void sift(struct pt_entry *a, unsigned root, unsigned n)
{
    for (unsigned child; (child = 2 * root + 1) < n; root = child) {
        if (child + 1 < n && before(&a[child], &a[child + 1]))
            child++;
        if (!before(&a[root], &a[child]))
            return;
        const struct pt_entry t = a[root];
        a[root] = a[child];
        a[child] = t;
    }
}

static void sort_by_place(struct pt_entry *a, unsigned n)
{
    for (unsigned i = n / 2; i-- > 0;)
        sift(a, i, n);
    for (unsigned end = n; end-- > 1;) {
        const struct pt_entry t = a[0];
        a[0] = a[end];
        a[end] = t;
        sift(a, 0, end);
    }
}

/* Issues the pending entries of FD (-1: all) that are due (ALL: every one), merged;
 * drops the expired ones. */
static void flush(int fd, bool all)
{
    const uint64_t now = fs_pt_computation_id();
    uint64_t c_ns = 0, kt_ns = 0;
    if (!all)
        fs_pt_estimates(&c_ns, &kt_ns);
    static struct pt_entry live[HOLD];
    unsigned nlive = 0, kept = 0;
    unsigned long expired = 0;
    for (unsigned i = 0; i < npending; i++) {
        const struct pt_entry *e = &pending[i];
        if (fd >= 0 && e->fd != fd)
            pending[kept++] = *e; /* another descriptor's: stays pending */
        else if (e->call <= now)
            expired++;
        else if (!all && !due(e->call, now, c_ns, kt_ns))
            pending[kept++] = *e; /* not yet */
        else
            live[nlive++] = *e;
    }
    npending = kept;
    if (fd < 0)
        since_schedule = 0;
    if (expired)
        __atomic_fetch_add(&fs_global_pt_expired, expired, __ATOMIC_RELAXED);
    if (nlive == 0)
        return;
    sort_by_place(live, nlive);
    int cfd = live[0].fd;
    uint64_t start = live[0].off, end = live[0].off + live[0].len;
    for (unsigned i = 1; i < nlive; i++) {
        const struct pt_entry *e = &live[i];
        const uint64_t e_end = e->off + e->len;
        const uint64_t new_end = e_end > end ? e_end : end;
        if (e->fd == cfd && e->off <= end + MERGE_GAP && new_end - start <= REQUEST_MAX) {
            end = new_end;
            continue;
        }
        issue(cfd, start, end - start);
        cfd = e->fd;
        start = e->off;
        end = e_end;
    }
    issue(cfd, start, end - start);
    submit();
}

void fs_pt_flush(int fd)
{
    flush(fd, true);
    if (fd >= 0)
        settle();
}

void fs_pt_schedule(void)
{
    flush(-1, !fs_cfg.pt_eq1);
}

void fs_pt_enqueue(int fd, uint64_t off, uint64_t len, uint64_t call)
{
    if (npending == HOLD) /* (closes flush one descriptor's and reset the count) */
        flush(-1, true);
    pending[npending++] = (struct pt_entry){.fd = fd, .off = off, .len = len, .call = call};
    __atomic_store_n(&fs_pt_clock.queued[call % FORESIGHT_PT_RING], 1, __ATOMIC_RELAXED);
    fs_pt_predicted(len);
    if (++since_schedule >= FS_PT_PENDING) {
        fs_pt_schedule();
        if (npending == HOLD) /* eq1, nothing due: the thread runs no further ahead */
            flush(-1, true);
        fs_pt_check_sites();
    }
}

void fs_pt_drop_pending(void)
{
    npending = 0;
}
