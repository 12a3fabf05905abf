/*
 * test_shadow.c — the fully associative LRU shadow (shadow.c) that splits replacement
 * misses.  It proves:
 * - it holds exactly the N most recently touched distinct lines: N lines touched, then
 *   touched again in any order, all hit; one more line evicts the least recently
 *   touched, and only it;
 * - a cyclic sweep over N + 1 lines misses every time (LRU's worst case), over N lines
 *   hits every time after the first pass;
 * - touching the most recently used line again is a hit that changes nothing;
 * - with 5, 12 and 1024 lines (the recent lines' array off, in front of a searched
 *   rest, in front of an indexed rest) it agrees with the stack-distance definition (a
 *   line hits iff fewer than N distinct lines were touched since its last touch) over
 *   60000 pseudo-random touches of 1.5 N lines, a third of them on a hot 64.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cs_internal.h"
#include "rng.h"

enum { UNIVERSE_MAX = 1536, TOUCHES = 60000 };

static void stack_distance(uint32_t lines)
{
    struct cs_shadow s;
    const uint32_t universe = lines + lines / 2, hot = lines < 64 ? lines : 64;
    CHECK_EQ(cs_shadow_init(&s, lines), 0);
    static int64_t last[UNIVERSE_MAX]; /* time of a line's last touch + 1 */
    static uint32_t order[TOUCHES], seen_at[UNIVERSE_MAX];
    memset(last, 0, sizeof last);
    memset(seen_at, 0, sizeof seen_at);
    for (int t = 0; t < TOUCHES; t++) {
        uint32_t id = (uint32_t)(next() % 3 ? next() % universe : next() % hot);
        order[t] = id;
        bool expect = false;
        if (last[id]) { /* distinct lines since its last touch */
            unsigned distinct = 0;
            for (int u = (int)last[id]; u < t; u++)
                if (seen_at[order[u]] != (uint32_t)t + 1) {
                    seen_at[order[u]] = (uint32_t)t + 1;
                    distinct++;
                }
            expect = distinct < lines;
        }
        CHECK_EQ(cs_shadow_touch(&s, id), expect);
        last[id] = t + 1;
        if (check_failures > 10)
            break;
    }
    cs_shadow_free(&s);
}

int main(void)
{
    rng = 7;
    struct cs_shadow s;
    enum { N = 16 };
    CHECK_EQ(cs_shadow_init(&s, N), 0);
    for (uint32_t i = 0; i < N; i++)
        CHECK(!cs_shadow_touch(&s, i));
    for (uint32_t i = 0; i < N; i++)
        CHECK(cs_shadow_touch(&s, (i * 7) % N));  /* all there, any order */
    CHECK(cs_shadow_touch(&s, (15 * 7) % N));     /* the MRU again */
    /* the LRU is now (0 * 7) % N = 0 */
    CHECK(!cs_shadow_touch(&s, 100));
    CHECK(!cs_shadow_touch(&s, 0));               /* 0 went; it evicted (1 * 7) % N = 7 */
    CHECK(!cs_shadow_touch(&s, 7));
    CHECK(cs_shadow_touch(&s, 100));
    cs_shadow_free(&s);

    CHECK_EQ(cs_shadow_init(&s, N), 0);
    unsigned hits = 0;
    for (int pass = 0; pass < 4; pass++)
        for (uint32_t i = 0; i <= N; i++)
            hits += cs_shadow_touch(&s, i);
    CHECK_EQ(hits, 0);
    cs_shadow_free(&s);
    CHECK_EQ(cs_shadow_init(&s, N), 0);
    for (int pass = 0; pass < 4; pass++)
        for (uint32_t i = 0; i < N; i++)
            hits += cs_shadow_touch(&s, i + 1000);
    CHECK_EQ(hits, 3 * N);
    cs_shadow_free(&s);

    /* against the stack-distance definition, for a shadow that is all array-scanned,
     * one with its recent lines in front of a scanned rest, and one in front of an
     * indexed rest */
    static const uint32_t sizes[] = {5, 12, 1024};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++)
        stack_distance(sizes[k]);
    return check_done("test_shadow");
}
