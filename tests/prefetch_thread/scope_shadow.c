/* trap: the paper's shadowing example (Section 4.1): an inner `i` in its own block is not the `i` of the lseek */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"

#define REC 4096
#define NREC 1024   /* 4 MiB: prefetchable by its size */

int main(void)
{
    make_records("shadow.dat", NREC, REC, 13);
    int fp = open("shadow.dat", O_RDONLY);
    if (fp < 0) {
        perror("shadow.dat");
        return 1;
    }
    char buf[48];
    long inner_sum = 0;
    uint64_t h = CHECKSUM_START;
    for (int round = 0; round < 300; round++) {
        int i;
        i = (round * 37) % NREC;
        {
            int i;
            i = 6 + round;   /* never an offset */
            inner_sum += i;
        }
        if (lseek(fp, (off_t)i * REC, SEEK_SET) < 0 || read(fp, buf, sizeof buf) != sizeof buf)
            return 1;
        buf[sizeof buf - 1] = 0;
        h = checksum(h, buf, sizeof buf);
        if (round % 60 == 0)
            printf("round %d: record %d says %.20s\n", round, i, buf);
    }
    /* The paper's fragment itself: lines 4 and 5 do not reach the lseek of line 7. */
    int i;
    i = 5;
    {
        int i;
        i = 6;
        inner_sum += i;
    }
    lseek(fp, i, SEEK_SET);
    ssize_t n = read(fp, buf, 8);
    printf("paper fragment: %zd bytes at offset %d: %02x %02x\n", n, i, (unsigned char)buf[0],
           (unsigned char)buf[1]);
    close(fp);
    printf("inner sum %ld, checksum %016llx\n", inner_sum, (unsigned long long)h);
    return 0;
}
