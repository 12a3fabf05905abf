/* trap: getopt_long options that set flags through their table's pointers (a file-scope table, no index pointer): the thread sets its own copies of the flags the program's call set, and reads backward when --reverse says so */
/* inputs: this file built with -DMAKE_INPUTS, run first */
/* args: --reverse flags.dat --step=3 --quiet */
#define _GNU_SOURCE
#include "corpus.h"
#include <getopt.h>

#define REC 4096
#define NREC 640

#ifdef MAKE_INPUTS
int main(void)
{
    make_records("flags.dat", NREC, REC, 19);
    return 0;
}
#else
static int reverse_flag, quiet_flag;
static const struct option longs[] = {
    {"reverse", no_argument, &reverse_flag, 1},
    {"quiet", no_argument, &quiet_flag, 1},
    {"step", required_argument, NULL, 's'},
    {NULL, 0, NULL, 0},
};

int main(int argc, char **argv)
{
    long step = 1;
    int c;
    while ((c = getopt_long(argc, argv, "s:", longs, NULL)) != -1) {
        if (c == 's')
            step = atol(optarg);
        else if (c != 0)
            return 2;
    }
    if (optind >= argc || step <= 0)
        return 2;
    int fd = open(argv[optind], O_RDONLY);
    if (fd < 0) {
        perror(argv[optind]);
        return 1;
    }
    char rec[REC];
    uint64_t h = CHECKSUM_START;
    long count = 0;
    for (long k = 0; k < NREC; k += step) {
        const long r = reverse_flag ? NREC - 1 - k : k;
        if (pread(fd, rec, REC, (off_t)r * REC) != REC)
            return 1;
        h = checksum(h, rec, REC);
        count++;
    }
    if (!quiet_flag)
        printf("(not quiet)\n");
    printf("%ld records, %s: %016llx\n", count, reverse_flag ? "reversed" : "forward",
           (unsigned long long)h);
    close(fd);
    return 0;
}
#endif
