/*
 * shadows.c — which prefetches were harmful (Section IV: "a prefetch that leads to the
 * removal of a data block from the cache and the prefetched data block is referenced
 * only after the reference to the removed block").
 *
 * Each eviction by a prefetch leaves a shadow naming the victim and the prefetched block
 * (the paper's "record the block it discards, and then later check whether the prefetched
 * block or the discarded block is accessed first").  A reference to either resolves it.
 * The shadows are a ring of fixed size, like Linux's workingset shadow entries: a shadow
 * still open when its place is needed again counts as unresolved.  Two hashed chains (by
 * victim, by prefetched block) find a block's shadows in constant expected time.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

int shadows_init(struct shadows *h, uint64_t count)
{
    if (count == 0 || count >= UINT32_MAX)
        return EINVAL;
    uint64_t size = 16;
    unsigned bits = 4;
    while (size < count) {
        size <<= 1;
        bits++;
    }
    h->count = (uint32_t)count;
    h->next = 0;
    h->mask = size - 1;
    h->shift = 64 - bits;
    h->ring = calloc(count, sizeof *h->ring);
    h->vhead = malloc(size * sizeof *h->vhead);
    h->phead = malloc(size * sizeof *h->phead);
    if (!h->ring || !h->vhead || !h->phead) {
        shadows_fini(h);
        return ENOMEM;
    }
    for (uint64_t i = 0; i < size; i++)
        h->vhead[i] = h->phead[i] = NONE;
    return 0;
}

void shadows_fini(struct shadows *h)
{
    free(h->ring);
    free(h->vhead);
    free(h->phead);
    h->ring = NULL;
    h->vhead = h->phead = NULL;
}

static void unlink_shadow(struct shadows *h, uint32_t i)
{
    struct shadow *s = &h->ring[i];
    if (s->vprev != NONE)
        h->ring[s->vprev].vnext = s->vnext;
    else
        h->vhead[iocache_hash(s->victim, h->shift)] = s->vnext;
    if (s->vnext != NONE)
        h->ring[s->vnext].vprev = s->vprev;
    if (s->pprev != NONE)
        h->ring[s->pprev].pnext = s->pnext;
    else
        h->phead[iocache_hash(s->prefetched, h->shift)] = s->pnext;
    if (s->pnext != NONE)
        h->ring[s->pnext].pprev = s->pprev;
    s->open = false;
}

void shadows_add(struct iocache *c, uint64_t victim, uint64_t prefetched, unsigned prefetcher)
{
    struct shadows *h = &c->shadows;
    uint32_t i = h->next;
    h->next = h->next + 1 == h->count ? 0 : h->next + 1;
    struct shadow *s = &h->ring[i];
    if (s->open) {
        unlink_shadow(h, i);
        c->st.unresolved++;
        c->st.open_shadows--;
    }
    s->victim = victim;
    s->prefetched = prefetched;
    s->prefetcher = (uint16_t)prefetcher;
    s->open = true;
    uint32_t *vh = &h->vhead[iocache_hash(victim, h->shift)];
    uint32_t *ph = &h->phead[iocache_hash(prefetched, h->shift)];
    s->vprev = s->pprev = NONE;
    s->vnext = *vh;
    s->pnext = *ph;
    if (*vh != NONE)
        h->ring[*vh].vprev = i;
    if (*ph != NONE)
        h->ring[*ph].pprev = i;
    *vh = *ph = i;
    c->st.open_shadows++;
}

/* CLIENT references BLOCK (MISS: not cached).  Every open shadow with BLOCK as victim
 * was harmful; the newest of them is charged with the miss.  Every open shadow with
 * BLOCK as the prefetched block was benign. */
void shadows_reference(struct iocache *c, uint64_t block, unsigned client, bool miss)
{
    struct shadows *h = &c->shadows;
    struct control *ctl = &c->control;
    unsigned n = ctl->clients;
    bool charged = false;
    uint32_t i = h->vhead[iocache_hash(block, h->shift)];
    while (i != NONE) {
        uint32_t next = h->ring[i].vnext;
        if (h->ring[i].victim == block) {
            unsigned k = h->ring[i].prefetcher;
            unlink_shadow(h, i);
            c->st.open_shadows--;
            c->st.harmful++;
            c->st.client[k].harmful++;
            if (k == client)
                c->st.intra++;
            else
                c->st.inter++;
            ctl->now.harmful++;
            ctl->now.harmful_by[k]++;
            ctl->harm[k * n + client]++;
            if (miss && !charged) {
                charged = true;
                c->st.client[client].harm_misses++;
                ctl->now.harm_misses++;
                ctl->now.harm_misses_of[client]++;
                ctl->miss[k * n + client]++;
            }
        }
        i = next;
    }
    i = h->phead[iocache_hash(block, h->shift)];
    while (i != NONE) {
        uint32_t next = h->ring[i].pnext;
        if (h->ring[i].prefetched == block) {
            unlink_shadow(h, i);
            c->st.open_shadows--;
            c->st.benign++;
            c->st.client[h->ring[i].prefetcher].benign++;
        }
        i = next;
    }
}
