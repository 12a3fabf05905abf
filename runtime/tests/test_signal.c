/* Hints in a signal handler: a SIGALRM handler fires every 200 us and runs a hinted loop
 * (prefetch ahead, release behind, as `foresight cc` emits) while the main thread runs
 * the same kind of loop, so the handler keeps interrupting the main thread inside the
 * library.  The program must finish (a handler's hint never waits for a lock its own
 * thread holds), both loops must compute correct sums, the handler's hints must be
 * filtered inline like the main thread's, and errno in the main thread is kept. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>

#include "check.h"
#include "internal.h"

#define WORDS (64 * 1024 / sizeof(long)) /* 64 KiB each: a handler run stays short */
#define BLOCK 4096
#define RUNS 2000

static long *hbuf, *mbuf, expected;
static volatile sig_atomic_t handled, wrong;
static struct foresight_site hsite = {.file = __FILE__, .line = __LINE__, .ref = "handler"};
static struct foresight_site msite = {.file = __FILE__, .line = __LINE__, .ref = "main"};

/* A stream with hints: each page prefetched a page ahead, released two pages behind. */
static long hinted_sum(struct foresight_site *site, const long *a)
{
    long s = 0;
    for (size_t i = 0; i < WORDS; i++) {
        if (i % (BLOCK / sizeof(long)) == 0) {
            foresight_prefetch_at(site, (const char *)(a + i) + BLOCK, BLOCK);
            if (i >= 2 * BLOCK / sizeof(long))
                foresight_release_at(site, (const char *)(a + i) - 2 * BLOCK, BLOCK);
        }
        s += a[i];
    }
    return s;
}

static void on_alarm(int sig)
{
    (void)sig;
    int saved = errno;
    if (hinted_sum(&hsite, hbuf) != expected)
        wrong = 1;
    handled++;
    errno = saved;
}

/* The second phase: the handler asks what memory holds a page (as a compiled loop's
 * stream does on its set-up, outside api.c's entry points) while the main thread keeps
 * dropping the cache and asking again under the same lock. */
static volatile sig_atomic_t lookups;

static void on_alarm_lookup(int sig)
{
    (void)sig;
    int saved = errno;
    (void)fs_mapping_kind((uintptr_t)hbuf >> FORESIGHT_PAGE_SHIFT);
    lookups++;
    errno = saved;
}

static void *watchdog(void *arg)
{
    (void)arg;
    sleep(100);
    fprintf(stderr, "signal: no finish within 100 s (%d handler runs)\n", (int)handled);
    _exit(1);
}

int main(void)
{
    hbuf = mmap(NULL, WORDS * sizeof(long) + BLOCK, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mbuf = mmap(NULL, WORDS * sizeof(long) + BLOCK, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(hbuf != MAP_FAILED && mbuf != MAP_FAILED);
    for (size_t i = 0; i < WORDS; i++) {
        hbuf[i] = mbuf[i] = (long)(i % 1000);
        expected += (long)(i % 1000);
    }

    /* The watchdog takes no SIGALRM: the handler interrupts the main thread. */
    sigset_t alrm, old;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &alrm, &old);
    pthread_t dog;
    pthread_create(&dog, NULL, watchdog, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval every = {{0, 200}, {0, 200}};
    setitimer(ITIMER_REAL, &every, NULL);
    long passes = 0, bad_main = 0, errno_changed = 0;
    while (handled < RUNS) {
        errno = EDOM;
        if (hinted_sum(&msite, mbuf) != expected)
            bad_main++;
        errno_changed += errno != EDOM;
        passes++;
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);

    CHECK(!wrong);
    CHECK_EQ(bad_main, 0);
    CHECK_EQ(errno_changed, 0);
    CHECK(passes > 0);
    /* Filtered in the handler as in the main thread: each run's pages are resident and
     * marked after the first, so nearly every prefetch is filtered inline (a dropped
     * reentrant hint, or a periodic verification, reaches the library). */
    unsigned long h[FS_NSTAT], m[FS_NSTAT];
    fs_site_counts(&hsite, h);
    fs_site_counts(&msite, m);
    printf("signal: %ld main passes, %d handler runs; filtered %lu of %lu in the handler, "
           "%lu of %lu in main; %lu handler hints dropped\n",
           passes, (int)handled, h[FS_FILTERED], h[FS_CONSIDERED], m[FS_FILTERED],
           m[FS_CONSIDERED], h[FS_REFUSED]);
    CHECK(h[FS_CONSIDERED] >= (unsigned long)RUNS * (WORDS * sizeof(long) / BLOCK));
    if (fs_cfg.release == FS_REL_ADAPTIVE) /* releases keep the marks (no pressure) */
        CHECK(h[FS_FILTERED] >= h[FS_CONSIDERED] / 10 * 9);

    /* Phase 2 (the watchdog ends a deadlock): mapping lookups in a handler while the
     * main thread holds the mapping cache's lock. */
    sa.sa_handler = on_alarm_lookup;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval often = {{0, 50}, {0, 50}};
    setitimer(ITIMER_REAL, &often, NULL);
    long asked = 0;
    while (lookups < 20000) {
        fs_mapping_forget();
        (void)fs_mapping_kind((uintptr_t)mbuf >> FORESIGHT_PAGE_SHIFT);
        asked++;
    }
    setitimer(ITIMER_REAL, &off, NULL);
    printf("signal: %d lookups in the handler beside %ld in main\n", (int)lookups, asked);
    CHECK(asked > 0);
    return check_done("signal");
}
