/* trap: the file, its record count, stride and direction come from standard input (fgets, scanf, getchar) and a check of time(): each a sync point where the thread takes the program's value, then it runs ahead of the reads */
/* inputs: this file built with -DMAKE_INPUTS, run first */
/* stdin: params.dat\n640 3\n  B\n */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"
#include <time.h>

#define REC 4096

#ifdef MAKE_INPUTS
/* The inputs, made in the run's directory before the measured run. */
int main(void)
{
    make_records("params.dat", 768, REC, 5);
    return 0;
}
#else
int main(void)
{
    char name[256];
    long n, step;
    if (time(NULL) == (time_t)-1)
        return 2;
    if (fgets(name, sizeof name, stdin) == NULL)
        return 1;
    name[strcspn(name, "\n")] = 0;
    if (scanf("%ld %ld", &n, &step) != 2 || step <= 0 || n <= 0)
        return 1;
    int c;
    while ((c = getchar()) == ' ' || c == '\n')
        ;
    const int backward = c == 'B';
    int fd = open(name, O_RDONLY);
    if (fd < 0) {
        perror(name);
        return 1;
    }
    char rec[REC];
    uint64_t h = CHECKSUM_START;
    long count = 0;
    for (long k = 0; k < n; k += step) {
        const long r = backward ? n - 1 - k : k;
        if (pread(fd, rec, REC, (off_t)r * REC) != REC)
            return 1;
        h = checksum(h, rec, REC);
        count++;
    }
    close(fd);
    printf("%s: %ld records %s, %016llx\n", name, count, backward ? "backward" : "forward",
           (unsigned long long)h);
    return 0;
}
#endif
