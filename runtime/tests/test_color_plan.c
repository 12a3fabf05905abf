/* test_color_plan.c — the page-coloring algorithm (color_plan.c, paper 4 Section 5.2):
 * the schedules' owners; Figure 4's example as the text describes it; and, over
 * thousands of seeded random inputs (1-64 threads, even/blocked/cyclic, reverse,
 * ragged array and unit sizes, shifts and rotates), that every page of every array gets
 * exactly one color in range, that the plan is deterministic, that a thread owning no
 * more pages than there are colors gets distinct colors, that a larger singleton
 * partition covers each color within one page of the others, and that arrays used
 * together start their thread's segments on different colors. */
#include "color_plan.h"
#include "check.h"

#include <errno.h>

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static uint64_t below(uint64_t n) { return next() % n; }

static void owners(void)
{
    /* N = 10 over 4 threads: even 3,3,2,2; blocked 3,3,3,1; cyclic,2 0 0 1 1 2 2 3 3 0 0 */
    const unsigned even[] = {0, 0, 0, 1, 1, 1, 2, 2, 3, 3};
    const unsigned blocked[] = {0, 0, 0, 1, 1, 1, 2, 2, 2, 3};
    const unsigned cyclic[] = {0, 0, 1, 1, 2, 2, 3, 3, 0, 0};
    for (int k = 0; k < 10; k++) {
        CHECK_EQ(fs_color_owner(FS_COLOR_EVEN, 0, 4, 10, k), even[k]);
        CHECK_EQ(fs_color_owner(FS_COLOR_BLOCKED, 0, 4, 10, k), blocked[k]);
        CHECK_EQ(fs_color_owner(FS_COLOR_CYCLIC, 2, 4, 10, k), cyclic[k]);
        CHECK_EQ(fs_color_owner(FS_COLOR_EVEN | FS_COLOR_REVERSE, 0, 4, 10, k), even[9 - k]);
        CHECK_EQ(fs_color_owner(FS_COLOR_BLOCKED | FS_COLOR_REVERSE, 0, 4, 10, k),
                 blocked[9 - k]);
    }
    /* fewer iterations than threads: one each, the rest idle */
    for (int k = 0; k < 3; k++)
        CHECK_EQ(fs_color_owner(FS_COLOR_EVEN, 0, 8, 3, k), (unsigned)k);
}

static uint32_t color_of(const struct fs_color_run *r, size_t n, uint64_t pg, uint32_t nc)
{
    for (size_t i = 0; i < n; i++)
        if (pg >= r[i].vpage && pg < r[i].vpage + r[i].npages)
            return (uint32_t)((r[i].color + (pg - r[i].vpage)) % nc);
    return UINT32_MAX;
}

/* Figure 4: two arrays (pages 0-7 and 8-13), two threads, four colors; the second
 * array's boundary page (11) is also read by thread 0 (a shift of one), so it is used by
 * both.  The text: sets ordered CPU0, both, CPU1; pages 8-10 laid out cyclically so
 * pages 0 and 8 no longer share a color. */
static void figure4(void)
{
    const uint64_t P = 4096;
    struct fs_color_array arr[] = {{0, 8 * P}, {8 * P, 6 * P}};
    struct fs_color_ref refs[] = {
        {.base = 0, .unit = P, .count = 8, .nthreads = 2, .loop = 1},
        {.base = 8 * P, .unit = P, .count = 6, .nthreads = 2, .loop = 1},
        {.base = 8 * P, .unit = P, .count = 6, .offset = 1, .nthreads = 2, .loop = 1},
    };
    struct fs_color_input in = {arr, 2, refs, 3, NULL, 0};
    struct fs_color_geometry geo = {P, 4};
    struct fs_color_run *runs;
    size_t n, bad;
    CHECK_EQ(fs_color_plan(&in, &geo, &runs, &n, &bad), 0);
    CHECK_EQ(bad, 0);
    uint32_t c[14];
    for (int pg = 0; pg < 14; pg++)
        c[pg] = color_of(runs, n, (uint64_t)pg, 4);
    /* CPU0's pages first: 0-3 on colors 0-3, then 8-10 rotated so page 8 starts two
     * colors from page 0; the shared page 11 next; then CPU1's 4-7, rotated to start two
     * from page 11's color, and 12-13 */
    const uint32_t want[14] = {0, 1, 2, 3, 1, 2, 3, 0, 2, 0, 1, 3, 0, 1};
    for (int pg = 0; pg < 14; pg++)
        CHECK_EQ(c[pg], want[pg]);
    CHECK(c[0] != c[8]);
    free(runs);
}

struct gen {
    struct fs_color_array arr[8];
    struct fs_color_ref refs[32];
    size_t narr, nref;
    unsigned p;
    bool simple; /* same threads, even/blocked, whole pages per unit, whole arrays
                  * partitioned, shifts of one unit */
};

static void generate(struct gen *g, uint64_t page, bool simple)
{
    memset(g, 0, sizeof *g);
    g->simple = simple;
    g->p = 1 + (unsigned)below(64);
    g->narr = 1 + below(6);
    uint64_t addr = page * (1 + below(100));
    for (size_t a = 0; a < g->narr; a++) {
        uint64_t bytes = 8 + below(page * 200); /* ragged */
        if (!simple && below(4) == 0)
            addr += below(page); /* unaligned starts */
        g->arr[a] = (struct fs_color_array){addr, bytes};
        addr += bytes + (simple ? page - (addr + bytes) % page : below(3 * page));
        uint64_t unit = simple ? page * (1 + below(4)) : 8 * (1 + below(page));
        int64_t units = (int64_t)((bytes + unit - 1) / unit);
        unsigned sched = simple ? (unsigned)below(2) : (unsigned)below(3);
        if (below(2))
            sched |= FS_COLOR_REVERSE;
        struct fs_color_ref r = {.base = g->arr[a].base, .unit = unit, .first = 0,
                                 .count = units, .schedule = sched, .chunk = 1 + below(4),
                                 .nthreads = simple ? g->p : 1 + (unsigned)below(64),
                                 .loop = (unsigned)below(2)};
        if (!simple) {
            r.first = (int64_t)below(3);
            r.count = units > 2 ? units - (int64_t)below(3) : units;
        }
        g->refs[g->nref++] = r;
        if (below(2)) { /* communication with the neighbours */
            struct fs_color_ref c = r;
            c.offset = simple ? (below(2) ? 1 : -1)
                              : (below(2) ? 1 + (int64_t)below(3) : -1 - (int64_t)below(3));
            c.wrap = simple ? 0 : (int)below(2);
            g->refs[g->nref++] = c;
        }
    }
}

static void dump(const struct gen *g, uint64_t page, uint32_t nc)
{
    for (size_t a = 0; a < g->narr; a++)
        fprintf(stderr, "  array %llx %llu\n", (unsigned long long)g->arr[a].base,
                (unsigned long long)g->arr[a].bytes);
    for (size_t k = 0; k < g->nref; k++)
        fprintf(stderr, "  ref %llx unit %llu first %lld count %lld off %lld sched %u "
                "chunk %llu p %u loop %u wrap %d\n",
                (unsigned long long)g->refs[k].base, (unsigned long long)g->refs[k].unit,
                (long long)g->refs[k].first, (long long)g->refs[k].count,
                (long long)g->refs[k].offset, g->refs[k].schedule,
                (unsigned long long)g->refs[k].chunk, g->refs[k].nthreads,
                g->refs[k].loop, g->refs[k].wrap);
    fprintf(stderr, "  page %llu colors %u\n", (unsigned long long)page, nc);
}

/* Which threads touch each page (recomputed from the summaries, the slow obvious way),
 * then per thread: a thread with no more pages than colors has them all on different
 * colors (checked where the plan can promise it: whole pages per unit and shifts of one,
 * so every page is used by one thread or two neighbours); a thread's pages used by it
 * alone cover every color within one page of the others (checked everywhere). */
static void per_thread(const struct gen *g, uint64_t page, uint32_t nc,
                       const struct fs_color_run *r, size_t n, int iter)
{
    static uint64_t set[4096]; /* by page, from the first array's */
    static uint64_t count_all[512], count_single[512];
    const uint64_t p0 = g->arr[0].base / page;
    memset(set, 0, sizeof set);
    for (size_t a = 0; a < g->narr; a++) {
        const struct fs_color_array *A = &g->arr[a];
        for (size_t k = 0; k < g->nref; k++) {
            const struct fs_color_ref *R = &g->refs[k];
            if (R->base != A->base)
                continue;
            for (int64_t it = 0; it < R->count; it++) {
                int64_t u = R->first + it + R->offset;
                if (R->wrap)
                    u = R->first + ((it + R->offset) % R->count + R->count) % R->count;
                uint64_t b0 = A->base + (uint64_t)u * R->unit;
                if (u < 0 || b0 >= A->base + A->bytes)
                    continue;
                uint64_t b1 = b0 + R->unit - 1;
                if (b1 >= A->base + A->bytes)
                    b1 = A->base + A->bytes - 1;
                unsigned t = fs_color_owner(R->schedule, R->chunk, R->nthreads, R->count, it);
                for (uint64_t pg = b0 / page; pg <= b1 / page; pg++)
                    set[pg - p0] |= 1ull << t;
            }
        }
    }
    for (unsigned t = 0; t < g->p; t++) {
        uint64_t mine = 0, single = 0;
        memset(count_all, 0, sizeof count_all);
        memset(count_single, 0, sizeof count_single);
        for (size_t a = 0; a < g->narr; a++) {
            const struct fs_color_array *A = &g->arr[a];
            for (uint64_t pg = A->base / page; pg * page < A->base + A->bytes; pg++) {
                if (a && pg * page < g->arr[a - 1].base + g->arr[a - 1].bytes)
                    continue; /* the previous array's page, counted there */
                uint64_t s = set[pg - p0];
                if (!(s >> t & 1))
                    continue;
                uint32_t c = color_of(r, n, pg, nc);
                mine++;
                count_all[c]++;
                if (s == 1ull << t) {
                    single++;
                    count_single[c]++;
                }
            }
        }
        if (g->simple && mine <= nc)
            for (uint32_t c = 0; c < nc; c++)
                if (count_all[c] > 1) {
                    fprintf(stderr, "iter %d thread %u: %llu pages, %u colors\n", iter, t,
                            (unsigned long long)mine, nc);
                    CHECK(!"a thread with few pages got a color twice");
                    dump(g, page, nc);
                    break;
                }
        uint64_t lo = UINT64_MAX, hi = 0;
        for (uint32_t c = 0; c < nc && single >= nc; c++) {
            lo = count_single[c] < lo ? count_single[c] : lo;
            hi = count_single[c] > hi ? count_single[c] : hi;
        }
        if (single >= nc && hi - lo > 1) {
            fprintf(stderr, "iter %d thread %u: its own pages %llu..%llu per color\n", iter, t,
                    (unsigned long long)lo, (unsigned long long)hi);
            CHECK(!"a large singleton partition covers colors unevenly");
            dump(g, page, nc);
        }
    }
}

static void properties(void)
{
    for (int iter = 0; iter < 3000; iter++) {
        uint64_t page = (uint64_t)4096 << below(2);
        uint32_t nc = (uint32_t)1 << below(9);
        bool simple = iter % 2 == 0;
        struct gen g;
        generate(&g, page, simple);
        struct fs_color_input in = {g.arr, g.narr, g.refs, g.nref, NULL, 0};
        struct fs_color_geometry geo = {page, nc};
        struct fs_color_run *r1, *r2;
        size_t n1, n2, bad;
        CHECK_EQ(fs_color_plan(&in, &geo, &r1, &n1, &bad), 0);
        CHECK_EQ(bad, 0);
        CHECK_EQ(fs_color_plan(&in, &geo, &r2, &n2, NULL), 0);
        CHECK_EQ(n1, n2); /* deterministic */
        for (size_t i = 0; i < n1 && i < n2; i++)
            CHECK(r1[i].vpage == r2[i].vpage && r1[i].npages == r2[i].npages &&
                  r1[i].color == r2[i].color);
        /* runs ascending, disjoint, colors in range, exactly the arrays' pages */
        uint64_t covered = 0;
        for (size_t i = 0; i < n1; i++) {
            CHECK(r1[i].npages > 0 && r1[i].color < nc);
            if (i)
                CHECK(r1[i - 1].vpage + r1[i - 1].npages <= r1[i].vpage);
            covered += r1[i].npages;
        }
        uint64_t pages = 0, last = 0;
        for (size_t a = 0; a < g.narr; a++) {
            uint64_t p0 = g.arr[a].base / page, p1 = (g.arr[a].base + g.arr[a].bytes - 1) / page + 1;
            if (a && p0 < last)
                p0 = last;
            if (p1 > p0)
                pages += p1 - p0;
            for (uint64_t pg = p0; pg < p1; pg++)
                if (color_of(r1, n1, pg, nc) == UINT32_MAX) {
                    CHECK(!"page without a color");
                    break;
                }
            last = p1 > last ? p1 : last;
        }
        CHECK_EQ(covered, pages);
        if (check_failures == 0)
            per_thread(&g, page, nc, r1, n1, iter);
        free(r1);
        free(r2);
        if (check_failures) {
            fprintf(stderr, "first failure at iteration %d\n", iter);
            return;
        }
    }
}

/* Three arrays of one loop partitioned alike: each thread's three segments start on
 * three different colors (without rotation all three would start on the same one when
 * a segment is a multiple of the colors). */
static void together(void)
{
    const uint64_t P = 4096;
    for (unsigned p = 1; p <= 16; p++) {
        struct fs_color_array arr[3];
        struct fs_color_ref refs[3];
        for (int a = 0; a < 3; a++) {
            arr[a] = (struct fs_color_array){(uint64_t)a * 64 * P, 64 * P};
            refs[a] = (struct fs_color_ref){.base = arr[a].base, .unit = P, .count = 64,
                                            .nthreads = p, .schedule = FS_COLOR_BLOCKED};
        }
        struct fs_color_input in = {arr, 3, refs, 3, NULL, 0};
        struct fs_color_geometry geo = {P, 64};
        struct fs_color_run *r;
        size_t n;
        CHECK_EQ(fs_color_plan(&in, &geo, &r, &n, NULL), 0);
        uint64_t per = (64 + p - 1) / p;
        for (unsigned t = 0; t < p && t * per < 64; t++) {
            uint32_t c0 = color_of(r, n, t * per, 64), c1 = color_of(r, n, 64 + t * per, 64),
                     c2 = color_of(r, n, 128 + t * per, 64);
            if (per >= 3)
                CHECK(c0 != c1 && c1 != c2 && c0 != c2);
        }
        free(r);
    }
}

static void bad_input(void)
{
    struct fs_color_array arr[] = {{4096, 4096}, {0, 0}};
    struct fs_color_ref refs[] = {
        {.base = 12345, .unit = 8, .count = 1, .nthreads = 1}, /* no such array */
        {.base = 4096, .unit = 0, .count = 1, .nthreads = 1},  /* no unit */
        {.base = 4096, .unit = 8, .count = 1, .nthreads = 65}, /* too many threads */
        {.base = 4096, .unit = 8, .count = 1, .nthreads = 1, .schedule = 7},
    };
    struct fs_color_input in = {arr, 2, refs, 4, NULL, 0};
    struct fs_color_geometry geo = {4096, 16};
    struct fs_color_run *r;
    size_t n, bad;
    CHECK_EQ(fs_color_plan(&in, &geo, &r, &n, &bad), 0);
    CHECK_EQ(bad, 5); /* four summaries and the empty array */
    CHECK_EQ(n, 1);
    free(r);
    geo.page = 3000;
    errno = 0;
    CHECK_EQ(fs_color_plan(&in, &geo, &r, &n, &bad), -1);
    CHECK_EQ(errno, EINVAL);
    geo = (struct fs_color_geometry){4096, 0};
    CHECK_EQ(fs_color_plan(&in, &geo, &r, &n, &bad), -1);
}

int main(void)
{
    owners();
    figure4();
    together();
    bad_input();
    properties();
    if (check_failures)
        return 1;
    puts("color_plan: ok");
    return 0;
}
