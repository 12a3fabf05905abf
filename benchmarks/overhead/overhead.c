/*
 * overhead.c — what a prefetch hint costs when the residency filter drops it
 * (paper Section 2.4.1: the filter exists because most prefetches are
 * redundant).  Times, per call, on pages marked resident:
 *   loop      the bare loop (subtracted from the others)
 *   filtered  foresight_prefetch_at on a page the table marks resident
 *   madvise   madvise(MADV_WILLNEED) on the same resident page: the system call
 *             a filter-less runtime would make
 * Prints one JSON object.  Usage: overhead [ITERATIONS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "foresight.h"

#define PAGES 64

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Best of several repetitions: the least-disturbed measurement of a tight loop. */
#define BEST(result, reps, body)                                \
    do {                                                        \
        result = 1e30;                                          \
        for (int r_ = 0; r_ < (reps); r_++) {                   \
            double t0_ = now();                                 \
            body;                                               \
            double t_ = now() - t0_;                            \
            if (t_ < result)                                    \
                result = t_;                                    \
        }                                                       \
    } while (0)

int main(int argc, char **argv)
{
    long iters = argc > 1 ? atol(argv[1]) : 20000000;
    long sys_iters = iters / 100 > 1000 ? iters / 100 : 1000;
    if (iters <= 0) {
        fprintf(stderr, "overhead: ITERATIONS must be a positive number\n");
        return 2;
    }
    if (!foresight_active()) {
        fprintf(stderr, "overhead: the runtime is not active (FORESIGHT_DISABLE set?)\n");
        return 2;
    }
    char *buf = mmap(NULL, PAGES * 4096, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    for (int p = 0; p < PAGES; p++)
        buf[p * 4096] = 1;
    FORESIGHT_SITE(site, "buf[i]");
    foresight_prefetch_at(&site, buf, PAGES * 4096); /* marks them */
    usleep(100000);
    volatile char *sink = buf;
    double loop, filtered, sys;
    BEST(loop, 5, for (long i = 0; i < iters; i++) {
        const char *a = buf + (i & (PAGES - 1)) * 4096;
        __asm__ volatile("" : : "r"(a) : "memory");
    });
    BEST(filtered, 5, for (long i = 0; i < iters; i++) {
        const char *a = buf + (i & (PAGES - 1)) * 4096;
        foresight_prefetch_at(&site, a, 8);
        __asm__ volatile("" : : "r"(a) : "memory");
    });
    BEST(sys, 5, for (long i = 0; i < sys_iters; i++) {
        char *a = buf + (i & (PAGES - 1)) * 4096;
        madvise(a, 4096, MADV_WILLNEED);
    });
    (void)sink;
    double loop_ns = loop / (double)iters * 1e9;
    double filtered_ns = filtered / (double)iters * 1e9 - loop_ns;
    double madvise_ns = sys / (double)sys_iters * 1e9;
    printf("{\"iterations\": %ld, \"loop_ns\": %.3f, \"filtered_prefetch_ns\": %.3f, "
           "\"madvise_ns\": %.1f, \"filtered_over_madvise\": %.5f}\n",
           iters, loop_ns, filtered_ns, madvise_ns, filtered_ns / madvise_ns);
    return 0;
}
