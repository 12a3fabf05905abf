/* indirect look-ahead: the loop's bound base + len is 32-bit unsigned and wraps around to
   n; the hint's look-ahead load idx[i + d] is clamped to the 64-bit sum, so it reads past
   idx[n - 1] (into a guard page). */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <sys/mman.h>

static double gather(const double *x, const int *idx, uint32_t base, uint32_t len) {
    double s = 0;
    for (uint32_t i = 0; i < base + len; i++) s += x[idx[i]];
    return s;
}

int main(void) {
    long nx = 16L << 20;                                 /* 128 MiB of targets */
    double *x = calloc(nx, sizeof *x);
    uint32_t n = 1024;
    char *m = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mprotect(m + 4096, 4096, PROT_NONE);
    int *idx = (int *)(m + 4096) - n;                    /* idx[n - 1] ends at the guard page */
    for (uint32_t i = 0; i < n; i++) idx[i] = (int)((i * 4099L) % nx);
    printf("%.1f\n", gather(x, idx, 0xFFFFFF00u, n + 0x100u));   /* base + len == n in 32 bits */
    return 0;
}
