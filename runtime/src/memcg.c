/*
 * memcg.c — the memory cgroup's statistics kept fresh for the kernel's reclaim.
 *
 * Under a memory cgroup limit, the kernel's reclaim decides from the cgroup's
 * statistics whether to move anonymous pages from the active to the inactive list
 * (inactive_is_low, and the refault counts in prepare_scan_control).  Those counters
 * are per-CPU and flushed lazily: by a periodic worker every 2 seconds, by reclaim only
 * when the periodic flush is late, or when someone reads memory.stat.  An out-of-core
 * program can turn its whole cgroup from inactive to active in less than that (pages
 * read back soon after being swapped out are activated as refaults).  Reclaim then
 * reads counters that still show inactive pages, deactivates none, finds nothing on the
 * empty inactive list, and after its retries the cgroup's OOM killer kills the program
 * with swap free: the OOM report shows the cgroup at its limit, every page active and
 * swap-cached, none inactive.  A hint must never be the reason a program dies, and
 * releases and prefetches make such turnover likelier.
 *
 * So while the limiting cgroup's usage is at 3/4 of its limit, a thread reads its
 * memory.stat every 10 ms, which makes the kernel flush the counters (a read costs
 * about 15 us: 0.15% of a CPU).  Measured (docs/decisions.md, 2026-11-27): a hinted
 * program killed in 4 of 6 runs without, 0 of 16 with the file read every 20-250 ms by
 * another process; reading memory.usage_in_bytes instead (no flush) left 5 of 8
 * killed.  A small cgroup turns over faster: md's 48 MiB under a 16 MiB cap, hinted,
 * was killed in 6 of 12 runs with reads every 100 ms, 0 of 20 every 10 ms.  The thread
 * is made with the runtime (before main, as the workers) and sleeps until the program's
 * first hint reaches the library (workers.c); in a forked child it is made by that
 * hint.  It also makes pin.c's looks, once a second, and
 * for those runs without a cgroup limit too, when the process may be pinned.
 */
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define PERIOD_NS 10000000L /* 10 ms */

static int started;
static pthread_mutex_t start_mu = PTHREAD_MUTEX_INITIALIZER;

static void *keeper_main(void *arg)
{
    (void)arg;
    if (!fs_thread_await_hints())
        return NULL; /* (the program's first hint: workers.c) */
    fs_trace_exclude_self(); /* its own faults are not the program's */
    const char *path = fs_budget_stat_path();
    char buf[4096];
    unsigned ticks = 0;
    const struct timespec period = {0, PERIOD_NS};
    for (;;) {
        nanosleep(&period, NULL);
        if (__atomic_load_n(&fs_retiring, __ATOMIC_ACQUIRE))
            return NULL; /* (workers.c: fs_threads_retire) */
        fs_pin_tick(); /* (a look once a second: pin.c) */
        /* A program grown far past its limit: the library's threads locked, before the
         * cgroup fills (workers.c). */
        if (++ticks % 10 == 0)
            fs_thread_lock_if_far_over();
        if (path[0] == 0 || !fs_budget_cgroup_pressure())
            continue;
        /* Its start is enough: the kernel flushes the counters before showing any. Kept
         * open from start-up (ownfd.c). */
        if (fs_kept_pread(FS_KEPT_CG_STAT, buf, sizeof buf, 0) > 0)
            __atomic_add_fetch(&fs_global_memcg_flushes, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

void fs_memcg_keeper_ensure_started(void)
{
    if (__atomic_load_n(&started, __ATOMIC_ACQUIRE) ||
        (fs_budget_stat_path()[0] == 0 && !fs_pin_enabled()))
        return;
    pthread_mutex_lock(&start_mu);
    if (!started) {
        fs_thread_start(keeper_main, NULL, "foresight-memcg"); /* tried once, like workers */
        __atomic_store_n(&started, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&start_mu);
}

void fs_memcg_restartable(void)
{
    pthread_mutex_lock(&start_mu);
    __atomic_store_n(&started, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&start_mu);
}

void fs_memcg_after_fork_child(void)
{
    pthread_mutex_init(&start_mu, NULL);
    started = 0;
}
