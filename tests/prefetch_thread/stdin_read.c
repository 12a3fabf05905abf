/* trap: read(2) of descriptor 0 names the record count and the file; the thread receives the bytes the program read, then predicts the strided reads */
/* inputs: this file built with -DMAKE_INPUTS, run first */
/* stdin: 500 header.dat */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"

#define REC 4096

#ifdef MAKE_INPUTS
/* The inputs, made in the run's directory before the measured run. */
int main(void)
{
    make_records("header.dat", 1024, REC, 11);
    return 0;
}
#else
int main(void)
{
    char hdr[128];
    ssize_t got = read(0, hdr, sizeof hdr - 1);
    if (got <= 0)
        return 1;
    hdr[got] = 0;
    long n = atol(hdr);
    char *name = strchr(hdr, ' ');
    if (name == NULL || n <= 0 || n > 1024)
        return 1;
    name[strcspn(name, "\n")] = 0;
    int fd = open(name + 1, O_RDONLY);
    if (fd < 0)
        return 1;
    char *rec = malloc(REC);
    uint64_t h = CHECKSUM_START;
    for (long k = n - 1; k >= 0; k -= 2) {
        if (pread(fd, rec, REC, (off_t)k * REC) != REC)
            return 1;
        h = checksum(h, rec, REC);
    }
    printf("%s: %016llx\n", name + 1, (unsigned long long)h);
    free(rec);
    close(fd);
    return 0;
}
#endif
