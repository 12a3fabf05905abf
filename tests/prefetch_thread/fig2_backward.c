/* trap: the paper's Figure 2: lseek + read backward over a data file, computation between (plus the same over 4 KiB records) */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"

int main(void)
{
    make_records("mydata.dat", 768, 4096, 3);   /* 3 MiB */
    int fp;
    int i;
    unsigned data[100];   /* the paper's int: unsigned, its products wrap */
    fp = open("mydata.dat", O_RDONLY);
    if (fp < 0) {
        perror("mydata.dat");
        return 1;
    }
    for (i = 99; i >= 0; i--) {
        lseek(fp, i * 4, SEEK_SET);
        read(fp, &data[99 - i], 4);
        data[99 - i] = data[99 - i] * i;
    }
    long total = 0;
    for (i = 0; i < 100; i++)
        total += data[i];
    printf("figure 2: %ld\n", total);

    /* The same shape over whole records, every third one. */
    char rec[4096];
    uint64_t h = CHECKSUM_START;
    for (i = 767; i >= 0; i -= 3) {
        lseek(fp, (off_t)i * 4096, SEEK_SET);
        if (read(fp, rec, sizeof rec) != sizeof rec)
            return 1;
        h = checksum(h, rec, sizeof rec);
    }
    close(fp);
    printf("records backward: %016llx\n", (unsigned long long)h);
    return 0;
}
