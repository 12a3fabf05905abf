/*
 * test_policies.c — the page-mapping policies (mapping.c) and their effect.  It proves:
 * - pc: page v gets color v mod ncolors whatever the order pages are first touched in,
 *   and the pages of one color get frames c, c + n, c + 2n, ... in first-touch order;
 * - bh: colors 0, 1, 2, ... in first-touch order, whatever the pages;
 * - random: the same seed gives the same colors, another seed others, and every color
 *   is used;
 * - cdpc: a hinted page gets its run's color (+ its place in the run, mod ncolors), an
 *   unhinted one pc's; cdpc-bh: the hint, else bh's counter, which every first touch
 *   advances; pages already mapped keep their frames when hints change; overlapping
 *   runs are refused and change nothing; other policies ignore hints;
 * - through the simulator: two pages that collide under pc stop conflicting once a hint
 *   gives the second another color, and pages_per_color counts the pages per color;
 * - cs_track_pages: each page's CPUs, kept per page as the tables grow, cleared by
 *   cs_reset_stats.
 */
#include <errno.h>
#include <stdint.h>

#include "check.h"
#include "color_plan.h"
#include "cs_internal.h"

enum { COLORS = 8 };

static uint32_t color(struct cs_mapping *m, uint64_t vpage)
{
    uint32_t idx;
    bool fresh;
    CHECK_EQ(cs_mapping_page(m, vpage, &idx, &fresh), 0);
    return (uint32_t)(m->frame[idx] % COLORS);
}

static uint64_t frame(struct cs_mapping *m, uint64_t vpage)
{
    uint32_t idx;
    bool fresh;
    CHECK_EQ(cs_mapping_page(m, vpage, &idx, &fresh), 0);
    return m->frame[idx];
}

static const uint64_t ORDER[] = {21, 3, 5, 13, 0, 8, 1000, 16, 7};

static void pc_and_bh(void)
{
    struct cs_mapping m;
    CHECK_EQ(cs_mapping_init(&m, CS_PC, COLORS, 1, 1u << 20), 0);
    for (size_t i = 0; i < sizeof ORDER / sizeof *ORDER; i++)
        CHECK_EQ(color(&m, ORDER[i]), ORDER[i] % COLORS);
    /* color 5: 21, 5, 13 in that order; color 0: 0, 8, 1000, 16 */
    CHECK_EQ(frame(&m, 21), 5);
    CHECK_EQ(frame(&m, 5), 5 + COLORS);
    CHECK_EQ(frame(&m, 13), 5 + 2 * COLORS);
    CHECK_EQ(frame(&m, 16), 0 + 3 * COLORS);
    CHECK_EQ(m.per_color[0], 4);
    CHECK_EQ(m.per_color[5], 3);
    uint32_t idx;
    bool fresh = true;
    CHECK_EQ(cs_mapping_page(&m, 21, &idx, &fresh), 0); /* mapped once */
    CHECK(!fresh);
    CHECK_EQ(idx, 0);
    cs_mapping_free(&m);

    CHECK_EQ(cs_mapping_init(&m, CS_BH, COLORS, 1, 1u << 20), 0);
    for (size_t i = 0; i < sizeof ORDER / sizeof *ORDER; i++)
        CHECK_EQ(color(&m, ORDER[i]), i % COLORS);
    CHECK_EQ(frame(&m, 7), 0 + COLORS); /* the 9th page: color 0 again */
    cs_mapping_free(&m);
}

static void random_colors(void)
{
    uint32_t a[64], b[64], c[64];
    uint64_t seeds[3] = {1, 1, 2};
    uint32_t *out[3] = {a, b, c};
    for (int k = 0; k < 3; k++) {
        struct cs_mapping m;
        CHECK_EQ(cs_mapping_init(&m, CS_RANDOM, COLORS, seeds[k], 1u << 20), 0);
        for (uint64_t v = 0; v < 64; v++)
            out[k][v] = color(&m, v * 3);
        for (uint32_t col = 0; col < COLORS; col++)
            CHECK(m.per_color[col] > 0);
        cs_mapping_free(&m);
    }
    unsigned same = 0, differ = 0;
    for (int v = 0; v < 64; v++) {
        same += a[v] == b[v];
        differ += a[v] != c[v];
    }
    CHECK_EQ(same, 64);
    CHECK(differ > 16);
}

static void hints(void)
{
    const struct fs_color_run runs[] = {
        {.vpage = 100, .npages = 4, .color = 6}, /* 100..103: 6, 7, 0, 1 */
        {.vpage = 10, .npages = 1, .color = 3 + COLORS}, /* colors taken mod ncolors */
        {.vpage = 50, .npages = 0, .color = 1},  /* empty: ignored */
    };
    struct cs_mapping m;
    CHECK_EQ(cs_mapping_init(&m, CS_CDPC, COLORS, 1, 1u << 20), 0);
    CHECK_EQ(cs_mapping_set_hints(&m, runs, 3), 0);
    CHECK_EQ(color(&m, 102), 0);
    CHECK_EQ(color(&m, 100), 6);
    CHECK_EQ(color(&m, 103), 1);
    CHECK_EQ(color(&m, 10), 3);
    CHECK_EQ(color(&m, 104), 104 % COLORS); /* past the run: pc */
    CHECK_EQ(color(&m, 99), 99 % COLORS);
    CHECK_EQ(color(&m, 50), 50 % COLORS);
    const struct fs_color_run overlap[] = {{.vpage = 5, .npages = 3, .color = 0},
                                           {.vpage = 7, .npages = 1, .color = 0}};
    errno = 0;
    CHECK_EQ(cs_mapping_set_hints(&m, overlap, 2), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(color(&m, 101), 7); /* the old hints still hold */
    const struct fs_color_run later = {.vpage = 100, .npages = 10, .color = 0};
    CHECK_EQ(cs_mapping_set_hints(&m, &later, 1), 0);
    CHECK_EQ(color(&m, 100), 6);    /* mapped before: kept */
    CHECK_EQ(color(&m, 105), 5);    /* new hint */
    cs_mapping_free(&m);

    /* cdpc-bh: first touches 0, 1, 2, 3: unhinted pages take the counter's value */
    CHECK_EQ(cs_mapping_init(&m, CS_CDPC_BH, COLORS, 1, 1u << 20), 0);
    CHECK_EQ(cs_mapping_set_hints(&m, runs, 3), 0);
    CHECK_EQ(color(&m, 500), 0);
    CHECK_EQ(color(&m, 101), 7);
    CHECK_EQ(color(&m, 501), 2);
    CHECK_EQ(color(&m, 10), 3);
    CHECK_EQ(color(&m, 502), 4);
    cs_mapping_free(&m);

    CHECK_EQ(cs_mapping_init(&m, CS_PC, COLORS, 1, 1u << 20), 0);
    CHECK_EQ(cs_mapping_set_hints(&m, runs, 3), 0);
    CHECK_EQ(color(&m, 100), 100 % COLORS);
    cs_mapping_free(&m);
}

/* A B A B ... with A at page 0 and B at page 4: both color 0 under pc (4 colors).
 * The pages per color into PER_COLOR (the stats' pointer dies with the simulator). */
static struct cs_stats ping_pong(enum cs_policy policy, const struct fs_color_run *run,
                                 uint64_t per_color[4])
{
    struct cs_config cfg = {.cpus = 1, .l2_bytes = 4096, .assoc = 1, .line = 64,
                            .page = 1024, .policy = policy};
    struct cs_sim *s = cs_create(&cfg, NULL, 0);
    struct cs_stats st = {0};
    CHECK(s != NULL);
    if (!s)
        return st;
    if (run)
        CHECK_EQ(cs_set_hints(s, run, 1), 0);
    for (int i = 0; i < 10; i++) {
        cs_access(s, 0, 0, 8, 0);
        cs_access(s, 0, 4096, 8, 0);
    }
    cs_stats(s, &st);
    CHECK_EQ(st.pages, 2);
    CHECK_EQ(st.ncolors, 4);
    uint64_t sum = 0;
    for (uint32_t c = 0; c < 4; c++)
        sum += per_color[c] = st.pages_per_color[c];
    CHECK_EQ(sum, 2);
    st.pages_per_color = NULL;
    cs_free(s);
    return st;
}

static void through_the_simulator(void)
{
    const struct fs_color_run b_elsewhere = {.vpage = 4, .npages = 1, .color = 2};
    uint64_t per_color[4];
    struct cs_stats st = ping_pong(CS_PC, NULL, per_color);
    CHECK_EQ(st.total.conflict, 18);
    CHECK_EQ(per_color[0], 2);
    st = ping_pong(CS_CDPC, &b_elsewhere, per_color);
    CHECK_EQ(st.total.conflict, 0);
    CHECK_EQ(st.total.hits, 18);
    CHECK_EQ(per_color[0], 1);
    CHECK_EQ(per_color[2], 1);
    st = ping_pong(CS_BH, NULL, per_color); /* first touches get colors 0 and 1 */
    CHECK_EQ(st.total.conflict, 0);
    CHECK_EQ(per_color[1], 1);
}

/* cs_track_pages: which CPUs touch each page, cleared with the counters (the steady
 * state's pages, paper Figures 3 and 5); pages keep their first-touch order and frames. */
static void tracked_pages(void)
{
    struct cs_config cfg = {.cpus = 3, .l2_bytes = 4096, .assoc = 1, .line = 64,
                            .page = 1024, .policy = CS_PC};
    struct cs_sim *s = cs_create(&cfg, NULL, 0);
    CHECK(s != NULL);
    if (!s)
        return;
    uint64_t vpage, frame, cpus;
    CHECK_EQ(cs_access(s, 0, 5 * 1024, 8, 0), 0); /* page 5, before tracking */
    CHECK_EQ(cs_track_pages(s), 0);
    CHECK_EQ(cs_page(s, 0, &vpage, &frame, &cpus), 0);
    CHECK_EQ(vpage, 5);
    CHECK_EQ(cpus, 0);
    CHECK_EQ(cs_access(s, 0, 2 * 1024 + 8, 8, 0), 0);  /* page 2: CPU 0 */
    CHECK_EQ(cs_access(s, 2, 7 * 1024, 8, 1), 0);      /* page 7: CPU 2 */
    CHECK_EQ(cs_access(s, 1, 2 * 1024 + 512, 8, 1), 0); /* page 2: CPU 1 too */
    CHECK_EQ(cs_access(s, 1, 5 * 1024 + 1000, 40, 0), 0); /* pages 5 and 6: CPU 1 */
    const uint64_t want[][2] = {{5, 2}, {2, 3}, {7, 4}, {6, 2}};
    for (uint32_t i = 0; i < 4; i++) {
        CHECK_EQ(cs_page(s, i, &vpage, &frame, &cpus), 0);
        CHECK_EQ(vpage, want[i][0]);
        CHECK_EQ(cpus, want[i][1]);
        CHECK_EQ(frame % cs_ncolors(s), vpage % cs_ncolors(s)); /* pc */
    }
    errno = 0;
    CHECK_EQ(cs_page(s, 4, &vpage, &frame, &cpus), -1);
    CHECK_EQ(errno, ERANGE);
    cs_reset_stats(s);                                   /* the steady state starts */
    CHECK_EQ(cs_access(s, 2, 2 * 1024, 8, 0), 0);
    for (uint32_t i = 0; i < 4; i++) {
        CHECK_EQ(cs_page(s, i, &vpage, &frame, &cpus), 0);
        CHECK_EQ(cpus, vpage == 2 ? 4u : 0u);
    }
    for (uint64_t p = 100; p < 3000; p++)                /* the tables grow */
        CHECK_EQ(cs_access(s, (unsigned)(p % 3), p * 1024, 8, 0), 0);
    CHECK_EQ(cs_page(s, 4 + 2899, &vpage, &frame, &cpus), 0);
    CHECK_EQ(vpage, 2999);
    CHECK_EQ(cpus, UINT64_C(1) << (2999 % 3));
    cs_free(s);
}

int main(void)
{
    tracked_pages();
    pc_and_bh();
    random_colors();
    hints();
    through_the_simulator();
    return check_done("test_policies");
}
