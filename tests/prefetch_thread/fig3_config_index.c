/* trap: the paper's Figure 3: indices read from a configuration file with fseek + fscanf steer lseek + read of the data file */
/* inputs: this file built with -DMAKE_INPUTS, run first */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"

#ifdef MAKE_INPUTS
/* The inputs, made in the run's directory before the measured run. */
int main(void)
{
    make_records("mydata.dat", 1024, 4096, 5);   /* 4 MiB */
    FILE *c = fopen("config.dat", "w");
    if (c == NULL)
        return 1;
    fprintf(c, "# indices\n");   /* 10 bytes */
    for (int k = 0; k < 200; k++)
        fprintf(c, "%d\n", (k * 7919 + 13) % 1048000);
    return fclose(c) != 0;
}
#else
int main(void)
{
    int fp, index;
    unsigned data;   /* the paper's int: unsigned, its sums wrap */
    FILE *config_fp;
    fp = open("mydata.dat", O_RDONLY);
    config_fp = fopen("config.dat", "r");
    if (fp < 0 || config_fp == NULL) {
        perror("open");
        return 1;
    }
    fseek(config_fp, 10, SEEK_SET);
    long total = 0;
    int count = 0;
    while (fscanf(config_fp, "%d", &index) == 1) {
        lseek(fp, index * 4, SEEK_SET);
        read(fp, &data, 4);
        data = data + 10;
        total += data;
        count++;
    }
    fclose(config_fp);
    close(fp);
    printf("%d indices, total %ld\n", count, total);
    return 0;
}
#endif
