/* The library's threads keep their stacks in memory (workers.c: lock_own_stack): under a
 * small cgroup limit a sleeping thread's stack swapped out, and its swap-in charge on
 * waking, was where the OOM killer struck.  Each library thread (named foresight-*) must
 * have locked at least the 32 KiB below where it started; this program locks nothing
 * itself, so /proc/self/status's VmLck counts only theirs. */
#include <dirent.h>

#include "check.h"
#include "internal.h"

static int library_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        char path[300], comm[64] = {0};
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue;
        if (fgets(comm, sizeof comm, f) != NULL && strncmp(comm, "foresight-", 10) == 0)
            n++;
        fclose(f);
    }
    if (d != NULL)
        closedir(d);
    return n;
}

static long locked_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "VmLck: %ld kB", &kib) == 1)
            break;
    if (f != NULL)
        fclose(f);
    return kib;
}

int main(void)
{
    fs_workers_ensure_started();
    int n = 0;
    for (int i = 0; i < 200 && (n = library_threads()) == 0; i++)
        usleep(10000);
    usleep(100000); /* each locks its stack as it starts */
    const long kib = locked_kib();
    printf("locked_stacks: %d library threads, %ld KiB locked\n", n, kib);
    CHECK(n >= 1);
    CHECK(kib >= 36L * n);
    return check_failures != 0;
}
