/* trap: short reads at EOF: a file of 2 MiB + 1234 bytes read in 4 KiB chunks, reads and preads across and past the end, zero-byte reads */
/* inputs: this file built with -DMAKE_INPUTS, run first */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"

#ifdef MAKE_INPUTS
/* The inputs, made in the run's directory before the measured run. */
int main(void)
{
    make_records("odd.dat", 2 * 1024 + 1, 1024, 9);
    return truncate("odd.dat", 2 * 1024 * 1024 + 1234) != 0;
}
#else
int main(void)
{
    int fd = open("odd.dat", O_RDONLY);
    if (fd < 0)
        return 1;
    char buf[4096];
    ssize_t n;
    long reads = 0, bytes = 0, last = 0;
    uint64_t h = CHECKSUM_START;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
        reads++;
        bytes += n;
        last = n;
        h = checksum(h, buf, (size_t)n);
    }
    printf("%ld reads, %ld bytes, the last %ld, then %zd; %016llx\n", reads, bytes, last, n,
           (unsigned long long)h);
    off_t end = lseek(fd, 0, SEEK_END);
    lseek(fd, end - 100, SEEK_SET);
    n = read(fd, buf, sizeof buf);
    printf("read at end-100: %zd\n", n);
    n = read(fd, buf, sizeof buf);
    printf("read at the end: %zd\n", n);
    printf("pread past the end: %zd\n", pread(fd, buf, sizeof buf, end + 10));
    printf("pread across the end: %zd\n", pread(fd, buf, sizeof buf, end - 1000));
    lseek(fd, -5, SEEK_END);
    n = read(fd, buf, sizeof buf);
    printf("read at end-5: %zd\n", n);
    lseek(fd, 4096, SEEK_SET);
    n = read(fd, buf, 0);
    printf("zero-byte read: %zd, offset after: %lld\n", n, (long long)lseek(fd, 0, SEEK_CUR));
    for (off_t off = end - 1; off >= end - 3 * 4096; off -= 4096) {
        n = pread(fd, buf, 4096, off);
        printf("pread at %lld: %zd\n", (long long)off, n);
    }
    close(fd);
    return 0;
}
#endif
