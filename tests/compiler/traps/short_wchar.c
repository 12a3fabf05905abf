/* -fshort-wchar (2-byte wchar_t) is not given to the analysis, which bakes clang's 4-byte
   element size into the look-ahead loads of w[i + d]: they run past the end of w.
   Built with: */
/* cflags: -fshort-wchar */
#include <stdio.h>
#include <stdlib.h>
#include <wchar.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>
int main(void) {
    long nx = 16L << 20;                                     /* 128 MiB of targets, a sparse file */
    int fd = open("bug10.dat", O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ftruncate(fd, nx * 8) != 0) return 1;
    const double *x = mmap(NULL, nx * 8, PROT_READ, MAP_SHARED, fd, 0);
    int n = 30000;
    size_t want = n * sizeof(wchar_t), bytes = (want + 4095) / 4096 * 4096;
    char *m = mmap(NULL, bytes + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mprotect(m + bytes, 4096, PROT_NONE);
    wchar_t *w = (wchar_t *)(m + bytes - want);              /* w[n - 1] ends at a guard page */
    for (int i = 0; i < n; i++) w[i] = (wchar_t)((i * 7919) % 65536);
    double s = 0;
    for (int i = 0; i < n; i++) s += x[w[i]];
    printf("%.0f %zu\n", s, sizeof(wchar_t));
    return 0;
}
