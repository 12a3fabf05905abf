/*
 * test_replacement.c — the cache's replacement (blocks.c), through the public interface
 * and, where it says more, the internal blocks_* calls and slots.  It proves:
 * - LRU evicts the least recently referenced block; a hit moves its block to the MRU
 *   end, and so does a miss and an admitted prefetch, while a prefetch that finds its
 *   block cached does not (a prefetch is not a reference); a block's slot is stable
 *   while it is cached, and the block that evicts it takes its slot;
 * - LRU-aging (Multi-Queue): a block referenced twice survives a scan of blocks
 *   referenced once that evicts it under LRU; a block referenced four times long ago
 *   ages down one queue per `capacity` references (2, then 1, then 0) and is then
 *   evicted like any other;
 * - the block index (open addressing, backward-shift deletion) stays exact under 200000
 *   pseudo-random accesses over 5000 block numbers (many equal in their low 10 or 32
 *   bits, some near 2^40, 0 and UINT64_MAX) into a 1000-block cache: with LRU every
 *   outcome (hit or miss, victim, slot) matches an array-based LRU model, and with
 *   LRU-aging every hit, miss and victim is consistent with the blocks cached;
 * - a slot the caller holds is never a victim: with every slot held an access goes
 *   around the cache and a prefetch is dropped;
 * - MIN (Belady) evicts the cached block whose next use comes last, passing over held
 *   slots; under 60000 pseudo-random accesses into a 400-block cache every victim's
 *   next use is the latest of the blocks cached (checked against all of them), and it
 *   refuses to be created without a next-use oracle.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "foresight_iocache.h"
#include "internal.h"

enum { A = 10, B = 20, C = 30, D = 40, E = 50, F = 60, G = 70, H = 80, P = 90 };

static uint64_t now;   /* the caller's position, advanced by every request */

/* A cache of CAPACITY blocks for four clients, plain control, replacement R (with its
 * next-use oracle, for MIN). */
static struct iocache *make_with(uint64_t capacity, enum iocache_replacement r,
                                 iocache_next_use_fn next_use, void *ctx)
{
    struct iocache_params p;
    iocache_params_default(&p);
    p.capacity = capacity;
    p.clients = 4;
    p.replacement = r;
    p.control = IOCACHE_PLAIN;
    p.next_use = next_use;
    p.next_use_ctx = ctx;
    struct iocache *c = NULL;
    CHECK_EQ(iocache_create(&p, &c), 0);
    CHECK(c != NULL);
    return c;
}

static struct iocache *make(uint64_t capacity, enum iocache_replacement r)
{
    return make_with(capacity, r, NULL, NULL);
}

static struct iocache_outcome acc(struct iocache *c, uint64_t block)
{
    struct iocache_outcome o;
    CHECK_EQ(iocache_access(c, 0, block, false, now++, &o), 0);
    return o;
}

static struct iocache_outcome pf(struct iocache *c, uint64_t block)
{
    struct iocache_outcome o;
    CHECK_EQ(iocache_prefetch(c, 0, block, now++, &o), 0);
    return o;
}

/* The queue (0 … 3) BLOCK is in; -1 when it is not cached. */
static int queue_of_block(const struct iocache *c, uint64_t block)
{
    uint32_t s = blocks_find(&c->blocks, block);
    return s == NONE ? -1 : c->blocks.slot[s].queue;
}

/* LRU: the victim is the least recently referenced block; hits and misses make their
 * block the most recent; slots stay put and pass from victim to evicting block. */
static void lru_order_and_slots(void)
{
    struct iocache *c = make(3, IOCACHE_LRU);
    struct iocache_outcome a = acc(c, A), b = acc(c, B), cc = acc(c, C);
    CHECK_EQ(a.result, IOCACHE_MISS);
    CHECK(!a.evicted && !b.evicted && !cc.evicted);
    CHECK(a.slot < 3 && b.slot < 3 && cc.slot < 3);
    CHECK(a.slot != b.slot && b.slot != cc.slot && a.slot != cc.slot);

    struct iocache_outcome o = acc(c, A);            /* order B C A */
    CHECK_EQ(o.result, IOCACHE_HIT);
    CHECK_EQ(o.slot, a.slot);
    CHECK(!o.evicted);

    o = acc(c, D);                                   /* B is the LRU block: C A D */
    CHECK_EQ(o.result, IOCACHE_MISS);
    CHECK(o.evicted);
    CHECK_EQ(o.victim, B);
    CHECK(!o.victim_unused);
    CHECK_EQ(o.slot, b.slot);
    uint32_t d_slot = o.slot;
    CHECK_EQ(blocks_find(&c->blocks, B), NONE);
    CHECK_EQ(blocks_find(&c->blocks, D), d_slot);

    o = acc(c, C);                                   /* A D C */
    CHECK_EQ(o.result, IOCACHE_HIT);
    CHECK_EQ(o.slot, cc.slot);

    o = acc(c, E);                                   /* D C E */
    CHECK(o.evicted);
    CHECK_EQ(o.victim, A);
    CHECK_EQ(o.slot, a.slot);

    o = acc(c, D);                                   /* C E D */
    CHECK_EQ(o.result, IOCACHE_HIT);
    CHECK_EQ(o.slot, d_slot);
    o = acc(c, F);
    CHECK_EQ(o.victim, C);
    CHECK_EQ(o.slot, cc.slot);
    o = acc(c, G);
    CHECK_EQ(o.victim, E);
    CHECK_EQ(o.slot, a.slot);
    iocache_free(c);
}

/* LRU: an admitted prefetch enters at the MRU end (the next three misses evict the older
 * blocks first), and when it is evicted unreferenced the outcome says so.  A prefetch of
 * a cached block moves nothing: it is not a reference. */
static void lru_prefetch_enters_mru(void)
{
    struct iocache *c = make(3, IOCACHE_LRU);
    struct iocache_outcome a = acc(c, A);
    struct iocache_outcome b = acc(c, B);
    struct iocache_outcome cc = acc(c, C);
    struct iocache_outcome o = pf(c, P);             /* B C P */
    CHECK_EQ(o.result, IOCACHE_ADMITTED);
    CHECK(o.evicted);
    CHECK_EQ(o.victim, A);
    CHECK_EQ(o.slot, a.slot);
    uint32_t p_slot = o.slot;
    o = acc(c, D);                                   /* C P D */
    CHECK_EQ(o.victim, B);
    CHECK_EQ(o.slot, b.slot);
    o = acc(c, E);                                   /* P D E */
    CHECK_EQ(o.victim, C);
    CHECK_EQ(o.slot, cc.slot);
    o = acc(c, F);                                   /* D E F */
    CHECK_EQ(o.victim, P);
    CHECK(o.victim_unused);
    CHECK_EQ(o.slot, p_slot);
    iocache_free(c);

    c = make(3, IOCACHE_LRU);
    a = acc(c, A);
    acc(c, B);
    acc(c, C);
    o = pf(c, A);                                    /* still A B C */
    CHECK_EQ(o.result, IOCACHE_CACHED);
    CHECK_EQ(o.slot, a.slot);
    CHECK(!o.evicted);
    o = acc(c, D);
    CHECK_EQ(o.victim, A);
    iocache_free(c);
}

/* Runs A A B C D E F G into a 3-block cache and returns the victims of D … G. */
static void scan_victims(enum iocache_replacement r, uint64_t victims[4])
{
    struct iocache *c = make(3, r);
    acc(c, A);
    acc(c, A);
    if (r == IOCACHE_LRU_AGING)
        CHECK_EQ(queue_of_block(c, A), 1);           /* two references: queue 1 */
    acc(c, B);
    acc(c, C);
    const uint64_t scan[4] = {D, E, F, G};
    for (int i = 0; i < 4; i++) {
        struct iocache_outcome o = acc(c, scan[i]);
        CHECK_EQ(o.result, IOCACHE_MISS);
        CHECK(o.evicted);
        victims[i] = o.victim;
        if (r == IOCACHE_LRU_AGING && i == 0)        /* unreferenced for 3 references */
            CHECK_EQ(queue_of_block(c, A), 0);
    }
    iocache_free(c);
}

/* LRU-aging: A, referenced twice, survives the scan B C D that evicts it under LRU; it
 * ages to queue 0 after `capacity` (3) other references and goes after C and D. */
static void aging_survives_scan(void)
{
    uint64_t lru[4], aging[4];
    scan_victims(IOCACHE_LRU, lru);
    CHECK_EQ(lru[0], A);
    CHECK_EQ(lru[1], B);
    CHECK_EQ(lru[2], C);
    CHECK_EQ(lru[3], D);
    scan_victims(IOCACHE_LRU_AGING, aging);
    CHECK_EQ(aging[0], B);
    CHECK_EQ(aging[1], C);
    CHECK_EQ(aging[2], D);
    CHECK_EQ(aging[3], A);
}

/* LRU-aging: A referenced four times (queue 2) into a 2-block cache, then a scan of
 * once-referenced blocks.  Each time A goes `capacity` (2) references unreferenced it
 * moves down one queue (2 → 1 after C, 1 → 0 after F, with the refs of its new queue);
 * then it is the LRU block of queue 0 like any other, and H evicts it.  Under LRU, C
 * evicts it at once. */
static void aging_long_ago(void)
{
    struct iocache *c = make(2, IOCACHE_LRU_AGING);
    for (int i = 0; i < 4; i++)
        acc(c, A);
    CHECK_EQ(queue_of_block(c, A), 2);
    CHECK_EQ(c->blocks.slot[blocks_find(&c->blocks, A)].refs, 4);
    const uint64_t scan[7] = {B, C, D, E, F, G, H};
    const uint64_t victim[7] = {0, B, C, D, E, F, A};   /* B fills the free slot */
    const int queue_after[7] = {2, 1, 1, 1, 0, 0, -1};
    for (int i = 0; i < 7; i++) {
        struct iocache_outcome o = acc(c, scan[i]);
        CHECK_EQ(o.result, IOCACHE_MISS);
        CHECK_EQ(o.evicted, i > 0);
        if (i > 0)
            CHECK_EQ(o.victim, victim[i]);
        CHECK_EQ(queue_of_block(c, A), queue_after[i]);
        if (queue_after[i] == 1)
            CHECK_EQ(c->blocks.slot[blocks_find(&c->blocks, A)].refs, 2);
        if (queue_after[i] == 0)
            CHECK_EQ(c->blocks.slot[blocks_find(&c->blocks, A)].refs, 1);
    }
    iocache_free(c);

    c = make(2, IOCACHE_LRU);
    for (int i = 0; i < 4; i++)
        acc(c, A);
    acc(c, B);
    struct iocache_outcome o = acc(c, C);
    CHECK_EQ(o.victim, A);
    iocache_free(c);
}

/* ---- churn against a reference model ---- */

#define CHURN_CAP 1000
#define CHURN_BLOCKS 5000
#define CHURN_HOT 1200
#define CHURN_ACCESSES 200000

static uint64_t rng = 0x2545F4914F6CDD1Dull;

static uint64_t rnd(void)   /* xorshift64* */
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545F4914F6CDD1Dull;
}

static uint64_t pool[CHURN_BLOCKS];

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Block numbers that share their low 10 bits, their low 32 bits or their low 4 bits,
 * numbers just above 2^40, random 64-bit numbers, 0 and UINT64_MAX; all distinct. */
static void make_pool(void)
{
    for (uint64_t i = 0; i < CHURN_BLOCKS; i++) {
        switch (i % 5) {
        case 0: pool[i] = i * 1024; break;
        case 1: pool[i] = (1ull << 40) + i; break;
        case 2: pool[i] = i << 32; break;
        case 3: pool[i] = i * 16 + 7; break;
        default: pool[i] = rnd(); break;
        }
    }
    pool[9] = UINT64_MAX;
    static uint64_t sorted[CHURN_BLOCKS];
    memcpy(sorted, pool, sizeof pool);
    qsort(sorted, CHURN_BLOCKS, sizeof *sorted, cmp_u64);
    for (int i = 1; i < CHURN_BLOCKS; i++)
        CHECK(sorted[i] != sorted[i - 1]);
    CHECK_EQ(pool[0], 0);
}

/* The model, indexed by the cache's own slots: which pool entry each slot holds (-1:
 * free) and when it was last referenced; and per pool entry its slot (-1: not cached). */
static int32_t slot_block[CHURN_CAP];
static uint64_t slot_time[CHURN_CAP];
static int32_t block_slot[CHURN_BLOCKS];

/* Every pool block is found at the model's slot, or not found. */
static bool index_matches(const struct iocache *c)
{
    for (int i = 0; i < CHURN_BLOCKS; i++) {
        uint32_t want = block_slot[i] < 0 ? NONE : (uint32_t)block_slot[i];
        if (blocks_find(&c->blocks, pool[i]) != want)
            return false;
    }
    return true;
}

/* Random accesses (3 in 4 to a hot set of 1200 blocks, the rest to all 5000) by four
 * clients, reads and writes.  With LRU the model predicts each outcome exactly; with
 * LRU-aging it checks hit iff cached, and that a victim is a cached block whose slot
 * the new block takes.  Stops at the first disagreement. */
static void churn(enum iocache_replacement r)
{
    struct iocache_params p;
    iocache_params_default(&p);
    p.capacity = CHURN_CAP;
    p.clients = 4;
    p.replacement = r;
    p.control = IOCACHE_PLAIN;
    struct iocache *c = NULL;
    CHECK_EQ(iocache_create(&p, &c), 0);
    if (!c)
        return;
    for (int i = 0; i < CHURN_CAP; i++)
        slot_block[i] = -1;
    for (int i = 0; i < CHURN_BLOCKS; i++)
        block_slot[i] = -1;
    uint32_t used = 0;
    uint64_t hits = 0, evictions = 0;
    bool ok = true;
    for (uint64_t t = 0; t < CHURN_ACCESSES && ok; t++) {
        uint64_t x = rnd();
        int b = (int)((x >> 16) % ((x & 3) ? CHURN_HOT : CHURN_BLOCKS));
        struct iocache_outcome o;
        int err = iocache_access(c, (unsigned)(x >> 60) & 3, pool[b], (x >> 8) & 1, t, &o);
        if (err || o.slot >= CHURN_CAP) {
            ok = false;
        } else if (block_slot[b] >= 0) {
            ok = o.result == IOCACHE_HIT && o.slot == (uint32_t)block_slot[b] && !o.evicted;
            hits++;
        } else if (used < CHURN_CAP) {
            ok = o.result == IOCACHE_MISS && !o.evicted && slot_block[o.slot] < 0;
            used++;
        } else {
            uint32_t v = o.slot;
            if (r == IOCACHE_LRU) {
                v = 0;
                for (uint32_t s = 1; s < CHURN_CAP; s++)
                    if (slot_time[s] < slot_time[v])
                        v = s;
            }
            ok = o.result == IOCACHE_MISS && o.evicted && o.slot == v &&
                 slot_block[v] >= 0 && o.victim == pool[slot_block[v]] && !o.victim_unused;
            if (ok)
                block_slot[slot_block[v]] = -1;
            evictions++;
        }
        if (!ok) {
            fprintf(stderr, "churn(%d): access %llu of block %llu disagrees with the model\n",
                    (int)r, (unsigned long long)t, (unsigned long long)pool[b]);
            break;
        }
        slot_block[o.slot] = b;
        block_slot[b] = (int32_t)o.slot;
        slot_time[o.slot] = t;
        if (t % 20000 == 19999 && !index_matches(c)) {
            fprintf(stderr, "churn(%d): index wrong after access %llu\n", (int)r,
                    (unsigned long long)t);
            ok = false;
        }
    }
    CHECK(ok);
    CHECK(index_matches(c));
    CHECK_EQ(c->blocks.used, CHURN_CAP);
    CHECK(hits > CHURN_ACCESSES / 4);
    CHECK(evictions > CHURN_ACCESSES / 4);
    struct iocache_stats st;
    iocache_stats(c, &st);
    uint64_t accesses = 0, hit_total = 0;
    for (int i = 0; i < 4; i++) {
        accesses += st.client[i].accesses;
        hit_total += st.client[i].hits;
    }
    if (ok) {
        CHECK_EQ(accesses, CHURN_ACCESSES);
        CHECK_EQ(hit_total, hits);
    }
    iocache_free(c);
}

/* A held slot is never a victim; with every slot held, an access goes around the cache
 * (BYPASS) and a prefetch is dropped (NOROOM); unheld again, it is evicted as before. */
static void held_slots_are_not_victims(void)
{
    struct iocache *c = make(2, IOCACHE_LRU);
    struct iocache_outcome a = acc(c, A), b = acc(c, B);
    CHECK_EQ(iocache_hold(c, a.slot), 0);
    struct iocache_outcome o = acc(c, C);   /* A is LRU but held: B goes */
    CHECK(o.result == IOCACHE_MISS && o.evicted && o.victim == B);
    CHECK_EQ(iocache_hold(c, o.slot), 0);
    o = acc(c, D);
    CHECK(o.result == IOCACHE_BYPASS && !o.evicted);
    CHECK(iocache_lookup(c, D) == IOCACHE_NOT_CACHED && iocache_lookup(c, A) == a.slot);
    o = pf(c, E);
    CHECK(o.result == IOCACHE_DROPPED && o.drop == IOCACHE_DROP_NOROOM);
    iocache_unhold(c, a.slot);
    o = acc(c, D);
    CHECK(o.result == IOCACHE_MISS && o.victim == A && o.slot == a.slot);
    CHECK_EQ(iocache_hold(c, 7), EINVAL);   /* not a slot in use */
    (void)b;
    iocache_free(c);
}

/* MIN's oracle: the requests' blocks by position. */
struct future_seq {
    const uint64_t *block;
    uint64_t n;
    const uint64_t *next;   /* if set: per position, the block's next position */
};

static uint64_t seq_next_use(void *ctx, uint64_t block, uint64_t at)
{
    const struct future_seq *f = ctx;
    if (f->next && at < f->n && f->block[at] == block)
        return f->next[at];
    for (uint64_t i = at + 1; i < f->n; i++)
        if (f->block[i] == block)
            return i;
    return UINT64_MAX;
}

static struct iocache *make_min(uint64_t capacity, struct future_seq *f)
{
    return make_with(capacity, IOCACHE_MIN, seq_next_use, f);
}

/* Positions are the sequence's: request i is made at now = i. */
static struct iocache_outcome min_acc(struct iocache *c, const struct future_seq *f, uint64_t i)
{
    struct iocache_outcome o;
    CHECK_EQ(iocache_access(c, 0, f->block[i], false, i, &o), 0);
    return o;
}

/* Two blocks, requests A B C A D B A C at positions 0-7: C's miss evicts B (next used at
 * 5, A at 3), D's evicts C (used at 7, A at 6), B's evicts D (never used again); with B
 * held (next used never), C's miss at 7 passes over it and evicts A. */
static void min_evicts_latest_next_use(void)
{
    static const uint64_t seq[] = {A, B, C, A, D, B, A, C};
    struct future_seq f = {seq, sizeof seq / sizeof *seq, NULL};
    struct iocache *c = make_min(2, &f);
    min_acc(c, &f, 0);
    min_acc(c, &f, 1);
    struct iocache_outcome o = min_acc(c, &f, 2);          /* C: A next at 3, B at 5 */
    CHECK(o.result == IOCACHE_MISS && o.evicted && o.victim == B);
    o = min_acc(c, &f, 3);                                  /* A hits */
    CHECK_EQ(o.result, IOCACHE_HIT);
    o = min_acc(c, &f, 4);                                  /* D: A next at 6, C at 7 */
    CHECK(o.result == IOCACHE_MISS && o.victim == C);
    o = min_acc(c, &f, 5);                                  /* B: D never again */
    CHECK(o.result == IOCACHE_MISS && o.victim == D);
    CHECK_EQ(iocache_hold(c, o.slot), 0);                   /* B held: A must go */
    o = min_acc(c, &f, 7);
    CHECK(o.result == IOCACHE_MISS && o.victim == A);
    iocache_free(c);

    struct iocache_params p;
    iocache_params_default(&p);
    p.capacity = 4;
    p.clients = 1;
    p.replacement = IOCACHE_MIN;
    CHECK(iocache_params_error(&p) != NULL && strstr(iocache_params_error(&p), "min"));
    struct iocache *none = NULL;
    CHECK_EQ(iocache_create(&p, &none), EINVAL);
}

enum { MIN_CAP = 400, MIN_BLOCKS = 2000, MIN_ACCESSES = 60000 };

static uint64_t min_seq[MIN_ACCESSES], min_next[MIN_ACCESSES];
static uint64_t last_at[MIN_BLOCKS + 1];

/* Random accesses (a hot set and a cold tail), some slots held for a while (up to 64 at
 * a time); each victim must be unheld, its next use the latest of every unheld block
 * cached then, found by brute force. */
static void min_churn(void)
{
    for (int i = 0; i < MIN_ACCESSES; i++) {
        uint64_t x = rnd();
        min_seq[i] = (x >> 16) % ((x & 3) ? MIN_BLOCKS / 4 : MIN_BLOCKS) + 1;
    }
    for (int b = 0; b <= MIN_BLOCKS; b++)
        last_at[b] = UINT64_MAX;
    for (int i = MIN_ACCESSES - 1; i >= 0; i--) {   /* next positions, from the end */
        min_next[i] = last_at[min_seq[i]];
        last_at[min_seq[i]] = (uint64_t)i;
    }
    struct future_seq f = {min_seq, MIN_ACCESSES, min_next};
    struct iocache *c = make_min(MIN_CAP, &f);
    for (int b = 0; b <= MIN_BLOCKS; b++)
        last_at[b] = UINT64_MAX;
    bool ok = true;
    uint64_t evictions = 0, misses = 0, passed_held = 0;
    uint32_t held[64];
    unsigned nheld = 0;
    for (uint64_t i = 0; i < MIN_ACCESSES && ok; i++) {
        struct iocache_outcome o = min_acc(c, &f, i);
        misses += o.result == IOCACHE_MISS;
        last_at[min_seq[i]] = i;   /* each cached block's next use: min_next[last_at] */
        if (o.evicted) {
            evictions++;
            uint64_t latest = min_next[last_at[o.victim]];
            for (uint32_t s = 0; s < c->blocks.used && ok; s++) {
                const struct slot *x = &c->blocks.slot[s];
                if (x->block == min_seq[i])
                    continue;
                uint64_t next = min_next[last_at[x->block]];
                if (x->holds && next > latest)
                    passed_held++;
                if (!x->holds && next > latest)
                    ok = false;
            }
        }
        if (o.result != IOCACHE_BYPASS && i % 7 == 0 && nheld < 64) {
            CHECK_EQ(iocache_hold(c, o.slot), 0);
            held[nheld++] = o.slot;
        } else if (i % 5 == 0 && nheld > 0) {
            iocache_unhold(c, held[0]);
            for (unsigned k = 1; k < nheld; k++)
                held[k - 1] = held[k];
            nheld--;
        }
        if (!ok)
            fprintf(stderr, "min_churn: access %llu evicted block %llu, not the latest used\n",
                    (unsigned long long)i, (unsigned long long)o.victim);
    }
    CHECK(ok);
    CHECK(evictions > MIN_ACCESSES / 10);
    CHECK(passed_held > 100);   /* the search went past held blocks */
    CHECK_EQ(misses, evictions + MIN_CAP);
    iocache_free(c);
}

int main(void)
{
    held_slots_are_not_victims();
    lru_order_and_slots();
    lru_prefetch_enters_mru();
    aging_survives_scan();
    aging_long_ago();
    make_pool();
    churn(IOCACHE_LRU);
    churn(IOCACHE_LRU_AGING);
    min_evicts_latest_next_use();
    min_churn();
    return check_done("test_replacement");
}
