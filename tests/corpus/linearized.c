/* trap: linearized A[i*n + j] with n parsed from argv-like strings, row and column traversals */
#include <stdio.h>
#include <stdlib.h>

static long parse(const char *s) { return strtol(s, NULL, 10); }

int main(int argc, char **argv) {
  const char *args[] = {"prog", "523", "389"};
  const char **av = argc > 2 ? (const char **)argv : args;
  long n = parse(av[1]), m = parse(av[2]);
  double *A = malloc((size_t)(n * m) * sizeof *A);
  double *x = malloc((size_t)m * sizeof *x);
  double *y = calloc((size_t)n, sizeof *y);
  for (long i = 0; i < n; i++)
    for (long j = 0; j < m; j++) A[i * m + j] = (double)((i * 3 + j * 5) % 17);
  for (long j = 0; j < m; j++) x[j] = 1.0 / (double)(j + 1);
  /* row traversal: y = A x */
  for (long i = 0; i < n; i++)
    for (long j = 0; j < m; j++) y[i] += A[i * m + j] * x[j];
  /* column traversal: transposed product */
  double *z = calloc((size_t)m, sizeof *z);
  for (long j = 0; j < m; j++)
    for (long i = 0; i < n; i++) z[j] += A[i * m + j] * y[i];
  /* mixed: A[j*m + i] with i < m, j < n, and an offset base */
  double w = 0;
  for (long i = 0; i < m; i++)
    for (long j = 1; j < n; j++) w += A[(j - 1) * m + i] - A[j * m + i];
  /* int index expression with a constant added */
  int ni = (int)n, mi = (int)m;
  long q = 0;
  for (int i = 0; i < ni - 1; i++)
    for (int j = 0; j < mi; j++) q += (long)A[i * mi + j + mi];
  double sy = 0, sz = 0;
  for (long i = 0; i < n; i++) sy += y[i];
  for (long j = 0; j < m; j++) sz += z[j];
  printf("%.6f %.6f %.6f %ld\n", sy, sz, w, q);
  free(A); free(x); free(y); free(z);
  return 0;
}
