/* Built against foresight.h but linked without libforesight: the weak entry points
 * are absent, every hint is a no-op, no prefetch thread starts, and the program runs and
 * computes normally.  (test_header.cc: the same header as C++.) */
#include <stdio.h>
#include <stdlib.h>

#include "foresight.h"

static int nolib_inits;

static void nolib_init(void)
{
    nolib_inits++;
}

static void nolib_run(void)
{
}

int main(void)
{
    if (foresight_active()) {
        fprintf(stderr, "nolib: runtime reported active without the library\n");
        return 1;
    }
    size_t n = 1u << 20;
    long *a = malloc(n * sizeof *a);
    long sum = 0;
    FORESIGHT_SITE(site, "a[i]");
    for (size_t i = 0; i < n; i++) {
        foresight_prefetch_at(&site, &a[i], sizeof *a);
        a[i] = (long)i;
    }
    foresight_prefetch(a, n * sizeof *a);
    foresight_release(a, n * sizeof *a);
    foresight_prefetch_release(a, 4096, a + 4096, 4096);
    struct foresight_stream st;
    foresight_stream_init(&st, sizeof *a, 4096, 65536, 0, 0, FORESIGHT_STREAM_RELEASE);
    if (foresight_stream_step(&st, &site, 0, (uintptr_t)a, 0, 0) != UINTPTR_MAX) {
        fprintf(stderr, "nolib: a stream did something without the library\n");
        return 1;
    }
    static const struct foresight_nest_stream ns[] = {{0, 0, 0}};
    static const struct foresight_nest_pipe np[] = {{0, 0}};
    static const struct foresight_nest nest = {ns, np, 1, 1, 4096, 65536};
    const uintptr_t nv[] = {8, 0, 0, 0};
    uintptr_t dist[2] = {0, 0};
    if (foresight_nest_enter(&nest, &st, nv, dist) != 0 || dist[0] != 0) {
        fprintf(stderr, "nolib: a nest was set up without the library\n");
        return 1;
    }
    /* No prefetch thread: start returns NULL without running init; ticks do nothing. */
    if (foresight_pt_start(nolib_init, nolib_run) != NULL || nolib_inits != 0) {
        fprintf(stderr, "nolib: a prefetch thread started without the library\n");
        return 1;
    }
    foresight_pt_tick(NULL, 1);
    for (size_t i = 0; i < n; i++)
        sum += a[i];
    free(a);
    if (sum != (long)(n * (n - 1) / 2)) {
        fprintf(stderr, "nolib: wrong sum %ld\n", sum);
        return 1;
    }
    puts("nolib: ok");
    return 0;
}
