/* test_stream.c — a compiled loop's stream (foresight_stream_step): what it prefetches
 * ahead, how often the loop calls it, what it keeps within a run, short runs, releases. */
#include "internal.h" /* before check.h: its stream helpers need foresight.h */
#include "check.h"

static const uintptr_t KiB = 1024, MiB = 1024 * 1024;

int main(void)
{
    const size_t len = 16 * MiB;
    char path[4096];
    int fd;
    const char *file = map_cold_file("stream.dat", len, path, &fd);
    CHECK(file != NULL);
    const uintptr_t base = (uintptr_t)file;

    /* A dense stream upwards (8-byte stride, 64 KiB blocks), 1 MiB ahead: one step per
     * block, the window [0, 1 MiB] on the first and the block 1 MiB ahead after that. */
    struct foresight_stream up;
    foresight_stream_init(&up, 8, 4096, 64 * KiB, 0, 0, 0);
    CHECK_EQ(up.volume, 8);
    up.ahead = MiB / 8;
    FORESIGHT_SITE(up_site, "up[i]");
    uintptr_t cnt = 0;
    unsigned long steps = stream_walk(&up, &up_site, base, 8, 2 * MiB / 8, &cnt, false);
    CHECK(steps >= 32 && steps <= 34);
    CHECK(wait_fraction(file, 3 * MiB, 1.0, 0, 20));
    CHECK(resident_fraction(file + 3 * MiB + 64 * KiB, 2 * MiB) == 0);

    /* The same range again with a new stream: every granule ahead is marked resident,
     * so the loop counts down over them without a call, passing as many as the run
     * has seen so far at each step (1, 2, 4... of the 32), and the granules passed
     * count as filtered calls. */
    struct foresight_stream again;
    foresight_stream_init(&again, 8, 4096, 64 * KiB, 0, 0, 0);
    again.ahead = MiB / 8;
    FORESIGHT_SITE(again_site, "again[i]");
    cnt = 0;
    steps = stream_walk(&again, &again_site, base, 8, 2 * MiB / 8, &cnt, false);
    CHECK(steps <= 7);
    CHECK(fs_site_filtered_total(&again_site) >= 32);
    CHECK_EQ(again_site.fs_stat[FS_PAGES_REQUESTED], 0);

    /* Downwards from the end, the same window below the reference. */
    struct foresight_stream down;
    foresight_stream_init(&down, (uintptr_t)0 - 8, 4096, 64 * KiB, 0, 0, 0);
    down.ahead = MiB / 8;
    FORESIGHT_SITE(down_site, "down[i]");
    cnt = 0;
    stream_walk(&down, &down_site, base + len - 8, (uintptr_t)0 - 8, MiB / 8, &cnt, false);
    CHECK(wait_fraction(file + len - 2 * MiB, 2 * MiB, 1.0, 0, 20));
    CHECK(resident_fraction(file + len - 4 * MiB, MiB) == 0);

    /* A page stride within one run of 100 iterations, 256 ahead: the window is cut at
     * the run's end, and as no steady-state hint may pass it, the loop runs the rest of
     * the run without another step. */
    const uintptr_t runs_at = base + 6 * MiB;
    struct foresight_stream run;
    foresight_stream_init(&run, 4096, 4096, 64 * KiB, 0, 0, FORESIGHT_STREAM_RUNS);
    CHECK_EQ(run.volume, 4096);
    run.ahead = 256;
    FORESIGHT_SITE(run_site, "run[i][j]");
    cnt = 0;
    steps = stream_walk(&run, &run_site, runs_at, 4096, 100, &cnt, false);
    CHECK_EQ(steps, 1);
    CHECK(wait_fraction((void *)runs_at, 100 * 4096, 1.0, 0, 20));
    CHECK(resident_fraction((void *)(runs_at + 100 * 4096), 256 * 4096) == 0);

    /* Runs of 20 pages one after another, 64 ahead: each run continues the last, but
     * as its hints may not pass its end, each starts with a window over itself. */
    const uintptr_t abut_at = base + 7 * MiB + 512 * KiB;
    struct foresight_stream abut;
    foresight_stream_init(&abut, 4096, 4096, 64 * KiB, 0, 0, FORESIGHT_STREAM_RUNS);
    abut.ahead = 64;
    FORESIGHT_SITE(abut_site, "abut[r][i]");
    for (int r = 0; r < 3; r++) {
        cnt = 0; /* the loop starts again */
        CHECK_EQ(stream_walk(&abut, &abut_site, abut_at + r * 20 * 4096, 4096, 20, &cnt, false), 1);
    }
    CHECK(wait_fraction((void *)abut_at, 60 * 4096, 1.0, 0, 20));
    CHECK(resident_fraction((void *)(abut_at + 60 * 4096), 64 * 4096) == 0);

    /* Short runs: 16 doubles at the start of rows 256 KiB apart.  The first run hints
     * itself, the second too (the jump is new), the third the run two jumps ahead. */
    const uintptr_t rows_at = base + 9 * MiB, row = 256 * KiB;
    struct foresight_stream shorts;
    foresight_stream_init(&shorts, 8, 4096, 64 * KiB, 0, 0, FORESIGHT_STREAM_RUNS);
    shorts.ahead = 64 * KiB;  /* window 576 KiB: two jumps */
    FORESIGHT_SITE(short_site, "a[r][c]");
    for (int r = 0; r < 3; r++) {
        cnt = 0; /* the loop starts again */
        CHECK_EQ(stream_walk(&shorts, &short_site, rows_at + r * row, 8, 16, &cnt, false), 1);
    }
    CHECK(wait_fraction((void *)(rows_at + 4 * row), 4096, 1.0, 0, 20));
    CHECK(wait_fraction((void *)rows_at, 4096, 1.0, 0, 20));
    CHECK(resident_fraction((void *)(rows_at + 3 * row), 64 * KiB) == 0);
    CHECK(resident_fraction((void *)(rows_at + 2 * row), 64 * KiB) == 0);

    /* Releases behind the reference (FORESIGHT_RELEASE=pageout: carried out at once):
     * a loop reading 4 MiB of the file (MADV_PAGEOUT drops only pages it has mapped)
     * leaves what lies more than the window behind it out of memory, and the data read
     * back afterwards are intact. */
    const uintptr_t rel_at = base + 12 * MiB;
    struct foresight_stream rel;
    foresight_stream_init(&rel, 8, 4096, 64 * KiB, 0, 0, FORESIGHT_STREAM_RELEASE);
    rel.ahead = 256 * KiB / 8;
    FORESIGHT_SITE(rel_site, "rel[i]");
    cnt = 0;
    stream_walk(&rel, &rel_site, rel_at, 8, 4 * MiB / 8, &cnt, true);
    CHECK(rel_site.fs_stat[FS_RELEASES] > 0);
    CHECK(wait_fraction((void *)rel_at, 3 * MiB, 0.1, 1, 20));
    for (uintptr_t off = 0; off < 4 * MiB; off += 4096) {
        uint64_t v;
        memcpy(&v, (const void *)(rel_at + off), 8);
        CHECK_EQ(v, (12 * MiB + off) / 8);
    }

    /* Two streams under one countdown (a loop's streams, foresight_streams_step), one
     * twice as fast as the other, and a third left idle (another version of the nest
     * runs): the steps come when either is due, both windows arrive, the idle one's
     * range is never hinted. */
    const uintptr_t two_at = base + 3 * MiB + 512 * KiB;
    struct foresight_stream two[3];
    foresight_stream_init(&two[0], 8, 4096, 64 * KiB, 0, 0, 0);
    foresight_stream_init(&two[1], 16, 4096, 64 * KiB, 0, 0, 0);
    foresight_stream_init(&two[2], 8, 4096, 64 * KiB, 0, 0, FORESIGHT_STREAM_IDLE);
    two[0].ahead = two[1].ahead = two[2].ahead = 32 * KiB / 8;
    FORESIGHT_SITE(two_a, "a[i]");
    FORESIGHT_SITE(two_b, "b[2*i]");
    FORESIGHT_SITE(two_c, "c[i]");
    static struct foresight_site *const two_sites[] = {&two_a, &two_b, &two_c};
    const unsigned long iters = 64 * KiB / 8; /* a: 64 KiB, b: 128 KiB, at 2 MiB above a */
    cnt = 0;
    steps = 0;
    for (unsigned long i = 0; i < iters; i++) {
        if (cnt > 1) {
            cnt--;
            continue;
        }
        const uintptr_t at[6] = {two_at + 8 * i, 0, two_at + MiB + 16 * i, 0,
                                 two_at + 2 * MiB + 8 * i, 0};
        cnt = foresight_streams_step(two, 3, two_sites, cnt, at, 0);
        steps++;
    }
    /* Both are due at 4096 (b's look-ahead enters its third block, a's its second),
     * then nothing before the loop ends: two steps, not one per stream and block. */
    CHECK_EQ(steps, 2);
    CHECK(wait_fraction((void *)two_at, 128 * KiB, 1.0, 0, 20));
    CHECK(wait_fraction((void *)(two_at + MiB), 192 * KiB, 1.0, 0, 20));
    CHECK(resident_fraction((void *)(two_at + 2 * MiB), 256 * KiB) == 0);
    CHECK_EQ(two_c.fs_stat[FS_CONSIDERED] + fs_site_filtered_total(&two_c), 0);

    /* Runs of 5 doubles, each 40 bytes on (a stencil's point by point): after the
     * first, a run whose look-ahead stays in the granule hinted last is counted down
     * without a step (the library's step would reset fs_streak). */
    struct foresight_stream pts[1];
    foresight_stream_init(&pts[0], 8, 4096, 64 * KiB, 0, 0, FORESIGHT_STREAM_RUNS);
    pts[0].ahead = 1024;
    FORESIGHT_SITE(pts_site, "u[i+o]");
    static struct foresight_site *const pts_sites[] = {&pts_site};
    for (int r = 0; r < 3; r++) {
        const uintptr_t at[2] = {base + 40 * (uintptr_t)r, 0};
        pts[0].fs_streak = 99;
        pts_site.fs_quiet = 0; /* not the quiet site's shortcut */
        const uintptr_t left = foresight_streams_step(pts, 1, pts_sites, 0, at, 4);
        CHECK(r == 0 ? left >= 5 : left == 5);
        /* The first run steps in the library (which starts the streak over: 0, or 1 past
         * a skip), the others do not. */
        CHECK(r == 0 ? pts[0].fs_streak <= 1 : pts[0].fs_streak == 99);
    }
    /* The same beside a stream left idle (FT's line buffer filled from a field left to
     * the kernel's readahead): no step either.  Beside one whose run does move its
     * look-ahead on (a stride of a page, not quiet), every run steps. */
    unsigned long counts_q[FS_NSTAT];
    struct foresight_stream duo[2];
    foresight_stream_init(&duo[0], 8, 4096, 64 * KiB, 0, 0, FORESIGHT_STREAM_RUNS);
    foresight_stream_init(&duo[1], 8, 4096, 64 * KiB, 0, 0,
                          FORESIGHT_STREAM_RUNS | FORESIGHT_STREAM_IDLE);
    duo[0].ahead = duo[1].ahead = 1024;
    FORESIGHT_SITE(duo_site, "y[i]");
    FORESIGHT_SITE(idle_site, "x[k][i]");
    static struct foresight_site *const duo_sites[] = {&duo_site, &idle_site};
    for (int moving = 0; moving < 2; moving++) {
        if (moving)
            foresight_stream_init(&duo[1], 4096, 4096, 64 * KiB, 0, 0, FORESIGHT_STREAM_RUNS);
        duo[1].ahead = 2;
        for (int r = 0; r < 3; r++) {
            const uintptr_t at[4] = {base + 40 * (uintptr_t)r, 0,
                                     base + 4 * MiB + 4096 * (uintptr_t)r, 0};
            duo[0].fs_streak = 99;
            duo_site.fs_quiet = idle_site.fs_quiet = 0;
            const uintptr_t left = foresight_streams_step(duo, 2, duo_sites, 0, at, 4);
            CHECK(r == 0 || moving ? left >= 1 : left == 5);
            CHECK(r == 0 || moving ? duo[0].fs_streak <= 1 : duo[0].fs_streak == 99);
        }
    }
    /* A stream whose run would be skipped only because its site is quiet (a stride of
     * a page, its look-ahead past the run's end), beside one that forces the step: the
     * fast path leaves the quiet stretch to the library's step, which skips the
     * stream's restart window with it (taken by the fast path first, the window's 21
     * pages were hinted). */
    struct foresight_stream qd[2];
    foresight_stream_init(&qd[0], 4096, 4096, 64 * KiB, 0, 0, FORESIGHT_STREAM_RUNS);
    qd[0].ahead = 32;
    qd[1] = duo[1];
    FORESIGHT_SITE(qd_site, "z[4096*i]");
    static struct foresight_site *const qd_sites[] = {&qd_site, &idle_site};
    qd_site.fs_quiet = qd_site.fs_quiet_armed = 1;
    {
        const uintptr_t at[4] = {base + 11 * MiB, 0, base + 4 * MiB + 16 * KiB, 0};
        (void)foresight_streams_step(qd, 2, qd_sites, 0, at, 20);
    }
    fs_site_counts(&qd_site, counts_q);
    CHECK_EQ(qd_site.fs_quiet, 0);
    CHECK_EQ(counts_q[FS_CONSIDERED], 1); /* the one quiet skip: no window (22 calls) */

    /* Absurd arguments return promptly: a look-ahead of UINTPTR_MAX iterations (the
     * window is cut at WINDOW_MOST granules), a stride of half the address space. */
    struct foresight_stream wild;
    foresight_stream_init(&wild, 4096, 4096, 64 * KiB, 0, 0, 0);
    wild.ahead = UINTPTR_MAX;
    FORESIGHT_SITE(wild_site, "wild[i]");
    CHECK(foresight_stream_step(&wild, &wild_site, 0, base, 0, 0) >= 1);
    unsigned long counts[FS_NSTAT];
    fs_site_counts(&wild_site, counts);
    CHECK(counts[FS_CONSIDERED] >= 1 && counts[FS_CONSIDERED] <= 4096);
    foresight_stream_init(&wild, UINTPTR_MAX / 2 + 1, 4096, 64 * KiB, 0, 0,
                          FORESIGHT_STREAM_RELEASE | FORESIGHT_STREAM_RUNS);
    wild.ahead = UINTPTR_MAX / 3;
    CHECK(foresight_stream_step(&wild, &wild_site, 0, base, UINTMAX_MAX, base) >= 1);
    CHECK(foresight_stream_step(&wild, &wild_site, 1, base + 8, 5, base) >= 1);

    /* A nest's set-up from its table (foresight_nest_enter): loop 0 has a stream of 8
     * bytes per iteration, an index stream feeding an indirect reference and one
     * indirect reference; loop 1 a stream of 8 KiB per iteration (pages: 4 KiB in
     * flight) and an idle one (another version runs); loop 2 the paper's fixed 7. */
    static const struct foresight_nest_stream ns[] = {
        {0, 0, FORESIGHT_STREAM_RUNS}, {0, 1, 0}, {1, 0, 0}, {1, 0, 0}, {2, 2, 0}};
    static const struct foresight_nest_pipe np[] = {{1, 0}, {0, 0}, {0, 7}};
    static const struct foresight_nest nest = {ns, np, 5, 3, 4096, 64 * KiB};
    const uintptr_t nv[] = {8, 0, 0, 0,    4, 0, 0, FORESIGHT_STREAM_RELEASE,
                            8192, 0, 0, 0, 8, 0, 0, FORESIGHT_STREAM_IDLE,
                            8, 0, 0, 0};
    struct foresight_stream nst[5];
    uintptr_t dist[6];
    CHECK_EQ(foresight_nest_enter(&nest, nst, nv, dist), 1);
    const uintptr_t la = foresight_lookahead_bytes();
    CHECK(la >= 8192);
    CHECK_EQ(dist[0], (la / 2 + 11) / 12);           /* half the bytes over 8 + 4 */
    CHECK_EQ(dist[1], (la / 2 + 4095) / 4096);       /* half over a page */
    CHECK_EQ(dist[2], (la + 4095) / 4096);           /* the idle stream not counted */
    CHECK_EQ(dist[4], 7);
    CHECK_EQ(dist[5], 7);
    CHECK_EQ(nst[0].ahead, dist[0]);
    CHECK_EQ(nst[1].ahead, dist[0] + dist[1]);
    CHECK_EQ(nst[2].ahead, dist[2]);
    CHECK_EQ(nst[4].ahead, 14);
    CHECK_EQ(nst[0].fs_flags & 0xffffu, FORESIGHT_STREAM_RUNS);
    CHECK_EQ(nst[1].fs_flags & 0xffffu, FORESIGHT_STREAM_RELEASE);
    CHECK_EQ(nst[3].fs_flags & 0xffffu, FORESIGHT_STREAM_IDLE);
    CHECK_EQ(nst[3].fs_flags >> 16, 3u | 5u << 8); /* its index in the nest, the nest's size */
    CHECK_EQ(nst[2].fs_granule, 4096);
    CHECK_EQ(nst[0].fs_granule, 64 * KiB);

    munmap((void *)file, len);
    close(fd);
    unlink(path);
    return check_done("stream");
}
