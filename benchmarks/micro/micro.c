/*
 * micro.c — out-of-core access-pattern microbenchmarks, hand-instrumented the
 * way the compiler instruments loops (paper Section 2.3): block prefetches
 * software-pipelined a distance ahead, releases of the block just finished.
 *
 * Built twice from this file: micro-orig (FORESIGHT_HINTS=0: the original
 * program, no hint calls at all) and micro-hints (FORESIGHT_HINTS=1).  Both
 * print the same checksum on stdout; the access phase's time goes to stderr
 * as "micro: access SECONDS s" so the harness can separate it from set-up.
 *
 *   micro create PATH SIZE                      write a data file (then fsync)
 *   micro PATTERN file PATH [options]           run over a shared file mapping
 *   micro PATTERN anon SIZE [options]           run over anonymous memory (filled first)
 * PATTERN: forward | backward | strided | indirect
 * options: --stride BYTES (strided, default 64K)  --distance BYTES (default 4M)
 *          --block BYTES (default 256K)   --accesses N (indirect, default pages/16)
 */
#include <errno.h>
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

#if FORESIGHT_HINTS
#define HINT(stmt) stmt
#else
#define HINT(stmt) ((void)0)
#pragma GCC diagnostic ignored "-Wunused-variable" /* distances and sites only feed hints */
#endif

#define PAGE 4096u

struct opts {
    size_t stride, distance, block, accesses;
};

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t value_at(size_t i)
{
    return i * 0x9E3779B97F4A7C15ull ^ (i >> 7);
}

static int die(const char *what, const char *detail)
{
    fprintf(stderr, "micro: %s: %s\n", what, detail);
    return 2;
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    size_t mult = 1;
    switch (*end) {
    case 'K': case 'k': mult = 1u << 10; end++; break;
    case 'M': case 'm': mult = 1u << 20; end++; break;
    case 'G': case 'g': mult = 1u << 30; end++; break;
    default: break;
    }
    if (errno || end == s || *end != '\0' || v <= 0)
        return -1;
    *out = (size_t)(v * (double)mult);
    return 0;
}

static int create(const char *path, size_t size)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return die(tmp, strerror(errno));
    static uint64_t buf[1 << 16];
    size_t words = size / 8;
    for (size_t w = 0; w < words; w += 1 << 16) {
        size_t n = words - w < (1 << 16) ? words - w : (1 << 16);
        for (size_t k = 0; k < n; k++)
            buf[k] = value_at(w + k);
        if (write(fd, buf, n * 8) != (ssize_t)(n * 8)) {
            close(fd);
            unlink(tmp);
            return die(tmp, "write failed");
        }
    }
    if (fsync(fd) != 0 || close(fd) != 0 || rename(tmp, path) != 0) {
        unlink(tmp);
        return die(path, strerror(errno));
    }
    return 0;
}

/* Sequential scans in blocks; the hinted build keeps DISTANCE bytes in flight ahead
 * and releases each block once it is done (the paper's software pipeline). */
static uint64_t forward(const uint64_t *a, size_t words, const struct opts *o)
{
    FORESIGHT_SITE(site, "a[b + dist]");
    uint64_t sum = 0;
    size_t bw = o->block / 8, dist = o->distance / 8;
    HINT(foresight_prefetch_at(&site, a, (dist < words ? dist : words) * 8));
    for (size_t b = 0; b < words; b += bw) {
        size_t end = b + bw < words ? b + bw : words;
        HINT(if (b + dist < words) foresight_prefetch_release_at(&site,
                 a + b + dist, (b + dist + bw < words ? bw : words - b - dist) * 8,
                 b >= bw ? a + b - bw : NULL, b >= bw ? bw * 8 : 0));
        for (size_t i = b; i < end; i++)
            sum += a[i];
    }
    return sum;
}

static uint64_t backward(const uint64_t *a, size_t words, const struct opts *o)
{
    FORESIGHT_SITE(site, "a[b - dist]");
    uint64_t sum = 0;
    size_t bw = o->block / 8, dist = o->distance / 8;
    size_t nblocks = (words + bw - 1) / bw;
    HINT(foresight_prefetch_at(&site, a + (words > dist ? words - dist : 0),
                            (words > dist ? dist : words) * 8));
    for (size_t k = nblocks; k-- > 0;) {
        size_t b = k * bw, end = b + bw < words ? b + bw : words;
        size_t after = words - end < bw ? words - end : bw; /* the block just finished */
        HINT(if (b >= dist) foresight_prefetch_release_at(&site, a + b - dist, bw * 8, after
                 ? a + end : NULL, after * 8));
        for (size_t i = end; i-- > b;)
            sum += a[i];
    }
    return sum;
}

static uint64_t strided(const uint64_t *a, size_t words, const struct opts *o)
{
    FORESIGHT_SITE(site, "a[i + ahead * sw]");
    uint64_t sum = 0;
    size_t sw = o->stride / 8, ahead = o->distance / o->stride;
    if (ahead == 0)
        ahead = 1;
    for (size_t i = 0; i < words; i += sw) {
        HINT(if (i + ahead * sw < words) foresight_prefetch_at(&site, a + i + ahead * sw, 8));
        HINT(if (i >= sw) foresight_release_at(&site, a + i - sw, 8 * sw));
        sum += a[i];
    }
    return sum;
}

static uint64_t indirect(const uint64_t *a, const size_t *idx, size_t n, const struct opts *o)
{
    FORESIGHT_SITE(site, "a[idx[i + ahead]]");
    uint64_t sum = 0;
    size_t ahead = o->distance / PAGE; /* one page per access */
    for (size_t i = 0; i < n && i < ahead; i++)
        HINT(foresight_prefetch_at(&site, &a[idx[i]], 8));
    for (size_t i = 0; i < n; i++) {
        HINT(if (i + ahead < n) foresight_prefetch_at(&site, &a[idx[i + ahead]], 8));
        sum += a[idx[i]];
    }
    return sum;
}

static size_t *make_indices(size_t words, size_t n)
{
    size_t *idx = malloc((n ? n : 1) * sizeof *idx);
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; idx && i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        idx[i] = (size_t)(x % words);
    }
    return idx;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "create") == 0) {
        size_t size;
        if (argc != 4 || parse_size(argv[3], &size) != 0)
            return die("usage", "micro create PATH SIZE");
        return create(argv[2], size);
    }
    if (argc < 4)
        return die("usage", "micro forward|backward|strided|indirect file PATH|anon SIZE "
                            "[--stride B] [--distance B] [--block B] [--accesses N]");
    const char *pattern = argv[1], *backing = argv[2];
    struct opts o = {.stride = 64u << 10, .distance = 4u << 20, .block = 256u << 10};
    for (int i = 4; i < argc; i++) {
        size_t *field = !strcmp(argv[i], "--stride")     ? &o.stride
                        : !strcmp(argv[i], "--distance") ? &o.distance
                        : !strcmp(argv[i], "--block")    ? &o.block
                        : !strcmp(argv[i], "--accesses") ? &o.accesses
                                                         : NULL;
        if (field == NULL || i + 1 >= argc || parse_size(argv[i + 1], field) != 0)
            return die("bad option", argv[i]);
        i++;
    }
    if (o.stride < 8 || o.block < 8 || o.distance < PAGE)
        return die("bad option", "--stride and --block need >= 8 bytes, --distance >= 4K");

    size_t size;
    uint64_t *a;
    double t0 = now();
    if (!strcmp(backing, "file")) {
        int fd = open(argv[3], O_RDONLY);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0)
            return die(argv[3], strerror(errno));
        size = (size_t)st.st_size;
        if (size < PAGE)
            return die(argv[3], "data file smaller than a page");
        a = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
        close(fd);
        if (a == MAP_FAILED)
            return die("mmap", strerror(errno));
    } else if (!strcmp(backing, "anon")) {
        if (parse_size(argv[3], &size) != 0 || size < PAGE)
            return die("bad size", argv[3]);
        a = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (a == MAP_FAILED)
            return die("mmap", strerror(errno));
        for (size_t i = 0; i < size / 8; i++)
            a[i] = value_at(i);
    } else {
        return die("unknown backing (file or anon)", backing);
    }
    size_t words = size / 8;
    double t1 = now();
    uint64_t sum;
    if (!strcmp(pattern, "forward")) {
        sum = forward(a, words, &o);
    } else if (!strcmp(pattern, "backward")) {
        sum = backward(a, words, &o);
    } else if (!strcmp(pattern, "strided")) {
        sum = strided(a, words, &o);
    } else if (!strcmp(pattern, "indirect")) {
        size_t n = o.accesses ? o.accesses : size / PAGE / 16;
        size_t *idx = make_indices(words, n);
        if (idx == NULL)
            return die("indirect", "out of memory for the index array");
        t1 = now();
        sum = indirect(a, idx, n, &o);
        free(idx);
    } else {
        return die("unknown pattern", pattern);
    }
    double t2 = now();
    printf("%s %s %zu bytes checksum %016llx\n", pattern, backing, size, (unsigned long long)sum);
    fprintf(stderr, "micro: setup %.6f s\nmicro: access %.6f s\n", t1 - t0, t2 - t1);
    munmap(a, size);
    return 0;
}
