/* trap: the request list is read from a descriptor variable that holds 0 when no file is named (int in = argc > 1 ? open(...) : 0): read() on it is a sync point at run time, where the thread takes the program's bytes */
/* inputs: this file built with -DMAKE_INPUTS, run first */
/* stdin: 12 4\n500 3\n77 6\n310 2\n */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"

#define REC 4096

#ifdef MAKE_INPUTS
int main(void)
{
    make_records("fdin.dat", 560, REC, 41);
    return 0;
}
#else
int main(int argc, char **argv)
{
    int in = argc > 1 ? open(argv[1], O_RDONLY) : 0;
    int fd = open("fdin.dat", O_RDONLY);
    if (in < 0 || fd < 0) {
        perror("open");
        return 1;
    }
    char list[512];
    size_t len = 0;
    long got;
    while (len < sizeof list - 1 && (got = read(in, list + len, sizeof list - 1 - len)) > 0)
        len += (size_t)got;
    list[len] = 0;
    char rec[REC], *p = list, *end;
    uint64_t h = CHECKSUM_START;
    long reads = 0;
    for (;;) {
        const long first = strtol(p, &end, 10);
        if (end == p)
            break;
        p = end;
        const long count = strtol(p, &end, 10);
        if (end == p)
            break;
        p = end;
        for (long k = count - 1; k >= 0; k--) {
            if (pread(fd, rec, REC, (off_t)(first + k) * REC) != REC)
                return 1;
            h = checksum(h, rec, REC);
            reads++;
        }
    }
    printf("%ld reads, %016llx\n", reads, (unsigned long long)h);
    return 0;
}
#endif
