/* Indirect gather over a mapped file: sum += data[idx[i]] (idx from a fixed-seed PRNG).
 * usage: gather create|run FILE BYTES */
#include "common.h"

int main(int argc, char **argv)
{
    if (argc != 4) { fprintf(stderr, "usage: gather create|run FILE BYTES\n"); return 2; }
    size_t bytes = arg_size(argv[3]), n = bytes / sizeof(double);
    double *data = map_file(argv[2], bytes, strcmp(argv[1], "create") == 0);
    if (strcmp(argv[1], "create") == 0) return 0;
    long count = (long)(bytes / 4096 / 4);
    long *idx = malloc((size_t)count * sizeof *idx);
    unsigned long x = 12345;
    for (long i = 0; i < count; i++) {
        x = x * 6364136223846793005UL + 1442695040888963407UL;
        idx[i] = (long)((x >> 17) % n);
    }
    double t0 = now(), s = 0;
    for (long i = 0; i < count; i++)
        s += data[idx[i]];
    double t1 = now();
    printf("checksum %.6f\naccess_seconds %.3f\n", s, t1 - t0);
    free(idx);
    return 0;
}
