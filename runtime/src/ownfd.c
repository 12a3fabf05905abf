/*
 * ownfd.c — descriptors the runtime keeps open across calls (/proc/self/pagemap, the
 * trace file), kept safe from the program's own descriptor handling.
 *
 * A daemon-style program closes every descriptor from 3 up that it did not open, then
 * opens its own files, which take the lowest free numbers: a number the runtime kept
 * may then be the program's file.  Reading it would read the program's data as page
 * tables, writing it would write into the program's file, and closing it after a fork
 * (the child reopens /proc/self/pagemap for its own page table) took the descriptor
 * from the program: its child's writes failed with EBADF.  So a kept descriptor is
 * moved high (half the descriptor limit, at most 2048), away from the numbers open()
 * hands out, and its file's (device, inode) is remembered: before each use and before
 * closing it, fstat() must still find that file there, else the runtime forgets the
 * number and never touches it again.
 *
 * A file a runtime thread reads again and again (the cgroup's memory.stat every 10 ms,
 * memcg.c) is kept open the same way and read with pread from its start, which makes
 * the kernel's seq file show it afresh: a runtime thread opening files all the time
 * would take the lowest free number for a moment, and a daemon's `close(0);
 * open("/dev/null")` expecting descriptor 0 could get another.  The same holds for a
 * program thread that opens its files while another runs a hinted loop: every /proc
 * and cgroup file the runtime reads again and again is kept (fs_kept_*), opened before
 * the program runs, and opened again only on the program's own thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

int fs_own_fd(struct fs_own *o, int fd)
{
    o->fd = -1;
    if (fd < 0)
        return -1;
    int saved = errno;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > 64) {
        int high = fcntl(fd, F_DUPFD_CLOEXEC,
                         (int)(rl.rlim_cur < 4096 ? rl.rlim_cur / 2 : 2048));
        if (high >= 0) {
            close(fd);
            fd = high;
        }
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        errno = saved;
        return -1;
    }
    o->dev = st.st_dev;
    o->ino = st.st_ino;
    o->fd = fd;
    errno = saved;
    return fd;
}

bool fs_own_valid(const struct fs_own *o)
{
    if (o->fd < 0)
        return false;
    int saved = errno;
    struct stat st;
    bool ours = fstat(o->fd, &st) == 0 && st.st_dev == o->dev && st.st_ino == o->ino;
    errno = saved;
    return ours;
}

void fs_own_close(struct fs_own *o)
{
    if (fs_own_valid(o)) {
        int saved = errno;
        close(o->fd);
        errno = saved;
    }
    o->fd = -1;
}

ssize_t fs_own_pread(struct fs_own *o, const char *path, char *buf, size_t len)
{
    if (len == 0)
        return -1;
    memset(buf, 0, len);
    if (!fs_own_valid(o)) {
        o->fd = -1; /* never opened, or the program closed it: open it (again) */
        if (fs_own_fd(o, open(path, O_RDONLY | O_CLOEXEC)) < 0)
            return -1;
    }
    int saved = errno;
    ssize_t n = pread(o->fd, buf, len - 1, 0);
    errno = saved;
    return n;
}

static const char *kept_path[FS_KEPT_N] = {
    [FS_KEPT_STAT] = "/proc/stat",          [FS_KEPT_MEMINFO] = "/proc/meminfo",
    [FS_KEPT_VMSTAT] = "/proc/vmstat",
    [FS_KEPT_SELF_STAT] = "/proc/self/stat", [FS_KEPT_STATM] = "/proc/self/statm",
    [FS_KEPT_MAPS] = "/proc/self/maps",     [FS_KEPT_TASKS] = "/proc/self/task",
    [FS_KEPT_STATUS] = "/proc/self/status",
};
static char main_stat_path[64];
static struct fs_own kept[FS_KEPT_N] = {
    [0 ... FS_KEPT_N - 1] = {.fd = -1},
};

void fs_kept_path(enum fs_kept k, const char *path)
{
    kept_path[k] = path != NULL && path[0] != 0 ? path : NULL;
}

static void open_kept(enum fs_kept k)
{
    if (k == FS_KEPT_MAIN_STAT) {
        snprintf(main_stat_path, sizeof main_stat_path, "/proc/self/task/%d/stat",
                 (int)getpid());
        kept_path[k] = main_stat_path;
    }
    if (kept_path[k] == NULL || fs_own_valid(&kept[k]))
        return;
    const int flags = O_RDONLY | O_CLOEXEC | (k == FS_KEPT_TASKS ? O_DIRECTORY : 0);
    (void)fs_own_fd(&kept[k], open(kept_path[k], flags));
}

void fs_kept_open_all(void)
{
    for (int k = 0; k < FS_KEPT_N; k++)
        open_kept((enum fs_kept)k);
}

void fs_kept_after_fork(void)
{
    /* The child's own process files (the parent's stay open in the parent). */
    for (int k = FS_KEPT_SELF_STAT; k <= FS_KEPT_TASKS; k++) {
        fs_own_close(&kept[k]);
        open_kept((enum fs_kept)k);
    }
}

int fs_kept_fd(enum fs_kept k)
{
    if (!fs_own_valid(&kept[k])) {
        if (fs_on_library_thread)
            return -1;
        open_kept(k);
    }
    return fs_own_valid(&kept[k]) ? kept[k].fd : -1;
}

ssize_t fs_kept_pread(enum fs_kept k, char *buf, size_t len, off_t off)
{
    if (len == 0)
        return -1;
    buf[0] = 0;
    const int saved = errno;
    const int fd = fs_kept_fd(k);
    ssize_t n = -1;
    if (fd >= 0) {
        do
            n = pread(fd, buf, len - 1, off);
        while (n < 0 && errno == EINTR);
    }
    buf[n > 0 ? n : 0] = 0;
    errno = saved;
    return n;
}

long long fs_kept_stat_field(enum fs_kept k, int n)
{
    char buf[1024];
    if (fs_kept_pread(k, buf, sizeof buf, 0) <= 0)
        return -1;
    const char *p = strrchr(buf, ')');
    for (int field = 2; p != NULL && field < n; field++)
        p = strchr(p + 1, ' ');
    if (p == NULL)
        return -1;
    char *end;
    const long long v = strtoll(p + 1, &end, 10);
    return end == p + 1 ? -1 : v;
}
