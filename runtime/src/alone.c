/*
 * alone.c — calls the kernel allows only a single-threaded process, or that bind every
 * thread: the library's threads end first.
 *
 * unshare(CLONE_NEWUSER) (and with CLONE_THREAD, CLONE_SIGHAND or CLONE_VM) and setns()
 * into a user or mount namespace fail with EINVAL in a process with more than one
 * thread, and the library's threads (workers, the memcg keeper, the exit watcher) start
 * with the runtime: a sandboxing program that made itself a user namespace failed in
 * the hinted build only.  So these calls are interposed: the library's threads end
 * (workers.c: fs_threads_retire; none starts meanwhile, one just made ends as it
 * starts; it waits, 2 s at most, until /proc shows no thread of theirs), the call is
 * made, and they start again on the program's thread right after it, whatever the call
 * returned.  This thread's hints are held meanwhile (a handler's must not wait for the
 * locks it holds).  Declined, the call going to the kernel as it is: on a library
 * thread (an exit handler), once the main thread has ended, with the trace's drain or
 * the I/O node's connection running (they are not told to end), without /proc.
 * A seccomp filter installed with SECCOMP_FILTER_FLAG_TSYNC binds every thread, the
 * library's included, whose calls (nanosleep, futex, pread) the program never makes and
 * the filter may kill: they end first too (interpose.c), and start again only if it was
 * not installed (libseccomp probes the flag with no program); after a filter no hint
 * runs and no thread starts (thread_guard.c).  The prefetch thread, once ended, does
 * not start again.
 */
#include <errno.h>
#include <sched.h>

#include "internal.h"

static void *real_unshare, *real_setns;

__attribute__((constructor)) static void find_real(void)
{
    (void)fs_next_fn(&real_unshare, "unshare");
    (void)fs_next_fn(&real_setns, "setns");
}

/* FN(ARGS) with the library's threads ended around it, started again after it. */
#define ALONE(why, call)                                                                  \
    do {                                                                                  \
        const int held = fs_hold_hints();                                                 \
        (void)fs_threads_retire(why);                                                     \
        const int rc_ = (call);                                                           \
        const int errno_ = errno;                                                         \
        fs_threads_may_restart();                                                         \
        fs_release_hints(held);                                                           \
        errno = errno_;                                                                   \
        return rc_;                                                                       \
    } while (0)

int unshare(int flags)
{
    int (*fn)(int) = (int (*)(int))fs_next_fn(&real_unshare, "unshare");
    /* A user namespace, and what must not be shared with other threads. */
    if (!(flags & (CLONE_NEWUSER | CLONE_THREAD | CLONE_SIGHAND | CLONE_VM)) ||
        !fs_library_threads_exist())
        return fn(flags);
    ALONE("ended: the program made a user namespace", fn(flags));
}

int setns(int fd, int nstype)
{
    int (*fn)(int, int) = (int (*)(int, int))fs_next_fn(&real_setns, "setns");
    /* A user or mount namespace (the kernel wants the file-system context unshared),
     * or of any kind (0, or a pidfd's set of kinds). */
    if ((nstype != 0 && !(nstype & (CLONE_NEWUSER | CLONE_NEWNS))) ||
        !fs_library_threads_exist())
        return fn(fd, nstype);
    ALONE("ended: the program joined a namespace", fn(fd, nstype));
}
