/* Pointer walks over a mapped file of doubles: a backward sum, p from the end down to
 * the start (s += p[-1]), then a forward walk touching one double per page (p += 512).
 * usage: walk create|run FILE BYTES */
#include "common.h"

int main(int argc, char **argv)
{
    if (argc != 4) { fprintf(stderr, "usage: walk create|run FILE BYTES\n"); return 2; }
    size_t bytes = arg_size(argv[3]);
    double *a = map_file(argv[2], bytes, strcmp(argv[1], "create") == 0);
    if (strcmp(argv[1], "create") == 0) return 0;
    size_t n = bytes / sizeof(double);
    double t0 = now(), s = 0;
    for (const double *p = a + n; p > a; p--)
        s += p[-1];
    for (const double *p = a; p < a + n; p += 512)
        s -= *p * 0.5;
    printf("checksum %.6f\naccess_seconds %.3f\n", s, now() - t0);
    return 0;
}
