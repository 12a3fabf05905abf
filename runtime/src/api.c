/*
 * api.c — the library's entry points behind foresight.h's inline fast path:
 * start-up and exit, the slow paths of prefetch and release, the periodic
 * verification of filtered calls, and fork handling.
 *
 * Every entry point accepts any input: NULL, zero length, wrapping lengths,
 * addresses outside user space or no longer mapped are counted as bad input
 * and ignored, and what a call may touch is bounded whatever it names (a large
 * range is cut to the mapped memory in it, then to at most what memory can
 * hold).  Nothing here can fail visibly to the program: errno is kept, and a
 * hint is never a cancellation point.
 *
 * Signal handlers.  A handler may interrupt its thread anywhere, including
 * inside this library holding one of its locks.  So each thread carries an
 * "inside" flag: a call that finds it set (a handler's hint, made while its
 * thread was in the library) is dropped and counted as `refused` before
 * it touches any lock or shared state beyond atomic counters; so is one made on an
 * alternate signal stack too short for the library's calls (thread_guard.c).  Any other call
 * reaches only system calls, atomics and the library's own locks, which no
 * code of its thread can be holding then: no malloc, no stdio (the workers are
 * made when the runtime starts, not by the first hint, for that reason: they sleep
 * until it comes, workers.c).
 *
 * The runtime starts when the first unit with hints loads (foresight__hinted, which
 * foresight.h's constructor calls in every such unit); the library's own constructor
 * only reads the configuration and starts a trace.
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "internal.h"

struct foresight_site foresight__anon_site = {.file = "(untagged)", .line = 0,
                                              .ref = "foresight_prefetch()"};
static pid_t owner_pid;
static pid_t loaded_pid; /* the process whose constructor loaded the configuration */
bool fs_started;         /* a unit with hints started the runtime (foresight__hinted) */

/* Set while this thread runs library code.  initial-exec: a global-dynamic TLS access
 * from a shared library may allocate on a thread's first use, which a signal handler
 * must not. */
static __thread volatile sig_atomic_t inside __attribute__((tls_model("initial-exec")));

bool fs_enter(struct foresight_site *site, struct fs_entry *e)
{
    fs_site_register(site); /* lock-free */
    if (inside || fs_hint_refused()) {
        fs_count(site, FS_REFUSED, 1);
        return false;
    }
    inside = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    e->saved_errno = errno;
    /* The system calls below (open, read, msync) are cancellation points; a thread
     * cancelled in one while holding a lock would leave it held for good. */
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &e->cancel_state);
    return true;
}

int fs_hold_hints(void)
{
    const int was = inside;
    inside = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return was;
}

void fs_release_hints(int was)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    inside = was;
}

void fs_leave(const struct fs_entry *e)
{
    pthread_setcancelstate(e->cancel_state, NULL);
    errno = e->saved_errno;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    inside = 0;
}

static void after_fork_child(void)
{
    fs_kept_after_fork();
    fs_residency_reset();
    fs_deferred_reset();
    fs_distance_reset();
    fs_random_reset();
    fs_gate_reset();
    fs_mapping_reset();
    fs_reuse_reset();
    fs_workers_after_fork_child();
    fs_memcg_after_fork_child();
}

static void start(void)
{
    if (fs_cfg.disabled)
        return;
    if (fs_guard_filtered_at_start())
        return; /* a seccomp filter in force from the start: no hint, no thread */
    if (sysconf(_SC_PAGESIZE) != (long)FS_PAGE) {
        fprintf(stderr, "foresight: page size %ld is not 4 KiB; hints disabled\n",
                sysconf(_SC_PAGESIZE));
        return;
    }
    fs_budget_init();
    fs_kept_open_all(); /* before any thread of ours, or the program's, runs (ownfd.c) */
    fs_main_exit_record();
    fs_remote_init();
    fs_queue_global = fs_queue_create(fs_cfg.queue_slots);
    if (fs_queue_global == NULL) {
        fprintf(stderr, "foresight: out of memory at start-up; hints disabled\n");
        return;
    }
    owner_pid = getpid();
    pthread_atfork(NULL, NULL, after_fork_child);
    fs_pin_init();
    if (fs_residency_init() != 0) {
        fprintf(stderr, "foresight: cannot map the residency table; hints disabled\n");
        return;
    }
    /* Now rather than at the first queued request: pthread_create allocates, and the
     * first request may come from a signal handler that interrupted malloc. */
    if (fs_cfg.issue_inline != FS_INLINE_ALL)
        fs_workers_ensure_started();
    fs_memcg_keeper_ensure_started();
    fs_reuse_init();
}

/* Start-up and exit run library code on the program's thread: a handler's hint that
 * interrupts them is dropped (refused) like any other that finds its thread inside. */
static void load(void)
{
    static int done;
    if (__atomic_exchange_n(&done, 1, __ATOMIC_SEQ_CST))
        return;
    inside = 1;
    loaded_pid = getpid();
    fs_config_load();
    /* Before anything else, so faults are counted from program start. */
    fs_trace_start();
    inside = 0;
}

__attribute__((constructor)) static void fs_init(void)
{
    load();
}

/* The runtime starts when the first unit with hints loads (its constructor: foresight.h),
 * after the library's own.  A program none of whose units has hints (built with
 * --no-prefetch, or by plain cc) runs with it off: nothing of it runs or takes the
 * program's memory. */
void foresight__hinted(const void *unit)
{
    /* The object holding UNIT stays loaded: the runtime keeps pointers to its sites (a
     * worker's request, the statistics at exit), and a dlclose'd hinted library crashed
     * the program in a probe (10 of 40 runs; every run with FORESIGHT_STATS). */
    Dl_info info;
    if (unit != NULL && dladdr(unit, &info) != 0 && info.dli_fname != NULL &&
        info.dli_fname[0] != 0)
        (void)dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
    static int once;
    load(); /* (the library's constructor has, unless the runtime is linked in whole) */
    if (__atomic_exchange_n(&once, 1, __ATOMIC_SEQ_CST))
        return;
    inside = 1;
    fs_started = true;
    start();
    inside = 0;
}

__attribute__((destructor)) static void fs_fini(void)
{
    inside = 1;
    /* Statistics belong to the process that started the runtime, not to forked children. */
    if (getpid() == owner_pid)
        fs_pt_drain();
    /* Under a seccomp filter the program installed, opening a file may kill it: no
     * report then (a probe's filter killing on open: SIGSYS at exit). */
    const bool may_open = !fs_thread_strict && !__atomic_load_n(&fs_filtered, __ATOMIC_RELAXED);
    if (fs_cfg.stats && !fs_cfg.disabled && may_open && getpid() == owner_pid)
        fs_stats_report();
    else if (fs_cfg.stats && !fs_cfg.disabled && may_open && !fs_started &&
             getpid() == loaded_pid) {
        fs_budget_init(); /* the limit it would have had, for the report */
        fs_stats_report(); /* every counter 0, "started": false */
    }
    fs_trace_finish();
    inside = 0;
}

/* [addr, addr+bytes) as whole pages: outward for prefetch, inward for release.
 * False for input that names no valid user range. */
static bool page_range(const void *addr, size_t bytes, bool outward, uintptr_t *first,
                       size_t *npages)
{
    uintptr_t a = (uintptr_t)addr, end = a + bytes;
    if (addr == NULL || bytes == 0 || end < a || end > FS_VA_LIMIT)
        return false;
    if (outward) {
        *first = a >> FORESIGHT_PAGE_SHIFT;
        *npages = ((end - 1) >> FORESIGHT_PAGE_SHIFT) - *first + 1;
    } else {
        *first = (a + FS_PAGE - 1) >> FORESIGHT_PAGE_SHIFT;
        uintptr_t last = end >> FORESIGHT_PAGE_SHIFT;
        *npages = last > *first ? last - *first : 0;
    }
    return true;
}

/* The most pages one release may name (256 GiB; a larger one releases its first 256
 * GiB): its work is a mincore per 2 MiB of the mapped memory it names, about 0.1 s for
 * 256 GiB of address space with nothing resident (a MAP_NORESERVE mapping). */
#define RELEASE_MAX_PAGES ((size_t)1 << 26)

/* Bounds what a call may touch, whatever its arguments: a range of more than a chunk
 * is cut to the mapped memory in it (one msync when it is all mapped), then to at most
 * MAX pages (a prefetch's cap is plan_prefetch's, which counts it).  False when nothing
 * of it is mapped.  A smaller range is left whole: a look-ahead window reaching past
 * the end of an object keeps its marks (issue.c), and the table grows for none of it
 * unless it is mapped (residency.c). */
static bool bound_range(uintptr_t *first, size_t *n, size_t max)
{
    if (*n > FS_CHUNK_PAGES && !fs_mapping_clamp(first, n))
        return false;
    if (*n > max)
        *n = max;
    return true;
}

/* Prefetch requests to queue (0 or 1) for [first, first+n): marks the pages. */
static unsigned plan_prefetch(struct foresight_site *site, uintptr_t first, size_t n,
                              struct fs_request *out)
{
    size_t cap = fs_budget_call_pages();
    if (n > cap) { /* more than memory can hold: the tail could only evict the head */
        n = cap;
        fs_count(site, FS_DROPPED_BUDGET, 1);
    }
    fs_count(site, FS_PAGES_REQUESTED, n);
    /* Section 2.4.1: skip pages known resident; request the first missing page and
     * everything after it in the block, so a block costs at most one request.
     * FORESIGHT_FILTER=0 skips nothing (Figure 12(c), without run-time filtering). */
    if (fs_cfg.filter) {
        size_t known = fs_residency_marked_prefix(first, n);
        first += known;
        n -= known;
    }
    if (n == 0) {
        fs_count(site, FS_FILTERED, 1);
        return 0;
    }
    if (fs_cfg.release == FS_REL_ADAPTIVE) /* the only reader of reuse.c's clock */
        fs_reuse_advance(n);
    fs_residency_mark(first, n);
    *out = (struct fs_request){.page = first, .npages = n, .kind = FS_REQ_PREFETCH, .site = site,
                               .t_enqueued = fs_cfg.lookahead_measured ? fs_now_ns() : 0};
    return 1;
}

/* The kind of memory at PAGE when the choice of issuing thread depends on it; looked
 * up only then (FORESIGHT_INLINE=anon), so the other settings pay nothing for it. */
static enum fs_mem_kind request_mem(uintptr_t page)
{
    return fs_cfg.issue_inline == FS_INLINE_ANON ? fs_mapping_kind(page) : FS_MEM_UNKNOWN;
}

static unsigned plan_release(struct foresight_site *site, const void *addr, size_t bytes,
                             struct fs_request *out)
{
    uintptr_t first;
    size_t n;
    fs_count(site, FS_RELEASES, 1);
    if (!page_range(addr, bytes, false, &first, &n)) {
        fs_count(site, FS_BAD_INPUT, 1);
        return 0;
    }
    if (n == 0 || fs_cfg.release == FS_REL_OFF)
        return 0;
    if (!bound_range(&first, &n, RELEASE_MAX_PAGES)) {
        fs_count(site, FS_BAD_INPUT, 1);
        return 0;
    }
    fs_count(site, FS_PAGES_RELEASE_REQ, n);
    if (!fs_cfg.file_streams_hinted && fs_mapping_page_cache(first)) {
        /* The page cache's own pages are left to the kernel's reclaim, which drops clean
         * ones cheaply and leaves dirty ones to the flusher: a release there only costs
         * (NAS MG over files, 192 MiB under 64 MiB: 9% slower with its releases, the
         * same as unhinted without; docs/decisions.md).  The pages may go at any time
         * now, so their marks go. */
        fs_residency_clear(first, n);
        __atomic_add_fetch(&fs_global_releases_page_cache, 1, __ATOMIC_RELAXED);
        return 0;
    }
    if (fs_cfg.release == FS_REL_AUTO || fs_cfg.release == FS_REL_ADAPTIVE) {
        if (!fs_budget_pressure()) {
            /* Memory is not short: the pages stay, and so do their marks, until
             * pressure comes (deferred.c). */
            fs_deferred_add(first, n);
            __atomic_add_fetch(&fs_global_releases_idle, 1, __ATOMIC_RELAXED);
            return 0;
        }
        fs_deferred_flush();
        if (fs_reuse_skip(site)) { /* its marks stay: the pages do */
            __atomic_add_fetch(&fs_global_releases_early, 1, __ATOMIC_RELAXED);
            return 0;
        }
    }
    fs_residency_clear(first, n);
    *out = (struct fs_request){.page = first, .npages = n, .kind = FS_REQ_RELEASE, .site = site,
                               .mem = request_mem(first)};
    return 1;
}

/* Prefetches smaller than this many pages (a block of `foresight cc`'s streams, 64 KiB)
 * are queued under FORESIGHT_INLINE=anon: a gather's one-page prefetches come many at
 * a time, each would cost the program two system calls, and a worker issues them while
 * the program runs on.  NAS IS, 192 MiB under a 64 MiB cap: 6.0-6.4 s with its gathers
 * queued and its streams inline, 12.0-13.1 s with both inline, 9.3-10.3 s both queued. */
#define INLINE_MIN_PAGES 16

/* Whether a request is issued by the calling thread rather than queued for the workers
 * (FORESIGHT_INLINE, docs/decisions.md). */
static bool issued_inline(enum fs_kind kind, enum fs_mem_kind mem, size_t npages)
{
    if (fs_cfg.issue_inline == FS_INLINE_ALL)
        return true;
    return fs_cfg.issue_inline == FS_INLINE_ANON && mem == FS_MEM_ANON &&
           (kind == FS_REQ_RELEASE || npages >= INLINE_MIN_PAGES);
}

static void submit(struct foresight_site *site, struct fs_request *reqs, unsigned n)
{
    struct fs_request queued[2];
    unsigned nq = 0;
    fs_runtime_wake(); /* the library's threads begin with the first hint (workers.c) */
    fs_memcg_keeper_ensure_started(); /* one load, but in a forked child */
    for (unsigned i = 0; i < n; i++) {
        if (issued_inline(reqs[i].kind, reqs[i].mem, reqs[i].npages))
            fs_issue(&reqs[i]);
        else
            queued[nq++] = reqs[i];
    }
    if (nq == 0)
        return;
    fs_workers_ensure_started();
    unsigned dropped = fs_queue_push(fs_queue_global, queued, nq);
    for (unsigned i = 0; i < nq; i++) {
        if (!(dropped & (1u << i)))
            continue;
        fs_count(site, FS_DROPPED_QUEUE, 1);
        if (queued[i].kind == FS_REQ_PREFETCH)
            fs_residency_clear(queued[i].page, queued[i].npages);
    }
}

/* Prefetches into what the mapping cache calls a gap: one in GAP_SAMPLE is queued. */
#define GAP_SAMPLE 64
static __thread unsigned long gap_requests __attribute__((tls_model("initial-exec")));

static unsigned plan_prefetch_range(struct foresight_site *site, const void *addr, size_t bytes,
                                    struct fs_request *out)
{
    uintptr_t first;
    size_t n;
    fs_count(site, FS_CONSIDERED, 1);
    if (!page_range(addr, bytes, true, &first, &n) || !bound_range(&first, &n, SIZE_MAX)) {
        fs_count(site, FS_BAD_INPUT, 1);
        return 0;
    }
    if (fs_deferred_pending() && fs_budget_pressure())
        fs_deferred_flush(); /* before the filter trusts marks pressure may have made stale */
    enum fs_mem_kind mem = request_mem(first);
    if (mem == FS_MEM_NONE && (gap_requests++ & (GAP_SAMPLE - 1)) != 0) {
        /* Where the mapping cache has a gap: dropped at once, but for one in GAP_SAMPLE
         * per thread, queued so that a worker finds out whether memory was mapped there
         * since (then the cache is dropped, issue.c).  A look-ahead reaching past the
         * end of an object into unmapped space otherwise costs a queued request per
         * call: NAS SP in core, 5.5 million of them, 9-16 s against 1.7 s, in the runs
         * where its array ended next to a gap. */
        fs_count(site, FS_BAD_INPUT, 1);
        return 0;
    }
    if (issued_inline(FS_REQ_PREFETCH, mem, n)) {
        /* Over budget: drop before the pages are marked, as a full queue drops a
         * queued one (a request marked and then dropped costs a mincore to unmark).
         * Reconciling at most every 10 ms: NAS SP's hints, over budget, reached one
         * every few calls and took 57 s of system time in its 86 s (22 s with the gap,
         * as with workers). */
        if (!fs_budget_admits(site, n, 10000000)) {
            fs_count(site, FS_DROPPED_BUDGET, 1);
            return 0;
        }
    } else if (fs_queue_global != NULL && fs_queue_full(fs_queue_global, FS_REQ_PREFETCH)) {
        /* The workers are behind: drop at once, without marking pages or queueing
         * behind the lock (a random-access loop can hint far faster than the disk). */
        fs_count(site, FS_DROPPED_QUEUE, 1);
        return 0;
    }
    unsigned planned = plan_prefetch(site, first, n, out);
    if (planned)
        out->mem = mem;
    return planned;
}

void foresight__prefetch_slow(struct foresight_site *site, const void *addr, size_t bytes)
{
    struct fs_entry e;
    if (!fs_enter(site, &e)) {
        fs_count(site, FS_CONSIDERED, 1);
        return;
    }
    struct fs_request r;
    bool kernel = fs_random_note(site, (uintptr_t)addr >> FORESIGHT_PAGE_SHIFT);
    if (!kernel) /* a call left to read-around does not end the site's quiet */
        __atomic_store_n(&site->fs_slow, 1, __ATOMIC_RELAXED);
    unsigned n = plan_prefetch_range(site, addr, bytes, &r);
    submit(site, &r, kernel ? 0 : n); /* left to read-around: marked, not issued */
    fs_leave(&e);
}

void foresight__release_slow(struct foresight_site *site, const void *addr, size_t bytes)
{
    struct fs_entry e;
    if (!fs_enter(site, &e)) {
        fs_count(site, FS_RELEASES, 1);
        return;
    }
    struct fs_request r;
    submit(site, &r, plan_release(site, addr, bytes, &r));
    fs_leave(&e);
}

void foresight__prefetch_release_slow(struct foresight_site *site, const void *paddr,
                                      size_t pbytes, const void *raddr, size_t rbytes)
{
    struct fs_entry e;
    if (!fs_enter(site, &e)) {
        fs_count(site, FS_CONSIDERED, 1);
        fs_count(site, FS_RELEASES, 1);
        return;
    }
    struct fs_request r[2];
    unsigned n = plan_prefetch_range(site, paddr, pbytes, &r[0]);
    n += plan_release(site, raddr, rbytes, &r[n]);
    submit(site, r, n);
    fs_leave(&e);
}

/* Calls skipped in the last quiet stretch, into the site's counters. */
static void count_quieted(struct foresight_site *site)
{
    unsigned long armed = __atomic_exchange_n(&site->fs_quiet_armed, 0, __ATOMIC_RELAXED);
    unsigned long left = __atomic_exchange_n(&site->fs_quiet, 0, __ATOMIC_RELAXED);
    unsigned long used = armed > left ? armed - left : 0;
    fs_count(site, FS_CONSIDERED, used);
    fs_count(site, FS_FILTERED, used);
    fs_count(site, FS_QUIETED, used);
}

/* After a verified batch: a site whose whole batch was filtered (or left to the
 * kernel's read-around, random.c), and whose check found the pages resident, may skip
 * a stretch of calls (foresight_site_quiet); anything else ends the quiet. */
static void quiet_after_batch(struct foresight_site *site, bool all_resident)
{
    count_quieted(site);
    bool slow = __atomic_exchange_n(&site->fs_slow, 0, __ATOMIC_RELAXED) != 0;
    if (slow || !all_resident || !fs_cfg.filter) {
        __atomic_store_n(&site->fs_level, 0, __ATOMIC_RELAXED);
        return;
    }
    unsigned long level = __atomic_load_n(&site->fs_level, __ATOMIC_RELAXED);
    unsigned long stretch = fs_cfg.verify_period << (level < 6 ? level : 6);
    __atomic_store_n(&site->fs_level, level + 1, __ATOMIC_RELAXED);
    __atomic_store_n(&site->fs_quiet_armed, stretch, __ATOMIC_RELAXED);
    __atomic_store_n(&site->fs_quiet, stretch, __ATOMIC_RELAXED);
}

/* Check with mincore that the pages of a filtered call really are resident.  A stale
 * bit (the kernel evicted the page) is counted, the chunk is revalidated, and the
 * prefetch the filter swallowed is issued after all. */
static void verify(struct foresight_site *site, const void *addr, size_t bytes)
{
    uintptr_t first;
    size_t n;
    unsigned char vec[64];
    if (!page_range(addr, bytes, true, &first, &n) || n > 64)
        return; /* the inline filter only passes ranges within one 64-page word */
    long resident = fs_resident_vector(first, n, vec);
    quiet_after_batch(site, resident == (long)n);
    if (resident == (long)n)
        return;
    if (resident < 0) { /* unmapped since it was marked (munmap and reuse) */
        fs_residency_clear(first, n);
        fs_count(site, FS_BAD_INPUT, 1);
        return;
    }
    fs_count(site, FS_STALE, n - (size_t)resident);
    for (uintptr_t c = first >> FS_CHUNK_SHIFT; c <= (first + n - 1) >> FS_CHUNK_SHIFT; c++)
        fs_residency_revalidate_chunk(c);
    struct fs_request r;
    submit(site, &r, plan_prefetch(site, first, n, &r));
}

/* Reached every verify_period-th filtered call of a site: account the batch of
 * filtered calls and verify the call. */
void foresight__filtered_check(struct foresight_site *site, const void *addr, size_t bytes)
{
    struct fs_entry e;
    bool entered = fs_enter(site, &e);
    /* The batch is accounted and the countdown re-armed either way (atomics only), so a
     * handler's filtered calls keep costing a decrement, not a call each. */
    unsigned long batch = __atomic_exchange_n(&site->fs_armed, fs_cfg.verify_period - 1,
                                              __ATOMIC_RELAXED) + 1;
    __atomic_store_n(&site->fs_countdown, fs_cfg.verify_period - 1, __ATOMIC_RELAXED);
    fs_count(site, FS_CONSIDERED, batch);
    fs_count(site, FS_FILTERED, batch);
    if (!entered)
        return;
    fs_count(site, FS_VERIFIED, 1);
    verify(site, addr, bytes);
    fs_leave(&e);
}
