/*
 * replay — one client of `foresight bench sharedcache --live`: plays its part of a
 * `foresight sim` trace against its view of the I/O node's disk (a `foresight cluster
 * run` client), so the simulator and the real node run the same program orders.
 *
 *   replay TRACE CLIENT CLIENTS DISK BARRIER [BLOCK]
 *
 * Lines of TRACE whose CLIENT is this one, in order: `R b [think]` computes for THINK_US
 * microseconds (a sleep: see compute) and then reads block b with one pread (one request
 * to the node: the file is advised POSIX_FADV_RANDOM, so the view reads nothing ahead);
 * `P b` is the compiler's prefetch hint, given to libforesight
 * (foresight_prefetch on a shared mapping of DISK), whose runtime sends it to the node as
 * NBD_CMD_CACHE (runtime/src/remote.c); `W b` writes zeros over the block with pwrite
 * (through to the node; without reading it first, as the trace's write does not: replay
 * is for a scratch disk, as the bench's zero-filled one); `B` waits for every client at
 * a barrier in BARRIER, a file of at least 8 zero bytes the clients share (a counter and
 * a generation, futex wait).  Prints its client id, how many blocks it read and a checksum of the bytes it
 * read, which depend only on the disk and the trace, then the seconds it spent reading,
 * writing, waiting at barriers and computing.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "foresight.h"

static void die(const char *what)
{
    fprintf(stderr, "replay: %s: %s\n", what, strerror(errno));
    exit(1);
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* The client's compute before a read, as a sleep: each client stands for a node with a
 * processor of its own, and eight of them on two CPUs could not all compute at once. */
static void compute(double us)
{
    if (us <= 0)
        return;
    double until = now_us() + us;
    struct timespec ts = {(time_t)(until / 1e6), (long)(fmod(until, 1e6) * 1e3)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/* A sense-reversing barrier over two shared words: arrivals, and the generation the
 * last arrival bumps (the others sleep on it with FUTEX_WAIT). */
static void barrier(uint32_t *w, uint32_t clients)
{
    uint32_t gen = __atomic_load_n(&w[1], __ATOMIC_ACQUIRE);
    if (__atomic_add_fetch(&w[0], 1, __ATOMIC_ACQ_REL) == clients) {
        __atomic_store_n(&w[0], 0, __ATOMIC_RELAXED);
        __atomic_add_fetch(&w[1], 1, __ATOMIC_RELEASE);
        syscall(SYS_futex, &w[1], FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
        return;
    }
    while (__atomic_load_n(&w[1], __ATOMIC_ACQUIRE) == gen)
        syscall(SYS_futex, &w[1], FUTEX_WAIT, gen, NULL, NULL, 0);
}

int main(int argc, char **argv)
{
    if (argc != 6 && argc != 7) {
        fprintf(stderr, "usage: replay TRACE CLIENT CLIENTS DISK BARRIER [BLOCK]\n");
        return 2;
    }
    long me = atol(argv[2]), clients = atol(argv[3]);
    long block = argc == 7 ? atol(argv[6]) : 65536;
    if (me < 0 || clients < 1 || me >= clients || block < 4096 || block % 4096) {
        fprintf(stderr, "replay: bad client, client count or block size\n");
        return 2;
    }
    FILE *trace = fopen(argv[1], "r");
    if (trace == NULL)
        die(argv[1]);
    int fd = open(argv[4], O_RDWR);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
        die(argv[4]);
    /* Reads of exactly the block asked for: no read-ahead of the view (an OBL prefetcher
     * of its own, which the trace does not have). */
    posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
    unsigned char *disk = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    int bfd = open(argv[5], O_RDWR);
    uint32_t *bar = bfd < 0 ? MAP_FAILED : mmap(NULL, 8, PROT_READ | PROT_WRITE, MAP_SHARED, bfd, 0);
    if (disk == MAP_FAILED || bar == MAP_FAILED)
        die("mmap");
    long blocks = (long)(st.st_size / block), reads = 0, line_no = 0;
    double spent[4] = {0}; /* seconds in reads, writes, barriers, compute */
    uint64_t sum = 0;
    unsigned char *buf = malloc((size_t)block), *zeros = calloc(1, (size_t)block);
    char line[256];
    if (buf == NULL || zeros == NULL)
        die("malloc");
    while (fgets(line, sizeof line, trace)) {
        line_no++;
        long client, b = 0;
        char op;
        double think = 0;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        int got = sscanf(line, "%ld %c %ld %lf", &client, &op, &b, &think);
        if (got < 3) {
            fprintf(stderr, "replay: %s:%ld: not CLIENT OP BLOCK [THINK_US]\n", argv[1], line_no);
            return 2;
        }
        if (client != me)
            continue;
        if (op != 'B' && (b < 0 || b >= blocks)) {
            fprintf(stderr, "replay: %s:%ld: block %ld is past the disk's %ld\n", argv[1],
                    line_no, b, blocks);
            return 2;
        }
        const unsigned char *at = disk + (size_t)b * (size_t)block;
        switch (op) {
        case 'R': {
            double t0 = now_us();
            compute(think);
            double t1 = now_us();
            if (pread(fd, buf, (size_t)block, (off_t)b * block) != block)
                die("pread");
            for (long off = 0; off < block; off += 4096)
                sum = sum * 31 + buf[off];
            reads++;
            spent[3] += (t1 - t0) / 1e6;
            spent[0] += (now_us() - t1) / 1e6;
            break;
        }
        case 'P':
            foresight_prefetch(at, (size_t)block);
            break;
        case 'W': {
            double t0 = now_us();
            if (pwrite(fd, zeros, (size_t)block, (off_t)b * block) != block)
                die("pwrite");
            spent[1] += (now_us() - t0) / 1e6;
            break;
        }
        case 'B': {
            double t0 = now_us();
            barrier(bar, (uint32_t)clients);
            spent[2] += (now_us() - t0) / 1e6;
            break;
        }
        default:
            fprintf(stderr, "replay: %s:%ld: OP is R, W, P or B, not %c\n", argv[1], line_no, op);
            return 2;
        }
    }
    printf("client %ld read %ld blocks checksum %016llx; seconds reading %.3f writing %.3f "
           "at barriers %.3f computing %.3f\n", me, reads, (unsigned long long)sum, spent[0],
           spent[1], spent[2], spent[3]);
    return 0;
}
