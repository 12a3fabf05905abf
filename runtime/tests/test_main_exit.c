/* A program whose main thread ends with pthread_exit() ends with its last thread, as
 * without the library (whose own threads never end): exit status 0 and buffered output
 * flushed; an exit() in the last thread keeps its status; never before that thread
 * ends, in a forked child too, whose count of library threads is not its parent's.
 * Each case runs in a fresh process (this program again), killed after 10 s. */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include "check.h"
#include "internal.h"

static int last_status = -1;

/* The process's threads, from /proc/self/status. */
static unsigned tasks(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned n = 0;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "Threads: %u", &n) == 1)
            break;
    if (f != NULL)
        fclose(f);
    return n;
}

/* The program's last thread: waits, prints (buffered: a pipe), then returns or exits. */
static void *last(void *arg)
{
    struct timespec t = {0, 300 * 1000 * 1000};
    nanosleep(&t, NULL);
    printf("last thread done\n");
    if (last_status >= 0)
        exit(last_status);
    return arg;
}

static void end_main_early(int status)
{
    last_status = status;
    FORESIGHT_SITE(site, "x");
    static char page[4096];
    foresight_prefetch_at(&site, page, sizeof page); /* the library's workers are running */
    pthread_t t;
    if (pthread_create(&t, NULL, last, NULL) != 0)
        _exit(90);
    pthread_exit(NULL);
}

/* Runs this program with CASE; its stdout, exit status and seconds. */
static int run_case(const char *self, const char *which, char *out, size_t cap, int *status,
                    double *secs)
{
    int p[2];
    if (pipe(p) != 0)
        return -1;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(p[1], 1);
        close(p[0]);
        close(p[1]);
        execl(self, self, which, (char *)NULL);
        _exit(91);
    }
    close(p[1]);
    /* A process that never ends (only library threads left, every signal but SIGKILL
     * blocked) fails the test after 10 s instead of hanging it. */
    size_t n = 0;
    for (int waited = 0; waitpid(pid, status, WNOHANG) == 0; waited++) {
        if (waited == 1000) {
            kill(pid, SIGKILL);
            waitpid(pid, status, 0);
            break;
        }
        struct timespec t = {0, 10 * 1000 * 1000};
        nanosleep(&t, NULL);
    }
    fcntl(p[0], F_SETFL, O_NONBLOCK);
    ssize_t k;
    while (n + 1 < cap && (k = read(p[0], out + n, cap - 1 - n)) > 0)
        n += (size_t)k;
    out[n] = 0;
    close(p[0]);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "return") == 0)
        end_main_early(-1);
    if (argc == 2 && strcmp(argv[1], "exit3") == 0)
        end_main_early(3);
    if (argc == 2 && strcmp(argv[1], "forked") == 0) {
        /* The parent's library threads run; the child must not count them. */
        FORESIGHT_SITE(site, "y");
        static char page[4096];
        foresight_prefetch_at(&site, page, sizeof page);
        /* Forks once every library thread runs (each is counted once it runs: the
         * process has no other threads than this one and those): ASan's allocator (GCC
         * 12) is not fork-safe, and a thread forked inside its start-up would leave its
         * lock held. */
        for (int i = 0; i < 5000 && !(fs_library_threads_running() >= (unsigned)fs_cfg.workers &&
                                      tasks() == 1 + fs_library_threads_running());
             i++)
            nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0)
            end_main_early(-1);
        int st = 0;
        waitpid(pid, &st, 0);
        printf("child %s %d\n", WIFEXITED(st) ? "exited" : "killed",
               WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
        return 0;
    }

    char self[4096], out[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    CHECK(len > 0);
    self[len > 0 ? len : 0] = 0;
    int st = 0;
    double secs = 0;

    CHECK(run_case(self, "return", out, sizeof out, &st, &secs) == 0);
    CHECK(WIFEXITED(st));
    CHECK_EQ(WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st), 0);
    CHECK(strcmp(out, "last thread done\n") == 0);
    CHECK(secs >= 0.29);

    CHECK(run_case(self, "exit3", out, sizeof out, &st, &secs) == 0);
    CHECK_EQ(WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st), 3);
    CHECK(strcmp(out, "last thread done\n") == 0);

    CHECK(run_case(self, "forked", out, sizeof out, &st, &secs) == 0);
    CHECK_EQ(WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st), 0);
    CHECK(strcmp(out, "last thread done\nchild exited 0\n") == 0);
    if (check_failures)
        fprintf(stderr, "last output: %s", out);
    return check_done("main_exit");
}
