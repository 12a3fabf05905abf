/*
 * pt_arena.c — the prefetch thread's private memory (foresight_pt_malloc & co.).  The
 * slice's allocations (its private copies, lead reads' buffers) must not come from the
 * program's malloc: the prefetch thread would take the program's allocator locks (a fork
 * in the program at that moment would leave them held in the child), move the addresses
 * the program's own allocations get, and under the seccomp filter of pt_thread.c share
 * nothing with the program it could disturb.  So: anonymous private mappings of its own.
 *
 * Blocks of up to 64 KiB (with a 16-byte header) come in power-of-two sizes from 1 MiB
 * chunks, one free list per size; larger ones are mappings of their own, unmapped when
 * freed.  realloc copies into a new block unless the old one has room.  16-byte
 * alignment.  No lock: the arena is used by the compiler's init (on the program's thread,
 * before the prefetch thread exists) and then by the prefetch thread alone.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

#define MIN_SHIFT 5  /* 32-byte blocks */
#define MAX_SHIFT 16 /* 64 KiB blocks; larger ones are mappings of their own */
#define NCLASS (MAX_SHIFT - MIN_SHIFT + 1)
#define CHUNK ((size_t)1 << 20)
#define LARGE ((size_t)-1)

struct block {
    size_t size; /* usable bytes after the header */
    size_t cls;  /* size class, or LARGE */
};
_Static_assert(sizeof(struct block) == 16, "the header keeps 16-byte alignment");

static struct block *free_list[NCLASS];
static char *bump, *bump_end;

static void *map(size_t len)
{
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        errno = ENOMEM;
        return NULL;
    }
    return m;
}

void *foresight__pt_malloc(size_t n)
{
    if (n > SIZE_MAX / 2) {
        errno = ENOMEM;
        return NULL;
    }
    const size_t need = n + sizeof(struct block);
    struct block *b;
    if (need > ((size_t)1 << MAX_SHIFT)) {
        const size_t len = (need + FS_PAGE - 1) & ~(size_t)(FS_PAGE - 1);
        if ((b = map(len)) == NULL)
            return NULL;
        b->size = len - sizeof *b;
        b->cls = LARGE;
        return b + 1;
    }
    size_t c = 0;
    while (((size_t)1 << (c + MIN_SHIFT)) < need)
        c++;
    if ((b = free_list[c]) != NULL) {
        memcpy(&free_list[c], b + 1, sizeof b); /* the next free block, kept in the payload */
        return b + 1;
    }
    const size_t bytes = (size_t)1 << (c + MIN_SHIFT);
    if (bump == NULL || (size_t)(bump_end - bump) < bytes) {
        char *m = map(CHUNK); /* the old chunk's tail is left unused */
        if (m == NULL)
            return NULL;
        bump = m;
        bump_end = m + CHUNK;
    }
    b = (struct block *)(void *)bump;
    bump += bytes;
    b->size = bytes - sizeof *b;
    b->cls = c;
    return b + 1;
}

void foresight__pt_free(void *p)
{
    if (p == NULL)
        return;
    struct block *b = (struct block *)p - 1;
    if (b->cls == LARGE) {
        munmap(b, b->size + sizeof *b);
        return;
    }
    memcpy(p, &free_list[b->cls], sizeof b);
    free_list[b->cls] = b;
}

void *foresight__pt_calloc(size_t count, size_t n)
{
    size_t bytes;
    if (__builtin_mul_overflow(count, n, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = foresight__pt_malloc(bytes);
    if (p != NULL && ((struct block *)p - 1)->cls != LARGE) /* a fresh mapping is zero */
        memset(p, 0, bytes);
    return p;
}

void *foresight__pt_realloc(void *p, size_t n)
{
    if (p == NULL)
        return foresight__pt_malloc(n);
    if (n == 0) {
        foresight__pt_free(p);
        return NULL;
    }
    const struct block *b = (struct block *)p - 1;
    if (n <= b->size)
        return p;
    void *q = foresight__pt_malloc(n);
    if (q == NULL)
        return NULL; /* P stays valid, as with realloc(3) */
    memcpy(q, p, b->size);
    foresight__pt_free(p);
    return q;
}
