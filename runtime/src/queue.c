/*
 * queue.c — the bounded request queue between the program's threads and the
 * workers (paper Section 4.2: requests are queued and prefetching threads
 * issue them).  A request contiguous with or overlapping the newest queued one
 * of the same kind and site is merged into it, so a loop hinting page after
 * page costs the kernel one call.  A full queue drops the hint: hints are
 * nonbinding and the program must never wait for them.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "internal.h"

/* Prefetches and releases wait in separate rings of the same size: workers take
 * prefetches first, so a burst of releases (each a page-table walk in the kernel)
 * never delays the prefetches behind it, and a full release ring drops releases,
 * not prefetches. */
struct fs_ring {
    struct fs_request *slots;
    size_t head, count;
};

struct fs_queue {
    pthread_mutex_t mu;
    pthread_cond_t nonempty;
    struct fs_ring rings[2]; /* [0] prefetches, [1] releases */
    size_t cap;
    size_t coalesced;
    size_t pushed; /* requests accepted, coalesced ones included */
    bool shutdown;
};

static struct fs_ring *ring_of(struct fs_queue *q, const struct fs_request *r)
{
    return &q->rings[r->kind == FS_REQ_PREFETCH ? 0 : 1];
}

/* A ring's slots, mapped rather than allocated: the pages no request reaches are never
 * touched (calloc zeroed all 48 KiB of each ring), and fs_queue_pop keeps the requests
 * in the first slots while the workers keep up. */
static struct fs_request *map_slots(size_t slots)
{
    void *p = mmap(NULL, slots * sizeof(struct fs_request), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void unmap_slots(struct fs_request *r, size_t slots)
{
    if (r != NULL)
        munmap(r, slots * sizeof *r);
}

struct fs_queue *fs_queue_create(size_t slots)
{
    struct fs_queue *q = calloc(1, sizeof *q);
    if (q == NULL)
        return NULL;
    q->rings[0].slots = map_slots(slots);
    q->rings[1].slots = map_slots(slots);
    if (q->rings[0].slots == NULL || q->rings[1].slots == NULL) {
        unmap_slots(q->rings[0].slots, slots);
        unmap_slots(q->rings[1].slots, slots);
        free(q);
        return NULL;
    }
    q->cap = slots;
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->nonempty, NULL);
    return q;
}

void fs_queue_destroy(struct fs_queue *q)
{
    if (q == NULL)
        return;
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->nonempty);
    unmap_slots(q->rings[0].slots, q->cap);
    unmap_slots(q->rings[1].slots, q->cap);
    free(q);
}

void fs_queue_reset(struct fs_queue *q)
{
    /* After fork only this thread exists: the old lock state is meaningless. */
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->nonempty, NULL);
    q->rings[0].head = q->rings[0].count = 0;
    q->rings[1].head = q->rings[1].count = 0;
    q->shutdown = false;
}

/* Merge R into the newest queued request of its kind when they touch; true if merged. */
static bool coalesce_locked(struct fs_queue *q, struct fs_ring *g, const struct fs_request *r)
{
    if (g->count == 0)
        return false;
    struct fs_request *t = &g->slots[(g->head + g->count - 1) % q->cap];
    if (t->site != r->site)
        return false;
    uintptr_t t_end = t->page + t->npages, r_end = r->page + r->npages;
    if (r->page > t_end || r_end < t->page)
        return false;
    uintptr_t lo = r->page < t->page ? r->page : t->page;
    uintptr_t hi = r_end > t_end ? r_end : t_end;
    t->page = lo;
    t->npages = hi - lo;
    q->coalesced++;
    return true;
}

unsigned fs_queue_push(struct fs_queue *q, const struct fs_request *reqs, unsigned n)
{
    unsigned dropped = 0;
    bool added = false;
    pthread_mutex_lock(&q->mu);
    for (unsigned i = 0; i < n; i++) {
        struct fs_ring *g = ring_of(q, &reqs[i]);
        if (coalesce_locked(q, g, &reqs[i])) {
            __atomic_store_n(&q->pushed, q->pushed + 1, __ATOMIC_RELAXED);
            continue;
        }
        if (g->count == q->cap || q->shutdown) {
            dropped |= 1u << i;
            continue;
        }
        __atomic_store_n(&q->pushed, q->pushed + 1, __ATOMIC_RELAXED);
        g->slots[(g->head + g->count) % q->cap] = reqs[i];
        __atomic_store_n(&g->count, g->count + 1, __ATOMIC_RELAXED);
        added = true;
    }
    if (added)
        pthread_cond_signal(&q->nonempty);
    pthread_mutex_unlock(&q->mu);
    return dropped;
}

bool fs_queue_pop(struct fs_queue *q, struct fs_request *out)
{
    pthread_mutex_lock(&q->mu);
    while (q->rings[0].count == 0 && q->rings[1].count == 0 && !q->shutdown)
        pthread_cond_wait(&q->nonempty, &q->mu);
    struct fs_ring *g = q->rings[0].count > 0 ? &q->rings[0] : &q->rings[1];
    bool ok = g->count > 0;
    if (ok) {
        *out = g->slots[g->head];
        /* Emptied: the next request goes to the first slot again, so while the workers
         * keep up the ring's memory in use is its first page, not all of it in turn
         * (96 KiB: NAS IS under an 8 MiB cap refaulted each of its pages 130 times). */
        g->head = g->count == 1 ? 0 : (g->head + 1) % q->cap;
        __atomic_store_n(&g->count, g->count - 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&q->mu);
    return ok;
}

/* Without the lock, for callers that would only be dropped: may be briefly stale. */
bool fs_queue_full(const struct fs_queue *q, enum fs_kind kind)
{
    const struct fs_ring *g = &q->rings[kind == FS_REQ_PREFETCH ? 0 : 1];
    return __atomic_load_n(&g->count, __ATOMIC_RELAXED) >= q->cap;
}

void fs_queue_reopen(struct fs_queue *q)
{
    pthread_mutex_lock(&q->mu);
    q->shutdown = false;
    pthread_mutex_unlock(&q->mu);
}

void fs_queue_shutdown(struct fs_queue *q)
{
    pthread_mutex_lock(&q->mu);
    q->shutdown = true;
    pthread_cond_broadcast(&q->nonempty);
    pthread_mutex_unlock(&q->mu);
}

size_t fs_queue_coalesced(const struct fs_queue *q)
{
    return __atomic_load_n(&q->coalesced, __ATOMIC_RELAXED);
}

size_t fs_queue_pushed(const struct fs_queue *q)
{
    return __atomic_load_n(&q->pushed, __ATOMIC_RELAXED);
}
