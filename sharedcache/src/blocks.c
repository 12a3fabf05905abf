/*
 * blocks.c — the I/O node's cached blocks: where each is (an open-addressing index from
 * block number to slot) and which one goes next (LRU, LRU with aging as the header
 * defines it: Multi-Queue, or Belady's MIN).
 *
 * Slots never move: a block keeps its slot until evicted, and the evicting block takes
 * it, so callers can keep per-slot state (the simulator keeps when each block's data
 * arrive).  Each queue is a circular doubly linked list through the slots with its own
 * sentinel slot; the least recently used block is the sentinel's next.  Under MIN every
 * cached slot is also in a binary heap keyed by its block's next use (asked of the
 * caller's oracle whenever the block is inserted or referenced), the latest on top; a
 * victim search that must pass over held or protected slots visits the heap best first.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

static const unsigned AGED_REFS[QUEUES] = {1, 2, 4, 8};   /* the fewest refs of each queue */

static unsigned queue_of(unsigned refs)
{
    return refs >= 8 ? 3 : refs >= 4 ? 2 : refs >= 2 ? 1 : 0;
}

static void unlink_slot(struct blocks *t, uint32_t s)
{
    struct slot *x = &t->slot[s];
    t->slot[x->prev].next = x->next;
    t->slot[x->next].prev = x->prev;
}

static void append(struct blocks *t, uint32_t s, unsigned q)   /* at the MRU end */
{
    uint32_t head = t->capacity + q;
    struct slot *x = &t->slot[s];
    x->queue = (uint8_t)q;
    x->next = head;
    x->prev = t->slot[head].prev;
    t->slot[x->prev].next = s;
    t->slot[head].prev = s;
}

/* MIN's heap: slot A goes above slot B (ties by slot, so the order is deterministic). */
static bool above(const struct blocks *t, uint32_t a, uint32_t b)
{
    uint64_t x = t->slot[a].next_use, y = t->slot[b].next_use;
    return x != y ? x > y : a < b;
}

static void heap_place(struct blocks *t, uint32_t i, uint32_t s)
{
    t->heap[i] = s;
    t->slot[s].hpos = i;
}

static void sift(struct blocks *t, uint32_t i)
{
    uint32_t s = t->heap[i];
    while (i > 0 && above(t, s, t->heap[(i - 1) / 2])) {
        heap_place(t, i, t->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= t->nheap)
            break;
        if (c + 1 < t->nheap && above(t, t->heap[c + 1], t->heap[c]))
            c++;
        if (!above(t, t->heap[c], s))
            break;
        heap_place(t, i, t->heap[c]);
        i = c;
    }
    heap_place(t, i, s);
}

/* MIN: slot S's block was inserted or referenced at t->now; key it by its next use. */
static void rekey(struct blocks *t, uint32_t s)
{
    if (t->replacement != IOCACHE_MIN)
        return;
    t->slot[s].next_use = t->next_use(t->next_use_ctx, t->slot[s].block, t->now);
    sift(t, t->slot[s].hpos);
}

int blocks_init(struct blocks *t, uint64_t capacity, enum iocache_replacement r,
                iocache_next_use_fn next_use, void *next_use_ctx)
{
    if (capacity == 0 || capacity >= UINT32_MAX - QUEUES)
        return EINVAL;
    t->replacement = r;
    t->next_use = next_use;
    t->next_use_ctx = next_use_ctx;
    t->now = 0;
    t->nheap = 0;
    t->heap = t->scratch = NULL;
    t->capacity = (uint32_t)capacity;
    t->used = 0;
    t->clock = 0;
    uint64_t size = 16;
    unsigned bits = 4;
    while (size < 2 * capacity) {
        size <<= 1;
        bits++;
    }
    t->index_mask = size - 1;
    t->index_shift = 64 - bits;
    t->slot = calloc(capacity + QUEUES, sizeof *t->slot);
    t->index = calloc(size, sizeof *t->index);
    if (r == IOCACHE_MIN) {
        t->heap = calloc(capacity, sizeof *t->heap);
        t->scratch = calloc(capacity, sizeof *t->scratch);
    }
    if (!t->slot || !t->index || (r == IOCACHE_MIN && (!t->heap || !t->scratch))) {
        blocks_fini(t);
        return ENOMEM;
    }
    for (unsigned q = 0; q < QUEUES; q++) {
        uint32_t head = t->capacity + q;
        t->slot[head].next = t->slot[head].prev = head;
    }
    return 0;
}

void blocks_fini(struct blocks *t)
{
    free(t->slot);
    free(t->index);
    free(t->heap);
    free(t->scratch);
    t->slot = NULL;
    t->index = NULL;
    t->heap = t->scratch = NULL;
}

uint32_t blocks_find(const struct blocks *t, uint64_t block)
{
    for (uint64_t i = iocache_hash(block, t->index_shift);; i = (i + 1) & t->index_mask) {
        uint32_t v = t->index[i];
        if (v == 0)
            return NONE;
        if (t->slot[v - 1].block == block)
            return v - 1;
    }
}

static void index_remove(struct blocks *t, uint64_t block)
{
    uint64_t i = iocache_hash(block, t->index_shift);
    while (t->slot[t->index[i] - 1].block != block)
        i = (i + 1) & t->index_mask;
    /* backward-shift deletion: later entries of the probe run move into the hole */
    for (uint64_t j = (i + 1) & t->index_mask;; j = (j + 1) & t->index_mask) {
        uint32_t v = t->index[j];
        if (v == 0)
            break;
        uint64_t home = iocache_hash(t->slot[v - 1].block, t->index_shift);
        if (((j - home) & t->index_mask) >= ((j - i) & t->index_mask)) {
            t->index[i] = v;
            i = j;
        }
    }
    t->index[i] = 0;
}

static void index_insert(struct blocks *t, uint64_t block, uint32_t s)
{
    uint64_t i = iocache_hash(block, t->index_shift);
    while (t->index[i] != 0)
        i = (i + 1) & t->index_mask;
    t->index[i] = s + 1;
}

bool blocks_full(const struct blocks *t)
{
    return t->used == t->capacity;
}

uint32_t blocks_insert(struct blocks *t, uint64_t block, uint32_t victim, unsigned owner,
                       bool prefetched)
{
    uint32_t s;
    bool fresh = victim == NONE;
    if (fresh) {
        s = t->used++;
    } else {
        s = victim;
        index_remove(t, t->slot[s].block);
        unlink_slot(t, s);
    }
    struct slot *x = &t->slot[s];
    x->block = block;
    x->owner = (uint16_t)owner;
    x->unreferenced = true;
    x->holds = 0;
    x->refs = 0;
    x->last_ref = t->clock;
    index_insert(t, block, s);
    append(t, s, 0);
    if (t->replacement == IOCACHE_MIN && fresh) {   /* keyed below, as a reference or not */
        x->next_use = 0;
        heap_place(t, t->nheap++, s);
    }
    if (!prefetched)
        blocks_reference(t, s, owner);
    else
        rekey(t, s);
    return s;
}

/* Multi-Queue's aging: the least recently used block of each upper queue, unreferenced
 * for longer than the cache holds blocks, moves down one queue. */
static void age(struct blocks *t)
{
    for (unsigned q = 1; q < QUEUES; q++) {
        uint32_t s = t->slot[t->capacity + q].next;
        if (s >= t->capacity || t->clock - t->slot[s].last_ref <= t->capacity)
            continue;
        unlink_slot(t, s);
        t->slot[s].refs = (uint8_t)AGED_REFS[q - 1];
        t->slot[s].last_ref = t->clock;
        append(t, s, q - 1);
    }
}

void blocks_reference(struct blocks *t, uint32_t s, unsigned client)
{
    struct slot *x = &t->slot[s];
    x->owner = (uint16_t)client;
    x->unreferenced = false;
    if (x->refs < UINT8_MAX)
        x->refs++;
    x->last_ref = t->clock++;
    unlink_slot(t, s);
    append(t, s, t->replacement == IOCACHE_LRU_AGING ? queue_of(x->refs) : 0);
    if (t->replacement == IOCACHE_LRU_AGING)
        age(t);
    rekey(t, s);
}

/* MIN's victim: the heap's places best first, through a second heap of places in
 * t->scratch (when the top may go, it is the only one visited). */
static bool place_above(const struct blocks *t, uint32_t i, uint32_t j)
{
    return above(t, t->heap[i], t->heap[j]);
}

static void frontier_push(const struct blocks *t, uint32_t *n, uint32_t place)
{
    uint32_t *q = t->scratch, i = (*n)++;
    for (; i > 0 && place_above(t, place, q[(i - 1) / 2]); i = (i - 1) / 2)
        q[i] = q[(i - 1) / 2];
    q[i] = place;
}

static uint32_t frontier_pop(const struct blocks *t, uint32_t *n)
{
    uint32_t *q = t->scratch, top = q[0], last = q[--*n], i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && place_above(t, q[c + 1], q[c]))
            c++;
        if (!place_above(t, q[c], last))
            break;
        q[i] = q[c];
        i = c;
    }
    if (*n)
        q[i] = last;
    return top;
}

static uint32_t min_victim(const struct blocks *t, blocks_skip_fn skip, const void *ctx,
                           uint64_t *skipped)
{
    uint32_t n = 0;
    if (t->nheap)
        frontier_push(t, &n, 0);
    while (n) {
        uint32_t i = frontier_pop(t, &n), s = t->heap[i];
        if (!t->slot[s].holds) {
            if (!skip || !skip(ctx, &t->slot[s]))
                return s;
            if (skipped)
                ++*skipped;
        }
        for (uint32_t c = 2 * i + 1; c <= 2 * i + 2 && c < t->nheap; c++)
            frontier_push(t, &n, c);
    }
    return NONE;
}

uint32_t blocks_victim(const struct blocks *t, blocks_skip_fn skip, const void *ctx,
                       uint64_t *skipped)
{
    if (t->replacement == IOCACHE_MIN)
        return min_victim(t, skip, ctx, skipped);
    for (unsigned q = 0; q < QUEUES; q++) {
        uint32_t head = t->capacity + q;
        for (uint32_t s = t->slot[head].next; s != head; s = t->slot[s].next) {
            if (t->slot[s].holds)
                continue;
            if (!skip || !skip(ctx, &t->slot[s]))
                return s;
            if (skipped)
                ++*skipped;
        }
    }
    return NONE;
}
