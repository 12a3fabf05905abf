/* trap: descriptor reuse: close then open hands the same number to another file; a prediction made for the old file must not land on the new one */
/* inputs: this file built with -DMAKE_INPUTS, run first */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"

#define REC 4096

static uint64_t backward(int fd, int from, int count, uint64_t h)
{
    char rec[REC];
    for (int r = from; r > from - count; r--) {
        lseek(fd, (off_t)r * REC, SEEK_SET);
        if (read(fd, rec, REC) != REC)
            exit(1);
        h = checksum(h, rec, REC);
    }
    return h;
}

#ifdef MAKE_INPUTS
/* The inputs, made in the run's directory before the measured run. */
int main(void)
{
    make_records("a.dat", 768, REC, 21);
    make_records("b.dat", 768, REC, 22);
    return symlink("a.dat", "alias.dat") != 0;
}
#else
int main(void)
{
    const char *names[] = {"a.dat", "b.dat", "alias.dat"};
    uint64_t h = CHECKSUM_START;
    int first = -1;
    for (int k = 0; k < 12; k++) {
        int fd = open(names[k % 3], O_RDONLY);
        if (fd < 0)
            return 1;
        if (first < 0)
            first = fd;
        h = backward(fd, 767 - k * 20, 40, h);
        printf("%s: descriptor %s, %016llx\n", names[k % 3], fd == first ? "reused" : "new",
               (unsigned long long)h);
        close(fd);
    }
    /* dup2 over a descriptor in use: the number now names the other file */
    int a = open("a.dat", O_RDONLY), b = open("b.dat", O_RDONLY);
    h = backward(a, 300, 10, CHECKSUM_START);
    dup2(b, a);
    h = backward(a, 300, 10, h);
    printf("dup2: %016llx\n", (unsigned long long)h);
    close(a);
    close(b);
    return 0;
}
#endif
