/* trap: the data file's name is read back from a file the program has just written, which the thread may not read (its lead reads of a written file fail): its copy of the name loop runs off its buffer and up its own stack until it faults; the thread must stop there and the program go on */
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
    int in = open("name.txt", O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || write(in, "ovf.dat\n", 8) != 8 || lseek(in, 0, SEEK_SET) != 0)
        return 1;
    char hdr[64], name[16];
    memset(hdr, 0, sizeof hdr);
    /* The program's name is its line, newline left out; the thread's read fails (-1), and
     * its length comes out as (size_t)-2. */
    const long got = (long)read(in, hdr, sizeof hdr - 1);
    const size_t len = (size_t)got - 1;
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
