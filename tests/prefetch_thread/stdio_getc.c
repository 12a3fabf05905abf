/* trap: stdio: getc to the end, ungetc, fseek backward by blocks with fread, fgets and fscanf after seeks */
/* inputs: this file built with -DMAKE_INPUTS, run first */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"

#ifdef MAKE_INPUTS
/* The inputs, made in the run's directory before the measured run. */
int main(void)
{
    FILE *f = fopen("text.dat", "w");
    for (long i = 0; i < 60000; i++)
        fprintf(f, "line %ld value %ld\n", i, (i * 7919) % 100003);
    return fclose(f) != 0;
}
#else
int main(void)
{
    FILE *f = fopen("text.dat", "r");
    if (f == NULL)
        return 1;
    long bytes = 0, lines = 0;
    unsigned long sum = 0;
    int c;
    while ((c = getc(f)) != EOF) {
        bytes++;
        sum += (unsigned)c;
        if (c == '\n') {
            lines++;
            int d = getc(f);
            if (d != EOF)
                ungetc(d, f);
        }
    }
    printf("getc: %ld bytes, %ld lines, sum %lu\n", bytes, lines, sum);
    char block[8192];
    uint64_t h = CHECKSUM_START;
    for (long off = bytes - (long)sizeof block; off >= 0; off -= 3 * (long)sizeof block) {
        fseek(f, off, SEEK_SET);
        size_t n = fread(block, 1, sizeof block, f);
        h = checksum(h, block, n);
    }
    printf("fread backward: %016llx\n", (unsigned long long)h);
    char line[128];
    long i, v;
    for (long off = bytes / 2; off > 0; off -= bytes / 7) {
        fseek(f, off, SEEK_SET);
        if (fgets(line, sizeof line, f) == NULL || fscanf(f, "line %ld value %ld", &i, &v) != 2)
            return 1;
        printf("at %ld: line %ld value %ld\n", off, i, v);
    }
    fclose(f);
    return 0;
}
#endif
