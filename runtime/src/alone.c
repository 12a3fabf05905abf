/*
 * alone.c — calls the kernel allows only a single-threaded process, or that bind every
 * thread: the library's threads end first.
 *
 * unshare(CLONE_NEWUSER) and setns() into a user namespace fail with EINVAL in a process
 * with more than one thread, and the library's threads (workers, the memcg keeper, the
 * exit watcher) start with the runtime: a sandboxing program that made itself a user
 * namespace failed in the hinted build only.  So these calls are interposed: the
 * library's threads end (workers.c: fs_threads_retire, which waits until the kernel has
 * them gone), the call is made, and they start again with the next hint that needs
 * them.  A seccomp filter installed with SECCOMP_FILTER_FLAG_TSYNC binds every thread,
 * the library's included, whose calls (nanosleep, futex, pread) the program never makes
 * and the filter may kill: they end first too (interpose.c), and do not start again
 * (the runtime drops every hint after a filter: thread_guard.c).  The prefetch thread,
 * once ended, does not start again.
 */
#include <sched.h>

#include "internal.h"

static void *real_unshare, *real_setns;

__attribute__((constructor)) static void find_real(void)
{
    (void)fs_next_fn(&real_unshare, "unshare");
    (void)fs_next_fn(&real_setns, "setns");
}

int unshare(int flags)
{
    int (*fn)(int) = (int (*)(int))fs_next_fn(&real_unshare, "unshare");
    if (!(flags & CLONE_NEWUSER) || fs_library_threads_running() == 0)
        return fn(flags);
    const bool retired = fs_threads_retire("ended: the program made a user namespace");
    const int rc = fn(flags);
    if (retired)
        fs_threads_may_restart();
    return rc;
}

int setns(int fd, int nstype)
{
    int (*fn)(int, int) = (int (*)(int, int))fs_next_fn(&real_setns, "setns");
    /* 0: any kind, a user namespace among them (or a pidfd naming CLONE_NEWUSER). */
    if ((nstype != 0 && !(nstype & CLONE_NEWUSER)) || fs_library_threads_running() == 0)
        return fn(fd, nstype);
    const bool retired = fs_threads_retire("ended: the program joined a user namespace");
    const int rc = fn(fd, nstype);
    if (retired)
        fs_threads_may_restart();
    return rc;
}
