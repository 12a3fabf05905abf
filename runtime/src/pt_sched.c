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
 * run is given up, its pending predictions dropped (fs_pt_give_up: a thread started at
 * main stops, an anchored one waits for the next anchor).  A match resets the count.
 *
 * Spinning: the slice drops what the program does between its I/O calls (a sleep
 * between tries to open a file not there yet, an ungetc its getc loop relies on), so a
 * loop the program runs a few times can run on the thread for ever, one core busy.
 * SPIN_STOP I/O calls in a row that failed or found the end of the file stop it.
 */
#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

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

/* Eq. (1)'s estimates (pt_queue.c, FORESIGHT_PT_SCHED=eq1): C from the program's call
 * IDs over time, T and K from the files' device's own counters in sysfs (its stat: reads
 * completed and the milliseconds they took; its inflight: reads on the device now), each
 * looked at once per SAMPLE_NS at most. */
#define SAMPLE_NS 2000000u
#define DEVICE_NS 10000000u
static uint64_t c_ns, t_ns, k_now;
static uint64_t c_at_ns, c_at_id, dev_at_ns, dev_reads, dev_ticks;
static int dev_stat = -1, dev_inflight = -1;
static bool dev_known;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The first N unsigned numbers of the file FD (from its start) into V; how many. */
static unsigned numbers(int fd, uint64_t *v, unsigned n)
{
    char buf[256];
    const long got = syscall(SYS_pread64, fd, buf, sizeof buf - 1, 0);
    if (got <= 0)
        return 0;
    buf[got] = 0;
    unsigned k = 0;
    for (const char *c = buf; *c != 0 && k < n;) {
        while (*c == ' ' || *c == '\t' || *c == '\n')
            c++;
        if (*c < '0' || *c > '9')
            break;
        uint64_t x = 0;
        for (; *c >= '0' && *c <= '9'; c++)
            x = x * 10 + (uint64_t)(*c - '0');
        v[k++] = x;
    }
    return k;
}

void fs_pt_sched_device(unsigned major, unsigned minor)
{
    if (dev_known || !fs_cfg.pt_eq1)
        return;
    dev_known = true;
    char path[64];
    snprintf(path, sizeof path, "/sys/dev/block/%u:%u/stat", major, minor);
    dev_stat = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    snprintf(path, sizeof path, "/sys/dev/block/%u:%u/inflight", major, minor);
    dev_inflight = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
}

void fs_pt_estimates(uint64_t *c, uint64_t *kt)
{
    const uint64_t t = now_ns(), id = fs_pt_computation_id();
    if (c_at_ns == 0 || id < c_at_id) {
        c_at_ns = t;
        c_at_id = id;
    } else if (t - c_at_ns >= SAMPLE_NS && id > c_at_id) {
        const uint64_t sample = (t - c_at_ns) / (id - c_at_id);
        c_ns = c_ns == 0 ? sample : (3 * c_ns + sample) / 4;
        c_at_ns = t;
        c_at_id = id;
    }
    if (dev_stat >= 0 && t - dev_at_ns >= DEVICE_NS) {
        uint64_t v[4], f[1];
        if (numbers(dev_stat, v, 4) == 4) {
            /* stat: reads completed, merged, sectors, milliseconds reading */
            if (dev_at_ns != 0 && v[0] > dev_reads) {
                const uint64_t sample = (v[3] - dev_ticks) * 1000000u / (v[0] - dev_reads);
                t_ns = t_ns == 0 ? sample : (3 * t_ns + sample) / 4;
            }
            dev_reads = v[0];
            dev_ticks = v[3];
        }
        if (dev_inflight >= 0 && numbers(dev_inflight, f, 1) == 1)
            k_now = f[0];
        dev_at_ns = t;
    }
    *c = c_ns;
    *kt = (k_now + 1) * t_ns;
}

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

void fs_pt_sched_rebase(uint64_t base)
{
    t_id = base;
    checked = base;
    missed = 0;
    fruitless = 0;
    cum_bytes[base % RING] = 0;
    __atomic_store_n(&fs_pt_clock.lead, base, __ATOMIC_RELEASE);
}

uint64_t fs_pt_call(unsigned site)
{
    if (__atomic_load_n(&fs_pt_abandon, __ATOMIC_ACQUIRE))
        fs_pt_give_up("abandoned: the program anchored a new run while this one lagged");
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

/* Read after write: the thread's call ID (its lead read of a file the program writes)
 * waits until the program has made its own call of that ID, then says whether that call
 * came from the same site (false: the thread went another way; true where the program is
 * so far ahead that the ring no longer says).  The program then has made every write it makes
 * before that call; what the thread reads is what the program's call reads unless the
 * program is faster still (it reads, and writes again, before the thread's read) or reads
 * from its stdio buffer: a misprediction then, never the program's data.  What the thread
 * has queued goes to the disk first.  The wait ends with the process if the program never
 * gets there. */
bool fs_pt_wait_for_program(uint64_t id)
{
    if (fs_pt_computation_id() < id) {
        fs_pt_flush(-1);
        __atomic_fetch_add(&fs_global_pt_sync_waits, 1, __ATOMIC_RELAXED);
        while (fs_pt_computation_id() < id)
            fs_pt_sleep_until(id, 10000000);
    }
    const uint32_t theirs = __atomic_load_n(&fs_pt_clock.sites[id % RING], __ATOMIC_RELAXED);
    return fs_pt_computation_id() - id >= RING || theirs == own_sites[id % RING];
}

void fs_pt_outcome(bool progress)
{
    if (progress)
        fruitless = 0;
    else if (++fruitless >= SPIN_STOP)
        fs_pt_give_up("spinning (1024 I/O calls in a row failed or found the end of the "
                      "file)");
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
            fs_pt_give_up("mispredicted");
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
        fs_pt_schedule();
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
        /* Under eq1 what becomes due is issued as it does: a millisecond's sleep at most. */
        fs_pt_sleep_until(c + (half < 1 ? 1 : half > 64 && !idle ? 64 : half),
                          fs_cfg.pt_eq1 ? 1000000 : 10000000);
        fs_pt_check_sites();
    }
}
