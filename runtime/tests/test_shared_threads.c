/* Several threads hint while one releases, in a program built with ThreadSanitizer that
 * uses the library as installed: a shared library built without instrumentation (under
 * `make test-c`'s TSan build, only this program is instrumented).  Each thread's first
 * hint into a fresh GiB of memory makes the runtime allocate a leaf of its residency
 * table, which the other threads' inline fast path then reads.  TSan cannot see the
 * library's release of the leaf, only the allocation (its mmap interceptor records the
 * kernel's zero-fill as a write): the runtime must tell it (residency.c), or TSan
 * reports a race and fails the program.  Also checks that no data is lost. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "foresight.h"

#define HINTERS 4
#define REGIONS 8                     /* each in a GiB of its own: a fresh leaf each */
#define GIB ((size_t)1 << 30)
#define SPAN ((size_t)4 << 20)        /* bytes used at the start of each region */

static char *base; /* REGIONS GiB of address space, REGIONS * SPAN of it touched */
static volatile int stop;

static void *hinter(void *arg)
{
    size_t id = (size_t)arg;
    FORESIGHT_SITE(site, "region[k]");
    for (int round = 0; round < 50; round++)
        for (size_t r = 0; r < REGIONS; r++) {
            char *region = base + ((r + id) % REGIONS) * GIB;
            for (size_t off = 0; off < SPAN; off += 65536) {
                foresight_prefetch_at(&site, region + off, 65536);
                region[off + 8 + id] = (char)id; /* the program's own writes go on */
            }
        }
    return NULL;
}

static void *releaser(void *arg)
{
    (void)arg;
    FORESIGHT_SITE(site, "region[k-1]");
    while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
        for (size_t r = 0; r < REGIONS; r++)
            foresight_release_at(&site, base + r * GIB + SPAN / 2, SPAN / 2);
    return NULL;
}

int main(void)
{
    if (!foresight_active()) {
        fprintf(stderr, "shared_threads: the runtime is not active\n");
        return 1;
    }
    base = mmap(NULL, REGIONS * GIB, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) {
        perror("shared_threads: mmap");
        return 1;
    }
    for (size_t r = 0; r < REGIONS; r++)
        memset(base + r * GIB, 0x5a, SPAN);
    pthread_t t[HINTERS], rel;
    pthread_create(&rel, NULL, releaser, NULL);
    for (size_t i = 0; i < HINTERS; i++)
        pthread_create(&t[i], NULL, hinter, (void *)i);
    for (size_t i = 0; i < HINTERS; i++)
        pthread_join(t[i], NULL);
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    pthread_join(rel, NULL);

    size_t bad = 0;
    for (size_t r = 0; r < REGIONS; r++)
        for (size_t off = 0; off < SPAN; off += 65536) {
            const char *p = base + r * GIB + off;
            bad += p[0] != 0x5a;
            for (size_t id = 0; id < HINTERS; id++)
                bad += p[8 + id] != (char)id;
        }
    if (bad != 0) {
        fprintf(stderr, "shared_threads: %zu bytes changed\n", bad);
        return 1;
    }
    /* The hints took effect: a page prefetched and never released is marked. */
    if (!foresight__marked(foresight__directory(), base, 4096)) {
        fprintf(stderr, "shared_threads: hinted pages are not marked\n");
        return 1;
    }
    puts("shared_threads: ok");
    return 0;
}
