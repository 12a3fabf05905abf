/* trap: scatter reads: readv into three buffers, preadv backward, the offset readv moves */
/* inputs: this file built with -DMAKE_INPUTS, run first */
#define _GNU_SOURCE
#include <sys/uio.h>
#include "corpus.h"

#define REC 4096

#ifdef MAKE_INPUTS
/* The inputs, made in the run's directory before the measured run. */
int main(void)
{
    make_records("vec.dat", 768, REC, 61);
    return 0;
}
#else
int main(void)
{
    int fd = open("vec.dat", O_RDONLY);
    if (fd < 0)
        return 1;
    char head[100], body[3000], tail[REC];
    struct iovec iov[3] = {{head, sizeof head}, {body, sizeof body}, {tail, sizeof tail}};
    uint64_t h = CHECKSUM_START;
    for (int k = 0; k < 20; k++) {
        ssize_t n = readv(fd, iov, 3);
        if (n <= 0)
            return 1;
        h = checksum(h, head, sizeof head);
        h = checksum(h, tail, sizeof tail);
    }
    printf("readv: offset %lld, %016llx\n", (long long)lseek(fd, 0, SEEK_CUR),
           (unsigned long long)h);
    for (int r = 760; r >= 0; r -= 9) {
        ssize_t n = preadv(fd, iov, 3, (off_t)r * REC);
        if (n != (ssize_t)(sizeof head + sizeof body + sizeof tail))
            return 1;
        h = checksum(h, body, sizeof body);
    }
    printf("preadv: offset %lld, %016llx\n", (long long)lseek(fd, 0, SEEK_CUR),
           (unsigned long long)h);
    close(fd);
    return 0;
}
#endif
