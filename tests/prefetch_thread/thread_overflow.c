/* trap: the data file's name is read back by fgets from a file the program has just written, which the thread may not read (its stdio reads a window ahead, so its fgets of a written file fails): its copy of the name loop runs off its buffer and up its own stack until it faults; the thread must stop there and the program go on */
/* inputs: this file built with -DMAKE_INPUTS, run first */
/* sanitizers: off (ASan reports the thread's overrun, which is the point here) */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"

#define REC 4096

#ifdef MAKE_INPUTS
int main(void)
{
    make_records("ovf.dat", 300, REC, 37);
    return 0;
}
#else
int main(void)
{
    FILE *in = fopen("name.txt", "w+");
    if (in == NULL || fputs("ovf.dat\n", in) == EOF)
        return 1;
    rewind(in);
    char hdr[64], name[16];
    memset(hdr, 0, sizeof hdr);
    /* The program's name is its line, newline left out; the thread's fgets fails (NULL),
     * its line stays empty and its length comes out as (size_t)-1. */
    if (fgets(hdr, sizeof hdr, in) == NULL)
        hdr[0] = 0;
    const size_t len = strlen(hdr) - 1;
    size_t i;
    for (i = 0; i < len; i++)
        name[i] = hdr[i & 63];
    name[i] = 0;
    int fd = open(name, O_RDONLY);
    if (fd < 0) {
        perror(name);
        return 1;
    }
    char rec[REC];
    uint64_t h = CHECKSUM_START;
    for (long r = 299; r >= 0; r -= 2) {
        if (pread(fd, rec, REC, (off_t)r * REC) != REC)
            return 1;
        h = checksum(h, rec, REC);
    }
    printf("%s: %016llx\n", name, (unsigned long long)h);
    return 0;
}
#endif
