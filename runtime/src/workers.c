/*
 * workers.c — the threads that issue requests so the program never blocks on
 * a hint (paper Section 4.2: "a number of Pthreads that make the actual calls").
 * Started with the runtime (api.c: pthread_create allocates, so no hint, which may
 * come from a signal handler, should have to); all signals blocked so the program's
 * handlers run on its own threads; after fork the child starts fresh ones with its
 * first queued request.
 *
 * Until the program's first hint reaches the library they sleep (fs_thread_await_hints):
 * a program that issues none (its data fits, so its nests run their unhinted copies)
 * has none of them running and nothing of the runtime's locked.  Under a tight limit
 * that matters: NAS IS built with --no-prefetch (no hint at all, the runtime then still
 * started), 32 MiB of data under an 8 MiB cap, took 17.8-20.3 s with the worker, the
 * memcg keeper and their 420 KiB of locked pages running, 7.9-8.5 s built by plain gcc
 * (docs/decisions.md, 2026-12-01).  Only the exit watcher (main_exit.c) wakes, once a
 * second.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <linux/capability.h>
#include <linux/futex.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

struct fs_queue *fs_queue_global;
static pthread_mutex_t start_mu = PTHREAD_MUTEX_INITIALIZER;
static int started;

__thread bool fs_in_worker __attribute__((tls_model("initial-exec")));

static void *worker_main(void *arg)
{
    (void)arg;
    if (!fs_thread_await_hints())
        return NULL;
    fs_in_worker = true;
    fs_trace_exclude_self(); /* its faults (MADV_POPULATE_READ) are not the program's */
    struct fs_request r;
    while (fs_queue_pop(fs_queue_global, &r))
        fs_issue(&r);
    return NULL;
}

bool fs_thread_start(void *(*fn)(void *), void *arg, const char *name)
{
    return fs_thread_start_on(fn, arg, name, NULL, 64 << 10, NULL);
}

/* A library thread's function and argument, for counted_main: static slots, claimed
 * atomically and given back once the thread has copied its own (no malloc, whose free
 * would run on the library's thread beside a program's unlocked allocator). */
#define START_SLOTS 128
static struct counted {
    void *(*fn)(void *);
    void *arg;
    int busy;
} slots[START_SLOTS];

__thread bool fs_on_library_thread __attribute__((tls_model("initial-exec")));

/* Whether the process may lock memory without taking it from the program's own
 * allowance: CAP_IPC_LOCK (root's), or no RLIMIT_MEMLOCK. */
bool fs_may_lock(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur == RLIM_INFINITY)
        return true;
    struct __user_cap_header_struct head = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    return syscall(SYS_capget, &head, data) == 0 &&
           (data[CAP_IPC_LOCK / 32].effective & (1u << (CAP_IPC_LOCK % 32))) != 0;
}

/* The pages of the library's own code and data in memory now: those its start-up and
 * the program's hints until the first of them touched, the keeper's state and code among them (a keeper's
 * swap-in of its data, then a refault of its code, were still where the OOM killer was
 * invoked), and the pages of the C library's functions the keeper calls.  The rest of
 * .bss (buffers of the prefetch thread, the trace, coloring: megabytes, untouched) is
 * left alone. */
static int data_cb(struct dl_phdr_info *info, size_t size, void *base)
{
    (void)size;
    /* Ours (code and data), and the C library's and the loader's data (the keeper's
     * calls read their variables: the vDSO's address, errno's). */
    const bool ours = (void *)info->dlpi_addr == base;
    const char *name = info->dlpi_name != NULL ? info->dlpi_name : "";
    if (!ours && strstr(name, "/libc.so") == NULL && strstr(name, "/ld-linux") == NULL)
        return 0;
    const uintptr_t page = FS_PAGE;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & (ours ? PF_W | PF_X : PF_W)))
            continue;
        uintptr_t lo = (info->dlpi_addr + ph->p_vaddr) & ~(page - 1);
        const uintptr_t hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + page - 1) & ~(page - 1);
        unsigned char vec[256];
        while (lo < hi) {
            const size_t n = (hi - lo) / page < sizeof vec ? (hi - lo) / page : sizeof vec;
            if (mincore((void *)lo, n * page, vec) != 0)
                break;
            for (size_t k = 0; k < n; k++)
                if (vec[k] & 1)
                    (void)mlock((void *)(lo + k * page), page);
            lo += n * page;
        }
    }
    return 0;
}

static void lock_library_data(void)
{
    Dl_info self;
    if (dladdr((void *)lock_library_data, &self) == 0)
        return;
    dl_iterate_phdr(data_cb, self.dli_fbase);
    const void *libc[] = {(void *)nanosleep, (void *)pread, (void *)fstat,
                          (void *)clock_gettime, (void *)__errno_location};
    for (size_t i = 0; i < sizeof libc / sizeof libc[0]; i++)
        (void)mlock((void *)((uintptr_t)libc[i] & ~(FS_PAGE - 1)), 2 * FS_PAGE);
}

/* Where the library thread began (counted_main's frame). */
static __thread uintptr_t entry_frame __attribute__((tls_model("initial-exec")));

/*
 * Keeps the pages the library's threads run on in memory, under a memory limit, once
 * the program is far larger than it: each thread's stack from 32 KiB below where it
 * asked up to where it began, the page of the library's thread-local variables and its
 * thread descriptor (pthread_self()), and the library's resident code and data
 * (lock_library_data).  Under a small memory cgroup limit a thread that sleeps between
 * rounds (the memcg keeper, an idle worker) otherwise has them swapped out, and the
 * swap-in charge when it wakes, at the moment the cgroup is full of pages being read,
 * was where the OOM killer was invoked: a program reading a file mapping under an
 * 8 MiB cap was killed in 9 of 11 hinted runs, never unhinted (docs/decisions.md).
 *
 * Only where locking takes nothing from the program's allowance (fs_may_lock), and
 * only once the program's address space is over its limit by more than an eighth
 * (fs_budget_far_over; then its hints stream data through the cgroup): the lock, about
 * 430 KiB with three library threads, is that much less memory for a program that
 * nearly fits, and there it cost more than the hints (NAS CG with its data at 1 times a
 * 128 MiB cap, where the original is 4.8 MiB over and 1 MiB locked beside it took 2.2
 * times its time: 2.10-2.46 s locked, 1.23-1.51 s not, the original 1.08-1.46 s).  So
 * each library thread records its pages here as it starts work, and locks them if the
 * library's are locked; the first call that finds the program far over locks the
 * library's and every recorded thread's (for good: never taken back); the keeper
 * (memcg.c) asks again every 100 ms under a cgroup limit, so a program that grows past
 * its limit later gets the lock then.
 */
#define HELD_SLOTS 80 /* FORESIGHT_WORKERS' 64 and the other threads */
static struct held {
    uintptr_t stack_lo, stack_hi, tls, self; /* stack_lo 0: a free slot */
} held[HELD_SLOTS];
static __thread int held_slot __attribute__((tls_model("initial-exec"))); /* index + 1 */
static pthread_mutex_t held_mu = PTHREAD_MUTEX_INITIALIZER;
static bool library_locked; /* lock_library_data and every recorded thread's lock done or
                             * being done (under held_mu): never taken back */

static void lock_held(const struct held *h)
{
    (void)mlock((void *)h->stack_lo, h->stack_hi - h->stack_lo);
    (void)mlock((void *)h->tls, FS_PAGE);
    (void)mlock((void *)h->self, 2 * FS_PAGE);
}

/* With held_mu held: locks the library's pages and every recorded thread's if the
 * program is far over its limit. */
static void lock_all_if_far_over(void)
{
    if (library_locked || !fs_budget_far_over())
        return;
    __atomic_store_n(&library_locked, true, __ATOMIC_RELEASE);
    lock_library_data();
    for (int i = 0; i < HELD_SLOTS; i++)
        if (held[i].stack_lo != 0)
            lock_held(&held[i]);
}

void fs_thread_lock_stack(void)
{
    if (!fs_budget_limited() || !fs_may_lock())
        return;
    const uintptr_t page = FS_PAGE, here = (uintptr_t)__builtin_frame_address(0);
    const uintptr_t top = entry_frame > here ? entry_frame : here;
    const struct held mine = {
        .stack_lo = (here & ~(page - 1)) - (32u << 10),
        .stack_hi = (top & ~(page - 1)) + 2 * page,
        .tls = (uintptr_t)&fs_on_library_thread & ~(page - 1),
        .self = (uintptr_t)pthread_self() & ~(page - 1),
    };
    pthread_mutex_lock(&held_mu);
    for (int i = 0; held_slot == 0 && i < HELD_SLOTS; i++)
        if (held[i].stack_lo == 0) {
            held[i] = mine;
            held_slot = i + 1;
        }
    const bool was = library_locked;
    lock_all_if_far_over();
    if (library_locked && (was || held_slot == 0)) /* (no slot free: not locked above) */
        lock_held(&mine);
    pthread_mutex_unlock(&held_mu);
}

void fs_thread_lock_if_far_over(void)
{
    if (__atomic_load_n(&library_locked, __ATOMIC_ACQUIRE) || !fs_budget_limited() ||
        !fs_may_lock())
        return;
    pthread_mutex_lock(&held_mu);
    lock_all_if_far_over();
    pthread_mutex_unlock(&held_mu);
}

void fs_thread_unhold(void)
{
    if (held_slot == 0)
        return;
    pthread_mutex_lock(&held_mu);
    held[held_slot - 1].stack_lo = 0;
    held_slot = 0;
    pthread_mutex_unlock(&held_mu);
}

/* Bit 0: a hint has reached the library (fs_runtime_wake); bit 1: the library's threads
 * are told to end (fs_threads_retire), so one asleep in fs_thread_await_hints wakes. */
static int hints_seen;

void fs_runtime_wake(void)
{
    if (__atomic_load_n(&hints_seen, __ATOMIC_ACQUIRE) & 1)
        return;
    __atomic_fetch_or(&hints_seen, 1, __ATOMIC_SEQ_CST);
    syscall(SYS_futex, &hints_seen, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

bool fs_runtime_awake(void)
{
    return __atomic_load_n(&hints_seen, __ATOMIC_ACQUIRE) & 1;
}

bool fs_thread_await_hints(void)
{
    int v;
    while ((v = __atomic_load_n(&hints_seen, __ATOMIC_ACQUIRE)) == 0)
        syscall(SYS_futex, &hints_seen, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    if ((v & 2) || __atomic_load_n(&fs_retiring, __ATOMIC_SEQ_CST))
        return false;
    fs_thread_lock_stack();
    return true;
}

/* Runs a library thread's function between its counting and uncounting (main_exit.c). */
static unsigned starting; /* library threads made, not yet counted as running */

static void *counted_main(void *p)
{
    fs_on_library_thread = true;
    entry_frame = (uintptr_t)__builtin_frame_address(0);
    struct counted *slot = p;
    void *(*fn)(void *) = slot->fn;
    void *arg = slot->arg;
    __atomic_store_n(&slot->busy, 0, __ATOMIC_RELEASE);
    fs_library_thread_begins();
    __atomic_sub_fetch(&starting, 1, __ATOMIC_SEQ_CST);
    /* A thread made just before fs_threads_retire ends as it starts: the worker's, the
     * keeper's, the exit watcher's and the prefetch thread's functions look at
     * fs_retiring first (the trace's drain and the NBD connection, made at start-up,
     * make fs_threads_retire decline instead). */
    void *ret = fn(arg);
    fs_thread_unhold();
    fs_library_thread_ends();
    return ret;
}

__thread bool fs_starting_library_thread __attribute__((tls_model("initial-exec")));

bool fs_thread_start_on(void *(*fn)(void *), void *arg, const char *name, void *stack,
                        size_t size, pthread_t *id)
{
    struct counted *c = NULL;
    for (int i = 0; i < START_SLOTS && c == NULL; i++) {
        int idle = 0;
        if (__atomic_compare_exchange_n(&slots[i].busy, &idle, 1, false, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            c = &slots[i];
    }
    if (c == NULL)
        return false; /* 128 threads starting at once: not this one */
    c->fn = fn;
    c->arg = arg;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (stack != NULL)
        pthread_attr_setstack(&attr, stack, size);
    else
        pthread_attr_setstacksize(&attr, size);
    pthread_t t;
    fs_starting_library_thread = true; /* not the program's: pinning goes on (pin.c) */
    __atomic_add_fetch(&starting, 1, __ATOMIC_SEQ_CST);
    /* None while the library's threads end (fs_threads_retire sees `starting` or this
     * sees the flag), nor from a program's thread once a seccomp filter is installed (its
     * clone may be refused by killing; a library thread, made before, is not bound). */
    const bool refused = __atomic_load_n(&fs_retiring, __ATOMIC_SEQ_CST) ||
                         (__atomic_load_n(&fs_filtered, __ATOMIC_SEQ_CST) &&
                          !fs_on_library_thread);
    bool ok = !refused && pthread_create(&t, &attr, counted_main, c) == 0;
    if (!ok && !refused && stack == NULL && size < ((size_t)8 << 20)) {
        /* The program's thread-local storage sits in the stack too: room for a large one */
        pthread_attr_setstacksize(&attr, (size_t)8 << 20);
        ok = pthread_create(&t, &attr, counted_main, c) == 0;
    }
    fs_starting_library_thread = false;
    if (!ok) {
        __atomic_sub_fetch(&starting, 1, __ATOMIC_SEQ_CST);
        __atomic_store_n(&c->busy, 0, __ATOMIC_RELEASE);
    }
    if (ok) {
        pthread_setname_np(t, name);
        if (id != NULL)
            *id = t;
    }
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (ok)
        fs_main_exit_thread_started(); /* a process with threads of ours watches its end */
    return ok;
}

void fs_workers_ensure_started(void)
{
    if (__atomic_load_n(&started, __ATOMIC_ACQUIRE))
        return;
    pthread_mutex_lock(&start_mu);
    if (!started) {
        for (int i = 0; i < fs_cfg.workers; i++)
            fs_thread_start(worker_main, NULL, "foresight-io");
        __atomic_store_n(&started, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&start_mu);
}

void fs_workers_after_fork_child(void)
{
    pthread_mutex_init(&start_mu, NULL);
    started = 0;
    starting = 0;      /* the child has none of the parent's threads */
    fs_retiring = 0;
    hints_seen &= 1;
    fs_queue_reset(fs_queue_global);
    /* A child inherits no locks and none of the parent's threads. */
    pthread_mutex_init(&held_mu, NULL);
    memset(held, 0, sizeof held);
    held_slot = 0;
    library_locked = false;
}

int fs_retiring; /* set: the library's threads end (each looks at it when it wakes) */

/* Threads of the process the kernel still has under a library thread's name (each is
 * named foresight-...; not the main thread nor the caller, named as the program
 * likes); -1 if /proc cannot say, or one of them would not end when told (the trace's
 * drain, the I/O node's connection).  On the program's thread (its own call). */
static int library_tasks(void)
{
    const long self = syscall(SYS_gettid);
    DIR *d = opendir("/proc/self/task");
    if (d == NULL)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        const long tid = strtol(e->d_name, NULL, 10);
        if (tid == self || tid == getpid())
            continue;
        char path[300], comm[32] = {0};
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        const int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue; /* ended meanwhile */
        const ssize_t got = read(fd, comm, sizeof comm - 1);
        close(fd);
        if (got <= 10 || strncmp(comm, "foresight-", 10) != 0)
            continue;
        if (strncmp(comm, "foresight-trace", 15) == 0 || strncmp(comm, "foresight-nbd", 13) == 0)
            n = -1000; /* never told to end */
        n++;
    }
    closedir(d);
    return n < 0 ? -1 : n;
}

bool fs_library_threads_exist(void)
{
    return fs_library_threads_running() > 0 || __atomic_load_n(&starting, __ATOMIC_SEQ_CST) > 0;
}

bool fs_threads_retire(const char *why)
{
    if (!fs_library_threads_exist())
        return true;
    /* Not from a library thread (an exit handler on the watcher's), not once the main
     * thread has ended (the watcher then ends the process), not with a thread that
     * would not end: the call goes to the kernel as it is. */
    if (fs_on_library_thread || fs_main_exit_main_ended() || library_tasks() < 0)
        return false;
    const int saved = errno;
    __atomic_store_n(&fs_retiring, 1, __ATOMIC_SEQ_CST);
    __atomic_fetch_or(&hints_seen, 2, __ATOMIC_SEQ_CST); /* the sleepers wake and end */
    syscall(SYS_futex, &hints_seen, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
    (void)fs_pt_retire(why);
    if (fs_queue_global != NULL)
        fs_queue_shutdown(fs_queue_global); /* the workers end once it is empty */
    fs_main_exit_wake();
    /* Counted out first (a thread just made ends as it starts), then gone from the
     * kernel's thread group (2 s at most). */
    for (int i = 0; i < 2000 && (fs_library_threads_running() > 0 ||
                                 __atomic_load_n(&starting, __ATOMIC_SEQ_CST) > 0); i++)
        usleep(1000);
    int left = library_tasks();
    for (int i = 0; i < 2000 && left > 0; i++) {
        usleep(1000);
        left = library_tasks();
    }
    errno = saved;
    return fs_library_threads_running() == 0 && left == 0;
}

void fs_threads_may_restart(void)
{
    if (!__atomic_load_n(&fs_retiring, __ATOMIC_SEQ_CST))
        return; /* nothing was ended (fs_threads_retire declined) */
    __atomic_fetch_and(&hints_seen, ~2, __ATOMIC_SEQ_CST);
    __atomic_store_n(&fs_retiring, 0, __ATOMIC_SEQ_CST);
    if (fs_queue_global != NULL)
        fs_queue_reopen(fs_queue_global);
    pthread_mutex_lock(&start_mu);
    __atomic_store_n(&started, 0, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&start_mu);
    fs_memcg_restartable();
    fs_main_exit_restartable();
    /* Now, on the program's thread: not with a first hint that may be a handler's. */
    if (fs_cfg.issue_inline != FS_INLINE_ALL)
        fs_workers_ensure_started();
    fs_memcg_keeper_ensure_started();
}
