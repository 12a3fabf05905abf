/* trap: failed opens and failing calls: errno and return values as without a thread, errno untouched by good calls */
/* inputs: this file built with -DMAKE_INPUTS, run first */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include "corpus.h"

#define REC 4096

#ifdef MAKE_INPUTS
/* The inputs, made in the run's directory before the measured run. */
int main(void)
{
    make_records("present.dat", 600, REC, 4);
    return 0;
}
#else
int main(void)
{
    int fd = open("missing.dat", O_RDONLY);
    printf("missing.dat: %d, %s\n", fd, fd < 0 ? strerror(errno) : "opened");
    if (fd < 0)
        fd = open("present.dat", O_RDONLY);
    char rec[REC];
    uint64_t h = CHECKSUM_START;
    for (int r = 599; r >= 0; r -= 7) {
        errno = 0;
        lseek(fd, (off_t)r * REC, SEEK_SET);
        ssize_t n = read(fd, rec, REC);
        if (n != REC || errno != 0) {
            printf("record %d: %zd, errno %d\n", r, n, errno);
            return 1;
        }
        h = checksum(h, rec, REC);
    }
    printf("present.dat: %016llx\n", (unsigned long long)h);
    int dir = open(".", O_RDONLY);
    ssize_t n = read(dir, rec, REC);
    printf("read of a directory: %zd, %s\n", n, strerror(errno));
    close(dir);
    int closed = dup(fd);
    close(closed);
    n = read(closed, rec, REC);
    printf("read of a closed descriptor: %zd, %s\n", n, strerror(errno));
    off_t off = lseek(fd, -1, SEEK_SET);
    printf("lseek to -1: %lld, %s\n", (long long)off, strerror(errno));
    int p[2];
    if (pipe(p) != 0)
        return 1;
    off = lseek(p[0], 0, SEEK_SET);
    printf("lseek on a pipe: %lld, %s\n", (long long)off, strerror(errno));
    int nd = open("present.dat/x", O_RDONLY);
    printf("a file as a directory: %d, %s\n", nd, strerror(errno));
    int wr = open("missing-dir/new.dat", O_WRONLY | O_CREAT, 0644);
    printf("create in a missing directory: %d, %s\n", wr, strerror(errno));
    close(p[0]);
    close(p[1]);
    close(fd);
    return 0;
}
#endif
