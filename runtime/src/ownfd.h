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

#endif
