/* FORESIGHT_RELEASE=adaptive pages a site's releases out while they prove right, and
 * only deactivates them once pages they paged out came back soon after (reuse.c).  Run
 * with FORESIGHT_MEM=8M (a window of 8 MiB of prefetching) and FORESIGHT_INLINE=all
 * (each request done before the call returns). */
#include "check.h"
#include "internal.h"

static volatile unsigned long sink;

static bool swap_enabled(void)
{
    FILE *f = fopen("/proc/swaps", "re");
    char line[256];
    int lines = 0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        lines++;
    if (f != NULL)
        fclose(f);
    return lines > 1;
}

static void touch(const unsigned char *p, size_t len)
{
    for (size_t i = 0; i < len; i += 4096)
        sink += p[i];
}

int main(void)
{
    CHECK_EQ(fs_cfg.release, FS_REL_ADAPTIVE);
    CHECK_EQ(fs_cfg.issue_inline, FS_INLINE_ALL);
    CHECK_EQ(fs_budget_limit_bytes(), 8u << 20);
    const size_t mib = 1u << 20, len = 16 * mib;
    char path[4096];
    snprintf(path, sizeof path, "%s/reuse.dat", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    int fd = make_cold_file(path, len);
    CHECK(fd >= 0);
    const unsigned char *file = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    CHECK(file != MAP_FAILED);
    madvise((void *)file, len, MADV_RANDOM); /* residency comes from touches alone */
    /* Memory in use over 3/4 of the limit, so releases are carried out. */
    unsigned char *ballast = malloc(len);
    CHECK(ballast != NULL);
    memset(ballast, 1, len);
    touch(file, 4 * mib);

    /* Sites start trusted: their releases page out (clean file pages are dropped). */
    FORESIGHT_SITE(right, "right[i]");
    FORESIGHT_SITE(early, "early[i]");
    FORESIGHT_SITE(later, "later[i]");
    CHECK(fs_reuse_trusted(&right) && fs_reuse_trusted(&early));
    foresight_release_at(&right, file, mib);
    foresight_release_at(&early, file + mib, mib);
    CHECK(right.fs_stat[FS_PAGES_PAGED_OUT] > 200);
    CHECK(early.fs_stat[FS_PAGES_PAGED_OUT] > 200);
    CHECK(resident_fraction(file + mib, mib) < 0.2);

    /* EARLY's pages are read again at once; RIGHT's are left alone.  The next
     * releases of the same pages find out. */
    touch(file + mib, mib);
    foresight_release_at(&right, file, mib);
    foresight_release_at(&later, file + mib, mib);
    CHECK(early.fs_stat[FS_PAGES_BACK] > 200);
    CHECK_EQ(right.fs_stat[FS_PAGES_BACK], 0);
    CHECK(fs_reuse_trusted(&right));
    CHECK(!fs_reuse_trusted(&early));
    CHECK(fs_reuse_trusted(&later));

    /* From now on EARLY deactivates: its pages stay in memory.  RIGHT still frees. */
    touch(file + mib, mib);
    unsigned long early_freed = early.fs_stat[FS_PAGES_FREED];
    foresight_release_at(&early, file + mib, mib);
    CHECK(early.fs_stat[FS_PAGES_FREED] - early_freed < 16);
    CHECK(early.fs_stat[FS_PAGES_DEACTIVATED] > 200);
    CHECK(resident_fraction(file + mib, mib) > 0.9);
    touch(file + 2 * mib, mib);
    unsigned long right_freed = right.fs_stat[FS_PAGES_FREED];
    foresight_release_at(&right, file + 2 * mib, mib);
    CHECK(right.fs_stat[FS_PAGES_FREED] - right_freed > 200);

    /* Pages touched again only after a memory limit's worth of prefetching (8 MiB)
     * would have been evicted anyway: the pageout was not early. */
    FORESIGHT_SITE(old, "old[i]");
    FORESIGHT_SITE(ahead, "ahead[i]");
    touch(file + 3 * mib, mib);
    foresight_release_at(&old, file + 3 * mib, mib);
    CHECK(old.fs_stat[FS_PAGES_PAGED_OUT] > 200);
    for (size_t at = 4 * mib; at < 12 * mib; at += 2 * mib) {
        foresight_prefetch_at(&ahead, file + at, 2 * mib);
        foresight_release_at(&ahead, file + at, 2 * mib); /* keeps the footprint small */
    }
    CHECK(ahead.fs_stat[FS_PAGES_ISSUED] >= 2048);
    touch(file + 3 * mib, mib);
    foresight_release_at(&later, file + 3 * mib, mib);
    CHECK_EQ(old.fs_stat[FS_PAGES_BACK], 0);
    CHECK(fs_reuse_trusted(&old));

    /* Dirty anonymous pages leave the page table at once, though their frames are
     * freed only when the write to swap completes: they are logged all the same. */
    if (swap_enabled()) {
        FORESIGHT_SITE(dirty, "dirty[i]");
        memset(ballast, 2, mib);
        foresight_release_at(&dirty, ballast, mib);
        CHECK(dirty.fs_stat[FS_PAGES_PAGED_OUT] > 200);
        size_t changed = 0;
        for (size_t i = 0; i < mib; i++)
            changed += ballast[i] != 2;
        CHECK_EQ(changed, 0);
    }

    /* The data are intact whichever way they were released. */
    size_t bad = 0;
    for (size_t i = 0; i < len / 8; i += 509) {
        uint64_t v;
        memcpy(&v, file + i * 8, 8);
        bad += v != i;
    }
    CHECK_EQ(bad, 0);
    munmap((void *)file, len);
    close(fd);
    unlink(path);
    free(ballast);
    return check_done("reuse");
}
