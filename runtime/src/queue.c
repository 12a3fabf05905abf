/*
 * queue.c — the bounded request queue between the program's threads and the
 * workers (paper Section 4.2: requests are queued and prefetching threads
 * issue them).  A request contiguous with or overlapping the newest queued one
 * of the same kind and site is merged into it, so a loop hinting page after
 * page costs the kernel one call.  A full queue drops the hint: hints are
 * nonbinding and the program must never wait for them.
 */
#include <stdlib.h>

#include "internal.h"

struct fs_queue {
    pthread_mutex_t mu;
    pthread_cond_t nonempty;
    struct fs_request *slots;
    size_t cap, head, count;
    size_t coalesced;
    bool shutdown;
};

struct fs_queue *fs_queue_create(size_t slots)
{
    struct fs_queue *q = calloc(1, sizeof *q);
    if (q == NULL)
        return NULL;
    q->slots = calloc(slots, sizeof *q->slots);
    if (q->slots == NULL) {
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
    free(q->slots);
    free(q);
}

void fs_queue_reset(struct fs_queue *q)
{
    /* After fork only this thread exists: the old lock state is meaningless. */
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->nonempty, NULL);
    q->head = q->count = 0;
    q->shutdown = false;
}

/* Merge R into the newest queued request when they touch; true if merged. */
static bool coalesce_locked(struct fs_queue *q, const struct fs_request *r)
{
    if (q->count == 0)
        return false;
    struct fs_request *t = &q->slots[(q->head + q->count - 1) % q->cap];
    if (t->kind != r->kind || t->site != r->site)
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
        if (coalesce_locked(q, &reqs[i]))
            continue;
        if (q->count == q->cap || q->shutdown) {
            dropped |= 1u << i;
            continue;
        }
        q->slots[(q->head + q->count) % q->cap] = reqs[i];
        q->count++;
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
    while (q->count == 0 && !q->shutdown)
        pthread_cond_wait(&q->nonempty, &q->mu);
    bool ok = q->count > 0;
    if (ok) {
        *out = q->slots[q->head];
        q->head = (q->head + 1) % q->cap;
        q->count--;
    }
    pthread_mutex_unlock(&q->mu);
    return ok;
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
