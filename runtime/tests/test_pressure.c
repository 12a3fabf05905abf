/* Releases in auto mode wait for memory pressure.  Run with FORESIGHT_MEM=192M: the
 * process starts far below 3/4 of that, so releases are skipped and counted, their
 * pages stay resident and keep their marks (later prefetches of them stay filtered
 * inline), and the skipped ranges are remembered.  Once the process has touched 160
 * MiB more, the next release sees pressure and the remembered pages lose their marks
 * (the kernel may now evict them, and a later prefetch must not be filtered).  The
 * data stays intact throughout.  Also the list of skipped ranges itself: a full list
 * forgets its oldest range's marks at once. */
#include "check.h"
#include "internal.h"

static bool marked(const void *p)
{
    return foresight__marked(foresight__directory(), p, 4096);
}

static size_t resident_pages(const char *a, size_t len)
{
    unsigned char vec[1024];
    CHECK(len / 4096 <= sizeof vec && mincore((void *)a, len, vec) == 0);
    size_t n = 0;
    for (size_t i = 0; i < len / 4096; i++)
        n += vec[i] & 1;
    return n;
}

int main(void)
{
    CHECK(!fs_budget_pressure());
    size_t len = 4u << 20;
    char *a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(a != MAP_FAILED);
    memset(a, 7, len);
    FORESIGHT_SITE(site, "a[0:4M]");
    foresight_prefetch_at(&site, a, len);
    CHECK(marked(a));
    foresight_release_at(&site, a, len / 2);           /* skipped, remembered */
    foresight_release_at(&site, a + len / 2, len / 2); /* coalesces with it */
    CHECK_EQ(__atomic_load_n(&fs_global_releases_idle, __ATOMIC_RELAXED), 2);
    CHECK(fs_deferred_pending());
    CHECK(marked(a) && marked(a + len - 4096));
    usleep(50000); /* let the worker finish the prefetch */
    CHECK_EQ(site.fs_stat[FS_PAGES_DEACTIVATED] + site.fs_stat[FS_PAGES_FREED], 0);
    CHECK_EQ(resident_pages(a, len), len / 4096);

    /* Pressure: RSS past 3/4 of FORESIGHT_MEM, then a release elsewhere. */
    size_t big = 160u << 20;
    char *b = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(b != MAP_FAILED);
    memset(b, 1, big);
    usleep(30000); /* past the 10 ms between usage readings */
    FORESIGHT_SITE(other, "b");
    foresight_release_at(&other, b, 1u << 20);
    CHECK(!fs_deferred_pending());
    CHECK(!marked(a) && !marked(a + len / 2) && !marked(a + len - 4096));
    usleep(50000); /* let the worker finish */
    for (size_t i = 0; i < len; i++)
        if (a[i] != 7)
            CHECK(a[i] == 7);
    for (size_t i = 0; i < big; i += 4096)
        if (b[i] != 1)
            CHECK(b[i] == 1);

    /* The list itself: 4096 disjoint ranges fill it; one more forgets the oldest. */
    char *c = mmap(NULL, 8194u * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    CHECK(c != MAP_FAILED);
    uintptr_t p0 = (uintptr_t)c >> 12;
    fs_residency_mark(p0, 8194);
    for (uintptr_t k = 0; k <= 4096; k++)
        fs_deferred_add(p0 + 2 * k, 1); /* every other page: nothing coalesces */
    CHECK(!fs_residency_test(p0));       /* the oldest, forgotten at once */
    CHECK(fs_residency_test(p0 + 2) && fs_residency_test(p0 + 1));
    CHECK_EQ(fs_deferred_flush(), 4096);
    CHECK(!fs_residency_test(p0 + 2) && !fs_residency_test(p0 + 8192));
    CHECK(fs_residency_test(p0 + 1) && fs_residency_test(p0 + 8193));
    return check_done("pressure");
}
