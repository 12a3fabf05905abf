/* Compiler-directed page coloring: the five steps of paper 4, Section 5.2 (see
 * color_plan.h for the vocabulary).  Two objectives: each processor's pages are laid
 * out contiguously in color order, so its data spreads over the whole cache; and
 * segments that one processor uses at the same time start on colors far apart, since
 * element i of one array is often used with element i + c of another.
 *
 * Steps: (1) a processor set per page from the summaries, maximal uniform access
 * segments, grouped by set; (2) sets ordered along a path through the graph whose edges
 * join intersecting sets (greedy over the sets of one or two processors, starting at a
 * singleton; the rest beside the node of largest overlap); (3) segments of a set ordered
 * along a path through the used-together graph, ties to the lowest address; (4) each
 * segment laid out cyclically from a starting page chosen to put its first page's
 * color farthest from those of the conflicting segments already placed; (5) colors
 * dealt round robin along the resulting order. */
#include "color_plan.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Bounds that keep every sum below in int64 and the page table small enough. */
#define MAX_UNIT_INDEX ((int64_t)1 << 50)
#define MAX_PAGES ((uint64_t)1 << 24) /* 64 GiB of 4 KiB pages: 128 MiB of masks */

typedef uint64_t cpuset;

struct array {
    uint64_t base, bytes;      /* as declared */
    uint64_t page0, npages;    /* its pages, less any the previous array holds */
    size_t slot;               /* index of page0 in the page table */
    size_t id;                 /* position in the input, for the group relation */
    bool summarised;
};

struct segment {
    size_t array;              /* index into the sorted arrays */
    uint64_t page0, npages;
    cpuset cpus;
    size_t set;
    uint64_t color0;           /* slot of its first laid-out page, mod ncolors */
    uint64_t rotate;           /* pages before the cyclic start */
};

struct plan {
    struct array *arrays;
    size_t narrays;
    cpuset *mask; /* per page slot */
    size_t npages;
    bool *together; /* narrays x narrays */
};

static unsigned popcount(cpuset s) { return (unsigned)__builtin_popcountll(s); }

static cpuset cpus_below(unsigned n)
{
    return n >= 64 ? ~(cpuset)0 : (((cpuset)1 << n) - 1);
}

static cpuset cpu_range(unsigned a, unsigned b) /* a..b inclusive, either order */
{
    if (a > b) {
        unsigned t = a;
        a = b;
        b = t;
    }
    return cpus_below(b + 1) & ~cpus_below(a);
}

unsigned fs_color_owner(unsigned schedule, uint64_t chunk, unsigned nthreads, int64_t count,
                        int64_t k)
{
    uint64_t n = (uint64_t)count, p = nthreads ? nthreads : 1;
    uint64_t i = (uint64_t)k;
    if (schedule & FS_COLOR_REVERSE)
        i = n - 1 - i;
    switch (schedule & ~FS_COLOR_REVERSE) {
    case FS_COLOR_BLOCKED: {
        uint64_t b = (n + p - 1) / p;
        return (unsigned)(i / b);
    }
    case FS_COLOR_CYCLIC:
        return (unsigned)((i / (chunk ? chunk : 1)) % p);
    default: { /* EVEN: the first n mod p threads run one more */
        uint64_t q = n / p, r = n % p;
        if (i < r * (q + 1))
            return (unsigned)(i / (q + 1));
        return (unsigned)(r + (i - r * (q + 1)) / q);
    }
    }
}

/* The processors that run iterations k0..k1 (0 <= k0 <= k1 < count). */
static cpuset owners(const struct fs_color_ref *r, int64_t k0, int64_t k1)
{
    unsigned kind = r->schedule & ~FS_COLOR_REVERSE;
    if (r->schedule & FS_COLOR_REVERSE) { /* the same iterations counted from the end */
        int64_t t = r->count - 1 - k0;
        k0 = r->count - 1 - k1;
        k1 = t;
    }
    if (kind == FS_COLOR_CYCLIC) {
        uint64_t c = r->chunk ? r->chunk : 1;
        if ((uint64_t)k1 / c - (uint64_t)k0 / c + 1 >= r->nthreads)
            return cpus_below(r->nthreads);
        cpuset s = 0;
        for (uint64_t ch = (uint64_t)k0 / c; ch <= (uint64_t)k1 / c; ch++)
            s |= (cpuset)1 << (ch % r->nthreads);
        return s;
    }
    /* Even and blocked give each thread one contiguous range: owners are monotonic. */
    return cpu_range(fs_color_owner(kind, 0, r->nthreads, r->count, k0),
                     fs_color_owner(kind, 0, r->nthreads, r->count, k1));
}

bool fs_color_ref_valid(const struct fs_color_ref *r)
{
    unsigned kind = r->schedule & ~FS_COLOR_REVERSE;
    return r->unit > 0 && r->count > 0 && r->count <= MAX_UNIT_INDEX && r->nthreads >= 1 &&
           r->nthreads <= FS_COLOR_MAX_CPUS && kind <= FS_COLOR_CYCLIC &&
           r->first >= -MAX_UNIT_INDEX && r->first <= MAX_UNIT_INDEX &&
           r->offset >= -MAX_UNIT_INDEX && r->offset <= MAX_UNIT_INDEX &&
           r->chunk <= (uint64_t)MAX_UNIT_INDEX;
}

static struct array *array_at(struct plan *p, uint64_t base)
{
    for (size_t lo = 0, hi = p->narrays; lo < hi;) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->arrays[mid].base == base)
            return &p->arrays[mid];
        if (p->arrays[mid].base < base)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* The slot of page `pg`, or SIZE_MAX when no array holds it. */
static size_t slot_of(const struct plan *p, uint64_t pg)
{
    size_t lo = 0, hi = p->narrays;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->arrays[mid].page0 + p->arrays[mid].npages <= pg)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < p->narrays && p->arrays[lo].page0 <= pg && p->arrays[lo].npages)
        return p->arrays[lo].slot + (size_t)(pg - p->arrays[lo].page0);
    return SIZE_MAX;
}

/* Marks the processors of one summary on every page its units cover.  Per page: the
 * units on it, then the iterations touching those units (one range, or two when a
 * rotate wraps), then their owners. */
static void apply_ref(struct plan *p, const struct array *a, const struct fs_color_ref *r,
                      uint64_t pagesz)
{
    int64_t umax = (int64_t)((a->bytes - 1) / r->unit);
    int64_t lo, hi; /* units touched */
    if (r->wrap) {
        lo = r->first;
        hi = r->first + r->count - 1;
    } else {
        lo = r->first + r->offset;
        hi = lo + r->count - 1;
    }
    if (lo < 0)
        lo = 0;
    if (hi > umax)
        hi = umax;
    if (lo > hi)
        return;
    uint64_t first_byte = a->base + (uint64_t)lo * r->unit;
    uint64_t last_byte = a->base + (uint64_t)hi * r->unit + r->unit - 1;
    if (last_byte >= a->base + a->bytes)
        last_byte = a->base + a->bytes - 1;
    for (uint64_t pg = first_byte / pagesz; pg <= last_byte / pagesz; pg++) {
        size_t s = slot_of(p, pg);
        if (s == SIZE_MAX)
            continue;
        uint64_t b0 = pg * pagesz < first_byte ? first_byte : pg * pagesz;
        uint64_t b1 = pg * pagesz + pagesz - 1 > last_byte ? last_byte : pg * pagesz + pagesz - 1;
        int64_t u0 = (int64_t)((b0 - a->base) / r->unit), u1 = (int64_t)((b1 - a->base) / r->unit);
        cpuset s_cpus;
        if (!r->wrap) {
            s_cpus = owners(r, u0 - r->first - r->offset, u1 - r->first - r->offset);
        } else {
            /* unit u is touched by k = (u - first - offset) mod count */
            int64_t n = r->count, k0 = ((u0 - r->first - r->offset) % n + n) % n;
            int64_t len = u1 - u0; /* < n: u0..u1 lie in [first, first + n) */
            if (k0 + len < n)
                s_cpus = owners(r, k0, k0 + len);
            else
                s_cpus = owners(r, k0, n - 1) | owners(r, 0, k0 + len - n);
        }
        p->mask[s] |= s_cpus;
    }
}

struct use { /* a summary's loop and array */
    unsigned loop;
    size_t array;
};

static int cmp_use(const void *x, const void *y)
{
    const struct use *a = x, *b = y;
    if (a->loop != b->loop)
        return a->loop < b->loop ? -1 : 1;
    return a->array < b->array ? -1 : a->array > b->array;
}

static int cmp_array(const void *x, const void *y)
{
    const struct array *a = x, *b = y;
    if (a->base != b->base)
        return a->base < b->base ? -1 : 1;
    return a->bytes > b->bytes ? -1 : a->bytes < b->bytes; /* larger first: it is kept */
}

static bool together(const struct plan *p, size_t a, size_t b)
{
    return p->together[a * p->narrays + b];
}

/* Step 2: order the uniform access sets. */
static void order_sets(const cpuset *sets, size_t n, size_t *order)
{
    bool *used = calloc(n ? n : 1, sizeof *used);
    size_t len = 0;
    if (!used) { /* fall back on the sets' own order: still a valid plan */
        for (size_t i = 0; i < n; i++)
            order[i] = i;
        return;
    }
    /* The greedy path over sets of one or two processors, started at a singleton (else
     * a pair) at an end of a chain: the one with the fewest neighbours, so
     * 0 - {0,1} - 1 - {1,2} - 2 is walked from an end, not from its middle. */
    size_t *deg = calloc(n ? n : 1, sizeof *deg);
    for (size_t i = 0; deg && i < n; i++)
        for (size_t j = 0; j < n; j++)
            deg[i] += j != i && popcount(sets[j]) <= 2 && (sets[j] & sets[i]);
    for (;;) {
        size_t start = SIZE_MAX;
        for (unsigned want = 1; want <= 2 && start == SIZE_MAX; want++)
            for (size_t i = 0; i < n; i++) {
                if (used[i] || popcount(sets[i]) != want)
                    continue;
                size_t d = deg ? deg[i] : 0, ds = deg && start != SIZE_MAX ? deg[start] : 0;
                if (start == SIZE_MAX || d < ds || (d == ds && sets[i] < sets[start]))
                    start = i;
            }
        if (start == SIZE_MAX)
            break;
        size_t cur = start;
        while (cur != SIZE_MAX) {
            used[cur] = true;
            order[len++] = cur;
            size_t next = SIZE_MAX;
            for (size_t i = 0; i < n; i++) {
                unsigned pc = popcount(sets[i]);
                if (used[i] || pc < 1 || pc > 2 || !(sets[i] & sets[cur]))
                    continue;
                /* prefer a singleton (it ends a processor's run), then the lowest set */
                if (next == SIZE_MAX || pc < popcount(sets[next]) ||
                    (pc == popcount(sets[next]) && sets[i] < sets[next]))
                    next = i;
            }
            cur = next;
        }
    }
    free(deg);
    /* The rest, in ascending set order, each after the path node sharing most. */
    for (size_t i = 0; i < n; i++) {
        if (used[i])
            continue;
        size_t at = len, best = 0;
        for (size_t j = 0; j < len; j++) {
            unsigned ov = popcount(sets[order[j]] & sets[i]);
            if (at == len || ov > best) {
                at = j;
                best = ov;
            }
        }
        size_t pos = len ? at + 1 : 0;
        memmove(order + pos + 1, order + pos, (len - pos) * sizeof *order);
        order[pos] = i;
        len++;
        used[i] = true;
    }
    free(used);
}

/* Step 3: order one set's segments (indices in `idx`, ascending address) along the
 * used-together graph. */
static void order_segments(const struct plan *p, const struct segment *seg, size_t *idx,
                           size_t n, size_t *tmp, bool *used)
{
    for (size_t i = 0; i < n; i++)
        used[i] = false;
    size_t len = 0, cur = 0;
    while (len < n) {
        used[cur] = true;
        tmp[len++] = idx[cur];
        size_t next = SIZE_MAX;
        for (size_t i = 0; i < n && next == SIZE_MAX; i++) /* lowest address adjacent */
            if (!used[i] && together(p, seg[idx[cur]].array, seg[idx[i]].array))
                next = i;
        for (size_t i = 0; i < n && next == SIZE_MAX; i++)
            if (!used[i])
                next = i;
        if (next == SIZE_MAX)
            break;
        cur = next;
    }
    memcpy(idx, tmp, n * sizeof *idx);
}

/* Do two segments' color ranges (first slot c, len pages) intersect? */
static bool colors_overlap(uint64_t ca, uint64_t la, uint64_t cb, uint64_t lb, uint64_t nc)
{
    if (la >= nc || lb >= nc)
        return true;
    uint64_t d = (cb + nc - ca) % nc; /* b's start, seen from a's */
    return d < la || (nc - d) % nc < lb;
}

static int build_runs(const struct segment *seg, size_t nseg, uint64_t nc,
                      struct fs_color_run **runs, size_t *nruns);

int fs_color_plan(const struct fs_color_input *in, const struct fs_color_geometry *geo,
                  struct fs_color_run **runs, size_t *nruns, size_t *bad)
{
    size_t nbad = 0;
    if (bad)
        *bad = 0;
    *runs = NULL;
    *nruns = 0;
    if (!in || !geo || geo->page == 0 || (geo->page & (geo->page - 1)) || geo->ncolors == 0) {
        errno = EINVAL;
        return -1;
    }
    uint64_t pagesz = geo->page, nc = geo->ncolors;
    struct plan p = {0};
    int rc = -1;
    struct segment *seg = NULL;
    cpuset *sets = NULL;
    size_t *set_order = NULL, *seg_order = NULL, *tmp = NULL;
    bool *used = NULL;
    struct use *used_by = NULL;

    /* The arrays, by address; a page two arrays share belongs to the first. */
    p.arrays = calloc(in->narrays ? in->narrays : 1, sizeof *p.arrays);
    if (!p.arrays)
        goto nomem;
    for (size_t i = 0; i < in->narrays; i++) {
        const struct fs_color_array *a = &in->arrays[i];
        if (a->bytes == 0 || a->base + a->bytes < a->base) {
            nbad++;
            continue;
        }
        p.arrays[p.narrays++] = (struct array){.base = a->base, .bytes = a->bytes, .id = i};
    }
    qsort(p.arrays, p.narrays, sizeof *p.arrays, cmp_array);
    uint64_t next_page = 0, total = 0;
    size_t kept = 0;
    for (size_t i = 0; i < p.narrays; i++) {
        struct array a = p.arrays[i];
        if (kept && a.base == p.arrays[kept - 1].base) /* seen by another loop: larger kept */
            continue;
        uint64_t p0 = a.base / pagesz, p1 = (a.base + a.bytes - 1) / pagesz + 1;
        if (kept && p0 < next_page) /* inside the previous array: its pages stay there */
            p0 = next_page;
        if (p1 < p0)
            p1 = p0;
        a.page0 = p0;
        a.npages = p1 - p0;
        if (total + a.npages > MAX_PAGES) {
            nbad++;
            continue;
        }
        a.slot = (size_t)total;
        total += a.npages;
        if (p1 > next_page)
            next_page = p1;
        p.arrays[kept++] = a;
    }
    p.narrays = kept;
    p.npages = (size_t)total;
    p.mask = calloc(p.npages ? p.npages : 1, sizeof *p.mask);
    p.together = calloc(p.narrays * p.narrays + 1, sizeof *p.together);
    if (!p.mask || !p.together)
        goto nomem;

    /* Step 1: processor sets per page, and which arrays are used together: those of
     * one loop, found by sorting the summaries by loop (a loop summarised many times,
     * as a triangular one is, costs no more than once). */
    unsigned maxthreads = 1;
    used_by = malloc((in->nrefs ? in->nrefs : 1) * sizeof *used_by);
    if (!used_by)
        goto nomem;
    size_t nused = 0;
    for (size_t i = 0; i < in->nrefs; i++) {
        const struct fs_color_ref *r = &in->refs[i];
        struct array *a = fs_color_ref_valid(r) ? array_at(&p, r->base) : NULL;
        if (!a) {
            nbad++;
            continue;
        }
        a->summarised = true;
        if (r->nthreads > maxthreads)
            maxthreads = r->nthreads;
        apply_ref(&p, a, r, pagesz);
        used_by[nused++] = (struct use){r->loop, (size_t)(a - p.arrays)};
    }
    qsort(used_by, nused, sizeof *used_by, cmp_use);
    for (size_t i = 0; i < nused;) { /* a loop's distinct arrays, then their pairs */
        size_t e = i, nd = 0, prev = SIZE_MAX;
        for (; e < nused && used_by[e].loop == used_by[i].loop; e++)
            if (used_by[e].array != prev) {
                prev = used_by[e].array;
                used_by[i + nd++].array = prev; /* compacted in place: i + nd <= e */
            }
        for (size_t x = i; x < i + nd; x++)
            for (size_t y = i; y < i + nd; y++)
                p.together[used_by[x].array * p.narrays + used_by[y].array] = true;
        i = e;
    }
    for (size_t i = 0; i < in->ngroups; i++) {
        struct array *a = array_at(&p, in->groups[i].a), *b = array_at(&p, in->groups[i].b);
        if (!a || !b) {
            nbad++;
            continue;
        }
        size_t x = (size_t)(a - p.arrays), y = (size_t)(b - p.arrays);
        p.together[x * p.narrays + y] = p.together[y * p.narrays + x] = true;
    }
    /* Pages no summary touches are used by every processor. */
    cpuset all = cpus_below(maxthreads);
    for (size_t s = 0; s < p.npages; s++)
        if (!p.mask[s])
            p.mask[s] = all;
    for (size_t i = 0; i < p.narrays; i++) /* an array is used with itself */
        p.together[i * p.narrays + i] = true;

    /* Maximal uniform access segments, in address order. */
    size_t nseg = 0, cap = 0;
    for (size_t i = 0; i < p.narrays; i++) {
        const struct array *a = &p.arrays[i];
        for (uint64_t k = 0; k < a->npages;) {
            uint64_t e = k + 1;
            while (e < a->npages && p.mask[a->slot + e] == p.mask[a->slot + k])
                e++;
            if (nseg == cap) {
                cap = cap ? 2 * cap : 64;
                struct segment *g = realloc(seg, cap * sizeof *seg);
                if (!g)
                    goto nomem;
                seg = g;
            }
            seg[nseg++] = (struct segment){.array = i, .page0 = a->page0 + k, .npages = e - k,
                                           .cpus = p.mask[a->slot + k]};
            k = e;
        }
    }
    /* Uniform access sets: the distinct processor sets, in ascending order. */
    sets = malloc((nseg ? nseg : 1) * sizeof *sets);
    set_order = malloc((nseg ? nseg : 1) * sizeof *set_order);
    seg_order = malloc((nseg ? nseg : 1) * sizeof *seg_order);
    tmp = malloc((nseg ? nseg : 1) * sizeof *tmp);
    used = malloc((nseg ? nseg : 1) * sizeof *used);
    if (!sets || !set_order || !seg_order || !tmp || !used)
        goto nomem;
    size_t nsets = 0;
    for (size_t i = 0; i < nseg; i++) {
        size_t j = 0;
        while (j < nsets && sets[j] != seg[i].cpus)
            j++;
        if (j == nsets)
            sets[nsets++] = seg[i].cpus;
        seg[i].set = j;
    }
    order_sets(sets, nsets, set_order); /* step 2 */
    size_t len = 0;
    for (size_t k = 0; k < nsets; k++) { /* step 3, set by set */
        size_t first = len;
        for (size_t i = 0; i < nseg; i++)
            if (seg[i].set == set_order[k])
                seg_order[len++] = i;
        order_segments(&p, seg, seg_order + first, len - first, tmp, used);
    }

    /* Steps 4 and 5: lay the segments out, each from its cyclic start. */
    uint64_t slot = 0;
    uint64_t *near = malloc(nc * sizeof *near); /* distance to the nearest taken start */
    uint64_t *start = malloc((nseg ? nseg : 1) * sizeof *start);
    if (!near || !start) {
        free(near);
        free(start);
        goto nomem;
    }
    for (size_t k = 0; k < nseg; k++) {
        struct segment *s = &seg[seg_order[k]];
        s->color0 = slot % nc;
        s->rotate = 0;
        bool any = false;
        for (uint64_t c = 0; c < nc; c++)
            near[c] = UINT64_MAX;
        for (size_t j = 0; j < k; j++) {
            const struct segment *t = &seg[seg_order[j]];
            if (!(t->cpus & s->cpus) || !together(&p, s->array, t->array) ||
                !colors_overlap(s->color0, s->npages, t->color0, t->npages, nc))
                continue;
            any = true;
            near[start[j]] = 0;
        }
        if (any && s->npages > 1) {
            /* circular distance to the nearest taken start: twice round each way */
            for (uint64_t c = 0; c < 2 * nc; c++) {
                uint64_t x = c % nc, prev = (x + nc - 1) % nc;
                if (near[prev] != UINT64_MAX && near[prev] + 1 < near[x])
                    near[x] = near[prev] + 1;
                uint64_t y = (2 * nc - 1 - c) % nc, nxt = (y + 1) % nc;
                if (near[nxt] != UINT64_MAX && near[nxt] + 1 < near[y])
                    near[y] = near[nxt] + 1;
            }
            /* the first page at slot j (j < npages) starts on color color0 + j */
            uint64_t best_j = 0, best = near[s->color0];
            uint64_t lim = s->npages < nc ? s->npages : nc;
            for (uint64_t j = 1; j < lim; j++)
                if (near[(s->color0 + j) % nc] > best) {
                    best = near[(s->color0 + j) % nc];
                    best_j = j;
                }
            s->rotate = best_j ? s->npages - best_j : 0;
        }
        start[k] = (s->color0 + (s->npages - s->rotate) % s->npages) % nc;
        slot += s->npages;
    }
    free(near);
    free(start);
    rc = build_runs(seg, nseg, nc, runs, nruns);
    if (rc == 0)
        goto done;
nomem:
    errno = ENOMEM;
    rc = -1;
done:
    free(p.arrays);
    free(p.mask);
    free(p.together);
    free(seg);
    free(sets);
    free(set_order);
    free(seg_order);
    free(tmp);
    free(used);
    free(used_by);
    if (bad)
        *bad = nbad;
    return rc;
}

static int cmp_run(const void *x, const void *y)
{
    const struct fs_color_run *a = x, *b = y;
    return a->vpage < b->vpage ? -1 : a->vpage > b->vpage;
}

/* Each segment is two runs at most: pages rotate.. from its first slot's color, then
 * pages 0..rotate-1 after them.  Sorted by page, joined where colors continue. */
static int build_runs(const struct segment *seg, size_t nseg, uint64_t nc,
                      struct fs_color_run **runs, size_t *nruns)
{
    struct fs_color_run *r = malloc((2 * nseg + 1) * sizeof *r);
    if (!r)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < nseg; i++) {
        const struct segment *s = &seg[i];
        r[n++] = (struct fs_color_run){s->page0 + s->rotate, s->npages - s->rotate,
                                       (uint32_t)s->color0};
        if (s->rotate)
            r[n++] = (struct fs_color_run){s->page0, s->rotate,
                                           (uint32_t)((s->color0 + s->npages - s->rotate) % nc)};
    }
    qsort(r, n, sizeof *r, cmp_run);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && r[m - 1].vpage + r[m - 1].npages == r[i].vpage &&
            (r[m - 1].color + r[m - 1].npages) % nc == r[i].color)
            r[m - 1].npages += r[i].npages;
        else
            r[m++] = r[i];
    }
    *runs = r;
    *nruns = m;
    return 0;
}
