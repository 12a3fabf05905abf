/* trap: built with _FORTIFY_SOURCE, the thread's copy of a name whose length it computed from a read it may not make overruns its buffer: no fortify check may abort() on the thread (glibc's abort lock would stay held, and the program's own abort() at the end would hang) */
/* inputs: this file built with -DMAKE_INPUTS, run first */
/* cflags: -D_FORTIFY_SOURCE=2 */
/* exit: 3 */
/* sanitizers: off (ASan reports the thread's overrun) */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"
#include <signal.h>

#define REC 4096

#ifdef MAKE_INPUTS
int main(void)
{
    make_records("fort.dat", 200, REC, 43);
    return 0;
}
#else
static void aborted(int sig)
{
    (void)sig;
    exit(3); /* (its destructors run: the statistics are written) */
}

int main(void)
{
    int in = open("fort.name", O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || write(in, "fort.dat\n", 9) != 9 || lseek(in, 0, SEEK_SET) != 0)
        return 1;
    char hdr[64] = "", name[16];
    const long got = (long)read(in, hdr, sizeof hdr - 1);
    const size_t n = (size_t)got - 1; /* the line without its newline; the thread: huge */
    memcpy(name, hdr, n);
    name[n] = 0;
    int fd = open(name, O_RDONLY);
    if (fd < 0)
        return 1;
    char rec[REC];
    uint64_t h = CHECKSUM_START;
    for (long r = 199; r >= 0; r -= 3) {
        if (pread(fd, rec, REC, (off_t)r * REC) != REC)
            return 1;
        h = checksum(h, rec, REC);
    }
    printf("%s: %016llx\n", name, (unsigned long long)h);
    fflush(stdout);
    signal(SIGABRT, aborted);
    abort(); /* the program's own: its handler ends it with 3 */
}
#endif
