/* test_sweep.c — FORESIGHT_STREAM_SWEEP (run with FORESIGHT_MEM=8M): a stream whose
 * reuse volume the compiler could not evaluate releases behind it only once one sweep
 * (moving one way; abutting runs continue it, a jump back starts a new one) has passed
 * the memory limit.  Sweeps under the limit, repeated, release nothing; a longer one
 * releases from then on, also when it is made of short abutting runs (CSR rows), and
 * streams stepped together release once their sweeps' sum passes it; the data stay
 * intact. */
#include <sys/mman.h>

#include "internal.h" /* before check.h: its stream helpers need foresight.h */
#include "check.h"

static const uintptr_t MiB = 1024 * 1024;

/* Rows of ROW bytes, each a run of the loop (cnt 0 at its start), abutting, from BASE
 * over BYTES. */
static void rows(struct foresight_stream *st, struct foresight_site *site, uintptr_t base,
                 uintptr_t bytes, uintptr_t row)
{
    for (uintptr_t r = 0; r < bytes; r += row) {
        uintptr_t cnt = 0;
        stream_walk(st, site, base + r, 8, row / 8, &cnt, false);
    }
}

int main(void)
{
    CHECK_EQ(foresight_memory_bytes(), 8 * MiB);
    const size_t len = 24 * MiB;
    uint64_t *data = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(data != MAP_FAILED);
    for (size_t i = 0; i < len / 8; i++)
        data[i] = i * 7 + 1;
    const uintptr_t base = (uintptr_t)data;
    const unsigned flags = FORESIGHT_STREAM_RUNS | FORESIGHT_STREAM_SWEEP;

    /* Three sweeps of 6 MiB, each jumping back to the start: no release. */
    struct foresight_stream small;
    foresight_stream_init(&small, 8, 4096, 64 * 1024, 0, 0, flags);
    small.ahead = 256 * 1024 / 8;
    FORESIGHT_SITE(small_site, "small[k]");
    for (int s = 0; s < 3; s++) {
        uintptr_t cnt = 0;
        stream_walk(&small, &small_site, base, 8, 6 * MiB / 8, &cnt, false);
    }
    CHECK_EQ(small_site.fs_stat[FS_RELEASES], 0);
    CHECK(!(small.fs_flags & FORESIGHT_STREAM_RELEASE));

    /* One sweep of 24 MiB: released behind once past 8 MiB. */
    struct foresight_stream big;
    foresight_stream_init(&big, 8, 4096, 64 * 1024, 0, 0, flags);
    big.ahead = 256 * 1024 / 8;
    FORESIGHT_SITE(big_site, "big[k]");
    uintptr_t cnt = 0;
    stream_walk(&big, &big_site, base, 8, 7 * MiB / 8, &cnt, false);
    CHECK_EQ(big_site.fs_stat[FS_RELEASES], 0);
    stream_walk(&big, &big_site, base + 7 * MiB, 8, 17 * MiB / 8, &cnt, false);
    CHECK(big.fs_flags & FORESIGHT_STREAM_RELEASE);
    CHECK(big_site.fs_stat[FS_RELEASES] > 0);
    /* Requested pages: what lies behind the sweep after the limit, not before it. */
    CHECK(big_site.fs_stat[FS_PAGES_RELEASE_REQ] > 8 * MiB / 4096);
    CHECK(big_site.fs_stat[FS_PAGES_RELEASE_REQ] < 16 * MiB / 4096);

    /* The same 24 MiB as rows of 160 bytes, each its own run: abutting, one sweep. */
    struct foresight_stream csr;
    foresight_stream_init(&csr, 8, 4096, 64 * 1024, 0, 0, flags);
    csr.ahead = 256 * 1024 / 8;
    FORESIGHT_SITE(csr_site, "a[k]");
    rows(&csr, &csr_site, base, 4 * MiB, 160);
    CHECK_EQ(csr_site.fs_stat[FS_RELEASES], 0);
    rows(&csr, &csr_site, base + 4 * MiB, 20 * MiB - 160, 160);
    CHECK(csr.fs_flags & FORESIGHT_STREAM_RELEASE);
    CHECK(csr_site.fs_stat[FS_RELEASES] > 0);

    /* Two streams stepped together (foresight_streams_step), 5 MiB each per sweep: their
     * sum passes 8 MiB, so both release, though neither alone would. */
    struct foresight_stream two[2];
    foresight_stream_init(&two[0], 8, 4096, 64 * 1024, 0, 0, FORESIGHT_STREAM_SWEEP);
    foresight_stream_init(&two[1], 8, 4096, 64 * 1024, 0, 0, FORESIGHT_STREAM_SWEEP);
    two[0].ahead = two[1].ahead = 256 * 1024 / 8;
    FORESIGHT_SITE(two_a, "a[k]");
    FORESIGHT_SITE(two_b, "col[k]");
    static struct foresight_site *const two_sites[] = {&two_a, &two_b};
    for (int sweep = 0; sweep < 2; sweep++) {
        uintptr_t c = 0;
        for (uintptr_t i = 0; i < 5 * MiB / 8; i++) {
            if (c > 1) {
                c--;
                continue;
            }
            const uintptr_t at[4] = {base + 8 * i, base + 8 * i, base + 12 * MiB + 8 * i,
                                     base + 12 * MiB + 8 * i};
            c = foresight_streams_step(two, 2, two_sites, c, at, 0);
        }
    }
    CHECK(two[0].fs_flags & FORESIGHT_STREAM_RELEASE);
    CHECK(two[1].fs_flags & FORESIGHT_STREAM_RELEASE);
    CHECK(two_a.fs_stat[FS_RELEASES] > 0 && two_b.fs_stat[FS_RELEASES] > 0);

    /* Rows far apart (a jump forward past the window each time) never add up. */
    struct foresight_stream apart;
    foresight_stream_init(&apart, 8, 4096, 64 * 1024, 0, 0, flags);
    apart.ahead = 16;
    FORESIGHT_SITE(apart_site, "apart[k]");
    for (uintptr_t r = 0; r + 4096 <= len; r += 2 * MiB / 8) {
        uintptr_t c = 0;
        stream_walk(&apart, &apart_site, base + r, 8, 4096 / 8, &c, false);
    }
    CHECK(!(apart.fs_flags & FORESIGHT_STREAM_RELEASE));

    usleep(100000);
    size_t bad = 0;
    for (size_t i = 0; i < len / 8; i++)
        bad += data[i] != i * 7 + 1;
    CHECK_EQ(bad, 0);
    munmap(data, len);
    return check_done("sweep");
}
