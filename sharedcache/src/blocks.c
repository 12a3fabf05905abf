/*
 * blocks.c — the I/O node's cached blocks: where each is (an open-addressing index from
 * block number to slot) and which one goes next (LRU, or LRU with aging as the header
 * defines it: Multi-Queue).
 *
 * Slots never move: a block keeps its slot until evicted, and the evicting block takes
 * it, so callers can keep per-slot state (the simulator keeps when each block's data
 * arrive).  Each queue is a circular doubly linked list through the slots with its own
 * sentinel slot; the least recently used block is the sentinel's next.
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

int blocks_init(struct blocks *t, uint64_t capacity, enum iocache_replacement r)
{
    if (capacity == 0 || capacity >= UINT32_MAX - QUEUES)
        return EINVAL;
    t->replacement = r;
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
    if (!t->slot || !t->index) {
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
    t->slot = NULL;
    t->index = NULL;
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
    if (victim == NONE) {
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
    if (!prefetched)
        blocks_reference(t, s, owner);
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
}

uint32_t blocks_victim(const struct blocks *t, blocks_skip_fn skip, const void *ctx,
                       uint64_t *skipped)
{
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
