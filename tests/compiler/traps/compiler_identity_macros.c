/* The analysis preprocesses with clang's predefined macros (__clang__, __GNUC__ == 4),
   gcc 12 compiles with its own: the hint code carries clang's trip count (200000), and its
   look-ahead loads idx[i + d] run past the 3000 entries gcc's program has. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#if __GNUC__ >= 5
#define NIDX 3000
#else
#define NIDX 200000
#endif

int main(void) {
    long nx = 16L << 20;                                  /* 128 MiB of targets */
    double *x = calloc(nx, sizeof *x);
    char *m = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mprotect(m + 3 * 4096, 4096, PROT_NONE);
    int *idx = (int *)(m + 3 * 4096) - NIDX;              /* idx[NIDX - 1] ends at a guard page */
    for (int i = 0; i < NIDX; i++) idx[i] = (int)((i * 7919L) % nx);
    double s = 0;
    for (int i = 0; i < NIDX; i++) s += x[idx[i]];
    printf("%.0f\n", s);
    return 0;
}
