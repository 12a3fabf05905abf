/*
 * test_linemap.c — the open-addressing map under everything the simulator asks of it
 * (linemap.c).  It proves:
 * - a key added is found with its value, a key removed is gone, absent keys are absent;
 * - under 300000 pseudo-random adds and removes over 20000 keys (many equal in their low
 *   bits, some near 2^40 and 2^63) every key's presence and value match a plain array,
 *   through growth from 16 slots and backward-shift deletions (no tombstones: the table
 *   never holds more entries than keys);
 * - it stays at most half full.
 */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "cs_internal.h"
#include "rng.h"

enum { KEYS = 20000 };

static uint64_t key_of(unsigned i)
{
    switch (i % 4) {
    case 0:
        return i;
    case 1:
        return (uint64_t)i << 20; /* equal low bits */
    case 2:
        return (UINT64_C(1) << 40) + i;
    default:
        return (UINT64_C(1) << 63) + i * UINT64_C(4096);
    }
}

int main(void)
{
    rng = 12345;
    struct cs_linemap m;
    CHECK_EQ(cs_linemap_init(&m, 0), 0);
    CHECK(cs_linemap_find(&m, 7) == NULL);
    CHECK_EQ(cs_linemap_add(&m, 7, 70), 0);
    CHECK(cs_linemap_find(&m, 7) && *cs_linemap_find(&m, 7) == 70);
    cs_linemap_remove(&m, 7);
    CHECK(cs_linemap_find(&m, 7) == NULL);
    cs_linemap_remove(&m, 8); /* absent: nothing */
    CHECK_EQ(m.count, 0);

    static int64_t model[KEYS]; /* value + 1, 0: absent */
    size_t present = 0;
    for (unsigned step = 0; step < 300000; step++) {
        unsigned i = (unsigned)(next() % KEYS);
        uint64_t k = key_of(i);
        uint32_t *v = cs_linemap_find(&m, k);
        CHECK_EQ(v != NULL, model[i] != 0);
        if (v && model[i])
            CHECK_EQ(*v, model[i] - 1);
        if (model[i] && next() % 2) {
            cs_linemap_remove(&m, k);
            model[i] = 0;
            present--;
        } else if (!model[i]) {
            uint32_t val = (uint32_t)(next() & 0xffffff);
            CHECK_EQ(cs_linemap_add(&m, k, val), 0);
            model[i] = (int64_t)val + 1;
            present++;
        }
        CHECK_EQ(m.count, present);
        CHECK(2 * m.count <= m.mask + 1);
    }
    for (unsigned i = 0; i < KEYS; i++) {
        uint32_t *v = cs_linemap_find(&m, key_of(i));
        CHECK_EQ(v != NULL, model[i] != 0);
    }
    size_t used = 0;
    for (size_t i = 0; i <= m.mask; i++)
        used += m.e[i].key != CS_LINEMAP_EMPTY;
    CHECK_EQ(used, present);
    cs_linemap_free(&m);
    return check_done("test_linemap");
}
