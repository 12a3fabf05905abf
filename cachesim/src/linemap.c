/*
 * linemap.c — an open-addressing hash map from 64-bit keys (virtual pages, line ids) to
 * 32-bit values, because the simulator looks one up on every page's first touch and, in
 * the fully associative shadow and wide caches, on every reference: linear probing over
 * one array of 16-byte entries, Fibonacci hashing, at most half full, and backward-shift
 * deletion so that no tombstones accumulate over billions of evictions.
 */
#include <errno.h>
#include <stdlib.h>

#include "cs_internal.h"

static int alloc(struct cs_linemap *m, size_t slots)
{
    struct cs_linemap_entry *e = malloc(slots * sizeof *e);
    if (!e) {
        errno = ENOMEM;
        return -1;
    }
    for (size_t i = 0; i < slots; i++)
        e[i].key = CS_LINEMAP_EMPTY;
    unsigned bits = 0;
    while (((size_t)1 << bits) < slots)
        bits++;
    m->e = e;
    m->mask = slots - 1;
    m->shift = 64 - bits;
    m->count = 0;
    return 0;
}

int cs_linemap_init(struct cs_linemap *m, size_t capacity)
{
    size_t slots = 16;
    while (slots < 2 * capacity) {
        if (slots > SIZE_MAX / 2 / sizeof(struct cs_linemap_entry)) {
            errno = ENOMEM;
            return -1;
        }
        slots *= 2;
    }
    return alloc(m, slots);
}

void cs_linemap_free(struct cs_linemap *m)
{
    free(m->e);
    m->e = NULL;
}

static void place(struct cs_linemap *m, uint64_t key, uint32_t val)
{
    size_t i = cs_linemap_home(m, key);
    while (m->e[i].key != CS_LINEMAP_EMPTY)
        i = (i + 1) & m->mask;
    m->e[i].key = key;
    m->e[i].val = val;
    m->count++;
}

int cs_linemap_add(struct cs_linemap *m, uint64_t key, uint32_t val)
{
    if (2 * (m->count + 1) > m->mask + 1) {
        struct cs_linemap old = *m;
        if ((old.mask + 1) > SIZE_MAX / 4 / sizeof *old.e || alloc(m, 2 * (old.mask + 1))) {
            *m = old;
            errno = ENOMEM;
            return -1;
        }
        for (size_t i = 0; i <= old.mask; i++)
            if (old.e[i].key != CS_LINEMAP_EMPTY)
                place(m, old.e[i].key, old.e[i].val);
        free(old.e);
    }
    place(m, key, val);
    return 0;
}

void cs_linemap_remove(struct cs_linemap *m, uint64_t key)
{
    size_t i = cs_linemap_home(m, key);
    while (m->e[i].key != key) {
        if (m->e[i].key == CS_LINEMAP_EMPTY)
            return;
        i = (i + 1) & m->mask;
    }
    /* Shift back every later entry of the probe run whose home is not between the hole
     * and itself, so each key stays reachable from its home without a gap. */
    for (size_t j = (i + 1) & m->mask;; j = (j + 1) & m->mask) {
        if (m->e[j].key == CS_LINEMAP_EMPTY)
            break;
        size_t home = cs_linemap_home(m, m->e[j].key);
        if (((j - home) & m->mask) >= ((j - i) & m->mask)) {
            m->e[i] = m->e[j];
            i = j;
        }
    }
    m->e[i].key = CS_LINEMAP_EMPTY;
    m->count--;
}
