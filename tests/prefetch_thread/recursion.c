/* trap: recursion: a binary tree stored in a file (never written by this run), each node naming its children's offsets, walked depth first with pread */
/* inputs: this file built with -DMAKE_INPUTS, run first */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"

#define NODE 4096
#define NODES 1023   /* depth 10, 4 MiB */

struct node {
    long value;
    long left, right;   /* offsets of the children; -1: none */
    char fill[NODE - 3 * sizeof(long)];
};

static long place(long k)   /* node k's slot in the file: a scattered order */
{
    return (k * 389) % NODES;
}

static long walk(int fd, long off, int depth, uint64_t *h)
{
    struct node n;
    if (off < 0)
        return 0;
    if (pread(fd, &n, sizeof n, off) != sizeof n)
        exit(1);
    *h = checksum(*h, &n.value, sizeof n.value);
    return n.value * depth + walk(fd, n.left, depth + 1, h) + walk(fd, n.right, depth + 1, h);
}

/* Mutual recursion: odd levels read the right child first. */
static long odd(int fd, long off, uint64_t *h);

static long even(int fd, long off, uint64_t *h)
{
    struct node n;
    if (off < 0 || pread(fd, &n, sizeof n, off) != sizeof n)
        return 0;
    *h = checksum(*h, &n.value, sizeof n.value);
    return n.value + odd(fd, n.left, h) - odd(fd, n.right, h);
}

static long odd(int fd, long off, uint64_t *h)
{
    struct node n;
    if (off < 0 || pread(fd, &n, sizeof n, off) != sizeof n)
        return 0;
    *h = checksum(*h, &n.value, sizeof n.value);
    return n.value - even(fd, n.right, h) + even(fd, n.left, h);
}

#ifdef MAKE_INPUTS
/* The inputs, made in the run's directory before the measured run. */
int main(void)
{
    static struct node n;
    int fd = open("tree.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    for (long k = 0; k < NODES; k++) {
        n.value = k * 31 + 7;
        n.left = 2 * k + 1 < NODES ? place(2 * k + 1) * NODE : -1;
        n.right = 2 * k + 2 < NODES ? place(2 * k + 2) * NODE : -1;
        memset(n.fill, (int)(k & 0xff), sizeof n.fill);
        if (pwrite(fd, &n, sizeof n, place(k) * NODE) != sizeof n)
            return 1;
    }
    return close(fd) != 0;
}
#else
int main(void)
{
    int fd = open("tree.dat", O_RDONLY);
    if (fd < 0)
        return 1;
    uint64_t h = CHECKSUM_START;
    long w = walk(fd, place(0) * NODE, 1, &h);
    printf("depth-first: %ld, %016llx\n", w, (unsigned long long)h);
    h = CHECKSUM_START;
    long e = even(fd, place(0) * NODE, &h);
    printf("even/odd: %ld, %016llx\n", e, (unsigned long long)h);
    close(fd);
    return 0;
}
#endif
