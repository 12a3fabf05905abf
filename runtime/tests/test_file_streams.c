/* test_file_streams.c — a dense stream upwards over file-backed memory is left to the
 * kernel's readahead (FORESIGHT_FILE_STREAMS=kernel, the default): no hint, counted once
 * per set-up; so is a row reached through a row pointer that spans 4 MiB or more; a
 * stride of a page or more over the same file, a dense stream downwards, a dense stream
 * over anonymous memory and short rows through row pointers keep their hints.  Releases
 * of the page cache's pages are left to the kernel's reclaim too (the pages stay, counted
 * once per release); those of a private writable file mapping (its pages may be
 * copies) are not.  A stream of a nest whose pages the sweep of a sibling left to the
 * kernel passes through (rows of each plane across the planes, beside a column walk over
 * the whole plane) is left to the kernel after its first step, and from the first step
 * on the nest's next entry; over anonymous memory it keeps its hints. */
#include <sys/mman.h>

#include "internal.h" /* before check.h: its stream helpers need foresight.h */
#include "check.h"

static const uintptr_t MiB = 1024 * 1024;

/* Steps of ST over N iterations from BASE by STEP bytes (check.h's stream_walk). */
static unsigned long walk(struct foresight_stream *st, struct foresight_site *site,
                          uintptr_t base, uintptr_t step, unsigned long n)
{
    uintptr_t cnt = 0;
    return stream_walk(st, site, base, step, n, &cnt, false);
}

/*
 * A boundary exchange's nest over PLANES planes of 64 rows of 2 KiB from BASE: loop 0
 * (over the planes) steps stream 1, row 0 of each plane, released behind; within each
 * plane, loop 1 (over the rows) steps stream 0, the walk down the plane's rows.  Returns
 * the nest's entry.
 */
static int exchange(uintptr_t base, unsigned planes, struct foresight_site *rows,
                    struct foresight_site *walk_site)
{
    enum { ROW = 2048, PLANE = 64 * ROW };
    static const struct foresight_nest_stream ns[] = {
        {1, 0, FORESIGHT_STREAM_RUNS},
        {0, 0, FORESIGHT_STREAM_REGION | FORESIGHT_STREAM_RUNS | FORESIGHT_STREAM_RELEASE}};
    static const struct foresight_nest_pipe np[] = {{0, 0}, {0, 0}};
    static const struct foresight_nest nest = {ns, np, 2, 2, 4096, 64 * 1024};
    const uintptr_t nv[] = {ROW, 0, 0, 0, PLANE, ROW, 0, 0};
    struct foresight_stream st[2];
    uintptr_t dist[4];
    if (foresight_nest_enter(&nest, st, nv, dist) != 1)
        return 0;
    struct foresight_site *const k_sites[] = {rows}, *const j_sites[] = {walk_site};
    uintptr_t kc = 0;
    for (unsigned k = 0; k < planes; k++) {
        const uintptr_t plane = base + (uintptr_t)k * PLANE;
        if (kc > 1)
            kc--;
        else
            kc = foresight_streams_step(st + 1, 1, k_sites, k == 0 ? 0 : 1,
                                        (const uintptr_t[]){plane, plane}, planes - 1 - k);
        uintptr_t jc = 0;
        for (unsigned j = 0; j < 64; j++) {
            const uintptr_t at = plane + (uintptr_t)j * ROW;
            if (jc > 1)
                jc--;
            else
                jc = foresight_streams_step(st, 1, j_sites, j == 0 ? 0 : 1,
                                            (const uintptr_t[]){at, at}, 63 - j);
        }
    }
    return 1;
}

int main(void)
{
    const size_t len = 8 * MiB;
    char path[4096];
    int fd;
    const char *file = map_cold_file("file_streams.dat", len, path, &fd);
    CHECK(file != NULL);
    const uintptr_t base = (uintptr_t)file;

    /* Dense upwards over the file: one step, no pages read, counted. */
    struct foresight_stream dense;
    foresight_stream_init(&dense, 8, 4096, 64 * 1024, 0, 0, FORESIGHT_STREAM_RUNS);
    dense.ahead = 8192;
    FORESIGHT_SITE(dense_site, "dense[i]");
    CHECK_EQ(walk(&dense, &dense_site, base, 8, 100000), 1);
    unsigned long c[FS_NSTAT];
    fs_site_counts(&dense_site, c);
    CHECK_EQ(c[FS_KERNEL_READAHEAD], 1);
    CHECK_EQ(c[FS_ISSUED] + c[FS_PAGES_REQUESTED], 0);
    CHECK(resident_fraction((void *)(base + 2 * MiB), MiB) == 0);

    /* A page per iteration over the same file: hinted, the pages arrive. */
    struct foresight_stream paged;
    foresight_stream_init(&paged, 4096, 4096, 64 * 1024, 0, 0, FORESIGHT_STREAM_RUNS);
    paged.ahead = 64;
    FORESIGHT_SITE(paged_site, "paged[i]");
    walk(&paged, &paged_site, base + 4 * MiB, 4096, 32);
    fs_site_counts(&paged_site, c);
    CHECK_EQ(c[FS_KERNEL_READAHEAD], 0);
    CHECK(wait_fraction((void *)(base + 4 * MiB), 32 * 4096, 1.0, 0, 20));

    /* Dense downwards over the file: hinted. */
    struct foresight_stream down;
    foresight_stream_init(&down, (uintptr_t)0 - 8, 4096, 64 * 1024, 0, 0, FORESIGHT_STREAM_RUNS);
    down.ahead = 8192;
    FORESIGHT_SITE(down_site, "down[i]");
    walk(&down, &down_site, base + 7 * MiB, (uintptr_t)0 - 8, 1000);
    fs_site_counts(&down_site, c);
    CHECK_EQ(c[FS_KERNEL_READAHEAD], 0);
    CHECK(c[FS_CONSIDERED] + c[FS_FILTERED] > 0);

    /* Rows through row pointers: a 64 KiB row keeps its hints (readahead would read past
     * its end into another row), a 4 MiB one is left to the kernel. */
    struct foresight_stream row;
    foresight_stream_init(&row, 8, 4096, 64 * 1024, 0, 0,
                          FORESIGHT_STREAM_RUNS | FORESIGHT_STREAM_ROWS);
    row.ahead = 8192;
    FORESIGHT_SITE(row_site, "row[i]");
    walk(&row, &row_site, base + 5 * MiB, 8, 64 * 1024 / 8);
    fs_site_counts(&row_site, c);
    CHECK_EQ(c[FS_KERNEL_READAHEAD], 0);
    CHECK(c[FS_CONSIDERED] + c[FS_FILTERED] > 0);
    struct foresight_stream long_row;
    foresight_stream_init(&long_row, 8, 4096, 64 * 1024, 0, 0,
                          FORESIGHT_STREAM_RUNS | FORESIGHT_STREAM_ROWS);
    long_row.ahead = 8192;
    FORESIGHT_SITE(long_site, "long_row[i]");
    CHECK_EQ(walk(&long_row, &long_site, base, 8, 4 * MiB / 8), 1);
    fs_site_counts(&long_site, c);
    CHECK_EQ(c[FS_KERNEL_READAHEAD], 1);
    CHECK_EQ(c[FS_ISSUED] + c[FS_PAGES_REQUESTED], 0);
    /* Rows are separate objects, looked at one by one: the same stream's next row, a
     * short one, keeps its hints. */
    walk(&long_row, &long_site, base + 6 * MiB, 8, 64 * 1024 / 8);
    fs_site_counts(&long_site, c);
    CHECK_EQ(c[FS_KERNEL_READAHEAD], 1);
    CHECK(c[FS_CONSIDERED] + c[FS_FILTERED] > 0);

    /* Dense upwards over anonymous memory: kept (swap-in has no such readahead). */
    char *anon = mmap(NULL, MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(anon != MAP_FAILED);
    struct foresight_stream mem;
    foresight_stream_init(&mem, 8, 4096, 64 * 1024, 0, 0, FORESIGHT_STREAM_RUNS);
    mem.ahead = 8192;
    FORESIGHT_SITE(mem_site, "mem[i]");
    walk(&mem, &mem_site, (uintptr_t)anon, 8, 100000);
    fs_site_counts(&mem_site, c);
    CHECK_EQ(c[FS_KERNEL_READAHEAD], 0);
    CHECK(c[FS_CONSIDERED] + c[FS_FILTERED] > 0);

    /* Rows across the planes beside the walk down each plane: after its first step the
     * rows' stream is left to the kernel (counted once), on the next entry from its
     * first step; the walk is left to it at once. */
    FORESIGHT_SITE(rows_site, "u[k][0][i] (across k)");
    FORESIGHT_SITE(walk_site, "u[k][j][1] (across j)");
    CHECK_EQ(exchange(base, 16, &rows_site, &walk_site), 1);
    fs_site_counts(&rows_site, c);
    CHECK_EQ(c[FS_KERNEL_READAHEAD], 1);
    const unsigned long first_step = c[FS_CONSIDERED] + c[FS_FILTERED];
    CHECK(first_step > 0);
    fs_site_counts(&walk_site, c);
    CHECK_EQ(c[FS_KERNEL_READAHEAD], 1); /* once per set-up */
    CHECK_EQ(c[FS_CONSIDERED] + c[FS_FILTERED], 0);
    CHECK_EQ(exchange(base, 16, &rows_site, &walk_site), 1);
    fs_site_counts(&rows_site, c);
    CHECK_EQ(c[FS_KERNEL_READAHEAD], 2);
    CHECK_EQ(c[FS_CONSIDERED] + c[FS_FILTERED], first_step);
    /* The same nest over anonymous memory: the rows keep their hints all along. */
    char *planes = mmap(NULL, 2 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                        -1, 0);
    CHECK(planes != MAP_FAILED);
    FORESIGHT_SITE(anon_rows, "v[k][0][i] (across k)");
    FORESIGHT_SITE(anon_walk, "v[k][j][1] (across j)");
    CHECK_EQ(exchange((uintptr_t)planes, 16, &anon_rows, &anon_walk), 1);
    fs_site_counts(&anon_rows, c);
    CHECK_EQ(c[FS_KERNEL_READAHEAD], 0);
    CHECK(c[FS_CONSIDERED] + c[FS_FILTERED] > 0);
    munmap(planes, 2 * MiB);

    /* A release over the shared mapping: nothing issued, the pages stay, counted. */
    volatile unsigned char sink = 0;
    for (size_t i = 0; i < MiB; i += 4096)
        sink += (unsigned char)file[i];
    (void)sink;
    CHECK(resident_fraction(file, MiB) == 1);
    FORESIGHT_SITE(rel_site, "released[i]");
    const unsigned long before = fs_global_releases_page_cache;
    foresight_release_at(&rel_site, file, MiB);
    CHECK_EQ(fs_global_releases_page_cache, before + 1);
    usleep(100000);
    fs_site_counts(&rel_site, c);
    CHECK_EQ(c[FS_RELEASES], 1);
    CHECK_EQ(c[FS_PAGES_RELEASE_REQ], MiB / 4096);
    CHECK_EQ(c[FS_PAGES_DEACTIVATED] + c[FS_PAGES_FREED], 0);
    CHECK(resident_fraction(file, MiB) == 1);
    /* A private writable mapping of the same file is not the page cache's. */
    char *priv = mmap(NULL, MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    CHECK(priv != MAP_FAILED);
    memset(priv, 7, MiB);
    foresight_release_at(&rel_site, priv, MiB);
    CHECK_EQ(fs_global_releases_page_cache, before + 1);
    munmap(priv, MiB);

    munmap(anon, MiB);
    munmap((void *)file, len);
    close(fd);
    unlink(path);
    return check_done("file_streams");
}
