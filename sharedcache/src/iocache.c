/*
 * iocache.c — the policy interface of foresight_iocache.h: a request's path through the
 * blocks (replacement), the shadows (harm accounting) and the control (throttling and
 * pinning), and the optimal oracle of Section VI (Figure 21), which drops a prefetch
 * exactly when its victim is needed before the block it brings.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void iocache_params_default(struct iocache_params *p)
{
    memset(p, 0, sizeof *p);
    p->replacement = IOCACHE_LRU_AGING;
    p->control = IOCACHE_FINE;
    p->throttle = true;
    p->pin = true;
    p->metric = IOCACHE_METRIC_RATIO;
}

const char *iocache_params_error(const struct iocache_params *p)
{
    if (p->capacity == 0 || p->capacity >= UINT32_MAX - QUEUES)
        return "cache capacity must be at least one block (and below 2^32 blocks)";
    if (p->clients == 0 || p->clients > IOCACHE_MAX_CLIENTS)
        return "clients must be 1 to 256";
    if (p->replacement != IOCACHE_LRU && p->replacement != IOCACHE_LRU_AGING &&
        p->replacement != IOCACHE_MIN)
        return "unknown replacement (valid: lru, lru-aging, min)";
    if (p->control != IOCACHE_PLAIN && p->control != IOCACHE_COARSE &&
        p->control != IOCACHE_FINE && p->control != IOCACHE_OPTIMAL)
        return "unknown control (valid: plain, coarse, fine, optimal)";
    if (!(p->threshold >= 0 && p->threshold <= 1))
        return "threshold must be in (0, 1]";
    if (p->metric != IOCACHE_METRIC_RATIO && p->metric != IOCACHE_METRIC_SHARE)
        return "unknown metric (valid: ratio, share)";
    if (p->shadows >= UINT32_MAX)
        return "shadows must be below 2^32";
    if (p->control == IOCACHE_OPTIMAL && !p->next_use)
        return "the optimal control needs a next-use oracle";
    if (p->replacement == IOCACHE_MIN && !p->next_use)
        return "the min replacement needs a next-use oracle";
    if (p->replacement == IOCACHE_MIN && p->capacity >= (uint64_t)1 << 31)
        return "the min replacement takes below 2^31 blocks";
    return NULL;
}

int iocache_create(const struct iocache_params *p, struct iocache **out)
{
    *out = NULL;
    if (iocache_params_error(p))
        return EINVAL;
    struct iocache *c = calloc(1, sizeof *c);
    if (!c)
        return ENOMEM;
    int err = blocks_init(&c->blocks, p->capacity, p->replacement, p->next_use,
                          p->next_use_ctx);
    if (!err)
        err = shadows_init(&c->shadows, p->shadows ? p->shadows : p->capacity);
    if (!err)
        err = control_init(&c->control, p);
    if (err) {
        iocache_free(c);
        return err;
    }
    c->next_use = p->next_use;
    c->next_use_ctx = p->next_use_ctx;
    c->st.clients = p->clients;
    *out = c;
    return 0;
}

void iocache_free(struct iocache *c)
{
    if (!c)
        return;
    blocks_fini(&c->blocks);
    shadows_fini(&c->shadows);
    control_fini(&c->control);
    free(c);
}

static void evicting(struct iocache *c, uint32_t victim, struct iocache_outcome *out)
{
    const struct slot *v = &c->blocks.slot[victim];
    out->evicted = true;
    out->victim = v->block;
    out->victim_unused = v->unreferenced;
    if (v->unreferenced)
        c->st.client[v->owner].unused++;
}

int iocache_access(struct iocache *c, unsigned client, uint64_t block, bool write, uint64_t now,
                   struct iocache_outcome *out)
{
    memset(out, 0, sizeof *out);
    if (client >= c->control.clients)
        return EINVAL;
    c->blocks.now = now;
    struct iocache_client_stats *cs = &c->st.client[client];
    cs->accesses++;
    cs->writes += write;
    uint32_t s = blocks_find(&c->blocks, block);
    shadows_reference(c, block, client, s == NONE);
    if (s != NONE) {
        cs->hits++;
        if (c->blocks.slot[s].unreferenced)
            c->st.client[c->blocks.slot[s].owner].useful++;
        blocks_reference(&c->blocks, s, client);
        out->result = IOCACHE_HIT;
        out->slot = s;
        return 0;
    }
    cs->misses++;
    uint32_t victim = NONE;
    if (blocks_full(&c->blocks)) {   /* pins protect against prefetches only */
        victim = blocks_victim(&c->blocks, NULL, NULL, NULL);
        if (victim == NONE) {        /* every block held by the caller */
            out->result = IOCACHE_BYPASS;
            out->slot = NONE;
            return 0;
        }
        evicting(c, victim, out);
    }
    out->result = IOCACHE_MISS;
    out->slot = blocks_insert(&c->blocks, block, victim, client, false);
    return 0;
}

struct pin_ctx {
    const struct control *control;
    unsigned prefetcher;
};

static bool pinned_against(const void *ctx, const struct slot *s)
{
    const struct pin_ctx *p = ctx;
    return control_pinned(p->control, s->owner, p->prefetcher);
}

static int dropped(struct iocache_outcome *out, enum iocache_drop why, uint64_t *count)
{
    out->result = IOCACHE_DROPPED;
    out->drop = why;
    ++*count;
    return 0;
}

int iocache_prefetch(struct iocache *c, unsigned client, uint64_t block, uint64_t now,
                     struct iocache_outcome *out)
{
    memset(out, 0, sizeof *out);
    const struct control *ctl = &c->control;
    if (client >= ctl->clients)
        return EINVAL;
    c->blocks.now = now;
    struct iocache_client_stats *cs = &c->st.client[client];
    cs->prefetches++;
    uint32_t s = blocks_find(&c->blocks, block);
    if (s != NONE) {
        cs->cached++;
        out->result = IOCACHE_CACHED;
        out->slot = s;
        return 0;
    }
    if (ctl->kind == IOCACHE_COARSE && control_throttled(ctl, client, 0))
        return dropped(out, IOCACHE_DROP_THROTTLED, &cs->dropped_throttled);
    uint32_t victim = NONE;
    if (blocks_full(&c->blocks)) {
        struct pin_ctx pins = {ctl, client};
        bool pinning = ctl->pin && (ctl->kind == IOCACHE_COARSE || ctl->kind == IOCACHE_FINE);
        uint64_t skipped = 0;
        victim = blocks_victim(&c->blocks, pinning ? pinned_against : NULL, &pins, &skipped);
        c->st.pin_skips += skipped;
        if (victim == NONE)
            return dropped(out, skipped ? IOCACHE_DROP_PINNED : IOCACHE_DROP_NOROOM,
                           skipped ? &cs->dropped_pinned : &cs->dropped_noroom);
        const struct slot *v = &c->blocks.slot[victim];
        if (ctl->kind == IOCACHE_FINE && control_throttled(ctl, client, v->owner))
            return dropped(out, IOCACHE_DROP_THROTTLED, &cs->dropped_throttled);
        if (ctl->kind == IOCACHE_OPTIMAL &&
            c->next_use(c->next_use_ctx, v->block, now) <
                c->next_use(c->next_use_ctx, block, now))
            return dropped(out, IOCACHE_DROP_ORACLE, &cs->dropped_oracle);
        evicting(c, victim, out);
        shadows_add(c, v->block, block, client);
    }
    cs->admitted++;
    c->control.now.issued[client]++;
    out->result = IOCACHE_ADMITTED;
    out->slot = blocks_insert(&c->blocks, block, victim, client, true);
    return 0;
}

int iocache_hold(struct iocache *c, uint32_t slot)
{
    if (slot >= c->blocks.used || c->blocks.slot[slot].holds == UINT16_MAX)
        return EINVAL;
    c->blocks.slot[slot].holds++;
    return 0;
}

void iocache_unhold(struct iocache *c, uint32_t slot)
{
    if (slot < c->blocks.used && c->blocks.slot[slot].holds)
        c->blocks.slot[slot].holds--;
}

uint32_t iocache_lookup(const struct iocache *c, uint64_t block)
{
    return blocks_find(&c->blocks, block);
}

void iocache_epoch_end(struct iocache *c)
{
    control_decide(&c->control, &c->st);
}

const struct iocache_epoch *iocache_epoch(const struct iocache *c)
{
    return &c->control.now;
}

unsigned iocache_epoch_number(const struct iocache *c)
{
    return c->control.epoch;
}

/* Both clients in range; for coarse decisions the other one is not read. */
static bool in_range(const struct control *ctl, unsigned mine, unsigned other)
{
    return mine < ctl->clients && (other < ctl->clients || ctl->kind == IOCACHE_COARSE);
}

bool iocache_throttled(const struct iocache *c, unsigned k, unsigned l)
{
    return in_range(&c->control, k, l) && control_throttled(&c->control, k, l);
}

bool iocache_pinned(const struct iocache *c, unsigned l, unsigned k)
{
    return in_range(&c->control, l, k) && control_pinned(&c->control, l, k);
}

void iocache_stats(const struct iocache *c, struct iocache_stats *out)
{
    *out = c->st;
}
