/*
 * distance.c — the prefetch distance from latency and bandwidth measured at run time
 * (issue #3: "keep enough bytes in flight to cover latency x bandwidth").
 *
 * Compiled loops ask foresight_lookahead_bytes() at nest entry and divide it by their
 * bytes per iteration.  With FORESIGHT_LOOKAHEAD=measured the answer is
 *
 *     lookahead = latency x bandwidth,   clamped to [2 blocks, memory limit / 32]
 *
 * measured on the program's own prefetches, under the conditions it runs in (memory
 * cap, reclaim, other streams), not on an idle disk:
 *   - every SAMPLE_EVERY-th prefetch that has missing pages is issued with
 *     MADV_POPULATE_READ, which returns only when the data is in memory, and timed;
 *   - latency: from the hint (the request's enqueue time) to the data being in
 *     memory, so the queue wait a hint really sees is part of it;
 *   - bandwidth: bytes per second of the timed call itself, from samples of at least
 *     LARGE_PAGES pages (smaller ones measure mostly latency): what the storage
 *     delivers to one request now.  (The rate prefetches are issued at is no
 *     substitute: a stalled program issues slowly, which shrank the distance, which
 *     stalled it more — LU fell to 163 KiB and 11.5 s.)
 * Both are running averages (weight 1/8).  Until MIN_SAMPLES of each exist the
 * default is used: 4 MiB, or a thirty-second of the memory limit when that is less.
 * A size given in FORESIGHT_LOOKAHEAD is used as given.
 *
 * Why a share of the limit: pages being read are locked and pages just prefetched are
 * young, and neither can be reclaimed.  When a loop keeps too large a share of its
 * cgroup in flight, a charge can find nothing to reclaim and the v1 memory cgroup's OOM
 * killer ends the program.  NAS CG, 64 MiB of data under a 32 MiB cap with every release
 * paged out (`FORESIGHT_RELEASE=pageout foresight run --mem 32M --cold --readahead-kb 128
 * ./cg-P --mb 64 --iters 1`): killed in 10 of 20 runs with 4 MiB in flight, none of 8
 * with 3 MiB, none of 28 with 2 MiB, none of 8 with 1 MiB, none of 6 with 256 KiB.
 * Why a thirty-second, not the sixteenth it was: with the program and the worker on one
 * CPU (pin.c) the worker's paging work is what a run waits for, and data prefetched
 * further ahead only waits longer in memory, where it evicts what the program still
 * uses.  The eight NAS kernels at 192 MiB under 64 MiB were 0.80-1.01x the time with
 * 2 MiB ahead instead of 4 (docs/decisions.md, 2026-11-30); 1 MiB was slower again on
 * MG, SP, CG and IS.
 */
#include <time.h>

#include "internal.h"

#define SAMPLE_EVERY 16
#define LARGE_PAGES 16
#define MIN_SAMPLES 8

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static double latency_ns, bytes_per_ns;
static unsigned long lat_samples, bw_samples, due;
static size_t current; /* 0 until measured */

uint64_t fs_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool fs_distance_sample_due(void)
{
    if (!fs_cfg.lookahead_measured)
        return false;
    return __atomic_fetch_add(&due, 1, __ATOMIC_RELAXED) % SAMPLE_EVERY == 0;
}

/* The most bytes a loop keeps in flight unless told otherwise: a thirty-second of the
 * memory limit, and never less than two 64 KiB blocks. */
static size_t in_flight_cap(void)
{
    uint64_t cap = fs_budget_limit_bytes() / 32;
    return cap < 2 * 65536 ? 2 * 65536 : (size_t)cap;
}

static double average(double old, double sample, unsigned long n)
{
    return n == 0 ? sample : old + (sample - old) / 8.0;
}

static void update_locked(void)
{
    if (lat_samples < MIN_SAMPLES || bw_samples < MIN_SAMPLES)
        return;
    double want = latency_ns * bytes_per_ns;
    double lo = 2.0 * 65536, hi = (double)in_flight_cap();
    __atomic_store_n(&current, (size_t)(want < lo ? lo : want > hi ? hi : want), __ATOMIC_RELAXED);
}

void fs_distance_record(size_t npages, uint64_t t_enqueued, uint64_t t_start, uint64_t t_done)
{
    if (npages == 0 || t_enqueued == 0 || t_start < t_enqueued || t_done <= t_start)
        return;
    pthread_mutex_lock(&mu);
    latency_ns = average(latency_ns, (double)(t_done - t_enqueued), lat_samples++);
    if (npages >= LARGE_PAGES)
        bytes_per_ns = average(bytes_per_ns, (double)(npages * FS_PAGE) / (double)(t_done - t_start),
                               bw_samples++);
    update_locked();
    pthread_mutex_unlock(&mu);
}

size_t foresight__lookahead(void)
{
    size_t measured = __atomic_load_n(&current, __ATOMIC_RELAXED);
    if (measured)
        return measured;
    if (fs_cfg.lookahead_set)
        return fs_cfg.lookahead_bytes;
    size_t cap = in_flight_cap();
    return fs_cfg.lookahead_bytes < cap ? fs_cfg.lookahead_bytes : cap;
}

void fs_distance_report(double *lat_us, double *mb_per_s, unsigned long *samples, size_t *bytes)
{
    pthread_mutex_lock(&mu);
    *lat_us = latency_ns / 1000.0;
    *mb_per_s = bytes_per_ns * 1e9 / (1024.0 * 1024.0);
    *samples = lat_samples;
    pthread_mutex_unlock(&mu);
    *bytes = foresight__lookahead();
}

void fs_distance_reset(void)
{
    pthread_mutex_init(&mu, NULL);
    latency_ns = bytes_per_ns = 0;
    lat_samples = bw_samples = due = 0;
    current = 0;
}
