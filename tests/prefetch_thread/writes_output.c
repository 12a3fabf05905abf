/* trap: a program that writes: records read backward from one file are written transformed to another, and a log grows with fprintf */
/* inputs: this file built with -DMAKE_INPUTS, run first */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"

#define REC 4096
#define NREC 768

#ifdef MAKE_INPUTS
/* The inputs, made in the run's directory before the measured run. */
int main(void)
{
    make_records("in.dat", NREC, REC, 67);
    return 0;
}
#else
int main(void)
{
    int in = open("in.dat", O_RDONLY);
    int out = open("out.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    FILE *log = fopen("log.txt", "w");
    if (in < 0 || out < 0 || log == NULL)
        return 1;
    char buf[REC];
    for (int r = NREC - 1; r >= 0; r -= 2) {
        lseek(in, (off_t)r * REC, SEEK_SET);
        if (read(in, buf, REC) != REC)
            return 1;
        for (int j = 0; j < REC; j++)
            buf[j] = (char)(buf[j] ^ 0x5a);
        if (write(out, buf, REC) != REC)
            return 1;
        if (r % 64 == 1)
            fprintf(log, "record %d copied\n", r);
    }
    fclose(log);
    close(out);
    close(in);
    printf("done\n");
    return 0;
}
#endif
