/* rows ahead: the row loop's bound base + len is 32-bit unsigned and wraps around to 64;
   the hint reads row pointers past R[63] (into a guard page). */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <sys/mman.h>

static double rows_sum(double **R, uint32_t base, uint32_t len, int cols) {
    double s = 0;
    for (uint32_t i = 0; i < base + len; i++)
        for (int j = 0; j < cols; j++) s += R[i][j];
    return s;
}

int main(void) {
    uint32_t rows = 64; int cols = 1 << 18;                 /* 2 MiB rows, 128 MiB in all */
    double *store = calloc((size_t)rows * cols, sizeof *store);
    char *m = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mprotect(m + 4096, 4096, PROT_NONE);
    double **R = (double **)(m + 4096) - rows;          /* R[rows - 1] is the last word before the guard page */
    for (uint32_t i = 0; i < rows; i++) R[i] = store + (size_t)i * cols;
    printf("%.1f\n", rows_sum(R, 0xFFFFFFF0u, rows + 0x10u, cols));   /* base + len == 64 in 32 bits */
    return 0;
}
