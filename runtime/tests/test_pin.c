/* The process on one CPU while hints page (pin.c): once the gate opens and a hint has
 * reached the library, every thread of
 * the process (the program's and the library's worker) runs on one CPU; the program
 * still reads its own mask (sched_getaffinity, pthread_getaffinity_np); what it forks,
 * vforks and execs, spawns, runs by system() or popen() starts with its mask; when the
 * gate closes, or a nest with indirect references is entered hinted or runs (its site
 * between foresight_random_begin and _end), every thread has its mask back; a thread of the program's or a mask it sets ends pinning for good.  Masks are read by the system call itself (not the
 * library's interposed functions) and, for children, from /proc/self/status.
 * FORESIGHT_PIN=always (CMakeLists.txt): the machine's load (other tests) is not asked. */
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <threads.h>
#include <unistd.h>
#include <wordexp.h>

#include "check.h"
#include "internal.h"

extern char **environ;

static cpu_set_t first; /* the process's mask at start */

/* A one-stream nest entered; with INDIRECT, one whose loop also makes indirect
 * references (a[idx[i]]): its worker runs beside it. */
static int enter_nest(unsigned short indirect)
{
    static const struct foresight_nest_stream ns[] = {{0, 0, 0}};
    const struct foresight_nest_pipe np[] = {{indirect, 0}};
    const struct foresight_nest nest = {ns, np, 1, 1, 4096, 65536};
    const uintptr_t nv[] = {8, 0, 0, 0};
    struct foresight_stream st;
    uintptr_t dist[2] = {0, 0};
    return foresight_nest_enter(&nest, &st, nv, dist);
}

static int enter(void)
{
    return enter_nest(0);
}

static void next_tick(void)
{
    struct timespec res;
    clock_getres(CLOCK_MONOTONIC_COARSE, &res);
    nanosleep(&res, NULL);
    nanosleep(&res, NULL);
}

/* Past pin.c's one look a second. */
static void next_look(void)
{
    const struct timespec s = {1, 100 * 1000 * 1000};
    nanosleep(&s, NULL);
}

static void raw_mask(pid_t tid, cpu_set_t *m)
{
    CPU_ZERO(m);
    CHECK(syscall(SYS_sched_getaffinity, tid, sizeof *m, m) > 0);
}

/* How many threads of the process have exactly one CPU, and how many in all. */
static int pinned_threads(int *all)
{
    DIR *d = opendir("/proc/self/task");
    CHECK(d != NULL);
    int one = 0;
    *all = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        cpu_set_t m;
        raw_mask((pid_t)atoi(e->d_name), &m);
        one += CPU_COUNT(&m) == 1;
        ++*all;
    }
    closedir(d);
    return one;
}

static bool all_pinned(void)
{
    int all;
    return pinned_threads(&all) == all && all >= 2; /* the program's and the worker */
}

static bool self_pinned(void)
{
    cpu_set_t m;
    raw_mask(0, &m);
    return CPU_COUNT(&m) == 1;
}

static bool none_pinned(void)
{
    int all;
    return pinned_threads(&all) == 0;
}

/* The Cpus_allowed_list line of /proc/self/status as a child started by COMMAND's
 * route writes it to PATH. */
static void read_line(const char *path, char *out, size_t size)
{
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    out[0] = 0;
    CHECK(fgets(out, (int)size, f) != NULL);
    fclose(f);
    unlink(path);
}

static char first_list[256]; /* "Cpus_allowed_list:\t0-1\n" of a child started unpinned */

static const char *status_cmd(const char *path)
{
    static char cmd[512];
    snprintf(cmd, sizeof cmd, "grep Cpus_allowed_list /proc/self/status > %s", path);
    return cmd;
}

static void *nothing(void *arg)
{
    return arg;
}

int main(void)
{
    raw_mask(0, &first);
#if defined(__SANITIZE_THREAD__)
    puts("pin: skipped (TSan's own thread: the program is never single-threaded)");
    return 0;
#endif
    if (CPU_COUNT(&first) < 2) {
        puts("pin: skipped (one CPU)");
        return 0;
    }
    char path[256];
    snprintf(path, sizeof path, "%s/pin.%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (int)getpid());
    CHECK_EQ(system(status_cmd(path)), 0);
    read_line(path, first_list, sizeof first_list);
    CHECK(strncmp(first_list, "Cpus_allowed_list:", 18) == 0);

#if !defined(__SANITIZE_ADDRESS__)
    /* The program fits (FORESIGHT_MEM=256M): no hints, no pin. */
    CHECK_EQ(enter(), 0);
    CHECK(none_pinned());
    CHECK_EQ(fs_global_pins, 0);
#endif
    /* 512 MiB mapped (reserved, never touched): the gate opens; no hint has reached the
     * library yet, so nothing pages and nothing is pinned. */
    size_t len = 512u << 20;
    void *big = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    CHECK(big != MAP_FAILED);
    next_tick();
    CHECK_EQ(enter(), 1);
    CHECK(none_pinned());
    CHECK_EQ(fs_global_pins, 0);
    /* With a hint (the runtime wakes), the next entry pins the process. */
    static char one[4096];
    foresight_prefetch(one, sizeof one);
    next_tick();
    CHECK_EQ(enter(), 1);
    CHECK(all_pinned());
    CHECK_EQ(fs_global_pins, 1);

    /* The program reads the mask it started with. */
    cpu_set_t m;
    CHECK_EQ(sched_getaffinity(0, sizeof m, &m), 0);
    CHECK(CPU_EQUAL(&m, &first));
    CHECK_EQ(sched_getaffinity(getpid(), sizeof m, &m), 0);
    CHECK(CPU_EQUAL(&m, &first));
    CHECK_EQ(pthread_getaffinity_np(pthread_self(), sizeof m, &m), 0);
    CHECK(CPU_EQUAL(&m, &first));

    /* Children start with the program's mask, and the parent stays pinned. */
    char line[256];
    CHECK_EQ(system(status_cmd(path)), 0);
    read_line(path, line, sizeof line);
    CHECK(strcmp(line, first_list) == 0);
    FILE *p = popen("grep Cpus_allowed_list /proc/self/status", "r");
    CHECK(p != NULL);
    CHECK(fgets(line, sizeof line, p) != NULL);
    CHECK_EQ(pclose(p), 0);
    CHECK(strcmp(line, first_list) == 0);
    char *argv[] = {"sh", "-c", (char *)status_cmd(path), NULL};
    pid_t child;
    CHECK_EQ(posix_spawn(&child, "/bin/sh", NULL, NULL, argv, environ), 0);
    int status;
    CHECK_EQ(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    read_line(path, line, sizeof line);
    CHECK(strcmp(line, first_list) == 0);
    child = vfork(); /* no fork handlers: the exec gives the mask back */
    if (child == 0) {
        execl("/bin/sh", "sh", "-c", status_cmd(path), (char *)NULL);
        _exit(127);
    }
    CHECK_EQ(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    read_line(path, line, sizeof line);
    CHECK(strcmp(line, first_list) == 0);
    child = fork();
    if (child == 0) {
        cpu_set_t c;
        CPU_ZERO(&c);
        syscall(SYS_sched_getaffinity, 0, sizeof c, &c);
        _exit(CPU_EQUAL(&c, &first) ? 0 : 1);
    }
    CHECK_EQ(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(all_pinned());

    /* _Fork (no fork handlers), execveat (after vfork), wordexp's shell, and the
     * attributes pthread_getattr_np reads: the program's mask too. */
    child = _Fork();
    if (child == 0) {
        cpu_set_t c;
        CPU_ZERO(&c);
        syscall(SYS_sched_getaffinity, 0, sizeof c, &c);
        _exit(CPU_EQUAL(&c, &first) ? 0 : 1);
    }
    CHECK_EQ(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    int sh = open("/bin/sh", O_RDONLY | O_CLOEXEC);
    CHECK(sh >= 0);
    child = vfork();
    if (child == 0) {
        execveat(sh, "", argv, environ, AT_EMPTY_PATH);
        _exit(127);
    }
    CHECK_EQ(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(sh);
    read_line(path, line, sizeof line);
    CHECK(strcmp(line, first_list) == 0);
    wordexp_t we;
    CHECK_EQ(wordexp("$(grep Cpus_allowed_list /proc/self/status)", &we, 0), 0);
    CHECK_EQ(we.we_wordc, 2);
    CHECK(strncmp(first_list + 19, we.we_wordv[1], strlen(we.we_wordv[1])) == 0);
    wordfree(&we);
    pthread_attr_t attr;
    CHECK_EQ(pthread_getattr_np(pthread_self(), &attr), 0);
    CHECK_EQ(pthread_attr_getaffinity_np(&attr, sizeof m, &m), 0);
    CHECK(CPU_EQUAL(&m, &first));
    pthread_attr_destroy(&attr);
    CHECK(all_pinned());

    /* A failed exec leaves its thread with the program's mask; the next look pins it. */
    CHECK_EQ(execl("/nonexistent/foresight-test", "x", (char *)NULL), -1);
    raw_mask(0, &m);
    CHECK(CPU_EQUAL(&m, &first));
    next_look();
    CHECK_EQ(enter(), 1);
    CHECK(all_pinned());
    CHECK_EQ(fs_global_pins, 1);

#if !defined(__SANITIZE_ADDRESS__)
    /* The program fits again: every thread has its mask back. */
    munmap(big, len);
    next_tick();
    CHECK_EQ(enter(), 0);
    CHECK(none_pinned());
    raw_mask(0, &m);
    CHECK(CPU_EQUAL(&m, &first));
    big = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    CHECK(big != MAP_FAILED);
    next_look();
    CHECK_EQ(enter(), 1);
    CHECK(all_pinned());
    CHECK_EQ(fs_global_pins, 2);
#endif

    /* A nest with indirect references gives the masks back, and none is pinned for ten
     * seconds after (in a child, pinned again on its own). */
    child = fork();
    if (child == 0) {
        if (enter() != 1 || !self_pinned())
            _exit(2);
        if (enter_nest(1) != 1 || self_pinned())
            _exit(3);
        next_look();
        _exit(enter() == 1 && !self_pinned() && fs_pin_ended == NULL ? 0 : 4);
    }
    CHECK_EQ(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 0);

    /* Nor while an indirect site runs, however long after its nest's entry: its begin
     * gives the masks back, the pin is refused until its end, and taken again after (in a
     * child). */
    child = fork();
    if (child == 0) {
        next_look();
        if (enter() != 1 || !self_pinned())
            _exit(2);
        FORESIGHT_SITE(site, "a[b[i]]");
        struct foresight_site *scope = NULL;
        foresight_random_begin(&site, &scope);
        if (self_pinned())
            _exit(3);
        next_look();
        if (enter() != 1 || self_pinned())
            _exit(4);
        foresight_random_end(&scope);
        next_look();
        _exit(enter() == 1 && self_pinned() && fs_pin_ended == NULL ? 0 : 5);
    }
    CHECK_EQ(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 0);

    /* A mask the program sets ends pinning (in a child, pinned again on its own). */
    child = fork();
    if (child == 0) {
        next_look();
        if (enter() != 1 || !self_pinned())
            _exit(2);
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(sched_getcpu(), &one);
        if (sched_setaffinity(0, sizeof one, &one) != 0)
            _exit(3);
        next_look();
        enter();
        cpu_set_t c;
        raw_mask(0, &c);
        /* The program's own mask stays, and no pin comes back. */
        _exit(CPU_EQUAL(&c, &one) && fs_pin_ended != NULL && !fs_pinned() ? 0 : 4);
    }
    CHECK_EQ(waitpid(child, &status, 0), child);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 0);

    /* A thread of the program's: every thread its mask back, the new one too, for good. */
    pthread_t t;
    CHECK_EQ(pthread_create(&t, NULL, nothing, NULL), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK(none_pinned());
    CHECK(fs_pin_ended != NULL);
    next_look();
    CHECK_EQ(enter(), 1);
    CHECK(none_pinned());
    munmap(big, len);
    return check_done("pin");
}
