/*
 * thread_guard.c — where a hint must not run: on a signal handler's short alternate
 * stack, and in a thread under seccomp.
 *
 * A handler installed with SA_ONSTACK runs on the stack the program gave sigaltstack,
 * often little more than the kernel's minimum signal frame.  A hint made there (a
 * hinted loop in the handler) runs library code below the handler's frame: up to
 * FS_HINT_STACK bytes (internal.h; test_altstack measures it, test_hint_stack.py bounds
 * it from the call graph), which a stack sized for the program's own handler may not
 * have: a probe's handler wrote 1,824 bytes below a 4,912-byte stack in the hinted build
 * only.  So sigaltstack is interposed and each thread remembers its alternate stack; a
 * hint made on it with less than FS_HINT_STACK left is dropped.  A new thread starts
 * without an alternate stack (its thread-local record is zero) and a forked child keeps
 * its parent's, as the kernel does.
 *
 * A thread in seccomp's strict mode may make no system call but read, write and exit:
 * the first hint of a loop after prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) got the
 * thread killed where the original, whose loops make no system call, lived.  A filter
 * may forbid the hints' calls too, and a thread the filtered one creates inherits it.
 * So prctl and syscall (interpose.c) are watched (libseccomp installs filters through
 * syscall):
 * after strict mode is entered that thread's hints are dropped, after a filter is
 * installed every thread's are.
 *
 * A filter already in force when the program starts (inherited from the process that
 * ran it) may forbid what the library's own threads do (futex, nanosleep, mlock): then
 * the runtime stays off, no thread started (fs_guard_filtered_at_start).
 *
 * fs_hint_refused is the check: api.c's entry, a loop nest's set-up and its steps make
 * it before they call anything.  A stack or a mode set with the raw system call
 * instruction (not the C library's functions) is not seen.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

__thread uintptr_t fs_alt_lo __attribute__((tls_model("initial-exec")));
__thread uintptr_t fs_alt_size __attribute__((tls_model("initial-exec")));
__thread bool fs_thread_strict __attribute__((tls_model("initial-exec")));
bool fs_filtered;
unsigned long fs_global_refused;

/* A sanitizer's start-up calls these before its own run-time exists: uninstrumented. */
FS_EARLY int sigaltstack(const stack_t *ss, stack_t *old)
{
    /* The system call itself (glibc's wrapper is no more than that); then the stack in
     * force, asked of the kernel (SS may be OLD, overwritten, or a bad pointer the kernel
     * answered with EFAULT: never read here). */
    long rc = syscall(SYS_sigaltstack, ss, old);
    stack_t want;
    const int saved = errno;
    if (rc == 0 && ss != NULL && syscall(SYS_sigaltstack, NULL, &want) == 0) {
        const bool off = (want.ss_flags & SS_DISABLE) != 0;
        fs_alt_size = 0; /* a handler between the stores sees no stack, not half of one */
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        fs_alt_lo = off ? 0 : (uintptr_t)want.ss_sp;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        fs_alt_size = off ? 0 : want.ss_size;
    }
    errno = saved;
    return (int)rc;
}

/* After a successful switch to MODE (strict, or a filter). */
FS_EARLY static void entered(unsigned long mode)
{
    if (mode == SECCOMP_MODE_STRICT)
        fs_thread_strict = true;
    else
        __atomic_store_n(&fs_filtered, true, __ATOMIC_RELAXED);
}

FS_EARLY int prctl(int option, ...)
{
    va_list ap;
    va_start(ap, option);
    const unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long);
    const unsigned long a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
    va_end(ap);
    const long rc = syscall(SYS_prctl, option, a2, a3, a4, a5);
    if (rc == 0 && option == PR_SET_SECCOMP)
        entered(a2);
    return (int)rc;
}

/* The same calls made through syscall() (interpose.c).  seccomp(2): strict mode, or a
 * filter installed (its result is a listener's descriptor with NEW_LISTENER); its
 * other operations (GET_ACTION_AVAIL, GET_NOTIF_SIZES) install nothing. */
void fs_guard_after_syscall(long number, const long *a, long rc)
{
    if (number == SYS_seccomp && rc >= 0) {
        if ((unsigned)a[0] == SECCOMP_SET_MODE_STRICT && rc == 0)
            entered(SECCOMP_MODE_STRICT);
        else if ((unsigned)a[0] == SECCOMP_SET_MODE_FILTER)
            entered(SECCOMP_MODE_FILTER);
    } else if (number == SYS_prctl && rc == 0 && (int)a[0] == PR_SET_SECCOMP) {
        entered((unsigned long)a[1]);
    }
}

bool fs_guard_filtered_at_start(void)
{
    char buf[4096];
    const int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    const ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = 0;
    const char *p = strstr(buf, "\nSeccomp:");
    if (p == NULL)
        return false;
    p += 9;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '0')
        return false;
    __atomic_store_n(&fs_filtered, true, __ATOMIC_RELAXED);
    return true;
}
