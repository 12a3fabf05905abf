/* trap: index -> records: an index file (never written by this run) read first, whose entries are the offsets of the records read next */
/* inputs: this file built with -DMAKE_INPUTS, run first */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"

#define REC 512
#define NREC 8192   /* 4 MiB */
#define ENTRIES 600

#ifdef MAKE_INPUTS
/* The inputs, made in the run's directory before the measured run. */
int main(void)
{
    make_records("records.dat", NREC, REC, 11);
    int fd = open("records.idx", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    for (long k = 0; k < ENTRIES; k++) {
        /* a scattered order; the last entries point past the end of the data */
        long off = k < ENTRIES - 3 ? (k * 2654435761L % NREC) * REC : (NREC + k) * REC;
        if (write(fd, &off, sizeof off) != sizeof off)
            return 1;
    }
    return close(fd) != 0;
}
#else
int main(void)
{
    int idx = open("records.idx", O_RDONLY);
    int dat = open("records.dat", O_RDONLY);
    if (idx < 0 || dat < 0) {
        perror("open");
        return 1;
    }
    long offsets[64];
    char rec[REC];
    uint64_t h = CHECKSUM_START;
    long records = 0, short_reads = 0;
    ssize_t got;
    while ((got = read(idx, offsets, sizeof offsets)) > 0) {
        for (long k = 0; k < got / (long)sizeof offsets[0]; k++) {
            ssize_t n = pread(dat, rec, REC, offsets[k]);
            if (n != REC) {
                short_reads++;
                continue;
            }
            h = checksum(h, rec, REC);
            records++;
        }
    }
    close(idx);
    close(dat);
    printf("%ld records, %ld short, checksum %016llx\n", records, short_reads,
           (unsigned long long)h);
    return 0;
}
#endif
