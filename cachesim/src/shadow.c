/*
 * shadow.c — the fully associative LRU cache that splits a CPU's replacement misses into
 * the two of the 3C model the paper's Section 4 separates: a line that left the real
 * cache by replacement but that a fully associative cache of as many lines, fed the
 * same references, still holds was lost to the mapping (a conflict miss, what page
 * coloring can remove); one the shadow lost too was lost to the cache's size (capacity).
 *
 * It sees every reference, so it must be cheap: the few most recently used lines are a
 * small array in recency order (a loop interleaving a handful of arrays references the
 * same few lines again and again), the rest cache.c's indexed cache of one set (an
 * index probe and a few list links).  A line leaving the array becomes the most recent
 * of the rest; together they are exactly one LRU list of `lines` lines.
 */
#include <string.h>

#include "cs_internal.h"

int cs_shadow_init(struct cs_shadow *s, uint32_t lines)
{
    memset(s, 0, sizeof *s);
    s->nfront = lines > 2 * CS_SHADOW_FRONT ? CS_SHADOW_FRONT : 0;
    for (unsigned i = 0; i < CS_SHADOW_FRONT; i++)
        s->front[i] = CS_NONE;
    return cs_cache_init(&s->rest, 1, lines - s->nfront);
}

void cs_shadow_free(struct cs_shadow *s)
{
    cs_cache_free(&s->rest);
}

bool cs_shadow_touch(struct cs_shadow *s, uint32_t id)
{
    uint32_t *f = s->front;
    const unsigned n = s->nfront;
    if (n == 0) {
        if (cs_cache_lookup(&s->rest, 0, id))
            return true;
        cs_cache_insert(&s->rest, 0, id);
        return false;
    }
    for (unsigned i = 0; i < n; i++)
        if (f[i] == id) {
            memmove(f + 1, f, i * sizeof *f);
            f[0] = id;
            return true;
        }
    /* not among the most recent: out of the rest if there, and the array's least recent
     * line becomes the rest's most recent (into the way just emptied, else evicting) */
    bool hit = cs_cache_remove(&s->rest, 0, id);
    uint32_t demoted = f[n - 1];
    memmove(f + 1, f, (n - 1) * sizeof *f);
    f[0] = id;
    if (demoted != CS_NONE)
        cs_cache_insert(&s->rest, 0, demoted);
    return hit;
}
