/* What the kernel's paging costs a program that does nothing but stream: the floor
 * under the NAS kernels' distance from their bound (docs/results.md).  Maps MB of
 * anonymous memory, touches every page, then makes PASSES passes over it, reading (and
 * with WRITE=1 dirtying) one byte per page; MODE is
 *   fault       demand paging only,
 *   willneed    MADV_WILLNEED AHEAD_KB ahead of the pass, CHUNK_KB at a time,
 *   pageout     willneed, and MADV_PAGEOUT of each CHUNK_KB two chunks behind.
 * Before the passes it reports how the pages went to swap: of the swapped pages, how
 * many runs of contiguous swap slots they form (from /proc/self/pagemap; root only).
 * Run it under a cap, e.g.
 *   foresight run --mem 64M --cold --readahead-kb 128 swapcost 192 4 pageout 4096 128 1
 * usage: swapcost MB PASSES MODE AHEAD_KB CHUNK_KB WRITE */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Swapped pages of [a, a+n) and the runs of contiguous swap slots they form. */
static void swap_layout(const char *a, size_t n)
{
    int fd = open("/proc/self/pagemap", O_RDONLY);
    size_t np = n / PAGE, swapped = 0, runs = 0;
    uint64_t *pm = malloc(np * sizeof *pm), prev = 0;
    if (fd < 0 || pm == NULL ||
        pread(fd, pm, np * sizeof *pm, (off_t)((uintptr_t)a / PAGE * sizeof *pm)) !=
            (ssize_t)(np * sizeof *pm)) {
        printf("swap layout: unknown (pagemap unreadable)\n");
        free(pm);
        if (fd >= 0)
            close(fd);
        return;
    }
    int prev_swapped = 0;
    for (size_t i = 0; i < np; i++) {
        int s = (int)((pm[i] >> 62) & 1);
        if (s) {
            uint64_t slot = (pm[i] >> 5) & ((UINT64_C(1) << 50) - 1);
            swapped++;
            if (!prev_swapped || slot != prev + 1)
                runs++;
            prev = slot;
        }
        prev_swapped = s;
    }
    printf("swap layout: %zu of %zu pages swapped, %zu runs of contiguous slots (mean %.1f)\n",
           swapped, np, runs, runs ? (double)swapped / (double)runs : 0.0);
    free(pm);
    close(fd);
}

int main(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: swapcost MB PASSES fault|willneed|pageout AHEAD_KB CHUNK_KB WRITE\n");
        return 2;
    }
    size_t n = (size_t)atol(argv[1]) << 20, ahead = (size_t)atol(argv[4]) << 10;
    size_t chunk = (size_t)atol(argv[5]) << 10;
    int passes = atoi(argv[2]), write = atoi(argv[6]);
    const char *mode = argv[3];
    int prefetch = strcmp(mode, "fault") != 0, pageout = strcmp(mode, "pageout") == 0;
    if (n == 0 || chunk == 0 || chunk % PAGE != 0 || passes < 1 ||
        (prefetch && strcmp(mode, "willneed") != 0 && !pageout)) {
        fprintf(stderr, "swapcost: bad arguments\n");
        return 2;
    }
    volatile char *a = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (a == MAP_FAILED) {
        perror("mmap");
        return 2;
    }
    for (size_t i = 0; i < n; i += PAGE)
        a[i] = 1;
    swap_layout((const char *)a, n);
    long sum = 0;
    double t0 = now();
    for (int p = 0; p < passes; p++) {
        size_t next = 0, released = 0;
        for (size_t i = 0; i < n; i += PAGE) {
            for (; prefetch && next < n && next < i + ahead; next += chunk)
                madvise((char *)a + next, next + chunk > n ? n - next : chunk, MADV_WILLNEED);
            if (pageout && i >= released + 2 * chunk) {
                madvise((char *)a + released, chunk, MADV_PAGEOUT);
                released += chunk;
            }
            sum += a[i];
            if (write)
                a[i] = (char)(a[i] + 1);
        }
    }
    printf("passes %.3f s (checksum %ld)\n", now() - t0, sum);
    return 0;
}
