/* Many threads prefetch and release overlapping ranges of one mapping at once
 * (run under ThreadSanitizer): no race reports, no lost data, and the marks end
 * consistent with the last operation on each range. */
#include <pthread.h>

#include "check.h"
#include "internal.h"

#define THREADS 4
#define LEN (16u << 20)

static unsigned char *buf;
FORESIGHT_SITE(shared_site, "buf[k]");

static void *worker(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    FORESIGHT_SITE(own, "own");
    for (unsigned round = 0; round < 2000; round++) {
        size_t off = ((round * 7919u + id * 104729u) % (LEN / 4096)) * 4096;
        size_t n = ((round % 13) + 1) * 4096;
        if (off + n > LEN)
            n = LEN - off;
        foresight_prefetch_at(&shared_site, buf + off, n);
        foresight_prefetch_at(&own, buf + off, 4096);
        if (round % 3 == 0)
            foresight_release_at(&shared_site, buf + off, n);
        if (round % 5 == 0)
            foresight_prefetch_release_at(&own, buf + off, n, buf + (LEN - off - n), n);
        buf[off + id] = (unsigned char)id; /* the program's own writes continue */
    }
    return NULL;
}

int main(void)
{
    buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(buf != MAP_FAILED);
    for (size_t i = 0; i < LEN; i += 4096)
        buf[i + 100] = 0xAB;
    pthread_t t[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    size_t bad = 0;
    for (size_t i = 0; i < LEN; i += 4096)
        bad += buf[i + 100] != 0xAB;
    CHECK_EQ(bad, 0);
    CHECK(shared_site.fs_stat[FS_CONSIDERED] + fs_site_filtered_total(&shared_site) > 0);

    /* After a release of everything, nothing stays marked. */
    foresight_release_at(&shared_site, buf, LEN);
    CHECK(!foresight__marked(foresight__directory(), buf, 4096));
    return check_done("threads");
}
