/*
 * pt_limits.c — the program's limits and locks against the prefetch thread's memory.
 *
 * The thread's memory is a 96 GiB reservation (PROT_NONE guards, MAP_NORESERVE: address
 * space, not memory), its stack and arena (pt_arena.c) and the channel's ring (pt_chan.c).
 * None of it may cost the program anything it asks for: with a finite RLIMIT_AS or
 * RLIMIT_DATA at the start there is no thread (pt_thread.c), and when the program itself
 * later lowers RLIMIT_AS, RLIMIT_DATA or RLIMIT_MEMLOCK (setrlimit, prlimit) or locks its
 * memory (mlockall: the kernel counts every mapping against RLIMIT_MEMLOCK), the thread is
 * ended and its memory unmapped first (fs_pt_retire).  A helper's probe found a program
 * that set RLIMIT_AS to 4 GiB failing its next 64 MiB malloc, and an unprivileged
 * mlockall(MCL_CURRENT) failing, with the thread's reservation in place.
 *
 * The program's calls bind to these (the library is linked before libc); the library's
 * own go to libc's (dlsym RTLD_NEXT).  Not covered: a raw system call, and a sanitizer's
 * interceptor, which binds first.  Before the thread exists they only pass the call on:
 * a sanitizer's start-up makes them (see FS_EARLY in internal.h).
 */
#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "internal.h"

/* A sanitizer's own start-up calls setrlimit before its shadow memory exists: these run
 * uninstrumented (FS_EARLY) and call nothing instrumented until the thread exists. */

/* LIM as a pointer the compiler may not assume non-null (libc's prototypes say nonnull,
 * but a program may pass NULL, which glibc's setrlimit takes as setting nothing). */
FS_EARLY static const void *laundered(const void *lim)
{
    __asm__("" : "+r"(lim));
    return lim;
}

/* libc's functions behind these, found at load; later if a sanitizer's start-up calls first. */
static const char *const real_names[] = {"setrlimit", "setrlimit64", "prlimit", "prlimit64",
                                         "mlockall"};
#define NREAL (sizeof real_names / sizeof real_names[0])
static void *real_fn[NREAL];

FS_EARLY static void *next(const char *name)
{
    for (size_t i = 0; i < NREAL; i++)
        if (real_names[i] == name || strcmp(real_names[i], name) == 0)
            return fs_next_fn(&real_fn[i], real_names[i]);
    return dlsym(RTLD_NEXT, name);
}

__attribute__((constructor)) static void find_real(void)
{
    fs_next_all(real_fn, real_names, NREAL);
}

/* The thread's memory would count against RESOURCE set to NEW: end it first. */
FS_EARLY static void make_room(int resource, const struct rlimit *lim)
{
    lim = laundered(lim);
    if (lim == NULL || lim->rlim_cur == RLIM_INFINITY)
        return;
    if (resource == RLIMIT_AS || resource == RLIMIT_DATA || resource == RLIMIT_MEMLOCK) {
        const int e = errno;
        fs_pt_retire("ended: the program set a limit on its memory (setrlimit)");
        errno = e;
    }
}

FS_EARLY int setrlimit(__rlimit_resource_t resource, const struct rlimit *lim)
{
    make_room((int)resource, lim);
    int (*f)(__rlimit_resource_t, const struct rlimit *) =
        (int (*)(__rlimit_resource_t, const struct rlimit *))next("setrlimit");
    if (f == NULL) {
        errno = ENOSYS;
        return -1;
    }
    return f(resource, lim);
}

FS_EARLY int setrlimit64(__rlimit_resource_t resource, const struct rlimit64 *lim)
{
    const struct rlimit64 *l = laundered(lim);
    if (l != NULL && l->rlim_cur != RLIM64_INFINITY)
        make_room((int)resource, &(struct rlimit){.rlim_cur = 0});
    int (*f)(__rlimit_resource_t, const struct rlimit64 *) =
        (int (*)(__rlimit_resource_t, const struct rlimit64 *))next("setrlimit64");
    if (f == NULL) {
        errno = ENOSYS;
        return -1;
    }
    return f(resource, lim);
}

FS_EARLY int prlimit(pid_t pid, __rlimit_resource_t resource, const struct rlimit *lim,
            struct rlimit *old)
{
    if (pid == 0 || pid == getpid())
        make_room((int)resource, lim);
    int (*f)(pid_t, __rlimit_resource_t, const struct rlimit *, struct rlimit *) =
        (int (*)(pid_t, __rlimit_resource_t, const struct rlimit *, struct rlimit *))next(
            "prlimit");
    if (f == NULL) {
        errno = ENOSYS;
        return -1;
    }
    return f(pid, resource, lim, old);
}

FS_EARLY int prlimit64(pid_t pid, __rlimit_resource_t resource, const struct rlimit64 *lim,
              struct rlimit64 *old)
{
    if ((pid == 0 || pid == getpid()) && lim != NULL && lim->rlim_cur != RLIM64_INFINITY)
        make_room((int)resource, &(struct rlimit){.rlim_cur = 0});
    int (*f)(pid_t, __rlimit_resource_t, const struct rlimit64 *, struct rlimit64 *) =
        (int (*)(pid_t, __rlimit_resource_t, const struct rlimit64 *, struct rlimit64 *))next(
            "prlimit64");
    if (f == NULL) {
        errno = ENOSYS;
        return -1;
    }
    return f(pid, resource, lim, old);
}

FS_EARLY int mlockall(int flags)
{
    if (flags & MCL_CURRENT) {
        const int e = errno;
        fs_pt_retire("ended: the program locks its memory (mlockall)");
        errno = e;
    }
    int (*f)(int) = (int (*)(int))next("mlockall");
    if (f == NULL) {
        errno = ENOSYS;
        return -1;
    }
    return f(flags);
}
