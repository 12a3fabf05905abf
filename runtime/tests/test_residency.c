/* The two-level residency table: marking, clearing, counting, revalidation. */
#include "check.h"
#include "internal.h"

int main(void)
{
    CHECK(foresight_active()); /* the constructor initialised the table */
    uint64_t *const *dir = foresight__directory();
    CHECK(dir != NULL);

    /* A range across a word, a leaf (1 GiB) boundary: all marked, counted once.  (In
     * mapped memory: the table grows only for that.) */
    char *two = mmap(NULL, 2u << 30, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                     -1, 0);
    CHECK(two != MAP_FAILED);
    uintptr_t gib = (uintptr_t)1 << 30, boundary = ((uintptr_t)two + (1u << 20) + gib - 1) & ~(gib - 1);
    uintptr_t base = boundary / FS_PAGE - 40;
    CHECK_EQ(fs_residency_mark(base, 100), 100);
    CHECK_EQ(fs_residency_mark(base + 50, 100), 50); /* overlap counted once */
    CHECK_EQ(fs_residency_footprint(), 150);
    for (uintptr_t p = base; p < base + 150; p++)
        CHECK(fs_residency_test(p));
    CHECK(!fs_residency_test(base - 1));
    CHECK(!fs_residency_test(base + 150));

    /* The inline filter: one-word ranges only, every page marked. */
    void *a = (void *)((base + 64 - (base % 64)) * FS_PAGE); /* word-aligned, marked */
    CHECK(foresight__marked(dir, a, 64 * FS_PAGE));
    CHECK(foresight__marked(dir, (char *)a + 100, 10));
    CHECK(!foresight__marked(dir, (char *)a - 1, 2));     /* spans two words */
    CHECK(!foresight__marked(dir, a, 0));                 /* empty */
    CHECK(!foresight__marked(dir, (void *)(uintptr_t)-4096, 8192)); /* wraps */

    CHECK_EQ(fs_residency_clear(base + 10, 20), 20);
    CHECK_EQ(fs_residency_clear(base + 10, 20), 0);
    CHECK(!fs_residency_test(base + 15));
    CHECK_EQ(fs_residency_footprint(), 130);
    CHECK_EQ(fs_residency_peak(), 150);
    fs_residency_clear(base, 200);
    CHECK_EQ(fs_residency_footprint(), 0);

    /* Revalidation: marks of pages mincore finds absent are cleared, resident kept. */
    size_t len = 2 * FS_CHUNK_PAGES * FS_PAGE;
    char *m = mmap(NULL, len + FS_CHUNK_PAGES * FS_PAGE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED);
    char *aligned = (char *)(((uintptr_t)m + FS_CHUNK_PAGES * FS_PAGE - 1) &
                             ~(FS_CHUNK_PAGES * FS_PAGE - 1));
    uintptr_t p0 = (uintptr_t)aligned / FS_PAGE;
    for (size_t i = 0; i < 100; i++) /* touch the first 100 pages only */
        aligned[i * FS_PAGE] = 1;
    fs_residency_mark(p0, 2 * FS_CHUNK_PAGES);
    CHECK_EQ(fs_residency_footprint(), 2 * FS_CHUNK_PAGES);
    CHECK_EQ(fs_residency_reconcile(0), 2 * FS_CHUNK_PAGES - 100);
    CHECK_EQ(fs_residency_footprint(), 100);
    CHECK(fs_residency_test(p0 + 99));
    CHECK(!fs_residency_test(p0 + 100));

    /* mincore vector around a hole: unmapped pages are flagged, resident counted. */
    unsigned char vec[8];
    munmap(aligned + 4 * FS_PAGE, 2 * FS_PAGE);
    CHECK_EQ(fs_resident_vector(p0, 8, vec), 6);
    CHECK(vec[4] & 0x80);
    CHECK(vec[5] & 0x80);
    CHECK(vec[3] == 1);
    CHECK_EQ(fs_resident_vector(p0 + 4, 2, vec), -1);

    /* Several holes and an unmapped tail across a whole chunk: every page classified
     * exactly (pages 4-5 and 40-299 unmapped; 0-99 touched, so resident). */
    static unsigned char big[FS_CHUNK_PAGES];
    munmap(aligned + 40 * FS_PAGE, 260 * FS_PAGE);
    CHECK_EQ(fs_resident_vector(p0, FS_CHUNK_PAGES, big), 38);
    for (size_t i = 0; i < FS_CHUNK_PAGES; i++) {
        bool hole = (i >= 4 && i < 6) || (i >= 40 && i < 300);
        if (hole)
            CHECK(big[i] & 0x80);
        else if (i < 100)
            CHECK(big[i] == 1);
        else
            CHECK(big[i] == 0);
    }

    /* A chunk marked, cleared and marked again is queued for reconciliation once:
     * reconciling to zero revalidates it once and clears the absent marks. */
    uintptr_t q = p0 + FS_CHUNK_PAGES; /* mapped, never touched: absent */
    uintptr_t q2 = q + 4 * FS_CHUNK_PAGES; /* another chunk, alternating with q */
    for (int i = 0; i < 1000; i++) {
        fs_residency_mark(i % 2 ? q : q2, 1);
        fs_residency_clear(i % 2 ? q : q2, 1);
    }
    fs_residency_mark(q, 3);
    CHECK_EQ(fs_residency_queued_chunks(), 3); /* p0's chunk, q's and q2's */
    CHECK_EQ(fs_residency_reconcile(0), 65);     /* 60 + 2 unmapped, 3 absent */
    CHECK_EQ(fs_residency_footprint(), 38);
    CHECK(!fs_residency_test(q));
    CHECK_EQ(fs_residency_queued_chunks(), 1);  /* p0's chunk keeps resident marks */

    /* Under FORESIGHT_MEM=16M (CMakeLists) the ring has 1,024 slots: one page marked in
     * each of 1,100 chunks pushes out the oldest 77 (p0's chunk first), and each leaves
     * with its marks, so every mark left is one reconciliation can reach. */
    const size_t nchunks = 1100;
    char *wide = mmap(NULL, nchunks * FS_CHUNK_PAGES * FS_PAGE, PROT_READ,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    CHECK(wide != MAP_FAILED);
    uintptr_t w0 = ((uintptr_t)wide / FS_PAGE + FS_CHUNK_PAGES - 1) & ~(FS_CHUNK_PAGES - 1);
    size_t whole = ((uintptr_t)wide / FS_PAGE + nchunks * FS_CHUNK_PAGES - w0) / FS_CHUNK_PAGES;
    for (size_t c = 0; c < whole; c++)
        fs_residency_mark(w0 + c * FS_CHUNK_PAGES, 1);
    CHECK_EQ(fs_residency_queued_chunks(), 1024);
    CHECK_EQ(fs_residency_footprint(), 1024);
    CHECK(!fs_residency_test(p0));                                 /* p0's chunk left */
    CHECK(!fs_residency_test(w0 + (whole - 1025) * FS_CHUNK_PAGES)); /* the last to leave */
    CHECK(fs_residency_test(w0 + (whole - 1024) * FS_CHUNK_PAGES));  /* the oldest kept */
    CHECK_EQ(fs_residency_reconcile(0), 1024); /* never touched: every mark goes */
    CHECK_EQ(fs_residency_footprint(), 0);
    CHECK_EQ(fs_residency_queued_chunks(), 0);
    munmap(wide, nchunks * FS_CHUNK_PAGES * FS_PAGE);
    return check_done("residency");
}
