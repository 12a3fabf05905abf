/* trap: I/O calls inside error-checking macros (CHECK(pread(...)), a DIE macro on a failed open, a file-scope descriptor named in the macro's argument): the thread makes the call alone, as if the check passed */
/* inputs: this file built with -DMAKE_INPUTS, run first */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"

#define REC 4096

#ifdef MAKE_INPUTS
int main(void)
{
    make_records("blocks.dat", 512, REC, 23);
    return 0;
}
#else
#define DIE(msg)                                                                          \
    do {                                                                                  \
        perror(msg);                                                                      \
        exit(1);                                                                          \
    } while (0)
#define CHECK(call)                                                                       \
    do {                                                                                  \
        if ((call) != REC) {                                                              \
            fprintf(stderr, "short read at line %d\n", __LINE__);                        \
            exit(2);                                                                      \
        }                                                                                 \
    } while (0)
#define MUST(x) CHECK(x)

static int data_fd = -1;

static uint64_t sweep(long from, long step, char *rec)
{
    uint64_t h = CHECKSUM_START;
    for (long r = from; r >= 0; r -= step) {
        MUST(pread(data_fd, rec, REC, (off_t)r * REC));
        h = checksum(h, rec, REC);
    }
    return h;
}

int main(void)
{
    data_fd = open("blocks.dat", O_RDONLY);
    if (data_fd < 0)
        DIE("blocks.dat");
    char rec[REC];
    uint64_t a = sweep(511, 3, rec);
    uint64_t b = 0;
    for (long r = 0; r < 512; r += 7) {
        CHECK(pread(data_fd, rec, REC, (off_t)r * REC));
        b = checksum(b, rec, 64);
    }
    close(data_fd);
    printf("%016llx %016llx\n", (unsigned long long)a, (unsigned long long)b);
    return 0;
}
#endif
