/* getc_sum: the bytes, lines and a hash of a text file read with getc (the in-core cost
 * check of `foresight bench aasfp`: with the file in the page cache there is nothing to
 * prefetch, and a prefetch thread must cost the program at most 2%).
 *
 * An ordinary C program, as a user writes it: stdio, one getc a byte.  No foresight
 * calls, no pragmas.
 *
 * usage: getc_sum FILE
 */
#include <stdint.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: getc_sum FILE\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (f == NULL) {
        perror(argv[1]);
        return 1;
    }
    unsigned long long sum = 0, lines = 0, bytes = 0;
    uint32_t hash = 2166136261u;
    int c;
    while ((c = getc(f)) != EOF) {
        sum += (unsigned)c;
        hash = (hash ^ (uint32_t)c) * 16777619u;
        lines += c == '\n';
        bytes++;
    }
    if (ferror(f)) {
        perror(argv[1]);
        return 1;
    }
    fclose(f);
    printf("getc_sum: %llu bytes, %llu lines, sum %llu, hash %08x\n", bytes, lines, sum,
           (unsigned)hash);
    return 0;
}
