/* trap: getopt_long options that set flags through the pointers of main's own table (main's locals as flags, the option's index through &which): the thread's copy of the table points to its own locals, which its call sets as the program's call sets the program's */
/* inputs: this file built with -DMAKE_INPUTS, run first */
/* args: --every=5 lflags.dat --backward */
#define _GNU_SOURCE
#include "corpus.h"
#include <getopt.h>

#define REC 4096
#define NREC 600

#ifdef MAKE_INPUTS
int main(void)
{
    make_records("lflags.dat", NREC, REC, 23);
    return 0;
}
#else
int main(int argc, char **argv)
{
    int backward = 0, verbose = 0, which = -1, c;
    long every = 1;
    const struct option longs[] = {
        {"backward", no_argument, &backward, 1},
        {.name = "verbose", .has_arg = no_argument, .flag = &verbose, .val = 2},
        {"every", required_argument, NULL, 'e'},
        {NULL, 0, NULL, 0},
    };
    while ((c = getopt_long(argc, argv, "e:", longs, &which)) != -1) {
        if (c == 'e')
            every = atol(optarg);
        else if (c != 0)
            return 2;
    }
    if (optind >= argc || every <= 0)
        return 2;
    int fd = open(argv[optind], O_RDONLY);
    if (fd < 0) {
        perror(argv[optind]);
        return 1;
    }
    char rec[REC];
    uint64_t h = CHECKSUM_START;
    long count = 0;
    for (long k = 0; k < NREC; k += every) {
        const long r = backward ? NREC - 1 - k : k;
        if (pread(fd, rec, REC, (off_t)r * REC) != REC)
            return 1;
        h = checksum(h, rec, REC);
        count++;
    }
    printf("%ld records, %s, last option %d, verbose %d: %016llx\n", count,
           backward ? "backward" : "forward", which, verbose, (unsigned long long)h);
    close(fd);
    return 0;
}
#endif
