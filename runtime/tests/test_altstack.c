/* Hints on a signal handler's alternate stack (thread_guard.c).
 *
 * Phase 1: a 256 KiB alternate stack, painted.  A SIGALRM handler runs a hinted loop nest
 * (as `foresight cc` emits it) over a file mapping and over anonymous memory, and
 * prefetches and releases large ranges: the library's deep paths (mapping lookups,
 * requests issued on the handler's own thread under FORESIGHT_INLINE=all).  The deepest
 * byte written below the handler's entry must be within FS_HINT_STACK, the bound the
 * library drops hints by.
 * Phase 2: an alternate stack of the kernel's minimum signal frame plus 1 KiB with a
 * painted guard below it (gcc's own code of this handler fits there): the guard stays
 * intact, the loops compute the right sums, and the hints are counted as dropped. */
#include <errno.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/time.h>

#include "check.h"
#include "internal.h"

#define PAINT 0xA5
#define WORDS (16L << 20) / (long)sizeof(double) /* 16 MiB of each */
#define SPAN 8192                                  /* words one handler run sums */
#define RUNS 300

static double *anon, *mapped;
static volatile sig_atomic_t handled, wrong;
static volatile uintptr_t entry_sp;
static struct foresight_site site_big = {.file = __FILE__, .line = __LINE__, .ref = "big"};

/* A one-stream nest as emitted: enter, step at the start of the run, then the loop. */
static double hinted_sum(const double *a, long off)
{
    static const struct foresight_nest_stream ns[] = {{0, 0, FORESIGHT_STREAM_RUNS |
                                                                 FORESIGHT_STREAM_RELEASE}};
    static const struct foresight_nest_pipe np[] = {{0, 0}};
    static const struct foresight_nest nest = {ns, np, 1, 1, 4096, 65536};
    FORESIGHT_SITE(site, "a[i]");
    static struct foresight_site *const sites[] = {&site};
    struct foresight_stream sp[1];
    uintptr_t dist[2] = {0};
    const uintptr_t nv[] = {sizeof(double) * 16, 0, 0, 0};
    double s = 0;
    long i = off;
    if (foresight_nest_enter(&nest, sp, nv, dist)) {
        const uintptr_t at[] = {(uintptr_t)(a + i), (uintptr_t)(a + i)};
        (void)foresight_streams_step(sp, 1, sites, 0, at, SPAN / 16 - 1);
    }
    for (; i < off + SPAN; i += 16)
        s += a[i];
    return s;
}

static void on_alarm(int sig)
{
    (void)sig;
    char here;
    entry_sp = (uintptr_t)&here;
    const long off = (long)(((unsigned long)handled * 4099UL * 64) % (WORDS - SPAN));
    if (hinted_sum(anon, off) != SPAN / 16 || hinted_sum(mapped, off) != 2.0 * (SPAN / 16))
        wrong = 1;
    /* Large ranges: cut to the mapping, planned, issued (on this thread under
     * FORESIGHT_INLINE=all, as ctest runs it): paged out, then asked back. */
    foresight_prefetch_at(&site_big, mapped + off, 8 << 20);
    foresight_release_at(&site_big, anon + off, 4 << 20);
    foresight_prefetch_at(&site_big, anon + off, 4 << 20);
    handled++;
}

static void run_handler(size_t runs)
{
    struct itimerval every = {{0, 1000}, {0, 1000}}, off = {{0, 0}, {0, 0}};
    handled = 0;
    setitimer(ITIMER_REAL, &every, NULL);
    while ((size_t)handled < runs)
        pause();
    setitimer(ITIMER_REAL, &off, NULL);
}

/* Bytes below TOP that the handler wrote: from the lowest byte no longer painted. */
static size_t depth(const unsigned char *lo, const unsigned char *top)
{
    const unsigned char *p = lo;
    while (p < top && *p == PAINT)
        p++;
    return (size_t)(top - p);
}

int main(void)
{
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/foresight-altstack-XXXXXX", dir ? dir : "/tmp");
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    unlink(path);
    CHECK(ftruncate(fd, WORDS * (long)sizeof(double)) == 0);
    mapped = mmap(NULL, WORDS * sizeof(double), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    anon = mmap(NULL, WORDS * sizeof(double), PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(mapped != MAP_FAILED && anon != MAP_FAILED);
    for (long i = 0; i < WORDS; i++) {
        anon[i] = 1.0;
        mapped[i] = 2.0;
    }
    msync(mapped, WORDS * sizeof(double), MS_SYNC);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART | SA_ONSTACK;
    sigaction(SIGALRM, &sa, NULL);

    /* Phase 1: how deep the hints go. */
    const size_t big = 256 << 10;
    unsigned char *stack1 = malloc(big);
    CHECK(stack1 != NULL);
    memset(stack1, PAINT, big);
    stack_t st = {.ss_sp = stack1, .ss_size = big, .ss_flags = 0};
    CHECK(sigaltstack(&st, NULL) == 0);
    CHECK(fs_alt_lo == (uintptr_t)stack1 && fs_alt_size == big);
    run_handler(RUNS);
    const size_t used = depth(stack1, stack1 + big);
    const size_t below_entry = (size_t)(entry_sp - ((uintptr_t)stack1 + big - used));
    CHECK(!wrong);
    unsigned long c[FS_NSTAT];
    fs_site_counts(&site_big, c);
    printf("altstack: phase 1: %zu bytes of the stack used, %zu below the handler's entry "
           "(FS_HINT_STACK %d); %lu calls considered, %lu dropped\n",
           used, below_entry, FS_HINT_STACK, c[FS_CONSIDERED], c[FS_REFUSED]);
    CHECK(c[FS_CONSIDERED] > 0);
    CHECK_EQ(c[FS_REFUSED], 0);
    CHECK(below_entry <= FS_HINT_STACK);

    /* Phase 2: a stack the handler's own code fits in, with a guard below: the frame
     * the kernel pushed in phase 1 and 1 KiB (measured: AT_MINSIGSTKSZ is the most the
     * kernel may push, 11952 bytes on a CPU with AMX, where the frame took 3.3 KiB). */
    const size_t frame = (size_t)((uintptr_t)stack1 + big - entry_sp);
    const size_t guard = 64 << 10, small = frame + 1024 > 2048 ? frame + 1024 : 2048;
    unsigned char *stack2 = malloc(guard + small);
    CHECK(stack2 != NULL);
    memset(stack2, PAINT, guard + small);
    st.ss_sp = stack2 + guard;
    st.ss_size = small;
    CHECK(sigaltstack(&st, NULL) == 0);
    const unsigned long nests_before = fs_global_refused;
    run_handler(RUNS);
    const size_t into_guard = depth(stack2, stack2 + guard);
    fs_site_counts(&site_big, c);
    printf("altstack: phase 2: a %zu-byte stack; %zu bytes written below it; %lu nest "
           "entries and %lu calls dropped\n", small, into_guard,
           fs_global_refused - nests_before, c[FS_REFUSED]);
    CHECK(!wrong);
    CHECK_EQ(into_guard, 0);
    CHECK(fs_global_refused - nests_before >= 2 * RUNS);
    CHECK(c[FS_REFUSED] >= 2 * RUNS);

    /* Disabled: the record is cleared, hints go through again. */
    st.ss_flags = SS_DISABLE;
    CHECK(sigaltstack(&st, NULL) == 0);
    CHECK_EQ(fs_alt_size, 0);

    /* Phase 3: the same through the program's syscall() (not the library's own, which
     * internal.h's macro names): a stack set there is recorded, and a seccomp query that
     * installs nothing leaves the hints on. */
#undef syscall
    st.ss_sp = stack1;
    st.ss_size = big;
    st.ss_flags = 0;
    CHECK(syscall(SYS_sigaltstack, &st, &st) == 0); /* the old stack written over the new */
    CHECK(fs_alt_lo == (uintptr_t)stack1 && fs_alt_size == big);
    /* A bad pointer is the kernel's to refuse (EFAULT), never read here. */
    errno = 0;
    CHECK(syscall(SYS_sigaltstack, (void *)8, NULL) == -1 && errno == EFAULT);
    CHECK(sigaltstack((const stack_t *)8, NULL) == -1 && errno == EFAULT);
    CHECK(fs_alt_lo == (uintptr_t)stack1 && fs_alt_size == big);
    unsigned action = SECCOMP_RET_KILL_THREAD;
    (void)syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action);
    CHECK(!fs_filtered && !fs_hint_refused());
    return check_failures != 0;
}
