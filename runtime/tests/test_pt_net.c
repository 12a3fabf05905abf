/* The prefetch thread's fault net and guarded memory (pt_thread.c, pt_arena.c), one
 * scenario per process (a process starts one thread):
 *   segv        run() reads through a wild pointer: the thread stops with "fault (SIGSEGV
 *               at 0x10)", the program goes on and exits 0; init() allocated from the
 *               arena (inside the reservation) and run() read what it stored
 *   fpe         run() divides by zero (x86-64): "fault (SIGFPE at ...)", the program goes on
 *   guard       run() stores at an address computed 2 GiB past a stack array: it faults in
 *               the upper guard, the thread stops, the program's memory is unchanged
 *   overflow    run() recurses without end: the fault is in the gap below its stack
 *   stack       under RLIMIT_STACK 64 MiB the thread's stack is 64 MiB and a recursion using
 *               48 MiB completes; unlimited is 512 MiB, the bounds 8 MiB and 1 GiB
 *   program     faults on the program's thread with the thread running, each in a child,
 *               against a child without the library's thread: SIG_DFL kills with SIGSEGV as
 *               it does without it; a SA_SIGINFO handler installed before the start runs
 *               (si_addr right); a plain handler that siglongjmps back runs for two faults
 *               in a row (its mask as without the net); SIG_IGN still dies; a SIGSEGV sent
 *               to the process while the program's thread blocks it reaches the prefetch
 *               thread, which passes it on and stops, and kills the program once it
 *               unblocks it
 *   aslimit     under a finite RLIMIT_AS no thread starts (init not run), and the program
 *               keeps its whole allowance
 *   retire      the program sets RLIMIT_AS with the thread spinning (no runtime calls):
 *               the thread ends first, its reservation unmapped; a 64 MiB malloc succeeds
 *   mlock       as nobody, mlockall(MCL_CURRENT) fares as without the thread (root only)
 *   late        the program installs handlers for the net's signals once the thread runs
 *               (sigaction, signal): a fault of the thread still only stops it, the program
 *               reads back the handlers it set, and its own faults reach them (also in
 *               `program`: handlers installed late behave as without the thread)
 * Sanitizers' own SIGSEGV/SIGBUS/SIGFPE handlers are off (ASAN_OPTIONS in CMakeLists.txt):
 * the program's faults are then the kernel's, as the checks expect. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "check.h"
#include "internal.h"

static int go, run_done;

/* Waits up to 20 s for the thread to stop early; its reason, or NULL. */
static const char *wait_stopped(void)
{
    const char *why = NULL;
    for (int i = 0; i < 20000 && (why = __atomic_load_n(&fs_global_pt_stopped,
                                                         __ATOMIC_ACQUIRE)) == NULL;
         i++)
        usleep(1000);
    return why;
}

/* The wild address, read at run time (a constant one is a compile-time error at -O2). */
static volatile uintptr_t wild_address = 16;

static void expect_reason(const char *why, const char *want)
{
    if (why == NULL || strcmp(why, want) != 0) {
        fprintf(stderr, "stop reason \"%s\", expected \"%s\"\n", why ? why : "(none)", want);
        check_failures++;
    }
}

/* ---- segv: a wild pointer; init allocates ---- */

static unsigned char *init_block;
static int init_seen;

static void init_alloc(void)
{
    init_block = foresight_pt_malloc(1u << 20);
    if (init_block != NULL)
        memset(init_block, 0x5a, 1u << 20);
}

static void run_wild(void)
{
    init_seen = init_block != NULL && init_block[0] == 0x5a && init_block[(1u << 20) - 1] == 0x5a;
    volatile int *wild = (volatile int *)wild_address;
    publish(&run_done, *wild); /* never */
}

static void scenario_segv(void)
{
    CHECK(foresight_pt_start(init_alloc, run_wild) != NULL);
    CHECK(init_block != NULL); /* before start returned */
    CHECK_EQ(fs_pt_memory_where(init_block), FS_PT_ARENA);
    CHECK_EQ(__atomic_load_n(&fs_global_pt_unguarded, __ATOMIC_RELAXED), 0);
    expect_reason(wait_stopped(), "fault (SIGSEGV at 0x10)");
    CHECK(init_seen);
    CHECK(!flag(&run_done));
    CHECK_EQ(fs_global_pt_started, 1);
}

/* ---- fpe: an integer division by zero ---- */

static void run_divide(void)
{
#if defined(__x86_64__)
    int lo = 7, hi = 0, zero = 0;
    __asm__ volatile("idivl %2" : "+a"(lo), "+d"(hi) : "r"(zero));
    publish(&run_done, lo);
#endif
}

static void scenario_fpe(void)
{
#if defined(__x86_64__)
    CHECK(foresight_pt_start(NULL, run_divide) != NULL);
    const char *why = wait_stopped();
    CHECK(why != NULL && strncmp(why, "fault (SIGFPE at 0x", 19) == 0);
    CHECK(!flag(&run_done));
#else
    printf("fpe: skipped (integer division by zero does not trap here)\n");
#endif
}

/* ---- late: the program installs its fault handlers once the thread runs ---- */

static volatile sig_atomic_t program_handler_calls;

static void on_fpe(int sig)
{
    (void)sig;
    program_handler_calls++;
}

static void run_divide_when_told(void)
{
    CHECK(wait_flag(&go));
    run_divide();
}

static void scenario_late(void)
{
#if defined(__x86_64__)
    CHECK(foresight_pt_start(NULL, run_divide_when_told) != NULL);
    /* As a library's init or another file would: after the net is in place. */
    struct sigaction sa = {.sa_handler = on_fpe}, back;
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(sigaction(SIGFPE, &sa, NULL), 0);
    CHECK(signal(SIGSEGV, SIG_IGN) == SIG_DFL);
    CHECK(signal(SIGSEGV, SIG_DFL) == SIG_IGN);
    /* signal() asks for SA_RESTART: the net the kernel runs has it now (calls the signal
     * interrupts restart as with the program's own handler). */
    struct {
        void *handler;
        unsigned long flags;
        void *restorer;
        uint64_t mask;
    } kact;
    CHECK(syscall(SYS_rt_sigaction, SIGSEGV, NULL, &kact, 8) == 0);
    CHECK((kact.flags & SA_RESTART) != 0);
    CHECK(syscall(SYS_rt_sigaction, SIGFPE, NULL, &kact, 8) == 0);
    CHECK((kact.flags & SA_RESTART) == 0); /* sigaction without it: without */
    CHECK_EQ(sigaction(SIGFPE, NULL, &back), 0); /* what the program set, read back */
    CHECK(back.sa_handler == on_fpe);
    publish(&go, 1);
    const char *why = wait_stopped(); /* the thread's fault: still the net's */
    CHECK(why != NULL && strncmp(why, "fault (SIGFPE at 0x", 19) == 0);
    CHECK_EQ(program_handler_calls, 0);
    CHECK(!flag(&run_done));
    raise(SIGFPE); /* the program's own: its handler */
    CHECK_EQ(program_handler_calls, 1);
#else
    printf("late: skipped (integer division by zero does not trap here)\n");
#endif
}

/* ---- guard: 2 GiB past a stack array ---- */

static volatile char *far_store;
static int far_where, array_where;
static unsigned char program_block[1u << 16];

static void run_far(void)
{
    volatile char a[64];
    for (int i = 0; i < 64; i++)
        a[i] = (char)i;
    array_where = fs_pt_memory_where((const char *)a);
    far_store = (volatile char *)((uintptr_t)a + (2ull << 30));
    far_where = fs_pt_memory_where((const char *)far_store);
    *far_store = 1;
    publish(&run_done, 1); /* never */
}

static void scenario_guard(void)
{
    memset(program_block, 0xa5, sizeof program_block);
    CHECK(foresight_pt_start(NULL, run_far) != NULL);
    const char *why = wait_stopped();
    char want[64];
    snprintf(want, sizeof want, "fault (SIGSEGV at %p)", (void *)far_store);
    expect_reason(why, want);
    CHECK_EQ(array_where, FS_PT_STACK);
    CHECK_EQ(far_where, FS_PT_GUARD);
    CHECK(!flag(&run_done));
    for (size_t i = 0; i < sizeof program_block; i++)
        if (program_block[i] != 0xa5) {
            CHECK(!"the program's memory changed");
            break;
        }
}

/* ---- overflow, stack: recursion ---- */

static unsigned depth;

static unsigned recurse(unsigned n, unsigned limit)
{
    volatile char frame[1u << 20]; /* 1 MiB a frame, touched */
    frame[0] = (char)n;
    frame[sizeof frame - 1] = (char)n;
    __atomic_store_n(&depth, n, __ATOMIC_RELAXED);
    if (n == limit)
        return n;
    return recurse(n + 1, limit) + (unsigned char)frame[0] - (unsigned char)frame[0];
}

static void run_forever(void)
{
    recurse(1, ~0u);
    publish(&run_done, 1); /* never */
}

static void scenario_overflow(void)
{
    CHECK(foresight_pt_start(NULL, run_forever) != NULL);
    const char *why = wait_stopped();
    CHECK(why != NULL && strncmp(why, "fault (SIGSEGV at 0x", 20) == 0);
    void *addr = NULL;
    if (why != NULL)
        sscanf(why, "fault (SIGSEGV at %p)", &addr);
    CHECK_EQ(fs_pt_memory_where(addr), FS_PT_GUARD); /* the gap below the stack */
    size_t size;
    CHECK((char *)addr < (char *)fs_pt_stack(&size));
    CHECK(__atomic_load_n(&depth, __ATOMIC_RELAXED) >= 4); /* 8 MiB at least */
}

static void run_deep(void)
{
    recurse(1, 48);
    publish(&run_done, 1);
}

static void scenario_stack(void)
{
    CHECK_EQ(fs_pt_stack_size(RLIM_INFINITY), 512u << 20);
    CHECK_EQ(fs_pt_stack_size(1u << 20), 8u << 20);
    CHECK_EQ(fs_pt_stack_size(8u << 20), 8u << 20);
    CHECK_EQ(fs_pt_stack_size(4ull << 30), 1u << 30);
    struct rlimit rl;
    CHECK_EQ(getrlimit(RLIMIT_STACK, &rl), 0);
    rl.rlim_cur = 64u << 20;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < rl.rlim_cur)
        rl.rlim_cur = rl.rlim_max;
    CHECK_EQ(setrlimit(RLIMIT_STACK, &rl), 0);
    CHECK(foresight_pt_start(NULL, run_deep) != NULL);
    size_t size;
    CHECK(fs_pt_stack(&size) != NULL);
    CHECK_EQ(size, 64u << 20);
    CHECK(wait_flag(&run_done));
    CHECK_EQ(__atomic_load_n(&depth, __ATOMIC_RELAXED), 48);
    CHECK(__atomic_load_n(&fs_global_pt_stopped, __ATOMIC_ACQUIRE) == NULL);
}

/* ---- program: faults on the program's thread ---- */

static void run_wait(void)
{
    while (!flag(&go))
        usleep(1000);
    publish(&run_done, 1);
}

static void fault_here(void)
{
    *(volatile int *)wild_address = 1;
}

static void on_segv_info(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    _exit(sig == SIGSEGV && si->si_addr == (void *)16 && si->si_code > 0 ? 42 : 43);
}

static sigjmp_buf back;
static volatile sig_atomic_t plain_calls;

static void on_segv_plain(int sig)
{
    if (sig == SIGSEGV)
        plain_calls++;
    siglongjmp(back, 1);
}

enum { C_DEFAULT, C_INFO, C_PLAIN, C_IGNORE, C_SENT, C_INFO_LATE, C_PLAIN_LATE };

/* A child (this program again: a fresh process, as a sanitizer wants one to start threads
 * in): the program's setup for case WHICH, the prefetch thread when WITH_THREAD, then the
 * fault (or the sent signal); never returns. */
static void program_child(int which, bool with_thread)
{
    {
        struct sigaction sa = {.sa_flags = 0};
        sigemptyset(&sa.sa_mask);
        if (which == C_INFO) {
            sa.sa_sigaction = on_segv_info;
            sa.sa_flags = SA_SIGINFO;
            sigaction(SIGSEGV, &sa, NULL);
        } else if (which == C_PLAIN) {
            sa.sa_handler = on_segv_plain;
            sigaction(SIGSEGV, &sa, NULL);
        } else if (which == C_IGNORE) {
            sa.sa_handler = SIG_IGN;
            sigaction(SIGSEGV, &sa, NULL);
        }
        if (with_thread && foresight_pt_start(NULL, run_wait) == NULL)
            _exit(90);
        if (which == C_INFO_LATE) { /* installed once the net is in place */
            sa.sa_sigaction = on_segv_info;
            sa.sa_flags = SA_SIGINFO;
            sigaction(SIGSEGV, &sa, NULL);
        } else if (which == C_PLAIN_LATE) {
            signal(SIGSEGV, on_segv_plain);
            which = C_PLAIN;
        }
        if (which == C_PLAIN) {
            for (int i = 0; i < 2; i++)
                if (sigsetjmp(back, 1) == 0)
                    fault_here();
            _exit(plain_calls == 2 ? 0 : 44);
        }
        if (which == C_SENT) {
            sigset_t set;
            sigemptyset(&set);
            sigaddset(&set, SIGSEGV);
            pthread_sigmask(SIG_BLOCK, &set, NULL);
            kill(getpid(), SIGSEGV);
            if (with_thread) {
                const char *why = wait_stopped();
                if (why == NULL || strstr(why, "signal sent to the process") == NULL)
                    _exit(91);
            }
            pthread_sigmask(SIG_UNBLOCK, &set, NULL); /* delivered here */
            _exit(92);
        }
        fault_here();
        _exit(93);
    }
}

/* This program again, in a child, with arguments A B C (C may be NULL): its wait status. */
static int run_self(const char *a, const char *b, const char *c)
{
    pid_t pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", "test_pt_net", a, b, c, (char *)NULL);
        _exit(94);
    }
    int status = -1;
    CHECK(waitpid(pid, &status, 0) == pid);
    return status;
}

/* Its wait status. */
static int child(int which, bool with_thread)
{
    char w[16];
    snprintf(w, sizeof w, "%d", which);
    return run_self("child", w, with_thread ? "1" : "0");
}

static void scenario_program(void)
{
    /* Whatever the core dump settings, the same status with the thread as without it. */
    const int plain = child(C_DEFAULT, false);
    CHECK(WIFSIGNALED(plain) && WTERMSIG(plain) == SIGSEGV);
    CHECK_EQ(child(C_DEFAULT, true), plain);
    const int info = child(C_INFO, true);
    CHECK(WIFEXITED(info) && WEXITSTATUS(info) == 42);
    CHECK_EQ(child(C_INFO, false), info);
    const int back_twice = child(C_PLAIN, true);
    CHECK(WIFEXITED(back_twice) && WEXITSTATUS(back_twice) == 0);
    const int ignored = child(C_IGNORE, true);
    CHECK(WIFSIGNALED(ignored) && WTERMSIG(ignored) == SIGSEGV);
    CHECK_EQ(child(C_IGNORE, false), ignored);
    CHECK_EQ(child(C_INFO_LATE, true), info);
    CHECK_EQ(child(C_INFO_LATE, false), info);
    CHECK_EQ(child(C_PLAIN_LATE, true), back_twice);
    CHECK_EQ(child(C_PLAIN_LATE, false), back_twice);
    const int sent = child(C_SENT, true);
    CHECK(WIFSIGNALED(sent) && WTERMSIG(sent) == SIGSEGV);
    CHECK_EQ(child(C_SENT, false), sent);
}

/* ---- aslimit: no thread under a finite RLIMIT_AS; a program that sets one ends it ---- */

static int init_ran;

static void init_mark(void)
{
    init_ran = 1;
}

static void run_return(void)
{
    publish(&run_done, 1);
}

/* The process's VmSize in KiB (0: unknown). */
static unsigned long long vm_size_kib(void)
{
    unsigned long long kib = 0;
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "VmSize: %llu kB", &kib) == 1)
            break;
    if (f != NULL)
        fclose(f);
    return kib;
}

static void scenario_aslimit(void)
{
    /* Finite, with room: what the process maps already (a sanitizer's shadow too) and
     * 16 GiB more. */
    const unsigned long long vm_kib = vm_size_kib();
    CHECK(vm_kib > 0);
    struct rlimit rl = {.rlim_cur = (rlim_t)(vm_kib << 10) + ((rlim_t)16 << 30),
                        .rlim_max = RLIM_INFINITY};
    CHECK(setrlimit(RLIMIT_AS, &rl) == 0);
    CHECK(foresight_pt_start(init_mark, run_return) == NULL);
    CHECK(!init_ran);
    const char *why = __atomic_load_n(&fs_global_pt_stopped, __ATOMIC_ACQUIRE);
    CHECK(why != NULL && strstr(why, "RLIMIT_AS is finite") != NULL);
    /* The program keeps its whole allowance: 15 GiB of address space, reserved. */
    void *big = mmap(NULL, (size_t)15 << 30, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                     -1, 0);
    CHECK(big != MAP_FAILED);
}

/* ---- retire: the program sets RLIMIT_AS (and locks its memory) with the thread running:
 * the thread ends first and its reservation goes, so the program's allocations succeed ---- */

static void run_spin_quietly(void)
{
    for (volatile unsigned long i = 0;; i++) /* no runtime call: ended by the signal */
        ;
}

static void scenario_retire(void)
{
    /* A null limit is libc's to judge (it sets nothing: prlimit's NULL), not a crash. */
    /* (through a pointer of a type without libc's nonnull, which UBSan checks at calls) */
    int (*volatile set)(int, const struct rlimit *) = (int (*)(int, const struct rlimit *))setrlimit;
    CHECK(set(RLIMIT_CORE, NULL) == 0);
    CHECK(foresight_pt_start(NULL, run_spin_quietly) != NULL);
    usleep(20000);
    CHECK(fs_pt_address_space() > ((size_t)64 << 30)); /* the reservation, in place */
    /* A forked child has none of it: its limits and locks are its own. */
    pid_t pid = fork();
    if (pid == 0)
        _exit(fs_pt_address_space() == 0 ? 0 : 1);
    int status = -1;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    const unsigned long long vm_kib = vm_size_kib();
    /* 4 GiB more than the process maps without the thread's reservation. */
    const rlim_t without = (rlim_t)(vm_kib << 10) - (rlim_t)fs_pt_address_space();
    struct rlimit rl = {.rlim_cur = without + ((rlim_t)4 << 30), .rlim_max = RLIM_INFINITY};
    CHECK(setrlimit(RLIMIT_AS, &rl) == 0);
    const char *why = __atomic_load_n(&fs_global_pt_stopped, __ATOMIC_ACQUIRE);
    CHECK(why != NULL && strstr(why, "set a limit on its memory") != NULL);
    CHECK_EQ(fs_pt_address_space(), 0);
    void *m = malloc((size_t)64 << 20); /* what failed with the reservation in place */
    CHECK(m != NULL);
    free(m);
}

/* ---- mlock: an unprivileged program's mlockall(MCL_CURRENT), which the kernel refuses when
 * all its mappings exceed RLIMIT_MEMLOCK, fares as without the thread (as root: a child
 * that becomes nobody; skipped otherwise) ---- */

/* In a fresh process (this program again, as a sanitizer wants one to start threads in). */
static void mlock_as_nobody(bool with_thread)
{
    if (setgid(65534) != 0 || setuid(65534) != 0)
        _exit(95);
    if (with_thread && foresight_pt_start(NULL, run_spin_quietly) == NULL)
        _exit(96);
    _exit(mlockall(MCL_CURRENT) == 0 ? 0 : 97);
}

static int mlock_child(bool with_thread)
{
    return run_self("mlockchild", with_thread ? "1" : "0", NULL);
}

static void scenario_mlock(void)
{
    if (geteuid() != 0) {
        printf("mlock: skipped (not root)\n");
        return;
    }
    const int plain = mlock_child(false);
    CHECK(WIFEXITED(plain));
    CHECK_EQ(mlock_child(true), plain);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "mlockchild") == 0)
        mlock_as_nobody(strcmp(argv[2], "1") == 0);
    if (argc == 4 && strcmp(argv[1], "child") == 0)
        program_child(atoi(argv[2]), strcmp(argv[3], "1") == 0);
    static const struct {
        const char *name;
        void (*fn)(void);
    } scenarios[] = {
        {"segv", scenario_segv},         {"fpe", scenario_fpe},
        {"guard", scenario_guard},       {"overflow", scenario_overflow},
        {"stack", scenario_stack},       {"program", scenario_program},
        {"aslimit", scenario_aslimit},   {"late", scenario_late},
        {"retire", scenario_retire},     {"mlock", scenario_mlock},
    };
    for (size_t i = 0; argc == 2 && i < sizeof scenarios / sizeof scenarios[0]; i++)
        if (strcmp(argv[1], scenarios[i].name) == 0) {
            scenarios[i].fn();
            char name[64];
            snprintf(name, sizeof name, "pt_net %s", argv[1]);
            return check_done(name);
        }
    fprintf(stderr, "usage: test_pt_net segv|fpe|guard|overflow|stack|program|aslimit|late|retire|mlock\n");
    return 2;
}
