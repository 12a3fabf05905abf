/* Releases in auto mode wait for memory pressure.  Run with FORESIGHT_MEM=64G:
 * the process's few resident MiB are far below 3/4 of that, so a release is
 * skipped and counted, its pages stay resident and keep their marks (later
 * prefetches of them stay filtered inline), and the data is untouched. */
#include "check.h"
#include "internal.h"

int main(void)
{
    CHECK(!fs_budget_pressure());
    size_t len = 4u << 20;
    char *a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(a != MAP_FAILED);
    memset(a, 7, len);
    FORESIGHT_SITE(site, "a[0:4M]");
    foresight_prefetch_at(&site, a, len);
    CHECK(foresight__marked(foresight__directory(), a, 4096));
    foresight_release_at(&site, a, len);
    CHECK_EQ(__atomic_load_n(&fs_global_releases_idle, __ATOMIC_RELAXED), 1);
    CHECK(foresight__marked(foresight__directory(), a, 4096));
    CHECK(foresight__marked(foresight__directory(), a + len - 4096, 4096));
    usleep(50000); /* let the worker finish the prefetch */
    CHECK_EQ(site.fs_stat[FS_PAGES_DEACTIVATED] + site.fs_stat[FS_PAGES_FREED], 0);
    unsigned char vec[1024];
    CHECK(mincore(a, len, vec) == 0);
    size_t resident = 0;
    for (size_t i = 0; i < len / 4096; i++)
        resident += vec[i] & 1;
    CHECK_EQ(resident, len / 4096);
    for (size_t i = 0; i < len; i++)
        if (a[i] != 7)
            CHECK(a[i] == 7);
    return check_done("pressure");
}
