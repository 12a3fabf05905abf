/*
 * test_classes.c — the 3C split of one CPU's misses (sim.c with shadow.c), on crafted
 * traces through the public interface.  The cache: 4 KiB of 64-byte lines, pages of
 * 1 KiB, page coloring (4 colors).  It proves:
 * - two lines 4 KiB apart collide in the direct-mapped cache though both fit: after two
 *   cold misses, every reference of A B A B ... is a conflict miss; with 2 ways, three
 *   such lines are conflicts too, and two are hits;
 * - a loop over 128 lines (twice the cache) misses on every line of every later pass,
 *   all capacity misses, direct mapped or fully associative; over 65 lines in the fully
 *   associative cache, all capacity; a loop over the 64 lines of 4 consecutive pages
 *   fits and hits after its cold misses;
 * - a CPU's first reference to a line is cold even when another CPU holds it;
 * - an access crossing a line boundary references both lines (one access, two
 *   references), one crossing a page boundary maps both pages;
 * - hits + misses = references, misses = the five classes, bus bytes = (misses +
 *   writebacks) * line, totals = the CPUs' sums;
 * - bad accesses (CPU out of range, size 0, wrapping past 2^64) fail with EINVAL and
 *   change no counter; bad geometries are refused with a message naming the value.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "foresight_cachesim.h"

static struct cs_sim *make(unsigned cpus, uint32_t assoc)
{
    struct cs_config cfg = {.cpus = cpus, .l2_bytes = 4096, .assoc = assoc, .line = 64,
                            .page = 1024, .policy = CS_PC};
    char err[128];
    struct cs_sim *s = cs_create(&cfg, err, sizeof err);
    if (!s)
        fprintf(stderr, "cs_create: %s\n", err);
    return s;
}

static struct cs_stats stats(struct cs_sim *s)
{
    struct cs_stats st;
    cs_stats(s, &st);
    return st;
}

static void consistent(const struct cs_stats *st, uint32_t line)
{
    struct cs_cpu_stats sum = {0};
    for (unsigned i = 0; i < st->cpus; i++) {
        const struct cs_cpu_stats *c = &st->cpu[i];
        CHECK_EQ(c->hits + c->misses, c->refs);
        CHECK_EQ(c->misses,
                 c->cold + c->capacity + c->conflict + c->true_sharing + c->false_sharing);
        CHECK_EQ(c->bus_bytes, (c->misses + c->writebacks) * line);
        CHECK_EQ(c->reads + c->writes, c->accesses);
        sum.refs += c->refs;
        sum.misses += c->misses;
        sum.conflict += c->conflict;
        sum.bus_bytes += c->bus_bytes;
    }
    CHECK_EQ(st->total.refs, sum.refs);
    CHECK_EQ(st->total.misses, sum.misses);
    CHECK_EQ(st->total.conflict, sum.conflict);
    CHECK_EQ(st->total.bus_bytes, sum.bus_bytes);
}

static void conflicts(void)
{
    struct cs_sim *s = make(1, 1);
    for (int i = 0; i < 10; i++) {
        CHECK_EQ(cs_access(s, 0, 0, 8, 0), 0);
        CHECK_EQ(cs_access(s, 0, 4096, 8, 0), 0);
    }
    struct cs_stats st = stats(s);
    CHECK_EQ(st.ncolors, 4);
    CHECK_EQ(st.total.cold, 2);
    CHECK_EQ(st.total.conflict, 18);
    CHECK_EQ(st.total.capacity, 0);
    CHECK_EQ(st.total.hits, 0);
    consistent(&st, 64);
    cs_free(s);

    /* 2 ways (2 colors of 1 KiB): lines 0, 2048 and 4096 share set 0 */
    s = make(1, 2);
    for (int i = 0; i < 10; i++)
        for (uint64_t a = 0; a <= 4096; a += 2048)
            CHECK_EQ(cs_access(s, 0, a, 8, 0), 0);
    st = stats(s);
    CHECK_EQ(st.ncolors, 2);
    CHECK_EQ(st.total.cold, 3);
    CHECK_EQ(st.total.conflict, 27);
    CHECK_EQ(st.total.hits, 0);
    for (int i = 0; i < 10; i++)
        for (uint64_t a = 0; a <= 2048; a += 2048)
            CHECK_EQ(cs_access(s, 0, a + 8, 8, 0), 0);
    st = stats(s);
    CHECK_EQ(st.total.hits, 18); /* after two misses: 0, then 2048 (4096 was MRU) */
    consistent(&st, 64);
    cs_free(s);
}

static void capacity(void)
{
    for (uint32_t assoc = 1; assoc <= 64; assoc *= 64) {
        struct cs_sim *s = make(1, assoc);
        for (int pass = 0; pass < 3; pass++)
            for (uint64_t a = 0; a < 128 * 64; a += 64)
                CHECK_EQ(cs_access(s, 0, a, 8, 0), 0);
        struct cs_stats st = stats(s);
        CHECK_EQ(st.total.cold, 128);
        CHECK_EQ(st.total.capacity, 256);
        CHECK_EQ(st.total.conflict, 0);
        CHECK_EQ(st.total.hits, 0);
        consistent(&st, 64);
        cs_free(s);
    }
    struct cs_sim *s = make(1, 64);
    for (int pass = 0; pass < 4; pass++)
        for (uint64_t a = 0; a < 65 * 64; a += 64)
            CHECK_EQ(cs_access(s, 0, a, 8, 0), 0);
    struct cs_stats st = stats(s);
    CHECK_EQ(st.total.cold, 65);
    CHECK_EQ(st.total.capacity, 3 * 65);
    cs_free(s);

    s = make(1, 1); /* 4 consecutive pages: 4 colors, every set once */
    for (int pass = 0; pass < 3; pass++)
        for (uint64_t a = 0x10000; a < 0x10000 + 64 * 64; a += 64)
            CHECK_EQ(cs_access(s, 0, a, 8, pass == 1), 0);
    st = stats(s);
    CHECK_EQ(st.total.cold, 64);
    CHECK_EQ(st.total.hits, 128);
    CHECK_EQ(st.total.misses, 64);
    CHECK_EQ(st.total.writebacks, 0); /* modified, never evicted */
    consistent(&st, 64);
    cs_free(s);
}

static void cold_and_crossing(void)
{
    struct cs_sim *s = make(2, 1);
    CHECK_EQ(cs_access(s, 0, 128, 8, 0), 0);
    CHECK_EQ(cs_access(s, 1, 128, 8, 0), 0);
    CHECK_EQ(cs_access(s, 1, 128, 8, 0), 0);
    struct cs_stats st = stats(s);
    CHECK_EQ(st.cpu[0].cold, 1);
    CHECK_EQ(st.cpu[1].cold, 1);
    CHECK_EQ(st.cpu[1].hits, 1);

    CHECK_EQ(cs_access(s, 0, 60, 8, 0), 0); /* lines 0 and 1 */
    st = stats(s);
    CHECK_EQ(st.cpu[0].accesses, 2);
    CHECK_EQ(st.cpu[0].refs, 3);
    CHECK_EQ(st.cpu[0].cold, 3);
    CHECK_EQ(st.pages, 1);
    CHECK_EQ(cs_access(s, 0, 1020, 16, 1), 0); /* line 15 of page 0, line 0 of page 1 */
    st = stats(s);
    CHECK_EQ(st.pages, 2);
    CHECK_EQ(st.cpu[0].refs, 5);
    CHECK_EQ(st.cpu[0].writes, 1);
    CHECK_EQ(cs_access(s, 1, 0, 4096, 0), 0); /* 64 lines, 4 pages */
    st = stats(s);
    CHECK_EQ(st.pages, 4);
    CHECK_EQ(st.cpu[1].refs, 2 + 64);
    consistent(&st, 64);

    /* bad accesses change nothing */
    errno = 0;
    CHECK_EQ(cs_access(s, 2, 0, 8, 0), -1);
    CHECK_EQ(errno, EINVAL);
    CHECK_EQ(cs_access(s, 0, 0, 0, 0), -1);
    CHECK_EQ(cs_access(s, 0, UINT64_MAX - 3, 8, 0), -1);
    CHECK_EQ(cs_access(s, 0, UINT64_MAX - 7, 8, 0), 0); /* the last 8 bytes are fine */
    struct cs_stats after = stats(s);
    CHECK_EQ(after.total.accesses, st.total.accesses + 1);
    cs_barrier(s);
    CHECK_EQ(stats(s).barriers, 1);
    cs_free(s);
}

static void refused(void)
{
    static const struct {
        struct cs_config cfg;
        const char *says;
    } bad[] = {
        {{.cpus = 0, .l2_bytes = 4096, .assoc = 1, .line = 64, .page = 1024}, "0 CPUs"},
        {{.cpus = 65, .l2_bytes = 4096, .assoc = 1, .line = 64, .page = 1024}, "65 CPUs"},
        {{.cpus = 1, .l2_bytes = 3000, .assoc = 1, .line = 64, .page = 1024}, "L2 size 3000"},
        {{.cpus = 1, .l2_bytes = 4096, .assoc = 1, .line = 48, .page = 1024}, "line size 48"},
        {{.cpus = 1, .l2_bytes = 4096, .assoc = 1, .line = 4, .page = 1024}, "smaller than a word"},
        {{.cpus = 1, .l2_bytes = 4096, .assoc = 3, .line = 64, .page = 1024},
         "associativity 3 does not divide the cache's 64 lines"},
        {{.cpus = 1, .l2_bytes = 4096, .assoc = 128, .line = 64, .page = 1024},
         "associativity 128"},
        {{.cpus = 1, .l2_bytes = 4096, .assoc = 1, .line = 64, .page = 1000}, "page size 1000"},
        {{.cpus = 1, .l2_bytes = 4096, .assoc = 1, .line = 64, .page = 32},
         "smaller than the line"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char err[128] = "";
        struct cs_sim *s = cs_create(&bad[i].cfg, err, sizeof err);
        CHECK(s == NULL);
        if (!strstr(err, bad[i].says)) {
            fprintf(stderr, "case %zu: '%s' does not say '%s'\n", i, err, bad[i].says);
            check_failures++;
        }
        cs_free(s);
    }
    /* fully associative, and a way smaller than a page: one color */
    struct cs_config full = {.cpus = 1, .l2_bytes = 4096, .assoc = 64, .line = 64,
                             .page = 1024};
    struct cs_sim *s = cs_create(&full, NULL, 0);
    CHECK(s && cs_ncolors(s) == 1);
    cs_free(s);
}

int main(void)
{
    conflicts();
    capacity();
    cold_and_crossing();
    refused();
    return check_done("test_classes");
}
