/* Under a memory limit the library's threads keep their stacks in memory (workers.c:
 * fs_thread_lock_stack): under a small cgroup limit a sleeping thread's stack swapped
 * out, and its swap-in charge on waking, was where the OOM killer struck.  But only once
 * the program's first hint reached the library (before it, the threads sleep: a program
 * without hints must not lose memory to them), and only while the program's address
 * space is over its limit by more than an eighth (a program that nearly fits must not
 * lose memory to them either).  Run with FORESIGHT_MEM=64M: this program is far smaller
 * until it maps 256 MiB.  Where locking takes nothing from the program's own allowance
 * (CAP_IPC_LOCK, or no RLIMIT_MEMLOCK), once it is far over each library thread (named
 * foresight-*) must have locked at least the 32 KiB below where it started, in its own
 * stack's mapping; elsewhere
 * nothing may be locked.  This program locks nothing itself, so /proc/self/status's
 * VmLck counts only theirs. */
#include <sys/mman.h>
#include <dirent.h>

#include "check.h"
#include "internal.h"
#include "ownfd.h"

static int library_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        char path[300], comm[64] = {0};
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue;
        if (fgets(comm, sizeof comm, f) != NULL && strncmp(comm, "foresight-", 10) == 0)
            n++;
        fclose(f);
    }
    if (d != NULL)
        closedir(d);
    return n;
}

/* Mappings without a name (thread stacks are such) with at least 36 KiB locked. */
static int locked_anonymous_regions(void)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    int regions = 0;
    bool named = true;
    long kib;
    while (f != NULL && fgets(line, sizeof line, f) != NULL) {
        unsigned long lo, hi;
        int end = 0;
        if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &end) == 2 && end > 0) {
            named = line[end] != '\n' && line[end] != 0;
            continue;
        }
        if (!named && sscanf(line, "Locked: %ld kB", &kib) == 1 && kib >= 36)
            regions++;
    }
    if (f != NULL)
        fclose(f);
    return regions;
}

static long locked_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "VmLck: %ld kB", &kib) == 1)
            break;
    if (f != NULL)
        fclose(f);
    return kib;
}

int main(void)
{
#ifdef __SANITIZE_ADDRESS__
    puts("locked_stacks: skipped (AddressSanitizer makes mlock a no-op)");
    return 77;
#endif
    CHECK(fs_budget_limited());
    fs_workers_ensure_started();
    int n = 0;
    for (int i = 0; i < 500 && (n = library_threads()) == 0; i++)
        usleep(10000);
    const bool may = fs_may_lock(); /* CAP_IPC_LOCK, or no RLIMIT_MEMLOCK */
    usleep(300000); /* time to lock, were they to lock before a hint */
    printf("locked_stacks: %d library threads, %ld KiB locked before any hint\n", n,
           locked_kib());
    CHECK_EQ(locked_kib(), 0);
    CHECK(!fs_runtime_awake());
    static char data[1 << 20];
    foresight_prefetch(data, sizeof data); /* the first hint */
    CHECK(fs_runtime_awake());
    usleep(1200000); /* the threads awake, the exit watcher within a second */
    printf("locked_stacks: %d library threads, %ld KiB locked while the program fits\n", n,
           locked_kib());
    CHECK_EQ(locked_kib(), 0);
    CHECK(!fs_budget_far_over());
    /* Far over its limit now (address space, as a large array's): the keeper's look
     * (memcg.c; called here directly, as FORESIGHT_MEM alone starts no keeper) locks every
     * thread that recorded its pages, each stack in a mapping of its own. */
    void *big = mmap(NULL, (size_t)256 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                     -1, 0);
    CHECK(big != MAP_FAILED);
    CHECK(fs_budget_far_over());
    /* Not known is not far over: with the statm file the library keeps open closed by
     * the program (close_range, closefrom), a library thread cannot read its size (it may
     * not reopen it), and nothing is locked. */
    const int statm = fs_kept_fd(FS_KEPT_STATM);
    CHECK(statm >= 0);
    close(statm);
    fs_on_library_thread = true; /* (looked at as the keeper would) */
    CHECK(!fs_budget_far_over());
    fs_thread_lock_if_far_over();
    fs_on_library_thread = false;
    CHECK_EQ(locked_kib(), 0);
    fs_thread_lock_if_far_over(); /* the program's thread opens it again */
    long kib = locked_kib();
    /* Waited for (10 s at most on a busy machine). */
    int stacks = locked_anonymous_regions();
    for (int i = 0; i < 1000 && may && (kib < 36L * n || stacks < n); i++) {
        usleep(10000);
        kib = locked_kib();
        stacks = locked_anonymous_regions();
    }
    printf("locked_stacks: %d library threads, %ld KiB locked, %d stacks (%s)\n", n, kib,
           stacks, may ? "may lock" : "no privilege: none");
    CHECK(n >= 1);
    if (may) {
        CHECK(kib >= 36L * n);
        CHECK(stacks >= n);
    }
    else
        CHECK_EQ(kib, 0);
    return check_failures != 0;
}
