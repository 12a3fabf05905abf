/*
 * deferred.c — releases held back while memory is plentiful.
 *
 * In auto mode a release waits for memory pressure (budget.c): in core its pages
 * would only be read again, and their marks stay so the inline filter keeps
 * absorbing hints to them.  But a program may grow past memory later, and then
 * the kernel evicts those pages without telling us: a mark left standing would
 * swallow the prefetch that brings a page back (a stencil whose first sweeps ran
 * in core faulted on every page it had touched then).  So every skipped release
 * is remembered here, coalesced with a recent one it touches, and when pressure
 * is seen the remembered ranges lose their marks.  When the list is full its
 * oldest range loses its marks at once: a cleared mark costs at most a request
 * that mincore finds unnecessary, a stale one costs a fault.
 */
#include "internal.h"

#define SLOTS 4096u
#define RECENT 8u /* coalescing looks this far back (loops release several streams) */

struct range {
    uintptr_t page;
    size_t npages;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct range ring[SLOTS];
static size_t head, count; /* oldest at ring[head] */
static size_t pending;     /* count, readable without the lock */

static struct range *slot(size_t i)
{
    return &ring[(head + i) % SLOTS];
}

/* Merge [page, page+n) into one of the newest ranges it overlaps or continues either
 * way.  Overlaps matter: a loop that releases the same pages pass after pass (one run by
 * a timer's signal handler, every 200 us) took a slot a pass, filled the list with
 * copies, and each copy pushed out cleared the marks of pages prefetched again since:
 * two thirds of its prefetches reached the library and mincore, instead of none. */
static bool coalesce_locked(uintptr_t page, size_t n)
{
    uintptr_t end = page + n;
    for (size_t k = 0; k < count && k < RECENT; k++) {
        struct range *r = slot(count - 1 - k);
        uintptr_t r_end = r->page + r->npages;
        if (page <= r_end && end >= r->page) {
            uintptr_t lo = page < r->page ? page : r->page;
            r->npages = (end > r_end ? end : r_end) - lo;
            r->page = lo;
            return true;
        }
    }
    return false;
}

void fs_deferred_add(uintptr_t page, size_t npages)
{
    pthread_mutex_lock(&mu);
    if (!coalesce_locked(page, npages)) {
        if (count == SLOTS) {
            fs_residency_clear(slot(0)->page, slot(0)->npages);
            head = (head + 1) % SLOTS;
            count--;
        }
        *slot(count) = (struct range){page, npages};
        count++;
    }
    __atomic_store_n(&pending, count, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&mu);
}

size_t fs_deferred_flush(void)
{
    if (__atomic_load_n(&pending, __ATOMIC_RELAXED) == 0)
        return 0;
    size_t cleared = 0;
    pthread_mutex_lock(&mu);
    for (size_t i = 0; i < count; i++)
        cleared += fs_residency_clear(slot(i)->page, slot(i)->npages);
    head = count = 0;
    __atomic_store_n(&pending, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&mu);
    return cleared;
}

bool fs_deferred_pending(void)
{
    return __atomic_load_n(&pending, __ATOMIC_RELAXED) != 0;
}

void fs_deferred_reset(void)
{
    pthread_mutex_init(&mu, NULL);
    head = count = pending = 0;
}
