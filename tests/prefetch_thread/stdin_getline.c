/* trap: a header read from standard input with fread, then one request per line with getline (sync points: the thread takes the program's bytes and line, in a buffer of its own) steering pread of the data file */
/* inputs: this file built with -DMAKE_INPUTS, run first */
/* stdin: RQ01\n17 4\n300 2\n5 6\n250 3\n640 1\n99 5\n */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"

#define REC 4096

#ifdef MAKE_INPUTS
int main(void)
{
    make_records("reqs.dat", 700, REC, 29);
    return 0;
}
#else
int main(void)
{
    char magic[5] = {0};
    if (fread(magic, 1, 4, stdin) != 4 || strcmp(magic, "RQ01") != 0)
        return 1;
    int fd = open("reqs.dat", O_RDONLY);
    if (fd < 0) {
        perror("reqs.dat");
        return 1;
    }
    char *line = NULL;
    size_t cap = 0;
    char rec[REC];
    uint64_t h = CHECKSUM_START;
    long reads = 0;
    while (getline(&line, &cap, stdin) > 0) {
        long first, count;
        if (sscanf(line, "%ld %ld", &first, &count) != 2)
            continue;
        for (long k = count - 1; k >= 0; k--) {
            if (pread(fd, rec, REC, (off_t)(first + k) * REC) != REC)
                break;
            h = checksum(h, rec, REC);
            reads++;
        }
    }
    free(line);
    close(fd);
    printf("%s: %ld reads, %016llx\n", magic, reads, (unsigned long long)h);
    return 0;
}
#endif
