/*
 * trace_prog.c — a small program for tests/test_runtime_trace.py.
 *
 * Every mode maps FILE and prints "map ADDRESS BYTES" first.
 *   trace_prog touch FILE          read every page twice (MADV_RANDOM: a fault per page),
 *                                  print the checksums, return from main
 *   trace_prog exit FILE           the same, then exit(3) from a nested call
 *   trace_prog prefetch FILE       drop FILE's cached pages, prefetch all of it, wait until
 *                                  resident
 *   trace_prog race FILE           drop FILE's cached pages, prefetch all of it and read it
 *                                  at once (MADV_RANDOM), overtaking the prefetch's reads
 *   trace_prog resident FILE N     read FILE (resident), then prefetch the first 64 KiB at a
 *                                  256 KiB boundary ("range ADDRESS BYTES") N times, pausing
 *                                  between calls; a range the inline filter can pass
 *   trace_prog hang FILE           read FILE, print "ready", then wait for a signal
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "foresight.h"

static unsigned long sum_pages(const volatile unsigned char *m, size_t len)
{
    unsigned long s = 0;
    for (size_t off = 0; off < len; off += 4096)
        s = s * 31 + m[off];
    return s;
}

static double resident(const void *m, size_t len)
{
    size_t pages = (len + 4095) / 4096, res = 0;
    unsigned char *vec = malloc(pages);
    if (vec != NULL && mincore((void *)m, len, vec) == 0)
        for (size_t i = 0; i < pages; i++)
            res += vec[i] & 1;
    free(vec);
    return pages ? (double)res / (double)pages : 0;
}

static void leave(int code)
{
    fflush(stdout);
    exit(code);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: trace_prog touch|exit|prefetch|race|resident|hang FILE [N]\n");
        return 2;
    }
    int fd = open(argv[2], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        perror(argv[2]);
        return 2;
    }
    size_t len = (size_t)st.st_size;
    const unsigned char *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) {
        perror("mmap");
        return 2;
    }
    printf("map %p %zu\n", (const void *)m, len);
    const char *mode = argv[1];
    if (strcmp(mode, "touch") == 0 || strcmp(mode, "exit") == 0) {
        madvise((void *)m, len, MADV_RANDOM); /* one major fault per page, no readahead */
        unsigned long a = sum_pages(m, len), b = sum_pages(m, len);
        printf("sum %lu %lu\n", a, b);
        if (strcmp(mode, "exit") == 0)
            leave(3);
    } else if (strcmp(mode, "prefetch") == 0) {
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        foresight_prefetch(m, len);
        for (int i = 0; i < 1000 && resident(m, len) < 1.0; i++)
            usleep(10000);
        printf("resident %.2f\n", resident(m, len));
    } else if (strcmp(mode, "race") == 0) {
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        madvise((void *)m, len, MADV_RANDOM);
        foresight_prefetch(m, len);
        printf("sum %lu\n", sum_pages(m, len));
    } else if (strcmp(mode, "resident") == 0) {
        int n = argc > 3 ? atoi(argv[3]) : 100;
        const unsigned char *r = (const unsigned char *)(((uintptr_t)m + (256 << 10) - 1) &
                                                        ~(uintptr_t)((256 << 10) - 1));
        size_t bytes = 64 << 10;
        if (r + bytes > m + len) {
            fprintf(stderr, "file too small\n");
            return 2;
        }
        printf("sum %lu\nrange %p %zu\n", sum_pages(m, len), (const void *)r, bytes);
        for (int i = 0; i < n; i++) {
            foresight_prefetch(r, bytes);
            usleep(2000); /* let a worker take each request, so few are merged */
        }
    } else if (strcmp(mode, "hang") == 0) {
        printf("sum %lu\nready\n", sum_pages(m, len));
        fflush(stdout);
        for (;;)
            pause();
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    return 0;
}
