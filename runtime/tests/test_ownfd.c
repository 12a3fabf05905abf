/* Descriptors the runtime keeps (ownfd.c) against a program that closes and reuses
 * descriptor numbers it did not open: a kept descriptor sits high; once the program
 * closed it and the number names another file, the runtime neither trusts nor closes
 * it; and a daemon-style program (close everything from 3, open its file, fork) keeps
 * its file in the child, after the runtime's pagemap descriptor (reuse.c) was open; a
 * file read repeatedly (fs_own_pread) takes no low number. */
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "check.h"
#include "internal.h"

static bool open_fd(int fd)
{
    return fcntl(fd, F_GETFD) != -1;
}

int main(void)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/ownfd.dat", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");

    /* A kept descriptor is high, and valid until the program takes its number. */
    struct rlimit rl;
    CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
    struct fs_own o;
    int fd = fs_own_fd(&o, open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC));
    if (rl.rlim_cur > 64) /* half the limit, at most 2048 */
        CHECK(fd >= (int)(rl.rlim_cur < 4096 ? rl.rlim_cur / 2 : 2048));
    else
        CHECK(fd >= 0);
    CHECK(fs_own_valid(&o));
    int mine = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(mine >= 0);
    CHECK_EQ(dup2(mine, fd), fd);  /* the program's file at the kept number */
    CHECK(!fs_own_valid(&o));
    fs_own_close(&o);
    CHECK(open_fd(fd));            /* not closed: it is the program's */
    CHECK_EQ(o.fd, -1);
    close(fd);
    close(mine);
    CHECK_EQ(fs_own_fd(&o, -1), -1);

    /* A file read again and again is kept open, high: no low number is ever taken. */
    struct fs_own k = {.fd = -1};
    char buf[256];
    int low = open("/dev/null", O_RDONLY); /* the lowest free number now */
    close(low);
    for (int r = 0; r < 3; r++)
        CHECK(fs_own_pread(&k, "/proc/self/statm", buf, sizeof buf) > 0);
    CHECK(k.fd != low && buf[0] >= '0' && buf[0] <= '9');
    int again = open("/dev/null", O_RDONLY);
    CHECK_EQ(again, low);
    close(again);
    fs_own_close(&k);

    /* The daemon's way, after the runtime read the page table. */
    size_t len = 1u << 20;
    char *m = mmap(NULL, 2 * len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED);
    char *a = (char *)(((uintptr_t)m + len - 1) & ~(uintptr_t)(len - 1)); /* a block's start */
    memset(a, 1, len);
    uint16_t mapped[FS_REUSE_BLOCKS];
    CHECK(fs_reuse_check((uintptr_t)a >> FORESIGHT_PAGE_SHIFT, 16, mapped));
    CHECK_EQ(mapped[0], 0xffff);   /* read from the page table: the descriptor is open */
#ifdef SYS_close_range
    if (syscall(SYS_close_range, 3u, ~0u, 0u) != 0)
#endif
        for (long d = 3; d < (long)(rl.rlim_cur < 65536 ? rl.rlim_cur : 65536); d++)
            close((int)d);
    int data = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(data >= 3);
    CHECK(fs_reuse_check((uintptr_t)a >> FORESIGHT_PAGE_SHIFT, 16, mapped)); /* reopened */
    pid_t pid = fork();
    if (pid == 0)
        _exit(write(data, "x", 1) == 1 ? 0 : 3);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 0);
    CHECK(open_fd(data));
    char c = 0;
    CHECK_EQ(pread(data, &c, 1, 0), 1);
    CHECK_EQ(c, 'x');
    close(data);
    unlink(path);
    return check_done("ownfd");
}
