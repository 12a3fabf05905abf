/* trap: pipelining loops chosen at nest entry (inner trip counts known only at run time:
 * short, long, empty, counting down, from a local, two moves in a row) */
#include <stdio.h>
#include <stdlib.h>

static double sum_rows(long rows, long cols, long w, double (*a)[cols]) {
  double s = 0;
  for (long i = 0; i < rows; i++)
    for (long j = 0; j < w; j++) s += a[i][j];
  return s;
}

int main(int argc, char **argv) {
  (void)argv;
  long rows = 300 + argc, cols = 4096 + argc; /* 32 KiB rows, not a page multiple */
  double (*a)[cols] = malloc(sizeof(double[rows][cols]));
  for (long i = 0; i < rows; i++)
    for (long j = 0; j < cols; j++) a[i][j] = (double)((i * 31 + j) % 1000) * 0.25;
  double s = 0;
  long widths[] = {0, 1, 3 + argc, 100, cols / 2, cols};
  for (int t = 0; t < 6; t++) s += sum_rows(rows, cols, widths[t], a) * (t + 1);
  printf("%.4f\n", s);
  /* counting down a short stretch of every row, the width from a local of the nest */
  long short_w = 5 * argc;
  double d = 0;
  for (long i = rows - 1; i >= 0; i--) {
    const long w2 = short_w + 2;
    for (long j = w2; j > 0; j--) d += a[i][j - 1];
  }
  printf("%.4f\n", d);
  /* two moves: k and j both touch less than a block (planes of 2 x 3 doubles in 32 KiB) */
  long nz = 200, ny = 2 * argc, nx = 3 * argc;
  double *b = malloc(sizeof(double) * (size_t)(nz * 4096));
  for (long i = 0; i < nz * 4096; i++) b[i] = (double)(i % 77);
  double e = 0;
  for (long k = 0; k < nz; k++)
    for (long j = 0; j < ny; j++)
      for (long i = 0; i < nx; i++) e += b[k * 4096 + j * 64 + i];
  printf("%.4f\n", e);
  free(b);
  free(a);
  return 0;
}
