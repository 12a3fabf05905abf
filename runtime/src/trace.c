/*
 * trace.c — FORESIGHT_TRACE=PATH: an event trace from which prefetch coverage
 * is measured with real faults (paper Section 5, Figure 12(a)), not modelled.
 *
 * Lines (text, one event each; sort by t_ns, the file is not in time order):
 *   # foresight trace 1 page=4096 pid=<pid>
 *   F <page address> <t_ns> <wait_ns>         a fault in which an application thread
 *                                             waited for I/O, and how long since it began
 *   P <page address> <npages> <resident_before> <t_ns> <line>
 *                                             prefetch handed to the kernel (line: the
 *                                             hint's source line, 0 without a site)
 *   R <page address> <npages> <t_ns> <line> <cold|pageout>
 *                                             release handed to the kernel
 *   L <lost_fault_samples>                    once, at the end
 * Addresses are hex with 0x, t_ns is CLOCK_MONOTONIC nanoseconds.
 *
 * Faults come from perf_event_open software events sampled at every event
 * (period 1) with address, time and thread: PERF_COUNT_SW_PAGE_FAULTS (raised
 * when a fault starts), PERF_COUNT_SW_PAGE_FAULTS_MIN and _MAJ (raised when it
 * ends), and context-switch records.  An F line is every major fault, and
 * every minor fault during which the thread blocked (switched out without
 * being preempted).  Major faults alone are not enough: on this kernel (6.18,
 * per-VMA locks) a fault that finds its page still being read — a prefetch
 * too late — drops its lock, sleeps, retries and is accounted minor; after
 * prefetching a cold 64 MiB file and reading it at once we saw no major fault
 * in the mapping but 35 minor faults of more than 200 us.
 *
 * The kernel refuses a ring buffer for an inherited event that follows a task
 * on every CPU (perf_mmap: "cpu == -1 && inherit" is EINVAL), so, as `perf
 * record` does, the events are opened per CPU for this process and inherited
 * by the threads it creates; one CPU's three events share one ring
 * (PERF_EVENT_IOC_SET_OUTPUT) and are told apart by PERF_SAMPLE_IDENTIFIER.
 * A fault that blocks often ends on another CPU than it started on, so the
 * drain merges the rings by time, taking records up to 1 ms old (a record is
 * in its ring microseconds after its time stamp) and leaving younger ones for
 * the next round.  Samples of the runtime's own threads (the workers and the
 * drain thread) and of other processes are discarded by pid/tid;
 * get_user_pages faults (MADV_POPULATE_READ) raise no perf event anyway.
 *
 * A drain thread empties the rings: the kernel wakes it when a ring is a
 * quarter full (watermark), and it looks at least every 100 ms.  A period-1
 * software event is never throttled, so every fault is either a sample or
 * counted in a PERF_RECORD_LOST (ring full), which the L line sums.  A ring is
 * 512 pages per CPU when the locked-memory limit allows (perf's unprivileged
 * allowance is 128 pages per CPU; beyond it RLIMIT_MEMLOCK applies): about
 * 50,000 samples of 40 bytes.  A fault costs two samples (and a blocking one
 * two switch records), so the drain thread wakes every ~6,000 faults and has
 * the time of ~20,000 more to run before anything is lost.
 *
 * Output goes through one 64 KiB buffer to PATH.tmp, written when full and
 * after each drain (at least every 100 ms), and PATH.tmp is renamed to PATH by
 * the library's destructor (after main returns or exit is called).  A killed
 * program leaves only PATH.tmp, complete up to about 100 ms before its death.
 * The file is locked while written, so a second process that loads the
 * runtime with the same FORESIGHT_TRACE (a child that execs) does not clobber
 * it: it warns and does not trace.
 *
 * Why one file of 640 lines: the rings, the drain thread and the output buffer
 * share one lock and one set of per-thread fault states; split, each half would
 * export its internals to the other.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
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

#define RING_PAGES_MAX 512
#define RING_PAGES_MIN 8
#define MAX_EXCLUDED 160 /* runtime threads whose faults are not the application's */
#define CUT_NS 1000000   /* records younger than this stay in the ring until the next drain */

/* The three fault events of one CPU, all writing to the first one's ring. */
enum { EV_START, EV_MINOR, EV_MAJOR, EV_N };

struct ring {
    int fd[EV_N];
    uint64_t id[EV_N]; /* sample identifiers (inherited events report their parent's) */
    struct perf_event_mmap_page *meta;
    unsigned char *data;
    size_t size; /* bytes of data, a power of two */
    uint64_t pos, head; /* during a drain */
};

/* Per application thread: the fault it is in, and whether it has blocked in it. */
#define THREAD_SLOTS 1024
struct thread_state {
    int tid;
    bool in_fault, slept;
    uint64_t page;
    uint64_t started; /* the fault's start (t_ns) */
};
static struct thread_state threads[THREAD_SLOTS]; /* guarded by drain_mu */

static pid_t owner;
static char tmp_path[sizeof fs_cfg.trace_path + 8];

static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;
static struct fs_own out = {.fd = -1};
static int out_fd = -1; /* out.fd */
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
    if (out_len > 0 && !out_failed && !fs_own_valid(&out)) {
        out_failed = true; /* the program closed it: the number may be its file now */
        out_errno = EBADF;
    }
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
    if (upto - out_shed < (256 << 10) || !fs_own_valid(&out))
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

/* " <number>" in BASE (16 with 0x) at P; returns the end.  By hand, not snprintf: P and
 * R lines are written by hints, which may come from a signal handler. */
static char *put_number(char *p, unsigned long long v, unsigned base)
{
    char digits[24];
    int n = 0;
    do {
        digits[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v != 0);
    *p++ = ' ';
    if (base == 16) {
        *p++ = '0';
        *p++ = 'x';
    }
    while (n > 0)
        *p++ = digits[--n];
    return p;
}

void fs_trace_prefetch(uintptr_t page, size_t npages, size_t resident_before,
                       const struct foresight_site *site)
{
    char line[112] = "P", *p = line + 1;
    p = put_number(p, (unsigned long long)(page << FORESIGHT_PAGE_SHIFT), 16);
    p = put_number(p, npages, 10);
    p = put_number(p, resident_before, 10);
    p = put_number(p, now_ns(), 10);
    p = put_number(p, site != NULL ? site->line : 0, 10);
    *p++ = '\n';
    emit(line, (int)(p - line));
}

void fs_trace_release(uintptr_t page, size_t npages, const struct foresight_site *site,
                      bool pageout)
{
    char line[112] = "R", *p = line + 1;
    p = put_number(p, (unsigned long long)(page << FORESIGHT_PAGE_SHIFT), 16);
    p = put_number(p, npages, 10);
    p = put_number(p, now_ns(), 10);
    p = put_number(p, site != NULL ? site->line : 0, 10);
    *p++ = ' ';
    memcpy(p, pageout ? "pageout" : "cold", pageout ? 7 : 4);
    p += pageout ? 7 : 4;
    *p++ = '\n';
    emit(line, (int)(p - line));
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

static struct thread_state *thread(int tid, bool create)
{
    for (unsigned i = 0; i < 16; i++) {
        struct thread_state *t = &threads[((unsigned)tid + i) % THREAD_SLOTS];
        if (t->tid == tid)
            return t;
        if (t->tid == 0 && create) {
            *t = (struct thread_state){.tid = tid};
            return t;
        }
    }
    if (!create)
        return NULL;
    struct thread_state *t = &threads[(unsigned)tid % THREAD_SLOTS]; /* evict */
    *t = (struct thread_state){.tid = tid};
    return t;
}

static void emit_fault(uint64_t page, uint64_t time, uint64_t started)
{
    char line[80];
    int n = snprintf(line, sizeof line, "F 0x%llx %llu %llu\n",
                     (unsigned long long)(page << FORESIGHT_PAGE_SHIFT),
                     (unsigned long long)time,
                     (unsigned long long)(started != 0 && started <= time ? time - started : 0));
    pthread_mutex_lock(&out_mu);
    if (__atomic_load_n(&fs_trace_active, __ATOMIC_RELAXED))
        emit_locked(line, (size_t)n);
    pthread_mutex_unlock(&out_mu);
}

/*
 * One record, in time order across all rings.  A fault is traced when the thread
 * waited for I/O in it: every major fault, and a minor fault during which the thread
 * blocked (switched out without being preempted).  The second kind matters: since
 * Linux 6.4 a fault that finds its page still being read (a prefetch too late) drops
 * its VMA lock, sleeps, retries, and is accounted as minor.
 */
static void handle_record(const struct ring *r, const struct perf_event_header *h,
                          const unsigned char *body)
{
    size_t len = h->size - sizeof *h;
    if (h->type == PERF_RECORD_SAMPLE && len >= 32) {
        uint64_t id, time, addr;
        uint32_t pid, tid;
        memcpy(&id, body, 8); /* sample_type IDENTIFIER | TID | TIME | ADDR, in order */
        memcpy(&pid, body + 8, 4);
        memcpy(&tid, body + 12, 4);
        memcpy(&time, body + 16, 8);
        memcpy(&addr, body + 24, 8);
        if ((pid_t)pid != owner || is_excluded((int)tid))
            return;
        uint64_t page = addr >> FORESIGHT_PAGE_SHIFT;
        struct thread_state *t = thread((int)tid, true);
        if (id == r->id[EV_START]) {
            t->in_fault = true;
            t->slept = false;
            t->page = page;
            t->started = time;
        } else if (id == r->id[EV_MAJOR]) {
            emit_fault(page, time, t->in_fault && t->page == page ? t->started : 0);
            t->in_fault = false;
        } else if (id == r->id[EV_MINOR]) {
            if (t->in_fault && t->slept && t->page == page)
                emit_fault(page, time, t->started);
            t->in_fault = false;
        }
    } else if (h->type == PERF_RECORD_SWITCH && len >= 8) {
        uint32_t pid, tid;
        memcpy(&pid, body, 4); /* sample_id_all: TID first */
        memcpy(&tid, body + 4, 4);
        bool blocked = (h->misc & PERF_RECORD_MISC_SWITCH_OUT) &&
                       !(h->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
        struct thread_state *t = (pid_t)pid == owner ? thread((int)tid, false) : NULL;
        if (blocked && t != NULL && t->in_fault)
            t->slept = true;
    } else if (h->type == PERF_RECORD_LOST && len >= 16) {
        uint64_t n;
        memcpy(&n, body + 8, 8); /* after the event id */
        lost += n;
    }
}

/* The time of the record at r->pos (0 for one without a time: taken at once), or
 * UINT64_MAX when the ring has nothing more before its head. */
static uint64_t next_time(const struct ring *r, struct perf_event_header *h)
{
    if (r->pos + sizeof *h > r->head)
        return UINT64_MAX;
    copy_out(r, r->pos, h, sizeof *h);
    if (h->size < sizeof *h || r->pos + h->size > r->head)
        return UINT64_MAX;
    uint64_t t = 0;
    if (h->type == PERF_RECORD_SAMPLE && h->size >= sizeof *h + 24)
        copy_out(r, r->pos + sizeof *h + 16, &t, 8);
    else if (h->size >= sizeof *h + 24) /* sample_id_all: ... time, identifier at the end */
        copy_out(r, r->pos + h->size - 16, &t, 8);
    return t;
}

/* Merge the rings by time up to CUT: a thread's fault can start on one CPU and end on
 * another, and a record is in its ring within microseconds of its time stamp. */
static void drain_upto(uint64_t cut)
{
    static unsigned char rec[1 << 16]; /* a record's size is 16 bits */
    struct perf_event_header h;
    for (int i = 0; i < nrings; i++) {
        rings[i].head = __atomic_load_n(&rings[i].meta->data_head, __ATOMIC_ACQUIRE);
        rings[i].pos = rings[i].meta->data_tail;
    }
    for (;;) {
        int best = -1;
        uint64_t best_t = UINT64_MAX;
        for (int i = 0; i < nrings; i++) {
            uint64_t t = next_time(&rings[i], &h);
            if (t < best_t) {
                best_t = t;
                best = i;
            }
        }
        if (best < 0 || best_t > cut)
            break;
        struct ring *r = &rings[best];
        copy_out(r, r->pos, &h, sizeof h);
        copy_out(r, r->pos + sizeof h, rec, h.size - sizeof h);
        handle_record(r, &h, rec);
        r->pos += h.size;
    }
    for (int i = 0; i < nrings; i++)
        __atomic_store_n(&rings[i].meta->data_tail, rings[i].pos, __ATOMIC_RELEASE);
}

static void drain_all(bool final)
{
    pthread_mutex_lock(&drain_mu);
    if (!finished)
        drain_upto(final ? UINT64_MAX : now_ns() - CUT_NS);
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
    fs_thread_lock_stack();
    while (!__atomic_load_n(&finished, __ATOMIC_RELAXED)) {
        poll(pfd, (nfds_t)nrings, 100);
        drain_all(false);
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

/* Open one CPU's event of kind EV, adjusting A to what the kernel accepts. */
static int open_event(struct perf_event_attr *a, int cpu)
{
    for (int attempt = 0; attempt < 3; attempt++) {
        int fd = perf_open(a, cpu);
        if (fd >= 0)
            return fd;
        if (errno == EACCES && !a->exclude_kernel)
            a->exclude_kernel = 1; /* perf_event_paranoid 2: user-mode faults only */
        else if (errno == EINVAL && a->inherit_thread)
            a->inherit_thread = a->remove_on_exec = 0; /* kernel older than 5.13 */
        else
            break;
    }
    return -1;
}

/* One CPU's three events and ring; 0 or an errno. */
static int open_cpu(struct perf_event_attr *a, int cpu, size_t *pages, struct ring *r)
{
    static const uint64_t config[EV_N] = {PERF_COUNT_SW_PAGE_FAULTS, PERF_COUNT_SW_PAGE_FAULTS_MIN,
                                          PERF_COUNT_SW_PAGE_FAULTS_MAJ};
    int err = 0;
    for (int e = 0; e < EV_N; e++)
        r->fd[e] = -1;
    for (int e = 0; e < EV_N && err == 0; e++) {
        a->config = config[e];
        a->context_switch = e == EV_START; /* switch records: did a faulting thread block? */
        a->watermark = e == EV_START;
        a->wakeup_watermark = e == EV_START ? (uint32_t)(*pages * FS_PAGE / 4) : 0;
        r->fd[e] = open_event(a, cpu);
        if (r->fd[e] < 0) {
            err = errno;
        } else if (e == EV_START) {
            void *m = MAP_FAILED;
            for (size_t p = *pages; m == MAP_FAILED && p >= RING_PAGES_MIN; p /= 2) {
                m = mmap(NULL, (p + 1) * FS_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd[e],
                         0);
                if (m != MAP_FAILED)
                    *pages = p; /* the locked-memory limit allowed this much */
            }
            if (m == MAP_FAILED) {
                err = errno;
            } else {
                r->meta = m;
                r->data = (unsigned char *)m + FS_PAGE;
                r->size = *pages * FS_PAGE;
            }
        } else if (ioctl(r->fd[e], PERF_EVENT_IOC_SET_OUTPUT, r->fd[EV_START]) != 0) {
            err = errno;
        }
        if (err == 0 && ioctl(r->fd[e], PERF_EVENT_IOC_ID, &r->id[e]) != 0)
            err = errno;
    }
    if (err != 0) {
        if (r->meta != NULL)
            munmap(r->meta, r->size + FS_PAGE);
        for (int e = 0; e < EV_N; e++)
            if (r->fd[e] >= 0)
                close(r->fd[e]);
        memset(r, 0, sizeof *r);
    }
    return err;
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
    a.sample_period = 1;
    a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                    PERF_SAMPLE_ADDR;
    a.sample_id_all = 1;  /* switch and lost records carry tid and time too */
    a.use_clockid = 1;
    a.clockid = CLOCK_MONOTONIC;
    a.inherit = 1;        /* threads the program creates later */
    a.inherit_thread = 1; /* ... but not processes it forks (Linux 5.13) */
    a.remove_on_exec = 1; /* nor what it execs (Linux 5.13) */
    a.exclude_hv = 1;
    int first_err = 0;
    for (int cpu = 0; cpu < ncpu; cpu++) {
        int err = open_cpu(&a, cpu, &pages, &rings[nrings]);
        if (err == 0)
            nrings++;
        else if (first_err == 0)
            first_err = err; /* an offline CPU, or no permission at all */
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
    /* Out of the way of the program's own descriptors (ownfd.c): a program that closes a
     * descriptor it did not open and reuses the number must not get trace lines in its
     * file. */
    fd = fs_own_fd(&out, fd);
    if (fd < 0)
        return;
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
    static struct pollfd *pfd; /* static: reachable after fork, where the thread is gone */
    pfd = calloc((size_t)nrings, sizeof *pfd);
    for (int i = 0; pfd != NULL && i < nrings; i++)
        pfd[i] = (struct pollfd){.fd = rings[i].fd[EV_START], .events = POLLIN};
    /* Without the thread the rings are drained once, at exit: samples beyond a ring's
     * capacity are lost, and the L line says how many. */
    if (pfd != NULL)
        fs_thread_start(drain_main, pfd, "foresight-trace");
}

void fs_trace_finish(void)
{
    if (!__atomic_load_n(&fs_trace_active, __ATOMIC_ACQUIRE) || getpid() != owner)
        return;
    for (int i = 0; i < nrings; i++)
        for (int e = 0; e < EV_N; e++)
            ioctl(rings[i].fd[e], PERF_EVENT_IOC_DISABLE, 0); /* the inherited events too */
    drain_all(true);
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
    bool ok = !out_failed;
    if (!fs_own_valid(&out)) {
        ok = false; /* the program closed it: never close the number, it may be the program's */
        err = out_failed ? err : EBADF;
    } else if (close(out_fd) != 0 && ok) {
        ok = false;
        err = errno;
    }
    out.fd = out_fd = -1;
    pthread_mutex_unlock(&out_mu);
    if (ok && rename(tmp_path, fs_cfg.trace_path) == 0)
        return;
    if (ok)
        err = errno;
    fprintf(stderr, "foresight: cannot write the trace %s: %s\n", fs_cfg.trace_path,
            strerror(err));
    unlink(tmp_path);
}
