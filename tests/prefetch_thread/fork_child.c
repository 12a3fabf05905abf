/* trap: fork: the child reads through the inherited descriptor (moving the offset the parent shares) and writes a file; the parent reads on from where the child left the offset */
#define _POSIX_C_SOURCE 200809L
#include <sys/wait.h>
#include "corpus.h"

#define REC 4096
#define NREC 768

int main(void)
{
    make_records("data.dat", NREC, REC, 31);
    int fd = open("data.dat", O_RDONLY);
    if (fd < 0)
        return 1;
    char buf[REC];
    uint64_t h = CHECKSUM_START;
    for (int r = NREC - 1; r >= NREC - 50; r--) {
        lseek(fd, (off_t)r * REC, SEEK_SET);
        if (read(fd, buf, REC) != REC)
            return 1;
        h = checksum(h, buf, REC);
    }
    printf("parent before fork: %016llx\n", (unsigned long long)h);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0) {
        uint64_t c = CHECKSUM_START;
        for (int r = 300; r >= 200; r--) {
            lseek(fd, (off_t)r * REC, SEEK_SET);
            if (read(fd, buf, REC) != REC)
                _exit(1);
            c = checksum(c, buf, REC);
        }
        lseek(fd, 10 * REC, SEEK_SET);   /* the parent's offset too */
        FILE *out = fopen("child.out", "w");
        fprintf(out, "child: %016llx\n", (unsigned long long)c);
        fclose(out);
        printf("child done\n");
        fflush(stdout);
        _exit(7);
    }
    int status;
    waitpid(pid, &status, 0);
    printf("child exit %d\n", WEXITSTATUS(status));
    h = CHECKSUM_START;
    for (int k = 0; k < 20; k++) {   /* on from the offset the child left */
        if (read(fd, buf, REC) != REC)
            return 1;
        h = checksum(h, buf, REC);
    }
    printf("parent after: offset %lld, %016llx\n", (long long)lseek(fd, 0, SEEK_CUR),
           (unsigned long long)h);
    close(fd);
    return 0;
}
