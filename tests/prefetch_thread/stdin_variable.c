/* trap: the request list is read through a stream variable that holds stdin when no file is named (FILE *in = argc > 1 ? fopen(...) : stdin): getc, fgets and fscanf on it are sync points at run time, where the thread takes the program's bytes */
/* inputs: this file built with -DMAKE_INPUTS, run first */
/* stdin: # first count\n3\n40 3\n7 5\n600 2\n120 4\n33 1\n */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"

#define REC 4096

#ifdef MAKE_INPUTS
int main(void)
{
    make_records("vars.dat", 640, REC, 31);
    return 0;
}
#else
static uint64_t h = CHECKSUM_START;
static long reads;

static void run(int fd, long first, long count, char *rec)
{
    for (long k = count - 1; k >= 0; k--) {
        if (pread(fd, rec, REC, (off_t)(first + k) * REC) != REC)
            break;
        h = checksum(h, rec, REC);
        reads++;
    }
}

int main(int argc, char **argv)
{
    FILE *in = argc > 1 ? fopen(argv[1], "r") : stdin;
    int fd = open("vars.dat", O_RDONLY);
    if (in == NULL || fd < 0) {
        perror("open");
        return 1;
    }
    int c;
    while ((c = getc(in)) != '\n' && c != EOF) /* the comment line */
        ;
    char line[64], rec[REC];
    long n = 0, first, count;
    if (fgets(line, sizeof line, in) == NULL || sscanf(line, "%ld", &n) != 1)
        return 1;
    for (long i = 0; i < n && fgets(line, sizeof line, in) != NULL; i++)
        if (sscanf(line, "%ld %ld", &first, &count) == 2)
            run(fd, first, count, rec);
    while (fscanf(in, "%ld %ld", &first, &count) == 2)
        run(fd, first, count, rec);
    close(fd);
    printf("%ld requests, %ld reads, %016llx\n", n, reads, (unsigned long long)h);
    return 0;
}
#endif
