/*
 * foresight_iocache.h — the shared I/O-node cache's one policy interface (paper 3:
 * "Prefetch Throttling and Data Pinning for Improving Performance of Shared Caches").
 *
 * One object is the memory cache of one I/O node, shared by every client that reads
 * through it.  Clients make two kinds of request: an access (a demand read or a write
 * of a block) and a prefetch (the compiler's nonbinding hint that the client will read
 * a block).  The cache answers each, and between epochs decides which clients' prefetches
 * to throttle and whose blocks to pin.  The same object serves the trace simulator
 * (sharedcache/sim) and the nbdkit filter (sharedcache/nbdkit), so both make exactly the
 * same decisions on the same sequence of calls.
 *
 * Blocks are numbered by the caller (block = byte offset / block size); the cache holds
 * `capacity` of them.  Time is not the cache's business: a prefetched block is in the
 * cache from the call on, and the caller keeps when its data arrive (per slot, see
 * `slot` in the outcome).
 *
 * Not thread-safe: one caller at a time (the nbdkit filter holds a lock around calls,
 * never across disk I/O).  No call exits or prints; errors are returned.
 *
 * Terms (the paper's, Sections IV and V):
 * - The *owner* of a cached block is the client that last referenced (accessed) it, or,
 *   until someone does, the client whose prefetch admitted it.
 * - A prefetch that must make room evicts a *victim* and leaves a *shadow*: (victim,
 *   prefetched block, prefetching client k).  The shadow resolves at
 *   the first later reference to either block: the victim first ⇒ the prefetch was
 *   *harmful* (k is charged; the referencing client l is *affected*, intra-client when
 *   k = l; if l's reference missed, that miss is l's *harm-miss*); the prefetched block
 *   first ⇒ *benign*.  Shadows sit in a ring of `shadows` places (default: the
 *   capacity), one per eviction by a prefetch in turn: a shadow still open when its place
 *   comes round again is dropped and counts as *unresolved*.
 * - An *epoch* ends when the caller calls iocache_epoch_end (the simulator: E equal spans
 *   of the trace's requests; the server: every N requests or milliseconds).  Decisions
 *   taken at the end of epoch e hold in epochs e+1 … e+K; the counters they read are
 *   reset each epoch.
 */
#ifndef FORESIGHT_IOCACHE_H
#define FORESIGHT_IOCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IOCACHE_MAX_CLIENTS 256

/* How a victim is chosen among the blocks a request may evict. */
enum iocache_replacement {
    /* Least recently referenced first. */
    IOCACHE_LRU,
    /* LRU with aging, the paper's replacement, which it does not define.  Here it is the
     * Multi-Queue policy of Zhou, Philbin and Li (USENIX ATC 2001, the paper's [38]):
     * four LRU queues by how often a block was referenced while cached (1, 2–3, 4–7, 8 or
     * more times); a block not referenced while `capacity` accesses went by (prefetches
     * are not references) ages, moving down one queue; the victim is the least recently
     * used block of the lowest non-empty queue.
     * Blocks referenced often survive a scan; blocks referenced often long ago do not. */
    IOCACHE_LRU_AGING,
    /* Belady's MIN, the bound no replacement beats: the victim is the block whose next
     * reference (next_use, required) comes last.  Only a simulator knows the future.
     * Capacity below 2^31 blocks. */
    IOCACHE_MIN,
};

/* What decides, at each epoch's end, whose prefetches are stopped or whose blocks kept. */
enum iocache_control {
    IOCACHE_PLAIN,    /* every prefetch is carried out (the paper's baseline) */
    IOCACHE_COARSE,   /* per client (Section V.A, Figures 6 and 7) */
    IOCACHE_FINE,     /* per pair of clients (Section V.C) */
    IOCACHE_OPTIMAL,  /* the oracle of Figure 21: drops exactly the harmful prefetches */
};

/* Throttling's measure of client k in an epoch (fine: of k's prefetches harming l). */
enum iocache_metric {
    IOCACHE_METRIC_RATIO,   /* k's harmful prefetches / k's prefetches issued (Figure 6) */
    IOCACHE_METRIC_SHARE,   /* k's harmful prefetches / all harmful prefetches (the text) */
};

/* For IOCACHE_OPTIMAL and IOCACHE_MIN: when BLOCK is next referenced by any client, in
 * the caller's order (the smaller the sooner), or UINT64_MAX if never again.  NOW is the
 * caller's position of the current request; a reference being served is not its own
 * next use.  Only references that reach this cache count: MIN keeps a block keyed by a
 * reference that never comes. */
typedef uint64_t (*iocache_next_use_fn)(void *ctx, uint64_t block, uint64_t now);

struct iocache_params {
    uint64_t capacity;                    /* blocks the cache holds, >= 1 */
    unsigned clients;                     /* client ids are 0 … clients-1, <= MAX_CLIENTS */
    enum iocache_replacement replacement;
    enum iocache_control control;
    bool throttle;                        /* coarse/fine: prefetch throttling on */
    bool pin;                             /* coarse/fine: data pinning on */
    double threshold;                     /* in (0, 1]; 0: the paper's (coarse 0.35, fine 0.20) */
    unsigned k;                           /* decisions hold K epochs, >= 1; 0 picks 3 */
    enum iocache_metric metric;
    uint64_t shadows;                     /* shadows kept; 0 picks `capacity` */
    iocache_next_use_fn next_use;         /* required by IOCACHE_OPTIMAL and IOCACHE_MIN */
    void *next_use_ctx;
};

/* Fills P with the defaults: LRU_AGING, FINE, throttle and pin on, the paper's threshold,
 * K = 3, METRIC_RATIO; capacity and clients are the caller's to set. */
void iocache_params_default(struct iocache_params *p);

/* NULL when P is valid, else a one-line message naming the bad field and its valid
 * values (static storage). */
const char *iocache_params_error(const struct iocache_params *p);

struct iocache;

/* A new, empty cache in *OUT: 0, or EINVAL (P invalid: iocache_params_error says why) or
 * ENOMEM. */
int iocache_create(const struct iocache_params *p, struct iocache **out);
void iocache_free(struct iocache *c);

enum iocache_result {
    IOCACHE_HIT,       /* access: the block was cached */
    IOCACHE_MISS,      /* access: it was not; it is now (fetched or written) */
    IOCACHE_ADMITTED,  /* prefetch: the block is now cached; the caller reads it */
    IOCACHE_CACHED,    /* prefetch: already cached, nothing to do */
    IOCACHE_DROPPED,   /* prefetch: not carried out (see the reason) */
    IOCACHE_BYPASS,    /* access: missed, and every cached block is held (iocache_hold):
                          not cached; the caller reads or writes around the cache */
};

enum iocache_drop {
    IOCACHE_DROP_NONE,
    IOCACHE_DROP_THROTTLED,  /* the client's prefetches are throttled (fine: toward the
                                victim's owner) */
    IOCACHE_DROP_PINNED,     /* every block the prefetch could evict is pinned against it */
    IOCACHE_DROP_ORACLE,     /* optimal: the prefetch would be harmful */
    IOCACHE_DROP_NOROOM,     /* every cached block is held by the caller */
};

struct iocache_outcome {
    enum iocache_result result;
    enum iocache_drop drop;
    uint32_t slot;        /* HIT/MISS/ADMITTED/CACHED: the block's slot, < capacity,
                             stable while it stays cached (the caller's per-block state) */
    bool evicted;         /* MISS/ADMITTED: a victim was evicted */
    uint64_t victim;      /* …this block */
    bool victim_unused;   /* …and it was prefetched and never referenced */
};

/* CLIENT reads (WRITE false) or writes BLOCK.  Resolves the shadows naming BLOCK, then
 * looks it up; a miss makes room by replacement alone (pins only protect against
 * prefetches).  NOW is the caller's position (only the next-use oracle of IOCACHE_OPTIMAL
 * and IOCACHE_MIN reads it). */
int iocache_access(struct iocache *c, unsigned client, uint64_t block, bool write, uint64_t now,
                   struct iocache_outcome *out);

/* CLIENT hints that it will read BLOCK.  Returns 0 and the outcome, or EINVAL for a
 * client id out of range.  A prefetch is not a reference: it resolves no shadow. */
int iocache_prefetch(struct iocache *c, unsigned client, uint64_t block, uint64_t now,
                     struct iocache_outcome *out);

/* The caller's hold on a cached block's SLOT: while held (holds nest), no request
 * evicts it, as a server must while it reads the block's data in or copies them out.
 * iocache_hold returns EINVAL for a slot not in use. */
int iocache_hold(struct iocache *c, uint32_t slot);
void iocache_unhold(struct iocache *c, uint32_t slot);

/* BLOCK's slot, or IOCACHE_NOT_CACHED (no request: nothing changes). */
#define IOCACHE_NOT_CACHED UINT32_MAX
uint32_t iocache_lookup(const struct iocache *c, uint64_t block);

/* Ends the current epoch: takes the decisions for the next K epochs from its counters
 * (coarse and fine, whichever is on), then resets the counters. */
void iocache_epoch_end(struct iocache *c);

/* Counters of the current epoch (reset by iocache_epoch_end), per client and per pair. */
struct iocache_epoch {
    uint64_t harmful;                       /* harmful prefetches resolved this epoch */
    uint64_t harm_misses;
    uint64_t issued[IOCACHE_MAX_CLIENTS];    /* prefetches admitted, by prefetching client */
    uint64_t harmful_by[IOCACHE_MAX_CLIENTS];       /* by prefetching client k */
    uint64_t harm_misses_of[IOCACHE_MAX_CLIENTS];   /* by affected client l */
    /* harm[k * clients + l]: harmful prefetches of k affecting l; miss[…]: l's
     * harm-misses caused by k.  `clients` × `clients` each. */
    const uint64_t *harm;
    const uint64_t *miss;
};
const struct iocache_epoch *iocache_epoch(const struct iocache *c);
unsigned iocache_epoch_number(const struct iocache *c);   /* epochs ended so far */

/* Whether, in the current epoch, K's prefetches are throttled (coarse; fine: toward L)
 * and L's blocks are pinned (coarse; fine: against K).  For coarse, the other client is
 * ignored. */
bool iocache_throttled(const struct iocache *c, unsigned k, unsigned l);
bool iocache_pinned(const struct iocache *c, unsigned l, unsigned k);

/* Totals since creation, per client and for the node. */
struct iocache_client_stats {
    uint64_t accesses, hits, misses, writes;
    uint64_t prefetches;            /* prefetch calls */
    uint64_t admitted, cached;      /* …carried out, or already cached */
    uint64_t dropped_throttled, dropped_pinned, dropped_oracle, dropped_noroom;
    uint64_t useful;                /* admitted blocks referenced before their eviction */
    uint64_t unused;                /* admitted blocks evicted unreferenced */
    uint64_t harmful;               /* resolved harmful, this client prefetching */
    uint64_t benign;
    uint64_t harm_misses;           /* this client's misses on victims of harmful prefetches */
    uint64_t throttled_epochs, pinned_epochs;   /* epochs with a decision against/for it */
};

struct iocache_stats {
    uint64_t harmful, benign, unresolved;   /* shadows by how they ended (open ones aside) */
    uint64_t intra, inter;                  /* harmful, by whether k = l */
    uint64_t open_shadows;
    uint64_t pin_skips;                     /* blocks passed over as victims because pinned */
    uint64_t epochs;
    unsigned clients;
    struct iocache_client_stats client[IOCACHE_MAX_CLIENTS];
};
void iocache_stats(const struct iocache *c, struct iocache_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* FORESIGHT_IOCACHE_H */
