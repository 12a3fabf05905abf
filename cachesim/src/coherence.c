/*
 * coherence.c — the directory that keeps the CPUs' caches coherent (MESI at the level of
 * lines, as on the paper's bus-based SGI machine) and remembers enough to name why a
 * CPU misses: whether it ever held the line (cold), and if another CPU's write took its
 * copy, whether the words it now accesses were written since (true sharing) or not
 * (false sharing), by the paper's definition from Dubois et al. [8].  The exact rules are
 * in foresight_cachesim.h.
 *
 * Per line the directory keeps masks of CPUs (64 at most).  The word-level history is
 * only kept for lines that have had a copy invalidated: a sharing record, allocated then
 * from one pool, holding per CPU the number of the write that invalidated its copy and
 * per word the number of the last write to it.  Writes are numbered in trace order; a
 * CPU's first reference after losing its copy is a true sharing miss when some word it
 * accesses was written at or after that number.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cs_internal.h"

int cs_directory_init(struct cs_directory *d, unsigned cpus, uint32_t line_bytes)
{
    memset(d, 0, sizeof *d);
    d->cpus = cpus;
    d->words = line_bytes / 8;
    return 0;
}

void cs_directory_free(struct cs_directory *d)
{
    free(d->line);
    free(d->pool);
    memset(d, 0, sizeof *d);
}

int cs_directory_grow(struct cs_directory *d, size_t nlines)
{
    if (nlines > d->cap) {
        size_t cap = d->cap ? d->cap : 4096;
        while (cap < nlines)
            cap *= 2;
        struct cs_line *l = realloc(d->line, cap * sizeof *l);
        if (!l) {
            errno = ENOMEM;
            return -1;
        }
        d->line = l;
        d->cap = cap;
    }
    for (size_t i = d->nlines; i < nlines; i++)
        d->line[i] = (struct cs_line){.excl = -1};
    if (nlines > d->nlines)
        d->nlines = nlines;
    return 0;
}

/* The line's sharing record: [cpus] invalidating writes, then [words] last writes. */
static uint64_t *record(struct cs_directory *d, const struct cs_line *l)
{
    return d->pool + (size_t)(l->record - 1) * (d->cpus + d->words);
}

static int ensure_record(struct cs_directory *d, struct cs_line *l)
{
    if (l->record)
        return 0;
    size_t size = d->cpus + d->words;
    if ((d->pool_used + size) > d->pool_cap) {
        size_t cap = d->pool_cap ? 2 * d->pool_cap : 64 * size;
        uint64_t *p = realloc(d->pool, cap * sizeof *p);
        if (!p) {
            errno = ENOMEM;
            return -1;
        }
        d->pool = p;
        d->pool_cap = cap;
    }
    memset(d->pool + d->pool_used, 0, size * sizeof *d->pool);
    l->record = (uint32_t)(d->pool_used / size + 1);
    d->pool_used += size;
    return 0;
}

enum cs_miss_kind cs_coherence_miss_kind(struct cs_directory *d, uint32_t id, unsigned cpu,
                                         unsigned wlo, unsigned whi)
{
    struct cs_line *l = &d->line[id];
    uint64_t me = UINT64_C(1) << cpu;
    if (!(l->ever & me)) {
        l->ever |= me;
        return CS_COLD;
    }
    if (!(l->lost & me))
        return CS_REPLACED;
    l->lost &= ~me;
    const uint64_t *r = record(d, l);
    uint64_t since = r[cpu];
    for (unsigned w = wlo; w <= whi; w++)
        if (r[d->cpus + w] >= since)
            return CS_TRUE_SHARING;
    return CS_FALSE_SHARING;
}

int cs_coherence_read_miss(struct cs_directory *d, uint32_t id, unsigned cpu)
{
    struct cs_line *l = &d->line[id];
    uint64_t me = UINT64_C(1) << cpu;
    int written_back = -1;
    if (l->holders & ~me) { /* everyone ends Shared; a Modified copy is written back */
        if (l->excl >= 0 && l->dirty)
            written_back = l->excl;
        l->excl = -1;
        l->dirty = 0;
    } else {
        l->excl = (int8_t)cpu;
        l->dirty = 0;
    }
    l->holders |= me;
    return written_back;
}

int cs_coherence_write(struct cs_directory *d, uint32_t id, unsigned cpu, bool hit,
                       unsigned wlo, unsigned whi, uint64_t *invalidate, bool *upgrade)
{
    struct cs_line *l = &d->line[id];
    uint64_t me = UINT64_C(1) << cpu;
    uint64_t others = l->holders & ~me;
    if (others && ensure_record(d, l))
        return -1;
    uint64_t n = ++d->writes;
    *upgrade = hit && l->excl != (int)cpu;
    *invalidate = others;
    if (others) {
        uint64_t *r = record(d, l);
        for (uint64_t m = others; m; m &= m - 1)
            r[__builtin_ctzll(m)] = n;
        l->lost |= others;
    }
    l->holders = me;
    l->excl = (int8_t)cpu;
    l->dirty = 1;
    if (l->record) {
        uint64_t *w = record(d, l) + d->cpus;
        for (unsigned i = wlo; i <= whi; i++)
            w[i] = n;
    }
    return 0;
}

bool cs_coherence_evict(struct cs_directory *d, uint32_t id, unsigned cpu)
{
    struct cs_line *l = &d->line[id];
    l->holders &= ~(UINT64_C(1) << cpu);
    if (l->excl != (int)cpu)
        return false;
    bool wb = l->dirty;
    l->excl = -1;
    l->dirty = 0;
    return wb;
}
