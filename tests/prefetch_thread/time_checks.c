/* trap: the reads depend on what gettimeofday and clock_gettime store through their pointers (a start record, a deadline checked before each read): the thread takes the program's results from the channel, never asks the clock itself */
/* inputs: this file built with -DMAKE_INPUTS, run first */
#define _POSIX_C_SOURCE 200809L
#include <sys/time.h>
#include <time.h>
#include "corpus.h"

#define REC 4096
#define NREC 700   /* 2.7 MiB */

#ifdef MAKE_INPUTS
int main(void)
{
    make_records("clock.dat", NREC, REC, 67);
    return 0;
}
#else
static struct timeval started;

int main(void)
{
    int fd = open("clock.dat", O_RDONLY);
    if (fd < 0 || gettimeofday(&started, NULL) != 0)
        return 1;
    /* Always 660 (a clock never reads before 1970), but only the clock says so. */
    long r = started.tv_sec > 0 ? NREC - 40 : 3;
    char rec[REC];
    uint64_t h = CHECKSUM_START;
    long reads = 0;
    for (; r >= 0; r -= 11) {
        struct timespec now;
        if (clock_gettime(CLOCK_MONOTONIC, &now) != 0 || now.tv_sec < 0)
            break;   /* never: a monotonic clock is not negative */
        if (pread(fd, rec, REC, (off_t)r * REC) != REC)
            return 1;
        h = checksum(h, rec, REC);
        reads++;
    }
    printf("%ld records from the clock's start: %016llx\n", reads, (unsigned long long)h);
    close(fd);
    return 0;
}
#endif
