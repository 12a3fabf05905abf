/* trap: the descriptor numbers a program gets: opens, dups, pipes and stdio between reads must return what they return without a thread */
/* inputs: this file built with -DMAKE_INPUTS, run first */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"

#define REC 4096

#ifdef MAKE_INPUTS
/* The inputs, made in the run's directory before the measured run. */
int main(void)
{
    make_records("one.dat", 768, REC, 43);
    make_records("two.dat", 768, REC, 47);
    return 0;
}
#else
int main(void)
{
    char buf[REC];
    int a = open("one.dat", O_RDONLY);
    pread(a, buf, REC, 700 * REC);   /* reads between the opens */
    int b = open("two.dat", O_RDONLY);
    pread(b, buf, REC, 600 * REC);
    printf("open: %d %d\n", a, b);
    int c = dup(a);
    int p[2];
    if (pipe(p) != 0)
        return 1;
    printf("dup %d, pipe %d %d\n", c, p[0], p[1]);
    close(a);
    pread(b, buf, REC, 500 * REC);
    int d = open("two.dat", O_RDONLY);
    printf("after close(%d): open gives %d\n", a, d);
    FILE *f = fopen("one.dat", "r");
    printf("fopen: fileno %d\n", fileno(f));
    int e = fcntl(0, F_DUPFD, 0);
    printf("lowest free: %d\n", e);
    for (int r = 767; r > 700; r--) {
        lseek(d, (off_t)r * REC, SEEK_SET);
        if (read(d, buf, REC) != REC)
            return 1;
    }
    int g = open("one.dat", O_RDONLY);
    printf("after reading: open gives %d\n", g);
    fclose(f);
    close(b);
    close(c);
    close(d);
    close(e);
    close(g);
    close(p[0]);
    close(p[1]);
    int last = open("two.dat", O_RDONLY);
    printf("after closing all: %d\n", last);
    close(last);
    return 0;
}
#endif
