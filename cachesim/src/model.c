/*
 * model.c — a program's data accesses generated from its color map, without running
 * it: the "streams generated from the summaries", fast enough to sweep machines.
 * The summaries say, per statically scheduled parallel loop, which units of which arrays
 * each iteration touches and which thread runs it; the model runs each loop as its
 * threads would: every thread its own iterations, in the order it runs them, and in
 * each iteration the units of all the loop's references side by side, line by line (the
 * inner loop of a stencil walks x[j+1][i], x[j-1][i], rx[j][i] together: that walk is
 * what makes arrays collide in a cache), the threads interleaved one line step each.
 * One access per line and use: the element accesses a real run adds within a line are
 * hits, and no miss is left out.  What the summaries do not say is not modelled: serial
 * code, the order of references within an iteration beyond side by side, and every
 * array a loop touches that its summary leaves out.
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

/* One loop: refs[0..nr) share its loop id; the first decides who runs what. */
static int run_loop(struct cs_sim *sim, const struct fs_color_ref **refs,
                    const struct fs_color_array **arrs, size_t nr, uint32_t line)
{
    const struct fs_color_ref *lead = refs[0];
    unsigned p = lead->nthreads;
    struct walker w[FS_COLOR_MAX_CPUS];
    unsigned active = 0;
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
                if (cs_access(sim, t, at, 1, refs[j]->write))
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

int cs_model_step(struct cs_sim *sim, const struct cs_map *m, uint32_t line, unsigned cpus)
{
    const struct fs_color_ref **refs = malloc((m->nrefs + 1) * sizeof *refs);
    const struct fs_color_array **arrs = malloc((m->nrefs + 1) * sizeof *arrs);
    bool *done = calloc(m->nrefs + 1, sizeof *done);
    int rc = 0;
    if (!refs || !arrs || !done) {
        errno = ENOMEM;
        rc = -1;
    }
    /* the runs in the order their first summary appears; a run's summaries together:
     * one loop's, from one call, of one iteration count (a summary of another partition
     * cannot be walked with the first) */
    for (size_t i = 0; rc == 0 && i < m->nrefs; i++) {
        if (done[i])
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
            refs[nr] = r;
            arrs[nr] = array_of(m, r->base);
            nr++;
        }
        if (nr && run_loop(sim, refs, arrs, nr, line))
            rc = -1;
    }
    free(refs);
    free(arrs);
    free(done);
    return rc;
}
