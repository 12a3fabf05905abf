/* trap: I/O in a signal handler: the handler reads a record; a slicer must refuse (no thread) or keep the program's behaviour exactly */
/* inputs: this file built with -DMAKE_INPUTS, run first */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include "corpus.h"

#define REC 4096
#define NREC 768

static int fd = -1;
static char handler_buf[64];
static volatile sig_atomic_t handled;

static void on_alarm(int sig)
{
    (void)sig;
    if (pread(fd, handler_buf, sizeof handler_buf, 7 * REC) == sizeof handler_buf)
        handled++;
}

#ifdef MAKE_INPUTS
/* The inputs, made in the run's directory before the measured run. */
int main(void)
{
    make_records("hio.dat", NREC, REC, 41);
    return 0;
}
#else
int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR2, &sa, NULL);
    fd = open("hio.dat", O_RDONLY);
    if (fd < 0)
        return 1;
    char buf[REC];
    uint64_t h = CHECKSUM_START;
    for (int r = NREC - 1; r >= 0; r -= 3) {
        if (r % 100 == 0)
            raise(SIGUSR2);
        lseek(fd, (off_t)r * REC, SEEK_SET);
        if (read(fd, buf, REC) != REC)
            return 1;
        h = checksum(h, buf, REC);
    }
    close(fd);
    printf("%d handled, %.12s, %016llx\n", (int)handled, handler_buf, (unsigned long long)h);
    return 0;
}
#endif
