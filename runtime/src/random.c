/*
 * random.c — random-access advice for indirect sites.
 *
 * The targets of an indirect reference a[b[i]] are data-dependent.  When they lie in a
 * file mapping, every fault the prefetches miss makes the kernel read the window around
 * it (read-around, up to read_ahead_kb), pages that a random pattern will not use before
 * memory loses them again, and which push out the pages it will use.  The kernel stops
 * reading around once a file's faults mostly miss, but the hinted streams of the same
 * loop keep their hits up.  So while a loop nest runs, the range an indirect site's
 * targets span in a file mapping is advised MADV_RANDOM, grown as new targets fall
 * outside it, and advised MADV_NORMAL again when the nest exits (the generated code's
 * scope cleanup calls foresight__random_end).  Anonymous memory is left alone: there
 * the flag would also make reclaim ignore the pages' references.
 */
#include <sys/mman.h>

#include "internal.h"

#define RANDOM_SLOTS 64
#define RANDOM_SLACK 64 /* pages the range grows by beyond a new target, at least */

struct random_slot {
    struct foresight_site *site; /* NULL: free */
    uintptr_t lo, hi;            /* pages advised MADV_RANDOM, [lo, hi) */
    uintptr_t vlo, vhi;          /* the mapping of the first target, [vlo, vhi) in pages */
    enum fs_mem_kind kind;       /* FS_MEM_UNKNOWN: not looked up yet */
};

static struct random_slot slots[RANDOM_SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int active; /* sites between begin and end */

static struct random_slot *find(struct foresight_site *site)
{
    for (int i = 0; i < RANDOM_SLOTS; i++)
        if (slots[i].site == site)
            return &slots[i];
    return NULL;
}

void foresight__random_begin(struct foresight_site *site)
{
    struct fs_entry e;
    if (fs_cfg.random_advice == 0 || !fs_enter(site, &e))
        return;
    pthread_mutex_lock(&lock);
    if (find(site) == NULL) {
        struct random_slot *s = find(NULL);
        if (s != NULL) { /* more nests at once than slots: the rest go without advice */
            *s = (struct random_slot){.site = site};
            __atomic_add_fetch(&active, 1, __ATOMIC_RELAXED);
        }
    }
    pthread_mutex_unlock(&lock);
    fs_leave(&e);
}

/* Dropped when reentrant: then its begin was too, as the thread it interrupted stays
 * inside the library until the handler returns. */
void foresight__random_end(struct foresight_site *site)
{
    struct fs_entry e;
    if (!fs_enter(site, &e))
        return;
    pthread_mutex_lock(&lock);
    struct random_slot *s = find(site);
    if (s != NULL) {
        if (s->hi > s->lo)
            madvise((void *)(s->lo << FORESIGHT_PAGE_SHIFT),
                    (s->hi - s->lo) << FORESIGHT_PAGE_SHIFT, MADV_NORMAL);
        *s = (struct random_slot){0};
        __atomic_sub_fetch(&active, 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&lock);
    fs_leave(&e);
}

static void advise(uintptr_t lo, uintptr_t hi)
{
    if (hi > lo && madvise((void *)(lo << FORESIGHT_PAGE_SHIFT),
                           (hi - lo) << FORESIGHT_PAGE_SHIFT, MADV_RANDOM) == 0)
        __atomic_add_fetch(&fs_global_random_pages, hi - lo, __ATOMIC_RELAXED);
}

void fs_random_note(struct foresight_site *site, uintptr_t page)
{
    if (__atomic_load_n(&active, __ATOMIC_RELAXED) == 0)
        return;
    pthread_mutex_lock(&lock);
    struct random_slot *s = find(site);
    if (s == NULL || (page >= s->lo && page < s->hi))
        goto out;
    if (s->kind == FS_MEM_UNKNOWN)
        s->kind = fs_mapping_of(page, &s->vlo, &s->vhi);
    if (s->kind != FS_MEM_FILE || page < s->vlo || page >= s->vhi)
        goto out; /* anonymous memory, or a target outside the first target's mapping */
    uintptr_t grow = (s->hi - s->lo) / 8 > RANDOM_SLACK ? (s->hi - s->lo) / 8 : RANDOM_SLACK;
    uintptr_t lo = page > s->vlo + grow ? page - grow : s->vlo;
    uintptr_t hi = page + 1 + grow < s->vhi ? page + 1 + grow : s->vhi;
    if (s->hi == s->lo) {
        advise(lo, hi);
        s->lo = lo;
        s->hi = hi;
    } else if (page < s->lo) {
        advise(lo, s->lo);
        s->lo = lo;
    } else {
        advise(s->hi, hi);
        s->hi = hi;
    }
out:
    pthread_mutex_unlock(&lock);
}

void fs_random_reset(void)
{
    pthread_mutex_init(&lock, NULL);
    for (int i = 0; i < RANDOM_SLOTS; i++)
        slots[i] = (struct random_slot){0};
    active = 0;
}
