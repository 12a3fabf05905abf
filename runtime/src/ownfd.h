/* ownfd.c: a descriptor the runtime keeps open, moved high, checked before each use. */
#ifndef FORESIGHT_OWNFD_H
#define FORESIGHT_OWNFD_H

#include <stdbool.h>
#include <sys/types.h>

struct fs_own {
    int fd; /* -1: none */
    dev_t dev;
    ino_t ino;
};
int fs_own_fd(struct fs_own *o, int fd); /* takes FD (closed on failure); the kept one or -1 */
bool fs_own_valid(const struct fs_own *o); /* still the file it was (fstat) */
void fs_own_close(struct fs_own *o);       /* closed if still ours; forgotten either way */
/* PATH's first LEN-1 bytes into BUF (NUL-terminated) through O, opened (again) when it is
 * not open: for a file one thread reads repeatedly.  Bytes read, or -1. */
ssize_t fs_own_pread(struct fs_own *o, const char *path, char *buf, size_t len);

/* Files the runtime reads again and again, from any of its threads: opened at start-up
 * (fs_kept_open_all, before the program runs) and in a forked child (fs_kept_after_fork,
 * before it has a second thread), then only read.  A cgroup file's path is given first
 * (fs_kept_path; the string must stay). */
enum fs_kept {
    FS_KEPT_STAT,      /* /proc/stat */
    FS_KEPT_MEMINFO,   /* /proc/meminfo */
    FS_KEPT_VMSTAT,    /* /proc/vmstat */
    FS_KEPT_SELF_STAT, /* /proc/self/stat (per process, as the rest) */
    FS_KEPT_MAIN_STAT, /* /proc/self/task/PID/stat: the main thread's */
    FS_KEPT_STATM,     /* /proc/self/statm */
    FS_KEPT_STATUS,    /* /proc/self/status */
    FS_KEPT_MAPS,      /* /proc/self/maps */
    FS_KEPT_TASKS,     /* /proc/self/task, a directory */
    FS_KEPT_CG_USAGE,  /* the limiting cgroup's usage file (budget.c) */
    FS_KEPT_CG_STAT,   /* its memory.stat (budget.c) */
    FS_KEPT_N
};
void fs_kept_path(enum fs_kept k, const char *path);
void fs_kept_open_all(void);
void fs_kept_after_fork(void);
/* LEN-1 bytes from offset OFF into BUF, NUL-terminated: bytes read, or -1.  A file the
 * program closed is opened again only on the program's own thread (a library thread's
 * open would take the lowest free number from under it). */
ssize_t fs_kept_pread(enum fs_kept k, char *buf, size_t len, off_t off);
int fs_kept_fd(enum fs_kept k); /* its descriptor (the directory's, for getdents), or -1 */
/* Field N (from 1, as proc(5) counts) of a kept /proc stat file; -1 if not there.  The
 * name (field 2) may hold spaces and ')': fields are counted from its last ')'. */
long long fs_kept_stat_field(enum fs_kept k, int n);

#endif
