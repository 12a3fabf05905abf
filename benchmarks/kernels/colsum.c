/* Column sums of a row-major matrix (64 KiB rows) in a mapped file, every 1024th column:
 * for (j) for (i) s[j] += M[i][j] -- each column pass touches one page per row.
 * usage: colsum create|run FILE BYTES */
#include "common.h"

int main(int argc, char **argv)
{
    if (argc != 4) { fprintf(stderr, "usage: colsum create|run FILE BYTES\n"); return 2; }
    size_t bytes = arg_size(argv[3]);
    long cols = 8192, rows = (long)(bytes / sizeof(double) / (size_t)cols);
    double (*M)[cols] = map_file(argv[2], bytes, strcmp(argv[1], "create") == 0);
    if (strcmp(argv[1], "create") == 0) return 0;
    double *s = calloc((size_t)cols, sizeof *s);
    double t0 = now();
    for (long j = 0; j < cols; j += 1024)
        for (long i = 0; i < rows; i++)
            s[j] += M[i][j];
    double t1 = now(), total = 0;
    for (long j = 0; j < cols; j++)
        total += s[j];
    printf("checksum %.6f\naccess_seconds %.3f\n", total, t1 - t0);
    free(s);
    return 0;
}
