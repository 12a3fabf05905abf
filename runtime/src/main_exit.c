/*
 * main_exit.c — the process ends with the program's last thread, not the library's.
 *
 * A program whose main thread ends with pthread_exit() or thrd_exit() ends when its
 * last thread does, with status 0 (POSIX: "as if exit() was called with a zero argument
 * at thread termination time").  glibc does that when its count of threads reaches
 * zero, and the library's own threads (workers, the prefetch thread...) never end:
 * without this the process would live on after the program's last thread, its output
 * unflushed, and with every thread left blocking all signals even SIGTERM would stay
 * pending.  A main thread that ends with the raw exit system call (a thread library's
 * or a sandbox's way) left the same hang; the original process ends there, with its
 * last thread, with that thread's status and no exit handlers.
 *
 * So a watcher thread, started with the library's first other thread (a process with
 * none needs none), waits on the word the kernel clears when the main thread ends: its
 * clear_child_tid address (prctl PR_GET_TID_ADDRESS, read at start-up), the word
 * pthread_join waits on.  The kernel wakes one waiter there, so the watcher passes the
 * wake on to every other (a program thread joining the main thread), and its wait
 * times out each second, so a wake it does not get is not missed.  From then on
 * it looks every PERIOD_NS whether only library threads are left: the main thread a
 * zombie (/proc/self/stat's state Z) and the process's thread count, less that zombie,
 * no more than the library's live threads (with the kernel's io_uring workers of the
 * prefetch thread's ring, when it has one).  The library counts a thread of its own only
 * once it runs and uncounts it before it ends, the count is read before the thread
 * count, and a look during which a library thread ended is not trusted, so every race
 * makes the watcher wait one more period, never end the process early.  Then, after
 * pthread_exit or thrd_exit on the main thread (the library's: the program's calls bind
 * to them, as the library is linked before libc; they record the main thread's signal
 * mask), exit(0) with that mask, the exit handlers on a new thread with an 8 MiB stack
 * (the watcher's own is small); after any other end, as the kernel would have ended the
 * process: killed by the signal that killed the main thread, else exit_group with its
 * exit status (/proc/self/stat's exit_code), no handlers.  Without the prctl (a kernel
 * without checkpoint/restore) or in a forked child, the watcher starts at the main
 * thread's pthread_exit instead, and a raw exit is not covered.  Not covered either: a
 * /proc it cannot read, and a main thread ended by the raw exit or cancellation while
 * other threads of the program outlive it (the process then ends with the last one's
 * status: the main thread's is used).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define PERIOD_NS (20 * 1000 * 1000) /* the watcher's wait between looks */

static unsigned library_threads; /* live threads of fs_thread_start_on, counted as above */
static unsigned long ended;      /* library threads that have ended, ever */
static int watching;             /* the watcher was started (once per process) */
static int by_thread_exit;       /* the main thread called pthread_exit or thrd_exit */
static sigset_t main_mask;       /* the main thread's signal mask as it ended */
static int *main_word;           /* its clear_child_tid word (NULL: unknown) */
static int main_raw_exit;        /* it called syscall(SYS_exit) (interpose.c) */
static int watcher_alive;        /* watcher_main runs */
static int main_unknown;         /* the runtime started on another thread (a dlopen there) */
static __thread bool on_main_thread __attribute__((tls_model("initial-exec")));

void fs_library_thread_begins(void)
{
    __atomic_add_fetch(&library_threads, 1, __ATOMIC_SEQ_CST);
}

void fs_library_thread_ends(void)
{
    __atomic_add_fetch(&ended, 1, __ATOMIC_SEQ_CST);
    __atomic_sub_fetch(&library_threads, 1, __ATOMIC_SEQ_CST);
}

unsigned fs_library_threads_running(void)
{
    return __atomic_load_n(&library_threads, __ATOMIC_SEQ_CST);
}


static void after_fork_child(void)
{
    /* The child has only the thread that forked; the library starts its own again. */
    __atomic_store_n(&library_threads, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&ended, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&watching, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&by_thread_exit, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&main_raw_exit, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&watcher_alive, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&main_unknown, 0, __ATOMIC_SEQ_CST);
    main_word = NULL;
    fs_main_exit_record(); /* the child's main thread: the one that forked */
}

/* Whatever the rest of the library does at start (disabled, say): a child's count must
 * never be its parent's. */
__attribute__((constructor)) static void register_fork_handler(void)
{
    pthread_atfork(NULL, NULL, after_fork_child);
}

/* The kernel's io_uring workers of the prefetch thread's ring (FORESIGHT_PT_ISSUE=uring):
 * threads of the process named iou-wrk-TID, which live as long as the ring. */
static unsigned ring_workers(void)
{
    if (!fs_pt_ring_in_use())
        return 0;
    const int dir = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return 0;
    char buf[1024] __attribute__((aligned(8)));
    unsigned n = 0;
    long got;
    while ((got = syscall(SYS_getdents64, dir, buf, sizeof buf)) > 0) {
        for (long off = 0; off < got;) {
            const struct dirent64 *d = (const struct dirent64 *)(buf + off);
            off += d->d_reclen;
            if (d->d_name[0] < '0' || d->d_name[0] > '9')
                continue;
            char path[sizeof d->d_name + 8], comm[32] = {0};
            snprintf(path, sizeof path, "%s/comm", d->d_name);
            const int fd = openat(dir, path, O_RDONLY | O_CLOEXEC);
            if (fd < 0)
                continue;
            const ssize_t r = read(fd, comm, sizeof comm - 1);
            close(fd);
            if (r > 0 && strncmp(comm, "iou-wrk-", 8) == 0)
                n++;
        }
    }
    close(dir);
    return n;
}

/* Whether the main thread has ended and no thread of the program is left; if so, the
 * main thread's exit status (proc(5)'s exit_code, as waitpid reports it) in *STATUS. */
static bool only_library_threads_left(int *status)
{
    /* A library thread that ends between reading the count and reading the kernel's
     * (uncounted here, still there) would pass for one of the program's gone: a look
     * during which one ended is not trusted. */
    const unsigned long ended_before = __atomic_load_n(&ended, __ATOMIC_SEQ_CST);
    unsigned ours = __atomic_load_n(&library_threads, __ATOMIC_SEQ_CST);
    /* The ring's workers come and go: counted before and after the kernel's count, the
     * fewer of the two (one that came or went meanwhile makes the watcher wait a period). */
    const unsigned workers_before = ring_workers();
    char buf[1024];
    if (fs_kept_pread(FS_KEPT_SELF_STAT, buf, sizeof buf, 0) <= 0) {
        /* Kept open (ownfd.c) unless the program closed it: then opened here, once the
         * main thread has ended (a thread of the program left may see the number taken). */
        int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return false;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0)
            return false;
        buf[n] = 0;
    }
    /* pid (comm) state ppid ...: the comm may hold spaces and ')', so from the last ')'. */
    char *p = NULL;
    for (char *q = buf; *q; q++)
        if (*q == ')')
            p = q;
    if (p == NULL || p[1] != ' ')
        return false;
    const char state = p[2];
    /* The state is field 3, num_threads field 20, exit_code field 52. */
    int field = 3;
    long threads = -1;
    *status = 0;
    for (char *q = p + 2; *q; q++) {
        if (*q != ' ')
            continue;
        field++;
        if (field == 20)
            threads = strtol(q + 1, NULL, 10);
        else if (field == 52)
            *status = (int)strtol(q + 1, NULL, 10);
    }
    if (state == 'Z' && workers_before > 0) {
        const unsigned workers_after = ring_workers();
        ours += workers_after < workers_before ? workers_after : workers_before;
    }
    return state == 'Z' && threads >= 1 && (unsigned long)(threads - 1) <= ours &&
           __atomic_load_n(&ended, __ATOMIC_SEQ_CST) == ended_before;
}

/* Whether the main thread has ended (a zombie while other threads run). */
static bool main_ended(int *status)
{
    char buf[1024];
    if (fs_kept_pread(FS_KEPT_SELF_STAT, buf, sizeof buf, 0) <= 0)
        return false;
    const char *p = strrchr(buf, ')');
    *status = 0;
    return p != NULL && p[1] == ' ' && p[2] == 'Z';
}

/* exit(0) as the program's last thread would run it: with the main thread's signal mask
 * (a library thread blocks them all), on a program-sized stack. */
static void *exit_main(void *arg)
{
    (void)arg;
    pthread_sigmask(SIG_SETMASK, &main_mask, NULL);
    exit(0);
}

/* The process ends as it would have with the main thread's STATUS (waitpid's form). */
static void end_as_main_did(int status)
{
    const int sig = status & 0x7f;
    if (sig != 0) { /* killed alone (a seccomp filter's RET_KILL_THREAD, say) */
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        sigaction(sig, &dfl, NULL);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        pthread_sigmask(SIG_UNBLOCK, &one, NULL);
        kill(getpid(), sig);
        kill(getpid(), SIGKILL); /* a signal whose default is not to end the process */
    }
    syscall(SYS_exit_group, (status >> 8) & 0xff);
}

static void *watcher_main(void *arg)
{
    (void)arg;
    /* Until the main thread ends: the kernel clears the word and wakes one waiter of it
     * as a shared futex (pthread_join waits there too: passed on), or pthread_exit says
     * so.  Each second the main thread's state is looked at too: a wake another waiter
     * took, or a word the program moved (set_tid_address), is not waited for forever. */
    __atomic_store_n(&watcher_alive, 1, __ATOMIC_SEQ_CST);
    int *word = main_word, v, status;
    const struct timespec second = {1, 0};
    bool locked = false;
    const struct timespec look = {1, 0};
    while (word == NULL && __atomic_load_n(&main_unknown, __ATOMIC_SEQ_CST) &&
           !__atomic_load_n(&by_thread_exit, __ATOMIC_SEQ_CST) && !main_ended(&status)) {
        if (__atomic_load_n(&fs_retiring, __ATOMIC_ACQUIRE)) {
            __atomic_store_n(&watcher_alive, 0, __ATOMIC_SEQ_CST);
            return NULL;
        }
        if (!locked && fs_runtime_awake()) {
            fs_thread_lock_stack();
            locked = true;
        }
        nanosleep(&look, NULL);
    }
    while (word != NULL && (v = __atomic_load_n(word, __ATOMIC_ACQUIRE)) != 0 &&
           !__atomic_load_n(&by_thread_exit, __ATOMIC_SEQ_CST) && !main_ended(&status)) {
        if (__atomic_load_n(&fs_retiring, __ATOMIC_ACQUIRE)) { /* (workers.c) */
            __atomic_store_n(&watcher_alive, 0, __ATOMIC_SEQ_CST);
            return NULL;
        }
        if (!locked && fs_runtime_awake()) { /* as the other threads, once hints flow */
            fs_thread_lock_stack();
            locked = true;
        }
        syscall(SYS_futex, word, FUTEX_WAIT, v, &second, NULL, 0);
    }
    if (word != NULL)
        syscall(SYS_futex, word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
    const struct timespec period = {0, PERIOD_NS};
    for (;;) {
        nanosleep(&period, NULL);
        if (!only_library_threads_left(&status))
            continue;
        /* Ended by the raw exit, or killed alone: as the kernel ends the process.  Else
         * (pthread_exit, thrd_exit, cancellation) through glibc's thread exit, whose last
         * thread calls exit(0). */
        if (__atomic_load_n(&main_raw_exit, __ATOMIC_SEQ_CST) || (status & 0x7f) != 0)
            end_as_main_did(status);
        pthread_t t; /* exit handlers may need a program thread's stack */
        if (!fs_thread_start_on(exit_main, NULL, "foresight-exit", NULL, (size_t)8 << 20, &t))
            exit_main(NULL);
        for (;;)
            pause();
    }
    return NULL;
}

/* Once per process. */
static void start_watcher(void)
{
    if (__atomic_exchange_n(&watching, 1, __ATOMIC_SEQ_CST))
        return;
    if (!fs_thread_start_on(watcher_main, NULL, "foresight-exit", NULL, (size_t)64 << 10, NULL))
        __atomic_store_n(&watching, 0, __ATOMIC_SEQ_CST);
}

void fs_main_exit_record(void)
{
    if (syscall(SYS_gettid) != getpid()) {
        /* Not the main thread: its word is unknown, so the watcher looks at its state
         * each second (a program's main that called libc's pthread_exit, the library
         * loaded later, was kept alive by the library's threads in a probe). */
        __atomic_store_n(&main_unknown, 1, __ATOMIC_SEQ_CST);
        return;
    }
    pthread_sigmask(SIG_SETMASK, NULL, &main_mask); /* until it ends: its mask as it was */
    on_main_thread = true;
    int *word = NULL;
    if (prctl(PR_GET_TID_ADDRESS, &word, 0, 0, 0) == 0 && word != NULL &&
        __atomic_load_n(word, __ATOMIC_ACQUIRE) == getpid())
        main_word = word;
}

void fs_main_exit_thread_started(void)
{
    if (main_word != NULL || __atomic_load_n(&main_unknown, __ATOMIC_SEQ_CST))
        start_watcher();
}

bool fs_main_exit_main_ended(void)
{
    return __atomic_load_n(&by_thread_exit, __ATOMIC_SEQ_CST) ||
           (main_word != NULL && __atomic_load_n(main_word, __ATOMIC_ACQUIRE) == 0);
}

void fs_main_exit_restartable(void)
{
    if (!__atomic_load_n(&watcher_alive, __ATOMIC_SEQ_CST))
        __atomic_store_n(&watching, 0, __ATOMIC_SEQ_CST); /* the next thread starts one */
}

void fs_main_exit_wake(void)
{
    if (main_word != NULL) /* a program thread joining the main thread loops, unharmed */
        syscall(SYS_futex, main_word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void fs_main_exit_raw(void)
{
    if (on_main_thread) /* no system call: the thread may be in seccomp's strict mode */
        __atomic_store_n(&main_raw_exit, 1, __ATOMIC_SEQ_CST);
}

static void main_thread_ends(void)
{
    if (syscall(SYS_gettid) != getpid())
        return; /* another thread: glibc's count still ends the process after it */
    pthread_sigmask(SIG_SETMASK, NULL, &main_mask);
    __atomic_store_n(&by_thread_exit, 1, __ATOMIC_SEQ_CST);
    if (fs_library_threads_running() > 0)
        start_watcher(); /* (running already, unless the word is unknown) */
}

__attribute__((noreturn)) void pthread_exit(void *value)
{
    main_thread_ends();
    void (*real)(void *) = (void (*)(void *))dlsym(RTLD_NEXT, "pthread_exit");
    if (real != NULL)
        real(value);
    syscall(SYS_exit, 0); /* no libc's pthread_exit: end the thread all the same */
    __builtin_unreachable();
}

__attribute__((noreturn)) void thrd_exit(int value)
{
    main_thread_ends();
    void (*real)(int) = (void (*)(int))dlsym(RTLD_NEXT, "thrd_exit");
    if (real != NULL)
        real(value);
    syscall(SYS_exit, 0);
    __builtin_unreachable();
}
