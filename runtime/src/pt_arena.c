/*
 * pt_arena.c — the prefetch thread's private memory: its stack, its signal stack and its
 * arena (foresight_pt_malloc & co.), inside one reservation between two guards.
 *
 * The slice computes with predicted data, so an index into its own arrays can be wrong; its
 * stores must still never reach the program's memory.  So everything the thread stores into
 * lies in one mapping of the thread's, reserved PROT_NONE (MAP_NORESERVE: address space, no
 * memory) with only the parts in use made readable and writable (addresses increasing):
 *
 *   guard 32 GiB | arena 32 GiB | gap 1 MiB | signal stack | gap 64 MiB | stack | guard 32 GiB
 *
 * An index past a stack array runs into the upper guard; past an arena block, into the
 * arena's PROT_NONE rest; a stack overflow into the 64 MiB gap (a larger frame may skip it,
 * into the thread's own memory, never the program's).  Any of those faults, and the fault
 * net (pt_thread.c) stops the thread.  The stack is RLIMIT_STACK's soft limit, as the main
 * thread's (unlimited: 512 MiB; at least 8 MiB, at most 1 GiB): a recursive reader that
 * needed 48 MiB under `ulimit -s unlimited` crashed at 8 MiB.  Its pages are touched only as
 * used.  Under a finite RLIMIT_AS or RLIMIT_DATA there is no thread at all (pt_thread.c:
 * its memory would come out of the program's allowance), and a program that sets one, or
 * locks its memory, later gets the thread ended and all of this unmapped first
 * (pt_limits.c).  When the reservation fails,
 * the stack, the signal stack and each arena chunk are mappings of their own, as before
 * the guards (counted: pt_unguarded).
 *
 * Why an arena at all: the slice's allocations (its private copies, lead reads' buffers)
 * must not come from the program's malloc: the prefetch thread would take the program's
 * allocator locks (a fork in the program at that moment would leave them held in the
 * child), move the addresses the program's own allocations get, and under the seccomp filter
 * of pt_thread.c share nothing with the program it could disturb.
 *
 * Blocks of up to 64 KiB (with a 16-byte header) come in power-of-two sizes from 1 MiB
 * chunks, one free list per size.  Larger ones: in the reservation, power-of-two runs of
 * pages with a free list per size, their pages given back (fresh pages mapped over) when freed; without
 * it, mappings of their own, unmapped when freed.  realloc copies into a new block unless the
 * old one has room (a large one: only the pages the thread touched, copy_block).  16-byte alignment.  No lock: the memory is set up and used by
 * foresight_pt_start and the compiler's init (on the program's thread, before the prefetch
 * thread exists), then by the prefetch thread alone, but for the init of each later
 * anchored run (foresight_pt_anchor), which runs while the thread waits between runs.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "internal.h"

#define MIN_SHIFT 5  /* 32-byte blocks */
#define MAX_SHIFT 16 /* 64 KiB blocks; larger ones are runs of pages */
#define NCLASS (MAX_SHIFT - MIN_SHIFT + 1)
#define CHUNK ((size_t)1 << 20)
#define LARGE_CLASS 64          /* cls of a large block in the reservation: 64 + its shift */
#define MAPPED ((size_t)-1)     /* cls of a block that is a mapping of its own */

#define GUARD_MAX ((size_t)32 << 30)
#define ARENA_MAX ((size_t)32 << 30)
#define ALT_GAP ((size_t)1 << 20)
#define ALT_SIZE ((size_t)256 << 10) /* the handler, under a sanitizer's wrapper too */
#define STACK_GAP ((size_t)64 << 20)
#define COMMIT ((size_t)1 << 20)     /* the arena is made writable this much at a time */

#define MiB ((size_t)1 << 20)

struct block {
    size_t size; /* usable bytes after the header */
    size_t cls;  /* size class, LARGE_CLASS + shift, or MAPPED */
};
_Static_assert(sizeof(struct block) == 16, "the header keeps 16-byte alignment");

unsigned long fs_global_pt_unguarded;

static struct {
    bool ready, guarded;
    char *base;          /* the reservation (guarded) */
    size_t len;
    char *arena, *arena_end, *brk, *committed;
    char *stack;
    size_t stack_size;
    char *alt;
} mem;

static struct block *free_list[NCLASS];
static struct block *large_free[64];
static char *bump, *bump_end;

/* Anchored runs (pt_thread.c): the arena as the first run's init left it (the private
 * copies of file-scope variables); each run's allocations after it are released when the
 * run ends. */
static struct {
    bool set;
    char *brk, *bump, *bump_end;
} mark;

void fs_pt_arena_mark(void)
{
    if (!mem.guarded)
        return; /* (mappings of their own: not released between runs) */
    /* Free blocks' links live in their memory, which a later run may overwrite once they
     * are handed out again: the lists start empty at the mark (what init freed stays). */
    memset(free_list, 0, sizeof free_list);
    memset(large_free, 0, sizeof large_free);
    mark.brk = mem.brk;
    mark.bump = bump;
    mark.bump_end = bump_end;
    mark.set = true;
}

void fs_pt_arena_release(void)
{
    if (!mark.set)
        return;
    memset(free_list, 0, sizeof free_list);
    memset(large_free, 0, sizeof large_free);
    bump = mark.bump;
    bump_end = mark.bump_end;
    if (mem.brk > mark.brk) /* fresh pages over what the runs used: their memory back */
        (void)mmap(mark.brk, (size_t)(mem.brk - mark.brk), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
    mem.brk = mark.brk;
}

size_t fs_pt_stack_size(uint64_t soft_limit)
{
    if (soft_limit == (uint64_t)RLIM_INFINITY)
        return 512 * MiB;
    if (soft_limit < 8 * MiB)
        return 8 * MiB;
    if (soft_limit > 1024 * MiB)
        return 1024 * MiB;
    return (size_t)(soft_limit + FS_PAGE - 1) & ~(size_t)(FS_PAGE - 1);
}

/* The address space the thread's memory takes (its reservation, mostly PROT_NONE guards
 * and untouched stack): gate.c leaves it out of the program's. */
size_t fs_pt_address_space(void)
{
    if (!__atomic_load_n(&mem.ready, __ATOMIC_ACQUIRE))
        return 0;
    return mem.guarded ? mem.len : mem.stack_size;
}

static void *map(size_t len, int extra)
{
    void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | extra, -1, 0);
    if (m == MAP_FAILED) {
        errno = ENOMEM;
        return NULL;
    }
    return m;
}

/* The reservation, with the stack and the signal stack writable; false when it fails. */

static bool reserve(size_t stack)
{
    const size_t GUARD = GUARD_MAX, ARENA_SPAN = ARENA_MAX;
    const size_t len = GUARD + ARENA_SPAN + ALT_GAP + ALT_SIZE + STACK_GAP + stack + GUARD;
    char *base = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED)
        return false;
    char *arena = base + GUARD;
    char *alt = arena + ARENA_SPAN + ALT_GAP;
    char *stk = alt + ALT_SIZE + STACK_GAP;
    if (mprotect(alt, ALT_SIZE, PROT_READ | PROT_WRITE) != 0 ||
        mprotect(stk, stack, PROT_READ | PROT_WRITE) != 0) {
        munmap(base, len);
        return false;
    }
    mem.base = base;
    mem.len = len;
    mem.arena = mem.brk = mem.committed = arena;
    mem.arena_end = arena + ARENA_SPAN;
    mem.alt = alt;
    mem.stack = stk;
    mem.stack_size = stack;
    return true;
}

bool fs_pt_memory_init(void)
{
    if (mem.ready)
        return true;
    struct rlimit rl;
    size_t stack = fs_pt_stack_size(getrlimit(RLIMIT_STACK, &rl) == 0 ? (uint64_t)rl.rlim_cur
                                                                        : 8 * MiB);
    if (reserve(stack)) {
        mem.guarded = true;
    } else {
        /* Today's layout: mappings of their own, no guards. */
        __atomic_store_n(&fs_global_pt_unguarded, 1, __ATOMIC_RELAXED);
        mem.alt = map(ALT_SIZE, 0);
        while ((mem.stack = map(stack, MAP_NORESERVE | MAP_STACK)) == NULL && stack > 8 * MiB)
            stack /= 2;
        mem.stack_size = stack;
        if (mem.alt == NULL || mem.stack == NULL) {
            if (mem.alt != NULL)
                munmap(mem.alt, ALT_SIZE);
            if (mem.stack != NULL)
                munmap(mem.stack, stack);
            mem.alt = mem.stack = NULL;
            return false;
        }
    }
    __atomic_store_n(&mem.ready, true, __ATOMIC_RELEASE);
    return true;
}

void fs_pt_memory_release(void)
{
    if (!__atomic_load_n(&mem.ready, __ATOMIC_ACQUIRE))
        return;
    __atomic_store_n(&mem.ready, false, __ATOMIC_RELEASE);
    if (mem.guarded) {
        munmap(mem.base, mem.len);
    } else { /* the arena's own mappings are left: small, and not tracked */
        munmap(mem.alt, ALT_SIZE);
        munmap(mem.stack, mem.stack_size);
    }
    mem.base = mem.alt = mem.stack = NULL;
}

void *fs_pt_stack(size_t *size)
{
    *size = mem.stack_size;
    return mem.stack;
}

void *fs_pt_altstack(size_t *size)
{
    *size = ALT_SIZE;
    return mem.alt;
}

enum fs_pt_where fs_pt_memory_where(const void *p)
{
    const char *a = p;
    if (!mem.ready)
        return FS_PT_OUTSIDE;
    if (a >= mem.stack && a < mem.stack + mem.stack_size)
        return FS_PT_STACK;
    if (a >= mem.alt && a < mem.alt + ALT_SIZE)
        return FS_PT_ALTSTACK;
    if (!mem.guarded || a < mem.base || a >= mem.base + mem.len)
        return FS_PT_OUTSIDE;
    if (a >= mem.arena && a < mem.committed)
        return FS_PT_ARENA;
    return FS_PT_GUARD;
}

/* LEN more bytes (a multiple of the page) of the thread's memory. */
static void *grow(size_t len)
{
    if (!mem.ready && !fs_pt_memory_init())
        return NULL;
    if (!mem.guarded)
        return map(len, 0);
    if (len > (size_t)(mem.arena_end - mem.brk)) {
        errno = ENOMEM;
        return NULL;
    }
    char *p = mem.brk;
    if (len > (size_t)(mem.committed - p)) {
        size_t more = (len - (size_t)(mem.committed - p) + COMMIT - 1) & ~(COMMIT - 1);
        if (more > (size_t)(mem.arena_end - mem.committed))
            more = (size_t)(mem.arena_end - mem.committed);
        if (mprotect(mem.committed, more, PROT_READ | PROT_WRITE) != 0) {
            errno = ENOMEM;
            return NULL;
        }
        mem.committed += more;
    }
    mem.brk += len;
    return p;
}

/* A block the arena is about to hand out, take back or copy from, as its header says: in
 * the reservation (guarded), its whole extent must lie in the arena's committed part and
 * its header must name a class of that size.  The slice computes with predicted data, so
 * a store may run past one of its blocks into the next one's header or free-list link; a
 * block taken on such a word could lie anywhere, the program's memory too, and freeing
 * one would unmap or map over it.  So the thread stops instead (off the thread, where
 * nothing but the compiler's init has run, the block is refused). */
static bool sound(const struct block *b)
{
    const char *a = (const char *)b;
    if (!mem.guarded)
        return b->cls == MAPPED || b->cls < NCLASS; /* (mappings of their own: not checked) */
    bool ok = ((uintptr_t)a & 15) == 0 && a >= mem.arena && a < mem.committed &&
              b->size <= (size_t)(mem.committed - a) - sizeof *b;
    if (ok && b->cls < NCLASS)
        ok = b->size == ((size_t)1 << (b->cls + MIN_SHIFT)) - sizeof *b;
    else if (ok)
        ok = b->cls >= LARGE_CLASS + MAX_SHIFT + 1 && b->cls < LARGE_CLASS + 48 &&
             b->size == ((size_t)1 << (b->cls - LARGE_CLASS)) - sizeof *b;
    if (!ok && fs_pt_self)
        fs_pt_stop("its arena is corrupted (a store ran past one of its blocks)", 0);
    return ok;
}

static void *large(size_t need)
{
    size_t len = (need + FS_PAGE - 1) & ~(size_t)(FS_PAGE - 1);
    struct block *b;
    if (!mem.ready && !fs_pt_memory_init())
        return NULL;
    if (!mem.guarded) {
        if ((b = map(len, 0)) == NULL)
            return NULL;
        b->size = len - sizeof *b;
        b->cls = MAPPED;
        return b + 1;
    }
    unsigned shift = MAX_SHIFT + 1;
    while (((size_t)1 << shift) < len)
        shift++;
    if ((b = large_free[shift]) != NULL) {
        if (!sound(b) || b->cls != LARGE_CLASS + shift) {
            errno = ENOMEM;
            return NULL;
        }
        memcpy(&large_free[shift], b + 1, sizeof b);
        return b + 1;
    }
    if ((b = grow((size_t)1 << shift)) == NULL)
        return NULL;
    b->size = ((size_t)1 << shift) - sizeof *b;
    b->cls = LARGE_CLASS + shift;
    return b + 1;
}

void *foresight__pt_malloc(size_t n)
{
    if (n > ARENA_MAX) {
        errno = ENOMEM;
        return NULL;
    }
    const size_t need = n + sizeof(struct block);
    if (need > ((size_t)1 << MAX_SHIFT))
        return large(need);
    size_t c = 0;
    while (((size_t)1 << (c + MIN_SHIFT)) < need)
        c++;
    struct block *b;
    if ((b = free_list[c]) != NULL) {
        if (!sound(b) || b->cls != c) {
            errno = ENOMEM;
            return NULL;
        }
        memcpy(&free_list[c], b + 1, sizeof b); /* the next free block, kept in the payload */
        return b + 1;
    }
    const size_t bytes = (size_t)1 << (c + MIN_SHIFT);
    if (bump == NULL || (size_t)(bump_end - bump) < bytes) {
        char *m = grow(CHUNK); /* the old chunk's tail is left unused */
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
    if (!sound(b))
        return; /* (off the thread: kept, not reused) */
    if (b->cls == MAPPED)
        return; /* (outside the reservation a header cannot be checked: kept, not unmapped) */
    if (b->cls >= LARGE_CLASS) {
        /* Its pages back to the system (zero when used again), but the first: the header
         * and the free list's link live there.  Fresh pages mapped over them, not
         * MADV_DONTNEED (never used on anonymous memory here); if that fails they stay. */
        const size_t len = b->size + sizeof *b;
        (void)mmap((char *)b + FS_PAGE, len - FS_PAGE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
        memcpy(p, &large_free[b->cls - LARGE_CLASS], sizeof b);
        large_free[b->cls - LARGE_CLASS] = b;
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
    if (p == NULL)
        return NULL;
    /* A large block is zero past its first page (fresh, or given back when freed). */
    const size_t first = FS_PAGE - sizeof(struct block);
    memset(p, 0, ((struct block *)p - 1)->cls < NCLASS || bytes < first ? bytes : first);
    return p;
}

/* realloc's copy of the N bytes at P (block B) to Q.  A large block of the reservation
 * copies only the pages the thread has touched (mincore): the others read as zero, and so
 * does the new block past its first page (fresh, or given back when freed).  A program that
 * grows its read buffer by doubling grows the thread's copy of it too, never written by
 * predicted reads: copied whole, each doubling made every page of it resident (800 MiB of
 * the thread's beside a 300 MiB file). */
static void copy_block(char *q, const char *p, size_t n, const struct block *b)
{
    if (!mem.guarded || b->cls < LARGE_CLASS || b->cls == MAPPED) {
        memcpy(q, p, n);
        return;
    }
    const char *base = (const char *)b;
    const size_t pages = (n + sizeof *b + FS_PAGE - 1) / FS_PAGE;
    unsigned char vec[256];
    for (size_t i = 0; i < pages; i += sizeof vec) {
        const size_t k = pages - i < sizeof vec ? pages - i : sizeof vec;
        if (mincore((void *)(base + i * FS_PAGE), k * FS_PAGE, vec) != 0)
            memset(vec, 1, k);
        for (size_t j = 0; j < k; j++) {
            if (!(vec[j] & 1) && i + j != 0)
                continue;
            const char *lo = base + (i + j) * FS_PAGE, *hi = lo + FS_PAGE;
            if (lo < p)
                lo = p;
            if (hi > p + n)
                hi = p + n;
            if (lo < hi)
                memcpy(q + (lo - p), lo, (size_t)(hi - lo));
        }
    }
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
    if (!sound(b)) {
        errno = ENOMEM;
        return NULL;
    }
    if (n <= b->size)
        return p;
    void *q = foresight__pt_malloc(n);
    if (q == NULL)
        return NULL; /* P stays valid, as with realloc(3) */
    copy_block(q, p, b->size, b);
    foresight__pt_free(p);
    return q;
}
