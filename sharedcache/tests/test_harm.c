/*
 * test_harm.c — harmful-prefetch accounting (shadows.c) and the interface's argument
 * checks, with control IOCACHE_PLAIN and LRU.  It proves:
 * - a prefetch of k that evicts v, v then referenced by l before the prefetched block, is
 *   harmful: k is charged, l's miss on v is l's harm-miss, and the epoch's counters
 *   (harmful, harm_misses, harmful_by, harm_misses_of, harm[k*n+l], miss[k*n+l]) agree;
 * - the prefetched block referenced first makes it benign;
 * - with a ring of one shadow, a second eviction by a prefetch drops the first shadow
 *   still open: unresolved, and v's later miss is then no harm;
 * - k = l counts intra, k != l inter;
 * - a prefetch that finds its block cached, or fills a free slot, leaves no shadow;
 * - a prefetch is not a reference: prefetching v back resolves nothing; v's later
 *   access is harmful but a hit, so no harm-miss; a miss on a victim of several
 *   harmful prefetches is one harm-miss;
 * - useful (referenced before eviction) and unused (evicted unreferenced, the outcome's
 *   victim_unused) are counted for the prefetching client;
 * - client ids out of range are EINVAL; bad parameters are named by
 *   iocache_params_error and make iocache_create fail with EINVAL and *out NULL.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "check.h"
#include "requests.h"
#include "foresight_iocache.h"

enum { V = 10, W = 11, P = 12, Q = 13, R = 14, S = 15, T = 16, X = 17 };


static struct iocache *make(uint64_t capacity, unsigned clients, uint64_t shadows)
{
    struct iocache_params p;
    iocache_params_default(&p);
    p.capacity = capacity;
    p.clients = clients;
    p.replacement = IOCACHE_LRU;
    p.control = IOCACHE_PLAIN;
    p.shadows = shadows;
    struct iocache *c = NULL;
    CHECK_EQ(iocache_create(&p, &c), 0);
    CHECK(c != NULL);
    return c;
}

/* Client 0 prefetches P, evicting client 1's V; client 1 then misses on V. */
static void harmful(void)
{
    struct iocache *c = make(2, 2, 0);
    acc(c, 1, V);
    acc(c, 1, W);
    struct iocache_outcome o = pf(c, 0, P);          /* W P */
    CHECK_EQ(o.result, IOCACHE_ADMITTED);
    CHECK(o.evicted);
    CHECK_EQ(o.victim, V);
    CHECK(!o.victim_unused);
    struct iocache_stats st = stats(c);
    CHECK_EQ(st.open_shadows, 1);
    CHECK_EQ(st.harmful, 0);

    o = acc(c, 1, V);                                /* P V */
    CHECK_EQ(o.result, IOCACHE_MISS);
    CHECK_EQ(o.victim, W);
    st = stats(c);
    CHECK_EQ(st.harmful, 1);
    CHECK_EQ(st.benign, 0);
    CHECK_EQ(st.unresolved, 0);
    CHECK_EQ(st.inter, 1);
    CHECK_EQ(st.intra, 0);
    CHECK_EQ(st.open_shadows, 0);
    CHECK_EQ(st.client[0].harmful, 1);
    CHECK_EQ(st.client[1].harmful, 0);
    CHECK_EQ(st.client[1].harm_misses, 1);
    CHECK_EQ(st.client[0].harm_misses, 0);

    const struct iocache_epoch *e = iocache_epoch(c);
    CHECK_EQ(e->harmful, 1);
    CHECK_EQ(e->harm_misses, 1);
    CHECK_EQ(e->issued[0], 1);
    CHECK_EQ(e->issued[1], 0);
    CHECK_EQ(e->harmful_by[0], 1);
    CHECK_EQ(e->harmful_by[1], 0);
    CHECK_EQ(e->harm_misses_of[1], 1);
    CHECK_EQ(e->harm_misses_of[0], 0);
    for (unsigned k = 0; k < 2; k++)
        for (unsigned l = 0; l < 2; l++) {
            CHECK_EQ(e->harm[k * 2 + l], k == 0 && l == 1);
            CHECK_EQ(e->miss[k * 2 + l], k == 0 && l == 1);
        }

    o = acc(c, 0, P);                                /* resolved already: not benign too */
    CHECK_EQ(o.result, IOCACHE_HIT);
    st = stats(c);
    CHECK_EQ(st.benign, 0);
    CHECK_EQ(st.harmful, 1);
    CHECK_EQ(st.client[0].useful, 1);

    iocache_epoch_end(c);                            /* the epoch's counters reset */
    e = iocache_epoch(c);
    CHECK_EQ(e->harmful, 0);
    CHECK_EQ(e->harm_misses, 0);
    CHECK_EQ(e->issued[0], 0);
    CHECK_EQ(e->harmful_by[0], 0);
    CHECK_EQ(e->harm_misses_of[1], 0);
    CHECK_EQ(e->harm[1], 0);
    CHECK_EQ(e->miss[1], 0);
    CHECK_EQ(iocache_epoch_number(c), 1);
    st = stats(c);
    CHECK_EQ(st.harmful, 1);                         /* the totals do not */
    CHECK_EQ(st.epochs, 1);
    iocache_free(c);
}

/* The prefetched block referenced before the victim: benign, whoever references. */
static void benign(void)
{
    struct iocache *c = make(2, 2, 0);
    acc(c, 1, V);
    acc(c, 1, W);
    pf(c, 0, P);                                     /* evicts V */
    struct iocache_outcome o = acc(c, 1, P);
    CHECK_EQ(o.result, IOCACHE_HIT);
    o = acc(c, 1, V);
    CHECK_EQ(o.result, IOCACHE_MISS);
    struct iocache_stats st = stats(c);
    CHECK_EQ(st.benign, 1);
    CHECK_EQ(st.client[0].benign, 1);
    CHECK_EQ(st.harmful, 0);
    CHECK_EQ(st.open_shadows, 0);
    CHECK_EQ(st.client[1].harm_misses, 0);
    CHECK_EQ(iocache_epoch(c)->harmful, 0);
    CHECK_EQ(iocache_epoch(c)->harm_misses, 0);
    iocache_free(c);
}

/* One shadow kept: the second prefetch eviction drops the first, still open. */
static void unresolved(void)
{
    struct iocache *c = make(2, 1, 1);
    acc(c, 0, V);
    acc(c, 0, W);
    pf(c, 0, P);                                     /* evicts V: shadow (V, P) */
    CHECK_EQ(stats(c).open_shadows, 1);
    struct iocache_outcome o = pf(c, 0, Q);          /* evicts W: (V, P) pushed out */
    CHECK_EQ(o.victim, W);
    struct iocache_stats st = stats(c);
    CHECK_EQ(st.unresolved, 1);
    CHECK_EQ(st.open_shadows, 1);
    acc(c, 0, V);                                    /* its shadow is gone: no harm */
    CHECK_EQ(stats(c).harmful, 0);
    acc(c, 0, W);                                    /* (W, Q) is still open: harmful */
    st = stats(c);
    CHECK_EQ(st.harmful, 1);
    CHECK_EQ(st.unresolved, 1);
    CHECK_EQ(st.open_shadows, 0);
    iocache_free(c);
}

/* k = l is intra-client harm, k != l inter-client; harm[k*n+l] by pair. */
static void intra_inter(void)
{
    struct iocache *c = make(1, 2, 0);
    acc(c, 0, V);
    pf(c, 0, P);                                     /* evicts V */
    acc(c, 0, V);                                    /* k = l = 0 */
    struct iocache_stats st = stats(c);
    CHECK_EQ(st.intra, 1);
    CHECK_EQ(st.inter, 0);
    acc(c, 1, W);
    pf(c, 0, Q);                                     /* evicts W */
    acc(c, 1, W);                                    /* k = 0, l = 1 */
    acc(c, 0, X);
    pf(c, 1, R);                                     /* evicts X */
    acc(c, 0, X);                                    /* k = 1, l = 0 */
    st = stats(c);
    CHECK_EQ(st.intra, 1);
    CHECK_EQ(st.inter, 2);
    CHECK_EQ(st.harmful, 3);
    const struct iocache_epoch *e = iocache_epoch(c);
    CHECK_EQ(e->harm[0 * 2 + 0], 1);
    CHECK_EQ(e->harm[0 * 2 + 1], 1);
    CHECK_EQ(e->harm[1 * 2 + 0], 1);
    CHECK_EQ(e->harm[1 * 2 + 1], 0);
    CHECK_EQ(e->harm_misses_of[0], 2);
    CHECK_EQ(e->harm_misses_of[1], 1);
    CHECK_EQ(e->harmful_by[0], 2);
    CHECK_EQ(e->harmful_by[1], 1);
    iocache_free(c);
}

/* A prefetch into a free slot, or of a cached block, evicts nothing: no shadow. */
static void no_eviction_no_shadow(void)
{
    struct iocache *c = make(2, 2, 0);
    struct iocache_outcome o = pf(c, 0, P);
    CHECK_EQ(o.result, IOCACHE_ADMITTED);
    CHECK(!o.evicted);
    uint32_t p_slot = o.slot;
    struct iocache_outcome a = acc(c, 0, V);
    CHECK(!a.evicted);
    o = pf(c, 1, V);
    CHECK_EQ(o.result, IOCACHE_CACHED);
    CHECK_EQ(o.slot, a.slot);
    CHECK(!o.evicted);
    o = pf(c, 1, P);
    CHECK_EQ(o.result, IOCACHE_CACHED);
    CHECK_EQ(o.slot, p_slot);
    struct iocache_stats st = stats(c);
    CHECK_EQ(st.open_shadows, 0);
    CHECK_EQ(st.client[0].prefetches, 1);
    CHECK_EQ(st.client[0].admitted, 1);
    CHECK_EQ(st.client[1].prefetches, 2);
    CHECK_EQ(st.client[1].cached, 2);
    CHECK_EQ(st.client[1].admitted, 0);
    CHECK_EQ(iocache_epoch(c)->issued[0], 1);
    CHECK_EQ(iocache_epoch(c)->issued[1], 0);
    acc(c, 1, V);
    acc(c, 1, P);
    st = stats(c);
    CHECK_EQ(st.harmful + st.benign + st.unresolved, 0);
    iocache_free(c);
}

/* Prefetching the victim back is no reference: its shadow stays open; the access then
 * finds it cached, so the prefetch was harmful but caused no harm-miss. */
static void prefetch_is_not_a_reference(void)
{
    struct iocache *c = make(2, 2, 0);
    acc(c, 1, V);
    acc(c, 1, W);
    pf(c, 0, P);                                     /* (V, P); W P */
    struct iocache_outcome o = pf(c, 0, V);          /* (W, V); P V */
    CHECK_EQ(o.result, IOCACHE_ADMITTED);
    CHECK_EQ(o.victim, W);
    struct iocache_stats st = stats(c);
    CHECK_EQ(st.open_shadows, 2);
    CHECK_EQ(st.harmful + st.benign, 0);
    o = acc(c, 1, V);
    CHECK_EQ(o.result, IOCACHE_HIT);
    st = stats(c);
    CHECK_EQ(st.harmful, 1);                         /* (V, P): V before P */
    CHECK_EQ(st.benign, 1);                          /* (W, V): V before W */
    CHECK_EQ(st.open_shadows, 0);
    CHECK_EQ(st.client[1].harm_misses, 0);
    CHECK_EQ(st.client[0].useful, 1);
    const struct iocache_epoch *e = iocache_epoch(c);
    CHECK_EQ(e->harmful, 1);
    CHECK_EQ(e->harm[0 * 2 + 1], 1);
    CHECK_EQ(e->harm_misses, 0);
    CHECK_EQ(e->miss[0 * 2 + 1], 0);
    iocache_free(c);
}

/* V evicted by two prefetches (0's, then 1's after 1 prefetched it back): the miss on V
 * resolves both as harmful, and is one harm-miss, charged to the newer prefetch. */
static void one_miss_two_harmful(void)
{
    struct iocache *c = make(1, 2, 4);
    acc(c, 1, V);
    pf(c, 0, P);                                     /* (V, P) */
    pf(c, 1, V);                                     /* (P, V) */
    pf(c, 1, Q);                                     /* (V, Q) */
    CHECK_EQ(stats(c).open_shadows, 3);
    struct iocache_outcome o = acc(c, 1, V);
    CHECK_EQ(o.result, IOCACHE_MISS);
    struct iocache_stats st = stats(c);
    CHECK_EQ(st.harmful, 2);
    CHECK_EQ(st.intra, 1);
    CHECK_EQ(st.inter, 1);
    CHECK_EQ(st.benign, 1);                          /* (P, V): V before P */
    CHECK_EQ(st.open_shadows, 0);
    CHECK_EQ(st.client[1].harm_misses, 1);
    const struct iocache_epoch *e = iocache_epoch(c);
    CHECK_EQ(e->harm_misses, 1);
    CHECK_EQ(e->harm[0 * 2 + 1], 1);
    CHECK_EQ(e->harm[1 * 2 + 1], 1);
    CHECK_EQ(e->miss[1 * 2 + 1], 1);
    CHECK_EQ(e->miss[0 * 2 + 1], 0);
    iocache_free(c);
}

/* Useful: an admitted block referenced (by anyone) before its eviction, once, for its
 * prefetcher.  Unused: evicted unreferenced, by a miss or a prefetch. */
static void useful_unused(void)
{
    struct iocache *c = make(1, 2, 0);
    pf(c, 0, P);
    acc(c, 1, P);
    acc(c, 1, P);
    struct iocache_stats st = stats(c);
    CHECK_EQ(st.client[0].useful, 1);
    CHECK_EQ(st.client[1].useful, 0);
    struct iocache_outcome o = pf(c, 0, Q);
    CHECK_EQ(o.victim, P);
    CHECK(!o.victim_unused);
    o = acc(c, 1, R);
    CHECK_EQ(o.victim, Q);
    CHECK(o.victim_unused);
    st = stats(c);
    CHECK_EQ(st.client[0].unused, 1);
    CHECK_EQ(st.client[0].useful, 1);
    pf(c, 1, S);                                     /* evicts R, referenced */
    o = pf(c, 0, T);
    CHECK_EQ(o.victim, S);
    CHECK(o.victim_unused);
    st = stats(c);
    CHECK_EQ(st.client[1].unused, 1);
    CHECK_EQ(st.client[0].unused, 1);
    CHECK_EQ(st.client[1].useful, 0);
    iocache_free(c);
}

static void bad_client(void)
{
    struct iocache *c = make(2, 2, 0);
    struct iocache_outcome o;
    CHECK_EQ(iocache_access(c, 2, V, false, 0, &o), EINVAL);
    CHECK_EQ(iocache_prefetch(c, 2, V, 0, &o), EINVAL);
    CHECK_EQ(iocache_access(c, IOCACHE_MAX_CLIENTS, V, true, 0, &o), EINVAL);
    CHECK_EQ(iocache_prefetch(c, 1000, V, 0, &o), EINVAL);
    struct iocache_stats st = stats(c);
    CHECK_EQ(st.client[0].accesses + st.client[1].accesses, 0);
    CHECK_EQ(st.client[0].prefetches + st.client[1].prefetches, 0);
    CHECK_EQ(iocache_access(c, 1, V, false, 0, &o), 0);
    CHECK_EQ(o.result, IOCACHE_MISS);
    iocache_free(c);
}

/* P must be rejected with a one-line message mentioning WORD, and create must fail. */
static void rejected(const struct iocache_params *p, const char *word)
{
    const char *msg = iocache_params_error(p);
    CHECK(msg != NULL);
    if (!msg)
        return;
    CHECK(strstr(msg, word) != NULL);
    CHECK(strchr(msg, '\n') == NULL);
    struct iocache *c = (struct iocache *)&c;        /* anything but NULL */
    CHECK_EQ(iocache_create(p, &c), EINVAL);
    CHECK(c == NULL);
}

static void accepted(const struct iocache_params *p)
{
    CHECK(iocache_params_error(p) == NULL);
    struct iocache *c = NULL;
    CHECK_EQ(iocache_create(p, &c), 0);
    CHECK(c != NULL);
    iocache_free(c);
}

static uint64_t never(void *ctx, uint64_t block, uint64_t at)
{
    (void)ctx;
    (void)block;
    (void)at;
    return UINT64_MAX;
}

static void params(void)
{
    struct iocache_params base;
    iocache_params_default(&base);
    CHECK_EQ(base.replacement, IOCACHE_LRU_AGING);
    CHECK_EQ(base.control, IOCACHE_FINE);
    CHECK(base.throttle && base.pin);
    CHECK_EQ(base.metric, IOCACHE_METRIC_RATIO);
    CHECK(base.threshold == 0);
    CHECK(base.k == 0 && base.shadows == 0 && base.next_use == NULL);
    base.capacity = 1;
    base.clients = 1;
    accepted(&base);

    struct iocache_params p = base;
    p.capacity = 0;
    rejected(&p, "capacity");
    p = base;
    p.clients = 0;
    rejected(&p, "clients");
    p.clients = IOCACHE_MAX_CLIENTS + 1;
    rejected(&p, "clients");
    p.clients = IOCACHE_MAX_CLIENTS;
    accepted(&p);
    p = base;
    p.threshold = 1.5;
    rejected(&p, "threshold");
    p.threshold = -0.1;
    rejected(&p, "threshold");
    p.threshold = NAN;
    rejected(&p, "threshold");
    p.threshold = 1;
    accepted(&p);
    p = base;
    p.replacement = (enum iocache_replacement)7;
    rejected(&p, "replacement");
    p = base;
    p.control = (enum iocache_control)9;
    rejected(&p, "control");
    p = base;
    p.metric = (enum iocache_metric)5;
    rejected(&p, "metric");
    p = base;
    p.control = IOCACHE_OPTIMAL;
    rejected(&p, "next-use");
    p.next_use = never;
    accepted(&p);
}

int main(void)
{
    harmful();
    benign();
    unresolved();
    intra_inter();
    no_eviction_no_shadow();
    prefetch_is_not_a_reference();
    one_miss_two_harmful();
    useful_unused();
    bad_client();
    params();
    return check_done("test_harm");
}
