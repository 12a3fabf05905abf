/*
 * runs.c — short runs that continue one another across entries of a loop nest.
 *
 * A helper called on consecutive segments of arrays (ddot(nb, &a[i][r0], &a[j][r0])
 * in a loop over r0 and the columns i, j) runs its loop once per call over a segment
 * smaller than a block: each entry of its nest sets its streams up afresh, so a stream
 * cannot see that this call's run begins where an earlier call's ended, and several
 * arrays interleave at one site.  Here each thread keeps, per site, the ends of its
 * recent short runs (upwards): a run beginning where one ended continues that stream,
 * and the stream is hinted ahead of it by its share of the look-ahead bytes.
 *
 * The share: the distinct bytes of all short runs this thread noted between this
 * stream's last run and this one (the other streams' runs taking their turns) is what
 * the program touches per run of this stream, so `look-ahead / that` runs ahead keeps
 * about the look-ahead bytes in flight over all streams.  A run that repeats the last
 * one of its stream (a column read again with each other column) hints nothing and is
 * not counted.  The table is small and per thread (no locks); streams beyond its size
 * are forgotten, oldest first, and then simply go unhinted.
 */
#include <signal.h>
#include <sys/mman.h>

#include "internal.h"

#define SETS 64 /* sets of WAYS entries, by the page of a run's end */
#define WAYS 4
#define RUNS_AHEAD_MOST 1024

struct run_end {
    const struct foresight_site *site; /* NULL: a free entry */
    uintptr_t start, end;              /* the stream's last run */
    uintptr_t hinted;                  /* hinted up to here */
    uint64_t noted;                    /* the table's `noted` after that run */
};

/* A thread's table, mapped at its first short run: only a pointer lives in thread-local
 * storage (static TLS is small, and a library using initial-exec TLS must fit in it to
 * be loaded by dlopen), freed when the thread exits. */
struct table {
    struct run_end ends[SETS][WAYS];
    uint64_t noted; /* distinct bytes of the short runs noted so far */
    volatile sig_atomic_t busy; /* a signal handler interrupted this thread in here */
};

static __thread struct table *mine __attribute__((tls_model("initial-exec")));
static pthread_key_t key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

unsigned long fs_global_runs_continued; /* short runs found continuing an earlier one */

/* At the thread's exit; a hinted loop run by a later destructor maps a new table. */
static void unmap_table(void *t)
{
    mine = NULL;
    munmap(t, sizeof(struct table));
}

static void make_key(void)
{
    if (pthread_key_create(&key, unmap_table) != 0)
        key = (pthread_key_t)-1;
}

static struct table *table(void)
{
    if (mine != NULL)
        return mine;
    pthread_once(&key_once, make_key);
    if (key == (pthread_key_t)-1)
        return NULL;
    void *t = mmap(NULL, sizeof(struct table), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (t == MAP_FAILED)
        return NULL;
    if (pthread_setspecific(key, t) != 0) {
        munmap(t, sizeof(struct table));
        return NULL;
    }
    return mine = t;
}

static struct run_end *set_of(struct table *t, const struct foresight_site *site, uintptr_t at)
{
    uint64_t h = (uint64_t)(at >> FORESIGHT_PAGE_SHIFT) ^ ((uint64_t)(uintptr_t)site >> 4);
    h ^= h >> 17;
    return t->ends[(h * 0x9E3779B97F4A7C15u) >> 58 & (SETS - 1)];
}

static struct run_end *find(struct table *t, const struct foresight_site *site, uintptr_t end)
{
    struct run_end *set = set_of(t, site, end);
    for (int w = 0; w < WAYS; w++)
        if (set[w].site == site && set[w].end == end)
            return &set[w];
    return NULL;
}

/* The entry to fill in the set of END: the stream's own (another run of the site that
 * ended there), else a free one, else the one noted longest ago. */
static struct run_end *victim(struct table *t, const struct foresight_site *site, uintptr_t end)
{
    struct run_end *own = find(t, site, end);
    if (own != NULL)
        return own;
    struct run_end *set = set_of(t, site, end), *v = &set[0];
    for (int w = 0; w < WAYS; w++) {
        if (set[w].site == NULL)
            return &set[w];
        if (set[w].noted < v->noted)
            v = &set[w];
    }
    return v;
}

bool fs_run_continues(const struct foresight_site *site, uintptr_t start, uintptr_t len,
                      uintptr_t look, uintptr_t *from, uintptr_t *to)
{
    const uintptr_t end = start + len;
    if (len == 0 || end < start)
        return false;
    struct table *t = table();
    if (t == NULL || t->busy)
        return false; /* no table; or a signal handler's loop interrupted this one */
    t->busy = 1;
    bool hint = false;
    struct run_end *e = find(t, site, end);
    if (e != NULL && e->start == start) {
        t->busy = 0;
        return false; /* the stream's last run again */
    }
    e = find(t, site, start);
    const uint64_t before = t->noted;
    t->noted += len;
    if (e == NULL) {
        struct run_end *v = victim(t, site, end);
        *v = (struct run_end){site, start, end, end, t->noted};
        t->busy = 0;
        return false;
    }
    /* Runs of this stream ahead: the look-ahead over the bytes per run of the stream. */
    const uint64_t round = before - e->noted + len;
    uint64_t n = look / (round != 0 ? round : 1);
    n = n < 1 ? 1 : n > RUNS_AHEAD_MOST ? RUNS_AHEAD_MOST : n;
    uintptr_t reach = (uintptr_t)n * len;
    if (reach > look)
        reach = look > len ? look : len;
    const uintptr_t hi = end + reach < end ? UINTPTR_MAX : end + reach;
    const uintptr_t lo = e->hinted > end ? e->hinted : end;
    const uintptr_t hinted = hi > e->hinted ? hi : e->hinted;
    e->site = NULL; /* moves to the set of its new end */
    struct run_end *v = victim(t, site, end);
    *v = (struct run_end){site, start, end, hinted, t->noted};
    if (lo < hi) {
        *from = lo;
        *to = hi;
        hint = true;
        __atomic_add_fetch(&fs_global_runs_continued, 1, __ATOMIC_RELAXED);
    }
    t->busy = 0;
    return hint;
}
