/* Random-access advice (random.c): between foresight_random_begin and _end, the range an
 * indirect site's prefetched targets span in a file mapping is MADV_RANDOM (the kernel's
 * VmFlags show "rr"), grown as targets fall outside it; _end restores it; anonymous
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

int main(void)
{
    const size_t mib = 1u << 20, len = 32 * mib;
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

    FORESIGHT_SITE(site, "a[b[i]]");
    struct foresight_site *scope = NULL;
    foresight_prefetch_at(&site, m + 20 * mib, 4); /* before begin: no advice */
    CHECK_EQ(random_flag(m + 20 * mib), 0);
    foresight_random_begin(&site, &scope);
    CHECK(scope == &site);
    foresight_prefetch_at(&site, m + 8 * mib, 4);
    CHECK_EQ(random_flag(m + 8 * mib), 1);
    CHECK_EQ(random_flag(m), 0);              /* far below the first target */
    CHECK_EQ(random_flag(m + len - 4096), 0); /* far above it */
    foresight_prefetch_at(&site, m + 16 * mib, 4);
    CHECK_EQ(random_flag(m + 12 * mib), 1); /* the range grows over the span */
    CHECK_EQ(random_flag(m + 16 * mib), 1);
    CHECK_EQ(random_flag(m), 0);
    foresight_random_end(&scope);
    CHECK(scope == NULL);
    CHECK_EQ(random_flag(m + 8 * mib), 0);
    CHECK_EQ(random_flag(m + 16 * mib), 0);
    foresight_random_end(&scope); /* a second end is harmless */

    /* Anonymous memory is never advised. */
    unsigned char *anon = mmap(NULL, 8 * mib, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(anon != MAP_FAILED);
    FORESIGHT_SITE(asite, "c[b[i]]");
    foresight_random_begin(&asite, &scope);
    foresight_prefetch_at(&asite, anon + 4 * mib, 4);
    CHECK_EQ(random_flag(anon + 4 * mib), 0);
    foresight_random_end(&scope);

    /* FORESIGHT_RANDOM=0 turns the advice off. */
    fs_cfg.random_advice = 0;
    foresight_random_begin(&site, &scope);
    foresight_prefetch_at(&site, m + 24 * mib, 4);
    CHECK_EQ(random_flag(m + 24 * mib), 0);
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
