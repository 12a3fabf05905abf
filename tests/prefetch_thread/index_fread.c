/* trap: records read by fseek + fread in the order of an index computed in memory: the loop also walks the index array, a stream the loop-nest hints would prefetch, so the nest must not be copied into an unhinted version without the program's ticks (the thread then waited for ever after its first window) */
/* inputs: this file built with -DMAKE_INPUTS, run first */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"

#define REC 512
#define NREC 8192   /* 4 MiB */
#define READS 20000

#ifdef MAKE_INPUTS
int main(void)
{
    make_records("ixf.dat", NREC, REC, 67);
    return 0;
}
#else
int main(void)
{
    FILE *f = fopen("ixf.dat", "rb");
    long *idx = malloc(READS * sizeof *idx);
    if (f == NULL || idx == NULL) {
        perror("ixf.dat");
        return 1;
    }
    uint64_t s = 42;
    for (long i = 0; i < READS; i++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        idx[i] = (long)((s >> 33) % NREC);
    }
    char rec[REC];
    uint64_t h = CHECKSUM_START;
    for (long i = 0; i < READS; i++) {
        if (fseek(f, idx[i] * REC, SEEK_SET) != 0 || fread(rec, sizeof rec, 1, f) != 1)
            return 1;
        h = checksum(h, rec, REC);
    }
    printf("%d records by an index in memory: %016llx\n", READS, (unsigned long long)h);
    free(idx);
    fclose(f);
    return 0;
}
#endif
