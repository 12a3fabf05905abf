/* trap: offsets beyond 4 GiB: a sparse 6 GiB file (removed at the end) read with lseek + read and pread above, across and below the 4 GiB line */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"

#define REC 4096
#define GIB (1LL << 30)

static off_t where(int k)   /* record k: above 4 GiB, one straddling it, one below */
{
    if (k == 16)
        return 4 * GIB - 2048;
    if (k == 17)
        return 3 * GIB + 12345;
    return 4 * GIB + (off_t)k * (1 << 20) + 17 * REC;
}

int main(void)
{
    int fd = open("sparse.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ftruncate(fd, 6 * GIB) != 0) {
        perror("sparse.dat");
        return 1;
    }
    char rec[REC];
    for (int k = 0; k < 18; k++) {
        memset(rec, 'A' + k, REC);
        snprintf(rec, 40, "record %d at %lld", k, (long long)where(k));
        if (pwrite(fd, rec, REC, where(k)) != REC)
            return 1;
    }
    close(fd);
    fd = open("sparse.dat", O_RDONLY);
    printf("size %lld\n", (long long)lseek(fd, 0, SEEK_END));
    uint64_t h = CHECKSUM_START;
    for (int k = 17; k >= 0; k--) {
        off_t got = lseek(fd, where(k), SEEK_SET);
        if (got != where(k) || read(fd, rec, REC) != REC)
            return 1;
        h = checksum(h, rec, REC);
        if (k % 6 == 5 || k >= 16)
            printf("%.40s\n", rec);
    }
    for (int k = 0; k < 16; k += 5) {
        if (pread(fd, rec, REC, where(k) + REC) != REC)   /* the hole after it: zeros */
            return 1;
        h = checksum(h, rec, REC);
    }
    ssize_t n = pread(fd, rec, REC, 6 * GIB - 100);
    printf("at the end: %zd, checksum %016llx\n", n, (unsigned long long)h);
    close(fd);
    return unlink("sparse.dat") != 0;
}
