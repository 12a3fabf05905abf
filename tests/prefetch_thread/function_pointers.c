/* trap: function pointers: the reader is chosen through a table, by the loop counter and by a byte of the data just read */
/* inputs: this file built with -DMAKE_INPUTS, run first */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"

#define REC 4096
#define NREC 768

typedef ssize_t (*reader)(int fd, long r, char *buf);

static ssize_t with_pread(int fd, long r, char *buf)
{
    return pread(fd, buf, REC, (off_t)r * REC);
}

static ssize_t with_lseek(int fd, long r, char *buf)
{
    lseek(fd, (off_t)r * REC, SEEK_SET);
    return read(fd, buf, REC);
}

static ssize_t mirrored(int fd, long r, char *buf)
{
    return pread(fd, buf, REC, (off_t)(NREC - 1 - r) * REC);
}

#ifdef MAKE_INPUTS
/* The inputs, made in the run's directory before the measured run. */
int main(void)
{
    make_records("fp.dat", NREC, REC, 29);
    return 0;
}
#else
int main(void)
{
    reader readers[3] = {with_pread, with_lseek, mirrored};
    int fd = open("fp.dat", O_RDONLY);
    if (fd < 0)
        return 1;
    char buf[REC];
    uint64_t h = CHECKSUM_START;
    int choice = 0;
    for (long r = NREC - 1; r >= 0; r -= 2) {
        reader rd = readers[(r + choice) % 3];
        if (rd(fd, r, buf) != REC)
            return 1;
        choice = (unsigned char)buf[100] % 3;   /* the next reader depends on the data */
        h = checksum(h, buf, REC);
    }
    close(fd);
    printf("%016llx\n", (unsigned long long)h);
    return 0;
}
#endif
