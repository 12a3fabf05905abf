/*
 * model.c — a program's data accesses generated from its color map, without running
 * it: the "streams generated from the summaries", fast enough to sweep machines.
 * The summaries say, per statically scheduled parallel loop, which units of which arrays
 * each iteration touches and which thread runs it; the model runs each loop as its
 * threads would: every thread its own iterations, in the order it runs them, the threads
 * interleaved one step each.  With the loop's `access` records (how each reference walks
 * its unit: run_walks), an iteration's references go side by side element by element,
 * phase by phase (the body's inner loops in source order), so references colliding in a
 * cache set miss on every element as the program's do; without them (run_loop), the
 * units of all its references side by side, one access per line.  What the map does not
 * say is not modelled: serial code, loads the compiler adds or removes, the order of
 * the loops inside one phase, and every array a loop touches that its summary leaves
 * out.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cs_cli.h"

struct walker {      /* one thread's place in a loop */
    int64_t i, i_end; /* its current iteration (execution order), one past its last */
    uint64_t chunk_next; /* CYCLIC: the next chunk it runs */
    uint64_t line;    /* the line step within the iteration */
    bool done;
};

/* The i-range (execution order) of thread t's next chunk from chunk index ch: CYCLIC
 * chunks are dealt round robin; EVEN and BLOCKED give one block. */
static bool next_block(const struct fs_color_ref *r, unsigned t, struct walker *w)
{
    uint64_t n = (uint64_t)r->count, p = r->nthreads;
    unsigned kind = r->schedule & ~FS_COLOR_REVERSE;
    if (kind == FS_COLOR_CYCLIC) {
        uint64_t c = r->chunk ? r->chunk : 1, ch = w->chunk_next;
        if (ch == 0)
            ch = t;
        if (ch * c >= n)
            return false;
        w->i = (int64_t)(ch * c);
        w->i_end = (int64_t)(ch * c + c < n ? ch * c + c : n);
        w->chunk_next = ch + p;
        return true;
    }
    if (w->chunk_next)
        return false; /* its one block is done */
    w->chunk_next = 1;
    uint64_t lo, hi;
    if (kind == FS_COLOR_BLOCKED) {
        uint64_t b = (n + p - 1) / p;
        lo = t * b;
        hi = lo + b;
    } else { /* EVEN: the first n mod p threads run one more */
        uint64_t q = n / p, rem = n % p;
        lo = t * q + (t < rem ? t : rem);
        hi = lo + q + (t < rem);
    }
    if (hi > n)
        hi = n;
    if (lo >= hi)
        return false;
    w->i = (int64_t)lo;
    w->i_end = (int64_t)hi;
    return true;
}

/* The bytes [*lo, *hi) reference r touches in the iteration run i-th, clipped to its
 * array (a); false when outside it. */
static bool unit_of(const struct fs_color_ref *r, const struct fs_color_array *a, int64_t i,
                    uint64_t *lo, uint64_t *hi)
{
    int64_t n = r->count, k = (r->schedule & FS_COLOR_REVERSE) ? n - 1 - i : i;
    int64_t u = r->wrap ? r->first + ((k + r->offset) % n + n) % n : r->first + k + r->offset;
    if (u < 0 || (uint64_t)u >= (a->bytes + r->unit - 1) / r->unit)
        return false;
    *lo = a->base + (uint64_t)u * r->unit;
    *hi = *lo + r->unit;
    if (*hi > a->base + a->bytes)
        *hi = a->base + a->bytes;
    return true;
}

static const struct fs_color_array *array_of(const struct cs_map *m, uint64_t base)
{
    const struct fs_color_array *best = NULL;
    for (size_t i = 0; i < m->narrays; i++) /* the largest declaration of that base */
        if (m->arrays[i].base == base && (!best || m->arrays[i].bytes > best->bytes))
            best = &m->arrays[i];
    return best;
}

/* Thread T's access at ADDR by the reference whose previous line is *LAST (UINT64_MAX:
 * none yet): with PREFETCH lines of distance, a new line is prefetched ahead first. */
static int access_at(struct cs_sim *sim, unsigned t, uint64_t addr, bool write, uint32_t line,
                     unsigned prefetch, uint64_t *last)
{
    if (prefetch) {
        const uint64_t l = addr / line;
        if (l != *last) {
            const uint64_t ahead = (uint64_t)prefetch * line;
            const bool down = *last != UINT64_MAX && l < *last;
            *last = l;
            if (down ? addr >= ahead : addr + ahead > addr) {
                if (cs_prefetch(sim, t, down ? addr - ahead : addr + ahead))
                    return -1;
            }
        }
    }
    return cs_access(sim, t, addr, 1, write);
}

/* One loop: refs[0..nr) share its loop id; the first decides who runs what. */
static int run_loop(struct cs_sim *sim, const struct fs_color_ref **refs,
                    const struct fs_color_array **arrs, size_t nr, uint32_t line,
                    unsigned prefetch, uint64_t *prev)
{
    const struct fs_color_ref *lead = refs[0];
    unsigned p = lead->nthreads;
    struct walker w[FS_COLOR_MAX_CPUS];
    unsigned active = 0;
    for (size_t k = 0; k < (size_t)p * nr; k++)
        prev[k] = UINT64_MAX;
    for (unsigned t = 0; t < p; t++) {
        memset(&w[t], 0, sizeof w[t]);
        w[t].done = !next_block(lead, t, &w[t]);
        active += !w[t].done;
    }
    while (active) {
        for (unsigned t = 0; t < p; t++) {
            struct walker *x = &w[t];
            if (x->done)
                continue;
            bool any = false; /* some reference still has line x->line in this iteration */
            for (size_t j = 0; j < nr; j++) {
                uint64_t lo, hi;
                if (!arrs[j] || !unit_of(refs[j], arrs[j], x->i, &lo, &hi))
                    continue;
                uint64_t first = lo / line, last = (hi - 1) / line;
                if (first + x->line > last)
                    continue;
                uint64_t at = (first + x->line) * line;
                if (at < lo)
                    at = lo;
                if (access_at(sim, t, at, refs[j]->write, line, prefetch, &prev[t * nr + j]))
                    return -1;
                any = true;
            }
            if (any) {
                x->line++;
                continue;
            }
            x->line = 0; /* the iteration is done: the next */
            if (++x->i >= x->i_end && !next_block(lead, t, x)) {
                x->done = true;
                active--;
            }
        }
    }
    cs_barrier(sim);
    return 0;
}

/* The steps of the walk of phase-sorted accesses acc[k..], which share a phase, into
 * *end (one past them): the most unit / |stride| of any of them, at least 1. */
static uint64_t phase_steps(const struct fs_color_access **acc, size_t k, size_t na, size_t *end)
{
    uint64_t n = 1;
    size_t j = k;
    for (; j < na && acc[j]->phase == acc[k]->phase; j++) {
        uint64_t st = acc[j]->stride < 0 ? (uint64_t)0 - (uint64_t)acc[j]->stride
                                         : (uint64_t)acc[j]->stride;
        if (st && (acc[j]->unit + st - 1) / st > n)
            n = (acc[j]->unit + st - 1) / st;
    }
    *end = j;
    return n;
}

/* One loop walked reference by reference (its `access` records, by phase and seq): each
 * thread's iteration runs its phases in order, each phase's references side by side, one
 * step (stride bytes) each; the threads take turns an access at a time (as a trace's
 * merge deals its records, memtrace.c), which orders the pages' first touches.  The
 * element accesses of references that collide in a cache set are what a line-by-line
 * walk misses. */
static int run_walks(struct cs_sim *sim, const struct fs_color_ref *lead,
                     const struct fs_color_access **acc, const struct fs_color_array **arrs,
                     size_t na, uint32_t line, unsigned prefetch, uint64_t *last)
{
    for (size_t k = 0; k < (size_t)lead->nthreads * na; k++)
        last[k] = UINT64_MAX;
    unsigned p = lead->nthreads;
    struct walker w[FS_COLOR_MAX_CPUS];
    struct {
        size_t k, end, j; /* the phase's accesses, the next one */
        uint64_t steps;
    } at[FS_COLOR_MAX_CPUS];
    unsigned active = 0;
    for (unsigned t = 0; t < p; t++) {
        memset(&w[t], 0, sizeof w[t]);
        w[t].done = !next_block(lead, t, &w[t]);
        active += !w[t].done;
        at[t].k = at[t].j = 0;
        at[t].steps = phase_steps(acc, 0, na, &at[t].end);
    }
    while (active) {
        for (unsigned t = 0; t < p; t++) {
            struct walker *x = &w[t];
            bool made = false;
            while (!x->done && !made) {
                if (at[t].j < at[t].end) { /* the step's next reference */
                    size_t j = at[t].j++;
                    const struct fs_color_access *a = acc[j];
                    struct fs_color_ref r = {.base = a->base, .unit = a->unit,
                                             .first = a->first, .count = a->count,
                                             .offset = a->shift,
                                             .schedule = a->reverse ? FS_COLOR_REVERSE : 0};
                    uint64_t lo, hi;
                    if (!arrs[j] || !unit_of(&r, arrs[j], x->i, &lo, &hi))
                        continue;
                    /* its own steps over its unit, again as often as the phase's
                     * longest walk takes (a row re-read for each row of a plane) */
                    uint64_t st = a->stride < 0 ? (uint64_t)0 - (uint64_t)a->stride
                                                : (uint64_t)a->stride;
                    uint64_t own = st ? (a->unit + st - 1) / st : 1;
                    uint64_t e = x->line % own;
                    if (a->stride < 0)
                        e = own - 1 - e;
                    uint64_t addr = lo + (uint64_t)a->within + e * st;
                    if (addr < lo || addr >= hi)
                        continue;
                    if (access_at(sim, t, addr, a->write, line, prefetch, &last[t * na + j]))
                        return -1;
                    made = true;
                    continue;
                }
                at[t].j = at[t].k; /* the step is done: the next */
                if (++x->line < at[t].steps)
                    continue;
                x->line = 0; /* the phase is done: the next, or the next iteration */
                at[t].k = at[t].j = at[t].end == na ? 0 : at[t].end;
                at[t].steps = phase_steps(acc, at[t].k, na, &at[t].end);
                if (at[t].k == 0 && ++x->i >= x->i_end && !next_block(lead, t, x)) {
                    x->done = true;
                    active--;
                }
            }
        }
    }
    cs_barrier(sim);
    return 0;
}

static int by_phase(const void *a, const void *b)
{
    const struct fs_color_access *x = *(const struct fs_color_access *const *)a,
                                 *y = *(const struct fs_color_access *const *)b;
    if (x->phase != y->phase)
        return x->phase > y->phase ? 1 : -1;
    return x->seq != y->seq ? (x->seq > y->seq ? 1 : -1) : (x < y ? -1 : x > y);
}

static const struct cs_map *sorting; /* the map by_loop sorts the refs of */

static int by_loop(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    unsigned lx = sorting->refs[x].loop, ly = sorting->refs[y].loop;
    return lx != ly ? (lx > ly ? 1 : -1) : (x > y) - (x < y);
}

/* Per ref, into once[]: its loop ran once (no summary of it passed again, one run) while
 * another loop ran more than once; false for all when none did.  The model's steps are
 * the program's steady state, without its one-time phases (initialisation). */
static int one_time_loops(const struct cs_map *m, bool *once)
{
    size_t *ix = malloc((m->nrefs + 1) * sizeof *ix);
    if (!ix)
        return -1;
    for (size_t i = 0; i < m->nrefs; i++)
        ix[i] = i;
    sorting = m;
    qsort(ix, m->nrefs, sizeof *ix, by_loop);
    bool any = false;
    for (size_t i = 0, j; i < m->nrefs; i = j) {
        bool repeated = false;
        for (j = i; j < m->nrefs && m->refs[ix[j]].loop == m->refs[ix[i]].loop; j++)
            repeated |= m->again[ix[j]] || m->calls[ix[j]] != m->calls[ix[i]];
        for (size_t k = i; k < j; k++)
            once[ix[k]] = !repeated;
        any |= repeated;
    }
    if (!any)
        memset(once, 0, m->nrefs * sizeof *once);
    free(ix);
    return 0;
}

int cs_model_step(struct cs_sim *sim, const struct cs_map *m, uint32_t line, unsigned cpus,
                  bool steady, unsigned prefetch)
{
    const struct fs_color_ref **refs = malloc((m->nrefs + 1) * sizeof *refs);
    size_t na_max = m->nrefs > m->naccesses ? m->nrefs : m->naccesses;
    const struct fs_color_array **arrs = malloc((na_max + 1) * sizeof *arrs);
    const struct fs_color_access **acc = malloc((m->naccesses + 1) * sizeof *acc);
    bool *done = calloc(m->nrefs + 1, sizeof *done);
    bool *once = calloc(m->nrefs + 1, sizeof *once);
    /* per thread and reference, its previous access's line (prefetches) */
    uint64_t *last = malloc(((size_t)cpus * (na_max + 1)) * sizeof *last);
    int rc = 0;
    if (!refs || !arrs || !acc || !done || !once || !last ||
        (steady && one_time_loops(m, once))) {
        errno = ENOMEM;
        rc = -1;
    }
    /* the runs in the order their first summary appears; a run's summaries together:
     * one loop's, from one call, of one iteration count (a summary of another partition
     * cannot be walked with the first) */
    for (size_t i = 0; rc == 0 && i < m->nrefs; i++) {
        if (done[i] || once[i])
            continue;
        size_t nr = 0;
        const struct fs_color_ref *lead = &m->refs[i];
        for (size_t j = i; j < m->nrefs; j++) {
            const struct fs_color_ref *r = &m->refs[j];
            if (done[j] || r->loop != lead->loop || m->calls[j] != m->calls[i] ||
                r->count != lead->count || r->nthreads != lead->nthreads ||
                (r->schedule & ~FS_COLOR_REVERSE) != (lead->schedule & ~FS_COLOR_REVERSE) ||
                r->chunk != lead->chunk)
                continue;
            done[j] = true;
            if (r->unit == 0 || r->count <= 0 || r->nthreads < 1 || r->nthreads > cpus)
                continue;
            refs[nr++] = r;
        }
        if (!nr)
            continue;
        /* the run's references' walks, when the program passed them (a walk is this
         * run's when a reference of the run has its array, unit and first unit) */
        size_t na = 0;
        for (size_t j = 0; j < m->naccesses; j++) {
            const struct fs_color_access *a = &m->accesses[j];
            if (a->loop != lead->loop || a->count != lead->count ||
                m->access_calls[j] != m->calls[i] || !array_of(m, a->base))
                continue;
            for (size_t k = 0; k < nr; k++)
                if (refs[k]->base == a->base && refs[k]->unit == a->unit &&
                    refs[k]->first == a->first) {
                    acc[na++] = a;
                    break;
                }
        }
        if (na) {
            qsort(acc, na, sizeof *acc, by_phase);
            for (size_t j = 0; j < na; j++)
                arrs[j] = array_of(m, acc[j]->base);
            if (run_walks(sim, refs[0], acc, arrs, na, line, prefetch, last))
                rc = -1;
        } else {
            for (size_t j = 0; j < nr; j++)
                arrs[j] = array_of(m, refs[j]->base);
            if (run_loop(sim, refs, arrs, nr, line, prefetch, last))
                rc = -1;
        }
    }
    free(refs);
    free(acc);
    free(arrs);
    free(done);
    free(once);
    free(last);
    return rc;
}
