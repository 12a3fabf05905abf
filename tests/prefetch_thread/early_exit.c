/* trap: exit in the middle: a helper calls exit(3) while the program reads backward (the thread must go with the process), atexit runs, stderr says why */
/* inputs: this file built with -DMAKE_INPUTS, run first */
/* exit: 3 */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"

#define REC 4096
#define NREC 1024

static uint64_t h = CHECKSUM_START;

static void at_end(void)
{
    printf("atexit: %016llx\n", (unsigned long long)h);
}

static void check(const char *rec, int r)
{
    if (r == 700) {
        fprintf(stderr, "record %d: %.12s: stopping\n", r, rec);
        exit(3);
    }
}

#ifdef MAKE_INPUTS
/* The inputs, made in the run's directory before the measured run. */
int main(void)
{
    make_records("long.dat", NREC, REC, 71);
    return 0;
}
#else
int main(void)
{
    atexit(at_end);
    int fd = open("long.dat", O_RDONLY);
    if (fd < 0)
        return 1;
    char rec[REC];
    for (int r = NREC - 1; r >= 0; r--) {
        lseek(fd, (off_t)r * REC, SEEK_SET);
        if (read(fd, rec, REC) != REC)
            return 1;
        h = checksum(h, rec, REC);
        check(rec, r);
    }
    printf("not reached\n");
    return 0;
}
#endif
