/* trap: descriptors sharing an offset: reads on a dup move the original's offset, and the program reads on with the other */
/* inputs: this file built with -DMAKE_INPUTS, run first */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"

#define REC 4096

#ifdef MAKE_INPUTS
/* The inputs, made in the run's directory before the measured run. */
int main(void)
{
    make_records("shared.dat", 768, REC, 97);
    return 0;
}
#else
int main(void)
{
    int a = open("shared.dat", O_RDONLY);
    int b = dup(a);
    if (a < 0 || b < 0)
        return 1;
    char rec[REC];
    uint64_t h = CHECKSUM_START;
    lseek(a, 500 * REC, SEEK_SET);
    for (int k = 0; k < 200; k++) {
        int fd = k % 3 == 0 ? b : a;
        if (read(fd, rec, REC) != REC)
            return 1;
        h = checksum(h, rec, REC);
        if (k % 50 == 49)
            lseek(b, -60 * REC, SEEK_CUR);   /* moves a's offset too */
    }
    printf("offset %lld, %016llx\n", (long long)lseek(a, 0, SEEK_CUR), (unsigned long long)h);
    close(a);
    close(b);
    return 0;
}
#endif
