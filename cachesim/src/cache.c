/*
 * cache.c — one CPU's L2 as the paper's machines had it (Section 3.3): a set-associative
 * cache of physical lines with true LRU replacement in each set, from direct mapped to
 * fully associative.  It holds line ids (cs_internal.h) and knows nothing of coherence.
 *
 * Narrow sets (up to CS_SCAN_WAYS ways) are arrays in recency order, searched and
 * shifted: for one to eight ways that is a few compares in one cache line.  Wider sets
 * would cost a search of thousands of ways per reference, so each is a circular list of
 * its ways (the most recently used at mru[set], the least at its prev) with an index
 * from line id to way: every operation is O(1).  Both keep exactly the same order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cs_internal.h"

static bool indexed(const struct cs_cache *c)
{
    return c->ways > CS_SCAN_WAYS;
}

int cs_cache_init(struct cs_cache *c, uint32_t sets, uint32_t ways)
{
    memset(c, 0, sizeof *c);
    c->sets = sets;
    c->ways = ways;
    size_t slots = (size_t)sets * ways;
    c->tag = malloc(slots * sizeof *c->tag);
    if (!c->tag)
        goto fail;
    for (size_t i = 0; i < slots; i++)
        c->tag[i] = CS_NONE;
    if (indexed(c)) {
        c->prev = malloc(slots * sizeof *c->prev);
        c->next = malloc(slots * sizeof *c->next);
        c->mru = malloc((size_t)sets * sizeof *c->mru);
        if (!c->prev || !c->next || !c->mru || cs_linemap_init(&c->index, slots))
            goto fail;
        for (uint32_t s = 0; s < sets; s++) {
            uint32_t first = s * ways;
            c->mru[s] = first;
            for (uint32_t w = 0; w < ways; w++) {
                c->next[first + w] = first + (w + 1) % ways;
                c->prev[first + w] = first + (w + ways - 1) % ways;
            }
        }
    }
    return 0;
fail:
    cs_cache_free(c);
    errno = ENOMEM;
    return -1;
}

void cs_cache_free(struct cs_cache *c)
{
    free(c->tag);
    free(c->prev);
    free(c->next);
    free(c->mru);
    cs_linemap_free(&c->index);
    memset(c, 0, sizeof *c);
}

/* Indexed sets: SLOT out of its place in the circle, back in just before the MRU (at
 * the LRU end). */
static void to_lru_end(struct cs_cache *c, uint32_t set, uint32_t slot)
{
    uint32_t head = c->mru[set];
    if (slot == head) { /* rotating the circle makes the head its tail */
        c->mru[set] = c->next[slot];
        return;
    }
    if (c->prev[head] == slot)
        return;
    c->next[c->prev[slot]] = c->next[slot];
    c->prev[c->next[slot]] = c->prev[slot];
    uint32_t tail = c->prev[head];
    c->next[tail] = slot;
    c->prev[slot] = tail;
    c->next[slot] = head;
    c->prev[head] = slot;
}

bool cs_cache_lookup(struct cs_cache *c, uint32_t set, uint32_t id)
{
    if (!indexed(c)) {
        uint32_t *t = c->tag + (size_t)set * c->ways;
        if (t[0] == id)
            return true;
        for (uint32_t w = 1; w < c->ways; w++)
            if (t[w] == id) {
                memmove(t + 1, t, w * sizeof *t);
                t[0] = id;
                return true;
            }
        return false;
    }
    uint32_t head = c->mru[set];
    if (c->tag[head] == id)
        return true;
    const uint32_t *slot = cs_linemap_find(&c->index, id);
    if (!slot)
        return false;
    /* the MRU is the one after the LRU end: put it at the LRU end, then rotate */
    to_lru_end(c, set, *slot);
    c->mru[set] = *slot;
    return true;
}

uint32_t cs_cache_insert(struct cs_cache *c, uint32_t set, uint32_t id)
{
    if (!indexed(c)) {
        uint32_t *t = c->tag + (size_t)set * c->ways;
        uint32_t victim = t[c->ways - 1];
        memmove(t + 1, t, (c->ways - 1) * sizeof *t);
        t[0] = id;
        return victim;
    }
    uint32_t lru = c->prev[c->mru[set]];
    uint32_t victim = c->tag[lru];
    if (victim != CS_NONE)
        cs_linemap_remove(&c->index, victim);
    c->tag[lru] = id;
    /* cannot grow: the index was made for every slot */
    (void)cs_linemap_add(&c->index, id, lru);
    c->mru[set] = lru;
    return victim;
}

bool cs_cache_remove(struct cs_cache *c, uint32_t set, uint32_t id)
{
    if (!indexed(c)) {
        uint32_t *t = c->tag + (size_t)set * c->ways;
        for (uint32_t w = 0; w < c->ways; w++)
            if (t[w] == id) {
                memmove(t + w, t + w + 1, (c->ways - 1 - w) * sizeof *t);
                t[c->ways - 1] = CS_NONE;
                return true;
            }
        return false;
    }
    uint32_t *slot = cs_linemap_find(&c->index, id);
    if (!slot)
        return false;
    uint32_t s = *slot;
    cs_linemap_remove(&c->index, id);
    c->tag[s] = CS_NONE;
    to_lru_end(c, set, s);
    return true;
}
