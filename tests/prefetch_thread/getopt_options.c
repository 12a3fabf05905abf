/* trap: options read with getopt_long and getopt, the file named among them (GNU getopt moves it to the end of argv): sync points whose optarg, optind and argv order the thread takes from the program */
/* inputs: this file built with -DMAKE_INPUTS, run first */
/* args: recs.dat --stride=3 -b --name x -v 2 */
#define _GNU_SOURCE
#include "corpus.h"
#include <getopt.h>

#define REC 4096

#ifdef MAKE_INPUTS
int main(void)
{
    make_records("recs.dat", 768, REC, 11);
    return 0;
}
#else
static const struct option longs[] = {
    {"stride", required_argument, NULL, 's'},
    {"backward", no_argument, NULL, 'b'},
    {"name", required_argument, NULL, 0},
    {NULL, 0, NULL, 0},
};

int main(int argc, char **argv)
{
    long stride = 1;
    int backward = 0, c, which = -1, verbose = 0;
    const char *label = "none";
    while ((c = getopt_long(argc, argv, "s:bv:", longs, &which)) != -1) {
        switch (c) {
        case 's':
            stride = atol(optarg);
            break;
        case 'b':
            backward = 1;
            break;
        case 'v':
            verbose = atoi(optarg);
            break;
        case 0:
            if (which == 2)
                label = optarg;
            break;
        default:
            return 2;
        }
    }
    if (optind >= argc || stride <= 0)
        return 2;
    const char *path = argv[optind];
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        perror(path);
        return 1;
    }
    char rec[REC];
    uint64_t h = CHECKSUM_START;
    long count = 0;
    for (long k = 0; k < 768; k += stride) {
        const long r = backward ? 767 - k : k;
        if (pread(fd, rec, REC, (off_t)r * REC) != REC)
            return 1;
        h = checksum(h, rec, REC);
        count++;
    }
    close(fd);
    /* A second pass with plain getopt from the start, quietly (the long options are
     * unknown to it). */
    optind = 1;
    opterr = 0;
    int more = 0;
    while ((c = getopt(argc, argv, "+s:bv:")) != -1)
        more++;
    printf("%s (%s, verbose %d): %ld records, %016llx; %d options again\n", path, label,
           verbose, count, (unsigned long long)h, more);
    return 0;
}
#endif
