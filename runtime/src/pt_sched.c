/*
 * pt_sched.c — when the prefetch thread's predictions go to the disk and how far it runs
 * ahead: the paper's kernel part (Section 3's prefetch library and its scheduler), here
 * on the prefetch thread itself, which has a core of its own.
 *
 * Call IDs: the thread's k-th covered call (a read or pread, predicted or lead) has ID k,
 * as the computation thread's k-th tick does.  The window: calls ahead = the thread's ID
 * minus the computation thread's; bytes ahead = the predicted bytes of those calls (a
 * ring of cumulative bytes per call ID).  When either reaches its limit
 * (FORESIGHT_PT_QUEUE, FORESIGHT_PT_AHEAD) the thread issues what is pending and sleeps
 * until the computation thread has made half the calls ahead (at most 64, unless those
 * calls were all left to the kernel's readahead) more: the "sleeps when full,
 * wakes at 64 free".  A thread that falls behind simply finds
 * its predictions expired (pt_queue.c).
 *
 * Mispredictions: the computation thread records the site of each call in the clock's
 * ring; after each flush and each wake the thread compares those with its own for the
 * calls both have made since the last check.  Eight differing in a row mean the slice
 * went another way than the program (a branch on data the slice does not have): the
 * thread stops, its pending predictions dropped.  A match resets the count.
 *
 * Spinning: the slice drops what the program does between its I/O calls (a sleep
 * between tries to open a file not there yet, an ungetc its getc loop relies on), so a
 * loop the program runs a few times can run on the thread for ever, one core busy.
 * SPIN_STOP I/O calls in a row that failed or found the end of the file stop it.
 */
#include "internal.h"

#define RING FORESIGHT_PT_RING
#define MISPREDICT_STOP 8
#define SPIN_STOP 1024

static uint64_t t_id;             /* covered calls the prefetch thread has made */
static uint32_t own_sites[RING];  /* the site of its call k at [k % RING] */
static uint64_t cum_bytes[RING];  /* predicted bytes queued by its calls 1..k, at [k % RING] */
static uint64_t checked;          /* call IDs compared up to here */
static unsigned missed;           /* consecutive mispredictions */
static unsigned fruitless;        /* consecutive I/O calls that failed or found the end */
static unsigned long issued_at_sleep, left_at_sleep; /* the counters at the last sleep */

void fs_pt_sched_reset(void)
{
    t_id = 0;
    checked = 0;
    missed = 0;
    fruitless = 0;
    issued_at_sleep = __atomic_load_n(&fs_global_pt_issued_bytes, __ATOMIC_RELAXED);
    left_at_sleep = __atomic_load_n(&fs_global_pt_left_to_readahead, __ATOMIC_RELAXED);
    cum_bytes[0] = 0;
}

uint64_t fs_pt_call(unsigned site)
{
    uint64_t prev = cum_bytes[t_id % RING];
    /* The previous call is done: its queued flag is final. */
    __atomic_store_n(&fs_pt_clock.lead, t_id, __ATOMIC_RELEASE);
    t_id++;
    own_sites[t_id % RING] = (uint32_t)site;
    __atomic_store_n(&fs_pt_clock.queued[t_id % RING], 0, __ATOMIC_RELAXED);
    cum_bytes[t_id % RING] = prev;
    __atomic_fetch_add(&fs_global_pt_calls, 1, __ATOMIC_RELAXED);
    return t_id;
}

void fs_pt_outcome(bool progress)
{
    if (progress)
        fruitless = 0;
    else if (++fruitless >= SPIN_STOP)
        fs_pt_stop("spinning (1024 I/O calls in a row failed or found the end of the file)",
                   0);
}

void fs_pt_predicted(uint64_t bytes)
{
    cum_bytes[t_id % RING] += bytes;
}

void fs_pt_check_sites(void)
{
    const uint64_t c = fs_pt_computation_id();
    const uint64_t hi = c < t_id ? c : t_id;
    uint64_t lo = checked + 1;
    /* Only the last RING calls of either ring are there to compare. */
    if (hi >= RING && lo < hi - RING + 1)
        lo = hi - RING + 1;
    if (t_id >= RING && lo < t_id - RING + 1)
        lo = t_id - RING + 1;
    if (lo > hi)
        return;
    uint32_t theirs[RING];
    for (uint64_t id = lo; id <= hi; id++)
        theirs[id - lo] = __atomic_load_n(&fs_pt_clock.sites[id % RING], __ATOMIC_RELAXED);
    /* The computation thread kept going while we read: slots it has reused since are
     * not the calls we meant, so those are not compared. */
    const uint64_t c2 = fs_pt_computation_id();
    const uint64_t first = c2 >= RING && lo < c2 - RING + 1 ? c2 - RING + 1 : lo;
    for (uint64_t id = first; id <= hi; id++) {
        if (theirs[id - lo] == own_sites[id % RING]) {
            missed = 0;
            continue;
        }
        __atomic_fetch_add(&fs_global_pt_mispredicts, 1, __ATOMIC_RELAXED);
        if (++missed >= MISPREDICT_STOP) {
            fs_pt_drop_pending();
            fs_pt_stop("mispredicted", 0);
        }
    }
    checked = hi;
}

void fs_pt_pace(void)
{
    __atomic_store_n(&fs_pt_clock.lead, t_id, __ATOMIC_RELEASE);
    for (;;) {
        const uint64_t c = fs_pt_computation_id();
        if (c >= t_id)
            return; /* the computation thread is there or ahead */
        const uint64_t calls = t_id - c;
        /* calls < RING: the thread never gets further ahead than FS_PT_QUEUE_MAX + 1. */
        const uint64_t bytes =
            calls < RING ? cum_bytes[t_id % RING] - cum_bytes[c % RING] : UINT64_MAX;
        if (calls < fs_cfg.pt_queue && bytes < fs_cfg.pt_ahead)
            return;
        fs_pt_flush(-1);
        /* Wakes at 64 free calls to keep requests going to the disk, but at half the
         * window where since the last sleep it issued nothing and left calls to the
         * kernel's readahead: a forward run has nothing to keep going, and each
         * wake is a futex wake the computation thread makes, a wakeup on another CPU
         * (10-25 us of its time in this VM; Forward 1 of `bench aasfp`, 4 KiB reads:
         * 5% of its time at a wake per 64 reads). */
        const uint64_t issued = __atomic_load_n(&fs_global_pt_issued_bytes, __ATOMIC_RELAXED);
        const uint64_t left = __atomic_load_n(&fs_global_pt_left_to_readahead, __ATOMIC_RELAXED);
        const bool idle = issued == issued_at_sleep && left != left_at_sleep;
        issued_at_sleep = issued;
        left_at_sleep = left;
        const uint64_t half = calls / 2;
        fs_pt_sleep_until(c + (half < 1 ? 1 : half > 64 && !idle ? 64 : half));
        fs_pt_check_sites();
    }
}
