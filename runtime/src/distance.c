/*
 * distance.c — the prefetch distance from latency and bandwidth measured at run time
 * (issue #3: "keep enough bytes in flight to cover latency x bandwidth").
 *
 * Compiled loops ask foresight_lookahead_bytes() at nest entry and divide it by their
 * bytes per iteration.  With FORESIGHT_LOOKAHEAD=measured the answer is
 *
 *     lookahead = latency x bandwidth,   clamped to [2 blocks, budget / 8]
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
 * Both are running averages (weight 1/8).  Until MIN_SAMPLES of each exist, and
 * whenever FORESIGHT_LOOKAHEAD is a size, the configured bytes are used.
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

static double average(double old, double sample, unsigned long n)
{
    return n == 0 ? sample : old + (sample - old) / 8.0;
}

static void update_locked(void)
{
    if (lat_samples < MIN_SAMPLES || bw_samples < MIN_SAMPLES)
        return;
    double want = latency_ns * bytes_per_ns;
    double lo = 2.0 * 65536, hi = (double)fs_budget_pages() * FS_PAGE / 8.0;
    if (hi < lo)
        hi = lo;
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
    return measured ? measured : fs_cfg.lookahead_bytes;
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
