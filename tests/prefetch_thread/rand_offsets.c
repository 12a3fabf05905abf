/* trap: offsets from rand(): its results must reach the thread without a second call, which would change the program's own sequence */
/* inputs: this file built with -DMAKE_INPUTS, run first */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"

#define REC 4096
#define NREC 768

#ifdef MAKE_INPUTS
/* The inputs, made in the run's directory before the measured run. */
int main(void)
{
    make_records("rand.dat", NREC, REC, 73);
    return 0;
}
#else
int main(void)
{
    srand(12345);
    int fd = open("rand.dat", O_RDONLY);
    if (fd < 0)
        return 1;
    char *buf = malloc(REC);
    uint64_t h = CHECKSUM_START;
    for (int k = 0; k < 400; k++) {
        long r = rand() % NREC;
        if (pread(fd, buf, REC, (off_t)r * REC) != REC)
            return 1;
        h = checksum(h, buf, REC);
    }
    printf("%016llx, then rand gives %d %d %d\n", (unsigned long long)h, rand(), rand(),
           rand());
    free(buf);
    close(fd);
    return 0;
}
#endif
