/* trap: a signal handler that only sets a flag, which turns the read loop around: what it reads next cannot be known ahead */
/* inputs: this file built with -DMAKE_INPUTS, run first */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include "corpus.h"

#define REC 4096
#define NREC 768

static volatile sig_atomic_t turned;

static void turn(int sig)
{
    (void)sig;
    turned = 1;
}

#ifdef MAKE_INPUTS
/* The inputs, made in the run's directory before the measured run. */
int main(void)
{
    make_records("sig.dat", NREC, REC, 37);
    return 0;
}
#else
int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = turn;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    int fd = open("sig.dat", O_RDONLY);
    if (fd < 0)
        return 1;
    char buf[REC];
    uint64_t h = CHECKSUM_START;
    long r = NREC - 1, step = -1;
    for (int k = 0; k < 500; k++) {
        if (k == 200)
            raise(SIGUSR1);
        if (turned) {
            turned = 0;
            step = 3;
            r = 5;
        }
        if (pread(fd, buf, REC, (off_t)r * REC) != REC)
            return 1;
        h = checksum(h, buf, REC);
        r = (r + step + NREC) % NREC;
    }
    close(fd);
    printf("%016llx\n", (unsigned long long)h);
    return 0;
}
#endif
