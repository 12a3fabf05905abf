/* trap: the data file's name and the record numbers come from stdin (User Input): nothing about them can be known before the program reads them */
/* inputs: this file built with -DMAKE_INPUTS, run first */
/* stdin: choice_b.dat\n3 17 5 99 250 1 700 2 -1\n */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"

#define REC 4096

#ifdef MAKE_INPUTS
/* The inputs, made in the run's directory before the measured run. */
int main(void)
{
    make_records("choice_a.dat", 768, REC, 1);
    make_records("choice_b.dat", 768, REC, 2);
    return 0;
}
#else
int main(void)
{
    char name[256];
    if (fgets(name, sizeof name, stdin) == NULL)
        return 1;
    name[strcspn(name, "\n")] = 0;
    int fd = open(name, O_RDONLY);
    if (fd < 0) {
        perror(name);
        return 1;
    }
    char rec[REC];
    long r;
    uint64_t h = CHECKSUM_START;
    while (scanf("%ld", &r) == 1 && r >= 0) {
        ssize_t n = pread(fd, rec, REC, r * REC);
        printf("record %ld: %zd bytes, %.20s\n", r, n, n > 0 ? rec : "");
        if (n > 0)
            h = checksum(h, rec, (size_t)n);
    }
    close(fd);
    printf("%s: %016llx\n", name, (unsigned long long)h);
    return 0;
}
#endif
