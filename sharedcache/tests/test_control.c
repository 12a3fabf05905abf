/*
 * test_control.c — throttling and pinning decisions (control.c) and how the request
 * paths (iocache.c) carry them out, with LRU.  It proves:
 * - coarse throttling, METRIC_RATIO: client k whose harmful/issued in epoch e is exactly
 *   T (1 of 2 at T 0.5; 7 of 20 at the default 0.35) is throttled in epochs e+1 … e+K
 *   and not in e+K+1 (K 1 and 3): its prefetches are DROPPED (THROTTLED), then admitted
 *   again, and throttled_epochs is K; just below T (1 of 3; 6 of 20) it is not;
 * - METRIC_SHARE reads k's share of all harmful prefetches instead of its ratio;
 * - coarse pinning: l with a harm-miss share >= T has its blocks passed over as victims
 *   of prefetches (any client's) for K epochs, counted in pin_skips; demand misses still
 *   evict them; a prefetch finding every cached block pinned is DROPPED (PINNED);
 * - fine grain, METRIC_SHARE: harm of pair (k, l) at >= 0.20 of all harmful prefetches
 *   throttles k's prefetches whose victim l owns, not k's toward another client, nor
 *   another client's toward l; METRIC_RATIO: at >= 0.20 of k's prefetches issued (1 of
 *   5, not 1 of 6), however the other pairs harm; fine pinning protects l's blocks from
 *   k's prefetches only;
 * - params.throttle / params.pin false stop each mechanism (coarse and fine);
 * - optimal: with an oracle of a fixed sequence, the replay has no harmful prefetch,
 *   while plain prefetching has;
 * - without prefetches, plain, coarse and fine make identical decisions (every outcome)
 *   over 2000 pseudo-random accesses with epochs of 100, under both replacements.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "check.h"
#include "requests.h"
#include "foresight_iocache.h"

static uint64_t next_fresh = 1000;

static uint64_t fresh(void)   /* a block number never used before */
{
    return next_fresh++;
}

static struct iocache_params params(enum iocache_control ctl, uint64_t capacity,
                                    unsigned clients)
{
    struct iocache_params p;
    iocache_params_default(&p);
    p.capacity = capacity;
    p.clients = clients;
    p.replacement = IOCACHE_LRU;
    p.control = ctl;
    return p;
}

static struct iocache *make(const struct iocache_params *p)
{
    struct iocache *c = NULL;
    CHECK_EQ(iocache_create(p, &c), 0);
    CHECK(c != NULL);
    return c;
}

/* L accesses CAPACITY fresh blocks, which then fill the LRU cache; returns the LRU one. */
static uint64_t fill(struct iocache *c, unsigned l, uint64_t capacity)
{
    uint64_t first = fresh();
    acc(c, l, first);
    for (uint64_t i = 1; i < capacity; i++)
        acc(c, l, fresh());
    return first;
}

/* One harmful prefetch of K (issued) affecting L, with an L harm-miss; no shadow left. */
static void harmful_one(struct iocache *c, unsigned k, unsigned l, uint64_t capacity)
{
    uint64_t v = fill(c, l, capacity);
    struct iocache_outcome o = pf(c, k, fresh());
    CHECK_EQ(o.result, IOCACHE_ADMITTED);
    CHECK_EQ(o.victim, v);
    CHECK_EQ(acc(c, l, v).result, IOCACHE_MISS);
}

/* One benign prefetch of K (issued). */
static void benign_one(struct iocache *c, unsigned k, uint64_t capacity)
{
    fill(c, k, capacity);
    uint64_t p = fresh();
    CHECK_EQ(pf(c, k, p).result, IOCACHE_ADMITTED);
    CHECK_EQ(acc(c, k, p).result, IOCACHE_HIT);
}

/* Client 0 has HARMFUL of ISSUED prefetches harmful (affecting client 1) in epoch 0,
 * reaching threshold T (0: the default): it is throttled in epochs 1 … K and not in
 * K + 1.  Client 1 never is.  Pins off, so that client 1's prefetches are admitted. */
static void coarse_throttled(double t, unsigned harmful, unsigned issued, unsigned k)
{
    struct iocache_params p = params(IOCACHE_COARSE, 2, 2);
    p.threshold = t;
    p.k = k;
    p.pin = false;
    struct iocache *c = make(&p);
    for (unsigned i = 0; i < issued; i++) {
        if (i < harmful)
            harmful_one(c, 0, 1, 2);
        else
            benign_one(c, 0, 2);
    }
    const struct iocache_epoch *e = iocache_epoch(c);
    CHECK_EQ(e->issued[0], issued);
    CHECK_EQ(e->harmful_by[0], harmful);
    CHECK_EQ(e->harmful, harmful);
    CHECK(!iocache_throttled(c, 0, 0));
    iocache_epoch_end(c);
    for (unsigned epoch = 1; epoch <= k; epoch++) {
        CHECK_EQ(iocache_epoch_number(c), epoch);
        CHECK(iocache_throttled(c, 0, 0));
        CHECK(iocache_throttled(c, 0, 1));           /* coarse: l ignored */
        CHECK(!iocache_throttled(c, 1, 0));
        struct iocache_outcome o = pf(c, 0, fresh());
        CHECK_EQ(o.result, IOCACHE_DROPPED);
        CHECK_EQ(o.drop, IOCACHE_DROP_THROTTLED);
        CHECK_EQ(pf(c, 1, fresh()).result, IOCACHE_ADMITTED);
        iocache_epoch_end(c);
    }
    CHECK(!iocache_throttled(c, 0, 0));              /* epoch K + 1 */
    CHECK_EQ(pf(c, 0, fresh()).result, IOCACHE_ADMITTED);
    struct iocache_stats st = stats(c);
    CHECK_EQ(st.client[0].throttled_epochs, k);
    CHECK_EQ(st.client[0].dropped_throttled, k);
    CHECK_EQ(st.client[1].throttled_epochs, 0);
    iocache_epoch_end(c);
    CHECK_EQ(stats(c).client[0].throttled_epochs, k);
    iocache_free(c);
}

/* The same just below T: never throttled. */
static void coarse_below(double t, unsigned harmful, unsigned issued)
{
    struct iocache_params p = params(IOCACHE_COARSE, 2, 2);
    p.threshold = t;
    p.k = 3;
    struct iocache *c = make(&p);
    for (unsigned i = 0; i < issued; i++) {
        if (i < harmful)
            harmful_one(c, 0, 1, 2);
        else
            benign_one(c, 0, 2);
    }
    CHECK_EQ(iocache_epoch(c)->issued[0], issued);
    CHECK_EQ(iocache_epoch(c)->harmful_by[0], harmful);
    iocache_epoch_end(c);
    CHECK(!iocache_throttled(c, 0, 0));
    struct iocache_outcome o = pf(c, 0, fresh());
    CHECK_EQ(o.result, IOCACHE_ADMITTED);
    iocache_epoch_end(c);
    CHECK_EQ(stats(c).client[0].throttled_epochs, 0);
    iocache_free(c);
}

/* Client 0: 3 harmful of 30 issued (ratio 0.1, share 0.75); client 1: 1 harmful of 1
 * (ratio 1, share 0.25).  T 0.35: RATIO throttles 1 only, SHARE 0 only. */
static void coarse_metric(enum iocache_metric m)
{
    struct iocache_params p = params(IOCACHE_COARSE, 2, 2);
    p.metric = m;
    p.pin = false;
    p.k = 1;
    struct iocache *c = make(&p);
    for (unsigned i = 0; i < 30; i++) {
        if (i < 3)
            harmful_one(c, 0, 0, 2);
        else
            benign_one(c, 0, 2);
    }
    harmful_one(c, 1, 1, 2);
    iocache_epoch_end(c);
    bool share = m == IOCACHE_METRIC_SHARE;
    CHECK_EQ(iocache_throttled(c, 0, 0), share);
    CHECK_EQ(iocache_throttled(c, 1, 0), !share);
    struct iocache_outcome o = pf(c, share ? 0 : 1, fresh());
    CHECK_EQ(o.result, IOCACHE_DROPPED);
    CHECK_EQ(o.drop, IOCACHE_DROP_THROTTLED);
    o = pf(c, share ? 1 : 0, fresh());
    CHECK_EQ(o.result, IOCACHE_ADMITTED);
    iocache_free(c);
}

/* Epoch 0 of the pinning tests, 3 blocks, clients 0 … 2: client 1 fills the cache with
 * A B C, client 2 prefetches P (evicting A), client 1 misses on A (evicting B).  Harm
 * (2, 1) is all the harm and all the harm-misses.  Leaves C(1) P(2) A(1), LRU first. */
struct pin_setup {
    uint64_t a, cc, p;
};

static struct pin_setup pin_epoch0(struct iocache *c)
{
    struct pin_setup s;
    s.a = fill(c, 1, 3);
    s.cc = next_fresh - 1;
    s.p = fresh();
    struct iocache_outcome o = pf(c, 2, s.p);
    CHECK_EQ(o.victim, s.a);
    o = acc(c, 1, s.a);
    CHECK_EQ(o.result, IOCACHE_MISS);
    CHECK_EQ(o.victim, s.cc - 1);
    const struct iocache_epoch *e = iocache_epoch(c);
    CHECK_EQ(e->harm_misses, 1);
    CHECK_EQ(e->harm_misses_of[1], 1);
    iocache_epoch_end(c);
    return s;
}

/* Coarse pinning (K 1): in epoch 1 client 1's blocks are no prefetch's victims (passed
 * over, counted), a demand miss still evicts them, and a prefetch facing only client 1's
 * blocks is dropped; in epoch 2 they are victims again. */
static void coarse_pinning(void)
{
    struct iocache_params p = params(IOCACHE_COARSE, 3, 3);
    p.k = 1;
    struct iocache *c = make(&p);
    struct pin_setup s = pin_epoch0(c);
    for (unsigned k = 0; k < 3; k++) {
        CHECK(iocache_pinned(c, 1, k));
        CHECK(!iocache_pinned(c, 0, k));
        CHECK(!iocache_pinned(c, 2, k));
    }
    CHECK(iocache_throttled(c, 2, 0));               /* 1 harmful of 1 issued */
    CHECK(!iocache_throttled(c, 0, 0));
    CHECK(!iocache_throttled(c, 1, 0));

    uint64_t q = fresh();
    struct iocache_outcome o = pf(c, 0, q);          /* C pinned: P goes; C A Q */
    CHECK_EQ(o.result, IOCACHE_ADMITTED);
    CHECK_EQ(o.victim, s.p);
    CHECK(o.victim_unused);
    CHECK_EQ(stats(c).pin_skips, 1);
    o = pf(c, 0, fresh());                           /* C, A pinned: Q goes; C A R */
    CHECK_EQ(o.result, IOCACHE_ADMITTED);
    CHECK_EQ(o.victim, q);
    CHECK_EQ(stats(c).pin_skips, 3);
    o = acc(c, 0, fresh());                          /* a miss evicts C all the same */
    CHECK_EQ(o.result, IOCACHE_MISS);
    CHECK_EQ(o.victim, s.cc);
    CHECK_EQ(stats(c).pin_skips, 3);

    uint64_t first = fill(c, 1, 3);                  /* only client 1's blocks */
    o = pf(c, 0, fresh());
    CHECK_EQ(o.result, IOCACHE_DROPPED);
    CHECK_EQ(o.drop, IOCACHE_DROP_PINNED);
    o = pf(c, 1, fresh());                           /* coarse: against its own too */
    CHECK_EQ(o.result, IOCACHE_DROPPED);
    CHECK_EQ(o.drop, IOCACHE_DROP_PINNED);
    struct iocache_stats st = stats(c);
    CHECK_EQ(st.pin_skips, 9);
    CHECK_EQ(st.client[0].dropped_pinned, 1);
    CHECK_EQ(st.client[1].dropped_pinned, 1);

    iocache_epoch_end(c);                            /* epoch 2: over */
    CHECK(!iocache_pinned(c, 1, 0));
    o = pf(c, 0, fresh());
    CHECK_EQ(o.result, IOCACHE_ADMITTED);
    CHECK_EQ(o.victim, first);
    st = stats(c);
    CHECK_EQ(st.pin_skips, 9);
    CHECK_EQ(st.client[1].pinned_epochs, 1);
    CHECK_EQ(st.client[0].pinned_epochs, 0);
    CHECK_EQ(st.client[2].throttled_epochs, 1);
    iocache_free(c);
}

/* Fine throttling, METRIC_SHARE, pins off, clients 0 (k), 1 (l), 2 (m), 2 blocks.
 * Epoch 0: harm (0, 1) once and (2, 2) four or five times: (0, 1) is 1/5 = 0.20 of all
 * harmful prefetches, exactly T, or 1/6 just below. */
static void fine_throttling(bool at_threshold)
{
    struct iocache_params p = params(IOCACHE_FINE, 2, 3);
    p.pin = false;
    p.metric = IOCACHE_METRIC_SHARE;
    struct iocache *c = make(&p);
    harmful_one(c, 0, 1, 2);
    for (int i = 0; i < (at_threshold ? 4 : 5); i++)
        harmful_one(c, 2, 2, 2);
    CHECK_EQ(iocache_epoch(c)->harm[0 * 3 + 1], 1);
    CHECK_EQ(iocache_epoch(c)->harmful, at_threshold ? 5 : 6);
    iocache_epoch_end(c);
    CHECK_EQ(iocache_throttled(c, 0, 1), at_threshold);
    CHECK(!iocache_throttled(c, 0, 0));
    CHECK(!iocache_throttled(c, 0, 2));
    CHECK(!iocache_throttled(c, 2, 1));
    CHECK(!iocache_throttled(c, 1, 1));
    CHECK(iocache_throttled(c, 2, 2));
    for (unsigned l = 0; l < 3; l++)
        for (unsigned k = 0; k < 3; k++)
            CHECK(!iocache_pinned(c, l, k));

    uint64_t x = fresh(), y = fresh();
    acc(c, 1, x);
    acc(c, 2, y);                                    /* X(1) Y(2) */
    struct iocache_outcome o = pf(c, 0, fresh());    /* victim X, l's */
    if (at_threshold) {
        CHECK_EQ(o.result, IOCACHE_DROPPED);
        CHECK_EQ(o.drop, IOCACHE_DROP_THROTTLED);
        CHECK_EQ(stats(c).client[0].dropped_throttled, 1);
        acc(c, 1, x);                                /* Y(2) X(1) */
        o = pf(c, 0, fresh());                       /* victim Y, m's: admitted */
        CHECK_EQ(o.result, IOCACHE_ADMITTED);
        CHECK_EQ(o.victim, y);
    } else {
        CHECK_EQ(o.result, IOCACHE_ADMITTED);
        CHECK_EQ(o.victim, x);
    }
    x = fresh();
    acc(c, 1, x);
    acc(c, 2, fresh());                              /* X(1) Y(2) */
    o = pf(c, 2, fresh());                           /* m's prefetch, victim X, l's */
    CHECK_EQ(o.result, IOCACHE_ADMITTED);
    CHECK_EQ(o.victim, x);
    CHECK_EQ(stats(c).client[2].dropped_throttled, 0);
    CHECK_EQ(stats(c).pin_skips, 0);
    iocache_free(c);
}

/* Fine throttling, METRIC_RATIO (the default), pins off, clients 0 (k), 1 (l), 2 (m).
 * Epoch 0: 0 issues 5 or 6 prefetches, one harming 1, and 2 harms itself eight times
 * (so (0, 1) is 1/9 of all harm): (0, 1) is throttled at 1 of 5 = 0.20 exactly, not at
 * 1 of 6; (2, 2) at 8 of 8; nothing toward other pairs. */
static void fine_ratio(bool at_threshold)
{
    struct iocache_params p = params(IOCACHE_FINE, 2, 3);
    p.pin = false;
    CHECK_EQ(p.metric, IOCACHE_METRIC_RATIO);
    struct iocache *c = make(&p);
    harmful_one(c, 0, 1, 2);
    for (int i = 0; i < (at_threshold ? 4 : 5); i++)
        benign_one(c, 0, 2);
    for (int i = 0; i < 8; i++)
        harmful_one(c, 2, 2, 2);
    CHECK_EQ(iocache_epoch(c)->issued[0], at_threshold ? 5 : 6);
    CHECK_EQ(iocache_epoch(c)->harmful, 9);
    iocache_epoch_end(c);
    CHECK_EQ(iocache_throttled(c, 0, 1), at_threshold);
    CHECK(!iocache_throttled(c, 0, 0));
    CHECK(!iocache_throttled(c, 0, 2));
    CHECK(!iocache_throttled(c, 2, 1));
    CHECK(iocache_throttled(c, 2, 2));
    uint64_t x = fresh();
    acc(c, 1, x);
    acc(c, 2, fresh());                              /* X(1) Y(2) */
    struct iocache_outcome o = pf(c, 0, fresh());    /* victim X, l's */
    CHECK_EQ(o.result, at_threshold ? IOCACHE_DROPPED : IOCACHE_ADMITTED);
    iocache_free(c);
}

/* Fine pinning, throttling off: harm-misses all on pair (0, 1) pin 1's blocks against 0
 * only: 0's prefetch passes over X(1) and evicts Y(2); 2's evicts X; with only 1's
 * blocks cached, 0's prefetch is dropped and 2's admitted. */
static void fine_pinning(void)
{
    struct iocache_params p = params(IOCACHE_FINE, 2, 3);
    p.throttle = false;
    struct iocache *c = make(&p);
    harmful_one(c, 0, 1, 2);
    iocache_epoch_end(c);
    for (unsigned l = 0; l < 3; l++)
        for (unsigned k = 0; k < 3; k++) {
            CHECK_EQ(iocache_pinned(c, l, k), l == 1 && k == 0);
            CHECK(!iocache_throttled(c, k, l));
        }
    uint64_t x = fresh(), y = fresh();
    acc(c, 1, x);
    acc(c, 2, y);                                    /* X(1) Y(2) */
    struct iocache_outcome o = pf(c, 0, fresh());
    CHECK_EQ(o.result, IOCACHE_ADMITTED);
    CHECK_EQ(o.victim, y);
    CHECK_EQ(stats(c).pin_skips, 1);
    o = pf(c, 2, fresh());
    CHECK_EQ(o.result, IOCACHE_ADMITTED);
    CHECK_EQ(o.victim, x);
    CHECK_EQ(stats(c).pin_skips, 1);
    fill(c, 1, 2);
    o = pf(c, 0, fresh());
    CHECK_EQ(o.result, IOCACHE_DROPPED);
    CHECK_EQ(o.drop, IOCACHE_DROP_PINNED);
    CHECK_EQ(stats(c).pin_skips, 3);
    o = pf(c, 2, fresh());
    CHECK_EQ(o.result, IOCACHE_ADMITTED);
    struct iocache_stats st = stats(c);
    CHECK_EQ(st.client[1].pinned_epochs, 1);
    CHECK_EQ(st.client[0].throttled_epochs, 0);
    iocache_free(c);
}

/* The switches, coarse and fine: after pin_epoch0 (harm (2, 1) only), in epoch 1
 * client 2 prefetches with C(1) P(2) A(1) cached.  Throttling drops it (coarse: all of
 * 2's; fine: its victim C is 1's), unless pinning passes over C first (fine), so it
 * evicts P; with neither it evicts C. */
static void switches(enum iocache_control ctl, bool throttle, bool pin)
{
    struct iocache_params p = params(ctl, 3, 3);
    p.throttle = throttle;
    p.pin = pin;
    p.k = 1;
    struct iocache *c = make(&p);
    struct pin_setup s = pin_epoch0(c);
    CHECK_EQ(iocache_throttled(c, 2, 1), throttle);
    CHECK_EQ(iocache_pinned(c, 1, 2), pin);
    struct iocache_outcome o = pf(c, 2, fresh());
    struct iocache_stats st = stats(c);
    if (throttle && (ctl == IOCACHE_COARSE || !pin)) {
        CHECK_EQ(o.result, IOCACHE_DROPPED);
        CHECK_EQ(o.drop, IOCACHE_DROP_THROTTLED);
    } else {
        CHECK_EQ(o.result, IOCACHE_ADMITTED);
        CHECK_EQ(o.victim, pin ? s.p : s.cc);
        CHECK_EQ(st.pin_skips, pin);
    }
    iocache_epoch_end(c);
    st = stats(c);
    CHECK_EQ(st.client[2].throttled_epochs, throttle);
    CHECK_EQ(st.client[1].pinned_epochs, pin);
    iocache_free(c);
}

/* ---- optimal ---- */

struct req {
    bool prefetch;
    unsigned client;
    uint64_t block;
};

enum { A = 1, B = 2, P = 3, Q = 4, R = 5 };

/* Under plain LRU with 2 blocks: P evicts A, needed before P (harmful); Q evicts A,
 * needed after Q (benign); R evicts Q, needed before R (harmful). */
static const struct req opt_seq[] = {
    {false, 0, A}, {false, 1, B}, {true, 0, P}, {false, 1, A}, {false, 0, P},
    {true, 1, Q}, {false, 1, Q}, {false, 0, A}, {true, 0, R}, {false, 1, Q},
    {false, 0, R},
};
#define OPT_LEN (sizeof opt_seq / sizeof *opt_seq)

/* The position of the first access to BLOCK after AT, or UINT64_MAX. */
static uint64_t opt_next_use(void *ctx, uint64_t block, uint64_t at)
{
    const struct req *seq = ctx;
    for (uint64_t i = at + 1; i < OPT_LEN; i++)
        if (!seq[i].prefetch && seq[i].block == block)
            return i;
    return UINT64_MAX;
}

static struct iocache_stats replay_opt(enum iocache_control ctl)
{
    struct iocache_params p = params(ctl, 2, 2);
    p.next_use = opt_next_use;
    p.next_use_ctx = (void *)opt_seq;
    struct iocache *c = make(&p);
    for (uint64_t i = 0; i < OPT_LEN; i++) {
        struct iocache_outcome o;
        if (opt_seq[i].prefetch)
            CHECK_EQ(iocache_prefetch(c, opt_seq[i].client, opt_seq[i].block, i, &o), 0);
        else
            CHECK_EQ(iocache_access(c, opt_seq[i].client, opt_seq[i].block, false, i, &o), 0);
    }
    struct iocache_stats st = stats(c);
    iocache_free(c);
    return st;
}

static void optimal(void)
{
    struct iocache_stats plain = replay_opt(IOCACHE_PLAIN);
    CHECK_EQ(plain.harmful, 2);
    CHECK_EQ(plain.benign, 1);
    CHECK_EQ(plain.open_shadows, 0);
    struct iocache_stats opt = replay_opt(IOCACHE_OPTIMAL);
    CHECK_EQ(opt.harmful, 0);
    CHECK_EQ(opt.benign, 1);
    CHECK_EQ(opt.client[0].dropped_oracle, 2);
    CHECK_EQ(opt.client[1].dropped_oracle, 0);
    CHECK_EQ(opt.client[1].admitted, 1);
    CHECK_EQ(opt.client[0].harm_misses + opt.client[1].harm_misses, 0);
    CHECK_EQ(opt.open_shadows, 0);
}

/* ---- no prefetches, no difference ---- */

#define NP_LEN 2000

static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)   /* xorshift64 */
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void replay_plain_seq(enum iocache_replacement r, enum iocache_control ctl,
                             const uint64_t *seq, struct iocache_outcome *out)
{
    struct iocache_params p = params(ctl, 4, 4);
    p.replacement = r;
    struct iocache *c = make(&p);
    for (int i = 0; i < NP_LEN; i++) {
        uint64_t x = seq[i];
        CHECK_EQ(iocache_access(c, x & 3, x >> 8, (x >> 2) & 1, (uint64_t)i, &out[i]), 0);
        if (i % 100 == 99)
            iocache_epoch_end(c);
    }
    struct iocache_stats st = stats(c);
    CHECK_EQ(st.epochs, NP_LEN / 100);
    CHECK_EQ(st.pin_skips, 0);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(st.client[i].throttled_epochs + st.client[i].pinned_epochs, 0);
    iocache_free(c);
}

static bool same_outcome(const struct iocache_outcome *a, const struct iocache_outcome *b)
{
    return a->result == b->result && a->drop == b->drop && a->slot == b->slot &&
           a->evicted == b->evicted && (!a->evicted || a->victim == b->victim) &&
           a->victim_unused == b->victim_unused;
}

static void no_prefetch_same(void)
{
    static uint64_t seq[NP_LEN];
    static struct iocache_outcome out[3][NP_LEN];
    static const enum iocache_control ctl[3] = {IOCACHE_PLAIN, IOCACHE_COARSE, IOCACHE_FINE};
    for (int i = 0; i < NP_LEN; i++) {   /* 3 in 4 to blocks 0 … 4, the rest to 0 … 11 */
        uint64_t x = rnd();
        uint64_t block = (x >> 32) % ((x >> 16) & 3 ? 5 : 12);
        seq[i] = block << 8 | (x & 7);
    }
    for (int r = 0; r < 2; r++) {
        enum iocache_replacement rep = r ? IOCACHE_LRU_AGING : IOCACHE_LRU;
        for (int j = 0; j < 3; j++)
            replay_plain_seq(rep, ctl[j], seq, out[j]);
        int differ = 0, misses = 0, evictions = 0;
        for (int i = 0; i < NP_LEN; i++) {
            differ += !same_outcome(&out[0][i], &out[1][i]);
            differ += !same_outcome(&out[0][i], &out[2][i]);
            misses += out[0][i].result == IOCACHE_MISS;
            evictions += out[0][i].evicted;
        }
        CHECK_EQ(differ, 0);
        CHECK(misses > NP_LEN / 10 && misses < NP_LEN - NP_LEN / 10);
        CHECK(evictions > NP_LEN / 10);
    }
}

int main(void)
{
    coarse_throttled(0.5, 1, 2, 1);
    coarse_throttled(0.5, 1, 2, 3);
    coarse_throttled(0, 7, 20, 3);                   /* the default T, 0.35 */
    coarse_throttled(0, 7, 20, 1);
    coarse_below(0.5, 1, 3);
    coarse_below(0, 6, 20);
    coarse_below(0, 7, 21);
    coarse_metric(IOCACHE_METRIC_RATIO);
    coarse_metric(IOCACHE_METRIC_SHARE);
    coarse_pinning();
    fine_throttling(true);
    fine_throttling(false);
    fine_ratio(true);
    fine_ratio(false);
    fine_pinning();
    for (int t = 0; t < 2; t++)
        for (int pin = 0; pin < 2; pin++) {
            switches(IOCACHE_COARSE, t, pin);
            switches(IOCACHE_FINE, t, pin);
        }
    optimal();
    no_prefetch_same();
    return check_done("test_control");
}
