/* Bad input never crashes and never reaches the kernel: NULL, zero length, wrapping
 * ranges, addresses beyond user space, unmapped memory and ranges unmapped after
 * they were marked are counted as bad input and ignored.  Run with
 * FORESIGHT_VERIFY_PERIOD=1 so every filtered call is re-checked. */
#include <stdint.h>

#include "check.h"
#include "internal.h"

int main(void)
{
    CHECK_EQ(fs_cfg.verify_period, 1);
    FORESIGHT_SITE(site, "bad");
    foresight_prefetch_at(&site, NULL, 4096);
    foresight_prefetch_at(&site, &site, 0);
    foresight_prefetch_at(&site, (void *)(UINTPTR_MAX - 100), 4096);     /* wraps */
    foresight_prefetch_at(&site, (void *)((uintptr_t)1 << 50), 4096);    /* beyond user VA */
    foresight_release_at(&site, NULL, 4096);
    foresight_release_at(&site, (void *)(UINTPTR_MAX - 100), 4096);
    foresight_prefetch_release_at(&site, NULL, 1, NULL, 1);
    CHECK_EQ(site.fs_stat[FS_BAD_INPUT], 8);
    CHECK_EQ(site.fs_stat[FS_ISSUED], 0);

    /* An unmapped range (a hole between two mappings, made after the workers started
     * so their stacks cannot land in it): the worker finds nothing mapped. */
    size_t len = 1u << 20;
    char *w = mmap(NULL, 3 * len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(w != MAP_FAILED);
    w[0] = 1;
    foresight_prefetch(w, 4096); /* starts the workers */
    char *p = w + len;
    munmap(p, len);
    FORESIGHT_SITE(gone, "gone");
    foresight_prefetch_at(&gone, p, len);
    foresight_release_at(&gone, p, len);
    usleep(200000);
    CHECK_EQ(gone.fs_stat[FS_PAGES_ISSUED], 0);

    /* Marked, then unmapped behind the runtime's back: the verification of the next
     * filtered call finds it unmapped, clears the bits and counts bad input. */
    char *q = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(q, 1, len);
    FORESIGHT_SITE(reuse, "reuse");
    foresight_prefetch_at(&reuse, q, 4096);
    CHECK(foresight__marked(foresight__directory(), q, 4096));
    usleep(200000); /* the workers handle that prefetch while q is still mapped */
    munmap(q, len);
    unsigned long before = reuse.fs_stat[FS_BAD_INPUT];
    foresight_prefetch_at(&reuse, q, 4096);
    CHECK_EQ(reuse.fs_stat[FS_BAD_INPUT], before + 1);
    CHECK(!foresight__marked(foresight__directory(), q, 4096));

    /* The kernel's own regions (vsyscall page) and read-only text: no harm done. */
    foresight_prefetch_at(&site, (void *)main, 4096);
    foresight_release_at(&site, (void *)main, 1u << 16);
    usleep(100000);
    CHECK(((int (*)(void))main) != NULL);
    return check_done("badinput");
}
