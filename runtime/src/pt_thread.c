/*
 * pt_thread.c — create_prefetch_thread (paper Section 3.1): the thread that runs the
 * compiler's slice of the program ahead of it.  The slice is the program's own code, cut
 * down; whatever it does, it must not change what the program computes, writes or reads.
 * So the thread is confined before the slice runs:
 *   - every signal blocked (the program's handlers run on its own threads) but the
 *     synchronous ones of the fault net (below);
 *   - a descriptor table of its own, emptied (close_range(0, ~0U, CLOSE_RANGE_UNSHARE):
 *     unshare(CLONE_FILES) would keep a copy of every descriptor the program had open,
 *     holding its pipes and sockets open after the program closes them, so a reader of
 *     them would never see end-of-file); its opens then never take a number the
 *     program's next open() would have returned;
 *   - a seccomp filter on this thread only (no TSYNC; PR_SET_NO_NEW_PRIVS is per thread
 *     too) failing every system call that writes a file, changes its metadata or the
 *     process's shared state, signals, or makes threads and processes; exit_group ends
 *     only this thread.  The setxid calls are let through: glibc's setuid/setgid & co.
 *     make every thread of the process call them (its SIGSETXID broadcast,
 *     nptl_setxid.c) and abort the program when one thread fails where another succeeded;
 *     they write no file.  kill(own pid, SIGSEGV|SIGBUS|SIGFPE|SIGILL) is let through too,
 *     for the fault net alone (below);
 *   - its stack, signal stack and arena between two 32 GiB guards (pt_arena.c).
 * If any of that fails, the slice never runs.  An error anywhere stops the thread alone
 * (one statistic says why), never the program: no abort, no exit, and no malloc or stdio
 * on this thread (the program's locks are not ours to take; the arena is pt_arena.c).
 *
 * The fault net.  The slice computes with predicted data: a wrong index may fault.
 * foresight__pt_start installs, before the thread exists, one handler for SIGSEGV, SIGBUS,
 * SIGFPE and SIGILL (SA_SIGINFO | SA_ONSTACK | SA_NODEFER), keeping the program's
 * previous actions.  On the prefetch thread, a fault (si_code > 0: the kernel's) leaves
 * the handler with siglongjmp to where the thread ends, on its signal stack (a stack
 * overflow still gets a frame), with stop reason "fault (SIGSEGV at ADDR)".  SA_NODEFER
 * because the jump is made with sigsetjmp(.., 0) (no mask saved: no system call per
 * start): the mask the handler runs with, the thread's own, is then the mask after the
 * jump, without the signal added.  A fault in the handler itself would re-enter it; it
 * touches nothing but two static words and the jump buffer.  Leaving a handler with
 * siglongjmp is what POSIX allows for a handler not nested in another; the kernel knows
 * the jump left the signal stack from the stack pointer (on_sig_stack), and glibc's
 * fortified longjmp, which checks jumps to a lower address, accepts them from the signal
 * stack (here the stack lies above it anyway: pt_arena.c).
 * On any other thread, the handler does what the kernel would have done without it: it
 * calls the previous handler (SA_SIGINFO or not, with its sa_mask and SA_NODEFER honoured,
 * SA_RESETHAND by forgetting it), ignores a sent signal that was SIG_IGN, and for SIG_DFL
 * (or SIG_IGN, which a fault overrides) puts SIG_DFL back and returns, so the fault
 * happens again and kills as before (core dump included); a sent signal is raised again.
 * A process-directed signal the kernel gave to the prefetch thread (every program thread
 * blocks it) is sent again to the process with the thread's four signals blocked, so it
 * waits for a program thread as it would have, and the thread stops.  The handlers stay
 * installed for the life of the process; one the program installs later replaces ours
 * (and the thread's faults then kill the process: the compiler refuses a thread for a
 * program that installs handlers for these signals).
 *
 * The clock: the computation thread advances clock.id (foresight_pt_tick, inline); the
 * prefetch thread sleeps on a futex word of the library's with a 10 ms timeout after
 * setting clock.wake_at, and a tick that reaches wake_at wakes it.  The tick's release
 * store and relaxed load may pass the thread's store of wake_at and load of id (no fence
 * on the program's side, by design: a tick costs one store), so a wake can be missed:
 * the timeout bounds what that costs.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/close_range.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

struct foresight_pt_clock fs_pt_clock __attribute__((aligned(64)));
static uint32_t wake_word __attribute__((aligned(64))); /* the futex foresight__pt_wake bumps */
static int started;                                     /* a thread was started (once) */
static void (*pt_run)(void);

/* Anchored runs (foresight_pt_anchor): the thread, once its run is over, waits for the
 * next (run_word bumped) instead of ending. */
static bool anchored;
static uint32_t run_word __attribute__((aligned(64)));
static int run_idle;        /* 1 while the thread waits for a run */
static uint64_t run_base;   /* the program's call ID when the run was anchored */
static pid_t anchor_tid;    /* the program thread that anchored it */
static pthread_mutex_t anchor_mu = PTHREAD_MUTEX_INITIALIZER;
int fs_pt_abandon;
static volatile sig_atomic_t gave_up; /* the stop was fs_pt_give_up's */
unsigned long fs_global_pt_runs, fs_global_pt_gave_up;
/* Runs that did nothing (every prediction expired, or none made) in a row: after K of
 * them an idle thread takes only every 2^K-th anchor (K at most 10), so a function called
 * too often or too briefly for a run to lead costs the program one look per call. */
static unsigned useless_runs, anchors_to_skip;
static int last_run_useless = -1; /* set by the thread as a run ends; -1: looked at */
static int starting;         /* foresight__pt_start is between its memory and its thread */

bool fs_pt_is_anchored(void)
{
    return __atomic_load_n(&anchored, __ATOMIC_ACQUIRE);
}

__thread bool fs_pt_self __attribute__((tls_model("initial-exec")));
/* The prefetch thread's own: where fs_pt_stop returns to, and why. */
static sigjmp_buf stop_jump;
static const char *stop_reason;
static int stop_errno;
static unsigned long watched; /* covered calls and messages at the watchdog's last look */
/* Set while the slice runs: the fault net jumps to stop_jump only then. */
static volatile sig_atomic_t net_armed;

/* The thread, for its CPU time: read through pthread_getcpuclockid while it runs, and by
 * the thread itself as it ends (cpu_ns, then ended). */
static pthread_t pt_thread;
static int pt_created, pt_ended;
static pid_t pt_tid;                /* its kernel thread ID (retire: until it is gone) */
static uint32_t park_release;       /* futex: an ended thread parks until this is set */
static const char *retire_reason;   /* set: the thread is asked to end (fs_pt_retire) */
static uint64_t pt_cpu_ns;

unsigned long fs_global_pt_started, fs_global_pt_calls, fs_global_pt_lead_reads,
    fs_global_pt_lead_bytes, fs_global_pt_expired, fs_global_pt_issued,
    fs_global_pt_issued_bytes, fs_global_pt_sleeps, fs_global_pt_mispredicts,
    fs_global_pt_left_to_readahead, fs_global_pt_readahead_off, fs_global_pt_readahead_on,
    fs_global_pt_cached, fs_global_pt_cached_bytes;
const char *fs_global_pt_stopped;
int fs_global_pt_stopped_errno;

/* The synchronous signals of the fault net, and the program's actions before it. */
static const int net_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
static const char *const net_names[] = {"SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL"};
#define NNET (sizeof net_signals / sizeof net_signals[0])
static struct sigaction prev_action[NNET];
static int net_installed; /* the net is in place: the program's handlers are recorded */
static int real_sigaction(int sig, const struct sigaction *act, struct sigaction *old);

/* ---- the seccomp filter ---- */

#if defined(__x86_64__) && !defined(__ILP32__)
#define PT_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PT_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

/* System calls newer than the build's headers (numbers shared by every architecture). */
#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
#ifndef __NR_setxattrat
#define __NR_setxattrat 463
#endif
#ifndef __NR_removexattrat
#define __NR_removexattrat 466
#endif

/* Failed with EPERM whatever their arguments.  Legacy calls arm64 lacks are #ifdef'd. */
static const int denied[] = {
    /* writing data */
    __NR_write, __NR_writev, __NR_pwrite64, __NR_pwritev, __NR_pwritev2, __NR_ftruncate,
    __NR_truncate, __NR_fallocate, __NR_sendfile, __NR_copy_file_range, __NR_splice,
    __NR_tee, __NR_vmsplice, __NR_msync, __NR_io_uring_setup, __NR_process_vm_writev,
    /* names and metadata */
    __NR_unlinkat, __NR_renameat2, __NR_mkdirat, __NR_linkat, __NR_symlinkat, __NR_mknodat,
    __NR_fchmod, __NR_fchmodat, __NR_fchmodat2, __NR_fchown, __NR_fchownat, __NR_utimensat,
    __NR_setxattr, __NR_lsetxattr, __NR_fsetxattr, __NR_setxattrat, __NR_removexattr,
    __NR_lremovexattr, __NR_fremovexattr, __NR_removexattrat,
    /* signals (kill: below; a disposition is the process's: abort() on the thread resets
     * SIGABRT's before its last resort, a fault the net catches), programs, processes,
     * threads, other processes' descriptors */
    __NR_rt_sigaction, __NR_tkill, __NR_tgkill, __NR_rt_sigqueueinfo, __NR_rt_tgsigqueueinfo,
    __NR_pidfd_send_signal, __NR_pidfd_getfd, __NR_execve, __NR_execveat, __NR_clone,
    __NR_clone3,
    /* state the program's threads share: directory, umask, limits, session (not the
     * credentials: glibc's setxid broadcast makes every thread set them) */
    __NR_chdir, __NR_fchdir, __NR_chroot, __NR_umask, __NR_setrlimit, __NR_setsid,
    __NR_setpgid, __NR_open_by_handle_at,
#ifdef __NR_unlink
    __NR_unlink, __NR_rename, __NR_renameat, __NR_mkdir, __NR_rmdir, __NR_link,
    __NR_symlink, __NR_mknod, __NR_chmod, __NR_chown, __NR_lchown, __NR_creat,
    __NR_utime, __NR_utimes, __NR_futimesat, __NR_fork, __NR_vfork,
#endif
};


/* The low 32 bits of argument I (int arguments; the upper half is not defined). */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#else
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i) + 4)
#endif

/* A small assembler for the filter: forward jumps to labels, resolved at the end. */
enum {
    L_NEXT = -1, L_EPERM, L_ENOSYS, L_KILL, L_ALLOW, L_OPEN1, L_OPEN2, L_MMAP, L_SIGNAL, NLABELS
};
#define PT_FILTER_MAX 192
struct bpf {
    struct sock_filter ins[PT_FILTER_MAX];
    signed char jt[PT_FILTER_MAX], jf[PT_FILTER_MAX]; /* labels of each jump */
    unsigned n, pos[NLABELS];
};

static void op(struct bpf *b, uint16_t code, uint32_t k, int jt, int jf)
{
    b->ins[b->n] = (struct sock_filter){.code = code, .k = k};
    b->jt[b->n] = (signed char)jt;
    b->jf[b->n] = (signed char)jf;
    b->n++;
}

static void load(struct bpf *b, uint32_t off)
{
    op(b, BPF_LD | BPF_W | BPF_ABS, off, L_NEXT, L_NEXT);
}

static void ret(struct bpf *b, uint32_t action)
{
    op(b, BPF_RET | BPF_K, action, L_NEXT, L_NEXT);
}

/* Resolves the jumps; false if one is out of reach (cannot happen with this program). */
static bool resolve(struct bpf *b)
{
    for (unsigned i = 0; i < b->n; i++) {
        unsigned t = b->jt[i] == L_NEXT ? i + 1 : b->pos[(int)b->jt[i]];
        unsigned f = b->jf[i] == L_NEXT ? i + 1 : b->pos[(int)b->jf[i]];
        if (t <= i || f <= i || t - i - 1 > 255 || f - i - 1 > 255)
            return false;
        b->ins[i].jt = (uint8_t)(t - i - 1);
        b->ins[i].jf = (uint8_t)(f - i - 1);
    }
    return true;
}

#ifdef PT_AUDIT_ARCH
/* PID: the process's, to which the fault net may send its four signals. */
static bool build_filter(struct bpf *b, pid_t pid)
{
    b->n = 0;
    load(b, offsetof(struct seccomp_data, arch));
    op(b, BPF_JMP | BPF_JEQ | BPF_K, PT_AUDIT_ARCH, L_NEXT, L_EPERM);
    load(b, offsetof(struct seccomp_data, nr));
#ifdef __x86_64__
    /* x32 system calls (this bit set) would pass every number test below. */
    op(b, BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, L_EPERM, L_NEXT);
#endif
    op(b, BPF_JMP | BPF_JEQ | BPF_K, __NR_kill, L_SIGNAL, L_NEXT);
    for (size_t i = 0; i < sizeof denied / sizeof denied[0]; i++)
        op(b, BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)denied[i], L_EPERM, L_NEXT);
    op(b, BPF_JMP | BPF_JEQ | BPF_K, __NR_exit_group, L_KILL, L_NEXT);
    op(b, BPF_JMP | BPF_JEQ | BPF_K, __NR_openat2, L_ENOSYS, L_NEXT);
#ifdef __NR_open
    op(b, BPF_JMP | BPF_JEQ | BPF_K, __NR_open, L_OPEN1, L_NEXT);
#endif
    op(b, BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, L_OPEN2, L_NEXT);
    op(b, BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap, L_MMAP, L_NEXT);
    ret(b, SECCOMP_RET_ALLOW);
    b->pos[L_OPEN1] = b->n; /* open(path, flags) */
    load(b, ARG_LO(1));
    op(b, BPF_JMP | BPF_JSET | BPF_K, FS_PT_WRITE_FLAGS, L_EPERM, L_ALLOW);
    b->pos[L_OPEN2] = b->n; /* openat(dirfd, path, flags) */
    load(b, ARG_LO(2));
    op(b, BPF_JMP | BPF_JSET | BPF_K, FS_PT_WRITE_FLAGS, L_EPERM, L_ALLOW);
    b->pos[L_MMAP] = b->n; /* mmap(addr, len, prot, flags): shared and writable */
    load(b, ARG_LO(3));
    op(b, BPF_JMP | BPF_JSET | BPF_K, MAP_SHARED, L_NEXT, L_ALLOW); /* also _VALIDATE */
    load(b, ARG_LO(2));
    op(b, BPF_JMP | BPF_JSET | BPF_K, PROT_WRITE, L_EPERM, L_ALLOW);
    b->pos[L_SIGNAL] = b->n; /* kill(pid, sig): the process, one of the net's signals */
    load(b, ARG_LO(0));
    op(b, BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)pid, L_NEXT, L_EPERM);
    load(b, ARG_LO(1));
    for (size_t i = 0; i < NNET; i++)
        op(b, BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)net_signals[i], L_ALLOW, L_NEXT);
    b->pos[L_EPERM] = b->n;
    ret(b, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
    b->pos[L_ENOSYS] = b->n;
    ret(b, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA));
    b->pos[L_KILL] = b->n;
    ret(b, SECCOMP_RET_KILL_THREAD);
    b->pos[L_ALLOW] = b->n;
    ret(b, SECCOMP_RET_ALLOW);
    return resolve(b);
}
#endif

/* Confines the calling thread (above); NULL, or why it could not, with *ERR. */
static const char *confine(int *err)
{
    *err = 0;
    if (syscall(SYS_close_range, 0u, ~0u, CLOSE_RANGE_UNSHARE) != 0) {
        *err = errno;
        return "no descriptor table of its own (close_range)";
    }
    fs_pt_issue_open(); /* its ring, if any, before the filter refuses io_uring_setup */
#ifndef PT_AUDIT_ARCH
    return "no seccomp filter for this architecture";
#else
    static struct bpf b; /* built once: only the one prefetch thread gets here */
    if (!build_filter(&b, getpid()))
        return "seccomp filter out of reach";
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        *err = errno;
        return "no PR_SET_NO_NEW_PRIVS";
    }
    struct sock_fprog prog = {.len = (unsigned short)b.n, .filter = b.ins};
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
        *err = errno;
        return "no seccomp filter";
    }
    return NULL;
#endif
}

/* ---- the fault net ---- */

static char fault_text[64]; /* "fault (SIGSEGV at 0x...)": written once, by the handler */

static void fault_reason(size_t i, const void *addr)
{
    char *t = fault_text;
    for (const char *p = "fault ("; *p; p++)
        *t++ = *p;
    for (const char *p = net_names[i]; *p; p++)
        *t++ = *p;
    for (const char *p = " at 0x"; *p; p++)
        *t++ = *p;
    uintptr_t a = (uintptr_t)addr;
    int digits = 1;
    while (digits < (int)(2 * sizeof a) && (a >> (4 * digits)) != 0)
        digits++;
    for (int d = digits - 1; d >= 0; d--)
        *t++ = "0123456789abcdef"[(a >> (4 * d)) & 15];
    *t++ = ')';
    *t = 0;
}

static void sync_signals(sigset_t *set)
{
    sigemptyset(set);
    for (size_t i = 0; i < NNET; i++)
        sigaddset(set, net_signals[i]);
}

/* What the kernel would have done with signal I (SIG) on this thread without the net. */
static void forward(size_t i, int sig, siginfo_t *si, void *uc)
{
    struct sigaction p = prev_action[i];
    const bool sent = si->si_code <= 0; /* kill, tgkill, sigqueue: not a fault */
    if (p.sa_handler == SIG_IGN && sent)
        return;
    if (p.sa_handler == SIG_DFL || p.sa_handler == SIG_IGN) {
        /* The default action (a fault overrides SIG_IGN): put it back; the faulting
         * instruction runs again on return, a sent signal is raised again. */
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        sigemptyset(&dfl.sa_mask);
        real_sigaction(sig, &dfl, NULL);
        if (sent)
            raise(sig);
        return;
    }
    sigset_t mask = p.sa_mask;
    if (!(p.sa_flags & SA_NODEFER))
        sigaddset(&mask, sig);
    pthread_sigmask(SIG_BLOCK, &mask, NULL); /* undone by our return (sigreturn) */
    if (p.sa_flags & SA_RESETHAND) {
        /* Handled once, then the default: the net stays, forwarding to SIG_DFL. */
        prev_action[i].sa_flags = 0;
        prev_action[i].sa_handler = SIG_DFL;
    }
    if (p.sa_flags & SA_SIGINFO)
        p.sa_sigaction(sig, si, uc);
    else
        p.sa_handler(sig);
}

static void fault_net(int sig, siginfo_t *si, void *uc)
{
    size_t i = 0;
    while (i < NNET && net_signals[i] != sig)
        i++;
    if (i == NNET)
        return; /* not installed for it */
    const int e = errno;
    if (fs_pt_self && !net_armed && si->si_code <= 0)
        return; /* a retire request after the slice stopped: nothing left to stop */
    if (fs_pt_self && net_armed) {
        net_armed = 0;
        const char *retire = __atomic_load_n(&retire_reason, __ATOMIC_ACQUIRE);
        if (retire != NULL && si->si_code == SI_TKILL && sig == SIGBUS)
            fs_pt_stop(retire, 0); /* fs_pt_retire's request */
        if (si->si_code == SI_TIMER && sig == SIGBUS) {
            /* The watchdog (run_slice): a second of the thread's CPU gone by. */
            const unsigned long done = __atomic_load_n(&fs_global_pt_calls, __ATOMIC_RELAXED) +
                                       __atomic_load_n(&fs_global_pt_received, __ATOMIC_RELAXED);
            if (done == watched)
                fs_pt_stop("spun a second of CPU with no I/O call (a loop on data it could not "
                           "read)",
                           0);
            watched = done;
            net_armed = 1;
            errno = e;
            return;
        }
        if (si->si_code > 0) { /* the slice's fault */
            fault_reason(i, si->si_addr);
            fs_pt_stop(fault_text, 0);
        }
        /* A signal sent to the process that no program thread took: blocked here, sent
         * again, it waits for one as it would have without this thread. */
        sigset_t set;
        sync_signals(&set);
        pthread_sigmask(SIG_BLOCK, &set, NULL);
        kill(getpid(), sig);
        fs_pt_stop("a signal sent to the process (passed on to its threads)", 0);
    }
    errno = e;
    forward(i, sig, si, uc);
}

/* Installs the net; false (nothing installed) when sigaction fails. */
static bool install_fault_net(void)
{
    struct sigaction net = {.sa_sigaction = fault_net,
                            .sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER};
    sigemptyset(&net.sa_mask);
    for (size_t i = 0; i < NNET; i++)
        if (real_sigaction(net_signals[i], &net, &prev_action[i]) != 0) {
            while (i-- > 0)
                real_sigaction(net_signals[i], &prev_action[i], NULL);
            return false;
        }
    __atomic_store_n(&net_installed, 1, __ATOMIC_RELEASE);
    return true;
}

/* ---- the program's handlers for the net's signals, once the net is in place ----
 *
 * A handler for SIGSEGV, SIGBUS, SIGFPE or SIGILL that the program installs after the
 * net (from a file the compiler did not see, or a library: MPI_Init, a crash reporter)
 * would replace it, and a fault of the prefetch thread on predicted data would then run
 * the program's handler on that thread: the process killed, or its exit handlers run
 * where writes fail.  So the library's sigaction and signal (the program's calls bind to
 * them: the library is linked before libc) keep the net and record the program's
 * handler as the one the net forwards the program's own faults to (forward(): its flags
 * and mask as the kernel would apply them); the program reads back what it set.  Every
 * other signal, and every call before the net exists, is libc's.  Not covered: calls
 * that do not go through these symbols (a raw rt_sigaction system call, libc's own, a
 * sanitizer's interceptor, which binds first). */
/* libc's functions behind these, found at load (dlsym is not async-signal-safe, and a
 * program may call signal() in a handler); later if a sanitizer's start-up calls first. */
enum { R_SIGACTION, R_SIGNAL, R_BSD_SIGNAL, R_SYSV_SIGNAL, R_SYSV_SIGNAL2, NREAL };
static const char *const real_names[NREAL] = {"sigaction", "signal", "bsd_signal",
                                              "sysv_signal", "__sysv_signal"};
static void *real_fn[NREAL];

FS_EARLY static void *real(int i)
{
    return fs_next_fn(&real_fn[i], real_names[i]);
}

__attribute__((constructor)) static void find_real(void)
{
    fs_next_all(real_fn, real_names, NREAL);
}

FS_EARLY static int real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    int (*next)(int, const struct sigaction *, struct sigaction *) =
        (int (*)(int, const struct sigaction *, struct sigaction *))real(R_SIGACTION);
    if (next == NULL) { /* libc always has it */
        errno = ENOSYS;
        return -1;
    }
    return next(sig, act, old);
}

FS_EARLY static size_t net_index(int sig)
{
    size_t i = 0;
    while (i < NNET && net_signals[i] != sig)
        i++;
    return i;
}

/* The program's ACT for net signal I, recorded (OLD: the one it replaces). */
static void record(size_t i, const struct sigaction *act, struct sigaction *old)
{
    sigset_t net, saved;
    sync_signals(&net);
    pthread_sigmask(SIG_BLOCK, &net, &saved); /* not torn by a fault of this thread */
    if (old != NULL)
        *old = prev_action[i];
    if (act != NULL) {
        prev_action[i] = *act;
        /* The kernel runs the net: it restarts interrupted calls as the program's would. */
        struct sigaction net = {.sa_sigaction = fault_net,
                                .sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER |
                                            (act->sa_flags & SA_RESTART)};
        sigemptyset(&net.sa_mask);
        real_sigaction(net_signals[i], &net, NULL);
    }
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
}

FS_EARLY int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    const size_t i = net_index(sig);
    if (i == NNET || !__atomic_load_n(&net_installed, __ATOMIC_ACQUIRE))
        return real_sigaction(sig, act, old);
    record(i, act, old);
    return 0;
}

/* signal(3) as glibc's: BSD semantics (SA_RESTART, the signal blocked in its handler);
 * sysv_signal's: SA_RESETHAND | SA_NODEFER. */
FS_EARLY static sighandler_t set_handler(int sig, sighandler_t h, int flags, int which)
{
    const size_t i = net_index(sig);
    if (i == NNET || !__atomic_load_n(&net_installed, __ATOMIC_ACQUIRE)) {
        sighandler_t (*next)(int, sighandler_t) = (sighandler_t(*)(int, sighandler_t))real(which);
        if (next != NULL)
            return next(sig, h);
        errno = ENOSYS;
        return SIG_ERR;
    }
    if (h == SIG_ERR) {
        errno = EINVAL;
        return SIG_ERR;
    }
    struct sigaction act = {.sa_handler = h, .sa_flags = flags}, old;
    sigemptyset(&act.sa_mask);
    if (!(flags & SA_NODEFER))
        sigaddset(&act.sa_mask, sig);
    record(i, &act, &old);
    return old.sa_handler;
}

FS_EARLY sighandler_t signal(int sig, sighandler_t h)
{
    return set_handler(sig, h, SA_RESTART, R_SIGNAL);
}

FS_EARLY sighandler_t bsd_signal(int sig, sighandler_t h)
{
    return set_handler(sig, h, SA_RESTART, R_BSD_SIGNAL);
}

FS_EARLY sighandler_t sysv_signal(int sig, sighandler_t h)
{
    return set_handler(sig, h, SA_RESETHAND | SA_NODEFER, R_SYSV_SIGNAL);
}

FS_EARLY sighandler_t __sysv_signal(int sig, sighandler_t h)
{
    return set_handler(sig, h, SA_RESETHAND | SA_NODEFER, R_SYSV_SIGNAL2);
}

/* ---- the thread ---- */

/* What the thread's end needs, kept off its stack: the slice computes with predicted data
 * and may write past a buffer of its own, up through every frame above it (the stack
 * guard's fault then ends it, and nothing may come back through those frames). */
static struct {
    const char *why;
    int err;
    bool on_alt;
    stack_t old;
    sigset_t sync;
    char *guard; /* a page made PROT_NONE between the slice's frames and those above */
} fin;

static _Noreturn void pt_finish(void);

/* Runs the slice, then ends the thread (pt_finish): from here, after a stop, nothing
 * returns through the frames the slice ran under.  Below this frame, and above the slice's,
 * a page of the stack is made PROT_NONE: a store running up from one of the slice's
 * buffers faults there before it reaches this frame, the thread's start and, at the top
 * of its stack, glibc's thread block (its TLS, the pointer guard siglongjmp needs: a
 * corrupted one made the stop jump to nowhere, and the process die). */
extern void __lsan_do_leak_check(void) __attribute__((weak));

/* The watchdog: a timer on the thread's own CPU clock signals it (SIGBUS, SI_TIMER) each
 * second it runs; the fault net stops it where no covered call or channel message came in
 * between: a loop on data it could not read (a length from a failed read) would otherwise
 * spin for as long as the program runs, and count against its CPU time. */
static timer_t watchdog;
static bool watching;

static void watch(void)
{
    watched = __atomic_load_n(&fs_global_pt_calls, __ATOMIC_RELAXED) +
              __atomic_load_n(&fs_global_pt_received, __ATOMIC_RELAXED);
    struct sigevent ev = {.sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGBUS};
    ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &watchdog) != 0)
        return;
    const struct itimerspec every = {.it_interval = {1, 0}, .it_value = {1, 0}};
    watching = timer_settime(watchdog, 0, &every, NULL) == 0;
    if (!watching)
        timer_delete(watchdog);
}

/* An anchored thread between runs: its predictions gone (the program's readahead back),
 * it waits for foresight__pt_anchor to hand it the next; false when the library's threads
 * are to end instead (fs_pt_retire: stop_reason its reason). */
static bool next_run(void)
{
    __atomic_store_n(&fs_pt_clock.lead, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&fs_pt_clock.wake_at, 0, __ATOMIC_RELAXED);
    const uint32_t seen = __atomic_load_n(&run_word, __ATOMIC_ACQUIRE);
    __atomic_store_n(&run_idle, 1, __ATOMIC_RELEASE);
    for (;;) {
        const char *retire = __atomic_load_n(&retire_reason, __ATOMIC_ACQUIRE);
        if (retire != NULL || __atomic_load_n(&fs_retiring, __ATOMIC_SEQ_CST)) {
            stop_reason = retire != NULL ? retire : "ended: the library's threads end";
            return false;
        }
        if (__atomic_load_n(&run_word, __ATOMIC_ACQUIRE) != seen)
            return true;
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 100000000};
        syscall(SYS_futex, &run_word, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
    }
}

static _Noreturn void run_slice(void)
{
    sync_signals(&fin.sync);
    char *pad = __builtin_alloca(3 * FS_PAGE);
    __asm__ volatile("" : : "r"(pad) : "memory");
    char *guard = (char *)(((uintptr_t)pad + FS_PAGE - 1) & ~(uintptr_t)(FS_PAGE - 1));
    /* (not under LeakSanitizer, whose scan of every thread's stack at exit faulted on it:
     * a helper's probe, ASan builds exiting 1 in 2 runs of 10) */
    if (__lsan_do_leak_check == NULL && mprotect(guard, FS_PAGE, PROT_NONE) == 0)
        fin.guard = guard;
    for (;;) {
        const unsigned long calls0 = __atomic_load_n(&fs_global_pt_calls, __ATOMIC_RELAXED),
                            expired0 = __atomic_load_n(&fs_global_pt_expired, __ATOMIC_RELAXED);
        if (anchored) { /* a fresh run from the program's call ID at the anchor */
            fs_pt_sched_rebase(__atomic_load_n(&run_base, __ATOMIC_ACQUIRE));
            __atomic_fetch_add(&fs_global_pt_runs, 1, __ATOMIC_RELAXED);
        }
        gave_up = 0;
        watch();
        if (sigsetjmp(stop_jump, 0) == 0) {
            net_armed = 1;
            pthread_sigmask(SIG_UNBLOCK, &fin.sync, NULL);
            pt_run();
            stop_reason = NULL;
        }
        pthread_sigmask(SIG_BLOCK, &fin.sync, NULL); /* a fault from here on is the library's */
        net_armed = 0;
        if (watching)
            timer_delete(watchdog);
        if (!anchored || (stop_reason != NULL && !gave_up))
            break;
        if (stop_reason == NULL) {
            fs_pt_flush(-1);
        } else {
            fs_pt_drop_pending();
            __atomic_fetch_add(&fs_global_pt_gave_up, 1, __ATOMIC_RELAXED);
        }
        /* What the run opened and allocated goes with it (its frames are gone). */
        fs_pt_files_reset();
        fs_pt_stdio_reset();
        fs_pt_arena_release();
        const unsigned long calls = __atomic_load_n(&fs_global_pt_calls, __ATOMIC_RELAXED) -
                                    calls0;
        /* Useless: given up before its first call, or every prediction expired; a run
         * that returned without a call (a function that only opens) says nothing. */
        const bool useless =
            calls == 0 ? stop_reason != NULL
                       : __atomic_load_n(&fs_global_pt_expired, __ATOMIC_RELAXED) - expired0 >=
                             calls;
        __atomic_store_n(&last_run_useless, calls == 0 && stop_reason == NULL ? -1 : useless,
                         __ATOMIC_RELEASE);
        if (!next_run())
            break;
    }
    fin.err = stop_errno;
    fin.why = stop_reason;
    if (fin.guard != NULL)
        mprotect(fin.guard, FS_PAGE, PROT_READ | PROT_WRITE);
    if (fin.why == NULL)
        fs_pt_flush(-1);
    pt_finish();
}

static void *pt_main(void *arg)
{
    (void)arg;
    fs_pt_self = true;
    __atomic_store_n(&pt_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
    fs_trace_exclude_self(); /* its faults are not the program's */
    if (__atomic_load_n(&fs_retiring, __ATOMIC_SEQ_CST)) { /* made just before the end */
        fin.why = __atomic_load_n(&retire_reason, __ATOMIC_ACQUIRE);
        if (fin.why == NULL)
            fin.why = "ended: the library's threads end";
        pt_finish(); /* parked: fs_pt_retire has it go */
    }
    fs_thread_lock_stack();
    stack_t alt = {.ss_flags = 0};
    alt.ss_sp = fs_pt_altstack(&alt.ss_size);
    fin.on_alt = sigaltstack(&alt, &fin.old) == 0;
    if (!fin.on_alt) {
        fin.err = errno;
        fin.why = "no signal stack (sigaltstack)";
    }
    if (fin.why == NULL)
        fin.why = confine(&fin.err);
    if (fin.why == NULL)
        run_slice();
    pt_finish();
}

static _Noreturn void pt_finish(void)
{
    const char *why = fin.why;
    const int err = fin.err;
    if (why != NULL) {
        /* Stopped: its predictions are gone, so the program's readahead comes back. */
        __atomic_store_n(&fs_pt_clock.lead, 0, __ATOMIC_RELEASE);
        __atomic_store_n(&fs_global_pt_stopped_errno, err, __ATOMIC_RELAXED);
        __atomic_store_n(&fs_global_pt_stopped, why, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&fs_pt_clock.wake_at, 0, __ATOMIC_RELAXED);
    fs_pt_chan_close(); /* the program's sends cost a load from now on */
    /* A sanitizer's thread exit unmaps the signal stack it finds: give it back its own. */
    if (fin.on_alt)
        sigaltstack(&fin.old, NULL);
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
        __atomic_store_n(&pt_cpu_ns, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec,
                         __ATOMIC_RELAXED);
    fs_thread_unhold(); /* its stack goes with it (workers.c) */
    __atomic_store_n(&pt_ended, 1, __ATOMIC_RELEASE);
    /* Parked, not gone: a thread ending while LeakSanitizer stops the world at exit is one
     * it cannot suspend ("Running thread ... was not suspended", then false leaks and exit
     * status 1 in an ASan build: a helper's probe, 5 runs in 6).  Only fs_pt_retire, which
     * unmaps its stack, has it end. */
    while (!__atomic_load_n(&park_release, __ATOMIC_ACQUIRE))
        syscall(SYS_futex, &park_release, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    /* Counted out here: pthread_exit skips the rest of counted_main (workers.c), and
     * fs_threads_retire waits for the count. */
    fs_library_thread_ends();
    pthread_exit(NULL);
}

_Noreturn void fs_pt_give_up(const char *reason)
{
    gave_up = 1;
    fs_pt_stop(reason, 0);
}

_Noreturn void fs_pt_stop(const char *reason, int err)
{
    stop_reason = reason;
    stop_errno = err;
    siglongjmp(stop_jump, 1);
}

void foresight__pt_exit(void)
{
    if (!fs_pt_self)
        pthread_exit(NULL); /* not the prefetch thread: it ends the caller's */
    fs_pt_stop(NULL, 0);
}

bool fs_pt_ended(void)
{
    return __atomic_load_n(&pt_ended, __ATOMIC_ACQUIRE) != 0;
}

/* FORESIGHT_PT_DRAIN=on, for tests: at the program's exit, wait (5 s at most) until the
 * thread has made every covered call the program made, or has ended, so that its counters
 * say what its slice did, not how far the scheduler let it get before the process ended
 * (a program of a few milliseconds may end before the thread has run at all). */
void fs_pt_drain(void)
{
    if (!fs_cfg.pt_drain || !__atomic_load_n(&pt_created, __ATOMIC_ACQUIRE))
        return;
    for (int i = 0; i < 5000; i++) {
        if (fs_pt_ended() || __atomic_load_n(&run_idle, __ATOMIC_ACQUIRE) ||
            __atomic_load_n(&fs_global_pt_calls, __ATOMIC_RELAXED) >=
                __atomic_load_n(&fs_pt_clock.id, __ATOMIC_ACQUIRE))
            return;
        foresight__pt_wake();
        usleep(1000);
    }
}

double fs_pt_cpu_seconds(void)
{
    if (!__atomic_load_n(&pt_created, __ATOMIC_ACQUIRE))
        return 0;
    if (!__atomic_load_n(&pt_ended, __ATOMIC_ACQUIRE)) {
        /* Its stack (and glibc's descriptor of it, at its top) is never unmapped, so the
         * handle stays readable; an ended thread's gives ESRCH or EINVAL, or a value the
         * second look at pt_ended discards. */
        clockid_t clock;
        struct timespec ts;
        if (pthread_getcpuclockid(pt_thread, &clock) == 0 && clock_gettime(clock, &ts) == 0 &&
            !__atomic_load_n(&pt_ended, __ATOMIC_ACQUIRE))
            return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    }
    return (double)__atomic_load_n(&pt_cpu_ns, __ATOMIC_RELAXED) / 1e9;
}

/* The child of a fork has no prefetch thread: its ticks must wake nothing. */
static void pt_after_fork_child(void)
{
    __atomic_store_n(&fs_pt_clock.wake_at, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&fs_pt_clock.lead, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&pt_created, 0, __ATOMIC_RELAXED);
    /* Its memory is the parent's thread's: gone here, so that the child's limits and
     * mlockall are its own (a helper's review: a child's setrlimit then malloc failed). */
    fs_pt_chan_release();
    fs_pt_memory_release();
}

static struct foresight_pt_clock *not_started(const char *why)
{
    __atomic_store_n(&fs_global_pt_stopped, why, __ATOMIC_RELEASE);
    return NULL;
}

/* A finite RLIMIT_AS or RLIMIT_DATA the thread's memory would count against, or a finite
 * RLIMIT_CPU its time would. */
static const char *limited(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_CPU, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        return "not started: RLIMIT_CPU is finite (the thread's time would come out of the "
               "program's)";
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        return "not started: RLIMIT_AS is finite (the thread's memory would come out of the "
               "program's)";
    if (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        return "not started: RLIMIT_DATA is finite (the thread's memory would come out of "
               "the program's)";
    return NULL;
}

static struct foresight_pt_clock *start(void (*init)(void), void (*run)(void));

struct foresight_pt_clock *foresight__pt_start(void (*init)(void), void (*run)(void))
{
    if (fs_cfg.disabled || !fs_cfg.pt || run == NULL)
        return NULL;
    const char *why = limited();
    if (why != NULL) /* (before started: INIT is not run) */
        return not_started(why);
    int expected = 0;
    if (!__atomic_compare_exchange_n(&started, &expected, 1, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return NULL;
    /* While the memory is mapped without a thread to retire, a program thread's
     * setrlimit or mlockall waits for this to end (fs_pt_retire), and its request is
     * seen below. */
    __atomic_store_n(&starting, 1, __ATOMIC_SEQ_CST);
    struct foresight_pt_clock *c = start(init, run);
    __atomic_store_n(&starting, 0, __ATOMIC_SEQ_CST);
    return c;
}

/* A start that failed after mapping the thread's memory: the memory goes too. */
static struct foresight_pt_clock *not_started_unmapped(const char *why)
{
    fs_pt_chan_release();
    fs_pt_memory_release();
    return not_started(why);
}

static struct foresight_pt_clock *start(void (*init)(void), void (*run)(void))
{
    /* The thread's memory first: INIT allocates its private copies in the arena. */
    if (!fs_pt_memory_init())
        return not_started("could not be created: no memory for its stack");
    if (!fs_pt_chan_init())
        return not_started_unmapped("could not be created: no memory for its channel");
    if (init != NULL)
        init();
    const char *retire = __atomic_load_n(&retire_reason, __ATOMIC_ACQUIRE);
    if (retire != NULL || limited() != NULL) /* set by another thread during INIT */
        return not_started_unmapped(retire != NULL ? retire : limited());
    if (__atomic_load_n(&anchored, __ATOMIC_ACQUIRE)) {
        /* Anchored runs: the arena as INIT left it is what each run's end goes back to;
         * no channel (the program's threads could all send on it, one producer only). */
        fs_pt_arena_mark();
        fs_pt_chan_close();
    }
    pt_run = run;
    fs_pt_sched_reset();
    pthread_atfork(NULL, NULL, pt_after_fork_child);
    if (!install_fault_net())
        return not_started_unmapped("could not be created: no fault net (sigaction)");
    size_t size;
    void *stack = fs_pt_stack(&size);
    fs_pin_give_back(); /* it runs beside the program, on another CPU (pin.c) */
    fs_runtime_wake();  /* its reads are hints: the other threads run too (workers.c) */
    if (!fs_thread_start_on(pt_main, NULL, "foresight-pt", stack, size, &pt_thread))
        return not_started_unmapped("could not be created");
    __atomic_store_n(&pt_created, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&fs_global_pt_started, 1, __ATOMIC_RELAXED);
    return &fs_pt_clock;
}

/* foresight__pt_start's INIT for the first anchored run: the anchor's own, with its
 * arguments. */
static void (*first_init)(const void *);
static const void *first_args;

static void first_anchor_init(void)
{
    if (first_init != NULL)
        first_init(first_args);
}

char *foresight__pt_strdup(const char *s)
{
    if (s == NULL)
        return NULL;
    const int e = errno;
    enum { MAX = 64 << 10 };
    char *copy = NULL;
    size_t have = 0, cap = 0;
    for (;;) { /* up to the end of S's page at a time */
        const size_t page = FS_PAGE - ((uintptr_t)(s + have) & (FS_PAGE - 1));
        if (have + page > cap) {
            const size_t want = have + page + 1;
            char *bigger = foresight__pt_realloc(copy, want);
            if (bigger == NULL)
                break;
            copy = bigger;
            cap = want - 1;
        }
        const struct iovec local = {copy + have, page}, remote = {(void *)(s + have), page};
        if (syscall(SYS_process_vm_readv, getpid(), &local, 1, &remote, 1, 0) !=
            (long)page)
            break;
        const char *nul = memchr(copy + have, 0, page);
        if (nul != NULL) {
            errno = e;
            return copy;
        }
        have += page;
        if (have >= MAX)
            break;
    }
    foresight__pt_free(copy);
    errno = e;
    return NULL;
}

int64_t foresight__pt_offset(int fd)
{
    const int e = errno;
    const off_t off = lseek(fd, 0, SEEK_CUR);
    errno = e;
    return (int64_t)off;
}

struct foresight_pt_clock *foresight__pt_anchor(void (*init)(const void *), void (*run)(void),
                                                const void *args)
{
    if (fs_cfg.disabled || !fs_cfg.pt || run == NULL || fs_pt_self)
        return NULL;
    /* Another of the program's threads anchors now: this call goes without a run. */
    if (pthread_mutex_trylock(&anchor_mu) != 0)
        return __atomic_load_n(&anchored, __ATOMIC_ACQUIRE) &&
                       __atomic_load_n(&pt_created, __ATOMIC_ACQUIRE)
                   ? &fs_pt_clock
                   : NULL;
    struct foresight_pt_clock *c = NULL;
    if (!__atomic_load_n(&started, __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&anchored, true, __ATOMIC_RELEASE);
        __atomic_store_n(&anchor_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
        const uint64_t base = __atomic_load_n(&fs_pt_clock.id, __ATOMIC_ACQUIRE);
        __atomic_store_n(&run_base, base, __ATOMIC_RELEASE);
        __atomic_store_n(&fs_pt_clock.lead, base, __ATOMIC_RELEASE);
        first_init = init;
        first_args = args;
        c = foresight__pt_start(first_anchor_init, run);
        first_args = NULL;
    } else if (__atomic_load_n(&anchored, __ATOMIC_ACQUIRE) &&
               __atomic_load_n(&pt_created, __ATOMIC_ACQUIRE) &&
               !__atomic_load_n(&pt_ended, __ATOMIC_ACQUIRE)) {
        c = &fs_pt_clock;
        const int useless = __atomic_load_n(&run_idle, __ATOMIC_ACQUIRE)
                                ? __atomic_exchange_n(&last_run_useless, -1, __ATOMIC_ACQ_REL)
                                : -1;
        if (useless == 1) {
            useless_runs += useless_runs < 10;
            anchors_to_skip = (1u << useless_runs) - 1;
        } else if (useless == 0) {
            useless_runs = anchors_to_skip = 0;
        }
        if (__atomic_load_n(&run_idle, __ATOMIC_ACQUIRE) && anchors_to_skip > 0) {
            anchors_to_skip--; /* lately the runs led nowhere: this call goes without */
        } else if (__atomic_load_n(&run_idle, __ATOMIC_ACQUIRE)) {
            /* The thread waits (next_run) and touches nothing of its own until run_word
             * moves: INIT may allocate in its arena and copy into it here. */
            __atomic_store_n(&run_idle, 0, __ATOMIC_RELAXED);
            __atomic_store_n(&anchor_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
            if (init != NULL)
                init(args);
            pt_run = run;
            const uint64_t base = __atomic_load_n(&fs_pt_clock.id, __ATOMIC_ACQUIRE);
            __atomic_store_n(&run_base, base, __ATOMIC_RELEASE);
            /* Level with the program until the thread makes its first call: an anchor
             * before that (a function the anchored one calls first) keeps the run. */
            __atomic_store_n(&fs_pt_clock.lead, base, __ATOMIC_RELEASE);
            __atomic_store_n(&fs_pt_abandon, 0, __ATOMIC_RELEASE);
            __atomic_fetch_add(&run_word, 1, __ATOMIC_RELEASE);
            syscall(SYS_futex, &run_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
        } else if (__atomic_load_n(&fs_pt_clock.lead, __ATOMIC_ACQUIRE) <
                   __atomic_load_n(&fs_pt_clock.id, __ATOMIC_ACQUIRE)) {
            __atomic_store_n(&fs_pt_abandon, 1, __ATOMIC_RELEASE);
        }
    }
    pthread_mutex_unlock(&anchor_mu);
    return c;
}

pid_t fs_pt_anchor_tid(void)
{
    return __atomic_load_n(&anchor_tid, __ATOMIC_ACQUIRE);
}

bool fs_pt_retire(const char *why)
{
    if (fs_pt_self)
        return false;
    if (__atomic_load_n(&starting, __ATOMIC_SEQ_CST)) {
        /* Another thread is starting it (an anchor's INIT runs): the start sees the
         * request and unmaps the memory instead; wait for that. */
        __atomic_store_n(&retire_reason, why, __ATOMIC_RELEASE);
        for (int i = 0; i < 2000 && __atomic_load_n(&starting, __ATOMIC_SEQ_CST); i++)
            usleep(1000);
    }
    if (!__atomic_load_n(&pt_created, __ATOMIC_ACQUIRE))
        return false;
    if (!__atomic_load_n(&pt_ended, __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&retire_reason, why, __ATOMIC_RELEASE);
        /* Its tid once it runs; the signal waits, blocked, until its slice starts. */
        for (int i = 0; i < 2000 && __atomic_load_n(&pt_tid, __ATOMIC_ACQUIRE) == 0; i++)
            usleep(1000);
        const pid_t tid = __atomic_load_n(&pt_tid, __ATOMIC_ACQUIRE);
        if (tid == 0 || (syscall(SYS_tgkill, getpid(), tid, SIGBUS) != 0 && errno != ESRCH))
            return false; /* (ESRCH: it ended meanwhile) */
        for (int i = 0; i < 2000 && !__atomic_load_n(&pt_ended, __ATOMIC_ACQUIRE); i++)
            usleep(1000);
        if (!__atomic_load_n(&pt_ended, __ATOMIC_ACQUIRE))
            return false;
    }
    /* Ended (parked): let it go, and wait while it runs on its stack until the kernel has
     * it gone. */
    __atomic_store_n(&park_release, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &park_release, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    const pid_t tid = __atomic_load_n(&pt_tid, __ATOMIC_ACQUIRE);
    for (int i = 0; i < 2000 && tid != 0 && syscall(SYS_tgkill, getpid(), tid, 0) == 0; i++)
        usleep(1000);
    if (tid != 0 && syscall(SYS_tgkill, getpid(), tid, 0) == 0)
        return false;
    fs_pt_chan_release();
    fs_pt_memory_release();
    return true;
}

void foresight__pt_wake(void)
{
    __atomic_fetch_add(&wake_word, 1, __ATOMIC_SEQ_CST);
    syscall(SYS_futex, &wake_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void foresight__pt_advise(struct foresight_pt_clock *c, int fd, int random)
{
    if (c != &fs_pt_clock || fd < 0 || fd >= FORESIGHT_PT_FDS)
        return;
    const int e = errno;
    /* Set whatever the outcome (a pipe: ESPIPE), so that a descriptor that takes no
     * advice costs one call per change of the thread's lead, not one per read. */
    c->random[fd] = (uint8_t)(random != 0);
    if (fs_cfg.pt_random && posix_fadvise(fd, 0, 0, random ? POSIX_FADV_RANDOM : POSIX_FADV_NORMAL) == 0)
        __atomic_fetch_add(random ? &fs_global_pt_readahead_off : &fs_global_pt_readahead_on, 1,
                           __ATOMIC_RELAXED);
    errno = e;
}

uint64_t fs_pt_computation_id(void)
{
    return __atomic_load_n(&fs_pt_clock.id, __ATOMIC_ACQUIRE);
}

bool fs_pt_sleep_until(uint64_t wake, long timeout_ns)
{
    uint32_t v = __atomic_load_n(&wake_word, __ATOMIC_SEQ_CST);
    __atomic_store_n(&fs_pt_clock.wake_at, wake, __ATOMIC_SEQ_CST);
    bool slept = __atomic_load_n(&fs_pt_clock.id, __ATOMIC_SEQ_CST) < wake;
    if (slept) {
        struct timespec ts = {.tv_sec = 0, .tv_nsec = timeout_ns};
        syscall(SYS_futex, &wake_word, FUTEX_WAIT_PRIVATE, v, &ts, NULL, 0);
        __atomic_fetch_add(&fs_global_pt_sleeps, 1, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&fs_pt_clock.wake_at, 0, __ATOMIC_RELAXED);
    return slept;
}
