/*
 * mapping.c — which physical frame a virtual page gets, decided when some CPU first
 * touches it, because in a physically indexed cache that choice (the page's color) is
 * all that decides which pages conflict (paper 4, Sections 2.1 and 5.3).  The policies
 * are the operating systems' the paper compares: IRIX's page coloring (vpage mod
 * colors), Digital UNIX's bin hopping (colors in turn, in first-touch order), a random
 * choice (as Linux's free lists make it in effect), and compiler-directed coloring over
 * either (the hint's color where the program gave one).  Frames of one color are handed
 * out in order, as from a free list that never runs short.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "color_plan.h"
#include "cs_internal.h"

int cs_mapping_init(struct cs_mapping *m, enum cs_policy policy, uint32_t ncolors,
                    uint64_t seed, uint32_t max_pages)
{
    memset(m, 0, sizeof *m);
    m->max_pages = max_pages;
    m->policy = policy;
    m->ncolors = ncolors;
    m->rng = seed;
    m->per_color = calloc(ncolors, sizeof *m->per_color);
    if (!m->per_color || cs_linemap_init(&m->pages, 1024)) {
        cs_mapping_free(m);
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

void cs_mapping_free(struct cs_mapping *m)
{
    cs_linemap_free(&m->pages);
    free(m->frame);
    free(m->vpage);
    free(m->cpus);
    free(m->per_color);
    free(m->hints);
    memset(m, 0, sizeof *m);
}

static int by_vpage(const void *a, const void *b)
{
    const struct fs_color_run *x = a, *y = b;
    return x->vpage < y->vpage ? -1 : x->vpage > y->vpage;
}

int cs_mapping_set_hints(struct cs_mapping *m, const struct fs_color_run *runs, size_t n)
{
    struct fs_color_run *copy = NULL;
    size_t kept = 0;
    if (n) {
        copy = malloc(n * sizeof *copy);
        if (!copy) {
            errno = ENOMEM;
            return -1;
        }
        for (size_t i = 0; i < n; i++)
            if (runs[i].npages)
                copy[kept++] = runs[i];
        qsort(copy, kept, sizeof *copy, by_vpage);
        for (size_t i = 1; i < kept; i++)
            if (copy[i].vpage - copy[i - 1].vpage < copy[i - 1].npages) {
                free(copy);
                errno = EINVAL;
                return -1;
            }
    }
    free(m->hints);
    m->hints = copy;
    m->nhints = kept;
    return 0;
}

/* The hint's color for VPAGE, or -1 if no run covers it. */
static int64_t hinted(const struct cs_mapping *m, uint64_t vpage)
{
    size_t lo = 0, hi = m->nhints;
    while (lo < hi) { /* the last run starting at or before vpage */
        size_t mid = lo + (hi - lo) / 2;
        if (m->hints[mid].vpage <= vpage)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return -1;
    const struct fs_color_run *r = &m->hints[lo - 1];
    if (vpage - r->vpage >= r->npages)
        return -1;
    return (int64_t)((r->color + (vpage - r->vpage)) & (m->ncolors - 1));
}

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static uint32_t color_of(struct cs_mapping *m, uint64_t vpage)
{
    uint32_t mask = m->ncolors - 1;
    uint64_t hop = m->bh_next++; /* bin hopping counts every first touch */
    if (m->policy == CS_CDPC || m->policy == CS_CDPC_BH) {
        int64_t c = hinted(m, vpage);
        if (c >= 0)
            return (uint32_t)c;
    }
    switch (m->policy) {
    case CS_BH:
    case CS_CDPC_BH:
        return (uint32_t)(hop & mask);
    case CS_RANDOM:
        return (uint32_t)(splitmix64(&m->rng) & mask);
    case CS_PC:
    case CS_CDPC:
    default:
        return (uint32_t)(vpage & mask);
    }
}

int cs_mapping_page(struct cs_mapping *m, uint64_t vpage, uint32_t *index, bool *fresh)
{
    const uint32_t *known = cs_linemap_find(&m->pages, vpage);
    if (known) {
        *index = *known;
        *fresh = false;
        return 0;
    }
    if (m->npages >= m->max_pages) {
        errno = ERANGE;
        return -1;
    }
    if (m->npages == m->cap) {
        uint32_t cap = m->cap ? (m->cap > UINT32_MAX / 2 ? UINT32_MAX : 2 * m->cap) : 1024;
        uint64_t *f = realloc(m->frame, (size_t)cap * sizeof *f);
        if (f)
            m->frame = f;
        uint64_t *v = f ? realloc(m->vpage, (size_t)cap * sizeof *v) : NULL;
        if (v)
            m->vpage = v;
        uint64_t *t = v && m->cpus ? realloc(m->cpus, (size_t)cap * sizeof *t) : NULL;
        if (t)
            m->cpus = t;
        if (!f || !v || (m->cpus && !t)) {
            errno = ENOMEM;
            return -1;
        }
        m->cap = cap;
    }
    if (cs_linemap_add(&m->pages, vpage, m->npages))
        return -1;
    uint32_t color = color_of(m, vpage);
    m->frame[m->npages] = color + (uint64_t)m->ncolors * m->per_color[color]++;
    m->vpage[m->npages] = vpage;
    if (m->cpus)
        m->cpus[m->npages] = 0;
    *index = m->npages++;
    *fresh = true;
    return 0;
}
