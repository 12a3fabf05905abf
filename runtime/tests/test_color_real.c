/* test_color_real.c — FORESIGHT_COLOR=real (color_real.c): private anonymous pages are
 * moved under huge-page frames of their planned colors (checked in pagemap against the
 * plan): untouched ones read zero, ones with data keep it (copied first), and both keep
 * what is written after; a shared file mapping keeps its frames and stays the file's; a
 * call from inside a parallel region moves nothing.  Without root or a huge page
 * everything is kept and counted, and the data checks still hold. */
#include "color_real.h"
#include "internal.h"
#include "check.h"

#include <errno.h>

enum { P = 4096, NC = 32 };

static uint64_t pfn(const void *p)
{
    static int fd = -1;
    if (fd < 0)
        fd = open("/proc/self/pagemap", O_RDONLY);
    uint64_t e = 0;
    if (pread(fd, &e, 8, (off_t)((uintptr_t)p / P * 8)) != 8)
        return UINT64_MAX;
    return (e >> 63) ? (e & ((1ull << 55) - 1)) : UINT64_MAX;
}

int main(void)
{
    const size_t abytes = 16u << 20, bbytes = 1u << 20, cbytes = 256u << 10;
    unsigned char *a = mmap(NULL, abytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                            -1, 0);
    unsigned char *b = mmap(NULL, bbytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                            -1, 0);
    char path[] = "/tmp/foresight-color-real-XXXXXX";
    int fd = mkstemp(path);
    CHECK(a != MAP_FAILED && b != MAP_FAILED && fd >= 0 && ftruncate(fd, (off_t)cbytes) == 0);
    unlink(path);
    unsigned char *c = mmap(NULL, cbytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(c != MAP_FAILED);
    for (size_t i = 0; i < bbytes; i++)
        b[i] = (unsigned char)(i * 7);
    for (size_t i = 0; i < cbytes; i++)
        c[i] = (unsigned char)(i * 13);

    foresight_color_array(a, abytes);
    foresight_color_array(b, bbytes);
    foresight_color_array(c, cbytes);
    foresight_color_partition(a, P, 0, (long)(abytes / P), FORESIGHT_COLOR_BLOCKED, 0, 4, 1);
    foresight_color_partition(b, P, 0, (long)(bbytes / P), FORESIGHT_COLOR_BLOCKED, 0, 4, 1);
    foresight_color_partition(c, P, 0, (long)(cbytes / P), FORESIGHT_COLOR_BLOCKED, 0, 4, 1);
    foresight_color_apply();

    const struct fs_color_real_counts *n = &fs_color_real;
    uint64_t pa = abytes / P, pb = bbytes / P, pc = cbytes / P;
    CHECK_EQ(n->requested, pa + pb + pc);
    bool root = geteuid() == 0;
    if (root) {
        CHECK_EQ(n->not_anonymous, pc);
        CHECK_EQ(n->moved + n->no_thp + n->map_count + n->failed, pa + pb);
    } else {
        CHECK_EQ(n->not_root, pa + pb + pc);
    }
    if (root && n->no_thp == 0) {
        CHECK_EQ(n->moved, pa + pb);
        CHECK_EQ(n->copied, pb);
        CHECK_EQ(n->placed, pa + pb);
        CHECK_EQ(n->at_color, pa + pb);
        CHECK_EQ(n->gone, 0);
        /* against the plan itself, page by page */
        struct fs_color_array arr[] = {{(uintptr_t)a, abytes}, {(uintptr_t)b, bbytes},
                                       {(uintptr_t)c, cbytes}};
        struct fs_color_ref refs[3];
        for (int i = 0; i < 3; i++)
            refs[i] = (struct fs_color_ref){.base = arr[i].base, .unit = P,
                                            .count = (int64_t)(arr[i].bytes / P),
                                            .schedule = FS_COLOR_BLOCKED, .nthreads = 4,
                                            .loop = 1};
        struct fs_color_input in = {arr, 3, refs, 3, NULL, 0};
        struct fs_color_geometry geo = {P, NC};
        struct fs_color_run *runs;
        size_t nruns;
        CHECK_EQ(fs_color_plan(&in, &geo, &runs, &nruns, NULL), 0);
        uint64_t right = 0;
        for (size_t r = 0; r < nruns; r++)
            for (uint64_t k = 0; k < runs[r].npages; k++) {
                uintptr_t va = (uintptr_t)((runs[r].vpage + k) * P);
                if ((va >= (uintptr_t)a && va < (uintptr_t)a + abytes) ||
                    (va >= (uintptr_t)b && va < (uintptr_t)b + bbytes))
                    right += pfn((void *)va) % NC == (runs[r].color + k) % NC;
            }
        free(runs);
        CHECK_EQ(right, pa + pb);
    } else {
        printf("color_real: no pages moved (%s)\n", root ? "no huge page" : "not root");
    }
    /* data: a reads zero and keeps what is written; b and c kept theirs; c still the file's */
    size_t nonzero = 0;
    for (size_t i = 0; i < abytes; i++)
        nonzero += a[i] != 0;
    CHECK_EQ(nonzero, 0);
    for (size_t i = 0; i < abytes; i += 97)
        a[i] = (unsigned char)(i * 3 + 1);
    size_t bad = 0;
    for (size_t i = 0; i < abytes; i += 97)
        bad += a[i] != (unsigned char)(i * 3 + 1);
    for (size_t i = 0; i < bbytes; i++)
        bad += b[i] != (unsigned char)(i * 7);
    for (size_t i = 0; i < cbytes; i++)
        bad += c[i] != (unsigned char)(i * 13);
    c[5] = 0xab;
    unsigned char byte = 0;
    CHECK(pread(fd, &byte, 1, 5) == 1 && byte == 0xab);
    CHECK_EQ(bad, 0);
    /* a second apply with nothing new moves nothing and recounts nothing */
    uint64_t moved = n->moved;
    foresight_color_apply();
    CHECK_EQ(n->moved, moved);
    /* inside a parallel region (a team may be storing into its arrays) nothing moves */
    unsigned char *d = mmap(NULL, bbytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                            -1, 0);
    CHECK(d != MAP_FAILED);
    foresight_color_array(d, bbytes);
    foresight_color_partition(d, P, 0, (long)(bbytes / P), FORESIGHT_COLOR_BLOCKED, 0, 4, 2);
    foresight__color_apply(1);
    CHECK_EQ(n->in_parallel, n->requested);
    CHECK_EQ(n->moved, 0);
    if (check_failures)
        return 1;
    puts("color_real: ok");
    return 0;
}
