/* trap: readv of a descriptor that holds 0 when no file is named: the thread does not read standard input (its copy of the call fails), the program's bytes and its record reads are unchanged */
/* inputs: this file built with -DMAKE_INPUTS, run first */
/* stdin: 5 9 2 40 17 3\n */
#define _GNU_SOURCE
#include <sys/uio.h>
#include "corpus.h"

#define REC 4096

#ifdef MAKE_INPUTS
int main(void)
{
    make_records("vin.dat", 64, REC, 29);
    return 0;
}
#else
int main(int argc, char **argv)
{
    int in = argc > 1 ? open(argv[1], O_RDONLY) : 0;
    int fd = open("vin.dat", O_RDONLY);
    if (in < 0 || fd < 0) {
        perror("open");
        return 1;
    }
    char a[8], b[248];
    struct iovec list[2] = {{a, sizeof a - 1}, {b, sizeof b - 1}};
    ssize_t got = readv(in, list, 2);
    if (got <= 0)
        return 1;
    a[sizeof a - 1] = b[sizeof b - 1] = 0;
    char text[256];
    snprintf(text, sizeof text, "%.*s%.*s", (int)(got < 7 ? got : 7), a,
             (int)(got > 7 ? got - 7 : 0), b);
    char rec[REC], *p = text, *end;
    uint64_t h = CHECKSUM_START;
    long reads = 0;
    for (;;) {
        const long r = strtol(p, &end, 10);
        if (end == p)
            break;
        p = end;
        struct iovec one = {rec, sizeof rec};
        if (preadv(fd, &one, 1, (off_t)(r % 64) * REC) != REC)
            return 1;
        h = checksum(h, rec, sizeof rec);
        reads++;
    }
    printf("%ld records, %016llx\n", reads, (unsigned long long)h);
    close(fd);
    return 0;
}
#endif
