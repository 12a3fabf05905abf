/*
 * The definitions behind the functions the library interposes (pin.c, pt_limits.c,
 * pt_thread.c, thread_guard.c, alone.c...): libc's, found by dlsym(RTLD_NEXT) once per
 * function and kept, so a call
 * made where dlsym may not be (a signal handler, a child after fork) finds it without a
 * lookup.  Each file looks its names up from a constructor (fs_next_all); a call before
 * that (a sanitizer's start-up) looks its one up then.
 */
#include <dlfcn.h>
#include <errno.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/syscall.h>

#include "internal.h"

FS_EARLY void *fs_next_fn(void **slot, const char *name)
{
    void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (f == NULL) {
        f = dlsym(RTLD_NEXT, name);
        if (f == NULL) {
            /* Loaded after the C library (a dependency of a library the program loads,
             * not of the program): its definition comes first in the lookup, and ours
             * interpose nothing.  Never our own. */
            void *d = dlsym(RTLD_DEFAULT, name);
            Dl_info self, found;
            if (d != NULL && dladdr((void *)fs_next_fn, &self) != 0 &&
                dladdr(d, &found) != 0 && found.dli_fbase != self.dli_fbase)
                f = d;
        }
        __atomic_store_n(slot, f, __ATOMIC_RELEASE);
    }
    return f;
}

void fs_next_all(void **slots, const char *const *names, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        (void)fs_next_fn(&slots[i], names[i]);
}

#undef syscall
static void *real_syscall;

/* Found before any hint can need it (a handler's hint may make a system call). */
__attribute__((constructor)) static void find_syscall(void)
{
    (void)fs_next_fn(&real_syscall, "syscall");
}

/* A system call's six arguments, however many the caller passed, as the C library's own
 * syscall() reads them (not a sanitizer's business: FS_EARLY). */
static FS_EARLY void six(va_list ap, long a[6])
{
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
}

FS_EARLY long fs_syscall(long number, ...)
{
    va_list ap;
    va_start(ap, number);
    long a[6];
    six(ap, a);
    va_end(ap);
    long (*fn)(long, ...) = (long (*)(long, ...))fs_next_fn(&real_syscall, "syscall");
    if (fn == NULL) {
        errno = ENOSYS;
        return -1;
    }
    return fn(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* syscall(): a raw system call reaches what the C library's function for it would
 * (seccomp, prctl and sigaltstack: thread_guard.c; execve, execveat and the affinity
 * calls: pin.c; exit: main_exit.c; mremap: random.c). */
FS_EARLY long syscall(long number, ...)
{
    va_list ap;
    va_start(ap, number);
    long a[6];
    six(ap, a);
    va_end(ap);
    long (*fn)(long, ...) = (long (*)(long, ...))fs_next_fn(&real_syscall, "syscall");
    if (number == SYS_exit)
        fs_main_exit_raw();
    if (fs_thread_strict) /* seccomp's strict mode: no other system call, the hooks' none */
        return fn(number, a[0], a[1], a[2], a[3], a[4], a[5]);
    if (number == SYS_sigaltstack) /* recorded as the C function does (thread_guard.c) */
        return sigaltstack((const stack_t *)a[0], (stack_t *)a[1]);
    if (number == SYS_mremap) /* the library's advice over it first (random.c) */
        fs_random_withdraw((uintptr_t)a[0], (size_t)a[1]);
    const int saved = errno;
    fs_pin_before_syscall(number, a);
    /* A filter for every thread binds ours too (alone.c); without a program it is a
     * probe (libseccomp's), and if it fails they start again. */
    const bool tsync = number == SYS_seccomp && (unsigned)a[0] == SECCOMP_SET_MODE_FILTER &&
                       ((unsigned long)a[1] & SECCOMP_FILTER_FLAG_TSYNC) && a[2] != 0;
    if (tsync)
        (void)fs_threads_retire("ended: the program's seccomp filter binds every thread");
    errno = saved;
    const long rc = fn(number, a[0], a[1], a[2], a[3], a[4], a[5]);
    const int after = errno;
    if (tsync && rc != 0) /* not installed (a thread that could not sync, an error) */
        fs_threads_may_restart();
    fs_guard_after_syscall(number, a, rc);
    fs_pin_after_syscall(number, a, rc);
    errno = after;
    return rc;
}
