/* Random-access advice (random.c): between foresight_random_begin and _end, the range an
 * indirect site's prefetched targets span in a file mapping is MADV_RANDOM (the kernel's
 * VmFlags show "rr") once a sample of them says read-around would not pay, and grows as
 * targets fall outside it; random targets in a mapping that fits in the prefetch budget
 * are not advised, and their prefetches go on; targets that step through a few
 * sequential frontiers are left to read-around; _end restores the range; anonymous
 * memory is never advised; the data stay intact. */
#include "check.h"
#include "internal.h"

/* 1 when the mapping holding ADDR has the random-read flag, 0 when not, -1 not found. */
static int random_flag(const void *addr)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    int inside = 0, flag = -1;
    uintptr_t a = (uintptr_t)addr;
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        unsigned long start, end;
        if (sscanf(line, "%lx-%lx ", &start, &end) == 2 && strchr(line, '-') < strchr(line, ' '))
            inside = a >= start && a < end;
        else if (inside && strncmp(line, "VmFlags:", 8) == 0)
            flag = strstr(line, " rr") != NULL;
    }
    if (f != NULL)
        fclose(f);
    return flag;
}

static unsigned long readaround_runs(void)
{
    return __atomic_load_n(&fs_global_random_readaround, __ATOMIC_RELAXED);
}

static unsigned long fitting_runs(void)
{
    return __atomic_load_n(&fs_global_random_fits, __ATOMIC_RELAXED);
}

int main(void)
{
    /* FORESIGHT_MEM=64M (CMakeLists.txt): a budget of 12,288 pages, room for the
     * read-around windows of two frontiers on any device (read_ahead_kb up to 24 MiB),
     * not for those of hundreds. */
    CHECK_EQ(fs_budget_pages(), 12288);
    const size_t mib = 1u << 20, len = 192 * mib, pages = len / 4096;
    const char *dir = getenv("TMPDIR");
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s/foresight-random-XXXXXX", dir ? dir : "/tmp");
    int fd = mkstemp(tmpl);
    CHECK(fd >= 0 && ftruncate(fd, (off_t)len) == 0);
    unlink(tmpl);
    unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(m != MAP_FAILED);
    for (size_t i = 0; i < len; i += 4096)
        m[i] = (unsigned char)(i / 4096 * 7);
    msync(m, len, MS_SYNC);
    posix_fadvise(fd, 0, (off_t)len, POSIX_FADV_DONTNEED);
    madvise(m, len, MADV_PAGEOUT);

    /* Random targets in [16, 112) MiB, more than the 64 MiB limit: advised once the
     * sample's frontiers outgrow the budget, over the span of the targets, not the whole
     * file. */
    FORESIGHT_SITE(site, "a[b[i]]");
    struct foresight_site *scope = NULL;
    foresight_prefetch_at(&site, m + 20 * mib, 4); /* before begin: no advice */
    CHECK_EQ(random_flag(m + 20 * mib), 0);
    foresight_random_begin(&site, &scope);
    CHECK(scope == &site);
    unsigned long x = 12345;
    for (int i = 0; i < 8192 && random_flag(m + 64 * mib) != 1; i++) {
        x = x * 6364136223846793005ul + 1442695040888963407ul;
        foresight_prefetch_at(&site, m + 16 * mib + (x >> 33) % (96 * mib), 4);
    }
    CHECK_EQ(random_flag(m + 64 * mib), 1);
    CHECK_EQ(random_flag(m), 0);              /* far below the targets */
    CHECK_EQ(random_flag(m + len - 4096), 0); /* far above them */
    foresight_prefetch_at(&site, m + 150 * mib, 4);
    CHECK_EQ(random_flag(m + 140 * mib), 1); /* the range grows over the span */
    CHECK_EQ(random_flag(m + 150 * mib), 1);
    CHECK_EQ(random_flag(m), 0);
    CHECK_EQ(readaround_runs(), 0);
    CHECK_EQ(fitting_runs(), 0);
    foresight_random_end(&scope);
    CHECK(scope == NULL);
    CHECK_EQ(random_flag(m + 64 * mib), 0);
    CHECK_EQ(random_flag(m + 150 * mib), 0);
    foresight_random_end(&scope); /* a second end is harmless */

    /* Random targets in a mapping of 40 MiB fit in the budget: never advised (every page
     * a fault reads around would be used), and their prefetches are issued.  Enough
     * targets that the sample ends whatever the device's read_ahead_kb. */
    FORESIGHT_SITE(fsite, "e[b[i]]");
    const size_t vlen = 40 * mib;
    unsigned char *v = mmap(NULL, vlen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 16 * mib);
    CHECK(v != MAP_FAILED); /* a second view of the file: no page of it marked yet */
    posix_fadvise(fd, 0, (off_t)len, POSIX_FADV_DONTNEED); /* the first part's reads */
    foresight_random_begin(&fsite, &scope);
    for (int i = 0; i < 4 * 8192; i++) {
        x = x * 6364136223846793005ul + 1442695040888963407ul;
        foresight_prefetch_at(&fsite, v + (x >> 33) % vlen, 4);
    }
    CHECK_EQ(fitting_runs(), 1);
    CHECK_EQ(random_flag(v + 16 * mib), 0);
    unsigned long fc[FS_NSTAT];
    for (int i = 0; i < 100; i++) { /* until the worker has issued some */
        fs_site_counts(&fsite, fc);
        if (fc[FS_PAGES_ISSUED] > 256)
            break;
        usleep(20000);
    }
    CHECK(fc[FS_PAGES_ISSUED] > 256);
    CHECK_EQ(fc[FS_KERNEL_READAHEAD], 0);
    foresight_random_end(&scope);
    munmap(v, vlen);

    /* Two frontiers stepping a page at a time (a scatter into two buckets): the sample
     * (8,192 targets) finds them, their windows fit, and the range is left to the kernel's
     * read-around, with the site's prefetches there: marked, so the filter drops the
     * calls, but not issued. */
    FORESIGHT_SITE(bsite, "out[pos[key[i]]++]");
    unsigned char *b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(b != MAP_FAILED); /* a second view of the file: no page of it marked yet */
    foresight_random_begin(&bsite, &scope);
    for (size_t p = 0; p < pages / 4; p++) {
        foresight_prefetch_at(&bsite, b + p * 4096, 4);
        foresight_prefetch_at(&bsite, b + len / 2 + p * 4096, 4);
    }
    CHECK_EQ(readaround_runs(), 1);
    CHECK_EQ(random_flag(b + 4 * mib), 0);
    CHECK_EQ(random_flag(b + len / 2 + 4 * mib), 0);
    unsigned long c[FS_NSTAT], issued = 0;
    for (int i = 0; i < 100; i++) { /* until the worker has issued the sample's prefetches */
        usleep(20000);
        fs_site_counts(&bsite, c);
        if (i > 0 && c[FS_PAGES_ISSUED] == issued)
            break;
        issued = c[FS_PAGES_ISSUED];
    }
    CHECK_EQ(c[FS_KERNEL_READAHEAD], 1);
    for (size_t p = pages / 4; p < pages / 4 + 256; p++)
        foresight_prefetch_at(&bsite, b + p * 4096, 4);
    CHECK(foresight__marked(foresight__directory(), b + (pages / 4 + 100) * 4096, 4));
    usleep(100000);
    fs_site_counts(&bsite, c);
    CHECK_EQ(c[FS_PAGES_ISSUED], issued);
    foresight_random_end(&scope);
    munmap(b, len);

    /* Anonymous memory is never advised. */
    unsigned char *anon = mmap(NULL, 8 * mib, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(anon != MAP_FAILED);
    FORESIGHT_SITE(asite, "c[b[i]]");
    foresight_random_begin(&asite, &scope);
    for (size_t i = 0; i < 8192; i++)
        foresight_prefetch_at(&asite, anon + (i * 7919 % 2048) * 4096, 4);
    CHECK_EQ(random_flag(anon + 4 * mib), 0);
    foresight_random_end(&scope);

    /* FORESIGHT_RANDOM=0 turns the advice off. */
    fs_cfg.random_advice = 0;
    FORESIGHT_SITE(osite, "d[b[i]]");
    foresight_random_begin(&osite, &scope);
    for (int i = 0; i < 8192; i++) {
        x = x * 6364136223846793005ul + 1442695040888963407ul;
        foresight_prefetch_at(&osite, m + (x >> 33) % len, 4);
    }
    CHECK_EQ(random_flag(m + 64 * mib), 0);
    foresight_random_end(&scope);

    size_t bad = 0;
    for (size_t i = 0; i < len; i += 4096)
        bad += m[i] != (unsigned char)(i / 4096 * 7);
    CHECK_EQ(bad, 0);
    munmap(m, len);
    munmap(anon, 8 * mib);
    close(fd);
    return check_failures ? 1 : 0;
}
