/* trap: I/O calls spelled in macros' own text: a function-like macro around pread, an object-like one around read, one that invokes another, a variadic one around fread, an invocation over two lines with a comment in an argument: the thread needs each expanded where it is invoked */
/* inputs: this file built with -DMAKE_INPUTS, run first */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"

#define REC 4096
#define NREC 600   /* 2.3 MiB */

#ifdef MAKE_INPUTS
int main(void)
{
    make_records("mac.dat", NREC, REC, 61);
    return 0;
}
#else
#define READ_REC(f, b, i) pread((f), (b), REC, (off_t)(i) * REC)
#define READ_NEXT read(fd, rec, REC)
#define READ_AT(i) READ_REC(fd, rec, (i))
#define GET(...) fread(__VA_ARGS__)

int main(void)
{
    int fd = open("mac.dat", O_RDONLY);
    FILE *f = fopen("mac.dat", "rb");
    if (fd < 0 || f == NULL) {
        perror("mac.dat");
        return 1;
    }
    char rec[REC];
    uint64_t h = CHECKSUM_START;
    for (long k = NREC - 1; k >= 0; k -= 7) {     /* backward: 86 */
        if (READ_REC(fd, rec, k) != REC)
            return 1;
        h = checksum(h, rec, REC);
    }
    for (long k = 3; k < NREC; k += 11) {         /* strided, through two macros: 55 */
        if (READ_AT(k) != REC)
            return 1;
        h = checksum(h, rec, REC);
    }
    if (lseek(fd, 100L * REC, SEEK_SET) < 0)
        return 1;
    for (int k = 0; k < 20; k++) {                 /* forward from record 100: 20 */
        if (READ_NEXT != REC)
            return 1;
        h = checksum(h, rec, REC);
    }
    for (long k = NREC - 2; k >= 0; k -= 13) {     /* stdio, backward: 47 */
        if (fseek(f, k * REC, SEEK_SET) != 0 ||
            GET(rec, 1, /* one record */
                REC, f) != REC)
            return 1;
        h = checksum(h, rec, REC);
    }
    printf("records read through macros: %016llx\n", (unsigned long long)h);
    fclose(f);
    close(fd);
    return 0;
}
#endif
