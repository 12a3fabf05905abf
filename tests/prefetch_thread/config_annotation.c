/* trap: the annotations: a small file marked prefetch and a large one marked config, whose contents give the offsets */
/* inputs: this file built with -DMAKE_INPUTS, run first */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"

#define REC 1024

#ifdef MAKE_INPUTS
/* The inputs, made in the run's directory before the measured run. */
int main(void)
{
    make_records("small.dat", 1000, REC, 79);   /* 1000 KiB: below the size rule */
    int fd = open("offsets.cfg", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    for (int k = 0; k < 400000; k++) {   /* 3.2 MiB of offsets */
        long off = ((long)k * 7877 % 1000) * REC;
        if (write(fd, &off, sizeof off) != sizeof off)
            return 1;
    }
    return close(fd) != 0;
}
#else
int main(void)
{
    int cfg = open("offsets.cfg", O_RDONLY); /* foresight: config */
    int data = open("small.dat", O_RDONLY); /* foresight: prefetch */
    if (cfg < 0 || data < 0)
        return 1;
    long offs[256];
    char rec[REC];
    uint64_t h = CHECKSUM_START;
    long used = 0;
    for (int k = 0; k < 4; k++) {
        if (read(cfg, offs, sizeof offs) != sizeof offs)
            return 1;
        for (int j = 0; j < 256; j++) {
            if (pread(data, rec, REC, offs[j]) != REC)
                return 1;
            h = checksum(h, rec, REC);
            used++;
        }
    }
    close(cfg);
    close(data);
    printf("%ld records, %016llx\n", used, (unsigned long long)h);
    return 0;
}
#endif
