/* internal.h — the I/O-node cache's parts, shared by its source files only. */
#ifndef IOCACHE_INTERNAL_H
#define IOCACHE_INTERNAL_H

#include "foresight_iocache.h"

#define NONE UINT32_MAX
#define QUEUES 4   /* lru-aging's queues; lru uses the first only */

/* blocks.c: the cached blocks, their index, and replacement. */
struct slot {
    uint64_t block;
    uint64_t last_ref;     /* the table's reference count when last referenced or aged */
    uint32_t prev, next;   /* in its queue (sentinels are capacity + q) */
    uint16_t owner;        /* last referencing client, or the prefetcher until referenced */
    uint8_t queue;
    uint8_t refs;          /* references while cached, saturating */
    bool unreferenced;     /* admitted by a prefetch and not referenced since */
    uint16_t holds;        /* the caller's holds: never a victim while held */
    uint32_t hpos;         /* min: its place in the heap */
    uint64_t next_use;     /* min: when it is next referenced (UINT64_MAX: never) */
};

struct blocks {
    enum iocache_replacement replacement;
    uint32_t capacity, used;
    struct slot *slot;     /* capacity + QUEUES: the last QUEUES are list sentinels */
    uint32_t *index;       /* open addressing, linear probing: slot + 1, 0 empty */
    uint64_t index_mask;
    unsigned index_shift;
    uint64_t clock;        /* references so far (lru-aging's time) */
    /* min: the cached slots in a heap, the one referenced last in the future on top */
    uint32_t *heap, *scratch;
    uint32_t nheap;
    iocache_next_use_fn next_use;
    void *next_use_ctx;
    uint64_t now;          /* the caller's position of the request being served */
};

int blocks_init(struct blocks *t, uint64_t capacity, enum iocache_replacement r,
                iocache_next_use_fn next_use, void *next_use_ctx);
void blocks_fini(struct blocks *t);
uint32_t blocks_find(const struct blocks *t, uint64_t block);
/* BLOCK, not cached, into a free slot or VICTIM's (evicted); returns its slot. */
uint32_t blocks_insert(struct blocks *t, uint64_t block, uint32_t victim, unsigned owner,
                       bool prefetched);
void blocks_reference(struct blocks *t, uint32_t s, unsigned client);
bool blocks_full(const struct blocks *t);
/* The victim replacement would choose, passing over held slots and those SKIP says are
 * protected (counted in *SKIPPED); NONE when every cached block is held or protected. */
typedef bool (*blocks_skip_fn)(const void *ctx, const struct slot *s);
uint32_t blocks_victim(const struct blocks *t, blocks_skip_fn skip, const void *ctx,
                       uint64_t *skipped);

/* shadows.c: harmful-prefetch accounting. */
struct shadow {
    uint64_t victim, prefetched;
    uint32_t vprev, vnext, pprev, pnext;   /* chains by victim and by prefetched block */
    uint16_t prefetcher;
    bool open;
};

struct shadows {
    uint32_t count, next;     /* ring size; where the next shadow goes */
    struct shadow *ring;
    uint32_t *vhead, *phead;  /* chain heads, by hash of the block */
    uint64_t mask;
    unsigned shift;
};

int shadows_init(struct shadows *h, uint64_t count);
void shadows_fini(struct shadows *h);

/* control.c: the epoch counters and the decisions read from them. */
struct control {
    enum iocache_control kind;
    bool throttle, pin;
    double threshold;
    unsigned k, clients;
    enum iocache_metric metric;
    unsigned epoch;                /* epochs ended */
    struct iocache_epoch now;      /* this epoch's counters */
    uint64_t *harm, *miss;         /* clients × clients: now.harm, now.miss */
    /* a decision holds while epoch < until (0: never taken) */
    unsigned *throttle_until;      /* coarse: [k]; fine: [k * clients + l] */
    unsigned *pin_until;           /* coarse: [l]; fine: [l * clients + k] */
};

int control_init(struct control *c, const struct iocache_params *p);
void control_fini(struct control *c);
void control_decide(struct control *c, struct iocache_stats *st);
bool control_throttled(const struct control *c, unsigned k, unsigned l);
bool control_pinned(const struct control *c, unsigned l, unsigned k);

struct iocache {
    struct blocks blocks;
    struct shadows shadows;
    struct control control;
    iocache_next_use_fn next_use;
    void *next_use_ctx;
    struct iocache_stats st;
};

/* shadows.c, with the cache's counters */
void shadows_add(struct iocache *c, uint64_t victim, uint64_t prefetched, unsigned prefetcher);
void shadows_reference(struct iocache *c, uint64_t block, unsigned client, bool miss);

static inline uint64_t iocache_hash(uint64_t block, unsigned shift)
{
    return (block * 0x9E3779B97F4A7C15ull) >> shift;
}

#endif
