/*
 * altstack.c — hints on a signal handler's alternate stack.
 *
 * A handler installed with SA_ONSTACK runs on the stack the program gave sigaltstack,
 * often little more than the kernel's minimum signal frame.  A hint made there (a
 * hinted loop in the handler) runs library code below the handler's frame: up to
 * FS_HINT_STACK bytes (internal.h; test_altstack measures it), which a stack sized for
 * the program's own handler may not have: a probe's handler wrote 1,824 bytes below a
 * 4,912-byte stack in the hinted build only.  So sigaltstack is interposed and each
 * thread remembers its alternate stack; a hint made on it with less than FS_HINT_STACK
 * left is dropped before it calls anything (fs_stack_short: api.c's entry, a loop
 * nest's set-up and its steps), counted as dropped_in_handler.  A new thread starts
 * without an alternate stack (its thread-local record is zero) and a forked child keeps
 * its parent's, as the kernel does.  A stack set with a raw system call is not seen:
 * hints there run as on any stack.
 */
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

__thread uintptr_t fs_alt_lo __attribute__((tls_model("initial-exec")));
__thread uintptr_t fs_alt_size __attribute__((tls_model("initial-exec")));
unsigned long fs_global_short_stack;

int sigaltstack(const stack_t *ss, stack_t *old)
{
    /* The system call itself: glibc's wrapper is no more than that. */
    long rc = syscall(SYS_sigaltstack, ss, old);
    if (rc == 0 && ss != NULL) {
        const bool off = (ss->ss_flags & SS_DISABLE) != 0;
        fs_alt_lo = off ? 0 : (uintptr_t)ss->ss_sp;
        fs_alt_size = off ? 0 : ss->ss_size;
    }
    return (int)rc;
}
