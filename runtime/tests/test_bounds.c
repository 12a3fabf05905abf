/* Every entry point is bounded in time and memory whatever its arguments (run with
 * FORESIGHT_MEM=100T, so the memory budget bounds nothing): huge lengths, NULL, the top
 * of the address space, wrapping ranges, all of user space, and a mapping far larger
 * than memory.  Each call returns within seconds (the check allows 30 s, for sanitizer
 * builds on a busy machine; before the bounds, one spun without end), the resident set
 * grows by little, the residency table gets no leaf for memory that is not mapped, and
 * errno is kept. */
#include <errno.h>
#include <pthread.h>

#include "check.h"
#include "internal.h"

#define TOP ((uintptr_t)1 << 47) /* end of the user address space the table covers */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static long resident_kib(void)
{
    char buf[128] = {0};
    int fd = open("/proc/self/statm", O_RDONLY);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0)
        close(fd);
    long size, res;
    return n > 0 && sscanf(buf, "%ld %ld", &size, &res) == 2 ? res * 4 : -1;
}

/* Whether any of [lo, hi) is mapped (under ASan its shadow fills much of low memory). */
static bool any_mapped(uintptr_t lo, uintptr_t hi)
{
    FILE *f = fopen("/proc/self/maps", "r");
    unsigned long start, end;
    bool found = false;
    char line[512];
    while (f != NULL && !found && fgets(line, sizeof line, f) != NULL)
        found = sscanf(line, "%lx-%lx", &start, &end) == 2 && start < hi && end > lo;
    if (f != NULL)
        fclose(f);
    return found;
}

/* Fails the test (rather than hanging ctest) when a call does not return. */
static void *watchdog(void *arg)
{
    (void)arg;
    sleep(100);
    fprintf(stderr, "bounds: a call did not return within 100 s\n");
    _exit(1);
}

static struct foresight_site site = {.file = __FILE__, .line = __LINE__, .ref = "absurd"};
static const char *what;
static double started;
static long rss_before;

static void begin(const char *name)
{
    what = name;
    errno = EDOM;
    started = now();
}

/* After each call: quick, errno untouched, no leaf for unmapped memory, little memory. */
static void end(size_t leaves_allowed)
{
    int e = errno;
    double took = now() - started;
    if (took > 30 || e != EDOM || fs_residency_leaves() > leaves_allowed ||
        resident_kib() - rss_before > 64 * 1024) {
        fprintf(stderr, "bounds: %s: %.1f s, errno %d, %zu leaves, %ld KiB more resident\n",
                what, took, e, fs_residency_leaves(), resident_kib() - rss_before);
        check_failures++;
    }
}

int main(void)
{
    CHECK_EQ(fs_budget_limit_bytes(), (uint64_t)100 << 40);
    pthread_t dog;
    pthread_create(&dog, NULL, watchdog, NULL);
    char *mine = mmap(NULL, 1u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(mine, 3, 1u << 20);
    rss_before = resident_kib();
    size_t leaves = fs_residency_leaves();

    /* Unmapped address space, however much of it: nothing marked, no leaf.  A hole of
     * at least 1 TiB: reserved, then unmapped again.  And the low 64 TiB, unmapped but
     * in a sanitizer's build (its shadow memory is mapped there, and is then treated
     * as the program's: at most a prefetch's cap of it is marked). */
    size_t hole_len = (size_t)1 << 44;
    char *hole = MAP_FAILED;
    for (; hole_len >= ((size_t)1 << 40) && hole == MAP_FAILED; hole_len /= 2)
        hole = mmap(NULL, hole_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                    -1, 0);
    hole_len *= 2;
    CHECK(hole != MAP_FAILED);
    munmap(hole, hole_len);
    const size_t huge = (size_t)1 << 46;
    const struct {
        const char *name;
        char *addr;
        size_t len;
    } unmapped[] = {{"a 1+ TiB hole", hole, hole_len}, {"(0x1000, 2^46)", (char *)0x1000, huge}};
    for (size_t i = 0; i < 2; i++) {
        char *a = unmapped[i].addr;
        size_t len = unmapped[i].len;
        bool really = !any_mapped((uintptr_t)a, (uintptr_t)a + len);
        size_t allowed = really ? leaves : leaves + 64;
        begin(unmapped[i].name);
        foresight_prefetch(a, len);
        foresight__prefetch_slow(&site, a, len);
        foresight__filtered_check(&site, a, len);
        end(allowed);
        if (really)
            CHECK_EQ(fs_residency_footprint(), 0);
        begin(unmapped[i].name);
        foresight_release(a, len);
        foresight__release_slow(&site, a, len);
        foresight_prefetch_release(a, len, a, len);
        foresight__prefetch_release_slow(&site, a, len, a, len);
        foresight_prefetch(a + len / 2, 4096);
        foresight_prefetch(a + len - 65536, 65536);
        end(allowed);
        if (really)
            CHECK_EQ(fs_residency_footprint(), 0);
        fs_residency_clear(0, TOP >> FORESIGHT_PAGE_SHIFT);
        leaves = fs_residency_leaves();
    }

    /* NULL, zero, SIZE_MAX, wrapping, and ranges at or past the top of user space. */
    struct {
        uintptr_t addr;
        size_t len;
    } bad[] = {
        {0, 4096},           {0, SIZE_MAX},        {0, huge},
        {0x1000, 0},         {0x1000, SIZE_MAX},   {UINTPTR_MAX - 100, 4096},
        {UINTPTR_MAX, 1},    {TOP - 4096, 4096},   {TOP - 4096, 8192},
        {TOP - 4096, huge},  {TOP, 4096},          {(uintptr_t)1 << 56, huge},
        {0x1000, TOP - 0x1000 - 1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const void *a = (const void *)bad[i].addr;
        char name[96];
        snprintf(name, sizeof name, "range %#lx + %#zx", (unsigned long)bad[i].addr, bad[i].len);
        begin(name);
        foresight_prefetch_at(&site, a, bad[i].len);
        foresight__prefetch_slow(&site, a, bad[i].len);
        foresight__filtered_check(&site, a, bad[i].len);
        foresight_release_at(&site, a, bad[i].len);
        foresight__release_slow(&site, a, bad[i].len);
        foresight_prefetch_release_at(&site, a, bad[i].len, a, bad[i].len);
        foresight__prefetch_release_slow(&site, a, bad[i].len, a, bad[i].len);
        struct foresight_site *scope = NULL;
        foresight_random_begin(&site, &scope);
        foresight__prefetch_slow(&site, a, bad[i].len);
        foresight_random_end(&scope);
        CHECK(foresight_lookahead_bytes() > 0 && foresight_memory_bytes() > 0);
        (void)foresight_site_quiet_take(&site, SIZE_MAX);
        /* All of user space covers this program's own mappings (and a sanitizer's
         * shadow): their marks may create leaves, and are cleared before the next. */
        end(bad[i].len == TOP - 0x1000 - 1 ? leaves + 64 : leaves);
        foresight_release(mine, 0); /* a plain call between them */
        fs_residency_clear(0, TOP >> FORESIGHT_PAGE_SHIFT);
    }
    CHECK(__atomic_load_n(&site.fs_stat[FS_BAD_INPUT], __ATOMIC_RELAXED) > 0);

    /* A mapping far larger than memory (MAP_NORESERVE: address space only): a prefetch
     * of all of it is cut to three quarters of RAM, a release to 256 GiB; both return. */
    size_t big = (size_t)1 << 46;
    char *m = MAP_FAILED;
    for (; big >= ((size_t)1 << 36) && m == MAP_FAILED; big /= 2)
        m = mmap(NULL, big, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    big *= 2;
    CHECK(m != MAP_FAILED);
    if (m != MAP_FAILED) {
        FORESIGHT_SITE(bsite, "m[0:big]");
        begin("prefetch of a huge mapping");
        foresight_prefetch_at(&bsite, m, big);
        end(leaves + 64);
        CHECK(__atomic_load_n(&bsite.fs_stat[FS_PAGES_REQUESTED], __ATOMIC_RELAXED) <=
              fs_budget_call_pages());
        CHECK(fs_residency_footprint() <= fs_budget_call_pages());
        begin("release of a huge mapping");
        foresight_release_at(&bsite, m, big);
        end(leaves + 64);
        begin("prefetch_release of a huge mapping");
        foresight_prefetch_release_at(&bsite, m + big / 2, big / 2, m, big / 2);
        end(leaves + 128);
        munmap(m, big);
    }

    /* Hints still work, and the program's data is intact. */
    FORESIGHT_SITE(ok, "mine");
    foresight_prefetch_at(&ok, mine, 1u << 20);
    CHECK_EQ(__atomic_load_n(&ok.fs_stat[FS_BAD_INPUT], __ATOMIC_RELAXED), 0);
    CHECK(foresight__marked(foresight__directory(), mine, 4096));
    size_t sum = 0;
    for (size_t i = 0; i < (1u << 20); i++)
        sum += (unsigned char)mine[i];
    CHECK_EQ(sum, 3u << 20);
    return check_done("bounds");
}
