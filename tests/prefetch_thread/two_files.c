/* trap: two data files read alternately, one backward with SEEK_CUR moves, one forward with SEEK_END-relative ones, the results of lseek used in the computation */
/* inputs: this file built with -DMAKE_INPUTS, run first */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"

#define REC 4096

#ifdef MAKE_INPUTS
/* The inputs, made in the run's directory before the measured run. */
int main(void)
{
    make_records("left.dat", 640, REC, 83);
    make_records("right.dat", 700, REC, 89);
    return 0;
}
#else
int main(void)
{
    int a = open("left.dat", O_RDONLY), b = open("right.dat", O_RDONLY);
    if (a < 0 || b < 0)
        return 1;
    char rec[REC];
    uint64_t h = CHECKSUM_START;
    long positions = 0;
    lseek(a, 0, SEEK_END);
    for (int k = 1; k <= 300; k++) {
        off_t pa = lseek(a, -2 * REC, SEEK_CUR);   /* back over the record just read */
        if (pa < 0 || read(a, rec, REC) != REC)
            break;
        h = checksum(h, rec, REC);
        off_t pb = lseek(b, -(off_t)(700 - k) * REC, SEEK_END);
        if (read(b, rec, REC) != REC)
            return 1;
        h = checksum(h, rec, REC);
        positions += (long)(pa / REC) - (long)(pb / REC);
    }
    close(a);
    close(b);
    printf("positions %ld, %016llx\n", positions, (unsigned long long)h);
    return 0;
}
#endif
