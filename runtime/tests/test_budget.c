/* The memory budget: FORESIGHT_MEM=64M gives a 48 MiB (75%) prefetch footprint.
 * A prefetch larger than the budget is truncated and counted; prefetches beyond
 * the footprint are dropped once reconciliation finds the old pages still
 * resident (keeping the marks of pages found resident), unless they come from a site
 * that releases behind itself or from a compiled loop's stream, and released pages give
 * their budget back. */
#include "internal.h" /* before check.h: its stream helpers need foresight.h */
#include "check.h"

int main(void)
{
    CHECK_EQ(fs_budget_limit_bytes(), 64u << 20);
    CHECK_EQ(fs_budget_pages(), (48u << 20) / 4096);
    CHECK(strstr(fs_budget_source(), "FORESIGHT_MEM") != NULL);

    size_t len = 128u << 20;
    char *a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(a, 1, len); /* resident: reconciliation cannot clear these marks */

    FORESIGHT_SITE(big, "a[0:128M]");
    foresight_prefetch_at(&big, a, len);
    CHECK_EQ(big.fs_stat[FS_DROPPED_BUDGET], 1);
    CHECK_EQ(big.fs_stat[FS_PAGES_REQUESTED], (48u << 20) / 4096);
    CHECK(fs_residency_footprint() <= fs_budget_pages());
    for (int i = 0; i < 200 && big.fs_stat[FS_PAGES_UNNECESSARY] < fs_budget_pages(); i++)
        usleep(10000); /* the worker found them all resident already */
    CHECK_EQ(big.fs_stat[FS_PAGES_UNNECESSARY], fs_budget_pages());

    /* The footprint is full of resident pages; the next prefetch cannot fit.  Its
     * pages that are missing lose their marks; those found resident keep them, so
     * hints to pages the program uses stay filtered inline. */
    FORESIGHT_SITE(hot, "a[64M:+1M]");
    foresight_prefetch_at(&hot, a + (64u << 20), 1u << 20);
    for (int i = 0; i < 200 && hot.fs_stat[FS_DROPPED_BUDGET] == 0; i++)
        usleep(10000);
    CHECK_EQ(hot.fs_stat[FS_DROPPED_BUDGET], 1);
    CHECK(foresight__marked(foresight__directory(), a + (64u << 20), 4096));

    char *b = mmap(NULL, 1u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    FORESIGHT_SITE(more, "b[0:1M]");
    foresight_prefetch_at(&more, b, 1u << 20);
    for (int i = 0; i < 200 && more.fs_stat[FS_DROPPED_BUDGET] == 0; i++)
        usleep(10000);
    CHECK_EQ(more.fs_stat[FS_DROPPED_BUDGET], 1);
    CHECK(!foresight__marked(foresight__directory(), b, 4096));
    /* A site that releases behind itself (a stream) keeps a bounded window in flight:
     * it is not dropped for a footprint the others piled up. */
    char *c = mmap(NULL, 1u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    FORESIGHT_SITE(stream, "c[0:1M] streamed");
    foresight_release_at(&stream, c, 1u << 20);
    foresight_prefetch_at(&stream, c, 1u << 20);
    for (int i = 0; i < 200 && stream.fs_stat[FS_ISSUED] == 0; i++)
        usleep(10000);
    CHECK_EQ(stream.fs_stat[FS_DROPPED_BUDGET], 0);
    CHECK_EQ(stream.fs_stat[FS_ISSUED], 1);
    foresight_release_at(&stream, c, 1u << 20);
    /* So is a compiled loop's stream that keeps its data (reused across an outer loop,
     * never released): its window is bounded by its look-ahead. */
    char *d = mmap(NULL, 1u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct foresight_stream kept;
    foresight_stream_init(&kept, 8, 4096, 64 * 1024, 0, 0, FORESIGHT_STREAM_RUNS);
    kept.ahead = 8192;
    FORESIGHT_SITE(kept_site, "d[i] kept");
    uintptr_t cnt = 0;
    stream_walk(&kept, &kept_site, (uintptr_t)d, 8, 16384, &cnt, false);
    for (int i = 0; i < 200 && kept_site.fs_stat[FS_ISSUED] == 0; i++)
        usleep(10000);
    CHECK_EQ(kept_site.fs_stat[FS_DROPPED_BUDGET], 0);
    CHECK(kept_site.fs_stat[FS_ISSUED] > 0);
    CHECK_EQ(kept_site.fs_stat[FS_RELEASES], 0);
    /* Releasing gives the budget back. */
    FORESIGHT_SITE(rel, "release a[0:48M]");
    foresight_release_at(&rel, a, 48u << 20);
    CHECK(fs_residency_footprint() < 1024);
    FORESIGHT_SITE(again, "b[0:1M] again");
    foresight_prefetch_at(&again, b, 1u << 20);
    for (int i = 0; i < 200 && again.fs_stat[FS_ISSUED] == 0; i++)
        usleep(10000);
    CHECK_EQ(again.fs_stat[FS_DROPPED_BUDGET], 0);
    for (size_t i = 0; i < len; i += 4096)
        if (a[i] != 1)
            CHECK(a[i] == 1);
    return check_done("budget");
}
