/* Shared helpers of the foresight bench compiler kernels: plain C, no hints. */
#ifndef KERNELS_COMMON_H
#define KERNELS_COMMON_H
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static inline double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Map PATH of BYTES bytes; with create, (re)write it with deterministic doubles. */
static inline void *map_file(const char *path, size_t bytes, int create)
{
    int fd = open(path, O_RDWR | (create ? O_CREAT : 0), 0644);
    if (fd < 0) { perror(path); exit(2); }
    if (create && ftruncate(fd, (off_t)bytes) != 0) { perror("ftruncate"); exit(2); }
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) { perror("mmap"); exit(2); }
    close(fd);
    if (create) {
        double *d = p;
        for (size_t i = 0; i < bytes / sizeof(double); i++)
            d[i] = (double)((i * 2654435761u) % 1000003u) * 0.001;
        msync(p, bytes, MS_SYNC);
    }
    return p;
}

static inline size_t arg_size(const char *s)
{
    return (size_t)strtoull(s, NULL, 10);
}
#endif
