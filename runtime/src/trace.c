/*
 * trace.c — FORESIGHT_TRACE=PATH: an event trace from which prefetch coverage
 * is measured with real faults (paper Section 5, Figure 12(a)), not modelled.
 *
 * Lines (text, one event each; sort by t_ns, the file is not in time order):
 *   # foresight trace 1 page=4096 pid=<pid>
 *   F <page address> <t_ns>                          major fault of an application thread
 *   P <page address> <npages> <resident_before> <t_ns>   prefetch handed to the kernel
 *   R <page address> <npages> <t_ns>                 release handed to the kernel
 *   L <lost_fault_samples>                           once, at the end
 * Addresses are hex with 0x, t_ns is CLOCK_MONOTONIC nanoseconds.
 *
 * Major faults come from perf_event_open's software event
 * PERF_COUNT_SW_PAGE_FAULTS_MAJ sampled at every event (period 1) with the
 * faulting address, time and thread.  The kernel refuses a ring buffer for an
 * inherited event that follows a task on every CPU (perf_mmap: "cpu == -1 &&
 * inherit" is EINVAL), so, as `perf record` does, one event is opened per CPU
 * for this process, inherited by the threads it creates, each with its own
 * ring.  Samples of the runtime's own threads (the workers and the drain
 * thread below) and of other processes are discarded by pid/tid.  The kernel
 * reports faults that get_user_pages takes for MADV_POPULATE_READ without
 * registers, and emits no perf event for them at all; the tid filter is the
 * guarantee either way.
 *
 * A drain thread empties the rings: the kernel wakes it when a ring is a
 * quarter full (watermark), and it looks at least every 100 ms.  A period-1
 * software event is never throttled, so every major fault is either a sample
 * or counted in a PERF_RECORD_LOST (ring full), which the L line sums.  With
 * 128 pages per CPU (perf's unprivileged per-CPU allowance, 516 KiB with the
 * header page) a ring holds 16384 samples of 32 bytes: the drain thread
 * wakes every 4096 faults, and a major fault costs tens of microseconds, so
 * it has about 100 ms to run before anything is lost.
 *
 * Output goes through one 64 KiB buffer to PATH.tmp, written when full and
 * after each drain (at least every 100 ms), and PATH.tmp is renamed to PATH by
 * the library's destructor (after main returns or exit is called).  A killed
 * program leaves only PATH.tmp, complete up to about 100 ms before its death.  The file is locked while written, so a
 * second process that loads the runtime with the same FORESIGHT_TRACE (a
 * child that execs) does not clobber it: it warns and does not trace.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

bool fs_trace_active; /* the trace file is open and belongs to this process */

#define RING_PAGES_MAX 128
#define RING_PAGES_MIN 8
#define MAX_EXCLUDED 160 /* runtime threads whose faults are not the application's */

struct ring {
    int fd;
    struct perf_event_mmap_page *meta;
    unsigned char *data;
    size_t size; /* bytes of data, a power of two */
};

static pid_t owner;
static char tmp_path[sizeof fs_cfg.trace_path + 8];

static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;
static int out_fd = -1;
static bool out_failed;
static int out_errno;
static char out_buf[64 << 10];
static size_t out_len;
static off_t out_written; /* bytes written to the file */
static off_t out_shed;    /* bytes written back and dropped from the page cache */

static pthread_mutex_t drain_mu = PTHREAD_MUTEX_INITIALIZER;
static struct ring *rings;
static int nrings;
static unsigned long long lost;
static bool finished;

static int excluded[MAX_EXCLUDED];
static int nexcluded;

static int current_tid(void)
{
    return (int)syscall(SYS_gettid);
}

static unsigned long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void flush_locked(void)
{
    size_t done = 0;
    while (done < out_len && !out_failed) {
        ssize_t n = write(out_fd, out_buf + done, out_len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            out_failed = true; /* e.g. disk full: the trace is incomplete and not kept */
            out_errno = n < 0 ? errno : EIO;
        } else {
            done += (size_t)n;
            out_written += n;
        }
    }
    out_len = 0;
}

/*
 * The trace file's page cache is charged to the program's memory cgroup: left
 * there it would take a few MiB of the cap the measurement is about.  The drain
 * thread writes it back and drops it every 256 KiB (under drain_mu, which the
 * destructor takes before closing the file; never under out_mu, so the workers
 * do not wait for the disk).
 */
static void shed_locked(void)
{
    pthread_mutex_lock(&out_mu);
    off_t upto = out_written;
    pthread_mutex_unlock(&out_mu);
    if (upto - out_shed < (256 << 10))
        return;
    sync_file_range(out_fd, out_shed, upto - out_shed,
                    SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
                        SYNC_FILE_RANGE_WAIT_AFTER);
    posix_fadvise(out_fd, out_shed, upto - out_shed, POSIX_FADV_DONTNEED);
    out_shed = upto;
}

static void emit_locked(const char *line, size_t n)
{
    if (out_len + n > sizeof out_buf)
        flush_locked();
    memcpy(out_buf + out_len, line, n);
    out_len += n;
}

static void emit(const char *line, int n)
{
    if (n <= 0)
        return;
    pthread_mutex_lock(&out_mu);
    if (__atomic_load_n(&fs_trace_active, __ATOMIC_RELAXED))
        emit_locked(line, (size_t)n);
    pthread_mutex_unlock(&out_mu);
}

void fs_trace_prefetch(uintptr_t page, size_t npages, size_t resident_before)
{
    char line[96];
    emit(line, snprintf(line, sizeof line, "P 0x%lx %zu %zu %llu\n",
                        (unsigned long)(page << FORESIGHT_PAGE_SHIFT), npages, resident_before,
                        now_ns()));
}

void fs_trace_release(uintptr_t page, size_t npages)
{
    char line[80];
    emit(line, snprintf(line, sizeof line, "R 0x%lx %zu %llu\n",
                        (unsigned long)(page << FORESIGHT_PAGE_SHIFT), npages, now_ns()));
}

void fs_trace_exclude_self(void)
{
    if (!__atomic_load_n(&fs_trace_active, __ATOMIC_RELAXED))
        return;
    int slot = __atomic_fetch_add(&nexcluded, 1, __ATOMIC_ACQ_REL);
    if (slot < MAX_EXCLUDED)
        __atomic_store_n(&excluded[slot], current_tid(), __ATOMIC_RELEASE);
}

static bool is_excluded(int tid)
{
    int n = __atomic_load_n(&nexcluded, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n && i < MAX_EXCLUDED; i++)
        if (__atomic_load_n(&excluded[i], __ATOMIC_ACQUIRE) == tid)
            return true;
    return false;
}

/* One record out of the ring (it may wrap around the end). */
static void copy_out(const struct ring *r, uint64_t pos, void *dst, size_t n)
{
    size_t off = (size_t)(pos & (r->size - 1));
    size_t first = r->size - off < n ? r->size - off : n;
    memcpy(dst, r->data + off, first);
    memcpy((unsigned char *)dst + first, r->data, n - first);
}

static void handle_record(const struct perf_event_header *h, const unsigned char *body)
{
    if (h->type == PERF_RECORD_SAMPLE && h->size >= sizeof *h + 24) {
        uint32_t pid, tid;
        uint64_t time, addr;
        memcpy(&pid, body, 4); /* sample_type TID | TIME | ADDR, in the kernel's order */
        memcpy(&tid, body + 4, 4);
        memcpy(&time, body + 8, 8);
        memcpy(&addr, body + 16, 8);
        if ((pid_t)pid != owner || is_excluded((int)tid))
            return;
        char line[64];
        int n = snprintf(line, sizeof line, "F 0x%llx %llu\n",
                         (unsigned long long)(addr & ~(uint64_t)(FS_PAGE - 1)),
                         (unsigned long long)time);
        pthread_mutex_lock(&out_mu);
        if (__atomic_load_n(&fs_trace_active, __ATOMIC_RELAXED))
            emit_locked(line, (size_t)n);
        pthread_mutex_unlock(&out_mu);
    } else if (h->type == PERF_RECORD_LOST && h->size >= sizeof *h + 16) {
        uint64_t n;
        memcpy(&n, body + 8, 8); /* after the event id */
        lost += n;
    }
}

static void drain_ring(struct ring *r)
{
    uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = r->meta->data_tail;
    static unsigned char rec[1 << 16]; /* a record's size is 16 bits; guarded by drain_mu */
    while (tail + sizeof(struct perf_event_header) <= head) {
        struct perf_event_header h;
        copy_out(r, tail, &h, sizeof h);
        if (h.size < sizeof h || tail + h.size > head)
            break;
        copy_out(r, tail + sizeof h, rec, h.size - sizeof h);
        handle_record(&h, rec);
        tail += h.size;
    }
    __atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
}

static void drain_all(void)
{
    pthread_mutex_lock(&drain_mu);
    if (!finished)
        for (int i = 0; i < nrings; i++)
            drain_ring(&rings[i]);
    pthread_mutex_unlock(&drain_mu);
}

static void flush(void)
{
    pthread_mutex_lock(&out_mu);
    if (__atomic_load_n(&fs_trace_active, __ATOMIC_RELAXED))
        flush_locked();
    pthread_mutex_unlock(&out_mu);
}

static void *drain_main(void *arg)
{
    struct pollfd *pfd = arg;
    fs_trace_exclude_self();
    while (!__atomic_load_n(&finished, __ATOMIC_RELAXED)) {
        poll(pfd, (nfds_t)nrings, 100);
        drain_all();
        flush(); /* a killed program's PATH.tmp then ends at most ~100 ms before its death */
        pthread_mutex_lock(&drain_mu);
        if (!finished)
            shed_locked();
        pthread_mutex_unlock(&drain_mu);
    }
    return NULL;
}

static int perf_open(struct perf_event_attr *a, int cpu)
{
    return (int)syscall(SYS_perf_event_open, a, 0, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* The per-CPU fault events and their rings; 0, or an errno for the "unavailable" line. */
static int open_fault_events(void)
{
    long ncpu = sysconf(_SC_NPROCESSORS_CONF);
    if (ncpu < 1)
        ncpu = 1;
    if (ncpu > 4096)
        ncpu = 4096;
    rings = calloc((size_t)ncpu, sizeof *rings);
    if (rings == NULL)
        return ENOMEM;
    size_t pages = RING_PAGES_MAX;
    while (pages > RING_PAGES_MIN && pages * (size_t)ncpu > 2048)
        pages /= 2; /* at most 8 MiB of rings on large machines */
    struct perf_event_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_PAGE_FAULTS_MAJ;
    a.sample_period = 1;
    a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR;
    a.use_clockid = 1;
    a.clockid = CLOCK_MONOTONIC;
    a.inherit = 1;        /* threads the program creates later */
    a.inherit_thread = 1; /* ... but not processes it forks (Linux 5.13) */
    a.remove_on_exec = 1; /* nor what it execs (Linux 5.13) */
    a.watermark = 1;
    a.exclude_hv = 1;
    int first_err = 0;
    for (int cpu = 0; cpu < ncpu; cpu++) {
        int fd = -1;
        for (int attempt = 0; attempt < 3 && fd < 0; attempt++) {
            a.wakeup_watermark = (uint32_t)(pages * FS_PAGE / 4);
            fd = perf_open(&a, cpu);
            if (fd >= 0)
                break;
            if (errno == EACCES && !a.exclude_kernel)
                a.exclude_kernel = 1; /* perf_event_paranoid 2: user-mode faults only */
            else if (errno == EINVAL && a.inherit_thread)
                a.inherit_thread = a.remove_on_exec = 0; /* kernel older than 5.13 */
            else
                break;
        }
        if (fd < 0) {
            if (first_err == 0)
                first_err = errno;
            continue; /* an offline CPU */
        }
        void *m = MAP_FAILED;
        for (size_t p = pages; m == MAP_FAILED && p >= RING_PAGES_MIN; p /= 2) {
            m = mmap(NULL, (p + 1) * FS_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (m != MAP_FAILED)
                pages = p;
        }
        if (m == MAP_FAILED) { /* locked-memory limit */
            if (first_err == 0)
                first_err = errno;
            close(fd);
            continue;
        }
        rings[nrings++] = (struct ring){.fd = fd, .meta = m,
                                        .data = (unsigned char *)m + FS_PAGE,
                                        .size = pages * FS_PAGE};
    }
    return nrings > 0 ? 0 : (first_err ? first_err : ENODEV);
}

static void after_fork_child(void)
{
    /* The trace is the parent's: the child neither writes nor renames it. */
    __atomic_store_n(&fs_trace_active, false, __ATOMIC_RELAXED);
    pthread_mutex_init(&out_mu, NULL);
    pthread_mutex_init(&drain_mu, NULL);
    finished = true;
}

void fs_trace_start(void)
{
    if (fs_cfg.trace_path[0] == 0)
        return;
    snprintf(tmp_path, sizeof tmp_path, "%s.tmp", fs_cfg.trace_path);
    int fd = open(tmp_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "foresight: FORESIGHT_TRACE=%s: cannot create %s: %s; not tracing\n",
                fs_cfg.trace_path, tmp_path, strerror(errno));
        return;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        fprintf(stderr, "foresight: FORESIGHT_TRACE=%s: %s is being written by another "
                        "process; not tracing\n", fs_cfg.trace_path, tmp_path);
        close(fd);
        return;
    }
    if (ftruncate(fd, 0) != 0) {
        fprintf(stderr, "foresight: FORESIGHT_TRACE=%s: cannot truncate %s: %s; not tracing\n",
                fs_cfg.trace_path, tmp_path, strerror(errno));
        close(fd);
        return;
    }
    /* Out of the way of the program's own descriptors: a program that closes a descriptor
     * it did not open and reuses the number must not get trace lines in its file. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > 64) {
        int high = fcntl(fd, F_DUPFD_CLOEXEC, (int)(rl.rlim_cur < 4096 ? rl.rlim_cur / 2 : 2048));
        if (high >= 0) {
            close(fd);
            fd = high;
        }
    }
    owner = getpid();
    out_fd = fd;
    __atomic_store_n(&fs_trace_active, true, __ATOMIC_RELEASE);
    pthread_atfork(NULL, NULL, after_fork_child);

    char line[256];
    emit(line, snprintf(line, sizeof line, "# foresight trace 1 page=%ld pid=%ld\n",
                        sysconf(_SC_PAGESIZE), (long)owner));
    flush(); /* the header is on disk from the start */
    int err = open_fault_events();
    if (err != 0) {
        emit(line, snprintf(line, sizeof line, "# faults unavailable: %s\n", strerror(err)));
        fprintf(stderr, "foresight: FORESIGHT_TRACE: cannot count major faults "
                        "(perf_event_open: %s); the trace has prefetches and releases only\n",
                strerror(err));
        return;
    }
    /* The drain thread takes no signals: the program's handlers run on its own threads. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 256 << 10);
    static struct pollfd *pfd; /* static: reachable after fork, where the thread is gone */
    pfd = calloc((size_t)nrings, sizeof *pfd);
    for (int i = 0; pfd != NULL && i < nrings; i++)
        pfd[i] = (struct pollfd){.fd = rings[i].fd, .events = POLLIN};
    pthread_t t;
    if (pfd != NULL && pthread_create(&t, &attr, drain_main, pfd) == 0)
        pthread_setname_np(t, "foresight-trace");
    /* Without the thread the rings are drained once, at exit: samples beyond a ring's
     * capacity are lost, and the L line says how many. */
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void fs_trace_finish(void)
{
    if (!__atomic_load_n(&fs_trace_active, __ATOMIC_ACQUIRE) || getpid() != owner)
        return;
    for (int i = 0; i < nrings; i++)
        ioctl(rings[i].fd, PERF_EVENT_IOC_DISABLE, 0); /* the inherited events too */
    drain_all();
    pthread_mutex_lock(&drain_mu);
    __atomic_store_n(&finished, true, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&drain_mu);

    pthread_mutex_lock(&out_mu);
    char line[64];
    int n = snprintf(line, sizeof line, "L %llu\n", lost);
    emit_locked(line, (size_t)n);
    flush_locked();
    __atomic_store_n(&fs_trace_active, false, __ATOMIC_RELAXED);
    int err = out_errno;
    bool ok = close(out_fd) == 0 && !out_failed;
    if (!out_failed)
        err = errno;
    out_fd = -1;
    pthread_mutex_unlock(&out_mu);
    if (ok && rename(tmp_path, fs_cfg.trace_path) == 0)
        return;
    if (ok)
        err = errno;
    fprintf(stderr, "foresight: cannot write the trace %s: %s\n", fs_cfg.trace_path,
            strerror(err));
    unlink(tmp_path);
}
