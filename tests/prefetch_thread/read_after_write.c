/* trap: Read after Write on one file: records written, read back, overwritten in place, read through a second descriptor, the file cut and grown */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"

#define REC 4096
#define NREC 640   /* 2.5 MiB */

int main(void)
{
    int fd = open("raw.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror("raw.dat");
        return 1;
    }
    char rec[REC];
    for (int r = 0; r < NREC; r++) {
        memset(rec, 'a' + r % 26, REC);
        snprintf(rec, 32, "first %d", r);
        if (write(fd, rec, REC) != REC)
            return 1;
    }
    uint64_t h = CHECKSUM_START;
    for (int r = NREC - 1; r >= 0; r--) {   /* read back what was just written */
        if (pread(fd, rec, REC, (off_t)r * REC) != REC)
            return 1;
        h = checksum(h, rec, REC);
    }
    printf("written and read back: %016llx\n", (unsigned long long)h);
    for (int r = 0; r < NREC; r += 3) {   /* overwrite every third record, then read it */
        snprintf(rec, 32, "second %d", r);
        if (pwrite(fd, rec, 32, (off_t)r * REC) != 32)
            return 1;
        char back[32];
        if (pread(fd, back, 32, (off_t)r * REC) != 32 || memcmp(back, rec, 32) != 0) {
            printf("record %d: read %.16s after writing %.16s\n", r, back, rec);
            return 1;
        }
    }
    int again = open("raw.dat", O_RDONLY);
    h = CHECKSUM_START;
    for (int r = NREC - 1; r >= 0; r -= 2) {
        lseek(again, (off_t)r * REC, SEEK_SET);
        if (read(again, rec, REC) != REC)
            return 1;
        h = checksum(h, rec, REC);
    }
    printf("second descriptor: %016llx\n", (unsigned long long)h);
    if (ftruncate(fd, 100 * REC + 10) != 0)
        return 1;
    ssize_t n = pread(again, rec, REC, 100 * REC);
    printf("after truncation: %zd bytes at record 100, none at 200: %zd\n", n,
           pread(again, rec, REC, 200 * REC));
    lseek(fd, 0, SEEK_END);
    if (write(fd, "grown", 5) != 5)
        return 1;
    n = pread(again, rec, REC, 100 * REC);
    printf("after growing: %zd bytes, ending %.5s\n", n, rec + n - 5);
    close(again);
    close(fd);
    return 0;
}
