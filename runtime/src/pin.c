/*
 * pin.c — the program's thread and the library's on one CPU while its hints page.
 *
 * Out of core the worker's releases (MADV_PAGEOUT) and the reclaim its prefetches
 * charge unmap pages that the program's thread may hold in its TLB, and for each the
 * kernel interrupts every other CPU the process runs on (a TLB shootdown; in a VM, an
 * exit to the host).  With every thread of the process on one CPU there is no other CPU
 * to interrupt: on the 2-CPU VM of docs/decisions.md the six hinted NAS kernels at 3x
 * that pin used 34-51% less system time and ran 2-21% faster.  So while the gate
 * (gate.c) has hints on, once a hint has reached the library (workers.c: before it,
 * nothing pages), every thread of the process runs on one CPU (the program's
 * thread's, unless another served far fewer interrupts: quiet_cpu), and gets back the
 * mask it started with when the gate closes.
 *
 * A program must not be able to tell, nor hand the pin on, so it is taken only when
 *  - FORESIGHT_PIN is not 0; one worker (FORESIGHT_WORKERS); no prefetch thread
 *    running (it must run beside the program); no loop nest with indirect references
 *    (a[idx[i]]) running hinted (random.c counts their sites between begin and end: such
 *    a nest can run for minutes after its entry) or entered in the last 10 seconds:
 *    their prefetches are many single pages asked for shortly before use, and the
 *    worker issuing them must run beside the program (pinned, NAS IS and CG ran 9% and
 *    12% slower, the others up to 25% faster);
 *  - the program has one thread (the process's threads less the library's), its mask
 *    is the one the process loaded with and holds two CPUs or more;
 *  - the worker paged memory out (MADV_PAGEOUT releases, of anonymous memory) in the
 *    last 10 seconds: the interrupts come from unmapping those pages; with the NAS
 *    arrays in files, where no releases are made, the pin made MG 3-13% slower and
 *    saved no system time.  The worker tries to pin at its first page-out
 *    (fs_pin_paging), not the keeper a second later;
 *  - other processes used, over the last second, no more user time than the other CPUs
 *    give (plus a fifth of one): the pin leaves them those; FORESIGHT_PIN=always skips
 *    this look and the one above;
 *  - the library's functions below are the ones the program's calls bind to (not when
 *    it was loaded later by dlopen, or a sanitizer's interceptors bind first).
 * And it is given back: pthread_create, thrd_create, sched_setaffinity and
 * pthread_setaffinity_np by the program give every thread its mask back first and end
 * pinning for the process; a forked child, and what posix_spawn(p), system, popen and
 * the exec family start, begin with the program's mask; sched_getaffinity and
 * pthread_getaffinity_np report it, and pthread_getattr_np's attributes hold it; _Fork's
 * child, wordexp's shell and execveat's program start with it too.  The library's keeper
 * thread (memcg.c) looks once a second: a thread made otherwise (a raw clone), a mask
 * set otherwise, a prefetch thread, or other processes needing the CPUs give every
 * thread its mask back (the mask: for good), and a pin the program's thread could not
 * take (its try only tries the lock) is taken there.  Not covered: /proc/self/status's
 * Cpus_allowed shows the pin; processes libc starts by other internal routes than those
 * above (glibc 2.39's pidfd_spawn is not interposed) inherit it.
 *
 * Everything here is system calls and atomics under one lock (no malloc: the gate is
 * read on the program's thread, which may have been inside malloc); on the program's
 * thread the lock is only tried, its errno kept and cancellation held off.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>
#include <wordexp.h>

#include "internal.h"

#define LOOK_NS 1000000000ull      /* between looks at the threads and the machine's load */
#define INDIRECT_NS 10000000000ull /* no pin this long after a hinted indirect reference */
#define PAGING_NS 10000000000ull   /* a pin this long after the worker's last page-out */

enum { UNPINNED, PINNED, ENDED };

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int state;            /* UNPINNED, PINNED, ENDED (for good: see above) */
static cpu_set_t load_mask;  /* the process's mask when the library was loaded */
static int load_cpus;        /* CPUs in it (0: unknown) */
static cpu_set_t pin_mask;   /* the one CPU, while PINNED */
static bool wanted;          /* the gate's last answer: hints on */
static uint64_t tried_at;    /* the gate's last try to pin (CLOCK_MONOTONIC_COARSE ns) */
static uint64_t indirect_at; /* when a nest with indirect references last ran hinted */
static uint64_t paging_at;   /* when the worker's page-outs were last seen to grow */
static unsigned long pageouts_seen; /* fs_global_pageouts then */
static bool enabled;         /* FORESIGHT_PIN, one worker, 2+ CPUs, no OpenMP, calls bound here */
unsigned long fs_global_pins; /* times the process was pinned */
const char *fs_pin_ended;     /* why pinning ended for good (NULL: it has not) */

static int set_mask(pid_t tid, const cpu_set_t *m)
{
    return (int)syscall(SYS_sched_setaffinity, tid, sizeof *m, m);
}

static bool get_mask(pid_t tid, cpu_set_t *m)
{
    CPU_ZERO(m);
    return syscall(SYS_sched_getaffinity, tid, sizeof *m, m) > 0;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Calls FN on each thread of the process (its ID); returns how many there were, -1 if
 * /proc could not be read. */
static int each_thread(void (*fn)(pid_t, void *), void *arg)
{
    /* Kept open (ownfd.c), read from its start; the callers hold the lock. */
    const int fd = fs_kept_fd(FS_KEPT_TASKS);
    if (fd < 0 || lseek(fd, 0, SEEK_SET) != 0)
        return -1;
    char buf[512] __attribute__((aligned(8))); /* small: see cpu_ticks */
    int n = 0;
    long got;
    while ((got = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
        for (long off = 0; off < got;) {
            struct dirent64 *d = (struct dirent64 *)(buf + off);
            off += d->d_reclen;
            if (d->d_name[0] < '0' || d->d_name[0] > '9')
                continue;
            n++;
            if (fn != NULL)
                fn((pid_t)strtol(d->d_name, NULL, 10), arg);
        }
    }
    return got < 0 ? -1 : n;
}

static void set_one(pid_t tid, void *m)
{
    set_mask(tid, m); /* a thread that has just ended: nothing to do */
}

/* Gives TID the program's mask if it has the pin (not a mask the program set itself). */
static void unpin_one(pid_t tid, void *unused)
{
    (void)unused;
    cpu_set_t m;
    if (get_mask(tid, &m) && CPU_EQUAL(&m, &pin_mask))
        set_mask(tid, &load_mask);
}

/* Field N of a kept /proc stat file (ownfd.c); 0 if not there. */
static unsigned long long stat_field(enum fs_kept file, int n)
{
    const long long v = fs_kept_stat_field(file, n);
    return v < 0 ? 0 : (unsigned long long)v;
}

/* Per CPU of the process's first mask, the clock ticks /proc/stat counts in interrupts
 * (irq and softirq), at the keeper's last sample and at the one before. */
static unsigned long long irq_sample[CPU_SETSIZE], irq_before[CPU_SETSIZE];

/* From /proc/stat's cpuN lines (read in pieces: a line per CPU), on the CPUs of the
 * process's first mask: the user time (user and nice, clock ticks) in *MACHINE, and each
 * CPU's interrupt ticks in IRQ; this process's utime in *OWN. */
static void cpu_ticks(unsigned long long *machine, unsigned long long *own,
                      unsigned long long *irq)
{
    *machine = 0;
    *own = stat_field(FS_KEPT_SELF_STAT, 14);
    char buf[512]; /* a hint may run this on a signal handler's stack: see thread_guard.c */
    size_t have = 0;
    off_t at = 0; /* kept open (ownfd.c), read in pieces from its start */
    ssize_t n;
    while ((n = fs_kept_pread(FS_KEPT_STAT, buf + have, sizeof buf - have, at)) > 0) {
        at += n;
        have += (size_t)n;
        buf[have] = 0;
        char *line = buf, *nl;
        while ((nl = strchr(line, '\n')) != NULL) {
            *nl = 0;
            if (strncmp(line, "cpu", 3) == 0 && line[3] >= '0' && line[3] <= '9') {
                char *end;
                const unsigned long cpu = strtoul(line + 3, &end, 10);
                if (cpu < CPU_SETSIZE && CPU_ISSET(cpu, &load_mask)) {
                    /* user nice system idle iowait irq softirq */
                    unsigned long long f[7] = {0};
                    for (int i = 0; i < 7; i++)
                        f[i] = strtoull(end, &end, 10);
                    *machine += f[0] + f[1];
                    irq[cpu] = f[5] + f[6];
                }
            } else if (strncmp(line, "intr", 4) == 0) { /* past the cpu lines */
                return;
            }
            line = nl + 1;
        }
        if (strncmp(line, "intr", 4) == 0)
            break; /* past the cpu lines (that line is longer than the buffer) */
        have = (size_t)(buf + have - line);
        memmove(buf, line, have);
        if (have == sizeof buf - 1)
            have = 0; /* a line longer than the buffer: not a cpu line */
    }
}

static unsigned long long sample_machine, sample_own; /* cpu_ticks at SAMPLE_AT */
static uint64_t sample_at;
static double others_busy; /* CPUs' worth of others' user time on the mask's CPUs */

/* A new sample of the time on the mask's CPUs, if the last is a second old. */
static void sample(uint64_t now)
{
    if (now - sample_at < LOOK_NS)
        return;
    unsigned long long machine, own;
    memcpy(irq_before, irq_sample, sizeof irq_before);
    cpu_ticks(&machine, &own, irq_sample);
    const double ticks = (double)(machine - sample_machine) - (double)(own - sample_own);
    others_busy = ticks / (double)sysconf(_SC_CLK_TCK) / ((double)(now - sample_at) / 1e9);
    sample_machine = machine;
    sample_own = own;
    sample_at = now;
}

/* The CPU to pin to, for a program's thread on CPU: the one of the mask that served the
 * fewest interrupts lately (since the keeper's sample before last; since boot before
 * that), CPU itself unless another served fewer than half as many.  The interrupts are
 * the I/O's completions (on the 2-CPU VM of docs/decisions.md all the disk's go to one
 * CPU): a program pinned beside them waits while they run, and they run beside it if it
 * is not (NAS EP at 3x: 5% faster pinned to the other CPU, in 6 runs of 8). */
static int quiet_cpu(int cpu)
{
    static unsigned long long irq_now[CPU_SETSIZE]; /* (the lock held) */
    unsigned long long machine, own;
    cpu_ticks(&machine, &own, irq_now);
    if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &load_mask))
        return cpu;
    int best = cpu;
    unsigned long long fewest = irq_now[cpu] - irq_before[cpu];
    const unsigned long long own_irq = fewest;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &load_mask))
            continue;
        const unsigned long long served = irq_now[c] - irq_before[c];
        if (served < fewest && 2 * served < own_irq) {
            best = c;
            fewest = served;
        }
    }
    return best;
}

/* The program's threads: the process's less the library's (counted once they run, so a
 * library thread just starting passes for the program's: no pin then). */
static int program_threads(void)
{
    const unsigned ours = fs_library_threads_running();
    const int all = each_thread(NULL, NULL);
    return all < 0 ? -1 : all - (int)ours;
}

static void unpin_locked(void)
{
    if (state == PINNED) {
        each_thread(unpin_one, NULL);
        __atomic_store_n(&state, UNPINNED, __ATOMIC_RELAXED);
    }
}

static void end_locked(const char *why)
{
    unpin_locked();
    if (state != ENDED) {
        __atomic_store_n(&state, ENDED, __ATOMIC_RELAXED);
        __atomic_store_n(&fs_pin_ended, why, __ATOMIC_RELAXED);
    }
}

/* Why the process may not stay or become pinned (NULL: it may); ends pinning for good
 * on a mask neither the program's first nor the pin (set by a call not seen here).
 * TID: the program's thread. */
static const char *refused_locked(pid_t tid)
{
    const uint64_t now = now_ns();
    /* The worker's page-outs, seen whatever else refuses the pin. */
    const unsigned long pageouts = __atomic_load_n(&fs_global_pageouts, __ATOMIC_RELAXED);
    if (pageouts != pageouts_seen) {
        pageouts_seen = pageouts;
        __atomic_store_n(&paging_at, now, __ATOMIC_RELAXED);
    }
    if (__atomic_load_n(&fs_global_pt_started, __ATOMIC_RELAXED) && !fs_pt_ended())
        return "prefetch thread";
    const uint64_t indirect = __atomic_load_n(&indirect_at, __ATOMIC_RELAXED);
    if ((indirect != 0 && now - indirect < INDIRECT_NS) || fs_random_running())
        return "indirect";
    const uint64_t paging = __atomic_load_n(&paging_at, __ATOMIC_RELAXED);
    if (fs_cfg.pin == 1 && (paging == 0 || now - paging >= PAGING_NS))
        return "not paging";
    if (program_threads() != 1)
        return "threads"; /* (a library thread just starting passes for one of the program's) */
    cpu_set_t mask;
    if (!get_mask(tid, &mask))
        return "mask";
    if (!CPU_EQUAL(&mask, &load_mask) && !(state == PINNED && CPU_EQUAL(&mask, &pin_mask))) {
        end_locked("the program set its own CPU affinity");
        return "mask";
    }
    /* Others need more CPUs than the pin leaves them (as many as the rest, and a fifth). */
    if (fs_cfg.pin == 1 && others_busy > load_cpus - 1 + 0.2)
        return "busy";
    return NULL;
}

/* Every thread on CPU (the lock held). */
static void pin_locked(int cpu)
{
    cpu = quiet_cpu(cpu);
    if (cpu < 0 || !CPU_ISSET(cpu, &load_mask))
        return;
    CPU_ZERO(&pin_mask);
    CPU_SET(cpu, &pin_mask);
    /* The state first: a fork between the two finds it, and its child unpins itself. */
    __atomic_store_n(&state, PINNED, __ATOMIC_RELAXED);
    each_thread(set_one, &pin_mask);
    __atomic_add_fetch(&fs_global_pins, 1, __ATOMIC_RELAXED);
}

/* The program's thread in here: its errno kept, no cancellation point (the files read),
 * and the lock only tried: a signal handler's nest entry, or the keeper holding it,
 * leaves the work to the keeper's next look. */
struct program_side {
    int saved_errno, cancel;
};

static bool program_side_begin(struct program_side *ps)
{
    ps->saved_errno = errno;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &ps->cancel);
    if (pthread_mutex_trylock(&mu) == 0)
        return true;
    pthread_setcancelstate(ps->cancel, NULL);
    errno = ps->saved_errno;
    return false;
}

static void program_side_end(const struct program_side *ps)
{
    pthread_mutex_unlock(&mu);
    pthread_setcancelstate(ps->cancel, NULL);
    errno = ps->saved_errno;
}

void fs_pin_gate(bool open)
{
    if (!enabled)
        return;
    const int s = __atomic_load_n(&state, __ATOMIC_RELAXED);
    if (s == ENDED)
        return;
    struct program_side ps;
    if (open && s == PINNED) {
        /* This thread the program's mask again (a failed exec): pinned again. */
        const int saved = errno;
        cpu_set_t mask;
        const bool back = get_mask(0, &mask) && CPU_EQUAL(&mask, &load_mask);
        errno = saved;
        if (back && program_side_begin(&ps)) {
            if (state == PINNED)
                set_mask(0, &pin_mask);
            program_side_end(&ps);
        }
        return;
    }
    if (__atomic_load_n(&wanted, __ATOMIC_RELAXED) == open && !open)
        return;
    __atomic_store_n(&wanted, open, __ATOMIC_RELAXED); /* (the keeper acts on it too) */
    if (open && !fs_runtime_awake())
        return; /* no hint yet (workers.c): pinned at the first page-out or keeper's look */
    const uint64_t now = now_ns();
    if (open && now - __atomic_load_n(&tried_at, __ATOMIC_RELAXED) < LOOK_NS / 10)
        return;
    if (!program_side_begin(&ps))
        return;
    if (!open) {
        unpin_locked();
    } else if (state == UNPINNED) {
        __atomic_store_n(&tried_at, now, __ATOMIC_RELAXED); /* the keeper: once a second */
        if (refused_locked(0) == NULL)
            pin_locked(sched_getcpu());
    }
    program_side_end(&ps);
}

/* The pin taken on a library thread (the lock held), if the program wants hints and
 * nothing refuses it: from the CPU the program's thread last ran on (the process's
 * first thread, the one it has while pinned), pin_locked picks the CPU. */
static void pin_from_library_locked(void)
{
    const pid_t main_tid = getpid();
    if (state != UNPINNED || !__atomic_load_n(&wanted, __ATOMIC_RELAXED) ||
        refused_locked(main_tid) != NULL)
        return;
    pin_locked((int)stat_field(FS_KEPT_MAIN_STAT, 39)); /* the main thread's CPU */
}

void fs_pin_tick(void)
{
    if (!enabled || __atomic_load_n(&state, __ATOMIC_RELAXED) == ENDED)
        return;
    const uint64_t now = now_ns();
    if (now - sample_at < LOOK_NS)
        return;
    pthread_mutex_lock(&mu);
    sample(now);
    const bool want = __atomic_load_n(&wanted, __ATOMIC_RELAXED);
    if (state == PINNED && (!want || refused_locked(getpid()) != NULL))
        unpin_locked();
    else
        pin_from_library_locked();
    pthread_mutex_unlock(&mu);
}

/* The worker is about to page memory out: the pin now, not at the keeper's next look.
 * Where the first page-outs put the data in swap is where it stays: with NAS EP at 3x
 * (docs/decisions.md), pinned at the first page-out 97% of the pages next to each other
 * in memory were next to each other in swap all run long, pinned a second later 71-78%
 * (paged out from two CPUs in that second, never better after), and every swap-in reads
 * the pages around the one it wants. */
void fs_pin_paging(void)
{
    if (!enabled || __atomic_load_n(&state, __ATOMIC_RELAXED) != UNPINNED ||
        !__atomic_load_n(&wanted, __ATOMIC_RELAXED))
        return;
    const uint64_t now = now_ns();
    if (now - __atomic_load_n(&tried_at, __ATOMIC_RELAXED) < LOOK_NS / 10 ||
        pthread_mutex_trylock(&mu) != 0)
        return;
    __atomic_store_n(&tried_at, now, __ATOMIC_RELAXED);
    pin_from_library_locked();
    pthread_mutex_unlock(&mu);
}

void fs_pin_give_back(void)
{
    if (!enabled || __atomic_load_n(&state, __ATOMIC_RELAXED) != PINNED)
        return;
    struct program_side ps;
    if (program_side_begin(&ps)) {
        unpin_locked();
        program_side_end(&ps);
    }
}

void fs_pin_indirect(void)
{
    if (!enabled)
        return;
    __atomic_store_n(&indirect_at, now_ns(), __ATOMIC_RELAXED);
    fs_pin_give_back(); /* (if the lock is busy, the keeper's next look) */
}

bool fs_pin_enabled(void)
{
    return enabled;
}

FS_EARLY bool fs_pinned(void)
{
    return __atomic_load_n(&state, __ATOMIC_RELAXED) == PINNED;
}

static void after_fork_child(void)
{
    /* The child has one thread, pinned as its parent's was: its own again. */
    pthread_mutex_init(&mu, NULL);
    if (state == PINNED) {
        set_mask(0, &load_mask);
        __atomic_store_n(&state, UNPINNED, __ATOMIC_RELAXED);
    }
    wanted = false;
    tried_at = indirect_at = paging_at = 0;
    pageouts_seen = 0;
    cpu_ticks(&sample_machine, &sample_own, irq_sample);
    sample_at = now_ns();
    __atomic_store_n(&fs_global_pins, 0, __ATOMIC_RELAXED);
}

/* libc's functions behind the ones below, found at load. */
enum {
    R_PTHREAD_CREATE, R_THRD_CREATE, R_SCHED_SETAFFINITY, R_PTHREAD_SETAFFINITY,
    R_SCHED_GETAFFINITY, R_PTHREAD_GETAFFINITY, R_PTHREAD_GETATTR, R_POSIX_SPAWN,
    R_POSIX_SPAWNP, R_SYSTEM, R_POPEN, R_WORDEXP, R_FORK_, R_EXECVE, R_EXECV, R_EXECVP,
    R_EXECVPE, R_FEXECVE, R_EXECVEAT, NREAL
};
static const char *const real_names[NREAL] = {
    "pthread_create", "thrd_create", "sched_setaffinity", "pthread_setaffinity_np",
    "sched_getaffinity", "pthread_getaffinity_np", "pthread_getattr_np", "posix_spawn",
    "posix_spawnp", "system", "popen", "wordexp", "_Fork", "execve", "execv", "execvp",
    "execvpe", "fexecve", "execveat"};
static void *real_fn[NREAL];

FS_EARLY static void *real(int i)
{
    return fs_next_fn(&real_fn[i], real_names[i]);
}

__attribute__((constructor)) static void find_real(void)
{
    fs_next_all(real_fn, real_names, NREAL);
}

void fs_pin_init(void)
{
    if (get_mask(0, &load_mask))
        load_cpus = CPU_COUNT(&load_mask);
    /* The program's calls reach this file only if the process's lookup finds its
     * functions first (the library loaded with the program, before libc). */
    Dl_info self, found;
    bool bound = dladdr((void *)fs_pin_init, &self) != 0;
    for (int i = 0; i < NREAL && bound; i++) {
        void *f = dlsym(RTLD_DEFAULT, real_names[i]);
        bound = f != NULL && dladdr(f, &found) && found.dli_fbase == self.dli_fbase;
    }
    /* An OpenMP runtime reads the mask itself (libomp by a system call) at its first
     * parallel region: pinned then, it would run the region on one thread. */
    const bool openmp = dlsym(RTLD_DEFAULT, "omp_get_num_threads") != NULL;
    cpu_ticks(&sample_machine, &sample_own, irq_sample);
    sample_at = now_ns();
    enabled = fs_cfg.pin != 0 && bound && load_cpus >= 2 && fs_cfg.workers == 1 && !openmp;
    pthread_atfork(NULL, NULL, after_fork_child);
}

/* The program is about to make a thread or set a mask: every thread its mask back, and
 * no pin again. */
static void program_takes_over(const char *why)
{
    if (__atomic_load_n(&state, __ATOMIC_RELAXED) == ENDED)
        return;
    pthread_mutex_lock(&mu);
    end_locked(why);
    pthread_mutex_unlock(&mu);
}

/* The calling thread's mask for the duration of a call that starts a process. */
static bool unpin_self(void)
{
    if (!fs_pinned())
        return false;
    set_mask(0, &load_mask);
    return true;
}

/* Around a call that starts a process: the calling thread's own mask, then the pin
 * again (only this thread's mask changes; the keeper never pins a pinned process's
 * threads again, so the child cannot inherit the pin). */
static bool spawn_begins(void)
{
    return unpin_self();
}

static void spawn_ends(bool was)
{
    if (!was)
        return;
    struct program_side ps;
    if (program_side_begin(&ps)) {
        if (state == PINNED)
            set_mask(0, &pin_mask);
        program_side_end(&ps);
    }
}

/* Whether TID is a thread of this process. */
static bool ours(pid_t tid)
{
    if (tid == 0 || tid == getpid())
        return true;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d", (int)tid);
    const int saved = errno;
    const bool found = access(path, F_OK) == 0;
    errno = saved;
    return found;
}

/* What a mask query of a thread of this process returns while pinned: the program's. */
static void report_mask(size_t size, cpu_set_t *mask)
{
    memset(mask, 0, size);
    memcpy(mask, &load_mask, size < sizeof load_mask ? size : sizeof load_mask);
}

/* The same system calls made through syscall() (interpose.c), as the functions below
 * handle them: an exec starts with the program's mask, setting a thread's affinity ends
 * the pinning, and a query returns the program's mask (the raw call returns the bytes
 * it wrote). */
void fs_pin_before_syscall(long number, const long *a)
{
    if (number == SYS_execve || number == SYS_execveat)
        unpin_self();
    else if (number == SYS_sched_setaffinity && ours((pid_t)a[0]))
        program_takes_over("the program set its own CPU affinity");
}

void fs_pin_after_syscall(long number, const long *a, long rc)
{
    if (number == SYS_sched_getaffinity && rc > 0 && fs_pinned() && ours((pid_t)a[0]))
        report_mask((size_t)rc, (cpu_set_t *)a[2]);
}

#define NEXT(i, type) ((type)real(i))

int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    if (!fs_starting_library_thread)
        program_takes_over("the program made a thread");
    int (*next)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) =
        NEXT(R_PTHREAD_CREATE, int (*)(pthread_t *, const pthread_attr_t *,
                                       void *(*)(void *), void *));
    return next != NULL ? next(t, attr, fn, arg) : EAGAIN;
}

int thrd_create(thrd_t *t, thrd_start_t fn, void *arg)
{
    program_takes_over("the program made a thread");
    int (*next)(thrd_t *, thrd_start_t, void *) =
        NEXT(R_THRD_CREATE, int (*)(thrd_t *, thrd_start_t, void *));
    return next != NULL ? next(t, fn, arg) : thrd_error;
}

int sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *mask)
{
    if (ours(pid))
        program_takes_over("the program set its own CPU affinity");
    int (*next)(pid_t, size_t, const cpu_set_t *) =
        NEXT(R_SCHED_SETAFFINITY, int (*)(pid_t, size_t, const cpu_set_t *));
    if (next == NULL) {
        errno = ENOSYS;
        return -1;
    }
    return next(pid, size, mask);
}

int pthread_setaffinity_np(pthread_t t, size_t size, const cpu_set_t *mask)
{
    program_takes_over("the program set its own CPU affinity");
    int (*next)(pthread_t, size_t, const cpu_set_t *) =
        NEXT(R_PTHREAD_SETAFFINITY, int (*)(pthread_t, size_t, const cpu_set_t *));
    return next != NULL ? next(t, size, mask) : ENOSYS;
}

int sched_getaffinity(pid_t pid, size_t size, cpu_set_t *mask)
{
    int (*next)(pid_t, size_t, cpu_set_t *) =
        NEXT(R_SCHED_GETAFFINITY, int (*)(pid_t, size_t, cpu_set_t *));
    if (next == NULL) {
        errno = ENOSYS;
        return -1;
    }
    const int r = next(pid, size, mask);
    if (r == 0 && fs_pinned() && ours(pid))
        report_mask(size, mask);
    return r;
}

int pthread_getaffinity_np(pthread_t t, size_t size, cpu_set_t *mask)
{
    int (*next)(pthread_t, size_t, cpu_set_t *) =
        NEXT(R_PTHREAD_GETAFFINITY, int (*)(pthread_t, size_t, cpu_set_t *));
    if (next == NULL)
        return ENOSYS;
    const int r = next(t, size, mask);
    if (r == 0 && fs_pinned()) /* every thread of the process is pinned */
        report_mask(size, mask);
    return r;
}

typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                        const posix_spawnattr_t *, char *const[], char *const[]);

int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    spawn_fn next = NEXT(R_POSIX_SPAWN, spawn_fn);
    if (next == NULL)
        return ENOSYS;
    const bool was = spawn_begins();
    const int r = next(pid, path, fa, attr, argv, envp);
    spawn_ends(was);
    return r;
}

int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                 const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    spawn_fn next = NEXT(R_POSIX_SPAWNP, spawn_fn);
    if (next == NULL)
        return ENOSYS;
    const bool was = spawn_begins();
    const int r = next(pid, file, fa, attr, argv, envp);
    spawn_ends(was);
    return r;
}

int system(const char *command)
{
    int (*next)(const char *) = NEXT(R_SYSTEM, int (*)(const char *));
    if (next == NULL) {
        errno = ENOSYS;
        return -1;
    }
    const bool was = spawn_begins();
    const int r = next(command);
    const int saved = errno;
    spawn_ends(was);
    errno = saved;
    return r;
}

FILE *popen(const char *command, const char *type)
{
    FILE *(*next)(const char *, const char *) =
        NEXT(R_POPEN, FILE * (*)(const char *, const char *));
    if (next == NULL) {
        errno = ENOSYS;
        return NULL;
    }
    const bool was = spawn_begins();
    FILE *r = next(command, type);
    const int saved = errno;
    spawn_ends(was);
    errno = saved;
    return r;
}

/* The exec family: the new program starts with the mask this one started with.  Only
 * the calling thread's mask changes (a vfork child shares the parent's memory: nothing
 * else is written); if the exec fails the next look pins the thread again. */
int execve(const char *path, char *const argv[], char *const envp[])
{
    unpin_self();
    int (*next)(const char *, char *const[], char *const[]) =
        NEXT(R_EXECVE, int (*)(const char *, char *const[], char *const[]));
    if (next == NULL) {
        errno = ENOSYS;
        return -1;
    }
    return next(path, argv, envp);
}

int execv(const char *path, char *const argv[])
{
    unpin_self();
    int (*next)(const char *, char *const[]) =
        NEXT(R_EXECV, int (*)(const char *, char *const[]));
    if (next == NULL) {
        errno = ENOSYS;
        return -1;
    }
    return next(path, argv);
}

int execvp(const char *file, char *const argv[])
{
    unpin_self();
    int (*next)(const char *, char *const[]) =
        NEXT(R_EXECVP, int (*)(const char *, char *const[]));
    if (next == NULL) {
        errno = ENOSYS;
        return -1;
    }
    return next(file, argv);
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
    unpin_self();
    int (*next)(const char *, char *const[], char *const[]) =
        NEXT(R_EXECVPE, int (*)(const char *, char *const[], char *const[]));
    if (next == NULL) {
        errno = ENOSYS;
        return -1;
    }
    return next(file, argv, envp);
}

int fexecve(int fd, char *const argv[], char *const envp[])
{
    unpin_self();
    int (*next)(int, char *const[], char *const[]) =
        NEXT(R_FEXECVE, int (*)(int, char *const[], char *const[]));
    if (next == NULL) {
        errno = ENOSYS;
        return -1;
    }
    return next(fd, argv, envp);
}

int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
    unpin_self();
    int (*next)(int, const char *, char *const[], char *const[], int) =
        NEXT(R_EXECVEAT, int (*)(int, const char *, char *const[], char *const[], int));
    if (next == NULL) {
        errno = ENOSYS;
        return -1;
    }
    return next(dirfd, path, argv, envp, flags);
}

/* _Fork runs no fork handlers: its child gives itself the program's mask here. */
pid_t _Fork(void)
{
    pid_t (*next)(void) = NEXT(R_FORK_, pid_t (*)(void));
    if (next == NULL) {
        errno = ENOSYS;
        return -1;
    }
    const pid_t pid = next();
    if (pid == 0 && fs_pinned()) {
        const int saved = errno;
        set_mask(0, &load_mask);
        __atomic_store_n(&state, UNPINNED, __ATOMIC_RELAXED);
        errno = saved;
    }
    return pid;
}

/* wordexp's command substitution starts its shell by libc's own spawn. */
int wordexp(const char *words, wordexp_t *we, int flags)
{
    int (*next)(const char *, wordexp_t *, int) =
        NEXT(R_WORDEXP, int (*)(const char *, wordexp_t *, int));
    if (next == NULL)
        return WRDE_NOSPACE;
    const bool was = spawn_begins();
    const int r = next(words, we, flags);
    const int saved = errno;
    spawn_ends(was);
    errno = saved;
    return r;
}

/* The attributes of a running thread hold its mask (libc reads it itself); a thread
 * created with them would start pinned. */
FS_EARLY int pthread_getattr_np(pthread_t t, pthread_attr_t *attr)
{
    int (*next)(pthread_t, pthread_attr_t *) =
        NEXT(R_PTHREAD_GETATTR, int (*)(pthread_t, pthread_attr_t *));
    if (next == NULL)
        return ENOSYS;
    const int r = next(t, attr);
    if (r == 0 && fs_pinned()) {
        const int saved = errno;
        pthread_attr_setaffinity_np(attr, sizeof load_mask, &load_mask);
        errno = saved;
    }
    return r;
}

/* execl, execlp, execle: their arguments as an array (on the stack: no malloc between a
 * vfork and the exec), then the calls above. */
#define EXECL_ARGS(first, ap, argv, envp_out)                                              \
    size_t n = 1;                                                                          \
    va_start(ap, first);                                                                   \
    while (va_arg(ap, char *) != NULL)                                                     \
        n++;                                                                               \
    va_end(ap);                                                                            \
    char *argv[n + 1];                                                                     \
    argv[0] = (char *)(first);                                                             \
    va_start(ap, first);                                                                   \
    for (size_t k = 1; k <= n; k++)                                                        \
        argv[k] = va_arg(ap, char *);                                                      \
    envp_out;                                                                              \
    va_end(ap)

int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    EXECL_ARGS(arg, ap, argv, (void)0);
    return execv(path, argv);
}

int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    EXECL_ARGS(arg, ap, argv, (void)0);
    return execvp(file, argv);
}

int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    char **envp;
    EXECL_ARGS(arg, ap, argv, envp = va_arg(ap, char **));
    return execve(path, argv, envp);
}
