/*
 * mapping.c — which kind of memory holds a page: a file mapping, or anonymous memory
 * (the heap, malloc'd arrays, the stack: pages that live in swap when memory is short),
 * and which part of a range is mapped at all.
 *
 * The answers come from /proc/self/maps, read with open(2) and read(2) into a small
 * buffer on the stack and parsed by hand: no stdio and no malloc, so a hint made in a
 * signal handler that interrupted malloc cannot deadlock here.
 *
 * Kinds are cached: each thread remembers the last mapping (or gap between mappings) it
 * asked about, and a shared table the last MAPPING_SLOTS found.  A cached answer goes
 * stale when the program unmaps memory or maps something new; the callers only choose
 * how to issue a hint by it, or drop most hints into a gap (api.c; never whether data
 * is kept), so a stale answer costs speed, never data, and a prefetch that finds mapped
 * what was cached as a gap, or the reverse, drops the cache (issue.c).  fs_mapping_clamp is not cached: it bounds what a large
 * request may touch, and reads the maps afresh the rare time a range is not wholly mapped.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#define MAPPING_SLOTS 32

struct mapping {
    uintptr_t lo, hi; /* pages [lo, hi) */
    enum fs_mem_kind kind;
    bool cow; /* a private writable mapping: its pages may be copies, not the file's */
    unsigned long dev_major, dev_minor; /* the device of a file mapping's file */
    unsigned long inode;  /* and its inode */
    uint64_t offset;      /* the file offset at page lo */
};

static struct mapping table[MAPPING_SLOTS];
static unsigned next_slot;
static unsigned long generation = 1; /* bumped by fs_mapping_forget */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Set while this thread holds `lock`: a signal handler's hint that interrupts it here
 * (the stream code looks mappings up outside api.c's entry points) gets "unknown"
 * instead of waiting for a lock its own thread holds. */
static __thread volatile sig_atomic_t holding __attribute__((tls_model("initial-exec")));

/* initial-exec: the first access in a thread never allocates (see api.c). */
static __thread struct mapping last __attribute__((tls_model("initial-exec")));
static __thread unsigned long last_generation __attribute__((tls_model("initial-exec")));

/* /proc/self/maps as a stream of bytes, read 512 at a time (a hint's stack stays small:
 * it may be a signal handler's alternate stack). */
struct maps_reader {
    off_t at; /* where the next read starts (the file is kept open: ownfd.c) */
    size_t len, pos;
    char buf[513]; /* 512 bytes a read, and fs_kept_pread's NUL */
};

static bool maps_open(struct maps_reader *r)
{
    r->at = 0;
    r->len = r->pos = 0;
    return fs_kept_fd(FS_KEPT_MAPS) >= 0;
}

static int maps_byte(struct maps_reader *r)
{
    if (r->pos == r->len) {
        const ssize_t n = fs_kept_pread(FS_KEPT_MAPS, r->buf, sizeof r->buf, r->at);
        if (n <= 0)
            return -1;
        r->at += n;
        r->len = (size_t)n;
        r->pos = 0;
    }
    return (unsigned char)r->buf[r->pos++];
}

/* A number in BASE (16 or 10) ending at a byte that is not a digit; returns that byte. */
static int maps_number(struct maps_reader *r, unsigned base, unsigned long *out)
{
    unsigned long v = 0;
    for (;;) {
        int c = maps_byte(r), d;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (base == 16 && c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else {
            *out = v;
            return c;
        }
        v = v * base + (unsigned long)d;
    }
}

/* Skip to the byte after the next occurrence of STOP; -1 at the end of the file. */
static int maps_skip_past(struct maps_reader *r, int stop)
{
    int c;
    do
        c = maps_byte(r);
    while (c != stop && c != -1);
    return c;
}

/* The next line: "start-end perms offset dev inode path".  False at the end. */
static bool maps_next(struct maps_reader *r, uintptr_t *start, uintptr_t *end,
                      unsigned long *inode, bool *cow, unsigned long dev[2], unsigned long *off)
{
    unsigned long s, e;
    int c, perms[4];
    if (maps_number(r, 16, &s) != '-' || maps_number(r, 16, &e) != ' ')
        return false;
    for (int i = 0; i < 4; i++)
        perms[i] = maps_byte(r); /* "rwxp": read, write, execute, private or shared */
    *cow = perms[1] == 'w' && perms[3] == 'p';
    if (maps_skip_past(r, ' ') != ' ' ||    /* the rest of the perms */
        maps_number(r, 16, off) != ' ' ||
        maps_number(r, 16, &dev[0]) != ':' || maps_number(r, 16, &dev[1]) != ' ' ||
        (c = maps_number(r, 10, inode)) == -1)
        return false;
    *start = s;
    *end = e;
    if (c != '\n')
        maps_skip_past(r, '\n'); /* the path (the kernel escapes newlines in it) */
    return true;
}

/* The mapping holding PAGE, read from /proc/self/maps, or the gap between mappings
 * that holds it (kind FS_MEM_NONE); false when the file cannot be read. */
static bool read_maps(uintptr_t page, struct mapping *out)
{
    struct maps_reader r;
    if (!maps_open(&r))
        return false;
    uintptr_t a = page << FORESIGHT_PAGE_SHIFT, gap_lo = 0, start, end;
    unsigned long inode, dev[2], off;
    bool cow;
    *out = (struct mapping){.lo = 0, .hi = FS_VA_LIMIT >> FORESIGHT_PAGE_SHIFT,
                            .kind = FS_MEM_NONE};
    while (maps_next(&r, &start, &end, &inode, &cow, dev, &off)) {
        if (a < start) { /* in the gap before this mapping */
            *out = (struct mapping){.lo = gap_lo >> FORESIGHT_PAGE_SHIFT,
                                    .hi = start >> FORESIGHT_PAGE_SHIFT, .kind = FS_MEM_NONE};
            break;
        }
        if (a < end) {
            *out = (struct mapping){.lo = start >> FORESIGHT_PAGE_SHIFT,
                                    .hi = end >> FORESIGHT_PAGE_SHIFT,
                                    .kind = inode != 0 ? FS_MEM_FILE : FS_MEM_ANON,
                                    .cow = cow, .dev_major = dev[0], .dev_minor = dev[1],
                                    .inode = inode, .offset = off};
            break;
        }
        gap_lo = end;
        out->lo = end >> FORESIGHT_PAGE_SHIFT;
    }
    return true;
}

enum fs_mem_kind fs_mapping_of(uintptr_t page, uintptr_t *lo, uintptr_t *hi)
{
    unsigned long gen = __atomic_load_n(&generation, __ATOMIC_RELAXED);
    if (last_generation != gen || page < last.lo || page >= last.hi) {
        struct mapping m = {0};
        bool found = false;
        if (holding) {
            *lo = *hi = 0;
            return FS_MEM_UNKNOWN;
        }
        holding = 1; /* before the lock and after it: no moment holds one without the other */
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        pthread_mutex_lock(&lock);
        for (unsigned i = 0; i < MAPPING_SLOTS && !found; i++)
            if (page >= table[i].lo && page < table[i].hi) {
                m = table[i];
                found = true;
            }
        if (!found && read_maps(page, &m)) {
            table[next_slot] = m;
            next_slot = (next_slot + 1) % MAPPING_SLOTS;
            found = true;
        }
        pthread_mutex_unlock(&lock);
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        holding = 0;
        if (!found) { /* /proc unreadable: nothing known, nothing cached */
            *lo = *hi = 0;
            return FS_MEM_UNKNOWN;
        }
        last = m;
        last_generation = gen;
    }
    *lo = last.lo;
    *hi = last.hi;
    return last.kind;
}

enum fs_mem_kind fs_mapping_kind(uintptr_t page)
{
    uintptr_t lo, hi;
    return fs_mapping_of(page, &lo, &hi);
}

bool fs_mapping_page_cache(uintptr_t page)
{
    uintptr_t lo, hi;
    return fs_mapping_of(page, &lo, &hi) == FS_MEM_FILE && !last.cow;
}

bool fs_mapping_device(uintptr_t page, unsigned long *major, unsigned long *minor)
{
    uintptr_t lo, hi;
    if (fs_mapping_of(page, &lo, &hi) != FS_MEM_FILE)
        return false;
    *major = last.dev_major;
    *minor = last.dev_minor;
    return true;
}

bool fs_mapping_file(uintptr_t page, unsigned long dev[2], unsigned long *inode,
                     uint64_t *offset, uintptr_t *hi)
{
    /* Read afresh, not from the cache: a program that unmaps a window of a file and maps
     * another in its place leaves the cache naming the old bytes, and the answer here
     * says which bytes a prefetch names elsewhere (remote.c). */
    struct mapping m;
    if (!read_maps(page, &m) || m.kind != FS_MEM_FILE)
        return false;
    dev[0] = m.dev_major;
    dev[1] = m.dev_minor;
    *inode = m.inode;
    *offset = m.offset + ((uint64_t)(page - m.lo) << FORESIGHT_PAGE_SHIFT);
    *hi = m.hi;
    return true;
}

bool fs_mapping_clamp(uintptr_t *page, size_t *npages)
{
    /* msync(MS_ASYNC) does nothing on Linux but walk the range's mappings, and fails
     * with ENOMEM at the first hole: a wholly mapped range costs one system call. */
    if (msync((void *)(*page << FORESIGHT_PAGE_SHIFT), *npages << FORESIGHT_PAGE_SHIFT,
              MS_ASYNC) == 0)
        return true;
    struct maps_reader r;
    if (!maps_open(&r))
        return false;
    uintptr_t first = *page, stop = *page + *npages, lo = 0, hi = 0, start, end;
    unsigned long inode, dev[2], off;
    bool found = false, cow;
    while (maps_next(&r, &start, &end, &inode, &cow, dev, &off)) {
        start >>= FORESIGHT_PAGE_SHIFT;
        end >>= FORESIGHT_PAGE_SHIFT;
        if (end <= first)
            continue;
        if (start >= stop || (found && start != hi))
            break; /* past the range, or a hole after the run */
        if (!found)
            lo = start > first ? start : first;
        hi = end;
        found = true;
    }
    if (!found)
        return false;
    *page = lo;
    *npages = (hi < stop ? hi : stop) - lo;
    return true;
}

void fs_mapping_forget(void)
{
    if (holding) { /* a handler's: the table stays as it is (stale answers cost speed) */
        __atomic_add_fetch(&generation, 1, __ATOMIC_RELAXED);
        return;
    }
    holding = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    pthread_mutex_lock(&lock);
    for (unsigned i = 0; i < MAPPING_SLOTS; i++)
        table[i] = (struct mapping){0};
    __atomic_add_fetch(&generation, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&lock);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    holding = 0;
}

void fs_mapping_reset(void)
{
    pthread_mutex_init(&lock, NULL);
}
