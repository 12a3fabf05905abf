/* trap: read after write with lead reads: the program writes an index, reads it back entry by entry and reads the record each entry names: the thread's lead reads of the index wait for the program's (a sync point at each), then it predicts the record */
/* inputs: this file built with -DMAKE_INPUTS, run first */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"

#define REC 4096
#define NREC 600   /* 2.3 MiB */
#define ENTRIES 40

#ifdef MAKE_INPUTS
int main(void)
{
    make_records("rawix.dat", NREC, REC, 53);
    return 0;
}
#else
int main(void)
{
    int ix = open("rawix.idx", O_RDWR | O_CREAT | O_TRUNC, 0644);
    int fd = open("rawix.dat", O_RDONLY);
    if (ix < 0 || fd < 0) {
        perror("open");
        return 1;
    }
    for (long k = 0; k < ENTRIES; k++) {
        const long entry = (k * 337 + 11) % NREC;
        if (write(ix, &entry, sizeof entry) != (ssize_t)sizeof entry)
            return 1;
    }
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
    printf("%d records by a written index: %016llx\n", ENTRIES, (unsigned long long)h);
    close(ix);
    close(fd);
    return 0;
}
#endif
