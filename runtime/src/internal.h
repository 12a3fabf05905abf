/*
 * internal.h — declarations shared by the runtime's mechanisms.  Each
 * source file in runtime/src owns one mechanism; this header is how they meet.
 */
#ifndef FORESIGHT_INTERNAL_H
#define FORESIGHT_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "foresight.h"
#include "ownfd.h"

#define FS_PAGE ((uintptr_t)1 << FORESIGHT_PAGE_SHIFT)
#define FS_LEAF_PAGES ((uintptr_t)1 << FORESIGHT_LEAF_SHIFT)
#define FS_LEAF_WORDS (FS_LEAF_PAGES / 64)
/* Highest user address the table covers (47-bit user space). */
#define FS_VA_LIMIT ((uintptr_t)1 << 47)
/* Reconciliation works on chunks of 512 pages (2 MiB). */
#define FS_CHUNK_SHIFT 9
#define FS_CHUNK_PAGES ((uintptr_t)1 << FS_CHUNK_SHIFT)

/* Bits of foresight_site.fs_state. */
#define FS_SITE_REGISTERED 1ul /* in the statistics' registry (stats.c) */
#define FS_SITE_STREAM 2ul     /* a compiled loop's stream (stream.c): its pages in flight are
                                  bounded by its look-ahead, so the budget never drops it */
#define FS_SITE_SWEPT 4ul      /* a stream found in the sweep of a sibling the kernel reads
                                  ahead (stream.c: swept) */

/* Per-site counters, kept in foresight_site.fs_stat[]. */
enum fs_stat {
    FS_CONSIDERED,        /* calls that reached the library (not filtered inline) */
    FS_FILTERED,          /* calls filtered inline by the residency bits */
    FS_ISSUED,            /* prefetch requests sent to the kernel */
    FS_PAGES_REQUESTED,   /* pages named by prefetches reaching the library */
    FS_PAGES_ISSUED,      /* pages the kernel was asked to read (not resident) */
    FS_PAGES_UNNECESSARY, /* pages of issued requests found already resident */
    FS_DROPPED_BUDGET,    /* prefetch requests dropped: memory budget exhausted */
    FS_DROPPED_QUEUE,     /* requests dropped: queue full */
    FS_RELEASES,          /* release calls */
    FS_PAGES_RELEASE_REQ, /* whole pages covered by releases */
    FS_PAGES_DEACTIVATED, /* resident pages moved to the inactive list (MADV_COLD) */
    FS_PAGES_FREED,       /* resident pages actually gone after the release */
    FS_VERIFIED,          /* filtered calls re-checked with mincore */
    FS_STALE,             /* of those, pages the filter believed resident but were gone */
    FS_BAD_INPUT,         /* NULL, zero, wrapping, unmapped ranges */
    FS_QUIETED,           /* calls skipped while the site was quiet (also filtered) */
    FS_PAGES_PAGED_OUT,   /* pages a release took out of the page table (MADV_PAGEOUT) */
    FS_PAGES_BACK,        /* of those, pages mapped again soon after (reuse.c) */
    FS_REFUSED,           /* calls dropped where a hint must not run: a handler's in a
                             thread already inside the library, on a short alternate
                             signal stack, under seccomp (thread_guard.c) */
    FS_KERNEL_READAHEAD,  /* dense file streams, or runs of an indirect site, left to the
                             kernel's readahead */
    FS_NSTAT
};
_Static_assert(FS_NSTAT <= 20, "foresight_site.fs_stat has 20 slots");

/* How prefetches reach the kernel (FORESIGHT_METHOD). */
enum fs_method { FS_WILLNEED, FS_POPULATE, FS_BOTH };
/* How releases reach the kernel (FORESIGHT_RELEASE). */
enum fs_release_mode { FS_REL_AUTO, FS_REL_COLD, FS_REL_PAGEOUT, FS_REL_OFF, FS_REL_ADAPTIVE };
/* Which requests the calling thread issues itself instead of queueing (FORESIGHT_INLINE). */
enum fs_inline { FS_INLINE_ANON, FS_INLINE_ALL, FS_INLINE_NONE };

struct fs_config {
    bool disabled;
    int stats;              /* 0 off, 1 table on stderr, 2 JSON file */
    char stats_path[4096];
    uint64_t mem_override;  /* FORESIGHT_MEM, 0 when unset */
    int workers;
    enum fs_inline issue_inline;
    size_t queue_slots;
    enum fs_method method;
    size_t chunk_bytes;
    size_t lookahead_bytes; /* FORESIGHT_LOOKAHEAD: bytes a compiled loop keeps in flight */
    bool lookahead_measured; /* FORESIGHT_LOOKAHEAD=measured: latency x bandwidth (distance.c) */
    bool lookahead_set;      /* FORESIGHT_LOOKAHEAD is a size: used as given, uncapped */
    unsigned long verify_period;
    enum fs_release_mode release;
    bool filter;            /* FORESIGHT_FILTER: the user-level residency filter (default on) */
    int random_advice;      /* FORESIGHT_RANDOM: MADV_RANDOM for indirect sites (default 1) */
    bool file_streams_hinted; /* FORESIGHT_FILE_STREAMS=hint: dense file streams keep hints */
    bool incore_hinted;     /* FORESIGHT_INCORE=hint: nests keep hints while memory fits */
    int pin;                /* FORESIGHT_PIN: 0 off, 1 with a CPU to spare (default), 2 always */
    char trace_path[4088];  /* FORESIGHT_TRACE: event trace file, "" when off */
    char nbd_uri[1024];     /* FORESIGHT_NBD: the I/O node serving nbd_file (remote.c) */
    char nbd_file[1024];    /* FORESIGHT_NBD_FILE: the local view of that export */
    bool pt;                /* FORESIGHT_PT: prefetch threads may start (default 1) */
    bool pt_random;         /* FORESIGHT_PT_RANDOM: readahead off while it leads (1) */
    char pt_files[1024];    /* FORESIGHT_PT_FILES: glob of files to prefetch, "" when unset */
    unsigned pt_queue;      /* FORESIGHT_PT_QUEUE: calls the thread may run ahead */
    uint64_t pt_ahead;      /* FORESIGHT_PT_AHEAD: predicted bytes it may run ahead */
    bool pt_eq1;            /* FORESIGHT_PT_SCHED=eq1: the paper's Eq. (1) issues (window) */
    bool pt_uring;          /* FORESIGHT_PT_ISSUE=uring: requests by io_uring (fadvise) */
    uint64_t pt_slack_ns;   /* FORESIGHT_PT_SLACK: Eq. (1)'s Time_Threshold (5 ms) */
    bool pt_drain;          /* FORESIGHT_PT_DRAIN=on: exit waits for the thread (tests) */
    int color;              /* FORESIGHT_COLOR: 0 off, 1 sim, 2 real (color.c) */
    char color_map[4096];   /* FORESIGHT_COLOR_MAP: where the map goes ("" none: real) */
    uint64_t color_cache;   /* FORESIGHT_COLOR_CACHE=SIZE,ASSOC: 0 = the machine's L2 */
    unsigned color_assoc;
};
extern struct fs_config fs_cfg;

/* distance.c: the prefetch distance from measured latency and bandwidth. */
uint64_t fs_now_ns(void);
bool fs_distance_sample_due(void);             /* time this prefetch (MADV_POPULATE_READ)? */
void fs_distance_record(size_t npages, uint64_t t_enqueued, uint64_t t_start, uint64_t t_done);
void fs_distance_report(double *lat_us, double *mb_per_s, unsigned long *samples, size_t *bytes);
void fs_distance_reset(void);                  /* after fork */

/* N in decimal at P (no NUL); the end.  By hand, not snprintf: paths of /proc and sysfs
 * are made where nothing may allocate or take a lock. */
static inline char *fs_put_decimal(char *p, unsigned long n)
{
    char digits[24];
    int k = 0;
    do
        digits[k++] = (char)('0' + n % 10);
    while ((n /= 10) != 0);
    while (k > 0)
        *p++ = digits[--k];
    return p;
}

/* thread_guard.c: where a hint must not run.  This thread's alternate signal stack,
 * [fs_alt_lo, fs_alt_lo + fs_alt_size) (zero: none), recorded by the interposed
 * sigaltstack; FS_HINT_STACK bounds the stack a hint uses below its entry into the
 * library (test_altstack measures it, tests/system/test_hint_stack.py bounds it).
 * fs_thread_strict: this thread is in seccomp's strict mode; fs_filtered: a seccomp
 * filter was installed.  fs_hint_refused: a hint here is dropped. */
#if defined(__OPTIMIZE__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define FS_HINT_STACK 6144
#else /* unoptimised or sanitized frames (the test builds): several times larger */
#define FS_HINT_STACK 32768
#endif
extern __thread uintptr_t fs_alt_lo __attribute__((tls_model("initial-exec")));
extern __thread uintptr_t fs_alt_size __attribute__((tls_model("initial-exec")));
extern __thread bool fs_thread_strict __attribute__((tls_model("initial-exec")));
extern bool fs_filtered;
bool fs_guard_filtered_at_start(void); /* a filter inherited: the runtime stays off */
extern unsigned long fs_global_refused; /* nest entries left unhinted by it */
static inline bool fs_hint_refused(void)
{
    const uintptr_t off = (uintptr_t)__builtin_frame_address(0) - fs_alt_lo;
    return (off < fs_alt_size && off < FS_HINT_STACK) || fs_thread_strict ||
           __atomic_load_n(&fs_filtered, __ATOMIC_RELAXED);
}

/* api.c: entering the library from the program.  fs_enter is false when this thread is
 * already inside it (a signal handler interrupted it there) or no hint may run here
 * (fs_hint_refused): the caller drops the call, which fs_enter has counted as refused.  Otherwise the caller must fs_leave, which
 * restores errno and the thread's cancellation state. */
struct fs_entry {
    int saved_errno;
    int cancel_state;
};
bool fs_enter(struct foresight_site *site, struct fs_entry *e);
void fs_leave(const struct fs_entry *e);
/* This thread's hints dropped until fs_release_hints(the value returned): while it holds
 * the library's locks outside an entry point (alone.c), a handler's hint must not wait. */
int fs_hold_hints(void);
void fs_release_hints(int was);

/* gate.c: whether a nest's hints can pay (the program's memory exceeds the limit). */
bool fs_gate_open(const void *nest);
unsigned long fs_address_space(void); /* the program's, in pages (gate.c); 0 unknown */
void fs_gate_reset(void); /* after fork */
extern unsigned long fs_global_gate_closed; /* nest entries run without hints */

/* runs.c: short runs continuing one another across entries of a nest.  Notes the
 * run [START, START + LEN) at SITE; when it continues an earlier run, true with the
 * bytes [FROM, TO) to hint ahead of it (LOOK: the look-ahead bytes over all streams). */
bool fs_run_continues(const struct foresight_site *site, uintptr_t start, uintptr_t len,
                      uintptr_t look, uintptr_t *from, uintptr_t *to);
extern unsigned long fs_global_runs_continued;

/* config.c */
void fs_config_load(void);
const char *fs_method_name(enum fs_method m);
const char *fs_release_name(enum fs_release_mode m);
const char *fs_inline_name(enum fs_inline m);

/* residency.c: the two-level bit table and its reconciliation with mincore. */
int fs_residency_init(void);
void fs_residency_reset(void);                 /* after fork: forget everything */
size_t fs_residency_mark(uintptr_t page, size_t npages);  /* returns pages newly marked */
size_t fs_residency_clear(uintptr_t page, size_t npages); /* returns pages unmarked */
bool fs_residency_test(uintptr_t page);
size_t fs_residency_marked_prefix(uintptr_t page, size_t npages); /* leading marked pages */
size_t fs_residency_footprint(void);           /* pages currently marked */
size_t fs_residency_queued_chunks(void);       /* chunks waiting in the reconciliation ring */
size_t fs_residency_peak(void);
size_t fs_residency_leaves(void);              /* leaves allocated (1 GiB of address space each) */
/* Clear marks of pages mincore finds absent in the chunk holding PAGE. */
size_t fs_residency_revalidate_chunk(uintptr_t chunk);
/* Revalidate the oldest marked chunks until at most TARGET pages stay marked. */
size_t fs_residency_reconcile(size_t target_pages);
/* mincore over [page, page+npages) into VEC; unmapped pages read as absent.
 * Returns the number of resident pages, or -1 when nothing of it is mapped. */
long fs_resident_vector(uintptr_t page, size_t npages, unsigned char *vec);

/* queue.c: bounded request queue with coalescing. */
enum fs_kind { FS_REQ_PREFETCH, FS_REQ_RELEASE };
/* What holds a page: not looked up, nothing, a file mapping, anonymous memory (mapping.c). */
enum fs_mem_kind { FS_MEM_UNKNOWN, FS_MEM_NONE, FS_MEM_FILE, FS_MEM_ANON };

struct fs_request {
    uintptr_t page;   /* first page number */
    size_t npages;
    enum fs_kind kind;
    struct foresight_site *site;
    uint64_t t_enqueued; /* fs_now_ns() when the hint was made (prefetches) */
    enum fs_mem_kind mem; /* what the first page is in, if FORESIGHT_INLINE=anon asked */
};
struct fs_queue;
struct fs_queue *fs_queue_create(size_t slots);
void fs_queue_destroy(struct fs_queue *q);
void fs_queue_reset(struct fs_queue *q);       /* after fork */
/* Push N requests at once (a bundled prefetch+release is one crossing).
 * Returns a bit mask of the requests that were dropped because the queue is full. */
unsigned fs_queue_push(struct fs_queue *q, const struct fs_request *reqs, unsigned n);
/* Block until a request is available; false when the queue is shutting down. */
bool fs_queue_pop(struct fs_queue *q, struct fs_request *out);
void fs_queue_shutdown(struct fs_queue *q); /* pushes dropped, pops end once it is empty */
void fs_queue_reopen(struct fs_queue *q);
/* True when a request of KIND would be dropped for a full queue (checked without the
 * lock, so a caller can drop a hint without marking pages or waiting for the lock). */
bool fs_queue_full(const struct fs_queue *q, enum fs_kind kind);
size_t fs_queue_coalesced(const struct fs_queue *q);
size_t fs_queue_pushed(const struct fs_queue *q); /* requests accepted so far */

/* budget.c: the memory budget prefetches must stay within. */
void fs_budget_init(void);
uint64_t fs_budget_limit_bytes(void);          /* the cap: FORESIGHT_MEM, cgroup, or RAM */
/* Slots for a table of the runtime's that grows with the limit: the power of two from
 * FEWEST (a power of two) to MOST giving PER_UNIT slots per 2^UNIT_SHIFT bytes of it. */
size_t fs_budget_table_slots(unsigned unit_shift, unsigned per_unit, size_t fewest, size_t most);
const char *fs_budget_source(void);            /* where the cap came from */
size_t fs_budget_pages(void);                  /* prefetch footprint allowed, in pages */
size_t fs_budget_call_pages(void);             /* the most pages one prefetch may name */
bool fs_budget_full(void);                     /* prefetch footprint over budget: page out */
bool fs_budget_pressure(void);                 /* in use >= 3/4 of the limit, and too small */
bool fs_budget_much_larger(void);             /* address space > 9/8 of the limit */
bool fs_budget_far_over(void);                /* the same, read now (false if unknown) */
bool fs_budget_short(void);                   /* ... or refaults lately (the gate) */
const char *fs_budget_stat_path(void);         /* the limiting cgroup's memory.stat, or "" */
bool fs_budget_limited(void);                  /* a cgroup limit or FORESIGHT_MEM in force */
bool fs_budget_cgroup_pressure(void);          /* its usage >= 3/4 of its limit */
void fs_memcg_keeper_ensure_started(void);     /* memcg.c: its statistics kept fresh */
void fs_memcg_after_fork_child(void);

/* deferred.c: auto releases skipped for lack of pressure; their marks go when it comes. */
void fs_deferred_add(uintptr_t page, size_t npages);
size_t fs_deferred_flush(void);                /* clear the remembered marks; returns pages */
bool fs_deferred_pending(void);
void fs_deferred_reset(void);                  /* after fork */

/* reuse.c: whether a site's releases page out pages the program still needs. */
#define FS_REUSE_BLOCKS 33 /* 16-page blocks a release piece of up to 512 pages touches */
void fs_reuse_advance(size_t npages); /* the clock: pages asked for by prefetches */
/* Before a release of [page, page+npages) (FORESIGHT_RELEASE=adaptive): pages an earlier
 * pageout logged and mapped again since count against its site.  MAPPED gets which
 * pages are mapped now, 16 bits per block from page's; false when unknown. */
bool fs_reuse_check(uintptr_t page, size_t npages, uint16_t mapped[FS_REUSE_BLOCKS]);
/* After a pageout of [page, page+npages): log the pages it targeted (BEFORE[i] == 1; a
 * PROBE's == 2) and took out of the page table (mapped in MAPPED_BEFORE, from
 * fs_reuse_check); a probe's pages count as back only when mapped within half the
 * window. */
void fs_reuse_log(struct foresight_site *site, uintptr_t page, size_t npages,
                  const unsigned char *before, const uint16_t mapped_before[FS_REUSE_BLOCKS],
                  bool probe);
bool fs_reuse_probed(uintptr_t page); /* its block (16 pages) is one a probe pages out */
uint64_t fs_reuse_probed_pages(void);  /* pages the probes paged out so far */
bool fs_reuse_trusted(const struct foresight_site *site); /* page its releases out */
bool fs_reuse_probing(void);                   /* releases deactivate and probe (issue.c) */
bool fs_reuse_skip(const struct foresight_site *site); /* leave its releases out */
void fs_reuse_init(void);                                 /* at start-up: the pagemap open */
void fs_reuse_reset(void);                                /* after fork */

/* mapping.c: which kind of memory holds a page (/proc/self/maps, cached). */
enum fs_mem_kind fs_mapping_of(uintptr_t page, uintptr_t *lo, uintptr_t *hi);
enum fs_mem_kind fs_mapping_kind(uintptr_t page);
/* The page is the file's own (a file mapping, shared or read-only): the page cache's. */
bool fs_mapping_page_cache(uintptr_t page);
/* The device of the file mapped at PAGE; false for other memory. */
bool fs_mapping_device(uintptr_t page, unsigned long *major, unsigned long *minor);
/* The file a file mapping's PAGE belongs to (device, inode), PAGE's offset in it, and
 * the end of the mapping (a page number), from /proc/self/maps read now (not cached);
 * false for anything but a file mapping. */
bool fs_mapping_file(uintptr_t page, unsigned long dev[2], unsigned long *inode,
                     uint64_t *offset, uintptr_t *hi);
void fs_mapping_forget(void); /* a hint found memory unmapped: the cache may be stale */
/* Cut [*page, *page + *npages) to the mapped memory in it: from its first mapped page to
 * the first hole after that.  False when none of it is mapped (or /proc is unreadable). */
bool fs_mapping_clamp(uintptr_t *page, size_t *npages);
void fs_mapping_reset(void);  /* after fork */

/* issue.c: carry out one prefetch or release request (a worker, or the calling thread). */
void fs_issue(const struct fs_request *r);
/* Whether the memory budget takes NPAGES more from SITE; when over, the marks are
 * reconciled first, unless that was done less than reconcile_gap_ns ago. */
bool fs_budget_admits(struct foresight_site *site, size_t npages, uint64_t reconcile_gap_ns);

/* workers.c: threads draining the queue. */
extern struct fs_queue *fs_queue_global;
void fs_workers_ensure_started(void);
/* Start a detached runtime thread named `name` (64 KiB stack, 8 MiB if the program's TLS needs it) with every signal
 * blocked: the program's handlers run on its own threads.  False if it could not. */
bool fs_thread_start(void *(*fn)(void *), void *arg, const char *name);
/* The same on STACK (SIZE bytes, the caller's; NULL: one of SIZE bytes from pthread), its
 * id in *ID when ID is not NULL. */
bool fs_thread_start_on(void *(*fn)(void *), void *arg, const char *name, void *stack,
                        size_t size, pthread_t *id);
void fs_workers_after_fork_child(void);
/* The library's threads sleep until the program's first hint reaches the library:
 * fs_runtime_wake says it has (async-signal-safe); a thread's loop begins with
 * fs_thread_await_hints (false: end, the threads retire), which also locks its stack
 * under a limit. */
void fs_runtime_wake(void);
extern bool fs_started; /* api.c: a unit with hints started the runtime */
bool fs_runtime_awake(void);
bool fs_thread_await_hints(void);
/* Under a memory limit, where locking takes nothing from the program's allowance: the
 * calling library thread's stack and thread data recorded, and locked in memory with the
 * library's resident code and data once the program is far over its limit, for good (a
 * sleeping thread's swap-in on waking was where the OOM killer struck); otherwise nothing.
 * fs_thread_lock_if_far_over: the same look for every recorded thread (the keeper's). */
void fs_thread_lock_stack(void);
void fs_thread_lock_if_far_over(void);
void fs_thread_unhold(void); /* the calling thread's record given back as it ends */

extern __thread bool fs_starting_library_thread; /* inside fs_thread_start_on's create */

/* pin.c: the process on one CPU while hints page (FORESIGHT_PIN). */
/* Code a sanitizer's start-up may run before its shadow memory exists: uninstrumented. */
#define FS_EARLY __attribute__((no_sanitize("address", "undefined", "thread")))
/* The definition (libc's) behind an interposed function NAME, kept in *SLOT once found
 * (interpose.c); fs_next_all looks up N of them at once. */
void *fs_next_fn(void **slot, const char *name);
/* The library's own raw system calls go past the interposed syscall() (interpose.c):
 * its hooks are for the program's. */
long fs_syscall(long number, ...);
#define syscall(...) fs_syscall(__VA_ARGS__)
void fs_guard_after_syscall(long number, const long *a, long rc); /* thread_guard.c */
void fs_pin_before_syscall(long number, const long *a);           /* pin.c */
void fs_pin_after_syscall(long number, const long *a, long rc);   /* pin.c */
void fs_next_all(void **slots, const char *const *names, unsigned n);

void fs_pin_init(void);      /* at start: the process's mask, whether pinning may happen */
void fs_pin_gate(bool open); /* each fresh reading of the gate, on the program's thread */
void fs_pin_tick(void);      /* every few ms from the library's memcg keeper thread */
void fs_pin_indirect(void);  /* a nest with indirect references runs hinted */
void fs_pin_paging(void);    /* the worker is about to page memory out (MADV_PAGEOUT) */
void fs_pin_give_back(void); /* every thread its mask back now (a prefetch thread starts) */
bool fs_pinned(void);
bool fs_pin_enabled(void);   /* pinning may happen in this process (fs_pin_init) */
extern unsigned long fs_global_pins; /* times the process was pinned */
extern const char *fs_pin_ended;     /* why pinning ended for good (NULL: it has not) */

/* workers.c: set on every thread the library starts (fs_thread_start_on). */
extern __thread bool fs_on_library_thread __attribute__((tls_model("initial-exec")));
bool fs_may_lock(void); /* locking takes nothing from the program's RLIMIT_MEMLOCK */

/* main_exit.c: the process ends with the program's last thread, not the library's. */
void fs_library_thread_begins(void); /* on a library thread, once it runs */
void fs_library_thread_ends(void);   /* on it, before it returns */
unsigned fs_library_threads_running(void); /* counted as above */
void fs_main_exit_record(void);         /* at start-up, on the main thread */
void fs_main_exit_thread_started(void); /* a library thread started: the watcher too */
void fs_main_exit_raw(void);            /* syscall(SYS_exit) is being made (interpose.c) */
void fs_main_exit_wake(void);           /* the watcher looks again (fs_threads_retire) */
bool fs_main_exit_main_ended(void);     /* the main thread has ended */
void fs_main_exit_restartable(void);    /* a watcher not running may be started again */

/* workers.c: the library's threads ended for a call the kernel refuses a multithreaded
 * process (alone.c), and allowed to start again after it. */
extern int fs_retiring;
bool fs_threads_retire(const char *why);
bool fs_library_threads_exist(void); /* made (starting) or running */
void fs_threads_may_restart(void);
void fs_memcg_restartable(void); /* memcg.c: the keeper starts again with a hint */

/* trace.c: FORESIGHT_TRACE event trace (faults, prefetches, releases). */
extern bool fs_trace_active;
void fs_trace_start(void);                     /* at start-up: open the file, count faults */
void fs_trace_finish(void);                    /* at exit: drain, L line, rename */
void fs_trace_exclude_self(void);              /* a runtime thread: its faults are not traced */
void fs_trace_prefetch(uintptr_t page, size_t npages, size_t resident_before,
                       const struct foresight_site *site);
void fs_trace_release(uintptr_t page, size_t npages, const struct foresight_site *site,
                      bool pageout);
static inline bool fs_tracing(void)
{
    return __atomic_load_n(&fs_trace_active, __ATOMIC_RELAXED);
}

/* stats.c: per-site registry and reports. */
void fs_site_register(struct foresight_site *site);
static inline void fs_count(struct foresight_site *site, enum fs_stat s, unsigned long n)
{
    __atomic_fetch_add(&site->fs_stat[s], n, __ATOMIC_RELAXED);
}
unsigned long fs_site_filtered_total(const struct foresight_site *site);
/* A site's counters with the filtered and quieted calls not yet folded in. */
void fs_site_counts(const struct foresight_site *s, unsigned long out[FS_NSTAT]);
void fs_stats_report(void);
extern unsigned long fs_global_reconcile_cleared;  /* marks cleared by reconciliation */
extern unsigned long fs_global_pageouts;           /* releases done with MADV_PAGEOUT */
extern unsigned long fs_global_memcg_flushes;      /* reads of memory.stat (memcg.c) */
extern unsigned long fs_global_releases_idle;      /* auto releases skipped: no pressure */
extern unsigned long fs_global_releases_early;     /* skipped: a small overflow, site early */
extern unsigned long fs_global_random_pages;       /* pages advised MADV_RANDOM (random.c) */
extern unsigned long fs_global_random_readaround;  /* runs of sites left to read-around */
extern unsigned long fs_global_releases_page_cache; /* releases left to the kernel's reclaim */
extern unsigned long fs_global_random_fits;   /* runs of sites whose targets fit: not advised */

/* remote.c: prefetches of a file an I/O node serves go to the node as NBD_CMD_CACHE. */
void fs_remote_init(void);
bool fs_remote_covers(uintptr_t page);                 /* PAGE is of the served file */
/* Of the NPAGES from PAGE, how many (from PAGE on, to the end of its mapping) are of the
 * served file and were sent to the node or dropped; 0 when PAGE is not of it. */
size_t fs_remote_prefetch(uintptr_t page, size_t npages);
extern __thread bool fs_in_worker;                     /* set in the worker threads */
extern unsigned long fs_global_remote_requests, fs_global_remote_bytes, fs_global_remote_failed,
    fs_global_remote_dropped;

/* random.c: MADV_RANDOM over the range an indirect site's targets span in a file mapping. */
/* A prefetch target of SITE; true when the kernel's read-around serves the site's targets
 * in this run of its nest, and the prefetch is not to be issued. */
bool fs_random_note(struct foresight_site *site, uintptr_t page);
void fs_random_reset(void); /* after fork */
bool fs_random_running(void); /* an indirect site is between begin and end (a nest runs) */
/* The library's MADV_RANDOM over the LEN bytes at ADDR taken back (the program's mremap). */
void fs_random_withdraw(uintptr_t addr, size_t len);

/* pt_*.c: the prefetch thread (`foresight cc --prefetch-thread`; foresight.h).  Everything
 * below but the clock, the wake and the counters belongs to the prefetch thread alone. */
#define FS_PT_PENDING 64                    /* predictions held before a flush (pt_queue.c) */
#define FS_PT_QUEUE_MAX (FORESIGHT_PT_RING - 64) /* the most calls it may run ahead */
extern struct foresight_pt_clock fs_pt_clock; /* the clock foresight__pt_start returns */
/* pt_thread.c */
extern __thread bool fs_pt_self;            /* set on the prefetch thread */
/* Ends the prefetch thread from anywhere in it: REASON (NULL: a normal end, the pending
 * predictions then issued) is what the statistics show. */
_Noreturn void fs_pt_stop(const char *reason, int err);
uint64_t fs_pt_computation_id(void);        /* clock.id, read with acquire */
/* Ends the prefetch thread (stop reason WHY) and gives back its memory, for a program about
 * to need what it holds (a lower RLIMIT_AS, mlockall): true when it is gone and its
 * memory unmapped (false: none, or it would not end within seconds). */
bool fs_pt_retire(const char *why);
double fs_pt_cpu_seconds(void);             /* the thread's CPU time so far (0: none) */
bool fs_pt_ended(void);                     /* it has run its slice (and parked) */
void fs_pt_drain(void);                     /* FORESIGHT_PT_DRAIN: wait for it at exit */
/* Sleeps until the computation thread's call ID reaches WAKE (or TIMEOUT_NS pass, less
 * than a second): true if the thread slept (false: the clock was there already). */
bool fs_pt_sleep_until(uint64_t wake, long timeout_ns);
/* pt_sched.c: the thread's own call IDs, the window and the mispredict check. */
uint64_t fs_pt_call(unsigned site);         /* one covered call at SITE: its call ID */
bool fs_pt_wait_for_program(uint64_t id);   /* until the program made call ID (RAW) */
void fs_pt_predicted(uint64_t bytes);       /* the current call queued BYTES for prefetch */
/* After an I/O call of the thread: PROGRESS false when it failed or found the end of the
 * file; many of those in a row stop the thread (a loop spinning without the program). */
void fs_pt_outcome(bool progress);
void fs_pt_pace(void);                      /* after a call: sleep while the window is full */
void fs_pt_check_sites(void);               /* compare sites since the last check */
void fs_pt_sched_reset(void);               /* a new thread: call ID 0 */
/* Eq. (1)'s terms: C, the program's time per covered call, and (K + 1) * T, the time a
 * request issued now takes with K before it on the device, both in ns (0: not known). */
void fs_pt_estimates(uint64_t *c_ns, uint64_t *kt_ns);
void fs_pt_sched_device(unsigned major, unsigned minor); /* the files' device (the first) */
/* pt_queue.c: predictions waiting to be issued. */
void fs_pt_enqueue(int fd, uint64_t off, uint64_t len, uint64_t call);
void fs_pt_flush(int fd);                   /* issue what is pending for FD (-1: all) */
/* Issue what is due: all of it under the window, what Eq. (1) and (2) allow under eq1. */
void fs_pt_schedule(void);
void fs_pt_drop_pending(void);              /* forget what is pending (mispredicted) */
/* On the prefetch thread, its descriptor table its own and before its seccomp filter
 * (which refuses io_uring_setup): the ring of FORESIGHT_PT_ISSUE=uring. */
void fs_pt_issue_open(void);
bool fs_pt_ring_in_use(void); /* a ring was made (main_exit.c counts its kernel workers) */
extern const char *fs_global_pt_issue;      /* how requests go to the kernel (stats) */
extern unsigned long fs_global_pt_issue_failed; /* requests the kernel refused */
/* pt_chan.c: the channel of sync points' values (the program sends, the thread receives). */
bool fs_pt_chan_init(void);                 /* open (mapped once): false without memory */
void fs_pt_chan_close(void);                /* the thread ended: sends are no-ops */
void fs_pt_chan_release(void);              /* closed, and its ring unmapped */
/* pt_arena.c: the thread's stack, signal stack and arena, between guards. */
bool fs_pt_memory_init(void);               /* once; false when even unguarded fails */
void fs_pt_memory_release(void);            /* the thread is gone: all of it unmapped */
size_t fs_pt_stack_size(uint64_t soft_limit); /* the stack for an RLIMIT_STACK soft limit */
size_t fs_pt_address_space(void);           /* its reservation, left out of gate.c's count */
void *fs_pt_stack(size_t *size);
void *fs_pt_altstack(size_t *size);
enum fs_pt_where { FS_PT_OUTSIDE, FS_PT_GUARD, FS_PT_ARENA, FS_PT_STACK, FS_PT_ALTSTACK };
enum fs_pt_where fs_pt_memory_where(const void *p); /* GUARD: reserved, not accessible */
/* pt_files.c */
#define FS_PT_FILES 1024                    /* handles are descriptors below this */
#define FS_PT_FIRST_HANDLE 3                /* 0, 1 and 2 are never the thread's */
/* open flags with which the program writes the file it opens */
#define FS_PT_WRITE_FLAGS (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND)
bool fs_pt_glob(const char *pattern, const char *s); /* fnmatch(3) without flags */
/* For pt_stdio.c, whose streams sit on these handles: which open handle H is (0: none);
 * its shadow offset if it is still that open (NULL: closed or reused); and what a
 * predicted read of N bytes at OFF returns (the bytes the file has there, at most N),
 * queued for prefetching with call ID CALL when the file is prefetchable. */
unsigned fs_pt_serial(int h);
uint64_t *fs_pt_shadow(int h, unsigned serial);
uint64_t fs_pt_predict(int h, uint64_t off, uint64_t n, uint64_t call);
/* The bytes H's file has at OFF (its size looked at again when OFF is at or past it). */
uint64_t fs_pt_avail(int h, uint64_t off);
/* Whether the program writes H's file (opened so, by this handle or another of the same
 * file, or seen changing): sticky.  fs_pt_lead_ok first looks at the file again (its
 * mtime and size, as at the last lead read) and is false, errno EIO, when it is written. */
bool fs_pt_written(int h);
bool fs_pt_lead_ok(int h);
/* Whether call ID may lead-read H now, after waiting for the program's call where the
 * program writes the file (false, errno EIO: that call came from another site). */
bool fs_pt_lead_now(int h, uint64_t id);
/* Anchored runs (foresight_pt_anchor, pt_thread.c): the program thread that anchored the
 * thread's runs (its descriptor table is the program's), and the thread's handles of the
 * last run closed (pt_files.c). */
pid_t fs_pt_anchor_tid(void);
void fs_pt_arena_mark(void);    /* pt_arena.c: the arena after the first init */
void fs_pt_arena_release(void); /* ... back to it when a run ends */
void fs_pt_stdio_reset(void);   /* pt_stdio.c: no streams (a run's end) */
bool fs_pt_is_anchored(void);
extern int fs_pt_abandon; /* set: the run goes no further than its next covered call */
void fs_pt_files_reset(void);
/* The run goes no further: the thread waits for the next anchor (an anchored thread) or
 * stops (pt_thread.c), with REASON. */
_Noreturn void fs_pt_give_up(const char *reason);
/* A new run predicts the program's calls after BASE (pt_sched.c). */
void fs_pt_sched_rebase(uint64_t base);
/* Counters (stats.c prints them). */
extern unsigned long fs_global_pt_runs, fs_global_pt_gave_up;
extern unsigned long fs_global_pt_started, fs_global_pt_calls, fs_global_pt_lead_reads,
    fs_global_pt_lead_bytes, fs_global_pt_expired, fs_global_pt_issued,
    fs_global_pt_issued_bytes, fs_global_pt_sleeps, fs_global_pt_mispredicts,
    fs_global_pt_left_to_readahead, fs_global_pt_unguarded,
    fs_global_pt_readahead_off, fs_global_pt_readahead_on, fs_global_pt_received,
    fs_global_pt_sync_waits, fs_global_pt_cached, fs_global_pt_cached_bytes;
extern const char *fs_global_pt_stopped;    /* why the thread stopped early, or NULL */
extern int fs_global_pt_stopped_errno;      /* the errno that went with it, or 0 */

#endif /* FORESIGHT_INTERNAL_H */
