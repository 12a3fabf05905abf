/*
 * test_cache.c — one CPU's set-associative LRU cache (cache.c), exactly.  It proves:
 * - direct mapped: a line evicts the other line of its set and only it;
 * - 4 ways: the victim is the least recently used (a hit renews a line, a miss inserts
 *   at the MRU end); a removed line's way is the next one filled, with no victim;
 * - the two representations (searched arrays up to 8 ways, indexed circular lists
 *   beyond) behave identically: for 1, 2, 4, 8, 16 and 64 ways and fully associative
 *   (1 set of 256), 200000 pseudo-random lookups, inserts and removes over 4 times the
 *   cache's lines give every hit, miss and victim an array-based LRU model gives.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cs_internal.h"
#include "rng.h"

/* The model: per set an array, MRU first, CS_NONE for empty ways at the end. */
struct model {
    uint32_t sets, ways;
    uint32_t *t;
};

static int model_find(const struct model *m, uint32_t set, uint32_t id)
{
    for (uint32_t w = 0; w < m->ways; w++)
        if (m->t[set * m->ways + w] == id)
            return (int)w;
    return -1;
}

static void model_front(struct model *m, uint32_t set, int w, uint32_t id)
{
    uint32_t *t = m->t + set * m->ways;
    for (int i = w; i > 0; i--)
        t[i] = t[i - 1];
    t[0] = id;
}

static void randomized(uint32_t sets, uint32_t ways)
{
    struct cs_cache c;
    CHECK_EQ(cs_cache_init(&c, sets, ways), 0);
    struct model m = {sets, ways, malloc(sizeof(uint32_t) * sets * ways)};
    for (uint32_t i = 0; i < sets * ways; i++)
        m.t[i] = CS_NONE;
    uint32_t universe = 4 * sets * ways;
    for (int step = 0; step < 200000; step++) {
        uint32_t id = (uint32_t)(next() % universe);
        uint32_t set = id % sets; /* a line's set never changes */
        int w = model_find(&m, set, id);
        if (next() % 8 == 0) {
            CHECK_EQ(cs_cache_remove(&c, set, id), w >= 0);
            if (w >= 0) {
                uint32_t *t = m.t + set * ways;
                memmove(t + w, t + w + 1, (ways - 1 - (uint32_t)w) * sizeof *t);
                t[ways - 1] = CS_NONE;
            }
            continue;
        }
        bool hit = cs_cache_lookup(&c, set, id);
        CHECK_EQ(hit, w >= 0);
        if (hit) {
            model_front(&m, set, w, id);
        } else {
            uint32_t expect = m.t[set * ways + ways - 1];
            CHECK_EQ(cs_cache_insert(&c, set, id), expect);
            model_front(&m, set, (int)ways - 1, id);
        }
        if (check_failures > 10)
            break;
    }
    free(m.t);
    cs_cache_free(&c);
}

int main(void)
{
    rng = 99;
    struct cs_cache c;
    /* direct mapped, 4 sets */
    CHECK_EQ(cs_cache_init(&c, 4, 1), 0);
    CHECK(!cs_cache_lookup(&c, 1, 5));
    CHECK_EQ(cs_cache_insert(&c, 1, 5), CS_NONE);
    CHECK_EQ(cs_cache_insert(&c, 2, 6), CS_NONE);
    CHECK(cs_cache_lookup(&c, 1, 5));
    CHECK_EQ(cs_cache_insert(&c, 1, 9), 5);
    CHECK(!cs_cache_lookup(&c, 1, 5));
    CHECK(cs_cache_lookup(&c, 2, 6));
    cs_cache_free(&c);

    /* one set of 4 ways (searched) and of 16 (indexed), filled with ids 1..ways */
    for (uint32_t ways = 4; ways <= 16; ways += 12) {
        CHECK_EQ(cs_cache_init(&c, 1, ways), 0);
        for (uint32_t id = 1; id <= ways; id++)
            CHECK_EQ(cs_cache_insert(&c, 0, id), CS_NONE);
        CHECK(cs_cache_lookup(&c, 0, 1));                /* 1 renewed: 2 is the LRU */
        CHECK_EQ(cs_cache_insert(&c, 0, 100), 2);
        CHECK_EQ(cs_cache_insert(&c, 0, 101), 3);
        CHECK(cs_cache_remove(&c, 0, 1));
        CHECK(!cs_cache_remove(&c, 0, 1));
        CHECK_EQ(cs_cache_insert(&c, 0, 102), CS_NONE); /* 1's way, now empty */
        CHECK_EQ(cs_cache_insert(&c, 0, 103), 4);
        cs_cache_free(&c);
    }

    static const uint32_t geometries[][2] = {{64, 1}, {32, 2}, {16, 4}, {8, 8},
                                             {8, 16}, {4, 64}, {1, 256}};
    for (size_t g = 0; g < sizeof geometries / sizeof *geometries; g++)
        randomized(geometries[g][0], geometries[g][1]);
    return check_done("test_cache");
}
