/*
 * memtrace.c — the recorder of `foresight cc --trace-mem` (libforesight-memtrace.a,
 * linked whole into each traced program): with FORESIGHT_TRACE_MEM=PATH set, every load
 * and store the program's own code makes is written to PATH as an FSCTRC1 trace for
 * `foresight cachesim` (paper 4's trace-driven simulation; cachesim/src/trace.c reads it).
 *
 * Where the accesses come from: clang (16 or later) built the program with
 * -fsanitize-coverage=inline-8bit-counters,trace-loads,trace-stores, which calls
 * __sanitizer_cov_loadN(addr) before each N-byte load and __sanitizer_cov_storeN(addr)
 * before each store of instrumented code (after optimisation: a vectorised loop makes
 * 16-byte accesses, a value kept in a register none).  libc, libomp and this library are
 * not instrumented, so memcpy's or the OpenMP runtime's own accesses are not in the trace.
 * clang's sanitizer runtimes define these callbacks as weak no-ops; the definitions here
 * are strong and the archive is linked whole, so they win.
 *
 * Which CPU and which barrier: the OpenMP tools interface (OMPT; LLVM's libomp calls
 * ompt_start_tool, exported from the program by the driver).  A thread's CPU is its
 * index in the team of its current implicit task (0 outside parallel regions); each
 * parallel region's begin and end starts a new *epoch*.  GCC's libgomp has no OMPT: with
 * it every thread is CPU 0 and there are no epochs (the driver builds traced programs
 * with clang, whose -fopenmp is libomp).
 *
 * The records: per thread, a buffer spilled to an unnamed file of the trace's directory
 * (O_TMPFILE: nothing left behind if the process is killed).  A thread's record that
 * falls in another epoch than its previous one is preceded by a mark.  At exit the
 * threads' records are merged into PATH (written beside it, renamed into place): epoch by
 * epoch in increasing order, the threads with records in the epoch taking turns a record
 * at a time (cachesim's model deals its threads a line step each alike), then a barrier
 * record.  An access to the same 64-byte line as the same thread's previous one, with no
 * write after a read, is not recorded (it hits in any cache the simulator models: its
 * lines are 64 bytes or more): a loop reading doubles one by one makes a record a line.
 *
 * Never the program's problem: a trace that cannot be written is reported on stderr
 * once, recording stops and the program goes on; a forked child records nothing (its
 * parent's files are not its own); the callbacks allocate nothing but their thread's
 * buffer (mmap), so a program with its own malloc can be traced.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define LINE_SHIFT 6
#define RECORD 16
#define BUF_RECORDS 65536            /* records per thread between spills: 1 MiB */
#define OP_READ 0
#define OP_WRITE 1
#define OP_BARRIER 2
#define OP_EPOCH 3                   /* the spill files' own: "epoch <vaddr> starts" */

struct tbuf {
    struct tbuf *next;               /* every thread's, for the merge */
    int fd;                          /* its spill file, -1 before the first spill */
    unsigned n;                      /* records in rec */
    uint64_t epoch, line;            /* the epoch and line of its previous record */
    uint8_t op;                      /* ... and its op (a write once any was) */
    uint16_t cpu;
    bool failed;
    unsigned char rec[BUF_RECORDS * RECORD];
};

static bool on;                      /* FORESIGHT_TRACE_MEM set, nothing failed yet */
static pid_t owner;                  /* the process that writes PATH */
static char *path, *dir;
static uint64_t epoch;               /* parallel regions begun and ended */
static struct tbuf *threads;
static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread struct tbuf *tb __attribute__((tls_model("initial-exec")));
static __thread uint16_t cpu_now __attribute__((tls_model("initial-exec")));
static __thread bool busy __attribute__((tls_model("initial-exec")));

static void fail(const char *what, int err)
{
    static bool reported;
    __atomic_store_n(&on, false, __ATOMIC_RELAXED);
    if (!__atomic_exchange_n(&reported, true, __ATOMIC_RELAXED))
        fprintf(stderr, "foresight: FORESIGHT_TRACE_MEM=%s: %s: %s; the trace is not written\n",
                path ? path : "", what, strerror(err));
}

static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static bool write_all(int fd, const unsigned char *p, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        p += w;
        len -= (size_t)w;
    }
    return true;
}

static void spill(struct tbuf *t)
{
    if (t->n == 0 || t->failed)
        return;
    if (t->fd < 0) {
        t->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (t->fd < 0) {
            t->failed = true;
            fail("cannot make a temporary file in its directory", errno);
            return;
        }
    }
    if (!write_all(t->fd, t->rec, (size_t)t->n * RECORD)) {
        t->failed = true;
        fail("cannot write", errno ? errno : EIO);
    }
    t->n = 0;
}

static void put(struct tbuf *t, uint64_t addr, uint32_t size, uint16_t cpu, uint8_t op)
{
    if (t->n == BUF_RECORDS)
        spill(t);
    unsigned char *r = t->rec + (size_t)t->n++ * RECORD;
    put64(r, addr);
    r[8] = (unsigned char)size;
    r[9] = (unsigned char)(size >> 8);
    r[10] = (unsigned char)(size >> 16);
    r[11] = (unsigned char)(size >> 24);
    r[12] = (unsigned char)cpu;
    r[13] = (unsigned char)(cpu >> 8);
    r[14] = op;
    r[15] = 0;
}

static struct tbuf *attach(void)
{
    void *m = mmap(NULL, sizeof(struct tbuf), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        fail("no memory for a thread's buffer", errno);
        return NULL;
    }
    struct tbuf *t = m;
    t->fd = -1;
    t->epoch = 0;
    t->line = UINT64_MAX;
    pthread_mutex_lock(&threads_lock);
    t->next = threads;
    threads = t;
    pthread_mutex_unlock(&threads_lock);
    tb = t;
    return t;
}

static inline void record(const void *addr, uint32_t size, uint8_t op)
{
    if (!__atomic_load_n(&on, __ATOMIC_RELAXED) || busy)
        return;
    struct tbuf *t = tb;
    if (t == NULL) {
        busy = true;
        t = attach();
        busy = false;
        if (t == NULL)
            return;
    }
    const uint64_t e = __atomic_load_n(&epoch, __ATOMIC_RELAXED);
    if (e != t->epoch) {
        put(t, e, 0, 0, OP_EPOCH);
        t->epoch = e;
        t->line = UINT64_MAX;
    }
    const uint64_t line = (uintptr_t)addr >> LINE_SHIFT;
    if (line == t->line && t->cpu == cpu_now && (op == OP_READ || t->op == OP_WRITE))
        return;
    if (line != t->line || t->cpu != cpu_now)
        t->op = op;
    else
        t->op |= op;
    t->line = line;
    t->cpu = cpu_now;
    put(t, (uintptr_t)addr, size, cpu_now, op);
}

#define ACCESS(n, type)                                                        \
    EXPORT void __sanitizer_cov_load##n(type *addr) { record(addr, n, OP_READ); }  \
    EXPORT void __sanitizer_cov_store##n(type *addr) { record(addr, n, OP_WRITE); }
ACCESS(1, uint8_t)
ACCESS(2, uint16_t)
ACCESS(4, uint32_t)
ACCESS(8, uint64_t)
ACCESS(16, unsigned __int128)

/* inline-8bit-counters (needed for clang to emit the load and store callbacks) asks
 * for this at start; the counters are not used. */
EXPORT void __sanitizer_cov_8bit_counters_init(char *start, char *end)
{
    (void)start;
    (void)end;
}

/* ---- OMPT: the CPU of each thread and the epochs (OpenMP 5.0, omp-tools.h) ---- */

typedef union { uint64_t value; void *ptr; } ompt_data_t;
typedef void (*ompt_interface_fn_t)(void);
typedef ompt_interface_fn_t (*ompt_function_lookup_t)(const char *);
typedef void (*ompt_callback_t)(void);
typedef int (*ompt_set_callback_t)(int event, ompt_callback_t callback);
typedef struct {
    int (*initialize)(ompt_function_lookup_t, int, ompt_data_t *);
    void (*finalize)(ompt_data_t *);
    ompt_data_t tool_data;
} ompt_start_tool_result_t;
enum { OMPT_PARALLEL_BEGIN = 3, OMPT_PARALLEL_END = 4, OMPT_IMPLICIT_TASK = 7,
       OMPT_SCOPE_BEGIN = 1 };

static void on_parallel_begin(ompt_data_t *task, const void *frame, ompt_data_t *par,
                              unsigned requested, int flags, const void *ra)
{
    (void)task, (void)frame, (void)par, (void)requested, (void)flags, (void)ra;
    __atomic_fetch_add(&epoch, 1, __ATOMIC_RELAXED);
}

static void on_parallel_end(ompt_data_t *par, ompt_data_t *task, int flags, const void *ra)
{
    (void)par, (void)task, (void)flags, (void)ra;
    __atomic_fetch_add(&epoch, 1, __ATOMIC_RELAXED);
    cpu_now = 0; /* the encountering thread goes on as its team's thread 0 did */
}

static void on_implicit_task(int endpoint, ompt_data_t *par, ompt_data_t *task,
                             unsigned actual, unsigned index, int flags)
{
    (void)par, (void)task, (void)actual, (void)flags;
    if (endpoint == OMPT_SCOPE_BEGIN)
        cpu_now = (uint16_t)index;
}

static int tool_init(ompt_function_lookup_t lookup, int device, ompt_data_t *data)
{
    (void)device, (void)data;
    ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
    if (set == NULL)
        return 0;
    set(OMPT_PARALLEL_BEGIN, (ompt_callback_t)on_parallel_begin);
    set(OMPT_PARALLEL_END, (ompt_callback_t)on_parallel_end);
    set(OMPT_IMPLICIT_TASK, (ompt_callback_t)on_implicit_task);
    return 1; /* keep the tool */
}

static void tool_fini(ompt_data_t *data)
{
    (void)data;
}

EXPORT ompt_start_tool_result_t *ompt_start_tool(unsigned omp_version, const char *runtime)
{
    (void)omp_version, (void)runtime;
    static ompt_start_tool_result_t tool = {tool_init, tool_fini, {0}};
    return getenv("FORESIGHT_TRACE_MEM") && *getenv("FORESIGHT_TRACE_MEM") ? &tool : NULL;
}

/* ---- the merge, at exit ---- */

struct reader {
    int fd;
    unsigned char buf[4096 * RECORD];
    size_t len, off;
    bool eof;
    uint64_t epoch;                  /* of the records it is at */
};

/* The reader's next record, or NULL at its end. */
static const unsigned char *peek(struct reader *r)
{
    if (r->off == r->len) {
        if (r->eof)
            return NULL;
        ssize_t got;
        do
            got = read(r->fd, r->buf, sizeof r->buf);
        while (got < 0 && errno == EINTR);
        if (got <= 0) {
            r->eof = true;
            return NULL;
        }
        r->len = (size_t)got - (size_t)got % RECORD;
        r->off = 0;
        if (r->len == 0) {
            r->eof = true;
            return NULL;
        }
    }
    return r->buf + r->off;
}

/* Past the epoch marks at the reader's place; false at its end. */
static bool settle(struct reader *r)
{
    const unsigned char *p;
    while ((p = peek(r)) != NULL && p[14] == OP_EPOCH) {
        uint64_t e = 0;
        for (int i = 7; i >= 0; i--)
            e = e << 8 | p[i];
        r->epoch = e;
        r->off += RECORD;
    }
    return p != NULL;
}

static bool merge(struct tbuf *all, int out)
{
    size_t n = 0;
    for (struct tbuf *t = all; t; t = t->next)
        n += t->fd >= 0;
    struct reader *rs = n ? calloc(n, sizeof *rs) : NULL;
    if (n && rs == NULL)
        return false;
    size_t k = 0;
    for (struct tbuf *t = all; t; t = t->next)
        if (t->fd >= 0) {
            rs[k].fd = t->fd;
            if (lseek(t->fd, 0, SEEK_SET) != 0) {
                free(rs);
                return false;
            }
            k++;
        }
    unsigned char obuf[4096 * RECORD];
    size_t olen = 0;
    bool ok = write_all(out, (const unsigned char *)"FSCTRC1\n", 8);
    for (;;) {
        /* the lowest epoch any thread still has records of */
        bool any = false;
        uint64_t e = UINT64_MAX;
        for (size_t i = 0; i < n; i++)
            if (settle(&rs[i])) {
                any = true;
                if (rs[i].epoch < e)
                    e = rs[i].epoch;
            }
        if (!any)
            break;
        /* its threads take turns until each has none of it left */
        for (bool more = true; more && ok;) {
            more = false;
            for (size_t i = 0; i < n; i++) {
                const unsigned char *p;
                if (rs[i].epoch != e || (p = peek(&rs[i])) == NULL || p[14] == OP_EPOCH)
                    continue;
                memcpy(obuf + olen, p, RECORD);
                olen += RECORD;
                rs[i].off += RECORD;
                more = true;
                if (olen == sizeof obuf) {
                    ok = write_all(out, obuf, olen);
                    olen = 0;
                }
            }
        }
        unsigned char bar[RECORD] = {0};
        bar[14] = OP_BARRIER;
        memcpy(obuf + olen, bar, RECORD);
        olen += RECORD;
        if (olen == sizeof obuf) {
            ok = ok && write_all(out, obuf, olen);
            olen = 0;
        }
        if (!ok)
            break;
    }
    ok = ok && write_all(out, obuf, olen);
    free(rs);
    return ok;
}

static void finish(void)
{
    if (getpid() != owner || path == NULL)
        return;
    const bool was_on = __atomic_exchange_n(&on, false, __ATOMIC_RELAXED);
    pthread_mutex_lock(&threads_lock);
    struct tbuf *all = threads;
    threads = NULL;
    pthread_mutex_unlock(&threads_lock);
    bool failed = !was_on;
    for (struct tbuf *t = all; t; t = t->next) {
        spill(t);
        failed = failed || t->failed;
    }
    if (!failed) {
        size_t len = strlen(path) + 32;
        char *tmp = malloc(len);
        int out = -1;
        if (tmp) {
            snprintf(tmp, len, "%s.%ld.tmp", path, (long)getpid());
            out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        }
        if (out < 0) {
            fail("cannot create it", tmp ? errno : ENOMEM);
        } else {
            errno = 0;
            bool ok = merge(all, out);
            int err = errno ? errno : EIO;
            if (close(out) != 0 && ok) {
                ok = false;
                err = errno;
            }
            if (ok && rename(tmp, path) != 0) {
                ok = false;
                err = errno;
            }
            if (!ok) {
                unlink(tmp);
                fail("cannot write it", err);
            }
        }
        free(tmp);
    }
    for (struct tbuf *t = all; t; t = t->next)
        if (t->fd >= 0)
            close(t->fd);
}

static void child(void)
{
    on = false;
}

__attribute__((constructor)) static void start(void)
{
    const char *p = getenv("FORESIGHT_TRACE_MEM");
    if (p == NULL || *p == 0)
        return;
    path = strdup(p);
    dir = strdup(p);
    if (path == NULL || dir == NULL)
        return;
    char *slash = strrchr(dir, '/');
    if (slash == NULL)
        strcpy(dir, ".");
    else if (slash == dir)
        dir[1] = 0;
    else
        *slash = 0;
    owner = getpid();
    pthread_atfork(NULL, NULL, child);
    atexit(finish);
    on = true;
}
