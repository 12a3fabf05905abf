/* check.h — minimal assertions and helpers for the runtime's test programs. */
#ifndef FORESIGHT_CHECK_H
#define FORESIGHT_CHECK_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static int check_failures;

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            check_failures++;                                                         \
        }                                                                             \
    } while (0)

#define CHECK_EQ(a, b)                                                                    \
    do {                                                                                  \
        long long _a = (long long)(a), _b = (long long)(b);                               \
        if (_a != _b) {                                                                   \
            fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %lld, %s == %lld\n", __FILE__, \
                    __LINE__, #a, _a, #b, _b);                                            \
            check_failures++;                                                             \
        }                                                                                 \
    } while (0)

/* Flags and counters another thread (the prefetch thread) sets: read with acquire, set
 * with release; a wait polls for up to 20 s. */
static inline unsigned long get(const unsigned long *counter)
{
    return __atomic_load_n(counter, __ATOMIC_ACQUIRE);
}

static inline int flag(const int *f)
{
    return __atomic_load_n(f, __ATOMIC_ACQUIRE);
}

static inline void publish(int *f, int v)
{
    __atomic_store_n(f, v, __ATOMIC_RELEASE);
}

static inline bool wait_flag(const int *f)
{
    for (int i = 0; i < 20000; i++) {
        if (flag(f))
            return true;
        usleep(1000);
    }
    return false;
}

/* Polls COUNTER until it reaches AT_LEAST. */
static inline bool wait_counter(const unsigned long *counter, unsigned long at_least)
{
    for (int i = 0; i < 20000; i++) {
        if (get(counter) >= at_least)
            return true;
        usleep(1000);
    }
    return false;
}

static inline int check_done(const char *name)
{
    if (check_failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, check_failures);
        return 1;
    }
    printf("%s: ok\n", name);
    return 0;
}

/* Fraction of [addr, addr+len) resident according to mincore. */
static inline double resident_fraction(const void *addr, size_t len)
{
    size_t pages = (len + 4095) / 4096;
    unsigned char *vec = malloc(pages);
    size_t res = 0;
    if (vec && mincore((void *)((uintptr_t)addr & ~(uintptr_t)4095), len, vec) == 0)
        for (size_t i = 0; i < pages; i++)
            res += vec[i] & 1;
    free(vec);
    return pages ? (double)res / (double)pages : 0;
}

/* Poll until at least FRAC of the range is resident (or, with below, at most FRAC). */
static inline int wait_fraction(const void *addr, size_t len, double frac, int below,
                                double seconds)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        double f = resident_fraction(addr, len);
        if (below ? f <= frac : f >= frac)
            return 1;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 > seconds)
            return 0;
        usleep(2000);
    }
}

/* A file of LEN bytes filled with a known pattern, evicted from the page cache. */
static inline int make_cold_file(const char *path, size_t len)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return -1;
    char buf[65536];
    for (size_t off = 0; off < len; off += sizeof buf) {
        for (size_t i = 0; i < sizeof buf; i += 8) {
            uint64_t v = (off + i) / 8;
            memcpy(buf + i, &v, 8);
        }
        if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
            return -1;
    }
    fsync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    return fd;
}

/* A cold file of LEN bytes (make_cold_file) at $TMPDIR/PID-NAME (the process's own: two
 * tests of one scenario, run at once by ctest -j, must not share it), its path written to
 * PATH, mapped shared and read-only with MADV_RANDOM, so that its residency comes from
 * hints and touches alone (no fault-time readahead); NULL on failure. */
static inline const char *map_cold_file(const char *name, size_t len, char path[4096], int *fd)
{
    snprintf(path, 4096, "%s/%ld-%s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (long)getpid(), name);
    *fd = make_cold_file(path, len);
    if (*fd < 0)
        return NULL;
    const char *m = mmap(NULL, len, PROT_READ, MAP_SHARED, *fd, 0);
    if (m == MAP_FAILED)
        return NULL;
    madvise((void *)m, len, MADV_RANDOM);
    return m;
}

#ifdef FORESIGHT_H /* a compiled loop's stream (foresight.h included first) */
static volatile unsigned char stream_sink;

/* The generated loop: a countdown in a local, a step when it runs out.  Returns the steps
 * taken over N iterations from BASE by STEP bytes, each passed the iterations after it;
 * with TOUCH it reads the byte at each address, as the loop would. */
static inline unsigned long stream_walk(struct foresight_stream *st,
                                        struct foresight_site *site, uintptr_t base,
                                        uintptr_t step, unsigned long n, uintptr_t *cnt,
                                        bool touch)
{
    unsigned long steps = 0;
    for (unsigned long i = 0; i < n; i++) {
        if (touch)
            stream_sink = *(const unsigned char *)(base + i * step);
        if (*cnt > 1) {
            (*cnt)--;
        } else {
            const uintptr_t now = base + i * step;
            *cnt = foresight_stream_step(st, site, *cnt, now, n - 1 - i, now);
            steps++;
        }
    }
    return steps;
}
#endif

#endif
