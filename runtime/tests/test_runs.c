/* test_runs.c — short runs continuing one another across entries of a nest (runs.c): a
 * helper called on consecutive 16 KiB segments of eight columns, each call a fresh
 * stream, as ddot(nb, &a[c][r0], ...) in a loop over r0 and the columns. */
#include "internal.h" /* before check.h: its stream helpers need foresight.h */
#include "check.h"

static const uintptr_t KiB = 1024, MiB = 1024 * 1024;

enum { COLS = 8, SEG = 16 * 1024 };

/* One call of the helper on column c's segment r: a fresh stream over 2,048 doubles
 * with its run known, as a nest entry sets it up, walked as the loop would. */
static void helper(struct foresight_site *site, uintptr_t col, int r)
{
    struct foresight_stream st;
    foresight_stream_init(&st, 8, 4096, 64 * KiB, 0, 0, FORESIGHT_STREAM_RUNS);
    st.ahead = 64 * KiB;
    uintptr_t cnt = 0;
    stream_walk(&st, site, col + (uintptr_t)r * SEG, 8, SEG / 8, &cnt, true);
}

int main(void)
{
    const size_t len = 64 * MiB;
    char path[4096];
    int fd;
    const char *file = map_cold_file("runs.dat", len, path, &fd);
    CHECK(file != NULL);
    uintptr_t col[COLS];
    for (int c = 0; c < COLS; c++)
        col[c] = (uintptr_t)file + (uintptr_t)c * 8 * MiB;
    CHECK_EQ(foresight__lookahead(), 4 * MiB);
    FORESIGHT_SITE(site, "x[i]");

    /* Round 0: every run is new (no earlier run ends where it begins): nothing continues;
     * each run hints itself, rounded out to blocks (80 KiB), and the rest of its column
     * stays cold. */
    for (int c = 0; c < COLS; c++)
        helper(&site, col[c], 0);
    CHECK_EQ(__atomic_load_n(&fs_global_runs_continued, __ATOMIC_RELAXED), 0);
    for (int c = 0; c < COLS; c++)
        CHECK(resident_fraction((void *)(col[c] + 128 * KiB), 256 * KiB) == 0);

    /* Round 1, each column's segment twice in a row (a column read again with another):
     * the first call continues round 0's run, the repeat is not a new run.  Between a
     * column's runs the program touches 8 segments (128 KiB), so each column is hinted
     * 4 MiB / 128 KiB = 32 segments (512 KiB) ahead: 4 MiB in flight over the eight. */
    for (int c = 0; c < COLS; c++) {
        helper(&site, col[c], 1);
        helper(&site, col[c], 1);
    }
    CHECK_EQ(__atomic_load_n(&fs_global_runs_continued, __ATOMIC_RELAXED), COLS);
    for (int c = 0; c < COLS; c++) {
        CHECK(wait_fraction((void *)(col[c] + 2 * SEG), 32 * SEG, 1.0, 0, 20));
        CHECK(resident_fraction((void *)(col[c] + 34 * SEG + 64 * KiB), MiB) == 0);
    }

    /* Round 2 continues again: one more segment each, at the far end of the window. */
    const unsigned long before = site.fs_stat[FS_PAGES_REQUESTED];
    for (int c = 0; c < COLS; c++)
        helper(&site, col[c], 2);
    CHECK_EQ(__atomic_load_n(&fs_global_runs_continued, __ATOMIC_RELAXED), 2 * COLS);
    for (int c = 0; c < COLS; c++)
        CHECK(wait_fraction((void *)(col[c] + 34 * SEG), SEG, 1.0, 0, 20));
    CHECK(site.fs_stat[FS_PAGES_REQUESTED] - before <= 2 * COLS * (SEG / 4096));

    /* Another site does not continue this one's runs. */
    FORESIGHT_SITE(other, "y[i]");
    helper(&other, col[0], 3);
    CHECK_EQ(__atomic_load_n(&fs_global_runs_continued, __ATOMIC_RELAXED), 2 * COLS);

    close(fd);
    unlink(path);
    printf("runs ok\n");
    return 0;
}
