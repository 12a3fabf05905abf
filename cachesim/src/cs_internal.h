/*
 * cs_internal.h — what the simulator's mechanisms share: the line map (linemap.c), the
 * set-associative LRU cache (cache.c), the fully associative shadow (shadow.c), the
 * page mapping (mapping.c) and the coherence directory (coherence.c).  sim.c ties them.
 *
 * Lines are named two ways.  A *physical line* (frame * lines-per-page + line in page)
 * picks the cache set.  A *line id* (the page's mapping order * lines-per-page + line in
 * page) is dense, so the directory is an array; it is also what the caches store as
 * their tags (one id per physical line and back, so equal ids are equal lines).
 */
#ifndef FORESIGHT_CS_INTERNAL_H
#define FORESIGHT_CS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "foresight_cachesim.h"

#define CS_NONE UINT32_MAX     /* no line id: an empty way, no victim */
#define CS_MAX_LINE_IDS (UINT32_MAX - 1u)

/* ---- linemap.c: open-addressing map from 64-bit keys to 32-bit values ---- */

struct cs_linemap_entry {
    uint64_t key; /* CS_LINEMAP_EMPTY: free */
    uint32_t val;
};
#define CS_LINEMAP_EMPTY UINT64_MAX

struct cs_linemap {
    struct cs_linemap_entry *e;
    size_t mask;  /* slots - 1 (a power of two minus one) */
    unsigned shift; /* 64 - log2(slots): Fibonacci hashing */
    size_t count;
};

/* Room for CAPACITY keys without growing (at most half the slots used). */
int cs_linemap_init(struct cs_linemap *m, size_t capacity);
void cs_linemap_free(struct cs_linemap *m);

static inline size_t cs_linemap_home(const struct cs_linemap *m, uint64_t key)
{
    return (size_t)((key * UINT64_C(0x9E3779B97F4A7C15)) >> m->shift);
}

/* KEY's value, or NULL. */
static inline uint32_t *cs_linemap_find(const struct cs_linemap *m, uint64_t key)
{
    for (size_t i = cs_linemap_home(m, key);; i = (i + 1) & m->mask) {
        struct cs_linemap_entry *e = &m->e[i];
        if (e->key == key)
            return &e->val;
        if (e->key == CS_LINEMAP_EMPTY)
            return NULL;
    }
}

/* Adds KEY (absent, != CS_LINEMAP_EMPTY) with VAL, growing the table as needed;
 * -1 on ENOMEM. */
int cs_linemap_add(struct cs_linemap *m, uint64_t key, uint32_t val);
/* Removes KEY if present (backward-shift deletion: no tombstones). */
void cs_linemap_remove(struct cs_linemap *m, uint64_t key);

/* ---- cache.c: a set-associative LRU cache of line ids ---- */

/* Up to this many ways a set is an array in recency order, searched; beyond, each set
 * is a circular list and the cache keeps an index from line id to way. */
#define CS_SCAN_WAYS 8u

struct cs_cache {
    uint32_t sets, ways;
    uint32_t *tag;       /* [sets * ways]: scanned, MRU first; indexed, by slot */
    uint32_t *prev, *next, *mru; /* indexed: per slot, per set (CS_NONE: none) */
    struct cs_linemap index;     /* indexed: line id -> slot */
};

int cs_cache_init(struct cs_cache *c, uint32_t sets, uint32_t ways);
void cs_cache_free(struct cs_cache *c);
/* Whether ID is in SET; a hit makes it the set's most recently used. */
bool cs_cache_lookup(struct cs_cache *c, uint32_t set, uint32_t id);
/* Puts ID (not in the cache) into SET as its most recently used; returns the line id it
 * evicted (the set's least recently used) or CS_NONE if a way was empty. */
uint32_t cs_cache_insert(struct cs_cache *c, uint32_t set, uint32_t id);
/* Takes ID out of SET (its way becomes the set's least recently used, empty); whether
 * it was there. */
bool cs_cache_remove(struct cs_cache *c, uint32_t set, uint32_t id);

/* ---- shadow.c: the fully associative LRU shadow that splits replacement misses ---- */

#define CS_SHADOW_FRONT 4u

struct cs_shadow {
    uint32_t front[CS_SHADOW_FRONT]; /* the most recently used lines, MRU first */
    unsigned nfront;                 /* its size: CS_SHADOW_FRONT, or 0 for tiny caches */
    struct cs_cache rest;            /* one set of the other lines - nfront ways */
};

int cs_shadow_init(struct cs_shadow *s, uint32_t lines);
void cs_shadow_free(struct cs_shadow *s);
/* One reference to ID: whether the shadow held it (it does now, most recently used). */
bool cs_shadow_touch(struct cs_shadow *s, uint32_t id);

/* ---- mapping.c: virtual page -> physical frame at first touch ---- */

struct cs_mapping {
    enum cs_policy policy;
    uint32_t ncolors;      /* a power of two */
    struct cs_linemap pages; /* vpage -> page index (mapping order) */
    uint64_t *frame;         /* [page index] */
    uint64_t *vpage;         /* [page index]: the page's virtual page number */
    uint64_t *cpus;          /* [page index], when tracked (cs_track_pages): bit i, CPU i
                              * touched it since tracking began or the last reset */
    uint32_t npages, cap;
    uint32_t max_pages;      /* the most the line ids can name */
    uint64_t *per_color;     /* [ncolors]: pages handed out so far */
    uint64_t bh_next;        /* bin hopping: first touches so far */
    uint64_t rng;            /* random: splitmix64 state */
    struct fs_color_run *hints; /* sorted by vpage, disjoint */
    size_t nhints;
};

int cs_mapping_init(struct cs_mapping *m, enum cs_policy policy, uint32_t ncolors,
                    uint64_t seed, uint32_t max_pages);
void cs_mapping_free(struct cs_mapping *m);
int cs_mapping_set_hints(struct cs_mapping *m, const struct fs_color_run *runs, size_t n);
/* VPAGE's page index, mapped now if no CPU touched it yet (*FRESH then true).
 * -1 with errno ENOMEM, or ERANGE past max_pages pages (nothing mapped). */
int cs_mapping_page(struct cs_mapping *m, uint64_t vpage, uint32_t *index, bool *fresh);

/* ---- coherence.c: the directory, per line id ---- */

struct cs_line {
    uint64_t holders; /* CPUs holding a copy */
    uint64_t ever;    /* CPUs that have held it (a miss of anyone else is cold) */
    uint64_t lost;    /* CPUs whose copy another CPU's write invalidated, not back since */
    uint32_t record;  /* 1 + its sharing record's index in the pool, 0 if none yet */
    int8_t excl;      /* the CPU holding it Exclusive or Modified, or -1 */
    uint8_t dirty;    /* excl holds it Modified */
};

enum cs_miss_kind { CS_COLD, CS_TRUE_SHARING, CS_FALSE_SHARING, CS_REPLACED };

struct cs_directory {
    struct cs_line *line; /* [line id] */
    size_t nlines, cap;
    unsigned cpus, words; /* words per line */
    /* Sharing records, allocated at a line's first invalidation: per CPU the write that
     * invalidated its copy, per word of the line the last write to it (write numbers). */
    uint64_t *pool;
    size_t pool_used, pool_cap;
    uint64_t writes; /* write references so far: the current write's number */
};

int cs_directory_init(struct cs_directory *d, unsigned cpus, uint32_t line_bytes);
void cs_directory_free(struct cs_directory *d);
/* Room for line ids below NLINES (new lines: never held). */
int cs_directory_grow(struct cs_directory *d, size_t nlines);
/* Why CPU misses line ID, whose reference accesses words WLO..WHI; marks the line as
 * held by it once (ever) and no longer lost. */
enum cs_miss_kind cs_coherence_miss_kind(struct cs_directory *d, uint32_t id, unsigned cpu,
                                         unsigned wlo, unsigned whi);
/* CPU's read miss on ID: the new states; the CPU whose Modified copy is written back,
 * or -1. */
int cs_coherence_read_miss(struct cs_directory *d, uint32_t id, unsigned cpu);
/* CPU writes words WLO..WHI of ID (HIT: it holds a copy).  Numbers the write; the
 * other CPUs' copies it invalidates into *INVALIDATE (their directory state updated, the
 * caller takes them out of their caches); *UPGRADE whether it was a write hit on a
 * Shared copy.  -1 on ENOMEM (no sharing record), nothing changed. */
int cs_coherence_write(struct cs_directory *d, uint32_t id, unsigned cpu, bool hit,
                       unsigned wlo, unsigned whi, uint64_t *invalidate, bool *upgrade);
/* CPU's copy of ID is replaced: whether it is written back (it was Modified). */
bool cs_coherence_evict(struct cs_directory *d, uint32_t id, unsigned cpu);

#endif
