/* trap: a run list read line by line with fgets and cut with strtok and strtok_r (the thread's own positions in its own copies of the lines; the program's strtok keeps its own) steers pread of the data file */
/* inputs: this file built with -DMAKE_INPUTS, run first */
#define _POSIX_C_SOURCE 200809L
#include "corpus.h"

#define REC 4096

#ifdef MAKE_INPUTS
int main(void)
{
    make_records("runs.dat", 640, REC, 17);
    FILE *c = fopen("runs.txt", "w");
    if (c == NULL)
        return 1;
    fprintf(c, "# first,count;stride per line\n");
    for (int k = 0; k < 40; k++)
        fprintf(c, "run %d, %d ; %d\n", (k * 211 + 7) % 600, 3 + k % 5, 1 + k % 3);
    return fclose(c) != 0;
}
#else
int main(void)
{
    FILE *list = fopen("runs.txt", "r");
    int fd = open("runs.dat", O_RDONLY);
    if (list == NULL || fd < 0) {
        perror("open");
        return 1;
    }
    char line[256], rec[REC];
    uint64_t h = CHECKSUM_START;
    long reads = 0, lines = 0;
    /* The program's own strtok, half-way through a string across the loop: the thread's
     * strtok must not move it. */
    char words[] = "alpha beta gamma delta";
    char *word = strtok(words, " ");
    while (fgets(line, sizeof line, list) != NULL) {
        if (line[0] == '#')
            continue;
        char *save = NULL;
        char *head = strtok_r(line, ";", &save);
        char *tail = strtok_r(NULL, ";", &save);
        if (head == NULL || tail == NULL)
            return 1;
        const long stride = atol(tail);
        char *tok = strtok(head, " ,");
        if (tok == NULL || strcmp(tok, "run") != 0)
            return 1;
        const long first = atol(strtok(NULL, " ,"));
        const long count = atol(strtok(NULL, " ,"));
        for (long k = 0; k < count; k++) {
            if (pread(fd, rec, REC, (off_t)(first + k * stride) * REC) != REC)
                return 1;
            h = checksum(h, rec, REC);
            reads++;
        }
        lines++;
        if (word != NULL)
            word = strtok(NULL, " ");
    }
    fclose(list);
    close(fd);
    printf("%ld runs, %ld reads, %016llx; last word %s\n", lines, reads,
           (unsigned long long)h, word != NULL ? word : "(none)");
    return 0;
}
#endif
