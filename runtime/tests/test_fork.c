/* Fork safety: the child starts with an empty residency table and its own
 * workers, its hints work, and only the parent writes statistics. */
#include <sys/wait.h>

#include "check.h"
#include "internal.h"

int main(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/fork.dat", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    size_t len = 8u << 20;
    int fd = make_cold_file(path, len);
    CHECK(fd >= 0);
    const char *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    madvise((void *)m, len, MADV_RANDOM);
    FORESIGHT_SITE(site, "m");
    foresight_prefetch_at(&site, m, len / 2); /* workers now running in the parent */
    CHECK(wait_fraction(m, len / 2, 1.0, 0, 20));

    pid_t pid = fork();
    if (pid == 0) {
        int bad = 0;
        if (foresight__marked(foresight__directory(), m, 4096))
            bad |= 1; /* the child must not trust the parent's marks */
        if (fs_residency_footprint() != 0)
            bad |= 2;
        foresight_prefetch_at(&site, m + len / 2, len / 2);
        if (!wait_fraction(m + len / 2, len / 2, 1.0, 0, 20))
            bad |= 4; /* the child's own workers must carry its hints out */
        _exit(bad);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 0);
    CHECK(foresight__marked(foresight__directory(), m, 4096));
    unlink(path);
    return check_done("fork");
}
