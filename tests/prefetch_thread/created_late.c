/* trap: files the program creates after the thread has got to their opens: an index written and read back through one descriptor, then a second written, closed and opened again read-only: the thread's lead reads must find them once the program has made them */
/* inputs: this file built with -DMAKE_INPUTS, run first */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "corpus.h"

#define REC 4096
#define NREC 600   /* 2.3 MiB */
#define ENTRIES 20

#ifdef MAKE_INPUTS
int main(void)
{
    make_records("late.dat", NREC, REC, 59);
    return 0;
}
#else
static int write_index(int ix, long mul)
{
    for (long k = 0; k < ENTRIES; k++) {
        const long entry = (k * mul + 7) % NREC;
        if (write(ix, &entry, sizeof entry) != (ssize_t)sizeof entry)
            return -1;
    }
    return 0;
}

int main(void)
{
    /* Something slow before each index is made (a sleep, which the thread does not copy):
     * the thread is at its opens before the program has created it. */
    const struct timespec pause = {0, 100000000};
    nanosleep(&pause, NULL);
    int fd = open("late.dat", O_RDONLY);
    int ix = open("late1.idx", O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ix < 0 || write_index(ix, 211) != 0)
        return 1;
    char rec[REC];
    uint64_t h = CHECKSUM_START;
    for (long k = ENTRIES - 1; k >= 0; k--) {
        long at;
        if (pread(ix, &at, sizeof at, (off_t)(k * (long)sizeof at)) != (ssize_t)sizeof at ||
            at < 0 || at >= NREC)
            return 1;
        if (pread(fd, rec, REC, (off_t)at * REC) != REC)
            return 1;
        h = checksum(h, rec, REC);
    }
    close(ix);

    nanosleep(&pause, NULL);
    ix = open("late2.idx", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (ix < 0 || write_index(ix, 97) != 0 || close(ix) != 0)
        return 1;
    ix = open("late2.idx", O_RDONLY);
    if (ix < 0)
        return 1;
    long at;
    while (read(ix, &at, sizeof at) == (ssize_t)sizeof at) {
        if (at < 0 || at >= NREC || pread(fd, rec, REC, (off_t)at * REC) != REC)
            return 1;
        h = checksum(h, rec, REC);
    }
    printf("%d records by two indexes written: %016llx\n", 2 * ENTRIES,
           (unsigned long long)h);
    close(ix);
    close(fd);
    return 0;
}
#endif
