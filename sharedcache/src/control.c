/*
 * control.c — prefetch throttling and data pinning (Section V): at each epoch's end the
 * epoch's counters decide, for the next K epochs (the paper's "extended epochs",
 * Section VI; K = 1 is its default, 3 its best and ours):
 *
 *   coarse throttling  client k's prefetches are dropped when k's harmful prefetches
 *                      reach T of its prefetches issued (Figure 6; METRIC_SHARE: T of
 *                      all harmful prefetches, the reading of the text);
 *   coarse pinning     client l's blocks are no prefetch's victims when l's harm-misses
 *                      reach T of all harm-misses (Figure 7);
 *   fine throttling    k's prefetches whose victim is l's block are dropped when k's
 *                      harmful prefetches affecting l reach T of k's prefetches issued
 *                      (METRIC_SHARE: T of all harmful prefetches, the text's reading,
 *                      under which no pair of n > 1/T clients that harm alike ever
 *                      reaches T: eight clients each evicting its own blocks are 1/8
 *                      of the harm apiece);
 *   fine pinning       l's blocks are no victims of k's prefetches when l's harm-misses
 *                      caused by k reach T of all harm-misses.
 *
 * T is 0.35 coarse and 0.20 fine, the paper's defaults.  Every decision holds while the
 * epoch number is below its `until`; decisions taken later extend, never shorten, it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int control_init(struct control *c, const struct iocache_params *p)
{
    memset(c, 0, sizeof *c);
    c->kind = p->control;
    c->throttle = p->throttle;
    c->pin = p->pin;
    c->threshold = p->threshold > 0 ? p->threshold : p->control == IOCACHE_FINE ? 0.20 : 0.35;
    c->k = p->k ? p->k : 3;
    c->metric = p->metric;
    c->clients = p->clients;
    size_t n = p->clients, pairs = n * n;
    c->harm = calloc(pairs, sizeof *c->harm);
    c->miss = calloc(pairs, sizeof *c->miss);
    c->throttle_until = calloc(pairs, sizeof *c->throttle_until);
    c->pin_until = calloc(pairs, sizeof *c->pin_until);
    if (!c->harm || !c->miss || !c->throttle_until || !c->pin_until) {
        control_fini(c);
        return ENOMEM;
    }
    c->now.harm = c->harm;
    c->now.miss = c->miss;
    return 0;
}

void control_fini(struct control *c)
{
    free(c->harm);
    free(c->miss);
    free(c->throttle_until);
    free(c->pin_until);
    c->harm = c->miss = NULL;
    c->throttle_until = c->pin_until = NULL;
}

static bool reaches(uint64_t part, uint64_t whole, double threshold)
{
    /* part/whole rounds as T does when they are equal, so "exactly T" counts */
    return whole > 0 && (double)part / (double)whole >= threshold;
}

static void hold(unsigned *until, unsigned epoch, unsigned k)
{
    if (*until < epoch + 1 + k)
        *until = epoch + 1 + k;
}

void control_decide(struct control *c, struct iocache_stats *st)
{
    unsigned n = c->clients, e = c->epoch;
    const struct iocache_epoch *now = &c->now;
    if (c->kind == IOCACHE_COARSE) {
        for (unsigned i = 0; i < n; i++) {
            uint64_t whole = c->metric == IOCACHE_METRIC_SHARE ? now->harmful : now->issued[i];
            if (c->throttle && reaches(now->harmful_by[i], whole, c->threshold))
                hold(&c->throttle_until[i], e, c->k);
            if (c->pin && reaches(now->harm_misses_of[i], now->harm_misses, c->threshold))
                hold(&c->pin_until[i], e, c->k);
        }
    } else if (c->kind == IOCACHE_FINE) {
        for (unsigned k = 0; k < n; k++) {
            /* k's prefetches issued this epoch (0: harm found now from older prefetches
             * throttles nothing, as coarse) or all harmful ones */
            uint64_t whole = c->metric == IOCACHE_METRIC_SHARE ? now->harmful : now->issued[k];
            for (unsigned l = 0; l < n; l++) {
                if (c->throttle && reaches(c->harm[k * n + l], whole, c->threshold))
                    hold(&c->throttle_until[k * n + l], e, c->k);
                if (c->pin && reaches(c->miss[k * n + l], now->harm_misses, c->threshold))
                    hold(&c->pin_until[l * n + k], e, c->k);
            }
        }
    }
    c->epoch = e + 1;
    memset(c->harm, 0, (size_t)n * n * sizeof *c->harm);
    memset(c->miss, 0, (size_t)n * n * sizeof *c->miss);
    struct iocache_epoch fresh = {.harm = c->harm, .miss = c->miss};
    c->now = fresh;
    st->epochs = c->epoch;
    for (unsigned i = 0; i < n; i++) {   /* the epoch starting now, per client */
        bool throttled = false, pinned = false;
        for (unsigned j = 0; j < n; j++) {
            throttled = throttled || control_throttled(c, i, j);
            pinned = pinned || control_pinned(c, i, j);
        }
        st->client[i].throttled_epochs += throttled;
        st->client[i].pinned_epochs += pinned;
    }
}

bool control_throttled(const struct control *c, unsigned k, unsigned l)
{
    if (!c->throttle)
        return false;
    if (c->kind == IOCACHE_COARSE)
        return c->epoch < c->throttle_until[k];
    return c->kind == IOCACHE_FINE && c->epoch < c->throttle_until[k * c->clients + l];
}

bool control_pinned(const struct control *c, unsigned l, unsigned k)
{
    if (!c->pin)
        return false;
    if (c->kind == IOCACHE_COARSE)
        return c->epoch < c->pin_until[l];
    return c->kind == IOCACHE_FINE && c->epoch < c->pin_until[l * c->clients + k];
}
