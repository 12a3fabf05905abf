/*
 * mapping.c — which kind of memory holds a page: a file mapping, or anonymous memory
 * (the heap, malloc'd arrays, the stack: pages that live in swap when memory is short).
 *
 * The answer comes from /proc/self/maps and is cached: each thread remembers the last
 * mapping (or gap between mappings) it asked about, and a shared table the last
 * MAPPING_SLOTS found.  A cached answer goes stale when the program unmaps memory or
 * maps something new; the callers only choose how to issue a hint by it (never whether
 * data is kept), so a stale answer costs speed, never data, and a prefetch that finds
 * mapped what was cached as a gap, or the reverse, drops the cache (issue.c).
 */
#include <stdio.h>

#include "internal.h"

#define MAPPING_SLOTS 32

struct mapping {
    uintptr_t lo, hi; /* pages [lo, hi) */
    enum fs_mem_kind kind;
};

static struct mapping table[MAPPING_SLOTS];
static unsigned next_slot;
static unsigned long generation = 1; /* bumped by fs_mapping_forget */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static __thread struct mapping last;
static __thread unsigned long last_generation;

/* The mapping holding PAGE, read from /proc/self/maps, or the gap between mappings
 * that holds it (kind FS_MEM_NONE); false when the file cannot be read. */
static bool read_maps(uintptr_t page, struct mapping *out)
{
    FILE *f = fopen("/proc/self/maps", "re");
    if (f == NULL)
        return false;
    char line[512];
    uintptr_t a = page << FORESIGHT_PAGE_SHIFT, gap_lo = 0;
    *out = (struct mapping){.lo = 0, .hi = FS_VA_LIMIT >> FORESIGHT_PAGE_SHIFT,
                            .kind = FS_MEM_NONE};
    while (fgets(line, sizeof line, f) != NULL) {
        unsigned long start, end, inode;
        if (sscanf(line, "%lx-%lx %*s %*x %*s %lu", &start, &end, &inode) != 3)
            continue;
        if (a < start) { /* in the gap before this mapping */
            *out = (struct mapping){.lo = gap_lo >> FORESIGHT_PAGE_SHIFT,
                                    .hi = start >> FORESIGHT_PAGE_SHIFT, .kind = FS_MEM_NONE};
            break;
        }
        if (a < end) {
            *out = (struct mapping){.lo = start >> FORESIGHT_PAGE_SHIFT,
                                    .hi = end >> FORESIGHT_PAGE_SHIFT,
                                    .kind = inode != 0 ? FS_MEM_FILE : FS_MEM_ANON};
            break;
        }
        gap_lo = end;
        out->lo = end >> FORESIGHT_PAGE_SHIFT;
    }
    fclose(f);
    return true;
}

enum fs_mem_kind fs_mapping_of(uintptr_t page, uintptr_t *lo, uintptr_t *hi)
{
    unsigned long gen = __atomic_load_n(&generation, __ATOMIC_RELAXED);
    if (last_generation != gen || page < last.lo || page >= last.hi) {
        struct mapping m = {0};
        bool found = false;
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

void fs_mapping_forget(void)
{
    pthread_mutex_lock(&lock);
    for (unsigned i = 0; i < MAPPING_SLOTS; i++)
        table[i] = (struct mapping){0};
    __atomic_add_fetch(&generation, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&lock);
}

void fs_mapping_reset(void)
{
    pthread_mutex_init(&lock, NULL);
}
